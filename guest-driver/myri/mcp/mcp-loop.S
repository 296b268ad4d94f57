/*
 * A broken MCP for the driver's tests: spins forever without wfi and
 * without kicking the watchdog, so the card halts it (HALT_WDOG).
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
	.section .text.start, "ax"
	.globl	_start
_start:
1:	addi	t0, t0, 1
	j	1b
