/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Traces: a bounded pcapng reader for what fabricd's capture.c writes, a
 * digest over the records, and a record-by-record comparison of two runs.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/base.h"   /* little-endian get helpers */
#include "vcluster/fabric/pcapng.h"

/* The digest's canonical stream starts with this, so a new one is told apart. */
#define DIGEST_VERSION  "vcluster trace digest 1\n"

G_DEFINE_QUARK(vcluster-trace-error-quark, trace_error)

typedef struct {
    uint16_t linktype;
    char *name;
    uint8_t tsresol;
    int64_t tsoffset_s;
} TraceIface;

struct TraceReader {
    FILE *f;
    char *path;
    uint64_t size;              /* the file's size when it was opened */
    uint64_t pos;               /* offset of the next block */
    uint64_t records;
    GByteArray *block;          /* the current block, header included */
    GArray *ifaces;             /* TraceIface, of the current section */
    GString *comment;
    char *from, *to;
};

/* A malformed file: the message names the file and the byte offset. */
G_GNUC_PRINTF(4, 5)
static void format_error(GError **err, const TraceReader *r, uint64_t off,
                         const char *fmt, ...)
{
    va_list ap;
    g_autofree char *what = NULL;

    va_start(ap, fmt);
    what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, TRACE_ERROR, TRACE_ERROR_FORMAT,
                "%s: at byte %" PRIu64 ": %s", r->path, off, what);
}

static void iface_clear(gpointer p)
{
    g_free(((TraceIface *)p)->name);
}

static gboolean read_exact(TraceReader *r, uint8_t *buf, size_t len,
                           uint64_t off, GError **err)
{
    if (fread(buf, 1, len, r->f) != len) {
        if (ferror(r->f)) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO,
                        "%s: cannot read at byte %" PRIu64 ": %s", r->path,
                        off, g_strerror(errno));
        } else {
            format_error(err, r, off, "the file ends early (it shrank "
                         "while being read?)");
        }
        return FALSE;
    }
    return TRUE;
}

/*
 * Read the block at r->pos into r->block.  Returns 1 with the block's type,
 * 0 at the end of the file, -1 on an error.  Lengths are checked against
 * TRACE_MAX_BLOCK and what is left of the file before anything is
 * allocated.
 */
static int read_block(TraceReader *r, uint32_t *type, GError **err)
{
    uint64_t off = r->pos, left = r->size - r->pos;
    uint8_t hdr[12];
    uint32_t len;

    if (left == 0) {
        return 0;
    }
    if (left < 12) {
        format_error(err, r, off, "truncated block: %" PRIu64 " bytes left, "
                     "a block takes at least 12", left);
        return -1;
    }
    if (!read_exact(r, hdr, 8, off, err)) {
        return -1;
    }
    *type = fabric_get_le32(hdr);
    if (*type == PCAPNG_BT_SHB) {
        /* the byte order of a section's lengths is its magic's */
        if (!read_exact(r, hdr + 8, 4, off + 8, err)) {
            return -1;
        }
        uint32_t magic = fabric_get_le32(hdr + 8);

        if (magic == PCAPNG_BYTE_ORDER_SWAPPED) {
            format_error(err, r, off, "big-endian section: only "
                         "little-endian traces are read (fabricd writes "
                         "those)");
            return -1;
        }
        if (magic != PCAPNG_BYTE_ORDER_MAGIC) {
            format_error(err, r, off + 8, "bad byte-order magic 0x%08x in "
                         "the section header", magic);
            return -1;
        }
    } else if (off == 0) {
        format_error(err, r, off, "not a pcapng file: block type 0x%08x, "
                     "a file starts with a section header (0x0a0d0d0a)",
                     *type);
        return -1;
    }
    len = fabric_get_le32(hdr + 4);
    if (len % 4 != 0 || len < 12) {
        format_error(err, r, off + 4, "bad block length %" PRIu32
                     " (a multiple of 4, at least 12)", len);
        return -1;
    }
    if (len > TRACE_MAX_BLOCK) {
        format_error(err, r, off + 4, "block length %" PRIu32 " exceeds "
                     "the limit of %d bytes", len, TRACE_MAX_BLOCK);
        return -1;
    }
    if (len > left) {
        format_error(err, r, off + 4, "truncated block: length %" PRIu32
                     " but %" PRIu64 " bytes left in the file", len, left);
        return -1;
    }
    g_byte_array_set_size(r->block, len);
    memcpy(r->block->data, hdr, *type == PCAPNG_BT_SHB ? 12 : 8);
    if (*type == PCAPNG_BT_SHB) {
        if (!read_exact(r, r->block->data + 12, len - 12, off + 12, err)) {
            return -1;
        }
    } else if (!read_exact(r, r->block->data + 8, len - 8, off + 8, err)) {
        return -1;
    }
    if (fabric_get_le32(r->block->data + len - 4) != len) {
        format_error(err, r, off + len - 4, "the block's trailing length %"
                     PRIu32 " differs from its leading length %" PRIu32,
                     fabric_get_le32(r->block->data + len - 4), len);
        return -1;
    }
    r->pos += len;
    return 1;
}

/*
 * The next option of the current block, from *at (a block offset) up to
 * end: 1 with code, length and value; 0 after opt_endofopt or at the end;
 * -1 on an error.
 */
static int next_option(TraceReader *r, size_t *at, size_t end,
                       uint16_t *code, uint16_t *len, const uint8_t **value,
                       GError **err)
{
    const uint8_t *b = r->block->data;
    uint64_t off = r->pos - r->block->len + *at;

    if (*at >= end) {
        return 0;
    }
    if (end - *at < 4) {
        format_error(err, r, off, "option header past the block's end");
        return -1;
    }
    *code = fabric_get_le16(b + *at);
    *len = fabric_get_le16(b + *at + 2);
    if (*code == PCAPNG_OPT_ENDOFOPT) {
        *at = end;
        return 0;
    }
    size_t padded = ((size_t)*len + 3) & ~(size_t)3;

    if (padded > end - *at - 4) {
        format_error(err, r, off, "option %u of %u bytes runs past the "
                     "block's end", *code, *len);
        return -1;
    }
    *value = b + *at + 4;
    *at += 4 + padded;
    return 1;
}

static gboolean read_shb(TraceReader *r, GError **err)
{
    const uint8_t *b = r->block->data;
    uint64_t off = r->pos - r->block->len;

    if (r->block->len < PCAPNG_SHB_MIN_LEN) {
        format_error(err, r, off + 4, "section header of %u bytes is too "
                     "short (at least %d)", r->block->len,
                     PCAPNG_SHB_MIN_LEN);
        return FALSE;
    }
    if (fabric_get_le16(b + 12) != 1) {
        format_error(err, r, off + 12, "pcapng version %u.%u (1.x is read)",
                     fabric_get_le16(b + 12), fabric_get_le16(b + 14));
        return FALSE;
    }
    /* a new section describes its own interfaces */
    g_array_set_size(r->ifaces, 0);
    size_t at = 24;
    uint16_t code, len;
    const uint8_t *v;
    int got;

    while ((got = next_option(r, &at, r->block->len - 4, &code, &len, &v,
                              err)) > 0) {
    }
    return got == 0;
}

static gboolean read_idb(TraceReader *r, GError **err)
{
    const uint8_t *b = r->block->data;
    uint64_t off = r->pos - r->block->len;
    TraceIface ifc = { .tsresol = PCAPNG_DEFAULT_TSRESOL };
    size_t at = 16;
    uint16_t code, len;
    const uint8_t *v;
    int got;

    if (r->block->len < PCAPNG_IDB_MIN_LEN) {
        format_error(err, r, off + 4, "interface block of %u bytes is too "
                     "short (at least %d)", r->block->len,
                     PCAPNG_IDB_MIN_LEN);
        return FALSE;
    }
    if (r->ifaces->len >= TRACE_MAX_INTERFACES) {
        format_error(err, r, off, "more than %d interfaces in a section",
                     TRACE_MAX_INTERFACES);
        return FALSE;
    }
    ifc.linktype = fabric_get_le16(b + 8);
    while ((got = next_option(r, &at, r->block->len - 4, &code, &len, &v,
                              err)) > 0) {
        uint64_t opt_off = off + (v - b) - 4;

        if (code == PCAPNG_OPT_IF_NAME) {
            g_free(ifc.name);
            ifc.name = g_strndup((const char *)v, len);
        } else if (code == PCAPNG_OPT_IF_TSRESOL) {
            if (len != 1) {
                format_error(err, r, opt_off, "if_tsresol of %u bytes "
                             "(1)", len);
                break;
            }
            ifc.tsresol = v[0];
        } else if (code == PCAPNG_OPT_IF_TSOFFSET) {
            if (len != 8) {
                format_error(err, r, opt_off, "if_tsoffset of %u bytes "
                             "(8)", len);
                break;
            }
            ifc.tsoffset_s = (int64_t)fabric_get_le64(v);
        }
    }
    if (got != 0) {
        g_free(ifc.name);
        return FALSE;
    }
    g_array_append_val(r->ifaces, ifc);
    return TRUE;
}

/* Timestamp units of the interface to ns; FALSE if they do not fit. */
static gboolean to_ns(const TraceIface *ifc, uint64_t units, uint64_t *ns)
{
    unsigned exp = ifc->tsresol & 0x7f;
    __int128 v;

    if (ifc->tsresol & 0x80) {
        /* 2^-exp s: units * 1e9 < 2^94 fits */
        v = (__int128)(((unsigned __int128)units * 1000000000u) >> exp);
    } else if (exp <= 9) {
        unsigned __int128 m = 1;

        for (unsigned i = exp; i < 9; i++) {
            m *= 10;
        }
        v = (__int128)((unsigned __int128)units * m);
    } else if (exp - 9 >= 20) {
        v = 0;                  /* below 1 ns for any 64-bit count */
    } else {
        uint64_t d = 1;

        for (unsigned i = 9; i < exp; i++) {
            d *= 10;
        }
        v = units / d;
    }
    v += (__int128)ifc->tsoffset_s * 1000000000;
    if (v < 0 || v > (__int128)UINT64_MAX) {
        return FALSE;
    }
    *ns = (uint64_t)v;
    return TRUE;
}

static gboolean all_digits(const char *s, uint64_t *out)
{
    uint64_t v = 0;

    if (!*s) {
        return FALSE;
    }
    for (; *s; s++) {
        if (!g_ascii_isdigit(*s) || v > (UINT64_MAX - (*s - '0')) / 10) {
            return FALSE;
        }
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return TRUE;
}

static gboolean is_name(const char *s, size_t len)
{
    if (len == 0) {
        return FALSE;
    }
    for (size_t i = 0; i < len; i++) {
        if (!g_ascii_isalnum(s[i]) && s[i] != '_' && s[i] != '-' &&
            s[i] != '.') {
            return FALSE;
        }
    }
    return TRUE;
}

/*
 * "FROM>TO[ send=NS][ dropped rule=N| down]": fills the parsed fields of
 * rec (from, to in r's buffers).  Words it does not know are skipped, so
 * that a later writer may add some; a malformed known one, or a comment
 * that does not start with FROM>TO, leaves rec->parsed FALSE.
 */
static void parse_comment(TraceReader *r, TraceRecord *rec)
{
    const char *c = rec->comment;
    gboolean dropped = FALSE, down = FALSE, has_rule = FALSE;
    gboolean has_send = FALSE;
    uint64_t send = 0, rule = 0;

    if (!c || memchr(c, '\0', rec->comment_len)) {
        return;
    }
    g_auto(GStrv) words = g_strsplit(c, " ", -1);
    const char *link = words[0];            /* NULL for "" */
    const char *gt = link ? strchr(link, '>') : NULL;

    if (!gt || !is_name(link, gt - link) || !is_name(gt + 1, strlen(gt + 1))) {
        return;
    }
    for (char **w = words + 1; *w; w++) {
        uint64_t v;

        if (g_str_has_prefix(*w, "send=")) {
            if (has_send || !all_digits(*w + 5, &v)) {
                return;
            }
            has_send = TRUE;
            send = v;
        } else if (!strcmp(*w, "dropped")) {
            if (dropped || down) {
                return;
            }
            dropped = TRUE;
        } else if (g_str_has_prefix(*w, "rule=")) {
            if (!dropped || has_rule || !all_digits(*w + 5, &v) ||
                v > G_MAXUINT) {
                return;
            }
            has_rule = TRUE;
            rule = v;
        } else if (!strcmp(*w, "down")) {
            if (dropped || down) {
                return;
            }
            down = TRUE;
        } else if (!**w) {
            return;             /* two spaces, or one at an end */
        }
    }
    g_free(r->from);
    g_free(r->to);
    r->from = g_strndup(link, gt - link);
    r->to = g_strdup(gt + 1);
    rec->parsed = TRUE;
    rec->from = r->from;
    rec->to = r->to;
    rec->has_send = has_send;
    rec->send_ns = send;
    rec->has_rule = has_rule;
    rec->rule = rule;
    if (dropped) {
        rec->verdict = TRACE_DROPPED;
    } else if (down) {
        rec->verdict = TRACE_DOWN;
    }
}

static gboolean read_epb(TraceReader *r, TraceRecord *rec, GError **err)
{
    const uint8_t *b = r->block->data;
    uint32_t blen = r->block->len;
    uint64_t off = r->pos - blen;
    uint16_t code, len;
    const uint8_t *v;
    int got;

    if (blen < PCAPNG_EPB_MIN_LEN) {
        format_error(err, r, off + 4, "packet block of %u bytes is too "
                     "short (at least %d)", blen, PCAPNG_EPB_MIN_LEN);
        return FALSE;
    }
    memset(rec, 0, sizeof(*rec));
    rec->index = r->records;
    rec->offset = off;
    rec->iface = fabric_get_le32(b + 8);
    if (rec->iface >= r->ifaces->len) {
        format_error(err, r, off + 8, "packet on interface %u, but the "
                     "section describes %u", rec->iface, r->ifaces->len);
        return FALSE;
    }
    const TraceIface *ifc = &g_array_index(r->ifaces, TraceIface, rec->iface);
    uint64_t units = (uint64_t)fabric_get_le32(b + 12) << 32 |
                     fabric_get_le32(b + 16);

    rec->iface_name = ifc->name;
    rec->linktype = ifc->linktype;
    if (!to_ns(ifc, units, &rec->ts_ns)) {
        format_error(err, r, off + 12, "timestamp out of range (%" PRIu64
                     " units, if_tsresol 0x%02x)", units, ifc->tsresol);
        return FALSE;
    }
    rec->caplen = fabric_get_le32(b + 20);
    rec->origlen = fabric_get_le32(b + 24);
    if (rec->caplen > blen - PCAPNG_EPB_MIN_LEN) {
        format_error(err, r, off + 20, "captured length %u is longer than "
                     "the block holds", rec->caplen);
        return FALSE;
    }
    rec->data = b + 28;

    size_t at = 28 + (((size_t)rec->caplen + 3) & ~(size_t)3);
    gboolean has_comment = FALSE;

    g_string_truncate(r->comment, 0);
    while ((got = next_option(r, &at, blen - 4, &code, &len, &v, err)) > 0) {
        if (code == PCAPNG_OPT_EPB_FLAGS) {
            if (len != 4) {
                format_error(err, r, off + (v - b) - 4, "epb_flags of %u "
                             "bytes (4)", len);
                return FALSE;
            }
            rec->has_flags = TRUE;
            rec->flags = fabric_get_le32(v);
        } else if (code == PCAPNG_OPT_COMMENT) {
            if (has_comment) {
                g_string_append_c(r->comment, '\n');
            }
            g_string_append_len(r->comment, (const char *)v, len);
            has_comment = TRUE;
        }
    }
    if (got < 0) {
        return FALSE;
    }
    if (has_comment) {
        rec->comment = r->comment->str;
        rec->comment_len = r->comment->len;
    }
    rec->verdict = rec->flags & PCAPNG_EPB_CRC_ERROR ? TRACE_CORRUPTED
                                                    : TRACE_DELIVERED;
    parse_comment(r, rec);
    r->records++;
    return TRUE;
}

TraceReader *trace_reader_open(const char *path, GError **err)
{
    FILE *f = fopen(path, "rb");
    struct stat st;

    if (!f) {
        int e = errno;

        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s", path,
                    g_strerror(e));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO,
                    "%s: not a regular file", path);
        fclose(f);
        return NULL;
    }
    TraceReader *r = g_new0(TraceReader, 1);
    uint32_t type;

    r->f = f;
    r->path = g_strdup(path);
    r->size = st.st_size;
    r->block = g_byte_array_new();
    r->ifaces = g_array_new(FALSE, TRUE, sizeof(TraceIface));
    g_array_set_clear_func(r->ifaces, iface_clear);
    r->comment = g_string_new(NULL);
    if (r->size == 0) {
        format_error(err, r, 0, "empty file, not a pcapng trace");
    } else {
        int got = read_block(r, &type, err);

        if (got > 0 && read_shb(r, err)) {
            return r;
        }
    }
    trace_reader_close(r);
    return NULL;
}

gboolean trace_reader_next(TraceReader *r, TraceRecord *rec, GError **err)
{
    for (;;) {
        uint32_t type;
        int got = read_block(r, &type, err);

        if (got <= 0) {
            return FALSE;
        }
        switch (type) {
        case PCAPNG_BT_SHB:
            if (!read_shb(r, err)) {
                return FALSE;
            }
            break;
        case PCAPNG_BT_IDB:
            if (!read_idb(r, err)) {
                return FALSE;
            }
            break;
        case PCAPNG_BT_EPB:
            return read_epb(r, rec, err);
        case PCAPNG_BT_PB:
        case PCAPNG_BT_SPB:
            /* packets we could not attribute: refuse, never skip them */
            format_error(err, r, r->pos - r->block->len, "block type %u "
                         "(a packet block other than an Enhanced Packet "
                         "Block) is not read", type);
            return FALSE;
        default:
            break;              /* statistics, name resolution, custom */
        }
    }
}

void trace_reader_close(TraceReader *r)
{
    if (!r) {
        return;
    }
    fclose(r->f);
    g_free(r->path);
    g_byte_array_free(r->block, TRUE);
    g_array_free(r->ifaces, TRUE);
    g_string_free(r->comment, TRUE);
    g_free(r->from);
    g_free(r->to);
    g_free(r);
}

char *trace_verdict_string(const TraceRecord *rec)
{
    switch (rec->verdict) {
    case TRACE_CORRUPTED:
        return g_strdup("corrupted");
    case TRACE_DROPPED:
        return rec->has_rule ? g_strdup_printf("dropped rule=%u", rec->rule)
                             : g_strdup("dropped");
    case TRACE_DOWN:
        return g_strdup("down");
    case TRACE_DELIVERED:
    default:
        return g_strdup("delivered");
    }
}

static gint compare_paths(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **trace_list_run(const char *dir, GError **err)
{
    GError *e = NULL;
    GDir *d = g_dir_open(dir, 0, &e);
    GPtrArray *names;
    const char *n;

    if (!d) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s", e->message);
        g_error_free(e);
        return NULL;
    }
    names = g_ptr_array_new();
    while ((n = g_dir_read_name(d))) {
        if (g_str_has_prefix(n, "trace-") && g_str_has_suffix(n, ".pcapng")) {
            g_ptr_array_add(names, g_build_filename(dir, n, NULL));
        }
    }
    g_dir_close(d);
    if (names->len == 0) {
        g_ptr_array_free(names, TRUE);
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_EMPTY,
                    "%s: no trace-*.pcapng files", dir);
        return NULL;
    }
    /* same directory: sorting the paths sorts the names */
    g_ptr_array_sort(names, compare_paths);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

/* ---- digest ---- */

static void feed(GChecksum *sum, const void *data, size_t len)
{
    g_checksum_update(sum, data, len);
}

static void feed_u8(GChecksum *sum, uint8_t v)
{
    feed(sum, &v, 1);
}

static void feed_u32(GChecksum *sum, uint32_t v)
{
    uint8_t le[4];

    fabric_put_le32(le, v);
    feed(sum, le, 4);
}

static void feed_u64(GChecksum *sum, uint64_t v)
{
    uint8_t le[8];

    fabric_put_le64(le, v);
    feed(sum, le, 8);
}

/*
 * The canonical stream: DIGEST_VERSION, then for each file its records,
 * each 'R', interface (le32), timestamp in ns (le64), whether it has
 * epb_flags (u8) and the flags (le32), captured and original length (le32
 * each), the captured bytes, and the comment's length (le32, 0xffffffff for
 * none) and bytes; after a file's records 'E' and their count (le64).
 */
static gboolean digest_file(GChecksum *sum, const char *path, GError **err)
{
    g_autoptr(TraceReader) r = trace_reader_open(path, err);
    GError *e = NULL;
    TraceRecord rec;
    uint64_t n = 0;

    if (!r) {
        return FALSE;
    }
    while (trace_reader_next(r, &rec, &e)) {
        feed_u8(sum, 'R');
        feed_u32(sum, rec.iface);
        feed_u64(sum, rec.ts_ns);
        feed_u8(sum, rec.has_flags);
        feed_u32(sum, rec.flags);
        feed_u32(sum, rec.caplen);
        feed_u32(sum, rec.origlen);
        feed(sum, rec.data, rec.caplen);
        if (rec.comment) {
            feed_u32(sum, rec.comment_len);
            feed(sum, rec.comment, rec.comment_len);
        } else {
            feed_u32(sum, UINT32_MAX);
        }
        n++;
    }
    if (e) {
        g_propagate_error(err, e);
        return FALSE;
    }
    feed_u8(sum, 'E');
    feed_u64(sum, n);
    return TRUE;
}

gboolean trace_digest_files(char **paths, char **hex_out, GError **err)
{
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);

    *hex_out = NULL;
    if (!paths || !paths[0]) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_EMPTY, "no trace files");
        return FALSE;
    }
    feed(sum, DIGEST_VERSION, strlen(DIGEST_VERSION));
    for (char **p = paths; *p; p++) {
        if (!digest_file(sum, *p, err)) {
            return FALSE;
        }
    }
    *hex_out = g_strdup(g_checksum_get_string(sum));
    return TRUE;
}

/* ---- compare ---- */

/* A file's first difference, and the virtual time that ranks it. */
typedef struct {
    gboolean found;
    uint64_t rank_ns;
    char *line;
} TraceDiff;

static char *iface_string(const TraceRecord *r)
{
    return r->iface_name ? g_strdup(r->iface_name)
                         : g_strdup_printf("interface %u", r->iface);
}

/* The link a copy crossed ("node0>node2"), else its interface. */
static char *link_string(const TraceRecord *r)
{
    return r->parsed ? g_strdup_printf("%s>%s", r->from, r->to)
                     : iface_string(r);
}

static char *comment_string(const TraceRecord *r)
{
    if (!r->comment) {
        return g_strdup("none");
    }
    g_autofree char *raw = g_strndup(r->comment, r->comment_len);
    g_autofree char *esc = g_strescape(raw, NULL);

    return g_strdup_printf("\"%s\"", esc);
}

static char *flags_string(const TraceRecord *r)
{
    return r->has_flags ? g_strdup_printf("0x%08x", r->flags)
                        : g_strdup("none");
}

/* What differs between two records, the first thing in a fixed order; NULL
 * when they are the same. */
static char *describe(const TraceRecord *a, const TraceRecord *b)
{
    if (a->iface != b->iface) {
        g_autofree char *ia = iface_string(a), *ib = iface_string(b);

        return g_strdup_printf("interface %s vs %s", ia, ib);
    }
    if (a->parsed && b->parsed &&
        (strcmp(a->from, b->from) || strcmp(a->to, b->to))) {
        return g_strdup_printf("link %s>%s vs %s>%s", a->from, a->to,
                               b->from, b->to);
    }
    if (a->verdict != b->verdict || a->has_rule != b->has_rule ||
        a->rule != b->rule) {
        g_autofree char *va = trace_verdict_string(a);
        g_autofree char *vb = trace_verdict_string(b);

        return g_strdup_printf("verdict %s vs %s", va, vb);
    }
    if (a->ts_ns != b->ts_ns) {
        return g_strdup_printf("timestamp %" PRIu64 " vs %" PRIu64 " ns",
                               a->ts_ns, b->ts_ns);
    }
    if (a->has_send && b->has_send && a->send_ns != b->send_ns) {
        return g_strdup_printf("send time %" PRIu64 " vs %" PRIu64 " ns",
                               a->send_ns, b->send_ns);
    }
    if (a->caplen != b->caplen) {
        return g_strdup_printf("length %u vs %u bytes", a->caplen, b->caplen);
    }
    if (a->origlen != b->origlen) {
        return g_strdup_printf("original length %u vs %u bytes", a->origlen,
                               b->origlen);
    }
    for (uint32_t i = 0; i < a->caplen; i++) {
        if (a->data[i] != b->data[i]) {
            return g_strdup_printf("payload differs at byte %u (0x%02x vs "
                                   "0x%02x)", i, a->data[i], b->data[i]);
        }
    }
    if (a->has_flags != b->has_flags || a->flags != b->flags) {
        g_autofree char *fa = flags_string(a), *fb = flags_string(b);

        return g_strdup_printf("flags %s vs %s", fa, fb);
    }
    if (!a->comment != !b->comment || a->comment_len != b->comment_len ||
        (a->comment && memcmp(a->comment, b->comment, a->comment_len))) {
        g_autofree char *ca = comment_string(a), *cb = comment_string(b);

        return g_strdup_printf("comment %s vs %s", ca, cb);
    }
    return NULL;
}

static void set_diff(TraceDiff *d, const char *name, const TraceRecord *r,
                     uint64_t rank_ns, const char *what)
{
    g_autofree char *link = link_string(r);

    d->found = TRUE;
    d->rank_ns = rank_ns;
    d->line = g_strdup_printf("first difference: %s frame #%" PRIu64
                              " (%s) at %" PRIu64 " ns: %s", name,
                              r->index + 1, link, r->ts_ns, what);
}

/* The first difference between two traces of one fabric, into *d. */
static gboolean compare_pair(const char *pa, const char *pb, TraceDiff *d,
                             GError **err)
{
    g_autoptr(TraceReader) ra = trace_reader_open(pa, err);
    g_autoptr(TraceReader) rb = ra ? trace_reader_open(pb, err) : NULL;
    g_autofree char *name = g_path_get_basename(pa);

    if (!rb) {
        return FALSE;
    }
    for (;;) {
        TraceRecord a, b;
        GError *e = NULL;
        gboolean more_a = trace_reader_next(ra, &a, &e);
        gboolean more_b = !e && trace_reader_next(rb, &b, &e);

        if (e) {
            g_propagate_error(err, e);
            return FALSE;
        }
        if (!more_a && !more_b) {
            return TRUE;
        }
        if (!more_b) {
            set_diff(d, name, &a, a.ts_ns, "only in the first run");
            return TRUE;
        }
        if (!more_a) {
            set_diff(d, name, &b, b.ts_ns, "only in the second run");
            return TRUE;
        }
        g_autofree char *what = describe(&a, &b);

        if (what) {
            set_diff(d, name, &a, MIN(a.ts_ns, b.ts_ns), what);
            return TRUE;
        }
    }
}

gboolean trace_compare_files(char **a, char **b, char **report_out,
                             GError **err)
{
    guint na = a ? g_strv_length(a) : 0, nb = b ? g_strv_length(b) : 0;
    TraceDiff best = { 0 };

    *report_out = NULL;
    if (na == 0 || nb == 0) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_EMPTY,
                    "no trace files in the %s run", na == 0 ? "first"
                                                            : "second");
        return FALSE;
    }
    if (na != nb) {
        /* a whole fabric's trace is missing: that comes first */
        const char *extra = na > nb ? a[nb] : b[na];
        g_autofree char *name = g_path_get_basename(extra);

        *report_out = g_strdup_printf("first difference: %s: only in the %s "
                                      "run", name, na > nb ? "first"
                                                           : "second");
        return FALSE;
    }
    for (guint i = 0; i < na; i++) {
        TraceDiff d = { 0 };

        if (!compare_pair(a[i], b[i], &d, err)) {
            g_free(best.line);
            return FALSE;
        }
        if (d.found && (!best.found || d.rank_ns < best.rank_ns)) {
            g_free(best.line);
            best = d;
        } else {
            g_free(d.line);
        }
    }
    if (best.found) {
        *report_out = best.line;
        return FALSE;
    }
    *report_out = g_strdup("identical");
    return TRUE;
}

gboolean trace_compare_runs(const char *dir_a, const char *dir_b,
                            char **report_out, GError **err)
{
    g_auto(GStrv) a = NULL, b = NULL;

    *report_out = NULL;
    a = trace_list_run(dir_a, err);
    b = a ? trace_list_run(dir_b, err) : NULL;
    if (!b) {
        return FALSE;
    }
    /* both lists are sorted by name: the first name only one run has */
    for (guint i = 0, j = 0; a[i] || b[j];) {
        g_autofree char *na = a[i] ? g_path_get_basename(a[i]) : NULL;
        g_autofree char *nb = b[j] ? g_path_get_basename(b[j]) : NULL;
        int cmp = !na ? 1 : !nb ? -1 : strcmp(na, nb);

        if (cmp != 0) {
            *report_out = g_strdup_printf("first difference: %s: only in the "
                                          "%s run", cmp < 0 ? na : nb,
                                          cmp < 0 ? "first" : "second");
            return FALSE;
        }
        i++;
        j++;
    }
    return trace_compare_files(a, b, report_out, err);
}
