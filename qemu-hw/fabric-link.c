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
#include "qemu/units.h"
#include "chardev/char-socket.h"
#include "fabric-link.h"
#include "lockstep.h"
#include "proto/sync.h"

/*
 * Lock-step: a node's frames wait in ls_out and go to fabricd with its
 * report, in one write; beyond this they go at once, whole (fabricd
 * always reads a lock-step link).
 */
#define FABRIC_LINK_LS_OUT_MAX  (256 * KiB)

/* A frame waiting for its delivery time (lock-step). */
typedef struct FabricLinkFrame {
    FabricHdr hdr;
    uint8_t *payload;
} FabricLinkFrame;

static void fabric_link_frame_free(gpointer data)
{
    FabricLinkFrame *fr = data;

    g_free(fr->payload);
    g_free(fr);
}

static void fabric_link_reset_rx(FabricLink *l)
{
    g_free(l->payload);
    l->payload = NULL;
    l->have = 0;
    l->in_payload = false;
}

static void fabric_link_arm_delivery(FabricLink *l)
{
    FabricLinkFrame *head = g_queue_peek_head(&l->pending);

    if (head) {
        timer_mod(l->deliver_timer, head->hdr.deliver_time_ns);
    } else {
        timer_del(l->deliver_timer);
    }
}

/*
 * Lock-step: a grant moves the clock's limit; any other frame waits for
 * its delivery time, after the frames due no later (fabricd sends in its
 * fixed order, and frames due at the same time keep it).
 */
static void fabric_link_take_lockstep(FabricLink *l)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    FabricLinkFrame *fr;
    GList *after;

    if (l->hdr.type == FABRIC_TYPE_SYNC) {
        l->granted = MAX(l->granted, (int64_t)l->hdr.deliver_time_ns);
        fabric_link_reset_rx(l);
        return;
    }
    if ((int64_t)l->hdr.deliver_time_ns < now) {
        l->late++;
        warn_report_once("fabric link: a frame came after its delivery "
                         "time; delivered late (lock-step broken)");
        l->hdr.deliver_time_ns = now;
    }
    fr = g_new(FabricLinkFrame, 1);
    fr->hdr = l->hdr;
    fr->payload = l->payload;
    l->payload = NULL;
    fabric_link_reset_rx(l);
    for (after = l->pending.tail; after; after = after->prev) {
        FabricLinkFrame *o = after->data;

        if (o->hdr.deliver_time_ns <= fr->hdr.deliver_time_ns) {
            break;
        }
    }
    if (after) {
        g_queue_insert_after(&l->pending, after, fr);
    } else {
        g_queue_push_head(&l->pending, fr);
    }
    l->pending_bytes += fr->hdr.len;
    fabric_link_arm_delivery(l);
}

static bool fabric_link_start_lockstep(FabricLink *l, Error **errp);

/* Lock-step: hand over the frames that are due, in order. */
static void fabric_link_deliver_due(void *opaque)
{
    FabricLink *l = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    FabricLinkFrame *fr;

    while ((fr = g_queue_peek_head(&l->pending)) &&
           (int64_t)fr->hdr.deliver_time_ns <= now) {
        if (l->can_rx && !l->can_rx(l->opaque)) {
            return;     /* fabric_link_rx_resume() brings us back */
        }
        g_queue_pop_head(&l->pending);
        l->pending_bytes -= fr->hdr.len;
        l->rx(l->opaque, &fr->hdr, fr->payload);
        fabric_link_frame_free(fr);
    }
    fabric_link_arm_delivery(l);
}

static void fabric_link_frame_done(FabricLink *l)
{
    if (l->lockstep) {
        fabric_link_take_lockstep(l);
        return;
    }
    l->rx(l->opaque, &l->hdr, l->payload);
    fabric_link_reset_rx(l);
}

static int fabric_link_can_read(void *opaque)
{
    FabricLink *l = opaque;

    /* lock-step reads only while the clock waits for a grant */
    if (l->lockstep || (l->can_rx && !l->can_rx(l->opaque))) {
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

static void fabric_link_tx_clear(FabricLink *l)
{
    if (l->tx_watch) {
        g_source_remove(l->tx_watch);
        l->tx_watch = 0;
    }
    if (l->txq) {
        g_byte_array_set_size(l->txq, 0);
    }
    l->txq_head = 0;
    if (l->ls_out) {
        g_byte_array_set_size(l->ls_out, 0);
    }
}

/* Write what the socket takes of the output queue; true when it is empty. */
static bool fabric_link_tx_flush(FabricLink *l)
{
    while (fabric_link_tx_queued(l)) {
        int n = qemu_chr_fe_write(l->chr, l->txq->data + l->txq_head,
                                  MIN(fabric_link_tx_queued(l), 1u << 20));
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN) {
                warn_report_once("fabric link: write to fabricd failed");
                fabric_link_tx_clear(l);
                return true;
            }
            return false;
        }
        l->txq_head += n;
    }
    g_byte_array_set_size(l->txq, 0);
    l->txq_head = 0;
    return true;
}

static gboolean fabric_link_tx_ready(void *do_not_use, GIOCondition cond,
                                     void *opaque)
{
    FabricLink *l = opaque;
    bool empty = fabric_link_tx_flush(l);

    /*
     * This watch ends when the queue is empty; clear it before the device
     * hears of the room, so that what the device sends from tx_drained
     * gets a watch of its own.
     */
    if (empty) {
        l->tx_watch = 0;
    }
    if (l->tx_drained) {
        l->tx_drained(l->opaque);
    }
    if (empty) {
        return G_SOURCE_REMOVE;
    }
    /* Compact now and then, so that the queue does not only grow. */
    if (l->txq_head > l->txq->len / 2) {
        g_byte_array_remove_range(l->txq, 0, l->txq_head);
        l->txq_head = 0;
    }
    return G_SOURCE_CONTINUE;
}

/*
 * Lock-step: write the round's frames, waiting for the socket.  fabricd
 * acts on them only once the node has reported, so sending them together
 * with the report loses no time and saves a write per frame.
 */
static void fabric_link_ls_flush(FabricLink *l)
{
    GByteArray *out = l->ls_out;

    if (out && out->len &&
        qemu_chr_fe_write_all(l->chr, out->data, out->len) != (int)out->len) {
        warn_report_once("fabric link: write to fabricd failed");
    }
    if (out) {
        g_byte_array_set_size(out, 0);
    }
}

static void fabric_link_tx_watch(FabricLink *l)
{
    if (!l->tx_watch) {
        l->tx_watch = qemu_chr_fe_add_watch(l->chr, G_IO_OUT | G_IO_HUP,
                                            fabric_link_tx_ready, l);
    }
}

static void fabric_link_pending_clear(FabricLink *l)
{
    FabricLinkFrame *fr;

    while ((fr = g_queue_pop_head(&l->pending))) {
        fabric_link_frame_free(fr);
    }
    l->pending_bytes = 0;
    if (l->deliver_timer) {
        timer_del(l->deliver_timer);
    }
}

static void fabric_link_chr_event(void *opaque, QEMUChrEvent event)
{
    FabricLink *l = opaque;

    switch (event) {
    case CHR_EVENT_OPENED:
        fabric_link_reset_rx(l);
        fabric_link_tx_clear(l);
        fabric_link_pending_clear(l);
        l->connected = true;
        l->event(l->opaque, true);
        break;
    case CHR_EVENT_CLOSED:
        fabric_link_reset_rx(l);
        fabric_link_tx_clear(l);
        fabric_link_pending_clear(l);
        l->connected = false;
        l->event(l->opaque, false);
        break;
    default:
        break;
    }
}

bool fabric_link_init(FabricLink *l, CharBackend *chr, uint8_t kind,
                      uint16_t node, bool lockstep, FabricLinkRxFn *rx,
                      FabricLinkEventFn *event, void *opaque, Error **errp)
{
    memset(l, 0, sizeof(*l));
    l->chr = chr;
    l->kind = kind;
    l->node = node;
    l->rx = rx;
    l->event = event;
    l->opaque = opaque;
    /*
     * Before the handlers: a connected chardev says OPENED at once, and
     * the HELLO sent then carries the lock-step flag.
     */
    if (lockstep && !fabric_link_start_lockstep(l, errp)) {
        return false;
    }
    qemu_chr_fe_set_handlers(chr, fabric_link_can_read, fabric_link_read,
                             fabric_link_chr_event, NULL, l, NULL, true);
    return true;
}

void fabric_link_cleanup(FabricLink *l)
{
    qemu_chr_fe_set_handlers(l->chr, NULL, NULL, NULL, NULL, NULL, NULL,
                             true);
    fabric_link_reset_rx(l);
    fabric_link_tx_clear(l);
    if (l->lockstep) {
        lockstep_remove_link(l);
        fabric_link_pending_clear(l);
        timer_free(l->deliver_timer);
        l->deliver_timer = NULL;
    }
    if (l->txq) {
        g_byte_array_unref(l->txq);
        l->txq = NULL;
    }
    if (l->tx_scratch) {
        g_byte_array_unref(l->tx_scratch);
        l->tx_scratch = NULL;
    }
    if (l->ls_out) {
        g_byte_array_unref(l->ls_out);
        l->ls_out = NULL;
    }
}

void fabric_link_set_tx_drained(FabricLink *l, FabricLinkTxDrainedFn *fn)
{
    l->tx_drained = fn;
}

/*
 * Every send: the frame goes to the socket as far as it takes it, the rest
 * waits in the output queue.  Nothing here blocks, so a stalled fabricd
 * cannot stop a vCPU that holds the big lock; the queue's bound keeps such
 * a fabricd from growing QEMU's memory instead.
 */
static bool fabric_link_queue(FabricLink *l, uint8_t type, uint8_t flags,
                              uint16_t dst, const void *a, uint32_t alen,
                              const void *b, uint32_t blen)
{
    FabricHdr h = {
        .kind = l->kind,
        .type = type,
        .flags = flags,
        .src = l->node,
        .dst = dst,
        .len = alen + blen,
        .send_time_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
    };
    uint32_t frame_len = FABRIC_HDR_LEN + alen + blen;
    uint8_t hdr[FABRIC_HDR_LEN];
    GByteArray *f;
    int n = 0;

    if (!l->connected) {
        return false;
    }
    fabric_hdr_encode(&h, hdr);
    /* lock-step loses nothing: the frame goes with the node's report */
    if (l->lockstep) {
        g_byte_array_append(l->ls_out, hdr, FABRIC_HDR_LEN);
        g_byte_array_append(l->ls_out, a, alen);
        if (blen) {
            g_byte_array_append(l->ls_out, b, blen);
        }
        if (l->ls_out->len >= FABRIC_LINK_LS_OUT_MAX) {
            fabric_link_ls_flush(l);
        }
        return true;
    }
    if (fabric_link_tx_queued(l) + frame_len > FABRIC_LINK_TXQ_MAX) {
        l->tx_dropped++;
        warn_report_once("fabric link: fabricd takes no more output; frames "
                         "beyond %u queued bytes are dropped",
                         FABRIC_LINK_TXQ_MAX);
        return false;
    }
    if (!l->txq) {
        l->txq = g_byte_array_new();
        l->tx_scratch = g_byte_array_new();
    }
    /* Behind queued output the frame must wait its turn. */
    f = fabric_link_tx_queued(l) ? l->txq : l->tx_scratch;
    if (f == l->txq && l->txq_head > l->txq->len / 2) {
        g_byte_array_remove_range(l->txq, 0, l->txq_head);
        l->txq_head = 0;
    }
    g_byte_array_append(f, hdr, FABRIC_HDR_LEN);
    g_byte_array_append(f, a, alen);
    if (blen) {
        g_byte_array_append(f, b, blen);
    }
    if (f == l->txq) {
        return true;
    }
    n = qemu_chr_fe_write(l->chr, f->data, f->len);
    if (n < 0 && errno != EAGAIN) {
        warn_report_once("fabric link: write to fabricd failed");
        n = f->len;
    }
    n = MAX(n, 0);
    if ((uint32_t)n < f->len) {
        g_byte_array_append(l->txq, f->data + n, f->len - n);
        fabric_link_tx_watch(l);
    }
    g_byte_array_set_size(f, 0);
    return true;
}

bool fabric_link_try_send(FabricLink *l, uint8_t type, uint16_t dst,
                          const void *a, uint32_t alen,
                          const void *b, uint32_t blen)
{
    return fabric_link_queue(l, type, 0, dst, a, alen, b, blen);
}

void fabric_link_set_can_rx(FabricLink *l, FabricLinkCanRxFn *can_rx)
{
    l->can_rx = can_rx;
}

void fabric_link_rx_resume(FabricLink *l)
{
    if (l->lockstep) {
        if (!g_queue_is_empty(&l->pending)) {
            timer_mod(l->deliver_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
        }
        return;
    }
    /* The chardev asks can_read again when the main loop next polls. */
    qemu_chr_fe_accept_input(l->chr);
}

bool fabric_link_send(FabricLink *l, uint8_t type, uint16_t dst,
                      const void *payload, uint32_t len)
{
    return fabric_link_queue(l, type, 0, dst, payload, len, NULL, 0);
}

bool fabric_link_send_flags(FabricLink *l, uint8_t type, uint8_t flags,
                            uint16_t dst, const void *payload, uint32_t len)
{
    return fabric_link_queue(l, type, flags, dst, payload, len, NULL, 0);
}

static bool fabric_link_start_lockstep(FabricLink *l, Error **errp)
{
    if (!lockstep_add_link(l, errp)) {
        return false;
    }
    l->lockstep = true;
    l->granted = -1;
    l->ls_out = g_byte_array_new();
    g_queue_init(&l->pending);
    l->deliver_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                    fabric_link_deliver_due, l);
    return true;
}

void fabric_link_sync_report(FabricLink *l, int64_t now, uint64_t next)
{
    uint8_t pl[FABRIC_SYNC_REPORT_LEN];

    if (!l->connected) {
        return;
    }
    l->report_grant = l->granted;
    fabric_link_queue(l, FABRIC_TYPE_SYNC, 0, FABRIC_NODE_NONE, pl,
                      fabric_sync_report_encode(next, pl), NULL, 0);
    fabric_link_ls_flush(l);
}

/* The socket of a connected socket chardev, else -1. */
static int fabric_link_socket_fd(FabricLink *l)
{
    Chardev *chr = qemu_chr_fe_get_driver(l->chr);
    SocketChardev *s;

    if (!chr || !object_dynamic_cast(OBJECT(chr), TYPE_CHARDEV_SOCKET)) {
        return -1;
    }
    s = SOCKET_CHARDEV(chr);
    if (s->state != TCP_CHARDEV_STATE_CONNECTED || !s->sioc) {
        return -1;
    }
    return s->sioc->fd;
}

bool fabric_link_wait_grant(FabricLink *l)
{
    uint8_t buf[FABRIC_LINK_READ_MAX];
    int fd = fabric_link_socket_fd(l);

    /*
     * On a socket, wait with g_poll() and take whatever has come: the
     * chardev's blocking read switches the socket to blocking and back
     * (four fcntl calls a read) and would read a frame in two.  Bytes
     * past the grant are frames like any other; fabricd sends nothing
     * more before the next report anyway.
     */
    while (fd >= 0 && l->connected && l->granted <= l->report_grant) {
        GPollFD pfd = { .fd = fd, .events = G_IO_IN };
        ssize_t n;

        if (g_poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) {
            fabric_link_read(l, buf, n);
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            break;  /* closed or failed: the chardev's read finds out */
        }
    }
    while (l->connected && l->granted <= l->report_grant) {
        uint32_t want = l->in_payload ? l->hdr.len - l->have
                                      : FABRIC_HDR_LEN - l->have;
        int n = qemu_chr_fe_read_all(l->chr, buf, MIN(want, sizeof(buf)));

        if (n <= 0) {
            break;      /* closed: the chardev tells us (CHR_EVENT_CLOSED) */
        }
        fabric_link_read(l, buf, n);
    }
    return l->connected;
}
