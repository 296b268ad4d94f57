/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libtgr: device, export/import, remote access, atomics, fetch and DMA,
 * multicast, counters and events (tgr.h). The REQ queues are in
 * tgr_queue.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tgr_int.h"

#define TGR_DMA_RETRIES	100		/* arguments lost to context switches */
#define TGR_DMA_BUSY_WAITS	100000	/* x 100 us: the card's slots all busy */

/* ---- helpers ---------------------------------------------------------- */

int tgr_ioctl(const tgr_t *t, unsigned long req, void *arg)
{
	int r;

	do {
		r = ioctl(t->fd, req, arg);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

void *tgr_map(const tgr_t *t, uint64_t cookie, size_t len, int prot, int *err)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, t->fd, (off_t)cookie);

	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	return p;
}

void tgr_obj_add(tgr_t *t, struct tgr_obj *o, void (*release)(struct tgr_obj *))
{
	o->release = release;
	pthread_mutex_lock(&t->lock);
	o->next = t->objs.next;
	o->prev = &t->objs;
	t->objs.next->prev = o;
	t->objs.next = o;
	pthread_mutex_unlock(&t->lock);
}

void tgr_obj_del(tgr_t *t, struct tgr_obj *o)
{
	pthread_mutex_lock(&t->lock);
	o->prev->next = o->next;
	o->next->prev = o->prev;
	o->next = o->prev = o;
	pthread_mutex_unlock(&t->lock);
}

static size_t pages_bytes(uint32_t npages)
{
	return (size_t)npages * TGR_PAGE_SIZE;
}

static int page_range_ok(const void *addr, size_t len)
{
	return len && !((uintptr_t)addr % TGR_PAGE_SIZE) &&
	       !(len % TGR_PAGE_SIZE);
}

/* ---- errors ----------------------------------------------------------- */

static const char *const reason_names[] = {
	[TGR_ERR_OK] = "OK",
	[TGR_ERR_UNEXPORTED] = "UNEXPORTED",
	[TGR_ERR_RIGHTS] = "RIGHTS",
	[TGR_ERR_STALE] = "STALE",
	[TGR_ERR_RANGE] = "RANGE",
	[TGR_ERR_BADQUEUE] = "BADQUEUE",
	[TGR_ERR_BADSIZE] = "BADSIZE",
	[TGR_ERR_BADADDR] = "BADADDR",
	[TGR_ERR_TIMEOUT] = "TIMEOUT",
	[TGR_ERR_UNREACHABLE] = "UNREACHABLE",
	[TGR_ERR_PEER_RESET] = "PEER_RESET",
	[TGR_ERR_NOPTE] = "NOPTE",
	[TGR_ERR_BADOP] = "BADOP",
	[TGR_ERR_NOARGS] = "NOARGS",
	[TGR_ERR_NOCTX] = "NOCTX",
	[TGR_ERR_BADCTX] = "BADCTX",
	[TGR_ERR_PENDING] = "PENDING",
};

const char *tgr_reason_name(unsigned int reason)
{
	if (reason < sizeof(reason_names) / sizeof(reason_names[0]) &&
	    reason_names[reason])
		return reason_names[reason];
	return "unknown reason";
}

int tgr_reason_errno(unsigned int reason)
{
	switch (reason) {
	case TGR_ERR_OK:		return 0;
	case TGR_ERR_UNEXPORTED:	return -ENOENT;
	case TGR_ERR_RIGHTS:		return -EACCES;
	case TGR_ERR_STALE:		return -ESTALE;
	case TGR_ERR_RANGE:		return -ERANGE;
	case TGR_ERR_BADQUEUE:		return -EINVAL;
	case TGR_ERR_BADSIZE:		return -EINVAL;
	case TGR_ERR_BADADDR:		return -EFAULT;
	case TGR_ERR_TIMEOUT:		return -ETIMEDOUT;
	case TGR_ERR_UNREACHABLE:	return -EHOSTUNREACH;
	case TGR_ERR_PEER_RESET:	return -ECONNRESET;
	case TGR_ERR_NOPTE:		return -EFAULT;
	case TGR_ERR_BADOP:		return -EINVAL;
	case TGR_ERR_NOARGS:		return -EAGAIN;
	case TGR_ERR_NOCTX:		return -EPERM;
	case TGR_ERR_BADCTX:		return -EPERM;
	case TGR_ERR_PENDING:		return -EINPROGRESS;
	default:			return -EIO;
	}
}

const char *tgr_strerror(int err)
{
	switch (-err) {
	case 0:
		return "success";
	case ENOENT:
		return "no such segment: not exported, or no Telegraphos device (tgr.ko)";
	case EACCES:
		return "access refused: the rights asked exceed the export's";
	case EHOSTUNREACH:
		return "node unreachable (no such node, or its link is down)";
	case ETIMEDOUT:
		return "no answer from the node in time";
	case ESTALE:
		return "the segment was unexported by its owner (stale import)";
	case EPROTO:
		return "tgr.ko speaks another ABI than this libtgr";
	case ENETDOWN:
		return "the Telegraphos link is down";
	case ENOSPC:
		return "no room (remote window, export table or overflow buffers)";
	case EPERM:
		return "this thread is not registered (tgr_thread_register)";
	case EAGAIN:
		return "the shadow argument was lost to context switches; try again";
	case ERANGE:
		return "offset outside the remote page or segment";
	case EIO:
		return "a transfer failed, or the queue's memory is damaged";
	default:
		return strerror(-err);
	}
}

/* ---- device ----------------------------------------------------------- */

int tgr_open(tgr_t **out)
{
	const char *path = getenv("TGR_DEVICE");
	tgr_t *t;
	int err = 0;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	t->objs.next = t->objs.prev = &t->objs;
	t->fd = open(path && *path ? path : TGR_DEVICE, O_RDWR | O_CLOEXEC);
	if (t->fd < 0) {
		err = -errno;
		goto fail_free;
	}
	err = tgr_ioctl(t, TGR_IOC_INFO, &t->info);
	if (err)
		goto fail_close;
	if (t->info.abi != TGR_ABI_VERSION) {
		err = -EPROTO;
		goto fail_close;
	}
	if (t->info.nodes == 0) {
		err = -ENETDOWN;
		goto fail_close;
	}
	t->status = tgr_map(t, t->info.status_cookie, TGR_PAGE_SIZE, PROT_READ,
			    &err);
	if (!t->status)
		goto fail_close;
	t->errors_seen = t->status[TGR_STATUS_ERRORS / 4];
	err = tgr_thread_register(t);
	if (err)
		goto fail_unmap;
	*out = t;
	return 0;

fail_unmap:
	munmap((void *)t->status, TGR_PAGE_SIZE);
fail_close:
	close(t->fd);
fail_free:
	pthread_mutex_destroy(&t->lock);
	free(t);
	return err;
}

void tgr_close(tgr_t *t)
{
	if (!t)
		return;
	while (t->objs.next != &t->objs)
		t->objs.next->release(t->objs.next);
	munmap((void *)t->status, TGR_PAGE_SIZE);
	close(t->fd);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

int tgr_fd(const tgr_t *t)
{
	return t->fd;
}

unsigned int tgr_node(const tgr_t *t)
{
	return t->info.node;
}

unsigned int tgr_nodes(const tgr_t *t)
{
	return t->info.nodes;
}

unsigned int tgr_ctx(const tgr_t *t)
{
	return t->info.ctx;
}

int tgr_info(tgr_t *t, struct tgr_info *info)
{
	return tgr_ioctl(t, TGR_IOC_INFO, info);
}

int tgr_thread_register(tgr_t *t)
{
	struct tgr_thread th = { .enable = 1 };

	return tgr_ioctl(t, TGR_IOC_THREAD, &th);
}

int tgr_thread_unregister(tgr_t *t)
{
	struct tgr_thread th = { .enable = 0 };

	return tgr_ioctl(t, TGR_IOC_THREAD, &th);
}

/* ---- export and import ------------------------------------------------ */

int tgr_export(tgr_t *t, void *addr, size_t len, unsigned int rights,
	       uint32_t *segid)
{
	struct tgr_export ex = {
		.addr = (uintptr_t)addr, .len = len, .rights = rights,
	};
	int err;

	if (!page_range_ok(addr, len) || !rights || (rights & ~TGR_R_ALL))
		return -EINVAL;
	err = tgr_ioctl(t, TGR_IOC_EXPORT, &ex);
	if (!err)
		*segid = ex.segid;
	return err;
}

int tgr_unexport(tgr_t *t, uint32_t segid)
{
	struct tgr_id id = { .id = segid };

	return tgr_ioctl(t, TGR_IOC_UNEXPORT, &id);
}

static void seg_unmap(tgr_seg_t *seg)
{
	int op;

	if (seg->window)
		munmap((void *)seg->window, seg->size);
	for (op = 0; op < TGR_OP_NUM; op++)
		if (seg->op[op])
			munmap((void *)seg->op[op], seg->size);
}

static void seg_release(struct tgr_obj *o)
{
	tgr_seg_t *seg = (tgr_seg_t *)o;
	struct tgr_id id = { .id = seg->imp.iid };

	tgr_obj_del(seg->t, o);
	seg_unmap(seg);
	tgr_ioctl(seg->t, TGR_IOC_UNIMPORT, &id);
	free(seg);
}

/* What a shadow window is accessed with: triggers are loads or stores. */
static int op_prot(int op)
{
	switch (op) {
	case TGR_OP_REQ:
	case TGR_OP_FETCH:
		return PROT_WRITE;
	case TGR_OP_DMA_PUT:
	case TGR_OP_DMA_GET:
		return PROT_READ;
	default:
		return PROT_READ | PROT_WRITE;
	}
}

int tgr_import(tgr_t *t, unsigned int node, uint32_t segid,
	       unsigned int rights, tgr_seg_t **out)
{
	tgr_seg_t *seg;
	int err, op, prot = 0;

	*out = NULL;
	if (rights & ~TGR_R_ALL)
		return -EINVAL;
	seg = calloc(1, sizeof(*seg));
	if (!seg)
		return -ENOMEM;
	seg->t = t;
	seg->imp.node = node;
	seg->imp.segid = segid;
	seg->imp.rights = rights;
	err = tgr_ioctl(t, TGR_IOC_IMPORT, &seg->imp);
	if (err) {
		free(seg);
		return err;
	}
	seg->size = pages_bytes(seg->imp.npages);
	if (seg->imp.granted & TGR_R_READ)
		prot |= PROT_READ;
	if (seg->imp.granted & TGR_R_WRITE)
		prot |= PROT_WRITE;
	if (prot && seg->imp.window_cookie) {
		seg->window = tgr_map(t, seg->imp.window_cookie, seg->size, prot,
				      &err);
		if (!seg->window)
			goto fail;
	}
	for (op = 0; op < TGR_OP_NUM; op++) {
		if (!seg->imp.op_cookie[op])
			continue;
		seg->op[op] = tgr_map(t, seg->imp.op_cookie[op], seg->size,
				      op_prot(op), &err);
		if (!seg->op[op])
			goto fail;
	}
	tgr_obj_add(t, &seg->obj, seg_release);
	*out = seg;
	return 0;

fail:
	seg_unmap(seg);
	{
		struct tgr_id id = { .id = seg->imp.iid };

		tgr_ioctl(t, TGR_IOC_UNIMPORT, &id);
	}
	free(seg);
	return err;
}

void tgr_unimport(tgr_seg_t *seg)
{
	if (seg)
		seg_release(&seg->obj);
}

size_t tgr_seg_size(const tgr_seg_t *seg)
{
	return seg->size;
}

unsigned int tgr_seg_rights(const tgr_seg_t *seg)
{
	return seg->imp.granted;
}

unsigned int tgr_seg_node(const tgr_seg_t *seg)
{
	return seg->imp.node;
}

uint32_t tgr_seg_iid(const tgr_seg_t *seg)
{
	return seg->imp.iid;
}

uint64_t tgr_seg_window_cookie(const tgr_seg_t *seg)
{
	return seg->imp.window_cookie;
}

volatile void *tgr_ptr(const tgr_seg_t *seg, size_t off)
{
	if (!seg->window || off >= seg->size)
		return NULL;
	return seg->window + off;
}

/* ---- atomics ---------------------------------------------------------- */

/* The shadow address of op for a naturally aligned word of `size`. */
static int shadow_word(const tgr_seg_t *seg, int op, size_t off, size_t size,
		       volatile void **p)
{
	if (off >= seg->size || size > seg->size - off || off % size)
		return -EINVAL;
	if (!seg->op[op])
		return -EACCES;
	*p = seg->op[op] + off;
	return 0;
}

int tgr_fetch_inc(tgr_seg_t *seg, size_t off, uint32_t *old)
{
	volatile void *p;
	int err = shadow_word(seg, TGR_OP_FADD, off, 4, &p);

	if (!err)
		*old = *(volatile uint32_t *)p;
	return err;
}

int tgr_fetch_inc64(tgr_seg_t *seg, size_t off, uint64_t *old)
{
	volatile void *p;
	int err = shadow_word(seg, TGR_OP_FADD, off, 8, &p);

	if (!err)
		*old = *(volatile uint64_t *)p;
	return err;
}

int tgr_fetch_add(tgr_seg_t *seg, size_t off, uint32_t add, uint32_t *old)
{
	volatile void *p;
	int err = shadow_word(seg, TGR_OP_FADD, off, 4, &p);

	if (err)
		return err;
	*(volatile uint32_t *)p = add;
	*old = *(volatile uint32_t *)p;
	return 0;
}

int tgr_fetch_add64(tgr_seg_t *seg, size_t off, uint64_t add, uint64_t *old)
{
	volatile void *p;
	int err = shadow_word(seg, TGR_OP_FADD, off, 8, &p);

	if (err)
		return err;
	*(volatile uint64_t *)p = add;
	*old = *(volatile uint64_t *)p;
	return 0;
}

int tgr_swap(tgr_seg_t *seg, size_t off, uint32_t val, uint32_t *old)
{
	volatile void *p;
	int err = shadow_word(seg, TGR_OP_SWAP, off, 4, &p);

	if (err)
		return err;
	*(volatile uint32_t *)p = val;
	*old = *(volatile uint32_t *)p;
	return 0;
}

int tgr_swap64(tgr_seg_t *seg, size_t off, uint64_t val, uint64_t *old)
{
	volatile void *p;
	int err = shadow_word(seg, TGR_OP_SWAP, off, 8, &p);

	if (err)
		return err;
	*(volatile uint64_t *)p = val;
	*old = *(volatile uint64_t *)p;
	return 0;
}

int tgr_cas(tgr_seg_t *seg, size_t off, uint32_t expected, uint32_t val,
	    uint32_t *old)
{
	volatile void *p;
	int err = shadow_word(seg, TGR_OP_CAS, off, 8, &p);

	if (err)
		return err;
	*(volatile uint64_t *)p = (uint64_t)val << 32 | expected;
	*old = *(volatile uint32_t *)p;
	return 0;
}

/* ---- fetch and DMA ---------------------------------------------------- */

struct tgr_mem {
	struct tgr_obj obj;
	tgr_t *t;
	uint8_t *addr;
	size_t len;
	volatile uint8_t *mirror;
	uint32_t mid;
};

static void mem_release(struct tgr_obj *o)
{
	tgr_mem_t *m = (tgr_mem_t *)o;
	struct tgr_id id = { .id = m->mid };

	tgr_obj_del(m->t, o);
	munmap((void *)m->mirror, m->len);
	tgr_ioctl(m->t, TGR_IOC_UNMAP_LOCAL, &id);
	free(m);
}

int tgr_mem_register(tgr_t *t, void *addr, size_t len, tgr_mem_t **out)
{
	struct tgr_map_local ml = { .addr = (uintptr_t)addr, .len = len };
	tgr_mem_t *m;
	int err;

	*out = NULL;
	if (!page_range_ok(addr, len))
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = tgr_ioctl(t, TGR_IOC_MAP_LOCAL, &ml);
	if (err) {
		free(m);
		return err;
	}
	m->t = t;
	m->addr = addr;
	m->len = len;
	m->mid = ml.mid;
	m->mirror = tgr_map(t, ml.cookie, len, PROT_READ | PROT_WRITE, &err);
	if (!m->mirror) {
		struct tgr_id id = { .id = ml.mid };

		tgr_ioctl(t, TGR_IOC_UNMAP_LOCAL, &id);
		free(m);
		return err;
	}
	tgr_obj_add(t, &m->obj, mem_release);
	*out = m;
	return 0;
}

void tgr_mem_unregister(tgr_mem_t *m)
{
	if (m)
		mem_release(&m->obj);
}

/*
 * One transfer that crosses no page on either side: the argument store
 * (its length) to the local mirror, then the trigger load, which returns
 * the status. NOARGS means a context switch cleared the argument between
 * the two accesses: do both again. PENDING means every transfer slot of
 * the card is in flight: wait a little and try again.
 */
static int xfer_one(tgr_mem_t *m, size_t loff, tgr_seg_t *seg, size_t off,
		    uint32_t len, int op)
{
	volatile uint32_t *arg = (volatile uint32_t *)(m->mirror + loff);
	volatile uint32_t *trig = (volatile uint32_t *)(seg->op[op] + off);
	int lost = 0, busy = 0;

	while (lost < TGR_DMA_RETRIES && busy < TGR_DMA_BUSY_WAITS) {
		uint32_t st;

		*arg = len;
		st = *trig;
		if (st == TGR_ERR_OK) {
			__atomic_add_fetch(&m->t->issued, 1, __ATOMIC_SEQ_CST);
			return 0;
		}
		if (st == TGR_ERR_NOARGS) {
			lost++;
		} else if (st == TGR_ERR_PENDING) {
			busy++;
			usleep(100);
		} else if (st == (uint32_t)TGR_RD_ALL_ONES) {
			return -EFAULT;
		} else {
			return tgr_reason_errno(st);
		}
	}
	return lost >= TGR_DMA_RETRIES ? -EAGAIN : -EBUSY;
}

static int xfer(tgr_mem_t *m, const void *local, tgr_seg_t *seg, size_t off,
		size_t len, int op)
{
	size_t loff = (const uint8_t *)local - m->addr;
	int err;

	if ((const uint8_t *)local < m->addr || loff >= m->len ||
	    len > m->len - loff || off >= seg->size || len > seg->size - off)
		return -EINVAL;
	/* the argument store and the trigger are aligned 32-bit accesses */
	if (!len || (loff | off | len) % 4)
		return -EINVAL;
	if (!seg->op[op])
		return -EACCES;
	while (len) {
		size_t n = len;

		if (n > TGR_PAGE_SIZE - loff % TGR_PAGE_SIZE)
			n = TGR_PAGE_SIZE - loff % TGR_PAGE_SIZE;
		if (n > TGR_PAGE_SIZE - off % TGR_PAGE_SIZE)
			n = TGR_PAGE_SIZE - off % TGR_PAGE_SIZE;
		err = xfer_one(m, loff, seg, off, n, op);
		if (err)
			return err;
		loff += n;
		off += n;
		len -= n;
	}
	return 0;
}

int tgr_fetch(tgr_mem_t *m, void *local, tgr_seg_t *seg, size_t off,
	      size_t size)
{
	if ((size != 4 && size != 8) || off % size ||
	    (uintptr_t)local % size)
		return -EINVAL;
	return xfer(m, local, seg, off, size, TGR_OP_DMA_GET);
}

int tgr_dma_put(tgr_mem_t *m, const void *local, tgr_seg_t *seg, size_t off,
		size_t len)
{
	return xfer(m, local, seg, off, len, TGR_OP_DMA_PUT);
}

int tgr_dma_get(tgr_mem_t *m, void *local, tgr_seg_t *seg, size_t off,
		size_t len)
{
	return xfer(m, local, seg, off, len, TGR_OP_DMA_GET);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tgr_wait_done(tgr_t *t, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	uint32_t spins = 0;

	for (;;) {
		uint32_t issued = __atomic_load_n(&t->issued, __ATOMIC_SEQ_CST);
		uint32_t done = t->status[TGR_STATUS_DONE / 4];
		uint32_t errors = t->status[TGR_STATUS_ERRORS / 4];

		/* wrapping counters: finished - issued >= 0 */
		if ((int32_t)(done + errors - issued) >= 0) {
			if (errors != t->errors_seen) {
				t->errors_seen = errors;
				return -EIO;
			}
			return 0;
		}
		if (timeout_ms >= 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
		if (++spins > 1000)
			usleep(50);
	}
}

/* ---- multicast -------------------------------------------------------- */

struct tgr_mcast {
	struct tgr_obj obj;
	tgr_t *t;
	unsigned int group;
	size_t len;
	volatile uint8_t *window;
};

static void mcast_release(struct tgr_obj *o)
{
	tgr_mcast_t *m = (tgr_mcast_t *)o;
	struct tgr_mcast_leave lv = { .group = m->group };

	tgr_obj_del(m->t, o);
	munmap((void *)m->window, m->len);
	tgr_ioctl(m->t, TGR_IOC_MCAST_LEAVE, &lv);
	free(m);
}

int tgr_mcast_join(tgr_t *t, unsigned int group, void *addr, size_t len,
		   tgr_mcast_t **out)
{
	struct tgr_mcast_join j = {
		.addr = (uintptr_t)addr, .len = len, .group = group,
	};
	tgr_mcast_t *m;
	int err;

	*out = NULL;
	if (group >= TGR_GROUPS || !page_range_ok(addr, len))
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = tgr_ioctl(t, TGR_IOC_MCAST_JOIN, &j);
	if (err) {
		free(m);
		return err;
	}
	m->t = t;
	m->group = group;
	m->len = pages_bytes(j.npages);
	m->window = tgr_map(t, j.window_cookie, m->len, PROT_READ | PROT_WRITE,
			    &err);
	if (!m->window) {
		struct tgr_mcast_leave lv = { .group = group };

		tgr_ioctl(t, TGR_IOC_MCAST_LEAVE, &lv);
		free(m);
		return err;
	}
	tgr_obj_add(t, &m->obj, mcast_release);
	*out = m;
	return 0;
}

volatile void *tgr_mcast_ptr(const tgr_mcast_t *m, size_t off)
{
	return off < m->len ? m->window + off : NULL;
}

void tgr_mcast_leave(tgr_mcast_t *m)
{
	if (m)
		mcast_release(&m->obj);
}

/* ---- counters and events ---------------------------------------------- */

int tgr_counter_arm(tgr_seg_t *seg, unsigned int page, uint32_t count)
{
	struct tgr_counter_arm ca = {
		.iid = seg->imp.iid, .page = page, .count = count,
	};

	if (page >= seg->imp.npages)
		return -EINVAL;
	return tgr_ioctl(seg->t, TGR_IOC_COUNTER_ARM, &ca);
}

static int events_fetch(tgr_t *t, struct tgr_event *ev, unsigned int max,
			unsigned int *lost)
{
	struct tgr_events e = { .buf = (uintptr_t)ev, .max = max };
	int err = tgr_ioctl(t, TGR_IOC_EVENTS, &e);

	if (err)
		return err;
	if (lost)
		*lost += e.lost;
	return (int)e.count;
}

int tgr_poll_events(tgr_t *t, struct tgr_event *ev, unsigned int max,
		    int timeout_ms, unsigned int *lost)
{
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN | POLLPRI };
	int n;

	if (lost)
		*lost = 0;
	if (!max)
		return -EINVAL;
	n = events_fetch(t, ev, max, lost);
	if (n != 0 || timeout_ms == 0)
		return n;
	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	return events_fetch(t, ev, max, lost);
}

static const char *event_name(uint32_t type)
{
	switch (type) {
	case TGR_EV_VIOL_IN:	return "VIOL_IN";
	case TGR_EV_VIOL_OUT:	return "VIOL_OUT";
	case TGR_EV_RREAD_FAIL:	return "RREAD_FAIL";
	case TGR_EV_CNT_ZERO:	return "CNT_ZERO";
	case TGR_EV_SEQ_GAP:	return "SEQ_GAP";
	case TGR_EV_PEER_RESET:	return "PEER_RESET";
	case TGR_EV_XFER_FAIL:	return "XFER_FAIL";
	case TGR_EV_LOCAL_ERR:	return "LOCAL_ERR";
	case TGR_EVENT_STALE:	return "STALE";
	case TGR_EVENT_QFULL:	return "QFULL";
	default:		return "EVENT?";
	}
}

const char *tgr_event_str(const struct tgr_event *ev, char *buf, size_t len)
{
	snprintf(buf, len, "%s reason %s node %u op %u page/eidx %u data %#x id %u cpu %u",
		 event_name(ev->type), tgr_reason_name(ev->reason), ev->node,
		 ev->op, ev->page, ev->data, ev->id, ev->cpu);
	return buf;
}
