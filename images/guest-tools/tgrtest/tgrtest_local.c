// SPDX-License-Identifier: GPL-2.0
/*
 * tgrtest local: every driver path on one node, through the card's
 * loopback (PTEs naming this node take the same export check and queue
 * path as remote ones).
 */
#include "tgrtest.h"

/* ---- one node, loopback ---- */

struct sender_arg {
	tgr_t *t;
	tgr_rq_t *rq;
	uint32_t n;
};

static void *sender_main(void *p)
{
	struct sender_arg *a = p;
	uint32_t i;

	if (tgr_thread_register(a->t))
		return NULL;
	for (i = 0; i < a->n; i++) {
		tgr_enq(a->rq, i);
		if (i % 64 == 63)
			sched_yield();
	}
	tgr_thread_unregister(a->t);
	return NULL;
}

static void local_rw(tgr_t *t, unsigned int node, uint32_t *buf)
{
	uint32_t segid, old = 0, i, v, mem;
	tgr_seg_t *seg;
	int err;

	for (i = 0; i < PAGE / 4; i++)
		buf[i] = pattern(0, i);
	err = tgr_export(t, buf, PAGE, TGR_R_READ | TGR_R_WRITE | TGR_R_ATOMIC,
			 &segid);
	if (err) {
		fail("local export", "%s", tgr_strerror(err));
		return;
	}
	seg = import_or_die(t, node, segid, 0);
	if (tgr_read32(tgr_ptr(seg, 40)) == pattern(0, 10))
		ok("loopback read");
	else
		fail("loopback read", "%08x", tgr_read32(tgr_ptr(seg, 40)));
	/*
	 * A read after a write to the same node sees it (in-order pair);
	 * the card writes buf behind the compiler's back: volatile.
	 */
	tgr_write32(tgr_ptr(seg, 44), 0xcafe0001);
	v = tgr_read32(tgr_ptr(seg, 44));
	mem = ((volatile uint32_t *)buf)[11];
	if (v == 0xcafe0001 && mem == 0xcafe0001)
		ok("loopback write, then read: in order, in the exporter's memory");
	else
		fail("loopback write, then read", "read %08x, memory %08x", v,
		     mem);
	buf[16] = 100;
	for (i = 0; i < 10; i++)
		tgr_fetch_inc(seg, 64, &old);
	if (old == 109 && buf[16] == 110)
		ok("loopback fetch_inc x10");
	else
		fail("loopback fetch_inc", "old %u word %u", old, buf[16]);

	/* the exporter withdraws: the import goes stale */
	tgr_unexport(t, segid);
	tgr_write32(tgr_ptr(seg, 44), 1);	/* refused: STALE */
	{
		struct pollfd pfd = { .fd = tgr_fd(t), .events = POLLIN };

		poll(&pfd, 1, 2000);
		if (pfd.revents & POLLERR)
			ok("a stale import raises POLLERR");
		else
			fail("a stale import raises POLLERR", "revents %#x",
			     pfd.revents);
	}
	usleep(100000);	/* the driver zaps the mapping from a work item */
	expect_sigbus("access to a stale import", tgr_ptr(seg, 8));
	tgr_unimport(seg);
}

static unsigned long driver_stat(const char *name)
{
	FILE *f = fopen("/sys/class/misc/tgr0/device/driver_stats", "r");
	char key[32];
	unsigned long v, found = 0;

	if (!f)
		return 0;
	while (fscanf(f, "%31s %lu", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/* A load that the target refuses (STALE): the driver's SIGBUS path. */
static void local_stale_load(tgr_t *t, unsigned int node, uint32_t *buf)
{
	unsigned long before = driver_stat("sigbus");
	tgr_seg_t *seg;
	uint32_t segid;

	if (tgr_export(t, buf, PAGE, TGR_R_READ, &segid)) {
		fail("stale load: export", "failed");
		return;
	}
	seg = import_or_die(t, node, segid, TGR_R_READ);
	tgr_unexport(t, segid);
	expect_sigbus("a load the target refuses (STALE)", tgr_ptr(seg, 12));
	if (driver_stat("sigbus") > before)
		ok("that SIGBUS came from the driver's RREAD_FAIL handler");
	else
		fail("that SIGBUS came from the driver's RREAD_FAIL handler",
		     "sigbus stat %lu", driver_stat("sigbus"));
	tgr_unimport(seg);
}

/* Access counter: 3 accesses take it to 0, POLLIN and a CNT_ZERO event. */
static void local_counter(tgr_t *t, unsigned int node, uint32_t *buf)
{
	struct pollfd pfd = { .fd = tgr_fd(t), .events = POLLIN };
	struct tgr_event ev[8];
	unsigned int i, n;
	tgr_seg_t *seg;
	uint32_t segid;
	int got;

	if (tgr_export(t, buf, PAGE, TGR_R_READ, &segid)) {
		fail("counter: export", "failed");
		return;
	}
	seg = import_or_die(t, node, segid, TGR_R_READ);
	tgr_poll_events(t, ev, 8, 0, NULL);	/* drop older ones */
	if (tgr_counter_arm(seg, 0, 3)) {
		fail("COUNTER_ARM", "failed");
		goto out;
	}
	for (i = 0; i < 3; i++)
		(void)tgr_read32(tgr_ptr(seg, 4 * i));
	poll(&pfd, 1, 2000);
	got = tgr_poll_events(t, ev, 8, 0, NULL);
	for (i = 0, n = 0; got > 0 && i < (unsigned int)got; i++)
		n += ev[i].type == TGR_EV_CNT_ZERO;
	if ((pfd.revents & POLLIN) && n == 1)
		ok("access counter: 3 loads, then POLLIN and one CNT_ZERO event");
	else
		fail("access counter", "revents %#x, %u CNT_ZERO of %d events",
		     pfd.revents, n, got);
out:
	tgr_unimport(seg);
	tgr_unexport(t, segid);
}

/* Multicast: a store through the group page comes back to our copy. */
static void local_mcast(tgr_t *t, uint32_t *buf)
{
	tgr_mcast_t *m;
	int err, i;

	memset(buf, 0, PAGE);
	err = tgr_mcast_join(t, 5, buf, PAGE, &m);
	if (err) {
		fail("mcast join", "%s", tgr_strerror(err));
		return;
	}
	tgr_write32(tgr_mcast_ptr(m, 128), 0xbeef0005);
	for (i = 0; i < 100 && buf[32] != 0xbeef0005; i++)
		usleep(10000);
	if (buf[32] == 0xbeef0005 &&
	    tgr_read32(tgr_mcast_ptr(m, 128)) == 0xbeef0005)
		ok("multicast store reaches the member copy; loads read it");
	else
		fail("multicast", "copy %08x", buf[32]);
	tgr_mcast_leave(m);
}

/* User-level DMA and fetch between two pages of ours, through the card. */
static void local_dma(tgr_t *t, unsigned int node, uint32_t *src,
		      uint32_t *dst)
{
	uint32_t segid, i;
	tgr_seg_t *seg;
	tgr_mem_t *m;
	int err;

	for (i = 0; i < PAGE / 4; i++) {
		src[i] = pattern(7, i);
		dst[i] = 0;
	}
	if (tgr_export(t, dst, PAGE, TGR_R_READ | TGR_R_WRITE, &segid) ||
	    tgr_mem_register(t, src, PAGE, &m)) {
		fail("dma: export/register", "failed");
		return;
	}
	seg = import_or_die(t, node, segid, 0);
	err = tgr_dma_put(m, src, seg, 0, PAGE);
	if (!err)
		err = tgr_wait_done(t, 5000);
	/* a put is done when sent; the target applies it a little later */
	for (i = 0; !err && i < 200 && memcmp(src, dst, PAGE); i++)
		usleep(10000);
	if (!err && !memcmp(src, dst, PAGE))
		ok("DMA put of a page (mirror argument + shadow trigger)");
	else
		fail("DMA put", "%s, word0 %08x", tgr_strerror(err), dst[0]);
	dst[5] = 0x12345678;
	err = tgr_fetch(m, &src[9], seg, 20, 4);
	if (!err)
		err = tgr_wait_done(t, 5000);
	if (!err && src[9] == 0x12345678)
		ok("fetch(remote, local)");
	else
		fail("fetch", "%s, word %08x", tgr_strerror(err), src[9]);
	tgr_unimport(seg);
	tgr_mem_unregister(m);
	tgr_unexport(t, segid);
}

static void local_req(tgr_t *t, unsigned int node)
{
	uint32_t next[1] = { 0 };
	struct sender_arg a = { .t = t, .n = 20000 };
	pthread_t th;
	tgr_q_t *q;
	int err;

	err = tgr_q_create(t, 256, 16, &q);
	if (err) {
		fail("q_create 256", "%s", tgr_strerror(err));
		return;
	}
	err = tgr_q_open_remote(t, node, tgr_q_segid(q), &a.rq);
	if (err) {
		fail("q_open_remote (loopback)", "%s", tgr_strerror(err));
		return;
	}
	pthread_create(&th, NULL, sender_main, &a);
	if (!drain(q, 1, a.n, now_s() + 120, next))
		ok("loopback REQ: 20000 items once each, in order");
	else
		fail("loopback REQ", "see above");
	pthread_join(th, NULL);
	print_qstats(q, "loopback queue");
	tgr_q_close_remote(a.rq);
	tgr_q_destroy(q);
}

int cmd_local(void)
{
	tgr_t *t = open_or_die();
	unsigned int node = tgr_node(t);
	uint32_t *buf = alloc_pages(2);

	local_rw(t, node, buf);
	local_stale_load(t, node, buf);
	local_counter(t, node, buf);
	local_mcast(t, buf);
	local_dma(t, node, buf, buf + PAGE / 4);
	local_req(t, node);
	tgr_close(t);
	return failures ? 1 : 0;
}

