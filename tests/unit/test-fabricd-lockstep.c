/*
 * End-to-end tests of fabricd --lockstep (docs/lockstep.md) on the myrinet
 * kind: fake cards say HELLO with the lock-step flag and report rounds
 * with SYNC; fabricd must hold everything until every node has reported,
 * grant E + look-ahead, route a round's frames in (send time, node) order
 * whatever order they came in, and deliver them with their delivery time
 * before the grant that covers it.  Run from the repository root.
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

#define HOP_NS 300          /* myrinet's default switch delay: the look-ahead */
#define NS_PER_BYTE 4       /* 250 MB/s */
#define QUANTUM_NS 1000000

static const char *const exact[] = {
    "--kind", "myrinet", "--lockstep", "--lockstep-quantum", "0", NULL,
};
static const char *const quantum[] = {
    "--kind", "myrinet", "--lockstep", NULL,
};
static const char *const free_running[] = { "--kind", "myrinet", NULL };

static void hello_flags(int fd, unsigned id, uint8_t flags)
{
    uint8_t pl[FABRIC_HELLO_MAX_LEN];

    hdr_send(fd, FABRIC_KIND_MYRINET, FABRIC_TYPE_CONTROL, 0,
             FABRIC_NODE_NONE, pl, fabric_hello_encode(id, flags, pl), 0);
}

static void report(int fd, uint64_t t, uint64_t next)
{
    uint8_t pl[FABRIC_SYNC_REPORT_LEN];

    hdr_send(fd, FABRIC_KIND_MYRINET, FABRIC_TYPE_SYNC, 0, FABRIC_NODE_NONE,
             pl, fabric_sync_report_encode(next, pl), t);
}

static void report_all(Fixture *fx, uint64_t t)
{
    for (int i = 0; i < NODES; i++) {
        report(fx->port[i], t, t);
    }
}

/* The next frame on `fd` is a grant; returns it. */
static uint64_t expect_grant(int fd)
{
    HdrFrame f;

    hdr_expect(fd, FABRIC_KIND_MYRINET, FABRIC_TYPE_SYNC, &f);
    g_assert_cmpuint(f.h.len, ==, 0);
    return f.h.deliver_time_ns;
}

/*
 * A packet of `len` bytes with `tag` and its CRC, behind one route byte:
 * `hop` ports on from the sender's (the default switch: node i on port i).
 */
static size_t routed(uint8_t hop, uint8_t tag, size_t len, uint8_t *pl)
{
    pl[0] = 0x80 | hop;
    for (size_t i = 0; i < len; i++) {
        pl[1 + i] = (tag * 7 + i) & 0x7f;
    }
    fabric_put_le32(pl + 1 + len, fabric_crc32(pl + 1, len));
    return 1 + len + FABRIC_MYRI_CRC_LEN;
}

static void send_data(int fd, uint8_t hop, uint8_t tag, size_t len,
                      uint64_t send_ns)
{
    uint8_t pl[64];

    hdr_send(fd, FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, FABRIC_F_ROUTED,
             FABRIC_NODE_NONE, pl, routed(hop, tag, len, pl), send_ns);
}

/* Every node connected and said a lock-step HELLO at time 0. */
static void lockstep_hellos(Fixture *fx)
{
    connect_all(fx);
    for (int i = 0; i < NODES; i++) {
        hello_flags(fx->port[i], i, FABRIC_HELLO_F_LOCKSTEP);
    }
}

static void test_rounds(Fixture *fx, gconstpointer unused)
{
    HdrFrame f;
    uint64_t d0, d1;

    lockstep_hellos(fx);
    /* nothing moves until every node has reported */
    report(fx->port[0], 0, 0);
    report(fx->port[1], 0, 0);
    expect_nothing(fx->port[0]);
    report(fx->port[2], 0, 0);
    /* E = 0, the HELLO_ACKs are due at one hop: not before this grant */
    for (int i = 0; i < NODES; i++) {
        g_assert_cmpuint(expect_grant(fx->port[i]), ==, HOP_NS);
    }
    report_all(fx, HOP_NS);
    for (int i = 0; i < NODES; i++) {
        hdr_expect(fx->port[i], FABRIC_KIND_MYRINET, FABRIC_TYPE_CONTROL, &f);
        g_assert_cmpuint(f.pl[0], ==, FABRIC_CTL_HELLO_ACK);
        g_assert_cmpuint(f.h.deliver_time_ns, ==, HOP_NS);
        g_assert_cmpuint(expect_grant(fx->port[i]), ==, 2 * HOP_NS);
    }

    /*
     * node1's packet comes first but node0's was sent at the same time:
     * the round routes node0's first, and both are due at the same time.
     */
    send_data(fx->port[1], 1, 1, 20, 400);
    send_data(fx->port[0], 2, 0, 20, 400);
    report_all(fx, 2 * HOP_NS);
    hdr_expect(fx->port[2], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, &f);
    g_assert_cmpuint(f.h.src, ==, 0);
    d0 = f.h.deliver_time_ns;
    hdr_expect(fx->port[2], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, &f);
    g_assert_cmpuint(f.h.src, ==, 1);
    d1 = f.h.deliver_time_ns;
    g_assert_cmpuint(d0, ==, 400 + HOP_NS + (1 + 20 + 4) * NS_PER_BYTE);
    g_assert_cmpuint(d1, ==, d0);
    /* E = 600 (the nodes are busy): the grant is one hop on */
    for (int i = 0; i < NODES; i++) {
        g_assert_cmpuint(expect_grant(fx->port[i]), ==, 3 * HOP_NS);
    }

    /* idle nodes: the next grant is the earliest next event plus a hop */
    for (int i = 0; i < NODES; i++) {
        report(fx->port[i], 3 * HOP_NS, 50000 + i * 1000);
    }
    for (int i = 0; i < NODES; i++) {
        g_assert_cmpuint(expect_grant(fx->port[i]), ==, 50000 + HOP_NS);
    }

    /* a report past the grant breaks lock-step: that node is cut off */
    report(fx->port[0], 60000, 60000);
    expect_eof(fx->port[0]);
    close(fx->port[0]);
    fx->port[0] = -1;
    /* the others go on without it */
    report(fx->port[1], 50000 + HOP_NS, 50000 + HOP_NS);
    report(fx->port[2], 50000 + HOP_NS, 50000 + HOP_NS);
    g_assert_cmpuint(expect_grant(fx->port[1]), ==, 50000 + 2 * HOP_NS);
    g_autofree char *st = ctl(fx, "status");
    g_assert_nonnull(strstr(st, "lockstep: grant=50600 ns rounds=5 "
                                "lookahead=300 ns quantum=0 ns ordered=5"));
}

/*
 * While no DATA flows, a round is a quantum long: the HELLO_ACKs (due at
 * one hop) come within the first round, then the grant of a quantum.  A
 * DATA frame sent in a quiet round arrives no earlier than the round's end;
 * the rounds after it are one hop long.
 */
static void test_quantum(Fixture *fx, gconstpointer unused)
{
    HdrFrame f;

    lockstep_hellos(fx);
    report_all(fx, 0);
    for (int i = 0; i < NODES; i++) {
        hdr_expect(fx->port[i], FABRIC_KIND_MYRINET, FABRIC_TYPE_CONTROL, &f);
        g_assert_cmpuint(f.h.deliver_time_ns, ==, HOP_NS);
        g_assert_cmpuint(expect_grant(fx->port[i]), ==, QUANTUM_NS);
    }
    send_data(fx->port[0], 1, 9, 20, 5000);
    report_all(fx, QUANTUM_NS);
    hdr_expect(fx->port[1], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, &f);
    g_assert_cmpuint(f.h.deliver_time_ns, ==, QUANTUM_NS);
    for (int i = 0; i < NODES; i++) {
        g_assert_cmpuint(expect_grant(fx->port[i]), ==, QUANTUM_NS + HOP_NS);
    }
}

static void test_modes_refused(Fixture *fx, gconstpointer extra)
{
    g_autofree char *reason = NULL;
    bool lockstep = extra == exact;

    connect_all(fx);
    hello_flags(fx->port[1], 1, lockstep ? 0 : FABRIC_HELLO_F_LOCKSTEP);
    reason = hdr_expect_reject(fx->port[1], FABRIC_KIND_MYRINET);
    g_assert_cmpstr(reason, ==, lockstep ?
                    "this fabricd runs lock-step (--lockstep) but the "
                    "device is free-running (no lockstep=on)" :
                    "the device runs lock-step (lockstep=on) but this "
                    "fabricd is free-running (no --lockstep)");
    expect_eof(fx->port[1]);
}

static void test_bad_options(void)
{
    g_autofree char *out = NULL;
    static const char *const big[] = {
        FABRICD, "--kind", "ps1", "--nodes", "2", "--dir", "/tmp/x",
        "--lockstep", "--lockstep-quantum", "2000000000", NULL,
    };
    static const char *const q[] = {
        FABRICD, "--kind", "ps1", "--nodes", "2", "--dir", "/tmp/x",
        "--lockstep-quantum", "5", NULL,
    };

    expect_refused(big, "--lockstep-quantum 2000000000 is out of range; "
                   "use 0..1000000000 ns");
    expect_refused(q, "--lockstep-quantum needs --lockstep");
}

#define ADD(name, fn, args) \
    g_test_add("/fabricd-lockstep/" name, Fixture, args, fixture_setup, fn, \
               fixture_teardown)

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/fabricd-lockstep/bad-options", test_bad_options);
    ADD("rounds", test_rounds, exact);
    ADD("quantum", test_quantum, quantum);
    ADD("free-device-refused", test_modes_refused, exact);
    ADD("lockstep-device-refused", test_modes_refused, free_running);
    return g_test_run();
}
