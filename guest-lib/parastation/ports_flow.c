/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ports: flow control between nodes (see ports.c for the layer).
 *
 * This file holds the protocol: eager credit and grants, the control
 * packets owed and received, the sender's wait for room, and what happens
 * to dead senders and fresh pools.  Its state is struct peer in the pool;
 * the blocks it accounts for are managed by ports_pool.c.
 *
 * Flow control.  A packet taken from the NIC needs a block, and the FIFO
 * is one queue for all senders: if the pool were full of messages that are
 * still in reassembly, their next fragments would wait behind a packet
 * that has no block, for ever.  So a sender must hold room at the
 * receiving node for the whole message before its first fragment leaves:
 *
 *  - Eager credit.  Every node lets every node (itself too) have up to E
 *    blocks of its pool, E = (blocks - RESERVE - G) / nodes.  A message of
 *    k <= E blocks goes at once if the sender's count of its blocks at
 *    the receiver ("out") leaves room for k more; the count is in the
 *    sending node's pool, shared by its processes.
 *  - Grants.  E is below the 134 blocks of a 64 KiB message on 4 nodes
 *    and more, so the rest of the pool, G >= 134 blocks, is lent for one
 *    message at a time: a message of k > E blocks first asks for a
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
 * memory (ports_stash): they may hold the credit that the process we wait for
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

#include "ports_int.h"

#define RESEND_MS	1000	/* a request unanswered this long goes again */
#define PROBE_MS	5000	/* a grant unused this long while others wait
				 * is checked with its holder's node ... */
#define PROBES		3	/* ... and taken back after so many checks
				 * that nobody there answered */

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
int ports_ctl_flush(ps_port_t *p)
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

/* n blocks of node s arrive: count them against its credit or grant. */
void ports_charge(ps_port_t *p, unsigned int s, int granted, uint32_t n)
{
	struct peer *q = PEER(p, s);
	uint32_t in_grant = 0;

	if (!granted) {
		q->held += n;
		return;
	}
	if (q->rgstate == RG_GRANTED && q->rgleft) {
		in_grant = n < q->rgleft ? n : q->rgleft;
		q->rgt = now_ms();
		q->rprobes = 0;
		q->rgleft -= in_grant;
		if (!q->rgleft)
			q->rgstate = RG_NONE;	/* all there */
	}
	p->pl->gcommit += n - in_grant;	/* not granted: count them all the same */
}

/* n blocks of node s are free again. */
void ports_uncharge(ps_port_t *p, unsigned int s, int granted, uint32_t n)
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
		ports_drop_partials(p, n, 1);
		end_grant(p, n);
		revoked = 1;
	}
	if (revoked)
		try_grant(p);
}

void ports_on_ctl(ps_port_t *p, unsigned int s, const struct ctl *c)
{
	struct pool *pl = p->pl;
	struct peer *q = PEER(p, s);
	uint32_t m, prev;

	switch (c->type) {
	case CT_CREQ:		/* s wants credit */
		if (c->tag == q->rctag && q->rcstate != RC_NONE) {
			if (q->rcstate == RC_WAIT) {	/* sent again */
				ports_reclaim_dead(p);
				check_credit(p, s);
			}
			break;
		}
		if (c->b & CREQ_FRESH) {	/* s's pool is new */
			ports_drop_partials(p, s, 0);
			end_grant(p, s);
			try_grant(p);
		}
		unpend(p, s, PD_CREPLY);
		q->rctag = c->tag;
		q->rcwant = c->a;
		q->rcstate = RC_WAIT;
		check_credit(p, s);
		if (q->rcstate == RC_WAIT) {
			ports_reclaim_dead(p);
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
				ports_reclaim_dead(p);
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
			ports_reclaim_dead(p);
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
			ports_drop_partials(p, s, 1);
			end_grant(p, s);
			try_grant(p);
		}
		break;
	case CT_PROBE:		/* is our grant there still used? */
		if (c->tag == q->gtag && q->gstate != GS_NONE &&
		    ports_alive(q->gpid)) {
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
		m = ports_partial_find(p, s, c->a, &prev);
		if (m && B(p, m)->msgid == c->b) {
			ports_partial_unlink(p, m, prev);
			if (B(p, m)->sport & SPORT_GRANT)
				end_grant(p, s);
			ports_msg_free(p, m);
			pl->dropped++;
		}
		break;
	}
}

/* ---- this node as sender (lock held) ---- */

/* Give up our grant slot for d (the message will not go, or not whole). */
void ports_release_slot(ps_port_t *p, unsigned int d)
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
void ports_reap(ps_port_t *p)
{
	struct pool *pl = p->pl;
	struct peer *q;
	unsigned int n;
	int i;

	for (i = 0; i < PS_PORTS_MAX; i++)
		if (pl->port[i].rleft && pl->port[i].owner != p->pid &&
		    !ports_alive(pl->port[i].owner)) {
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
		if (q->gpid && q->gpid != p->pid && !ports_alive(q->gpid))
			ports_release_slot(p, n);
	}
}

/* ports_reap() now and then, while we wait anyway */
void ports_reap_sometimes(ps_port_t *p)
{
	int64_t t = now_ms();

	if (t - p->reap_t >= REAP_MS) {
		p->reap_t = t;
		ports_reap(p);
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
			ports_release_slot(p, d);	/* not ours to use */
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

/*
 * Get room at d for k fragments (see try_acquire), waiting as long as it
 * takes: the answers come in through ports_drain(), ours or another process's.
 * Returns 0 eager, 1 granted, -1 error.
 */
int ports_acquire(ps_port_t *p, unsigned int d, uint32_t k, uint32_t msgid,
		  int timeout_ms)
{
	struct pool *pl = p->pl;
	struct peer *q = PEER(p, d);
	int r, stalled, ev, err;
	int64_t t, deadline = 0;	/* 0: not yet known, or forever */

	for (;;) {
		ports_lock(p);
		ports_ctl_flush(p);
		r = try_acquire(p, d, k, msgid);
		if (r) {
			ports_unlock(p);
			return r < 0 ? -1 : r - 1;
		}
		stalled = ports_drain(p);
		if (stalled >= 0 && (ports_stash(p) || stalled > 0))
			stalled = ports_drain(p);
		err = errno;
		ports_reap_sometimes(p);
		t = now_ms();
		/* the clock from the first wait on: room needs none */
		if (timeout_ms >= 0 && !deadline)
			deadline = t + timeout_ms + !timeout_ms;
		if (q->creq && q->csent && t - q->ct >= RESEND_MS) {
			q->ct = t;	/* d's pool may have been zeroed */
			pend(p, d, PD_CREQ);
		}
		if (q->gpid == p->pid && q->gstate == GS_WAIT && q->gsent &&
		    t - q->gt >= RESEND_MS) {
			q->gt = t;
			pend(p, d, PD_GREQ);
		}
		ports_ctl_flush(p);
		r = try_acquire(p, d, k, msgid);
		ev = pl->npend ? PS_HAL_RX | PS_HAL_TX : PS_HAL_RX;
		if (!r && (timeout_ms == PS_PORT_NO_WAIT ||
			   (deadline && t >= deadline))) {
			stalled = -1;
			err = ETIMEDOUT;
		}
		if (!r && stalled < 0 && q->gpid == p->pid)
			ports_release_slot(p, d);
		ports_unlock(p);
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
			ports_lock(p);
			if (q->gpid == p->pid)
				ports_release_slot(p, d);
			ports_unlock(p);
			errno = err;
			return -1;
		}
	}
}

/* A send fails half-way (lock held): the receiver drops the part. */
void ports_abandon(ps_port_t *p, unsigned int d, int granted, int some_sent)
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
		ports_release_slot(p, d);
}
