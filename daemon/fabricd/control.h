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
/* Stop running a client's commands while this much output is unread. */
#define CONTROL_OUT_HIGH        (1024 * 1024)
/* A client that sends nothing and reads nothing this long is closed. */
#define CONTROL_IDLE_MS         30000
#define CONTROL_IDLE_MS_MIN     100
#define CONTROL_IDLE_MS_MAX     3600000
/* With every slot taken, a client idle this long makes room for a new one. */
#define CONTROL_EVICT_MS        1000

typedef struct Control Control;

/*
 * Listen on `path` (after the node sockets: its presence means ready);
 * clients idle for `idle_ms` are closed.
 */
Control *control_new(Fabric *f, const char *path, unsigned idle_ms,
                     GError **err);
/* Drop every client, close and unlink the socket. */
void control_free(Control *ctl);

#endif
