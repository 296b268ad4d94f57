// SPDX-License-Identifier: GPL-2.0
/*
 * tgrtest: the Telegraphos driver's test tool, run inside the guests.
 *
 *   info                      the card as the driver sees it
 *   bad                       refused ioctls and mmaps (needs no peer;
 *                             uses this node's own card as the "remote")
 *   local                     one node, loopback: export, import, read,
 *                             write, fetch_inc, REQ with overflows, stale
 *   serve PAGES RIGHTS SECS   export PAGES pages filled with a pattern
 *                             (rights: any of r w a), print "segid N",
 *                             stay SECS seconds, then print the checksum
 *   check NODE SEGID PAGES    read the pattern back through the window
 *   read NODE SEGID OFF       one remote 32-bit load
 *   write NODE SEGID OFF VAL  one remote 32-bit store
 *   finc NODE SEGID OFF N     N fetch_and_increments; prints the last
 *   qrecv BYTES COPIES SENDERS N SECS
 *                             a REQ queue; prints "segid N", dequeues
 *                             SENDERS * N items (sender << 24 | seq) and
 *                             checks each arrives once, in sender order
 *   qsend NODE SEGID SENDER N enqueue N items
 *   watch NODE SEGID SECS     import, wait until it goes stale (peer
 *                             restarted or unexported), then SIGBUS
 *   qfill BYTES N             fill our own queue until the NI stops, exit
 *   qhog BYTES SECS           hold do-not-preempt-me and overflow our own
 *                             queue: the driver must resume the NI within
 *                             its bound and withdraw the queue
 *   sigbus NODE SEGID [finc]  a load (or fetch_inc) that must end in
 *                             SIGBUS: stop the peer within 3 s
 *   threads                   registered threads that exit or outlive
 *                             the file (then rmmod tgr must work)
 *   dmesg                     kernel warnings, oopses, leaks
 *
 * Output: "ok ..." and "FAIL ..." lines. Exit status 0 on success, 1 on
 * a failed check, 2 on bad usage.  With TGRTEST_AS=UID in the environment
 * a root tgrtest first becomes that user (the cluster tests run what a
 * local user may do as nobody).
 */
#include "tgrtest.h"
#include "common/args.h"
#include "common/kernel_log.h"

#include <grp.h>

int failures;

void ok(const char *what)
{
	printf("ok %s\n", what);
}

void fail(const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

/*
 * An ioctl's result as 0 or -errno. The checks of bad input call the
 * driver directly: libtgr would refuse much of it before the driver sees it.
 */
int ioc(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

void expect(const char *what, int got, int want)
{
	if (got == want)
		ok(what);
	else
		fail(what, "got %d (%s), want %d (%s)", got, strerror(-got),
		     want, strerror(-want));
}

uint32_t pattern(uint32_t page, uint32_t word)
{
	return 0x5a000000u ^ page << 12 ^ word;
}

unsigned int parse_rights(const char *s)
{
	unsigned int r = 0;

	for (; *s; s++)
		r |= *s == 'r' ? TGR_R_READ : *s == 'w' ? TGR_R_WRITE :
		     *s == 'a' ? TGR_R_ATOMIC : 0;
	return r;
}

tgr_t *open_or_die(void)
{
	tgr_t *t;
	int err = tgr_open(&t);

	if (err) {
		fprintf(stderr, "tgr_open: %s\n", tgr_strerror(err));
		exit(1);
	}
	return t;
}

void *alloc_pages(size_t pages)
{
	void *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* ---- data path ---- */

tgr_seg_t *import_or_die(tgr_t *t, unsigned int node, uint32_t segid,
				unsigned int rights)
{
	tgr_seg_t *seg;
	int err = tgr_import(t, node, segid, rights, &seg);

	if (err) {
		printf("FAIL import node %u segid %u: %s\n", node, segid,
		       tgr_strerror(err));
		exit(1);
	}
	return seg;
}

/* ---- info ---- */

static int cmd_info(void)
{
	struct tgr_info info;
	tgr_t *t = open_or_die();
	int err = tgr_info(t, &info);

	if (err) {
		fail("info", "%s", tgr_strerror(err));
		return 1;
	}
	printf("abi %u node %u nodes %u ctx %u win_pages %u win_free %u mirror_mb %u stopped %u\n",
	       info.abi, info.node, info.nodes, info.ctx, info.win_pages,
	       info.win_free, info.mirror_mb, info.stopped);
	tgr_close(t);
	return 0;
}

/* ---- bad input ---- */

static void bad_queues(int fd)
{
	static const uint32_t sizes[] = { 0, 32, 100, 96, 131072, 4097 };
	struct tgr_req_create rc;
	struct tgr_req_relink rl = { .qid = 4242 };
	char what[64];
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&rc, 0, sizeof(rc));
		rc.bytes = sizes[i];
		snprintf(what, sizeof(what), "REQ_CREATE %u bytes: EINVAL",
			 sizes[i]);
		expect(what, ioc(fd, TGR_IOC_REQ_CREATE, &rc), -EINVAL);
	}
	memset(&rc, 0, sizeof(rc));
	rc.bytes = 256;
	rc.copies = TGR_REQ_MAX_COPIES + 1;
	expect("REQ_CREATE too many copies: EINVAL",
	       ioc(fd, TGR_IOC_REQ_CREATE, &rc), -EINVAL);
	expect("REQ_RELINK unknown queue: ENOENT",
	       ioc(fd, TGR_IOC_REQ_RELINK, &rl), -ENOENT);
}

static void bad_exports(int fd, void *buf)
{
	struct tgr_export ex = { .addr = (uintptr_t)buf + 8, .len = PAGE,
				 .rights = TGR_R_READ };
	struct tgr_id id = { .id = 0x7777 };

	expect("EXPORT unaligned address: EINVAL",
	       ioc(fd, TGR_IOC_EXPORT, &ex), -EINVAL);
	ex.addr = (uintptr_t)buf;
	ex.len = 100;
	expect("EXPORT length not pages: EINVAL",
	       ioc(fd, TGR_IOC_EXPORT, &ex), -EINVAL);
	ex.len = PAGE;
	ex.rights = 0;
	expect("EXPORT no rights: EINVAL", ioc(fd, TGR_IOC_EXPORT, &ex),
	       -EINVAL);
	ex.rights = TGR_R_REQ;
	expect("EXPORT the REQ right (queues only): EINVAL",
	       ioc(fd, TGR_IOC_EXPORT, &ex), -EINVAL);
	ex.rights = TGR_R_READ;
	ex.addr = 0x1000;
	expect("EXPORT unmapped memory: EFAULT",
	       ioc(fd, TGR_IOC_EXPORT, &ex), -EFAULT);
	ex.addr = (uintptr_t)mmap(NULL, 65u << 20, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ex.len = 65u << 20;
	expect("EXPORT beyond max_pinned_mb (64): ENOMEM",
	       ioc(fd, TGR_IOC_EXPORT, &ex), -ENOMEM);
	munmap((void *)(uintptr_t)ex.addr, 65u << 20);
	expect("UNEXPORT unknown segment: ENOENT",
	       ioc(fd, TGR_IOC_UNEXPORT, &id), -ENOENT);
	expect("UNIMPORT unknown import: ENOENT",
	       ioc(fd, TGR_IOC_UNIMPORT, &id), -ENOENT);
	expect("UNMAP_LOCAL unknown mirror: ENOENT",
	       ioc(fd, TGR_IOC_UNMAP_LOCAL, &id), -ENOENT);
	expect("unknown ioctl: ENOTTY", ioc(fd, _IO(TGR_IOC_MAGIC, 99), NULL),
	       -ENOTTY);
}

static void bad_mmaps(int fd)
{
	void *p;

	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 TGR_MMAP_STATUS);
	expect("status page PROT_WRITE: EACCES",
	       p == MAP_FAILED ? -errno : 0, -EACCES);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, TGR_MMAP_STATUS);
	expect("MAP_PRIVATE: EINVAL", p == MAP_FAILED ? -errno : 0, -EINVAL);
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd,
		 TGR_MMAP_COOKIE(TGR_MMAP_WINDOW_KIND, 0, 999));
	expect("window of no import: ENXIO", p == MAP_FAILED ? -errno : 0,
	       -ENXIO);
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd,
		 TGR_MMAP_COOKIE(9, 0, 1));
	expect("unknown cookie kind: EINVAL", p == MAP_FAILED ? -errno : 0,
	       -EINVAL);
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, TGR_MMAP_STATUS);
	if (p == MAP_FAILED)
		fail("status page read-only", "%s", strerror(errno));
	else
		ok("status page maps read-only");
	if (p != MAP_FAILED)
		munmap(p, PAGE);
}

/* Imports of our own segments (loopback through the card). */
static void bad_imports(int fd, unsigned int node, void *buf)
{
	struct tgr_export ex = { .addr = (uintptr_t)buf, .len = PAGE,
				 .rights = TGR_R_READ };
	struct tgr_import im;
	struct tgr_mcast_join mj = { .addr = (uintptr_t)buf, .len = PAGE,
				     .group = TGR_GROUPS };
	struct tgr_id id;
	void *p;
	int err;

	err = ioc(fd, TGR_IOC_EXPORT, &ex);
	if (err) {
		fail("EXPORT read-only page", "%s", strerror(-err));
		return;
	}
	memset(&im, 0, sizeof(im));
	im.node = node;
	im.segid = ex.segid + 1;
	expect("IMPORT unexported segment: ENOENT",
	       ioc(fd, TGR_IOC_IMPORT, &im), -ENOENT);
	im.segid = ex.segid;
	im.rights = TGR_R_READ | TGR_R_WRITE;
	expect("IMPORT more rights than exported: EACCES",
	       ioc(fd, TGR_IOC_IMPORT, &im), -EACCES);
	im.rights = TGR_R_READ;
	err = ioc(fd, TGR_IOC_IMPORT, &im);
	expect("IMPORT read-only", err, 0);
	if (!err) {
		p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 im.window_cookie);
		expect("read-only import mapped PROT_WRITE: EACCES",
		       p == MAP_FAILED ? -errno : 0, -EACCES);
		p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd,
			 im.window_cookie);
		if (p == MAP_FAILED) {
			fail("read-only import mapped PROT_READ", "%s",
			     strerror(errno));
		} else {
			expect("mprotect(PROT_WRITE) of a read-only import: EACCES",
			       mprotect(p, PAGE, PROT_READ | PROT_WRITE) ?
			       -errno : 0, -EACCES);
			munmap(p, PAGE);
		}
		p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 im.op_cookie[TGR_OP_FADD]);
		expect("atomic shadow of a read-only import: EACCES",
		       p == MAP_FAILED ? -errno : 0,
		       im.op_cookie[TGR_OP_FADD] ? -EACCES : -EINVAL);
		p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd,
			 im.window_cookie);
		expect("window longer than the import: EINVAL",
		       p == MAP_FAILED ? -errno : 0, -EINVAL);
		id.id = im.iid;
		expect("UNIMPORT", ioc(fd, TGR_IOC_UNIMPORT, &id), 0);
	}
	im.node = 1000;
	expect("IMPORT from a node not in the fabric: EHOSTUNREACH",
	       ioc(fd, TGR_IOC_IMPORT, &im), -EHOSTUNREACH);
	expect("MCAST_JOIN group 64: EINVAL",
	       ioc(fd, TGR_IOC_MCAST_JOIN, &mj), -EINVAL);
	id.id = ex.segid;
	expect("UNEXPORT", ioc(fd, TGR_IOC_UNEXPORT, &id), 0);
}

/* A write through a PTE with every right: the target refuses it. */
static void bad_force(tgr_t *t, uint32_t *buf)
{
	int fd = tgr_fd(t);
	struct tgr_export ex = { .addr = (uintptr_t)buf, .len = PAGE,
				 .rights = TGR_R_READ };
	struct tgr_force_write fw = { .node = tgr_node(t), .offset = 64,
				      .value = 0xdeadbeef };
	struct tgr_event ev[16];
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLPRI };
	struct tgr_id id;
	bool seen = false;
	int err, i, n;

	memset(buf, 0x11, PAGE);
	if (ioc(fd, TGR_IOC_EXPORT, &ex)) {
		fail("force write: export", "%s", strerror(errno));
		return;
	}
	fw.segid = ex.segid;
	err = ioc(fd, TGR_IOC_FORCE_WRITE, &fw);
	if (err) {
		fail("FORCE_WRITE", "%s", strerror(-err));
		goto out;
	}
	poll(&pfd, 1, 2000);
	if (pfd.revents & POLLERR)
		ok("a refused write raises POLLERR");
	else
		fail("a refused write raises POLLERR", "revents %#x",
		     pfd.revents);
	n = tgr_poll_events(t, ev, 16, 0, NULL);
	for (i = 0; i < n; i++)
		seen |= (ev[i].type == TGR_EV_VIOL_OUT ||
			 ev[i].type == TGR_EV_VIOL_IN) &&
			ev[i].reason == TGR_ERR_RIGHTS;
	if (seen)
		ok("the refusal is a VIOL event, reason RIGHTS");
	else
		fail("the refusal is a VIOL event, reason RIGHTS", "%d events",
		     n > 0 ? n : 0);
	if (buf[16] == 0x11111111)
		ok("the read-only page is untouched");
	else
		fail("the read-only page is untouched", "word %#x", buf[16]);
out:
	id.id = ex.segid;
	ioc(fd, TGR_IOC_UNEXPORT, &id);
}

static int cmd_bad(void)
{
	tgr_t *t = open_or_die();
	void *buf = alloc_pages(2);
	int fd = tgr_fd(t);

	bad_queues(fd);
	bad_exports(fd, buf);
	bad_mmaps(fd);
	bad_imports(fd, tgr_node(t), buf);
	if (geteuid() == 0)
		bad_force(t, buf);
	tgr_close(t);
	return failures ? 1 : 0;
}

static int cmd_dmesg(void)
{
	int hits = kernel_log_warnings();

	if (hits)
		printf("FAIL dmesg: %d suspicious lines\n", hits);
	else
		printf("ok dmesg: no warnings\n");
	return hits ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: tgrtest info|bad|local|threads|dmesg|serve PAGES RIGHTS SECS|check NODE SEGID PAGES|read NODE SEGID OFF|write NODE SEGID OFF VAL|finc NODE SEGID OFF N|qrecv BYTES COPIES SENDERS N SECS|qsend NODE SEGID SENDER N|watch NODE SEGID SECS|qfill BYTES N|qhog BYTES SECS|sigbus NODE SEGID [finc]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int n = argc - 2;
	char **a = argv + 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("TGRTEST_AS")) {
		uid_t uid = arg_num(getenv("TGRTEST_AS"));

		if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
			printf("FAIL cannot become uid %u: %s\n", (unsigned)uid,
			       strerror(errno));
			return 1;
		}
	}
	if (!strcmp(cmd, "info"))
		return cmd_info();
	if (!strcmp(cmd, "bad"))
		return cmd_bad();
	if (!strcmp(cmd, "local"))
		return cmd_local();
	if (!strcmp(cmd, "threads"))
		return cmd_threads();
	if (!strcmp(cmd, "dmesg"))
		return cmd_dmesg();
	if (!strcmp(cmd, "serve") && n == 3)
		return cmd_serve(arg_num(a[0]), a[1], arg_num(a[2]));
	if (!strcmp(cmd, "check") && n == 3)
		return cmd_check(arg_num(a[0]), arg_num(a[1]),
				 arg_num(a[2]));
	if (!strcmp(cmd, "read") && n == 3)
		return cmd_read(arg_num(a[0]), arg_num(a[1]),
				arg_num(a[2]));
	if (!strcmp(cmd, "write") && n == 4)
		return cmd_write(arg_num(a[0]), arg_num(a[1]),
				 arg_num(a[2]), arg_num(a[3]));
	if (!strcmp(cmd, "finc") && n == 4)
		return cmd_finc(arg_num(a[0]), arg_num(a[1]),
				arg_num(a[2]), arg_num(a[3]));
	if (!strcmp(cmd, "qrecv") && n == 5)
		return cmd_qrecv(arg_num(a[0]), arg_num(a[1]),
				 arg_num(a[2]), arg_num(a[3]),
				 arg_num(a[4]));
	if (!strcmp(cmd, "qsend") && n == 4)
		return cmd_qsend(arg_num(a[0]), arg_num(a[1]),
				 arg_num(a[2]), arg_num(a[3]));
	if (!strcmp(cmd, "watch") && n == 3)
		return cmd_watch(arg_num(a[0]), arg_num(a[1]),
				 arg_num(a[2]));
	if (!strcmp(cmd, "qfill") && n == 2)
		return cmd_qfill(arg_num(a[0]), arg_num(a[1]));
	if (!strcmp(cmd, "qhog") && n == 2)
		return cmd_qhog(arg_num(a[0]), arg_num(a[1]));
	if (!strcmp(cmd, "sigbus") && (n == 2 || n == 3))
		return cmd_sigbus(arg_num(a[0]), arg_num(a[1]),
				  n == 3 && !strcmp(a[2], "finc"));
	return usage();
}

