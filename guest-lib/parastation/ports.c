/*
 * Ports: many processes per node on one NIC (paper 4.2.2).
 *
 * Everything shared lives in the HAL's shared pool, addressed by offsets
 * (each process maps it elsewhere): one lock, the port table, the per-port
 * message queues, the messages in reassembly, per-node flow-control state
 * and a free list of blocks.  A block holds one fragment, so a message is
 * a chain of blocks and reassembly is appending.  Any process that holds
 * the lock takes in every packet the NIC has (demultiplexing), since a
 * packet for another port would otherwise block the FIFO for all.
 *
 * Flow control.  A packet taken from the NIC needs a block, and the FIFO
 * is one queue for all senders: if the pool were full of messages that are
 * still in reassembly, their next fragments would wait behind a packet
 * that has no block, for ever.  So a sender must hold room at the
 * receiving node for the whole message before its first fragment leaves:
 *
 *  - Eager credit.  Every node lets every node (itself too) have up to E
 *    blocks of its pool, E = (blocks - RESERVE - G) / nodes.  A message of
 *    k <= E fragments goes at once if the sender's count of its blocks at
 *    the receiver ("out") leaves room for k more; the count is in the
 *    sending node's pool, shared by its processes.
 *  - Grants.  E is below the 134 fragments of a 64 KiB message on 4 nodes
 *    and more, so the rest of the pool, G >= 134 blocks, is lent for one
 *    message at a time: a message of k > E fragments first asks for a
 *    grant (GREQ), the receiver commits k blocks of G when it has them
 *    (requests in arrival order) and answers GRANT; the fragments carry a
 *    flag, and the blocks go back to G when the message is freed.  A node
 *    has one grant request per destination at a time.
 *
 * Per-fragment credit out of a quota of pool/nodes alone would not do:
 * that quota is below 134 blocks on 4 nodes, and two half-sent messages
 * of one node could each wait for credit that only the other's completion
 * would free.  Hence room for a whole message, taken at once.
 *
 * Since every started message has all its blocks, it completes; the pool
 * never holds more than it promised, so a packet always finds a block;
 * control packets need none.  The deadlock is gone and nothing is dropped.
 *
 * Credit comes back on request only ("pull"): a sender that lacks credit
 * sends CREQ(want) and waits; the receiver answers CREPLY(held) once it
 * holds at most "want" of the sender's eager blocks, right away or when
 * its readers free them.  The answer is absolute: the sender sets out =
 * held + fragments it sent after the request + fragments reserved but not
 * yet sent.  The network keeps the order between two nodes, so "held"
 * covers everything sent before the request.  Why pull and absolute:
 *  - packets go only to a process that is waiting for them, so none is
 *    left in the FIFO of a node whose processes have gone (which would
 *    make the driver reset the board and confuse the node's next user);
 *  - a lost or stale count heals at the next request: a node whose pool
 *    the driver has zeroed answers with what it really holds;
 *  - a small-message ping-pong pays one extra round trip per E messages.
 * A first request to a node tells the sender E and G ("fresh": the
 * receiver then drops half-received messages of the sender's previous
 * pool, whose senders are gone).  An unanswered request is sent again
 * after RESEND_MS, in case the receiver's pool was zeroed meanwhile.
 *
 * A process waiting for credit or a grant takes in packets, answers
 * requests, and moves its own port's messages out of the pool into its
 * memory (stash): they may hold the credit that the process we wait for
 * waits for (two processes that send to each other without receiving).
 * Dead processes: a sender found dead half-way through a message makes
 * its node send ABORT (the receiver drops the part) and give back its
 * grant (GREL); queues of dead receivers are freed when a request cannot
 * be met; a grant without progress for PROBE_MS while others wait is
 * checked with its holder's node (PROBE: BUSY or GREL), and taken back
 * when nobody there has answered PROBES probes.  docs/parastation-lib.md
 * has the wire format and lists the corner cases that remain.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ps_hal.h"
#include "ps_ports.h"

_Static_assert(sizeof(struct ps_port_hdr) + PS_PORT_FRAG_DATA == PS_HAL_MTU,
	       "a fragment fills one packet");

#define MIN_BLOCKS	16
#define WAIT_MS		2	/* longest sleep before looking again: another
				 * process may have queued our message */
#define POOL_READY	0x32505350u	/* "PSP2": set up by this protocol */
#define MSG_FRAGS	((PS_PORT_MSG_MAX + PS_PORT_FRAG_DATA - 1) / \
			 PS_PORT_FRAG_DATA)	/* 134 */
#define RESERVE		2	/* blocks promised to nobody */
#define RESEND_MS	1000	/* a request unanswered this long goes again */
#define PROBE_MS	5000	/* a grant unused this long while others wait
				 * is checked with its holder's node ... */
#define PROBES		3	/* ... and taken back after so many checks
				 * that nobody there answered */
#define CLOSE_MS	1000	/* close tries this long to send what it owes */
#define REAP_MS		100	/* a waiting process looks for dead senders */

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
	uint8_t data[PS_PORT_FRAG_DATA];
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
	} port[PS_PORTS_MAX];
};

#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)

/* A message for this port, moved out of the pool by stash() */
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
	int64_t reap_t;			/* last look for dead senders */
};

static inline struct blk *B(ps_port_t *p, uint32_t off)
{
	return (struct blk *)((char *)p->pl + off);
}

static inline struct peer *PEER(ps_port_t *p, unsigned int n)
{
	return (struct peer *)((char *)p->pl + p->pl->peers_off) + n;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- the lock: CAS on a pool word, hand-off instead of spinning ---- */

static void lock(ps_port_t *p)
{
	uint32_t z;
	unsigned int n = 0;
	struct timespec ts = { 0, 50000 };

	for (;;) {
		z = 0;
		if (__atomic_compare_exchange_n(&p->pl->lock, &z, p->pid, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		/* A holder that died must not block the node for ever. */
		if ((++n & 63) == 0 && kill((pid_t)z, 0) && errno == ESRCH &&
		    __atomic_compare_exchange_n(&p->pl->lock, &z, p->pid, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		/* Let the holder run; it never sleeps inside.  Should it be
		 * on another CPU for long, stop burning ours. */
		if (n < 1000)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
}

static void unlock(ps_port_t *p)
{
	__atomic_store_n(&p->pl->lock, 0, __ATOMIC_RELEASE);
}

static int alive(uint32_t pid)
{
	int err = errno, r;

	r = pid && !(kill((pid_t)pid, 0) && errno == ESRCH);
	errno = err;
	return r;
}

/* ---- control packets owed (lock held) ---- */

static void pend(ps_port_t *p, unsigned int n, uint32_t bit)
{
	struct peer *q = PEER(p, n);

	if (!(q->pend & bit)) {
		q->pend |= bit;
		p->pl->npend++;
	}
}

static void unpend(ps_port_t *p, unsigned int n, uint32_t bit)
{
	struct peer *q = PEER(p, n);

	if (q->pend & bit) {
		q->pend &= ~bit;
		p->pl->npend--;
	}
}

/*
 * Send the control packets we owe, aborts first.  Returns 0 when all are
 * out, else the error of the send that failed (EAGAIN: the NIC is full;
 * they stay owed, and data waits behind them).
 */
static int ctl_flush(ps_port_t *p)
{
	struct pool *pl = p->pl;
	struct peer *q;
	struct ctl c;
	uint32_t bit;
	unsigned int n, i;

	if (!pl->npend)
		return 0;
	for (i = 0; i < PS_PORTS_MAX; i++) {
		if (!pl->port[i].abort)
			continue;
		c = (struct ctl){ .dport = CTL_PORT, .type = CT_ABORT,
				  .a = i, .b = pl->port[i].amsgid };
		if (ps_hal_send(p->hal, pl->port[i].adest, &c, sizeof(c)))
			return errno;
		pl->port[i].abort = 0;
		pl->npend--;
	}
	for (n = 0; n < pl->nodes; n++) {
		q = PEER(p, n);
		while (q->pend) {
			bit = q->pend & -q->pend;
			c = (struct ctl){ .dport = CTL_PORT };
			switch (bit) {
			case PD_CREQ:
				c.type = CT_CREQ;
				c.tag = q->ctag;
				c.a = q->cwant;
				c.b = q->known ? 0 : CREQ_FRESH;
				break;
			case PD_CREPLY:
				c.type = CT_CREPLY;
				c.tag = q->rctag;
				c.a = q->held;
				c.b = pl->elimit;
				c.c = pl->gmax;
				break;
			case PD_GREQ:
				c.type = CT_GREQ;
				c.tag = q->gtag;
				c.a = q->gk;
				break;
			case PD_GRANT:
				c.type = CT_GRANT;
				c.tag = q->rgtag;
				c.a = q->rgk;
				break;
			case PD_GREL:
				c.type = CT_GREL;
				c.tag = q->grel;
				break;
			case PD_BUSY:
				c.type = CT_BUSY;
				c.tag = q->busy;
				break;
			default:
				c.type = CT_PROBE;
				c.tag = q->rgtag;
				break;
			}
			if (ps_hal_send(p->hal, n, &c, sizeof(c)))
				return errno;
			q->pend &= ~bit;
			pl->npend--;
			if (bit == PD_CREQ) {
				q->ct = now_ms();
				if (!q->csent) {	/* "since" counts from here */
					q->csent = 1;
					q->since = 0;
				}
			} else if (bit == PD_CREPLY) {
				q->rcstate = RC_DONE;
			} else if (bit == PD_GREQ) {
				q->gt = now_ms();
				q->gsent = 1;
			}
		}
	}
	pl->npend = 0;		/* all out (and a count gone wrong heals) */
	return 0;
}

/* ---- this node as receiver: what the others may have (lock held) ---- */

/* Answer node s's credit request once it holds few enough of our blocks. */
static void check_credit(ps_port_t *p, unsigned int s)
{
	struct peer *q = PEER(p, s);

	if (q->rcstate == RC_WAIT && q->held <= q->rcwant) {
		q->rcstate = RC_REPLY;
		pend(p, s, PD_CREPLY);
	}
}

/* Grant room in G to waiting requests, oldest first. */
static void try_grant(ps_port_t *p)
{
	struct pool *pl = p->pl;
	struct peer *q, *best;
	unsigned int n, bn = 0;

	while (pl->gqueued) {
		best = NULL;
		for (n = 0; n < pl->nodes; n++) {
			q = PEER(p, n);
			if (q->rgstate == RG_QUEUED &&
			    (!best || (int32_t)(q->rgseq - best->rgseq) < 0)) {
				best = q;
				bn = n;
			}
		}
		if (!best) {
			pl->gqueued = 0;
			break;
		}
		if (pl->gcommit + best->rgk > pl->gmax)
			break;
		pl->gcommit += best->rgk;
		best->rgleft = best->rgk;
		best->rgstate = RG_GRANTED;
		best->rgt = now_ms();
		best->rprobes = 0;
		pl->gqueued--;
		pend(p, bn, PD_GRANT);
	}
}

/* Node s's grant ends before all of it came: the rest goes back to G. */
static void end_grant(ps_port_t *p, unsigned int s)
{
	struct pool *pl = p->pl;
	struct peer *q = PEER(p, s);

	if (q->rgstate == RG_QUEUED && pl->gqueued)
		pl->gqueued--;
	pl->gcommit -= q->rgleft < pl->gcommit ? q->rgleft : pl->gcommit;
	q->rgleft = 0;
	q->rgstate = RG_NONE;
	unpend(p, s, PD_GRANT);
	unpend(p, s, PD_PROBE);
}

/* A block of node s arrives: count it against its credit or its grant. */
static void charge(ps_port_t *p, unsigned int s, int granted)
{
	struct peer *q = PEER(p, s);

	if (!granted) {
		q->held++;
	} else if (q->rgstate == RG_GRANTED && q->rgleft) {
		q->rgt = now_ms();
		q->rprobes = 0;
		if (!--q->rgleft)
			q->rgstate = RG_NONE;	/* all there */
	} else {
		p->pl->gcommit++;	/* not granted: count it all the same */
	}
}

/* n blocks of node s are free again. */
static void uncharge(ps_port_t *p, unsigned int s, int granted, uint32_t n)
{
	struct pool *pl = p->pl;
	struct peer *q;

	if (s >= pl->nodes)
		return;
	q = PEER(p, s);
	if (granted) {
		pl->gcommit -= n < pl->gcommit ? n : pl->gcommit;
		try_grant(p);
	} else {
		q->held -= n < q->held ? n : q->held;
		check_credit(p, s);
	}
}

/* ---- blocks and queues (lock held) ---- */

static uint32_t blk_alloc(ps_port_t *p)
{
	uint32_t b = p->pl->free;

	if (b) {
		p->pl->free = B(p, b)->next;
		p->pl->nfree--;
		memset(B(p, b), 0, offsetof(struct blk, data));
	}
	return b;
}

/* Free message m (its first block) and give its room back. */
static void msg_free(ps_port_t *p, uint32_t m)
{
	uint32_t b, n, cnt = 0;
	unsigned int src = B(p, m)->src;
	int granted = !!(B(p, m)->sport & SPORT_GRANT);

	for (b = m; b; b = n) {
		n = B(p, b)->next;
		B(p, b)->next = p->pl->free;
		p->pl->free = b;
		p->pl->nfree++;
		cnt++;
	}
	uncharge(p, src, granted, cnt);
}

static void queue_free(ps_port_t *p, int port)
{
	uint32_t m, n;

	m = p->pl->port[port].head;
	p->pl->port[port].head = p->pl->port[port].tail = 0;
	for (; m; m = n) {
		n = B(p, m)->qnext;
		msg_free(p, m);
		p->pl->dropped++;
	}
}

/* Out of blocks (only if a node took more than its due): messages for
 * ports nobody has open go first. */
static void reclaim(ps_port_t *p)
{
	int i;

	for (i = 0; i < PS_PORTS_MAX; i++)
		if (p->pl->port[i].head && !alive(p->pl->port[i].owner))
			queue_free(p, i);
}

/* A request cannot be met: free the queues of processes that died. */
static void reclaim_dead(ps_port_t *p)
{
	int i;

	for (i = 0; i < PS_PORTS_MAX; i++)
		if (p->pl->port[i].head && p->pl->port[i].owner &&
		    !alive(p->pl->port[i].owner))
			queue_free(p, i);
}

/* The message in reassembly from (src, sport), and the one before it. */
static uint32_t partial_find(ps_port_t *p, unsigned int src, unsigned int sport,
			     uint32_t *prev)
{
	uint32_t m, pv = 0;

	for (m = p->pl->plist; m; pv = m, m = B(p, m)->qnext)
		if (B(p, m)->src == src &&
		    (B(p, m)->sport & ~SPORT_GRANT) == sport)
			break;
	*prev = pv;
	return m;
}

static void partial_unlink(ps_port_t *p, uint32_t m, uint32_t prev)
{
	if (prev)
		B(p, prev)->qnext = B(p, m)->qnext;
	else
		p->pl->plist = B(p, m)->qnext;
	B(p, m)->qnext = 0;
}

/* Drop half-received messages of node s (granted ones only, or all):
 * their senders are gone. */
static void drop_partials(ps_port_t *p, unsigned int s, int granted_only)
{
	uint32_t m, prev = 0, n;

	for (m = p->pl->plist; m; m = n) {
		n = B(p, m)->qnext;
		if (B(p, m)->src == s &&
		    (!granted_only || (B(p, m)->sport & SPORT_GRANT))) {
			partial_unlink(p, m, prev);
			msg_free(p, m);
			p->pl->dropped++;
		} else {
			prev = m;
		}
	}
}

/* ---- control packets received (lock held) ---- */

static uint32_t unsent(ps_port_t *p, unsigned int d)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < PS_PORTS_MAX; i++)
		if (p->pl->port[i].rleft && p->pl->port[i].rdest == d &&
		    !p->pl->port[i].rgrant)
			n += p->pl->port[i].rleft;
	return n;
}

/*
 * Grant requests wait: ask the holders of grants that made no progress
 * for PROBE_MS whether they still use them.  A node that has not answered
 * PROBES times has no process in the library: the holder is dead (or
 * stopped), take the grant back.
 */
static void probe_stale(ps_port_t *p)
{
	struct peer *q;
	int64_t t = now_ms();
	unsigned int n;
	int revoked = 0;

	for (n = 0; n < p->pl->nodes; n++) {
		q = PEER(p, n);
		if (q->rgstate != RG_GRANTED || t - q->rgt < PROBE_MS)
			continue;
		q->rgt = t;
		if (q->rprobes++ < PROBES) {
			pend(p, n, PD_PROBE);
			continue;
		}
		drop_partials(p, n, 1);
		end_grant(p, n);
		revoked = 1;
	}
	if (revoked)
		try_grant(p);
}

static void on_ctl(ps_port_t *p, unsigned int s, const struct ctl *c)
{
	struct pool *pl = p->pl;
	struct peer *q = PEER(p, s);
	uint32_t m, prev;

	switch (c->type) {
	case CT_CREQ:		/* s wants credit */
		if (c->tag == q->rctag && q->rcstate != RC_NONE) {
			if (q->rcstate == RC_WAIT) {	/* sent again */
				reclaim_dead(p);
				check_credit(p, s);
			}
			break;
		}
		if (c->b & CREQ_FRESH) {	/* s's pool is new */
			drop_partials(p, s, 0);
			end_grant(p, s);
			try_grant(p);
		}
		unpend(p, s, PD_CREPLY);
		q->rctag = c->tag;
		q->rcwant = c->a;
		q->rcstate = RC_WAIT;
		check_credit(p, s);
		if (q->rcstate == RC_WAIT) {
			reclaim_dead(p);
			check_credit(p, s);
		}
		break;
	case CT_CREPLY:		/* s answers our credit request */
		if (q->creq && q->csent && c->tag == q->ctag) {
			q->known = 1;
			q->limit = c->b;
			q->gmax = c->c;
			q->out = c->a + q->since + unsent(p, s);
			q->creq = 0;
			unpend(p, s, PD_CREQ);
		}
		break;
	case CT_GREQ:		/* s wants a grant */
		if (c->tag == q->rgtag) {	/* sent again, or done */
			if (q->rgstate == RG_QUEUED) {
				reclaim_dead(p);
				try_grant(p);
				if (q->rgstate == RG_QUEUED)
					probe_stale(p);
			}
			break;
		}
		end_grant(p, s);	/* one at a time: an older one is dead */
		q->rgtag = c->tag;
		q->rgk = c->a;
		q->rgseq = ++pl->gseq;
		q->rgstate = RG_QUEUED;
		pl->gqueued++;
		try_grant(p);
		if (q->rgstate == RG_QUEUED) {
			reclaim_dead(p);
			try_grant(p);
		}
		break;
	case CT_GRANT:		/* s grants our request */
		if (q->gstate == GS_WAIT && q->gsent && c->tag == q->gtag &&
		    c->a >= q->gk)
			q->gstate = GS_GRANTED;
		break;
	case CT_GREL:		/* s gives its grant back */
		if (c->tag == q->rgtag && q->rgstate != RG_NONE) {
			drop_partials(p, s, 1);
			end_grant(p, s);
			try_grant(p);
		}
		break;
	case CT_PROBE:		/* is our grant there still used? */
		if (c->tag == q->gtag && q->gstate != GS_NONE &&
		    alive(q->gpid)) {
			q->busy = c->tag;
			pend(p, s, PD_BUSY);
		} else {
			q->grel = c->tag;
			pend(p, s, PD_GREL);
		}
		break;
	case CT_BUSY:		/* s still uses its grant */
		if (c->tag == q->rgtag && q->rgstate == RG_GRANTED) {
			q->rprobes = 0;
			q->rgt = now_ms();
		}
		break;
	case CT_ABORT:		/* a sender of s died half-way */
		m = partial_find(p, s, c->a, &prev);
		if (m && B(p, m)->msgid == c->b) {
			partial_unlink(p, m, prev);
			if (B(p, m)->sport & SPORT_GRANT)
				end_grant(p, s);
			msg_free(p, m);
			pl->dropped++;
		}
		break;
	}
}

/* ---- taking in packets ---- */

static void pool_setup(struct pool *pl, size_t size, unsigned int nodes,
		       uint32_t seed)
{
	uint32_t off, sz = sizeof(struct blk), avail;
	size_t boff;

	pl->nodes = nodes;
	pl->peers_off = ALIGN8(sizeof(struct pool));
	boff = ALIGN8(pl->peers_off + (size_t)nodes * sizeof(struct peer));
	pl->free = 0;
	pl->nblocks = 0;
	/* free list in address order, ending with 0 */
	for (off = boff + ((size - boff) / sz - 1) * sz;
	     off >= boff && size >= boff + sz; off -= sz) {
		((struct blk *)((char *)pl + off))->next = pl->free;
		pl->free = off;
		pl->nblocks++;
	}
	pl->nfree = pl->nblocks;
	/* G holds one message of 64 KiB at least, E is the rest per node */
	avail = pl->nblocks - RESERVE;
	pl->gmax = avail < MSG_FRAGS ? avail : MSG_FRAGS;
	if (pl->gmax < avail / 4)
		pl->gmax = avail / 4;
	pl->elimit = (avail - pl->gmax) / nodes;
	pl->tag = seed;
}

/*
 * Take in packets while there is room (lock held).  Returns 1 when it
 * stopped with packets waiting for room in the pool, 0 when the NIC has
 * no more, -1 on error.
 */
static int drain(ps_port_t *p)
{
	struct pool *pl = p->pl;
	struct ps_port_hdr h;
	struct ctl c;
	unsigned int src, sport;
	size_t plen, n;
	uint32_t b, m, prev;
	int i, granted;

	for (;;) {
		if (!pl->nfree)
			reclaim(p);
		/* room first: a peek takes the header out of the NIC.  Flow
		 * control keeps RESERVE blocks free: control packets, which
		 * need none, can always come in. */
		if (!pl->nfree)
			return !!(ps_hal_status(p->hal) & PS_HAL_RX);
		i = ps_hal_receive_header(p->hal, &src, &plen);
		if (i <= 0) {
			if (!i)
				ctl_flush(p);
			return i;
		}
		if (plen < sizeof(h) || src >= pl->nodes ||
		    ps_hal_receive_body(p->hal, &h, sizeof(h)))
			goto drop;
		if (h.dport == CTL_PORT) {
			if (plen < sizeof(c) ||
			    ps_hal_receive_body(p->hal, &c.c, sizeof(c.c)))
				goto drop;
			memcpy(&c, &h, sizeof(h));
			ps_hal_receive_body(p->hal, NULL, 0);
			on_ctl(p, src, &c);
			continue;
		}
		granted = !!(h.sport & SPORT_GRANT);
		sport = h.sport & ~SPORT_GRANT;
		if (h.dport >= PS_PORTS_MAX || sport >= PS_PORTS_MAX ||
		    h.total > PS_PORT_MSG_MAX || h.offset > h.total)
			goto drop;
		n = h.total - h.offset;
		if (n > PS_PORT_FRAG_DATA)
			n = PS_PORT_FRAG_DATA;
		if (n > plen - sizeof(h))
			goto drop;
		m = partial_find(p, src, sport, &prev);
		if (h.offset == 0) {
			if (m) {	/* can never complete */
				partial_unlink(p, m, prev);
				msg_free(p, m);
				pl->dropped++;
			}
			m = b = blk_alloc(p);
			B(p, m)->total = h.total;
			B(p, m)->msgid = h.msgid;
			B(p, m)->src = src;
			B(p, m)->sport = h.sport;
			B(p, m)->last = m;
			prev = 0;
		} else {
			if (!m || B(p, m)->msgid != h.msgid ||
			    B(p, m)->got != h.offset || B(p, m)->sport != h.sport)
				goto drop;
			b = blk_alloc(p);
			B(p, B(p, m)->last)->next = b;
			B(p, m)->last = b;
		}
		charge(p, src, granted);
		if (ps_hal_receive_body(p->hal, B(p, b)->data, n))
			return -1;
		ps_hal_receive_body(p->hal, NULL, 0);
		B(p, b)->len = n;
		B(p, m)->got += n;
		if (B(p, m)->got == B(p, m)->total) {
			if (h.offset)
				partial_unlink(p, m, prev);
			if (pl->port[h.dport].tail)
				B(p, pl->port[h.dport].tail)->qnext = m;
			else
				pl->port[h.dport].head = m;
			pl->port[h.dport].tail = m;
		} else if (h.offset == 0) {
			B(p, m)->qnext = pl->plist;
			pl->plist = m;
		}
		continue;
drop:
		pl->dropped++;
		ps_hal_receive_body(p->hal, NULL, 0);
	}
}

/* ---- this node as sender (lock held) ---- */

/* Give up our grant slot for d (the message will not go, or not whole). */
static void release_slot(ps_port_t *p, unsigned int d)
{
	struct peer *q = PEER(p, d);

	unpend(p, d, PD_GREQ);
	if (q->gstate != GS_NONE && q->gsent) {
		q->grel = q->gtag;
		pend(p, d, PD_GREL);
	}
	q->gpid = 0;
	q->gstate = GS_NONE;
}

/* Senders of this node that died half-way: tell the receivers. */
static void reap(ps_port_t *p)
{
	struct pool *pl = p->pl;
	struct peer *q;
	unsigned int n;
	int i;

	for (i = 0; i < PS_PORTS_MAX; i++)
		if (pl->port[i].rleft && pl->port[i].owner != p->pid &&
		    !alive(pl->port[i].owner)) {
			pl->port[i].rleft = 0;
			pl->port[i].adest = pl->port[i].rdest;
			pl->port[i].amsgid = pl->port[i].rmsgid;
			if (!pl->port[i].abort) {
				pl->port[i].abort = 1;
				pl->npend++;
			}
		}
	for (n = 0; n < pl->nodes; n++) {
		q = PEER(p, n);
		if (q->gpid && q->gpid != p->pid && !alive(q->gpid))
			release_slot(p, n);
	}
}

/* reap() now and then, while we wait anyway */
static void reap_sometimes(ps_port_t *p)
{
	int64_t t = now_ms();

	if (t - p->reap_t >= REAP_MS) {
		p->reap_t = t;
		reap(p);
	}
}

/* A request tag: never 0, which a zeroed pool holds. */
static uint32_t new_tag(ps_port_t *p)
{
	if (!++p->pl->tag)
		++p->pl->tag;
	return p->pl->tag;
}

static void credit_request(ps_port_t *p, unsigned int d, uint32_t want)
{
	struct peer *q = PEER(p, d);

	if (q->creq)
		return;
	q->creq = 1;
	q->csent = 0;
	q->ctag = new_tag(p);
	q->cwant = want;
	pend(p, d, PD_CREQ);
}

/*
 * Room at node d for a message of k fragments: 1 eager credit taken,
 * 2 our grant, 0 wait, -1 error (EMSGSIZE: d's pool can never hold it).
 */
static int try_acquire(ps_port_t *p, unsigned int d, uint32_t k,
		       uint32_t msgid)
{
	struct pool *pl = p->pl;
	struct peer *q = PEER(p, d);
	uint32_t want, other;
	int r = 0;

	if (!q->known) {	/* first: learn E and G */
		credit_request(p, d, ~0u);
		return 0;
	}
	if (k <= q->limit) {
		if (q->out + k <= q->limit) {
			q->out += k;
			r = 1;
		} else {
			/* ask for a batch: reply when d holds at most half */
			other = unsent(p, d);
			want = q->limit - k > other ? q->limit - k - other : 0;
			if (want > q->limit / 2)
				want = q->limit / 2;
			credit_request(p, d, want);
			return 0;
		}
	} else if (k > q->gmax) {
		errno = EMSGSIZE;
		return -1;
	} else if (q->gpid == p->pid) {
		if (q->gstate == GS_GRANTED && q->gk >= k)
			r = 2;
		else if (q->gstate == GS_GRANTED)
			release_slot(p, d);	/* not ours to use */
	} else if (!q->gpid) {
		q->gpid = p->pid;
		q->gstate = GS_WAIT;
		q->gtag = new_tag(p);
		q->gk = k;
		q->gsent = 0;
		pend(p, d, PD_GREQ);
	}
	if (r) {
		pl->port[p->id].rdest = d;
		pl->port[p->id].rleft = k;
		pl->port[p->id].rmsgid = msgid;
		pl->port[p->id].rgrant = r == 2;
	}
	return r;
}

static ssize_t take(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		    size_t len);

/*
 * We wait (lock held): move the messages queued for our port into our own
 * memory, in order.  Nobody else takes them, and they may hold what we
 * wait for: pool room (when the pool is full the NIC's FIFO stops, and
 * with it the network to this node), or the credit of a process that
 * waits for us.  Returns the number of messages moved.
 */
static int stash(ps_port_t *p)
{
	struct lmsg *l;
	uint32_t m;
	int n = 0;

	while ((m = p->pl->port[p->id].head)) {
		l = malloc(sizeof(*l) + B(p, m)->total);
		if (!l)
			break;
		l->len = take(p, &l->from, &l->fport, l->data, B(p, m)->total);
		l->next = NULL;
		*p->ltail = l;
		p->ltail = &l->next;
		n++;
	}
	return n;
}

/*
 * Get room at d for k fragments (see try_acquire), waiting as long as it
 * takes: the answers come in through drain(), ours or another process's.
 * Returns 0 eager, 1 granted, -1 error.
 */
static int acquire(ps_port_t *p, unsigned int d, uint32_t k, uint32_t msgid)
{
	struct pool *pl = p->pl;
	struct peer *q = PEER(p, d);
	int r, stalled, ev, err;
	int64_t t;

	for (;;) {
		lock(p);
		ctl_flush(p);
		r = try_acquire(p, d, k, msgid);
		if (r) {
			unlock(p);
			return r < 0 ? -1 : r - 1;
		}
		stalled = drain(p);
		if (stalled >= 0 && (stash(p) || stalled > 0))
			stalled = drain(p);
		err = errno;
		reap_sometimes(p);
		t = now_ms();
		if (q->creq && q->csent && t - q->ct >= RESEND_MS) {
			q->ct = t;	/* d's pool may have been zeroed */
			pend(p, d, PD_CREQ);
		}
		if (q->gpid == p->pid && q->gstate == GS_WAIT && q->gsent &&
		    t - q->gt >= RESEND_MS) {
			q->gt = t;
			pend(p, d, PD_GREQ);
		}
		ctl_flush(p);
		r = try_acquire(p, d, k, msgid);
		ev = pl->npend ? PS_HAL_RX | PS_HAL_TX : PS_HAL_RX;
		if (!r && stalled < 0 && q->gpid == p->pid)
			release_slot(p, d);
		unlock(p);
		if (r)
			return r < 0 ? -1 : r - 1;
		if (stalled < 0) {
			errno = err;
			return -1;
		}
		if (stalled)
			sleep_ms(1);
		else if (ps_hal_wait(p->hal, ev, WAIT_MS) < 0) {
			err = errno;
			lock(p);
			if (q->gpid == p->pid)
				release_slot(p, d);
			unlock(p);
			errno = err;
			return -1;
		}
	}
}

/* A send fails half-way (lock held): the receiver drops the part. */
static void abandon(ps_port_t *p, unsigned int d, int granted, int some_sent)
{
	struct pool *pl = p->pl;

	if (some_sent) {
		pl->port[p->id].adest = d;
		pl->port[p->id].amsgid = pl->port[p->id].rmsgid;
		if (!pl->port[p->id].abort) {
			pl->port[p->id].abort = 1;
			pl->npend++;
		}
	}
	pl->port[p->id].rleft = 0;
	if (granted && PEER(p, d)->gpid == p->pid)
		release_slot(p, d);
}

/* ---- the interface ---- */

ps_port_t *ps_port_open(int port)
{
	ps_port_t *p;
	struct pool *pl;
	struct timespec ts;
	size_t size, need;
	uint32_t z = 0, init;
	unsigned int nodes;
	int i, err = 0;

	if (port != PS_PORT_ANY && (port < 0 || port >= PS_PORTS_MAX)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = getpid();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->next_msgid = p->pid * 2654435761u ^ (uint32_t)ts.tv_nsec;
	p->hal = ps_hal_open(PS_HAL_SHARED);
	if (!p->hal) {
		err = errno;
		free(p);
		errno = err;
		return NULL;
	}
	nodes = ps_hal_nodes(p->hal);
	pl = p->pl = ps_hal_shared(p->hal, &size);
	need = ALIGN8(ALIGN8(sizeof(struct pool)) +
		      (size_t)nodes * sizeof(struct peer)) +
	       MIN_BLOCKS * sizeof(struct blk);
	if (!pl || size < need || size > UINT32_MAX) {
		err = ENOSPC;
		goto fail;
	}
	/* The first process sets the pool up; the driver zeroes it when
	 * the last one leaves, so "0" always means fresh. */
	if (__atomic_compare_exchange_n(&pl->init, &z, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		pool_setup(pl, size, nodes, p->next_msgid * 2246822519u);
		__atomic_store_n(&pl->init, POOL_READY, __ATOMIC_RELEASE);
	}
	for (i = 0; (init = __atomic_load_n(&pl->init, __ATOMIC_ACQUIRE)) !=
		    POOL_READY; i++) {
		if (init > 1) {		/* another version of this library */
			err = EPROTO;
			goto fail;
		}
		if (i > 100000) {
			err = EAGAIN;
			goto fail;
		}
		sched_yield();
	}
	if (pl->nodes != nodes) {
		err = EPROTO;
		goto fail;
	}
	lock(p);
	reap(p);
	if (port == PS_PORT_ANY) {
		for (i = 0; i < PS_PORTS_MAX && alive(pl->port[i].owner); i++)
			;
		if (i == PS_PORTS_MAX)
			err = EAGAIN;
		port = i;
	} else if (alive(pl->port[port].owner)) {
		err = EADDRINUSE;
	}
	if (!err) {
		if (pl->port[port].owner)	/* left by a dead process */
			queue_free(p, port);
		pl->port[port].owner = p->pid;
		pl->port[port].rleft = 0;
		p->id = port;
		p->ltail = &p->lhead;
	}
	ctl_flush(p);
	unlock(p);
	if (!err)
		return p;
fail:
	ps_hal_close(p->hal);
	free(p);
	errno = err;
	return NULL;
}

void ps_port_close(ps_port_t *p)
{
	struct pool *pl;
	struct lmsg *l;
	unsigned int n;
	int64_t t0;

	if (!p)
		return;
	pl = p->pl;
	lock(p);
	for (; (l = p->lhead); pl->dropped++) {
		p->lhead = l->next;
		free(l);
	}
	queue_free(p, p->id);	/* their credit goes back to the senders */
	for (n = 0; n < pl->nodes; n++)
		if (PEER(p, n)->gpid == p->pid)
			release_slot(p, n);
	pl->port[p->id].rleft = 0;
	pl->port[p->id].owner = 0;
	/* Send what we owe: answers to senders that wait for this node. */
	ctl_flush(p);
	for (t0 = now_ms(); pl->npend && now_ms() - t0 < CLOSE_MS;) {
		unlock(p);
		ps_hal_wait(p->hal, PS_HAL_TX | PS_HAL_RX, WAIT_MS);
		lock(p);
		if (drain(p) < 0)
			break;
		ctl_flush(p);
	}
	unlock(p);
	ps_hal_close(p->hal);
	free(p);
}

int ps_port_id(const ps_port_t *p)
{
	return p->id;
}

unsigned int ps_port_node(const ps_port_t *p)
{
	return ps_hal_node(p->hal);
}

unsigned int ps_port_nodes(const ps_port_t *p)
{
	return ps_hal_nodes(p->hal);
}

unsigned long ps_port_dropped(const ps_port_t *p)
{
	return __atomic_load_n(&p->pl->dropped, __ATOMIC_RELAXED);
}

int ps_port_send(ps_port_t *p, unsigned int dest, int dport, const void *buf,
		 size_t len)
{
	struct pool *pl;
	struct ps_port_hdr h;
	struct iovec iov[2];
	size_t off = 0, n;
	uint32_t k;
	int ret, err, stalled, granted;

	if (!p || dport < 0 || dport >= PS_PORTS_MAX || (len && !buf)) {
		errno = EINVAL;
		return -1;
	}
	if (dest >= ps_hal_nodes(p->hal)) {
		errno = EHOSTUNREACH;
		return -1;
	}
	if (len > PS_PORT_MSG_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	pl = p->pl;
	k = len ? (len + PS_PORT_FRAG_DATA - 1) / PS_PORT_FRAG_DATA : 1;
	h = (struct ps_port_hdr){ .dport = dport, .sport = p->id,
				  .msgid = p->next_msgid++, .total = len };
	granted = acquire(p, dest, k, h.msgid);
	if (granted < 0)
		return -1;
	if (granted)
		h.sport |= SPORT_GRANT;
	do {
		n = len - off < PS_PORT_FRAG_DATA ? len - off : PS_PORT_FRAG_DATA;
		h.offset = off;
		iov[0] = (struct iovec){ .iov_base = &h, .iov_len = sizeof(h) };
		iov[1] = (struct iovec){ .iov_base = (char *)buf + off,
					 .iov_len = n };
		for (;;) {
			/* one packet per lock: others get their turn */
			lock(p);
			/* control packets first: an ABORT must not come
			 * after a new message from its port */
			err = ctl_flush(p);
			ret = err ? -1 : ps_hal_sendv(p->hal, dest, iov, 2);
			if (!err)
				err = ret ? errno : 0;
			stalled = 0;
			if (!ret) {
				pl->port[p->id].rleft--;
				if (!granted && PEER(p, dest)->creq &&
				    PEER(p, dest)->csent)
					PEER(p, dest)->since++;
				if (granted && !pl->port[p->id].rleft) {
					PEER(p, dest)->gpid = 0;
					PEER(p, dest)->gstate = GS_NONE;
				}
			} else if (err == EAGAIN) {	/* make room, see rawdata */
				stalled = drain(p);
				if (stalled > 0 && stash(p))
					stalled = drain(p);
				if (stalled < 0)
					err = errno;
			}
			if (ret && err != EAGAIN)
				abandon(p, dest, granted, off > 0);
			unlock(p);
			if (!ret)
				break;
			if (err != EAGAIN) {
				errno = err;
				return -1;
			}
			if (stalled)
				sleep_ms(1);
			else if (ps_hal_wait(p->hal, PS_HAL_TX, WAIT_MS) < 0) {
				err = errno;
				lock(p);
				abandon(p, dest, granted, off > 0);
				unlock(p);
				errno = err;
				return -1;
			}
		}
		off += n;
	} while (off < len);
	return 0;
}

/* Take this port's first message if it fits (lock held). */
static ssize_t take(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		    size_t len)
{
	uint32_t m = p->pl->port[p->id].head, b;
	struct blk *fb;
	size_t off = 0;

	if (!m)
		return -2;
	fb = B(p, m);
	if (fb->total > len) {
		errno = EMSGSIZE;
		return -1;
	}
	p->pl->port[p->id].head = fb->qnext;
	if (!fb->qnext)
		p->pl->port[p->id].tail = 0;
	for (b = m; b; b = B(p, b)->next) {
		memcpy((char *)buf + off, B(p, b)->data, B(p, b)->len);
		off += B(p, b)->len;
	}
	if (from)
		*from = fb->src;
	if (fport)
		*fport = fb->sport & ~SPORT_GRANT;
	msg_free(p, m);		/* may owe the sender an answer now */
	return off;
}

ssize_t ps_port_recv(ps_port_t *p, unsigned int *from, int *fport, void *buf,
		     size_t len, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms, left;
	struct lmsg *l;
	ssize_t n;
	int stalled = 0, err;

	if (!p || (len && !buf)) {
		errno = EINVAL;
		return -1;
	}
	if (p->lhead) {		/* stashed while sending: they came first */
		l = p->lhead;
		if (l->len > len) {
			errno = EMSGSIZE;
			return -1;
		}
		if (l->len)
			memcpy(buf, l->data, l->len);
		if (from)
			*from = l->from;
		if (fport)
			*fport = l->fport;
		n = l->len;
		p->lhead = l->next;
		if (!p->lhead)
			p->ltail = &p->lhead;
		free(l);
		return n;
	}
	for (;;) {
		lock(p);
		n = take(p, from, fport, buf, len);
		if (n == -2) {
			stalled = drain(p);
			n = take(p, from, fport, buf, len);
		}
		err = errno;
		if (n == -2 && stalled >= 0)	/* we will wait */
			reap_sometimes(p);
		ctl_flush(p);	/* answers the freeing may owe */
		unlock(p);
		errno = err;
		if (n >= 0 || n == -1)
			return n;
		if (stalled < 0)
			return -1;
		left = deadline - now_ms();
		if (timeout_ms >= 0 && left <= 0) {
			errno = timeout_ms == 0 ? EAGAIN : ETIMEDOUT;
			return -1;
		}
		if (timeout_ms < 0 || left > WAIT_MS)
			left = WAIT_MS;
		if (stalled)
			sleep_ms(1);
		else if (ps_hal_wait(p->hal, PS_HAL_RX, left) < 0)
			return -1;
	}
}
