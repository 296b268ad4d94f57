/*
 * pcapng writer for fabricd: one interface per node, one Enhanced Packet
 * Block per delivered copy.  The format's constants (link types, flags)
 * are in vcluster/fabric/pcapng.h; docs/wire-protocol.md describes it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_CAPTURE_H
#define FABRICD_CAPTURE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "vcluster/fabric/pcapng.h"

typedef struct Capture Capture;

/* A capture file's mode: only fabricd's user reads the traffic. */
#define CAPTURE_MODE            0600

/*
 * Create `path` (it must not exist: symlinks and existing files are
 * refused, never followed or truncated) and write the section header and
 * one IDB per node.
 */
Capture *capture_open(const char *path, unsigned nodes, uint32_t linktype,
                      GError **err);

/* Record one packet on interface `iface`; `comment` may be NULL. */
bool capture_write(Capture *c, unsigned iface, uint64_t ts_ns,
                   const uint8_t *data, size_t len, uint32_t epb_flags,
                   const char *comment, GError **err);

/* Push buffered blocks to the file so readers see them. */
bool capture_flush(Capture *c, GError **err);

/* Flush and close; returns false (with err) if anything failed to write. */
bool capture_close(Capture *c, GError **err);

const char *capture_path(const Capture *c);
uint64_t capture_frames(const Capture *c);

#endif
