// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * drvfuzz's table for the ParaStation driver (ps1.ko,
 * include/uapi/ps1_ioctl.h): every open file may map the board's
 * registers (offset 0) and the shared pool (offset 4096); nothing else.
 * Waits get short timeouts (the core's alarm ends any other).
 */
#include <string.h>
#include <sys/ioctl.h>

#include "drvfuzz.h"
#include "uapi/ps1_ioctl.h"

#define PS1_PAGE	4096u

static void harvest_info(struct fz *f, const void *arg)
{
	const struct ps1_info *i = arg;

	f->node = i->node;
	fz_give(f, PS1_MMAP_REGS_OFFSET, PS1_MMAP_REGS_LEN);
	if (i->pool_size)
		fz_give(f, PS1_MMAP_POOL_OFFSET, i->pool_size);
}

static void fill_wait(struct fz *f, void *arg)
{
	struct ps1_wait *w = arg;

	w->events = fz_below(f, 8) ? 1 + fz_below(f, PS1_EV_ALL) : fz_u32(f);
	w->timeout_ms = fz_below(f, 4) ? fz_below(f, 3) : fz_below(f, 20);
}

static const struct fz_ioctl ps1_ioctls[] = {
	{ "INFO", PS1_IOC_INFO, sizeof(struct ps1_info), NULL, harvest_info },
	{ "WAIT", PS1_IOC_WAIT, sizeof(struct ps1_wait), fill_wait, NULL },
	{ "RESET", PS1_IOC_RESET, 0, NULL, NULL },
	{ "COUNTERS", PS1_IOC_COUNTERS, sizeof(struct ps1_counters), NULL,
	  NULL },
};

static void ps1_opened(struct fz *f, int fd)
{
	struct ps1_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, PS1_IOC_INFO, &info) == 0)
		harvest_info(f, &info);
}

static uint64_t ps1_pick_offset(struct fz *f)
{
	switch (fz_below(f, 5)) {
	case 0:
	case 1:
		return fz_given_offset(f);
	case 2:
		/* just past what was given, or a page of the pool's tail */
		return (uint64_t)fz_below(f, 512) * PS1_PAGE;
	case 3:
		return (uint64_t)fz_below(f, 1 << 20) * PS1_PAGE;
	default:
		return fz_rand(f);
	}
}

const struct fz_driver fz_ps1 = {
	.name = "ps1",
	.dev = PS1_DEVICE,
	.ioctls = ps1_ioctls,
	.n_ioctls = sizeof(ps1_ioctls) / sizeof(ps1_ioctls[0]),
	.opened = ps1_opened,
	.pick_offset = ps1_pick_offset,
	.page = PS1_PAGE,
};
