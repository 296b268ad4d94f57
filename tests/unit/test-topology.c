/*
 * Unit tests for the one check of a fabric kind and its topology
 * (host-lib/fabric/topology.c), which fabricd and `vcluster up` both call:
 * the kinds, the node range, and each kind's topology rule, with the
 * words a user reads; and that fabricd implements exactly the library's
 * kinds.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "kind.h"
#include "proto/base.h"
#include "vcluster/fabric/topology.h"

/* fabric_topology_check() refuses with `code` and a message holding `msg`. */
static void refused(const char *kind, unsigned nodes, const char *topology,
                    FabricTopologyError code, const char *msg)
{
    g_autoptr(GError) err = NULL;

    g_assert_false(fabric_topology_check(kind, nodes, topology, &err));
    g_assert_error(err, FABRIC_TOPOLOGY_ERROR, (int)code);
    if (!strstr(err->message, msg)) {
        g_error("%s, %u nodes, '%s': '%s' lacks '%s'", kind, nodes,
                topology ? topology : "(none)", err->message, msg);
    }
}

static void accepted(const char *kind, unsigned nodes, const char *topology)
{
    g_autoptr(GError) err = NULL;

    g_assert_true(fabric_topology_check(kind, nodes, topology, &err));
    g_assert_no_error(err);
}

static void test_kinds(void)
{
    accepted("eth", 4, NULL);
    accepted("ps1", 4, NULL);
    accepted("myrinet", 4, NULL);
    accepted("telegraphos", 4, NULL);
    refused("tgr", 4, NULL, FABRIC_TOPOLOGY_ERROR_KIND,
            "fabric kind 'tgr' is not implemented yet (known kinds: eth, "
            "ps1, myrinet, telegraphos)");
    refused("", 4, NULL, FABRIC_TOPOLOGY_ERROR_KIND, "fabric kind ''");
    refused(NULL, 4, NULL, FABRIC_TOPOLOGY_ERROR_KIND, "known kinds");
    refused("ETH", 4, NULL, FABRIC_TOPOLOGY_ERROR_KIND, "'ETH'");
}

static void test_nodes(void)
{
    accepted("eth", 1, NULL);
    accepted("eth", FABRIC_MAX_NODES, NULL);
    refused("eth", 0, NULL, FABRIC_TOPOLOGY_ERROR_NODES,
            "--nodes 0 is out of range; use 1..1024");
    refused("ps1", FABRIC_MAX_NODES + 1, NULL, FABRIC_TOPOLOGY_ERROR_NODES,
            "--nodes 1025 is out of range");
}

static void test_ps1(void)
{
    accepted("ps1", 4, "ring");
    accepted("ps1", 4, "torus:2x2");
    accepted("ps1", 4, "torus:4x1");
    accepted("ps1", 4, "torus:1x4");
    accepted("ps1", 255, "torus:255x1");
    accepted("ps1", 1, "torus:1x1");

    static const struct { unsigned n; const char *t, *msg; } bad[] = {
        /* the 1..255 limit per dimension (a node id byte) */
        { 4, "torus:300x1", "--topology torus:300x1: width and height "
                            "must be 1..255" },
        { 256, "torus:256x1", "width and height must be 1..255" },
        { 256, "torus:1x256", "width and height must be 1..255" },
        { 4, "torus:0x4", "width and height must be 1..255" },
        { 4, "torus:4x0", "width and height must be 1..255" },
        /* W*H must be the node count */
        { 4, "torus:3x3", "--topology torus:3x3 has 9 nodes but --nodes "
                          "is 4; W*H must equal the node count" },
        { 4, "torus:2x3", "W*H must equal the node count" },
        /* what an unsigned product that wraps used to let through */
        { 4, "torus:2147483650x2", "width and height must be 1..255" },
        /* digits only: no sign, no space, nothing after */
        { 4, "torus:-2x-2", "bad --topology 'torus:-2x-2': use ring or "
                            "torus:WxH" },
        { 4, "torus:+2x2", "bad --topology" },
        { 4, "torus: 2x2", "bad --topology" },
        { 4, "torus:2x2 ", "bad --topology" },
        { 4, "torus:2x2x", "bad --topology" },
        { 4, "torus:2", "bad --topology" },
        { 4, "Ring", "bad --topology" },
        { 4, "mesh", "bad --topology 'mesh': use ring or torus:WxH" },
        { 4, "", "bad --topology" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        refused("ps1", bad[i].n, bad[i].t, FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
                bad[i].msg);
    }
}

static void test_myrinet(void)
{
    static const char two_switches[] =
        "[switch0]\nports=8\nport0=node0\nport1=node1\nport7=switch1:7\n"
        "[switch1]\nports=8\nport0=node2\nport1=node3\nport7=switch0:7\n";
    g_autofree char *dir = g_dir_make_tmp("topology-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "switches.ini", NULL);
    g_autofree char *empty = g_build_filename(dir, "empty.ini", NULL);

    /* no file: one 16-port switch */
    accepted("myrinet", 16, NULL);
    refused("myrinet", 17, NULL, FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
            "17 nodes need more than the 16 ports of the default switch");

    g_assert_true(g_file_set_contents(file, two_switches, -1, NULL));
    g_assert_true(g_file_set_contents(empty, "", -1, NULL));
    accepted("myrinet", 4, file);
    refused("myrinet", 3, file, FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
            "node3, but the fabric has nodes 0..2");
    refused("myrinet", 2, empty, FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
            "no [switch0] group");
    g_unlink(file);
    g_unlink(empty);
    g_rmdir(dir);
}

/* eth and telegraphos have one switch or crossbar: no topology at all. */
static void test_no_topology(void)
{
    refused("eth", 4, "ring", FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
            "--topology does not apply to --kind eth (one switch, node i "
            "on port i)");
    refused("telegraphos", 4, "torus:2x2", FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
            "--topology does not apply to --kind telegraphos (one "
            "crossbar, node i on port i)");
}

/* Every kind of the library is one of fabricd's, under the same name. */
static void test_kind_names(void)
{
    g_auto(GStrv) listed = g_strsplit(fabric_kind_names(), ", ", -1);

    g_assert_cmpuint(g_strv_length(listed), ==, FABRIC_KIND_MAX);
    for (unsigned id = 1; id <= FABRIC_KIND_MAX; id++) {
        const char *name = fabric_kind_name(id);
        const FabricKind *k = fabric_kind_find(name);

        g_assert_nonnull(name);
        g_assert_cmpuint(fabric_kind_lookup(name), ==, id);
        g_assert_true(g_strv_contains((const char *const *)listed, name));
        g_assert_nonnull(k);
        g_assert_cmpstr(k->name, ==, name);
    }
    g_assert_null(fabric_kind_name(0));
    g_assert_null(fabric_kind_name(FABRIC_KIND_MAX + 1));
    g_assert_cmpuint(fabric_kind_lookup("tgr"), ==, 0);
    g_assert_cmpuint(fabric_kind_lookup(NULL), ==, 0);
    g_assert_null(fabric_kind_find("tgr"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/topology/kinds", test_kinds);
    g_test_add_func("/topology/kind-names", test_kind_names);
    g_test_add_func("/topology/nodes", test_nodes);
    g_test_add_func("/topology/ps1", test_ps1);
    g_test_add_func("/topology/myrinet", test_myrinet);
    g_test_add_func("/topology/no-topology", test_no_topology);
    return g_test_run();
}
