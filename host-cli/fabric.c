/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fabricd instances of a cluster: one per fabric kind. */
#include "vcluster.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

gboolean cluster_has_fabric(Cluster *c, const char *kind)
{
    return c->fabrics && g_strv_contains((const char *const *)c->fabrics,
                                         kind);
}

gboolean telegraphos_mirror_mb(int mem_mb, int max_mb, int *mirror_mb,
                               GError **err)
{
    int mb = TGR_MIRROR_DEFAULT_MB;

    *mirror_mb = 0;
    if (mem_mb <= TGR_MIRROR_DEFAULT_MB) {
        return TRUE;
    }
    while (mb < mem_mb) {
        mb *= 2;
    }
    if (mb > max_mb) {
        g_set_error(err, VC_ERROR, EINVAL,
                    "--mem %d: the telegraphos card mirrors at most %d MiB "
                    "of guest memory; use --mem %d or less with --fabric "
                    "telegraphos", mem_mb, max_mb, max_mb);
        return FALSE;
    }
    *mirror_mb = mb;
    return TRUE;
}

char *cluster_fabric_ctl_socket(Cluster *c, const char *kind)
{
    g_autofree char *dir = cluster_fabric_dir(c, kind);
    return g_build_filename(dir, "ctl.sock", NULL);
}

static char *cluster_fabric_group(const char *kind)
{
    return g_strdup_printf("fabric.%s", kind);
}

static pid_t cluster_fabric_pid(Cluster *c, const char *kind)
{
    g_autofree char *group = cluster_fabric_group(kind);
    return (pid_t)g_key_file_get_integer(c->state, group, "pid", NULL);
}

gboolean cluster_fabric_alive(Cluster *c, const char *kind)
{
    return proc_alive(cluster_fabric_pid(c, kind));
}

gboolean cluster_fabric_start(Cluster *c, const VcPaths *p,
                              const char *kind, GError **err)
{
    g_autofree char *dir = cluster_fabric_dir(c, kind);
    g_autofree char *log = g_build_filename(dir, "fabricd.log", NULL);
    g_autofree char *ctl = cluster_fabric_ctl_socket(c, kind);
    g_autofree char *nodes = g_strdup_printf("%d", c->nodes);
    g_autofree char *group = cluster_fabric_group(kind);

    if (g_mkdir_with_parents(dir, 0755) < 0) {
        g_set_error(err, VC_ERROR, errno, "mkdir %s: %s", dir,
                    g_strerror(errno));
        return FALSE;
    }
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, p->fabricd);
    g_ptr_array_add(argv, "--kind");
    g_ptr_array_add(argv, (char *)kind);
    g_ptr_array_add(argv, "--nodes");
    g_ptr_array_add(argv, nodes);
    g_ptr_array_add(argv, "--dir");
    g_ptr_array_add(argv, dir);
    if (g_strcmp0(kind, "ps1") == 0) {
        g_ptr_array_add(argv, "--topology");
        g_ptr_array_add(argv, c->topology ? c->topology : "ring");
    }
    if (g_strcmp0(kind, "myrinet") == 0 && c->myri_topology) {
        g_ptr_array_add(argv, "--topology");
        g_ptr_array_add(argv, c->myri_topology);
    }
    g_autofree char *quantum = NULL, *trace = NULL;
    if (c->icount_shift >= 0) {
        g_ptr_array_add(argv, "--lockstep");
        if (c->quantum_ns >= 0) {
            quantum = g_strdup_printf("%" G_GINT64_FORMAT, c->quantum_ns);
            g_ptr_array_add(argv, "--lockstep-quantum");
            g_ptr_array_add(argv, quantum);
        }
    }
    if (c->seed && *c->seed) {
        g_ptr_array_add(argv, "--seed");
        g_ptr_array_add(argv, c->seed);
    }
    if (c->faults) {
        g_ptr_array_add(argv, "--faults");
        g_ptr_array_add(argv, c->faults);
    }
    /* `vcluster run`: every fabric's frames, from the start */
    if (c->run_dir) {
        trace = run_trace_path(c->run_dir, kind);
        g_ptr_array_add(argv, "--capture");
        g_ptr_array_add(argv, trace);
    }
    g_ptr_array_add(argv, NULL);
    pid_t pid = proc_spawn_daemon((char **)argv->pdata, log, err);
    g_ptr_array_free(argv, TRUE);
    if (pid < 0) {
        return FALSE;
    }
    g_key_file_set_integer(c->state, group, "pid", pid);
    g_key_file_set_string(c->state, group, "dir", dir);

    /* fabricd creates ctl.sock last: once it answers, every socket is up. */
    for (int waited = 0; waited < 10000; waited += 20) {
        JsonChan *probe = jsonchan_connect(ctl, NULL);
        if (probe) {
            jsonchan_close(probe);
            return TRUE;
        }
        if (!proc_alive(pid)) {
            break;
        }
        vc_sleep_ms(20);
    }
    g_autofree char *tail = file_tail(log, 10);
    g_set_error(err, VC_ERROR, 0, "fabricd (%s) did not start:\n%s", kind,
                tail);
    proc_stop(pid, 1000);
    return FALSE;
}

void cluster_fabric_stop(Cluster *c, const char *kind)
{
    pid_t pid = cluster_fabric_pid(c, kind);
    if (pid > 0 && !proc_stop(pid, 3000)) {
        g_printerr("vcluster: fabricd %s (pid %d) did not stop\n", kind,
                   (int)pid);
    }
}
