/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ports: the pool that the processes of a node share (see ports.c).
 *
 * The lock, the blocks and their free list, the per-port queues and the
 * messages in reassembly; ports_drain(), which takes packets from the NIC
 * and demultiplexes them (control packets to ports_flow.c, fragments into
 * messages of their port); and taking messages out of the queues.  This
 * is the bookkeeping of the pool's blocks, apart from the protocol that
 * decides who may fill them (ports_flow.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ports_int.h"

#define MSG_BLOCKS	BLOCKS(PS_PORT_MSG_MAX)	/* 134 */
#define RESERVE		2	/* blocks promised to nobody */

/* ---- the lock: CAS on a pool word, hand-off instead of spinning ---- */

void ports_lock(ps_port_t *p)
{
	uint32_t z;
	unsigned int n = 0;
	struct timespec ts = { 0, 50000 };

	for (;;) {
		z = 0;
		if (__atomic_compare_exchange_n(&p->pl->lock, &z, p->pid, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		/* A holder that died must not block the node for ever. */
		if ((++n & 63) == 0 && kill((pid_t)z, 0) && errno == ESRCH &&
		    __atomic_compare_exchange_n(&p->pl->lock, &z, p->pid, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		/* Let the holder run; it never sleeps inside.  Should it be
		 * on another CPU for long, stop burning ours. */
		if (n < 1000)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
}

void ports_unlock(ps_port_t *p)
{
	uint64_t ring = p->ring;

	p->ring = 0;
	__atomic_store_n(&p->pl->lock, 0, __ATOMIC_RELEASE);
	/* messages we took in for ports whose owners sleep: wake them now,
	 * not at their next look */
	for (int i = 0; ring; i++, ring >>= 1)
		if (ring & 1)
			ports_bell_ring(p, i);
}

int ports_alive(uint32_t pid)
{
	int err = errno, r;

	r = pid && !(kill((pid_t)pid, 0) && errno == ESRCH);
	errno = err;
	return r;
}

/* ---- blocks and queues (lock held) ---- */

static uint32_t blk_alloc(ps_port_t *p)
{
	uint32_t b = p->pl->free;

	if (b) {
		p->pl->free = B(p, b)->next;
		p->pl->nfree--;
		memset(B(p, b), 0, offsetof(struct blk, data));
	}
	return b;
}

/* Free message m (its first block) and give its room back. */
void ports_msg_free(ps_port_t *p, uint32_t m)
{
	uint32_t b, n, cnt = 0;
	unsigned int src = B(p, m)->src;
	int granted = !!(B(p, m)->sport & SPORT_GRANT);

	for (b = m; b; b = n) {
		n = B(p, b)->next;
		B(p, b)->next = p->pl->free;
		p->pl->free = b;
		p->pl->nfree++;
		cnt++;
	}
	ports_uncharge(p, src, granted, cnt);
}

void ports_queue_free(ps_port_t *p, int port)
{
	uint32_t m, n;

	m = p->pl->port[port].head;
	p->pl->port[port].head = p->pl->port[port].tail = 0;
	for (; m; m = n) {
		n = B(p, m)->qnext;
		ports_msg_free(p, m);
		p->pl->dropped++;
	}
}

/* Out of blocks (only if a node took more than its due): messages for
 * ports nobody has open go first. */
static void reclaim(ps_port_t *p)
{
	int i;

	for (i = 0; i < PS_PORTS_MAX; i++)
		if (p->pl->port[i].head && !ports_alive(p->pl->port[i].owner))
			ports_queue_free(p, i);
}

/* A request cannot be met: free the queues of processes that died. */
void ports_reclaim_dead(ps_port_t *p)
{
	int i;

	for (i = 0; i < PS_PORTS_MAX; i++)
		if (p->pl->port[i].head && p->pl->port[i].owner &&
		    !ports_alive(p->pl->port[i].owner))
			ports_queue_free(p, i);
}

/* The message in reassembly from (src, sport), and the one before it. */
uint32_t ports_partial_find(ps_port_t *p, unsigned int src,
			    unsigned int sport, uint32_t *prev)
{
	uint32_t m, pv = 0;

	for (m = p->pl->plist; m; pv = m, m = B(p, m)->qnext)
		if (B(p, m)->src == src &&
		    (B(p, m)->sport & ~SPORT_GRANT) == sport)
			break;
	*prev = pv;
	return m;
}

void ports_partial_unlink(ps_port_t *p, uint32_t m, uint32_t prev)
{
	if (prev)
		B(p, prev)->qnext = B(p, m)->qnext;
	else
		p->pl->plist = B(p, m)->qnext;
	B(p, m)->qnext = 0;
}

/* Drop half-received messages of node s (granted ones only, or all):
 * their senders are gone. */
void ports_drop_partials(ps_port_t *p, unsigned int s, int granted_only)
{
	uint32_t m, prev = 0, n;

	for (m = p->pl->plist; m; m = n) {
		n = B(p, m)->qnext;
		if (B(p, m)->src == s &&
		    (!granted_only || (B(p, m)->sport & SPORT_GRANT))) {
			ports_partial_unlink(p, m, prev);
			ports_msg_free(p, m);
			p->pl->dropped++;
		} else {
			prev = m;
		}
	}
}

/* ---- taking in packets ---- */

void ports_pool_setup(struct pool *pl, size_t size, unsigned int nodes,
		      uint32_t seed)
{
	uint32_t off, sz = sizeof(struct blk), avail;
	size_t boff;

	pl->nodes = nodes;
	pl->peers_off = ALIGN8(sizeof(struct pool));
	boff = ALIGN8(pl->peers_off + (size_t)nodes * sizeof(struct peer));
	pl->free = 0;
	pl->nblocks = 0;
	/* free list in address order, ending with 0 */
	for (off = boff + ((size - boff) / sz - 1) * sz;
	     off >= boff && size >= boff + sz; off -= sz) {
		((struct blk *)((char *)pl + off))->next = pl->free;
		pl->free = off;
		pl->nblocks++;
	}
	pl->nfree = pl->nblocks;
	/* G holds one message of 64 KiB at least, E is the rest per node */
	avail = pl->nblocks - RESERVE;
	pl->gmax = avail < MSG_BLOCKS ? avail : MSG_BLOCKS;
	if (pl->gmax < avail / 4)
		pl->gmax = avail / 4;
	pl->elimit = (avail - pl->gmax) / nodes;
	pl->tag = seed;
}

/*
 * One data fragment from node src (header h, n data bytes) into the pool:
 * from the NIC's packet body (local NULL), or from memory (a message to
 * this node, ports_deliver()).  1 when dropped (malformed), -1 on error.
 */
static int take_in(ps_port_t *p, unsigned int src, const struct ps_port_hdr *h,
		   size_t n, const uint8_t *local)
{
	struct pool *pl = p->pl;
	unsigned int sport = h->sport & ~SPORT_GRANT;
	int granted = !!(h->sport & SPORT_GRANT);
	size_t done, chunk;
	uint32_t b, m, prev, nb = BLOCKS(n);

	if (h->dport >= PS_PORTS_MAX || sport >= PS_PORTS_MAX ||
	    h->total > PS_PORT_MSG_MAX || h->offset > h->total)
		return 1;
	/* flow control keeps room for every fragment sent */
	if ((n == 0 && h->total) || nb > pl->nfree)
		return 1;
	m = ports_partial_find(p, src, sport, &prev);
	if (h->offset == 0) {
		if (m) {	/* can never complete */
			ports_partial_unlink(p, m, prev);
			ports_msg_free(p, m);
			pl->dropped++;
		}
		m = b = blk_alloc(p);
		B(p, m)->total = h->total;
		B(p, m)->msgid = h->msgid;
		B(p, m)->src = src;
		B(p, m)->sport = h->sport;
		B(p, m)->last = m;
		prev = 0;
	} else {
		if (!m || B(p, m)->msgid != h->msgid ||
		    B(p, m)->got != h->offset || B(p, m)->sport != h->sport)
			return 1;
		b = 0;
	}
	ports_charge(p, src, granted, nb);
	done = 0;
	do {	/* block by block; an empty message has one too */
		chunk = n - done < BLOCK_DATA ? n - done : BLOCK_DATA;
		if (!b) {
			b = blk_alloc(p);
			B(p, B(p, m)->last)->next = b;
			B(p, m)->last = b;
		}
		if (local)
			memcpy(B(p, b)->data, local + done, chunk);
		else if (ps_hal_receive_body(p->hal, B(p, b)->data, chunk))
			return -1;
		B(p, b)->len = chunk;
		B(p, m)->got += chunk;
		done += chunk;
		b = 0;
	} while (done < n);
	if (B(p, m)->got == B(p, m)->total) {
		if (h->offset)
			ports_partial_unlink(p, m, prev);
		if (pl->port[h->dport].tail)
			B(p, pl->port[h->dport].tail)->qnext = m;
		else
			pl->port[h->dport].head = m;
		pl->port[h->dport].tail = m;
		if (!local)	/* who watches the NIC (ports_kick.c) */
			__atomic_store_n(&pl->port[h->dport].rx_ms, now_ms(),
					 __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* queue, then flag */
		if (h->dport != p->id && !local &&
		    __atomic_load_n(&pl->port[h->dport].waiting, __ATOMIC_SEQ_CST))
			p->ring |= 1ull << h->dport;
	} else if (h->offset == 0) {
		B(p, m)->qnext = pl->plist;
		pl->plist = m;
	}
	return 0;
}

int ports_deliver(ps_port_t *p, const struct ps_port_hdr *h, const void *data,
		  size_t n)
{
	int r = take_in(p, ps_hal_node(p->hal), h, n, data);

	if (r > 0) {
		p->pl->dropped++;
		errno = EINVAL;
	}
	return r ? -1 : 0;
}

/*
 * Take in packets while there is room (lock held).  Returns 1 when it
 * stopped with packets waiting for room in the pool, 0 when the NIC has
 * no more, -1 on error.
 */
int ports_drain(ps_port_t *p)
{
	struct pool *pl = p->pl;
	struct ps_port_hdr h;
	struct ctl c;
	unsigned int src;
	size_t plen, n;
	int i;

	for (;;) {
		if (!pl->nfree)
			reclaim(p);
		/* room first: a peek takes the header out of the NIC.  Flow
		 * control keeps RESERVE blocks free: control packets, which
		 * need none, can always come in. */
		if (!pl->nfree)
			return !!(ps_hal_status(p->hal) & PS_HAL_RX);
		i = ps_hal_receive_header(p->hal, &src, &plen);
		if (i <= 0) {
			if (!i)
				ports_ctl_flush(p);
			return i;
		}
		if (plen < sizeof(h) || src >= pl->nodes ||
		    ps_hal_receive_body(p->hal, &h, sizeof(h)))
			goto drop;
		if (h.dport == CTL_PORT) {
			if (plen < sizeof(c) ||
			    ps_hal_receive_body(p->hal, &c.c, sizeof(c.c)))
				goto drop;
			memcpy(&c, &h, sizeof(h));
			ps_hal_receive_body(p->hal, NULL, 0);
			ports_on_ctl(p, src, &c);
			continue;
		}
		/* the rest of the message or of the packet, whose length
		 * may be rounded up to the NIC's granularity */
		n = h.total - h.offset;
		if (h.offset > h.total || n > plen - sizeof(h))
			n = plen - sizeof(h);
		i = take_in(p, src, &h, n, NULL);
		if (i < 0)
			return -1;
		if (i > 0)
			goto drop;
		ps_hal_receive_body(p->hal, NULL, 0);
		continue;
drop:
		pl->dropped++;
		ps_hal_receive_body(p->hal, NULL, 0);
	}
}

/* ---- taking messages out (lock held) ---- */

/* Take this port's first message if it fits (lock held). */
ssize_t ports_take(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		   size_t len)
{
	uint32_t m = p->pl->port[p->id].head, b;
	struct blk *fb;
	size_t off = 0;

	if (!m)
		return -2;
	fb = B(p, m);
	if (fb->total > len) {
		errno = EMSGSIZE;
		return -1;
	}
	p->uses = ++p->pl->port[p->id].uses;
	p->pl->port[p->id].head = fb->qnext;
	if (!fb->qnext)
		p->pl->port[p->id].tail = 0;
	for (b = m; b; b = B(p, b)->next) {
		memcpy((char *)buf + off, B(p, b)->data, B(p, b)->len);
		off += B(p, b)->len;
	}
	if (from)
		*from = fb->src;
	if (fport)
		*fport = fb->sport & ~SPORT_GRANT;
	ports_msg_free(p, m);		/* may owe the sender an answer now */
	return off;
}

/*
 * We wait (lock held): move the messages queued for our port into our own
 * memory, in order.  Nobody else takes them, and they may hold what we
 * wait for: pool room (when the pool is full the NIC's FIFO stops, and
 * with it the network to this node), or the credit of a process that
 * waits for us.  Returns the number of messages moved.
 */
int ports_stash(ps_port_t *p)
{
	struct lmsg *l;
	uint32_t m;
	int n = 0;

	while ((m = p->pl->port[p->id].head)) {
		l = malloc(sizeof(*l) + B(p, m)->total);
		if (!l)
			break;
		l->len = ports_take(p, &l->from, &l->fport, l->data,
				    B(p, m)->total);
		l->next = NULL;
		*p->ltail = l;
		p->ltail = &l->next;
		n++;
	}
	return n;
}
