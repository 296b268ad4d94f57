/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rawdata: whole messages over HAL packets, one process per node.
 *
 * Send cuts a message into fragments that fill a HAL packet (ps_hal_mtu()),
 * each behind a struct ps_frag_hdr.  The network keeps the order per pair of
 * nodes, so reassembly needs just one partial message per source and a
 * check that each fragment continues it.  Complete messages wait in one
 * queue in arrival order, from which a receive takes the first one that
 * matches its source.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps_hal.h"
#include "ps_rawdata.h"

/* Messages up to this size live in their struct rmsg: no malloc. */
#define SMALL_MSG	496

/* Poll this long before sleeping in the driver: a reply that is already
 * on its way costs no interrupt and no system call.  $PS_SPIN_US changes
 * it (0: sleep at once). */
#define SPIN_NS_DEFAULT	20000

struct rmsg {
	struct rmsg *next;
	unsigned int src;
	uint32_t id, len, got;
	uint8_t *data;			/* small, or malloc'ed when larger */
	uint8_t small[SMALL_MSG];
};

struct ps_raw {
	ps_hal_t *hal;
	uint32_t *next_id;		/* per destination */
	struct rmsg **partial;		/* per source: being reassembled */
	struct rmsg *head, *tail;	/* complete, arrival order */
	struct rmsg *lent;		/* handed out by ps_raw_recv_zc */
	struct rmsg *free;		/* recycled, so small ones need no malloc */
	unsigned long dropped;
	int64_t spin_ns;
};

static struct rmsg *msg_new(ps_raw_t *r, unsigned int src, uint32_t id,
			    uint32_t len)
{
	struct rmsg *m = r->free;

	if (m)
		r->free = m->next;
	else if (!(m = malloc(sizeof(*m))))
		return NULL;
	m->next = NULL;
	m->src = src;
	m->id = id;
	m->len = len;
	m->got = 0;
	m->data = m->small;
	if (len > sizeof(m->small) && !(m->data = malloc(len))) {
		m->next = r->free;
		r->free = m;
		return NULL;
	}
	return m;
}

static void msg_free(ps_raw_t *r, struct rmsg *m)
{
	if (m->data != m->small)
		free(m->data);
	m->next = r->free;
	r->free = m;
}

static void free_list(struct rmsg *m, int data_too)
{
	struct rmsg *n;

	for (; m; m = n) {
		n = m->next;
		if (data_too && m->data != m->small)
			free(m->data);
		free(m);
	}
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

ps_raw_t *ps_raw_open(void)
{
	ps_raw_t *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	r->hal = ps_hal_open(PS_HAL_EXCL);
	if (!r->hal)
		goto fail;
	r->spin_ns = getenv("PS_SPIN_US") ?
		atoll(getenv("PS_SPIN_US")) * 1000 : SPIN_NS_DEFAULT;
	r->next_id = calloc(ps_hal_nodes(r->hal), sizeof(*r->next_id));
	r->partial = calloc(ps_hal_nodes(r->hal), sizeof(*r->partial));
	if (!r->next_id || !r->partial)
		goto fail;
	return r;
fail:
	err = errno;
	ps_raw_close(r);
	errno = err;
	return NULL;
}

void ps_raw_close(ps_raw_t *r)
{
	unsigned int i;

	if (!r)
		return;
	if (r->hal) {
		for (i = 0; r->partial && i < ps_hal_nodes(r->hal); i++)
			free_list(r->partial[i], 1);
		ps_hal_close(r->hal);
	}
	free_list(r->head, 1);
	free_list(r->lent, 1);
	free_list(r->free, 0);
	free(r->next_id);
	free(r->partial);
	free(r);
}

unsigned int ps_raw_node(const ps_raw_t *r)
{
	return ps_hal_node(r->hal);
}

unsigned int ps_raw_nodes(const ps_raw_t *r)
{
	return ps_hal_nodes(r->hal);
}

unsigned long ps_raw_dropped(const ps_raw_t *r)
{
	return r->dropped;
}

/* What a receive wants, so that a small message can go straight there. */
struct want {
	int src;
	void *buf;		/* NULL: no direct delivery */
	size_t len;
	unsigned int from;	/* out */
	ssize_t got;		/* out: >= 0 when delivered directly */
};

static int matches(int want, unsigned int src)
{
	return want == PS_ANY || (unsigned int)want == src;
}

/* Drop the rest of the current packet; the HAL skips it on the next peek. */
static int drop(ps_raw_t *r)
{
	r->dropped++;
	return ps_hal_receive_body(r->hal, NULL, 0) ? -1 : 1;
}

/*
 * Take in one packet.  Returns 1 if one was taken (w->got >= 0 when it
 * was a whole small message copied straight to w->buf), 0 if none, -1.
 */
static int pump(ps_raw_t *r, struct want *w)
{
	struct ps_frag_hdr f;
	struct rmsg *m;
	unsigned int src;
	size_t plen, n;
	int ret;

	ret = ps_hal_receive_header(r->hal, &src, &plen);
	if (ret <= 0)
		return ret;
	if (plen < sizeof(f) || src >= ps_hal_nodes(r->hal))
		return drop(r);
	if (ps_hal_receive_body(r->hal, &f, sizeof(f)))
		return -1;
	if (f.offset > f.total)
		return drop(r);
	/* the fragment's data: the rest of the message or of the packet
	 * (whose length may be rounded up to the NIC's granularity) */
	n = f.total - f.offset;
	if (n > plen - sizeof(f))
		n = plen - sizeof(f);
	if (n == 0 && f.total)
		return drop(r);
	m = r->partial[src];
	if (f.offset == 0) {
		if (m) {	/* the old one can never complete */
			r->dropped++;
			r->partial[src] = NULL;
			msg_free(r, m);
		}
		/* Zero copy: a whole message in one packet, wanted now,
		 * goes right to the user.  (Nothing for this receive is
		 * queued, or unqueue() would have found it.) */
		if (w && w->buf && matches(w->src, src) && f.total == n &&
		    n <= w->len) {
			if (ps_hal_receive_body(r->hal, w->buf, n))
				return -1;
			w->from = src;
			w->got = n;
			return 1;
		}
		m = msg_new(r, src, f.msgid, f.total);
		if (!m)
			return -1;
		r->partial[src] = m;
	} else if (!m || m->id != f.msgid || m->got != f.offset) {
		return drop(r);
	}
	if (ps_hal_receive_body(r->hal, m->data + f.offset, n))
		return -1;
	m->got += n;
	if (m->got == m->len) {
		r->partial[src] = NULL;
		if (r->tail)
			r->tail->next = m;
		else
			r->head = m;
		r->tail = m;
	}
	return 1;
}

/* Take the first complete message from src off the queue. */
static struct rmsg *unqueue(ps_raw_t *r, int src, size_t maxlen)
{
	struct rmsg *m, *prev = NULL;

	for (m = r->head; m; prev = m, m = m->next)
		if (matches(src, m->src))
			break;
	if (!m)
		return NULL;
	if (m->len > maxlen) {
		errno = EMSGSIZE;
		return NULL;
	}
	if (prev)
		prev->next = m->next;
	else
		r->head = m->next;
	if (r->tail == m)
		r->tail = prev;
	m->next = NULL;
	return m;
}

/*
 * Wait for HAL events: poll for SPIN_NS, then sleep in the driver.
 * deadline -1: none.  Returns > 0 events, 0 timeout, -1 error.
 */
static int await(ps_raw_t *r, int events, int64_t deadline)
{
	int64_t t0 = now_ns(), t, left;
	int ev;

	do {
		ev = ps_hal_status(r->hal) & events;
		if (ev)
			return ev;
		t = now_ns();
	} while (t - t0 < r->spin_ns && (deadline < 0 || t < deadline));
	if (deadline < 0)
		return ps_hal_wait(r->hal, events, -1);
	left = deadline - t;
	if (left <= 0)
		return 0;
	return ps_hal_wait(r->hal, events, (int)((left + 999999) / 1000000));
}

/* The common receive loop; direct delivery only when w->buf is set. */
static struct rmsg *recv_msg(ps_raw_t *r, struct want *w, size_t maxlen,
			     int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 :
		now_ns() + (int64_t)timeout_ms * 1000000;
	struct rmsg *m;
	int ret;

	if (w->src != PS_ANY &&
	    (w->src < 0 || (unsigned int)w->src >= ps_hal_nodes(r->hal))) {
		errno = EINVAL;
		return NULL;
	}
	for (;;) {
		errno = 0;
		m = unqueue(r, w->src, maxlen);
		if (m || errno == EMSGSIZE)
			return m;
		ret = pump(r, w);
		if (ret < 0 || w->got >= 0)
			return NULL;
		if (ret > 0)
			continue;
		ret = await(r, PS_HAL_RX, deadline);
		if (ret < 0)
			return NULL;
		if (ret == 0 && !(ps_hal_status(r->hal) & PS_HAL_RX)) {
			errno = timeout_ms == 0 ? EAGAIN : ETIMEDOUT;
			return NULL;
		}
	}
}

ssize_t ps_raw_recv(ps_raw_t *r, int src, unsigned int *from, void *buf,
		    size_t len, int timeout_ms)
{
	struct want w = { .src = src, .buf = buf, .len = len, .got = -1 };
	struct rmsg *m;
	ssize_t n;

	if (!r || (len && !buf)) {
		errno = EINVAL;
		return -1;
	}
	m = recv_msg(r, &w, len, timeout_ms);
	if (!m) {
		if (w.got < 0)
			return -1;
		if (from)
			*from = w.from;
		return w.got;
	}
	memcpy(buf, m->data, m->len);
	if (from)
		*from = m->src;
	n = m->len;
	msg_free(r, m);
	return n;
}

ssize_t ps_raw_recv_zc(ps_raw_t *r, int src, unsigned int *from,
		       const void **data, int timeout_ms)
{
	struct want w = { .src = src, .got = -1 };
	struct rmsg *m;

	if (!r || !data) {
		errno = EINVAL;
		return -1;
	}
	m = recv_msg(r, &w, (size_t)-1, timeout_ms);
	if (!m)
		return -1;
	m->next = r->lent;
	r->lent = m;
	*data = m->data;
	if (from)
		*from = m->src;
	return m->len;
}

int ps_raw_release(ps_raw_t *r, const void *data)
{
	struct rmsg **pp, *m;

	if (!r) {
		errno = EINVAL;
		return -1;
	}
	for (pp = &r->lent; (m = *pp); pp = &m->next)
		if (m->data == data) {
			*pp = m->next;
			msg_free(r, m);
			return 0;
		}
	errno = EINVAL;
	return -1;
}

int ps_raw_send(ps_raw_t *r, unsigned int dest, const void *buf, size_t len)
{
	struct ps_frag_hdr f;
	struct iovec iov[2];
	size_t off = 0, n, frag;
	int ret;

	if (!r || (len && !buf) || len > UINT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (dest >= ps_hal_nodes(r->hal)) {
		errno = EHOSTUNREACH;
		return -1;
	}
	f.msgid = r->next_id[dest]++;
	f.total = len;
	frag = ps_hal_mtu(r->hal) - sizeof(f);
	do {
		n = len - off < frag ? len - off : frag;
		f.offset = off;
		iov[0] = (struct iovec){ .iov_base = &f, .iov_len = sizeof(f) };
		iov[1] = (struct iovec){ .iov_base = (char *)buf + off,
					 .iov_len = n };
		while (ps_hal_sendv(r->hal, dest, iov, 2)) {
			if (errno != EAGAIN)
				return -1;
			/* The network is full.  Take in what arrives, or a
			 * peer that sends to us as well could never drain. */
			while ((ret = pump(r, NULL)) > 0)
				;
			if (ret < 0 || await(r, PS_HAL_RX | PS_HAL_TX, -1) < 0)
				return -1;
		}
		off += n;
	} while (off < len);
	return 0;
}
