/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pstest: tests and benchmarks of the ParaStation library (libps.a).
 *
 *   pstest hal-pingpong PEER ROUNDS SIZE    against hal-echo on PEER
 *   pstest hal-echo ROUNDS [TIMEOUT_MS [SIZE]]
 *   pstest raw-pingpong PEER ROUNDS SIZE    against raw-echo on PEER
 *   pstest raw-echo ROUNDS [TIMEOUT_MS]
 *   pstest raw-exchange PEER SPEC...        send to PEER and receive from it
 *   pstest raw-send PEER SPEC...            only send
 *   pstest raw-recv SRC...                  receive from each SRC in turn
 *   pstest raw-busy                         a second rawdata user: EBUSY
 *   pstest bad                              bad input: expected errnos
 *   pstest port-pingpong PEER PORT ROUNDS SIZE   against port-echo PORT
 *   pstest port-echo PORT ROUNDS [TIMEOUT_MS [SIZE]]
 *   pstest port-multi PEER NPROC ROUNDS SIZE     NPROC processes, ports
 *   pstest port-echo-multi NPROC ROUNDS          10.. on both nodes
 *   pstest port-busy                        port taken, rawdata excluded
 *   pstest port-bad                         bad input: expected errnos
 *   pstest barrier-loop LINE COUNT          COUNT hardware barriers on all
 *                                           nodes; mean us per barrier
 *   pstest hal-pairwise PEER ROUNDS SIZE    pairwise exchange: the same
 *   pstest raw-pairwise PEER ROUNDS SIZE    command on both nodes at once
 *   pstest port-pairwise PEER PORT ROUNDS SIZE
 *
 * SPEC is a message size in bytes, or rN: N random sizes up to 64 KiB.
 *
 * Ping-pongs: a message of SIZE bytes goes to the echo, which sends it
 * back; the result is half the round trip.  Above the layer's largest
 * unit (ps_hal_mtu() for hal-, PS_PORT_MSG_MAX for port-) a message is a
 * burst: SIZE bytes as back-to-back packets (messages) of the largest
 * size, the last one holding the rest.  The echo, given the same SIZE,
 * takes in the whole burst and only then sends it back the same way.
 * Only the send and the receive are timed: filling the message and
 * checking the echo are not.  A burst is filled once; each round stamps
 * the round number into the first 4 bytes of each of its units.
 * Pairwise exchanges (the paper's benchmark, section 5.1): after a
 * handshake, each round both nodes send SIZE bytes, then both receive the
 * peer's SIZE bytes; the result is the time per exchange, half of it and
 * 2 SIZE / time (both directions).  See "pairwise exchange" below.
 * A stream starts with a 4-byte message count; message seq of node src
 * carries seq in its first 4 bytes, a pattern, and a checksum of the
 * middle in its last 4, so content and order are both checked.
 * One line per result ("ok ..." / "FAIL ..."); exit 0 = all ok, 1 = a
 * failed check, 2 = usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/args.h"
#include "common/check.h"
#include "common/clock.h"
#include "ps_hal.h"
#include "ps_ports.h"
#include "ps_rawdata.h"
#include "pattern.h"

#define MAX_MSG		65536
#define STREAM_TIMEOUT	30000

static int hal_spin = 20;	/* polls before sleeping; $PS_HAL_SPIN */

/*
 * Ping-pongs time all but their first tenth: the first rounds meet an
 * echo that is still starting and caches that are cold.
 */
static int warm_rounds(int rounds)
{
	return rounds >= 20 ? rounds / 10 : 0;
}

/* Fill message seq of src: seq, pattern, checksum (when it fits). */
static void fill(uint8_t *b, size_t n, unsigned int src, uint32_t seq)
{
	size_t i;
	uint32_t c;

	for (i = 0; i < n; i++)
		b[i] = pat(src, seq, i);
	if (n >= 8) {
		memcpy(b, &seq, 4);
		c = fnv(b + 4, n - 8);
		memcpy(b + n - 4, &c, 4);
	}
}

/*
 * Round seq of a burst of units of at most unit bytes: filled once (round
 * 0), then each unit's first bytes stamped with seq, so that a stale echo
 * cannot pass.  Filling 1 MiB takes about 20 ms in a TCG guest: done every
 * round, it would leave the echo waiting long enough to fall asleep.
 */
static void fill_burst(uint8_t *b, size_t n, size_t unit, unsigned int src,
		       uint32_t seq)
{
	size_t off;

	if (!seq)
		fill(b, n, src, 0);
	for (off = 0; off < n; off += unit)
		memcpy(b + off, &seq, n - off < 4 ? n - off : 4);
}

static int verify(const uint8_t *b, size_t n, unsigned int src, uint32_t seq)
{
	uint32_t v, c;
	size_t i;

	if (n >= 8) {
		memcpy(&v, b, 4);
		memcpy(&c, b + n - 4, 4);
		if (v != seq || c != fnv(b + 4, n - 8))
			return 0;
		for (i = 4; i < n - 4; i++)
			if (b[i] != pat(src, seq, i))
				return 0;
		return 1;
	}
	for (i = 0; i < n; i++)
		if (b[i] != pat(src, seq, i))
			return 0;
	return 1;
}

/* ---- HAL ---- */

static ps_hal_t *hal_open_or_die(void)
{
	ps_hal_t *h = ps_hal_open(0);

	if (!h) {
		printf("FAIL ps_hal_open: %s\n", strerror(errno));
		exit(1);
	}
	return h;
}

static int hal_send_wait(ps_hal_t *h, unsigned int dest, const void *b,
			 size_t n)
{
	while (ps_hal_send(h, dest, b, n)) {
		if (errno != EAGAIN || ps_hal_wait(h, PS_HAL_TX, 5000) <= 0)
			return -1;
	}
	return 0;
}

/* Next packet, sleeping up to timeout_ms; returns its length or -1. */
static ssize_t hal_recv_wait(ps_hal_t *h, unsigned int *src, void *b,
			     int timeout_ms)
{
	size_t len;
	int ret = 0, i;

	for (;;) {
		/* a short poll, then sleep: the reply is often close */
		for (i = 0; i < hal_spin; i++) {
			ret = ps_hal_receive_header(h, src, &len);
			if (ret)
				break;
		}
		if (ret < 0)
			return -1;
		if (ret > 0)
			return ps_hal_receive_body(h, b, len) ? -1 : (ssize_t)len;
		ret = ps_hal_wait(h, PS_HAL_RX, timeout_ms);
		if (ret <= 0) {
			if (ret == 0)
				errno = ETIMEDOUT;
			return -1;
		}
	}
}

/* A packet of n bytes for a unit of want: exact, or padded to 4 (ps1). */
static int hal_len_ok(size_t n, size_t want)
{
	return n == want || n == (want + 3) / 4 * 4;
}

/*
 * A message of size bytes to dest: one packet, or above the MTU a burst
 * of MTU-sized packets, the last one holding the rest.
 */
static int hal_send_msg(ps_hal_t *h, unsigned int dest, const uint8_t *b,
			size_t size)
{
	size_t mtu = ps_hal_mtu(h), off, n;

	for (off = 0; off < size; off += n) {
		n = size - off < mtu ? size - off : mtu;
		if (hal_send_wait(h, dest, b + off, n))
			return -1;
	}
	return 0;
}

/*
 * Receive a message of size bytes as hal_send_msg cut it, into b (room
 * for size + PS_HAL_MTU_MAX bytes: a packet may be longer than asked).
 * *src is the first packet's source; *bad counts packets of the wrong
 * length or from another source.  0, or -1 with errno.
 */
static int hal_recv_msg(ps_hal_t *h, unsigned int *src, uint8_t *b,
			size_t size, int timeout_ms, int *bad)
{
	size_t mtu = ps_hal_mtu(h), off, want;
	unsigned int s;
	ssize_t n;

	for (off = 0; off < size; off += want) {
		want = size - off < mtu ? size - off : mtu;
		n = hal_recv_wait(h, &s, b + off, timeout_ms);
		if (n < 0)
			return -1;
		if (!off)
			*src = s;
		*bad += s != *src || !hal_len_ok(n, want);
	}
	return 0;
}

static int cmd_hal_pingpong(unsigned int peer, int rounds, size_t size)
{
	ps_hal_t *h = hal_open_or_die();
	size_t mtu = ps_hal_mtu(h), pkts = (size + mtu - 1) / mtu;
	uint8_t *out = malloc(size + PS_HAL_MTU_MAX);
	uint8_t *in = malloc(size + PS_HAL_MTU_MAX);
	unsigned int src;
	double t0, t = 0;
	int r, bad = 0, nbad;

	if (size == 0 || size > (size_t)256 << 20 || !out || !in) {
		printf("FAIL size must be 1..%zu, or a burst up to 256 MiB\n", mtu);
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		if (r == warm_rounds(rounds))
			t = 0;
		if (pkts > 1)
			fill_burst(out, size, mtu, ps_hal_node(h), r);
		else
			fill(out, size, ps_hal_node(h), r);
		nbad = 0;
		t0 = now_us();
		if (hal_send_msg(h, peer, out, size)) {
			printf("FAIL send round %d: %s\n", r, strerror(errno));
			return 1;
		}
		if (hal_recv_msg(h, &src, in, size, 5000, &nbad)) {
			printf("FAIL receive round %d: %s\n", r, strerror(errno));
			return 1;
		}
		t += now_us() - t0;
		bad += nbad || src != peer || memcmp(in, out, size);
	}
	if (pkts <= 1)
		CHECK(!bad, "hal-pingpong node %u <-> %u: %d rounds of %zu bytes, %d bad, half round trip %.1f us",
		      ps_hal_node(h), peer, rounds, size, bad,
		      t / (rounds - warm_rounds(rounds)) / 2);
	else
		CHECK(!bad, "hal-pingpong node %u <-> %u: %d rounds of %zu bytes, %d bad, half round trip %.1f us, %.2f MB/s, bursts of %zu packets of <= %zu bytes",
		      ps_hal_node(h), peer, rounds, size, bad,
		      t / (rounds - warm_rounds(rounds)) / 2,
		      2.0 * size * (rounds - warm_rounds(rounds)) / t,
		      pkts, mtu);
	ps_hal_close(h);
	free(out);
	free(in);
	return fails;
}

/*
 * Echo ROUNDS messages.  size 0: packet by packet, each sent back as it
 * came.  Otherwise messages of size bytes (bursts above the MTU): the
 * whole message first, then back the same way.
 */
static int cmd_hal_echo(int rounds, int timeout_ms, size_t size)
{
	ps_hal_t *h = hal_open_or_die();
	size_t mtu = ps_hal_mtu(h);
	uint8_t *b = malloc(size + PS_HAL_MTU_MAX);
	unsigned int src;
	ssize_t n;
	int r, bad = 0;

	if (size > (size_t)256 << 20 || !b) {
		printf("FAIL hal-echo: bad size %zu\n", size);
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		if (!size) {
			n = hal_recv_wait(h, &src, b, timeout_ms);
			if (n >= 0 && !hal_send_wait(h, src, b, n))
				continue;
		} else if (!hal_recv_msg(h, &src, b, size, timeout_ms, &bad) &&
			   !hal_send_msg(h, src, b, size))
			continue;
		printf("FAIL hal-echo round %d: %s\n", r, strerror(errno));
		return 1;
	}
	if (!size)
		CHECK(1, "hal-echo: %d packets echoed", rounds);
	else
		CHECK(!bad, "hal-echo: %d messages of %zu bytes (%zu packets each) echoed, %d packets bad",
		      rounds, size, (size + mtu - 1) / mtu, bad);
	ps_hal_close(h);
	free(b);
	return fails;
}

/*
 * Every node of the network: join LINE, meet over HAL packets (so that all
 * have joined before the first barrier), a few untimed barriers, then
 * COUNT timed ones.
 */
#define BAR_RDY		0x52445921u
#define BAR_GO		0x474f2121u

static int cmd_barrier_loop(unsigned int line, int count)
{
	ps_hal_t *h = hal_open_or_die();
	unsigned int me = ps_hal_node(h), nodes = ps_hal_nodes(h), src, i;
	uint32_t b[PS_HAL_MTU_MAX / 4], tok;
	double t0, t;
	int r;

	if (line >= PS_HAL_BARRIER_LINES || count <= 0) {
		printf("FAIL barrier-loop: LINE 0..%d, COUNT > 0\n",
		       PS_HAL_BARRIER_LINES - 1);
		return 1;
	}
	if (ps_hal_barrier_join(h, line, 1)) {
		printf("FAIL barrier join line %u: %s\n", line, strerror(errno));
		return 1;
	}
	/* rendezvous: everyone tells node 0, node 0 says go */
	if (me == 0) {
		for (i = 1; i < nodes;) {
			if (hal_recv_wait(h, &src, b, 60000) < 0) {
				printf("FAIL barrier rendezvous: %u of %u nodes: %s\n",
				       i, nodes, strerror(errno));
				return 1;
			}
			i += b[0] == BAR_RDY;
		}
		tok = BAR_GO;
		for (i = 1; i < nodes; i++)
			if (hal_send_wait(h, i, &tok, 4)) {
				printf("FAIL barrier go to %u: %s\n", i,
				       strerror(errno));
				return 1;
			}
	} else {
		tok = BAR_RDY;
		if (hal_send_wait(h, 0, &tok, 4)) {
			printf("FAIL barrier ready: %s\n", strerror(errno));
			return 1;
		}
		do {
			if (hal_recv_wait(h, &src, b, 60000) < 0) {
				printf("FAIL barrier rendezvous: no go: %s\n",
				       strerror(errno));
				return 1;
			}
		} while (b[0] != BAR_GO);
	}
	for (r = 0; r < 3; r++)
		if (ps_hal_barrier(h, line, 10000)) {
			printf("FAIL warm-up barrier %d: %s\n", r,
			       strerror(errno));
			return 1;
		}
	t0 = now_us();
	for (r = 0; r < count; r++)
		if (ps_hal_barrier(h, line, 10000)) {
			printf("FAIL barrier %d: %s\n", r, strerror(errno));
			return 1;
		}
	t = now_us() - t0;
	CHECK(1, "barrier-loop node %u line %u: %d barriers of %u nodes, %.2f us per barrier",
	      me, line, count, nodes, t / count);
	ps_hal_close(h);
	return fails;
}

/* ---- rawdata ---- */

static ps_raw_t *raw_open_or_die(void)
{
	ps_raw_t *r = ps_raw_open();

	if (!r) {
		printf("FAIL ps_raw_open: %s\n", strerror(errno));
		exit(1);
	}
	return r;
}

static int cmd_raw_pingpong(unsigned int peer, int rounds, size_t size)
{
	ps_raw_t *r = raw_open_or_die();
	uint8_t *out = malloc(size + 1), *in = malloc(size + 1);
	unsigned int src;
	double t0, t = 0;
	ssize_t n;
	int i, bad = 0;

	for (i = 0; i < rounds; i++) {
		if (i == warm_rounds(rounds))
			t = 0;
		fill(out, size, ps_raw_node(r), i);
		t0 = now_us();
		if (ps_raw_send(r, peer, out, size)) {
			printf("FAIL send round %d: %s\n", i, strerror(errno));
			return 1;
		}
		n = ps_raw_recv(r, peer, &src, in, size, 5000);
		if (n < 0) {
			printf("FAIL receive round %d: %s\n", i, strerror(errno));
			return 1;
		}
		t += now_us() - t0;
		bad += src != peer || (size_t)n != size || memcmp(in, out, size);
	}
	CHECK(!bad && !ps_raw_dropped(r), "raw-pingpong node %u <-> %u: %d rounds of %zu bytes, %d bad, half round trip %.1f us, %.2f MB/s",
	      ps_raw_node(r), peer, rounds, size, bad,
	      t / (rounds - warm_rounds(rounds)) / 2,
	      2.0 * size * (rounds - warm_rounds(rounds)) / t);
	ps_raw_close(r);
	free(out);
	free(in);
	return fails;
}

/* Echo with zero-copy receive: the reply goes out of the library's buffer. */
static int cmd_raw_echo(int rounds, int timeout_ms)
{
	ps_raw_t *r = raw_open_or_die();
	const void *d;
	unsigned int src;
	ssize_t n;
	int i;

	for (i = 0; i < rounds; i++) {
		n = ps_raw_recv_zc(r, PS_ANY, &src, &d, timeout_ms);
		if (n < 0 || ps_raw_send(r, src, d, n) || ps_raw_release(r, d)) {
			printf("FAIL raw-echo round %d: %s\n", i, strerror(errno));
			return 1;
		}
	}
	CHECK(!ps_raw_dropped(r), "raw-echo: %d messages echoed (zero-copy), %lu dropped",
	      rounds, ps_raw_dropped(r));
	ps_raw_close(r);
	return fails;
}

/* Parse SPECs into sizes. */
static size_t parse_specs(char **av, int ac, size_t **sizes)
{
	size_t n = 0, cap = 16, k, cnt;
	int i;

	*sizes = malloc(cap * sizeof(**sizes));
	srandom(time(NULL) ^ getpid());
	for (i = 0; i < ac; i++) {
		cnt = av[i][0] == 'r' ? strtoul(av[i] + 1, NULL, 0) : 1;
		for (k = 0; k < cnt; k++) {
			if (n == cap)
				*sizes = realloc(*sizes, (cap *= 2) * sizeof(**sizes));
			(*sizes)[n++] = av[i][0] == 'r' ?
				(size_t)(random() % (MAX_MSG + 1)) :
				strtoul(av[i], NULL, 0);
		}
	}
	return n;
}

static int send_stream(ps_raw_t *r, unsigned int peer, size_t *sizes,
		       size_t cnt)
{
	uint8_t *b = malloc(MAX_MSG);
	uint32_t c = cnt;
	size_t i, bytes = 0;
	double t0 = now_us();
	int ok = 1;

	if (ps_raw_send(r, peer, &c, 4))
		ok = 0;
	for (i = 0; ok && i < cnt; i++) {
		if (sizes[i] > MAX_MSG) {
			printf("FAIL size %zu > %d\n", sizes[i], MAX_MSG);
			exit(2);
		}
		fill(b, sizes[i], ps_raw_node(r), i);
		if (ps_raw_send(r, peer, b, sizes[i]))
			ok = 0;
		bytes += sizes[i];
	}
	CHECK(ok, "sent %zu messages (%zu bytes) to node %u in %.0f us%s%s",
	      cnt, bytes, peer, now_us() - t0, ok ? "" : ": ",
	      ok ? "" : strerror(errno));
	free(b);
	return ok;
}

/* Receive the streams of all srcs, one message from each in turn. */
static void recv_streams(ps_raw_t *r, unsigned int *srcs, int nsrc)
{
	uint32_t *cnt = calloc(nsrc, 4), *seq = calloc(nsrc, 4);
	uint8_t *b = malloc(MAX_MSG);
	size_t *bytes = calloc(nsrc, sizeof(size_t));
	int *bad = calloc(nsrc, sizeof(int)), active = nsrc, i;
	unsigned int from;
	ssize_t n;

	for (i = 0; i < nsrc; i++) {
		n = ps_raw_recv(r, srcs[i], &from, &cnt[i], 4, STREAM_TIMEOUT);
		if (n != 4) {
			printf("FAIL stream count from %u: %s\n", srcs[i],
			       n < 0 ? strerror(errno) : "bad length");
			exit(1);
		}
		if (!cnt[i])
			active--;
	}
	while (active) {
		for (i = 0; i < nsrc; i++) {
			if (seq[i] == cnt[i])
				continue;
			n = ps_raw_recv(r, srcs[i], &from, b, MAX_MSG,
					STREAM_TIMEOUT);
			if (n < 0) {
				printf("FAIL message %u from %u: %s\n", seq[i],
				       srcs[i], strerror(errno));
				exit(1);
			}
			bad[i] += from != srcs[i] || !verify(b, n, srcs[i], seq[i]);
			bytes[i] += n;
			if (++seq[i] == cnt[i])
				active--;
		}
	}
	for (i = 0; i < nsrc; i++)
		CHECK(!bad[i], "received %u messages (%zu bytes) from node %u, %d bad (content/order)",
		      cnt[i], bytes[i], srcs[i], bad[i]);
	CHECK(!ps_raw_dropped(r), "no packet dropped (%lu)", ps_raw_dropped(r));
	free(cnt), free(seq), free(b), free(bytes), free(bad);
}

static int cmd_raw_stream(char **av, int ac, int do_send, int do_recv)
{
	ps_raw_t *r = raw_open_or_die();
	unsigned int peer = arg_num(av[0]);
	size_t *sizes, cnt = parse_specs(av + 1, ac - 1, &sizes);

	if (do_send)
		send_stream(r, peer, sizes, cnt);
	if (do_recv)
		recv_streams(r, &peer, 1);
	free(sizes);
	ps_raw_close(r);
	return fails;
}

static int cmd_raw_recv(char **av, int ac)
{
	ps_raw_t *r = raw_open_or_die();
	unsigned int srcs[64];
	int i;

	for (i = 0; i < ac && i < 64; i++)
		srcs[i] = arg_num(av[i]);
	recv_streams(r, srcs, i);
	ps_raw_close(r);
	return fails;
}

static int cmd_raw_busy(void)
{
	ps_raw_t *r = raw_open_or_die(), *r2;
	ps_hal_t *h;

	errno = 0;
	r2 = ps_raw_open();
	CHECK(!r2 && errno == EBUSY, "second rawdata open fails with EBUSY (%s)",
	      r2 ? "opened!" : strerror(errno));
	if (r2)
		ps_raw_close(r2);
	h = ps_hal_open(0);
	CHECK(h != NULL, "a shared HAL open still works");
	ps_hal_close(h);
	ps_raw_close(r);
	r = ps_raw_open();
	CHECK(r != NULL, "rawdata opens again after close");
	ps_raw_close(r);
	return fails;
}

#define EXPECT(call, err, what)						\
	do {								\
		int _e;							\
		errno = 0;						\
		_e = (call) < 0 ? errno : 0;				\
		CHECK(_e == (err), "%s -> %s", what,			\
		      _e ? strerror(_e) : "success");			\
	} while (0)

static int cmd_bad(void)
{
	uint8_t b[PS_HAL_MTU_MAX + 8] = { 0 };
	ps_raw_t *r;
	ps_hal_t *h;
	unsigned int nodes, me, from;
	const void *d;
	struct iovec iov[2];
	char *want = getenv("PS_HAL") ? strdup(getenv("PS_HAL")) : NULL;
	size_t mtu;

	setenv("PS_HAL", "nosuchnic", 1);
	errno = 0;
	h = ps_hal_open(0);
	CHECK(!h && errno == ENODEV, "PS_HAL=nosuchnic (no such backend) -> %s",
	      strerror(errno));
	if (want)
		setenv("PS_HAL", want, 1);
	else
		unsetenv("PS_HAL");
	free(want);
	errno = 0;
	h = ps_hal_open(0x100);
	CHECK(!h && errno == EINVAL, "ps_hal_open bad flags -> %s", strerror(errno));

	h = hal_open_or_die();
	nodes = ps_hal_nodes(h);
	me = ps_hal_node(h);
	EXPECT(ps_hal_send(h, (me + 1) % nodes, b, 0), EINVAL, "hal send 0 bytes");
	mtu = ps_hal_mtu(h);
	EXPECT(ps_hal_send(h, (me + 1) % nodes, b, mtu + 1), EINVAL,
	       "hal send MTU + 1 bytes");
	iov[0] = (struct iovec){ b, mtu / 2 + 4 };
	iov[1] = (struct iovec){ b, mtu / 2 };
	EXPECT(ps_hal_sendv(h, (me + 1) % nodes, iov, 2), EINVAL,
	       "hal sendv of MTU + 4 bytes in 2 pieces");
	EXPECT(ps_hal_sendv(h, (me + 1) % nodes, iov, -1), EINVAL,
	       "hal sendv iovcnt -1");
	EXPECT(ps_hal_send(h, nodes, b, 4), EHOSTUNREACH, "hal send to node == nodes");
	EXPECT(ps_hal_send(h, 65535, b, 4), EHOSTUNREACH, "hal send to node 65535");
	EXPECT(ps_hal_wait(h, 0, 10), EINVAL, "hal wait for no events");
	EXPECT(ps_hal_wait(h, 0x100, 10), EINVAL, "hal wait for unknown events");
	EXPECT(ps_hal_receive_body(h, b, 4), EINVAL, "hal receive_body without a packet");
	CHECK(!(ps_hal_status(h) & PS_HAL_ERR), "no NIC error after all that");
	ps_hal_close(h);

	r = raw_open_or_die();
	EXPECT(ps_raw_send(r, nodes, b, 10), EHOSTUNREACH, "raw send to node == nodes");
	EXPECT(ps_raw_send(r, (unsigned int)-1, b, 10), EHOSTUNREACH, "raw send to node -1");
	EXPECT(ps_raw_send(r, (me + 1) % nodes, NULL, 10), EINVAL, "raw send NULL buffer");
	EXPECT(ps_raw_recv(r, nodes, &from, b, 10, 0), EINVAL, "raw recv from node == nodes");
	EXPECT(ps_raw_recv(r, -5, &from, b, 10, 0), EINVAL, "raw recv from node -5");
	EXPECT(ps_raw_recv(r, PS_ANY, &from, NULL, 10, 0), EINVAL, "raw recv NULL buffer");
	EXPECT(ps_raw_recv(r, PS_ANY, &from, b, 10, 0), EAGAIN, "raw recv, nothing there, timeout 0");
	EXPECT(ps_raw_recv(r, PS_ANY, &from, b, 10, 50), ETIMEDOUT, "raw recv, nothing there, timeout 50 ms");
	EXPECT(ps_raw_recv_zc(r, PS_ANY, &from, NULL, 0), EINVAL, "raw recv_zc NULL pointer");
	EXPECT(ps_raw_release(r, b), EINVAL, "raw release of a buffer not lent");
	/* A message to ourselves: too long for the buffer, then zero-copy. */
	fill(b, 100, me, 0);
	EXPECT(ps_raw_send(r, me, b, 100), 0, "raw send 100 bytes to myself");
	EXPECT(ps_raw_recv(r, me, &from, b, 10, 2000), EMSGSIZE, "raw recv into 10 bytes");
	CHECK(ps_raw_recv_zc(r, me, &from, &d, 0) == 100 && verify(d, 100, me, 0),
	      "the message stayed queued; recv_zc gets it");
	EXPECT(ps_raw_release(r, d), 0, "release it");
	EXPECT(ps_raw_release(r, d), EINVAL, "release it twice");
	ps_raw_close(r);
	return fails;
}

/* ---- ports ---- */

static ps_port_t *port_open_or_die(int port)
{
	ps_port_t *p = ps_port_open(port);

	if (!p) {
		printf("FAIL ps_port_open(%d): %s\n", port, strerror(errno));
		exit(1);
	}
	return p;
}

/*
 * A message of size bytes to port dport of dest: one ports message, or
 * above PS_PORT_MSG_MAX a burst of messages of that size, the last one
 * holding the rest.
 */
static int port_send_msg(ps_port_t *p, unsigned int dest, int dport,
			 const uint8_t *b, size_t size)
{
	size_t off = 0, n;

	do {
		n = size - off < PS_PORT_MSG_MAX ? size - off : PS_PORT_MSG_MAX;
		if (ps_port_send(p, dest, dport, b + off, n))
			return -1;
		off += n;
	} while (off < size);
	return 0;
}

/*
 * Receive a message of size bytes as port_send_msg cut it, into b.
 * *src and *fport: the first part's sender; *bad counts parts of the
 * wrong length or from another sender.  0, or -1 with errno.
 */
static int port_recv_msg(ps_port_t *p, unsigned int *src, int *fport,
			 uint8_t *b, size_t size, int timeout_ms, int *bad)
{
	size_t off = 0, want;
	unsigned int s;
	int fp;
	ssize_t n;

	do {
		want = size - off < PS_PORT_MSG_MAX ? size - off : PS_PORT_MSG_MAX;
		n = ps_port_recv(p, &s, &fp, b + off, want, timeout_ms);
		if (n < 0)
			return -1;
		if (!off) {
			*src = s;
			*fport = fp;
		}
		*bad += s != *src || fp != *fport || (size_t)n != want;
		off += want;
	} while (off < size);
	return 0;
}

static int cmd_port_pingpong(unsigned int peer, int port, int rounds,
			     size_t size)
{
	ps_port_t *p = port_open_or_die(port);
	uint8_t *out = malloc(size + 1), *in = malloc(size + 1);
	size_t msgs = (size + PS_PORT_MSG_MAX - 1) / PS_PORT_MSG_MAX;
	unsigned int src;
	int i, fport, bad = 0, nbad;
	double t0, t = 0;

	if (size > (size_t)256 << 20 || !out || !in) {
		printf("FAIL port-pingpong: bad size %zu\n", size);
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		if (i == warm_rounds(rounds))
			t = 0;
		if (msgs > 1)
			fill_burst(out, size, PS_PORT_MSG_MAX,
				   ps_port_node(p) * 100 + port, i);
		else
			fill(out, size, ps_port_node(p) * 100 + port, i);
		nbad = 0;
		t0 = now_us();
		if (port_send_msg(p, peer, port, out, size)) {
			printf("FAIL port %d send round %d: %s\n", port, i,
			       strerror(errno));
			return 1;
		}
		if (port_recv_msg(p, &src, &fport, in, size, 10000, &nbad)) {
			printf("FAIL port %d receive round %d: %s\n", port, i,
			       strerror(errno));
			return 1;
		}
		t += now_us() - t0;
		bad += nbad || src != peer || fport != port ||
		       memcmp(in, out, size);
	}
	if (msgs <= 1)
		CHECK(!bad, "port-pingpong node %u port %d <-> node %u: %d rounds of %zu bytes, %d bad, half round trip %.1f us",
		      ps_port_node(p), port, peer, rounds, size, bad,
		      t / (rounds - warm_rounds(rounds)) / 2);
	else
		CHECK(!bad, "port-pingpong node %u port %d <-> node %u: %d rounds of %zu bytes, %d bad, half round trip %.1f us, %.2f MB/s, bursts of %zu messages of <= %d bytes",
		      ps_port_node(p), port, peer, rounds, size, bad,
		      t / (rounds - warm_rounds(rounds)) / 2,
		      2.0 * size * (rounds - warm_rounds(rounds)) / t,
		      msgs, PS_PORT_MSG_MAX);
	ps_port_close(p);
	free(out);
	free(in);
	return fails;
}

/*
 * Echo ROUNDS messages.  size 0: message by message, each sent back as
 * it came.  Otherwise messages of size bytes (bursts above
 * PS_PORT_MSG_MAX): the whole message first, then back the same way.
 */
static int cmd_port_echo(int port, int rounds, int timeout_ms, size_t size)
{
	ps_port_t *p = port_open_or_die(port);
	uint8_t *b = malloc(size > PS_PORT_MSG_MAX ? size : PS_PORT_MSG_MAX);
	unsigned int src;
	int i, fport, bad = 0;
	ssize_t n;

	if (size > (size_t)256 << 20 || !b) {
		printf("FAIL port-echo: bad size %zu\n", size);
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		if (!size) {
			n = ps_port_recv(p, &src, &fport, b, PS_PORT_MSG_MAX,
					 timeout_ms);
			if (n >= 0 && !ps_port_send(p, src, fport, b, n))
				continue;
		} else if (!port_recv_msg(p, &src, &fport, b, size, timeout_ms,
					  &bad) &&
			   !port_send_msg(p, src, fport, b, size))
			continue;
		printf("FAIL port-echo port %d round %d: %s\n", port, i,
		       strerror(errno));
		return 1;
	}
	if (!size)
		CHECK(1, "port-echo port %d: %d messages echoed", port, rounds);
	else
		CHECK(!bad, "port-echo port %d: %d messages of %zu bytes (%zu ports messages each) echoed, %d bad",
		      port, rounds, size,
		      (size + PS_PORT_MSG_MAX - 1) / PS_PORT_MSG_MAX, bad);
	ps_port_close(p);
	free(b);
	return fails;
}

/* NPROC children, each on its own port 10+i, all sharing the board. */
static int port_fork(int nproc, int (*fn)(int i, char **av), char **av)
{
	int i, st, bad = 0;

	for (i = 0; i < nproc; i++)
		if (fork() == 0)
			exit(!!fn(i, av));
	for (i = 0; i < nproc; i++)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	CHECK(!bad, "%d processes on ports 10..%d, %d failed", nproc,
	      10 + nproc - 1, bad);
	return fails;
}

static int multi_ping(int i, char **av)
{
	return cmd_port_pingpong(arg_num(av[0]), 10 + i, atoi(av[2]),
				 strtoul(av[3], NULL, 0));
}

static int multi_echo(int i, char **av)
{
	return cmd_port_echo(10 + i, atoi(av[1]), 30000, 0);
}

static int cmd_port_busy(void)
{
	ps_port_t *p = port_open_or_die(7), *q;
	ps_raw_t *r;

	errno = 0;
	q = ps_port_open(7);
	CHECK(!q && errno == EADDRINUSE, "port 7 twice -> %s",
	      q ? "opened!" : strerror(errno));
	q = ps_port_open(PS_PORT_ANY);
	CHECK(q && ps_port_id(q) != 7, "PS_PORT_ANY gives another port (%d)",
	      q ? ps_port_id(q) : -1);
	ps_port_close(q);
	errno = 0;
	r = ps_raw_open();
	CHECK(!r && errno == EBUSY, "rawdata while ports are open -> %s",
	      r ? "opened!" : strerror(errno));
	ps_port_close(p);
	p = ps_port_open(7);
	CHECK(p != NULL, "port 7 opens again after close");
	ps_port_close(p);
	r = raw_open_or_die();
	errno = 0;
	p = ps_port_open(7);
	CHECK(!p && errno == EBUSY, "ports while rawdata is open -> %s",
	      p ? "opened!" : strerror(errno));
	ps_raw_close(r);
	return fails;
}

static int cmd_port_bad(void)
{
	static uint8_t b[PS_PORT_MSG_MAX + 1];
	ps_port_t *p;
	unsigned int me, from;
	int fport;

	EXPECT(ps_port_open(PS_PORTS_MAX) ? 0 : -1, EINVAL, "open port 64");
	EXPECT(ps_port_open(-2) ? 0 : -1, EINVAL, "open port -2");
	p = port_open_or_die(3);
	me = ps_port_node(p);
	EXPECT(ps_port_send(p, ps_port_nodes(p), 3, b, 10), EHOSTUNREACH,
	       "send to node == nodes");
	EXPECT(ps_port_send(p, me, PS_PORTS_MAX, b, 10), EINVAL, "send to port 64");
	EXPECT(ps_port_send(p, me, -1, b, 10), EINVAL, "send to port -1");
	EXPECT(ps_port_send(p, me, 3, NULL, 10), EINVAL, "send NULL buffer");
	EXPECT(ps_port_send(p, me, 3, b, PS_PORT_MSG_MAX + 1), EMSGSIZE,
	       "send 64 KiB + 1");
	EXPECT(ps_port_recv(p, &from, &fport, b, 10, 0), EAGAIN,
	       "recv, nothing there, timeout 0");
	EXPECT(ps_port_recv(p, &from, &fport, b, 10, 30), ETIMEDOUT,
	       "recv, nothing there, timeout 30 ms");
	fill(b, 3000, me, 1);
	EXPECT(ps_port_send(p, me, 3, b, 3000), 0, "send 3000 bytes to my own port");
	EXPECT(ps_port_recv(p, &from, &fport, b, 100, 2000), EMSGSIZE,
	       "recv into 100 bytes");
	memset(b, 0, 3000);
	CHECK(ps_port_recv(p, &from, &fport, b, sizeof(b), 0) == 3000 &&
	      from == me && fport == 3 && verify(b, 3000, me, 1),
	      "the message stayed queued and arrives whole");
	CHECK(ps_port_dropped(p) == 0, "no packet dropped");
	ps_port_close(p);
	return fails;
}

/* ---- pairwise exchange ---- */

/*
 * The paper's benchmark (section 5.1, Algorithm 1): both nodes run the
 * same command against each other.  After a handshake, each round both
 * send SIZE bytes, then both receive the peer's SIZE bytes: unlike the
 * ping-pong, neither waits for the other's message before it sends.
 * Each side times its rounds (send and receive; filling and checking are
 * not timed, as in the ping-pongs) and prints the time per exchange
 * (Table 1's "time per iteration"), half of it (Table 3's latency, which
 * is half of Table 1's time: compare it with a ping-pong's half round
 * trip) and 2 SIZE / time per exchange in MB/s (Table 1's throughput,
 * both directions together; = SIZE / half).
 */
#define XCHG_HELLO	0x4f4c4548u	/* "HELO": here I am, my nonce */
#define XCHG_ACK	0x4b434148u	/* "HACK": your nonce, my parameters */
#define XCHG_START_S	60	/* for the peer to start */
#define XCHG_WAIT_MS	10000	/* for one packet, message or room */

struct xchg_msg {
	uint32_t magic, nonce, rounds, size;
};

/* A layer's way to move handshake messages to and from the peer. */
struct xchg_io {
	int (*send)(void *c, const struct xchg_msg *m);
	/* 1 a handshake message from the peer, 0 something else (dropped),
	 * -1 error */
	int (*recv)(void *c, struct xchg_msg *m, int timeout_ms);
	void *c;
};

static const char *xchg_cmd = "pairwise";
static volatile sig_atomic_t xchg_round = -1;

static size_t put_s(char *b, size_t n, const char *s)
{
	while (*s && n < 159)
		b[n++] = *s++;
	return n;
}

/*
 * No progress for too long: the peer died or stopped, and rawdata and
 * ports sends wait for room without a limit.  Say so and end, from the
 * signal handler (write and _exit only).
 */
static void xchg_alarm(int sig)
{
	char b[160], d[12];
	long r = xchg_round;
	size_t n = 0;
	int i = 0;

	(void)sig;
	n = put_s(b, n, "FAIL ");
	n = put_s(b, n, xchg_cmd);
	if (r < 0) {
		n = put_s(b, n, ": no progress in the handshake");
	} else {
		n = put_s(b, n, ": no progress in round ");
		do
			d[i++] = '0' + r % 10;
		while ((r /= 10) && i < 11);
		while (i && n < 159)
			b[n++] = d[--i];
	}
	n = put_s(b, n, " (the peer died or stopped?)\n");
	if (write(1, b, n) < 0)
		_exit(1);
	_exit(1);
}

/* Watch round r (-1: the handshake); a round of size bytes may take
 * 30 s plus 4 s per MiB. */
static void xchg_arm(int r, size_t size)
{
	xchg_round = r;
	alarm(r < 0 ? XCHG_START_S + 10 : 30 + (unsigned int)(size >> 18));
}

/*
 * Start together: send a HELLO with a fresh nonce, answer every HELLO
 * from the peer with an ACK that carries its nonce and our parameters,
 * and go once the ACK of our own HELLO is back.  Whatever an earlier run
 * left is dropped.  The peer sent its HELLO before that ACK, so it has
 * our ACK too, or will have it one trip later.  One HELLO only: a
 * second one could reach the peer after its handshake, in its data.
 */
static int xchg_start(const struct xchg_io *io, int rounds, size_t size)
{
	struct xchg_msg m = { XCHG_HELLO, 0, (uint32_t)rounds, (uint32_t)size };
	double end = now_us() + XCHG_START_S * 1e6, left;
	uint32_t nonce;
	int got;

	signal(SIGALRM, xchg_alarm);
	xchg_arm(-1, 0);
	nonce = m.nonce = ((uint32_t)now_us() ^ (uint32_t)getpid() << 16) | 1;
	if (io->send(io->c, &m)) {
		printf("FAIL %s: hello: %s\n", xchg_cmd, strerror(errno));
		return -1;
	}
	for (;;) {
		left = (end - now_us()) / 1000;
		if (left <= 0) {
			printf("FAIL %s: the peer did not answer within %d s\n",
			       xchg_cmd, XCHG_START_S);
			return -1;
		}
		got = io->recv(io->c, &m, (int)left + 1);
		if (got < 0 && errno != ETIMEDOUT) {
			printf("FAIL %s: handshake: %s\n", xchg_cmd, strerror(errno));
			return -1;
		}
		if (got <= 0)
			continue;
		if (m.magic == XCHG_HELLO) {
			m.magic = XCHG_ACK;
			m.rounds = (uint32_t)rounds;
			m.size = (uint32_t)size;
			if (io->send(io->c, &m)) {
				printf("FAIL %s: answer to the hello: %s\n",
				       xchg_cmd, strerror(errno));
				return -1;
			}
		} else if (m.magic == XCHG_ACK && m.nonce == nonce) {
			if (m.rounds != (uint32_t)rounds || m.size != (uint32_t)size) {
				printf("FAIL %s: the peer runs %u rounds of %u bytes, this node %d of %zu\n",
				       xchg_cmd, m.rounds, m.size, rounds, size);
				return -1;
			}
			return 0;
		}
	}
}

static void xchg_report(const char *who, int rounds, size_t size, int bad,
			double t, const char *more)
{
	int n = rounds - warm_rounds(rounds);

	alarm(0);
	CHECK(!bad, "%s %s: %d rounds of %zu bytes, %d bad, time per exchange %.1f us, half %.1f us, %.2f MB/s both directions%s",
	      xchg_cmd, who, rounds, size, bad, t / n, t / n / 2,
	      t > 0 ? 2.0 * size * n / t : 0, more);
}

static int xchg_args_ok(unsigned int me, unsigned int nodes,
			unsigned int peer, int rounds, size_t size, size_t min)
{
	if (peer == me || peer >= nodes || rounds <= 0 || size < min ||
	    size > (size_t)256 << 20) {
		printf("FAIL %s: PEER another node (< %u), ROUNDS > 0, SIZE %zu..256 MiB\n",
		       xchg_cmd, nodes, min);
		return 0;
	}
	return 1;
}

/* Open retries: the previous command on this node may still be closing. */
static int busy(int e)
{
	return e == EBUSY || e == EADDRINUSE;
}

/* HAL */

struct hal_xchg {
	ps_hal_t *h;
	unsigned int peer;
	uint8_t *in;		/* room for size + PS_HAL_MTU_MAX */
	size_t size, off;	/* the peer's message; bytes in so far */
	int bad;		/* packets of the wrong length or source */
};

static int hal_io_send(void *c, const struct xchg_msg *m)
{
	struct hal_xchg *x = c;

	return hal_send_wait(x->h, x->peer, m, sizeof(*m));
}

static int hal_io_recv(void *c, struct xchg_msg *m, int timeout_ms)
{
	struct hal_xchg *x = c;
	uint32_t b[PS_HAL_MTU_MAX / 4];
	unsigned int src;
	ssize_t n = hal_recv_wait(x->h, &src, b, timeout_ms);

	if (n < 0)
		return -1;
	if (src != x->peer || n != sizeof(*m))
		return 0;
	memcpy(m, b, sizeof(*m));
	return 1;
}

/* Take in the packets of the peer's message that are there; how many. */
static int hal_xchg_take(struct hal_xchg *x)
{
	size_t mtu = ps_hal_mtu(x->h), want, len;
	unsigned int src;
	int ret, n = 0;

	while (x->off < x->size) {
		ret = ps_hal_receive_header(x->h, &src, &len);
		if (ret <= 0)
			return ret < 0 ? -1 : n;
		want = x->size - x->off < mtu ? x->size - x->off : mtu;
		if (ps_hal_receive_body(x->h, x->in + x->off, len))
			return -1;
		x->bad += src != x->peer || !hal_len_ok(len, want);
		x->off += want;
		n++;
	}
	return n;
}

/*
 * One exchange: all of out (packets of <= MTU bytes) to the peer, then
 * the peer's message into x->in.  While the NIC has no room, what has
 * come is taken in: the peer sends at the same time, and above the FIFOs'
 * size each would wait for room only the other can make.
 */
static int hal_xchg_round(struct hal_xchg *x, const uint8_t *out)
{
	size_t mtu = ps_hal_mtu(x->h), off = 0, n;
	int i, k = 0, ev;

	x->off = 0;
	x->bad = 0;
	while (off < x->size) {
		n = x->size - off < mtu ? x->size - off : mtu;
		if (!ps_hal_send(x->h, x->peer, out + off, n)) {
			off += n;
			continue;
		}
		if (errno != EAGAIN || (k = hal_xchg_take(x)) < 0)
			return -1;
		if (k)
			continue;
		ev = ps_hal_wait(x->h, PS_HAL_TX |
				 (x->off < x->size ? PS_HAL_RX : 0), XCHG_WAIT_MS);
		if (ev <= 0) {
			if (!ev)
				errno = ETIMEDOUT;
			return -1;
		}
	}
	while (x->off < x->size) {
		/* a short poll, then sleep, as hal_recv_wait */
		for (i = 0; i < hal_spin; i++)
			if ((k = hal_xchg_take(x)))
				break;
		if (k < 0)
			return -1;
		if (k)
			continue;
		ev = ps_hal_wait(x->h, PS_HAL_RX, XCHG_WAIT_MS);
		if (ev <= 0) {
			if (!ev)
				errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

static int cmd_hal_pairwise(unsigned int peer, int rounds, size_t size)
{
	ps_hal_t *h = hal_open_or_die();
	size_t mtu = ps_hal_mtu(h), pkts = (size + mtu - 1) / mtu;
	unsigned int me = ps_hal_node(h);
	struct hal_xchg x = { h, peer, NULL, size, 0, 0 };
	struct xchg_io io = { hal_io_send, hal_io_recv, &x };
	uint8_t *out, *want;
	char who[32], more[64] = "";
	double t0, t = 0;
	int r, bad = 0;

	xchg_cmd = "hal-pairwise";
	if (!xchg_args_ok(me, ps_hal_nodes(h), peer, rounds, size, 1))
		return 1;
	out = malloc(size), want = malloc(size);
	x.in = malloc(size + PS_HAL_MTU_MAX);
	if (!out || !want || !x.in) {
		printf("FAIL %s: out of memory\n", xchg_cmd);
		return 1;
	}
	if (xchg_start(&io, rounds, size))
		return 1;
	for (r = 0; r < rounds; r++) {
		if (r == warm_rounds(rounds))
			t = 0;
		if (pkts > 1) {
			fill_burst(out, size, mtu, me, r);
			fill_burst(want, size, mtu, peer, r);
		} else {
			fill(out, size, me, r);
			fill(want, size, peer, r);
		}
		xchg_arm(r, size);
		t0 = now_us();
		if (hal_xchg_round(&x, out)) {
			printf("FAIL %s round %d: %s (%zu of %zu bytes in)\n",
			       xchg_cmd, r, strerror(errno), x.off, size);
			return 1;
		}
		t += now_us() - t0;
		bad += x.bad || memcmp(x.in, want, size);
	}
	snprintf(who, sizeof(who), "node %u <-> %u", me, peer);
	if (pkts > 1)
		snprintf(more, sizeof(more), ", bursts of %zu packets of <= %zu bytes",
			 pkts, mtu);
	xchg_report(who, rounds, size, bad, t, more);
	ps_hal_close(h);
	free(out), free(want), free(x.in);
	return fails;
}

/* rawdata */

struct raw_xchg {
	ps_raw_t *r;
	unsigned int peer;
};

static int raw_io_send(void *c, const struct xchg_msg *m)
{
	struct raw_xchg *x = c;

	return ps_raw_send(x->r, x->peer, m, sizeof(*m));
}

static int raw_io_recv(void *c, struct xchg_msg *m, int timeout_ms)
{
	struct raw_xchg *x = c;
	const void *d;
	unsigned int src;
	ssize_t n = ps_raw_recv_zc(x->r, x->peer, &src, &d, timeout_ms);

	if (n < 0)
		return -1;
	if (n == sizeof(*m))
		memcpy(m, d, sizeof(*m));
	ps_raw_release(x->r, d);
	return n == sizeof(*m);
}

static int cmd_raw_pairwise(unsigned int peer, int rounds, size_t size)
{
	struct raw_xchg x = { NULL, peer };
	struct xchg_io io = { raw_io_send, raw_io_recv, &x };
	uint8_t *out, *in, *want;
	unsigned int src, me;
	char who[32];
	double t0, t = 0, end = now_us() + 5e6;
	ssize_t n;
	int i, bad = 0;

	xchg_cmd = "raw-pairwise";
	while (!(x.r = ps_raw_open()) && busy(errno) && now_us() < end)
		usleep(50000);
	if (!x.r) {
		printf("FAIL ps_raw_open: %s\n", strerror(errno));
		return 1;
	}
	me = ps_raw_node(x.r);
	if (!xchg_args_ok(me, ps_raw_nodes(x.r), peer, rounds, size, 0))
		return 1;
	out = malloc(size + 1), in = malloc(size + 1), want = malloc(size + 1);
	if (!out || !in || !want) {
		printf("FAIL %s: out of memory\n", xchg_cmd);
		return 1;
	}
	if (xchg_start(&io, rounds, size))
		return 1;
	for (i = 0; i < rounds; i++) {
		if (i == warm_rounds(rounds))
			t = 0;
		fill(out, size, me, i);
		fill(want, size, peer, i);
		xchg_arm(i, size);
		t0 = now_us();
		if (ps_raw_send(x.r, peer, out, size)) {
			printf("FAIL %s send round %d: %s\n", xchg_cmd, i,
			       strerror(errno));
			return 1;
		}
		n = ps_raw_recv(x.r, peer, &src, in, size, XCHG_WAIT_MS);
		if (n < 0) {
			printf("FAIL %s receive round %d: %s\n", xchg_cmd, i,
			       strerror(errno));
			return 1;
		}
		t += now_us() - t0;
		bad += src != peer || (size_t)n != size || memcmp(in, want, size);
	}
	bad += !!ps_raw_dropped(x.r);
	snprintf(who, sizeof(who), "node %u <-> %u", me, peer);
	xchg_report(who, rounds, size, bad, t, "");
	ps_raw_close(x.r);
	free(out), free(in), free(want);
	return fails;
}

/* ports */

struct port_xchg {
	ps_port_t *p;
	unsigned int peer;
	int port;
	uint8_t *buf;	/* PS_PORT_MSG_MAX: a stale message fits */
};

static int port_io_send(void *c, const struct xchg_msg *m)
{
	struct port_xchg *x = c;

	return ps_port_send(x->p, x->peer, x->port, m, sizeof(*m));
}

static int port_io_recv(void *c, struct xchg_msg *m, int timeout_ms)
{
	struct port_xchg *x = c;
	unsigned int from;
	int fport;
	ssize_t n = ps_port_recv(x->p, &from, &fport, x->buf, PS_PORT_MSG_MAX,
				 timeout_ms);

	if (n < 0)
		return -1;
	if (from != x->peer || fport != x->port || n != sizeof(*m))
		return 0;
	memcpy(m, x->buf, sizeof(*m));
	return 1;
}

static int cmd_port_pairwise(unsigned int peer, int port, int rounds,
			     size_t size)
{
	struct port_xchg x = { NULL, peer, port, NULL };
	struct xchg_io io = { port_io_send, port_io_recv, &x };
	size_t msgs = (size + PS_PORT_MSG_MAX - 1) / PS_PORT_MSG_MAX;
	uint8_t *out, *in, *want;
	unsigned int src, me, base;
	int i, fport, bad = 0, nbad;
	char who[48], more[64] = "";
	double t0, t = 0, end = now_us() + 5e6;

	xchg_cmd = "port-pairwise";
	while (!(x.p = ps_port_open(port)) && busy(errno) && now_us() < end)
		usleep(50000);
	if (!x.p) {
		printf("FAIL ps_port_open(%d): %s\n", port, strerror(errno));
		return 1;
	}
	me = ps_port_node(x.p);
	if (!xchg_args_ok(me, ps_port_nodes(x.p), peer, rounds, size, 0))
		return 1;
	out = malloc(size + 1), in = malloc(size + 1), want = malloc(size + 1);
	x.buf = malloc(PS_PORT_MSG_MAX);
	if (!out || !in || !want || !x.buf) {
		printf("FAIL %s: out of memory\n", xchg_cmd);
		return 1;
	}
	if (xchg_start(&io, rounds, size))
		return 1;
	base = (unsigned int)port;	/* the pattern's source: node * 100 + port */
	for (i = 0; i < rounds; i++) {
		if (i == warm_rounds(rounds))
			t = 0;
		if (msgs > 1) {
			fill_burst(out, size, PS_PORT_MSG_MAX, me * 100 + base, i);
			fill_burst(want, size, PS_PORT_MSG_MAX, peer * 100 + base, i);
		} else {
			fill(out, size, me * 100 + base, i);
			fill(want, size, peer * 100 + base, i);
		}
		nbad = 0;
		xchg_arm(i, size);
		t0 = now_us();
		if (port_send_msg(x.p, peer, port, out, size)) {
			printf("FAIL %s port %d send round %d: %s\n", xchg_cmd,
			       port, i, strerror(errno));
			return 1;
		}
		if (port_recv_msg(x.p, &src, &fport, in, size, XCHG_WAIT_MS,
				  &nbad)) {
			printf("FAIL %s port %d receive round %d: %s\n",
			       xchg_cmd, port, i, strerror(errno));
			return 1;
		}
		t += now_us() - t0;
		bad += nbad || src != peer || fport != port ||
		       memcmp(in, want, size);
	}
	snprintf(who, sizeof(who), "node %u port %d <-> node %u", me, port, peer);
	if (msgs > 1)
		snprintf(more, sizeof(more), ", bursts of %zu messages of <= %d bytes",
			 msgs, PS_PORT_MSG_MAX);
	xchg_report(who, rounds, size, bad, t, more);
	ps_port_close(x.p);
	free(out), free(in), free(want), free(x.buf);
	return fails;
}

static void usage(void)
{
	fprintf(stderr, "usage: pstest hal-pingpong PEER ROUNDS SIZE | hal-echo ROUNDS [MS [SIZE]] |\n"
		"  raw-pingpong PEER ROUNDS SIZE | raw-echo ROUNDS [MS] |\n"
		"  raw-exchange PEER SPEC... | raw-send PEER SPEC... | raw-recv SRC... |\n"
		"  raw-busy | bad      (SPEC: bytes, or rN = N random sizes <= 64 KiB)\n"
		"  port-pingpong PEER PORT ROUNDS SIZE | port-echo PORT ROUNDS [MS [SIZE]] |\n"
		"  port-multi PEER NPROC ROUNDS SIZE | port-echo-multi NPROC ROUNDS |\n"
		"  port-busy | port-bad | barrier-loop LINE COUNT |\n"
		"  hal-pairwise PEER ROUNDS SIZE | raw-pairwise PEER ROUNDS SIZE |\n"
		"  port-pairwise PEER PORT ROUNDS SIZE\n"
		"Ping-pong SIZE above the HAL's MTU (ports: 65536) is a burst of\n"
		"back-to-back packets (messages) of that size; give the echo the same\n"
		"SIZE, so that it sends the whole burst back only once it has it all.\n"
		"The result is half the round trip; MB/s = SIZE / that.\n"
		"Pairwise exchange: run the same command on both nodes at once, each\n"
		"naming the other; each round both send SIZE bytes, then both receive.\n"
		"The result is the time per exchange and half of it; MB/s = 2 SIZE /\n"
		"time per exchange (both directions).  SIZE as for the ping-pongs.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	int tmo = argc > 3 ? atoi(argv[3]) : 30000;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("PS_HAL_SPIN"))
		hal_spin = atoi(getenv("PS_HAL_SPIN")) + 1;
	if (!strcmp(c, "hal-pingpong") && argc == 5)
		return !!cmd_hal_pingpong(arg_num(argv[2]), atoi(argv[3]),
					  strtoul(argv[4], NULL, 0));
	if (!strcmp(c, "hal-echo") && argc >= 3)
		return !!cmd_hal_echo(atoi(argv[2]), tmo,
				      argc > 4 ? strtoul(argv[4], NULL, 0) : 0);
	if (!strcmp(c, "raw-pingpong") && argc == 5)
		return !!cmd_raw_pingpong(arg_num(argv[2]), atoi(argv[3]),
					  strtoul(argv[4], NULL, 0));
	if (!strcmp(c, "raw-echo") && argc >= 3)
		return !!cmd_raw_echo(atoi(argv[2]), tmo);
	if (!strcmp(c, "raw-exchange") && argc >= 4)
		return !!cmd_raw_stream(argv + 2, argc - 2, 1, 1);
	if (!strcmp(c, "raw-send") && argc >= 4)
		return !!cmd_raw_stream(argv + 2, argc - 2, 1, 0);
	if (!strcmp(c, "raw-recv") && argc >= 3)
		return !!cmd_raw_recv(argv + 2, argc - 2);
	if (!strcmp(c, "raw-busy"))
		return !!cmd_raw_busy();
	if (!strcmp(c, "bad"))
		return !!cmd_bad();
	if (!strcmp(c, "port-pingpong") && argc == 6)
		return !!cmd_port_pingpong(arg_num(argv[2]), atoi(argv[3]),
					   atoi(argv[4]),
					   strtoul(argv[5], NULL, 0));
	if (!strcmp(c, "port-echo") && argc >= 4)
		return !!cmd_port_echo(atoi(argv[2]), atoi(argv[3]),
				       argc > 4 ? atoi(argv[4]) : 30000,
				       argc > 5 ? strtoul(argv[5], NULL, 0) : 0);
	if (!strcmp(c, "port-multi") && argc == 6)
		return !!port_fork(atoi(argv[3]), multi_ping, argv + 2);
	if (!strcmp(c, "port-echo-multi") && argc == 4)
		return !!port_fork(atoi(argv[2]), multi_echo, argv + 2);
	if (!strcmp(c, "port-busy"))
		return !!cmd_port_busy();
	if (!strcmp(c, "port-bad"))
		return !!cmd_port_bad();
	if (!strcmp(c, "hal-pairwise") && argc == 5)
		return !!cmd_hal_pairwise(arg_num(argv[2]), atoi(argv[3]),
					  strtoul(argv[4], NULL, 0));
	if (!strcmp(c, "raw-pairwise") && argc == 5)
		return !!cmd_raw_pairwise(arg_num(argv[2]), atoi(argv[3]),
					  strtoul(argv[4], NULL, 0));
	if (!strcmp(c, "port-pairwise") && argc == 6)
		return !!cmd_port_pairwise(arg_num(argv[2]), atoi(argv[3]),
					   atoi(argv[4]),
					   strtoul(argv[5], NULL, 0));
	if (!strcmp(c, "barrier-loop") && argc == 4)
		return !!cmd_barrier_loop(arg_num(argv[2]), atoi(argv[3]));
	usage();
	return 2;
}
