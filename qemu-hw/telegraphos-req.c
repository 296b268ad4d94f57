/*
 * Telegraphos remote-enqueue FSM and export check (telegraphos-req.h).
 * Plain C with no QEMU headers, so the host tests link it directly.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "telegraphos-req.h"
#include "vcluster/hw/tgr_regs.h"
#include "vcluster/le.h"

void tgr_export_decode(const uint8_t raw[16], TgrExport *e)
{
    uint64_t w = ld_le64(raw);

    e->page = w & ~(uint64_t)TGR_EXP_FLAGS_MASK;
    e->flags = w & TGR_EXP_FLAGS_MASK;
    e->gen = ld_le16(raw + 8);
    e->owner_ctx = raw[10];
    e->qsize_log2 = raw[11];
}

void tgr_export_encode(const TgrExport *e, uint8_t raw[16])
{
    uint64_t w = (e->page & ~(uint64_t)TGR_EXP_FLAGS_MASK) |
                 (e->flags & TGR_EXP_FLAGS_MASK);

    st_le64(raw, w);
    st_le16(raw + 8, e->gen);
    raw[10] = e->owner_ctx;
    raw[11] = e->qsize_log2;
    st_le32(raw + 12, 0);
}

int tgr_export_check(const TgrExport *e, uint16_t gen, uint32_t rights,
                     uint32_t off, uint32_t len)
{
    uint32_t have = (e->flags >> TGR_EXP_RIGHTS_SHIFT) & TGR_R_ALL;

    if (!(e->flags & TGR_EXP_VALID)) {
        return TGR_ERR_UNEXPORTED;
    }
    if (e->gen != gen) {
        return TGR_ERR_STALE;
    }
    if ((have & rights) != rights) {
        return TGR_ERR_RIGHTS;
    }
    if (len == 0 || off >= TGR_PAGE_SIZE || len > TGR_PAGE_SIZE - off) {
        return TGR_ERR_RANGE;
    }
    if ((rights & TGR_R_REQ) && !(e->flags & TGR_EXP_QHEAD)) {
        return TGR_ERR_BADQUEUE;
    }
    return TGR_ERR_OK;
}

static bool index_ok(uint32_t word, uint32_t size)
{
    uint32_t index = word & TGR_Q_INDEX_MASK;

    return word >> TGR_Q_SIZE_SHIFT == size &&
           index >= TGR_Q_FIRST_ITEM && index < size;
}

TgrReqResult tgr_req_enqueue(const TgrMem *mem, uint64_t buf, uint32_t bytes,
                             uint32_t item, int *reason)
{
    uint32_t size = bytes / 4;
    uint32_t w0, w1, tail, head, tmp;

    if (bytes < TGR_Q_MIN_BYTES || bytes > TGR_Q_MAX_BYTES ||
        (bytes & (bytes - 1))) {
        *reason = TGR_ERR_BADSIZE;
        return TGR_REQ_REFUSED;
    }
    if (buf & (bytes - 1)) {
        *reason = TGR_ERR_BADQUEUE;
        return TGR_REQ_REFUSED;
    }
    /* RD0, and RD1 ahead of time: refuse a damaged buffer before WR0. */
    if (!mem->load32(mem->opaque, buf, &w0) ||
        !mem->load32(mem->opaque, buf + 4, &w1)) {
        *reason = TGR_ERR_BADADDR;
        return TGR_REQ_REFUSED;
    }
    if (w0 >> TGR_Q_SIZE_SHIFT != size || w1 >> TGR_Q_SIZE_SHIFT != size) {
        *reason = TGR_ERR_BADSIZE;
        return TGR_REQ_REFUSED;
    }
    if (!index_ok(w0, size) || !index_ok(w1, size)) {
        *reason = TGR_ERR_BADQUEUE;
        return TGR_REQ_REFUSED;
    }
    tail = w0 & TGR_Q_INDEX_MASK;

    /* WR0: the first free element is addr OR tail, no adder needed. */
    if (!mem->store32(mem->opaque, buf | (uint64_t)tail * 4, item)) {
        *reason = TGR_ERR_BADADDR;
        return TGR_REQ_REFUSED;
    }
    tmp = tail + 1;
    tail = (tmp & size) ? TGR_Q_FIRST_ITEM : tmp;

    /* RD1: head as the owner left it, read after the item went in. */
    if (!mem->load32(mem->opaque, buf + 4, &w1) || !index_ok(w1, size)) {
        *reason = TGR_ERR_BADQUEUE;
        return TGR_REQ_REFUSED;
    }
    head = w1 & TGR_Q_INDEX_MASK;
    if (head == tail) {
        *reason = TGR_ERR_OK;
        return TGR_REQ_OVERFLOW;
    }
    /* WR1 */
    if (!mem->store32(mem->opaque, buf, size << TGR_Q_SIZE_SHIFT | tail)) {
        *reason = TGR_ERR_BADADDR;
        return TGR_REQ_REFUSED;
    }
    *reason = TGR_ERR_OK;
    return TGR_REQ_DONE;
}
