/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drvfuzz: a seeded fuzzer of a driver's user interface, table-driven.
 * A driver's table (drvfuzz_<name>.c) lists its device node, its ioctls
 * (number, argument size, how to fill a plausible argument and where the
 * mmap cookies of the answer are) and how to pick mmap offsets.  The core
 * (drvfuzz.c) issues random ioctls, random ioctl numbers, mmaps, reads,
 * writes, polls and reopens, as an unprivileged user, and checks that
 * every mmap that succeeds lies inside an object the driver gave this
 * process.
 */
#ifndef DRVFUZZ_H
#define DRVFUZZ_H

#include <stddef.h>
#include <stdint.h>

#define FZ_ARENA_PAGES	64	/* the fuzzer's own memory, for pointers */
#define FZ_MAX_GIVEN	1024	/* mmap ranges the driver gave us */
#define FZ_MAX_IDS	256	/* object ids the driver returned */

struct fz;

/* One ioctl of a driver */
struct fz_ioctl {
	const char *name;
	unsigned long nr;
	size_t size;			/* of its argument */
	/* fill arg (size bytes, random already) with plausible values */
	void (*fill)(struct fz *f, void *arg);
	/* after success: note the cookies and ids the answer holds */
	void (*harvest)(struct fz *f, const void *arg);
};

struct fz_driver {
	const char *name;
	const char *dev;
	const struct fz_ioctl *ioctls;
	unsigned int n_ioctls;
	/* after open: note what the file has from the start */
	void (*opened)(struct fz *f, int fd);
	/* an mmap offset worth trying (a cookie, a guess, garbage) */
	uint64_t (*pick_offset)(struct fz *f);
	/* the page size of the device's mappings */
	size_t page;
};

struct fz_range {
	uint64_t off, len;
};

struct fz {
	const struct fz_driver *drv;
	uint64_t rng;
	int fd;
	uint8_t *arena;			/* FZ_ARENA_PAGES pages */
	struct fz_range given[FZ_MAX_GIVEN];
	unsigned int n_given;
	uint32_t ids[FZ_MAX_IDS];
	unsigned int n_ids;
	unsigned int node;		/* a driver may keep one fact here */
};

/* drvfuzz.c: for the tables */
uint64_t fz_rand(struct fz *f);
/* 0..n-1 */
uint32_t fz_below(struct fz *f, uint32_t n);
/* a 32-bit value: small, an id the driver gave, a boundary, or random */
uint32_t fz_u32(struct fz *f);
/* an address: in the arena (aligned or not), NULL, kernel, or random */
uint64_t fz_addr(struct fz *f);
/* a length in bytes: pages, a few bytes, huge */
uint64_t fz_len(struct fz *f);
/* the driver gave us [off, off + len) to map */
void fz_give(struct fz *f, uint64_t off, uint64_t len);
void fz_note_id(struct fz *f, uint32_t id);
/* a range the driver gave, or 0 */
uint64_t fz_given_offset(struct fz *f);

extern const struct fz_driver fz_tgr;
extern const struct fz_driver fz_ps1;
extern const struct fz_driver fz_myri;

#endif /* DRVFUZZ_H */
