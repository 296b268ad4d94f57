/*
 * Fabric link client: connects a device model to fabricd over a chardev,
 * using the frames of fabric-proto.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCLUSTER_FABRIC_LINK_H
#define HW_VCLUSTER_FABRIC_LINK_H

#include "chardev/char-fe.h"
#include "fabric-proto.h"

/* Called for every valid incoming frame; payload is hdr->len bytes. */
typedef void FabricLinkRxFn(void *opaque, const FabricHdr *hdr,
                            const uint8_t *payload);
/* Called when the connection to fabricd opens (up) or closes. */
typedef void FabricLinkEventFn(void *opaque, bool up);

typedef struct FabricLink {
    CharBackend *chr;
    uint8_t kind;
    uint16_t node;
    FabricLinkRxFn *rx;
    FabricLinkEventFn *event;
    void *opaque;
    bool connected;
    /* Reassembly of the incoming byte stream. */
    uint8_t hdr_buf[FABRIC_HDR_LEN];
    FabricHdr hdr;
    uint32_t have;
    bool in_payload;
    uint8_t *payload;
    uint64_t malformed;
} FabricLink;

void fabric_link_init(FabricLink *l, CharBackend *chr, uint8_t kind,
                      uint16_t node, FabricLinkRxFn *rx,
                      FabricLinkEventFn *event, void *opaque);
void fabric_link_cleanup(FabricLink *l);
/* Send one frame stamped with the current virtual time. */
void fabric_link_send(FabricLink *l, uint8_t type, uint16_t dst,
                      const void *payload, uint32_t len);

#endif
