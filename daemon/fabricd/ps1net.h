/*
 * The ps1 network model: the network processors of a ParaStation ring or
 * torus (docs/hw/parastation.md, docs/fabricd.md "The ps1 kind").
 *
 * Each node has three input channels (x-in and y-in from the neighbours,
 * host-in from its own board) and an output to its host that is limited by
 * the credit the device returns.  Packets move whole (virtual cut-through)
 * under the paper's deadlock-free rules and are never dropped for lack of
 * space: they wait.  The module is pure: it is fed wire frames and a
 * time, and it emits wire frames and asks about link crossings through
 * callbacks, so it can be tested without sockets.  Free-running, the time
 * is fabricd's clock and a delayed packet waits on its cable until the
 * model is kicked after its due time; in lock-step (Ps1Config.lockstep) it
 * is virtual time, and a delay is added to the packet's delivery stamp.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_PS1NET_H
#define FABRICD_PS1NET_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/ps1.h"
#include "vcluster/fabric/topology.h"

#define PS1_DEFAULT_HOP_NS      250
#define PS1_DEFAULT_LINK_MBPS   20      /* megabytes per second */
/* A barrier release reaches the nodes this long after the last arrival. */
#define PS1_BARRIER_NS          1000
/* x-in and y-in: a 1 KiB FIFO holds two packets of the maximum size. */
#define PS1_CHANNEL_PACKETS     2
/* Packets host-in accepts beyond its one when a device ignores credits. */
#define PS1_HOST_IN_SLACK       4

typedef struct Ps1Config {
    unsigned nodes;
    bool torus;
    unsigned width, height;     /* torus; a ring is width = nodes, height 1 */
    uint64_t hop_ns;            /* routing delay per link crossed */
    uint64_t link_mbps;         /* link rate, megabytes per second */
    /*
     * Lock-step: cable delays (and waits for down windows to end) add
     * virtual time to the packet's stamp instead of holding it on the
     * cable, since nothing wakes the model at a virtual time.
     */
    bool lockstep;
} Ps1Config;

/*
 * Fill `cfg` for the shape fabric_ps1_shape() reads from `topology` (a
 * dimension of 1 has no links); hop and link rate get their defaults.
 */
bool ps1_config_init(Ps1Config *cfg, unsigned nodes, const char *topology,
                     GError **err);

/* Unidirectional links: node -> next x, node -> next y (torus only). */
unsigned ps1_next_x(const Ps1Config *cfg, unsigned node);
unsigned ps1_next_y(const Ps1Config *cfg, unsigned node);
bool ps1_has_link(const Ps1Config *cfg, unsigned from, unsigned to);
/* Dimension-ordered (x, then y) route from `node` towards `dst`. */
uint8_t ps1_default_route(const Ps1Config *cfg, unsigned node, unsigned dst);
/* Links crossed by the default route from `src` to `dst`. */
unsigned ps1_default_hops(const Ps1Config *cfg, unsigned src, unsigned dst);
/* "ring of 4 nodes (links i>i+1 mod 4)" or the torus equivalent. */
void ps1_describe_topology(const Ps1Config *cfg, GString *out);
/* Delivery stamp offset: hops * hop_ns + the packet's bytes at link rate. */
uint64_t ps1_latency_ns(const Ps1Config *cfg, unsigned hops, unsigned words);

typedef enum Ps1Cross {
    PS1_CROSS_PASS,     /* the packet crosses (maybe corrupted or delayed) */
    PS1_CROSS_DROP,     /* a fault rule dropped it */
    PS1_CROSS_HOLD,     /* the link is down: the packet waits */
} Ps1Cross;

/* One link crossing, as the cross callback sees it. */
typedef struct Ps1Crossing {
    uint64_t time_ns;   /* in: the packet's time at the cable */
    bool retry;         /* in: it was held at this cable before */
    bool corrupted;     /* out: the callback flipped payload bits */
    uint64_t delay_ns;  /* out: it arrives this much later */
    uint64_t wait_ns;   /* out, lock-step: of delay_ns, the wait for a down
                           window to end before it left (counted as held;
                           from host-in, its insertion credit comes later) */
} Ps1Crossing;

/* One frame for a device: a 32-byte fabric header and its payload. */
typedef struct Ps1Emit {
    unsigned node;
    const uint8_t *frame;
    size_t len;
    uint8_t type;           /* FABRIC_TYPE_* */
    bool capture;           /* DATA deliveries and barrier releases */
    bool corrupted;         /* a fault rule flipped bits on the way */
    int from;               /* DATA: the source node; otherwise -1 */
    unsigned hops;          /* DATA: links crossed */
} Ps1Emit;

typedef struct Ps1Ops {
    /*
     * Queue a frame for `e->node`.  False if the node cannot take it (not
     * connected); a DATA packet then stays in the network.  Must not call
     * back into ps1net except ps1net_port_down().
     */
    bool (*emit)(void *opaque, const Ps1Emit *e);
    /*
     * A packet is about to cross the link from>to.  The callback may flip
     * bits of the payload and set the outputs of `x`.  Free-running, a
     * delayed packet then stays in the next node's channel (in flight)
     * until delay_ns after the model's time, and the caller must call
     * ps1net_kick() once it is due; in lock-step it moves on at once, its
     * stamp delay_ns later.  NULL: every crossing passes.
     */
    Ps1Cross (*cross)(void *opaque, unsigned from, unsigned to,
                      uint8_t *payload, size_t len, Ps1Crossing *x);
} Ps1Ops;

typedef enum Ps1Input {
    PS1_IN_OK,
    PS1_IN_MALFORMED,   /* counted and dropped; the connection stays */
    PS1_IN_REJECTED,    /* a REJECT was sent; the connection stays */
} Ps1Input;

typedef struct Ps1NodeCounters {
    uint64_t accepted;          /* DATA frames taken from the device */
    uint64_t inserted;          /* packets that left host-in */
    uint64_t delivered;         /* DATA frames delivered to the device */
    uint64_t held;              /* packets that had to wait at this node */
    uint64_t unroutable;        /* packets that met an invalid route here */
    uint64_t dropped;           /* packets a fault rule dropped leaving here */
    uint64_t overrun;           /* DATA sent without an insertion credit */
    uint64_t credit_excess;     /* CREDIT beyond the RX FIFO size */
    uint64_t barrier_ignored;   /* arrivals at lines not in the mask */
    uint64_t routes_rejected;
} Ps1NodeCounters;

typedef struct Ps1NodeInfo {
    bool linked;                /* HELLO accepted, connection up */
    bool table_loaded;          /* ROUTES received; else the default table */
    unsigned credit;            /* RX FIFO bytes the fabric may still fill */
    unsigned dev_credit;        /* insertion credits the device holds */
    unsigned x_in, y_in, host_in;   /* packets in each channel */
    unsigned in_flight;         /* of those, still crossing a delayed link */
    unsigned unroutable_now;    /* channel heads stuck on an invalid route */
    uint8_t barrier_mask, barrier_arrived;
    Ps1NodeCounters c;
} Ps1NodeInfo;

typedef struct Ps1Net Ps1Net;

Ps1Net *ps1net_new(const Ps1Config *cfg, const Ps1Ops *ops, void *opaque);
void ps1net_free(Ps1Net *n);
const Ps1Config *ps1net_config(const Ps1Net *n);

/*
 * The device on `node` said HELLO and the kind layer accepted it: the
 * board starts empty, with the default table and full credit.  Fills the
 * HELLO_ACK's torus width and height (0 and 0 for a ring).  Call
 * ps1net_hello_done() once the HELLO_ACK is queued: the node then takes
 * part in routing and barriers.
 */
void ps1net_hello(Ps1Net *n, unsigned node, FabricHelloAck *ack);
void ps1net_hello_done(Ps1Net *n, unsigned node, uint64_t now_ns);
/*
 * One frame (header and payload, already framed) from `node`'s device,
 * other than HELLO.
 * On anything but PS1_IN_OK, `why` says what was wrong.  `now_ns` is the
 * fabric's time (fabric_time_ns()), used for link delays only.
 */
Ps1Input ps1net_input(Ps1Net *n, unsigned node, const uint8_t *frame,
                      size_t len, uint64_t now_ns, char *why,
                      size_t why_len);
/* The node's connection is gone: no host, no credit, out of barriers. */
void ps1net_port_down(Ps1Net *n, unsigned node, uint64_t now_ns);
/* Links, fault rules or the clock changed: try every waiting packet. */
void ps1net_kick(Ps1Net *n, uint64_t now_ns);

/* The route byte `node` uses towards `dst` (loaded or default). */
uint8_t ps1net_route(const Ps1Net *n, unsigned node, unsigned dst);
void ps1net_node_info(const Ps1Net *n, unsigned node, Ps1NodeInfo *info);
/* Packets in any channel of any node. */
unsigned ps1net_in_network(const Ps1Net *n);
uint64_t ps1net_barrier_completions(const Ps1Net *n, unsigned line);

/* Text for `status` (counters false) or `counters` (one record a line). */
void ps1net_report(const Ps1Net *n, GString *out, bool counters);
/* `table`: each node's routing table as one digit per destination. */
void ps1net_dump_tables(const Ps1Net *n, GString *out);

#endif
