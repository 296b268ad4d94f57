/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QEMU of one node: start and stop in direct mode, and whether it runs
 * in either mode (libvirt.c starts and asks libvirt's domains).  The
 * arguments both modes give QEMU are node_args.c's.
 */
#include "vcluster.h"

#include <errno.h>
#include <string.h>

#define ADD(...) g_ptr_array_add(a, g_strdup_printf(__VA_ARGS__))

gboolean node_start_direct(Cluster *c, const VcPaths *p, int node,
                           GError **err)
{
    g_autofree char *pidfile = cluster_node_file(c, node, "qemu.pid");
    g_autofree char *name = cluster_domain_name(c, node);
    g_autofree char *cmdline = node_kernel_cmdline(c, node);
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    gboolean kvm = g_strcmp0(c->accel, "kvm") == 0;

    ADD("%s", p->qemu);
    ADD("-name");
    ADD("%s", name);
    ADD("-machine");
    ADD("pc,accel=%s", c->accel);
    ADD("-cpu");
    ADD("%s", kvm ? "host" : "qemu64");
    ADD("-m");
    ADD("%d", c->mem_mb);
    ADD("-nodefaults");
    ADD("-no-user-config");
    ADD("-display");
    ADD("none");
    ADD("-kernel");
    ADD("%s", p->kernel);
    ADD("-initrd");
    ADD("%s", p->initrd);
    ADD("-append");
    ADD("%s", cmdline);
    GPtrArray *dev = node_device_args(c, p, node);
    for (guint i = 0; i < dev->len; i++) {
        g_ptr_array_add(a, g_strdup(dev->pdata[i]));
    }
    g_ptr_array_free(dev, TRUE);
    ADD("-pidfile");
    ADD("%s", pidfile);
    ADD("-daemonize");
    g_ptr_array_add(a, NULL);

    /* With -daemonize QEMU returns once the machine is set up, or fails. */
    g_autofree char *errout = NULL;
    int status = 0;
    gboolean ok = g_spawn_sync(NULL, (char **)a->pdata, NULL,
                               G_SPAWN_STDOUT_TO_DEV_NULL |
                               G_SPAWN_STDIN_FROM_DEV_NULL,
                               NULL, NULL, NULL, &errout, &status, err);
    g_ptr_array_free(a, TRUE);
    if (!ok) {
        return FALSE;
    }
    if (!g_spawn_check_wait_status(status, NULL)) {
        g_set_error(err, VC_ERROR, 0, "QEMU failed to start: %s",
                    g_strstrip(errout));
        return FALSE;
    }
    pid_t pid = proc_read_pidfile(pidfile);
    g_autofree char *group = g_strdup_printf("node%d", node);
    g_key_file_set_integer(c->state, group, "pid", pid);
    return TRUE;
}

static pid_t node_pid(Cluster *c, int node)
{
    g_autofree char *group = g_strdup_printf("node%d", node);
    return (pid_t)g_key_file_get_integer(c->state, group, "pid", NULL);
}

/* Ask QEMU to quit through QMP; signals only if it does not. */
void node_stop_direct(Cluster *c, int node)
{
    pid_t pid = node_pid(c, node);
    if (!proc_alive(pid)) {
        return;
    }
    g_autofree char *qmp_path = cluster_node_file(c, node, "qmp.sock");
    JsonChan *qmp = qmp_open(qmp_path,
                             g_get_monotonic_time() + 2 * G_USEC_PER_SEC,
                             NULL);
    if (qmp) {
        g_autoptr(JsonNode) ret = jsonchan_call(
            qmp, "quit", NULL, g_get_monotonic_time() + 2 * G_USEC_PER_SEC,
            NULL);
        jsonchan_close(qmp);
        for (int waited = 0; waited < 5000 && proc_alive(pid); waited += 20) {
            vc_sleep_ms(20);
        }
    }
    if (!proc_stop(pid, 3000)) {
        g_printerr("vcluster: QEMU of node%d (pid %d) did not stop\n", node,
                   (int)pid);
    }
}

gboolean node_alive(Cluster *c, int node)
{
    if (c->mode == VC_MODE_LIBVIRT) {
        g_autofree char *state = libvirt_node_state(c, node);
        return g_strcmp0(state, "running") == 0;
    }
    return proc_alive(node_pid(c, node));
}

const char *node_state(Cluster *c, int node)
{
    return node_alive(c, node) ? "running" : "stopped";
}
