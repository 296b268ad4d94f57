/*
 * Stalling a vCPU on an MMIO load until a device event (see vcpu-stall.h)
 *
 * The load is rolled back with cpu_loop_exit_restore() from inside the
 * MMIO handler, as hw/misc/mips_itu.c does for its blocking cells: TCG
 * recorded the host return address of the access in mem_io_pc.  The vCPU
 * is marked halted; x86 wakes a halted CPU only for interrupts, so a wake
 * is queued work that clears the halt on the vCPU's own thread.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "hw/core/cpu.h"
#include "exec/exec-all.h"
#include "sysemu/tcg.h"
#include "vcpu-stall.h"

static void vcpu_stall_resume(CPUState *cs, run_on_cpu_data data)
{
    cs->halted = 0;
}

static void vcpu_stall_wake_mask(VCPUStall *st, uint64_t cpus)
{
    for (uint64_t left = cpus; left; left &= left - 1) {
        CPUState *cs = qemu_get_cpu(ctz64(left));

        if (cs) {
            async_run_on_cpu(cs, vcpu_stall_resume, RUN_ON_CPU_NULL);
        }
    }
    st->stalled &= ~cpus;
    if (!st->stalled) {
        timer_del(st->timer);
    }
}

static void vcpu_stall_expire(void *opaque)
{
    VCPUStall *st = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t next = INT64_MAX;
    uint64_t due = 0;

    for (uint64_t left = st->stalled; left; left &= left - 1) {
        int cpu = ctz64(left);

        if (st->deadline[cpu] <= now) {
            due |= BIT_ULL(cpu);
        } else {
            next = MIN(next, st->deadline[cpu]);
        }
    }
    st->expired |= due;
    vcpu_stall_wake_mask(st, due);
    if (next != INT64_MAX) {
        timer_mod(st->timer, next);
    }
}

void vcpu_stall_init(VCPUStall *st, DeviceState *owner, int64_t timeout_ns)
{
    st->owner = owner;
    st->stalled = 0;
    st->expired = 0;
    st->timeout_ns = timeout_ns;
    st->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vcpu_stall_expire, st);
}

void vcpu_stall_cleanup(VCPUStall *st)
{
    if (st->timer) {
        vcpu_stall_wake_mask(st, st->stalled);
        timer_free(st->timer);
        st->timer = NULL;
    }
}

bool vcpu_stall_allowed(VCPUStall *st)
{
    uint64_t me;

    if (!tcg_enabled() || !current_cpu || st->timeout_ns <= 0 ||
        current_cpu->cpu_index >= 64) {
        return false;
    }
    me = BIT_ULL(current_cpu->cpu_index);
    if (st->expired & me) {
        st->expired &= ~me;
        return false;
    }
    return true;
}

G_NORETURN void vcpu_stall(VCPUStall *st)
{
    CPUState *cs = current_cpu;

    if (!(st->stalled & BIT_ULL(cs->cpu_index))) {
        st->stalled |= BIT_ULL(cs->cpu_index);
        st->deadline[cs->cpu_index] =
            qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + st->timeout_ns;
        timer_mod_anticipate(st->timer, st->deadline[cs->cpu_index]);
    }
    /*
     * The access is abandoned, not finished: release the device's MMIO
     * re-entrancy guard, which memory.c would otherwise clear on return.
     */
    st->owner->mem_reentrancy_guard.engaged_in_io = false;
    cs->halted = 1;
    cs->exception_index = EXCP_HLT;
    cpu_loop_exit_restore(cs, cs->mem_io_pc);
}

void vcpu_stall_wake(VCPUStall *st)
{
    if (st->stalled) {
        vcpu_stall_wake_mask(st, st->stalled);
    }
}

void vcpu_stall_wake_cpu(VCPUStall *st, int cpu_index)
{
    if (cpu_index >= 0 && cpu_index < 64 &&
        (st->stalled & BIT_ULL(cpu_index))) {
        vcpu_stall_wake_mask(st, BIT_ULL(cpu_index));
    }
}

void vcpu_stall_set_timeout(VCPUStall *st, int64_t timeout_ns)
{
    st->timeout_ns = timeout_ns;
}
