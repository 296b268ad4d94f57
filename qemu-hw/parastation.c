/*
 * ParaStation board: the network interface of the ParaStation cluster
 * (Warschko, Blum, Tichy).  Status/control registers, a 1 KiB TX and RX
 * FIFO with a packet-ready FIFO, parity-protected packets and hardware
 * barrier lines.  The network processors, routing and timing live in
 * fabricd's ps1 kind.  Spec: docs/hw/parastation.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/bitops.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/blocker.h"
#include "qom/object.h"
#include "fabric-link.h"
#include "proto/ps1.h"
#include "vcpu-stall.h"
/* The register interface, shared with the driver and user space. */
#include "vcluster/hw/ps1_regs.h"

#define TYPE_PARASTATION "parastation"
OBJECT_DECLARE_SIMPLE_TYPE(ParaStationState, PARASTATION)

#define PS_FIFO_WORDS       (PS1_FIFO_BYTES / 4)
#define PS_HALF_WORDS       (PS_FIFO_WORDS / 2)
#define PS_MAX_DATA_WORDS   FABRIC_PS1_MAX_WORDS    /* 508 bytes */
#define PS_MAX_PKT_WORDS    (1 + PS_MAX_DATA_WORDS)
/*
 * RX space goes back to the fabric once a maximal packet's worth is free.
 * While less is owed, the fabric's credit still fits any packet, so no
 * packet ever waits for it, and a ping-pong costs no credit frames.
 */
#define PS_CREDIT_BATCH     (4 * PS_MAX_PKT_WORDS)

typedef struct PsFifo {
    uint32_t word[PS_FIFO_WORDS];
    uint32_t head;
    uint32_t count;
} PsFifo;

struct ParaStationState {
    PCIDevice parent_obj;
    MemoryRegion mmio;
    CharBackend chr;
    FabricLink link;
    bool lockstep;              /* property: lock-step (lockstep.h) */
    Error *migration_blocker;
    uint32_t node_prop;

    uint32_t node;
    uint16_t nodes;
    uint8_t width;
    uint8_t height;
    bool link_up;
    uint32_t errors;
    uint32_t creg;
    uint32_t isr;
    uint32_t irq_pending;
    uint32_t rt_index;
    uint8_t rt[FABRIC_MAX_NODES];

    PsFifo tx;
    uint32_t tx_words_left;     /* of the packet being written; 0: header */
    uint32_t tx_complete;       /* complete packets in the TX FIFO */
    uint32_t tx_credit;         /* insertion credits from the fabric */

    PsFifo rx;
    PsFifo ready;               /* packet-ready FIFO: header words */
    uint32_t rx_words_left;     /* of the packet being read; 0: header */
    uint32_t rx_credit_owed;    /* bytes read, not yet credited back */

    uint8_t bar_mask;
    uint8_t bar_wait;
    uint8_t bar_done;

    uint32_t cnt_tx;
    uint32_t cnt_rx;
    uint32_t cnt_parity;
    uint32_t cnt_barriers;

    VCPUStall stall;            /* vCPUs parked on a WAIT window read */
    uint32_t wait_cond;         /* what they wait for, PS1_WAIT_* */
    uint32_t wait_timeout_us;
};

static void fifo_push(PsFifo *f, uint32_t w)
{
    f->word[(f->head + f->count) % PS_FIFO_WORDS] = w;
    f->count++;
}

static uint32_t fifo_pop(PsFifo *f)
{
    uint32_t w = f->word[f->head];

    f->head = (f->head + 1) % PS_FIFO_WORDS;
    f->count--;
    return w;
}

static uint32_t fifo_peek(const PsFifo *f)
{
    return f->count ? f->word[f->head] : 0;
}

static void fifo_clear(PsFifo *f)
{
    f->head = 0;
    f->count = 0;
}

static void ps_update_irq(ParaStationState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t pending = s->isr & s->creg & PS1_CREG_IE_MASK;

    if (msi_enabled(pdev)) {
        if (pending & ~s->irq_pending) {
            msi_notify(pdev, 0);
        }
    } else {
        pci_set_irq(pdev, pending != 0);
    }
    s->irq_pending = pending;
}

static void ps_raise(ParaStationState *s, uint32_t isr_bits)
{
    s->isr |= isr_bits;
    ps_update_irq(s);
}

static void ps_error(ParaStationState *s, uint32_t err)
{
    s->errors |= err;
    ps_raise(s, PS1_ISR_ERR);
}

static uint32_t ps_sreg(ParaStationState *s)
{
    uint32_t v = s->errors;

    v |= s->tx.count == 0 ? PS1_SREG_TX_EMPTY : 0;
    v |= s->tx.count >= PS_HALF_WORDS ? PS1_SREG_TX_HALF : 0;
    v |= PS_FIFO_WORDS - s->tx.count < PS_MAX_PKT_WORDS ? PS1_SREG_TX_FULL : 0;
    v |= s->rx.count == 0 ? PS1_SREG_RX_EMPTY : 0;
    v |= s->rx.count >= PS_HALF_WORDS ? PS1_SREG_RX_HALF : 0;
    v |= s->rx.count == PS_FIFO_WORDS ? PS1_SREG_RX_FULL : 0;
    v |= s->ready.count ? PS1_SREG_PKT_READY : 0;
    v |= s->link_up ? PS1_SREG_LINK : 0;
    v |= (uint32_t)s->bar_wait << PS1_SREG_BAR_WAIT_SHIFT;
    v |= (uint32_t)s->bar_done << PS1_SREG_BAR_DONE_SHIFT;
    return v;
}

/* After any state change: let parked readers look again if it is time. */
static void ps_wake_waiters(ParaStationState *s)
{
    if (vcpu_stall_any(&s->stall) && PS1_WAIT_MET(ps_sreg(s), s->wait_cond)) {
        s->wait_cond = 0;
        vcpu_stall_wake(&s->stall);
    }
}

/*
 * A read of the WAIT window returns SREG once a condition the address
 * encodes holds; until then the reading vCPU is parked (vcpu-stall.h).
 */
static uint32_t ps_wait_read(ParaStationState *s, hwaddr addr)
{
    uint32_t cond = (addr - PS1_REG_WAIT) / 4;
    uint32_t sreg = ps_sreg(s);
    bool may_stall = vcpu_stall_allowed(&s->stall);

    if (!PS1_WAIT_MET(sreg, cond) && may_stall) {
        s->wait_cond |= cond;
        vcpu_stall(&s->stall);
    }
    return sreg;
}

static void ps_send_hello(ParaStationState *s)
{
    uint8_t p[FABRIC_HELLO_MAX_LEN];

    s->link.node = s->node;
    s->rx_credit_owed = 0;      /* a HELLO resets the fabric's credit */
    fabric_link_send(&s->link, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, p,
                     fabric_hello_encode(s->node,
                                         fabric_link_hello_flags(&s->link),
                                         p));
}

static void ps_send_credit(ParaStationState *s, uint32_t bytes)
{
    uint8_t p[4];

    fabric_put_le32(p, bytes);
    fabric_link_send(&s->link, FABRIC_TYPE_CREDIT, FABRIC_NODE_NONE, p,
                     sizeof(p));
}

static void ps_send_barrier(ParaStationState *s, uint8_t op, uint8_t lines)
{
    uint8_t p[2] = { op, lines };

    fabric_link_send(&s->link, FABRIC_TYPE_BARRIER, FABRIC_NODE_NONE, p,
                     sizeof(p));
}

/* Hand complete packets to the network while it has room for them. */
static void ps_tx_pump(ParaStationState *s)
{
    while (s->tx_complete && s->tx_credit && s->link_up) {
        uint32_t header = fifo_pop(&s->tx);
        uint32_t count = header & 0xffff;
        uint32_t words[PS_MAX_DATA_WORDS];
        uint8_t p[FABRIC_PS1_DATA_LEN(PS_MAX_DATA_WORDS)];
        bool was_half = s->tx.count + 1 + count >= PS_HALF_WORDS;

        for (uint32_t i = 0; i < count; i++) {
            words[i] = fifo_pop(&s->tx);
        }
        fabric_link_send(&s->link, FABRIC_TYPE_DATA, header >> 16, p,
                         fabric_ps1_data_encode(header, words, p));
        s->tx_complete--;
        s->tx_credit--;
        s->cnt_tx++;
        if (was_half && s->tx.count < PS_HALF_WORDS) {
            ps_raise(s, PS1_ISR_TX);
        }
    }
}

static void ps_tx_flush(ParaStationState *s)
{
    fifo_clear(&s->tx);
    s->tx_words_left = 0;
    s->tx_complete = 0;
}

static void ps_nreg_write(ParaStationState *s, uint32_t w)
{
    if (s->tx.count == PS_FIFO_WORDS) {
        ps_error(s, PS1_SREG_ERR_TX_OVERFLOW);
        return;
    }
    if (s->tx_words_left == 0) {
        uint32_t count = w & 0xffff;
        uint32_t dest = w >> 16;

        if (count == 0 || count > PS_MAX_DATA_WORDS ||
            (s->link_up && dest >= s->nodes)) {
            qemu_log_mask(LOG_GUEST_ERROR, "parastation: bad TX header "
                          "0x%08x\n", w);
            ps_tx_flush(s);
            ps_error(s, PS1_SREG_ERR_TX_HEADER);
            return;
        }
        fifo_push(&s->tx, w);
        s->tx_words_left = count;
        return;
    }
    fifo_push(&s->tx, w);
    if (--s->tx_words_left == 0) {
        s->tx_complete++;
        ps_tx_pump(s);
    }
}

static uint32_t ps_nreg_read(ParaStationState *s)
{
    uint32_t w;

    if (s->rx.count == 0) {
        ps_error(s, PS1_SREG_ERR_RX_UNDERFLOW);
        return 0;
    }
    w = fifo_pop(&s->rx);
    if (s->rx_words_left == 0) {
        s->rx_words_left = w & 0xffff;
        return w;
    }
    if (--s->rx_words_left == 0) {
        /* Whole packet read: its space goes back to the network. */
        uint32_t header = fifo_pop(&s->ready);

        s->rx_credit_owed += FABRIC_PS1_PKT_BYTES(header & 0xffff);
        if (s->rx_credit_owed >= PS_CREDIT_BATCH) {
            ps_send_credit(s, s->rx_credit_owed);
            s->rx_credit_owed = 0;
        }
    }
    return w;
}

static void ps_rx_data(ParaStationState *s, const uint8_t *p, uint32_t len)
{
    uint32_t header, count = fabric_ps1_data_count(len);

    if (!count) {
        warn_report_once("parastation: malformed DATA frame from fabricd");
        return;
    }
    header = fabric_ps1_data_word(p, 0);
    if (!fabric_ps1_data_intact(p, count)) {
        /* Never delivered: the error is reported and the space returned. */
        s->cnt_parity++;
        ps_error(s, PS1_SREG_ERR_PARITY);
        ps_send_credit(s, FABRIC_PS1_PKT_BYTES(count));
        return;
    }
    if (PS_FIFO_WORDS - s->rx.count < 1 + count) {
        warn_report_once("parastation: fabricd overran the RX FIFO");
        return;
    }
    for (uint32_t i = 0; i <= count; i++) {
        fifo_push(&s->rx, fabric_ps1_data_word(p, i));
    }
    fifo_push(&s->ready, header);
    s->cnt_rx++;
    ps_raise(s, PS1_ISR_PKT);
}

static void ps_rx_control(ParaStationState *s, const uint8_t *p, uint32_t len)
{
    FabricHelloAck ack;
    char why[FABRIC_REASON_MAX + 1];

    if (len >= 1 && p[0] == FABRIC_CTL_HELLO_ACK) {
        /* The node count sizes the route table the board sends back. */
        if (!fabric_hello_ack_decode(p, len, FABRIC_PS1_HELLO_ACK_EXTRA,
                                     &ack) ||
            ack.nodes == 0 || ack.nodes > FABRIC_MAX_NODES ||
            s->node >= ack.nodes) {
            warn_report("parastation: fabric's HELLO_ACK (%u bytes, %u "
                        "nodes) does not fit node %u; link stays down", len,
                        len >= FABRIC_HELLO_ACK_BASE_LEN ?
                        fabric_get_le16(p + 1) : 0, s->node);
            s->link_up = false;
            ps_error(s, PS1_SREG_ERR_CONFIG);
            return;
        }
        s->nodes = ack.nodes;
        s->width = ack.extra[FABRIC_PS1_ACK_WIDTH];
        s->height = ack.extra[FABRIC_PS1_ACK_HEIGHT];
        s->link_up = true;
        s->tx_credit = 1;
        ps_tx_pump(s);
    } else if (fabric_reject_decode(p, len, why, sizeof(why))) {
        warn_report("parastation: fabric rejected node %u: %s", s->node,
                    why);
        ps_error(s, PS1_SREG_ERR_CONFIG);
    }
}

static void ps_link_rx(void *opaque, const FabricHdr *h, const uint8_t *p)
{
    ParaStationState *s = opaque;

    switch (h->type) {
    case FABRIC_TYPE_DATA:
        ps_rx_data(s, p, h->len);
        break;
    case FABRIC_TYPE_CREDIT:
        if (h->len >= 4) {
            s->tx_credit += fabric_get_le32(p);
            ps_tx_pump(s);
        }
        break;
    case FABRIC_TYPE_BARRIER:
        if (h->len >= 2 && p[0] == FABRIC_PS1_BARRIER_RELEASE) {
            uint8_t lines = p[1] & s->bar_wait;

            s->bar_wait &= ~lines;
            s->bar_done |= lines;
            s->cnt_barriers += ctpop8(lines);
            if (lines) {
                ps_raise(s, PS1_ISR_BARRIER);
            }
        }
        break;
    case FABRIC_TYPE_CONTROL:
        ps_rx_control(s, p, h->len);
        break;
    default:
        break;
    }
    ps_wake_waiters(s);
}

static void ps_link_event(void *opaque, bool up)
{
    ParaStationState *s = opaque;

    s->link_up = false;
    if (up) {
        ps_send_hello(s);
    } else {
        ps_error(s, PS1_SREG_ERR_LINK);
    }
    ps_wake_waiters(s);
}

static void ps_send_routes(ParaStationState *s)
{
    uint32_t count = s->nodes;
    g_autofree uint8_t *p = g_malloc(FABRIC_PS1_ROUTES_HDR_LEN + count);

    fabric_link_send(&s->link, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, p,
                     fabric_ps1_routes_encode(s->node, count, s->rt, p));
}

/* Board reset: NODE and the link survive, everything else starts over. */
static void ps_board_reset(ParaStationState *s)
{
    ps_tx_flush(s);
    fifo_clear(&s->rx);
    fifo_clear(&s->ready);
    s->rx_words_left = 0;
    s->errors = 0;
    s->creg = 0;
    s->isr = 0;
    s->rt_index = 0;
    memset(s->rt, FABRIC_PS1_ROUTE_INVALID, sizeof(s->rt));
    s->bar_mask = 0;
    s->bar_wait = 0;
    s->bar_done = 0;
    s->tx_credit = 0;
    ps_update_irq(s);
    /*
     * The fabric forgets this node's credits and state on a new HELLO.
     * Before the first HELLO_ACK a HELLO is already on its way.
     */
    if (s->link.connected && s->link_up) {
        s->link_up = false;
        ps_send_hello(s);
    }
    s->wait_cond = 0;
    vcpu_stall_wake(&s->stall);
}

static uint64_t ps_read(void *opaque, hwaddr addr, unsigned size)
{
    ParaStationState *s = opaque;

    if (addr >= PS1_REG_WAIT && addr < PS1_REG_WAIT + PS1_WAIT_WINDOW) {
        return ps_wait_read(s, addr);
    }
    switch (addr) {
    case PS1_REG_ID:
        return PS1_ID_VALUE;
    case PS1_REG_SREG:
        return ps_sreg(s);
    case PS1_REG_CREG:
        return s->creg;
    case PS1_REG_ISR:
        return s->isr;
    case PS1_REG_NODE:
        return s->node;
    case PS1_REG_FABRIC:
        return s->nodes | (uint32_t)s->width << 16 |
               (uint32_t)s->height << 24;
    case PS1_REG_RT_INDEX:
        return s->rt_index;
    case PS1_REG_RT_ENTRY:
        return s->rt[s->rt_index];
    case PS1_REG_NREG:
        return ps_nreg_read(s);
    case PS1_REG_RX_HEAD:
        return fifo_peek(&s->ready);
    case PS1_REG_TX_FREE:
        return 4 * (PS_FIFO_WORDS - s->tx.count);
    case PS1_REG_RX_USED:
        return 4 * s->rx.count;
    case PS1_REG_BARRIER:
        return s->bar_wait | (uint32_t)s->bar_done << PS1_BARRIER_DONE_SHIFT;
    case PS1_REG_BARRIER_MASK:
        return s->bar_mask;
    case PS1_REG_PKT_STATE:
        return s->tx_words_left | s->rx_words_left << 16;
    case PS1_REG_CNT_TX_PKTS:
        return s->cnt_tx;
    case PS1_REG_CNT_RX_PKTS:
        return s->cnt_rx;
    case PS1_REG_CNT_PARITY:
        return s->cnt_parity;
    case PS1_REG_CNT_BARRIERS:
        return s->cnt_barriers;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "parastation: read of unknown "
                      "register 0x%" HWADDR_PRIx "\n", addr);
        return 0;
    }
}

static void ps_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    ParaStationState *s = opaque;
    uint32_t v = val;

    switch (addr) {
    case PS1_REG_CREG:
        if (v & PS1_CREG_RESET) {
            ps_board_reset(s);
            return;
        }
        if (v & PS1_CREG_CLEAR_ERR) {
            s->errors = 0;
        }
        s->creg = v & PS1_CREG_IE_MASK;
        ps_update_irq(s);
        break;
    case PS1_REG_ISR:
        s->isr &= ~v;
        ps_update_irq(s);
        break;
    case PS1_REG_NODE:
        s->node = v & 0xffff;
        break;
    case PS1_REG_RT_INDEX:
        s->rt_index = v % FABRIC_MAX_NODES;
        break;
    case PS1_REG_RT_ENTRY:
        s->rt[s->rt_index] = v & 3;
        break;
    case PS1_REG_NREG:
        ps_nreg_write(s, v);
        break;
    case PS1_REG_BARRIER: {
        uint8_t arrive = v & s->bar_mask & ~s->bar_wait;

        s->bar_done &= ~((v & PS1_BARRIER_DONE_MASK) >> PS1_BARRIER_DONE_SHIFT);
        if (arrive) {
            s->bar_wait |= arrive;
            ps_send_barrier(s, FABRIC_PS1_BARRIER_ARRIVE, arrive);
        }
        break;
    }
    case PS1_REG_BARRIER_MASK:
        s->bar_mask = v & PS1_BARRIER_WAIT_MASK;
        ps_send_barrier(s, FABRIC_PS1_BARRIER_MASK, s->bar_mask);
        break;
    case PS1_REG_RT_COMMIT:
        if (v & 1) {
            if (s->link.connected && s->node != s->link.node) {
                ps_send_hello(s);
            }
            ps_send_routes(s);
        }
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "parastation: write of 0x%x to "
                      "register 0x%" HWADDR_PRIx "\n", v, addr);
        break;
    }
    ps_wake_waiters(s);
}

static const MemoryRegionOps ps_mmio_ops = {
    .read = ps_read,
    .write = ps_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static void ps_realize(PCIDevice *pdev, Error **errp)
{
    ParaStationState *s = PARASTATION(pdev);

    if (s->node_prop >= FABRIC_MAX_NODES) {
        error_setg(errp, "parastation: node=%u is out of range (0-%u)",
                   s->node_prop, FABRIC_MAX_NODES - 1);
        return;
    }
    if (s->wait_timeout_us > 1000000) {
        error_setg(errp, "parastation: wait-timeout-us=%u is above 1000000",
                   s->wait_timeout_us);
        return;
    }
    error_setg(&s->migration_blocker,
               "parastation: the fabric link cannot be migrated");
    if (migrate_add_blocker(s->migration_blocker, errp) < 0) {
        error_free(s->migration_blocker);
        s->migration_blocker = NULL;
        return;
    }
    pci_config_set_interrupt_pin(pdev->config, 1);
    if (msi_init(pdev, 0, 1, true, false, errp)) {
        return;
    }
    s->node = s->node_prop;
    memset(s->rt, FABRIC_PS1_ROUTE_INVALID, sizeof(s->rt));
    memory_region_init_io(&s->mmio, OBJECT(s), &ps_mmio_ops, s,
                          "parastation-regs", 4 * KiB);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->mmio);
    vcpu_stall_init(&s->stall, DEVICE(s),
                    (int64_t)s->wait_timeout_us * SCALE_US);
    if (!fabric_link_init(&s->link, &s->chr, FABRIC_KIND_PS1, s->node,
                          s->lockstep, ps_link_rx, ps_link_event, s, errp)) {
        return;
    }
}

static void ps_exit(PCIDevice *pdev)
{
    ParaStationState *s = PARASTATION(pdev);

    fabric_link_cleanup(&s->link);
    vcpu_stall_cleanup(&s->stall);
    msi_uninit(pdev);
    if (s->migration_blocker) {
        migrate_del_blocker(s->migration_blocker);
        error_free(s->migration_blocker);
    }
}

static void ps_reset(DeviceState *dev)
{
    ParaStationState *s = PARASTATION(dev);

    s->node = s->node_prop;
    s->cnt_tx = s->cnt_rx = s->cnt_parity = s->cnt_barriers = 0;
    ps_board_reset(s);
}

static Property ps_properties[] = {
    DEFINE_PROP_CHR("chardev", ParaStationState, chr),
    DEFINE_PROP_BOOL("lockstep", ParaStationState, lockstep, false),
    DEFINE_PROP_UINT32("node", ParaStationState, node_prop, 0),
    DEFINE_PROP_UINT32("wait-timeout-us", ParaStationState, wait_timeout_us,
                       2000),
    DEFINE_PROP_END_OF_LIST(),
};

static void ps_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = ps_realize;
    k->exit = ps_exit;
    k->vendor_id = PCI_VENDOR_ID_QEMU;
    k->device_id = PS1_PCI_DEVICE;
    k->revision = 1;
    k->class_id = PCI_CLASS_NETWORK_OTHER;
    dc->desc = "ParaStation cluster interconnect board";
    dc->reset = ps_reset;
    device_class_set_props(dc, ps_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo ps_info = {
    .name = TYPE_PARASTATION,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(ParaStationState),
    .class_init = ps_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void ps_register_types(void)
{
    type_register_static(&ps_info);
}

type_init(ps_register_types)
