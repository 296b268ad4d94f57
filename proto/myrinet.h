/*
 * Kind myrinet: the LANai-style card's payloads (docs/hw/lanai.md), on the
 * frame header of base.h; the card is linked through crossbar switches.
 *
 * CONTROL HELLO      base.h
 * CONTROL HELLO_ACK  base.h, then u8 switch, u8 port: where the node's
 *                    cable plugs in
 * DATA device->fabric  flags FABRIC_F_ROUTED, dst FABRIC_NODE_NONE; payload:
 *                    route bytes (bit 7 set, one per switch on the path),
 *                    then the packet (its first byte has bit 7 clear),
 *                    then le32 CRC-32 (base.h) over the packet
 * DATA fabric->device  flags 0 (FABRIC_F_CORRUPTED when a fault rule
 *                    changed it), src the sending node, dst the receiving
 *                    node; payload: the packet and its CRC, route consumed
 *
 * A route byte 0x80 | p names output port (input port + p) of the switch,
 * p being a signed 6-bit offset (-32..31, bit 6 clear); 0x80 loops back.
 * There is no credit: a full receiver stops reading its socket, and the
 * fabric drops what a congested port cannot hold (RDP recovers it).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_PROTO_MYRINET_H
#define VCLUSTER_PROTO_MYRINET_H

#include "proto/base.h"

#define FABRIC_MYRI_HELLO_ACK_EXTRA 2
#define FABRIC_MYRI_HELLO_ACK_LEN   (FABRIC_HELLO_ACK_BASE_LEN + \
                                     FABRIC_MYRI_HELLO_ACK_EXTRA)
#define FABRIC_MYRI_ROUTE_BIT       0x80
#define FABRIC_MYRI_MAX_ROUTE       24      /* route bytes: switch hops */
#define FABRIC_MYRI_MAX_PACKET      16384   /* packet bytes, without CRC */
#define FABRIC_MYRI_CRC_LEN         4
#define FABRIC_MYRI_SWITCH_PORTS    16      /* ports of the default switch */

_Static_assert(FABRIC_MYRI_HELLO_ACK_EXTRA <= FABRIC_HELLO_ACK_EXTRA_MAX,
               "myrinet HELLO_ACK fields fit");
_Static_assert(FABRIC_MYRI_MAX_ROUTE + FABRIC_MYRI_MAX_PACKET +
               FABRIC_MYRI_CRC_LEN <= FABRIC_MAX_PAYLOAD,
               "the longest routed packet fits a frame");

/* The HELLO_ACK fields of base.h's `extra`. */
enum {
    FABRIC_MYRI_ACK_SWITCH = 0,
    FABRIC_MYRI_ACK_PORT = 1,
};

/*
 * Split a card's DATA payload: the route bytes (bit 7 set) at the start,
 * the packet, the CRC.  False when no packet of 1..FABRIC_MYRI_MAX_PACKET
 * bytes is left between them.
 */
static inline bool fabric_myri_split(const uint8_t *pl, size_t len,
                                     size_t *route_len, size_t *packet_len)
{
    size_t route = 0;

    if (len < 1 + FABRIC_MYRI_CRC_LEN) {
        *route_len = *packet_len = 0;
        return false;
    }
    while (route < len - FABRIC_MYRI_CRC_LEN &&
           (pl[route] & FABRIC_MYRI_ROUTE_BIT)) {
        route++;
    }
    *route_len = route;
    *packet_len = len - FABRIC_MYRI_CRC_LEN - route;
    return *packet_len >= 1 && *packet_len <= FABRIC_MYRI_MAX_PACKET;
}

/* The output port a route byte selects, or -1 when it is out of range. */
static inline int fabric_myri_out_port(uint8_t route_byte, unsigned in_port,
                                       unsigned ports)
{
    int off = route_byte & 0x3f;
    int out;

    if ((route_byte & 0xc0) != FABRIC_MYRI_ROUTE_BIT) {
        return -1;
    }
    if (off & 0x20) {
        off -= 0x40;
    }
    out = (int)in_port + off;
    return out >= 0 && out < (int)ports ? out : -1;
}

#endif
