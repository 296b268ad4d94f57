// SPDX-License-Identifier: GPL-2.0
/*
 * Telegraphos NIC (PCI 1234:5447) driver, its core: module parameters,
 * probe/remove and the device's lifetime, the window page table, the
 * interrupt, the event ring and each context's event queue.
 *
 * The card maps remote memory into a window (BAR2) and passes addresses
 * as arguments through a shadow window (BAR4); user code reaches both
 * with plain loads and stores. The driver gives each open file a context,
 * exports and imports pages, owns the REQ queues and their overflow
 * protocol, and turns the card's events into poll() wake-ups and SIGBUS.
 *
 * The helpers (tgr_file.c, tgr_export.c, tgr_import.c, tgr_req.c,
 * tgr_sysfs.c) call the core; the core reaches them only through their
 * init/fini hooks (tgr_exp_init(), tgr_imp_init(), tgr_req_init(), which
 * set the work and the interrupt hook it hands events to) and the tables
 * it registers (tgr_fops, tgr_groups). tgr_thread.c is part of the core.
 *
 * Card: docs/hw/telegraphos.md. Driver: docs/tgr-driver.md.
 */

#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "tgr_drv.h"

unsigned int tgr_max_pinned_mb = 64;
module_param_named(max_pinned_mb, tgr_max_pinned_mb, uint, 0644);
MODULE_PARM_DESC(max_pinned_mb, "pinned memory per open file (exports, mirrors), MiB (default 64)");

unsigned int tgr_stop_max_ms = 2000;
module_param_named(stop_max_ms, tgr_stop_max_ms, uint, 0644);
MODULE_PARM_DESC(stop_max_ms, "longest a queue's owner may keep the NI stopped (dnp, no free copy buffer), ms, 1..60000 (default 2000)");

unsigned int tgr_stop_penalty_s = 60;
module_param_named(stop_penalty_s, tgr_stop_penalty_s, uint, 0644);
MODULE_PARM_DESC(stop_penalty_s, "after a withdrawal, how long that user's queues may not keep the NI stopped at all, s (default 60)");

static DEFINE_IDA(tgr_ida);

static void tgr_dev_release(struct kref *kref)
{
	struct tgr_dev *dev = container_of(kref, struct tgr_dev, kref);

	tgr_exp_fini(dev);
	if (dev->evq)
		dma_free_coherent(&dev->pdev->dev,
				  TGR_EVQ_ENTRIES * sizeof(*dev->evq), dev->evq,
				  dev->evq_dma);
	bitmap_free(dev->win_map);
	bitmap_free(dev->stale_pages);
	kvfree(dev->win_imp);
	ida_destroy(&dev->obj_ida);
	if (dev->kwin)
		iounmap(dev->kwin);
	if (dev->regs)
		pci_iounmap(dev->pdev, dev->regs);
	pci_dev_put(dev->pdev);
	kfree(dev);
}

void tgr_dev_put(struct tgr_dev *dev)
{
	kref_put(&dev->kref, tgr_dev_release);
}

/* ---- window page table ---- */

/* w0 (with VALID) goes last: the device never sees a half-written PTE. */
void tgr_pte_write(struct tgr_dev *dev, u32 page, u32 w0, u32 w1, u32 w2,
		   u32 w3)
{
	void __iomem *pte = dev->regs + TGR_PTE_TABLE + page * TGR_PTE_SIZE;

	if (dev->gone)
		return;
	iowrite32(0, pte);
	iowrite32(w1, pte + 4);
	iowrite32(w2, pte + 8);
	iowrite32(w3, pte + 12);
	wmb();	/* the other words before VALID */
	iowrite32(w0, pte);
}

void tgr_pte_clear(struct tgr_dev *dev, u32 page)
{
	if (dev->gone)
		return;
	iowrite32(0, dev->regs + TGR_PTE_TABLE + page * TGR_PTE_SIZE);
	iowrite32(0, dev->regs + TGR_PTE_TABLE + page * TGR_PTE_SIZE + 12);
}

u64 tgr_counter(struct tgr_dev *dev, unsigned int idx)
{
	u32 off = TGR_REG_COUNTERS + 8 * idx, lo, hi, hi2;

	if (dev->gone)
		return 0;
	do {
		hi = tgr_rd(dev, off + 4);
		lo = tgr_rd(dev, off);
		hi2 = tgr_rd(dev, off + 4);
	} while (hi != hi2);
	return (u64)hi << 32 | lo;
}

/* Revokes the file's mappings of one mmap cookie (later accesses: SIGBUS). */
void tgr_unmap_cookie(struct tgr_ctx *ctx, u64 cookie, u64 len)
{
	if (cookie)
		unmap_mapping_range(ctx->filp->f_mapping, cookie, len, 1);
}

/* ---- events ---- */

/* Any context; the caller holds dev->ctx_lock. */
void tgr_ctx_event(struct tgr_ctx *ctx, const struct tgr_event *ev)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->ev_lock, flags);
	if (ctx->ev_head - ctx->ev_tail >= TGR_CTX_EVENTS) {
		ctx->ev_lost++;
	} else {
		ctx->ev[ctx->ev_head++ % TGR_CTX_EVENTS] = *ev;
		if (tgr_event_is_error(ev->type))
			ctx->ev_err++;
	}
	spin_unlock_irqrestore(&ctx->ev_lock, flags);
	wake_up_interruptible(&ctx->wq);
}

static void tgr_deliver(struct tgr_dev *dev, u8 ctx_id,
			const struct tgr_event *ev)
{
	struct tgr_ctx *ctx;

	if (!ctx_id)
		return;
	spin_lock(&dev->ctx_lock);
	ctx = dev->ctxs[ctx_id];
	if (ctx)
		tgr_ctx_event(ctx, ev);
	spin_unlock(&dev->ctx_lock);
}

static void tgr_deliver_all(struct tgr_dev *dev, const struct tgr_event *ev)
{
	unsigned int i;

	spin_lock(&dev->ctx_lock);
	for (i = 1; i < TGR_CTX_MAX; i++)
		if (dev->ctxs[i])
			tgr_ctx_event(dev->ctxs[i], ev);
	spin_unlock(&dev->ctx_lock);
}

static bool tgr_reason_stale(u32 reason)
{
	return reason == TGR_ERR_STALE || reason == TGR_ERR_UNEXPORTED ||
	       reason == TGR_ERR_PEER_RESET;
}

static void tgr_mark_stale_page(struct tgr_dev *dev, u32 page)
{
	if (page >= dev->win_pages || page < TGR_KWIN_PAGES)
		return;
	set_bit(page, dev->stale_pages);
	schedule_work(&dev->stale_work);
}

/* The op of a RREAD_FAIL event is the wire op (docs/hw/telegraphos.md) */
#define TGR_WIRE_ATOMIC_REQ	4

/*
 * The user address of a failed access: an atomic's FADD shadow mapping
 * (fetch_and_increment is its one-load form), else the import's window
 * mapping, else its first shadow mapping.
 */
static unsigned long tgr_fail_addr(struct tgr_ctx *ctx, u32 page, u32 off,
				   u32 op)
{
	struct tgr_imp *imp;
	unsigned long base = 0;
	unsigned int i;

	if (page >= ctx->dev->win_pages)
		return 0;
	imp = ctx->dev->win_imp[page];
	if (!imp)
		return 0;
	if (op == TGR_WIRE_ATOMIC_REQ)
		base = READ_ONCE(imp->uaddr[1 + TGR_OP_FADD]);
	for (i = 0; i <= TGR_OP_NUM && !base; i++)
		base = READ_ONCE(imp->uaddr[i]);
	if (!base)
		return 0;
	return base + (unsigned long)(page - imp->first_page) * PAGE_SIZE +
	       (off & (PAGE_SIZE - 1));
}

/*
 * A remote read or atomic of vCPU @cpu failed; the vCPU is parked on the
 * load until RD_ACK. The task running there gets SIGBUS first, so that
 * the signal is pending when the load returns (precise: RIP at the load).
 */
static void tgr_rread_fail(struct tgr_dev *dev, const struct tgr_ev_entry *e,
			   struct tgr_event *ev)
{
	struct task_struct *task = NULL;
	struct kernel_siginfo info;
	struct tgr_ctx *ctx;

	spin_lock(&dev->ctx_lock);
	ctx = e->ctx ? dev->ctxs[e->ctx] : NULL;
	if (ctx) {
		/* the thread parked on that vCPU, else the process */
		task = tgr_cpu_task(ev->cpu, e->ctx);
		if (!task)
			task = get_pid_task(ctx->tgid, PIDTYPE_PID);
		clear_siginfo(&info);
		info.si_signo = SIGBUS;
		info.si_errno = 0;
		info.si_code = BUS_ADRERR;
		info.si_addr = (void __user *)tgr_fail_addr(ctx, ev->page,
							   ev->data, ev->op);
		tgr_ctx_event(ctx, ev);
	}
	spin_unlock(&dev->ctx_lock);
	if (task) {
		send_sig_info(SIGBUS, &info, task);
		put_task_struct(task);
		dev->sigbus++;
	}
	/* only now may the load return: the signal is already pending */
	tgr_wr(dev, TGR_REG_RD_ACK, ev->cpu);
	if (tgr_reason_stale(ev->reason))
		tgr_mark_stale_page(dev, ev->page);
}

static void tgr_event_one(struct tgr_dev *dev, const struct tgr_ev_entry *e)
{
	struct tgr_event ev = {
		.type = e->type,
		.reason = e->reason,
		.node = le16_to_cpu(e->node),
		.op = e->op,
		.page = le32_to_cpu(e->page),
		.data = le32_to_cpu(e->data),
		.cpu = le16_to_cpu(e->cpu),
	};

	switch (e->type) {
	case TGR_EV_RREAD_FAIL:
		tgr_rread_fail(dev, e, &ev);
		break;
	case TGR_EV_VIOL_OUT:
		tgr_deliver(dev, e->ctx, &ev);
		if (tgr_reason_stale(ev.reason))
			tgr_mark_stale_page(dev, ev.page);
		break;
	case TGR_EV_PEER_RESET:
		if (ev.node < 1024) {
			set_bit(ev.node, dev->stale_nodes);
			schedule_work(&dev->stale_work);
		}
		dev_info(&dev->pdev->dev, "node %u restarted: its imports are stale\n",
			 ev.node);
		break;
	case TGR_EV_SEQ_GAP:
		dev_warn_ratelimited(&dev->pdev->dev, "frames from node %u were lost\n",
				     ev.node);
		tgr_deliver_all(dev, &ev);
		break;
	case TGR_EV_VIOL_IN:
		dev_dbg(&dev->pdev->dev, "refused %u from node %u on eidx %u: reason %u\n",
			ev.op, ev.node, ev.page, ev.reason);
		fallthrough;
	default:
		tgr_deliver(dev, e->ctx, &ev);
		break;
	}
}

static void tgr_events_drain(struct tgr_dev *dev)
{
	u32 prod = tgr_rd(dev, TGR_REG_EVQ_PROD);
	u32 n = 0;

	dma_rmb();	/* the entries before PROD */
	while (dev->evq_cons != prod && n++ < TGR_EVQ_ENTRIES) {
		struct tgr_ev_entry e;

		e = dev->evq[dev->evq_cons & (TGR_EVQ_ENTRIES - 1)];
		dev->evq_cons++;
		tgr_event_one(dev, &e);
	}
	tgr_wr(dev, TGR_REG_EVQ_CONS, dev->evq_cons);
}

#define TGR_IMR (TGR_INT_OVF | TGR_INT_EVQ | TGR_INT_EVQ_LOST | TGR_INT_LINK)

static irqreturn_t tgr_irq(int irq, void *data)
{
	struct tgr_dev *dev = data;
	irqreturn_t ret = IRQ_HANDLED;
	u32 isr;

	if (dev->gone)
		return IRQ_NONE;
	isr = tgr_rd(dev, TGR_REG_ISR);
	if (isr == ~0u || !(isr & TGR_IMR))
		return IRQ_NONE;	/* removed, or INTx shared */
	isr &= TGR_IMR;
	tgr_wr(dev, TGR_REG_ISR, isr);
	if (isr & (TGR_INT_EVQ | TGR_INT_EVQ_LOST))
		tgr_events_drain(dev);
	if (isr & TGR_INT_EVQ_LOST)
		dev_warn_ratelimited(&dev->pdev->dev, "event ring overflowed: events lost\n");
	if (isr & TGR_INT_LINK)
		dev_info(&dev->pdev->dev, "link %s, %u nodes\n",
			 tgr_rd(dev, TGR_REG_CTRL) & TGR_STATUS_LINK_UP ?
			 "up" : "down", tgr_rd(dev, TGR_REG_NODES));
	if (isr & TGR_INT_OVF)
		ret = IRQ_WAKE_THREAD;
	return ret;
}

static irqreturn_t tgr_irq_thread(int irq, void *data)
{
	struct tgr_dev *dev = data;

	dev->overflow(dev);
	return IRQ_HANDLED;
}

/* ---- PCI ---- */

static int tgr_map_bars(struct tgr_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	struct device *d = &pdev->dev;
	u32 id;

	if (pci_resource_len(pdev, 0) < TGR_BAR0_SIZE ||
	    !(pci_resource_flags(pdev, 2) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, 4) < TGR_BAR4_SIZE) {
		dev_err(d, "unexpected BARs (BAR0 %llu, BAR4 %llu bytes)\n",
			(u64)pci_resource_len(pdev, 0),
			(u64)pci_resource_len(pdev, 4));
		return -ENODEV;
	}
	dev->regs = pci_iomap(pdev, 0, TGR_BAR0_SIZE);
	if (!dev->regs)
		return -ENOMEM;
	id = tgr_rd(dev, TGR_REG_ID);
	if (id != TGR_ID_VALUE || tgr_rd(dev, TGR_REG_VERSION) != TGR_VERSION) {
		dev_err(d, "not a Telegraphos v%u card (ID 0x%08x)\n",
			TGR_VERSION, id);
		return -ENODEV;
	}
	dev->win_phys = pci_resource_start(pdev, 2);
	dev->win_len = pci_resource_len(pdev, 2);
	dev->shadow_phys = pci_resource_start(pdev, 4);
	dev->win_pages = tgr_rd(dev, TGR_REG_WIN_PAGES);
	dev->mirror_mb = tgr_rd(dev, TGR_REG_MIRROR_MB);
	if (dev->win_pages <= TGR_KWIN_PAGES ||
	    dev->win_pages > TGR_WIN_PAGES_MAX ||
	    (u64)dev->win_pages * TGR_PAGE_SIZE > dev->win_len) {
		dev_err(d, "bad window: %u pages in a BAR2 of %llu bytes\n",
			dev->win_pages, (u64)dev->win_len);
		return -ENODEV;
	}
	dev->kwin = ioremap(dev->win_phys, TGR_KWIN_PAGES * TGR_PAGE_SIZE);
	if (!dev->kwin)
		return -ENOMEM;
	dev->node = tgr_rd(dev, TGR_REG_NODE);
	return 0;
}

static int tgr_alloc_tables(struct tgr_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	int ret;

	dev->win_map = bitmap_zalloc(dev->win_pages, GFP_KERNEL);
	dev->stale_pages = bitmap_zalloc(dev->win_pages, GFP_KERNEL);
	dev->win_imp = kvcalloc(dev->win_pages, sizeof(*dev->win_imp),
				GFP_KERNEL);
	if (!dev->win_map || !dev->stale_pages || !dev->win_imp)
		return -ENOMEM;
	bitmap_set(dev->win_map, 0, TGR_KWIN_PAGES);
	dev->evq = dma_alloc_coherent(d, TGR_EVQ_ENTRIES * sizeof(*dev->evq),
				      &dev->evq_dma, GFP_KERNEL);
	if (!dev->evq)
		return -ENOMEM;
	ret = tgr_exp_init(dev);
	if (ret)
		return ret;

	tgr_wr(dev, TGR_REG_EVQ_BASE_LO, lower_32_bits(dev->evq_dma));
	tgr_wr(dev, TGR_REG_EVQ_BASE_HI, upper_32_bits(dev->evq_dma));
	tgr_wr(dev, TGR_REG_EVQ_CONS, 0);
	tgr_wr(dev, TGR_REG_EVQ_ENTRIES, TGR_EVQ_ENTRIES);
	dev->evq_cons = tgr_rd(dev, TGR_REG_EVQ_PROD);
	tgr_wr(dev, TGR_REG_EVQ_CONS, dev->evq_cons);
	tgr_wr(dev, TGR_REG_EXP_BASE_LO, lower_32_bits(dev->exp_dma));
	tgr_wr(dev, TGR_REG_EXP_BASE_HI, upper_32_bits(dev->exp_dma));
	tgr_wr(dev, TGR_REG_EXP_COUNT, TGR_EXP_MAX);
	return 0;
}

/* No DMA into memory the kernel may free, no interrupts. */
static void tgr_quiesce(struct tgr_dev *dev)
{
	unsigned int g;

	tgr_wr(dev, TGR_REG_IMR, 0);
	tgr_wr(dev, TGR_REG_EXP_COUNT, 0);
	tgr_wr(dev, TGR_REG_EVQ_ENTRIES, 0);
	for (g = 0; g < TGR_GROUPS; g++)
		tgr_wr(dev, TGR_REG_GROUP_EIDX + 4 * g, TGR_GROUP_NONE);
	tgr_wr(dev, TGR_REG_CTRL, TGR_CTRL_SOFT_RESET);
}

static int tgr_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *d = &pdev->dev;
	struct tgr_dev *dev;
	int ret, index;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	kref_init(&dev->kref);
	dev->pdev = pci_dev_get(pdev);
	mutex_init(&dev->lock);
	mutex_init(&dev->kwin_lock);
	spin_lock_init(&dev->ctx_lock);
	ida_init(&dev->obj_ida);
	tgr_imp_init(dev);
	tgr_req_init(dev);

	index = ida_alloc(&tgr_ida, GFP_KERNEL);
	if (index < 0) {
		ret = index;
		goto err_put;
	}
	dev->index = index;
	snprintf(dev->name, sizeof(dev->name), "tgr%d", index);

	ret = pci_enable_device(pdev);
	if (ret)
		goto err_ida;
	ret = pci_request_regions(pdev, TGR_NAME);
	if (ret)
		goto err_disable;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(d, DMA_BIT_MASK(64));
	if (ret)
		goto err_regions;
	ret = tgr_map_bars(dev);
	if (ret)
		goto err_regions;
	tgr_wr(dev, TGR_REG_IMR, 0);
	tgr_wr(dev, TGR_REG_CTRL, TGR_CTRL_SOFT_RESET);
	tgr_wr(dev, TGR_REG_ISR, ~0u);
	ret = tgr_alloc_tables(dev);
	if (ret)
		goto err_quiesce;
	pci_set_drvdata(pdev, dev);
	ret = nic_irq_setup(pdev, tgr_irq, tgr_irq_thread, dev->name, dev,
			    &dev->irq, &dev->msi);
	if (ret)
		goto err_quiesce;
	tgr_wr(dev, TGR_REG_IMR, TGR_IMR);

	ret = nic_misc_register(&dev->misc, dev->name, &tgr_fops, d, 0666);
	if (ret)
		goto err_irq;
	dev_info(d, "Telegraphos card, /dev/%s, node %u of %u, %u window pages, mirror %u MiB, %s\n",
		 dev->name, dev->node, tgr_rd(dev, TGR_REG_NODES),
		 dev->win_pages, dev->mirror_mb, dev->msi ? "MSI" : "INTx");
	return 0;

err_irq:
	tgr_wr(dev, TGR_REG_IMR, 0);
	free_irq(dev->irq, dev);
	pci_free_irq_vectors(pdev);
err_quiesce:
	if (dev->regs)
		tgr_quiesce(dev);
err_regions:
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_ida:
	ida_free(&tgr_ida, index);
err_put:
	dev->gone = true;
	tgr_dev_put(dev);
	return ret;
}

/*
 * Also with files open (unbind, hot unplug): their mappings are zapped
 * (later faults: SIGBUS) and they keep the tgr_dev until closed; nothing
 * touches the card after this returns.
 */
static void tgr_remove(struct pci_dev *pdev)
{
	struct tgr_dev *dev = pci_get_drvdata(pdev);
	unsigned int i;

	misc_deregister(&dev->misc);
	mutex_lock(&dev->lock);
	tgr_quiesce(dev);
	for (i = 1; i < TGR_CTX_MAX; i++) {
		struct tgr_ctx *ctx = dev->ctxs[i];

		if (!ctx)
			continue;
		unmap_mapping_range(ctx->filp->f_mapping, 0, 0, 1);
		dev_warn(&pdev->dev, "removed while context %u is open\n", i);
	}
	dev->gone = true;
	mutex_unlock(&dev->lock);
	free_irq(dev->irq, dev);
	pci_free_irq_vectors(pdev);
	cancel_work_sync(&dev->stale_work);
	cancel_delayed_work_sync(&dev->stop_work);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
	ida_free(&tgr_ida, dev->index);
	tgr_dev_put(dev);
}

static void tgr_shutdown(struct pci_dev *pdev)
{
	struct tgr_dev *dev = pci_get_drvdata(pdev);

	if (!dev->gone)
		tgr_quiesce(dev);
}

static const struct pci_device_id tgr_ids[] = {
	{ PCI_DEVICE(TGR_PCI_VENDOR, TGR_PCI_DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(pci, tgr_ids);

static struct pci_driver tgr_driver = {
	.name = TGR_NAME,
	.id_table = tgr_ids,
	.probe = tgr_probe,
	.remove = tgr_remove,
	.shutdown = tgr_shutdown,
	.dev_groups = tgr_groups,
};

static int __init tgr_init(void)
{
	return pci_register_driver(&tgr_driver);
}
module_init(tgr_init);

static void __exit tgr_exit(void)
{
	pci_unregister_driver(&tgr_driver);
	tgr_threads_reap(true);
	ida_destroy(&tgr_ida);
}
module_exit(tgr_exit);

MODULE_DESCRIPTION("Telegraphos NIC (remote memory, shadow addressing, remote enqueue)");
MODULE_AUTHOR("vcluster project");
MODULE_LICENSE("GPL");
MODULE_VERSION(TGR_VERSION_STR);
