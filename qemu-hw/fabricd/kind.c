/*
 * Registry of fabric kinds, the framing of the header-framed kinds and
 * the timing options of the kinds that model a network.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "fabric-proto.h"
#include "kind.h"

static const FabricKind *const kinds[] = {
    &fabric_kind_eth,
    &fabric_kind_ps1,
    &fabric_kind_myrinet,
    &fabric_kind_telegraphos,
};

const FabricKind *fabric_kind_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        if (strcmp(kinds[i]->name, name) == 0) {
            return kinds[i];
        }
    }
    return NULL;
}

const char *fabric_kind_names(void)
{
    return "eth, ps1, myrinet, telegraphos";
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
