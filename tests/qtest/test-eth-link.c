/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest of -device vcluster-eth-link (qemu-hw/eth-link.c), whose net
 * filter puts a NIC on the eth fabric in lock-step.  Lock-step needs
 * -icount, which -accel qtest does not have: QEMU runs its firmware under
 * TCG, and the test plays fabricd on the filter's chardev (HELLO, SYNC
 * reports and grants, DATA both ways).  The "NIC" is a -netdev stream
 * peer of the filter's hubport that the test also plays, so frames are
 * written and read as the stream framing (4-byte big-endian length).
 */
#include "qtest-client.h"
#include "proto/eth.h"
#include "proto/sync.h"

#include <poll.h>
#include <string.h>
#include <unistd.h>

#define NODE 1
#define STEP_NS 100000ull           /* a grant's step while nothing is due */
#define ROUNDS_MAX 20000

typedef struct Eth {
    QTest *qt;
    FakeFabric *fab;                /* the filter's chardev */
    FakeFabric *nic;                /* the stream netdev: the guest's side */
    char *dir;
    uint64_t reported;              /* the VM's clock at its last report */
    GPtrArray *sent;                /* DATA frames the filter sent */
} Eth;

typedef struct Sent {
    FabricHdr h;
    uint8_t *p;
} Sent;

static void sent_free(gpointer data)
{
    Sent *s = data;

    g_free(s->p);
    g_free(s);
}

static void send_hdr(Eth *e, uint8_t type, uint16_t src, uint64_t deliver,
                     const void *pl, uint32_t len)
{
    FabricHdr h = {
        .kind = FABRIC_KIND_ETH, .type = type, .src = src, .dst = NODE,
        .len = len, .send_time_ns = deliver, .deliver_time_ns = deliver,
    };
    g_autofree uint8_t *buf = g_malloc(FABRIC_HDR_LEN + len);

    fabric_hdr_encode(&h, buf);
    memcpy(buf + FABRIC_HDR_LEN, pl, len);
    ff_send_raw(e->fab, buf, FABRIC_HDR_LEN + len);
}

static void grant(Eth *e, uint64_t g)
{
    send_hdr(e, FABRIC_TYPE_SYNC, FABRIC_NODE_NONE, g, NULL, 0);
}

/* Frames from the filter up to its next SYNC report; DATA is kept. */
static void next_report(Eth *e)
{
    for (;;) {
        FabricHdr h;
        uint8_t *p;

        g_assert_true(ff_recv(e->fab, &h, &p));
        g_assert_cmpuint(h.kind, ==, FABRIC_KIND_ETH);
        g_assert_cmpuint(h.src, ==, NODE);
        if (h.type == FABRIC_TYPE_SYNC) {
            uint64_t next;

            g_assert_true(fabric_sync_report_decode(p, h.len, &next));
            g_assert_cmpuint(h.send_time_ns, >=, e->reported);
            e->reported = h.send_time_ns;
            g_free(p);
            return;
        }
        g_assert_cmpuint(h.type, ==, FABRIC_TYPE_DATA);
        g_assert_cmpuint(h.flags, ==, 0);
        g_assert_cmpuint(h.dst, ==, FABRIC_NODE_NONE);
        Sent *s = g_new(Sent, 1);
        s->h = h;
        s->p = p;
        g_ptr_array_add(e->sent, s);
    }
}

/* Ethernet frames the NIC has been given so far, as "len:first-byte". */
static GString *nic_frames(Eth *e)
{
    GString *out = g_string_new(NULL);
    struct pollfd p = { .fd = e->nic->fd, .events = POLLIN };
    uint8_t be[4], buf[2048];

    while (poll(&p, 1, 0) == 1) {
        uint32_t len;

        g_assert_cmpint(read(e->nic->fd, be, 4), ==, 4);
        len = (uint32_t)be[0] << 24 | be[1] << 16 | be[2] << 8 | be[3];
        g_assert_cmpuint(len, <=, sizeof(buf));
        for (uint32_t got = 0; got < len;) {
            ssize_t n = read(e->nic->fd, buf + got, len - got);

            g_assert_cmpint(n, >, 0);
            got += n;
        }
        g_string_append_printf(out, "%u:%02x ", len, buf[14]);
    }
    return out;
}

static void make_frame(uint8_t *f, size_t len, uint8_t tag)
{
    static const uint8_t dst[6] = { 0x52, 0x54, 0x00, 0x77, 0x00, 0x01 };
    static const uint8_t src[6] = { 0x52, 0x54, 0x00, 0x77, 0x00, 0x00 };

    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x88;
    f[13] = 0xb5;
    for (size_t i = 14; i < len; i++) {
        f[i] = tag + i - 14;
    }
}

/* QEMU with the filter; its HELLO says lock-step, then the first grant. */
static Eth *eth_start(void)
{
    Eth *e = g_new0(Eth, 1);
    FabricHdr h;
    g_autofree uint8_t *p = NULL;
    uint8_t ack[FABRIC_HELLO_ACK_BASE_LEN];
    FabricHelloAck a = { .nodes = 2 };

    e->dir = g_dir_make_tmp("vceth-XXXXXX", NULL);
    e->fab = ff_listen(e->dir, "fabric.sock");
    e->nic = ff_listen(e->dir, "nic.sock");
    e->sent = g_ptr_array_new_with_free_func(sent_free);
    g_autofree char *chr = g_strdup_printf("socket,id=fl,path=%s",
                                           e->fab->path);
    g_autofree char *nic = g_strdup_printf(
        "stream,id=nic,server=off,addr.type=unix,addr.path=%s", e->nic->path);
    g_autofree char *link = g_strdup_printf(
        "vcluster-eth-link,netdev=vc-eth,chardev=fl,node=%d", NODE);
    const char *args[] = {
        "-icount", "shift=3,sleep=off", "-chardev", chr, "-netdev", nic,
        "-netdev", "hubport,id=vc-eth,hubid=0,netdev=nic", "-device", link,
        NULL,
    };

    e->qt = qt_start_accel("tcg", args);
    ff_accept(e->fab);
    ff_accept(e->nic);
    g_assert_true(ff_recv(e->fab, &h, &p));
    g_assert_cmpuint(h.kind, ==, FABRIC_KIND_ETH);
    g_assert_cmpuint(h.type, ==, FABRIC_TYPE_CONTROL);
    g_assert_cmpuint(h.len, ==, FABRIC_HELLO_MAX_LEN);
    g_assert_cmpuint(p[0], ==, FABRIC_CTL_HELLO);
    g_assert_cmpuint(fabric_get_le16(p + 1), ==, NODE);
    g_assert_cmpuint(p[3], ==, FABRIC_HELLO_F_LOCKSTEP);
    next_report(e);
    send_hdr(e, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, e->reported, ack,
             fabric_hello_ack_encode(&a, ack));
    grant(e, e->reported + STEP_NS);
    return e;
}

static void eth_stop(Eth *e)
{
    /* first the fabric: a VM waiting for a grant holds QEMU's big lock */
    ff_close(e->fab);
    qt_quit(e->qt);
    ff_close(e->nic);
    g_ptr_array_free(e->sent, TRUE);
    rmdir(e->dir);
    g_free(e->dir);
    g_free(e);
}

/*
 * The NIC sends a frame: it reaches fabricd stamped with the virtual time
 * (and shows that the stream netdev is connected).
 */
static void nic_sends(Eth *e, uint8_t tag)
{
    uint8_t frame[4 + 100];
    uint64_t before = e->reported;
    Sent *s;

    frame[0] = frame[1] = frame[2] = 0;
    frame[3] = 100;
    make_frame(frame + 4, 100, tag);
    g_ptr_array_set_size(e->sent, 0);
    ff_send_raw(e->nic, frame, sizeof(frame));
    for (int k = 0; k < ROUNDS_MAX && !e->sent->len; k++) {
        next_report(e);
        grant(e, e->reported + STEP_NS);
    }
    g_assert_cmpuint(e->sent->len, ==, 1);
    s = g_ptr_array_index(e->sent, 0);
    g_assert_cmpmem(s->p, s->h.len, frame + 4, 100);
    g_assert_cmpuint(s->h.send_time_ns, >=, before);
    g_assert_cmpuint(s->h.send_time_ns, <=, e->reported);
    g_ptr_array_set_size(e->sent, 0);
}

static void test_send(void)
{
    Eth *e = eth_start();

    nic_sends(e, 0x20);
    nic_sends(e, 0x30);
    /* the hub behind the filter never saw them: nothing came back */
    next_report(e);
    g_autoptr(GString) back = nic_frames(e);
    g_assert_cmpstr(back->str, ==, "");
    eth_stop(e);
}

/*
 * Frames from fabricd reach the NIC at their delivery time, in the order
 * of those times, whatever order they came in: nothing before the VM's
 * clock passes the time, everything once it has.
 */
static void test_deliver(void)
{
    Eth *e = eth_start();
    uint8_t a[60], b[80];
    uint64_t t;

    nic_sends(e, 0x40);
    next_report(e);
    t = e->reported;
    make_frame(a, sizeof(a), 0xa0);
    make_frame(b, sizeof(b), 0xb0);
    /* a is due after b but comes first; both after this grant */
    send_hdr(e, FABRIC_TYPE_DATA, 0, t + 30000, a, sizeof(a));
    send_hdr(e, FABRIC_TYPE_DATA, 0, t + 20000, b, sizeof(b));
    grant(e, t + 10000);
    next_report(e);
    g_assert_cmpuint(e->reported, <, t + 20000);
    g_autoptr(GString) none = nic_frames(e);
    g_assert_cmpstr(none->str, ==, "");

    grant(e, t + 25000);
    next_report(e);
    g_assert_cmpuint(e->reported, >, t + 20000);
    g_assert_cmpuint(e->reported, <, t + 30000);
    g_autoptr(GString) first = nic_frames(e);
    g_assert_cmpstr(first->str, ==, "80:b0 ");

    grant(e, t + 40000);
    next_report(e);
    g_assert_cmpuint(e->reported, >, t + 30000);
    g_autoptr(GString) second = nic_frames(e);
    g_assert_cmpstr(second->str, ==, "60:a0 ");
    g_assert_cmpuint(e->sent->len, ==, 0);
    eth_stop(e);
}

/*
 * Read what the NIC got so far: frames of `len` bytes numbered from *next
 * on (le16 at byte 14).  Returns how many; frames may be missing (dropped)
 * but never out of order.
 */
static unsigned nic_take_numbered(Eth *e, uint32_t len, unsigned *next)
{
    struct pollfd p = { .fd = e->nic->fd, .events = POLLIN };
    uint8_t be[4], buf[2048];
    unsigned n = 0;

    while (poll(&p, 1, 0) == 1) {
        unsigned seq;

        g_assert_cmpint(read(e->nic->fd, be, 4), ==, 4);
        g_assert_cmpuint((uint32_t)be[0] << 24 | be[1] << 16 | be[2] << 8 |
                         be[3], ==, len);
        for (uint32_t got = 0; got < len;) {
            ssize_t r = read(e->nic->fd, buf + got, len - got);

            g_assert_cmpint(r, >, 0);
            got += r;
        }
        seq = fabric_get_le16(buf + 14);
        g_assert_cmpuint(seq, >=, *next);
        *next = seq + 1;
        n++;
    }
    return n;
}

/*
 * `count` frames of `len` bytes for the NIC, due at once, while the test
 * reads nothing of the NIC's side for some rounds; then it reads until
 * nothing more comes.  Returns how many the NIC got.
 */
static unsigned nic_flood(Eth *e, unsigned count, uint32_t len)
{
    g_autofree uint8_t *f = g_malloc(len);
    unsigned next = 0, got = 0, quiet = 0;
    uint64_t t;

    nic_sends(e, 0x50);
    next_report(e);
    t = e->reported;
    make_frame(f, len, 0);
    for (unsigned i = 0; i < count; i++) {
        fabric_put_le16(f + 14, i);
        send_hdr(e, FABRIC_TYPE_DATA, 0, t + 1000 + i, f, len);
    }
    grant(e, t + STEP_NS);
    for (int k = 0; k < 20; k++) {
        next_report(e);
        grant(e, e->reported + STEP_NS);
    }
    while (quiet < 50) {
        unsigned n;

        next_report(e);
        n = nic_take_numbered(e, len, &next);
        got += n;
        quiet = n ? 0 : quiet + 1;
        grant(e, e->reported + STEP_NS);
        if (!n) {
            g_usleep(1000);
        }
    }
    return got;
}

/*
 * A NIC that takes no frames (here a stream whose reader stopped, in the
 * guest a ring without buffers) loses none: they wait in the link, in
 * order, and go in once it takes frames again.
 */
static void test_nic_full(void)
{
    Eth *e = eth_start();

    g_assert_cmpuint(nic_flood(e, 2000, 1514), ==, 2000);
    eth_stop(e);
}

/* ... up to 4 MiB waiting: beyond, the oldest are dropped, not more kept. */
static void test_nic_full_bound(void)
{
    Eth *e = eth_start();
    unsigned got = nic_flood(e, 5000, 1514);

    g_test_message("the NIC got %u of 5000 frames of 1514 bytes", got);
    g_assert_cmpuint(got, <, 5000);
    g_assert_cmpuint(got, >=, (4u << 20) / 1514);
    eth_stop(e);
}

/* Without -icount the filter cannot keep its VM in step: QEMU says so. */
static void test_needs_icount(void)
{
    g_autofree char *dir = g_dir_make_tmp("vceth-XXXXXX", NULL);
    g_autofree char *sock = g_build_filename(dir, "fabric.sock", NULL);
    FakeFabric *ff = ff_listen(dir, "fabric.sock");
    g_autofree char *chr = g_strdup_printf("socket,id=fl,path=%s", sock);
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    const char *argv[] = {
        qemu ? qemu : "build/qemu/qemu-system-x86_64", "-machine", "none",
        "-nodefaults", "-display", "none", "-chardev", chr, "-netdev",
        "hubport,id=vc-eth,hubid=0", "-device",
        "vcluster-eth-link,netdev=vc-eth,chardev=fl,node=0", NULL,
    };
    g_autofree char *out = NULL, *err = NULL;
    int status;

    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, 0, NULL, NULL,
                               &out, &err, &status, NULL));
    g_assert_false(g_spawn_check_wait_status(status, NULL));
    if (!strstr(err, "it needs instruction counting")) {
        g_test_message("stderr: %s", err);
    }
    g_assert_nonnull(strstr(err, "vcluster-eth-link keeps its VM in "
                            "lock-step: it needs instruction counting "
                            "(-icount shift=N,sleep=off)"));
    ff_close(ff);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/eth-link/send", test_send);
    g_test_add_func("/eth-link/deliver-at-its-time", test_deliver);
    g_test_add_func("/eth-link/nic-full-holds-frames", test_nic_full);
    g_test_add_func("/eth-link/nic-full-bound", test_nic_full_bound);
    g_test_add_func("/eth-link/needs-icount", test_needs_icount);
    return g_test_run();
}
