/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Newline-delimited JSON over a unix stream socket: QMP and the guest agent. */
#include "vcluster.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define JSONCHAN_MAX_LINE (64 * 1024 * 1024)
#define JSONCHAN_CONNECT_US (15 * G_USEC_PER_SEC)

struct JsonChan {
    int fd;
    GString *in;
};

G_DEFINE_QUARK(vcluster-error-quark, vc_error)

JsonChan *jsonchan_connect(const char *path, GError **err)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        g_set_error(err, VC_ERROR, 0, "socket path too long: %s", path);
        return NULL;
    }
    strcpy(sa.sun_path, path);
    /*
     * Not blocking: a QEMU chardev serves one client, and while another
     * holds it a full backlog would hold connect() for as long.
     */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    gint64 deadline = g_get_monotonic_time() + JSONCHAN_CONNECT_US;
    int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    while (rc < 0 && errno == EAGAIN &&
           g_get_monotonic_time() < deadline) {
        vc_sleep_ms(10);
        rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    }
    if (rc < 0 || fcntl(fd, F_SETFL, 0) < 0) {
        g_set_error(err, VC_ERROR, errno, "cannot connect to %s: %s", path,
                    errno == EAGAIN ? "busy (another client holds it)"
                                    : g_strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return NULL;
    }
    JsonChan *ch = g_new0(JsonChan, 1);
    ch->fd = fd;
    ch->in = g_string_new(NULL);
    return ch;
}

void jsonchan_close(JsonChan *ch)
{
    if (!ch) {
        return;
    }
    close(ch->fd);
    g_string_free(ch->in, TRUE);
    g_free(ch);
}

gboolean jsonchan_send(JsonChan *ch, const char *prefix, JsonNode *msg,
                       GError **err)
{
    g_autofree char *text = json_to_string(msg, FALSE);
    g_autoptr(GString) out = g_string_new(prefix ? prefix : "");
    g_string_append(out, text);
    g_string_append_c(out, '\n');

    for (gsize done = 0; done < out->len;) {
        ssize_t n = send(ch->fd, out->str + done, out->len - done,
                         MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            g_set_error(err, VC_ERROR, errno, "send: %s", g_strerror(errno));
            return FALSE;
        }
        done += n;
    }
    return TRUE;
}

/* Read more input; FALSE on error, timeout or EOF. */
static gboolean fill(JsonChan *ch, gint64 deadline_us, GError **err)
{
    for (;;) {
        gint64 left = deadline_us - g_get_monotonic_time();
        if (left <= 0) {
            g_set_error(err, VC_ERROR, ETIMEDOUT, "timed out");
            return FALSE;
        }
        struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
        int r = poll(&pfd, 1, (int)MIN(left / 1000 + 1, 1000));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            continue;
        }
        char buf[65536];
        ssize_t n = read(ch->fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            g_set_error(err, VC_ERROR, ECONNRESET, "connection closed");
            return FALSE;
        }
        if (ch->in->len + n > JSONCHAN_MAX_LINE) {
            g_set_error(err, VC_ERROR, EMSGSIZE, "reply too large");
            return FALSE;
        }
        g_string_append_len(ch->in, buf, n);
        return TRUE;
    }
}

JsonNode *jsonchan_recv(JsonChan *ch, gint64 deadline_us, GError **err)
{
    for (;;) {
        char *nl = memchr(ch->in->str, '\n', ch->in->len);
        if (nl) {
            gsize len = nl - ch->in->str;
            g_autofree char *line = g_strndup(ch->in->str, len);
            g_string_erase(ch->in, 0, len + 1);
            g_strstrip(line);
            /* 0xff delimiters from the agent may precede a reply. */
            char *start = line;
            while (*start == '\xff') {
                start++;
            }
            if (!*start) {
                continue;
            }
            g_autoptr(JsonParser) parser = json_parser_new();
            if (!json_parser_load_from_data(parser, start, -1, NULL)) {
                continue;       /* garbage from a half-open channel */
            }
            JsonNode *root = json_parser_get_root(parser);
            if (root && JSON_NODE_HOLDS_OBJECT(root)) {
                return json_node_copy(root);
            }
            continue;
        }
        if (!fill(ch, deadline_us, err)) {
            return NULL;
        }
    }
}

JsonNode *jsonchan_call(JsonChan *ch, const char *cmd, JsonNode *args,
                        gint64 deadline_us, GError **err)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "execute");
    json_builder_add_string_value(b, cmd);
    if (args) {
        json_builder_set_member_name(b, "arguments");
        json_builder_add_value(b, json_node_copy(args));
    }
    json_builder_end_object(b);
    g_autoptr(JsonNode) msg = json_builder_get_root(b);

    if (!jsonchan_send(ch, NULL, msg, err)) {
        return NULL;
    }
    for (;;) {
        g_autoptr(JsonNode) reply = jsonchan_recv(ch, deadline_us, err);
        if (!reply) {
            g_prefix_error(err, "%s: ", cmd);
            return NULL;
        }
        JsonObject *o = json_node_get_object(reply);
        if (json_object_has_member(o, "return")) {
            return json_node_copy(json_object_get_member(o, "return"));
        }
        if (json_object_has_member(o, "error")) {
            JsonObject *e = json_object_get_object_member(o, "error");
            const char *desc = e ? json_object_get_string_member_with_default(
                                       e, "desc", "unknown error")
                                 : "unknown error";
            g_set_error(err, VC_ERROR, 0, "%s: %s", cmd, desc);
            return NULL;
        }
        /* An asynchronous event (QMP): not ours, keep reading. */
    }
}
