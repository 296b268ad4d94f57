// SPDX-License-Identifier: GPL-2.0
/*
 * Myrinet card driver: /dev/myriN.
 *
 * Opening the device gives a file that may take one context of the MCP
 * (MYRI_IOC_OPEN_CTX), map it, and wait on it with poll() or
 * MYRI_IOC_WAIT; any opener may map the node's shared pool. Everything a
 * file holds goes with its last reference, also when its process dies.
 */

#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "myri.h"

#define MYRI_TX_POLL_MS		5	/* re-check a full send ring */

static int myri_open(struct inode *inode, struct file *file)
{
	struct miscdevice *misc = file->private_data;
	struct myri_dev *dev = container_of(misc, struct myri_dev, misc);
	struct myri_file *mf;

	mf = kzalloc(sizeof(*mf), GFP_KERNEL);
	if (!mf)
		return -ENOMEM;

	mutex_lock(&dev->lock);
	if (myri_state(dev) == MYRI_STATE_REMOVED) {
		mutex_unlock(&dev->lock);
		kfree(mf);
		return -ENODEV;
	}
	kref_get(&dev->kref);
	mf->dev = dev;
	mf->file = file;
	INIT_LIST_HEAD(&mf->ctx_node);
	nic_opener_add(&mf->opener, &dev->files);
	dev->open_count++;
	myri_count(dev, MYRI_CNT_OPENS);
	mutex_unlock(&dev->lock);

	file->private_data = mf;
	return 0;
}

/*
 * Also when the process died: its mappings held the file, so nothing of
 * the context is mapped any more. The last user of the node leaves a
 * zeroed pool, so that locks a crashed process held there do not block
 * the next one.
 */
static int myri_release(struct inode *inode, struct file *file)
{
	struct myri_file *mf = file->private_data;
	struct myri_dev *dev = mf->dev;

	mutex_lock(&dev->lock);
	nic_opener_del(&mf->opener);
	myri_ctx_release(mf);
	if (!--dev->open_count)
		memset(dev->pool, 0, dev->pool_size);
	mutex_unlock(&dev->lock);

	put_pid(mf->opener.pid);
	kfree(mf);
	myri_dev_put(dev);
	return 0;
}

/* ---- waiting ---- */

static void myri_ctx_irq_get(struct myri_ctx *ctx)
{
	spin_lock(&ctx->irq_lock);
	if (!ctx->kwaiters++ && !ctx->pollers)
		myri_ctx_irq_write(ctx);
	spin_unlock(&ctx->irq_lock);
}

static void myri_ctx_irq_put(struct myri_ctx *ctx, bool live)
{
	spin_lock(&ctx->irq_lock);
	if (!--ctx->kwaiters && !ctx->pollers && live)
		myri_ctx_irq_write(ctx);
	spin_unlock(&ctx->irq_lock);
}

/*
 * Ask for a notify at the next event, then look: either the MCP sees
 * want_notify and notifies, or we see its ev_prod. io_lock held, live.
 */
static u32 myri_ctx_arm_and_check(struct myri_ctx *ctx)
{
	struct myri_dev *dev = ctx->dev;
	u32 ready = 0, next, state;

	myri_sram_wr(dev, MYRI_USER(ctx, want_notify), 1);
	mb();	/* the store above before the loads below (Dekker) */
	if (myri_sram_rd(dev, MYRI_USER(ctx, ev_prod)) !=
	    myri_sram_rd(dev, MYRI_USER(ctx, ev_cons)))
		ready |= MYRI_WAIT_RX;
	next = myri_sram_rd(dev, MYRI_USER(ctx, slot_next)) &
	       (ctx->nslots - 1);
	state = myri_sram_rd(dev, ctx->send_off + MYRI_CTX_USER_SIZE +
			     next * ctx->slot_size +
			     offsetof(struct myri_slot, state));
	if (state == MYRI_SLOT_FREE)
		ready |= MYRI_WAIT_TX;
	return ready;
}

/*
 * Sleep until one of @events holds. RX wakes on the MCP's interrupt. A
 * freed slot gives no event unless the user asked for one
 * (MYRI_SLOT_F_EVENT), so TX waits look again every MYRI_TX_POLL_MS too.
 */
static int myri_ctx_wait(struct myri_file *mf, u32 events, long timeout,
			 u32 *revents)
{
	/* pairs with the release in myri_ctx_open() */
	struct myri_ctx *ctx = smp_load_acquire(&mf->ctx);
	struct myri_dev *dev = mf->dev;
	bool armed = false;
	long slice, left;
	int ret, seq;
	u32 ready;

	*revents = 0;
	if (!ctx)
		return -EINVAL;
	myri_count(dev, MYRI_CNT_WAITS);
	for (;;) {
		down_read(&dev->io_lock);
		ret = myri_ctx_live(ctx);
		if (ret) {
			up_read(&dev->io_lock);
			break;
		}
		seq = atomic_read(&dev->irq_seq);
		if (!armed) {
			myri_ctx_irq_get(ctx);
			armed = true;
		}
		ready = myri_ctx_arm_and_check(ctx) & events;
		up_read(&dev->io_lock);
		if (ready) {
			*revents = ready;
			break;
		}
		if (!timeout) {
			ret = -ETIMEDOUT;
			break;
		}
		slice = timeout;
		if (events & MYRI_WAIT_TX)
			slice = min_t(long, slice,
				      msecs_to_jiffies(MYRI_TX_POLL_MS));
		left = wait_event_interruptible_timeout(dev->wq,
							atomic_read(&dev->irq_seq) != seq,
							slice);
		if (left < 0) {
			ret = -EINTR;
			break;
		}
		if (timeout != MAX_SCHEDULE_TIMEOUT)
			timeout -= left ? slice - left : slice;
		if (timeout < 0)
			timeout = 0;
	}
	if (armed) {
		down_read(&dev->io_lock);
		myri_ctx_irq_put(ctx, !myri_ctx_live(ctx));
		up_read(&dev->io_lock);
	}
	return ret;
}

static __poll_t myri_ctx_poll(struct myri_file *mf, __poll_t req)
{
	/* pairs with the release in myri_ctx_open() */
	struct myri_ctx *ctx = smp_load_acquire(&mf->ctx);
	struct myri_dev *dev = mf->dev;
	__poll_t mask = 0;
	u32 ready;

	down_read(&dev->io_lock);
	if (dev->gone || (ctx && ctx->stale)) {
		mask = EPOLLERR | EPOLLHUP;
		goto out;
	}
	if (myri_state(dev) != MYRI_STATE_UP) {
		mask = EPOLLERR;
		goto out;
	}
	if (!ctx)
		goto out;
	/* a file that polls keeps the interrupt until it goes */
	spin_lock(&ctx->irq_lock);
	if (!mf->polled) {
		mf->polled = true;
		if (!ctx->pollers++ && !ctx->kwaiters)
			myri_ctx_irq_write(ctx);
	}
	spin_unlock(&ctx->irq_lock);
	ready = myri_ctx_arm_and_check(ctx);
	if (ready & MYRI_WAIT_RX)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (ready & MYRI_WAIT_TX)
		mask |= EPOLLOUT | EPOLLWRNORM;
	else if (req & (EPOLLOUT | EPOLLWRNORM))
		mod_timer(&ctx->tx_timer,
			  jiffies + msecs_to_jiffies(MYRI_TX_POLL_MS));
out:
	up_read(&dev->io_lock);
	return mask;
}

static __poll_t myri_poll(struct file *file, poll_table *wait)
{
	struct myri_file *mf = file->private_data;

	poll_wait(file, &mf->dev->wq, wait);
	return myri_ctx_poll(mf, poll_requested_events(wait));
}

/* ---- mmap ---- */

/*
 * Mappings are populated at mmap() time, so a fault means that the
 * context was taken away (reload, removal) and the mapping zapped.
 * The pool's pages stay: it is ours, not the card's.
 */
static const struct vm_operations_struct myri_vm_ops = {
	.fault = nic_vm_fault_sigbus,
};

static int myri_mmap_rx(struct myri_dev *dev, struct myri_ctx *ctx,
			struct vm_area_struct *vma)
{
	unsigned long pgoff = vma->vm_pgoff;
	int ret;

	/* the MCP's to write, the user's to read */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	vma->vm_flags &= ~VM_MAYWRITE;
	/* dma_mmap_coherent() takes vm_pgoff as the offset in the buffer */
	vma->vm_pgoff = 0;
	ret = dma_mmap_coherent(&dev->pdev->dev, vma, ctx->rx_cpu, ctx->rx_dma,
				ctx->rx_alloc);
	vma->vm_pgoff = pgoff;
	return ret;
}

static int myri_ctx_mmap(struct myri_file *mf, struct vm_area_struct *vma,
			 u64 off)
{
	/* pairs with the release in myri_ctx_open() */
	struct myri_ctx *ctx = smp_load_acquire(&mf->ctx);
	struct myri_dev *dev = mf->dev;
	unsigned long len = vma->vm_end - vma->vm_start;
	phys_addr_t phys;
	int ret;

	if (!ctx)
		return -EINVAL;
	down_read(&dev->io_lock);
	if (dev->gone || ctx->stale) {
		ret = -ENODEV;
		goto out;
	}
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_ops = &myri_vm_ops;
	if (off == MYRI_MMAP_SEND(ctx->index)) {
		ret = -EINVAL;
		if (len > ctx->send_size)
			goto out;
		phys = dev->bar_phys + LANAI_SRAM_OFFSET + ctx->send_off;
		vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND |
				 VM_DONTDUMP;
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
		ret = io_remap_pfn_range(vma, vma->vm_start, phys >> PAGE_SHIFT,
					 len, vma->vm_page_prot);
	} else if (off == MYRI_MMAP_DOORBELL(ctx->index)) {
		ret = -EINVAL;
		if (len != LANAI_DOORBELL_PAGE || len != PAGE_SIZE)
			goto out;
		phys = dev->bar_phys + LANAI_DOORBELL_OFFSET +
		       ctx->index * LANAI_DOORBELL_PAGE;
		vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND |
				 VM_DONTDUMP;
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
		ret = io_remap_pfn_range(vma, vma->vm_start, phys >> PAGE_SHIFT,
					 len, vma->vm_page_prot);
	} else if (off == MYRI_MMAP_RX(ctx->index)) {
		ret = len > ctx->rx_alloc ? -EINVAL :
					    myri_mmap_rx(dev, ctx, vma);
	} else {
		ret = -EINVAL;
	}
out:
	up_read(&dev->io_lock);
	return ret;
}

static int myri_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct myri_file *mf = file->private_data;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;

	/* a private copy of card memory or of the pool makes no sense */
	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	if (off == MYRI_MMAP_POOL)
		return nic_pool_mmap(vma, mf->dev->pool, mf->dev->pool_size,
				     &myri_vm_ops);
	return myri_ctx_mmap(mf, vma, off);
}

/* ---- ioctl ---- */

static void myri_fill_info(struct myri_dev *dev, struct myri_info *info)
{
	unsigned long flags;
	unsigned int i;

	info->version = MYRI_DRIVER_VERSION;
	info->mcp_abi = MCP_ABI;
	info->ctx_max = MCP_MAX_CTX;
	info->sram_size = dev->sram_size;
	info->clock_mhz = dev->clock_mhz;
	info->pool_size = dev->pool_size;

	mutex_lock(&dev->lock);
	info->node = dev->node;
	info->nodes = dev->nodes;
	info->openers = dev->open_count;
	info->loads = myri_counter(dev, MYRI_CNT_LOADS);
	for (i = 0; i < MCP_MAX_CTX; i++)
		if (dev->ctx[i])
			info->ctx_open++;
	strscpy(info->fw, dev->fw_name, sizeof(info->fw));
	strscpy(info->mcp_name, dev->mcp_name, sizeof(info->mcp_name));
	down_read(&dev->io_lock);
	if (!dev->gone)
		info->link = myri_cfg_rd(dev, LANAI_CFG_LINK);
	up_read(&dev->io_lock);
	mutex_unlock(&dev->lock);

	spin_lock_irqsave(&dev->state_lock, flags);
	info->state = dev->state;
	info->halt_cause = dev->halt_cause;
	info->halt_pc = dev->halt_pc;
	info->halt_addr = dev->halt_addr;
	strscpy(info->reason, dev->reason, sizeof(info->reason));
	spin_unlock_irqrestore(&dev->state_lock, flags);
}

static int myri_ioc_info(struct myri_file *mf, void __user *arg)
{
	struct myri_info *info;
	int ret;

	info = kzalloc(sizeof(*info), GFP_KERNEL);
	if (!info)
		return -ENOMEM;
	myri_fill_info(mf->dev, info);
	ret = copy_to_user(arg, info, sizeof(*info)) ? -EFAULT : 0;
	kfree(info);
	return ret;
}

static int myri_ioc_open_ctx(struct myri_file *mf, void __user *arg)
{
	struct myri_ctx_open req;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = myri_ctx_open(mf, &req);
	if (ret)
		return ret;
	/* the context stays the file's: a retry gets EBUSY, close frees it */
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

static int myri_ioc_wait(struct myri_file *mf, void __user *arg)
{
	struct myri_wait w;
	long timeout;
	int ret;

	if (copy_from_user(&w, arg, sizeof(w)))
		return -EFAULT;
	if (!w.events || (w.events & ~MYRI_WAIT_ALL) || w.reserved)
		return -EINVAL;
	if (w.timeout_ms == MYRI_WAIT_FOREVER)
		timeout = MAX_SCHEDULE_TIMEOUT;
	else
		timeout = msecs_to_jiffies(w.timeout_ms);

	ret = myri_ctx_wait(mf, w.events, timeout, &w.revents);
	if (ret && ret != -ETIMEDOUT)
		return ret;
	if (copy_to_user(arg, &w, sizeof(w)))
		return -EFAULT;
	return ret;
}

static int myri_ioc_counters(struct myri_file *mf, void __user *arg)
{
	struct myri_dev *dev = mf->dev;
	struct myri_counters *c;
	unsigned int i;
	int ret = 0;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	down_read(&dev->io_lock);
	if (dev->gone) {
		up_read(&dev->io_lock);
		kfree(c);
		return -ENODEV;
	}
	BUILD_BUG_ON(MCP_COUNTERS > MYRI_MCP_COUNTERS_MAX);
	for (i = 0; i < MCP_COUNTERS; i++)
		c->mcp[i] = myri_sram_rd(dev, MYRI_G(counters) + 4 * i);
	c->tx_packets = myri_cfg_rd(dev, LANAI_CNT_TX_PACKETS);
	c->rx_packets = myri_cfg_rd(dev, LANAI_CNT_RX_PACKETS);
	c->rx_crc = myri_cfg_rd(dev, LANAI_CNT_RX_CRC);
	c->rx_len = myri_cfg_rd(dev, LANAI_CNT_RX_LEN);
	c->rx_illegal = myri_cfg_rd(dev, LANAI_CNT_RX_ILLEGAL);
	c->rx_in_reset = myri_cfg_rd(dev, LANAI_CNT_RX_IN_RESET);
	c->rx_full = myri_cfg_rd(dev, LANAI_CNT_RX_FULL);
	c->tx_discarded = myri_cfg_rd(dev, LANAI_CNT_TX_DISCARDED);
	c->dma_err = myri_cfg_rd(dev, LANAI_CNT_DMA_ERR);
	c->db_dropped = myri_cfg_rd(dev, LANAI_CNT_DB_DROPPED);
	c->lag_drops = myri_cfg_rd(dev, LANAI_CNT_LAG_DROPS);
	c->rx_queued = myri_cfg_rd(dev, LANAI_CNT_RX_QUEUED);
	up_read(&dev->io_lock);

	c->interrupts = myri_counter(dev, MYRI_CNT_INTERRUPTS);
	c->irq_host_sig = myri_counter(dev, MYRI_CNT_IRQ_HOST_SIG);
	c->irq_halt = myri_counter(dev, MYRI_CNT_IRQ_HALT);
	c->loads = myri_counter(dev, MYRI_CNT_LOADS);
	c->load_errors = myri_counter(dev, MYRI_CNT_LOAD_ERRORS);
	c->deaths = myri_counter(dev, MYRI_CNT_DEATHS);
	c->commands = myri_counter(dev, MYRI_CNT_COMMANDS);
	c->opens = myri_counter(dev, MYRI_CNT_OPENS);
	c->ctx_opens = myri_counter(dev, MYRI_CNT_CTX_OPENS);
	c->ctx_closes = myri_counter(dev, MYRI_CNT_CTX_CLOSES);
	c->waits = myri_counter(dev, MYRI_CNT_WAITS);
	c->resets = myri_counter(dev, MYRI_CNT_RESETS);

	if (copy_to_user(arg, c, sizeof(*c)))
		ret = -EFAULT;
	kfree(c);
	return ret;
}

static long myri_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct myri_file *mf = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case MYRI_IOC_INFO:
		return myri_ioc_info(mf, uarg);
	case MYRI_IOC_OPEN_CTX:
		return myri_ioc_open_ctx(mf, uarg);
	case MYRI_IOC_WAIT:
		return myri_ioc_wait(mf, uarg);
	case MYRI_IOC_COUNTERS:
		return myri_ioc_counters(mf, uarg);
	default:
		return -ENOTTY;
	}
}

const struct file_operations myri_fops = {
	.owner = THIS_MODULE,
	.open = myri_open,
	.release = myri_release,
	.mmap = myri_mmap,
	.poll = myri_poll,
	.unlocked_ioctl = myri_ioctl,
	/* the structures have the same layout for 32-bit callers */
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};
