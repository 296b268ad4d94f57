/*
 * Kind "myrinet": LANai-style cards through crossbar switches.  A card
 * sends a source-routed DATA frame; this kind walks the route through the
 * switches of the topology (myrinet-topo.c), each switch consuming one
 * route byte, and drops a bad route counted by reason at the switch where
 * it failed.  A good route gives the packet, route consumed, to the core's
 * path (link state, fault rules, delay, output queue, capture) as a copy
 * from the sending node to the node reached: links and fault rules are
 * end to end, and corruption starts at the packet, after the header.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "fabric.h"
#include "vcluster/fabric/myrinet-topo.h"

#define MYRI_DEFAULT_HOP_NS     300
#define MYRI_DEFAULT_LINK_MBPS  250     /* Myrinet-2000, per direction */
/* Route drops logged per connection before the log goes quiet. */
#define MYRI_LOG_LIMIT          5

/* Why a packet was dropped: the walk's failures, or no card at the end. */
enum {
    DROP_FIRST = MYRI_WALK_NOT_ROUTE,
    DROP_UNLINKED = MYRI_WALK_RESULTS,
    DROP_REASONS,
};

typedef struct MyriNode {
    bool linked;            /* HELLO accepted on the current connection */
    unsigned logged;        /* route drops logged on this connection */
    uint64_t sent;          /* DATA frames taken from the card */
    uint64_t misrouted;     /* of those, dropped on the way */
    uint64_t resets;        /* HELLOs on a linked connection */
    uint64_t flushed;       /* frames for it that a reset threw away */
} MyriNode;

typedef struct MyriSwitchCounters {
    uint64_t forwarded;     /* packets it passed on through a cable */
    uint64_t drops[DROP_REASONS];
} MyriSwitchCounters;

typedef struct MyriKind {
    Fabric *f;
    MyriTopo *topo;
    uint64_t hop_ns, link_mbps;
    MyriNode *node;
    MyriSwitchCounters *sw;
} MyriKind;

static const char *drop_name(unsigned reason)
{
    return reason == DROP_UNLINKED ? "unlinked"
                                   : myri_walk_result_name(reason);
}

/* ---- frames from a card ---- */

static void myri_hello(void *state, unsigned u, FabricHelloAck *ack)
{
    MyriKind *k = state;
    MyriNode *nd = &k->node[u];
    const MyriAttach *at = &k->topo->node[u];

    if (nd->linked) {
        /* a card reset: what was on its way to the old card is stale */
        nd->resets++;
        nd->flushed += fabric_port_flush(k->f, u);
    }
    nd->linked = true;
    nd->logged = 0;
    ack->extra_len = FABRIC_MYRI_HELLO_ACK_EXTRA;
    ack->extra[FABRIC_MYRI_ACK_SWITCH] = at->sw;
    ack->extra[FABRIC_MYRI_ACK_PORT] = at->port;
}

static void count_drop(MyriKind *k, const MyriWalk *w, unsigned reason)
{
    MyriNode *nd = &k->node[w->src];

    k->sw[w->sw].drops[reason]++;
    nd->misrouted++;
    if (nd->logged++ < MYRI_LOG_LIMIT) {
        g_autoptr(GString) text = g_string_new(NULL);

        if (reason == DROP_UNLINKED) {
            g_string_printf(text, "unlinked: node%u has no card linked to "
                            "the fabric", w->dst);
        } else {
            myri_walk_describe(k->topo, w, text);
        }
        fprintf(stderr, "fabricd: node%u: packet dropped: %s%s\n", w->src,
                text->str, nd->logged == MYRI_LOG_LIMIT ?
                " (further drops on this connection not logged)" : "");
    }
}

/* The packet after its route, stamped and sent on as a copy src>dst. */
static void deliver(MyriKind *k, const MyriWalk *w, const FabricHdr *in,
                    const uint8_t *pl, size_t len)
{
    size_t out_len = len - w->route_len;
    uint8_t *frame = g_malloc(FABRIC_HDR_LEN + out_len);
    /* wormhole routing: every switch adds its delay, bytes go by once */
    FabricHdr h = {
        .kind = FABRIC_KIND_MYRINET, .type = FABRIC_TYPE_DATA,
        .src = w->src, .dst = w->dst, .len = out_len,
        .send_time_ns = in->send_time_ns,
        .deliver_time_ns = in->send_time_ns + w->hops * k->hop_ns +
                           len * 1000 / k->link_mbps,
    };
    g_autoptr(GBytes) copy = NULL;

    fabric_hdr_encode(&h, frame);
    memcpy(frame + FABRIC_HDR_LEN, pl + w->route_len, out_len);
    copy = g_bytes_new_take(frame, FABRIC_HDR_LEN + out_len);
    fabric_send_copy(k->f, w->src, w->dst, copy);
}

static IngressStatus data(MyriKind *k, unsigned u, const FabricHdr *h,
                          const uint8_t *pl, size_t len, char *why,
                          size_t why_len)
{
    MyriNode *nd = &k->node[u];
    size_t route, packet;
    MyriWalk w;

    if (!nd->linked) {
        return fabric_kind_malformed(why, why_len,
                                     "DATA before HELLO");
    }
    if (h->flags != FABRIC_F_ROUTED || h->dst != FABRIC_NODE_NONE) {
        return fabric_kind_malformed(why, why_len,
                                     "DATA with flags 0x%02x and dst %u; a "
                                     "card sends flags 0x%02x (routed) and "
                                     "dst %u (the route decides)", h->flags,
                                     h->dst, FABRIC_F_ROUTED, FABRIC_NODE_NONE);
    }
    if (len < 1 + FABRIC_MYRI_CRC_LEN) {
        return fabric_kind_malformed(why, why_len,
                                     "DATA payload of %zu bytes has no room "
                                     "for a packet and its CRC", len);
    }
    if (!fabric_myri_split(pl, len, &route, &packet)) {
        return fabric_kind_malformed(why, why_len,
                                     "DATA has a packet of %zu bytes after "
                                     "%zu route bytes; a packet has 1..%d",
                                     packet, route, FABRIC_MYRI_MAX_PACKET);
    }
    nd->sent++;
    myri_topo_walk(k->topo, u, pl, len - FABRIC_MYRI_CRC_LEN, &w);
    for (unsigned i = 0; i < w.hops; i++) {
        k->sw[w.path[i]].forwarded++;
    }
    if (w.result != MYRI_WALK_DELIVERED) {
        count_drop(k, &w, w.result);
    } else if (!k->node[w.dst].linked) {
        count_drop(k, &w, DROP_UNLINKED);
    } else {
        deliver(k, &w, h, pl, len);
    }
    return INGRESS_OK;
}

static IngressStatus myri_ingress(void *state, unsigned in_port,
                                  const FabricHdr *h, const uint8_t *frame,
                                  size_t len, char *why, size_t why_len)
{
    MyriKind *k = state;
    const uint8_t *pl = frame + FABRIC_HDR_LEN;
    size_t pl_len = len - FABRIC_HDR_LEN;

    /* fabric_kind_ingress() passed it: this kind, not a HELLO */
    switch (h->type) {
    case FABRIC_TYPE_CONTROL:
        return fabric_kind_malformed(why, why_len,
                                     "CONTROL frame without an opcode a card "
                                     "sends (1 HELLO)");
    case FABRIC_TYPE_DATA:
        return data(k, in_port, h, pl, pl_len, why, why_len);
    }
    return fabric_kind_malformed(why, why_len,
                                 "frame type %u is not used by myrinet",
                                 h->type);
}

/* ---- the kind ---- */

static void *myri_state_new(Fabric *f, const FabricKindOptions *opts,
                            GError **err)
{
    MyriKind *k = g_new0(MyriKind, 1);

    k->hop_ns = MYRI_DEFAULT_HOP_NS;
    k->link_mbps = MYRI_DEFAULT_LINK_MBPS;
    if (!fabric_kind_timing(opts, &k->hop_ns, &k->link_mbps, err)) {
        g_free(k);
        return NULL;
    }
    k->topo = myri_topo_new(opts->topology, f->nodes, err);
    if (!k->topo) {
        g_free(k);
        return NULL;
    }
    k->f = f;
    k->node = g_new0(MyriNode, f->nodes);
    k->sw = g_new0(MyriSwitchCounters, k->topo->switches);
    return k;
}

static void myri_state_free(void *state)
{
    MyriKind *k = state;

    myri_topo_free(k->topo);
    g_free(k->node);
    g_free(k->sw);
    g_free(k);
}

/* A refused HELLO, or a closed connection: the card is off the fabric. */
static void myri_port_down(void *state, unsigned port)
{
    MyriKind *k = state;

    k->node[port].linked = false;
}

/* Every node reaches every node, itself included (route 0x80). */
static bool myri_has_link(void *state, unsigned nodes, unsigned from,
                          unsigned to)
{
    return from < nodes && to < nodes;
}

static void myri_describe_topology(void *state, unsigned nodes, GString *out)
{
    MyriKind *k = state;

    myri_topo_describe(k->topo, out);
}

/* `table`: the route from every node to every node, "SRC>DST HEX". */
static void myri_dump_table(void *state, uint64_t now_ns, GString *out)
{
    MyriKind *k = state;
    MyriRoute *routes = g_new(MyriRoute, k->f->nodes);

    for (unsigned s = 0; s < k->f->nodes; s++) {
        myri_topo_routes(k->topo, s, routes);
        for (unsigned d = 0; d < k->f->nodes; d++) {
            g_string_append_printf(out, "%u>%u ", s, d);
            myri_route_append_hex(&routes[d], out);
            g_string_append_c(out, '\n');
        }
    }
    g_free(routes);
}

#define U64 "%" G_GUINT64_FORMAT

static void append_drops(const uint64_t *drops, GString *out)
{
    for (unsigned r = DROP_FIRST; r < DROP_REASONS; r++) {
        g_string_append_printf(out, " %s=" U64, drop_name(r), drops[r]);
    }
}

static void myri_report(void *state, GString *out, bool counters)
{
    MyriKind *k = state;
    uint64_t total[DROP_REASONS] = { 0 };
    unsigned linked = 0;

    for (unsigned s = 0; s < k->topo->switches; s++) {
        for (unsigned r = DROP_FIRST; r < DROP_REASONS; r++) {
            total[r] += k->sw[s].drops[r];
        }
    }
    for (unsigned i = 0; i < k->f->nodes; i++) {
        linked += k->node[i].linked;
    }
    if (counters) {
        g_string_append_printf(out, "myrinet hop_ns=" U64 " link_mbps=" U64,
                               k->hop_ns, k->link_mbps);
        append_drops(total, out);
    } else {
        g_string_append_printf(out, "myrinet: hop " U64 " ns, link " U64
                               " MB/s, %u of %u nodes linked; dropped:",
                               k->hop_ns, k->link_mbps, linked, k->f->nodes);
        append_drops(total, out);
    }
    g_string_append_c(out, '\n');
    for (unsigned i = 0; i < k->f->nodes; i++) {
        const MyriNode *nd = &k->node[i];
        const MyriAttach *at = &k->topo->node[i];

        if (counters) {
            g_string_append_printf(out, "node %u linked=%d switch=%u port=%u",
                                   i, nd->linked, at->sw, at->port);
        } else {
            g_string_append_printf(out, "node %u: %-8s switch%u port%u", i,
                                   nd->linked ? "linked" : "unlinked",
                                   at->sw, at->port);
        }
        g_string_append_printf(out, " sent=" U64 " misrouted=" U64
                               " resets=" U64 " flushed=" U64 "\n", nd->sent,
                               nd->misrouted, nd->resets, nd->flushed);
    }
    for (unsigned s = 0; s < k->topo->switches; s++) {
        g_string_append_printf(out, "switch %u%s ports=%u forwarded=" U64, s,
                               counters ? "" : ":", k->topo->sw[s].ports,
                               k->sw[s].forwarded);
        append_drops(k->sw[s].drops, out);
        g_string_append_c(out, '\n');
    }
}

/* Every route crosses a switch: its delay. */
static uint64_t myri_lookahead_ns(void *state)
{
    MyriKind *k = state;

    return k->hop_ns;
}

const FabricKind fabric_kind_myrinet = {
    .name = "myrinet",
    .id = FABRIC_KIND_MYRINET,
    .pcap_linktype = PCAP_LINKTYPE_USER0,
    .corrupt_from = FABRIC_HDR_LEN,
    .parse = fabric_hdr_frame_parse,
    .encode_prefix = fabric_hdr_frame_prefix,
    .state_new = myri_state_new,
    .state_free = myri_state_free,
    .ingress = myri_ingress,
    .hello = myri_hello,
    .hello_refused = myri_port_down,
    .port_down = myri_port_down,
    .has_link = myri_has_link,
    .describe_topology = myri_describe_topology,
    .dump_table = myri_dump_table,
    .report = myri_report,
    .lookahead_ns = myri_lookahead_ns,
};
