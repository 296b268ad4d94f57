/*
 * End-to-end tests of build/bin/fabricd --kind ps1: fake ParaStation
 * boards speak the fabric header framing over the node sockets (HELLO,
 * ROUTES, DATA with parity and CRC, CREDIT, BARRIER).  Run from the
 * repository root.  The daemon plumbing is fabricd-harness.h (its fixture
 * starts "--kind eth --nodes 3"; the arguments given here come later and
 * win).  Every fixture checks that fabricd exits 0 on SIGTERM at the end.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "fabricd-harness.h"
#include "fabricd-frames.h"
#pragma GCC diagnostic pop

#include "ps1net.h"

#define T_SEND 1000000ull   /* virtual send time the fake boards stamp */

static const char *const ring3[] = { "--kind", "ps1", NULL };
static const char *const torus4[] = { "--kind", "ps1", "--nodes", "4",
                                      "--topology", "torus:2x2", NULL };

/* ---- the fake board's side of the wire (fabricd-frames.h) ---- */

static void send_ps1_kind(int fd, uint8_t kind, uint8_t type,
                          const void *pl, size_t len, uint64_t send_ns)
{
    hdr_send(fd, kind, type, 0, FABRIC_NODE_NONE, pl, len, send_ns);
}

static void send_ps1(int fd, uint8_t type, const void *pl, size_t len)
{
    send_ps1_kind(fd, FABRIC_KIND_PS1, type, pl, len, T_SEND);
}

static bool recv_ps1(int fd, HdrFrame *f, int ms)
{
    return hdr_recv(fd, FABRIC_KIND_PS1, f, ms);
}

static void expect_ps1(int fd, uint8_t type, HdrFrame *f)
{
    hdr_expect(fd, FABRIC_KIND_PS1, type, f);
}

static void hello_as(int fd, unsigned id)
{
    hdr_hello_as(fd, FABRIC_KIND_PS1, id);
}

/* HELLO, and check the HELLO_ACK: node count and torus shape. */
static void hello(int fd, unsigned id, unsigned nodes, unsigned w, unsigned h)
{
    HdrFrame f;

    hello_as(fd, id);
    expect_ps1(fd, FABRIC_TYPE_CONTROL, &f);
    g_assert_cmpuint(f.h.len, ==, FABRIC_PS1_HELLO_ACK_LEN);
    g_assert_cmpuint(f.pl[0], ==, FABRIC_CTL_HELLO_ACK);
    g_assert_cmpuint(fabric_get_le16(f.pl + 1), ==, nodes);
    g_assert_cmpuint(f.pl[3], ==, w);
    g_assert_cmpuint(f.pl[4], ==, h);
}

static void connect_hello_all(Fixture *fx)
{
    connect_all(fx);
    for (int i = 0; i < NODES; i++) {
        hello(fx->port[i], i, NODES, 0, 0);
    }
}

static void send_data(int fd, unsigned dst, unsigned count, uint32_t tag)
{
    uint32_t words[FABRIC_PS1_MAX_WORDS];
    uint8_t pl[FABRIC_PS1_DATA_LEN(FABRIC_PS1_MAX_WORDS)];

    for (unsigned i = 0; i < count; i++) {
        words[i] = tag + i * 0x01010101u;
    }
    send_ps1(fd, FABRIC_TYPE_DATA, pl,
             fabric_ps1_data_encode(fabric_ps1_header_word(dst, count),
                                    words, pl));
}

static bool crc_ok(const HdrFrame *f, unsigned count)
{
    size_t covered = 4 + 4 * (size_t)count;

    return fabric_crc32(f->pl, covered) ==
           fabric_get_le32(f->pl + covered + count);
}

/* A DATA frame from `src` with `count` words starting with `tag`. */
static void expect_data(int fd, unsigned src, unsigned dst, unsigned count,
                        uint32_t tag, HdrFrame *f)
{
    expect_ps1(fd, FABRIC_TYPE_DATA, f);
    g_assert_cmpuint(f->h.len, ==, FABRIC_PS1_DATA_LEN(count));
    g_assert_cmphex(fabric_get_le32(f->pl), ==, src << 16 | count);
    g_assert_cmpuint(f->h.src, ==, src);
    g_assert_cmpuint(f->h.dst, ==, dst);
    g_assert_cmphex(fabric_get_le32(f->pl + 4), ==, tag);
    g_assert_cmpuint(f->h.send_time_ns, ==, T_SEND);
}

static void expect_credit(int fd)
{
    HdrFrame f;

    expect_ps1(fd, FABRIC_TYPE_CREDIT, &f);
    g_assert_cmpuint(f.h.len, ==, 4);
    g_assert_cmpuint(fabric_get_le32(f.pl), ==, 1);
}

static void send_credit(int fd, uint32_t bytes)
{
    uint8_t pl[4];

    fabric_put_le32(pl, bytes);
    send_ps1(fd, FABRIC_TYPE_CREDIT, pl, sizeof(pl));
}

static void send_barrier(int fd, uint8_t op, uint8_t bits)
{
    uint8_t pl[2] = { op, bits };

    send_ps1(fd, FABRIC_TYPE_BARRIER, pl, sizeof(pl));
}

static void expect_release(int fd, uint8_t bits)
{
    HdrFrame f;

    expect_ps1(fd, FABRIC_TYPE_BARRIER, &f);
    g_assert_cmpuint(f.h.len, ==, 2);
    g_assert_cmpuint(f.pl[0], ==, FABRIC_PS1_BARRIER_RELEASE);
    g_assert_cmphex(f.pl[1], ==, bits);
    g_assert_cmpuint(f.h.deliver_time_ns, ==, T_SEND + PS1_BARRIER_NS);
}

static void send_routes(int fd, unsigned id, const uint8_t *table,
                        unsigned count)
{
    uint8_t pl[FABRIC_PS1_ROUTES_HDR_LEN + 16];

    g_assert_cmpuint(count, <=, 16);
    pl[0] = FABRIC_CTL_ROUTES;
    fabric_put_le16(pl + 1, id);
    fabric_put_le16(pl + 3, count);
    memcpy(pl + FABRIC_PS1_ROUTES_HDR_LEN, table, count);
    send_ps1(fd, FABRIC_TYPE_CONTROL, pl, FABRIC_PS1_ROUTES_HDR_LEN + count);
}

static char *expect_reject(int fd)
{
    return hdr_expect_reject(fd, FABRIC_KIND_PS1);
}

/* Poll a command until its answer contains `needle`. */
static void wait_answer(Fixture *fx, const char *command, const char *needle)
{
    gint64 deadline = deadline_after(WAIT_MS);

    for (;;) {
        g_autofree char *answer = ctl(fx, command);

        if (strstr(answer, needle)) {
            return;
        }
        if (!ms_left(deadline)) {
            g_test_message("'%s' never said '%s'; it said: %s", command,
                           needle, answer);
            g_assert_not_reached();
        }
        g_usleep(5000);
    }
}

/* ---- tests ---- */

static void test_banner_and_status(void)
{
    Fixture fx;

    fixture_init(&fx);
    g_autofree char *banner = start_fabricd(&fx, ring3);
    g_autofree char *want = g_strdup_printf(
        "fabricd: kind=ps1 nodes=3 seed=0x000000000000002a dir=%s", fx.dir);

    g_assert_cmpstr(banner, ==, want);
    g_autofree char *status = ctl(&fx, "status");

    g_assert_nonnull(strstr(status, "kind=ps1"));
    g_assert_nonnull(strstr(status, "topology: ring of 3 nodes "
                                    "(links i>i+1 mod 3)\n"));
    g_assert_nonnull(strstr(status, "ps1: hop 250 ns, link 20 MB/s"));
    g_assert_nonnull(strstr(status, "node 2: unlinked table=default"));

    /* only the ring's directed links exist */
    g_autofree char *all = ctl(&fx, "counters");

    g_assert_nonnull(strstr(all, "link 0>1 state=up frames=0"));
    g_assert_nonnull(strstr(all, "link 2>0 state=up"));
    g_assert_null(strstr(all, "link 1>0"));
    g_assert_null(strstr(all, "link 0>2"));
    g_assert_nonnull(strstr(all, "node 1 linked=0 table=default credit=0 "));
    g_assert_nonnull(strstr(all, "barrier 3 participants=0 arrived=0 "
                                 "completions=0\n"));

    g_autofree char *table = ctl(&fx, "table");

    g_assert_cmpstr(table, ==, "node 0 default 011\n"
                               "node 1 default 101\n"
                               "node 2 default 110\n");
    fixture_teardown(&fx, NULL);
}

static void test_traffic(Fixture *fx, gconstpointer unused)
{
    HdrFrame f;

    connect_hello_all(fx);
    wait_counter(fx, "node 2", "linked", 1);
    g_assert_cmpuint(counter(fx, "node 2", "credit"), ==, 1024);

    /* 0 -> 2 crosses 0>1 and 1>2; the sender gets its next credit */
    send_data(fx->port[0], 2, 5, 0xa0000001);
    expect_data(fx->port[2], 0, 2, 5, 0xa0000001, &f);
    g_assert_true(crc_ok(&f, 5));
    g_assert_false(f.h.flags & FABRIC_F_CORRUPTED);
    /* 2 hops of 250 ns, 24 bytes at 20 MB/s */
    g_assert_cmpuint(f.h.deliver_time_ns, ==, T_SEND + 2 * 250 + 24 * 50);
    expect_credit(fx->port[0]);
    g_assert_cmpuint(counter(fx, "link 0>1", "frames"), ==, 1);
    g_assert_cmpuint(counter(fx, "link 1>2", "frames"), ==, 1);
    g_assert_cmpuint(counter(fx, "link 2>0", "frames"), ==, 0);
    g_assert_cmpuint(counter(fx, "node 2", "delivered"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 2", "credit"), ==, 1024 - 24);
    g_assert_cmpuint(counter(fx, "node 0", "inserted"), ==, 1);
    g_assert_cmpuint(counter(fx, "port 0", "rx_frames"), ==, 2);

    /* the reader returns the FIFO space */
    send_credit(fx->port[2], 24);
    wait_counter(fx, "node 2", "credit", 1024);

    /* to itself: no link crossed */
    send_data(fx->port[1], 1, 1, 0xb0000000);
    expect_data(fx->port[1], 1, 1, 1, 0xb0000000, &f);
    g_assert_cmpuint(f.h.deliver_time_ns, ==, T_SEND + 8 * 50);
    expect_credit(fx->port[1]);
    send_credit(fx->port[1], 8);

    /* in order per pair; the third fits once the host reads one */
    for (uint32_t i = 0; i < 3; i++) {
        send_data(fx->port[2], 1, 100, 0xc0000000 + i);
        expect_credit(fx->port[2]);
    }
    for (uint32_t i = 0; i < 3; i++) {
        expect_data(fx->port[1], 2, 1, 100, 0xc0000000 + i, &f);
        g_assert_true(crc_ok(&f, 100));
        if (i == 1) {
            /* 2 * 404 bytes in the FIFO: the third does not fit */
            expect_nothing(fx->port[1]);
            wait_counter(fx, "node 1", "x_in", 1);
        }
        if (i > 0) {
            send_credit(fx->port[1], 404);
        }
    }

    /* barrier line 2 for everybody: released when the last one arrives */
    for (int i = 0; i < NODES; i++) {
        send_barrier(fx->port[i], FABRIC_PS1_BARRIER_MASK, 0x4);
    }
    wait_counter(fx, "barrier 2", "participants", 3);
    send_barrier(fx->port[0], FABRIC_PS1_BARRIER_ARRIVE, 0x4);
    send_barrier(fx->port[2], FABRIC_PS1_BARRIER_ARRIVE, 0x4);
    wait_counter(fx, "barrier 2", "arrived", 2);
    expect_nothing(fx->port[0]);
    send_barrier(fx->port[1], FABRIC_PS1_BARRIER_ARRIVE, 0x5);
    for (int i = 0; i < NODES; i++) {
        expect_release(fx->port[i], 0x4);
    }
    g_assert_cmpuint(counter(fx, "barrier 2", "completions"), ==, 1);
    /* line 0 was not in node 1's mask */
    g_assert_cmpuint(counter(fx, "node 1", "barrier_ignored"), ==, 1);
}

/* Node 1 never reads: packets wait in the network, none is lost. */
static void test_flow_control(Fixture *fx, gconstpointer unused)
{
    HdrFrame f;
    unsigned sent = 0, credits = 0;

    connect_hello_all(fx);
    /* send while credits come back */
    do {
        send_data(fx->port[0], 1, FABRIC_PS1_MAX_WORDS, 0x100 + sent++);
        if (!recv_ps1(fx->port[0], &f, 300)) {
            break;
        }
        g_assert_cmpuint(f.h.type, ==, FABRIC_TYPE_CREDIT);
        credits++;
    } while (sent < 20);
    /* two in node 1's FIFO, two in its x-in, one in node 0's host-in */
    g_assert_cmpuint(sent, ==, 5);
    g_assert_cmpuint(credits, ==, 4);
    expect_data(fx->port[1], 0, 1, FABRIC_PS1_MAX_WORDS, 0x100, &f);
    expect_data(fx->port[1], 0, 1, FABRIC_PS1_MAX_WORDS, 0x101, &f);
    expect_nothing(fx->port[1]);
    g_assert_cmpuint(counter(fx, "node 1", "x_in"), ==, 2);
    g_assert_cmpuint(counter(fx, "node 1", "credit"), ==, 0);
    g_assert_cmpuint(counter(fx, "node 0", "host_in"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 0", "dropped"), ==, 0);
    g_autofree char *status = ctl(fx, "status");

    g_assert_nonnull(strstr(status, "3 packets in the network"));

    /* the host reads both: two more arrive, and node 0 may send again */
    send_credit(fx->port[1], 1024);
    expect_data(fx->port[1], 0, 1, FABRIC_PS1_MAX_WORDS, 0x102, &f);
    expect_data(fx->port[1], 0, 1, FABRIC_PS1_MAX_WORDS, 0x103, &f);
    expect_credit(fx->port[0]);
    send_credit(fx->port[1], 1024);
    expect_data(fx->port[1], 0, 1, FABRIC_PS1_MAX_WORDS, 0x104, &f);
    wait_counter(fx, "node 1", "delivered", 5);
}

static void test_malformed(Fixture *fx, gconstpointer unused)
{
    uint8_t junk[16] = { 0 };
    uint8_t hdr[FABRIC_HDR_LEN];
    FabricHdr h = { .kind = 9, .type = FABRIC_TYPE_DATA, .len = 4 };

    connect_all(fx);
    /* before HELLO, DATA is refused but the connection stays */
    send_data(fx->port[0], 1, 1, 1);
    wait_counter(fx, "port 0", "malformed", 1);
    hello(fx->port[0], 0, NODES, 0, 0);
    hello(fx->port[1], 1, NODES, 0, 0);

    /* word count 0, a destination outside the fabric, a short payload */
    fabric_put_le32(junk, 1u << 16);
    send_ps1(fx->port[0], FABRIC_TYPE_DATA, junk, FABRIC_PS1_DATA_LEN(0));
    send_data(fx->port[0], 3, 2, 2);
    send_ps1(fx->port[0], FABRIC_TYPE_DATA, junk, 3);
    /* an unknown kind in the header (skipped by the framing) */
    fabric_hdr_encode(&h, hdr);
    write_all(fx->port[0], hdr, sizeof(hdr));
    write_all(fx->port[0], junk, 4);
    /* a frame of another kind, and bad CREDIT, BARRIER, CONTROL frames */
    send_ps1_kind(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, junk,
                  8, 0);
    send_ps1(fx->port[0], FABRIC_TYPE_CREDIT, junk, 3);
    send_ps1(fx->port[0], FABRIC_TYPE_BARRIER, (uint8_t[]){ 3, 1 }, 2);
    send_ps1(fx->port[0], FABRIC_TYPE_CONTROL, (uint8_t[]){ 99 }, 1);
    wait_counter(fx, "port 0", "malformed", 9);
    g_assert_cmpuint(counter(fx, "node 0", "accepted"), ==, 0);

    /* the connection is still good */
    HdrFrame f;

    send_data(fx->port[0], 1, 3, 0x33);
    expect_data(fx->port[1], 0, 1, 3, 0x33, &f);
    expect_credit(fx->port[0]);

    /* a bad magic loses the stream: closed, and the port is free again */
    memset(hdr, 0x5a, sizeof(hdr));
    write_all(fx->port[0], hdr, sizeof(hdr));
    expect_eof(fx->port[0]);
    wait_counter(fx, "port 0", "malformed", 10);
    wait_counter(fx, "port 0", "connected", 0);
    g_assert_cmpuint(counter(fx, "node 0", "linked"), ==, 0);
    close(fx->port[0]);
    fx->port[0] = connect_port(fx, 0);
    hello(fx->port[0], 0, NODES, 0, 0);
    g_assert_cmpuint(counter(fx, "port 0", "connects"), ==, 2);
}

static void test_hello_rejected(Fixture *fx, gconstpointer unused)
{
    g_autofree char *reason = NULL;
    HdrFrame f;

    connect_all(fx);
    /* the socket is the node id: a board claiming node 2 on node1.sock */
    hello_as(fx->port[1], 2);
    reason = expect_reject(fx->port[1]);
    g_assert_nonnull(strstr(reason, "node 2"));
    g_assert_nonnull(strstr(reason, "node1.sock"));
    expect_eof(fx->port[1]);
    wait_counter(fx, "port 1", "connected", 0);
    g_assert_cmpuint(counter(fx, "port 1", "rejected"), ==, 1);
    g_assert_cmpuint(counter(fx, "port 1", "malformed"), ==, 0);
    close(fx->port[1]);

    /* a board of another kind is refused too */
    fx->port[1] = connect_port(fx, 1);
    send_ps1_kind(fx->port[1], FABRIC_KIND_TELEGRAPHOS, FABRIC_TYPE_CONTROL,
                  (uint8_t[]){ FABRIC_CTL_HELLO, 1, 0 }, 3, 0);
    g_free(reason);
    reason = expect_reject(fx->port[1]);
    g_assert_nonnull(strstr(reason, "kind"));
    expect_eof(fx->port[1]);
    close(fx->port[1]);

    /* a HELLO of the wrong length is refused the same way */
    fx->port[1] = connect_port(fx, 1);
    send_ps1_kind(fx->port[1], FABRIC_KIND_PS1, FABRIC_TYPE_CONTROL,
                  (uint8_t[]){ FABRIC_CTL_HELLO, 1, 0, 0 }, 4, 0);
    g_free(reason);
    reason = expect_reject(fx->port[1]);
    g_assert_cmpstr(reason, ==, "HELLO payload is 4 bytes; expected 3");
    expect_eof(fx->port[1]);
    close(fx->port[1]);

    /* the right id works on a new connection */
    fx->port[1] = connect_port(fx, 1);
    hello(fx->port[1], 1, NODES, 0, 0);
    wait_counter(fx, "node 1", "linked", 1);

    /* a bad ROUTES is refused, and the link stays */
    send_routes(fx->port[1], 1, (uint8_t[]){ 1, 0 }, 2);
    g_free(reason);
    reason = expect_reject(fx->port[1]);
    g_assert_nonnull(strstr(reason, "3 nodes"));
    send_routes(fx->port[1], 0, (uint8_t[]){ 1, 0, 1 }, 3);
    g_free(reason);
    reason = expect_reject(fx->port[1]);
    send_routes(fx->port[1], 1, (uint8_t[]){ 1, 0, 7 }, 3);
    g_free(reason);
    reason = expect_reject(fx->port[1]);
    wait_counter(fx, "node 1", "routes_rejected", 3);
    g_assert_cmpuint(counter(fx, "node 1", "linked"), ==, 1);
    send_data(fx->port[1], 1, 1, 0x11);
    expect_data(fx->port[1], 1, 1, 1, 0x11, &f);
    expect_credit(fx->port[1]);
}

/*
 * A REJECT before closing is written even when the board reads slowly:
 * many refused ROUTES back the socket up first.
 */
static void test_reject_flushed(Fixture *fx, gconstpointer unused)
{
    /* the REJECTs (with their bookkeeping) fit the port's 4 MiB bound */
    enum { BACKLOG = 10000 };
    g_autofree char *last = NULL;
    HdrFrame f;
    unsigned rejects = 0;

    connect_all(fx);
    hello(fx->port[0], 0, NODES, 0, 0);
    for (int i = 0; i < BACKLOG; i++) {
        send_routes(fx->port[0], 1, (uint8_t[]){ 0 }, 1);
    }
    hello_as(fx->port[0], 1);
    wait_counter(fx, "port 0", "rejected", 1);
    while (recv_ps1(fx->port[0], &f, WAIT_MS)) {
        g_assert_cmpuint(f.h.type, ==, FABRIC_TYPE_CONTROL);
        g_assert_cmpuint(f.pl[0], ==, FABRIC_CTL_REJECT);
        g_free(last);
        last = g_strndup((const char *)f.pl + 1, f.h.len - 1);
        rejects++;
    }
    g_assert_cmpuint(rejects, ==, BACKLOG + 1);
    g_assert_nonnull(strstr(last, "HELLO says node 1"));
    g_assert_cmpuint(counter(fx, "node 0", "routes_rejected"), ==, BACKLOG);
    wait_counter(fx, "port 0", "connected", 0);
}

static void test_routes(Fixture *fx, gconstpointer unused)
{
    HdrFrame f;

    connect_hello_all(fx);
    /* node 0 has no route to 2: held in its host-in, no credit back */
    send_routes(fx->port[0], 0, (uint8_t[]){ 0, 1, 3 }, 3);
    wait_answer(fx, "table", "node 0 loaded 013\n");
    send_data(fx->port[0], 2, 2, 0x22);
    wait_counter(fx, "node 0", "unroutable", 1);
    g_assert_cmpuint(counter(fx, "node 0", "unroutable_now"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 0", "host_in"), ==, 1);
    expect_nothing(fx->port[0]);
    expect_nothing(fx->port[2]);
    g_autofree char *status = ctl(fx, "status");

    g_assert_nonnull(strstr(status, "unroutable_now=1"));
    /* a good table sets it free */
    send_routes(fx->port[0], 0, (uint8_t[]){ 0, 1, 1 }, 3);
    expect_data(fx->port[2], 0, 2, 2, 0x22, &f);
    expect_credit(fx->port[0]);
}

static void test_link_faults(Fixture *fx, gconstpointer unused)
{
    HdrFrame f;
    gint64 start;

    connect_hello_all(fx);
    /* rules and link commands name links of the ring only */
    ctl_err(fx, "fault add 0>2 drop p=1", "0>2 is not a link of this fabric");
    ctl_err(fx, "link down 1>0", "ring of 3 nodes");
    ctl_ok(fx, "link down 0-1");        /* 0>1 exists */

    /* a down link holds packets; link up lets them go */
    send_data(fx->port[0], 1, 4, 0x41);
    wait_counter(fx, "link 0>1", "down", 1);
    expect_nothing(fx->port[1]);
    expect_nothing(fx->port[0]);
    g_assert_cmpuint(counter(fx, "node 0", "host_in"), ==, 1);
    ctl_ok(fx, "link up 0>1");
    expect_data(fx->port[1], 0, 1, 4, 0x41, &f);
    expect_credit(fx->port[0]);
    g_assert_cmpuint(counter(fx, "link 0>1", "down"), ==, 1);

    /* a down rule works the same way */
    ctl_ok(fx, "fault add * down");
    send_data(fx->port[0], 1, 4, 0x42);
    wait_counter(fx, "link 0>1", "down", 2);
    expect_nothing(fx->port[1]);
    ctl_ok(fx, "fault clear");
    expect_data(fx->port[1], 0, 1, 4, 0x42, &f);
    expect_credit(fx->port[0]);

    /* a down rule with an end: packets wait for it, then go on by
     * themselves (no command wakes them) */
    g_autofree char *t = ctl(fx, "time");
    guint64 now = g_ascii_strtoull(t + 5, NULL, 10);
    g_autofree char *rule = g_strdup_printf(
        "fault add 1|0,2 down until=%" G_GUINT64_FORMAT "ns",
        now + 300000000);

    ctl_ok(fx, rule);
    start = g_get_monotonic_time();
    send_data(fx->port[0], 1, 4, 0x4a);
    wait_counter(fx, "link 0>1", "down", 3);
    expect_data(fx->port[1], 0, 1, 4, 0x4a, &f);
    g_assert_cmpint(g_get_monotonic_time() - start, >=, 250000);
    expect_credit(fx->port[0]);
    ctl_ok(fx, "fault clear");

    /* ps1 never duplicates or reorders: such rules are refused */
    ctl_err(fx, "fault add 0>1 duplicate p=0.5",
            "ps1 does not duplicate packets: its network never duplicates "
            "one and keeps each cable's packets in order");
    ctl_err(fx, "fault add * reorder p=1 us=5", "ps1 does not reorder");
    g_autofree char *file = g_build_filename(fx->dir, "dup.faults", NULL);
    g_autofree char *load = g_strdup_printf("fault load %s", file);
    g_autofree char *want = g_strdup_printf("%s:2: ps1 does not duplicate",
                                            file);

    g_assert_true(g_file_set_contents(file, "0>1 drop ge p=0.1 r=0.5\n"
                                      "* duplicate p=0.1\n", -1, NULL));
    ctl_err(fx, load, want);
    g_autofree char *none = ctl(fx, "fault list");

    g_assert_cmpstr(none, ==, "");

    /* corrupt on 1>2: flagged, and the board's CRC check fails */
    ctl_ok(fx, "fault add 1>2 corrupt p=1 offsets=40");
    send_data(fx->port[0], 2, 4, 0x43);
    expect_data(fx->port[2], 0, 2, 4, 0x43 ^ 0x100, &f);
    g_assert_true(f.h.flags & FABRIC_F_CORRUPTED);
    g_assert_false(crc_ok(&f, 4));
    expect_credit(fx->port[0]);
    g_assert_cmpuint(counter(fx, "link 1>2", "corrupted"), ==, 1);
    ctl_ok(fx, "fault clear");

    /* the first packet on 0>1 is lost (a hardware failure) */
    ctl_ok(fx, "fault add 0>1 drop nth=1");
    send_data(fx->port[0], 1, 4, 0x44);
    expect_credit(fx->port[0]);
    send_data(fx->port[0], 1, 4, 0x45);
    expect_data(fx->port[1], 0, 1, 4, 0x45, &f);
    expect_credit(fx->port[0]);
    g_assert_cmpuint(counter(fx, "link 0>1", "dropped"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 0", "dropped"), ==, 1);
    ctl_ok(fx, "fault clear");

    /* a delay on 2>0 holds the packet on the wall clock */
    ctl_ok(fx, "fault add 2>0 delay ms=150");
    start = g_get_monotonic_time();
    send_data(fx->port[2], 0, 4, 0x46);
    expect_credit(fx->port[2]);
    wait_counter(fx, "node 0", "in_flight", 1);
    expect_data(fx->port[0], 2, 0, 4, 0x46, &f);
    g_assert_cmpint(g_get_monotonic_time() - start, >=, 150000);
    g_assert_cmpuint(counter(fx, "link 2>0", "delayed"), ==, 1);
}

static void test_disconnect(Fixture *fx, gconstpointer unused)
{
    HdrFrame f;

    connect_hello_all(fx);
    /* line 0: all three; node 2 leaves before arriving */
    for (int i = 0; i < NODES; i++) {
        send_barrier(fx->port[i], FABRIC_PS1_BARRIER_MASK, 0x1);
    }
    wait_counter(fx, "barrier 0", "participants", 3);
    send_barrier(fx->port[0], FABRIC_PS1_BARRIER_ARRIVE, 0x1);
    send_barrier(fx->port[1], FABRIC_PS1_BARRIER_ARRIVE, 0x1);
    wait_counter(fx, "barrier 0", "arrived", 2);
    close(fx->port[2]);
    fx->port[2] = -1;
    expect_release(fx->port[0], 0x1);
    expect_release(fx->port[1], 0x1);
    wait_counter(fx, "node 2", "linked", 0);

    /* packets for a node without a host wait for it */
    send_data(fx->port[0], 2, 6, 0x66);
    expect_credit(fx->port[0]);
    wait_counter(fx, "node 2", "x_in", 1);
    fx->port[2] = connect_port(fx, 2);
    hello(fx->port[2], 2, NODES, 0, 0);
    expect_data(fx->port[2], 0, 2, 6, 0x66, &f);
}

static void test_capture(Fixture *fx, gconstpointer unused)
{
    g_autofree char *path = path_in(fx, "ps1.pcapng");
    g_autofree char *cmd = g_strdup_printf("capture start %s", path);
    g_autofree char *stop = NULL;
    HdrFrame f;

    connect_hello_all(fx);
    ctl_ok(fx, cmd);
    send_data(fx->port[0], 2, 3, 0x77);
    expect_data(fx->port[2], 0, 2, 3, 0x77, &f);
    expect_credit(fx->port[0]);
    send_barrier(fx->port[1], FABRIC_PS1_BARRIER_MASK, 0x8);
    send_barrier(fx->port[1], FABRIC_PS1_BARRIER_ARRIVE, 0x8);
    expect_release(fx->port[1], 0x8);
    /* DATA and the release are recorded; HELLO and CREDIT are not */
    stop = ctl(fx, "capture stop");
    g_assert_cmpstr(stop, ==, "frames 2\n");

    g_auto(GStrv) packets = capture_packets(path);

    if (!packets) {
        g_test_skip("tshark is not installed: capture contents not checked");
        return;
    }
    g_assert_cmpuint(g_strv_length(packets), ==, 2);
    /* 32 + 4 + 12 + 3 + 4, then 32 + 2 */
    g_assert_cmpstr(packets[0], ==, "node2\tnode0>node2\t55");
    g_assert_cmpstr(packets[1], ==, "node1\tfabric>node1\t34");
}

static void test_torus(void)
{
    Fixture fx;
    int port3;
    HdrFrame f;

    fixture_init(&fx);
    g_free(start_fabricd(&fx, torus4));
    g_autofree char *status = ctl(&fx, "status");

    g_assert_nonnull(strstr(status, "torus 2x2 of 4 nodes"));
    connect_all(&fx);
    port3 = connect_port(&fx, 3);
    for (int i = 0; i < NODES; i++) {
        hello(fx.port[i], i, 4, 2, 2);
    }
    hello(port3, 3, 4, 2, 2);
    /* x then y: 0>1>3 */
    send_data(fx.port[0], 3, 2, 0x303);
    expect_data(port3, 0, 3, 2, 0x303, &f);
    g_assert_cmpuint(f.h.deliver_time_ns, ==, T_SEND + 2 * 250 + 12 * 50);
    expect_credit(fx.port[0]);
    g_assert_cmpuint(counter(&fx, "link 0>1", "frames"), ==, 1);
    g_assert_cmpuint(counter(&fx, "link 1>3", "frames"), ==, 1);
    ctl_err(&fx, "fault add 0>3 drop p=1", "is not a link");
    ctl_ok(&fx, "fault add 2>0 drop p=1");
    close(port3);
    fixture_teardown(&fx, NULL);
}

static void test_bad_arguments(void)
{
    g_autofree char *base = make_short_tmpdir();
    g_autofree char *never = g_build_filename(base, "never", NULL);
    static const struct {
        const char *args[12];
        const char *message;
    } cases[] = {
        { { "--kind", "ps1", "--nodes", "4", "--topology", "torus:2x3" },
          "torus:2x3 has 6 nodes but --nodes is 4" },
        { { "--kind", "ps1", "--nodes", "4", "--topology", "torus:0x4" },
          "width and height must be 1..255" },
        { { "--kind", "ps1", "--nodes", "4", "--topology", "star" },
          "bad --topology 'star'" },
        { { "--kind", "ps1", "--nodes", "4", "--link-mbps", "0" },
          "--link-mbps 0 is out of range" },
        { { "--kind", "ps1", "--nodes", "4", "--hop-ns", "5000000000" },
          "--hop-ns 5000000000 is out of range" },
        { { "--kind", "eth", "--nodes", "4", "--topology", "ring" },
          "--topology does not apply to --kind eth" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();

        g_ptr_array_add(argv, FABRICD);
        for (int a = 0; cases[i].args[a]; a++) {
            g_ptr_array_add(argv, (char *)cases[i].args[a]);
        }
        g_ptr_array_add(argv, "--dir");
        g_ptr_array_add(argv, never);
        g_ptr_array_add(argv, NULL);
        expect_refused((const char *const *)argv->pdata, cases[i].message);
    }
    g_assert_false(g_file_test(never, G_FILE_TEST_EXISTS));
    g_assert_cmpint(g_rmdir(base), ==, 0);
}

/* SIGTERM with packets held in the network and a capture running. */
static void test_sigterm(void)
{
    Fixture fx;
    g_autofree char *path = NULL;
    g_autofree char *cmd = NULL;

    fixture_init(&fx);
    g_free(start_fabricd(&fx, ring3));
    path = path_in(&fx, "term.pcapng");
    cmd = g_strdup_printf("capture start %s", path);
    ctl_ok(&fx, cmd);
    connect_hello_all(&fx);
    ctl_ok(&fx, "link down *");
    send_data(fx.port[0], 2, 9, 0x99);
    wait_counter(&fx, "node 0", "host_in", 1);
    kill(fx.pid, SIGTERM);
    g_assert_true(reap(&fx, WAIT_MS));
    g_assert_true(WIFEXITED(fx.wait_status));
    g_assert_cmpint(WEXITSTATUS(fx.wait_status), ==, 0);
    g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
    fixture_teardown(&fx, NULL);
}

#define ADD(name, fn) \
    g_test_add("/fabricd-ps1/" name, Fixture, ring3, fixture_setup, fn, \
               fixture_teardown)

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    signal(SIGPIPE, SIG_IGN);
    g_test_add_func("/fabricd-ps1/bad-arguments", test_bad_arguments);
    g_test_add_func("/fabricd-ps1/banner-and-status", test_banner_and_status);
    ADD("traffic", test_traffic);
    ADD("flow-control", test_flow_control);
    ADD("malformed", test_malformed);
    ADD("hello-rejected", test_hello_rejected);
    ADD("reject-flushed", test_reject_flushed);
    ADD("routes", test_routes);
    ADD("link-faults", test_link_faults);
    ADD("disconnect", test_disconnect);
    ADD("capture", test_capture);
    g_test_add_func("/fabricd-ps1/torus", test_torus);
    g_test_add_func("/fabricd-ps1/sigterm", test_sigterm);
    return g_test_run();
}
