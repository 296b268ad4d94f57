/*
 * How a port's byte stream is cut into frames (a kind's parse() and
 * encode_prefix()), and what the port's owner made of a frame it was
 * handed.  The ports (ports.h) and the kinds (kind.h) both speak it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_FRAMING_H
#define FABRICD_FRAMING_H

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

/*
 * What a frame costs in a bound besides its bytes: its bookkeeping (queue
 * item, GBytes, malloc headers), so that many tiny frames cannot hide
 * behind a byte count (ports.h, lockstep.h).
 */
#define FABRIC_FRAME_COST       160

/*
 * What became of a frame: the answer of a kind's ingress(), and of the
 * ports' owner for every frame it is handed (PortOps.frame).
 */
typedef enum IngressStatus {
    INGRESS_OK,
    INGRESS_MALFORMED,      /* counted as malformed and dropped */
    INGRESS_REJECTED,       /* the kind answered REJECT; connection kept */
    INGRESS_REJECT_CLOSE,   /* REJECT queued: close once it is written */
} IngressStatus;

#endif
