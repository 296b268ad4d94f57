/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation ports (paper section 4.2.2, "system layer"): many processes
 * per node share the network interface.  Each process opens one or more
 * ports; messages go from (node, port) to (node, port).
 *
 * Whoever holds the node's lock takes in packets from the NIC and sorts
 * them into per-port queues in the pool shared by all processes of the
 * node (ps_hal_shared), reassembling fragmented messages there.  The lock
 * is a word in the pool, taken with an atomic compare-and-swap; a process
 * that finds it taken hands the CPU to others (sched_yield) instead of
 * spinning.  Ports and rawdata exclude each other on a node (EBUSY).
 *
 * Flow control: a message is sent only when the receiving node has room
 * for all of it in its pool (eager credit per pair of nodes, or a grant
 * for one large message), so that the pool never fills with parts of
 * messages and nothing is dropped; a receiver that does not read holds
 * back the nodes that send to it.
 *
 * All calls return -1 (or NULL) and set errno on failure.
 * docs/parastation-lib.md has the reference and the wire format.
 */
#ifndef PS_PORTS_H
#define PS_PORTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PS_PORTS_MAX	64	/* port ids 0..63 on every node */
#define PS_PORT_ANY	(-1)	/* ps_port_open(): any free port */
#define PS_PORT_MSG_MAX	65536	/* largest message */

/* Packet header of the ports protocol (host byte order) */
struct ps_port_hdr {
	uint16_t dport;		/* destination port */
	uint16_t sport;		/* source port */
	uint32_t msgid;		/* per source port, counts up */
	uint32_t total;		/* bytes of the whole message */
	uint32_t offset;	/* where this fragment's data goes */
};

typedef struct ps_port ps_port_t;

/*
 * Open port id (0..PS_PORTS_MAX-1, or PS_PORT_ANY for a free one) on this
 * node.  Errors: EINVAL bad id; EADDRINUSE the port is taken by a live
 * process; EAGAIN no free port; EBUSY a rawdata user has the node;
 * ENOSPC the pool is too small; EPROTO the pool was set up by another
 * version of this library; the errors of ps_hal_open().
 */
ps_port_t *ps_port_open(int port);
/* Close: frees the port and the messages still queued for it. */
void ps_port_close(ps_port_t *p);
/*
 * A child of fork() holds a copy of its parent's handle.  Adopt makes the
 * port the caller's, with the messages queued for it, once the process
 * that opened it has died (a daemon's parent exits after the fork).
 * Errors: EBUSY that process still lives (try again later); EADDRINUSE
 * the port was closed, another process took it since, or the parent
 * took or sent a message on it after the fork (our copy is old).
 */
int ps_port_adopt(ps_port_t *p);
/* The caller used the port's state beyond the pool (a socket layer's
 * buffers): a child that forked before may no longer adopt it. */
void ps_port_touch(ps_port_t *p);
/* Let go of a handle without closing the port (one that is not ours). */
void ps_port_forget(ps_port_t *p);
/*
 * After exec(): the port this process (same pid) had open before, with
 * the messages queued for it.  Messages the old image had taken out of
 * the pool are gone with it: receive everything first.  Errors: EINVAL,
 * EADDRINUSE the port is not this process's; those of ps_port_open().
 */
ps_port_t *ps_port_resume(int port);

int ps_port_id(const ps_port_t *p);
/* The HAL backend's name ("ps1", "myri"): ports of two backends never meet. */
const char *ps_port_nic(const ps_port_t *p);
unsigned int ps_port_node(const ps_port_t *p);
unsigned int ps_port_nodes(const ps_port_t *p);

/*
 * Send len (0..PS_PORT_MSG_MAX) bytes to port dport of node dest; waits
 * until dest has room for the whole message (flow control), then returns
 * once the last fragment is in the NIC.  A message to this node does not
 * pass the NIC: it is copied into the node's pool at once.  Messages to a
 * port nobody has open are kept at the receiver until it is opened.  Errors:
 * EHOSTUNREACH bad node; EINVAL bad port or buf NULL with len; EMSGSIZE
 * len too large, or larger than dest's pool can ever hold; EINTR, ENODEV
 * while waiting.
 */
int ps_port_send(ps_port_t *p, unsigned int dest, int dport, const void *buf,
		 size_t len);
/*
 * ps_port_send(), but the wait for room at dest lasts at most timeout_ms
 * (-1 forever; PS_PORT_NO_WAIT none: room now, after taking in what has
 * arrived, or ETIMEDOUT, with the request for room on its way so that a
 * later try may find it): ETIMEDOUT, and nothing was sent.  Once room is
 * there the message goes whole.  For callers that must notice a receiver
 * that is gone (nobody on its node takes in packets any more), or must
 * not wait on one.
 */
#define PS_PORT_NO_WAIT	(-2)
int ps_port_send_timed(ps_port_t *p, unsigned int dest, int dport,
		       const void *buf, size_t len, int timeout_ms);

/*
 * Receive the next message for this port, from any sender.  Returns its
 * length, *from / *fport the sender (either may be NULL).  timeout_ms -1
 * forever, 0 only what is there.  Errors: EMSGSIZE longer than len (it
 * stays queued); EAGAIN (timeout 0) / ETIMEDOUT; EINTR; EINVAL.
 */
ssize_t ps_port_recv(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		     size_t len, int timeout_ms);

/*
 * 1 if a ps_port_recv() now would find nothing and have nothing to do:
 * no message queued, no packet in the NIC, no control packet owed by the
 * node, no look for dead senders due (that one asked of the clock only
 * every 16th call).  Does not take the node's lock, which a process that
 * only looks should not fight for with those that receive.
 */
int ps_port_quiet(ps_port_t *p);
/* 1 if a message for the port is queued or a packet is in the NIC: what
 * a spin before a sleep waits for (ps_port_quiet() without the work). */
int ps_port_arrived(ps_port_t *p);
/*
 * A file descriptor to wait on with poll/select/epoll next to others:
 * POLLIN when the NIC holds a packet, which may be for this port.  A
 * message that another process of the node took in for this port rings
 * the port's doorbell instead (ps_port_bell_fd()); without one, look
 * with ps_port_recv() again within PS_PORT_POLL_MS.
 * Never read, write or close it.
 */
#define PS_PORT_POLL_MS	2
int ps_port_poll_fd(const ps_port_t *p);
/*
 * Sleep until the NIC holds a packet or the doorbell rings, or timeout_ms
 * (-1 forever), as ps_port_recv() does: it stalls on the NIC a while
 * first, for the lowest latency (not with peers on this node), then
 * sleeps in poll() on the NIC and the doorbell.  While another process of
 * the node watches the NIC for us (ps_port_sleep()) it sleeps on the
 * doorbell alone, for at most PS_PORT_BELL_MS.  1 a packet or a message
 * may be there, 0 timeout (it may come early: see ps_port_sleep_ms());
 * ENODEV, EINTR.  Nothing is taken in: call ps_port_recv() next.
 * The one call that may run beside another on the same handle (another
 * thread's, or a signal handler's): it then may end early, or only at
 * its timeout when the other call takes the packet it waited for.
 */
#define PS_PORT_BELL_MS		20	/* on the doorbell alone */
#define PS_PORT_WATCH_MS	100	/* on NIC and doorbell: a look now
					 * and then, for dead peers */
int ps_port_wait(ps_port_t *p, int timeout_ms);
/*
 * A message from another process of this node does not pass the NIC: the
 * sender rings the port's doorbell, a descriptor to poll next to
 * ps_port_poll_fd() (POLLIN; -1 if the port has none, then look again
 * within PS_PORT_POLL_MS).  Never read or close it.  Before such a sleep
 * call ps_port_sleep(): 1 if a message is queued already (do not sleep);
 * else 0, and *watch_nic says whether to poll ps_port_poll_fd() too.  It
 * is 0 while another process of the node watches the NIC for us: then
 * sleep at most PS_PORT_BELL_MS.  Call ps_port_awake() after the sleep,
 * with the same *watch_nic, and rung 1 if the poll said POLLIN on the
 * doorbell (it is emptied then: a read costs as much as a message).
 * Sleep at most ps_port_sleep_ms(): without a doorbell, and once two
 * threads of the process have slept on ports (they share the doorbell),
 * PS_PORT_POLL_MS; else PS_PORT_WATCH_MS on the NIC, PS_PORT_BELL_MS on
 * the doorbell alone.
 * ps_port_recv() and ps_port_wait() do all this themselves.
 */
int ps_port_bell_fd(const ps_port_t *p);
int ps_port_sleep(ps_port_t *p, int *watch_nic);
/* What ps_port_sleep() would say in *watch_nic now. */
int ps_port_watches(ps_port_t *p);
void ps_port_awake(ps_port_t *p, int watch_nic, int rung);
int ps_port_sleep_ms(const ps_port_t *p, int watch_nic);
/*
 * ps_hal_stall() of the port's NIC.  0 when messages come from this node:
 * a stall would hold off their sender on a one-CPU guest, and the waits
 * of ps_port_recv() and ps_port_wait() then sleep in poll() on the NIC
 * and the doorbell.
 */
int ps_port_stall(ps_port_t *p, int ms);

/* Packets dropped on this node (no such port, malformed); pool-wide. */
unsigned long ps_port_dropped(const ps_port_t *p);

#endif /* PS_PORTS_H */
