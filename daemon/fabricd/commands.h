/*
 * Control commands: one text line in, answer lines out.  Independent of
 * sockets so the whole command set can be exercised directly.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_COMMANDS_H
#define FABRICD_COMMANDS_H

#include <glib.h>

#include "fabric.h"

#define FABRIC_COMMAND_ERROR (fabric_command_error_quark())
GQuark fabric_command_error_quark(void);

/* Run `line`; answer lines (each ending in '\n') are appended to `out`. */
bool fabric_command(Fabric *f, const char *line, GString *out, GError **err);

/*
 * Add the rules of the fault file at `path` (docs/fabricd.md, "Fault
 * file"): all of them, or none and an error "PATH:LINE: message".  Each
 * new rule's "rule <id>" line is appended to `out`.
 */
bool fabric_faults_load(Fabric *f, const char *path, GString *out,
                        GError **err);
/* A fault file is at most this large. */
#define FABRIC_FAULT_FILE_MAX   (1024 * 1024)

/* One line per command, for `help` and fabricctl --help. */
extern const char fabric_command_help[];

#endif
