/*
 * Kind telegraphos: the remote-memory card's payloads
 * (docs/hw/telegraphos.md), on the frame header of base.h.  One crossbar,
 * node i on port i, delivery in order for each source-destination pair,
 * no drops for congestion (a full port stops reading its senders).
 *
 * CONTROL HELLO      base.h
 * CONTROL HELLO_ACK  base.h, nothing after the node count
 * CONTROL TGR_JOIN   opcode, le16 group   device->fabric: join a
 * CONTROL TGR_LEAVE  opcode, le16 group   multicast group (or leave it)
 * CONTROL TGR_PEER_RESET  opcode, le16 node   fabric->devices: that node
 *                    said HELLO again (it restarted); its old requests and
 *                    replies are gone
 * DATA               FABRIC_TGR_HDR_LEN bytes (below), then the op's body.
 *                    Unicast: dst the target node. MCAST_WRITE: dst
 *                    FABRIC_NODE_ALL; fabricd delivers one copy to every
 *                    member of the group, the sender included, all in the
 *                    one order fabricd received them.
 *
 * The TGR header:
 *   +0 u8 op (enum fabric_tgr_op), +1 u8 size (access bytes: 1, 2, 4, 8),
 *   +2 le16 epoch (sender's boot count), +4 le32 seq (per src-dst pair,
 *   from 0 each epoch; multicast copies use their own per-sender sequence),
 *   +8 le32 tag (the sender's; replies and NACKs echo it), +12 le32 eidx
 *   (MCAST_WRITE: group << 16 | group page), +16 le16 gen, +18 le16 offset
 *   in the page.
 * Bodies (after the header):
 *   WRITE, MCAST_WRITE  the data (size bytes, up to FABRIC_TGR_MAX_DATA for
 *                       DMA chunks; size is then 0 and the length is the
 *                       body's)
 *   READ_REQ            le16 length (FETCH and DMA_GET: up to
 *                       FABRIC_TGR_MAX_DATA; a load: size)
 *   READ_REP            u8 status (TGR_ERR_*), u8 0, then the data
 *   ATOMIC_REQ          u8 aop (enum fabric_tgr_aop), 7 zero bytes, le64 a,
 *                       le64 b (FADD: a = addend; SWAP: a = new;
 *                       CAS: a = expected, b = new)
 *   ATOMIC_REP          u8 status, 7 zero bytes, le64 old value
 *   REQ                 le32 the item
 *   NACK                u8 the refused op, u8 reason (TGR_ERR_*), le16 0,
 *                       le32 the refused frame's seq; tag echoes its tag
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_PROTO_TELEGRAPHOS_H
#define VCLUSTER_PROTO_TELEGRAPHOS_H

#include "proto/base.h"

enum fabric_tgr_control_op {
    FABRIC_CTL_TGR_JOIN = 32,
    FABRIC_CTL_TGR_LEAVE = 33,
    FABRIC_CTL_TGR_PEER_RESET = 34,
};

enum fabric_tgr_op {
    FABRIC_TGR_WRITE = 1,
    FABRIC_TGR_READ_REQ = 2,
    FABRIC_TGR_READ_REP = 3,
    FABRIC_TGR_ATOMIC_REQ = 4,
    FABRIC_TGR_ATOMIC_REP = 5,
    FABRIC_TGR_REQ = 6,
    FABRIC_TGR_MCAST_WRITE = 7,
    FABRIC_TGR_NACK = 8,
    FABRIC_TGR_OP_MAX = FABRIC_TGR_NACK,
};

enum fabric_tgr_aop {
    FABRIC_TGR_AOP_FADD = 1,    /* fetch_and_increment is FADD of 1 */
    FABRIC_TGR_AOP_SWAP = 2,
    FABRIC_TGR_AOP_CAS = 3,
};

#define FABRIC_TGR_HELLO_ACK_LEN    FABRIC_HELLO_ACK_BASE_LEN
#define FABRIC_TGR_GROUP_LEN        3   /* JOIN, LEAVE, PEER_RESET */
#define FABRIC_TGR_HDR_LEN          20
#define FABRIC_TGR_MAX_DATA         4096
#define FABRIC_TGR_READ_REQ_LEN     2
#define FABRIC_TGR_REP_HDR_LEN      2   /* READ_REP before its data */
#define FABRIC_TGR_ATOMIC_REQ_LEN   24
#define FABRIC_TGR_ATOMIC_REP_LEN   16
#define FABRIC_TGR_REQ_LEN          4
#define FABRIC_TGR_NACK_LEN         8
#define FABRIC_TGR_MAX_GROUPS       64
_Static_assert(FABRIC_TGR_HDR_LEN + FABRIC_TGR_REP_HDR_LEN + FABRIC_TGR_MAX_DATA
               <= FABRIC_MAX_PAYLOAD, "the longest reply fits a frame");
_Static_assert(FABRIC_TGR_HDR_LEN + FABRIC_TGR_ATOMIC_REQ_LEN <=
               FABRIC_MAX_PAYLOAD, "an atomic request fits a frame");
_Static_assert(FABRIC_TGR_MAX_GROUPS <= 0xffff, "a group fits its le16");

/* The group and page of a MCAST_WRITE's eidx field. */
#define FABRIC_TGR_MCAST_EIDX(group, page) ((uint32_t)(group) << 16 | (page))

typedef struct FabricTgrHdr {
    uint8_t op;
    uint8_t size;
    uint16_t epoch;
    uint32_t seq;
    uint32_t tag;
    uint32_t eidx;
    uint16_t gen;
    uint16_t off;
} FabricTgrHdr;

static inline void fabric_tgr_hdr_encode(const FabricTgrHdr *t, uint8_t *buf)
{
    buf[0] = t->op;
    buf[1] = t->size;
    fabric_put_le16(buf + 2, t->epoch);
    fabric_put_le32(buf + 4, t->seq);
    fabric_put_le32(buf + 8, t->tag);
    fabric_put_le32(buf + 12, t->eidx);
    fabric_put_le16(buf + 16, t->gen);
    fabric_put_le16(buf + 18, t->off);
}

/* False when the payload is too short or the op unknown. */
static inline bool fabric_tgr_hdr_decode(const uint8_t *buf, size_t len,
                                         FabricTgrHdr *t)
{
    if (len < FABRIC_TGR_HDR_LEN) {
        return false;
    }
    t->op = buf[0];
    t->size = buf[1];
    t->epoch = fabric_get_le16(buf + 2);
    t->seq = fabric_get_le32(buf + 4);
    t->tag = fabric_get_le32(buf + 8);
    t->eidx = fabric_get_le32(buf + 12);
    t->gen = fabric_get_le16(buf + 16);
    t->off = fabric_get_le16(buf + 18);
    return t->op >= FABRIC_TGR_WRITE && t->op <= FABRIC_TGR_OP_MAX;
}

/* A JOIN, LEAVE or PEER_RESET payload; returns FABRIC_TGR_GROUP_LEN. */
static inline size_t fabric_tgr_group_encode(uint8_t op, uint16_t arg,
                                             uint8_t *buf)
{
    buf[0] = op;
    fabric_put_le16(buf + 1, arg);
    return FABRIC_TGR_GROUP_LEN;
}

/* False unless `pl` is exactly a JOIN, LEAVE or PEER_RESET payload. */
static inline bool fabric_tgr_group_decode(const uint8_t *pl, size_t len,
                                           uint16_t *arg)
{
    if (len != FABRIC_TGR_GROUP_LEN ||
        (pl[0] != FABRIC_CTL_TGR_JOIN && pl[0] != FABRIC_CTL_TGR_LEAVE &&
         pl[0] != FABRIC_CTL_TGR_PEER_RESET)) {
        return false;
    }
    *arg = fabric_get_le16(pl + 1);
    return true;
}

/* A NACK's body: what was refused, and why. */
typedef struct FabricTgrNack {
    uint8_t op;         /* the refused frame's op */
    uint8_t reason;     /* TGR_ERR_* */
    uint32_t seq;       /* the refused frame's seq */
} FabricTgrNack;

/* Returns FABRIC_TGR_NACK_LEN. */
static inline size_t fabric_tgr_nack_encode(const FabricTgrNack *n,
                                            uint8_t *body)
{
    body[0] = n->op;
    body[1] = n->reason;
    fabric_put_le16(body + 2, 0);
    fabric_put_le32(body + 4, n->seq);
    return FABRIC_TGR_NACK_LEN;
}

/* False when the body is too short for a NACK. */
static inline bool fabric_tgr_nack_decode(const uint8_t *body, size_t len,
                                          FabricTgrNack *n)
{
    if (len < FABRIC_TGR_NACK_LEN) {
        return false;
    }
    n->op = body[0];
    n->reason = body[1];
    n->seq = fabric_get_le32(body + 4);
    return true;
}

#endif
