/*
 * Telegraphos NIC, the initiator: the remote window (BAR2) and the shadow
 * window (BAR4).  A store becomes a posted request; a load (or an atomic's
 * result) parks the vCPU until the reply, through a per-vCPU record keyed
 * by the access, which the re-executed load finds.  Argument latches for
 * the two-access operations, transfers (FETCH, DMA), the tx queue bound.
 * Spec: docs/hw/telegraphos.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/boards.h"
#include "sysemu/dma.h"
#include "telegraphos.h"

#define TGR_SHADOW_PAGE_MASK    (TGR_SHADOW_OP_SPAN - 1)
#define TGR_OP_RESERVED         7

/* May this vCPU do `rights` through window page `page`?  TGR_ERR_*. */
static int tgr_pte_check(TgrState *s, TgrCpu *c, uint32_t page,
                         uint32_t rights)
{
    uint32_t w0, have;

    if (page >= s->window_pages) {
        return TGR_ERR_NOPTE;
    }
    w0 = tgr_pte_w(s, page, 0);
    if (!(w0 & TGR_PTE_VALID)) {
        return TGR_ERR_NOPTE;
    }
    /* The kernel (ctx 0) uses only the kernel's PTEs, a process its own. */
    if (tgr_pte_ctx(s, page) != c->cur_ctx) {
        return TGR_ERR_BADCTX;
    }
    have = (w0 & TGR_PTE_RIGHTS_MASK) >> TGR_PTE_RIGHTS_SHIFT;
    if ((have & rights) != rights) {
        return TGR_ERR_RIGHTS;
    }
    if (tgr_pte_mode(s, page) > TGR_PTE_MODE_MCAST) {
        return TGR_ERR_BADOP;
    }
    return TGR_ERR_OK;
}

/* No window page: a local-mirror access */
#define TGR_NO_PAGE UINT32_MAX

/* A refused local access: nothing is sent. */
static void tgr_local_error(TgrState *s, int reason, uint8_t op,
                            uint32_t page, uint32_t off)
{
    int slot = tgr_cpu_slot();
    bool have_pte = page < s->window_pages;

    tgr_count(s, TGR_CNT_LOCAL_ERR);
    tgr_event(s, TGR_EV_LOCAL_ERR, reason, s->cpu[slot].cur_ctx, op,
              have_pte ? tgr_pte_node(s, page) : 0, slot,
              page == TGR_NO_PAGE ? 0 : page, off);
}

static uint32_t tgr_posted_tag(uint8_t ctx, uint32_t page, bool dma)
{
    return TGR_TAG_POSTED | (dma ? TGR_TAG_POSTED_DMA : 0) |
           (uint32_t)ctx << TGR_TAG_POSTED_CTX_SHIFT |
           (page & TGR_TAG_POSTED_PAGE);
}

/* A load refused before anything was sent */
static uint64_t tgr_load_refused(TgrState *s, int reason, uint8_t op,
                                 uint32_t page, uint32_t off)
{
    s->cpu[tgr_cpu_slot()].rd_status = reason;
    tgr_local_error(s, reason, op, page, off);
    return TGR_RD_ALL_ONES;
}

/* ---- BAR2: the remote window ---- */

static uint64_t tgr_mcast_load(TgrState *s, uint32_t page, uint32_t off,
                               unsigned size)
{
    uint32_t eidx = tgr_pte_w(s, page, 2) >> 16;
    TgrExport e;
    uint8_t buf[8];
    int err = tgr_export_read(s, eidx, &e);

    if (!err && !(e.flags & TGR_EXP_MCAST)) {
        err = TGR_ERR_RIGHTS;
    }
    if (!err) {
        err = tgr_export_check(&e, e.gen, 0, off, size);
    }
    if (!err && pci_dma_read(PCI_DEVICE(s), e.page + off, buf, size) !=
        MEMTX_OK) {
        err = TGR_ERR_BADADDR;
    }
    if (err) {
        return tgr_load_refused(s, err, FABRIC_TGR_MCAST_WRITE, page, off);
    }
    tgr_count_access(s, page);
    s->cpu[tgr_cpu_slot()].rd_status = TGR_ERR_OK;
    return ldn_le_p(buf, size);
}

static uint64_t tgr_bar2_read(void *opaque, hwaddr addr, unsigned size)
{
    TgrState *s = opaque;
    int slot = tgr_cpu_slot();
    TgrCpu *c = &s->cpu[slot];
    uint32_t page = addr >> TGR_PAGE_SHIFT;
    uint32_t off = addr & (TGR_PAGE_SIZE - 1);
    uint8_t body[FABRIC_TGR_READ_REQ_LEN];
    FabricTgrHdr t = {
        .op = FABRIC_TGR_READ_REQ,
        .size = size,
        .off = off,
    };
    int r = tgr_rd_find(s, slot, TGR_KEY_BAR2, addr, size);
    int err;

    tgr_rd_forget_acked(s, slot, r);
    if (r >= 0) {
        return tgr_rd_resume(s, r);
    }
    err = tgr_pte_check(s, c, page, TGR_R_READ);
    if (err) {
        return tgr_load_refused(s, err, FABRIC_TGR_READ_REQ, page, off);
    }
    if (tgr_pte_mode(s, page) == TGR_PTE_MODE_MCAST) {
        return tgr_mcast_load(s, page, off, size);
    }
    fabric_put_le16(body, size);
    r = tgr_rd_issue(s, slot, TGR_KEY_BAR2, addr, size, page, &t, body,
                     sizeof(body));
    return tgr_rd_resume(s, r);
}

/*
 * A posted request through window page `page` (WRITE, MCAST_WRITE, REQ,
 * DMA_PUT): the checks are done.  Waits for tx room, then sends.
 */
static int tgr_post(TgrState *s, uint32_t page, FabricTgrHdr *t,
                    const void *body, uint32_t blen, bool dma)
{
    uint32_t w0 = tgr_pte_w(s, page, 0);
    uint16_t dst;

    t->tag = tgr_posted_tag(tgr_pte_ctx(s, page), page, dma);
    if (tgr_pte_mode(s, page) == TGR_PTE_MODE_MCAST) {
        uint32_t group = w0 >> TGR_PTE_NODE_SHIFT;

        if (group >= TGR_GROUPS) {
            return TGR_ERR_RANGE;
        }
        dst = FABRIC_NODE_ALL;
        t->op = FABRIC_TGR_MCAST_WRITE;
        t->eidx = FABRIC_TGR_MCAST_EIDX(group, tgr_pte_w(s, page, 1));
        t->gen = 0;
        if (!s->link_up) {
            return TGR_ERR_UNREACHABLE;
        }
    } else {
        dst = w0 >> TGR_PTE_NODE_SHIFT;
        t->eidx = tgr_pte_w(s, page, 1);
        t->gen = tgr_pte_w(s, page, 2);
        if (!tgr_reachable(s, dst)) {
            return TGR_ERR_UNREACHABLE;
        }
    }
    tgr_tx_wait_room(s, dst, FABRIC_TGR_HDR_LEN + blen);
    if (!tgr_send(s, dst, t, body, blen)) {
        return TGR_ERR_UNREACHABLE;
    }
    if (dst != FABRIC_NODE_ALL) {
        s->posted[page] = (TgrPosted) {
            .valid = true,
            .ctx = tgr_pte_ctx(s, page),
            .node = dst,
            .gen = t->gen,
            .eidx = t->eidx,
        };
    }
    tgr_count_access(s, page);
    return TGR_ERR_OK;
}

static void tgr_bar2_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    TgrState *s = opaque;
    TgrCpu *c = &s->cpu[tgr_cpu_slot()];
    uint32_t page = addr >> TGR_PAGE_SHIFT;
    uint32_t off = addr & (TGR_PAGE_SIZE - 1);
    uint8_t body[8];
    FabricTgrHdr t = {
        .op = FABRIC_TGR_WRITE,
        .size = size,
        .off = off,
    };
    int err = tgr_pte_check(s, c, page, TGR_R_WRITE);

    tgr_rd_forget_acked(s, tgr_cpu_slot(), -1);
    if (!err) {
        stq_le_p(body, val);
        err = tgr_post(s, page, &t, body, size, false);
    }
    if (err) {
        tgr_local_error(s, err, FABRIC_TGR_WRITE, page, off);
        return;
    }
    tgr_count(s, t.op == FABRIC_TGR_MCAST_WRITE ? TGR_CNT_MCAST
                                                 : TGR_CNT_WRITES);
}

const MemoryRegionOps tgr_bar2_ops = {
    .read = tgr_bar2_read,
    .write = tgr_bar2_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Whole and as issued: a CAS is a 64-bit store on a 32-bit word. */
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

/* ---- BAR4: the shadow window ---- */

/* A local-mirror store: latch the address (and a DMA length). */
static void tgr_larg_store(TgrState *s, TgrCpu *c, hwaddr paddr,
                           uint64_t val)
{
    int err = TGR_ERR_OK;

    if (!c->cur_ctx) {
        err = TGR_ERR_NOCTX;
    } else if (paddr >= (uint64_t)s->mirror_mb * MiB ||
               paddr >= current_machine->ram_size) {
        err = TGR_ERR_BADADDR;
    }
    c->larg_status = err;
    c->larg_valid = !err;
    if (err) {
        tgr_local_error(s, err, 0, TGR_NO_PAGE, paddr);
        return;
    }
    c->larg_ctx = c->cur_ctx;
    c->larg_paddr = paddr;
    c->larg_len = val;
}

static uint32_t tgr_larg_status(TgrCpu *c)
{
    if (c->larg_valid && c->larg_ctx == c->cur_ctx) {
        return TGR_ERR_OK;
    }
    return c->larg_status ? c->larg_status : TGR_ERR_NOARGS;
}

static void tgr_req_store(TgrState *s, TgrCpu *c, uint32_t page,
                          uint32_t off, uint64_t val, unsigned size)
{
    uint8_t body[FABRIC_TGR_REQ_LEN];
    FabricTgrHdr t = {
        .op = FABRIC_TGR_REQ,
        .size = size,
        .off = off,
    };
    int err = size == FABRIC_TGR_REQ_LEN ? TGR_ERR_OK : TGR_ERR_BADSIZE;

    if (!err) {
        err = tgr_pte_check(s, c, page, TGR_R_REQ);
    }
    if (!err && tgr_pte_mode(s, page) != TGR_PTE_MODE_REMOTE) {
        err = TGR_ERR_BADOP;
    }
    if (!err) {
        stl_le_p(body, val);
        err = tgr_post(s, page, &t, body, sizeof(body), false);
    }
    if (err) {
        tgr_local_error(s, err, FABRIC_TGR_REQ, page, off);
        return;
    }
    tgr_count(s, TGR_CNT_REQS);
}

/* Checks for an atomic on a word of `word` bytes: TGR_ERR_*. */
static int tgr_atomic_check(TgrState *s, TgrCpu *c, uint32_t page,
                            uint32_t off, unsigned word)
{
    int err;

    if ((word != 4 && word != 8) || (off & (word - 1))) {
        return TGR_ERR_BADSIZE;
    }
    err = tgr_pte_check(s, c, page, TGR_R_ATOMIC);
    if (!err && tgr_pte_mode(s, page) != TGR_PTE_MODE_REMOTE) {
        err = TGR_ERR_BADOP;
    }
    return err;
}

static int tgr_atomic_issue(TgrState *s, int slot, hwaddr addr,
                             uint32_t page, uint32_t off, unsigned word,
                             uint8_t aop, uint64_t a, uint64_t b)
{
    uint8_t body[FABRIC_TGR_ATOMIC_REQ_LEN] = { aop };
    FabricTgrHdr t = {
        .op = FABRIC_TGR_ATOMIC_REQ,
        .size = word,
        .off = off,
    };

    stq_le_p(body + 8, a);
    stq_le_p(body + 16, b);
    return tgr_rd_issue(s, slot, TGR_KEY_BAR4, addr, word, page, &t, body,
                        sizeof(body));
}

static const uint8_t tgr_aop[TGR_OP_NUM] = {
    [TGR_OP_FADD] = FABRIC_TGR_AOP_FADD,
    [TGR_OP_SWAP] = FABRIC_TGR_AOP_SWAP,
    [TGR_OP_CAS] = FABRIC_TGR_AOP_CAS,
};

/*
 * FADD, SWAP, CAS store: the request leaves now; its result waits in the
 * vCPU's record for the load of the same shadow address.
 */
static void tgr_atomic_store(TgrState *s, int slot, int op, hwaddr addr,
                             uint64_t val, unsigned size)
{
    TgrCpu *c = &s->cpu[slot];
    uint32_t page = (addr & TGR_SHADOW_PAGE_MASK) >> TGR_PAGE_SHIFT;
    uint32_t off = addr & (TGR_PAGE_SIZE - 1);
    /* CAS: 64-bit store (new << 32 | expected) on a 32-bit word */
    unsigned word = op == TGR_OP_CAS ? 4 : size;
    int err = op == TGR_OP_CAS && size != 8 ? TGR_ERR_BADSIZE : TGR_ERR_OK;

    if (!err) {
        err = tgr_atomic_check(s, c, page, off, word);
    }
    if (err) {
        c->rd_status = err;
        tgr_local_error(s, err, FABRIC_TGR_ATOMIC_REQ, page, off);
        return;
    }
    if (op == TGR_OP_CAS) {
        tgr_atomic_issue(s, slot, addr, page, off, word, tgr_aop[op],
                         (uint32_t)val, val >> 32);
    } else {
        tgr_atomic_issue(s, slot, addr, page, off, word, tgr_aop[op], val,
                         0);
    }
}

/* The load of an atomic's result; a FADD load alone is fetch_and_inc. */
static uint64_t tgr_atomic_load(TgrState *s, int slot, int op, hwaddr addr,
                                unsigned size)
{
    TgrCpu *c = &s->cpu[slot];
    uint32_t page = (addr & TGR_SHADOW_PAGE_MASK) >> TGR_PAGE_SHIFT;
    uint32_t off = addr & (TGR_PAGE_SIZE - 1);
    int r = tgr_rd_find(s, slot, TGR_KEY_BAR4, addr, size);
    int err;

    tgr_rd_forget_acked(s, slot, r);
    if (r >= 0) {
        return tgr_rd_resume(s, r);
    }
    err = op == TGR_OP_FADD ? tgr_atomic_check(s, c, page, off, size)
                            : TGR_ERR_NOARGS;
    if (err) {
        return tgr_load_refused(s, err, FABRIC_TGR_ATOMIC_REQ, page, off);
    }
    r = tgr_atomic_issue(s, slot, addr, page, off, size, FABRIC_TGR_AOP_FADD,
                         1, 0);
    return tgr_rd_resume(s, r);
}

/*
 * FETCH store, DMA_PUT and DMA_GET loads: a transfer between the latched
 * local address and the remote page, within both pages.  Returns 0 when
 * it started (DMA_PUT: when it left), else TGR_ERR_*.
 */
static int tgr_xfer_start(TgrState *s, TgrCpu *c, int op, uint32_t page,
                          uint32_t off, uint32_t len)
{
    uint8_t buf[FABRIC_TGR_MAX_DATA];
    FabricTgrHdr t = {
        .op = op == TGR_OP_DMA_PUT ? FABRIC_TGR_WRITE : FABRIC_TGR_READ_REQ,
        .size = op == TGR_OP_FETCH ? len : 0,
        .off = off,
    };
    uint32_t rights = op == TGR_OP_DMA_PUT ? TGR_R_WRITE : TGR_R_READ;
    uint16_t node;
    TgrXfer *x = NULL;
    uint32_t tag = 0;
    int err;

    if (!c->larg_valid || c->larg_ctx != c->cur_ctx) {
        return TGR_ERR_NOARGS;
    }
    err = tgr_pte_check(s, c, page, rights);
    if (err) {
        return err;
    }
    if (tgr_pte_mode(s, page) != TGR_PTE_MODE_REMOTE) {
        return TGR_ERR_BADOP;
    }
    if (!len || len > TGR_PAGE_SIZE - off ||
        len > TGR_PAGE_SIZE - (c->larg_paddr & (TGR_PAGE_SIZE - 1))) {
        return TGR_ERR_RANGE;
    }
    node = tgr_pte_node(s, page);
    if (!tgr_reachable(s, node)) {
        return TGR_ERR_UNREACHABLE;
    }
    if (op == TGR_OP_DMA_PUT) {
        if (pci_dma_read(PCI_DEVICE(s), c->larg_paddr, buf, len) !=
            MEMTX_OK) {
            return TGR_ERR_BADADDR;
        }
        err = tgr_post(s, page, &t, buf, len, true);
        if (err) {
            return err;
        }
        tgr_ctx_status_add(s, c->cur_ctx, false);
    } else {
        x = tgr_xfer_alloc(s, &tag);
        if (!x) {
            return TGR_ERR_PENDING;     /* all in flight: try again */
        }
        tgr_tx_wait_room(s, node, FABRIC_TGR_HDR_LEN +
                         FABRIC_TGR_READ_REQ_LEN);
        fabric_put_le16(buf, len);
        t.tag = tag;
        t.eidx = tgr_pte_w(s, page, 1);
        t.gen = tgr_pte_w(s, page, 2);
        if (!tgr_send(s, node, &t, buf, FABRIC_TGR_READ_REQ_LEN)) {
            return TGR_ERR_UNREACHABLE;
        }
        *x = (TgrXfer) {
            .busy = true,
            .ctx = c->cur_ctx,
            .node = node,
            .page = page,
            .off = off,
            .len = len,
            .tag = tag,
            .paddr = c->larg_paddr,
            .deadline = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                        tgr_rread_timeout_ns(s),
        };
        tgr_arm_deadline(s, x->deadline);
        tgr_count_access(s, page);
    }
    c->larg_valid = false;
    tgr_count(s, TGR_CNT_DMA);
    return TGR_ERR_OK;
}

static uint64_t tgr_bar4_read(void *opaque, hwaddr addr, unsigned size)
{
    TgrState *s = opaque;
    int slot = tgr_cpu_slot();
    TgrCpu *c = &s->cpu[slot];
    int op = (addr >> TGR_SHADOW_OP_SHIFT) & 7;
    uint32_t page = (addr & TGR_SHADOW_PAGE_MASK) >> TGR_PAGE_SHIFT;
    uint32_t off = addr & (TGR_PAGE_SIZE - 1);
    int err;

    if (!(addr & TGR_SHADOW_REMOTE)) {
        tgr_rd_forget_acked(s, slot, -1);
        return tgr_larg_status(c);
    }
    switch (op) {
    case TGR_OP_FADD:
    case TGR_OP_SWAP:
    case TGR_OP_CAS:
        return tgr_atomic_load(s, slot, op, addr, size);
    case TGR_OP_FETCH:
        tgr_rd_forget_acked(s, slot, -1);
        return c->fetch_status;
    case TGR_OP_DMA_PUT:
    case TGR_OP_DMA_GET:
        tgr_rd_forget_acked(s, slot, -1);
        err = tgr_xfer_start(s, c, op, page, off, c->larg_len);
        if (err && err != TGR_ERR_PENDING) {
            tgr_local_error(s, err, op == TGR_OP_DMA_PUT ? FABRIC_TGR_WRITE
                                    : FABRIC_TGR_READ_REQ, page, off);
        }
        return err;
    default:
        /* REQ has no load; op 7 is reserved */
        return tgr_load_refused(s, TGR_ERR_BADOP, 0, page, off);
    }
}

static void tgr_bar4_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    TgrState *s = opaque;
    int slot = tgr_cpu_slot();
    TgrCpu *c = &s->cpu[slot];
    int op = (addr >> TGR_SHADOW_OP_SHIFT) & 7;
    uint32_t page = (addr & TGR_SHADOW_PAGE_MASK) >> TGR_PAGE_SHIFT;
    uint32_t off = addr & (TGR_PAGE_SIZE - 1);
    int err;

    tgr_rd_forget_acked(s, slot, -1);
    if (!(addr & TGR_SHADOW_REMOTE)) {
        tgr_larg_store(s, c, addr, val);
        return;
    }
    switch (op) {
    case TGR_OP_REQ:
        tgr_req_store(s, c, page, off, val, size);
        break;
    case TGR_OP_FADD:
    case TGR_OP_SWAP:
    case TGR_OP_CAS:
        tgr_atomic_store(s, slot, op, addr, val, size);
        break;
    case TGR_OP_FETCH:
        err = tgr_xfer_start(s, c, op, page, off, size);
        c->fetch_status = err;
        if (err) {
            /* A store returns nothing: count it where completions go. */
            tgr_ctx_status_add(s, c->cur_ctx, true);
            tgr_local_error(s, err, FABRIC_TGR_READ_REQ, page, off);
        }
        break;
    default:
        /* DMA ops start by a load; op 7 is reserved */
        tgr_local_error(s, TGR_ERR_BADOP, 0, page, off);
        break;
    }
}

const MemoryRegionOps tgr_bar4_ops = {
    .read = tgr_bar4_read,
    .write = tgr_bar4_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Whole and as issued: a CAS is a 64-bit store on a 32-bit word. */
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};
