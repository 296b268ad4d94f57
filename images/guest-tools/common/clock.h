/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guest programs' clock: monotonic, so that a measurement or a
 * deadline does not jump with the wall clock; and waiting for a file,
 * the way the test scripts say "go" to a program on another node.
 */
#ifndef VC_GUEST_CLOCK_H
#define VC_GUEST_CLOCK_H

#include <errno.h>
#include <time.h>
#include <unistd.h>

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double now_us(void)
{
	return now_s() * 1e6;
}

/*
 * Wait until path exists, looking every poll_ms, for at most until the
 * time end (of now_s(); INFINITY from <math.h>: for ever): 0, or
 * -ETIMEDOUT.
 */
static inline int wait_file(const char *path, double end,
			    unsigned int poll_ms)
{
	while (access(path, F_OK)) {
		if (now_s() > end)
			return -ETIMEDOUT;
		usleep(poll_ms * 1000);
	}
	return 0;
}

#endif /* VC_GUEST_CLOCK_H */
