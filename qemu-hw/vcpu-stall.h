/*
 * Stalling a vCPU on an MMIO load until a device event
 *
 * A device whose register read must wait for the network (a status poll,
 * a remote read) can park the vCPU that issued the load instead of letting
 * the guest spin: the vCPU halts with its state rolled back to the load,
 * and the load runs again once the device wakes it, an interrupt comes or
 * the stall times out.  QEMU's main loop never blocks, and a halted vCPU
 * costs no host CPU, which matters when many guests share few cores.
 *
 * Only TCG can roll a load back; under KVM or qtest a read never stalls.
 * All calls are made with the BQL held.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_VCPU_STALL_H
#define VCLUSTER_VCPU_STALL_H

#include "qemu/timer.h"
#include "hw/qdev-core.h"

typedef struct VCPUStall {
    DeviceState *owner;         /* of the MMIO region that stalls */
    uint64_t stalled;           /* cpu_index bitmap of parked vCPUs */
    uint64_t expired;           /* their next read must not stall again */
    QEMUTimer *timer;           /* bounds every stall */
    int64_t timeout_ns;
    /*
     * When each parked vCPU's stall ends at the latest: set when it parks
     * after a wake, kept when an interrupt ran it and it parked again.
     */
    int64_t deadline[64];
} VCPUStall;

void vcpu_stall_init(VCPUStall *st, DeviceState *owner, int64_t timeout_ns);
/* Wakes every parked vCPU and frees the timer. */
void vcpu_stall_cleanup(VCPUStall *st);

/*
 * In an MMIO read handler: may the vCPU doing this read be parked now?
 * False outside TCG, without a vCPU, with stalls disabled (timeout 0), or
 * when this vCPU's previous stall just timed out (the read then returns).
 */
bool vcpu_stall_allowed(VCPUStall *st);

/*
 * Park the vCPU doing this read; does not return.  The read is issued
 * again when vcpu_stall_wake() runs, an interrupt reaches the vCPU, or the
 * timeout passes.  A store may be parked the same way: it is rolled back
 * and runs again whole.
 */
G_NORETURN void vcpu_stall(VCPUStall *st);

/* Let every parked vCPU run its read again. */
void vcpu_stall_wake(VCPUStall *st);

/*
 * Let only the vCPU `cpu_index` run its access again, if it is parked;
 * the others stay.  A device with one request per vCPU wakes its owner.
 */
void vcpu_stall_wake_cpu(VCPUStall *st, int cpu_index);

/* Change the bound of future stalls (0: never stall). */
void vcpu_stall_set_timeout(VCPUStall *st, int64_t timeout_ns);

static inline bool vcpu_stall_any(const VCPUStall *st)
{
    return st->stalled != 0;
}

#endif
