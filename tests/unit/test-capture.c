/*
 * Unit tests for the pcapng writer (capture.c): a structural walk of the
 * blocks in C, then tshark's reading of the same file when it is installed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "capture.h"
#include "proto/base.h"

#define TSHARK "/usr/bin/tshark"
#define TS_BASE 1700000000123456789ull

typedef struct Packet {
    unsigned iface;
    uint64_t ts;
    size_t len;
    uint32_t flags;
    const char *comment;
} Packet;

static const Packet packets[] = {
    { 0, TS_BASE, 60, PCAPNG_EPB_INBOUND, "node1>node0" },
    { 1, TS_BASE + 1, 61, PCAPNG_EPB_INBOUND, "node0>node1" },
    { 2, TS_BASE + 2, 14, PCAPNG_EPB_INBOUND | PCAPNG_EPB_CRC_ERROR,
      "node0>node2" },
    { 2, TS_BASE + 3, 1514, PCAPNG_EPB_INBOUND, NULL },
};

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = seed * 31 + i;
    }
}

static char *write_sample(const char *dir)
{
    g_autoptr(GError) err = NULL;
    char *path = g_build_filename(dir, "sample.pcapng", NULL);
    Capture *c = capture_open(path, 3, PCAP_LINKTYPE_ETHERNET, &err);
    uint8_t buf[2048];

    g_assert_no_error(err);
    g_assert_nonnull(c);
    for (size_t i = 0; i < G_N_ELEMENTS(packets); i++) {
        fill(buf, packets[i].len, i);
        g_assert_true(capture_write(c, packets[i].iface, packets[i].ts, buf,
                                    packets[i].len, packets[i].flags,
                                    packets[i].comment, &err));
        g_assert_no_error(err);
    }
    g_assert_cmpuint(capture_frames(c), ==, G_N_ELEMENTS(packets));
    g_assert_true(capture_close(c, &err));
    g_assert_no_error(err);
    return path;
}

/* Find option `code` in an option list; returns its value or NULL. */
static const uint8_t *find_option(const uint8_t *opt, const uint8_t *end,
                                  uint16_t code, uint16_t *len)
{
    while (opt + 4 <= end) {
        uint16_t c = fabric_get_le16(opt), l = fabric_get_le16(opt + 2);

        if (c == 0) {
            return NULL;
        }
        if (c == code) {
            *len = l;
            return opt + 4;
        }
        opt += 4 + ((l + 3) & ~3u);
    }
    return NULL;
}

static void test_structure(void)
{
    g_autofree char *dir = g_dir_make_tmp("capture-XXXXXX", NULL);
    g_autofree char *path = write_sample(dir);
    g_autofree char *data = NULL;
    size_t size, pos = 0;
    unsigned n_idb = 0, n_epb = 0, n_blocks = 0;
    uint8_t expect[2048];

    g_assert_true(g_file_get_contents(path, &data, &size, NULL));
    const uint8_t *p = (const uint8_t *)data;

    while (pos < size) {
        g_assert_cmpuint(size - pos, >=, 12);
        uint32_t type = fabric_get_le32(p + pos);
        uint32_t len = fabric_get_le32(p + pos + 4);
        const uint8_t *body = p + pos + 8;
        const uint8_t *body_end = p + pos + len - 4;
        uint16_t olen = 0;
        const uint8_t *o;

        g_assert_cmpuint(len % 4, ==, 0);
        g_assert_cmpuint(len, >=, 12);
        g_assert_cmpuint(pos + len, <=, size);
        /* the trailing length repeats the leading one */
        g_assert_cmpuint(fabric_get_le32(p + pos + len - 4), ==, len);
        if (n_blocks++ == 0) {
            g_assert_cmphex(type, ==, 0x0a0d0d0a);
            g_assert_cmphex(fabric_get_le32(body), ==, 0x1a2b3c4d);
            g_assert_cmpuint(fabric_get_le16(body + 4), ==, 1);
        } else if (type == 1) {
            char name[16];

            g_assert_cmpuint(n_epb, ==, 0);     /* IDBs come first */
            g_assert_cmpuint(fabric_get_le16(body), ==, 1);   /* Ethernet */
            o = find_option(body + 8, body_end, 2, &olen);
            g_assert_nonnull(o);
            g_snprintf(name, sizeof(name), "node%u", n_idb);
            g_assert_cmpmem(o, olen, name, strlen(name));
            o = find_option(body + 8, body_end, 9, &olen);
            g_assert_nonnull(o);
            g_assert_cmpuint(olen, ==, 1);
            g_assert_cmpuint(o[0], ==, 9);
            n_idb++;
        } else {
            const Packet *pk = &packets[n_epb];
            uint32_t caplen = fabric_get_le32(body + 12);

            g_assert_cmphex(type, ==, 6);
            g_assert_cmpuint(n_epb, <, G_N_ELEMENTS(packets));
            g_assert_cmpuint(fabric_get_le32(body), ==, pk->iface);
            g_assert_cmphex((uint64_t)fabric_get_le32(body + 4) << 32 |
                            fabric_get_le32(body + 8), ==, pk->ts);
            g_assert_cmpuint(caplen, ==, pk->len);
            g_assert_cmpuint(fabric_get_le32(body + 16), ==, pk->len);
            fill(expect, pk->len, n_epb);
            g_assert_cmpmem(body + 20, caplen, expect, pk->len);
            const uint8_t *opts = body + 20 + ((caplen + 3) & ~3u);

            o = find_option(opts, body_end, 2, &olen);
            g_assert_nonnull(o);
            g_assert_cmphex(fabric_get_le32(o), ==, pk->flags);
            o = find_option(opts, body_end, 1, &olen);
            if (pk->comment) {
                g_assert_cmpmem(o, olen, pk->comment, strlen(pk->comment));
            } else {
                g_assert_null(o);
            }
            n_epb++;
        }
        pos += len;
    }
    g_assert_cmpuint(pos, ==, size);
    g_assert_cmpuint(n_idb, ==, 3);
    g_assert_cmpuint(n_epb, ==, G_N_ELEMENTS(packets));
    g_unlink(path);
    g_rmdir(dir);
}

static void test_tshark_reads_it(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *path = NULL;
    g_autofree char *out = NULL;
    g_autoptr(GError) err = NULL;
    int status;

    if (!g_file_test(TSHARK, G_FILE_TEST_IS_EXECUTABLE)) {
        g_test_skip("tshark is not installed");
        return;
    }
    dir = g_dir_make_tmp("capture-XXXXXX", NULL);
    path = write_sample(dir);
    const char *argv[] = {
        TSHARK, "-r", path, "-T", "fields", "-E", "separator=|",
        "-e", "frame.interface_name", "-e", "frame.len",
        "-e", "frame.time_epoch", "-e", "frame.packet_flags_direction",
        "-e", "frame.packet_flags_crc_error", "-e", "frame.comment", NULL,
    };

    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL,
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
                               NULL, &status, &err));
    g_assert_no_error(err);
    g_test_message("tshark says:\n%s", out);
    g_assert_true(g_spawn_check_wait_status(status, NULL));

    g_auto(GStrv) lines = g_strsplit(g_strchomp(out), "\n", -1);

    g_assert_cmpuint(g_strv_length(lines), ==, G_N_ELEMENTS(packets));
    g_assert_cmpstr(lines[0], ==,
                    "node0|60|1700000000.123456789|0x00000001|0|node1>node0");
    g_assert_cmpstr(lines[1], ==,
                    "node1|61|1700000000.123456790|0x00000001|0|node0>node1");
    g_assert_cmpstr(lines[2], ==,
                    "node2|14|1700000000.123456791|0x00000001|1|node0>node2");
    g_assert_cmpstr(lines[3], ==,
                    "node2|1514|1700000000.123456792|0x00000001|0|");
    g_unlink(path);
    g_rmdir(dir);
}

static void test_open_error(void)
{
    g_autoptr(GError) err = NULL;
    Capture *c = capture_open("/nonexistent-dir/x.pcapng", 2,
                              PCAP_LINKTYPE_USER0, &err);

    g_assert_null(c);
    g_assert_error(err, G_FILE_ERROR, G_FILE_ERROR_NOENT);
    g_assert_nonnull(strstr(err->message, "/nonexistent-dir/x.pcapng"));
}

static void test_user0_linktype(void)
{
    g_autofree char *dir = g_dir_make_tmp("capture-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "u.pcapng", NULL);
    g_autofree char *data = NULL;
    size_t size;
    Capture *c = capture_open(path, 1, PCAP_LINKTYPE_USER0, NULL);

    g_assert_nonnull(c);
    g_assert_true(capture_close(c, NULL));
    g_assert_true(g_file_get_contents(path, &data, &size, NULL));
    /* SHB, then the IDB whose link type follows its 8-byte block header */
    uint32_t shb_len = fabric_get_le32((const uint8_t *)data + 4);

    g_assert_cmpuint(size, >, shb_len + 10);
    g_assert_cmpuint(fabric_get_le16((const uint8_t *)data + shb_len + 8), ==,
                     147);
    g_unlink(path);
    g_rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/capture/structure", test_structure);
    g_test_add_func("/capture/tshark", test_tshark_reads_it);
    g_test_add_func("/capture/open-error", test_open_error);
    g_test_add_func("/capture/user0-linktype", test_user0_linktype);
    return g_test_run();
}
