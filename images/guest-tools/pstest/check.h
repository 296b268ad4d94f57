/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What pstest and psstress share: one "ok ..." or "FAIL ..." line per
 * check (the cluster tests grep for them), and a monotonic clock.
 */
#ifndef PS_TOOLS_CHECK_H
#define PS_TOOLS_CHECK_H

#include <stdio.h>
#include <time.h>

static int fails;	/* failed checks; the exit status follows it */

#define CHECK(cond, ...)						\
	do {								\
		int _ok = !!(cond);	/* evaluated once */		\
		printf(_ok ? "ok   " : "FAIL ");			\
		fails += !_ok;						\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		fflush(stdout);						\
	} while (0)

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

#endif
