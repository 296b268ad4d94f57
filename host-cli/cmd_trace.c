/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vcluster trace digest|diff: a run's pcapng traces, digested or compared. */
#include "vcluster.h"
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char trace_usage[] =
    "usage: vcluster trace digest FILE|RUNDIR...\n"
    "       vcluster trace diff RUN_A RUN_B\n"
    "       vcluster trace diff FILE_A FILE_B\n"
    "\n"
    "digest: one SHA-256 over the records of the traces (a RUNDIR stands\n"
    "for its trace-*.pcapng files, by name).  diff: the first difference\n"
    "between two runs' traces, or \"identical\"; exit 0 identical,\n"
    "1 different, 2 trouble.  See docs/user-guide.md, \"Traces\".\n";

/* The arguments as trace files: a directory gives its trace-*.pcapng. */
static char **expand(char **args, GError **err)
{
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);

    for (char **a = args; *a; a++) {
        if (g_file_test(*a, G_FILE_TEST_IS_DIR)) {
            g_auto(GStrv) run = trace_list_run(*a, err);

            if (!run) {
                g_ptr_array_free(paths, TRUE);
                return NULL;
            }
            for (char **p = run; *p; p++) {
                g_ptr_array_add(paths, g_strdup(*p));
            }
        } else {
            g_ptr_array_add(paths, g_strdup(*a));
        }
    }
    g_ptr_array_set_free_func(paths, NULL);
    g_ptr_array_add(paths, NULL);
    return (char **)g_ptr_array_free(paths, FALSE);
}

static int trace_digest(int argc, char **argv)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *hex = NULL;
    g_auto(GStrv) paths = NULL;

    if (argc < 1) {
        fputs(trace_usage, stderr);
        return 2;
    }
    paths = expand(argv, &err);
    if (!paths || !trace_digest_files(paths, &hex, &err)) {
        g_printerr("vcluster trace digest: %s\n", err->message);
        return 1;
    }
    g_print("%s\n", hex);
    return 0;
}

static int trace_diff(int argc, char **argv)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *report = NULL;
    gboolean dir_a, dir_b, same;

    if (argc != 2) {
        fputs(trace_usage, stderr);
        return 2;
    }
    dir_a = g_file_test(argv[0], G_FILE_TEST_IS_DIR);
    dir_b = g_file_test(argv[1], G_FILE_TEST_IS_DIR);
    if (dir_a != dir_b) {
        const char *other = dir_a ? argv[1] : argv[0];

        if (!g_file_test(other, G_FILE_TEST_EXISTS)) {
            g_printerr("vcluster trace diff: %s: %s\n", other,
                       g_strerror(ENOENT));
        } else {
            g_printerr("vcluster trace diff: give two run directories or "
                       "two trace files\n");
        }
        return 2;
    }
    if (dir_a) {
        same = trace_compare_runs(argv[0], argv[1], &report, &err);
    } else {
        char *a[] = { argv[0], NULL }, *b[] = { argv[1], NULL };

        same = trace_compare_files(a, b, &report, &err);
    }
    if (!report) {
        g_printerr("vcluster trace diff: %s\n", err->message);
        return 2;
    }
    g_print("%s\n", report);
    return same ? 0 : 1;
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(trace_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "digest")) {
        return trace_digest(argc - 2, argv + 2);
    }
    if (!strcmp(argv[1], "diff")) {
        return trace_diff(argc - 2, argv + 2);
    }
    g_printerr("vcluster trace: unknown subcommand '%s'\n%s", argv[1],
               trace_usage);
    return 2;
}
