/*
 * Kind "eth": QEMU's `-netdev stream` framing (4-byte big-endian length,
 * then one Ethernet frame) into an L2 learning switch.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>

#include "capture.h"
#include "ethswitch.h"
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

/* The option named when eth is given one of the network kinds' options. */
static void eth_option_error(const char *option, GError **err)
{
    g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s does not apply to --kind eth (it is for ps1, "
                "myrinet and telegraphos)",
                option);
}

static bool eth_check_topology(unsigned nodes, const char *topology,
                               GError **err)
{
    if (topology) {
        eth_option_error("--topology", err);
        return false;
    }
    return true;
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
    .parse = eth_parse,
    .encode_prefix = eth_encode_prefix,
    .check_topology = eth_check_topology,
    .state_new = eth_state_new,
    .state_free = eth_state_free,
    .route = eth_route,
    .port_down = eth_port_down,
    .has_link = eth_has_link,
    .describe_topology = eth_describe_topology,
    .dump_table = eth_dump_table,
};
