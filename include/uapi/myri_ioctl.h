/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * User-space interface of the Myrinet card driver (myri.ko): /dev/myriN.
 *
 * open()     any number of times; the open file is the unit of everything
 *            below. The last close of the node zeroes the pool.
 * ioctl()    MYRI_IOC_OPEN_CTX gives the file a context of the MCP (once
 *            per file); the others ask and wait.
 * mmap()     MAP_SHARED only, at the offsets MYRI_IOC_OPEN_CTX returns:
 *              send area  the context's SRAM pages (struct myri_ctx_user,
 *                         then the slots), read/write
 *              doorbell   the context's doorbell page, read/write, uncached
 *              receive    events and data ring in host memory, read-only
 *              pool       memory shared by every opener of the node
 *                         (offset 0, no context needed)
 * poll()     POLLIN an event is pending, POLLOUT the slot at slot_next is
 *            free, POLLERR the card is down or dead, POLLHUP the context
 *            was lost (card reset) or the card removed.
 *
 * The layout of SRAM, slots, events and the receive region is in
 * myri_mcp_if.h; docs/myri-driver.md describes the semantics.
 */
#ifndef _UAPI_MYRI_IOCTL_H
#define _UAPI_MYRI_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MYRI_DEVICE		"/dev/myri0"	/* the first card */

#define MYRI_VERSION(a, b, c)	(((a) << 16) | ((b) << 8) | (c))
#define MYRI_DRIVER_VERSION	MYRI_VERSION(1, 0, 0)

/* mmap offsets: the pool, and a 64 MiB window per context */
#define MYRI_MMAP_POOL		0x0ULL
#define MYRI_MMAP_CTX(ctx)	((__u64)((ctx) + 1) << 26)
#define MYRI_MMAP_SEND(ctx)	(MYRI_MMAP_CTX(ctx) + 0x0000000)
#define MYRI_MMAP_DOORBELL(ctx)	(MYRI_MMAP_CTX(ctx) + 0x1000000)
#define MYRI_MMAP_RX(ctx)	(MYRI_MMAP_CTX(ctx) + 0x2000000)

/* myri_info.state */
#define MYRI_STATE_DOWN		0	/* no MCP runs; reason says why */
#define MYRI_STATE_LOADING	1	/* being loaded and started */
#define MYRI_STATE_UP		2	/* the MCP runs and answers */
#define MYRI_STATE_DEAD		3	/* the MCP halted, hung or panicked */
#define MYRI_STATE_REMOVED	4	/* the card is gone (hot unplug) */

struct myri_info {
	__u32 version;		/* MYRI_DRIVER_VERSION */
	__u32 state;		/* MYRI_STATE_* */
	__u32 node;		/* this card's node id */
	__u32 nodes;		/* nodes in the fabric, 0: unknown */
	__u32 sram_size;	/* bytes */
	__u32 clock_mhz;	/* the core's clock */
	__u32 mcp_abi;		/* MCP_ABI the driver speaks */
	__u32 link;		/* LANAI_CFG_LINK: LANAI_LINK_* */
	__u32 ctx_max;		/* contexts: MCP_MAX_CTX */
	__u32 ctx_open;		/* contexts open now */
	__u32 pool_size;	/* bytes of the shared pool */
	__u32 openers;		/* open files, this one included */
	__u32 halt_cause;	/* LANAI_HALT_* of the last halt, 0: none */
	__u32 halt_pc;
	__u32 halt_addr;
	__u32 loads;		/* MCP loads since the driver was loaded */
	char fw[64];		/* firmware file, e.g. "myri/mcp.bin" */
	char mcp_name[32];	/* the name in the loaded image's header */
	char reason[128];	/* why the card is down or dead, else "" */
	__u32 reserved[8];
};

/* myri_ctx_open.ctx: any free context but MCP_HAL_CTX */
#define MYRI_CTX_ANY		0xffffffffu

/*
 * myri_ctx_open.flags: exactly one of these. Like the HAL's open flags:
 * EXCL fails with EBUSY while the context has EXCL or SHARED users, SHARED
 * while it has an EXCL user; JOIN always attaches and is not counted.
 */
#define MYRI_CTX_EXCL		0x1
#define MYRI_CTX_SHARED		0x2
#define MYRI_CTX_JOIN		0x4

struct myri_ctx_open {
	/* in; the sizes only count for a context that is not open yet */
	__u32 ctx;		/* 0 .. MCP_MAX_CTX - 1, or MYRI_CTX_ANY */
	__u32 flags;		/* MYRI_CTX_* */
	__u32 nslots;		/* send slots, power of 2, 0: default */
	__u32 max_payload;	/* bytes per slot, 0: MCP_MAX_PAYLOAD */
	__u32 ring_kb;		/* receive data ring, KiB, 0: default */
	__u32 nev;		/* event ring entries, power of 2, 0: default */
	__u32 in_reserved[2];	/* 0 */
	/* out */
	__u32 node;
	__u32 nodes;
	__u32 slot_size;	/* MYRI_SLOT_HDR + payload, multiple of 64 */
	__u32 send_size;	/* bytes to map at mmap_send: 4096 + slots */
	__u32 rx_size;		/* bytes to map at mmap_rx */
	__u32 ring_off;		/* the data ring in the receive region */
	__u32 ring_size;	/* its bytes, a power of 2 */
	__u32 pool_size;	/* bytes to map at mmap_pool */
	__u32 users;		/* files on this context, this one included */
	__u32 out_reserved[3];
	__u64 mmap_send;
	__u64 mmap_doorbell;	/* LANAI_DOORBELL_PAGE bytes */
	__u64 mmap_rx;
	__u64 mmap_pool;
};

/* myri_wait.events / revents */
#define MYRI_WAIT_RX		0x1	/* ev_prod != ev_cons */
#define MYRI_WAIT_TX		0x2	/* the slot at slot_next is FREE */
#define MYRI_WAIT_ALL		0x3

#define MYRI_WAIT_FOREVER	0xffffffffu

struct myri_wait {
	__u32 events;		/* in: MYRI_WAIT_*, not 0 */
	__u32 timeout_ms;	/* in: 0 = test only, MYRI_WAIT_FOREVER */
	__u32 revents;		/* out: MYRI_WAIT_* that hold (0: timeout) */
	__u32 reserved;
};

#define MYRI_MCP_COUNTERS_MAX	32	/* room for enum mcp_counter */

struct myri_counters {
	__u64 mcp[MYRI_MCP_COUNTERS_MAX];	/* enum mcp_counter, live */
	/* the card's LANAI_CNT_* registers, live */
	__u64 tx_packets;
	__u64 rx_packets;
	__u64 rx_crc;
	__u64 rx_len;
	__u64 rx_illegal;
	__u64 rx_in_reset;
	__u64 rx_full;
	__u64 tx_discarded;
	__u64 dma_err;
	__u64 db_dropped;
	__u64 lag_drops;
	__u64 rx_queued;
	/* the driver's, since it was loaded */
	__u64 interrupts;	/* handled interrupts */
	__u64 irq_host_sig;	/* ... with HOST_SIG (notifies) */
	__u64 irq_halt;		/* ... with CORE_HALT */
	__u64 loads;		/* MCP loads tried */
	__u64 load_errors;	/* ... that failed */
	__u64 deaths;		/* MCP found dead */
	__u64 commands;		/* mailbox commands */
	__u64 opens;		/* open() calls */
	__u64 ctx_opens;	/* contexts opened in the MCP */
	__u64 ctx_closes;	/* contexts closed */
	__u64 waits;		/* MYRI_IOC_WAIT calls */
	__u64 resets;		/* sysfs reset writes */
	__u64 reserved[8];
};

/*
 * Errors: ENOTTY unknown ioctl, EFAULT bad pointer, EINVAL bad arguments
 * or reserved fields not 0, ENODEV card removed or the file's context
 * lost by a reset, EIO the card is dead.
 * OPEN_CTX: EBUSY the file has a context or the mode conflicts, ENOSPC no
 * free context or SRAM, ENOMEM, ENETDOWN the card is down (link), EIO.
 * WAIT: 0 with revents, ETIMEDOUT (revents 0), EINTR, EINVAL without a
 * context.
 */
#define MYRI_IOC_MAGIC		'M'
#define MYRI_IOC_INFO		_IOR(MYRI_IOC_MAGIC, 1, struct myri_info)
#define MYRI_IOC_OPEN_CTX	_IOWR(MYRI_IOC_MAGIC, 2, struct myri_ctx_open)
#define MYRI_IOC_WAIT		_IOWR(MYRI_IOC_MAGIC, 3, struct myri_wait)
#define MYRI_IOC_COUNTERS	_IOR(MYRI_IOC_MAGIC, 4, struct myri_counters)

#endif /* _UAPI_MYRI_IOCTL_H */
