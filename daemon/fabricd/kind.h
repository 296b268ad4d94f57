/*
 * A fabric kind is a small table of operations: how a port's byte stream is
 * framed, where a frame goes, and how the topology is described.  fabricd's
 * core (ports, links, faults, capture) is the same for every kind.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_KIND_H
#define FABRICD_KIND_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "framing.h"
#include "proto/base.h"

typedef struct Fabric Fabric;
typedef struct FaultRule FaultRule;

/* --hop-ns and --link-mbps limits: delivery stamps never overflow */
#define FABRIC_MAX_HOP_NS       1000000000ull
#define FABRIC_MAX_LINK_MBPS    1000000ull

/* Kind-specific command line options; each kind refuses what it lacks. */
typedef struct FabricKindOptions {
    const char *topology;   /* NULL: the kind's default */
    int64_t hop_ns;         /* -1: default */
    int64_t link_mbps;      /* -1: default */
    bool lockstep;          /* --lockstep: the kind's lockstep_kind */
} FabricKindOptions;

typedef struct FabricKind {
    const char *name;
    /* FABRIC_KIND_*, in frame headers; 0 for free-running eth (none). */
    uint8_t id;
    uint32_t pcap_linktype;
    /* Leading frame bytes that corrupt rules leave alone (a fabric header). */
    size_t corrupt_from;
    /*
     * Leading frame bytes a capture leaves out: eth in lock-step records
     * the Ethernet frame, not the fabric header in front of it.
     */
    size_t capture_from;
    /*
     * Optional: the kind that runs in its place when fabricd is lock-step
     * (FabricKindOptions.lockstep), for a kind whose framing differs
     * there: eth speaks the fabric header instead of QEMU's stream
     * framing (kind-eth.c).
     */
    const struct FabricKind *lockstep_kind;

    FrameStatus (*parse)(const uint8_t *buf, size_t avail, FrameSpan *span);
    /* Stream bytes written before a frame on output; returns their count. */
    size_t (*encode_prefix)(size_t frame_len, uint8_t *prefix);

    /*
     * `f` has its nodes, seed and ports set, nothing listening yet; the
     * topology has passed fabric_topology_check() (topology.h).
     */
    void *(*state_new)(Fabric *f, const FabricKindOptions *opts,
                       GError **err);
    void (*state_free)(void *state);
    /*
     * Append the destination ports (guint) of a frame that arrived on
     * `in_port`.  connected[i] says whether port i has a peer.  Used by
     * the core's switching path when `ingress` is NULL.
     */
    void (*route)(void *state, unsigned in_port, const uint8_t *frame,
                  size_t len, const bool *connected, unsigned nodes,
                  uint64_t now_ns, GArray *dests);
    /*
     * Optional: the kind takes every well-framed frame itself instead of
     * route() (ps1, myrinet and telegraphos model their networks).  The
     * kind layer (fabric_kind_ingress) answers frames of another kind and
     * HELLO first; ingress() gets the rest, with the header the kind
     * layer decoded (`frame` is the whole frame, `len` bytes, header
     * included).  On anything but INGRESS_OK, `why` says what happened,
     * for the log.
     */
    IngressStatus (*ingress)(void *state, unsigned in_port,
                             const FabricHdr *h, const uint8_t *frame,
                             size_t len, char *why, size_t why_len);
    /*
     * With ingress: the device on `port` said HELLO with its own node id.
     * The kind (re)starts that node, drops what is still queued for an
     * earlier device there, and fills the kind's HELLO_ACK fields; the
     * kind layer then sends the HELLO_ACK.
     */
    void (*hello)(void *state, unsigned port, FabricHelloAck *ack);
    /* Optional: the HELLO_ACK is queued; the node takes part from now. */
    void (*hello_done)(void *state, unsigned port);
    /* With ingress: a HELLO on `port` was refused; its node is unlinked. */
    void (*hello_refused)(void *state, unsigned port);
    void (*port_down)(void *state, unsigned port);

    bool (*has_link)(void *state, unsigned nodes, unsigned from, unsigned to);
    void (*describe_topology)(void *state, unsigned nodes, GString *out);
    /* Optional forwarding-table dump for `table`; NULL if the kind has none. */
    void (*dump_table)(void *state, uint64_t now_ns, GString *out);
    /* Optional lines for `status` (counters false) and `counters`. */
    void (*report)(void *state, GString *out, bool counters);
    /* Optional: links went up or down, or fault rules changed. */
    void (*config_changed)(void *state);
    /*
     * Optional: refuse (false, with err) a fault rule the kind cannot
     * apply, at `fault add`, `fault load` and --faults.
     */
    bool (*check_fault)(const FaultRule *r, GError **err);
    /*
     * Optional: bytes queued for `port` were written to its peer (its
     * Port.out_bytes shrank).  Kinds with back-pressure resume senders here.
     */
    void (*output_drained)(void *state, unsigned port);
    /*
     * Optional: the least time between a frame's send and its delivery
     * (one hop), the look-ahead of lock-step mode; NULL: the kind cannot
     * run lock-step.
     */
    uint64_t (*lookahead_ns)(void *state);
} FabricKind;

extern const FabricKind fabric_kind_eth;
extern const FabricKind fabric_kind_eth_lockstep;
extern const FabricKind fabric_kind_ps1;
extern const FabricKind fabric_kind_myrinet;
extern const FabricKind fabric_kind_telegraphos;

/* The implemented kind called `name` (fabric_kind_lookup()), or NULL. */
const FabricKind *fabric_kind_find(const char *name);

/*
 * The timing options of a kind that models its network (ps1, myrinet,
 * telegraphos): --hop-ns and --link-mbps are checked against the limits
 * and, when given, replace the kind's defaults in *hop_ns and *link_mbps.
 */
bool fabric_kind_timing(const FabricKindOptions *opts, uint64_t *hop_ns,
                        uint64_t *link_mbps, GError **err);

/*
 * Send a frame fabricd makes itself (a control answer, a NACK) to `port`,
 * counted in its tx counters.  False when the port is gone or cannot take
 * it: a device that reads nothing misses its answer.
 */
bool fabric_send_own(Fabric *f, unsigned port, const FabricHdr *h,
                     const uint8_t *payload);
/* For ingress(): put the message in `why`; returns INGRESS_MALFORMED. */
IngressStatus fabric_kind_malformed(char *why, size_t why_len,
                                    const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/*
 * A well-framed frame from `port` of a kind with ingress(): a frame of
 * another kind is malformed, or, if it is a HELLO, answered REJECT and
 * closed; a HELLO of this kind is checked (its length, the node id that
 * `port` stands for) and answered HELLO_ACK or REJECT, through the kind's
 * hello hooks; everything else goes to the kind's ingress().
 */
IngressStatus fabric_kind_ingress(Fabric *f, unsigned port,
                                  const uint8_t *frame, size_t len,
                                  char *why, size_t why_len);

/*
 * Framing shared by the header-framed kinds: a 32-byte fabric header and
 * its payload make one frame (span.offset 0, header included).  A bad
 * magic, version or length is fatal; other header errors skip the frame.
 */
FrameStatus fabric_hdr_frame_parse(const uint8_t *buf, size_t avail,
                                   FrameSpan *span);
/* Their encode_prefix: frames carry their own header, nothing goes first. */
size_t fabric_hdr_frame_prefix(size_t frame_len, uint8_t *prefix);

#endif
