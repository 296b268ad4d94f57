/*
 * LANai-style Myrinet card: state shared by lanai.c (board, core,
 * registers) and lanai-dma.c (host DMA engine, network send and receive).
 * Spec: docs/hw/lanai.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_LANAI_H
#define VCLUSTER_LANAI_H

#include "hw/pci/pci.h"
#include "qemu/units.h"
#include "qom/object.h"
#include "fabric-link.h"
#include "proto/myrinet.h"
#include "vcpu-stall.h"
#include "rv32core.h"
/* The register interface, shared with the driver and the firmware. */
#include "vcluster/hw/lanai_regs.h"

#define TYPE_LANAI "lanai"
OBJECT_DECLARE_SIMPLE_TYPE(LanaiState, LANAI)

#define LANAI_NUM_TIMERS    3
#define LANAI_NUM_COUNTERS  ((LANAI_CNT_RX_QUEUED - LANAI_CNT_TX_PACKETS) / 4)

/* Frames waiting for the firmware to arm a receive, at most */
#define LANAI_RXQ_FRAMES    64
#define LANAI_RXQ_BYTES     (512 * KiB)

/* The send gather buffer: route, packet and the CRC the card appends */
#define LANAI_TX_BUF        (LANAI_MAX_ROUTE + LANAI_MAX_PACKET + \
                             FABRIC_MYRI_CRC_LEN)

/* The card's register regions: little-endian, 32-bit accesses only */
#define LANAI_MMIO_OPS(prefix)                      \
    {                                               \
        .read = prefix##_read,                      \
        .write = prefix##_write,                    \
        .endianness = DEVICE_LITTLE_ENDIAN,         \
        .valid = {                                  \
            .min_access_size = 4,                   \
            .max_access_size = 4,                   \
        },                                          \
        .impl = {                                   \
            .min_access_size = 4,                   \
            .max_access_size = 4,                   \
        },                                          \
    }

/* Counter index of a LANAI_CNT_* offset (RX_QUEUED is computed) */
#define LANAI_CNT(off)      (((off) - LANAI_CNT_TX_PACKETS) / 4)

struct LanaiState {
    PCIDevice parent_obj;
    MemoryRegion bar;
    MemoryRegion sram;
    MemoryRegion config_io;
    MemoryRegion special_io;
    MemoryRegion doorbell_io;
    CharBackend chr;
    FabricLink link;
    bool lockstep;              /* property: lock-step (lockstep.h) */
    Error *migration_blocker;
    QEMUTimer *timer;           /* runs the core and the interval timers */
    VCPUStall stall;            /* vCPUs parked on a doorbell WAIT read */

    /* properties */
    uint64_t sram_size;
    uint32_t node;
    uint32_t clock_mhz;
    uint32_t wdog_ms_prop;
    uint32_t wait_timeout_us;

    uint8_t *sram_ptr;

    /* fabric link */
    bool link_up;
    bool link_rejected;
    uint16_t fabric_nodes;
    uint8_t fabric_switch;
    uint8_t fabric_port;

    /* board */
    bool int_enabled;
    uint32_t irq_pending;       /* ISR & EIMR last signalled */

    /* the core and its clock */
    Rv32Core core;
    Rv32Bus bus;
    uint32_t core_state;        /* LANAI_CORE_* */
    bool run_now;               /* an event woke the core: no waiting */
    int64_t core_base_ns;       /* core time, for pacing only: */
    uint64_t core_base_insns;   /* base_ns + (insns - base) / clock */
    uint64_t wdog_start_insn;   /* core.insns at the last start, wfi or kick */
    uint32_t wdog_ms;
    uint32_t halt_cause;
    uint32_t halt_pc;
    uint32_t halt_addr;
    uint32_t insn_hi_latch;

    /* special registers */
    uint32_t isr;               /* latched bits; levels are computed */
    uint32_t eimr;
    uint32_t imr;
    int64_t it_deadline[LANAI_NUM_TIMERS];  /* ns; INT64_MAX: off */
    int64_t rtc_base_ns;
    uint32_t dma_head;
    uint32_t dma_sts;
    uint32_t dma_err_desc;
    uint32_t db_base;
    uint32_t db_size;
    uint32_t db_prod;
    uint32_t db_cons;
    uint32_t notify_count[LANAI_DOORBELL_CTXS];
    char debug_line[128];
    uint32_t debug_len;

    /* network send */
    uint32_t smp;
    uint32_t sml;
    uint32_t smlt;
    uint32_t sstat;
    uint32_t tx_errors;         /* SSTAT errors of the packet gathered */
    uint32_t tx_len;
    uint8_t *tx_buf;

    /* network receive */
    uint32_t rmp;
    uint32_t rml;
    uint32_t rstat;
    uint32_t rlen;
    GQueue rx_queue;            /* LanaiRxFrame */
    uint32_t rx_queue_bytes;
    bool rx_throttled;          /* can_rx said no since the last resume */

    uint32_t cnt[LANAI_NUM_COUNTERS];
};

/* lanai.c */
/* Arm the timer for the next slice or interval timer (outside it: earlier) */
void lanai_reschedule(LanaiState *s, bool from_tick);
void lanai_service(LanaiState *s);
/* After any change of ISR, EIMR or IMR: host interrupt, core wake-up */
void lanai_update(LanaiState *s);
uint32_t lanai_isr(LanaiState *s);

static inline void lanai_raise(LanaiState *s, uint32_t bits)
{
    s->isr |= bits;
    lanai_update(s);
}

static inline void lanai_count(LanaiState *s, uint32_t off)
{
    s->cnt[LANAI_CNT(off)]++;
}

/* lanai-dma.c */
extern const MemoryRegionOps lanai_doorbell_ops;
void lanai_dma_start(LanaiState *s);
void lanai_tx_segment(LanaiState *s, uint32_t limit, bool tail);
void lanai_rx_arm(LanaiState *s);
void lanai_rx_frame(LanaiState *s, const uint8_t *p, uint32_t len);
bool lanai_rx_can_take(void *opaque);
/* Empty the receive queue (absorbed: counted as RX_IN_RESET) */
void lanai_rx_flush(LanaiState *s, bool absorbed);
void lanai_net_reset(LanaiState *s);

#endif
