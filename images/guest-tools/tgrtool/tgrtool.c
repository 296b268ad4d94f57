/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by tgrbench and tgrcheck (tgrtool.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/msg.h"
#include "tgrtool.h"

const char *tool_name = "tgr";

void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", tool_name, what, tgr_strerror(err));
	printf("FAIL %s: %s\n", what, tgr_strerror(err));
	exit(1);
}

void die_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(tool_name, fmt, ap);
	va_end(ap);
	exit(2);
}

uint32_t arg_u32(const char *s, const char *name)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !*s || *end || v > UINT32_MAX)
		die_msg("%s: not a number: '%s'", name, s);
	return (uint32_t)v;
}

tgr_t *open_or_die(void)
{
	const char *path = getenv("TGR_DEVICE");
	char what[256];
	tgr_t *t;
	int err = tgr_open(&t);

	if (!path || !*path)
		path = TGR_DEVICE;
	if (err == -ENOENT)
		die_msg("no Telegraphos device %s (is tgr.ko loaded?)", path);
	snprintf(what, sizeof(what), "open %s", path);
	if (err)
		die(what, err);
	return t;
}

tgr_seg_t *import_or_die(tgr_t *t, uint32_t node, uint32_t segid,
			 unsigned int rights)
{
	tgr_seg_t *seg;
	char what[64];
	int err = tgr_import(t, node, segid, rights, &seg);

	if (err) {
		snprintf(what, sizeof(what), "import of node %u segid %u", node,
			 segid);
		die(what, err);
	}
	return seg;
}

void write_ids(const char *path, const uint32_t *ids, int n)
{
	char tmp[4096];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die_msg("%s: %s", tmp, strerror(errno));
	for (i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? " " : "", ids[i]);
	fprintf(f, "\n");
	if (fclose(f) || rename(tmp, path))
		die_msg("%s: %s", path, strerror(errno));
}

static const char *sigbus_what = "remote access";

static void put(const char *text)
{
	(void)!write(STDOUT_FILENO, text, strlen(text));
}

/* write() and strlen() only: they are safe in a signal handler. */
static void report_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	put("FAIL ");
	put(sigbus_what);
	put(": SIGBUS: a remote access failed (timeout, refusal or stale import)\n");
	_exit(1);
}

void fail_on_sigbus(const char *what)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigbus_what = what;
	sa.sa_sigaction = report_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
}

void *page_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, TGR_PAGE_SIZE, len))
		die_msg("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

int wait_word(const volatile uint32_t *p, uint32_t want, int at_least,
	      int timeout_ms)
{
	double end = now_us() + timeout_ms * 1e3;
	uint32_t spins = 0;

	for (;;) {
		uint32_t v = *p;

		if (v == want || (at_least && v >= want))
			return 0;
		if (++spins % 1024 == 0) {
			if (now_us() > end)
				return -ETIMEDOUT;
			sched_yield();
		}
	}
}

void mailbox_create(tgr_t *t, struct mailbox *mb)
{
	int err;

	mb->t = t;
	mb->w = page_alloc(TGR_PAGE_SIZE);
	err = tgr_export(t, (void *)mb->w, TGR_PAGE_SIZE,
			 TGR_R_READ | TGR_R_WRITE | TGR_R_ATOMIC, &mb->segid);
	if (err)
		die("export of the mailbox page", err);
}

void soft_enq(tgr_seg_t *seg, size_t tail_off, size_t slot0_off,
	      uint32_t nslots, uint32_t item)
{
	uint32_t slot;
	volatile void *p;
	int err = tgr_fetch_inc(seg, tail_off, &slot);

	if (err)
		die("soft_enq: fetch_inc of the tail", err);
	p = tgr_ptr(seg, slot0_off + (size_t)(slot % nslots) * 8);
	if (!p)
		die("soft_enq: slot outside the segment", -ERANGE);
	tgr_write32(p, item);
	/* in-order delivery: the item lands before its valid word */
	tgr_write32((volatile uint8_t *)p + 4, slot + 1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(n - 1) / 2];
}
