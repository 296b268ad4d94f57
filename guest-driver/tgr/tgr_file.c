// SPDX-License-Identifier: GPL-2.0
/*
 * Telegraphos driver: /dev/tgrN. open (a context), release, ioctl, mmap,
 * poll and the per-file event queue's reader.
 */

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "tgr_drv.h"

/* ---- events ---- */

static int tgr_ioc_events(struct tgr_ctx *ctx, struct tgr_events *arg)
{
	struct tgr_event *buf;
	unsigned long flags;
	u32 n = 0, max = min_t(u32, arg->max, TGR_CTX_EVENTS);

	buf = kmalloc_array(max ?: 1, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	spin_lock_irqsave(&ctx->ev_lock, flags);
	while (n < max && ctx->ev_tail != ctx->ev_head) {
		buf[n] = ctx->ev[ctx->ev_tail++ % TGR_CTX_EVENTS];
		if (tgr_event_is_error(buf[n].type))
			ctx->ev_err--;
		n++;
	}
	arg->lost = ctx->ev_lost;
	ctx->ev_lost = 0;
	spin_unlock_irqrestore(&ctx->ev_lock, flags);
	arg->count = n;
	if (n && copy_to_user(u64_to_user_ptr(arg->buf), buf,
			      n * sizeof(*buf))) {
		kfree(buf);
		return -EFAULT;
	}
	kfree(buf);
	return 0;
}

static __poll_t tgr_poll(struct file *filp, poll_table *wait)
{
	struct tgr_ctx *ctx = filp->private_data;
	unsigned long flags;
	__poll_t mask = 0;

	poll_wait(filp, &ctx->wq, wait);
	spin_lock_irqsave(&ctx->ev_lock, flags);
	if (ctx->ev_err || READ_ONCE(ctx->stale))
		mask |= EPOLLPRI | EPOLLERR;
	if (ctx->ev_head - ctx->ev_tail > ctx->ev_err)
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock_irqrestore(&ctx->ev_lock, flags);
	if (READ_ONCE(ctx->dev->gone))
		mask |= EPOLLHUP | EPOLLERR;
	return mask;
}

/* ---- open / release ---- */

static int tgr_open(struct inode *inode, struct file *filp)
{
	struct tgr_dev *dev = container_of(filp->private_data, struct tgr_dev,
					   misc);
	unsigned long flags;
	struct tgr_ctx *ctx;
	phys_addr_t status;
	unsigned int id, n;
	u32 off;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->status = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!ctx->status) {
		kfree(ctx);
		return -ENOMEM;
	}
	ctx->dev = dev;
	ctx->filp = filp;
	INIT_LIST_HEAD(&ctx->segs);
	INIT_LIST_HEAD(&ctx->imports);
	INIT_LIST_HEAD(&ctx->mirrors);
	INIT_LIST_HEAD(&ctx->queues);
	INIT_LIST_HEAD(&ctx->groups);
	spin_lock_init(&ctx->ev_lock);
	init_waitqueue_head(&ctx->wq);

	/*
	 * Round robin, so that a new file does not inherit a just-closed
	 * context's state in the card (a read record its process left).
	 */
	mutex_lock(&dev->lock);
	for (n = 0, id = dev->last_ctx; n < TGR_CTX_MAX - 1; n++) {
		id = id % (TGR_CTX_MAX - 1) + 1;
		if (!dev->ctxs[id])
			break;
	}
	if (dev->gone || n == TGR_CTX_MAX - 1) {
		mutex_unlock(&dev->lock);
		__free_page(ctx->status);
		kfree(ctx);
		return dev->gone ? -ENODEV : -EBUSY;
	}
	ctx->id = id;
	dev->last_ctx = id;
	status = page_to_phys(ctx->status);
	off = TGR_CTX_TABLE + id * TGR_CTX_ENTRY;
	tgr_wr(dev, off, lower_32_bits(status));
	tgr_wr(dev, off + 4, upper_32_bits(status));
	tgr_wr(dev, off + 8, TGR_CTXF_VALID);
	spin_lock_irqsave(&dev->ctx_lock, flags);
	dev->ctxs[id] = ctx;
	spin_unlock_irqrestore(&dev->ctx_lock, flags);
	kref_get(&dev->kref);
	mutex_unlock(&dev->lock);

	ctx->tgid = get_pid(task_tgid(current));
	filp->private_data = ctx;
	tgr_threads_reap(false);
	return 0;
}

static int tgr_release(struct inode *inode, struct file *filp)
{
	struct tgr_ctx *ctx = filp->private_data;
	struct tgr_dev *dev = ctx->dev;
	struct tgr_imp *imp, *itmp;
	struct tgr_mirror *m, *mtmp;
	struct tgr_queue *q, *qtmp;
	struct tgr_group *g, *gtmp;
	struct tgr_seg *s, *stmp;
	unsigned long flags;
	u32 off;

	tgr_threads_detach(ctx);
	mutex_lock(&dev->lock);
	list_for_each_entry_safe(q, qtmp, &ctx->queues, link)
		tgr_queue_free(ctx, q);
	list_for_each_entry_safe(g, gtmp, &ctx->groups, link)
		tgr_group_free(ctx, g);
	list_for_each_entry_safe(imp, itmp, &ctx->imports, link)
		tgr_import_free(ctx, imp);
	list_for_each_entry_safe(m, mtmp, &ctx->mirrors, link)
		tgr_mirror_free(ctx, m);
	list_for_each_entry_safe(s, stmp, &ctx->segs, link)
		tgr_seg_remove(ctx, s);
	if (!dev->gone) {
		off = TGR_CTX_TABLE + ctx->id * TGR_CTX_ENTRY;
		tgr_wr(dev, off + 8, 0);
		tgr_wr(dev, off, 0);
		tgr_wr(dev, off + 4, 0);
	}
	spin_lock_irqsave(&dev->ctx_lock, flags);
	dev->ctxs[ctx->id] = NULL;
	spin_unlock_irqrestore(&dev->ctx_lock, flags);
	mutex_unlock(&dev->lock);

	WARN_ON(atomic_long_read(&ctx->pinned));
	put_pid(ctx->tgid);
	__free_page(ctx->status);
	kfree(ctx);
	tgr_dev_put(dev);
	return 0;
}

/* ---- ioctl ---- */

static int tgr_ioc_info(struct tgr_ctx *ctx, struct tgr_info *info)
{
	struct tgr_dev *dev = ctx->dev;

	memset(info, 0, sizeof(*info));
	info->abi = TGR_ABI_VERSION;
	info->node = dev->node;
	info->nodes = dev->gone ? 0 : tgr_rd(dev, TGR_REG_NODES);
	info->win_pages = dev->win_pages;
	mutex_lock(&dev->lock);
	info->win_free = dev->win_pages - bitmap_weight(dev->win_map,
							dev->win_pages);
	mutex_unlock(&dev->lock);
	info->mirror_mb = dev->mirror_mb;
	info->ctx = ctx->id;
	info->stopped = dev->gone ? 0 :
		!!(tgr_rd(dev, TGR_REG_CTRL) & TGR_STATUS_STOPPED);
	info->page_size = TGR_PAGE_SIZE;
	info->status_cookie = TGR_MMAP_STATUS;
	return 0;
}

union tgr_ioc_arg {
	struct tgr_info info;
	struct tgr_thread thread;
	struct tgr_export exp;
	struct tgr_id id;
	struct tgr_import imp;
	struct tgr_map_local ml;
	struct tgr_req_create rc;
	struct tgr_req_relink rl;
	struct tgr_counter_arm ca;
	struct tgr_mcast_join mj;
	struct tgr_mcast_leave ml2;
	struct tgr_events ev;
	struct tgr_force_write fw;
};

static int tgr_dispatch(struct tgr_ctx *ctx, unsigned int cmd,
			union tgr_ioc_arg *a)
{
	struct tgr_dev *dev = ctx->dev;
	int ret;

	switch (cmd) {
	case TGR_IOC_INFO:
		return tgr_ioc_info(ctx, &a->info);
	case TGR_IOC_THREAD:
		a->thread.ctx = ctx->id;
		return a->thread.enable ? tgr_thread_register(ctx) :
					    tgr_thread_unregister(ctx);
	case TGR_IOC_EVENTS:
		return tgr_ioc_events(ctx, &a->ev);
	/* these pin pages or wait for the network: not under dev->lock */
	case TGR_IOC_EXPORT:
		return tgr_ioc_export(ctx, &a->exp);
	case TGR_IOC_MAP_LOCAL:
		return tgr_ioc_map_local(ctx, &a->ml);
	case TGR_IOC_MCAST_JOIN:
		return tgr_ioc_mcast_join(ctx, &a->mj);
	case TGR_IOC_IMPORT:
		return tgr_ioc_import(ctx, &a->imp);
	case TGR_IOC_FORCE_WRITE:
		return capable(CAP_SYS_ADMIN) ?
		       tgr_ioc_force_write(ctx, &a->fw) : -EPERM;
	}

	mutex_lock(&dev->lock);
	if (dev->gone) {
		mutex_unlock(&dev->lock);
		return -ENODEV;
	}
	switch (cmd) {
	case TGR_IOC_UNEXPORT:
		ret = tgr_ioc_unexport(ctx, a->id.id);
		break;
	case TGR_IOC_UNIMPORT:
		ret = tgr_ioc_unimport(ctx, a->id.id);
		break;
	case TGR_IOC_UNMAP_LOCAL:
		ret = tgr_ioc_unmap_local(ctx, a->id.id);
		break;
	case TGR_IOC_REQ_CREATE:
		ret = tgr_ioc_req_create(ctx, &a->rc);
		break;
	case TGR_IOC_REQ_RELINK:
		ret = tgr_ioc_req_relink(ctx, &a->rl);
		break;
	case TGR_IOC_REQ_DESTROY:
		ret = tgr_ioc_req_destroy(ctx, a->id.id);
		break;
	case TGR_IOC_COUNTER_ARM:
		ret = tgr_ioc_counter_arm(ctx, &a->ca);
		break;
	case TGR_IOC_MCAST_LEAVE:
		ret = tgr_ioc_mcast_leave(ctx, a->ml2.group);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	mutex_unlock(&dev->lock);
	return ret;
}

static long tgr_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct tgr_ctx *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;
	union tgr_ioc_arg a;
	unsigned int size = _IOC_SIZE(cmd);
	int ret;

	if (_IOC_TYPE(cmd) != TGR_IOC_MAGIC || size > sizeof(a))
		return -ENOTTY;
	memset(&a, 0, sizeof(a));
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy_from_user(&a, uarg, size))
		return -EFAULT;
	ret = tgr_dispatch(ctx, cmd, &a);
	if (ret)
		return ret;
	if ((_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(uarg, &a, size))
		return -EFAULT;
	return 0;
}

/* ---- mmap ---- */

/* Mappings are filled at mmap() time: a fault means a revoked mapping. */
static const struct vm_operations_struct tgr_vm_ops = {
	.fault = nic_vm_fault_sigbus,
};

static struct tgr_imp *tgr_find_import(struct tgr_ctx *ctx, u32 iid)
{
	struct tgr_imp *imp;

	list_for_each_entry(imp, &ctx->imports, link)
		if (imp->iid == iid)
			return imp;
	return NULL;
}

static int tgr_mmap_import(struct tgr_ctx *ctx, struct vm_area_struct *vma,
			   unsigned int kind, unsigned int op, u32 id,
			   u32 first, u32 npages)
{
	struct tgr_dev *dev = ctx->dev;
	struct tgr_imp *imp = tgr_find_import(ctx, id);
	unsigned long pages = vma_pages(vma);
	phys_addr_t base;
	u32 need_r, need_w;
	int ret;

	if (!imp || imp->stale)
		return -ENXIO;
	if (first >= imp->npages || pages > imp->npages - first)
		return -EINVAL;
	if (kind == TGR_MMAP_WINDOW_KIND) {
		need_r = imp->mcast ? 0 : TGR_R_READ;
		need_w = TGR_R_WRITE;
		if ((vma->vm_flags & VM_READ) && (imp->granted & need_r) != need_r)
			return -EACCES;
		if ((vma->vm_flags & VM_WRITE) && !(imp->granted & need_w))
			return -EACCES;
		if (!(imp->granted & need_w))
			vma->vm_flags &= ~VM_MAYWRITE;
		base = dev->win_phys +
		       (phys_addr_t)(imp->first_page + first) * PAGE_SIZE;
	} else {
		if (op >= TGR_OP_NUM || !tgr_import_cookie(imp, op))
			return -EACCES;
		base = dev->shadow_phys +
		       TGR_SHADOW_OFF((u64)op, (u64)(imp->first_page + first),
				      0);
	}
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	ret = io_remap_pfn_range(vma, vma->vm_start, base >> PAGE_SHIFT,
				 pages << PAGE_SHIFT, vma->vm_page_prot);
	if (!ret)
		WRITE_ONCE(imp->uaddr[kind == TGR_MMAP_WINDOW_KIND ? 0 : 1 + op],
			   vma->vm_start - (unsigned long)first * PAGE_SIZE);
	return ret;
}

static int tgr_mmap_mirror(struct tgr_ctx *ctx, struct vm_area_struct *vma,
			   u32 id, u32 first)
{
	struct tgr_dev *dev = ctx->dev;
	unsigned long pages = vma_pages(vma), i;
	struct tgr_mirror *m;
	int ret;

	list_for_each_entry(m, &ctx->mirrors, link) {
		if (m->mid != id)
			continue;
		if (first >= m->npages || pages > m->npages - first)
			return -EINVAL;
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
		for (i = 0; i < pages; i++) {
			phys_addr_t p = dev->shadow_phys +
					page_to_phys(m->pages[first + i]);

			ret = io_remap_pfn_range(vma, vma->vm_start + i * PAGE_SIZE,
						 p >> PAGE_SHIFT, PAGE_SIZE,
						 vma->vm_page_prot);
			if (ret)
				return ret;
		}
		return 0;
	}
	return -ENXIO;
}

static int tgr_remap_page(struct vm_area_struct *vma, unsigned long uaddr,
			  struct page *page, unsigned long n)
{
	return remap_pfn_range(vma, uaddr, page_to_pfn(page), n << PAGE_SHIFT,
			       vma->vm_page_prot);
}

static int tgr_mmap_queue(struct tgr_ctx *ctx, struct vm_area_struct *vma,
			  u32 id, u32 first)
{
	unsigned long pages = vma_pages(vma), uaddr = vma->vm_start;
	unsigned long hw_pages, pg;
	struct tgr_queue *q;
	int ret = 0;

	list_for_each_entry(q, &ctx->queues, link) {
		if (q->qid != id)
			continue;
		if (first || pages != q->lay.region_bytes >> PAGE_SHIFT)
			return -EINVAL;	/* the region is mapped whole */
		hw_pages = q->lay.ctrl_off >> PAGE_SHIFT;
		ret = tgr_remap_page(vma, uaddr, q->hw, hw_pages);
		uaddr += hw_pages << PAGE_SHIFT;
		if (!ret)
			ret = tgr_remap_page(vma, uaddr, q->ctrl, 1);
		uaddr += PAGE_SIZE;
		for (pg = 0; !ret && pg < q->pool_pages; pg++) {
			ret = tgr_remap_page(vma, uaddr, q->pool[pg], 1);
			uaddr += PAGE_SIZE;
		}
		return ret;
	}
	return -ENXIO;
}

static int tgr_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct tgr_ctx *ctx = filp->private_data;
	struct tgr_dev *dev = ctx->dev;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned int kind = (off >> TGR_MMAP_KIND_SHIFT) & 0xf;
	unsigned int op = (off >> TGR_MMAP_OP_SHIFT) & 0xf;
	u32 id = (off >> TGR_MMAP_ID_SHIFT) & TGR_MMAP_ID_MASK;
	u32 first = (off & ((1ull << TGR_MMAP_ID_SHIFT) - 1)) >> PAGE_SHIFT;
	int ret;

	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	if (off >> (TGR_MMAP_KIND_SHIFT + 4))
		return -EINVAL;
	/* only shadow cookies carry an op: other bits were never handed out */
	if (op && kind != TGR_MMAP_SHADOW_KIND)
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
			 VM_DONTDUMP;
	vma->vm_ops = &tgr_vm_ops;

	mutex_lock(&dev->lock);
	if (dev->gone) {
		ret = -ENODEV;
		goto out;
	}
	switch (kind) {
	case TGR_MMAP_STATUS_KIND:
		ret = -EINVAL;
		if (op || id || first || vma_pages(vma) != 1)
			break;
		ret = -EACCES;
		if (vma->vm_flags & VM_WRITE)
			break;
		vma->vm_flags &= ~VM_MAYWRITE;
		ret = tgr_remap_page(vma, vma->vm_start, ctx->status, 1);
		break;
	case TGR_MMAP_WINDOW_KIND:
	case TGR_MMAP_SHADOW_KIND:
		ret = tgr_mmap_import(ctx, vma, kind, op, id, first,
				      vma_pages(vma));
		break;
	case TGR_MMAP_MIRROR_KIND:
		ret = tgr_mmap_mirror(ctx, vma, id, first);
		break;
	case TGR_MMAP_QUEUE_KIND:
		ret = tgr_mmap_queue(ctx, vma, id, first);
		break;
	default:
		ret = -EINVAL;
		break;
	}
out:
	mutex_unlock(&dev->lock);
	return ret;
}

const struct file_operations tgr_fops = {
	.owner = THIS_MODULE,
	.open = tgr_open,
	.release = tgr_release,
	.unlocked_ioctl = tgr_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = tgr_mmap,
	.poll = tgr_poll,
	.llseek = noop_llseek,
};
