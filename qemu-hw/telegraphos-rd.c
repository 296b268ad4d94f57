/*
 * Telegraphos NIC, requests that wait: the vCPUs' records of remote loads
 * and atomics (a parked load finds its value by its key when it runs
 * again), FETCH and DMA_GET transfers, their replies, timeouts and
 * failures.  Spec: docs/hw/telegraphos.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/guest-random.h"
#include "hw/core/cpu.h"
#include "sysemu/dma.h"
#include "telegraphos.h"

static uint32_t tgr_new_tag(unsigned slot, uint32_t old)
{
    uint32_t nonce, tag;

    /*
     * Random, not a counter: a node that sees some of our tags must not
     * guess the others.  Bit 31 stays clear: it marks posted tags.  Never
     * the slot's last tag, so that a late reply to it is not taken.
     */
    do {
        qemu_guest_getrandom_nofail(&nonce, sizeof(nonce));
        nonce &= TGR_TAG_NONCE_MASK;
        tag = nonce << TGR_TAG_SLOT_BITS | slot;
    } while (!nonce || tag == old);
    return tag;
}

void tgr_arm_deadline(TgrState *s, int64_t deadline)
{
    timer_mod_anticipate(s->deadline_timer, deadline);
}

static int tgr_rd_cpu(int r)
{
    return r / TGR_RD_PER_CPU;
}

static void tgr_rd_fail(TgrState *s, int r, int reason)
{
    TgrRead *rd = &s->rd[r];
    int cpu = tgr_rd_cpu(r);

    rd->state = TGR_RD_FAILED;
    s->cpu[cpu].rd_status = reason;
    tgr_count(s, TGR_CNT_RREAD_FAIL);
    tgr_event(s, TGR_EV_RREAD_FAIL, reason, rd->ctx, rd->op, rd->node, cpu,
              rd->page, rd->off);
    /*
     * The kernel's load returns all-ones now.  A process's load stays
     * parked until the driver has signalled it and writes RD_ACK; the
     * event's interrupt wakes the halted vCPU for that.
     */
    if (rd->ctx == 0) {
        vcpu_stall_wake_cpu(&s->stall, cpu);
    }
}

/* The record of this vCPU whose key is this access, or -1 */
int tgr_rd_find(TgrState *s, int cpu, uint8_t bar, hwaddr addr,
                unsigned size)
{
    uint8_t ctx = s->cpu[cpu].cur_ctx;

    for (int r = cpu * TGR_RD_PER_CPU; r < (cpu + 1) * TGR_RD_PER_CPU; r++) {
        TgrRead *rd = &s->rd[r];

        if (rd->state != TGR_RD_IDLE && rd->bar == bar && rd->addr == addr &&
            rd->size == size && rd->ctx == ctx) {
            return r;
        }
    }
    return -1;
}

bool tgr_rd_pending(TgrState *s, int cpu, uint8_t ctx)
{
    for (int r = cpu * TGR_RD_PER_CPU; r < (cpu + 1) * TGR_RD_PER_CPU; r++) {
        if (s->rd[r].state == TGR_RD_PENDING && s->rd[r].ctx == ctx) {
            return true;
        }
    }
    return false;
}

void tgr_rd_ack(TgrState *s, uint32_t cpu_index)
{
    int cpu = cpu_index;

    if (cpu_index >= TGR_MAX_CPUS) {
        qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: RD_ACK of cpu %u\n",
                      cpu_index);
        return;
    }
    for (int r = cpu * TGR_RD_PER_CPU; r < (cpu + 1) * TGR_RD_PER_CPU; r++) {
        if (s->rd[r].state == TGR_RD_FAILED) {
            s->rd[r].state = TGR_RD_ACKED;
            s->cpu[cpu].rd_acked |= 1u << (r % TGR_RD_PER_CPU);
        }
    }
    vcpu_stall_wake_cpu(&s->stall, cpu);
}

void tgr_rd_forget_acked(TgrState *s, int cpu, int keep)
{
    TgrCpu *c = &s->cpu[cpu];

    for (unsigned left = c->rd_acked; left; left &= left - 1) {
        int i = ctz32(left);
        TgrRead *rd = &s->rd[cpu * TGR_RD_PER_CPU + i];

        if (rd->state != TGR_RD_ACKED) {
            c->rd_acked &= ~(1u << i);
        } else if (rd->ctx == c->cur_ctx && cpu * TGR_RD_PER_CPU + i != keep) {
            rd->state = TGR_RD_IDLE;
            c->rd_acked &= ~(1u << i);
        }
    }
}

void tgr_ctx_forget(TgrState *s, uint8_t ctx)
{
    for (int r = 0; r < TGR_RD_SLOTS; r++) {
        if (s->rd[r].state != TGR_RD_IDLE && s->rd[r].ctx == ctx) {
            s->rd[r].state = TGR_RD_IDLE;
        }
    }
    /* Its pages are unpinned: a late reply must not land there. */
    for (int i = 0; i < TGR_XFER_SLOTS; i++) {
        if (s->xfer[i].busy && s->xfer[i].ctx == ctx) {
            s->xfer[i].busy = false;
        }
    }
}

/*
 * A record for a new request of this vCPU: a free one, else a finished
 * one (this context's first), else the oldest.  A pending record of
 * another context survives while there is room, so that a process
 * preempted inside its load finds its reply and never sends a
 * non-idempotent atomic twice.
 */
static int tgr_rd_pick(TgrState *s, int cpu)
{
    uint8_t ctx = s->cpu[cpu].cur_ctx;
    int best = -1, best_rank = INT_MAX;

    for (int r = cpu * TGR_RD_PER_CPU; r < (cpu + 1) * TGR_RD_PER_CPU; r++) {
        TgrRead *rd = &s->rd[r];
        int rank;

        if (rd->state == TGR_RD_IDLE) {
            return r;
        }
        rank = rd->state == TGR_RD_PENDING ? 2 : rd->ctx == ctx ? 0 : 1;
        if (rank < best_rank ||
            (rank == best_rank && rd->age < s->rd[best].age)) {
            best = r;
            best_rank = rank;
        }
    }
    return best;
}

/*
 * Start a remote load or atomic keyed by (bar, addr, size, ctx).  The
 * record ends PENDING, or FAILED when the request cannot go.
 */
int tgr_rd_issue(TgrState *s, int cpu, uint8_t bar, hwaddr addr,
                 unsigned size, uint32_t page, FabricTgrHdr *t,
                 const void *body, uint32_t blen)
{
    TgrCpu *c = &s->cpu[cpu];
    uint16_t node = tgr_pte_node(s, page);
    uint32_t tag;
    TgrRead *rd;
    int r;

    if (tgr_reachable(s, node)) {
        tgr_tx_wait_room(s, node, FABRIC_TGR_HDR_LEN + blen);
    }
    /* A second atomic store before the load replaces the first. */
    r = tgr_rd_find(s, cpu, bar, addr, size);
    if (r >= 0) {
        s->rd[r].state = TGR_RD_IDLE;
    }
    r = tgr_rd_pick(s, cpu);
    rd = &s->rd[r];
    tag = tgr_new_tag(r, rd->tag);
    *rd = (TgrRead) {
        .state = TGR_RD_PENDING,
        .bar = bar,
        .size = size,
        .ctx = c->cur_ctx,
        .addr = addr,
        .age = ++s->rd_issued,
        .op = t->op,
        .node = node,
        .page = page,
        .off = t->off,
        .tag = tag,
        .deadline = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                    tgr_rread_timeout_ns(s),
    };
    t->tag = rd->tag;
    t->eidx = tgr_pte_w(s, page, 1);
    t->gen = tgr_pte_w(s, page, 2);
    if (!tgr_reachable(s, node) || !tgr_send(s, node, t, body, blen)) {
        tgr_rd_fail(s, r, TGR_ERR_UNREACHABLE);
        return r;
    }
    tgr_count(s, t->op == FABRIC_TGR_READ_REQ ? TGR_CNT_READS
                                               : TGR_CNT_ATOMICS);
    tgr_count_access(s, page);
    c->rd_status = TGR_ERR_PENDING;
    tgr_arm_deadline(s, rd->deadline);
    return r;
}

/* The (re-executed) load of record r's key: its value, or park. */
uint64_t tgr_rd_resume(TgrState *s, int r)
{
    TgrRead *rd = &s->rd[r];
    TgrCpu *c = &s->cpu[tgr_rd_cpu(r)];
    uint64_t v;

    switch (rd->state) {
    case TGR_RD_PENDING:
        if (vcpu_stall_allowed(&s->stall)) {
            rd->stalled = true;
            vcpu_stall(&s->stall);
        }
        if (current_cpu && rd->stalled) {
            /* vcpu-stall's own bound passed first: the load returns. */
            tgr_rd_fail(s, r, TGR_ERR_TIMEOUT);
            rd->state = TGR_RD_IDLE;
            return TGR_RD_ALL_ONES;
        }
        /* No vCPU to park (qtest): split phase, read it again later. */
        c->rd_status = TGR_ERR_PENDING;
        return TGR_RD_ALL_ONES;
    case TGR_RD_DONE:
        v = rd->value;
        rd->state = TGR_RD_IDLE;
        c->rd_status = TGR_ERR_OK;
        return v;
    case TGR_RD_FAILED:
        if (rd->ctx != 0 && vcpu_stall_allowed(&s->stall)) {
            rd->stalled = true;
            vcpu_stall(&s->stall);
        }
        rd->state = TGR_RD_IDLE;
        return TGR_RD_ALL_ONES;
    case TGR_RD_ACKED:
    default:
        rd->state = TGR_RD_IDLE;
        return TGR_RD_ALL_ONES;
    }
}

/* ---- transfers: FETCH and DMA_GET wait for a READ_REP ---- */

TgrXfer *tgr_xfer_alloc(TgrState *s, uint32_t *tag)
{
    for (int i = 0; i < TGR_XFER_SLOTS; i++) {
        if (!s->xfer[i].busy) {
            *tag = tgr_new_tag(TGR_RD_SLOTS + i, s->xfer[i].tag);
            return &s->xfer[i];
        }
    }
    return NULL;
}

static void tgr_xfer_fail(TgrState *s, TgrXfer *x, int reason)
{
    x->busy = false;
    tgr_ctx_status_add(s, x->ctx, true);
    tgr_event(s, TGR_EV_XFER_FAIL, reason, x->ctx, FABRIC_TGR_READ_REQ,
              x->node, 0, x->page, x->off);
}

/* ---- replies, failures, deadlines (called from the rx side) ---- */

bool tgr_reply_matches(TgrState *s, uint16_t src, uint8_t op, uint32_t tag)
{
    uint32_t slot = tag & TGR_TAG_SLOT_MASK;

    if (tag & TGR_TAG_POSTED) {
        return false;
    }
    if (slot < TGR_RD_SLOTS) {
        TgrRead *rd = &s->rd[slot];
        uint8_t want = rd->op == FABRIC_TGR_READ_REQ ? FABRIC_TGR_READ_REP
                                                     : FABRIC_TGR_ATOMIC_REP;

        return rd->state == TGR_RD_PENDING && rd->tag == tag &&
               rd->node == src && (op == want || op == FABRIC_TGR_NACK);
    }
    if (slot - TGR_RD_SLOTS < TGR_XFER_SLOTS) {
        TgrXfer *x = &s->xfer[slot - TGR_RD_SLOTS];

        return x->busy && x->tag == tag && x->node == src &&
               (op == FABRIC_TGR_READ_REP || op == FABRIC_TGR_NACK);
    }
    return false;
}

void tgr_reply(TgrState *s, uint32_t tag, int status, const uint8_t *data,
               uint32_t len)
{
    uint32_t slot = tag & TGR_TAG_SLOT_MASK;

    if (tag & TGR_TAG_POSTED) {
        return;
    }
    if (slot < TGR_RD_SLOTS) {
        TgrRead *rd = &s->rd[slot];

        if (rd->state != TGR_RD_PENDING || rd->tag != tag) {
            tgr_count(s, TGR_CNT_STALE_REPLIES);
            return;
        }
        if (!status && len < rd->size) {
            status = TGR_ERR_BADSIZE;
        }
        if (status) {
            tgr_rd_fail(s, slot, status);
            return;
        }
        rd->value = ldn_le_p(data, rd->size);
        rd->state = TGR_RD_DONE;
        vcpu_stall_wake_cpu(&s->stall, tgr_rd_cpu(slot));
    } else if (slot - TGR_RD_SLOTS < TGR_XFER_SLOTS) {
        TgrXfer *x = &s->xfer[slot - TGR_RD_SLOTS];

        if (!x->busy || x->tag != tag) {
            tgr_count(s, TGR_CNT_STALE_REPLIES);
            return;
        }
        if (!status && len < x->len) {
            status = TGR_ERR_BADSIZE;
        }
        if (!status && pci_dma_write(PCI_DEVICE(s), x->paddr, data,
                                     x->len) != MEMTX_OK) {
            status = TGR_ERR_BADADDR;
        }
        if (status) {
            tgr_xfer_fail(s, x, status);
            return;
        }
        x->busy = false;
        tgr_ctx_status_add(s, x->ctx, false);
    } else {
        tgr_count(s, TGR_CNT_STALE_REPLIES);
    }
}

bool tgr_tag_owner(TgrState *s, uint32_t tag, uint8_t *ctx, uint32_t *page)
{
    uint32_t slot = tag & TGR_TAG_SLOT_MASK;

    if (tag & TGR_TAG_POSTED) {
        *ctx = tag >> TGR_TAG_POSTED_CTX_SHIFT;
        *page = tag & TGR_TAG_POSTED_PAGE;
        return true;
    }
    if (slot < TGR_RD_SLOTS && s->rd[slot].tag == tag &&
        s->rd[slot].state != TGR_RD_IDLE) {
        *ctx = s->rd[slot].ctx;
        *page = s->rd[slot].page;
        return true;
    }
    if (slot >= TGR_RD_SLOTS && slot - TGR_RD_SLOTS < TGR_XFER_SLOTS &&
        s->xfer[slot - TGR_RD_SLOTS].busy &&
        s->xfer[slot - TGR_RD_SLOTS].tag == tag) {
        *ctx = s->xfer[slot - TGR_RD_SLOTS].ctx;
        *page = s->xfer[slot - TGR_RD_SLOTS].page;
        return true;
    }
    return false;
}

void tgr_fail_pending(TgrState *s, uint16_t node, int reason)
{
    bool all = node == FABRIC_NODE_ALL;

    for (int i = 0; i < TGR_RD_SLOTS; i++) {
        TgrRead *rd = &s->rd[i];

        /* Loopback does not need the link. */
        if (rd->state == TGR_RD_PENDING &&
            (all ? rd->node != s->node : rd->node == node)) {
            tgr_rd_fail(s, i, reason);
        }
    }
    for (int i = 0; i < TGR_XFER_SLOTS; i++) {
        TgrXfer *x = &s->xfer[i];

        if (x->busy && (all ? x->node != s->node : x->node == node)) {
            tgr_xfer_fail(s, x, reason);
        }
    }
}

void tgr_deadline_expired(void *opaque)
{
    TgrState *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t next = INT64_MAX;

    for (int i = 0; i < TGR_RD_SLOTS; i++) {
        TgrRead *rd = &s->rd[i];

        if (rd->state != TGR_RD_PENDING) {
            continue;
        }
        if (rd->deadline <= now) {
            tgr_rd_fail(s, i, TGR_ERR_TIMEOUT);
        } else {
            next = MIN(next, rd->deadline);
        }
    }
    for (int i = 0; i < TGR_XFER_SLOTS; i++) {
        TgrXfer *x = &s->xfer[i];

        if (!x->busy) {
            continue;
        }
        if (x->deadline <= now) {
            tgr_xfer_fail(s, x, TGR_ERR_TIMEOUT);
        } else {
            next = MIN(next, x->deadline);
        }
    }
    if (next != INT64_MAX) {
        timer_mod(s->deadline_timer, next);
    }
}

void tgr_rd_reset(TgrState *s)
{
    for (int i = 0; i < TGR_MAX_CPUS; i++) {
        TgrCpu *c = &s->cpu[i];

        c->larg_valid = false;
        c->larg_status = TGR_ERR_OK;
        c->fetch_status = TGR_ERR_OK;
    }
    memset(s->rd, 0, sizeof(s->rd));
    memset(s->xfer, 0, sizeof(s->xfer));
    s->tx_waiters = 0;
    timer_del(s->deadline_timer);
    vcpu_stall_wake(&s->stall);
}
