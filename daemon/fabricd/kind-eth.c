/*
 * Kind "eth": an L2 learning switch between virtio-net NICs.
 *
 * Free-running, the NICs are QEMU `-netdev stream` clients: a 4-byte
 * big-endian length, then one Ethernet frame, switched at once.
 *
 * In lock-step (fabric_kind_eth_lockstep) each NIC's netdev carries the
 * vcluster-eth-link filter (qemu-hw/eth-link.c): frames have the 32-byte
 * fabric header of kind eth, the link opens with HELLO through the kind
 * layer, and every copy is stamped with its delivery time: a
 * store-and-forward switch, each node's cable serialising one frame at a
 * time in each direction at the link rate, and the switch's delay between.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "ethswitch.h"
#include "fabric.h"
#include "kind.h"
#include "proto/eth.h"

static FrameStatus eth_parse(const uint8_t *buf, size_t avail,
                             FrameSpan *span)
{
    uint32_t len;

    if (avail < FABRIC_ETH_LEN_PREFIX) {
        return FRAME_NEED_MORE;
    }
    len = (uint32_t)buf[0] << 24 | buf[1] << 16 | buf[2] << 8 | buf[3];
    if (len > FABRIC_ETH_MAX_FRAME) {
        /*
         * The length is garbage, so where the next frame starts is
         * unknowable: the stream is lost.
         */
        g_snprintf(span->why, sizeof(span->why),
                   "frame length %u exceeds %u", len, FABRIC_ETH_MAX_FRAME);
        return FRAME_FATAL;
    }
    if (avail - FABRIC_ETH_LEN_PREFIX < len) {
        return FRAME_NEED_MORE;
    }
    span->consumed = FABRIC_ETH_LEN_PREFIX + len;
    span->offset = FABRIC_ETH_LEN_PREFIX;
    span->len = len;
    if (len < FABRIC_ETH_MIN_FRAME) {
        g_snprintf(span->why, sizeof(span->why),
                   "frame length %u is below the Ethernet header's %u", len,
                   FABRIC_ETH_MIN_FRAME);
        return FRAME_SKIP;
    }
    return FRAME_OK;
}

static size_t eth_encode_prefix(size_t frame_len, uint8_t *prefix)
{
    prefix[0] = frame_len >> 24;
    prefix[1] = frame_len >> 16;
    prefix[2] = frame_len >> 8;
    prefix[3] = frame_len;
    return FABRIC_ETH_LEN_PREFIX;
}

/*
 * The timing option named when free-running eth is given one (--topology
 * is refused by the fabric library's topology check, in its own words).
 */
static void eth_option_error(const char *option, GError **err)
{
    g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s does not apply to --kind eth (it is for ps1, "
                "myrinet and telegraphos); eth takes it with --lockstep",
                option);
}

static void *eth_state_new(Fabric *f, const FabricKindOptions *opts,
                           GError **err)
{
    const char *option = opts->hop_ns >= 0 ? "--hop-ns"
                         : opts->link_mbps >= 0 ? "--link-mbps" : NULL;

    if (option) {
        eth_option_error(option, err);
        return NULL;
    }
    return eth_switch_new(ETH_SWITCH_DEFAULT_MAX, ETH_SWITCH_DEFAULT_AGE_NS);
}

static void eth_state_free(void *state)
{
    eth_switch_free(state);
}

static void eth_route(void *state, unsigned in_port, const uint8_t *frame,
                      size_t len, const bool *connected, unsigned nodes,
                      uint64_t now_ns, GArray *dests)
{
    unsigned out_port;

    switch (eth_switch_forward(state, frame, in_port, now_ns, &out_port)) {
    case ETH_FWD_UNICAST:
        g_array_append_val(dests, out_port);
        return;
    case ETH_FWD_DROP:
        return;
    case ETH_FWD_FLOOD:
        for (guint i = 0; i < nodes; i++) {
            if (i != in_port && connected[i]) {
                g_array_append_val(dests, i);
            }
        }
        return;
    }
}

static void eth_port_down(void *state, unsigned port)
{
    eth_switch_forget_port(state, port);
}

static bool eth_has_link(void *state, unsigned nodes, unsigned from,
                         unsigned to)
{
    return from < nodes && to < nodes && from != to;
}

static void eth_describe_topology(void *state, unsigned nodes, GString *out)
{
    g_string_append_printf(out, "learning switch, %u ports, "
                           "full mesh of directed links", nodes);
}

static void append_entry(const uint8_t *mac, unsigned port, uint64_t age_ns,
                         void *opaque)
{
    g_string_append_printf(opaque,
                           "%02x:%02x:%02x:%02x:%02x:%02x port=%u age=%"
                           G_GUINT64_FORMAT "\n",
                           mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
                           port, age_ns / 1000000000u);
}

static void eth_dump_table(void *state, uint64_t now_ns, GString *out)
{
    eth_switch_foreach(state, now_ns, append_entry, out);
}

const FabricKind fabric_kind_eth = {
    .name = "eth",
    .pcap_linktype = PCAP_LINKTYPE_ETHERNET,
    .corrupt_from = 0,
    .lockstep_kind = &fabric_kind_eth_lockstep,
    .parse = eth_parse,
    .encode_prefix = eth_encode_prefix,
    .state_new = eth_state_new,
    .state_free = eth_state_free,
    .route = eth_route,
    .port_down = eth_port_down,
    .has_link = eth_has_link,
    .describe_topology = eth_describe_topology,
    .dump_table = eth_dump_table,
};

/* ---- lock-step: header framing, delivery stamps ---- */

#define ETH_LS_DEFAULT_HOP_NS       5000
#define ETH_LS_DEFAULT_LINK_MBPS    125     /* gigabit */

typedef struct EthLsNode {
    bool linked;            /* HELLO accepted on the current connection */
    uint64_t up_free;       /* its cable into the switch is free from */
    uint64_t down_free;     /* the switch's cable to it is free from */
    uint64_t sent;          /* DATA frames taken from the NIC */
    uint64_t flooded;       /* of those, sent to every other node */
    uint64_t resets;        /* HELLOs on a linked connection */
    uint64_t flushed;       /* frames for it that a reset threw away */
} EthLsNode;

typedef struct EthLs {
    Fabric *f;
    EthSwitch *sw;
    uint64_t hop_ns, link_mbps;
    EthLsNode *node;
} EthLs;

/*
 * The time a frame of `len` bytes (no FCS, as the NICs pass it) takes on
 * a cable: padded to the 60-byte minimum, plus FCS (4), preamble and
 * start of frame (8) and the inter-frame gap (12).
 */
static uint64_t eth_ls_wire_ns(const EthLs *k, size_t len)
{
    return (MAX(len, FABRIC_ETH_MIN_PADDED) + FABRIC_ETH_WIRE_EXTRA) *
           1000 / k->link_mbps;
}

static void *eth_ls_state_new(Fabric *f, const FabricKindOptions *opts,
                              GError **err)
{
    EthLs *k = g_new0(EthLs, 1);

    k->hop_ns = ETH_LS_DEFAULT_HOP_NS;
    k->link_mbps = ETH_LS_DEFAULT_LINK_MBPS;
    if (!fabric_kind_timing(opts, &k->hop_ns, &k->link_mbps, err)) {
        g_free(k);
        return NULL;
    }
    k->f = f;
    k->sw = eth_switch_new(ETH_SWITCH_DEFAULT_MAX, ETH_SWITCH_DEFAULT_AGE_NS);
    k->node = g_new0(EthLsNode, f->nodes);
    return k;
}

static void eth_ls_state_free(void *state)
{
    EthLs *k = state;

    eth_switch_free(k->sw);
    g_free(k->node);
    g_free(k);
}

static void eth_ls_hello(void *state, unsigned port, FabricHelloAck *ack)
{
    EthLs *k = state;
    EthLsNode *nd = &k->node[port];

    if (nd->linked) {
        /* a NIC reset: what was on its way to the old one is stale */
        nd->resets++;
        nd->flushed += fabric_port_flush(k->f, port);
        eth_switch_forget_port(k->sw, port);
    }
    nd->linked = true;
    ack->extra_len = 0;
}

/* A refused HELLO, or a closed connection: the NIC is off the switch. */
static void eth_ls_port_down(void *state, unsigned port)
{
    EthLs *k = state;

    k->node[port].linked = false;
    eth_switch_forget_port(k->sw, port);
}

/* One copy of the frame, stamped, down the cable to `to`. */
static void eth_ls_copy(EthLs *k, unsigned from, unsigned to,
                        const FabricHdr *in, const uint8_t *pl, size_t len,
                        uint64_t at_switch)
{
    EthLsNode *dn = &k->node[to];
    uint64_t done = MAX(at_switch, dn->down_free) + eth_ls_wire_ns(k, len);
    FabricHdr h = {
        .kind = FABRIC_KIND_ETH, .type = FABRIC_TYPE_DATA,
        .src = from, .dst = to, .len = len,
        .send_time_ns = in->send_time_ns, .deliver_time_ns = done,
    };
    uint8_t *frame = g_malloc(FABRIC_HDR_LEN + len);
    g_autoptr(GBytes) copy = NULL;

    dn->down_free = done;
    fabric_hdr_encode(&h, frame);
    memcpy(frame + FABRIC_HDR_LEN, pl, len);
    copy = g_bytes_new_take(frame, FABRIC_HDR_LEN + len);
    fabric_send_copy(k->f, from, to, copy);
}

static IngressStatus eth_ls_data(EthLs *k, unsigned u, const FabricHdr *h,
                                 const uint8_t *pl, size_t len, char *why,
                                 size_t why_len)
{
    EthLsNode *nd = &k->node[u];
    uint64_t at_switch;
    unsigned out;

    if (!nd->linked) {
        return fabric_kind_malformed(why, why_len, "DATA before HELLO");
    }
    if (h->flags || h->dst != FABRIC_NODE_NONE) {
        return fabric_kind_malformed(why, why_len,
                                     "DATA with flags 0x%02x and dst %u; a "
                                     "NIC sends flags 0 and dst %u (the "
                                     "switch decides)", h->flags, h->dst,
                                     FABRIC_NODE_NONE);
    }
    if (len < FABRIC_ETH_MIN_FRAME || len > FABRIC_ETH_MAX_FRAME) {
        return fabric_kind_malformed(why, why_len,
                                     "DATA of %zu bytes; an Ethernet frame "
                                     "has %d..%d", len, FABRIC_ETH_MIN_FRAME,
                                     FABRIC_ETH_MAX_FRAME);
    }
    nd->sent++;
    /* store and forward: the whole frame is in the switch, then its delay */
    nd->up_free = MAX(h->send_time_ns, nd->up_free) + eth_ls_wire_ns(k, len);
    at_switch = nd->up_free + k->hop_ns;
    switch (eth_switch_forward(k->sw, pl, u, fabric_time_ns(k->f), &out)) {
    case ETH_FWD_UNICAST:
        if (k->node[out].linked) {
            eth_ls_copy(k, u, out, h, pl, len, at_switch);
        }
        break;
    case ETH_FWD_DROP:
        break;
    case ETH_FWD_FLOOD:
        nd->flooded++;
        for (unsigned i = 0; i < k->f->nodes; i++) {
            if (i != u && k->node[i].linked) {
                eth_ls_copy(k, u, i, h, pl, len, at_switch);
            }
        }
        break;
    }
    return INGRESS_OK;
}

static IngressStatus eth_ls_ingress(void *state, unsigned in_port,
                                    const FabricHdr *h, const uint8_t *frame,
                                    size_t len, char *why, size_t why_len)
{
    EthLs *k = state;

    /* fabric_kind_ingress() passed it: this kind, not a HELLO */
    switch (h->type) {
    case FABRIC_TYPE_CONTROL:
        return fabric_kind_malformed(why, why_len,
                                     "CONTROL frame without an opcode a NIC "
                                     "sends (1 HELLO)");
    case FABRIC_TYPE_DATA:
        return eth_ls_data(k, in_port, h, frame + FABRIC_HDR_LEN,
                           len - FABRIC_HDR_LEN, why, why_len);
    }
    return fabric_kind_malformed(why, why_len,
                                 "frame type %u is not used by eth", h->type);
}

static void eth_ls_dump_table(void *state, uint64_t now_ns, GString *out)
{
    EthLs *k = state;

    eth_switch_foreach(k->sw, now_ns, append_entry, out);
}

#define U64 "%" G_GUINT64_FORMAT

static void eth_ls_report(void *state, GString *out, bool counters)
{
    EthLs *k = state;
    unsigned linked = 0;

    for (unsigned i = 0; i < k->f->nodes; i++) {
        linked += k->node[i].linked;
    }
    if (counters) {
        g_string_append_printf(out, "eth hop_ns=" U64 " link_mbps=" U64
                               " macs=%u\n", k->hop_ns, k->link_mbps,
                               eth_switch_size(k->sw));
    } else {
        g_string_append_printf(out, "eth: lock-step, switch delay " U64
                               " ns, link " U64 " MB/s, %u of %u nodes "
                               "linked, %u MAC addresses\n", k->hop_ns,
                               k->link_mbps, linked, k->f->nodes,
                               eth_switch_size(k->sw));
    }
    for (unsigned i = 0; i < k->f->nodes; i++) {
        const EthLsNode *nd = &k->node[i];

        if (counters) {
            g_string_append_printf(out, "node %u linked=%d", i, nd->linked);
        } else {
            g_string_append_printf(out, "node %u: %-8s", i,
                                   nd->linked ? "linked" : "unlinked");
        }
        g_string_append_printf(out, " sent=" U64 " flooded=" U64
                               " resets=" U64 " flushed=" U64 "\n", nd->sent,
                               nd->flooded, nd->resets, nd->flushed);
    }
}

/* The shortest way through: two cables of a minimal frame and the switch. */
static uint64_t eth_ls_lookahead_ns(void *state)
{
    EthLs *k = state;

    return 2 * eth_ls_wire_ns(k, 0) + k->hop_ns;
}

const FabricKind fabric_kind_eth_lockstep = {
    .name = "eth",
    .id = FABRIC_KIND_ETH,
    .pcap_linktype = PCAP_LINKTYPE_ETHERNET,
    .corrupt_from = FABRIC_HDR_LEN,
    .capture_from = FABRIC_HDR_LEN,
    .parse = fabric_hdr_frame_parse,
    .encode_prefix = fabric_hdr_frame_prefix,
    .state_new = eth_ls_state_new,
    .state_free = eth_ls_state_free,
    .ingress = eth_ls_ingress,
    .hello = eth_ls_hello,
    .hello_refused = eth_ls_port_down,
    .port_down = eth_ls_port_down,
    .has_link = eth_has_link,
    .describe_topology = eth_describe_topology,
    .dump_table = eth_ls_dump_table,
    .report = eth_ls_report,
    .lookahead_ns = eth_ls_lookahead_ns,
};
