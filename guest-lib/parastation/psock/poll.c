/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: poll (and ppoll, select and pselect through it).
 *
 * Our connections are answered from the library's state; everything else,
 * and what our connections still need from the kernel (set-up bytes, the
 * end of the stream), from the kernel, in one poll() of the files asked
 * about.  The waiting is the engine's (wait.c), with every phase on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "psock.h"

#define STACK_FDS	16

struct poll_call {
	struct pollfd *fds;	/* the program's */
	nfds_t n;
	struct pollfd *kfds;	/* what the kernel is asked, n + 2 */
	short *pass;		/* which of its answers count (ours), else -1 */
	int ready;		/* of ours, at the last look */
};

/* When this thread last asked the kernel in poll(), and about which fds */
static __thread int64_t kernel_asked_us;
static __thread uint64_t kernel_asked_set;

/* A digest of the fds asked about: another set is asked at once */
static uint64_t fd_set_digest(const struct pollfd *kfds, nfds_t n)
{
	uint64_t h = 14695981039346656037ull ^ n;

	for (nfds_t i = 0; i < n; i++)
		h = (h ^ (uint32_t)kfds[i].fd) * 1099511628211ull;
	return h;
}

/*
 * Whether a poll() of the kernel that does not wait can be left out, when
 * the kernel was asked about the same fds a short while ago (so what it
 * holds back is at most that late); a system call costs as much as a
 * ports message.  Left out for PS_PORT_POLL_MS while some of ours are
 * ready (the program has work and asks again), or when it could only
 * tell that the kernel socket of one of ours ended or broke.  Else, when
 * nothing is ready, only in a call with timeout 0, for SPIN_KERNEL_US: a
 * program that spins in poll() (Open MPI) sees ours the sooner for each
 * system call left out.
 */
#define SPIN_KERNEL_US	100

static bool kernel_ask_due(const struct pollfd *kfds, const short *pass,
			   nfds_t n, int ready, bool no_wait)
{
	int64_t after = PS_PORT_POLL_MS * 1000;

	for (nfds_t i = 0; i < n && !ready; i++) {
		if (kfds[i].fd < 0 || (pass[i] >= 0 &&
				       !(kfds[i].events & pass[i])))
			continue;
		if (!no_wait)
			return true;
		after = SPIN_KERNEL_US;
	}
	return fd_set_digest(kfds, n) != kernel_asked_set ||
	       psock_us_now() - kernel_asked_us >= after;
}

/*
 * The look: one pass over every fd; kfds gets what to ask the kernel,
 * pass which of its answers count as the program's.  How many fds are
 * ready from our state alone.
 */
static int poll_look(struct psock_waiter *w)
{
	struct poll_call *p = w->ctx;
	int ready = 0;

	w->only_ours = true;
	w->soon = false;
	w->ours = false;
	psock_lock();
	psock_pump();
	for (nfds_t i = 0; i < p->n; i++) {
		struct pollfd *fd = &p->fds[i], *k = &p->kfds[i];
		struct psock_conn *c = psock_get(fd->fd);
		short watch, rev;

		*k = (struct pollfd){ .fd = fd->fd };
		fd->revents = 0;
		rev = c ? psock_events(fd->fd, c, fd->events, &watch,
				       &p->pass[i]) : -1;
		if (rev < 0) {		/* the kernel's */
			k->events = fd->events;
			p->pass[i] = -1;
			if (fd->fd >= 0)
				w->only_ours = false;
			continue;
		}
		w->ours = true;
		k->events = watch;
		w->soon |= psock_eof_pending(c);
		fd->revents = rev & (fd->events | POLLERR | POLLHUP);
		ready += !!fd->revents;
		/* a set-up byte or the end of the stream: rare, the NIC wait
		 * is short, so that is seen soon enough; others are not */
		if (watch & POLLOUT)
			w->only_ours = false;
	}
	psock_unlock();
	p->ready = ready;
	return ready;
}

/* The ask: the kernel's answers beside ours; how many fds are ready. */
static int poll_ask(struct psock_waiter *w, struct pollfd *wake, int nwake,
		    int wait_ms, int64_t *asked_us)
{
	struct poll_call *p = w->ctx;
	nfds_t n = p->n;
	int ret = 0;

	if (!wait_ms && !nwake &&
	    !kernel_ask_due(p->kfds, p->pass, n, p->ready, !w->timeout_ms)) {
		STAT(ST_POLL_UNASKED);
		for (nfds_t i = 0; i < n; i++)
			p->kfds[i].revents = 0;
	} else {
		for (int i = 0; i < nwake; i++)
			p->kfds[n + i] = wake[i];
		ret = psock_kernel_poll(p->kfds, n + nwake, wait_ms, w->mask);
		kernel_asked_us = *asked_us = psock_us_now();
		kernel_asked_set = fd_set_digest(p->kfds, n);
		for (int i = 0; i < nwake; i++)
			wake[i].revents = p->kfds[n + i].revents;
		if (ret < 0)
			return -1;
	}
	ret = 0;
	w->kernel_woke = false;
	for (nfds_t i = 0; i < n; i++) {
		short got = p->kfds[i].revents;

		if (p->pass[i] < 0) {
			p->fds[i].revents = got;
		} else {
			p->fds[i].revents |= got & (p->pass[i] | POLLNVAL);
			if (got & ~p->pass[i])
				psock_kernel_spoke(p->fds[i].fd, w);
		}
		ret += !!p->fds[i].revents;
	}
	return ret;
}

static const struct psock_wait_ops poll_ops = {
	.look = poll_look,
	.ask = poll_ask,
	.phases = PSOCK_PHASE_ON(PSOCK_PHASE_SPIN) |
		  PSOCK_PHASE_ON(PSOCK_PHASE_STALL) |
		  PSOCK_PHASE_ON(PSOCK_PHASE_SLEEP) |
		  PSOCK_PHASE_ON(PSOCK_PHASE_IDLE),
	.st_sleep = ST_POLL_SLEEP,
};

int psock_poll(struct pollfd *fds, nfds_t n, int timeout_ms,
	       const sigset_t *mask)
{
	struct pollfd kstack[STACK_FDS + 2];
	short pstack[STACK_FDS];
	struct poll_call p = { .fds = fds, .n = n, .kfds = kstack,
			       .pass = pstack };
	struct psock_waiter w = { .ctx = &p,
				  .timeout_ms = timeout_ms, .mask = mask };
	int ret;

	STAT(ST_POLL);
	if (n > STACK_FDS) {
		p.kfds = malloc((n + 2) * sizeof(*p.kfds));
		p.pass = malloc(n * sizeof(*p.pass));
		if (!p.kfds || !p.pass) {
			free(p.kfds);
			free(p.pass);
			errno = ENOMEM;
			return -1;
		}
	}
	ret = psock_wait(&poll_ops, &w);
	if (p.kfds != kstack) {
		free(p.kfds);
		free(p.pass);
	}
	return ret;
}
