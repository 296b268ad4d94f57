/*
 * The telegraphos network model (telegraphos-net.h): node state, multicast
 * groups and back-pressure accounting of the one crossbar.  No sockets:
 * kind-telegraphos.c connects it to fabricd's ports and capture.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "telegraphos-net.h"

struct TgrNet {
    TgrConfig cfg;
    TgrOps ops;
    void *opaque;
    TgrNode *node;
    bool *member;           /* [group * nodes + node] */
    unsigned members[FABRIC_TGR_MAX_GROUPS];
    uint64_t group_writes[FABRIC_TGR_MAX_GROUPS];
};

static const char *const op_names[] = {
    [FABRIC_TGR_WRITE] = "WRITE",
    [FABRIC_TGR_READ_REQ] = "READ_REQ",
    [FABRIC_TGR_READ_REP] = "READ_REP",
    [FABRIC_TGR_ATOMIC_REQ] = "ATOMIC_REQ",
    [FABRIC_TGR_ATOMIC_REP] = "ATOMIC_REP",
    [FABRIC_TGR_REQ] = "REQ",
    [FABRIC_TGR_MCAST_WRITE] = "MCAST_WRITE",
    [FABRIC_TGR_NACK] = "NACK",
};

TgrNet *tgrnet_new(const TgrConfig *cfg, const TgrOps *ops, void *opaque)
{
    TgrNet *n = g_new0(TgrNet, 1);

    n->cfg = *cfg;
    n->ops = *ops;
    n->opaque = opaque;
    n->node = g_new0(TgrNode, cfg->nodes);
    for (unsigned i = 0; i < cfg->nodes; i++) {
        n->node[i].stalled = g_array_new(FALSE, FALSE, sizeof(guint));
    }
    n->member = g_new0(bool, (size_t)FABRIC_TGR_MAX_GROUPS * cfg->nodes);
    return n;
}

void tgrnet_free(TgrNet *n)
{
    if (!n) {
        return;
    }
    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        g_array_free(n->node[i].stalled, TRUE);
    }
    g_free(n->node);
    g_free(n->member);
    g_free(n);
}

const TgrConfig *tgrnet_config(const TgrNet *n)
{
    return &n->cfg;
}

TgrNode *tgrnet_node(TgrNet *n, unsigned node)
{
    return &n->node[node];
}

const char *tgrnet_op_name(uint8_t op)
{
    return op < G_N_ELEMENTS(op_names) && op_names[op] ? op_names[op] : "?";
}

bool tgrnet_op_is_request(uint8_t op)
{
    return op == FABRIC_TGR_WRITE || op == FABRIC_TGR_READ_REQ ||
           op == FABRIC_TGR_ATOMIC_REQ || op == FABRIC_TGR_REQ;
}

uint64_t tgrnet_deliver_time(const TgrNet *n, uint64_t send_ns, size_t len)
{
    return send_ns + n->cfg.hop_ns + len * 1000 / n->cfg.link_mbps;
}

static bool *member_of(const TgrNet *n, unsigned group, unsigned node)
{
    return &n->member[(size_t)group * n->cfg.nodes + node];
}

/* ---- connections ---- */

bool tgrnet_hello(TgrNet *n, unsigned node)
{
    TgrNode *nd = &n->node[node];
    bool restart = nd->ever_linked;

    if (restart) {
        nd->resets++;
    }
    nd->linked = true;
    nd->ever_linked = true;
    nd->logged = 0;
    return restart;
}

void tgrnet_unlink(TgrNet *n, unsigned node)
{
    n->node[node].linked = false;
}

/* ---- frames from a device ---- */

static TgrData malformed(char *why, size_t why_len, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static TgrData malformed(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    return TGR_DATA_MALFORMED;
}

TgrData tgrnet_data(TgrNet *n, unsigned u, const FabricHdr *h,
                    const uint8_t *pl, size_t len, FabricTgrHdr *t,
                    unsigned *group, char *why, size_t why_len)
{
    TgrNode *nd = &n->node[u];
    unsigned dst = h->dst;

    if (!nd->linked) {
        return malformed(why, why_len, "DATA before HELLO");
    }
    if (h->flags) {
        return malformed(why, why_len,
                         "DATA with flags 0x%02x; a device sends 0",
                         h->flags);
    }
    if (!fabric_tgr_hdr_decode(pl, len, t)) {
        if (len < FABRIC_TGR_HDR_LEN) {
            return malformed(why, why_len,
                             "DATA payload of %zu bytes is shorter than "
                             "the %d-byte TGR header",
                             len, FABRIC_TGR_HDR_LEN);
        }
        return malformed(why, why_len,
                         "DATA with unknown TGR op %u (ops are 1..%d)",
                         t->op, FABRIC_TGR_OP_MAX);
    }
    if (len - FABRIC_TGR_HDR_LEN > TGR_MAX_BODY) {
        return malformed(why, why_len, "%s body of %zu bytes; at most %d",
                         op_names[t->op], len - FABRIC_TGR_HDR_LEN,
                         TGR_MAX_BODY);
    }
    if (t->op == FABRIC_TGR_MCAST_WRITE) {
        unsigned g = t->eidx >> 16;

        if (dst != FABRIC_NODE_ALL) {
            return malformed(why, why_len,
                             "MCAST_WRITE to dst %u; it goes to dst %u "
                             "(every member)", dst, FABRIC_NODE_ALL);
        }
        if (g >= FABRIC_TGR_MAX_GROUPS) {
            return malformed(why, why_len,
                             "MCAST_WRITE to group %u; groups are 0..%d", g,
                             FABRIC_TGR_MAX_GROUPS - 1);
        }
        nd->frames++;
        nd->bytes += len;
        nd->mcast++;
        n->group_writes[g]++;
        *group = g;
        return TGR_DATA_MCAST;
    }
    if (dst == FABRIC_NODE_ALL) {
        return malformed(why, why_len,
                         "%s to dst %u (every node): only MCAST_WRITE goes "
                         "to a group", op_names[t->op], FABRIC_NODE_ALL);
    }
    nd->frames++;
    nd->bytes += len;
    if (dst >= n->cfg.nodes || !n->node[dst].linked) {
        nd->unreachable++;
        return TGR_DATA_UNREACHABLE;
    }
    return TGR_DATA_UNICAST;
}

bool tgrnet_membership(TgrNet *n, unsigned u, const uint8_t *pl, size_t len,
                       char *why, size_t why_len)
{
    const char *what = pl[0] == FABRIC_CTL_TGR_JOIN ? "JOIN" : "LEAVE";
    bool join = pl[0] == FABRIC_CTL_TGR_JOIN;
    uint16_t group;
    bool *m;

    if (!n->node[u].linked) {
        malformed(why, why_len, "%s before HELLO", what);
        return false;
    }
    if (!fabric_tgr_group_decode(pl, len, &group)) {
        malformed(why, why_len, "%s payload is %zu bytes; expected %d",
                  what, len, FABRIC_TGR_GROUP_LEN);
        return false;
    }
    if (group >= FABRIC_TGR_MAX_GROUPS) {
        malformed(why, why_len, "%s group %u ignored: groups are 0..%d",
                  what, group, FABRIC_TGR_MAX_GROUPS - 1);
        return false;
    }
    m = member_of(n, group, u);
    if (*m != join) {
        *m = join;
        n->members[group] += join ? 1 : -1;
    }
    return true;
}

bool tgrnet_is_member(const TgrNet *n, unsigned group, unsigned node)
{
    return *member_of(n, group, node);
}

unsigned tgrnet_group_members(const TgrNet *n, unsigned group)
{
    return n->members[group];
}

uint64_t tgrnet_group_writes(const TgrNet *n, unsigned group)
{
    return n->group_writes[group];
}

unsigned tgrnet_groups_in_use(const TgrNet *n)
{
    unsigned groups = 0;

    for (unsigned g = 0; g < FABRIC_TGR_MAX_GROUPS; g++) {
        groups += n->members[g] != 0;
    }
    return groups;
}

static void leave_all_groups(TgrNet *n, unsigned u)
{
    for (unsigned g = 0; g < FABRIC_TGR_MAX_GROUPS; g++) {
        bool *m = member_of(n, g, u);

        if (*m) {
            *m = false;
            n->members[g]--;
        }
    }
}

/* ---- back-pressure ---- */

static void pause_sender(TgrNet *n, unsigned src, unsigned dst)
{
    TgrNode *d = &n->node[dst];
    TgrNode *s = &n->node[src];

    for (guint i = 0; i < d->stalled->len; i++) {
        if (g_array_index(d->stalled, guint, i) == src) {
            return;
        }
    }
    g_array_append_val(d->stalled, src);
    if (s->paused_by++ == 0) {
        s->pauses++;
        n->ops.pause_input(n->opaque, src, true);
    }
}

/* `dst` drained or went away: the senders it held may read again. */
static void release_senders(TgrNet *n, unsigned dst)
{
    TgrNode *d = &n->node[dst];

    for (guint i = 0; i < d->stalled->len; i++) {
        unsigned src = g_array_index(d->stalled, guint, i);

        if (--n->node[src].paused_by == 0) {
            n->ops.pause_input(n->opaque, src, false);
        }
    }
    g_array_set_size(d->stalled, 0);
}

/* Past the mark, the sender waits. */
void tgrnet_queued(TgrNet *n, unsigned src, unsigned dst, size_t dst_bytes)
{
    if (dst_bytes > TGR_PAUSE_ABOVE) {
        pause_sender(n, src, dst);
        /* and dst itself: its requests would only make more replies to it */
        pause_sender(n, dst, dst);
    }
}

void tgrnet_drained(TgrNet *n, unsigned dst, size_t dst_bytes)
{
    if (n->node[dst].stalled->len && dst_bytes < TGR_RESUME_BELOW) {
        release_senders(n, dst);
    }
}

void tgrnet_port_down(TgrNet *n, unsigned port, bool shutting_down)
{
    TgrNode *nd = &n->node[port];

    nd->linked = false;
    leave_all_groups(n, port);
    if (shutting_down) {
        return;
    }
    /* its queue is gone: whoever waited for it reads again */
    release_senders(n, port);
    /* and as a sender it waits for nobody: the next connection is fresh */
    for (unsigned d = 0; d < n->cfg.nodes && nd->paused_by; d++) {
        GArray *stalled = n->node[d].stalled;

        for (guint i = 0; i < stalled->len; i++) {
            if (g_array_index(stalled, guint, i) == port) {
                g_array_remove_index_fast(stalled, i);
                nd->paused_by--;
                break;
            }
        }
    }
    nd->paused_by = 0;
}

/* ---- text ---- */

void tgrnet_append_members(const TgrNet *n, unsigned group, GString *out)
{
    const char *sep = "";

    for (unsigned m = 0; m < n->cfg.nodes; m++) {
        if (*member_of(n, group, m)) {
            g_string_append_printf(out, "%s%u", sep, m);
            sep = ",";
        }
    }
}

void tgrnet_dump_groups(const TgrNet *n, GString *out)
{
    unsigned shown = 0;

    for (unsigned g = 0; g < FABRIC_TGR_MAX_GROUPS; g++) {
        if (n->members[g]) {
            g_string_append_printf(out, "group %u: ", g);
            tgrnet_append_members(n, g, out);
            g_string_append_c(out, '\n');
            shown++;
        }
    }
    if (!shown) {
        g_string_append(out, "no multicast group has members\n");
    }
}
