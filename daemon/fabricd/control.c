/*
 * Control socket server.  Each client has an input buffer cut into lines
 * and an output buffer; a client that stops reading its answers stops
 * having its commands run, so it cannot make fabricd buffer without bound.
 * A client that neither sends nor reads for the idle timeout is closed, and
 * with every slot taken the longest idle one makes room for a newcomer, so
 * silent connections cannot lock fabricctl out.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE     /* accept4 */
#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "commands.h"
#include "control.h"
#include "sock.h"

typedef struct CtlClient {
    Control *ctl;
    int fd;
    guint in_watch;         /* 0 while paused or after EOF */
    guint out_watch;        /* armed while output is blocked */
    GByteArray *in;
    GString *out;
    size_t out_sent;
    bool discarding;        /* inside an overlong line: skip to newline */
    bool eof;               /* peer sent everything: close once answered */
    gint64 active_us;       /* monotonic time of the last byte either way */
} CtlClient;

struct Control {
    Fabric *fabric;
    char *path;
    int listen_fd;
    guint listen_watch;
    GList *clients;
    unsigned idle_ms;
    guint sweep;            /* closes idle clients */
};

static gboolean client_readable(int fd, GIOCondition cond, gpointer opaque);
static gboolean client_writable(int fd, GIOCondition cond, gpointer opaque);

static void client_close(CtlClient *c)
{
    if (c->in_watch) {
        g_source_remove(c->in_watch);
    }
    if (c->out_watch) {
        g_source_remove(c->out_watch);
    }
    close(c->fd);
    c->ctl->clients = g_list_remove(c->ctl->clients, c);
    c->ctl->fabric->ctl.clients--;
    g_byte_array_unref(c->in);
    g_string_free(c->out, TRUE);
    g_free(c);
}

static size_t pending_output(const CtlClient *c)
{
    return c->out->len - c->out_sent;
}

static void answer_error(CtlClient *c, const char *msg)
{
    g_autofree char *one_line = g_strdup(msg);

    g_strdelimit(one_line, "\r\n", ' ');
    g_string_append_printf(c->out, "ERR %s\n", one_line);
}

static void run_line(CtlClient *c, char *line, size_t len)
{
    g_autoptr(GError) err = NULL;

    if (len && line[len - 1] == '\r') {
        line[--len] = '\0';
    }
    if (memchr(line, '\0', len)) {
        answer_error(c, "command contains a NUL byte");
        return;
    }
    if (fabric_command(c->ctl->fabric, line, c->out, &err)) {
        g_string_append(c->out, "OK\n");
    } else {
        answer_error(c, err->message);
    }
}

/* Run complete lines until none is left or too much output is waiting. */
static void run_buffered_lines(CtlClient *c)
{
    while (pending_output(c) < CONTROL_OUT_HIGH) {
        /* an empty GByteArray has no data at all: memchr(NULL) is UB */
        uint8_t *nl = c->in->len ? memchr(c->in->data, '\n', c->in->len)
                                 : NULL;
        size_t len;

        if (!nl) {
            if (c->in->len > CONTROL_MAX_LINE) {
                if (!c->discarding) {
                    answer_error(c, "line too long (limit 4096 bytes)");
                    c->discarding = true;
                }
                g_byte_array_set_size(c->in, 0);
            } else if (c->eof && c->in->len && !c->discarding) {
                /* A last command without its newline still counts. */
                g_byte_array_append(c->in, (const uint8_t *)"", 1);
                run_line(c, (char *)c->in->data, c->in->len - 1);
                g_byte_array_set_size(c->in, 0);
            }
            return;
        }
        len = nl - c->in->data;
        if (c->discarding) {
            c->discarding = false;      /* the tail of an overlong line */
        } else if (len > CONTROL_MAX_LINE) {
            answer_error(c, "line too long (limit 4096 bytes)");
        } else {
            *nl = '\0';
            run_line(c, (char *)c->in->data, len);
        }
        g_byte_array_remove_range(c->in, 0, len + 1);
    }
}

/*
 * Send what we can, then decide what the client waits for next.  Returns
 * false if the client was closed.
 */
static bool client_flush(CtlClient *c)
{
    while (pending_output(c)) {
        ssize_t n = send(c->fd, c->out->str + c->out_sent, pending_output(c),
                         MSG_NOSIGNAL | MSG_DONTWAIT);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        }
        if (n < 0) {
            client_close(c);
            return false;
        }
        c->out_sent += n;
        c->active_us = g_get_monotonic_time();
    }
    if (!pending_output(c)) {
        g_string_truncate(c->out, 0);
        c->out_sent = 0;
    }
    if (pending_output(c) && !c->out_watch) {
        c->out_watch = g_unix_fd_add(c->fd, G_IO_OUT, client_writable, c);
    }
    if (!pending_output(c) && c->eof) {
        client_close(c);
        return false;
    }
    /* Paused for backpressure and drained: listen to the client again. */
    if (!c->eof && !c->in_watch && pending_output(c) < CONTROL_OUT_HIGH) {
        c->in_watch = g_unix_fd_add(c->fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                    client_readable, c);
    }
    if (c->in_watch && pending_output(c) >= CONTROL_OUT_HIGH) {
        g_source_remove(c->in_watch);
        c->in_watch = 0;
    }
    return true;
}

static gboolean client_writable(int fd, GIOCondition cond, gpointer opaque)
{
    CtlClient *c = opaque;

    c->out_watch = 0;       /* this source ends; client_flush re-arms */
    run_buffered_lines(c);
    client_flush(c);
    return G_SOURCE_REMOVE;
}

static gboolean client_readable(int fd, GIOCondition cond, gpointer opaque)
{
    CtlClient *c = opaque;
    uint8_t buf[CONTROL_MAX_LINE];
    ssize_t n = read(fd, buf, sizeof(buf));

    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        return G_SOURCE_CONTINUE;
    }
    if (n <= 0) {
        /* EOF (or a reset): answer what was sent, then close. */
        c->eof = true;
        c->in_watch = 0;
        run_buffered_lines(c);
        client_flush(c);
        return G_SOURCE_REMOVE;
    }
    c->active_us = g_get_monotonic_time();
    g_byte_array_append(c->in, buf, n);
    run_buffered_lines(c);
    /* client_flush() may close the client or pause this watch. */
    if (!client_flush(c)) {
        return G_SOURCE_REMOVE;
    }
    return c->in_watch ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

/* Close `c` with a last best-effort line saying why. */
static void client_drop(CtlClient *c, const char *why)
{
    g_autofree char *line = g_strdup_printf("ERR %s\n", why);

    /* not in the middle of an answer */
    if (!pending_output(c)) {
        (void)send(c->fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    client_close(c);
}

/* Every slot is taken: close the longest idle client if it is idle enough. */
static bool evict_idlest(Control *ctl)
{
    CtlClient *idlest = NULL;

    for (GList *l = ctl->clients; l; l = l->next) {
        CtlClient *c = l->data;

        if (!idlest || c->active_us < idlest->active_us) {
            idlest = c;
        }
    }
    if (!idlest || g_get_monotonic_time() - idlest->active_us <
                   (gint64)MIN(CONTROL_EVICT_MS, ctl->idle_ms) * 1000) {
        return false;
    }
    ctl->fabric->ctl.evicted++;
    client_drop(idlest, "closed: idle, and a new control connection needs "
                        "the slot");
    return true;
}

static gboolean sweep_idle(gpointer opaque)
{
    Control *ctl = opaque;
    gint64 oldest = g_get_monotonic_time() - (gint64)ctl->idle_ms * 1000;
    GList *l = ctl->clients;

    while (l) {
        CtlClient *c = l->data;

        l = l->next;        /* client_drop() unlinks c */
        if (c->active_us <= oldest) {
            ctl->fabric->ctl.idle_closed++;
            client_drop(c, "closed: idle too long");
        }
    }
    return G_SOURCE_CONTINUE;
}

static gboolean control_acceptable(int listen_fd, GIOCondition cond,
                                   gpointer opaque)
{
    Control *ctl = opaque;
    int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (fd < 0) {
        return G_SOURCE_CONTINUE;
    }
    if (g_list_length(ctl->clients) >= CONTROL_MAX_CLIENTS &&
        !evict_idlest(ctl)) {
        static const char busy[] = "ERR too many control connections\n";

        /* Best effort: the client is refused either way. */
        (void)send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(fd);
        ctl->fabric->ctl.refused++;
        return G_SOURCE_CONTINUE;
    }
    CtlClient *c = g_new0(CtlClient, 1);

    ctl->fabric->ctl.accepted++;
    ctl->fabric->ctl.clients++;
    c->ctl = ctl;
    c->fd = fd;
    c->active_us = g_get_monotonic_time();
    c->in = g_byte_array_new();
    c->out = g_string_new(NULL);
    c->in_watch = g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                client_readable, c);
    ctl->clients = g_list_prepend(ctl->clients, c);
    return G_SOURCE_CONTINUE;
}

Control *control_new(Fabric *f, const char *path, unsigned idle_ms,
                     GError **err)
{
    int fd = unix_listen(path, err);

    if (fd < 0) {
        return NULL;
    }
    Control *ctl = g_new0(Control, 1);

    ctl->fabric = f;
    ctl->path = g_strdup(path);
    ctl->listen_fd = fd;
    ctl->listen_watch = g_unix_fd_add(fd, G_IO_IN, control_acceptable, ctl);
    ctl->idle_ms = idle_ms;
    f->ctl.idle_ms = idle_ms;
    /* a client is closed at most a quarter of the timeout late */
    ctl->sweep = g_timeout_add(MAX(idle_ms / 4, 25), sweep_idle, ctl);
    return ctl;
}

void control_free(Control *ctl)
{
    if (!ctl) {
        return;
    }
    while (ctl->clients) {
        client_close(ctl->clients->data);
    }
    g_source_remove(ctl->sweep);
    g_source_remove(ctl->listen_watch);
    close(ctl->listen_fd);
    unlink(ctl->path);
    g_free(ctl->path);
    g_free(ctl);
}
