/*
 * Telegraphos NIC: the board.  BAR0 (registers, counters, context,
 * group and page tables), the fabric link's callbacks and reset.  The
 * remote and shadow windows are in telegraphos-tx.c, the target side in
 * telegraphos-rx.c, what both use in telegraphos-rd.c and
 * telegraphos-core.c.  The board is the top: it calls the other parts,
 * they never call it (telegraphos.h).
 * Spec: docs/hw/telegraphos.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/host-utils.h"
#include "qapi/error.h"
#include "hw/boards.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/blocker.h"
#include "sysemu/dma.h"
#include "telegraphos.h"

#define TGR_REGS_END        0x1000
#define TGR_GROUP_END       (TGR_REG_GROUP_EIDX + 4 * TGR_GROUPS)
#define TGR_GPAGES_END      (TGR_REG_GROUP_PAGES + 4 * TGR_GROUPS)
#define TGR_CNT_END         (TGR_REG_COUNTERS + 8 * TGR_CNT_NUM)
#define TGR_CTX_END         (TGR_CTX_TABLE + TGR_CTX_MAX * TGR_CTX_ENTRY)
#define TGR_TIMEOUT_MIN_US  100
#define TGR_TIMEOUT_MAX_US  10000000

QEMU_BUILD_BUG_ON(TGR_GROUP_END > TGR_REG_GROUP_PAGES);
QEMU_BUILD_BUG_ON(TGR_GPAGES_END > TGR_REGS_END);
QEMU_BUILD_BUG_ON(TGR_CNT_END > TGR_REG_GROUP_EIDX);
QEMU_BUILD_BUG_ON(TGR_CTX_END > TGR_PTE_TABLE);
QEMU_BUILD_BUG_ON(TGR_PTE_TABLE + TGR_PTE_SIZE * TGR_WIN_PAGES_MAX >
                  TGR_BAR0_SIZE);
QEMU_BUILD_BUG_ON(TGR_GROUPS != FABRIC_TGR_MAX_GROUPS);
QEMU_BUILD_BUG_ON(TGR_RD_SLOTS + TGR_XFER_SLOTS > TGR_TAG_SLOT_MASK + 1);

/* ---- the fabric link ---- */

static void tgr_link_down(TgrState *s)
{
    bool was_up = s->link_up;

    s->link_up = false;
    tgr_fail_pending(s, FABRIC_NODE_ALL, TGR_ERR_UNREACHABLE);
    tgr_tx_wake(s);
    if (was_up) {
        tgr_raise(s, TGR_INT_LINK);
    }
}

static void tgr_rx_control(TgrState *s, const uint8_t *p, uint32_t len)
{
    char why[FABRIC_REASON_MAX + 1];
    FabricHelloAck ack;
    uint16_t node;

    if (len < 1) {
        return;
    }
    switch (p[0]) {
    case FABRIC_CTL_HELLO_ACK:
        if (!fabric_hello_ack_decode(p, len, 0, &ack)) {
            break;
        }
        s->nodes = ack.nodes;
        s->link_up = true;
        /* fabricd forgot us if it restarted: join our groups again */
        memset(s->group_told, 0, sizeof(s->group_told));
        tgr_groups_sync(s);
        tgr_raise(s, TGR_INT_LINK);
        break;
    case FABRIC_CTL_REJECT:
        fabric_reject_decode(p, len, why, sizeof(why));
        warn_report("telegraphos: fabric rejected node %u: %s", s->node, why);
        tgr_link_down(s);
        break;
    case FABRIC_CTL_TGR_PEER_RESET:
        if (!fabric_tgr_group_decode(p, len, &node) ||
            node >= FABRIC_MAX_NODES) {
            break;
        }
        s->peer[node].rx_known = false;
        s->peer[node].mc_known = false;
        tgr_fail_pending(s, node, TGR_ERR_PEER_RESET);
        tgr_event(s, TGR_EV_PEER_RESET, TGR_ERR_PEER_RESET, 0, 0, node, 0,
                  0, 0);
        break;
    default:
        break;
    }
}

static void tgr_link_rx(void *opaque, const FabricHdr *h, const uint8_t *p)
{
    TgrState *s = opaque;

    switch (h->type) {
    case FABRIC_TYPE_DATA:
        tgr_link_rx_data(s, h->src, p, h->len);
        break;
    case FABRIC_TYPE_CONTROL:
        tgr_rx_control(s, p, h->len);
        break;
    default:
        break;
    }
}

static void tgr_send_hello(TgrState *s)
{
    uint8_t p[FABRIC_HELLO_MAX_LEN];
    uint8_t flags = fabric_link_hello_flags(&s->link);

    s->link_up = false;
    fabric_link_try_send(&s->link, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE,
                         p, fabric_hello_encode(s->node, flags, p), NULL, 0);
}

static void tgr_link_event(void *opaque, bool up)
{
    TgrState *s = opaque;

    if (up) {
        tgr_send_hello(s);
    } else {
        tgr_link_down(s);
    }
}

static void tgr_tx_drained(void *opaque)
{
    TgrState *s = opaque;

    /* Half empty before the parked stores run again: fewer round trips */
    if (fabric_link_tx_queued(&s->link) <= s->tx_queue_kb * KiB / 2) {
        if (s->tx_waiters) {
            tgr_tx_wake(s);
        }
        tgr_rx_tx_room(s);
    }
}

/* ---- BAR0 ---- */

static void tgr_groups_leave(TgrState *s)
{
    for (int g = 0; g < TGR_GROUPS; g++) {
        s->group_eidx[g] = TGR_GROUP_NONE;
        s->group_pages[g] = 0;
    }
    tgr_groups_sync(s);
}

/* SOFT_RESET: page, context and group tables, latches, rings, stop. */
static void tgr_soft_reset(TgrState *s)
{
    memset(s->pte, 0, (size_t)s->window_pages * TGR_PTE_SIZE);
    memset(s->posted, 0, sizeof(*s->posted) * s->window_pages);
    memset(s->ctx_table, 0, sizeof(s->ctx_table));
    tgr_groups_leave(s);
    tgr_rd_reset(s);
    tgr_rx_flush(s);
    s->stopped = false;
    s->ovf_eidx = 0;
    s->ovf_src = 0;
    s->evq_base = 0;
    s->evq_entries = 0;
    s->evq_prod = 0;
    s->evq_cons = 0;
    s->isr = 0;
    tgr_update_irq(s);
}

static void tgr_ctrl_write(TgrState *s, uint32_t v)
{
    if (v & TGR_CTRL_SOFT_RESET) {
        tgr_soft_reset(s);
    }
    if (v & TGR_CTRL_CLR_STATS) {
        memset(s->cnt, 0, sizeof(s->cnt));
    }
    if ((v & TGR_CTRL_RESUME) && s->stopped) {
        tgr_rx_resume(s);
    }
}

static uint32_t tgr_status(TgrState *s)
{
    TgrCpu *c = &s->cpu[tgr_cpu_slot()];

    return (s->stopped ? TGR_STATUS_STOPPED : 0) |
           (s->link_up ? TGR_STATUS_LINK_UP : 0) |
           (tgr_rd_pending(s, tgr_cpu_slot(), c->cur_ctx) ?
            TGR_STATUS_RD_PENDING : 0);
}

static uint64_t tgr_bar0_read(void *opaque, hwaddr addr, unsigned size)
{
    TgrState *s = opaque;
    TgrCpu *c = &s->cpu[tgr_cpu_slot()];

    if (addr >= TGR_PTE_TABLE) {
        hwaddr i = (addr - TGR_PTE_TABLE) / 4;

        return i < (hwaddr)s->window_pages * 4 ? s->pte[i] : 0;
    }
    if (addr >= TGR_CTX_TABLE && addr < TGR_CTX_END) {
        return ldl_le_p(s->ctx_table + (addr - TGR_CTX_TABLE));
    }
    if (addr >= TGR_REG_GROUP_EIDX && addr < TGR_GROUP_END) {
        return s->group_eidx[(addr - TGR_REG_GROUP_EIDX) / 4];
    }
    if (addr >= TGR_REG_GROUP_PAGES && addr < TGR_GPAGES_END) {
        return s->group_pages[(addr - TGR_REG_GROUP_PAGES) / 4];
    }
    if (addr >= TGR_REG_COUNTERS && addr < TGR_CNT_END) {
        uint64_t v = s->cnt[(addr - TGR_REG_COUNTERS) / 8];

        return addr & 4 ? v >> 32 : (uint32_t)v;
    }
    switch (addr) {
    case TGR_REG_ID:
        return TGR_ID_VALUE;
    case TGR_REG_VERSION:
        return TGR_VERSION;
    case TGR_REG_NODE:
        return s->node;
    case TGR_REG_NODES:
        return s->link_up ? s->nodes : 0;
    case TGR_REG_WIN_PAGES:
        return s->window_pages;
    case TGR_REG_MIRROR_MB:
        return s->mirror_mb;
    case TGR_REG_CTRL:
        return tgr_status(s);
    case TGR_REG_ISR:
        return s->isr;
    case TGR_REG_IMR:
        return s->imr;
    case TGR_REG_EXP_BASE_LO:
        return (uint32_t)s->exp_base;
    case TGR_REG_EXP_BASE_HI:
        return s->exp_base >> 32;
    case TGR_REG_EXP_COUNT:
        return s->exp_count;
    case TGR_REG_OVF_EIDX:
        return s->ovf_eidx;
    case TGR_REG_OVF_SRC:
        return s->ovf_src;
    case TGR_REG_EVQ_BASE_LO:
        return (uint32_t)s->evq_base;
    case TGR_REG_EVQ_BASE_HI:
        return s->evq_base >> 32;
    case TGR_REG_EVQ_ENTRIES:
        return s->evq_entries;
    case TGR_REG_EVQ_PROD:
        return s->evq_prod;
    case TGR_REG_EVQ_CONS:
        return s->evq_cons;
    case TGR_REG_CUR_CTX:
        return c->cur_ctx;
    case TGR_REG_RREAD_TIMEOUT_US:
        return s->rread_timeout_us;
    case TGR_REG_RD_STATUS:
        return c->rd_status;
    case TGR_REG_RD_ACK:
        return 0;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: read of unknown "
                      "register 0x%" HWADDR_PRIx "\n", addr);
        return 0;
    }
}

static void tgr_group_write(TgrState *s, int g, uint32_t eidx)
{
    s->group_eidx[g] = eidx;
    tgr_groups_sync(s);
}

static void tgr_bar0_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    TgrState *s = opaque;
    TgrCpu *c = &s->cpu[tgr_cpu_slot()];
    uint32_t v = val;

    if (addr >= TGR_PTE_TABLE) {
        hwaddr i = (addr - TGR_PTE_TABLE) / 4;

        if (i < (hwaddr)s->window_pages * 4) {
            s->pte[i] = v;
        }
        return;
    }
    if (addr >= TGR_CTX_TABLE && addr < TGR_CTX_END) {
        hwaddr off = addr - TGR_CTX_TABLE;
        uint8_t ctx = off / TGR_CTX_ENTRY;
        bool was_valid = ldl_le_p(s->ctx_table + ctx * TGR_CTX_ENTRY + 8) &
                         TGR_CTXF_VALID;

        stl_le_p(s->ctx_table + off, v);
        if (off % TGR_CTX_ENTRY == 8 && was_valid && !(v & TGR_CTXF_VALID)) {
            tgr_ctx_forget(s, ctx);
        }
        return;
    }
    if (addr >= TGR_REG_GROUP_EIDX && addr < TGR_GROUP_END) {
        tgr_group_write(s, (addr - TGR_REG_GROUP_EIDX) / 4, v);
        return;
    }
    if (addr >= TGR_REG_GROUP_PAGES && addr < TGR_GPAGES_END) {
        s->group_pages[(addr - TGR_REG_GROUP_PAGES) / 4] = v;
        return;
    }
    switch (addr) {
    case TGR_REG_CTRL:
        tgr_ctrl_write(s, v);
        break;
    case TGR_REG_ISR:
        s->isr &= ~v;
        tgr_update_irq(s);
        break;
    case TGR_REG_IMR:
        s->imr = v & (TGR_INT_OVF | TGR_INT_EVQ | TGR_INT_EVQ_LOST |
                      TGR_INT_LINK);
        tgr_update_irq(s);
        break;
    case TGR_REG_EXP_BASE_LO:
        s->exp_base = deposit64(s->exp_base, 0, 32, v);
        break;
    case TGR_REG_EXP_BASE_HI:
        s->exp_base = deposit64(s->exp_base, 32, 32, v);
        break;
    case TGR_REG_EXP_COUNT:
        if (v > TGR_EXP_MAX) {
            qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: EXP_COUNT %u is "
                          "above %u; ignored\n", v, TGR_EXP_MAX);
            break;
        }
        s->exp_count = v;
        break;
    case TGR_REG_EVQ_BASE_LO:
        s->evq_base = deposit64(s->evq_base, 0, 32, v);
        break;
    case TGR_REG_EVQ_BASE_HI:
        s->evq_base = deposit64(s->evq_base, 32, 32, v);
        break;
    case TGR_REG_EVQ_ENTRIES:
        if (v == 1 || (v & (v - 1)) || v > 65536) {
            qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: EVQ_ENTRIES %u is "
                          "not 0 or a power of 2 up to 65536; ignored\n", v);
            break;
        }
        s->evq_entries = v;
        s->evq_prod = 0;
        s->evq_cons = 0;
        break;
    case TGR_REG_EVQ_CONS:
        s->evq_cons = s->evq_entries ? v & (s->evq_entries - 1) : 0;
        break;
    case TGR_REG_CUR_CTX:
        if (v >= TGR_CTX_MAX) {
            qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: CUR_CTX %u\n", v);
            break;
        }
        /* A context switch: a half-built argument pair dies (SHRIMP). */
        c->cur_ctx = v;
        c->larg_valid = false;
        c->larg_status = TGR_ERR_OK;
        break;
    case TGR_REG_RD_ACK:
        tgr_rd_ack(s, v);
        break;
    case TGR_REG_RREAD_TIMEOUT_US:
        if (v < TGR_TIMEOUT_MIN_US || v > TGR_TIMEOUT_MAX_US) {
            qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: RREAD_TIMEOUT_US %u"
                          " is outside %u..%u; ignored\n", v,
                          TGR_TIMEOUT_MIN_US, TGR_TIMEOUT_MAX_US);
            break;
        }
        s->rread_timeout_us = v;
        vcpu_stall_set_timeout(&s->stall, 2 * tgr_rread_timeout_ns(s));
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: write of 0x%" PRIx64
                      " to read-only or unknown register 0x%" HWADDR_PRIx
                      "\n", val, addr);
        break;
    }
}

static const MemoryRegionOps tgr_bar0_ops = {
    .read = tgr_bar0_read,
    .write = tgr_bar0_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* ---- the PCI device ---- */

static bool tgr_check_props(TgrState *s, Error **errp)
{
    MachineState *ms = current_machine;

    if (s->node >= FABRIC_MAX_NODES) {
        error_setg(errp, "telegraphos: node=%u is out of range (0-%u)",
                   s->node, FABRIC_MAX_NODES - 1);
        return false;
    }
    if (!s->window_pages || !is_power_of_2(s->window_pages) ||
        s->window_pages > TGR_WIN_PAGES_MAX) {
        error_setg(errp, "telegraphos: window-pages=%u must be a power of "
                   "two from 1 to %u", s->window_pages, TGR_WIN_PAGES_MAX);
        return false;
    }
    if (!s->mirror_mb || !is_power_of_2(s->mirror_mb) ||
        (uint64_t)s->mirror_mb * MiB > TGR_SHADOW_REMOTE) {
        error_setg(errp, "telegraphos: local-mirror-mb=%u must be a power "
                   "of two from 1 to %u", s->mirror_mb,
                   TGR_SHADOW_REMOTE / (unsigned)MiB);
        return false;
    }
    if (ms && ms->ram_size > (uint64_t)s->mirror_mb * MiB) {
        error_setg(errp, "telegraphos: guest RAM (%" PRIu64 " MiB) is "
                   "larger than local-mirror-mb=%u: the shadow window "
                   "cannot mirror it (raise local-mirror-mb, at most %u)",
                   ms->ram_size / MiB, s->mirror_mb,
                   TGR_SHADOW_REMOTE / (unsigned)MiB);
        return false;
    }
    if (ms && ms->smp.max_cpus > TGR_MAX_CPUS) {
        error_setg(errp, "telegraphos: at most %d vCPUs are supported",
                   TGR_MAX_CPUS);
        return false;
    }
    if (s->rread_timeout_prop < TGR_TIMEOUT_MIN_US ||
        s->rread_timeout_prop > TGR_TIMEOUT_MAX_US) {
        error_setg(errp, "telegraphos: rread-timeout-us=%u is out of range "
                   "(%u-%u)", s->rread_timeout_prop, TGR_TIMEOUT_MIN_US,
                   TGR_TIMEOUT_MAX_US);
        return false;
    }
    if (s->tx_queue_kb < 8 || s->tx_queue_kb > 65536) {
        error_setg(errp, "telegraphos: tx-queue-kb=%u is out of range "
                   "(8-65536)", s->tx_queue_kb);
        return false;
    }
    if (s->rx_hold_frames < 16 || s->rx_hold_frames > 1000000) {
        error_setg(errp, "telegraphos: rx-hold-frames=%u is out of range "
                   "(16-1000000)", s->rx_hold_frames);
        return false;
    }
    return true;
}

static void tgr_realize(PCIDevice *pdev, Error **errp)
{
    TgrState *s = TELEGRAPHOS(pdev);

    if (!tgr_check_props(s, errp)) {
        return;
    }
    pci_config_set_interrupt_pin(pdev->config, 1);
    if (msi_init(pdev, 0, 1, true, false, errp)) {
        return;
    }
    error_setg(&s->migration_blocker,
               "telegraphos: requests in flight and the fabric link cannot "
               "be migrated");
    if (migrate_add_blocker(s->migration_blocker, errp) < 0) {
        error_free(s->migration_blocker);
        s->migration_blocker = NULL;
        msi_uninit(pdev);
        return;
    }

    memory_region_init_io(&s->bar0, OBJECT(s), &tgr_bar0_ops, s,
                          "telegraphos-regs", TGR_BAR0_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->bar0);
    memory_region_init_io(&s->bar2, OBJECT(s), &tgr_bar2_ops, s,
                          "telegraphos-window",
                          (uint64_t)s->window_pages * TGR_PAGE_SIZE);
    pci_register_bar(pdev, 2, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar2);
    memory_region_init_io(&s->bar4, OBJECT(s), &tgr_bar4_ops, s,
                          "telegraphos-shadow", TGR_BAR4_SIZE);
    pci_register_bar(pdev, 4, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar4);

    s->pte = g_new0(uint32_t, (size_t)s->window_pages * 4);
    s->posted = g_new0(TgrPosted, s->window_pages);
    s->peer = g_new0(TgrPeer, FABRIC_MAX_NODES);
    g_queue_init(&s->hold);
    g_queue_init(&s->loop);
    for (int g = 0; g < TGR_GROUPS; g++) {
        s->group_eidx[g] = TGR_GROUP_NONE;
    }
    s->rread_timeout_us = s->rread_timeout_prop;
    s->deadline_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                     tgr_deadline_expired, s);
    s->drain_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, tgr_drain_held, s);
    s->loop_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, tgr_loop_run, s);
    /* The safety valve: a parked load always returns, driver or not. */
    vcpu_stall_init(&s->stall, DEVICE(s), 2 * tgr_rread_timeout_ns(s));
    if (!fabric_link_init(&s->link, &s->chr, FABRIC_KIND_TELEGRAPHOS, s->node,
                          s->lockstep, tgr_link_rx, tgr_link_event, s, errp)) {
        return;
    }
    fabric_link_set_can_rx(&s->link, tgr_rx_can_take);
    fabric_link_set_tx_drained(&s->link, tgr_tx_drained);
}

static void tgr_exit(PCIDevice *pdev)
{
    TgrState *s = TELEGRAPHOS(pdev);

    fabric_link_cleanup(&s->link);
    vcpu_stall_cleanup(&s->stall);
    tgr_rx_flush(s);
    timer_free(s->deadline_timer);
    timer_free(s->drain_timer);
    timer_free(s->loop_timer);
    g_free(s->pte);
    g_free(s->posted);
    g_free(s->peer);
    msi_uninit(pdev);
    if (s->migration_blocker) {
        migrate_del_blocker(s->migration_blocker);
        error_free(s->migration_blocker);
    }
}

/* PCI reset: everything a boot finds, a new epoch, HELLO again. */
static void tgr_reset(DeviceState *dev)
{
    TgrState *s = TELEGRAPHOS(dev);

    tgr_soft_reset(s);
    for (int i = 0; i < TGR_MAX_CPUS; i++) {
        s->cpu[i].cur_ctx = 0;
        s->cpu[i].rd_status = TGR_ERR_OK;
    }
    memset(s->cnt, 0, sizeof(s->cnt));
    memset(s->peer, 0, sizeof(*s->peer) * FABRIC_MAX_NODES);
    s->mc_tx_seq = 0;
    s->epoch++;
    s->imr = 0;
    s->exp_base = 0;
    s->exp_count = 0;
    s->rread_timeout_us = s->rread_timeout_prop;
    vcpu_stall_set_timeout(&s->stall, 2 * tgr_rread_timeout_ns(s));
    vcpu_stall_wake(&s->stall);
    if (s->link.connected && s->link_up) {
        tgr_send_hello(s);
    }
    tgr_update_irq(s);
}

static Property tgr_properties[] = {
    DEFINE_PROP_CHR("chardev", TgrState, chr),
    DEFINE_PROP_BOOL("lockstep", TgrState, lockstep, false),
    DEFINE_PROP_UINT32("node", TgrState, node, 0),
    DEFINE_PROP_UINT32("window-pages", TgrState, window_pages,
                       TGR_WIN_PAGES_MAX),
    DEFINE_PROP_UINT32("local-mirror-mb", TgrState, mirror_mb,
                       TGR_MIRROR_DEFAULT_MB),
    /* 1 s: a TCG cluster on shared cores can pause a node for 100 ms */
    DEFINE_PROP_UINT32("rread-timeout-us", TgrState, rread_timeout_prop,
                       1000000),
    DEFINE_PROP_UINT32("tx-queue-kb", TgrState, tx_queue_kb, 256),
    DEFINE_PROP_UINT32("rx-hold-frames", TgrState, rx_hold_frames, 4096),
    DEFINE_PROP_END_OF_LIST(),
};

static void tgr_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = tgr_realize;
    k->exit = tgr_exit;
    k->vendor_id = TGR_PCI_VENDOR;
    k->device_id = TGR_PCI_DEVICE;
    k->revision = TGR_VERSION;
    k->class_id = PCI_CLASS_NETWORK_OTHER;
    dc->desc = "Telegraphos remote-memory NIC";
    dc->reset = tgr_reset;
    device_class_set_props(dc, tgr_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo tgr_info = {
    .name = TYPE_TELEGRAPHOS,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(TgrState),
    .class_init = tgr_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void tgr_register_types(void)
{
    type_register_static(&tgr_info);
}

type_init(tgr_register_types)
