/*
 * End-to-end tests of build/bin/fabricd --kind eth --lockstep: fake NICs
 * speak what the vcluster-eth-link filter (qemu-hw/eth-link.c) speaks,
 * the fabric header framing with kind eth, HELLO with the lock-step flag
 * and SYNC reports, and check that frames are switched by MAC and
 * delivered with the delivery time of the latency model, before the grant
 * that passes it.  Run from the repository root.  The daemon plumbing is
 * fabricd-harness.h (its fixture starts "--kind eth --nodes 3"; the
 * arguments given here come later).  Every fixture checks that fabricd
 * exits 0 on SIGTERM at the end.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "fabricd-harness.h"
#include "fabricd-frames.h"
#pragma GCC diagnostic pop

#include "proto/eth.h"
#include "proto/sync.h"

#define HOP_NS 5000             /* the defaults: --hop-ns */
#define NS_PER_BYTE 8           /* and --link-mbps 125 */
/* A frame of `len` bytes on one cable: padded, FCS, preamble, gap. */
#define WIRE_NS(len) ((MAX((len), 60) + 24) * NS_PER_BYTE)
/* Every round one look-ahead long, so that the model's stamps show. */
static const char *const lockstep[] = {
    "--lockstep", "--lockstep-quantum", "0", NULL,
};

/* What the fake nodes see: their clock, and the DATA they were given. */
typedef struct Node {
    uint64_t grant;         /* the newest grant: the node runs to it */
    bool acked;             /* its HELLO_ACK came */
    GArray *got;            /* HdrFrame, in arrival order */
} Node;

typedef struct Run {
    Fixture *fx;
    Node node[NODES];
} Run;

static void run_init(Run *r, Fixture *fx)
{
    memset(r, 0, sizeof(*r));
    r->fx = fx;
    for (int i = 0; i < NODES; i++) {
        r->node[i].got = g_array_new(FALSE, FALSE, sizeof(HdrFrame));
    }
}

static void run_free(Run *r)
{
    for (int i = 0; i < NODES; i++) {
        g_array_free(r->node[i].got, TRUE);
    }
}

static void hello_lockstep(int fd, unsigned id)
{
    uint8_t pl[FABRIC_HELLO_MAX_LEN];

    hdr_send(fd, FABRIC_KIND_ETH, FABRIC_TYPE_CONTROL, 0, FABRIC_NODE_NONE,
             pl, fabric_hello_encode(id, FABRIC_HELLO_F_LOCKSTEP, pl), 0);
}

/* "My clock is at `now` and I am busy": the node can send at once. */
static void report(int fd, uint64_t now)
{
    uint8_t pl[FABRIC_SYNC_REPORT_LEN];

    hdr_send(fd, FABRIC_KIND_ETH, FABRIC_TYPE_SYNC, 0, FABRIC_NODE_NONE, pl,
             fabric_sync_report_encode(now, pl), now);
}

/* An Ethernet frame from node `i` as its NIC sends it, at `send_ns`. */
static void send_eth(Run *r, int i, const Frame *eth, uint64_t send_ns)
{
    hdr_send(r->fx->port[i], FABRIC_KIND_ETH, FABRIC_TYPE_DATA, 0,
             FABRIC_NODE_NONE, eth->data, eth->len, send_ns);
}

/*
 * One round: every node reports at its grant, then reads up to its next
 * grant.  Everything before the grant must be due before it and no
 * earlier than the grant the node ran to; DATA goes to the node's `got`.
 */
static void round_all(Run *r)
{
    for (int i = 0; i < NODES; i++) {
        report(r->fx->port[i], r->node[i].grant);
    }
    for (int i = 0; i < NODES; i++) {
        Node *n = &r->node[i];
        GArray *before = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        HdrFrame f;

        for (;;) {
            g_assert_true(hdr_recv(r->fx->port[i], FABRIC_KIND_ETH, &f,
                                   WAIT_MS));
            if (f.h.type == FABRIC_TYPE_SYNC) {
                break;
            }
            g_assert_cmpuint(f.h.deliver_time_ns, >=, n->grant);
            g_array_append_val(before, f.h.deliver_time_ns);
            if (f.h.type == FABRIC_TYPE_DATA) {
                g_array_append_val(n->got, f);
                continue;
            }
            /* the HELLO_ACK: no kind fields */
            g_assert_cmpuint(f.h.type, ==, FABRIC_TYPE_CONTROL);
            g_assert_false(n->acked);
            g_assert_cmpuint(f.h.len, ==, FABRIC_HELLO_ACK_BASE_LEN);
            g_assert_cmpuint(f.pl[0], ==, FABRIC_CTL_HELLO_ACK);
            g_assert_cmpuint(fabric_get_le16(f.pl + 1), ==, NODES);
            g_assert_cmpuint(f.h.dst, ==, i);
            n->acked = true;
        }
        g_assert_cmpuint(f.h.len, ==, 0);
        g_assert_cmpuint(f.h.dst, ==, i);
        g_assert_cmpuint(f.h.deliver_time_ns, >, n->grant);
        for (guint j = 0; j < before->len; j++) {
            g_assert_cmpuint(g_array_index(before, uint64_t, j), <,
                             f.h.deliver_time_ns);
        }
        g_array_free(before, TRUE);
        n->grant = f.h.deliver_time_ns;
    }
    /* one fabric, one grant */
    for (int i = 1; i < NODES; i++) {
        g_assert_cmpuint(r->node[i].grant, ==, r->node[0].grant);
    }
}

/* Rounds until node `i` holds `count` DATA frames (a bounded number). */
static void rounds_until(Run *r, int i, guint count)
{
    for (int k = 0; k < 100 && r->node[i].got->len < count; k++) {
        round_all(r);
    }
    g_assert_cmpuint(r->node[i].got->len, ==, count);
}

static HdrFrame *got(Run *r, int i, guint k)
{
    return &g_array_index(r->node[i].got, HdrFrame, k);
}

static void expect_data(const HdrFrame *f, unsigned src, unsigned dst,
                        const Frame *eth)
{
    g_assert_cmpuint(f->h.type, ==, FABRIC_TYPE_DATA);
    g_assert_cmpuint(f->h.src, ==, src);
    g_assert_cmpuint(f->h.dst, ==, dst);
    g_assert_cmpmem(f->pl, f->h.len, eth->data, eth->len);
}

/*
 * Connect, HELLO with the lock-step flag at time 0: the HELLO_ACK comes a
 * look-ahead later, as any answer of the fabric.
 */
static void start_all(Run *r)
{
    connect_all(r->fx);
    for (int i = 0; i < NODES; i++) {
        hello_lockstep(r->fx->port[i], i);
    }
    for (int k = 0; k < 3 && !r->node[NODES - 1].acked; k++) {
        round_all(r);
    }
    for (int i = 0; i < NODES; i++) {
        g_assert_true(r->node[i].acked);
    }
}

/* Every node says who it is with a broadcast, in one round. */
static void learn_all_lockstep(Run *r)
{
    for (int i = 0; i < NODES; i++) {
        Frame b = make_frame(mac_bcast, mac[i], 0x10 + i, 60);

        send_eth(r, i, &b, r->node[i].grant);
    }
    for (int i = 0; i < NODES; i++) {
        rounds_until(r, i, NODES - 1);
    }
    for (int i = 0; i < NODES; i++) {
        g_array_set_size(r->node[i].got, 0);
    }
}

static void test_banner_and_status(Fixture *fx, gconstpointer unused)
{
    g_autofree char *status = ctl(fx, "status");

    /* two cables of a minimal frame (84 bytes at 8 ns) and the switch */
    g_assert_nonnull(strstr(status, "lockstep: grant=0 ns rounds=0 "
                            "lookahead=6344 ns quantum=0 ns"));
    g_assert_nonnull(strstr(status, "eth: lock-step, switch delay 5000 ns, "
                            "link 125 MB/s, 0 of 3 nodes linked"));
    g_assert_cmpuint(counter(fx, "eth", "hop_ns"), ==, HOP_NS);
    g_assert_cmpuint(counter(fx, "eth", "link_mbps"), ==, 125);
}

/* A NIC that is not lock-step, or speaks the stream framing, is refused. */
static void test_hello(Fixture *fx, gconstpointer unused)
{
    uint8_t be[4] = { 0, 0, 0, 60 };
    Frame eth = make_frame(mac_bcast, mac[1], 0x30, 60);
    uint8_t stream[4 + 60];
    g_autofree char *why = NULL;

    fx->port[0] = connect_port(fx, 0);
    hdr_hello_as(fx->port[0], FABRIC_KIND_ETH, 0);
    why = hdr_expect_reject(fx->port[0], FABRIC_KIND_ETH);
    g_assert_cmpstr(why, ==, "this fabricd runs lock-step (--lockstep) but "
                    "the device is free-running (no lockstep=on)");
    expect_eof(fx->port[0]);
    /* it left the run: its node cannot come back into it */
    wait_counter(fx, "port 0", "connected", 0);
    close(fx->port[0]);
    fx->port[0] = connect_port(fx, 0);
    expect_eof(fx->port[0]);
    wait_counter(fx, "port 0", "rejected", 2);

    /* free-running eth's framing: the length is no fabric header */
    fx->port[1] = connect_port(fx, 1);
    memcpy(stream, be, sizeof(be));
    memcpy(stream + 4, eth.data, eth.len);
    write_all(fx->port[1], stream, sizeof(stream));
    expect_eof(fx->port[1]);
    wait_counter(fx, "port 1", "malformed", 1);
}

/*
 * A unicast frame goes to the node its destination MAC was learned on,
 * exactly at send time + cable + switch + cable; frames into one node
 * queue on its cable, in the fixed order (send time, node).
 */
static void test_unicast_timing(Fixture *fx, gconstpointer unused)
{
    Frame a = make_frame(mac[1], mac[0], 0x40, 100);
    Frame b = make_frame(mac[1], mac[0], 0x41, 100);
    Frame c = make_frame(mac[1], mac[2], 0x42, 100);
    Frame big = make_frame(mac[1], mac[0], 0x43, 1514);
    Run r;
    uint64_t t;

    run_init(&r, fx);
    start_all(&r);
    learn_all_lockstep(&r);

    /* one frame, alone on the cables */
    t = r.node[0].grant;
    send_eth(&r, 0, &a, t);
    rounds_until(&r, 1, 1);
    expect_data(got(&r, 1, 0), 0, 1, &a);
    g_assert_cmpuint(got(&r, 1, 0)->h.send_time_ns, ==, t);
    g_assert_cmpuint(got(&r, 1, 0)->h.deliver_time_ns, ==,
                     t + WIRE_NS(100) + HOP_NS + WIRE_NS(100));
    g_assert_cmpuint(r.node[0].got->len, ==, 0);
    g_assert_cmpuint(r.node[2].got->len, ==, 0);
    g_array_set_size(r.node[1].got, 0);

    /*
     * Three at once into node1: node2's comes last (the order is send
     * time, then node) and waits for node1's cable, a's and b's share
     * node0's cable.
     */
    t = r.node[0].grant;
    send_eth(&r, 2, &c, t);
    send_eth(&r, 0, &a, t);
    send_eth(&r, 0, &b, t);
    rounds_until(&r, 1, 3);
    expect_data(got(&r, 1, 0), 0, 1, &a);
    expect_data(got(&r, 1, 1), 0, 1, &b);
    expect_data(got(&r, 1, 2), 2, 1, &c);
    g_assert_cmpuint(got(&r, 1, 0)->h.deliver_time_ns, ==,
                     t + 2 * WIRE_NS(100) + HOP_NS);
    g_assert_cmpuint(got(&r, 1, 1)->h.deliver_time_ns, ==,
                     t + 3 * WIRE_NS(100) + HOP_NS);
    /* c was in the switch with a, but node1's cable was busy */
    g_assert_cmpuint(got(&r, 1, 2)->h.deliver_time_ns, ==,
                     t + 4 * WIRE_NS(100) + HOP_NS);
    g_array_set_size(r.node[1].got, 0);

    /* a full frame: 1538 bytes on each cable, 12.3 us each */
    t = r.node[0].grant;
    send_eth(&r, 0, &big, t);
    rounds_until(&r, 1, 1);
    expect_data(got(&r, 1, 0), 0, 1, &big);
    g_assert_cmpuint(got(&r, 1, 0)->h.deliver_time_ns, ==,
                     t + 2 * 12304 + HOP_NS);
    g_assert_cmpuint(counter(fx, "node 0", "sent"), ==, 5);
    g_assert_cmpuint(counter(fx, "link 0>1", "frames"), ==, 5);
    g_assert_cmpuint(counter(fx, "link 2>1", "frames"), ==, 2);
    run_free(&r);
}

/* Broadcast and unknown unicast are flooded, each copy on its cable. */
static void test_flood(Fixture *fx, gconstpointer unused)
{
    Frame unknown = make_frame(mac_nobody, mac[0], 0x50, 200);
    Run r;
    uint64_t t;

    run_init(&r, fx);
    start_all(&r);
    t = r.node[0].grant;
    send_eth(&r, 0, &unknown, t);
    rounds_until(&r, 2, 1);
    rounds_until(&r, 1, 1);
    for (int i = 1; i < NODES; i++) {
        expect_data(got(&r, i, 0), 0, i, &unknown);
        g_assert_cmpuint(got(&r, i, 0)->h.deliver_time_ns, ==,
                         t + 2 * WIRE_NS(200) + HOP_NS);
    }
    g_assert_cmpuint(r.node[0].got->len, ==, 0);
    g_assert_cmpuint(counter(fx, "node 0", "flooded"), ==, 1);
    g_autofree char *table = ctl(fx, "table");

    /* learned in virtual time: the entry is 0 s old, not aged out */
    g_assert_cmpstr(table, ==, "52:54:00:12:34:00 port=0 age=0\n");
    run_free(&r);
}

/*
 * A corrupt rule flips payload bits only: the header is intact and says
 * so.  The capture holds the Ethernet frames at their virtual delivery
 * times, for tshark.
 */
static void test_corrupt_and_capture(Fixture *fx, gconstpointer unused)
{
    g_autofree char *path = path_in(fx, "eth.pcapng");
    g_autofree char *cmd = g_strdup_printf("capture start %s", path);
    g_autofree char *stop = NULL;
    Frame a = make_frame(mac[1], mac[0], 0x60, 100);
    Frame flipped = a;
    Run r;
    uint64_t t, due;

    run_init(&r, fx);
    start_all(&r);
    learn_all_lockstep(&r);
    ctl_ok(fx, cmd);
    ctl_ok(fx, "fault add 0>1 corrupt p=1 offsets=200");
    t = r.node[0].grant;
    send_eth(&r, 0, &a, t);
    rounds_until(&r, 1, 1);
    flipped.data[25] ^= 1;
    expect_data(got(&r, 1, 0), 0, 1, &flipped);
    g_assert_cmpuint(got(&r, 1, 0)->h.flags, ==, FABRIC_F_CORRUPTED);
    g_assert_cmpuint(got(&r, 1, 0)->h.kind, ==, FABRIC_KIND_ETH);
    g_assert_cmpuint(got(&r, 1, 0)->h.len, ==, 100);
    due = got(&r, 1, 0)->h.deliver_time_ns;
    g_assert_cmpuint(due, ==, t + 2 * WIRE_NS(100) + HOP_NS);
    g_assert_cmpuint(counter(fx, "link 0>1", "corrupted"), ==, 1);
    stop = ctl(fx, "capture stop");
    g_assert_cmpstr(stop, ==, "frames 1\n");

    static const char *const fields[] = {
        "frame.interface_name", "frame.comment", "frame.len", "eth.src",
        "eth.type", "frame.time_epoch", "frame.packet_flags_crc_error", NULL,
    };
    g_auto(GStrv) packets = tshark_lines(path, fields);
    g_autofree char *want = NULL;

    if (!packets) {
        g_test_skip("tshark is not installed: capture contents not checked");
        run_free(&r);
        return;
    }
    /* the lock-step trace's comment names the virtual send time */
    want = g_strdup_printf("node1\tnode0>node1 send=%" G_GUINT64_FORMAT
                           "\t100\t52:54:00:12:34:00\t"
                           "0x88b5\t%" G_GUINT64_FORMAT ".%09" G_GUINT64_FORMAT
                           "\t1", t, due / 1000000000u, due % 1000000000u);
    g_assert_cmpuint(g_strv_length(packets), ==, 1);
    g_assert_cmpstr(packets[0], ==, want);
    run_free(&r);
}

/* --hop-ns and --link-mbps set the model and the look-ahead. */
static void test_options(Fixture *fx, gconstpointer unused)
{
    g_autofree char *status = ctl(fx, "status");
    Frame a = make_frame(mac[1], mac[0], 0x70, 1000);
    Run r;
    uint64_t t;

    /* 2 x 84 bytes at 1 ns a byte, and 1000 ns */
    g_assert_nonnull(strstr(status, "lookahead=1168 ns"));
    run_init(&r, fx);
    start_all(&r);
    learn_all_lockstep(&r);
    t = r.node[0].grant;
    send_eth(&r, 0, &a, t);
    rounds_until(&r, 1, 1);
    expect_data(got(&r, 1, 0), 0, 1, &a);
    g_assert_cmpuint(got(&r, 1, 0)->h.deliver_time_ns, ==,
                     t + 2 * 1024 + 1000);
    run_free(&r);
}

static void test_bad_arguments(void)
{
    g_autofree char *base = make_short_tmpdir();
    g_autofree char *never = g_build_filename(base, "never", NULL);
    static const struct {
        const char *args[12];
        const char *message;
    } cases[] = {
        { { "--kind", "eth", "--nodes", "2", "--link-mbps", "125" },
          "--link-mbps does not apply to --kind eth (it is for ps1, "
          "myrinet and telegraphos); eth takes it with --lockstep" },
        { { "--kind", "eth", "--nodes", "2", "--lockstep", "--link-mbps",
            "0" }, "--link-mbps 0 is out of range" },
        { { "--kind", "eth", "--nodes", "2", "--lockstep", "--hop-ns",
            "2000000000" }, "--hop-ns 2000000000 is out of range" },
        { { "--kind", "eth", "--nodes", "2", "--lockstep", "--topology",
            "ring" }, "--topology does not apply to --kind eth (one switch, "
          "node i on port i)" },
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

static const char *const fast[] = {
    "--lockstep", "--lockstep-quantum", "0", "--hop-ns", "1000",
    "--link-mbps", "1000", NULL,
};

#define ADD(name, args, fn) \
    g_test_add("/fabricd-eth-lockstep/" name, Fixture, args, fixture_setup, \
               fn, fixture_teardown)

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    signal(SIGPIPE, SIG_IGN);
    g_test_add_func("/fabricd-eth-lockstep/bad-arguments",
                    test_bad_arguments);
    ADD("banner-and-status", lockstep, test_banner_and_status);
    ADD("hello", lockstep, test_hello);
    ADD("unicast-timing", lockstep, test_unicast_timing);
    ADD("flood", lockstep, test_flood);
    ADD("corrupt-and-capture", lockstep, test_corrupt_and_capture);
    ADD("options", fast, test_options);
    return g_test_run();
}
