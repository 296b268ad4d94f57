/*
 * End-to-end tests of build/bin/fabricd --kind myrinet: fake LANai cards
 * speak the fabric header framing over the node sockets (HELLO, routed
 * DATA with a CRC).  Run from the repository root.  The daemon plumbing is
 * fabricd-harness.h (its fixture starts "--kind eth --nodes 3"; the
 * arguments given here come later and win).  Every fixture checks that
 * fabricd exits 0 on SIGTERM at the end.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "fabricd-harness.h"
#include "fabricd-frames.h"
#pragma GCC diagnostic pop

#include "fabric.h"
#include "prng.h"
#include "proto/myrinet.h"

#define T_SEND 1000000ull   /* virtual send time the fake cards stamp */
#define SEED 0x2a           /* the harness's --seed */
#define HOP_NS 300
#define NS_PER_BYTE 4       /* 250 MB/s */

static const char *const myri3[] = { "--kind", "myrinet", NULL };

/* Two 16-port switches joined port 15 to port 15, two nodes on each. */
static const char two_switches[] =
    "[switch0]\nports=16\nport0=node0\nport1=node1\nport15=switch1:15\n"
    "[switch1]\nports=16\nport0=node2\nport1=node3\nport15=switch0:15\n";

/* A packet as a card builds it: type byte with bit 7 clear, body, CRC. */
typedef struct Packet {
    uint8_t b[FABRIC_MYRI_MAX_PACKET + FABRIC_MYRI_CRC_LEN];
    size_t len;             /* packet and CRC */
} Packet;

/* ---- the fake card's side of the wire (fabricd-frames.h) ---- */

static void send_myri(int fd, uint8_t kind, uint8_t type, uint8_t flags,
                      uint16_t dst, const void *pl, size_t len)
{
    hdr_send(fd, kind, type, flags, dst, pl, len, T_SEND);
}

static bool recv_myri(int fd, HdrFrame *f, int ms)
{
    return hdr_recv(fd, FABRIC_KIND_MYRINET, f, ms);
}

static void expect_myri(int fd, uint8_t type, HdrFrame *f)
{
    hdr_expect(fd, FABRIC_KIND_MYRINET, type, f);
}

static void hello_as(int fd, unsigned id)
{
    hdr_hello_as(fd, FABRIC_KIND_MYRINET, id);
}

/* HELLO, and check the HELLO_ACK: node count and where the cable is. */
static void hello(int fd, unsigned id, unsigned nodes, unsigned sw,
                  unsigned port)
{
    HdrFrame f;

    hello_as(fd, id);
    expect_myri(fd, FABRIC_TYPE_CONTROL, &f);
    g_assert_cmpuint(f.h.len, ==, FABRIC_MYRI_HELLO_ACK_LEN);
    g_assert_cmpuint(f.h.dst, ==, id);
    g_assert_cmpuint(f.pl[0], ==, FABRIC_CTL_HELLO_ACK);
    g_assert_cmpuint(fabric_get_le16(f.pl + 1), ==, nodes);
    g_assert_cmpuint(f.pl[3], ==, sw);
    g_assert_cmpuint(f.pl[4], ==, port);
}

static void connect_hello_all(Fixture *fx)
{
    connect_all(fx);
    for (int i = 0; i < NODES; i++) {
        hello(fx->port[i], i, NODES, 0, i);
    }
}

static char *expect_reject(int fd)
{
    return hdr_expect_reject(fd, FABRIC_KIND_MYRINET);
}

static Packet make_packet(uint32_t tag, size_t body)
{
    Packet p = { .len = body + FABRIC_MYRI_CRC_LEN };

    g_assert_cmpuint(body, >=, 1);
    g_assert_cmpuint(body, <=, FABRIC_MYRI_MAX_PACKET);
    for (size_t i = 0; i < body; i++) {
        p.b[i] = tag * 7 + i * 13;
    }
    p.b[0] &= 0x7f;         /* the packet type ends the route */
    fabric_put_le32(p.b + body, fabric_crc32(p.b, body));
    return p;
}

static bool packet_crc_ok(const uint8_t *b, size_t len)
{
    size_t body = len - FABRIC_MYRI_CRC_LEN;

    return fabric_crc32(b, body) == fabric_get_le32(b + body);
}

/* Route bytes from hex ("8fb2"), then the packet and its CRC. */
static void send_routed(int fd, const char *route, const Packet *p)
{
    uint8_t pl[HDR_FRAME_MAX];
    size_t n = strlen(route) / 2;

    g_assert_cmpuint(n + p->len, <=, sizeof(pl));
    for (size_t i = 0; i < n; i++) {
        char pair[3] = { route[2 * i], route[2 * i + 1], 0 };

        pl[i] = g_ascii_strtoull(pair, NULL, 16);
    }
    memcpy(pl + n, p->b, p->len);
    send_myri(fd, FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, FABRIC_F_ROUTED,
              FABRIC_NODE_NONE, pl, n + p->len);
}

/* The packet, route consumed, from `src`; its CRC bytes untouched. */
static void expect_packet(int fd, unsigned src, unsigned dst,
                          const Packet *p, HdrFrame *f)
{
    expect_myri(fd, FABRIC_TYPE_DATA, f);
    g_assert_cmpuint(f->h.src, ==, src);
    g_assert_cmpuint(f->h.dst, ==, dst);
    g_assert_cmpuint(f->h.flags, ==, 0);
    g_assert_cmpuint(f->h.send_time_ns, ==, T_SEND);
    g_assert_cmpmem(f->pl, f->h.len, p->b, p->len);
}

/* What the card sent crosses `hops` switches: the delivery stamp. */
static uint64_t stamp(unsigned hops, size_t route_len, const Packet *p)
{
    return T_SEND + hops * HOP_NS + (route_len + p->len) * NS_PER_BYTE;
}

static char *write_topology(Fixture *fx, const char *text)
{
    char *path = path_in(fx, "switches.ini");

    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* Start fabricd for the 4-node, 2-switch topology; port 3 is returned. */
static int start_two_switches(Fixture *fx)
{
    g_autofree char *topo = NULL;
    int port3;

    fixture_init(fx);
    topo = write_topology(fx, two_switches);
    const char *const args[] = { "--kind", "myrinet", "--nodes", "4",
                                 "--topology", topo, NULL };

    g_free(start_fabricd(fx, args));
    connect_all(fx);
    port3 = connect_port(fx, 3);
    hello(fx->port[0], 0, 4, 0, 0);
    hello(fx->port[1], 1, 4, 0, 1);
    hello(fx->port[2], 2, 4, 1, 0);
    hello(port3, 3, 4, 1, 1);
    return port3;
}

/* ---- tests ---- */

static void test_banner_and_status(void)
{
    Fixture fx;

    fixture_init(&fx);
    g_autofree char *banner = start_fabricd(&fx, myri3);
    g_autofree char *want = g_strdup_printf(
        "fabricd: kind=myrinet nodes=3 seed=0x000000000000002a dir=%s",
        fx.dir);

    g_assert_cmpstr(banner, ==, want);
    g_autofree char *status = ctl(&fx, "status");

    g_assert_nonnull(strstr(status, "topology: one 16-port switch, node i "
                                    "on port i; links are end to end"));
    g_assert_nonnull(strstr(status, "myrinet: hop 300 ns, link 250 MB/s, "
                                    "0 of 3 nodes linked; dropped: "
                                    "not_route=0 too_short=0"));
    g_assert_nonnull(strstr(status, "node 2: unlinked switch0 port2 "));
    g_assert_nonnull(strstr(status, "switch 0: ports=16 forwarded=0 "));

    /* end-to-end links, loopback included */
    g_autofree char *all = ctl(&fx, "counters");

    g_assert_nonnull(strstr(all, "link 0>2 state=up frames=0"));
    g_assert_nonnull(strstr(all, "link 1>1 state=up"));
    g_assert_nonnull(strstr(all, "myrinet hop_ns=300 link_mbps=250 "
                                 "not_route=0 too_short=0 too_long=0 "
                                 "bad_port=0 dead_port=0 too_many_hops=0 "
                                 "unlinked=0\n"));
    g_assert_nonnull(strstr(all, "node 1 linked=0 switch=0 port=1 sent=0 "
                                 "misrouted=0 resets=0 flushed=0\n"));

    g_autofree char *table = ctl(&fx, "table");

    g_assert_cmpstr(table, ==, "0>0 80\n0>1 81\n0>2 82\n"
                               "1>0 bf\n1>1 80\n1>2 81\n"
                               "2>0 be\n2>1 bf\n2>2 80\n");
    fixture_teardown(&fx, NULL);
}

static void test_hello(Fixture *fx, gconstpointer unused)
{
    g_autofree char *reason = NULL;
    int second;

    connect_all(fx);
    /* DATA before HELLO is refused, the connection stays */
    Packet p = make_packet(1, 8);

    send_routed(fx->port[0], "81", &p);
    wait_counter(fx, "port 0", "malformed", 1);
    hello(fx->port[0], 0, NODES, 0, 0);
    wait_counter(fx, "node 0", "linked", 1);

    /* the socket is the node id: a card claiming node 2 on node1.sock */
    hello_as(fx->port[1], 2);
    reason = expect_reject(fx->port[1]);
    g_assert_cmpstr(reason, ==, "HELLO says node 2 but this is the socket "
                                "of node 1 (node1.sock)");
    expect_eof(fx->port[1]);
    wait_counter(fx, "port 1", "connected", 0);
    g_assert_cmpuint(counter(fx, "port 1", "rejected"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 1", "linked"), ==, 0);
    close(fx->port[1]);

    /* a node id beyond the fabric, and a HELLO of the wrong size */
    fx->port[1] = connect_port(fx, 1);
    hello_as(fx->port[1], 7);
    g_free(reason);
    reason = expect_reject(fx->port[1]);
    g_assert_nonnull(strstr(reason, "HELLO says node 7"));
    expect_eof(fx->port[1]);
    close(fx->port[1]);
    fx->port[1] = connect_port(fx, 1);
    send_myri(fx->port[1], FABRIC_KIND_MYRINET, FABRIC_TYPE_CONTROL, 0,
              FABRIC_NODE_NONE, (uint8_t[]){ FABRIC_CTL_HELLO, 1 }, 2);
    g_free(reason);
    reason = expect_reject(fx->port[1]);
    g_assert_cmpstr(reason, ==, "HELLO payload is 2 bytes; expected 3");
    expect_eof(fx->port[1]);
    close(fx->port[1]);

    /* a card of another kind */
    fx->port[1] = connect_port(fx, 1);
    send_myri(fx->port[1], FABRIC_KIND_PS1, FABRIC_TYPE_CONTROL, 0,
              FABRIC_NODE_NONE, (uint8_t[]){ FABRIC_CTL_HELLO, 1, 0 }, 3);
    g_free(reason);
    reason = expect_reject(fx->port[1]);
    g_assert_cmpstr(reason, ==, "this fabric is kind myrinet (3); the "
                                "device speaks kind 2");
    expect_eof(fx->port[1]);
    close(fx->port[1]);
    wait_counter(fx, "port 1", "rejected", 4);

    /* the right id links; a second connection to the socket is refused */
    fx->port[1] = connect_port(fx, 1);
    hello(fx->port[1], 1, NODES, 0, 1);
    second = connect_port(fx, 1);
    expect_eof(second);
    close(second);
    wait_counter(fx, "port 1", "rejected", 5);
    wait_counter(fx, "node 1", "linked", 1);
    send_routed(fx->port[0], "81", &p);
    HdrFrame f;

    expect_packet(fx->port[1], 0, 1, &p, &f);
}

static void test_delivery(Fixture *fx, gconstpointer unused)
{
    Packet small = make_packet(2, 9);
    Packet big = make_packet(3, FABRIC_MYRI_MAX_PACKET);
    Packet self = make_packet(4, 20);
    HdrFrame f;

    connect_hello_all(fx);
    send_routed(fx->port[0], "82", &small);
    expect_packet(fx->port[2], 0, 2, &small, &f);
    g_assert_true(packet_crc_ok(f.pl, f.h.len));
    g_assert_cmpuint(f.h.deliver_time_ns, ==, stamp(1, 1, &small));

    /* the largest packet, from 2 to 0 (-2) */
    send_routed(fx->port[2], "be", &big);
    expect_packet(fx->port[0], 2, 0, &big, &f);
    g_assert_cmpuint(f.h.deliver_time_ns, ==, stamp(1, 1, &big));

    /* 0x80 loops back to the sender */
    send_routed(fx->port[1], "80", &self);
    expect_packet(fx->port[1], 1, 1, &self, &f);
    expect_nothing(fx->port[0]);
    expect_nothing(fx->port[2]);

    /* in order between a pair */
    for (uint32_t i = 0; i < 50; i++) {
        Packet p = make_packet(100 + i, 64 + i);

        send_routed(fx->port[1], "81", &p);
    }
    for (uint32_t i = 0; i < 50; i++) {
        Packet p = make_packet(100 + i, 64 + i);

        expect_packet(fx->port[2], 1, 2, &p, &f);
    }

    g_assert_cmpuint(counter(fx, "link 0>2", "frames"), ==, 1);
    g_assert_cmpuint(counter(fx, "link 0>2", "bytes"), ==,
                     FABRIC_HDR_LEN + small.len);
    g_assert_cmpuint(counter(fx, "link 1>1", "frames"), ==, 1);
    g_assert_cmpuint(counter(fx, "link 1>2", "frames"), ==, 50);
    g_assert_cmpuint(counter(fx, "node 1", "sent"), ==, 51);
    g_assert_cmpuint(counter(fx, "node 1", "misrouted"), ==, 0);
    g_assert_cmpuint(counter(fx, "switch 0", "forwarded"), ==, 53);
    g_assert_cmpuint(counter(fx, "port 2", "rx_frames"), ==, 2);
}

/* Every reason a single switch can drop for, counted and never delivered. */
static void test_bad_routes(Fixture *fx, gconstpointer unused)
{
    static const struct {
        const char *route;
        const char *reason;
    } cases[] = {
        { "", "not_route" },
        { "8181", "too_long" },
        { "c1", "bad_port" },           /* bit 6 set */
        { "9f", "bad_port" },           /* port 31 of 16 */
        { "bf", "bad_port" },           /* port -1 */
        { "85", "dead_port" },          /* port 5 has no cable */
    };
    Packet p = make_packet(5, 32);
    HdrFrame f;

    connect_all(fx);
    hello(fx->port[0], 0, NODES, 0, 0);
    hello(fx->port[1], 1, NODES, 0, 1);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        send_routed(fx->port[0], cases[i].route, &p);
    }
    /* node 2 is connected but has no card linked */
    send_routed(fx->port[0], "82", &p);
    wait_counter(fx, "node 0", "sent", G_N_ELEMENTS(cases) + 1);
    g_assert_cmpuint(counter(fx, "node 0", "misrouted"), ==,
                     G_N_ELEMENTS(cases) + 1);
    g_assert_cmpuint(counter(fx, "switch 0", "not_route"), ==, 1);
    g_assert_cmpuint(counter(fx, "switch 0", "too_long"), ==, 1);
    g_assert_cmpuint(counter(fx, "switch 0", "bad_port"), ==, 3);
    g_assert_cmpuint(counter(fx, "switch 0", "dead_port"), ==, 1);
    g_assert_cmpuint(counter(fx, "switch 0", "unlinked"), ==, 1);
    g_assert_cmpuint(counter(fx, "myrinet", "bad_port"), ==, 3);
    g_assert_cmpuint(counter(fx, "myrinet", "unlinked"), ==, 1);
    /* too_long reached node1 through the switch: forwarded, then dropped */
    g_assert_cmpuint(counter(fx, "switch 0", "forwarded"), ==, 2);
    g_assert_cmpuint(counter(fx, "port 0", "malformed"), ==, 0);
    expect_nothing(fx->port[1]);
    expect_nothing(fx->port[2]);
    expect_nothing(fx->port[0]);
    g_autofree char *status = ctl(fx, "status");

    g_assert_nonnull(strstr(status, "dropped: not_route=1 too_short=0 "
                                    "too_long=1 bad_port=3 dead_port=1 "
                                    "too_many_hops=0 unlinked=1\n"));
    /* a good route still works */
    send_routed(fx->port[0], "81", &p);
    expect_packet(fx->port[1], 0, 1, &p, &f);
}

static void test_malformed(Fixture *fx, gconstpointer unused)
{
    uint8_t pl[HDR_FRAME_MAX + 16] = { 0x81, 0x00, 1, 2, 3, 4 };
    Packet p = make_packet(6, 12);
    HdrFrame f;

    connect_hello_all(fx);
    /* not routed, a destination given, too short for packet and CRC */
    send_myri(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, 0,
              FABRIC_NODE_NONE, pl, 6);
    send_myri(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA,
              FABRIC_F_ROUTED, 1, pl, 6);
    send_myri(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA,
              FABRIC_F_ROUTED, FABRIC_NODE_NONE, pl, 4);
    /* route bytes and a CRC but no packet */
    memset(pl, 0x81, 8);
    send_myri(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA,
              FABRIC_F_ROUTED, FABRIC_NODE_NONE, pl, 8);
    /* a packet one byte over the maximum */
    memset(pl, 0, sizeof(pl));
    pl[0] = 0x81;
    send_myri(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA,
              FABRIC_F_ROUTED, FABRIC_NODE_NONE, pl,
              1 + FABRIC_MYRI_MAX_PACKET + 1 + FABRIC_MYRI_CRC_LEN);
    /* types and opcodes a card does not send, and another kind's frame */
    send_myri(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_CREDIT, 0,
              FABRIC_NODE_NONE, pl, 4);
    send_myri(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_CONTROL, 0,
              FABRIC_NODE_NONE, (uint8_t[]){ 99 }, 1);
    send_myri(fx->port[0], FABRIC_KIND_MYRINET, FABRIC_TYPE_CONTROL, 0,
              FABRIC_NODE_NONE, NULL, 0);
    send_myri(fx->port[0], FABRIC_KIND_PS1, FABRIC_TYPE_DATA, 0,
              FABRIC_NODE_NONE, pl, 8);
    wait_counter(fx, "port 0", "malformed", 9);
    g_assert_cmpuint(counter(fx, "node 0", "sent"), ==, 0);
    expect_nothing(fx->port[1]);

    /* the connection is still good */
    send_routed(fx->port[0], "81", &p);
    expect_packet(fx->port[1], 0, 1, &p, &f);
}

/* Across two switches: stamps, per-switch counts, too_short, loops. */
static void test_two_switches(void)
{
    Fixture fx;
    Packet p = make_packet(7, 100);
    GString *loop = g_string_new("8f");
    g_autofree char *loop_hex = NULL;
    HdrFrame f;
    int port3 = start_two_switches(&fx);

    g_autofree char *status = ctl(&fx, "status");

    g_assert_nonnull(strstr(status, "topology: 2 switches, 1 switch cable, "
                                    "longest route 2 switches"));
    g_assert_nonnull(strstr(status, "node 3: linked   switch1 port1 "));

    /* port 0 -> 15 (+15), then 15 -> 1 (-14) */
    send_routed(fx.port[0], "8fb2", &p);
    expect_packet(port3, 0, 3, &p, &f);
    g_assert_cmpuint(f.h.deliver_time_ns, ==, stamp(2, 2, &p));
    send_routed(port3, "8eb1", &p);
    expect_packet(fx.port[0], 3, 0, &p, &f);
    g_assert_cmpuint(counter(&fx, "switch 0", "forwarded"), ==, 2);
    g_assert_cmpuint(counter(&fx, "switch 1", "forwarded"), ==, 2);

    /* the route ends at switch1 */
    send_routed(fx.port[1], "8e", &p);
    wait_counter(&fx, "switch 1", "too_short", 1);
    /* 0x80 on the cable sends the packet back: a loop */
    for (int i = 0; i < 30; i++) {
        g_string_append(loop, "80");
    }
    loop_hex = g_string_free(loop, FALSE);
    send_routed(fx.port[0], loop_hex, &p);
    wait_counter(&fx, "myrinet", "too_many_hops", 1);
    g_assert_cmpuint(counter(&fx, "switch 0", "too_many_hops"), ==, 1);
    g_assert_cmpuint(counter(&fx, "switch 0", "too_short"), ==, 0);
    /* loop: 12 passes each way, plus 1 and 1 before */
    g_assert_cmpuint(counter(&fx, "switch 0", "forwarded"), ==, 2 + 1 + 12);
    g_assert_cmpuint(counter(&fx, "switch 1", "forwarded"), ==, 2 + 12);
    expect_nothing(fx.port[2]);
    expect_nothing(port3);

    g_autofree char *table = ctl(&fx, "table");

    g_assert_nonnull(strstr(table, "0>3 8fb2\n"));
    g_assert_nonnull(strstr(table, "2>0 8fb1\n"));
    close(port3);
    fixture_teardown(&fx, NULL);
}

/* Which of `n` copies on from>to a `drop p=P` rule (id `rule`) drops. */
static void predict_drops(unsigned rule, unsigned from, unsigned to,
                          double p, unsigned n, bool *dropped)
{
    Prng st;

    prng_seed_stream(&st, SEED, rule, from, to);
    for (unsigned i = 0; i < n; i++) {
        dropped[i] = prng_double(&st) < p;
    }
}

/* Drops and corruption end to end, exactly as the seed says. */
static void test_faults(Fixture *fx, gconstpointer unused)
{
    enum { N = 200 };
    bool dropped[N];
    unsigned want = 0, got = 0;
    Packet p;
    HdrFrame f;

    connect_hello_all(fx);
    ctl_ok(fx, "fault add 0>1 drop p=0.3");
    predict_drops(1, 0, 1, 0.3, N, dropped);
    for (unsigned i = 0; i < N; i++) {
        p = make_packet(1000 + i, 40);
        send_routed(fx->port[0], "81", &p);
        want += !dropped[i];
    }
    for (unsigned i = 0; i < N; i++) {
        if (dropped[i]) {
            continue;
        }
        p = make_packet(1000 + i, 40);
        expect_packet(fx->port[1], 0, 1, &p, &f);
        got++;
    }
    expect_nothing(fx->port[1]);
    g_assert_cmpuint(got, ==, want);
    g_assert_cmpuint(counter(fx, "link 0>1", "dropped"), ==, N - want);
    g_assert_cmpuint(counter(fx, "link 0>1", "frames"), ==, want);
    ctl_ok(fx, "fault clear");

    /*
     * Bit 0 of the packet: the route byte is gone before the rule runs,
     * so the header and route are intact and the card's CRC check fails.
     */
    ctl_ok(fx, "fault add 2>0 corrupt p=1 offsets=0,33");
    p = make_packet(8, 30);
    send_routed(fx->port[2], "be", &p);
    expect_myri(fx->port[0], FABRIC_TYPE_DATA, &f);
    g_assert_cmpuint(f.h.src, ==, 2);
    g_assert_cmpuint(f.h.dst, ==, 0);
    g_assert_cmpuint(f.h.flags, ==, FABRIC_F_CORRUPTED);
    g_assert_cmpuint(f.h.len, ==, p.len);
    g_assert_cmphex(f.pl[0], ==, p.b[0] ^ 0x01);
    g_assert_cmpmem(f.pl + 1, 3, p.b + 1, 3);
    g_assert_cmphex(f.pl[4], ==, p.b[4] ^ 0x02);
    g_assert_cmpmem(f.pl + 5, p.len - 5, p.b + 5, p.len - 5);
    g_assert_false(packet_crc_ok(f.pl, f.h.len));
    g_assert_cmpuint(counter(fx, "link 2>0", "corrupted"), ==, 1);
    ctl_ok(fx, "fault clear");

    /* random bits: exactly 3 flipped, all in the packet and CRC */
    ctl_ok(fx, "fault add *>2 corrupt p=1 bits=3");
    for (unsigned i = 0; i < 20; i++) {
        unsigned flipped = 0;

        p = make_packet(2000 + i, 1 + i);
        send_routed(fx->port[1], "81", &p);
        expect_myri(fx->port[2], FABRIC_TYPE_DATA, &f);
        g_assert_cmpuint(f.h.src, ==, 1);
        g_assert_cmpuint(f.h.dst, ==, 2);
        g_assert_cmpuint(f.h.len, ==, p.len);
        g_assert_cmpuint(f.h.flags, ==, FABRIC_F_CORRUPTED);
        g_assert_cmpuint(f.h.send_time_ns, ==, T_SEND);
        for (size_t b = 0; b < p.len; b++) {
            flipped += __builtin_popcount(f.pl[b] ^ p.b[b]);
        }
        g_assert_cmpuint(flipped, ==, 3);
        g_assert_false(packet_crc_ok(f.pl, f.h.len));
    }
    ctl_ok(fx, "fault clear");

    /* a down link carries nothing: counted, not held */
    ctl_ok(fx, "link down 0-1");
    p = make_packet(9, 10);
    send_routed(fx->port[0], "81", &p);
    send_routed(fx->port[1], "bf", &p);
    wait_counter(fx, "link 1>0", "down", 1);
    g_assert_cmpuint(counter(fx, "link 0>1", "down"), ==, 1);
    ctl_ok(fx, "link up *");
    expect_nothing(fx->port[0]);
    expect_nothing(fx->port[1]);
    send_routed(fx->port[0], "81", &p);
    expect_packet(fx->port[1], 0, 1, &p, &f);
}

static void test_capture(Fixture *fx, gconstpointer unused)
{
    g_autofree char *path = path_in(fx, "myri.pcapng");
    g_autofree char *cmd = g_strdup_printf("capture start %s", path);
    g_autofree char *stop = NULL;
    Packet p = make_packet(10, 19);
    HdrFrame f;

    connect_hello_all(fx);
    ctl_ok(fx, cmd);
    send_routed(fx->port[0], "82", &p);
    expect_packet(fx->port[2], 0, 2, &p, &f);
    send_routed(fx->port[0], "85", &p);         /* dropped: not recorded */
    wait_counter(fx, "switch 0", "dead_port", 1);
    stop = ctl(fx, "capture stop");
    g_assert_cmpstr(stop, ==, "frames 1\n");

    g_auto(GStrv) packets = capture_packets(path);

    if (!packets) {
        g_test_skip("tshark is not installed: capture contents not checked");
        return;
    }
    g_assert_cmpuint(g_strv_length(packets), ==, 1);
    g_assert_cmpstr(packets[0], ==, "node2\tnode0>node2\t55");   /* 32+19+4 */
}

/*
 * A second HELLO is a card reset: what fabricd still queues for the card
 * is dropped (the socket keeps what it already holds), and a copy held in
 * the delay line for it is discarded.
 */
static void test_reset(Fixture *fx, gconstpointer unused)
{
    enum { N = 400 };
    Packet big = make_packet(11, FABRIC_MYRI_MAX_PACKET);
    Packet after = make_packet(12, 50);
    unsigned before_ack = 0;
    guint64 flushed;
    HdrFrame f;

    connect_hello_all(fx);
    /* node1 reads nothing: fabricd's queue for it fills up */
    for (int i = 0; i < N; i++) {
        send_routed(fx->port[0], "81", &big);
    }
    wait_port_rx(fx, 0, N + 1);
    g_assert_cmpuint(counter(fx, "link 0>1", "congested"), >, 0);
    hello_as(fx->port[1], 1);
    wait_counter(fx, "node 1", "resets", 1);
    flushed = counter(fx, "node 1", "flushed");
    g_assert_cmpuint(flushed, >, 0);
    /* what the socket held comes first, then the HELLO_ACK, then nothing */
    for (;;) {
        g_assert_true(recv_myri(fx->port[1], &f, WAIT_MS));
        if (f.h.type == FABRIC_TYPE_CONTROL) {
            g_assert_cmpuint(f.pl[0], ==, FABRIC_CTL_HELLO_ACK);
            break;
        }
        g_assert_cmpuint(f.h.type, ==, FABRIC_TYPE_DATA);
        g_assert_cmpmem(f.pl, f.h.len, big.b, big.len);
        before_ack++;
    }
    g_test_message("before the reset %u delivered, %" G_GUINT64_FORMAT
                   " flushed", before_ack, flushed);
    g_assert_cmpuint(before_ack + flushed, ==,
                     counter(fx, "link 0>1", "frames"));
    expect_nothing(fx->port[1]);
    send_routed(fx->port[0], "81", &after);
    expect_packet(fx->port[1], 0, 1, &after, &f);
    g_assert_cmpuint(counter(fx, "node 1", "linked"), ==, 1);

    /* a copy delayed on its way to a card that resets is discarded */
    ctl_ok(fx, "fault add 2>1 delay ms=200");
    send_routed(fx->port[2], "bf", &after);
    wait_counter(fx, "link 2>1", "delayed", 1);
    hello(fx->port[1], 1, NODES, 0, 1);
    g_assert_false(recv_myri(fx->port[1], &f, 400));
    g_assert_cmpuint(counter(fx, "node 1", "resets"), ==, 2);
    ctl_ok(fx, "fault clear");

    /* a new connection is not a reset */
    close(fx->port[1]);
    wait_counter(fx, "node 1", "linked", 0);
    fx->port[1] = connect_port(fx, 1);
    hello(fx->port[1], 1, NODES, 0, 1);
    g_assert_cmpuint(counter(fx, "node 1", "resets"), ==, 2);
    g_assert_cmpuint(counter(fx, "port 1", "connects"), ==, 2);
    send_routed(fx->port[0], "81", &after);
    expect_packet(fx->port[1], 0, 1, &after, &f);
}

/* A card that never reads: fabricd's queue for it stays bounded. */
static void test_slow_reader(Fixture *fx, gconstpointer unused)
{
    enum { N = 600 };
    Packet big = make_packet(13, FABRIC_MYRI_MAX_PACKET);
    Packet other = make_packet(14, 10);
    guint64 delivered, congested;
    HdrFrame f;

    connect_hello_all(fx);
    for (int i = 0; i < N; i++) {
        send_routed(fx->port[0], "81", &big);
    }
    wait_port_rx(fx, 0, N + 1);
    delivered = counter(fx, "link 0>1", "frames");
    congested = counter(fx, "link 0>1", "congested");
    g_test_message("delivered %" G_GUINT64_FORMAT " congested %"
                   G_GUINT64_FORMAT, delivered, congested);
    g_assert_cmpuint(delivered + congested, ==, N);
    g_assert_cmpuint(congested, >, 0);

    /* never more than the port's limit queued */
    g_autofree char *status = ctl(fx, "status");
    const char *queued = strstr(status, "port 1: connected");

    g_assert_nonnull(queued);
    queued = strstr(queued, "queued=");
    g_assert_nonnull(queued);
    g_assert_cmpuint(g_ascii_strtoull(queued + 7, NULL, 10), <=,
                     FABRIC_OUT_LIMIT);

    /* the others are unaffected meanwhile */
    send_routed(fx->port[2], "be", &other);
    expect_packet(fx->port[0], 2, 0, &other, &f);
}

static void test_bad_arguments(void)
{
    g_autofree char *base = make_short_tmpdir();
    g_autofree char *never = g_build_filename(base, "never", NULL);
    g_autofree char *topo = g_build_filename(base, "bad.ini", NULL);
    static const struct {
        const char *args[12];
        const char *message;
    } cases[] = {
        { { "--kind", "myrinet", "--nodes", "17" },
          "17 nodes need more than the 16 ports of the default switch" },
        { { "--kind", "myrinet", "--nodes", "4", "--topology", "/nonexistent" },
          "cannot read the topology file" },
        { { "--kind", "myrinet", "--nodes", "4", "--topology", "TOPO" },
          "bad.ini: [switch0] port1=node9, but the fabric has nodes 0..3" },
        { { "--kind", "myrinet", "--nodes", "4", "--link-mbps", "0" },
          "--link-mbps 0 is out of range" },
        { { "--kind", "myrinet", "--nodes", "4", "--hop-ns", "5000000000" },
          "--hop-ns 5000000000 is out of range" },
        { { "--kind", "eth", "--nodes", "4", "--hop-ns", "5" },
          "--hop-ns does not apply to --kind eth (it is for ps1, "
          "myrinet and telegraphos)" },
    };

    g_assert_true(g_file_set_contents(topo, "[switch0]\nports=4\n"
                                      "port1=node9\n", -1, NULL));
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();

        g_ptr_array_add(argv, FABRICD);
        for (int a = 0; cases[i].args[a]; a++) {
            const char *arg = cases[i].args[a];

            g_ptr_array_add(argv, strcmp(arg, "TOPO") ? (char *)arg : topo);
        }
        g_ptr_array_add(argv, "--dir");
        g_ptr_array_add(argv, never);
        g_ptr_array_add(argv, NULL);
        expect_refused((const char *const *)argv->pdata, cases[i].message);
    }
    g_assert_false(g_file_test(never, G_FILE_TEST_EXISTS));
    g_assert_cmpint(g_unlink(topo), ==, 0);
    g_assert_cmpint(g_rmdir(base), ==, 0);
}

#define ADD(name, fn) \
    g_test_add("/fabricd-myrinet/" name, Fixture, myri3, fixture_setup, fn, \
               fixture_teardown)

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    signal(SIGPIPE, SIG_IGN);
    g_test_add_func("/fabricd-myrinet/bad-arguments", test_bad_arguments);
    g_test_add_func("/fabricd-myrinet/banner-and-status",
                    test_banner_and_status);
    ADD("hello", test_hello);
    ADD("delivery", test_delivery);
    ADD("bad-routes", test_bad_routes);
    ADD("malformed", test_malformed);
    g_test_add_func("/fabricd-myrinet/two-switches", test_two_switches);
    ADD("faults", test_faults);
    ADD("capture", test_capture);
    ADD("reset", test_reset);
    ADD("slow-reader", test_slow_reader);
    return g_test_run();
}
