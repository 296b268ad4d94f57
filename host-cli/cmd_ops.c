/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vcluster exec / status / console / list / fault / capture. */
#include "vcluster.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define AGENT_TIMEOUT_US (15 * G_USEC_PER_SEC)
/*
 * A node's guest agent has one channel, which one client holds at a time.
 * A command that runs longer than this gives it up between its polls, so
 * that another `vcluster exec` on the node gets its turn.
 */
#define EXEC_HOLD_US (200 * 1000)
#define EXEC_POLL_MAX_MS 20
#define EXEC_POLL_RELEASED_MS 50

static Cluster *load_named(const char *cmd, const char *name)
{
    g_autofree char *cname = cluster_default_name(name);
    g_autoptr(GError) err = NULL;
    Cluster *c = cluster_load(cname, &err);
    if (!c) {
        g_printerr("vcluster %s: %s\n", cmd, err->message);
    }
    return c;
}

static void write_prefixed(FILE *f, const char *prefix, GBytes *data)
{
    gsize len;
    const char *p = g_bytes_get_data(data, &len);

    if (!prefix) {
        fwrite(p, 1, len, f);
        return;
    }
    while (len > 0) {
        const char *nl = memchr(p, '\n', len);
        gsize n = nl ? (gsize)(nl - p + 1) : len;
        fputs(prefix, f);
        fwrite(p, 1, n, f);
        if (!nl) {
            fputc('\n', f);
        }
        p += n;
        len -= n;
    }
}

typedef struct {
    int node;
    char *sock;                 /* the node's guest agent */
    JsonChan *ch;               /* NULL while given up (EXEC_HOLD_US) */
    gint64 pid;
    gboolean done;
    AgentExecResult res;
} ExecJob;

/* The job's agent channel, opened again if it was given up. */
static JsonChan *job_channel(ExecJob *job, GError **err)
{
    if (!job->ch) {
        job->ch = agent_open(job->sock,
                             g_get_monotonic_time() + AGENT_TIMEOUT_US, err);
    }
    return job->ch;
}

int cmd_exec(int argc, char **argv)
{
    g_autofree char *name = NULL;
    gboolean detach = FALSE, use_stdin = FALSE;
    int timeout = 0;
    GOptionEntry entries[] = {
        { "name", 0, 0, G_OPTION_ARG_STRING, &name, "cluster name", "NAME" },
        { "detach", 'd', 0, G_OPTION_ARG_NONE, &detach,
          "start the command and return without waiting", NULL },
        { "stdin", 'i', 0, G_OPTION_ARG_NONE, &use_stdin,
          "send our standard input to the command", NULL },
        { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout,
          "kill the command after S seconds (exit 124)", "S" },
        { NULL }
    };
    /* Everything after "--" is the remote command, untouched by options. */
    int dashdash = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            dashdash = i;
            break;
        }
    }
    if (!dashdash || dashdash == argc - 1) {
        g_printerr("vcluster exec: usage: vcluster exec [OPTIONS] NODE|all "
                   "-- COMMAND [ARGS...]\n");
        return 2;
    }
    int opt_argc = dashdash;
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("NODE|all -- COMMAND... - run a command");
    g_autoptr(GError) err = NULL;
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &opt_argc, &argv, &err)) {
        g_printerr("vcluster exec: %s\n", err->message);
        return 2;
    }
    if (opt_argc != 2) {
        g_printerr("vcluster exec: give exactly one NODE (a number, nodeN "
                   "or all) before --\n");
        return 2;
    }
    Cluster *c = load_named("exec", name);
    if (!c) {
        return 255;
    }
    g_autoptr(GArray) nodes = cluster_parse_nodes(c, argv[1], &err);
    if (!nodes) {
        g_printerr("vcluster exec: %s\n", err->message);
        cluster_free(c);
        return 2;
    }

    /* Like ssh: the words are joined and run by the remote shell. */
    g_autofree char *joined = g_strjoinv(" ", argv + dashdash + 1);
    char *remote[] = { "/bin/sh", "-c", joined, NULL };
    g_autoptr(GBytes) input = NULL;
    if (use_stdin) {
        GString *in = g_string_new(NULL);
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
            g_string_append_len(in, buf, n);
        }
        input = g_string_free_to_bytes(in);
    }

    gboolean many = nodes->len > 1 || strcmp(argv[1], "all") == 0;
    ExecJob *jobs = g_new0(ExecJob, nodes->len);
    int rc = 0;
    for (guint j = 0; j < nodes->len; j++) {
        ExecJob *job = &jobs[j];
        job->node = g_array_index(nodes, int, j);
        job->sock = cluster_node_file(c, job->node, "qga.sock");
        g_clear_error(&err);
        if (job_channel(job, &err)) {
            job->pid = agent_exec_start(job->ch, remote, !detach, input,
                                        &err);
        }
        if (!job->ch || job->pid < 0) {
            g_printerr("vcluster exec: node%d: %s\n", job->node,
                       err ? err->message : "agent failed");
            job->done = TRUE;
            job->res.exitcode = 255;
            rc = 255;
        } else if (detach) {
            g_print("%snode%d: started pid %" G_GINT64_FORMAT "\n",
                    "", job->node, job->pid);
            job->done = TRUE;
        }
    }

    gint64 start = g_get_monotonic_time();
    int pending = 0;
    for (guint j = 0; j < nodes->len; j++) {
        pending += !jobs[j].done;
    }
    int delay_ms = 1;
    while (pending > 0) {
        for (guint j = 0; j < nodes->len; j++) {
            ExecJob *job = &jobs[j];
            if (job->done) {
                continue;
            }
            g_clear_error(&err);
            if (job_channel(job, &err) &&
                agent_exec_poll(job->ch, job->pid, &job->res, &err)) {
                g_autofree char *prefix = many ? g_strdup_printf(
                                                     "node%d: ", job->node)
                                               : NULL;
                write_prefixed(stdout, prefix, job->res.out);
                fflush(stdout);
                write_prefixed(stderr, prefix, job->res.err);
                if (job->res.truncated) {
                    g_printerr("vcluster exec: node%d: output truncated by "
                               "the guest agent\n", job->node);
                }
                job->done = TRUE;
                pending--;
            } else if (err) {
                g_printerr("vcluster exec: node%d: %s\n", job->node,
                           err->message);
                job->res.exitcode = 255;
                job->done = TRUE;
                pending--;
            } else if (timeout > 0 &&
                       g_get_monotonic_time() - start >
                           (gint64)timeout * G_USEC_PER_SEC) {
                g_autofree char *kill_cmd = g_strdup_printf(
                    "kill -9 %" G_GINT64_FORMAT, job->pid);
                char *killer[] = { "/bin/sh", "-c", kill_cmd, NULL };
                if (job_channel(job, NULL)) {
                    agent_exec_start(job->ch, killer, FALSE, NULL, NULL);
                }
                g_printerr("vcluster exec: node%d: timed out after %d s\n",
                           job->node, timeout);
                job->res.exitcode = 124;
                job->done = TRUE;
                pending--;
            }
        }
        if (pending > 0) {
            gboolean release = g_get_monotonic_time() - start > EXEC_HOLD_US;

            for (guint j = 0; release && j < nodes->len; j++) {
                if (!jobs[j].done) {
                    g_clear_pointer(&jobs[j].ch, jsonchan_close);
                }
            }
            vc_sleep_ms(delay_ms);
            delay_ms = MIN(delay_ms * 2, release ? EXEC_POLL_RELEASED_MS
                                                 : EXEC_POLL_MAX_MS);
        }
    }
    for (guint j = 0; j < nodes->len; j++) {
        if (rc == 0 && jobs[j].res.exitcode != 0) {
            rc = jobs[j].res.exitcode;
        }
        agent_exec_result_clear(&jobs[j].res);
        jsonchan_close(jobs[j].ch);
        g_free(jobs[j].sock);
    }
    g_free(jobs);
    cluster_free(c);
    return rc;
}

int cmd_status(int argc, char **argv)
{
    g_autofree char *name = NULL;
    GOptionEntry entries[] = {
        { "name", 0, 0, G_OPTION_ARG_STRING, &name, "cluster name", "NAME" },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- show a cluster");
    g_autoptr(GError) err = NULL;
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("vcluster status: %s\n", err->message);
        return 2;
    }
    Cluster *c = load_named("status", name);
    if (!c) {
        return 1;
    }
    g_autofree char *kinds = g_strjoinv(",", c->fabrics);
    g_print("cluster %s: %d nodes, %s, accel %s, fabric %s, %d MiB each\n"
            "run directory: %s\n", c->name, c->nodes,
            c->mode == VC_MODE_LIBVIRT ? "libvirt" : "direct", c->accel,
            kinds, c->mem_mb, c->dir);
    int rc = 0;
    for (int f = 0; c->fabrics[f]; f++) {
        g_autofree char *ctl = cluster_fabric_ctl_socket(c, c->fabrics[f]);
        gboolean alive = cluster_fabric_alive(c, c->fabrics[f]);
        g_print("fabric %s: %s, control %s\n", c->fabrics[f],
                alive ? "running" : "STOPPED", ctl);
        rc |= !alive;
    }
    g_print("%-8s %-9s %-12s %s\n", "NODE", "STATE", "ADDRESS", "AGENT");
    for (int i = 0; i < c->nodes; i++) {
        g_autofree char *ip = cluster_node_ip(i);
        g_autofree char *sock = cluster_node_file(c, i, "qga.sock");
        gboolean alive = node_alive(c, i);
        JsonChan *ch = alive ? agent_open(sock, g_get_monotonic_time() +
                                                    3 * G_USEC_PER_SEC,
                                          NULL)
                             : NULL;
        g_autofree char *label = g_strdup_printf("node%d", i);
        g_print("%-8s %-9s %-12s %s\n", label,
                alive ? "running" : "stopped", ip,
                ch ? "answering" : "silent");
        rc |= !ch;
        jsonchan_close(ch);
    }
    cluster_free(c);
    return rc;
}

static volatile sig_atomic_t console_stop;

static void on_console_signal(int sig)
{
    console_stop = 1;
}

int cmd_console(int argc, char **argv)
{
    g_autofree char *name = NULL;
    gboolean once = FALSE;
    GOptionEntry entries[] = {
        { "name", 0, 0, G_OPTION_ARG_STRING, &name, "cluster name", "NAME" },
        { "no-follow", 0, 0, G_OPTION_ARG_NONE, &once,
          "print the log and return", NULL },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("NODE - follow a node's serial console log");
    g_autoptr(GError) err = NULL;
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("vcluster console: %s\n", err->message);
        return 2;
    }
    if (argc != 2) {
        g_printerr("vcluster console: usage: vcluster console NODE\n");
        return 2;
    }
    Cluster *c = load_named("console", name);
    if (!c) {
        return 1;
    }
    g_autoptr(GArray) nodes = cluster_parse_nodes(c, argv[1], &err);
    if (!nodes || nodes->len != 1) {
        g_printerr("vcluster console: %s\n",
                   err ? err->message : "give one node");
        cluster_free(c);
        return 2;
    }
    int node = g_array_index(nodes, int, 0);
    g_autofree char *path = cluster_node_file(c, node, "serial.log");
    FILE *f = fopen(path, "r");
    if (!f) {
        g_printerr("vcluster console: %s: %s\n", path, g_strerror(errno));
        cluster_free(c);
        return 1;
    }
    struct sigaction sa = { .sa_handler = on_console_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    char buf[4096];
    while (!console_stop) {
        size_t n = fread(buf, 1, sizeof(buf), f);
        if (n > 0) {
            fwrite(buf, 1, n, stdout);
            fflush(stdout);
            continue;
        }
        if (once) {
            break;
        }
        if (!node_alive(c, node)) {
            g_print("\n[vcluster: node%d is not running]\n", node);
            break;
        }
        clearerr(f);
        vc_sleep_ms(200);
    }
    fclose(f);
    cluster_free(c);
    return 0;
}

int cmd_list(int argc, char **argv)
{
    g_autoptr(GDir) d = g_dir_open(vc_run_base(), 0, NULL);
    const char *e;
    int count = 0;

    while (d && (e = g_dir_read_name(d))) {
        Cluster *c = cluster_load(e, NULL);
        if (!c) {
            continue;
        }
        int running = 0;
        for (int i = 0; i < c->nodes; i++) {
            running += node_alive(c, i);
        }
        g_print("%-16s %d/%d nodes running, %s, %s\n", c->name, running,
                c->nodes, c->mode == VC_MODE_LIBVIRT ? "libvirt" : "direct",
                c->dir);
        count++;
        cluster_free(c);
    }
    if (!count) {
        g_print("no clusters (run directory %s)\n", vc_run_base());
    }
    return 0;
}

/*
 * `vcluster fault|link|capture [--name N] [--fabric K] ARGS` runs
 * `fabricctl fault|link|capture ARGS`; `vcluster fabric ARGS` any command.
 */
int cmd_fabricctl(const char *what, int argc, char **argv)
{
    const char *name = NULL, *kind = NULL;
    int i = 1;
    for (; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--name") == 0) {
            name = argv[i + 1];
        } else if (strcmp(argv[i], "--fabric") == 0) {
            kind = argv[i + 1];
        } else {
            break;
        }
    }
    if (i >= argc) {
        g_printerr("vcluster %s: usage: vcluster %s [--name NAME] "
                   "[--fabric KIND] ARGS... (see: fabricctl --help)\n", what,
                   what);
        return 2;
    }
    Cluster *c = load_named(what, name);
    if (!c) {
        return 1;
    }
    if (!kind && strcmp(what, "fabric") != 0 && c->fabrics[0] &&
        c->fabrics[1]) {
        /* A rule or a link on the wrong fabric would pass unnoticed. */
        g_autofree char *all = g_strjoinv(", ", c->fabrics);
        g_printerr("vcluster %s: cluster '%s' has the fabrics %s: say "
                   "which with --fabric KIND\n", what, c->name, all);
        cluster_free(c);
        return 2;
    }
    if (!kind) {
        kind = c->fabrics[0];
    } else if (!g_strv_contains((const char *const *)c->fabrics, kind)) {
        g_printerr("vcluster %s: cluster '%s' has no %s fabric\n", what,
                   c->name, kind);
        cluster_free(c);
        return 2;
    }
    VcPaths p;
    g_autoptr(GError) err = NULL;
    vc_paths_find(&p, &err);
    g_autofree char *ctl = cluster_fabric_ctl_socket(c, kind);
    GPtrArray *args = g_ptr_array_new();
    g_ptr_array_add(args, p.fabricctl);
    g_ptr_array_add(args, "-s");
    g_ptr_array_add(args, ctl);
    if (strcmp(what, "fabric") != 0) {
        g_ptr_array_add(args, (char *)what);
    }
    for (; i < argc; i++) {
        g_ptr_array_add(args, argv[i]);
    }
    g_ptr_array_add(args, NULL);
    execv(p.fabricctl, (char **)args->pdata);
    g_printerr("vcluster %s: cannot run %s: %s; run: make\n", what,
               p.fabricctl, g_strerror(errno));
    return 1;
}
