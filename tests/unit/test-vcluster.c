/*
 * Unit tests of vcluster's QEMU arguments, kernel command line, libvirt
 * XML, myrinet route files, `reboot`'s errors and `cp`'s arguments,
 * linked with vcluster's objects: nothing is started.  The run directory
 * is a temporary one (VCLUSTER_RUNDIR).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcluster/fabric/topology.h"
#include "vcluster.h"

static char *run_base;

static const char two_switches[] =
    "[switch0]\nports=16\nport0=node0\nport1=node1\nport15=switch1:15\n"
    "[switch1]\nports=16\nport0=node2\nport1=node3\nport15=switch0:15\n";

static Cluster *cluster_with(const char *fabrics, int nodes)
{
    Cluster *c = cluster_new("t1");

    c->nodes = nodes;
    c->fabrics = g_strsplit(fabrics, ",", -1);
    c->accel = g_strdup("tcg");
    c->topology = g_strdup("ring");
    g_assert_cmpint(g_mkdir_with_parents(c->dir, 0755), ==, 0);
    return c;
}

static char *read_file(const char *path)
{
    char *text = NULL;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

/* The index of `arg` in `args`, or -1. */
static int find_arg(GPtrArray *args, const char *arg)
{
    for (guint i = 0; i < args->len; i++) {
        if (strcmp(args->pdata[i], arg) == 0) {
            return i;
        }
    }
    return -1;
}

static void test_device_args(void)
{
    Cluster *c = cluster_with("eth,myrinet", 3);
    VcPaths p = { 0 };
    g_autofree char *dir = cluster_fabric_dir(c, "myrinet");
    g_autofree char *chardev = g_strdup_printf(
        "socket,id=vc-myri,path=%s/node1.sock,reconnect=1", dir);
    g_autofree char *fw_cfg = g_strdup_printf(
        "name=opt/vcluster/myri-routes,file=%s/routes/node1", dir);
    GPtrArray *args = node_device_args(c, &p, 1);
    int at = find_arg(args, chardev);

    g_assert_cmpint(at, >, 0);
    g_assert_cmpstr(args->pdata[at - 1], ==, "-chardev");
    g_assert_cmpstr(args->pdata[at + 1], ==, "-device");
    g_assert_cmpstr(args->pdata[at + 2], ==, "lanai,chardev=vc-myri,node=1");
    g_assert_cmpstr(args->pdata[at + 3], ==, "-fw_cfg");
    g_assert_cmpstr(args->pdata[at + 4], ==, fw_cfg);
    /* eth is still there, ahead of myrinet as in --fabric */
    at = find_arg(args, "-netdev");
    g_assert_cmpint(at, >, 0);
    g_assert_cmpint(at, <, find_arg(args, "-fw_cfg"));
    g_assert_cmpint(find_arg(args, "parastation,chardev=vc-ps1,node=1"), ==,
                    -1);
    g_ptr_array_free(args, TRUE);

    g_autofree char *cmdline = node_kernel_cmdline(c, 2);

    g_assert_true(g_str_has_suffix(cmdline, " myri.node=2"));
    g_assert_null(strstr(cmdline, "ps1.node"));
    rm_rf(c->dir);
    cluster_free(c);

    /* ps1 and myrinet together: both devices, both parameters */
    c = cluster_with("ps1,myrinet", 2);
    args = node_device_args(c, &p, 0);
    g_assert_cmpint(find_arg(args, "parastation,chardev=vc-ps1,node=0"), >,
                    0);
    g_assert_cmpint(find_arg(args, "lanai,chardev=vc-myri,node=0"), >, 0);
    g_ptr_array_free(args, TRUE);
    g_free(cmdline);
    cmdline = node_kernel_cmdline(c, 0);
    g_assert_nonnull(strstr(cmdline, " ps1.node=0 myri.node=0"));
    rm_rf(c->dir);
    cluster_free(c);
}

static void test_libvirt_xml(void)
{
    Cluster *c = cluster_with("myrinet", 2);
    VcPaths p = { .qemu = "/q/qemu", .kernel = "/k/vmlinuz",
                  .initrd = "/k/initrd" };
    g_autofree char *dir = cluster_fabric_dir(c, "myrinet");
    g_autofree char *xml = libvirt_domain_xml(c, &p, 1);
    g_autofree char *fw_cfg = g_strdup_printf(
        "    <qemu:arg value='-fw_cfg'/>\n"
        "    <qemu:arg value='name=opt/vcluster/myri-routes,file=%s/routes/"
        "node1'/>\n", dir);

    g_assert_nonnull(strstr(xml, fw_cfg));
    g_assert_nonnull(strstr(xml, "<qemu:arg value='lanai,chardev=vc-myri,"
                                 "node=1'/>"));
    g_assert_nonnull(strstr(xml, " myri.node=1</cmdline>"));
    /* `virsh reset` must reset, not shut down */
    g_assert_nonnull(strstr(xml, "<on_reboot>restart</on_reboot>"));
    rm_rf(c->dir);
    cluster_free(c);
}

static void test_routes_default(void)
{
    Cluster *c = cluster_with("myrinet", 3);
    g_autoptr(GError) err = NULL;
    g_autofree char *path = myrinet_routes_file(c, 1);
    g_autofree char *text = NULL;

    g_assert_true(fabric_topology_check("myrinet", 3, NULL, &err));
    g_assert_true(myrinet_prepare(c, NULL, &err));
    g_assert_no_error(err);
    g_assert_null(c->myri_topology);
    text = read_file(path);
    g_assert_cmpstr(text, ==, "0 bf\n1 80\n2 81\n");
    rm_rf(c->dir);
    cluster_free(c);

    g_assert_false(fabric_topology_check("myrinet", 17, NULL, &err));
    g_assert_nonnull(strstr(err->message, "17 nodes need more than the 16 "
                            "ports"));
    g_clear_error(&err);
    g_assert_true(fabric_topology_check("myrinet", 16, NULL, &err));
}

/* A switch file: copied into the run directory, routes from the copy. */
static void test_routes_file(void)
{
    Cluster *c = cluster_with("eth,myrinet", 4);
    g_autoptr(GError) err = NULL;
    g_autofree char *src = g_build_filename(run_base, "switches.ini", NULL);
    g_autofree char *dir = cluster_fabric_dir(c, "myrinet");
    g_autofree char *copy = g_build_filename(dir, "topology.ini", NULL);
    g_autofree char *route0 = myrinet_routes_file(c, 0);
    g_autofree char *route3 = myrinet_routes_file(c, 3);
    g_autofree char *text0 = NULL, *text3 = NULL, *copied = NULL;
    Cluster *loaded;

    g_assert_true(g_file_set_contents(src, two_switches, -1, NULL));
    g_assert_true(fabric_topology_check("myrinet", 4, src, &err));
    g_assert_false(fabric_topology_check("myrinet", 3, src, &err));
    g_assert_nonnull(strstr(err->message, "node3, but the fabric has nodes "
                            "0..2"));
    g_clear_error(&err);

    g_assert_true(myrinet_prepare(c, src, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(c->myri_topology, ==, copy);
    copied = read_file(copy);
    g_assert_cmpstr(copied, ==, two_switches);
    text0 = read_file(route0);
    text3 = read_file(route3);
    g_assert_cmpstr(text0, ==, "0 80\n1 81\n2 8fb1\n3 8fb2\n");
    g_assert_cmpstr(text3, ==, "0 8eb1\n1 8eb2\n2 bf\n3 80\n");
    /* the original may go away: the cluster keeps its copy */
    g_assert_cmpint(g_unlink(src), ==, 0);

    /* the copy's path survives in cluster.ini */
    g_assert_true(cluster_save(c, NULL));
    loaded = cluster_load("t1", &err);
    g_assert_no_error(err);
    g_assert_cmpstr(loaded->myri_topology, ==, copy);
    cluster_free(loaded);
    rm_rf(c->dir);
    cluster_free(c);

    /* an unreadable file is an error, and nothing is half written */
    c = cluster_with("myrinet", 2);
    g_assert_false(myrinet_prepare(c, src, &err));
    g_assert_nonnull(strstr(err->message, "switches.ini"));
    g_assert_null(c->myri_topology);
    rm_rf(c->dir);
    cluster_free(c);
}

/*
 * A trapped child of reboot_fails(): `vcluster reboot $REBOOT_ARGS`, and
 * its exit code on stderr (GLib 2.74 cannot hand it to the parent).
 */
typedef int CommandFn(int argc, char **argv);

/*
 * In a test's subprocess: run a vcluster command (argv0) with the
 * space-separated words of $var, say "exit RC" on stderr and exit RC.
 */
static void G_GNUC_NORETURN command_child(const char *var, const char *argv0,
                                          CommandFn *cmd)
{
    g_auto(GStrv) words = g_strsplit(g_getenv(var), " ", -1);
    int argc = g_strv_length(words) + 1;
    char **argv = g_new0(char *, argc + 1);

    argv[0] = (char *)argv0;
    memcpy(argv + 1, words, (argc - 1) * sizeof(char *));
    int rc = cmd(argc, argv);
    g_printerr("exit %d\n", rc);
    exit(rc);
}

/* The subprocess, given args in $var, exits with rc and says message. */
static void command_fails(const char *var, const char *args, int rc,
                          const char *message)
{
    g_autofree char *expected = g_strdup_printf("%s\nexit %d\n", message, rc);

    g_setenv(var, args, TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_failed();
    g_test_trap_assert_stderr(expected);
}

static void reboot_child(void)
{
    command_child("REBOOT_ARGS", "vcluster reboot", cmd_reboot);
}

/* `vcluster reboot ARGS` exits with `rc` and says `message` on stderr. */
static void reboot_fails(const char *args, int rc, const char *message)
{
    command_fails("REBOOT_ARGS", args, rc, message);
}

static void test_reboot_errors(void)
{
    if (g_test_subprocess()) {
        reboot_child();
    }
    Cluster *c = cluster_with("eth", 2);

    g_assert_true(cluster_save(c, NULL));
    reboot_fails("--name t1", 2, "*usage: vcluster reboot*NODE|all*");
    reboot_fails("--name t1 -t 0 1", 2, "*-t must be positive*");
    reboot_fails("--name t1 7", 2,
                 "*bad node '7': cluster 't1' has nodes 0..1*");
    reboot_fails("--name nosuch 1", 1, "*no cluster named 'nosuch'*");
    /* saved, but no QEMU ever ran: nothing is reset */
    reboot_fails("--name t1 all", 1,
                 "*node0 is not running (its QEMU is gone)*");
    rm_rf(c->dir);
    cluster_free(c);
}

/* -device telegraphos in direct and libvirt mode. */
static void test_telegraphos_args(void)
{
    static const int mem[] = { 256, 512 };
    VcPaths p = { .qemu = "/q/qemu", .kernel = "/k/vmlinuz",
                  .initrd = "/k/initrd" };

    for (size_t i = 0; i < G_N_ELEMENTS(mem); i++) {
        Cluster *c = cluster_with("eth,telegraphos", 3);
        g_autofree char *dir = cluster_fabric_dir(c, "telegraphos");
        g_autofree char *chardev = g_strdup_printf(
            "socket,id=vc-tgr,path=%s/node1.sock,reconnect=1", dir);
        g_autofree char *xml = NULL;
        GPtrArray *args;
        int at;

        c->mem_mb = mem[i];
        args = node_device_args(c, &p, 1);
        at = find_arg(args, chardev);
        g_assert_cmpint(at, >, 0);
        g_assert_cmpstr(args->pdata[at - 1], ==, "-chardev");
        g_assert_cmpstr(args->pdata[at + 1], ==, "-device");
        /* the device's default mirror (512 MiB) covers the memory */
        g_assert_cmpstr(args->pdata[at + 2], ==,
                        "telegraphos,chardev=vc-tgr,node=1");
        g_assert_cmpint(find_arg(args, "-netdev"), <, at);
        g_assert_cmpint(find_arg(args, "lanai,chardev=vc-myri,node=1"), ==,
                        -1);
        g_ptr_array_free(args, TRUE);
        xml = libvirt_domain_xml(c, &p, 1);
        g_assert_nonnull(strstr(xml, "<qemu:arg value='telegraphos,"
                                     "chardev=vc-tgr,node=1'/>"));
        rm_rf(c->dir);
        cluster_free(c);
    }
}

/*
 * The local mirror size: the device default up to 512 MiB, then the next
 * power of 2 up to what the card allows.  tgr_regs.h's shadow layout
 * allows 512 MiB today; a card with a larger mirror is checked too.
 */
static void test_telegraphos_mirror(void)
{
    static const struct {
        int mem, max, want;     /* want -1: refused */
    } cases[] = {
        { 64, 512, 0 }, { 256, 512, 0 }, { 512, 512, 0 }, { 513, 512, -1 },
        { 512, 1024, 0 }, { 513, 1024, 1024 }, { 700, 1024, 1024 },
        { 1024, 1024, 1024 }, { 1025, 1024, -1 }, { 1025, 4096, 2048 },
    };

    g_assert_cmpint(VC_TGR_MAX_MIRROR_MB, ==, 512);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        int mirror_mb = -2;
        gboolean ok = telegraphos_mirror_mb(cases[i].mem, cases[i].max,
                                            &mirror_mb, &err);

        if (cases[i].want < 0) {
            g_autofree char *want = g_strdup_printf(
                "--mem %d: the telegraphos card mirrors at most %d MiB of "
                "guest memory; use --mem %d or less with --fabric "
                "telegraphos", cases[i].mem, cases[i].max, cases[i].max);

            g_assert_false(ok);
            g_assert_cmpstr(err->message, ==, want);
        } else {
            g_assert_true(ok);
            g_assert_no_error(err);
            g_assert_cmpint(mirror_mb, ==, cases[i].want);
        }
    }
}

/* NODE:PATH or a local path: a ':' before any '/'. */
static void test_cp_split(void)
{
    static const struct {
        const char *arg, *node, *path;      /* node NULL: local */
    } cases[] = {
        { "node1:/tmp/f", "node1", "/tmp/f" }, { "2:rel", "2", "rel" },
        { "0:", "0", "" }, { "n:/a:b", "n", "/a:b" },
        { "/tmp/a:b", NULL, NULL }, { "./a:b", NULL, NULL },
        { "dir/x:y", NULL, NULL }, { ":/x", NULL, NULL },
        { "plain", NULL, NULL }, { "-", NULL, NULL },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *node = NULL, *path = NULL;
        gboolean remote = cp_split_remote(cases[i].arg, &node, &path);

        g_assert_cmpint(remote, ==, cases[i].node != NULL);
        g_assert_cmpstr(node, ==, cases[i].node);
        g_assert_cmpstr(path, ==, cases[i].path);
    }
}

static void test_cp_parse(void)
{
    static const struct {
        const char *src, *dst;
        gboolean to_guest;
        const char *node, *remote, *local;  /* node NULL: refused */
        const char *error;
    } cases[] = {
        { "node1:/etc/hosts", "/tmp/h", FALSE, "node1", "/etc/hosts",
          "/tmp/h", NULL },
        { "f.bin", "2:/tmp/f.bin", TRUE, "2", "/tmp/f.bin", "f.bin", NULL },
        { "/x/f.bin", "node0:/tmp/", TRUE, "node0", "/tmp/f.bin",
          "/x/f.bin", NULL },
        { "-", "node0:/tmp/in", TRUE, "node0", "/tmp/in", "-", NULL },
        { "node0:/tmp/out", "-", FALSE, "node0", "/tmp/out", "-", NULL },
        { "a", "b", FALSE, NULL, NULL, NULL,
          "no node: give one NODE:PATH and one local path (both are "
          "local: 'a', 'b')" },
        { "node0:/a", "node1:/b", FALSE, NULL, NULL, NULL,
          "cannot copy between two nodes: give one NODE:PATH and one "
          "local path (both are NODE:PATH: 'node0:/a', 'node1:/b')" },
        { "node1:", "x", FALSE, NULL, NULL, NULL,
          "'node1:': no PATH after the node" },
        { "node1:/x", "", FALSE, NULL, NULL, NULL, "empty local path" },
        { "-", "node1:/tmp/", FALSE, NULL, NULL, NULL,
          "'node1:/tmp/': give the guest file a name when copying stdin" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        CpArgs a;
        gboolean ok = cp_parse_args(cases[i].src, cases[i].dst, &a, &err);

        if (!cases[i].node) {
            g_assert_false(ok);
            g_assert_cmpstr(err->message, ==, cases[i].error);
            g_assert_null(a.node);
            continue;
        }
        g_assert_no_error(err);
        g_assert_true(ok);
        g_assert_cmpint(a.to_guest, ==, cases[i].to_guest);
        g_assert_cmpstr(a.node, ==, cases[i].node);
        g_assert_cmpstr(a.remote, ==, cases[i].remote);
        g_assert_cmpstr(a.local, ==, cases[i].local);
        cp_args_clear(&a);
    }
}

/* A local directory (or a path ending in '/') gets the guest file's name. */
static void test_cp_local_dest(void)
{
    g_autofree char *dir = g_build_filename(run_base, "cpdir", NULL);
    g_autofree char *in_dir = g_build_filename(dir, "hosts", NULL);
    g_autofree char *file = g_build_filename(run_base, "cpfile", NULL);
    g_autofree char *got = NULL;

    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    got = cp_local_dest(dir, "/etc/hosts");
    g_assert_cmpstr(got, ==, in_dir);
    g_free(got);
    got = cp_local_dest(file, "/etc/hosts");
    g_assert_cmpstr(got, ==, file);
    g_free(got);
    got = cp_local_dest("new/", "/etc/hosts");
    g_assert_cmpstr(got, ==, "new/hosts");
    g_free(got);
    got = cp_local_dest(dir, "/");
    g_assert_cmpstr(got, ==, dir);
    rm_rf(dir);
}

/* A trapped child: `vcluster cp $CP_ARGS`, its exit code on stderr. */
static void G_GNUC_NORETURN cp_child(void)
{
    command_child("CP_ARGS", "vcluster cp", cmd_cp);
}

static void cp_fails(const char *args, int rc, const char *message)
{
    command_fails("CP_ARGS", args, rc, message);
}

/* Usage errors exit 2 before any agent is asked; the rest exit 1. */
static void test_cp_errors(void)
{
    if (g_test_subprocess()) {
        cp_child();
    }
    Cluster *c = cluster_with("eth", 2);

    g_assert_true(cluster_save(c, NULL));
    cp_fails("--name t1 node1:/x", 2, "vcluster cp: usage: *");
    cp_fails("--name t1 a b", 2, "vcluster cp: no node: *");
    cp_fails("--name t1 node7:/x y", 2,
             "vcluster cp: bad node 'node7': cluster 't1' has nodes 0..1");
    cp_fails("--name t1 all:/x y", 2,
             "vcluster cp: 'all': give one node (a number or nodeN)");
    cp_fails("--name nosuch 1:/x y", 1, "*no cluster named 'nosuch'*");
    cp_fails("--name t1 /nonexistent/f 1:/x", 1,
             "vcluster cp: /nonexistent/f: No such file or directory");
    /* no QEMU ever ran: no agent */
    cp_fails("--name t1 1:/x y", 1,
             "vcluster cp: node1: guest agent: cannot connect to *");
    rm_rf(c->dir);
    cluster_free(c);
}

static void G_GNUC_NORETURN up_child(void)
{
    /* no QEMU or image there: nothing boots should a check let args by */
    g_setenv("VCLUSTER_TOP", "/nonexistent", TRUE);
    command_child("UP_ARGS", "vcluster up", cmd_up);
}

/* `vcluster up ARGS` exits with 2 and says `message`, starting nothing. */
static void up_refuses(const char *args, const char *message)
{
    command_fails("UP_ARGS", args, 2, message);
}

static void test_up_telegraphos_errors(void)
{
    if (g_test_subprocess()) {
        up_child();
    }
    up_refuses("--name t2 --fabric telegraphos --mem 1024",
               "vcluster up: --mem 1024: the telegraphos card mirrors at "
               "most 512 MiB of guest memory; use --mem 512 or less with "
               "--fabric telegraphos");
    up_refuses("--name t2 --fabric eth,telegraphos --mem 513",
               "*mirrors at most 512 MiB*");
    up_refuses("--name t2 --fabric tgr",
               "vcluster up: --fabric: fabric kind 'tgr' is not implemented "
               "yet (known kinds: eth, ps1, myrinet, telegraphos)");
    g_autofree char *dir = vc_cluster_dir("t2");

    g_assert_false(g_file_test(dir, G_FILE_TEST_EXISTS));
}

/*
 * `up` refuses what fabricd would refuse (fabric_topology_check), in
 * fabricd's words, before it starts a fabric or a VM.
 */
static void G_GNUC_NORETURN run_child(void)
{
    g_setenv("VCLUSTER_TOP", "/nonexistent", TRUE);
    command_child("RUN_ARGS", "vcluster run", cmd_run);
}

/* Options `run` refuses are said as run's, and leave no run directory. */
static void test_run_errors(void)
{
    g_autofree char *tmp = NULL, *out = NULL, *args = NULL;

    if (g_test_subprocess()) {
        run_child();
    }
    tmp = g_dir_make_tmp("vc-run-XXXXXX", NULL);
    g_assert_nonnull(tmp);
    out = g_build_filename(tmp, "r", NULL);
    args = g_strdup_printf("--name t3 --out %s --icount-shift 2 -- true", out);
    command_fails("RUN_ARGS", args, 2,
                  "vcluster run: --icount-shift needs --lockstep");
    g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
    g_free(args);
    args = g_strdup_printf("--name t3 --out %s --fabric tgr -- true", out);
    command_fails("RUN_ARGS", args, 2,
                  "vcluster run: --fabric: fabric kind 'tgr' is not "
                  "implemented yet (known kinds: eth, ps1, myrinet, "
                  "telegraphos)");
    g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
    g_rmdir(tmp);
}

static void test_up_topology_errors(void)
{
    if (g_test_subprocess()) {
        up_child();
    }
    up_refuses("--name t3 -n 4 --fabric ps1 --topology torus:300x1",
               "vcluster up: --topology torus:300x1: width and height must "
               "be 1..255");
    up_refuses("--name t3 -n 4 --fabric ps1 --topology torus:256x1",
               "vcluster up: --topology torus:256x1: width and height must "
               "be 1..255");
    up_refuses("--name t3 -n 4 --fabric ps1 --topology torus:0x4",
               "vcluster up: --topology torus:0x4: width and height must "
               "be 1..255");
    up_refuses("--name t3 -n 4 --fabric eth,ps1 --topology torus:3x3",
               "vcluster up: --topology torus:3x3 has 9 nodes but --nodes "
               "is 4; W*H must equal the node count");
    /* the launcher's own parser took these; fabricd never did */
    up_refuses("--name t3 -n 4 --fabric ps1 --topology torus:2147483650x2",
               "vcluster up: --topology torus:2147483650x2: width and height "
               "must be 1..255");
    up_refuses("--name t3 -n 4 --fabric ps1 --topology torus:-2x-2",
               "vcluster up: bad --topology 'torus:-2x-2': use ring or "
               "torus:WxH (e.g. torus:3x3)");
    up_refuses("--name t3 -n 4 --fabric ps1 --topology mesh",
               "vcluster up: bad --topology 'mesh': use ring or torus:WxH "
               "(e.g. torus:3x3)");
    /* --topology is ps1's, and checked even without --fabric ps1 */
    up_refuses("--name t3 -n 4 --topology torus:3x3",
               "*W*H must equal the node count");
    up_refuses("--name t3 -n 4 --fabric eth,token-ring",
               "vcluster up: --fabric: fabric kind 'token-ring' is not "
               "implemented yet (known kinds: eth, ps1, myrinet, "
               "telegraphos)");
    up_refuses("--name t3 -n 17 --fabric eth,myrinet",
               "vcluster up: 17 nodes need more than the 16 ports of the "
               "default switch*and give it with --myrinet-topology FILE");
    g_autofree char *dir = vc_cluster_dir("t3");

    g_assert_false(g_file_test(dir, G_FILE_TEST_EXISTS));
}

int main(int argc, char **argv)
{
    int rc;

    g_test_init(&argc, &argv, NULL);
    /* A trapped child works in its parent's run directory. */
    run_base = g_test_subprocess() ? g_strdup(g_getenv("VCLUSTER_RUNDIR"))
                                   : g_dir_make_tmp("vcluster-XXXXXX", NULL);
    g_assert_nonnull(run_base);
    g_setenv("VCLUSTER_RUNDIR", run_base, TRUE);
    g_assert_cmpstr(vc_run_base(), ==, run_base);
    g_test_add_func("/vcluster/myrinet/device-args", test_device_args);
    g_test_add_func("/vcluster/myrinet/libvirt-xml", test_libvirt_xml);
    g_test_add_func("/vcluster/myrinet/routes-default", test_routes_default);
    g_test_add_func("/vcluster/myrinet/routes-file", test_routes_file);
    g_test_add_func("/vcluster/reboot/errors", test_reboot_errors);
    g_test_add_func("/vcluster/telegraphos/device-args",
                    test_telegraphos_args);
    g_test_add_func("/vcluster/telegraphos/mirror", test_telegraphos_mirror);
    g_test_add_func("/vcluster/telegraphos/up-errors",
                    test_up_telegraphos_errors);
    g_test_add_func("/vcluster/topology/up-errors", test_up_topology_errors);
    g_test_add_func("/vcluster/run/errors", test_run_errors);
    g_test_add_func("/vcluster/cp/split", test_cp_split);
    g_test_add_func("/vcluster/cp/parse", test_cp_parse);
    g_test_add_func("/vcluster/cp/local-dest", test_cp_local_dest);
    g_test_add_func("/vcluster/cp/errors", test_cp_errors);
    rc = g_test_run();
    rm_rf(run_base);
    g_free(run_base);
    return rc;
}
