// SPDX-License-Identifier: GPL-2.0
/*
 * LANai-style Myrinet card (PCI 14c1:8043) driver: PCI probe/remove, the
 * card's state, interrupts, the MCP watchdog and the module parameters.
 *
 * The card runs firmware (the MCP) that implements a reliable protocol
 * and moves data between the network and user memory itself. The driver
 * loads and starts the MCP, hands out its contexts to processes (each
 * gets its SRAM send slots, a doorbell page and a receive region in host
 * memory, all mapped), lets them sleep until the MCP notifies them, and
 * notices when the MCP dies.
 *
 * This file and myri_load.c are the driver's core. They call each other
 * on purpose: probe, remove and the watchdog start and stop the MCP
 * (myri_load(), myri_stop()), and a load moves the card's state, which
 * lives here (myri_die(), myri_set_down(), myri_halted()). The helpers
 * (myri_ctx.c, myri_file.c, myri_sysfs.c) call the core; the core reaches
 * them only through the tables it registers (myri_ctx_ops, myri_fops,
 * myri_groups) and myri_sysfs_init().
 *
 * Card: docs/hw/lanai.md. Driver: docs/myri-driver.md.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/stdarg.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "myri.h"

#define MYRI_MONITOR_MS		500

static char *fw = "myri/mcp.bin";
module_param(fw, charp, 0444);
MODULE_PARM_DESC(fw, "MCP firmware file (default myri/mcp.bin; sysfs fw and reset change it per card)");

static int node = -1;
module_param(node, int, 0444);
MODULE_PARM_DESC(node, "node id (0..63; -1: the card's own, LANAI_CFG_NODE)");

static unsigned int pool_kb = 1024;
module_param(pool_kb, uint, 0444);
MODULE_PARM_DESC(pool_kb, "shared pool for the ports layer, KiB (4..65536, default 1024)");

unsigned int myri_param_hal_slots = 64;
module_param_named(hal_slots, myri_param_hal_slots, uint, 0644);
MODULE_PARM_DESC(hal_slots, "send slots of the HAL context 0 (power of 2, default 64)");

unsigned int myri_param_raw_slots = 8;
module_param_named(raw_slots, myri_param_raw_slots, uint, 0644);
MODULE_PARM_DESC(raw_slots, "default send slots of other contexts (power of 2, default 8)");

unsigned int myri_param_hal_ring_kb = 1024;
module_param_named(hal_ring_kb, myri_param_hal_ring_kb, uint, 0644);
MODULE_PARM_DESC(hal_ring_kb, "receive data ring of context 0, KiB (power of 2, default 1024)");

unsigned int myri_param_raw_ring_kb = 256;
module_param_named(raw_ring_kb, myri_param_raw_ring_kb, uint, 0644);
MODULE_PARM_DESC(raw_ring_kb, "default receive data ring of other contexts, KiB (default 256)");

unsigned int myri_param_cmd_timeout_ms = 5000;
module_param_named(cmd_timeout_ms, myri_param_cmd_timeout_ms, uint, 0644);
MODULE_PARM_DESC(cmd_timeout_ms, "how long a mailbox command may take before the MCP counts as dead (default 5000)");

bool myri_param_auto_reload = true;
module_param_named(auto_reload, myri_param_auto_reload, bool, 0644);
MODULE_PARM_DESC(auto_reload, "opening a context on a dead or down card reloads the MCP (default 1)");

static unsigned int heartbeat_ms = 2000;
module_param(heartbeat_ms, uint, 0644);
MODULE_PARM_DESC(heartbeat_ms, "the MCP is dead when its heartbeat stands still this long (0: no check, default 2000)");

/* The misc devices are myri0, myri1, ... */
static DEFINE_IDA(myri_ida);

static void myri_dev_release(struct kref *kref)
{
	struct myri_dev *dev = container_of(kref, struct myri_dev, kref);

	vfree(dev->pool);
	bitmap_free(dev->sram_map);
	ida_free(&myri_ida, dev->index);
	pci_dev_put(dev->pdev);
	kfree(dev);
}

void myri_dev_put(struct myri_dev *dev)
{
	kref_put(&dev->kref, myri_dev_release);
}

u32 myri_state(struct myri_dev *dev)
{
	return READ_ONCE(dev->state);
}

/* Sleepers re-check: a notify, a death, a reload or a removal. */
void myri_wake_all(struct myri_dev *dev)
{
	atomic_inc(&dev->irq_seq);
	wake_up_interruptible_all(&dev->wq);
}

/*
 * The MCP is dead: log why, fail everything that waits on it. Any
 * context: the interrupt handler calls it on a halt. With @reset_core
 * the core, which may still run, is held in reset, so that it cannot
 * write host memory the driver is about to free. A halted core stays as
 * it is (its halt registers tell where it stopped).
 */
void myri_die(struct myri_dev *dev, bool reset_core, const char *fmt, ...)
{
	char msg[MYRI_REASON_MAX];
	unsigned long flags;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	spin_lock_irqsave(&dev->state_lock, flags);
	if (dev->state != MYRI_STATE_UP && dev->state != MYRI_STATE_LOADING) {
		spin_unlock_irqrestore(&dev->state_lock, flags);
		return;
	}
	WRITE_ONCE(dev->state, MYRI_STATE_DEAD);
	strscpy(dev->reason, msg, sizeof(dev->reason));
	strscpy(dev->death, msg, sizeof(dev->death));
	spin_unlock_irqrestore(&dev->state_lock, flags);

	if (reset_core)
		myri_cfg_wr(dev, LANAI_CFG_CONTROL,
			    LANAI_CTRL_RESET_ON | LANAI_CTRL_INT_DIS);
	dev_err(&dev->pdev->dev, "%s\n", msg);
	myri_count(dev, MYRI_CNT_DEATHS);
	myri_wake_all(dev);
}

/* No MCP runs: a load failed (bad image, no link). Logs why. */
void myri_set_down(struct myri_dev *dev, int err, const char *fmt, ...)
{
	char msg[MYRI_REASON_MAX];
	unsigned long flags;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	spin_lock_irqsave(&dev->state_lock, flags);
	if (dev->state != MYRI_STATE_REMOVED) {
		WRITE_ONCE(dev->state, MYRI_STATE_DOWN);
		strscpy(dev->reason, msg, sizeof(dev->reason));
	}
	spin_unlock_irqrestore(&dev->state_lock, flags);
	dev->down_err = err;
	if (err == -ENOLINK)
		dev_warn(&dev->pdev->dev, "%s\n", msg);
	else
		dev_err(&dev->pdev->dev, "%s\n", msg);
	myri_wake_all(dev);
}

const char *myri_halt_name(u32 cause)
{
	static const char *const names[] = {
		[LANAI_HALT_NONE] = "no halt",
		[LANAI_HALT_FETCH] = "fetch outside SRAM",
		[LANAI_HALT_LOAD] = "load outside SRAM",
		[LANAI_HALT_STORE] = "store outside SRAM",
		[LANAI_HALT_MISALIGNED] = "misaligned access",
		[LANAI_HALT_ILLEGAL] = "illegal instruction",
		[LANAI_HALT_EBREAK] = "ebreak",
		[LANAI_HALT_ECALL] = "ecall",
		[LANAI_HALT_WDOG] = "watchdog",
	};

	return cause < ARRAY_SIZE(names) ? names[cause] : "unknown halt cause";
}

const char *myri_panic_name(u32 code)
{
	static const char *const names[] = {
		[MCP_PANIC_NONE] = "no panic code",
		[MCP_PANIC_MAGIC] = "bad mcp_global magic",
		[MCP_PANIC_ABI] = "bad mcp_global ABI",
		[MCP_PANIC_NODES] = "bad node or nodes",
		[MCP_PANIC_SRAM] = "bad SRAM size",
		[MCP_PANIC_PARAMS] = "bad parameter",
		[MCP_PANIC_DMA] = "host DMA failed",
		[MCP_PANIC_RX_ARM] = "network receive refused",
	};

	return code < ARRAY_SIZE(names) && names[code] ? names[code] :
							 "unknown panic code";
}

/*
 * The core stopped (CORE_HALT, or found halted by the monitor). Say
 * where and why, in the words of the halt cause; an MCP that gave up
 * itself says so in mcp_global first.
 */
void myri_halted(struct myri_dev *dev)
{
	u32 cause = myri_cfg_rd(dev, LANAI_CFG_HALT_CAUSE);
	u32 pc = myri_cfg_rd(dev, LANAI_CFG_HALT_PC);
	u32 addr = myri_cfg_rd(dev, LANAI_CFG_HALT_ADDR);
	unsigned long flags;
	u32 code;

	spin_lock_irqsave(&dev->state_lock, flags);
	dev->halt_cause = cause;
	dev->halt_pc = pc;
	dev->halt_addr = addr;
	spin_unlock_irqrestore(&dev->state_lock, flags);

	code = myri_sram_rd(dev, MYRI_G(panic_code));
	if (myri_sram_rd(dev, MYRI_G(state)) == MCP_STATE_PANIC)
		myri_die(dev, false, "MCP panic: %s (code %u, arg 0x%08x; %s at pc 0x%08x)",
			 myri_panic_name(code), code,
			 myri_sram_rd(dev, MYRI_G(panic_arg)),
			 myri_halt_name(cause), pc);
	else if (cause == LANAI_HALT_WDOG)
		myri_die(dev, false,
			 "MCP stopped by the watchdog (loops without sleeping) at pc 0x%08x",
			 pc);
	else if (cause == LANAI_HALT_EBREAK || cause == LANAI_HALT_ECALL)
		myri_die(dev, false, "MCP halted: %s at pc 0x%08x, a0 0x%08x",
			 myri_halt_name(cause), pc, addr);
	else
		myri_die(dev, false, "MCP halted: %s at pc 0x%08x, address 0x%08x",
			 myri_halt_name(cause), pc, addr);
}

static irqreturn_t myri_irq(int irq, void *data)
{
	struct myri_dev *dev = data;
	u32 isr, pending;

	isr = myri_reg_rd(dev, LANAI_REG_ISR);
	if (isr == ~0u)		/* surprise removal */
		return IRQ_NONE;
	pending = isr & MYRI_EIMR;
	if (!pending)
		return IRQ_NONE;	/* INTx may be shared */

	/* A host write clears these bits. Everybody re-checks below, so a
	 * HOST_SIG that arrives between the read and this write is no loss.
	 */
	myri_reg_wr(dev, LANAI_REG_ISR, pending);
	myri_count(dev, MYRI_CNT_INTERRUPTS);
	if (pending & LANAI_ISR_CORE_HALT) {
		myri_count(dev, MYRI_CNT_IRQ_HALT);
		myri_halted(dev);
	}
	if (pending & LANAI_ISR_HOST_SIG) {
		myri_count(dev, MYRI_CNT_IRQ_HOST_SIG);
		myri_wake_all(dev);
	}
	return IRQ_HANDLED;
}

static const char *myri_core_name(u32 core)
{
	switch (core) {
	case LANAI_CORE_RESET:
		return "in reset";
	case LANAI_CORE_RUN:
		return "running";
	case LANAI_CORE_SLEEP:
		return "asleep";
	case LANAI_CORE_HALT:
		return "halted";
	default:
		return "in an unknown state";
	}
}

/*
 * A running MCP must keep its heartbeat moving, and must not halt or
 * panic unnoticed (a lost interrupt). A card that is down for want of a
 * link is loaded once the link comes up.
 */
static void myri_check(struct myri_dev *dev)
{
	u32 core, hb, ms = READ_ONCE(heartbeat_ms);

	core = myri_cfg_rd(dev, LANAI_CFG_CORE_STATE);
	if (core == LANAI_CORE_HALT) {
		myri_halted(dev);
		return;
	}
	if (core == LANAI_CORE_RESET || core == ~0u) {
		myri_die(dev, false, "MCP core was reset behind the driver's back (core state %u)",
			 core);
		return;
	}
	if (myri_sram_rd(dev, MYRI_G(state)) == MCP_STATE_PANIC) {
		hb = myri_sram_rd(dev, MYRI_G(panic_code));
		myri_die(dev, true, "MCP panic: %s (code %u, arg 0x%08x)",
			 myri_panic_name(hb), hb,
			 myri_sram_rd(dev, MYRI_G(panic_arg)));
		return;
	}
	hb = myri_sram_rd(dev, MYRI_G(heartbeat));
	if (hb != dev->hb_last) {
		dev->hb_last = hb;
		dev->hb_jiffies = jiffies;
	} else if (ms && time_after(jiffies, dev->hb_jiffies +
				    msecs_to_jiffies(ms))) {
		myri_die(dev, true, "MCP heartbeat stood still for %u ms (core %s)",
			 ms, myri_core_name(core));
	}
}

static void myri_monitor(struct work_struct *work)
{
	struct myri_dev *dev = container_of(to_delayed_work(work),
					    struct myri_dev, monitor);
	bool retry = false;

	down_read(&dev->io_lock);
	if (dev->gone) {
		up_read(&dev->io_lock);
		return;
	}
	if (myri_state(dev) == MYRI_STATE_UP)
		myri_check(dev);
	else if (myri_state(dev) == MYRI_STATE_DOWN && READ_ONCE(dev->link_retry))
		retry = myri_cfg_rd(dev, LANAI_CFG_LINK) & LANAI_LINK_UP;
	up_read(&dev->io_lock);

	if (retry) {
		mutex_lock(&dev->lock);
		if (dev->link_retry && myri_state(dev) == MYRI_STATE_DOWN) {
			dev_info(&dev->pdev->dev, "fabric link up: loading the MCP\n");
			myri_load(dev);
		}
		mutex_unlock(&dev->lock);
	}
	schedule_delayed_work(&dev->monitor, msecs_to_jiffies(MYRI_MONITOR_MS));
}

/* ---- PCI ---- */

/* Map the BAR: SRAM write-combining, the register blocks uncached. */
static int myri_map(struct myri_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	struct device *d = &pdev->dev;
	u32 id, version, size;

	dev->regs = devm_ioremap(d, dev->bar_phys + LANAI_CONFIG_OFFSET,
				 LANAI_CONFIG_SIZE + LANAI_SPECIAL_SIZE);
	if (!dev->regs)
		return -ENOMEM;
	id = myri_cfg_rd(dev, LANAI_CFG_ID);
	if (id != LANAI_ID_VALUE) {
		dev_err(d, "ID register reads 0x%08x, not a LANai card\n", id);
		return -ENODEV;
	}
	version = myri_cfg_rd(dev, LANAI_CFG_VERSION);
	if (version != LANAI_VERSION)
		dev_warn(d, "register interface version %u, driver knows %u\n",
			 version, LANAI_VERSION);
	size = myri_cfg_rd(dev, LANAI_CFG_SRAM_SIZE);
	if (size < LANAI_SRAM_MIN || size > LANAI_SRAM_MAX ||
	    !is_power_of_2(size)) {
		dev_err(d, "SRAM size %u is not a power of 2 from %u to %u\n",
			size, LANAI_SRAM_MIN, LANAI_SRAM_MAX);
		return -ENODEV;
	}
	dev->sram_size = size;
	dev->clock_mhz = myri_cfg_rd(dev, LANAI_CFG_CLOCK_MHZ);
	dev->sram = devm_ioremap_wc(d, dev->bar_phys + LANAI_SRAM_OFFSET, size);
	if (!dev->sram)
		return -ENOMEM;
	if (size > MCP_CTX_AREA_OFF) {
		dev->sram_pages = (size - MCP_CTX_AREA_OFF) >> PAGE_SHIFT;
		dev->sram_map = bitmap_zalloc(dev->sram_pages, GFP_KERNEL);
		if (!dev->sram_map)
			return -ENOMEM;
	}
	return 0;
}

static struct myri_dev *myri_alloc(struct pci_dev *pdev)
{
	struct myri_dev *dev;
	int index;

	index = ida_alloc(&myri_ida, GFP_KERNEL);
	if (index < 0)
		return NULL;
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		ida_free(&myri_ida, index);
		return NULL;
	}
	kref_init(&dev->kref);
	dev->pdev = pci_dev_get(pdev);
	dev->ctx_ops = &myri_ctx_ops;
	dev->index = index;
	snprintf(dev->name, sizeof(dev->name), "%s%d", MYRI_NAME, index);
	dev->bar_phys = pci_resource_start(pdev, 0);
	init_rwsem(&dev->io_lock);
	mutex_init(&dev->lock);
	INIT_LIST_HEAD(&dev->files);
	spin_lock_init(&dev->state_lock);
	init_waitqueue_head(&dev->wq);
	INIT_DELAYED_WORK(&dev->monitor, myri_monitor);
	strscpy(dev->fw_name, fw, sizeof(dev->fw_name));
	dev->state = MYRI_STATE_DOWN;
	strscpy(dev->reason, "not loaded yet", sizeof(dev->reason));
	strscpy(dev->death, "none", sizeof(dev->death));
	dev->down_err = -ENODEV;
	return dev;
}

static int myri_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *d = &pdev->dev;
	struct myri_dev *dev;
	u32 state;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, 0) < LANAI_BAR0_SIZE) {
		dev_err(d, "BAR0 is not a 16 MiB memory region\n");
		return -ENODEV;
	}
	ret = pci_request_region(pdev, 0, MYRI_NAME);
	if (ret)
		return ret;
	/* the MCP writes host memory; MSI is a write too */
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(d, DMA_BIT_MASK(64));
	if (ret)
		ret = dma_set_mask_and_coherent(d, DMA_BIT_MASK(32));
	if (ret) {
		dev_err(d, "no usable DMA mask\n");
		return ret;
	}

	dev = myri_alloc(pdev);
	if (!dev)
		return -ENOMEM;
	ret = myri_map(dev);
	if (ret)
		goto err_put;
	/* quiet until the handler is in: a previous driver may have left
	 * the MCP running with contexts in memory that is gone now
	 */
	myri_cfg_wr(dev, LANAI_CFG_CONTROL,
		    LANAI_CTRL_RESET_ON | LANAI_CTRL_INT_DIS);
	dev->node = myri_cfg_rd(dev, LANAI_CFG_NODE);
	if (node >= 0 && node != dev->node) {
		/* fabricd knows the card by its own id: packets say so */
		dev_warn(d, "node=%d overrides the card's node %u; the fabric still knows it as %u\n",
			 node, dev->node, dev->node);
		dev->node = node;
	}

	dev->pool = nic_pool_alloc(pool_kb, &dev->pool_size);
	if (!dev->pool) {
		ret = -ENOMEM;
		goto err_put;
	}
	ret = nic_irq_setup(pdev, myri_irq, NULL, dev->name, dev, &dev->irq,
			    &dev->msi);
	if (ret)
		goto err_put;
	pci_set_drvdata(pdev, dev);

	/* a failed load is not fatal: state says why, sysfs reset retries */
	mutex_lock(&dev->lock);
	myri_load(dev);
	mutex_unlock(&dev->lock);

	ret = nic_misc_register(&dev->misc, dev->name, &myri_fops, d, 0600);
	if (ret)
		goto err_irq;
	schedule_delayed_work(&dev->monitor, msecs_to_jiffies(MYRI_MONITOR_MS));

	state = myri_state(dev);
	dev_info(d, "LANai card, /dev/%s, node %u, SRAM %u KiB, %u MHz, %s, MCP %s\n",
		 dev->name, dev->node, dev->sram_size / 1024, dev->clock_mhz,
		 dev->msi ? "MSI" : "INTx",
		 state == MYRI_STATE_UP ? "up" : "not running");
	return 0;

err_irq:
	mutex_lock(&dev->lock);
	myri_stop(dev, MYRI_STATE_REMOVED, "probe failed");
	mutex_unlock(&dev->lock);
	free_irq(dev->irq, dev);
	pci_free_irq_vectors(pdev);
err_put:
	myri_dev_put(dev);
	return ret;
}

/*
 * Also for hot unplug with files open: no new opens, the core held in
 * reset (no more DMA into context memory), contexts taken from their
 * files (their mappings get SIGBUS), sleepers woken with ENODEV, and no
 * register access after this returns. Open files keep the myri_dev, the
 * pool and their receive regions until they are closed.
 */
static void myri_remove(struct pci_dev *pdev)
{
	struct myri_dev *dev = pci_get_drvdata(pdev);

	misc_deregister(&dev->misc);

	mutex_lock(&dev->lock);
	myri_stop(dev, MYRI_STATE_REMOVED, "removed");
	down_write(&dev->io_lock);
	dev->gone = true;
	up_write(&dev->io_lock);
	if (dev->open_count)
		dev_warn(&pdev->dev, "removed while open by %u file(s)\n",
			 dev->open_count);
	mutex_unlock(&dev->lock);
	myri_wake_all(dev);

	cancel_delayed_work_sync(&dev->monitor);
	free_irq(dev->irq, dev);
	pci_free_irq_vectors(pdev);
	myri_dev_put(dev);
}

static void myri_shutdown(struct pci_dev *pdev)
{
	struct myri_dev *dev = pci_get_drvdata(pdev);

	/* no DMA or interrupts into a kernel that is going away (kexec) */
	down_read(&dev->io_lock);
	if (!dev->gone)
		myri_cfg_wr(dev, LANAI_CFG_CONTROL,
			    LANAI_CTRL_RESET_ON | LANAI_CTRL_INT_DIS);
	up_read(&dev->io_lock);
}

static const struct pci_device_id myri_ids[] = {
	{ PCI_DEVICE(LANAI_PCI_VENDOR, LANAI_PCI_DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(pci, myri_ids);

static struct pci_driver myri_driver = {
	.name = MYRI_NAME,
	.id_table = myri_ids,
	.probe = myri_probe,
	.remove = myri_remove,
	.shutdown = myri_shutdown,
	.dev_groups = myri_groups,
};

static int __init myri_init(void)
{
	if (node < -1 || node >= MCP_MAX_NODES) {
		pr_err("%s: node=%d out of range (-1..%d)\n", MYRI_NAME, node,
		       MCP_MAX_NODES - 1);
		return -EINVAL;
	}
	if (nic_pool_kb_check(MYRI_NAME, pool_kb))
		return -EINVAL;
	if (!fw || !*fw || strlen(fw) >= MYRI_FW_NAME_MAX) {
		pr_err("%s: fw= must name a file (< %u characters)\n",
		       MYRI_NAME, MYRI_FW_NAME_MAX);
		return -EINVAL;
	}
	myri_sysfs_init();
	return pci_register_driver(&myri_driver);
}
module_init(myri_init);

static void __exit myri_exit(void)
{
	pci_unregister_driver(&myri_driver);
	ida_destroy(&myri_ida);
}
module_exit(myri_exit);

MODULE_DESCRIPTION("LANai-style Myrinet card (MCP firmware, user-level contexts)");
MODULE_AUTHOR("vcluster project");
MODULE_LICENSE("GPL");
MODULE_VERSION(MYRI_VERSION_STR);
MODULE_FIRMWARE("myri/mcp.bin");
