// SPDX-License-Identifier: GPL-2.0
/*
 * Telegraphos driver: the remote window. Imports (a remote segment in a
 * run of window pages), the kernel's own directory reads, access
 * counters, and imports that went stale.
 */

#include <linux/io.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "tgr_drv.h"

static u32 tgr_op_right(unsigned int op)
{
	switch (op) {
	case TGR_OP_REQ:
		return TGR_R_REQ;
	case TGR_OP_FADD:
	case TGR_OP_SWAP:
	case TGR_OP_CAS:
		return TGR_R_ATOMIC;
	case TGR_OP_FETCH:
	case TGR_OP_DMA_GET:
		return TGR_R_READ;
	case TGR_OP_DMA_PUT:
		return TGR_R_WRITE;
	default:
		return 0;
	}
}

int tgr_win_alloc(struct tgr_dev *dev, u32 npages, u32 *first)
{
	unsigned long f;

	if (!npages || npages > dev->win_pages)
		return -ENOSPC;
	f = bitmap_find_next_zero_area(dev->win_map, dev->win_pages,
				       TGR_KWIN_PAGES, npages, 0);
	if (f >= dev->win_pages)
		return -ENOSPC;
	bitmap_set(dev->win_map, f, npages);
	*first = f;
	return 0;
}

void tgr_win_free(struct tgr_dev *dev, u32 first, u32 npages)
{
	bitmap_clear(dev->win_map, first, npages);
}

u64 tgr_import_cookie(struct tgr_imp *imp, int op)
{
	if (op < 0)
		return TGR_MMAP_COOKIE(TGR_MMAP_WINDOW_KIND, 0, imp->iid);
	if (imp->mcast || !(imp->granted & tgr_op_right(op)))
		return 0;
	return TGR_MMAP_COOKIE(TGR_MMAP_SHADOW_KIND, op, imp->iid);
}

/* An import id and @npages window pages, not yet mapped. */
struct tgr_imp *tgr_import_new(struct tgr_ctx *ctx, u32 npages)
{
	struct tgr_dev *dev = ctx->dev;
	struct tgr_imp *imp;
	unsigned long flags;
	int id, ret;
	u32 i;

	imp = kzalloc(sizeof(*imp), GFP_KERNEL);
	if (!imp)
		return ERR_PTR(-ENOMEM);
	id = ida_alloc_range(&dev->obj_ida, 1, TGR_MAX_OBJ_ID, GFP_KERNEL);
	if (id < 0) {
		kfree(imp);
		return ERR_PTR(id);
	}
	ret = tgr_win_alloc(dev, npages, &imp->first_page);
	if (ret) {
		ida_free(&dev->obj_ida, id);
		kfree(imp);
		return ERR_PTR(ret);
	}
	imp->iid = id;
	imp->npages = npages;
	spin_lock_irqsave(&dev->ctx_lock, flags);
	for (i = 0; i < npages; i++)
		dev->win_imp[imp->first_page + i] = imp;
	spin_unlock_irqrestore(&dev->ctx_lock, flags);
	list_add(&imp->link, &ctx->imports);
	return imp;
}

static void tgr_import_unmap(struct tgr_ctx *ctx, struct tgr_imp *imp)
{
	u64 len = (u64)imp->npages << PAGE_SHIFT;
	int op;
	u32 i;

	for (op = -1; op < TGR_OP_NUM; op++)
		tgr_unmap_cookie(ctx, tgr_import_cookie(imp, op), len);
	for (i = 0; i < imp->npages; i++)
		tgr_pte_clear(ctx->dev, imp->first_page + i);
}

void tgr_import_free(struct tgr_ctx *ctx, struct tgr_imp *imp)
{
	struct tgr_dev *dev = ctx->dev;
	unsigned long flags;
	u32 i;

	if (!imp->stale)
		tgr_import_unmap(ctx, imp);
	else
		ctx->stale--;
	spin_lock_irqsave(&dev->ctx_lock, flags);
	for (i = 0; i < imp->npages; i++)
		dev->win_imp[imp->first_page + i] = NULL;
	spin_unlock_irqrestore(&dev->ctx_lock, flags);
	tgr_win_free(dev, imp->first_page, imp->npages);
	ida_free(&dev->obj_ida, imp->iid);
	list_del(&imp->link);
	kfree(imp);
}

#define TGR_IMPORT_TRIES	3	/* directory reads before ETIMEDOUT */

static int tgr_rd_errno(u32 status)
{
	switch (status) {
	case TGR_ERR_OK:
		return 0;
	case TGR_ERR_TIMEOUT:
		return -ETIMEDOUT;
	case TGR_ERR_UNREACHABLE:
	case TGR_ERR_PEER_RESET:
		return -EHOSTUNREACH;
	case TGR_ERR_UNEXPORTED:
	case TGR_ERR_STALE:
	case TGR_ERR_RIGHTS:
	case TGR_ERR_RANGE:
		return -EHOSTUNREACH;	/* no directory there: no driver */
	default:
		return -EIO;
	}
}

/*
 * Reads @node's directory slot for @segid through a kernel window page
 * (context 0: a failed load returns all-ones at once and RD_STATUS says
 * why). Plain loads; the vCPU waits for each reply.
 */
static int tgr_dir_read(struct tgr_dev *dev, u32 node, u32 segid,
			struct tgr_dir_entry *de)
{
	u32 slot = segid & 0xfff, status = 0, w0;
	void __iomem *src;
	u64 words[2];
	int i;

	if (node > 0xffff)
		return -EHOSTUNREACH;
	if (slot >= TGR_DIR_SLOTS)
		return -ENOENT;
	src = dev->kwin + TGR_KWIN_DIR * TGR_PAGE_SIZE +
	      (slot % TGR_DIR_PER_PAGE) * sizeof(*de);
	w0 = TGR_PTE_VALID | TGR_PTE_MODE_REMOTE << TGR_PTE_MODE_SHIFT |
	     TGR_R_READ << TGR_PTE_RIGHTS_SHIFT | node << TGR_PTE_NODE_SHIFT;

	mutex_lock(&dev->kwin_lock);
	if (dev->gone) {
		mutex_unlock(&dev->kwin_lock);
		return -ENODEV;
	}
	tgr_pte_write(dev, TGR_KWIN_DIR, w0, slot / TGR_DIR_PER_PAGE,
		      TGR_DIR_GEN, 0);
	preempt_disable();
	tgr_wr(dev, TGR_REG_CUR_CTX, 0);
	for (i = 0; i < 2; i++) {
		words[i] = readq(src + 8 * i);
		status = tgr_rd(dev, TGR_REG_RD_STATUS);
		if (status)
			break;
	}
	tgr_wr(dev, TGR_REG_CUR_CTX, tgr_running_ctx());
	preempt_enable();
	tgr_pte_clear(dev, TGR_KWIN_DIR);
	mutex_unlock(&dev->kwin_lock);

	if (status) {
		dev_dbg(&dev->pdev->dev, "directory of node %u: reason %u\n",
			node, status);
		return tgr_rd_errno(status);
	}
	memcpy(de, words, sizeof(*de));
	if (!de->valid || le32_to_cpu(de->segid) != segid)
		return -ENOENT;
	return 0;
}

/* Called without dev->lock: the directory read waits for the network. */
int tgr_ioc_import(struct tgr_ctx *ctx, struct tgr_import *arg)
{
	struct tgr_dev *dev = ctx->dev;
	struct tgr_dir_entry de;
	struct tgr_imp *imp;
	u32 rights, npages, i, w0;
	int ret, op;

	if (arg->flags || arg->rights & ~TGR_R_ALL)
		return -EINVAL;
	/*
	 * A node whose NI a queue overflow stopped holds our read behind the
	 * requests queued before it: it answers late rather than never.
	 */
	for (i = 0; i < TGR_IMPORT_TRIES; i++) {
		ret = tgr_dir_read(dev, arg->node, arg->segid, &de);
		if (ret != -ETIMEDOUT || fatal_signal_pending(current))
			break;
	}
	if (ret)
		return ret;
	rights = arg->rights ?: de.rights;
	if (rights & ~de.rights)
		return -EACCES;
	npages = le32_to_cpu(de.npages);
	if (!npages || le32_to_cpu(de.first_eidx) + npages > TGR_EXP_MAX)
		return -EIO;

	mutex_lock(&dev->lock);
	if (dev->gone) {
		ret = -ENODEV;
		goto out;
	}
	imp = tgr_import_new(ctx, npages);
	if (IS_ERR(imp)) {
		ret = PTR_ERR(imp);
		goto out;
	}
	imp->node = arg->node;
	imp->segid = arg->segid;
	imp->granted = rights;
	imp->first_eidx = le32_to_cpu(de.first_eidx);
	imp->gen = le16_to_cpu(de.gen);
	w0 = TGR_PTE_VALID | TGR_PTE_MODE_REMOTE << TGR_PTE_MODE_SHIFT |
	     rights << TGR_PTE_RIGHTS_SHIFT | (u32)ctx->id << TGR_PTE_CTX_SHIFT |
	     arg->node << TGR_PTE_NODE_SHIFT;
	for (i = 0; i < npages; i++)
		tgr_pte_write(dev, imp->first_page + i, w0,
			      imp->first_eidx + i, imp->gen, 0);
	arg->iid = imp->iid;
	arg->npages = npages;
	arg->granted = rights;
	arg->first_page = imp->first_page;
	arg->window_cookie = tgr_import_cookie(imp, -1);
	for (op = 0; op < TGR_OP_NUM; op++)
		arg->op_cookie[op] = tgr_import_cookie(imp, op);
	ret = 0;
out:
	mutex_unlock(&dev->lock);
	return ret;
}

static struct tgr_imp *tgr_find(struct tgr_ctx *ctx, u32 iid)
{
	struct tgr_imp *imp;

	list_for_each_entry(imp, &ctx->imports, link)
		if (imp->iid == iid && !imp->mcast)
			return imp;
	return NULL;
}

int tgr_ioc_unimport(struct tgr_ctx *ctx, u32 iid)
{
	struct tgr_imp *imp = tgr_find(ctx, iid);

	if (!imp)
		return -ENOENT;
	tgr_import_free(ctx, imp);
	return 0;
}

int tgr_ioc_counter_arm(struct tgr_ctx *ctx, struct tgr_counter_arm *arg)
{
	struct tgr_imp *imp;
	u32 page;

	list_for_each_entry(imp, &ctx->imports, link) {
		if (imp->iid != arg->iid)
			continue;
		if (imp->stale)
			return -ENXIO;
		if (arg->page >= imp->npages)
			return -EINVAL;
		page = imp->first_page + arg->page;
		iowrite32(arg->count, ctx->dev->regs + TGR_PTE_TABLE +
			  page * TGR_PTE_SIZE + 12);
		return 0;
	}
	return -ENOENT;
}

/*
 * A store through a PTE that claims every right, owned by the caller's
 * context, so that the target's export check (not ours) refuses it and
 * the refusal comes back to this file as a VIOL_OUT event.
 */
int tgr_ioc_force_write(struct tgr_ctx *ctx, struct tgr_force_write *arg)
{
	struct tgr_dev *dev = ctx->dev;
	struct tgr_dir_entry de;
	u32 w0;
	int ret;

	if (arg->offset > TGR_PAGE_SIZE - 4 || arg->offset & 3)
		return -EINVAL;
	ret = tgr_dir_read(dev, arg->node, arg->segid, &de);
	if (ret)
		return ret;
	if (arg->page >= le32_to_cpu(de.npages))
		return -EINVAL;
	w0 = TGR_PTE_VALID | TGR_PTE_MODE_REMOTE << TGR_PTE_MODE_SHIFT |
	     TGR_R_ALL << TGR_PTE_RIGHTS_SHIFT |
	     (u32)ctx->id << TGR_PTE_CTX_SHIFT | arg->node << TGR_PTE_NODE_SHIFT;
	mutex_lock(&dev->kwin_lock);
	tgr_pte_write(dev, TGR_KWIN_FORCE, w0,
		      le32_to_cpu(de.first_eidx) + arg->page,
		      le16_to_cpu(de.gen), 0);
	preempt_disable();
	tgr_wr(dev, TGR_REG_CUR_CTX, ctx->id);
	iowrite32(arg->value, dev->kwin + TGR_KWIN_FORCE * TGR_PAGE_SIZE +
		  arg->offset);
	tgr_wr(dev, TGR_REG_CUR_CTX, tgr_running_ctx());
	preempt_enable();
	tgr_pte_clear(dev, TGR_KWIN_FORCE);
	mutex_unlock(&dev->kwin_lock);
	return 0;
}

static void tgr_import_make_stale(struct tgr_ctx *ctx, struct tgr_imp *imp)
{
	struct tgr_event ev = {
		.type = TGR_EVENT_STALE,
		.reason = TGR_ERR_STALE,
		.node = imp->node,
		.page = imp->first_page,
		.id = imp->iid,
	};
	unsigned long flags;

	tgr_import_unmap(ctx, imp);
	imp->stale = true;
	ctx->stale++;
	spin_lock_irqsave(&ctx->dev->ctx_lock, flags);
	tgr_ctx_event(ctx, &ev);
	spin_unlock_irqrestore(&ctx->dev->ctx_lock, flags);
}

/*
 * Imports whose peer unexported, exited or restarted: the interrupt
 * handler marked their window pages or node. Their mappings go (later
 * accesses: SIGBUS), poll() says POLLERR until they are unimported.
 */
static void tgr_stale_work(struct work_struct *work)
{
	struct tgr_dev *dev = container_of(work, struct tgr_dev, stale_work);
	DECLARE_BITMAP(nodes, 1024);
	struct tgr_imp *imp;
	unsigned long *pages;
	unsigned long bit;
	unsigned int i;

	pages = bitmap_zalloc(dev->win_pages, GFP_KERNEL);
	if (!pages)
		return;
	bitmap_zero(nodes, 1024);
	for_each_set_bit(bit, dev->stale_pages, dev->win_pages)
		if (test_and_clear_bit(bit, dev->stale_pages))
			set_bit(bit, pages);
	for_each_set_bit(bit, dev->stale_nodes, 1024)
		if (test_and_clear_bit(bit, dev->stale_nodes))
			set_bit(bit, nodes);

	mutex_lock(&dev->lock);
	for (i = 1; i < TGR_CTX_MAX && !dev->gone; i++) {
		struct tgr_ctx *ctx = dev->ctxs[i];

		if (!ctx)
			continue;
		list_for_each_entry(imp, &ctx->imports, link) {
			if (imp->stale || imp->mcast)
				continue;
			if ((imp->node < 1024 && test_bit(imp->node, nodes)) ||
			    find_next_bit(pages, imp->first_page + imp->npages,
					  imp->first_page) <
			    imp->first_page + imp->npages)
				tgr_import_make_stale(ctx, imp);
		}
	}
	mutex_unlock(&dev->lock);
	bitmap_free(pages);
}

/* The core's init hook: the interrupt hands stale pages and nodes here. */
void tgr_imp_init(struct tgr_dev *dev)
{
	INIT_WORK(&dev->stale_work, tgr_stale_work);
}
