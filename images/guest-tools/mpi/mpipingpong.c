/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mpipingpong: MPI ping-pong latency and bandwidth between ranks 0 and 1
 * (docs/apps.md; make bench-sockets).
 *
 *   mpirun -n 2 mpipingpong [SIZE[:ROUNDS]]...
 *
 * For each SIZE (bytes, default 8 and 65536) rank 0 sends SIZE bytes to
 * rank 1 with MPI_Send, rank 1 takes them in with MPI_Recv and sends them
 * back, ROUNDS times (default 500 up to 1 KiB, 50 above), after a tenth
 * as many untimed warm-up rounds. Each round is timed on its own from
 * the send to the end of the receive; filling and checking the data are
 * not timed, and every echo is compared with what was sent. Rank 0
 * prints where the two ranks run and one line per size, in the format of
 * tcpbench's ping-pong:
 *
 *   mpipingpong: rank 0 on node0, rank 1 on node1
 *   pingpong size=S rounds=N latency_us=L min_us=M max_us=X MBps=B
 *
 * L is half the mean round trip, M and X half the shortest and longest,
 * B = S / L (bytes per microsecond = MB/s). Further ranks only wait. The
 * exit status is 0 if every echo was right, 1 otherwise, 2 for bad
 * arguments or fewer than 2 ranks.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/pingpong.h"

/* Rank 0: one size; 0 if every echo was right. */
static int ping(const struct pingpong_point *p)
{
	size_t len = p->size;
	unsigned char *out = malloc(len), *in = malloc(len);
	long warm = pingpong_warmup(p);
	struct pingpong_stats st = { 0 };
	int bad = !out || !in;
	int go = !bad;

	/* rank 1 must know whether to echo: it waits for this */
	MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
	if (!go) {
		fprintf(stderr, "mpipingpong: no memory for %zu bytes\n", len);
		free(out);
		free(in);
		return 1;
	}
	for (long k = -warm; k < p->rounds; k++) {
		for (size_t i = 0; i < len; i++)
			out[i] = pingpong_pattern(p->size, k, i);
		memset(in, 0, len);
		double t0 = now_us();
		MPI_Send(out, (int)len, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
		MPI_Recv(in, (int)len, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		double dt = now_us() - t0;
		if (memcmp(in, out, len)) {
			if (!bad)
				fprintf(stderr, "mpipingpong: FAIL: the echo of round %ld (%zu bytes) differs from what was sent\n",
					k, len);
			bad = 1;
		}
		if (k >= 0)
			pingpong_add(&st, dt);
	}
	pingpong_print(p, &st);
	free(out);
	free(in);
	return bad;
}

/* Rank 1: the echo of one size. */
static void echo(const struct pingpong_point *p)
{
	size_t len = p->size;
	long warm = pingpong_warmup(p);
	int go = 0;

	MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (!go)
		return;
	unsigned char *buf = malloc(len);
	if (!buf) {
		fprintf(stderr, "mpipingpong: rank 1: no memory for %zu bytes\n", len);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (long k = -warm; k < p->rounds; k++) {
		MPI_Recv(buf, (int)len, MPI_BYTE, 0, 2, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Send(buf, (int)len, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
	}
	free(buf);
}

int main(int argc, char **argv)
{
	struct pingpong_point pt[PINGPONG_MAX_SIZES];
	int rank, nranks;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	int n = pingpong_points(argc - 1, argv + 1, pt);
	if (n < 0 || nranks < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -n 2 mpipingpong [SIZE[:ROUNDS]]... (SIZE 1..%u bytes; %d ranks given)\n",
				PINGPONG_MAX_BYTES, nranks);
		MPI_Finalize();
		return 2;
	}

	char host[MPI_MAX_PROCESSOR_NAME] = "", other[MPI_MAX_PROCESSOR_NAME] = "";
	int len;
	MPI_Get_processor_name(host, &len);
	if (rank == 1)
		MPI_Send(host, sizeof(host), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_Recv(other, sizeof(other), MPI_CHAR, 1, 0, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		printf("mpipingpong: rank 0 on %s, rank 1 on %s\n", host, other);
		fflush(stdout);
	}

	int bad = 0;
	for (int i = 0; i < n; i++) {
		if (rank == 0)
			bad |= ping(&pt[i]);
		else if (rank == 1)
			echo(&pt[i]);
	}
	MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return bad ? 1 : 0;
}
