/*
 * Telegraphos NIC, the core: what every part of the card uses.  The
 * interrupt and the event ring, the contexts' status pages, the export
 * table, window page counters, and sending: the tx queue's room, the
 * parked vCPUs waiting for it, group membership news for fabricd.
 *
 * The calls go one way, down: telegraphos.c (the board: BAR0, the link's
 * callbacks, reset) calls telegraphos-tx.c (the initiator) and
 * telegraphos-rx.c (the target); both call telegraphos-rd.c (requests
 * that wait for a reply); all of them call the core, which calls none of
 * them, only telegraphos-req.c's decoding.  The timers and the link reach
 * the other parts through the callbacks that telegraphos.c registers.
 * Spec: docs/hw/telegraphos.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/host-utils.h"
#include "hw/core/cpu.h"
#include "hw/pci/msi.h"
#include "sysemu/dma.h"
#include "telegraphos.h"

int tgr_cpu_slot(void)
{
    if (current_cpu && current_cpu->cpu_index < TGR_MAX_CPUS) {
        return current_cpu->cpu_index;
    }
    return 0;
}

/* ---- interrupts and events ---- */

void tgr_update_irq(TgrState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    bool level = (s->isr & s->imr) != 0;

    if (msi_enabled(pdev)) {
        if (level && !s->irq_level) {
            msi_notify(pdev, 0);
        }
        pci_set_irq(pdev, 0);
    } else {
        pci_set_irq(pdev, level);
    }
    s->irq_level = level;
}

void tgr_raise(TgrState *s, uint32_t bits)
{
    s->isr |= bits;
    tgr_update_irq(s);
}

/*
 * The ring holds EVQ_ENTRIES entries; PROD and CONS are indices in it.
 * It is full when one more entry would make PROD equal CONS, so one
 * entry always stays free.
 */
void tgr_event(TgrState *s, uint8_t type, uint8_t reason, uint8_t ctx,
               uint8_t op, uint16_t node, uint16_t cpu, uint32_t page,
               uint32_t data)
{
    uint32_t mask = s->evq_entries - 1;
    uint8_t ev[TGR_EV_ENTRY];

    if (!s->evq_entries) {
        tgr_count(s, TGR_CNT_EVQ_LOST);
        return;
    }
    if (((s->evq_prod + 1) & mask) == s->evq_cons) {
        tgr_count(s, TGR_CNT_EVQ_LOST);
        tgr_raise(s, TGR_INT_EVQ_LOST);
        return;
    }
    ev[0] = type;
    ev[1] = reason;
    ev[2] = ctx;
    ev[3] = op;
    fabric_put_le16(ev + 4, node);
    fabric_put_le16(ev + 6, cpu);
    fabric_put_le32(ev + 8, page);
    fabric_put_le32(ev + 12, data);
    if (pci_dma_write(PCI_DEVICE(s), s->evq_base +
                      (uint64_t)s->evq_prod * TGR_EV_ENTRY, ev,
                      sizeof(ev)) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "telegraphos: event ring at 0x%"
                      PRIx64 " is not memory\n", s->evq_base);
        tgr_count(s, TGR_CNT_EVQ_LOST);
        tgr_raise(s, TGR_INT_EVQ_LOST);
        return;
    }
    s->evq_prod = (s->evq_prod + 1) & mask;
    tgr_raise(s, TGR_INT_EVQ);
}

void tgr_ctx_status_add(TgrState *s, uint8_t ctx, bool error)
{
    const uint8_t *e = s->ctx_table + ctx * TGR_CTX_ENTRY;
    uint64_t page = ldq_le_p(e);
    uint64_t addr = page + (error ? TGR_STATUS_ERRORS : TGR_STATUS_DONE);
    uint32_t v;

    if (!(ldl_le_p(e + 8) & TGR_CTXF_VALID) || !page) {
        return;
    }
    if (ldl_le_pci_dma(PCI_DEVICE(s), addr, &v, MEMTXATTRS_UNSPECIFIED) ==
        MEMTX_OK) {
        stl_le_pci_dma(PCI_DEVICE(s), addr, v + 1, MEMTXATTRS_UNSPECIFIED);
    }
}

int64_t tgr_rread_timeout_ns(TgrState *s)
{
    return (int64_t)s->rread_timeout_us * SCALE_US;
}

/* ---- the export table and the window pages ---- */

int tgr_export_read(TgrState *s, uint32_t eidx, TgrExport *e)
{
    uint8_t raw[TGR_EXP_ENTRY];

    /* tgr_regs.h: RANGE is "beyond the page or export table" */
    if (eidx >= s->exp_count) {
        return TGR_ERR_RANGE;
    }
    if (pci_dma_read(PCI_DEVICE(s), s->exp_base +
                     (uint64_t)eidx * TGR_EXP_ENTRY, raw, sizeof(raw)) !=
        MEMTX_OK) {
        return TGR_ERR_BADADDR;
    }
    tgr_export_decode(raw, e);
    return TGR_ERR_OK;
}

/* The access counter: 1 -> 0 queues CNT_ZERO; 0 is off. */
void tgr_count_access(TgrState *s, uint32_t page)
{
    uint32_t *w3 = &s->pte[page * 4 + 3];

    if (*w3 && --*w3 == 0) {
        tgr_count(s, TGR_CNT_CNT_ZERO);
        tgr_event(s, TGR_EV_CNT_ZERO, TGR_ERR_OK, tgr_pte_ctx(s, page), 0,
                  tgr_pte_node(s, page), tgr_cpu_slot(), page, 0);
    }
}

/* ---- sending ---- */

bool tgr_reachable(TgrState *s, uint16_t node)
{
    if (node == s->node) {
        return true;
    }
    return s->link_up && node < FABRIC_MAX_NODES &&
           (!s->nodes || node < s->nodes);
}

bool tgr_send(TgrState *s, uint16_t dst, FabricTgrHdr *t, const void *body,
              uint32_t blen)
{
    uint8_t hdr[FABRIC_TGR_HDR_LEN];
    uint32_t *seq;

    if (dst != FABRIC_NODE_ALL && dst >= FABRIC_MAX_NODES) {
        return false;
    }
    seq = dst == FABRIC_NODE_ALL ? &s->mc_tx_seq : &s->peer[dst].tx_seq;
    t->epoch = s->epoch;
    t->seq = *seq;
    fabric_tgr_hdr_encode(t, hdr);
    if (dst == s->node) {
        /* Loopback: the rx path serves it from a timer, no fabric. */
        TgrFrame *f = g_malloc(sizeof(*f) + sizeof(hdr) + blen);

        f->src = s->node;
        f->len = sizeof(hdr) + blen;
        memcpy(f->data, hdr, sizeof(hdr));
        memcpy(f->data + sizeof(hdr), body, blen);
        g_queue_push_tail(&s->loop, f);
        if (!timer_pending(s->loop_timer)) {
            timer_mod(s->loop_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
        }
    } else if (!s->link_up ||
               !fabric_link_try_send(&s->link, FABRIC_TYPE_DATA, dst, hdr,
                                     sizeof(hdr), body, blen)) {
        return false;
    }
    (*seq)++;
    tgr_count(s, TGR_CNT_TX_FRAMES);
    return true;
}

/*
 * Is there room for a frame of `bytes` to dst?  If not, park the vCPU:
 * its access is rolled back and runs again when room returns.  Without a
 * vCPU to park (qtest), or after vcpu-stall's bound, it goes over.
 */
void tgr_tx_wait_room(TgrState *s, uint16_t dst, uint32_t bytes)
{
    bool full;

    if (dst == s->node) {
        full = g_queue_get_length(&s->loop) + g_queue_get_length(&s->hold) >=
               s->rx_hold_frames;
    } else {
        full = fabric_link_tx_queued(&s->link) + FABRIC_HDR_LEN + bytes >
               s->tx_queue_kb * KiB;
    }
    if (!full || !vcpu_stall_allowed(&s->stall)) {
        return;
    }
    /* Once per store: an interrupt may run it again while still full. */
    if (!(s->tx_waiters & BIT_ULL(current_cpu->cpu_index))) {
        tgr_count(s, TGR_CNT_TX_STALLS);
        s->tx_waiters |= BIT_ULL(current_cpu->cpu_index);
    }
    vcpu_stall(&s->stall);
}

void tgr_tx_wake(TgrState *s)
{
    uint64_t waiters = s->tx_waiters;

    s->tx_waiters = 0;
    for (; waiters; waiters &= waiters - 1) {
        vcpu_stall_wake_cpu(&s->stall, ctz64(waiters));
    }
}

bool tgr_tx_full(TgrState *s)
{
    return fabric_link_tx_queued(&s->link) >= s->tx_queue_kb * KiB;
}

/* ---- group membership, told to fabricd ---- */

static void tgr_send_control(TgrState *s, uint8_t op, uint16_t arg)
{
    uint8_t p[FABRIC_TGR_GROUP_LEN];

    fabric_link_try_send(&s->link, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE,
                         p, fabric_tgr_group_encode(op, arg, p), NULL, 0);
}

bool tgr_groups_dirty(TgrState *s)
{
    for (int g = 0; g < TGR_GROUPS; g++) {
        if (s->group_told[g] != (s->group_eidx[g] != TGR_GROUP_NONE)) {
            return true;
        }
    }
    return false;
}

/*
 * Tell fabricd the groups whose membership changed since we last told it.
 * A guest that joins and leaves in a loop while the tx queue is full must
 * not queue a frame per write: the changes wait here, one bit per group,
 * and go out when the queue has room (tgr_drain_held).
 */
void tgr_groups_sync(TgrState *s)
{
    for (int g = 0; g < TGR_GROUPS && s->link_up; g++) {
        bool member = s->group_eidx[g] != TGR_GROUP_NONE;

        if (s->group_told[g] == member) {
            continue;
        }
        if (tgr_tx_full(s)) {
            return;
        }
        tgr_send_control(s, member ? FABRIC_CTL_TGR_JOIN
                                   : FABRIC_CTL_TGR_LEAVE, g);
        s->group_told[g] = member;
    }
}
