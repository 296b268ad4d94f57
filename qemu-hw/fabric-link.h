/*
 * Fabric link client: connects a device model to fabricd over a chardev,
 * using the frames of proto/base.h.  In lock-step mode (lockstep.h) every
 * incoming frame waits for its delivery time on a virtual-clock timer.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCLUSTER_FABRIC_LINK_H
#define HW_VCLUSTER_FABRIC_LINK_H

#include "chardev/char-fe.h"
#include "qapi/error.h"
#include "qemu/timer.h"
#include "proto/base.h"

/* Called for every valid incoming frame; payload is hdr->len bytes. */
typedef void FabricLinkRxFn(void *opaque, const FabricHdr *hdr,
                            const uint8_t *payload);
/* Called when the connection to fabricd opens (up) or closes. */
typedef void FabricLinkEventFn(void *opaque, bool up);
/* May the device take more frames now?  False stops reading the socket. */
typedef bool FabricLinkCanRxFn(void *opaque);
/* Called when queued output went out; it may send again. */
typedef void FabricLinkTxDrainedFn(void *opaque);

typedef struct FabricLink {
    CharBackend *chr;
    uint8_t kind;
    uint16_t node;
    FabricLinkRxFn *rx;
    FabricLinkEventFn *event;
    FabricLinkCanRxFn *can_rx;  /* NULL: always */
    void *opaque;
    bool connected;
    /* Reassembly of the incoming byte stream. */
    uint8_t hdr_buf[FABRIC_HDR_LEN];
    FabricHdr hdr;
    uint32_t have;
    bool in_payload;
    uint8_t *payload;
    uint64_t malformed;
    /* Output that the socket did not take yet. */
    GByteArray *txq;
    uint32_t txq_head;          /* bytes of txq already written */
    uint64_t tx_dropped;        /* frames beyond FABRIC_LINK_TXQ_MAX */
    guint tx_watch;
    FabricLinkTxDrainedFn *tx_drained;
    GByteArray *tx_scratch;     /* one frame, reused */
    /* Lock-step: frames wait in `pending` until their delivery time. */
    bool lockstep;
    int64_t granted;            /* the newest grant from fabricd */
    int64_t report_grant;       /* the grant when the node last reported */
    GByteArray *ls_out;         /* this round's frames, sent with the report */
    GQueue pending;             /* FabricLinkFrame, by delivery time */
    uint64_t pending_bytes;
    uint64_t late;              /* frames that came after their time */
    QEMUTimer *deliver_timer;
} FabricLink;

/*
 * lockstep: lock-step mode (docs/lockstep.md): frames are handed to rx at
 * their delivery time, from a QEMU_CLOCK_VIRTUAL timer, and the VM's clock
 * waits for fabricd's grants.  It needs -icount: false (errp) without.
 */
bool fabric_link_init(FabricLink *l, CharBackend *chr, uint8_t kind,
                      uint16_t node, bool lockstep, FabricLinkRxFn *rx,
                      FabricLinkEventFn *event, void *opaque, Error **errp);
void fabric_link_cleanup(FabricLink *l);
/* The flags of this link's HELLO (FABRIC_HELLO_F_*). */
static inline uint8_t fabric_link_hello_flags(const FabricLink *l)
{
    return l->lockstep ? FABRIC_HELLO_F_LOCKSTEP : 0;
}
/* lockstep.c: report the node's time and next event (proto/sync.h). */
void fabric_link_sync_report(FabricLink *l, int64_t now, uint64_t next);
/*
 * lockstep.c: read and take frames until fabricd grants beyond the grant
 * the node reported at; false when the link is (or went) down.
 */
bool fabric_link_wait_grant(FabricLink *l);
/*
 * Back-pressure: while can_rx says no, the link reads nothing from the
 * socket, so fabricd's side fills up instead of QEMU's memory.  can_rx is
 * asked before each socket read of at most FABRIC_LINK_READ_MAX bytes,
 * which may complete several frames: a device takes that much beyond its
 * limit.  Call fabric_link_rx_resume() once it has room again.
 */
#define FABRIC_LINK_READ_MAX    4096
void fabric_link_set_can_rx(FabricLink *l, FabricLinkCanRxFn *can_rx);
void fabric_link_rx_resume(FabricLink *l);
/*
 * Sending never blocks: a frame goes to the socket as far as it takes it
 * and the rest waits, in order, in the link's output queue, which leaves
 * when the socket has room.  The queue holds at most FABRIC_LINK_TXQ_MAX
 * bytes (proto/base.h; its buffer at most twice that): a frame that would
 * go beyond is dropped and counted in tx_dropped, so a fabricd that stops
 * reading can neither stall a vCPU nor grow QEMU.  A device that must not
 * lose frames keeps its own output below that, with
 * fabric_link_tx_queued() and the tx_drained callback.  Every send
 * returns false when the frame was not sent (not connected, or dropped).
 */
/* Send one frame stamped with the current virtual time. */
bool fabric_link_send(FabricLink *l, uint8_t type, uint16_t dst,
                      const void *payload, uint32_t len);
/* The same with header flags (FABRIC_F_*). */
bool fabric_link_send_flags(FabricLink *l, uint8_t type, uint8_t flags,
                            uint16_t dst, const void *payload, uint32_t len);
/* The same with the payload in two parts (payload a, then payload b). */
bool fabric_link_try_send(FabricLink *l, uint8_t type, uint16_t dst,
                          const void *a, uint32_t alen,
                          const void *b, uint32_t blen);
/* Bytes waiting in the output queue. */
static inline uint32_t fabric_link_tx_queued(const FabricLink *l)
{
    return l->txq ? l->txq->len - l->txq_head : 0;
}
/* Called (from the main loop) each time queued output went out. */
void fabric_link_set_tx_drained(FabricLink *l, FabricLinkTxDrainedFn *fn);

#endif
