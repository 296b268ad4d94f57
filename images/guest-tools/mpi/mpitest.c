/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mpitest: an MPI program that checks what it gets (docs/apps.md).
 *
 *   mpirun [-n N] mpitest [ROUNDS]
 *
 * A token around the ring (ROUNDS times, default 100), a ring shift of
 * messages from 1 byte to 1 MiB (eager and rendezvous in Open MPI's tcp
 * btl) with each byte checked, allreduce of integers and of doubles whose
 * sums are exact, broadcast, alltoall and barrier. Rank 0 prints one
 * "ok"/"FAIL" line per check, the ranks' hosts, and last
 * "mpitest: N ranks on H hosts: ok" (or "... FAILED"); the exit status is
 * 0 only if every rank passed every check.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/clock.h"

static int rank, size;

/* A check every rank makes; rank 0 prints it with how many ranks failed. */
static void all_check(int ok, const char *what)
{
	int bad = !ok, nbad = 0;

	MPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(nbad == 0, "%s (%d of %d ranks wrong)", what, nbad, size);
	else
		fails += nbad != 0;
}

/* The byte at offset i of a message from rank r in round k. */
static unsigned char pattern(int r, int k, size_t i)
{
	return (unsigned char)(r * 131 + k * 31 + i * 7 + (i >> 8));
}

static void ring_token(int rounds)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	long token = 0;

	/* each pass adds rank + 1 at every rank: N(N+1)/2 per round */
	for (int k = 0; k < rounds; k++) {
		if (rank == 0) {
			token += 1;
			MPI_Send(&token, 1, MPI_LONG, right, k, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_LONG, left, k, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&token, 1, MPI_LONG, left, k, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			token += rank + 1;
			MPI_Send(&token, 1, MPI_LONG, right, k, MPI_COMM_WORLD);
		}
	}
	MPI_Bcast(&token, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	char what[96];
	snprintf(what, sizeof(what), "token around the ring %d times: %ld",
		 rounds, token);
	all_check(token == (long)rounds * size * (size + 1) / 2, what);
}

static void ring_shift(size_t len, int k)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	unsigned char *out = malloc(len), *in = malloc(len);
	int ok = out && in;

	if (ok) {
		for (size_t i = 0; i < len; i++)
			out[i] = pattern(rank, k, i);
		memset(in, 0, len);
		MPI_Status st;
		MPI_Sendrecv(out, (int)len, MPI_BYTE, right, k, in, (int)len,
			     MPI_BYTE, left, k, MPI_COMM_WORLD, &st);
		int got = -1;
		MPI_Get_count(&st, MPI_BYTE, &got);
		ok = got == (int)len && st.MPI_SOURCE == left;
		for (size_t i = 0; ok && i < len; i++)
			ok = in[i] == pattern(left, k, i);
	}
	char what[96];
	snprintf(what, sizeof(what), "ring shift of %zu bytes, every byte checked", len);
	all_check(ok, what);
	free(out);
	free(in);
}

static void reductions(void)
{
	long v = rank + 1, sum = 0;
	MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	all_check(sum == (long)size * (size + 1) / 2, "allreduce sum of ranks + 1");

	int mx = -1, mn = -1;
	MPI_Allreduce(&rank, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(&rank, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	all_check(mx == size - 1 && mn == 0, "allreduce max and min of ranks");

	/* doubles that are small integers: every sum is exact, in any order */
	enum { N = 100000 };
	double *x = malloc(N * sizeof(*x)), *s = malloc(N * sizeof(*s));
	int ok = x && s;
	if (ok) {
		for (int i = 0; i < N; i++)
			x[i] = (double)(rank + 1) * (i % 1000);
		MPI_Allreduce(x, s, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double f = size * (size + 1) / 2.0;
		for (int i = 0; ok && i < N; i++)
			ok = s[i] == f * (i % 1000);
	}
	all_check(ok, "allreduce sum of 100000 doubles, exact");
	free(x);
	free(s);
}

static void collectives(void)
{
	char msg[64] = "";
	if (rank == 0)
		snprintf(msg, sizeof(msg), "broadcast from rank 0 of %d", size);
	MPI_Bcast(msg, sizeof(msg), MPI_CHAR, 0, MPI_COMM_WORLD);
	char want[64];
	snprintf(want, sizeof(want), "broadcast from rank 0 of %d", size);
	all_check(!strcmp(msg, want), "broadcast of a string");

	int *out = malloc(size * sizeof(int)), *in = malloc(size * sizeof(int));
	int ok = out && in;
	if (ok) {
		for (int i = 0; i < size; i++)
			out[i] = rank * 1000 + i;
		MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
		for (int i = 0; ok && i < size; i++)
			ok = in[i] == i * 1000 + rank;
	}
	all_check(ok, "alltoall: every rank's piece reaches its rank");
	free(out);
	free(in);

	double t0 = now_s();
	for (int i = 0; i < 100; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	double dt = now_s() - t0;
	if (rank == 0)
		printf("     100 barriers: %.1f us each\n", dt / 100 * 1e6);
	all_check(1, "100 barriers");
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	if (rounds < 1)
		rounds = 1;

	/* where the ranks run: rank 0 lists them, and counts the hosts */
	char host[MPI_MAX_PROCESSOR_NAME] = "";
	int len;
	MPI_Get_processor_name(host, &len);
	char *hosts = rank == 0 ? calloc(size, sizeof(host)) : NULL;
	MPI_Gather(host, sizeof(host), MPI_CHAR, hosts, sizeof(host), MPI_CHAR,
		   0, MPI_COMM_WORLD);
	int nhosts = 0;
	if (rank == 0) {
		for (int r = 0; r < size; r++) {
			const char *h = hosts + r * sizeof(host);
			int seen = 0;
			for (int q = 0; q < r && !seen; q++)
				seen = !strcmp(h, hosts + q * sizeof(host));
			nhosts += !seen;
			printf("     rank %d on %s\n", r, h);
		}
		free(hosts);
	}

	ring_token(rounds);
	static const size_t sizes[] = { 1, 1000, 65536, 1 << 20 };
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ring_shift(sizes[i], (int)i);
	reductions();
	collectives();

	int all = 0;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpitest: %d ranks on %d hosts: %s\n", size, nhosts,
		       all ? "FAILED" : "ok");
	MPI_Finalize();
	return all ? 1 : 0;
}
