/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QMP client: greeting and capability negotiation. */
#include "vcluster.h"

JsonChan *qmp_open(const char *sock_path, gint64 deadline_us, GError **err)
{
    JsonChan *ch = jsonchan_connect(sock_path, err);
    if (!ch) {
        return NULL;
    }
    g_autoptr(JsonNode) greeting = jsonchan_recv(ch, deadline_us, err);
    if (!greeting ||
        !json_object_has_member(json_node_get_object(greeting), "QMP")) {
        if (greeting) {
            g_set_error(err, VC_ERROR, 0, "%s: not a QMP socket", sock_path);
        }
        jsonchan_close(ch);
        return NULL;
    }
    g_autoptr(JsonNode) ret = jsonchan_call(ch, "qmp_capabilities", NULL,
                                            deadline_us, err);
    if (!ret) {
        jsonchan_close(ch);
        return NULL;
    }
    return ch;
}

char *qmp_wait_event(JsonChan *ch, const char *const *names, gint64 deadline_us,
                     GError **err)
{
    for (;;) {
        g_autoptr(JsonNode) msg = jsonchan_recv(ch, deadline_us, err);
        if (!msg) {
            return NULL;
        }
        const char *event = json_object_get_string_member_with_default(
            json_node_get_object(msg), "event", NULL);
        if (event && g_strv_contains(names, event)) {
            return g_strdup(event);
        }
    }
}
