/*
 * The control socket: line-based text commands, answered by zero or more
 * lines and a final "OK" or "ERR <message>".
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_CONTROL_H
#define FABRICD_CONTROL_H

#include <glib.h>

#include "fabric.h"

#define CONTROL_MAX_LINE        4096
#define CONTROL_MAX_CLIENTS     32

typedef struct Control Control;

/* Listen on `path` (after the node sockets: its presence means ready). */
Control *control_new(Fabric *f, const char *path, GError **err);
/* Drop every client, close and unlink the socket. */
void control_free(Control *ctl);

#endif
