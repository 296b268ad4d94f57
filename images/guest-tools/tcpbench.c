/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcpbench -- small TCP throughput / latency benchmark for vcluster guests.
 *
 *   tcpbench server [-p PORT] [-1] [-T SECS]
 *   tcpbench client HOST [-p PORT] [-r SECS] [-T SECS]
 *            (--stream [-s BYTES_TOTAL] [-b BLOCK] [--verify]
 *            | --pingpong [-s MSG_BYTES] [-n ROUNDS] [-w WARMUP] [-b BLOCK])
 *   tcpbench barrier --nodes N --rank R [--count C] [-p PORT] [-r SECS] [-T SECS]
 *   tcpbench pairwise PEER [-p PORT] [-s MSG_BYTES] [-n ROUNDS] [-w WARMUP]
 *            [-b BLOCK] [-r SECS] [-T SECS]
 *
 * Output (client, one line on stdout):
 *   stream bytes=<n> seconds=<t> MBps=<x>
 *       t: from the first byte sent until the server confirmed it received
 *       all n bytes; MBps = n / t / 1e6.
 *   pingpong size=<s> rounds=<n> latency_us=<mean> min_us=<min> max_us=<max>
 *       latencies are half round trips, over the n timed rounds (warm-up
 *       rounds excluded); every echo is compared with what was sent.
 *       With -b BLOCK the line ends with block=<b>: each message of s
 *       bytes is written as back-to-back writes of at most b bytes (a
 *       burst), by the client and by the server's echo alike; the server
 *       reads the whole message before it echoes.  Without -b a message
 *       is one write (write_full).
 *   barrier nodes=<n> rank=<r> count=<c> mean_us=<mean>
 *       a dissemination barrier among hosts node0..node<n-1>: in round k
 *       rank r sends one byte to rank r+2^k and waits for one from rank
 *       r-2^k (mod n), ceil(log2 n) rounds; every rank listens on PORT and
 *       connects to its round partners (retrying for -r SECS, default 60).
 *   pairwise size=<s> rounds=<n> exchange_us=<t> latency_us=<t/2> min_us=<min>
 *            max_us=<max> MBps=<2s/t>
 *       the ParaStation paper's pairwise exchange (section 5.1), run on both
 *       nodes at once, each naming the other: every round both send s
 *       bytes, then both receive the peer's s bytes (checked).  t is the
 *       mean time per exchange over the n timed rounds (the paper's "time
 *       per iteration"); latency_us, min_us and max_us are halves of
 *       exchange times (the paper's latency, comparable to a ping-pong's
 *       half round trip); MBps counts both directions (2 s / t / 1e6).
 *       Each node listens on PORT (default 5002) and connects to the
 *       peer's (retrying for -r SECS, default 60); a hello each way must
 *       carry the same size, rounds and block, and starts both together.
 *       -b BLOCK: writes of at most BLOCK bytes, as for --pingpong.
 *
 * Sizes accept k/m/g suffixes (powers of 1024). Exit status: 0 success,
 * 1 runtime error (connect failure, short read, timeout, data mismatch),
 * 2 bad arguments.
 *
 * Wire protocol (all integers big-endian):
 *   client -> server  hello: magic "TCPB" u32, version u32, mode u32,
 *                     flags u32, size u64, count u64          (32 bytes)
 *   server -> client  reply: magic u32, status u32 (0 = accepted)  (8 bytes)
 *   stream:   client sends `size` bytes; server answers u64 bytes received.
 *   pingpong: `count` rounds of `size` bytes client->server, echoed back;
 *             `flags` is the block size of the writes (0: one write per
 *             message; clients without -b send 0).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/msg.h"
#include "common/pingpong.h"

#define DEFAULT_PORT "5001"
#define PAIR_PORT "5002"    /* pairwise: beside a server on DEFAULT_PORT */
#define MAGIC 0x54435042u /* "TCPB" */
#define PROTO_VERSION 1u
#define HELLO_LEN 32
#define REPLY_LEN 8
#define PAIR_MAGIC 0x54504157u /* "TPAW" */
#define PAIR_HELLO_LEN 32

enum { MODE_STREAM = 1, MODE_PINGPONG = 2 };
enum { FLAG_VERIFY = 1 };
enum { ST_OK = 0, ST_BAD_VERSION = 1, ST_BAD_PARAMS = 2 };

#define DEF_STREAM_BYTES (64ull << 20)
#define DEF_BLOCK (128u << 10)
#define MAX_BLOCK (64u << 20)
#define DEF_PP_SIZE 1u
#define MAX_PP_SIZE (64u << 20)
#define DEF_ROUNDS 1000ull
#define DEF_WARMUP 10ull
#define DEF_TIMEOUT 60
#define DEF_PEER_RETRY 60   /* barrier, pairwise: waiting for the other nodes */

#define BAR_MAGIC 0x54424152u /* "TBAR" */
#define BAR_MAX_NODES 1024
#define BAR_MAX_ROUNDS 10

static const char *prog = "tcpbench";

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(prog, fmt, ap);
    va_end(ap);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: %s server [-p PORT] [-1] [-T SECS]\n"
        "       %s client HOST [-p PORT] [-r SECS] [-T SECS]\n"
        "                 (--stream [-s BYTES_TOTAL] [-b BLOCK] [--verify]\n"
        "                 | --pingpong [-s MSG_BYTES] [-n ROUNDS] [-w WARMUP] [-b BLOCK])\n"
        "\n"
        "server:\n"
        "  -p, --port PORT     TCP port (default " DEFAULT_PORT ")\n"
        "  -1, --once          exit after one client (exit status = its result)\n"
        "  -T, --timeout SECS  per-operation I/O timeout, 0 = none (default %d)\n"
        "client:\n"
        "  --stream            one-way throughput: prints\n"
        "                        stream bytes=N seconds=T MBps=X\n"
        "    -s, --size N      total bytes (default 64M)\n"
        "    -b, --block N     bytes per send() (default 128K)\n"
        "    --verify          server checks the data pattern (costs CPU)\n"
        "  --pingpong          round-trip latency (TCP_NODELAY): prints\n"
        "                        pingpong size=S rounds=N latency_us=L min_us=M max_us=X\n"
        "    -s, --size N      message bytes (default 1)\n"
        "    -n, --rounds N    timed rounds (default %llu)\n"
        "    -w, --warmup N    untimed rounds first (default %llu)\n"
        "    -b, --block N     write each message (and its echo) as a burst of\n"
        "                      writes of at most N bytes; the line ends block=N\n"
        "                      (default: one write per message)\n"
        "  -p, --port PORT     server port (default " DEFAULT_PORT ")\n"
        "  -r, --retry SECS    keep retrying the connection for SECS (default 0)\n"
        "  -T, --timeout SECS  per-operation I/O timeout, 0 = none (default %d)\n"
        "       %s barrier --nodes N --rank R [--count C] [-p PORT] [-r SECS] [-T SECS]\n"
        "  dissemination barrier among hosts node0..nodeN-1 (run one per node): prints\n"
        "                        barrier nodes=N rank=R count=C mean_us=X\n"
        "    --count C         timed barriers (default 1000; 5 untimed first)\n"
        "    -r, --retry SECS  connect retries and accept wait (default 60)\n"
        "       %s pairwise PEER [-p PORT] [-s BYTES] [-n ROUNDS] [-w WARMUP] [-b BLOCK]\n"
        "                       [-r SECS] [-T SECS]\n"
        "  the pairwise exchange: run it on both nodes at once, each naming the other;\n"
        "  every round both send BYTES, then both receive the peer's. Prints\n"
        "                        pairwise size=S rounds=N exchange_us=T latency_us=T/2\n"
        "                        min_us=M max_us=X MBps=2S/T (both directions)\n"
        "    -p PORT           listen on PORT and connect to it on PEER (default " PAIR_PORT ")\n"
        "    -s, -n, -w, -b    as for --pingpong; -r SECS as for barrier\n"
        "Sizes take k, m, g suffixes (x1024). HOST is a name (/etc/hosts) or address.\n",
        prog, prog, DEF_TIMEOUT, DEF_ROUNDS, DEF_WARMUP, DEF_TIMEOUT, prog, prog);
}

static int bad_args(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_args(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(prog, fmt, ap);
    va_end(ap);
    fprintf(stderr, "(try '%s --help')\n", prog);
    return 2;
}

/* ------------------------------------------------------------ helpers */

/* Parse a size with optional k/m/g suffix (binary). */
static bool parse_size(const char *s, unsigned long long *out)
{
    char *end;
    unsigned long long v, mul = 1;

    if (!s || !*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': mul = 1ull << 10; break;
        case 'm': case 'M': mul = 1ull << 20; break;
        case 'g': case 'G': mul = 1ull << 30; break;
        default: return false;
        }
        end++;
        if (*end == 'i' && end[1] == 'B')   /* KiB, MiB, GiB */
            end += 2;
        else if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return false;
    }
    if (v > ULLONG_MAX / mul)
        return false;
    *out = v * mul;
    return true;
}

static bool parse_port(const char *s, const char **out)
{
    unsigned long long v;
    if (!parse_size(s, &v) || strpbrk(s, "kKmMgGbB") || v < 1 || v > 65535)
        return false;
    *out = s;
    return true;
}

static bool parse_secs(const char *s, int *out)
{
    unsigned long long v;
    if (!parse_size(s, &v) || strpbrk(s, "kKmMgGbB") || v > 86400 * 365)
        return false;
    *out = (int)v;
    return true;
}

/* ------------------------------------------------------------ options */

/*
 * One table of options for all commands; each command (the table before
 * main) names the ones it takes and its defaults.  getopt_long is handed
 * the rows a command takes in table order, which is also the order it
 * lists them in when an abbreviation is ambiguous.
 */

/* What the options set; a command reads only the fields its options fill. */
struct settings {
    const char *port;
    int timeout, retry;       /* seconds */
    bool once, verify;
    int mode;                 /* client: MODE_STREAM or MODE_PINGPONG; 0: not given */
    unsigned long long size, block, rounds, warmup;
    unsigned long long nodes, rank, count;
    unsigned given;           /* OPT_BIT of each option on the command line */
};

enum arg_kind {
    ARG_HELP,    /* prints the usage; exit 0 */
    ARG_FLAG,    /* sets a bool */
    ARG_CHOICE,  /* sets an int to the row's value; another value given before is refused */
    /* the kinds from here on take a value */
    ARG_PORT,    /* 1..65535, no suffix, kept as written */
    ARG_SECS,    /* 0..one year, no suffix */
    ARG_NUM,     /* a size (k/m/g suffixes) in min..max */
};

enum option_id {
    OPT_NODES, OPT_RANK, OPT_COUNT, OPT_PORT, OPT_ONCE, OPT_STREAM, OPT_PINGPONG,
    OPT_PING_PONG, OPT_SIZE, OPT_MSG_SIZE, OPT_BLOCK, OPT_ROUNDS, OPT_WARMUP,
    OPT_RETRY, OPT_TIMEOUT, OPT_VERIFY, OPT_HELP, N_OPTIONS
};
#define OPT_BIT(id) (1u << (id))
_Static_assert(N_OPTIONS <= 32, "struct settings' given is an unsigned");

/* keys of the options that have no short letter: above any letter */
enum { KEY_STREAM = UCHAR_MAX + 1, KEY_PINGPONG, KEY_VERIFY };

struct option_spec {
    const char *name;
    int key;                /* the short letter, or a KEY_ */
    int alias;              /* a second short letter, or 0 */
    enum arg_kind kind;
    size_t field;           /* offsetof(struct settings, ...) */
    unsigned long long min, max;    /* ARG_NUM: the range */
    bool show_range;        /* the complaint about a bad value names the range */
    int value;              /* ARG_CHOICE: what it sets */
    const char *what;       /* names the value in "bad WHAT 'ARG'"; ARG_CHOICE: the complaint */
};

#define FIELD(f) offsetof(struct settings, f)
#define MODE_CLASH "--stream and --pingpong are exclusive"

static const struct option_spec options[N_OPTIONS] = {
    [OPT_NODES] = { .name = "nodes", .key = 'N', .kind = ARG_NUM, .field = FIELD(nodes),
                    .what = "node count", .min = 2, .max = BAR_MAX_NODES, .show_range = true },
    [OPT_RANK] = { .name = "rank", .key = 'R', .kind = ARG_NUM, .field = FIELD(rank),
                   .what = "rank", .min = 0, .max = ULLONG_MAX },
    [OPT_COUNT] = { .name = "count", .key = 'c', .alias = 'n', .kind = ARG_NUM,
                    .field = FIELD(count), .what = "barrier count", .min = 1, .max = ULLONG_MAX },
    [OPT_PORT] = { .name = "port", .key = 'p', .kind = ARG_PORT, .field = FIELD(port),
                   .what = "port" },
    [OPT_ONCE] = { .name = "once", .key = '1', .kind = ARG_FLAG, .field = FIELD(once) },
    [OPT_STREAM] = { .name = "stream", .key = KEY_STREAM, .kind = ARG_CHOICE,
                     .field = FIELD(mode), .value = MODE_STREAM, .what = MODE_CLASH },
    [OPT_PINGPONG] = { .name = "pingpong", .key = KEY_PINGPONG, .kind = ARG_CHOICE,
                       .field = FIELD(mode), .value = MODE_PINGPONG, .what = MODE_CLASH },
    [OPT_PING_PONG] = { .name = "ping-pong", .key = KEY_PINGPONG, .kind = ARG_CHOICE,
                        .field = FIELD(mode), .value = MODE_PINGPONG, .what = MODE_CLASH },
    /* the client's size: the ping-pong limit is checked once the mode is known */
    [OPT_SIZE] = { .name = "size", .key = 's', .kind = ARG_NUM, .field = FIELD(size),
                   .what = "size", .min = 1, .max = ULLONG_MAX },
    /* pairwise: a message size, bounded at once */
    [OPT_MSG_SIZE] = { .name = "size", .key = 's', .kind = ARG_NUM, .field = FIELD(size),
                       .what = "size", .min = 1, .max = MAX_PP_SIZE, .show_range = true },
    [OPT_BLOCK] = { .name = "block", .key = 'b', .kind = ARG_NUM, .field = FIELD(block),
                    .what = "block size", .min = 1, .max = MAX_BLOCK, .show_range = true },
    [OPT_ROUNDS] = { .name = "rounds", .key = 'n', .kind = ARG_NUM, .field = FIELD(rounds),
                     .what = "round count", .min = 1, .max = ULLONG_MAX },
    [OPT_WARMUP] = { .name = "warmup", .key = 'w', .kind = ARG_NUM, .field = FIELD(warmup),
                     .what = "warm-up count", .min = 0, .max = ULLONG_MAX },
    [OPT_RETRY] = { .name = "retry", .key = 'r', .kind = ARG_SECS, .field = FIELD(retry),
                    .what = "retry time" },
    [OPT_TIMEOUT] = { .name = "timeout", .key = 'T', .kind = ARG_SECS, .field = FIELD(timeout),
                      .what = "timeout" },
    [OPT_VERIFY] = { .name = "verify", .key = KEY_VERIFY, .kind = ARG_FLAG,
                     .field = FIELD(verify) },
    [OPT_HELP] = { .name = "help", .key = 'h', .kind = ARG_HELP },
};

struct command {
    const char *name;
    unsigned options;             /* OPT_BIT of each option it takes */
    const char *operand;          /* the one argument it needs (HOST, PEER), or NULL */
    struct settings defaults;
    int (*run)(const struct settings *s, const char *operand);
};

#define GO_ON (-1)

/* Take one option's value into s: GO_ON, or the exit status. */
static int take_option(const struct option_spec *o, const char *arg, struct settings *s)
{
    char *field = (char *)s + o->field;
    unsigned long long v;

    switch (o->kind) {
    case ARG_HELP:
        usage(stdout);
        return 0;
    case ARG_FLAG:
        *(bool *)field = true;
        break;
    case ARG_CHOICE:
        if (*(int *)field && *(int *)field != o->value)
            return bad_args("%s", o->what);
        *(int *)field = o->value;
        break;
    case ARG_PORT:
        if (!parse_port(arg, (const char **)field))
            return bad_args("bad %s '%s'", o->what, arg);
        break;
    case ARG_SECS:
        if (!parse_secs(arg, (int *)field))
            return bad_args("bad %s '%s'", o->what, arg);
        break;
    case ARG_NUM:
        if (!parse_size(arg, &v) || v < o->min || v > o->max) {
            if (o->show_range)
                return bad_args("bad %s '%s' (%llu..%llu)", o->what, arg, o->min, o->max);
            return bad_args("bad %s '%s'", o->what, arg);
        }
        *(unsigned long long *)field = v;
        break;
    }
    s->given |= OPT_BIT(o - options);
    return GO_ON;
}

/* Append a short option to getopt's string, with ':' if it takes a value. */
static char *add_letter(char *sp, int letter, int has_arg)
{
    *sp++ = (char)letter;
    if (has_arg == required_argument)
        *sp++ = ':';
    return sp;
}

/*
 * Parse argv (argv[0] is the command's name) into s, which holds the
 * command's defaults, and find its operand: GO_ON, or the exit status.
 */
static int parse_options(const struct command *cmd, int argc, char **argv,
                         struct settings *s, const char **operand)
{
    struct option longopts[N_OPTIONS + 1];
    const struct option_spec *taken[N_OPTIONS];
    char shortopts[N_OPTIONS * 4 + 1], *sp = shortopts;
    int n = 0, c, i, rc;

    for (i = 0; i < N_OPTIONS; i++) {
        const struct option_spec *o = &options[i];
        int has_arg = o->kind >= ARG_PORT ? required_argument : no_argument;

        if (!(cmd->options & OPT_BIT(i)))
            continue;
        taken[n] = o;
        longopts[n++] = (struct option){ o->name, has_arg, NULL, o->key };
        if (o->key <= UCHAR_MAX)
            sp = add_letter(sp, o->key, has_arg);
        if (o->alias)
            sp = add_letter(sp, o->alias, has_arg);
    }
    longopts[n] = (struct option){ NULL, 0, NULL, 0 };
    *sp = '\0';

    optind = 1;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        for (i = 0; c != '?' && i < n && taken[i]->key != c && taken[i]->alias != c; i++)
            ;
        if (c == '?' || i == n)     /* getopt_long has said why */
            return bad_args("bad %s option", cmd->name);
        rc = take_option(taken[i], optarg, s);
        if (rc != GO_ON)
            return rc;
    }
    if (cmd->operand) {
        if (optind >= argc)
            return bad_args("%s: missing %s", cmd->name, cmd->operand);
        *operand = argv[optind++];
    }
    if (optind < argc)
        return bad_args("unexpected argument '%s'", argv[optind]);
    return GO_ON;
}

static void put32(unsigned char *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }
static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return be32toh(v); }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }

static const char *io_err(int e)
{
    if (e == EAGAIN || e == EWOULDBLOCK)
        return "timed out (see -T)";
    return strerror(e);
}

/*
 * Read exactly len bytes. Returns len on success, the number of bytes read
 * before EOF (< len) on a short read, -1 on error (errno set).
 */
static ssize_t read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = recv(fd, (char *)buf + got, len - got, 0);
        if (n > 0) {
            got += (size_t)n;
        } else if (n == 0) {
            break;
        } else if (errno != EINTR) {
            return -1;
        }
    }
    return (ssize_t)got;
}

/* Write exactly len bytes; 0 on success, -1 on error (errno set). */
static int write_full(int fd, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);
        if (n >= 0) {
            done += (size_t)n;
        } else if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

/* Read exactly len bytes or report why not; `what` names the data. */
static bool recv_exact(int fd, void *buf, size_t len, const char *who, const char *what)
{
    ssize_t n = read_full(fd, buf, len);
    if (n < 0) {
        msg("%s: receiving %s: %s", who, what, io_err(errno));
        return false;
    }
    if ((size_t)n < len) {
        msg("%s: short read: connection closed after %zd of %zu bytes of %s",
            who, n, len, what);
        return false;
    }
    return true;
}

static bool send_exact(int fd, const void *buf, size_t len, const char *who, const char *what)
{
    if (write_full(fd, buf, len) < 0) {
        msg("%s: sending %s: %s", who, what, io_err(errno));
        return false;
    }
    return true;
}

/* len bytes as back-to-back writes of at most block bytes (0: one). */
static bool send_burst(int fd, const unsigned char *buf, size_t len, size_t block,
                       const char *who, const char *what)
{
    size_t off = 0, n;

    if (!block)
        return send_exact(fd, buf, len, who, what);
    while (off < len) {
        n = len - off < block ? len - off : block;
        if (!send_exact(fd, buf + off, n, who, what))
            return false;
        off += n;
    }
    return true;
}

static void set_timeout(int fd, int secs)
{
    struct timeval tv = { .tv_sec = secs, .tv_usec = 0 };
    if (secs <= 0)
        return;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void set_nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
        msg("warning: TCP_NODELAY: %s", strerror(errno));
}

/* Stream data pattern: byte at absolute offset o is byte (o & 7) of the
 * little-endian 64-bit value (o & ~7) ^ SEED -- catches lost, duplicated
 * and reordered data. */
#define PATTERN_SEED 0x9e3779b97f4a7c15ull
static inline unsigned char pattern_byte(uint64_t o)
{
    uint64_t w = (o & ~7ull) ^ PATTERN_SEED;
    return (unsigned char)(w >> ((o & 7) * 8));
}
static void fill_pattern(unsigned char *buf, size_t len, uint64_t off)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern_byte(off + i);
}
/* Returns the index of the first wrong byte, or len. */
static size_t check_pattern(const unsigned char *buf, size_t len, uint64_t off)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern_byte(off + i))
            return i;
    return len;
}

/* Ping-pong and pairwise messages: the first 8 bytes carry the round's
 * number (little-endian), so that an echo or a message of another round
 * cannot pass the check. */
static void stamp_round(unsigned char *buf, size_t size, uint64_t round)
{
    for (size_t i = 0; i < 8 && i < size; i++)
        buf[i] = (unsigned char)(round >> (i * 8));
}

static void peer_name(const struct sockaddr *sa, socklen_t len, char *out, size_t outlen)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(out, outlen, "?");
        return;
    }
    if (strncmp(host, "::ffff:", 7) == 0 && strchr(host + 7, '.'))
        memmove(host, host + 7, strlen(host + 7) + 1);
    snprintf(out, outlen, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, serv);
}

/* ------------------------------------------------------------- server */

/* Serve one connection; returns 0 on success, 1 on failure. */
static int serve_client(int fd, const char *who, int timeout)
{
    unsigned char hello[HELLO_LEN], reply[REPLY_LEN];
    uint32_t magic, version, mode, flags;
    uint64_t size, count;
    uint32_t status = ST_OK;

    set_timeout(fd, timeout);
    if (!recv_exact(fd, hello, sizeof(hello), who, "handshake"))
        return 1;
    magic = get32(hello);
    version = get32(hello + 4);
    mode = get32(hello + 8);
    flags = get32(hello + 12);
    size = get64(hello + 16);
    count = get64(hello + 24);
    if (magic != MAGIC) {
        msg("%s: not a tcpbench client (bad handshake)", who);
        return 1;
    }
    if (version != PROTO_VERSION)
        status = ST_BAD_VERSION;
    else if (mode == MODE_STREAM && (size == 0 || count == 0 || count > MAX_BLOCK))
        status = ST_BAD_PARAMS;
    else if (mode == MODE_PINGPONG && (size == 0 || size > MAX_PP_SIZE || count == 0 ||
                                       flags > MAX_BLOCK))
        status = ST_BAD_PARAMS;
    else if (mode != MODE_STREAM && mode != MODE_PINGPONG)
        status = ST_BAD_PARAMS;
    put32(reply, MAGIC);
    put32(reply + 4, status);
    if (!send_exact(fd, reply, sizeof(reply), who, "handshake reply"))
        return 1;
    if (status != ST_OK) {
        msg("%s: rejected request (version %" PRIu32 ", mode %" PRIu32
            ", size %" PRIu64 ", count %" PRIu64 ")", who, version, mode, size, count);
        return 1;
    }

    if (mode == MODE_STREAM) {
        size_t bufsz = count > DEF_BLOCK ? (size_t)count : DEF_BLOCK;
        unsigned char *buf = malloc(bufsz);
        uint64_t got = 0;
        double t0 = 0, t1;
        bool verify = flags & FLAG_VERIFY;
        unsigned char ack[8];

        if (!buf) {
            msg("%s: out of memory", who);
            return 1;
        }
        while (got < size) {
            size_t want = size - got < bufsz ? (size_t)(size - got) : bufsz;
            ssize_t n = recv(fd, buf, want, 0);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                msg("%s: stream: receiving: %s after %" PRIu64 " of %" PRIu64 " bytes",
                    who, io_err(errno), got, size);
                free(buf);
                return 1;
            }
            if (n == 0) {
                msg("%s: stream: short read: connection closed after %" PRIu64
                    " of %" PRIu64 " bytes", who, got, size);
                free(buf);
                return 1;
            }
            if (got == 0)
                t0 = now_s();
            if (verify) {
                size_t bad = check_pattern(buf, (size_t)n, got);
                if (bad != (size_t)n) {
                    msg("%s: stream: data mismatch at byte offset %" PRIu64,
                        who, got + bad);
                    free(buf);
                    return 1;
                }
            }
            got += (uint64_t)n;
        }
        t1 = now_s();
        free(buf);
        put64(ack, got);
        if (!send_exact(fd, ack, sizeof(ack), who, "stream acknowledgement"))
            return 1;
        printf("server: %s stream bytes=%" PRIu64 " seconds=%.6f MBps=%.2f%s\n",
               who, got, t1 - t0, t1 > t0 ? (double)got / (t1 - t0) / 1e6 : 0.0,
               verify ? " verified" : "");
        fflush(stdout);
        return 0;
    }

    /* ping-pong: echo count messages of size bytes */
    set_nodelay(fd);
    unsigned char *buf = malloc((size_t)size);
    if (!buf) {
        msg("%s: out of memory", who);
        return 1;
    }
    for (uint64_t r = 0; r < count; r++) {
        if (!recv_exact(fd, buf, (size_t)size, who, "ping-pong message") ||
            !send_burst(fd, buf, (size_t)size, flags, who, "ping-pong reply")) {
            msg("%s: ping-pong failed in round %" PRIu64 " of %" PRIu64, who, r + 1, count);
            free(buf);
            return 1;
        }
    }
    free(buf);
    printf("server: %s pingpong size=%" PRIu64 " rounds=%" PRIu64 "\n", who, size, count);
    fflush(stdout);
    return 0;
}

static int listen_on(const char *port)
{
    struct addrinfo hints, *res, *ai;
    int fd = -1, one = 1, rc, last_err = 0;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    /* Prefer IPv6 dual-stack (also accepts IPv4), fall back to IPv4. */
    for (int pass = 0; pass < 2 && fd < 0; pass++) {
        hints.ai_family = pass == 0 ? AF_INET6 : AF_INET;
        rc = getaddrinfo(NULL, port, &hints, &res);
        if (rc != 0)
            continue;
        for (ai = res; ai && fd < 0; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0) {
                last_err = errno;
                continue;
            }
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (ai->ai_family == AF_INET6) {
                int zero = 0;
                setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
            }
            if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
                last_err = errno;
                close(fd);
                fd = -1;
            }
        }
        freeaddrinfo(res);
        /* a bind failure like EADDRINUSE is final; only a missing IPv6
         * stack is a reason to try IPv4 */
        if (fd < 0 && last_err && last_err != EAFNOSUPPORT && last_err != EADDRNOTAVAIL)
            break;
    }
    if (fd < 0)
        msg("cannot listen on port %s: %s", port, last_err ? strerror(last_err) : "no address");
    return fd;
}

static int run_server(const struct settings *s, const char *operand)
{
    const char *port = s->port;
    bool once = s->once;
    int timeout = s->timeout, lfd;

    (void)operand;
    lfd = listen_on(port);
    if (lfd < 0)
        return 1;
    if (!once) {
        /* one child per client; children are reaped automatically */
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_IGN;
        sa.sa_flags = SA_NOCLDWAIT;
        sigaction(SIGCHLD, &sa, NULL);
    }
    printf("tcpbench: listening on port %s\n", port);
    fflush(stdout);

    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        char who[NI_MAXHOST + NI_MAXSERV + 8];
        int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                msg("accept: %s", strerror(errno));
                usleep(100000);
                continue;
            }
            msg("accept: %s", strerror(errno));
            return 1;
        }
        peer_name((struct sockaddr *)&ss, sl, who, sizeof(who));
        if (once) {
            int rc = serve_client(fd, who, timeout);
            close(fd);
            close(lfd);
            return rc;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(lfd);
            _exit(serve_client(fd, who, timeout));
        }
        if (pid < 0) {
            msg("fork: %s; serving %s in the foreground", strerror(errno), who);
            serve_client(fd, who, timeout);
        }
        close(fd);
    }
}

/* ------------------------------------------------------------- client */

static int connect_to(const char *host, const char *port, int retry_secs)
{
    struct addrinfo hints, *res, *ai;
    double deadline = now_s() + retry_secs;
    int rc, fd, err;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    for (;;) {
        rc = getaddrinfo(host, port, &hints, &res);
        if (rc != 0) {
            if (rc == EAI_AGAIN && now_s() < deadline) {
                usleep(200000);
                continue;
            }
            msg("cannot resolve host '%s': %s", host,
                rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
            return -1;
        }
        fd = -1;
        err = 0;
        for (ai = res; ai; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0) {
                err = errno;
                continue;
            }
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
                break;
            err = errno;
            close(fd);
            fd = -1;
        }
        freeaddrinfo(res);
        if (fd >= 0)
            return fd;
        if (now_s() >= deadline) {
            msg("cannot connect to %s port %s: %s", host, port, strerror(err));
            return -1;
        }
        usleep(100000);
    }
}

static int run_client(const struct settings *s, const char *host)
{
    const char *port = s->port;
    int mode = s->mode, timeout = s->timeout, retry = s->retry, fd;
    bool have_size = s->given & OPT_BIT(OPT_SIZE), have_block = s->given & OPT_BIT(OPT_BLOCK);
    bool have_rounds = s->given & OPT_BIT(OPT_ROUNDS);
    bool have_warmup = s->given & OPT_BIT(OPT_WARMUP);
    bool verify = s->verify;
    unsigned long long size = s->size, block = s->block, rounds = s->rounds, warmup = s->warmup;
    unsigned char hello[HELLO_LEN], reply[REPLY_LEN];
    const char *who;

    if (!mode)
        return bad_args("client: give --stream or --pingpong");
    if (mode == MODE_STREAM && (have_rounds || have_warmup))
        return bad_args("-n/-w apply to --pingpong only");
    if (mode == MODE_PINGPONG && verify)
        return bad_args("--verify applies to --stream only");
    if (!have_size)
        size = mode == MODE_STREAM ? DEF_STREAM_BYTES : DEF_PP_SIZE;
    if (mode == MODE_PINGPONG && size > MAX_PP_SIZE)
        return bad_args("ping-pong message size %llu too large (max %u)", size, MAX_PP_SIZE);
    if (mode == MODE_PINGPONG && rounds > ULLONG_MAX - warmup)
        return bad_args("too many rounds");

    fd = connect_to(host, port, retry);
    if (fd < 0)
        return 1;
    who = host;
    set_timeout(fd, timeout);
    if (mode == MODE_PINGPONG)
        set_nodelay(fd);

    put32(hello, MAGIC);
    put32(hello + 4, PROTO_VERSION);
    put32(hello + 8, (uint32_t)mode);
    put32(hello + 12, mode == MODE_STREAM ? (verify ? FLAG_VERIFY : 0) :
                      have_block ? (uint32_t)block : 0);
    put64(hello + 16, size);
    put64(hello + 24, mode == MODE_STREAM ? block : rounds + warmup);
    if (!send_exact(fd, hello, sizeof(hello), who, "handshake") ||
        !recv_exact(fd, reply, sizeof(reply), who, "handshake reply (is a tcpbench server on that port?)")) {
        close(fd);
        return 1;
    }
    if (get32(reply) != MAGIC) {
        msg("%s port %s is not a tcpbench server", host, port);
        close(fd);
        return 1;
    }
    if (get32(reply + 4) != ST_OK) {
        msg("server refused the request: %s", get32(reply + 4) == ST_BAD_VERSION ?
            "protocol version mismatch" : "bad parameters");
        close(fd);
        return 1;
    }

    if (mode == MODE_STREAM) {
        unsigned char *buf = malloc((size_t)block), ack[8];
        uint64_t sent = 0, acked;
        double t0, t1;

        if (!buf) {
            msg("out of memory");
            close(fd);
            return 1;
        }
        fill_pattern(buf, (size_t)block, 0);
        t0 = now_s();
        while (sent < size) {
            size_t n = size - sent < block ? (size_t)(size - sent) : (size_t)block;
            if (verify && sent)
                fill_pattern(buf, n, sent);
            if (write_full(fd, buf, n) < 0) {
                msg("%s: stream: sending: %s after %" PRIu64 " of %llu bytes",
                    who, io_err(errno), sent, size);
                free(buf);
                close(fd);
                return 1;
            }
            sent += n;
        }
        if (!recv_exact(fd, ack, sizeof(ack), who, "stream acknowledgement")) {
            free(buf);
            close(fd);
            return 1;
        }
        t1 = now_s();
        free(buf);
        close(fd);
        acked = get64(ack);
        if (acked != size) {
            msg("%s: stream: server received %" PRIu64 " of %llu bytes", who, acked, size);
            return 1;
        }
        printf("stream bytes=%llu seconds=%.6f MBps=%.2f\n", size, t1 - t0,
               (double)size / (t1 - t0) / 1e6);
        return 0;
    }

    /* ping-pong */
    unsigned char *out = malloc((size_t)size), *in = malloc((size_t)size);
    struct pingpong_stats st = { 0 };
    uint64_t total = rounds + warmup;

    if (!out || !in) {
        msg("out of memory");
        free(out);
        free(in);
        close(fd);
        return 1;
    }
    fill_pattern(out, (size_t)size, 0);
    for (uint64_t r = 0; r < total; r++) {
        double t0, dt;

        stamp_round(out, (size_t)size, r);
        t0 = now_s();
        if (!send_burst(fd, out, (size_t)size, have_block ? (size_t)block : 0, who,
                        "ping-pong message") ||
            !recv_exact(fd, in, (size_t)size, who, "ping-pong reply")) {
            msg("%s: ping-pong failed in round %" PRIu64 " of %" PRIu64, who, r + 1, total);
            free(out);
            free(in);
            close(fd);
            return 1;
        }
        dt = now_s() - t0;
        if (memcmp(in, out, (size_t)size) != 0) {
            msg("%s: ping-pong data mismatch in round %" PRIu64, who, r + 1);
            free(out);
            free(in);
            close(fd);
            return 1;
        }
        if (r >= warmup)
            pingpong_add(&st, dt * 1e6);
    }
    free(out);
    free(in);
    close(fd);
    printf("pingpong size=%llu rounds=%llu latency_us=%.2f min_us=%.2f max_us=%.2f",
           size, rounds, st.sum / (double)rounds / 2, st.min / 2, st.max / 2);
    if (have_block)
        printf(" block=%llu", block);
    printf("\n");
    return 0;
}

/* ------------------------------------------------------------ barrier */

static int run_barrier(const struct settings *s, const char *operand)
{
    const char *port = s->port;
    unsigned long long nodes = s->nodes, rank = s->rank, count = s->count, v;
    int retry = s->retry, timeout = s->timeout, lfd, rounds = 0, k, ret = 1;
    int out[BAR_MAX_ROUNDS], in[BAR_MAX_ROUNDS];
    unsigned char hello[12], b = 0;
    char host[32], who[48];
    double t0, t1;

    (void)operand;
    if (!nodes)
        return bad_args("barrier: give --nodes N");
    if (rank >= nodes)
        return bad_args("barrier: give --rank R with 0 <= R < %llu", nodes);
    while ((1ull << rounds) < nodes)
        rounds++;
    for (k = 0; k < rounds; k++)
        out[k] = in[k] = -1;

    lfd = listen_on(port);
    if (lfd < 0)
        return 1;
    /* outgoing: one connection per round, to rank + 2^k */
    for (k = 0; k < rounds; k++) {
        v = (rank + (1ull << k)) % nodes;
        snprintf(host, sizeof(host), "node%llu", v);
        out[k] = connect_to(host, port, retry);
        if (out[k] < 0) {
            msg("barrier: rank %llu round %d: no connection to %s", rank, k, host);
            goto done;
        }
        set_timeout(out[k], timeout);
        set_nodelay(out[k]);
        put32(hello, BAR_MAGIC);
        put32(hello + 4, (uint32_t)rank);
        put32(hello + 8, (uint32_t)k);
        if (!send_exact(out[k], hello, sizeof(hello), host, "barrier hello"))
            goto done;
    }
    /* incoming: one per round, from rank - 2^k, told apart by the hello */
    for (int got = 0; got < rounds;) {
        struct pollfd pfd = { .fd = lfd, .events = POLLIN };
        uint32_t from, round;
        int fd, pr = poll(&pfd, 1, retry > 0 ? retry * 1000 : -1);

        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            msg("barrier: rank %llu: only %d of %d partners connected within %d s",
                rank, got, rounds, retry);
            goto done;
        }
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            msg("barrier: accept: %s", strerror(errno));
            goto done;
        }
        set_timeout(fd, timeout);
        set_nodelay(fd);
        if (!recv_exact(fd, hello, sizeof(hello), "partner", "barrier hello")) {
            close(fd);
            continue;
        }
        from = get32(hello + 4);
        round = get32(hello + 8);
        if (get32(hello) != BAR_MAGIC || round >= (uint32_t)rounds ||
            from != (rank + nodes - (1ull << round) % nodes) % nodes ||
            in[round] >= 0) {
            msg("barrier: rank %llu: unexpected hello (rank %u round %u), dropped",
                rank, from, round);
            close(fd);
            continue;
        }
        in[round] = fd;
        got++;
    }
    close(lfd);
    lfd = -1;

    snprintf(who, sizeof(who), "barrier rank %llu", rank);
    t0 = 0;
    for (unsigned long long i = 0; i < count + 5; i++) {
        if (i == 5)
            t0 = now_s();
        for (k = 0; k < rounds; k++) {
            if (!send_exact(out[k], &b, 1, who, "barrier token") ||
                !recv_exact(in[k], &b, 1, who, "barrier token"))
                goto done;
        }
    }
    t1 = now_s();
    printf("barrier nodes=%llu rank=%llu count=%llu mean_us=%.2f\n",
           nodes, rank, count, (t1 - t0) / (double)count * 1e6);
    ret = 0;
done:
    if (lfd >= 0)
        close(lfd);
    for (k = 0; k < rounds; k++) {
        if (out[k] >= 0)
            close(out[k]);
        if (in[k] >= 0)
            close(in[k]);
    }
    return ret;
}

/* ----------------------------------------------------------- pairwise */

/*
 * One round of the pairwise exchange: all of out to ofd (writes of at
 * most block bytes; 0: as much as the socket takes), then the peer's
 * message from ifd.  Writes do not block: while the socket has no room,
 * what the peer sent is read.  Both sides send at once, and two blocking
 * writers of a message larger than the socket buffers would wait for
 * each other for ever.
 */
static bool pair_round(int ofd, int ifd, const unsigned char *out, unsigned char *in,
                       size_t size, size_t block, int timeout, const char *who)
{
    size_t sent = 0, got = 0;

    while (sent < size || got < size) {
        bool moved = false;
        ssize_t k;

        if (sent < size) {
            size_t n = size - sent;
            if (block && n > block)
                n = block;
            k = send(ofd, out + sent, n, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (k > 0) {
                sent += (size_t)k;
                if (sent < size)
                    continue;   /* all of it first, as far as it goes */
                moved = true;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                msg("%s: pairwise: sending: %s after %zu of %zu bytes", who,
                    strerror(errno), sent, size);
                return false;
            }
        }
        if (got < size) {
            k = recv(ifd, in + got, size - got, MSG_DONTWAIT);
            if (k > 0) {
                got += (size_t)k;
                moved = true;
            } else if (k == 0) {
                msg("%s: pairwise: the peer closed the connection after %zu of %zu bytes",
                    who, got, size);
                return false;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                msg("%s: pairwise: receiving: %s after %zu of %zu bytes", who,
                    strerror(errno), got, size);
                return false;
            }
        }
        if (moved)
            continue;
        struct pollfd p[2] = {
            { .fd = sent < size ? ofd : -1, .events = POLLOUT },
            { .fd = got < size ? ifd : -1, .events = POLLIN },
        };
        int pr = poll(p, 2, timeout > 0 ? timeout * 1000 : -1);
        if (pr < 0 && errno != EINTR) {
            msg("%s: pairwise: poll: %s", who, strerror(errno));
            return false;
        }
        if (pr == 0) {
            msg("%s: pairwise: nothing moved for %d s (sent %zu, received %zu of %zu bytes; see -T)",
                who, timeout, sent, got, size);
            return false;
        }
    }
    return true;
}

/*
 * tcpbench pairwise PEER: the same command on both nodes, each naming
 * the other.  Each listens on PORT and connects to the peer's; it sends
 * on the connection it made and receives on the one it accepted.  A
 * hello each way (parameters must match) starts both together.
 */
static int run_pairwise(const struct settings *s, const char *peer)
{
    const char *port = s->port;
    unsigned long long size = s->size, block = s->block, rounds = s->rounds, warmup = s->warmup;
    int retry = s->retry, timeout = s->timeout, lfd = -1, ofd = -1, ifd = -1, ret = 1;
    unsigned char hello[PAIR_HELLO_LEN], phello[PAIR_HELLO_LEN], *out = NULL, *in = NULL;
    struct pingpong_stats st = { 0 };     /* over exchange times */
    double deadline;
    uint64_t total;

    if (rounds > ULLONG_MAX - warmup)
        return bad_args("too many rounds");
    total = rounds + warmup;

    lfd = listen_on(port);
    if (lfd < 0)
        return 1;
    ofd = connect_to(peer, port, retry);
    if (ofd < 0)
        goto done;
    set_timeout(ofd, timeout);
    set_nodelay(ofd);
    put32(hello, PAIR_MAGIC);
    put32(hello + 4, PROTO_VERSION);
    put32(hello + 8, (uint32_t)block);
    put32(hello + 12, 0);
    put64(hello + 16, size);
    put64(hello + 24, total);
    if (!send_exact(ofd, hello, sizeof(hello), peer, "pairwise hello"))
        goto done;
    /* the peer's connection: the first that says hello as a pairwise peer */
    deadline = now_s() + (retry > 0 ? retry : DEF_PEER_RETRY);
    while (ifd < 0) {
        struct pollfd pfd = { .fd = lfd, .events = POLLIN };
        int left = (int)((deadline - now_s()) * 1000), pr;

        if (left <= 0) {
            msg("pairwise: %s did not connect within %d s (is it running pairwise to this node?)",
                peer, retry > 0 ? retry : DEF_PEER_RETRY);
            goto done;
        }
        pr = poll(&pfd, 1, left);
        if (pr <= 0)
            continue;
        ifd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (ifd < 0)
            continue;
        set_timeout(ifd, timeout);
        if (!recv_exact(ifd, phello, sizeof(phello), peer, "pairwise hello") ||
            get32(phello) != PAIR_MAGIC || get32(phello + 4) != PROTO_VERSION) {
            msg("pairwise: a connection that is not a pairwise peer, dropped");
            close(ifd);
            ifd = -1;
        }
    }
    close(lfd);
    lfd = -1;
    if (get64(phello + 16) != size || get64(phello + 24) != total ||
        get32(phello + 8) != (uint32_t)block) {
        msg("pairwise: %s runs %" PRIu64 " rounds in all of %" PRIu64 " bytes (block %" PRIu32
            "), this node %" PRIu64 " of %llu (block %llu)", peer, get64(phello + 24),
            get64(phello + 16), get32(phello + 8), total, size, block);
        goto done;
    }

    out = malloc((size_t)size);
    in = malloc((size_t)size);
    if (!out || !in) {
        msg("out of memory");
        goto done;
    }
    /* both send the same pattern, stamped with the round */
    fill_pattern(out, (size_t)size, 0);
    for (uint64_t r = 0; r < total; r++) {
        double t0, dt;

        stamp_round(out, (size_t)size, r);
        t0 = now_s();
        if (!pair_round(ofd, ifd, out, in, (size_t)size, (size_t)block, timeout, peer)) {
            msg("%s: pairwise failed in round %" PRIu64 " of %" PRIu64, peer, r + 1, total);
            goto done;
        }
        dt = now_s() - t0;
        if (memcmp(in, out, (size_t)size) != 0) {
            msg("%s: pairwise data mismatch in round %" PRIu64, peer, r + 1);
            goto done;
        }
        if (r >= warmup)
            pingpong_add(&st, dt * 1e6);
    }
    printf("pairwise size=%llu rounds=%llu exchange_us=%.2f latency_us=%.2f min_us=%.2f max_us=%.2f MBps=%.3f",
           size, rounds, st.sum / (double)rounds, st.sum / (double)rounds / 2,
           st.min / 2, st.max / 2, 2.0 * (double)size * (double)rounds / st.sum);
    if (block)
        printf(" block=%llu", block);
    printf("\n");
    ret = 0;
done:
    free(out);
    free(in);
    if (lfd >= 0)
        close(lfd);
    if (ofd >= 0)
        close(ofd);
    if (ifd >= 0)
        close(ifd);
    return ret;
}

/* ----------------------------------------------------------- commands */

static const struct command commands[] = {
    {
        .name = "server", .run = run_server,
        .options = OPT_BIT(OPT_PORT) | OPT_BIT(OPT_ONCE) | OPT_BIT(OPT_TIMEOUT) |
                   OPT_BIT(OPT_HELP),
        .defaults = { .port = DEFAULT_PORT, .timeout = DEF_TIMEOUT },
    },
    {
        .name = "client", .run = run_client, .operand = "HOST",
        .options = OPT_BIT(OPT_PORT) | OPT_BIT(OPT_STREAM) | OPT_BIT(OPT_PINGPONG) |
                   OPT_BIT(OPT_PING_PONG) | OPT_BIT(OPT_SIZE) | OPT_BIT(OPT_BLOCK) |
                   OPT_BIT(OPT_ROUNDS) | OPT_BIT(OPT_WARMUP) | OPT_BIT(OPT_RETRY) |
                   OPT_BIT(OPT_TIMEOUT) | OPT_BIT(OPT_VERIFY) | OPT_BIT(OPT_HELP),
        /* size 0: the mode's default, chosen once the mode is known */
        .defaults = { .port = DEFAULT_PORT, .timeout = DEF_TIMEOUT, .retry = 0, .size = 0,
                      .block = DEF_BLOCK, .rounds = DEF_ROUNDS, .warmup = DEF_WARMUP },
    },
    {
        .name = "barrier", .run = run_barrier,
        .options = OPT_BIT(OPT_NODES) | OPT_BIT(OPT_RANK) | OPT_BIT(OPT_COUNT) |
                   OPT_BIT(OPT_PORT) | OPT_BIT(OPT_RETRY) | OPT_BIT(OPT_TIMEOUT) |
                   OPT_BIT(OPT_HELP),
        /* nodes 0 and rank ULLONG_MAX: not given, which the command refuses */
        .defaults = { .port = DEFAULT_PORT, .timeout = DEF_TIMEOUT, .retry = DEF_PEER_RETRY,
                      .nodes = 0, .rank = ULLONG_MAX, .count = DEF_ROUNDS },
    },
    {
        .name = "pairwise", .run = run_pairwise, .operand = "PEER",
        .options = OPT_BIT(OPT_PORT) | OPT_BIT(OPT_MSG_SIZE) | OPT_BIT(OPT_BLOCK) |
                   OPT_BIT(OPT_ROUNDS) | OPT_BIT(OPT_WARMUP) | OPT_BIT(OPT_RETRY) |
                   OPT_BIT(OPT_TIMEOUT) | OPT_BIT(OPT_HELP),
        .defaults = { .port = PAIR_PORT, .timeout = DEF_TIMEOUT, .retry = DEF_PEER_RETRY,
                      .size = DEF_PP_SIZE, .block = 0, .rounds = DEF_ROUNDS,
                      .warmup = DEF_WARMUP },
    },
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        return bad_args("missing command: server or client");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const struct command *cmd = &commands[i];
        struct settings s = cmd->defaults;
        const char *operand = NULL;
        int rc;

        if (strcmp(argv[1], cmd->name))
            continue;
        rc = parse_options(cmd, argc - 1, argv + 1, &s, &operand);
        return rc != GO_ON ? rc : cmd->run(&s, operand);
    }
    return bad_args("unknown command '%s' (want server, client, barrier or pairwise)", argv[1]);
}
