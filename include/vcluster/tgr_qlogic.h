/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Telegraphos REQ queue logic shared by tgr.ko and libtgr: the layout of a
 * queue region, the overflow copy (Markatos et al. section 4.2), the
 * dequeue step (section 4.3) and the do-not-preempt-me / busy handshake
 * between the dequeuer and the kernel's overflow handler.
 *
 * A queue region is one mapping (user mmap, or the driver's own pages):
 *   0          the hardware buffer: the REQ target the NIC writes, aligned
 *              to its size S bytes (a power of 2, TGR_Q_MIN..MAX_BYTES)
 *   ctrl_off   the control page, struct tgr_ql_ctrl (max(S, 4096))
 *   pool_off   pool_count copy buffers of 2S bytes each (ctrl_off + 4096)
 * Every buffer uses the header of tgr_regs.h: word 0 size << 16 | tail,
 * word 1 size << 16 | head, word 2 next. `next` is a region offset, 0 for
 * none (offset 0 is the hardware buffer, never a successor). A copy buffer
 * is free when its word 0 is 0, used otherwise.
 *
 * Chain: first (hardware) -> newest copy -> ... -> oldest copy. The NIC
 * only ever writes the first buffer; the dequeuer reads the last one.
 *
 * Copy buffers hold 2S words: an overflowed buffer holds S - 3 items, and
 * S - 3 items in an S-word ring would make tail == head, i.e. empty.
 *
 * Who may touch what:
 *   the dequeuer (user, per-queue lock held) only between
 *     tgr_ql_user_enter() and tgr_ql_user_leave() (dnp = 1, busy seen 0);
 *   the kernel only inside tgr_ql_handle_overflow() / tgr_ql_relink()
 *     (busy = 1, dnp seen 0).
 * Each side stores its flag, issues a full barrier, then loads the other's,
 * so at most one side is inside at a time (Dekker). The paper's own rules
 * stay: an overflow that finds dnp set allocates nothing and sets full;
 * the dequeuer then calls RELINK, still holding the lock.
 *
 * The kernel must not trust the shared region: every offset and index read
 * from it is checked, chain walks are bounded, and the layout comes from
 * the caller's private struct tgr_ql_layout, never from the control page.
 */
#ifndef _TGR_QLOGIC_H
#define _TGR_QLOGIC_H

#include "vcluster/hw/tgr_regs.h"

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <asm/barrier.h>
#include <asm/processor.h>
#define tgr_ql_load(p)		READ_ONCE(*(p))
#define tgr_ql_store(p, v)	WRITE_ONCE(*(p), (v))
#define tgr_ql_mb()		smp_mb()	/* dnp/busy handshake */
#define tgr_ql_wmb()		smp_wmb()	/* data, links, indices */
#define tgr_ql_rmb()		smp_rmb()	/* tail before item */
#ifndef tgr_ql_relax
#define tgr_ql_relax()		cpu_relax()
#endif
#else
#include <linux/types.h>
#include <errno.h>
#include <sched.h>
#define tgr_ql_load(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define tgr_ql_store(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define tgr_ql_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define tgr_ql_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define tgr_ql_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#ifndef tgr_ql_relax
#define tgr_ql_relax()		sched_yield()
#endif
#endif

/* A hook inside the dequeuer's dnp window; host tests add delays there. */
#ifndef tgr_ql_deq_hook
#define tgr_ql_deq_hook()	do { } while (0)
#endif

#define TGR_QL_MAGIC		0x51524754u	/* "TGRQ" */
#define TGR_QL_VERSION		1
#define TGR_QL_CTRL_BYTES	4096
#define TGR_QL_POOL_MAX		4096	/* = TGR_REQ_MAX_COPIES */
/* tgr_ql_handle_overflow(): dnp was set, nothing copied */
#define TGR_QL_DEFERRED		1

/* The region's shape; the kernel keeps its own copy. */
struct tgr_ql_layout {
	__u32 hw_bytes;		/* S: bytes of the hardware buffer */
	__u32 ctrl_off;
	__u32 pool_off;
	__u32 pool_count;
	__u32 copy_bytes;	/* 2S */
	__u32 region_bytes;	/* multiple of 4096 */
};

/*
 * The control page. The layout words are written by the kernel at create
 * time and only read by user space. Counters only go up.
 */
struct tgr_ql_ctrl {
	__u32 magic;		/* TGR_QL_MAGIC once initialised */
	__u32 version;		/* TGR_QL_VERSION */
	__u32 hw_bytes;
	__u32 ctrl_off;
	__u32 pool_off;
	__u32 pool_count;
	__u32 copy_bytes;
	__u32 region_bytes;
	__u32 rsvd0[8];
	/* offset 64: the protocol words */
	__u32 lock;		/* dequeuers' lock: 0 free, else owner */
	__u32 dnp;		/* do-not-preempt-me: a dequeue is running */
	__u32 full;		/* overflow waits for RELINK, NI stopped */
	__u32 busy;		/* the kernel is copying or relinking */
	__u32 ovf_count;	/* overflows copied into the pool */
	__u32 deferred;		/* overflows that found dnp set */
	__u32 nofree;		/* overflows with no free copy buffer */
	__u32 relinks;		/* successful RELINKs */
	__u32 lost;		/* resets of a queue its owner damaged */
	__u32 rsvd1[7];
};

/*
 * How the caller reaches the region: map(opaque, off, bytes) returns a
 * pointer to bytes off..off+bytes-1, virtually contiguous, or NULL when
 * that range is outside the region. Each buffer and the control page must
 * be contiguous in the caller's mapping; the region as a whole need not.
 */
struct tgr_ql {
	const struct tgr_ql_layout *lay;
	void *(*map)(void *opaque, __u32 off, __u32 bytes);
	void *opaque;
};

static inline int tgr_ql_pow2(__u32 v)
{
	return v && !(v & (v - 1));
}

/* Fill *l for a hardware buffer of hw_bytes and pool_count copies. */
static inline int tgr_ql_layout_init(struct tgr_ql_layout *l, __u32 hw_bytes,
				     __u32 pool_count)
{
	if (!tgr_ql_pow2(hw_bytes) || hw_bytes < TGR_Q_MIN_BYTES ||
	    hw_bytes > TGR_Q_MAX_BYTES)
		return -EINVAL;
	if (pool_count == 0 || pool_count > TGR_QL_POOL_MAX)
		return -EINVAL;
	l->hw_bytes = hw_bytes;
	l->ctrl_off = hw_bytes < TGR_PAGE_SIZE ? TGR_PAGE_SIZE : hw_bytes;
	l->pool_off = l->ctrl_off + TGR_QL_CTRL_BYTES;
	l->pool_count = pool_count;
	l->copy_bytes = 2 * hw_bytes;
	l->region_bytes = (l->pool_off + pool_count * l->copy_bytes +
			   TGR_PAGE_SIZE - 1) & ~(__u32)(TGR_PAGE_SIZE - 1);
	return 0;
}

/* The layout the control page announces (user side); -EINVAL if bad. */
static inline int tgr_ql_layout_from_ctrl(struct tgr_ql_layout *l,
					  const struct tgr_ql_ctrl *c)
{
	if (c->magic != TGR_QL_MAGIC || c->version != TGR_QL_VERSION)
		return -EINVAL;
	if (tgr_ql_layout_init(l, c->hw_bytes, c->pool_count))
		return -EINVAL;
	if (l->ctrl_off != c->ctrl_off || l->pool_off != c->pool_off ||
	    l->copy_bytes != c->copy_bytes ||
	    l->region_bytes != c->region_bytes)
		return -EINVAL;
	return 0;
}

static inline __u32 *tgr_ql_words(const struct tgr_ql *q, __u32 off,
				  __u32 bytes)
{
	return (__u32 *)q->map(q->opaque, off, bytes);
}

static inline __u32 *tgr_ql_first(const struct tgr_ql *q)
{
	return tgr_ql_words(q, 0, q->lay->hw_bytes);
}

static inline struct tgr_ql_ctrl *tgr_ql_ctrl(const struct tgr_ql *q)
{
	return (struct tgr_ql_ctrl *)q->map(q->opaque, q->lay->ctrl_off,
					    sizeof(struct tgr_ql_ctrl));
}

static inline __u32 tgr_ql_copy_off(const struct tgr_ql *q, __u32 i)
{
	return q->lay->pool_off + i * q->lay->copy_bytes;
}

/* A valid `next` value: the offset of one of the copy buffers. */
static inline int tgr_ql_is_copy_off(const struct tgr_ql *q, __u32 off)
{
	const struct tgr_ql_layout *l = q->lay;

	return off >= l->pool_off &&
	       (off - l->pool_off) % l->copy_bytes == 0 &&
	       (off - l->pool_off) / l->copy_bytes < l->pool_count;
}

/* Size, head and tail of a buffer of `size` words; -EIO if damaged. */
static inline int tgr_ql_indices(const __u32 *b, __u32 size, __u32 *head,
				 __u32 *tail)
{
	__u32 w0 = tgr_ql_load(&b[TGR_Q_TAIL_WORD]);
	__u32 w1 = tgr_ql_load(&b[TGR_Q_HEAD_WORD]);

	*tail = w0 & TGR_Q_INDEX_MASK;
	*head = w1 & TGR_Q_INDEX_MASK;
	if (w0 >> TGR_Q_SIZE_SHIFT != size || w1 >> TGR_Q_SIZE_SHIFT != size)
		return -EIO;
	if (*tail < TGR_Q_FIRST_ITEM || *tail >= size ||
	    *head < TGR_Q_FIRST_ITEM || *head >= size)
		return -EIO;
	return 0;
}

static inline void tgr_ql_set_empty(__u32 *b, __u32 size)
{
	__u32 w = size << TGR_Q_SIZE_SHIFT | TGR_Q_FIRST_ITEM;

	tgr_ql_store(&b[TGR_Q_HEAD_WORD], w);
	tgr_ql_store(&b[TGR_Q_TAIL_WORD], w);
}

/*
 * Kernel, at create time (nobody else maps the region yet): an empty
 * hardware buffer, a free pool and the control page. -EFAULT if the
 * accessor refuses a part of the region.
 */
static inline int tgr_ql_init(const struct tgr_ql *q)
{
	const struct tgr_ql_layout *l = q->lay;
	struct tgr_ql_ctrl *c = tgr_ql_ctrl(q);
	__u32 *a = tgr_ql_first(q);
	__u32 i, *b;

	if (!c || !a)
		return -EFAULT;
	for (i = 0; i < l->pool_count; i++) {
		b = tgr_ql_words(q, tgr_ql_copy_off(q, i), l->copy_bytes);
		if (!b)
			return -EFAULT;
		tgr_ql_store(&b[TGR_Q_TAIL_WORD], 0);
		tgr_ql_store(&b[TGR_Q_HEAD_WORD], 0);
		tgr_ql_store(&b[TGR_Q_NEXT_WORD], 0);
	}
	tgr_ql_set_empty(a, l->hw_bytes / 4);
	tgr_ql_store(&a[TGR_Q_NEXT_WORD], 0);
	for (i = 0; i < sizeof(*c) / sizeof(__u32); i++)
		((__u32 *)c)[i] = 0;
	c->hw_bytes = l->hw_bytes;
	c->ctrl_off = l->ctrl_off;
	c->pool_off = l->pool_off;
	c->pool_count = l->pool_count;
	c->copy_bytes = l->copy_bytes;
	c->region_bytes = l->region_bytes;
	c->version = TGR_QL_VERSION;
	tgr_ql_wmb();
	tgr_ql_store(&c->magic, TGR_QL_MAGIC);
	return 0;
}

/*
 * Drop everything queued: free every copy buffer and empty the first one.
 * For a queue its owner damaged (ctrl->lost counts these resets).
 * Kernel only, inside busy.
 */
static inline void tgr_ql_reset(const struct tgr_ql *q)
{
	const struct tgr_ql_layout *l = q->lay;
	__u32 *a = tgr_ql_first(q);
	__u32 i, *b;

	for (i = 0; i < l->pool_count; i++) {
		b = tgr_ql_words(q, tgr_ql_copy_off(q, i), l->copy_bytes);
		if (!b)
			continue;
		tgr_ql_store(&b[TGR_Q_NEXT_WORD], 0);
		tgr_ql_store(&b[TGR_Q_HEAD_WORD], 0);
		tgr_ql_store(&b[TGR_Q_TAIL_WORD], 0);
	}
	if (a) {
		tgr_ql_store(&a[TGR_Q_NEXT_WORD], 0);
		tgr_ql_set_empty(a, l->hw_bytes / 4);
	}
}

/*
 * The overflow copy, with the NIC stopped after an overflow of the first
 * buffer. The NIC wrote the item at tail but not tail itself, so the
 * items run from head to tail inclusive, wrapping 3..S-1: S - 3 of them
 * right after the overflow, fewer if the dequeuer took some since. They
 * go, in order, into a free copy buffer C inserted right after the first
 * buffer; then the first buffer is reset to empty (3, 3). Data before
 * links before indices.
 * The number of items moved (>= 1); -ENOSPC: no free copy buffer,
 * nothing changed; -EIO: the queue is damaged (bad header words or
 * links), nothing changed.
 * Kernel only, inside busy.
 */
static inline int tgr_ql_copy_overflow(const struct tgr_ql *q)
{
	const struct tgr_ql_layout *l = q->lay;
	__u32 size = l->hw_bytes / 4, csize = l->copy_bytes / 4;
	__u32 *a = tgr_ql_first(q), *c = NULL;
	__u32 head, tail, count, next, c_off = 0, i, idx;

	if (!a || tgr_ql_indices(a, size, &head, &tail))
		return -EIO;
	next = tgr_ql_load(&a[TGR_Q_NEXT_WORD]);
	if (next && !tgr_ql_is_copy_off(q, next))
		return -EIO;
	count = (tail + (size - TGR_Q_FIRST_ITEM) - head) %
		(size - TGR_Q_FIRST_ITEM) + 1;

	for (i = 0; i < l->pool_count; i++) {
		__u32 off = tgr_ql_copy_off(q, i);
		__u32 *b;

		if (off == next)
			continue;
		b = tgr_ql_words(q, off, l->copy_bytes);
		if (b && tgr_ql_load(&b[TGR_Q_TAIL_WORD]) == 0) {
			c = b;
			c_off = off;
			break;
		}
	}
	if (!c)
		return -ENOSPC;

	idx = head;
	for (i = 0; i < count; i++) {
		tgr_ql_store(&c[TGR_Q_FIRST_ITEM + i], tgr_ql_load(&a[idx]));
		idx = idx + 1 == size ? TGR_Q_FIRST_ITEM : idx + 1;
	}
	tgr_ql_store(&c[TGR_Q_NEXT_WORD], next);
	tgr_ql_store(&c[TGR_Q_HEAD_WORD],
		     csize << TGR_Q_SIZE_SHIFT | TGR_Q_FIRST_ITEM);
	tgr_ql_store(&c[TGR_Q_TAIL_WORD],
		     csize << TGR_Q_SIZE_SHIFT | (TGR_Q_FIRST_ITEM + count));
	tgr_ql_wmb();
	tgr_ql_store(&a[TGR_Q_NEXT_WORD], c_off);
	tgr_ql_wmb();
	tgr_ql_set_empty(a, size);
	return count;
}

/* Kernel: claim the queue (busy = 1). 0, or TGR_QL_DEFERRED if dnp. */
static inline int tgr_ql_kernel_enter(struct tgr_ql_ctrl *c)
{
	tgr_ql_store(&c->busy, 1);
	tgr_ql_mb();
	if (tgr_ql_load(&c->dnp))
		return TGR_QL_DEFERRED;
	return 0;
}

static inline void tgr_ql_kernel_leave(struct tgr_ql_ctrl *c)
{
	tgr_ql_mb();
	tgr_ql_store(&c->busy, 0);
}

/* The copy with its outcome recorded in the control page; inside busy. */
static inline int tgr_ql_copy_locked(const struct tgr_ql *q,
				     struct tgr_ql_ctrl *c)
{
	int ret = tgr_ql_copy_overflow(q);

	if (ret > 0) {
		tgr_ql_store(&c->ovf_count, tgr_ql_load(&c->ovf_count) + 1);
		tgr_ql_store(&c->full, 0);
	} else if (ret == -ENOSPC) {
		tgr_ql_store(&c->nofree, tgr_ql_load(&c->nofree) + 1);
		tgr_ql_store(&c->full, 1);
	} else {
		tgr_ql_reset(q);
		tgr_ql_store(&c->lost, tgr_ql_load(&c->lost) + 1);
		tgr_ql_store(&c->full, 0);
	}
	return ret;
}

/*
 * Kernel overflow handler, NIC stopped on this queue's first buffer:
 *   0                the items are in a copy buffer: resume the NIC;
 *   TGR_QL_DEFERRED  a dequeue was running (dnp): full = 1, nothing
 *                    copied, keep the NIC stopped until RELINK;
 *   -ENOSPC          no free copy buffer: full = 1, keep it stopped;
 *   -EIO             the owner damaged the queue: it was emptied (items
 *                    lost, ctrl->lost++), resume the NIC;
 *   -EFAULT          the accessor refused the control page.
 */
static inline int tgr_ql_handle_overflow(const struct tgr_ql *q)
{
	struct tgr_ql_ctrl *c = tgr_ql_ctrl(q);
	int ret;

	if (!c)
		return -EFAULT;
	if (tgr_ql_kernel_enter(c)) {
		tgr_ql_store(&c->full, 1);
		tgr_ql_store(&c->deferred, tgr_ql_load(&c->deferred) + 1);
		tgr_ql_kernel_leave(c);
		return TGR_QL_DEFERRED;
	}
	ret = tgr_ql_copy_locked(q, c);
	tgr_ql_kernel_leave(c);
	return ret > 0 ? 0 : ret;
}

/*
 * Kernel RELINK, for a queue whose overflow is still pending (the driver
 * tracks that itself; `full` is only a hint to user space). The caller
 * holds the dequeuers' lock and has left its dnp window.
 *   0        copied (*moved items), full = 0: resume the NIC;
 *   -EBUSY   dnp is set: a dequeue runs (the caller broke the protocol);
 *   -ENOSPC  still no free copy buffer: dequeue more, then RELINK again;
 *   -EIO     damaged queue emptied as above: resume the NIC;
 *   -EFAULT  the accessor refused the control page.
 */
static inline int tgr_ql_relink(const struct tgr_ql *q, __u32 *moved)
{
	struct tgr_ql_ctrl *c = tgr_ql_ctrl(q);
	int ret;

	*moved = 0;
	if (!c)
		return -EFAULT;
	if (tgr_ql_kernel_enter(c)) {
		tgr_ql_kernel_leave(c);
		return -EBUSY;
	}
	ret = tgr_ql_copy_locked(q, c);
	if (ret > 0) {
		*moved = ret;
		tgr_ql_store(&c->relinks, tgr_ql_load(&c->relinks) + 1);
		ret = 0;
	}
	tgr_ql_kernel_leave(c);
	return ret;
}

/*
 * The dequeue step (paper section 4.3), inside the dnp window: take the
 * last buffer of the chain; if it is empty, the first buffer means EMPTY,
 * any other is unlinked, freed, and the step retried. Else the item at
 * head, and head advances (wrapping to 3).
 * 1: *item set; 0: empty; -EIO: damaged queue (nothing changed).
 */
static inline int tgr_ql_deq_step(const struct tgr_ql *q, __u32 *item)
{
	const struct tgr_ql_layout *l = q->lay;
	__u32 frees;

	for (frees = 0; frees <= l->pool_count; frees++) {
		__u32 *prev = NULL, *b = tgr_ql_first(q);
		__u32 size = l->hw_bytes / 4, hops = 0;
		__u32 head, tail, next;

		if (!b)
			return -EIO;
		while ((next = tgr_ql_load(&b[TGR_Q_NEXT_WORD])) != 0) {
			if (!tgr_ql_is_copy_off(q, next) ||
			    ++hops > l->pool_count)
				return -EIO;
			prev = b;
			b = tgr_ql_words(q, next, l->copy_bytes);
			if (!b)
				return -EIO;
			size = l->copy_bytes / 4;
		}
		if (tgr_ql_indices(b, size, &head, &tail))
			return -EIO;
		if (head == tail) {
			if (!prev)
				return 0;
			tgr_ql_store(&prev[TGR_Q_NEXT_WORD], 0);
			tgr_ql_wmb();
			tgr_ql_store(&b[TGR_Q_HEAD_WORD], 0);
			tgr_ql_store(&b[TGR_Q_TAIL_WORD], 0);
			continue;
		}
		/* The NIC writes the item before the tail we just read. */
		tgr_ql_rmb();
		*item = tgr_ql_load(&b[head]);
		head = head + 1 == size ? TGR_Q_FIRST_ITEM : head + 1;
		/* The slot is the NIC's again once head moves past it. */
		tgr_ql_mb();
		tgr_ql_store(&b[TGR_Q_HEAD_WORD],
			     size << TGR_Q_SIZE_SHIFT | head);
		return 1;
	}
	return -EIO;
}

#ifndef __KERNEL__
/*
 * User side of the handshake. enter: dnp = 1, fence, and back off while
 * the kernel is busy. leave: dnp = 0, fence; returns `full` (a deferred
 * overflow waits for RELINK).
 */
static inline void tgr_ql_user_enter(struct tgr_ql_ctrl *c)
{
	for (;;) {
		tgr_ql_store(&c->dnp, 1);
		tgr_ql_mb();
		if (!tgr_ql_load(&c->busy))
			return;
		tgr_ql_store(&c->dnp, 0);
		tgr_ql_mb();
		while (tgr_ql_load(&c->busy))
			tgr_ql_relax();
	}
}

static inline int tgr_ql_user_leave(struct tgr_ql_ctrl *c)
{
	tgr_ql_mb();
	tgr_ql_store(&c->dnp, 0);
	tgr_ql_mb();
	return tgr_ql_load(&c->full) != 0;
}

/* The dequeuers' lock (SMP, or several threads on one queue). */
static inline void tgr_ql_lock(struct tgr_ql_ctrl *c, __u32 owner)
{
	__u32 expected = 0, mine = owner ? owner : 1;

	while (!__atomic_compare_exchange_n(&c->lock, &expected, mine, 0,
					    __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		expected = 0;
		tgr_ql_relax();
	}
}

static inline void tgr_ql_unlock(struct tgr_ql_ctrl *c)
{
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
}

/*
 * A whole user-level dequeue (plan section 5, tgr_deq):
 *   lock; dnp window { step }; if full: relink(), still locked; unlock.
 * relink(opaque) is the driver's RELINK (an ioctl in libtgr): 0 or a
 * negative errno; -ENOSPC is not an error here (more dequeues free space,
 * and the next call retries). An empty step with full set retries once
 * after a successful RELINK, since the item the NIC wrote last is only
 * visible after the copy.
 * 1: *item set (a failed RELINK is then retried by the next call, as
 * `full` stays set); 0: empty; negative errno: -EIO damaged queue, or
 * RELINK's error when no item was taken.
 */
static inline int tgr_ql_user_deq(const struct tgr_ql *q, __u32 owner,
				  __u32 *item,
				  int (*relink)(void *opaque), void *opaque)
{
	struct tgr_ql_ctrl *c = tgr_ql_ctrl(q);
	int ret, tries, err;

	if (!c)
		return -EIO;
	tgr_ql_lock(c, owner);
	for (tries = 0; tries < 2; tries++) {
		tgr_ql_user_enter(c);
		tgr_ql_deq_hook();
		ret = tgr_ql_deq_step(q, item);
		tgr_ql_deq_hook();
		if (!tgr_ql_user_leave(c))
			break;
		err = relink(opaque);
		/* an item taken is returned; `full` stays for the next call */
		if (ret != 0 || err == -ENOSPC)
			break;
		if (err) {
			ret = err;
			break;
		}
	}
	tgr_ql_unlock(c);
	return ret;
}
#endif /* !__KERNEL__ */

#endif /* _TGR_QLOGIC_H */
