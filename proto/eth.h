/*
 * Kind eth: QEMU's `-netdev stream` framing instead of the frame header of
 * base.h (so that stock virtio-net NICs plug straight in): a 4-byte
 * big-endian length, then one Ethernet frame.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_PROTO_ETH_H
#define VCLUSTER_PROTO_ETH_H

#define FABRIC_ETH_LEN_PREFIX   4
#define FABRIC_ETH_MIN_FRAME    14
#define FABRIC_ETH_MAX_FRAME    (64 * 1024)

#endif
