/*
 * vcluster-eth-link: puts a NIC on fabricd's eth fabric in lock-step
 * (docs/fabricd.md "The eth kind in lock-step").
 *
 *   -chardev socket,id=CHR,path=DIR/node<i>.sock
 *   -netdev hubport,id=NETDEV,hubid=0
 *   -device virtio-net-pci,netdev=NETDEV,tx=timer,x-txtimer=1000,
 *           ioeventfd=off
 *   -device vcluster-eth-link,netdev=NETDEV,chardev=CHR,node=I
 *
 * The work is done by a net filter (vcluster-eth-link-filter, a
 * TYPE_NETFILTER) on the NIC's netdev.  QEMU 7.2 takes -object only for
 * the object types of its QAPI schema, so this bus-less device creates
 * the filter and owns the fabric link; -device also comes after the
 * netdevs and chardevs.
 *
 * Every frame the NIC sends is taken by the filter and goes to fabricd as
 * a DATA frame of kind eth (the payload is the Ethernet frame); the
 * netdev underneath never sees it, and what the netdev sends is dropped,
 * so the NIC reaches nothing but the fabric.  The frames fabricd delivers
 * come through a lock-step FabricLink, at their delivery time, from a
 * QEMU_CLOCK_VIRTUAL timer, and go to the NIC as if the netdev had sent
 * them.
 *
 * A NIC without receive buffers: the frame waits in the NIC's own queue,
 * and the link hands over nothing more until QEMU delivered it (the
 * queue calls back once the guest gave buffers), so the frames wait, in
 * order, in the link.  Beyond ETH_LINK_RX_HOLD_MAX bytes waiting there,
 * the oldest are dropped and counted (rx-dropped).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/iov.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qom/object.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "net/filter.h"
#include "net/net.h"
#include "net/queue.h"
#include "sysemu/cpu-timers.h"
#include "fabric-link.h"
#include "proto/eth.h"

#define TYPE_VCLUSTER_ETH_LINK "vcluster-eth-link"
OBJECT_DECLARE_SIMPLE_TYPE(EthLinkState, VCLUSTER_ETH_LINK)
#define TYPE_VCLUSTER_ETH_FILTER "vcluster-eth-link-filter"
OBJECT_DECLARE_SIMPLE_TYPE(EthLinkFilter, VCLUSTER_ETH_FILTER)

/* Frames that wait for a NIC without receive buffers, at most (bytes). */
#define ETH_LINK_RX_HOLD_MAX    (4u << 20)

struct EthLinkFilter {
    NetFilterState parent_obj;
    EthLinkState *dev;          /* NULL until the device has it */
};

struct EthLinkState {
    DeviceState parent_obj;

    CharBackend chr;
    char *netdev;
    uint32_t node;

    EthLinkFilter *filter;
    FabricLink link;
    bool link_init;             /* link set up */
    bool acked;                 /* fabricd's HELLO_ACK came */
    bool nic_busy;              /* a frame waits in the NIC's queue */

    uint64_t tx_frames;         /* NIC -> fabricd */
    uint64_t tx_dropped;        /* not sent: no link, or not Ethernet */
    uint64_t rx_frames;         /* fabricd -> NIC */
    uint64_t rx_dropped;        /* beyond ETH_LINK_RX_HOLD_MAX, or no NIC */
    uint64_t host_dropped;      /* what the netdev sent toward the NIC */
};

/* ---- fabricd -> NIC ---- */

static EthLinkState *eth_link_of(NetClientState *netdev)
{
    NetFilterState *nf;

    QTAILQ_FOREACH(nf, &netdev->filters, next) {
        if (object_dynamic_cast(OBJECT(nf), TYPE_VCLUSTER_ETH_FILTER)) {
            return VCLUSTER_ETH_FILTER(nf)->dev;
        }
    }
    return NULL;
}

/* The NIC's queue delivered (or purged) the frame that waited in it. */
static void eth_link_rx_sent(NetClientState *netdev, ssize_t ret)
{
    EthLinkState *s = eth_link_of(netdev);

    if (s && s->nic_busy) {
        s->nic_busy = false;
        fabric_link_rx_resume(&s->link);
    }
}

static bool eth_link_can_rx(void *opaque)
{
    EthLinkState *s = opaque;

    /* past the bound, frames go on to eth_link_inject to be dropped */
    return !s->nic_busy || s->link.pending_bytes > ETH_LINK_RX_HOLD_MAX;
}

static void eth_link_inject(EthLinkState *s, const uint8_t *p, uint32_t len)
{
    NetFilterState *nf = NETFILTER(s->filter);
    NetClientState *nc = nf->netdev;
    struct iovec iov = { .iov_base = (void *)p, .iov_len = len };

    if (s->nic_busy || !nc->peer) {
        s->rx_dropped++;
        warn_report_once("vcluster-eth-link: node %u's NIC takes no frames; "
                         "beyond %u bytes waiting, frames are dropped",
                         s->node, ETH_LINK_RX_HOLD_MAX);
        return;
    }
    s->rx_frames++;
    if (QTAILQ_NEXT(nf, next)) {
        /* the filters after this one, then the NIC's queue, take it */
        qemu_netfilter_pass_to_next(nc, 0, &iov, 1, nf);
        return;
    }
    /*
     * As qemu_netfilter_pass_to_next() ends, but with a callback: a NIC
     * that cannot take the frame now keeps it in its queue and says when
     * it went in, so that nothing more is sent before.
     */
    if (!qemu_net_queue_send_iov(nc->peer->incoming_queue, nc, 0, &iov, 1,
                                 eth_link_rx_sent)) {
        s->nic_busy = true;
    }
}

static void eth_link_rx_control(EthLinkState *s, const uint8_t *p,
                                uint32_t len)
{
    char why[FABRIC_REASON_MAX + 1];
    FabricHelloAck ack;

    if (fabric_hello_ack_decode(p, len, 0, &ack)) {
        s->acked = true;
    } else if (fabric_reject_decode(p, len, why, sizeof(why))) {
        warn_report("vcluster-eth-link: fabric rejected node %u: %s",
                    s->node, why);
    }
}

static void eth_link_rx(void *opaque, const FabricHdr *h, const uint8_t *p)
{
    EthLinkState *s = opaque;

    switch (h->type) {
    case FABRIC_TYPE_DATA:
        if (h->len >= FABRIC_ETH_MIN_FRAME) {
            eth_link_inject(s, p, h->len);
        }
        break;
    case FABRIC_TYPE_CONTROL:
        eth_link_rx_control(s, p, h->len);
        break;
    default:
        break;
    }
}

static void eth_link_event(void *opaque, bool up)
{
    EthLinkState *s = opaque;
    uint8_t p[FABRIC_HELLO_MAX_LEN];

    s->acked = false;
    if (up) {
        fabric_link_send(&s->link, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, p,
                         fabric_hello_encode(s->node,
                                             fabric_link_hello_flags(&s->link),
                                             p));
    }
}

/* ---- NIC -> fabricd: the filter ---- */

static ssize_t eth_filter_receive_iov(NetFilterState *nf,
                                      NetClientState *sender, unsigned flags,
                                      const struct iovec *iov, int iovcnt,
                                      NetPacketSent *sent_cb)
{
    EthLinkState *s = VCLUSTER_ETH_FILTER(nf)->dev;
    size_t size = iov_size(iov, iovcnt);
    g_autofree uint8_t *buf = NULL;
    bool sent;

    if (!s) {
        return size;
    }
    if (sender == nf->netdev) {
        /* the netdev's side is cut off: the NIC hears only the fabric */
        s->host_dropped++;
        return size;
    }
    if (size < FABRIC_ETH_MIN_FRAME || size > FABRIC_ETH_MAX_FRAME) {
        s->tx_dropped++;
        return size;
    }
    if (iovcnt == 1) {
        sent = fabric_link_send(&s->link, FABRIC_TYPE_DATA, FABRIC_NODE_NONE,
                                iov[0].iov_base, size);
    } else {
        buf = g_malloc(size);
        iov_to_buf(iov, iovcnt, 0, buf, size);
        sent = fabric_link_send(&s->link, FABRIC_TYPE_DATA, FABRIC_NODE_NONE,
                                buf, size);
    }
    if (sent) {
        s->tx_frames++;
    } else {
        s->tx_dropped++;
    }
    return size;
}

static void eth_filter_setup(NetFilterState *nf, Error **errp)
{
    if (nf->direction != NET_FILTER_DIRECTION_ALL) {
        error_setg(errp, "vcluster-eth-link takes both directions "
                   "(queue=all)");
        return;
    }
    if (qemu_has_vnet_hdr(nf->netdev)) {
        error_setg(errp, "vcluster-eth-link: netdev '%s' passes virtio-net "
                   "headers; use -netdev hubport", nf->netdev_id);
    }
}

static void eth_filter_class_init(ObjectClass *oc, void *data)
{
    NetFilterClass *nfc = NETFILTER_CLASS(oc);

    nfc->setup = eth_filter_setup;
    nfc->receive_iov = eth_filter_receive_iov;
}

static const TypeInfo eth_filter_info = {
    .name = TYPE_VCLUSTER_ETH_FILTER,
    .parent = TYPE_NETFILTER,
    .class_init = eth_filter_class_init,
    .instance_size = sizeof(EthLinkFilter),
};

/* ---- the device ---- */

static void eth_link_realize(DeviceState *dev, Error **errp)
{
    EthLinkState *s = VCLUSTER_ETH_LINK(dev);
    Object *f;

    if (!icount_enabled()) {
        error_setg(errp, "vcluster-eth-link keeps its VM in lock-step: it "
                   "needs instruction counting (-icount shift=N,sleep=off)");
        return;
    }
    if (!s->netdev || !qemu_chr_fe_backend_connected(&s->chr)) {
        error_setg(errp, "vcluster-eth-link needs netdev= and chardev=");
        return;
    }
    if (s->node >= FABRIC_MAX_NODES) {
        error_setg(errp, "vcluster-eth-link: node %u is out of range; use "
                   "0..%d", s->node, FABRIC_MAX_NODES - 1);
        return;
    }
    f = object_new_with_props(TYPE_VCLUSTER_ETH_FILTER, OBJECT(dev),
                              "filter", errp, "netdev", s->netdev, NULL);
    if (!f) {
        return;
    }
    s->filter = VCLUSTER_ETH_FILTER(f);     /* the device's child */
    if (!fabric_link_init(&s->link, &s->chr, FABRIC_KIND_ETH, s->node, true,
                          eth_link_rx, eth_link_event, s, errp)) {
        object_unparent(f);
        s->filter = NULL;
        return;
    }
    fabric_link_set_can_rx(&s->link, eth_link_can_rx);
    s->link_init = true;
    s->filter->dev = s;
}

static void eth_link_unrealize(DeviceState *dev)
{
    EthLinkState *s = VCLUSTER_ETH_LINK(dev);
    NetFilterState *nf = NETFILTER(s->filter);

    /* a frame still in the NIC's queue must not call us back */
    s->nic_busy = false;
    s->filter->dev = NULL;
    if (nf->netdev->peer) {
        qemu_net_queue_purge(nf->netdev->peer->incoming_queue, nf->netdev);
    }
    fabric_link_cleanup(&s->link);
    s->link_init = false;
    object_unparent(OBJECT(s->filter));
    s->filter = NULL;
}

static bool eth_link_get_nic_busy(Object *obj, Error **errp)
{
    return VCLUSTER_ETH_LINK(obj)->nic_busy;
}

static void eth_link_get_rx_waiting(Object *obj, Visitor *v,
                                    const char *name, void *opaque,
                                    Error **errp)
{
    EthLinkState *s = VCLUSTER_ETH_LINK(obj);
    uint32_t n = s->link_init ? g_queue_get_length(&s->link.pending) : 0;

    visit_type_uint32(v, name, &n, errp);
}

static void eth_link_init(Object *obj)
{
    EthLinkState *s = VCLUSTER_ETH_LINK(obj);

    /* diagnosis: a frame waits in the NIC's queue; frames wait in the link */
    object_property_add_bool(obj, "nic-busy", eth_link_get_nic_busy, NULL);
    object_property_add(obj, "rx-waiting", "uint32", eth_link_get_rx_waiting,
                        NULL, NULL, NULL);

    object_property_add_uint64_ptr(obj, "tx-frames", &s->tx_frames,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "tx-dropped", &s->tx_dropped,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "rx-frames", &s->rx_frames,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "rx-dropped", &s->rx_dropped,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "host-dropped", &s->host_dropped,
                                   OBJ_PROP_FLAG_READ);
}

static Property eth_link_properties[] = {
    DEFINE_PROP_CHR("chardev", EthLinkState, chr),
    DEFINE_PROP_STRING("netdev", EthLinkState, netdev),
    DEFINE_PROP_UINT32("node", EthLinkState, node, 0),
    DEFINE_PROP_END_OF_LIST(),
};

static void eth_link_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);

    dc->desc = "vcluster: a NIC's netdev on the eth fabric in lock-step";
    dc->realize = eth_link_realize;
    dc->unrealize = eth_link_unrealize;
    /* no bus: made at start-up, beside its NIC */
    dc->hotpluggable = false;
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
    device_class_set_props(dc, eth_link_properties);
}

static const TypeInfo eth_link_info = {
    .name = TYPE_VCLUSTER_ETH_LINK,
    .parent = TYPE_DEVICE,
    .class_init = eth_link_class_init,
    .instance_init = eth_link_init,
    .instance_size = sizeof(EthLinkState),
};

static void eth_link_register_types(void)
{
    type_register_static(&eth_filter_info);
    type_register_static(&eth_link_info);
}

type_init(eth_link_register_types);
