/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation hardware abstraction layer (HAL), paper section 4.2.1.
 *
 * The HAL hides the network interface: it moves single packets of at most
 * ps_hal_mtu() bytes to and from nodes, and nothing else.  Upper layers
 * (rawdata, ports) see only this interface, so a second NIC is one more
 * backend (struct ps_hal_ops) and no change above.  The backend is picked
 * by the environment variable PS_HAL (default "ps1").
 *
 * Not an application interface: it is meant for the library's own layers.
 * All calls return -1 and set errno on failure.  docs/parastation-lib.md
 * has the reference.
 */
#ifndef PS_HAL_H
#define PS_HAL_H

#include <stddef.h>
#include <sys/uio.h>

/* Largest packet payload of any backend; ps_hal_mtu() gives this one's. */
#define PS_HAL_MTU_MAX	8192

/* ps_hal_open() flags */
#define PS_HAL_EXCL	0x1	/* sole raw user of this node, else EBUSY */
#define PS_HAL_SHARED	0x2	/* one of many ports users; EBUSY while an
				 * exclusive user has the node, and vice versa */

/* ps_hal_status() / ps_hal_wait() bits */
#define PS_HAL_RX	0x1	/* a whole packet is ready to be received */
#define PS_HAL_TX	0x2	/* a maximum-size packet can be sent now */
#define PS_HAL_ERR	0x4	/* the NIC reports an error */

typedef struct ps_hal ps_hal_t;

/* One backend per NIC; every member must be set but the barrier ones. */
struct ps_hal_ops {
	const char *name;
	int (*open)(ps_hal_t *h, int flags);	/* map the NIC, fill node/nodes */
	void (*close)(ps_hal_t *h);
	int (*send)(ps_hal_t *h, unsigned int dest, const struct iovec *iov,
		    int iovcnt, size_t len);
	int (*receive_header)(ps_hal_t *h, unsigned int *src, size_t *len);
	int (*receive_body)(ps_hal_t *h, void *buf, size_t len);
	int (*status)(ps_hal_t *h);
	int (*wait)(ps_hal_t *h, int events, int timeout_ms);
	void *(*shared)(ps_hal_t *h, size_t *size);
	int (*poll_fd)(ps_hal_t *h);
	/* optional (NULL: ENOTSUP): hardware barrier, see ps_hal_barrier() */
	int (*barrier_join)(ps_hal_t *h, unsigned int line, int join);
	int (*barrier)(ps_hal_t *h, unsigned int line, int timeout_ms);
};

/* The handle; backends keep their own state behind priv. */
struct ps_hal {
	const struct ps_hal_ops *ops;
	unsigned int node;	/* this node's id */
	unsigned int nodes;	/* nodes in the network: ids 0..nodes-1 */
	size_t mtu;		/* largest packet payload: a multiple of 4,
				 * 508..PS_HAL_MTU_MAX */
	int stall_ms;		/* how long a wait may stall the CPU in the
				 * NIC's WAIT window before it sleeps in the
				 * driver: $PS_HAL_STALL_MS, default 20 */
	void *priv;
};

/*
 * Open the backend named by $PS_HAL (default "ps1") and map its NIC.
 * flags: 0, PS_HAL_EXCL or PS_HAL_SHARED.  Errors: ENODEV (no such
 * backend or no board), EBUSY (the other kind of user has the node),
 * ENETDOWN (link down), EINVAL (bad flags).
 */
ps_hal_t *ps_hal_open(int flags);
/* Unmap and free; waits up to 2 s for sent packets to leave the NIC. */
void ps_hal_close(ps_hal_t *h);

unsigned int ps_hal_node(const ps_hal_t *h);
unsigned int ps_hal_nodes(const ps_hal_t *h);
const char *ps_hal_name(const ps_hal_t *h);
/* Largest packet payload in bytes (508 on ps1): upper layers fragment by
 * it.  A multiple of 4, at least 508 and at most PS_HAL_MTU_MAX. */
size_t ps_hal_mtu(const ps_hal_t *h);
/*
 * How long ps_hal_wait() may stall the CPU on the NIC before it sleeps
 * (PS_HAL_STALL_MS, default 20); returns the previous value.  A process
 * that waits for another process of its own node sets 0: on a guest with
 * one CPU that process could not run while we stall.
 */
int ps_hal_stall(ps_hal_t *h, int ms);
int ps_hal_stall_ms(const ps_hal_t *h);

/*
 * Send one packet of len (1..ps_hal_mtu()) bytes, gathered from iov, to dest.
 * Does not block: EAGAIN when the NIC has no room (see ps_hal_wait).
 * Errors: EINVAL (len 0 or > MTU, or iov shorter than len),
 * EHOSTUNREACH (dest >= nodes), EIO (NIC error).
 */
int ps_hal_sendv(ps_hal_t *h, unsigned int dest, const struct iovec *iov,
		 int iovcnt);
int ps_hal_send(ps_hal_t *h, unsigned int dest, const void *buf, size_t len);

/*
 * Peek at the next packet: 1 with *src and *len (the payload, rounded up
 * to the backend's granularity: 4 bytes on ps1, padding reads as 0),
 * 0 when none is ready.  Any unread rest of the previous packet is
 * dropped first.
 */
int ps_hal_receive_header(ps_hal_t *h, unsigned int *src, size_t *len);
/*
 * Copy the next len bytes of the current packet's payload to buf.  May be
 * called several times per packet (every call but the last with len a
 * multiple of 4), so that a protocol header and the data can go to
 * different places without an extra copy.  buf NULL and len 0 drops the
 * rest of the packet now.  EINVAL past the packet's end or with no packet
 * peeked.
 */
int ps_hal_receive_body(ps_hal_t *h, void *buf, size_t len);

/* PS_HAL_RX | PS_HAL_TX | PS_HAL_ERR as they are now; no blocking. */
int ps_hal_status(ps_hal_t *h);
/*
 * Sleep until one of events (PS_HAL_RX, PS_HAL_TX) holds, timeout_ms
 * (-1: forever).  Returns the events that hold (PS_HAL_ERR included on a
 * NIC error), 0 on timeout.  EINTR, ENODEV (board gone).
 */
int ps_hal_wait(ps_hal_t *h, int events, int timeout_ms);

/*
 * Memory shared by every process of this node that uses the NIC (the ports
 * layer keeps its queues and locks there).  Zeroed when the last user goes.
 */
void *ps_hal_shared(ps_hal_t *h, size_t *size);

/*
 * Hardware barrier (paper section 5, Table 3).  PS_HAL_BARRIER_LINES sync
 * lines; a line completes when every node that has joined it has arrived.
 *
 * ps_hal_barrier_join(h, line, 1) makes this node take part in line (0 to
 * leave it).  A line counts only the nodes that have joined it when the
 * last one arrives, so the caller must make sure that all nodes have
 * joined before the first barrier (e.g. a message rendezvous, as pstest
 * barrier-loop does).  ps_hal_close() leaves all lines.
 *
 * ps_hal_barrier(h, line, timeout_ms) arrives at line (joining it first if
 * needed), waits until the line completes (-1: forever; a short poll, then
 * the driver's sleep) and acknowledges the completion.  Returns 0.
 * Errors: EINVAL (line >= PS_HAL_BARRIER_LINES), ETIMEDOUT (this node
 * stays arrived: the next completion of the line ends it), EINTR, ENODEV,
 * ENOTSUP (the backend has no hardware barrier).
 */
#define PS_HAL_BARRIER_LINES	4
int ps_hal_barrier_join(ps_hal_t *h, unsigned int line, int join);
int ps_hal_barrier(ps_hal_t *h, unsigned int line, int timeout_ms);

/*
 * The NIC's file descriptor, for poll/select/epoll next to other files:
 * POLLIN while a packet waits, POLLOUT while one can be sent, POLLERR |
 * POLLHUP once the NIC is gone.  Only to wait on: never read, write or
 * close it.
 */
int ps_hal_poll_fd(ps_hal_t *h);

/* For backends: CLOCK_MONOTONIC in ns. */
long long ps_hal_now_ns(void);
/*
 * For backends: open the device (O_RDWR | O_CLOEXEC) at a descriptor of
 * PS_HAL_FD_MIN or above, out of the way of programs that close and reuse
 * low ones (a daemon reopens 0, 1 and 2).  ENODEV when there is none.
 */
#define PS_HAL_FD_MIN	200
int ps_hal_open_device(const char *path);

/* Backends, for hal.c's table. */
extern const struct ps_hal_ops ps_hal_ps1_ops;
extern const struct ps_hal_ops ps_hal_myri_ops;

#endif /* PS_HAL_H */
