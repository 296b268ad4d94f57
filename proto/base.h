/*
 * vcluster fabric wire protocol, the part every kind shares: the frame
 * header and the CONTROL frames that open a link (HELLO, HELLO_ACK,
 * REJECT).  Each kind's payloads are in its own header beside this one
 * (ps1.h, myrinet.h, telegraphos.h; eth.h for the eth kind's framing).
 * The QEMU devices (through the fabric-link client), fabricd and the tests
 * all include these headers; docs/wire-protocol.md describes every field.
 *
 * A frame is a fixed 32-byte little-endian header followed by `len` payload
 * bytes.  Encoding is done byte by byte so the header has no padding or
 * host-endianness assumptions.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_PROTO_BASE_H
#define VCLUSTER_PROTO_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vcluster/le.h"

#define FABRIC_MAGIC            0x42464356u     /* "VCFB" on the wire */
#define FABRIC_VERSION          1
#define FABRIC_HDR_LEN          32
#define FABRIC_MAX_PAYLOAD      (64 * 1024 + 256)

/* Node id meaning "none": a routed frame, or a frame from the fabric. */
#define FABRIC_NODE_NONE        0xffffu
/* Destination meaning "every node" (barrier release, broadcast). */
#define FABRIC_NODE_ALL         0xfffeu
#define FABRIC_MAX_NODES        1024
/*
 * The most a device queues for fabricd (bytes) while fabricd does not read
 * its socket; frames beyond are dropped and counted (qemu-hw/fabric-link.h).
 */
#define FABRIC_LINK_TXQ_MAX     (4u << 20)

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

/* The proto API's names for the shared little-endian helpers */
static inline void fabric_put_le16(uint8_t *p, uint16_t v)
{
    st_le16(p, v);
}

static inline void fabric_put_le32(uint8_t *p, uint32_t v)
{
    st_le32(p, v);
}

static inline void fabric_put_le64(uint8_t *p, uint64_t v)
{
    st_le64(p, v);
}

static inline uint16_t fabric_get_le16(const uint8_t *p)
{
    return ld_le16(p);
}

static inline uint32_t fabric_get_le32(const uint8_t *p)
{
    return ld_le32(p);
}

static inline uint64_t fabric_get_le64(const uint8_t *p)
{
    return ld_le64(p);
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
 * CONTROL frames start with a one-byte opcode.  Opcodes below 16 are the
 * same for every kind; each kind's header names its own from 16 up.
 *
 * HELLO      device -> fabric: opcode, le16 the node id the device
 *            believes it is, then an optional flags byte
 *            (FABRIC_HELLO_F_*; absent means 0).  It opens the link
 *            and, sent again, restarts the node.
 * HELLO_ACK  fabric -> device: opcode, le16 the fabric's node count, then
 *            0..FABRIC_HELLO_ACK_EXTRA_MAX bytes that the kind defines.
 * REJECT     fabric -> device: opcode, then a reason in printable ASCII of
 *            at most FABRIC_REASON_MAX bytes, not terminated.
 */
enum fabric_control_op {
    FABRIC_CTL_HELLO = 1,
    FABRIC_CTL_HELLO_ACK = 2,
    FABRIC_CTL_REJECT = 3,
    FABRIC_CTL_KIND_FIRST = 16,
};

#define FABRIC_HELLO_LEN                3       /* without the flags */
#define FABRIC_HELLO_MAX_LEN            4       /* with the flags byte */
/* The device runs lock-step: its time is granted by SYNC (proto/sync.h). */
#define FABRIC_HELLO_F_LOCKSTEP         0x01
#define FABRIC_HELLO_F_MASK             0x01
#define FABRIC_HELLO_ACK_BASE_LEN       3
#define FABRIC_HELLO_ACK_EXTRA_MAX      2
#define FABRIC_REASON_MAX               160
#define FABRIC_REJECT_MAX_LEN           (1 + FABRIC_REASON_MAX)

_Static_assert(FABRIC_REJECT_MAX_LEN <= FABRIC_MAX_PAYLOAD,
               "a REJECT fits a frame");

typedef struct FabricHelloAck {
    uint16_t nodes;
    uint8_t extra_len;
    uint8_t extra[FABRIC_HELLO_ACK_EXTRA_MAX];
} FabricHelloAck;

/*
 * The HELLO payload of node `node` (buf holds FABRIC_HELLO_MAX_LEN bytes);
 * returns its length: the flags byte is sent only when flags are set, so a
 * free-running device's HELLO is the same as before lock-step existed.
 */
static inline size_t fabric_hello_encode(uint16_t node, uint8_t flags,
                                         uint8_t *buf)
{
    buf[0] = FABRIC_CTL_HELLO;
    fabric_put_le16(buf + 1, node);
    if (!flags) {
        return FABRIC_HELLO_LEN;
    }
    buf[3] = flags;
    return FABRIC_HELLO_MAX_LEN;
}

/*
 * False unless `pl` is a HELLO: 3 bytes, or 4 with known flags of which
 * one is set; *node is then the claimed id and *flags its flags.
 */
static inline bool fabric_hello_decode(const uint8_t *pl, size_t len,
                                       uint16_t *node, uint8_t *flags)
{
    if ((len != FABRIC_HELLO_LEN && len != FABRIC_HELLO_MAX_LEN) ||
        pl[0] != FABRIC_CTL_HELLO) {
        return false;
    }
    *node = fabric_get_le16(pl + 1);
    *flags = len == FABRIC_HELLO_MAX_LEN ? pl[3] : 0;
    /* the flags byte is sent only when a flag is set */
    return (len == FABRIC_HELLO_LEN || *flags) &&
           !(*flags & ~FABRIC_HELLO_F_MASK);
}

/* buf holds FABRIC_HELLO_ACK_BASE_LEN + extra_len bytes; returns that. */
static inline size_t fabric_hello_ack_encode(const FabricHelloAck *ack,
                                             uint8_t *buf)
{
    buf[0] = FABRIC_CTL_HELLO_ACK;
    fabric_put_le16(buf + 1, ack->nodes);
    for (unsigned i = 0; i < ack->extra_len; i++) {
        buf[FABRIC_HELLO_ACK_BASE_LEN + i] = ack->extra[i];
    }
    return FABRIC_HELLO_ACK_BASE_LEN + ack->extra_len;
}

/*
 * False unless `pl` is a HELLO_ACK with at least the `extra_len` bytes the
 * kind defines (later versions may append more: they are ignored).
 */
static inline bool fabric_hello_ack_decode(const uint8_t *pl, size_t len,
                                           unsigned extra_len,
                                           FabricHelloAck *ack)
{
    if (extra_len > FABRIC_HELLO_ACK_EXTRA_MAX ||
        len < FABRIC_HELLO_ACK_BASE_LEN + extra_len ||
        pl[0] != FABRIC_CTL_HELLO_ACK) {
        return false;
    }
    ack->nodes = fabric_get_le16(pl + 1);
    ack->extra_len = extra_len;
    for (unsigned i = 0; i < extra_len; i++) {
        ack->extra[i] = pl[FABRIC_HELLO_ACK_BASE_LEN + i];
    }
    return true;
}

/*
 * The REJECT payload for `reason`, cut at FABRIC_REASON_MAX bytes and with
 * anything unprintable as '?'; buf holds FABRIC_REJECT_MAX_LEN bytes.
 */
static inline size_t fabric_reject_encode(const char *reason, uint8_t *buf)
{
    size_t n = 0;

    buf[0] = FABRIC_CTL_REJECT;
    for (; n < FABRIC_REASON_MAX && reason[n]; n++) {
        char c = reason[n];

        buf[1 + n] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    return 1 + n;
}

/*
 * False unless `pl` is a REJECT.  The reason goes to `out` (`size` bytes,
 * at least 1) as a terminated string, cut to fit; a peer's unprintable
 * bytes become '?' so that they cannot reach a log or terminal as such.
 */
static inline bool fabric_reject_decode(const uint8_t *pl, size_t len,
                                        char *out, size_t size)
{
    size_t n = 0;

    if (len < 1 || pl[0] != FABRIC_CTL_REJECT) {
        return false;
    }
    for (; n + 1 < size && n + 1 < len; n++) {
        uint8_t c = pl[1 + n];

        out[n] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[n] = '\0';
    return true;
}

/*
 * CRC-32 of IEEE 802.3 (reflected, polynomial 0xedb88320), the same value
 * as zlib's crc32(0, data, len), four bits at a time.  The ps1 DATA
 * encoding and the Myrinet packet trailer use it.
 */
static inline uint32_t fabric_crc32(const uint8_t *data, size_t len)
{
    static const uint32_t nibble[16] = {
        0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
        0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
        0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
        0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
    };
    uint32_t crc = 0xffffffffu;

    for (size_t i = 0; i < len; i++) {
        crc ^= data[i];
        crc = (crc >> 4) ^ nibble[crc & 0xf];
        crc = (crc >> 4) ^ nibble[crc & 0xf];
    }
    return ~crc;
}

#endif
