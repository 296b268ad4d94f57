/*
 * fabricd's core state: directed links with their counters and admin
 * state, fault rules, delayed copies and capture, above the node sockets
 * (ports.h), which hand it their frames through PortOps.
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
#include "ports.h"

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
    PortSet *portset;        /* the node sockets (ports.h) */
    Port *ports;             /* portset->port, one per node */
    Link *links;             /* nodes * nodes, indexed [from * nodes + to] */
    FaultRules *rules;
    DelayLine *delays;
    Capture *capture;
    guint capture_flush_timer;
    GArray *dests;           /* scratch for routing */
    size_t out_limit;        /* a port's bound in cost (FABRIC_OUT_LIMIT);
                                a kind may set it in its state_new(),
                                fabric_new() then gives it to the ports */
    bool no_drop;            /* copies over out_limit cut the peer off
                                instead of being dropped (telegraphos) */
    bool shutting_down;      /* in fabric_free(): send nothing more */
    Lockstep *lockstep;      /* NULL: free-running (lockstep.h); the
                                ports own it, the core reads its clock */
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

/* Start listening on every node's socket. */
bool fabric_ports_listen(Fabric *f, GError **err);

#endif
