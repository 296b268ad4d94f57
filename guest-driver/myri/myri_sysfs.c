// SPDX-License-Identifier: GPL-2.0
/*
 * Myrinet card driver: sysfs, under the PCI device (also reachable as
 * /sys/class/misc/myriN/device/).
 *
 *   state        up | loading | down: REASON | dead: REASON | removed
 *   halt_reason  why the MCP died the last time, "none" if it never did
 *   fw (rw)      the firmware file the next load takes
 *   reset (w)    "1": reset the card and load the MCP again; a file name
 *                (e.g. myri/mcp-loop.bin): load that one instead
 *   routes (rw)  "NODE HEXBYTES" lines, see myri_routes_parse()
 *   node, nodes, openers, contexts
 *   counters/    the MCP's (MCP_COUNTER_LIST), the card's and the driver's
 */

#include <linux/ctype.h>
#include <linux/device.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "myri.h"

static struct myri_dev *myri_from_dev(struct device *d)
{
	return pci_get_drvdata(to_pci_dev(d));
}

static const char *const myri_state_names[] = {
	[MYRI_STATE_DOWN] = "down",
	[MYRI_STATE_LOADING] = "loading",
	[MYRI_STATE_UP] = "up",
	[MYRI_STATE_DEAD] = "dead",
	[MYRI_STATE_REMOVED] = "removed",
};

static ssize_t state_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct myri_dev *dev = myri_from_dev(d);
	char reason[MYRI_REASON_MAX];
	unsigned long flags;
	u32 state;

	spin_lock_irqsave(&dev->state_lock, flags);
	state = dev->state;
	strscpy(reason, dev->reason, sizeof(reason));
	spin_unlock_irqrestore(&dev->state_lock, flags);
	if (state == MYRI_STATE_DOWN || state == MYRI_STATE_DEAD)
		return sysfs_emit(buf, "%s: %s\n", myri_state_names[state],
				  reason);
	return sysfs_emit(buf, "%s\n", myri_state_names[state]);
}
static DEVICE_ATTR_RO(state);

static ssize_t halt_reason_show(struct device *d,
				struct device_attribute *attr, char *buf)
{
	struct myri_dev *dev = myri_from_dev(d);
	char death[MYRI_REASON_MAX];
	unsigned long flags;

	spin_lock_irqsave(&dev->state_lock, flags);
	strscpy(death, dev->death, sizeof(death));
	spin_unlock_irqrestore(&dev->state_lock, flags);
	return sysfs_emit(buf, "%s\n", death);
}
static DEVICE_ATTR_RO(halt_reason);

/* A firmware name for request_firmware(): a relative path, no "..". */
static int myri_fw_name(const char *buf, size_t count, char *name)
{
	size_t len = count, i;

	while (len && isspace(buf[len - 1]))
		len--;
	if (!len || len >= MYRI_FW_NAME_MAX || buf[0] == '/' ||
	    strnstr(buf, "..", len))
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!isalnum(buf[i]) && !strchr("._-/+", buf[i]))
			return -EINVAL;
	memcpy(name, buf, len);
	name[len] = 0;
	return 0;
}

static ssize_t fw_show(struct device *d, struct device_attribute *attr,
		       char *buf)
{
	struct myri_dev *dev = myri_from_dev(d);
	ssize_t ret;

	mutex_lock(&dev->lock);
	ret = sysfs_emit(buf, "%s\n", dev->fw_name);
	mutex_unlock(&dev->lock);
	return ret;
}

static ssize_t fw_store(struct device *d, struct device_attribute *attr,
			const char *buf, size_t count)
{
	struct myri_dev *dev = myri_from_dev(d);
	char name[MYRI_FW_NAME_MAX];
	int ret;

	ret = myri_fw_name(buf, count, name);
	if (ret)
		return ret;
	mutex_lock(&dev->lock);
	strscpy(dev->fw_name, name, sizeof(dev->fw_name));
	mutex_unlock(&dev->lock);
	return count;
}
static DEVICE_ATTR_RW(fw);

/* Also while contexts are open: they are lost, see myri_load(). */
static ssize_t reset_store(struct device *d, struct device_attribute *attr,
			   const char *buf, size_t count)
{
	struct myri_dev *dev = myri_from_dev(d);
	char name[MYRI_FW_NAME_MAX];
	bool keep;
	int ret;

	keep = sysfs_streq(buf, "1");
	if (!keep) {
		ret = myri_fw_name(buf, count, name);
		if (ret)
			return ret;
	}
	mutex_lock(&dev->lock);
	if (!keep)
		strscpy(dev->fw_name, name, sizeof(dev->fw_name));
	myri_count(dev, MYRI_CNT_RESETS);
	dev_info(d, "reset from sysfs: loading %s\n", dev->fw_name);
	ret = myri_load(dev);
	mutex_unlock(&dev->lock);
	return ret ? ret : count;
}
static DEVICE_ATTR_WO(reset);

static ssize_t routes_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	struct myri_dev *dev = myri_from_dev(d);
	const struct mcp_route *r;
	ssize_t len = 0;
	unsigned int n;

	mutex_lock(&dev->lock);
	for (n = 0; n < MCP_MAX_NODES; n++) {
		r = &dev->routes[n];
		if (r->len)
			len += sysfs_emit_at(buf, len, "%u %*phN\n", n, r->len,
					     r->bytes);
	}
	mutex_unlock(&dev->lock);
	return len;
}

static ssize_t routes_store(struct device *d, struct device_attribute *attr,
			    const char *buf, size_t count)
{
	int ret = myri_routes_parse(myri_from_dev(d), buf, count);

	return ret ? ret : count;
}
static DEVICE_ATTR_RW(routes);

static ssize_t node_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(myri_from_dev(d)->node));
}
static DEVICE_ATTR_RO(node);

static ssize_t nodes_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct myri_dev *dev = myri_from_dev(d);
	u32 nodes;

	mutex_lock(&dev->lock);
	nodes = dev->nodes;
	mutex_unlock(&dev->lock);
	return sysfs_emit(buf, "%u\n", nodes);
}
static DEVICE_ATTR_RO(nodes);

/* The processes that have the device open, one PID per line. */
static ssize_t openers_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	struct myri_dev *dev = myri_from_dev(d);
	ssize_t len;

	mutex_lock(&dev->lock);
	len = nic_openers_show(&dev->files, buf);
	mutex_unlock(&dev->lock);
	return len;
}
static DEVICE_ATTR_RO(openers);

/* One line per open context: its number, users and sizes. */
static ssize_t contexts_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	struct myri_dev *dev = myri_from_dev(d);
	const struct myri_ctx *c;
	ssize_t len = 0;
	unsigned int i;

	mutex_lock(&dev->lock);
	for (i = 0; i < MCP_MAX_CTX; i++) {
		c = dev->ctx[i];
		if (!c)
			continue;
		len += sysfs_emit_at(buf, len,
				     "%u users %u excl %u shared %u slots %u x %u sram 0x%x ring %u events %u\n",
				     i, c->users, c->n_excl, c->n_shared,
				     c->nslots, c->slot_size, c->send_off,
				     c->ring_size, c->nev);
	}
	mutex_unlock(&dev->lock);
	return len;
}
static DEVICE_ATTR_RO(contexts);

static struct attribute *myri_attrs[] = {
	&dev_attr_state.attr,
	&dev_attr_halt_reason.attr,
	&dev_attr_fw.attr,
	&dev_attr_reset.attr,
	&dev_attr_routes.attr,
	&dev_attr_node.attr,
	&dev_attr_nodes.attr,
	&dev_attr_openers.attr,
	&dev_attr_contexts.attr,
	NULL,
};

static const struct attribute_group myri_group = {
	.attrs = myri_attrs,
};

/* ---- counters/ ---- */

enum myri_cnt_kind {
	MYRI_KIND_MCP,		/* mcp_global.counters[index], SRAM */
	MYRI_KIND_CARD,		/* the LANAI_CNT_* register at index */
	MYRI_KIND_DRV,		/* the driver's counter index */
};

struct myri_cnt_attr {
	struct device_attribute attr;
	enum myri_cnt_kind kind;
	unsigned int index;
};

static ssize_t myri_cnt_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	struct myri_cnt_attr *ca = container_of(attr, struct myri_cnt_attr,
						attr);
	struct myri_dev *dev = myri_from_dev(d);
	u64 v;

	if (ca->kind == MYRI_KIND_DRV)
		return sysfs_emit(buf, "%llu\n", myri_counter(dev, ca->index));
	down_read(&dev->io_lock);
	if (dev->gone) {
		up_read(&dev->io_lock);
		return -ENODEV;
	}
	if (ca->kind == MYRI_KIND_MCP)
		v = myri_sram_rd(dev, MYRI_G(counters) + 4 * ca->index);
	else
		v = myri_cfg_rd(dev, ca->index);
	up_read(&dev->io_lock);
	return sysfs_emit(buf, "%llu\n", v);
}

#define MYRI_CNT(_name, _kind, _index)					\
	{								\
		.attr = __ATTR(_name, 0444, myri_cnt_show, NULL),	\
		.kind = _kind,						\
		.index = _index,					\
	}
/* every MCP counter, by the names the firmware gives them */
#define MYRI_MCP_CNT(name)	MYRI_CNT(name, MYRI_KIND_MCP, MCP_CNT_##name),

static struct myri_cnt_attr myri_counters[] = {
	MCP_COUNTER_LIST(MYRI_MCP_CNT)
	MYRI_CNT(tx_packets, MYRI_KIND_CARD, LANAI_CNT_TX_PACKETS),
	MYRI_CNT(rx_packets, MYRI_KIND_CARD, LANAI_CNT_RX_PACKETS),
	MYRI_CNT(rx_crc, MYRI_KIND_CARD, LANAI_CNT_RX_CRC),
	MYRI_CNT(rx_len, MYRI_KIND_CARD, LANAI_CNT_RX_LEN),
	MYRI_CNT(rx_illegal, MYRI_KIND_CARD, LANAI_CNT_RX_ILLEGAL),
	MYRI_CNT(rx_in_reset, MYRI_KIND_CARD, LANAI_CNT_RX_IN_RESET),
	MYRI_CNT(rx_full, MYRI_KIND_CARD, LANAI_CNT_RX_FULL),
	MYRI_CNT(tx_discarded, MYRI_KIND_CARD, LANAI_CNT_TX_DISCARDED),
	MYRI_CNT(dma_err, MYRI_KIND_CARD, LANAI_CNT_DMA_ERR),
	MYRI_CNT(db_dropped, MYRI_KIND_CARD, LANAI_CNT_DB_DROPPED),
	MYRI_CNT(lag_drops, MYRI_KIND_CARD, LANAI_CNT_LAG_DROPS),
	MYRI_CNT(rx_queued, MYRI_KIND_CARD, LANAI_CNT_RX_QUEUED),
	MYRI_CNT(interrupts, MYRI_KIND_DRV, MYRI_CNT_INTERRUPTS),
	MYRI_CNT(irq_host_sig, MYRI_KIND_DRV, MYRI_CNT_IRQ_HOST_SIG),
	MYRI_CNT(irq_halt, MYRI_KIND_DRV, MYRI_CNT_IRQ_HALT),
	MYRI_CNT(loads, MYRI_KIND_DRV, MYRI_CNT_LOADS),
	MYRI_CNT(load_errors, MYRI_KIND_DRV, MYRI_CNT_LOAD_ERRORS),
	MYRI_CNT(deaths, MYRI_KIND_DRV, MYRI_CNT_DEATHS),
	MYRI_CNT(commands, MYRI_KIND_DRV, MYRI_CNT_COMMANDS),
	MYRI_CNT(opens, MYRI_KIND_DRV, MYRI_CNT_OPENS),
	MYRI_CNT(ctx_opens, MYRI_KIND_DRV, MYRI_CNT_CTX_OPENS),
	MYRI_CNT(ctx_closes, MYRI_KIND_DRV, MYRI_CNT_CTX_CLOSES),
	MYRI_CNT(waits, MYRI_KIND_DRV, MYRI_CNT_WAITS),
	MYRI_CNT(resets, MYRI_KIND_DRV, MYRI_CNT_RESETS),
};

/* filled by myri_sysfs_init() before the driver registers */
static struct attribute *myri_counter_attrs[ARRAY_SIZE(myri_counters) + 1];

static const struct attribute_group myri_counter_group = {
	.name = "counters",
	.attrs = myri_counter_attrs,
};

const struct attribute_group *myri_groups[] = {
	&myri_group,
	&myri_counter_group,
	NULL,
};

void myri_sysfs_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(myri_counters); i++)
		myri_counter_attrs[i] = &myri_counters[i].attr.attr;
}
