/*
 * RDP: ParaStation2's reliable data protocol, as run by the Myrinet
 * firmware (MCP)
 *
 * Reliable, in-order, exactly-once delivery of packets between the nodes
 * of a source-routed network that may lose, duplicate, reorder or corrupt
 * them.  Per peer, two half-connections: OUT (our stream to the peer) and
 * IN (the peer's stream to us), each set up by its own SYN/SYNACK on the
 * first send.  Go-back-N with a fixed window, cumulative ACKs piggy-backed
 * on reverse DATA or sent explicitly after a delay, sequence NACKs on a
 * gap, capacity NACKs when the receiver has no room, a retransmit timer
 * per packet.  docs/dev/rdp.md describes the protocol.
 *
 * Freestanding C with no allocation: the caller allocates one RdpState
 * and passes packets, sends and the time in; RDP answers through the
 * callbacks of RdpOps.  Times are microseconds in a wrapping u32.  The
 * only library calls are memcpy and memset.  Not thread-safe, and the
 * callbacks must not call back into rdp_*().
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_RDP_H
#define VCLUSTER_RDP_H

#include <stdbool.h>
#include <stdint.h>

/* Compile-time table sizes; the firmware may override them with -D. */
#ifndef RDP_MAX_PEERS
#define RDP_MAX_PEERS 64
#endif
#ifndef RDP_SEND_SLOTS              /* sends queued per peer, power of 2 */
#define RDP_SEND_SLOTS 32
#endif

/* The wire header: 28 bytes, little-endian, after the route. */
#define RDP_HDR_LEN 28
#define RDP_MTYPE 0x0300            /* first wire byte 0x00: ends the route */
#define RDP_MAX_PAYLOAD 0xffffu     /* the header's u16 len */

typedef enum RdpOp {
    RDP_OP_DATA = 1,
    RDP_OP_SYN = 2,
    RDP_OP_ACK = 3,
    RDP_OP_SYNACK = 4,
    RDP_OP_SEQ_NACK = 5,
    RDP_OP_CAP_NACK = 6,
    RDP_OP_SYNNACK = 7,
} RdpOp;

typedef struct RdpHdr {
    uint16_t mtype;
    uint16_t op;
    uint16_t src, dst;
    uint32_t connid;        /* the half-connection the packet belongs to */
    uint32_t seq;           /* DATA seq, SYN ISN, NACKed seq */
    uint32_t ack_connid;    /* DATA/ACK: half acked (0: none) */
    uint32_t ackno;         /* DATA/ACK: next seq expected; SYN*: epoch */
    uint16_t len;           /* payload bytes after the header */
    uint8_t nsub, flags;    /* reserved: sent as 0, ignored */
} RdpHdr;

/* Explicit little-endian byte access: no struct overlays the wire. */
void rdp_hdr_encode(uint8_t *buf, const RdpHdr *h);
void rdp_hdr_decode(RdpHdr *h, const uint8_t *buf);

typedef struct RdpParams {
    uint32_t window;        /* packets in flight per peer, 1..RDP_SEND_SLOTS */
    uint32_t rto_us;        /* retransmit timeout per packet */
    uint32_t cto_us;        /* pause after a capacity NACK */
    uint32_t ack_delay_us;  /* longest wait before an explicit ACK */
    uint32_t ack_pending;   /* in-order packets that force an ACK at once */
    uint32_t mrc;           /* retransmissions before the peer is lost */
    uint32_t refuse_us;     /* capacity NACKs with no progress for this
                             * long: the refused sends fail (NOROOM) */
} RdpParams;

/*
 * W 16, RTO 2048 us, CTO 1000 us, ACK after 100 us or 4 packets, MRC 32,
 * refusals given up after 1 s.
 */
void rdp_default_params(RdpParams *p);

/* rdp_send() and rdp_init() results. */
enum {
    RDP_OK = 0,
    RDP_NOROOM = 1,         /* the peer's queue is full: retry later */
    RDP_EINVAL = 2,         /* bad peer, length or parameters */
};

/* deliver() results. */
enum {
    RDP_DELIVER_OK = 0,
    RDP_DELIVER_NOSPACE = 1, /* no room now: the sender pauses, resends */
};

/* send_done() statuses; every failure counts as undeliverable. */
enum {
    RDP_DONE_OK = 0,        /* acknowledged: delivered (to a restarted
                             * peer's new incarnation at least once) */
    RDP_DONE_TIMEOUT = 1,   /* MRC retransmissions unanswered: peer lost */
    RDP_DONE_NOROOM = 2,    /* the peer took nothing for refuse_us and
                             * refused this send for want of room */
};

typedef enum RdpEvent {
    RDP_EV_PEER_RESET = 1,  /* the peer restarted; its halves were reset */
    RDP_EV_PEER_LOST = 2,   /* gave up after MRC retries; OUT closed */
} RdpEvent;

typedef struct RdpOps {
    /*
     * Send one packet: @hdr (valid during the call only) then @payload.
     * The payload pointer is the one given to rdp_send().  May drop the
     * packet when the network is busy: RDP recovers as from a loss.
     */
    void (*xmit)(void *opaque, uint16_t peer, const uint8_t *hdr,
                 uint32_t hdr_len, const void *payload, uint32_t len);
    /*
     * Hand one in-order payload (valid during the call only) up.  Return
     * RDP_DELIVER_NOSPACE to refuse it: it comes again after a pause,
     * or fails at the sender (NOROOM) once nothing was taken for
     * refuse_us.
     */
    int (*deliver)(void *opaque, uint16_t peer, const uint8_t *payload,
                   uint32_t len);
    /* The send @cookie is finished; its buffer is the caller's again. */
    void (*send_done)(void *opaque, uint32_t cookie, int status);
    void (*event)(void *opaque, RdpEvent kind, uint16_t peer);
} RdpOps;

typedef struct RdpCounters {
    uint64_t bytes;         /* payload bytes sent (first transmissions) */
    uint32_t sent;          /* DATA packets sent (first transmissions) */
    uint32_t retransmitted; /* DATA packets sent again (go-back-N) */
    uint32_t acks_sent, acks_piggy, acks_rcvd;
    uint32_t seq_nacks_tx, seq_nacks_rx;
    uint32_t cap_nacks_tx, cap_nacks_rx;
    uint32_t crc_drops, sanity_drops, dup_drops;
    uint32_t ooo_drops;     /* DATA past a gap, dropped (go-back-N) */
    uint32_t window_stalls; /* episodes of sends waiting for the window */
    uint32_t timeouts;      /* retransmit timer expiries */
    uint32_t reconnects;    /* peer restarts detected */
    uint32_t undeliverable; /* sends completed with an error status */
    uint32_t noroom;        /* of those, refused past refuse_us */
} RdpCounters;

typedef enum RdpOutState {
    RDP_OUT_CLOSED = 0,
    RDP_OUT_SYN_SENT,
    RDP_OUT_ACTIVE,
} RdpOutState;

typedef struct RdpSlot {
    const void *payload;
    uint32_t cookie;
    uint32_t len;
    uint32_t sent_at;       /* last transmission: the packet's timer */
} RdpSlot;

/*
 * Our stream to one peer.  Sequence numbers in order:
 * una <= nxt <= max <= end, end - una <= RDP_SEND_SLOTS.
 * [una, max) sent and unacked, [nxt, ...) next to (re)send, [max, end)
 * queued, never sent.  slot[head] holds una.
 */
typedef struct RdpOut {
    uint8_t state;          /* RdpOutState */
    uint8_t paused;         /* by a capacity NACK, until paused_until */
    uint8_t stalled;        /* a window stall was counted */
    uint8_t refusing;       /* capacity NACKs since the last progress */
    uint32_t connid;
    uint32_t una, nxt, max, end;
    uint32_t head;
    uint32_t retries;       /* timeouts since the last progress */
    uint32_t syn_at;        /* last SYN sent */
    uint32_t paused_until;
    uint32_t refused_since; /* the first of those NACKs */
    RdpSlot slot[RDP_SEND_SLOTS];
} RdpOut;

/* The peer's stream to us. */
typedef struct RdpIn {
    uint32_t connid;        /* 0: none */
    uint32_t rcv_nxt;
    uint32_t acks_pending;  /* delivered, not yet acknowledged */
    uint32_t ack_due;
    uint32_t nack_seq, nack_at;
    uint8_t nacked;         /* a SEQ_NACK(nack_seq) went out at nack_at */
    uint8_t refused;        /* rcv_nxt got a capacity NACK */
} RdpIn;

typedef struct RdpPeer {
    RdpOut out;
    RdpIn in;
    uint32_t epoch;         /* the peer's boot epoch, 0: not yet known */
    uint32_t old_epoch;     /* the one before its last restart */
} RdpPeer;

typedef struct RdpState {
    const RdpOps *ops;
    void *opaque;
    RdpParams p;
    uint16_t node, nodes;
    uint32_t nonce;
    uint32_t epoch;         /* ours, from the nonce */
    uint32_t opens;         /* OUT connections opened, for fresh ids */
    RdpCounters c;
    uint8_t hdr[RDP_HDR_LEN];
    RdpPeer peer[RDP_MAX_PEERS];
} RdpState;

/*
 * Set up @st for node @node of @nodes (<= RDP_MAX_PEERS); @params NULL
 * means the defaults.  @nonce must differ on every boot (random or a
 * clock): connection ids, ISNs and the epoch derive from it.
 */
int rdp_init(RdpState *st, const RdpOps *ops, void *opaque, uint16_t node,
             uint16_t nodes, const RdpParams *params, uint32_t nonce);

/*
 * Queue @len bytes at @payload for @peer; the first send to a peer opens
 * the connection.  The caller keeps the buffer unchanged until
 * send_done(@cookie), which comes exactly once for every RDP_OK.
 */
int rdp_send(RdpState *st, uint16_t peer, uint32_t cookie,
             const void *payload, uint32_t len, uint32_t now);

/* One packet from the network (header onwards, without the CRC). */
void rdp_input(RdpState *st, const uint8_t *pkt, uint32_t len, bool crc_ok,
               uint32_t now);

/* Run the timers that are due. */
void rdp_tick(RdpState *st, uint32_t now);

/* The earliest timer in *deadline; false when no timer runs. */
bool rdp_next_deadline(const RdpState *st, uint32_t *deadline);

#endif
