/*
 * Unit tests for the wire codecs of proto/: the frame header and the
 * HELLO exchange (base.h), and each kind's payloads.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <string.h>

#include <zlib.h>

#include "proto/myrinet.h"
#include "proto/ps1.h"
#include "proto/telegraphos.h"

static const FabricHdr sample = {
    .magic = FABRIC_MAGIC,
    .version = FABRIC_VERSION,
    .kind = FABRIC_KIND_ETH,
    .type = FABRIC_TYPE_DATA,
    .flags = FABRIC_F_ROUTED,
    .src = 0x0102,
    .dst = 0x0304,
    .len = 0x0506,
    .send_time_ns = 0x1122334455667788ull,
    .deliver_time_ns = 0x99aabbccddeeff00ull,
};

/* The same header as it must appear on the wire, byte for byte. */
static const uint8_t sample_wire[FABRIC_HDR_LEN] = {
    'V', 'C', 'F', 'B',                         /* magic, little-endian */
    0x01,                                       /* version */
    0x01,                                       /* kind: eth */
    0x01,                                       /* type: data */
    0x01,                                       /* flags: routed */
    0x02, 0x01,                                 /* src */
    0x04, 0x03,                                 /* dst */
    0x06, 0x05, 0x00, 0x00,                     /* len */
    0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
    0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99,
};

static void test_layout(void)
{
    uint8_t buf[FABRIC_HDR_LEN + 1];

    memset(buf, 0xa5, sizeof(buf));
    fabric_hdr_encode(&sample, buf);
    g_assert_cmpmem(buf, FABRIC_HDR_LEN, sample_wire, FABRIC_HDR_LEN);
    g_assert_cmphex(buf[FABRIC_HDR_LEN], ==, 0xa5);    /* no overrun */
}

static void test_round_trip(void)
{
    static const FabricHdr cases[] = {
        { 0, 0, FABRIC_KIND_PS1, FABRIC_TYPE_BARRIER, 0, 0, FABRIC_NODE_ALL,
          0, 0, 0 },
        { 0, 0, FABRIC_KIND_TELEGRAPHOS, FABRIC_TYPE_CONTROL,
          FABRIC_F_FLAGS_MASK, FABRIC_NODE_NONE, 1023, FABRIC_MAX_PAYLOAD,
          G_MAXUINT64, 1 },
        { 0, 0, FABRIC_KIND_MYRINET, FABRIC_TYPE_SYNC, FABRIC_F_CORRUPTED,
          7, 8, 1, 1ull << 63, 1ull << 32 },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint8_t buf[FABRIC_HDR_LEN];
        FabricHdr h;

        fabric_hdr_encode(&cases[i], buf);
        g_assert_cmpint(fabric_hdr_decode(buf, &h), ==, FABRIC_HDR_OK);
        /* encode always writes the current magic and version */
        g_assert_cmphex(h.magic, ==, FABRIC_MAGIC);
        g_assert_cmpuint(h.version, ==, FABRIC_VERSION);
        g_assert_cmpuint(h.kind, ==, cases[i].kind);
        g_assert_cmpuint(h.type, ==, cases[i].type);
        g_assert_cmpuint(h.flags, ==, cases[i].flags);
        g_assert_cmpuint(h.src, ==, cases[i].src);
        g_assert_cmpuint(h.dst, ==, cases[i].dst);
        g_assert_cmpuint(h.len, ==, cases[i].len);
        g_assert_cmphex(h.send_time_ns, ==, cases[i].send_time_ns);
        g_assert_cmphex(h.deliver_time_ns, ==, cases[i].deliver_time_ns);
    }
}

static void test_decode_known_bytes(void)
{
    FabricHdr h;

    g_assert_cmpint(fabric_hdr_decode(sample_wire, &h), ==, FABRIC_HDR_OK);
    g_assert_cmpmem(&h, sizeof(h), &sample, sizeof(sample));
}

/* Decode the sample with one byte changed. */
static enum fabric_hdr_error decode_with(size_t offset, uint8_t value)
{
    uint8_t buf[FABRIC_HDR_LEN];
    FabricHdr h;

    memcpy(buf, sample_wire, sizeof(buf));
    buf[offset] = value;
    return fabric_hdr_decode(buf, &h);
}

static enum fabric_hdr_error decode_len(uint32_t len)
{
    uint8_t buf[FABRIC_HDR_LEN];
    FabricHdr h;

    memcpy(buf, sample_wire, sizeof(buf));
    fabric_put_le32(buf + 12, len);
    return fabric_hdr_decode(buf, &h);
}

static void test_errors(void)
{
    g_assert_cmpint(decode_with(0, 'v'), ==, FABRIC_HDR_BAD_MAGIC);
    g_assert_cmpint(decode_with(3, 'b'), ==, FABRIC_HDR_BAD_MAGIC);
    g_assert_cmpint(decode_with(4, 0), ==, FABRIC_HDR_BAD_VERSION);
    g_assert_cmpint(decode_with(4, 2), ==, FABRIC_HDR_BAD_VERSION);
    g_assert_cmpint(decode_with(5, 0), ==, FABRIC_HDR_BAD_KIND);
    g_assert_cmpint(decode_with(5, FABRIC_KIND_MAX + 1), ==,
                    FABRIC_HDR_BAD_KIND);
    g_assert_cmpint(decode_with(5, FABRIC_KIND_MAX), ==, FABRIC_HDR_OK);
    g_assert_cmpint(decode_with(6, 0), ==, FABRIC_HDR_BAD_TYPE);
    g_assert_cmpint(decode_with(6, FABRIC_TYPE_MAX + 1), ==,
                    FABRIC_HDR_BAD_TYPE);
    g_assert_cmpint(decode_with(6, FABRIC_TYPE_MAX), ==, FABRIC_HDR_OK);
    g_assert_cmpint(decode_with(7, 0x04), ==, FABRIC_HDR_BAD_FLAGS);
    g_assert_cmpint(decode_with(7, 0x80), ==, FABRIC_HDR_BAD_FLAGS);
    g_assert_cmpint(decode_with(7, FABRIC_F_FLAGS_MASK), ==, FABRIC_HDR_OK);
    g_assert_cmpint(decode_len(FABRIC_MAX_PAYLOAD), ==, FABRIC_HDR_OK);
    g_assert_cmpint(decode_len(FABRIC_MAX_PAYLOAD + 1), ==,
                    FABRIC_HDR_BAD_LEN);
    g_assert_cmpint(decode_len(G_MAXUINT32), ==, FABRIC_HDR_BAD_LEN);
    g_assert_cmpint(decode_len(0), ==, FABRIC_HDR_OK);
}

static void test_error_precedence(void)
{
    uint8_t buf[FABRIC_HDR_LEN];
    FabricHdr h;

    /* A header that is wrong everywhere reports the stream-level error. */
    memset(buf, 0xff, sizeof(buf));
    g_assert_cmpint(fabric_hdr_decode(buf, &h), ==, FABRIC_HDR_BAD_MAGIC);
    memcpy(buf, sample_wire, 4);
    g_assert_cmpint(fabric_hdr_decode(buf, &h), ==, FABRIC_HDR_BAD_VERSION);
    buf[4] = FABRIC_VERSION;
    g_assert_cmpint(fabric_hdr_decode(buf, &h), ==, FABRIC_HDR_BAD_LEN);
}

static void test_fatal_classification(void)
{
    g_assert_false(fabric_hdr_error_is_fatal(FABRIC_HDR_OK));
    g_assert_true(fabric_hdr_error_is_fatal(FABRIC_HDR_BAD_MAGIC));
    g_assert_true(fabric_hdr_error_is_fatal(FABRIC_HDR_BAD_VERSION));
    g_assert_true(fabric_hdr_error_is_fatal(FABRIC_HDR_BAD_LEN));
    g_assert_false(fabric_hdr_error_is_fatal(FABRIC_HDR_BAD_KIND));
    g_assert_false(fabric_hdr_error_is_fatal(FABRIC_HDR_BAD_TYPE));
    g_assert_false(fabric_hdr_error_is_fatal(FABRIC_HDR_BAD_FLAGS));
}

static void test_error_strings(void)
{
    const char *seen[FABRIC_HDR_BAD_LEN + 1];

    for (int e = FABRIC_HDR_OK; e <= FABRIC_HDR_BAD_LEN; e++) {
        seen[e] = fabric_hdr_error_str(e);
        g_assert_nonnull(seen[e]);
        g_assert_cmpstr(seen[e], !=, "?");
        for (int j = 0; j < e; j++) {
            g_assert_cmpstr(seen[e], !=, seen[j]);
        }
    }
    g_assert_cmpstr(fabric_hdr_error_str(FABRIC_HDR_BAD_MAGIC), ==,
                    "bad magic");
}

static void test_le_helpers(void)
{
    uint8_t b[8];

    fabric_put_le16(b, 0xbeef);
    g_assert_cmphex(b[0], ==, 0xef);
    g_assert_cmphex(b[1], ==, 0xbe);
    g_assert_cmphex(fabric_get_le16(b), ==, 0xbeef);
    fabric_put_le32(b, 0xdeadbeef);
    g_assert_cmphex(fabric_get_le32(b), ==, 0xdeadbeef);
    g_assert_cmphex(b[3], ==, 0xde);
    fabric_put_le64(b, 0x0123456789abcdefull);
    g_assert_cmphex(fabric_get_le64(b), ==, 0x0123456789abcdefull);
    g_assert_cmphex(b[0], ==, 0xef);
    g_assert_cmphex(b[7], ==, 0x01);
    /* high bits must not sign-extend */
    memset(b, 0xff, sizeof(b));
    g_assert_cmphex(fabric_get_le32(b), ==, 0xffffffffu);
    g_assert_cmphex(fabric_get_le64(b), ==, G_MAXUINT64);
}

/*
 * HELLO: three bytes (opcode, node id) for a free-running device; a fourth,
 * the flags, only when flags are set.
 */
static void test_hello(void)
{
    uint8_t pl[FABRIC_HELLO_MAX_LEN + 1];
    uint16_t node = 0;
    uint8_t flags = 0xff;

    g_assert_cmpuint(fabric_hello_encode(0x0302, 0, pl), ==, 3);
    g_assert_cmpmem(pl, 3, ((uint8_t[]){ FABRIC_CTL_HELLO, 2, 3 }), 3);
    g_assert_true(fabric_hello_decode(pl, 3, &node, &flags));
    g_assert_cmpuint(node, ==, 0x0302);
    g_assert_cmpuint(flags, ==, 0);
    g_assert_cmpuint(fabric_hello_encode(7, FABRIC_HELLO_F_LOCKSTEP, pl), ==,
                     4);
    g_assert_true(fabric_hello_decode(pl, 4, &node, &flags));
    g_assert_cmpuint(node, ==, 7);
    g_assert_cmpuint(flags, ==, FABRIC_HELLO_F_LOCKSTEP);
    /* unknown flags, a flags byte of 0, a wrong length or opcode: no */
    pl[3] = 0x80;
    g_assert_false(fabric_hello_decode(pl, 4, &node, &flags));
    pl[3] = 0;
    g_assert_false(fabric_hello_decode(pl, 4, &node, &flags));
    g_assert_false(fabric_hello_decode(pl, 2, &node, &flags));
    g_assert_false(fabric_hello_decode(pl, 5, &node, &flags));
    pl[0] = FABRIC_CTL_HELLO_ACK;
    g_assert_false(fabric_hello_decode(pl, 3, &node, &flags));
}

/* HELLO_ACK: the node count, then the kind's fields. */
static void test_hello_ack(void)
{
    FabricHelloAck in = { .nodes = 9, .extra_len = 2, .extra = { 3, 4 } };
    FabricHelloAck out;
    uint8_t pl[8];

    g_assert_cmpuint(fabric_hello_ack_encode(&in, pl), ==,
                     FABRIC_PS1_HELLO_ACK_LEN);
    g_assert_cmpmem(pl, 5, ((uint8_t[]){ FABRIC_CTL_HELLO_ACK, 9, 0, 3, 4 }),
                    5);
    g_assert_true(fabric_hello_ack_decode(pl, 5, FABRIC_PS1_HELLO_ACK_EXTRA,
                                          &out));
    g_assert_cmpuint(out.nodes, ==, 9);
    g_assert_cmpuint(out.extra[FABRIC_PS1_ACK_WIDTH], ==, 3);
    g_assert_cmpuint(out.extra[FABRIC_PS1_ACK_HEIGHT], ==, 4);
    /* a kind with fewer fields reads the node count alone */
    g_assert_true(fabric_hello_ack_decode(pl, 5, 0, &out));
    g_assert_cmpuint(out.extra_len, ==, 0);
    /* too short for the kind's fields, or not a HELLO_ACK */
    g_assert_false(fabric_hello_ack_decode(pl, 4, FABRIC_MYRI_HELLO_ACK_EXTRA,
                                           &out));
    g_assert_false(fabric_hello_ack_decode(pl, 5, 3, &out));
    pl[0] = FABRIC_CTL_REJECT;
    g_assert_false(fabric_hello_ack_decode(pl, 5, 0, &out));
    /* telegraphos: nothing after the count */
    in.extra_len = 0;
    g_assert_cmpuint(fabric_hello_ack_encode(&in, pl), ==,
                     FABRIC_TGR_HELLO_ACK_LEN);
}

/* REJECT: printable, bounded, terminated on decode. */
static void test_reject(void)
{
    g_autofree char *longer = g_strnfill(FABRIC_REASON_MAX + 40, 'x');
    uint8_t pl[FABRIC_REJECT_MAX_LEN];
    char out[16];
    size_t len;

    len = fabric_reject_encode("bad\x1b[2Jnode", pl);
    g_assert_cmpuint(len, ==, 1 + 11);
    g_assert_cmpuint(pl[0], ==, FABRIC_CTL_REJECT);
    g_assert_cmpmem(pl + 1, 11, "bad?[2Jnode", 11);
    g_assert_cmpuint(fabric_reject_encode(longer, pl), ==,
                     FABRIC_REJECT_MAX_LEN);
    /* decode cuts to the buffer and turns a peer's bytes printable */
    memcpy(pl, (uint8_t[]){ FABRIC_CTL_REJECT, 'o', 'k', 0x07, 0xff }, 5);
    g_assert_true(fabric_reject_decode(pl, 5, out, sizeof(out)));
    g_assert_cmpstr(out, ==, "ok??");
    g_assert_true(fabric_reject_decode(pl, 5, out, 3));
    g_assert_cmpstr(out, ==, "ok");
    g_assert_true(fabric_reject_decode(pl, 1, out, sizeof(out)));
    g_assert_cmpstr(out, ==, "");
    g_assert_false(fabric_reject_decode(pl, 0, out, sizeof(out)));
    pl[0] = FABRIC_CTL_HELLO;
    g_assert_false(fabric_reject_decode(pl, 5, out, sizeof(out)));
}

/* fabric_crc32 is zlib's crc32, on every length up to a Myrinet packet. */
static void test_crc32(void)
{
    g_autofree uint8_t *buf = g_malloc(FABRIC_MYRI_MAX_PACKET);
    GRand *r = g_rand_new_with_seed(12);

    g_assert_cmphex(fabric_crc32((const uint8_t *)"123456789", 9), ==,
                    0xcbf43926);
    g_assert_cmphex(fabric_crc32(buf, 0), ==, 0);
    for (size_t i = 0; i < FABRIC_MYRI_MAX_PACKET; i++) {
        buf[i] = g_rand_int(r);
    }
    for (size_t len = 0; len <= FABRIC_MYRI_MAX_PACKET;
         len = len < 64 ? len + 1 : len * 3 - 1) {
        g_assert_cmphex(fabric_crc32(buf, len), ==, crc32(0, buf, len));
    }
    g_assert_cmphex(fabric_crc32(buf, FABRIC_MYRI_MAX_PACKET), ==,
                    crc32(0, buf, FABRIC_MYRI_MAX_PACKET));
    g_rand_free(r);
}

/* ps1 DATA: encode, count, check, and the fabric's source rewrite. */
static void test_ps1_data(void)
{
    uint32_t words[FABRIC_PS1_MAX_WORDS];
    uint8_t pl[FABRIC_PS1_DATA_LEN(FABRIC_PS1_MAX_WORDS)];
    size_t len;

    for (unsigned i = 0; i < FABRIC_PS1_MAX_WORDS; i++) {
        words[i] = 0x01010101u * i + 0x80;
    }
    len = fabric_ps1_data_encode(fabric_ps1_header_word(5, 3), words, pl);
    g_assert_cmpuint(len, ==, FABRIC_PS1_DATA_LEN(3));
    g_assert_cmpuint(fabric_ps1_data_count(len), ==, 3);
    g_assert_cmphex(fabric_ps1_data_word(pl, 0), ==, 0x00050003);
    g_assert_cmphex(fabric_ps1_data_word(pl, 2), ==, words[1]);
    g_assert_true(fabric_ps1_data_intact(pl, 3));
    /* the source replaces the destination and the CRC still holds */
    fabric_ps1_data_set_node(pl, 3, 0x0102);
    g_assert_cmphex(fabric_ps1_data_word(pl, 0), ==, 0x01020003);
    g_assert_true(fabric_ps1_data_intact(pl, 3));
    /* one flipped bit anywhere is caught */
    for (size_t bit = 0; bit < 8 * len; bit++) {
        pl[bit / 8] ^= 1u << (bit % 8);
        g_assert_false(fabric_ps1_data_intact(pl, 3));
        pl[bit / 8] ^= 1u << (bit % 8);
    }
    /* lengths that no count gives */
    g_assert_cmpuint(fabric_ps1_data_count(0), ==, 0);
    g_assert_cmpuint(fabric_ps1_data_count(FABRIC_PS1_DATA_LEN(0)), ==, 0);
    g_assert_cmpuint(fabric_ps1_data_count(len + 1), ==, 0);
    g_assert_cmpuint(fabric_ps1_data_count(FABRIC_PS1_DATA_LEN(128)), ==, 0);
    g_assert_cmpuint(fabric_ps1_data_count(FABRIC_PS1_DATA_LEN(127)), ==, 127);
    len = fabric_ps1_data_encode(fabric_ps1_header_word(0, 127), words, pl);
    g_assert_true(fabric_ps1_data_intact(pl, 127));
}

static void test_ps1_routes(void)
{
    uint8_t pl[FABRIC_PS1_ROUTES_HDR_LEN + 3];
    uint16_t node = 0, count = 0;

    g_assert_cmpuint(fabric_ps1_routes_encode(2, 3, (uint8_t[]){ 0, 1, 2 },
                                              pl), ==, sizeof(pl));
    g_assert_cmpmem(pl, sizeof(pl),
                    ((uint8_t[]){ FABRIC_CTL_ROUTES, 2, 0, 3, 0, 0, 1, 2 }),
                    sizeof(pl));
    g_assert_true(fabric_ps1_routes_decode(pl, sizeof(pl), &node, &count));
    g_assert_cmpuint(node, ==, 2);
    g_assert_cmpuint(count, ==, 3);
    g_assert_false(fabric_ps1_routes_decode(pl, 4, &node, &count));
}

static void test_myri_split(void)
{
    uint8_t pl[3 + 10 + FABRIC_MYRI_CRC_LEN] = { 0x81, 0x82, 0x80, 0x01 };
    size_t route, packet;

    g_assert_true(fabric_myri_split(pl, sizeof(pl), &route, &packet));
    g_assert_cmpuint(route, ==, 3);
    g_assert_cmpuint(packet, ==, 10);
    /* all route bytes: no packet left */
    memset(pl, 0x80, sizeof(pl));
    g_assert_false(fabric_myri_split(pl, sizeof(pl), &route, &packet));
    g_assert_false(fabric_myri_split(pl, FABRIC_MYRI_CRC_LEN, &route,
                                     &packet));
    g_assert_cmpint(fabric_myri_out_port(0x80 | 3, 2, 16), ==, 5);
    g_assert_cmpint(fabric_myri_out_port(0x80 | 0x3f, 2, 16), ==, 1);
    g_assert_cmpint(fabric_myri_out_port(0x80 | 0x3d, 2, 16), ==, -1);
    g_assert_cmpint(fabric_myri_out_port(0x03, 2, 16), ==, -1);
}

static void test_tgr_codecs(void)
{
    FabricTgrNack n = { .op = FABRIC_TGR_READ_REQ, .reason = 5,
                        .seq = 0x11223344 }, m;
    uint8_t body[FABRIC_TGR_NACK_LEN];
    uint8_t pl[FABRIC_TGR_GROUP_LEN];
    uint16_t arg = 0;

    g_assert_cmpuint(fabric_tgr_nack_encode(&n, body), ==, 8);
    g_assert_cmpmem(body, 8, ((uint8_t[]){ FABRIC_TGR_READ_REQ, 5, 0, 0,
                                           0x44, 0x33, 0x22, 0x11 }), 8);
    g_assert_true(fabric_tgr_nack_decode(body, 8, &m));
    g_assert_cmpuint(m.op, ==, n.op);
    g_assert_cmpuint(m.reason, ==, n.reason);
    g_assert_cmphex(m.seq, ==, n.seq);
    g_assert_false(fabric_tgr_nack_decode(body, 7, &m));

    g_assert_cmpuint(fabric_tgr_group_encode(FABRIC_CTL_TGR_JOIN, 9, pl), ==,
                     3);
    g_assert_true(fabric_tgr_group_decode(pl, 3, &arg));
    g_assert_cmpuint(arg, ==, 9);
    g_assert_false(fabric_tgr_group_decode(pl, 4, &arg));
    pl[0] = FABRIC_CTL_HELLO;
    g_assert_false(fabric_tgr_group_decode(pl, 3, &arg));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/proto/layout", test_layout);
    g_test_add_func("/proto/round-trip", test_round_trip);
    g_test_add_func("/proto/decode-known-bytes", test_decode_known_bytes);
    g_test_add_func("/proto/errors", test_errors);
    g_test_add_func("/proto/error-precedence", test_error_precedence);
    g_test_add_func("/proto/fatal-classification", test_fatal_classification);
    g_test_add_func("/proto/error-strings", test_error_strings);
    g_test_add_func("/proto/le-helpers", test_le_helpers);
    g_test_add_func("/proto/hello", test_hello);
    g_test_add_func("/proto/hello-ack", test_hello_ack);
    g_test_add_func("/proto/reject", test_reject);
    g_test_add_func("/proto/crc32", test_crc32);
    g_test_add_func("/proto/ps1-data", test_ps1_data);
    g_test_add_func("/proto/ps1-routes", test_ps1_routes);
    g_test_add_func("/proto/myrinet-split", test_myri_split);
    g_test_add_func("/proto/telegraphos-codecs", test_tgr_codecs);
    return g_test_run();
}
