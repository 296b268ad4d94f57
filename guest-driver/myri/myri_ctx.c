// SPDX-License-Identifier: GPL-2.0
/*
 * Myrinet card driver: the MCP's contexts and the mailbox.
 *
 * A context is the MCP's endpoint for one process (or, context 0, for
 * every ports process of the node): a send area of SRAM pages (the user
 * page, then the send slots), a doorbell page and a receive region in
 * host memory that the MCP writes events and payloads to. The driver
 * allocates them, tells the MCP (MCP_CMD_OPEN_CTX) and maps them into the
 * processes; the data path then runs without the driver. When the last
 * file goes, MCP_CMD_CLOSE_CTX, and only after its ack (or with the core
 * stopped) is the receive region freed.
 */

#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "myri.h"

#define MYRI_RING_KB_MIN	16	/* two payloads of MCP_MAX_PAYLOAD */
#define MYRI_RING_KB_MAX	2048	/* + events: an order-10 allocation */
#define MYRI_NEV_MIN		16
#define MYRI_NEV_MAX		65536
#define MYRI_MMAP_WINDOW	(MYRI_MMAP_CTX(1) - MYRI_MMAP_CTX(0))

/* ---- mailbox ---- */

/*
 * Run one mailbox command: fill cmd and cmd_arg, bump cmd_seq, kick the
 * core with LANAI_SIG, wait until cmd_done catches up. Returns the MCP's
 * cmd_status (0 or a MYRI_ERR_*), or -EIO when the MCP is dead or dies
 * meanwhile (a command that takes cmd_timeout_ms kills it).
 *
 * Caller holds dev->lock and io_lock (read), and the card is not gone.
 */
static int myri_cmd(struct myri_dev *dev, u32 cmd, u32 arg)
{
	unsigned int ms = READ_ONCE(myri_param_cmd_timeout_ms);
	unsigned long deadline;
	unsigned int i;
	u32 seq;

	lockdep_assert_held(&dev->lock);
	if (myri_state(dev) != MYRI_STATE_UP)
		return -EIO;
	seq = dev->cmd_seq + 1;
	myri_sram_wr(dev, MYRI_G(cmd), cmd);
	myri_sram_wr(dev, MYRI_G(cmd_arg), arg);
	wmb();	/* the command before its sequence number */
	myri_sram_wr(dev, MYRI_G(cmd_seq), seq);
	wmb();	/* all of it in SRAM (WC) before the kick */
	myri_reg_wr(dev, LANAI_REG_ISR, LANAI_ISR_LANAI_SIG);
	dev->cmd_seq = seq;
	myri_count(dev, MYRI_CNT_COMMANDS);

	deadline = jiffies + msecs_to_jiffies(ms);
	for (i = 0; myri_sram_rd(dev, MYRI_G(cmd_done)) != seq; i++) {
		if (myri_state(dev) != MYRI_STATE_UP)
			return -EIO;
		if (time_after(jiffies, deadline)) {
			myri_die(dev, true,
				 "MCP did not answer mailbox command %u (arg %u) in %u ms",
				 cmd, arg, ms);
			return -EIO;
		}
		/* the MCP answers within microseconds unless it is busy */
		if (i < 100)
			usleep_range(10, 20);
		else
			usleep_range(500, 1000);
	}
	rmb();	/* cmd_status was written before cmd_done */
	return myri_sram_rd(dev, MYRI_G(cmd_status));
}

/* ---- creating and destroying contexts ---- */

static void myri_ctx_tx_timer(struct timer_list *t)
{
	struct myri_ctx *ctx = from_timer(ctx, t, tx_timer);

	wake_up_interruptible_all(&ctx->dev->wq);
}

static u32 myri_pow2_param(unsigned int v, u32 fallback)
{
	return v && is_power_of_2(v) && v <= MYRI_SLOTS_MAX ? v : fallback;
}

/* Sizes of a new context from the request and the module parameters. */
static int myri_ctx_layout(struct myri_ctx *ctx,
			   const struct myri_ctx_open *req)
{
	bool hal = ctx->index == MCP_HAL_CTX;
	u32 payload = req->max_payload ? req->max_payload : MCP_MAX_PAYLOAD;
	u32 ring_kb = req->ring_kb;
	u32 nev = req->nev;

	if (payload > MCP_MAX_PAYLOAD)
		return -EINVAL;
	if (req->nslots && (!is_power_of_2(req->nslots) ||
			    req->nslots > MYRI_SLOTS_MAX))
		return -EINVAL;
	if (!ring_kb) {
		ring_kb = hal ? READ_ONCE(myri_param_hal_ring_kb) :
				READ_ONCE(myri_param_raw_ring_kb);
		if (!is_power_of_2(ring_kb))
			ring_kb = 256;
		ring_kb = clamp_t(u32, ring_kb, MYRI_RING_KB_MIN,
				  MYRI_RING_KB_MAX);
	}
	if (!is_power_of_2(ring_kb) || ring_kb < MYRI_RING_KB_MIN ||
	    ring_kb > MYRI_RING_KB_MAX)
		return -EINVAL;
	/* on average one event per 512 bytes of ring */
	if (!nev)
		nev = clamp_t(u32, ring_kb * 2, 64, 8192);
	if (!is_power_of_2(nev) || nev < MYRI_NEV_MIN || nev > MYRI_NEV_MAX)
		return -EINVAL;

	ctx->slot_size = ALIGN(MYRI_SLOT_HDR + payload, 64);
	ctx->nev = nev;
	ctx->ring_size = ring_kb * 1024;
	ctx->rx_size = nev * sizeof(struct myri_event) + ctx->ring_size;
	ctx->rx_alloc = PAGE_ALIGN(ctx->rx_size);
	return 0;
}

/*
 * The send area: page aligned, from the context area's free pages. The
 * default number of slots halves while SRAM is short; an explicit one
 * must fit. Caller holds dev->lock.
 */
static int myri_sram_alloc(struct myri_dev *dev, struct myri_ctx *ctx,
			   u32 want)
{
	bool hal = ctx->index == MCP_HAL_CTX;
	u32 nslots = want;
	unsigned long start;
	unsigned int pages;

	if (!nslots)
		nslots = myri_pow2_param(hal ? READ_ONCE(myri_param_hal_slots) :
					 READ_ONCE(myri_param_raw_slots), 8);
	for (;;) {
		ctx->send_size = PAGE_ALIGN(MYRI_CTX_USER_SIZE +
					    nslots * ctx->slot_size);
		pages = ctx->send_size >> PAGE_SHIFT;
		start = bitmap_find_next_zero_area(dev->sram_map,
						   dev->sram_pages, 0, pages, 0);
		if (start < dev->sram_pages)
			break;
		if (want || nslots <= 2)
			return -ENOSPC;
		nslots /= 2;
	}
	bitmap_set(dev->sram_map, start, pages);
	ctx->send_off = MCP_CTX_AREA_OFF + (start << PAGE_SHIFT);
	ctx->nslots = nslots;
	ctx->sram_held = true;
	return 0;
}

static void myri_sram_free(struct myri_dev *dev, struct myri_ctx *ctx)
{
	if (!ctx->sram_held)
		return;
	bitmap_clear(dev->sram_map,
		     (ctx->send_off - MCP_CTX_AREA_OFF) >> PAGE_SHIFT,
		     ctx->send_size >> PAGE_SHIFT);
	ctx->sram_held = false;
}

/* Only once the MCP no longer writes the receive region. */
static void myri_ctx_free(struct myri_ctx *ctx)
{
	del_timer_sync(&ctx->tx_timer);
	if (ctx->rx_cpu)
		dma_free_coherent(&ctx->dev->pdev->dev, ctx->rx_alloc,
				  ctx->rx_cpu, ctx->rx_dma);
	kfree(ctx);
}

/* Describe the context to the MCP and open it. io_lock held. */
static int myri_ctx_program(struct myri_dev *dev, struct myri_ctx *ctx)
{
	unsigned int i = ctx->index;
	int st;

	/* user page and slots zero: every slot FREE, nothing consumed */
	memset_io(dev->sram + ctx->send_off, 0, ctx->send_size);
	myri_sram_wr(dev, MYRI_GCTX(i, send_off), ctx->send_off);
	myri_sram_wr(dev, MYRI_GCTX(i, nslots), ctx->nslots);
	myri_sram_wr(dev, MYRI_GCTX(i, slot_size), ctx->slot_size);
	myri_sram_wr(dev, MYRI_GCTX(i, rx_bus_lo), lower_32_bits(ctx->rx_dma));
	myri_sram_wr(dev, MYRI_GCTX(i, rx_bus_hi), upper_32_bits(ctx->rx_dma));
	myri_sram_wr(dev, MYRI_GCTX(i, rx_size), ctx->rx_size);
	myri_sram_wr(dev, MYRI_GCTX(i, nev), ctx->nev);
	myri_sram_wr(dev, MYRI_GCTX(i, irq), 0);

	st = myri_cmd(dev, MCP_CMD_OPEN_CTX, i);
	if (st > 0) {
		dev_warn(&dev->pdev->dev, "MCP refused to open context %u: error %d\n",
			 i, st);
		return -EIO;
	}
	return st;
}

static struct myri_ctx *myri_ctx_create(struct myri_dev *dev, unsigned int idx,
					const struct myri_ctx_open *req)
{
	struct myri_ctx *ctx;
	int ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->dev = dev;
	ctx->index = idx;
	INIT_LIST_HEAD(&ctx->files);
	spin_lock_init(&ctx->irq_lock);
	timer_setup(&ctx->tx_timer, myri_ctx_tx_timer, 0);

	ret = myri_ctx_layout(ctx, req);
	if (ret)
		goto err_free;
	ret = myri_sram_alloc(dev, ctx, req->nslots);
	if (ret)
		goto err_free;
	/* zeroed by the DMA API */
	ctx->rx_cpu = dma_alloc_coherent(&dev->pdev->dev, ctx->rx_alloc,
					 &ctx->rx_dma, GFP_KERNEL);
	if (!ctx->rx_cpu) {
		ret = -ENOMEM;
		goto err_sram;
	}

	down_read(&dev->io_lock);
	ret = dev->gone ? -ENODEV : myri_ctx_program(dev, ctx);
	up_read(&dev->io_lock);
	/*
	 * On an error the MCP does not use the context: it refused, or it
	 * is dead and its core stopped (myri_cmd).
	 */
	if (ret)
		goto err_sram;
	myri_count(dev, MYRI_CNT_CTX_OPENS);
	return ctx;

err_sram:
	myri_sram_free(dev, ctx);
err_free:
	myri_ctx_free(ctx);
	return ERR_PTR(ret);
}

/*
 * The last file of a context went away. A live MCP closes it first and
 * acks; a dead one has its core stopped already (halted or in reset), a
 * stale context's memory the new MCP never knew. Caller holds dev->lock.
 */
static void myri_ctx_destroy(struct myri_ctx *ctx)
{
	struct myri_dev *dev = ctx->dev;
	unsigned int i = ctx->index;
	int st;

	if (!ctx->stale) {
		down_read(&dev->io_lock);
		if (!dev->gone && myri_state(dev) == MYRI_STATE_UP) {
			st = myri_cmd(dev, MCP_CMD_CLOSE_CTX, i);
			if (st > 0 &&
			    myri_sram_rd(dev, MYRI_GCTX(i, state)) != MCP_CTX_CLOSED)
				myri_die(dev, true,
					 "MCP refused to close context %u (error %d); core stopped",
					 i, st);
		}
		myri_sram_free(dev, ctx);
		up_read(&dev->io_lock);
		if (dev->ctx[i] == ctx)
			dev->ctx[i] = NULL;
	}
	myri_count(dev, MYRI_CNT_CTX_CLOSES);
	myri_ctx_free(ctx);
}

/*
 * After myri_stop(): the core is in reset and the contexts stale. Their
 * SRAM goes back to the pool, so revoke every mapping of their windows
 * first (a later access gets SIGBUS). Receive regions stay until the
 * files close. Caller holds dev->lock.
 */
static void myri_ctx_detach_all(struct myri_dev *dev)
{
	struct myri_file *mf;
	struct myri_ctx *ctx;
	unsigned int i;

	lockdep_assert_held(&dev->lock);
	for (i = 0; i < MCP_MAX_CTX; i++) {
		ctx = dev->ctx[i];
		if (!ctx)
			continue;
		list_for_each_entry(mf, &ctx->files, ctx_node)
			unmap_mapping_range(mf->file->f_mapping,
					    MYRI_MMAP_CTX(i), MYRI_MMAP_WINDOW,
					    1);
		myri_sram_free(dev, ctx);
		dev->ctx[i] = NULL;
		/* a pinned HAL context without users: no file frees it */
		if (!ctx->users) {
			myri_count(dev, MYRI_CNT_CTX_CLOSES);
			myri_ctx_free(ctx);
		}
	}
}

/*
 * Open MCP_HAL_CTX for good after a load: packets for the node's HAL
 * then wait in its receive ring for the next user, and when that fills
 * the MCP holds the senders back (capacity NACKs), as ps1's RX FIFO and
 * the network did. Caller holds dev->lock.
 */
static void myri_ctx_hal_open(struct myri_dev *dev)
{
	struct myri_ctx_open defaults = { };
	struct myri_ctx *ctx;

	if (dev->ctx[MCP_HAL_CTX])
		return;
	ctx = myri_ctx_create(dev, MCP_HAL_CTX, &defaults);
	if (IS_ERR(ctx)) {
		dev_warn(&dev->pdev->dev, "cannot open the HAL context: %ld; it opens with its first user\n",
			 PTR_ERR(ctx));
		return;
	}
	ctx->pinned = true;
	dev->ctx[MCP_HAL_CTX] = ctx;
}

const struct myri_ctx_ops myri_ctx_ops = {
	.card_stopped = myri_ctx_detach_all,
	.card_up = myri_ctx_hal_open,
};

/*
 * The last user of the pinned HAL context left: what it did not read is
 * no news to the next one (ps1 resets its FIFO then), so skip it; sends
 * still in flight go on. io_lock held, the context live, no users.
 */
static void myri_ctx_hal_drain(struct myri_ctx *ctx)
{
	const struct myri_event *ev = ctx->rx_cpu;
	struct myri_dev *dev = ctx->dev;
	u32 cons, prod, n, e;

	myri_sram_wr(dev, MYRI_USER(ctx, want_notify), 0);
	myri_sram_wr(dev, MYRI_USER(ctx, err), 0);
	prod = myri_sram_rd(dev, MYRI_USER(ctx, ev_prod));
	cons = myri_sram_rd(dev, MYRI_USER(ctx, ev_cons));
	rmb();	/* ev_prod before the events it counts */
	n = prod - cons;
	if (!n)
		return;
	/* a user may have scribbled ev_cons: at most one ring is unread */
	if (n > ctx->nev)
		n = ctx->nev;
	/* the last payload's end frees the data ring up to it */
	for (e = prod - 1; e != prod - 1 - n; e--) {
		const struct myri_event *x = &ev[e & (ctx->nev - 1)];

		if (READ_ONCE(x->type) == MYRI_EV_RX) {
			myri_sram_wr(dev, MYRI_USER(ctx, rx_cons),
				     READ_ONCE(x->pos) +
				     ALIGN(READ_ONCE(x->len), MYRI_RX_ALIGN));
			break;
		}
	}
	myri_sram_wr(dev, MYRI_USER(ctx, ev_cons), prod);
	dev_dbg(&dev->pdev->dev, "last HAL user left %u event(s) unread\n", n);
}

/* ---- opening and closing a file's context ---- */

/* Make sure an MCP runs; maybe reload a dead one. dev->lock held. */
static int myri_ctx_card_ready(struct myri_dev *dev)
{
	u32 state = myri_state(dev);

	/* at most one automatic load a second: a bad image stays bad */
	if ((state == MYRI_STATE_DEAD || state == MYRI_STATE_DOWN) &&
	    READ_ONCE(myri_param_auto_reload) &&
	    time_after(jiffies, dev->load_jiffies + HZ)) {
		dev_info(&dev->pdev->dev, "MCP %s: reloading for a new context\n",
			 state == MYRI_STATE_DEAD ? "dead" : "down");
		myri_load(dev);
		state = myri_state(dev);
	}
	switch (state) {
	case MYRI_STATE_UP:
		return 0;
	case MYRI_STATE_REMOVED:
		return -ENODEV;
	case MYRI_STATE_DOWN:
		if (dev->down_err == -ENOLINK || dev->down_err == -ECONNREFUSED)
			return -ENETDOWN;
		return -EIO;
	default:
		return -EIO;
	}
}

static int myri_ctx_pick(struct myri_dev *dev, u32 want)
{
	unsigned int i;

	if (want != MYRI_CTX_ANY)
		return want;
	for (i = 0; i < MCP_MAX_CTX; i++)
		if (i != MCP_HAL_CTX && !dev->ctx[i])
			return i;
	return -ENOSPC;
}

int myri_ctx_open(struct myri_file *mf, struct myri_ctx_open *req)
{
	struct myri_dev *dev = mf->dev;
	struct myri_ctx *ctx;
	int idx, ret;

	if (hweight32(req->flags) != 1 ||
	    (req->flags & ~(MYRI_CTX_EXCL | MYRI_CTX_SHARED | MYRI_CTX_JOIN)) ||
	    req->in_reserved[0] || req->in_reserved[1])
		return -EINVAL;
	/* JOIN needs a context to join */
	if (req->ctx == MYRI_CTX_ANY && req->flags == MYRI_CTX_JOIN)
		return -EINVAL;
	if (req->ctx != MYRI_CTX_ANY && req->ctx >= MCP_MAX_CTX)
		return -EINVAL;

	mutex_lock(&dev->lock);
	if (mf->ctx) {
		ret = -EBUSY;
		goto out;
	}
	ret = myri_ctx_card_ready(dev);
	if (ret)
		goto out;
	idx = myri_ctx_pick(dev, req->ctx);
	if (idx < 0) {
		ret = idx;
		goto out;
	}
	ctx = dev->ctx[idx];
	if (ctx) {
		/* the HAL's rules: EXCL alone, SHARED with SHARED */
		if ((req->flags == MYRI_CTX_EXCL &&
		     (ctx->n_excl || ctx->n_shared)) ||
		    (req->flags == MYRI_CTX_SHARED && ctx->n_excl)) {
			ret = -EBUSY;
			goto out;
		}
	} else {
		ctx = myri_ctx_create(dev, idx, req);
		if (IS_ERR(ctx)) {
			ret = PTR_ERR(ctx);
			goto out;
		}
		ctx->pinned = idx == MCP_HAL_CTX;
		dev->ctx[idx] = ctx;
	}
	list_add_tail(&mf->ctx_node, &ctx->files);
	ctx->users++;
	if (req->flags == MYRI_CTX_EXCL)
		ctx->n_excl++;
	else if (req->flags == MYRI_CTX_SHARED)
		ctx->n_shared++;
	mf->mode = req->flags;
	/* mmap, poll and WAIT read it without the lock */
	smp_store_release(&mf->ctx, ctx);

	req->ctx = idx;
	req->nslots = ctx->nslots;
	req->max_payload = min_t(u32, ctx->slot_size - MYRI_SLOT_HDR,
				 MCP_MAX_PAYLOAD);
	req->ring_kb = ctx->ring_size / 1024;
	req->nev = ctx->nev;
	req->node = dev->node;
	req->nodes = dev->nodes;
	req->slot_size = ctx->slot_size;
	req->send_size = ctx->send_size;
	req->rx_size = ctx->rx_size;
	req->ring_off = ctx->nev * sizeof(struct myri_event);
	req->ring_size = ctx->ring_size;
	req->pool_size = dev->pool_size;
	req->users = ctx->users;
	req->mmap_send = MYRI_MMAP_SEND(idx);
	req->mmap_doorbell = MYRI_MMAP_DOORBELL(idx);
	req->mmap_rx = MYRI_MMAP_RX(idx);
	req->mmap_pool = MYRI_MMAP_POOL;
	ret = 0;
out:
	mutex_unlock(&dev->lock);
	return ret;
}

/* The file goes; the context with it if it was the last. dev->lock held. */
void myri_ctx_release(struct myri_file *mf)
{
	struct myri_ctx *ctx = mf->ctx;

	struct myri_dev *dev = mf->dev;

	lockdep_assert_held(&dev->lock);
	if (!ctx)
		return;
	list_del(&mf->ctx_node);
	if (mf->mode == MYRI_CTX_EXCL)
		ctx->n_excl--;
	else if (mf->mode == MYRI_CTX_SHARED)
		ctx->n_shared--;
	mf->ctx = NULL;
	if (mf->polled) {
		down_read(&dev->io_lock);
		spin_lock(&ctx->irq_lock);
		if (!--ctx->pollers && !ctx->kwaiters && !myri_ctx_live(ctx))
			myri_ctx_irq_write(ctx);
		spin_unlock(&ctx->irq_lock);
		up_read(&dev->io_lock);
	}
	if (--ctx->users)
		return;
	if (ctx->pinned && !ctx->stale) {
		down_read(&dev->io_lock);
		if (!myri_ctx_live(ctx))
			myri_ctx_hal_drain(ctx);
		up_read(&dev->io_lock);
		return;
	}
	myri_ctx_destroy(ctx);
}
