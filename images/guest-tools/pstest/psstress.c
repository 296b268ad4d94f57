/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * psstress: stress tests of the ParaStation ports layer (libps.a), for
 * tests/cluster/ps1-stress.sh and myri.sh.
 *
 *   psstress [-s SEED] [-t SECONDS] [-v BYTES] [-u STOPFILE] [-g GOFILE]
 *            COMMAND ARGS...
 *
 *   all2all NODES NPROC ROUNDS
 *	Run on nodes 0..NODES-1 at once, or on the nodes of a list such
 *	as 0,1,3 (NODES with a comma: the node ids).  Forks NPROC
 *	processes; process i opens port 20+i.  Every one of the
 *	NODES*NPROC processes sends ROUNDS messages to every other one
 *	(the other processes of its own node too) and receives ROUNDS
 *	from each.  First each says hello to
 *	all the others and sends data only once it has heard from all of
 *	them, so that every port is open before data flows.  A process
 *	sends one message, then takes what is queued (timeout 0); with all
 *	sent, it receives until it has everything or the time is up.
 *	Destinations go round: process g sends message t to process
 *	(g + 1 + t % (N - 1)) % N.  With -v BYTES, ROUNDS is raised to the
 *	least number of rounds whose messages, all pairs together, add up
 *	to BYTES or more (every process computes the same from the seed).
 *	With -u STOPFILE the processes stream until told to stop: after
 *	ROUNDS rounds each goes on, a round at a time, until STOPFILE exists
 *	on its node, then ends its stream to each peer with an "end" message
 *	that says how many came before it; a receiver is done when every
 *	peer's end has come and everything before it.
 *   flood-recv PORT COUNT SLEEP_US EVERY NODE...
 *	Opens PORT, tells each NODE "go" (to its PORT), then receives COUNT
 *	messages from each NODE's PORT, sleeping SLEEP_US after every EVERY
 *	messages, so that the pool and the FIFOs fill up and the senders
 *	are held back.  Start it on the receiving node, and flood-send on
 *	each NODE, in any order.
 *   flood-send DEST PORT COUNT
 *	Opens PORT, waits for "go" from DEST, sends COUNT messages to PORT
 *	on DEST.
 *   self PORT COUNT
 *	Sends COUNT messages of 64 KiB to its own PORT, more than the pool
 *	holds, then receives them: the sender must move its own messages
 *	out of the full pool instead of waiting for ever.
 *   fanin-recv PORT COUNT DELAY_MS NPROC NODE...
 *	Opens PORT, tells the NPROC senders on each NODE (ports PORT+1 ..
 *	PORT+NPROC) "go", sleeps DELAY_MS, then receives COUNT messages of
 *	64 KiB from each of them.  Many senders half-way through 64 KiB
 *	messages to one node: without flow control their parts fill the
 *	pool and none can complete.
 *   fanin-send DEST PORT NPROC COUNT
 *	Forks NPROC processes on ports PORT+1 .. PORT+NPROC; each waits for
 *	"go" from PORT on DEST, says so, then sends COUNT messages of 64 KiB
 *	there.
 *
 * -g GOFILE: flood-recv and fanin-recv start to receive (after DELAY_MS)
 * only once GOFILE exists on their node: the caller says when, e.g. once
 * the senders are held back, instead of a sleep that hopes they are.
 *
 * -s SEED (default 1) picks the message sizes: both ends compute them from
 * (SEED, sender, receiver, seq), so the receiver knows every length.  The
 * first five messages of a stream have the sizes 0, 1, 492, 493 (one and
 * two fragments) and 65536, in an order that depends on the pair; the
 * others are random up to 600 bytes, 4 KiB or 64 KiB (all2all: a quarter
 * up to 64 KiB; flood: one in 32).  -t SECONDS (default 120) bounds a
 * command; a process that is still blocked then fails with what it has.
 * -v BYTES (suffix K, M or G: KiB, MiB, GiB) sets all2all's volume.
 *
 * A message of n >= 12 bytes carries its sender (node, port) and seq in
 * its first 8 bytes and an FNV-1a checksum of all the bytes before in its
 * last 4; the bytes between are a pattern of (sender, seq, offset).  Shorter ones are
 * only the pattern.  Receive is from any sender, so the receiver keeps an
 * expected seq per sender and counts, per sender, messages that are bad
 * (length, content, checksum), lost (a seq skipped, or missing at the
 * end), duplicated or reordered (a seq seen before), and extra (more than
 * expected, also in a last 300 ms of listening).  ps_port_dropped() must
 * stay 0.
 *
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
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/check.h"
#include "common/clock.h"
#include "ps_ports.h"
#include "pattern.h"

#define MAX_MSG		PS_PORT_MSG_MAX
#define A2A_BASE	20	/* all2all: process i has port 20 + i */
#define A2A_NPROC_MAX	(PS_PORTS_MAX - A2A_BASE)
#define A2A_NODES_MAX	1024
#define MAX_SENDERS	64
#define HDR_MIN		12	/* header and checksum fit */
#define EXTRA_MS	300	/* listen for extra messages at the end */
/*
 * Control messages are 8 bytes: a magic word, then a value.  A data
 * message of 8 bytes is pattern only, whose bytes step by 13: never one
 * of these.
 */
#define HELLO_MAGIC	0x4f4c4548u	/* "HELO" */
#define END_MAGIC	0x21444e45u	/* "END!" */
#define GO_MAGIC	0x21214f47u	/* "GO!!" */

static uint64_t seed = 1;
static int timeout_s = 120;
static uint64_t volume;		/* -v: all2all's least total of bytes */
static const char *stop_file;	/* -u: all2all streams until it exists */
static const char *go_file;	/* -g: receivers wait for it */

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
}

/* ---- messages ---- */

/* An end point: node * PS_PORTS_MAX + port. */
#define EP(node, port)	((uint32_t)(node) * PS_PORTS_MAX + (uint32_t)(port))
#define EP_NODE(ep)	((ep) / PS_PORTS_MAX)
#define EP_PORT(ep)	((ep) % PS_PORTS_MAX)

struct mhdr {
	uint16_t node, port;	/* sender */
	uint32_t seq;
};

static uint64_t mix(uint64_t x)	/* splitmix64 */
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static const size_t edges[] = { 0, 1, 492, 493, 65536 };
#define NEDGES	(sizeof(edges) / sizeof(edges[0]))

/* Size of message seq from src to dst; big32 of 32 go up to 64 KiB. */
static size_t msg_size(uint32_t src, uint32_t dst, uint32_t seq,
		       unsigned int big32)
{
	uint64_t h;
	unsigned int c;

	if (seq < NEDGES)
		return edges[(seq + src + dst) % NEDGES];
	h = mix(seed ^ mix((uint64_t)src << 44 | (uint64_t)dst << 32 | seq));
	c = h & 31;
	h >>= 5;
	if (c < big32)
		return h % (MAX_MSG + 1);
	if (c < big32 + (32 - big32) / 2)
		return h % 4097;
	return h % 601;
}

static void fill(uint8_t *b, size_t n, uint32_t src, uint32_t seq)
{
	struct mhdr h = { EP_NODE(src), EP_PORT(src), seq };
	uint32_t c;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = pat(src, seq, i);
	if (n >= HDR_MIN) {
		memcpy(b, &h, sizeof(h));
		c = fnv(b, n - 4);
		memcpy(b + n - 4, &c, 4);
	}
}

static int verify(const uint8_t *b, size_t n, uint32_t src, uint32_t seq)
{
	struct mhdr h;
	uint32_t c;
	size_t i, lo = 0, hi = n;

	if (n >= HDR_MIN) {
		memcpy(&h, b, sizeof(h));
		memcpy(&c, b + n - 4, 4);
		if (h.node != EP_NODE(src) || h.port != EP_PORT(src) ||
		    h.seq != seq || c != fnv(b, n - 4))
			return 0;
		lo = sizeof(h);
		hi = n - 4;
	}
	for (i = lo; i < hi; i++)
		if (b[i] != pat(src, seq, i))
			return 0;
	return 1;
}

/*
 * What a receiver knows about one sender: the next seq it expects and
 * what went wrong.
 */
struct stream {
	uint32_t src, dst;	/* end points */
	uint32_t count;		/* messages expected */
	uint32_t next;		/* next seq expected */
	unsigned int big32;
	size_t fixed;		/* every message has this size (0: random) */
	int hello;		/* all2all: its hello has come */
	int ended;		/* all2all -u: its end has come (count set) */
	unsigned long bytes;
	unsigned int got, bad, lost, dup, extra;
};

static void on_msg(struct stream *st, const uint8_t *b, size_t n)
{
	struct mhdr h;

	if (st->next >= st->count) {
		st->extra++;
		return;
	}
	/* the header tells a skipped or repeated seq from a bad message */
	if (n >= HDR_MIN) {
		memcpy(&h, b, sizeof(h));
		if (h.node == EP_NODE(st->src) && h.port == EP_PORT(st->src) &&
		    h.seq != st->next) {
			if (h.seq < st->next) {
				st->dup++;
				return;
			}
			if (h.seq < st->count) {
				st->lost += h.seq - st->next;
				st->next = h.seq;
			}
		}
	}
	if (n != (st->fixed ? st->fixed :
		  msg_size(st->src, st->dst, st->next, st->big32)) ||
	    !verify(b, n, st->src, st->next))
		st->bad++;
	st->got++;
	st->bytes += n;
	st->next++;
}

/* Streams that still expect messages (a skipped seq counts as come). */
static int streams_left(const struct stream *st, int n)
{
	int i, left = 0;

	for (i = 0; i < n; i++)
		left += st[i].next < st[i].count;
	return left;
}

static int stream_ok(const struct stream *st)
{
	return st->got == st->count && st->next == st->count && !st->bad &&
	       !st->lost && !st->dup && !st->extra;
}

/* One line per stream that went wrong. */
static void stream_report(const char *what, const struct stream *st)
{
	if (stream_ok(st))
		return;
	CHECK(0, "%s node %u port %u <- node %u port %u: %u of %u messages (%lu bytes), %u bad, %u lost, %u missing at the end, %u dup/reordered, %u extra",
	      what, EP_NODE(st->dst), EP_PORT(st->dst), EP_NODE(st->src),
	      EP_PORT(st->src), st->got, st->count, st->bytes, st->bad,
	      st->lost, st->count - st->next, st->dup, st->extra);
}

struct recv_tally {
	uint32_t got;		/* messages of the streams */
	unsigned int stray;	/* from nobody expected */
	unsigned int slept;
};

static ps_port_t *port_open_or_fail(int port)
{
	ps_port_t *p = ps_port_open(port);

	if (!p)
		printf("FAIL ps_port_open(%d): %s\n", port, strerror(errno));
	return p;
}

/* -g: wait for the go file until the deadline; 0 or ETIMEDOUT */
static int wait_go(double deadline)
{
	if (go_file && wait_file(go_file, deadline, 10)) {
		printf("FAIL no %s before the deadline\n", go_file);
		return ETIMEDOUT;
	}
	return 0;
}

/* ---- timeout: a process blocked in the library must still fail ---- */

static char alarm_msg[256];
static volatile uint32_t progress, progress_of;

static char *utoa(char *e, uint32_t v)	/* digits end at e; async-safe */
{
	do
		*--e = '0' + v % 10;
	while (v /= 10);
	return e;
}

static void on_alarm(int sig)
{
	char b[32], *s = b + sizeof(b);
	ssize_t r;

	(void)sig;
	*--s = '\n';
	s = utoa(s, progress_of);
	s -= 4;
	memcpy(s, " of ", 4);
	s = utoa(s, progress);
	r = write(STDOUT_FILENO, alarm_msg, strlen(alarm_msg));
	r = write(STDOUT_FILENO, s, b + sizeof(b) - s);
	(void)r;
	_exit(1);
}

static void arm_alarm(const char *what, int seconds)
{
	snprintf(alarm_msg, sizeof(alarm_msg),
		 "FAIL %s: still blocked after %d s, done ", what, seconds);
	signal(SIGALRM, on_alarm);
	alarm(seconds);
}

/* ---- all2all ---- */

struct a2a_prog {		/* per process, in memory shared with the parent */
	uint32_t sent, got, of;
	uint64_t bytes_in, bytes_out;
};

static int a2a_nodes, a2a_nproc, a2a_rounds;
static unsigned int a2a_node[A2A_NODES_MAX];	/* the nodes taking part */

/* Index of @node in the list of nodes, or -1. */
static int a2a_index(unsigned int node)
{
	int i;

	for (i = 0; i < a2a_nodes; i++)
		if (a2a_node[i] == node)
			return i;
	return -1;
}

/* End point of all2all process @j (of all a2a_nodes * a2a_nproc). */
static uint32_t a2a_ep(int j)
{
	return EP(a2a_node[j / a2a_nproc], A2A_BASE + j % a2a_nproc);
}

/* Whatever message came in: from which process, and is it a hello? */
static void a2a_take(struct stream *st, unsigned int *nhello,
		     unsigned int *stray, const uint8_t *b, ssize_t n,
		     unsigned int from, int fport)
{
	uint32_t w[2];
	struct stream *s;
	int j, i = a2a_index(from);

	if (i < 0 || fport < A2A_BASE || fport >= A2A_BASE + a2a_nproc) {
		(*stray)++;
		return;
	}
	j = i * a2a_nproc + fport - A2A_BASE;
	s = &st[j];
	if (s->src == s->dst) {		/* from myself: never sent */
		(*stray)++;
		return;
	}
	if (!s->hello) {	/* the first message must be the hello */
		s->hello = 1;
		(*nhello)++;
		if (n == sizeof(w)) {
			memcpy(w, b, sizeof(w));
			if (w[0] == HELLO_MAGIC) {
				s->bad += w[1] != s->src;
				return;
			}
		}
		s->bad++;	/* no hello: take it as data */
	}
	if (stop_file && n == sizeof(w)) {
		memcpy(w, b, sizeof(w));
		if (w[0] == END_MAGIC) {
			/* what came before it is all there is */
			s->bad += s->ended;
			s->ended = 1;
			s->count = w[1];
			if (s->next > s->count)
				s->extra += s->next - s->count;
			return;
		}
	}
	on_msg(s, b, n);
}

/*
 * Streams of peers that may still send.  -u: until their end came;
 * nothing follows it (ports keep order), so a seq missing then is lost.
 */
static int a2a_waiting(const struct stream *st, int nprocs, int g)
{
	int j, left = 0;

	for (j = 0; j < nprocs; j++)
		if (j != g)
			left += stop_file ? !st[j].ended :
				st[j].next < st[j].count;
	return left;
}

/* -u: after the first @rounds rounds, stop at a round's end once told. */
static int a2a_stop_now(uint32_t t, int nprocs, int rounds)
{
	return t % (nprocs - 1) == 0 && t >= (uint32_t)(nprocs - 1) * rounds &&
	       access(stop_file, F_OK) == 0;
}

static int a2a_child(int idx, struct a2a_prog *pg)
{
	int nproc = a2a_nproc, rounds = a2a_rounds;
	int nprocs = a2a_nodes * nproc, g, j, fport, dst, mi;
	unsigned int me, from, nhello = 0, stray = 0, pairs_ok = 0;
	uint32_t ep, t, tsend, got = 0, expect, w[2];
	uint8_t *in = malloc(MAX_MSG), *out = malloc(MAX_MSG);
	struct stream *st = calloc(nprocs, sizeof(*st));
	unsigned long dropped;
	double t0 = now_s(), deadline = t0 + timeout_s;
	ps_port_t *p;
	ssize_t n;
	size_t len;
	int wait_ms, err = 0;

	p = port_open_or_fail(A2A_BASE + idx);
	if (!p || !in || !out || !st)
		return 1;
	me = ps_port_node(p);
	mi = a2a_index(me);
	if (mi < 0) {
		printf("FAIL all2all: this is node %u, which is not one of the %d NODES\n",
		       me, a2a_nodes);
		return 1;
	}
	g = mi * nproc + idx;
	ep = EP(me, A2A_BASE + idx);
	for (j = 0; j < nprocs; j++) {
		st[j].src = a2a_ep(j);
		st[j].dst = ep;
		/* -u: as many as come until the end says how many */
		st[j].count = j == g ? 0 : stop_file ? UINT32_MAX : (uint32_t)rounds;
		st[j].big32 = 8;
	}
	expect = (nprocs - 1) * rounds;
	tsend = stop_file ? UINT32_MAX : expect;
	pg->of = expect;

	/* hello to everybody: data only goes to ports that are open */
	w[0] = HELLO_MAGIC;
	w[1] = ep;
	for (j = 0; j < nprocs && !err; j++)
		if (j != g && ps_port_send(p, a2a_node[j / nproc],
					   A2A_BASE + j % nproc, w, sizeof(w)))
			err = errno;

	for (t = 0; !err && (t < tsend || a2a_waiting(st, nprocs, g) ||
			     nhello < (unsigned int)nprocs - 1);) {
		wait_ms = 100;
		if (stop_file && nhello == (unsigned int)nprocs - 1 &&
		    t < tsend && a2a_stop_now(t, nprocs, rounds)) {
			/* every peer had t / (N - 1) messages: say so */
			tsend = t;
			w[0] = END_MAGIC;
			w[1] = t / (nprocs - 1);
			for (j = 0; j < nprocs && !err; j++)
				if (j != g &&
				    ps_port_send(p, a2a_node[j / nproc],
						 A2A_BASE + j % nproc, w,
						 sizeof(w)))
					err = errno;
			if (err)
				break;
		}
		if (nhello == (unsigned int)nprocs - 1 && t < tsend) {
			dst = (g + 1 + t % (nprocs - 1)) % nprocs;
			len = msg_size(ep, st[dst].src, t / (nprocs - 1), 8);
			fill(out, len, ep, t / (nprocs - 1));
			if (ps_port_send(p, a2a_node[dst / nproc],
					 A2A_BASE + dst % nproc, out, len)) {
				err = errno;
				break;
			}
			t++;
			pg->sent = t;
			pg->bytes_out += len;
			wait_ms = 0;
		}
		/* take what is queued; sleep only with nothing to send */
		for (;;) {
			n = ps_port_recv(p, &from, &fport, in, MAX_MSG, wait_ms);
			if (n < 0)
				break;
			a2a_take(st, &nhello, &stray, in, n, from, fport);
			wait_ms = 0;
		}
		if (errno != EAGAIN && errno != ETIMEDOUT) {
			err = errno;
			break;
		}
		for (got = 0, j = 0; j < nprocs; j++)
			got += st[j].next < st[j].count ? st[j].next :
			       st[j].count;
		pg->got = got;
		if (now_s() > deadline) {
			err = ETIMEDOUT;
			break;
		}
	}
	/* anything more is extra */
	while (!err && (n = ps_port_recv(p, &from, &fport, in, MAX_MSG,
					 EXTRA_MS)) >= 0)
		a2a_take(st, &nhello, &stray, in, n, from, fport);

	dropped = ps_port_dropped(p);
	pg->bytes_in = 0;
	if (stop_file) {	/* now known: what the ends said */
		for (expect = 0, j = 0; j < nprocs; j++)
			if (j != g)
				expect += st[j].ended ? st[j].count : st[j].next;
		pg->of = expect;
		if (tsend == UINT32_MAX)
			tsend = t;
	}
	for (j = 0; j < nprocs; j++) {
		pg->bytes_in += st[j].bytes;
		if (j != g)
			pairs_ok += stream_ok(&st[j]) && st[j].hello &&
				    (!stop_file || st[j].ended);
	}
	CHECK(!err && pairs_ok == (unsigned int)nprocs - 1 && !stray &&
	      !dropped,
	      "all2all node %u port %d: %u of %d senders ok, received %u of %u messages (%llu bytes), sent %u of %u (%llu bytes), %u stray, %lu dropped, %.1f s%s%s",
	      me, A2A_BASE + idx, pairs_ok, nprocs - 1, got, expect,
	      (unsigned long long)pg->bytes_in, t, tsend,
	      (unsigned long long)pg->bytes_out, stray, dropped, now_s() - t0,
	      err ? ": " : "", err ? strerror(err) : "");
	for (j = 0; j < nprocs; j++)
		if (j != g) {
			if (!st[j].hello)
				CHECK(0, "all2all node %u port %d: no hello from node %u port %u",
				      me, A2A_BASE + idx, EP_NODE(st[j].src),
				      EP_PORT(st[j].src));
			if (stop_file && !st[j].ended) {
				CHECK(0, "all2all node %u port %d: no end from node %u port %u after %u messages",
				      me, A2A_BASE + idx, EP_NODE(st[j].src),
				      EP_PORT(st[j].src), st[j].next);
				continue;
			}
			stream_report("all2all", &st[j]);
		}
	ps_port_close(p);
	return fails;
}

/*
 * NODES: a count N (nodes 0..N-1) or a list of node ids with commas
 * ("0,1,3").  Fills a2a_node[] and a2a_nodes; 0 or -1 if bad.
 */
static int a2a_parse_nodes(const char *arg)
{
	const char *s = arg;
	unsigned long v;
	char *end;
	int i, n = 0;

	if (!strchr(arg, ',')) {
		v = strtoul(arg, &end, 10);
		if (end == arg || *end || v < 1 || v > A2A_NODES_MAX)
			return -1;
		for (n = 0; n < (int)v; n++)
			a2a_node[n] = n;
		a2a_nodes = n;
		return 0;
	}
	for (;;) {
		v = strtoul(s, &end, 10);
		if (end == s || v >= A2A_NODES_MAX || n == A2A_NODES_MAX)
			return -1;
		for (i = 0; i < n; i++)
			if (a2a_node[i] == v)
				return -1;
		a2a_node[n++] = v;
		if (!*end)
			break;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
	a2a_nodes = n;
	return 0;
}

/*
 * With -v: the least number of rounds, at least @rounds, whose messages
 * (every pair of processes, both ways) add up to the volume.  *@total
 * gets the bytes of that many rounds.
 */
static int a2a_rounds_for_volume(int rounds, uint64_t *total)
{
	int nprocs = a2a_nodes * a2a_nproc, i, j, r;
	uint64_t sum = 0;

	for (r = 0; r < rounds || (sum < volume && r < INT32_MAX); r++)
		for (i = 0; i < nprocs; i++)
			for (j = 0; j < nprocs; j++)
				if (i != j)
					sum += msg_size(a2a_ep(i), a2a_ep(j),
							r, 8);
	*total = sum;
	return r;
}

static int cmd_all2all(const char *nodes, int nproc, int rounds)
{
	struct a2a_prog *pg;
	pid_t *pid;
	double deadline;
	uint64_t bin = 0, bout = 0, planned;
	uint32_t got = 0, of = 0;
	int i, st, left, bad = 0;

	if (a2a_parse_nodes(nodes) || nproc < 1 || nproc > A2A_NPROC_MAX ||
	    a2a_nodes * nproc < 2 || rounds < 1) {
		printf("FAIL all2all: NODES 1..%d or a list of different node ids below it (0,1,3), NPROC 1..%d, 2 processes at least, ROUNDS >= 1\n",
		       A2A_NODES_MAX, A2A_NPROC_MAX);
		return 2;
	}
	a2a_nproc = nproc;
	a2a_rounds = a2a_rounds_for_volume(rounds, &planned);
	rounds = a2a_rounds;
	pg = mmap(NULL, nproc * sizeof(*pg), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid = calloc(nproc, sizeof(*pid));
	if (pg == MAP_FAILED || !pid) {
		printf("FAIL all2all: %s\n", strerror(errno));
		return 1;
	}
	memset(pg, 0, nproc * sizeof(*pg));
	for (i = 0; i < nproc; i++) {
		pid[i] = fork();
		if (pid[i] == 0)
			exit(!!a2a_child(i, &pg[i]));
		if (pid[i] < 0) {
			printf("FAIL all2all: fork: %s\n", strerror(errno));
			return 1;
		}
	}
	/* The children stop by themselves unless blocked in a send. */
	deadline = now_s() + timeout_s + 15;
	for (left = nproc; left > 0;) {
		pid_t w = waitpid(-1, &st, WNOHANG);

		if (w > 0) {
			for (i = 0; i < nproc && pid[i] != w; i++)
				;
			if (i < nproc) {
				pid[i] = 0;
				left--;
				bad += !WIFEXITED(st) || WEXITSTATUS(st);
			}
			continue;
		}
		if (w < 0 || now_s() > deadline)
			break;
		sleep_us(50000);
	}
	for (i = 0; i < nproc; i++) {
		if (pid[i] > 0) {
			printf("FAIL all2all port %d: stuck, killed: sent %u, received %u of %u\n",
			       A2A_BASE + i, pg[i].sent, pg[i].got, pg[i].of);
			kill(pid[i], SIGKILL);
			waitpid(pid[i], NULL, 0);
			bad++;
		}
		bin += pg[i].bytes_in;
		bout += pg[i].bytes_out;
		got += pg[i].got;
		of += pg[i].of;
	}
	CHECK(!bad, "all2all: %d processes here (ports %d..%d), %d in all, %s%d rounds per pair (%llu bytes in all pairs)%s%s: received %u of %u messages (%llu bytes), sent %llu bytes, %d processes failed",
	      nproc, A2A_BASE, A2A_BASE + nproc - 1, a2a_nodes * nproc,
	      stop_file ? "at least " : "", rounds,
	      (unsigned long long)planned, stop_file ? ", then until " : "",
	      stop_file ? stop_file : "", got, of,
	      (unsigned long long)bin, (unsigned long long)bout, bad);
	return fails;
}

/* ---- flood: many senders, one slow receiver ---- */

#define FLOOD_BIG32	1

/*
 * Receive until every stream is complete, the deadline passes or an error
 * comes; a slow receiver sleeps sleep_us after every every-th message.
 * Returns 0 or an errno.
 */
static int receive_streams(ps_port_t *p, struct stream *st, int ns,
			   double deadline, int every, long sleep,
			   struct recv_tally *t)
{
	uint8_t *b = malloc(MAX_MSG);
	unsigned int from;
	int i, fport, err = 0;
	ssize_t n;

	if (!b)
		return ENOMEM;
	while (!err && streams_left(st, ns)) {
		n = ps_port_recv(p, &from, &fport, b, MAX_MSG, 1000);
		if (n < 0 && errno != ETIMEDOUT) {
			err = errno;
			break;
		}
		if (now_s() > deadline) {
			err = ETIMEDOUT;
			break;
		}
		if (n < 0)
			continue;
		for (i = 0; i < ns && st[i].src != EP(from, fport); i++)
			;
		if (i == ns) {
			t->stray++;
			continue;
		}
		on_msg(&st[i], b, n);
		progress = ++t->got;
		if (every && t->got % every == 0) {	/* the slow part */
			sleep_us(sleep);
			t->slept++;
		}
	}
	free(b);
	return err;
}

/* Listen EXTRA_MS longer: anything now is a duplicate or a stray. */
static void count_extras(ps_port_t *p, struct stream *st, int ns,
			 struct recv_tally *t)
{
	uint8_t *b = malloc(MAX_MSG);
	unsigned int from;
	int i, fport;

	while (b && ps_port_recv(p, &from, &fport, b, MAX_MSG, EXTRA_MS) >= 0) {
		for (i = 0; i < ns && st[i].src != EP(from, fport); i++)
			;
		if (i < ns)
			st[i].extra++;
		else
			t->stray++;
	}
	free(b);
}

/* End of a receive test: report every stream; returns how many are ok. */
static unsigned int streams_done(ps_port_t *p, struct stream *st, int ns,
				 const char *what, unsigned long *dropped)
{
	unsigned int ok = 0;
	int i;

	alarm(0);
	*dropped = ps_port_dropped(p);
	for (i = 0; i < ns; i++) {
		ok += stream_ok(&st[i]);
		stream_report(what, &st[i]);
	}
	return ok;
}

static int cmd_flood_recv(int port, uint32_t count, long sleep, int every,
			  char **av, int ac)
{
	struct stream st[MAX_SENDERS];
	struct recv_tally t = { 0 };
	char what[64];
	unsigned int me, ok;
	uint32_t total, go[2] = { GO_MAGIC, 0 };
	unsigned long dropped;
	double t0, deadline;
	ps_port_t *p;
	int i, err = 0;

	if (port < 0 || port >= PS_PORTS_MAX || !count || sleep < 0 ||
	    every < 1 || ac < 1 || ac > MAX_SENDERS) {
		printf("FAIL flood-recv: PORT 0..%d, COUNT > 0, SLEEP_US >= 0, EVERY > 0, 1..%d NODEs\n",
		       PS_PORTS_MAX - 1, MAX_SENDERS);
		return 2;
	}
	snprintf(what, sizeof(what), "flood-recv port %d", port);
	arm_alarm(what, timeout_s + 10);	/* the loop has a deadline */
	p = port_open_or_fail(port);
	if (!p)
		return 1;
	me = ps_port_node(p);
	memset(st, 0, sizeof(st));
	for (i = 0; i < ac; i++) {
		st[i].src = EP(strtoul(av[i], NULL, 0), port);
		st[i].dst = EP(me, port);
		st[i].count = count;
		st[i].big32 = FLOOD_BIG32;
		if (EP_NODE(st[i].src) >= ps_port_nodes(p)) {
			printf("FAIL flood-recv: no node %s\n", av[i]);
			return 2;
		}
	}
	total = count * ac;
	progress_of = total;
	t0 = now_s();
	deadline = t0 + timeout_s;
	for (i = 0; i < ac && !err; i++)
		if (ps_port_send(p, EP_NODE(st[i].src), port, go, sizeof(go)))
			err = errno;
	if (!err)
		err = wait_go(deadline);
	if (!err)
		err = receive_streams(p, st, ac, deadline, every, sleep, &t);
	if (!err)
		count_extras(p, st, ac, &t);
	ok = streams_done(p, st, ac, "flood-recv", &dropped);
	CHECK(!err && ok == (unsigned int)ac && !t.stray && !dropped,
	      "flood-recv node %u port %d: %u of %d senders ok, %u of %u messages, %u stray, %lu dropped, slept %u times %ld us, %.1f s%s%s",
	      me, port, ok, ac, t.got, total, t.stray, dropped, t.slept, sleep,
	      now_s() - t0, err ? ": " : "", err ? strerror(err) : "");
	ps_port_close(p);
	return fails;
}

static int cmd_flood_send(unsigned int dest, int port, uint32_t count)
{
	uint8_t *b = malloc(MAX_MSG);
	char what[64];
	unsigned long bytes = 0;
	unsigned int from;
	uint32_t ep, dep, seq, go[2];
	double t0, t, longest = 0;
	ps_port_t *p;
	ssize_t n;
	size_t len;
	int fport;

	if (port < 0 || port >= PS_PORTS_MAX || !count) {
		printf("FAIL flood-send: PORT 0..%d, COUNT > 0\n",
		       PS_PORTS_MAX - 1);
		return 2;
	}
	snprintf(what, sizeof(what), "flood-send to node %u port %d", dest, port);
	arm_alarm(what, timeout_s);
	p = port_open_or_fail(port);
	if (!p || !b)
		return 1;
	if (dest >= ps_port_nodes(p)) {
		printf("FAIL flood-send: no node %u\n", dest);
		return 2;
	}
	ep = EP(ps_port_node(p), port);
	dep = EP(dest, port);
	progress_of = count;
	/* wait for "go": the receiver's port is open */
	n = ps_port_recv(p, &from, &fport, go, sizeof(go), timeout_s * 1000);
	if (n != sizeof(go) || from != dest || fport != port ||
	    go[0] != GO_MAGIC) {
		printf("FAIL flood-send node %u: no go from node %u port %d: %s\n",
		       ps_port_node(p), dest, port,
		       n < 0 ? strerror(errno) : "bad message");
		return 1;
	}
	t0 = now_s();
	for (seq = 0; seq < count; seq++) {
		len = msg_size(ep, dep, seq, FLOOD_BIG32);
		fill(b, len, ep, seq);
		t = now_s();
		if (ps_port_send(p, dest, port, b, len)) {
			printf("FAIL flood-send node %u: message %u: %s\n",
			       ps_port_node(p), seq, strerror(errno));
			return 1;
		}
		t = now_s() - t;
		if (t > longest)
			longest = t;
		bytes += len;
		progress = seq + 1;
	}
	alarm(0);
	CHECK(seq == count, "flood-send node %u port %d -> node %u: %u messages (%lu bytes) in %.1f s, longest send %.0f ms",
	      ps_port_node(p), port, dest, count, bytes, now_s() - t0,
	      longest * 1e3);
	ps_port_close(p);
	free(b);
	return fails;
}

/* ---- a sender whose own queue fills the pool ---- */

static int cmd_self(int port, uint32_t count)
{
	uint8_t *b = malloc(MAX_MSG);
	char what[64];
	unsigned int me, from, got = 0, bad = 0;
	uint32_t ep, seq;
	ps_port_t *p;
	ssize_t n;
	int fport, err = 0;

	if (port < 0 || port >= PS_PORTS_MAX || !count) {
		printf("FAIL self: PORT 0..%d, COUNT > 0\n", PS_PORTS_MAX - 1);
		return 2;
	}
	snprintf(what, sizeof(what), "self port %d: sent", port);
	arm_alarm(what, timeout_s);
	p = port_open_or_fail(port);
	if (!p || !b)
		return 1;
	me = ps_port_node(p);
	ep = EP(me, port);
	progress_of = count;
	for (seq = 0; seq < count && !err; seq++) {
		fill(b, MAX_MSG, ep, seq);
		if (ps_port_send(p, me, port, b, MAX_MSG))
			err = errno;
		progress = seq + 1;
	}
	alarm(0);
	CHECK(!err, "self node %u port %d: sent %u messages of %d bytes to myself without receiving%s%s",
	      me, port, seq, MAX_MSG, err ? ": " : "", err ? strerror(err) : "");
	if (err)
		return fails;
	errno = 0;
	n = ps_port_recv(p, &from, &fport, b, 100, 0);
	CHECK(n < 0 && errno == EMSGSIZE, "self: receive into 100 bytes -> %s",
	      n < 0 ? strerror(errno) : "success");
	for (; got < count; got++) {
		n = ps_port_recv(p, &from, &fport, b, MAX_MSG, 10000);
		if (n < 0)
			break;
		bad += from != me || fport != port || n != MAX_MSG ||
		       !verify(b, n, ep, got);
	}
	CHECK(got == count && !bad && !ps_port_dropped(p),
	      "self: received %u of %u messages in order, %u bad, %lu dropped%s%s",
	      got, count, bad, ps_port_dropped(p), n < 0 ? ": " : "",
	      n < 0 ? strerror(errno) : "");
	ps_port_close(p);
	free(b);
	return fails;
}

/* ---- fan-in: many senders of 64 KiB messages, a late receiver ---- */

static int cmd_fanin_recv(int port, uint32_t count, long delay_ms, int nproc,
			  char **av, int ac)
{
	struct stream st[MAX_SENDERS];
	struct recv_tally t = { 0 };
	char what[64];
	unsigned int me, ok;
	uint32_t total, go[2] = { GO_MAGIC, 0 };
	unsigned long dropped;
	double t0, t1, deadline;
	ps_port_t *p;
	int i, j, ns = ac * nproc, err = 0;

	if (port < 0 || port + nproc >= PS_PORTS_MAX || !count ||
	    delay_ms < 0 || nproc < 1 || ac < 1 || ns > MAX_SENDERS) {
		printf("FAIL fanin-recv: PORT + NPROC < %d, COUNT > 0, DELAY_MS >= 0, NPROC > 0, 1..%d senders\n",
		       PS_PORTS_MAX, MAX_SENDERS);
		return 2;
	}
	snprintf(what, sizeof(what), "fanin-recv port %d", port);
	arm_alarm(what, timeout_s + 10);	/* the loop has a deadline */
	p = port_open_or_fail(port);
	if (!p)
		return 1;
	me = ps_port_node(p);
	memset(st, 0, sizeof(st));
	for (i = 0; i < ac; i++)
		for (j = 0; j < nproc; j++) {
			struct stream *s = &st[i * nproc + j];

			s->src = EP(strtoul(av[i], NULL, 0), port + 1 + j);
			s->dst = EP(me, port);
			s->count = count;
			s->fixed = MAX_MSG;
			if (EP_NODE(s->src) >= ps_port_nodes(p)) {
				printf("FAIL fanin-recv: no node %s\n", av[i]);
				return 2;
			}
		}
	total = count * ns;
	progress_of = total;
	t0 = now_s();
	deadline = t0 + timeout_s;
	for (i = 0; i < ns && !err; i++)
		if (ps_port_send(p, EP_NODE(st[i].src), EP_PORT(st[i].src), go,
				 sizeof(go)))
			err = errno;
	if (!err)
		err = wait_go(deadline);
	/* the senders fill what they can meanwhile */
	sleep_us(delay_ms * 1000);
	t1 = now_s();
	if (!err)
		err = receive_streams(p, st, ns, deadline, 0, 0, &t);
	t1 = now_s() - t1;
	if (!err)
		count_extras(p, st, ns, &t);
	ok = streams_done(p, st, ns, "fanin-recv", &dropped);
	CHECK(!err && ok == (unsigned int)ns && !t.stray && !dropped,
	      "fanin-recv node %u port %d: %u of %d senders ok, %u of %u messages of %d bytes, %u stray, %lu dropped, %.1f s after a delay of %ld ms%s%s",
	      me, port, ok, ns, t.got, total, MAX_MSG, t.stray, dropped, t1,
	      delay_ms, err ? ": " : "", err ? strerror(err) : "");
	ps_port_close(p);
	return fails;
}

static int fanin_child(unsigned int dest, int port, int idx, uint32_t count)
{
	uint8_t *b = malloc(MAX_MSG);
	char what[80];
	unsigned int from;
	uint32_t ep, seq, go[2];
	double t0, t, longest = 0;
	ps_port_t *p;
	ssize_t n;
	int fport, myport = port + 1 + idx;

	snprintf(what, sizeof(what), "fanin-send port %d to node %u port %d",
		 myport, dest, port);
	arm_alarm(what, timeout_s);
	p = port_open_or_fail(myport);
	if (!p || !b)
		return 1;
	if (dest >= ps_port_nodes(p)) {
		printf("FAIL fanin-send: no node %u\n", dest);
		return 2;
	}
	ep = EP(ps_port_node(p), myport);
	progress_of = count;
	n = ps_port_recv(p, &from, &fport, go, sizeof(go), timeout_s * 1000);
	if (n != sizeof(go) || from != dest || fport != port ||
	    go[0] != GO_MAGIC) {
		printf("FAIL fanin-send node %u port %d: no go from node %u port %d: %s\n",
		       ps_port_node(p), myport, dest, port,
		       n < 0 ? strerror(errno) : "bad message");
		return 1;
	}
	printf("fanin-send node %u port %d: go from node %u port %d\n",
	       ps_port_node(p), myport, dest, port);
	t0 = now_s();
	for (seq = 0; seq < count; seq++) {
		fill(b, MAX_MSG, ep, seq);
		t = now_s();
		if (ps_port_send(p, dest, port, b, MAX_MSG)) {
			printf("FAIL fanin-send node %u port %d: message %u: %s\n",
			       ps_port_node(p), myport, seq, strerror(errno));
			return 1;
		}
		t = now_s() - t;
		if (t > longest)
			longest = t;
		progress = seq + 1;
	}
	alarm(0);
	CHECK(seq == count, "fanin-send node %u port %d -> node %u port %d: %u messages of %d bytes in %.1f s, longest send %.0f ms",
	      ps_port_node(p), myport, dest, port, count, MAX_MSG,
	      now_s() - t0, longest * 1e3);
	ps_port_close(p);
	free(b);
	return fails;
}

static int cmd_fanin_send(unsigned int dest, int port, int nproc,
			  uint32_t count)
{
	pid_t pid[A2A_NPROC_MAX];
	int i, st, bad = 0;

	if (port < 0 || nproc < 1 || port + nproc >= PS_PORTS_MAX ||
	    nproc > A2A_NPROC_MAX || !count) {
		printf("FAIL fanin-send: PORT + NPROC < %d, NPROC > 0, COUNT > 0\n",
		       PS_PORTS_MAX);
		return 2;
	}
	for (i = 0; i < nproc; i++) {
		pid[i] = fork();
		if (pid[i] == 0)
			exit(!!fanin_child(dest, port, i, count));
		if (pid[i] < 0) {
			printf("FAIL fanin-send: fork: %s\n", strerror(errno));
			return 1;
		}
	}
	/* each child has its own alarm */
	for (i = 0; i < nproc; i++)
		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad++;
	CHECK(!bad, "fanin-send: %d processes on ports %d..%d, %d failed",
	      nproc, port + 1, port + nproc, bad);
	return fails;
}

/* BYTES, or with a suffix K, M or G (KiB, MiB, GiB): 0 or -1 */
static int parse_bytes(const char *arg, uint64_t *out)
{
	char *end;
	uint64_t v = strtoull(arg, &end, 10);
	int shift = 0;

	if (*arg < '0' || *arg > '9')
		return -1;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	}
	if (*end || v > UINT64_MAX >> shift)
		return -1;
	*out = v << shift;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: psstress [-s SEED] [-t SECONDS] [-v BYTES[K|M|G]] [-u STOPFILE] [-g GOFILE] all2all NODES|N0,N1,... NPROC ROUNDS |\n"
		"  flood-recv PORT COUNT SLEEP_US EVERY NODE... | flood-send DEST PORT COUNT |\n"
		"  self PORT COUNT | fanin-recv PORT COUNT DELAY_MS NPROC NODE... |\n"
		"  fanin-send DEST PORT NPROC COUNT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *c;
	int o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt(argc, argv, "+s:t:v:u:g:")) != -1) {
		if (o == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (o == 't' && atoi(optarg) > 0)
			timeout_s = atoi(optarg);
		else if (o == 'v' && parse_bytes(optarg, &volume) == 0)
			;
		else if (o == 'u')
			stop_file = optarg;
		else if (o == 'g')
			go_file = optarg;
		else
			usage();
	}
	argv += optind;
	argc -= optind;
	c = argc > 0 ? argv[0] : "";
	if (!strcmp(c, "all2all") && argc == 4)
		return !!cmd_all2all(argv[1], atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(c, "flood-recv") && argc >= 6)
		return !!cmd_flood_recv(atoi(argv[1]), strtoul(argv[2], NULL, 0),
					atol(argv[3]), atoi(argv[4]), argv + 5,
					argc - 5);
	if (!strcmp(c, "flood-send") && argc == 4)
		return !!cmd_flood_send(strtoul(argv[1], NULL, 0), atoi(argv[2]),
					strtoul(argv[3], NULL, 0));
	if (!strcmp(c, "fanin-recv") && argc >= 6)
		return !!cmd_fanin_recv(atoi(argv[1]), strtoul(argv[2], NULL, 0),
					atol(argv[3]), atoi(argv[4]), argv + 5,
					argc - 5);
	if (!strcmp(c, "fanin-send") && argc == 5)
		return !!cmd_fanin_send(strtoul(argv[1], NULL, 0), atoi(argv[2]),
					atoi(argv[3]), strtoul(argv[4], NULL, 0));
	if (!strcmp(c, "self") && argc == 3)
		return !!cmd_self(atoi(argv[1]), strtoul(argv[2], NULL, 0));
	usage();
	return 2;
}
