/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libtgr: user-level access to the Telegraphos NIC (tgr.ko, /dev/tgr0).
 *
 * Telegraphos reaches other nodes' memory with ordinary loads and stores:
 * an exporter names a range of its memory (a segment), an importer maps it
 * into its address space, and from then on a load there is a remote read
 * and a store a remote write, with no system call. Shadow addressing
 * gives the other operations the same one-access form: fetch-and-
 * increment is one load, a remote enqueue (REQ) one store. Operations
 * that need a second argument (fetch_add, swap, cas, fetch, DMA) are an
 * argument access followed by a trigger access (SHRIMP's UDMA form).
 *
 * Conventions:
 *   - Calls that can fail return 0 (or a count) on success and a negative
 *     errno on failure; tgr_strerror() describes it. No call sets errno.
 *   - Every thread that touches remote memory must be registered with the
 *     driver: tgr_open() registers the calling thread, tgr_thread_register()
 *     any other. An unregistered thread's accesses are refused by the NIC
 *     (loads return all-ones, stores are dropped, an event is queued).
 *   - A remote load that fails (the node is down or does not answer within
 *     the driver's rread_timeout_us, or the access is refused remotely)
 *     raises SIGBUS (BUS_ADRERR, si_addr = the address) in the thread.
 *     Stores are posted: a refused store shows up as an event
 *     (tgr_poll_events()), never as an error of the store.
 *   - Handles are not shared across fork() (the mappings are not copied).
 *   - A signal handler must not use the two-access operations while the
 *     interrupted code may be between its argument and trigger accesses.
 *
 * docs/libtgr.md has the overview and examples.
 */
#ifndef TGR_H
#define TGR_H

#include <stddef.h>
#include <stdint.h>

#include "vcluster/hw/tgr_regs.h"
#include "uapi/tgr_ioctl.h"

typedef struct tgr tgr_t;		/* an open device: one context */
typedef struct tgr_seg tgr_seg_t;	/* an imported remote segment */
typedef struct tgr_mem tgr_mem_t;	/* local memory usable by fetch/DMA */
typedef struct tgr_mcast tgr_mcast_t;	/* a joined multicast group */
typedef struct tgr_q tgr_q_t;		/* a REQ queue of this node */
typedef struct tgr_rq tgr_rq_t;		/* another node's REQ queue */

/* ---- device ---------------------------------------------------------- */

/*
 * Open the device ($TGR_DEVICE, default /dev/tgr0), map the context's
 * status page and register the calling thread. Errors: -ENOENT (no device
 * node: tgr.ko not loaded), -EPROTO (the driver speaks another ABI),
 * -ENETDOWN (the fabric link is down), -ENOMEM, or open's errors.
 */
int tgr_open(tgr_t **out);

/*
 * Close the device. The driver then drops everything this context owns:
 * its exports (importers see them go stale), imports, queues, groups.
 * Handles made from t must not be used afterwards; tgr_close() releases
 * the ones still open.
 */
void tgr_close(tgr_t *t);

int tgr_fd(const tgr_t *t);		/* for poll(): see tgr_poll_events() */
unsigned int tgr_node(const tgr_t *t);	/* this node's id */
unsigned int tgr_nodes(const tgr_t *t);	/* nodes in the fabric */
unsigned int tgr_ctx(const tgr_t *t);	/* this context (1..255) */

/* Fill *info afresh (TGR_IOC_INFO), e.g. to see whether the NI is stopped. */
int tgr_info(tgr_t *t, struct tgr_info *info);

/*
 * Register the calling thread (a thread other than tgr_open()'s), so that
 * the NIC accepts its accesses; unregister before the thread exits.
 * Errors: -EBUSY (already registered with another context), -ENOMEM.
 */
int tgr_thread_register(tgr_t *t);
int tgr_thread_unregister(tgr_t *t);

/*
 * A human-readable text for a negative errno this library returned; it
 * names the Telegraphos meaning where there is one (-ENOENT from an
 * import: "segment not exported", ...).
 */
const char *tgr_strerror(int err);

/* The negative errno for a device reason TGR_ERR_* (0 for TGR_ERR_OK). */
int tgr_reason_errno(unsigned int reason);
/* The device reason's name ("UNEXPORTED", "RIGHTS", ...). */
const char *tgr_reason_name(unsigned int reason);

/* ---- export and import ----------------------------------------------- */

/*
 * Export [addr, addr + len) (page aligned, len a multiple of 4096) with
 * the rights TGR_R_* importers may get; *segid names it for tgr_import().
 * The pages stay pinned until tgr_unexport() or close. Errors: -EINVAL
 * (alignment, length, rights 0 or unknown bits), -EFAULT (not mapped
 * writable memory), -ENOSPC (export table full), -ENOMEM (pin limit).
 */
int tgr_export(tgr_t *t, void *addr, size_t len, unsigned int rights,
	       uint32_t *segid);

/*
 * Withdraw an export: importers' accesses are refused from now on (STALE),
 * their mappings go and further access raises SIGBUS. -ENOENT: no such
 * export of this context.
 */
int tgr_unexport(tgr_t *t, uint32_t segid);

/*
 * Import segment segid of node `node` with the rights wanted (TGR_R_*,
 * 0 for all the export grants) and map it: the remote window (loads and
 * stores, if READ or WRITE is granted) and one shadow window per
 * operation the rights allow. Errors: -ENOENT (not exported),
 * -EACCES (rights beyond the export's), -EHOSTUNREACH (no such node or
 * link down), -ETIMEDOUT (the node did not answer), -ENOSPC (the remote
 * window is full), -EINVAL.
 */
int tgr_import(tgr_t *t, unsigned int node, uint32_t segid,
	       unsigned int rights, tgr_seg_t **out);
/* Unmap and release an import. */
void tgr_unimport(tgr_seg_t *seg);

size_t tgr_seg_size(const tgr_seg_t *seg);		/* bytes */
unsigned int tgr_seg_rights(const tgr_seg_t *seg);	/* granted TGR_R_* */
unsigned int tgr_seg_node(const tgr_seg_t *seg);
uint32_t tgr_seg_iid(const tgr_seg_t *seg);		/* the import id */
/* The window's mmap cookie, for tests that map it themselves. */
uint64_t tgr_seg_window_cookie(const tgr_seg_t *seg);

/*
 * A remote pointer: byte off of the segment in the remote window, or
 * NULL when off is outside the segment or neither READ nor WRITE was
 * granted. Access it with the tgr_read/tgr_write helpers below, which
 * issue exactly one load or store of the given width; a READ-only
 * import is mapped read-only, so a store there raises SIGSEGV.
 */
volatile void *tgr_ptr(const tgr_seg_t *seg, size_t off);

static inline uint32_t tgr_read32(const volatile void *p)
{
	return *(const volatile uint32_t *)p;
}

static inline uint64_t tgr_read64(const volatile void *p)
{
	return *(const volatile uint64_t *)p;
}

static inline void tgr_write32(volatile void *p, uint32_t v)
{
	*(volatile uint32_t *)p = v;
}

static inline void tgr_write64(volatile void *p, uint64_t v)
{
	*(volatile uint64_t *)p = v;
}

/* ---- atomics (the ATOMIC right; naturally aligned words) ------------- */

/*
 * fetch_and_increment: *old = the remote word, which becomes old + 1.
 * One load from the FADD shadow window. Errors: -EINVAL (off outside the
 * segment or misaligned), -EACCES (no ATOMIC right). A remote failure
 * raises SIGBUS.
 */
int tgr_fetch_inc(tgr_seg_t *seg, size_t off, uint32_t *old);
int tgr_fetch_inc64(tgr_seg_t *seg, size_t off, uint64_t *old);

/*
 * fetch_and_add, swap, compare_and_swap: an argument store (the addend,
 * the new value, or new << 32 | expected) to the operation's shadow
 * address, then a load there that returns the old value. cas works on
 * the 32-bit word at off, which must be a multiple of 8 (its argument is
 * one 8-byte store); it swapped when *old == expected. Errors as
 * tgr_fetch_inc(). The thread must not be moved to another CPU between
 * the two accesses (pin it on SMP guests).
 */
int tgr_fetch_add(tgr_seg_t *seg, size_t off, uint32_t add, uint32_t *old);
int tgr_fetch_add64(tgr_seg_t *seg, size_t off, uint64_t add, uint64_t *old);
int tgr_swap(tgr_seg_t *seg, size_t off, uint32_t val, uint32_t *old);
int tgr_swap64(tgr_seg_t *seg, size_t off, uint64_t val, uint64_t *old);
int tgr_cas(tgr_seg_t *seg, size_t off, uint32_t expected, uint32_t val,
	    uint32_t *old);

/* ---- fetch and DMA (local memory registered first) ------------------- */

/*
 * Make [addr, addr + len) (page aligned, len a multiple of 4096) usable
 * as the local side of fetch and DMA: it is pinned and its shadow
 * (mirror) pages mapped. Errors: -EINVAL, -EFAULT, -ENOMEM.
 */
int tgr_mem_register(tgr_t *t, void *addr, size_t len, tgr_mem_t **out);
void tgr_mem_unregister(tgr_mem_t *m);

/*
 * Non-blocking fetch(remote, local): copy the remote word of `size`
 * bytes (4 or 8, aligned) at off into *local (inside m). Completion:
 * tgr_wait_done(). Started as a DMA_GET of one word, because that
 * trigger returns a status: an argument lost to a context switch is
 * detected and retried. Errors: -EINVAL (sizes, alignment, local outside
 * m), -EACCES (no READ right), or the device's refusal (tgr_reason_errno).
 */
int tgr_fetch(tgr_mem_t *m, void *local, tgr_seg_t *seg, size_t off,
	      size_t size);

/*
 * User-level DMA between local memory (inside m) and the segment:
 * put = local -> remote (WRITE right), get = remote -> local (READ).
 * Split into one transfer per stretch that crosses no page boundary on
 * either side; each is an argument store of its length to the local
 * mirror and a trigger load of the remote shadow address. Non-blocking;
 * tgr_wait_done() waits for all of them; when all the card's transfer
 * slots are in flight, the call waits for one. Errors: -EINVAL (ranges;
 * local, off and len must be multiples of 4), -EACCES (rights), -EAGAIN
 * (the argument was lost 100 times in a row), -EBUSY (no transfer slot
 * for 10 s), or the device's refusal (tgr_reason_errno); transfers
 * started before the error still complete.
 */
int tgr_dma_put(tgr_mem_t *m, const void *local, tgr_seg_t *seg, size_t off,
		size_t len);
int tgr_dma_get(tgr_mem_t *m, void *local, tgr_seg_t *seg, size_t off,
		size_t len);

/*
 * Wait until every fetch and DMA started through t has finished, polling
 * the context's status page. 0: all done; -EIO: at least one failed
 * since the last call (an XFER_FAIL event tells which); -ETIMEDOUT after
 * timeout_ms (< 0: no limit).
 */
int tgr_wait_done(tgr_t *t, int timeout_ms);

/* ---- multicast (eager update) ----------------------------------------- */

/*
 * Join group `group` (0..63): [addr, addr + len) (page aligned) becomes
 * this node's copy of the group's pages. Stores through tgr_mcast_ptr()
 * go to every member, this node included, in one order for all; loads
 * read the local copy. Errors: -EINVAL (group, alignment), -EBUSY
 * (already a member), -EFAULT, -ENOSPC.
 */
int tgr_mcast_join(tgr_t *t, unsigned int group, void *addr, size_t len,
		   tgr_mcast_t **out);
/* The multicast address of byte off of the group pages, NULL outside. */
volatile void *tgr_mcast_ptr(const tgr_mcast_t *m, size_t off);
void tgr_mcast_leave(tgr_mcast_t *m);

/* ---- access counters and events -------------------------------------- */

/*
 * Arm page `page` of the import's access counter: each access decrements
 * it, and reaching 0 queues a TGR_EV_CNT_ZERO event (count 0 disarms).
 * Errors: -EINVAL (page outside the segment).
 */
int tgr_counter_arm(tgr_seg_t *seg, unsigned int page, uint32_t count);

/*
 * Wait up to timeout_ms (0: do not wait, < 0: no limit) for events of
 * this context: counters at zero, refused requests, failed remote reads
 * and transfers, stale imports, deferred queue overflows. Copies up to
 * max of them into ev; returns how many (0 on timeout), or -errno.
 * *lost (if not NULL) gets the number the driver had to drop.
 */
int tgr_poll_events(tgr_t *t, struct tgr_event *ev, unsigned int max,
		    int timeout_ms, unsigned int *lost);
/* A one-line description of an event, for logs ("VIOL_IN from node 2 ..."). */
const char *tgr_event_str(const struct tgr_event *ev, char *buf, size_t len);

/* ---- remote enqueue (REQ) -------------------------------------------- */

/*
 * Create a REQ queue in this node's memory: a hardware buffer of `bytes`
 * (a power of 2, 64..65536), which the NIC fills, and `copies` overflow
 * buffers (0: the driver's default). Other nodes open it with the segid
 * (tgr_q_segid()). Errors: -EINVAL (bytes, copies), -ENOMEM, -ENOSPC.
 */
int tgr_q_create(tgr_t *t, uint32_t bytes, uint32_t copies, tgr_q_t **out);
uint32_t tgr_q_segid(const tgr_q_t *q);
void tgr_q_destroy(tgr_q_t *q);

/*
 * Dequeue one item (the paper's user-level deq): take the queue's lock,
 * set the do-not-preempt-me flag, read the oldest item, clear the flag
 * and, if the kernel found the flag set during an overflow (the full
 * flag), ask the driver to link a buffer and restart the NIC (RELINK)
 * before the lock is released. Threads of this process may share q.
 * While an overflow waits for that RELINK the whole NI is stopped (the
 * paper's design), so a receiver must keep calling tgr_deq(): a process
 * that sleeps in poll() wakes for the TGR_EVENT_QFULL event.
 * 1: *item set; 0: the queue is empty; -EIO: the queue's memory was
 * damaged; or RELINK's error when no item was taken.
 */
int tgr_deq(tgr_q_t *q, uint32_t *item);

/* The queue's control-page counters. */
struct tgr_q_stats {
	uint32_t overflows;	/* overflows copied into an overflow buffer */
	uint32_t deferred;	/* overflows that found a dequeue running */
	uint32_t nofree;	/* overflows with no free overflow buffer */
	uint32_t relinks;	/* RELINKs that restarted the NIC */
	uint32_t lost;		/* resets of a damaged queue */
	uint32_t full;		/* 1: an overflow waits for a RELINK */
};
void tgr_q_stats(const tgr_q_t *q, struct tgr_q_stats *st);

/*
 * Open node `node`'s queue segid for enqueuing (an import with the REQ
 * right, mapping its REQ shadow page). Errors as tgr_import().
 */
int tgr_q_open_remote(tgr_t *t, unsigned int node, uint32_t segid,
		      tgr_rq_t **out);
void tgr_q_close_remote(tgr_rq_t *rq);

/*
 * Enqueue `item` into the remote queue: ONE 32-bit store to the queue's
 * shadow address. It never blocks on the receiver and never fails
 * locally; a refused enqueue shows up as an event. Items from one node
 * arrive in order.
 */
void tgr_enq(tgr_rq_t *rq, uint32_t item);

#endif /* TGR_H */
