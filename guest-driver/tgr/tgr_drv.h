/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Telegraphos NIC driver (tgr.ko): shared definitions.
 *
 * Locking: dev->lock (a mutex) serialises every control operation
 * (ioctls, mmap, release, the overflow thread, the stale work). The
 * interrupt handler only takes dev->ctx_lock (the ctx table) and a
 * context's ev_lock (its event queue), both spinlocks, in that order.
 * dev->kwin_lock serialises the kernel's own window pages.
 */
#ifndef _TGR_DRV_H
#define _TGR_DRV_H

#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "vcluster/hw/tgr_regs.h"
#include "uapi/tgr_ioctl.h"
#include "vcluster/tgr_qlogic.h"
#include "vcluster/nic_driver.h"

#define TGR_NAME		"tgr"
#define TGR_VERSION_STR		"1.0"

/* The segment directory: export entries 0..TGR_DIR_PAGES-1 */
#define TGR_DIR_PAGES		4
#define TGR_DIR_PER_PAGE	(TGR_PAGE_SIZE / sizeof(struct tgr_dir_entry))
#define TGR_DIR_SLOTS		(TGR_DIR_PAGES * TGR_DIR_PER_PAGE)
#define TGR_DIR_GEN		0	/* directory exports never change */

/* Window pages the kernel keeps for itself (directory reads, tests) */
#define TGR_KWIN_DIR		0
#define TGR_KWIN_FORCE		1
#define TGR_KWIN_PAGES		2

#define TGR_EVQ_ENTRIES		1024
#define TGR_CTX_EVENTS		256	/* per file, a power of 2 */
#define TGR_MAX_OBJ_ID		0xffff
#define TGR_PENALTY_UIDS	16	/* users whose queue was withdrawn */

/* One entry of the segment directory (in a directory page, LE) */
struct tgr_dir_entry {
	__le32 segid;
	__le32 first_eidx;
	__le32 npages;
	__le16 gen;
	u8 rights;
	u8 valid;
};

/* Export table entry, as the device reads it */
struct tgr_exp_entry {
	__le64 addr_flags;
	__le16 gen;
	u8 owner_ctx;
	u8 qhead_log2;
	__le32 reserved;
};

/* Event ring entry, as the device writes it */
struct tgr_ev_entry {
	u8 type;
	u8 reason;
	u8 ctx;
	u8 op;
	__le16 node;
	__le16 cpu;
	__le32 page;
	__le32 data;
};

struct tgr_ctx;

/* An exported run of pages (user pages, a queue buffer, a group copy) */
struct tgr_seg {
	struct list_head link;		/* ctx->segs, or owned by a queue/group */
	u32 segid;			/* 0: not in the directory */
	u32 slot;
	u32 first_eidx;
	u32 npages;
	u16 gen;
	u8 rights;
	bool user_pinned;		/* pages came from pin_user_pages */
	struct page **pages;
};

/* A remote segment (or a multicast group) in the window */
struct tgr_imp {
	struct list_head link;		/* ctx->imports */
	u32 iid;
	u32 node;			/* or the group, for multicast */
	u32 segid;
	u32 npages;
	u32 first_page;
	u32 granted;
	u32 first_eidx;			/* remote */
	u16 gen;
	bool mcast;
	bool stale;
	unsigned long uaddr[TGR_OP_NUM + 1];	/* [0] window, [1 + op] */
};

/* Memory pinned for shadow arguments (local mirror pages) */
struct tgr_mirror {
	struct list_head link;
	u32 mid;
	u32 npages;
	struct page **pages;
};

/* A REQ queue: the region of tgr_qlogic.h, in kernel pages */
struct tgr_queue {
	struct list_head link;		/* ctx->queues */
	u32 qid;
	struct tgr_ql_layout lay;
	struct page *hw;		/* alloc_pages(hw_order): aligned */
	unsigned int hw_order;
	struct page *ctrl;
	struct page **pool;		/* pool_pages pages, vmapped */
	u32 pool_pages;
	void *pool_va;
	/* the hardware buffer's export; NULL: withdrawn (it held the NI too long) */
	struct tgr_seg *seg;
	struct page **seg_pages;
	struct tgr_ctx *ctx;		/* the owner */
	long charged;			/* pages counted in ctx->pinned */
	bool stopped;			/* the NI waits for RELINK on it */
	bool withdrawn;
	u64 overflows;
};

/* A multicast group this file joined */
struct tgr_group {
	struct list_head link;
	u32 group;
	struct tgr_seg *seg;		/* local copy, TGR_EXP_MCAST */
	struct tgr_imp *imp;		/* the MCAST window pages */
};

/* A thread registered by TGR_IOC_THREAD */
struct tgr_thr {
	struct preempt_notifier pn;
	struct list_head link;		/* tgr_threads (global) */
	struct tgr_dev *dev;
	struct task_struct *task;	/* referenced */
	u8 ctx;				/* 0: detached from its file */
	bool registered;
	struct callback_head twork;
	struct rcu_head rcu;		/* the IRQ handler reads tgr_cur */
};

/* One open file */
struct tgr_ctx {
	struct tgr_dev *dev;
	struct file *filp;
	u8 id;				/* 1..255 */
	struct page *status;
	struct pid *tgid;		/* the opener's process */
	struct list_head segs, imports, mirrors, queues, groups;
	atomic_long_t pinned;		/* pages */

	spinlock_t ev_lock;		/* the event queue below */
	struct tgr_event ev[TGR_CTX_EVENTS];
	u32 ev_head, ev_tail, ev_lost;
	u32 ev_err;			/* error events in the queue */
	u32 stale;			/* stale imports not yet unimported */
	wait_queue_head_t wq;
};

/* Error events make poll() say POLLERR until they are read. */
static inline bool tgr_event_is_error(u32 type)
{
	return type != TGR_EV_CNT_ZERO && type != TGR_EVENT_QFULL;
}

struct tgr_dev {
	struct pci_dev *pdev;
	struct kref kref;
	void __iomem *regs;		/* BAR0 */
	void __iomem *kwin;		/* the kernel's window pages of BAR2 */
	resource_size_t win_phys, win_len, shadow_phys;
	u32 node, win_pages, mirror_mb;
	int index;			/* /dev/tgrN */
	int irq;
	bool msi;
	bool gone;
	struct miscdevice misc;
	char name[16];

	struct mutex lock;		/* see above */
	struct mutex kwin_lock;

	/* export table and directory */
	struct tgr_exp_entry *exp;
	dma_addr_t exp_dma;
	unsigned long *exp_map;
	struct page *dir[TGR_DIR_PAGES];
	unsigned long *dir_map;
	u32 seg_seq;

	/* window pages */
	unsigned long *win_map;
	struct tgr_imp **win_imp;	/* page -> import; ctx_lock */

	/* events */
	struct tgr_ev_entry *evq;
	dma_addr_t evq_dma;
	u32 evq_cons;

	/* contexts */
	spinlock_t ctx_lock;
	struct tgr_ctx *ctxs[TGR_CTX_MAX];
	unsigned int last_ctx;		/* the last one handed out */
	struct ida obj_ida;

	/* stale imports, found by the interrupt handler */
	DECLARE_BITMAP(stale_nodes, 1024);
	unsigned long *stale_pages;
	struct work_struct stale_work;

	/*
	 * A deferred overflow (dnp held, or no free copy buffer) keeps the
	 * NI stopped for every node until its owner RELINKs. The owner may
	 * be any local user: after stop_max_ms the queue is withdrawn and
	 * the NI resumes, and for stop_penalty_s that user's deferred
	 * overflows withdraw their queue at once.
	 */
	struct tgr_queue *stop_q;	/* the queue the NI waits for */
	unsigned long stop_stamp;	/* since when */
	struct delayed_work stop_work;
	/* the threaded interrupt's work (set by tgr_req_init()) */
	void (*overflow)(struct tgr_dev *dev);
	struct {
		kuid_t uid;
		unsigned long until;	/* jiffies */
	} penalty[TGR_PENALTY_UIDS];
	u64 stopped_ms, withdrawn;

	u64 overflows, relinks, resumes, sigbus;
};

/*
 * The core (tgr_main.c, tgr_thread.c): module parameters, the device's
 * lifetime, its registers, the window page table, contexts' events and
 * the registered threads. The helpers below call it; it reaches them only
 * through their init/fini hooks and the tables it registers (tgr_fops,
 * tgr_groups).
 */
extern unsigned int tgr_max_pinned_mb;
extern unsigned int tgr_stop_max_ms;
extern unsigned int tgr_stop_penalty_s;

static inline u32 tgr_rd(struct tgr_dev *dev, u32 off)
{
	return ioread32(dev->regs + off);
}

static inline void tgr_wr(struct tgr_dev *dev, u32 off, u32 val)
{
	iowrite32(val, dev->regs + off);
}

void tgr_dev_put(struct tgr_dev *dev);
void tgr_pte_write(struct tgr_dev *dev, u32 page, u32 w0, u32 w1, u32 w2,
		   u32 w3);
void tgr_pte_clear(struct tgr_dev *dev, u32 page);
u64 tgr_counter(struct tgr_dev *dev, unsigned int idx);
void tgr_unmap_cookie(struct tgr_ctx *ctx, u64 cookie, u64 len);
void tgr_ctx_event(struct tgr_ctx *ctx, const struct tgr_event *ev);

/* tgr_thread.c */
int tgr_thread_register(struct tgr_ctx *ctx);
int tgr_thread_unregister(struct tgr_ctx *ctx);
void tgr_threads_detach(struct tgr_ctx *ctx);
void tgr_threads_reap(bool wait);
u8 tgr_running_ctx(void);
struct task_struct *tgr_cpu_task(unsigned int cpu, u8 ctx);

/* tgr_file.c: /dev/tgrN */
extern const struct file_operations tgr_fops;

/* tgr_sysfs.c */
extern const struct attribute_group *tgr_groups[];

/* tgr_export.c */
int tgr_exp_init(struct tgr_dev *dev);
void tgr_exp_fini(struct tgr_dev *dev);
int tgr_seg_add(struct tgr_ctx *ctx, struct page **pages, u32 npages,
		u32 rights, u32 flags, u32 qhead_log2, bool listed,
		struct tgr_seg **out);
void tgr_seg_remove(struct tgr_ctx *ctx, struct tgr_seg *seg);
int tgr_pin(struct tgr_ctx *ctx, u64 addr, u64 len, struct page ***pages,
	    u32 *npages);
void tgr_unpin(struct tgr_ctx *ctx, struct page **pages, u32 npages);
int tgr_ioc_export(struct tgr_ctx *ctx, struct tgr_export *arg);
int tgr_ioc_unexport(struct tgr_ctx *ctx, u32 segid);
int tgr_ioc_map_local(struct tgr_ctx *ctx, struct tgr_map_local *arg);
int tgr_ioc_unmap_local(struct tgr_ctx *ctx, u32 mid);
void tgr_mirror_free(struct tgr_ctx *ctx, struct tgr_mirror *m);
int tgr_ioc_mcast_join(struct tgr_ctx *ctx, struct tgr_mcast_join *arg);
int tgr_ioc_mcast_leave(struct tgr_ctx *ctx, u32 group);
void tgr_group_free(struct tgr_ctx *ctx, struct tgr_group *g);

/* tgr_import.c */
void tgr_imp_init(struct tgr_dev *dev);
int tgr_win_alloc(struct tgr_dev *dev, u32 npages, u32 *first);
void tgr_win_free(struct tgr_dev *dev, u32 first, u32 npages);
int tgr_ioc_import(struct tgr_ctx *ctx, struct tgr_import *arg);
int tgr_ioc_unimport(struct tgr_ctx *ctx, u32 iid);
void tgr_import_free(struct tgr_ctx *ctx, struct tgr_imp *imp);
int tgr_ioc_counter_arm(struct tgr_ctx *ctx, struct tgr_counter_arm *arg);
int tgr_ioc_force_write(struct tgr_ctx *ctx, struct tgr_force_write *arg);
struct tgr_imp *tgr_import_new(struct tgr_ctx *ctx, u32 npages);
u64 tgr_import_cookie(struct tgr_imp *imp, int op);

/* tgr_req.c */
void tgr_req_init(struct tgr_dev *dev);
int tgr_ioc_req_create(struct tgr_ctx *ctx, struct tgr_req_create *arg);
int tgr_ioc_req_relink(struct tgr_ctx *ctx, struct tgr_req_relink *arg);
int tgr_ioc_req_destroy(struct tgr_ctx *ctx, u32 qid);
void tgr_queue_free(struct tgr_ctx *ctx, struct tgr_queue *q);

#endif /* _TGR_DRV_H */
