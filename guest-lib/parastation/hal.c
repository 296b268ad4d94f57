/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HAL front end: picks the backend and checks arguments, so that every
 * backend gets the same, already validated calls and the same errnos.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ps_hal.h"
#include "ps_sys.h"

#define PS_HAL_STALL_MS_DEFAULT	20

static const struct ps_hal_ops *const backends[] = {
	&ps_hal_ps1_ops,
	&ps_hal_myri_ops,
};

ps_hal_t *ps_hal_open(int flags)
{
	const char *want = getenv("PS_HAL");
	const struct ps_hal_ops *ops = NULL;
	ps_hal_t *h;
	size_t i;
	int err;

	if ((flags & ~(PS_HAL_EXCL | PS_HAL_SHARED)) ||
	    flags == (PS_HAL_EXCL | PS_HAL_SHARED)) {
		errno = EINVAL;
		return NULL;
	}
	if (!want || !*want)
		want = "ps1";
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(backends[i]->name, want) == 0)
			ops = backends[i];
	if (!ops) {
		errno = ENODEV;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->ops = ops;
	h->stall_ms = getenv("PS_HAL_STALL_MS") ?
		      atoi(getenv("PS_HAL_STALL_MS")) : PS_HAL_STALL_MS_DEFAULT;
	if (ops->open(h, flags)) {
		err = errno;
		free(h);
		errno = err;
		return NULL;
	}
	if (h->mtu < 508 || h->mtu > PS_HAL_MTU_MAX || h->mtu % 4) {
		/* a backend bug: the upper layers' fragments rely on it */
		ops->close(h);
		free(h);
		errno = EPROTO;
		return NULL;
	}
	return h;
}

int ps_hal_stall(ps_hal_t *h, int ms)
{
	int old = h->stall_ms;

	h->stall_ms = ms < 0 ? 0 : ms;
	return old;
}

void ps_hal_close(ps_hal_t *h)
{
	if (!h)
		return;
	h->ops->close(h);
	free(h);
}

unsigned int ps_hal_node(const ps_hal_t *h)
{
	return h->node;
}

unsigned int ps_hal_nodes(const ps_hal_t *h)
{
	return h->nodes;
}

const char *ps_hal_name(const ps_hal_t *h)
{
	return h->ops->name;
}

long long ps_hal_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

size_t ps_hal_mtu(const ps_hal_t *h)
{
	return h->mtu;
}

int ps_hal_sendv(ps_hal_t *h, unsigned int dest, const struct iovec *iov,
		 int iovcnt)
{
	size_t len = 0;
	int i;

	if (!h || iovcnt < 0 || (iovcnt && !iov)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > h->mtu) {
			errno = EINVAL;
			return -1;
		}
		len += iov[i].iov_len;
	}
	if (len == 0 || len > h->mtu) {
		errno = EINVAL;
		return -1;
	}
	if (dest >= h->nodes) {
		errno = EHOSTUNREACH;
		return -1;
	}
	return h->ops->send(h, dest, iov, iovcnt, len);
}

int ps_hal_send(ps_hal_t *h, unsigned int dest, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return ps_hal_sendv(h, dest, &iov, 1);
}

int ps_hal_receive_header(ps_hal_t *h, unsigned int *src, size_t *len)
{
	if (!h || !src || !len) {
		errno = EINVAL;
		return -1;
	}
	return h->ops->receive_header(h, src, len);
}

int ps_hal_receive_body(ps_hal_t *h, void *buf, size_t len)
{
	if (!h || (len && !buf)) {
		errno = EINVAL;
		return -1;
	}
	return h->ops->receive_body(h, buf, len);
}

int ps_hal_stall_ms(const ps_hal_t *h)
{
	return h->stall_ms;
}

int ps_hal_status(ps_hal_t *h)
{
	return h->ops->status(h);
}

int ps_hal_wait(ps_hal_t *h, int events, int timeout_ms)
{
	if (!h || !events || (events & ~(PS_HAL_RX | PS_HAL_TX))) {
		errno = EINVAL;
		return -1;
	}
	return h->ops->wait(h, events, timeout_ms);
}

void *ps_hal_shared(ps_hal_t *h, size_t *size)
{
	return h->ops->shared(h, size);
}

int ps_hal_poll_fd(ps_hal_t *h)
{
	return h->ops->poll_fd(h);
}

int ps_hal_barrier_join(ps_hal_t *h, unsigned int line, int join)
{
	if (!h->ops->barrier_join) {
		errno = ENOTSUP;
		return -1;
	}
	if (line >= PS_HAL_BARRIER_LINES) {
		errno = EINVAL;
		return -1;
	}
	return h->ops->barrier_join(h, line, join);
}

int ps_hal_barrier(ps_hal_t *h, unsigned int line, int timeout_ms)
{
	if (!h->ops->barrier) {
		errno = ENOTSUP;
		return -1;
	}
	if (line >= PS_HAL_BARRIER_LINES) {
		errno = EINVAL;
		return -1;
	}
	return h->ops->barrier(h, line, timeout_ms);
}

int ps_hal_open_device(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), high;

	if (fd < 0) {
		if (errno == ENOENT || errno == ENXIO)
			errno = ENODEV;
		return -1;
	}
	/* no room up there (a low RLIMIT_NOFILE): the low one serves */
	high = ps_sys_fcntl(fd, F_DUPFD_CLOEXEC, PS_HAL_FD_MIN);
	if (high < 0)
		return fd;
	ps_sys_close(fd);
	return high;
}
