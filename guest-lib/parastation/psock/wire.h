/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: what goes on the wire (docs/psock.md).
 *
 * A TCP connection starts on the kernel.  A library client binds its
 * socket to a port in the marker range before it connects; a library
 * server that accepts such a client writes a HELLO as the first bytes of
 * the kernel stream, naming its ports address.  Each side then moves its
 * sending direction to ports with a SWITCH message, which says how many
 * bytes it sent on the kernel stream before: the peer reads exactly those
 * from the kernel, then reads ports.  Everything after goes over ports,
 * as messages to the peer process's port; the kernel connection stays
 * open for the names, the options and to see the peer go away.
 *
 * All fields little-endian (the guests are x86); packed layouts.
 */
#ifndef PSOCK_WIRE_H
#define PSOCK_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Client ports that say "I speak this protocol" (kept out of the kernel's
 * ephemeral range by vc-sysinit: net.ipv4.ip_local_reserved_ports). */
#define PSOCK_MARK_LO	61000
#define PSOCK_MARK_HI	61999
/* A UDP socket of ours is bound to a marker that names its process's
 * ports port: PSOCK_MARK_LO + port * PSOCK_UDP_PER_PORT + k. */
#define PSOCK_UDP_PER_PORT	15
#define PSOCK_UDP_MARK(port, k)	(PSOCK_MARK_LO + (port) * PSOCK_UDP_PER_PORT + (k))
#define PSOCK_UDP_PORT_OF(mark)	(((mark) - PSOCK_MARK_LO) / PSOCK_UDP_PER_PORT)

/* ---- on the kernel stream, server to client, before any data ---- */
#define PSOCK_MAGIC	"PSOCKv3"	/* 8 bytes with its NUL */
/* Every version's HELLO starts so and has this size: a client of another
 * version takes it out of the stream and stays on the kernel. */
#define PSOCK_MAGIC_ANY	"PSOCKv"

struct psock_hello {
	char magic[8];
	char nic[8];		/* its NIC (ps_port_nic()): both must use one */
	uint16_t node;		/* the server's node and port (ps_ports.h) */
	uint16_t port;
	uint32_t conn;		/* its connection id there */
	uint64_t nonce;		/* with conn: names the connection (32 bits) */
} __attribute__((packed));

/* ---- over ports: every message starts with this ---- */
enum {
	PSOCK_SWITCH = 1,	/* from now on my data comes over ports */
	PSOCK_DATA,		/* stream bytes follow the header */
	PSOCK_WIN,		/* the receiver consumed `count` bytes in all */
	PSOCK_FIN,		/* no more data: `count` bytes sent in all */
	PSOCK_RST,		/* the connection is gone (closed, unread data) */
	PSOCK_DGRAM,		/* a UDP datagram: dconn and sconn are the
				 * destination's and the source's UDP ports */
};

struct psock_msg {
	uint8_t type;		/* PSOCK_* */
	uint8_t pad;
	uint16_t dconn;		/* the receiver's connection id and nonce */
	uint32_t dnonce;
	uint16_t sconn;		/* the sender's (SWITCH) */
	uint16_t pad2;
	uint32_t snonce;
	uint64_t count;		/* SWITCH: bytes sent on the kernel stream
				 * before; WIN, FIN: see above; DGRAM: the
				 * IPv4 address it was sent to (network
				 * order: loopback or the node's) */
} __attribute__((packed));

/*
 * DATA, the message of every write, carries only the header up to sconn:
 * the receiver's connection names the stream, and ports tells who sent
 * it.  Each header byte costs time on ParaStation's slow link
 * (docs/psock.md, "Data over ports").
 */
#define PSOCK_DATA_HDR	offsetof(struct psock_msg, sconn)
/* Connection ids a message can name; a connection beyond stays on the
 * kernel (it would take more than this many at once in one process). */
#define PSOCK_CONN_IDS	65536
#define PSOCK_DATA_MAX	(65536 - PSOCK_DATA_HDR)
/* The largest IPv4 UDP payload (65535 - 20 - 8): the kernel's EMSGSIZE
 * above it; it fits one ports message with the header. */
#define PSOCK_DGRAM_MAX	65507
_Static_assert(PSOCK_DGRAM_MAX + sizeof(struct psock_msg) <= 65536,
	       "a datagram and its header fit one ports message");

#endif /* PSOCK_WIRE_H */
