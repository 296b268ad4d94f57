/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tgrcheck: libtgr and tgr.ko checks on a cluster (tests/cluster/tgr.sh).
 * One "ok ..." or "FAIL ..." line per check; exit status 1 if any failed,
 * 2 on bad usage.
 *
 *   tgrcheck info
 *   tgrcheck hold SEGFILE SECONDS
 *       export a mailbox page (READ, WRITE, ATOMIC), write its segid to
 *       SEGFILE, keep it SECONDS (or until killed)
 *   tgrcheck req-recv SEGFILE BYTES COPIES SENDERS ITEMS TIMEOUT_S
 *       create a REQ queue of BYTES with COPIES overflow buffers, write its
 *       segid to SEGFILE, dequeue SENDERS x ITEMS items (node << 24 | seq)
 *       and check each came once, in per-sender order, and that the
 *       queue overflowed
 *   tgrcheck req-send NODE SEGID ITEMS [GOFILE]
 *       open the remote queue; with GOFILE print "ready" and start only
 *       when GOFILE exists (so every sender has its queue open before
 *       any floods the receiver); then enqueue ITEMS (node << 24 | seq)
 *   tgrcheck finc-host SEGFILE EXPECTED DONEFILE TIMEOUT_S
 *       export a counter (mailbox word 8), wait until DONEFILE exists
 *       (the caller makes it once every finc has exited), then check the
 *       counter is exactly EXPECTED
 *   tgrcheck finc NODE SEGID COUNT
 *       COUNT fetch_incs of that counter; prints the sum of the results.
 *       A remote read at the end: it is answered only after everything
 *       this node sent the counter's node before (per-pair order), so no
 *       increment of ours is still on its way when we exit
 *   tgrcheck guard SEGFILE SECONDS
 *       two pages filled with a pattern: one exported READ-only, one
 *       exported and withdrawn; writes "ro gone" segids to SEGFILE, then
 *       checks after SECONDS that both are untouched, and that it saw
 *       refused requests (VIOL_IN events): run attack meanwhile
 *   tgrcheck attack NODE RO_SEGID GONE_SEGID
 *       what must be refused: importing the withdrawn segment (ENOENT),
 *       asking WRITE of the read-only one (EACCES), mapping its window
 *       writable (EACCES), and stores forced through the remote export
 *       check (TGR_IOC_FORCE_WRITE, root): VIOL_OUT events
 *   tgrcheck mcast GROUP NODES ROUNDS GOFILE TIMEOUT_S
 *       join multicast GROUP with one page; print "ready"; when GOFILE
 *       appears, store ROUNDS values into this node's word (1 + node) and
 *       into the shared word 0, each through the group; wait until every
 *       one of NODES members' last value arrived; print the shared word,
 *       which must be the same at every member (one order for all)
 *   tgrcheck read-after NODE SEGID GOFILE TIMEOUT_S
 *       import and read once; print "ready"; when GOFILE appears read
 *       again and expect SIGBUS (BUS_ADRERR at that address) within
 *       TIMEOUT_S: the node is down or the exporter gone
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/check.h"
#include "common/fault.h"
#include "tgrtool.h"

#define PATTERN(i)	(0x5a000000u | (i))
#define FINC_WORD	8

static void usage(void)
{
	fprintf(stderr,
		"usage: tgrcheck info\n"
		"       tgrcheck hold SEGFILE SECONDS\n"
		"       tgrcheck req-recv SEGFILE BYTES COPIES SENDERS ITEMS TIMEOUT_S\n"
		"       tgrcheck req-send NODE SEGID ITEMS [GOFILE]\n"
		"       tgrcheck finc-host SEGFILE EXPECTED DONEFILE TIMEOUT_S\n"
		"       tgrcheck finc NODE SEGID COUNT\n"
		"       tgrcheck mcast GROUP NODES ROUNDS GOFILE TIMEOUT_S\n"
		"       tgrcheck guard SEGFILE SECONDS\n"
		"       tgrcheck attack NODE RO_SEGID GONE_SEGID\n"
		"       tgrcheck read-after NODE SEGID GOFILE TIMEOUT_S\n");
	exit(2);
}

static int cmd_info(void)
{
	tgr_t *t = open_or_die();
	struct tgr_info in;
	int err = tgr_info(t, &in);

	if (err)
		die("info", err);
	printf("ok   info: node %u of %u, ctx %u, window %u pages (%u free), mirror %u MiB, %s\n",
	       in.node, in.nodes, in.ctx, in.win_pages, in.win_free,
	       in.mirror_mb, in.stopped ? "NI stopped" : "NI running");
	tgr_close(t);
	return 0;
}

static int cmd_hold(char **av)
{
	uint32_t secs = arg_u32(av[1], "SECONDS");
	tgr_t *t = open_or_die();
	struct mailbox mb;

	mailbox_create(t, &mb);
	mb.w[0] = 0x600df00d;
	write_ids(av[0], &mb.segid, 1);
	printf("ok   hold: node %u exports segid %u\n", tgr_node(t), mb.segid);
	sleep(secs);
	tgr_close(t);
	return 0;
}

/* ---- REQ ---------------------------------------------------------------- */

static int cmd_req_recv(char **av)
{
	uint32_t bytes = arg_u32(av[1], "BYTES"), copies = arg_u32(av[2], "COPIES");
	uint32_t senders = arg_u32(av[3], "SENDERS"), items = arg_u32(av[4], "ITEMS");
	uint32_t timeout = arg_u32(av[5], "TIMEOUT_S");
	uint32_t total = senders * items, got = 0, seen_senders = 0;
	uint32_t next[256] = { 0 }, dups = 0, gaps = 0, first_bad = 0;
	tgr_t *t = open_or_die();
	struct tgr_q_stats st;
	tgr_q_t *q;
	double start, last;
	uint32_t segid, n;
	int err;

	if (!senders || senders > 255 || !items || items > 0xffffff)
		die_msg("SENDERS must be 1..255 and ITEMS 1..16777215");
	err = tgr_q_create(t, bytes, copies, &q);
	if (err)
		die("queue create", err);
	segid = tgr_q_segid(q);
	write_ids(av[0], &segid, 1);
	printf("ok   req-recv: queue of %u bytes, %u overflow buffers, segid %u\n",
	       bytes, copies, segid);
	start = last = now_us();
	while (got < total) {
		uint32_t item, who, seq;

		err = tgr_deq(q, &item);
		if (err < 0)
			die("deq", err);
		if (err == 0) {
			if (now_us() - last > timeout * 1e6)
				break;
			continue;
		}
		last = now_us();
		got++;
		who = item >> 24;
		seq = item & 0xffffff;
		if (next[who] == 0 && seq == 0)
			seen_senders++;
		if (seq == next[who]) {
			next[who]++;
		} else {
			if (!first_bad)
				first_bad = item;
			if (seq < next[who])
				dups++;
			else
				gaps++;
			next[who] = seq + 1;
		}
	}
	tgr_q_stats(q, &st);
	CHECK(got == total, "req-recv: %u of %u items dequeued in %.1f s", got,
	      total, (last - start) / 1e6);
	CHECK(!dups && !gaps, "req-recv: each item once, in per-sender order (%u repeated or reordered, %u skipped; first bad %#x)",
	      dups, gaps, first_bad);
	for (n = 0; n < 256; n++)
		if (next[n])
			printf("     sender node %u: %u items\n", n, next[n]);
	CHECK(seen_senders == senders, "req-recv: %u senders seen, %u expected",
	      seen_senders, senders);
	CHECK(st.overflows > 0, "req-recv: the queue overflowed %u times (%u deferred by a running deq, %u without a free buffer, %u relinks, %u resets)",
	      st.overflows, st.deferred, st.nofree, st.relinks, st.lost);
	CHECK(!st.lost && !st.full, "req-recv: no queue reset, no overflow left pending");
	tgr_close(t);
	return fails ? 1 : 0;
}

static int cmd_req_send(char **av)
{
	uint32_t node = arg_u32(av[0], "NODE"), segid = arg_u32(av[1], "SEGID");
	uint32_t items = arg_u32(av[2], "ITEMS"), seq, me;
	tgr_t *t = open_or_die();
	tgr_rq_t *rq;
	double t0;
	int err = tgr_q_open_remote(t, node, segid, &rq);

	if (err)
		die("open of the remote queue", err);
	fail_on_sigbus("req-send");
	if (items > 0xffffff)
		die_msg("ITEMS must be below 16777216");
	if (av[3]) {
		printf("ready\n");
		fflush(stdout);
		wait_file(av[3], INFINITY, 20);
	}
	me = tgr_node(t);
	t0 = now_us();
	for (seq = 0; seq < items; seq++)
		tgr_enq(rq, me << 24 | seq);
	printf("ok   req-send: %u items to node %u in %.2f s\n", items, node,
	       (now_us() - t0) / 1e6);
	tgr_close(t);
	return 0;
}

/* ---- fetch_inc ------------------------------------------------------------ */

static int cmd_finc_host(char **av)
{
	uint32_t expected = arg_u32(av[1], "EXPECTED");
	uint32_t timeout = arg_u32(av[3], "TIMEOUT_S");
	tgr_t *t = open_or_die();
	struct mailbox mb;

	mailbox_create(t, &mb);
	write_ids(av[0], &mb.segid, 1);
	/* every finc has exited: each of its increments has landed here */
	CHECK(!wait_file(av[2], now_s() + timeout, 20),
	      "finc-host: %s appeared within %u s", av[2], timeout);
	CHECK(mb.w[FINC_WORD] == expected, "finc-host: the counter is %u, expected exactly %u",
	      mb.w[FINC_WORD], expected);
	tgr_close(t);
	return fails ? 1 : 0;
}

static int cmd_finc(char **av)
{
	uint32_t node = arg_u32(av[0], "NODE"), segid = arg_u32(av[1], "SEGID");
	uint32_t count = arg_u32(av[2], "COUNT"), i, v, last = 0;
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid,
				       TGR_R_ATOMIC | TGR_R_READ);
	uint64_t sum = 0;
	int rising = 1, err;
	double t0 = now_us();

	fail_on_sigbus("finc");

	for (i = 0; i < count; i++) {
		err = tgr_fetch_inc(seg, FINC_WORD * 4, &v);
		if (err)
			die("fetch_inc", err);
		rising &= i == 0 || v > last;
		last = v;
		sum += v;
	}
	/* answered after our last increment landed: nothing left in flight */
	v = tgr_read32(tgr_ptr(seg, FINC_WORD * 4));
	CHECK(!count || v > last, "finc: the counter reads %u after our last result %u",
	      v, last);
	CHECK(rising, "finc: %u fetch_incs, each result above the previous (sum %llu) in %.2f s",
	      count, (unsigned long long)sum, (now_us() - t0) / 1e6);
	tgr_close(t);
	return fails ? 1 : 0;
}

/* ---- multicast ------------------------------------------------------------- */

static int cmd_mcast(char **av)
{
	uint32_t group = arg_u32(av[0], "GROUP"), nodes = arg_u32(av[1], "NODES");
	uint32_t rounds = arg_u32(av[2], "ROUNDS"), timeout = arg_u32(av[4], "TIMEOUT_S");
	volatile uint32_t *local = page_alloc(TGR_PAGE_SIZE);
	volatile uint32_t *shared, *mine;
	tgr_t *t = open_or_die();
	uint32_t me = tgr_node(t), n, r, arrived = 0;
	tgr_mcast_t *m;
	double end;
	int err;

	if (!nodes || nodes > TGR_PAGE_SIZE / 4 - 1 || me >= nodes || !rounds ||
	    rounds > 0xffff)
		die_msg("NODES must be 1..1023 and hold this node, ROUNDS 1..65535");
	fail_on_sigbus("mcast");
	err = tgr_mcast_join(t, group, (void *)local, TGR_PAGE_SIZE, &m);
	if (err)
		die("join of the multicast group", err);
	shared = tgr_mcast_ptr(m, 0);
	mine = tgr_mcast_ptr(m, 4 * (1 + me));
	printf("ready\n");
	wait_file(av[3], INFINITY, 20);
	/* word 0 before our word: whoever sees our last round sees all */
	for (r = 1; r <= rounds; r++) {
		*shared = me << 16 | r;
		*mine = me << 16 | r;
	}
	end = now_us() + timeout * 1e6;
	while (now_us() < end) {
		arrived = 0;
		for (n = 0; n < nodes; n++)
			arrived += local[1 + n] == (n << 16 | rounds);
		if (arrived == nodes)
			break;
		usleep(1000);
	}
	CHECK(arrived == nodes, "mcast: the last update of %u of %u members arrived",
	      arrived, nodes);
	/* not a check here: the caller compares it across the members */
	printf("     mcast: shared word %#x\n", local[0]);
	tgr_mcast_leave(m);
	tgr_close(t);
	return fails ? 1 : 0;
}

/* ---- protection ------------------------------------------------------------ */

static int cmd_guard(char **av)
{
	uint32_t secs = arg_u32(av[1], "SECONDS"), ids[2], i;
	uint32_t *mem = page_alloc(2 * TGR_PAGE_SIZE), bad = 0;
	unsigned int viol[32] = { 0 }, lost = 0, nviol = 0;
	tgr_t *t = open_or_die();
	struct tgr_event ev[16];
	double end;
	int err, n, k;

	for (i = 0; i < 2 * TGR_PAGE_SIZE / 4; i++)
		mem[i] = PATTERN(i);
	err = tgr_export(t, mem, TGR_PAGE_SIZE, TGR_R_READ, &ids[0]);
	if (err)
		die("export (read-only)", err);
	err = tgr_export(t, mem + TGR_PAGE_SIZE / 4, TGR_PAGE_SIZE,
			 TGR_R_READ | TGR_R_WRITE, &ids[1]);
	if (!err)
		err = tgr_unexport(t, ids[1]);
	if (err)
		die("export and unexport", err);
	write_ids(av[0], ids, 2);
	printf("ok   guard: read-only segid %u, withdrawn segid %u\n", ids[0],
	       ids[1]);
	end = now_us() + secs * 1e6;
	while (now_us() < end) {
		n = tgr_poll_events(t, ev, 16, 200, &lost);
		if (n < 0)
			die("events", n);
		for (k = 0; k < n; k++) {
			char buf[160];

			printf("     event: %s\n", tgr_event_str(&ev[k], buf, sizeof(buf)));
			if (ev[k].type == TGR_EV_VIOL_IN) {
				nviol++;
				viol[ev[k].reason & 31]++;
			}
		}
	}
	for (i = 0; i < 2 * TGR_PAGE_SIZE / 4; i++)
		bad += mem[i] != PATTERN(i);
	CHECK(bad == 0, "guard: both pages untouched (%u words changed)", bad);
	CHECK(nviol > 0, "guard: %u refused requests (RIGHTS %u, UNEXPORTED %u, STALE %u), %u events lost",
	      nviol, viol[TGR_ERR_RIGHTS], viol[TGR_ERR_UNEXPORTED],
	      viol[TGR_ERR_STALE], lost);
	tgr_close(t);
	return fails ? 1 : 0;
}

/* Wait up to 5 s for a VIOL_OUT event; its reason, or -1. */
static int wait_viol_out(tgr_t *t)
{
	struct tgr_event ev[8];
	double end = now_us() + 5e6;
	int n, k;

	while (now_us() < end) {
		n = tgr_poll_events(t, ev, 8, 200, NULL);
		if (n < 0)
			die("events", n);
		for (k = 0; k < n; k++)
			if (ev[k].type == TGR_EV_VIOL_OUT)
				return (int)ev[k].reason;
	}
	return -1;
}

static int force_write(tgr_t *t, uint32_t node, uint32_t segid)
{
	struct tgr_force_write fw = {
		.node = node, .segid = segid, .page = 0, .offset = 16,
		.value = 0xbadc0de,
	};

	return ioctl(tgr_fd(t), TGR_IOC_FORCE_WRITE, &fw) ? -errno : 0;
}

static int cmd_attack(char **av)
{
	uint32_t node = arg_u32(av[0], "NODE"), ro = arg_u32(av[1], "RO_SEGID");
	uint32_t gone = arg_u32(av[2], "GONE_SEGID");
	tgr_t *t = open_or_die();
	tgr_seg_t *seg;
	void *p;
	int err, reason;

	err = tgr_import(t, node, gone, 0, &seg);
	CHECK(err == -ENOENT, "attack: import of a withdrawn segment refused: %s",
	      err ? tgr_strerror(err) : "it succeeded");
	err = tgr_import(t, node, ro, TGR_R_READ | TGR_R_WRITE, &seg);
	CHECK(err == -EACCES, "attack: import asking WRITE of a read-only segment refused: %s",
	      err ? tgr_strerror(err) : "it succeeded");
	seg = import_or_die(t, node, ro, 0);
	CHECK(tgr_seg_rights(seg) == TGR_R_READ, "attack: a plain import gets READ only (rights %#x)",
	      tgr_seg_rights(seg));
	p = mmap(NULL, TGR_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 tgr_fd(t), (off_t)tgr_seg_window_cookie(seg));
	err = p == MAP_FAILED ? -errno : 0;
	CHECK(err == -EACCES, "attack: a writable mapping of the read-only import refused: %s",
	      err ? tgr_strerror(err) : "it was mapped");
	if (p != MAP_FAILED)
		munmap(p, TGR_PAGE_SIZE);
	CHECK(tgr_read32(tgr_ptr(seg, 0)) == PATTERN(0), "attack: the read-only import reads the exporter's data");

	err = force_write(t, node, ro);
	if (err) {
		CHECK(0, "attack: forced store into the read-only segment: %s",
		      tgr_strerror(err));
	} else {
		reason = wait_viol_out(t);
		CHECK(reason == TGR_ERR_RIGHTS, "attack: forced store into the read-only segment refused remotely: %s",
		      reason < 0 ? "no VIOL_OUT event" : tgr_reason_name(reason));
	}
	err = force_write(t, node, gone);
	if (err == -ENOENT) {
		CHECK(1, "attack: forced store into the withdrawn segment refused locally: %s",
		      tgr_strerror(err));
	} else if (err) {
		CHECK(0, "attack: forced store into the withdrawn segment: %s",
		      tgr_strerror(err));
	} else {
		reason = wait_viol_out(t);
		CHECK(reason == TGR_ERR_UNEXPORTED || reason == TGR_ERR_STALE,
		      "attack: forced store into the withdrawn segment refused remotely: %s",
		      reason < 0 ? "no VIOL_OUT event" : tgr_reason_name(reason));
	}
	tgr_close(t);
	return fails ? 1 : 0;
}

/* ---- SIGBUS ---------------------------------------------------------------- */

static int cmd_read_after(char **av)
{
	uint32_t node = arg_u32(av[0], "NODE"), segid = arg_u32(av[1], "SEGID");
	uint32_t timeout = arg_u32(av[3], "TIMEOUT_S");
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid, TGR_R_READ);
	volatile void *p = tgr_ptr(seg, 0);
	double t0;
	uint32_t v;

	fault_catch(SIGBUS);
	v = tgr_read32(p);
	CHECK(v != 0xffffffffu, "read-after: the first remote read works (%#x)", v);
	printf("ready\n");
	wait_file(av[2], INFINITY, 100);
	t0 = now_us();
	if (sigsetjmp(fault_jmp, 1) == 0) {
		v = tgr_read32(p);
		CHECK(0, "read-after: the read returned %#x after %.0f ms instead of SIGBUS",
		      v, (now_us() - t0) / 1e3);
	} else {
		double ms = (now_us() - t0) / 1e3;

		CHECK(fault_code == BUS_ADRERR && fault_addr == (void *)p,
		      "read-after: SIGBUS (code %d, address %s) after %.0f ms",
		      (int)fault_code,
		      fault_addr == (void *)p ? "the load's" : "another",
		      ms);
		CHECK(ms <= timeout * 1e3, "read-after: SIGBUS within %u s", timeout);
	}
	tgr_close(t);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	char **av = argv + 2;
	int ac = argc - 2;

	tool_name = "tgrcheck";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "info") && ac == 0)
		return cmd_info();
	if (!strcmp(cmd, "hold") && ac == 2)
		return cmd_hold(av);
	if (!strcmp(cmd, "req-recv") && ac == 6)
		return cmd_req_recv(av);
	if (!strcmp(cmd, "req-send") && (ac == 3 || ac == 4))
		return cmd_req_send(av);
	if (!strcmp(cmd, "finc-host") && ac == 4)
		return cmd_finc_host(av);
	if (!strcmp(cmd, "finc") && ac == 3)
		return cmd_finc(av);
	if (!strcmp(cmd, "guard") && ac == 2)
		return cmd_guard(av);
	if (!strcmp(cmd, "attack") && ac == 3)
		return cmd_attack(av);
	if (!strcmp(cmd, "mcast") && ac == 5)
		return cmd_mcast(av);
	if (!strcmp(cmd, "read-after") && ac == 4)
		return cmd_read_after(av);
	usage();
}
