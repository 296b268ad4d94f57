/*
 * Unit tests for the Myrinet topology module of the fabric library
 * (host-lib/fabric/myrinet-topo.c): the default switch, topology files and every error they can have, shortest routes
 * with their tie-break, the route file, and walking routes through the
 * switches.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "vcluster/fabric/myrinet-topo.h"
#include "proto/myrinet.h"

/* Two 16-port switches joined port 15 to port 15, two nodes on each. */
static const char two_switches[] =
    "[switch0]\n"
    "ports=16\n"
    "port0=node0\n"
    "port1=node1\n"
    "port15=switch1:15\n"
    "\n"
    "[switch1]\n"
    "ports=16\n"
    "port0=node2\n"
    "port1=node3\n"
    "port15=switch0:15\n";

static MyriTopo *load(const char *text, unsigned nodes)
{
    g_autoptr(GError) err = NULL;
    MyriTopo *t = myri_topo_from_data(text, "t.ini", nodes, &err);

    g_assert_no_error(err);
    g_assert_nonnull(t);
    return t;
}

static char *route_hex(const MyriTopo *t, unsigned src, unsigned dst)
{
    MyriRoute *routes = g_new(MyriRoute, t->nodes);
    GString *out = g_string_new(NULL);

    myri_topo_routes(t, src, routes);
    myri_route_append_hex(&routes[dst], out);
    g_free(routes);
    return g_string_free(out, FALSE);
}

static void assert_route(const MyriTopo *t, unsigned src, unsigned dst,
                         const char *want)
{
    g_autofree char *got = route_hex(t, src, dst);

    if (strcmp(got, want)) {
        g_test_message("route %u>%u is %s, want %s", src, dst, got, want);
    }
    g_assert_cmpstr(got, ==, want);
}

/* Walk `route` followed by a packet byte and return the walk. */
static MyriWalk walk(const MyriTopo *t, unsigned src, const char *hex)
{
    uint8_t bytes[64];
    size_t n = strlen(hex) / 2;
    MyriWalk w;

    g_assert_cmpuint(n + 1, <=, sizeof(bytes));
    for (size_t i = 0; i < n; i++) {
        char pair[3] = { hex[2 * i], hex[2 * i + 1], 0 };

        bytes[i] = g_ascii_strtoull(pair, NULL, 16);
    }
    bytes[n] = 0x03;        /* a packet type: bit 7 clear */
    myri_topo_walk(t, src, bytes, n + 1, &w);
    return w;
}

/* ---- the default switch ---- */

static void test_default(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MyriTopo) t = myri_topo_new(NULL, 3, &err);
    g_autoptr(MyriTopo) full = NULL;
    g_autoptr(MyriTopo) over = NULL;
    g_autoptr(GString) text = g_string_new(NULL);
    g_autofree char *file = NULL;

    g_assert_no_error(err);
    g_assert_true(t->is_default);
    g_assert_cmpuint(t->switches, ==, 1);
    g_assert_cmpuint(t->sw[0].ports, ==, FABRIC_MYRI_SWITCH_PORTS);
    for (unsigned i = 0; i < 3; i++) {
        g_assert_cmpuint(t->node[i].sw, ==, 0);
        g_assert_cmpuint(t->node[i].port, ==, i);
    }
    g_assert_cmpint(t->sw[0].peer[3].kind, ==, MYRI_PEER_NONE);
    myri_topo_describe(t, text);
    g_assert_cmpstr(text->str, ==, "one 16-port switch, node i on port i; "
                    "links are end to end, node to node");
    /* relative ports: -1 is 0xbf, itself is 0x80 */
    file = myri_topo_route_file(t, 1);
    g_assert_cmpstr(file, ==, "0 bf\n1 80\n2 81\n");

    full = myri_topo_new(NULL, 16, &err);
    g_assert_no_error(err);
    assert_route(full, 0, 15, "8f");
    assert_route(full, 15, 0, "b1");
    over = myri_topo_new(NULL, 17, &err);
    g_assert_null(over);
    g_assert_nonnull(strstr(err->message, "17 nodes need more than the 16 "
                            "ports of the default switch"));
}

/* ---- topology files ---- */

static void test_two_switches(void)
{
    g_autoptr(MyriTopo) t = load(two_switches, 4);
    g_autoptr(GString) text = g_string_new(NULL);

    g_assert_false(t->is_default);
    g_assert_cmpuint(t->switches, ==, 2);
    g_assert_cmpuint(t->cables, ==, 1);
    g_assert_cmpuint(t->longest_route, ==, 2);
    g_assert_cmpuint(t->node[3].sw, ==, 1);
    g_assert_cmpuint(t->node[3].port, ==, 1);
    myri_topo_describe(t, text);
    g_assert_cmpstr(text->str, ==, "2 switches, 1 switch cable, longest "
                    "route 2 switches; links are end to end, node to node");
    /* port 0 to 15 is +15; port 15 to 0 is -15 */
    assert_route(t, 0, 2, "8fb1");
    assert_route(t, 3, 1, "8eb2");
    assert_route(t, 0, 1, "81");
    assert_route(t, 2, 2, "80");
}

static void test_file(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("myri-topo-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "switches.ini", NULL);
    g_autoptr(MyriTopo) t = NULL;

    g_assert_true(g_file_set_contents(path, two_switches, -1, NULL));
    t = myri_topo_new(path, 4, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(t->switches, ==, 2);
    g_assert_cmpint(g_unlink(path), ==, 0);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
    g_assert_null(myri_topo_new(path, 4, &err));
    g_assert_true(g_str_has_prefix(err->message,
                                   "cannot read the topology file: "));
    g_assert_nonnull(strstr(err->message, "switches.ini"));
}

/*
 * Ties: two cables from switch0 to switch1 (the lower port wins), and a
 * square 0-1-3 / 0-2-3 whose two shortest paths are decided by the port
 * switch0 uses.
 */
static void test_tie_break(void)
{
    static const char parallel[] =
        "[switch0]\nports=16\nport0=node0\nport14=switch1:13\n"
        "port15=switch1:12\n"
        "[switch1]\nports=16\nport0=node1\nport12=switch0:15\n"
        "port13=switch0:14\n";
    static const char square[] =
        "[switch0]\nports=8\nport0=node0\nport%u=switch1:0\n"
        "port%u=switch2:0\n"
        "[switch1]\nports=8\nport0=switch0:%u\nport1=switch3:0\n"
        "[switch2]\nports=8\nport0=switch0:%u\nport1=switch3:1\n"
        "[switch3]\nports=8\nport0=switch1:1\nport1=switch2:1\n"
        "port7=node1\n";
    g_autoptr(MyriTopo) par = load(parallel, 2);
    g_autofree char *via1 = g_strdup_printf(square, 5, 6, 5, 6);
    g_autofree char *via2 = g_strdup_printf(square, 6, 5, 6, 5);
    g_autoptr(MyriTopo) sq1 = load(via1, 2);
    g_autoptr(MyriTopo) sq2 = load(via2, 2);

    /* 0 -> 14 is +14 (0x8e); 13 -> 0 is -13 (0xb3) */
    assert_route(par, 0, 1, "8eb3");
    assert_route(par, 1, 0, "8cb1");
    /* via switch1 (port 5) or switch2 (port 5), both 3 switches long */
    assert_route(sq1, 0, 1, "858187");
    assert_route(sq2, 0, 1, "858186");
    /* the same answer every time */
    for (int i = 0; i < 3; i++) {
        assert_route(sq1, 0, 1, "858187");
    }
    /* and back: switch3 port 7 -> port 0 (switch1) is the lower port */
    assert_route(sq1, 1, 0, "b9bfbb");
    g_assert_cmpuint(sq1->cables, ==, 4);
}

/* A ring of 4 switches: the short way round, never the long one. */
static void test_shortest(void)
{
    static const char ring[] =
        "[switch0]\nports=4\nport0=node0\nport1=switch1:2\nport2=switch3:1\n"
        "[switch1]\nports=4\nport0=node1\nport1=switch2:2\nport2=switch0:1\n"
        "[switch2]\nports=4\nport0=node2\nport1=switch3:2\nport2=switch1:1\n"
        "[switch3]\nports=4\nport0=node3\nport1=switch0:2\nport2=switch2:1\n";
    g_autoptr(MyriTopo) t = load(ring, 4);

    g_assert_cmpuint(t->longest_route, ==, 3);
    assert_route(t, 0, 3, "82bf");          /* 0 -> 2, then 1 -> 0 */
    assert_route(t, 0, 1, "81be");
    /* two ways of 3 switches: switch0's port 1 (switch1) comes first */
    assert_route(t, 0, 2, "81bfbe");
    assert_route(t, 3, 1, "81bfbe");        /* via switch0 on port 1 */
}

/* Every error a topology file can have, with a message saying where. */
static void test_errors(void)
{
    static const struct {
        unsigned nodes;
        const char *text;
        const char *message;
    } cases[] = {
        { 1, "port0=node0\n", "t.ini: " },
        { 1, "", "t.ini: no [switch0] group" },
        { 1, "[sw0]\nports=4\n", "group [sw0] is not a switch" },
        { 1, "[switch01]\nports=4\n", "group [switch01] is not a switch" },
        { 1, "[switch0]\nports=4\nport0=node0\n[switch2]\nports=4\n",
          "[switch1] is missing: switches are numbered from 0 without gaps, "
          "and the file has [switch2]" },
        { 1, "[switch300]\nports=4\n", "at most 256 switches" },
        { 1, "[switch0]\nport0=node0\n",
          "[switch0] has no ports= (the number of ports, 1..32)" },
        { 1, "[switch0]\nports=0\n", "ports=0: use a number of ports from "
          "1 to 32" },
        { 1, "[switch0]\nports=33\n", "ports=33: use a number" },
        { 1, "[switch0]\nports=many\n", "ports=many: use a number" },
        { 1, "[switch0]\nports=4\nport0=node0\nspeed=2\n",
          "[switch0] unknown key 'speed': the keys are ports and "
          "port0..port3" },
        { 1, "[switch0]\nports=4\nport00=node0\n", "unknown key 'port00'" },
        { 1, "[switch0]\nports=4\nport4=node0\n",
          "[switch0] port4, but the switch has ports 0..3 (ports=4)" },
        { 1, "[switch0]\nports=4\nport1=host1\n",
          "[switch0] port1=host1: use nodeN, switchK:P, or nothing for a "
          "port without a cable" },
        { 1, "[switch0]\nports=4\nport1=node01\n", "port1=node01: use nodeN" },
        { 1, "[switch0]\nports=4\nport1=switch0\n", "port1=switch0: use" },
        { 2, "[switch0]\nports=4\nport0=node0\nport1=node5\n",
          "[switch0] port1=node5, but the fabric has nodes 0..1" },
        { 1, "[switch0]\nports=4\nport0=node0\nport3=switch2:0\n",
          "[switch0] port3=switch2:0, but there is no [switch2]" },
        { 1, "[switch0]\nports=4\nport0=node0\nport3=switch1:8\n"
             "[switch1]\nports=8\n",
          "[switch0] port3=switch1:8, but switch1 has ports 0..7" },
        { 1, "[switch0]\nports=4\nport0=node0\nport3=switch0:3\n",
          "[switch0] port3=switch0:3 is a cable from a port to itself" },
        { 2, "[switch0]\nports=4\nport0=node0\nport3=switch1:3\n"
             "[switch1]\nports=4\nport3=node1\n",
          "[switch0] port3=switch1:3, but [switch1] port3 is node1: both "
          "ends of a cable must name each other" },
        { 2, "[switch0]\nports=4\nport0=node0\nport3=switch1:3\n"
             "[switch1]\nports=4\nport0=node1\n",
          "but [switch1] port3 is not connected" },
        { 2, "[switch0]\nports=4\nport0=node0\nport3=switch1:3\n"
             "[switch1]\nports=4\nport0=node1\nport3=switch0:2\n",
          "[switch0] port3=switch1:3, but [switch1] port3 is switch0:2" },
        { 2, "[switch0]\nports=4\nport0=node0\nport1=node1\nport2=node1\n",
          "node1 is on [switch0] port1 and on [switch0] port2: a node has "
          "one cable" },
        { 4, "[switch0]\nports=4\nport0=node0\nport1=node1\nport2=node2\n",
          "node3 is on no switch port (every node 0..3 needs one cable)" },
        { 2, "[switch0]\nports=4\nport0=node0\nport1=node1\n"
             "[switch1]\nports=4\n",
          "[switch1] cannot be reached from [switch0]: the switches must "
          "form one network" },
        { 2, "[switch0]\nports=4\nport0=node0\n"
             "[switch1]\nports=4\nport0=node1\n",
          "[switch1] cannot be reached" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(MyriTopo) t = myri_topo_from_data(cases[i].text, "t.ini",
                                                    cases[i].nodes, &err);

        g_assert_null(t);
        g_assert_nonnull(err);
        if (!strstr(err->message, cases[i].message) ||
            !g_str_has_prefix(err->message, "t.ini: ")) {
            g_test_message("case %zu: '%s', expected '%s'", i, err->message,
                           cases[i].message);
        }
        g_assert_nonnull(strstr(err->message, cases[i].message));
        g_assert_true(g_str_has_prefix(err->message, "t.ini: "));
    }
}

/* A chain of `n` switches, node0 on the first and node1 on the last. */
static char *chain(unsigned n)
{
    GString *s = g_string_new(NULL);

    for (unsigned k = 0; k < n; k++) {
        g_string_append_printf(s, "[switch%u]\nports=4\n", k);
        if (k == 0) {
            g_string_append(s, "port0=node0\n");
        }
        if (k == n - 1) {
            g_string_append(s, "port3=node1\n");
        }
        if (k > 0) {
            g_string_append_printf(s, "port1=switch%u:2\n", k - 1);
        }
        if (k < n - 1) {
            g_string_append_printf(s, "port2=switch%u:1\n", k + 1);
        }
    }
    return g_string_free(s, FALSE);
}

static void test_longest_route(void)
{
    g_autofree char *ok = chain(FABRIC_MYRI_MAX_ROUTE);
    g_autofree char *bad = chain(FABRIC_MYRI_MAX_ROUTE + 1);
    g_autoptr(MyriTopo) t = load(ok, 2);
    g_autoptr(GError) err = NULL;
    g_autofree char *route = route_hex(t, 0, 1);
    MyriWalk w;

    g_assert_cmpuint(t->longest_route, ==, FABRIC_MYRI_MAX_ROUTE);
    g_assert_cmpuint(strlen(route), ==, 2 * FABRIC_MYRI_MAX_ROUTE);
    w = walk(t, 0, route);
    g_assert_cmpint(w.result, ==, MYRI_WALK_DELIVERED);
    g_assert_cmpuint(w.dst, ==, 1);
    g_assert_cmpuint(w.hops, ==, FABRIC_MYRI_MAX_ROUTE);
    g_assert_cmpuint(w.path[FABRIC_MYRI_MAX_ROUTE - 1], ==,
                     FABRIC_MYRI_MAX_ROUTE - 1);

    g_assert_null(myri_topo_from_data(bad, "t.ini", 2, &err));
    g_assert_nonnull(strstr(err->message, "the route from node0 to node1 "
                            "crosses 25 switches; a route has at most 24"));
}

/* ---- walking routes ---- */

static void test_walk(void)
{
    g_autoptr(MyriTopo) t = load(two_switches, 4);
    g_autoptr(MyriTopo) one = myri_topo_new(NULL, 3, NULL);
    g_autoptr(GString) text = g_string_new(NULL);
    uint8_t only_route[2] = { 0x8f, 0xb1 };
    MyriWalk w;

    w = walk(t, 0, "8fb1");
    g_assert_cmpint(w.result, ==, MYRI_WALK_DELIVERED);
    g_assert_cmpuint(w.src, ==, 0);
    g_assert_cmpuint(w.dst, ==, 2);
    g_assert_cmpuint(w.hops, ==, 2);
    g_assert_cmpuint(w.route_len, ==, 2);
    g_assert_cmpuint(w.path[0], ==, 0);
    g_assert_cmpuint(w.path[1], ==, 1);
    myri_walk_describe(t, &w, text);
    g_assert_cmpstr(text->str, ==, "delivered: node0 to node2 across 2 "
                    "switches");

    /* loopback: out of the port it came in on */
    w = walk(t, 3, "80");
    g_assert_cmpint(w.result, ==, MYRI_WALK_DELIVERED);
    g_assert_cmpuint(w.dst, ==, 3);
    g_assert_cmpuint(w.hops, ==, 1);

    w = walk(t, 1, "");
    g_assert_cmpint(w.result, ==, MYRI_WALK_NOT_ROUTE);
    g_assert_cmpuint(w.sw, ==, 0);
    g_assert_cmpuint(w.hops, ==, 0);

    /* to switch1 and no further */
    w = walk(t, 0, "8f");
    g_assert_cmpint(w.result, ==, MYRI_WALK_TOO_SHORT);
    g_assert_cmpuint(w.sw, ==, 1);
    g_assert_cmpuint(w.in_port, ==, 15);
    g_assert_cmpuint(w.hops, ==, 1);
    g_string_truncate(text, 0);
    myri_walk_describe(t, &w, text);
    g_assert_cmpstr(text->str, ==, "too_short: the route from node0 ends at "
                    "switch1 (in on port 15) after 1 switch");
    /* the frame ends with the route: too short as well */
    myri_topo_walk(t, 0, only_route, 1, &w);
    g_assert_cmpint(w.result, ==, MYRI_WALK_TOO_SHORT);

    w = walk(t, 0, "818181");
    g_assert_cmpint(w.result, ==, MYRI_WALK_TOO_LONG);
    g_assert_cmpuint(w.dst, ==, 1);
    g_assert_cmpuint(w.left, ==, 2);
    g_assert_cmpuint(w.route_len, ==, 1);

    /* bit 6 set, +31 and -1 from port 0: no such port */
    w = walk(t, 0, "c1");
    g_assert_cmpint(w.result, ==, MYRI_WALK_BAD_PORT);
    g_assert_cmphex(w.byte, ==, 0xc1);
    w = walk(t, 0, "9f");
    g_assert_cmpint(w.result, ==, MYRI_WALK_BAD_PORT);
    w = walk(t, 0, "bf");
    g_assert_cmpint(w.result, ==, MYRI_WALK_BAD_PORT);
    g_string_truncate(text, 0);
    myri_walk_describe(t, &w, text);
    g_assert_nonnull(strstr(text->str, "route byte 0xbf from node0, in on "
                            "port 0 of switch0, selects no port"));

    w = walk(one, 0, "85");
    g_assert_cmpint(w.result, ==, MYRI_WALK_DEAD_PORT);
    g_assert_cmpuint(w.out_port, ==, 5);
    g_assert_cmpuint(w.sw, ==, 0);
    /* switch1's port 5 is empty too, one switch further (15 - 10) */
    w = walk(t, 0, "8fb6");
    g_assert_cmpint(w.result, ==, MYRI_WALK_DEAD_PORT);
    g_assert_cmpuint(w.sw, ==, 1);
    g_assert_cmpuint(w.out_port, ==, 5);
    g_assert_cmpuint(w.hops, ==, 1);
}

/* 0x80 sends a packet back on the cable it came in on: a loop. */
static void test_too_many_hops(void)
{
    g_autoptr(MyriTopo) t = load(two_switches, 4);
    GString *route = g_string_new("8f");
    g_autofree char *hex = NULL;
    g_autoptr(GString) text = g_string_new(NULL);
    MyriWalk w;

    for (int i = 0; i < 40; i++) {
        g_string_append(route, "80");
    }
    hex = g_string_free(route, FALSE);
    w = walk(t, 0, hex);
    g_assert_cmpint(w.result, ==, MYRI_WALK_TOO_MANY_HOPS);
    g_assert_cmpuint(w.hops, ==, FABRIC_MYRI_MAX_ROUTE);
    g_assert_cmpuint(w.route_len, ==, FABRIC_MYRI_MAX_ROUTE);
    /* the 25th switch, switch0 again (hops alternate 0, 1, 0 ...) */
    g_assert_cmpuint(w.sw, ==, 0);
    myri_walk_describe(t, &w, text);
    g_assert_nonnull(strstr(text->str, "after 24 switches"));
    g_assert_cmpstr(myri_walk_result_name(w.result), ==, "too_many_hops");
}

/* Every route the module computes walks to its destination. */
static void test_routes_walk(void)
{
    g_autofree char *long_chain = chain(7);
    const char *texts[] = { two_switches, long_chain };
    const unsigned nodes[] = { 4, 2 };

    for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) {
        g_autoptr(MyriTopo) t = load(texts[i], nodes[i]);
        MyriRoute *routes = g_new(MyriRoute, t->nodes);

        for (unsigned s = 0; s < t->nodes; s++) {
            myri_topo_routes(t, s, routes);
            for (unsigned d = 0; d < t->nodes; d++) {
                uint8_t bytes[FABRIC_MYRI_MAX_ROUTE + 1];
                MyriWalk w;

                memcpy(bytes, routes[d].b, routes[d].len);
                bytes[routes[d].len] = 0;
                myri_topo_walk(t, s, bytes, routes[d].len + 1, &w);
                g_assert_cmpint(w.result, ==, MYRI_WALK_DELIVERED);
                g_assert_cmpuint(w.dst, ==, d);
                g_assert_cmpuint(w.hops, ==, routes[d].len);
            }
        }
        g_free(routes);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/myrinet-topo/default", test_default);
    g_test_add_func("/myrinet-topo/two-switches", test_two_switches);
    g_test_add_func("/myrinet-topo/file", test_file);
    g_test_add_func("/myrinet-topo/tie-break", test_tie_break);
    g_test_add_func("/myrinet-topo/shortest", test_shortest);
    g_test_add_func("/myrinet-topo/errors", test_errors);
    g_test_add_func("/myrinet-topo/longest-route", test_longest_route);
    g_test_add_func("/myrinet-topo/walk", test_walk);
    g_test_add_func("/myrinet-topo/too-many-hops", test_too_many_hops);
    g_test_add_func("/myrinet-topo/routes-walk", test_routes_walk);
    return g_test_run();
}
