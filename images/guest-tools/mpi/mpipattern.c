/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mpipattern: the communication patterns of real MPI codes, each a timed
 * phase with a checked result (docs/apps.md).
 *
 *   mpirun -n N mpipattern [--phase NAME]... [--scale F] [--seed S]
 *                          [--deadline SECS] [--window N] [--fault] [--list]
 *
 * The phases (all by default, in this order; --phase picks some, in the
 * order given):
 *
 *   alltoall-any         many small messages from every rank to every
 *                        other, received with MPI_ANY_SOURCE and
 *                        MPI_ANY_TAG, completed by MPI_Test and
 *                        MPI_Testany loops with local work between
 *                        (HPCC's RandomAccess)
 *   ibarrier-iallreduce  MPI_Iallreduce, MPI_Ibcast and MPI_Ibarrier
 *                        overlapped with MPI_Test loops
 *   many-outstanding     a window of requests to the ring neighbours,
 *                        completed by MPI_Waitsome and MPI_Testsome and
 *                        refilled
 *   transpose            a distributed matrix transpose, blocks of
 *                        128 KiB per pair, by MPI_Alltoall and by
 *                        MPI_Sendrecv pairs
 *   mixed                8-byte and 256 KiB messages interleaved on each
 *                        connection, both directions at once
 *
 * Rank 0 prints one line per phase, then the verdict:
 *
 *   phase NAME ok seconds=S bytes=B msgs=M [KEY=VALUE]...
 *   phase NAME FAIL seconds=S bytes=B msgs=M errors=E [KEY=VALUE]...
 *   mpipattern: all phases ok     (or: mpipattern: FAIL: K of P phases failed)
 *
 * S is the longest time of any rank, B and M the payload bytes and the
 * messages (collective operations, for collectives) that all ranks sent.
 * A rank that finds something wrong prints "mpipattern: FAIL PHASE rank
 * R: ..." with what it expected and what it got. Exit status 0 if every
 * phase passed, 1 if one failed, 2 for bad arguments or fewer than 2
 * ranks; a rank whose wait loop goes past the deadline (default 300 s
 * after the phase began) says what it waits for and aborts the job.
 * --scale multiplies the message counts (and the transpose's matrix
 * size), --window sets alltoall-any's receives and sends in flight
 * (default 16; 1 is RandomAccess's own), --fault makes the last rank
 * flip a bit of the first data it gets in each phase, which every phase
 * must catch.
 */
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* each rank reports this many failures of a phase, then counts them only */
#define MAX_REPORTS 8

static struct {
	int rank, nranks;
	double scale;
	uint64_t seed;
	double deadline;	/* seconds a wait loop may take; 0: for ever */
	int fault;		/* --fault: the last rank spoils what it gets */
	int window;		/* --window: alltoall-any's requests each way */
	/* the phase running: its name, what this rank sent and found */
	const char *phase;
	long long bytes, msgs;
	long errors;
	int faulted;		/* --fault: done in this phase */
	double t_start, t_stop;	/* the timed part, on this rank */
	/* a phase's own figures (seconds, the longest of any rank) */
	int nextra;
	const char *extra_name[2];
	double extra[2];
} run;

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (run.errors++ >= MAX_REPORTS) {
		if (run.errors == MAX_REPORTS + 1)
			printf("mpipattern: FAIL %s rank %d: further failures counted, not shown\n",
			       run.phase, run.rank);
		return;
	}
	printf("mpipattern: FAIL %s rank %d: ", run.phase, run.rank);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "mpipattern: rank %d: no memory for %zu bytes\n", run.rank, len);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return p;
}

/*
 * --fault: the last rank flips a bit of the first data it gets in each
 * phase, before it checks them; every phase must then fail.
 */
static void spoil(void *p)
{
	if (run.fault && run.rank == run.nranks - 1 && !run.faulted) {
		*(unsigned char *)p ^= 1;
		run.faulted = 1;
	}
}

/* a count scaled by --scale, at least 1 */
static long scaled(long n)
{
	double v = n * run.scale;

	return v < 1 ? 1 : (long)v;
}

/* The timed part of a phase starts together on all ranks. */
static void timer_start(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
	run.t_start = MPI_Wtime();
}

static void timer_stop(void)
{
	run.t_stop = MPI_Wtime();
}

/* A wait loop that has run past the deadline: say where, end the job. */
static void check_deadline(const char *what, long left)
{
	if (run.deadline <= 0 || MPI_Wtime() - run.t_start < run.deadline)
		return;
	printf("mpipattern: FAIL %s rank %d: after %.0f s still waiting for %ld %s; aborting\n",
	       run.phase, run.rank, run.deadline, left, what);
	fflush(stdout);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* --- data patterns: every byte follows from the seed and where it goes --- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* the key of one message or block: phase, two ranks or indices, a number */
static uint64_t key(int phase, long a, long b, long c)
{
	return mix(mix(mix(mix(run.seed ^ (uint64_t)phase) ^ (uint64_t)a) ^ (uint64_t)b) ^ (uint64_t)c);
}

/* byte i of the pattern with key k: 8 bytes a word, a word a mix */
static unsigned char pat_byte(uint64_t k, size_t i)
{
	return (unsigned char)(mix(k + (i >> 3)) >> (8 * (i & 7)));
}

/* bytes from..len of a message with key k */
static void pat_fill(unsigned char *p, size_t from, size_t len, uint64_t k)
{
	uint64_t w = mix(k + (from >> 3));

	for (size_t i = from; i < len; i++) {
		if (!(i & 7))
			w = mix(k + (i >> 3));
		p[i] = (unsigned char)(w >> (8 * (i & 7)));
	}
}

/* the first byte from..len that differs from the pattern, or len */
static size_t pat_diff(const unsigned char *p, size_t from, size_t len, uint64_t k)
{
	uint64_t w = mix(k + (from >> 3));

	for (size_t i = from; i < len; i++) {
		if (!(i & 7))
			w = mix(k + (i >> 3));
		if (p[i] != (unsigned char)(w >> (8 * (i & 7))))
			return i;
	}
	return len;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Local work between two tests, as a code that overlaps communication
 * with computation does: RandomAccess's updates of a table.
 */
#define WORK_TABLE 4096
static uint64_t work_table[WORK_TABLE];
static uint64_t work_ran = 1;

static void work(int updates)
{
	for (int i = 0; i < updates; i++) {
		work_ran = (work_ran << 1) ^ ((int64_t)work_ran < 0 ? 7 : 0);
		work_table[work_ran & (WORK_TABLE - 1)] ^= work_ran;
	}
}

static int left_of(int r)
{
	return (r + run.nranks - 1) % run.nranks;
}

static int right_of(int r)
{
	return (r + 1) % run.nranks;
}

/* --- alltoall-any ------------------------------------------------------------ */

/*
 * Every rank sends A2A_PER messages to every other rank, to destinations
 * in random order, each 8 to 64 bytes: sequence number, source and
 * destination, then the pattern. --window receives from any source
 * with any tag stay posted and are reposted as they complete; as many
 * sends may be under way. Messages from one source must fill the
 * receives in the order they were posted (MPI's non-overtaking rule).
 */
#define A2A_PER 1000
#define A2A_WINDOW 16	/* default of --window */
#define A2A_WINDOW_MAX 1024
#define A2A_MIN 8
#define A2A_MAX 64
#define A2A_WORK 64
enum { PH_A2A = 1, PH_COLL, PH_MANY, PH_TRANSPOSE, PH_MIXED };

static size_t a2a_len(int src, int dst, long seq)
{
	return A2A_MIN + key(PH_A2A, src, dst, seq) % (A2A_MAX - A2A_MIN + 1);
}

/* one message as it arrived in the receive posted as number post */
static void a2a_check(const unsigned char *m, const MPI_Status *st, long post,
		      long per, long *postno)
{
	int count, src = st->MPI_SOURCE, me = run.rank;

	MPI_Get_count(st, MPI_BYTE, &count);
	if (count < A2A_MIN) {
		fail("receive %ld: %d bytes from rank %d, expected at least %d", post, count, src, A2A_MIN);
		return;
	}
	long seq = get32(m);
	int hsrc = m[4] | m[5] << 8, hdst = m[6] | m[7] << 8;
	if (hsrc != src || hdst != me || seq >= per) {
		fail("receive %ld from rank %d: header says message %ld from rank %d to rank %d, expected from %d to %d below %ld",
		     post, src, seq, hsrc, hdst, src, me, per);
		return;
	}
	if (st->MPI_TAG != (int)(seq & 0x7fff))
		fail("message %ld from rank %d: tag %d, expected %ld", seq, src, st->MPI_TAG, seq & 0x7fff);
	size_t len = a2a_len(src, me, seq);
	if ((size_t)count != len)
		fail("message %ld from rank %d: %d bytes, expected %zu", seq, src, count, len);
	else {
		uint64_t k = key(PH_A2A, src, me, seq);
		size_t i = pat_diff(m, 8, len, k);
		if (i < len)
			fail("message %ld from rank %d: byte %zu is 0x%02x, expected 0x%02x",
			     seq, src, i, m[i], pat_byte(k, i));
	}
	long *at = &postno[(long)src * per + seq];
	if (*at >= 0)
		fail("message %ld from rank %d came twice (receives %ld and %ld)", seq, src, *at, post);
	else
		*at = post;
}

static void phase_alltoall_any(void)
{
	int n = run.nranks, me = run.rank;
	long per = scaled(A2A_PER), expect = per * (n - 1);
	long *sent = xmalloc(n * sizeof(*sent));
	long *postno = xmalloc((size_t)n * per * sizeof(*postno));
	int win = run.window;
	unsigned char (*sbuf)[A2A_MAX] = xmalloc(win * sizeof(*sbuf));
	unsigned char (*rbuf)[A2A_MAX] = xmalloc(win * sizeof(*rbuf));
	MPI_Request *sreq = xmalloc(win * sizeof(*sreq)), *rreq = xmalloc(win * sizeof(*rreq));
	long *rpost = xmalloc(win * sizeof(*rpost));
	long to_send = expect, posted = 0, received = 0, busy_sends = 0;
	uint64_t ran = key(PH_A2A, me, -1, -1);

	memset(sent, 0, n * sizeof(*sent));
	for (long i = 0; i < (long)n * per; i++)
		postno[i] = -1;
	for (int s = 0; s < win; s++)
		sreq[s] = rreq[s] = MPI_REQUEST_NULL;

	timer_start();
	for (int s = 0; s < win && posted < expect; s++, posted++) {
		rpost[s] = posted;
		MPI_Irecv(rbuf[s], A2A_MAX, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
			  MPI_COMM_WORLD, &rreq[s]);
	}
	while (received < expect || busy_sends) {
		/* each send slot: test it, and when it is free, send the next */
		for (int s = 0; s < win; s++) {
			int done = 1;

			if (sreq[s] != MPI_REQUEST_NULL) {
				MPI_Test(&sreq[s], &done, MPI_STATUS_IGNORE);
				if (!done)
					continue;
				busy_sends--;
			}
			if (!to_send)
				continue;
			ran = mix(ran);
			int d = (int)(ran % (uint64_t)(n - 1));
			d += d >= me;
			while (sent[d] == per)
				d = (d + 1) % n == me ? (d + 2) % n : (d + 1) % n;
			long seq = sent[d]++;
			size_t len = a2a_len(me, d, seq);
			unsigned char *m = sbuf[s];
			put32(m, (uint32_t)seq);
			m[4] = me & 0xff, m[5] = me >> 8 & 0xff;
			m[6] = d & 0xff, m[7] = d >> 8 & 0xff;
			pat_fill(m, 8, len, key(PH_A2A, me, d, seq));
			MPI_Isend(m, (int)len, MPI_BYTE, d, (int)(seq & 0x7fff),
				  MPI_COMM_WORLD, &sreq[s]);
			to_send--, busy_sends++;
			run.msgs++, run.bytes += len;
		}
		int idx, flag;
		MPI_Status st;
		MPI_Testany(win, rreq, &idx, &flag, &st);
		if (flag && idx != MPI_UNDEFINED) {
			spoil(rbuf[idx]);
			a2a_check(rbuf[idx], &st, rpost[idx], per, postno);
			received++;
			if (posted < expect) {
				rpost[idx] = posted++;
				MPI_Irecv(rbuf[idx], A2A_MAX, MPI_BYTE, MPI_ANY_SOURCE,
					  MPI_ANY_TAG, MPI_COMM_WORLD, &rreq[idx]);
			}
		}
		work(A2A_WORK);
		check_deadline("messages and sends", expect - received + busy_sends);
	}
	timer_stop();

	/* every message came once, each source's in the order of the receives */
	for (int src = 0; src < n; src++) {
		long prev = -1;

		for (long seq = 0; src != me && seq < per; seq++) {
			long at = postno[(long)src * per + seq];
			if (at < 0)
				fail("message %ld from rank %d never came", seq, src);
			else if (at < prev)
				fail("message %ld from rank %d filled receive %ld, before message %ld's receive %ld",
				     seq, src, at, seq - 1, prev);
			prev = at > prev ? at : prev;
		}
	}
	free(sent);
	free(postno);
	free(sbuf);
	free(rbuf);
	free(sreq);
	free(rreq);
	free(rpost);
}

/* --- ibarrier-iallreduce ------------------------------------------------------- */

/*
 * Each round starts an MPI_Iallreduce of one integer and one of
 * COLL_LONGS, an MPI_Ibcast of COLL_BCAST bytes from a root that moves
 * round by round and an MPI_Ibarrier, then tests them in turn with local
 * work between until all are done. The sums are of integers, so they are
 * exact: value i of rank r in round k is base(r, i) + k * (r + 1).
 */
#define COLL_ROUNDS 40
#define COLL_LONGS 4096
#define COLL_BCAST 16384
#define COLL_WORK 64

static int64_t coll_base(int r, int i)
{
	return (int64_t)(key(PH_COLL, r, i, 0) >> 24);	/* < 2^40: no overflow */
}

static void phase_ibarrier_iallreduce(void)
{
	int n = run.nranks, me = run.rank;
	long rounds = scaled(COLL_ROUNDS);
	int64_t *in = xmalloc(COLL_LONGS * sizeof(*in)), *out = xmalloc(COLL_LONGS * sizeof(*out));
	int64_t *sum = xmalloc(COLL_LONGS * sizeof(*sum));
	unsigned char *bc = xmalloc(COLL_BCAST);
	int64_t all_ranks = (int64_t)n * (n + 1) / 2;	/* sum of r + 1 */

	for (int i = 0; i < COLL_LONGS; i++) {
		sum[i] = 0;
		for (int r = 0; r < n; r++)
			sum[i] += coll_base(r, i);
	}

	timer_start();
	for (long k = 0; k < rounds; k++) {
		int root = (int)(k % n);
		int64_t one = me + k, one_sum = 0;
		MPI_Request req[4];

		for (int i = 0; i < COLL_LONGS; i++)
			in[i] = coll_base(me, i) + k * (me + 1);
		if (me == root)
			pat_fill(bc, 0, COLL_BCAST, key(PH_COLL, root, k, 1));
		else
			memset(bc, 0, COLL_BCAST);
		MPI_Iallreduce(&one, &one_sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &req[0]);
		MPI_Iallreduce(in, out, COLL_LONGS, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &req[1]);
		MPI_Ibcast(bc, COLL_BCAST, MPI_BYTE, root, MPI_COMM_WORLD, &req[2]);
		MPI_Ibarrier(MPI_COMM_WORLD, &req[3]);
		run.msgs += 4;
		run.bytes += sizeof(one) + COLL_LONGS * sizeof(*in) + (me == root ? COLL_BCAST : 0);
		for (int left = 4; left;) {
			left = 0;
			for (int j = 0; j < 4; j++) {
				int done;

				MPI_Test(&req[j], &done, MPI_STATUS_IGNORE);
				left += !done;
			}
			work(COLL_WORK);
			if (left)
				check_deadline("of this round's collectives", left);
		}
		spoil(out);
		int64_t want = (int64_t)n * (n - 1) / 2 + n * k;
		if (one_sum != want)
			fail("round %ld: MPI_Iallreduce of one integer gave %lld, expected %lld",
			     k, (long long)one_sum, (long long)want);
		for (int i = 0; i < COLL_LONGS; i++) {
			int64_t w = sum[i] + k * all_ranks;
			if (out[i] != w) {
				fail("round %ld: MPI_Iallreduce of %d integers: element %d is %lld, expected %lld",
				     k, COLL_LONGS, i, (long long)out[i], (long long)w);
				break;
			}
		}
		uint64_t kb = key(PH_COLL, root, k, 1);
		size_t i = pat_diff(bc, 0, COLL_BCAST, kb);
		if (i < COLL_BCAST)
			fail("round %ld: MPI_Ibcast from rank %d: byte %zu is 0x%02x, expected 0x%02x",
			     k, root, i, bc[i], pat_byte(kb, i));
	}
	timer_stop();
	free(in);
	free(out);
	free(sum);
	free(bc);
}

/* --- many-outstanding ---------------------------------------------------------- */

/*
 * MANY_WINDOW requests stay outstanding on each rank: a quarter receives
 * from the left neighbour (tag 0, messages going right), a quarter from
 * the right one (tag 1, going left), and as many sends each way. A
 * request that completes (MPI_Testsome, every fourth time MPI_Waitsome)
 * is refilled with the next message of its kind until MANY_PER have gone
 * each way. Each message is 8 to MANY_MAX bytes: sequence number,
 * source, direction, pattern. The receives of one kind are posted in
 * sequence order, so each must get the message of its own number.
 */
#define MANY_PER 1000
#define MANY_WINDOW 128
#define MANY_MAX 1024
#define MANY_WORK 64
enum many_kind { RECV_FROM_LEFT, RECV_FROM_RIGHT, SEND_TO_RIGHT, SEND_TO_LEFT, MANY_KINDS };

static size_t many_len(int src, int dir, long seq)
{
	return 8 + key(PH_MANY, src, dir, seq) % (MANY_MAX - 8 + 1);
}

static void many_check(const unsigned char *m, const MPI_Status *st, int dir, long seq)
{
	int count, src = dir ? right_of(run.rank) : left_of(run.rank);
	const char *from = dir ? "right" : "left";

	MPI_Get_count(st, MPI_BYTE, &count);
	size_t len = many_len(src, dir, seq);
	if (st->MPI_SOURCE != src || (size_t)count != len) {
		fail("receive %ld from the %s: %d bytes from rank %d, expected %zu from rank %d",
		     seq, from, count, st->MPI_SOURCE, len, src);
		return;
	}
	long hseq = get32(m);
	int hsrc = m[4] | m[5] << 8, hdir = m[6] | m[7] << 8;
	if (hseq != seq || hsrc != src || hdir != dir) {
		fail("receive %ld from the %s: message %ld from rank %d, direction %d; expected message %ld from rank %d, direction %d",
		     seq, from, hseq, hsrc, hdir, seq, src, dir);
		return;
	}
	uint64_t k = key(PH_MANY, src, dir, seq);
	size_t i = pat_diff(m, 8, len, k);
	if (i < len)
		fail("message %ld from the %s (rank %d): byte %zu is 0x%02x, expected 0x%02x",
		     seq, from, src, i, m[i], pat_byte(k, i));
}

/* The window: each slot's request, buffer and the number of its message. */
struct many_window {
	MPI_Request req[MANY_WINDOW];
	unsigned char buf[MANY_WINDOW][MANY_MAX];
	long seq[MANY_WINDOW];
	long next[MANY_KINDS], per;
};

static enum many_kind many_kind_of(int slot)
{
	return slot / (MANY_WINDOW / MANY_KINDS);
}

/* Slot s starts its kind's next message: 1, or 0 when they have all gone. */
static int many_post(struct many_window *w, int s)
{
	int me = run.rank;
	enum many_kind kind = many_kind_of(s);

	if (w->next[kind] == w->per)
		return 0;
	long seq = w->seq[s] = w->next[kind]++;
	int dir = kind == RECV_FROM_RIGHT || kind == SEND_TO_LEFT;
	int peer = kind == RECV_FROM_LEFT || kind == SEND_TO_LEFT ? left_of(me) : right_of(me);
	unsigned char *m = w->buf[s];
	if (kind == RECV_FROM_LEFT || kind == RECV_FROM_RIGHT) {
		MPI_Irecv(m, MANY_MAX, MPI_BYTE, peer, dir, MPI_COMM_WORLD, &w->req[s]);
		return 1;
	}
	size_t len = many_len(me, dir, seq);
	put32(m, (uint32_t)seq);
	m[4] = me & 0xff, m[5] = me >> 8 & 0xff;
	m[6] = dir, m[7] = 0;
	pat_fill(m, 8, len, key(PH_MANY, me, dir, seq));
	MPI_Isend(m, (int)len, MPI_BYTE, peer, dir, MPI_COMM_WORLD, &w->req[s]);
	run.msgs++, run.bytes += len;
	return 1;
}

static void phase_many_outstanding(void)
{
	struct many_window *w = xmalloc(sizeof(*w));
	MPI_Status st[MANY_WINDOW];
	int idx[MANY_WINDOW];
	long active = 0, completed = 0;

	memset(w->next, 0, sizeof(w->next));
	w->per = scaled(MANY_PER);
	for (int s = 0; s < MANY_WINDOW; s++)
		w->req[s] = MPI_REQUEST_NULL;

	timer_start();
	for (int s = 0; s < MANY_WINDOW; s++)
		active += many_post(w, s);
	for (long iter = 0; active; iter++) {
		int got;

		if (iter % 4 == 3)
			MPI_Waitsome(MANY_WINDOW, w->req, &got, idx, st);
		else
			MPI_Testsome(MANY_WINDOW, w->req, &got, idx, st);
		if (got == MPI_UNDEFINED)
			break;
		if (!got) {
			work(MANY_WORK);
			check_deadline("requests", active);
		}
		for (int j = 0; j < got; j++) {
			int s = idx[j];
			enum many_kind kind = many_kind_of(s);

			active--, completed++;
			if (kind == RECV_FROM_LEFT || kind == RECV_FROM_RIGHT) {
				spoil(w->buf[s]);
				many_check(w->buf[s], &st[j], kind == RECV_FROM_RIGHT, w->seq[s]);
			}
			active += many_post(w, s);
		}
	}
	timer_stop();
	if (completed != MANY_KINDS * w->per)
		fail("%ld requests completed, expected %ld", completed, MANY_KINDS * w->per);
	free(w);
}

/* --- transpose ----------------------------------------------------------------- */

/*
 * An (N * b) x (N * b) matrix of 8-byte integers, b = TR_BLOCK, rank r
 * holding rows r * b to r * b + b - 1. To transpose it each rank sends
 * block q of its rows (columns q * b ...) to rank q, b * b elements
 * (128 KiB), and transposes the blocks it gets: TR_REPS times by
 * MPI_Alltoall, then TR_REPS times by N - 1 MPI_Sendrecv, rank r + s
 * getting its block while rank r - s's comes in. Every element of the
 * result is checked; a repetition's matrix differs from the last's.
 */
#define TR_BLOCK 128
#define TR_REPS 2

static uint64_t tr_elem(uint64_t k, long row, long col, long cols)
{
	return mix(k + (uint64_t)(row * cols + col));
}

static void phase_transpose(void)
{
	int n = run.nranks, me = run.rank;
	long b = lround(TR_BLOCK * sqrt(run.scale));
	if (b < 1)
		b = 1;
	long cols = n * b, bb = b * b;
	size_t bytes = (size_t)b * cols * sizeof(uint64_t);
	uint64_t *a = xmalloc(bytes), *out = xmalloc(bytes), *in = xmalloc(bytes), *t = xmalloc(bytes);
	double comm[2] = { 0, 0 };

	timer_start();
	for (int rep = 0; rep < 2 * TR_REPS; rep++) {
		int by_sendrecv = rep >= TR_REPS;
		uint64_t k = key(PH_TRANSPOSE, rep, 0, 0);

		for (long i = 0; i < b; i++)
			for (long j = 0; j < cols; j++)
				a[i * cols + j] = tr_elem(k, me * b + i, j, cols);
		for (int q = 0; q < n; q++)
			for (long i = 0; i < b; i++)
				memcpy(&out[q * bb + i * b], &a[i * cols + q * b], b * sizeof(*a));
		memset(in, 0, bytes);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		if (!by_sendrecv) {
			MPI_Alltoall(out, (int)bb, MPI_UINT64_T, in, (int)bb, MPI_UINT64_T, MPI_COMM_WORLD);
			run.msgs++;
		} else {
			memcpy(&in[me * bb], &out[me * bb], bb * sizeof(*in));
			for (int s = 1; s < n; s++) {
				int to = (me + s) % n, from = (me + n - s) % n;
				MPI_Sendrecv(&out[to * bb], (int)bb, MPI_UINT64_T, to, s,
					     &in[from * bb], (int)bb, MPI_UINT64_T, from, s,
					     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
			run.msgs += n - 1;
		}
		comm[by_sendrecv] += MPI_Wtime() - t0;
		run.bytes += (n - 1) * bb * sizeof(*out);
		spoil(&in[(me + 1) % n * bb]);
		/* block p holds rows p * b ... of our columns: transpose each */
		for (int p = 0; p < n; p++)
			for (long i = 0; i < b; i++)
				for (long j = 0; j < b; j++)
					t[j * cols + p * b + i] = in[p * bb + i * b + j];
		long bad = 0;
		for (long i = 0; i < b; i++)
			for (long j = 0; j < cols; j++) {
				uint64_t want = tr_elem(k, j, me * b + i, cols);
				if (t[i * cols + j] != want && bad++ < 2)
					fail("%s %d: element (%ld, %ld) is 0x%016llx, expected 0x%016llx",
					     by_sendrecv ? "MPI_Sendrecv" : "MPI_Alltoall", rep % TR_REPS,
					     me * b + i, j, (unsigned long long)t[i * cols + j],
					     (unsigned long long)want);
			}
		if (bad > 2)
			fail("%s %d: %ld elements wrong in all", by_sendrecv ? "MPI_Sendrecv" : "MPI_Alltoall",
			     rep % TR_REPS, bad);
	}
	timer_stop();
	run.nextra = 2;
	run.extra_name[0] = "alltoall_seconds", run.extra[0] = comm[0];
	run.extra_name[1] = "sendrecv_seconds", run.extra[1] = comm[1];
	free(a);
	free(out);
	free(in);
	free(t);
}

/* --- mixed --------------------------------------------------------------------- */

/*
 * Each rank sends MIX_SHORT messages of 8 bytes and MIX_BULK of
 * MIX_BULK_BYTES to each ring neighbour, the bulk ones spread evenly
 * among the short ones, while the neighbours send theirs back: every
 * connection carries both sizes in both directions at once. All
 * receives are posted first, then all sends, and MPI_Testsome completes
 * them. Tags: 2 * direction + (bulk), direction 0 going right. Within a
 * tag the receives are posted in order, so each must get the message of
 * its own number: a short one its number and a check word, a bulk one
 * its number, source and direction, then the pattern.
 */
#define MIX_SHORT 400
#define MIX_BULK 4
#define MIX_BULK_BYTES (256 * 1024)
#define MIX_WORK 64

/* where request i of a direction's sequence goes: a bulk one, or short */
static int mix_is_bulk(long i, long shorts, long bulks)
{
	long total = shorts + bulks;

	return i * bulks / total != (i + 1) * bulks / total;
}

static void mix_fill_short(unsigned char *m, int src, int dir, long seq)
{
	put32(m, (uint32_t)seq);
	put32(m + 4, (uint32_t)key(PH_MIXED, src, 2 * dir, seq));
}

static void mix_fill_bulk(unsigned char *m, int src, int dir, long seq)
{
	put32(m, (uint32_t)seq);
	m[4] = src & 0xff, m[5] = src >> 8 & 0xff;
	m[6] = dir, m[7] = 0;
	pat_fill(m, 8, MIX_BULK_BYTES, key(PH_MIXED, src, 2 * dir + 1, seq));
}

/* a receive completed: the message of number seq, bulk or short, of dir */
static void mix_check(const unsigned char *m, const MPI_Status *st, int dir, int bulk, long seq)
{
	int src = dir ? right_of(run.rank) : left_of(run.rank), count;
	unsigned char want[8];
	const char *what = bulk ? "bulk" : "short";
	size_t len = bulk ? MIX_BULK_BYTES : 8;

	MPI_Get_count(st, MPI_BYTE, &count);
	if (st->MPI_SOURCE != src || (size_t)count != len) {
		fail("%s receive %ld of tag %d: %d bytes from rank %d, expected %zu from rank %d",
		     what, seq, 2 * dir + bulk, count, st->MPI_SOURCE, len, src);
		return;
	}
	if (!bulk) {
		mix_fill_short(want, src, dir, seq);
		if (memcmp(m, want, 8))
			fail("short receive %ld of tag %d from rank %d: got message %u (check 0x%08x), expected %ld (0x%08x)",
			     seq, 2 * dir, src, get32(m), get32(m + 4), seq, get32(want + 4));
		return;
	}
	long hseq = get32(m);
	int hsrc = m[4] | m[5] << 8, hdir = m[6] | m[7] << 8;
	if (hseq != seq || hsrc != src || hdir != dir) {
		fail("bulk receive %ld of tag %d: message %ld from rank %d, direction %d; expected message %ld from rank %d, direction %d",
		     seq, 2 * dir + 1, hseq, hsrc, hdir, seq, src, dir);
		return;
	}
	uint64_t k = key(PH_MIXED, src, 2 * dir + 1, seq);
	size_t i = pat_diff(m, 8, len, k);
	if (i < len)
		fail("bulk message %ld of tag %d from rank %d: byte %zu is 0x%02x, expected 0x%02x",
		     seq, 2 * dir + 1, src, i, m[i], pat_byte(k, i));
}

static void phase_mixed(void)
{
	int me = run.rank;
	long shorts = scaled(MIX_SHORT), bulks = scaled(MIX_BULK), per = shorts + bulks;
	long nreq = 4 * per;	/* receives, then sends; each direction's in order */
	MPI_Request *req = xmalloc(nreq * sizeof(*req));
	MPI_Status *st = xmalloc(nreq * sizeof(*st));
	int *idx = xmalloc(nreq * sizeof(*idx));
	long *seq = xmalloc(nreq * sizeof(*seq));
	unsigned char *small = xmalloc(nreq * 8);
	unsigned char *big = xmalloc((size_t)4 * bulks * MIX_BULK_BYTES);
	unsigned char **buf = xmalloc(nreq * sizeof(*buf));

	/* request (send * 2 + dir) * per + i: the i-th of its direction */
	for (int send = 0; send < 2; send++)
		for (int dir = 0; dir < 2; dir++) {
			long ns = 0, nb = 0;

			for (long i = 0; i < per; i++) {
				long r = (send * 2 + dir) * per + i;
				int bulk = mix_is_bulk(i, shorts, bulks);
				seq[r] = bulk ? nb++ : ns++;
				buf[r] = bulk ? big + ((size_t)(send * 2 + dir) * bulks + seq[r]) * MIX_BULK_BYTES
					      : small + r * 8;
				if (!send)
					continue;
				if (bulk)
					mix_fill_bulk(buf[r], me, dir, seq[r]);
				else
					mix_fill_short(buf[r], me, dir, seq[r]);
			}
		}

	timer_start();
	for (int dir = 0; dir < 2; dir++)
		for (long i = 0; i < per; i++) {
			long r = dir * per + i;
			int bulk = mix_is_bulk(i, shorts, bulks);
			MPI_Irecv(buf[r], bulk ? MIX_BULK_BYTES : 8, MPI_BYTE,
				  dir ? right_of(me) : left_of(me), 2 * dir + bulk, MPI_COMM_WORLD, &req[r]);
		}
	for (long i = 0; i < per; i++)
		for (int dir = 0; dir < 2; dir++) {
			long r = (2 + dir) * per + i;
			int bulk = mix_is_bulk(i, shorts, bulks);
			MPI_Isend(buf[r], bulk ? MIX_BULK_BYTES : 8, MPI_BYTE,
				  dir ? left_of(me) : right_of(me), 2 * dir + bulk, MPI_COMM_WORLD, &req[r]);
			run.msgs++, run.bytes += bulk ? MIX_BULK_BYTES : 8;
		}
	for (long left = nreq; left;) {
		int got;

		MPI_Testsome((int)nreq, req, &got, idx, st);
		if (got == MPI_UNDEFINED)
			break;
		if (!got) {
			work(MIX_WORK);
			check_deadline("requests", left);
		}
		for (int j = 0; j < got; j++) {
			long r = idx[j];
			left--;
			if (r >= 2 * per)
				continue;
			spoil(buf[r]);
			mix_check(buf[r], &st[j], (int)(r / per), mix_is_bulk(r % per, shorts, bulks), seq[r]);
		}
	}
	timer_stop();
	free(req);
	free(st);
	free(idx);
	free(seq);
	free(small);
	free(big);
	free(buf);
}

/* --- the program --------------------------------------------------------------- */

static const struct phase {
	const char *name;
	void (*run)(void);
} phases[] = {
	{ "alltoall-any", phase_alltoall_any },
	{ "ibarrier-iallreduce", phase_ibarrier_iallreduce },
	{ "many-outstanding", phase_many_outstanding },
	{ "transpose", phase_transpose },
	{ "mixed", phase_mixed },
};
#define NPHASES (int)(sizeof(phases) / sizeof(phases[0]))

/* One phase on all ranks, its line from rank 0: 0 if it passed. */
static int run_phase(const struct phase *p)
{
	double dt, worst, extra[2];
	long long mine[3], all[3];

	run.phase = p->name;
	run.bytes = run.msgs = run.errors = 0;
	run.faulted = 0;
	run.nextra = 0;
	p->run();
	dt = run.t_stop - run.t_start;
	mine[0] = run.bytes, mine[1] = run.msgs, mine[2] = run.errors;
	MPI_Reduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(run.extra, extra, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (run.rank == 0) {
		printf("phase %s %s seconds=%.3f bytes=%lld msgs=%lld", p->name, all[2] ? "FAIL" : "ok",
		       worst, all[0], all[1]);
		if (all[2])
			printf(" errors=%lld", all[2]);
		for (int i = 0; i < run.nextra; i++)
			printf(" %s=%.3f", run.extra_name[i], extra[i]);
		printf("\n");
		fflush(stdout);
	}
	return all[2] != 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mpirun -n N mpipattern [--phase NAME]... [--scale F] [--seed S] [--deadline SECS]\n"
		"                  [--window N] [--fault] [--list]\n"
		"  (N >= 2; phases:");
	for (int i = 0; i < NPHASES; i++)
		fprintf(f, " %s", phases[i].name);
	fprintf(f, ")\n");
}

/* the host count: rank 0 gathers every rank's processor name */
static int count_hosts(void)
{
	char name[MPI_MAX_PROCESSOR_NAME] = "", *all = NULL;
	int len, hosts = 0;

	MPI_Get_processor_name(name, &len);
	if (run.rank == 0)
		all = xmalloc((size_t)run.nranks * MPI_MAX_PROCESSOR_NAME);
	MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
		   0, MPI_COMM_WORLD);
	for (int i = 0; run.rank == 0 && i < run.nranks; i++) {
		int j = 0;

		while (j < i && strcmp(all + (size_t)j * MPI_MAX_PROCESSOR_NAME,
				       all + (size_t)i * MPI_MAX_PROCESSOR_NAME))
			j++;
		hosts += j == i;
	}
	free(all);
	return hosts;
}

/* the options; -1 to go on, else the exit status */
static int parse(int argc, char **argv, int *pick, int *npick)
{
	static const struct option opts[] = {
		{ "phase", required_argument, NULL, 'p' },
		{ "scale", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ "deadline", required_argument, NULL, 'd' },
		{ "fault", no_argument, NULL, 'f' },
		{ "window", required_argument, NULL, 'w' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	FILE *err = run.rank == 0 ? stderr : NULL;
	int c;
	char *end;

	opterr = run.rank == 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			int i = 0;

			while (i < NPHASES && strcmp(optarg, phases[i].name))
				i++;
			if (i == NPHASES || *npick == 64) {
				if (err)
					fprintf(err, "mpipattern: %s: no such phase (or too many)\n", optarg);
				return 2;
			}
			pick[(*npick)++] = i;
			break;
		}
		case 's':
			run.scale = strtod(optarg, &end);
			if (*end || !(run.scale > 0) || run.scale > 1e6) {
				if (err)
					fprintf(err, "mpipattern: --scale %s: not a number above 0\n", optarg);
				return 2;
			}
			break;
		case 'r':
			run.seed = strtoull(optarg, &end, 0);
			if (*end || !*optarg) {
				if (err)
					fprintf(err, "mpipattern: --seed %s: not a number\n", optarg);
				return 2;
			}
			break;
		case 'd':
			run.deadline = strtod(optarg, &end);
			if (*end || !(run.deadline >= 0)) {
				if (err)
					fprintf(err, "mpipattern: --deadline %s: not a number of seconds\n", optarg);
				return 2;
			}
			break;
		case 'f':
			run.fault = 1;
			break;
		case 'w': {
			long w = strtol(optarg, &end, 10);

			if (*end || w < 1 || w > A2A_WINDOW_MAX) {
				if (err)
					fprintf(err, "mpipattern: --window %s: not a number from 1 to %d\n",
						optarg, A2A_WINDOW_MAX);
				return 2;
			}
			run.window = (int)w;
			break;
		}
		case 'l':
			for (int i = 0; run.rank == 0 && i < NPHASES; i++)
				printf("%s\n", phases[i].name);
			return 0;
		case 'h':
			if (err)
				usage(stdout);
			return 0;
		default:
			if (err)
				usage(err);
			return 2;
		}
	}
	if (optind < argc) {
		if (err)
			fprintf(err, "mpipattern: %s: unexpected argument\n", argv[optind]);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	int pick[64], npick = 0, failed = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &run.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &run.nranks);
	run.scale = 1;
	run.seed = 1;
	run.deadline = 300;
	run.window = A2A_WINDOW;
	int rc = parse(argc, argv, pick, &npick);
	if (rc < 0 && run.nranks < 2) {
		if (run.rank == 0)
			usage(stderr);
		rc = 2;
	}
	if (rc >= 0) {
		MPI_Finalize();
		return rc;
	}
	if (!npick)
		for (; npick < NPHASES; npick++)
			pick[npick] = npick;
	work_ran = key(0, run.rank, 0, 0) | 1;

	int hosts = count_hosts();
	if (run.rank == 0) {
		printf("mpipattern: %d ranks on %d host%s, scale %g, seed %llu, window %d\n", run.nranks,
		       hosts, hosts == 1 ? "" : "s", run.scale, (unsigned long long)run.seed, run.window);
		fflush(stdout);
	}
	for (int i = 0; i < npick; i++)
		failed += run_phase(&phases[pick[i]]);
	if (run.rank == 0) {
		if (failed)
			printf("mpipattern: FAIL: %d of %d phases failed\n", failed, npick);
		else
			printf("mpipattern: all phases ok\n");
		fflush(stdout);
	}
	MPI_Finalize();
	return failed ? 1 : 0;
}
