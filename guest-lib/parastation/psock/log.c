/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the debug log (PS_SOCK_DEBUG) and the counts of
 * what the library did, which it prints at exit.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "psock.h"

void psock_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, fd;
	const struct psock_options *o = psock_options();

	if (!o->debug)
		return;
	n = snprintf(line, sizeof(line), "psock[%d]: ", getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* a file, for daemons, whose stderr is gone: opened each time, since
	 * a daemon closes every descriptor it does not know */
	fd = o->debug_file ? open(o->debug_file, O_WRONLY | O_APPEND | O_CREAT |
			       O_CLOEXEC, 0644) : 2;
	if (fd < 0)
		return;
	/* one write, so lines do not mix; not our write(), which takes the
	 * lock our caller may hold (fd 2 may be a socket of ours) */
	(void)!syscall(SYS_write, fd, line, n);
	if (fd != 2)
		sys_close(fd);
}

unsigned long psock_stats[ST_N];

void psock_say_stats(void)
{
	psock_say("stats: poll %lu (slept %lu, on the NIC %lu, on the "
		  "doorbell alone %lu, kernel not asked %lu, spun %lu, in "
		  "vain %lu), epoll %lu "
		  "(slept %lu), messages in %lu, out %lu, slow sends %lu, "
		  "read waits %lu, signals put off %lu, stalls of a spinner "
		  "%lu (in epoll_wait %lu), ends held for the kernel's FIN %lu, "
		  "messages of ours put off for room %lu",
		  psock_stats[ST_POLL],
		  psock_stats[ST_POLL_SLEEP], psock_stats[ST_POLL_NIC],
		  psock_stats[ST_POLL_BELL], psock_stats[ST_POLL_UNASKED],
		  psock_stats[ST_POLL_SPIN], psock_stats[ST_POLL_SPUN],
		  psock_stats[ST_EPOLL], psock_stats[ST_EPOLL_SLEEP],
		  psock_stats[ST_MSG_IN], psock_stats[ST_MSG_OUT],
		  psock_stats[ST_SEND_SLOW], psock_stats[ST_RECV_WAIT],
		  psock_stats[ST_SIG_DEFERRED], psock_stats[ST_IDLE_STALL],
		  psock_stats[ST_IDLE_STALL_EPOLL], psock_stats[ST_END_HELD],
		  psock_stats[ST_OWED]);
}
