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

typedef enum FrameStatus {
    FRAME_NEED_MORE,    /* not a whole frame yet */
    FRAME_OK,           /* span describes one frame */
    FRAME_SKIP,         /* malformed but in sync: drop span.consumed bytes */
    FRAME_FATAL,        /* stream out of sync: close the connection */
} FrameStatus;

typedef struct FrameSpan {
    size_t consumed;    /* stream bytes used by this frame (or skipped) */
    size_t offset;      /* frame start within those bytes */
    size_t len;         /* frame length: what is routed and captured */
    char why[96];       /* SKIP/FATAL: what was wrong, for the log */
} FrameSpan;

#define FABRIC_PREFIX_MAX 8

typedef struct FabricKind {
    const char *name;
    uint32_t pcap_linktype;
    /* Leading frame bytes that corrupt rules leave alone (a fabric header). */
    size_t corrupt_from;

    FrameStatus (*parse)(const uint8_t *buf, size_t avail, FrameSpan *span);
    /* Stream bytes written before a frame on output; returns their count. */
    size_t (*encode_prefix)(size_t frame_len, uint8_t *prefix);

    void *(*state_new)(unsigned nodes);
    void (*state_free)(void *state);
    /*
     * Append the destination ports (guint) of a frame that arrived on
     * `in_port`.  connected[i] says whether port i has a peer.
     */
    void (*route)(void *state, unsigned in_port, const uint8_t *frame,
                  size_t len, const bool *connected, unsigned nodes,
                  uint64_t now_ns, GArray *dests);
    void (*port_down)(void *state, unsigned port);

    bool (*has_link)(unsigned nodes, unsigned from, unsigned to);
    void (*describe_topology)(unsigned nodes, GString *out);
    /* Optional forwarding-table dump for `table`; NULL if the kind has none. */
    void (*dump_table)(void *state, uint64_t now_ns, GString *out);
} FabricKind;

extern const FabricKind fabric_kind_eth;

/* The implemented kind called `name`, or NULL. */
const FabricKind *fabric_kind_find(const char *name);

#endif
