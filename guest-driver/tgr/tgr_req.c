// SPDX-License-Identifier: GPL-2.0
/*
 * Telegraphos driver: REQ queues (the paper's remote enqueue, §4).
 *
 * A queue is a region (tgr_qlogic.h): the hardware buffer the NIC
 * enqueues into, a control page and a pool of copy buffers, all kernel
 * pages mapped into the owner. On overflow the NIC stops and interrupts;
 * the threaded handler runs the paper's protocol through tgr_qlogic.h:
 * if a dequeue is running (do-not-preempt-me) it sets full-queue and
 * leaves the NIC stopped, else it copies the full buffer into a copy
 * buffer, links it, resets the hardware buffer and resumes the NIC.
 * REQ_RELINK, called by the dequeuer that saw full, does the same.
 */

#include <linux/cred.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "tgr_drv.h"

/* Copy buffers of one queue, at most (kernel memory) */
#define TGR_REQ_POOL_MAX_BYTES	(32u << 20)

static void *tgr_q_map(void *opaque, __u32 off, __u32 bytes)
{
	struct tgr_queue *q = opaque;
	const struct tgr_ql_layout *l = &q->lay;
	u64 end = (u64)off + bytes;

	if (end <= l->hw_bytes)
		return page_address(q->hw) + off;
	if (off >= l->ctrl_off && end <= (u64)l->ctrl_off + TGR_QL_CTRL_BYTES)
		return page_address(q->ctrl) + (off - l->ctrl_off);
	if (off >= l->pool_off && end <= l->region_bytes)
		return q->pool_va + (off - l->pool_off);
	return NULL;
}

static void tgr_q_ql(struct tgr_queue *q, struct tgr_ql *ql)
{
	ql->lay = &q->lay;
	ql->map = tgr_q_map;
	ql->opaque = q;
}

static void tgr_resume(struct tgr_dev *dev)
{
	if (dev->gone)
		return;
	tgr_wr(dev, TGR_REG_CTRL, TGR_CTRL_RESUME);
	dev->resumes++;
}

/* ---- how long an owner may keep the NI stopped ---- */

static unsigned long tgr_stop_max(void)
{
	return msecs_to_jiffies(clamp(READ_ONCE(tgr_stop_max_ms), 1u, 60000u));
}

static void tgr_stop_init(struct tgr_dev *dev)
{
	unsigned int i;

	dev->stop_stamp = jiffies;
	/* expired: jiffies start near the wrap, so 0 would be the future */
	for (i = 0; i < TGR_PENALTY_UIDS; i++)
		dev->penalty[i].until = jiffies;
}

/* The NI no longer waits for q (RELINK, destroy, withdrawal). */
static void tgr_stop_end(struct tgr_dev *dev, struct tgr_queue *q)
{
	if (dev->stop_q != q)
		return;
	dev->stopped_ms += jiffies_to_msecs(jiffies - dev->stop_stamp);
	dev->stop_q = NULL;
	/* the work looks at stop_q under dev->lock: no need to wait for it */
	cancel_delayed_work(&dev->stop_work);
}

/* Has this user had a queue withdrawn lately?  (dev->lock held) */
static bool tgr_uid_penalised(struct tgr_dev *dev, kuid_t uid)
{
	unsigned int i;

	for (i = 0; i < TGR_PENALTY_UIDS; i++)
		if (time_before(jiffies, dev->penalty[i].until) &&
		    uid_eq(dev->penalty[i].uid, uid))
			return true;
	return false;
}

static void tgr_uid_penalise(struct tgr_dev *dev, kuid_t uid)
{
	unsigned long until = jiffies +
		clamp(READ_ONCE(tgr_stop_penalty_s), 0u, 3600u) * HZ;
	unsigned int i, pick = 0;

	for (i = 0; i < TGR_PENALTY_UIDS; i++) {
		if (uid_eq(dev->penalty[i].uid, uid) ||
		    !time_before(jiffies, dev->penalty[i].until)) {
			pick = i;
			break;
		}
		if (time_before(dev->penalty[i].until, dev->penalty[pick].until))
			pick = i;
	}
	dev->penalty[pick].uid = uid;
	dev->penalty[pick].until = until;
}

/*
 * The owner kept the NI stopped too long: its queue stops being a target
 * (senders' REQs are refused, UNEXPORTED) and the NI resumes.  The owner
 * keeps the region to read what is in it; RELINK fails.
 */
static void tgr_queue_withdraw(struct tgr_dev *dev, struct tgr_queue *q)
{
	struct tgr_event ev = { .type = TGR_EVENT_QFULL, .reason = 2 };
	unsigned long flags;

	tgr_stop_end(dev, q);
	ev.id = q->qid;
	ev.page = q->seg->first_eidx;
	tgr_seg_remove(q->ctx, q->seg);
	q->seg = NULL;
	q->withdrawn = true;
	q->stopped = false;
	dev->withdrawn++;
	tgr_uid_penalise(dev, q->ctx->filp->f_cred->euid);
	dev_warn_ratelimited(&dev->pdev->dev,
			     "queue %u of context %u kept the NI stopped too long: withdrawn\n",
			     q->qid, q->ctx->id);
	spin_lock_irqsave(&dev->ctx_lock, flags);
	tgr_ctx_event(q->ctx, &ev);
	spin_unlock_irqrestore(&dev->ctx_lock, flags);
	tgr_resume(dev);
}

static void tgr_stop_work(struct work_struct *work)
{
	struct tgr_dev *dev = container_of(to_delayed_work(work),
					   struct tgr_dev, stop_work);

	mutex_lock(&dev->lock);
	if (!dev->gone && dev->stop_q) {
		if (time_before(jiffies, dev->stop_stamp + tgr_stop_max()))
			mod_delayed_work(system_wq, &dev->stop_work,
					 dev->stop_stamp + tgr_stop_max() -
					 jiffies);
		else
			tgr_queue_withdraw(dev, dev->stop_q);
	}
	mutex_unlock(&dev->lock);
}

/*
 * q's overflow was deferred: the NI waits for its owner, at most
 * stop_max_ms; not at all if that user overstayed lately.
 */
static void tgr_stop_begin(struct tgr_dev *dev, struct tgr_queue *q)
{
	dev->stop_q = q;
	dev->stop_stamp = jiffies;
	if (tgr_uid_penalised(dev, q->ctx->filp->f_cred->euid))
		tgr_queue_withdraw(dev, q);
	else
		mod_delayed_work(system_wq, &dev->stop_work, tgr_stop_max());
}

static void tgr_q_release_mem(struct tgr_queue *q)
{
	u32 i;

	if (q->pool_va)
		vunmap(q->pool_va);
	for (i = 0; q->pool && i < q->pool_pages; i++)
		if (q->pool[i])
			__free_page(q->pool[i]);
	kvfree(q->pool);
	if (q->ctrl)
		__free_page(q->ctrl);
	if (q->hw)
		__free_pages(q->hw, q->hw_order);
	kfree(q->seg_pages);
}

static int tgr_q_alloc_mem(struct tgr_queue *q)
{
	const struct tgr_ql_layout *l = &q->lay;
	u32 i, hw_pages = l->ctrl_off >> PAGE_SHIFT;

	q->hw_order = get_order(l->ctrl_off);
	q->hw = alloc_pages(GFP_KERNEL | __GFP_ZERO, q->hw_order);
	q->ctrl = alloc_page(GFP_KERNEL | __GFP_ZERO);
	q->pool_pages = (l->region_bytes - l->pool_off) >> PAGE_SHIFT;
	q->pool = kvcalloc(q->pool_pages, sizeof(*q->pool), GFP_KERNEL);
	q->seg_pages = kcalloc(hw_pages, sizeof(*q->seg_pages), GFP_KERNEL);
	if (!q->hw || !q->ctrl || !q->pool || !q->seg_pages)
		return -ENOMEM;
	for (i = 0; i < q->pool_pages; i++) {
		q->pool[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!q->pool[i])
			return -ENOMEM;
	}
	q->pool_va = vmap(q->pool, q->pool_pages, VM_MAP, PAGE_KERNEL);
	if (!q->pool_va)
		return -ENOMEM;
	for (i = 0; i < hw_pages; i++)
		q->seg_pages[i] = q->hw + i;
	return 0;
}

/* The region's pages count against the file's max_pinned_mb. */
static int tgr_q_charge(struct tgr_ctx *ctx, struct tgr_queue *q)
{
	long cap = (long)READ_ONCE(tgr_max_pinned_mb) << (20 - PAGE_SHIFT);
	long n = q->lay.region_bytes >> PAGE_SHIFT;

	if (atomic_long_add_return(n, &ctx->pinned) > cap) {
		atomic_long_sub(n, &ctx->pinned);
		return -ENOMEM;
	}
	q->charged = n;
	return 0;
}

int tgr_ioc_req_create(struct tgr_ctx *ctx, struct tgr_req_create *arg)
{
	struct tgr_dev *dev = ctx->dev;
	u32 copies = arg->copies ?: TGR_REQ_DEF_COPIES;
	struct tgr_queue *q;
	struct tgr_ql ql;
	int ret, id;

	if (!is_power_of_2(arg->bytes) || arg->bytes < TGR_Q_MIN_BYTES ||
	    arg->bytes > TGR_Q_MAX_BYTES || copies > TGR_REQ_MAX_COPIES)
		return -EINVAL;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	ret = tgr_ql_layout_init(&q->lay, arg->bytes, copies);
	if (ret)
		goto err_free;
	ret = -EINVAL;	/* too many copies of that size */
	if ((u64)copies * q->lay.copy_bytes > TGR_REQ_POOL_MAX_BYTES)
		goto err_free;
	/* kernel memory on a user's behalf: counted like pinned pages */
	ret = tgr_q_charge(ctx, q);
	if (ret)
		goto err_free;
	ret = tgr_q_alloc_mem(q);
	if (ret)
		goto err_mem;
	tgr_q_ql(q, &ql);
	ret = tgr_ql_init(&ql);
	if (ret)
		goto err_mem;
	id = ida_alloc_range(&dev->obj_ida, 1, TGR_MAX_OBJ_ID, GFP_KERNEL);
	if (id < 0) {
		ret = id;
		goto err_mem;
	}
	q->qid = id;
	/* the NIC's target: REQ right only, the first page flagged QHEAD */
	ret = tgr_seg_add(ctx, q->seg_pages, max(1u, arg->bytes >> PAGE_SHIFT),
			  TGR_R_REQ, TGR_EXP_QHEAD, ilog2(arg->bytes), true,
			  &q->seg);
	if (ret)
		goto err_id;
	q->ctx = ctx;
	list_add(&q->link, &ctx->queues);

	arg->qid = q->qid;
	arg->segid = q->seg->segid;
	arg->cookie = TGR_MMAP_COOKIE(TGR_MMAP_QUEUE_KIND, 0, q->qid);
	arg->region_bytes = q->lay.region_bytes;
	arg->hw_off = 0;
	arg->ctrl_off = q->lay.ctrl_off;
	arg->pool_off = q->lay.pool_off;
	arg->copy_bytes = q->lay.copy_bytes;
	arg->copies = copies;
	return 0;

err_id:
	ida_free(&dev->obj_ida, id);
err_mem:
	tgr_q_release_mem(q);
	atomic_long_sub(q->charged, &ctx->pinned);
err_free:
	kfree(q);
	return ret;
}

/*
 * Unexported first, so that requests held behind it are refused when the
 * NIC resumes; a dead owner never leaves the NIC stopped.
 */
void tgr_queue_free(struct tgr_ctx *ctx, struct tgr_queue *q)
{
	struct tgr_dev *dev = ctx->dev;

	tgr_unmap_cookie(ctx, TGR_MMAP_COOKIE(TGR_MMAP_QUEUE_KIND, 0, q->qid),
			 q->lay.region_bytes);
	if (q->seg)
		tgr_seg_remove(ctx, q->seg);
	tgr_stop_end(dev, q);
	if (q->stopped) {
		q->stopped = false;
		tgr_resume(dev);
	}
	ida_free(&dev->obj_ida, q->qid);
	list_del(&q->link);
	tgr_q_release_mem(q);
	atomic_long_sub(q->charged, &ctx->pinned);
	kfree(q);
}

static struct tgr_queue *tgr_queue_find(struct tgr_ctx *ctx, u32 qid)
{
	struct tgr_queue *q;

	list_for_each_entry(q, &ctx->queues, link)
		if (q->qid == qid)
			return q;
	return NULL;
}

int tgr_ioc_req_destroy(struct tgr_ctx *ctx, u32 qid)
{
	struct tgr_queue *q = tgr_queue_find(ctx, qid);

	if (!q)
		return -ENOENT;
	tgr_queue_free(ctx, q);
	return 0;
}

int tgr_ioc_req_relink(struct tgr_ctx *ctx, struct tgr_req_relink *arg)
{
	struct tgr_queue *q = tgr_queue_find(ctx, arg->qid);
	struct tgr_ql ql;
	u32 moved = 0;
	int ret;

	if (!q)
		return -ENOENT;
	arg->linked = 0;
	if (q->withdrawn)
		return -ETIMEDOUT;
	if (!q->stopped)
		return 0;	/* a stale full flag: nothing waits */
	tgr_q_ql(q, &ql);
	ret = tgr_ql_relink(&ql, &moved);
	if (ret == 0 || ret == -EIO) {
		tgr_stop_end(ctx->dev, q);
		q->stopped = false;
		ctx->dev->relinks++;
		tgr_resume(ctx->dev);
	}
	if (ret == -EIO)
		dev_warn_ratelimited(&ctx->dev->pdev->dev,
				     "queue %u of context %u was damaged: emptied\n",
				     q->qid, ctx->id);
	arg->linked = moved;
	return ret;
}

static struct tgr_queue *tgr_queue_by_eidx(struct tgr_dev *dev, u32 eidx,
					   struct tgr_ctx **owner)
{
	struct tgr_queue *q;
	unsigned int i;

	for (i = 1; i < TGR_CTX_MAX; i++) {
		if (!dev->ctxs[i])
			continue;
		list_for_each_entry(q, &dev->ctxs[i]->queues, link) {
			if (q->seg && q->seg->first_eidx == eidx) {
				*owner = dev->ctxs[i];
				return q;
			}
		}
	}
	return NULL;
}

/* The threaded half of the interrupt: ISR.OVF was set. */
static void tgr_overflow(struct tgr_dev *dev)
{
	struct tgr_ctx *ctx = NULL;
	struct tgr_event ev = { .type = TGR_EVENT_QFULL };
	struct tgr_queue *q;
	unsigned long flags;
	struct tgr_ql ql;
	u32 eidx;
	int ret;

	mutex_lock(&dev->lock);
	if (dev->gone || !(tgr_rd(dev, TGR_REG_CTRL) & TGR_STATUS_STOPPED))
		goto out;
	eidx = tgr_rd(dev, TGR_REG_OVF_EIDX);
	dev->overflows++;
	q = tgr_queue_by_eidx(dev, eidx, &ctx);
	if (!q) {
		/* its owner went away meanwhile: nothing to keep */
		dev_dbg(&dev->pdev->dev, "overflow of a queue that is gone (eidx %u)\n",
			eidx);
		tgr_resume(dev);
		goto out;
	}
	if (q->stopped)
		goto out;	/* already waiting for RELINK */
	q->overflows++;
	tgr_q_ql(q, &ql);
	ret = tgr_ql_handle_overflow(&ql);
	if (ret == TGR_QL_DEFERRED || ret == -ENOSPC) {
		/* the paper: full-queue set, the NIC stays stopped */
		q->stopped = true;
		ev.id = q->qid;
		ev.page = eidx;
		ev.node = tgr_rd(dev, TGR_REG_OVF_SRC);
		ev.reason = ret == -ENOSPC;
		spin_lock_irqsave(&dev->ctx_lock, flags);
		tgr_ctx_event(ctx, &ev);
		spin_unlock_irqrestore(&dev->ctx_lock, flags);
		tgr_stop_begin(dev, q);
		goto out;
	}
	if (ret == -EIO || ret == -EFAULT)
		dev_warn_ratelimited(&dev->pdev->dev,
				     "queue %u of context %u was damaged: emptied\n",
				     q->qid, ctx->id);
	tgr_resume(dev);
out:
	mutex_unlock(&dev->lock);
}

/*
 * The core's init hook, before the interrupt is set up: the overflow
 * interrupt and the stop timer come here.
 */
void tgr_req_init(struct tgr_dev *dev)
{
	INIT_DELAYED_WORK(&dev->stop_work, tgr_stop_work);
	tgr_stop_init(dev);
	dev->overflow = tgr_overflow;
}
