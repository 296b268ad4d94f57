/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The system calls libps makes on its own descriptors, made directly.
 * libpsock.so carries libps and takes close(), fcntl(), the socket calls
 * and poll() by their libc names (docs/psock.md); libps, underneath it,
 * must not come back into those wrappers, which take the socket layer's
 * lock that the caller may hold already.
 */
#ifndef PS_SYS_H
#define PS_SYS_H

#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int ps_sys_close(int fd)
{
	return syscall(SYS_close, fd);
}

static inline int ps_sys_fcntl(int fd, int cmd, long arg)
{
	return syscall(SYS_fcntl, fd, cmd, arg);
}

static inline int ps_sys_socket(int domain, int type, int proto)
{
	return syscall(SYS_socket, domain, type, proto);
}

static inline int ps_sys_bind(int fd, const struct sockaddr *a, socklen_t len)
{
	return syscall(SYS_bind, fd, a, len);
}

static inline ssize_t ps_sys_sendto(int fd, const void *buf, size_t len,
				    int flags, const struct sockaddr *a,
				    socklen_t alen)
{
	return syscall(SYS_sendto, fd, buf, len, flags, a, alen);
}

static inline ssize_t ps_sys_recv(int fd, void *buf, size_t len, int flags)
{
	return syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
}

static inline int ps_sys_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	return syscall(SYS_poll, fds, n, timeout_ms);
}

#endif /* PS_SYS_H */
