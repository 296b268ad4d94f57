/*
 * Minimal pcapng writer: SHB, IDBs, EPBs, all little-endian (the format
 * is vcluster/fabric/pcapng.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"

struct Capture {
    FILE *f;
    char *path;
    unsigned nodes;
    uint64_t frames;
    bool failed;            /* a write failed; the file is incomplete */
    GByteArray *block;      /* scratch space for building one block */
};

/* Close the option list, append the trailing length and write it out. */
static bool end_block(Capture *c, GError **err)
{
    GByteArray *b = c->block;

    pcapng_put_endofopt(b);
    pcapng_block_end(b, 0);
    if (fwrite(b->data, 1, b->len, c->f) != b->len) {
        c->failed = true;
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno),
                    "cannot write capture %s: %s", c->path, g_strerror(errno));
        return false;
    }
    return true;
}

static bool write_headers(Capture *c, uint32_t linktype, GError **err)
{
    static const char appl[] = "vcluster fabricd";
    GByteArray *b = c->block;

    g_byte_array_set_size(b, 0);
    pcapng_block_begin(b, PCAPNG_BT_SHB);
    pcapng_put32(b, PCAPNG_BYTE_ORDER_MAGIC);
    pcapng_put16(b, PCAPNG_VERSION_MAJOR);
    pcapng_put16(b, PCAPNG_VERSION_MINOR);
    pcapng_put32(b, 0xffffffffu);  /* section length: unknown */
    pcapng_put32(b, 0xffffffffu);
    pcapng_put_option(b, PCAPNG_OPT_SHB_USERAPPL, appl, sizeof(appl) - 1);
    if (!end_block(c, err)) {
        return false;
    }

    for (unsigned i = 0; i < c->nodes; i++) {
        char name[32];
        uint8_t tsresol = 9;        /* timestamps in nanoseconds */
        int n = g_snprintf(name, sizeof(name), "node%u", i);

        g_byte_array_set_size(b, 0);
        pcapng_block_begin(b, PCAPNG_BT_IDB);
        pcapng_put16(b, linktype);
        pcapng_put16(b, 0);                /* reserved */
        pcapng_put32(b, 0);                /* snaplen: no limit */
        pcapng_put_option(b, PCAPNG_OPT_IF_NAME, name, n);
        pcapng_put_option(b, PCAPNG_OPT_IF_TSRESOL, &tsresol, 1);
        if (!end_block(c, err)) {
            return false;
        }
    }
    return true;
}

Capture *capture_open(const char *path, unsigned nodes, uint32_t linktype,
                      GError **err)
{
    /*
     * A new file only: never truncate or follow what is there, so a
     * control client cannot make fabricd overwrite a file it can write.
     */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  CAPTURE_MODE);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;

    if (!f) {
        int e = errno;

        if (fd >= 0) {
            close(fd);
        }
        if (e == EEXIST) {
            g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                        "cannot create capture %s: it exists, and fabricd "
                        "never overwrites a file (remove it or choose a new "
                        "name)", path);
        } else {
            g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e),
                        "cannot create capture %s: %s", path, g_strerror(e));
        }
        return NULL;
    }
    Capture *c = g_new0(Capture, 1);

    c->f = f;
    c->path = g_strdup(path);
    c->nodes = nodes;
    c->block = g_byte_array_sized_new(256);
    if (!write_headers(c, linktype, err) || !capture_flush(c, err)) {
        capture_close(c, NULL);
        return NULL;
    }
    return c;
}

bool capture_write(Capture *c, unsigned iface, uint64_t ts_ns,
                   const uint8_t *data, size_t len, uint32_t epb_flags,
                   const char *comment, GError **err)
{
    GByteArray *b = c->block;
    uint8_t flags[4];

    if (c->failed) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_IO,
                    "capture %s already failed", c->path);
        return false;
    }
    g_return_val_if_fail(iface < c->nodes, false);
    g_byte_array_set_size(b, 0);
    pcapng_block_begin(b, PCAPNG_BT_EPB);
    pcapng_put32(b, iface);
    pcapng_put32(b, ts_ns >> 32);
    pcapng_put32(b, (uint32_t)ts_ns);
    pcapng_put32(b, len);          /* captured length */
    pcapng_put32(b, len);          /* original length */
    g_byte_array_append(b, data, len);
    pcapng_pad4(b);
    fabric_put_le32(flags, epb_flags);
    pcapng_put_option(b, PCAPNG_OPT_EPB_FLAGS, flags, 4);
    if (comment) {
        pcapng_put_option(b, PCAPNG_OPT_COMMENT, comment, strlen(comment));
    }
    if (!end_block(c, err)) {
        return false;
    }
    c->frames++;
    return true;
}

bool capture_flush(Capture *c, GError **err)
{
    if (fflush(c->f) != 0) {
        int e = errno;

        c->failed = true;
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e),
                    "cannot write capture %s: %s", c->path, g_strerror(e));
        return false;
    }
    return true;
}

bool capture_close(Capture *c, GError **err)
{
    bool ok = true;

    if (!c) {
        return true;
    }
    if (c->failed) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_IO,
                    "capture %s is incomplete (a write failed)", c->path);
        ok = false;
    } else {
        ok = capture_flush(c, err);
    }
    if (fclose(c->f) != 0 && ok) {
        int e = errno;

        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e),
                    "cannot close capture %s: %s", c->path, g_strerror(e));
        ok = false;
    }
    g_byte_array_free(c->block, TRUE);
    g_free(c->path);
    g_free(c);
    return ok;
}

const char *capture_path(const Capture *c)
{
    return c->path;
}

uint64_t capture_frames(const Capture *c)
{
    return c->frames;
}
