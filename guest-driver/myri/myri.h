/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Myrinet card driver: state shared by myri_main.c (PCI, interrupts,
 * watchdog), myri_load.c (firmware, start, routes), myri_ctx.c (contexts,
 * mailbox), myri_file.c (/dev/myriN) and myri_sysfs.c.
 */
#ifndef _MYRI_H
#define _MYRI_H

#include <linux/atomic.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "vcluster/hw/lanai_regs.h"
#include "vcluster/fw/myri_mcp_if.h"
#include "vcluster/nic_driver.h"
#include "uapi/myri_ioctl.h"

#define MYRI_NAME		"myri"
#define MYRI_VERSION_STR	"1.0.0"

#define MYRI_FW_NAME_MAX	64
#define MYRI_REASON_MAX		128
#define MYRI_SLOTS_MAX		MCP_MAX_SLOTS	/* the MCP parks one send per slot */
#define MYRI_CTX_USER_SIZE	4096	/* page 0 of a send area */

/* The host interrupt causes the driver takes. */
#define MYRI_EIMR		(LANAI_ISR_HOST_SIG | LANAI_ISR_CORE_HALT)

/* driver counters, see struct myri_counters */
enum myri_drv_counter {
	MYRI_CNT_INTERRUPTS,
	MYRI_CNT_IRQ_HOST_SIG,
	MYRI_CNT_IRQ_HALT,
	MYRI_CNT_LOADS,
	MYRI_CNT_LOAD_ERRORS,
	MYRI_CNT_DEATHS,
	MYRI_CNT_COMMANDS,
	MYRI_CNT_OPENS,
	MYRI_CNT_CTX_OPENS,
	MYRI_CNT_CTX_CLOSES,
	MYRI_CNT_WAITS,
	MYRI_CNT_RESETS,
	MYRI_DRV_COUNTERS
};

struct myri_ctx;
struct myri_dev;

/*
 * The contexts (myri_ctx.c) sit on top of the core; the core tells them
 * what the card did only through this table.
 */
struct myri_ctx_ops {
	/* after myri_stop(): the core is in reset, every context stale */
	void (*card_stopped)(struct myri_dev *dev);
	/* after a load that left the MCP running */
	void (*card_up)(struct myri_dev *dev);
};

struct myri_dev {
	struct kref kref;		/* probe + one per open file */
	struct pci_dev *pdev;
	const struct myri_ctx_ops *ctx_ops;
	struct miscdevice misc;
	char name[16];			/* "myri0" */
	int index;
	void __iomem *sram;		/* SRAM, write-combining */
	void __iomem *regs;		/* config block and special registers */
	phys_addr_t bar_phys;
	u32 sram_size;
	u32 clock_mhz;

	/*
	 * io_lock guards 'gone' and the contexts' 'stale' flags: whoever
	 * touches the card or a context's SRAM from process context holds
	 * it for reading; remove() and a reload take it for writing.
	 */
	struct rw_semaphore io_lock;
	bool gone;

	/*
	 * lock serialises loads, contexts, the mailbox and the routes, and
	 * guards the fields below it. Taken before io_lock. Never held
	 * while copying from or to user space (mmap runs under mmap_lock).
	 */
	struct mutex lock;
	struct list_head files;
	unsigned int open_count;
	struct myri_ctx *ctx[MCP_MAX_CTX];
	unsigned long *sram_map;	/* pages of the context area in use */
	unsigned int sram_pages;
	u32 node;
	u32 nodes;			/* 0 until a load found the fabric */
	u32 cmd_seq;
	int down_err;			/* why the last load failed */
	bool link_retry;		/* load when the link comes up */
	unsigned long load_jiffies;
	char fw_name[MYRI_FW_NAME_MAX];
	char mcp_name[32];
	struct mcp_route routes[MCP_MAX_NODES];	/* written at every load */
	u32 hb_last;
	unsigned long hb_jiffies;

	/* state, guarded by state_lock (the interrupt handler changes it) */
	spinlock_t state_lock;
	u32 state;			/* MYRI_STATE_* */
	char reason[MYRI_REASON_MAX];	/* why DOWN or DEAD */
	char death[MYRI_REASON_MAX];	/* the last death, kept */
	u32 halt_cause;
	u32 halt_pc;
	u32 halt_addr;

	int irq;
	bool msi;
	atomic_t irq_seq;		/* bumped by HOST_SIG, death, reload */
	wait_queue_head_t wq;

	struct delayed_work monitor;

	void *pool;			/* vmalloc_user(), for the ports layer */
	size_t pool_size;

	atomic64_t cnt[MYRI_DRV_COUNTERS];
};

/* A context of the MCP, shared by the files that opened it. */
struct myri_ctx {
	struct myri_dev *dev;
	unsigned int index;
	unsigned int users;		/* files, JOIN ones included */
	unsigned int n_excl;
	unsigned int n_shared;
	struct list_head files;
	/*
	 * A reload or remove took the context from the card: its SRAM pages
	 * may belong to another context by now. Set under io_lock (write).
	 */
	bool stale;
	bool sram_held;
	/*
	 * MCP_HAL_CTX stays open in the MCP without users, so that packets
	 * for the node's HAL wait in its ring as in ps1's RX FIFO.
	 */
	bool pinned;
	u32 send_off;			/* SRAM offset of the send area */
	u32 send_size;			/* page aligned */
	u32 nslots;
	u32 slot_size;
	u32 nev;
	u32 ring_size;
	u32 rx_size;			/* 16 * nev + ring_size */
	void *rx_cpu;
	dma_addr_t rx_dma;
	size_t rx_alloc;

	/* mcp_ctx.irq is 1 while a kernel waiter or a poller wants it */
	spinlock_t irq_lock;
	unsigned int kwaiters;
	unsigned int pollers;		/* files that ever polled it */
	struct timer_list tx_timer;	/* re-polls a full send ring */
};

/* One per open file. */
struct myri_file {
	struct myri_dev *dev;
	struct file *file;
	struct nic_opener opener;	/* in dev->files */
	struct myri_ctx *ctx;		/* set once, under dev->lock */
	struct list_head ctx_node;	/* in ctx->files */
	u32 mode;			/* MYRI_CTX_EXCL/SHARED/JOIN */
	bool polled;			/* counted in ctx->pollers */
};

static inline void myri_count(struct myri_dev *dev, enum myri_drv_counter c)
{
	atomic64_inc(&dev->cnt[c]);
}

static inline u64 myri_counter(struct myri_dev *dev, enum myri_drv_counter c)
{
	return atomic64_read(&dev->cnt[c]);
}

/* config block */
static inline u32 myri_cfg_rd(struct myri_dev *dev, unsigned int off)
{
	return readl(dev->regs + off);
}

static inline void myri_cfg_wr(struct myri_dev *dev, unsigned int off, u32 v)
{
	writel(v, dev->regs + off);
}

/* special registers */
#define MYRI_SPECIAL	(LANAI_SPECIAL_OFFSET - LANAI_CONFIG_OFFSET)

static inline u32 myri_reg_rd(struct myri_dev *dev, unsigned int reg)
{
	return readl(dev->regs + MYRI_SPECIAL + reg);
}

static inline void myri_reg_wr(struct myri_dev *dev, unsigned int reg, u32 v)
{
	writel(v, dev->regs + MYRI_SPECIAL + reg);
}

/* struct mcp_global and struct mcp_ctx fields in SRAM */
#define MYRI_G(field)	(MCP_GLOBAL_OFF + offsetof(struct mcp_global, field))
#define MYRI_GCTX(i, field)						\
	(MYRI_G(ctx) + (i) * sizeof(struct mcp_ctx) +			\
	 offsetof(struct mcp_ctx, field))

static inline u32 myri_sram_rd(struct myri_dev *dev, unsigned int off)
{
	return readl(dev->sram + off);
}

static inline void myri_sram_wr(struct myri_dev *dev, unsigned int off, u32 v)
{
	writel(v, dev->sram + off);
}

/* a field of a context's user page */
#define MYRI_USER(ctx, field)						\
	((ctx)->send_off + offsetof(struct myri_ctx_user, field))

/* mcp_ctx.irq: HOST_SIG with the notify while the kernel waits. */
static inline void myri_ctx_irq_write(struct myri_ctx *ctx)
{
	writel(ctx->kwaiters || ctx->pollers,
	       ctx->dev->sram + MYRI_GCTX(ctx->index, irq));
}

/* io_lock held: the card is there, the context live and the MCP up. */
static inline int myri_ctx_live(struct myri_ctx *ctx)
{
	if (ctx->dev->gone || ctx->stale)
		return -ENODEV;
	return READ_ONCE(ctx->dev->state) == MYRI_STATE_UP ? 0 : -EIO;
}

/*
 * The core: myri_main.c (PCI, lifetime, the card's state, interrupts,
 * the watchdog, module parameters) and myri_load.c (loading the MCP,
 * routes). The helpers below call it; it reaches them only through
 * myri_ctx_ops, myri_fops, myri_groups and myri_sysfs_init().
 */

/* myri_main.c */
extern unsigned int myri_param_hal_slots;
extern unsigned int myri_param_raw_slots;
extern unsigned int myri_param_hal_ring_kb;
extern unsigned int myri_param_raw_ring_kb;
extern unsigned int myri_param_cmd_timeout_ms;
extern bool myri_param_auto_reload;

void myri_dev_put(struct myri_dev *dev);
u32 myri_state(struct myri_dev *dev);
void myri_die(struct myri_dev *dev, bool reset_core, const char *fmt, ...)
	__printf(3, 4);
void myri_set_down(struct myri_dev *dev, int err, const char *fmt, ...)
	__printf(3, 4);
void myri_halted(struct myri_dev *dev);
void myri_wake_all(struct myri_dev *dev);
const char *myri_halt_name(u32 cause);
const char *myri_panic_name(u32 code);

/* myri_load.c */
int myri_load(struct myri_dev *dev);
void myri_stop(struct myri_dev *dev, u32 state, const char *why);
void myri_routes_to_sram(struct myri_dev *dev);
int myri_routes_parse(struct myri_dev *dev, const char *buf, size_t count);

/* myri_ctx.c */
extern const struct myri_ctx_ops myri_ctx_ops;
int myri_ctx_open(struct myri_file *mf, struct myri_ctx_open *req);
void myri_ctx_release(struct myri_file *mf);

/* myri_file.c */
extern const struct file_operations myri_fops;

/* myri_sysfs.c */
extern const struct attribute_group *myri_groups[];
void myri_sysfs_init(void);

#endif /* _MYRI_H */
