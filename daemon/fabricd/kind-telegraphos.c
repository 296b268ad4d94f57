/*
 * Kind "telegraphos": remote-memory NICs on one crossbar, node i on port
 * i.  Unicast DATA goes to the core's path (link state, fault rules,
 * delay, output queue, capture) as a copy from the sender to the target,
 * so each source-destination pair stays in order.  MCAST_WRITE goes to
 * every member of its group, all in the one order fabricd reads them.
 * The network model (telegraphos-net.c) keeps the nodes, the groups and
 * the back-pressure accounting; this file connects it to fabricd's ports
 * and capture.
 *
 * Nothing is dropped for congestion: when more than TGR_PAUSE_ABOVE bytes
 * wait for a node, fabricd stops reading the ports that sent to it, and the
 * node itself (whatever it sends makes replies to it), and reads them again
 * once that queue is below TGR_RESUME_BELOW.  A port stops after the frame
 * that paused it, so each sender adds at most one frame (and a duplicate
 * rule's copy of it) past the mark: the queue stays below tgr_out_limit(),
 * and a peer past even that is cut off.
 * The paused devices then fill their own transmit queues and stall their
 * vCPUs, like a stalled bus write on the real board.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "fabric.h"
#include "telegraphos-net.h"
#include "vcluster/hw/tgr_regs.h"

/* Refused frames logged per connection before the log goes quiet. */
#define TGR_LOG_LIMIT           5
/* The largest frame a device sends that fabricd takes: a READ_REP. */
#define TGR_FRAME_MAX   (FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN + TGR_MAX_BODY)
/* The smallest frame fabricd queues: a PEER_RESET. */
#define TGR_FRAME_MIN   (FABRIC_HDR_LEN + FABRIC_TGR_GROUP_LEN)

/*
 * A port's hard bound, in cost: the pause mark, then one frame from each
 * node (a port stops after the frame that paused it) and its duplicate (a
 * duplicate rule makes at most one), each frame charged its bookkeeping.
 * Back-pressure keeps every port below it; a port that still reaches it
 * is cut off (counted as an overflow), never dropped from.
 */
static size_t tgr_out_limit(unsigned nodes)
{
    size_t bytes = TGR_PAUSE_ABOVE + (size_t)nodes * 2 * TGR_FRAME_MAX;
    size_t frames = bytes / TGR_FRAME_MIN + 1;

    return bytes + frames * FABRIC_FRAME_COST;
}

typedef struct TgrKind {
    Fabric *f;
    TgrNet *net;
} TgrKind;

static void tgr_pause_input(void *opaque, unsigned node, bool pause)
{
    TgrKind *k = opaque;

    port_pause_input(&k->f->ports[node], pause);
}

/* What waits for `node`, queued or held in the delay line. */
static size_t waiting(TgrKind *k, unsigned node)
{
    const Port *p = &k->f->ports[node];

    return p->out_bytes + p->held_bytes;
}

static void tgr_output_drained(void *state, unsigned port)
{
    TgrKind *k = state;

    tgrnet_drained(k->net, port, waiting(k, port));
}

/* ---- frames from fabricd itself ---- */

/* A CONTROL frame to `node` that `cause` made fabricd send. */
static void send_control(TgrKind *k, unsigned cause, unsigned node,
                         const uint8_t *pl, size_t len)
{
    FabricHdr h = {
        .kind = FABRIC_KIND_TELEGRAPHOS, .type = FABRIC_TYPE_CONTROL,
        .src = FABRIC_NODE_NONE, .dst = node, .len = len,
    };

    if (fabric_send_own(k->f, node, &h, pl)) {
        /* own frames count too: a HELLO flood waits for its receivers */
        tgrnet_queued(k->net, cause, node, waiting(k, node));
    }
}

/*
 * The sender's request cannot reach `h->dst`: answer NACK UNREACHABLE as
 * if from that node.  fabricd has no sequence of its own: the NACK's
 * header has epoch 0 and seq 0, its body the refused seq.
 */
static void send_unreachable_nack(TgrKind *k, unsigned src,
                                  const FabricHdr *in, const FabricTgrHdr *t)
{
    uint8_t pl[FABRIC_TGR_HDR_LEN + FABRIC_TGR_NACK_LEN];
    FabricTgrHdr nt = {
        .op = FABRIC_TGR_NACK, .tag = t->tag, .eidx = t->eidx,
        .gen = t->gen, .off = t->off,
    };
    FabricTgrNack body = {
        .op = t->op, .reason = TGR_ERR_UNREACHABLE, .seq = t->seq,
    };
    FabricHdr h = {
        .kind = FABRIC_KIND_TELEGRAPHOS, .type = FABRIC_TYPE_DATA,
        .src = in->dst, .dst = src, .len = sizeof(pl),
        .send_time_ns = in->send_time_ns,
        .deliver_time_ns = tgrnet_deliver_time(k->net, in->send_time_ns,
                                               sizeof(pl)),
    };
    uint8_t frame[FABRIC_HDR_LEN + sizeof(pl)];
    char comment[32];

    fabric_tgr_hdr_encode(&nt, pl);
    fabric_tgr_nack_encode(&body, pl + FABRIC_TGR_HDR_LEN);
    if (!fabric_send_own(k->f, src, &h, pl)) {
        return;
    }
    /* a sender that floods refused requests and never reads waits */
    tgrnet_queued(k->net, src, src, waiting(k, src));
    tgrnet_node(k->net, src)->nacks++;
    if (k->f->capture) {
        fabric_hdr_encode(&h, frame);
        memcpy(frame + FABRIC_HDR_LEN, pl, sizeof(pl));
        g_snprintf(comment, sizeof(comment), "fabric>node%u", src);
        fabric_capture_frame(k->f, src, frame, sizeof(frame), false, comment);
    }
}

/* ---- frames from a device ---- */

static void tgr_hello(void *state, unsigned u, FabricHelloAck *ack)
{
    TgrKind *k = state;

    if (tgrnet_hello(k->net, u)) {
        uint8_t reset[FABRIC_TGR_GROUP_LEN];

        /* a restarted device: what was on its way to the old one is stale */
        tgrnet_node(k->net, u)->flushed += fabric_port_flush(k->f, u);
        tgr_output_drained(k, u);
        fabric_tgr_group_encode(FABRIC_CTL_TGR_PEER_RESET, u, reset);
        for (unsigned i = 0; i < k->f->nodes; i++) {
            if (i != u && tgrnet_node(k->net, i)->linked) {
                send_control(k, u, i, reset, sizeof(reset));
            }
        }
    }
}

static void tgr_hello_refused(void *state, unsigned u)
{
    TgrKind *k = state;

    tgrnet_unlink(k->net, u);
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
        .deliver_time_ns = tgrnet_deliver_time(k->net, in->send_time_ns,
                                               len),
    };

    fabric_hdr_encode(&h, frame);
    memcpy(frame + FABRIC_HDR_LEN, pl, len);
    return g_bytes_new_take(frame, FABRIC_HDR_LEN + len);
}

static void log_refusal(TgrKind *k, unsigned u, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static void log_refusal(TgrKind *k, unsigned u, const char *fmt, ...)
{
    TgrNode *nd = tgrnet_node(k->net, u);
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

/* A copy src>dst: queued, and past the mark the sender waits. */
static void send_copy(TgrKind *k, unsigned src, unsigned dst, GBytes *copy)
{
    fabric_send_copy(k->f, src, dst, copy);
    tgrnet_queued(k->net, src, dst, waiting(k, dst));
}

static void unreachable(TgrKind *k, unsigned u, const FabricHdr *h,
                        const FabricTgrHdr *t)
{
    log_refusal(k, u, "%s to node %u refused: %s", tgrnet_op_name(t->op),
                h->dst, h->dst >= k->f->nodes ? "no such node" : "not linked");
    if (tgrnet_op_is_request(t->op)) {
        send_unreachable_nack(k, u, h, t);
    }
}

/* One copy to each member, the sender too, in node order. */
static void multicast(TgrKind *k, unsigned u, const FabricHdr *h,
                      unsigned group, const uint8_t *pl, size_t len)
{
    TgrNode *nd = tgrnet_node(k->net, u);
    g_autoptr(GBytes) copy = outgoing(k, u, FABRIC_NODE_ALL, h, pl, len);

    for (unsigned m = 0; m < k->f->nodes; m++) {
        if (tgrnet_is_member(k->net, group, m)) {
            send_copy(k, u, m, copy);
            nd->mcast_copies++;
        }
    }
}

static IngressStatus data(TgrKind *k, unsigned u, const FabricHdr *h,
                          const uint8_t *pl, size_t len, char *why,
                          size_t why_len)
{
    g_autoptr(GBytes) copy = NULL;
    FabricTgrHdr t;
    unsigned group = 0;

    switch (tgrnet_data(k->net, u, h, pl, len, &t, &group, why, why_len)) {
    case TGR_DATA_MALFORMED:
        return INGRESS_MALFORMED;
    case TGR_DATA_MCAST:
        multicast(k, u, h, group, pl, len);
        break;
    case TGR_DATA_UNREACHABLE:
        unreachable(k, u, h, &t);
        break;
    case TGR_DATA_UNICAST:
        copy = outgoing(k, u, h->dst, h, pl, len);
        send_copy(k, u, h->dst, copy);
        break;
    }
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
    case FABRIC_CTL_TGR_JOIN:
    case FABRIC_CTL_TGR_LEAVE:
        return tgrnet_membership(k->net, u, pl, len, why, why_len) ?
               INGRESS_OK : INGRESS_MALFORMED;
    }
    return fabric_kind_malformed(why, why_len,
                                 "CONTROL opcode %u is not one a device sends "
                                 "(%d HELLO, %d JOIN, %d LEAVE)", pl[0],
                                 FABRIC_CTL_HELLO, FABRIC_CTL_TGR_JOIN,
                                 FABRIC_CTL_TGR_LEAVE);
}

static IngressStatus tgr_ingress(void *state, unsigned in_port,
                                 const FabricHdr *h, const uint8_t *frame,
                                 size_t len, char *why, size_t why_len)
{
    TgrKind *k = state;
    const uint8_t *pl = frame + FABRIC_HDR_LEN;
    size_t pl_len = len - FABRIC_HDR_LEN;

    /* fabric_kind_ingress() passed it: this kind, not a HELLO */
    switch (h->type) {
    case FABRIC_TYPE_CONTROL:
        return control(k, in_port, pl, pl_len, why, why_len);
    case FABRIC_TYPE_DATA:
        return data(k, in_port, h, pl, pl_len, why, why_len);
    }
    return fabric_kind_malformed(why, why_len,
                                 "frame type %u is not used by telegraphos",
                                 h->type);
}

/* ---- the kind ---- */

static void *tgr_state_new(Fabric *f, const FabricKindOptions *opts,
                           GError **err)
{
    static const TgrOps ops = { .pause_input = tgr_pause_input };
    TgrConfig cfg = {
        .nodes = f->nodes,
        .hop_ns = TGR_DEFAULT_HOP_NS,
        .link_mbps = TGR_DEFAULT_LINK_MBPS,
    };
    TgrKind *k;

    if (!fabric_kind_timing(opts, &cfg.hop_ns, &cfg.link_mbps, err)) {
        return NULL;
    }
    k = g_new0(TgrKind, 1);
    k->f = f;
    k->net = tgrnet_new(&cfg, &ops, k);
    /* back-pressure bounds the queues: a copy already read is never lost */
    f->no_drop = true;
    f->out_limit = tgr_out_limit(f->nodes);
    return k;
}

static void tgr_state_free(void *state)
{
    TgrKind *k = state;

    tgrnet_free(k->net);
    g_free(k);
}

static void tgr_port_down(void *state, unsigned port)
{
    TgrKind *k = state;

    tgrnet_port_down(k->net, port, k->f->shutting_down);
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

#define U64 "%" G_GUINT64_FORMAT

/* `table`: the multicast groups that have members, "group G: 0,2,3". */
static void tgr_dump_table(void *state, uint64_t now_ns, GString *out)
{
    TgrKind *k = state;

    tgrnet_dump_groups(k->net, out);
}

static void tgr_report(void *state, GString *out, bool counters)
{
    TgrKind *k = state;
    const TgrConfig *cfg = tgrnet_config(k->net);
    unsigned linked = 0, groups = tgrnet_groups_in_use(k->net);

    for (unsigned i = 0; i < k->f->nodes; i++) {
        linked += tgrnet_node(k->net, i)->linked;
    }
    if (counters) {
        g_string_append_printf(out, "telegraphos hop_ns=" U64 " link_mbps="
                               U64 " pause_above=%d resume_below=%d "
                               "port_limit=%zu groups=%u\n", cfg->hop_ns,
                               cfg->link_mbps, TGR_PAUSE_ABOVE,
                               TGR_RESUME_BELOW, k->f->out_limit, groups);
    } else {
        g_string_append_printf(out, "telegraphos: hop " U64 " ns, link " U64
                               " MB/s, %u of %u nodes linked, %u multicast "
                               "groups with members\n", cfg->hop_ns,
                               cfg->link_mbps, linked, k->f->nodes, groups);
    }
    for (unsigned i = 0; i < k->f->nodes; i++) {
        const TgrNode *nd = tgrnet_node(k->net, i);
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
        uint64_t writes = tgrnet_group_writes(k->net, g);

        if (tgrnet_group_members(k->net, g) || writes) {
            g_string_append_printf(out, "group %u%s writes=" U64 " members=",
                                   g, counters ? "" : ":", writes);
            tgrnet_append_members(k->net, g, out);
            g_string_append_c(out, '\n');
        }
    }
}

/* Every frame crosses the crossbar: its delay. */
static uint64_t tgr_lookahead_ns(void *state)
{
    TgrKind *k = state;

    return tgrnet_config(k->net)->hop_ns;
}

const FabricKind fabric_kind_telegraphos = {
    .name = "telegraphos",
    .id = FABRIC_KIND_TELEGRAPHOS,
    .pcap_linktype = PCAP_LINKTYPE_USER0,
    .corrupt_from = FABRIC_HDR_LEN,
    .parse = fabric_hdr_frame_parse,
    .encode_prefix = fabric_hdr_frame_prefix,
    .state_new = tgr_state_new,
    .state_free = tgr_state_free,
    .ingress = tgr_ingress,
    .hello = tgr_hello,
    .hello_refused = tgr_hello_refused,
    .port_down = tgr_port_down,
    .has_link = tgr_has_link,
    .describe_topology = tgr_describe_topology,
    .dump_table = tgr_dump_table,
    .report = tgr_report,
    .output_drained = tgr_output_drained,
    .lookahead_ns = tgr_lookahead_ns,
};
