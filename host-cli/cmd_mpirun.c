/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vcluster mpirun: Open MPI's mpirun on node0, from the host. It is
 * `vcluster exec 0 -- mpirun ...` with each argument quoted for the
 * guest's shell (exec joins its words, as ssh does) and a switch for the
 * socket library (docs/apps.md).
 */
#include "vcluster.h"

#include <string.h>

/*
 * vcluster exec's arguments for `vcluster mpirun [--name NAME]
 * [--timeout S] [--preload LIB] [--] ARGS...`. Our options come first;
 * the first other word, or what follows "--", starts mpirun's. NULL and
 * *err on a usage error.
 */
char **mpirun_exec_argv(int argc, char **argv, GError **err)
{
    const char *name = NULL, *timeout = NULL, *preload = NULL;
    int i = 1;

    for (; i < argc; i++) {
        const char *a = argv[i], **opt = NULL, *eq;

        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        /* --opt VALUE or --opt=VALUE */
        eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (len == 6 && !strncmp(a, "--name", len)) {
            opt = &name;
        } else if (len == 9 && !strncmp(a, "--timeout", len)) {
            opt = &timeout;
        } else if (len == 9 && !strncmp(a, "--preload", len)) {
            opt = &preload;
        } else {
            break;
        }
        if (eq) {
            *opt = eq + 1;
        } else if (i + 1 < argc) {
            *opt = argv[++i];
        } else {
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%.*s needs a value", (int)len, a);
            return NULL;
        }
        if (!**opt) {
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%.*s needs a value", (int)len, a);
            return NULL;
        }
    }
    if (timeout && strspn(timeout, "0123456789") != strlen(timeout)) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--timeout wants whole seconds, not '%s'", timeout);
        return NULL;
    }
    if (i >= argc) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                    "no program: vcluster mpirun [--name NAME] [--timeout S] "
                    "[--preload LIB] [--] [MPIRUN OPTIONS] PROGRAM [ARGS]");
        return NULL;
    }

    GPtrArray *v = g_ptr_array_new();
    g_ptr_array_add(v, g_strdup(argv[0]));
    if (name) {
        g_ptr_array_add(v, g_strdup("--name"));
        g_ptr_array_add(v, g_strdup(name));
    }
    if (timeout) {
        g_ptr_array_add(v, g_strdup("--timeout"));
        g_ptr_array_add(v, g_strdup(timeout));
    }
    g_ptr_array_add(v, g_strdup("0"));
    g_ptr_array_add(v, g_strdup("--"));
    g_ptr_array_add(v, g_strdup("mpirun"));
    if (preload) {
        /* the ranks only, not the daemons */
        g_autofree char *x = g_strdup_printf("LD_PRELOAD=%s", preload);
        g_ptr_array_add(v, g_strdup("-x"));
        g_ptr_array_add(v, g_shell_quote(x));
    }
    for (; i < argc; i++) {
        g_ptr_array_add(v, g_shell_quote(argv[i]));
    }
    g_ptr_array_add(v, NULL);
    return (char **)g_ptr_array_free(v, FALSE);
}

int cmd_mpirun(int argc, char **argv)
{
    g_autoptr(GError) err = NULL;
    g_auto(GStrv) v = mpirun_exec_argv(argc, argv, &err);

    if (!v) {
        g_printerr("vcluster mpirun: %s\n", err->message);
        return 2;
    }
    /* cmd_exec's option parser moves words around: give it a copy */
    g_autofree char **args = g_memdup2(v, (g_strv_length(v) + 1) * sizeof(*v));
    return cmd_exec((int)g_strv_length(v), args);
}
