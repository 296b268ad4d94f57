/* SPDX-License-Identifier: GPL-2.0 */
/* tgrtest: what its source files share (tgrtest.c has the overview). */
#ifndef TGRTEST_H
#define TGRTEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/clock.h"
#include "tgr.h"
#include "uapi/tgr_ioctl.h"
#include "vcluster/hw/tgr_regs.h"
#include "vcluster/tgr_qlogic.h"

#define PAGE TGR_PAGE_SIZE	/* the card's page (tgr_regs.h) */
#define MAX_SENDERS 64

/* tgrtest.c: checks and helpers */
extern int failures;
void ok(const char *what);
void fail(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int ioc(int fd, unsigned long req, void *arg);
void expect(const char *what, int got, int want);
uint32_t pattern(uint32_t page, uint32_t word);
unsigned int parse_rights(const char *s);
tgr_t *open_or_die(void);
void *alloc_pages(size_t pages);
tgr_seg_t *import_or_die(tgr_t *t, unsigned int node, uint32_t segid,
			 unsigned int rights);

/* tgrtest_cmds.c: the data path between nodes */
extern tgr_t *bus_t;
int drain(tgr_q_t *q, uint32_t senders, uint32_t n, double end,
	  uint32_t *next);
void print_qstats(tgr_q_t *q, const char *who);
int expect_sigbus(const char *what, volatile void *p);
int cmd_serve(uint32_t pages, const char *rights, uint32_t secs);
int cmd_check(uint32_t node, uint32_t segid, uint32_t pages);
int cmd_read(uint32_t node, uint32_t segid, uint32_t off);
int cmd_write(uint32_t node, uint32_t segid, uint32_t off, uint32_t val);
int cmd_finc(uint32_t node, uint32_t segid, uint32_t off, uint32_t n);
int cmd_qrecv(uint32_t bytes, uint32_t copies, uint32_t senders, uint32_t n,
	      uint32_t secs);
int cmd_qsend(uint32_t node, uint32_t segid, uint32_t sender, uint32_t n);
int cmd_qfill(uint32_t bytes, uint32_t n);
int cmd_qhog(uint32_t bytes, uint32_t secs);
int cmd_threads(void);
int cmd_sigbus(uint32_t node, uint32_t segid, bool finc);
int cmd_watch(uint32_t node, uint32_t segid, uint32_t secs);

/* tgrtest_local.c: one node, through the card's loopback */
int cmd_local(void);

#endif /* TGRTEST_H */
