/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * User-space interface of the Telegraphos driver (tgr.ko): /dev/tgr0.
 *
 * open()     gives the file a context (1..255) with a status page. Every
 *            export, import, mirror, queue and group below belongs to the
 *            file and goes away at its last close.
 * ioctl()    TGR_IOC_*, below. Errors are negative errno values.
 * mmap()     MAP_SHARED only, at the cookies the ioctls return, with a
 *            length of at most the object's size (npages pages):
 *              status page   TGR_MMAP_STATUS: u32 done, u32 errors (the
 *                            device counts finished fetch/DMA), read-only
 *              window        an import's remote pages; PROT_READ needs the
 *                            READ right, PROT_WRITE the WRITE right
 *              shadow op     an import's pages seen through one shadow
 *                            operation (TGR_OP_*), if the rights allow it
 *              mirror        the local mirror (shadow argument) pages of
 *                            memory pinned by TGR_IOC_MAP_LOCAL
 *              queue         a REQ queue: hardware buffer, control page
 *                            and copy buffers (tgr_qlogic.h), read/write
 * poll()     POLLIN  a counter or completion event is pending (EVENTS)
 *            POLLPRI|POLLERR  a violation, a failed remote read, or a
 *                            stale import (its mappings are gone; access
 *                            to them raises SIGBUS)
 *
 * Remote loads that fail (timeout, unreachable node, refused) raise
 * SIGBUS with si_code BUS_ADRERR and si_addr at the failed address.
 * docs/tgr-driver.md describes the semantics.
 */
#ifndef _UAPI_TGR_IOCTL_H
#define _UAPI_TGR_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define TGR_DEVICE		"/dev/tgr0"

#define TGR_ABI_VERSION		1

/*
 * mmap cookies. The ioctls return them; these macros only document the
 * encoding: bits 51:48 kind, 47:44 op (shadow), 43:28 object id, and
 * 27:0 the byte offset in the object. Ids are unique per device.
 */
#define TGR_MMAP_KIND_SHIFT	48
#define TGR_MMAP_OP_SHIFT	44
#define TGR_MMAP_ID_SHIFT	28
#define TGR_MMAP_ID_MASK	0xffffull
#define TGR_MMAP_STATUS_KIND	1
#define TGR_MMAP_WINDOW_KIND	2
#define TGR_MMAP_SHADOW_KIND	3
#define TGR_MMAP_MIRROR_KIND	4
#define TGR_MMAP_QUEUE_KIND	5
#define TGR_MMAP_COOKIE(kind, op, id) \
	(((__u64)(kind) << TGR_MMAP_KIND_SHIFT) | \
	 ((__u64)(op) << TGR_MMAP_OP_SHIFT) | \
	 ((__u64)(id) << TGR_MMAP_ID_SHIFT))
#define TGR_MMAP_STATUS		TGR_MMAP_COOKIE(TGR_MMAP_STATUS_KIND, 0, 0)

/* TGR_IOC_INFO */
struct tgr_info {
	__u32 abi;		/* TGR_ABI_VERSION */
	__u32 node;		/* this card's node id */
	__u32 nodes;		/* nodes in the fabric, 0: link down */
	__u32 win_pages;	/* remote window pages (all contexts) */
	__u32 win_free;		/* of which unused now */
	__u32 mirror_mb;	/* local mirror size */
	__u32 ctx;		/* this file's context */
	__u32 stopped;		/* 1: the NI is stopped (queue overflow) */
	__u32 page_size;	/* 4096 */
	__u32 pad;
	__u64 status_cookie;	/* TGR_MMAP_STATUS */
	__u64 reserved[6];
};

/* TGR_IOC_THREAD: enable 1 registers the calling thread, 0 unregisters */
struct tgr_thread {
	__u32 enable;
	__u32 ctx;		/* out: the context the thread now runs */
};

/* TGR_IOC_EXPORT: pins [addr, addr + len), page aligned */
struct tgr_export {
	__u64 addr;		/* in */
	__u64 len;		/* in: bytes, multiple of 4096 */
	__u32 rights;		/* in: TGR_R_* granted to importers */
	__u32 segid;		/* out: name for TGR_IOC_IMPORT */
	__u32 npages;		/* out */
	__u32 pad;
};

/* TGR_IOC_UNEXPORT, TGR_IOC_REQ_DESTROY: the segid or qid */
struct tgr_id {
	__u32 id;
	__u32 pad;
};

/*
 * TGR_IOC_IMPORT: map node's segment into the remote window.
 * Errors: ENOENT not exported, EACCES rights beyond the export's,
 * EHOSTUNREACH the node is unreachable, ETIMEDOUT it did not answer,
 * ENOSPC no room in the window.
 */
struct tgr_import {
	__u32 node;		/* in */
	__u32 segid;		/* in */
	__u32 rights;		/* in: TGR_R_* wanted, 0: all the export has */
	__u32 flags;		/* in: 0 */
	__u32 iid;		/* out: import id */
	__u32 npages;		/* out */
	__u32 granted;		/* out: TGR_R_* */
	__u32 first_page;	/* out: first window page (for shadow math) */
	__u64 window_cookie;	/* out: the remote pages */
	__u64 op_cookie[8];	/* out: per TGR_OP_*, 0: the rights forbid it */
};

/* TGR_IOC_MAP_LOCAL: pins [addr, addr + len) for shadow arguments */
struct tgr_map_local {
	__u64 addr;		/* in: page aligned */
	__u64 len;		/* in: multiple of 4096 */
	__u32 mid;		/* out: mirror id, for TGR_IOC_UNMAP_LOCAL */
	__u32 npages;		/* out */
	__u64 cookie;		/* out: mirror page i shadows page i */
};

/*
 * TGR_IOC_REQ_CREATE: a REQ queue. bytes is the hardware buffer size, a
 * power of 2 from 64 to 65536 (else EINVAL); copies the number of copy
 * buffers taken on overflow (1..TGR_REQ_MAX_COPIES, 0: the default).
 * The queue region (one mmap at cookie, region_bytes long) holds the
 * hardware buffer at hw_off, the control page at ctrl_off and copies
 * copy buffers of copy_bytes each from pool_off; the layout and the
 * protocol are tgr_qlogic.h's. Senders import segid with TGR_R_REQ.
 */
#define TGR_REQ_MAX_COPIES	4096
#define TGR_REQ_DEF_COPIES	64
struct tgr_req_create {
	__u32 bytes;		/* in */
	__u32 copies;		/* in */
	__u32 qid;		/* out */
	__u32 segid;		/* out: REQ right only */
	__u64 cookie;		/* out: the queue region */
	__u32 region_bytes;	/* out */
	__u32 hw_off;		/* out: hardware buffer (first buffer) */
	__u32 ctrl_off;		/* out: control page */
	__u32 pool_off;		/* out: first copy buffer */
	__u32 copy_bytes;	/* out: bytes of one copy buffer */
	__u32 pad;
};

/* TGR_IOC_REQ_RELINK: after a deq that saw the full flag (lock held) */
struct tgr_req_relink {
	__u32 qid;		/* in */
	__u32 linked;		/* out: items moved into a copy buffer */
};

/* TGR_IOC_COUNTER_ARM: page of import iid counts down from count (0: off) */
struct tgr_counter_arm {
	__u32 iid;
	__u32 page;
	__u32 count;
	__u32 pad;
};

/*
 * TGR_IOC_MCAST_JOIN: [addr, addr + len) becomes this node's copy of the
 * group's pages (group < 64). Stores through window_cookie go to every
 * member (this one too), loads read the local copy.
 */
struct tgr_mcast_join {
	__u64 addr;		/* in: page aligned */
	__u64 len;		/* in: multiple of 4096 */
	__u32 group;		/* in */
	__u32 npages;		/* out */
	__u32 first_page;	/* out: first window page */
	__u32 pad;
	__u64 window_cookie;	/* out */
};

/* TGR_IOC_MCAST_LEAVE */
struct tgr_mcast_leave {
	__u32 group;
	__u32 pad;
};

/*
 * Driver events, besides the device's TGR_EV_* (tgr_regs.h):
 *   STALE  import `id` went stale (peer unexported, exited or restarted)
 *   QFULL  queue `id` overflowed and waits for TGR_IOC_REQ_RELINK; reason
 *          0: a dequeue was running (dnp), 1: no free copy buffer; page =
 *          the queue's eidx, node = the sender whose REQ overflowed it.
 *          Reason 2: the queue kept the NI stopped beyond the driver's
 *          bound (stop_max_ms) and was withdrawn: no longer a target,
 *          RELINK fails with ETIMEDOUT; read what is left, then destroy it
 */
#define TGR_EVENT_STALE		32
#define TGR_EVENT_QFULL		33

/* One event, as TGR_IOC_EVENTS returns it */
struct tgr_event {
	__u32 type;		/* TGR_EV_* or TGR_EVENT_* */
	__u32 reason;		/* TGR_ERR_* */
	__u32 node;		/* the peer */
	__u32 op;		/* TGR_OP_* or the request type */
	__u32 page;		/* window page, or incoming eidx */
	__u32 data;		/* offset or data */
	__u32 id;		/* import id / queue id the event concerns */
	__u32 cpu;
};

/* TGR_IOC_EVENTS: copies up to max pending events of this file to buf */
struct tgr_events {
	__u64 buf;		/* in: struct tgr_event[max] */
	__u32 max;		/* in */
	__u32 count;		/* out: copied */
	__u32 lost;		/* out: dropped since the last call */
	__u32 pad;
};

/*
 * TGR_IOC_FORCE_WRITE (CAP_SYS_ADMIN, tests only): store value at page,
 * offset of node's segment through a kernel PTE that claims every right,
 * so that the *remote* export check is exercised. Returns 0 once sent.
 */
struct tgr_force_write {
	__u32 node;
	__u32 segid;
	__u32 page;
	__u32 offset;		/* 4-byte aligned */
	__u32 value;
	__u32 pad;
};

#define TGR_IOC_MAGIC		'T'
#define TGR_IOC_INFO		_IOR(TGR_IOC_MAGIC, 1, struct tgr_info)
#define TGR_IOC_THREAD		_IOWR(TGR_IOC_MAGIC, 2, struct tgr_thread)
#define TGR_IOC_EXPORT		_IOWR(TGR_IOC_MAGIC, 3, struct tgr_export)
#define TGR_IOC_UNEXPORT	_IOW(TGR_IOC_MAGIC, 4, struct tgr_id)
#define TGR_IOC_IMPORT		_IOWR(TGR_IOC_MAGIC, 5, struct tgr_import)
#define TGR_IOC_UNIMPORT	_IOW(TGR_IOC_MAGIC, 6, struct tgr_id)
#define TGR_IOC_MAP_LOCAL	_IOWR(TGR_IOC_MAGIC, 7, struct tgr_map_local)
#define TGR_IOC_UNMAP_LOCAL	_IOW(TGR_IOC_MAGIC, 8, struct tgr_id)
#define TGR_IOC_REQ_CREATE	_IOWR(TGR_IOC_MAGIC, 9, struct tgr_req_create)
#define TGR_IOC_REQ_RELINK	_IOWR(TGR_IOC_MAGIC, 10, struct tgr_req_relink)
#define TGR_IOC_REQ_DESTROY	_IOW(TGR_IOC_MAGIC, 11, struct tgr_id)
#define TGR_IOC_COUNTER_ARM	_IOW(TGR_IOC_MAGIC, 12, struct tgr_counter_arm)
#define TGR_IOC_MCAST_JOIN	_IOWR(TGR_IOC_MAGIC, 13, struct tgr_mcast_join)
#define TGR_IOC_MCAST_LEAVE	_IOW(TGR_IOC_MAGIC, 14, struct tgr_mcast_leave)
#define TGR_IOC_EVENTS		_IOWR(TGR_IOC_MAGIC, 15, struct tgr_events)
#define TGR_IOC_FORCE_WRITE	_IOW(TGR_IOC_MAGIC, 16, struct tgr_force_write)

#endif /* _UAPI_TGR_IOCTL_H */
