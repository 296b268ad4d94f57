/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the message-layer ping-pongs share (mpipingpong, pvmpingpong):
 * their SIZE[:ROUNDS] arguments, the data pattern that every echo is
 * checked against, the statistics over the timed rounds (tcpbench's too),
 * and the result line in tcpbench's format:
 *
 *   pingpong size=S rounds=N latency_us=L min_us=M max_us=X MBps=B
 *
 * L is half the mean round trip, M and X half the shortest and longest,
 * B = S / L (bytes per microsecond = MB/s).
 */
#ifndef VC_GUEST_PINGPONG_H
#define VC_GUEST_PINGPONG_H

#include <stdio.h>
#include <stdlib.h>

#define PINGPONG_MAX_SIZES	16
#define PINGPONG_MAX_BYTES	(64u << 20)

struct pingpong_point {
	unsigned long size;
	long rounds;
};

/* SIZE[:ROUNDS]; ROUNDS defaults to 500 up to 1 KiB, 50 above. */
static inline int pingpong_point(const char *arg, struct pingpong_point *p)
{
	char *end, *e2;
	unsigned long s = strtoul(arg, &end, 10);
	long r = -1;

	if (end == arg || s < 1 || s > PINGPONG_MAX_BYTES)
		return -1;
	if (*end == ':') {
		r = strtol(end + 1, &e2, 10);
		if (e2 == end + 1 || *e2 || r < 1)
			return -1;
	} else if (*end) {
		return -1;
	}
	p->size = s;
	p->rounds = r > 0 ? r : (s <= 1024 ? 500 : 50);
	return 0;
}

/* The points args[0..n-1] name, 8 and 65536 bytes if none: how many, or
 * -1 for a bad one or more than PINGPONG_MAX_SIZES. */
static inline int pingpong_points(int n, char **args,
				  struct pingpong_point *pt)
{
	if (n > PINGPONG_MAX_SIZES)
		return -1;
	for (int i = 0; i < n; i++)
		if (pingpong_point(args[i], &pt[i]) < 0)
			return -1;
	if (n > 0)
		return n;
	pt[0] = (struct pingpong_point){ 8, 500 };
	pt[1] = (struct pingpong_point){ 65536, 50 };
	return 2;
}

/* Untimed rounds before the timed ones: a tenth, at least one. */
static inline long pingpong_warmup(const struct pingpong_point *p)
{
	return p->rounds / 10 > 0 ? p->rounds / 10 : 1;
}

/* The byte at offset i of round k's message of this size. */
static inline unsigned char pingpong_pattern(unsigned long size, long k,
					     size_t i)
{
	return (unsigned char)(size * 13 + k * 31 + i * 7 + (i >> 8));
}

struct pingpong_stats {
	double sum, min, max;	/* round trips, us */
	long n;
};

static inline void pingpong_add(struct pingpong_stats *s, double rtt_us)
{
	if (!s->n || rtt_us < s->min)
		s->min = rtt_us;
	if (!s->n || rtt_us > s->max)
		s->max = rtt_us;
	s->sum += rtt_us;
	s->n++;
}

static inline void pingpong_print(const struct pingpong_point *p,
				  const struct pingpong_stats *s)
{
	double lat = s->n ? s->sum / s->n / 2 : 0;

	printf("pingpong size=%lu rounds=%ld latency_us=%.2f min_us=%.2f max_us=%.2f MBps=%.3f\n",
	       p->size, s->n, lat, s->min / 2, s->max / 2,
	       lat > 0 ? p->size / lat : 0);
	fflush(stdout);
}

#endif
