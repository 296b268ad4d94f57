// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * drvfuzz's table for the Myrinet driver (myri.ko,
 * include/uapi/myri_ioctl.h): a file may map the shared pool (offset 0)
 * and, once MYRI_IOC_OPEN_CTX gave it a context, that context's send
 * area, doorbell page and receive region at the offsets the answer names.
 * Any other context's offsets, its own or another file's, must fail.
 */
#include <string.h>
#include <sys/ioctl.h>

#include "drvfuzz.h"
#include "uapi/myri_ioctl.h"
#include "vcluster/fw/myri_mcp_if.h"
#include "vcluster/hw/lanai_regs.h"

#define MYRI_PAGE	4096u

static void harvest_info(struct fz *f, const void *arg)
{
	const struct myri_info *i = arg;

	f->node = i->node;
	if (i->pool_size)
		fz_give(f, MYRI_MMAP_POOL, i->pool_size);
}

static uint32_t pow2_or_junk(struct fz *f, unsigned int max_shift)
{
	switch (fz_below(f, 4)) {
	case 0:
		return 0;			/* the default */
	case 1:
		return fz_u32(f);
	default:
		return 1u << fz_below(f, max_shift + 1);
	}
}

static void fill_open_ctx(struct fz *f, void *arg)
{
	static const uint32_t flags[] = { MYRI_CTX_EXCL, MYRI_CTX_SHARED,
					  MYRI_CTX_JOIN };
	struct myri_ctx_open *o = arg;

	memset(o, 0, sizeof(*o));
	o->ctx = fz_below(f, 3) ? fz_below(f, MCP_MAX_CTX + 2) :
				  (fz_below(f, 2) ? MYRI_CTX_ANY : fz_u32(f));
	o->flags = fz_below(f, 8) ? flags[fz_below(f, 3)] : fz_u32(f);
	o->nslots = pow2_or_junk(f, 10);
	o->max_payload = fz_below(f, 2) ? 0 : fz_u32(f) & 0x1ffff;
	o->ring_kb = fz_below(f, 2) ? 0 : pow2_or_junk(f, 12);
	o->nev = pow2_or_junk(f, 12);
}

static void harvest_open_ctx(struct fz *f, const void *arg)
{
	const struct myri_ctx_open *o = arg;

	fz_give(f, o->mmap_send, o->send_size);
	fz_give(f, o->mmap_doorbell, LANAI_DOORBELL_PAGE);
	fz_give(f, o->mmap_rx, o->rx_size);
	fz_give(f, o->mmap_pool, o->pool_size);
}

static void fill_wait(struct fz *f, void *arg)
{
	struct myri_wait *w = arg;

	w->events = fz_below(f, 8) ? 1 + fz_below(f, MYRI_WAIT_ALL) : fz_u32(f);
	w->timeout_ms = fz_below(f, 4) ? fz_below(f, 3) : fz_below(f, 20);
}

static const struct fz_ioctl myri_ioctls[] = {
	{ "INFO", MYRI_IOC_INFO, sizeof(struct myri_info), NULL, harvest_info },
	{ "OPEN_CTX", MYRI_IOC_OPEN_CTX, sizeof(struct myri_ctx_open),
	  fill_open_ctx, harvest_open_ctx },
	{ "WAIT", MYRI_IOC_WAIT, sizeof(struct myri_wait), fill_wait, NULL },
	{ "COUNTERS", MYRI_IOC_COUNTERS, sizeof(struct myri_counters), NULL,
	  NULL },
};

static void myri_opened(struct fz *f, int fd)
{
	struct myri_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, MYRI_IOC_INFO, &info) == 0)
		harvest_info(f, &info);
}

static uint64_t myri_pick_offset(struct fz *f)
{
	static const uint64_t area[] = { 0, 0x1000000, 0x2000000, 0x3000000 };

	switch (fz_below(f, 5)) {
	case 0:
	case 1:
		return fz_given_offset(f);
	case 2:
		/* any context's areas, ours or not, and a page into them */
		return MYRI_MMAP_CTX(fz_below(f, MCP_MAX_CTX + 2)) +
		       area[fz_below(f, 4)] +
		       (fz_below(f, 2) ? 0 : (uint64_t)fz_below(f, 64) *
					     MYRI_PAGE);
	case 3:
		return (uint64_t)fz_below(f, 1 << 20) * MYRI_PAGE;
	default:
		return fz_rand(f);
	}
}

const struct fz_driver fz_myri = {
	.name = "myri",
	.dev = MYRI_DEVICE,
	.ioctls = myri_ioctls,
	.n_ioctls = sizeof(myri_ioctls) / sizeof(myri_ioctls[0]),
	.opened = myri_opened,
	.pick_offset = myri_pick_offset,
	.page = MYRI_PAGE,
};
