/*
 * Start-up for the test firmware, linked at address 0: stack at the top of
 * SRAM (the size is the first I/O word), .bss cleared, then fw_main() and
 * wfi forever.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
	.text
	.globl	_start
_start:
	.option	push
	.option	norelax
	la	gp, __global_pointer$
	.option	pop
	lw	sp, -512(zero)		/* I/O word 0: the SRAM size */
	la	t0, __bss_start
	la	t1, _end
1:	bgeu	t0, t1, 2f
	sb	zero, 0(t0)
	addi	t0, t0, 1
	j	1b
2:	call	fw_main
3:	wfi
	j	3b
