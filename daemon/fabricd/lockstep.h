/*
 * Lock-step mode: fabricd keeps its fabric's virtual time (proto/sync.h,
 * docs/lockstep.md).
 *
 * Frames from the nodes are kept until every node has reported the end of
 * the round (SYNC); they are then routed in a fixed order (send time, node,
 * arrival), so the models, the fault rules and the output see the same
 * sequence on every run.  What they send waits for its delivery time: at a
 * grant, each node gets the frames due before the grant, then the grant.
 *
 * It is a stage of the ports (ports.c owns it): they hand it every frame
 * and every output, and it asks them, through LockstepOps, to route what
 * a round releases and to send what a grant lets go.  It knows nodes by
 * their port number only.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_LOCKSTEP_H
#define FABRICD_LOCKSTEP_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct Lockstep Lockstep;

/*
 * The most a node may send in one round (bytes, with FABRIC_FRAME_COST
 * per frame): beyond it the node is cut off (counted as an overflow).
 */
#define LOCKSTEP_ROUND_IN_MAX   (16u << 20)

/*
 * How far frames held for their delivery time may go past the port's
 * output bound: one node's largest round, every frame duplicated.  The
 * receiver could not read them sooner, so they are no sign of a stuck peer.
 */
#define LOCKSTEP_HELD_EXTRA     (2 * (size_t)LOCKSTEP_ROUND_IN_MAX)

typedef struct LockstepStats {
    uint64_t rounds;
    uint64_t grant_ns;          /* the newest grant */
    uint64_t frames_ordered;    /* frames routed at round ends */
    uint64_t lookahead_ns;
    uint64_t quantum_ns;
} LockstepStats;

/* The quantum of quiet rounds unless --lockstep-quantum says otherwise. */
#define LOCKSTEP_QUANTUM_DEFAULT_NS     1000000ull
#define LOCKSTEP_QUANTUM_MAX_NS         1000000000ull

/* What lock-step asks of its owner; `opaque` is the owner's. */
typedef struct LockstepOps {
    /* Route a frame from `port`; false once the port is gone or closing. */
    bool (*route)(void *opaque, unsigned port, const uint8_t *frame,
                  size_t len);
    /* Whether `port` has a peer that is not closing: its frames count. */
    bool (*live)(void *opaque, unsigned port);
    /* Queue output for `port` that was held, whatever the bound says now. */
    void (*send)(void *opaque, unsigned port, GBytes *frame);
    /*
     * A frame of `len` bytes for `port` went into (`in`) or out of the
     * hold: while held it counts towards the port's output bound.
     */
    void (*held)(void *opaque, unsigned port, size_t len, bool in);
    /* The port's output cost, held frames included (ports.h). */
    size_t (*out_cost)(void *opaque, unsigned port);
    /* The node broke lock-step: count it malformed, disconnect it. */
    void (*broken)(void *opaque, unsigned port, const char *why);
    /* Cut the node off (an overflow), once its output is written. */
    void (*cut_off)(void *opaque, unsigned port, const char *why);
} LockstepOps;

typedef struct LockstepSetup {
    unsigned nodes;
    const bool *connected;  /* connected[i]: port i has a peer (the owner's) */
    uint8_t kind;           /* FABRIC_KIND_* of the SYNC frames */
    /*
     * Frames carry nothing before them on the wire (header-framed kinds):
     * a grant and the frames due before it go as one buffer.
     */
    bool one_write;
    /* ≥ 1: no frame is delivered sooner after it was sent */
    uint64_t lookahead_ns;
    /*
     * The length of a round while no DATA frame was sent for a quantum
     * (raised to the look-ahead); 0: every round is a look-ahead, and
     * every frame arrives exactly when the fabric's model says.
     */
    uint64_t quantum_ns;
} LockstepSetup;

Lockstep *lockstep_new(const LockstepSetup *setup, const LockstepOps *ops,
                       void *opaque);
void lockstep_free(Lockstep *ls);

/*
 * A whole frame that the node on `port` sent (the ports hand every frame
 * here).  False once the port is gone or closing: read nothing more.
 */
bool lockstep_input(Lockstep *ls, unsigned port, const uint8_t *frame,
                    size_t len);
/* Whether output is held now (false while a grant is being sent). */
bool lockstep_holds_output(const Lockstep *ls);
/* A node that left the run cannot come back into it. */
bool lockstep_may_connect(const Lockstep *ls, unsigned port);
/*
 * Output for `port`: held until a grant passes its delivery time (at least
 * lookahead after the frame being routed).  False if it did not fit
 * `limit` + LOCKSTEP_HELD_EXTRA (the frame is not kept).
 */
bool lockstep_output(Lockstep *ls, unsigned port, GBytes *frame,
                     size_t limit);
/* The node on `port` left: the round no longer waits for it. */
void lockstep_port_down(Lockstep *ls, unsigned port);
/* The virtual time of what is being routed now. */
uint64_t lockstep_now(const Lockstep *ls);
/* `frame` (a new reference) with its delivery time set to `deliver_ns`. */
GBytes *lockstep_retime(GBytes *frame, uint64_t deliver_ns);
/* The delivery time of a header-framed `frame` once it is held. */
uint64_t lockstep_deliver_time(const Lockstep *ls, const uint8_t *frame,
                               size_t len);
void lockstep_stats(const Lockstep *ls, LockstepStats *st);

#endif
