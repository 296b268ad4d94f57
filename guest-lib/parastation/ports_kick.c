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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

void ports_bell_quiet(ps_port_t *p)
{
	int err = errno;	/* the caller's wait may have set it */
	char b[64];

	if (p->bell >= 0)
		while (ps_sys_recv(p->bell, b, sizeof(b), MSG_DONTWAIT) > 0)
			;
	errno = err;
}

int ports_bell_wait(ps_port_t *p, int timeout_ms)
{
	struct pollfd f[2] = {
		{ .fd = ps_hal_poll_fd(p->hal), .events = POLLIN },
		{ .fd = p->bell, .events = POLLIN },
	};

	if (ps_sys_poll(f, 2, timeout_ms) < 0)
		return -1;	/* EINTR too, as ps_hal_wait() */
	if (f[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
		errno = ENODEV;	/* the NIC is gone */
		return -1;
	}
	return (f[0].revents | f[1].revents) & POLLIN ? PS_HAL_RX : 0;
}
