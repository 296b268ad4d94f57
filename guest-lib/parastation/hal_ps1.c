/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HAL backend for the ParaStation board (ps1.ko, /dev/ps1).
 *
 * The data path is pure user level: the board's registers are mapped and
 * packets are written to / read from the NREG FIFO window word by word.
 * The driver is used only to set up, to sleep (PS1_IOC_WAIT) and for the
 * shared pool.  Everything ps1-specific stays in this file.
 *
 * Waiting: first in loads of the board's WAIT window, which stall until
 * the event (no system call, no interrupt, and no host CPU burnt by a
 * spinning guest), for at most PS_HAL_STALL_MS; then asleep in the driver,
 * so that a long wait leaves the CPU to other processes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/ps1_ioctl.h"
#include "vcluster/hw/ps1_regs.h"
#include "ps_hal.h"
#include "ps_sys.h"


struct ps1 {
	int fd;
	volatile uint32_t *regs;
	void *pool;
	size_t pool_size;
	/* the packet being received: words not yet popped, header peeked */
	unsigned int rx_left;
	unsigned int rx_src;
	size_t rx_len;
	int rx_peeked;		/* header popped, no body read yet */
	uint32_t bar_lines;	/* sync lines this handle joined */
};

#define P(h) ((struct ps1 *)(h)->priv)

static inline uint32_t rd(struct ps1 *p, unsigned int off)
{
	return p->regs[off / 4];
}

static inline void wr(struct ps1 *p, unsigned int off, uint32_t v)
{
	p->regs[off / 4] = v;
}

static void ps1_unmap(struct ps1 *p)
{
	if (p->regs)
		munmap((void *)p->regs, PS1_MMAP_REGS_LEN);
	if (p->pool)
		munmap(p->pool, p->pool_size);
	if (p->fd >= 0)
		ps_sys_close(p->fd);
	free(p);
}

static int ps1_open(ps_hal_t *h, int flags)
{
	struct ps1_info info;
	struct ps1 *p;
	void *m;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	p->fd = ps_hal_open_device(PS1_DEVICE);
	if (p->fd < 0) {
		err = errno;
		goto fail;
	}
	/* flock belongs to the open file: it goes away with a dead process.
	 * Exclusive (rawdata) and shared (ports) users exclude each other. */
	if (flags && flock(p->fd, ((flags & PS_HAL_EXCL) ? LOCK_EX : LOCK_SH) |
				  LOCK_NB)) {
		err = errno == EWOULDBLOCK ? EBUSY : errno;
		goto fail;
	}
	if (ioctl(p->fd, PS1_IOC_INFO, &info)) {
		err = errno;
		goto fail;
	}
	if (info.state != PS1_STATE_UP || info.nodes == 0) {
		err = info.state == PS1_STATE_REMOVED ? ENODEV : ENETDOWN;
		goto fail;
	}
	m = mmap(NULL, PS1_MMAP_REGS_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		 p->fd, PS1_MMAP_REGS_OFFSET);
	if (m == MAP_FAILED) {
		err = errno;
		goto fail;
	}
	p->regs = m;
	if (rd(p, PS1_REG_ID) != PS1_ID_VALUE) {
		err = ENODEV;
		goto fail;
	}
	m = mmap(NULL, info.pool_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 p->fd, PS1_MMAP_POOL_OFFSET);
	if (m == MAP_FAILED) {
		err = errno;
		goto fail;
	}
	p->pool = m;
	p->pool_size = info.pool_size;
	h->priv = p;
	h->node = info.node;
	h->nodes = info.nodes;
	h->mtu = 4 * PS1_PKT_MAX_WORDS;
	return 0;
fail:
	ps1_unmap(p);
	errno = err;
	return -1;
}

static void ps1_close(ps_hal_t *h)
{
	struct ps1 *p = P(h);
	struct timespec ms = { 0, 1000000 };
	int i;

	/* Let our last packets leave, or the driver's last-close check would
	 * reset the board under them. */
	for (i = 0; i < 2000 && !(rd(p, PS1_REG_SREG) & PS1_SREG_TX_EMPTY); i++)
		nanosleep(&ms, NULL);
	/* Leave the sync lines we joined, and acknowledge their completions:
	 * an unacknowledged barrier would make the driver reset the board. */
	if (p->bar_lines) {
		wr(p, PS1_REG_BARRIER_MASK,
		   rd(p, PS1_REG_BARRIER_MASK) & ~p->bar_lines);
		wr(p, PS1_REG_BARRIER, p->bar_lines << PS1_BARRIER_DONE_SHIFT);
	}
	ps1_unmap(p);
}

static int ps1_send(ps_hal_t *h, unsigned int dest, const struct iovec *iov,
		    int iovcnt, size_t len)
{
	struct ps1 *p = P(h);
	unsigned int words = (len + 3) / 4;
	uint32_t w = 0;
	unsigned int fill = 0;
	int i;

	/* TX_FREE, not TX_FULL: small packets fit while big ones would not */
	if (rd(p, PS1_REG_TX_FREE) < 4 * (words + 1)) {
		errno = EAGAIN;
		return -1;
	}
	wr(p, PS1_REG_NREG, PS1_HDR(dest, words));
	/* Pack the gather list into words straight from the caller's memory,
	 * carrying odd bytes across segment boundaries. */
	for (i = 0; i < iovcnt; i++) {
		const uint8_t *s = iov[i].iov_base;
		size_t n = iov[i].iov_len;

		while (n) {
			if (fill == 0 && n >= 4) {
				memcpy(&w, s, 4);
				wr(p, PS1_REG_NREG, w);
				s += 4;
				n -= 4;
				continue;
			}
			if (fill == 0)
				w = 0;
			((uint8_t *)&w)[fill++] = *s++;
			n--;
			if (fill == 4) {
				wr(p, PS1_REG_NREG, w);
				fill = 0;
			}
		}
	}
	if (fill)
		wr(p, PS1_REG_NREG, w);
	return 0;
}

static int ps1_receive_header(ps_hal_t *h, unsigned int *src, size_t *len)
{
	struct ps1 *p = P(h);
	uint32_t hdr;

	if (p->rx_left && p->rx_peeked)
		goto out;	/* a peek is repeatable until the body is read */
	while (p->rx_left) {	/* drop what the caller left unread */
		(void)rd(p, PS1_REG_NREG);
		p->rx_left--;
	}
	if (!(rd(p, PS1_REG_SREG) & PS1_SREG_PKT_READY))
		return 0;
	hdr = rd(p, PS1_REG_NREG);
	if (PS1_HDR_WORDS(hdr) == 0 || PS1_HDR_WORDS(hdr) > PS1_PKT_MAX_WORDS) {
		errno = EPROTO;	/* cannot happen with a sane board */
		return -1;
	}
	p->rx_left = PS1_HDR_WORDS(hdr);
	p->rx_len = 4 * p->rx_left;
	p->rx_src = PS1_HDR_NODE(hdr);
	p->rx_peeked = 1;
out:
	*src = p->rx_src;
	*len = p->rx_len;
	return 1;
}

static int ps1_receive_body(ps_hal_t *h, void *buf, size_t len)
{
	struct ps1 *p = P(h);
	uint8_t *d = buf;
	uint32_t w;

	if (len > 4 * (size_t)p->rx_left) {
		errno = EINVAL;
		return -1;
	}
	p->rx_peeked = 0;
	if (!buf && !len) {	/* drop the rest now: the FIFO is shared */
		while (p->rx_left) {
			(void)rd(p, PS1_REG_NREG);
			p->rx_left--;
		}
		return 0;
	}
	while (len >= 4) {
		w = rd(p, PS1_REG_NREG);
		memcpy(d, &w, 4);
		d += 4;
		len -= 4;
		p->rx_left--;
	}
	if (len) {		/* a tail: the rest of that word is dropped */
		w = rd(p, PS1_REG_NREG);
		memcpy(d, &w, len);
		p->rx_left--;
	}
	return 0;
}

static int ps1_sreg_events(struct ps1 *p, uint32_t sreg)
{
	int ev = 0;

	if ((sreg & PS1_SREG_PKT_READY) || (p->rx_left && p->rx_peeked))
		ev |= PS_HAL_RX;
	if (!(sreg & PS1_SREG_TX_FULL))
		ev |= PS_HAL_TX;
	if (sreg & PS1_SREG_ERR_MASK)
		ev |= PS_HAL_ERR;
	return ev;
}

static int ps1_status(ps_hal_t *h)
{
	struct ps1 *p = P(h);

	return ps1_sreg_events(p, rd(p, PS1_REG_SREG));
}

/*
 * Stall in WAIT-window loads until cond holds, for at most the stall
 * budget and *timeout_ms (-1: no limit), which is reduced by the time
 * spent unless cond holds.  Returns the last SREG.
 */
static uint32_t ps1_stall(ps_hal_t *h, uint32_t cond, int *timeout_ms)
{
	struct ps1 *p = P(h);
	int64_t t0 = ps_hal_now_ns(), t = t0, budget = h->stall_ms;
	uint32_t sreg;

	if (*timeout_ms >= 0 && *timeout_ms < budget)
		budget = *timeout_ms;
	if (budget <= 0)
		return rd(p, PS1_REG_SREG);
	do {	/* a WAIT read that needs no stall returns at once */
		sreg = rd(p, PS1_WAIT_ADDR(cond));
		if (PS1_WAIT_MET(sreg, cond))	/* no clock read then */
			return sreg;
		t = ps_hal_now_ns();
	} while (t - t0 < budget * 1000000);
	if (*timeout_ms > 0) {
		*timeout_ms -= (t - t0) / 1000000;
		if (*timeout_ms <= 0)
			*timeout_ms = 0;
	}
	return sreg;
}

static int ps1_wait(ps_hal_t *h, int events, int timeout_ms)
{
	struct ps1 *p = P(h);
	struct ps1_wait w = { 0 };
	uint32_t cond = 0;
	int ev = ps1_status(h);

	if (ev & events)
		return ev;
	if (events & PS_HAL_RX)
		cond |= PS1_WAIT_PKT;
	if (events & PS_HAL_TX)
		cond |= PS1_WAIT_TX;
	if (cond) {
		ev = ps1_sreg_events(p, ps1_stall(h, cond, &timeout_ms));
		if ((ev & events) || timeout_ms == 0)
			return ev & events;
	}
	/* Not PS1_EV_ERR: an error bit that stays set would wake us forever. */
	if (events & PS_HAL_RX)
		w.events |= PS1_EV_PKT;
	if (events & PS_HAL_TX)
		w.events |= PS1_EV_TX;
	w.timeout_ms = timeout_ms < 0 ? PS1_WAIT_FOREVER : (uint32_t)timeout_ms;
	if (ioctl(p->fd, PS1_IOC_WAIT, &w)) {
		if (errno == ETIMEDOUT)
			return 0;
		return -1;
	}
	ev = ps1_status(h);
	if (w.revents & PS1_EV_PKT)
		ev |= PS_HAL_RX;
	if (w.revents & PS1_EV_TX)
		ev |= PS_HAL_TX;
	return ev;
}

static void *ps1_shared(ps_hal_t *h, size_t *size)
{
	if (size)
		*size = P(h)->pool_size;
	return P(h)->pool;
}

static int ps1_poll_fd(ps_hal_t *h)
{
	return P(h)->fd;
}

/* ---- hardware barrier: BARRIER / BARRIER_MASK, the driver's wait ---- */

static int ps1_barrier_join(ps_hal_t *h, unsigned int line, int join)
{
	struct ps1 *p = P(h);
	uint32_t bit = 1u << line, mask = rd(p, PS1_REG_BARRIER_MASK);

	mask &= PS1_BARRIER_WAIT_MASK;
	if (join) {
		p->bar_lines |= bit;
		mask |= bit;
	} else {
		p->bar_lines &= ~bit;
		mask &= ~bit;
	}
	wr(p, PS1_REG_BARRIER_MASK, mask);
	return 0;
}

/* Fast path: arrive, one WAIT read, acknowledge; no system call. */
static int ps1_barrier(ps_hal_t *h, unsigned int line, int timeout_ms)
{
	struct ps1 *p = P(h);
	uint32_t bit = 1u << line, done = bit << PS1_SREG_BAR_DONE_SHIFT;
	uint32_t sreg;
	struct ps1_wait w = { 0 };
	int64_t deadline = 0, left;
	int checked = 0;

	if (!(p->bar_lines & bit))
		ps1_barrier_join(h, line, 1);
	if (timeout_ms >= 0)
		deadline = ps_hal_now_ns() / 1000000 + timeout_ms;
	wr(p, PS1_REG_BARRIER, bit);	/* arrive */
	/* an error ends the stall early: the sleep below sorts it out */
	sreg = ps1_stall(h, bit << PS1_WAIT_BARRIER_SHIFT, &timeout_ms);
	while (!(sreg & done)) {
		/* another process of the node may have left the line */
		if (!checked++ && !(rd(p, PS1_REG_BARRIER_MASK) & bit)) {
			ps1_barrier_join(h, line, 1);
			wr(p, PS1_REG_BARRIER, bit);
		}
		/* BAR_DONE of another line wakes us too: loop until ours */
		w.events = PS1_EV_BARRIER;
		w.revents = 0;
		if (timeout_ms < 0) {
			w.timeout_ms = PS1_WAIT_FOREVER;
		} else {
			left = deadline - ps_hal_now_ns() / 1000000;
			if (left <= 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			w.timeout_ms = (uint32_t)left + 1;
		}
		if (ioctl(p->fd, PS1_IOC_WAIT, &w) && errno != ETIMEDOUT)
			return -1;
		sreg = rd(p, PS1_REG_SREG);
	}
	wr(p, PS1_REG_BARRIER, bit << PS1_BARRIER_DONE_SHIFT);	/* ack */
	return 0;
}

const struct ps_hal_ops ps_hal_ps1_ops = {
	.name = "ps1",
	.open = ps1_open,
	.close = ps1_close,
	.send = ps1_send,
	.receive_header = ps1_receive_header,
	.receive_body = ps1_receive_body,
	.status = ps1_status,
	.wait = ps1_wait,
	.shared = ps1_shared,
	.poll_fd = ps1_poll_fd,
	.barrier_join = ps1_barrier_join,
	.barrier = ps1_barrier,
};
