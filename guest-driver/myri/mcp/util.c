/*
 * The C library functions gcc may call in freestanding code, and RDP's
 * memset.  Payloads never come here (they move by DMA): these copy
 * headers and clear state, so word loops when aligned are enough.
 * Built with -fno-tree-loop-distribute-patterns, so gcc does not turn
 * the loops back into calls to themselves.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "mcp.h"

/* A word that may alias anything: the loops copy any type. */
typedef uint32_t __attribute__((may_alias)) Word;

static inline bool aligned4(uintptr_t a)
{
    return (a & 3) == 0;
}

void *memcpy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;

    if (aligned4((uintptr_t)d | (uintptr_t)s)) {
        for (; n >= 4; n -= 4, d += 4, s += 4) {
            *(Word *)d = *(const Word *)s;
        }
    }
    while (n--) {
        *d++ = *s++;
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    uint8_t *d = dst;
    uint32_t w = (uint8_t)c * 0x01010101u;

    while (n && !aligned4((uintptr_t)d)) {
        *d++ = c;
        n--;
    }
    for (; n >= 4; n -= 4, d += 4) {
        *(Word *)d = w;
    }
    while (n--) {
        *d++ = c;
    }
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const uint8_t *p = a, *q = b;

    for (; n; n--, p++, q++) {
        if (*p != *q) {
            return *p - *q;
        }
    }
    return 0;
}
