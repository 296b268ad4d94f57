/*
 * Unit tests for vcluster's trace module (host-cli/trace.c): the
 * pcapng reader on files that fabricd's capture.c writes and on files
 * built block by block here (malformed ones among them), the digest, and
 * the comparison of two runs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "capture.h"
#include "proto/base.h"
#include "vcluster/fabric/pcapng.h"
#include "trace.h"

#define INB PCAPNG_EPB_INBOUND
#define CRC PCAPNG_EPB_CRC_ERROR

/* One packet to write: its payload is fill(seed). */
typedef struct {
    unsigned iface;
    uint64_t ts;
    unsigned len;
    unsigned seed;
    uint32_t flags;
    const char *comment;
} Rec;

/* Every form a record's comment takes, on a 3-node fabric. */
static const Rec base[] = {
    { 1, 1000, 60, 0, INB, "node0>node1 send=900" },
    { 2, 1000, 64, 1, INB, "node0>node2 send=900" },
    { 0, 2000, 48, 2, INB | CRC, "node1>node0 send=1500" },
    { 2, 2500, 60, 3, INB, "node1>node2 send=2100 dropped rule=2" },
    { 1, 3000, 32, 4, INB, "node2>node1 send=2800 down" },
    { 0, 3500, 40, 5, INB, "node2>node0" },
    { 1, 4000, 36, 6, INB, "fabric>node1" },
    { 2, 4500, 44, 7, INB, NULL },
    { 0, 5000, 52, 8, 0, "odd comment" },
};
#define N_BASE G_N_ELEMENTS(base)

static uint8_t fill_byte(unsigned seed, unsigned i)
{
    return (uint8_t)((seed << 4) ^ i);
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = fill_byte(seed, i);
    }
}

/* Write recs with capture.c; poke_rec/poke_byte: xor one payload byte. */
static char *write_trace_poked(const char *dir, const char *name,
                               const Rec *recs, size_t n, int poke_rec,
                               unsigned poke_byte, uint8_t poke_xor)
{
    g_autoptr(GError) err = NULL;
    char *path = g_build_filename(dir, name, NULL);
    Capture *c = capture_open(path, 3, PCAP_LINKTYPE_USER0, &err);
    uint8_t buf[2048];

    g_assert_no_error(err);
    for (size_t i = 0; i < n; i++) {
        fill(buf, recs[i].len, recs[i].seed);
        if ((int)i == poke_rec) {
            buf[poke_byte] ^= poke_xor;
        }
        g_assert_true(capture_write(c, recs[i].iface, recs[i].ts, buf,
                                    recs[i].len, recs[i].flags,
                                    recs[i].comment, &err));
    }
    g_assert_true(capture_close(c, &err));
    return path;
}

static char *write_trace(const char *dir, const char *name, const Rec *recs,
                         size_t n)
{
    return write_trace_poked(dir, name, recs, n, -1, 0, 0);
}

static char *make_dir(void)
{
    char *dir = g_dir_make_tmp("trace-XXXXXX", NULL);

    g_assert_nonnull(dir);
    return dir;
}

/* rm -r of a test's directory (files only, and subdirectories). */
static void remove_dir(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *n;

    while (d && (n = g_dir_read_name(d))) {
        g_autofree char *p = g_build_filename(dir, n, NULL);

        if (g_file_test(p, G_FILE_TEST_IS_DIR)) {
            remove_dir(p);
        } else {
            g_unlink(p);
        }
    }
    if (d) {
        g_dir_close(d);
    }
    g_rmdir(dir);
}

/* Read all of a file; the number of records, or -1 with *err. */
static int read_all(const char *path, GError **err)
{
    g_autoptr(TraceReader) r = trace_reader_open(path, err);
    TraceRecord rec;
    GError *e = NULL;
    int n = 0;

    if (!r) {
        return -1;
    }
    while (trace_reader_next(r, &rec, &e)) {
        n++;
    }
    if (e) {
        g_propagate_error(err, e);
        return -1;
    }
    return n;
}

/* ---- reading back ---- */

static void test_read_fields(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *path = write_trace(dir, "trace-ps1.pcapng", base,
                                        N_BASE);
    g_autoptr(GError) err = NULL;
    g_autoptr(TraceReader) r = trace_reader_open(path, &err);
    uint64_t last_offset = 0;
    uint8_t expect[2048];
    TraceRecord rec;
    static const struct {
        gboolean parsed;
        const char *from, *to;
        gboolean has_send;
        uint64_t send;
        TraceVerdict verdict;
        gboolean has_rule;
        unsigned rule;
        const char *verdict_str;
    } want[N_BASE] = {
        { TRUE, "node0", "node1", TRUE, 900, TRACE_DELIVERED, FALSE, 0,
          "delivered" },
        { TRUE, "node0", "node2", TRUE, 900, TRACE_DELIVERED, FALSE, 0,
          "delivered" },
        { TRUE, "node1", "node0", TRUE, 1500, TRACE_CORRUPTED, FALSE, 0,
          "corrupted" },
        { TRUE, "node1", "node2", TRUE, 2100, TRACE_DROPPED, TRUE, 2,
          "dropped rule=2" },
        { TRUE, "node2", "node1", TRUE, 2800, TRACE_DOWN, FALSE, 0, "down" },
        { TRUE, "node2", "node0", FALSE, 0, TRACE_DELIVERED, FALSE, 0,
          "delivered" },
        { TRUE, "fabric", "node1", FALSE, 0, TRACE_DELIVERED, FALSE, 0,
          "delivered" },
        { FALSE, NULL, NULL, FALSE, 0, TRACE_DELIVERED, FALSE, 0,
          "delivered" },
        { FALSE, NULL, NULL, FALSE, 0, TRACE_DELIVERED, FALSE, 0,
          "delivered" },
    };

    g_assert_no_error(err);
    g_assert_nonnull(r);
    for (size_t i = 0; i < N_BASE; i++) {
        char name[16];

        g_assert_true(trace_reader_next(r, &rec, &err));
        g_assert_no_error(err);
        g_assert_cmpuint(rec.index, ==, i);
        g_assert_cmpuint(rec.offset, >, last_offset);
        g_assert_cmpuint(rec.offset % 4, ==, 0);
        last_offset = rec.offset;
        g_assert_cmpuint(rec.iface, ==, base[i].iface);
        g_snprintf(name, sizeof(name), "node%u", base[i].iface);
        g_assert_cmpstr(rec.iface_name, ==, name);
        g_assert_cmpuint(rec.linktype, ==, PCAP_LINKTYPE_USER0);
        g_assert_cmpuint(rec.ts_ns, ==, base[i].ts);
        g_assert_cmpuint(rec.caplen, ==, base[i].len);
        g_assert_cmpuint(rec.origlen, ==, base[i].len);
        fill(expect, base[i].len, base[i].seed);
        g_assert_cmpmem(rec.data, rec.caplen, expect, base[i].len);
        g_assert_true(rec.has_flags);
        g_assert_cmphex(rec.flags, ==, base[i].flags);
        g_assert_cmpstr(rec.comment, ==, base[i].comment);
        g_assert_cmpuint(rec.comment_len, ==,
                         base[i].comment ? strlen(base[i].comment) : 0);
        g_assert_cmpint(rec.parsed, ==, want[i].parsed);
        g_assert_cmpstr(rec.from, ==, want[i].from);
        g_assert_cmpstr(rec.to, ==, want[i].to);
        g_assert_cmpint(rec.has_send, ==, want[i].has_send);
        g_assert_cmpuint(rec.send_ns, ==, want[i].send);
        g_assert_cmpint(rec.verdict, ==, want[i].verdict);
        g_assert_cmpint(rec.has_rule, ==, want[i].has_rule);
        g_assert_cmpuint(rec.rule, ==, want[i].rule);
        g_autofree char *v = trace_verdict_string(&rec);
        g_assert_cmpstr(v, ==, want[i].verdict_str);
    }
    /* the end: FALSE without an error, and again */
    g_assert_false(trace_reader_next(r, &rec, &err));
    g_assert_no_error(err);
    g_assert_false(trace_reader_next(r, &rec, &err));
    g_assert_no_error(err);
    g_clear_pointer(&r, trace_reader_close);
    remove_dir(dir);
}

/* A trace with no packets: a header and interfaces only. */
static void test_read_empty_trace(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *path = write_trace(dir, "trace-eth.pcapng", base, 0);
    g_autoptr(GError) err = NULL;

    g_assert_cmpint(read_all(path, &err), ==, 0);
    g_assert_no_error(err);
    remove_dir(dir);
}

/* The comment's forms, old and new, and what does not parse. */
static void test_comment_forms(void)
{
    static const struct {
        const char *comment;
        uint32_t flags;
        gboolean parsed;
        const char *from, *to;
        gboolean has_send;
        uint64_t send;
        const char *verdict;
    } cases[] = {
        { "node0>node1", INB, TRUE, "node0", "node1", FALSE, 0, "delivered" },
        { "node0>node1", INB | CRC, TRUE, "node0", "node1", FALSE, 0,
          "corrupted" },
        { "node12>node3 send=0", INB, TRUE, "node12", "node3", TRUE, 0,
          "delivered" },
        { "node0>node1 send=18446744073709551615", INB, TRUE, "node0",
          "node1", TRUE, UINT64_MAX, "delivered" },
        { "node0>node1 send=5 dropped rule=4294967295", INB, TRUE, "node0",
          "node1", TRUE, 5, "dropped rule=4294967295" },
        { "node0>node1 send=5 dropped", INB, TRUE, "node0", "node1", TRUE, 5,
          "dropped" },
        { "node0>node1 send=5 down", INB | CRC, TRUE, "node0", "node1", TRUE,
          5, "down" },
        /* a word a later writer adds is skipped */
        { "node0>node1 send=5 hops=3", INB, TRUE, "node0", "node1", TRUE, 5,
          "delivered" },
        /* malformed: no fields, the verdict from the flags alone */
        { "node0>", INB, FALSE, NULL, NULL, FALSE, 0, "delivered" },
        { ">node1", INB, FALSE, NULL, NULL, FALSE, 0, "delivered" },
        { "node0 node1", INB, FALSE, NULL, NULL, FALSE, 0, "delivered" },
        { "node0>>node1", INB, FALSE, NULL, NULL, FALSE, 0, "delivered" },
        { "node0>node1 send=", INB, FALSE, NULL, NULL, FALSE, 0, "delivered" },
        { "node0>node1 send=-5", INB, FALSE, NULL, NULL, FALSE, 0,
          "delivered" },
        { "node0>node1 send=18446744073709551616", INB, FALSE, NULL, NULL,
          FALSE, 0, "delivered" },
        { "node0>node1 send=1 send=2", INB, FALSE, NULL, NULL, FALSE, 0,
          "delivered" },
        { "node0>node1 send=1 dropped down", INB | CRC, FALSE, NULL, NULL,
          FALSE, 0, "corrupted" },
        { "node0>node1 rule=2", INB, FALSE, NULL, NULL, FALSE, 0,
          "delivered" },
        { "node0>node1 send=1 dropped rule=4294967296", INB, FALSE, NULL,
          NULL, FALSE, 0, "delivered" },
        { "node0>node1  send=1", INB, FALSE, NULL, NULL, FALSE, 0,
          "delivered" },
        { "node0>node1 ", INB, FALSE, NULL, NULL, FALSE, 0, "delivered" },
        { "", INB, FALSE, NULL, NULL, FALSE, 0, "delivered" },
    };
    g_autofree char *dir = make_dir();
    Rec recs[G_N_ELEMENTS(cases)];

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        recs[i] = (Rec){ 1, 100 + i, 40, i, cases[i].flags,
                         cases[i].comment };
    }
    g_autofree char *path = write_trace(dir, "c.pcapng", recs,
                                        G_N_ELEMENTS(cases));
    g_autoptr(GError) err = NULL;
    g_autoptr(TraceReader) r = trace_reader_open(path, &err);
    TraceRecord rec;

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_test_message("comment '%s'", cases[i].comment);
        g_assert_true(trace_reader_next(r, &rec, &err));
        g_assert_cmpstr(rec.comment, ==, cases[i].comment);
        g_assert_cmpint(rec.parsed, ==, cases[i].parsed);
        g_assert_cmpstr(rec.from, ==, cases[i].from);
        g_assert_cmpstr(rec.to, ==, cases[i].to);
        g_assert_cmpint(rec.has_send, ==, cases[i].has_send);
        g_assert_cmpuint(rec.send_ns, ==, cases[i].send);
        g_autofree char *v = trace_verdict_string(&rec);
        g_assert_cmpstr(v, ==, cases[i].verdict);
    }
    g_assert_false(trace_reader_next(r, &rec, &err));
    g_assert_no_error(err);
    g_clear_pointer(&r, trace_reader_close);
    remove_dir(dir);
}

/* ---- files built block by block ---- */

/* Append a block: type, total length, body, total length again. */
static void put_block(GByteArray *file, uint32_t type, GByteArray *body)
{
    size_t start = file->len;

    pcapng_block_begin(file, type);
    g_byte_array_append(file, body->data, body->len);
    pcapng_block_end(file, start);
    g_byte_array_set_size(body, 0);
}

static void put_shb(GByteArray *file, GByteArray *body, const char *appl)
{
    pcapng_put32(body, PCAPNG_BYTE_ORDER_MAGIC);
    pcapng_put16(body, PCAPNG_VERSION_MAJOR);
    pcapng_put16(body, PCAPNG_VERSION_MINOR);
    pcapng_put32(body, 0xffffffff);
    pcapng_put32(body, 0xffffffff);
    if (appl) {
        pcapng_put_option(body, PCAPNG_OPT_SHB_USERAPPL, appl, strlen(appl));
        pcapng_put_endofopt(body);
    }
    put_block(file, PCAPNG_BT_SHB, body);
}

/* tsresol < 0: no if_tsresol option. */
static void put_idb(GByteArray *file, GByteArray *body, const char *name,
                    int tsresol, const int64_t *tsoffset)
{
    pcapng_put16(body, PCAP_LINKTYPE_USER0);
    pcapng_put16(body, 0);
    pcapng_put32(body, 0);
    if (tsoffset) {
        uint8_t le[8];

        fabric_put_le64(le, (uint64_t)*tsoffset);
        pcapng_put_option(body, PCAPNG_OPT_IF_TSOFFSET, le, 8);
    }
    if (name) {
        pcapng_put_option(body, PCAPNG_OPT_IF_NAME, name, strlen(name));
    }
    if (tsresol >= 0) {
        uint8_t r = tsresol;

        pcapng_put_option(body, PCAPNG_OPT_IF_TSRESOL, &r, 1);
    }
    pcapng_put_endofopt(body);
    put_block(file, PCAPNG_BT_IDB, body);
}

static void put_epb(GByteArray *file, GByteArray *body, const Rec *rec,
                    uint64_t units)
{
    uint8_t data[2048], le[4];

    fill(data, rec->len, rec->seed);
    pcapng_put32(body, rec->iface);
    pcapng_put32(body, units >> 32);
    pcapng_put32(body, (uint32_t)units);
    pcapng_put32(body, rec->len);
    pcapng_put32(body, rec->len);
    g_byte_array_append(body, data, rec->len);
    pcapng_pad4(body);
    /* options in the other order than capture.c's, for the digest */
    if (rec->comment) {
        pcapng_put_option(body, PCAPNG_OPT_COMMENT, rec->comment,
                          strlen(rec->comment));
    }
    fabric_put_le32(le, rec->flags);
    pcapng_put_option(body, PCAPNG_OPT_EPB_FLAGS, le, 4);
    pcapng_put_endofopt(body);
    put_block(file, PCAPNG_BT_EPB, body);
}

static char *save(const char *dir, const char *name, GByteArray *file)
{
    char *path = g_build_filename(dir, name, NULL);

    g_assert_true(g_file_set_contents(path, (const char *)file->data,
                                      file->len, NULL));
    return path;
}

/* The base records as a file of our own, with other header content. */
static GByteArray *build_base(void)
{
    GByteArray *file = g_byte_array_new();
    g_autoptr(GByteArray) body = g_byte_array_new();

    put_shb(file, body, "another writer, another application string");
    for (unsigned i = 0; i < 3; i++) {
        char name[16];

        g_snprintf(name, sizeof(name), "node%u", i);
        put_idb(file, body, name, 9, NULL);
    }
    /* an Interface Statistics Block (type 5), which the reader skips */
    pcapng_put32(body, 0);
    pcapng_put32(body, 0);
    pcapng_put32(body, 0);
    put_block(file, 5, body);
    for (size_t i = 0; i < N_BASE; i++) {
        put_epb(file, body, &base[i], base[i].ts);
    }
    return file;
}

static void test_tsresol(void)
{
    static const struct {
        int tsresol;            /* -1: no option (microseconds) */
        gboolean has_offset;
        int64_t offset_s;
        uint64_t units, ns;
    } cases[] = {
        { 9, FALSE, 0, 123456789012345ull, 123456789012345ull },
        { -1, FALSE, 0, 1500, 1500000 },
        { 6, FALSE, 0, 7, 7000 },
        { 0, FALSE, 0, 3, 3000000000ull },
        { 12, FALSE, 0, 123456789, 123456 },
        { 0x80 | 3, FALSE, 0, 12, 1500000000ull },     /* 2^-3 s */
        { 0x80 | 30, FALSE, 0, 1ull << 30, 1000000000ull },
        { 9, TRUE, 2, 5, 2000000005ull },
        { 9, TRUE, -1, 1000000007ull, 7 },
        { 40, FALSE, 0, UINT64_MAX, 0 },
    };
    g_autofree char *dir = make_dir();
    g_autoptr(GByteArray) file = g_byte_array_new();
    g_autoptr(GByteArray) body = g_byte_array_new();
    Rec rec = { 0, 0, 4, 1, INB, "node1>node0" };

    put_shb(file, body, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        put_idb(file, body, NULL, cases[i].tsresol,
                cases[i].has_offset ? &cases[i].offset_s : NULL);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        rec.iface = i;
        put_epb(file, body, &rec, cases[i].units);
    }
    g_autofree char *path = save(dir, "ts.pcapng", file);
    g_autoptr(GError) err = NULL;
    g_autoptr(TraceReader) r = trace_reader_open(path, &err);
    TraceRecord tr;

    g_assert_no_error(err);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_assert_true(trace_reader_next(r, &tr, &err));
        g_assert_no_error(err);
        g_assert_null(tr.iface_name);
        g_assert_cmpuint(tr.ts_ns, ==, cases[i].ns);
    }
    g_assert_false(trace_reader_next(r, &tr, &err));
    g_assert_no_error(err);
    g_clear_pointer(&r, trace_reader_close);

    /* a time before 0 or past 2^64 ns is an error */
    int64_t minus = -1;

    rec.iface = 0;
    g_byte_array_set_size(file, 0);
    put_shb(file, body, NULL);
    put_idb(file, body, NULL, 9, &minus);
    put_epb(file, body, &rec, 5);
    g_autofree char *neg = save(dir, "neg.pcapng", file);
    g_assert_cmpint(read_all(neg, &err), ==, -1);
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_FORMAT);
    g_assert_nonnull(strstr(err->message, "timestamp out of range"));
    g_clear_error(&err);

    g_byte_array_set_size(file, 0);
    put_shb(file, body, NULL);
    put_idb(file, body, NULL, 0, NULL);         /* seconds */
    put_epb(file, body, &rec, 1ull << 40);
    g_autofree char *big = save(dir, "big.pcapng", file);
    g_assert_cmpint(read_all(big, &err), ==, -1);
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_FORMAT);
    g_assert_nonnull(strstr(err->message, "timestamp out of range"));
    remove_dir(dir);
}

/* A second section starts over with its own interfaces. */
static void test_sections(void)
{
    g_autofree char *dir = make_dir();
    g_autoptr(GByteArray) file = g_byte_array_new();
    g_autoptr(GByteArray) body = g_byte_array_new();
    Rec rec = { 0, 0, 8, 1, INB, "node1>node0" };
    g_autoptr(GError) err = NULL;
    TraceRecord tr;

    put_shb(file, body, NULL);
    put_idb(file, body, "node0", 9, NULL);
    put_epb(file, body, &rec, 10);
    put_shb(file, body, NULL);
    put_idb(file, body, "x0", 6, NULL);
    put_epb(file, body, &rec, 10);
    g_autofree char *path = save(dir, "s.pcapng", file);
    g_autoptr(TraceReader) r = trace_reader_open(path, &err);

    g_assert_true(trace_reader_next(r, &tr, &err));
    g_assert_cmpstr(tr.iface_name, ==, "node0");
    g_assert_cmpuint(tr.ts_ns, ==, 10);
    g_assert_true(trace_reader_next(r, &tr, &err));
    g_assert_cmpstr(tr.iface_name, ==, "x0");
    g_assert_cmpuint(tr.ts_ns, ==, 10000);
    g_assert_cmpuint(tr.index, ==, 1);          /* frames count on */
    g_assert_false(trace_reader_next(r, &tr, &err));
    g_assert_no_error(err);
    g_clear_pointer(&r, trace_reader_close);

    /* the second section's interface 1 does not exist */
    g_byte_array_set_size(file, 0);
    put_shb(file, body, NULL);
    put_idb(file, body, NULL, 9, NULL);
    put_idb(file, body, NULL, 9, NULL);
    put_shb(file, body, NULL);
    put_idb(file, body, NULL, 9, NULL);
    rec.iface = 1;
    put_epb(file, body, &rec, 10);
    g_autofree char *bad = save(dir, "s2.pcapng", file);
    g_assert_cmpint(read_all(bad, &err), ==, -1);
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_FORMAT);
    g_assert_nonnull(strstr(err->message, "packet on interface 1, but the "
                            "section describes 1"));
    remove_dir(dir);
}

/* ---- malformed files ---- */

/* Reading path fails with a format error naming it and `at byte OFF`. */
static void expect_format_error(const char *path, uint64_t off,
                                const char *what)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *at = g_strdup_printf("%s: at byte %" G_GUINT64_FORMAT
                                          ": ", path, off);

    g_assert_cmpint(read_all(path, &err), ==, -1);
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_FORMAT);
    g_test_message("%s", err->message);
    g_assert_true(g_str_has_prefix(err->message, at));
    g_assert_nonnull(strstr(err->message, what));
}

/* Every prefix of a small trace: a whole number of blocks reads, with the
 * records in it; any other length is an error, never a crash. */
static void test_truncations(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *full = write_trace(dir, "full.pcapng", base, 4);
    g_autofree char *data = NULL;
    g_autofree char *cut = g_build_filename(dir, "cut.pcapng", NULL);
    g_autoptr(GHashTable) ends = g_hash_table_new(NULL, NULL);
    size_t size, pos = 0;
    unsigned blocks = 0;

    g_assert_true(g_file_get_contents(full, &data, &size, NULL));
    /* where each block ends, and how many packets precede that point */
    while (pos < size) {
        uint32_t type = fabric_get_le32((uint8_t *)data + pos);

        pos += fabric_get_le32((uint8_t *)data + pos + 4);
        blocks += type == 6;
        g_hash_table_insert(ends, GSIZE_TO_POINTER(pos),
                            GUINT_TO_POINTER(blocks + 1));
    }
    g_assert_cmpuint(blocks, ==, 4);
    for (size_t len = 0; len < size; len++) {
        g_autoptr(GError) err = NULL;
        gpointer whole = g_hash_table_lookup(ends, GSIZE_TO_POINTER(len));
        int n;

        g_assert_true(g_file_set_contents(cut, data, len, NULL));
        n = read_all(cut, &err);
        if (whole) {
            g_assert_no_error(err);
            g_assert_cmpint(n, ==, GPOINTER_TO_UINT(whole) - 1);
        } else {
            g_assert_cmpint(n, ==, -1);
            g_assert_error(err, TRACE_ERROR, TRACE_ERROR_FORMAT);
            g_assert_true(g_str_has_prefix(err->message, cut));
            g_assert_nonnull(strstr(err->message, ": at byte "));
        }
    }
    g_assert_cmpint(read_all(full, NULL), ==, 4);
    remove_dir(dir);
}

static void test_malformed(void)
{
    g_autofree char *dir = make_dir();
    g_autoptr(GByteArray) good = build_base();
    g_autoptr(GByteArray) f = g_byte_array_new();
    uint32_t shb_len = fabric_get_le32(good->data + 4);
    uint32_t idb_len = fabric_get_le32(good->data + shb_len + 4);
    /* the ISB, then the first EPB */
    uint32_t isb_off = shb_len + 3 * idb_len;
    uint32_t epb_off = isb_off + fabric_get_le32(good->data + isb_off + 4);
    uint32_t epb_len = fabric_get_le32(good->data + epb_off + 4);
    g_autoptr(GError) err = NULL;

#define CASE(name, mutate, off, what)                                       \
    do {                                                                    \
        g_byte_array_set_size(f, 0);                                        \
        g_byte_array_append(f, good->data, good->len);                      \
        { mutate; }                                                         \
        g_autofree char *p_ = save(dir, name, f);                           \
        expect_format_error(p_, off, what);                                 \
    } while (0)

    /* the unmodified file reads */
    g_autofree char *ok = save(dir, "good.pcapng", good);
    g_assert_cmpint(read_all(ok, &err), ==, N_BASE);
    g_assert_no_error(err);

    CASE("empty.pcapng", g_byte_array_set_size(f, 0), 0, "empty file");
    /* a classic pcap file's magic, and text */
    CASE("pcap.pcapng", fabric_put_le32(f->data, 0xa1b2c3d4), 0,
         "not a pcapng file");
    CASE("text.pcapng", memcpy(f->data, "hello, world", 12), 0,
         "not a pcapng file");
    CASE("bigendian.pcapng",
         { f->data[8] = 0x1a; f->data[9] = 0x2b; f->data[10] = 0x3c;
           f->data[11] = 0x4d; }, 0, "big-endian section");
    CASE("magic.pcapng", fabric_put_le32(f->data + 8, 0x12345678), 8,
         "bad byte-order magic 0x12345678");
    CASE("version.pcapng", fabric_put_le16(f->data + 12, 2), 12,
         "pcapng version 2.0");
    /* block lengths: odd, too small, huge, past the end, trailing differs */
    CASE("odd.pcapng", fabric_put_le32(f->data + epb_off + 4, epb_len + 2),
         epb_off + 4, "bad block length");
    CASE("small.pcapng", fabric_put_le32(f->data + epb_off + 4, 8),
         epb_off + 4, "bad block length 8");
    CASE("huge.pcapng", fabric_put_le32(f->data + epb_off + 4, 0xfffffffc),
         epb_off + 4, "block length 4294967292 exceeds the limit");
    CASE("past.pcapng", fabric_put_le32(f->data + epb_off + 4, 512 * 1024),
         epb_off + 4, "truncated block: length 524288");
    CASE("trailer.pcapng",
         fabric_put_le32(f->data + epb_off + epb_len - 4, epb_len + 4),
         epb_off + epb_len - 4, "trailing length");
    CASE("shb-short.pcapng",
         { g_byte_array_set_size(f, 0);
           pcapng_put32(f, PCAPNG_BT_SHB); pcapng_put32(f, 24);
           pcapng_put32(f, PCAPNG_BYTE_ORDER_MAGIC); pcapng_put32(f, 1);
           pcapng_put32(f, 0); pcapng_put32(f, 24); }, 4,
         "section header of 24 bytes is too short");
    /* an EPB shorter than its fixed part; caplen past the block */
    CASE("epb-short.pcapng",
         { g_byte_array_set_size(f, epb_off);
           pcapng_put32(f, PCAPNG_BT_EPB); pcapng_put32(f, 16);
           pcapng_put32(f, 0); pcapng_put32(f, 16); },
         epb_off + 4, "packet block of 16 bytes is too short");
    CASE("caplen.pcapng", fabric_put_le32(f->data + epb_off + 20, 4096),
         epb_off + 20, "captured length 4096 is longer than the block");
    CASE("iface.pcapng", fabric_put_le32(f->data + epb_off + 8, 3),
         epb_off + 8, "packet on interface 3, but the section describes 3");
    /* an option whose length runs past the block: the first EPB's first
     * option (the comment) follows its 60 bytes of data */
    CASE("option.pcapng",
         fabric_put_le16(f->data + epb_off + 28 + 60 + 2, 200),
         epb_off + 28 + 60, "option 1 of 200 bytes runs past");
    CASE("flags.pcapng",
         { /* turn the comment option into an epb_flags of 20 bytes */
           fabric_put_le16(f->data + epb_off + 28 + 60, 2); },
         epb_off + 28 + 60, "epb_flags of 20 bytes");
    CASE("tsresol.pcapng",
         { /* node0's if_name (5 bytes) claims to be an if_tsresol */
           fabric_put_le16(f->data + shb_len + 16, 9); },
         shb_len + 16, "if_tsresol of 5 bytes");
    /* a Simple Packet Block is refused, not skipped */
    CASE("spb.pcapng", fabric_put_le32(f->data + isb_off, 3), isb_off,
         "block type 3");
    CASE("pb.pcapng", fabric_put_le32(f->data + isb_off, 2), isb_off,
         "block type 2");
    /* garbage after the last block */
    CASE("tail.pcapng", g_byte_array_append(f, (const uint8_t *)"xyz", 3),
         good->len, "truncated block: 3 bytes left");
#undef CASE

    /* not a file at all */
    g_assert_cmpint(read_all(dir, &err), ==, -1);
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_IO);
    g_assert_nonnull(strstr(err->message, "not a regular file"));
    g_clear_error(&err);
    g_autofree char *missing = g_build_filename(dir, "missing", NULL);
    g_assert_cmpint(read_all(missing, &err), ==, -1);
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_IO);
    g_assert_true(g_str_has_prefix(err->message, missing));
    remove_dir(dir);
}

/* Random bytes changed in a small file: an error or records, no crash. */
static void test_mutations(void)
{
    g_autofree char *dir = make_dir();
    g_autoptr(GByteArray) good = build_base();
    g_autofree char *path = g_build_filename(dir, "m.pcapng", NULL);
    GRand *rand = g_rand_new_with_seed(14);
    unsigned errors = 0;

    for (unsigned i = 0; i < 3000; i++) {
        g_autoptr(GByteArray) f = g_byte_array_new();
        g_autoptr(GError) err = NULL;
        g_autofree char *hex = NULL;
        char *paths[] = { path, NULL };

        g_byte_array_append(f, good->data, good->len);
        for (unsigned k = g_rand_int_range(rand, 1, 4); k > 0; k--) {
            f->data[g_rand_int_range(rand, 0, f->len)] =
                g_rand_int_range(rand, 0, 256);
        }
        g_assert_true(g_file_set_contents(path, (const char *)f->data,
                                          f->len, NULL));
        if (!trace_digest_files(paths, &hex, &err)) {
            g_assert_error(err, TRACE_ERROR, TRACE_ERROR_FORMAT);
            g_assert_true(g_str_has_prefix(err->message, path));
            g_assert_null(hex);
            errors++;
        } else {
            g_assert_cmpuint(strlen(hex), ==, 64);
        }
    }
    g_test_message("%u of 3000 mutated files were refused", errors);
    g_assert_cmpuint(errors, >, 100);
    g_rand_free(rand);
    remove_dir(dir);
}

/* ---- digest ---- */

static char *digest1(const char *path)
{
    char *paths[] = { (char *)path, NULL };
    g_autoptr(GError) err = NULL;
    char *hex = NULL;

    g_assert_true(trace_digest_files(paths, &hex, &err));
    g_assert_no_error(err);
    return hex;
}

static void test_digest(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *a = write_trace(dir, "a.pcapng", base, N_BASE);
    g_autofree char *b = write_trace(dir, "b.pcapng", base, N_BASE);
    g_autofree char *da = digest1(a), *db = digest1(b);
    Rec v[N_BASE];
    g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func(g_free);

    /* 64 lowercase hex digits, the same for the same records */
    g_assert_cmpuint(strlen(da), ==, 64);
    for (const char *p = da; *p; p++) {
        g_assert_true(g_ascii_isxdigit(*p) && !g_ascii_isupper(*p));
    }
    g_assert_cmpstr(da, ==, db);
    g_autofree char *again = digest1(a);
    g_assert_cmpstr(again, ==, da);

    /* another writer's headers, block order of options, an ISB: the same */
    g_autoptr(GByteArray) own = build_base();
    g_autofree char *o = save(dir, "own.pcapng", own);
    g_autofree char *downer = digest1(o);
    g_assert_cmpstr(downer, ==, da);

    /* each change gives a digest of its own */
    g_ptr_array_add(seen, g_strdup(da));
#define VARIANT(name, change)                                               \
    do {                                                                    \
        memcpy(v, base, sizeof(v));                                         \
        { change; }                                                         \
        g_autofree char *p_ = write_trace(dir, name, v, N_BASE);            \
        char *d_ = digest1(p_);                                             \
        for (guint k = 0; k < seen->len; k++) {                             \
            g_assert_cmpstr(d_, !=, g_ptr_array_index(seen, k));            \
        }                                                                   \
        g_ptr_array_add(seen, d_);                                          \
    } while (0)
    VARIANT("ts.pcapng", v[4].ts += 1);
    VARIANT("flag.pcapng", v[5].flags |= CRC);
    VARIANT("comment.pcapng", v[1].comment = "node0>node2 send=901");
    VARIANT("nocomment.pcapng", v[8].comment = NULL);
    VARIANT("emptycomment.pcapng", v[7].comment = "");
    VARIANT("iface.pcapng", v[0].iface = 2);
    VARIANT("len.pcapng", v[3].len -= 1);
#undef VARIANT
    /* one payload byte */
    g_autofree char *poked = write_trace_poked(dir, "byte.pcapng", base,
                                               N_BASE, 6, 17, 0x01);
    g_autofree char *dp = digest1(poked);
    for (guint k = 0; k < seen->len; k++) {
        g_assert_cmpstr(dp, !=, g_ptr_array_index(seen, k));
    }
    /* one record fewer */
    g_autofree char *fewer = write_trace(dir, "short.pcapng", base,
                                         N_BASE - 1);
    g_autofree char *df = digest1(fewer);
    for (guint k = 0; k < seen->len; k++) {
        g_assert_cmpstr(df, !=, g_ptr_array_index(seen, k));
    }
    remove_dir(dir);
}

/* Several files: their order counts, and so does where one ends. */
static void test_digest_files(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *x = write_trace(dir, "x", base, 4);
    g_autofree char *y = write_trace(dir, "y", base + 4, N_BASE - 4);
    g_autofree char *x3 = write_trace(dir, "x3", base, 3);
    g_autofree char *y3 = write_trace(dir, "y3", base + 3, N_BASE - 3);
    g_autofree char *all = write_trace(dir, "all", base, N_BASE);
    char *xy[] = { x, y, NULL }, *yx[] = { y, x, NULL };
    char *xy3[] = { x3, y3, NULL }, *one[] = { all, NULL };
    char *none[] = { NULL };
    char *broken[] = { x, dir, NULL };
    g_autofree char *hxy = NULL, *hyx = NULL, *hxy3 = NULL, *hone = NULL;
    g_autofree char *again = NULL, *hnone = NULL, *hbroken = NULL;
    g_autoptr(GError) err = NULL;

    g_assert_true(trace_digest_files(xy, &hxy, &err));
    g_assert_true(trace_digest_files(xy, &again, &err));
    g_assert_true(trace_digest_files(yx, &hyx, &err));
    g_assert_true(trace_digest_files(xy3, &hxy3, &err));
    g_assert_true(trace_digest_files(one, &hone, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(hxy, ==, again);
    g_assert_cmpstr(hxy, !=, hyx);
    g_assert_cmpstr(hxy, !=, hxy3);
    g_assert_cmpstr(hxy, !=, hone);
    g_assert_false(trace_digest_files(none, &hnone, &err));
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_EMPTY);
    g_assert_null(hnone);
    g_clear_error(&err);
    g_assert_false(trace_digest_files(broken, &hbroken, &err));
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_IO);
    g_assert_null(hbroken);
    remove_dir(dir);
}

/* ---- compare ---- */

/* Compare base (as trace-ps1.pcapng) with v; check the report. */
static void expect_report(const Rec *v, size_t nv, int poke_rec,
                          unsigned poke_byte, const char *want)
{
    g_autofree char *dir = make_dir();
    g_autofree char *da = g_build_filename(dir, "a", NULL);
    g_autofree char *db = g_build_filename(dir, "b", NULL);
    g_autoptr(GError) err = NULL;
    g_autofree char *report = NULL;
    gboolean same;

    g_assert_cmpint(g_mkdir(da, 0700), ==, 0);
    g_assert_cmpint(g_mkdir(db, 0700), ==, 0);
    g_autofree char *a = write_trace(da, "trace-ps1.pcapng", base, N_BASE);
    g_autofree char *b = write_trace_poked(db, "trace-ps1.pcapng", v, nv,
                                           poke_rec, poke_byte, 0xff);
    char *la[] = { a, NULL }, *lb[] = { b, NULL };

    same = trace_compare_files(la, lb, &report, &err);
    g_assert_no_error(err);
    g_assert_cmpstr(report, ==, want);
    g_assert_cmpint(same, ==, !strcmp(want, "identical"));
    g_clear_pointer(&report, g_free);
    /* the same through the run directories */
    same = trace_compare_runs(da, db, &report, &err);
    g_assert_no_error(err);
    g_assert_cmpstr(report, ==, want);
    g_assert_cmpint(same, ==, !strcmp(want, "identical"));
    remove_dir(dir);
}

static void test_compare(void)
{
    Rec v[N_BASE];

#define REPORT(change, want)                                                \
    do {                                                                    \
        memcpy(v, base, sizeof(v));                                         \
        { change; }                                                         \
        expect_report(v, N_BASE, -1, 0, want);                              \
    } while (0)
#define FIRST "first difference: trace-ps1.pcapng "
    REPORT((void)0, "identical");
    REPORT(v[3].ts = 2750,
           FIRST "frame #4 (node1>node2) at 2500 ns: timestamp 2500 vs "
           "2750 ns");
    REPORT(v[0].comment = "node0>node1 send=900 dropped rule=2",
           FIRST "frame #1 (node0>node1) at 1000 ns: verdict delivered vs "
           "dropped rule=2");
    REPORT(v[3].comment = "node1>node2 send=2100 dropped rule=3",
           FIRST "frame #4 (node1>node2) at 2500 ns: verdict dropped rule=2 "
           "vs dropped rule=3");
    REPORT(v[3].comment = "node1>node2 send=2100 down",
           FIRST "frame #4 (node1>node2) at 2500 ns: verdict dropped rule=2 "
           "vs down");
    REPORT(v[1].flags |= CRC,
           FIRST "frame #2 (node0>node2) at 1000 ns: verdict delivered vs "
           "corrupted");
    REPORT(v[5].flags = 0,
           FIRST "frame #6 (node2>node0) at 3500 ns: flags 0x00000001 vs "
           "0x00000000");
    REPORT(v[1].comment = "node0>node2 send=950",
           FIRST "frame #2 (node0>node2) at 1000 ns: send time 900 vs 950 "
           "ns");
    REPORT(v[6].comment = "node0>node1",
           FIRST "frame #7 (fabric>node1) at 4000 ns: link fabric>node1 vs "
           "node0>node1");
    REPORT(v[0].iface = 2,
           FIRST "frame #1 (node0>node1) at 1000 ns: interface node1 vs "
           "node2");
    REPORT(v[2].len = 50,
           FIRST "frame #3 (node1>node0) at 2000 ns: length 48 vs 50 bytes");
    REPORT(v[8].comment = "odd comment!",
           FIRST "frame #9 (node0) at 5000 ns: comment \"odd comment\" vs "
           "\"odd comment!\"");
    REPORT(v[7].comment = "x\ty",
           FIRST "frame #8 (node2) at 4500 ns: comment none vs \"x\\ty\"");
    REPORT(v[0].comment = "node0>node1 send=900 hops=2",
           FIRST "frame #1 (node0>node1) at 1000 ns: comment \"node0>node1 "
           "send=900\" vs \"node0>node1 send=900 hops=2\"");
    /* the first of two differences */
    REPORT({ v[2].ts = 2001; v[5].flags |= CRC; },
           FIRST "frame #3 (node1>node0) at 2000 ns: timestamp 2000 vs "
           "2001 ns");
#undef REPORT

    /* one payload byte: byte 40 of frame #2 is 0x10 ^ 40 = 0x38 */
    g_assert_cmpuint(fill_byte(1, 40), ==, 0x38);
    expect_report(base, N_BASE, 1, 40,
                  FIRST "frame #2 (node0>node2) at 1000 ns: payload differs "
                  "at byte 40 (0x38 vs 0xc7)");
    expect_report(base, N_BASE, 8, 0,
                  FIRST "frame #9 (node0) at 5000 ns: payload differs at "
                  "byte 0 (0x80 vs 0x7f)");
    /* a record only one run has */
    expect_report(base, N_BASE - 2, -1, 0,
                  FIRST "frame #8 (node2) at 4500 ns: only in the first run");
    Rec more[N_BASE + 1];

    memcpy(more, base, sizeof(base));
    more[N_BASE] = (Rec){ 1, 6000, 20, 9, INB, "node2>node1 send=5900" };
    expect_report(more, N_BASE + 1, -1, 0,
                  FIRST "frame #10 (node2>node1) at 6000 ns: only in the "
                  "second run");
#undef FIRST
}

/* Two fabrics: the difference earliest in virtual time is the first. */
static void test_compare_runs(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *da = g_build_filename(dir, "run-a", NULL);
    g_autofree char *db = g_build_filename(dir, "run-b", NULL);
    g_autofree char *dc = g_build_filename(dir, "run-c", NULL);
    g_autofree char *de = g_build_filename(dir, "run-empty", NULL);
    g_autoptr(GError) err = NULL;
    g_autofree char *report = NULL;
    Rec v[N_BASE];

    g_assert_cmpint(g_mkdir(da, 0700), ==, 0);
    g_assert_cmpint(g_mkdir(db, 0700), ==, 0);
    g_assert_cmpint(g_mkdir(dc, 0700), ==, 0);
    g_assert_cmpint(g_mkdir(de, 0700), ==, 0);
    g_free(write_trace(da, "trace-ps1.pcapng", base, N_BASE));
    g_free(write_trace(da, "trace-eth.pcapng", base + 2, 5));
    /* not traces: ignored */
    g_free(write_trace(da, "other.pcapng", base, 1));
    g_free(write_trace(da, "trace-x.txt", base, 1));
    g_free(write_trace(de, "notes.pcapng", base, 1));

    /* run b: ps1 differs from frame #5 (3000 ns) on, and so does eth from
     * its frame #3, the same copy */
    memcpy(v, base, sizeof(v));
    v[6].flags = 0;
    v[4].comment = "node2>node1 send=2800 dropped rule=7";
    g_free(write_trace(db, "trace-ps1.pcapng", v, N_BASE));
    g_free(write_trace(db, "trace-eth.pcapng", v + 2, 5));

    g_auto(GStrv) list = trace_list_run(da, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(g_strv_length(list), ==, 2);
    g_assert_true(g_str_has_suffix(list[0], "/trace-eth.pcapng"));
    g_assert_true(g_str_has_suffix(list[1], "/trace-ps1.pcapng"));

    g_assert_true(trace_compare_runs(da, da, &report, &err));
    g_assert_cmpstr(report, ==, "identical");
    g_clear_pointer(&report, g_free);

    /* both at 3000 ns: a tie goes to the earlier file by name, eth */
    g_assert_false(trace_compare_runs(da, db, &report, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(report, ==, "first difference: trace-eth.pcapng frame #3 "
                    "(node2>node1) at 3000 ns: verdict down vs dropped "
                    "rule=7");
    g_clear_pointer(&report, g_free);

    /* the eth difference later than ps1's: ps1's is reported */
    g_autofree char *b_eth = g_build_filename(db, "trace-eth.pcapng", NULL);
    g_unlink(b_eth);
    memcpy(v, base, sizeof(v));
    v[8].ts = 5001;
    g_free(write_trace(db, "trace-eth.pcapng", v + 4, 5));
    g_autofree char *a_eth = g_build_filename(da, "trace-eth.pcapng", NULL);
    g_unlink(a_eth);
    g_free(write_trace(da, "trace-eth.pcapng", base + 4, 5));
    g_assert_false(trace_compare_runs(da, db, &report, &err));
    g_assert_cmpstr(report, ==, "first difference: trace-ps1.pcapng frame #5 "
                    "(node2>node1) at 3000 ns: verdict down vs dropped "
                    "rule=7");
    g_clear_pointer(&report, g_free);

    /* a fabric's trace only one run has */
    g_free(write_trace(dc, "trace-ps1.pcapng", base, N_BASE));
    g_assert_false(trace_compare_runs(da, dc, &report, &err));
    g_assert_cmpstr(report, ==, "first difference: trace-eth.pcapng: only "
                    "in the first run");
    g_clear_pointer(&report, g_free);
    g_assert_false(trace_compare_runs(dc, da, &report, &err));
    g_assert_cmpstr(report, ==, "first difference: trace-eth.pcapng: only "
                    "in the second run");
    g_clear_pointer(&report, g_free);
    g_free(write_trace(dc, "trace-tgr.pcapng", base, N_BASE));
    g_free(write_trace(dc, "trace-eth.pcapng", base + 4, 5));
    g_assert_false(trace_compare_runs(da, dc, &report, &err));
    g_assert_cmpstr(report, ==, "first difference: trace-tgr.pcapng: only "
                    "in the second run");
    g_clear_pointer(&report, g_free);

    /* the lists of files: a missing fabric there too */
    char *la[] = { list[0], list[1], NULL }, *lb[] = { list[0], NULL };
    g_assert_false(trace_compare_files(la, lb, &report, &err));
    g_assert_cmpstr(report, ==, "first difference: trace-ps1.pcapng: only "
                    "in the first run");
    g_clear_pointer(&report, g_free);

    /* a run without traces, or a broken one, is an error, not a verdict */
    g_assert_false(trace_compare_runs(da, de, &report, &err));
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_EMPTY);
    g_assert_nonnull(strstr(err->message, "run-empty: no trace-*.pcapng"));
    g_assert_null(report);
    g_clear_error(&err);
    g_autofree char *broken = g_build_filename(dc, "trace-tgr.pcapng", NULL);
    g_assert_true(g_file_set_contents(broken, "\x0a\x0d\x0d\x0a", 4, NULL));
    g_assert_false(trace_compare_runs(dc, dc, &report, &err));
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_FORMAT);
    g_assert_null(report);
    g_clear_error(&err);
    g_autofree char *nothere = g_build_filename(dir, "nothere", NULL);
    g_assert_false(trace_compare_runs(da, nothere, &report, &err));
    g_assert_error(err, TRACE_ERROR, TRACE_ERROR_IO);
    g_assert_null(report);
    remove_dir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/trace/read-fields", test_read_fields);
    g_test_add_func("/trace/read-empty-trace", test_read_empty_trace);
    g_test_add_func("/trace/comment-forms", test_comment_forms);
    g_test_add_func("/trace/tsresol", test_tsresol);
    g_test_add_func("/trace/sections", test_sections);
    g_test_add_func("/trace/truncations", test_truncations);
    g_test_add_func("/trace/malformed", test_malformed);
    g_test_add_func("/trace/mutations", test_mutations);
    g_test_add_func("/trace/digest", test_digest);
    g_test_add_func("/trace/digest-files", test_digest_files);
    g_test_add_func("/trace/compare", test_compare);
    g_test_add_func("/trace/compare-runs", test_compare_runs);
    return g_test_run();
}
