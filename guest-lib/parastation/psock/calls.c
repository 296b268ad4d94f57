/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the calls a program makes, by their libc names.
 * LD_PRELOAD puts these before libc's.  A descriptor that is not one of
 * our connections goes straight to the kernel with a raw system call (no
 * libc in between, so nothing comes back here); ours go to the
 * library's files (psock.h lists them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ps_hal.h"
#include "psock.h"

#define API __attribute__((visibility("default")))

/* ---- the kernel's calls ---- */

ssize_t sys_recvmsg(int fd, struct msghdr *m, int flags)
{
	return syscall(SYS_recvmsg, fd, m, flags);
}

ssize_t sys_sendmsg(int fd, const struct msghdr *m, int flags)
{
	return syscall(SYS_sendmsg, fd, m, flags);
}

ssize_t sys_recv(int fd, void *buf, size_t len, int flags)
{
	return syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
}

ssize_t sys_send(int fd, const void *buf, size_t len, int flags)
{
	return syscall(SYS_sendto, fd, buf, len, flags, NULL, 0);
}

int sys_shutdown(int fd, int how)
{
	return syscall(SYS_shutdown, fd, how);
}

int sys_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	return syscall(SYS_poll, fds, n, timeout_ms);
}

int sys_fcntl(int fd, int cmd, long arg)
{
	return syscall(SYS_fcntl, fd, cmd, arg);
}

int sys_close(int fd)
{
	return syscall(SYS_close, fd);
}

/* ---- fork: both hold the connections (port.c) ---- */

static void before_fork(void)
{
	psock_lock();
}

static void after_fork_parent(void)
{
	psock_forked_parent();
	psock_unlock();
}

static void after_fork_child(void)
{
	psock_lock_forked();
	psock_forked_child();
	psock_unlock();
}

__attribute__((constructor)) static void psock_init(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	psock_exec_resume();
}

/* ---- data ---- */

/* Ours (and not given back to the kernel): under the lock from here. */
static __always_inline struct psock_conn *ours(int fd)
{
	struct psock_conn *c = psock_get(fd);

	if (!c || c->state == PSOCK_KERNEL)
		return NULL;
	psock_lock();
	c = psock_get(fd);	/* it may have gone meanwhile */
	if (c)
		return c;
	psock_unlock();
	return NULL;
}

/* The lock given back, errno kept: the return of a call made under it.
 * A call that succeeded leaves errno as it may (a deferred handler may
 * run now). */
static ssize_t unlocked(ssize_t ret)
{
	int err;

	if (ret >= 0) {
		psock_unlock();
		return ret;
	}
	err = errno;
	psock_unlock();
	errno = err;
	return ret;
}

static ssize_t recv_from(int fd, struct psock_conn *c,
			 const struct iovec *iov, int iovcnt, int flags,
			 struct sockaddr *from, socklen_t *fromlen)
{
	return unlocked(psock_udp_recv(fd, c, iov, iovcnt, flags, from,
				       fromlen));
}

static ssize_t send_to(int fd, struct psock_conn *c, const struct iovec *iov,
		       int iovcnt, int flags, const struct sockaddr *to,
		       socklen_t tolen)
{
	return unlocked(psock_udp_send(fd, c, iov, iovcnt, flags, to, tolen));
}

static ssize_t recv_iov(int fd, struct psock_conn *c, const struct iovec *iov,
			int iovcnt, int flags)
{
	if (c->dgram)
		return recv_from(fd, c, iov, iovcnt, flags, NULL, NULL);
	return unlocked(psock_recv(fd, c, iov, iovcnt, flags));
}

static ssize_t send_iov(int fd, struct psock_conn *c, const struct iovec *iov,
			int iovcnt, int flags)
{
	if (c->dgram)
		return send_to(fd, c, iov, iovcnt, flags, NULL, 0);
	return unlocked(psock_send(fd, c, iov, iovcnt, flags));
}

/* One buffer: a stream's call takes its fast path. */
static ssize_t recv_buf(int fd, struct psock_conn *c, void *buf, size_t len,
			int flags)
{
	struct iovec iov = { buf, len };

	if (c->dgram)
		return recv_from(fd, c, &iov, 1, flags, NULL, NULL);
	return unlocked(psock_recv_buf(fd, c, buf, len, flags));
}

static ssize_t send_buf(int fd, struct psock_conn *c, const void *buf,
			size_t len, int flags)
{
	struct iovec iov = { (void *)buf, len };

	if (c->dgram)
		return send_to(fd, c, &iov, 1, flags, NULL, 0);
	return unlocked(psock_send_buf(fd, c, buf, len, flags));
}

API ssize_t read(int fd, void *buf, size_t len)
{
	struct psock_conn *c = ours(fd);

	if (!c)
		return syscall(SYS_read, fd, buf, len);
	return recv_buf(fd, c, buf, len, 0);
}

API ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		__builtin_trap();	/* as glibc's __chk_fail, without it */
	return read(fd, buf, len);
}

API ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	struct psock_conn *c = ours(fd);

	if (!c)
		return syscall(SYS_readv, fd, iov, iovcnt);
	return recv_iov(fd, c, iov, iovcnt, 0);
}

API ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	struct psock_conn *c = ours(fd);

	if (!c)
		return sys_recv(fd, buf, len, flags);
	return recv_buf(fd, c, buf, len, flags);
}

API ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags)
{
	if (len > buflen)
		__builtin_trap();
	return recv(fd, buf, len, flags);
}

API ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
		     struct sockaddr *from, socklen_t *fromlen)
{
	struct iovec iov = { buf, len };
	struct psock_conn *c = ours(fd);

	if (!c)
		return syscall(SYS_recvfrom, fd, buf, len, flags, from,
			       fromlen);
	if (c->dgram)
		return recv_from(fd, c, &iov, 1, flags, from, fromlen);
	if (from && fromlen)	/* a stream: the peer, as the kernel says */
		getpeername(fd, from, fromlen);
	return recv_buf(fd, c, buf, len, flags);
}

API ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
			   int flags, struct sockaddr *from,
			   socklen_t *fromlen)
{
	if (len > buflen)
		__builtin_trap();
	return recvfrom(fd, buf, len, flags, from, fromlen);
}

API ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	struct psock_conn *c = ours(fd);

	if (!c)
		return sys_recvmsg(fd, m, flags);
	if (c->dgram) {
		m->msg_controllen = 0;
		m->msg_flags = 0;
		return recv_from(fd, c, m->msg_iov, m->msg_iovlen, flags,
				 m->msg_name, m->msg_name ? &m->msg_namelen
							  : NULL);
	}
	if (m->msg_name && m->msg_namelen)
		getpeername(fd, m->msg_name, &m->msg_namelen);
	m->msg_controllen = 0;
	m->msg_flags = 0;
	return recv_iov(fd, c, m->msg_iov, m->msg_iovlen, flags);
}

API ssize_t write(int fd, const void *buf, size_t len)
{
	struct psock_conn *c = ours(fd);

	if (!c)
		return syscall(SYS_write, fd, buf, len);
	return send_buf(fd, c, buf, len, 0);
}

API ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	struct psock_conn *c = ours(fd);

	if (!c)
		return syscall(SYS_writev, fd, iov, iovcnt);
	return send_iov(fd, c, iov, iovcnt, 0);
}

API ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct psock_conn *c = ours(fd);

	if (!c)
		return sys_send(fd, buf, len, flags);
	return send_buf(fd, c, buf, len, flags);
}

/* A datagram to an address: the socket may become ours on the way. */
static struct psock_conn *ours_to(int fd, const struct sockaddr *to,
				  socklen_t tolen)
{
	if (to && !psock_get(fd)) {
		psock_lock();
		psock_udp_maybe(fd, to, tolen);
		psock_unlock();
	}
	return ours(fd);
}

API ssize_t sendto(int fd, const void *buf, size_t len, int flags,
		   const struct sockaddr *to, socklen_t tolen)
{
	struct iovec iov = { (void *)buf, len };
	struct psock_conn *c = ours_to(fd, to, tolen);

	if (!c)
		return syscall(SYS_sendto, fd, buf, len, flags, to, tolen);
	if (c->dgram)
		return send_to(fd, c, &iov, 1, flags, to, tolen);
	return send_buf(fd, c, buf, len, flags);
}

API ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	struct psock_conn *c = ours_to(fd, m->msg_name, m->msg_namelen);

	if (!c)
		return sys_sendmsg(fd, m, flags);
	if (c->dgram)
		return send_to(fd, c, m->msg_iov, m->msg_iovlen, flags,
			       m->msg_name, m->msg_namelen);
	return send_iov(fd, c, m->msg_iov, m->msg_iovlen, flags);
}

/* ---- set-up and tear-down ---- */

API int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int done;

	psock_lock();
	done = psock_bind(fd, addr, len);
	psock_unlock();
	return done ? 0 : syscall(SYS_bind, fd, addr, len);
}

API int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct psock_conn *c;
	bool mine;
	int ret, err;

	if ((c = ours(fd)) && c->dgram) {	/* the datagrams' default peer */
		ret = syscall(SYS_connect, fd, addr, len);
		if (!ret)
			psock_udp_connect(c, addr, len);
		return unlocked(ret);
	}
	if (c)
		psock_unlock();
	psock_lock();
	mine = psock_want_connect(fd, addr, len);
	psock_unlock();
	ret = syscall(SYS_connect, fd, addr, len);
	err = errno;
	if (mine && (!ret || err == EINPROGRESS)) {
		psock_lock();
		psock_connected(fd);
		psock_unlock();
	}
	errno = err;
	return ret;
}

API int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int nfd = syscall(SYS_accept4, fd, addr, len, flags);
	int err = errno;

	if (nfd >= 0) {
		psock_lock();
		psock_accepted(nfd);
		psock_unlock();
	}
	errno = err;
	return nfd;
}

API int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return accept4(fd, addr, len, 0);
}

API int shutdown(int fd, int how)
{
	struct psock_conn *c = ours(fd);

	if (!c)
		return sys_shutdown(fd, how);
	return unlocked(psock_shutdown(fd, c, how));
}

API int close(int fd)
{
	if (psock_own_fd(fd))
		return 0;	/* the library's: it stays, the program's is gone */
	if (psock_get(fd) || psock_epoll_any()) {
		psock_lock();
		psock_epoll_closed(fd);
		psock_close(fd);
		psock_unlock();
	}
	return sys_close(fd);
}

/* closefrom() and close_range(): every descriptor but the NIC's */
API int close_range(unsigned int first, unsigned int last, int flags)
{
	unsigned int top = last, from = first;
	bool cloexec = flags & CLOSE_RANGE_CLOEXEC;

	/* the kernel's errors before we forget anything */
	if (first > last ||
	    (flags & ~(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE))) {
		errno = EINVAL;
		return -1;
	}
	/* our table ends there; the NIC's descriptors are below this too */
	if (top >= (unsigned int)psock_fd_limit() + PS_HAL_FD_MIN + 64)
		top = psock_fd_limit() + PS_HAL_FD_MIN + 64;
	psock_lock();
	for (unsigned int fd = first; fd <= top && fd >= first && !cloexec;
	     fd++)
		if (psock_own_fd(fd)) {
			if (fd > from &&
			    syscall(SYS_close_range, from, fd - 1, flags)) {
				psock_unlock();
				return -1;
			}
			from = fd + 1;
		} else {
			psock_epoll_closed(fd);
			psock_close(fd);
		}
	if (!cloexec && top < last)
		psock_epoll_closed_range(top + 1, last);
	psock_unlock();
	if (from > last || from < first)	/* the last one was ours */
		return 0;
	return syscall(SYS_close_range, from, last, flags);
}

API void closefrom(int lowfd)
{
	close_range(lowfd < 0 ? 0 : lowfd, ~0u, 0);
}

API int dup(int fd)
{
	int nfd = syscall(SYS_dup, fd);

	if (nfd >= 0 && psock_get(fd)) {
		psock_lock();
		psock_dup(fd, nfd);
		psock_unlock();
	}
	return nfd;
}

API int dup3(int fd, int nfd, int flags)
{
	int ret;

	if (fd == nfd) {	/* dup3 refuses it; dup2 does nothing */
		errno = EINVAL;
		return -1;
	}
	if (sys_fcntl(fd, F_GETFD, 0) < 0)
		return -1;	/* EBADF, and nfd stays open */
	psock_lock();
	psock_close(nfd);
	ret = syscall(SYS_dup3, fd, nfd, flags);
	if (ret >= 0)
		psock_dup(fd, nfd);
	psock_unlock();
	return ret;
}

API int dup2(int fd, int nfd)
{
	if (fd == nfd)
		return sys_fcntl(fd, F_GETFD, 0) < 0 ? -1 : fd;
	return dup3(fd, nfd, 0);
}

static int fcntl_any(int fd, int cmd, long arg)
{
	int ret = sys_fcntl(fd, cmd, arg);

	if (ret >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) &&
	    psock_get(fd)) {
		psock_lock();
		psock_dup(fd, ret);
		psock_unlock();
	}
	if (ret >= 0 && cmd == F_SETFL && psock_get(fd))
		psock_opts_changed(fd);
	return ret;
}

API int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return fcntl_any(fd, cmd, arg);
}

API int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return fcntl_any(fd, cmd, arg);
}

/* FIONREAD counts what the library holds; FIONBIO changes O_NONBLOCK,
 * which ours keep as the kernel said it */
API int ioctl(int fd, unsigned long req, ...)
{
	struct psock_conn *c;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == FIONREAD && arg && (c = ours(fd))) {
		ret = c->dgram ? -1 : psock_unread(fd, c);
		psock_unlock();
		if (ret >= 0) {
			*(int *)arg = ret;
			return 0;
		}
	}
	ret = syscall(SYS_ioctl, fd, req, arg);
	if (ret >= 0 && req == FIONBIO && psock_get(fd))
		psock_opts_changed(fd);
	return ret;
}

/* The keepalive options of one of ours on ports: the program's view
 * (alive.c). */
static bool alive_opt(int fd, bool set, int level, int name, void *val,
		      socklen_t *len, int *ret)
{
	struct psock_conn *c = psock_get(fd);

	if (!c || !psock_alive_option(level, name) || !(c = ours(fd)))
		return false;
	if (!psock_alive_sockopt(fd, c, set, level, name, val, len, ret))
		*ret = set ? syscall(SYS_setsockopt, fd, level, name, val,
				     *len) :
			     syscall(SYS_getsockopt, fd, level, name, val, len);
	unlocked(*ret);
	return true;
}

API int setsockopt(int fd, int level, int name, const void *val,
		   socklen_t len)
{
	int ret;

	if (alive_opt(fd, true, level, name, (void *)val, &len, &ret))
		return ret;
	ret = syscall(SYS_setsockopt, fd, level, name, val, len);
	if (!ret && level == SOL_SOCKET && psock_get(fd))
		psock_opts_changed(fd);
	return ret;
}

API int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	int ret;

	if (alive_opt(fd, false, level, name, val, len, &ret))
		return ret;
	return syscall(SYS_getsockopt, fd, level, name, val, len);
}

/* ---- readiness ---- */

static int timeout_of(const struct timespec *ts);

API int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct psock_conn *c = psock_get(fd);

	if ((!c || c->state == PSOCK_KERNEL) && !psock_epoll_any())
		return syscall(SYS_epoll_ctl, epfd, op, fd, ev);
	psock_lock();
	return unlocked(psock_epoll_ctl(epfd, op, fd, ev));
}

static bool epoll_ours(int epfd)
{
	bool has;

	if (!psock_epoll_any())
		return false;
	psock_lock();
	has = psock_epoll_has(epfd);
	psock_unlock();
	return has;
}

API int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout_ms)
{
	if (!epoll_ours(epfd))
		return syscall(SYS_epoll_wait, epfd, ev, max, timeout_ms);
	return psock_epoll_wait(epfd, ev, max, timeout_ms, NULL);
}

API int epoll_pwait(int epfd, struct epoll_event *ev, int max,
		    int timeout_ms, const sigset_t *mask)
{
	if (!epoll_ours(epfd))
		return syscall(SYS_epoll_pwait, epfd, ev, max, timeout_ms, mask,
			       _NSIG / 8);
	return psock_epoll_wait(epfd, ev, max, timeout_ms, mask);
}

API int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
		     const struct timespec *ts, const sigset_t *mask)
{
	if (!epoll_ours(epfd))
		return syscall(SYS_epoll_pwait2, epfd, ev, max, ts, mask,
			       _NSIG / 8);
	return psock_epoll_wait(epfd, ev, max, timeout_of(ts), mask);
}

static bool any_ours(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++) {
		struct psock_conn *c = psock_get(fds[i].fd);

		if (c && c->state != PSOCK_KERNEL)
			return true;
	}
	return false;
}

API int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	if (!any_ours(fds, n))
		return sys_poll(fds, n, timeout_ms);
	return psock_poll(fds, n, timeout_ms, NULL);
}

API int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t len)
{
	if (n > len / sizeof(*fds))
		__builtin_trap();
	return poll(fds, n, timeout_ms);
}

static int timeout_of(const struct timespec *ts)
{
	long long ms;

	if (!ts)
		return -1;
	ms = (long long)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
	return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
	      const sigset_t *mask)
{
	if (!any_ours(fds, n))
		return syscall(SYS_ppoll, fds, n, ts, mask, _NSIG / 8);
	return psock_poll(fds, n, timeout_of(ts), mask);
}

/* select() as poll(), over at most FD_SETSIZE descriptors */
static int select_ms(int nfds, fd_set *r, fd_set *w, fd_set *e,
		     int timeout_ms, const sigset_t *mask)
{
	struct pollfd fds[FD_SETSIZE];
	nfds_t n = 0;
	int ret, count = 0;

	if (nfds < 0 || nfds > FD_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	for (int fd = 0; fd < nfds; fd++) {
		short ev = (r && FD_ISSET(fd, r) ? POLLIN : 0) |
			   (w && FD_ISSET(fd, w) ? POLLOUT : 0) |
			   (e && FD_ISSET(fd, e) ? POLLPRI : 0);

		if (ev)
			fds[n++] = (struct pollfd){ .fd = fd, .events = ev };
	}
	ret = psock_poll(fds, n, timeout_ms, mask);
	if (ret < 0)
		return -1;
	for (nfds_t i = 0; i < n; i++) {
		int fd = fds[i].fd;
		short rev = fds[i].revents;

		if (rev & POLLNVAL) {
			errno = EBADF;
			return -1;
		}
		if (r && FD_ISSET(fd, r) &&
		    !(rev & (POLLIN | POLLHUP | POLLERR)))
			FD_CLR(fd, r);
		if (w && FD_ISSET(fd, w) && !(rev & (POLLOUT | POLLERR)))
			FD_CLR(fd, w);
		if (e && FD_ISSET(fd, e) && !(rev & POLLPRI))
			FD_CLR(fd, e);
		count += (r && FD_ISSET(fd, r)) + (w && FD_ISSET(fd, w)) +
			 (e && FD_ISSET(fd, e));
	}
	return count;
}

static bool set_has_ours(int nfds, fd_set *r, fd_set *w, fd_set *e)
{
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		struct psock_conn *c;

		if (!((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) ||
		      (e && FD_ISSET(fd, e))))
			continue;
		c = psock_get(fd);
		if (c && c->state != PSOCK_KERNEL)
			return true;
	}
	return false;
}

API int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	struct timespec ts, t0, t1;
	long long left;
	int ret, err;
	/* the clock only for a wait: a read of it costs (wait.c) */
	bool timed = tv && (tv->tv_sec || tv->tv_usec);

	if (!set_has_ours(nfds, r, w, e))
		return syscall(SYS_select, nfds, r, w, e, tv);
	if (tv) {
		ts.tv_sec = tv->tv_sec;
		ts.tv_nsec = tv->tv_usec * 1000;
	}
	if (timed)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = select_ms(nfds, r, w, e, timeout_of(tv ? &ts : NULL), NULL);
	err = errno;
	if (timed) {	/* Linux leaves the time not slept in *tv */
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = (long long)tv->tv_sec * 1000000 + tv->tv_usec -
		       ((t1.tv_sec - t0.tv_sec) * 1000000LL +
			(t1.tv_nsec - t0.tv_nsec) / 1000);
		if (left < 0 || ret == 0)	/* timed out: none left */
			left = 0;
		tv->tv_sec = left / 1000000;
		tv->tv_usec = left % 1000000;
	}
	errno = err;
	return ret;
}

API int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e,
		const struct timespec *ts, const sigset_t *mask)
{
	if (!set_has_ours(nfds, r, w, e)) {
		struct { const sigset_t *ss; size_t len; } m = { mask,
								 _NSIG / 8 };

		return syscall(SYS_pselect6, nfds, r, w, e, ts, &m);
	}
	return select_ms(nfds, r, w, e, timeout_of(ts), mask);
}
