/*
 * Unit tests of `vcluster mpirun`'s arguments: which words are ours, how
 * mpirun's are quoted for the guest's shell, --preload, usage errors, and
 * that vcluster exec takes what we hand it. Linked with vcluster's
 * objects; nothing is started (the run directory is an empty temporary one).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcluster.h"

/* mpirun_exec_argv of the words of `line` (split as the shell would) */
static char **exec_argv(const char *line, GError **err)
{
    g_autofree char *full = g_strdup_printf("'vcluster mpirun' %s", line);
    g_auto(GStrv) words = NULL;
    int n = 0;

    g_assert_true(g_shell_parse_argv(full, &n, &words, NULL));
    return mpirun_exec_argv(n, words, err);
}

/* `line` must give exactly the words of `want`, joined by '|' */
static void expect(const char *line, const char *want)
{
    g_autoptr(GError) err = NULL;
    g_auto(GStrv) v = exec_argv(line, &err);

    g_assert_no_error(err);
    g_assert_nonnull(v);
    g_autofree char *got = g_strjoinv("|", v);
    g_assert_cmpstr(got, ==, want);
}

static void refuse(const char *line, const char *msg)
{
    g_autoptr(GError) err = NULL;
    g_auto(GStrv) v = exec_argv(line, &err);

    g_assert_null(v);
    g_assert_nonnull(err);
    g_assert_true(g_pattern_match_simple(msg, err->message));
}

static void test_args(void)
{
    /* mpirun's options are not ours: everything goes, quoted */
    expect("-n 4 heat -n 128 -t",
           "vcluster mpirun|0|--|mpirun|'-n'|'4'|'heat'|'-n'|'128'|'-t'");
    /* words with blanks and quotes reach the guest's shell intact */
    expect("sh -c \"echo it's; exit 3\"",
           "vcluster mpirun|0|--|mpirun|'sh'|'-c'|'echo it'\\''s; exit 3'");
    /* ours first, in either form; -- hands mpirun its own --timeout */
    expect("--name c1 --timeout=30 -- --timeout 5 mpitest",
           "vcluster mpirun|--name|c1|--timeout|30|0|--|mpirun|'--timeout'|"
           "'5'|'mpitest'");
    /* the first word that is not ours ends our options */
    expect("-n 2 --name x prog",
           "vcluster mpirun|0|--|mpirun|'-n'|'2'|'--name'|'x'|'prog'");
    /* --preload: the ranks get LD_PRELOAD, the daemons do not */
    expect("--preload /usr/lib/libpsock.so -n 4 NPtcp",
           "vcluster mpirun|0|--|mpirun|-x|'LD_PRELOAD=/usr/lib/libpsock.so'|"
           "'-n'|'4'|'NPtcp'");
}

static void test_errors(void)
{
    refuse("", "no program: *");
    refuse("--name c1 --", "no program: *");
    refuse("--name", "--name needs a value");
    refuse("--preload=", "--preload needs a value");
    refuse("--timeout 1m prog", "--timeout wants whole seconds, not '1m'");
}

/* vcluster exec parses what we give it: a missing cluster is exec's
 * error (255), not a usage error (2), which our own errors are */
static void test_exec_takes_it(void)
{
    char *argv[] = { "vcluster mpirun", "--name", "nosuch", "--timeout", "9",
                     "-n", "2", "prog", NULL };
    char *bad[] = { "vcluster mpirun", "--timeout", "x", "prog", NULL };

    if (g_test_subprocess()) {
        int a = cmd_mpirun(8, argv), b = cmd_mpirun(4, bad);
        exit(a == 255 && b == 2 ? 0 : 1);
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
    g_test_trap_assert_stderr("vcluster exec: *nosuch*\n"
                              "vcluster mpirun: --timeout wants whole seconds*");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    /* no cluster is ever found here */
    g_autofree char *run = g_test_subprocess() ? g_strdup(g_getenv("VCLUSTER_RUNDIR"))
                                               : g_dir_make_tmp("vcluster-XXXXXX", NULL);
    g_assert_nonnull(run);
    g_setenv("VCLUSTER_RUNDIR", run, TRUE);
    g_test_add_func("/vcluster/mpirun/args", test_args);
    g_test_add_func("/vcluster/mpirun/errors", test_errors);
    g_test_add_func("/vcluster/mpirun/exec-takes-it", test_exec_takes_it);
    int rc = g_test_run();
    if (!g_test_subprocess()) {
        g_rmdir(run);
    }
    return rc;
}
