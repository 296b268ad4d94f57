/*
 * Kind eth.  Free-running: QEMU's `-netdev stream` framing instead of the
 * frame header of base.h (so that stock virtio-net NICs plug straight
 * in): a 4-byte big-endian length, then one Ethernet frame.
 *
 * Lock-step: the frame header of base.h with kind FABRIC_KIND_ETH, sent
 * by the vcluster-eth-link filter on the NIC's netdev.  A DATA payload is
 * one Ethernet frame (no preamble, no FCS): from the NIC with dst
 * FABRIC_NODE_NONE (the switch decides by MAC), to the NIC with src and
 * dst the nodes and deliver_time_ns stamped.  HELLO_ACK has no kind fields.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_PROTO_ETH_H
#define VCLUSTER_PROTO_ETH_H

#include "proto/base.h"

#define FABRIC_ETH_LEN_PREFIX   4
#define FABRIC_ETH_MIN_FRAME    14
#define FABRIC_ETH_MAX_FRAME    (64 * 1024)
/*
 * The cable time of a frame in lock-step: padded to FABRIC_ETH_MIN_PADDED
 * bytes, plus FCS, preamble, start of frame and inter-frame gap.
 */
#define FABRIC_ETH_MIN_PADDED   60
#define FABRIC_ETH_WIRE_EXTRA   (4 + 8 + 12)

_Static_assert(FABRIC_ETH_MAX_FRAME <= FABRIC_MAX_PAYLOAD,
               "an Ethernet frame fits a lock-step DATA frame");

#endif
