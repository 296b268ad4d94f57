/*
 * Telegraphos NIC: remote memory by loads and stores, shadow addressing
 * and the remote-enqueue operation.  State shared by telegraphos.c
 * (the board: BAR0, the link, reset), telegraphos-tx.c (the initiator:
 * BAR2 and BAR4), telegraphos-rx.c (the target: export check, apply,
 * REQ, replies), telegraphos-rd.c (requests that wait for a reply) and
 * telegraphos-core.c (events, interrupts, sending).
 * Spec: docs/hw/telegraphos.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_TELEGRAPHOS_H
#define VCLUSTER_TELEGRAPHOS_H

#include "hw/pci/pci.h"
#include "qemu/units.h"
#include "qom/object.h"
#include "fabric-link.h"
#include "proto/telegraphos.h"
#include "vcpu-stall.h"
#include "telegraphos-req.h"
/* The register interface, shared with the driver and libtgr. */
#include "vcluster/hw/tgr_regs.h"

#define TYPE_TELEGRAPHOS "telegraphos"
OBJECT_DECLARE_SIMPLE_TYPE(TgrState, TELEGRAPHOS)

/* vCPUs with their own CUR_CTX, latches and read record (vcpu-stall's) */
#define TGR_MAX_CPUS        64
/*
 * Remote loads and atomics in flight per vCPU: one per context that was
 * parked there (a process preempted inside its load keeps its record).
 */
#define TGR_RD_PER_CPU      8
#define TGR_RD_SLOTS        (TGR_MAX_CPUS * TGR_RD_PER_CPU)
/* FETCH and DMA_GET transfers in flight */
#define TGR_XFER_SLOTS      256

/*
 * Tags.  A request that waits for a reply carries slot | nonce << 10:
 * slots 0..TGR_RD_SLOTS-1 are the read records (vCPU * TGR_RD_PER_CPU +
 * index), the transfers follow; the nonce is 21 random bits drawn for each
 * request, so that no node can guess the tag of a request it did not see.
 * Posted requests (WRITE, REQ, DMA_PUT chunks) carry TGR_TAG_POSTED with
 * the ctx and window page, so that a NACK can name them in its event.
 * A reply or NACK counts only if it comes from the node the request went
 * to (fabricd stamps the source).
 */
#define TGR_TAG_SLOT_BITS   10
#define TGR_TAG_SLOT_MASK   ((1u << TGR_TAG_SLOT_BITS) - 1)
#define TGR_TAG_NONCE_MASK  ((TGR_TAG_POSTED >> TGR_TAG_SLOT_BITS) - 1)
#define TGR_TAG_POSTED      0x80000000u
#define TGR_TAG_POSTED_DMA  0x40000000u
#define TGR_TAG_POSTED_CTX_SHIFT 16
#define TGR_TAG_POSTED_PAGE 0x3fffu

/*
 * Requests held (the NI is stopped, or replies wait for room in the tx
 * queue): at most rx-hold-frames and this many bytes, beyond which the card
 * stops reading its socket.  One socket read (FABRIC_LINK_READ_MAX) may
 * complete a few more frames.
 */
#define TGR_HOLD_MAX_BYTES  (4 * MiB)
/* What one held frame costs: its bytes, the TgrFrame and the GList link */
#define TGR_HOLD_COST(len)  (sizeof(TgrFrame) + (len) + 3 * sizeof(void *))

/* Which BAR a read record's key names */
#define TGR_KEY_BAR2        2
#define TGR_KEY_BAR4        4

typedef enum TgrRdState {
    TGR_RD_IDLE,
    TGR_RD_PENDING,     /* request sent, no reply yet */
    TGR_RD_DONE,        /* the value waits for the re-executed load */
    TGR_RD_FAILED,      /* RD_STATUS has why; ctx != 0 waits for RD_ACK */
    TGR_RD_ACKED,       /* the next matching load returns all-ones */
} TgrRdState;

/* A vCPU's remote load or atomic (its result) */
typedef struct TgrRead {
    TgrRdState state;
    /* the key: the access the re-executed load must repeat */
    uint8_t bar;
    uint8_t size;
    uint8_t ctx;
    hwaddr addr;
    bool stalled;       /* the vCPU was parked on it at least once */
    uint64_t age;       /* when it was issued: the oldest goes first */
    uint8_t op;         /* FABRIC_TGR_READ_REQ or _ATOMIC_REQ */
    uint16_t node;
    uint32_t page;
    uint32_t off;
    uint32_t tag;
    uint64_t value;
    int64_t deadline;
} TgrRead;

/* A FETCH or DMA_GET: the reply is written to local memory */
typedef struct TgrXfer {
    bool busy;
    uint8_t ctx;
    uint16_t node;
    uint32_t page;
    uint32_t off;
    uint32_t len;
    uint32_t tag;
    uint64_t paddr;
    int64_t deadline;
} TgrXfer;

typedef struct TgrCpu {
    uint8_t cur_ctx;
    uint32_t rd_status;     /* TGR_ERR_* of the last load */
    uint8_t rd_acked;       /* hint: its records that may be ACKED */
    /* the shadow argument latch (a local-mirror store) */
    bool larg_valid;
    uint8_t larg_ctx;
    uint32_t larg_len;
    uint64_t larg_paddr;
    uint32_t larg_status;   /* why the last latch store failed */
    uint32_t fetch_status;  /* of the last FETCH store */
} TgrCpu;

/*
 * Where the last posted request through a window page went: a NACK for
 * it must come from there and name that export, also after the page was
 * unmapped (the kernel's one-store pages are cleared at once).
 */
typedef struct TgrPosted {
    bool valid;
    uint8_t ctx;
    uint16_t node;
    uint16_t gen;
    uint32_t eidx;
} TgrPosted;

/* Sequence state for one peer node */
typedef struct TgrPeer {
    uint32_t tx_seq;        /* next seq we send it */
    bool rx_known;
    uint16_t rx_epoch;
    uint32_t rx_seq;        /* next seq we expect from it */
    bool mc_known;          /* the same for its multicast copies */
    uint16_t mc_epoch;
    uint32_t mc_seq;
} TgrPeer;

/* A DATA frame kept for later: held while stopped, or looped back */
typedef struct TgrFrame {
    uint16_t src;
    uint32_t len;
    uint8_t data[];
} TgrFrame;

struct TgrState {
    PCIDevice parent_obj;
    MemoryRegion bar0;
    MemoryRegion bar2;
    MemoryRegion bar4;
    CharBackend chr;
    FabricLink link;
    bool lockstep;              /* property: lock-step (lockstep.h) */
    Error *migration_blocker;
    VCPUStall stall;
    QEMUTimer *deadline_timer;  /* read, atomic and transfer timeouts */
    QEMUTimer *drain_timer;     /* RESUME: held requests, in order */
    QEMUTimer *loop_timer;      /* frames to this node */

    /* properties */
    uint32_t node;
    uint32_t window_pages;
    uint32_t mirror_mb;
    uint32_t rread_timeout_prop;
    uint32_t tx_queue_kb;
    uint32_t rx_hold_frames;

    /* link */
    bool link_up;
    uint16_t nodes;
    uint16_t epoch;             /* our boot count, in every frame */
    uint32_t mc_tx_seq;
    TgrPeer *peer;              /* FABRIC_MAX_NODES */

    /* registers */
    uint32_t isr;
    uint32_t imr;
    bool irq_level;
    uint64_t exp_base;
    uint32_t exp_count;
    uint32_t ovf_eidx;
    uint32_t ovf_src;
    uint64_t evq_base;
    uint32_t evq_entries;
    uint32_t evq_prod;
    uint32_t evq_cons;
    uint32_t rread_timeout_us;
    bool stopped;
    uint32_t group_eidx[TGR_GROUPS];
    uint32_t group_pages[TGR_GROUPS];
    bool group_told[TGR_GROUPS];    /* fabricd knows we are a member */
    uint8_t ctx_table[TGR_CTX_MAX * TGR_CTX_ENTRY];
    uint32_t *pte;              /* window_pages x 4 words */
    TgrPosted *posted;          /* window_pages */
    uint64_t cnt[TGR_CNT_NUM];

    TgrCpu cpu[TGR_MAX_CPUS];
    TgrRead rd[TGR_RD_SLOTS];   /* vCPU i: rd[i * TGR_RD_PER_CPU ...] */
    uint64_t rd_issued;
    TgrXfer xfer[TGR_XFER_SLOTS];
    uint64_t tx_waiters;        /* vCPUs parked for tx room */

    GQueue hold;                /* TgrFrame: requests while stopped */
    uint64_t hold_bytes;        /* TGR_HOLD_COST of the held frames */
    bool rx_throttled;
    GQueue loop;                /* TgrFrame: to ourselves */
};

static inline void tgr_count(TgrState *s, int idx)
{
    s->cnt[idx]++;
}

/* Window PTE fields */
static inline uint32_t tgr_pte_w(TgrState *s, uint32_t page, int w)
{
    return s->pte[page * 4 + w];
}

static inline uint16_t tgr_pte_node(TgrState *s, uint32_t page)
{
    return tgr_pte_w(s, page, 0) >> TGR_PTE_NODE_SHIFT;
}

static inline uint32_t tgr_pte_mode(TgrState *s, uint32_t page)
{
    return (tgr_pte_w(s, page, 0) & TGR_PTE_MODE_MASK) >> TGR_PTE_MODE_SHIFT;
}

static inline uint8_t tgr_pte_ctx(TgrState *s, uint32_t page)
{
    return (tgr_pte_w(s, page, 0) & TGR_PTE_CTX_MASK) >> TGR_PTE_CTX_SHIFT;
}

/*
 * The parts from the bottom up: each calls only those declared above it
 * here and telegraphos-req.h, never one below.  telegraphos.c, the board,
 * is the top: it calls them all and registers the BARs, timers and link
 * callbacks through which QEMU reaches the others.
 */

/* telegraphos-core.c: what every part uses */
/* The current vCPU's slot (0 without a vCPU, as under qtest) */
int tgr_cpu_slot(void);
void tgr_update_irq(TgrState *s);
void tgr_raise(TgrState *s, uint32_t bits);
/* Queue an event (TGR_EV_ENTRY bytes) and interrupt */
void tgr_event(TgrState *s, uint8_t type, uint8_t reason, uint8_t ctx,
               uint8_t op, uint16_t node, uint16_t cpu, uint32_t page,
               uint32_t data);
/* Add 1 to the done (or errors) word of ctx's status page */
void tgr_ctx_status_add(TgrState *s, uint8_t ctx, bool error);
int64_t tgr_rread_timeout_ns(TgrState *s);
/* Read export entry eidx from guest RAM: 0 or TGR_ERR_* */
int tgr_export_read(TgrState *s, uint32_t eidx, TgrExport *e);
/* Decrement window page's access counter (an access happened) */
void tgr_count_access(TgrState *s, uint32_t page);
bool tgr_reachable(TgrState *s, uint16_t node);
/*
 * Send one DATA frame to dst (FABRIC_NODE_ALL: multicast), with the
 * epoch and seq filled in; false when it cannot go (link down).
 */
bool tgr_send(TgrState *s, uint16_t dst, FabricTgrHdr *t, const void *body,
              uint32_t blen);
/* Park the vCPU while the tx queue to dst has no room for `bytes` */
void tgr_tx_wait_room(TgrState *s, uint16_t dst, uint32_t bytes);
/* Is the tx queue at its bound?  Then requests that answer wait. */
bool tgr_tx_full(TgrState *s);
/* Let the vCPUs parked for tx room run their access again */
void tgr_tx_wake(TgrState *s);
/* Membership changes fabricd was not told yet (the tx queue was full) */
bool tgr_groups_dirty(TgrState *s);
void tgr_groups_sync(TgrState *s);

/* telegraphos-rd.c: requests that wait for a reply */
/* This vCPU's record for the access (bar, addr, size), or -1 */
int tgr_rd_find(TgrState *s, int cpu, uint8_t bar, hwaddr addr,
                unsigned size);
/*
 * Send a remote load or atomic (t, body) through window page `page` and
 * keep its record, keyed by the access; returns the record.
 */
int tgr_rd_issue(TgrState *s, int cpu, uint8_t bar, hwaddr addr,
                 unsigned size, uint32_t page, FabricTgrHdr *t,
                 const void *body, uint32_t blen);
/* The load of record r: its value, or it parks the vCPU (no return) */
uint64_t tgr_rd_resume(TgrState *s, int r);
/*
 * Any window or shadow access of this vCPU but record `keep`'s load: the
 * context's acknowledged failed loads are over (their SIGBUS handler did
 * not return to them), so a later load of the same key is a new one.
 */
void tgr_rd_forget_acked(TgrState *s, int cpu, int keep);
/* The driver closed context ctx: drop its records and transfers */
void tgr_ctx_forget(TgrState *s, uint8_t ctx);
/* A free transfer slot and its tag, or NULL */
TgrXfer *tgr_xfer_alloc(TgrState *s, uint32_t *tag);
void tgr_arm_deadline(TgrState *s, int64_t deadline);
/*
 * Does a reply (op) or NACK from `src` answer a request that waits for
 * `tag`?  It must come from the node the request went to.
 */
bool tgr_reply_matches(TgrState *s, uint16_t src, uint8_t op, uint32_t tag);
/* A reply or NACK came for `tag` (matched): finish or fail what waits */
void tgr_reply(TgrState *s, uint32_t tag, int status, const uint8_t *data,
               uint32_t len);
/* Fail everything waiting on `node` (FABRIC_NODE_ALL: every node) */
void tgr_fail_pending(TgrState *s, uint16_t node, int reason);
/* Does vCPU `cpu` wait for a reply in context ctx (STATUS.RD_PENDING)? */
bool tgr_rd_pending(TgrState *s, int cpu, uint8_t ctx);
/* RD_ACK: the failed loads of vCPU `cpu` may return */
void tgr_rd_ack(TgrState *s, uint32_t cpu);
/* The ctx and window page a tag's request came from; false: unknown */
bool tgr_tag_owner(TgrState *s, uint32_t tag, uint8_t *ctx, uint32_t *page);
void tgr_deadline_expired(void *opaque);
/* Forget every record, transfer and latch (SOFT_RESET) */
void tgr_rd_reset(TgrState *s);

/* telegraphos-rx.c: the target */
void tgr_link_rx_data(TgrState *s, uint16_t src, const uint8_t *p,
                      uint32_t len);
bool tgr_rx_can_take(void *opaque);
void tgr_drain_held(void *opaque);
void tgr_loop_run(void *opaque);
void tgr_rx_flush(TgrState *s);
/* The tx queue drained: held requests may go on */
void tgr_rx_tx_room(TgrState *s);
void tgr_rx_resume(TgrState *s);

/* telegraphos-tx.c: the initiator */
extern const MemoryRegionOps tgr_bar2_ops;
extern const MemoryRegionOps tgr_bar4_ops;

#endif
