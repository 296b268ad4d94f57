/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vcluster reboot: a hardware reset of nodes, then wait for their new boot. */
#include "vcluster.h"

#include <string.h>

#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
/* Before the reset: a hung guest must not hold the reboot up for long. */
#define OLD_BOOT_ID_TIMEOUT_US (5 * G_USEC_PER_SEC)
#define BOOT_ID_TIMEOUT_US (10 * G_USEC_PER_SEC)
#define RESET_TIMEOUT_US (10 * G_USEC_PER_SEC)

/* The guest kernel's random boot id: a new one at every boot. */
static char *read_boot_id(JsonChan *agent, gint64 deadline_us, GError **err)
{
    char *argv[] = { "/bin/sh", "-c", "cat " BOOT_ID_PATH, NULL };
    AgentExecResult res = { 0 };
    char *id = NULL;

    if (!agent_exec_wait(agent, argv, deadline_us, &res, err)) {
        return NULL;
    }
    gsize len;
    const char *out = g_bytes_get_data(res.out, &len);
    if (res.exitcode == 0 && len > 0) {
        id = g_strstrip(g_strndup(out, len));
    } else {
        g_set_error(err, VC_ERROR, 0, "cannot read %s (exit %d)",
                    BOOT_ID_PATH, res.exitcode);
    }
    agent_exec_result_clear(&res);
    return id;
}

static char *read_boot_id_before_reset(Cluster *c, int node)
{
    g_autofree char *sock = cluster_node_file(c, node, "qga.sock");
    g_autoptr(GError) err = NULL;
    gint64 deadline = g_get_monotonic_time() + OLD_BOOT_ID_TIMEOUT_US;
    JsonChan *agent = agent_open(sock, deadline, &err);
    char *id = agent ? read_boot_id(agent, deadline, &err) : NULL;

    jsonchan_close(agent);
    if (!id) {
        g_printerr("vcluster reboot: node%d: no boot id before the reset "
                   "(%s); the first agent to answer after it counts\n", node,
                   err->message);
    }
    return id;
}

/* AgentWait.ready: the agent runs in a kernel booted after the reset. */
static gboolean is_new_boot(JsonChan *agent, int node, gpointer old_ids)
{
    const char *old_id = ((char **)old_ids)[node];
    g_autofree char *id = read_boot_id(
        agent, g_get_monotonic_time() + BOOT_ID_TIMEOUT_US, NULL);

    return id && g_strcmp0(id, old_id) != 0;
}

/*
 * Reset the node's machine and wait for QEMU's RESET event, which our own
 * QMP monitor hears in both modes (libvirt resets through its monitor).
 */
static gboolean reset_node(Cluster *c, int node, GError **err)
{
    static const char *const events[] = { "RESET", "SHUTDOWN", NULL };
    g_autofree char *path = cluster_node_file(c, node, "qmp.sock");
    gint64 deadline = g_get_monotonic_time() + RESET_TIMEOUT_US;
    JsonChan *qmp = qmp_open(path, deadline, err);
    gboolean ok;

    if (!qmp) {
        return FALSE;
    }
    if (c->mode == VC_MODE_LIBVIRT) {
        ok = libvirt_reset_node(c, node, err);
    } else {
        /* QEMU sends the reply before it resets: the event stays unread. */
        g_autoptr(JsonNode) ret = jsonchan_call(qmp, "system_reset", NULL,
                                                deadline, err);
        ok = ret != NULL;
    }
    if (ok) {
        g_autofree char *event = qmp_wait_event(qmp, events, deadline, err);
        if (!event) {
            g_prefix_error(err, "no RESET event from QEMU: ");
            ok = FALSE;
        } else if (strcmp(event, "SHUTDOWN") == 0) {
            g_set_error(err, VC_ERROR, 0,
                        "QEMU shut the machine down instead of resetting it");
            ok = FALSE;
        }
    }
    jsonchan_close(qmp);
    return ok;
}

int cmd_reboot(int argc, char **argv)
{
    g_autofree char *name = NULL;
    gboolean no_wait = FALSE;
    int timeout = VC_BOOT_TIMEOUT_S;
    GOptionEntry entries[] = {
        { "name", 0, 0, G_OPTION_ARG_STRING, &name, "cluster name", "NAME" },
        { "no-wait", 0, 0, G_OPTION_ARG_NONE, &no_wait,
          "return once QEMU has reset the machine", NULL },
        { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout,
          "seconds to wait for the guest agents (default 300)", "S" },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new(
        "NODE|all - reset nodes and wait until they have booted again");
    g_autoptr(GError) err = NULL;
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("vcluster reboot: %s\n", err->message);
        return 2;
    }
    if (argc != 2) {
        g_printerr("vcluster reboot: usage: vcluster reboot [--no-wait] "
                   "[-t S] NODE|all\n");
        return 2;
    }
    if (timeout < 1) {
        g_printerr("vcluster reboot: -t must be positive\n");
        return 2;
    }
    g_autofree char *cname = cluster_default_name(name);
    Cluster *c = cluster_load(cname, &err);
    if (!c) {
        g_printerr("vcluster reboot: %s\n", err->message);
        return 1;
    }
    g_autoptr(GArray) given = cluster_parse_nodes(c, argv[1], &err);
    if (!given) {
        g_printerr("vcluster reboot: %s\n", err->message);
        cluster_free(c);
        return 2;
    }
    /* "1,1" resets node1 once and waits for it once. */
    g_autoptr(GArray) nodes = g_array_new(FALSE, FALSE, sizeof(int));
    gboolean listed[VC_MAX_NODES] = { FALSE };
    for (guint j = 0; j < given->len; j++) {
        int node = g_array_index(given, int, j);
        if (!listed[node]) {
            listed[node] = TRUE;
            g_array_append_val(nodes, node);
        }
    }
    /* Reset none unless every one can be: no half-rebooted `all`. */
    for (guint j = 0; j < nodes->len; j++) {
        int node = g_array_index(nodes, int, j);
        if (!node_alive(c, node)) {
            g_printerr("vcluster reboot: node%d is not running (its QEMU is "
                       "gone); see: vcluster status --name %s\n", node,
                       c->name);
            cluster_free(c);
            return 1;
        }
    }

    /* Indexed by node; NULL where unknown. */
    char **old_ids = g_new0(char *, c->nodes);
    for (guint j = 0; j < nodes->len && !no_wait; j++) {
        int node = g_array_index(nodes, int, j);
        old_ids[node] = read_boot_id_before_reset(c, node);
    }

    int rc = 0;
    g_autoptr(GArray) reset = g_array_new(FALSE, FALSE, sizeof(int));
    gint64 start = g_get_monotonic_time();
    for (guint j = 0; j < nodes->len; j++) {
        int node = g_array_index(nodes, int, j);
        g_clear_error(&err);
        if (!reset_node(c, node, &err)) {
            g_printerr("vcluster reboot: node%d: reset failed: %s\n", node,
                       err->message);
            rc = 1;
            continue;
        }
        g_array_append_val(reset, node);
        if (no_wait) {
            g_print("node%d: reset\n", node);
        }
    }

    if (!no_wait && reset->len > 0) {
        const AgentWait how = { .verb = "rebooted",
                                .failure = "did not boot again after the "
                                           "reset",
                                .ready = is_new_boot, .opaque = old_ids };
        if (!wait_for_agents(c, reset, start, timeout, &how)) {
            rc = 1;
        }
    }
    for (int i = 0; i < c->nodes; i++) {
        g_free(old_ids[i]);
    }
    g_free(old_ids);
    cluster_free(c);
    return rc;
}
