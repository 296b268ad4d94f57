/*
 * Test firmware for test-rv32: gcc-compiled code on the RV32IM core.
 * Inputs are I/O words (offsets 0x000-0x0ff), results go to I/O words
 * (0x100-0x1ff) and to SRAM; the host test computes the same things.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>

#include "fw.h"

#define IN(i)  (((volatile uint32_t *)0xfffffe00u)[i])
#define OUT(i) (((volatile uint32_t *)0xffffff00u)[i])

static uint32_t crc_table[256];         /* in .bss: start-up clears it */

static uint32_t crc32_bitwise(const uint8_t *p, uint32_t len)
{
    uint32_t crc = 0xffffffffu;

    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
        }
    }
    return ~crc;
}

static uint32_t crc32_table(const uint8_t *p, uint32_t len)
{
    uint32_t crc = 0xffffffffu;

    if (!crc_table[1]) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;

            for (int k = 0; k < 8; k++) {
                c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
            }
            crc_table[i] = c;
        }
    }
    while (len--) {
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

static uint32_t fib(uint32_t n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* Insertion sort on the stack; the checksum depends on the order. */
static uint32_t sort_checksum(const uint32_t *src, uint32_t n)
{
    uint32_t a[FW_SORT_MAX], sum = 0;

    if (n > FW_SORT_MAX) {
        n = FW_SORT_MAX;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = src[i], j = i;

        while (j > 0 && (int32_t)a[j - 1] > (int32_t)v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
    for (uint32_t i = 0; i < n; i++) {
        sum = sum * 31 + a[i];
    }
    return sum;
}

void fw_main(void)
{
    const uint8_t *buf = (const uint8_t *)IN(FW_IN_BUF);
    uint32_t len = IN(FW_IN_LEN);
    const FwDivIn *in = (const FwDivIn *)IN(FW_IN_DIV);
    FwDivOut *out = (FwDivOut *)IN(FW_IN_DIV_OUT);
    uint32_t npairs = IN(FW_IN_NDIV);

    OUT(FW_OUT_CRC_BITWISE) = crc32_bitwise(buf, len);
    OUT(FW_OUT_CRC_TABLE) = crc32_table(buf, len);
    OUT(FW_OUT_FIB) = fib(IN(FW_IN_FIB));
    OUT(FW_OUT_SORT) = sort_checksum((const uint32_t *)buf, len / 4);
    for (uint32_t i = 0; i < npairs; i++) {
        out[i].uq = in[i].un / in[i].ud;
        out[i].ur = in[i].un % in[i].ud;
        out[i].sq = in[i].sn / in[i].sd;
        out[i].sr = in[i].sn % in[i].sd;
        out[i].mul = in[i].un * in[i].ud;
    }
    OUT(FW_OUT_DONE) = FW_DONE_MAGIC;
}
