/*
 * Lock-step clock of one VM (docs/lockstep.md).
 *
 * One QEMU_CLOCK_VIRTUAL timer stands at the grant, the time up to which
 * every lock-step fabric has promised that nothing more can arrive.  Under
 * -icount the vCPU stops just before it; the timer then reports the node's
 * time and its next event on every link and waits, with the big lock held,
 * until each link has a grant beyond it.  SimBricks' QEMU waits the same
 * way: nothing in the guest may move while the clock must not.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "hw/core/cpu.h"
#include "sysemu/cpu-timers.h"
#include "fabric-link.h"
#include "lockstep.h"
#include "proto/sync.h"

/*
 * Our grant timer is no guest event, so it is left out of the node's next
 * event.  QEMU's own timer attributes end at BIT(0); the icount warp still
 * counts this timer, so an idle vCPU never skips past a grant.
 */
#define LOCKSTEP_TIMER_ATTR_GRANT ((int)BIT(1))

typedef struct LockstepClock {
    QEMUTimer *grant_timer;
    GPtrArray *links;
} LockstepClock;

static LockstepClock clk;

/*
 * When can this node next send: now if a vCPU can run, else at its next
 * timer.  With several lock-step links a frame from one fabric can wake
 * the node and make it send on another, so no later than the least grant:
 * no fabric knows what the others will deliver.
 */
static uint64_t lockstep_next_event(int64_t now)
{
    uint64_t next = FABRIC_SYNC_IDLE_NONE;
    CPUState *cpu;
    int64_t d;
    guint i;

    CPU_FOREACH(cpu) {
        if (!cpu->halted || cpu_has_work(cpu)) {
            return now;
        }
    }
    d = qemu_clock_deadline_ns_all(QEMU_CLOCK_VIRTUAL,
                                   ~LOCKSTEP_TIMER_ATTR_GRANT);
    if (d >= 0) {
        next = now + d;
    }
    for (i = 0; clk.links->len > 1 && i < clk.links->len; i++) {
        FabricLink *l = g_ptr_array_index(clk.links, i);

        if (l->connected && l->granted >= 0) {
            next = MIN(next, (uint64_t)l->granted);
        }
    }
    return MAX(next, (uint64_t)now);
}

/*
 * The vCPU stops at the first instruction boundary at or after a timer, so
 * the timer stands one instruction short of the grant: the clock never
 * passes it.
 */
static int64_t lockstep_stop_time(int64_t now, int64_t grant)
{
    int64_t stop = grant - icount_to_ns(1) + 1;

    if (stop <= now) {
        warn_report_once("lock-step: the fabric's look-ahead is shorter than "
                         "an instruction; use a smaller -icount shift");
        stop = now + 1;
    }
    return stop;
}

static void lockstep_grant_reached(void *opaque)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint64_t next = lockstep_next_event(now);
    int64_t grant = INT64_MAX;
    guint i;

    /*
     * A timer due now keeps the clock here while we wait: with every vCPU
     * halted, arming any timer (a frame's delivery) would otherwise let
     * icount jump to the next deadline, past the grant to come.
     */
    timer_mod(clk.grant_timer, now);

    /*
     * Report on every link before waiting on any: each fabric's round
     * needs this node's report.
     */
    for (i = 0; i < clk.links->len; i++) {
        fabric_link_sync_report(g_ptr_array_index(clk.links, i), now, next);
    }
    for (i = 0; i < clk.links->len; i++) {
        FabricLink *l = g_ptr_array_index(clk.links, i);

        if (fabric_link_wait_grant(l)) {
            grant = MIN(grant, l->granted);
        }
    }
    /* With no fabricd left the VM runs on free; it can only be stopped. */
    if (grant != INT64_MAX) {
        timer_mod(clk.grant_timer, lockstep_stop_time(now, grant));
    } else {
        timer_del(clk.grant_timer);
    }
}

bool lockstep_add_link(FabricLink *l, Error **errp)
{
    if (!icount_enabled()) {
        error_setg(errp, "lockstep=on needs instruction counting "
                   "(-icount shift=N,sleep=off)");
        return false;
    }
    if (!clk.links) {
        clk.links = g_ptr_array_new();
        clk.grant_timer = timer_new_full(NULL, QEMU_CLOCK_VIRTUAL, SCALE_NS,
                                         LOCKSTEP_TIMER_ATTR_GRANT,
                                         lockstep_grant_reached, NULL);
    }
    g_ptr_array_add(clk.links, l);
    /* The first report is at the current time: before the guest runs. */
    timer_mod(clk.grant_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    return true;
}

void lockstep_remove_link(FabricLink *l)
{
    if (clk.links && g_ptr_array_remove(clk.links, l) && !clk.links->len) {
        timer_del(clk.grant_timer);
    }
}
