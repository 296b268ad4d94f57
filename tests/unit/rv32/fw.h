/*
 * The test firmware's interface, shared by fw.c and test-rv32.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RV32_TEST_FW_H
#define RV32_TEST_FW_H

#include <stdint.h>

/* Input I/O words (index = offset / 4). */
enum {
    FW_IN_SRAM_SIZE,    /* start.S: the stack top */
    FW_IN_BUF,          /* CRC and sort input: address, bytes */
    FW_IN_LEN,
    FW_IN_FIB,          /* fib(n), recursive */
    FW_IN_DIV,          /* FwDivIn[ndiv] in SRAM */
    FW_IN_NDIV,
    FW_IN_DIV_OUT,      /* FwDivOut[ndiv] in SRAM */
};

/* Output I/O words, at offset 0x100 + 4 * index. */
enum {
    FW_OUT_CRC_BITWISE,
    FW_OUT_CRC_TABLE,
    FW_OUT_FIB,
    FW_OUT_SORT,
    FW_OUT_DONE,
    FW_OUT_WORDS,
};

#define FW_DONE_MAGIC 0x600dc0deu
#define FW_SORT_MAX 256

/* 64-bit division goes through libgcc (__udivdi3, __divdi3, ...). */
typedef struct FwDivIn {
    uint64_t un, ud;
    int64_t sn, sd;
} FwDivIn;

typedef struct FwDivOut {
    uint64_t uq, ur;
    int64_t sq, sr;
    uint64_t mul;
} FwDivOut;

#endif
