// SPDX-License-Identifier: GPL-2.0
/*
 * Telegraphos driver: sysfs, under the PCI device (also reachable as
 * /sys/class/misc/tgrN/device/).
 *
 *   node, nodes          this card's id, nodes in the fabric (0: link down)
 *   stopped              1 while a queue overflow holds the NI stopped
 *   exports              "segid first_eidx npages rights ctx" per segment
 *   imports              "iid node segid first_page npages rights ctx
 *                        stale" per import ("mcast" for groups)
 *   queues               "qid segid bytes overflows stopped ctx" per queue
 *   rread_timeout_us     (rw) remote read and atomic timeout
 *   driver_stats         overflows, relinks, resumes, sigbus, stopped_ms,
 *                        withdrawn
 *   counters/            the card's counters (TGR_CNT_*)
 */

#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/sysfs.h>

#include "tgr_drv.h"

static struct tgr_dev *tgr_from_dev(struct device *d)
{
	return pci_get_drvdata(to_pci_dev(d));
}

static ssize_t node_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%u\n", tgr_from_dev(d)->node);
}
static DEVICE_ATTR_RO(node);

static ssize_t nodes_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct tgr_dev *dev = tgr_from_dev(d);

	return sysfs_emit(buf, "%u\n", dev->gone ? 0 :
			  tgr_rd(dev, TGR_REG_NODES));
}
static DEVICE_ATTR_RO(nodes);

static ssize_t stopped_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	struct tgr_dev *dev = tgr_from_dev(d);

	return sysfs_emit(buf, "%u\n", dev->gone ? 0 :
			  !!(tgr_rd(dev, TGR_REG_CTRL) & TGR_STATUS_STOPPED));
}
static DEVICE_ATTR_RO(stopped);

static ssize_t rread_timeout_us_show(struct device *d,
				     struct device_attribute *attr, char *buf)
{
	struct tgr_dev *dev = tgr_from_dev(d);

	return sysfs_emit(buf, "%u\n", dev->gone ? 0 :
			  tgr_rd(dev, TGR_REG_RREAD_TIMEOUT_US));
}

static ssize_t rread_timeout_us_store(struct device *d,
				      struct device_attribute *attr,
				      const char *buf, size_t count)
{
	struct tgr_dev *dev = tgr_from_dev(d);
	u32 us;
	int ret;

	ret = kstrtou32(buf, 0, &us);
	if (ret)
		return ret;
	if (!us || us > 60 * USEC_PER_SEC)
		return -EINVAL;
	if (dev->gone)
		return -ENODEV;
	tgr_wr(dev, TGR_REG_RREAD_TIMEOUT_US, us);
	return count;
}
static DEVICE_ATTR_RW(rread_timeout_us);

static ssize_t exports_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	struct tgr_dev *dev = tgr_from_dev(d);
	struct tgr_seg *s;
	unsigned int i;
	int n = 0;

	mutex_lock(&dev->lock);
	for (i = 1; i < TGR_CTX_MAX; i++) {
		if (!dev->ctxs[i])
			continue;
		list_for_each_entry(s, &dev->ctxs[i]->segs, link)
			n += sysfs_emit_at(buf, n, "%u %u %u %#x %u\n",
					   s->segid, s->first_eidx, s->npages,
					   s->rights, i);
	}
	mutex_unlock(&dev->lock);
	return n;
}
static DEVICE_ATTR_RO(exports);

static ssize_t imports_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	struct tgr_dev *dev = tgr_from_dev(d);
	struct tgr_imp *imp;
	unsigned int i;
	int n = 0;

	mutex_lock(&dev->lock);
	for (i = 1; i < TGR_CTX_MAX; i++) {
		if (!dev->ctxs[i])
			continue;
		list_for_each_entry(imp, &dev->ctxs[i]->imports, link)
			n += sysfs_emit_at(buf, n, "%u %s%u %u %u %u %#x %u %s\n",
					   imp->iid, imp->mcast ? "group" : "",
					   imp->node, imp->segid,
					   imp->first_page, imp->npages,
					   imp->granted, i,
					   imp->stale ? "stale" : "ok");
	}
	mutex_unlock(&dev->lock);
	return n;
}
static DEVICE_ATTR_RO(imports);

static ssize_t queues_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	struct tgr_dev *dev = tgr_from_dev(d);
	struct tgr_queue *q;
	unsigned int i;
	int n = 0;

	mutex_lock(&dev->lock);
	for (i = 1; i < TGR_CTX_MAX; i++) {
		if (!dev->ctxs[i])
			continue;
		list_for_each_entry(q, &dev->ctxs[i]->queues, link)
			n += sysfs_emit_at(buf, n, "%u %u %u %llu %u %u\n",
					   q->qid, q->seg ? q->seg->segid : 0,
					   q->lay.hw_bytes, q->overflows,
					   q->stopped, i);
	}
	mutex_unlock(&dev->lock);
	return n;
}
static DEVICE_ATTR_RO(queues);

static ssize_t driver_stats_show(struct device *d,
				 struct device_attribute *attr, char *buf)
{
	struct tgr_dev *dev = tgr_from_dev(d);

	return sysfs_emit(buf, "overflows %llu\nrelinks %llu\nresumes %llu\nsigbus %llu\nstopped_ms %llu\nwithdrawn %llu\n",
			  dev->overflows, dev->relinks, dev->resumes,
			  dev->sigbus, dev->stopped_ms, dev->withdrawn);
}
static DEVICE_ATTR_RO(driver_stats);

static struct attribute *tgr_attrs[] = {
	&dev_attr_node.attr,
	&dev_attr_nodes.attr,
	&dev_attr_stopped.attr,
	&dev_attr_rread_timeout_us.attr,
	&dev_attr_exports.attr,
	&dev_attr_imports.attr,
	&dev_attr_queues.attr,
	&dev_attr_driver_stats.attr,
	NULL,
};

static const struct attribute_group tgr_group = {
	.attrs = tgr_attrs,
};

/* ---- counters/ ---- */

struct tgr_cnt_attr {
	struct device_attribute attr;
	unsigned int idx;
};

static ssize_t tgr_cnt_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	struct tgr_cnt_attr *ca = container_of(attr, struct tgr_cnt_attr, attr);

	return sysfs_emit(buf, "%llu\n", tgr_counter(tgr_from_dev(d), ca->idx));
}

#define TGR_CNT_ATTR(_name, _idx)					\
	static struct tgr_cnt_attr tgr_cnt_##_name = {			\
		.attr = __ATTR(_name, 0444, tgr_cnt_show, NULL),	\
		.idx = _idx,						\
	}

TGR_CNT_ATTR(tx_frames, TGR_CNT_TX_FRAMES);
TGR_CNT_ATTR(rx_frames, TGR_CNT_RX_FRAMES);
TGR_CNT_ATTR(writes, TGR_CNT_WRITES);
TGR_CNT_ATTR(reads, TGR_CNT_READS);
TGR_CNT_ATTR(atomics, TGR_CNT_ATOMICS);
TGR_CNT_ATTR(reqs, TGR_CNT_REQS);
TGR_CNT_ATTR(reqs_in, TGR_CNT_REQS_IN);
TGR_CNT_ATTR(req_ovf, TGR_CNT_REQ_OVF);
TGR_CNT_ATTR(held, TGR_CNT_HELD);
TGR_CNT_ATTR(viol_in, TGR_CNT_VIOL_IN);
TGR_CNT_ATTR(viol_out, TGR_CNT_VIOL_OUT);
TGR_CNT_ATTR(local_err, TGR_CNT_LOCAL_ERR);
TGR_CNT_ATTR(seq_gaps, TGR_CNT_SEQ_GAPS);
TGR_CNT_ATTR(rread_fail, TGR_CNT_RREAD_FAIL);
TGR_CNT_ATTR(stale_replies, TGR_CNT_STALE_REPLIES);
TGR_CNT_ATTR(tx_stalls, TGR_CNT_TX_STALLS);
TGR_CNT_ATTR(evq_lost, TGR_CNT_EVQ_LOST);
TGR_CNT_ATTR(cnt_zero, TGR_CNT_CNT_ZERO);
TGR_CNT_ATTR(mcast, TGR_CNT_MCAST);
TGR_CNT_ATTR(dma, TGR_CNT_DMA);

static struct attribute *tgr_cnt_attrs[] = {
	&tgr_cnt_tx_frames.attr.attr,
	&tgr_cnt_rx_frames.attr.attr,
	&tgr_cnt_writes.attr.attr,
	&tgr_cnt_reads.attr.attr,
	&tgr_cnt_atomics.attr.attr,
	&tgr_cnt_reqs.attr.attr,
	&tgr_cnt_reqs_in.attr.attr,
	&tgr_cnt_req_ovf.attr.attr,
	&tgr_cnt_held.attr.attr,
	&tgr_cnt_viol_in.attr.attr,
	&tgr_cnt_viol_out.attr.attr,
	&tgr_cnt_local_err.attr.attr,
	&tgr_cnt_seq_gaps.attr.attr,
	&tgr_cnt_rread_fail.attr.attr,
	&tgr_cnt_stale_replies.attr.attr,
	&tgr_cnt_tx_stalls.attr.attr,
	&tgr_cnt_evq_lost.attr.attr,
	&tgr_cnt_cnt_zero.attr.attr,
	&tgr_cnt_mcast.attr.attr,
	&tgr_cnt_dma.attr.attr,
	NULL,
};

static const struct attribute_group tgr_cnt_group = {
	.name = "counters",
	.attrs = tgr_cnt_attrs,
};

const struct attribute_group *tgr_groups[] = {
	&tgr_group,
	&tgr_cnt_group,
	NULL,
};
