/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * User-space interface of the ParaStation driver (ps1.ko): /dev/ps1.
 *
 * open()     registers the calling process with the board.
 * mmap()     offset 0, length 4096: the board's registers (BAR0, uncached);
 *            offset 4096 (page 1), length <= pool_size: the message pool
 *            shared by every process that has the device open.
 *            Both need MAP_SHARED.
 * poll()     POLLIN packet ready, POLLPRI barrier completed, POLLERR error
 *            bit set, POLLOUT room for a maximum-size TX packet.
 * ioctl()    the PS1_IOC_* below.
 *
 * docs/ps1-driver.md describes the semantics in detail.
 */
#ifndef _UAPI_PS1_IOCTL_H
#define _UAPI_PS1_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define PS1_DEVICE		"/dev/ps1"

#define PS1_MMAP_REGS_OFFSET	0
#define PS1_MMAP_REGS_LEN	4096
#define PS1_MMAP_POOL_OFFSET	4096

/* Driver version: major << 16 | minor << 8 | patch */
#define PS1_VERSION(a, b, c)	(((a) << 16) | ((b) << 8) | (c))
#define PS1_DRIVER_VERSION	PS1_VERSION(1, 0, 0)

/* ps1_info.state */
#define PS1_STATE_DOWN		0	/* fabric link not connected */
#define PS1_STATE_UP		1	/* link up, node and routes loaded */
#define PS1_STATE_UNCONFIGURED	2	/* link up, routes not (yet) loaded */
#define PS1_STATE_BAD_FABRIC	3	/* FABRIC or node id unusable */
#define PS1_STATE_REJECTED	4	/* SREG.ERR_CONFIG: fabric refused */
#define PS1_STATE_LINK_LOST	5	/* SREG.ERR_LINK */
#define PS1_STATE_REMOVED	6	/* the board is gone (hot unplug) */

struct ps1_info {
	__u32 version;		/* PS1_DRIVER_VERSION */
	__u32 board_id;		/* ID register */
	__u32 node;		/* this board's node id */
	__u32 nodes;		/* nodes in the fabric (0: unknown) */
	__u32 width;		/* torus width X, 0 = ring */
	__u32 height;		/* torus height Y */
	__u32 state;		/* PS1_STATE_* */
	__u32 pool_size;	/* bytes of the shared message pool */
	__u32 regs_size;	/* bytes of the register mapping */
	__u32 openers;		/* open file descriptions, including ours */
	__u32 reserved[6];
};

/* ps1_wait.events / revents; same bits as the board's ISR */
#define PS1_EV_PKT		0x1	/* SREG.PKT_READY */
#define PS1_EV_ERR		0x2	/* an SREG error bit is set */
#define PS1_EV_BARRIER		0x4	/* SREG.BAR_DONE != 0 */
#define PS1_EV_TX		0x8	/* !SREG.TX_FULL */
#define PS1_EV_ALL		0xf

#define PS1_WAIT_FOREVER	0xffffffffu

struct ps1_wait {
	__u32 events;		/* in: PS1_EV_* to wait for, not 0 */
	__u32 timeout_ms;	/* in: 0 = test only, PS1_WAIT_FOREVER */
	__u32 revents;		/* out: PS1_EV_* that are true (0: timeout) */
	__u32 sreg;		/* out: SREG when the wait ended */
};

struct ps1_counters {
	/* board registers */
	__u64 tx_packets;	/* CNT_TX_PKTS */
	__u64 rx_packets;	/* CNT_RX_PKTS */
	__u64 parity_errors;	/* CNT_PARITY */
	__u64 barriers;		/* CNT_BARRIERS */
	/* driver, since the module was loaded */
	__u64 interrupts;	/* handled interrupts */
	__u64 irq_pkt;		/* ... with ISR.PKT */
	__u64 irq_err;		/* ... with ISR.ERR */
	__u64 irq_barrier;	/* ... with ISR.BARRIER */
	__u64 irq_tx;		/* ... with ISR.TX */
	__u64 opens;		/* successful open() calls */
	__u64 resets;		/* CREG.RESET written by the driver */
	__u64 cleanup_resets;	/* of those: last close left FIFOs busy */
	__u64 route_loads;	/* routing tables committed */
	__u64 reserved[3];
};

/*
 * PS1_IOC_WAIT returns 0 with revents != 0, or -1 with errno ETIMEDOUT
 * (revents 0), EINTR (signal), ENODEV (board removed).
 * PS1_IOC_RESET fails with EBUSY unless the caller's file is the only open
 * one.
 */
#define PS1_IOC_MAGIC		'P'
#define PS1_IOC_INFO		_IOR(PS1_IOC_MAGIC, 1, struct ps1_info)
#define PS1_IOC_WAIT		_IOWR(PS1_IOC_MAGIC, 2, struct ps1_wait)
#define PS1_IOC_RESET		_IO(PS1_IOC_MAGIC, 3)
#define PS1_IOC_COUNTERS	_IOR(PS1_IOC_MAGIC, 4, struct ps1_counters)

#endif /* _UAPI_PS1_IOCTL_H */
