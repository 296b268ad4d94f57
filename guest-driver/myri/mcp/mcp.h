/*
 * The MCP: firmware for the LANai-style Myrinet card's RV32IM core.
 * Declarations shared by its files: register access, the firmware's own
 * state, the SRAM scratch area and the functions each file offers.
 *
 * main.c  boot, the event loop, timers, counters, panic
 * host.c  mailbox, contexts, doorbells, send slots, events to the host
 * net.c   network send and receive DMA, the glue to RDP (rdp.c)
 * dma.c   host DMA chains
 * util.c  memcpy, memset, memcmp (gcc may call them)
 *
 * The host interface is myri_mcp_if.h; docs/hw/myri-mcp.md describes it
 * as this firmware implements it.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_MCP_H
#define VCLUSTER_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vcluster/hw/lanai_regs.h"
#include "vcluster/fw/myri_mcp_if.h"
#include "rdp.h"

_Static_assert(RDP_MAX_PEERS >= MCP_MAX_NODES, "RDP_MAX_PEERS < nodes");

/* ---- registers: lw/sw rd, (reg - 0x200)(zero) ---- */

#define REG(off) (*(volatile uint32_t *)LANAI_CORE_REG(off))

/* Register accesses also order the compiler's plain memory accesses. */
static inline uint32_t reg_read(uint32_t off)
{
    uint32_t v = REG(off);

    __asm__ volatile("" ::: "memory");
    return v;
}

static inline void reg_write(uint32_t off, uint32_t v)
{
    __asm__ volatile("" ::: "memory");
    REG(off) = v;
}

/* A full barrier: the core's fence is one on the host too. */
static inline void fence(void)
{
    __asm__ volatile("fence rw, rw" ::: "memory");
}

/* Sleep until ISR & IMR is not 0 (at once if it already is not). */
static inline void wait_for_interrupt(void)
{
    __asm__ volatile("wfi" ::: "memory");
}

#define MCP_GLOBAL ((volatile struct mcp_global *)MCP_GLOBAL_OFF)
#define MCP_ROUTES ((const volatile struct mcp_route *)MCP_ROUTES_OFF)
#define MCP_DOORBELLS ((const volatile uint32_t *)MCP_DB_OFF)

/* ---- the scratch area: SRAM the host does not map to users ---- */

typedef struct DmaDesc {
    uint32_t next;              /* next | LANAI_DMA_NEXT_* */
    uint16_t csum;
    uint16_t status;            /* written back by the engine */
    uint32_t len;
    uint32_t lar;               /* SRAM address */
    uint32_t eah, eal;          /* host bus address */
} __attribute__((aligned(LANAI_DMA_DESC_ALIGN))) DmaDesc;

_Static_assert(sizeof(DmaDesc) == LANAI_DMA_DESC_SIZE, "DMA descriptor");

/* The wire bytes in front of a closed context's payload: no such ctx. */
#define MCP_CTX_NONE 0xff
#define MCP_FILLER_LEN (4 + MCP_MAX_PAYLOAD)

typedef struct McpScratch {
    uint8_t rx[LANAI_MAX_PACKET];       /* the armed network receive */
    /*
     * What a send of a context being closed carries instead of its data:
     * 4 wire bytes naming no context, then zeros (see net_xmit()).
     */
    uint8_t filler[(MCP_FILLER_LEN + 63) & ~63];
    DmaDesc desc[2];                    /* payload, then event */
    uint32_t wire;                      /* a slot's wire bytes, as sent */
    struct myri_event ev __attribute__((aligned(16)));
} McpScratch;

#define MCP_SCRATCH ((McpScratch *)MCP_SCRATCH_OFF)

_Static_assert(MCP_SCRATCH_OFF + sizeof(McpScratch) <= MCP_CTX_AREA_OFF,
               "scratch area");

/* ---- the firmware's state ---- */

/* McpCtx.state: MCP_CTX_CLOSED, MCP_CTX_OPEN, or this */
#define MCP_CTX_CLOSING 2   /* CLOSE_CTX waits for RDP to finish its sends */

typedef struct McpCtx {
    uint32_t state;
    uint32_t nslots;            /* a power of 2 */
    uint32_t slot_size;
    uint32_t max_len;           /* longest payload a slot may send */
    uint32_t area_lo, area_hi;  /* the send area [lo, hi) */
    uint8_t *slots;             /* slot 0 */
    volatile struct myri_ctx_user *user;
    volatile struct mcp_ctx *shared;
    uint32_t ev_bus_lo, ev_bus_hi;      /* the event ring in host memory */
    uint32_t data_bus_lo, data_bus_hi;  /* the data ring after it */
    uint32_t nev;               /* events, a power of 2 */
    uint32_t ring;              /* data ring bytes, a power of 2 */
    uint32_t ev_prod;           /* events written (free-running) */
    uint32_t rx_prod;           /* data ring bytes used (free-running) */
    uint32_t pending;           /* sends RDP holds (send_done to come) */
} McpCtx;

/* Counters the firmware keeps itself; RDP keeps the others. */
typedef struct McpCounters {
    uint32_t sent_local;        /* sends to this node, not through RDP */
    uint32_t received;          /* payloads handed to a context */
    uint32_t sanity_drops;      /* receive errors other than the CRC */
    uint32_t undeliverable;     /* payloads for no open context, and
                                 * local sends that failed */
    uint32_t doorbells;
    uint32_t ctx_errors;
    uint32_t parked;            /* sends that waited in a McpQueue */
    uint32_t noroom_local;      /* local sends failed: MYRI_ERR_NO_ROOM */
} McpCounters;

/*
 * A send that waits for its destination, in the FIFO of that peer (RDP's
 * queue to it is full) or of that local context (no room in its receive
 * region).  One entry per slot of every context, indexed
 * ctx * MCP_MAX_SLOTS + slot: a parked slot is BUSY and cannot be rung
 * again, so it sits in at most one queue, and all queues together hold
 * at most the open contexts' slots.  No peer can make them longer.
 */
#define MCP_PARK_NONE 0xffffu
#define MCP_PARK_EVENT 0x8000u  /* len: MYRI_SLOT_F_EVENT was set */

typedef struct McpPark {
    uint16_t next;              /* MCP_PARK_NONE: the last */
    uint16_t len;               /* checked when rung; | MCP_PARK_EVENT */
} McpPark;

_Static_assert(MCP_MAX_CTX * MCP_MAX_SLOTS < MCP_PARK_NONE, "park index");
_Static_assert(MCP_MAX_PAYLOAD < MCP_PARK_EVENT, "park len");

typedef struct McpQueue {
    uint16_t head, tail;        /* McpPark indices */
    bool refusing;              /* local: refused since the last delivery */
    uint32_t refused_since;     /* ... from then on */
} McpQueue;

typedef struct Mcp {
    uint32_t now;               /* RTC (us) at the start of the pass */
    uint32_t node, nodes;
    uint32_t sram_size;
    uint32_t db_cons;           /* doorbells consumed (free-running) */
    bool retry_armed;           /* local queues are retried at retry_at */
    uint32_t retry_at;
    uint32_t refuse_us;         /* RDP's refuse_us, for local sends too */
    uint64_t peers_waiting;     /* peer_q[] that are not empty */
    uint32_t locals_waiting;    /* local_q[] that are not empty */
    bool timer_armed;           /* IT0 runs, to fire at timer_at */
    uint32_t timer_at;
    uint32_t timer_slack;       /* the earliest any new deadline can be */
    bool timers_dirty;          /* RDP ran: its deadlines may have moved */
    uint32_t closing_mask;      /* contexts in MCP_CTX_CLOSING */
    int32_t close_ctx;          /* the CLOSE_CTX in progress, or -1 */
    McpCounters cnt;
    McpCtx ctx[MCP_MAX_CTX];
    McpQueue peer_q[MCP_MAX_NODES];
    McpQueue local_q[MCP_MAX_CTX];
    McpPark park[MCP_MAX_CTX * MCP_MAX_SLOTS];
    /* The MCP holds the slot (parked or in RDP): whatever the user writes
     * into it, a doorbell for it is BAD_SLOT, so it is in one place. */
    bool held[MCP_MAX_CTX * MCP_MAX_SLOTS];
    RdpState rdp;
} Mcp;

extern Mcp mcp;

/* util.c: what gcc may call, and what RDP uses */
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

/* main.c */
void mcp_panic(uint32_t code, uint32_t arg) __attribute__((noreturn));
void mcp_debug(const char *s);

/* host.c */
void host_init(void);
void host_mailbox(void);
/* Consume doorbells; a send that must wait is parked, never the FIFO. */
void host_doorbells(void);
/* Hand parked sends on where room has come; fail those refused too long. */
void host_queues(void);
void host_peer_lost(uint32_t peer);
int host_deliver(uint32_t ctx, uint32_t src_node, uint32_t src_ctx,
                 const uint8_t *data, uint32_t len);
void host_send_done(uint32_t cookie, int status);
void host_peer_reset(uint32_t peer);
/* The context whose send area holds @addr, else MCP_MAX_CTX. */
uint32_t host_ctx_of(uint32_t addr);

/* net.c */
void net_init(const RdpParams *params);
void net_receive(void);
bool net_route_ok(uint32_t node);

/* dma.c */
void dma_desc(DmaDesc *d, uint32_t next, uint32_t sram, uint32_t bus_lo,
              uint32_t bus_hi, uint32_t len);
void dma_run(const DmaDesc *head);

#endif
