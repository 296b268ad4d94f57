/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heat: the heat diffusion benchmark of the ParaStation paper (004,
 * section 5.4, Table 4) as an MPI program, checked against a sequential
 * run of the same plate (docs/apps.md).
 *
 *   mpirun [-n N] heat [-n SIZE] [-i ITERATIONS] [-c EVERY] [-t] [-F]
 *
 * A square metal plate of SIZE x SIZE points (default 256) starts at an
 * even temperature (50); its four sides are held at different
 * temperatures (100 top, 75 left, 25 right, 0 bottom). Each Jacobi
 * iteration (default 1000) sets every point to the average of its four
 * neighbours. The rows are distributed in blocks, and every iteration each
 * rank exchanges its first and last row with its neighbours. As in the
 * paper, rank 0 collects the whole plate every EVERY iterations (default
 * 20, 0: only at the end), which is where a visualisation would draw it.
 *
 * Rank 0 first runs the same iterations alone, on the whole plate. Every
 * point is computed by the same function from the same neighbours in
 * both runs, so the results must agree bit for bit: the final plate is
 * compared with memcmp, and each collected plate by a 64-bit FNV-1a hash
 * of its bytes. -t prints the time per iteration of both runs, the
 * speedup and the efficiency (Table 4's columns). -F makes the last rank
 * change one point by 1e-9 after the first iteration, which both checks
 * must catch (the tests use it to show they are not vacuous). Exit status
 * 0 only if both checks pass.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/check.h"
#include "common/clock.h"

#define T_START  50.0
#define T_TOP    100.0
#define T_LEFT   75.0
#define T_RIGHT  25.0
#define T_BOTTOM 0.0

/*
 * One row of a Jacobi step; the only place a temperature is computed, so
 * that the sequential and the parallel run do the same arithmetic.
 */
__attribute__((noinline))
static void relax_row(const double *up, const double *mid, const double *down,
		      double *out, int n)
{
	for (int j = 1; j <= n; j++)
		out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
}

/* rows rows of width n + 2 (the side columns), all at T_START */
static void init_rows(double *a, int rows, int n)
{
	for (int i = 0; i < rows; i++) {
		double *r = a + (size_t)i * (n + 2);
		r[0] = T_LEFT;
		for (int j = 1; j <= n; j++)
			r[j] = T_START;
		r[n + 1] = T_RIGHT;
	}
}

static void fill_row(double *r, int n, double t)
{
	for (int j = 0; j < n + 2; j++)
		r[j] = t;
}

static uint64_t fnv1a(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The sequential run: the final plate in *out, a hash per collection. */
static double *sequential(int n, int iters, int every, uint64_t *hashes,
			  double *secs)
{
	size_t w = n + 2, cells = w * (n + 2);
	double *a = malloc(cells * sizeof(double));
	double *b = malloc(cells * sizeof(double));

	if (!a || !b) {
		fprintf(stderr, "heat: out of memory for a %dx%d plate\n", n, n);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int q = 0; q < 2; q++) {
		double *p = q ? b : a;

		fill_row(p, n, T_TOP);
		init_rows(p + w, n, n);
		fill_row(p + (n + 1) * w, n, T_BOTTOM);
	}
	double t0 = now_s();
	int k = 0;
	for (int it = 1; it <= iters; it++) {
		for (int i = 1; i <= n; i++)
			relax_row(a + (i - 1) * w, a + i * w, a + (i + 1) * w,
				  b + i * w, n);
		double *t = a;
		a = b;
		b = t;
		if (every && it % every == 0)
			hashes[k++] = fnv1a(a + w, n * w * sizeof(double));
	}
	*secs = now_s() - t0;
	free(b);
	return a;
}

static void usage(void)
{
	fprintf(stderr, "usage: mpirun [-n N] heat [-n SIZE] [-i ITERATIONS] "
		"[-c EVERY] [-t] [-F]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int rank, size;
	int n = 256, iters = 1000, every = 20, timing = 0, flip = 0, c;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	while ((c = getopt(argc, argv, "n:i:c:tF")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'i': iters = atoi(optarg); break;
		case 'c': every = atoi(optarg); break;
		case 't': timing = 1; break;
		case 'F': flip = 1; break;
		default: usage();
		}
	}
	if (optind != argc || n < size || n > 16384 || iters < 1 || every < 0)
		usage();

	/* block distribution of the rows: the first n % size get one more */
	int base = n / size, extra = n % size;
	int rows = base + (rank < extra);
	int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	size_t w = n + 2;

	/* rank 0: the sequential reference, and where the plate is collected */
	int ncoll = every ? iters / every : 0;
	uint64_t *seq_hash = NULL;
	double *seq = NULL, *plate = NULL, seq_s = 0;
	int *counts = NULL, *displs = NULL;
	if (rank == 0) {
		seq_hash = calloc(ncoll + 1, sizeof(*seq_hash));
		seq = sequential(n, iters, every, seq_hash, &seq_s);
		plate = malloc(w * (n + 2) * sizeof(double));
		counts = malloc(size * sizeof(int));
		displs = malloc(size * sizeof(int));
		if (!seq_hash || !plate || !counts || !displs) {
			fprintf(stderr, "heat: out of memory\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		for (int r = 0, row = 1; r < size; r++) {
			int rr = base + (r < extra);
			counts[r] = rr * (int)w;
			displs[r] = row * (int)w;
			row += rr;
		}
	}

	/* my rows plus a ghost row above and below (the sides at the ends) */
	double *a = malloc((rows + 2) * w * sizeof(double));
	double *b = malloc((rows + 2) * w * sizeof(double));
	if (!a || !b) {
		fprintf(stderr, "heat: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int q = 0; q < 2; q++) {
		double *p = q ? b : a;

		fill_row(p, n, up == MPI_PROC_NULL ? T_TOP : T_START);
		init_rows(p + w, rows, n);
		fill_row(p + (rows + 1) * w, n,
			 down == MPI_PROC_NULL ? T_BOTTOM : T_START);
	}

	int bad_coll = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = now_s();
	for (int it = 1; it <= iters; it++) {
		/* first row up, last row down; the ghost rows come back */
		MPI_Sendrecv(a + w, (int)w, MPI_DOUBLE, up, 0,
			     a + (rows + 1) * w, (int)w, MPI_DOUBLE, down, 0,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Sendrecv(a + rows * w, (int)w, MPI_DOUBLE, down, 1,
			     a, (int)w, MPI_DOUBLE, up, 1,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (int i = 1; i <= rows; i++)
			relax_row(a + (i - 1) * w, a + i * w, a + (i + 1) * w,
				  b + i * w, n);
		double *t = a;
		a = b;
		b = t;
		if (flip && it == 1 && rank == size - 1)
			a[w + n / 2] += 1e-9;
		if ((every && it % every == 0) || it == iters) {
			MPI_Gatherv(a + w, rows * (int)w, MPI_DOUBLE, plate,
				    counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
			if (rank == 0 && every && it % every == 0)
				bad_coll += fnv1a(plate + w, n * w * sizeof(double)) !=
					    seq_hash[it / every - 1];
		}
	}
	double par_s = now_s() - t0;

	int rc = 0;
	if (rank == 0) {
		printf("heat: %dx%d plate, %d iterations, %d ranks, plate collected every %d\n",
		       n, n, iters, size, every);
		CHECK(!memcmp(plate + w, seq + w, n * w * sizeof(double)),
		      "plate after %d iterations equals the sequential run's, bit for bit",
		      iters);
		CHECK(bad_coll == 0,
		      "%d collected plates equal the sequential run's (FNV-1a), %d differ",
		      ncoll, bad_coll);
		double mid = plate[(n / 2 + 1) * w + n / 2 + 1];
		printf("     temperature at the centre: %.6f\n", mid);
		if (timing) {
			double pm = par_s * 1e3 / iters, sm = seq_s * 1e3 / iters;
			printf("heat timing: n=%d ranks=%d iterations=%d every=%d "
			       "ms_per_iter=%.3f seq_ms_per_iter=%.3f speedup=%.2f "
			       "efficiency=%.2f\n", n, size, iters, every, pm, sm,
			       sm / pm, sm / pm / size);
		}
		printf("heat: %s\n", fails ? "FAILED" : "ok");
		rc = fails != 0;
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(a);
	free(b);
	MPI_Finalize();
	return rc;
}
