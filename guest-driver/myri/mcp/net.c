/*
 * The MCP's network side: packets out through the send DMA, packets in
 * through the receive DMA, and the glue between them, RDP (rdp.c) and
 * the host side (host.c).
 *
 * A packet leaves as three gathered segments, none of them copied: the
 * route bytes from the route table, the RDP header from RDP's buffer and
 * the payload straight from the send slot.  The card appends the CRC-32.
 * One SRAM buffer receives; the card queues what arrives meanwhile, and
 * RDP copes with what it drops.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "mcp.h"

/* Receive errors that are not the CRC: RDP's sanity drops. */
#define RSTAT_BAD (LANAI_RSTAT_TOO_LONG | LANAI_RSTAT_SHORT | \
                   LANAI_RSTAT_ILLEGAL | LANAI_RSTAT_BAD_RANGE)

#define ISR_RX_ALL (LANAI_ISR_RECV | LANAI_ISR_BUFF | LANAI_ISR_RX_CRC | \
                    LANAI_ISR_RX_TOO_LONG | LANAI_ISR_ILLEGAL_RECEIVED)

static void rx_arm(void)
{
    uint32_t buf = (uint32_t)MCP_SCRATCH->rx;

    reg_write(LANAI_REG_RMP, buf);
    reg_write(LANAI_REG_RML, buf + sizeof(MCP_SCRATCH->rx));
}

/* A route the card can send on: switch bytes only, not too many. */
bool net_route_ok(uint32_t node)
{
    uint32_t len = MCP_ROUTES[node].len;

    return len >= 1 && len <= LANAI_MAX_ROUTE;
}

/*
 * RDP's xmit.  SEND is a level that is set while the engine can take a
 * packet; this card sends at SMLT, so the wait is for a slower one.  A
 * packet the card refuses (no link, bad route) is lost like any other:
 * RDP resends it or gives up on the peer.
 */
static void net_xmit(void *opaque, uint16_t peer, const uint8_t *hdr,
                     uint32_t hdr_len, const void *payload, uint32_t len)
{
    const volatile struct mcp_route *r = &MCP_ROUTES[peer];
    uint32_t route = (uint32_t)r->bytes;
    uint32_t h = (uint32_t)hdr;
    uint32_t data = (uint32_t)payload;
    uint32_t ctx;

    (void)opaque;
    while (!(reg_read(LANAI_REG_ISR) & LANAI_ISR_SEND)) {
        reg_write(LANAI_REG_IMR, LANAI_ISR_SEND);
        wait_for_interrupt();
    }
    reg_write(LANAI_REG_SMP, route);
    reg_write(LANAI_REG_SML, route + r->len);
    reg_write(LANAI_REG_SMP, h);
    if (!len) {
        reg_write(LANAI_REG_SMLT, h + hdr_len);
        return;
    }
    reg_write(LANAI_REG_SML, h + hdr_len);
    ctx = host_ctx_of(data);
    if (ctx < MCP_MAX_CTX && (mcp.closing_mask >> ctx & 1)) {
        /*
         * A context being closed may have its send area handed to another
         * process at any moment after the close: its sends still go out,
         * so that the stream to the peer goes on, but as filler that the
         * peer drops as undeliverable.  Lengths were checked when posted.
         */
        data = (uint32_t)MCP_SCRATCH->filler;
    } else if (ctx < MCP_MAX_CTX) {
        /*
         * A slot: its 4 wire bytes go from SRAM the user cannot write,
         * naming as the source the context whose send area holds it, so
         * that a process cannot pose as another one on resends.
         */
        MCP_SCRATCH->wire = *(volatile uint8_t *)data | ctx << 8;
        reg_write(LANAI_REG_SMP, (uint32_t)&MCP_SCRATCH->wire);
        reg_write(LANAI_REG_SML, (uint32_t)&MCP_SCRATCH->wire + 4);
        data += 4;
        len -= 4;
    }
    reg_write(LANAI_REG_SMP, data);
    reg_write(LANAI_REG_SMLT, data + len);
}

/* RDP's deliver: the 4 wire bytes, then the user's payload. */
static int net_deliver(void *opaque, uint16_t peer, const uint8_t *payload,
                       uint32_t len)
{
    (void)opaque;
    if (len < 4 || len > MCP_FILLER_LEN) {
        mcp.cnt.undeliverable++;
        return RDP_DELIVER_OK;
    }
    return host_deliver(payload[0], peer, payload[1], payload + 4, len - 4);
}

static void net_send_done(void *opaque, uint32_t cookie, int status)
{
    (void)opaque;
    host_send_done(cookie, status);
}

/*
 * A restart is an event for every context; a lost peer shows in its
 * sends' status, and fails the sends still waiting for room in RDP.
 */
static void net_event(void *opaque, RdpEvent kind, uint16_t peer)
{
    (void)opaque;
    if (kind == RDP_EV_PEER_RESET) {
        host_peer_reset(peer);
    } else if (kind == RDP_EV_PEER_LOST) {
        host_peer_lost(peer);
    }
}

static const RdpOps net_rdp_ops = {
    .xmit = net_xmit,
    .deliver = net_deliver,
    .send_done = net_send_done,
    .event = net_event,
};

/* ISR.RECV: hand the packet (the card has taken its CRC off) to RDP. */
void net_receive(void)
{
    uint32_t stat, len;

    reg_write(LANAI_REG_ISR, ISR_RX_ALL);
    stat = reg_read(LANAI_REG_RSTAT);
    if (!(stat & LANAI_RSTAT_DONE)) {
        return;                 /* still armed: nothing arrived */
    }
    len = reg_read(LANAI_REG_RLEN);
    if (stat & LANAI_RSTAT_CRC_ERR) {
        rdp_input(&mcp.rdp, MCP_SCRATCH->rx, len, false, mcp.now);
    } else if (stat & RSTAT_BAD) {
        mcp.cnt.sanity_drops++;
    } else {
        rdp_input(&mcp.rdp, MCP_SCRATCH->rx, len, true, mcp.now);
        mcp.timers_dirty = true;
    }
    rx_arm();
}

void net_init(const RdpParams *params)
{
    uint32_t nonce = MCP_GLOBAL->nonce;
    uint32_t stat;

    /* The driver draws a nonce per load; the clock if it did not. */
    if (!nonce) {
        nonce = reg_read(LANAI_REG_RTC) | 1;
    }
    if (rdp_init(&mcp.rdp, &net_rdp_ops, NULL, mcp.node, mcp.nodes, params,
                 nonce) != RDP_OK) {
        mcp_panic(MCP_PANIC_PARAMS, 0);
    }
    reg_write(LANAI_REG_ISR, ISR_RX_ALL);
    rx_arm();
    stat = reg_read(LANAI_REG_RSTAT);
    if (stat & LANAI_RSTAT_BAD_RANGE) {
        mcp_panic(MCP_PANIC_RX_ARM, stat);
    }
}
