// SPDX-License-Identifier: GPL-2.0
/*
 * ParaStation board driver: /dev/ps1.
 *
 * Opening the device registers a process. It may then map the board's
 * registers (offset 0) and the message pool shared by all openers
 * (offset 4096), wait for board events with poll() or PS1_IOC_WAIT, and
 * query the board. When the last opener goes away the driver puts the
 * board back into a clean state for the next one.
 */

#include <linux/delay.h>
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

#include "ps1.h"

static int ps1_open(struct inode *inode, struct file *file)
{
	struct miscdevice *misc = file->private_data;
	struct ps1_dev *dev = container_of(misc, struct ps1_dev, misc);
	struct ps1_file *pf;

	pf = kzalloc(sizeof(*pf), GFP_KERNEL);
	if (!pf)
		return -ENOMEM;

	mutex_lock(&dev->lock);
	if (dev->gone) {
		mutex_unlock(&dev->lock);
		kfree(pf);
		return -ENODEV;
	}
	kref_get(&dev->kref);
	pf->dev = dev;
	pf->file = file;
	atomic_set(&pf->reg_maps, 0);
	nic_opener_add(&pf->opener, &dev->files);
	dev->open_count++;
	ps1_count(dev, PS1_CNT_OPENS);
	/* retry a set-up that failed (link down) or was lost */
	ps1_refresh(dev);
	mutex_unlock(&dev->lock);

	file->private_data = pf;
	return 0;
}

/*
 * The last opener is gone. User space drives the FIFOs, so it may have
 * died half-way through writing a TX packet or reading an RX packet, or
 * while waiting at a barrier. PKT_STATE tells a half-done packet from
 * whole ones. In any of these cases, and when unread RX packets remain
 * (the ports they were for died with their processes), reset the board
 * and reload node and routes. Whole TX packets waiting for the network
 * are left to go out. Boards that no process mapped are left alone: only
 * the driver touched them.
 *
 * The pool is cleared too, so that user-level locks held by a crashed
 * process do not block the next one.
 *
 * Caller holds dev->lock.
 */
static void ps1_last_close(struct ps1_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	u32 sreg, rx_used, pkt_state;

	memset(dev->pool, 0, dev->pool_size);

	down_read(&dev->io_lock);
	if (dev->gone)
		goto out;
	ps1_disarm_all(dev);
	if (!READ_ONCE(dev->regs_used))
		goto out;

	sreg = ps1_rd(dev, PS1_REG_SREG);
	if (sreg == ~0u)
		goto out;
	rx_used = ps1_rd(dev, PS1_REG_RX_USED);
	pkt_state = ps1_rd(dev, PS1_REG_PKT_STATE);
	if (pkt_state || rx_used ||
	    (sreg & (PS1_SREG_BAR_WAIT | PS1_SREG_BAR_DONE))) {
		dev_info(d, "last user left the board busy (SREG 0x%08x, PKT_STATE 0x%08x, %u RX bytes): resetting\n",
			 sreg, pkt_state, rx_used);
		ps1_count(dev, PS1_CNT_CLEANUP_RESETS);
		/* no point in waiting for a link that is down */
		ps1_load(dev, true, sreg & PS1_SREG_LINK);
		ps1_disarm_all(dev);
	} else if (sreg & PS1_SREG_ERR_MASK) {
		/* errors of the old user are no news to the next one */
		ps1_wr(dev, PS1_REG_CREG, PS1_CREG_CLEAR_ERR);
	}
	WRITE_ONCE(dev->regs_used, false);
out:
	up_read(&dev->io_lock);
}

static int ps1_release(struct inode *inode, struct file *file)
{
	struct ps1_file *pf = file->private_data;
	struct ps1_dev *dev = pf->dev;

	mutex_lock(&dev->lock);
	nic_opener_del(&pf->opener);
	if (!--dev->open_count)
		ps1_last_close(dev);
	mutex_unlock(&dev->lock);

	put_pid(pf->opener.pid);
	kfree(pf);
	ps1_dev_put(dev);
	return 0;
}

/* ---- mmap ---- */

static void ps1_regs_vm_open(struct vm_area_struct *vma)
{
	struct ps1_file *pf = vma->vm_private_data;

	atomic_inc(&pf->reg_maps);
}

static void ps1_regs_vm_close(struct vm_area_struct *vma)
{
	struct ps1_file *pf = vma->vm_private_data;

	atomic_dec(&pf->reg_maps);
}

/*
 * Mappings are populated at mmap() time, so a fault means the board was
 * removed and the register mapping zapped.
 */
static const struct vm_operations_struct ps1_regs_vm_ops = {
	.open = ps1_regs_vm_open,
	.close = ps1_regs_vm_close,
	.fault = nic_vm_fault_sigbus,
};

static const struct vm_operations_struct ps1_pool_vm_ops = {
	.fault = nic_vm_fault_sigbus,
};

static int ps1_mmap_regs(struct ps1_file *pf, struct vm_area_struct *vma)
{
	struct ps1_dev *dev = pf->dev;
	int ret;

	if (vma->vm_end - vma->vm_start != PS1_MMAP_REGS_LEN ||
	    PS1_MMAP_REGS_LEN != PAGE_SIZE)
		return -EINVAL;

	down_read(&dev->io_lock);
	if (dev->gone) {
		ret = -ENODEV;
		goto out;
	}
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_ops = &ps1_regs_vm_ops;
	vma->vm_private_data = pf;
	ret = io_remap_pfn_range(vma, vma->vm_start,
				 dev->regs_phys >> PAGE_SHIFT, PAGE_SIZE,
				 vma->vm_page_prot);
	if (!ret) {
		ps1_regs_vm_open(vma);
		WRITE_ONCE(dev->regs_used, true);
	}
out:
	up_read(&dev->io_lock);
	return ret;
}

static int ps1_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct ps1_file *pf = file->private_data;

	/* a private copy of registers or of the shared pool makes no sense */
	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;

	switch (vma->vm_pgoff) {
	case PS1_MMAP_REGS_OFFSET >> PAGE_SHIFT:
		return ps1_mmap_regs(pf, vma);
	case PS1_MMAP_POOL_OFFSET >> PAGE_SHIFT:
		return nic_pool_mmap(vma, pf->dev->pool, pf->dev->pool_size,
				     &ps1_pool_vm_ops);
	default:
		return -EINVAL;
	}
}

/* ---- poll ---- */

static __poll_t ps1_poll(struct file *file, poll_table *wait)
{
	struct ps1_file *pf = file->private_data;
	struct ps1_dev *dev = pf->dev;
	__poll_t req = poll_requested_events(wait);
	__poll_t mask = 0;
	u32 causes = PS1_EV_PKT | PS1_EV_ERR | PS1_EV_BARRIER;
	u32 sreg, ev;

	poll_wait(file, &dev->wq, wait);

	if (req & (EPOLLOUT | EPOLLWRNORM))
		causes |= PS1_EV_TX;

	down_read(&dev->io_lock);
	if (dev->gone) {
		up_read(&dev->io_lock);
		return EPOLLERR | EPOLLHUP;
	}
	ps1_arm(dev, causes);
	sreg = ps1_rd(dev, PS1_REG_SREG);
	up_read(&dev->io_lock);
	if (sreg == ~0u)
		return EPOLLERR | EPOLLHUP;

	ev = ps1_sreg_events(sreg);
	if (ev & PS1_EV_PKT)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (ev & PS1_EV_BARRIER)
		mask |= EPOLLPRI;
	if (ev & PS1_EV_ERR)
		mask |= EPOLLERR;
	if (ev & PS1_EV_TX)
		mask |= EPOLLOUT | EPOLLWRNORM;
	return mask;
}

/* ---- ioctl ---- */

static int ps1_ioc_info(struct ps1_file *pf, void __user *arg)
{
	struct ps1_dev *dev = pf->dev;
	struct ps1_info info = { };

	info.version = PS1_DRIVER_VERSION;
	info.pool_size = dev->pool_size;
	info.regs_size = PS1_MMAP_REGS_LEN;

	mutex_lock(&dev->lock);
	down_read(&dev->io_lock);
	if (dev->gone) {
		up_read(&dev->io_lock);
		mutex_unlock(&dev->lock);
		return -ENODEV;
	}
	info.board_id = ps1_rd(dev, PS1_REG_ID);
	info.state = ps1_state(dev);
	up_read(&dev->io_lock);
	info.node = dev->node;
	info.openers = dev->open_count;
	if (dev->cfg == PS1_CFG_OK) {
		info.nodes = dev->nodes;
		info.width = dev->width;
		info.height = dev->height;
	}
	mutex_unlock(&dev->lock);

	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static int ps1_ioc_wait(struct ps1_file *pf, void __user *arg)
{
	struct ps1_wait w;
	long timeout;
	int ret, ret2;

	if (copy_from_user(&w, arg, sizeof(w)))
		return -EFAULT;
	if (!w.events || (w.events & ~PS1_EV_ALL))
		return -EINVAL;

	if (w.timeout_ms == PS1_WAIT_FOREVER)
		timeout = MAX_SCHEDULE_TIMEOUT;
	else
		timeout = msecs_to_jiffies(w.timeout_ms);

	w.revents = 0;
	w.sreg = 0;
	ret = ps1_wait_events(pf->dev, w.events, timeout, &w.revents, &w.sreg);
	if (ret == -ENODEV || ret == -EINTR)
		return ret;
	/* on timeout the caller still gets SREG */
	ret2 = copy_to_user(arg, &w, sizeof(w)) ? -EFAULT : 0;
	return ret ? ret : ret2;
}

static int ps1_ioc_reset(struct ps1_file *pf)
{
	struct ps1_dev *dev = pf->dev;
	int ret;

	mutex_lock(&dev->lock);
	if (dev->open_count != 1) {
		ret = -EBUSY;
		goto out;
	}
	down_read(&dev->io_lock);
	if (dev->gone) {
		ret = -ENODEV;
	} else {
		ret = ps1_load(dev, true, true);
		ps1_arm(dev, PS1_ISR_ERR);
	}
	up_read(&dev->io_lock);
out:
	mutex_unlock(&dev->lock);
	return ret;
}

static int ps1_ioc_counters(struct ps1_file *pf, void __user *arg)
{
	struct ps1_dev *dev = pf->dev;
	struct ps1_counters c = { };

	down_read(&dev->io_lock);
	if (dev->gone) {
		up_read(&dev->io_lock);
		return -ENODEV;
	}
	c.tx_packets = ps1_rd(dev, PS1_REG_CNT_TX_PKTS);
	c.rx_packets = ps1_rd(dev, PS1_REG_CNT_RX_PKTS);
	c.parity_errors = ps1_rd(dev, PS1_REG_CNT_PARITY);
	c.barriers = ps1_rd(dev, PS1_REG_CNT_BARRIERS);
	up_read(&dev->io_lock);

	c.interrupts = ps1_counter(dev, PS1_CNT_IRQ);
	c.irq_pkt = ps1_counter(dev, PS1_CNT_IRQ_PKT);
	c.irq_err = ps1_counter(dev, PS1_CNT_IRQ_ERR);
	c.irq_barrier = ps1_counter(dev, PS1_CNT_IRQ_BARRIER);
	c.irq_tx = ps1_counter(dev, PS1_CNT_IRQ_TX);
	c.opens = ps1_counter(dev, PS1_CNT_OPENS);
	c.resets = ps1_counter(dev, PS1_CNT_RESETS);
	c.cleanup_resets = ps1_counter(dev, PS1_CNT_CLEANUP_RESETS);
	c.route_loads = ps1_counter(dev, PS1_CNT_ROUTE_LOADS);

	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

static long ps1_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ps1_file *pf = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PS1_IOC_INFO:
		return ps1_ioc_info(pf, uarg);
	case PS1_IOC_WAIT:
		return ps1_ioc_wait(pf, uarg);
	case PS1_IOC_RESET:
		return ps1_ioc_reset(pf);
	case PS1_IOC_COUNTERS:
		return ps1_ioc_counters(pf, uarg);
	default:
		return -ENOTTY;
	}
}

const struct file_operations ps1_fops = {
	.owner = THIS_MODULE,
	.open = ps1_open,
	.release = ps1_release,
	.mmap = ps1_mmap,
	.poll = ps1_poll,
	.unlocked_ioctl = ps1_ioctl,
	/* all ioctl structures have the same layout for 32-bit callers */
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};
