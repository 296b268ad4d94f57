/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vcluster up / down. */
#include "vcluster.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vcluster/fabric/topology.h"

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    interrupted = sig;
}

void rm_rf(const char *path)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR) &&
        !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
        g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
        const char *e;
        while (d && (e = g_dir_read_name(d))) {
            g_autofree char *child = g_build_filename(path, e, NULL);
            rm_rf(child);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Stop every node and fabric this cluster may have, then drop its run dir. */
void cluster_teardown(Cluster *c)
{
    for (int i = 0; i < c->nodes; i++) {
        if (c->mode == VC_MODE_LIBVIRT) {
            libvirt_remove_node(c, i);
        } else {
            node_stop_direct(c, i);
        }
    }
    for (int f = 0; c->fabrics && c->fabrics[f]; f++) {
        cluster_fabric_stop(c, c->fabrics[f]);
    }
    rm_rf(c->dir);
}

static gboolean cluster_has_live_parts(Cluster *c)
{
    for (int i = 0; i < c->nodes; i++) {
        if (node_alive(c, i)) {
            return TRUE;
        }
    }
    for (int f = 0; c->fabrics[f]; f++) {
        if (cluster_fabric_alive(c, c->fabrics[f])) {
            return TRUE;
        }
    }
    return FALSE;
}

static void report_boot_failure(Cluster *c, int node, const char *failure,
                                const char *why)
{
    g_autofree char *log = cluster_node_file(c, node, "serial.log");
    g_autofree char *tail = file_tail(log, 20);
    g_printerr("vcluster: node%d %s: %s\n"
               "--- last lines of %s ---\n%s\n---\n", node, failure, why, log,
               tail);
}

typedef struct {
    int node;
    JsonChan *ch;
    gint64 sync_id;
    gint64 last_sync_us;
    gint64 last_alive_us;
    gboolean up;
} BootWait;

gboolean wait_for_agents(Cluster *c, GArray *nodes, gint64 start_us,
                         int timeout_s, const AgentWait *how)
{
    guint n = nodes->len;
    BootWait *w = g_new0(BootWait, n);
    guint up = 0;
    gint64 deadline = start_us + (gint64)timeout_s * G_USEC_PER_SEC;
    gboolean ok = TRUE;

    for (guint j = 0; j < n; j++) {
        w[j].node = g_array_index(nodes, int, j);
    }
    while (up < n) {
        if (interrupted) {
            g_printerr("vcluster: interrupted; cleaning up\n");
            ok = FALSE;
            break;
        }
        if (g_get_monotonic_time() > deadline) {
            for (guint j = 0; j < n; j++) {
                if (!w[j].up) {
                    g_autofree char *why = g_strdup_printf(
                        "guest agent silent after %d s", timeout_s);
                    report_boot_failure(c, w[j].node, how->failure, why);
                }
            }
            ok = FALSE;
            break;
        }
        for (guint j = 0; j < n && ok; j++) {
            BootWait *b = &w[j];
            if (b->up) {
                continue;
            }
            gint64 now = g_get_monotonic_time();
            /* Once a second: in libvirt mode each check runs virsh. */
            if (now - b->last_alive_us > G_USEC_PER_SEC) {
                b->last_alive_us = now;
                if (!node_alive(c, b->node)) {
                    report_boot_failure(c, b->node, how->failure,
                                        "QEMU exited");
                    ok = FALSE;
                    break;
                }
            }
            if (!b->ch) {
                g_autofree char *sock = cluster_node_file(c, b->node,
                                                          "qga.sock");
                b->ch = jsonchan_connect(sock, NULL);
                b->sync_id = g_random_int_range(1, G_MAXINT32);
                b->last_sync_us = 0;
                if (!b->ch) {
                    continue;
                }
            }
            /* Resend now and then: a sync sent before the agent ran is lost. */
            if (now - b->last_sync_us > 2 * G_USEC_PER_SEC) {
                if (!agent_send_sync(b->ch, b->sync_id, NULL)) {
                    g_clear_pointer(&b->ch, jsonchan_close);
                    continue;
                }
                b->last_sync_us = now;
            }
            g_autoptr(GError) err = NULL;
            if (agent_wait_sync(b->ch, b->sync_id, now + 20000, &err)) {
                /* Not yet the boot we wait for: ask again at the next sync. */
                if (how->ready && !how->ready(b->ch, b->node, how->opaque)) {
                    continue;
                }
                b->up = TRUE;
                up++;
                g_print("node%d: %s in %.1f s", b->node, how->verb,
                        (g_get_monotonic_time() - start_us) / 1e6);
                if (how->show_address) {
                    g_autofree char *ip = cluster_node_ip(b->node);
                    g_print(" (%s)", ip);
                }
                g_print("\n");
                fflush(stdout);
            } else if (err && err->code != ETIMEDOUT) {
                g_clear_pointer(&b->ch, jsonchan_close);
            }
        }
        if (!ok) {
            break;
        }
        vc_sleep_ms(50);
    }
    for (guint j = 0; j < n; j++) {
        jsonchan_close(w[j].ch);
    }
    g_free(w);
    return ok;
}

/* A kind or topology fabricd would refuse (topology.h), for `vcluster CMD`. */
static void up_topology_error(const char *cmd, const char *kind,
                              const char *myri_topology, const GError *err)
{
    if (g_error_matches(err, FABRIC_TOPOLOGY_ERROR,
                        FABRIC_TOPOLOGY_ERROR_KIND)) {
        g_printerr("vcluster %s: --fabric: %s\n", cmd, err->message);
    } else if (g_strcmp0(kind, "myrinet") == 0 && !myri_topology) {
        g_printerr("vcluster %s: %s and give it with --myrinet-topology "
                   "FILE\n", cmd, err->message);
    } else {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
    }
}

/* Lock-step's options, for `vcluster CMD`; fills the default shift. */
static gboolean lockstep_options_check(const UpOptions *o, const char *cmd,
                                       int *icount_shift)
{
    gboolean lockstep = o->lockstep;
    const char *accel = o->accel;

    if (!lockstep) {
        if (*icount_shift != -1 || o->quantum_ns != -1) {
            g_printerr("vcluster %s: --%s needs --lockstep\n", cmd,
                       *icount_shift != -1 ? "icount-shift"
                                           : "lockstep-quantum");
            return FALSE;
        }
        return TRUE;
    }
    if (o->quantum_ns < -1 || o->quantum_ns > VC_LOCKSTEP_QUANTUM_MAX_NS) {
        g_printerr("vcluster %s: --lockstep-quantum %" G_GINT64_FORMAT
                   ": use 0 to %lld ns\n", cmd, o->quantum_ns,
                   (long long)VC_LOCKSTEP_QUANTUM_MAX_NS);
        return FALSE;
    }
    if (*icount_shift == -1) {
        *icount_shift = VC_ICOUNT_SHIFT_DEFAULT;
    }
    if (*icount_shift < 0 || *icount_shift > VC_ICOUNT_SHIFT_MAX) {
        g_printerr("vcluster %s: --icount-shift %d: use 0 to %d (2^N ns an "
                   "instruction)\n", cmd, *icount_shift, VC_ICOUNT_SHIFT_MAX);
        return FALSE;
    }
    if (accel && g_strcmp0(accel, "tcg") != 0 && g_strcmp0(accel, "auto")) {
        g_printerr("vcluster %s: --lockstep runs under TCG (instruction "
                   "counting); --accel %s cannot\n", cmd, accel);
        return FALSE;
    }
    return TRUE;
}

/* `up`'s and `run`'s options shared by both: what a cluster is made of. */
void up_option_entries(UpOptions *o, GOptionContext *ctx)
{
    GOptionEntry entries[] = {
        { "nodes", 'n', 0, G_OPTION_ARG_INT, &o->nodes,
          "number of VMs (1-64)", "N" },
        { "fabric", 0, 0, G_OPTION_ARG_STRING, &o->fabric,
          "fabric kinds, comma separated: eth, ps1, myrinet, telegraphos "
          "(default eth)", "KINDS" },
        { "topology", 0, 0, G_OPTION_ARG_STRING, &o->topology,
          "ps1 fabric: ring (default) or torus:WxH", "TOPO" },
        { "myrinet-topology", 0, 0, G_OPTION_ARG_FILENAME, &o->myri_topology,
          "myrinet fabric: switch file (default: one 16-port switch)",
          "FILE" },
        { "mem", 0, 0, G_OPTION_ARG_INT, &o->mem, "memory per VM in MiB",
          "MB" },
        { "accel", 0, 0, G_OPTION_ARG_STRING, &o->accel,
          "auto (default), tcg or kvm", "ACCEL" },
        { "libvirt", 0, 0, G_OPTION_ARG_NONE, &o->use_libvirt,
          "create libvirt domains on qemu:///system", NULL },
        { "name", 0, 0, G_OPTION_ARG_STRING, &o->name,
          "cluster name (default vc)", "NAME" },
        { "timeout", 0, 0, G_OPTION_ARG_INT, &o->timeout,
          "seconds to wait for every guest agent (default 300)", "S" },
        { "lockstep", 0, 0, G_OPTION_ARG_NONE, &o->lockstep,
          "keep the nodes' virtual clocks in step (docs/lockstep.md)", NULL },
        { "icount-shift", 0, 0, G_OPTION_ARG_INT, &o->icount_shift,
          "lock-step: 2^N ns of virtual time per instruction (default 3)",
          "N" },
        { "lockstep-quantum", 0, 0, G_OPTION_ARG_INT64, &o->quantum_ns,
          "lock-step: round length while the fabrics are quiet (default "
          "1000000; 0: always one hop)", "NS" },
        { "seed", 0, 0, G_OPTION_ARG_STRING, &o->seed,
          "seed of every fault decision (default $VCLUSTER_SEED or random)",
          "S" },
        { "faults", 0, 0, G_OPTION_ARG_FILENAME, &o->faults,
          "fault file: rules every fabric loads at start", "FILE" },
        { NULL }
    };

    g_option_context_add_main_entries(ctx, entries, NULL);
}

void up_options_init(UpOptions *o)
{
    *o = (UpOptions){ .nodes = 3, .mem = VC_DEFAULT_MEM_MB,
                      .timeout = VC_BOOT_TIMEOUT_S, .icount_shift = -1,
                      .quantum_ns = -1, .wait_agents = TRUE };
}

void up_options_clear(UpOptions *o)
{
    g_free(o->fabric);
    g_free(o->accel);
    g_free(o->name);
    g_free(o->topology);
    g_free(o->myri_topology);
    g_free(o->seed);
    g_free(o->faults);
    g_free(o->run_dir);
    g_free(o->run_script);
}

int cmd_up(int argc, char **argv)
{
    UpOptions o;
    g_autoptr(GOptionContext) ctx = g_option_context_new("- boot a cluster");
    g_autoptr(GError) err = NULL;
    int rc;

    up_options_init(&o);
    up_option_entries(&o, ctx);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("vcluster up: %s (see: vcluster up --help)\n",
                   err->message);
        up_options_clear(&o);
        return 2;
    }
    if (argc > 1) {
        g_printerr("vcluster up: unexpected argument '%s'\n", argv[1]);
        up_options_clear(&o);
        return 2;
    }
    rc = up_cluster(&o, "up", NULL);
    up_options_clear(&o);
    return rc;
}

/*
 * Make and start the cluster `o` describes; `cmd` names the command in
 * messages.  With o->wait_agents, wait for every guest agent; *out (if not
 * NULL) gets the cluster, which the caller frees.  Returns the exit status.
 */
int up_cluster(const UpOptions *o, const char *cmd, Cluster **out)
{
    int nodes = o->nodes, mem = o->mem, timeout = o->timeout;
    const char *fabric = o->fabric, *accel = o->accel, *name = o->name;
    const char *topology = o->topology, *myri_topology = o->myri_topology;
    gboolean use_libvirt = o->use_libvirt, lockstep = o->lockstep;
    int icount_shift = o->icount_shift;
    g_autoptr(GError) err = NULL;

    if (nodes < 1 || nodes > VC_MAX_NODES) {
        g_printerr("vcluster %s: -n %d: a cluster has 1 to %d nodes\n", cmd, nodes,
                   VC_MAX_NODES);
        return 2;
    }
    if (mem < 64 || mem > 16384) {
        g_printerr("vcluster %s: --mem %d: use 64 to 16384 MiB\n", cmd, mem);
        return 2;
    }
    if (accel && !g_strv_contains((const char *const[]){ "auto", "tcg", "kvm",
                                                          NULL }, accel)) {
        g_printerr("vcluster %s: bad --accel '%s': use auto, tcg or kvm\n", cmd,
                   accel);
        return 2;
    }
    if (timeout < 1) {
        g_printerr("vcluster %s: --timeout must be positive\n", cmd);
        return 2;
    }
    g_auto(GStrv) kinds = g_strsplit(fabric ? fabric : "eth", ",", -1);
    if (!lockstep_options_check(o, cmd, &icount_shift)) {
        return 2;
    }
    gboolean myrinet = g_strv_contains((const char *const *)kinds,
                                       "myrinet");
    gboolean ps1 = g_strv_contains((const char *const *)kinds, "ps1");
    if (myri_topology && !myrinet) {
        g_printerr("vcluster %s: --myrinet-topology needs --fabric "
                   "myrinet\n", cmd);
        return 2;
    }
    /* What fabricd would refuse, refused before anything starts. */
    for (int i = 0; kinds[i]; i++) {
        const char *topo = g_strcmp0(kinds[i], "ps1") == 0 ? topology
                           : g_strcmp0(kinds[i], "myrinet") == 0
                           ? myri_topology : NULL;
        if (!fabric_topology_check(kinds[i], nodes, topo, &err)) {
            up_topology_error(cmd, kinds[i], myri_topology, err);
            return 2;
        }
    }
    /* --topology is the ps1 fabric's; checked even when it goes unused */
    if (topology && !ps1 &&
        !fabric_topology_check("ps1", nodes, topology, &err)) {
        up_topology_error(cmd, "ps1", myri_topology, err);
        return 2;
    }
    int mirror_mb;
    if (g_strv_contains((const char *const *)kinds, "telegraphos") &&
        !telegraphos_mirror_mb(mem, VC_TGR_MAX_MIRROR_MB, &mirror_mb,
                               &err)) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
        return 2;
    }
    g_autofree char *cname = g_strdup(name ? name : VC_DEFAULT_NAME);
    if (!vc_name_valid(cname, &err)) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
        return 2;
    }

    VcPaths paths;
    if (!vc_paths_find(&paths, &err)) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
        vc_paths_clear(&paths);
        return 1;
    }

    if (!vc_cluster_lock(cname, VC_LOCK_TIMEOUT_S, &err)) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
        vc_paths_clear(&paths);
        return 1;
    }
    /* A live cluster of that name is an error; a dead one is cleaned up. */
    Cluster *old = cluster_load(cname, NULL);
    if (old) {
        if (cluster_has_live_parts(old)) {
            g_printerr("vcluster %s: cluster '%s' is already up; "
                       "run: vcluster down --name %s\n", cmd, cname, cname);
            cluster_free(old);
            vc_paths_clear(&paths);
            return 1;
        }
        g_print("vcluster: removing stale state of cluster '%s'\n", cname);
        cluster_teardown(old);
        cluster_free(old);
    }

    Cluster *c = cluster_new(cname);
    c->nodes = nodes;
    c->mem_mb = mem;
    c->mode = use_libvirt ? VC_MODE_LIBVIRT : VC_MODE_DIRECT;
    c->fabrics = g_strdupv(kinds);
    c->topology = g_strdup(topology ? topology : "ring");
    c->icount_shift = icount_shift;
    c->quantum_ns = o->quantum_ns;
    c->seed = g_strdup(o->seed ? o->seed : g_getenv("VCLUSTER_SEED"));
    c->faults = g_strdup(o->faults);
    c->run_dir = g_strdup(o->run_dir);
    g_autofree char *why = NULL;
    c->accel = lockstep ? g_strdup("tcg")
                        : accel_choose(accel ? accel : "auto", &paths, &why,
                                       &err);
    if (lockstep) {
        why = g_strdup_printf("lock-step, -icount shift=%d: %d ns an "
                              "instruction", icount_shift, 1 << icount_shift);
    }
    int rc = 1;
    if (!c->accel) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
        goto out;
    }
    if (use_libvirt && !libvirt_ensure_daemon(&err)) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
        goto out;
    }

    struct sigaction sa = { .sa_handler = on_interrupt };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    gint64 start = g_get_monotonic_time();
    g_print("cluster %s: %d nodes, fabric %s, accel %s (%s), %s\n", cname,
            nodes, fabric ? fabric : "eth", c->accel, why,
            use_libvirt ? "libvirt qemu:///system" : "direct QEMU");
    if (g_mkdir_with_parents(c->dir, 0755) < 0) {
        g_printerr("vcluster %s: mkdir %s: %s\n", cmd, c->dir, g_strerror(errno));
        goto out;
    }
    for (int i = 0; i < nodes; i++) {
        g_autofree char *dir = cluster_node_dir(c, i);
        g_mkdir_with_parents(dir, 0755);
    }
    if (myrinet && !myrinet_prepare(c, myri_topology, &err)) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
        goto fail;
    }
    /* Saved early, so that `down` can clean up whatever got started. */
    cluster_save(c, NULL);

    for (int f = 0; c->fabrics[f]; f++) {
        if (!cluster_fabric_start(c, &paths, c->fabrics[f], &err)) {
            g_printerr("vcluster %s: %s\n", cmd, err->message);
            goto fail;
        }
        cluster_save(c, NULL);
    }
    for (int i = 0; i < nodes && !interrupted; i++) {
        gboolean ok = use_libvirt ? libvirt_start_node(c, &paths, i, &err)
                                  : node_start_direct(c, &paths, i, &err);
        cluster_save(c, NULL);
        if (!ok) {
            g_printerr("vcluster %s: node%d: %s\n", cmd, i, err->message);
            goto fail;
        }
    }
    if (use_libvirt && lockstep && !libvirt_resume_nodes(c, &err)) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
        goto fail;
    }
    if (o->wait_agents) {
        const AgentWait how = { .verb = "up", .show_address = TRUE,
                                .failure = "failed to boot" };
        GArray *all = cluster_parse_nodes(c, "all", NULL);
        gboolean booted = wait_for_agents(c, all, start, timeout, &how);

        g_array_free(all, TRUE);
        if (!booted) {
            goto fail;
        }
        g_print("cluster %s: %d nodes up in %.1f s (accel %s)\n", cname,
                nodes, (g_get_monotonic_time() - start) / 1e6, c->accel);
    }
    rc = 0;
    if (out) {
        *out = c;
        c = NULL;
    }
    goto out;

fail:
    cluster_teardown(c);
    g_printerr("vcluster %s: cluster '%s' stopped and removed\n", cmd, cname);
out:
    cluster_free(c);
    vc_paths_clear(&paths);
    return interrupted && rc ? 130 : rc;
}

int cmd_down(int argc, char **argv)
{
    g_autofree char *name = NULL;
    gboolean all = FALSE;
    GOptionEntry entries[] = {
        { "name", 0, 0, G_OPTION_ARG_STRING, &name, "cluster name", "NAME" },
        { "all", 0, 0, G_OPTION_ARG_NONE, &all, "every cluster", NULL },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("- stop a cluster and remove its run directory");
    g_autoptr(GError) err = NULL;
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("vcluster down: %s\n", err->message);
        return 2;
    }
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    if (all) {
        g_autoptr(GDir) d = g_dir_open(vc_run_base(), 0, NULL);
        const char *e;
        while (d && (e = g_dir_read_name(d))) {
            g_ptr_array_add(names, g_strdup(e));
        }
    } else {
        g_ptr_array_add(names, cluster_default_name(name));
    }
    int rc = 0;
    for (guint i = 0; i < names->len; i++) {
        if (((char *)names->pdata[i])[0] == '.') {
            continue;   /* a cluster's lock, not a cluster */
        }
        if (!vc_cluster_lock(names->pdata[i], VC_LOCK_TIMEOUT_S, &err)) {
            g_printerr("vcluster down: %s\n", err->message);
            g_clear_error(&err);
            rc = 1;
            continue;
        }
        Cluster *c = cluster_load(names->pdata[i], &err);
        if (!c) {
            g_printerr("vcluster down: %s\n", err->message);
            g_clear_error(&err);
            rc = 1;
            continue;
        }
        gint64 start = g_get_monotonic_time();
        cluster_teardown(c);
        g_print("cluster %s: down in %.1f s\n", c->name,
                (g_get_monotonic_time() - start) / 1e6);
        cluster_free(c);
    }
    return rc;
}
