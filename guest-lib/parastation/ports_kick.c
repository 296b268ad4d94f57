/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ports: the doorbell of a port, for messages between processes of one
 * node (see ports.c).
 *
 * Such a message does not pass the NIC: the sender copies it into the
 * node's pool (ports_deliver()).  So the NIC cannot wake its receiver,
 * and neither can a packet to ourselves: every process of the node that
 * sleeps on the NIC wakes, and the first to take the packet in leaves
 * the others asleep.  Each port has its own doorbell instead, a datagram
 * socket in the abstract Unix namespace named after the NIC and the port
 * (no file to clean up, gone with its last holder).  A sender rings it
 * when the port's owner said it sleeps (pool flag "waiting"); the owner
 * sleeps in poll() on the NIC and its doorbell.
 *
 * Who watches the NIC: every process asleep on it wakes for every packet,
 * and on a one-CPU guest each wake of a process the packet is not for
 * delays the one it is for (a PVM daemon beside its task made the task's
 * round trip half as slow again).  So the ports that got a message from
 * the NIC in the last WARM_MS watch it; another port sleeps on its
 * doorbell alone while one of them lives: whoever takes its messages in
 * rings it.  When no watcher is asleep (they compute), a port asleep on
 * its doorbell takes in what came itself when it looks again, within
 * PS_PORT_BELL_MS; and every process takes in whenever it enters the
 * library.  A port with traffic of its own watches again at once.
 * Threads share the port and its doorbell: one that wakes empties it,
 * and a ring for another is lost.  So once two threads of a process have
 * slept on ports, its sleeps last at most PS_PORT_POLL_MS (ports_nap()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ports_int.h"
#include "ps_sys.h"

static socklen_t bell_addr(ps_port_t *p, int port, struct sockaddr_un *a)
{
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* sun_path[0] = 0: the abstract namespace */
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
		     "ps-ports/%s/%d", ps_hal_name(p->hal), port);
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

void ports_bell_open(ps_port_t *p)
{
	struct sockaddr_un a;
	socklen_t len = bell_addr(p, p->id, &a);
	int fd = ps_sys_socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int high;

	p->bell = -1;
	if (fd < 0)
		return;
	/* taken (a child of the port's last owner still holds it): then
	 * we look every WAIT_MS, as for messages other processes took in */
	if (ps_sys_bind(fd, (struct sockaddr *)&a, len)) {
		ps_sys_close(fd);
		return;
	}
	high = ps_sys_fcntl(fd, F_DUPFD_CLOEXEC, PS_HAL_FD_MIN);
	if (high >= 0) {
		ps_sys_close(fd);
		fd = high;
	}
	p->bell = fd;
}

void ports_bell_close(ps_port_t *p)
{
	if (p->bell >= 0)
		ps_sys_close(p->bell);
	p->bell = -1;
}

void ports_bell_ring(ps_port_t *p, int port)
{
	struct sockaddr_un a;
	socklen_t len = bell_addr(p, port, &a);
	char b = 0;
	int err = errno;	/* a ring that fails is no error of the send */
	int fd = p->bell >= 0 ? p->bell :
		 ps_sys_socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	/* full: it rings already; no such bell: its owner looks anyway */
	if (fd >= 0)
		ps_sys_sendto(fd, &b, 1, MSG_DONTWAIT, (struct sockaddr *)&a, len);
	if (fd >= 0 && fd != p->bell)
		ps_sys_close(fd);
	errno = err;
}

/* Empty our doorbell after a sleep that it ended. */
static void ports_bell_quiet(ps_port_t *p)
{
	int err = errno;	/* the caller's wait may have set it */
	char b[64];

	if (p->bell >= 0)
		while (ps_sys_recv(p->bell, b, sizeof(b), MSG_DONTWAIT) > 0)
			;
	errno = err;
}

int ports_bell_wait(ps_port_t *p, int timeout_ms, int watch_nic, int *rung)
{
	struct pollfd f[2] = {
		{ .fd = p->bell, .events = POLLIN },
		{ .fd = ps_hal_poll_fd(p->hal), .events = POLLIN },
	};
	int n = ps_sys_poll(f, watch_nic ? 2 : 1, timeout_ms);

	*rung = n > 0 && (f[0].revents & POLLIN);
	if (n < 0)
		return -1;	/* EINTR too, as ps_hal_wait() */
	if (watch_nic && (f[1].revents & (POLLERR | POLLHUP | POLLNVAL))) {
		errno = ENODEV;	/* the NIC is gone */
		return -1;
	}
	return (f[0].revents | (watch_nic ? f[1].revents : 0)) & POLLIN ?
	       PS_HAL_RX : 0;
}

static bool warm(struct pool *pl, int i, int64_t now)
{
	return now - __atomic_load_n(&pl->port[i].rx_ms, __ATOMIC_RELAXED) <
	       WARM_MS;
}

/* Another live port of the node watches the NIC, or will soon. */
static bool nic_watched(ps_port_t *p, int64_t now)
{
	struct pool *pl = p->pl;

	for (int i = 0; i < PS_PORTS_MAX; i++) {
		uint32_t owner = __atomic_load_n(&pl->port[i].owner,
						 __ATOMIC_RELAXED);

		if (i == p->id || !owner ||
		    ((!__atomic_load_n(&pl->port[i].watching, __ATOMIC_SEQ_CST) ||
		      now >= __atomic_load_n(&pl->port[i].watch_until,
					     __ATOMIC_RELAXED)) &&
		     !warm(pl, i, now)))
			continue;
		/* one killed in its sleep watches no more */
		if (ports_alive(owner))
			return true;
	}
	return false;
}

static int sleeper_threads;		/* of this process, that ever slept */
static __thread bool slept;

int ports_nap(int timeout_ms, int max_ms)
{
	if (__atomic_load_n(&sleeper_threads, __ATOMIC_RELAXED) > 1)
		max_ms = PS_PORT_POLL_MS;
	return timeout_ms < 0 || timeout_ms > max_ms ? max_ms : timeout_ms;
}

int ps_port_sleep_ms(const ps_port_t *p, int watch_nic)
{
	if (p->bell < 0)	/* nobody can ring us: look again soon */
		return PS_PORT_POLL_MS;
	return ports_nap(-1, watch_nic ? PS_PORT_WATCH_MS : PS_PORT_BELL_MS);
}

static int watches(ps_port_t *p, int64_t now)
{
	return p->bell < 0 || warm(p->pl, p->id, now) || !nic_watched(p, now);
}

int ps_port_watches(ps_port_t *p)
{
	return watches(p, now_ms());
}

int ports_sleep(ps_port_t *p, int must_watch, int *watch_nic)
{
	struct pool *pl = p->pl;
	int64_t now = now_ms();
	int watch = must_watch || watches(p, now);

	if (!slept) {
		slept = true;
		__atomic_add_fetch(&sleeper_threads, 1, __ATOMIC_RELAXED);
	}
	if (watch) {
		__atomic_store_n(&pl->port[p->id].watch_until,
				 now + PS_PORT_WATCH_MS, __ATOMIC_RELAXED);
		__atomic_add_fetch(&pl->port[p->id].watching, 1,
				   __ATOMIC_SEQ_CST);
	}
	__atomic_add_fetch(&pl->port[p->id].waiting, 1, __ATOMIC_SEQ_CST);
	*watch_nic = watch;
	return p->lhead ||
	       __atomic_load_n(&pl->port[p->id].head, __ATOMIC_SEQ_CST);
}

int ps_port_sleep(ps_port_t *p, int *watch_nic)
{
	return ports_sleep(p, 0, watch_nic);
}

void ps_port_awake(ps_port_t *p, int watch_nic, int rung)
{
	struct pool *pl = p->pl;

	__atomic_sub_fetch(&pl->port[p->id].waiting, 1, __ATOMIC_SEQ_CST);
	if (watch_nic)
		__atomic_sub_fetch(&pl->port[p->id].watching, 1,
				   __ATOMIC_SEQ_CST);
	if (rung)
		ports_bell_quiet(p);
}
