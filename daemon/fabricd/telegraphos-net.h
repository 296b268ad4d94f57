/*
 * The telegraphos network model: one crossbar, node i on port i
 * (docs/fabricd.md "The telegraphos kind").
 *
 * It keeps what the crossbar knows about each node (linked, restarts,
 * counters), the multicast groups, and the back-pressure accounting: which
 * senders a congested destination holds.  It checks a device's DATA and
 * JOIN/LEAVE frames and stamps delivery times.  The module is pure: it sends
 * nothing and reads no queue; the caller tells it how many bytes wait for a
 * node, and it asks the caller to pause or resume a node's input through a
 * callback, so it can be tested without sockets.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_TELEGRAPHOS_NET_H
#define FABRICD_TELEGRAPHOS_NET_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/telegraphos.h"

#define TGR_DEFAULT_HOP_NS      250
#define TGR_DEFAULT_LINK_MBPS   100
#define TGR_PAUSE_ABOVE         (1024 * 1024)
#define TGR_RESUME_BELOW        (256 * 1024)
/* The largest body after the TGR header: a READ_REP of a whole chunk. */
#define TGR_MAX_BODY            (FABRIC_TGR_REP_HDR_LEN + FABRIC_TGR_MAX_DATA)

typedef struct TgrConfig {
    unsigned nodes;
    uint64_t hop_ns;            /* delay of the crossbar */
    uint64_t link_mbps;         /* link rate, megabytes per second */
} TgrConfig;

/* What the crossbar knows about one node; the caller may read it. */
typedef struct TgrNode {
    bool linked;            /* HELLO accepted on the current connection */
    bool ever_linked;       /* a later HELLO is a restart: PEER_RESET */
    unsigned logged;        /* refusals logged on this connection */
    unsigned paused_by;     /* congested destinations holding its input */
    GArray *stalled;        /* as a destination: senders paused for it */
    uint64_t frames, bytes; /* DATA taken from it */
    uint64_t mcast;         /* of those, MCAST_WRITEs */
    uint64_t mcast_copies;  /* copies of its MCAST_WRITEs sent on */
    uint64_t unreachable;   /* its frames to a node not linked */
    uint64_t nacks;         /* NACK UNREACHABLE frames sent back to it */
    uint64_t pauses;        /* times its input was paused */
    uint64_t resets;        /* HELLOs after the first one */
    uint64_t flushed;       /* frames for it that a restart threw away */
} TgrNode;

typedef struct TgrOps {
    /* Stop (true) or resume (false) reading `node`'s input. */
    void (*pause_input)(void *opaque, unsigned node, bool pause);
} TgrOps;

typedef enum TgrData {
    TGR_DATA_MALFORMED,     /* `why` says what was wrong; nothing counted */
    TGR_DATA_UNICAST,       /* to h->dst, which is linked */
    TGR_DATA_UNREACHABLE,   /* to a node that is not there or not linked */
    TGR_DATA_MCAST,         /* MCAST_WRITE to *group */
} TgrData;

typedef struct TgrNet TgrNet;

TgrNet *tgrnet_new(const TgrConfig *cfg, const TgrOps *ops, void *opaque);
void tgrnet_free(TgrNet *n);
const TgrConfig *tgrnet_config(const TgrNet *n);
TgrNode *tgrnet_node(TgrNet *n, unsigned node);

/* "WRITE", "READ_REQ", ... for a valid op. */
const char *tgrnet_op_name(uint8_t op);
/* Requests wait for an answer or count as sent; replies and NACKs do not. */
bool tgrnet_op_is_request(uint8_t op);
/* Delivery stamp: the crossbar's delay and `len` bytes at link rate. */
uint64_t tgrnet_deliver_time(const TgrNet *n, uint64_t send_ns, size_t len);

/*
 * A HELLO from `node` was accepted: it is linked, and its refusals are
 * logged afresh.  True if it had been linked before (a restart, counted).
 */
bool tgrnet_hello(TgrNet *n, unsigned node);
/* The connection was refused: `node` is no longer linked. */
void tgrnet_unlink(TgrNet *n, unsigned node);

/*
 * A DATA frame (header `h`, payload `pl`) from `node`: checks it, decodes
 * the TGR header into `t` and counts it.  For TGR_DATA_UNREACHABLE it
 * counts the refusal too; for TGR_DATA_MCAST it counts the group's write
 * and sets *group.
 */
TgrData tgrnet_data(TgrNet *n, unsigned node, const FabricHdr *h,
                    const uint8_t *pl, size_t len, FabricTgrHdr *t,
                    unsigned *group, char *why, size_t why_len);
/* JOIN or LEAVE (pl[0]) from `node`; false with `why` if malformed. */
bool tgrnet_membership(TgrNet *n, unsigned node, const uint8_t *pl,
                       size_t len, char *why, size_t why_len);
bool tgrnet_is_member(const TgrNet *n, unsigned group, unsigned node);
unsigned tgrnet_group_members(const TgrNet *n, unsigned group);
uint64_t tgrnet_group_writes(const TgrNet *n, unsigned group);
/* Groups with at least one member. */
unsigned tgrnet_groups_in_use(const TgrNet *n);

/*
 * A copy src>dst was queued and `dst_bytes` now wait for dst.  Past the
 * mark, src and dst itself wait until dst drains (a node that does not
 * read must not be read either: its requests make replies to it).
 */
void tgrnet_queued(TgrNet *n, unsigned src, unsigned dst, size_t dst_bytes);
/* `dst_bytes` wait for dst after its output drained (or was flushed). */
void tgrnet_drained(TgrNet *n, unsigned dst, size_t dst_bytes);
/*
 * `node`'s connection is gone: unlinked, out of every group; unless the
 * daemon is shutting down, the senders it held read again and it waits
 * for nobody.
 */
void tgrnet_port_down(TgrNet *n, unsigned node, bool shutting_down);

/* "0,2,3": the members of `group`. */
void tgrnet_append_members(const TgrNet *n, unsigned group, GString *out);
/* `table`: the groups that have members, "group G: 0,2,3" a line. */
void tgrnet_dump_groups(const TgrNet *n, GString *out);

#endif
