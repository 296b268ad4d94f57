/*
 * LANai-style Myrinet card: what moves data into and out of SRAM besides
 * the core.  The host DMA engine runs chains of descriptors in SRAM
 * between SRAM and host memory; network send gathers a packet from SRAM
 * and sends it with its CRC-32; network receive puts the next frame into
 * the buffer the firmware armed; doorbell writes append to a FIFO in SRAM,
 * and a doorbell page's WAIT window parks a vCPU until the firmware
 * notifies its context.  Spec: docs/hw/lanai.md.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "qemu/host-utils.h"
#include "hw/pci/pci.h"
#include <zlib.h>
#include "lanai.h"

typedef struct LanaiRxFrame {
    uint32_t len;
    uint8_t data[];
} LanaiRxFrame;

static bool lanai_in_sram(LanaiState *s, uint32_t addr, uint64_t len)
{
    return (uint64_t)addr + len <= s->sram_size;
}

/* ---- host DMA ---- */

static const char *lanai_dma_err_name(uint32_t err)
{
    static const char *const names[] = {
        [LANAI_DMA_ERR_DESC_ALIGN] = "descriptor not 8-byte aligned",
        [LANAI_DMA_ERR_DESC_RANGE] = "descriptor outside SRAM",
        [LANAI_DMA_ERR_LEN] = "length 0 or above 64 KiB",
        [LANAI_DMA_ERR_SRAM_RANGE] = "SRAM buffer outside SRAM",
        [LANAI_DMA_ERR_HOST] = "host bus error",
        [LANAI_DMA_ERR_BUS_MASTER] = "bus mastering disabled",
        [LANAI_DMA_ERR_LOOP] = "chain longer than 1024 descriptors",
    };

    return err < ARRAY_SIZE(names) && names[err] ? names[err] : "?";
}

/* One descriptor: 0 when done, else a LANAI_DMA_ERR_*. */
static uint32_t lanai_dma_one(LanaiState *s, uint32_t desc, uint32_t *next)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t len, lar;
    dma_addr_t host;
    MemTxResult r;
    uint8_t *d;

    if (desc & (LANAI_DMA_DESC_ALIGN - 1)) {
        return LANAI_DMA_ERR_DESC_ALIGN;
    }
    if (!lanai_in_sram(s, desc, LANAI_DMA_DESC_SIZE)) {
        return LANAI_DMA_ERR_DESC_RANGE;
    }
    d = s->sram_ptr + desc;
    *next = ldl_le_p(d + LANAI_DMA_DESC_NEXT);
    len = ldl_le_p(d + LANAI_DMA_DESC_LEN);
    lar = ldl_le_p(d + LANAI_DMA_DESC_LAR);
    /* ldl_le_p() returns int: no sign extension into the high half */
    host = (uint64_t)(uint32_t)ldl_le_p(d + LANAI_DMA_DESC_EAH) << 32 |
           (uint32_t)ldl_le_p(d + LANAI_DMA_DESC_EAL);
    if (len == 0 || len > LANAI_DMA_MAX_LEN) {
        return LANAI_DMA_ERR_LEN;
    }
    if (!lanai_in_sram(s, lar, len)) {
        return LANAI_DMA_ERR_SRAM_RANGE;
    }
    /* pci_dma_rw() orders it after the previous descriptor's data. */
    if (*next & LANAI_DMA_NEXT_TO_SRAM) {
        r = pci_dma_read(pdev, host, s->sram_ptr + lar, len);
    } else {
        r = pci_dma_write(pdev, host, s->sram_ptr + lar, len);
    }
    if (r != MEMTX_OK) {
        return LANAI_DMA_ERR_HOST;
    }
    stw_le_p(d + LANAI_DMA_DESC_STATUS, LANAI_DMA_DESC_DONE);
    if (*next & LANAI_DMA_NEXT_NOTIFY) {
        s->isr |= LANAI_ISR_HOST_SIG;
    }
    return 0;
}

/*
 * Run the chain at DMA_HEAD to its end or first error, at once: PCI time
 * is not modelled.
 */
void lanai_dma_start(LanaiState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    bool was_engaged = guard->engaged_in_io;
    uint32_t desc = s->dma_head, next = 0, done = 0, err = 0;

    if (!(pci_get_word(pdev->config + PCI_COMMAND) & PCI_COMMAND_MASTER)) {
        err = LANAI_DMA_ERR_BUS_MASTER;
    }
    /*
     * A host address in this card's own BAR must not reach its registers
     * from inside a register write: with the device's re-entrancy guard
     * engaged, memory.c refuses that access (error HOST).
     */
    guard->engaged_in_io = true;
    while (!err) {
        err = lanai_dma_one(s, desc, &next);
        if (err) {
            break;
        }
        done++;
        if (next & LANAI_DMA_NEXT_LAST) {
            break;
        }
        desc = next & LANAI_DMA_NEXT_ADDR;
        if (done == LANAI_DMA_MAX_CHAIN) {
            err = LANAI_DMA_ERR_LOOP;
        }
    }
    guard->engaged_in_io = was_engaged;

    if (err) {
        s->dma_sts = LANAI_DMA_STS_ERR | err << 8 | done << 16;
        s->dma_err_desc = desc;
        if (!(desc & (LANAI_DMA_DESC_ALIGN - 1)) &&
            lanai_in_sram(s, desc, LANAI_DMA_DESC_SIZE)) {
            stw_le_p(s->sram_ptr + desc + LANAI_DMA_DESC_STATUS,
                     LANAI_DMA_DESC_ERR | err);
        }
        lanai_count(s, LANAI_CNT_DMA_ERR);
        qemu_log_mask(LOG_GUEST_ERROR, "lanai: DMA chain stopped at "
                      "descriptor 0x%x: %s\n", desc, lanai_dma_err_name(err));
        s->isr |= LANAI_ISR_DMA_ERR;
    } else {
        s->dma_sts = LANAI_DMA_STS_DONE | done << 16;
        s->isr |= LANAI_ISR_WAKE0;
    }
    lanai_update(s);
}

/* ---- network send ---- */

static void lanai_tx_send(LanaiState *s)
{
    uint32_t err = s->tx_errors, route = 0, pkt;

    while (route < s->tx_len && route <= LANAI_MAX_ROUTE &&
           (s->tx_buf[route] & LANAI_ROUTE_BIT)) {
        route++;
    }
    if (!err && (route == s->tx_len || route > LANAI_MAX_ROUTE)) {
        err = LANAI_SSTAT_BAD_ROUTE;
    }
    pkt = s->tx_len - route;
    if (!err && pkt > LANAI_MAX_PACKET) {
        err = LANAI_SSTAT_TOO_LONG;
    }
    if (!err && !s->link_up) {
        err = LANAI_SSTAT_NO_LINK;
    }
    if (err) {
        s->sstat = err;
        lanai_count(s, LANAI_CNT_TX_DISCARDED);
        if (err & LANAI_SSTAT_BAD_RANGE) {
            s->isr |= LANAI_ISR_MEM;
        }
        if (err & (LANAI_SSTAT_TOO_LONG | LANAI_SSTAT_BAD_ROUTE)) {
            s->isr |= LANAI_ISR_TX_TOO_LONG;
        }
        if (err != LANAI_SSTAT_NO_LINK) {
            qemu_log_mask(LOG_GUEST_ERROR, "lanai: send of %u bytes "
                          "discarded (SSTAT 0x%x)\n", s->tx_len, err);
        }
    } else {
        /* fabric_crc32() of proto/base.h; zlib is faster on 16 KiB */
        stl_le_p(s->tx_buf + s->tx_len, crc32(0, s->tx_buf + route, pkt));
        fabric_link_send_flags(&s->link, FABRIC_TYPE_DATA, FABRIC_F_ROUTED,
                               FABRIC_NODE_NONE, s->tx_buf,
                               s->tx_len + FABRIC_MYRI_CRC_LEN);
        s->sstat = LANAI_SSTAT_SENT;
        lanai_count(s, LANAI_CNT_TX_PACKETS);
    }
    s->tx_len = 0;
    s->tx_errors = 0;
    lanai_update(s);
}

/* SML / SMLT: add [SMP, limit) to the packet; with the tail, send it. */
void lanai_tx_segment(LanaiState *s, uint32_t limit, bool tail)
{
    if (limit < s->smp || limit > s->sram_size) {
        s->tx_errors |= LANAI_SSTAT_BAD_RANGE;
    } else {
        uint32_t n = limit - s->smp;

        if (s->tx_len + n > LANAI_MAX_ROUTE + LANAI_MAX_PACKET) {
            s->tx_errors |= LANAI_SSTAT_TOO_LONG;
        } else {
            memcpy(s->tx_buf + s->tx_len, s->sram_ptr + s->smp, n);
            s->tx_len += n;
        }
        s->smp = limit;
    }
    if (tail) {
        lanai_tx_send(s);
    }
}

/* ---- network receive ---- */

static bool lanai_rx_has_room(LanaiState *s)
{
    return g_queue_get_length(&s->rx_queue) < LANAI_RXQ_FRAMES &&
           s->rx_queue_bytes < LANAI_RXQ_BYTES;
}

/*
 * Frames that come while the core is in reset are absorbed, as the real
 * card did, and so are those between a HELLO and its HELLO_ACK: fabricd
 * sent them before it knew of the reset (docs/wire-protocol.md).
 */
static bool lanai_rx_absorbs(LanaiState *s)
{
    return s->core_state == LANAI_CORE_RESET || !s->link_up;
}

/* fabric-link's can_rx */
bool lanai_rx_can_take(void *opaque)
{
    LanaiState *s = opaque;

    if (lanai_rx_absorbs(s) || lanai_rx_has_room(s)) {
        return true;
    }
    if (!s->rx_throttled) {
        s->rx_throttled = true;
        lanai_count(s, LANAI_CNT_RX_FULL);
    }
    return false;
}

static void lanai_rx_unthrottle(LanaiState *s)
{
    if (s->rx_throttled && lanai_rx_has_room(s)) {
        s->rx_throttled = false;
        fabric_link_rx_resume(&s->link);
    }
}

/* An armed receive's buffer is refused: the frame stays queued. */
static void lanai_rx_bad_range(LanaiState *s)
{
    qemu_log_mask(LOG_GUEST_ERROR, "lanai: receive buffer [0x%x, 0x%x) "
                  "is not in SRAM\n", s->rmp, s->rml);
    s->rstat = LANAI_RSTAT_BAD_RANGE;
    lanai_raise(s, LANAI_ISR_MEM);
}

/* If a receive is armed, the next frame goes to [RMP, RML). */
static void lanai_rx_deliver(LanaiState *s)
{
    LanaiRxFrame *f;
    uint32_t pkt, store, stat = LANAI_RSTAT_DONE, isr = LANAI_ISR_RECV;
    uint32_t crc;

    if (!(s->rstat & LANAI_RSTAT_ARMED) || g_queue_is_empty(&s->rx_queue)) {
        return;
    }
    /* RMP may have moved since RML armed the receive: check it again */
    if (s->rml <= s->rmp || s->rml > s->sram_size) {
        lanai_rx_bad_range(s);
        return;
    }
    f = g_queue_pop_head(&s->rx_queue);
    s->rx_queue_bytes -= f->len;

    pkt = f->len < FABRIC_MYRI_CRC_LEN ? f->len : f->len - FABRIC_MYRI_CRC_LEN;
    crc = f->len < FABRIC_MYRI_CRC_LEN ? 0 : ldl_le_p(f->data + pkt);
    if (f->len < FABRIC_MYRI_CRC_LEN || crc32(0, f->data, pkt) != crc) {
        stat |= LANAI_RSTAT_CRC_ERR;
        isr |= LANAI_ISR_RX_CRC;
        lanai_count(s, LANAI_CNT_RX_CRC);
    }
    if (pkt < LANAI_MIN_PACKET) {
        stat |= LANAI_RSTAT_SHORT;
        lanai_count(s, LANAI_CNT_RX_LEN);
    }
    if (pkt && (f->data[0] & LANAI_ROUTE_BIT)) {
        stat |= LANAI_RSTAT_ILLEGAL;
        isr |= LANAI_ISR_ILLEGAL_RECEIVED;
        lanai_count(s, LANAI_CNT_RX_ILLEGAL);
    }
    store = MIN(MIN(pkt, LANAI_MAX_PACKET), s->rml - s->rmp);
    if (store < pkt) {
        stat |= LANAI_RSTAT_TOO_LONG;
        isr |= LANAI_ISR_BUFF | LANAI_ISR_RX_TOO_LONG;
        lanai_count(s, LANAI_CNT_RX_LEN);
    }
    memcpy(s->sram_ptr + s->rmp, f->data, store);
    s->rmp += store;
    s->rlen = store;
    s->rstat = stat;
    lanai_count(s, LANAI_CNT_RX_PACKETS);
    g_free(f);
    lanai_rx_unthrottle(s);
    lanai_raise(s, isr);
}

/* RML written: arm a receive into [RMP, RML). */
void lanai_rx_arm(LanaiState *s)
{
    if (s->rml <= s->rmp || s->rml > s->sram_size) {
        lanai_rx_bad_range(s);
        return;
    }
    s->rstat = LANAI_RSTAT_ARMED;
    s->rlen = 0;
    lanai_rx_deliver(s);
}

/* A DATA frame from the fabric: the packet and its CRC. */
void lanai_rx_frame(LanaiState *s, const uint8_t *p, uint32_t len)
{
    LanaiRxFrame *f;

    if (lanai_rx_absorbs(s)) {
        lanai_count(s, LANAI_CNT_RX_IN_RESET);
        return;
    }
    f = g_malloc(sizeof(*f) + len);
    f->len = len;
    memcpy(f->data, p, len);
    g_queue_push_tail(&s->rx_queue, f);
    s->rx_queue_bytes += len;
    lanai_rx_deliver(s);
}

void lanai_rx_flush(LanaiState *s, bool absorbed)
{
    LanaiRxFrame *f;

    while ((f = g_queue_pop_head(&s->rx_queue))) {
        if (absorbed) {
            lanai_count(s, LANAI_CNT_RX_IN_RESET);
        }
        g_free(f);
    }
    s->rx_queue_bytes = 0;
    lanai_rx_unthrottle(s);
}

void lanai_net_reset(LanaiState *s)
{
    s->smp = 0;
    s->sml = 0;
    s->smlt = 0;
    s->sstat = 0;
    s->tx_errors = 0;
    s->tx_len = 0;
    s->rmp = 0;
    s->rml = 0;
    s->rstat = 0;
    s->rlen = 0;
    lanai_rx_flush(s, true);
}

/* ---- doorbells ---- */

static void lanai_doorbell(LanaiState *s, uint32_t ctx, uint32_t off,
                           uint32_t data)
{
    uint64_t end = (uint64_t)s->db_base + (uint64_t)s->db_size *
                   LANAI_DB_ENTRY_SIZE;
    uint32_t slot;

    if (!s->db_size || !is_power_of_2(s->db_size) || (s->db_base & 7) ||
        end > s->sram_size || s->db_prod - s->db_cons >= s->db_size) {
        lanai_count(s, LANAI_CNT_DB_DROPPED);
        qemu_log_mask(LOG_GUEST_ERROR, "lanai: doorbell 0x%x of context %u "
                      "lost: FIFO full or not set up\n", data, ctx);
        return;
    }
    slot = s->db_base + (s->db_prod & (s->db_size - 1)) * LANAI_DB_ENTRY_SIZE;
    stl_le_p(s->sram_ptr + slot, ctx << 12 | off);
    stl_le_p(s->sram_ptr + slot + 4, data);
    s->db_prod++;
}

/*
 * WAIT: stall the reading vCPU while the context's notify count still has
 * the low bits the reader saw (vcpu-stall.h); never without a vCPU.
 */
static uint32_t lanai_wait_read(LanaiState *s, uint32_t ctx, uint32_t seen)
{
    uint32_t count = s->notify_count[ctx];

    if ((count & 0xff) == seen && vcpu_stall_allowed(&s->stall)) {
        vcpu_stall(&s->stall);
    }
    return count;
}

static uint64_t lanai_doorbell_read(void *opaque, hwaddr addr, unsigned size)
{
    LanaiState *s = opaque;
    uint32_t ctx = LANAI_DB_CTX(addr), off = LANAI_DB_OFF(addr);

    if (off >= LANAI_DB_WAIT_BASE && off < LANAI_DB_NOTIFY_COUNT) {
        return lanai_wait_read(s, ctx, (off - LANAI_DB_WAIT_BASE) / 4);
    }
    if (off == LANAI_DB_NOTIFY_COUNT) {
        return s->notify_count[ctx];
    }
    qemu_log_mask(LOG_GUEST_ERROR, "lanai: read of doorbell page %u at "
                  "0x%x\n", ctx, off);
    return 0;
}

static void lanai_doorbell_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    LanaiState *s = opaque;

    lanai_doorbell(s, LANAI_DB_CTX(addr), LANAI_DB_OFF(addr), val);
    lanai_update(s);
    if (s->run_now) {
        /*
         * The doorbell woke the core: serve it now, on this vCPU, rather
         * than wake the main loop for it (a send costs one hand-off less).
         */
        lanai_service(s);
    } else {
        lanai_reschedule(s, false);
    }
}

const MemoryRegionOps lanai_doorbell_ops = LANAI_MMIO_OPS(lanai_doorbell);
