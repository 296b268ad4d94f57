/*
 * RDP: ParaStation2's reliable data protocol, as run by the Myrinet
 * firmware (MCP)
 *
 * The sender keeps a ring of RDP_SEND_SLOTS sends per peer and transmits
 * at most a window of them; it never reorders or buffers out of order on
 * the receive side (go-back-N): a packet past a gap is dropped, answered
 * by one SEQ_NACK, and the sender resends from the missing one.  The only
 * arithmetic is on wrapping u32 sequence numbers and times, compared as
 * signed differences; no division, no 64-bit multiply, no floating point.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stddef.h>

#include "rdp.h"
#include "vcluster/le.h"

/* Freestanding: the firmware supplies these two. */
#define rdp_memset __builtin_memset

#define SLOT_MASK (RDP_SEND_SLOTS - 1u)

_Static_assert(RDP_SEND_SLOTS >= 1 && (RDP_SEND_SLOTS & SLOT_MASK) == 0,
               "RDP_SEND_SLOTS must be a power of two");
_Static_assert(RDP_MAX_PEERS >= 2 && RDP_MAX_PEERS <= 0xffff,
               "RDP_MAX_PEERS out of range");

/* Salts that keep the ids derived from one nonce apart. */
#define SALT_CONNID 0x636f6e6eu
#define SALT_ISN    0x69736e30u
#define SALT_EPOCH  0x65706f63u

/* a before b, on the wrapping u32 circle (sequence numbers and times). */
static inline bool before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* The time @deadline has come. */
static inline bool due(uint32_t now, uint32_t deadline)
{
    return !before(now, deadline);
}

void rdp_hdr_encode(uint8_t *buf, const RdpHdr *h)
{
    st_le16(buf + 0, h->mtype);
    st_le16(buf + 2, h->op);
    st_le16(buf + 4, h->src);
    st_le16(buf + 6, h->dst);
    st_le32(buf + 8, h->connid);
    st_le32(buf + 12, h->seq);
    st_le32(buf + 16, h->ack_connid);
    st_le32(buf + 20, h->ackno);
    st_le16(buf + 24, h->len);
    buf[26] = h->nsub;
    buf[27] = h->flags;
}

void rdp_hdr_decode(RdpHdr *h, const uint8_t *buf)
{
    h->mtype = ld_le16(buf + 0);
    h->op = ld_le16(buf + 2);
    h->src = ld_le16(buf + 4);
    h->dst = ld_le16(buf + 6);
    h->connid = ld_le32(buf + 8);
    h->seq = ld_le32(buf + 12);
    h->ack_connid = ld_le32(buf + 16);
    h->ackno = ld_le32(buf + 20);
    h->len = ld_le16(buf + 24);
    h->nsub = buf[26];
    h->flags = buf[27];
}

void rdp_default_params(RdpParams *p)
{
    p->window = 16;
    p->rto_us = 2048;       /* PS3 ResendTimeout */
    p->cto_us = 1000;
    p->ack_delay_us = 100;
    p->ack_pending = 4;     /* psid RDPMaxAckPending */
    p->mrc = 32;            /* psid RDPMaxRetransCount */
    p->refuse_us = 1000000;
}

/* A 32-bit integer hash (xorshift-multiply): every input bit matters. */
static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/*
 * An id for a new OUT connection to @peer, from the boot nonce, the
 * clock and a count of opens: unique across boots and reopens.  Never 0
 * (0 means "none" on the wire) and never @avoid (the previous one).
 */
static uint32_t new_id(const RdpState *st, uint16_t peer, uint32_t salt,
                       uint32_t now, uint32_t avoid)
{
    uint32_t x = mix32(st->nonce ^ salt);

    x = mix32(x ^ ((uint32_t)st->node << 16 | peer));
    x = mix32(x ^ st->opens);
    x = mix32(x ^ now);
    while (x == 0 || x == avoid) {
        x = mix32(x + 1);
    }
    return x;
}

static inline RdpSlot *out_slot(RdpOut *o, uint32_t seq)
{
    return &o->slot[(o->head + (seq - o->una)) & SLOT_MASK];
}

static void xmit_ctl(RdpState *st, uint16_t peer, RdpOp op, uint32_t connid,
                     uint32_t seq, uint32_t ack_connid, uint32_t ackno)
{
    RdpHdr h = {
        .mtype = RDP_MTYPE, .op = op, .src = st->node, .dst = peer,
        .connid = connid, .seq = seq, .ack_connid = ack_connid,
        .ackno = ackno,
    };

    rdp_hdr_encode(st->hdr, &h);
    st->ops->xmit(st->opaque, peer, st->hdr, RDP_HDR_LEN, NULL, 0);
}

static void send_ack(RdpState *st, uint16_t peer)
{
    RdpIn *in = &st->peer[peer].in;

    xmit_ctl(st, peer, RDP_OP_ACK, in->connid, 0, in->connid, in->rcv_nxt);
    in->acks_pending = 0;
    st->c.acks_sent++;
}

/* SYN: connid and ISN of the new stream, our epoch to detect restarts. */
static void send_syn(RdpState *st, uint16_t peer, uint32_t now)
{
    RdpOut *o = &st->peer[peer].out;

    xmit_ctl(st, peer, RDP_OP_SYN, o->connid, o->una, 0, st->epoch);
    o->syn_at = now;
}

/* (Re)transmit DATA @seq, carrying the ACK of the reverse stream. */
static void send_data(RdpState *st, uint16_t peer, uint32_t seq,
                      uint32_t now)
{
    RdpPeer *pp = &st->peer[peer];
    RdpOut *o = &pp->out;
    RdpSlot *s = out_slot(o, seq);
    RdpHdr h = {
        .mtype = RDP_MTYPE, .op = RDP_OP_DATA, .src = st->node, .dst = peer,
        .connid = o->connid, .seq = seq, .len = s->len,
    };

    if (pp->in.connid) {
        h.ack_connid = pp->in.connid;
        h.ackno = pp->in.rcv_nxt;
        if (pp->in.acks_pending) {
            pp->in.acks_pending = 0;
            st->c.acks_piggy++;
        }
    }
    rdp_hdr_encode(st->hdr, &h);
    st->ops->xmit(st->opaque, peer, st->hdr, RDP_HDR_LEN, s->payload,
                  s->len);
    s->sent_at = now;
    if (before(seq, o->max)) {
        st->c.retransmitted++;
    } else {
        st->c.sent++;
        st->c.bytes += s->len;
        o->max = seq + 1;
    }
}

/*
 * Open a new OUT connection for the queued sends: fresh connid and ISN,
 * the queue renumbered from the ISN, and a SYN.
 */
static void out_open(RdpState *st, uint16_t peer, uint32_t now)
{
    RdpOut *o = &st->peer[peer].out;
    uint32_t queued = o->end - o->una;
    uint32_t isn;

    o->connid = new_id(st, peer, SALT_CONNID, now, o->connid);
    isn = new_id(st, peer, SALT_ISN, now, 0);
    st->opens++;
    o->una = o->nxt = o->max = isn;
    o->end = isn + queued;
    o->state = RDP_OUT_SYN_SENT;
    o->retries = 0;
    o->paused = 0;
    o->stalled = 0;
    send_syn(st, peer, now);
}

/* Send what the connection state, a pause and the window allow. */
static void out_pump(RdpState *st, uint16_t peer, uint32_t now)
{
    RdpOut *o = &st->peer[peer].out;

    if (o->state == RDP_OUT_CLOSED) {
        if (o->end != o->una) {
            out_open(st, peer, now);
        }
        return;
    }
    if (o->state != RDP_OUT_ACTIVE || o->paused) {
        return;
    }
    while (o->nxt != o->end && o->nxt - o->una < st->p.window) {
        send_data(st, peer, o->nxt, now);
        o->nxt++;
    }
    /* Sends left over wait for the window: one stall until they are out. */
    if (o->nxt == o->end) {
        o->stalled = 0;
    } else if (!o->stalled) {
        o->stalled = 1;
        st->c.window_stalls++;
    }
}

/* Cumulative ACK up to @ackno (exclusive); false if it acks nothing new. */
static bool out_acked(RdpState *st, uint16_t peer, uint32_t ackno)
{
    RdpOut *o = &st->peer[peer].out;

    if (!before(o->una, ackno) || before(o->max, ackno)) {
        return false;
    }
    while (o->una != ackno) {
        uint32_t cookie = o->slot[o->head].cookie;

        o->head = (o->head + 1) & SLOT_MASK;
        o->una++;
        st->ops->send_done(st->opaque, cookie, RDP_DONE_OK);
    }
    if (before(o->nxt, o->una)) {
        o->nxt = o->una;
    }
    o->retries = 0;
    o->refusing = 0;        /* the peer takes data again */
    return true;
}

/*
 * Complete the sends before @upto with @status and close the connection.
 * Sends from @upto on stay queued for the next connection.
 */
static void out_fail(RdpState *st, uint16_t peer, uint32_t upto, int status)
{
    RdpOut *o = &st->peer[peer].out;

    o->state = RDP_OUT_CLOSED;
    o->paused = 0;
    o->stalled = 0;
    o->retries = 0;
    while (o->una != upto) {
        uint32_t cookie = o->slot[o->head].cookie;

        o->head = (o->head + 1) & SLOT_MASK;
        o->una++;
        st->c.undeliverable++;
        st->ops->send_done(st->opaque, cookie, status);
    }
    o->nxt = o->max = o->una;
}

/* The peer lost our stream: queue every unacknowledged send again. */
static void out_requeue(RdpState *st, uint16_t peer)
{
    RdpOut *o = &st->peer[peer].out;

    o->state = RDP_OUT_CLOSED;
    o->paused = 0;
    o->stalled = 0;
    o->retries = 0;
    o->refusing = 0;        /* a new incarnation: room again */
    o->nxt = o->max = o->una;
}

/* MRC retransmissions went unanswered: fail everything, report it. */
static void out_lost(RdpState *st, uint16_t peer)
{
    RdpOut *o = &st->peer[peer].out;

    out_fail(st, peer, o->end, RDP_DONE_TIMEOUT);
    o->refusing = 0;
    st->ops->event(st->opaque, RDP_EV_PEER_LOST, peer);
}

/*
 * The peer refused @una for want of room, and has taken nothing for
 * refuse_us: that send fails, and the rest go on a new connection (the
 * peer cannot skip a sequence number).  refusing stays set, so each
 * later send it refuses before it takes one fails at its first refusal:
 * one stalled receiver empties the queue in round trips, not in
 * refuse_us each.  A receiver that takes anything starts the clock anew.
 */
static void out_refused(RdpState *st, uint16_t peer, uint32_t now)
{
    RdpOut *o = &st->peer[peer].out;

    st->c.noroom++;
    out_fail(st, peer, o->una + 1, RDP_DONE_NOROOM);
    out_pump(st, peer, now);
}

/*
 * The peer booted again: its IN half of our stream and its OUT half of
 * ours are gone.  Which of our unacknowledged sends reached the old
 * incarnation, and which were made after the restart, nobody can tell;
 * the latter must not be lost.  So all of them go again, in order, on a
 * new connection: the new incarnation gets every send at least once, and
 * the PEER_RESET event tells the upper layer that the old one may have
 * taken some with it.  A SYN_SENT half is kept: the SYN may reach the new
 * incarnation, and its timer resends it otherwise.
 */
static void peer_restarted(RdpState *st, uint16_t peer, uint32_t epoch)
{
    RdpPeer *pp = &st->peer[peer];

    pp->old_epoch = pp->epoch;
    pp->epoch = epoch;
    rdp_memset(&pp->in, 0, sizeof(pp->in));
    st->c.reconnects++;
    st->ops->event(st->opaque, RDP_EV_PEER_RESET, peer);
    if (pp->out.state == RDP_OUT_ACTIVE) {
        out_requeue(st, peer);
    }
}

/*
 * The epoch a SYN, SYNACK or SYNNACK carries: false if it is stale (from
 * the incarnation before the last restart, delayed in the network).
 */
static bool check_epoch(RdpState *st, uint16_t peer, uint32_t epoch)
{
    RdpPeer *pp = &st->peer[peer];

    if (pp->old_epoch && epoch == pp->old_epoch) {
        return false;
    }
    if (!pp->epoch) {
        pp->epoch = epoch;
    } else if (epoch != pp->epoch) {
        peer_restarted(st, peer, epoch);
    }
    return true;
}

/* An ACK of our OUT half, explicit or piggy-backed. */
static void input_ack(RdpState *st, uint16_t peer, uint32_t connid,
                      uint32_t ackno, uint32_t now)
{
    RdpOut *o = &st->peer[peer].out;

    if (o->state == RDP_OUT_ACTIVE && connid == o->connid &&
        out_acked(st, peer, ackno)) {
        out_pump(st, peer, now);
    }
}

static void input_data(RdpState *st, const RdpHdr *h, const uint8_t *payload,
                       uint32_t now)
{
    uint16_t peer = h->src;
    RdpIn *in = &st->peer[peer].in;

    if (h->connid != in->connid) {
        /* Not our connection: we restarted, or it is stale.  Tell it. */
        xmit_ctl(st, peer, RDP_OP_SYNNACK, h->connid, h->seq, 0, st->epoch);
        return;
    }
    if (before(h->seq, in->rcv_nxt)) {
        /* Our ACK was lost, or this was duplicated: ACK again at once. */
        st->c.dup_drops++;
        send_ack(st, peer);
        return;
    }
    if (h->seq != in->rcv_nxt) {
        st->c.ooo_drops++;
        /*
         * One NACK per gap, again only after an RTO (it may be lost).
         * Past a refused packet the sender pauses and goes back anyway.
         */
        if (!in->refused &&
            (!in->nacked || in->nack_seq != in->rcv_nxt ||
             due(now, in->nack_at + st->p.rto_us))) {
            in->nacked = 1;
            in->nack_seq = in->rcv_nxt;
            in->nack_at = now;
            in->acks_pending = 0;   /* the NACK acks what is before */
            st->c.seq_nacks_tx++;
            xmit_ctl(st, peer, RDP_OP_SEQ_NACK, in->connid, in->rcv_nxt, 0, 0);
        }
        return;
    }
    if (st->ops->deliver(st->opaque, peer, payload, h->len) !=
        RDP_DELIVER_OK) {
        in->refused = 1;
        in->acks_pending = 0;
        st->c.cap_nacks_tx++;
        xmit_ctl(st, peer, RDP_OP_CAP_NACK, in->connid, h->seq, 0, 0);
        return;
    }
    in->rcv_nxt++;
    in->refused = 0;
    in->nacked = 0;
    if (in->acks_pending++ == 0) {
        in->ack_due = now + st->p.ack_delay_us;
    }
    if (in->acks_pending >= st->p.ack_pending) {
        send_ack(st, peer);
    }
}

/* SEQ_NACK or CAP_NACK of packet @seq on our OUT half. */
static void input_nack(RdpState *st, const RdpHdr *h, uint32_t now)
{
    uint16_t peer = h->src;
    RdpOut *o = &st->peer[peer].out;

    if (o->state != RDP_OUT_ACTIVE || h->connid != o->connid ||
        before(h->seq, o->una) || !before(h->seq, o->max)) {
        return;     /* stale */
    }
    /* The receiver holds everything before @seq. */
    out_acked(st, peer, h->seq);
    o->nxt = h->seq;
    if (h->op == RDP_OP_CAP_NACK) {
        /*
         * Pauses alone would wait forever for a receiver that never
         * makes room, holding this peer's queue (and the sender's slots)
         * full: bounded by refuse_us without progress.
         */
        if (!o->refusing) {
            o->refusing = 1;
            o->refused_since = now;
        } else if (now - o->refused_since >= st->p.refuse_us) {
            /* Unsigned: exact for any age below 2^32 us. */
            out_refused(st, peer, now);
            return;
        }
        o->paused = 1;
        o->paused_until = now + st->p.cto_us;
    }
    out_pump(st, peer, now);
}

static void input_syn(RdpState *st, const RdpHdr *h, uint32_t now)
{
    uint16_t peer = h->src;
    RdpIn *in = &st->peer[peer].in;

    if (!check_epoch(st, peer, h->ackno)) {
        return;
    }
    if (h->connid != in->connid) {
        /* A new stream: first contact, or the peer reopened it. */
        rdp_memset(in, 0, sizeof(*in));
        in->connid = h->connid;
        in->rcv_nxt = h->seq;
    }
    /* Also for a repeated SYN: our SYNACK was lost. */
    xmit_ctl(st, peer, RDP_OP_SYNACK, h->connid, h->seq, 0, st->epoch);
    /* A restart closed our OUT half: reopen it for what is queued. */
    out_pump(st, peer, now);
}

static void input_synack(RdpState *st, const RdpHdr *h, uint32_t now)
{
    uint16_t peer = h->src;
    RdpOut *o = &st->peer[peer].out;

    if (o->state != RDP_OUT_SYN_SENT || h->connid != o->connid ||
        !check_epoch(st, peer, h->ackno)) {
        return;     /* repeated or stale */
    }
    o->state = RDP_OUT_ACTIVE;
    o->retries = 0;
    out_pump(st, peer, now);
}

/* The peer does not know our OUT connection: it lost its state. */
static void input_synnack(RdpState *st, const RdpHdr *h, uint32_t now)
{
    uint16_t peer = h->src;
    RdpOut *o = &st->peer[peer].out;

    if (o->state != RDP_OUT_ACTIVE || h->connid != o->connid ||
        !check_epoch(st, peer, h->ackno)) {
        return;
    }
    /*
     * A new epoch: check_epoch() reset the peer and queued our sends
     * again.  The known one: only our stream is gone (cannot happen
     * unless state was lost); queue them again, without an event.
     */
    if (o->state == RDP_OUT_ACTIVE) {
        out_requeue(st, peer);
    }
    out_pump(st, peer, now);
}

/* Sanity checks beyond the CRC (P2 section 4): bad ones are dropped. */
static bool header_sane(const RdpState *st, const RdpHdr *h, uint32_t len)
{
    if (h->mtype != RDP_MTYPE || h->op < RDP_OP_DATA ||
        h->op > RDP_OP_SYNNACK) {
        return false;
    }
    if (h->dst != st->node || h->src >= st->nodes || h->src == st->node) {
        return false;
    }
    if (RDP_HDR_LEN + (uint32_t)h->len != len ||
        (h->op != RDP_OP_DATA && h->len != 0)) {
        return false;
    }
    return h->connid != 0;
}

void rdp_input(RdpState *st, const uint8_t *pkt, uint32_t len, bool crc_ok,
               uint32_t now)
{
    RdpHdr h;

    if (!crc_ok) {
        st->c.crc_drops++;
        return;
    }
    if (len < RDP_HDR_LEN) {
        st->c.sanity_drops++;
        return;
    }
    rdp_hdr_decode(&h, pkt);
    if (!header_sane(st, &h, len)) {
        st->c.sanity_drops++;
        return;
    }
    switch (h.op) {
    case RDP_OP_DATA:
        input_data(st, &h, pkt + RDP_HDR_LEN, now);
        /* After the data, so a reply DATA piggy-backs its ACK too. */
        if (h.ack_connid) {
            input_ack(st, h.src, h.ack_connid, h.ackno, now);
        }
        break;
    case RDP_OP_ACK:
        st->c.acks_rcvd++;
        input_ack(st, h.src, h.ack_connid, h.ackno, now);
        break;
    case RDP_OP_SEQ_NACK:
        st->c.seq_nacks_rx++;
        input_nack(st, &h, now);
        break;
    case RDP_OP_CAP_NACK:
        st->c.cap_nacks_rx++;
        input_nack(st, &h, now);
        break;
    case RDP_OP_SYN:
        input_syn(st, &h, now);
        break;
    case RDP_OP_SYNACK:
        input_synack(st, &h, now);
        break;
    case RDP_OP_SYNNACK:
        input_synnack(st, &h, now);
        break;
    }
}

int rdp_send(RdpState *st, uint16_t peer, uint32_t cookie,
             const void *payload, uint32_t len, uint32_t now)
{
    RdpOut *o;
    RdpSlot *s;

    if (peer >= st->nodes || peer == st->node || len > RDP_MAX_PAYLOAD) {
        return RDP_EINVAL;
    }
    o = &st->peer[peer].out;
    if (o->end - o->una >= RDP_SEND_SLOTS) {
        return RDP_NOROOM;
    }
    s = out_slot(o, o->end);
    s->payload = payload;
    s->cookie = cookie;
    s->len = len;
    o->end++;
    out_pump(st, peer, now);
    return RDP_OK;
}

/* The retransmit timer of our OUT half to @peer expired. */
static void out_timeout(RdpState *st, uint16_t peer, uint32_t now)
{
    RdpOut *o = &st->peer[peer].out;

    st->c.timeouts++;
    if (o->retries >= st->p.mrc) {
        out_lost(st, peer);
        return;
    }
    o->retries++;
    if (o->state == RDP_OUT_SYN_SENT) {
        send_syn(st, peer, now);
    } else {
        o->nxt = o->una;    /* go back N */
        out_pump(st, peer, now);
    }
}

void rdp_tick(RdpState *st, uint32_t now)
{
    for (uint16_t peer = 0; peer < st->nodes; peer++) {
        RdpPeer *pp = &st->peer[peer];
        RdpOut *o = &pp->out;

        if (pp->in.acks_pending && due(now, pp->in.ack_due)) {
            send_ack(st, peer);
        }
        if (o->state == RDP_OUT_SYN_SENT) {
            if (due(now, o->syn_at + st->p.rto_us)) {
                out_timeout(st, peer, now);
            }
        } else if (o->state == RDP_OUT_ACTIVE) {
            if (o->paused) {
                if (due(now, o->paused_until)) {
                    o->paused = 0;
                    out_pump(st, peer, now);
                }
            } else if (o->nxt != o->una &&
                       due(now, o->slot[o->head].sent_at + st->p.rto_us)) {
                out_timeout(st, peer, now);
            }
        }
    }
}

static void earliest(bool *any, uint32_t *best, uint32_t t)
{
    if (!*any || before(t, *best)) {
        *best = t;
        *any = true;
    }
}

bool rdp_next_deadline(const RdpState *st, uint32_t *deadline)
{
    bool any = false;
    uint32_t best = 0;

    for (uint16_t peer = 0; peer < st->nodes; peer++) {
        const RdpPeer *pp = &st->peer[peer];
        const RdpOut *o = &pp->out;

        if (pp->in.acks_pending) {
            earliest(&any, &best, pp->in.ack_due);
        }
        if (o->state == RDP_OUT_SYN_SENT) {
            earliest(&any, &best, o->syn_at + st->p.rto_us);
        } else if (o->state == RDP_OUT_ACTIVE) {
            if (o->paused) {
                earliest(&any, &best, o->paused_until);
            } else if (o->nxt != o->una) {
                /* slot[head] is una's: the oldest timer */
                earliest(&any, &best, o->slot[o->head].sent_at +
                                      st->p.rto_us);
            }
        }
    }
    *deadline = best;
    return any;
}

int rdp_init(RdpState *st, const RdpOps *ops, void *opaque, uint16_t node,
             uint16_t nodes, const RdpParams *params, uint32_t nonce)
{
    RdpParams defaults;

    if (!params) {
        rdp_default_params(&defaults);
        params = &defaults;
    }
    if (!ops || !ops->xmit || !ops->deliver || !ops->send_done ||
        !ops->event || nodes > RDP_MAX_PEERS || node >= nodes ||
        params->window == 0 || params->window > RDP_SEND_SLOTS ||
        params->ack_pending == 0 || params->rto_us == 0 ||
        params->rto_us > 1u << 30 || params->cto_us > 1u << 30 ||
        params->ack_delay_us > 1u << 30 || params->refuse_us == 0 ||
        params->refuse_us > 1u << 30) {
        return RDP_EINVAL;
    }
    rdp_memset(st, 0, sizeof(*st));
    st->ops = ops;
    st->opaque = opaque;
    st->p = *params;
    st->node = node;
    st->nodes = nodes;
    st->nonce = nonce;
    st->epoch = mix32(mix32(nonce ^ SALT_EPOCH) ^ node);
    if (!st->epoch) {
        st->epoch = 1;
    }
    return RDP_OK;
}
