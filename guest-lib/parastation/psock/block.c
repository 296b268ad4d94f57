/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the waits of the blocking calls (recv, send, and
 * the others that read or write one connection).
 *
 * A blocking call waits through psock_poll() on its one descriptor, the
 * wait engine with every phase (wait.c); a blocking read that only a
 * message over ports can end uses the engine's stall alone, on the port
 * (psock_sleep_ports()).  Both keep the socket's SO_RCVTIMEO and
 * SO_SNDTIMEO, and end with EINTR as the kernel's sleep would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/time.h>

#include "psock.h"

/* Bumped for every change of flags or options of ours; never 0. */
static unsigned int opts_gen_now = 1;

/* The file's O_NONBLOCK and timeouts into c, unless c has them. */
static void conn_opts(int fd, struct psock_conn *c)
{
	unsigned int gen = __atomic_load_n(&opts_gen_now, __ATOMIC_ACQUIRE);
	struct timeval tv;
	socklen_t len;
	int fl;

	if (c->opts_gen == gen && !c->shared && c->state != PSOCK_INHERITED)
		return;
	fl = sys_fcntl(fd, F_GETFL, 0);
	c->nonblock = fl < 0 || (fl & O_NONBLOCK);	/* EBADF: no wait */
	c->rcvtimeo_ms = c->sndtimeo_ms = -1;
	for (int i = 0; i < 2; i++) {
		len = sizeof(tv);
		if (getsockopt(fd, SOL_SOCKET, i ? SO_SNDTIMEO : SO_RCVTIMEO,
			       &tv, &len) || !(tv.tv_sec || tv.tv_usec))
			continue;
		*(i ? &c->sndtimeo_ms : &c->rcvtimeo_ms) =
			tv.tv_sec >= INT_MAX / 1000 ? INT_MAX :
			(int)(tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000);
	}
	/* a change meanwhile has bumped the count: asked again next time */
	c->opts_gen = fl >= 0 ? gen : 0;
}

bool psock_nonblocking(int fd, struct psock_conn *c, int flags)
{
	if (flags & MSG_DONTWAIT)
		return true;
	conn_opts(fd, c);
	return c->nonblock;
}

void psock_opts_changed(int fd)
{
	/* every connection asks again: such calls are rare */
	if (psock_get(fd) &&
	    !__atomic_add_fetch(&opts_gen_now, 1, __ATOMIC_RELEASE))
		__atomic_add_fetch(&opts_gen_now, 1, __ATOMIC_RELEASE);
}

/*
 * A wait on the port asks no kernel file, so its wakeup costs only what
 * a ports message costs.  The kernel socket is asked whether it ended
 * after a wait that no packet ended, and after every KERNEL_ASK_WAITS
 * waits.
 */
#define KERNEL_ASK_WAITS	64

/* What is left of a call's timeout_ms (-1: none, then -1) that ends at
 * *deadline_ms, set at its first clock read (<= 0 before); 0 once it has
 * passed. */
static int time_left(int timeout_ms, int64_t *deadline_ms)
{
	int64_t now;

	if (timeout_ms < 0)
		return -1;
	now = psock_ms_now();
	if (*deadline_ms <= 0)
		*deadline_ms = now + timeout_ms;
	return now >= *deadline_ms ? 0 : (int)(*deadline_ms - now);
}

/*
 * The same for a wait on the port: the call's first such wait reads no
 * clock (*deadline_ms becomes DEADLINE_UNREAD), the second starts the
 * timeout.  A packet ends most first waits, and a clock read costs as
 * much as the rest of a wakeup; a timeout ends at most that first wait
 * (PS_PORT_POLL_MS) late, never early.
 */
#define DEADLINE_UNREAD	(-1)

static int port_time_left(int timeout_ms, int64_t *deadline_ms)
{
	if (timeout_ms < 0 || *deadline_ms)
		return time_left(timeout_ms, deadline_ms);
	*deadline_ms = DEADLINE_UNREAD;
	return timeout_ms;
}

/* fd names connection c still, after the lock was given up: not another
 * one that took its descriptor and its memory meanwhile */
static bool still(int fd, const struct psock_conn *c, uint32_t nonce)
{
	return psock_get(fd) == c && c->nonce == nonce;
}

/* A handler ran since m that ends a blocking call with EINTR: the kernel
 * restarts one without a timeout after SA_RESTART handlers (signal(7)). */
static bool intr_ends(const struct psock_intr *m, int timeout_ms)
{
	int was = psock_intr_since(m);

	return was == PSOCK_INTR || (was && timeout_ms >= 0);
}

/* inline in stream.c's steady read, with link-time optimisation
 * (mk/ps-lib.mk): every message there costs a wakeup */
__always_inline int
psock_sleep_ports(int fd, struct psock_conn *c, int64_t *deadline_ms)
{
	uint32_t nonce = c->nonce;
	static __thread unsigned int waits;
	int left = port_time_left(c->rcvtimeo_ms, deadline_ms);
	int wait = left >= 0 && left < PS_PORT_POLL_MS ? left : PS_PORT_POLL_MS;
	struct psock_intr intr;
	bool got;

	if (!left) {
		errno = EAGAIN;
		return -1;
	}
	psock_intr_mark(&intr);
	got = psock_port_wait(wait);	/* other threads may go on */
	if (!still(fd, c, nonce)) {
		errno = EBADF;
		return -2;
	}
	if (!got || !(++waits % KERNEL_ASK_WAITS)) {
		struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

		if (sys_poll(&p, 1, 0) > 0)
			c->kernel_woke = true;
	}
	if (intr_ends(&intr, left)) {
		errno = EINTR;
		return -1;
	}
	return got;
}

int psock_sleep(int fd, struct psock_conn *c, short events,
		int64_t *deadline_ms)
{
	uint32_t nonce = c->nonce;
	struct pollfd p = { .fd = fd, .events = events };
	struct psock_intr intr;
	int timeout, n;

	conn_opts(fd, c);
	timeout = time_left(events & POLLIN ? c->rcvtimeo_ms : c->sndtimeo_ms,
			    deadline_ms);
	/* before the unlock: handlers deferred till then end the wait */
	psock_intr_mark(&intr);
	psock_unlock();
	if (intr_ends(&intr, timeout)) {
		errno = EINTR;
		n = -1;
	} else {
		/* restarted after SA_RESTART handlers, as the kernel does */
		do
			n = psock_poll(&p, 1, timeout, NULL);
		while (n < 0 && errno == EINTR && timeout < 0 &&
		       psock_intr_since(&intr) == PSOCK_INTR_RESTART);
	}
	psock_lock();
	if (n == 0)
		errno = EAGAIN;
	if (n <= 0)
		return -1;
	if (!still(fd, c, nonce)) {	/* closed by another thread */
		errno = EBADF;
		return -2;
	}
	return 0;
}
