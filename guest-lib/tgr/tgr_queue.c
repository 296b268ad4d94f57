/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libtgr: REQ queues (tgr.h). The receiver's side maps the queue region
 * (hardware buffer, control page, overflow buffers) and dequeues with the
 * protocol of tgr_qlogic.h; a sender imports the queue with the REQ right
 * and enqueues with one store to its shadow address.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tgr_int.h"
#include "vcluster/tgr_qlogic.h"

struct tgr_q {
	struct tgr_obj obj;
	tgr_t *t;
	struct tgr_req_create rc;
	uint8_t *region;
	struct tgr_ql_layout lay;
	struct tgr_ql ql;
	struct tgr_ql_ctrl *ctrl;
};

struct tgr_rq {
	struct tgr_obj obj;
	tgr_t *t;
	struct tgr_import imp;
	volatile uint32_t *req;	/* the REQ shadow of the queue's first page */
};

static void *region_map(void *opaque, __u32 off, __u32 bytes)
{
	tgr_q_t *q = opaque;

	if (off > q->lay.region_bytes || bytes > q->lay.region_bytes - off)
		return NULL;
	return q->region + off;
}

static void q_release(struct tgr_obj *o)
{
	tgr_q_t *q = (tgr_q_t *)o;
	struct tgr_id id = { .id = q->rc.qid };

	tgr_obj_del(q->t, o);
	munmap(q->region, q->rc.region_bytes);
	tgr_ioctl(q->t, TGR_IOC_REQ_DESTROY, &id);
	free(q);
}

/* The driver's region must be the one tgr_qlogic.h describes. */
static int q_check_layout(tgr_q_t *q)
{
	const struct tgr_req_create *rc = &q->rc;

	if (tgr_ql_layout_from_ctrl(&q->lay, q->ctrl))
		return -EPROTO;
	if (rc->hw_off != 0 || rc->ctrl_off != q->lay.ctrl_off ||
	    rc->pool_off != q->lay.pool_off ||
	    rc->copy_bytes != q->lay.copy_bytes ||
	    rc->region_bytes != q->lay.region_bytes ||
	    q->lay.hw_bytes != rc->bytes)
		return -EPROTO;
	return 0;
}

int tgr_q_create(tgr_t *t, uint32_t bytes, uint32_t copies, tgr_q_t **out)
{
	struct tgr_ql_layout probe;
	tgr_q_t *q;
	int err;

	*out = NULL;
	if (tgr_ql_layout_init(&probe, bytes, copies ? copies : 1) ||
	    copies > TGR_REQ_MAX_COPIES)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->t = t;
	q->rc.bytes = bytes;
	q->rc.copies = copies;
	err = tgr_ioctl(t, TGR_IOC_REQ_CREATE, &q->rc);
	if (err) {
		free(q);
		return err;
	}
	q->region = tgr_map(t, q->rc.cookie, q->rc.region_bytes,
			    PROT_READ | PROT_WRITE, &err);
	if (!q->region)
		goto fail;
	/* the control page is mapped now; its layout words are the kernel's */
	if (q->rc.ctrl_off > q->rc.region_bytes ||
	    q->rc.region_bytes - q->rc.ctrl_off < sizeof(struct tgr_ql_ctrl)) {
		err = -EPROTO;
		goto fail_unmap;
	}
	q->ctrl = (struct tgr_ql_ctrl *)(q->region + q->rc.ctrl_off);
	err = q_check_layout(q);
	if (err)
		goto fail_unmap;
	q->ql.lay = &q->lay;
	q->ql.map = region_map;
	q->ql.opaque = q;
	tgr_obj_add(t, &q->obj, q_release);
	*out = q;
	return 0;

fail_unmap:
	munmap(q->region, q->rc.region_bytes);
fail:
	{
		struct tgr_id id = { .id = q->rc.qid };

		tgr_ioctl(t, TGR_IOC_REQ_DESTROY, &id);
	}
	free(q);
	return err;
}

uint32_t tgr_q_segid(const tgr_q_t *q)
{
	return q->rc.segid;
}

void tgr_q_destroy(tgr_q_t *q)
{
	if (q)
		q_release(&q->obj);
}

/* RELINK, called by tgr_ql_user_deq() with the queue's lock held. */
static int q_relink(void *opaque)
{
	tgr_q_t *q = opaque;
	struct tgr_req_relink rl = { .qid = q->rc.qid };

	return tgr_ioctl(q->t, TGR_IOC_REQ_RELINK, &rl);
}

int tgr_deq(tgr_q_t *q, uint32_t *item)
{
	__u32 v = 0;
	int ret = tgr_ql_user_deq(&q->ql, (__u32)gettid(), &v, q_relink, q);

	if (ret == 1)
		*item = v;
	return ret;
}

void tgr_q_stats(const tgr_q_t *q, struct tgr_q_stats *st)
{
	const struct tgr_ql_ctrl *c = q->ctrl;

	st->overflows = __atomic_load_n(&c->ovf_count, __ATOMIC_RELAXED);
	st->deferred = __atomic_load_n(&c->deferred, __ATOMIC_RELAXED);
	st->nofree = __atomic_load_n(&c->nofree, __ATOMIC_RELAXED);
	st->relinks = __atomic_load_n(&c->relinks, __ATOMIC_RELAXED);
	st->lost = __atomic_load_n(&c->lost, __ATOMIC_RELAXED);
	st->full = __atomic_load_n(&c->full, __ATOMIC_RELAXED);
}

/* ---- the sender's side ------------------------------------------------ */

static void rq_release(struct tgr_obj *o)
{
	tgr_rq_t *rq = (tgr_rq_t *)o;
	struct tgr_id id = { .id = rq->imp.iid };

	tgr_obj_del(rq->t, o);
	munmap((void *)rq->req, TGR_PAGE_SIZE);
	tgr_ioctl(rq->t, TGR_IOC_UNIMPORT, &id);
	free(rq);
}

int tgr_q_open_remote(tgr_t *t, unsigned int node, uint32_t segid,
		      tgr_rq_t **out)
{
	tgr_rq_t *rq;
	int err;

	*out = NULL;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	rq->t = t;
	rq->imp.node = node;
	rq->imp.segid = segid;
	rq->imp.rights = TGR_R_REQ;
	err = tgr_ioctl(t, TGR_IOC_IMPORT, &rq->imp);
	if (err) {
		free(rq);
		return err;
	}
	if (!(rq->imp.granted & TGR_R_REQ) || !rq->imp.op_cookie[TGR_OP_REQ]) {
		err = -EACCES;
		goto fail;
	}
	/* the REQ target is the first word of the queue's first page */
	rq->req = tgr_map(t, rq->imp.op_cookie[TGR_OP_REQ], TGR_PAGE_SIZE,
			  PROT_WRITE, &err);
	if (!rq->req)
		goto fail;
	tgr_obj_add(t, &rq->obj, rq_release);
	*out = rq;
	return 0;

fail:
	{
		struct tgr_id id = { .id = rq->imp.iid };

		tgr_ioctl(t, TGR_IOC_UNIMPORT, &id);
	}
	free(rq);
	return err;
}

void tgr_q_close_remote(tgr_rq_t *rq)
{
	if (rq)
		rq_release(&rq->obj);
}

void tgr_enq(tgr_rq_t *rq, uint32_t item)
{
	*rq->req = item;	/* the remote enqueue: one 32-bit store */
}
