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
#include <sys/ioctl.h>

#include "control.h"
#include "prng.h"
#include "proto/eth.h"
#include "proto/ps1.h"
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
        return g_strdup_printf("capture start %s",
                               chance(fz, 50) ? "/proc/self/mem"
                                              : "fabricd.log");
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

static const char *const args_eth[] = { "--kind", "eth", NULL };
static const char *const args_ps1[] = { "--kind", "ps1", NULL };
static const char *const args_myri[] = { "--kind", "myrinet", NULL };
static const char *const args_tgr[] = { "--kind", "telegraphos", NULL };

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
    return g_test_run();
}
