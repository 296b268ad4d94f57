// SPDX-License-Identifier: GPL-2.0
/*
 * ParaStation board (PCI 1234:5053) driver: PCI probe/remove, board set-up
 * (node id, X-Y routing table), interrupts and sysfs.
 *
 * The data path is user level, as in the original ParaStation: a process
 * opens /dev/ps1, maps the registers and drives the FIFOs itself. The
 * driver configures the board, provides interrupt-driven waiting and a
 * shared message pool, and cleans up after processes that die.
 *
 * Register interface: docs/hw/parastation.md. Driver: docs/ps1-driver.md.
 */

#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>

#include "ps1.h"

static int node = -1;
module_param(node, int, 0444);
MODULE_PARM_DESC(node, "node id of this board (0..65535; -1: keep the board's NODE)");

static unsigned int pool_kb = 256;
module_param(pool_kb, uint, 0444);
MODULE_PARM_DESC(pool_kb, "size of the shared message pool in KiB (4..65536, default 256)");

static unsigned int link_timeout_ms = 2000;
module_param(link_timeout_ms, uint, 0644);
MODULE_PARM_DESC(link_timeout_ms, "how long set-up waits for SREG.LINK (ms, default 2000)");

/* The misc device is called "ps1", so there can be one board. */
static atomic_t ps1_claimed = ATOMIC_INIT(0);

static void ps1_dev_release(struct kref *kref)
{
	struct ps1_dev *dev = container_of(kref, struct ps1_dev, kref);

	vfree(dev->pool);
	kfree(dev);
}

void ps1_dev_put(struct ps1_dev *dev)
{
	kref_put(&dev->kref, ps1_dev_release);
}

/* Caller holds irq_lock. */
static void ps1_write_ie(struct ps1_dev *dev)
{
	ps1_wr(dev, PS1_REG_CREG, dev->ie);
}

/*
 * Enable interrupts for @causes. Every cause is one-shot: the handler
 * disables it again, and whoever waits re-arms it. That way a cause that
 * the board keeps asserting (an unread packet, a latched error) cannot
 * storm, and nobody pays for interrupts nobody waits for.
 *
 * A stale ISR bit of a cause that is not armed yet is cleared first, so
 * that the board sends a fresh MSI for the next event. Bits of causes that
 * are already armed are left alone: their interrupt may be in flight.
 *
 * Caller holds io_lock (read) and the device is not gone.
 */
void ps1_arm(struct ps1_dev *dev, u32 causes)
{
	unsigned long flags;
	u32 new;

	causes &= PS1_ISR_MASK;
	spin_lock_irqsave(&dev->irq_lock, flags);
	new = causes & ~dev->ie;
	if (new)
		ps1_wr(dev, PS1_REG_ISR, new);
	dev->ie |= causes;
	/* rewritten even if unchanged: user space may have clobbered CREG */
	ps1_write_ie(dev);
	spin_unlock_irqrestore(&dev->irq_lock, flags);
}

void ps1_disarm_all(struct ps1_dev *dev)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->irq_lock, flags);
	dev->ie = 0;
	ps1_write_ie(dev);
	spin_unlock_irqrestore(&dev->irq_lock, flags);
}

static irqreturn_t ps1_irq(int irq, void *data)
{
	struct ps1_dev *dev = data;
	u32 isr, creg, pending;

	isr = ps1_rd(dev, PS1_REG_ISR);
	if (isr == ~0u)		/* surprise removal: all ones */
		return IRQ_NONE;
	creg = ps1_rd(dev, PS1_REG_CREG);
	pending = isr & creg & PS1_ISR_MASK;
	if (!pending)
		return IRQ_NONE;	/* INTx may be shared */

	ps1_wr(dev, PS1_REG_ISR, pending);	/* RW1C */

	spin_lock(&dev->irq_lock);
	dev->ie &= ~pending;			/* one-shot, see ps1_arm() */
	ps1_write_ie(dev);
	spin_unlock(&dev->irq_lock);

	ps1_count(dev, PS1_CNT_IRQ);
	if (pending & PS1_ISR_PKT)
		ps1_count(dev, PS1_CNT_IRQ_PKT);
	if (pending & PS1_ISR_BARRIER)
		ps1_count(dev, PS1_CNT_IRQ_BARRIER);
	if (pending & PS1_ISR_TX)
		ps1_count(dev, PS1_CNT_IRQ_TX);
	if (pending & PS1_ISR_ERR) {
		u32 sreg = ps1_rd(dev, PS1_REG_SREG);

		ps1_count(dev, PS1_CNT_IRQ_ERR);
		/* the routes the fabric holds are suspect: reload on next open */
		if (sreg & (PS1_SREG_ERR_LINK | PS1_SREG_ERR_CONFIG)) {
			WRITE_ONCE(dev->routes_ok, false);
			dev_warn_ratelimited(&dev->pdev->dev, "%s (SREG 0x%08x)\n",
					     sreg & PS1_SREG_ERR_CONFIG ?
					     "fabric rejected node id or routes" :
					     "fabric link lost", sreg);
		}
	}

	atomic_inc(&dev->irq_seq);
	wake_up_interruptible_all(&dev->wq);
	return IRQ_HANDLED;
}

/* Next hop from this node to @dst: X first, then Y (dimension order). */
static u32 ps1_route(const struct ps1_dev *dev, u32 dst)
{
	if (dst == dev->node)
		return PS1_RT_HERE;
	if (!dev->width)			/* ring: i -> i + 1 */
		return PS1_RT_X;
	/* torus: node id = y * width + x; x links go to x + 1, y to y + 1 */
	if (dst % dev->width != dev->node % dev->width)
		return PS1_RT_X;
	return PS1_RT_Y;
}

static bool ps1_link_wait(struct ps1_dev *dev, unsigned int ms, u32 *sreg)
{
	unsigned long deadline;

	deadline = jiffies + msecs_to_jiffies(ms);
	for (;;) {
		*sreg = ps1_rd(dev, PS1_REG_SREG);
		if (*sreg == ~0u)
			return false;
		if (*sreg & PS1_SREG_LINK)
			return true;
		if (time_after(jiffies, deadline))
			return false;
		/* no interrupt for link-up; sleep, the wait is bounded */
		msleep(20);
	}
}

/*
 * Program NODE and, once the link is up, the routing table, then commit
 * them to the fabric. With @reset the board is reset first (FIFOs,
 * errors, barrier state, routing table). @wait: may wait for the link for
 * link_timeout_ms; otherwise a down link fails at once.
 *
 * Caller holds dev->lock and io_lock (read), and the device is not gone.
 * Returns 0, -ENOLINK (link down), -EPROTO (unusable FABRIC or node id) or
 * -ENODEV (board not responding).
 */
int ps1_load(struct ps1_dev *dev, bool reset, bool wait)
{
	struct device *d = &dev->pdev->dev;
	enum ps1_cfg old = dev->cfg;
	u32 sreg, fabric, nodes, width, height, i;

	WRITE_ONCE(dev->routes_ok, false);
	if (reset) {
		ps1_disarm_all(dev);
		/* NODE first: the reset re-announces NODE to the fabric */
		ps1_wr(dev, PS1_REG_NODE, dev->node);
		ps1_wr(dev, PS1_REG_CREG, PS1_CREG_RESET);
		ps1_count(dev, PS1_CNT_RESETS);
	}
	ps1_wr(dev, PS1_REG_NODE, dev->node);

	if (!ps1_link_wait(dev, wait ? READ_ONCE(link_timeout_ms) : 0, &sreg)) {
		if (sreg == ~0u) {
			dev_err(d, "board does not respond\n");
			return -ENODEV;
		}
		dev->cfg = PS1_CFG_DOWN;
		if (old != PS1_CFG_DOWN)
			dev_warn(d, "fabric link down (SREG 0x%08x); set-up is retried on open or when node is written\n",
				 sreg);
		return -ENOLINK;
	}

	fabric = ps1_rd(dev, PS1_REG_FABRIC);
	nodes = PS1_FABRIC_NODES(fabric);
	width = PS1_FABRIC_WIDTH(fabric);
	height = PS1_FABRIC_HEIGHT(fabric);
	dev->cfg = PS1_CFG_BAD;
	if (!nodes) {
		dev_err(d, "FABRIC 0x%08x reports no nodes\n", fabric);
		return -EPROTO;
	}
	if (width && width * height != nodes) {
		dev_err(d, "FABRIC 0x%08x: a %ux%u torus cannot have %u nodes\n",
			fabric, width, height, nodes);
		return -EPROTO;
	}
	if (dev->node >= nodes) {
		dev_err(d, "node %u is outside the fabric of %u nodes\n",
			dev->node, nodes);
		return -EPROTO;
	}
	dev->nodes = nodes;
	dev->width = width;
	dev->height = width ? height : 0;

	for (i = 0; i < nodes; i++) {
		ps1_wr(dev, PS1_REG_RT_INDEX, i);
		ps1_wr(dev, PS1_REG_RT_ENTRY, ps1_route(dev, i));
		if ((i & 255) == 255)
			cond_resched();
	}
	ps1_wr(dev, PS1_REG_RT_COMMIT, 1);
	ps1_count(dev, PS1_CNT_ROUTE_LOADS);

	dev->cfg = PS1_CFG_OK;
	WRITE_ONCE(dev->routes_ok, true);
	/* so that a rejection by the fabric shows up in routes_ok */
	ps1_arm(dev, PS1_ISR_ERR);
	if (old != PS1_CFG_OK && width)
		dev_info(d, "node %u of a %ux%u torus, routes loaded\n",
			 dev->node, width, height);
	else if (old != PS1_CFG_OK)
		dev_info(d, "node %u of a ring of %u, routes loaded\n",
			 dev->node, nodes);
	return 0;
}

/* The routing table was wiped if our own entry is no longer "here". */
static bool ps1_routes_intact(struct ps1_dev *dev)
{
	ps1_wr(dev, PS1_REG_RT_INDEX, dev->node);
	return ps1_rd(dev, PS1_REG_RT_ENTRY) == PS1_RT_HERE;
}

/*
 * Called on open: redo the set-up if it failed before or the board lost
 * it (link loss, rejection, a reset written by user space). The board is
 * only reset when nobody else uses it.
 *
 * Caller holds dev->lock, the new opener is already counted.
 */
void ps1_refresh(struct ps1_dev *dev)
{
	down_read(&dev->io_lock);
	if (dev->gone)
		goto out;
	if (READ_ONCE(dev->routes_ok) &&
	    (ps1_rd(dev, PS1_REG_SREG) & PS1_SREG_LINK) &&
	    ps1_routes_intact(dev))
		goto arm;
	if (dev->open_count <= 1)
		ps1_load(dev, true, true);
	else if (ps1_rd(dev, PS1_REG_SREG) & PS1_SREG_LINK)
		ps1_load(dev, false, false);
arm:
	ps1_arm(dev, PS1_ISR_ERR);
out:
	up_read(&dev->io_lock);
}

/* Which PS1_EV_* an SREG value satisfies. */
u32 ps1_sreg_events(u32 sreg)
{
	u32 ev = 0;

	if (sreg & PS1_SREG_PKT_READY)
		ev |= PS1_EV_PKT;
	if (sreg & PS1_SREG_ERR_MASK)
		ev |= PS1_EV_ERR;
	if (sreg & PS1_SREG_BAR_DONE)
		ev |= PS1_EV_BARRIER;
	if (!(sreg & PS1_SREG_TX_FULL))
		ev |= PS1_EV_TX;
	return ev;
}

static bool ps1_woken(struct ps1_dev *dev, int seq)
{
	return atomic_read(&dev->irq_seq) != seq || READ_ONCE(dev->gone);
}

/*
 * Sleep until one of @want holds, the timeout (jiffies, or
 * MAX_SCHEDULE_TIMEOUT) runs out or a signal comes. Interrupt driven: the
 * causes are armed, SREG is checked, and we sleep until the next
 * interrupt. Every interrupt re-checks, because another process may have
 * taken the packet, and re-arms, because the handler disarmed the cause.
 */
int ps1_wait_events(struct ps1_dev *dev, u32 want, long timeout,
		    u32 *revents, u32 *sreg_out)
{
	u32 sreg, ev;
	long ret;
	int seq;

	for (;;) {
		down_read(&dev->io_lock);
		if (dev->gone) {
			up_read(&dev->io_lock);
			return -ENODEV;
		}
		seq = atomic_read(&dev->irq_seq);
		ps1_arm(dev, want);
		sreg = ps1_rd(dev, PS1_REG_SREG);
		up_read(&dev->io_lock);
		if (sreg == ~0u)
			return -ENODEV;

		*sreg_out = sreg;
		ev = ps1_sreg_events(sreg) & want;
		*revents = ev;
		if (ev)
			return 0;
		if (!timeout)
			return -ETIMEDOUT;

		ret = wait_event_interruptible_timeout(dev->wq,
						       ps1_woken(dev, seq),
						       timeout);
		if (ret < 0)
			return -EINTR;
		/* on expiry look once more, then give up */
		if (timeout != MAX_SCHEDULE_TIMEOUT)
			timeout = ret;
	}
}

/* Caller holds io_lock (read). */
u32 ps1_state(struct ps1_dev *dev)
{
	u32 sreg;

	if (dev->gone)
		return PS1_STATE_REMOVED;
	sreg = ps1_rd(dev, PS1_REG_SREG);
	if (sreg == ~0u)
		return PS1_STATE_REMOVED;
	if (sreg & PS1_SREG_ERR_CONFIG)
		return PS1_STATE_REJECTED;
	if (!(sreg & PS1_SREG_LINK))
		return sreg & PS1_SREG_ERR_LINK ? PS1_STATE_LINK_LOST :
						  PS1_STATE_DOWN;
	if (dev->cfg == PS1_CFG_BAD)
		return PS1_STATE_BAD_FABRIC;
	if (!READ_ONCE(dev->routes_ok))
		return PS1_STATE_UNCONFIGURED;
	return PS1_STATE_UP;
}

static const char * const ps1_state_names[] = {
	[PS1_STATE_DOWN]	 = "down",
	[PS1_STATE_UP]		 = "up",
	[PS1_STATE_UNCONFIGURED] = "unconfigured",
	[PS1_STATE_BAD_FABRIC]	 = "bad-fabric",
	[PS1_STATE_REJECTED]	 = "rejected",
	[PS1_STATE_LINK_LOST]	 = "link-lost",
	[PS1_STATE_REMOVED]	 = "removed",
};

/* ---- sysfs (under the PCI device; /sys/class/misc/ps1/device too) ---- */

static struct ps1_dev *ps1_from_dev(struct device *d)
{
	return pci_get_drvdata(to_pci_dev(d));
}

static ssize_t node_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	struct ps1_dev *dev = ps1_from_dev(d);

	return sysfs_emit(buf, "%u\n", READ_ONCE(dev->node));
}

/* Changing the node id resets the board, so only while nobody uses it. */
static ssize_t node_store(struct device *d, struct device_attribute *attr,
			  const char *buf, size_t count)
{
	struct ps1_dev *dev = ps1_from_dev(d);
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 0, &val);
	if (ret)
		return ret;
	if (val > 0xffff)
		return -EINVAL;

	mutex_lock(&dev->lock);
	if (dev->open_count) {
		ret = -EBUSY;
		goto out;
	}
	if (dev->cfg == PS1_CFG_OK && val >= dev->nodes) {
		ret = -EINVAL;
		goto out;
	}
	down_read(&dev->io_lock);
	if (dev->gone) {
		ret = -ENODEV;
	} else {
		WRITE_ONCE(dev->node, val);
		/* link down or bad fabric is reported in state, not here */
		ps1_load(dev, true, true);
		ret = count;
	}
	up_read(&dev->io_lock);
out:
	mutex_unlock(&dev->lock);
	return ret;
}
static DEVICE_ATTR_RW(node);

static ssize_t nodes_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct ps1_dev *dev = ps1_from_dev(d);
	u32 nodes;

	mutex_lock(&dev->lock);
	nodes = dev->cfg == PS1_CFG_OK ? dev->nodes : 0;
	mutex_unlock(&dev->lock);
	return sysfs_emit(buf, "%u\n", nodes);
}
static DEVICE_ATTR_RO(nodes);

static ssize_t topology_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	struct ps1_dev *dev = ps1_from_dev(d);
	ssize_t ret;

	mutex_lock(&dev->lock);
	if (dev->cfg != PS1_CFG_OK)
		ret = sysfs_emit(buf, "unknown\n");
	else if (!dev->width)
		ret = sysfs_emit(buf, "ring %u\n", dev->nodes);
	else
		ret = sysfs_emit(buf, "torus %ux%u\n", dev->width, dev->height);
	mutex_unlock(&dev->lock);
	return ret;
}
static DEVICE_ATTR_RO(topology);

static ssize_t state_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct ps1_dev *dev = ps1_from_dev(d);
	u32 state;

	down_read(&dev->io_lock);
	state = ps1_state(dev);
	up_read(&dev->io_lock);
	return sysfs_emit(buf, "%s\n", ps1_state_names[state]);
}
static DEVICE_ATTR_RO(state);

static ssize_t pool_kb_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	struct ps1_dev *dev = ps1_from_dev(d);

	return sysfs_emit(buf, "%zu\n", dev->pool_size / 1024);
}
static DEVICE_ATTR_RO(pool_kb);

/* The processes that have the device open, one PID per line. */
static ssize_t openers_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	struct ps1_dev *dev = ps1_from_dev(d);
	ssize_t len;

	mutex_lock(&dev->lock);
	len = nic_openers_show(&dev->files, buf);
	mutex_unlock(&dev->lock);
	return len;
}
static DEVICE_ATTR_RO(openers);

static struct attribute *ps1_attrs[] = {
	&dev_attr_node.attr,
	&dev_attr_nodes.attr,
	&dev_attr_topology.attr,
	&dev_attr_state.attr,
	&dev_attr_pool_kb.attr,
	&dev_attr_openers.attr,
	NULL,
};

static const struct attribute_group ps1_group = {
	.attrs = ps1_attrs,
};

/* counters/: board registers, read live */
static ssize_t ps1_show_board(struct device *d, char *buf, unsigned int reg)
{
	struct ps1_dev *dev = ps1_from_dev(d);
	ssize_t ret;

	down_read(&dev->io_lock);
	if (dev->gone)
		ret = -ENODEV;
	else
		ret = sysfs_emit(buf, "%u\n", ps1_rd(dev, reg));
	up_read(&dev->io_lock);
	return ret;
}

#define PS1_BOARD_COUNTER(_name, _reg)					\
static ssize_t _name##_show(struct device *d,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return ps1_show_board(d, buf, _reg);				\
}									\
static DEVICE_ATTR_RO(_name)

#define PS1_DRIVER_COUNTER(_name, _cnt)					\
static ssize_t _name##_show(struct device *d,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%llu\n",				\
			  ps1_counter(ps1_from_dev(d), (_cnt)));	\
}									\
static DEVICE_ATTR_RO(_name)

PS1_BOARD_COUNTER(tx_packets, PS1_REG_CNT_TX_PKTS);
PS1_BOARD_COUNTER(rx_packets, PS1_REG_CNT_RX_PKTS);
PS1_BOARD_COUNTER(parity_errors, PS1_REG_CNT_PARITY);
PS1_BOARD_COUNTER(barriers, PS1_REG_CNT_BARRIERS);
PS1_DRIVER_COUNTER(interrupts, PS1_CNT_IRQ);
PS1_DRIVER_COUNTER(opens, PS1_CNT_OPENS);
PS1_DRIVER_COUNTER(resets, PS1_CNT_RESETS);
PS1_DRIVER_COUNTER(cleanup_resets, PS1_CNT_CLEANUP_RESETS);
PS1_DRIVER_COUNTER(route_loads, PS1_CNT_ROUTE_LOADS);

static struct attribute *ps1_counter_attrs[] = {
	&dev_attr_tx_packets.attr,
	&dev_attr_rx_packets.attr,
	&dev_attr_parity_errors.attr,
	&dev_attr_barriers.attr,
	&dev_attr_interrupts.attr,
	&dev_attr_opens.attr,
	&dev_attr_resets.attr,
	&dev_attr_cleanup_resets.attr,
	&dev_attr_route_loads.attr,
	NULL,
};

static const struct attribute_group ps1_counter_group = {
	.name = "counters",
	.attrs = ps1_counter_attrs,
};

static const struct attribute_group *ps1_groups[] = {
	&ps1_group,
	&ps1_counter_group,
	NULL,
};

/* ---- PCI ---- */

static int ps1_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *d = &pdev->dev;
	struct ps1_dev *dev;
	u32 board_id;
	int ret;

	if (atomic_cmpxchg(&ps1_claimed, 0, 1)) {
		dev_err(d, "only one ParaStation board is supported\n");
		return -EBUSY;
	}

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_claim;
	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, 0) < PS1_REGS_SIZE ||
	    !PAGE_ALIGNED(pci_resource_start(pdev, 0))) {
		dev_err(d, "BAR0 is not a page-aligned 4 KiB MMIO region\n");
		ret = -ENODEV;
		goto err_claim;
	}
	ret = pcim_iomap_regions(pdev, BIT(0), PS1_NAME);
	if (ret)
		goto err_claim;
	/* MSI is a memory write by the device */
	pci_set_master(pdev);

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		ret = -ENOMEM;
		goto err_claim;
	}
	kref_init(&dev->kref);
	dev->pdev = pdev;
	dev->regs = pcim_iomap_table(pdev)[0];
	dev->regs_phys = pci_resource_start(pdev, 0);
	init_rwsem(&dev->io_lock);
	mutex_init(&dev->lock);
	INIT_LIST_HEAD(&dev->files);
	spin_lock_init(&dev->irq_lock);
	init_waitqueue_head(&dev->wq);

	board_id = ps1_rd(dev, PS1_REG_ID);
	if (board_id >> 16 != PS1_ID_MAGIC) {
		dev_err(d, "ID register reads 0x%08x, not a ParaStation board\n",
			board_id);
		ret = -ENODEV;
		goto err_free;
	}
	if ((board_id & 0xffff) != PS1_ID_VERSION)
		dev_warn(d, "register interface version %u, driver knows %u\n",
			 board_id & 0xffff, PS1_ID_VERSION);

	dev->pool = nic_pool_alloc(pool_kb, &dev->pool_size);
	if (!dev->pool) {
		ret = -ENOMEM;
		goto err_free;
	}

	/* node=-1: keep what the board has (e.g. -device parastation,node=) */
	dev->node = node >= 0 ? node : ps1_rd(dev, PS1_REG_NODE) & 0xffff;

	ps1_wr(dev, PS1_REG_CREG, 0);	/* quiet until the handler is in */
	ret = nic_irq_setup(pdev, ps1_irq, NULL, PS1_NAME, dev, &dev->irq,
			    &dev->msi);
	if (ret)
		goto err_free;
	pci_set_drvdata(pdev, dev);

	/* a down link is not fatal: state says so and open retries */
	mutex_lock(&dev->lock);
	down_read(&dev->io_lock);
	ps1_load(dev, true, true);
	up_read(&dev->io_lock);
	mutex_unlock(&dev->lock);

	ret = nic_misc_register(&dev->misc, PS1_NAME, &ps1_fops, d, 0600);
	if (ret)
		goto err_irq;

	dev_info(d, "ParaStation board, /dev/%s, node %u, %s, %s, pool %zu KiB\n",
		 PS1_NAME, dev->node, dev->msi ? "MSI" : "INTx",
		 dev->cfg == PS1_CFG_OK ? "link up" : "link down",
		 dev->pool_size / 1024);
	return 0;

err_irq:
	ps1_disarm_all(dev);
	free_irq(dev->irq, dev);
	pci_free_irq_vectors(pdev);
err_free:
	ps1_dev_put(dev);
err_claim:
	atomic_set(&ps1_claimed, 0);
	return ret;
}

/*
 * Also for hot unplug with the device open: no new opens, sleepers woken,
 * register mappings zapped (later accesses get SIGBUS), no register access
 * after this returns. Open files keep the ps1_dev (and the pool, which
 * stays mapped) until they are closed.
 */
static void ps1_remove(struct pci_dev *pdev)
{
	struct ps1_dev *dev = pci_get_drvdata(pdev);
	struct ps1_file *pf;

	misc_deregister(&dev->misc);

	mutex_lock(&dev->lock);
	down_write(&dev->io_lock);
	if (pci_device_is_present(pdev))
		ps1_disarm_all(dev);
	dev->gone = true;
	up_write(&dev->io_lock);
	list_for_each_entry(pf, &dev->files, opener.node)
		unmap_mapping_range(pf->file->f_mapping, PS1_MMAP_REGS_OFFSET,
				    PAGE_SIZE, 1);
	if (dev->open_count)
		dev_warn(&pdev->dev, "removed while open by %u file(s)\n",
			 dev->open_count);
	mutex_unlock(&dev->lock);
	wake_up_interruptible_all(&dev->wq);

	free_irq(dev->irq, dev);
	pci_free_irq_vectors(pdev);
	ps1_dev_put(dev);
	atomic_set(&ps1_claimed, 0);
}

static void ps1_shutdown(struct pci_dev *pdev)
{
	struct ps1_dev *dev = pci_get_drvdata(pdev);

	/* no interrupts into a kernel that is going away (kexec) */
	down_read(&dev->io_lock);
	if (!dev->gone)
		ps1_disarm_all(dev);
	up_read(&dev->io_lock);
}

static const struct pci_device_id ps1_ids[] = {
	{ PCI_DEVICE(PS1_PCI_VENDOR, PS1_PCI_DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(pci, ps1_ids);

static struct pci_driver ps1_driver = {
	.name = PS1_NAME,
	.id_table = ps1_ids,
	.probe = ps1_probe,
	.remove = ps1_remove,
	.shutdown = ps1_shutdown,
	.dev_groups = ps1_groups,
};

static int __init ps1_init(void)
{
	if (node < -1 || node > 0xffff) {
		pr_err("%s: node=%d out of range (-1..65535)\n", PS1_NAME, node);
		return -EINVAL;
	}
	if (nic_pool_kb_check(PS1_NAME, pool_kb))
		return -EINVAL;
	return pci_register_driver(&ps1_driver);
}
module_init(ps1_init);

static void __exit ps1_exit(void)
{
	pci_unregister_driver(&ps1_driver);
}
module_exit(ps1_exit);

MODULE_DESCRIPTION("ParaStation cluster interconnect board (user-level communication)");
MODULE_AUTHOR("vcluster project");
MODULE_LICENSE("GPL");
MODULE_VERSION(PS1_VERSION_STR);
