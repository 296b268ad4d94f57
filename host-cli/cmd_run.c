/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vcluster run / replay: a workload as an experiment (docs/lockstep.md).
 *
 * `run` boots a cluster whose nodes start COMMAND from their boot script,
 * with its output on a second serial port, and power off when it exits; no
 * host timing reaches the guests (the agent is never used).  The run
 * directory keeps the configuration, each node's output and exit code, and
 * every fabric's trace with one digest over them.  `replay` runs the same
 * configuration again and compares.
 */
#include "vcluster.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define RUN_CONF "run.conf"
#define RUN_RESULT "result"
#define RUN_FAULTS "faults"
#define RUN_TIMEOUT_S 1800
#define RUN_EXIT_TAG "vcluster-run: exit "

/* One argument is a shell command line; several are quoted words. */
static char *run_script_text(char **argv, int argc)
{
    GString *s = g_string_new("# vcluster run: every node runs this once "
                              "booted; VC_NODE and VC_NODES are set\n");

    if (argc == 1) {
        g_string_append(s, argv[0]);
    } else {
        for (int i = 0; i < argc; i++) {
            g_autofree char *q = g_shell_quote(argv[i]);

            g_string_append_printf(s, "%s%s", i ? " " : "", q);
        }
    }
    g_string_append_c(s, '\n');
    return g_string_free(s, FALSE);
}

/* The options a replay needs, and the command. */
static gboolean run_conf_save(const UpOptions *o, const char *script,
                              const char *path, GError **err)
{
    g_autoptr(GKeyFile) k = g_key_file_new();

    /* the guests see the cluster's name (host names, kernel command line) */
    g_key_file_set_string(k, "run", "name", o->name ? o->name
                                                    : VC_DEFAULT_NAME);
    g_key_file_set_integer(k, "run", "nodes", o->nodes);
    g_key_file_set_boolean(k, "run", "libvirt", o->use_libvirt);
    g_key_file_set_integer(k, "run", "mem", o->mem);
    g_key_file_set_string(k, "run", "fabric", o->fabric ? o->fabric : "eth");
    if (o->topology) {
        g_key_file_set_string(k, "run", "topology", o->topology);
    }
    if (o->myri_topology) {
        g_key_file_set_string(k, "run", "myrinet_topology",
                              o->myri_topology);
    }
    g_key_file_set_boolean(k, "run", "lockstep", o->lockstep);
    g_key_file_set_integer(k, "run", "icount_shift", o->icount_shift);
    g_key_file_set_int64(k, "run", "quantum_ns", o->quantum_ns);
    g_key_file_set_string(k, "run", "seed", o->seed);
    g_key_file_set_boolean(k, "run", "faults", o->faults != NULL);
    g_key_file_set_string(k, "run", "command", script);
    return g_key_file_save_to_file(k, path, err);
}

static gboolean run_conf_load(UpOptions *o, char **script, const char *path,
                              GError **err)
{
    g_autoptr(GKeyFile) k = g_key_file_new();

    if (!g_key_file_load_from_file(k, path, G_KEY_FILE_NONE, err)) {
        return FALSE;
    }
    if (!o->name) {
        o->name = g_key_file_get_string(k, "run", "name", NULL);
    }
    o->nodes = g_key_file_get_integer(k, "run", "nodes", NULL);
    o->use_libvirt = g_key_file_get_boolean(k, "run", "libvirt", NULL);
    o->mem = g_key_file_get_integer(k, "run", "mem", NULL);
    o->fabric = g_key_file_get_string(k, "run", "fabric", NULL);
    o->topology = g_key_file_get_string(k, "run", "topology", NULL);
    o->myri_topology = g_key_file_get_string(k, "run", "myrinet_topology",
                                             NULL);
    o->lockstep = g_key_file_get_boolean(k, "run", "lockstep", NULL);
    o->icount_shift = g_key_file_get_integer(k, "run", "icount_shift", NULL);
    o->quantum_ns = g_key_file_get_int64(k, "run", "quantum_ns", NULL);
    o->seed = g_key_file_get_string(k, "run", "seed", NULL);
    *script = g_key_file_get_string(k, "run", "command", err);
    if (!*script || !o->fabric || !o->seed || o->nodes < 1) {
        g_set_error(err, VC_ERROR, EINVAL, "%s is not a run configuration "
                    "(missing nodes, fabric, seed or command)", path);
        return FALSE;
    }
    if (!o->lockstep) {
        o->icount_shift = -1;
        o->quantum_ns = -1;
    }
    if (g_key_file_get_boolean(k, "run", "faults", NULL)) {
        g_autofree char *dir = g_path_get_dirname(path);

        o->faults = g_build_filename(dir, RUN_FAULTS, NULL);
    }
    return TRUE;
}

/* The exit code a node's output ends with, or -1 if it has none. */
static int run_exit_code(const char *out_path)
{
    g_autofree char *text = NULL;
    const char *tag;

    if (!g_file_get_contents(out_path, &text, NULL, NULL)) {
        return -1;
    }
    tag = g_strrstr(text, RUN_EXIT_TAG);
    return tag ? atoi(tag + strlen(RUN_EXIT_TAG)) : -1;
}

static char **run_trace_files(Cluster *c)
{
    GPtrArray *a = g_ptr_array_new();

    for (int f = 0; c->fabrics[f]; f++) {
        g_ptr_array_add(a, run_trace_path(c->run_dir, c->fabrics[f]));
    }
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

/* A node that powered off; libvirt's domain must have finished shutting. */
static gboolean node_off(Cluster *c, int node)
{
    if (c->mode == VC_MODE_LIBVIRT) {
        g_autofree char *state = libvirt_node_state(c, node);

        return !state || g_strcmp0(state, "shut off") == 0;
    }
    return !node_alive(c, node);
}

/*
 * Wait until every node has powered off (or the timeout), then stop the
 * fabrics, which closes the traces.  FALSE on timeout: the nodes are
 * stopped, the run is incomplete.
 */
static gboolean run_wait(Cluster *c, int timeout_s)
{
    gint64 deadline = g_get_monotonic_time() +
                      (gint64)timeout_s * G_USEC_PER_SEC;
    gboolean done = FALSE;

    while (!done && g_get_monotonic_time() < deadline) {
        done = TRUE;
        for (int i = 0; i < c->nodes; i++) {
            done &= node_off(c, i);
        }
        if (!done) {
            vc_sleep_ms(100);
        }
    }
    for (int i = 0; i < c->nodes && !done; i++) {
        if (!node_off(c, i)) {
            g_printerr("vcluster run: node%d still running after %d s; "
                       "stopped\n", i, timeout_s);
            if (c->mode == VC_MODE_LIBVIRT) {
                libvirt_remove_node(c, i);
            } else {
                node_stop_direct(c, i);
            }
        }
    }
    for (int f = 0; c->fabrics[f]; f++) {
        cluster_fabric_stop(c, c->fabrics[f]);
    }
    return done;
}

/* Exit codes and digest into RUN/result; prints them.  0 if all exited 0. */
static int run_report(Cluster *c, gboolean complete)
{
    g_autoptr(GString) r = g_string_new(NULL);
    g_auto(GStrv) traces = run_trace_files(c);
    g_autofree char *digest = NULL;
    g_autofree char *path = g_build_filename(c->run_dir, RUN_RESULT, NULL);
    g_autoptr(GError) err = NULL;
    int rc = complete ? 0 : 1;

    for (int i = 0; i < c->nodes; i++) {
        g_autofree char *out = run_output_path(c->run_dir, i);
        int code = run_exit_code(out);

        if (code < 0) {
            g_string_append_printf(r, "node%d exit none (no exit line in "
                                   "%s)\n", i, out);
            rc = 1;
        } else {
            g_string_append_printf(r, "node%d exit %d\n", i, code);
            rc |= code != 0;
        }
    }
    if (!trace_digest_files(traces, &digest, &err)) {
        g_string_append_printf(r, "digest none (%s)\n", err->message);
        rc = 1;
    } else {
        g_string_append_printf(r, "digest sha256:%s\n", digest);
    }
    g_print("%s", r->str);
    if (!g_file_set_contents(path, r->str, r->len, &err)) {
        g_printerr("vcluster run: %s\n", err->message);
        rc = 1;
    }
    return rc;
}

/*
 * Boot, wait, report: the run itself, for `run` and `replay`.  Returns the
 * exit status; *started says whether the cluster came up at all.
 */
static int run_execute(UpOptions *o, gboolean *started)
{
    Cluster *c = NULL;
    int rc = up_cluster(o, "run", &c);
    gboolean complete;

    *started = rc == 0;
    if (rc) {
        return rc;
    }
    g_print("run %s: %d nodes started, output in %s\n", c->name, c->nodes,
            c->run_dir);
    complete = run_wait(c, o->timeout);
    rc = run_report(c, complete);
    cluster_teardown(c);
    cluster_free(c);
    return rc;
}

/* A new run directory: created here, never an existing one. */
static char *run_dir_make(const char *given, GError **err)
{
    g_autofree char *abs = g_canonicalize_filename(given, NULL);

    if (g_mkdir(abs, 0755) < 0) {
        g_set_error(err, VC_ERROR, errno, "cannot create run directory %s: "
                    "%s%s", abs, g_strerror(errno), errno == EEXIST ?
                    " (a run never overwrites one; give another --out)"
                    : "");
        return NULL;
    }
    return g_steal_pointer(&abs);
}

/* Undo run_dir_make and run_prepare: for options up_cluster refused. */
static void run_dir_remove(const char *dir)
{
    const char *made[] = { VC_RUN_SCRIPT, RUN_CONF, RUN_FAULTS };

    for (size_t i = 0; i < G_N_ELEMENTS(made); i++) {
        g_autofree char *path = g_build_filename(dir, made[i], NULL);

        g_unlink(path);
    }
    g_rmdir(dir);
}

static gboolean copy_file(const char *from, const char *to, GError **err)
{
    g_autofree char *text = NULL;
    gsize len;

    return g_file_get_contents(from, &text, &len, err) &&
           g_file_set_contents(to, text, len, err);
}

/* Write the script and configuration into o->run_dir. */
static gboolean run_prepare(UpOptions *o, const char *script, GError **err)
{
    g_autofree char *conf = g_build_filename(o->run_dir, RUN_CONF, NULL);

    o->run_script = g_build_filename(o->run_dir, VC_RUN_SCRIPT, NULL);
    if (!g_file_set_contents(o->run_script, script, -1, err)) {
        return FALSE;
    }
    if (o->faults) {
        g_autofree char *copy = g_build_filename(o->run_dir, RUN_FAULTS,
                                                 NULL);

        if (g_strcmp0(o->faults, copy) && !copy_file(o->faults, copy, err)) {
            return FALSE;
        }
        g_free(o->faults);
        o->faults = g_steal_pointer(&copy);
    }
    return run_conf_save(o, script, conf, err);
}

int cmd_run(int argc, char **argv)
{
    UpOptions o;
    g_autofree char *out = NULL, *script = NULL;
    gboolean started;
    GOptionEntry entries[] = {
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "run directory to create (default ./run-SEED)", "DIR" },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("[OPTIONS] -- COMMAND... - run COMMAND on every "
                             "node from boot, record outputs and traces");
    g_autoptr(GError) err = NULL;
    int rc;

    up_options_init(&o);
    o.timeout = RUN_TIMEOUT_S;
    o.wait_agents = FALSE;
    up_option_entries(&o, ctx);
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("vcluster run: %s (see: vcluster run --help)\n",
                   err->message);
        up_options_clear(&o);
        return 2;
    }
    if (argc < 2) {
        g_printerr("vcluster run: no command; e.g. vcluster run --lockstep "
                   "-n 3 --fabric ps1 -- 'ps1test poll'\n");
        up_options_clear(&o);
        return 2;
    }
    if (!o.seed) {
        /* a run records its seed, so that replay decides the same */
        o.seed = g_strdup(g_getenv("VCLUSTER_SEED"));
        if (!o.seed || !*o.seed) {
            g_free(o.seed);
            o.seed = g_strdup_printf("0x%08x%08x", g_random_int(),
                                     g_random_int());
        }
    }
    if (!out) {
        out = g_strdup_printf("run-%s", o.seed);
    }
    script = run_script_text(argv + 1, argc - 1);
    o.run_dir = run_dir_make(out, &err);
    if (!o.run_dir || !run_prepare(&o, script, &err)) {
        g_printerr("vcluster run: %s\n", err->message);
        up_options_clear(&o);
        return 2;
    }
    rc = run_execute(&o, &started);
    if (!started && rc == 2) {
        /* refused options: no run took place, so no directory stays */
        run_dir_remove(o.run_dir);
    }
    up_options_clear(&o);
    return rc;
}

/* The result files of two runs, compared line by line. */
static gboolean same_file(const char *a, const char *b)
{
    g_autofree char *x = NULL, *y = NULL;
    gsize xl, yl;

    return g_file_get_contents(a, &x, &xl, NULL) &&
           g_file_get_contents(b, &y, &yl, NULL) && xl == yl &&
           memcmp(x, y, xl) == 0;
}

int cmd_replay(int argc, char **argv)
{
    UpOptions o;
    g_autofree char *out = NULL, *script = NULL, *conf = NULL;
    GOptionEntry entries[] = {
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "directory of the new run (default RUN/replay-N)", "DIR" },
        { "name", 0, 0, G_OPTION_ARG_STRING, &o.name,
          "cluster name (default: the run's; another name changes what the "
          "guests see)", "NAME" },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("RUNDIR - run a recorded run again and compare");
    g_autoptr(GError) err = NULL;
    g_autofree char *report = NULL;
    g_auto(GStrv) a = NULL, b = NULL;
    gboolean same, started;
    int rc;

    up_options_init(&o);
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc != 2) {
        g_printerr("vcluster replay: %s (see: vcluster replay --help)\n",
                   err ? err->message : "give one run directory");
        up_options_clear(&o);
        return 2;
    }
    conf = g_build_filename(argv[1], RUN_CONF, NULL);
    o.timeout = RUN_TIMEOUT_S;
    o.wait_agents = FALSE;
    if (!run_conf_load(&o, &script, conf, &err)) {
        g_printerr("vcluster replay: %s\n", err->message);
        up_options_clear(&o);
        return 2;
    }
    for (int i = 1; !out; i++) {
        g_autofree char *d = g_strdup_printf("%s/replay-%d", argv[1], i);

        if (!g_file_test(d, G_FILE_TEST_EXISTS)) {
            out = g_steal_pointer(&d);
        }
    }
    o.run_dir = run_dir_make(out, &err);
    if (!o.run_dir || !run_prepare(&o, script, &err)) {
        g_printerr("vcluster replay: %s\n", err->message);
        up_options_clear(&o);
        return 2;
    }
    rc = run_execute(&o, &started);
    if (!started) {
        g_printerr("vcluster replay: the run did not start; nothing to "
                   "compare\n");
        up_options_clear(&o);
        return 2;
    }
    /* traces first: they say where a run went another way */
    {
        Cluster old = { .run_dir = argv[1] }, new = { .run_dir = o.run_dir };
        g_auto(GStrv) kinds = g_strsplit(o.fabric, ",", -1);

        old.fabrics = new.fabrics = kinds;
        a = run_trace_files(&old);
        b = run_trace_files(&new);
    }
    if (!trace_compare_files(a, b, &report, &err) && !report) {
        g_printerr("vcluster replay: %s\n", err->message);
        up_options_clear(&o);
        return 2;
    }
    same = g_strcmp0(report, "identical") == 0;
    for (int i = 0; same && i < o.nodes; i++) {
        g_autofree char *x = run_output_path(argv[1], i);
        g_autofree char *y = run_output_path(o.run_dir, i);

        if (!same_file(x, y)) {
            g_free(report);
            report = g_strdup_printf("traces identical, but node%d's output "
                                     "differs (%s, %s)", i, x, y);
            same = FALSE;
        }
    }
    g_print("replay: %s\n", same ? "identical" : report);
    up_options_clear(&o);
    return same ? (rc ? 1 : 0) : 1;
}
