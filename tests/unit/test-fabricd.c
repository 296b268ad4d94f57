/*
 * End-to-end tests of build/bin/fabricd (and fabricctl) without VMs: fake
 * QEMU ports speak the eth kind's framing (4-byte big-endian length, then
 * an Ethernet frame) over the node sockets.  Run from the repository root.
 * The plumbing lives in fabricd-harness.h.
 *
 * Every fixture checks that fabricd still exits 0 on SIGTERM at the end.
 * Set FABRICD_TEST_WRAPPER (e.g. "valgrind --log-file=/tmp/vg.%p") to run
 * the daemon under a tool.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fabricd-harness.h"

static void test_banner_and_sockets(void)
{
    Fixture fx;

    fixture_init(&fx);
    /* a stale socket file from an earlier run is replaced */
    g_autofree char *stale = path_in(&fx, "node1.sock");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };

    strcpy(sa.sun_path, stale);
    g_assert_cmpint(bind(s, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    close(s);

    g_autofree char *banner = start_fabricd(&fx, NULL);
    g_autofree char *want = g_strdup_printf(
        "fabricd: kind=eth nodes=3 seed=0x000000000000002a dir=%s", fx.dir);

    g_assert_cmpstr(banner, ==, want);
    for (int i = 0; i < NODES; i++) {
        g_autofree char *name = g_strdup_printf("node%d.sock", i);
        g_autofree char *p = path_in(&fx, name);

        g_assert_true(g_file_test(p, G_FILE_TEST_EXISTS));
    }
    g_autofree char *seed = ctl(&fx, "seed");

    g_assert_cmpstr(seed, ==, "seed 0x000000000000002a\n");
    g_autofree char *status = ctl(&fx, "status");

    g_assert_nonnull(strstr(status, "kind=eth"));
    g_assert_nonnull(strstr(status,
        "learning switch, 3 ports, full mesh of directed links"));
    g_assert_nonnull(strstr(status, "capture: off"));
    g_assert_nonnull(strstr(status, "port 2:"));

    /* the stale node1 socket was replaced by a live one */
    int p1 = connect_port(&fx, 1);

    wait_counter(&fx, "port 1", "connected", 1);
    close(p1);

    /* counters lists every directed link of the full mesh */
    g_autofree char *all = ctl(&fx, "counters");

    g_assert_nonnull(strstr(all, "link 0>1 state=up frames=0 bytes=0 "
                            "dropped=0 down=0 corrupted=0 delayed=0 "
                            "congested=0 duplicated=0 reordered=0\n"));
    g_assert_nonnull(strstr(all, "link 2>1 state=up"));
    g_assert_null(strstr(all, "link 1>1"));
    fixture_teardown(&fx, NULL);
}

static void test_switching(Fixture *fx, gconstpointer unused)
{
    Frame b0 = make_frame(mac_bcast, mac[0], 1, 60);
    Frame u10 = make_frame(mac[0], mac[1], 2, 100);
    Frame u01 = make_frame(mac[1], mac[0], 3, 1514);
    Frame unknown = make_frame(mac_nobody, mac[2], 4, 64);

    connect_all(fx);

    /* broadcast floods to both others, not back to the sender */
    send_frame(fx->port[0], &b0);
    expect_frame(fx->port[1], &b0);
    expect_frame(fx->port[2], &b0);
    wait_port_rx(fx, 0, 1);
    expect_nothing(fx->port[0]);

    /* node0's MAC is learned: the reply goes only to port 0 */
    send_frame(fx->port[1], &u10);
    expect_frame(fx->port[0], &u10);
    wait_port_rx(fx, 1, 1);
    expect_nothing(fx->port[2]);

    /* and now node1's as well */
    send_frame(fx->port[0], &u01);
    expect_frame(fx->port[1], &u01);
    wait_port_rx(fx, 0, 2);
    expect_nothing(fx->port[2]);

    /* unknown unicast floods */
    send_frame(fx->port[2], &unknown);
    expect_frame(fx->port[0], &unknown);
    expect_frame(fx->port[1], &unknown);

    wait_counter(fx, "port 0", "rx_bytes", 60 + 1514);
    wait_counter(fx, "port 0", "tx_frames", 2);
    wait_counter(fx, "port 1", "tx_bytes", 60 + 1514 + 64);
    wait_counter(fx, "link 0>1", "frames", 2);
    wait_counter(fx, "link 0>2", "frames", 1);
    wait_counter(fx, "link 1>2", "frames", 0);
    wait_counter(fx, "link 0>1", "bytes", 60 + 1514);

    g_autofree char *table = ctl(fx, "table");

    g_assert_nonnull(strstr(table, "52:54:00:12:34:00 port=0 age=0\n"));
    g_assert_nonnull(strstr(table, "52:54:00:12:34:01 port=1 age=0\n"));
    g_assert_nonnull(strstr(table, "52:54:00:12:34:02 port=2 age=0\n"));
    g_assert_null(strstr(table, "ff:ff"));

    g_autofree char *status = ctl(fx, "status");

    g_assert_nonnull(strstr(status, "link 0>1: up"));
    g_assert_null(strstr(status, "link 1>2:"));   /* no traffic: not shown */
}

static void test_malformed(Fixture *fx, gconstpointer unused)
{
    static const uint8_t junk[3] = { 1, 2, 3 };
    Frame b0 = make_frame(mac_bcast, mac[0], 5, 60);
    Frame b1 = make_frame(mac_bcast, mac[1], 6, 60);
    Frame b2 = make_frame(mac_bcast, mac[2], 7, 60);

    connect_all(fx);

    /* too short: skipped, and the stream stays in sync */
    send_raw_len(fx->port[0], 3, junk, sizeof(junk));
    send_raw_len(fx->port[0], 0, NULL, 0);
    send_frame(fx->port[0], &b0);
    expect_frame(fx->port[1], &b0);
    expect_frame(fx->port[2], &b0);
    wait_counter(fx, "port 0", "malformed", 2);
    wait_counter(fx, "port 0", "rx_frames", 1);
    wait_counter(fx, "port 0", "connected", 1);

    /* absurd length: the stream is lost, that connection alone is closed */
    /* one write: fabricd may hang up as soon as it sees the length */
    static const uint8_t absurd[7] = { 0x7f, 0xff, 0xff, 0xff, 1, 2, 3 };
    Frame dummy;

    write_all(fx->port[2], absurd, sizeof(absurd));

    g_assert_false(recv_frame(fx->port[2], &dummy, WAIT_MS));  /* EOF */
    wait_counter(fx, "port 2", "connected", 0);
    wait_counter(fx, "port 2", "malformed", 1);

    /* the others still talk */
    send_frame(fx->port[1], &b1);
    expect_frame(fx->port[0], &b1);

    /* and the port can be used again */
    close(fx->port[2]);
    fx->port[2] = connect_port(fx, 2);
    wait_counter(fx, "port 2", "connects", 2);
    send_frame(fx->port[2], &b2);
    expect_frame(fx->port[0], &b2);
    expect_frame(fx->port[1], &b2);

    /* a frame split into tiny writes still arrives whole */
    Frame big = make_frame(mac_bcast, mac[0], 8, 1000);
    uint8_t be[4] = { 0, 0, 1000 >> 8, 1000 & 0xff };

    write_all(fx->port[0], be, 4);
    for (size_t off = 0; off < big.len; off += 333) {
        write_all(fx->port[0], big.data + off, MIN(333, big.len - off));
        g_usleep(2000);
    }
    expect_frame(fx->port[1], &big);
    expect_frame(fx->port[2], &big);
}

static void test_control_robustness(Fixture *fx, gconstpointer unused)
{
    g_autofree char *longline = g_strnfill(5000, 'x');

    ctl_err(fx, "bogus", "unknown command 'bogus'");
    ctl_err(fx, "", "empty command");
    ctl_err(fx, longline, "line too long");
    ctl_err(fx, "fault add 0>1 drop p=7", "out of range");
    ctl_err(fx, "fault add 0>5 drop p=1", "node 5 does not exist");
    ctl_err(fx, "fault del 99", "no fault rule 99");
    ctl_err(fx, "fault del x", "needs a rule id");
    ctl_err(fx, "fault", "fault needs");
    ctl_err(fx, "link sideways 0>1", "up or down");
    ctl_err(fx, "link down", "needs a link");
    ctl_err(fx, "link down 0>0", "itself");
    ctl_err(fx, "capture stop", "no capture");
    ctl_err(fx, "capture start", "needs a file");
    ctl_err(fx, "capture start /nonexistent-dir/x.pcapng", "cannot create");
    ctl_err(fx, "seed 5", "takes no argument");
    ctl_err(fx, "time 5", "takes no argument");
    ctl_err(fx, "fault add 2|2 down", "on both sides");
    ctl_err(fx, "fault frob", "expected add, load, del, list or clear");

    /* long lines arriving in one piece: exactly one ERR each, and the
     * connection stays in step (the next answer is the seed's) */
    static const size_t long_lens[] = { 4500, 20000 };

    for (size_t i = 0; i < G_N_ELEMENTS(long_lens); i++) {
        g_autofree char *huge = g_strnfill(long_lens[i] + 1, 'y');
        g_autofree char *err = NULL;
        g_autofree char *seed_again = NULL;

        huge[long_lens[i]] = '\n';
        write_all(fx->ctl, huge, long_lens[i] + 1);
        g_assert_false(ctl_answer(fx, &err));
        g_assert_cmpstr(err, ==, "line too long (limit 4096 bytes)");
        seed_again = ctl(fx, "seed");
        g_assert_cmpstr(seed_again, ==, "seed 0x000000000000002a\n");
    }

    /* no newline at all: fabricd must not wait for one, buffering forever */
    g_autofree char *endless = g_strnfill(10000, 'z');
    g_autofree char *early = NULL;

    write_all(fx->ctl, endless, 10000);
    g_assert_false(ctl_answer(fx, &early));
    g_assert_cmpstr(early, ==, "line too long (limit 4096 bytes)");
    write_all(fx->ctl, endless, 10000);
    write_all(fx->ctl, "\n", 1);       /* ends the discarded line */
    ctl_ok(fx, "seed");

    /* a NUL byte inside a line */
    g_autofree char *answer = NULL;

    write_all(fx->ctl, "se\0ed\n", 6);
    g_assert_false(ctl_answer(fx, &answer));
    g_assert_cmpstr(answer, ==, "command contains a NUL byte");

    /* several commands on one connection keep working after all that */
    g_autofree char *seed = ctl(fx, "seed");

    g_assert_cmpstr(seed, ==, "seed 0x000000000000002a\n");
    g_autofree char *help = ctl(fx, "help");

    g_assert_nonnull(strstr(help, "fault add"));

    /* a client that disconnects mid-line does no harm */
    g_autofree char *ctl_path = path_in(fx, "ctl.sock");
    int c = connect_unix(ctl_path);

    g_assert_cmpint(c, >=, 0);
    write_all(c, "stat", 4);
    close(c);
    ctl_ok(fx, "status");
}

static void test_reject_second_connection(Fixture *fx, gconstpointer unused)
{
    Frame b1 = make_frame(mac_bcast, mac[1], 9, 60);
    Frame b0 = make_frame(mac_bcast, mac[0], 10, 60);
    Frame dummy;
    int intruder;

    connect_all(fx);
    learn_all(fx);
    intruder = connect_port(fx, 1);
    g_assert_false(recv_frame(intruder, &dummy, WAIT_MS));     /* closed */
    close(intruder);
    wait_counter(fx, "port 1", "rejected", 1);
    wait_counter(fx, "port 1", "connects", 1);

    /* the first connection is untouched */
    send_frame(fx->port[1], &b1);
    expect_frame(fx->port[0], &b1);
    expect_frame(fx->port[2], &b1);

    /* a disconnect frees the port and forgets its MACs */
    g_autofree char *before = ctl(fx, "table");

    g_assert_nonnull(strstr(before, "52:54:00:12:34:01 port=1"));
    close(fx->port[1]);
    fx->port[1] = -1;
    wait_counter(fx, "port 1", "connected", 0);
    g_autofree char *after = ctl(fx, "table");

    g_assert_null(strstr(after, "52:54:00:12:34:01"));
    /* floods now skip the empty port */
    send_frame(fx->port[0], &b0);
    expect_frame(fx->port[2], &b0);
    wait_port_rx(fx, 0, 2);
    wait_counter(fx, "link 0>1", "frames", 1);

    fx->port[1] = connect_port(fx, 1);
    wait_counter(fx, "port 1", "connects", 2);
    send_frame(fx->port[0], &b0);
    expect_frame(fx->port[1], &b0);
}

static void test_fault_drop(Fixture *fx, gconstpointer unused)
{
    Frame u01 = make_frame(mac[1], mac[0], 11, 80);
    Frame u10 = make_frame(mac[0], mac[1], 12, 80);
    Frame u02 = make_frame(mac[2], mac[0], 13, 80);
    g_autofree char *added = NULL;
    g_autofree char *list = NULL;

    connect_all(fx);
    learn_all(fx);

    added = ctl(fx, "fault add 0>1 drop p=1");
    g_assert_cmpstr(added, ==, "rule 1\n");

    send_frame(fx->port[0], &u01);
    wait_port_rx(fx, 0, 2);
    expect_nothing(fx->port[1]);
    wait_counter(fx, "link 0>1", "dropped", 1);

    send_frame(fx->port[1], &u10);
    expect_frame(fx->port[0], &u10);
    send_frame(fx->port[0], &u02);
    expect_frame(fx->port[2], &u02);

    list = ctl(fx, "fault list");
    g_assert_cmpstr(list, ==, "1 0>1 drop p=1 matched=1 fired=1\n");
    g_autofree char *status = ctl(fx, "status");

    g_assert_nonnull(strstr(status, "1 0>1 drop p=1 matched=1 fired=1"));

    ctl_ok(fx, "fault del 1");
    send_frame(fx->port[0], &u01);
    expect_frame(fx->port[1], &u01);
    wait_counter(fx, "link 0>1", "dropped", 1);
    g_autofree char *empty = ctl(fx, "fault list");

    g_assert_cmpstr(empty, ==, "");

    /* nth drops exactly one frame per direction */
    g_autofree char *second = ctl(fx, "fault add node1-node0 drop nth=2");

    g_assert_cmpstr(second, ==, "rule 2\n");
    for (int i = 0; i < 3; i++) {
        send_frame(fx->port[0], &u01);
    }
    expect_frame(fx->port[1], &u01);
    expect_frame(fx->port[1], &u01);
    wait_port_rx(fx, 0, 7);
    expect_nothing(fx->port[1]);
    wait_counter(fx, "link 0>1", "dropped", 2);
    ctl_ok(fx, "fault clear");
}

static void test_link_down(Fixture *fx, gconstpointer unused)
{
    Frame u02 = make_frame(mac[2], mac[0], 14, 70);
    Frame u20 = make_frame(mac[0], mac[2], 15, 70);
    Frame u01 = make_frame(mac[1], mac[0], 16, 70);

    connect_all(fx);
    learn_all(fx);
    ctl_ok(fx, "link down 0-2");
    g_autofree char *all = ctl(fx, "counters");

    g_assert_nonnull(strstr(all, "link 0>2 state=down"));
    g_assert_nonnull(strstr(all, "link 2>0 state=down"));
    g_assert_nonnull(strstr(all, "link 0>1 state=up"));

    send_frame(fx->port[0], &u02);
    send_frame(fx->port[2], &u20);
    send_frame(fx->port[0], &u01);
    expect_frame(fx->port[1], &u01);
    wait_port_rx(fx, 0, 3);
    wait_port_rx(fx, 2, 2);
    expect_nothing(fx->port[2]);
    expect_nothing(fx->port[0]);
    wait_counter(fx, "link 0>2", "down", 1);
    wait_counter(fx, "link 2>0", "down", 1);

    ctl_ok(fx, "link up 2-0");
    send_frame(fx->port[0], &u02);
    expect_frame(fx->port[2], &u02);
    send_frame(fx->port[2], &u20);
    expect_frame(fx->port[0], &u20);

    /* wildcards */
    ctl_ok(fx, "link down *>1");
    g_autofree char *some = ctl(fx, "counters");

    g_assert_nonnull(strstr(some, "link 0>1 state=down"));
    g_assert_nonnull(strstr(some, "link 2>1 state=down"));
    g_assert_nonnull(strstr(some, "link 1>0 state=up"));
    ctl_ok(fx, "link up *");
    g_autofree char *none = ctl(fx, "counters");

    g_assert_null(strstr(none, "state=down"));

    /* a partition: node 2 from nodes 0 and 1, both ways */
    ctl_ok(fx, "link down 2|0,1");
    g_autofree char *cut = ctl(fx, "counters");

    g_assert_nonnull(strstr(cut, "link 0>2 state=down"));
    g_assert_nonnull(strstr(cut, "link 2>0 state=down"));
    g_assert_nonnull(strstr(cut, "link 1>2 state=down"));
    g_assert_nonnull(strstr(cut, "link 2>1 state=down"));
    g_assert_nonnull(strstr(cut, "link 0>1 state=up"));
    g_assert_nonnull(strstr(cut, "link 1>0 state=up"));
    ctl_ok(fx, "link up 0,1|2");
    g_autofree char *healed = ctl(fx, "counters");

    g_assert_null(strstr(healed, "state=down"));
}

static void test_delay_and_corrupt(Fixture *fx, gconstpointer unused)
{
    Frame f[3];
    Frame got;
    gint64 start;

    connect_all(fx);
    learn_all(fx);

    ctl_ok(fx, "fault add 0>1 delay ms=200");
    start = g_get_monotonic_time();
    for (int i = 0; i < 3; i++) {
        f[i] = make_frame(mac[1], mac[0], 20 + i, 60 + i);
        send_frame(fx->port[0], &f[i]);
    }
    /* held for 200 ms, then delivered in order */
    for (int i = 0; i < 3; i++) {
        expect_frame(fx->port[1], &f[i]);
    }
    g_assert_cmpint(g_get_monotonic_time() - start, >=, 200000);
    wait_counter(fx, "link 0>1", "delayed", 3);
    wait_counter(fx, "link 0>1", "frames", 4);
    ctl_ok(fx, "fault clear");

    /* bit 112 is the first payload bit: the corrupted copy differs there,
     * the copy for node2 of the same broadcast does not */
    ctl_ok(fx, "fault add 0>1 corrupt p=1 offsets=112");
    Frame b = make_frame(mac_bcast, mac[0], 30, 64);

    send_frame(fx->port[0], &b);
    expect_frame(fx->port[2], &b);
    g_assert_true(recv_frame(fx->port[1], &got, WAIT_MS));
    g_assert_cmpuint(got.len, ==, b.len);
    g_assert_cmphex(got.data[14], ==, b.data[14] ^ 0x01);
    got.data[14] ^= 0x01;
    g_assert_cmpmem(got.data, got.len, b.data, b.len);
    wait_counter(fx, "link 0>1", "corrupted", 1);
    wait_counter(fx, "link 0>2", "corrupted", 0);
}

/* duplicate and reorder rules on the core's path, as the peers see them */
static void test_duplicate_and_reorder(Fixture *fx, gconstpointer unused)
{
    Frame a = make_frame(mac[1], mac[0], 60, 70);
    Frame b = make_frame(mac[1], mac[0], 61, 71);
    Frame c = make_frame(mac[1], mac[0], 62, 72);
    gint64 start;

    connect_all(fx);
    learn_all(fx);

    /* a duplicated copy arrives twice, one right after the other */
    ctl_ok(fx, "fault add 0>1 duplicate p=1");
    send_frame(fx->port[0], &a);
    expect_frame(fx->port[1], &a);
    expect_frame(fx->port[1], &a);
    wait_counter(fx, "link 0>1", "duplicated", 1);
    expect_nothing(fx->port[1]);
    wait_counter(fx, "link 0>1", "frames", 3);      /* learn_all's + 2 */
    g_autofree char *status = ctl(fx, "status");

    g_assert_nonnull(strstr(status, " duplicated=1 reordered=0"));

    /* with a delay too: both wait, each pair stays together and in order */
    ctl_ok(fx, "fault add 0>1 delay ms=100");
    start = g_get_monotonic_time();
    send_frame(fx->port[0], &b);
    send_frame(fx->port[0], &c);
    expect_frame(fx->port[1], &b);
    g_assert_cmpint(g_get_monotonic_time() - start, >=, 100000);
    expect_frame(fx->port[1], &b);
    expect_frame(fx->port[1], &c);
    expect_frame(fx->port[1], &c);
    wait_counter(fx, "link 0>1", "duplicated", 3);
    wait_counter(fx, "link 0>1", "delayed", 2);
    expect_nothing(fx->port[1]);
    ctl_ok(fx, "fault clear");

    /*
     * a reordered copy is held 1 s, and the next one passes it (the order
     * the peer reads them in shows it)
     */
    ctl_ok(fx, "fault add 0>1 reorder p=1 ms=1000");
    start = g_get_monotonic_time();
    send_frame(fx->port[0], &b);
    wait_counter(fx, "link 0>1", "reordered", 1);
    ctl_ok(fx, "fault clear");
    send_frame(fx->port[0], &c);
    expect_frame(fx->port[1], &c);
    expect_frame(fx->port[1], &b);
    g_assert_cmpint(g_get_monotonic_time() - start, >=, G_USEC_PER_SEC);
    wait_counter(fx, "link 0>1", "reordered", 1);
    wait_counter(fx, "link 0>1", "frames", 9);
    wait_counter(fx, "link 0>1", "congested", 0);
}

static void write_file(const char *path, const char *text)
{
    g_autoptr(GError) err = NULL;

    g_assert_true(g_file_set_contents(path, text, -1, &err));
    g_assert_no_error(err);
}

/* --faults FILE at start, `fault load FILE`, and their errors */
static void test_fault_files(void)
{
    Fixture fx;
    g_autofree char *cwd = g_get_current_dir();
    g_autofree char *ctl_bin = g_build_filename(cwd, FABRICCTL, NULL);
    g_autofree char *good = NULL, *bad = NULL, *list = NULL, *cmd = NULL;
    const char *extra[] = { "--faults", NULL, NULL };
    char *out = NULL, *err = NULL;

    fixture_init(&fx);
    good = path_in(&fx, "good.faults");
    bad = path_in(&fx, "bad.faults");
    write_file(good, "# a partition, then bursty loss\n"
                     "\n"
                     "2|0,1 down at=1000s for=500ms\n"
                     "0>1 drop ge p=0.01 r=0.25   # bursts of 4\n");
    write_file(bad, "0>1 drop p=0.1\n"
                    "# fine so far\n"
                    "0>1 drop p=2\n");

    /* a bad file: exit 2, the file and line named, nothing created */
    {
        g_autofree char *sub = path_in(&fx, "never");
        const char *argv[] = { FABRICD, "--kind", "eth", "--nodes", "3",
                               "--dir", sub, "--faults", bad, NULL };
        g_autofree char *want = g_strdup_printf(
            "%s:3: p=2 is out of range (a probability is between 0 and 1)",
            bad);

        expect_refused(argv, want);
        argv[8] = "/nonexistent/f";
        expect_refused(argv, "cannot read fault file /nonexistent/f: "
                       "No such file or directory");
        g_assert_false(g_file_test(sub, G_FILE_TEST_EXISTS));
    }

    extra[1] = good;
    g_free(start_fabricd(&fx, extra));
    list = ctl(&fx, "fault list");
    g_assert_cmpstr(list, ==,
                    "1 0,1|2 down at=1000s until=1000500ms matched=0 fired=0\n"
                    "2 0>1 drop ge p=0.01 r=0.25 matched=0 fired=0\n");

    /* fault load: all rules or none */
    cmd = g_strdup_printf("fault load %s", bad);
    g_autofree char *want = g_strdup_printf("%s:3: p=2 is out of range", bad);

    ctl_err(&fx, cmd, want);
    ctl_err(&fx, "fault load", "fault load needs a file name");
    ctl_err(&fx, "fault load /nonexistent/f", "cannot read fault file");
    ctl_err(&fx, "fault load /", "is not a regular file");
    write_file(bad, "0>1 duplicate p=0.5\n0>1 reorder p=0.5 us=10 at=1s\n");
    g_autofree char *answer = ctl(&fx, cmd);

    g_assert_cmpstr(answer, ==, "rule 3\nrule 4\n");
    g_free(list);
    list = ctl(&fx, "fault list");
    g_assert_nonnull(strstr(list, "\n4 0>1 reorder p=0.5 ns=10000 at=1s "));

    /* fabricctl sends a relative file as its own absolute path */
    write_file(bad, "* delay us=5 jitter=1us\n");
    {
        const char *argv[] = { ctl_bin, "-d", fx.dir, "fault", "load",
                               "bad.faults", NULL };

        g_assert_cmpint(run(argv, fx.dir, &out, &err), ==, 0);
        g_assert_cmpstr(out, ==, "rule 5\n");
        g_assert_cmpstr(err, ==, "");
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
    }
    /* the time rules see: since fabricd started, a few ms here */
    g_autofree char *t = ctl(&fx, "time");
    guint64 ns = g_ascii_strtoull(t + 5, NULL, 10);

    g_assert_true(g_str_has_prefix(t, "time "));
    g_assert_true(g_str_has_suffix(t, "ns\n"));
    g_assert_cmpuint(ns, >, 0);
    g_assert_cmpuint(ns, <, 60ull * 1000000000);
    fixture_teardown(&fx, NULL);
}

static void test_congestion(Fixture *fx, gconstpointer unused)
{
    enum { N = 4000, LEN = 1500 };
    Frame u01 = make_frame(mac[1], mac[0], 40, LEN);
    Frame b2 = make_frame(mac_bcast, mac[2], 41, 60);
    guint64 delivered, congested;
    unsigned received = 0;
    Frame got;

    connect_all(fx);
    learn_all(fx);
    /* node1 does not read: 6 MB for it overflow the 4 MiB queue */
    for (int i = 0; i < N; i++) {
        send_frame(fx->port[0], &u01);
    }
    wait_port_rx(fx, 0, N + 1);
    /* minus the broadcast learn_all() sent over 0>1 */
    delivered = counter(fx, "link 0>1", "frames") - 1;
    congested = counter(fx, "link 0>1", "congested");
    g_test_message("delivered %" G_GUINT64_FORMAT " congested %"
                   G_GUINT64_FORMAT, delivered, congested);
    g_assert_cmpuint(delivered + congested, ==, N);
    g_assert_cmpuint(congested, >, 0);

    /* the other ports are unaffected meanwhile */
    send_frame(fx->port[2], &b2);
    expect_frame(fx->port[0], &b2);

    /* everything accepted for node1 arrives, in one piece, in order */
    while (received < delivered + 1 &&
           recv_frame(fx->port[1], &got, WAIT_MS)) {
        if (received < delivered) {
            g_assert_cmpmem(got.data, got.len, u01.data, u01.len);
        } else {
            g_assert_cmpmem(got.data, got.len, b2.data, b2.len);
        }
        received++;
    }
    g_assert_cmpuint(received, ==, delivered + 1);
}

static void test_capture(Fixture *fx, gconstpointer unused)
{
    g_autofree char *path = path_in(fx, "run.pcapng");
    g_autofree char *cmd = g_strdup_printf("capture start %s", path);
    Frame b0 = make_frame(mac_bcast, mac[0], 50, 60);
    Frame u12 = make_frame(mac[2], mac[1], 51, 90);

    connect_all(fx);
    learn_all(fx);              /* 6 copies, before the capture */
    ctl_ok(fx, cmd);
    ctl_err(fx, cmd, "is running");
    g_autofree char *state = ctl(fx, "capture status");

    g_assert_true(g_str_has_prefix(state, "capture on "));
    /* the copy for node2 gets corrupted: flagged as a CRC error */
    ctl_ok(fx, "fault add 0>2 corrupt p=1 offsets=112");
    send_frame(fx->port[0], &b0);           /* 2 copies */
    send_frame(fx->port[1], &u12);          /* 1 copy */
    expect_frame(fx->port[1], &b0);
    Frame bad;

    g_assert_true(recv_frame(fx->port[2], &bad, WAIT_MS));
    g_assert_cmphex(bad.data[14], ==, b0.data[14] ^ 1);
    expect_frame(fx->port[2], &u12);
    g_autofree char *stopped = ctl(fx, "capture stop");

    g_assert_cmpstr(stopped, ==, "frames 3\n");
    g_autofree char *off = ctl(fx, "capture status");

    g_assert_cmpstr(off, ==, "capture off\n");
    /* after stop nothing more is recorded */
    send_frame(fx->port[0], &b0);
    expect_frame(fx->port[1], &b0);

    g_auto(GStrv) names = tshark_fields(path, "frame.interface_name");

    if (!names) {
        g_test_skip("tshark is not installed: capture contents not checked");
        return;
    }
    g_assert_cmpuint(g_strv_length(names), ==, 3);
    g_assert_cmpstr(names[0], ==, "node1");
    g_assert_cmpstr(names[1], ==, "node2");
    g_assert_cmpstr(names[2], ==, "node2");
    g_auto(GStrv) comments = tshark_fields(path, "frame.comment");

    g_assert_cmpstr(comments[0], ==, "node0>node1");
    g_assert_cmpstr(comments[1], ==, "node0>node2");
    g_assert_cmpstr(comments[2], ==, "node1>node2");
    g_auto(GStrv) crc = tshark_fields(path, "frame.packet_flags_crc_error");

    g_assert_cmpstr(crc[0], ==, "0");
    g_assert_cmpstr(crc[1], ==, "1");
    g_assert_cmpstr(crc[2], ==, "0");
    g_auto(GStrv) dir = tshark_fields(path, "frame.packet_flags_direction");

    g_assert_cmpstr(dir[0], ==, "0x00000001");      /* inbound */
}

static void test_sigterm_with_startup_capture(void)
{
    Fixture fx;
    g_autofree char *cap = NULL;
    const char *extra[] = { "--capture", NULL, NULL };

    fixture_init(&fx);
    cap = path_in(&fx, "start.pcapng");
    extra[1] = cap;
    g_free(start_fabricd(&fx, extra));
    connect_all(&fx);
    learn_all(&fx);                         /* 6 copies */

    g_assert_cmpint(kill(fx.pid, SIGTERM), ==, 0);
    g_assert_true(reap(&fx, WAIT_MS));
    g_assert_true(WIFEXITED(fx.wait_status));
    g_assert_cmpint(WEXITSTATUS(fx.wait_status), ==, 0);
    for (int i = 0; i < NODES; i++) {
        g_autofree char *name = g_strdup_printf("node%d.sock", i);
        g_autofree char *p = path_in(&fx, name);

        g_assert_false(g_file_test(p, G_FILE_TEST_EXISTS));
    }
    g_autofree char *ctl_path = path_in(&fx, "ctl.sock");

    g_assert_false(g_file_test(ctl_path, G_FILE_TEST_EXISTS));

    g_auto(GStrv) names = tshark_fields(cap, "frame.interface_name");

    if (names) {
        g_assert_cmpuint(g_strv_length(names), ==, 6);
    }
    fixture_teardown(&fx, NULL);
}

static void test_fabricctl(Fixture *fx, gconstpointer unused)
{
    g_autofree char *cwd = g_get_current_dir();
    g_autofree char *ctl_bin = g_build_filename(cwd, FABRICCTL, NULL);
    g_autofree char *sock = path_in(fx, "ctl.sock");
    char *out = NULL, *err = NULL;

    g_assert_true(g_file_test(ctl_bin, G_FILE_TEST_IS_EXECUTABLE));
    {
        const char *argv[] = { ctl_bin, "-d", fx->dir, "seed", NULL };

        g_assert_cmpint(run(argv, NULL, &out, &err), ==, 0);
        g_assert_cmpstr(out, ==, "seed 0x000000000000002a\n");
        g_assert_cmpstr(err, ==, "");
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
    }
    {
        /* arguments are joined: the rule arrives as one line */
        const char *argv[] = { ctl_bin, "-s", sock, "fault", "add", "0>1",
                               "drop", "p=0.25", NULL };

        g_assert_cmpint(run(argv, NULL, &out, &err), ==, 0);
        g_assert_cmpstr(out, ==, "rule 1\n");
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
    }
    {
        const char *argv[] = { ctl_bin, "-d", fx->dir, "fault", "add", "0>1",
                               "drop", "p=2", NULL };

        g_assert_cmpint(run(argv, NULL, &out, &err), ==, 1);
        g_assert_cmpstr(out, ==, "");
        g_assert_true(g_str_has_prefix(err, "fabricctl: p=2 is out of range"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
    }
    {
        const char *argv[] = { ctl_bin, "-d", "/nonexistent", "status", NULL };

        g_assert_cmpint(run(argv, NULL, &out, &err), ==, 2);
        g_assert_cmpstr(err, ==, "fabricctl: cannot reach "
                        "/nonexistent/ctl.sock: No such file or directory "
                        "(is the fabric running?)\n");
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
    }
    {
        const char *argv[] = { ctl_bin, "status", NULL };

        g_assert_cmpint(run(argv, NULL, &out, &err), ==, 2);
        g_assert_nonnull(strstr(err, "-s SOCKET or -d DIR"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
    }
    {
        const char *argv[] = { ctl_bin, "--help", NULL };

        g_assert_cmpint(run(argv, NULL, &out, &err), ==, 0);
        g_assert_nonnull(strstr(out, "capture start FILE"));
        g_assert_nonnull(strstr(out, "link down LINK"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
    }
    {
        /* a relative capture file is relative to fabricctl's directory */
        const char *start[] = { ctl_bin, "-d", fx->dir, "capture", "start",
                                "rel.pcapng", NULL };
        const char *stop[] = { ctl_bin, "-d", fx->dir, "capture", "stop",
                               NULL };
        g_autofree char *want = path_in(fx, "rel.pcapng");

        g_assert_cmpint(run(start, fx->dir, &out, &err), ==, 0);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
        g_assert_cmpint(run(stop, NULL, &out, &err), ==, 0);
        g_assert_cmpstr(out, ==, "frames 0\n");
        g_assert_true(g_file_test(want, G_FILE_TEST_IS_REGULAR));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
    }
}

static void test_second_daemon_refused(Fixture *fx, gconstpointer unused)
{
    const char *argv[] = { FABRICD, "--kind", "eth", "--nodes", "3",
                           "--dir", fx->dir, NULL };
    g_autofree char *out = NULL, *err = NULL;

    g_assert_cmpint(run(argv, NULL, &out, &err), ==, 2);
    g_assert_nonnull(strstr(err, "another fabricd is running"));
    /* the first one is unharmed */
    ctl_ok(fx, "status");
}

static void test_bad_arguments(void)
{
    g_autofree char *base = make_short_tmpdir();
    g_autofree char *never = g_build_filename(base, "never", NULL);
    g_autofree char *longdir = g_strnfill(120, 'd');
    g_autofree char *longpath = g_build_filename(base, longdir, NULL);
    static const struct { const char *args[10]; const char *message; } cases[] = {
        { { "--kind", "telegraphos", "--nodes", "2", "--dir", "DIR",
            "--topology", "ring" },
          "--topology does not apply to --kind telegraphos" },
        { { "--kind", "token-ring", "--nodes", "2", "--dir", "DIR" },
          "fabricd: fabric kind 'token-ring' is not implemented yet" },
        { { "--kind", "eth", "--nodes", "0", "--dir", "DIR" },
          "--nodes 0 is out of range" },
        { { "--kind", "eth", "--nodes", "2000", "--dir", "DIR" },
          "out of range" },
        { { "--kind", "eth", "--dir", "DIR" }, "missing --nodes" },
        { { "--kind", "eth", "--nodes", "2" }, "missing --dir" },
        { { "--nodes", "2", "--dir", "DIR" }, "missing --kind" },
        { { "--kind", "eth", "--nodes", "2", "--dir", "DIR", "--seed",
            "12z" }, "bad --seed '12z'" },
        { { "--kind", "eth", "--nodes", "two", "--dir", "DIR" },
          "see fabricd --help" },
        { { "--kind", "eth", "--nodes", "2", "--dir", "DIR", "extra" },
          "unexpected argument 'extra'" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases) + 1; i++) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        const char *message;

        g_ptr_array_add(argv, FABRICD);
        if (i < G_N_ELEMENTS(cases)) {
            for (int a = 0; cases[i].args[a]; a++) {
                const char *arg = cases[i].args[a];

                /* DIR stands for a directory that must not get created */
                g_ptr_array_add(argv, strcmp(arg, "DIR") ? (char *)arg
                                                          : never);
            }
            message = cases[i].message;
        } else {
            const char *args[] = { "--kind", "eth", "--nodes", "2",
                                   "--dir", longpath };

            for (int a = 0; a < 6; a++) {
                g_ptr_array_add(argv, (char *)args[a]);
            }
            message = "use a shorter directory";
        }
        g_ptr_array_add(argv, NULL);
        expect_refused((const char *const *)argv->pdata, message);
    }
    /* nothing was created on the way out */
    g_assert_false(g_file_test(never, G_FILE_TEST_EXISTS));
    g_assert_false(g_file_test(longpath, G_FILE_TEST_EXISTS));
    g_assert_cmpint(g_rmdir(base), ==, 0);
}

#define ADD(name, fn) \
    g_test_add("/fabricd/" name, Fixture, NULL, fixture_setup, fn, \
               fixture_teardown)

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    signal(SIGPIPE, SIG_IGN);
    g_test_add_func("/fabricd/bad-arguments", test_bad_arguments);
    g_test_add_func("/fabricd/banner-and-sockets", test_banner_and_sockets);
    ADD("switching", test_switching);
    ADD("malformed-input", test_malformed);
    ADD("control-robustness", test_control_robustness);
    ADD("reject-second-connection", test_reject_second_connection);
    ADD("fault-drop", test_fault_drop);
    ADD("link-down", test_link_down);
    ADD("delay-and-corrupt", test_delay_and_corrupt);
    ADD("duplicate-and-reorder", test_duplicate_and_reorder);
    g_test_add_func("/fabricd/fault-files", test_fault_files);
    ADD("congestion", test_congestion);
    ADD("capture", test_capture);
    ADD("fabricctl", test_fabricctl);
    ADD("second-daemon-refused", test_second_daemon_refused);
    g_test_add_func("/fabricd/sigterm", test_sigterm_with_startup_capture);
    return g_test_run();
}
