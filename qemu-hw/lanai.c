/*
 * LANai-style Myrinet card: on-board SRAM, an RV32IM core that runs the
 * firmware (MCP) the host loads, the LANai special registers, doorbells,
 * a host DMA engine and network send and receive DMA with a CRC-32.  The
 * crossbar switches live in fabricd's myrinet kind.  This file has the
 * board, the core and the registers; lanai-dma.c the DMA engines and
 * the doorbells.
 * Spec: docs/hw/lanai.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/host-utils.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/blocker.h"
#include "lanai.h"

/*
 * Core scheduling (docs/hw/lanai.md, "The core"): the core may run ahead
 * of virtual time by LEAD, so that it answers an event at once; when it is
 * further behind than MAX_LAG the difference is dropped; one timer
 * callback runs at most SLICE instructions, so the main loop, which holds
 * the BQL meanwhile, gets back to vCPU MMIO and the fabric socket.
 */
#define LANAI_LEAD_NS       (20 * SCALE_US)
#define LANAI_MAX_LAG_NS    (1 * SCALE_MS)
#define LANAI_SLICE_INSNS   10000

QEMU_BUILD_BUG_ON(LANAI_MAX_ROUTE != FABRIC_MYRI_MAX_ROUTE);
QEMU_BUILD_BUG_ON(LANAI_MAX_PACKET != FABRIC_MYRI_MAX_PACKET);
QEMU_BUILD_BUG_ON(LANAI_ROUTE_BIT != FABRIC_MYRI_ROUTE_BIT);
QEMU_BUILD_BUG_ON(LANAI_CORE_REG_BASE != RV32_IO_BASE);
QEMU_BUILD_BUG_ON(LANAI_REG_CLOCK >= RV32_IO_SIZE);

static const uint32_t lanai_timer_reg[LANAI_NUM_TIMERS] = {
    LANAI_REG_IT0, LANAI_REG_IT1, LANAI_REG_IT2,
};
static const uint32_t lanai_timer_bit[LANAI_NUM_TIMERS] = {
    LANAI_ISR_TIME0, LANAI_ISR_TIME1, LANAI_ISR_TIME2,
};

static const char *lanai_halt_name(uint32_t cause)
{
    static const char *const names[] = {
        [LANAI_HALT_NONE] = "none",
        [LANAI_HALT_FETCH] = "fetch outside SRAM",
        [LANAI_HALT_LOAD] = "load outside SRAM and the registers",
        [LANAI_HALT_STORE] = "store outside SRAM and the registers",
        [LANAI_HALT_MISALIGNED] = "misaligned access",
        [LANAI_HALT_ILLEGAL] = "illegal instruction",
        [LANAI_HALT_EBREAK] = "ebreak",
        [LANAI_HALT_ECALL] = "ecall",
        [LANAI_HALT_WDOG] = "watchdog",
    };

    return cause < ARRAY_SIZE(names) ? names[cause] : "?";
}

/*
 * ---- time ----
 *
 * The card's clocks (RTC, interval timers, watchdog) are the virtual
 * clock.  The core's own time, its instructions at clock-mhz since a
 * base, only paces it against the virtual clock.
 */

static int64_t lanai_virtual_ns(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static int64_t lanai_core_ns(LanaiState *s)
{
    return s->core_base_ns +
           muldiv64(s->core.insns - s->core_base_insns, 1000, s->clock_mhz);
}

static void lanai_core_rebase(LanaiState *s, int64_t ns)
{
    s->core_base_ns = ns;
    s->core_base_insns = s->core.insns;
}

/* Interval timers that are due set their ISR bit; true if any did. */
static bool lanai_timers_expire(LanaiState *s, int64_t now)
{
    bool fired = false;

    for (int i = 0; i < LANAI_NUM_TIMERS; i++) {
        if (s->it_deadline[i] <= now) {
            s->it_deadline[i] = INT64_MAX;
            s->isr |= lanai_timer_bit[i];
            fired = true;
        }
    }
    return fired;
}

static int64_t lanai_timers_next(LanaiState *s)
{
    int64_t next = INT64_MAX;

    for (int i = 0; i < LANAI_NUM_TIMERS; i++) {
        next = MIN(next, s->it_deadline[i]);
    }
    return next;
}

/*
 * Arm the one timer for the next thing to do: a core slice or a due
 * interval timer.  Outside the timer callback only ever earlier, so an
 * MMIO access cannot postpone a slice; a spurious callback is harmless.
 */
void lanai_reschedule(LanaiState *s, bool from_tick)
{
    int64_t now = lanai_virtual_ns();
    int64_t next = lanai_timers_next(s);

    if (s->core_state == LANAI_CORE_RUN) {
        /* now + 1: a core that is behind still lets the main loop run */
        next = MIN(next, s->run_now ? now : MAX(lanai_core_ns(s), now + 1));
    }
    if (!from_tick) {
        if (next != INT64_MAX) {
            timer_mod_anticipate(s->timer, next);
        }
    } else if (next == INT64_MAX) {
        timer_del(s->timer);
    } else {
        timer_mod(s->timer, next);
    }
}

/* ---- interrupts and wake-up ---- */

uint32_t lanai_isr(LanaiState *s)
{
    uint32_t isr = s->isr | LANAI_ISR_SEND;

    if (s->db_prod != s->db_cons) {
        isr |= LANAI_ISR_DOORBELL;
    }
    return isr;
}

void lanai_update(LanaiState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t isr = lanai_isr(s);
    uint32_t pending = s->int_enabled ? isr & s->eimr : 0;

    if (msi_enabled(pdev)) {
        if (pending & ~s->irq_pending) {
            msi_notify(pdev, 0);
        }
        pci_set_irq(pdev, 0);
    } else {
        pci_set_irq(pdev, pending != 0);
    }
    s->irq_pending = pending;

    if (s->core_state == LANAI_CORE_SLEEP && (isr & s->imr)) {
        /* Asleep the core's clock stood still: it resumes at now. */
        s->core_state = LANAI_CORE_RUN;
        lanai_core_rebase(s, MAX(lanai_core_ns(s), lanai_virtual_ns()));
        s->wdog_start_insn = s->core.insns;
        s->run_now = true;
        timer_mod_anticipate(s->timer, lanai_virtual_ns());
    }
}

/* ---- the core ---- */

static void lanai_halt(LanaiState *s, uint32_t cause, uint32_t pc,
                       uint32_t addr)
{
    s->core_state = LANAI_CORE_HALT;
    s->halt_cause = cause;
    s->halt_pc = pc;
    s->halt_addr = addr;
    s->run_now = false;
    qemu_log_mask(LOG_GUEST_ERROR, "lanai: node %u: core halted: %s at pc "
                  "0x%08x, address 0x%08x\n", s->node, lanai_halt_name(cause),
                  pc, addr);
    lanai_raise(s, LANAI_ISR_CORE_HALT);
}

static void lanai_core_halted(LanaiState *s)
{
    Rv32Core *c = &s->core;
    uint32_t cause, addr = c->halt_addr;

    switch (c->halt) {
    case RV32_HALT_FETCH:
        cause = LANAI_HALT_FETCH;
        break;
    case RV32_HALT_LOAD:
        cause = LANAI_HALT_LOAD;
        break;
    case RV32_HALT_STORE:
        cause = LANAI_HALT_STORE;
        break;
    case RV32_HALT_MISALIGNED:
        cause = LANAI_HALT_MISALIGNED;
        break;
    case RV32_HALT_EBREAK:
        cause = LANAI_HALT_EBREAK;
        addr = c->x[10];        /* a0: the firmware's assert code */
        break;
    case RV32_HALT_ECALL:
        cause = LANAI_HALT_ECALL;
        addr = c->x[10];
        break;
    default:
        cause = LANAI_HALT_ILLEGAL;
        break;
    }
    lanai_halt(s, cause, c->halt_pc, addr);
}

/* One slice of the core, up to LEAD ahead of virtual time `now`. */
static void lanai_run_slice(LanaiState *s, int64_t now)
{
    int64_t t = lanai_core_ns(s);
    uint64_t budget;
    Rv32Stop stop;

    s->run_now = false;
    if (now - t > LANAI_MAX_LAG_NS) {
        lanai_core_rebase(s, now - LANAI_MAX_LAG_NS);
        lanai_count(s, LANAI_CNT_LAG_DROPS);
        t = s->core_base_ns;
    }
    if (t >= now + LANAI_LEAD_NS) {
        return;
    }
    budget = muldiv64(now + LANAI_LEAD_NS - t, s->clock_mhz, 1000);
    budget = MIN(budget, LANAI_SLICE_INSNS);
    if (!budget) {
        return;
    }
    stop = rv32_run(&s->core, &s->bus, budget, NULL);

    switch (stop) {
    case RV32_STOP_HALT:
        lanai_core_halted(s);
        return;
    case RV32_STOP_WFI:
        s->wdog_start_insn = s->core.insns;
        lanai_timers_expire(s, now);
        if (lanai_isr(s) & s->imr) {
            s->run_now = true;      /* something is pending already */
        } else {
            s->core_state = LANAI_CORE_SLEEP;
        }
        return;
    case RV32_STOP_BUDGET:
        break;
    }
    /*
     * Counted in instructions at the core's clock, not in virtual time: a
     * host that starves QEMU must not look like a firmware that loops.
     */
    if (s->wdog_ms && s->core.insns - s->wdog_start_insn >=
        (uint64_t)s->wdog_ms * s->clock_mhz * 1000) {
        lanai_halt(s, LANAI_HALT_WDOG, s->core.pc, 0);
    }
}

/* Expire timers, run a slice if the core runs, arm the timer again. */
void lanai_service(LanaiState *s)
{
    int64_t now = lanai_virtual_ns();

    lanai_timers_expire(s, now);
    lanai_update(s);
    if (s->core_state == LANAI_CORE_RUN) {
        lanai_run_slice(s, now);
        lanai_update(s);
    }
    lanai_reschedule(s, true);
}

static void lanai_tick(void *opaque)
{
    lanai_service(opaque);
}

/*
 * LANai reset: the core stops, the special registers start over.  What
 * the driver reads after a halt (HALT_*, INSN_*) stays until RESET_OFF.
 */
static void lanai_core_reset(LanaiState *s)
{
    s->core_state = LANAI_CORE_RESET;
    s->run_now = false;
    s->isr = 0;
    s->eimr = 0;
    s->imr = 0;
    for (int i = 0; i < LANAI_NUM_TIMERS; i++) {
        s->it_deadline[i] = INT64_MAX;
    }
    s->rtc_base_ns = lanai_virtual_ns();
    s->dma_head = 0;
    s->dma_sts = 0;
    s->dma_err_desc = 0;
    s->db_base = 0;
    s->db_size = 0;
    s->db_prod = 0;
    s->db_cons = 0;
    s->debug_len = 0;
    lanai_net_reset(s);
}

static void lanai_core_start(LanaiState *s)
{
    int64_t now = lanai_virtual_ns();

    rv32_reset(&s->core, 0);
    s->halt_cause = LANAI_HALT_NONE;
    s->halt_pc = 0;
    s->halt_addr = 0;
    s->core_state = LANAI_CORE_RUN;
    lanai_core_rebase(s, now);
    s->wdog_start_insn = s->core.insns;
    s->run_now = true;
}

/* ---- special registers: one block, for the host and the core ---- */

static void lanai_debug_putc(LanaiState *s, uint8_t c)
{
    if (c == '\n' || s->debug_len == sizeof(s->debug_line) - 1) {
        s->debug_line[s->debug_len] = 0;
        qemu_log("lanai: node %u: firmware: %s\n", s->node, s->debug_line);
        s->debug_len = 0;
        if (c == '\n') {
            return;
        }
    }
    s->debug_line[s->debug_len++] = c;
}

static void lanai_host_notify(LanaiState *s, uint32_t ctx)
{
    if (ctx >= LANAI_DOORBELL_CTXS) {
        qemu_log_mask(LOG_GUEST_ERROR, "lanai: HOST_NOTIFY of context %u "
                      "(0-%u)\n", ctx, LANAI_DOORBELL_CTXS - 1);
        return;
    }
    s->notify_count[ctx]++;
    vcpu_stall_wake(&s->stall);
}

static int lanai_timer_index(uint32_t reg)
{
    for (int i = 0; i < LANAI_NUM_TIMERS; i++) {
        if (lanai_timer_reg[i] == reg) {
            return i;
        }
    }
    return -1;
}

/* False for an offset that is no register. */
static bool lanai_special_read(LanaiState *s, uint32_t reg, uint32_t *val)
{
    int64_t now = lanai_virtual_ns();
    int it = lanai_timer_index(reg);

    if (it >= 0) {
        if (lanai_timers_expire(s, now)) {
            lanai_update(s);
        }
        *val = s->it_deadline[it] == INT64_MAX ? 0 :
               DIV_ROUND_UP(s->it_deadline[it] - now, SCALE_US);
        return true;
    }
    switch (reg) {
    case LANAI_REG_ISR:
        if (lanai_timers_expire(s, now)) {
            lanai_update(s);
        }
        *val = lanai_isr(s);
        break;
    case LANAI_REG_EIMR:
        *val = s->eimr;
        break;
    case LANAI_REG_IMR:
        *val = s->imr;
        break;
    case LANAI_REG_RTC:
        *val = (now - s->rtc_base_ns) / SCALE_US;
        break;
    case LANAI_REG_RMP:
        *val = s->rmp;
        break;
    case LANAI_REG_RML:
        *val = s->rml;
        break;
    case LANAI_REG_SMP:
        *val = s->smp;
        break;
    case LANAI_REG_SML:
        *val = s->sml;
        break;
    case LANAI_REG_SMLT:
        *val = s->smlt;
        break;
    case LANAI_REG_MYRINET:
        *val = LANAI_MYRINET_CRC32;
        break;
    case LANAI_REG_RSTAT:
        *val = s->rstat;
        break;
    case LANAI_REG_SSTAT:
        *val = s->sstat;
        break;
    case LANAI_REG_RLEN:
        *val = s->rlen;
        break;
    case LANAI_REG_DMA_HEAD:
        *val = s->dma_head;
        break;
    case LANAI_REG_DMA_STS:
        *val = s->dma_sts;
        break;
    case LANAI_REG_DMA_ERR_DESC:
        *val = s->dma_err_desc;
        break;
    case LANAI_REG_DB_BASE:
        *val = s->db_base;
        break;
    case LANAI_REG_DB_SIZE:
        *val = s->db_size;
        break;
    case LANAI_REG_DB_PROD:
        *val = s->db_prod;
        break;
    case LANAI_REG_DB_CONS:
        *val = s->db_cons;
        break;
    case LANAI_REG_CLOCK:
        *val = s->clock_mhz;
        break;
    case LANAI_REG_PULSE:
    case LANAI_REG_DEBUG:
    case LANAI_REG_HOST_NOTIFY:
    case LANAI_REG_WDOG_KICK:
        *val = 0;               /* write-only */
        break;
    default:
        return false;
    }
    return true;
}

/* False for an offset that is no writable register. */
static bool lanai_special_write(LanaiState *s, uint32_t reg, uint32_t v,
                                bool from_core)
{
    int64_t now = lanai_virtual_ns();
    int it = lanai_timer_index(reg);
    /* the bit a write of this side sets instead of clearing */
    uint32_t sets = from_core ? LANAI_ISR_HOST_SIG : LANAI_ISR_LANAI_SIG;

    if (it >= 0) {
        s->it_deadline[it] = v ? now + (int64_t)v * SCALE_US : INT64_MAX;
        return true;
    }
    switch (reg) {
    case LANAI_REG_ISR:
        s->isr = (s->isr & ~(v & ~sets)) | (v & sets);
        break;
    case LANAI_REG_EIMR:
        s->eimr = v;
        break;
    case LANAI_REG_IMR:
        s->imr = v;
        break;
    case LANAI_REG_RTC:
        s->rtc_base_ns = now - (int64_t)v * SCALE_US;
        break;
    case LANAI_REG_PULSE:
        if (v & LANAI_PULSE_DMA_START) {
            lanai_dma_start(s);
        }
        break;
    case LANAI_REG_RMP:
        s->rmp = v;
        break;
    case LANAI_REG_RML:
        s->rml = v;
        lanai_rx_arm(s);
        break;
    case LANAI_REG_SMP:
        s->smp = v;
        break;
    case LANAI_REG_SML:
        s->sml = v;
        lanai_tx_segment(s, v, false);
        break;
    case LANAI_REG_SMLT:
        s->smlt = v;
        lanai_tx_segment(s, v, true);
        break;
    case LANAI_REG_MYRINET:
        break;                  /* CRC-32 cannot be turned off */
    case LANAI_REG_DEBUG:
        lanai_debug_putc(s, v);
        break;
    case LANAI_REG_DMA_HEAD:
        s->dma_head = v;
        break;
    case LANAI_REG_DB_BASE:
    case LANAI_REG_DB_SIZE:
        /* A new FIFO starts empty. */
        if (reg == LANAI_REG_DB_BASE) {
            s->db_base = v;
        } else {
            s->db_size = v;
        }
        s->db_prod = 0;
        s->db_cons = 0;
        break;
    case LANAI_REG_DB_CONS:
        s->db_cons = v;
        break;
    case LANAI_REG_HOST_NOTIFY:
        lanai_host_notify(s, v);
        break;
    case LANAI_REG_WDOG_KICK:
        s->wdog_start_insn = s->core.insns;
        break;
    default:
        return false;
    }
    lanai_update(s);
    return true;
}

/*
 * The core's I/O window: 32-bit accesses to registers only.  Anything
 * else halts it (LOAD or STORE at that address), which finds the bug.
 */
static bool lanai_core_io_read(void *opaque, uint32_t offset, unsigned size,
                               uint32_t *val)
{
    return size == 4 && lanai_special_read(opaque, offset, val);
}

static bool lanai_core_io_write(void *opaque, uint32_t offset, unsigned size,
                                uint32_t val)
{
    return size == 4 && lanai_special_write(opaque, offset, val, true);
}

static uint64_t lanai_special_mmio_read(void *opaque, hwaddr addr,
                                        unsigned size)
{
    uint32_t v = 0;

    if (!lanai_special_read(opaque, addr, &v)) {
        qemu_log_mask(LOG_GUEST_ERROR, "lanai: read of unknown special "
                      "register 0x%" HWADDR_PRIx "\n", addr);
    }
    return v;
}

static void lanai_special_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                     unsigned size)
{
    LanaiState *s = opaque;

    if (!lanai_special_write(s, addr, val, false)) {
        qemu_log_mask(LOG_GUEST_ERROR, "lanai: write of 0x%" PRIx64 " to "
                      "read-only or unknown special register 0x%"
                      HWADDR_PRIx "\n", val, addr);
    }
    lanai_reschedule(s, false);
}

/* ---- config block and board control ---- */

static uint32_t lanai_control(LanaiState *s)
{
    return (s->core_state == LANAI_CORE_RESET ? LANAI_CTRL_RESET_ON : 0) |
           (s->int_enabled ? LANAI_CTRL_INT_EN : 0);
}

static void lanai_control_write(LanaiState *s, uint32_t v)
{
    if (v & LANAI_CTRL_RESET_ON) {
        lanai_core_reset(s);
    } else if ((v & LANAI_CTRL_RESET_OFF) &&
               s->core_state == LANAI_CORE_RESET) {
        lanai_core_start(s);
    }
    if (v & LANAI_CTRL_INT_DIS) {
        s->int_enabled = false;
    } else if (v & LANAI_CTRL_INT_EN) {
        s->int_enabled = true;
    }
    lanai_update(s);
}

static uint64_t lanai_config_read(void *opaque, hwaddr addr, unsigned size)
{
    LanaiState *s = opaque;

    if (addr >= LANAI_CNT_TX_PACKETS && addr < LANAI_CNT_RX_QUEUED) {
        return s->cnt[LANAI_CNT(addr)];
    }
    switch (addr) {
    case LANAI_CFG_ID:
        return LANAI_ID_VALUE;
    case LANAI_CFG_SRAM_SIZE:
        return s->sram_size;
    case LANAI_CFG_CLOCK_MHZ:
        return s->clock_mhz;
    case LANAI_CFG_NODE:
        return s->node;
    case LANAI_CFG_FABRIC_NODES:
        return s->link_up ? s->fabric_nodes : 0;
    case LANAI_CFG_FABRIC_PORT:
        return (uint32_t)s->fabric_switch << 8 | s->fabric_port;
    case LANAI_CFG_CORE_STATE:
        return s->core_state;
    case LANAI_CFG_HALT_CAUSE:
        return s->halt_cause;
    case LANAI_CFG_HALT_PC:
        return s->halt_pc;
    case LANAI_CFG_HALT_ADDR:
        return s->halt_addr;
    case LANAI_CFG_INSN_LO:
        s->insn_hi_latch = s->core.insns >> 32;
        return (uint32_t)s->core.insns;
    case LANAI_CFG_INSN_HI:
        return s->insn_hi_latch;
    case LANAI_CFG_WDOG_MS:
        return s->wdog_ms;
    case LANAI_CFG_VERSION:
        return LANAI_VERSION;
    case LANAI_CFG_LINK:
        return (s->link.connected ? LANAI_LINK_CONNECTED : 0) |
               (s->link_up ? LANAI_LINK_UP : 0) |
               (s->link_rejected ? LANAI_LINK_REJECTED : 0);
    case LANAI_CFG_CONTROL:
        return lanai_control(s);
    case LANAI_CNT_RX_QUEUED:
        return g_queue_get_length(&s->rx_queue);
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "lanai: read of unknown config "
                      "register 0x%" HWADDR_PRIx "\n", addr);
        return 0;
    }
}

static void lanai_config_write(void *opaque, hwaddr addr, uint64_t val,
                               unsigned size)
{
    LanaiState *s = opaque;

    switch (addr) {
    case LANAI_CFG_WDOG_MS:
        s->wdog_ms = val;
        break;
    case LANAI_CFG_CONTROL:
        lanai_control_write(s, val);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "lanai: write of 0x%" PRIx64 " to "
                      "read-only or unknown config register 0x%"
                      HWADDR_PRIx "\n", val, addr);
        return;
    }
    lanai_reschedule(s, false);
}

static const MemoryRegionOps lanai_config_ops =
    LANAI_MMIO_OPS(lanai_config);
static const MemoryRegionOps lanai_special_ops =
    LANAI_MMIO_OPS(lanai_special_mmio);

/* ---- fabric link ---- */

static void lanai_send_hello(LanaiState *s)
{
    uint8_t p[FABRIC_HELLO_MAX_LEN];

    s->link_up = false;
    fabric_link_send(&s->link, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, p,
                     fabric_hello_encode(s->node,
                                         fabric_link_hello_flags(&s->link),
                                         p));
}

static void lanai_rx_control(LanaiState *s, const uint8_t *p, uint32_t len)
{
    FabricHelloAck ack;
    char why[FABRIC_REASON_MAX + 1];

    if (fabric_hello_ack_decode(p, len, FABRIC_MYRI_HELLO_ACK_EXTRA, &ack)) {
        s->fabric_nodes = ack.nodes;
        s->fabric_switch = ack.extra[FABRIC_MYRI_ACK_SWITCH];
        s->fabric_port = ack.extra[FABRIC_MYRI_ACK_PORT];
        s->link_up = true;
        s->link_rejected = false;
    } else if (fabric_reject_decode(p, len, why, sizeof(why))) {
        warn_report("lanai: fabric rejected node %u: %s", s->node, why);
        s->link_up = false;
        s->link_rejected = true;
        lanai_raise(s, LANAI_ISR_LINK_DOWN);
    }
}

static void lanai_link_rx(void *opaque, const FabricHdr *h, const uint8_t *p)
{
    LanaiState *s = opaque;

    switch (h->type) {
    case FABRIC_TYPE_DATA:
        lanai_rx_frame(s, p, h->len);
        break;
    case FABRIC_TYPE_CONTROL:
        lanai_rx_control(s, p, h->len);
        break;
    default:
        break;
    }
    lanai_reschedule(s, false);
}

static void lanai_link_event(void *opaque, bool up)
{
    LanaiState *s = opaque;

    if (up) {
        lanai_send_hello(s);
    } else {
        s->link_up = false;
        lanai_raise(s, LANAI_ISR_LINK_DOWN);
        lanai_reschedule(s, false);
    }
}

/* ---- the PCI device ---- */

static void lanai_realize(PCIDevice *pdev, Error **errp)
{
    ERRP_GUARD();
    LanaiState *s = LANAI(pdev);

    if (s->sram_size < LANAI_SRAM_MIN || s->sram_size > LANAI_SRAM_MAX ||
        !is_power_of_2(s->sram_size)) {
        error_setg(errp, "lanai: sram-size=%" PRIu64 " must be a power of "
                   "two from 256 KiB to 8 MiB", s->sram_size);
        return;
    }
    if (s->node >= FABRIC_MAX_NODES) {
        error_setg(errp, "lanai: node=%u is out of range (0-%u)", s->node,
                   FABRIC_MAX_NODES - 1);
        return;
    }
    if (s->clock_mhz < 1 || s->clock_mhz > 1000) {
        error_setg(errp, "lanai: clock-mhz=%u is out of range (1-1000)",
                   s->clock_mhz);
        return;
    }
    if (s->wait_timeout_us > 1000000) {
        error_setg(errp, "lanai: wait-timeout-us=%u is above 1000000",
                   s->wait_timeout_us);
        return;
    }
    memory_region_init_ram(&s->sram, OBJECT(s), "lanai.sram", s->sram_size,
                           errp);
    if (*errp) {
        return;
    }
    pci_config_set_interrupt_pin(pdev->config, 1);
    if (msi_init(pdev, 0, 1, true, false, errp)) {
        return;
    }
    error_setg(&s->migration_blocker,
               "lanai: the core, its timers and the fabric link cannot be "
               "migrated");
    if (migrate_add_blocker(s->migration_blocker, errp) < 0) {
        error_free(s->migration_blocker);
        s->migration_blocker = NULL;
        msi_uninit(pdev);
        return;
    }

    s->sram_ptr = memory_region_get_ram_ptr(&s->sram);
    memory_region_init(&s->bar, OBJECT(s), "lanai-bar0", LANAI_BAR0_SIZE);
    memory_region_add_subregion(&s->bar, LANAI_SRAM_OFFSET, &s->sram);
    memory_region_init_io(&s->config_io, OBJECT(s), &lanai_config_ops, s,
                          "lanai-config", LANAI_CONFIG_SIZE);
    memory_region_add_subregion(&s->bar, LANAI_CONFIG_OFFSET, &s->config_io);
    memory_region_init_io(&s->special_io, OBJECT(s), &lanai_special_ops, s,
                          "lanai-special", LANAI_SPECIAL_SIZE);
    memory_region_add_subregion(&s->bar, LANAI_SPECIAL_OFFSET,
                                &s->special_io);
    memory_region_init_io(&s->doorbell_io, OBJECT(s), &lanai_doorbell_ops, s,
                          "lanai-doorbell",
                          LANAI_DOORBELL_CTXS * LANAI_DOORBELL_PAGE);
    memory_region_add_subregion(&s->bar, LANAI_DOORBELL_OFFSET,
                                &s->doorbell_io);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar);

    s->bus = (Rv32Bus) {
        .sram = s->sram_ptr,
        .sram_size = s->sram_size,
        .io_read = lanai_core_io_read,
        .io_write = lanai_core_io_write,
        .opaque = s,
    };
    s->tx_buf = g_malloc(LANAI_TX_BUF);
    g_queue_init(&s->rx_queue);
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, lanai_tick, s);
    vcpu_stall_init(&s->stall, DEVICE(s),
                    (int64_t)s->wait_timeout_us * SCALE_US);
    if (!fabric_link_init(&s->link, &s->chr, FABRIC_KIND_MYRINET, s->node,
                          s->lockstep, lanai_link_rx, lanai_link_event, s,
                          errp)) {
        return;
    }
    fabric_link_set_can_rx(&s->link, lanai_rx_can_take);
}

static void lanai_exit(PCIDevice *pdev)
{
    LanaiState *s = LANAI(pdev);

    fabric_link_cleanup(&s->link);
    vcpu_stall_cleanup(&s->stall);
    timer_free(s->timer);
    while (!g_queue_is_empty(&s->rx_queue)) {
        g_free(g_queue_pop_head(&s->rx_queue));
    }
    g_free(s->tx_buf);
    msi_uninit(pdev);
    if (s->migration_blocker) {
        migrate_del_blocker(s->migration_blocker);
        error_free(s->migration_blocker);
    }
}

/* PCI reset: the core held in reset, SRAM zeroed, the link re-announced */
static void lanai_reset(DeviceState *dev)
{
    LanaiState *s = LANAI(dev);

    lanai_core_reset(s);
    rv32_reset(&s->core, 0);
    memset(s->sram_ptr, 0, s->sram_size);
    s->halt_cause = LANAI_HALT_NONE;
    s->halt_pc = 0;
    s->halt_addr = 0;
    s->int_enabled = false;
    s->wdog_ms = s->wdog_ms_prop;
    memset(s->cnt, 0, sizeof(s->cnt));
    memset(s->notify_count, 0, sizeof(s->notify_count));
    vcpu_stall_wake(&s->stall);
    /* Before the first HELLO_ACK a HELLO is already on its way. */
    if (s->link.connected && s->link_up) {
        lanai_send_hello(s);
    }
    lanai_update(s);
    timer_del(s->timer);
}

static Property lanai_properties[] = {
    DEFINE_PROP_CHR("chardev", LanaiState, chr),
    DEFINE_PROP_BOOL("lockstep", LanaiState, lockstep, false),
    DEFINE_PROP_UINT32("node", LanaiState, node, 0),
    DEFINE_PROP_SIZE("sram-size", LanaiState, sram_size, 2 * MiB),
    DEFINE_PROP_UINT32("clock-mhz", LanaiState, clock_mhz, 200),
    DEFINE_PROP_UINT32("wdog-ms", LanaiState, wdog_ms_prop, 100),
    DEFINE_PROP_UINT32("wait-timeout-us", LanaiState, wait_timeout_us, 2000),
    DEFINE_PROP_END_OF_LIST(),
};

static void lanai_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = lanai_realize;
    k->exit = lanai_exit;
    k->vendor_id = LANAI_PCI_VENDOR;
    k->device_id = LANAI_PCI_DEVICE;
    k->revision = 1;
    k->class_id = PCI_CLASS_NETWORK_OTHER;
    dc->desc = "LANai-style Myrinet card";
    dc->reset = lanai_reset;
    device_class_set_props(dc, lanai_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo lanai_info = {
    .name = TYPE_LANAI,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(LanaiState),
    .class_init = lanai_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void lanai_register_types(void)
{
    type_register_static(&lanai_info);
}

type_init(lanai_register_types)
