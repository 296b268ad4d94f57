/*
 * Kind ps1: the ParaStation board's payloads (docs/hw/parastation.md), on
 * the frame header of base.h.
 *
 * CONTROL HELLO      base.h
 * CONTROL HELLO_ACK  base.h, then u8 torus width, u8 height (0 and 0 for a
 *                    ring)
 * CONTROL ROUTES     opcode, le16 node id, le16 count, count route bytes
 *                    (enum fabric_ps1_route)
 * DATA               le32 header word (31:16 destination as sent, source
 *                    on delivery; 15:0 data word count 1..127), the data
 *                    words, one parity byte per data word, le32 CRC-32
 *                    (base.h) over the header word and the data words
 * CREDIT             le32: device -> fabric, RX FIFO bytes freed;
 *                    fabric -> device, one more insertion credit
 * BARRIER            u8 op, u8 sync line bits
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_PROTO_PS1_H
#define VCLUSTER_PROTO_PS1_H

#include "proto/base.h"

enum fabric_ps1_control_op {
    FABRIC_CTL_ROUTES = FABRIC_CTL_KIND_FIRST,
};

#define FABRIC_PS1_HELLO_ACK_EXTRA  2
#define FABRIC_PS1_HELLO_ACK_LEN    (FABRIC_HELLO_ACK_BASE_LEN + \
                                     FABRIC_PS1_HELLO_ACK_EXTRA)
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

_Static_assert(FABRIC_PS1_HELLO_ACK_EXTRA <= FABRIC_HELLO_ACK_EXTRA_MAX,
               "ps1 HELLO_ACK fields fit");
_Static_assert(FABRIC_PS1_DATA_LEN(FABRIC_PS1_MAX_WORDS) <= FABRIC_MAX_PAYLOAD,
               "the longest ps1 packet fits a frame");
_Static_assert(FABRIC_PS1_ROUTES_HDR_LEN + FABRIC_MAX_NODES <=
               FABRIC_MAX_PAYLOAD, "a full route table fits a frame");
_Static_assert(FABRIC_PS1_PKT_BYTES(FABRIC_PS1_MAX_WORDS) <= FABRIC_PS1_RX_FIFO,
               "the longest packet fits an empty RX FIFO");

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

/* The HELLO_ACK fields of base.h's `extra`. */
enum {
    FABRIC_PS1_ACK_WIDTH = 0,
    FABRIC_PS1_ACK_HEIGHT = 1,
};

/*
 * A ROUTES payload: node `node`'s table of `count` route bytes.  `out`
 * holds FABRIC_PS1_ROUTES_HDR_LEN + count bytes; returns that length.
 */
static inline size_t fabric_ps1_routes_encode(uint16_t node, uint16_t count,
                                              const uint8_t *table,
                                              uint8_t *out)
{
    out[0] = FABRIC_CTL_ROUTES;
    fabric_put_le16(out + 1, node);
    fabric_put_le16(out + 3, count);
    for (unsigned d = 0; d < count; d++) {
        out[FABRIC_PS1_ROUTES_HDR_LEN + d] = table[d];
    }
    return FABRIC_PS1_ROUTES_HDR_LEN + count;
}

/*
 * The header of a ROUTES payload; false when it is shorter than that.
 * The table follows at FABRIC_PS1_ROUTES_HDR_LEN.
 */
static inline bool fabric_ps1_routes_decode(const uint8_t *pl, size_t len,
                                            uint16_t *node, uint16_t *count)
{
    if (len < FABRIC_PS1_ROUTES_HDR_LEN || pl[0] != FABRIC_CTL_ROUTES) {
        return false;
    }
    *node = fabric_get_le16(pl + 1);
    *count = fabric_get_le16(pl + 3);
    return true;
}

/* A DATA header word: the node in 31:16, the data word count in 15:0. */
static inline uint32_t fabric_ps1_header_word(uint16_t node, unsigned count)
{
    return (uint32_t)node << 16 | (count & 0xffff);
}

/* The parity byte of a data word: bit b is the even parity of byte b. */
static inline uint8_t fabric_ps1_parity(uint32_t word)
{
    uint8_t p = 0;

    for (int b = 0; b < 4; b++) {
        p |= (__builtin_popcount((word >> (8 * b)) & 0xff) & 1) << b;
    }
    return p;
}

/*
 * Encode a DATA payload: `header` (fabric_ps1_header_word), the count
 * words of `words`, their parity bytes, the CRC.  `out` holds
 * FABRIC_PS1_DATA_LEN(count) bytes; returns that length.
 */
static inline size_t fabric_ps1_data_encode(uint32_t header,
                                            const uint32_t *words,
                                            uint8_t *out)
{
    unsigned count = header & 0xffff;
    size_t crc_at = 4 + 4 * (size_t)count;

    fabric_put_le32(out, header);
    for (unsigned i = 0; i < count; i++) {
        fabric_put_le32(out + 4 + 4 * i, words[i]);
        out[crc_at + i] = fabric_ps1_parity(words[i]);
    }
    fabric_put_le32(out + crc_at + count, fabric_crc32(out, crc_at));
    return FABRIC_PS1_DATA_LEN(count);
}

/*
 * The data word count a DATA payload of `len` bytes has room for, or 0
 * when no count 1..FABRIC_PS1_MAX_WORDS gives that length.  The length is
 * framing, which the wire does not corrupt; the header word can be.
 */
static inline unsigned fabric_ps1_data_count(size_t len)
{
    size_t count = len < 8 ? 0 : (len - 8) / 5;

    if (count < 1 || count > FABRIC_PS1_MAX_WORDS ||
        len != FABRIC_PS1_DATA_LEN(count)) {
        return 0;
    }
    return count;
}

/* Word i of a DATA payload: 0 is the header word, 1..count the data. */
static inline uint32_t fabric_ps1_data_word(const uint8_t *pl, unsigned i)
{
    return fabric_get_le32(pl + 4 * i);
}

/*
 * True when a DATA payload of `count` data words (fabric_ps1_data_count)
 * arrived intact: its header word says `count`, the CRC matches, every
 * parity byte matches (bits 7:4 are zero, so any flip there is an error).
 */
static inline bool fabric_ps1_data_intact(const uint8_t *pl, unsigned count)
{
    size_t crc_at = 4 + 4 * (size_t)count;

    if ((fabric_ps1_data_word(pl, 0) & 0xffff) != count ||
        fabric_crc32(pl, crc_at) != fabric_get_le32(pl + crc_at + count)) {
        return false;
    }
    for (unsigned i = 0; i < count; i++) {
        if (fabric_ps1_parity(fabric_ps1_data_word(pl, 1 + i)) !=
            pl[crc_at + i]) {
            return false;
        }
    }
    return true;
}

/*
 * Put `node` in bits 31:16 of a DATA payload's header word (the fabric
 * replaces the destination by the source) and fix the CRC for exactly the
 * bits changed.  CRC-32 is affine: crc(a ^ d) = crc(a) ^ crc(d) ^ crc(0)
 * for equal lengths, so corruption on the way stays detectable.
 */
static inline void fabric_ps1_data_set_node(uint8_t *pl, unsigned count,
                                            uint16_t node)
{
    static const uint8_t zeros[4 + 4 * FABRIC_PS1_MAX_WORDS];
    uint8_t delta[sizeof(zeros)] = { 0 };
    size_t covered = 4 + 4 * (size_t)count;
    uint8_t *crc_at = pl + covered + count;
    uint32_t old = fabric_get_le32(pl);
    uint32_t new = fabric_ps1_header_word(node, old & 0xffff);

    if (old == new) {
        return;
    }
    fabric_put_le32(pl, new);
    fabric_put_le32(delta, old ^ new);
    fabric_put_le32(crc_at, fabric_get_le32(crc_at) ^
                    fabric_crc32(delta, covered) ^
                    fabric_crc32(zeros, covered));
}

#endif
