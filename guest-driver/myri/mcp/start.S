/*
 * The MCP's entry: the card starts the core at address 0 after the
 * driver releases reset.  Stack at the top of the image (mcp.ld puts it
 * after .bss, below MCP_CODE_MAX), .bss cleared, then mcp_main(), which
 * never returns.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
	.section .text.start, "ax"
	.globl	_start
_start:
	.option	push
	.option	norelax
	la	gp, __global_pointer$
	.option	pop
	la	sp, __stack_top
	la	t0, __bss_start
	la	t1, __bss_end
1:	bgeu	t0, t1, 2f		/* mcp.ld aligns both to 4 */
	sw	zero, 0(t0)
	addi	t0, t0, 4
	j	1b
2:	call	mcp_main
	ebreak				/* not reached */
