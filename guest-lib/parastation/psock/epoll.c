/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: epoll.
 *
 * The epoll descriptor is the kernel's.  Files that are not ours are
 * registered there as the program asks.  Our connections are kept here,
 * with the program's events and data, and answered from the library's
 * state; the kernel epoll holds, under a tag of ours, the kernel sockets
 * of our connections (for their set-up bytes and their end), so that it
 * wakes for them too.  epoll_wait sleeps in poll() on the epoll and the
 * NIC.  A connection that turns
 * out to be the kernel's is handed to the kernel epoll as the program
 * registered it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "psock.h"

/* data.u64 of our own registrations: the tag, and the fd below it */
#define TAG		0x7073636bull		/* "psck" */
#define TAGGED(fd)	((TAG << 32) | (uint32_t)(fd))
#define IS_TAGGED(u)	(((u) >> 32) == TAG)

struct entry {
	int fd;
	uint32_t events;	/* the program's, EPOLLONESHOT included */
	epoll_data_t data;
	bool disabled;		/* EPOLLONESHOT: reported, until MOD */
	/* EPOLLET: the events of the last scan, and the connection's
	 * edge_keys() when they were last reported (edges()) */
	uint32_t edge_last;
	uint32_t edge_in, edge_out;
};

struct ep {
	int epfd;
	int n, cap;
	struct entry *e;
	struct ep *next;
};

static struct ep *eps;		/* under psock_lock() */

static struct ep *ep_find(int epfd)
{
	for (struct ep *x = eps; x; x = x->next)
		if (x->epfd == epfd)
			return x;
	return NULL;
}

static struct entry *entry_find(struct ep *x, int fd)
{
	for (int i = 0; i < x->n; i++)
		if (x->e[i].fd == fd)
			return &x->e[i];
	return NULL;
}

static int kctl(int epfd, int op, int fd, uint32_t events, uint64_t u64)
{
	struct epoll_event ev = { .events = events, .data.u64 = u64 };

	return syscall(SYS_epoll_ctl, epfd, op, fd, &ev);
}

/* Our registration of fd's kernel socket: its set-up bytes, its end. */
static int watch_kernel(int epfd, int op, int fd)
{
	return kctl(epfd, op, fd, EPOLLIN | EPOLLRDHUP | EPOLLET, TAGGED(fd));
}

static void entry_drop(struct ep *x, struct entry *en)
{
	*en = x->e[--x->n];
}

int psock_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct psock_conn *c = psock_get(fd);
	struct ep *x;
	struct entry *en;
	int ret;

	if (!c || c->state == PSOCK_KERNEL) {
		if ((x = ep_find(epfd)) && entry_find(x, fd)) {
			errno = op == EPOLL_CTL_ADD ? EEXIST : EINVAL;
			return -1;
		}
		return syscall(SYS_epoll_ctl, epfd, op, fd, ev);
	}
	x = ep_find(epfd);
	en = x ? entry_find(x, fd) : NULL;
	switch (op) {
	case EPOLL_CTL_ADD:
		if (en) {
			errno = EEXIST;
			return -1;
		}
		/* the kernel checks epfd, fd and the events for us */
		ret = watch_kernel(epfd, EPOLL_CTL_ADD, fd);
		if (ret)
			return ret;
		if (!x) {
			x = calloc(1, sizeof(*x));
			if (!x)
				goto nomem;
			x->epfd = epfd;
			x->next = eps;
			eps = x;
		}
		if (x->n == x->cap) {
			int cap = x->cap ? x->cap * 2 : 8;
			struct entry *t = realloc(x->e, cap * sizeof(*t));

			if (!t)
				goto nomem;
			x->e = t;
			x->cap = cap;
		}
		x->e[x->n++] = (struct entry){ .fd = fd, .events = ev->events,
					       .data = ev->data };
		return 0;
	case EPOLL_CTL_MOD:
		if (!en) {
			errno = ENOENT;
			return -1;
		}
		en->events = ev->events;
		en->data = ev->data;
		en->disabled = false;
		en->edge_last = 0;	/* the kernel reports what is ready */
		return 0;
	case EPOLL_CTL_DEL:
		if (!en) {
			errno = ENOENT;
			return -1;
		}
		syscall(SYS_epoll_ctl, epfd, EPOLL_CTL_DEL, fd, NULL);
		entry_drop(x, en);
		return 0;
	}
	errno = EINVAL;
	return -1;
nomem:
	syscall(SYS_epoll_ctl, epfd, EPOLL_CTL_DEL, fd, NULL);
	errno = ENOMEM;
	return -1;
}

bool psock_epoll_any(void)
{
	return __atomic_load_n(&eps, __ATOMIC_RELAXED);
}

bool psock_epoll_has(int epfd)
{
	struct ep *x = ep_find(epfd);

	return x && x->n;
}

void psock_epoll_closed(int fd)
{
	struct ep **pp = &eps, *x;

	while ((x = *pp)) {
		struct entry *en = entry_find(x, fd);

		if (en)
			entry_drop(x, en);
		if (x->epfd == fd) {
			*pp = x->next;
			free(x->e);
			free(x);
			continue;
		}
		pp = &x->next;
	}
}

void psock_epoll_closed_range(unsigned int first, unsigned int last)
{
	struct ep *x = eps;

	while (x) {
		if ((unsigned int)x->epfd >= first &&
		    (unsigned int)x->epfd <= last) {
			psock_epoll_closed(x->epfd);	/* frees x */
			x = eps;
			continue;
		}
		x = x->next;
	}
}

/*
 * What changes when something new comes to read (in: a message, the end
 * of the stream seen, its grace over, a reset) or room to write (out).
 */
static void edge_keys(const struct psock_conn *c, uint32_t *in,
		      uint32_t *out)
{
	*in = c->news_in << 4 | c->fin_got | c->reset << 1 |
	      !!c->eof_ms << 2 | (c->eof_ms && !psock_eof_pending(c)) << 3;
	*out = c->news_out << 1 | c->reset;
}

/*
 * EPOLLET, as the kernel wakes an entry: whatever is ready, when a bit of
 * it was not at the last scan, or something came since the last report
 * for what the entry asks (its side's edge_keys()).  What the kernel
 * answers for us (before the switch, UDP's room) has no edges we could
 * see: it stays level-triggered.
 */
static uint32_t edges(struct entry *en, const struct psock_conn *c,
		      uint32_t rev, bool from_kernel)
{
	uint32_t in, out, last = en->edge_last;
	bool woke;

	edge_keys(c, &in, &out);
	en->edge_last = rev;
	woke = from_kernel || (rev & ~last) ||
	       ((en->events & (EPOLLIN | EPOLLRDHUP | EPOLLPRI)) &&
		in != en->edge_in) ||
	       ((en->events & EPOLLOUT) && out != en->edge_out);
	if (!rev || !woke)
		return 0;
	en->edge_in = in;
	en->edge_out = out;
	return rev;
}

/* A call of epoll_wait: the program's epoll and where its events go. */
struct epoll_call {
	int epfd;
	struct epoll_event *out;
	int max;
	int got;		/* of ours, at the last look */
};

/*
 * The look: our entries' events now; connections that became the
 * kernel's move.  soon: one of them needs a look soon
 * (psock_eof_pending()); ours: one of them may be reported (not a
 * reported EPOLLONESHOT).
 */
static int epoll_look(struct psock_waiter *w)
{
	struct epoll_call *e = w->ctx;
	struct ep *x;
	int got = 0;

	w->soon = false;
	w->ours = false;
	psock_lock();
	x = ep_find(e->epfd);
	if (x)
		psock_pump();
	for (int i = 0; x && i < x->n && got < e->max; i++) {
		struct entry *en = &x->e[i];
		struct psock_conn *c = psock_get(en->fd);
		short watch, pass, rev;
		bool kernel;
		uint32_t want = en->events & (EPOLLIN | EPOLLOUT | EPOLLRDHUP |
					      EPOLLPRI);

		if (!c || c->state == PSOCK_KERNEL) {
			/* the kernel's now: as the program registered it */
			struct epoll_event ev = { .events = en->events,
						  .data = en->data };

			if (c)
				syscall(SYS_epoll_ctl, x->epfd, EPOLL_CTL_MOD,
					en->fd, &ev);
			entry_drop(x, en);
			i--;
			continue;
		}
		if (en->disabled)
			continue;
		w->ours = true;
		rev = psock_events(en->fd, c, want, &watch, &pass);
		w->soon |= psock_eof_pending(c);
		kernel = rev < 0 || !(rev & (want | EPOLLERR | EPOLLHUP));
		if (kernel) {
			/* ready only as far as the kernel says: ask it once */
			struct pollfd k = { .fd = en->fd, .events = watch };

			rev = 0;
			if ((pass & ~(POLLERR | POLLHUP)) &&
			    sys_poll(&k, 1, 0) == 1)
				rev = k.revents & (pass | POLLERR | POLLHUP);
		}
		rev &= want | EPOLLERR | EPOLLHUP;
		if (en->events & EPOLLET)
			rev = edges(en, c, rev, kernel && rev);
		if (!rev)
			continue;
		e->out[got].events = rev;
		e->out[got++].data = en->data;
		if (en->events & EPOLLONESHOT)
			en->disabled = true;
	}
	psock_unlock();
	/* no room for the kernel's events */
	w->full = got == e->max;
	e->got = got;
	return got;
}

/*
 * The ask: the kernel's epoll, after a sleep in poll() on it and the
 * port's files, not with the NIC inside the epoll: poll arms the NIC's
 * interrupt each time, an epoll only when it reports the NIC.  Our tags
 * only wake us.
 */
static int epoll_ask(struct psock_waiter *w, struct pollfd *wake, int nwake,
		     int wait_ms, int64_t *asked_us)
{
	struct epoll_call *e = w->ctx;
	struct epoll_event kev[64];
	int got = e->got, n;

	(void)asked_us;		/* no spin: no record of the waits */
	if (wait_ms) {
		struct pollfd p[3] = { { .fd = e->epfd, .events = POLLIN } };

		for (int i = 0; i < nwake; i++)
			p[1 + i] = wake[i];
		n = psock_kernel_poll(p, 1 + nwake, wait_ms, w->mask);
		for (int i = 0; i < nwake; i++)
			wake[i].revents = p[1 + i].revents;
		if (n < 0 && errno == EINTR)
			return -1;	/* a handler ran */
	}
	n = syscall(SYS_epoll_wait, e->epfd, kev,
		    e->max - got < 64 ? e->max - got : 64, 0);
	if (n < 0)
		return got ? got : -1;
	w->kernel_woke = false;
	for (int i = 0; i < n; i++) {
		if (!IS_TAGGED(kev[i].data.u64)) {
			e->out[got++] = kev[i];
			continue;
		}
		/* our connection's kernel socket: look at it */
		psock_kernel_spoke((int)(uint32_t)kev[i].data.u64, w);
	}
	return got;
}

static const struct psock_wait_ops epoll_ops = {
	.look = epoll_look,
	.ask = epoll_ask,
	.phases = PSOCK_PHASE_ON(PSOCK_PHASE_SLEEP) |
		  PSOCK_PHASE_ON(PSOCK_PHASE_IDLE),
	.st_sleep = ST_EPOLL_SLEEP,
	.epoll = true,
};

int psock_epoll_wait(int epfd, struct epoll_event *out, int max,
		     int timeout_ms, const sigset_t *mask)
{
	struct epoll_call e = { .epfd = epfd, .out = out, .max = max };
	struct psock_waiter w = { .ctx = &e,
				  .timeout_ms = timeout_ms, .mask = mask };

	if (max <= 0) {
		errno = EINVAL;
		return -1;
	}
	STAT(ST_EPOLL);
	return psock_wait(&epoll_ops, &w);
}
