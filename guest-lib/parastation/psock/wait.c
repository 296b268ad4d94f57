/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the one wait engine.
 *
 * poll, ppoll, select and pselect (poll.c), epoll_wait and epoll_pwait
 * (epoll.c) and the blocking calls (block.c, through psock_poll()) all
 * wait here.  A caller brings two operations: look (our connections,
 * from the library's state) and ask (the kernel's files, and sleep on
 * them).  The engine goes through named phases:
 *
 *   look   our state; then the kernel asked without waiting;
 *   spin   the port checked for a short while, kernel files beside ours;
 *   stall  one wait on the NIC, as the ports layer waits, when only ours
 *          are waited on and we watch the NIC (psock_port_wait());
 *   sleep  in the kernel, on its files, the NIC and the port's doorbell;
 *   idle   a call without a timeout that keeps finding nothing: one
 *          short stall on the NIC.
 *
 * Each caller turns on the phases it uses (struct psock_wait_ops).  A
 * blocking read that only a message over ports can end uses the stall
 * alone (psock_sleep_ports()).  docs/psock.md, "Waiting", has the why
 * and the figures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "psock.h"

#define ON(ops, phase)	((ops)->phases & PSOCK_PHASE_ON(phase))

/*
 * The spin before a sleep in the kernel, as Linux's busy_poll does: while
 * this thread's recent waits were short, it checks the port for up to
 * twice their mean (at least SPIN_MIN_US, at most PS_SOCK_SPIN_US; 0:
 * never).  A sleep that a packet ends costs more than a ports message.
 * Never while another process watches the NIC for us, nor beside a peer
 * on this node, which needs our CPU.
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
	int64_t t0 = psock_us_now();

	for (;;) {
		bool got = psock_port_arrived_within(SPIN_TRIES);

		*t = psock_us_now();
		if (got || *t - t0 >= us)
			return got;
	}
}

/*
 * The idle phase.  A thread that asks about ours without waiting, over
 * and over, and finds nothing, spins (Open MPI's progress loop); on the
 * emulator its CPU takes the host's time from the fabric and the other
 * node, which bring what it waits for.  So once IDLE_CALLS such calls
 * came within IDLE_CALLS * PS_SOCK_IDLE_GAP_US (0: never), with no
 * message in or out between them, while the port may spin and no other
 * task of the node waits for a CPU, each further empty one stalls on the
 * NIC (one WAIT read, which a packet ends at once).  That goes on while
 * the calls keep coming that close and no message moves.
 * Only a wait for an answer stalls: from a message out until one comes
 * in.  A thread that goes on asking after a message came in, without
 * sending, works between its calls (MPI_Test loops in HPCC's
 * RandomAccess); a stall would hold its work back, and its peers' with
 * it.  So does one whose stall no packet ended, until it sends again.
 */
#define IDLE_CALLS	32
#define IDLE_STALL_MS	1	/* rounded up to one WAIT read */
#define IDLE_RECHECK	8	/* stalls between readings of the node's load */
#define IDLE_BACKOFF	(8 * IDLE_CALLS)	/* calls after a busy reading */

static __thread int idle_calls;
static __thread unsigned int idle_stalls;
static __thread int64_t idle_since_us, idle_last_us;
static __thread bool idle_spinning;
/* messages out and in at the last empty call; whether the thread waits
 * for an answer (nothing came in since it sent) */
static __thread unsigned long idle_out, idle_in;
static __thread bool idle_answer_due;

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

static void idle_reset(void)
{
	idle_calls = 0;
	idle_spinning = false;
}

/* Whether this empty call goes on a spin: see above. */
static bool idle_spins(void)
{
	int64_t now;
	int64_t window = (int64_t)IDLE_CALLS * psock_options()->idle_gap_us;
	unsigned long out, in;

	if (!window)
		return false;
	out = __atomic_load_n(&psock_stats[ST_MSG_OUT], __ATOMIC_RELAXED);
	in = __atomic_load_n(&psock_stats[ST_MSG_IN], __ATOMIC_RELAXED);
	if (out != idle_out || in != idle_in) {	/* messages moved */
		idle_answer_due = out != idle_out;
		idle_out = out;
		idle_in = in;
		idle_reset();
		return false;
	}
	if (!idle_answer_due)
		return false;
	if (!idle_spinning) {
		if (!idle_calls++)
			idle_since_us = psock_us_now();
		if (idle_calls < IDLE_CALLS)
			return false;
		idle_calls = 0;
		now = psock_us_now();
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
	now = psock_us_now();
	if (now - idle_last_us >= window ||
	    !psock_port_spins() ||
	    (++idle_stalls % IDLE_RECHECK == 0 && !cpus_idle())) {
		idle_reset();
		return false;
	}
	return true;
}

/* The idle phase: whether it stalled.  Keeps errno. */
static bool idle_stall(const struct psock_wait_ops *ops)
{
	int err = errno;
	bool stall = idle_spins();

	if (stall) {
		STAT(ST_IDLE_STALL);
		if (ops->epoll)
			STAT(ST_IDLE_STALL_EPOLL);
		psock_lock();
		if (!psock_port_wait(IDLE_STALL_MS))
			idle_answer_due = false;	/* not the network's turn */
		psock_unlock();
		idle_last_us = psock_us_now();
	}
	errno = err;
	return stall;
}

void psock_kernel_spoke(int fd, struct psock_waiter *w)
{
	struct psock_conn *c;

	psock_lock();
	c = psock_get(fd);
	if (c)
		c->kernel_woke = w->kernel_woke = true;
	psock_unlock();
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

/*
 * The phase for a call that has nothing ready and may wait: the stall
 * when only ours are waited on and we watch the NIC (else their news
 * comes on the doorbell, which only a sleep hears); the spin when kernel
 * files are waited on beside ours and this call has not used up its
 * spin; else the sleep.
 */
static __always_inline enum psock_phase
wait_phase(const struct psock_wait_ops *ops, const struct psock_waiter *w,
	   bool port, bool spun)
{
	if (!port)
		return PSOCK_PHASE_SLEEP;	/* the kernel's files alone */
	if (w->only_ours && ON(ops, PSOCK_PHASE_STALL) &&
	    (psock_bell_fd() < 0 || psock_nic_watches()))
		return PSOCK_PHASE_STALL;
	if (ON(ops, PSOCK_PHASE_SPIN) && !spun)
		return PSOCK_PHASE_SPIN;
	return PSOCK_PHASE_SLEEP;
}

/* How long the sleep phase sleeps, and on which of the port's files
 * (wake, *nwake; the doorbell last).  *watch: whether on the NIC too. */
static int sleep_setup(bool port, bool *watch, struct pollfd *wake,
		       int *nwake)
{
	int wait;

	*nwake = 0;
	if (!port)
		return PS_PORT_POLL_MS;
	/* a doorbell rings for what others receive for us */
	wait = psock_nic_sleep(watch) ? 0 : psock_sleep_ms(*watch);
	if (*watch)
		wake[(*nwake)++] = (struct pollfd){ .fd = psock_nic_fd(),
						    .events = POLLIN };
	else
		STAT(ST_POLL_BELL);
	if (psock_bell_fd() >= 0)
		wake[(*nwake)++] = (struct pollfd){ .fd = psock_bell_fd(),
						    .events = POLLIN };
	return wait;
}

/* inline in each caller, with link-time optimisation (mk/ps-lib.mk): its
 * look and ask become direct calls, and the phases it leaves off go */
__always_inline int psock_wait(const struct psock_wait_ops *ops,
			       struct psock_waiter *w)
{
	int timeout_ms = w->timeout_ms;
	int64_t deadline = timeout_ms > 0 ?
			   psock_us_now() + timeout_ms * 1000LL : 0;
	int64_t since = 0, woke = 0;	/* this call's wait (spin_us()) */
	int64_t spin_end = 0;		/* one spin budget per call */
	bool spun = false, idled = false;
	struct psock_wait_sig sig;
	int ret;

	psock_wait_begin(&sig, w->mask);
	w->kernel_woke = false;
	for (;;) {
		struct pollfd wake[2];
		int ready = ops->look(w);
		int wait = 0, stall_ms = 0, spin_for = 0, nwake = 0;
		bool port = psock_nic_fd() >= 0, watch = true;
		enum psock_phase phase = PSOCK_PHASE_LOOK;

		if (w->full) {
			ret = ready;
			break;
		}
		if (!ready && timeout_ms)
			phase = wait_phase(ops, w, port, spun);
		if (phase == PSOCK_PHASE_SPIN) {
			spin_for = spin_us();
			if (spin_for && spin_end) {	/* this call spun before */
				int64_t left = spin_end - psock_us_now();

				spin_for = left > 0 ? (int)left : 0;
				spun = !spin_for;
			}
			if (spin_for && timeout_ms > 0 &&
			    deadline - psock_us_now() < spin_for)
				spin_for = 0;	/* the sleep keeps the time */
			if (!spin_for)
				phase = PSOCK_PHASE_SLEEP;
		}
		if (phase == PSOCK_PHASE_SLEEP)
			wait = sleep_setup(port, &watch, wake, &nwake);
		else if (phase == PSOCK_PHASE_STALL)
			wait = PS_PORT_POLL_MS;
		if (w->soon && wait > PS_PORT_POLL_MS)
			wait = PS_PORT_POLL_MS;
		if (timeout_ms > 0 && wait) {
			int64_t left = (deadline - psock_us_now() + 999) / 1000;

			wait = left <= 0 ? 0 : left < wait ? (int)left : wait;
		}
		/* the stall and the spin come after the kernel was asked */
		if (phase == PSOCK_PHASE_STALL) {
			stall_ms = wait;
			wait = 0;
		}
		if (wait)
			STAT(ops->st_sleep);
		if (wait && psock_intr_since(&sig.intr)) {
			errno = EINTR;	/* a handler ran during the look */
			ret = -1;
		} else {
			if (wait && !since && ON(ops, PSOCK_PHASE_SPIN))
				since = psock_us_now();
			ret = ops->ask(w, wake, nwake, wait, &woke);
		}
		if (phase == PSOCK_PHASE_SLEEP && port)
			psock_nic_awake(watch, nwake &&
					       wake[nwake - 1].fd == psock_bell_fd() &&
					       (wake[nwake - 1].revents & POLLIN));
		if (ret)
			break;
		if (w->kernel_woke)	/* look at what the kernel said */
			continue;
		if (stall_ms || spin_for) {
			/* a signal the mask lets through is due, before; a
			 * handler ran, after: as the kernel's sleep would */
			if (psock_mask_pending(w->mask)) {
				errno = EINTR;
				ret = -1;
				break;
			}
			if (stall_ms) {
				STAT(ST_POLL_NIC);
				psock_lock();
				psock_port_wait(stall_ms);
				psock_unlock();
			} else {
				STAT(ST_POLL_SPIN);
				if (!since)
					since = psock_us_now();
				if (!spin_end)
					spin_end = psock_us_now() + spin_for;
				spun = !spin(spin_for, &woke);
				if (spun)
					STAT(ST_POLL_SPUN);
			}
			if (psock_intr_since(&sig.intr)) {
				errno = EINTR;
				ret = -1;
				break;
			}
			continue;
		}
		if (!timeout_ms && !idled && !w->mask && port && w->ours &&
		    ON(ops, PSOCK_PHASE_IDLE) && idle_stall(ops)) {
			idled = true;
			continue;	/* look again, once */
		}
		if (!timeout_ms)
			break;
		if (timeout_ms > 0 && psock_us_now() >= deadline)
			break;
	}
	if (ret || timeout_ms)
		idle_reset();
	if (since)
		waited(woke - since);
	psock_wait_end(&sig);
	return ret;
}
