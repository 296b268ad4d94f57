/*
 * Unit tests for the shared wire header (proto/fabric-proto.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <string.h>

#include "proto/fabric-proto.h"

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
    return g_test_run();
}
