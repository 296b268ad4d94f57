/*
 * fabricd: the host side of one vcluster fabric.  Each node's QEMU connects
 * to DIR/node<i>.sock; fabricd switches frames between them, applies fault
 * rules, counts, captures, and answers commands on DIR/ctl.sock.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "commands.h"
#include "control.h"
#include "fabric.h"
#include "proto/base.h"
#include "sock.h"
#include "vcluster/fabric/topology.h"

#define EXIT_USAGE 2

typedef struct Options {
    char *kind;
    int nodes;
    char *dir;
    char *seed;
    char *capture;
    char *faults;
    char *topology;
    gint64 hop_ns;
    gint64 link_mbps;
    gint64 ctl_idle_ms;
    gboolean lockstep;
    gint64 quantum_ns;
} Options;

static void G_GNUC_NORETURN usage_error(const char *fmt, ...)
    G_GNUC_PRINTF(1, 2);

static void usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("fabricd: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(EXIT_USAGE);
}

/* Decimal, or hex with a 0x prefix; the whole string must be a number. */
static bool parse_seed(const char *text, uint64_t *seed)
{
    bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const char *digits = hex ? text + 2 : text;
    guint64 v;

    if (!g_ascii_isxdigit(digits[0]) ||
        !g_ascii_string_to_unsigned(digits, hex ? 16 : 10, 0, G_MAXUINT64,
                                    &v, NULL)) {
        return false;
    }
    *seed = v;
    return true;
}

static uint64_t random_seed(void)
{
    uint64_t seed;
    FILE *f = fopen("/dev/urandom", "rbe");

    if (f && fread(&seed, sizeof(seed), 1, f) == 1) {
        fclose(f);
        return seed;
    }
    if (f) {
        fclose(f);
    }
    return (uint64_t)g_random_int() << 32 | g_random_int();
}

static const FabricKind *choose_kind(const char *name)
{
    const FabricKind *kind = fabric_kind_find(name);
    g_autoptr(GError) err = NULL;

    if (kind) {
        return kind;
    }
    /* says which kinds there are, in the words the launcher uses too */
    fabric_topology_check(name, 1, NULL, &err);
    usage_error("%s", err->message);
}

static void parse_options(int argc, char **argv, Options *o)
{
    GOptionEntry entries[] = {
        { "kind", 'k', 0, G_OPTION_ARG_STRING, &o->kind,
          "Fabric kind (eth, ps1, myrinet or telegraphos)", "KIND" },
        { "nodes", 'n', 0, G_OPTION_ARG_INT, &o->nodes,
          "Number of nodes, 1..1024", "N" },
        { "dir", 'd', 0, G_OPTION_ARG_FILENAME, &o->dir,
          "Run directory for node<i>.sock and ctl.sock", "DIR" },
        { "seed", 's', 0, G_OPTION_ARG_STRING, &o->seed,
          "Seed for fault decisions, decimal or 0x hex (default: random)",
          "S" },
        { "capture", 'c', 0, G_OPTION_ARG_FILENAME, &o->capture,
          "Record delivered frames to a pcapng file from the start", "FILE" },
        { "faults", 'f', 0, G_OPTION_ARG_FILENAME, &o->faults,
          "Fault rules to apply from the start, one a line", "FILE" },
        { "topology", 't', 0, G_OPTION_ARG_STRING, &o->topology,
          "ps1: ring (default) or torus:WxH with W*H = N; myrinet: a "
          "switch file (default: one 16-port switch)", "TOPO" },
        { "hop-ns", 0, 0, G_OPTION_ARG_INT64, &o->hop_ns,
          "ps1, myrinet, telegraphos, eth with --lockstep: delay per hop "
          "in ns (default 250, 300, 250, 5000)", "NS" },
        { "link-mbps", 0, 0, G_OPTION_ARG_INT64, &o->link_mbps,
          "ps1, myrinet, telegraphos, eth with --lockstep: link rate in "
          "megabytes per second (default 20, 250, 100, 125)", "MBPS" },
        { "ctl-idle-ms", 0, 0, G_OPTION_ARG_INT64, &o->ctl_idle_ms,
          "Close a control client idle this long (default 30000)", "MS" },
        { "lockstep", 0, 0, G_OPTION_ARG_NONE, &o->lockstep,
          "Keep the nodes' virtual clocks in step (every kind; "
          "docs/lockstep.md)", NULL },
        { "lockstep-quantum", 0, 0, G_OPTION_ARG_INT64, &o->quantum_ns,
          "Lock-step: length of a round while the fabric is quiet "
          "(default 1000000; 0: always one hop)", "NS" },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("- vcluster fabric daemon");
    g_autoptr(GError) err = NULL;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "Examples: fabricd --kind eth --nodes 4 --dir /run/vcluster/eth0\n"
        "          fabricd --kind ps1 --nodes 9 --topology torus:3x3 "
        "--dir DIR\n"
        "          fabricd --kind myrinet --nodes 24 --topology switches.ini "
        "--dir DIR\n"
        "          fabricd --kind telegraphos --nodes 4 --dir DIR\n"
        "Control it with fabricctl -d DIR help.\n");
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        usage_error("%s (see fabricd --help)", err->message);
    }
    if (argc > 1) {
        usage_error("unexpected argument '%s' (see fabricd --help)", argv[1]);
    }
    if (!o->kind) {
        usage_error("missing --kind (use --kind eth, ps1, myrinet or "
                    "telegraphos)");
    }
    if (o->nodes == -1) {
        usage_error("missing --nodes (e.g. --nodes 4)");
    }
    if (o->nodes < 1 || o->nodes > FABRIC_MAX_NODES) {
        usage_error("--nodes %d is out of range; use 1..%d", o->nodes,
                    FABRIC_MAX_NODES);
    }
    if (!o->dir || !*o->dir) {
        usage_error("missing --dir (the directory for the sockets)");
    }
    if (o->quantum_ns != -1 && !o->lockstep) {
        usage_error("--lockstep-quantum needs --lockstep");
    }
    if (o->quantum_ns < -1 || o->quantum_ns > (gint64)LOCKSTEP_QUANTUM_MAX_NS) {
        usage_error("--lockstep-quantum %" G_GINT64_FORMAT " is out of range; "
                    "use 0..%llu ns", o->quantum_ns,
                    (unsigned long long)LOCKSTEP_QUANTUM_MAX_NS);
    }
    if (o->ctl_idle_ms != -1 && (o->ctl_idle_ms < CONTROL_IDLE_MS_MIN ||
                                 o->ctl_idle_ms > CONTROL_IDLE_MS_MAX)) {
        usage_error("--ctl-idle-ms %" G_GINT64_FORMAT " is out of range; "
                    "use %d..%d", o->ctl_idle_ms, CONTROL_IDLE_MS_MIN,
                    CONTROL_IDLE_MS_MAX);
    }
}

/* Refuse to steal the sockets of a fabricd that is still running. */
static void check_not_running(const char *ctl_path)
{
    int fd = unix_connect(ctl_path, NULL);

    if (fd >= 0) {
        close(fd);
        usage_error("%s answers: another fabricd is running in this "
                    "directory; stop it or use another --dir", ctl_path);
    }
}

static void check_socket_paths(const Fabric *f)
{
    g_autoptr(GError) err = NULL;

    /* The highest-numbered node has the longest path. */
    if (!unix_path_check(f->ports[f->nodes - 1].path, &err) ||
        !unix_path_check(f->ctl_path, &err)) {
        usage_error("%s", err->message);
    }
}

static gboolean on_signal(gpointer loop)
{
    g_main_loop_quit(loop);
    return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
    Options o = { .nodes = -1, .hop_ns = -1, .link_mbps = -1,
                  .ctl_idle_ms = -1, .quantum_ns = -1 };
    FabricKindOptions kopts;
    g_autoptr(GError) err = NULL;
    const FabricKind *kind;
    uint64_t seed;
    Fabric *f;
    Control *ctl;
    GMainLoop *loop;

    parse_options(argc, argv, &o);
    kind = choose_kind(o.kind);
    if (o.seed) {
        if (!parse_seed(o.seed, &seed)) {
            usage_error("bad --seed '%s': use a decimal number or 0x hex",
                        o.seed);
        }
    } else {
        seed = random_seed();
    }

    signal(SIGPIPE, SIG_IGN);
    kopts = (FabricKindOptions) {
        .topology = o.topology, .hop_ns = o.hop_ns, .link_mbps = o.link_mbps,
        .lockstep = o.lockstep,
    };
    if (o.hop_ns < -1 || o.link_mbps < -1) {
        usage_error("--%s %" G_GINT64_FORMAT " is negative",
                    o.hop_ns < -1 ? "hop-ns" : "link-mbps",
                    o.hop_ns < -1 ? o.hop_ns : o.link_mbps);
    }
    f = fabric_new(kind, o.nodes, seed, o.dir, &kopts, &err);
    if (!f) {
        usage_error("%s", err->message);
    }
    if (o.lockstep &&
        !fabric_start_lockstep(f, o.quantum_ns == -1 ?
                               LOCKSTEP_QUANTUM_DEFAULT_NS
                               : (uint64_t)o.quantum_ns,
                               &err)) {
        fabric_free(f);
        usage_error("%s", err->message);
    }
    if (o.faults) {
        g_autoptr(GString) ids = g_string_new(NULL);

        if (!fabric_faults_load(f, o.faults, ids, &err)) {
            usage_error("%s", err->message);
        }
    }
    check_socket_paths(f);
    if (g_mkdir_with_parents(o.dir, 0700) < 0) {
        usage_error("cannot create --dir %s: %s", o.dir, g_strerror(errno));
    }
    check_not_running(f->ctl_path);
    if (o.capture && !fabric_capture_start(f, o.capture, &err)) {
        usage_error("%s", err->message);
    }
    if (!fabric_ports_listen(f, &err)) {
        fprintf(stderr, "fabricd: %s\n", err->message);
        fabric_free(f);
        return EXIT_USAGE;
    }
    ctl = control_new(f, f->ctl_path, o.ctl_idle_ms == -1 ? CONTROL_IDLE_MS
                      : (unsigned)o.ctl_idle_ms, &err);
    if (!ctl) {
        fprintf(stderr, "fabricd: %s\n", err->message);
        fabric_free(f);
        return EXIT_USAGE;
    }
    /* before the banner: whoever saw it may stop fabricd at once */
    loop = g_main_loop_new(NULL, FALSE);
    g_unix_signal_add(SIGTERM, on_signal, loop);
    g_unix_signal_add(SIGINT, on_signal, loop);
    printf("fabricd: kind=%s nodes=%d seed=0x%016llx dir=%s%s\n", kind->name,
           o.nodes, (unsigned long long)seed, o.dir,
           o.lockstep ? " lockstep" : "");
    fflush(stdout);
    g_main_loop_run(loop);

    control_free(ctl);
    fabric_free(f);
    g_main_loop_unref(loop);
    g_free(o.kind);
    g_free(o.dir);
    g_free(o.seed);
    g_free(o.capture);
    g_free(o.faults);
    g_free(o.topology);
    return 0;
}
