/*
 * Telegraphos NIC, the target: every incoming request is checked against
 * the export table in guest RAM, then applied (write, read, atomic,
 * remote enqueue, multicast).  A refused request never touches memory: it
 * is counted, reported by an event and answered with a NACK.  After a
 * queue overflow the card holds requests in order until RESUME, while
 * replies still pass.  Sequence gaps are counted, not repaired.
 * Spec: docs/hw/telegraphos.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "sysemu/dma.h"
#include "telegraphos.h"

/* ---- guest memory, whole words where a vCPU may look concurrently ---- */

static bool tgr_mem_load32(void *opaque, uint64_t addr, uint32_t *val)
{
    return ldl_le_pci_dma(PCI_DEVICE(opaque), addr, val,
                          MEMTXATTRS_UNSPECIFIED) == MEMTX_OK;
}

static bool tgr_mem_store32(void *opaque, uint64_t addr, uint32_t val)
{
    return stl_le_pci_dma(PCI_DEVICE(opaque), addr, val,
                          MEMTXATTRS_UNSPECIFIED) == MEMTX_OK;
}

static const TgrMem tgr_mem_ops = {
    .load32 = tgr_mem_load32,
    .store32 = tgr_mem_store32,
};

static bool tgr_mem_write(TgrState *s, uint64_t addr, const uint8_t *data,
                          uint32_t len)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (len == 4 && !(addr & 3)) {
        return stl_le_pci_dma(pdev, addr, ldl_le_p(data),
                              MEMTXATTRS_UNSPECIFIED) == MEMTX_OK;
    }
    if (len == 8 && !(addr & 7)) {
        return stq_le_pci_dma(pdev, addr, ldq_le_p(data),
                              MEMTXATTRS_UNSPECIFIED) == MEMTX_OK;
    }
    return pci_dma_write(pdev, addr, data, len) == MEMTX_OK;
}

static bool tgr_mem_read(TgrState *s, uint64_t addr, uint8_t *data,
                         uint32_t len)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t w;
    uint64_t q;

    if (len == 4 && !(addr & 3)) {
        if (ldl_le_pci_dma(pdev, addr, &w, MEMTXATTRS_UNSPECIFIED)) {
            return false;
        }
        stl_le_p(data, w);
        return true;
    }
    if (len == 8 && !(addr & 7)) {
        if (ldq_le_pci_dma(pdev, addr, &q, MEMTXATTRS_UNSPECIFIED)) {
            return false;
        }
        stq_le_p(data, q);
        return true;
    }
    return pci_dma_read(pdev, addr, data, len) == MEMTX_OK;
}

/* ---- refusals ---- */

static void tgr_violation(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                          int reason, uint8_t owner_ctx)
{
    FabricTgrNack n = { .op = t->op, .reason = reason, .seq = t->seq };
    uint8_t nack[FABRIC_TGR_NACK_LEN];
    FabricTgrHdr r = {
        .op = FABRIC_TGR_NACK,
        .tag = t->tag,
        .eidx = t->eidx,
        .gen = t->gen,
        .off = t->off,
    };

    tgr_count(s, TGR_CNT_VIOL_IN);
    tgr_event(s, TGR_EV_VIOL_IN, reason, owner_ctx, t->op, src, 0, t->eidx,
              t->off);
    /* Multicast has no one sender to answer. */
    if (t->op != FABRIC_TGR_MCAST_WRITE && src < FABRIC_MAX_NODES) {
        tgr_send(s, src, &r, nack, fabric_tgr_nack_encode(&n, nack));
    }
}

/* The export entry for a request and its check: 0 or TGR_ERR_*. */
static int tgr_rx_check(TgrState *s, const FabricTgrHdr *t, uint32_t eidx,
                        uint32_t rights, uint32_t len, TgrExport *e)
{
    int err = tgr_export_read(s, eidx, e);

    if (err) {
        e->owner_ctx = 0;
        return err;
    }
    return tgr_export_check(e, t->gen, rights, t->off, len);
}

/* Data length of a WRITE or MCAST_WRITE: size bytes, or a DMA chunk. */
static uint32_t tgr_write_len(const FabricTgrHdr *t, uint32_t blen)
{
    if (t->size == 0) {
        return blen && blen <= FABRIC_TGR_MAX_DATA ? blen : 0;
    }
    if ((t->size == 1 || t->size == 2 || t->size == 4 || t->size == 8) &&
        blen == t->size) {
        return blen;
    }
    return 0;
}

/* ---- requests ---- */

static void tgr_rx_write(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                         const uint8_t *body, uint32_t blen)
{
    uint32_t len = tgr_write_len(t, blen);
    TgrExport e = { 0 };
    int err = len ? tgr_rx_check(s, t, t->eidx, TGR_R_WRITE, len, &e)
                  : TGR_ERR_BADSIZE;

    if (!err && !tgr_mem_write(s, e.page + t->off, body, len)) {
        err = TGR_ERR_BADADDR;
    }
    if (err) {
        tgr_violation(s, src, t, err, e.owner_ctx);
    }
}

static void tgr_rx_mcast(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                         const uint8_t *body, uint32_t blen)
{
    uint32_t group = t->eidx >> 16;
    uint32_t len = tgr_write_len(t, blen);
    TgrExport e = { 0 };
    int err;

    uint32_t gpage = t->eidx & 0xffff;
    uint64_t eidx;

    /* Not (or no longer) a member: the copy is not ours to apply. */
    if (group >= TGR_GROUPS || s->group_eidx[group] == TGR_GROUP_NONE) {
        return;
    }
    /*
     * Beyond the group's pages the next export entries may be another
     * group's copy: the page must be one of this group's.
     */
    eidx = (uint64_t)s->group_eidx[group] + gpage;
    if (!len) {
        err = TGR_ERR_BADSIZE;
    } else if (gpage >= s->group_pages[group] || eidx >= s->exp_count) {
        err = TGR_ERR_RANGE;
    } else {
        err = tgr_export_read(s, eidx, &e);
    }
    if (!err && !(e.flags & TGR_EXP_MCAST)) {
        err = TGR_ERR_RIGHTS;
    }
    if (!err) {
        /* The sender cannot know our generation: only the range counts. */
        err = tgr_export_check(&e, e.gen, 0, t->off, len);
    }
    if (!err && !tgr_mem_write(s, e.page + t->off, body, len)) {
        err = TGR_ERR_BADADDR;
    }
    if (err) {
        tgr_violation(s, src, t, err, e.owner_ctx);
    }
}

static void tgr_rx_read(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                        const uint8_t *body, uint32_t blen)
{
    uint8_t rep[FABRIC_TGR_REP_HDR_LEN + FABRIC_TGR_MAX_DATA] = { 0 };
    uint32_t len = blen >= FABRIC_TGR_READ_REQ_LEN ? fabric_get_le16(body)
                                                    : 0;
    FabricTgrHdr r = {
        .op = FABRIC_TGR_READ_REP,
        .size = t->size,
        .tag = t->tag,
        .eidx = t->eidx,
        .gen = t->gen,
        .off = t->off,
    };
    TgrExport e = { 0 };
    int err = len && len <= FABRIC_TGR_MAX_DATA
              ? tgr_rx_check(s, t, t->eidx, TGR_R_READ, len, &e)
              : TGR_ERR_BADSIZE;

    if (!err && !tgr_mem_read(s, e.page + t->off,
                              rep + FABRIC_TGR_REP_HDR_LEN, len)) {
        err = TGR_ERR_BADADDR;
    }
    if (err) {
        tgr_violation(s, src, t, err, e.owner_ctx);
        return;
    }
    tgr_send(s, src, &r, rep, FABRIC_TGR_REP_HDR_LEN + len);
}

/* One step under the BQL on the word, so concurrent atomics serialise. */
static void tgr_rx_atomic(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                          const uint8_t *body, uint32_t blen)
{
    uint8_t rep[FABRIC_TGR_ATOMIC_REP_LEN] = { 0 };
    uint8_t word[8];
    FabricTgrHdr r = {
        .op = FABRIC_TGR_ATOMIC_REP,
        .size = t->size,
        .tag = t->tag,
        .eidx = t->eidx,
        .gen = t->gen,
        .off = t->off,
    };
    uint64_t mask = t->size == 8 ? UINT64_MAX : UINT32_MAX;
    uint64_t old, a, b, new;
    TgrExport e = { 0 };
    uint64_t addr;
    int err = TGR_ERR_OK;

    if ((t->size != 4 && t->size != 8) || (t->off & (t->size - 1)) ||
        blen < FABRIC_TGR_ATOMIC_REQ_LEN) {
        err = TGR_ERR_BADSIZE;
    } else if (body[0] < FABRIC_TGR_AOP_FADD ||
               body[0] > FABRIC_TGR_AOP_CAS) {
        err = TGR_ERR_BADOP;
    } else {
        err = tgr_rx_check(s, t, t->eidx, TGR_R_ATOMIC, t->size, &e);
    }
    addr = e.page + t->off;
    if (!err && !tgr_mem_read(s, addr, word, t->size)) {
        err = TGR_ERR_BADADDR;
    }
    if (err) {
        tgr_violation(s, src, t, err, e.owner_ctx);
        return;
    }
    old = ldn_le_p(word, t->size);
    a = ldq_le_p(body + 8) & mask;
    b = ldq_le_p(body + 16) & mask;
    switch (body[0]) {
    case FABRIC_TGR_AOP_FADD:
        new = (old + a) & mask;
        break;
    case FABRIC_TGR_AOP_SWAP:
        new = a;
        break;
    default:
        new = old == a ? b : old;
        break;
    }
    if (new != old || body[0] != FABRIC_TGR_AOP_CAS) {
        stn_le_p(word, t->size, new);
        if (!tgr_mem_write(s, addr, word, t->size)) {
            tgr_violation(s, src, t, TGR_ERR_BADADDR, e.owner_ctx);
            return;
        }
    }
    stq_le_p(rep + 8, old);
    tgr_send(s, src, &r, rep, sizeof(rep));
}

/* Remote enqueue: the paper's receive FSM (telegraphos-req.c). */
static void tgr_rx_req(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                       const uint8_t *body, uint32_t blen)
{
    TgrMem mem = tgr_mem_ops;
    TgrExport e = { 0 };
    TgrReqResult res;
    int err, reason;

    mem.opaque = s;
    if (t->size != FABRIC_TGR_REQ_LEN || blen < FABRIC_TGR_REQ_LEN) {
        err = TGR_ERR_BADSIZE;
    } else {
        err = tgr_rx_check(s, t, t->eidx, TGR_R_REQ, FABRIC_TGR_REQ_LEN, &e);
    }
    if (!err && t->off != 0) {
        err = TGR_ERR_BADQUEUE;     /* the buffer starts its page */
    }
    if (err) {
        tgr_violation(s, src, t, err, e.owner_ctx);
        return;
    }
    res = tgr_req_enqueue(&mem, e.page,
                          e.qsize_log2 < 32 ? 1u << e.qsize_log2 : 0,
                          ldl_le_p(body), &reason);
    if (res == TGR_REQ_REFUSED) {
        tgr_violation(s, src, t, reason, e.owner_ctx);
        return;
    }
    tgr_count(s, TGR_CNT_REQS_IN);
    if (res == TGR_REQ_OVERFLOW) {
        /* The paper: stop accepting network requests, interrupt the host */
        tgr_count(s, TGR_CNT_REQ_OVF);
        s->stopped = true;
        s->ovf_eidx = t->eidx;
        s->ovf_src = src;
        tgr_raise(s, TGR_INT_OVF);
    }
}

static void tgr_rx_request(TgrState *s, uint16_t src, const uint8_t *p,
                           uint32_t len)
{
    FabricTgrHdr t = { 0 };
    const uint8_t *body = p + FABRIC_TGR_HDR_LEN;
    uint32_t blen = len - FABRIC_TGR_HDR_LEN;

    /* Decoded once already when it arrived */
    if (!fabric_tgr_hdr_decode(p, len, &t)) {
        return;
    }
    switch (t.op) {
    case FABRIC_TGR_WRITE:
        tgr_rx_write(s, src, &t, body, blen);
        break;
    case FABRIC_TGR_MCAST_WRITE:
        tgr_rx_mcast(s, src, &t, body, blen);
        break;
    case FABRIC_TGR_READ_REQ:
        tgr_rx_read(s, src, &t, body, blen);
        break;
    case FABRIC_TGR_ATOMIC_REQ:
        tgr_rx_atomic(s, src, &t, body, blen);
        break;
    case FABRIC_TGR_REQ:
        tgr_rx_req(s, src, &t, body, blen);
        break;
    default:
        break;
    }
}

/* ---- replies and NACKs: never held ---- */

/*
 * Did we send the posted request a NACK with this tag answers, to `src`?
 * The tag names the context and window page: the last posted request
 * through that page must have gone to `src`, for that context, to the
 * export the NACK names; and if the page maps something now, that same
 * export (a NACK for an old mapping must not hit the new one).
 */
static bool tgr_posted_matches(TgrState *s, uint16_t src,
                               const FabricTgrHdr *t)
{
    uint32_t page = t->tag & TGR_TAG_POSTED_PAGE;
    uint8_t ctx = t->tag >> TGR_TAG_POSTED_CTX_SHIFT;
    TgrPosted *p;

    if (page >= s->window_pages) {
        return false;
    }
    p = &s->posted[page];
    if (!p->valid || p->ctx != ctx || p->node != src ||
        p->eidx != t->eidx || p->gen != t->gen) {
        return false;
    }
    return !(tgr_pte_w(s, page, 0) & TGR_PTE_VALID) ||
           (tgr_pte_mode(s, page) == TGR_PTE_MODE_REMOTE &&
            tgr_pte_ctx(s, page) == ctx && tgr_pte_node(s, page) == src &&
            tgr_pte_w(s, page, 1) == t->eidx &&
            (uint16_t)tgr_pte_w(s, page, 2) == t->gen);
}

/* A reply or NACK that answers nothing we asked of `src`: dropped. */
static void tgr_rx_unmatched(TgrState *s, uint16_t src,
                             const FabricTgrHdr *t)
{
    tgr_count(s, TGR_CNT_STALE_REPLIES);
    qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: node %u: op %u tag 0x%x "
                  "from node %u answers no request to it; dropped\n",
                  s->node, t->op, t->tag, src);
}

static void tgr_rx_nack(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                        const uint8_t *body, uint32_t blen)
{
    FabricTgrNack n;
    uint8_t ctx = 0;
    uint32_t page = 0;
    int reason;

    if (!fabric_tgr_nack_decode(body, blen, &n)) {
        return;
    }
    if ((t->tag & TGR_TAG_POSTED) ? !tgr_posted_matches(s, src, t)
                                  : !tgr_reply_matches(s, src, t->op,
                                                       t->tag)) {
        tgr_rx_unmatched(s, src, t);
        return;
    }
    reason = n.reason ? n.reason : TGR_ERR_BADADDR;
    tgr_count(s, TGR_CNT_VIOL_OUT);
    tgr_tag_owner(s, t->tag, &ctx, &page);
    tgr_event(s, TGR_EV_VIOL_OUT, reason, ctx, n.op, src, 0, page,
              t->off);
    if (t->tag & TGR_TAG_POSTED) {
        if (t->tag & TGR_TAG_POSTED_DMA) {
            tgr_ctx_status_add(s, ctx, true);
        }
        return;
    }
    tgr_reply(s, t->tag, reason, NULL, 0);
}

static bool tgr_is_reply(uint8_t op)
{
    return op == FABRIC_TGR_READ_REP || op == FABRIC_TGR_ATOMIC_REP ||
           op == FABRIC_TGR_NACK;
}

static void tgr_rx_reply(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                         const uint8_t *body, uint32_t blen)
{
    if (t->op != FABRIC_TGR_NACK && !tgr_reply_matches(s, src, t->op,
                                                       t->tag)) {
        tgr_rx_unmatched(s, src, t);
        return;
    }
    switch (t->op) {
    case FABRIC_TGR_READ_REP:
        if (blen >= FABRIC_TGR_REP_HDR_LEN) {
            tgr_reply(s, t->tag, body[0], body + FABRIC_TGR_REP_HDR_LEN,
                      blen - FABRIC_TGR_REP_HDR_LEN);
        }
        break;
    case FABRIC_TGR_ATOMIC_REP:
        if (blen >= FABRIC_TGR_ATOMIC_REP_LEN) {
            tgr_reply(s, t->tag, body[0], body + 8, 8);
        }
        break;
    default:
        tgr_rx_nack(s, src, t, body, blen);
        break;
    }
}

/* ---- order: sequence numbers per source ---- */

static void tgr_seq_check(TgrState *s, uint16_t src, const FabricTgrHdr *t,
                          const uint8_t *body, uint32_t blen)
{
    bool mc = t->op == FABRIC_TGR_MCAST_WRITE;
    TgrPeer *p;
    bool *known;
    uint16_t *epoch;
    uint32_t *seq, want;
    bool gap;

    /* fabricd's own NACK (no such node) has no place in a sequence */
    if (src >= FABRIC_MAX_NODES ||
        (t->op == FABRIC_TGR_NACK && blen >= 2 &&
         body[1] == TGR_ERR_UNREACHABLE)) {
        return;
    }
    p = &s->peer[src];
    known = mc ? &p->mc_known : &p->rx_known;
    epoch = mc ? &p->mc_epoch : &p->rx_epoch;
    seq = mc ? &p->mc_seq : &p->rx_seq;
    if (!*known) {
        /* After our reset (or its PEER_RESET) take what comes. */
        want = t->seq;
    } else if (*epoch != t->epoch) {
        want = 0;       /* it restarted: a new epoch starts at 0 */
    } else {
        want = *seq;
    }
    gap = t->seq != want;
    *known = true;
    *epoch = t->epoch;
    *seq = t->seq + 1;
    if (gap) {
        tgr_count(s, TGR_CNT_SEQ_GAPS);
        tgr_event(s, TGR_EV_SEQ_GAP, TGR_ERR_OK, 0, t->op, src, 0, want,
                  t->seq);
    }
}

/* ---- receive, hold while stopped, drain on RESUME ---- */

static void tgr_hold(TgrState *s, uint16_t src, const uint8_t *p,
                     uint32_t len)
{
    TgrFrame *f = g_malloc(sizeof(*f) + len);

    f->src = src;
    f->len = len;
    memcpy(f->data, p, len);
    g_queue_push_tail(&s->hold, f);
    s->hold_bytes += TGR_HOLD_COST(len);
    tgr_count(s, TGR_CNT_HELD);
}

static TgrFrame *tgr_unhold(TgrState *s)
{
    TgrFrame *f = g_queue_pop_head(&s->hold);

    if (f) {
        s->hold_bytes -= TGR_HOLD_COST(f->len);
    }
    return f;
}

/* Full hold: the card stops reading its socket. */
static bool tgr_hold_full(TgrState *s)
{
    return g_queue_get_length(&s->hold) >= s->rx_hold_frames ||
           s->hold_bytes >= TGR_HOLD_MAX_BYTES;
}

void tgr_link_rx_data(TgrState *s, uint16_t src, const uint8_t *p,
                      uint32_t len)
{
    FabricTgrHdr t;
    const uint8_t *body = p + FABRIC_TGR_HDR_LEN;

    tgr_count(s, TGR_CNT_RX_FRAMES);
    if (!fabric_tgr_hdr_decode(p, len, &t)) {
        qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: node %u: malformed "
                      "frame from node %u dropped\n", s->node, src);
        return;
    }
    tgr_seq_check(s, src, &t, body, len - FABRIC_TGR_HDR_LEN);
    if (tgr_is_reply(t.op)) {
        tgr_rx_reply(s, src, &t, body, len - FABRIC_TGR_HDR_LEN);
    } else if (s->stopped || !g_queue_is_empty(&s->hold) || tgr_tx_full(s)) {
        /*
         * Behind held requests a request waits its turn.  A full tx queue
         * holds requests too: their replies would pile up in QEMU when
         * fabricd stops reading us (a node that never reads its replies).
         */
        tgr_hold(s, src, p, len);
    } else {
        tgr_rx_request(s, src, p, len);
    }
}

bool tgr_rx_can_take(void *opaque)
{
    TgrState *s = opaque;

    if (tgr_hold_full(s)) {
        s->rx_throttled = true;
        return false;
    }
    return true;
}

static void tgr_rx_unthrottle(TgrState *s)
{
    if (s->rx_throttled && !tgr_hold_full(s)) {
        s->rx_throttled = false;
        fabric_link_rx_resume(&s->link);
    }
}

void tgr_drain_held(void *opaque)
{
    TgrState *s = opaque;
    TgrFrame *f;

    /*
     * A request that overflows again stops the drain where it is; so does
     * a full tx queue, until it drained to half (tgr_rx_tx_room).
     */
    while (!s->stopped && !tgr_tx_full(s) && (f = tgr_unhold(s))) {
        tgr_rx_request(s, f->src, f->data, f->len);
        g_free(f);
    }
    tgr_groups_sync(s);
    tgr_rx_unthrottle(s);
    tgr_tx_wake(s);
}

void tgr_rx_tx_room(TgrState *s)
{
    /* From a timer: the link's tx callback must not send itself. */
    if (((!s->stopped && !g_queue_is_empty(&s->hold)) ||
         tgr_groups_dirty(s)) && !timer_pending(s->drain_timer)) {
        timer_mod(s->drain_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    }
}

void tgr_rx_resume(TgrState *s)
{
    s->stopped = false;
    /* Not inside the MMIO write: from the virtual clock, now. */
    timer_mod(s->drain_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
}

void tgr_loop_run(void *opaque)
{
    TgrState *s = opaque;
    TgrFrame *f;

    while ((f = g_queue_pop_head(&s->loop))) {
        tgr_link_rx_data(s, f->src, f->data, f->len);
        g_free(f);
    }
    tgr_tx_wake(s);
}

void tgr_rx_flush(TgrState *s)
{
    TgrFrame *f;

    while ((f = tgr_unhold(s))) {
        g_free(f);
    }
    while ((f = g_queue_pop_head(&s->loop))) {
        g_free(f);
    }
    if (s->drain_timer) {
        timer_del(s->drain_timer);
        timer_del(s->loop_timer);
    }
    tgr_rx_unthrottle(s);
}
