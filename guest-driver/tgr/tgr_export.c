// SPDX-License-Identifier: GPL-2.0
/*
 * Telegraphos driver: the export table, the segment directory, pinned
 * memory (exports, local mirrors) and multicast groups.
 *
 * Pages are pinned before dev->lock is taken: pinning may take the
 * caller's mmap_lock, which mmap() holds while it waits for dev->lock.
 *
 * Export entries 0..TGR_DIR_PAGES-1 are the directory: pages, readable by
 * any node, that list this node's segments. An importer reads the slot
 * its segid names, so a segid is all it needs to know.
 */

#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "tgr_drv.h"

#define TGR_SEGID_SLOT_BITS	12
#define TGR_SEGID_SLOT_MASK	((1u << TGR_SEGID_SLOT_BITS) - 1)

static u16 tgr_gen_seq;

static void tgr_exp_set(struct tgr_dev *dev, u32 eidx, phys_addr_t phys,
			u32 flags, u16 gen, u8 owner, u8 qlog2)
{
	struct tgr_exp_entry *e = &dev->exp[eidx];

	e->gen = cpu_to_le16(gen);
	e->owner_ctx = owner;
	e->qhead_log2 = qlog2;
	e->reserved = 0;
	dma_wmb();	/* the device reads VALID first */
	WRITE_ONCE(e->addr_flags, cpu_to_le64((phys & PAGE_MASK) | flags));
}

static void tgr_exp_clear(struct tgr_dev *dev, u32 eidx)
{
	struct tgr_exp_entry *e = &dev->exp[eidx];

	WRITE_ONCE(e->addr_flags, 0);
	dma_wmb();
	e->gen = cpu_to_le16(le16_to_cpu(e->gen) + 1);
}

/*
 * The device applies a request under its lock, reading the entry first:
 * a register read waits for any request being applied, so no request
 * that saw the old entry touches the page after this.
 */
static void tgr_exp_flush(struct tgr_dev *dev)
{
	if (!dev->gone)
		tgr_rd(dev, TGR_REG_ID);
}

static u16 tgr_next_gen(void)
{
	if (++tgr_gen_seq == TGR_DIR_GEN)
		++tgr_gen_seq;
	return tgr_gen_seq;
}

int tgr_exp_init(struct tgr_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	unsigned int i;

	tgr_gen_seq = get_random_u32();
	dev->exp = dma_alloc_coherent(d, TGR_EXP_MAX * sizeof(*dev->exp),
				      &dev->exp_dma, GFP_KERNEL);
	dev->exp_map = bitmap_zalloc(TGR_EXP_MAX, GFP_KERNEL);
	dev->dir_map = bitmap_zalloc(TGR_DIR_SLOTS, GFP_KERNEL);
	if (!dev->exp || !dev->exp_map || !dev->dir_map)
		return -ENOMEM;
	for (i = 0; i < TGR_DIR_PAGES; i++) {
		dev->dir[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!dev->dir[i])
			return -ENOMEM;
		tgr_exp_set(dev, i, page_to_phys(dev->dir[i]),
			    TGR_EXP_VALID | TGR_R_READ << TGR_EXP_RIGHTS_SHIFT,
			    TGR_DIR_GEN, 0, 0);
	}
	bitmap_set(dev->exp_map, 0, TGR_DIR_PAGES);
	return 0;
}

void tgr_exp_fini(struct tgr_dev *dev)
{
	unsigned int i;

	for (i = 0; i < TGR_DIR_PAGES; i++)
		if (dev->dir[i])
			__free_page(dev->dir[i]);
	if (dev->exp)
		dma_free_coherent(&dev->pdev->dev,
				  TGR_EXP_MAX * sizeof(*dev->exp), dev->exp,
				  dev->exp_dma);
	bitmap_free(dev->exp_map);
	bitmap_free(dev->dir_map);
}

static struct tgr_dir_entry *tgr_dir_slot(struct tgr_dev *dev, u32 slot)
{
	struct tgr_dir_entry *page = page_address(dev->dir[slot / TGR_DIR_PER_PAGE]);

	return &page[slot % TGR_DIR_PER_PAGE];
}

/*
 * Exports @npages pages as one run of export entries with one generation.
 * @listed: also in the directory, with a new segid.
 */
int tgr_seg_add(struct tgr_ctx *ctx, struct page **pages, u32 npages,
		u32 rights, u32 flags, u32 qhead_log2, bool listed,
		struct tgr_seg **out)
{
	struct tgr_dev *dev = ctx->dev;
	struct tgr_dir_entry *de;
	struct tgr_seg *seg;
	unsigned long first;
	u32 i, f;

	seg = kzalloc(sizeof(*seg), GFP_KERNEL);
	if (!seg)
		return -ENOMEM;
	first = bitmap_find_next_zero_area(dev->exp_map, TGR_EXP_MAX,
					   TGR_DIR_PAGES, npages, 0);
	if (first >= TGR_EXP_MAX) {
		kfree(seg);
		return -ENOSPC;
	}
	if (listed) {
		seg->slot = find_first_zero_bit(dev->dir_map, TGR_DIR_SLOTS);
		if (seg->slot >= TGR_DIR_SLOTS) {
			kfree(seg);
			return -ENOSPC;
		}
		set_bit(seg->slot, dev->dir_map);
		if (++dev->seg_seq >= 1u << (32 - TGR_SEGID_SLOT_BITS))
			dev->seg_seq = 1;
		seg->segid = dev->seg_seq << TGR_SEGID_SLOT_BITS | seg->slot;
	}
	INIT_LIST_HEAD(&seg->link);
	bitmap_set(dev->exp_map, first, npages);
	seg->first_eidx = first;
	seg->npages = npages;
	seg->rights = rights;
	seg->gen = tgr_next_gen();
	seg->pages = pages;
	for (i = 0; i < npages; i++) {
		f = TGR_EXP_VALID | rights << TGR_EXP_RIGHTS_SHIFT |
		    (flags & ~TGR_EXP_QHEAD);
		if (i == 0)
			f |= flags & TGR_EXP_QHEAD;
		tgr_exp_set(dev, first + i, page_to_phys(pages[i]), f,
			    seg->gen, ctx->id, i == 0 ? qhead_log2 : 0);
	}
	if (listed) {
		de = tgr_dir_slot(dev, seg->slot);
		de->segid = cpu_to_le32(seg->segid);
		de->first_eidx = cpu_to_le32(first);
		de->npages = cpu_to_le32(npages);
		de->gen = cpu_to_le16(seg->gen);
		de->rights = rights;
		dma_wmb();
		WRITE_ONCE(de->valid, 1);
	}
	*out = seg;
	return 0;
}

/* Unexports (importers get STALE from now on); the pages stay the caller's. */
static void tgr_seg_unexport(struct tgr_dev *dev, struct tgr_seg *seg)
{
	u32 i;

	if (seg->segid) {
		WRITE_ONCE(tgr_dir_slot(dev, seg->slot)->valid, 0);
		clear_bit(seg->slot, dev->dir_map);
	}
	for (i = 0; i < seg->npages; i++)
		tgr_exp_clear(dev, seg->first_eidx + i);
	tgr_exp_flush(dev);
	bitmap_clear(dev->exp_map, seg->first_eidx, seg->npages);
}

/* Unexports and frees @seg; unpins its pages if they are user pages. */
void tgr_seg_remove(struct tgr_ctx *ctx, struct tgr_seg *seg)
{
	tgr_seg_unexport(ctx->dev, seg);
	if (seg->user_pinned) {
		tgr_unpin(ctx, seg->pages, seg->npages);
		seg->pages = NULL;
	}
	if (!list_empty(&seg->link))
		list_del(&seg->link);
	kfree(seg);
}

int tgr_pin(struct tgr_ctx *ctx, u64 addr, u64 len, struct page ***pages,
	    u32 *npages)
{
	unsigned long cap = (unsigned long)READ_ONCE(tgr_max_pinned_mb) <<
			    (20 - PAGE_SHIFT);
	struct page **p;
	long n, got;

	if (!len || (addr | len) & ~PAGE_MASK || addr + len < addr)
		return -EINVAL;
	n = len >> PAGE_SHIFT;
	if (n > cap || atomic_long_add_return(n, &ctx->pinned) > cap) {
		if (n <= cap)
			atomic_long_sub(n, &ctx->pinned);
		return -ENOMEM;
	}
	p = kvcalloc(n, sizeof(*p), GFP_KERNEL);
	if (!p) {
		atomic_long_sub(n, &ctx->pinned);
		return -ENOMEM;
	}
	got = pin_user_pages_fast(addr, n, FOLL_WRITE | FOLL_LONGTERM, p);
	if (got != n) {
		if (got > 0)
			unpin_user_pages(p, got);
		kvfree(p);
		atomic_long_sub(n, &ctx->pinned);
		return got < 0 ? got : -EFAULT;
	}
	*pages = p;
	*npages = n;
	return 0;
}

void tgr_unpin(struct tgr_ctx *ctx, struct page **pages, u32 npages)
{
	unpin_user_pages_dirty_lock(pages, npages, true);
	kvfree(pages);
	atomic_long_sub(npages, &ctx->pinned);
}

int tgr_ioc_export(struct tgr_ctx *ctx, struct tgr_export *arg)
{
	struct page **pages;
	struct tgr_seg *seg;
	u32 npages;
	int ret;

	/* REQ targets are made by TGR_IOC_REQ_CREATE only */
	if (!arg->rights || arg->rights & ~(TGR_R_READ | TGR_R_WRITE |
					    TGR_R_ATOMIC))
		return -EINVAL;
	ret = tgr_pin(ctx, arg->addr, arg->len, &pages, &npages);
	if (ret)
		return ret;
	mutex_lock(&ctx->dev->lock);
	ret = ctx->dev->gone ? -ENODEV :
	      tgr_seg_add(ctx, pages, npages, arg->rights, 0, 0, true, &seg);
	if (!ret) {
		seg->user_pinned = true;
		list_add(&seg->link, &ctx->segs);
		arg->segid = seg->segid;
		arg->npages = npages;
	}
	mutex_unlock(&ctx->dev->lock);
	if (ret)
		tgr_unpin(ctx, pages, npages);
	return ret;
}

int tgr_ioc_unexport(struct tgr_ctx *ctx, u32 segid)
{
	struct tgr_seg *seg;

	list_for_each_entry(seg, &ctx->segs, link) {
		if (seg->segid == segid && segid) {
			tgr_seg_remove(ctx, seg);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- local mirror ---- */

int tgr_ioc_map_local(struct tgr_ctx *ctx, struct tgr_map_local *arg)
{
	struct tgr_dev *dev = ctx->dev;
	u64 limit = (u64)dev->mirror_mb << 20;
	struct tgr_mirror *m;
	int ret, id;
	u32 i;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	ret = tgr_pin(ctx, arg->addr, arg->len, &m->pages, &m->npages);
	if (ret)
		goto err_free;
	for (i = 0; i < m->npages; i++) {
		if (page_to_phys(m->pages[i]) + PAGE_SIZE > limit) {
			ret = -ERANGE;	/* beyond the card's mirror */
			goto err_unpin;
		}
	}
	id = ida_alloc_range(&dev->obj_ida, 1, TGR_MAX_OBJ_ID, GFP_KERNEL);
	if (id < 0) {
		ret = id;
		goto err_unpin;
	}
	m->mid = id;
	mutex_lock(&dev->lock);
	if (dev->gone) {
		mutex_unlock(&dev->lock);
		ida_free(&dev->obj_ida, id);
		ret = -ENODEV;
		goto err_unpin;
	}
	list_add(&m->link, &ctx->mirrors);
	mutex_unlock(&dev->lock);
	arg->mid = m->mid;
	arg->npages = m->npages;
	arg->cookie = TGR_MMAP_COOKIE(TGR_MMAP_MIRROR_KIND, 0, m->mid);
	return 0;

err_unpin:
	tgr_unpin(ctx, m->pages, m->npages);
err_free:
	kfree(m);
	return ret;
}

/* The mappings go before the pin: a mirror page must never outlive it. */
void tgr_mirror_free(struct tgr_ctx *ctx, struct tgr_mirror *m)
{
	tgr_unmap_cookie(ctx, TGR_MMAP_COOKIE(TGR_MMAP_MIRROR_KIND, 0, m->mid),
			 (u64)m->npages << PAGE_SHIFT);
	tgr_unpin(ctx, m->pages, m->npages);
	ida_free(&ctx->dev->obj_ida, m->mid);
	list_del(&m->link);
	kfree(m);
}

int tgr_ioc_unmap_local(struct tgr_ctx *ctx, u32 mid)
{
	struct tgr_mirror *m;

	list_for_each_entry(m, &ctx->mirrors, link) {
		if (m->mid == mid) {
			tgr_mirror_free(ctx, m);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- multicast ---- */

int tgr_ioc_mcast_join(struct tgr_ctx *ctx, struct tgr_mcast_join *arg)
{
	struct tgr_dev *dev = ctx->dev;
	struct tgr_imp *imp;
	struct tgr_group *g;
	struct page **pages;
	u32 npages, i, w0;
	int ret;

	if (arg->group >= TGR_GROUPS)
		return -EINVAL;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	ret = tgr_pin(ctx, arg->addr, arg->len, &pages, &npages);
	if (ret)
		goto err_free;
	mutex_lock(&dev->lock);
	ret = -ENODEV;
	if (dev->gone)
		goto err_unpin;
	ret = -EBUSY;	/* one local copy per node */
	if (tgr_rd(dev, TGR_REG_GROUP_EIDX + 4 * arg->group) != TGR_GROUP_NONE)
		goto err_unpin;
	ret = tgr_seg_add(ctx, pages, npages, TGR_R_READ | TGR_R_WRITE,
			  TGR_EXP_MCAST, 0, false, &g->seg);
	if (ret)
		goto err_unpin;
	g->seg->user_pinned = true;
	imp = tgr_import_new(ctx, npages);
	if (IS_ERR(imp)) {
		ret = PTR_ERR(imp);
		tgr_seg_remove(ctx, g->seg);
		mutex_unlock(&dev->lock);
		goto err_free;
	}
	imp->mcast = true;
	imp->node = arg->group;
	imp->granted = TGR_R_READ | TGR_R_WRITE;
	w0 = TGR_PTE_VALID | TGR_PTE_MODE_MCAST << TGR_PTE_MODE_SHIFT |
	     imp->granted << TGR_PTE_RIGHTS_SHIFT |
	     (u32)ctx->id << TGR_PTE_CTX_SHIFT |
	     arg->group << TGR_PTE_NODE_SHIFT;
	for (i = 0; i < npages; i++)
		tgr_pte_write(dev, imp->first_page + i, w0, i,
			      (g->seg->first_eidx + i) << 16, 0);
	g->imp = imp;
	g->group = arg->group;
	/* the size first: a copy beyond it must never reach the next group */
	tgr_wr(dev, TGR_REG_GROUP_PAGES + 4 * arg->group, npages);
	tgr_wr(dev, TGR_REG_GROUP_EIDX + 4 * arg->group, g->seg->first_eidx);
	list_add(&g->link, &ctx->groups);
	arg->npages = npages;
	arg->first_page = imp->first_page;
	arg->window_cookie = tgr_import_cookie(imp, -1);
	mutex_unlock(&dev->lock);
	return 0;

err_unpin:
	mutex_unlock(&dev->lock);
	tgr_unpin(ctx, pages, npages);
err_free:
	kfree(g);
	return ret;
}

void tgr_group_free(struct tgr_ctx *ctx, struct tgr_group *g)
{
	struct tgr_dev *dev = ctx->dev;

	if (!dev->gone) {
		tgr_wr(dev, TGR_REG_GROUP_EIDX + 4 * g->group, TGR_GROUP_NONE);
		tgr_wr(dev, TGR_REG_GROUP_PAGES + 4 * g->group, 0);
	}
	tgr_import_free(ctx, g->imp);
	tgr_seg_remove(ctx, g->seg);
	list_del(&g->link);
	kfree(g);
}

int tgr_ioc_mcast_leave(struct tgr_ctx *ctx, u32 group)
{
	struct tgr_group *g;

	list_for_each_entry(g, &ctx->groups, link) {
		if (g->group == group) {
			tgr_group_free(ctx, g);
			return 0;
		}
	}
	return -ENOENT;
}
