/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What pstest and psstress share: the byte pattern of their messages and
 * the checksum over it (each lays out its own header around them).
 */
#ifndef PS_TOOLS_PATTERN_H
#define PS_TOOLS_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* Byte i of message seq from src. */
static inline uint8_t pat(uint32_t src, uint32_t seq, size_t i)
{
	return (uint8_t)(src * 31 + seq * 7 + i * 13 + (i >> 8));
}

/* FNV-1a over n bytes. */
static inline uint32_t fnv(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

#endif /* PS_TOOLS_PATTERN_H */
