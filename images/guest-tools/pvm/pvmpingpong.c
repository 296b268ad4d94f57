/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pvmpingpong: PVM ping-pong latency and bandwidth between a task here
 * and one it spawns on another host (docs/apps.md; make bench-sockets).
 *
 *   pvmpingpong [-H HOST] [-D] [-t SECS] [SIZE[:ROUNDS]]...
 *
 * Run it in a virtual machine that is up (pvm HOSTFILE). It spawns
 * itself on HOST (default: the first host of the virtual machine that
 * is not this one), as "pvmpingpong --echo ROUTE", which echoes every
 * message back. For each SIZE (bytes, default 8 and 65536) the task here
 * packs SIZE bytes (pvm_initsend(PvmDataRaw), pvm_pkbyte), sends them,
 * receives the echo and unpacks it, ROUNDS times (default 500 up to 1 KiB,
 * 50 above) after a tenth as many untimed warm-up rounds; the echo
 * unpacks, packs and sends in the same way. Each round is timed on its
 * own, packing and unpacking included; filling and checking the data are
 * not timed, and every echo is compared with what was sent. Both tasks
 * ask for direct task-to-task TCP connections (PvmRouteDirect, as PVM's
 * own timing example does); -D keeps the default route through the two
 * pvmds (task - pvmd over a Unix socket, pvmd - pvmd over UDP).
 * -t: give up a receive after SECS seconds (default 30). Output, in the
 * format of tcpbench's ping-pong:
 *
 *   pvmpingpong: t40001 on node0, t80001 on node1, route direct
 *   pingpong size=S rounds=N latency_us=L min_us=M max_us=X MBps=B
 *
 * L is half the mean round trip, M and X half the shortest and longest,
 * B = S / L (bytes per microsecond = MB/s). Exit status: 0 if every echo
 * was right, 1 on a PVM error, a timeout or a wrong echo, 2 for bad
 * arguments.
 */
#define _GNU_SOURCE
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/pingpong.h"

#define TAG_HELLO 1
#define TAG_DATA 2
#define TAG_DONE 3

/* pvm_trecv with a timeout of secs: the buffer id, or 0 on a timeout or
 * an error (said on stderr). */
static int recv_from(int tid, int tag, int secs, const char *what)
{
	struct timeval tv = { .tv_sec = secs, .tv_usec = 0 };
	int id = pvm_trecv(tid, tag, &tv);

	if (id == 0)
		fprintf(stderr, "pvmpingpong: no %s from t%x in %d s\n", what, tid, secs);
	else if (id < 0)
		pvm_perror("pvmpingpong: pvm_trecv");
	return id > 0 ? id : 0;
}

/* The spawned task: echo until TAG_DONE, or until nothing comes for a
 * long while (the first task died). */
static int echo_task(const char *route)
{
	int parent = pvm_parent();
	char host[256] = "";
	unsigned char *buf = NULL;
	int cap = 0;

	if (parent < 0) {
		fprintf(stderr, "pvmpingpong --echo: no parent task\n");
		return 1;
	}
	if (!strcmp(route, "direct"))
		pvm_setopt(PvmRoute, PvmRouteDirect);
	gethostname(host, sizeof(host) - 1);
	pvm_initsend(PvmDataRaw);
	pvm_pkstr(host);
	pvm_send(parent, TAG_HELLO);
	for (;;) {
		struct timeval tv = { .tv_sec = 300, .tv_usec = 0 };
		int id = pvm_trecv(parent, -1, &tv), bytes, tag, src, len = 0;

		if (id <= 0)
			break;
		pvm_bufinfo(id, &bytes, &tag, &src);
		if (tag != TAG_DATA)
			break;
		if (pvm_upkint(&len, 1, 1) < 0 || len < 0 || len > (int)PINGPONG_MAX_BYTES)
			break;
		if (len > cap) {
			unsigned char *nb = realloc(buf, len);
			if (!nb)
				break;
			buf = nb;
			cap = len;
		}
		pvm_upkbyte((char *)buf, len, 1);
		pvm_initsend(PvmDataRaw);
		pvm_pkint(&len, 1, 1);
		pvm_pkbyte((char *)buf, len, 1);
		pvm_send(parent, TAG_DATA);
	}
	free(buf);
	pvm_exit();
	return 0;
}

/* One size: 0 if every echo was right. */
static int ping(int stid, const struct pingpong_point *p, int secs)
{
	int len = (int)p->size;
	unsigned char *out = malloc(len), *in = malloc(len);
	long warm = pingpong_warmup(p);
	struct pingpong_stats st = { 0 };
	int bad = 0;

	if (!out || !in) {
		fprintf(stderr, "pvmpingpong: no memory for %d bytes\n", len);
		free(out);
		free(in);
		return 1;
	}
	for (long k = -warm; k < p->rounds; k++) {
		int got = -1;

		for (int i = 0; i < len; i++)
			out[i] = pingpong_pattern(p->size, k, i);
		memset(in, 0, len);
		double t0 = now_us();
		pvm_initsend(PvmDataRaw);
		pvm_pkint(&len, 1, 1);
		pvm_pkbyte((char *)out, len, 1);
		if (pvm_send(stid, TAG_DATA) < 0) {
			pvm_perror("pvmpingpong: pvm_send");
			bad = 1;
			break;
		}
		if (!recv_from(stid, TAG_DATA, secs, "echo") ||
		    pvm_upkint(&got, 1, 1) < 0 || got != len ||
		    pvm_upkbyte((char *)in, len, 1) < 0) {
			fprintf(stderr, "pvmpingpong: FAIL: round %ld of %d bytes: no echo of that size\n",
				k, len);
			bad = 1;
			break;
		}
		double dt = now_us() - t0;
		if (memcmp(in, out, len)) {
			if (!bad)
				fprintf(stderr, "pvmpingpong: FAIL: the echo of round %ld (%d bytes) differs from what was sent\n",
					k, len);
			bad = 1;
		}
		if (k >= 0)
			pingpong_add(&st, dt);
	}
	if (!bad)
		pingpong_print(p, &st);
	free(out);
	free(in);
	return bad;
}

static void usage(void)
{
	fprintf(stderr, "usage: pvmpingpong [-H HOST] [-D] [-t SECS] [SIZE[:ROUNDS]]... (SIZE 1..%u bytes)\n",
		PINGPONG_MAX_BYTES);
}

int main(int argc, char **argv)
{
	struct pingpong_point pt[PINGPONG_MAX_SIZES];
	const char *host = NULL, *route = "direct";
	int n = 0, secs = 30, opt;

	if (argc == 3 && !strcmp(argv[1], "--echo"))
		return echo_task(argv[2]);
	while ((opt = getopt(argc, argv, "H:Dt:")) != -1) {
		switch (opt) {
		case 'H':
			host = optarg;
			break;
		case 'D':
			route = "daemon";
			break;
		case 't':
			secs = atoi(optarg);
			if (secs < 1) {
				usage();
				return 2;
			}
			break;
		default:
			usage();
			return 2;
		}
	}
	n = pingpong_points(argc - optind, argv + optind, pt);
	if (n < 0) {
		usage();
		return 2;
	}

	int mytid = pvm_mytid();
	if (mytid < 0) {
		fprintf(stderr, "pvmpingpong: no pvmd here (start the virtual machine first: pvm HOSTFILE)\n");
		return 1;
	}
	char here[256] = "";
	gethostname(here, sizeof(here) - 1);
	if (!host) {
		struct pvmhostinfo *hi;
		int nhost = 0, narch = 0, me = pvm_tidtohost(mytid);

		if (pvm_config(&nhost, &narch, &hi) >= 0)
			for (int i = 0; i < nhost && !host; i++)
				if (hi[i].hi_tid != me)
					host = hi[i].hi_name;
		if (!host) {
			fprintf(stderr, "pvmpingpong: the virtual machine has no other host (pvm HOSTFILE, or -H HOST)\n");
			pvm_exit();
			return 1;
		}
	}

	char *args[] = { "--echo", (char *)route, NULL };
	int stid = 0;
	if (pvm_spawn("pvmpingpong", args, PvmTaskHost, (char *)host, 1, &stid) != 1 ||
	    stid < 0) {
		fprintf(stderr, "pvmpingpong: cannot spawn pvmpingpong on %s (error %d)\n",
			host, stid);
		pvm_exit();
		return 1;
	}
	if (!strcmp(route, "direct"))
		pvm_setopt(PvmRoute, PvmRouteDirect);
	char there[256] = "?";
	if (!recv_from(stid, TAG_HELLO, secs, "hello")) {
		pvm_kill(stid);
		pvm_exit();
		return 1;
	}
	pvm_upkstr(there);
	printf("pvmpingpong: t%x on %s, t%x on %s, route %s\n", mytid, here,
	       stid, there, route);
	fflush(stdout);

	int bad = 0;
	for (int i = 0; i < n && !bad; i++)
		bad = ping(stid, &pt[i], secs);
	if (bad) {
		pvm_kill(stid);
	} else {
		pvm_initsend(PvmDataRaw);
		pvm_send(stid, TAG_DONE);
	}
	pvm_exit();
	return bad ? 1 : 0;
}
