/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: waiting (poll, select and the blocking calls).
 *
 * Our connections are answered from the library's state; everything else,
 * and what our connections still need from the kernel (set-up bytes, the
 * end of the stream), from the kernel.  When nothing is ready we sleep on
 * all of those, on our port's doorbell (rung when another process of the
 * node receives our message) and on the NIC; or, while another process
 * of the node watches the NIC for us, without the NIC and for at most
 * PS_PORT_BELL_MS (ports_kick.c).  When only our connections are waited
 * on and we watch the NIC, the wait of the ports layer is used instead:
 * it stalls on the NIC first, for the latency of ports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <time.h>

#include "psock.h"

#define STACK_FDS	16

static int64_t us_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

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
 * holds back is at most that late).  A system call costs as much as a
 * ports message.  Left out for PS_PORT_POLL_MS:
 * - while some of ours are ready: the program has work and asks again (a
 *   kernel fd's news waits for its next call);
 * - when it could only tell that the kernel socket of one of our
 *   connections ended or broke (POLLIN of its end, POLLHUP, POLLERR; no
 *   fd of the kernel's is asked).
 * Else, when the kernel's fds are asked and nothing is ready, only in a
 * call with timeout 0, for SPIN_KERNEL_US: a program that spins in poll()
 * (Open MPI) sees ours the sooner for each system call left out.  A call
 * that waits asks before it spins or sleeps.
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
	       us_now() - kernel_asked_us >= after;
}

/*
 * A spin on the port before a sleep in the kernel, as Linux's busy_poll
 * does.  A sleep that a packet ends costs an interrupt, a wakeup and a
 * switch, more than a ports message (docs/psock.md, "Waiting", has the
 * figures).  Programs that wait on kernel fds beside ours (PVM's select()
 * over its daemon's socket, Open MPI's poll()) sleep there, not in the
 * stall of ports.  So while this thread's recent waits were short, it
 * checks the port for up to twice their mean (at least SPIN_MIN_US, at
 * most PS_SOCK_SPIN_US, default PSOCK_SPIN_US_DEFAULT; 0: never), after
 * the kernel was asked: its fds' news waits that long.  Never while another process watches the NIC for
 * us, nor beside a peer on this node, which needs our CPU.
 */
#define SPIN_MIN_US	50
#define SPIN_TRIES	8	/* ps_port_arrived() calls per clock read */

static __thread int64_t wait_mean_us;	/* recent waits, 1/4 weight */

static int spin_us(void)
{
	int spin_max_us = psock_options()->spin_max_us;
	int64_t us = 2 * wait_mean_us;

	if (!spin_max_us || us > spin_max_us || !psock_port_spins())
		return 0;
	if (us < SPIN_MIN_US)
		us = SPIN_MIN_US;
	return us > spin_max_us ? spin_max_us : (int)us;
}

/* A wait of this thread lasted us: a long one stops the spinning. */
static void waited(int64_t us)
{
	if (us > 4 * PSOCK_SPIN_US_DEFAULT)
		us = 4 * PSOCK_SPIN_US_DEFAULT;
	wait_mean_us += (us - wait_mean_us) / 4;
}

/* Check the port for up to us; whether something came, *t when. */
static bool spin(int us, int64_t *t)
{
	int64_t t0 = us_now();

	for (;;) {
		bool got = psock_port_arrived_within(SPIN_TRIES);

		*t = us_now();
		if (got || *t - t0 >= us)
			return got;
	}
}

/*
 * A thread that asks poll(), select() or epoll_wait() about ours without
 * waiting, over and over, and finds nothing, spins (Open MPI's progress
 * loop).  On the emulator its CPU takes the host's time from the fabric
 * and the other node, which bring what it waits for.  So once IDLE_CALLS
 * such calls came within IDLE_CALLS * the gap (PS_SOCK_IDLE_GAP_US,
 * default PSOCK_IDLE_GAP_US_DEFAULT; 0: never), while the port may
 * spin and no other task of the node waits for a CPU, each further empty
 * one stalls on the NIC: one WAIT read, which a packet ends at once, else
 * the card's wait-timeout-us (2 ms).  That goes on while the calls keep
 * coming that close, until one finds something or waits.  A kernel fd's
 * news waits one stall.
 */
#define IDLE_CALLS	32
#define IDLE_STALL_MS	1	/* rounded up to one WAIT read */
#define IDLE_RECHECK	8	/* stalls between readings of the node's load */
#define IDLE_BACKOFF	(8 * IDLE_CALLS)	/* calls after a busy reading */

static __thread int idle_calls;
static __thread unsigned int idle_stalls;
static __thread int64_t idle_since_us, idle_last_us;
static __thread bool idle_spinning;

/* Whether no task of the node waits for a CPU: /proc/loadavg's runnable
 * tasks (this one among them) are at most the CPUs. */
static bool cpus_idle(void)
{
	static long cpus;
	char buf[128], *slash;
	int fd = syscall(SYS_openat, AT_FDCWD, "/proc/loadavg",
			 O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	sys_close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	slash = strchr(buf, '/');
	if (!__atomic_load_n(&cpus, __ATOMIC_RELAXED))
		__atomic_store_n(&cpus, sysconf(_SC_NPROCESSORS_ONLN),
				 __ATOMIC_RELAXED);
	while (slash && slash > buf && slash[-1] != ' ')
		slash--;
	return slash && cpus > 0 && atol(slash) <= cpus;
}

void psock_idle_reset(void)
{
	idle_calls = 0;
	idle_spinning = false;
}

/* Whether this empty call goes on a spin: see above.  Keeps errno. */
static bool idle_spins(void)
{
	int64_t now;
	int64_t window = (int64_t)IDLE_CALLS * psock_options()->idle_gap_us;

	if (!window)
		return false;
	if (!idle_spinning) {
		if (!idle_calls++)
			idle_since_us = us_now();
		if (idle_calls < IDLE_CALLS)
			return false;
		idle_calls = 0;
		now = us_now();
		if (now - idle_since_us >= window ||
		    !psock_port_spins())
			return false;
		if (!cpus_idle()) {
			idle_calls = -IDLE_BACKOFF;
			return false;
		}
		idle_spinning = true;
		idle_stalls = 0;
		return true;
	}
	now = us_now();
	if (now - idle_last_us >= window ||
	    !psock_port_spins() ||
	    (++idle_stalls % IDLE_RECHECK == 0 && !cpus_idle())) {
		psock_idle_reset();
		return false;
	}
	return true;
}

bool psock_idle_stall(bool in_epoll)
{
	int err = errno;
	bool stall = idle_spins();

	if (stall) {
		STAT(ST_IDLE_STALL);
		if (in_epoll)
			STAT(ST_IDLE_STALL_EPOLL);
		psock_lock();
		psock_port_wait(IDLE_STALL_MS);
		psock_unlock();
		idle_last_us = us_now();
	}
	errno = err;
	return stall;
}

/* Whether any of the fds is ours (scan()'s pass). */
static bool any_ours(const short *pass, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (pass[i] >= 0)
			return true;
	return false;
}

/*
 * One pass over every fd; kfds gets what to ask the kernel, pass which of
 * its answers count as the program's (for our fds, -1 for others).
 * Returns how many fds are ready from our state alone.
 */
static int scan(struct pollfd *fds, nfds_t n, struct pollfd *kfds,
		short *pass, bool *only_ours, bool *soon, bool kernel_woke)
{
	int ready = 0;

	*only_ours = true;
	*soon = false;
	psock_lock();
	psock_pump();
	for (nfds_t i = 0; i < n; i++) {
		struct psock_conn *c = psock_get(fds[i].fd);
		short watch, rev;

		/* the last sleep's answer for a file we watched for ourselves */
		if (c && kernel_woke && pass[i] >= 0 &&
		    (kfds[i].revents & ~pass[i]))
			c->kernel_woke = true;

		kfds[i] = (struct pollfd){ .fd = fds[i].fd };
		fds[i].revents = 0;
		rev = c ? psock_events(fds[i].fd, c, fds[i].events, &watch,
				       &pass[i]) : -1;
		if (rev < 0) {		/* the kernel's */
			kfds[i].events = fds[i].events;
			pass[i] = -1;
			if (fds[i].fd >= 0)
				*only_ours = false;
			continue;
		}
		kfds[i].events = watch;
		*soon |= psock_eof_pending(c);
		fds[i].revents = rev & (fds[i].events | POLLERR | POLLHUP);
		ready += !!fds[i].revents;
		/* a set-up byte or the end of the stream: rare, the NIC wait
		 * is short, so that is seen soon enough; others are not */
		if (watch & POLLOUT)
			*only_ours = false;
	}
	psock_unlock();
	return ready;
}

int psock_kernel_poll(struct pollfd *fds, nfds_t n, int timeout_ms,
		      const sigset_t *mask)
{
	struct timespec ts = { timeout_ms / 1000,
			       timeout_ms % 1000 * 1000000L };

	if (!mask)
		return sys_poll(fds, n, timeout_ms);
	return syscall(SYS_ppoll, fds, n, timeout_ms < 0 ? NULL : &ts, mask,
		       _NSIG / 8);
}

int psock_mask_pending(const sigset_t *mask)
{
	sigset_t pending;

	if (!mask || sigpending(&pending))
		return 0;
	for (int sig = 1; sig < _NSIG; sig++)
		if (sigismember(&pending, sig) == 1 &&
		    sigismember(mask, sig) == 0)
			return psock_kernel_poll(NULL, 0, 0, mask) < 0 ? -1 : 0;
	return 0;
}

int psock_poll(struct pollfd *fds, nfds_t n, int timeout_ms,
	       const sigset_t *mask)
{
	struct pollfd kstack[STACK_FDS + 2], *kfds = kstack;
	short pstack[STACK_FDS], *pass = pstack;
	int64_t deadline = timeout_ms > 0 ? us_now() + timeout_ms * 1000LL : 0;
	int64_t since = 0, woke = 0;	/* this call's wait (spin_us()) */
	int64_t spin_end = 0;		/* one spin budget per call */
	struct psock_wait_sig sig;
	int ret;

	STAT(ST_POLL);
	if (n > STACK_FDS) {
		kfds = malloc((n + 2) * sizeof(*kfds));
		pass = malloc(n * sizeof(*pass));
		if (!kfds || !pass) {
			free(kfds);
			free(pass);
			errno = ENOMEM;
			return -1;
		}
	}
	psock_wait_begin(&sig, mask);
	for (bool kernel_woke = false, spun = false, stalled = false;;) {
		bool only_ours, soon, sleeping = false;
		int ready = scan(fds, n, kfds, pass, &only_ours, &soon,
				 kernel_woke);
		int wait = ready || !timeout_ms ? 0 : PS_PORT_POLL_MS, nic_wait;
		int spin_for = 0;
		int nic = psock_nic_fd();
		nfds_t kn = n;
		bool watch = true;

		/* a port that another process watches the NIC for sleeps
		 * on its doorbell and the kernel's files, never stalls */
		if (wait && nic >= 0 && only_ours && psock_bell_fd() >= 0 &&
		    !psock_nic_watches())
			only_ours = false;
		/* kernel fds beside ours: the kernel asked (when due), then
		 * a spin, below; a sleep when that found nothing */
		if (wait && nic >= 0 && !only_ours && !spun)
			spin_for = spin_us();
		if (spin_for && spin_end) {	/* this call spun before */
			int64_t left = spin_end - us_now();

			spin_for = left > 0 ? (int)left : 0;
			spun = !spin_for;
		}
		if (spin_for && timeout_ms > 0 &&
		    deadline - us_now() < spin_for)
			spin_for = 0;	/* the sleep keeps the time */
		if (spin_for) {
			wait = 0;
		} else if (wait && nic >= 0 && !only_ours) {
			sleeping = true;
			/* a doorbell rings for what others receive for us */
			wait = psock_nic_sleep(&watch) ? 0 : psock_sleep_ms(watch);
		}
		if (soon && wait > PS_PORT_POLL_MS)
			wait = PS_PORT_POLL_MS;
		if (timeout_ms > 0 && wait) {
			int64_t left = (deadline - us_now() + 999) / 1000;

			wait = left <= 0 ? 0 : left < wait ? (int)left : wait;
		}
		/* only ours: the kernel asked without waiting (when due),
		 * then a stall on the NIC first, as ports does, below */
		nic_wait = wait && nic >= 0 && only_ours ? wait : 0;
		if (nic_wait) {
			wait = 0;
		} else if (sleeping) {
			/* our doorbell, and the NIC unless another process
			 * of the node watches it for us */
			if (watch)
				kfds[kn++] = (struct pollfd){ .fd = nic,
							      .events = POLLIN };
			else
				STAT(ST_POLL_BELL);
			if (psock_bell_fd() >= 0)
				kfds[kn++] = (struct pollfd){
					.fd = psock_bell_fd(), .events = POLLIN };
		}
		if (wait)
			STAT(ST_POLL_SLEEP);
		if (!wait && kn == n &&
		    !kernel_ask_due(kfds, pass, n, ready, !timeout_ms)) {
			STAT(ST_POLL_UNASKED);
			for (nfds_t i = 0; i < n; i++)
				kfds[i].revents = 0;
			ret = 0;
		} else if (wait && psock_intr_since(&sig.intr)) {
			errno = EINTR;	/* a handler ran during the scan */
			ret = -1;
		} else {
			if (wait && !since)
				since = us_now();
			ret = psock_kernel_poll(kfds, kn, wait, mask);
			kernel_asked_us = woke = us_now();
			kernel_asked_set = fd_set_digest(kfds, n);
		}
		if (sleeping)	/* the doorbell is the last, if any */
			psock_nic_awake(watch, ret > 0 && kn > n &&
					       kfds[kn - 1].fd == psock_bell_fd() &&
					       (kfds[kn - 1].revents & POLLIN));
		if (ret < 0)
			break;
		ret = 0;
		kernel_woke = false;
		for (nfds_t i = 0; i < n; i++) {
			short got = kfds[i].revents;

			if (pass[i] < 0) {
				fds[i].revents = got;
			} else {
				fds[i].revents |= got & (pass[i] | POLLNVAL);
				kernel_woke |= !!(got & ~pass[i]);
			}
			ret += !!fds[i].revents;
		}
		if (ret)
			break;
		if (kernel_woke)	/* check what the kernel said */
			continue;
		if (nic_wait || spin_for) {	/* a wait outside the kernel */
			/* a signal the mask lets through is due, before; a
			 * handler ran, after: as the kernel's sleep would */
			if (psock_mask_pending(mask)) {
				errno = EINTR;
				ret = -1;
				break;
			}
			if (nic_wait) {
				STAT(ST_POLL_NIC);
				psock_lock();
				psock_port_wait(nic_wait);
				psock_unlock();
			} else {
				STAT(ST_POLL_SPIN);
				if (!since)
					since = us_now();
				if (!spin_end)
					spin_end = us_now() + spin_for;
				spun = !spin(spin_for, &woke);
				if (spun)
					STAT(ST_POLL_SPUN);
			}
			if (psock_intr_since(&sig.intr)) {
				errno = EINTR;
				ret = -1;
				break;
			}
			continue;	/* scan again */
		}
		if (!timeout_ms && !stalled && !mask && nic >= 0 &&
		    any_ours(pass, n) && psock_idle_stall(false)) {
			stalled = true;
			continue;	/* scan again, once */
		}
		if (!timeout_ms)
			break;
		if (timeout_ms > 0 && us_now() >= deadline)
			break;
	}
	if (ret || timeout_ms)
		psock_idle_reset();
	if (since)
		waited(woke - since);
	psock_wait_end(&sig);
	if (kfds != kstack) {
		free(kfds);
		free(pass);
	}
	return ret;
}

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
