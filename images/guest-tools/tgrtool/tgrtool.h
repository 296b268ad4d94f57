/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What tgrbench and tgrcheck share: fatal errors, argument parsing, segid
 * files, imports, and the mailbox page through which two programs on
 * different nodes find each other. (Their "ok"/"FAIL" checks are
 * common/check.h's, the clock common/clock.h's.)
 */
#ifndef TGR_TOOLS_TGRTOOL_H
#define TGR_TOOLS_TGRTOOL_H

#include <stdint.h>
#include <stdio.h>

#include "common/clock.h"
#include "tgr.h"

extern const char *tool_name;	/* for messages: "tgrbench", "tgrcheck" */

/* A fatal error: "TOOL: what: the error's text", exit status 1. */
void die(const char *what, int err) __attribute__((noreturn));
void die_msg(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A number argument; dies with the argument's name on bad input. */
uint32_t arg_u32(const char *s, const char *name);
/* tgr_open() or die with a hint (no device: is tgr.ko loaded?). */
tgr_t *open_or_die(void);
/* tgr_import() or die ("import of node N segid S"). */
tgr_seg_t *import_or_die(tgr_t *t, uint32_t node, uint32_t segid,
			 unsigned int rights);

/*
 * From now on a SIGBUS (a remote access that failed: a timeout, a refusal,
 * a stale import) prints "FAIL what: SIGBUS: ..." and
 * exits with status 1, instead of dying without a word.
 */
void fail_on_sigbus(const char *what);

/* Write "a b c" to path (atomically: temp file + rename). */
void write_ids(const char *path, const uint32_t *ids, int n);

/* Page-aligned, zeroed memory of len bytes (a multiple of 4096). */
void *page_alloc(size_t len);

/*
 * Wait until the local word *p equals want (or, with at_least, is >= it),
 * for at most timeout_ms; 0 or -ETIMEDOUT.
 */
int wait_word(const volatile uint32_t *p, uint32_t want, int at_least,
	      int timeout_ms);

/*
 * The mailbox: one exported page (READ | WRITE | ATOMIC) per program.
 * A peer that knows our (node, segid) imports it and leaves its own ids
 * in the hello words; the flag word is the ping-pong flag, and the rest
 * a small software queue (tail counter + slots {item, valid}).
 */
#define MB_FLAG		0	/* word: ping-pong flag */
#define MB_HELLO_SEG	1	/* peer's mailbox segid + 1 */
#define MB_HELLO_Q	2	/* peer's REQ queue segid + 1 (or 0) */
#define MB_HELLO_NODE	3	/* peer's node + 1 */
#define MB_COUNT	4	/* check-in counter (fetch_inc) */
#define MB_GO		5	/* go flag: senders start */
#define MB_DONE		6	/* senders finished (fetch_inc) */
#define MB_TAIL		16	/* software queue tail (fetch_inc) */
#define MB_SLOT0	32	/* slots: words 2i and 2i+1 from here */
#define MB_SLOTS	((TGR_PAGE_SIZE / 4 - MB_SLOT0) / 2)

struct mailbox {
	tgr_t *t;
	volatile uint32_t *w;	/* local words */
	uint32_t segid;
};

void mailbox_create(tgr_t *t, struct mailbox *mb);

/* Software queue over a segment: slot = fetch_inc(tail), item, valid. */
void soft_enq(tgr_seg_t *seg, size_t tail_off, size_t slot0_off,
	      uint32_t nslots, uint32_t item);

/* The median of n values (sorts them). */
double median(double *v, int n);

#endif /* TGR_TOOLS_TGRTOOL_H */
