// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * drvfuzz's table for the Telegraphos driver (tgr.ko, include/uapi/tgr_ioctl.h):
 * plausible arguments for each ioctl, the cookies of its answer, and
 * mmap offsets built from the cookie encoding (own cookies, other ids,
 * other kinds and ops, garbage).
 */
#include <string.h>
#include <sys/ioctl.h>

#include "drvfuzz.h"
#include "uapi/tgr_ioctl.h"
#include "vcluster/hw/tgr_regs.h"

static uint32_t fz_rights(struct fz *f)
{
	return fz_below(f, 4) ? fz_below(f, 16) : fz_u32(f);
}

static void fill_info(struct fz *f, void *arg)
{
	(void)f;
	(void)arg;
}

static void harvest_info(struct fz *f, const void *arg)
{
	const struct tgr_info *i = arg;

	f->node = i->node;
	fz_give(f, i->status_cookie, TGR_PAGE_SIZE);
}

static void fill_thread(struct fz *f, void *arg)
{
	struct tgr_thread *t = arg;

	t->enable = fz_below(f, 3);
}

static void fill_export(struct fz *f, void *arg)
{
	struct tgr_export *e = arg;

	e->addr = fz_addr(f);
	e->len = fz_len(f);
	e->rights = fz_rights(f);
}

static void harvest_export(struct fz *f, const void *arg)
{
	fz_note_id(f, ((const struct tgr_export *)arg)->segid);
}

static void fill_id(struct fz *f, void *arg)
{
	struct tgr_id *i = arg;

	i->id = fz_u32(f);
}

static void fill_import(struct fz *f, void *arg)
{
	struct tgr_import *i = arg;

	/* mostly this node (loopback) and its neighbours */
	i->node = fz_below(f, 4) ? f->node + fz_below(f, 3) : fz_u32(f);
	i->segid = fz_u32(f);
	i->rights = fz_below(f, 2) ? 0 : fz_rights(f);
	i->flags = fz_below(f, 8) ? 0 : fz_u32(f);
}

static void harvest_import(struct fz *f, const void *arg)
{
	const struct tgr_import *i = arg;
	uint64_t bytes = (uint64_t)i->npages * TGR_PAGE_SIZE;

	fz_note_id(f, i->iid);
	fz_give(f, i->window_cookie, bytes);
	for (int op = 0; op < 8; op++)
		if (i->op_cookie[op])
			fz_give(f, i->op_cookie[op], bytes);
}

static void fill_map_local(struct fz *f, void *arg)
{
	struct tgr_map_local *m = arg;

	m->addr = fz_addr(f);
	m->len = fz_len(f);
}

static void harvest_map_local(struct fz *f, const void *arg)
{
	const struct tgr_map_local *m = arg;

	fz_note_id(f, m->mid);
	fz_give(f, m->cookie, (uint64_t)m->npages * TGR_PAGE_SIZE);
}

static void fill_req_create(struct fz *f, void *arg)
{
	struct tgr_req_create *r = arg;

	r->bytes = fz_below(f, 3) ? 64u << fz_below(f, 6) : fz_u32(f);
	/* a few copies: the pool is kernel memory */
	r->copies = fz_below(f, 4) ? fz_below(f, 8) : fz_u32(f);
}

static void harvest_req_create(struct fz *f, const void *arg)
{
	const struct tgr_req_create *r = arg;

	fz_note_id(f, r->qid);
	fz_note_id(f, r->segid);
	fz_give(f, r->cookie, r->region_bytes);
}

static void fill_relink(struct fz *f, void *arg)
{
	struct tgr_req_relink *r = arg;

	r->qid = fz_u32(f);
}

static void fill_counter_arm(struct fz *f, void *arg)
{
	struct tgr_counter_arm *c = arg;

	c->iid = fz_u32(f);
	c->page = fz_u32(f);
	c->count = fz_u32(f);
}

static void fill_mcast_join(struct fz *f, void *arg)
{
	struct tgr_mcast_join *m = arg;

	m->addr = fz_addr(f);
	m->len = fz_len(f);
	m->group = fz_below(f, 4) ? fz_below(f, 70) : fz_u32(f);
}

static void harvest_mcast_join(struct fz *f, const void *arg)
{
	const struct tgr_mcast_join *m = arg;

	fz_give(f, m->window_cookie, (uint64_t)m->npages * TGR_PAGE_SIZE);
}

static void fill_mcast_leave(struct fz *f, void *arg)
{
	struct tgr_mcast_leave *m = arg;

	m->group = fz_below(f, 4) ? fz_below(f, 70) : fz_u32(f);
}

static void fill_events(struct fz *f, void *arg)
{
	static struct tgr_event evbuf[64];
	struct tgr_events *e = arg;

	if (fz_below(f, 4)) {
		e->buf = (uintptr_t)evbuf;
		e->max = fz_below(f, 65);
	} else {
		e->buf = fz_addr(f);
		e->max = fz_u32(f);
	}
}

static void fill_force(struct fz *f, void *arg)
{
	struct tgr_force_write *w = arg;

	w->node = f->node;
	w->segid = fz_u32(f);
	w->page = fz_u32(f);
	w->offset = fz_u32(f);
	w->value = fz_u32(f);
}

static const struct fz_ioctl tgr_ioctls[] = {
	{ "INFO", TGR_IOC_INFO, sizeof(struct tgr_info), fill_info,
	  harvest_info },
	{ "THREAD", TGR_IOC_THREAD, sizeof(struct tgr_thread), fill_thread,
	  NULL },
	{ "EXPORT", TGR_IOC_EXPORT, sizeof(struct tgr_export), fill_export,
	  harvest_export },
	{ "UNEXPORT", TGR_IOC_UNEXPORT, sizeof(struct tgr_id), fill_id, NULL },
	{ "IMPORT", TGR_IOC_IMPORT, sizeof(struct tgr_import), fill_import,
	  harvest_import },
	{ "UNIMPORT", TGR_IOC_UNIMPORT, sizeof(struct tgr_id), fill_id, NULL },
	{ "MAP_LOCAL", TGR_IOC_MAP_LOCAL, sizeof(struct tgr_map_local),
	  fill_map_local, harvest_map_local },
	{ "UNMAP_LOCAL", TGR_IOC_UNMAP_LOCAL, sizeof(struct tgr_id), fill_id,
	  NULL },
	{ "REQ_CREATE", TGR_IOC_REQ_CREATE, sizeof(struct tgr_req_create),
	  fill_req_create, harvest_req_create },
	{ "REQ_RELINK", TGR_IOC_REQ_RELINK, sizeof(struct tgr_req_relink),
	  fill_relink, NULL },
	{ "REQ_DESTROY", TGR_IOC_REQ_DESTROY, sizeof(struct tgr_id), fill_id,
	  NULL },
	{ "COUNTER_ARM", TGR_IOC_COUNTER_ARM, sizeof(struct tgr_counter_arm),
	  fill_counter_arm, NULL },
	{ "MCAST_JOIN", TGR_IOC_MCAST_JOIN, sizeof(struct tgr_mcast_join),
	  fill_mcast_join, harvest_mcast_join },
	{ "MCAST_LEAVE", TGR_IOC_MCAST_LEAVE, sizeof(struct tgr_mcast_leave),
	  fill_mcast_leave, NULL },
	{ "EVENTS", TGR_IOC_EVENTS, sizeof(struct tgr_events), fill_events,
	  NULL },
	{ "FORCE_WRITE", TGR_IOC_FORCE_WRITE, sizeof(struct tgr_force_write),
	  fill_force, NULL },
};

static void tgr_opened(struct fz *f, int fd)
{
	struct tgr_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, TGR_IOC_INFO, &info) == 0)
		harvest_info(f, &info);
}

static uint64_t tgr_pick_offset(struct fz *f)
{
	switch (fz_below(f, 6)) {
	case 0:
	case 1:
		return fz_given_offset(f);
	case 2:
		/* any object of any file: ids are small and per card */
		return TGR_MMAP_COOKIE(1 + fz_below(f, 6), fz_below(f, 9),
				       fz_below(f, 64)) +
		       (fz_below(f, 4) ? 0 : (uint64_t)fz_below(f, 16) *
					     TGR_PAGE_SIZE);
	case 3:
		/* one of ours with another kind or op */
		return fz_given_offset(f) ^
		       ((uint64_t)(1 + fz_below(f, 15)) <<
			(fz_below(f, 2) ? TGR_MMAP_KIND_SHIFT :
					  TGR_MMAP_OP_SHIFT));
	case 4:
		return (uint64_t)fz_below(f, 1 << 20) * TGR_PAGE_SIZE;
	default:
		return fz_rand(f);
	}
}

const struct fz_driver fz_tgr = {
	.name = "tgr",
	.dev = TGR_DEVICE,
	.ioctls = tgr_ioctls,
	.n_ioctls = sizeof(tgr_ioctls) / sizeof(tgr_ioctls[0]),
	.opened = tgr_opened,
	.pick_offset = tgr_pick_offset,
	.page = TGR_PAGE_SIZE,
};
