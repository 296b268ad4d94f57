/*
 * End-to-end tests of fabricd --kind ps1 --lockstep: fake boards report
 * their rounds with SYNC (as in test-fabricd-lockstep.c), and the ps1
 * kind's delay rules and down windows with an end must take virtual time
 * only: a packet arrives at send + hop + bytes + delay in virtual time, or
 * once the window has ended, however fast the host runs the rounds.  Run
 * from the repository root.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "fabricd-harness.h"
#include "fabricd-frames.h"
#pragma GCC diagnostic pop

#include "proto/sync.h"
#include "ps1net.h"

#define HOP_NS PS1_DEFAULT_HOP_NS       /* the look-ahead */
#define NS_PER_BYTE 50                  /* 20 MB/s */
#define IDLE_NS 4000000000000ull        /* "nothing to do before then" */
#define ROUNDS_MAX 32
#define WORDS 4
#define PKT_NS (FABRIC_PS1_PKT_BYTES(WORDS) * NS_PER_BYTE)
#define SEC_NS 1000000000ull

static const char *const exact[] = {
    "--kind", "ps1", "--lockstep", "--lockstep-quantum", "0", NULL,
};

/* What one node got before its grants. */
typedef struct Got {
    HdrFrame data[4];
    unsigned n_data;
    unsigned credits;
    uint64_t credit_ns;     /* the last CREDIT's delivery time */
} Got;

static void report(int fd, uint64_t t, uint64_t next)
{
    uint8_t pl[FABRIC_SYNC_REPORT_LEN];

    hdr_send(fd, FABRIC_KIND_PS1, FABRIC_TYPE_SYNC, 0, FABRIC_NODE_NONE,
             pl, fabric_sync_report_encode(next, pl), t);
}

/*
 * Every node reports at `t` and is idle after it; returns the next grant.
 * What each node gets before that grant is added to got[].
 */
static uint64_t round_all(Fixture *fx, uint64_t t, Got *got)
{
    uint64_t grant = 0, last = 0;

    for (int i = 0; i < NODES; i++) {
        report(fx->port[i], t, IDLE_NS);
    }
    for (int i = 0; i < NODES; i++) {
        HdrFrame f;

        while (hdr_recv(fx->port[i], FABRIC_KIND_PS1, &f, WAIT_MS) &&
               f.h.type != FABRIC_TYPE_SYNC) {
            last = MAX(last, f.h.deliver_time_ns);
            if (f.h.type == FABRIC_TYPE_DATA) {
                g_assert_cmpuint(got[i].n_data, <, G_N_ELEMENTS(got->data));
                got[i].data[got[i].n_data++] = f;
            } else if (f.h.type == FABRIC_TYPE_CREDIT) {
                got[i].credits++;
                got[i].credit_ns = f.h.deliver_time_ns;
            } else {
                g_assert_cmpuint(f.h.type, ==, FABRIC_TYPE_CONTROL);
            }
        }
        /* one grant for all, after everything due before it */
        g_assert_cmpuint(f.h.type, ==, FABRIC_TYPE_SYNC);
        g_assert_true(i == 0 || f.h.deliver_time_ns == grant);
        grant = f.h.deliver_time_ns;
    }
    g_assert_cmpuint(grant, >, t);
    g_assert_cmpuint(last, <, grant);
    return grant;
}

/* Rounds from `*grant` on until node `i` holds `n` DATA frames. */
static void rounds_until_data(Fixture *fx, uint64_t *grant, Got *got,
                              int i, unsigned n)
{
    for (int r = 0; got[i].n_data < n; r++) {
        g_assert_cmpint(r, <, ROUNDS_MAX);
        *grant = round_all(fx, *grant, got);
    }
}

static void send_data(int fd, unsigned dst, uint32_t tag, uint64_t send_ns)
{
    uint32_t words[WORDS] = { tag, 2, 3, 4 };
    uint8_t pl[FABRIC_PS1_DATA_LEN(WORDS)];

    hdr_send(fd, FABRIC_KIND_PS1, FABRIC_TYPE_DATA, 0, FABRIC_NODE_NONE, pl,
             fabric_ps1_data_encode(fabric_ps1_header_word(dst, WORDS),
                                    words, pl), send_ns);
}

/* Every node says a lock-step HELLO; returns the grant after the ACKs. */
static uint64_t lockstep_start(Fixture *fx, Got *got)
{
    uint64_t grant;

    connect_all(fx);
    for (int i = 0; i < NODES; i++) {
        uint8_t pl[FABRIC_HELLO_MAX_LEN];

        hdr_send(fx->port[i], FABRIC_KIND_PS1, FABRIC_TYPE_CONTROL, 0,
                 FABRIC_NODE_NONE, pl,
                 fabric_hello_encode(i, FABRIC_HELLO_F_LOCKSTEP, pl), 0);
    }
    /* idle nodes: E is the HELLO_ACKs' time, one hop */
    grant = round_all(fx, 0, got);
    g_assert_cmpuint(grant, ==, 2 * HOP_NS);
    return grant;
}

static uint32_t tag_of(const HdrFrame *f)
{
    return fabric_get_le32(f->pl + 4);
}

/*
 * A 600 s delay on 0>1: the packet arrives at send + hop + bytes + 600 s
 * of virtual time, a few rounds later.  Held in host time, it would miss
 * every receive's WAIT_MS.  A packet sent after the rule is gone waits
 * behind it on the cable.
 */
static void test_delay(Fixture *fx, gconstpointer unused)
{
    Got got[NODES] = { 0 };
    uint64_t grant, arrival;

    ctl_ok(fx, "fault add 0>1 delay ms=600000");
    grant = lockstep_start(fx, got);
    send_data(fx->port[0], 1, 0xa1, 400);
    grant = round_all(fx, grant, got);
    /* the insertion credit does not wait for the cable */
    g_assert_cmpuint(got[0].credits, ==, 1);
    g_assert_cmpuint(got[0].credit_ns, ==, 400 + PKT_NS);
    g_assert_cmpuint(grant, ==, 400 + PKT_NS + HOP_NS);

    /* the next packet on 0>1, not delayed: stamped behind the first */
    ctl_ok(fx, "fault clear");
    send_data(fx->port[0], 1, 0xa2, grant - 100);
    grant = round_all(fx, grant, got);
    rounds_until_data(fx, &grant, got, 1, 2);
    arrival = 400 + HOP_NS + PKT_NS + 600 * SEC_NS;
    g_assert_cmphex(tag_of(&got[1].data[0]), ==, 0xa1);
    g_assert_cmpuint(got[1].data[0].h.deliver_time_ns, ==, arrival);
    g_assert_cmphex(tag_of(&got[1].data[1]), ==, 0xa2);
    g_assert_cmpuint(got[1].data[1].h.deliver_time_ns, ==, arrival);
    g_assert_cmpuint(counter(fx, "link 0>1", "delayed"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 1", "in_flight"), ==, 0);
    g_assert_cmpuint(counter(fx, "node 1", "credit"), ==,
                     FABRIC_PS1_RX_FIFO - 2 * FABRIC_PS1_PKT_BYTES(WORDS));

    /* once the cable is clear, a packet takes send + hop + bytes again */
    send_data(fx->port[1], 2, 0xa3, grant - 100);
    grant = round_all(fx, grant, got);
    rounds_until_data(fx, &grant, got, 2, 1);
    g_assert_cmpuint(got[2].data[0].h.deliver_time_ns, ==,
                     got[2].data[0].h.send_time_ns + HOP_NS + PKT_NS);
}

/*
 * `down until=600s` on 0>1: a packet sent before crosses when the window
 * ends, in virtual time; its board gets its next insertion credit then.
 */
static void test_down_window(Fixture *fx, gconstpointer unused)
{
    Got got[NODES] = { 0 };
    uint64_t grant;

    ctl_ok(fx, "fault add 0-1 down at=100ns until=600s");
    grant = lockstep_start(fx, got);
    send_data(fx->port[0], 1, 0xb1, 400);
    /* nothing is due before the window's end: the grant jumps there */
    grant = round_all(fx, grant, got);
    g_assert_cmpuint(grant, ==, 600 * SEC_NS + PKT_NS + HOP_NS);
    rounds_until_data(fx, &grant, got, 1, 1);
    g_assert_cmpuint(got[0].credits, ==, 1);
    g_assert_cmpuint(got[0].credit_ns, ==, 600 * SEC_NS + PKT_NS);
    g_assert_cmpuint(got[1].data[0].h.deliver_time_ns, ==,
                     600 * SEC_NS + HOP_NS + PKT_NS);
    g_assert_cmpuint(counter(fx, "link 0>1", "down"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 0", "held"), ==, 1);
    g_autofree char *rules = ctl(fx, "fault list");
    g_assert_nonnull(strstr(rules, "matched=1"));
}

#define ADD(name, fn, args) \
    g_test_add("/fabricd-ps1-lockstep/" name, Fixture, args, fixture_setup, \
               fn, fixture_teardown)

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    ADD("delay", test_delay, exact);
    ADD("down-window", test_down_window, exact);
    return g_test_run();
}
