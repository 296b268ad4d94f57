/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Process helpers: liveness, pid files, stopping, daemon spawning. */
#include "vcluster.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void vc_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

gboolean proc_alive(pid_t pid)
{
    if (pid <= 0) {
        return FALSE;
    }
    /* Reap it if it is our child, so a zombie does not count as alive. */
    waitpid(pid, NULL, WNOHANG);
    if (kill(pid, 0) < 0 && errno != EPERM) {
        return FALSE;
    }
    /* Not our child: a zombie waits for init to reap it, but is gone. */
    g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
    g_autofree char *stat = NULL;
    if (g_file_get_contents(path, &stat, NULL, NULL)) {
        const char *end = strrchr(stat, ')');
        if (end && end[1] == ' ' && end[2] == 'Z') {
            return FALSE;
        }
    }
    return TRUE;
}

pid_t proc_read_pidfile(const char *path)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        return 0;
    }
    gint64 pid = g_ascii_strtoll(text, NULL, 10);
    return pid > 0 && pid < G_MAXINT32 ? (pid_t)pid : 0;
}

gboolean proc_stop(pid_t pid, int timeout_ms)
{
    if (!proc_alive(pid)) {
        return TRUE;
    }
    kill(pid, SIGTERM);
    for (int waited = 0; waited < timeout_ms; waited += 20) {
        if (!proc_alive(pid)) {
            return TRUE;
        }
        vc_sleep_ms(20);
    }
    kill(pid, SIGKILL);
    for (int waited = 0; waited < 2000; waited += 20) {
        if (!proc_alive(pid)) {
            return TRUE;
        }
        vc_sleep_ms(20);
    }
    return FALSE;
}

static void child_setup(gpointer log_path)
{
    /* Own session: the cluster outlives this command and its terminal. */
    setsid();
    int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
}

pid_t proc_spawn_daemon(char **argv, const char *log_path, GError **err)
{
    GPid pid;
    if (!g_spawn_async(NULL, argv, NULL,
                       G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDIN_FROM_DEV_NULL,
                       child_setup, (gpointer)log_path, &pid, err)) {
        return -1;
    }
    return pid;
}

char *file_tail(const char *path, int lines)
{
    g_autofree char *text = NULL;
    gsize len;
    if (!g_file_get_contents(path, &text, &len, NULL) || len == 0) {
        return g_strdup("(empty)");
    }
    gsize pos = len;
    if (text[pos - 1] == '\n') {
        pos--;
    }
    for (int n = 0; pos > 0; pos--) {
        if (text[pos - 1] == '\n' && ++n == lines) {
            break;
        }
    }
    return g_strdup(text + pos);
}
