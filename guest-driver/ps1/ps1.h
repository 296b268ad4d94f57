/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ParaStation board driver: state shared by ps1_main.c (PCI, board set-up,
 * interrupts, sysfs) and ps1_file.c (/dev/ps1).
 */
#ifndef _PS1_H
#define _PS1_H

#include <linux/atomic.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "vcluster/hw/ps1_regs.h"
#include "vcluster/nic_driver.h"
#include "uapi/ps1_ioctl.h"

#define PS1_NAME		"ps1"
#define PS1_VERSION_STR		"1.0.0"

enum ps1_cfg {
	PS1_CFG_NONE,		/* never loaded */
	PS1_CFG_DOWN,		/* the last load found the link down */
	PS1_CFG_BAD,		/* FABRIC or node id unusable */
	PS1_CFG_OK,		/* node and routes committed */
};

/* driver counters, see struct ps1_counters */
enum ps1_cnt {
	PS1_CNT_IRQ,
	PS1_CNT_IRQ_PKT,
	PS1_CNT_IRQ_ERR,
	PS1_CNT_IRQ_BARRIER,
	PS1_CNT_IRQ_TX,
	PS1_CNT_OPENS,
	PS1_CNT_RESETS,
	PS1_CNT_CLEANUP_RESETS,
	PS1_CNT_ROUTE_LOADS,
	PS1_CNT_NUM
};

struct ps1_dev {
	struct kref kref;	/* probe + one per open file */
	struct pci_dev *pdev;
	struct miscdevice misc;
	void __iomem *regs;
	phys_addr_t regs_phys;

	/*
	 * io_lock guards 'gone' and with it every register access from
	 * process context: remove() takes it for writing before the BAR goes
	 * away, so nothing touches a dead mapping.
	 */
	struct rw_semaphore io_lock;
	bool gone;

	/*
	 * lock serialises board set-up with open/release/reset and guards
	 * the fields below it. Taken before io_lock.
	 */
	struct mutex lock;
	struct list_head files;
	unsigned int open_count;
	enum ps1_cfg cfg;
	u32 node;
	u32 nodes;
	u32 width;
	u32 height;

	bool routes_ok;		/* cleared by the IRQ on link/config errors */
	bool regs_used;		/* registers mapped since the last close */

	/* the interrupt enables the driver wants; CREG is written from it */
	spinlock_t irq_lock;
	u32 ie;
	int irq;
	bool msi;
	atomic_t irq_seq;	/* bumped by every handled interrupt */
	wait_queue_head_t wq;

	void *pool;		/* vmalloc_user(), shared message pool */
	size_t pool_size;

	atomic64_t cnt[PS1_CNT_NUM];
};

/* One per open file description: a registered process. */
struct ps1_file {
	struct ps1_dev *dev;
	struct file *file;
	struct nic_opener opener;	/* in dev->files */
	atomic_t reg_maps;	/* live register mappings */
};

static inline void ps1_count(struct ps1_dev *dev, enum ps1_cnt c)
{
	atomic64_inc(&dev->cnt[c]);
}

static inline u64 ps1_counter(struct ps1_dev *dev, enum ps1_cnt c)
{
	return atomic64_read(&dev->cnt[c]);
}

static inline u32 ps1_rd(struct ps1_dev *dev, unsigned int reg)
{
	return readl(dev->regs + reg);
}

static inline void ps1_wr(struct ps1_dev *dev, unsigned int reg, u32 val)
{
	writel(val, dev->regs + reg);
}

extern const struct file_operations ps1_fops;

void ps1_dev_put(struct ps1_dev *dev);
int ps1_load(struct ps1_dev *dev, bool reset, bool wait);
void ps1_refresh(struct ps1_dev *dev);
void ps1_arm(struct ps1_dev *dev, u32 causes);
void ps1_disarm_all(struct ps1_dev *dev);
u32 ps1_state(struct ps1_dev *dev);
u32 ps1_sreg_events(u32 sreg);
int ps1_wait_events(struct ps1_dev *dev, u32 want, long timeout,
		    u32 *revents, u32 *sreg_out);

#endif /* _PS1_H */
