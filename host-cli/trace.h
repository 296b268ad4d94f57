/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vcluster's trace module: reads the pcapng traces that fabricd's capture.c
 * writes (docs/wire-protocol.md, "pcapng capture format"), digests them and
 * compares two runs' traces record by record (docs/user-guide.md, "Traces").
 *
 * Pure: files in, values and strings out; nothing here prints or exits.
 *
 * Frame numbers in reports are 1-based, as tshark and Wireshark number
 * frames ("frame #1" is a file's first Enhanced Packet Block, so
 * `tshark -r FILE -Y frame.number==N` shows it).  TraceRecord.index is
 * 0-based; frame #N is the record with index N-1.  Byte offsets inside a
 * frame are 0-based, as in tshark's hex dump.
 */
#ifndef VCLUSTER_TRACE_H
#define VCLUSTER_TRACE_H

#include <glib.h>
#include <stdint.h>

#define TRACE_ERROR (trace_error_quark())
GQuark trace_error_quark(void);

typedef enum {
    TRACE_ERROR_FORMAT,         /* not a pcapng file we read, or malformed */
    TRACE_ERROR_IO,             /* open or read failed */
    TRACE_ERROR_EMPTY,          /* no trace files given or found */
} TraceErrorCode;

/*
 * Bounds of the reader: no block may be longer (a frame is at most 64 KiB
 * plus a 32-byte header, see proto/base.h), no section may describe more
 * interfaces.  Anything beyond is a malformed file, not an allocation.
 */
#define TRACE_MAX_BLOCK         (1024 * 1024)
#define TRACE_MAX_INTERFACES    65536

/* What became of a copy, from its comment and its flags. */
typedef enum {
    TRACE_DELIVERED,            /* delivered intact */
    TRACE_CORRUPTED,            /* delivered with the CRC-error flag */
    TRACE_DROPPED,              /* "dropped rule=N": a fault rule dropped it */
    TRACE_DOWN,                 /* "down": a down link stopped it */
} TraceVerdict;

/*
 * One Enhanced Packet Block.  The pointers belong to the reader and stay
 * valid until the next trace_reader_next() or trace_reader_close().
 */
typedef struct {
    uint64_t index;             /* 0-based: frame #(index+1) */
    uint64_t offset;            /* the block's byte offset in the file */
    uint32_t iface;             /* interface id = node number */
    const char *iface_name;     /* its if_name ("node2"), or NULL */
    uint16_t linktype;          /* the interface's link type */
    uint64_t ts_ns;             /* timestamp in ns (if_tsresol applied) */
    uint32_t caplen;            /* captured bytes, at data */
    uint32_t origlen;           /* original length */
    const uint8_t *data;
    gboolean has_flags;         /* an epb_flags option was there */
    uint32_t flags;             /* epb_flags, 0 when absent */
    const char *comment;        /* opt_comment (several: joined by '\n'),
                                   or NULL */
    gsize comment_len;
    /* Parsed from the comment; parsed is FALSE when it is not of the form
     * "FROM>TO[ send=NS][ dropped rule=N| down]". */
    gboolean parsed;
    const char *from;           /* "node0", "fabric" (control frames) */
    const char *to;
    gboolean has_send;          /* the comment named the virtual send time */
    uint64_t send_ns;
    TraceVerdict verdict;       /* from the comment and the CRC-error flag */
    gboolean has_rule;          /* TRACE_DROPPED with rule=N */
    unsigned rule;
} TraceRecord;

typedef struct TraceReader TraceReader;

/*
 * Open a trace and read its Section Header Block.  Errors (TRACE_ERROR)
 * name the file and, for a malformed one, the byte offset.
 */
TraceReader *trace_reader_open(const char *path, GError **err);
/*
 * The next packet record: TRUE with *rec filled in; FALSE at the end of
 * the file (err untouched) or on an error (err set).  Interface and section
 * blocks are read on the way; other block types are skipped, except packet
 * blocks other than EPBs, which are refused.
 */
gboolean trace_reader_next(TraceReader *r, TraceRecord *rec, GError **err);
void trace_reader_close(TraceReader *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceReader, trace_reader_close)

/* "delivered", "corrupted", "dropped rule=2", "dropped", "down" (g_free). */
char *trace_verdict_string(const TraceRecord *rec);

/*
 * The run directory's traces: its trace-*.pcapng files, sorted by name
 * (NULL-terminated, g_strfreev).  None is a TRACE_ERROR_EMPTY error.
 */
char **trace_list_run(const char *dir, GError **err);

/*
 * SHA-256 over the records of the files, in the order given: 64 lowercase
 * hex digits in *hex_out (g_free).  It covers each record's interface,
 * timestamp, flags, lengths, bytes and comment, and where each file ends;
 * not the files' headers, names or padding.
 */
gboolean trace_digest_files(char **paths, char **hex_out, GError **err);

/*
 * Compare two lists of trace files, a[i] with b[i] (one fabric each, in the
 * same order).  TRUE when every record matches; *report_out (g_free) is
 * then "identical", otherwise one line "first difference: FILE frame #N
 * (LINK) at T ns: WHAT" (docs/user-guide.md, "Traces").  When several
 * files differ, the one whose first difference is earliest in virtual time
 * is reported (ties: the earlier file).  FALSE with err set and no report
 * when a file cannot be read.
 */
gboolean trace_compare_files(char **a, char **b, char **report_out,
                             GError **err);

/*
 * Compare two run directories: their trace-*.pcapng files by name.  A
 * file that only one run has is the first difference
 * ("first difference: trace-eth.pcapng: only in the second run").
 */
gboolean trace_compare_runs(const char *dir_a, const char *dir_b,
                            char **report_out, GError **err);

#endif
