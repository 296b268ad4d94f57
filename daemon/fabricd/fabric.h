/*
 * fabricd's core state: ports (one per node socket), directed links with
 * their counters and admin state, fault rules, delayed copies and capture.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_FABRIC_H
#define FABRICD_FABRIC_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "capture.h"
#include "delay.h"
#include "fault.h"
#include "kind.h"
#include "lockstep.h"

/*
 * Per-port output bound (docs/fabricd.md "Bounds"), in cost: a frame's
 * bytes plus FABRIC_FRAME_COST (framing.h).  Copies queued or held in
 * the delay line for a port count towards it.  A copy that does not fit
 * is dropped (congestion), except on kinds that must not drop
 * (telegraphos: Fabric.no_drop).
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

typedef struct PortCounters {
    uint64_t rx_frames, rx_bytes;
    uint64_t tx_frames, tx_bytes;
    uint64_t malformed;     /* frames skipped or streams closed as garbage */
    uint64_t rejected;      /* connections refused: port already in use */
    uint64_t connects;
    uint64_t overflows;     /* cut off: output over its bound, not read */
} PortCounters;

typedef struct Port {
    Fabric *fabric;
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
    size_t held_bytes;      /* copies for this port in the delay line */
    size_t held_frames;
    guint resume_idle;      /* frames read before a pause, run on resume */
    unsigned logged_malformed;
    bool closing;           /* input stopped; close once output is written */
    bool input_paused;      /* port_pause_input(): only hang-ups are watched */
    char *close_why;
    guint close_timer;
    PortCounters c;
} Port;

typedef struct LinkCounters {
    uint64_t frames, bytes;  /* delivered copies */
    uint64_t dropped;        /* by a drop rule */
    uint64_t down;           /* link administratively down, or a down rule */
    uint64_t corrupted, delayed, congested;
    uint64_t duplicated;     /* extra copies a duplicate rule made */
    uint64_t reordered;      /* copies a reorder rule let others overtake */
} LinkCounters;

typedef struct Link {
    LinkCounters c;
    bool admin_down;
    unsigned pending;        /* copies held in the delay line */
    uint64_t hold_until_ns;  /* due time of the newest held copy, without
                                its reorder time: later copies wait for it */
} Link;

/* The control socket's clients, for `counters` (control.c fills it). */
typedef struct ControlStats {
    unsigned clients;       /* connected now */
    unsigned idle_ms;       /* the idle timeout */
    uint64_t accepted;      /* connections taken */
    uint64_t refused;       /* refused: every slot busy and recently used */
    uint64_t idle_closed;   /* closed after idle_ms without traffic */
    uint64_t evicted;       /* closed, idle, to make room for a new client */
} ControlStats;

struct Fabric {
    const FabricKind *kind;
    void *kind_state;
    unsigned nodes;
    uint64_t seed;
    uint64_t start_ns;       /* fabric_now_ns() when it was created */
    char *dir;
    char *ctl_path;
    Port *ports;
    bool *connected;         /* connected[i] == (ports[i].fd >= 0) */
    Link *links;             /* nodes * nodes, indexed [from * nodes + to] */
    FaultRules *rules;
    DelayLine *delays;
    Capture *capture;
    guint capture_flush_timer;
    GArray *dests;           /* scratch for routing */
    size_t out_limit;        /* a port's bound in cost (FABRIC_OUT_LIMIT) */
    bool no_drop;            /* copies over out_limit cut the peer off
                                instead of being dropped (telegraphos) */
    bool shutting_down;      /* in fabric_free(): send nothing more */
    Lockstep *lockstep;      /* NULL: free-running (lockstep.h) */
    ControlStats ctl;
};

/* NULL (with err) if the kind refuses `opts`. */
Fabric *fabric_new(const FabricKind *kind, unsigned nodes, uint64_t seed,
                   const char *dir, const FabricKindOptions *opts,
                   GError **err);
/* Close everything and unlink the sockets fabric_listen() created. */
void fabric_free(Fabric *f);

static inline Link *fabric_link(Fabric *f, unsigned from, unsigned to)
{
    return &f->links[(size_t)from * f->nodes + to];
}

bool fabric_has_link(const Fabric *f, unsigned from, unsigned to);

/*
 * Route a frame received on `in_port` and send a copy to each destination,
 * or hand it to the kind's own ingress.  `why` is set unless INGRESS_OK.
 */
IngressStatus fabric_ingress(Fabric *f, unsigned in_port,
                             const uint8_t *frame, size_t len, char *why,
                             size_t why_len);

/*
 * Send one copy from node `from` to node `to` along the core's path: link
 * state, fault rules, delay line, output queue, capture and counters.
 * Kinds with their own ingress (myrinet) use it once they know `to`.
 */
void fabric_send_copy(Fabric *f, unsigned from, unsigned to, GBytes *frame);

/*
 * The device on `port` reset without disconnecting: copies held for it are
 * discarded and queued output not yet started is dropped.  Returns the
 * number of queued frames dropped.
 */
unsigned fabric_port_flush(Fabric *f, unsigned port);

/* Record a frame delivered to `to` if a capture is running. */
void fabric_capture_frame(Fabric *f, unsigned to, const uint8_t *data,
                          size_t len, bool corrupted, const char *comment);

/*
 * Lock-step with a capture: record a copy a fault dropped (rule: its id;
 * 0: a down link) in the trace.  Nothing otherwise.
 */
void fabric_trace_fault(Fabric *f, unsigned from, unsigned to,
                        const uint8_t *frame, size_t len, unsigned rule);

/* Links or fault rules changed: tell the kind (ps1 retries held packets). */
void fabric_config_changed(Fabric *f);

/* The host's monotonic clock (ns): the delay line's due times. */
uint64_t fabric_now_ns(void);
/*
 * The fabric's time, which the models and the fault rules (at=, until=)
 * see alike: free-running, ns since fabric_new() on the host's clock;
 * lock-step, the virtual time of the frame being routed.
 */
uint64_t fabric_time_ns(const Fabric *f);
/*
 * Make `f` lock-step (before it listens); false (err) if its kind has no
 * look-ahead (docs/lockstep.md).
 */
bool fabric_start_lockstep(Fabric *f, uint64_t quantum_ns, GError **err);

bool fabric_capture_start(Fabric *f, const char *path, GError **err);
/* Stop capturing; *frames gets the number of recorded copies. */
bool fabric_capture_stop(Fabric *f, uint64_t *frames, GError **err);

/* ports.c */
bool fabric_ports_listen(Fabric *f, GError **err);
/* The ports' lock-step stage, asking them what it needs (LockstepOps). */
Lockstep *fabric_ports_lockstep(Fabric *f, uint64_t lookahead_ns,
                                uint64_t quantum_ns);
void port_disconnect(Port *p, const char *why);
/* Route one whole frame from `p`; false once `p` is gone or closing. */
bool port_route_frame(Port *p, const uint8_t *frame, size_t len);
/* Stop reading; disconnect once the queued output (a REJECT) is written. */
void port_close_after_flush(Port *p, const char *why);
/* Queue one frame for output; false if it did not fit (congestion). */
bool port_send(Port *p, GBytes *frame);
/*
 * Queue a frame fabricd made itself: it may use FABRIC_OWN_RESERVE past
 * the limit.  If even that is full, the peer reads nothing: it is counted
 * as an overflow and closed.  False if the frame was not queued.
 */
bool port_send_own(Port *p, GBytes *frame);
/*
 * Queue a frame that was counted in the port's bound while lock-step held
 * it (lockstep.c, at a grant): it is queued whatever the bound says now.
 */
bool port_send_held(Port *p, GBytes *frame);
/* The port's output cost: queued and held copies, with their bookkeeping. */
size_t port_out_cost(const Port *p);
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
