// SPDX-License-Identifier: GPL-2.0
/*
 * Telegraphos driver: the registered threads (TGR_IOC_THREAD). The card's
 * CUR_CTX register follows the thread that runs on each vCPU, through a
 * preempt notifier per thread.
 *
 * This file is part of the core, with tgr_main.c, and the two call each
 * other on purpose: the interrupt asks here which thread runs on a vCPU
 * (tgr_cpu_task(), for a precise SIGBUS), and a thread's entry holds a
 * reference on its tgr_dev (tgr_dev_put()) so that its notifier may
 * write CUR_CTX until the thread is gone.
 */

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "tgr_drv.h"

static DEFINE_PER_CPU(struct tgr_thr *, tgr_cur);
static LIST_HEAD(tgr_threads);
static DEFINE_MUTEX(tgr_threads_lock);
static void tgr_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(tgr_reaper, tgr_reap_fn);

/* The context of the registered thread running on this CPU, else 0. */
u8 tgr_running_ctx(void)
{
	struct tgr_thr *t = this_cpu_read(tgr_cur);

	return t ? READ_ONCE(t->ctx) : 0;
}

/*
 * A detached thread (its file closed, ctx 0) changes nothing: CUR_CTX is
 * already 0 whenever no registered thread runs, and a newer registration
 * of the same task must win.
 */
static void tgr_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct tgr_thr *t = container_of(pn, struct tgr_thr, pn);
	u8 ctx = READ_ONCE(t->ctx);

	if (!ctx)
		return;
	this_cpu_write(tgr_cur, t);
	if (!READ_ONCE(t->dev->gone))
		tgr_wr(t->dev, TGR_REG_CUR_CTX, ctx);
}

/* The device clears this vCPU's argument latch: SHRIMP's invalidate. */
static void tgr_sched_out(struct preempt_notifier *pn,
			  struct task_struct *next)
{
	struct tgr_thr *t = container_of(pn, struct tgr_thr, pn);

	if (this_cpu_read(tgr_cur) != t)
		return;
	this_cpu_write(tgr_cur, NULL);
	if (!READ_ONCE(t->dev->gone))
		tgr_wr(t->dev, TGR_REG_CUR_CTX, 0);
}

static struct preempt_ops tgr_preempt_ops = {
	.sched_in = tgr_sched_in,
	.sched_out = tgr_sched_out,
};

/*
 * The registered thread of context @ctx running on @cpu, referenced, or
 * NULL. Interrupt context: an RCU reader, and threads are freed by RCU.
 */
struct task_struct *tgr_cpu_task(unsigned int cpu, u8 ctx)
{
	struct task_struct *task = NULL;
	struct tgr_thr *t;

	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return NULL;
	rcu_read_lock();
	t = READ_ONCE(per_cpu(tgr_cur, cpu));
	if (t && READ_ONCE(t->ctx) == ctx)
		task = get_task_struct(t->task);
	rcu_read_unlock();
	return task;
}

static void tgr_thread_free_rcu(struct rcu_head *rcu)
{
	struct tgr_thr *t = container_of(rcu, struct tgr_thr, rcu);

	put_task_struct(t->task);
	kfree(t);
}

static void tgr_thread_free(struct tgr_thr *t)
{
	list_del(&t->link);
	if (t->registered)
		preempt_notifier_dec();
	tgr_dev_put(t->dev);
	call_rcu(&t->rcu, tgr_thread_free_rcu);
	module_put(THIS_MODULE);
}

/* Only the thread itself may take its notifier off its list. */
static void tgr_thread_unregister_self(struct tgr_thr *t)
{
	preempt_disable();
	preempt_notifier_unregister(&t->pn);
	if (this_cpu_read(tgr_cur) == t) {
		this_cpu_write(tgr_cur, NULL);
		if (!READ_ONCE(t->dev->gone))
			tgr_wr(t->dev, TGR_REG_CUR_CTX, 0);
	}
	preempt_enable();
}

static void tgr_thread_twork(struct callback_head *cb)
{
	struct tgr_thr *t = container_of(cb, struct tgr_thr, twork);

	mutex_lock(&tgr_threads_lock);
	tgr_thread_unregister_self(t);
	tgr_thread_free(t);
	mutex_unlock(&tgr_threads_lock);
}

/* A task past its last schedule never calls its notifiers again. */
static bool tgr_task_gone(struct task_struct *task)
{
	bool dead = READ_ONCE(task->__state) == TASK_DEAD;

	smp_rmb();	/* __state before on_cpu */
	return dead && !READ_ONCE(task->on_cpu);
}

/* Frees the notifiers of tasks that died; with @wait until none is left. */
void tgr_threads_reap(bool wait)
{
	struct tgr_thr *t, *tmp;
	bool left;

	for (;;) {
		left = false;
		mutex_lock(&tgr_threads_lock);
		list_for_each_entry_safe(t, tmp, &tgr_threads, link) {
			/* orphans only: the others free themselves */
			if (t->ctx || t->twork.func)
				continue;
			if (tgr_task_gone(t->task))
				tgr_thread_free(t);
			else
				left = true;
		}
		mutex_unlock(&tgr_threads_lock);
		if (!wait || !left)
			break;
		msleep(20);
	}
	if (wait) {
		cancel_delayed_work_sync(&tgr_reaper);
		rcu_barrier();	/* tgr_thread_free_rcu() is module code */
	}
}

static void tgr_reap_fn(struct work_struct *work)
{
	bool left = false;
	struct tgr_thr *t;

	tgr_threads_reap(false);
	mutex_lock(&tgr_threads_lock);
	list_for_each_entry(t, &tgr_threads, link)
		left |= !t->ctx && !t->twork.func;
	mutex_unlock(&tgr_threads_lock);
	if (left)
		schedule_delayed_work(&tgr_reaper, HZ / 2);
}

int tgr_thread_register(struct tgr_ctx *ctx)
{
	struct tgr_thr *t;

	mutex_lock(&tgr_threads_lock);
	list_for_each_entry(t, &tgr_threads, link) {
		if (t->task != current || !t->ctx)
			continue;
		mutex_unlock(&tgr_threads_lock);
		return t->ctx == ctx->id && t->dev == ctx->dev ? 0 : -EBUSY;
	}
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		mutex_unlock(&tgr_threads_lock);
		return -ENOMEM;
	}
	__module_get(THIS_MODULE);
	kref_get(&ctx->dev->kref);
	t->dev = ctx->dev;
	t->task = get_task_struct(current);
	t->ctx = ctx->id;
	preempt_notifier_init(&t->pn, &tgr_preempt_ops);
	preempt_notifier_inc();
	t->registered = true;
	list_add(&t->link, &tgr_threads);
	preempt_disable();
	preempt_notifier_register(&t->pn);
	this_cpu_write(tgr_cur, t);
	if (!ctx->dev->gone)
		tgr_wr(ctx->dev, TGR_REG_CUR_CTX, ctx->id);
	preempt_enable();
	mutex_unlock(&tgr_threads_lock);
	return 0;
}

int tgr_thread_unregister(struct tgr_ctx *ctx)
{
	struct tgr_thr *t;

	mutex_lock(&tgr_threads_lock);
	list_for_each_entry(t, &tgr_threads, link) {
		if (t->task != current || t->ctx != ctx->id ||
		    t->dev != ctx->dev)
			continue;
		tgr_thread_unregister_self(t);
		tgr_thread_free(t);
		mutex_unlock(&tgr_threads_lock);
		return 0;
	}
	mutex_unlock(&tgr_threads_lock);
	return -ENOENT;
}

/*
 * The file goes away: its threads run context 0 from now on. Each takes
 * its notifier off itself (task work) or, if it is exiting, the reaper
 * frees it once the task is dead.
 */
void tgr_threads_detach(struct tgr_ctx *ctx)
{
	struct tgr_thr *t, *tmp;
	bool orphans = false;

	mutex_lock(&tgr_threads_lock);
	list_for_each_entry_safe(t, tmp, &tgr_threads, link) {
		if (t->ctx != ctx->id || t->dev != ctx->dev)
			continue;
		WRITE_ONCE(t->ctx, 0);
		if (t->task == current) {
			tgr_thread_unregister_self(t);
			tgr_thread_free(t);
			continue;
		}
		init_task_work(&t->twork, tgr_thread_twork);
		if (task_work_add(t->task, &t->twork, TWA_RESUME)) {
			t->twork.func = NULL;
			orphans = true;
		}
	}
	mutex_unlock(&tgr_threads_lock);
	if (orphans)
		tgr_reap_fn(NULL);	/* the dead at once, the dying later */
}
