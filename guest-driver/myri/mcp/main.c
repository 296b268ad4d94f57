/*
 * The MCP's boot and event loop.
 *
 * One loop, no interrupts (the core has none): read ISR, handle what is
 * set, and when nothing is, sleep in wfi with IMR holding exactly the
 * bits that can bring work.  Interval timer 0 follows RDP's earliest
 * deadline (retransmits, delayed ACKs, pauses); interval timer 1 ticks
 * the heartbeat, so that an idle MCP still shows it is alive.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "mcp.h"

Mcp mcp;

#define HEARTBEAT_US 250000     /* the driver declares death after 2 s */

/* The bits that bring work: doorbells are always taken (host.c). */
#define WAKE (LANAI_ISR_LANAI_SIG | LANAI_ISR_RECV | LANAI_ISR_TIME0 | \
              LANAI_ISR_TIME1 | LANAI_ISR_DOORBELL)

static const uint32_t param_default[MCP_PARAMS] = {
    /*
     * ParaStation3 used 2048 us, but an emulated host stalls a VM for
     * several ms at times, and go-back-N then resends whole windows that
     * had arrived: 16 ms made those spurious resends vanish.
     */
    [MCP_P_RTO_US] = 16384,
    [MCP_P_WINDOW] = 16,
    [MCP_P_MRC] = 300,
    [MCP_P_ACK_DELAY_US] = 100,
    [MCP_P_ACK_PENDING] = 4,
    [MCP_P_CTO_US] = 1000,
    /*
     * A receiver that takes nothing for 2 s is not just slow; under the
     * driver's 5 s command timeout, so that a CLOSE_CTX held up behind
     * such a receiver is still acknowledged in time.
     */
    [MCP_P_REFUSE_US] = 2000000,
};

/* Largest time parameter: RDP compares times as signed differences. */
#define PARAM_TIME_MAX (1u << 30)

/* ---- diagnostics ---- */

void mcp_debug(const char *s)
{
    while (*s) {
        reg_write(LANAI_REG_DEBUG, (uint8_t)*s++);
    }
}

static void debug_hex(uint32_t v)
{
    char buf[11] = "0x";

    for (int i = 0; i < 8; i++) {
        buf[2 + i] = "0123456789abcdef"[v >> (28 - 4 * i) & 0xf];
    }
    buf[10] = 0;
    mcp_debug(buf);
}

/*
 * Give up: PANIC with a code for the driver, then halt on ebreak with the
 * code in a0, which the card reports as the halt address.
 */
void mcp_panic(uint32_t code, uint32_t arg)
{
    volatile struct mcp_global *g = MCP_GLOBAL;
    register uint32_t a0 __asm__("a0");

    g->panic_code = code;
    g->panic_arg = arg;
    fence();
    g->state = MCP_STATE_PANIC;
    mcp_debug("MCP panic ");
    debug_hex(code);
    mcp_debug(" arg ");
    debug_hex(arg);
    mcp_debug("\n");
    a0 = code;      /* set last: the calls above clobber a0 */
    __asm__ volatile("ebreak" : : "r"(a0) : "memory");
    for (;;) {
        reg_write(LANAI_REG_IMR, 0);
        wait_for_interrupt();
    }
}

/* ---- counters ---- */

/* mcp_global.counters in enum mcp_counter order: RDP's and ours. */
static void counters_sync(void)
{
    volatile uint32_t *out = MCP_GLOBAL->counters;
    const RdpCounters *r = &mcp.rdp.c;
    const McpCounters *m = &mcp.cnt;

    out[MCP_CNT_sent] = r->sent + m->sent_local;
    out[MCP_CNT_received] = m->received;
    out[MCP_CNT_retransmitted] = r->retransmitted;
    out[MCP_CNT_acks_sent] = r->acks_sent;
    out[MCP_CNT_acks_piggy] = r->acks_piggy;
    out[MCP_CNT_acks_rcvd] = r->acks_rcvd;
    out[MCP_CNT_seq_nacks_tx] = r->seq_nacks_tx;
    out[MCP_CNT_seq_nacks_rx] = r->seq_nacks_rx;
    out[MCP_CNT_cap_nacks_tx] = r->cap_nacks_tx;
    out[MCP_CNT_cap_nacks_rx] = r->cap_nacks_rx;
    out[MCP_CNT_crc_drops] = r->crc_drops;
    out[MCP_CNT_sanity_drops] = r->sanity_drops + m->sanity_drops;
    out[MCP_CNT_dup_drops] = r->dup_drops;
    out[MCP_CNT_window_stalls] = r->window_stalls;
    out[MCP_CNT_timeouts] = r->timeouts;
    out[MCP_CNT_reconnects] = r->reconnects;
    out[MCP_CNT_undeliverable] = r->undeliverable + m->undeliverable;
    out[MCP_CNT_doorbells] = m->doorbells;
    out[MCP_CNT_ctx_errors] = m->ctx_errors;
    out[MCP_CNT_parked] = m->parked;
    out[MCP_CNT_noroom] = r->noroom + m->noroom_local;
}

/* ---- timers ---- */

/*
 * Keep IT0 at RDP's earliest deadline (or the local queues' retry).  Every
 * deadline RDP sets lies at least timer_slack ahead, so while IT0 fires
 * within that, nothing can come before it and the scan over all peers is
 * skipped; firing early only costs a tick that finds nothing due.
 */
static void timers_update(void)
{
    uint32_t deadline, delta;
    bool any;

    if (!mcp.timers_dirty) {
        return;
    }
    mcp.timers_dirty = false;
    if (mcp.timer_armed &&
        (int32_t)(mcp.timer_at - mcp.now) <= (int32_t)mcp.timer_slack) {
        return;
    }
    any = rdp_next_deadline(&mcp.rdp, &deadline);
    if (mcp.retry_armed &&
        (!any || (int32_t)(mcp.retry_at - deadline) < 0)) {
        deadline = mcp.retry_at;
        any = true;
    }
    if (!any) {
        if (mcp.timer_armed) {
            reg_write(LANAI_REG_IT0, 0);
            mcp.timer_armed = false;
        }
        return;
    }
    delta = deadline - mcp.now;
    if ((int32_t)delta <= 0) {
        delta = 1;
    }
    reg_write(LANAI_REG_IT0, delta);
    mcp.timer_at = mcp.now + delta;
    mcp.timer_armed = true;
}

/* ---- boot ---- */

static inline bool is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

static uint32_t param(uint32_t i)
{
    uint32_t v = MCP_GLOBAL->params[i];

    return v ? v : param_default[i];
}

static void load_params(RdpParams *p)
{
    p->rto_us = param(MCP_P_RTO_US);
    p->window = param(MCP_P_WINDOW);
    p->mrc = param(MCP_P_MRC);
    p->ack_delay_us = param(MCP_P_ACK_DELAY_US);
    p->ack_pending = param(MCP_P_ACK_PENDING);
    p->cto_us = param(MCP_P_CTO_US);
    p->refuse_us = param(MCP_P_REFUSE_US);
    if (p->rto_us > PARAM_TIME_MAX) {
        mcp_panic(MCP_PANIC_PARAMS, MCP_P_RTO_US);
    }
    if (p->window > RDP_SEND_SLOTS) {
        mcp_panic(MCP_PANIC_PARAMS, MCP_P_WINDOW);
    }
    if (p->ack_delay_us > PARAM_TIME_MAX) {
        mcp_panic(MCP_PANIC_PARAMS, MCP_P_ACK_DELAY_US);
    }
    if (p->cto_us > PARAM_TIME_MAX) {
        mcp_panic(MCP_PANIC_PARAMS, MCP_P_CTO_US);
    }
    if (p->refuse_us > PARAM_TIME_MAX) {
        mcp_panic(MCP_PANIC_PARAMS, MCP_P_REFUSE_US);
    }
    mcp.refuse_us = p->refuse_us;
    mcp.timer_slack = p->ack_delay_us;
    if (p->rto_us < mcp.timer_slack) {
        mcp.timer_slack = p->rto_us;
    }
    if (p->cto_us < mcp.timer_slack) {
        mcp.timer_slack = p->cto_us;
    }
}

static void boot(void)
{
    volatile struct mcp_global *g = MCP_GLOBAL;
    uint8_t *filler = MCP_SCRATCH->filler;
    RdpParams params;

    reg_write(LANAI_REG_IMR, 0);
    if (g->magic != MCP_MAGIC) {
        mcp_panic(MCP_PANIC_MAGIC, g->magic);
    }
    if (g->abi != MCP_ABI) {
        mcp_panic(MCP_PANIC_ABI, g->abi);
    }
    mcp.node = g->node;
    mcp.nodes = g->nodes;
    if (!mcp.nodes || mcp.nodes > MCP_MAX_NODES || mcp.node >= mcp.nodes) {
        mcp_panic(MCP_PANIC_NODES, mcp.node << 16 | (mcp.nodes & 0xffff));
    }
    /* Context areas start at MCP_CTX_AREA_OFF: at least 1 MiB. */
    mcp.sram_size = g->sram_size;
    if (!is_pow2(mcp.sram_size) || mcp.sram_size <= MCP_CTX_AREA_OFF ||
        mcp.sram_size > LANAI_SRAM_MAX) {
        mcp_panic(MCP_PANIC_SRAM, mcp.sram_size);
    }
    load_params(&params);

    host_init();
    memset(filler, 0, sizeof(MCP_SCRATCH->filler));
    filler[0] = MCP_CTX_NONE;
    filler[1] = MCP_CTX_NONE;
    /* A new FIFO starts empty: doorbells rung before READY are gone. */
    reg_write(LANAI_REG_DB_BASE, MCP_DB_OFF);
    reg_write(LANAI_REG_DB_SIZE, MCP_DB_ENTRIES);
    mcp.db_cons = 0;
    net_init(&params);
    reg_write(LANAI_REG_IT1, HEARTBEAT_US);
    counters_sync();

    g->panic_code = MCP_PANIC_NONE;
    g->panic_arg = 0;
    fence();
    g->state = MCP_STATE_READY;
    mcp_debug("MCP ready: node ");
    debug_hex(mcp.node);
    mcp_debug(" of ");
    debug_hex(mcp.nodes);
    mcp_debug("\n");
}

/* ---- the loop ---- */

void mcp_main(void) __attribute__((noreturn));

void mcp_main(void)
{
    boot();
    for (;;) {
        uint32_t isr;

        reg_write(LANAI_REG_WDOG_KICK, 1);
        isr = reg_read(LANAI_REG_ISR) & WAKE;
        if (!isr) {
            counters_sync();
            reg_write(LANAI_REG_IMR, WAKE);
            wait_for_interrupt();
            continue;
        }
        mcp.now = reg_read(LANAI_REG_RTC);
        MCP_GLOBAL->heartbeat++;

        /* Receive first: ACKs free room for the doorbells after. */
        if (isr & LANAI_ISR_RECV) {
            net_receive();
        }
        if (isr & LANAI_ISR_TIME0) {
            reg_write(LANAI_REG_ISR, LANAI_ISR_TIME0);
            mcp.timer_armed = false;
            rdp_tick(&mcp.rdp, mcp.now);
            mcp.timers_dirty = true;
        }
        if (isr & LANAI_ISR_LANAI_SIG) {
            host_mailbox();
        }
        /* Parked sends before new ones: they were rung first. */
        if (mcp.peers_waiting || mcp.locals_waiting) {
            host_queues();
        }
        if (isr & LANAI_ISR_DOORBELL) {
            host_doorbells();
        }
        if (isr & LANAI_ISR_TIME1) {
            reg_write(LANAI_REG_ISR, LANAI_ISR_TIME1);
            reg_write(LANAI_REG_IT1, HEARTBEAT_US);
            counters_sync();
        }
        timers_update();
    }
}
