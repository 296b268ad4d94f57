/*
 * fabricctl: send one command to a running fabricd and print the answer.
 *
 *   fabricctl -d DIR status
 *   fabricctl -s DIR/ctl.sock fault add '0>1' drop p=0.1
 *
 * Exit status: 0 OK, 1 the fabric answered ERR, 2 usage or connection error.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "commands.h"
#include "control.h"
#include "sock.h"

#define EXIT_ERR 1
#define EXIT_USAGE 2
#define ANSWER_TIMEOUT_S 30

static void G_GNUC_NORETURN die(int status, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);

static void die(int status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("fabricctl: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

/*
 * fabricd runs elsewhere: a relative capture or fault file means ours, not
 * its.
 */
static void absolutize_file(char **words)
{
    if (words[0] && words[1] && words[2] &&
        ((!strcmp(words[0], "capture") && !strcmp(words[1], "start")) ||
         (!strcmp(words[0], "fault") && !strcmp(words[1], "load"))) &&
        !g_path_is_absolute(words[2])) {
        char *abs = g_canonicalize_filename(words[2], NULL);

        g_free(words[2]);
        words[2] = abs;
    }
}

static void send_all(int fd, const char *buf, size_t len, const char *path)
{
    while (len) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            die(EXIT_USAGE, "cannot send to %s: %s", path, g_strerror(errno));
        }
        buf += n;
        len -= n;
    }
}

/* Print answer lines until OK/ERR; returns the exit status. */
static int read_answer(int fd, const char *path)
{
    GString *line = g_string_new(NULL);
    char buf[4096];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            die(EXIT_USAGE, "no answer from %s within %d s", path,
                ANSWER_TIMEOUT_S);
        }
        if (n < 0) {
            die(EXIT_USAGE, "cannot read from %s: %s", path,
                g_strerror(errno));
        }
        if (n == 0) {
            die(EXIT_USAGE, "%s closed the connection before answering",
                path);
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] != '\n') {
                g_string_append_c(line, buf[i]);
                continue;
            }
            if (strcmp(line->str, "OK") == 0) {
                return 0;
            }
            if (g_str_has_prefix(line->str, "ERR")) {
                fprintf(stderr, "fabricctl: %s\n",
                        line->str[3] ? line->str + 4 : "error");
                return EXIT_ERR;
            }
            puts(line->str);
            g_string_truncate(line, 0);
        }
    }
}

int main(int argc, char **argv)
{
    char *socket_path = NULL;
    char *dir = NULL;
    GOptionEntry entries[] = {
        { "socket", 's', 0, G_OPTION_ARG_FILENAME, &socket_path,
          "Control socket of the fabric", "SOCKET" },
        { "dir", 'd', 0, G_OPTION_ARG_FILENAME, &dir,
          "Run directory of the fabric (uses DIR/ctl.sock)", "DIR" },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("COMMAND [ARGS...] - control a running fabricd");
    g_autoptr(GError) err = NULL;
    g_autofree char *description =
        g_strconcat("Commands:\n", fabric_command_help,
                    "\nExamples:\n"
                    "  fabricctl -d DIR counters\n"
                    "  fabricctl -d DIR fault add '0>1' drop p=0.05\n"
                    "  fabricctl -d DIR fault add '2|0,1' down at=1s "
                    "for=500ms\n"
                    "  fabricctl -d DIR fault load faults.txt\n"
                    "  fabricctl -d DIR capture start run.pcapng\n", NULL);
    struct timeval timeout = { .tv_sec = ANSWER_TIMEOUT_S };
    g_autofree char *path = NULL;
    g_autofree char *command = NULL;
    int fd, status;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, description);
    /* Stop at the command: its arguments are not our options. */
    g_option_context_set_strict_posix(ctx, TRUE);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        die(EXIT_USAGE, "%s (see fabricctl --help)", err->message);
    }
    if (!socket_path == !dir) {
        die(EXIT_USAGE, "give the fabric as -s SOCKET or -d DIR "
            "(see fabricctl --help)");
    }
    if (argc < 2) {
        die(EXIT_USAGE, "missing command (see fabricctl --help)");
    }
    path = socket_path ? g_strdup(socket_path)
                       : g_build_filename(dir, "ctl.sock", NULL);

    g_auto(GStrv) words = g_new0(char *, argc);

    for (int i = 1; i < argc; i++) {
        words[i - 1] = g_strdup(argv[i]);
    }
    absolutize_file(words);
    command = g_strjoinv(" ", words);
    if (strchr(command, '\n')) {
        die(EXIT_USAGE, "a command cannot contain a newline");
    }
    if (strlen(command) > CONTROL_MAX_LINE) {
        die(EXIT_USAGE, "command longer than %d bytes", CONTROL_MAX_LINE);
    }

    fd = unix_connect(path, &err);
    if (fd < 0) {
        die(EXIT_USAGE, "cannot reach %s: %s (is the fabric running?)", path,
            err->message);
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    send_all(fd, command, strlen(command), path);
    send_all(fd, "\n", 1, path);
    status = read_answer(fd, path);
    close(fd);
    g_free(socket_path);
    g_free(dir);
    return status;
}
