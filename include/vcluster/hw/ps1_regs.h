/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ParaStation board register interface, version 1 (docs/hw/parastation.md).
 *
 * Shared by the kernel driver and by user space, which maps BAR0 through
 * /dev/ps1 and drives the FIFOs itself. Only plain #defines, so that it
 * builds in both worlds.
 */
#ifndef _PS1_REGS_H
#define _PS1_REGS_H

#define PS1_PCI_VENDOR		0x1234
#define PS1_PCI_DEVICE		0x5053

#define PS1_REGS_SIZE		0x1000	/* BAR0 */

#define PS1_REG_ID		0x00
#define PS1_REG_SREG		0x04
#define PS1_REG_CREG		0x08
#define PS1_REG_ISR		0x0c
#define PS1_REG_NODE		0x10
#define PS1_REG_FABRIC		0x14
#define PS1_REG_RT_INDEX	0x18
#define PS1_REG_RT_ENTRY	0x1c
#define PS1_REG_NREG		0x20
#define PS1_REG_RX_HEAD		0x24
#define PS1_REG_TX_FREE		0x28
#define PS1_REG_RX_USED		0x2c
#define PS1_REG_BARRIER		0x30
#define PS1_REG_BARRIER_MASK	0x34
#define PS1_REG_RT_COMMIT	0x38
/* 15:0 TX words still expected, 31:16 RX words left: a packet half done */
#define PS1_REG_PKT_STATE	0x3c
#define PS1_REG_CNT_TX_PKTS	0x40
#define PS1_REG_CNT_RX_PKTS	0x44
#define PS1_REG_CNT_PARITY	0x48
#define PS1_REG_CNT_BARRIERS	0x4c

/*
 * WAIT window (version 2): a load at PS1_REG_WAIT + 4 * cond returns SREG
 * once one of the PS1_WAIT_* conditions in cond holds or an error bit is
 * set. Until then the load stalls, at most the board's wait timeout, after
 * which it returns SREG as it is. Interrupts are taken during a stall.
 */
#define PS1_REG_WAIT		0x100
#define PS1_WAIT_WINDOW		0x100
#define PS1_WAIT_PKT		0x01u	/* SREG.PKT_READY */
#define PS1_WAIT_TX		0x02u	/* not SREG.TX_FULL */
#define PS1_WAIT_BARRIER_SHIFT	2	/* SREG.BAR_DONE of line n: bit 2+n */
#define PS1_WAIT_BARRIER_MASK	0x3cu
#define PS1_WAIT_ADDR(cond)	(PS1_REG_WAIT + 4 * (cond))
/* Whether SREG ends a WAIT read for cond (no condition: at once) */
#define PS1_WAIT_MET(sreg, cond)					\
	(!(cond) || ((sreg) & PS1_SREG_ERR_MASK) ||			\
	 (((cond) & PS1_WAIT_PKT) && ((sreg) & PS1_SREG_PKT_READY)) ||	\
	 (((cond) & PS1_WAIT_TX) && !((sreg) & PS1_SREG_TX_FULL)) ||	\
	 ((sreg) & ((((cond) & PS1_WAIT_BARRIER_MASK) >>		\
		     PS1_WAIT_BARRIER_SHIFT) << PS1_SREG_BAR_DONE_SHIFT)))

/* ID: "PS" in 31:16, register-interface version in 15:0 */
#define PS1_ID_MAGIC		0x5053
#define PS1_ID_VERSION		0x0002
#define PS1_ID_VALUE		0x50530002

/* SREG */
#define PS1_SREG_TX_EMPTY		0x00000001u
#define PS1_SREG_TX_HALF		0x00000002u
#define PS1_SREG_TX_FULL		0x00000004u
#define PS1_SREG_RX_EMPTY		0x00000008u
#define PS1_SREG_RX_HALF		0x00000010u
#define PS1_SREG_RX_FULL		0x00000020u
#define PS1_SREG_PKT_READY		0x00000040u
#define PS1_SREG_LINK			0x00000080u
#define PS1_SREG_BAR_WAIT_SHIFT		8
#define PS1_SREG_BAR_WAIT		0x00000f00u
#define PS1_SREG_BAR_DONE_SHIFT		12
#define PS1_SREG_BAR_DONE		0x0000f000u
#define PS1_SREG_ERR_PARITY		0x00010000u
#define PS1_SREG_ERR_TX_HEADER		0x00020000u
#define PS1_SREG_ERR_TX_OVERFLOW	0x00040000u
#define PS1_SREG_ERR_RX_UNDERFLOW	0x00080000u
#define PS1_SREG_ERR_LINK		0x00100000u
#define PS1_SREG_ERR_CONFIG		0x00200000u
#define PS1_SREG_ERR_MASK		0x003f0000u

/* CREG */
#define PS1_CREG_IE_PKT		0x00000001u
#define PS1_CREG_IE_ERR		0x00000002u
#define PS1_CREG_IE_BARRIER	0x00000004u
#define PS1_CREG_IE_TX		0x00000008u
#define PS1_CREG_IE_MASK	0xfu
#define PS1_CREG_CLEAR_ERR	0x00000100u
#define PS1_CREG_RESET		0x80000000u

/* ISR (RW1C); the same bit positions as the CREG enables */
#define PS1_ISR_PKT		0x00000001u
#define PS1_ISR_ERR		0x00000002u
#define PS1_ISR_BARRIER		0x00000004u
#define PS1_ISR_TX		0x00000008u
#define PS1_ISR_MASK		0xfu

/* FABRIC */
#define PS1_FABRIC_NODES(v)	((v) & 0xffffu)
#define PS1_FABRIC_WIDTH(v)	(((v) >> 16) & 0xffu)
#define PS1_FABRIC_HEIGHT(v)	(((v) >> 24) & 0xffu)

/* RT_ENTRY values */
#define PS1_RT_HERE		0
#define PS1_RT_X		1
#define PS1_RT_Y		2
#define PS1_RT_INVALID		3

/* BARRIER */
#define PS1_BARRIER_LINES	4
#define PS1_BARRIER_WAIT_MASK	0xfu
#define PS1_BARRIER_DONE_SHIFT	8
#define PS1_BARRIER_DONE_MASK	0x00000f00u

/* Packet header: destination (TX) or source (RX) in 31:16, words in 15:0 */
#define PS1_HDR(node, words)	((((node) & 0xffffu) << 16) | ((words) & 0xffffu))
#define PS1_HDR_NODE(h)		(((h) >> 16) & 0xffffu)
#define PS1_HDR_WORDS(h)	((h) & 0xffffu)
#define PS1_PKT_MAX_WORDS	127
#define PS1_FIFO_BYTES		1024
#define PS1_TX_MAX_PKT_BYTES	512	/* TX_FULL: free < one max packet */

#endif /* _PS1_REGS_H */
