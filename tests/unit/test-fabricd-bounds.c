/*
 * fabricd against hostile peers (issue 13): on every kind, a client that
 * writes as fast as it can and never reads, and one that floods another
 * node that never reads.  fabricd's memory must stay under the documented
 * bound (docs/fabricd.md "Bounds") and fabricctl must still get answers.
 * Also the control socket's limits, its permissions and the capture path
 * rule.  Run from the repository root.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "fabricd-harness.h"
#include "fabricd-frames.h"
#include "fabricd-flood.h"
#pragma GCC diagnostic pop

#include "control.h"
#include "fault.h"
#include "proto/eth.h"
#include "proto/ps1.h"
#include "proto/telegraphos.h"

/* How long each flood runs: long enough to fill every bound many times. */
#define FLOOD_MS 1500

static const char *const eth3[] = { NULL };
static const char *const ps1_3[] = { "--kind", "ps1", NULL };
static const char *const myri3[] = { "--kind", "myrinet", NULL };
static const char *const tgr3[] = { "--kind", "telegraphos", NULL };
static const char *const idle300[] = { "--ctl-idle-ms", "300", NULL };

typedef struct Flood {
    Stream s[NODES];
    int n;
    int reader;             /* a port read as it goes (QEMU-like), or -1 */
    uint64_t read_bytes;
    uint64_t rss_max;
} Flood;

static Stream *flood_stream(Flood *fl, int fd)
{
    Stream *s = &fl->s[fl->n++];

    stream_init(s, fd);
    return s;
}

/* Push every stream for FLOOD_MS; watch fabricd's memory meanwhile. */
static void flood_run(Fixture *fx, Flood *fl)
{
    gint64 deadline = deadline_after(FLOOD_MS);
    gint64 next_sample = 0;

    while (ms_left(deadline)) {
        struct pollfd pfd[NODES + 1];
        int n = 0;

        for (int i = 0; i < fl->n; i++) {
            pfd[n++] = (struct pollfd){ .fd = fl->s[i].fd, .events = POLLOUT };
            stream_push(&fl->s[i]);
        }
        if (fl->reader >= 0) {
            fl->read_bytes += drain_now(fl->reader);
            pfd[n++] = (struct pollfd){ .fd = fl->reader, .events = POLLIN };
        }
        if (g_get_monotonic_time() >= next_sample) {
            fl->rss_max = MAX(fl->rss_max, fabricd_rss(fx));
            next_sample = g_get_monotonic_time() + 50 * 1000;
        }
        poll(pfd, n, 10);
    }
    fl->rss_max = MAX(fl->rss_max, fabricd_rss(fx));
}

/* The flood is over: fabricd is within its bound and answers. */
static void flood_check(Fixture *fx, Flood *fl, uint64_t before)
{
    uint64_t bound = rss_bound(fx, before);

    g_test_message("fabricd VmRSS: %" G_GUINT64_FORMAT " KiB before, max %"
                   G_GUINT64_FORMAT " KiB, bound %" G_GUINT64_FORMAT " KiB",
                   before / 1024, fl->rss_max / 1024, bound / 1024);
    for (int i = 0; i < fl->n; i++) {
        g_test_message("stream %d wrote %" G_GUINT64_FORMAT " bytes", i,
                       fl->s[i].written);
        stream_clear(&fl->s[i]);
    }
    g_assert_cmpuint(fl->rss_max, <=, bound);
    fabricctl_answers(fx);
}

static void hdr_hello(int fd, uint8_t kind, unsigned id)
{
    hdr_hello_as(fd, kind, id);
}

/* ---- eth ---- */

/* Minimum-size broadcasts to ports that read nothing: bookkeeping counts. */
static void test_eth_flood(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    Frame tiny = make_frame(mac_bcast, mac[0], 1, FABRIC_ETH_MIN_FRAME);
    uint8_t be[4] = { 0, 0, 0, FABRIC_ETH_MIN_FRAME };
    uint64_t before;
    Stream *s;

    connect_all(fx);
    before = fabricd_rss(fx);
    s = flood_stream(&fl, fx->port[0]);
    stream_add(s, be, 4);
    stream_add(s, tiny.data, tiny.len);
    flood_run(fx, &fl);
    g_assert_cmpuint(counter(fx, "link 0>1", "congested"), >, 0);
    flood_check(fx, &fl, before);
}

/* Node 0 floods node 1 (learned), which reads nothing. */
static void test_eth_unicast(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    Frame to1 = make_frame(mac[1], mac[0], 2, 60);
    Frame learn = make_frame(mac_bcast, mac[1], 3, 60);
    uint8_t be[4] = { 0, 0, 0, 60 };
    uint64_t before;
    Stream *s;

    connect_all(fx);
    send_frame(fx->port[1], &learn);
    wait_port_rx(fx, 1, 1);
    before = fabricd_rss(fx);
    s = flood_stream(&fl, fx->port[0]);
    stream_add(s, be, 4);
    stream_add(s, to1.data, to1.len);
    flood_run(fx, &fl);
    g_assert_cmpuint(counter(fx, "link 0>1", "congested"), >, 0);
    g_assert_cmpuint(counter(fx, "link 0>2", "frames"), ==, 0);
    flood_check(fx, &fl, before);
}

/* ---- ps1 ---- */

/*
 * HELLO after HELLO, never reading: its HELLO_ACKs (fabricd's own frames)
 * fill the port's bound and the reserve; then the peer is cut off.
 */
static void test_ps1_hello_flood(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    uint8_t pl[3] = { FABRIC_CTL_HELLO, 0, 0 };
    uint64_t before;
    Stream *s;

    connect_all(fx);
    before = fabricd_rss(fx);
    s = flood_stream(&fl, fx->port[0]);
    stream_add_hdr(s, FABRIC_KIND_PS1, FABRIC_TYPE_CONTROL, 0,
                   FABRIC_NODE_NONE, pl, sizeof(pl));
    flood_run(fx, &fl);
    g_assert_cmpuint(counter(fx, "port 0", "overflows"), ==, 1);
    wait_counter(fx, "port 0", "connected", 0);
    flood_check(fx, &fl, before);
}

/* DATA to node 1, which reads nothing, without waiting for credit. */
static void test_ps1_data_flood(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    uint32_t words[4] = { 1, 2, 3, 4 };
    uint8_t pl[FABRIC_PS1_DATA_LEN(4)];
    size_t len = fabric_ps1_data_encode(fabric_ps1_header_word(1, 4), words,
                                        pl);
    uint64_t before;
    Stream *s;

    connect_all(fx);
    hdr_hello(fx->port[0], FABRIC_KIND_PS1, 0);
    hdr_hello(fx->port[1], FABRIC_KIND_PS1, 1);
    before = fabricd_rss(fx);
    s = flood_stream(&fl, fx->port[0]);
    stream_add_hdr(s, FABRIC_KIND_PS1, FABRIC_TYPE_DATA, 0, FABRIC_NODE_NONE,
                   pl, len);
    flood_run(fx, &fl);
    g_assert_cmpuint(counter(fx, "port 0", "malformed"), >, 0);
    flood_check(fx, &fl, before);
}

/* ---- myrinet ---- */

static void myri_data(Stream *s, uint8_t route)
{
    uint8_t pl[1 + 8 + FABRIC_MYRI_CRC_LEN] = { route, 0x01, 2, 3, 4 };

    fabric_put_le32(pl + 9, fabric_crc32(pl + 1, 8));
    stream_add_hdr(s, FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, FABRIC_F_ROUTED,
                   FABRIC_NODE_NONE, pl, sizeof(pl));
}

/* Loopback packets to itself, never read. */
static void test_myri_loopback(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    uint64_t before;

    connect_all(fx);
    hdr_hello(fx->port[0], FABRIC_KIND_MYRINET, 0);
    before = fabricd_rss(fx);
    myri_data(flood_stream(&fl, fx->port[0]), 0x80);
    flood_run(fx, &fl);
    g_assert_cmpuint(counter(fx, "link 0>0", "congested"), >, 0);
    flood_check(fx, &fl, before);
}

/* Node 0 floods node 1 (route 81), which reads nothing. */
static void test_myri_unicast(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    uint64_t before;

    connect_all(fx);
    hdr_hello(fx->port[0], FABRIC_KIND_MYRINET, 0);
    hdr_hello(fx->port[1], FABRIC_KIND_MYRINET, 1);
    before = fabricd_rss(fx);
    myri_data(flood_stream(&fl, fx->port[0]), 0x81);
    flood_run(fx, &fl);
    g_assert_cmpuint(counter(fx, "link 0>1", "congested"), >, 0);
    flood_check(fx, &fl, before);
}

/* ---- telegraphos ---- */

static void tgr_op(Stream *s, uint8_t op, uint16_t dst, const void *body,
                   size_t body_len)
{
    uint8_t pl[FABRIC_TGR_HDR_LEN + 4096 + 2];
    FabricTgrHdr t = { .op = op, .size = 0, .epoch = 1, .tag = 9, .eidx = 1 };

    g_assert_cmpuint(body_len, <=, sizeof(pl) - FABRIC_TGR_HDR_LEN);
    fabric_tgr_hdr_encode(&t, pl);
    memcpy(pl + FABRIC_TGR_HDR_LEN, body, body_len);
    stream_add_hdr(s, FABRIC_KIND_TELEGRAPHOS, FABRIC_TYPE_DATA, 0, dst, pl,
                   FABRIC_TGR_HDR_LEN + body_len);
}

/*
 * Finding 3: READ_REQs to a node that is not linked, never reading: the
 * NACK UNREACHABLE answers pile up for the sender, which is paused.
 */
static void test_tgr_nack_flood(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    uint8_t len[2] = { 8, 0 };
    uint64_t before;

    connect_all(fx);
    hdr_hello(fx->port[0], FABRIC_KIND_TELEGRAPHOS, 0);
    before = fabricd_rss(fx);
    tgr_op(flood_stream(&fl, fx->port[0]), FABRIC_TGR_READ_REQ, 2, len, 2);
    flood_run(fx, &fl);
    g_assert_cmpuint(counter(fx, "node 0", "paused"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 0", "held_bytes"), >, 1024 * 1024);
    g_assert_cmpuint(counter(fx, "port 0", "connected"), ==, 1);
    flood_check(fx, &fl, before);
}

/*
 * HELLO after HELLO from node 0 (each a restart): PEER_RESET to node 1,
 * which reads nothing.  Node 0 waits for node 1 like any sender.
 */
static void test_tgr_reset_flood(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    uint8_t pl[3] = { FABRIC_CTL_HELLO, 0, 0 };
    uint64_t before;
    Stream *s;

    connect_all(fx);
    hdr_hello(fx->port[1], FABRIC_KIND_TELEGRAPHOS, 1);
    before = fabricd_rss(fx);
    s = flood_stream(&fl, fx->port[0]);
    stream_add_hdr(s, FABRIC_KIND_TELEGRAPHOS, FABRIC_TYPE_CONTROL, 0,
                   FABRIC_NODE_NONE, pl, sizeof(pl));
    flood_run(fx, &fl);
    g_assert_cmpuint(counter(fx, "node 0", "paused"), ==, 1);
    g_assert_cmpuint(counter(fx, "port 1", "overflows"), ==, 0);
    g_assert_cmpuint(counter(fx, "port 1", "connected"), ==, 1);
    flood_check(fx, &fl, before);
}

/*
 * Finding 2: node 0 floods READ_REQs to node 1 and never reads.  Node 1
 * behaves like the QEMU of the issue: it reads every request at once and
 * answers with 4 KiB READ_REPs as fast as it can.  Once node 0's queue is
 * over the mark fabricd stops reading node 0 too, so node 1 gets only a
 * bounded number of requests (instead of millions).
 */
static void test_tgr_request_flood(Fixture *fx, gconstpointer unused)
{
    Flood fl = { .reader = -1 };
    uint8_t len[2] = { 0, 16 };     /* le16 4096 */
    g_autofree uint8_t *rep = g_malloc0(2 + 4096);
    uint64_t before;

    connect_all(fx);
    hdr_hello(fx->port[0], FABRIC_KIND_TELEGRAPHOS, 0);
    hdr_hello(fx->port[1], FABRIC_KIND_TELEGRAPHOS, 1);
    before = fabricd_rss(fx);
    tgr_op(flood_stream(&fl, fx->port[0]), FABRIC_TGR_READ_REQ, 1, len, 2);
    tgr_op(flood_stream(&fl, fx->port[1]), FABRIC_TGR_READ_REP, 0, rep,
           2 + 4096);
    fl.reader = fx->port[1];
    flood_run(fx, &fl);
    g_test_message("node 1 read %" G_GUINT64_FORMAT " bytes of requests",
                   fl.read_bytes);
    g_assert_cmpuint(counter(fx, "node 0", "paused"), ==, 1);
    g_assert_cmpuint(counter(fx, "node 1", "paused"), ==, 1);
    /* a few socket buffers' worth, not a stream of millions */
    g_assert_cmpuint(fl.read_bytes, <, 8 * 1024 * 1024);
    g_assert_cmpuint(counter(fx, "port 0", "overflows"), ==, 0);
    flood_check(fx, &fl, before);
}

/* ---- the control socket ---- */

/* A client that says nothing is closed after the idle timeout. */
static void test_ctl_idle(Fixture *fx, gconstpointer unused)
{
    g_autofree char *path = path_in(fx, "ctl.sock");
    int silent = connect_unix(path);
    char buf[128];
    ssize_t n;

    g_assert_cmpint(silent, >=, 0);
    g_assert_cmpint(read_exact(silent, buf, 1, deadline_after(WAIT_MS)), ==,
                    1);
    n = read(silent, buf + 1, sizeof(buf) - 2);
    buf[1 + MAX(n, 0)] = '\0';
    g_assert_true(g_str_has_prefix(buf, "ERR closed: idle"));
    g_assert_cmpint(read_exact(silent, buf, 1, deadline_after(WAIT_MS)), ==,
                    -1);
    close(silent);
    ctl_reconnect(fx);
    g_assert_cmpuint(counter(fx, "control", "idle_closed"), >=, 1);
}

/* Silent connections in every slot do not lock fabricctl out. */
static void test_ctl_lockout(Fixture *fx, gconstpointer unused)
{
    g_autofree char *path = path_in(fx, "ctl.sock");
    /* with the fixture's own, every slot */
    int hog[CONTROL_MAX_CLIENTS - 1];

    for (int i = 0; i < CONTROL_MAX_CLIENTS - 1; i++) {
        hog[i] = connect_unix(path);
        g_assert_cmpint(hog[i], >=, 0);
    }
    g_usleep((CONTROL_EVICT_MS + 200) * 1000);
    fabricctl_answers(fx);
    for (int i = 0; i < CONTROL_MAX_CLIENTS - 1; i++) {
        close(hog[i]);
    }
    ctl_reconnect(fx);
    g_assert_cmpuint(counter(fx, "control", "evicted"), >=, 1);
    g_assert_cmpuint(counter(fx, "control", "refused"), ==, 0);
}

/* `capture start` never overwrites a file nor follows a symlink. */
static void test_capture_path(Fixture *fx, gconstpointer unused)
{
    g_autofree char *file = path_in(fx, "precious");
    g_autofree char *link = path_in(fx, "link");
    g_autofree char *dangling = path_in(fx, "dangling");
    g_autofree char *absent = path_in(fx, "absent");
    g_autofree char *fresh = path_in(fx, "fresh.pcapng");
    g_autofree char *cmd = NULL;
    g_autofree char *text = NULL;
    struct stat st;

    g_assert_true(g_file_set_contents(file, "keep me", -1, NULL));
    g_assert_cmpint(symlink(file, link), ==, 0);
    g_assert_cmpint(symlink(absent, dangling), ==, 0);

    cmd = g_strdup_printf("capture start %s", file);
    ctl_err(fx, cmd, "exists");
    g_free(cmd);
    cmd = g_strdup_printf("capture start %s", link);
    ctl_err(fx, cmd, "exists");
    g_free(cmd);
    cmd = g_strdup_printf("capture start %s", dangling);
    ctl_err(fx, cmd, "exists");
    g_assert_true(g_file_get_contents(file, &text, NULL, NULL));
    g_assert_cmpstr(text, ==, "keep me");
    g_assert_false(g_file_test(absent, G_FILE_TEST_EXISTS));

    /* a new file is fine, mode 0600 */
    g_free(cmd);
    cmd = g_strdup_printf("capture start %s", fresh);
    ctl_ok(fx, cmd);
    g_free(ctl(fx, "capture stop"));
    g_assert_cmpint(stat(fresh, &st), ==, 0);
    g_assert_cmpint(st.st_mode & 0777, ==, 0600);
    g_unlink(link);
    g_unlink(dangling);
}

/* The number of fault rules is bounded too. */
static void test_fault_rule_limit(Fixture *fx, gconstpointer unused)
{
    for (unsigned i = 0; i < FAULT_MAX_RULES; i++) {
        ctl_ok(fx, "fault add 0>1 delay ns=1");
    }
    ctl_err(fx, "fault add 0>1 delay ns=1", "too many fault rules (limit "
            "1024)");
    ctl_ok(fx, "fault del 1");
    ctl_ok(fx, "fault add 0>1 delay ns=1");
    fabricctl_answers(fx);
}

/* Sockets are 0600 even when fabricd starts with umask 0. */
static void test_socket_mode(void)
{
    Fixture fx;
    mode_t old = umask(0);
    struct stat st;

    fixture_init(&fx);
    g_free(start_fabricd(&fx, NULL));
    umask(old);
    for (int i = 0; i <= NODES; i++) {
        g_autofree char *name = i < NODES ? g_strdup_printf("node%d.sock", i)
                                          : g_strdup("ctl.sock");
        g_autofree char *path = path_in(&fx, name);

        g_assert_cmpint(lstat(path, &st), ==, 0);
        g_assert_true(S_ISSOCK(st.st_mode));
        g_assert_cmpint(st.st_mode & 0777, ==, 0600);
    }
    fixture_teardown(&fx, NULL);
}

static void test_bad_idle(void)
{
    const char *argv[] = { FABRICD, "--kind", "eth", "--nodes", "2", "--dir",
                           "/tmp/unused-fabricd-dir", "--ctl-idle-ms", "5",
                           NULL };

    expect_refused(argv, "--ctl-idle-ms 5 is out of range; use 100..3600000");
}

#define ADD(name, args, fn) \
    g_test_add("/fabricd-bounds/" name, Fixture, args, fixture_setup, fn, \
               fixture_teardown)

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    signal(SIGPIPE, SIG_IGN);
    ADD("eth-flood", eth3, test_eth_flood);
    ADD("eth-unicast", eth3, test_eth_unicast);
    ADD("ps1-hello-flood", ps1_3, test_ps1_hello_flood);
    ADD("ps1-data-flood", ps1_3, test_ps1_data_flood);
    ADD("myrinet-loopback", myri3, test_myri_loopback);
    ADD("myrinet-unicast", myri3, test_myri_unicast);
    ADD("telegraphos-nack-flood", tgr3, test_tgr_nack_flood);
    ADD("telegraphos-reset-flood", tgr3, test_tgr_reset_flood);
    ADD("telegraphos-request-flood", tgr3, test_tgr_request_flood);
    ADD("control-idle", idle300, test_ctl_idle);
    ADD("control-lockout", eth3, test_ctl_lockout);
    ADD("capture-path", eth3, test_capture_path);
    ADD("fault-rule-limit", eth3, test_fault_rule_limit);
    g_test_add_func("/fabricd-bounds/socket-mode", test_socket_mode);
    g_test_add_func("/fabricd-bounds/bad-idle", test_bad_idle);
    return g_test_run();
}
