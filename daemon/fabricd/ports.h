/*
 * fabricd's transport: one listening socket per node, at most one peer on
 * each, input framing, bounded output queues and back-pressure.
 *
 * The ports know nothing of links, kinds or models.  Their owner
 * (fabric.c) gives them the framing and takes each well-framed frame, a
 * peer's departure and drained output through PortOps.  In lock-step the
 * ports own the lock-step stage (lockstep.h): input goes through it, and
 * output waits in it for its grant.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_PORTS_H
#define FABRICD_PORTS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "framing.h"
#include "lockstep.h"

/*
 * Per-port output bound (docs/fabricd.md "Bounds"), in cost: a frame's
 * bytes plus FABRIC_FRAME_COST (framing.h).  Copies queued or held (in
 * the delay line, or by lock-step) for a port count towards it.  A copy
 * that does not fit is dropped (congestion), except on kinds that must
 * not drop (telegraphos: Fabric.no_drop).
 */
#define FABRIC_OUT_LIMIT        (4u * 1024 * 1024)
/*
 * fabricd's own frames (HELLO_ACK, REJECT, NACK, PEER_RESET, ps1 CREDIT...)
 * may go this far past the limit, so a control answer is never lost to
 * copies; a peer whose queue is full even then reads nothing: it is cut off.
 */
#define FABRIC_OWN_RESERVE      (64u * 1024)
/* Received bytes kept per port: a read, and a partial frame before it. */
#define FABRIC_IN_MAX           (256u * 1024)

typedef struct PortSet PortSet;

typedef struct PortCounters {
    uint64_t rx_frames, rx_bytes;
    uint64_t tx_frames, tx_bytes;
    uint64_t malformed;     /* frames skipped or streams closed as garbage */
    uint64_t rejected;      /* connections refused: port already in use */
    uint64_t connects;
    uint64_t overflows;     /* cut off: output over its bound, not read */
} PortCounters;

typedef struct Port {
    PortSet *set;
    unsigned id;
    char *path;
    int listen_fd;
    guint listen_watch;
    int fd;                 /* -1 while nobody is connected */
    guint in_watch;
    guint out_watch;        /* armed only while output is blocked */
    unsigned generation;    /* bumped on every connect */
    unsigned epoch;         /* bumped on connect and device reset: held
                               copies of an older epoch are discarded */
    GByteArray *in;         /* received bytes not yet framed */
    GQueue out;             /* OutItem, oldest first */
    size_t out_bytes;       /* bytes queued in `out`, prefixes included */
    size_t out_frames;      /* frames queued in `out` */
    size_t held_bytes;      /* copies for this port held (port_count_held) */
    size_t held_frames;
    guint resume_idle;      /* frames read before a pause, run on resume */
    unsigned logged_malformed;
    bool closing;           /* input stopped; close once output is written */
    bool input_paused;      /* port_pause_input(): only hang-ups are watched */
    char *close_why;
    guint close_timer;
    PortCounters c;
} Port;

/* What the ports' owner gives them; `opaque` is the owner's. */
typedef struct PortOps {
    /* The byte stream's framing (a kind's parse and encode_prefix). */
    FrameStatus (*parse)(const uint8_t *buf, size_t avail, FrameSpan *span);
    size_t (*encode_prefix)(size_t frame_len, uint8_t *prefix);
    /*
     * A well-framed frame from `port`: route it.  On anything but
     * INGRESS_OK, `why` says what happened, for the log.
     */
    IngressStatus (*frame)(void *opaque, unsigned port, const uint8_t *frame,
                           size_t len, char *why, size_t why_len);
    /* The peer on `port` is gone; its queued output is dropped. */
    void (*disconnected)(void *opaque, unsigned port);
    /* Bytes queued for `port` were written to its peer. */
    void (*drained)(void *opaque, unsigned port);
} PortOps;

struct PortSet {
    Port *port;             /* `count` of them, one per node */
    bool *connected;        /* connected[i] == (port[i].fd >= 0) */
    unsigned count;
    size_t out_limit;       /* a port's bound in cost (FABRIC_OUT_LIMIT) */
    Lockstep *lockstep;     /* NULL: free-running; the ports own it */
    PortOps ops;
    void *opaque;
};

/* Ports dir/node<i>.sock for `count` nodes, not listening yet. */
PortSet *port_set_new(unsigned count, const char *dir, const PortOps *ops,
                      void *opaque);
bool port_set_listen(PortSet *set, GError **err);
/*
 * Put the lock-step stage between the ports and their owner (before they
 * listen).  `kind` and `one_write` as in LockstepSetup.
 */
Lockstep *port_set_start_lockstep(PortSet *set, uint8_t kind,
                                  bool one_write, uint64_t lookahead_ns,
                                  uint64_t quantum_ns);
/*
 * Free the lock-step stage (what it holds is dropped), disconnect every
 * peer without a log line, close and unlink the sockets.
 */
void port_set_close(PortSet *set);
void port_set_free(PortSet *set);

void port_disconnect(Port *p, const char *why);
/* Queue one frame for output; false if it did not fit (congestion). */
bool port_send(Port *p, GBytes *frame);
/*
 * Queue a frame fabricd made itself: it may use FABRIC_OWN_RESERVE past
 * the limit.  If even that is full, the peer reads nothing: it is counted
 * as an overflow and closed.  False if the frame was not queued.
 */
bool port_send_own(Port *p, GBytes *frame);
/* The port's output cost: queued and held copies, with their bookkeeping. */
size_t port_out_cost(const Port *p);
/*
 * A copy of `len` bytes for `p` went into (`held`) or out of a hold (the
 * delay line, lock-step): while held it counts towards the port's bound.
 */
void port_count_held(Port *p, size_t len, bool held);
/* Cut the peer off for `why`: counted as an overflow, closed in a second. */
void port_cut_off(Port *p, const char *why);
/* port_cut_off() because its output queue is full: `what` was not queued. */
void port_overflow(Port *p, const char *what);
/* Drop queued frames not yet partly written; returns how many. */
unsigned port_drop_queued(Port *p);
/*
 * Stop (or resume) reading the peer's frames, for a kind's back-pressure.
 * Frames already read are still routed; output and the other ports go on.
 * A peer that hangs up while paused is disconnected.  A new connection
 * starts unpaused.
 */
void port_pause_input(Port *p, bool paused);

#endif
