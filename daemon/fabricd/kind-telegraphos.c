/*
 * Kind "telegraphos": remote-memory NICs on one crossbar, node i on port
 * i.  Unicast DATA goes to the core's path (link state, fault rules,
 * delay, output queue, capture) as a copy from the sender to the target,
 * so each source-destination pair stays in order.  MCAST_WRITE goes to
 * every member of its group, all in the one order fabricd reads them.
 *
 * Nothing is dropped for congestion: when more than TGR_PAUSE_ABOVE bytes
 * wait for a node, fabricd stops reading the ports that sent to it, and
 * reads them again once that queue is below TGR_RESUME_BELOW.  The paused
 * devices then fill their own transmit queues and stall their vCPUs, like
 * a stalled bus write on the real board.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "fabric.h"
#include "proto/fabric-proto.h"
#include "vcluster/hw/tgr_regs.h"

#define TGR_DEFAULT_HOP_NS      250
#define TGR_DEFAULT_LINK_MBPS   100
#define TGR_PAUSE_ABOVE         (1024 * 1024)
#define TGR_RESUME_BELOW        (256 * 1024)
/* Refused frames logged per connection before the log goes quiet. */
#define TGR_LOG_LIMIT           5
/* The largest body after the TGR header: a READ_REP of a whole chunk. */
#define TGR_MAX_BODY            (FABRIC_TGR_REP_HDR_LEN + FABRIC_TGR_MAX_DATA)

typedef struct TgrNode {
    bool linked;            /* HELLO accepted on the current connection */
    bool ever_linked;       /* a later HELLO is a restart: PEER_RESET */
    unsigned logged;        /* refusals logged on this connection */
    unsigned paused_by;     /* congested destinations holding its input */
    GArray *stalled;        /* as a destination: senders paused for it */
    uint64_t frames, bytes; /* DATA taken from it */
    uint64_t mcast;         /* of those, MCAST_WRITEs */
    uint64_t mcast_copies;  /* copies of its MCAST_WRITEs sent on */
    uint64_t unreachable;   /* its frames to a node not linked */
    uint64_t nacks;         /* NACK UNREACHABLE frames sent back to it */
    uint64_t pauses;        /* times its input was paused */
    uint64_t resets;        /* HELLOs after the first one */
    uint64_t flushed;       /* frames for it that a restart threw away */
} TgrNode;

typedef struct TgrKind {
    Fabric *f;
    uint64_t hop_ns, link_mbps;
    TgrNode *node;
    bool *member;           /* [group * nodes + node] */
    unsigned members[FABRIC_TGR_MAX_GROUPS];
    uint64_t group_writes[FABRIC_TGR_MAX_GROUPS];
} TgrKind;

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

static bool *member_of(TgrKind *k, unsigned group, unsigned node)
{
    return &k->member[(size_t)group * k->f->nodes + node];
}

/* Requests wait for an answer or count as sent; replies and NACKs do not. */
static bool op_is_request(uint8_t op)
{
    return op == FABRIC_TGR_WRITE || op == FABRIC_TGR_READ_REQ ||
           op == FABRIC_TGR_ATOMIC_REQ || op == FABRIC_TGR_REQ;
}

static uint64_t deliver_time(TgrKind *k, uint64_t send_ns, size_t len)
{
    return send_ns + k->hop_ns + len * 1000 / k->link_mbps;
}

/* ---- back-pressure ---- */

static void pause_sender(TgrKind *k, unsigned src, unsigned dst)
{
    TgrNode *d = &k->node[dst];
    TgrNode *s = &k->node[src];

    for (guint i = 0; i < d->stalled->len; i++) {
        if (g_array_index(d->stalled, guint, i) == src) {
            return;
        }
    }
    g_array_append_val(d->stalled, src);
    if (s->paused_by++ == 0) {
        s->pauses++;
        port_pause_input(&k->f->ports[src], true);
    }
}

/* `dst` drained or went away: the senders it held may read again. */
static void release_senders(TgrKind *k, unsigned dst)
{
    TgrNode *d = &k->node[dst];

    for (guint i = 0; i < d->stalled->len; i++) {
        unsigned src = g_array_index(d->stalled, guint, i);

        if (--k->node[src].paused_by == 0) {
            port_pause_input(&k->f->ports[src], false);
        }
    }
    g_array_set_size(d->stalled, 0);
}

/* A copy src>dst was queued: past the mark, the sender waits. */
static void check_congestion(TgrKind *k, unsigned src, unsigned dst)
{
    if (k->f->ports[dst].out_bytes > TGR_PAUSE_ABOVE) {
        pause_sender(k, src, dst);
    }
}

static void tgr_output_drained(void *state, unsigned port)
{
    TgrKind *k = state;

    if (k->node[port].stalled->len &&
        k->f->ports[port].out_bytes < TGR_RESUME_BELOW) {
        release_senders(k, port);
    }
}

/* ---- frames from fabricd itself ---- */

static void send_control(TgrKind *k, unsigned node, const uint8_t *pl,
                         size_t len)
{
    FabricHdr h = {
        .kind = FABRIC_KIND_TELEGRAPHOS, .type = FABRIC_TYPE_CONTROL,
        .src = FABRIC_NODE_NONE, .dst = node, .len = len,
    };

    fabric_send_own(k->f, node, &h, pl);
}

/*
 * The sender's request cannot reach `h->dst`: answer NACK UNREACHABLE as
 * if from that node.  fabricd has no sequence of its own: the NACK's
 * header has epoch 0 and seq 0, its body the refused seq.
 */
static void send_unreachable_nack(TgrKind *k, unsigned src,
                                  const FabricHdr *in, const FabricTgrHdr *t)
{
    uint8_t pl[FABRIC_TGR_HDR_LEN + FABRIC_TGR_NACK_LEN] = { 0 };
    FabricTgrHdr nt = {
        .op = FABRIC_TGR_NACK, .tag = t->tag, .eidx = t->eidx,
        .gen = t->gen, .off = t->off,
    };
    FabricHdr h = {
        .kind = FABRIC_KIND_TELEGRAPHOS, .type = FABRIC_TYPE_DATA,
        .src = in->dst, .dst = src, .len = sizeof(pl),
        .send_time_ns = in->send_time_ns,
        .deliver_time_ns = deliver_time(k, in->send_time_ns, sizeof(pl)),
    };
    uint8_t frame[FABRIC_HDR_LEN + sizeof(pl)];
    char comment[32];

    fabric_tgr_hdr_encode(&nt, pl);
    pl[FABRIC_TGR_HDR_LEN] = t->op;
    pl[FABRIC_TGR_HDR_LEN + 1] = TGR_ERR_UNREACHABLE;
    fabric_put_le32(pl + FABRIC_TGR_HDR_LEN + 4, t->seq);
    if (!fabric_send_own(k->f, src, &h, pl)) {
        return;
    }
    k->node[src].nacks++;
    if (k->f->capture) {
        fabric_hdr_encode(&h, frame);
        memcpy(frame + FABRIC_HDR_LEN, pl, sizeof(pl));
        g_snprintf(comment, sizeof(comment), "fabric>node%u", src);
        fabric_capture_frame(k->f, src, frame, sizeof(frame), false, comment);
    }
}

/* ---- frames from a device ---- */

static IngressStatus hello(TgrKind *k, unsigned u, const uint8_t *pl,
                           size_t len, char *why, size_t why_len)
{
    TgrNode *nd = &k->node[u];
    uint8_t ack[FABRIC_TGR_HELLO_ACK_LEN];
    unsigned id;

    if (len != FABRIC_TGR_HELLO_LEN) {
        k->node[u].linked = false;
        return fabric_kind_reject(k->f, u, FABRIC_KIND_TELEGRAPHOS, why,
                                  why_len,
                                  "HELLO payload is %zu bytes; expected %d",
                                  len, FABRIC_TGR_HELLO_LEN);
    }
    id = fabric_get_le16(pl + 1);
    if (id != u) {
        k->node[u].linked = false;
        return fabric_kind_reject(k->f, u, FABRIC_KIND_TELEGRAPHOS, why,
                                  why_len,
                                  "HELLO says node %u but this is the socket "
                                  "of node %u (node%u.sock)", id, u, u);
    }
    if (nd->ever_linked) {
        uint8_t reset[FABRIC_TGR_GROUP_LEN] = { FABRIC_CTL_TGR_PEER_RESET };

        /* a restarted device: what was on its way to the old one is stale */
        nd->resets++;
        nd->flushed += fabric_port_flush(k->f, u);
        tgr_output_drained(k, u);
        fabric_put_le16(reset + 1, u);
        for (unsigned i = 0; i < k->f->nodes; i++) {
            if (i != u && k->node[i].linked) {
                send_control(k, i, reset, sizeof(reset));
            }
        }
    }
    nd->linked = true;
    nd->ever_linked = true;
    nd->logged = 0;
    ack[0] = FABRIC_CTL_HELLO_ACK;
    fabric_put_le16(ack + 1, k->f->nodes);
    send_control(k, u, ack, sizeof(ack));
    return INGRESS_OK;
}

/* JOIN or LEAVE a multicast group. */
static IngressStatus membership(TgrKind *k, unsigned u, const uint8_t *pl,
                                size_t len, char *why, size_t why_len)
{
    const char *what = pl[0] == FABRIC_CTL_TGR_JOIN ? "JOIN" : "LEAVE";
    bool join = pl[0] == FABRIC_CTL_TGR_JOIN;
    unsigned group;
    bool *m;

    if (!k->node[u].linked) {
        return fabric_kind_malformed(why, why_len,
                                     "%s before HELLO", what);
    }
    if (len != FABRIC_TGR_GROUP_LEN) {
        return fabric_kind_malformed(why, why_len,
                                     "%s payload is %zu bytes; expected %d",
                                     what, len, FABRIC_TGR_GROUP_LEN);
    }
    group = fabric_get_le16(pl + 1);
    if (group >= FABRIC_TGR_MAX_GROUPS) {
        return fabric_kind_malformed(why, why_len,
                                     "%s group %u ignored: groups are 0..%d",
                                     what, group, FABRIC_TGR_MAX_GROUPS - 1);
    }
    m = member_of(k, group, u);
    if (*m != join) {
        *m = join;
        k->members[group] += join ? 1 : -1;
    }
    return INGRESS_OK;
}

static void leave_all_groups(TgrKind *k, unsigned u)
{
    for (unsigned g = 0; g < FABRIC_TGR_MAX_GROUPS; g++) {
        bool *m = member_of(k, g, u);

        if (*m) {
            *m = false;
            k->members[g]--;
        }
    }
}

/* The frame as the receivers get it: src stamped, delivery time set. */
static GBytes *outgoing(TgrKind *k, unsigned src, unsigned dst,
                        const FabricHdr *in, const uint8_t *pl, size_t len)
{
    uint8_t *frame = g_malloc(FABRIC_HDR_LEN + len);
    FabricHdr h = {
        .kind = FABRIC_KIND_TELEGRAPHOS, .type = FABRIC_TYPE_DATA,
        .src = src, .dst = dst, .len = len,
        .send_time_ns = in->send_time_ns,
        .deliver_time_ns = deliver_time(k, in->send_time_ns, len),
    };

    fabric_hdr_encode(&h, frame);
    memcpy(frame + FABRIC_HDR_LEN, pl, len);
    return g_bytes_new_take(frame, FABRIC_HDR_LEN + len);
}

static void log_refusal(TgrKind *k, unsigned u, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static void log_refusal(TgrKind *k, unsigned u, const char *fmt, ...)
{
    TgrNode *nd = &k->node[u];
    g_autofree char *text = NULL;
    va_list ap;

    if (nd->logged++ >= TGR_LOG_LIMIT) {
        return;
    }
    va_start(ap, fmt);
    text = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    fprintf(stderr, "fabricd: node%u: %s%s\n", u, text,
            nd->logged == TGR_LOG_LIMIT ?
            " (further refusals on this connection not logged)" : "");
}

static void unicast(TgrKind *k, unsigned u, const FabricHdr *h,
                    const FabricTgrHdr *t, const uint8_t *pl, size_t len)
{
    unsigned dst = h->dst;
    g_autoptr(GBytes) copy = NULL;

    if (dst >= k->f->nodes || !k->node[dst].linked) {
        k->node[u].unreachable++;
        log_refusal(k, u, "%s to node %u refused: %s", op_names[t->op], dst,
                    dst >= k->f->nodes ? "no such node" : "not linked");
        if (op_is_request(t->op)) {
            send_unreachable_nack(k, u, h, t);
        }
        return;
    }
    copy = outgoing(k, u, dst, h, pl, len);
    fabric_send_copy(k->f, u, dst, copy);
    check_congestion(k, u, dst);
}

/* One copy to each member, the sender too, in node order. */
static void multicast(TgrKind *k, unsigned u, const FabricHdr *h,
                      unsigned group, const uint8_t *pl, size_t len)
{
    TgrNode *nd = &k->node[u];
    g_autoptr(GBytes) copy = outgoing(k, u, FABRIC_NODE_ALL, h, pl, len);

    nd->mcast++;
    k->group_writes[group]++;
    for (unsigned m = 0; m < k->f->nodes; m++) {
        if (*member_of(k, group, m)) {
            fabric_send_copy(k->f, u, m, copy);
            check_congestion(k, u, m);
            nd->mcast_copies++;
        }
    }
}

static IngressStatus data(TgrKind *k, unsigned u, const FabricHdr *h,
                          const uint8_t *pl, size_t len, char *why,
                          size_t why_len)
{
    TgrNode *nd = &k->node[u];
    FabricTgrHdr t;

    if (!nd->linked) {
        return fabric_kind_malformed(why, why_len,
                                     "DATA before HELLO");
    }
    if (h->flags) {
        return fabric_kind_malformed(why, why_len,
                                     "DATA with flags 0x%02x; a device sends 0",
                                     h->flags);
    }
    if (!fabric_tgr_hdr_decode(pl, len, &t)) {
        if (len < FABRIC_TGR_HDR_LEN) {
            return fabric_kind_malformed(why, why_len,
                                         "DATA payload of %zu bytes is "
                                         "shorter than the %d-byte TGR header",
                                         len, FABRIC_TGR_HDR_LEN);
        }
        return fabric_kind_malformed(why, why_len,
                                     "DATA with unknown TGR op %u (ops are "
                                     "1..%d)", t.op, FABRIC_TGR_OP_MAX);
    }
    if (len - FABRIC_TGR_HDR_LEN > TGR_MAX_BODY) {
        return fabric_kind_malformed(why, why_len,
                                     "%s body of %zu bytes; at most %d",
                                     op_names[t.op], len - FABRIC_TGR_HDR_LEN,
                                     TGR_MAX_BODY);
    }
    if (t.op == FABRIC_TGR_MCAST_WRITE) {
        unsigned group = t.eidx >> 16;

        if (h->dst != FABRIC_NODE_ALL) {
            return fabric_kind_malformed(why, why_len,
                                         "MCAST_WRITE to dst %u; it goes to "
                                         "dst %u (every member)", h->dst,
                                         FABRIC_NODE_ALL);
        }
        if (group >= FABRIC_TGR_MAX_GROUPS) {
            return fabric_kind_malformed(why, why_len,
                                         "MCAST_WRITE to group %u; groups are "
                                         "0..%d", group,
                                         FABRIC_TGR_MAX_GROUPS - 1);
        }
        nd->frames++;
        nd->bytes += len;
        multicast(k, u, h, group, pl, len);
        return INGRESS_OK;
    }
    if (h->dst == FABRIC_NODE_ALL) {
        return fabric_kind_malformed(why, why_len,
                                     "%s to dst %u (every node): only "
                                     "MCAST_WRITE goes to a group",
                                     op_names[t.op], FABRIC_NODE_ALL);
    }
    nd->frames++;
    nd->bytes += len;
    unicast(k, u, h, &t, pl, len);
    return INGRESS_OK;
}

static IngressStatus control(TgrKind *k, unsigned u, const uint8_t *pl,
                             size_t len, char *why, size_t why_len)
{
    if (len == 0) {
        return fabric_kind_malformed(why, why_len,
                                     "CONTROL frame without an opcode");
    }
    switch (pl[0]) {
    case FABRIC_CTL_HELLO:
        return hello(k, u, pl, len, why, why_len);
    case FABRIC_CTL_TGR_JOIN:
    case FABRIC_CTL_TGR_LEAVE:
        return membership(k, u, pl, len, why, why_len);
    }
    return fabric_kind_malformed(why, why_len,
                                 "CONTROL opcode %u is not one a device sends "
                                 "(%d HELLO, %d JOIN, %d LEAVE)", pl[0],
                                 FABRIC_CTL_HELLO, FABRIC_CTL_TGR_JOIN,
                                 FABRIC_CTL_TGR_LEAVE);
}

static IngressStatus tgr_ingress(void *state, unsigned in_port,
                                 const uint8_t *frame, size_t len, char *why,
                                 size_t why_len)
{
    TgrKind *k = state;
    const uint8_t *pl = frame + FABRIC_HDR_LEN;
    size_t pl_len = len - FABRIC_HDR_LEN;
    FabricHdr h;

    /* fabric_hdr_frame_parse() passed it: a whole frame, a sane header */
    fabric_hdr_decode(frame, &h);
    if (h.kind != FABRIC_KIND_TELEGRAPHOS) {
        IngressStatus st;

        st = fabric_kind_foreign(k->f, in_port, FABRIC_KIND_TELEGRAPHOS,
                                 "telegraphos", &h, pl, pl_len, why, why_len);

        if (st == INGRESS_REJECT_CLOSE) {
            k->node[in_port].linked = false;
        }
        return st;
    }
    switch (h.type) {
    case FABRIC_TYPE_CONTROL:
        return control(k, in_port, pl, pl_len, why, why_len);
    case FABRIC_TYPE_DATA:
        return data(k, in_port, &h, pl, pl_len, why, why_len);
    }
    return fabric_kind_malformed(why, why_len,
                                 "frame type %u is not used by telegraphos",
                                 h.type);
}

/* ---- the kind ---- */

static bool tgr_check_topology(unsigned nodes, const char *topology,
                               GError **err)
{
    if (topology) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--topology does not apply to --kind telegraphos (one "
                    "crossbar, node i on port i)");
        return false;
    }
    return true;
}

static void *tgr_state_new(Fabric *f, const FabricKindOptions *opts,
                           GError **err)
{
    TgrKind *k;

    k = g_new0(TgrKind, 1);
    k->hop_ns = TGR_DEFAULT_HOP_NS;
    k->link_mbps = TGR_DEFAULT_LINK_MBPS;
    if (!fabric_kind_timing(opts, &k->hop_ns, &k->link_mbps, err)) {
        g_free(k);
        return NULL;
    }
    k->f = f;
    k->node = g_new0(TgrNode, f->nodes);
    for (unsigned i = 0; i < f->nodes; i++) {
        k->node[i].stalled = g_array_new(FALSE, FALSE, sizeof(guint));
    }
    k->member = g_new0(bool, (size_t)FABRIC_TGR_MAX_GROUPS * f->nodes);
    /* back-pressure bounds the queues: a copy already read is never lost */
    f->out_limit = SIZE_MAX;
    return k;
}

static void tgr_state_free(void *state)
{
    TgrKind *k = state;

    for (unsigned i = 0; i < k->f->nodes; i++) {
        g_array_free(k->node[i].stalled, TRUE);
    }
    g_free(k->node);
    g_free(k->member);
    g_free(k);
}

static void tgr_port_down(void *state, unsigned port)
{
    TgrKind *k = state;
    TgrNode *nd = &k->node[port];

    nd->linked = false;
    leave_all_groups(k, port);
    if (k->f->shutting_down) {
        return;
    }
    /* its queue is gone: whoever waited for it reads again */
    release_senders(k, port);
    /* and as a sender it waits for nobody: the next connection is fresh */
    for (unsigned d = 0; d < k->f->nodes && nd->paused_by; d++) {
        GArray *stalled = k->node[d].stalled;

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

/* One crossbar: every node reaches every node, itself included. */
static bool tgr_has_link(void *state, unsigned nodes, unsigned from,
                         unsigned to)
{
    return from < nodes && to < nodes;
}

static void tgr_describe_topology(void *state, unsigned nodes, GString *out)
{
    g_string_append(out, "one crossbar, node i on port i; in order per "
                         "pair, no drops for congestion");
}

static void append_members(TgrKind *k, unsigned group, GString *out)
{
    const char *sep = "";

    for (unsigned m = 0; m < k->f->nodes; m++) {
        if (*member_of(k, group, m)) {
            g_string_append_printf(out, "%s%u", sep, m);
            sep = ",";
        }
    }
}

#define U64 "%" G_GUINT64_FORMAT

/* `table`: the multicast groups that have members, "group G: 0,2,3". */
static void tgr_dump_table(void *state, uint64_t now_ns, GString *out)
{
    TgrKind *k = state;
    unsigned shown = 0;

    for (unsigned g = 0; g < FABRIC_TGR_MAX_GROUPS; g++) {
        if (k->members[g]) {
            g_string_append_printf(out, "group %u: ", g);
            append_members(k, g, out);
            g_string_append_c(out, '\n');
            shown++;
        }
    }
    if (!shown) {
        g_string_append(out, "no multicast group has members\n");
    }
}

static void tgr_report(void *state, GString *out, bool counters)
{
    TgrKind *k = state;
    unsigned linked = 0, groups = 0;

    for (unsigned i = 0; i < k->f->nodes; i++) {
        linked += k->node[i].linked;
    }
    for (unsigned g = 0; g < FABRIC_TGR_MAX_GROUPS; g++) {
        groups += k->members[g] != 0;
    }
    if (counters) {
        g_string_append_printf(out, "telegraphos hop_ns=" U64 " link_mbps="
                               U64 " pause_above=%d resume_below=%d "
                               "groups=%u\n", k->hop_ns, k->link_mbps,
                               TGR_PAUSE_ABOVE, TGR_RESUME_BELOW, groups);
    } else {
        g_string_append_printf(out, "telegraphos: hop " U64 " ns, link " U64
                               " MB/s, %u of %u nodes linked, %u multicast "
                               "groups with members\n", k->hop_ns,
                               k->link_mbps, linked, k->f->nodes, groups);
    }
    for (unsigned i = 0; i < k->f->nodes; i++) {
        const TgrNode *nd = &k->node[i];
        const Port *p = &k->f->ports[i];

        if (counters) {
            g_string_append_printf(out, "node %u linked=%d paused=%d", i,
                                   nd->linked, p->input_paused);
        } else {
            g_string_append_printf(out, "node %u: %-8s%s", i,
                                   nd->linked ? "linked" : "unlinked",
                                   p->input_paused ? " paused" : "");
        }
        g_string_append_printf(out, " frames=" U64 " bytes=" U64
                               " held_bytes=%zu pauses=" U64 " mcast=" U64
                               " mcast_copies=" U64 " unreachable=" U64
                               " nacks=" U64 " resets=" U64 " flushed=" U64
                               "\n", nd->frames, nd->bytes, p->out_bytes,
                               nd->pauses, nd->mcast, nd->mcast_copies,
                               nd->unreachable, nd->nacks, nd->resets,
                               nd->flushed);
    }
    for (unsigned g = 0; g < FABRIC_TGR_MAX_GROUPS; g++) {
        if (k->members[g] || k->group_writes[g]) {
            g_string_append_printf(out, "group %u%s writes=" U64 " members=",
                                   g, counters ? "" : ":", k->group_writes[g]);
            append_members(k, g, out);
            g_string_append_c(out, '\n');
        }
    }
}

const FabricKind fabric_kind_telegraphos = {
    .name = "telegraphos",
    .pcap_linktype = PCAP_LINKTYPE_USER0,
    .corrupt_from = FABRIC_HDR_LEN,
    .parse = fabric_hdr_frame_parse,
    .encode_prefix = fabric_hdr_frame_prefix,
    .check_topology = tgr_check_topology,
    .state_new = tgr_state_new,
    .state_free = tgr_state_free,
    .ingress = tgr_ingress,
    .port_down = tgr_port_down,
    .has_link = tgr_has_link,
    .describe_topology = tgr_describe_topology,
    .dump_table = tgr_dump_table,
    .report = tgr_report,
    .output_drained = tgr_output_drained,
};
