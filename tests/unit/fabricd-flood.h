/*
 * Hostile peers for the fabricd bounds tests and the fuzzer: streams that
 * write as fast as the socket takes and never read, fabricd's memory
 * (VmRSS of the process the harness started), and a check that fabricctl
 * still gets answers.  Include after fabricd-harness.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_UNIT_FABRICD_FLOOD_H
#define TESTS_UNIT_FABRICD_FLOOD_H

#include <stdio.h>
#include <sys/stat.h>

#include "fabric.h"

/* What fabricd may hold besides its ports: GLib, stdio, heap slack. */
#define RSS_SLACK (8u * 1024 * 1024)

/* A socket fed from a pattern of whole frames, repeated forever. */
typedef struct Stream {
    int fd;
    GByteArray *pattern;
    size_t off;             /* next byte of the pattern to write */
    uint64_t written;
    bool dead;              /* fabricd closed it */
} Stream;

static void stream_init(Stream *s, int fd)
{
    s->fd = fd;
    s->pattern = g_byte_array_new();
    s->off = 0;
    s->written = 0;
    s->dead = false;
}

static void stream_add(Stream *s, const void *data, size_t len)
{
    g_byte_array_append(s->pattern, data, len);
}

/* A header-framed frame appended to the pattern. */
static void stream_add_hdr(Stream *s, uint8_t kind, uint8_t type,
                           uint8_t flags, uint16_t dst, const void *pl,
                           size_t len)
{
    uint8_t hdr[FABRIC_HDR_LEN];
    FabricHdr h = {
        .kind = kind, .type = type, .flags = flags, .src = FABRIC_NODE_NONE,
        .dst = dst, .len = len, .send_time_ns = 1000,
    };

    fabric_hdr_encode(&h, hdr);
    stream_add(s, hdr, sizeof(hdr));
    stream_add(s, pl, len);
}

static void stream_clear(Stream *s)
{
    g_byte_array_unref(s->pattern);
}

/* Write what the socket takes now, never blocking. */
static void stream_push(Stream *s)
{
    for (int i = 0; i < 64 && !s->dead; i++) {
        ssize_t n = send(s->fd, s->pattern->data + s->off,
                         s->pattern->len - s->off,
                         MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                s->dead = true;
            }
            return;
        }
        s->written += n;
        s->off = (s->off + n) % s->pattern->len;
    }
}

/* Read and throw away what is there; returns the bytes read. */
static size_t drain_now(int fd)
{
    uint8_t buf[65536];
    size_t total = 0;
    ssize_t n;

    while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
        total += n;
    }
    return total;
}

/* A new control connection for the fixture (the old one may be closed). */
static void ctl_reconnect(Fixture *fx)
{
    g_autofree char *path = path_in(fx, "ctl.sock");

    close(fx->ctl);
    g_string_truncate(fx->ctl_buf, 0);
    fx->ctl = connect_unix(path);
    g_assert_cmpint(fx->ctl, >=, 0);
}

/* fabricd's resident memory, from /proc/PID/status. */
static uint64_t fabricd_rss(Fixture *fx)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/status", fx->pid);
    g_autofree char *text = NULL;
    const char *at;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    at = strstr(text, "VmRSS:");
    g_assert_nonnull(at);
    return g_ascii_strtoull(at + 6, NULL, 10) * 1024;
}

/* fabricctl (a new connection) gets an answer to `status` in time. */
static void fabricctl_answers(Fixture *fx)
{
    const char *argv[] = { "/usr/bin/timeout", "10", FABRICCTL, "-d", fx->dir,
                           "status", NULL };
    g_autofree char *out = NULL, *err = NULL;

    g_assert_cmpint(run(argv, NULL, &out, &err), ==, 0);
    g_assert_nonnull(strstr(out, "fabric: kind="));
}

/* The port bound fabricd reports in `status` ("port bound N"). */
static uint64_t port_bound(Fixture *fx)
{
    g_autofree char *status = ctl(fx, "status");
    const char *at = strstr(status, "port bound ");

    g_assert_nonnull(at);
    return g_ascii_strtoull(at + strlen("port bound "), NULL, 10);
}

/*
 * The documented bound (docs/fabricd.md "Bounds"): what fabricd used
 * before the test, plus for each port its output bound, its own-frame
 * reserve and its input buffer, plus RSS_SLACK.
 */
static uint64_t rss_bound(Fixture *fx, uint64_t before)
{
    return before + RSS_SLACK + (uint64_t)NODES *
           (port_bound(fx) + FABRIC_OWN_RESERVE + FABRIC_IN_MAX);
}

#endif
