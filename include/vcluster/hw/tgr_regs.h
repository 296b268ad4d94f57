/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Telegraphos NIC register interface, version 1 (docs/hw/telegraphos.md).
 *
 * Shared by the QEMU device (qemu-hw/telegraphos*.c), the driver (tgr.ko)
 * and user space (libtgr). Only plain #defines, so that it builds in all of
 * them. Everything is little-endian.
 *
 * Three BARs:
 *   BAR0  registers, context table, group table, window page table (PTEs)
 *   BAR2  remote window: page i maps the remote page PTE[i] names; a load
 *         is a remote read (the vCPU waits), a store a posted remote write
 *   BAR4  shadow window: a load or store there passes an address as an
 *         argument (shadow addressing). Bit 29 clear: the local mirror of
 *         guest-physical memory. Bit 29 set: one copy of the remote window
 *         per operation (bits 28:26), page for page.
 */
#ifndef _TGR_REGS_H
#define _TGR_REGS_H

#define TGR_PCI_VENDOR		0x1234
#define TGR_PCI_DEVICE		0x5447	/* "TG" */

#define TGR_PAGE_SIZE		4096
#define TGR_PAGE_SHIFT		12

/* ---- BAR0: 512 KiB, 32-bit memory ---- */

#define TGR_BAR0_SIZE		0x80000
#define TGR_REG_ID		0x000	/* RO TGR_ID_VALUE */
#define TGR_REG_VERSION		0x004	/* RO TGR_VERSION */
#define TGR_REG_NODE		0x008	/* RO this card's node id */
#define TGR_REG_NODES		0x00c	/* RO nodes in the fabric, 0: link down */
#define TGR_REG_WIN_PAGES	0x010	/* RO pages in BAR2 (= PTEs) */
#define TGR_REG_MIRROR_MB	0x014	/* RO local mirror size in BAR4 */
#define TGR_REG_CTRL		0x020	/* W TGR_CTRL_*; R TGR_STATUS_* */
#define TGR_REG_ISR		0x024	/* RW1C TGR_INT_* */
#define TGR_REG_IMR		0x028	/* RW TGR_INT_* enabled (0 at reset) */
#define TGR_REG_EXP_BASE_LO	0x030	/* RW export table, guest-physical */
#define TGR_REG_EXP_BASE_HI	0x034
#define TGR_REG_EXP_COUNT	0x038	/* RW entries, 0..TGR_EXP_MAX */
#define TGR_REG_OVF_EIDX	0x040	/* RO the queue that overflowed */
#define TGR_REG_OVF_SRC		0x044	/* RO the node whose REQ overflowed it */
#define TGR_REG_EVQ_BASE_LO	0x060	/* RW event ring, guest-physical */
#define TGR_REG_EVQ_BASE_HI	0x064
#define TGR_REG_EVQ_ENTRIES	0x068	/* RW power of 2, 0: no ring */
#define TGR_REG_EVQ_PROD	0x06c	/* RO next entry the device writes */
#define TGR_REG_EVQ_CONS	0x070	/* RW next entry the driver reads */
#define TGR_REG_CUR_CTX		0x080	/* RW per vCPU: its running context */
#define TGR_REG_RD_ACK		0x084	/* W cpu index: a failed read returns */
#define TGR_REG_RREAD_TIMEOUT_US 0x088	/* RW remote read/atomic timeout */
#define TGR_REG_RD_STATUS	0x08c	/* RO per vCPU: last read, TGR_ERR_* */
#define TGR_REG_GROUP_EIDX	0x800	/* RW [64]: local eidx of group page 0 */
/* RW [64]: pages of the group's local copy; copies beyond it are refused */
#define TGR_REG_GROUP_PAGES	0x900
#define TGR_REG_COUNTERS	0x100	/* RO 64-bit counters, TGR_CNT_* */
#define TGR_CTX_TABLE		0x1000	/* TGR_CTX_MAX entries of 16 bytes */
#define TGR_PTE_TABLE		0x40000	/* WIN_PAGES entries of 16 bytes */

#define TGR_ID_VALUE		0x32524754	/* "TGR2" */
#define TGR_VERSION		1

/* CTRL, write 1 to act */
#define TGR_CTRL_RESUME		0x1	/* accept network requests again */
#define TGR_CTRL_SOFT_RESET	0x2	/* clear PTEs, ctxs, latches, rings */
#define TGR_CTRL_CLR_STATS	0x4	/* zero the counters */
/* STATUS, the read of CTRL */
#define TGR_STATUS_STOPPED	0x1	/* a queue overflowed: requests held */
#define TGR_STATUS_LINK_UP	0x2
#define TGR_STATUS_RD_PENDING	0x4	/* this vCPU's split-phase read waits */

/* ISR / IMR */
#define TGR_INT_OVF		0x1	/* REQ queue overflow; NI stopped */
#define TGR_INT_EVQ		0x2	/* an event was queued */
#define TGR_INT_EVQ_LOST	0x4	/* the event ring was full */
#define TGR_INT_LINK		0x8	/* the link came up or went down */

/* Limits */
#define TGR_EXP_MAX		65536	/* export entries */
#define TGR_CTX_MAX		256	/* contexts; 0 is the kernel */
#define TGR_GROUPS		64	/* multicast groups */
#define TGR_GROUP_NONE		0xffffffffu	/* GROUP_EIDX: not a member */
#define TGR_WIN_PAGES_MAX	16384	/* 64 MiB remote window */
#define TGR_RD_ALL_ONES		0xffffffffffffffffull	/* failed load value */

/* Counters: 64-bit, at TGR_REG_COUNTERS + 8 * index (low word first) */
#define TGR_CNT_TX_FRAMES	0
#define TGR_CNT_RX_FRAMES	1
#define TGR_CNT_WRITES		2	/* remote writes sent */
#define TGR_CNT_READS		3	/* remote reads sent */
#define TGR_CNT_ATOMICS		4	/* remote atomics sent */
#define TGR_CNT_REQS		5	/* REQs sent */
#define TGR_CNT_REQS_IN		6	/* REQs enqueued here */
#define TGR_CNT_REQ_OVF		7	/* queue overflows here */
#define TGR_CNT_HELD		8	/* requests held while stopped */
#define TGR_CNT_VIOL_IN		9	/* refused incoming requests */
#define TGR_CNT_VIOL_OUT	10	/* own requests refused remotely */
#define TGR_CNT_LOCAL_ERR	11	/* refused local accesses (bad PTE...) */
#define TGR_CNT_SEQ_GAPS	12	/* sequence gaps seen (fault rules only) */
#define TGR_CNT_RREAD_FAIL	13	/* reads/atomics that failed */
#define TGR_CNT_STALE_REPLIES	14	/* replies nobody waited for */
#define TGR_CNT_TX_STALLS	15	/* stores that waited for tx room */
#define TGR_CNT_EVQ_LOST	16
#define TGR_CNT_CNT_ZERO	17	/* access counters that reached 0 */
#define TGR_CNT_MCAST		18	/* multicast writes sent */
#define TGR_CNT_DMA		19	/* fetch/DMA transfers started */
#define TGR_CNT_NUM		20

/*
 * Context table entry (16 bytes at TGR_CTX_TABLE + 16 * ctx, ctx 1..255):
 *   +0 u64 status page, guest-physical; 0: none. The device adds 1 to the
 *      u32 at +0 (done) or +4 (errors) when a fetch or DMA finishes.
 *   +8 u32 flags, TGR_CTXF_*
 */
#define TGR_CTX_ENTRY		16
#define TGR_CTXF_VALID		0x1
#define TGR_STATUS_DONE		0	/* byte offsets in the status page */
#define TGR_STATUS_ERRORS	4

/*
 * Window PTE (16 bytes at TGR_PTE_TABLE + 16 * page), four u32:
 *   w0  bit 0 valid; bits 2:1 mode; bits 6:3 rights (TGR_R_*);
 *       bits 15:8 owner ctx; bits 31:16 node (REMOTE) or group (MCAST)
 *   w1  remote eidx (REMOTE) or group page (MCAST)
 *   w2  bits 15:0 the export's generation; bits 31:16 the local eidx that
 *       MCAST loads read
 *   w3  access counter, decremented on each access; 0: off. Going from 1
 *       to 0 queues a CNT_ZERO event.
 * The driver writes w0 last when it maps a page and first when it unmaps.
 */
#define TGR_PTE_SIZE		16
#define TGR_PTE_VALID		0x1
#define TGR_PTE_MODE_SHIFT	1
#define TGR_PTE_MODE_MASK	0x6
#define TGR_PTE_MODE_REMOTE	0
#define TGR_PTE_MODE_MCAST	1
#define TGR_PTE_RIGHTS_SHIFT	3
#define TGR_PTE_RIGHTS_MASK	0x78
#define TGR_PTE_CTX_SHIFT	8
#define TGR_PTE_CTX_MASK	0xff00
#define TGR_PTE_NODE_SHIFT	16

/* Rights, in PTEs and export entries */
#define TGR_R_READ		0x1	/* loads, fetch, DMA from it */
#define TGR_R_WRITE		0x2	/* stores, DMA to it, multicast */
#define TGR_R_ATOMIC		0x4	/* fetch_inc/add, swap, cas */
#define TGR_R_REQ		0x8	/* remote enqueue */
#define TGR_R_ALL		0xf

/*
 * Export entry (16 bytes, in guest RAM at EXP_BASE + 16 * eidx). The
 * device reads it for each incoming request, so updates count at once.
 *   +0  u64 bits 63:12 guest-physical page address; bits 11:0 TGR_EXP_*
 *   +8  u16 generation: bumped on unexport, so old importers are refused
 *   +10 u8  owner ctx (reported in events)
 *   +11 u8  QHEAD: log2 of the queue buffer's bytes (6..16)
 *   +12 u32 reserved, 0
 */
#define TGR_EXP_ENTRY		16
#define TGR_EXP_VALID		0x1
#define TGR_EXP_RIGHTS_SHIFT	1	/* TGR_R_* << 1 */
#define TGR_EXP_MCAST		0x20	/* a multicast group's local copy */
#define TGR_EXP_QHEAD		0x40	/* first page of a REQ queue buffer */
#define TGR_EXP_FLAGS_MASK	0xfff

/*
 * REQ queue buffer (the paper's Fig. 1), 32-bit words, aligned to its size,
 * a power of 2 from 64 bytes to 64 KiB, physically contiguous:
 *   word 0  size << 16 | tail   (size in words; tail: next free word)
 *   word 1  size << 16 | head   (head: oldest item)
 *   word 2  next                (software only; the device never reads it)
 *   word 3.. items
 * head == tail: empty. The device writes word 0, the owner word 1.
 */
#define TGR_Q_TAIL_WORD		0
#define TGR_Q_HEAD_WORD		1
#define TGR_Q_NEXT_WORD		2
#define TGR_Q_FIRST_ITEM	3
#define TGR_Q_MIN_BYTES		64
#define TGR_Q_MAX_BYTES		65536
#define TGR_Q_SIZE_SHIFT	16
#define TGR_Q_INDEX_MASK	0xffff

/*
 * BAR2: TGR_WIN_PAGES pages. BAR4: 1 GiB.
 *   bit 29 clear: local mirror, bits 28:0 a guest-physical address below
 *     MIRROR_MB. A store latches it as this vCPU's argument (the data: a
 *     length for DMA, else ignored); a load returns the latch status.
 *   bit 29 set: bits 28:26 the operation, bits 25:12 the window page,
 *     bits 11:0 the offset in that remote page.
 */
#define TGR_BAR4_SIZE		0x40000000ull
#define TGR_SHADOW_REMOTE	0x20000000u
/* The local mirror's size unless the device is told (local-mirror-mb). */
#define TGR_MIRROR_DEFAULT_MB	512
#define TGR_SHADOW_OP_SHIFT	26
#define TGR_SHADOW_OP_SPAN	0x4000000u	/* 64 MiB per operation */
#define TGR_SHADOW_OFF(op, page, off) \
	(TGR_SHADOW_REMOTE | (op) << TGR_SHADOW_OP_SHIFT | \
	 (page) << TGR_PAGE_SHIFT | (off))

/* Shadow operations (store / load), docs/hw/telegraphos.md */
#define TGR_OP_REQ		0	/* store u32: enqueue / - */
#define TGR_OP_FADD		1	/* store addend / load: result or fetch_inc */
#define TGR_OP_SWAP		2	/* store new / load old */
#define TGR_OP_CAS		3	/* store u64 (new << 32 | expected) / load old */
#define TGR_OP_FETCH		4	/* store: remote word -> latched address */
#define TGR_OP_DMA_PUT		5	/* load: latched -> remote, status */
#define TGR_OP_DMA_GET		6	/* load: remote -> latched, status */
#define TGR_OP_NUM		7

/*
 * Event ring entry (16 bytes, EVQ_ENTRIES of them in guest RAM):
 *   +0 u8 type TGR_EV_*, +1 u8 reason TGR_ERR_*, +2 u8 ctx, +3 u8 op,
 *   +4 u16 node (the peer), +6 u16 cpu,
 *   +8 u32 page (window page) or eidx (incoming), +12 u32 offset or data
 */
#define TGR_EV_ENTRY		16
#define TGR_EV_VIOL_IN		1	/* refused a request from `node` */
#define TGR_EV_VIOL_OUT		2	/* `node` refused our request */
#define TGR_EV_RREAD_FAIL	3	/* read/atomic of vCPU `cpu` failed */
#define TGR_EV_CNT_ZERO		4	/* access counter of `page` hit 0 */
#define TGR_EV_SEQ_GAP		5	/* frames from `node` were lost */
#define TGR_EV_PEER_RESET	6	/* `node` restarted */
#define TGR_EV_XFER_FAIL	7	/* a fetch or DMA failed */
#define TGR_EV_LOCAL_ERR	8	/* refused a local access */

/* Error reasons: events, RD_STATUS, latch status, NACKs */
#define TGR_ERR_OK		0
#define TGR_ERR_UNEXPORTED	1	/* no such export (or invalid) */
#define TGR_ERR_RIGHTS		2	/* the export lacks the right */
#define TGR_ERR_STALE		3	/* generation differs: unexported */
#define TGR_ERR_RANGE		4	/* beyond the page or export table */
#define TGR_ERR_BADQUEUE	5	/* not a queue, or unaligned, or bad index */
#define TGR_ERR_BADSIZE		6	/* access size or queue size wrong */
#define TGR_ERR_BADADDR		7	/* guest memory refused the access */
#define TGR_ERR_TIMEOUT		8	/* no reply in RREAD_TIMEOUT_US */
#define TGR_ERR_UNREACHABLE	9	/* no such node or link down */
#define TGR_ERR_PEER_RESET	10	/* the peer restarted meanwhile */
#define TGR_ERR_NOPTE		11	/* window page not mapped */
#define TGR_ERR_BADOP		12	/* no such operation */
#define TGR_ERR_NOARGS		13	/* trigger without a latched argument */
#define TGR_ERR_NOCTX		14	/* CUR_CTX is 0 */
#define TGR_ERR_BADCTX		15	/* PTE belongs to another context */
#define TGR_ERR_PENDING		16	/* RD_STATUS: no reply yet */

#endif
