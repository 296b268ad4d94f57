/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HAL backend for the LANai-style Myrinet card (myri.ko, /dev/myri0):
 * PS_HAL=myri.
 *
 * The card's firmware (the MCP) runs a reliable protocol and moves data
 * between the network and memory itself, so the data path here is memory
 * only: a send copies the packet into the next send slot in the card's
 * SRAM and rings the doorbell; a receive reads the event ring and the data
 * ring that the MCP writes into host memory.  Every process of the node
 * uses context 0 (MCP_HAL_CTX): ports processes share it, rawdata has it
 * alone.  Ring positions live in the context's user page, which they all
 * map, and the caller serialises (ports with its lock in the pool).
 *
 * Waiting: a few polls, then loads of the doorbell page's WAIT window,
 * which stall the vCPU until the MCP notifies the context (no system
 * call, no interrupt), for at most PS_HAL_STALL_MS; then asleep in the
 * driver (MYRI_IOC_WAIT).  Layout and protocol: myri_mcp_if.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vcluster/hw/lanai_regs.h"
#include "uapi/myri_ioctl.h"
#include "vcluster/fw/myri_mcp_if.h"
#include "ps_hal.h"
#include "ps_sys.h"

#define MYRI_POLLS		32	/* status polls first */
#define MYRI_POLL_US		50	/* more before a stall (myri_wait()) */
#define MYRI_CLOSE_MS		2000	/* close waits this long for sends */

struct myri {
	int fd;
	struct myri_ctx_open lay;
	volatile struct myri_ctx_user *user;	/* the send area's page 0 */
	volatile uint8_t *slots;
	volatile uint32_t *db;			/* the doorbell page */
	const volatile struct myri_event *ev;
	const volatile uint8_t *ring;
	void *rx_map;
	void *pool;
	uint32_t slot_mask;
	uint32_t ev_mask;
	uint32_t ring_mask;
	/* the packet being received; its position is the shared ev_cons */
	int cur;		/* a packet is peeked */
	uint32_t cur_ev;	/* its event index (free-running) */
	uint32_t cur_pos;	/* its free-running data ring position */
	uint32_t cur_len;
	uint32_t cur_off;	/* bytes read */
	unsigned int cur_src;
	/* our sends, for close: the cookie per slot, 0: none */
	uint32_t *posted;
	uint32_t cookie_seq;
	int err_seen;		/* an error event came: PS_HAL_ERR */
	unsigned long errors;	/* SEND_ERR, PEER_RESET, CTX_ERR events */
	unsigned long dropped;	/* RX events that were not ours or bad */
};

#define M(h) ((struct myri *)(h)->priv)

static inline uint32_t ld_acquire(const volatile uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void st_release(volatile uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline volatile struct myri_slot *slot_at(struct myri *m, uint32_t i)
{
	return (volatile struct myri_slot *)(m->slots +
					     (i & m->slot_mask) *
					     m->lay.slot_size);
}

static void myri_unmap(struct myri *m)
{
	if (m->user)
		munmap((void *)m->user, m->lay.send_size);
	if (m->db)
		munmap((void *)m->db, LANAI_DOORBELL_PAGE);
	if (m->rx_map)
		munmap(m->rx_map, m->lay.rx_size);
	if (m->pool)
		munmap(m->pool, m->lay.pool_size);
	if (m->fd >= 0)
		ps_sys_close(m->fd);
	free(m->posted);
	free(m);
}

static void *map(struct myri *m, size_t len, int prot, uint64_t off)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, m->fd, (off_t)off);

	return p == MAP_FAILED ? NULL : p;
}

static int myri_open(ps_hal_t *h, int flags)
{
	const char *path = getenv("PS_HAL_MYRI_DEV");
	struct myri *m;
	void *p;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -1;
	m->fd = ps_hal_open_device(path && *path ? path : MYRI_DEVICE);
	if (m->fd < 0) {
		err = errno;
		goto fail;
	}
	/* the driver keeps the HAL's rules: EXCL alone, SHARED together,
	 * 0 (tools) attaches unchecked */
	m->lay.ctx = MCP_HAL_CTX;
	m->lay.flags = (flags & PS_HAL_EXCL) ? MYRI_CTX_EXCL :
		       (flags & PS_HAL_SHARED) ? MYRI_CTX_SHARED :
						 MYRI_CTX_JOIN;
	if (ioctl(m->fd, MYRI_IOC_OPEN_CTX, &m->lay)) {
		err = errno;
		goto fail;
	}
	if (!m->lay.nodes) {
		err = ENETDOWN;
		goto fail;
	}
	err = EPROTO;	/* a layout the driver should never give */
	if (m->lay.slot_size <= MYRI_SLOT_HDR || !m->lay.nslots ||
	    (m->lay.nslots & (m->lay.nslots - 1)) || !m->lay.nev ||
	    (m->lay.nev & (m->lay.nev - 1)) || !m->lay.ring_size ||
	    (m->lay.ring_size & (m->lay.ring_size - 1)))
		goto fail;
	p = map(m, m->lay.send_size, PROT_READ | PROT_WRITE, m->lay.mmap_send);
	if (!p)
		goto fail_errno;
	m->user = p;
	m->slots = (volatile uint8_t *)p + 4096;
	p = map(m, LANAI_DOORBELL_PAGE, PROT_READ | PROT_WRITE,
		m->lay.mmap_doorbell);
	if (!p)
		goto fail_errno;
	m->db = p;
	p = map(m, m->lay.rx_size, PROT_READ, m->lay.mmap_rx);
	if (!p)
		goto fail_errno;
	m->rx_map = p;
	m->ev = p;
	m->ring = (const volatile uint8_t *)p + m->lay.ring_off;
	p = map(m, m->lay.pool_size, PROT_READ | PROT_WRITE, m->lay.mmap_pool);
	if (!p)
		goto fail_errno;
	m->pool = p;
	m->posted = calloc(m->lay.nslots, sizeof(*m->posted));
	if (!m->posted)
		goto fail_errno;
	m->slot_mask = m->lay.nslots - 1;
	m->ev_mask = m->lay.nev - 1;
	m->ring_mask = m->lay.ring_size - 1;
	m->cookie_seq = (uint32_t)getpid() << 12;
	h->priv = m;
	h->node = m->lay.node;
	h->nodes = m->lay.nodes;
	h->mtu = m->lay.slot_size - MYRI_SLOT_HDR;
	if (h->mtu > PS_HAL_MTU_MAX)
		h->mtu = PS_HAL_MTU_MAX;
	h->mtu &= ~(size_t)3;
	return 0;
fail_errno:
	err = errno;
fail:
	myri_unmap(m);
	errno = err;
	return -1;
}

/* Our slots that are still on their way: FREE, or reused by another. */
static int myri_sends_pending(struct myri *m)
{
	volatile struct myri_slot *s;
	uint32_t i;

	for (i = 0; i < m->lay.nslots; i++) {
		if (!m->posted[i])
			continue;
		s = slot_at(m, i);
		if (ld_acquire(&s->state) == MYRI_SLOT_FREE ||
		    s->cookie != m->posted[i])
			m->posted[i] = 0;
		else
			return 1;
	}
	return 0;
}

static void myri_close(ps_hal_t *h)
{
	struct myri *m = M(h);
	struct timespec ms = { 0, 1000000 };
	int i;

	/* Let our last packets arrive: the driver closes the context with
	 * the last user, and the MCP drops what it still holds. */
	for (i = 0; i < MYRI_CLOSE_MS && myri_sends_pending(m); i++)
		nanosleep(&ms, NULL);
	myri_unmap(m);
}

static void copy_iov(volatile uint8_t *dst, const struct iovec *iov,
		     int iovcnt)
{
	uint8_t *d = (uint8_t *)(uintptr_t)dst;
	int i;

	for (i = 0; i < iovcnt; i++) {
		memcpy(d, iov[i].iov_base, iov[i].iov_len);
		d += iov[i].iov_len;
	}
}

static int myri_send(ps_hal_t *h, unsigned int dest, const struct iovec *iov,
		     int iovcnt, size_t len)
{
	struct myri *m = M(h);
	uint32_t pos = m->user->slot_next;
	uint32_t i = pos & m->slot_mask, cookie;
	volatile struct myri_slot *s = slot_at(m, i);
	uint8_t flags = 0;

	if (ld_acquire(&s->state) != MYRI_SLOT_FREE) {
		errno = EAGAIN;
		return -1;
	}
	copy_iov(s->data, iov, iovcnt);
	/*
	 * A freed slot makes no event unless asked.  Ask while the ring is
	 * half full or more, so that a sender that finds it full is woken
	 * as slots come back; an idle sender costs the MCP nothing.
	 */
	if (m->slot_mask < 2 ||
	    ld_acquire(&slot_at(m, pos + m->lay.nslots / 2)->state) !=
	    MYRI_SLOT_FREE)
		flags |= MYRI_SLOT_F_EVENT;
	cookie = ++m->cookie_seq;
	if (!cookie)
		cookie = ++m->cookie_seq;
	s->dst_node = dest;
	s->dst_ctx = MCP_HAL_CTX;
	s->flags = flags;
	s->len = len;
	s->status = 0;
	s->cookie = cookie;
	st_release(&s->state, MYRI_SLOT_POSTED);
	st_release(&m->user->slot_next, pos + 1);
	m->posted[i] = cookie;
	/* all of it in SRAM before the doorbell (write-combining mapping) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	m->db[0] = i;
	return 0;
}

/* Event e is done with; an RX event frees its payload too. */
static void consume(struct myri *m, uint32_t e, uint32_t rx_end)
{
	if (rx_end)
		st_release(&m->user->rx_cons, rx_end);
	st_release(&m->user->ev_cons, e + 1);
	if (m->cur && m->cur_ev == e)
		m->cur = 0;
}

static uint32_t rx_end(uint32_t pos, uint32_t len)
{
	return pos + ((len + MYRI_RX_ALIGN - 1) & ~(uint32_t)(MYRI_RX_ALIGN - 1));
}

/*
 * Take the next event: an RX event for us becomes the current packet;
 * others are counted and consumed.  1: a packet, 0: none left.
 */
static int next_packet(ps_hal_t *h)
{
	struct myri *m = M(h);
	const volatile struct myri_event *ev;
	uint32_t cons, pos, len, rx_cons;
	uint8_t type;

	for (;;) {
		cons = m->user->ev_cons;
		if (cons == ld_acquire(&m->user->ev_prod))
			return 0;
		ev = &m->ev[cons & m->ev_mask];
		type = ev->type;
		if (type != MYRI_EV_RX) {
			if (type == MYRI_EV_SEND_ERR ||
			    type == MYRI_EV_PEER_RESET ||
			    type == MYRI_EV_CTX_ERR) {
				m->errors++;
				m->err_seen = 1;
			}
			consume(m, cons, 0);	/* MYRI_EV_SENT: a freed slot */
			continue;
		}
		pos = ev->pos;
		len = ev->len;
		rx_cons = m->user->rx_cons;
		/* what the MCP wrote must lie in the ring; else skip it */
		if (!len || len > MCP_MAX_PAYLOAD ||
		    (pos & m->ring_mask) + len > m->lay.ring_size ||
		    pos - rx_cons > m->lay.ring_size) {
			m->dropped++;
			consume(m, cons, 0);
			continue;
		}
		/* only the HAL's packets: a raw sender may aim at ctx 0 */
		if (ev->src_ctx != MCP_HAL_CTX || ev->src_node >= h->nodes ||
		    len > h->mtu) {
			m->dropped++;
			consume(m, cons, rx_end(pos, len));
			continue;
		}
		m->cur = 1;
		m->cur_ev = cons;
		m->cur_pos = pos;
		m->cur_len = len;
		m->cur_off = 0;
		m->cur_src = ev->src_node;
		return 1;
	}
}

/* Is the current packet still the one at ev_cons? (Shared ring.) */
static int cur_valid(struct myri *m)
{
	if (m->cur && m->cur_ev != m->user->ev_cons)
		m->cur = 0;
	return m->cur;
}

static int myri_receive_header(ps_hal_t *h, unsigned int *src, size_t *len)
{
	struct myri *m = M(h);

	if (cur_valid(m)) {
		if (m->cur_off)	/* partly read: drop the rest */
			consume(m, m->cur_ev, rx_end(m->cur_pos, m->cur_len));
		else
			goto out;	/* a peek is repeatable */
	}
	if (!next_packet(h))
		return 0;
out:
	*src = m->cur_src;
	*len = m->cur_len;	/* exact: 1-byte granularity */
	return 1;
}

static int myri_receive_body(ps_hal_t *h, void *buf, size_t len)
{
	struct myri *m = M(h);

	if (!cur_valid(m)) {
		/* a packet read to its end is gone already: nothing to drop */
		if (!len)
			return 0;
		errno = EINVAL;
		return -1;
	}
	if (len > m->cur_len - m->cur_off) {
		errno = EINVAL;
		return -1;
	}
	if (!buf && !len) {
		consume(m, m->cur_ev, rx_end(m->cur_pos, m->cur_len));
		return 0;
	}
	memcpy(buf, (const void *)(uintptr_t)(m->ring +
					      (m->cur_pos & m->ring_mask) +
					      m->cur_off), len);
	m->cur_off += len;
	/* all read: free it now, the next process must not see it again */
	if (m->cur_off == m->cur_len)
		consume(m, m->cur_ev, rx_end(m->cur_pos, m->cur_len));
	return 0;
}

/*
 * PS_HAL_RX: an event is pending (a packet, or an event that the next
 * receive_header takes away and returns 0 for); PS_HAL_TX: the next slot
 * is free; PS_HAL_ERR: an error event came, or a request of ours was bad.
 */
static int myri_status(ps_hal_t *h)
{
	struct myri *m = M(h);
	int ev = 0;

	if (ld_acquire(&m->user->ev_prod) != m->user->ev_cons)
		ev |= PS_HAL_RX;
	if (ld_acquire(&slot_at(m, m->user->slot_next)->state) ==
	    MYRI_SLOT_FREE)
		ev |= PS_HAL_TX;
	if (m->err_seen || m->user->err)
		ev |= PS_HAL_ERR;
	return ev;
}

/*
 * Stall in WAIT-window loads until one of @events holds, for at most the
 * stall budget and *timeout_ms (-1: no limit), which is reduced by the
 * time spent unless an event holds.  A load returns when the MCP notifies
 * the context or after the card's wait timeout (2 ms), whichever is first.
 */
static int myri_stall(ps_hal_t *h, int events, int *timeout_ms)
{
	struct myri *m = M(h);
	int64_t t0 = ps_hal_now_ns(), t, budget = h->stall_ms;
	uint32_t seen;
	int ev;

	if (*timeout_ms >= 0 && *timeout_ms < budget)
		budget = *timeout_ms;
	for (;;) {
		seen = m->db[LANAI_DB_NOTIFY_COUNT / 4];
		/* the notify request before the check: one of the MCP's
		 * ev_prod store and our load sees the other */
		st_release(&m->user->want_notify, 1);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		ev = myri_status(h);
		if (ev & events)	/* met: no clock read on the way out */
			return ev;
		t = ps_hal_now_ns();
		if (t - t0 >= budget * 1000000)
			break;
		(void)m->db[LANAI_DB_WAIT(seen) / 4];
	}
	if (*timeout_ms > 0) {
		*timeout_ms -= (t - t0) / 1000000;
		if (*timeout_ms <= 0)
			*timeout_ms = 0;
	}
	return ev;
}

static int myri_wait(ps_hal_t *h, int events, int timeout_ms)
{
	struct myri *m = M(h);
	struct myri_wait w = { 0 };
	int ev, i;

	for (i = 0; i < MYRI_POLLS; i++) {
		ev = myri_status(h);
		if (ev & events)
			return ev;
	}
	if (h->stall_ms > 0 && timeout_ms != 0) {
		/* a stall ends when the MCP notifies us, some us after the
		 * event that a poll sees (in lock-step 3.5 us of a 16 us ports
		 * ping-pong): poll a while first; the stall holds the CPU
		 * as long, so only the host's CPU pays */
		int64_t t0 = ps_hal_now_ns();

		for (i = 1;; i++) {
			ev = myri_status(h);
			if (ev & events)
				return ev;
			if (!(i % 16) &&
			    ps_hal_now_ns() - t0 >= MYRI_POLL_US * 1000)
				break;
		}
		ev = myri_stall(h, events, &timeout_ms);
		if (ev & events)
			return ev;
	}
	if (timeout_ms == 0)
		return 0;
	if (events & PS_HAL_RX)
		w.events |= MYRI_WAIT_RX;
	if (events & PS_HAL_TX)
		w.events |= MYRI_WAIT_TX;
	w.timeout_ms = timeout_ms < 0 ? MYRI_WAIT_FOREVER :
					(uint32_t)timeout_ms;
	if (ioctl(m->fd, MYRI_IOC_WAIT, &w))
		return errno == ETIMEDOUT ? 0 : -1;
	ev = myri_status(h);
	if (w.revents & MYRI_WAIT_RX)
		ev |= PS_HAL_RX;
	if (w.revents & MYRI_WAIT_TX)
		ev |= PS_HAL_TX;
	return ev;
}

static void *myri_shared(ps_hal_t *h, size_t *size)
{
	if (size)
		*size = M(h)->lay.pool_size;
	return M(h)->pool;
}

static int myri_poll_fd(ps_hal_t *h)
{
	return M(h)->fd;
}

const struct ps_hal_ops ps_hal_myri_ops = {
	.name = "myri",
	.open = myri_open,
	.close = myri_close,
	.send = myri_send,
	.receive_header = myri_receive_header,
	.receive_body = myri_receive_body,
	.status = myri_status,
	.wait = myri_wait,
	.shared = myri_shared,
	.poll_fd = myri_poll_fd,
	/* no hardware barrier: ps_hal_barrier() says ENOTSUP */
};
