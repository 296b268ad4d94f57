/*
 * A seeded fuzzer for fabricd: on every kind it connects to the node
 * sockets and the control socket and sends malformed and hostile input
 * (random headers, wrong kinds, truncated payloads, huge lengths, random
 * and overlong control lines, peers that read slowly or not at all).
 * fabricd must stay alive, answer `status`, stay under its memory bound,
 * and exit 0 on SIGTERM (under ASan and UBSan: without a report).
 *
 * It runs the daemon build/asan/bin/fabricd when that exists (make check
 * builds it), else build/bin/fabricd; FUZZ_FABRICD names another.
 * FUZZ_OPS (default 200000) operations are shared by the four kinds;
 * FUZZ_SEED (default fixed) seeds them, each kind from the seed and its
 * name.  Every case prints its seed, and a failure its operation, so a run
 * can be replayed: FUZZ_SEED=0x... FUZZ_OPS=... test-fabricd-fuzz -p
 * /fabricd-fuzz/<kind>.  fabricd's side depends on timing too, so a replay
 * is close, not always exact.  `make fuzz-fabricd` runs 10^6 per kind.
 *
 * /fabricd-fuzz/lockstep/<kind> fuzzes fabricd --lockstep (see "lock-step"
 * below), with 1/LS_OPS_SHARE of a kind's operations.
 * /fabricd-fuzz/found/<name> are minimal reproducers of what it found.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>

static const char *fuzz_fabricd(void);
#define FABRICD fuzz_fabricd()

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "fabricd-harness.h"
#include "fabricd-frames.h"
#include "fabricd-flood.h"
#pragma GCC diagnostic pop

#include <linux/sockios.h>
#include <stdarg.h>
#include <sys/ioctl.h>

#include "control.h"
#include "prng.h"
#include "lockstep.h"
#include "proto/eth.h"
#include "proto/ps1.h"
#include "proto/sync.h"
#include "proto/telegraphos.h"

#define ASAN_FABRICD    "build/asan/bin/fabricd"
#define DEFAULT_SEED    0x1300f00dull
#define DEFAULT_OPS     200000
#define CTL_CONNS       3
#define CHECK_EVERY     2000
/* Bytes a connection may have unsent before the fuzzer stops adding. */
#define PENDING_MAX     (256 * 1024)
/* ASan's shadow memory and quarantine come on top of fabricd's bound. */
#define ASAN_SLACK      (96u * 1024 * 1024)
#define MAX_CAPTURES    8
#define SETTLE_MS       10
/* A lock-step case gets 1/LS_OPS_SHARE of a free-running case's ops. */
#define LS_OPS_SHARE    32

static const char *fuzz_fabricd(void)
{
    const char *env = g_getenv("FUZZ_FABRICD");

    if (env && *env) {
        return env;
    }
    return g_file_test(ASAN_FABRICD, G_FILE_TEST_IS_EXECUTABLE) ?
           ASAN_FABRICD : "build/bin/fabricd";
}

typedef struct Conn {
    int fd;                 /* -1: not connected */
    GByteArray *out;        /* written by us, not yet taken by the socket */
} Conn;

struct Fuzz {
    Fixture *fx;
    const char *kind;
    uint8_t kind_id;        /* 0: eth */
    Prng rng;
    uint64_t seed, ops, op;
    Conn node[NODES];
    Conn ctl[CTL_CONNS];
    unsigned deaf;          /* mask of nodes that read nothing for now */
    unsigned captures;
    uint64_t rss_max, bound;
    uint64_t sent;          /* bytes the node sockets took */
    GString *trace;         /* lock-step: the last actions, for a failure */
};

/* An assertion that says how to replay the case. */
#define FUZZ_CHECK(fz, cond)                                                \
    do {                                                                    \
        if (!(cond)) {                                                      \
            g_test_message("fuzz failure: kind=%s FUZZ_SEED=0x%" G_GINT64_MODIFIER \
                           "x FUZZ_OPS=%" G_GUINT64_FORMAT " at op %"       \
                           G_GUINT64_FORMAT ": %s", (fz)->kind, fuzz_seed(), \
                           fuzz_total_ops(), (fz)->op, #cond);              \
            log_tail(fz);                                                   \
            g_assert_true(cond);                                            \
        }                                                                   \
    } while (0)

static uint64_t fuzz_seed(void);
typedef struct Fuzz Fuzz;
static void log_tail(Fuzz *fz);

static uint64_t fuzz_total_ops(void)
{
    const char *env = g_getenv("FUZZ_OPS");

    return env && *env ? g_ascii_strtoull(env, NULL, 0) : DEFAULT_OPS;
}

static uint64_t fuzz_seed(void)
{
    const char *env = g_getenv("FUZZ_SEED");

    return env && *env ? g_ascii_strtoull(env, NULL, 0) : DEFAULT_SEED;
}

static uint64_t rnd(Fuzz *fz, uint64_t bound)
{
    return prng_below(&fz->rng, bound);
}

static bool chance(Fuzz *fz, unsigned percent)
{
    return rnd(fz, 100) < percent;
}

static void fill_random(Fuzz *fz, uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = prng_next(&fz->rng);
    }
}

/* ---- connections ---- */

static uint64_t *sent_counter;      /* the running case's Fuzz.sent */

static void conn_close(Conn *c)
{
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    g_byte_array_set_size(c->out, 0);
}

static void conn_open(Fuzz *fz, Conn *c, const char *name)
{
    g_autofree char *path = path_in(fz->fx, name);

    conn_close(c);
    c->fd = connect_unix(path);
    if (c->fd >= 0) {
        fcntl(c->fd, F_SETFL, O_NONBLOCK);
    }
}

static void conn_flush(Conn *c)
{
    while (c->fd >= 0 && c->out->len) {
        ssize_t n = send(c->fd, c->out->data, c->out->len,
                         MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        if (n <= 0) {
            conn_close(c);      /* fabricd closed it: fine */
            return;
        }
        g_byte_array_remove_range(c->out, 0, n);
        *sent_counter += n;
    }
}

/* Queue bytes for the peer; a backed-up connection drops whole writes. */
static void conn_write(Conn *c, const void *data, size_t len)
{
    if (c->fd < 0 || c->out->len > PENDING_MAX) {
        return;
    }
    g_byte_array_append(c->out, data, len);
    conn_flush(c);
}

static void conn_drain(Conn *c)
{
    if (c->fd >= 0) {
        drain_now(c->fd);
    }
}

static void send_hdr(Conn *c, const FabricHdr *h, const uint8_t *pl,
                     size_t sent_len);

static Conn *node_conn(Fuzz *fz, unsigned i)
{
    Conn *c = &fz->node[i];

    if (c->fd < 0) {
        g_autofree char *name = g_strdup_printf("node%u.sock", i);
        uint8_t hello[FABRIC_HELLO_LEN] = { FABRIC_CTL_HELLO };
        FabricHdr h = {
            .kind = fz->kind_id, .type = FABRIC_TYPE_CONTROL,
            .src = FABRIC_NODE_NONE, .dst = FABRIC_NODE_NONE,
            .len = sizeof(hello),
        };

        conn_open(fz, c, name);
        /* mostly a device's first words, so frames get past link setup */
        if (fz->kind_id && chance(fz, 90)) {
            fabric_put_le16(hello + 1, i);
            send_hdr(c, &h, hello, sizeof(hello));
        }
    }
    return c;
}

/* ---- node input ---- */

static void send_hdr(Conn *c, const FabricHdr *h, const uint8_t *pl,
                     size_t sent_len)
{
    uint8_t hdr[FABRIC_HDR_LEN];

    fabric_hdr_encode(h, hdr);
    conn_write(c, hdr, sizeof(hdr));
    conn_write(c, pl, sent_len);
}

static uint16_t random_node(Fuzz *fz)
{
    static const uint16_t special[] = { FABRIC_NODE_ALL, FABRIC_NODE_NONE,
                                        NODES, 1023, 1024, 0x8000 };

    return chance(fz, 80) ? rnd(fz, NODES)
                          : special[rnd(fz, G_N_ELEMENTS(special))];
}

/* A payload the kind might take, often slightly wrong. */
static size_t kind_payload(Fuzz *fz, uint8_t type, uint8_t *pl, size_t cap)
{
    size_t len = 0;

    if (type == FABRIC_TYPE_CONTROL) {
        static const uint8_t ops[] = {
            FABRIC_CTL_HELLO, FABRIC_CTL_HELLO, FABRIC_CTL_HELLO_ACK,
            FABRIC_CTL_REJECT, FABRIC_CTL_ROUTES, FABRIC_CTL_TGR_JOIN,
            FABRIC_CTL_TGR_LEAVE, FABRIC_CTL_TGR_PEER_RESET, 0, 255,
        };

        pl[0] = ops[rnd(fz, G_N_ELEMENTS(ops))];
        if (pl[0] == FABRIC_CTL_ROUTES) {
            unsigned count = chance(fz, 70) ? NODES : rnd(fz, 300);

            fabric_put_le16(pl + 1, random_node(fz));
            fabric_put_le16(pl + 3, count);
            for (unsigned i = 0; i < count && 5 + i < cap; i++) {
                pl[5 + i] = rnd(fz, 5);
            }
            return MIN(cap, 5 + count);
        }
        fabric_put_le16(pl + 1, chance(fz, 70) ? rnd(fz, NODES + 1)
                                               : rnd(fz, 70));
        return chance(fz, 85) ? 3 : rnd(fz, 8);
    }
    if (type != FABRIC_TYPE_DATA) {
        len = rnd(fz, 16);
        fill_random(fz, pl, len);
        return len;
    }
    switch (fz->kind_id) {
    case FABRIC_KIND_PS1: {
        uint32_t words[FABRIC_PS1_MAX_WORDS];
        unsigned count = 1 + rnd(fz, FABRIC_PS1_MAX_WORDS);

        fill_random(fz, (uint8_t *)words, sizeof(words));
        len = fabric_ps1_data_encode(
            fabric_ps1_header_word(random_node(fz), count), words, pl);
        break;
    }
    case FABRIC_KIND_MYRINET: {
        unsigned route = chance(fz, 80) ? 1 : rnd(fz, 27);
        size_t packet = chance(fz, 90) ? 1 + rnd(fz, 200)
                                       : rnd(fz, FABRIC_MYRI_MAX_PACKET + 8);

        for (unsigned i = 0; i < route; i++) {
            pl[len++] = chance(fz, 80) ? 0x80 | rnd(fz, 4)
                                       : 0x80 | rnd(fz, 128);
        }
        packet = MIN(packet, cap - len - FABRIC_MYRI_CRC_LEN);
        fill_random(fz, pl + len, packet);
        if (packet) {
            pl[len] &= 0x7f;
        }
        fabric_put_le32(pl + len + packet, fabric_crc32(pl + len, packet));
        len += packet + FABRIC_MYRI_CRC_LEN;
        break;
    }
    case FABRIC_KIND_TELEGRAPHOS: {
        static const size_t bodies[] = { 0, 1, 2, 4, 8, 16, 24, 4096, 4098,
                                         4099, 6000 };
        FabricTgrHdr t = {
            .op = rnd(fz, 10), .size = 1u << rnd(fz, 5),
            .epoch = rnd(fz, 3), .seq = prng_next(&fz->rng),
            .tag = rnd(fz, 4), .eidx = chance(fz, 50) ? rnd(fz, 70) << 16
                                                     : prng_next(&fz->rng),
            .gen = rnd(fz, 3), .off = rnd(fz, 5000),
        };
        size_t body = chance(fz, 70) ? rnd(fz, 40)
                                     : bodies[rnd(fz, G_N_ELEMENTS(bodies))];

        fabric_tgr_hdr_encode(&t, pl);
        body = MIN(body, cap - FABRIC_TGR_HDR_LEN);
        fill_random(fz, pl + FABRIC_TGR_HDR_LEN, body);
        len = FABRIC_TGR_HDR_LEN + body;
        break;
    }
    }
    return len;
}

/* One header-framed frame: mostly plausible, often subtly wrong. */
static void fuzz_hdr_frame(Fuzz *fz, unsigned node)
{
    static uint8_t pl[FABRIC_MAX_PAYLOAD + 64];
    static const uint8_t others[] = {
        FABRIC_TYPE_CREDIT, FABRIC_TYPE_BARRIER, FABRIC_TYPE_SYNC, 0, 6, 200,
    };
    Conn *c = node_conn(fz, node);
    FabricHdr h = {
        .kind = chance(fz, 85) ? fz->kind_id : rnd(fz, 7),
        .type = chance(fz, 70) ? FABRIC_TYPE_DATA :
                chance(fz, 70) ? FABRIC_TYPE_CONTROL
                               : others[rnd(fz, G_N_ELEMENTS(others))],
        .src = random_node(fz), .dst = random_node(fz),
        .send_time_ns = prng_next(&fz->rng),
    };
    size_t len = kind_payload(fz, h.type, pl, sizeof(pl) - 64);
    size_t sent = len;

    if (h.type == FABRIC_TYPE_CONTROL && pl[0] == FABRIC_CTL_HELLO &&
        chance(fz, 90)) {
        fabric_put_le16(pl + 1, node);      /* the right id: get linked */
    }
    h.flags = fz->kind_id == FABRIC_KIND_MYRINET && h.type == FABRIC_TYPE_DATA
              ? FABRIC_F_ROUTED : 0;
    if (h.flags && chance(fz, 90)) {
        h.dst = FABRIC_NODE_NONE;           /* a routed frame names nobody */
    }
    if (chance(fz, 5)) {
        h.flags = rnd(fz, 256);
    }
    if (chance(fz, 10)) {                   /* a few bits flipped */
        for (unsigned i = rnd(fz, 4) + 1; i && len; i--) {
            pl[rnd(fz, len)] ^= 1u << rnd(fz, 8);
        }
    }
    h.len = len;
    if (rnd(fz, 1000) < 5) {                /* truncated: the stream slips */
        sent = rnd(fz, len + 1);
    }
    if (rnd(fz, 1000) < 3) {                /* a length past the limit */
        h.len = FABRIC_MAX_PAYLOAD + 1 + rnd(fz, 1u << 30);
        sent = MIN(len, 64);
    }
    send_hdr(c, &h, pl, sent);
    if (rnd(fz, 1000) < 2) {                /* bad magic or version */
        uint8_t junk[FABRIC_HDR_LEN];

        fabric_hdr_encode(&h, junk);
        junk[rnd(fz, 5)] ^= 0x5a;
        conn_write(c, junk, sizeof(junk));
    }
}

static void fuzz_eth_frame(Fuzz *fz, unsigned node)
{
    static uint8_t frame[FABRIC_ETH_MAX_FRAME + 16];
    static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
    const uint8_t *macs[] = { mac[0], mac[1], mac[2], mac_bcast,
                              mac_nobody, mcast };
    Conn *c = node_conn(fz, node);
    uint32_t len = chance(fz, 90) ? 14 + rnd(fz, 1501) : rnd(fz, 14);
    uint8_t be[4];

    if (rnd(fz, 1000) < 3) {
        len = FABRIC_ETH_MAX_FRAME + 1 + rnd(fz, 1000000);   /* fatal */
    } else if (chance(fz, 1)) {
        len = FABRIC_ETH_MAX_FRAME;
    }
    be[0] = len >> 24;
    be[1] = len >> 16;
    be[2] = len >> 8;
    be[3] = len;
    conn_write(c, be, 4);
    if (len > FABRIC_ETH_MAX_FRAME) {
        return;
    }
    fill_random(fz, frame, len);
    if (len >= 12) {
        memcpy(frame, macs[rnd(fz, G_N_ELEMENTS(macs))], 6);
        memcpy(frame + 6, chance(fz, 80) ? mac[node]
                                         : macs[rnd(fz, G_N_ELEMENTS(macs))],
               6);
    }
    conn_write(c, frame, rnd(fz, 1000) < 5 ? rnd(fz, len + 1) : len);
}

/* ---- control input ---- */

static const char *random_link(Fuzz *fz)
{
    static const char *const links[] = {
        "0>1", "1>0", "1-2", "0-2", "*", "*>2", "0>*", "*-1", "node1-node0",
        "2>2", "5>1", "x", "", "0>", ">1", "*>*", "0>1>2", "2|0,1",
        "0>|1,2", "0|*", "1|1", "|", "0,0|1", "1,2>|*",
    };

    return links[rnd(fz, G_N_ELEMENTS(links))];
}

static char *random_rule(Fuzz *fz)
{
    const char *link = random_link(fz);

    switch (rnd(fz, 12)) {
    case 0:
        return g_strdup_printf("%s drop p=0.%02u", link, (unsigned)rnd(fz, 100));
    case 1:
        return g_strdup_printf("%s drop nth=%u", link, (unsigned)rnd(fz, 5));
    case 2:
        return g_strdup_printf("%s corrupt p=0.%u bits=%u", link,
                               (unsigned)rnd(fz, 10), (unsigned)rnd(fz, 70));
    case 3:
        return g_strdup_printf("%s corrupt p=1 offsets=%u,%u", link,
                               (unsigned)rnd(fz, 600), (unsigned)rnd(fz, 9));
    case 4:
        return g_strdup_printf("%s delay ms=%u", link, (unsigned)rnd(fz, 20));
    case 5:
        return g_strdup_printf("%s down", link);
    case 6:
        return g_strdup_printf("%s drop ge p=0.%u r=0.%u h=0.%u", link,
                               (unsigned)rnd(fz, 10), (unsigned)rnd(fz, 10),
                               (unsigned)rnd(fz, 10));
    case 7:
        return g_strdup_printf("%s duplicate p=0.%u", link,
                               (unsigned)rnd(fz, 10));
    case 8:
        return g_strdup_printf("%s reorder p=0.%u us=%u", link,
                               (unsigned)rnd(fz, 10), (unsigned)rnd(fz, 5000));
    case 9:
        return g_strdup_printf("%s delay ms=%u jitter=%uus", link,
                               (unsigned)rnd(fz, 20), (unsigned)rnd(fz, 3000));
    case 10:
        return g_strdup_printf("%s down at=%ums for=%ums", link,
                               (unsigned)rnd(fz, 3000), (unsigned)rnd(fz, 500));
    }
    return g_strdup_printf("%s %s p=%s", link,
                           chance(fz, 50) ? "drop" : "frobnicate",
                           chance(fz, 50) ? "2" : "-0.5");
}

static char *random_command(Fuzz *fz)
{
    static const char *const plain[] = {
        "status", "counters", "table", "seed", "help", "fault list",
        "fault clear", "capture stop", "capture status", "capture",
        "link", "fault", "", " ", "status extra", "\r", "fault del",
        "fault del 99999999999999999999", "link up", "capture start",
    };

    switch (rnd(fz, 8)) {
    case 0: {
        g_autofree char *rule = random_rule(fz);

        return g_strdup_printf("fault add %s", rule);
    }
    case 1:
        return g_strdup_printf("fault del %u", (unsigned)rnd(fz, 40));
    case 2:
        return g_strdup_printf("link %s %s", chance(fz, 50) ? "down" : "up",
                               random_link(fz));
    case 3:
        if (fz->captures < MAX_CAPTURES && chance(fz, 30)) {
            g_autofree char *name = g_strdup_printf("fuzz%u.pcapng",
                                                    fz->captures++);
            g_autofree char *path = path_in(fz->fx, name);

            return g_strdup_printf("capture start %s", path);
        }
        if (chance(fz, 50)) {
            return g_strdup("capture start /proc/self/mem");
        } else {
            /* exists: refused (a relative name is fabricd's cwd's) */
            g_autofree char *log = path_in(fz->fx, "fabricd.log");

            return g_strdup_printf("capture start %s", log);
        }
    }
    return g_strdup(plain[rnd(fz, G_N_ELEMENTS(plain))]);
}

static void fuzz_control(Fuzz *fz)
{
    Conn *c = &fz->ctl[rnd(fz, CTL_CONNS)];
    g_autofree char *line = NULL;

    if (c->fd < 0 || chance(fz, 2)) {
        conn_open(fz, c, "ctl.sock");
    }
    switch (rnd(fz, 20)) {
    case 0: {                               /* overlong */
        size_t len = CONTROL_MAX_LINE - 2 + rnd(fz, 3 * CONTROL_MAX_LINE);
        g_autofree char *big = g_malloc(len);

        memset(big, 'a' + rnd(fz, 26), len);
        conn_write(c, big, len);
        break;
    }
    case 1: {                               /* random bytes, NULs included */
        uint8_t junk[64];
        size_t len = rnd(fz, sizeof(junk));

        fill_random(fz, junk, len);
        conn_write(c, junk, len);
        break;
    }
    case 2:                                 /* a last line, then EOF */
        line = random_command(fz);
        conn_write(c, line, strlen(line));
        shutdown(c->fd, SHUT_WR);
        conn_drain(c);
        conn_close(c);
        return;
    default:
        line = random_command(fz);
        conn_write(c, line, strlen(line));
        conn_write(c, "\n", 1);
    }
    if (chance(fz, 60)) {                   /* some clients never read */
        conn_drain(c);
    }
}

/* ---- checks ---- */

/* The end of fabricd's log, for a failure report. */
static void log_tail(Fuzz *fz)
{
    g_autofree char *path = path_in(fz->fx, "fabricd.log");
    g_autofree char *text = NULL;
    size_t len = 0;

    if (g_file_get_contents(path, &text, &len, NULL)) {
        g_test_message("fabricd log (end):\n%s",
                       text + (len > 4000 ? len - 4000 : 0));
    }
    if (fz->trace) {
        g_test_message("last actions:\n%s", fz->trace->str);
    }
}

/* `status` on a fresh connection answers, within the deadline. */
static bool status_answers(Fuzz *fz)
{
    g_autofree char *path = path_in(fz->fx, "ctl.sock");
    g_autoptr(GString) got = g_string_new(NULL);
    gint64 deadline = deadline_after(10000);
    int fd = connect_unix(path);
    char buf[4096];

    if (fd < 0) {
        return false;
    }
    write_all(fd, "status\n", 7);
    while (!g_str_has_suffix(got->str, "\nOK\n")) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t n;

        if (poll(&pfd, 1, ms_left(deadline)) <= 0) {
            break;
        }
        n = read(fd, buf, sizeof(buf));
        if (n <= 0) {
            break;
        }
        g_string_append_len(got, buf, n);
    }
    close(fd);
    if (!g_str_has_prefix(got->str, "fabric: kind=") ||
        !g_str_has_suffix(got->str, "\nOK\n")) {
        g_test_message("status answered: '%s'", got->str);
        return false;
    }
    return true;
}

static void fuzz_check(Fuzz *fz)
{
    uint64_t rss;

    FUZZ_CHECK(fz, !reap(fz->fx, 0));        /* still running */
    FUZZ_CHECK(fz, status_answers(fz));
    rss = fabricd_rss(fz->fx);
    fz->rss_max = MAX(fz->rss_max, rss);
    FUZZ_CHECK(fz, rss <= fz->bound);
}

/* ---- one kind ---- */

/* Bytes written to the node sockets that fabricd has not read yet. */
static int unread(Fuzz *fz)
{
    int sum = 0;

    for (unsigned i = 0; i < NODES; i++) {
        int q = 0;

        conn_flush(&fz->node[i]);
        if (fz->node[i].fd >= 0 && ioctl(fz->node[i].fd, SIOCOUTQ, &q) == 0) {
            sum += q + fz->node[i].out->len;
        }
    }
    return sum;
}

/*
 * Give fabricd up to SETTLE_MS to read what is queued (the fuzzer is
 * faster), so that frames reach it before their connection goes away.
 */
static void settle(Fuzz *fz)
{
    gint64 deadline = deadline_after(SETTLE_MS);

    while (unread(fz) && ms_left(deadline)) {
        g_usleep(200);
    }
    for (unsigned i = 0; i < NODES; i++) {
        conn_flush(&fz->node[i]);
        if (!(fz->deaf & 1u << i)) {
            conn_drain(&fz->node[i]);
        }
    }
}

/* A port counter summed over the ports. */
static uint64_t total(Fixture *fx, const char *key)
{
    uint64_t sum = 0;

    ctl_reconnect(fx);
    for (unsigned i = 0; i < NODES; i++) {
        g_autofree char *record = g_strdup_printf("port %u", i);

        sum += counter(fx, record, key);
    }
    return sum;
}

static void fuzz_kind(Fixture *fx, gconstpointer opaque)
{
    const char *kind = opaque;
    Fuzz fz = { .fx = fx, .kind = kind };
    uint64_t seed = fuzz_seed() ^ g_str_hash(kind);
    gint64 start = g_get_monotonic_time();

    fz.kind_id = !strcmp(kind, "ps1") ? FABRIC_KIND_PS1 :
                 !strcmp(kind, "myrinet") ? FABRIC_KIND_MYRINET :
                 !strcmp(kind, "telegraphos") ? FABRIC_KIND_TELEGRAPHOS : 0;
    fz.seed = seed;
    fz.ops = MAX(fuzz_total_ops() / 4, 1);
    prng_seed(&fz.rng, seed);
    sent_counter = &fz.sent;
    g_test_message("fuzz kind=%s daemon=%s FUZZ_SEED=0x%" G_GINT64_MODIFIER
                   "x (kind seed 0x%" G_GINT64_MODIFIER "x) ops=%"
                   G_GUINT64_FORMAT, kind, FABRICD, fuzz_seed(), seed,
                   fz.ops);
    for (unsigned i = 0; i < NODES; i++) {
        fz.node[i] = (Conn){ .fd = -1, .out = g_byte_array_new() };
    }
    for (unsigned i = 0; i < CTL_CONNS; i++) {
        fz.ctl[i] = (Conn){ .fd = -1, .out = g_byte_array_new() };
    }
    fz.bound = rss_bound(fx, fabricd_rss(fx)) +
               (strstr(FABRICD, "asan") ? ASAN_SLACK : 0);

    for (fz.op = 0; fz.op < fz.ops; fz.op++) {
        unsigned node = rnd(&fz, NODES);
        unsigned what = rnd(&fz, 100);

        if (what < 70) {
            if (fz.kind_id) {
                fuzz_hdr_frame(&fz, node);
            } else {
                fuzz_eth_frame(&fz, node);
            }
        } else if (what < 80) {
            fuzz_control(&fz);
        } else if (what < 81) {
            uint8_t junk[200];
            size_t len = rnd(&fz, sizeof(junk));

            fill_random(&fz, junk, len);
            conn_write(node_conn(&fz, node), junk, len);
        } else if (what < 82) {
            conn_close(&fz.node[node]);     /* hang up, maybe mid-frame */
        } else if (what < 86) {
            fz.deaf = rnd(&fz, 1u << NODES);    /* who reads changes */
        } else {
            for (unsigned i = 0; i < NODES; i++) {
                conn_flush(&fz.node[i]);
                if (!(fz.deaf & 1u << i)) {
                    conn_drain(&fz.node[i]);
                }
            }
        }
        if (fz.op % 64 == 63) {
            settle(&fz);
        }
        if (fz.op % CHECK_EVERY == CHECK_EVERY - 1) {
            fuzz_check(&fz);
        }
    }
    fuzz_check(&fz);
    g_test_message("fuzz kind=%s: %" G_GUINT64_FORMAT " ops, %"
                   G_GUINT64_FORMAT " bytes in %.1f s; fabricd took %"
                   G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT
                   " malformed, %" G_GUINT64_FORMAT " connects; VmRSS max %"
                   G_GUINT64_FORMAT " KiB (bound %" G_GUINT64_FORMAT " KiB)",
                   kind, fz.ops, fz.sent,
                   (g_get_monotonic_time() - start) / 1e6,
                   total(fx, "rx_frames"), total(fx, "malformed"),
                   total(fx, "connects"), fz.rss_max / 1024,
                   fz.bound / 1024);
    for (unsigned i = 0; i < NODES; i++) {
        conn_close(&fz.node[i]);
        g_byte_array_unref(fz.node[i].out);
    }
    for (unsigned i = 0; i < CTL_CONNS; i++) {
        conn_close(&fz.ctl[i]);
        g_byte_array_unref(fz.ctl[i].out);
    }
    /* the teardown checks that fabricd exits 0 on SIGTERM (no report) */
}

/* ---- lock-step (fabricd --lockstep) ---- */

/*
 * Each episode starts fabricd --lockstep with random options, links three
 * fake devices and plays rounds (docs/lockstep.md): DATA stamped inside
 * the round, then SYNC reports with random next events.  Now and then one
 * node breaks the protocol (a report past its grant, before its last one,
 * twice or of the wrong length; a HELLO without the lock-step flag, with
 * unknown flags or another node's id; a round over LOCKSTEP_ROUND_IN_MAX),
 * stamps DATA outside its round, reports late, leaves mid-round, sends
 * junk, or connects again after leaving.  A node that left stays out of
 * its run, so every episode starts a new fabricd.  Checked: every node
 * that keeps the protocol stays linked and gets the same grant, later than
 * the last; what comes before a grant is due in [last grant, grant), in
 * delivery order, and DATA no sooner than its send time plus the
 * look-ahead; a node that breaks the protocol is cut off at once (or at
 * the round's end for a HELLO) while the others go on; a node that left
 * is refused; no grant comes while a node has not reported; memory stays
 * bounded; fabricd exits 0 on SIGTERM.
 */
#define LS_WAIT_MS      20000   /* ASan on two busy cores: generous */
#define LS_QUIET_MS     20      /* how long "no grant yet" is watched */
#define LS_ROUNDS_MAX   60      /* rounds of a typical episode */

typedef enum LsRole {
    LS_GONE,        /* not connected */
    LS_KEEPS,       /* keeps the protocol: must get every grant */
    LS_DOOMED,      /* sent a HELLO fabricd refuses at the round's end */
} LsRole;

typedef struct LsNode {
    int fd;
    LsRole role;
    uint64_t reported;  /* time of its last report */
    uint64_t got;       /* the latest delivery time it was given */
    size_t round_cost;  /* its input this round, as fabricd counts it */
} LsNode;

typedef struct Ls {
    Fuzz fz;
    LsNode n[NODES];
    uint64_t grant;         /* the fabric's grant, 0 before the first */
    uint64_t lookahead;
    uint64_t episodes, rounds, cut, left, refused, frames, data, late;
} Ls;

static uint64_t ls_sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void ls_note(Ls *ls, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* What the fuzzer did lately, printed with a failure. */
static void ls_note(Ls *ls, const char *fmt, ...)
{
    GString *t = ls->fz.trace;
    va_list ap;

    g_string_append_printf(t, "op %" G_GUINT64_FORMAT " grant %"
                           G_GUINT64_FORMAT ": ", ls->fz.op, ls->grant);
    va_start(ap, fmt);
    g_string_append_vprintf(t, fmt, ap);
    va_end(ap);
    g_string_append_c(t, '\n');
    if (t->len > 8000) {
        const char *nl = strchr(t->str + t->len - 6000, '\n');

        g_string_erase(t, 0, nl ? nl + 1 - t->str : 0);
    }
}

static void ls_close(Ls *ls, unsigned i)
{
    if (ls->n[i].fd >= 0) {
        close(ls->n[i].fd);
    }
    ls->n[i].fd = -1;
    ls->n[i].role = LS_GONE;
}

/* All of `buf` to node i's socket; false once fabricd closed it. */
static bool ls_write(Ls *ls, unsigned i, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    gint64 deadline = deadline_after(LS_WAIT_MS);

    while (len) {
        struct pollfd pfd = { .fd = ls->n[i].fd, .events = POLLOUT };
        bool fabricd_reads = poll(&pfd, 1, ms_left(deadline)) > 0;
        ssize_t put;

        FUZZ_CHECK(&ls->fz, fabricd_reads);
        put = send(ls->n[i].fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (put < 0 && (errno == EAGAIN || errno == EINTR)) {
            continue;
        }
        if (put <= 0) {
            return false;
        }
        p += put;
        len -= put;
        ls->fz.sent += put;
    }
    return true;
}

/* One header frame from node i; counts toward its round unless a SYNC. */
static size_t ls_frame(Ls *ls, uint8_t *buf, uint8_t type, uint8_t flags,
                       uint16_t dst, size_t len, uint64_t send_ns)
{
    FabricHdr h = {
        .kind = ls->fz.kind_id, .type = type, .flags = flags,
        .src = FABRIC_NODE_NONE, .dst = dst, .len = len,
        .send_time_ns = send_ns,
    };

    fabric_hdr_encode(&h, buf);
    return FABRIC_HDR_LEN + len;
}

static void ls_send(Ls *ls, unsigned i, uint8_t type, uint8_t flags,
                    uint16_t dst, const uint8_t *pl, size_t len,
                    uint64_t send_ns)
{
    static uint8_t buf[FABRIC_HDR_LEN + FABRIC_MAX_PAYLOAD];

    memcpy(buf + FABRIC_HDR_LEN, pl, len);
    ls_frame(ls, buf, type, flags, dst, len, send_ns);
    if (type != FABRIC_TYPE_SYNC) {
        ls->n[i].round_cost += FABRIC_HDR_LEN + len + FABRIC_FRAME_COST;
    }
    ls->fz.op++;
    ls_write(ls, i, buf, FABRIC_HDR_LEN + len);
}

static void ls_sync(Ls *ls, unsigned i, uint64_t t, uint64_t next,
                    size_t len)
{
    uint8_t pl[16] = { 0 };

    fabric_sync_report_encode(next, pl);
    ls_note(ls, "node%u SYNC t=%" G_GUINT64_FORMAT " next=%"
            G_GUINT64_FORMAT " len=%zu", i, t, next, len);
    ls_send(ls, i, FABRIC_TYPE_SYNC, 0, FABRIC_NODE_NONE, pl, len, t);
}

static void ls_hello(Ls *ls, unsigned i, uint16_t id, uint8_t flags)
{
    uint8_t pl[FABRIC_HELLO_MAX_LEN];
    size_t len = fabric_hello_encode(id, flags, pl);

    ls_note(ls, "node%u HELLO id=%u flags=0x%x", i, id, flags);
    ls_send(ls, i, FABRIC_TYPE_CONTROL, 0, FABRIC_NODE_NONE, pl, len,
            ls->n[i].reported);
}

/* A DATA payload of the kind, often slightly wrong; sets flags and dst. */
static size_t ls_payload(Ls *ls, unsigned i, uint8_t *pl, size_t cap,
                         bool clean, uint8_t *flags, uint16_t *dst)
{
    Fuzz *fz = &ls->fz;
    size_t len;

    if (fz->kind_id == FABRIC_KIND_ETH) {
        const uint8_t *macs[] = { mac[0], mac[1], mac[2], mac_bcast,
                                  mac_nobody };

        len = chance(fz, 90) ? 60 + rnd(fz, 1455) :
              chance(fz, 70) ? FABRIC_ETH_MIN_FRAME +
                               rnd(fz, FABRIC_ETH_MAX_FRAME - 13)
                             : rnd(fz, FABRIC_ETH_MIN_FRAME);
        len = MIN(len, cap);
        fill_random(fz, pl, len);
        if (len >= 12) {
            memcpy(pl, macs[rnd(fz, G_N_ELEMENTS(macs))], 6);
            memcpy(pl + 6, chance(fz, 90) ? mac[i]
                                          : macs[rnd(fz, G_N_ELEMENTS(macs))],
                   6);
        }
        *flags = 0;
        *dst = FABRIC_NODE_NONE;
    } else {
        len = kind_payload(fz, FABRIC_TYPE_DATA, pl, cap);
        *flags = fz->kind_id == FABRIC_KIND_MYRINET ? FABRIC_F_ROUTED : 0;
        *dst = *flags ? FABRIC_NODE_NONE : random_node(fz);
    }
    /* a header fabricd refuses at once: skipped, no breach, not counted */
    if (!clean && chance(fz, 3)) {
        *flags ^= 1u << rnd(fz, 8);
        *dst = random_node(fz);
    }
    return len;
}

/* A send time in node i's round, [its last report, the grant]. */
static uint64_t ls_in_round(Ls *ls, unsigned i)
{
    uint64_t lo = ls->n[i].reported, span = ls->grant - lo;

    return span == UINT64_MAX ? prng_next(&ls->fz.rng)
                              : lo + rnd(&ls->fz, span + 1);
}

/*
 * A send time outside node i's round (before its last report, past its
 * grant, at the end of time), for which fabricd cuts it off; false if
 * the round leaves no such time.
 */
static bool ls_out_of_round(Ls *ls, unsigned i, uint64_t *t)
{
    Fuzz *fz = &ls->fz;
    uint64_t lo = ls->n[i].reported;
    bool early = lo && (ls->grant == UINT64_MAX || chance(fz, 50));

    if (early) {
        *t = chance(fz, 50) ? lo - 1 : rnd(fz, lo);
    } else if (ls->grant < UINT64_MAX) {
        static const uint64_t past[] = { 1, 2, 1000, UINT64_MAX };
        uint64_t by = chance(fz, 50) ? past[rnd(fz, G_N_ELEMENTS(past))]
                                     : 1 + rnd(fz, 1000000000);

        *t = ls_sat_add(ls->grant, by);
    } else {
        return false;
    }
    return true;
}

/*
 * A DATA frame in node i's round, often with a header fabricd skips; or
 * a clean one at `*stamp` if one is given.
 */
static void ls_data_at(Ls *ls, unsigned i, const uint64_t *stamp)
{
    static uint8_t pl[FABRIC_MAX_PAYLOAD];
    uint8_t flags;
    uint16_t dst;
    size_t len = ls_payload(ls, i, pl, sizeof(pl), stamp, &flags, &dst);
    uint64_t t = stamp ? *stamp : ls_in_round(ls, i);

    ls_note(ls, "node%u DATA len=%zu flags=0x%x dst=%u t=%" G_GUINT64_FORMAT,
            i, len, flags, dst, t);
    ls_send(ls, i, FABRIC_TYPE_DATA, flags, dst, pl, len, t);
}

static void ls_data(Ls *ls, unsigned i)
{
    ls_data_at(ls, i, NULL);
}

/*
 * The next frame for node i within `ms`: 1, 0 on timeout, -1 at the end
 * of the connection.  fabricd's frames must be well-formed, of its kind.
 */
static int ls_recv(Ls *ls, unsigned i, FabricHdr *h, uint8_t *pl, int ms)
{
    gint64 deadline = deadline_after(ms);
    uint8_t hdr[FABRIC_HDR_LEN];
    int r = read_exact(ls->n[i].fd, hdr, sizeof(hdr), deadline);
    bool whole;

    if (r != 1) {
        return r;
    }
    FUZZ_CHECK(&ls->fz, fabric_hdr_decode(hdr, h) == FABRIC_HDR_OK);
    FUZZ_CHECK(&ls->fz, h->kind == ls->fz.kind_id);
    r = read_exact(ls->n[i].fd, pl, h->len, deadline);
    whole = r == 1;
    FUZZ_CHECK(&ls->fz, whole);
    ls->frames++;
    return 1;
}

static bool ls_is_reject(const FabricHdr *h, const uint8_t *pl)
{
    return h->type == FABRIC_TYPE_CONTROL && h->len &&
           pl[0] == FABRIC_CTL_REJECT;
}

/*
 * fabricd must cut node i off now: a REJECT first if `reject`, nothing
 * else (everything due for it came before its last grant), then the end.
 */
static void ls_expect_cut(Ls *ls, unsigned i, bool reject)
{
    static uint8_t pl[FABRIC_MAX_PAYLOAD];
    bool rejected = false;
    FabricHdr h;
    int r;

    while ((r = ls_recv(ls, i, &h, pl, LS_WAIT_MS)) == 1) {
        bool only_reject = ls_is_reject(&h, pl);

        ls_note(ls, "node%u got type %u while cut off", i, h.type);
        FUZZ_CHECK(&ls->fz, only_reject);
        rejected = true;
    }
    FUZZ_CHECK(&ls->fz, r == -1);       /* cut off, not left hanging */
    FUZZ_CHECK(&ls->fz, rejected == reject);
    ls_note(ls, "node%u cut off", i);
    ls_close(ls, i);
    ls->cut++;
}

/* A node that left connects again: fabricd must close it at once. */
static void ls_come_back(Ls *ls, unsigned i)
{
    static uint8_t pl[FABRIC_MAX_PAYLOAD];
    g_autofree char *name = g_strdup_printf("node%u.sock", i);
    g_autofree char *path = path_in(ls->fz.fx, name);
    FabricHdr h;
    int r;

    ls->n[i].fd = connect_unix(path);
    FUZZ_CHECK(&ls->fz, ls->n[i].fd >= 0);
    fcntl(ls->n[i].fd, F_SETFL, O_NONBLOCK);
    ls_note(ls, "node%u connects again", i);
    if (chance(&ls->fz, 50)) {
        ls_hello(ls, i, i, FABRIC_HELLO_F_LOCKSTEP);
        if (chance(&ls->fz, 50)) {
            ls_sync(ls, i, ls->grant, ls->grant, FABRIC_SYNC_REPORT_LEN);
        }
    }
    r = ls_recv(ls, i, &h, pl, LS_WAIT_MS);
    FUZZ_CHECK(&ls->fz, r == -1);       /* refused, nothing said */
    ls_close(ls, i);
    ls->refused++;
}

/* A round's worth of DATA, fit just under LOCKSTEP_ROUND_IN_MAX or over. */
static void ls_fill_round(Ls *ls, unsigned i, bool over)
{
    static uint8_t pl[FABRIC_MAX_PAYLOAD];
    LsNode *n = &ls->n[i];
    uint8_t flags;
    uint16_t dst;
    size_t len = ls_payload(ls, i, pl, sizeof(pl), true, &flags, &dst);
    size_t cost = FABRIC_HDR_LEN + len + FABRIC_FRAME_COST;
    size_t count = (LOCKSTEP_ROUND_IN_MAX - MIN(n->round_cost,
                                                LOCKSTEP_ROUND_IN_MAX)) / cost;
    g_autoptr(GByteArray) all = g_byte_array_new();
    uint8_t frame[FABRIC_HDR_LEN + FABRIC_MAX_PAYLOAD];
    uint64_t t = ls_in_round(ls, i);

    count += over;
    memcpy(frame + FABRIC_HDR_LEN, pl, len);
    ls_frame(ls, frame, FABRIC_TYPE_DATA, flags, dst, len, t);
    for (size_t k = 0; k < count; k++) {
        g_byte_array_append(all, frame, FABRIC_HDR_LEN + len);
    }
    ls_note(ls, "node%u sends %zu DATA of %zu bytes (cost %zu + %zu, bound "
            "%u)", i, count, len, n->round_cost, count * cost,
            LOCKSTEP_ROUND_IN_MAX);
    n->round_cost += count * cost;
    ls->fz.op++;
    ls_write(ls, i, all->data, all->len);
}

enum {
    LS_BAD_LATE, LS_BAD_EARLY, LS_BAD_TWICE, LS_BAD_STAMP, LS_BAD_LEN,
    LS_BAD_FREE_HELLO,
    LS_BAD_FLAGS, LS_BAD_ID, LS_BAD_OVERSIZE, LS_FULL_ROUND, LS_LEAVE,
    LS_JUNK, LS_ACTIONS,
};

static unsigned ls_live(const Ls *ls)
{
    unsigned live = 0;

    for (unsigned i = 0; i < NODES; i++) {
        live += ls->n[i].role != LS_GONE;
    }
    return live;
}

/*
 * Node v does something unusual before anyone reports, so that the round
 * cannot end before fabricd has seen it.
 */
static void ls_odd(Ls *ls, unsigned v)
{
    Fuzz *fz = &ls->fz;
    LsNode *n = &ls->n[v];
    unsigned what = rnd(fz, LS_ACTIONS);

    /* a round of 16 MiB costs the most host time: less often */
    if ((what == LS_BAD_OVERSIZE || what == LS_FULL_ROUND) &&
        chance(fz, 75)) {
        what = LS_BAD_LEN;
    }
    if (what == LS_BAD_EARLY && !n->reported) {
        what = LS_BAD_LATE;
    }
    /* a second report with nobody else left would just be the next one */
    if (what == LS_BAD_TWICE && ls_live(ls) < 2) {
        what = LS_BAD_LEN;
    }
    switch (what) {
    case LS_BAD_LATE: {
        static const uint64_t past[] = { 1, 2, 1000, UINT64_MAX };
        uint64_t by = chance(fz, 50) ? past[rnd(fz, G_N_ELEMENTS(past))]
                                     : 1 + rnd(fz, 1000000000);

        if (ls->grant == UINT64_MAX) {
            what = LS_BAD_LEN;      /* nothing is past the end of time */
            break;
        }
        ls_sync(ls, v, ls_sat_add(ls->grant, by), ls->grant,
                FABRIC_SYNC_REPORT_LEN);
        ls_expect_cut(ls, v, false);
        return;
    }
    case LS_BAD_EARLY:
        ls_sync(ls, v, rnd(fz, n->reported), n->reported,
                FABRIC_SYNC_REPORT_LEN);
        ls_expect_cut(ls, v, false);
        return;
    case LS_BAD_STAMP: {
        uint64_t t;

        if (!ls_out_of_round(ls, v, &t)) {
            break;                      /* a round of all time */
        }
        ls_data_at(ls, v, &t);
        ls_expect_cut(ls, v, false);
        return;
    }
    case LS_BAD_TWICE:
        ls_sync(ls, v, ls->grant, ls->grant, FABRIC_SYNC_REPORT_LEN);
        ls_sync(ls, v, ls->grant, ls->grant, FABRIC_SYNC_REPORT_LEN);
        ls_expect_cut(ls, v, false);
        return;
    case LS_BAD_FREE_HELLO:
        ls_hello(ls, v, v, 0);
        ls_expect_cut(ls, v, true);
        return;
    case LS_BAD_FLAGS:
        ls_hello(ls, v, v, 0x2 << rnd(fz, 7));
        ls_expect_cut(ls, v, true);
        return;
    case LS_BAD_ID:
        /* queued like any lock-step frame: refused at the round's end */
        ls_hello(ls, v, chance(fz, 80) ? (v + 1 + rnd(fz, NODES - 1)) % NODES
                                       : 0x8000,
                 FABRIC_HELLO_F_LOCKSTEP | (chance(fz, 30) ? 0x80 : 0));
        n->role = LS_DOOMED;
        return;
    case LS_BAD_OVERSIZE:
        ls_fill_round(ls, v, true);
        ls_expect_cut(ls, v, false);
        return;
    case LS_FULL_ROUND:
        ls_fill_round(ls, v, false);
        return;
    case LS_LEAVE:
        for (unsigned k = rnd(fz, 3); k; k--) {
            ls_data(ls, v);
        }
        if (chance(fz, 30)) {               /* hang up mid-frame */
            uint8_t hdr[FABRIC_HDR_LEN];

            ls_frame(ls, hdr, FABRIC_TYPE_DATA, 0, FABRIC_NODE_NONE, 100,
                     ls->grant);
            ls_write(ls, v, hdr, rnd(fz, sizeof(hdr) + 1));
        }
        ls_note(ls, "node%u leaves", v);
        ls_close(ls, v);
        ls->left++;
        return;
    case LS_JUNK: {
        uint8_t junk[256];
        size_t len = 1 + rnd(fz, sizeof(junk));

        fill_random(fz, junk, len);
        ls_note(ls, "node%u sends %zu random bytes and leaves", v, len);
        ls_write(ls, v, junk, len);
        ls_close(ls, v);
        ls->left++;
        return;
    }
    }
    {
        static const size_t lens[] = { 0, 1, 7, 9, 16 };

        ls_sync(ls, v, ls->grant, ls->grant,
                lens[rnd(fz, G_N_ELEMENTS(lens))]);
        ls_expect_cut(ls, v, false);
    }
}

static void ls_report(Ls *ls, unsigned i)
{
    Fuzz *fz = &ls->fz;
    uint64_t t = chance(fz, 80) ? ls->grant : ls_in_round(ls, i);
    uint64_t next;

    switch (rnd(fz, 8)) {
    case 0:
        next = ls_sat_add(t, rnd(fz, 1000000));
        break;
    case 1:
        next = ls_sat_add(t, rnd(fz, 10000000000ull));
        break;
    case 2:
        next = rnd(fz, 100) ? t : FABRIC_SYNC_IDLE_NONE;
        break;
    case 3:
        next = t ? rnd(fz, t) : 0;      /* fabricd takes t */
        break;
    default:
        next = t;                       /* busy */
    }
    ls_sync(ls, i, t, next, FABRIC_SYNC_REPORT_LEN);
    ls->n[i].reported = t;
}

/* A node that keeps the protocol: some DATA, maybe a reset, a report. */
static void ls_play(Ls *ls, unsigned i, bool report)
{
    Fuzz *fz = &ls->fz;
    unsigned k = chance(fz, 40) ? 0 : 1 + rnd(fz, chance(fz, 10) ? 40 : 3);
    size_t room = FABRIC_HDR_LEN + FABRIC_MAX_PAYLOAD + FABRIC_FRAME_COST;

    for (; k; k--) {
        if (ls->n[i].round_cost + room > LOCKSTEP_ROUND_IN_MAX) {
            break;                      /* a full round stays in bounds */
        }
        if (chance(fz, 2)) {
            ls_hello(ls, i, i, FABRIC_HELLO_F_LOCKSTEP);   /* a reset */
        } else {
            ls_data(ls, i);
        }
    }
    if (report) {
        ls_report(ls, i);
    }
}

/*
 * Node i's frames up to its grant.  False if the connection ended
 * instead; else the grant is in *grant.
 */
static bool ls_take(Ls *ls, unsigned i, uint64_t *grant)
{
    static uint8_t pl[FABRIC_MAX_PAYLOAD];
    Fuzz *fz = &ls->fz;
    LsNode *n = &ls->n[i];
    FabricHdr h;

    for (;;) {
        int r = ls_recv(ls, i, &h, pl, LS_WAIT_MS);
        bool reject;

        FUZZ_CHECK(fz, r != 0);         /* the round ends */
        if (r < 0) {
            return false;
        }
        if (n->role != LS_KEEPS) {
            continue;                   /* a doomed node's last words */
        }
        if (h.type == FABRIC_TYPE_SYNC) {
            FUZZ_CHECK(fz, h.len == 0);
            FUZZ_CHECK(fz, h.send_time_ns == h.deliver_time_ns);
            /* later than the last grant, unless that was the end of time */
            FUZZ_CHECK(fz, h.deliver_time_ns > ls->grant ||
                           (ls->grant == UINT64_MAX &&
                            h.deliver_time_ns == UINT64_MAX));
            /* everything it was given was due before this grant */
            FUZZ_CHECK(fz, n->got < h.deliver_time_ns);
            *grant = h.deliver_time_ns;
            return true;
        }
        reject = ls_is_reject(&h, pl);
        FUZZ_CHECK(fz, !reject);
        /* not before the grant the nodes ran to, in delivery order */
        FUZZ_CHECK(fz, h.deliver_time_ns >= ls->grant);
        FUZZ_CHECK(fz, h.deliver_time_ns >= n->got);
        n->got = h.deliver_time_ns;
        if (h.type == FABRIC_TYPE_DATA) {
            ls->data++;
            if (h.deliver_time_ns < ls_sat_add(h.send_time_ns,
                                               ls->lookahead)) {
                ls_note(ls, "node%u DATA from %u sent %" G_GUINT64_FORMAT
                        " due %" G_GUINT64_FORMAT, i, h.src,
                        h.send_time_ns, h.deliver_time_ns);
            }
            FUZZ_CHECK(fz, h.deliver_time_ns >=
                           ls_sat_add(h.send_time_ns, ls->lookahead));
        }
    }
}

/* While node `late` has not reported, no other node gets anything. */
static void ls_expect_no_grant(Ls *ls, unsigned late)
{
    struct pollfd pfd[NODES];
    nfds_t count = 0;
    bool quiet;

    for (unsigned i = 0; i < NODES; i++) {
        if (i != late && ls->n[i].fd >= 0) {
            pfd[count++] = (struct pollfd){ .fd = ls->n[i].fd,
                                            .events = POLLIN };
        }
    }
    quiet = poll(pfd, count, LS_QUIET_MS) == 0;
    FUZZ_CHECK(&ls->fz, quiet);
    ls->late++;
}

static void ls_round(Ls *ls)
{
    Fuzz *fz = &ls->fz;
    unsigned order[NODES], live = 0;
    int late = -1;
    uint64_t grant = 0;
    bool granted = false;

    for (unsigned i = 0; i < NODES; i++) {
        if (ls->n[i].role != LS_GONE) {
            order[live++] = i;
        }
    }
    if (!live) {
        return;
    }
    for (unsigned k = live - 1; k > 0; k--) {
        unsigned j = rnd(fz, k + 1), x = order[k];

        order[k] = order[j];
        order[j] = x;
    }
    if (chance(fz, 8)) {
        ls_odd(ls, order[0]);
    }
    for (unsigned i = 0; i < NODES; i++) {
        if (ls->n[i].role == LS_GONE && chance(fz, 3)) {
            ls_come_back(ls, i);
        }
    }
    if (ls_live(ls) >= 2 && chance(fz, 5)) {
        late = order[live - 1];
        if (ls->n[late].role != LS_KEEPS) {
            late = -1;
        }
    }
    for (unsigned k = 0; k < live; k++) {
        unsigned i = order[k];

        if (ls->n[i].role != LS_GONE) {
            ls_play(ls, i, (int)i != late);
        }
        if (chance(fz, 3)) {
            fuzz_control(fz);
        }
    }
    if (late >= 0) {
        ls_expect_no_grant(ls, late);
        ls_report(ls, late);
    }
    for (unsigned i = 0; i < NODES; i++) {
        uint64_t g;

        if (ls->n[i].role == LS_GONE) {
            continue;
        }
        if (ls->n[i].role == LS_DOOMED) {
            bool cut = !ls_take(ls, i, &g);

            FUZZ_CHECK(fz, cut);
            ls_note(ls, "node%u refused at the round's end", i);
            ls_close(ls, i);
            ls->cut++;
            continue;
        }
        if (!ls_take(ls, i, &g)) {
            /* a node that keeps the protocol is never cut off ... */
            bool kept = false;

            ls_note(ls, "node%u cut off though it kept the protocol", i);
            FUZZ_CHECK(fz, kept);
        }
        FUZZ_CHECK(fz, !granted || g == grant);     /* one grant for all */
        grant = g;
        granted = true;
    }
    /* (what came before the first round counts toward it) */
    for (unsigned i = 0; i < NODES; i++) {
        ls->n[i].round_cost = 0;
    }
    if (granted) {
        ls_note(ls, "round %" G_GUINT64_FORMAT ": grant %" G_GUINT64_FORMAT,
                ls->rounds, grant);
        ls->grant = grant;
        ls->rounds++;
    }
}

/* `status` says the grant every node that is still in got. */
static void ls_check_status(Ls *ls)
{
    g_autofree char *st = NULL;
    const char *at;
    uint64_t grant;

    ctl_reconnect(ls->fz.fx);
    st = ctl(ls->fz.fx, "status");
    at = strstr(st, "lockstep: grant=");
    FUZZ_CHECK(&ls->fz, at != NULL);
    grant = g_ascii_strtoull(at + strlen("lockstep: grant="), NULL, 10);
    FUZZ_CHECK(&ls->fz, grant == ls->grant);
}

static uint64_t ls_lookahead(Fixture *fx)
{
    g_autofree char *st = ctl(fx, "status");
    const char *at = strstr(st, "lookahead=");

    g_assert_nonnull(at);
    return g_ascii_strtoull(at + strlen("lookahead="), NULL, 10);
}

/* fabricd's options for one episode: the kind's defaults or odd values. */
static GPtrArray *ls_args(Ls *ls, const char *kind)
{
    Fuzz *fz = &ls->fz;
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    static const char *const quanta[] = { "0", "1", "250", "1000000",
                                          "1000000000" };
    static const char *const hops[] = { "0", "1", "300", "1000000" };
    static const char *const rates[] = { "1", "125", "1000000" };

    g_ptr_array_add(a, g_strdup("--kind"));
    g_ptr_array_add(a, g_strdup(kind));
    g_ptr_array_add(a, g_strdup("--lockstep"));
    g_ptr_array_add(a, g_strdup("--seed"));
    g_ptr_array_add(a, g_strdup_printf("%" G_GUINT64_FORMAT,
                                       prng_next(&fz->rng)));
    if (chance(fz, 50)) {
        g_ptr_array_add(a, g_strdup("--lockstep-quantum"));
        g_ptr_array_add(a, g_strdup(quanta[rnd(fz, G_N_ELEMENTS(quanta))]));
    }
    if (chance(fz, 30)) {
        g_ptr_array_add(a, g_strdup("--hop-ns"));
        g_ptr_array_add(a, g_strdup(hops[rnd(fz, G_N_ELEMENTS(hops))]));
    }
    if (chance(fz, 30)) {
        g_ptr_array_add(a, g_strdup("--link-mbps"));
        g_ptr_array_add(a, g_strdup(rates[rnd(fz, G_N_ELEMENTS(rates))]));
    }
    g_ptr_array_add(a, NULL);
    return a;
}

/* SIGTERM: fabricd must exit 0 (a sanitizer report would not). */
static void ls_stop(Ls *ls)
{
    Fixture *fx = ls->fz.fx;
    bool clean;

    kill(fx->pid, SIGTERM);
    clean = reap(fx, WAIT_MS) && WIFEXITED(fx->wait_status) &&
            WEXITSTATUS(fx->wait_status) == 0;
    FUZZ_CHECK(&ls->fz, clean);
}

static void ls_episode(Ls *ls, const char *kind)
{
    Fuzz *fz = &ls->fz;
    g_autoptr(GPtrArray) args = ls_args(ls, kind);
    g_autofree char *banner = NULL;
    g_autofree char *argl = g_strjoinv(" ", (char **)args->pdata);
    unsigned rounds = 1 + rnd(fz, chance(fz, 10) ? 10 * LS_ROUNDS_MAX
                                                  : LS_ROUNDS_MAX);

    if (ls->episodes++) {
        fixture_teardown(fz->fx, NULL);
        fixture_init(fz->fx);
    }
    for (unsigned i = 0; i < CTL_CONNS; i++) {
        conn_close(&fz->ctl[i]);
    }
    fz->captures = 0;
    banner = start_fabricd(fz->fx, (const char *const *)args->pdata);
    ls_note(ls, "episode %" G_GUINT64_FORMAT ": fabricd %s", ls->episodes,
            argl);
    ls->lookahead = ls_lookahead(fz->fx);
    ls->grant = 0;
    if (!fz->bound) {
        /* a round's input and held output per node come on top */
        fz->bound = rss_bound(fz->fx, fabricd_rss(fz->fx)) + ASAN_SLACK +
                    (uint64_t)NODES * (LOCKSTEP_ROUND_IN_MAX +
                                       LOCKSTEP_HELD_EXTRA);
    }
    for (unsigned i = 0; i < NODES; i++) {
        ls->n[i] = (LsNode){ .fd = connect_port(fz->fx, i), .role = LS_KEEPS };
        fcntl(ls->n[i].fd, F_SETFL, O_NONBLOCK);
    }
    for (unsigned i = 0; i < NODES; i++) {
        unsigned r = rnd(fz, 100);

        if (r < 91) {
            ls_hello(ls, i, i, FABRIC_HELLO_F_LOCKSTEP);
        } else if (r < 94) {
            ls_note(ls, "node%u says no HELLO", i);   /* unlinked, in step */
        } else {
            ls_odd(ls, i);
        }
    }
    for (unsigned r = 0; r < rounds && ls_live(ls); r++) {
        uint64_t before = fz->op;

        ls_round(ls);
        if (before / CHECK_EVERY != fz->op / CHECK_EVERY) {
            fuzz_check(fz);
        }
    }
    fuzz_check(fz);
    for (unsigned i = 0; i < NODES; i++) {
        if (ls->n[i].role == LS_KEEPS) {
            ls_check_status(ls);
            break;
        }
    }
    for (unsigned i = 0; i < NODES; i++) {
        ls_close(ls, i);
    }
    for (unsigned i = 0; i < CTL_CONNS; i++) {
        conn_close(&fz->ctl[i]);
    }
    ls_stop(ls);
}

static void fuzz_lockstep(Fixture *fx, gconstpointer opaque)
{
    const char *kind = opaque;
    g_autofree char *name = g_strdup_printf("lockstep/%s", kind);
    Ls ls = { .fz = { .fx = fx, .kind = name } };
    Fuzz *fz = &ls.fz;
    uint64_t seed = fuzz_seed() ^ g_str_hash(name);
    gint64 start = g_get_monotonic_time();

    fz->kind_id = !strcmp(kind, "ps1") ? FABRIC_KIND_PS1 :
                  !strcmp(kind, "myrinet") ? FABRIC_KIND_MYRINET :
                  !strcmp(kind, "telegraphos") ? FABRIC_KIND_TELEGRAPHOS
                                               : FABRIC_KIND_ETH;
    fz->seed = seed;
    /* a round costs far more than one free-running frame */
    fz->ops = MAX(fuzz_total_ops() / 4 / LS_OPS_SHARE, 1);
    fz->trace = g_string_new(NULL);
    prng_seed(&fz->rng, seed);
    sent_counter = &fz->sent;
    for (unsigned i = 0; i < CTL_CONNS; i++) {
        fz->ctl[i] = (Conn){ .fd = -1, .out = g_byte_array_new() };
    }
    g_test_message("fuzz kind=%s daemon=%s FUZZ_SEED=0x%" G_GINT64_MODIFIER
                   "x (kind seed 0x%" G_GINT64_MODIFIER "x) ops=%"
                   G_GUINT64_FORMAT, name, FABRICD, fuzz_seed(), seed,
                   fz->ops);
    while (fz->op < fz->ops) {
        ls_episode(&ls, kind);
    }
    g_test_message("fuzz kind=%s: %" G_GUINT64_FORMAT " ops, %"
                   G_GUINT64_FORMAT " bytes in %.1f s: %" G_GUINT64_FORMAT
                   " episodes, %" G_GUINT64_FORMAT " rounds (%"
                   G_GUINT64_FORMAT " with a late report), %" G_GUINT64_FORMAT
                   " frames in (%" G_GUINT64_FORMAT " DATA), %"
                   G_GUINT64_FORMAT " nodes cut off, %" G_GUINT64_FORMAT
                   " left, %" G_GUINT64_FORMAT " refused on return; VmRSS max %"
                   G_GUINT64_FORMAT " KiB (bound %" G_GUINT64_FORMAT " KiB)",
                   name, fz->op, fz->sent,
                   (g_get_monotonic_time() - start) / 1e6, ls.episodes,
                   ls.rounds, ls.late, ls.frames, ls.data, ls.cut, ls.left,
                   ls.refused, fz->rss_max / 1024,
                   fz->bound / 1024);
    for (unsigned i = 0; i < CTL_CONNS; i++) {
        conn_close(&fz->ctl[i]);
        g_byte_array_unref(fz->ctl[i].out);
    }
    g_string_free(fz->trace, TRUE);
}

/* The lock-step cases start their own fabricd, one per episode. */
static void setup_lockstep(Fixture *fx, gconstpointer kind)
{
    fixture_init(fx);
}

/* ---- what the lock-step fuzz found, as minimal reproducers ---- */

/* Each asserts what docs/lockstep.md promises.  Blocking sockets. */
static void kb_send(Fixture *fx, unsigned i, uint8_t kind, uint8_t type,
                    uint16_t dst, const uint8_t *pl, size_t len, uint64_t t)
{
    hdr_send(fx->port[i], kind, type, kind == FABRIC_KIND_MYRINET &&
             type == FABRIC_TYPE_DATA ? FABRIC_F_ROUTED : 0, dst, pl, len, t);
}

static void kb_report_next(Fixture *fx, unsigned i, uint8_t kind,
                           uint64_t t, uint64_t next)
{
    uint8_t pl[FABRIC_SYNC_REPORT_LEN];

    kb_send(fx, i, kind, FABRIC_TYPE_SYNC, FABRIC_NODE_NONE, pl,
            fabric_sync_report_encode(next, pl), t);
}

static void kb_report(Fixture *fx, unsigned i, uint8_t kind, uint64_t t)
{
    kb_report_next(fx, i, kind, t, t);
}

/*
 * Every node still linked reports at `t` (busy); returns the grant.  A
 * DATA frame node `watch` gets is kept in *data (its type set to SYNC
 * if none came); a node whose link ends is marked with -1 in fx->port.
 */
static uint64_t kb_round(Fixture *fx, uint8_t kind, uint64_t t,
                         unsigned watch, HdrFrame *data)
{
    uint64_t grant = 0;

    for (unsigned i = 0; i < NODES; i++) {
        if (fx->port[i] >= 0) {
            kb_report(fx, i, kind, t);
        }
    }
    for (unsigned i = 0; i < NODES; i++) {
        HdrFrame f;
        bool alive = false;

        while (fx->port[i] >= 0 &&
               (alive = hdr_recv(fx->port[i], kind, &f, WAIT_MS)) &&
               f.h.type != FABRIC_TYPE_SYNC) {
            if (i == watch && f.h.type == FABRIC_TYPE_DATA) {
                *data = f;
            }
        }
        if (fx->port[i] >= 0 && !alive) {
            g_test_message("node%u: link ended", i);
            close(fx->port[i]);
            fx->port[i] = -1;
        } else if (fx->port[i] >= 0) {
            grant = f.h.deliver_time_ns;
        }
    }
    return grant;
}

/* Lock-step HELLOs and the first rounds; returns the grant after them. */
static uint64_t kb_start(Fixture *fx, uint8_t kind)
{
    HdrFrame none;
    uint64_t grant;

    connect_all(fx);
    for (unsigned i = 0; i < NODES; i++) {
        uint8_t pl[FABRIC_HELLO_MAX_LEN];

        kb_send(fx, i, kind, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, pl,
                fabric_hello_encode(i, FABRIC_HELLO_F_LOCKSTEP, pl), 0);
    }
    grant = kb_round(fx, kind, 0, NODES, &none);
    return kb_round(fx, kind, grant, NODES, &none);
}

/* A myrinet packet behind one route byte, `hop` ports on. */
static size_t kb_myri_packet(uint8_t hop, uint8_t *pl)
{
    pl[0] = 0x80 | hop;
    memset(pl + 1, 0x11, 20);
    fabric_put_le32(pl + 21, fabric_crc32(pl + 1, 20));
    return 1 + 20 + FABRIC_MYRI_CRC_LEN;
}

/*
 * Found by the lock-step fuzz: a DATA frame stamped past its sender's
 * grant (here 10^15 ns, a node at 600 ns) was taken as it was, and moved
 * the fabric's time (ls->now) to the stamp, so that every frame routed
 * after it, from every node, was due after 10^15 ns.  That node is cut
 * off, as a report past the grant is, and node0's packet to node1 arrives
 * at its send time + 300 ns switch + 25 bytes.
 */
static void kb_stamp_past_grant(Fixture *fx, gconstpointer unused)
{
    uint8_t pl[64];
    HdrFrame got = { .h.type = FABRIC_TYPE_SYNC };
    uint64_t grant = kb_start(fx, FABRIC_KIND_MYRINET);
    uint64_t sent;

    /* node2's packet to node0 (one port on, of 3), stamped in the future */
    kb_send(fx, 2, FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, FABRIC_NODE_NONE,
            pl, kb_myri_packet(1, pl), 1000000000000000ull);
    while (hdr_recv(fx->port[2], FABRIC_KIND_MYRINET, &got, WAIT_MS)) {
        g_assert_cmpuint(got.h.type, !=, FABRIC_TYPE_SYNC);
    }
    close(fx->port[2]);
    fx->port[2] = -1;                   /* cut off at once */
    got.h.type = FABRIC_TYPE_SYNC;
    grant = kb_round(fx, FABRIC_KIND_MYRINET, grant, NODES, &got);
    /* node0's packet to node1, in its round */
    sent = grant;
    kb_send(fx, 0, FABRIC_KIND_MYRINET, FABRIC_TYPE_DATA, FABRIC_NODE_NONE,
            pl, kb_myri_packet(1, pl), sent);
    for (int r = 0; r < 8 && got.h.type != FABRIC_TYPE_DATA; r++) {
        grant = kb_round(fx, FABRIC_KIND_MYRINET, grant, 1, &got);
    }
    g_test_message("node0's packet sent at %" G_GUINT64_FORMAT
                   " %s %" G_GUINT64_FORMAT ", grant %" G_GUINT64_FORMAT, sent,
                   got.h.type == FABRIC_TYPE_DATA ? "due at" : "not come by",
                   got.h.type == FABRIC_TYPE_DATA ? got.h.deliver_time_ns
                                                  : grant, grant);
    g_assert_cmpuint(got.h.type, ==, FABRIC_TYPE_DATA);
    g_assert_cmpuint(got.h.deliver_time_ns, ==, sent + 300 + 25 * 4);
}

/* Every node's next grant, which must be the same for all. */
static uint64_t kb_grants(Fixture *fx, uint8_t kind)
{
    uint64_t grant = 0;

    for (unsigned i = 0; i < NODES; i++) {
        HdrFrame f;

        do {
            g_assert_true(hdr_recv(fx->port[i], kind, &f, WAIT_MS));
        } while (f.h.type != FABRIC_TYPE_SYNC);
        g_assert_true(i == 0 || f.h.deliver_time_ns == grant);
        grant = f.h.deliver_time_ns;
    }
    return grant;
}

/*
 * Found by the lock-step fuzz (ps1, FUZZ_SEED=0xb743885d338ef61, op
 * 132946): once every node is idle for good (next event UINT64_MAX) the
 * grant is UINT64_MAX; a node that then reports a near next event got a
 * grant earlier than that, as `grant + 1` wrapped to 0.  Grants never go
 * back.
 */
static void kb_grant_wraps(Fixture *fx, gconstpointer unused)
{
    uint64_t start = kb_start(fx, FABRIC_KIND_MYRINET), grant;

    for (unsigned i = 0; i < NODES; i++) {
        kb_report_next(fx, i, FABRIC_KIND_MYRINET, start,
                       FABRIC_SYNC_IDLE_NONE);
    }
    grant = kb_grants(fx, FABRIC_KIND_MYRINET);
    g_assert_true(grant == UINT64_MAX);
    for (unsigned i = 0; i < NODES; i++) {
        kb_report_next(fx, i, FABRIC_KIND_MYRINET, start + 1000,
                       start + 1000);
    }
    grant = kb_grants(fx, FABRIC_KIND_MYRINET);
    g_test_message("the grant after UINT64_MAX: %" G_GUINT64_FORMAT, grant);
    g_assert_true(grant == UINT64_MAX);
}

/*
 * Found by the lock-step fuzz: on telegraphos, which must not drop, node0
 * sends node1 6 MiB of WRITEs in one round, within LOCKSTEP_ROUND_IN_MAX.
 * Lock-step holds them for their delivery time, past tgr_out_limit(); the
 * receiver, which could not read them sooner, was cut off.  Held frames
 * have LOCKSTEP_HELD_EXTRA on top of the bound: both nodes stay linked.
 */
static void kb_tgr_flood_victim(Fixture *fx, gconstpointer unused)
{
    static uint8_t frame[FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN +
                         FABRIC_TGR_MAX_DATA];
    FabricTgrHdr t = { .op = FABRIC_TGR_WRITE, .size = 4 };
    HdrFrame none;
    FabricHdr h = {
        .kind = FABRIC_KIND_TELEGRAPHOS, .type = FABRIC_TYPE_DATA,
        .src = FABRIC_NODE_NONE, .dst = 1,
        .len = FABRIC_TGR_HDR_LEN + FABRIC_TGR_MAX_DATA,
    };
    uint64_t grant = kb_start(fx, FABRIC_KIND_TELEGRAPHOS);
    g_autoptr(GByteArray) all = g_byte_array_new();

    h.send_time_ns = grant;
    fabric_hdr_encode(&h, frame);
    fabric_tgr_hdr_encode(&t, frame + FABRIC_HDR_LEN);
    for (unsigned k = 0; k < (6u << 20) / sizeof(frame); k++) {
        g_byte_array_append(all, frame, sizeof(frame));
    }
    g_assert_cmpuint(all->len / sizeof(frame) *
                     (sizeof(frame) + FABRIC_FRAME_COST), <,
                     LOCKSTEP_ROUND_IN_MAX);
    write_all(fx->port[0], all->data, all->len);
    kb_round(fx, FABRIC_KIND_TELEGRAPHOS, grant, NODES, &none);
    g_assert_cmpint(fx->port[0], >=, 0);
    g_assert_cmpint(fx->port[1], >=, 0);
}

static const char *const args_eth[] = { "--kind", "eth", NULL };
static const char *const args_ps1[] = { "--kind", "ps1", NULL };
static const char *const args_myri[] = { "--kind", "myrinet", NULL };
static const char *const args_tgr[] = { "--kind", "telegraphos", NULL };
static const char *const args_myri_exact[] = {
    "--kind", "myrinet", "--lockstep", "--lockstep-quantum", "0", NULL,
};
static const char *const args_tgr_ls[] = {
    "--kind", "telegraphos", "--lockstep", "--lockstep-quantum", "0", NULL,
};

/* fixture_setup with the kind's arguments; the test gets the kind name. */
static void setup_kind(Fixture *fx, gconstpointer kind)
{
    const char *const *args = !strcmp(kind, "ps1") ? args_ps1 :
                              !strcmp(kind, "myrinet") ? args_myri :
                              !strcmp(kind, "telegraphos") ? args_tgr
                                                           : args_eth;

    fixture_setup(fx, args);
}

int main(int argc, char **argv)
{
    static const char *const kinds[] = { "eth", "ps1", "myrinet",
                                         "telegraphos" };

    g_test_init(&argc, &argv, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* a sanitizer report ends fabricd with a non-zero status */
    g_setenv("ASAN_OPTIONS", "halt_on_error=1:detect_leaks=1:"
             "quarantine_size_mb=16:malloc_context_size=8", FALSE);
    g_setenv("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1", FALSE);
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        g_autofree char *name = g_strdup_printf("/fabricd-fuzz/%s", kinds[i]);

        g_test_add(name, Fixture, kinds[i], setup_kind, fuzz_kind,
                   fixture_teardown);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        g_autofree char *name = g_strdup_printf("/fabricd-fuzz/lockstep/%s",
                                                kinds[i]);

        g_test_add(name, Fixture, kinds[i], setup_lockstep, fuzz_lockstep,
                   fixture_teardown);
    }
    g_test_add("/fabricd-fuzz/found/stamp-past-grant", Fixture,
               args_myri_exact, fixture_setup, kb_stamp_past_grant,
               fixture_teardown);
    g_test_add("/fabricd-fuzz/found/grant-wraps", Fixture, args_myri_exact,
               fixture_setup, kb_grant_wraps, fixture_teardown);
    g_test_add("/fabricd-fuzz/found/tgr-flood-victim", Fixture, args_tgr_ls,
               fixture_setup, kb_tgr_flood_victim, fixture_teardown);
    return g_test_run();
}
