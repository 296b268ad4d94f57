/*
 * Unit tests for the RDP core (guest-driver/myri/mcp/rdp.c): N nodes on a
 * simulated network with a virtual clock.  A seeded PRNG loses,
 * duplicates, delays and corrupts packets; every message carries its
 * (src, dst, number) and a pattern, so the receiver checks content,
 * order and exactly-once delivery, and the sender checks completion.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <stddef.h>
#include <string.h>

#include "prng.h"
#include "rdp.h"

#define MAX_NODES 8
#define LATENCY_US 5
#define STEP_US 100             /* the loop never sleeps longer */
#define CLOCK_START 0xfffe0000u /* the clock wraps during every run */

/* RDP_SEED=N shifts every seed, to try other runs. */
static uint64_t seed_base;

typedef struct Faults {
    double loss, corrupt, dup, reorder;
    double truncate;            /* cut short, CRC good: for sanity checks */
} Faults;

typedef struct Msg {
    uint8_t *buf;               /* the sender's, until send_done */
    int done, status, delivered;
    int delivered_before;       /* to its receiver's old incarnations */
    bool abandoned;             /* its sender died or restarted first */
    uint32_t done_at;
} Msg;

typedef struct Sim Sim;

typedef struct Node {
    Sim *sim;
    int id;
    RdpState st;
    bool dead;
    bool raw;                   /* garbage tests: count, check nothing */
    unsigned raw_rx;
    uint32_t nospace_until;     /* deliver() refuses before this time */
    uint32_t accept_every_us;   /* deliver() takes one packet this often */
    uint32_t next_accept;
    uint32_t next_msg[MAX_NODES];
    uint32_t next_at[MAX_NODES];    /* paced: no send before this */
    int64_t last_rx[MAX_NODES];
    int events[3][MAX_NODES];   /* by RdpEvent and peer */
} Node;

struct Sim {
    Prng rng;
    Faults f;
    RdpParams params;
    int n;
    uint32_t msgs;              /* per ordered pair */
    bool strict;                /* every message in turn, none failed */
    uint32_t pace_us;           /* mean gap between sends; 0: flood */
    uint32_t start, now;
    uint64_t settled, total;    /* messages done or abandoned, of all */
    GSequence *net;             /* Packet, by (time, id) */
    uint64_t pkt_id;
    uint32_t link_free[MAX_NODES][MAX_NODES];
    uint32_t data_rx_refusing[MAX_NODES];
    uint32_t first_fail_at;
    bool failed;
    Msg *msg;
    Node node[MAX_NODES];
};

typedef struct Packet {
    uint32_t time;
    uint64_t id;
    int to;
    bool crc_ok;
    uint32_t len;
    uint8_t data[];
} Packet;

static inline bool before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

static Msg *msg_at(Sim *s, int src, int dst, uint32_t no)
{
    return &s->msg[((size_t)src * MAX_NODES + dst) * s->msgs + no];
}

static uint32_t msg_len(int src, int dst, uint32_t no)
{
    return 8 + (no * 7919u + src * 131u + dst * 17u) % 240;
}

static void msg_fill(uint8_t *b, int src, int dst, uint32_t no)
{
    uint32_t len = msg_len(src, dst, no);

    b[0] = no;
    b[1] = no >> 8;
    b[2] = src;
    b[3] = dst;
    for (uint32_t i = 4; i < len; i++) {
        b[i] = no * 31 + i * 7 + src * 3 + dst;
    }
}

static gint packet_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
    const Packet *x = a, *y = b;

    if (x->time != y->time) {
        return before(x->time, y->time) ? -1 : 1;
    }
    return x->id < y->id ? -1 : x->id > y->id;
}

static void net_push(Sim *s, Packet *p, uint32_t time)
{
    p->time = time;
    p->id = s->pkt_id++;
    g_sequence_insert_sorted(s->net, p, packet_cmp, NULL);
}

/* --- RdpOps of a node: the network, the application ------------------- */

static void node_xmit(void *opaque, uint16_t peer, const uint8_t *hdr,
                      uint32_t hdr_len, const void *payload, uint32_t len)
{
    Node *nd = opaque;
    Sim *s = nd->sim;
    Packet *p;
    uint32_t *link, t;

    g_assert_false(nd->dead);
    if (prng_double(&s->rng) < s->f.loss) {
        return;
    }
    p = g_malloc(sizeof(*p) + hdr_len + len);
    p->to = peer;
    p->len = hdr_len + len;
    p->crc_ok = true;
    memcpy(p->data, hdr, hdr_len);
    memcpy(p->data + hdr_len, payload, len);
    if (prng_double(&s->rng) < s->f.corrupt) {
        int bits = 1 + prng_below(&s->rng, 3);

        for (int i = 0; i < bits; i++) {
            uint64_t bit = prng_below(&s->rng, p->len * 8);

            p->data[bit / 8] ^= 1u << (bit % 8);
        }
        p->crc_ok = false;
    }
    if (prng_double(&s->rng) < s->f.truncate) {
        p->len = prng_below(&s->rng, p->len);
    }
    /* Packets leave one by one, a microsecond per 64 bytes, FIFO. */
    link = &s->link_free[nd->id][peer];
    *link = (before(s->now, *link) ? *link : s->now) + 1 + p->len / 64;
    t = *link + LATENCY_US;
    if (prng_double(&s->rng) < s->f.reorder) {
        t += 1 + prng_below(&s->rng, 40);   /* later ones overtake it */
    }
    if (prng_double(&s->rng) < s->f.dup) {
        Packet *copy = g_memdup2(p, sizeof(*p) + p->len);

        net_push(s, copy, t + prng_below(&s->rng, 60));
    }
    net_push(s, p, t);
}

static int node_deliver(void *opaque, uint16_t peer, const uint8_t *payload,
                        uint32_t len)
{
    Node *nd = opaque;
    Sim *s = nd->sim;
    uint8_t expect[256];
    uint32_t no;
    Msg *m;

    if (before(s->now, nd->nospace_until)) {
        return RDP_DELIVER_NOSPACE;
    }
    if (nd->accept_every_us) {
        if (before(s->now, nd->next_accept)) {
            return RDP_DELIVER_NOSPACE;
        }
        nd->next_accept = s->now + nd->accept_every_us;
    }
    if (nd->raw) {
        nd->raw_rx++;
        return RDP_DELIVER_OK;
    }
    g_assert_cmpuint(len, >=, 4);
    no = payload[0] | payload[1] << 8;
    g_assert_cmpint(payload[2], ==, peer);
    g_assert_cmpint(payload[3], ==, nd->id);
    g_assert_cmpuint(no, <, s->msgs);
    g_assert_cmpuint(len, ==, msg_len(peer, nd->id, no));
    msg_fill(expect, peer, nd->id, no);
    g_assert_true(memcmp(payload, expect, len) == 0);

    m = msg_at(s, peer, nd->id, no);
    m->delivered++;
    g_assert_cmpint(m->delivered, ==, 1);
    if (s->strict) {
        g_assert_cmpint(no, ==, nd->last_rx[peer] + 1);
    } else {
        g_assert_cmpint(no, >, nd->last_rx[peer]);
    }
    nd->last_rx[peer] = no;
    return RDP_DELIVER_OK;
}

static void node_send_done(void *opaque, uint32_t cookie, int status)
{
    Node *nd = opaque;
    Sim *s = nd->sim;
    Msg *m = msg_at(s, nd->id, cookie / s->msgs, cookie % s->msgs);

    if (nd->raw) {
        return;
    }
    g_assert_false(m->abandoned);
    m->done++;
    g_assert_cmpint(m->done, ==, 1);
    m->status = status;
    m->done_at = s->now;
    g_clear_pointer(&m->buf, g_free);
    s->settled++;
    if (status != RDP_DONE_OK && !s->failed) {
        s->failed = true;
        s->first_fail_at = s->now;
    }
}

static void node_event(void *opaque, RdpEvent kind, uint16_t peer)
{
    Node *nd = opaque;

    g_assert_true(kind == RDP_EV_PEER_RESET || kind == RDP_EV_PEER_LOST);
    nd->events[kind][peer]++;
    if (kind == RDP_EV_PEER_LOST) {
        /* Every send failed before, and the OUT half is closed. */
        const RdpOut *o = &nd->st.peer[peer].out;

        g_assert_cmpuint(o->state, ==, RDP_OUT_CLOSED);
        g_assert_cmpuint(o->end, ==, o->una);
    }
}

static const RdpOps node_ops = {
    .xmit = node_xmit,
    .deliver = node_deliver,
    .send_done = node_send_done,
    .event = node_event,
};

/* --- the simulation loop --------------------------------------------- */

static void node_boot(Sim *s, int i)
{
    Node *nd = &s->node[i];
    uint32_t nonce = prng_next(&s->rng);

    g_assert_cmpint(rdp_init(&nd->st, &node_ops, nd, i, s->n, &s->params,
                             nonce), ==, RDP_OK);
}

static Sim *sim_new(int n, uint32_t msgs, uint64_t seed, const Faults *f,
                    const RdpParams *params)
{
    Sim *s = g_new0(Sim, 1);

    prng_seed(&s->rng, seed_base + seed);
    s->f = f ? *f : (Faults) { 0 };
    if (params) {
        s->params = *params;
    } else {
        rdp_default_params(&s->params);
    }
    s->n = n;
    s->msgs = msgs;
    s->strict = true;
    s->start = s->now = CLOCK_START;
    s->total = (uint64_t)n * (n - 1) * msgs;
    s->net = g_sequence_new(g_free);
    s->msg = g_new0(Msg, (size_t)MAX_NODES * MAX_NODES * msgs);
    for (int i = 0; i < n; i++) {
        s->node[i].sim = s;
        s->node[i].id = i;
        for (int j = 0; j < MAX_NODES; j++) {
            s->node[i].last_rx[j] = -1;
            s->link_free[i][j] = s->start;
            s->node[i].next_at[j] = s->start;
        }
        s->node[i].nospace_until = s->start;
        node_boot(s, i);
    }
    return s;
}

static void sim_free(Sim *s)
{
    for (size_t i = 0; i < (size_t)MAX_NODES * MAX_NODES * s->msgs; i++) {
        g_free(s->msg[i].buf);
    }
    g_free(s->msg);
    g_sequence_free(s->net);
    g_free(s);
}

/* Node @i forgets its sends in flight (@all: and the ones not yet made). */
static void node_abandon(Sim *s, int i, bool all)
{
    Node *nd = &s->node[i];

    for (int j = 0; j < s->n; j++) {
        for (uint32_t no = 0; no < s->msgs; no++) {
            Msg *m = msg_at(s, i, j, no);
            bool pending = no < nd->next_msg[j] && !m->done;

            if (j != i && !m->abandoned && (pending || (all && !m->done))) {
                m->abandoned = true;
                g_clear_pointer(&m->buf, g_free);
                s->settled++;
            }
        }
        if (all) {
            nd->next_msg[j] = s->msgs;
        }
    }
}

/*
 * A reboot: new nonce, empty state; the application numbers on.  The new
 * incarnation has seen none of the messages still unacknowledged to it:
 * their senders may send them again, and it takes them in order.
 */
static void node_restart(Sim *s, int i)
{
    Node *nd = &s->node[i];

    node_abandon(s, i, false);
    for (int j = 0; j < s->n; j++) {
        uint32_t first = s->msgs;

        for (uint32_t no = 0; no < s->msgs && j != i; no++) {
            Msg *m = msg_at(s, j, i, no);

            if (!m->done && !m->abandoned) {
                m->delivered_before += m->delivered;
                m->delivered = 0;
                first = MIN(first, no);
            }
        }
        if (first < s->msgs) {
            nd->last_rx[j] = (int64_t)first - 1;
        }
    }
    node_boot(s, i);
}

/* Only node 0 sends. */
static void sim_one_way(Sim *s)
{
    for (int i = 1; i < s->n; i++) {
        node_abandon(s, i, true);
    }
}

static void node_kill(Sim *s, int i)
{
    node_abandon(s, i, true);
    s->node[i].dead = true;
}

/* Each node sends to each peer until its queue is full. */
static void app_pump(Sim *s)
{
    for (int i = 0; i < s->n; i++) {
        Node *nd = &s->node[i];

        for (int j = 0; j < s->n && !nd->dead; j++) {
            while (j != i && nd->next_msg[j] < s->msgs &&
                   !before(s->now, nd->next_at[j])) {
                uint32_t no = nd->next_msg[j];
                Msg *m = msg_at(s, i, j, no);
                int r;

                m->buf = g_malloc(msg_len(i, j, no));
                msg_fill(m->buf, i, j, no);
                r = rdp_send(&nd->st, j, j * s->msgs + no, m->buf,
                             msg_len(i, j, no), s->now);
                if (r == RDP_NOROOM) {
                    g_clear_pointer(&m->buf, g_free);
                    break;
                }
                g_assert_cmpint(r, ==, RDP_OK);
                nd->next_msg[j]++;
                if (s->pace_us) {
                    nd->next_at[j] = s->now + 1 +
                                     prng_below(&s->rng, 2 * s->pace_us);
                }
            }
        }
    }
}

static void net_deliver_due(Sim *s)
{
    while (g_sequence_get_length(s->net)) {
        GSequenceIter *it = g_sequence_get_begin_iter(s->net);
        Packet *p = g_sequence_get(it);
        Node *to = &s->node[p->to];

        if (before(s->now, p->time)) {
            break;
        }
        if (!to->dead) {
            if (p->data[2] == RDP_OP_DATA && p->crc_ok &&
                before(s->now, to->nospace_until)) {
                s->data_rx_refusing[p->to]++;
            }
            rdp_input(&to->st, p->data, p->len, p->crc_ok, s->now);
        }
        g_sequence_remove(it);
    }
}

/* The sender's sequence numbers stay ordered and inside the window. */
static void check_invariants(Sim *s)
{
    for (int i = 0; i < s->n; i++) {
        for (int j = 0; j < s->n; j++) {
            const RdpOut *o = &s->node[i].st.peer[j].out;

            g_assert_cmpuint(o->nxt - o->una, <=, o->max - o->una);
            g_assert_cmpuint(o->max - o->una, <=, o->end - o->una);
            g_assert_cmpuint(o->end - o->una, <=, RDP_SEND_SLOTS);
            g_assert_cmpuint(o->max - o->una, <=, s->params.window);
        }
    }
}

typedef void SimHook(Sim *s);

/* Run until every message is settled; false at the time limit. */
static bool sim_run(Sim *s, uint32_t limit_us, SimHook *hook)
{
    while (s->settled < s->total) {
        uint32_t next = s->now + STEP_US, t;

        if (s->now - s->start > limit_us) {
            return false;
        }
        if (hook) {
            hook(s);
        }
        net_deliver_due(s);
        for (int i = 0; i < s->n; i++) {
            if (!s->node[i].dead) {
                rdp_tick(&s->node[i].st, s->now);
            }
        }
        app_pump(s);
        check_invariants(s);
        for (int i = 0; i < s->n; i++) {
            if (!s->node[i].dead && rdp_next_deadline(&s->node[i].st, &t) &&
                before(t, next)) {
                next = t;
            }
            for (int j = 0; j < s->n && s->pace_us; j++) {
                t = s->node[i].next_at[j];
                next = before(s->now, t) && before(t, next) ? t : next;
            }
        }
        if (g_sequence_get_length(s->net)) {
            Packet *p = g_sequence_get(g_sequence_get_begin_iter(s->net));

            next = before(p->time, next) ? p->time : next;
        }
        s->now = before(s->now, next) ? next : s->now + 1;
    }
    return true;
}

#define SUM(s, field) sim_sum(s, offsetof(RdpCounters, field))

static uint64_t sim_sum(Sim *s, size_t off)
{
    uint64_t sum = 0;

    for (int i = 0; i < s->n; i++) {
        sum += *(uint32_t *)((uint8_t *)&s->node[i].st.c + off);
    }
    return sum;
}

/* The counters summed over the nodes, for the log. */
static void sim_report(Sim *s, const char *what)
{
#define C(f) { #f, offsetof(RdpCounters, f) }
    static const struct { const char *name; size_t off; } counter[] = {
        C(sent), C(retransmitted), C(acks_sent), C(acks_piggy),
        C(acks_rcvd), C(seq_nacks_tx), C(seq_nacks_rx), C(cap_nacks_tx),
        C(cap_nacks_rx), C(crc_drops), C(sanity_drops), C(dup_drops),
        C(ooo_drops), C(window_stalls), C(timeouts), C(reconnects),
        C(undeliverable), C(noroom),
    };
#undef C
    g_autoptr(GString) line = g_string_new(what);

    g_string_append_printf(line, ": %u us", s->now - s->start);
    for (size_t i = 0; i < G_N_ELEMENTS(counter); i++) {
        g_string_append_printf(line, " %s %" G_GUINT64_FORMAT,
                               counter[i].name, sim_sum(s, counter[i].off));
    }
    g_test_message("%s", line->str);
}

/*
 * Every message was settled once; the acknowledged ones were delivered
 * exactly once (deliver() already refused doubles).  Counts statuses.
 */
static void sim_verify(Sim *s, unsigned count[3])
{
    sim_report(s, g_test_get_path());
    count[0] = count[1] = count[2] = 0;
    for (int i = 0; i < s->n; i++) {
        for (int j = 0; j < s->n; j++) {
            for (uint32_t no = 0; no < s->msgs && i != j; no++) {
                Msg *m = msg_at(s, i, j, no);

                if (m->abandoned || no >= s->node[i].next_msg[j]) {
                    continue;
                }
                g_assert_cmpint(m->done, ==, 1);
                g_assert_cmpint(m->status, >=, 0);
                g_assert_cmpint(m->status, <=, RDP_DONE_NOROOM);
                count[m->status]++;
                if (m->status == RDP_DONE_OK) {
                    g_assert_cmpint(m->delivered + m->delivered_before, >=, 1);
                }
                if (m->status == RDP_DONE_NOROOM) {
                    /* Refused every time it came: never delivered. */
                    g_assert_cmpint(m->delivered + m->delivered_before, ==, 0);
                }
            }
        }
    }
    if (s->strict) {
        g_assert_cmpuint(count[RDP_DONE_TIMEOUT], ==, 0);
        g_assert_cmpuint(count[RDP_DONE_NOROOM], ==, 0);
    }
}

/* All-to-all traffic under @f; returns the finished simulation. */
static Sim *run_stream(int n, uint32_t msgs, uint64_t seed, const Faults *f,
                       uint32_t pace_us)
{
    Sim *s = sim_new(n, msgs, seed, f, NULL);
    unsigned count[3];

    s->pace_us = pace_us;

    g_assert_true(sim_run(s, 20 * 1000 * 1000, NULL));
    sim_verify(s, count);
    g_assert_cmpuint(count[0], ==, (uint64_t)n * (n - 1) * msgs);
    return s;
}

/* --- tests ------------------------------------------------------------ */

static void test_header(void)
{
    RdpHdr h = {
        .mtype = RDP_MTYPE, .op = RDP_OP_DATA, .src = 0x0102, .dst = 0x0304,
        .connid = 0x05060708, .seq = 0x090a0b0c, .ack_connid = 0x0d0e0f10,
        .ackno = 0x11121314, .len = 0x1516, .nsub = 0x17, .flags = 0x18,
    };
    static const uint8_t wire[RDP_HDR_LEN] = {
        0x00, 0x03, 0x01, 0x00, 0x02, 0x01, 0x04, 0x03,
        0x08, 0x07, 0x06, 0x05, 0x0c, 0x0b, 0x0a, 0x09,
        0x10, 0x0f, 0x0e, 0x0d, 0x14, 0x13, 0x12, 0x11,
        0x16, 0x15, 0x17, 0x18,
    };
    uint8_t buf[RDP_HDR_LEN];
    RdpHdr back;

    rdp_hdr_encode(buf, &h);
    g_assert_true(memcmp(buf, wire, sizeof(wire)) == 0);
    g_assert_cmphex(buf[0] & 0x80, ==, 0);      /* ends the route */
    rdp_hdr_decode(&back, wire);
    g_assert_true(memcmp(&back, &h, sizeof(h)) == 0);
}

static void test_clean(void)
{
    Sim *s = run_stream(4, 300, 1, NULL, 10);
    uint64_t bytes = 0;

    for (int i = 0; i < 4; i++) {
        const RdpCounters *c = &s->node[i].st.c;

        g_assert_cmpuint(c->sent, ==, 3 * 300);
        g_assert_cmpuint(c->acks_piggy, >, 0);
        bytes += c->bytes;
    }
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            for (uint32_t no = 0; no < 300 && i != j; no++) {
                bytes -= msg_len(i, j, no);
            }
        }
    }
    g_assert_cmpuint(bytes, ==, 0);
    g_assert_cmpuint(SUM(s, retransmitted) + SUM(s, timeouts), ==, 0);
    g_assert_cmpuint(SUM(s, seq_nacks_tx) + SUM(s, dup_drops), ==, 0);
    g_assert_cmpuint(SUM(s, crc_drops) + SUM(s, sanity_drops), ==, 0);
    g_assert_cmpuint(SUM(s, undeliverable) + SUM(s, reconnects), ==, 0);
    sim_free(s);
}

static void test_loss_corrupt(void)
{
    Faults f = { .loss = 0.05, .corrupt = 0.01, .truncate = 0.01 };
    Sim *s = run_stream(6, 150, 2, &f, 0);

    g_assert_cmpuint(SUM(s, retransmitted), >, 0);
    g_assert_cmpuint(SUM(s, timeouts), >, 0);
    g_assert_cmpuint(SUM(s, crc_drops), >, 0);
    g_assert_cmpuint(SUM(s, window_stalls), >=, 6 * 5);
    g_assert_cmpuint(SUM(s, seq_nacks_tx), >, 0);
    g_assert_cmpuint(SUM(s, seq_nacks_rx), >, 0);
    g_assert_cmpuint(SUM(s, sanity_drops), >, 0);
    g_assert_cmpuint(SUM(s, undeliverable), ==, 0);
    sim_free(s);
}

static void test_duplicate(void)
{
    Faults f = { .dup = 0.2 };
    Sim *s = run_stream(3, 300, 3, &f, 0);

    g_assert_cmpuint(SUM(s, dup_drops), >, 0);
    g_assert_cmpuint(SUM(s, undeliverable), ==, 0);
    sim_free(s);
}

static void test_reorder(void)
{
    Faults f = { .reorder = 0.1 };
    Sim *s = run_stream(3, 300, 4, &f, 0);

    g_assert_cmpuint(SUM(s, ooo_drops), >, 0);
    g_assert_cmpuint(SUM(s, seq_nacks_tx), >, 0);
    /* One NACK per gap, not one per packet past it. */
    g_assert_cmpuint(SUM(s, seq_nacks_tx) * 2, <, SUM(s, ooo_drops));
    g_assert_cmpuint(SUM(s, seq_nacks_rx), >, 0);
    g_assert_cmpuint(SUM(s, retransmitted), >, 0);
    sim_free(s);
}

/* Unidirectional: explicit ACKs, delayed and coalesced; a small window. */
static void test_one_way(void)
{
    RdpParams p;
    Sim *s;
    unsigned count[3];

    rdp_default_params(&p);
    p.window = 4;
    s = sim_new(2, 200, 5, NULL, &p);
    sim_one_way(s);
    g_assert_true(sim_run(s, 1000 * 1000, NULL));
    sim_verify(s, count);
    g_assert_cmpuint(count[0], ==, 200);
    /* The queue stays full until the end: one stall episode. */
    g_assert_cmpuint(s->node[0].st.c.window_stalls, ==, 1);
    g_assert_cmpuint(s->node[1].st.c.acks_piggy, ==, 0);
    g_assert_cmpuint(s->node[1].st.c.acks_sent, >, 0);
    g_assert_cmpuint(s->node[1].st.c.acks_sent, <=, 200 / p.ack_pending + 1);
    g_assert_cmpuint(s->node[0].st.c.acks_rcvd, ==,
                     s->node[1].st.c.acks_sent);
    sim_free(s);

    /* A lone message is acknowledged by the delay timer. */
    s = sim_new(2, 1, 5, NULL, NULL);
    sim_one_way(s);
    g_assert_true(sim_run(s, 1000 * 1000, NULL));
    g_assert_cmpuint(s->node[1].st.c.acks_sent, ==, 1);
    g_assert_cmpuint(msg_at(s, 0, 1, 0)->done_at - s->start, >=,
                     s->params.ack_delay_us);
    g_assert_cmpuint(msg_at(s, 0, 1, 0)->done_at - s->start, <,
                     s->params.rto_us);
    sim_free(s);
}

/* A receiver without room: capacity NACKs, pauses, nothing lost. */
static void test_capacity(void)
{
    const uint32_t busy_us = 20000;
    Sim *s = sim_new(2, 300, 6, NULL, NULL);
    unsigned count[3];
    uint32_t bound;

    s->node[1].nospace_until = s->start + busy_us;
    g_assert_true(sim_run(s, 1000 * 1000, NULL));
    sim_verify(s, count);
    g_assert_cmpuint(count[0], ==, 2 * 300);
    g_assert_cmpuint(s->node[1].st.c.cap_nacks_tx, >, 0);
    g_assert_cmpuint(s->node[0].st.c.cap_nacks_rx, >, 0);
    g_assert_cmpuint(s->node[0].st.c.retransmitted, >, 0);
    g_assert_cmpuint(msg_at(s, 0, 1, 0)->done_at - s->start, >=, busy_us);
    /* Paused for CTO after each NACK: at most a window per pause. */
    bound = (busy_us / s->params.cto_us + 1) * (s->params.window + 1);
    g_assert_cmpuint(s->data_rx_refusing[1], >, 0);
    g_assert_cmpuint(s->data_rx_refusing[1], <=, bound);
    g_assert_cmpuint(s->node[0].st.c.timeouts, ==, 0);
    sim_free(s);
}

static uint32_t connid_before_restart;

/*
 * Restart node 1 when its four streams are an eighth through, at a time
 * node 0 has sent it packets that it has not received yet.
 */
static void restart_hook(Sim *s)
{
    static const int pair[4][2] = { { 0, 1 }, { 1, 0 }, { 2, 1 }, { 1, 2 } };
    const RdpOut *o = &s->node[0].st.peer[1].out;
    const RdpIn *in = &s->node[1].st.peer[0].in;

    if (connid_before_restart || in->connid != o->connid ||
        !before(in->rcv_nxt, o->max)) {
        return;
    }
    for (int i = 0; i < 4; i++) {
        if (!msg_at(s, pair[i][0], pair[i][1], s->msgs / 8)->done) {
            return;
        }
    }
    for (int i = 0; i < 4; i++) {
        g_assert_cmpuint(s->node[pair[i][0]].next_msg[pair[i][1]], <,
                         s->msgs);
    }
    connid_before_restart = s->node[0].st.peer[1].out.connid;
    g_assert_cmpuint(connid_before_restart, !=, 0);
    node_restart(s, 1);
}

static void test_restart(void)
{
    Faults f = { .loss = 0.02, .dup = 0.02 };
    Sim *s = sim_new(3, 400, 7, &f, NULL);
    unsigned count[3];

    s->strict = false;
    s->pace_us = 40;        /* the streams keep pace with each other */
    connid_before_restart = 0;
    g_assert_true(sim_run(s, 20 * 1000 * 1000, restart_hook));
    g_assert_cmpuint(connid_before_restart, !=, 0);
    sim_verify(s, count);
    g_assert_cmpuint(count[RDP_DONE_TIMEOUT], ==, 0);
    for (int i = 0; i < 3; i += 2) {
        const RdpState *st = &s->node[i].st;

        /*
         * Nothing to the restarted node is lost: what was in flight goes
         * again to the new incarnation, and so do the first sends made
         * after the restart, which it refused.
         */
        for (uint32_t no = 0; no < s->msgs; no++) {
            g_assert_cmpint(msg_at(s, i, 1, no)->status, ==, RDP_DONE_OK);
        }

        g_assert_cmpuint(st->c.reconnects, ==, 1);
        g_assert_cmpint(s->node[i].events[RDP_EV_PEER_RESET][1], ==, 1);
        g_assert_cmpint(s->node[i].events[RDP_EV_PEER_RESET][2 - i], ==, 0);
        g_assert_cmpuint(st->peer[1].out.state, ==, RDP_OUT_ACTIVE);
        /* Traffic resumed: the last messages both ways went through. */
        g_assert_cmpint(msg_at(s, i, 1, s->msgs - 1)->status, ==,
                        RDP_DONE_OK);
        g_assert_cmpint(msg_at(s, 1, i, s->msgs - 1)->status, ==,
                        RDP_DONE_OK);
    }
    g_assert_cmpuint(s->node[0].st.peer[1].out.connid, !=,
                     connid_before_restart);
    g_assert_cmpuint(s->node[1].st.c.reconnects, ==, 0);
    g_assert_cmpuint(SUM(s, undeliverable), ==, 0);
    sim_free(s);
}

/* RDP parameters with a short refusal bound, so the tests run quickly. */
static RdpParams refuse_params(void)
{
    RdpParams p;

    rdp_default_params(&p);
    p.refuse_us = 50000;
    return p;
}

/*
 * A receiver that never makes room: node 0's sends to it fail with
 * NOROOM after refuse_us (not before, and not much after), and never
 * reach it, while node 0's stream to node 2 goes on untouched.  Without
 * the bound the sends to node 1 would wait forever (sim_run times out).
 */
static void test_refuse_bound(void)
{
    RdpParams p = refuse_params();
    Sim *s = sim_new(3, 100, 13, NULL, &p);
    const RdpCounters *c0 = &s->node[0].st.c;
    uint32_t first = UINT32_MAX, last = 0, t;
    unsigned count[3];

    s->strict = false;
    sim_one_way(s);
    s->node[1].nospace_until = s->start + (1u << 30);
    g_assert_true(sim_run(s, 2 * 1000 * 1000, NULL));
    sim_verify(s, count);
    g_assert_cmpuint(count[RDP_DONE_NOROOM], ==, 100);
    g_assert_cmpuint(count[RDP_DONE_OK], ==, 100);
    g_assert_cmpuint(count[RDP_DONE_TIMEOUT], ==, 0);
    for (uint32_t no = 0; no < s->msgs; no++) {
        const Msg *m = msg_at(s, 0, 1, no);

        g_assert_cmpint(m->status, ==, RDP_DONE_NOROOM);
        t = m->done_at - s->start;
        first = MIN(first, t);
        last = MAX(last, t);
        /* The other peer is not held up: done long before the bound. */
        g_assert_cmpint(msg_at(s, 0, 2, no)->status, ==, RDP_DONE_OK);
        g_assert_cmpuint(msg_at(s, 0, 2, no)->done_at - s->start, <,
                         p.refuse_us / 10);
    }
    g_test_message("refused: first failed after %u us, the last of 100 "
                   "after %u us (refuse_us %u)", first, last, p.refuse_us);
    /* The first refusal came within a round trip of the start. */
    g_assert_cmpuint(first, >=, p.refuse_us);
    g_assert_cmpuint(first, <=, p.refuse_us + p.cto_us + 100);
    /* The rest fail at their first refusal: a handshake and a NACK each. */
    g_assert_cmpuint(last - first, <=, 100 * 100);
    g_assert_cmpuint(c0->noroom, ==, 100);
    g_assert_cmpuint(c0->undeliverable, ==, 100);
    g_assert_cmpuint(c0->timeouts, ==, 0);
    g_assert_cmpint(s->node[0].events[RDP_EV_PEER_LOST][1], ==, 0);
    g_assert_cmpint(s->node[1].last_rx[0], ==, -1);
    sim_free(s);
}

/*
 * A receiver that makes room again after 1.5 bounds, on a lossy network:
 * the sends it refused meanwhile failed, and the later ones are
 * delivered, in order, on a new connection; so are the sends to node 2
 * all along.
 */
static void test_refuse_recovers(void)
{
    RdpParams p = refuse_params();
    Faults f = { .loss = 0.02 };
    Sim *s = sim_new(3, 400, 14, &f, &p);
    uint32_t busy = p.refuse_us * 3 / 2;
    unsigned count[3];

    s->strict = false;
    s->pace_us = 200;
    sim_one_way(s);
    s->node[1].nospace_until = s->start + busy;
    g_assert_true(sim_run(s, 2 * 1000 * 1000, NULL));
    sim_verify(s, count);
    g_assert_cmpuint(count[RDP_DONE_NOROOM], >, 0);
    g_assert_cmpuint(count[RDP_DONE_OK], >, 400);
    for (uint32_t no = 0; no < s->msgs; no++) {
        const Msg *m = msg_at(s, 0, 1, no);

        g_assert_cmpint(msg_at(s, 0, 2, no)->status, ==, RDP_DONE_OK);
        if (m->status == RDP_DONE_NOROOM) {
            g_assert_cmpuint(m->done_at - s->start, >=, p.refuse_us);
            g_assert_cmpuint(m->done_at - s->start, <=, busy + p.cto_us);
        }
    }
    g_assert_cmpint(msg_at(s, 0, 1, s->msgs - 1)->status, ==, RDP_DONE_OK);
    g_assert_cmpuint(s->node[0].st.c.noroom, ==, count[RDP_DONE_NOROOM]);
    sim_free(s);
}

/*
 * A slow receiver that takes one packet every 0.6 bounds is slow, not
 * stalled: every send is delivered, none fails.
 */
static void test_refuse_slow(void)
{
    RdpParams p = refuse_params();
    Sim *s = sim_new(2, 12, 15, NULL, &p);
    unsigned count[3];

    sim_one_way(s);
    s->node[1].accept_every_us = p.refuse_us * 3 / 5;
    s->node[1].next_accept = s->start;
    g_assert_true(sim_run(s, 2 * 1000 * 1000, NULL));
    sim_verify(s, count);
    g_assert_cmpuint(count[RDP_DONE_OK], ==, 12);
    g_assert_cmpuint(s->now - s->start, >=, 11 * s->node[1].accept_every_us);
    g_assert_cmpuint(s->node[0].st.c.cap_nacks_rx, >, 11);
    g_assert_cmpuint(s->node[0].st.c.noroom, ==, 0);
    sim_free(s);
}

static uint32_t killed_at, revived_at;

/* Node 2 dies mid-stream, and boots again an RTO after the first failure. */
static void kill_hook(Sim *s)
{
    if (!killed_at && msg_at(s, 0, 2, s->msgs / 2)->done) {
        killed_at = s->now;
        node_kill(s, 2);
    } else if (killed_at && !revived_at && s->failed &&
               s->now - s->first_fail_at >= s->params.rto_us) {
        revived_at = s->now;
        s->node[2].dead = false;
        node_boot(s, 2);
    }
}

/*
 * A dead peer: after MRC retries its sends fail and the OUT half closes
 * (node_event() checks that).  When it is back, traffic resumes.
 */
static void test_dead_peer(void)
{
    RdpParams p;
    Sim *s;
    unsigned count[3];
    uint32_t rto;

    rdp_default_params(&p);
    p.mrc = 3;
    rto = p.rto_us;
    s = sim_new(3, 120, 8, NULL, &p);
    s->strict = false;
    killed_at = revived_at = 0;
    g_assert_true(sim_run(s, 20 * 1000 * 1000, kill_hook));
    g_assert_cmpuint(revived_at, !=, 0);
    sim_verify(s, count);
    g_assert_cmpuint(count[RDP_DONE_TIMEOUT], >, 0);
    g_assert_cmpuint(s->first_fail_at - killed_at, >=, p.mrc * rto);
    g_assert_cmpuint(s->first_fail_at - killed_at, <=, (p.mrc + 2) * rto);
    for (int i = 0; i < 2; i++) {
        const RdpState *st = &s->node[i].st;

        g_assert_cmpint(s->node[i].events[RDP_EV_PEER_LOST][2], >=, 1);
        g_assert_cmpint(s->node[i].events[RDP_EV_PEER_LOST][1 - i], ==, 0);
        g_assert_cmpuint(st->c.timeouts, >=, p.mrc + 1);
        g_assert_cmpint(msg_at(s, i, 2, 0)->status, ==, RDP_DONE_OK);
        /* Back: the new SYN found a new epoch, and the rest went through. */
        g_assert_cmpuint(st->c.reconnects, ==, 1);
        g_assert_cmpint(s->node[i].events[RDP_EV_PEER_RESET][2], ==, 1);
        g_assert_cmpint(msg_at(s, i, 2, s->msgs - 1)->status, ==,
                        RDP_DONE_OK);
        g_assert_cmpuint(msg_at(s, i, 2, s->msgs - 1)->done_at, !=, 0);
        /* The live pair is unaffected. */
        for (uint32_t no = 0; no < s->msgs; no++) {
            g_assert_cmpint(msg_at(s, i, 1 - i, no)->status, ==, RDP_DONE_OK);
        }
    }
    g_assert_cmpuint(SUM(s, undeliverable), ==, count[RDP_DONE_TIMEOUT]);
    sim_free(s);
}

/* Every fault on 8 nodes.  Same seed, same run; another seed, another. */
static void test_deterministic(void)
{
    Faults f = { .loss = 0.05, .corrupt = 0.01, .dup = 0.01, .reorder = 0.02,
                 .truncate = 0.01 };
    Sim *a = run_stream(8, 40, 9, &f, 0);
    Sim *b = run_stream(8, 40, 9, &f, 0);
    Sim *c = run_stream(8, 40, 10, &f, 0);
    bool differ = false;

    g_assert_cmpuint(a->now, ==, b->now);
    for (int i = 0; i < 8; i++) {
        g_assert_true(memcmp(&a->node[i].st.c, &b->node[i].st.c,
                             sizeof(RdpCounters)) == 0);
        differ |= memcmp(&a->node[i].st.c, &c->node[i].st.c,
                         sizeof(RdpCounters)) != 0;
    }
    g_assert_true(differ);
    sim_free(a);
    sim_free(b);
    sim_free(c);
}

/* --- direct input: handshake ids, garbage ----------------------------- */

static const uint8_t *first_packet(Sim *s)
{
    return ((Packet *)g_sequence_get(g_sequence_get_begin_iter(s->net)))->data;
}

/* The SYN that opens node 0's stream to @peer in a fresh simulation. */
static RdpHdr first_syn(uint64_t seed, uint16_t peer)
{
    Sim *s = sim_new(4, 1, seed, NULL, NULL);
    RdpHdr h;

    g_assert_cmpint(rdp_send(&s->node[0].st, peer, 0, "data", 4, s->now), ==,
                    RDP_OK);
    g_assert_cmpint(g_sequence_get_length(s->net), ==, 1);
    rdp_hdr_decode(&h, first_packet(s));
    g_assert_cmpuint(h.op, ==, RDP_OP_SYN);
    g_assert_cmpuint(h.connid, !=, 0);
    sim_free(s);
    return h;
}

static void test_handshake_ids(void)
{
    /* Another seed boots with another nonce. */
    RdpHdr a = first_syn(1, 1), b = first_syn(2, 1), c = first_syn(1, 2);

    g_assert_cmpuint(a.seq, !=, 0);
    g_assert_cmpuint(a.connid, !=, b.connid);
    g_assert_cmpuint(a.seq, !=, b.seq);
    g_assert_cmpuint(a.ackno, !=, b.ackno);     /* the epoch */
    g_assert_cmpuint(a.connid, !=, c.connid);
    g_assert_cmpuint(a.seq, !=, c.seq);
    g_assert_cmpuint(a.ackno, ==, c.ackno);
}

static RdpHdr ack_hdr(uint16_t src, uint16_t dst, uint32_t connid,
                      uint16_t len)
{
    return (RdpHdr) {
        .mtype = RDP_MTYPE, .op = RDP_OP_ACK, .src = src, .dst = dst,
        .connid = connid, .ack_connid = connid, .len = len,
    };
}

static void test_garbage(void)
{
    Sim *s = sim_new(4, 1, 12, NULL, NULL);
    RdpState *st = &s->node[0].st;
    RdpHdr ok = {
        .mtype = RDP_MTYPE, .op = RDP_OP_DATA, .src = 1, .dst = 0,
        .connid = 77, .seq = 5, .len = 4,
    };
    uint8_t pkt[RDP_HDR_LEN + 64];
    Prng rng;
    uint32_t drops = 0;

    s->node[0].raw = true;
#define EXPECT_DROP(hdr, plen) do {                                     \
        RdpHdr h_ = (hdr);                                              \
        rdp_hdr_encode(pkt, &h_);                                       \
        rdp_input(st, pkt, (plen), true, 10);                          \
        g_assert_cmpuint(st->c.sanity_drops, ==, ++drops);               \
    } while (0)

    memset(pkt, 0, sizeof(pkt));
    for (uint32_t len = 0; len < RDP_HDR_LEN; len++) {
        rdp_input(st, pkt, len, true, 10);
        g_assert_cmpuint(st->c.sanity_drops, ==, ++drops);
    }
    EXPECT_DROP(ok, RDP_HDR_LEN + 3);                   /* len field 4 */
    EXPECT_DROP(ok, RDP_HDR_LEN + 5);
    EXPECT_DROP(((RdpHdr) { .mtype = 0x0301, .op = 1, .src = 1, .connid = 7 }),
                RDP_HDR_LEN);
    for (unsigned i = 0; i < 3; i++) {
        static const uint16_t bad_op[] = { 0, 8, 0xffff };
        RdpHdr h = ok;

        h.op = bad_op[i];
        h.len = 0;
        EXPECT_DROP(h, RDP_HDR_LEN);
    }
    EXPECT_DROP(ack_hdr(1, 3, 7, 0), RDP_HDR_LEN);     /* not for me */
    EXPECT_DROP(ack_hdr(4, 0, 7, 0), RDP_HDR_LEN);     /* src >= nodes */
    EXPECT_DROP(ack_hdr(0, 0, 7, 0), RDP_HDR_LEN);     /* from myself */
    EXPECT_DROP(ack_hdr(1, 0, 0, 0), RDP_HDR_LEN);     /* connid 0 */
    EXPECT_DROP(ack_hdr(1, 0, 7, 4), RDP_HDR_LEN + 4); /* ACK with data */
    g_assert_cmpuint(s->pkt_id + s->node[0].raw_rx, ==, 0);

    rdp_hdr_encode(pkt, &ok);
    rdp_input(st, pkt, RDP_HDR_LEN + 4, false, 10);
    g_assert_cmpuint(st->c.crc_drops, ==, 1);
    g_assert_cmpuint(s->pkt_id + s->node[0].raw_rx, ==, 0);

    /* A sane DATA on no connection: SYNNACK, nothing delivered. */
    rdp_input(st, pkt, RDP_HDR_LEN + 4, true, 10);
    g_assert_cmpuint(s->pkt_id, ==, 1);
    g_assert_cmpuint(first_packet(s)[2], ==, RDP_OP_SYNNACK);
    g_assert_cmpuint(s->node[0].raw_rx, ==, 0);
    g_assert_cmpuint(st->c.sanity_drops, ==, drops);

    /*
     * Fuzz: random bytes, and random headers with ids and numbers near
     * the real ones, so that many pass sanity and reach the state
     * machines; node 0 keeps sending meanwhile.
     */
    prng_seed(&rng, 11);
    for (int i = 0; i < 100000; i++) {
        uint32_t len = prng_below(&rng, sizeof(pkt) + 1), now = 20 + i;
        RdpHdr h = ok;
        const RdpOut *o;
        uint32_t ids[4];

        h.src = prng_below(&rng, 5);
        o = &st->peer[h.src & 3].out;
        ids[0] = 77;
        ids[1] = o->connid;
        ids[2] = st->peer[h.src & 3].in.connid;
        ids[3] = prng_next(&rng);
        h.op = 1 + prng_below(&rng, 7);
        h.connid = ids[prng_below(&rng, 4)];
        h.seq = (i & 2 ? o->una : 5) + prng_below(&rng, 20) - 4;
        h.ack_connid = ids[prng_below(&rng, 4)];
        h.ackno = i & 4 ? prng_below(&rng, 3) : o->una + prng_below(&rng, 20);
        h.len = h.op == RDP_OP_DATA ? prng_below(&rng, 64) : 0;
        rdp_hdr_encode(pkt, &h);
        for (uint32_t k = RDP_HDR_LEN; k < sizeof(pkt); k++) {
            pkt[k] = prng_next(&rng);
        }
        if (i % 5 == 0) {
            for (uint32_t k = 0; k < sizeof(pkt); k++) {
                pkt[k] = prng_next(&rng);
            }
        } else if (prng_below(&rng, 4)) {
            len = RDP_HDR_LEN + h.len;
        }
        rdp_input(st, pkt, len, true, now);
        rdp_send(st, 1 + i % 3, i, "payload", 8, now);
        if (i % 64 == 0) {
            rdp_tick(st, now);
            g_sequence_remove_range(g_sequence_get_begin_iter(s->net),
                                    g_sequence_get_end_iter(s->net));
        }
        check_invariants(s);
    }
    g_assert_cmpuint(st->c.sanity_drops, >, 20000);
    /* It got past sanity, into every state. */
    g_assert_cmpuint(s->node[0].raw_rx, >, 0);
    g_assert_cmpuint(st->c.acks_rcvd + st->c.seq_nacks_rx, >, 0);
    g_assert_cmpuint(st->c.reconnects, >, 0);
    g_assert_cmpuint(st->c.sent, >, 0);
    sim_free(s);
#undef EXPECT_DROP
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (g_getenv("RDP_SEED")) {
        seed_base = g_ascii_strtoull(g_getenv("RDP_SEED"), NULL, 0);
    }
    g_test_add_func("/rdp/header", test_header);
    g_test_add_func("/rdp/handshake-ids", test_handshake_ids);
    g_test_add_func("/rdp/clean", test_clean);
    g_test_add_func("/rdp/one-way", test_one_way);
    g_test_add_func("/rdp/loss-corrupt", test_loss_corrupt);
    g_test_add_func("/rdp/duplicate", test_duplicate);
    g_test_add_func("/rdp/reorder", test_reorder);
    g_test_add_func("/rdp/capacity", test_capacity);
    g_test_add_func("/rdp/refuse-bound", test_refuse_bound);
    g_test_add_func("/rdp/refuse-recovers", test_refuse_recovers);
    g_test_add_func("/rdp/refuse-slow", test_refuse_slow);
    g_test_add_func("/rdp/restart", test_restart);
    g_test_add_func("/rdp/dead-peer", test_dead_peer);
    g_test_add_func("/rdp/deterministic", test_deterministic);
    g_test_add_func("/rdp/garbage", test_garbage);
    return g_test_run();
}
