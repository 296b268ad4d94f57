// SPDX-License-Identifier: GPL-2.0
/*
 * tgrtest: the data path between nodes: serve, check, read, write, finc,
 * the REQ queue (qrecv, qsend, qfill), threads, SIGBUS and stale imports.
 */
#include "tgrtest.h"
#include "common/fault.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int cmd_serve(uint32_t pages, const char *rights, uint32_t secs)
{
	tgr_t *t = open_or_die();
	uint32_t *buf = alloc_pages(pages), segid, i, sum = 0;
	double end = now_s() + secs;
	int err;

	for (i = 0; i < pages * (PAGE / 4); i++)
		buf[i] = pattern(i / (PAGE / 4), i % (PAGE / 4));
	err = tgr_export(t, buf, (size_t)pages * PAGE, parse_rights(rights),
			 &segid);
	if (err) {
		printf("FAIL export: %s\n", tgr_strerror(err));
		return 1;
	}
	printf("segid %u\n", segid);
	fflush(stdout);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	while (!stop && now_s() < end)
		usleep(100000);
	for (i = 0; i < pages * (PAGE / 4); i++)
		sum = sum * 31 + buf[i];
	printf("sum %08x word0 %08x word1 %08x\n", sum, buf[0], buf[1]);
	tgr_close(t);
	return 0;
}

int cmd_check(uint32_t node, uint32_t segid, uint32_t pages)
{
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid, TGR_R_READ);
	uint32_t i, bad = 0, v;
	double t0 = now_s();

	for (i = 0; i < pages * (PAGE / 4); i += 97) {
		v = tgr_read32(tgr_ptr(seg, (size_t)i * 4));
		if (v != pattern(i / (PAGE / 4), i % (PAGE / 4)) && bad++ < 4)
			printf("word %u: %08x\n", i, v);
	}
	if (bad)
		fail("check", "%u words differ", bad);
	else
		printf("ok check: %u pages read back (%.0f us a load)\n", pages,
		       (now_s() - t0) * 1e6 / (pages * (PAGE / 4) / 97 + 1));
	tgr_close(t);
	return bad ? 1 : 0;
}

int cmd_read(uint32_t node, uint32_t segid, uint32_t off)
{
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid, TGR_R_READ);
	volatile void *p = tgr_ptr(seg, off);

	if (!p) {
		printf("FAIL offset %u outside the segment\n", off);
		return 1;
	}
	printf("%08x\n", tgr_read32(p));
	tgr_close(t);
	return 0;
}

int cmd_write(uint32_t node, uint32_t segid, uint32_t off,
		     uint32_t val)
{
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid, TGR_R_WRITE);
	volatile void *p = tgr_ptr(seg, off);

	if (!p) {
		printf("FAIL offset %u outside the segment\n", off);
		return 1;
	}
	tgr_write32(p, val);
	printf("ok wrote %08x\n", val);
	tgr_close(t);
	return 0;
}

int cmd_finc(uint32_t node, uint32_t segid, uint32_t off, uint32_t n)
{
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid, TGR_R_ATOMIC);
	uint32_t i, old = 0, prev = 0;
	double t0 = now_s();
	int err;

	for (i = 0; i < n; i++) {
		err = tgr_fetch_inc(seg, off, &old);
		if (err) {
			printf("FAIL fetch_inc: %s\n", tgr_strerror(err));
			return 1;
		}
		if (i && old <= prev) {
			printf("FAIL fetch_inc went back: %u after %u\n", old,
			       prev);
			return 1;
		}
		prev = old;
	}
	printf("ok finc %u last %u (%.1f us each)\n", n, old,
	       (now_s() - t0) * 1e6 / (n ? n : 1));
	tgr_close(t);
	return 0;
}

/* ---- REQ ---- */

int drain(tgr_q_t *q, uint32_t senders, uint32_t n, double end,
		 uint32_t *next)
{
	uint64_t want = (uint64_t)senders * n, got = 0, bad = 0;
	uint32_t item, s, seq;
	int r;

	while (got < want && now_s() < end) {
		r = tgr_deq(q, &item);
		if (r < 0) {
			printf("FAIL deq: %s\n", tgr_strerror(r));
			return 1;
		}
		if (!r) {
			sched_yield();
			continue;
		}
		got++;
		s = item >> 24;
		seq = item & 0xffffff;
		if (s >= senders || seq != next[s]) {
			if (bad++ < 8)
				printf("item %08x: sender %u expected seq %u\n",
				       item, s, s < senders ? next[s] : 0);
			if (s < senders)
				next[s] = seq + 1;
			continue;
		}
		next[s]++;
	}
	if (got < want || bad) {
		printf("FAIL qrecv: %" PRIu64 " of %" PRIu64 " items, %" PRIu64
		       " out of order\n", got, want, bad);
		return 1;
	}
	return 0;
}

void print_qstats(tgr_q_t *q, const char *who)
{
	struct tgr_q_stats st;

	tgr_q_stats(q, &st);
	printf("%s: overflows %u deferred %u nofree %u relinks %u lost %u full %u\n",
	       who, st.overflows, st.deferred, st.nofree, st.relinks, st.lost,
	       st.full);
}

int cmd_qrecv(uint32_t bytes, uint32_t copies, uint32_t senders,
		     uint32_t n, uint32_t secs)
{
	uint32_t next[MAX_SENDERS] = { 0 };
	tgr_t *t = open_or_die();
	double t0 = now_s();
	tgr_q_t *q;
	int err, ret;

	if (senders > MAX_SENDERS || n >= 1u << 24)
		return 2;
	err = tgr_q_create(t, bytes, copies, &q);
	if (err) {
		printf("FAIL q_create %u: %s\n", bytes, tgr_strerror(err));
		return 1;
	}
	printf("segid %u\n", tgr_q_segid(q));
	fflush(stdout);
	ret = drain(q, senders, n, t0 + secs, next);
	if (!ret)
		printf("ok qrecv: %u x %u items once each, in order (%.0f items/s)\n",
		       senders, n, senders * n / (now_s() - t0));
	print_qstats(q, "queue");
	tgr_close(t);
	return ret;
}

int cmd_qsend(uint32_t node, uint32_t segid, uint32_t sender,
		     uint32_t n)
{
	tgr_t *t = open_or_die();
	double t0 = now_s();
	tgr_rq_t *rq;
	uint32_t i;
	int err;

	err = tgr_q_open_remote(t, node, segid, &rq);
	if (err) {
		printf("FAIL q_open_remote: %s\n", tgr_strerror(err));
		return 1;
	}
	for (i = 0; i < n; i++)
		tgr_enq(rq, sender << 24 | i);
	printf("ok qsend: %u items (%.0f/s)\n", n, n / (now_s() - t0));
	tgr_close(t);
	return 0;
}

/*
 * Fill our own queue through the loopback without dequeuing, until the NI
 * stops for want of copy buffers, then exit: the driver must resume it.
 */
int cmd_qfill(uint32_t bytes, uint32_t n)
{
	tgr_t *t = open_or_die();
	struct tgr_info info;
	tgr_rq_t *rq;
	tgr_q_t *q;
	uint32_t i;

	if (tgr_info(t, &info) || tgr_q_create(t, bytes, 1, &q) ||
	    tgr_q_open_remote(t, info.node, tgr_q_segid(q), &rq)) {
		printf("FAIL qfill: setup\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		tgr_enq(rq, i);
	usleep(200000);
	tgr_info(t, &info);
	print_qstats(q, "queue");
	printf("%s qfill: NI stopped %u after %u items into %u bytes\n",
	       info.stopped ? "ok" : "FAIL", info.stopped, n, bytes);
	return info.stopped ? 0 : 1;	/* exits without cleaning up */
}

/*
 * A queue owner that holds do-not-preempt-me forever (issue 13, finding
 * 7): it sets dnp in its queue's control page, then fills the queue
 * through the loopback.  The overflow finds dnp set and leaves the NI
 * stopped for every node; the driver must withdraw the queue and resume
 * the NI within its bound (stop_max_ms), and RELINK then fails with
 * ETIMEDOUT.  Meant to run as an unprivileged user.
 */
int cmd_qhog(uint32_t bytes, uint32_t secs)
{
	tgr_t *t = open_or_die();
	struct tgr_req_create rc = { .bytes = bytes, .copies = 1 };
	struct tgr_req_relink rl = { 0 };
	struct tgr_event ev[16];
	struct tgr_ql_ctrl *ctrl;
	struct tgr_info info;
	double t0, stopped_at = 0, resumed_at = 0, end;
	bool withdrawn = false;
	uint8_t *region;
	tgr_rq_t *rq;
	uint32_t i;
	int err, n;

	err = ioc(tgr_fd(t), TGR_IOC_REQ_CREATE, &rc);
	if (err) {
		printf("FAIL qhog: REQ_CREATE: %s\n", strerror(-err));
		return 1;
	}
	region = mmap(NULL, rc.region_bytes, PROT_READ | PROT_WRITE,
		      MAP_SHARED, tgr_fd(t), rc.cookie);
	if (region == MAP_FAILED || tgr_info(t, &info) ||
	    tgr_q_open_remote(t, info.node, rc.segid, &rq)) {
		printf("FAIL qhog: setup\n");
		return 1;
	}
	ctrl = (struct tgr_ql_ctrl *)(region + rc.ctrl_off);
	__atomic_store_n(&ctrl->dnp, 1, __ATOMIC_SEQ_CST);	/* never cleared */
	t0 = now_s();
	for (i = 0; i < bytes / 4; i++)
		tgr_enq(rq, i);
	end = t0 + secs;
	while (now_s() < end) {
		tgr_info(t, &info);
		if (info.stopped && !stopped_at)
			stopped_at = now_s();
		if (stopped_at && !info.stopped && !resumed_at)
			resumed_at = now_s();
		n = tgr_poll_events(t, ev, 16, 0, NULL);
		for (int k = 0; k < n; k++)
			withdrawn |= ev[k].type == TGR_EVENT_QFULL &&
				     ev[k].reason == 2 && ev[k].id == rc.qid;
		if (resumed_at && withdrawn)
			break;
		usleep(20000);
	}
	if (!stopped_at) {
		printf("FAIL qhog: the NI never stopped (%u items into %u bytes)\n",
		       bytes / 4, bytes);
		return 1;
	}
	if (!resumed_at) {
		printf("FAIL qhog: the NI is still stopped after %.1f s\n",
		       now_s() - stopped_at);
		return 1;
	}
	printf("ok qhog: a held dnp stopped the NI for %.0f ms, then it resumed\n",
	       (resumed_at - stopped_at) * 1e3);
	if (withdrawn)
		ok("qhog: the owner was told its queue was withdrawn (QFULL reason 2)");
	else
		fail("qhog: QFULL reason 2", "no such event");
	rl.qid = rc.qid;
	expect("qhog: RELINK of the withdrawn queue", ioc(tgr_fd(t),
	       TGR_IOC_REQ_RELINK, &rl), -ETIMEDOUT);
	{
		struct tgr_id id = { .id = rc.qid };

		expect("qhog: the withdrawn queue can be destroyed",
		       ioc(tgr_fd(t), TGR_IOC_REQ_DESTROY, &id), 0);
	}
	munmap(region, rc.region_bytes);
	tgr_close(t);
	return failures ? 1 : 0;
}

/*
 * Threads that register and exit without unregistering, one that stays
 * registered while the file closes: the driver must free every notifier
 * (rmmod tgr works afterwards).
 */
static void *reg_exit_main(void *p)
{
	return (void *)(long)tgr_thread_register(p);
}

static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv = PTHREAD_COND_INITIALIZER;
static int park_go;

static void *reg_park_main(void *p)
{
	long err = tgr_thread_register(p);

	pthread_mutex_lock(&park_mu);
	while (!park_go)
		pthread_cond_wait(&park_cv, &park_mu);
	pthread_mutex_unlock(&park_mu);
	return (void *)err;
}

int cmd_threads(void)
{
	tgr_t *t = open_or_die();
	pthread_t th[8], parked;
	void *r;
	int i, bad = 0;

	for (i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, reg_exit_main, t);
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], &r);
		bad += r != NULL;
	}
	pthread_create(&parked, NULL, reg_park_main, t);
	usleep(100000);
	tgr_close(t);	/* the parked thread is still registered */
	pthread_mutex_lock(&park_mu);
	park_go = 1;
	pthread_cond_broadcast(&park_cv);
	pthread_mutex_unlock(&park_mu);
	pthread_join(parked, &r);
	bad += r != NULL;
	printf("%s threads: 9 registered threads, 8 exited registered, 1 outlived the file\n",
	       bad ? "FAIL" : "ok");
	return bad ? 1 : 0;
}

/* ---- SIGBUS ---- */

/* The events pending for t, one line each (diagnostics of a failure). */
static void dump_events(tgr_t *t)
{
	struct tgr_event ev[32];
	char line[160];
	int i, n;

	usleep(200000);
	n = tgr_poll_events(t, ev, 32, 0, NULL);
	for (i = 0; i < n; i++)
		printf("  event: %s\n", tgr_event_str(&ev[i], line, sizeof(line)));
}

tgr_t *bus_t;

/* A load through @p must raise SIGBUS (BUS_ADRERR at p). */
int expect_sigbus(const char *what, volatile void *p)
{
	volatile uint32_t v = 0;
	double t0 = now_s();

	fault_catch(SIGBUS);
	if (sigsetjmp(fault_jmp, 1) == 0) {
		v = tgr_read32(p);
		fail(what, "the load returned %08x", v);
		if (bus_t)
			dump_events(bus_t);
		return 1;
	}
	if (fault_code != BUS_ADRERR || fault_addr != (void *)p) {
		fail(what, "SIGBUS code %d at %p, want BUS_ADRERR at %p",
		     (int)fault_code, fault_addr, (void *)p);
		return 1;
	}
	printf("ok %s: SIGBUS BUS_ADRERR at the address after %.0f ms\n",
	       what, (now_s() - t0) * 1e3);
	return 0;
}

/* A fetch_and_increment that must end in SIGBUS (BUS_ADRERR). */
static int expect_sigbus_finc(tgr_seg_t *seg)
{
	double t0 = now_s();
	uint32_t old;

	fault_catch(SIGBUS);
	fault_addr = NULL;
	if (sigsetjmp(fault_jmp, 1) == 0) {
		tgr_fetch_inc(seg, 8, &old);
		fail("fetch_inc on a node that is down", "returned %08x", old);
		return 1;
	}
	if (fault_code != BUS_ADRERR || !fault_addr) {
		fail("fetch_inc on a node that is down", "SIGBUS code %d at %p",
		     (int)fault_code, fault_addr);
		return 1;
	}
	printf("ok fetch_inc on a node that is down: SIGBUS BUS_ADRERR at %p after %.0f ms\n",
	       fault_addr, (now_s() - t0) * 1e3);
	return 0;
}

int cmd_sigbus(uint32_t node, uint32_t segid, bool finc)
{
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid,
				       finc ? TGR_R_ATOMIC : TGR_R_READ);
	int ret;

	bus_t = t;
	printf("imported; waiting 3 s for the peer to go down\n");
	fflush(stdout);
	sleep(3);
	if (finc)
		ret = expect_sigbus_finc(seg);
	else
		ret = expect_sigbus("a read from a node that is down",
				    tgr_ptr(seg, 8));
	tgr_close(t);
	return ret;
}

/*
 * Import, then wait for the import to go stale (the peer restarted or
 * unexported): POLLERR, a STALE event, and SIGBUS on the next access.
 */
int cmd_watch(uint32_t node, uint32_t segid, uint32_t secs)
{
	tgr_t *t = open_or_die();
	tgr_seg_t *seg = import_or_die(t, node, segid, TGR_R_READ);
	struct pollfd pfd = { .fd = tgr_fd(t), .events = POLLIN };
	struct tgr_event ev[16];
	double t0 = now_s();
	int i, n, stale = 0;

	printf("imported; word 0 %08x\n", tgr_read32(tgr_ptr(seg, 0)));
	fflush(stdout);
	while (!stale && now_s() < t0 + secs) {
		if (poll(&pfd, 1, 1000) <= 0 || !(pfd.revents & POLLERR))
			continue;
		n = tgr_poll_events(t, ev, 16, 0, NULL);
		for (i = 0; i < n; i++)
			stale |= ev[i].type == TGR_EVENT_STALE;
	}
	if (!stale) {
		fail("watch", "no STALE event in %u s", secs);
		return 1;
	}
	printf("ok watch: POLLERR and a STALE event after %.1f s\n",
	       now_s() - t0);
	bus_t = t;
	return expect_sigbus("access to the stale import", tgr_ptr(seg, 0));
}

