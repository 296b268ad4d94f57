/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the kernel connection watches the peer's node.
 *
 * Once a connection's data goes over ports its kernel connection is idle,
 * and a peer node that dies or restarts never ends it: a reader would
 * wait for ever, a writer for room that never comes.  So the library turns
 * on TCP keepalives there (PSOCK_ALIVE_*): a restarted node answers the
 * first probe with a reset, a dead one none of them, and either ends the
 * kernel connection, which ends ours (stream.c).  The program sees the
 * keepalive options as it set them: the library keeps its own values in
 * the kernel, never longer than the program's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "psock.h"

/* the option of each of struct psock_conn's alive[] */
static const struct {
	int level, name, ours;
} alive_opt[PSOCK_ALIVE_OPTS] = {
	{ SOL_SOCKET, SO_KEEPALIVE, 1 },
	{ IPPROTO_TCP, TCP_KEEPIDLE, PSOCK_ALIVE_IDLE_S },
	{ IPPROTO_TCP, TCP_KEEPINTVL, PSOCK_ALIVE_INTVL_S },
	{ IPPROTO_TCP, TCP_KEEPCNT, PSOCK_ALIVE_PROBES },
};

static int opt_index(int level, int name)
{
	for (int i = 0; i < PSOCK_ALIVE_OPTS; i++)
		if (alive_opt[i].level == level && alive_opt[i].name == name)
			return i;
	return -1;
}

bool psock_alive_option(int level, int name)
{
	return opt_index(level, name) >= 0;
}

static int kernel_set(int fd, int i, int v)
{
	return syscall(SYS_setsockopt, fd, alive_opt[i].level,
		       alive_opt[i].name, &v, sizeof(v));
}

/* What goes into the kernel for option i: ours, or the program's if
 * that watches more closely. */
static int applied(const struct psock_conn *c, int i)
{
	int prog = c->alive[i];

	if (i == 0)
		return 1;
	return c->alive[0] && prog < alive_opt[i].ours ? prog :
	       alive_opt[i].ours;
}

void psock_alive_start(struct psock_conn *c)
{
	if (c->alive_on || c->dgram)
		return;
	for (int i = 0; i < PSOCK_ALIVE_OPTS; i++) {
		socklen_t len = sizeof(c->alive[i]);

		if (syscall(SYS_getsockopt, c->kfd, alive_opt[i].level,
			    alive_opt[i].name, &c->alive[i], &len))
			return;		/* not a TCP socket after all */
	}
	c->alive_on = true;
	for (int i = PSOCK_ALIVE_OPTS - 1; i >= 0; i--)
		kernel_set(c->kfd, i, applied(c, i));
}

bool psock_alive_sockopt(int fd, struct psock_conn *c, bool set, int level,
			 int name, void *val, socklen_t *len, int *ret)
{
	int i = opt_index(level, name), v;
	socklen_t n;

	if (i < 0 || !c->alive_on)
		return false;	/* the kernel's (with the lock: not during
				 * psock_alive_start()) */
	if (set) {
		/* the kernel checks the value and says the errors */
		*ret = syscall(SYS_setsockopt, fd, level, name, val, *len);
		if (*ret)
			return true;
		n = sizeof(v);
		if (!syscall(SYS_getsockopt, fd, level, name, &v, &n))
			c->alive[i] = v;
		/* SO_KEEPALIVE decides which values go in for the others */
		for (int k = PSOCK_ALIVE_OPTS - 1; k >= 0; k--)
			kernel_set(fd, k, applied(c, k));
		return true;
	}
	*ret = syscall(SYS_getsockopt, fd, level, name, val, len);
	if (!*ret) {	/* as much of the program's value as it asked */
		n = *len < sizeof(int) ? *len : sizeof(int);
		memcpy(val, &c->alive[i], n);
	}
	return true;
}
