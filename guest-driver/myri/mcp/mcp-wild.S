/*
 * A broken MCP for the driver's tests: loads from an address outside
 * SRAM and the I/O window, so the card halts it (HALT_LOAD, with the
 * address).  0x40000000 is beyond the largest SRAM (8 MiB).
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
	.section .text.start, "ax"
	.globl	_start
_start:
	li	t0, 0x40000000
	lw	t1, 0(t0)
1:	wfi
	j	1b
