/*
 * Fabric link client: frames between a device model and fabricd.
 *
 * Incoming bytes are reassembled into frames and handed to the device
 * through one callback, so that a virtual-clock timer can take over the
 * delivery in lock-step mode without changing the devices.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "fabric-link.h"

static void fabric_link_reset_rx(FabricLink *l)
{
    g_free(l->payload);
    l->payload = NULL;
    l->have = 0;
    l->in_payload = false;
}

static void fabric_link_frame_done(FabricLink *l)
{
    l->rx(l->opaque, &l->hdr, l->payload);
    fabric_link_reset_rx(l);
}

static int fabric_link_can_read(void *opaque)
{
    FabricLink *l = opaque;

    if (l->can_rx && !l->can_rx(l->opaque)) {
        return 0;
    }
    return FABRIC_LINK_READ_MAX;
}

static void fabric_link_read(void *opaque, const uint8_t *buf, int size)
{
    FabricLink *l = opaque;

    while (size > 0) {
        if (!l->in_payload) {
            uint32_t n = MIN((uint32_t)size, FABRIC_HDR_LEN - l->have);
            enum fabric_hdr_error e;

            memcpy(l->hdr_buf + l->have, buf, n);
            l->have += n;
            buf += n;
            size -= n;
            if (l->have < FABRIC_HDR_LEN) {
                return;
            }
            e = fabric_hdr_decode(l->hdr_buf, &l->hdr);
            if (e != FABRIC_HDR_OK && fabric_hdr_error_is_fatal(e)) {
                /* The stream cannot be resynchronised: drop the link. */
                l->malformed++;
                warn_report_once("fabric link: %s from fabricd; "
                                 "disconnecting", fabric_hdr_error_str(e));
                fabric_link_reset_rx(l);
                qemu_chr_fe_disconnect(l->chr);
                return;
            }
            if (e != FABRIC_HDR_OK || l->hdr.kind != l->kind) {
                l->malformed++;
                l->hdr.type = 0;    /* skip its payload */
            }
            l->in_payload = true;
            l->have = 0;
            l->payload = g_malloc(MAX(l->hdr.len, 1));
            if (l->hdr.len == 0) {
                if (l->hdr.type) {
                    fabric_link_frame_done(l);
                } else {
                    fabric_link_reset_rx(l);
                }
            }
            continue;
        }
        uint32_t n = MIN((uint32_t)size, l->hdr.len - l->have);
        memcpy(l->payload + l->have, buf, n);
        l->have += n;
        buf += n;
        size -= n;
        if (l->have == l->hdr.len) {
            if (l->hdr.type) {
                fabric_link_frame_done(l);
            } else {
                fabric_link_reset_rx(l);
            }
        }
    }
}

static void fabric_link_chr_event(void *opaque, QEMUChrEvent event)
{
    FabricLink *l = opaque;

    switch (event) {
    case CHR_EVENT_OPENED:
        fabric_link_reset_rx(l);
        l->connected = true;
        l->event(l->opaque, true);
        break;
    case CHR_EVENT_CLOSED:
        fabric_link_reset_rx(l);
        l->connected = false;
        l->event(l->opaque, false);
        break;
    default:
        break;
    }
}

void fabric_link_init(FabricLink *l, CharBackend *chr, uint8_t kind,
                      uint16_t node, FabricLinkRxFn *rx,
                      FabricLinkEventFn *event, void *opaque)
{
    memset(l, 0, sizeof(*l));
    l->chr = chr;
    l->kind = kind;
    l->node = node;
    l->rx = rx;
    l->event = event;
    l->opaque = opaque;
    qemu_chr_fe_set_handlers(chr, fabric_link_can_read, fabric_link_read,
                             fabric_link_chr_event, NULL, l, NULL, true);
}

void fabric_link_cleanup(FabricLink *l)
{
    qemu_chr_fe_set_handlers(l->chr, NULL, NULL, NULL, NULL, NULL, NULL,
                             true);
    fabric_link_reset_rx(l);
}

void fabric_link_set_can_rx(FabricLink *l, FabricLinkCanRxFn *can_rx)
{
    l->can_rx = can_rx;
}

void fabric_link_rx_resume(FabricLink *l)
{
    /* The chardev asks can_read again when the main loop next polls. */
    qemu_chr_fe_accept_input(l->chr);
}

void fabric_link_send(FabricLink *l, uint8_t type, uint16_t dst,
                      const void *payload, uint32_t len)
{
    fabric_link_send_flags(l, type, 0, dst, payload, len);
}

void fabric_link_send_flags(FabricLink *l, uint8_t type, uint8_t flags,
                            uint16_t dst, const void *payload, uint32_t len)
{
    FabricHdr h = {
        .kind = l->kind,
        .type = type,
        .flags = flags,
        .src = l->node,
        .dst = dst,
        .len = len,
        .send_time_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
    };
    g_autofree uint8_t *buf = g_malloc(FABRIC_HDR_LEN + len);

    if (!l->connected) {
        return;
    }
    fabric_hdr_encode(&h, buf);
    memcpy(buf + FABRIC_HDR_LEN, payload, len);
    if (qemu_chr_fe_write_all(l->chr, buf, FABRIC_HDR_LEN + len) < 0) {
        warn_report_once("fabric link: write to fabricd failed");
    }
}
