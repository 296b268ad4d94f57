/*
 * Ports: many processes per node on one NIC (paper 4.2.2).
 *
 * Everything shared lives in the HAL's shared pool, addressed by offsets
 * (each process maps it elsewhere): one lock, the port table, the per-port
 * message queues, the reassembly table and a free list of blocks.  A block
 * holds one fragment, so a message is a chain of blocks and reassembly is
 * appending.  Any process that holds the lock takes in every packet the
 * NIC has (demultiplexing), since a packet for another port would
 * otherwise block the FIFO for all.  A sender that finds the pool full
 * moves its own port's messages into its private memory (stash), since
 * nobody else will take them while it sends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ps_hal.h"
#include "ps_ports.h"

_Static_assert(sizeof(struct ps_port_hdr) + PS_PORT_FRAG_DATA == PS_HAL_MTU,
	       "a fragment fills one packet");

#define NPARTIAL	64	/* messages in reassembly at once, per node */
#define MIN_BLOCKS	16
#define WAIT_MS		2	/* longest sleep before looking again: another
				 * process may have queued our message */

struct blk {
	uint32_t next;		/* next block of this message, 0 = none */
	uint32_t qnext;		/* first block: next message in the queue */
	uint32_t last;		/* first block: last block of the message */
	uint32_t len;		/* data bytes in this block */
	uint32_t total, got, msgid;	/* first block */
	uint16_t src, sport;		/* first block */
	uint8_t data[PS_PORT_FRAG_DATA];
};

struct pool {
	uint32_t init;		/* 0 fresh (zeroed), 1 being set up, 2 ready */
	uint32_t lock;		/* 0 free, else the holder's pid */
	uint32_t nblocks, free, nfree;
	uint32_t dropped;
	struct {
		uint32_t owner;	/* pid, 0 = closed */
		uint32_t head, tail;
	} port[PS_PORTS_MAX];
	struct {
		uint32_t key;	/* 1 + (node << 16 | port), 0 = free */
		uint32_t msg;
	} partial[NPARTIAL];
};

#define BLOCKS_OFF	((sizeof(struct pool) + 7) & ~(size_t)7)

/* A message for this port, moved out of the pool by stash() */
struct lmsg {
	struct lmsg *next;
	unsigned int from;
	int fport;
	size_t len;
	uint8_t data[];
};

struct ps_port {
	ps_hal_t *hal;
	struct pool *pl;
	int id;
	uint32_t pid;
	uint32_t next_msgid;
	struct lmsg *lhead, **ltail;	/* stashed, before those in the pool */
};

static inline struct blk *B(ps_port_t *p, uint32_t off)
{
	return (struct blk *)((char *)p->pl + off);
}

/* ---- the lock: CAS on a pool word, hand-off instead of spinning ---- */

static void lock(ps_port_t *p)
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

static void unlock(ps_port_t *p)
{
	__atomic_store_n(&p->pl->lock, 0, __ATOMIC_RELEASE);
}

static int alive(uint32_t pid)
{
	return pid && !(kill((pid_t)pid, 0) && errno == ESRCH);
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

static void msg_free(ps_port_t *p, uint32_t b)
{
	uint32_t n;

	for (; b; b = n) {
		n = B(p, b)->next;
		B(p, b)->next = p->pl->free;
		p->pl->free = b;
		p->pl->nfree++;
	}
}

static void queue_free(ps_port_t *p, int port)
{
	uint32_t m, n;

	for (m = p->pl->port[port].head; m; m = n) {
		n = B(p, m)->qnext;
		msg_free(p, m);
		p->pl->dropped++;
	}
	p->pl->port[port].head = p->pl->port[port].tail = 0;
}

/* Out of blocks: messages for ports nobody has open go first. */
static void reclaim(ps_port_t *p)
{
	int i;

	for (i = 0; i < PS_PORTS_MAX; i++)
		if (!alive(p->pl->port[i].owner))
			queue_free(p, i);
}

static void pool_setup(struct pool *pl, size_t size)
{
	uint32_t off, sz = sizeof(struct blk);

	pl->free = 0;
	pl->nblocks = 0;
	/* free list in address order, ending with 0 */
	for (off = BLOCKS_OFF + ((size - BLOCKS_OFF) / sz - 1) * sz;
	     off >= BLOCKS_OFF && size >= BLOCKS_OFF + sz; off -= sz) {
		((struct blk *)((char *)pl + off))->next = pl->free;
		pl->free = off;
		pl->nblocks++;
	}
	pl->nfree = pl->nblocks;
}

/*
 * Take in packets while there is room (lock held).  Returns 1 when it
 * stopped with packets waiting for room in the pool, 0 when the NIC has
 * no more, -1 on error.
 */
static int drain(ps_port_t *p)
{
	struct pool *pl = p->pl;
	struct ps_port_hdr h;
	unsigned int src;
	size_t plen, n;
	uint32_t key, b, m;
	int i, slot, freeslot;

	for (;;) {
		if (!pl->nfree)
			reclaim(p);
		freeslot = -1;
		for (i = 0; i < NPARTIAL && freeslot < 0; i++)
			if (!pl->partial[i].key)
				freeslot = i;
		/* room first: a peek takes the header out of the NIC */
		if (!pl->nfree || freeslot < 0)
			return !!(ps_hal_status(p->hal) & PS_HAL_RX);
		i = ps_hal_receive_header(p->hal, &src, &plen);
		if (i <= 0)
			return i;
		if (plen < sizeof(h) || src >= ps_hal_nodes(p->hal) ||
		    ps_hal_receive_body(p->hal, &h, sizeof(h)) ||
		    h.dport >= PS_PORTS_MAX || h.sport >= PS_PORTS_MAX ||
		    h.total > PS_PORT_MSG_MAX || h.offset > h.total)
			goto drop;
		n = h.total - h.offset;
		if (n > PS_PORT_FRAG_DATA)
			n = PS_PORT_FRAG_DATA;
		if (n > plen - sizeof(h))
			goto drop;
		key = 1 + (src << 16 | h.sport);
		for (slot = 0; slot < NPARTIAL; slot++)
			if (pl->partial[slot].key == key)
				break;
		if (h.offset == 0) {
			if (slot < NPARTIAL) {	/* can never complete */
				msg_free(p, pl->partial[slot].msg);
				pl->partial[slot].key = 0;
				pl->dropped++;
			}
			m = b = blk_alloc(p);
			B(p, m)->total = h.total;
			B(p, m)->msgid = h.msgid;
			B(p, m)->src = src;
			B(p, m)->sport = h.sport;
			B(p, m)->last = m;
			slot = -1;
		} else {
			if (slot == NPARTIAL)
				goto drop;
			m = pl->partial[slot].msg;
			if (B(p, m)->msgid != h.msgid || B(p, m)->got != h.offset)
				goto drop;
			b = blk_alloc(p);
			B(p, B(p, m)->last)->next = b;
			B(p, m)->last = b;
		}
		if (ps_hal_receive_body(p->hal, B(p, b)->data, n))
			return -1;
		ps_hal_receive_body(p->hal, NULL, 0);
		B(p, b)->len = n;
		B(p, m)->got += n;
		if (B(p, m)->got == B(p, m)->total) {
			if (slot >= 0)
				pl->partial[slot].key = 0;
			if (pl->port[h.dport].tail)
				B(p, pl->port[h.dport].tail)->qnext = m;
			else
				pl->port[h.dport].head = m;
			pl->port[h.dport].tail = m;
		} else if (slot < 0) {
			pl->partial[freeslot].key = key;
			pl->partial[freeslot].msg = m;
		}
		continue;
drop:
		pl->dropped++;
		ps_hal_receive_body(p->hal, NULL, 0);
	}
}

/* ---- the interface ---- */

ps_port_t *ps_port_open(int port)
{
	ps_port_t *p;
	struct pool *pl;
	size_t size;
	uint32_t z = 0;
	int i, err = 0;

	if (port != PS_PORT_ANY && (port < 0 || port >= PS_PORTS_MAX)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = getpid();
	p->hal = ps_hal_open(PS_HAL_SHARED);
	if (!p->hal) {
		err = errno;
		free(p);
		errno = err;
		return NULL;
	}
	pl = p->pl = ps_hal_shared(p->hal, &size);
	if (!pl || size < BLOCKS_OFF + MIN_BLOCKS * sizeof(struct blk)) {
		err = ENOSPC;
		goto fail;
	}
	/* The first process sets the pool up; the driver zeroes it when
	 * the last one leaves, so "0" always means fresh. */
	if (__atomic_compare_exchange_n(&pl->init, &z, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		pool_setup(pl, size);
		__atomic_store_n(&pl->init, 2, __ATOMIC_RELEASE);
	}
	for (i = 0; __atomic_load_n(&pl->init, __ATOMIC_ACQUIRE) != 2; i++) {
		if (i > 100000) {
			err = EAGAIN;
			goto fail;
		}
		sched_yield();
	}
	lock(p);
	if (port == PS_PORT_ANY) {
		for (i = 0; i < PS_PORTS_MAX && alive(pl->port[i].owner); i++)
			;
		if (i == PS_PORTS_MAX)
			err = EAGAIN;
		port = i;
	} else if (alive(pl->port[port].owner)) {
		err = EADDRINUSE;
	}
	if (!err) {
		if (pl->port[port].owner)	/* left by a dead process */
			queue_free(p, port);
		pl->port[port].owner = p->pid;
		p->id = port;
		p->ltail = &p->lhead;
	}
	unlock(p);
	if (!err)
		return p;
fail:
	ps_hal_close(p->hal);
	free(p);
	errno = err;
	return NULL;
}

void ps_port_close(ps_port_t *p)
{
	struct lmsg *l;

	if (!p)
		return;
	lock(p);
	for (; (l = p->lhead); p->pl->dropped++) {
		p->lhead = l->next;
		free(l);
	}
	queue_free(p, p->id);
	p->pl->port[p->id].owner = 0;
	unlock(p);
	ps_hal_close(p->hal);
	free(p);
}

int ps_port_id(const ps_port_t *p)
{
	return p->id;
}

unsigned int ps_port_node(const ps_port_t *p)
{
	return ps_hal_node(p->hal);
}

unsigned int ps_port_nodes(const ps_port_t *p)
{
	return ps_hal_nodes(p->hal);
}

unsigned long ps_port_dropped(const ps_port_t *p)
{
	return __atomic_load_n(&p->pl->dropped, __ATOMIC_RELAXED);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

static ssize_t take(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		    size_t len);

/*
 * The pool is full and we are sending (lock held): move the messages
 * queued for our port into our own memory, in order.  Nobody else takes
 * them, and while the pool stays full the NIC's FIFO stops, and with it
 * the network to this node: also the packets that our send waits for,
 * when it goes to this node or to a sender that is stuck in the same way.
 * Returns the number of messages moved.
 */
static int stash(ps_port_t *p)
{
	struct lmsg *l;
	uint32_t m;
	int n = 0;

	while ((m = p->pl->port[p->id].head)) {
		l = malloc(sizeof(*l) + B(p, m)->total);
		if (!l)
			break;
		l->len = take(p, &l->from, &l->fport, l->data, B(p, m)->total);
		l->next = NULL;
		*p->ltail = l;
		p->ltail = &l->next;
		n++;
	}
	return n;
}

int ps_port_send(ps_port_t *p, unsigned int dest, int dport, const void *buf,
		 size_t len)
{
	struct ps_port_hdr h;
	struct iovec iov[2];
	size_t off = 0, n;
	int ret, err, stalled;

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
	h = (struct ps_port_hdr){ .dport = dport, .sport = p->id,
				  .msgid = p->next_msgid++, .total = len };
	do {
		n = len - off < PS_PORT_FRAG_DATA ? len - off : PS_PORT_FRAG_DATA;
		h.offset = off;
		iov[0] = (struct iovec){ .iov_base = &h, .iov_len = sizeof(h) };
		iov[1] = (struct iovec){ .iov_base = (char *)buf + off,
					 .iov_len = n };
		for (;;) {
			/* one packet per lock: others get their turn */
			lock(p);
			ret = ps_hal_sendv(p->hal, dest, iov, 2);
			err = errno;
			stalled = 0;
			if (ret && err == EAGAIN) {	/* make room, see rawdata */
				stalled = drain(p);
				if (stalled > 0 && stash(p))
					stalled = drain(p);
			}
			unlock(p);
			if (!ret)
				break;
			if (err != EAGAIN) {
				errno = err;
				return -1;
			}
			if (stalled)
				sleep_ms(1);
			else if (ps_hal_wait(p->hal, PS_HAL_TX, WAIT_MS) < 0)
				return -1;
		}
		off += n;
	} while (off < len);
	return 0;
}

/* Take this port's first message if it fits (lock held). */
static ssize_t take(ps_port_t *p, unsigned int *from, int *fport, void *buf,
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
		*fport = fb->sport;
	msg_free(p, m);
	return off;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ssize_t ps_port_recv(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		     size_t len, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms, left;
	struct lmsg *l;
	ssize_t n;
	int stalled = 0;

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
		lock(p);
		n = take(p, from, fport, buf, len);
		if (n == -2) {
			stalled = drain(p);
			n = take(p, from, fport, buf, len);
		}
		unlock(p);
		if (n >= 0 || n == -1)
			return n;
		if (stalled < 0)
			return -1;
		left = deadline - now_ms();
		if (timeout_ms >= 0 && left <= 0) {
			errno = timeout_ms == 0 ? EAGAIN : ETIMEDOUT;
			return -1;
		}
		if (timeout_ms < 0 || left > WAIT_MS)
			left = WAIT_MS;
		if (stalled)
			sleep_ms(1);
		else if (ps_hal_wait(p->hal, PS_HAL_RX, left) < 0)
			return -1;
	}
}
