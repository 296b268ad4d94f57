/*
 * vcluster fabric wire protocol: the one definition shared by the QEMU
 * devices (through the fabric-link client) and fabricd.
 *
 * A frame is a fixed 32-byte little-endian header followed by `len` payload
 * bytes whose meaning the device and fabric kind define.  docs/wire-protocol.md
 * describes every field.  Encoding is done byte by byte so the header has no
 * padding or host-endianness assumptions.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_FABRIC_PROTO_H
#define VCLUSTER_FABRIC_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FABRIC_MAGIC            0x42464356u     /* "VCFB" on the wire */
#define FABRIC_VERSION          1
#define FABRIC_HDR_LEN          32
#define FABRIC_MAX_PAYLOAD      (64 * 1024 + 256)

/* Node id meaning "none": a routed frame, or a frame from the fabric. */
#define FABRIC_NODE_NONE        0xffffu
/* Destination meaning "every node" (barrier release, broadcast). */
#define FABRIC_NODE_ALL         0xfffeu
#define FABRIC_MAX_NODES        1024

enum fabric_kind {
    FABRIC_KIND_ETH = 1,        /* Ethernet between virtio-net NICs */
    FABRIC_KIND_PS1 = 2,        /* ParaStation board ring/torus */
    FABRIC_KIND_MYRINET = 3,    /* LANai cards through crossbar switches */
    FABRIC_KIND_TELEGRAPHOS = 4,
    FABRIC_KIND_MAX = FABRIC_KIND_TELEGRAPHOS,
};

enum fabric_type {
    FABRIC_TYPE_DATA = 1,       /* a packet between devices */
    FABRIC_TYPE_CREDIT = 2,     /* flow-control credit back to a sender */
    FABRIC_TYPE_BARRIER = 3,    /* barrier arrival / release */
    FABRIC_TYPE_SYNC = 4,       /* virtual-time grant (lock-step) */
    FABRIC_TYPE_CONTROL = 5,    /* hello and link management */
    FABRIC_TYPE_MAX = FABRIC_TYPE_CONTROL,
};

/* Header flags. */
#define FABRIC_F_ROUTED         0x01    /* payload starts with route bytes */
#define FABRIC_F_CORRUPTED      0x02    /* set by fabricd on a corrupted copy */
#define FABRIC_F_FLAGS_MASK     0x03

typedef struct FabricHdr {
    uint32_t magic;
    uint8_t version;
    uint8_t kind;
    uint8_t type;
    uint8_t flags;
    uint16_t src;
    uint16_t dst;
    uint32_t len;
    uint64_t send_time_ns;      /* sender's QEMU_CLOCK_VIRTUAL */
    uint64_t deliver_time_ns;   /* stamped by fabricd's timing model */
} FabricHdr;

/* Why fabric_hdr_decode() rejected a header. */
enum fabric_hdr_error {
    FABRIC_HDR_OK = 0,
    FABRIC_HDR_BAD_MAGIC,
    FABRIC_HDR_BAD_VERSION,
    FABRIC_HDR_BAD_KIND,
    FABRIC_HDR_BAD_TYPE,
    FABRIC_HDR_BAD_FLAGS,
    FABRIC_HDR_BAD_LEN,
};

static inline void fabric_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = v;
    p[1] = v >> 8;
}

static inline void fabric_put_le32(uint8_t *p, uint32_t v)
{
    fabric_put_le16(p, v);
    fabric_put_le16(p + 2, v >> 16);
}

static inline void fabric_put_le64(uint8_t *p, uint64_t v)
{
    fabric_put_le32(p, v);
    fabric_put_le32(p + 4, v >> 32);
}

static inline uint16_t fabric_get_le16(const uint8_t *p)
{
    return p[0] | (uint16_t)p[1] << 8;
}

static inline uint32_t fabric_get_le32(const uint8_t *p)
{
    return fabric_get_le16(p) | (uint32_t)fabric_get_le16(p + 2) << 16;
}

static inline uint64_t fabric_get_le64(const uint8_t *p)
{
    return fabric_get_le32(p) | (uint64_t)fabric_get_le32(p + 4) << 32;
}

static inline void fabric_hdr_encode(const FabricHdr *h, uint8_t *buf)
{
    fabric_put_le32(buf + 0, FABRIC_MAGIC);
    buf[4] = FABRIC_VERSION;
    buf[5] = h->kind;
    buf[6] = h->type;
    buf[7] = h->flags;
    fabric_put_le16(buf + 8, h->src);
    fabric_put_le16(buf + 10, h->dst);
    fabric_put_le32(buf + 12, h->len);
    fabric_put_le64(buf + 16, h->send_time_ns);
    fabric_put_le64(buf + 24, h->deliver_time_ns);
}

/*
 * Decode and validate FABRIC_HDR_LEN bytes.  A bad magic, version or length
 * means the byte stream can no longer be trusted; the other errors leave the
 * stream in sync (the payload can be skipped).
 */
static inline enum fabric_hdr_error fabric_hdr_decode(const uint8_t *buf,
                                                      FabricHdr *h)
{
    h->magic = fabric_get_le32(buf + 0);
    h->version = buf[4];
    h->kind = buf[5];
    h->type = buf[6];
    h->flags = buf[7];
    h->src = fabric_get_le16(buf + 8);
    h->dst = fabric_get_le16(buf + 10);
    h->len = fabric_get_le32(buf + 12);
    h->send_time_ns = fabric_get_le64(buf + 16);
    h->deliver_time_ns = fabric_get_le64(buf + 24);

    if (h->magic != FABRIC_MAGIC) {
        return FABRIC_HDR_BAD_MAGIC;
    }
    if (h->version != FABRIC_VERSION) {
        return FABRIC_HDR_BAD_VERSION;
    }
    if (h->len > FABRIC_MAX_PAYLOAD) {
        return FABRIC_HDR_BAD_LEN;
    }
    if (h->kind == 0 || h->kind > FABRIC_KIND_MAX) {
        return FABRIC_HDR_BAD_KIND;
    }
    if (h->type == 0 || h->type > FABRIC_TYPE_MAX) {
        return FABRIC_HDR_BAD_TYPE;
    }
    if (h->flags & ~FABRIC_F_FLAGS_MASK) {
        return FABRIC_HDR_BAD_FLAGS;
    }
    return FABRIC_HDR_OK;
}

/* True when the stream must be closed rather than the frame skipped. */
static inline bool fabric_hdr_error_is_fatal(enum fabric_hdr_error e)
{
    return e == FABRIC_HDR_BAD_MAGIC || e == FABRIC_HDR_BAD_VERSION ||
           e == FABRIC_HDR_BAD_LEN;
}

static inline const char *fabric_hdr_error_str(enum fabric_hdr_error e)
{
    switch (e) {
    case FABRIC_HDR_OK:
        return "ok";
    case FABRIC_HDR_BAD_MAGIC:
        return "bad magic";
    case FABRIC_HDR_BAD_VERSION:
        return "unsupported version";
    case FABRIC_HDR_BAD_KIND:
        return "unknown fabric kind";
    case FABRIC_HDR_BAD_TYPE:
        return "unknown frame type";
    case FABRIC_HDR_BAD_FLAGS:
        return "unknown flags";
    case FABRIC_HDR_BAD_LEN:
        return "payload too long";
    }
    return "?";
}

/*
 * CONTROL frames start with a one-byte opcode.  A device opens its link with
 * HELLO (payload: opcode, then its node id as le16); fabricd answers
 * HELLO_ACK (opcode, le16 node count) or REJECT (opcode, reason text).
 */
enum fabric_control_op {
    FABRIC_CTL_HELLO = 1,
    FABRIC_CTL_HELLO_ACK = 2,
    FABRIC_CTL_REJECT = 3,
    FABRIC_CTL_ROUTES = 16,     /* ps1: a node's routing table */
};

/*
 * Kind ps1 (ParaStation board): payloads of docs/hw/parastation.md.
 *
 * CONTROL HELLO      opcode, le16 node id                       (3 bytes)
 * CONTROL HELLO_ACK  opcode, le16 nodes, u8 width, u8 height    (5 bytes;
 *                    width 0 and height 0 mean a ring)
 * CONTROL ROUTES     opcode, le16 node id, le16 count, count route bytes
 * DATA               le32 header word (31:16 destination as sent, source
 *                    on delivery; 15:0 data word count 1..127), the data
 *                    words, one parity byte per data word, le32 CRC-32
 *                    (IEEE) over the header word and the data words
 * CREDIT             le32: device -> fabric, RX FIFO bytes freed;
 *                    fabric -> device, one more insertion credit
 * BARRIER            u8 op, u8 sync line bits
 */
#define FABRIC_PS1_HELLO_LEN        3
#define FABRIC_PS1_HELLO_ACK_LEN    5
#define FABRIC_PS1_ROUTES_HDR_LEN   5
#define FABRIC_PS1_MAX_WORDS        127
#define FABRIC_PS1_RX_FIFO          1024    /* bytes: the fabric's credit */
#define FABRIC_PS1_CREDIT_LEN       4
#define FABRIC_PS1_BARRIER_LEN      2
#define FABRIC_PS1_BARRIER_LINES    4
/* DATA payload length for `count` data words. */
#define FABRIC_PS1_DATA_LEN(count)  (4 + 4 * (count) + (count) + 4)
/* Bytes a packet takes in a FIFO (and on a link): header and data words. */
#define FABRIC_PS1_PKT_BYTES(count) (4 * (1 + (count)))

enum fabric_ps1_route {
    FABRIC_PS1_ROUTE_HERE = 0,
    FABRIC_PS1_ROUTE_X = 1,
    FABRIC_PS1_ROUTE_Y = 2,
    FABRIC_PS1_ROUTE_INVALID = 3,
};

enum fabric_ps1_barrier_op {
    FABRIC_PS1_BARRIER_ARRIVE = 1,
    FABRIC_PS1_BARRIER_MASK = 2,
    FABRIC_PS1_BARRIER_RELEASE = 3,
};

/*
 * Kind myrinet (LANai-style card through crossbar switches): payloads of
 * docs/hw/lanai.md.
 *
 * CONTROL HELLO      opcode, le16 node id                       (3 bytes)
 * CONTROL HELLO_ACK  opcode, le16 nodes, u8 switch, u8 port     (5 bytes:
 *                    where the node's cable plugs in)
 * DATA device->fabric  flags FABRIC_F_ROUTED, dst FABRIC_NODE_NONE; payload:
 *                    route bytes (bit 7 set, one per switch on the path),
 *                    then the packet (its first byte has bit 7 clear),
 *                    then le32 CRC-32 (IEEE) over the packet
 * DATA fabric->device  flags 0 (FABRIC_F_CORRUPTED when a fault rule
 *                    changed it), src the sending node, dst the receiving
 *                    node; payload: the packet and its CRC, route consumed
 *
 * A route byte 0x80 | p names output port (input port + p) of the switch,
 * p being a signed 6-bit offset (-32..31, bit 6 clear); 0x80 loops back.
 * There is no credit: a full receiver stops reading its socket, and the
 * fabric drops what a congested port cannot hold (RDP recovers it).
 */
#define FABRIC_MYRI_HELLO_LEN       3
#define FABRIC_MYRI_HELLO_ACK_LEN   5
#define FABRIC_MYRI_ROUTE_BIT       0x80
#define FABRIC_MYRI_MAX_ROUTE       24      /* route bytes: switch hops */
#define FABRIC_MYRI_MAX_PACKET      16384   /* packet bytes, without CRC */
#define FABRIC_MYRI_CRC_LEN         4
#define FABRIC_MYRI_SWITCH_PORTS    16      /* ports of the default switch */

/* The output port a route byte selects, or -1 when it is out of range. */
static inline int fabric_myri_out_port(uint8_t route_byte, unsigned in_port,
                                       unsigned ports)
{
    int off = route_byte & 0x3f;
    int out;

    if ((route_byte & 0xc0) != FABRIC_MYRI_ROUTE_BIT) {
        return -1;
    }
    if (off & 0x20) {
        off -= 0x40;
    }
    out = (int)in_port + off;
    return out >= 0 && out < (int)ports ? out : -1;
}

/*
 * Kind telegraphos (remote memory, docs/hw/telegraphos.md): one crossbar,
 * node i on port i, delivery in order for each source-destination pair,
 * no drops for congestion (a full port stops reading its senders).
 *
 * CONTROL HELLO      opcode, le16 node id                       (3 bytes)
 * CONTROL HELLO_ACK  opcode, le16 nodes                         (3 bytes)
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
 */
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

#define FABRIC_TGR_HELLO_LEN        3
#define FABRIC_TGR_HELLO_ACK_LEN    3
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

/*
 * The eth kind carries QEMU's `-netdev stream` framing instead: a 4-byte
 * big-endian length, then one Ethernet frame.
 */
#define FABRIC_ETH_LEN_PREFIX   4
#define FABRIC_ETH_MIN_FRAME    14
#define FABRIC_ETH_MAX_FRAME    (64 * 1024)

#endif
