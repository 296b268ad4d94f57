/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest's NIC drivers do alike, written once: the interrupt
 * vector, the misc device and the fault of a revoked mapping (ps1.ko,
 * myri.ko, tgr.ko), the message pool that the ports layer's processes
 * share and the list of the device's openers (ps1.ko, myri.ko). Kernel
 * code only, static inline: each driver stays a module of its own.
 */
#ifndef _VCLUSTER_NIC_DRIVER_H
#define _VCLUSTER_NIC_DRIVER_H

#include <linux/errno.h>
#include <linux/interrupt.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/pid.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>

/*
 * One vector, MSI if the device has it, else the INTx line, which other
 * devices may share. @thread_fn may be NULL. On success *@irq and *@msi
 * say what was set up; free_irq() and pci_free_irq_vectors() undo it.
 * A failure is logged.
 */
static inline int nic_irq_setup(struct pci_dev *pdev, irq_handler_t handler,
				irq_handler_t thread_fn, const char *name,
				void *data, int *irq, bool *msi)
{
	int ret;

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_LEGACY);
	if (ret >= 0) {
		*msi = pdev->msi_enabled;
		*irq = pci_irq_vector(pdev, 0);
		ret = request_threaded_irq(*irq, handler, thread_fn,
					   *msi ? 0 : IRQF_SHARED, name, data);
		if (ret)
			pci_free_irq_vectors(pdev);
	}
	if (ret)
		dev_err(&pdev->dev, "cannot set up the interrupt: %d\n", ret);
	return ret;
}

/* /dev/@name, a misc device with a dynamic minor; a failure is logged. */
static inline int nic_misc_register(struct miscdevice *misc, const char *name,
				    const struct file_operations *fops,
				    struct device *parent, umode_t mode)
{
	int ret;

	misc->minor = MISC_DYNAMIC_MINOR;
	misc->name = name;
	misc->fops = fops;
	misc->parent = parent;
	misc->mode = mode;
	ret = misc_register(misc);
	if (ret)
		dev_err(parent, "cannot register /dev/%s: %d\n", name, ret);
	return ret;
}

/*
 * For drivers that fill their mappings at mmap() time: a fault comes only
 * from a mapping the driver revoked (removal, reload), and gets SIGBUS.
 */
static inline vm_fault_t nic_vm_fault_sigbus(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

/* ---- the shared pool: module parameter pool_kb, mmap, cleared by the
 * driver when its last opener goes ----
 */

#define NIC_POOL_KB_MIN		4
#define NIC_POOL_KB_MAX		(64 * 1024)

/* At module load: @drv is the module's name, for the message. */
static inline int nic_pool_kb_check(const char *drv, unsigned int kb)
{
	if (kb < NIC_POOL_KB_MIN || kb > NIC_POOL_KB_MAX) {
		pr_err("%s: pool_kb=%u out of range (%u..%u)\n", drv, kb,
		       NIC_POOL_KB_MIN, NIC_POOL_KB_MAX);
		return -EINVAL;
	}
	return 0;
}

/* @kb KiB, page aligned, mappable into user space; vfree() frees it. */
static inline void *nic_pool_alloc(unsigned int kb, size_t *size)
{
	*size = PAGE_ALIGN((size_t)kb * 1024);
	return vmalloc_user(*size);
}

/*
 * The pool is the driver's, not the card's: its mappings stay valid
 * after a hot unplug.
 */
static inline int nic_pool_mmap(struct vm_area_struct *vma, void *pool,
				size_t size,
				const struct vm_operations_struct *vm_ops)
{
	int ret;

	if (vma->vm_end - vma->vm_start > size)
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYEXEC;
	ret = remap_vmalloc_range(vma, pool, 0);
	if (!ret)
		vma->vm_ops = vm_ops;
	return ret;
}

/* ---- the openers: sysfs `openers`, one PID per line ---- */

struct nic_opener {
	struct list_head node;		/* in the device's list of files */
	struct pid *pid;		/* the opener's process */
};

/* The caller holds the lock of @files. */
static inline void nic_opener_add(struct nic_opener *o,
				  struct list_head *files)
{
	o->pid = get_pid(task_tgid(current));
	list_add_tail(&o->node, files);
}

/* The caller holds the lock of the list; put_pid() comes later. */
static inline void nic_opener_del(struct nic_opener *o)
{
	list_del(&o->node);
}

/* The caller holds the lock of @files. */
static inline ssize_t nic_openers_show(struct list_head *files, char *buf)
{
	struct nic_opener *o;
	ssize_t len = 0;

	list_for_each_entry(o, files, node)
		len += sysfs_emit_at(buf, len, "%d\n", pid_nr(o->pid));
	return len;
}

#endif /* _VCLUSTER_NIC_DRIVER_H */
