/*
 * End-to-end tests of build/bin/fabricd --kind telegraphos: fake
 * Telegraphos NICs speak the fabric header framing over the node sockets
 * (HELLO, JOIN/LEAVE, DATA with the TGR header).  Run from the repository
 * root.  The daemon plumbing is fabricd-harness.h (its fixture starts
 * "--kind eth --nodes 3"; the arguments given here come later and win).
 * Every fixture checks that fabricd exits 0 on SIGTERM at the end.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "fabricd-harness.h"
#include "fabricd-frames.h"
#pragma GCC diagnostic pop

#include "prng.h"
#include "proto/telegraphos.h"
#include "vcluster/hw/tgr_regs.h"

#define T_SEND 1000000ull   /* virtual send time the fake NICs stamp */
#define SEED 0x2a           /* the harness's --seed */
#define HOP_NS 250
#define NS_PER_BYTE 10      /* 100 MB/s */
#define PAUSE_ABOVE (1024 * 1024)
#define GROUP 5

static const char *const tgr3[] = { "--kind", "telegraphos", NULL };
static const char *const tgr4[] = { "--kind", "telegraphos", "--nodes", "4",
                                    NULL };

/* ---- the fake NIC's side of the wire ---- */

static void send_tgr_raw(int fd, uint8_t type, uint16_t dst, const void *pl,
                         size_t len)
{
    hdr_send(fd, FABRIC_KIND_TELEGRAPHOS, type, 0, dst, pl, len, T_SEND);
}

static void send_ctl(int fd, uint8_t op, uint16_t value)
{
    uint8_t pl[FABRIC_TGR_GROUP_LEN] = { op };

    fabric_put_le16(pl + 1, value);
    send_tgr_raw(fd, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, pl, sizeof(pl));
}

static void expect_tgr(int fd, uint8_t type, HdrFrame *f)
{
    hdr_expect(fd, FABRIC_KIND_TELEGRAPHOS, type, f);
}

static void expect_ctl(int fd, uint8_t op, uint16_t value)
{
    HdrFrame f;

    expect_tgr(fd, FABRIC_TYPE_CONTROL, &f);
    g_assert_cmpuint(f.h.len, ==, 3);
    g_assert_cmpuint(f.pl[0], ==, op);
    g_assert_cmpuint(fabric_get_le16(f.pl + 1), ==, value);
}

static void hello(int fd, unsigned id, unsigned nodes)
{
    hdr_hello_as(fd, FABRIC_KIND_TELEGRAPHOS, id);
    expect_ctl(fd, FABRIC_CTL_HELLO_ACK, nodes);
}

static void connect_hello_all(Fixture *fx)
{
    connect_all(fx);
    for (int i = 0; i < NODES; i++) {
        hello(fx->port[i], i, NODES);
    }
}

/* The body of a WRITE: a pattern only src and seq decide. */
static void fill(uint8_t *body, unsigned src, uint32_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        body[i] = src * 89 + seq * 31 + i * 7;
    }
}

/* A frame of `op` from a NIC: TGR header, then a patterned body. */
static size_t build(uint8_t *pl, uint8_t op, unsigned src, uint32_t seq,
                    uint32_t eidx, size_t body_len)
{
    FabricTgrHdr t = {
        .op = op, .size = 0, .epoch = 1, .seq = seq, .tag = 0x7000 + seq,
        .eidx = eidx, .gen = 3, .off = 8,
    };

    fabric_tgr_hdr_encode(&t, pl);
    fill(pl + FABRIC_TGR_HDR_LEN, src, seq, body_len);
    return FABRIC_TGR_HDR_LEN + body_len;
}

static void send_op(int fd, uint8_t op, unsigned src, uint16_t dst,
                    uint32_t seq, uint32_t eidx, size_t body_len)
{
    uint8_t pl[FABRIC_TGR_HDR_LEN + FABRIC_TGR_MAX_DATA];
    size_t len = build(pl, op, src, seq, eidx, body_len);

    send_tgr_raw(fd, FABRIC_TYPE_DATA, dst, pl, len);
}

static void send_write(int fd, unsigned src, uint16_t dst, uint32_t seq,
                       size_t body_len)
{
    send_op(fd, FABRIC_TGR_WRITE, src, dst, seq, 17, body_len);
}

/* A DATA frame of `op` from `src`; returns its TGR header. */
static FabricTgrHdr expect_op(int fd, uint8_t op, unsigned src,
                              unsigned dst, HdrFrame *f)
{
    FabricTgrHdr t = { 0 };

    expect_tgr(fd, FABRIC_TYPE_DATA, f);
    g_assert_cmpuint(f->h.src, ==, src);
    g_assert_cmpuint(f->h.dst, ==, dst);
    g_assert_cmpuint(f->h.send_time_ns, ==, T_SEND);
    g_assert_true(fabric_tgr_hdr_decode(f->pl, f->h.len, &t));
    g_assert_cmpuint(t.op, ==, op);
    return t;
}

/* The pattern of (src, seq): the body arrived unchanged. */
static void check_body(const HdrFrame *f, unsigned src, uint32_t seq)
{
    size_t body_len = f->h.len - FABRIC_TGR_HDR_LEN;
    g_autofree uint8_t *want = g_malloc(body_len + 1);

    fill(want, src, seq, body_len);
    g_assert_cmpmem(f->pl + FABRIC_TGR_HDR_LEN, body_len, want, body_len);
}

static void expect_write(int fd, unsigned src, unsigned dst, uint32_t seq,
                         size_t body_len)
{
    HdrFrame f;
    FabricTgrHdr t = expect_op(fd, FABRIC_TGR_WRITE, src, dst, &f);

    g_assert_cmpuint(t.seq, ==, seq);
    g_assert_cmpuint(f.h.len, ==, FABRIC_TGR_HDR_LEN + body_len);
    check_body(&f, src, seq);
}

static uint64_t stamp(size_t payload_len)
{
    return T_SEND + HOP_NS + payload_len * NS_PER_BYTE;
}

/* Poll `table` until it shows `want` (its whole text). */
static void wait_table(Fixture *fx, const char *want)
{
    gint64 deadline = deadline_after(WAIT_MS);
    char *table = NULL;

    for (;;) {
        g_free(table);
        table = ctl(fx, "table");
        if (strcmp(table, want) == 0 || !ms_left(deadline)) {
            break;
        }
        g_usleep(5000);
    }
    g_assert_cmpstr(table, ==, want);
    g_free(table);
}

/* ---- senders in their own threads: their writes may block ---- */

typedef struct Sender {
    int fd;
    unsigned src;
    uint16_t dst;           /* FABRIC_NODE_ALL: MCAST_WRITE to GROUP */
    unsigned count;
    size_t body_len;        /* 0: varies with seq */
    unsigned sent;          /* frames fully written */
    GThread *thread;
} Sender;

static size_t sender_body_len(const Sender *s, uint32_t seq)
{
    return s->body_len ? s->body_len : 1 + seq * 37 % 1500;
}

/* Writes until done or the socket fails (no assertion: a thread). */
static gpointer sender_run(gpointer opaque)
{
    Sender *s = opaque;
    bool mcast = s->dst == FABRIC_NODE_ALL;
    uint8_t frame[FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN + FABRIC_TGR_MAX_DATA];

    for (uint32_t seq = 0; seq < s->count; seq++) {
        size_t len = build(frame + FABRIC_HDR_LEN,
                           mcast ? FABRIC_TGR_MCAST_WRITE : FABRIC_TGR_WRITE,
                           s->src, seq,
                           mcast ? FABRIC_TGR_MCAST_EIDX(GROUP, 1) : 17,
                           sender_body_len(s, seq));
        FabricHdr h = {
            .kind = FABRIC_KIND_TELEGRAPHOS, .type = FABRIC_TYPE_DATA,
            .src = FABRIC_NODE_NONE, .dst = s->dst, .len = len,
            .send_time_ns = T_SEND,
        };
        size_t total = FABRIC_HDR_LEN + len, done = 0;

        fabric_hdr_encode(&h, frame);
        while (done < total) {
            ssize_t n = send(s->fd, frame + done, total - done, MSG_NOSIGNAL);

            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return NULL;
            }
            done += n;
        }
        g_atomic_int_inc(&s->sent);
    }
    return NULL;
}

static void sender_start(Sender *s, int fd, unsigned src, uint16_t dst,
                         unsigned count, size_t body_len)
{
    *s = (Sender) { .fd = fd, .src = src, .dst = dst, .count = count,
                    .body_len = body_len };
    s->thread = g_thread_new("sender", sender_run, s);
}

/* ---- tests ---- */

static void test_banner_and_status(void)
{
    Fixture fx;

    fixture_init(&fx);
    g_autofree char *banner = start_fabricd(&fx, tgr3);
    g_autofree char *want = g_strdup_printf(
        "fabricd: kind=telegraphos nodes=3 seed=0x000000000000002a dir=%s",
        fx.dir);

    g_assert_cmpstr(banner, ==, want);
    g_autofree char *status = ctl(&fx, "status");

    g_assert_nonnull(strstr(status, "topology: one crossbar, node i on "
                                    "port i; in order per pair, no drops "
                                    "for congestion\n"));
    g_assert_nonnull(strstr(status, "telegraphos: hop 250 ns, link 100 MB/s, "
                                    "0 of 3 nodes linked, 0 multicast groups "
                                    "with members\n"));
    g_assert_nonnull(strstr(status, "node 2: unlinked frames=0 "));

    g_autofree char *all = ctl(&fx, "counters");

    g_assert_nonnull(strstr(all, "link 2>2 state=up frames=0"));
    g_assert_nonnull(strstr(all, "telegraphos hop_ns=250 link_mbps=100 "
                                 "pause_above=1048576 resume_below=262144 "
                                 "port_limit=5980836 groups=0\n"));
    g_assert_nonnull(strstr(all, "node 1 linked=0 paused=0 frames=0 bytes=0 "
                                 "held_bytes=0 pauses=0 mcast=0 "
                                 "mcast_copies=0 unreachable=0 nacks=0 "
                                 "resets=0 flushed=0\n"));
    g_autofree char *table = ctl(&fx, "table");

    g_assert_cmpstr(table, ==, "no multicast group has members\n");
    fixture_teardown(&fx, NULL);
}

static void test_hello(Fixture *fx, gconstpointer unused)
{
    g_autofree char *reason = NULL;

    connect_all(fx);
    /* DATA and JOIN before HELLO are refused, the connection stays */
    send_write(fx->port[0], 0, 1, 0, 8);
    send_ctl(fx->port[0], FABRIC_CTL_TGR_JOIN, 1);
    wait_counter(fx, "port 0", "malformed", 2);
    hello(fx->port[0], 0, NODES);
    wait_counter(fx, "node 0", "linked", 1);

    /* the socket is the node id */
    hdr_hello_as(fx->port[1], FABRIC_KIND_TELEGRAPHOS, 2);
    reason = hdr_expect_reject(fx->port[1], FABRIC_KIND_TELEGRAPHOS);
    g_assert_cmpstr(reason, ==, "HELLO says node 2 but this is the socket "
                                "of node 1 (node1.sock)");
    expect_eof(fx->port[1]);
    close(fx->port[1]);

    /* a NIC of another kind */
    fx->port[1] = connect_port(fx, 1);
    hdr_hello_as(fx->port[1], FABRIC_KIND_MYRINET, 1);
    g_free(reason);
    reason = hdr_expect_reject(fx->port[1], FABRIC_KIND_TELEGRAPHOS);
    g_assert_cmpstr(reason, ==, "this fabric is kind telegraphos (4); the "
                                "device speaks kind 3");
    expect_eof(fx->port[1]);
    close(fx->port[1]);
    wait_counter(fx, "port 1", "rejected", 2);

    /* the right id links, and the first HELLO resets nobody */
    fx->port[1] = connect_port(fx, 1);
    hello(fx->port[1], 1, NODES);
    send_write(fx->port[0], 0, 1, 0, 8);
    expect_write(fx->port[1], 0, 1, 0, 8);
    expect_nothing(fx->port[0]);
    g_assert_cmpuint(counter(fx, "node 1", "resets"), ==, 0);
}

static void test_delivery(Fixture *fx, gconstpointer unused)
{
    HdrFrame f;
    FabricTgrHdr t = { 0 };

    connect_hello_all(fx);
    send_write(fx->port[0], 0, 2, 9, 8);
    t = expect_op(fx->port[2], FABRIC_TGR_WRITE, 0, 2, &f);
    g_assert_cmpuint(f.h.deliver_time_ns, ==, stamp(FABRIC_TGR_HDR_LEN + 8));
    g_assert_cmpuint(f.h.flags, ==, 0);
    g_assert_cmpuint(t.tag, ==, 0x7000 + 9);
    g_assert_cmpuint(t.gen, ==, 3);
    g_assert_cmpuint(t.off, ==, 8);
    check_body(&f, 0, 9);

    /* a DMA chunk, and a node reaching its own memory */
    send_write(fx->port[1], 1, 0, 1, FABRIC_TGR_MAX_DATA);
    expect_write(fx->port[0], 1, 0, 1, FABRIC_TGR_MAX_DATA);
    send_op(fx->port[1], FABRIC_TGR_ATOMIC_REQ, 1, 1, 2, 17,
            FABRIC_TGR_ATOMIC_REQ_LEN);
    t = expect_op(fx->port[1], FABRIC_TGR_ATOMIC_REQ, 1, 1, &f);
    g_assert_cmpuint(t.seq, ==, 2);
    expect_nothing(fx->port[0]);
    expect_nothing(fx->port[2]);
    g_assert_cmpuint(counter(fx, "node 1", "frames"), ==, 2);
    g_assert_cmpuint(counter(fx, "link 0>2", "bytes"), ==,
                     FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN + 8);
}

/* Another timing: --hop-ns 1000 --link-mbps 50 (20 ns a byte). */
static void test_timing_options(void)
{
    static const char *const args[] = { "--kind", "telegraphos", "--hop-ns",
                                        "1000", "--link-mbps", "50", NULL };
    Fixture fx;
    HdrFrame f;

    fixture_init(&fx);
    g_free(start_fabricd(&fx, args));
    connect_all(&fx);
    hello(fx.port[0], 0, NODES);
    hello(fx.port[1], 1, NODES);
    send_write(fx.port[0], 0, 1, 0, 100);
    expect_op(fx.port[1], FABRIC_TGR_WRITE, 0, 1, &f);
    g_assert_cmpuint(f.h.deliver_time_ns, ==,
                     T_SEND + 1000 + (FABRIC_TGR_HDR_LEN + 100) * 20);
    fixture_teardown(&fx, NULL);
}

/*
 * Two senders at full speed into one node and each other: pair order.
 * Both receivers read as they go, as a device does: a node whose own queue
 * is over the mark is not read either (its requests make replies to it).
 */
static void test_order_under_load(Fixture *fx, gconstpointer unused)
{
    enum { N = 3000 };
    Sender s[3];
    uint32_t next[NODES] = { 0 };
    uint32_t next0 = 0;
    HdrFrame f;

    connect_hello_all(fx);
    sender_start(&s[0], fx->port[0], 0, 2, N, 0);
    sender_start(&s[1], fx->port[1], 1, 2, N, 0);
    sender_start(&s[2], fx->port[2], 2, 0, N, 0);
    while (next[0] + next[1] < 2 * N || next0 < N) {
        struct pollfd pfd[2] = {
            { .fd = fx->port[2], .events = POLLIN },
            { .fd = fx->port[0], .events = POLLIN },
        };

        g_assert_cmpint(poll(pfd, 2, WAIT_MS), >, 0);
        if (pfd[0].revents) {
            unsigned src;
            FabricTgrHdr t = { 0 };

            expect_tgr(fx->port[2], FABRIC_TYPE_DATA, &f);
            src = f.h.src;
            g_assert_cmpuint(src, <, 2);
            g_assert_true(fabric_tgr_hdr_decode(f.pl, f.h.len, &t));
            g_assert_cmpuint(t.seq, ==, next[src]);
            g_assert_cmpuint(f.h.len, ==, FABRIC_TGR_HDR_LEN +
                             sender_body_len(&s[src], t.seq));
            check_body(&f, src, t.seq);
            next[src]++;
        }
        if (pfd[1].revents) {
            expect_write(fx->port[0], 2, 0, next0,
                         sender_body_len(&s[2], next0));
            next0++;
        }
    }
    for (int i = 0; i < 3; i++) {
        g_thread_join(s[i].thread);
        g_assert_cmpuint(s[i].sent, ==, N);
    }
    expect_nothing(fx->port[2]);
    g_assert_cmpuint(counter(fx, "link 0>2", "frames"), ==, N);
    g_assert_cmpuint(counter(fx, "link 1>2", "frames"), ==, N);
    g_assert_cmpuint(counter(fx, "link 0>2", "congested"), ==, 0);
}

static uint64_t held_bytes(Fixture *fx, int node)
{
    g_autofree char *record = g_strdup_printf("node %d", node);

    return counter(fx, record, "held_bytes");
}

/*
 * Node 2 stops reading: its senders are paused, fabricd holds at most
 * about 1 MiB for it, the others and the control socket go on, and once
 * node 2 reads again it gets every frame in order.
 */
static void test_no_congestion_drop(Fixture *fx, gconstpointer unused)
{
    enum { N = 1000, BODY = FABRIC_TGR_MAX_DATA };
    /* a read chunk per sender may land after the mark */
    const uint64_t bound = PAUSE_ABOVE + 2 * (64 * 1024 + FABRIC_HDR_LEN +
                                              FABRIC_TGR_HDR_LEN + BODY);
    Sender s[2];
    uint32_t next[2] = { 0 };
    int port3;
    uint64_t held;
    HdrFrame f;

    connect_all(fx);
    port3 = connect_port(fx, 3);
    for (int i = 0; i < NODES; i++) {
        hello(fx->port[i], i, 4);
    }
    hello(port3, 3, 4);
    sender_start(&s[0], fx->port[0], 0, 2, N, BODY);
    sender_start(&s[1], fx->port[1], 1, 2, N, BODY);
    wait_counter(fx, "node 0", "paused", 1);
    wait_counter(fx, "node 1", "paused", 1);
    held = held_bytes(fx, 2);
    g_test_message("held for node 2: %" G_GUINT64_FORMAT " bytes", held);
    g_assert_cmpuint(held, >, PAUSE_ABOVE);
    g_assert_cmpuint(held, <=, bound);

    /* paused senders still receive; other ports still send */
    send_write(port3, 3, 0, 0, 64);
    expect_write(fx->port[0], 3, 0, 0, 64);
    g_usleep(200 * 1000);
    g_assert_cmpuint(held_bytes(fx, 2), ==, held);
    g_assert_cmpuint(counter(fx, "node 0", "paused"), ==, 1);
    g_assert_cmpuint(g_atomic_int_get(&s[0].sent) +
                     g_atomic_int_get(&s[1].sent), <, 2 * N);
    g_autofree char *status = ctl(fx, "status");

    g_assert_nonnull(strstr(status, "node 0: linked   paused frames="));
    g_assert_nonnull(strstr(status, " input-paused\n"));

    /* node 2 reads again: everything, in order for each sender */
    for (unsigned i = 0; i < 2 * N; i++) {
        FabricTgrHdr t = { 0 };

        expect_tgr(fx->port[2], FABRIC_TYPE_DATA, &f);
        g_assert_cmpuint(f.h.src, <, 2);
        g_assert_true(fabric_tgr_hdr_decode(f.pl, f.h.len, &t));
        g_assert_cmpuint(t.seq, ==, next[f.h.src]);
        check_body(&f, f.h.src, t.seq);
        next[f.h.src]++;
    }
    for (int i = 0; i < 2; i++) {
        g_thread_join(s[i].thread);
        g_assert_cmpuint(s[i].sent, ==, N);
    }
    expect_nothing(fx->port[2]);
    wait_counter(fx, "node 0", "paused", 0);
    wait_counter(fx, "node 1", "paused", 0);
    g_assert_cmpuint(counter(fx, "node 0", "pauses"), >=, 1);
    g_assert_cmpuint(counter(fx, "node 1", "pauses"), >=, 1);
    g_assert_cmpuint(counter(fx, "link 0>2", "frames"), ==, N);
    g_assert_cmpuint(counter(fx, "link 1>2", "frames"), ==, N);
    g_assert_cmpuint(counter(fx, "link 0>2", "congested"), ==, 0);
    g_assert_cmpuint(counter(fx, "link 1>2", "congested"), ==, 0);
    g_assert_cmpuint(held_bytes(fx, 2), ==, 0);
    close(port3);
}

/*
 * A paused sender that hangs up is disconnected, and node 2 gets what
 * fabricd had read from it: a prefix of its frames, in order.
 */
static void test_paused_hangup(Fixture *fx, gconstpointer unused)
{
    enum { N = 1000, BODY = FABRIC_TGR_MAX_DATA };
    Sender s;
    uint64_t delivered;

    connect_hello_all(fx);
    sender_start(&s, fx->port[0], 0, 2, N, BODY);
    wait_counter(fx, "node 0", "paused", 1);
    g_assert_cmpint(shutdown(fx->port[0], SHUT_RDWR), ==, 0);
    g_thread_join(s.thread);
    wait_counter(fx, "port 0", "connected", 0);
    g_assert_cmpuint(counter(fx, "node 0", "paused"), ==, 0);
    delivered = counter(fx, "link 0>2", "frames");
    g_assert_cmpuint(delivered, >, 0);
    g_assert_cmpuint(delivered, <, N);
    for (uint32_t seq = 0; seq < delivered; seq++) {
        expect_write(fx->port[2], 0, 2, seq, BODY);
    }
    expect_nothing(fx->port[2]);
    /* the port is free for a new connection, which is not paused */
    close(fx->port[0]);
    fx->port[0] = connect_port(fx, 0);
    hello(fx->port[0], 0, NODES);
    expect_ctl(fx->port[1], FABRIC_CTL_TGR_PEER_RESET, 0);
    expect_ctl(fx->port[2], FABRIC_CTL_TGR_PEER_RESET, 0);
    send_write(fx->port[0], 0, 2, 0, 10);
    expect_write(fx->port[2], 0, 2, 0, 10);
}

typedef struct McastSeen {
    unsigned src;
    uint32_t seq;
} McastSeen;

/* Read `n` multicast copies at `fd`; per-sender order is checked. */
static McastSeen *read_mcast(int fd, unsigned n)
{
    McastSeen *seen = g_new(McastSeen, n);
    uint32_t next[NODES] = { 0 };
    HdrFrame f;

    for (unsigned i = 0; i < n; i++) {
        FabricTgrHdr t = { 0 };

        expect_tgr(fd, FABRIC_TYPE_DATA, &f);
        g_assert_cmpuint(f.h.dst, ==, FABRIC_NODE_ALL);
        g_assert_cmpuint(f.h.src, <, NODES);
        g_assert_true(fabric_tgr_hdr_decode(f.pl, f.h.len, &t));
        g_assert_cmpuint(t.op, ==, FABRIC_TGR_MCAST_WRITE);
        g_assert_cmpuint(t.eidx, ==, FABRIC_TGR_MCAST_EIDX(GROUP, 1));
        g_assert_cmpuint(t.seq, ==, next[f.h.src]);
        check_body(&f, f.h.src, t.seq);
        next[f.h.src]++;
        seen[i] = (McastSeen) { f.h.src, t.seq };
    }
    return seen;
}

static void test_multicast(Fixture *fx, gconstpointer unused)
{
    enum { M = 400 };
    g_autofree McastSeen *at0 = NULL, *at1 = NULL, *at2 = NULL;
    Sender s[2];
    HdrFrame f;

    connect_hello_all(fx);
    for (int i = 0; i < NODES; i++) {
        send_ctl(fx->port[i], FABRIC_CTL_TGR_JOIN, GROUP);
    }
    send_ctl(fx->port[1], FABRIC_CTL_TGR_JOIN, 9);
    send_ctl(fx->port[1], FABRIC_CTL_TGR_JOIN, GROUP);     /* twice: once */
    wait_table(fx, "group 5: 0,1,2\ngroup 9: 1\n");

    /* two writers at once: every member, the writers too, sees one order */
    sender_start(&s[0], fx->port[0], 0, FABRIC_NODE_ALL, M, 0);
    sender_start(&s[1], fx->port[1], 1, FABRIC_NODE_ALL, M, 0);
    at0 = read_mcast(fx->port[0], 2 * M);
    at1 = read_mcast(fx->port[1], 2 * M);
    at2 = read_mcast(fx->port[2], 2 * M);
    g_thread_join(s[0].thread);
    g_thread_join(s[1].thread);
    g_assert_cmpmem(at0, 2 * M * sizeof(McastSeen), at1,
                    2 * M * sizeof(McastSeen));
    g_assert_cmpmem(at0, 2 * M * sizeof(McastSeen), at2,
                    2 * M * sizeof(McastSeen));
    g_assert_cmpuint(counter(fx, "node 0", "mcast"), ==, M);
    g_assert_cmpuint(counter(fx, "node 0", "mcast_copies"), ==, 3 * M);
    g_assert_cmpuint(counter(fx, "group 5", "writes"), ==, 2 * M);

    /* LEAVE: node 1 gets no more copies, and may still write the group */
    send_ctl(fx->port[1], FABRIC_CTL_TGR_LEAVE, GROUP);
    wait_table(fx, "group 5: 0,2\ngroup 9: 1\n");
    send_op(fx->port[1], FABRIC_TGR_MCAST_WRITE, 1, FABRIC_NODE_ALL, M,
            FABRIC_TGR_MCAST_EIDX(GROUP, 1), 16);
    for (int i = 0; i < NODES; i += 2) {
        FabricTgrHdr t = expect_op(fx->port[i], FABRIC_TGR_MCAST_WRITE, 1,
                                   FABRIC_NODE_ALL, &f);

        g_assert_cmpuint(t.seq, ==, M);
        g_assert_cmpuint(f.h.deliver_time_ns, ==,
                         stamp(FABRIC_TGR_HDR_LEN + 16));
    }
    expect_nothing(fx->port[1]);

    /* a group nobody is in takes the write and delivers nothing */
    send_op(fx->port[0], FABRIC_TGR_MCAST_WRITE, 0, FABRIC_NODE_ALL, M,
            FABRIC_TGR_MCAST_EIDX(7, 0), 16);
    wait_counter(fx, "node 0", "mcast", M + 1);
    g_assert_cmpuint(counter(fx, "group 7", "writes"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 0", "mcast_copies"), ==, 3 * M);
    for (int i = 0; i < NODES; i++) {
        expect_nothing(fx->port[i]);
    }

    /* a group beyond the 64: logged and ignored */
    send_ctl(fx->port[2], FABRIC_CTL_TGR_JOIN, FABRIC_TGR_MAX_GROUPS);
    wait_counter(fx, "port 2", "malformed", 1);

    /* a port that goes down leaves its groups */
    close(fx->port[2]);
    fx->port[2] = -1;
    wait_table(fx, "group 5: 0\ngroup 9: 1\n");
    g_assert_cmpuint(counter(fx, "telegraphos", "groups"), ==, 2);
}

/* Requests to a node that is not there come back as NACK UNREACHABLE. */
static void test_unreachable(Fixture *fx, gconstpointer unused)
{
    static const struct {
        uint8_t op;
        uint16_t dst;
        bool nack;
    } cases[] = {
        { FABRIC_TGR_READ_REQ, 2, true },       /* connected, no HELLO */
        { FABRIC_TGR_WRITE, 50, true },         /* no such node */
        { FABRIC_TGR_REQ, FABRIC_NODE_NONE, true },
        { FABRIC_TGR_ATOMIC_REQ, 2, true },
        { FABRIC_TGR_READ_REP, 2, false },      /* replies are dropped */
        { FABRIC_TGR_NACK, 2, false },
    };
    HdrFrame f;

    connect_all(fx);
    hello(fx->port[0], 0, NODES);
    hello(fx->port[1], 1, NODES);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        send_op(fx->port[0], cases[i].op, 0, cases[i].dst, 40 + i, 17, 8);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        FabricTgrHdr t = { 0 };

        if (!cases[i].nack) {
            continue;
        }
        expect_tgr(fx->port[0], FABRIC_TYPE_DATA, &f);
        g_assert_cmpuint(f.h.src, ==, cases[i].dst);
        g_assert_cmpuint(f.h.dst, ==, 0);
        g_assert_cmpuint(f.h.len, ==, FABRIC_TGR_HDR_LEN +
                         FABRIC_TGR_NACK_LEN);
        g_assert_cmpuint(f.h.send_time_ns, ==, T_SEND);
        g_assert_cmpuint(f.h.deliver_time_ns, ==,
                         stamp(FABRIC_TGR_HDR_LEN + FABRIC_TGR_NACK_LEN));
        g_assert_true(fabric_tgr_hdr_decode(f.pl, f.h.len, &t));
        g_assert_cmpuint(t.op, ==, FABRIC_TGR_NACK);
        g_assert_cmpuint(t.tag, ==, 0x7000 + 40 + i);
        g_assert_cmpuint(t.seq, ==, 0);
        g_assert_cmpuint(t.eidx, ==, 17);
        g_assert_cmpuint(f.pl[FABRIC_TGR_HDR_LEN], ==, cases[i].op);
        g_assert_cmpuint(f.pl[FABRIC_TGR_HDR_LEN + 1], ==,
                         TGR_ERR_UNREACHABLE);
        g_assert_cmpuint(fabric_get_le16(f.pl + FABRIC_TGR_HDR_LEN + 2), ==,
                         0);
        g_assert_cmpuint(fabric_get_le32(f.pl + FABRIC_TGR_HDR_LEN + 4), ==,
                         40 + i);
    }
    expect_nothing(fx->port[0]);
    expect_nothing(fx->port[2]);
    wait_counter(fx, "node 0", "unreachable", 6);
    g_assert_cmpuint(counter(fx, "node 0", "nacks"), ==, 4);
    g_assert_cmpuint(counter(fx, "port 0", "malformed"), ==, 0);

    /* once node 2 links, the same request goes through */
    hello(fx->port[2], 2, NODES);
    send_op(fx->port[0], FABRIC_TGR_READ_REQ, 0, 2, 60, 17, 2);
    expect_op(fx->port[2], FABRIC_TGR_READ_REQ, 0, 2, &f);
}

/*
 * A second HELLO is a restart: the others get PEER_RESET, what fabricd
 * still queued for the old incarnation is dropped.
 */
static void test_peer_reset(Fixture *fx, gconstpointer unused)
{
    enum { N = 200, BODY = FABRIC_TGR_MAX_DATA };
    unsigned before_ack = 0;
    uint64_t flushed;
    HdrFrame f;

    connect_hello_all(fx);
    /* node 1 reads nothing; fabricd queues under the pause mark */
    for (uint32_t seq = 0; seq < N; seq++) {
        send_write(fx->port[0], 0, 1, seq, BODY);
    }
    wait_port_rx(fx, 0, N + 1);
    g_assert_cmpuint(counter(fx, "node 0", "paused"), ==, 0);
    hdr_hello_as(fx->port[1], FABRIC_KIND_TELEGRAPHOS, 1);
    expect_ctl(fx->port[0], FABRIC_CTL_TGR_PEER_RESET, 1);
    expect_ctl(fx->port[2], FABRIC_CTL_TGR_PEER_RESET, 1);
    g_assert_cmpuint(counter(fx, "node 1", "resets"), ==, 1);
    flushed = counter(fx, "node 1", "flushed");
    g_assert_cmpuint(flushed, >, 0);
    /* what the socket held comes first, then the HELLO_ACK */
    for (;;) {
        g_assert_true(hdr_recv(fx->port[1], FABRIC_KIND_TELEGRAPHOS, &f,
                               WAIT_MS));
        if (f.h.type == FABRIC_TYPE_CONTROL) {
            g_assert_cmpuint(f.pl[0], ==, FABRIC_CTL_HELLO_ACK);
            break;
        }
        g_assert_cmpuint(f.h.type, ==, FABRIC_TYPE_DATA);
        before_ack++;
    }
    g_assert_cmpuint(before_ack + flushed, ==, N);
    expect_nothing(fx->port[1]);
    send_write(fx->port[0], 0, 1, 0, 30);
    expect_write(fx->port[1], 0, 1, 0, 30);

    /* a reconnect is a restart too; nobody else's frames go */
    close(fx->port[2]);
    wait_counter(fx, "node 2", "linked", 0);
    fx->port[2] = connect_port(fx, 2);
    hello(fx->port[2], 2, NODES);
    expect_ctl(fx->port[0], FABRIC_CTL_TGR_PEER_RESET, 2);
    expect_ctl(fx->port[1], FABRIC_CTL_TGR_PEER_RESET, 2);
    g_assert_cmpuint(counter(fx, "node 2", "resets"), ==, 1);
    expect_nothing(fx->port[0]);
    expect_nothing(fx->port[2]);
}

static void test_malformed(Fixture *fx, gconstpointer unused)
{
    enum { MALFORMED = 13 };
    uint8_t pl[FABRIC_TGR_HDR_LEN + FABRIC_TGR_MAX_DATA + 8] = { 0 };
    int fd;

    connect_hello_all(fx);
    fd = fx->port[0];
    /* a short TGR header, unknown ops */
    build(pl, FABRIC_TGR_WRITE, 0, 0, 17, 0);
    send_tgr_raw(fd, FABRIC_TYPE_DATA, 1, pl, 10);
    pl[0] = 0;
    send_tgr_raw(fd, FABRIC_TYPE_DATA, 1, pl, 24);
    pl[0] = FABRIC_TGR_OP_MAX + 1;
    send_tgr_raw(fd, FABRIC_TYPE_DATA, 1, pl, 24);
    /* bad destinations: a unicast op to all, a multicast to one node */
    send_op(fd, FABRIC_TGR_WRITE, 0, FABRIC_NODE_ALL, 0, 17, 8);
    send_op(fd, FABRIC_TGR_MCAST_WRITE, 0, 1, 0,
            FABRIC_TGR_MCAST_EIDX(GROUP, 0), 8);
    send_op(fd, FABRIC_TGR_MCAST_WRITE, 0, FABRIC_NODE_ALL, 0,
            FABRIC_TGR_MCAST_EIDX(FABRIC_TGR_MAX_GROUPS, 0), 8);
    /* a body over the largest chunk, flags a NIC does not send */
    build(pl, FABRIC_TGR_WRITE, 0, 0, 17, 0);
    send_tgr_raw(fd, FABRIC_TYPE_DATA, 1, pl, FABRIC_TGR_HDR_LEN +
                 FABRIC_TGR_REP_HDR_LEN + FABRIC_TGR_MAX_DATA + 1);
    hdr_send(fd, FABRIC_KIND_TELEGRAPHOS, FABRIC_TYPE_DATA, FABRIC_F_ROUTED,
             1, pl, 24, T_SEND);
    /* types and opcodes a NIC does not send, another kind's frame */
    send_tgr_raw(fd, FABRIC_TYPE_CREDIT, 1, pl, 4);
    send_tgr_raw(fd, FABRIC_TYPE_CONTROL, 1, (uint8_t[]){ 99 }, 1);
    send_tgr_raw(fd, FABRIC_TYPE_CONTROL, 1, NULL, 0);
    send_tgr_raw(fd, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE,
                 (uint8_t[]){ FABRIC_CTL_TGR_JOIN, 1 }, 2);
    hdr_send(fd, FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, 0, 1, pl, 24,
             T_SEND);
    wait_counter(fx, "port 0", "malformed", MALFORMED);
    g_assert_cmpuint(counter(fx, "node 0", "frames"), ==, 0);
    expect_nothing(fx->port[1]);
    expect_nothing(fx->port[0]);

    /* the connection is still good */
    send_write(fd, 0, 1, 5, 12);
    expect_write(fx->port[1], 0, 1, 5, 12);
}

static void predict_drops(unsigned rule, unsigned from, unsigned to,
                          double p, unsigned n, bool *dropped)
{
    Prng st;

    prng_seed_stream(&st, SEED, rule, from, to);
    for (unsigned i = 0; i < n; i++) {
        dropped[i] = prng_double(&st) < p;
    }
}

/* Fault rules, links and capture work on telegraphos frames too. */
static void test_faults(Fixture *fx, gconstpointer unused)
{
    enum { N = 200 };
    bool dropped[N];
    unsigned want = 0;
    g_autofree char *path = path_in(fx, "tgr.pcapng");
    g_autofree char *start = g_strdup_printf("capture start %s", path);
    g_autofree char *stop = NULL;
    HdrFrame f;

    connect_hello_all(fx);
    ctl_ok(fx, "fault add 0>1 drop p=0.3");
    predict_drops(1, 0, 1, 0.3, N, dropped);
    for (uint32_t i = 0; i < N; i++) {
        send_write(fx->port[0], 0, 1, i, 40);
        want += !dropped[i];
    }
    for (uint32_t i = 0; i < N; i++) {
        if (!dropped[i]) {
            expect_write(fx->port[1], 0, 1, i, 40);
        }
    }
    wait_port_rx(fx, 0, N + 1);
    expect_nothing(fx->port[1]);
    g_assert_cmpuint(counter(fx, "link 0>1", "dropped"), ==, N - want);
    g_assert_cmpuint(counter(fx, "link 0>1", "frames"), ==, want);
    ctl_ok(fx, "fault clear");

    /* bit 200 of the payload: byte 25, in the body; the header is kept */
    ctl_ok(fx, "fault add 2>0 corrupt p=1 offsets=200");
    send_write(fx->port[2], 2, 0, 3, 16);
    expect_op(fx->port[0], FABRIC_TGR_WRITE, 2, 0, &f);
    g_assert_cmpuint(f.h.flags, ==, FABRIC_F_CORRUPTED);
    {
        uint8_t body[16];

        fill(body, 2, 3, sizeof(body));
        body[25 - FABRIC_TGR_HDR_LEN] ^= 0x01;
        g_assert_cmpmem(f.pl + FABRIC_TGR_HDR_LEN, 16, body, 16);
    }
    g_assert_cmpuint(counter(fx, "link 2>0", "corrupted"), ==, 1);
    ctl_ok(fx, "fault clear");

    /* a down link carries nothing: counted, no NACK */
    ctl_ok(fx, "link down 0-1");
    send_write(fx->port[0], 0, 1, 1, 8);
    wait_counter(fx, "link 0>1", "down", 1);
    expect_nothing(fx->port[0]);
    expect_nothing(fx->port[1]);
    ctl_ok(fx, "link up *");

    /* capture: a unicast copy, two multicast copies, a NACK */
    send_ctl(fx->port[1], FABRIC_CTL_TGR_JOIN, 2);
    send_ctl(fx->port[2], FABRIC_CTL_TGR_JOIN, 2);
    wait_table(fx, "group 2: 1,2\n");
    ctl_ok(fx, start);
    send_write(fx->port[0], 0, 1, 2, 8);
    expect_write(fx->port[1], 0, 1, 2, 8);
    send_op(fx->port[0], FABRIC_TGR_MCAST_WRITE, 0, FABRIC_NODE_ALL, 0,
            FABRIC_TGR_MCAST_EIDX(2, 0), 8);
    expect_op(fx->port[1], FABRIC_TGR_MCAST_WRITE, 0, FABRIC_NODE_ALL, &f);
    expect_op(fx->port[2], FABRIC_TGR_MCAST_WRITE, 0, FABRIC_NODE_ALL, &f);
    send_op(fx->port[0], FABRIC_TGR_READ_REQ, 0, 9, 0, 17, 2);
    expect_op(fx->port[0], FABRIC_TGR_NACK, 9, 0, &f);
    stop = ctl(fx, "capture stop");
    g_assert_cmpstr(stop, ==, "frames 4\n");

    g_auto(GStrv) packets = capture_packets(path);

    if (!packets) {
        g_test_skip("tshark is not installed: capture contents not checked");
        return;
    }
    g_assert_cmpuint(g_strv_length(packets), ==, 4);
    g_assert_cmpstr(packets[0], ==, "node1\tnode0>node1\t60");  /* 32+20+8 */
    g_assert_cmpstr(packets[3], ==, "node0\tfabric>node0\t60"); /* 32+28 */
}

static void test_bad_arguments(void)
{
    g_autofree char *base = make_short_tmpdir();
    g_autofree char *never = g_build_filename(base, "never", NULL);
    static const struct {
        const char *args[8];
        const char *message;
    } cases[] = {
        { { "--kind", "telegraphos", "--nodes", "4", "--topology", "ring" },
          "--topology does not apply to --kind telegraphos" },
        { { "--kind", "telegraphos", "--nodes", "4", "--link-mbps", "0" },
          "--link-mbps 0 is out of range" },
        { { "--kind", "telegraphos", "--nodes", "4", "--hop-ns",
            "5000000000" },
          "--hop-ns 5000000000 is out of range" },
        { { "--kind", "token-ring", "--nodes", "4" },
          "known kinds: eth, ps1, myrinet, telegraphos" },
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

#define ADD(name, args, fn) \
    g_test_add("/fabricd-telegraphos/" name, Fixture, args, fixture_setup, \
               fn, fixture_teardown)

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    signal(SIGPIPE, SIG_IGN);
    g_test_add_func("/fabricd-telegraphos/bad-arguments", test_bad_arguments);
    g_test_add_func("/fabricd-telegraphos/banner-and-status",
                    test_banner_and_status);
    g_test_add_func("/fabricd-telegraphos/timing-options",
                    test_timing_options);
    ADD("hello", tgr3, test_hello);
    ADD("delivery", tgr3, test_delivery);
    ADD("order-under-load", tgr3, test_order_under_load);
    ADD("no-congestion-drop", tgr4, test_no_congestion_drop);
    ADD("paused-hangup", tgr3, test_paused_hangup);
    ADD("multicast", tgr3, test_multicast);
    ADD("unreachable", tgr3, test_unreachable);
    ADD("peer-reset", tgr3, test_peer_reset);
    ADD("malformed", tgr3, test_malformed);
    ADD("faults", tgr3, test_faults);
    return g_test_run();
}
