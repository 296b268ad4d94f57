/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * LANai-style Myrinet card register interface, version 1
 * (docs/hw/lanai.md).
 *
 * Shared by the QEMU device (qemu-hw/lanai.c), the driver (myri.ko), the
 * firmware running on the card (the MCP) and user space. Only plain
 * #defines, so that it builds in all of them.
 *
 * All registers are 32 bits wide and little-endian (the real LANai's were
 * big-endian). Offsets named LANAI_REG_* are inside the special-register
 * block, which the host sees in BAR0 at LANAI_SPECIAL_OFFSET and the
 * card's core at LANAI_CORE_REG_BASE.
 */
#ifndef _LANAI_REGS_H
#define _LANAI_REGS_H

#define LANAI_PCI_VENDOR	0x14c1	/* Myricom */
#define LANAI_PCI_DEVICE	0x8043	/* LANai9-era boards */

/* ---- BAR0: 16 MiB, 64-bit memory ---- */

#define LANAI_BAR0_SIZE		0x1000000
#define LANAI_SRAM_OFFSET	0x000000	/* SRAM, CFG_SRAM_SIZE bytes */
#define LANAI_SRAM_WINDOW	0x800000	/* largest SRAM */
#define LANAI_CONFIG_OFFSET	0x800000	/* LANAI_CFG_*, LANAI_CNT_* */
#define LANAI_CONFIG_SIZE	0x4000
#define LANAI_SPECIAL_OFFSET	0x804000	/* LANAI_REG_* */
#define LANAI_SPECIAL_SIZE	0x4000
#define LANAI_DOORBELL_OFFSET	0x808000	/* one page per context */
#define LANAI_DOORBELL_PAGE	0x1000
#define LANAI_DOORBELL_CTXS	64

#define LANAI_SRAM_MIN		0x40000		/* sram-size: 256 KiB ... */
#define LANAI_SRAM_MAX		0x800000	/* ... 8 MiB, a power of 2 */

/* Host view (BAR0 offset) of a special register */
#define LANAI_HOST_REG(reg)	(LANAI_SPECIAL_OFFSET + (reg))
/* Core view: lw/sw rd, (reg - 0x200)(zero) */
#define LANAI_CORE_REG_BASE	0xfffffe00u
#define LANAI_CORE_REG(reg)	(LANAI_CORE_REG_BASE + (reg))

/* ---- config block (host only; offsets from LANAI_CONFIG_OFFSET) ---- */

#define LANAI_CFG_ID		0x00	/* RO LANAI_ID_VALUE */
#define LANAI_CFG_SRAM_SIZE	0x04	/* RO bytes */
#define LANAI_CFG_CLOCK_MHZ	0x08	/* RO core clock */
#define LANAI_CFG_NODE		0x0c	/* RO this card's node id */
#define LANAI_CFG_FABRIC_NODES	0x10	/* RO nodes in the fabric, 0: no link */
#define LANAI_CFG_FABRIC_PORT	0x14	/* RO 15:8 switch, 7:0 port */
#define LANAI_CFG_CORE_STATE	0x18	/* RO LANAI_CORE_* */
#define LANAI_CFG_HALT_CAUSE	0x1c	/* RO LANAI_HALT_* */
#define LANAI_CFG_HALT_PC	0x20	/* RO */
#define LANAI_CFG_HALT_ADDR	0x24	/* RO */
#define LANAI_CFG_INSN_LO	0x28	/* RO; reading it latches INSN_HI */
#define LANAI_CFG_INSN_HI	0x2c	/* RO */
#define LANAI_CFG_WDOG_MS	0x30	/* RW watchdog, 0: off */
#define LANAI_CFG_VERSION	0x34	/* RO LANAI_VERSION */
#define LANAI_CFG_LINK		0x38	/* RO LANAI_LINK_* */
#define LANAI_CFG_CONTROL	0x40	/* board control, LANAI_CTRL_* */

#define LANAI_ID_VALUE		0x4c4e4149	/* "LNAI" */
#define LANAI_VERSION		1

/* CFG_LINK */
#define LANAI_LINK_CONNECTED	0x1	/* the socket to fabricd is open */
#define LANAI_LINK_UP		0x2	/* fabricd acknowledged this node */
#define LANAI_LINK_REJECTED	0x4	/* fabricd refused this node */

/* CFG_CONTROL: write 1 to act; reads RESET_ON and INT_EN as states */
#define LANAI_CTRL_RESET_OFF	0x80000000u	/* start the core at pc 0 */
#define LANAI_CTRL_RESET_ON	0x40000000u	/* hold the core in reset */
#define LANAI_CTRL_INT_EN	0x02000000u	/* host interrupt enable */
#define LANAI_CTRL_INT_DIS	0x01000000u

/* CFG_CORE_STATE */
#define LANAI_CORE_RESET	0
#define LANAI_CORE_RUN		1
#define LANAI_CORE_SLEEP	2	/* in wfi */
#define LANAI_CORE_HALT		3

/* CFG_HALT_CAUSE */
#define LANAI_HALT_NONE		0
#define LANAI_HALT_FETCH	1	/* pc outside SRAM or not 4-aligned */
#define LANAI_HALT_LOAD		2	/* load outside SRAM or registers */
#define LANAI_HALT_STORE	3	/* store outside SRAM or registers */
#define LANAI_HALT_MISALIGNED	4	/* load or store not aligned */
#define LANAI_HALT_ILLEGAL	5	/* not an RV32IM instruction */
#define LANAI_HALT_EBREAK	6	/* HALT_ADDR = a0 */
#define LANAI_HALT_ECALL	7	/* HALT_ADDR = a0 */
#define LANAI_HALT_WDOG		8	/* ran WDOG_MS without wfi or kick */

/* Counters (RO, offsets from LANAI_CONFIG_OFFSET); zeroed by PCI reset */
#define LANAI_CNT_TX_PACKETS	0x100	/* packets sent */
#define LANAI_CNT_RX_PACKETS	0x104	/* packets delivered to SRAM */
#define LANAI_CNT_RX_CRC	0x108	/* ... with a CRC error */
#define LANAI_CNT_RX_LEN	0x10c	/* ... too long or too short */
#define LANAI_CNT_RX_ILLEGAL	0x110	/* ... starting with a route byte */
#define LANAI_CNT_RX_IN_RESET	0x114	/* absorbed: core in reset (or no link) */
#define LANAI_CNT_RX_FULL	0x118	/* times the receive queue filled up */
#define LANAI_CNT_TX_DISCARDED	0x11c	/* sends dropped, SSTAT says why */
#define LANAI_CNT_DMA_ERR	0x120	/* host DMA chains stopped by errors */
#define LANAI_CNT_DB_DROPPED	0x124	/* doorbells lost: FIFO full or off */
#define LANAI_CNT_LAG_DROPS	0x128	/* times the core fell too far behind */
#define LANAI_CNT_RX_QUEUED	0x12c	/* frames waiting in the card now */

/* ---- special registers (offsets in the block, host and core) ---- */

#define LANAI_REG_ISR		0x50	/* interrupt status */
#define LANAI_REG_EIMR		0x58	/* host interrupt mask */
#define LANAI_REG_IMR		0x5c	/* wfi wake mask */
#define LANAI_REG_IT0		0x60	/* interval timers: us to TIME0 */
#define LANAI_REG_RTC		0x68	/* us, wraps */
#define LANAI_REG_PULSE		0xb8	/* LANAI_PULSE_* */
#define LANAI_REG_IT1		0xc0
#define LANAI_REG_IT2		0xc8
#define LANAI_REG_RMP		0xe0	/* receive pointer */
#define LANAI_REG_RML		0xe8	/* receive limit; a write arms */
#define LANAI_REG_SMP		0xf0	/* send pointer */
#define LANAI_REG_SML		0x100	/* send limit: add [SMP, SML) */
#define LANAI_REG_SMLT		0x108	/* send limit with tail: add, send */
#define LANAI_REG_MYRINET	0x130	/* RO LANAI_MYRINET_CRC32 */
#define LANAI_REG_DEBUG		0x138	/* WO a character for QEMU's log */
#define LANAI_REG_RSTAT		0x160	/* RO LANAI_RSTAT_* */
#define LANAI_REG_SSTAT		0x164	/* RO LANAI_SSTAT_* */
#define LANAI_REG_RLEN		0x168	/* RO bytes of the last receive */
#define LANAI_REG_DMA_HEAD	0x170	/* first descriptor of a chain */
#define LANAI_REG_DMA_STS	0x178	/* RO LANAI_DMA_STS_* */
#define LANAI_REG_DMA_ERR_DESC	0x180	/* RO the descriptor that failed */
#define LANAI_REG_DB_BASE	0x188	/* doorbell FIFO: SRAM address */
#define LANAI_REG_DB_SIZE	0x18c	/* entries, power of 2; 0: off */
#define LANAI_REG_DB_PROD	0x190	/* RO entries written (free-running) */
#define LANAI_REG_DB_CONS	0x194	/* entries consumed (free-running) */
#define LANAI_REG_HOST_NOTIFY	0x198	/* WO context: wake its waiters */
#define LANAI_REG_WDOG_KICK	0x19c	/* WO restart the watchdog */
#define LANAI_REG_CLOCK		0x1f8	/* RO core clock in MHz */

/*
 * ISR. The core clears a bit by writing 1 to it, except HOST_SIG, which a
 * core write sets; the host clears by writing 1, except LANAI_SIG, which
 * a host write sets. DOORBELL and SEND are levels and cannot be cleared.
 */
#define LANAI_ISR_RECV		0x00000002u	/* a packet is in SRAM */
#define LANAI_ISR_BUFF		0x00000004u	/* receive buffer full */
#define LANAI_ISR_SEND		0x00000008u	/* level: send idle */
#define LANAI_ISR_TIME0		0x00000040u
#define LANAI_ISR_TIME1		0x00000080u
#define LANAI_ISR_WAKE0		0x00001000u	/* DMA chain done */
#define LANAI_ISR_TIME2		0x00002000u
#define LANAI_ISR_MEM		0x00004000u	/* net DMA outside SRAM */
#define LANAI_ISR_LINK_DOWN	0x00010000u
#define LANAI_ISR_ILLEGAL_RECEIVED 0x00100000u
#define LANAI_ISR_RX_TOO_LONG	0x00200000u
#define LANAI_ISR_TX_TOO_LONG	0x00400000u
#define LANAI_ISR_RX_CRC	0x02000000u
#define LANAI_ISR_DMA_ERR	0x04000000u
#define LANAI_ISR_DOORBELL	0x08000000u	/* level: DB_PROD != CONS */
#define LANAI_ISR_CORE_HALT	0x10000000u
#define LANAI_ISR_LANAI_SIG	0x20000000u	/* host -> core */
#define LANAI_ISR_HOST_SIG	0x40000000u	/* core -> host */

/* PULSE */
#define LANAI_PULSE_DMA_START	0x1	/* run the chain at DMA_HEAD */

/* MYRINET */
#define LANAI_MYRINET_CRC32	0x2	/* always on */

/* RSTAT: the last receive */
#define LANAI_RSTAT_DONE	0x00000001u
#define LANAI_RSTAT_CRC_ERR	0x00000002u
#define LANAI_RSTAT_TOO_LONG	0x00000004u	/* truncated: RLEN bytes kept */
#define LANAI_RSTAT_SHORT	0x00000008u	/* under LANAI_MIN_PACKET */
#define LANAI_RSTAT_ILLEGAL	0x00000010u	/* starts with a route byte */
#define LANAI_RSTAT_BAD_RANGE	0x00000020u	/* [RMP, RML) not in SRAM */
#define LANAI_RSTAT_ARMED	0x80000000u	/* waiting for a packet */

/* SSTAT: the last packet ended by SMLT */
#define LANAI_SSTAT_SENT	0x00000001u
#define LANAI_SSTAT_TOO_LONG	0x00000002u	/* > LANAI_MAX_PACKET */
#define LANAI_SSTAT_BAD_ROUTE	0x00000004u	/* route too long, no packet */
#define LANAI_SSTAT_BAD_RANGE	0x00000008u	/* a segment not in SRAM */
#define LANAI_SSTAT_NO_LINK	0x00000010u	/* the fabric is not up */

/* Packets: route bytes (bit 7 set), then at most MAX_PACKET bytes */
#define LANAI_ROUTE_BIT		0x80
#define LANAI_MAX_ROUTE		24
#define LANAI_MAX_PACKET	16384
#define LANAI_MIN_PACKET	4	/* the packet type */

/* ---- host DMA: chained descriptors in SRAM ---- */

#define LANAI_DMA_DESC_SIZE	24
#define LANAI_DMA_DESC_ALIGN	8
#define LANAI_DMA_DESC_NEXT	0	/* next | LANAI_DMA_NEXT_* */
#define LANAI_DMA_DESC_CSUM	4	/* u16, reserved */
#define LANAI_DMA_DESC_STATUS	6	/* u16, written back */
#define LANAI_DMA_DESC_LEN	8	/* 1 .. LANAI_DMA_MAX_LEN */
#define LANAI_DMA_DESC_LAR	12	/* SRAM address */
#define LANAI_DMA_DESC_EAH	16	/* host bus address, high 32 bits */
#define LANAI_DMA_DESC_EAL	20	/* host bus address, low 32 bits */

#define LANAI_DMA_NEXT_TO_SRAM	0x1	/* host -> SRAM; else SRAM -> host */
#define LANAI_DMA_NEXT_LAST	0x2	/* the chain ends here */
#define LANAI_DMA_NEXT_NOTIFY	0x4	/* set ISR.HOST_SIG when done */
#define LANAI_DMA_NEXT_ADDR	0xfffffff8u

#define LANAI_DMA_MAX_LEN	0x10000
#define LANAI_DMA_MAX_CHAIN	1024	/* descriptors; more is a loop */

/* Descriptor STATUS as written back */
#define LANAI_DMA_DESC_DONE	0x0001
#define LANAI_DMA_DESC_ERR	0x8000	/* | LANAI_DMA_ERR_* */

/* DMA_STS: 0 DONE, 1 ERR, 15:8 error, 31:16 descriptors completed */
#define LANAI_DMA_STS_DONE	0x1
#define LANAI_DMA_STS_ERR	0x2
#define LANAI_DMA_STS_CODE(v)	(((v) >> 8) & 0xff)
#define LANAI_DMA_STS_COUNT(v)	((v) >> 16)

#define LANAI_DMA_ERR_DESC_ALIGN 1	/* descriptor not 8-aligned */
#define LANAI_DMA_ERR_DESC_RANGE 2	/* descriptor not in SRAM */
#define LANAI_DMA_ERR_LEN	3	/* len 0 or > LANAI_DMA_MAX_LEN */
#define LANAI_DMA_ERR_SRAM_RANGE 4	/* [lar, lar + len) not in SRAM */
#define LANAI_DMA_ERR_HOST	5	/* the host bus refused the access */
#define LANAI_DMA_ERR_BUS_MASTER 6	/* PCI bus mastering is off */
#define LANAI_DMA_ERR_LOOP	7	/* more than LANAI_DMA_MAX_CHAIN */

/* ---- doorbells ---- */

/*
 * A write anywhere in context c's page appends {c << 12 | offset, value}
 * to the doorbell FIFO in SRAM (two le32 per entry).
 */
#define LANAI_DB_ENTRY_SIZE	8
#define LANAI_DB_CTX(addr)	(((addr) >> 12) & 0x3f)
#define LANAI_DB_OFF(addr)	((addr) & 0xfff)

/*
 * In a context's doorbell page: NOTIFY_COUNT counts HOST_NOTIFY writes for
 * the context. A read at LANAI_DB_WAIT(seen) returns NOTIFY_COUNT, once
 * its low 8 bits differ from seen's, or after the card's wait timeout;
 * until then the reading CPU stalls. Read NOTIFY_COUNT, check for work,
 * then wait with the count read: a notify in between is never missed.
 */
#define LANAI_DB_WAIT_BASE	0x800
#define LANAI_DB_WAIT(seen)	(LANAI_DB_WAIT_BASE + 4 * ((seen) & 0xff))
#define LANAI_DB_NOTIFY_COUNT	0xc00

#endif /* _LANAI_REGS_H */
