/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ports: many processes per node on one NIC (paper 4.2.2).
 *
 * Everything shared lives in the HAL's shared pool, addressed by offsets
 * (each process maps it elsewhere): one lock, the port table, the per-port
 * message queues, the messages in reassembly, per-node flow-control state
 * and a free list of blocks.  A block holds one fragment, so a message is
 * a chain of blocks and reassembly is appending.  Any process that holds
 * the lock takes in every packet the NIC has (demultiplexing), since a
 * packet for another port would otherwise block the FIFO for all.
 *
 * This file is the interface of ps_ports.h: open, close, send, receive.
 * The rest of the layer: ports_pool.c keeps the pool (lock, blocks,
 * queues, taking in packets, reassembly), ports_flow.c the flow control
 * that lets a message leave only when its receiver has room for all of
 * it, and ports_int.h holds what they share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ports_int.h"

#define MIN_BLOCKS	16
#define CLOSE_MS	1000	/* close tries this long to send what it owes */

/* ---- the interface ---- */

static ps_port_t *port_open(int port, bool resume)
{
	ps_port_t *p;
	struct pool *pl;
	struct timespec ts;
	size_t size, need;
	uint32_t z = 0, init;
	unsigned int nodes;
	int i, err = 0;

	if (port != PS_PORT_ANY && (port < 0 || port >= PS_PORTS_MAX)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = getpid();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->next_msgid = p->pid * 2654435761u ^ (uint32_t)ts.tv_nsec;
	p->hal = ps_hal_open(PS_HAL_SHARED);
	if (!p->hal) {
		err = errno;
		free(p);
		errno = err;
		return NULL;
	}
	nodes = ps_hal_nodes(p->hal);
	pl = p->pl = ps_hal_shared(p->hal, &size);
	need = ALIGN8(ALIGN8(sizeof(struct pool)) +
		      (size_t)nodes * sizeof(struct peer)) +
	       MIN_BLOCKS * sizeof(struct blk);
	if (!pl || size < need || size > UINT32_MAX) {
		err = ENOSPC;
		goto fail;
	}
	/* The first process sets the pool up; the driver zeroes it when
	 * the last one leaves, so "0" always means fresh. */
	if (__atomic_compare_exchange_n(&pl->init, &z, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		ports_pool_setup(pl, size, nodes, p->next_msgid * 2246822519u);
		__atomic_store_n(&pl->init, POOL_READY, __ATOMIC_RELEASE);
	}
	for (i = 0; (init = __atomic_load_n(&pl->init, __ATOMIC_ACQUIRE)) !=
		    POOL_READY; i++) {
		if (init > 1) {		/* another version of this library */
			err = EPROTO;
			goto fail;
		}
		if (i > 100000) {
			err = EAGAIN;
			goto fail;
		}
		sched_yield();
	}
	if (pl->nodes != nodes) {
		err = EPROTO;
		goto fail;
	}
	ports_lock(p);
	ports_reap(p);
	if (port == PS_PORT_ANY) {
		/* a port a dead process left may still be adopted by its
		 * child (ps_port_adopt()): closed ones first */
		for (i = 0; i < PS_PORTS_MAX && pl->port[i].owner; i++)
			;
		if (i == PS_PORTS_MAX)
			for (i = 0; i < PS_PORTS_MAX &&
				    ports_alive(pl->port[i].owner); i++)
				;
		if (i == PS_PORTS_MAX)
			err = EAGAIN;
		port = i;
	} else if (resume ? pl->port[port].owner != p->pid :
			    ports_alive(pl->port[port].owner)) {
		err = EADDRINUSE;
	}
	if (!err) {
		if (!resume && pl->port[port].owner)	/* a dead process's */
			ports_queue_free(p, port);
		if (!resume) {
			pl->port[port].rleft = 0;
			pl->port[port].rx_ms = 0;
		}
		/* none of the new owner's threads sleeps; after an exec
		 * none of the old image's does either */
		pl->port[port].waiting = 0;
		pl->port[port].watching = 0;
		pl->port[port].watch_until = 0;
		pl->port[port].owner = p->pid;
		p->id = port;
		p->ltail = &p->lhead;
	}
	ports_ctl_flush(p);
	ports_unlock(p);
	if (!err) {
		ports_bell_open(p);
		return p;
	}
fail:
	ps_hal_close(p->hal);
	free(p);
	errno = err;
	return NULL;
}

ps_port_t *ps_port_open(int port)
{
	return port_open(port, false);
}

ps_port_t *ps_port_resume(int port)
{
	if (port < 0) {
		errno = EINVAL;
		return NULL;
	}
	return port_open(port, true);
}

void ps_port_close(ps_port_t *p)
{
	struct pool *pl;
	struct lmsg *l;
	unsigned int n;
	int64_t t0;

	if (!p)
		return;
	pl = p->pl;
	ports_lock(p);
	for (; (l = p->lhead); pl->dropped++) {
		p->lhead = l->next;
		free(l);
	}
	/* their credit goes back to the senders */
	ports_queue_free(p, p->id);
	for (n = 0; n < pl->nodes; n++)
		if (PEER(p, n)->gpid == p->pid)
			ports_release_slot(p, n);
	pl->port[p->id].rleft = 0;
	pl->port[p->id].owner = 0;
	ports_bell_close(p);
	/* Send what we owe: answers to senders that wait for this node. */
	ports_ctl_flush(p);
	for (t0 = now_ms(); pl->npend && now_ms() - t0 < CLOSE_MS;) {
		ports_unlock(p);
		ps_hal_wait(p->hal, PS_HAL_TX | PS_HAL_RX, WAIT_MS);
		ports_lock(p);
		if (ports_drain(p) < 0)
			break;
		ports_ctl_flush(p);
	}
	ports_unlock(p);
	ps_hal_close(p->hal);
	free(p);
}

int ps_port_adopt(ps_port_t *p)
{
	struct pool *pl = p->pl;
	uint32_t was = p->pid, me = getpid(), owner;
	int err = 0;

	if (was == me)
		return 0;
	p->pid = me;		/* the lock word names its holder */
	ports_lock(p);
	owner = pl->port[p->id].owner;
	/* the parent went on after the fork: our copy of its state is old */
	if (owner != was || pl->port[p->id].uses != p->uses)
		err = EADDRINUSE;
	else if (ports_alive(was))
		err = EBUSY;
	if (!err) {
		pl->port[p->id].owner = me;
		pl->port[p->id].waiting = 0;	/* the parent's sleepers */
		pl->port[p->id].watching = 0;
		pl->port[p->id].watch_until = 0;
	}
	ports_unlock(p);
	if (err) {
		p->pid = was;
		errno = err;
		return -1;
	}
	return 0;
}

void ps_port_forget(ps_port_t *p)
{
	struct lmsg *l;

	if (!p)
		return;
	while ((l = p->lhead)) {
		p->lhead = l->next;
		free(l);
	}
	ports_bell_close(p);
	ps_hal_close(p->hal);
	free(p);
}

int ps_port_id(const ps_port_t *p)
{
	return p->id;
}

const char *ps_port_nic(const ps_port_t *p)
{
	return ps_hal_name(p->hal);
}

unsigned int ps_port_node(const ps_port_t *p)
{
	return ps_hal_node(p->hal);
}

unsigned int ps_port_nodes(const ps_port_t *p)
{
	return ps_hal_nodes(p->hal);
}

int ps_port_poll_fd(const ps_port_t *p)
{
	return ps_hal_poll_fd(p->hal);
}

/* A peer on this node: our waits must not stall the CPU it needs. */
static void local_traffic(ps_port_t *p)
{
	if (!p->local_peers)
		ps_port_stall(p, 0);
}

void ps_port_touch(ps_port_t *p)
{
	ports_lock(p);
	p->uses = ++p->pl->port[p->id].uses;
	ports_unlock(p);
}

int ps_port_stall(ps_port_t *p, int ms)
{
	p->local_peers = ms == 0;
	return ps_hal_stall(p->hal, ms);
}

int ps_port_bell_fd(const ps_port_t *p)
{
	return p->bell;
}

int ps_port_wait(ps_port_t *p, int timeout_ms)
{
	int ev = 0, watch, stall, rung = 0;
	int64_t t0;

	if (ports_sleep(p, p->bell < 0, &watch)) {
		ev = PS_HAL_RX;
	} else if (p->bell < 0) {	/* nobody can ring us: the NIC only */
		ev = ps_hal_wait(p->hal, PS_HAL_RX, timeout_ms);
	} else if (!watch) {		/* another watches it (ports_kick.c) */
		ev = ports_bell_wait(p, ports_nap(timeout_ms, PS_PORT_BELL_MS),
				     0, &rung);
	} else {
		timeout_ms = ports_nap(timeout_ms, PS_PORT_WATCH_MS);
		/* stall on the NIC a while, for the latency, unless that
		 * holds off a peer on this node; then sleep on both.  Not
		 * long: a stall sees no doorbell and holds the CPU. */
		stall = p->local_peers ? 0 : ps_hal_stall_ms(p->hal);
		if (stall > PS_PORT_POLL_MS)
			stall = PS_PORT_POLL_MS;
		if (stall > 0 && timeout_ms != 0) {
			t0 = timeout_ms > 0 ? now_ms() : 0;
			ev = ps_hal_wait(p->hal, PS_HAL_RX, timeout_ms >= 0 &&
					 timeout_ms < stall ? timeout_ms : stall);
			/* the time left only for the sleep that follows */
			if (timeout_ms > 0 && ev >= 0 && !(ev & PS_HAL_RX)) {
				timeout_ms -= (int)(now_ms() - t0);
				if (timeout_ms < 0)
					timeout_ms = 0;
			}
		}
		if (ev >= 0 && !(ev & PS_HAL_RX))
			ev = ports_bell_wait(p, timeout_ms, 1, &rung);
	}
	ps_port_awake(p, watch, rung);
	return ev < 0 ? -1 : !!(ev & PS_HAL_RX);
}

unsigned long ps_port_dropped(const ps_port_t *p)
{
	return __atomic_load_n(&p->pl->dropped, __ATOMIC_RELAXED);
}

int ps_port_send(ps_port_t *p, unsigned int dest, int dport, const void *buf,
		 size_t len)
{
	return ps_port_send_timed(p, dest, dport, buf, len, -1);
}

/* A message went into the pool for port dport of this node: if its owner
 * sleeps, ring its doorbell (ports_kick.c).  Without the lock. */
static void kick(ps_port_t *p, int dport)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* the queue, then the flag */
	if (dport != p->id &&
	    __atomic_load_n(&p->pl->port[dport].waiting, __ATOMIC_SEQ_CST))
		ports_bell_ring(p, dport);
}

int ps_port_send_timed(ps_port_t *p, unsigned int dest, int dport,
		       const void *buf, size_t len, int timeout_ms)
{
	struct pool *pl;
	struct ps_port_hdr h;
	struct iovec iov[2];
	size_t off = 0, n, frag;
	uint32_t k;
	int ret, err, stalled, granted, local, ring;

	if (!p || dport < 0 || dport >= PS_PORTS_MAX || (len && !buf)) {
		errno = EINVAL;
		return -1;
	}
	if (dest >= ps_hal_nodes(p->hal)) {
		errno = EHOSTUNREACH;
		return -1;
	}
	if (len > PS_PORT_MSG_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	pl = p->pl;
	k = BLOCKS(len);
	/* whole blocks per packet, so that both ends count the same */
	frag = (ps_hal_mtu(p->hal) - sizeof(h)) / BLOCK_DATA * BLOCK_DATA;
	local = dest == ps_hal_node(p->hal);
	if (local) {		/* into the pool, in one piece */
		frag = len ? len : 1;
		local_traffic(p);
	}
	h = (struct ps_port_hdr){ .dport = dport, .sport = p->id,
				  .msgid = p->next_msgid++, .total = len };
	granted = ports_acquire(p, dest, k, h.msgid, timeout_ms);
	if (granted < 0)
		return -1;
	if (granted)
		h.sport |= SPORT_GRANT;
	do {
		n = len - off < frag ? len - off : frag;
		h.offset = off;
		iov[0] = (struct iovec){ .iov_base = &h, .iov_len = sizeof(h) };
		iov[1] = (struct iovec){ .iov_base = (char *)buf + off,
					 .iov_len = n };
		for (;;) {
			ring = 0;
			/* one packet per lock: others get their turn */
			ports_lock(p);
			/* control packets first: an ABORT must not come
			 * after a new message from its port */
			err = ports_ctl_flush(p);
			if (local)
				ret = err ? -1 : ports_deliver(p, &h, iov[1].iov_base, n);
			else
				ret = err ? -1 : ps_hal_sendv(p->hal, dest, iov, 2);
			if (!err)
				err = ret ? errno : 0;
			ring = local && !ret && off + n == len;
			if (!ret)
				p->uses = ++pl->port[p->id].uses;
			stalled = 0;
			if (!ret) {
				pl->port[p->id].rleft -= BLOCKS(n);
				if (!granted && PEER(p, dest)->creq &&
				    PEER(p, dest)->csent)
					PEER(p, dest)->since += BLOCKS(n);
				if (granted && !pl->port[p->id].rleft) {
					PEER(p, dest)->gpid = 0;
					PEER(p, dest)->gstate = GS_NONE;
				}
			} else if (err == EAGAIN) {	/* make room, see rawdata */
				stalled = ports_drain(p);
				if (stalled > 0 && ports_stash(p))
					stalled = ports_drain(p);
				if (stalled < 0)
					err = errno;
			}
			if (ret && err != EAGAIN)
				ports_abandon(p, dest, granted, off > 0);
			ports_unlock(p);
			if (ring)	/* no system call under the lock */
				kick(p, dport);
			if (!ret)
				break;
			if (err != EAGAIN) {
				errno = err;
				return -1;
			}
			/* wake on a packet too: two nodes sending to each
			 * other with full NICs free room only by draining */
			if (stalled)
				sleep_ms(1);
			else if (ps_hal_wait(p->hal, PS_HAL_TX | PS_HAL_RX,
					     WAIT_MS) < 0) {
				err = errno;
				ports_lock(p);
				ports_abandon(p, dest, granted, off > 0);
				ports_unlock(p);
				errno = err;
				return -1;
			}
		}
		off += n;
	} while (off < len);
	return 0;
}

int ps_port_arrived(ps_port_t *p)
{
	return p->lhead ||
	       __atomic_load_n(&p->pl->port[p->id].head, __ATOMIC_ACQUIRE) ||
	       (ps_hal_status(p->hal) & PS_HAL_RX);
}

int ps_port_quiet(ps_port_t *p)
{
	if (ps_port_arrived(p) ||
	    __atomic_load_n(&p->pl->npend, __ATOMIC_RELAXED))
		return 0;
	/* whether a look for dead senders is due (a take does it): a read
	 * of the clock costs as much as the rest, and a caller that spins
	 * asks thousands of times a second, so only every QUIET_CLOCK_LOOKS */
	if (__atomic_add_fetch(&p->quiet_looks, 1, __ATOMIC_RELAXED) %
	    QUIET_CLOCK_LOOKS)
		return 1;
	return now_ms() - p->reap_t < REAP_MS;
}

ssize_t ps_port_recv(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		     size_t len, int timeout_ms)
{
	int64_t deadline = 0, left, t;
	bool timed = false;
	unsigned int src;
	struct lmsg *l;
	ssize_t n;
	int stalled = 0, err;

	if (!p || (len && !buf)) {
		errno = EINVAL;
		return -1;
	}
	if (p->lhead) {		/* stashed while sending: they came first */
		l = p->lhead;
		if (l->len > len) {
			errno = EMSGSIZE;
			return -1;
		}
		if (l->len)
			memcpy(buf, l->data, l->len);
		if (from)
			*from = l->from;
		if (fport)
			*fport = l->fport;
		n = l->len;
		p->lhead = l->next;
		if (!p->lhead)
			p->ltail = &p->lhead;
		free(l);
		return n;
	}
	for (;;) {
		ports_lock(p);
		n = ports_take(p, &src, fport, buf, len);
		if (n == -2) {
			stalled = ports_drain(p);
			n = ports_take(p, &src, fport, buf, len);
		}
		err = errno;
		if (n >= 0 && from)
			*from = src;
		if (n >= 0 && src == ps_hal_node(p->hal))
			local_traffic(p);
		if (n == -2 && stalled >= 0)	/* we will wait */
			ports_reap_sometimes(p);
		ports_ctl_flush(p);	/* answers the freeing may owe */
		ports_unlock(p);
		errno = err;
		if (n >= 0 || n == -1)
			return n;
		if (stalled < 0)
			return -1;
		/* the clock only once we may wait: a message needs none */
		t = now_ms();
		if (!timed) {
			deadline = t + timeout_ms;
			timed = true;
		}
		left = deadline - t;
		if (timeout_ms >= 0 && left <= 0) {
			errno = timeout_ms == 0 ? EAGAIN : ETIMEDOUT;
			return -1;
		}
		/* a doorbell rings for what others take in for us */
		if (timeout_ms < 0 || left > ps_port_sleep_ms(p, 1))
			left = ps_port_sleep_ms(p, 1);
		if (stalled)
			sleep_ms(1);
		else if (ps_port_wait(p, left) < 0)
			return -1;
	}
}
