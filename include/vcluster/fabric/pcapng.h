/*
 * The pcapng format as our traces use it: block types, option codes, the
 * least block lengths, the link types and flags fabricd records, and the
 * helpers that build a block in a GByteArray.  fabricd's writer
 * (daemon/fabricd/capture.c), the launcher's reader (host-cli/trace.c) and
 * the tests all take them from here.  Everything is little-endian, as our
 * writer writes it; docs/wire-protocol.md describes what fabricd records.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_FABRIC_PCAPNG_H
#define VCLUSTER_FABRIC_PCAPNG_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/base.h"     /* fabric_put_le16/32 */

/* Block types */
#define PCAPNG_BT_SHB               0x0a0d0d0au /* Section Header Block */
#define PCAPNG_BT_IDB               0x00000001u /* Interface Description */
#define PCAPNG_BT_PB                0x00000002u /* obsolete Packet Block */
#define PCAPNG_BT_SPB               0x00000003u /* Simple Packet Block */
#define PCAPNG_BT_EPB               0x00000006u /* Enhanced Packet Block */

/* The SHB's byte-order magic, as written and as a big-endian file shows it */
#define PCAPNG_BYTE_ORDER_MAGIC     0x1a2b3c4du
#define PCAPNG_BYTE_ORDER_SWAPPED   0x4d3c2b1au
#define PCAPNG_VERSION_MAJOR        1
#define PCAPNG_VERSION_MINOR        0

/* Option codes (the same code means different things in different blocks) */
#define PCAPNG_OPT_ENDOFOPT         0
#define PCAPNG_OPT_COMMENT          1
#define PCAPNG_OPT_SHB_USERAPPL     4
#define PCAPNG_OPT_IF_NAME          2
#define PCAPNG_OPT_IF_TSRESOL       9
#define PCAPNG_OPT_IF_TSOFFSET      14
#define PCAPNG_OPT_EPB_FLAGS        2

/* Least lengths of whole blocks: header, fixed fields, trailing length */
#define PCAPNG_SHB_MIN_LEN          28
#define PCAPNG_IDB_MIN_LEN          20
#define PCAPNG_EPB_MIN_LEN          32
/* Timestamp resolution of an interface without if_tsresol: microseconds */
#define PCAPNG_DEFAULT_TSRESOL      6

/* Link types fabricd records */
#define PCAP_LINKTYPE_ETHERNET      1
#define PCAP_LINKTYPE_USER0         147     /* fabric header + payload */

/* epb_flags bits */
#define PCAPNG_EPB_INBOUND          0x00000001u
#define PCAPNG_EPB_CRC_ERROR        0x01000000u

static inline void pcapng_put16(GByteArray *b, uint16_t v)
{
    uint8_t le[2];

    fabric_put_le16(le, v);
    g_byte_array_append(b, le, 2);
}

static inline void pcapng_put32(GByteArray *b, uint32_t v)
{
    uint8_t le[4];

    fabric_put_le32(le, v);
    g_byte_array_append(b, le, 4);
}

/* Zeros up to the next multiple of 4 bytes: every field is 32-bit aligned. */
static inline void pcapng_pad4(GByteArray *b)
{
    static const uint8_t zeros[3];

    g_byte_array_append(b, zeros, (4 - b->len % 4) % 4);
}

static inline void pcapng_put_option(GByteArray *b, uint16_t code,
                                     const void *value, uint16_t len)
{
    pcapng_put16(b, code);
    pcapng_put16(b, len);
    g_byte_array_append(b, value, len);
    pcapng_pad4(b);
}

/* The end of a block's option list. */
static inline void pcapng_put_endofopt(GByteArray *b)
{
    pcapng_put16(b, PCAPNG_OPT_ENDOFOPT);
    pcapng_put16(b, 0);
}

/* Start a block at the end of `b`: its type and a length to be patched. */
static inline void pcapng_block_begin(GByteArray *b, uint32_t type)
{
    pcapng_put32(b, type);
    pcapng_put32(b, 0);
}

/*
 * End the block that starts at byte `start` of `b`: append its total
 * length and write it into the header too.
 */
static inline void pcapng_block_end(GByteArray *b, size_t start)
{
    uint32_t len = b->len - start + 4;

    pcapng_put32(b, len);
    fabric_put_le32(b->data + start + 4, len);
}

#endif
