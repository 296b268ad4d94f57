/*
 * Fake devices of the header-framed fabric kinds (ps1, myrinet) for the
 * fabricd end-to-end tests: frames with the 32-byte fabric header over a
 * node socket.  Include after fabricd-harness.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_UNIT_FABRICD_FRAMES_H
#define TESTS_UNIT_FABRICD_FRAMES_H

#include "proto/myrinet.h"

/* The largest payload a test receives: a myrinet DATA frame. */
#define HDR_FRAME_MAX (FABRIC_MYRI_MAX_ROUTE + FABRIC_MYRI_MAX_PACKET + \
                       FABRIC_MYRI_CRC_LEN)

typedef struct HdrFrame {
    FabricHdr h;
    uint8_t pl[HDR_FRAME_MAX];
} HdrFrame;

static void hdr_send(int fd, uint8_t kind, uint8_t type, uint8_t flags,
                     uint16_t dst, const void *pl, size_t len,
                     uint64_t send_ns)
{
    uint8_t hdr[FABRIC_HDR_LEN];
    FabricHdr h = {
        .kind = kind, .type = type, .flags = flags, .src = FABRIC_NODE_NONE,
        .dst = dst, .len = len, .send_time_ns = send_ns,
    };

    fabric_hdr_encode(&h, hdr);
    write_all(fd, hdr, sizeof(hdr));
    if (len) {
        write_all(fd, pl, len);
    }
}

/* One frame of `kind`, or false on timeout or EOF. */
static bool hdr_recv(int fd, uint8_t kind, HdrFrame *f, int ms)
{
    gint64 deadline = deadline_after(ms);
    uint8_t hdr[FABRIC_HDR_LEN];

    if (read_exact(fd, hdr, sizeof(hdr), deadline) != 1) {
        return false;
    }
    g_assert_cmpint(fabric_hdr_decode(hdr, &f->h), ==, FABRIC_HDR_OK);
    g_assert_cmpuint(f->h.kind, ==, kind);
    g_assert_cmpuint(f->h.len, <=, sizeof(f->pl));
    return read_exact(fd, f->pl, f->h.len, deadline) == 1;
}

static void hdr_expect(int fd, uint8_t kind, uint8_t type, HdrFrame *f)
{
    g_assert_true(hdr_recv(fd, kind, f, WAIT_MS));
    if (f->h.type != type) {
        g_test_message("got frame type %u, expected %u", f->h.type, type);
    }
    g_assert_cmpuint(f->h.type, ==, type);
}

/* The connection was closed by fabricd (after whatever it still sent). */
static void expect_eof(int fd)
{
    uint8_t c;

    g_assert_cmpint(read_exact(fd, &c, 1, deadline_after(WAIT_MS)), ==, -1);
}

/* HELLO claiming node `id`: the same 3 bytes for every kind. */
static void hdr_hello_as(int fd, uint8_t kind, unsigned id)
{
    uint8_t pl[3] = { FABRIC_CTL_HELLO };

    fabric_put_le16(pl + 1, id);
    hdr_send(fd, kind, FABRIC_TYPE_CONTROL, 0, FABRIC_NODE_NONE, pl,
             sizeof(pl), 0);
}

/* A REJECT of `kind`; returns its reason. */
static char *hdr_expect_reject(int fd, uint8_t kind)
{
    HdrFrame f;

    hdr_expect(fd, kind, FABRIC_TYPE_CONTROL, &f);
    g_assert_cmpuint(f.pl[0], ==, FABRIC_CTL_REJECT);
    return g_strndup((const char *)f.pl + 1, f.h.len - 1);
}

/*
 * The packets of a capture as "INTERFACE<tab>COMMENT<tab>LENGTH" lines,
 * or NULL without tshark.
 */
static char **capture_packets(const char *path)
{
    static const char *const fields[] = {
        "frame.interface_name", "frame.comment", "frame.len", NULL,
    };

    return tshark_lines(path, fields);
}

#endif
