/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Little-endian loads and stores of 16, 32 and 64 bits at any byte
 * address, done byte by byte: no alignment, padding or host byte order
 * assumed, and gcc turns them into single moves where it may.
 *
 * One set for everyone who reads or writes a little-endian layout by
 * hand: proto/ (its fabric_get_le* and fabric_put_le* are these), the
 * card's RV32 core (qemu-hw/rv32core.c), the Telegraphos export check
 * (qemu-hw/telegraphos-req.c) and the Myrinet firmware, which is
 * freestanding: so this header needs nothing but <stdint.h>.
 */
#ifndef VCLUSTER_LE_H
#define VCLUSTER_LE_H

#include <stdint.h>

/* The 16-bit forms take and give a uint32_t: no promotion to int. */
static inline uint32_t ld_le16(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t ld_le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t ld_le64(const uint8_t *p)
{
    return ld_le32(p) | (uint64_t)ld_le32(p + 4) << 32;
}

static inline void st_le16(uint8_t *p, uint32_t v)
{
    p[0] = v;
    p[1] = v >> 8;
}

static inline void st_le32(uint8_t *p, uint32_t v)
{
    p[0] = v;
    p[1] = v >> 8;
    p[2] = v >> 16;
    p[3] = v >> 24;
}

static inline void st_le64(uint8_t *p, uint64_t v)
{
    st_le32(p, v);
    st_le32(p + 4, v >> 32);
}

#endif
