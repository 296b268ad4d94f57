/*
 * Telegraphos target side without QEMU: the remote-enqueue receive FSM
 * (Markatos et al., "The Remote Enqueue Operation on Networks of
 * Workstations", Table 1) and the export-table check, over memory
 * callbacks.  The device runs them on guest RAM through PCI DMA; the host
 * unit tests run them on an array, beside libtgr's dequeue.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_TELEGRAPHOS_REQ_H
#define VCLUSTER_TELEGRAPHOS_REQ_H

#include <stdbool.h>
#include <stdint.h>

/* 32-bit little-endian words of guest memory, by physical address. */
typedef struct TgrMem {
    /* false: the address is not memory (counted as TGR_ERR_BADADDR) */
    bool (*load32)(void *opaque, uint64_t addr, uint32_t *val);
    bool (*store32)(void *opaque, uint64_t addr, uint32_t val);
    void *opaque;
} TgrMem;

/* What an enqueue did; TGR_REQ_OVERFLOW: stop accepting requests. */
typedef enum TgrReqResult {
    TGR_REQ_DONE,
    TGR_REQ_OVERFLOW,   /* item written, tail not: the buffer is full */
    TGR_REQ_REFUSED,    /* *reason says why; memory untouched */
} TgrReqResult;

/*
 * Enqueue `item` into the buffer at `buf` (its base, aligned to
 * `bytes`, a power of 2 in TGR_Q_MIN_BYTES..TGR_Q_MAX_BYTES, as the export
 * entry says).  Words 0 and 1 must carry size = bytes / 4 and indices
 * in 3..size-1, else the request is refused before anything is written.
 */
TgrReqResult tgr_req_enqueue(const TgrMem *mem, uint64_t buf, uint32_t bytes,
                             uint32_t item, int *reason);

/* An export entry (TGR_EXP_ENTRY bytes) as the device reads it. */
typedef struct TgrExport {
    uint64_t page;      /* guest-physical page address */
    uint32_t flags;     /* TGR_EXP_* and rights << TGR_EXP_RIGHTS_SHIFT */
    uint16_t gen;
    uint8_t owner_ctx;
    uint8_t qsize_log2;
} TgrExport;

void tgr_export_decode(const uint8_t raw[16], TgrExport *e);
void tgr_export_encode(const TgrExport *e, uint8_t raw[16]);

/*
 * May a request with generation `gen` do `rights` (TGR_R_*) on bytes
 * off..off+len-1 of the page?  0 or the TGR_ERR_* reason.  A REQ also
 * needs QHEAD, offset 0, a size word that matches and an aligned buffer:
 * tgr_req_enqueue() checks the buffer itself.
 */
int tgr_export_check(const TgrExport *e, uint16_t gen, uint32_t rights,
                     uint32_t off, uint32_t len);

#endif
