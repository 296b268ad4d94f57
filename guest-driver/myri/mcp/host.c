/*
 * The MCP's host side: the driver's mailbox, contexts, doorbells and send
 * slots, and everything that goes to a context's receive region (payloads
 * and events) with its notification.
 *
 * Everything a user can write (its ctx_user page, its slots, its
 * doorbells) is read once and checked before use; the worst a process can
 * do is confuse its own context.  What the driver writes (mcp_global,
 * mcp_ctx, routes) is checked where a mistake would send the core outside
 * SRAM or the DMA engine outside the receive region.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "mcp.h"

#define PAGE_SIZE 4096u
#define EVENT_SIZE ((uint32_t)sizeof(struct myri_event))

/* A send's RDP cookie: its slot, its context and whether it wants SENT. */
#define COOKIE(ctx, slot, ev) ((uint32_t)(slot) | (ctx) << 16 | (ev) << 20)
#define COOKIE_SLOT(c) ((c) & 0xffff)
#define COOKIE_CTX(c) (((c) >> 16) & 0xf)
#define COOKIE_EVENT(c) (((c) >> 20) & 1)

_Static_assert(MCP_MAX_CTX <= 16, "cookie: 4 bits of context");

static inline bool is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

static inline volatile struct myri_slot *slot_at(McpCtx *c, uint32_t i)
{
    return (volatile struct myri_slot *)(c->slots + i * c->slot_size);
}

/* Slot @slot of @ctx in McpPark and held[]. */
static inline uint32_t park_index(uint32_t ctx, uint32_t slot)
{
    return ctx * MCP_MAX_SLOTS + slot;
}

/* A 64-bit bus address plus an offset. */
static inline void bus_add(uint32_t lo, uint32_t hi, uint32_t off,
                           uint32_t *out_lo, uint32_t *out_hi)
{
    *out_lo = lo + off;
    *out_hi = hi + (*out_lo < lo);
}

static void queue_init(McpQueue *q)
{
    q->head = q->tail = MCP_PARK_NONE;
    q->refusing = false;
}

void host_init(void)
{
    for (uint32_t i = 0; i < MCP_MAX_CTX; i++) {
        mcp.ctx[i].state = MCP_CTX_CLOSED;
        mcp.ctx[i].shared = &MCP_GLOBAL->ctx[i];
        MCP_GLOBAL->ctx[i].state = MCP_CTX_CLOSED;
        queue_init(&mcp.local_q[i]);
    }
    for (uint32_t n = 0; n < MCP_MAX_NODES; n++) {
        queue_init(&mcp.peer_q[n]);
    }
    mcp.close_ctx = -1;
}

/* ---- the receive region: events, payloads, notification ---- */

/*
 * Event ev_prod is in host memory: make it count, then wake the user if
 * it asked.  The fences order the event's DMA before ev_prod, and ev_prod
 * before the want_notify load, which pairs with the user's store of
 * want_notify before it looks at ev_prod: one of the two sees the other.
 */
static void publish(McpCtx *c, uint32_t ctx)
{
    volatile struct myri_ctx_user *u = c->user;

    c->ev_prod++;
    fence();
    u->ev_prod = c->ev_prod;
    fence();
    if (u->want_notify) {
        u->want_notify = 0;
        reg_write(LANAI_REG_HOST_NOTIFY, ctx);
        if (c->shared->irq) {
            /* The count first: the interrupt handler reads it. */
            c->shared->notifies++;
            fence();
            reg_write(LANAI_REG_ISR, LANAI_ISR_HOST_SIG);
        }
    }
}

static inline bool event_room(McpCtx *c)
{
    return c->ev_prod - c->user->ev_cons < c->nev;
}

/* The staged event as the last descriptor of a chain at @d. */
static void event_desc(McpCtx *c, DmaDesc *d)
{
    uint32_t lo, hi;

    bus_add(c->ev_bus_lo, c->ev_bus_hi,
            (c->ev_prod & (c->nev - 1)) * EVENT_SIZE, &lo, &hi);
    dma_desc(d, LANAI_DMA_NEXT_LAST, (uint32_t)&MCP_SCRATCH->ev, lo, hi,
             EVENT_SIZE);
}

static void stage_event(uint32_t type, uint32_t src_node, uint32_t src_ctx,
                        uint32_t len, uint32_t pos, uint32_t aux,
                        uint32_t status)
{
    struct myri_event *ev = &MCP_SCRATCH->ev;

    ev->type = type;
    ev->src_ctx = src_ctx;
    ev->src_node = src_node;
    ev->len = len;
    ev->pos = pos;
    ev->aux = aux;
    ev->status = status;
}

/*
 * An event without payload.  With the event ring full it is dropped:
 * slot status and ctx err say the same, and RX events must not wait
 * behind these.
 */
static void post_event(uint32_t ctx, uint32_t type, uint32_t src_node,
                       uint32_t pos, uint32_t aux, uint32_t status)
{
    McpCtx *c = &mcp.ctx[ctx];

    if (!event_room(c)) {
        return;
    }
    stage_event(type, src_node, 0, 0, pos, aux, status);
    event_desc(c, &MCP_SCRATCH->desc[0]);
    dma_run(&MCP_SCRATCH->desc[0]);
    publish(c, ctx);
}

/*
 * A payload for context @ctx: into its data ring, then its RX event, in
 * one chain.  Payloads start 64-byte aligned and never wrap: one that
 * does not fit before the ring's end starts at its beginning.
 */
int host_deliver(uint32_t ctx, uint32_t src_node, uint32_t src_ctx,
                 const uint8_t *data, uint32_t len)
{
    McpCtx *c;
    volatile struct myri_ctx_user *u;
    uint32_t alloc, off, pos, lo, hi;
    DmaDesc *d = MCP_SCRATCH->desc;

    if (ctx >= MCP_MAX_CTX || mcp.ctx[ctx].state != MCP_CTX_OPEN) {
        mcp.cnt.undeliverable++;
        return RDP_DELIVER_OK;
    }
    c = &mcp.ctx[ctx];
    u = c->user;
    alloc = (len + MYRI_RX_ALIGN - 1) & ~(MYRI_RX_ALIGN - 1);
    pos = c->rx_prod;
    off = pos & (c->ring - 1);
    if (off + alloc > c->ring) {
        pos += c->ring - off;
        off = 0;
    }
    if (pos + alloc - u->rx_cons > c->ring || !event_room(c)) {
        return RDP_DELIVER_NOSPACE;
    }
    stage_event(MYRI_EV_RX, src_node, src_ctx, len, pos, 0, 0);
    if (len) {
        bus_add(c->data_bus_lo, c->data_bus_hi, off, &lo, &hi);
        dma_desc(d, (uint32_t)&d[1], (uint32_t)data, lo, hi, len);
        event_desc(c, &d[1]);
    } else {
        event_desc(c, d);
    }
    dma_run(d);
    c->rx_prod = pos + alloc;
    mcp.cnt.received++;
    publish(c, ctx);
    return RDP_DELIVER_OK;
}

/* ---- send slots ---- */

/* The slot is the user's again; SENT or SEND_ERR if that is wanted. */
static void slot_complete(uint32_t ctx, uint32_t i, uint32_t status,
                          bool want_event)
{
    McpCtx *c = &mcp.ctx[ctx];
    volatile struct myri_slot *s = slot_at(c, i);
    uint32_t cookie = s->cookie;    /* before the user may reuse it */

    mcp.held[park_index(ctx, i)] = false;
    s->status = status;
    s->state = MYRI_SLOT_FREE;
    if (status) {
        post_event(ctx, MYRI_EV_SEND_ERR, mcp.node, cookie, i, status);
    } else if (want_event) {
        post_event(ctx, MYRI_EV_SENT, mcp.node, cookie, i, 0);
    }
}

static void close_finish(uint32_t ctx);

/* RDP is done with a send: delivered, or the peer failed. */
void host_send_done(uint32_t cookie, int status)
{
    uint32_t ctx = COOKIE_CTX(cookie);
    McpCtx *c = &mcp.ctx[ctx];
    uint32_t err = MYRI_ERR_NONE;

    c->pending--;
    if (c->state != MCP_CTX_OPEN) {
        mcp.held[park_index(ctx, COOKIE_SLOT(cookie))] = false;
        /* Closing: the slot and the receive region are not ours. */
        if (!c->pending && c->state == MCP_CTX_CLOSING) {
            close_finish(ctx);
        }
        return;
    }
    if (status == RDP_DONE_NOROOM) {
        err = MYRI_ERR_NO_ROOM;
    } else if (status != RDP_DONE_OK) {
        err = MYRI_ERR_PEER_DEAD;
    }
    slot_complete(ctx, COOKIE_SLOT(cookie), err, COOKIE_EVENT(cookie));
}

/* A bad request: CTX_ERR, err, and the slot back if it was posted. */
static void reject(uint32_t ctx, uint32_t i, uint32_t err, bool free_slot)
{
    McpCtx *c = &mcp.ctx[ctx];

    mcp.cnt.ctx_errors++;
    c->user->err = err;
    if (free_slot) {
        volatile struct myri_slot *s = slot_at(c, i);

        s->status = err;
        s->state = MYRI_SLOT_FREE;
    }
    post_event(ctx, MYRI_EV_CTX_ERR, mcp.node, 0, i, err);
}

/* ---- sends that wait for their destination ---- */

/*
 * A send that cannot go at once waits in the queue of its destination,
 * never in the doorbell FIFO that all contexts share: a peer or a context
 * that takes nothing holds up the sends to it, and nothing else.
 */

static void queue_link(McpQueue *q, uint32_t idx)
{
    mcp.park[idx].next = MCP_PARK_NONE;
    if (q->head == MCP_PARK_NONE) {
        q->head = idx;
    } else {
        mcp.park[q->tail].next = idx;
    }
    q->tail = idx;
}

static void queue_pop(McpQueue *q)
{
    q->head = mcp.park[q->head].next;
}

/* Context @ctx is being closed: its sends that never went are dropped. */
static void queue_drop_ctx(McpQueue *q, uint32_t ctx)
{
    uint32_t idx = q->head;

    q->head = q->tail = MCP_PARK_NONE;
    while (idx != MCP_PARK_NONE) {
        uint32_t next = mcp.park[idx].next;

        if (idx / MCP_MAX_SLOTS != ctx) {
            queue_link(q, idx);
        } else {
            mcp.held[idx] = false;
        }
        idx = next;
    }
}

/* Retry the local queues every CTO: the MCP cannot see a user free room. */
static void local_retry_arm(void)
{
    if (!mcp.retry_armed) {
        mcp.retry_armed = true;
        mcp.retry_at = mcp.now + mcp.rdp.p.cto_us;
        mcp.timers_dirty = true;
    }
}

/*
 * Slot @i of @ctx (BUSY, wire bytes written) to RDP; false when RDP's
 * queue to the peer is full.
 */
static bool rdp_hand(uint32_t ctx, uint32_t i, uint32_t dst_node,
                     uint32_t len_ev)
{
    McpCtx *c = &mcp.ctx[ctx];
    volatile struct myri_slot *s = slot_at(c, i);
    bool ev = len_ev & MCP_PARK_EVENT;
    int r;

    r = rdp_send(&mcp.rdp, dst_node, COOKIE(ctx, i, ev),
                 (const void *)&s->dst_ctx_wire,
                 (len_ev & ~MCP_PARK_EVENT) + 4, mcp.now);
    if (r == RDP_NOROOM) {
        return false;
    }
    mcp.timers_dirty = true;
    if (r != RDP_OK) {          /* not expected: the peer was checked */
        mcp.held[park_index(ctx, i)] = false;
        reject(ctx, i, MYRI_ERR_BAD_DEST, true);
        return true;
    }
    c->pending++;
    return true;
}

/*
 * A send to this node: delivered, or false when it must wait.  The rule
 * RDP applies to peers: once the destination has refused for refuse_us
 * without taking anything, each send it refuses fails (NO_ROOM) until it
 * takes one again.
 */
static bool local_try(McpQueue *q, uint32_t dst_ctx, uint32_t ctx,
                      uint32_t i, uint32_t len_ev)
{
    volatile struct myri_slot *s = slot_at(&mcp.ctx[ctx], i);
    bool ev = len_ev & MCP_PARK_EVENT;

    if (host_deliver(dst_ctx, mcp.node, ctx, (const uint8_t *)s->data,
                     len_ev & ~MCP_PARK_EVENT) == RDP_DELIVER_OK) {
        q->refusing = false;
        mcp.cnt.sent_local++;
        slot_complete(ctx, i, MYRI_ERR_NONE, ev);
        return true;
    }
    if (!q->refusing) {
        q->refusing = true;
        q->refused_since = mcp.now;
        return false;
    }
    if (mcp.now - q->refused_since < mcp.refuse_us) {
        return false;
    }
    mcp.cnt.noroom_local++;
    mcp.cnt.undeliverable++;
    slot_complete(ctx, i, MYRI_ERR_NO_ROOM, ev);
    return true;
}

static void unpark_peer(uint32_t peer)
{
    McpQueue *q = &mcp.peer_q[peer];

    while (q->head != MCP_PARK_NONE) {
        uint32_t idx = q->head;

        if (!rdp_hand(idx / MCP_MAX_SLOTS, idx % MCP_MAX_SLOTS, peer,
                      mcp.park[idx].len)) {
            break;
        }
        queue_pop(q);
    }
    if (q->head == MCP_PARK_NONE) {
        mcp.peers_waiting &= ~(1ull << peer);
    }
}

static void unpark_local(uint32_t dst_ctx)
{
    McpQueue *q = &mcp.local_q[dst_ctx];

    while (q->head != MCP_PARK_NONE) {
        uint32_t idx = q->head;

        if (!local_try(q, dst_ctx, idx / MCP_MAX_SLOTS, idx % MCP_MAX_SLOTS,
                       mcp.park[idx].len)) {
            break;
        }
        queue_pop(q);
    }
    if (q->head == MCP_PARK_NONE) {
        mcp.locals_waiting &= ~(1u << dst_ctx);
    }
}

void host_queues(void)
{
    for (uint32_t peer = 0; mcp.peers_waiting && peer < mcp.nodes; peer++) {
        if (mcp.peers_waiting >> peer & 1) {
            unpark_peer(peer);
        }
    }
    if (mcp.locals_waiting && mcp.retry_armed &&
        (int32_t)(mcp.now - mcp.retry_at) >= 0) {
        mcp.retry_armed = false;
        for (uint32_t ctx = 0; ctx < MCP_MAX_CTX; ctx++) {
            if (mcp.locals_waiting >> ctx & 1) {
                unpark_local(ctx);
            }
        }
        if (mcp.locals_waiting) {
            local_retry_arm();
        }
    }
}

/* RDP gave up on @peer: what waits for it fails too, not after MRC more. */
void host_peer_lost(uint32_t peer)
{
    McpQueue *q = &mcp.peer_q[peer];

    while (q->head != MCP_PARK_NONE) {
        uint32_t idx = q->head;

        queue_pop(q);
        mcp.cnt.undeliverable++;
        slot_complete(idx / MCP_MAX_SLOTS, idx % MCP_MAX_SLOTS,
                      MYRI_ERR_PEER_DEAD, mcp.park[idx].len & MCP_PARK_EVENT);
    }
    mcp.peers_waiting &= ~(1ull << peer);
}

static void drop_parked(uint32_t ctx)
{
    for (uint32_t peer = 0; peer < mcp.nodes; peer++) {
        if (mcp.peers_waiting >> peer & 1) {
            queue_drop_ctx(&mcp.peer_q[peer], ctx);
            if (mcp.peer_q[peer].head == MCP_PARK_NONE) {
                mcp.peers_waiting &= ~(1ull << peer);
            }
        }
    }
    for (uint32_t dst = 0; dst < MCP_MAX_CTX; dst++) {
        if (mcp.locals_waiting >> dst & 1) {
            queue_drop_ctx(&mcp.local_q[dst], ctx);
            if (mcp.local_q[dst].head == MCP_PARK_NONE) {
                mcp.locals_waiting &= ~(1u << dst);
            }
        }
    }
}

/*
 * Doorbell {ctx, slot i}: check the slot, then send it now or park it in
 * its destination's queue.  Either way the doorbell is consumed.
 */
static void post(uint32_t ctx, uint32_t i)
{
    McpCtx *c;
    McpQueue *q;
    volatile struct myri_slot *s;
    uint32_t len, dst_node, dst_ctx, flags, len_ev;
    volatile uint32_t *wire;

    if (ctx >= MCP_MAX_CTX || mcp.ctx[ctx].state != MCP_CTX_OPEN) {
        mcp.cnt.ctx_errors++;   /* no one to tell */
        return;
    }
    c = &mcp.ctx[ctx];
    if (i >= c->nslots) {
        reject(ctx, i, MYRI_ERR_BAD_SLOT, false);
        return;
    }
    s = slot_at(c, i);
    if (s->state != MYRI_SLOT_POSTED || mcp.held[park_index(ctx, i)]) {
        reject(ctx, i, MYRI_ERR_BAD_SLOT, false);
        return;
    }
    /* Once: the user may change them under us; these are what we use. */
    len = s->len;
    dst_node = s->dst_node;
    dst_ctx = s->dst_ctx;
    flags = s->flags;
    if (len == 0 || len > c->max_len) {
        reject(ctx, i, MYRI_ERR_BAD_LEN, true);
        return;
    }
    if (dst_node >= mcp.nodes || dst_ctx >= MCP_MAX_CTX ||
        (dst_node != mcp.node && !net_route_ok(dst_node))) {
        reject(ctx, i, MYRI_ERR_BAD_DEST, true);
        return;
    }
    /* dst_ctx_wire, src_ctx_wire, wire_reserved: one aligned word. */
    wire = (volatile uint32_t *)&s->dst_ctx_wire;
    *wire = dst_ctx | ctx << 8;
    len_ev = len | (flags & MYRI_SLOT_F_EVENT ? MCP_PARK_EVENT : 0);
    /* Taken: ringing it again is BAD_SLOT, so it waits in one queue. */
    s->state = MYRI_SLOT_BUSY;
    mcp.held[park_index(ctx, i)] = true;

    if (dst_node == mcp.node) {
        q = &mcp.local_q[dst_ctx];
        if (q->head == MCP_PARK_NONE &&
            local_try(q, dst_ctx, ctx, i, len_ev)) {
            return;
        }
        mcp.locals_waiting |= 1u << dst_ctx;
        local_retry_arm();
    } else {
        q = &mcp.peer_q[dst_node];
        if (q->head == MCP_PARK_NONE && rdp_hand(ctx, i, dst_node, len_ev)) {
            return;
        }
        mcp.peers_waiting |= 1ull << dst_node;
    }
    mcp.park[park_index(ctx, i)].len = len_ev;
    queue_link(q, park_index(ctx, i));
    mcp.cnt.parked++;
}

/* At most this many doorbells per pass: the loop's other work waits. */
#define DOORBELL_BATCH 32

void host_doorbells(void)
{
    uint32_t prod = reg_read(LANAI_REG_DB_PROD);
    uint32_t cons = mcp.db_cons;
    uint32_t n = 0;

    while (cons != prod && n++ < DOORBELL_BATCH) {
        const volatile uint32_t *e =
            &MCP_DOORBELLS[2 * (cons & (MCP_DB_ENTRIES - 1))];

        post(LANAI_DB_CTX(e[0]), e[1]);
        cons++;
        mcp.cnt.doorbells++;
    }
    if (cons != mcp.db_cons) {
        mcp.db_cons = cons;
        reg_write(LANAI_REG_DB_CONS, cons);
    }
}

/* ---- RDP events ---- */

void host_peer_reset(uint32_t peer)
{
    for (uint32_t ctx = 0; ctx < MCP_MAX_CTX; ctx++) {
        if (mcp.ctx[ctx].state == MCP_CTX_OPEN) {
            post_event(ctx, MYRI_EV_PEER_RESET, peer, 0, 0, 0);
        }
    }
}

/* Does @addr lie in the send area of a context being closed? */
uint32_t host_ctx_of(uint32_t addr)
{
    uint32_t ctx;

    for (ctx = 0; ctx < MCP_MAX_CTX; ctx++) {
        McpCtx *c = &mcp.ctx[ctx];

        if (addr >= c->area_lo && addr < c->area_hi) {
            break;
        }
    }
    return ctx;
}

/* ---- mailbox ---- */

static void mailbox_done(uint32_t status)
{
    volatile struct mcp_global *g = MCP_GLOBAL;

    g->cmd_status = status;
    fence();
    g->cmd_done = g->cmd_seq;
}

/*
 * OPEN_CTX: the driver has filled in mcp_ctx and zeroed the ctx_user
 * page.  Checked so that the core stays in SRAM and DMA in the region.
 */
static uint32_t open_ctx(uint32_t ctx)
{
    McpCtx *c = &mcp.ctx[ctx];
    volatile struct mcp_ctx *sh = c->shared;
    uint32_t send_off = sh->send_off, nslots = sh->nslots;
    uint32_t slot_size = sh->slot_size, rx_size = sh->rx_size;
    uint32_t nev = sh->nev, ring;
    uint64_t area_end;

    if (c->state != MCP_CTX_CLOSED) {
        return MYRI_ERR_BAD_CMD;
    }
    area_end = (uint64_t)send_off + PAGE_SIZE + (uint64_t)nslots * slot_size;
    if (send_off < MCP_CTX_AREA_OFF || (send_off & (PAGE_SIZE - 1)) ||
        !is_pow2(nslots) || nslots > MCP_MAX_SLOTS ||
        slot_size <= MYRI_SLOT_HDR || slot_size % 64 ||
        area_end > mcp.sram_size) {
        return MYRI_ERR_BAD_CMD;
    }
    /* A data ring of a power of 2 keeps free-running positions exact;
     * twice the largest payload always fits one after a wrap. */
    ring = rx_size - nev * EVENT_SIZE;
    if (!is_pow2(nev) || nev > rx_size / EVENT_SIZE ||
        !is_pow2(ring) || ring < 2 * MCP_MAX_PAYLOAD ||
        ((sh->rx_bus_lo + nev * EVENT_SIZE) & (MYRI_RX_ALIGN - 1))) {
        return MYRI_ERR_BAD_CMD;
    }
    c->nslots = nslots;
    c->slot_size = slot_size;
    c->max_len = slot_size - MYRI_SLOT_HDR;
    if (c->max_len > MCP_MAX_PAYLOAD) {
        c->max_len = MCP_MAX_PAYLOAD;
    }
    c->area_lo = send_off;
    c->area_hi = area_end;
    c->user = (volatile struct myri_ctx_user *)send_off;
    c->slots = (uint8_t *)(send_off + PAGE_SIZE);
    c->ev_bus_lo = sh->rx_bus_lo;
    c->ev_bus_hi = sh->rx_bus_hi;
    bus_add(c->ev_bus_lo, c->ev_bus_hi, nev * EVENT_SIZE, &c->data_bus_lo,
            &c->data_bus_hi);
    c->nev = nev;
    c->ring = ring;
    c->ev_prod = 0;
    c->rx_prod = 0;
    c->pending = 0;
    memset(&mcp.held[park_index(ctx, 0)], 0, MCP_MAX_SLOTS);
    c->user->ev_prod = 0;
    c->user->err = 0;
    sh->notifies = 0;
    c->state = MCP_CTX_OPEN;
    sh->state = MCP_CTX_OPEN;
    return MYRI_ERR_NONE;
}

static void close_finish(uint32_t ctx)
{
    McpCtx *c = &mcp.ctx[ctx];

    c->state = MCP_CTX_CLOSED;
    c->shared->state = MCP_CTX_CLOSED;
    mcp.closing_mask &= ~(1u << ctx);
    if (mcp.close_ctx == (int32_t)ctx) {
        mcp.close_ctx = -1;
        mailbox_done(MYRI_ERR_NONE);
        host_mailbox();         /* a command may have come meanwhile */
    }
}

/*
 * CLOSE_CTX: nothing new is taken or delivered at once; the ack waits
 * until RDP has finished the context's sends (see net_xmit() for what
 * they carry meanwhile), so that no send_done touches the area later.
 */
static void close_ctx(uint32_t ctx)
{
    McpCtx *c = &mcp.ctx[ctx];

    if (c->state != MCP_CTX_OPEN) {
        mailbox_done(MYRI_ERR_NONE);   /* closed already */
        return;
    }
    c->state = MCP_CTX_CLOSING;
    mcp.closing_mask |= 1u << ctx;
    drop_parked(ctx);
    mcp.close_ctx = ctx;
    if (!c->pending) {
        close_finish(ctx);
    }
}

void host_mailbox(void)
{
    volatile struct mcp_global *g = MCP_GLOBAL;
    uint32_t cmd, arg;

    reg_write(LANAI_REG_ISR, LANAI_ISR_LANAI_SIG);
    if (mcp.close_ctx >= 0 || g->cmd_done == g->cmd_seq) {
        return;                 /* busy, or nothing new */
    }
    fence();
    cmd = g->cmd;
    arg = g->cmd_arg;
    if (arg >= MCP_MAX_CTX) {
        mailbox_done(MYRI_ERR_BAD_CMD);
        return;
    }
    switch (cmd) {
    case MCP_CMD_OPEN_CTX:
        mailbox_done(open_ctx(arg));
        break;
    case MCP_CMD_CLOSE_CTX:
        close_ctx(arg);
        break;
    default:
        mailbox_done(MYRI_ERR_BAD_CMD);
        break;
    }
}
