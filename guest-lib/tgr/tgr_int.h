/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libtgr internals shared by tgr.c and tgr_queue.c; not installed.
 */
#ifndef TGR_INT_H
#define TGR_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "tgr.h"

/* Every handle starts with one, so that tgr_close() can release it. */
struct tgr_obj {
	struct tgr_obj *prev, *next;
	void (*release)(struct tgr_obj *o);
};

struct tgr {
	int fd;
	struct tgr_info info;
	const volatile uint32_t *status;	/* done, errors (status page) */
	uint32_t issued;	/* fetch/DMA transfers started (atomic) */
	uint32_t errors_seen;	/* status errors already reported */
	pthread_mutex_t lock;	/* the handle list */
	struct tgr_obj objs;	/* list head */
};

struct tgr_seg {
	struct tgr_obj obj;
	tgr_t *t;
	struct tgr_import imp;
	size_t size;
	volatile uint8_t *window;		/* NULL: no READ or WRITE */
	volatile uint8_t *op[TGR_OP_NUM];	/* shadow windows, NULL: none */
};

/* ioctl returning 0 or -errno */
int tgr_ioctl(const tgr_t *t, unsigned long req, void *arg);
/* mmap of a device cookie; NULL and *err on failure */
void *tgr_map(const tgr_t *t, uint64_t cookie, size_t len, int prot,
	      int *err);
void tgr_obj_add(tgr_t *t, struct tgr_obj *o, void (*release)(struct tgr_obj *));
void tgr_obj_del(tgr_t *t, struct tgr_obj *o);

#endif /* TGR_INT_H */
