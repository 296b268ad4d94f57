/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tgrbench: the measurements behind `make bench-tgr` (tests/bench/tgr.sh).
 *
 *   tgrbench host SEGFILE SECONDS
 *       export a mailbox page (READ, WRITE, ATOMIC), write its segid to
 *       SEGFILE and keep it for SECONDS: the target of read and fetch_inc
 *   tgrbench read NODE SEGID ROUNDS
 *   tgrbench fetch_inc NODE SEGID ROUNDS
 *       the median time of one remote load (the vCPU stalls until the
 *       reply) or of one fetch_and_increment (one load of the FADD shadow)
 *   tgrbench pp-host write|req|soft SEGFILE ROUNDS
 *   tgrbench pp-peer write|req|soft NODE SEGID QSEGID ROUNDS
 *       ping-pong between two nodes; the host reports half the round
 *       trip. write: a remote store of the round number into the peer's
 *       mailbox, which it polls. req: tgr_enq() into the peer's queue,
 *       which it dequeues. soft: the paper's software queue, slot =
 *       fetch_inc(tail), a remote write of the item and one of the
 *       slot's valid word, which the peer polls.
 *   tgrbench rate-recv req|soft SEGFILE SENDERS ITEMS [BYTES]
 *   tgrbench rate-send req|soft NODE CTLSEG DATASEG ITEMS
 *       SENDERS senders put ITEMS items each into one queue (req: a REQ
 *       queue of BYTES, default 65536; soft: the software queue). They
 *       check in with fetch_inc and wait for the receiver's go; the
 *       receiver times from go to the last item and checks that every
 *       item came once, in per-sender order.
 *   tgrbench tally SEGFILE NODES ITEMS SECONDS
 *   tgrbench spray NODE SEGID ITEMS
 *       posted remote writes under fault rules: tally exports NODES x
 *       ITEMS words, waits SECONDS, then counts per sender the items that
 *       landed, were lost or were changed; spray (on each sender) writes
 *       its ITEMS items into its own row. Nothing is retransmitted, so
 *       the counts are the faults' effect, not a failure.
 *
 * Output: "ok   ..." lines with the numbers, or "FAIL ...", exit status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/check.h"
#include "tgrtool.h"

#define HELLO_TIMEOUT_MS	120000
#define ITEM_TIMEOUT_MS		60000
#define SOFT_SLOT0		64	/* rate queue: tail at 0, slots here */

static void usage(void)
{
	fprintf(stderr,
		"usage: tgrbench host SEGFILE SECONDS\n"
		"       tgrbench read|fetch_inc NODE SEGID ROUNDS\n"
		"       tgrbench pp-host write|req|soft SEGFILE ROUNDS\n"
		"       tgrbench pp-peer write|req|soft NODE SEGID QSEGID ROUNDS\n"
		"       tgrbench rate-recv req|soft SEGFILE SENDERS ITEMS [BYTES]\n"
		"       tgrbench rate-send req|soft NODE CTLSEG DATASEG ITEMS\n"
		"       tgrbench tally SEGFILE NODES ITEMS SECONDS\n"
		"       tgrbench spray NODE SEGID ITEMS\n");
	exit(2);
}

enum mode { MODE_WRITE, MODE_REQ, MODE_SOFT };

static enum mode parse_mode(const char *s, int allow_write)
{
	if (allow_write && !strcmp(s, "write"))
		return MODE_WRITE;
	if (!strcmp(s, "req"))
		return MODE_REQ;
	if (!strcmp(s, "soft"))
		return MODE_SOFT;
	die_msg("unknown mode '%s' (%s)", s,
		allow_write ? "write, req or soft" : "req or soft");
}

static volatile void *ptr_or_die(tgr_seg_t *seg, size_t off)
{
	volatile void *p = tgr_ptr(seg, off);

	if (!p)
		die("remote pointer (no READ/WRITE right?)", -EACCES);
	return p;
}

/* ---- host, read, fetch_inc ------------------------------------------- */

static int cmd_host(char **av)
{
	uint32_t secs = arg_u32(av[1], "SECONDS");
	tgr_t *t = open_or_die();
	struct mailbox mb;

	mailbox_create(t, &mb);
	write_ids(av[0], &mb.segid, 1);
	printf("ok   host: node %u exports segid %u for %u s\n", tgr_node(t),
	       mb.segid, secs);
	fflush(stdout);
	sleep(secs);
	tgr_close(t);
	return 0;
}

static int cmd_load(char **av, int finc)
{
	uint32_t node = arg_u32(av[0], "NODE"), segid = arg_u32(av[1], "SEGID");
	uint32_t rounds = arg_u32(av[2], "ROUNDS"), i, v = 0, last = 0;
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid, 0);
	double *lat = calloc(rounds ? rounds : 1, sizeof(double));
	volatile void *p = finc ? NULL : ptr_or_die(seg, MB_FLAG * 4);
	int monotonic = 1, err;

	for (i = 0; i < rounds + rounds / 10; i++) {
		double t0 = now_us();

		if (finc) {
			err = tgr_fetch_inc(seg, 8 * 4, &v);
			if (err)
				die("fetch_inc", err);
			monotonic &= i == 0 || v > last;
			last = v;
		} else {
			v = tgr_read32(p);
		}
		if (i >= rounds / 10)
			lat[i - rounds / 10] = now_us() - t0;
	}
	if (finc)
		CHECK(monotonic, "fetch_inc: every result above the previous one (last %u)",
		      last);
	else
		CHECK(v != 0xffffffffu, "read: the loads returned data, not all-ones");
	printf("ok   %s: median %.2f us over %u %s\n", finc ? "fetch_inc" : "read",
	       median(lat, rounds), rounds, finc ? "fetch_incs" : "loads");
	free(lat);
	tgr_close(t);
	return fails ? 1 : 0;
}

/* ---- ping-pong --------------------------------------------------------- */

struct pp {
	enum mode mode;
	tgr_t *t;
	struct mailbox mb;
	tgr_q_t *q;		/* req: our queue */
	tgr_seg_t *peer;	/* the peer's mailbox */
	tgr_rq_t *rq;		/* req: the peer's queue */
	uint32_t soft_head;	/* soft: next slot of our mailbox queue */
};

static void pp_send(struct pp *pp, uint32_t v)
{
	switch (pp->mode) {
	case MODE_WRITE:
		tgr_write32(ptr_or_die(pp->peer, MB_FLAG * 4), v);
		break;
	case MODE_REQ:
		tgr_enq(pp->rq, v);
		break;
	case MODE_SOFT:
		soft_enq(pp->peer, MB_TAIL * 4, MB_SLOT0 * 4, MB_SLOTS, v);
		break;
	}
}

static void pp_recv(struct pp *pp, uint32_t want)
{
	volatile uint32_t *w = pp->mb.w;
	uint32_t got = 0, slot;
	int err = 0;
	double end = now_us() + ITEM_TIMEOUT_MS * 1e3;

	switch (pp->mode) {
	case MODE_WRITE:
		err = wait_word(&w[MB_FLAG], want, 0, ITEM_TIMEOUT_MS);
		got = w[MB_FLAG];
		break;
	case MODE_REQ:
		for (;;) {
			err = tgr_deq(pp->q, &got);
			if (err < 0)
				die("deq", err);
			if (err == 1)
				break;
			if (now_us() > end) {
				err = -ETIMEDOUT;
				break;
			}
		}
		err = err == 1 ? 0 : err;
		break;
	case MODE_SOFT:
		slot = pp->soft_head % MB_SLOTS;
		err = wait_word(&w[MB_SLOT0 + 2 * slot + 1], pp->soft_head + 1, 0,
				ITEM_TIMEOUT_MS);
		got = w[MB_SLOT0 + 2 * slot];
		pp->soft_head++;
		break;
	}
	if (err)
		die("ping-pong: waiting for the peer", err);
	if (got != want)
		die_msg("ping-pong: got %u, expected %u", got, want);
}

static void pp_setup(struct pp *pp, const char *mode)
{
	int err;

	memset(pp, 0, sizeof(*pp));
	pp->mode = parse_mode(mode, 1);
	pp->t = open_or_die();
	mailbox_create(pp->t, &pp->mb);
	if (pp->mode == MODE_REQ) {
		err = tgr_q_create(pp->t, 4096, 0, &pp->q);
		if (err)
			die("queue create", err);
	}
}

static void pp_open_peer_queue(struct pp *pp, uint32_t node, uint32_t qseg)
{
	int err;

	if (pp->mode != MODE_REQ)
		return;
	err = tgr_q_open_remote(pp->t, node, qseg, &pp->rq);
	if (err)
		die("open of the peer's queue", err);
}

static int cmd_pp_host(char **av)
{
	struct pp pp;
	uint32_t ids[2], rounds = arg_u32(av[2], "ROUNDS"), warm = rounds / 10;
	uint32_t node, i;
	double t0 = 0;
	int err;

	pp_setup(&pp, av[0]);
	ids[0] = pp.mb.segid;
	ids[1] = pp.q ? tgr_q_segid(pp.q) : 0;
	write_ids(av[1], ids, 2);
	err = wait_word(&pp.mb.w[MB_HELLO_SEG], 1, 1, HELLO_TIMEOUT_MS);
	if (err)
		die("waiting for the peer's hello", err);
	node = pp.mb.w[MB_HELLO_NODE] - 1;
	pp.peer = import_or_die(pp.t, node, pp.mb.w[MB_HELLO_SEG] - 1, 0);
	pp_open_peer_queue(&pp, node, pp.mb.w[MB_HELLO_Q] - 1);
	for (i = 1; i <= warm + rounds; i++) {
		if (i == warm + 1)
			t0 = now_us();
		pp_send(&pp, i);
		pp_recv(&pp, i);
	}
	printf("ok   %s: half round trip %.2f us over %u rounds with node %u\n",
	       av[0], (now_us() - t0) / rounds / 2, rounds, node);
	tgr_close(pp.t);
	return 0;
}

static int cmd_pp_peer(char **av)
{
	struct pp pp;
	uint32_t node = arg_u32(av[1], "NODE"), seg = arg_u32(av[2], "SEGID");
	uint32_t qseg = arg_u32(av[3], "QSEGID");
	uint32_t rounds = arg_u32(av[4], "ROUNDS"), i;
	volatile void *hello;

	pp_setup(&pp, av[0]);
	pp.peer = import_or_die(pp.t, node, seg, 0);
	pp_open_peer_queue(&pp, node, qseg);
	hello = ptr_or_die(pp.peer, 0);
	tgr_write32((volatile uint32_t *)hello + MB_HELLO_NODE, tgr_node(pp.t) + 1);
	tgr_write32((volatile uint32_t *)hello + MB_HELLO_Q,
		    pp.q ? tgr_q_segid(pp.q) + 1 : 0);
	/* in order: the segid, which the host waits for, goes last */
	tgr_write32((volatile uint32_t *)hello + MB_HELLO_SEG, pp.mb.segid + 1);
	for (i = 1; i <= rounds / 10 + rounds; i++) {
		pp_recv(&pp, i);
		pp_send(&pp, i);
	}
	/* the host must see our last reply before our exports go */
	usleep(200000);
	printf("ok   %s: answered %u rounds\n", av[0], rounds / 10 + rounds);
	tgr_close(pp.t);
	return 0;
}

/* ---- rate ------------------------------------------------------------- */

static int cmd_rate_recv(char **av, int ac)
{
	enum mode mode = parse_mode(av[0], 0);
	uint32_t senders = arg_u32(av[2], "SENDERS");
	uint32_t items = arg_u32(av[3], "ITEMS");
	uint32_t bytes = ac > 4 ? arg_u32(av[4], "BYTES") : 65536;
	uint32_t total = senders * items, got = 0, ids[2], *next;
	tgr_t *t = open_or_die();
	struct mailbox ctl;
	tgr_q_t *q = NULL;
	volatile uint32_t *soft = NULL;
	size_t soft_len = 0;
	double t0, t_last, last_progress;
	int err, order_ok = 1;

	if (!senders || senders > 255 || !items || items > 0xffffff)
		die_msg("SENDERS must be 1..255 and ITEMS 1..16777215");
	next = calloc(senders, sizeof(*next));
	mailbox_create(t, &ctl);
	if (mode == MODE_REQ) {
		err = tgr_q_create(t, bytes, 0, &q);
		if (err)
			die("queue create", err);
		ids[1] = tgr_q_segid(q);
	} else {
		soft_len = (SOFT_SLOT0 + (size_t)total * 8 + TGR_PAGE_SIZE - 1) &
			   ~(size_t)(TGR_PAGE_SIZE - 1);
		soft = page_alloc(soft_len);
		err = tgr_export(t, (void *)soft, soft_len,
				 TGR_R_WRITE | TGR_R_ATOMIC, &ids[1]);
		if (err)
			die("export of the software queue", err);
	}
	ids[0] = ctl.segid;
	write_ids(av[1], ids, 2);
	err = wait_word(&ctl.w[MB_COUNT], senders, 0, HELLO_TIMEOUT_MS);
	if (err)
		die_msg("only %u of %u senders checked in", ctl.w[MB_COUNT], senders);
	ctl.w[MB_GO] = 1;
	t0 = t_last = last_progress = now_us();
	while (got < total) {
		uint32_t item = 0, who, seq;

		if (mode == MODE_REQ) {
			err = tgr_deq(q, &item);
			if (err < 0)
				die("deq", err);
		} else {
			volatile uint32_t *slot = soft + SOFT_SLOT0 / 4 + 2 * got;

			err = slot[1] == got + 1;
			if (err)
				item = slot[0];
		}
		if (!err) {
			if (now_us() - last_progress > ITEM_TIMEOUT_MS * 1e3) {
				printf("FAIL rate-recv %s: %u of %u items, then none for %d s\n",
				       av[0], got, total, ITEM_TIMEOUT_MS / 1000);
				return 1;
			}
			continue;
		}
		t_last = last_progress = now_us();
		who = item >> 24;
		seq = item & 0xffffff;
		if (who >= senders || seq != next[who]) {
			if (order_ok)
				printf("FAIL rate-recv %s: item %#x after %u of sender %u\n",
				       av[0], item, who < senders ? next[who] : 0, who);
			order_ok = 0;
		} else {
			next[who]++;
		}
		got++;
	}
	CHECK(order_ok, "rate-recv %s: %u items from %u senders, each once, in per-sender order",
	      av[0], total, senders);
	printf("ok   rate-recv %s: %u senders, %.0f items/s (%u items in %.3f s)\n",
	       av[0], senders, total / ((t_last - t0) / 1e6), total,
	       (t_last - t0) / 1e6);
	if (q) {
		struct tgr_q_stats st;

		tgr_q_stats(q, &st);
		printf("ok   rate-recv %s: queue overflows %u (deferred %u, no free buffer %u), relinks %u\n",
		       av[0], st.overflows, st.deferred, st.nofree, st.relinks);
	}
	/* let the senders see the end before our exports go */
	wait_word(&ctl.w[MB_DONE], senders, 0, 10000);
	tgr_close(t);
	return order_ok ? 0 : 1;
}

static int cmd_rate_send(char **av)
{
	enum mode mode = parse_mode(av[0], 0);
	uint32_t node = arg_u32(av[1], "NODE"), ctlseg = arg_u32(av[2], "CTLSEG");
	uint32_t dataseg = arg_u32(av[3], "DATASEG"), items = arg_u32(av[4], "ITEMS");
	tgr_t *t = open_or_die();
	tgr_seg_t *ctl = import_or_die(t, node, ctlseg, 0), *soft = NULL;
	tgr_rq_t *rq = NULL;
	uint32_t id, seq, nslots = 0, dummy;
	volatile void *go = ptr_or_die(ctl, MB_GO * 4);
	double t0;
	int err;

	if (mode == MODE_REQ) {
		err = tgr_q_open_remote(t, node, dataseg, &rq);
		if (err)
			die("open of the remote queue", err);
	} else {
		soft = import_or_die(t, node, dataseg, 0);
		nslots = (tgr_seg_size(soft) - SOFT_SLOT0) / 8;
	}
	err = tgr_fetch_inc(ctl, MB_COUNT * 4, &id);
	if (err)
		die("check-in (fetch_inc)", err);
	while (tgr_read32(go) != 1)
		usleep(1000);
	t0 = now_us();
	for (seq = 0; seq < items; seq++) {
		if (mode == MODE_REQ)
			tgr_enq(rq, id << 24 | seq);
		else
			soft_enq(soft, 0, SOFT_SLOT0, nslots, id << 24 | seq);
	}
	printf("ok   rate-send %s: sender %u, %u items, %.2f us each\n", av[0],
	       id, items, (now_us() - t0) / items);
	err = tgr_fetch_inc(ctl, MB_DONE * 4, &dummy);
	if (err)
		die("done (fetch_inc)", err);
	tgr_close(t);
	return 0;
}

/* ---- tally and spray: posted writes under fault rules ----------------- */

static uint32_t spray_item(uint32_t node, uint32_t i)
{
	return node << 24 | (i + 1);
}

static int cmd_tally(char **av)
{
	uint32_t nodes = arg_u32(av[1], "NODES"), items = arg_u32(av[2], "ITEMS");
	uint32_t secs = arg_u32(av[3], "SECONDS"), segid, n, i;
	size_t len = ((size_t)nodes * items * 4 + TGR_PAGE_SIZE - 1) &
		     ~(size_t)(TGR_PAGE_SIZE - 1);
	tgr_t *t = open_or_die();
	volatile uint32_t *w;
	int err;

	if (!nodes || !items || nodes > 64 || items > 65536)
		die_msg("tally: NODES 1..64 and ITEMS 1..65536");
	w = page_alloc(len);
	err = tgr_export(t, (void *)w, len, TGR_R_READ | TGR_R_WRITE, &segid);
	if (err)
		die("export", err);
	write_ids(av[0], &segid, 1);
	printf("ok   tally: node %u exports segid %u, %u x %u words, for %u s\n",
	       tgr_node(t), segid, nodes, items, secs);
	sleep(secs);
	for (n = 0; n < nodes; n++) {
		uint32_t landed = 0, lost = 0, changed = 0;

		for (i = 0; i < items; i++) {
			uint32_t v = w[n * items + i];

			if (v == spray_item(n, i))
				landed++;
			else if (!v)
				lost++;
			else
				changed++;
		}
		if (landed || changed)
			printf("tally: node %u: %u of %u landed, %u lost, %u changed\n",
			       n, landed, items, lost, changed);
	}
	tgr_close(t);
	return 0;
}

/*
 * A corrupted header can make the exporter refuse a write and mark our
 * import stale; the next store then faults (SIGBUS, synchronous), and we
 * import again and go on from that item.
 */
static sigjmp_buf spray_fault;

static void spray_sigbus(int sig)
{
	(void)sig;
	siglongjmp(spray_fault, 1);
}

/* Import node's segid for writing: ask again while the answer may come. */
static tgr_seg_t *spray_import(tgr_t *t, uint32_t node, uint32_t segid,
			       uint32_t *tries)
{
	tgr_seg_t *seg = NULL;
	int err;

	do {
		err = tgr_import(t, node, segid, TGR_R_WRITE, &seg);
		if (!err)
			return seg;
		/* lost request or answer; free-running, a node still booting */
		if (err != -ETIMEDOUT && err != -EHOSTUNREACH && err != -ENOENT)
			break;
		fprintf(stderr, "tgrbench: import try %u: %s\n", *tries + 1,
			tgr_strerror(err));
		usleep(500000);
	} while (++*tries < 20);
	die("import", err);
}

static int cmd_spray(char **av)
{
	uint32_t node = arg_u32(av[0], "NODE"), segid = arg_u32(av[1], "SEGID");
	uint32_t items = arg_u32(av[2], "ITEMS"), me, tries = 0;
	volatile uint32_t i = 0, faults = 0;
	tgr_t *t = open_or_die();
	tgr_seg_t *volatile seg = spray_import(t, node, segid, &tries);
	struct sigaction sa = { .sa_handler = spray_sigbus };
	volatile uint32_t *w;

	me = tgr_node(t);
	if ((size_t)(me + 1) * items * 4 > tgr_seg_size(seg))
		die_msg("spray: node %u's row is outside the segment", me);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	if (sigsetjmp(spray_fault, 1)) {
		if (++faults > 5)
			die("spray: stores still refused after 5 imports", -EIO);
		tgr_unimport(seg);
		seg = spray_import(t, node, segid, &tries);
	}
	w = ptr_or_die(seg, (size_t)me * items * 4);
	for (; i < items; i++)
		tgr_write32(&w[i], spray_item(me, i));
	printf("ok   spray: %u writes to node %u, %u refused stores imported again\n",
	       items, node, faults);
	tgr_close(t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	char **av = argv + 2;
	int ac = argc - 2;

	tool_name = "tgrbench";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "host") && ac == 2)
		return cmd_host(av);
	if (!strcmp(cmd, "read") && ac == 3)
		return cmd_load(av, 0);
	if (!strcmp(cmd, "fetch_inc") && ac == 3)
		return cmd_load(av, 1);
	if (!strcmp(cmd, "pp-host") && ac == 3)
		return cmd_pp_host(av);
	if (!strcmp(cmd, "pp-peer") && ac == 5)
		return cmd_pp_peer(av);
	if (!strcmp(cmd, "rate-recv") && (ac == 4 || ac == 5))
		return cmd_rate_recv(av, ac);
	if (!strcmp(cmd, "rate-send") && ac == 5)
		return cmd_rate_send(av);
	if (!strcmp(cmd, "tally") && ac == 4)
		return cmd_tally(av);
	if (!strcmp(cmd, "spray") && ac == 3)
		return cmd_spray(av);
	usage();
}
