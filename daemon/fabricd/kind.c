/*
 * Registry of fabric kinds, the framing of the header-framed kinds and
 * the timing options of the kinds that model a network.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdarg.h>
#include <string.h>

#include "fabric.h"
#include "kind.h"
#include "proto/base.h"
#include "vcluster/fabric/topology.h"

/* Indexed by the kind's id (FABRIC_KIND_*); the names are the library's. */
static const FabricKind *const kinds[FABRIC_KIND_MAX + 1] = {
    [FABRIC_KIND_ETH] = &fabric_kind_eth,
    [FABRIC_KIND_PS1] = &fabric_kind_ps1,
    [FABRIC_KIND_MYRINET] = &fabric_kind_myrinet,
    [FABRIC_KIND_TELEGRAPHOS] = &fabric_kind_telegraphos,
};

const FabricKind *fabric_kind_find(const char *name)
{
    return kinds[fabric_kind_lookup(name)];
}

bool fabric_send_own(Fabric *f, unsigned port, const FabricHdr *h,
                     const uint8_t *payload)
{
    Port *p = &f->ports[port];
    uint8_t *frame = g_malloc(FABRIC_HDR_LEN + h->len);
    g_autoptr(GBytes) bytes = NULL;

    fabric_hdr_encode(h, frame);
    memcpy(frame + FABRIC_HDR_LEN, payload, h->len);
    bytes = g_bytes_new_take(frame, FABRIC_HDR_LEN + h->len);
    if (!port_send_own(p, bytes)) {
        return false;
    }
    p->c.tx_frames++;
    p->c.tx_bytes += FABRIC_HDR_LEN + h->len;
    return true;
}

IngressStatus fabric_kind_malformed(char *why, size_t why_len,
                                    const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    return INGRESS_MALFORMED;
}

/*
 * Send REJECT {reason} to `port`, the reason also in `why`; the node is off
 * the fabric until its next HELLO.
 */
static IngressStatus refuse_hello(Fabric *f, unsigned port, char *why,
                                  size_t why_len, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);

static IngressStatus refuse_hello(Fabric *f, unsigned port, char *why,
                                  size_t why_len, const char *fmt, ...)
{
    g_autofree char *reason = NULL;
    uint8_t pl[FABRIC_REJECT_MAX_LEN];
    FabricHdr h = {
        .kind = f->kind->id, .type = FABRIC_TYPE_CONTROL,
        .src = FABRIC_NODE_NONE, .dst = port,
    };
    va_list ap;

    va_start(ap, fmt);
    reason = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    h.len = fabric_reject_encode(reason, pl);
    g_snprintf(why, why_len, "%.*s", (int)h.len - 1, (char *)pl + 1);
    fabric_send_own(f, port, &h, pl);
    f->kind->hello_refused(f->kind_state, port);
    return INGRESS_REJECT_CLOSE;
}

static IngressStatus hello(Fabric *f, unsigned port, const uint8_t *pl,
                           size_t len, char *why, size_t why_len)
{
    uint8_t out[FABRIC_HELLO_ACK_BASE_LEN + FABRIC_HELLO_ACK_EXTRA_MAX];
    FabricHelloAck ack = { .nodes = f->nodes };
    FabricHdr h = {
        .kind = f->kind->id, .type = FABRIC_TYPE_CONTROL,
        .src = FABRIC_NODE_NONE, .dst = port,
    };
    uint16_t id;
    uint8_t flags;
    bool lockstep;

    if (!fabric_hello_decode(pl, len, &id, &flags)) {
        if (len == FABRIC_HELLO_MAX_LEN && pl[3]) {
            return refuse_hello(f, port, why, why_len,
                                "HELLO flags 0x%02x are unknown (0x%02x is "
                                "lock-step)", pl[3], FABRIC_HELLO_F_LOCKSTEP);
        }
        return refuse_hello(f, port, why, why_len,
                            "HELLO payload is %zu bytes; expected %d", len,
                            FABRIC_HELLO_LEN);
    }
    lockstep = flags & FABRIC_HELLO_F_LOCKSTEP;
    if (lockstep != (f->lockstep != NULL)) {
        return refuse_hello(f, port, why, why_len, lockstep ?
                            "the device runs lock-step (lockstep=on) but "
                            "this fabricd is free-running (no --lockstep)" :
                            "this fabricd runs lock-step (--lockstep) but "
                            "the device is free-running (no lockstep=on)");
    }
    if (id != port) {
        return refuse_hello(f, port, why, why_len,
                            "HELLO says node %u but this is the socket of "
                            "node %u (node%u.sock)", id, port, port);
    }
    f->kind->hello(f->kind_state, port, &ack);
    h.len = fabric_hello_ack_encode(&ack, out);
    fabric_send_own(f, port, &h, out);      /* lost if it reads nothing */
    if (f->kind->hello_done) {
        f->kind->hello_done(f->kind_state, port);
    }
    return INGRESS_OK;
}

IngressStatus fabric_kind_ingress(Fabric *f, unsigned port,
                                  const uint8_t *frame, size_t len,
                                  char *why, size_t why_len)
{
    const FabricKind *k = f->kind;
    const uint8_t *pl = frame + FABRIC_HDR_LEN;
    size_t pl_len = len - FABRIC_HDR_LEN;
    bool is_hello;
    FabricHdr h;

    /* fabric_hdr_frame_parse() passed it: a whole frame, a sane header */
    fabric_hdr_decode(frame, &h);
    is_hello = h.type == FABRIC_TYPE_CONTROL && pl_len &&
               pl[0] == FABRIC_CTL_HELLO;
    if (h.kind != k->id) {
        if (is_hello) {
            return refuse_hello(f, port, why, why_len,
                                "this fabric is kind %s (%d); the device "
                                "speaks kind %u", k->name, k->id, h.kind);
        }
        return fabric_kind_malformed(why, why_len, "frame of kind %u on a %s "
                                     "fabric", h.kind, k->name);
    }
    if (is_hello) {
        return hello(f, port, pl, pl_len, why, why_len);
    }
    return k->ingress(f->kind_state, port, &h, frame, len, why, why_len);
}

size_t fabric_hdr_frame_prefix(size_t frame_len, uint8_t *prefix)
{
    return 0;
}

bool fabric_kind_timing(const FabricKindOptions *opts, uint64_t *hop_ns,
                        uint64_t *link_mbps, GError **err)
{
    if (opts->hop_ns > (int64_t)FABRIC_MAX_HOP_NS) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--hop-ns %" G_GINT64_FORMAT " is out of range; use "
                    "0..%llu", opts->hop_ns, FABRIC_MAX_HOP_NS);
        return false;
    }
    if (opts->link_mbps == 0 ||
        opts->link_mbps > (int64_t)FABRIC_MAX_LINK_MBPS) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--link-mbps %" G_GINT64_FORMAT " is out of range; use "
                    "1..%llu (megabytes per second)", opts->link_mbps,
                    FABRIC_MAX_LINK_MBPS);
        return false;
    }
    if (opts->hop_ns >= 0) {
        *hop_ns = opts->hop_ns;
    }
    if (opts->link_mbps > 0) {
        *link_mbps = opts->link_mbps;
    }
    return true;
}

FrameStatus fabric_hdr_frame_parse(const uint8_t *buf, size_t avail,
                                   FrameSpan *span)
{
    enum fabric_hdr_error e;
    FabricHdr h;

    if (avail < FABRIC_HDR_LEN) {
        return FRAME_NEED_MORE;
    }
    e = fabric_hdr_decode(buf, &h);
    if (fabric_hdr_error_is_fatal(e)) {
        /* where the next frame starts is unknowable: the stream is lost */
        g_snprintf(span->why, sizeof(span->why),
                   "%s (magic 0x%08x version %u length %u)",
                   fabric_hdr_error_str(e), h.magic, h.version, h.len);
        return FRAME_FATAL;
    }
    /* the length is sane: wait for the whole frame, then use or skip it */
    if (avail - FABRIC_HDR_LEN < h.len) {
        return FRAME_NEED_MORE;
    }
    span->consumed = FABRIC_HDR_LEN + h.len;
    span->offset = 0;
    span->len = span->consumed;
    if (e != FABRIC_HDR_OK) {
        g_snprintf(span->why, sizeof(span->why),
                   "%s (kind %u type %u flags 0x%02x)",
                   fabric_hdr_error_str(e), h.kind, h.type, h.flags);
        return FRAME_SKIP;
    }
    return FRAME_OK;
}
