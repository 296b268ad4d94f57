/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation rawdata port (paper section 4.2.2): the fastest way to move
 * whole messages between nodes.  One process per node owns it; it gets the
 * network to itself, with a minimal protocol (a 12-byte fragment header
 * per packet) and zero-copy receive of small messages.
 *
 * Built on the HAL only (ps_hal.h), so it runs on any backend.
 * All calls return -1 (or NULL) and set errno on failure.
 * docs/parastation-lib.md has the reference and the wire format.
 */
#ifndef PS_RAWDATA_H
#define PS_RAWDATA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PS_ANY		(-1)	/* ps_raw_recv*(): from any node */

/* Fragment header, first in every packet's payload (host byte order) */
struct ps_frag_hdr {
	uint32_t msgid;		/* per (sender, receiver) pair, counts up */
	uint32_t total;		/* bytes of the whole message */
	uint32_t offset;	/* where this fragment's data goes */
};

typedef struct ps_raw ps_raw_t;

/* Open the rawdata port of this node.  EBUSY: another process has it;
 * ENODEV: no board (or $PS_HAL names no backend); ENETDOWN: link down. */
ps_raw_t *ps_raw_open(void);
/* Close; frees queued messages and lent zero-copy buffers. */
void ps_raw_close(ps_raw_t *r);

unsigned int ps_raw_node(const ps_raw_t *r);
unsigned int ps_raw_nodes(const ps_raw_t *r);

/*
 * Send len bytes (0 allowed, up to 4 GiB - 1) to node dest, blocking until
 * the last packet is in the NIC.  While the network is full, incoming
 * packets are taken in and queued, so two nodes sending to each other do
 * not deadlock.  EHOSTUNREACH: dest >= nodes; EINVAL: buf NULL with len.
 */
int ps_raw_send(ps_raw_t *r, unsigned int dest, const void *buf, size_t len);

/*
 * Receive the next whole message from src (a node id or PS_ANY) into buf.
 * Messages from other nodes that arrive meanwhile are queued.  Returns the
 * message length, *from (if not NULL) the sender.  timeout_ms: -1 forever,
 * 0 only what is there now.  Errors: EINVAL bad src; EMSGSIZE the message
 * is longer than len (it stays queued); ETIMEDOUT / EAGAIN (timeout 0);
 * EINTR.
 */
ssize_t ps_raw_recv(ps_raw_t *r, int src, unsigned int *from, void *buf,
		    size_t len, int timeout_ms);

/*
 * Zero-copy receive: like ps_raw_recv(), but *data points at the message
 * in the library's receive buffer, valid until ps_raw_release(r, *data).
 */
ssize_t ps_raw_recv_zc(ps_raw_t *r, int src, unsigned int *from,
		       const void **data, int timeout_ms);
/* Give a ps_raw_recv_zc() buffer back.  EINVAL: not a lent buffer. */
int ps_raw_release(ps_raw_t *r, const void *data);

/* Packets dropped as malformed or out of order (should stay 0). */
unsigned long ps_raw_dropped(const ps_raw_t *r);

#endif /* PS_RAWDATA_H */
