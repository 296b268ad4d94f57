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

/* One line per command, for `help` and fabricctl --help. */
extern const char fabric_command_help[];

#endif
