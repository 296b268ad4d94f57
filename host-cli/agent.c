/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qemu-guest-agent client: sync, guest-exec, guest-exec-status and
 * guest-file-open/read/write/close.
 */
#include "vcluster.h"

#include <errno.h>

gboolean agent_send_sync(JsonChan *ch, gint64 id, GError **err)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "execute");
    json_builder_add_string_value(b, "guest-sync-delimited");
    json_builder_set_member_name(b, "arguments");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "id");
    json_builder_add_int_value(b, id);
    json_builder_end_object(b);
    json_builder_end_object(b);
    g_autoptr(JsonNode) msg = json_builder_get_root(b);

    /* A leading 0xff makes the agent discard any partial request. */
    return jsonchan_send(ch, "\xff", msg, err);
}

gboolean agent_wait_sync(JsonChan *ch, gint64 id, gint64 deadline_us,
                         GError **err)
{
    for (;;) {
        g_autoptr(JsonNode) reply = jsonchan_recv(ch, deadline_us, err);
        if (!reply) {
            return FALSE;
        }
        JsonObject *o = json_node_get_object(reply);
        JsonNode *ret = o ? json_object_get_member(o, "return") : NULL;

        /* Stale replies of an earlier client may carry anything here. */
        if (ret && JSON_NODE_HOLDS_VALUE(ret) &&
            json_node_get_value_type(ret) == G_TYPE_INT64 &&
            json_node_get_int(ret) == id) {
            return TRUE;
        }
    }
}

/*
 * The agent channel may hold stale bytes from an earlier client, so open it
 * with guest-sync-delimited: the agent answers with 0xff then our id.
 */
JsonChan *agent_open(const char *sock_path, gint64 deadline_us, GError **err)
{
    JsonChan *ch = jsonchan_connect(sock_path, err);
    gint64 id = g_random_int_range(1, G_MAXINT32);

    if (ch && agent_send_sync(ch, id, err) &&
        agent_wait_sync(ch, id, deadline_us, err)) {
        return ch;
    }
    if (err && *err) {
        g_prefix_error(err, "guest agent: ");
    }
    jsonchan_close(ch);
    return NULL;
}

gint64 agent_exec_start(JsonChan *ch, char **argv, gboolean capture,
                        GBytes *input, GError **err)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "path");
    json_builder_add_string_value(b, argv[0]);
    json_builder_set_member_name(b, "arg");
    json_builder_begin_array(b);
    for (int i = 1; argv[i]; i++) {
        json_builder_add_string_value(b, argv[i]);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "capture-output");
    json_builder_add_boolean_value(b, capture);
    if (input && g_bytes_get_size(input)) {
        gsize len;
        const guchar *data = g_bytes_get_data(input, &len);
        g_autofree char *b64 = g_base64_encode(data, len);
        json_builder_set_member_name(b, "input-data");
        json_builder_add_string_value(b, b64);
    }
    json_builder_end_object(b);
    g_autoptr(JsonNode) args = json_builder_get_root(b);

    g_autoptr(JsonNode) ret = jsonchan_call(
        ch, "guest-exec", args, g_get_monotonic_time() + 30 * G_USEC_PER_SEC,
        err);
    if (!ret) {
        return -1;
    }
    return json_object_get_int_member(json_node_get_object(ret), "pid");
}

static GBytes *decode_b64_member(JsonObject *o, const char *member)
{
    const char *s = json_object_get_string_member_with_default(o, member, "");
    gsize len = 0;
    guchar *data = *s ? g_base64_decode(s, &len) : NULL;
    return g_bytes_new_take(data, len);
}

gboolean agent_exec_poll(JsonChan *ch, gint64 pid, AgentExecResult *res,
                         GError **err)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "pid");
    json_builder_add_int_value(b, pid);
    json_builder_end_object(b);
    g_autoptr(JsonNode) args = json_builder_get_root(b);

    g_autoptr(JsonNode) ret = jsonchan_call(
        ch, "guest-exec-status", args,
        g_get_monotonic_time() + 30 * G_USEC_PER_SEC, err);
    if (!ret) {
        return FALSE;
    }
    JsonObject *o = json_node_get_object(ret);
    if (!json_object_get_boolean_member_with_default(o, "exited", FALSE)) {
        return FALSE;
    }
    if (json_object_has_member(o, "signal")) {
        res->exitcode = 128 + (int)json_object_get_int_member(o, "signal");
    } else {
        res->exitcode = (int)json_object_get_int_member_with_default(
            o, "exitcode", 0);
    }
    res->out = decode_b64_member(o, "out-data");
    res->err = decode_b64_member(o, "err-data");
    res->truncated =
        json_object_get_boolean_member_with_default(o, "out-truncated",
                                                    FALSE) ||
        json_object_get_boolean_member_with_default(o, "err-truncated", FALSE);
    return TRUE;
}

gboolean agent_exec_wait(JsonChan *ch, char **argv, gint64 deadline_us,
                         AgentExecResult *res, GError **err)
{
    gint64 pid = agent_exec_start(ch, argv, TRUE, NULL, err);
    if (pid < 0) {
        return FALSE;
    }
    for (int delay_ms = 1;; delay_ms = MIN(delay_ms * 2, 20)) {
        GError *poll_err = NULL;
        if (agent_exec_poll(ch, pid, res, &poll_err)) {
            return TRUE;
        }
        if (poll_err) {
            g_propagate_error(err, poll_err);
            return FALSE;
        }
        if (g_get_monotonic_time() > deadline_us) {
            g_set_error(err, VC_ERROR, ETIMEDOUT, "%s: timed out", argv[0]);
            return FALSE;
        }
        vc_sleep_ms(delay_ms);
    }
}

void agent_exec_result_clear(AgentExecResult *res)
{
    g_clear_pointer(&res->out, g_bytes_unref);
    g_clear_pointer(&res->err, g_bytes_unref);
}

/* Call a guest-file-* command with {"handle": handle, ...}. */
static JsonNode *file_call(JsonChan *ch, const char *cmd, JsonBuilder *b,
                           GError **err)
{
    json_builder_end_object(b);
    g_autoptr(JsonNode) args = json_builder_get_root(b);

    return jsonchan_call(ch, cmd, args,
                         g_get_monotonic_time() + 30 * G_USEC_PER_SEC, err);
}

static JsonBuilder *file_args(gint64 handle)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "handle");
    json_builder_add_int_value(b, handle);
    return b;
}

/* The reply's object, or NULL with err: a reply we cannot use. */
static JsonObject *reply_object(JsonNode *ret, const char *cmd, GError **err)
{
    if (!JSON_NODE_HOLDS_OBJECT(ret)) {
        g_set_error(err, VC_ERROR, EPROTO, "%s: unexpected reply", cmd);
        return NULL;
    }
    return json_node_get_object(ret);
}

gint64 agent_file_open(JsonChan *ch, const char *path, const char *mode,
                       GError **err)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "path");
    json_builder_add_string_value(b, path);
    json_builder_set_member_name(b, "mode");
    json_builder_add_string_value(b, mode);
    g_autoptr(JsonNode) ret = file_call(ch, "guest-file-open", b, err);

    if (!ret) {
        return -1;
    }
    if (!JSON_NODE_HOLDS_VALUE(ret) ||
        json_node_get_value_type(ret) != G_TYPE_INT64 ||
        json_node_get_int(ret) < 0) {
        g_set_error(err, VC_ERROR, EPROTO, "guest-file-open: no handle in "
                    "the reply");
        return -1;
    }
    return json_node_get_int(ret);
}

GBytes *agent_file_read(JsonChan *ch, gint64 handle, gsize count,
                        gboolean *eof, GError **err)
{
    g_autoptr(JsonBuilder) b = file_args(handle);
    json_builder_set_member_name(b, "count");
    json_builder_add_int_value(b, count);
    g_autoptr(JsonNode) ret = file_call(ch, "guest-file-read", b, err);
    JsonObject *o = ret ? reply_object(ret, "guest-file-read", err) : NULL;

    if (!o) {
        return NULL;
    }
    GBytes *data = decode_b64_member(o, "buf-b64");
    gint64 said = json_object_get_int_member_with_default(o, "count", -1);
    if (said != (gint64)g_bytes_get_size(data) ||
        g_bytes_get_size(data) > count) {
        g_set_error(err, VC_ERROR, EPROTO, "guest-file-read: %" G_GSIZE_FORMAT
                    " bytes in a reply that says %" G_GINT64_FORMAT,
                    g_bytes_get_size(data), said);
        g_bytes_unref(data);
        return NULL;
    }
    *eof = json_object_get_boolean_member_with_default(o, "eof", FALSE);
    return data;
}

gboolean agent_file_write(JsonChan *ch, gint64 handle, const void *data,
                          gsize len, GError **err)
{
    g_autofree char *b64 = g_base64_encode(data, len);
    g_autoptr(JsonBuilder) b = file_args(handle);
    json_builder_set_member_name(b, "buf-b64");
    json_builder_add_string_value(b, b64);
    json_builder_set_member_name(b, "count");
    json_builder_add_int_value(b, len);
    g_autoptr(JsonNode) ret = file_call(ch, "guest-file-write", b, err);
    JsonObject *o = ret ? reply_object(ret, "guest-file-write", err) : NULL;

    if (!o) {
        return FALSE;
    }
    gint64 wrote = json_object_get_int_member_with_default(o, "count", -1);
    if (wrote != (gint64)len) {
        g_set_error(err, VC_ERROR, EIO, "guest-file-write: wrote %"
                    G_GINT64_FORMAT " of %" G_GSIZE_FORMAT " bytes", wrote,
                    len);
        return FALSE;
    }
    return TRUE;
}

gboolean agent_file_close(JsonChan *ch, gint64 handle, GError **err)
{
    g_autoptr(JsonBuilder) b = file_args(handle);
    g_autoptr(JsonNode) ret = file_call(ch, "guest-file-close", b, err);

    return ret != NULL;
}
