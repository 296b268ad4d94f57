/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ports layer internals, shared by its three files: ports.c (the
 * interface of ps_ports.h), ports_pool.c (the pool shared by the
 * processes of a node: lock, blocks, queues, reassembly) and ports_flow.c
 * (the flow-control protocol between nodes).  Not installed and not part
 * of the API.
 *
 * Here: the layout of the shared pool (addressed by offsets, since every
 * process maps it elsewhere), the control packets on the wire, a
 * process's handle, and the functions one file calls in another.  These
 * are called with the node's lock held (ports_lock()) unless said
 * otherwise.
 */
#ifndef PORTS_INT_H
#define PORTS_INT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ps_hal.h"
#include "ps_ports.h"

/*
 * The pool holds messages in blocks of BLOCK_DATA bytes: one ps1 packet's
 * worth.  A fragment (one HAL packet) carries as many whole blocks as the
 * HAL's MTU allows, so flow control counts blocks, whatever the NIC.
 */
#define BLOCK_DATA	492
_Static_assert(sizeof(struct ps_port_hdr) + BLOCK_DATA == 508,
	       "a ps1 fragment fills one block");
#define BLOCKS(n)	((n) ? ((n) + BLOCK_DATA - 1) / BLOCK_DATA : 1)

#define WAIT_MS		PS_PORT_POLL_MS	/* longest sleep before looking
					 * again: another process may have
					 * queued our message */
#define POOL_READY	0x34505350u	/* "PSP4": set up by this protocol */

/* Wire: data packets have dport < PS_PORTS_MAX, and SPORT_GRANT in sport
 * when the message uses a grant.  Control packets: */
#define CTL_PORT	0xffff
#define SPORT_GRANT	0x8000u

struct ctl {
	uint16_t dport;		/* CTL_PORT */
	uint16_t type;		/* CT_* */
	uint32_t tag;		/* names the request */
	uint32_t a, b, c;
};

enum {
	CT_CREQ = 1,	/* a: reply when you hold <= a of my blocks; b: fresh */
	CT_CREPLY,	/* a: your eager blocks I hold, b: E, c: G */
	CT_GREQ,	/* a: blocks wanted for one message */
	CT_GRANT,	/* a: blocks granted */
	CT_GREL,	/* that grant is given back, unused or half used */
	CT_PROBE,	/* is that grant still used? */
	CT_ABORT,	/* a: sport, b: msgid: its sender died, drop the part */
	CT_BUSY,	/* that grant is still used (answers CT_PROBE) */
};
#define CREQ_FRESH	1

/* control packets owed to a node (struct peer.pend) */
#define PD_CREQ		0x01
#define PD_CREPLY	0x02
#define PD_GREQ		0x04
#define PD_GRANT	0x08
#define PD_GREL		0x10
#define PD_PROBE	0x20
#define PD_BUSY		0x40

enum { GS_NONE, GS_WAIT, GS_GRANTED };		/* our grant slot */
enum { RC_NONE, RC_WAIT, RC_REPLY, RC_DONE };	/* its credit request */
enum { RG_NONE, RG_QUEUED, RG_GRANTED };	/* its grant */

struct blk {
	uint32_t next;		/* next block of this message, 0 = none */
	uint32_t qnext;		/* first block: next message in the queue, or
				 * in the reassembly list */
	uint32_t last;		/* first block: last block of the message */
	uint32_t len;		/* data bytes in this block */
	uint32_t total, got, msgid;	/* first block */
	uint16_t src, sport;		/* first block; sport with SPORT_GRANT */
	uint8_t data[BLOCK_DATA];
};

/* Flow control with one other node (or this one), both ways. */
struct peer {
	/* we send to it */
	uint32_t known;		/* it has answered a credit request */
	uint32_t limit, gmax;	/* its E and G */
	uint32_t out;		/* our eager blocks there, on the way or
				 * reserved: our count */
	uint32_t since;		/* eager fragments sent after the request */
	uint32_t creq, csent;	/* a request is open / has gone out */
	uint32_t ctag, cwant;
	uint32_t gpid;		/* process holding our grant slot, 0 none */
	uint32_t gstate;	/* GS_* */
	uint32_t gtag, gk, gsent;
	uint32_t grel;		/* tag of the GREL owed */
	uint32_t busy;		/* tag of the BUSY owed */
	uint32_t pend;		/* PD_*: control packets owed to it */
	int64_t ct, gt;		/* when the open requests last went (ms) */
	/* it sends to us */
	uint32_t held;		/* its eager blocks in our pool */
	uint32_t rcstate, rctag, rcwant;	/* its credit request */
	uint32_t rgstate, rgtag, rgk, rgseq, rgleft;	/* its grant */
	uint32_t rprobes;	/* probes of the grant not answered */
	int64_t rgt;		/* the grant's last fragment or probe (ms) */
};

struct pool {
	uint32_t init;		/* 0 fresh (zeroed), 1 being set up,
				 * POOL_READY ready */
	uint32_t lock;		/* 0 free, else the holder's pid */
	uint32_t nblocks, free, nfree;
	uint32_t dropped;
	uint32_t nodes, peers_off;	/* struct peer per node */
	uint32_t plist;		/* messages in reassembly, by qnext */
	uint32_t elimit, gmax;	/* what we let every node have: E, G */
	uint32_t gcommit;	/* blocks granted: there or to come */
	uint32_t gseq, gqueued;	/* grant requests: order, how many wait */
	uint32_t tag;		/* last request tag */
	uint32_t npend;		/* control packets owed, all nodes */
	struct {
		uint32_t owner;	/* pid, 0 = closed */
		uint32_t head, tail;
		/* the message being sent from this port */
		uint32_t rdest, rleft, rmsgid, rgrant;
		/* ABORT owed for a message its dead sender left */
		uint32_t abort, adest, amsgid;
		/* its owner's threads asleep, and those of them on the NIC:
		 * a message delivered in the pool rings its doorbell
		 * (ports_kick.c); no lock */
		uint32_t waiting, watching;
		/* a watcher that never woke (stopped, killed) counts no
		 * longer than this (ms) */
		int64_t watch_until;
		/* messages taken and sent by its owner: a child adopts the
		 * port only if its parent did nothing since the fork */
		uint32_t uses;
		/* its last message from the NIC (ms): it watches the NIC
		 * (ports_kick.c); no lock */
		int64_t rx_ms;
	} port[PS_PORTS_MAX];
};

#define REAP_MS		100	/* a waiting process looks for dead senders */
#define QUIET_CLOCK_LOOKS 16	/* ps_port_quiet() calls per clock read */
#define WARM_MS		20	/* a port with a message from the NIC as
				 * recent as this watches the NIC */

#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)

/* A message for this port, moved out of the pool by ports_stash() */
struct lmsg {
	struct lmsg *next;
	unsigned int from;
	int fport;
	size_t len;
	uint8_t data[];
};

struct ps_port {
	ps_hal_t *hal;
	struct pool *pl;
	int id;
	uint32_t pid;
	uint32_t next_msgid;
	struct lmsg *lhead, **ltail;	/* stashed, before those in the pool */
	int bell;			/* our doorbell (ports_kick.c), or -1 */
	uint32_t uses;			/* pool's port uses, as we last left it */
	uint64_t ring;			/* doorbells to ring once we unlock */
	int local_peers;		/* messages come from this node: sleep
					 * on NIC and doorbell, never stall */
	int64_t reap_t;			/* last look for dead senders */
	unsigned int quiet_looks;	/* ps_port_quiet() calls, see there */
};

static inline struct blk *B(ps_port_t *p, uint32_t off)
{
	return (struct blk *)((char *)p->pl + off);
}

static inline struct peer *PEER(ps_port_t *p, unsigned int n)
{
	return (struct peer *)((char *)p->pl + p->pl->peers_off) + n;
}

static inline int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- ports_pool.c ---- */

/* Take the node's lock (CAS on a pool word, hand-off instead of spinning). */
void ports_lock(ps_port_t *p);
/* Give the node's lock back. */
void ports_unlock(ps_port_t *p);
/* Process pid exists (errno kept); 0 never does.  No lock needed. */
int ports_alive(uint32_t pid);
/* Lay out a fresh pool (its first process, no lock): peers, blocks, E, G. */
void ports_pool_setup(struct pool *pl, size_t size, unsigned int nodes,
		      uint32_t seed);
/* Free message m (its first block) and give its room back. */
void ports_msg_free(ps_port_t *p, uint32_t m);
/* Free every message queued for port, counted as dropped. */
void ports_queue_free(ps_port_t *p, int port);
/* A request cannot be met: free the queues of processes that died. */
void ports_reclaim_dead(ps_port_t *p);
/* The message in reassembly from (src, sport), and the one before it. */
uint32_t ports_partial_find(ps_port_t *p, unsigned int src,
			    unsigned int sport, uint32_t *prev);
/* Take message m, found after prev, off the reassembly list. */
void ports_partial_unlink(ps_port_t *p, uint32_t m, uint32_t prev);
/* Drop half-received messages of node s (granted ones only, or all). */
void ports_drop_partials(ps_port_t *p, unsigned int s, int granted_only);
/* Take in packets while there is room: 1 some wait for room, 0 no more, -1. */
int ports_drain(ps_port_t *p);
/* A fragment to this node, straight into the pool (no NIC); -1 malformed. */
int ports_deliver(ps_port_t *p, const struct ps_port_hdr *h, const void *data,
		  size_t n);
/* Take this port's first message if it fits: its length, -2 none, -1. */
ssize_t ports_take(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		   size_t len);
/* Move this port's queued messages into our memory; how many moved. */
int ports_stash(ps_port_t *p);

/* ---- ports_kick.c (no lock needed) ---- */
void ports_bell_open(ps_port_t *p);
void ports_bell_close(ps_port_t *p);
/* Ring port's doorbell on this node. */
void ports_bell_ring(ps_port_t *p, int port);
/* timeout_ms (-1 forever) cut to at most max_ms, and to PS_PORT_POLL_MS
 * in a process whose threads sleep on ports (ports_kick.c) */
int ports_nap(int timeout_ms, int max_ms);
/* ps_port_sleep(), watching the NIC if must_watch (a stall does) */
int ports_sleep(ps_port_t *p, int must_watch, int *watch_nic);
/* Sleep in poll() on our doorbell, and the NIC if watch_nic
 * (ps_port_sleep()): PS_HAL_RX either rang, 0 timeout, -1 (EINTR,
 * ENODEV); *rung whether the doorbell did, for ps_port_awake(). */
int ports_bell_wait(ps_port_t *p, int timeout_ms, int watch_nic, int *rung);

/* ---- ports_flow.c ---- */

/* Send the control packets we owe: 0 all out, else the send's error. */
int ports_ctl_flush(ps_port_t *p);
/* A block of node s arrives: count it against its credit or its grant. */
void ports_charge(ps_port_t *p, unsigned int s, int granted, uint32_t n);
/* n blocks of node s are free again. */
void ports_uncharge(ps_port_t *p, unsigned int s, int granted, uint32_t n);
/* Control packet c came from node s. */
void ports_on_ctl(ps_port_t *p, unsigned int s, const struct ctl *c);
/* Give up our grant slot for d (the message will not go, or not whole). */
void ports_release_slot(ps_port_t *p, unsigned int d);
/* Senders of this node that died half-way: tell the receivers. */
void ports_reap(ps_port_t *p);
/* ports_reap() now and then, while we wait anyway. */
void ports_reap_sometimes(ps_port_t *p);
/*
 * Wait, taking the lock, for room at d for k fragments: 0 eager, 1 grant.
 * For timeout_ms (-1 forever; 0 one round of looking), then ETIMEDOUT.
 */
int ports_acquire(ps_port_t *p, unsigned int d, uint32_t k, uint32_t msgid,
		  int timeout_ms);
/* A send fails half-way: the receiver drops the part. */
void ports_abandon(ps_port_t *p, unsigned int d, int granted, int some_sent);

#endif /* PORTS_INT_H */
