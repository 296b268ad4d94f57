/*
 * vcluster fabric wire protocol: SYNC, the frames that keep a lock-step
 * cluster's virtual clocks in step (docs/lockstep.md).  A fabric is
 * lock-step when fabricd runs with --lockstep; its devices then say so in
 * their HELLO (FABRIC_HELLO_F_LOCKSTEP, proto/base.h).
 *
 * SYNC  device -> fabric: "my virtual clock reached send_time_ns; I have
 *       sent everything stamped before it".  Payload: le64 next_event_ns,
 *       the earliest virtual time at which the node can act on its own
 *       (FABRIC_SYNC_IDLE_NONE: never), i.e. send_time_ns while its CPU is
 *       busy, or its next timer while it idles.
 * SYNC  fabric -> device: a grant.  deliver_time_ns is the grant G: every
 *       frame for this device that is due before G came before this SYNC,
 *       so the device may run until its clock reaches G.  No payload.
 *
 * A device runs, stops at its grant, sends SYNC and waits for the next
 * grant; fabricd grants G' = E + L once every node has reported, where E
 * is the earliest time any node can next send (its next event, or a frame
 * that is still to be delivered) and L the fabric's look-ahead, the least
 * latency of any frame.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_PROTO_SYNC_H
#define VCLUSTER_PROTO_SYNC_H

#include "proto/base.h"

#define FABRIC_SYNC_REPORT_LEN  8
#define FABRIC_SYNC_IDLE_NONE   UINT64_MAX

static inline size_t fabric_sync_report_encode(uint64_t next_event_ns,
                                               uint8_t *buf)
{
    fabric_put_le64(buf, next_event_ns);
    return FABRIC_SYNC_REPORT_LEN;
}

/* False unless `pl` is a device's SYNC payload. */
static inline bool fabric_sync_report_decode(const uint8_t *pl, size_t len,
                                             uint64_t *next_event_ns)
{
    if (len != FABRIC_SYNC_REPORT_LEN) {
        return false;
    }
    *next_event_ns = fabric_get_le64(pl);
    return true;
}

#endif
