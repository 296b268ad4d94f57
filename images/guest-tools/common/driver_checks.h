/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks the driver test tools (ps1test, myritest) share: bad mmaps and
 * ioctls fail with the errno they must, and the kernel log has no
 * warnings (their dmesg command).
 */
#ifndef VC_GUEST_DRIVER_CHECKS_H
#define VC_GUEST_DRIVER_CHECKS_H

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "common/check.h"
#include "common/kernel_log.h"

/* Either errno passes: the kernel may refuse some before the driver does. */
static inline void expect_mmap(int fd, const char *what, size_t len,
			       int prot, int flags, off_t off, int err1,
			       int err2)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);
	int err = errno;

	CHECK(p == MAP_FAILED && (err == err1 || err == err2),
	      "mmap %s fails (%s)", what,
	      p == MAP_FAILED ? strerror(err) : "mapped!");
	if (p != MAP_FAILED)
		munmap(p, len);
}

static inline void expect_ioctl(int fd, const char *what,
				unsigned long cmd, void *arg, int want)
{
	int ret = ioctl(fd, cmd, arg);
	int err = errno;

	CHECK(ret == -1 && err == want, "ioctl %s -> %s", what,
	      ret ? strerror(err) : "success!");
}

/* The failures so far, or 1 when the log cannot be read. */
static inline int check_kernel_log(void)
{
	int hits = kernel_log_warnings();

	if (hits < 0)
		return 1;
	CHECK(!hits, "kernel log: %d warning line(s)", hits);
	return fails;
}

#endif /* VC_GUEST_DRIVER_CHECKS_H */
