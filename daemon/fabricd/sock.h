/*
 * Unix stream socket helpers shared by fabricd, fabricctl and the tests.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_SOCK_H
#define FABRICD_SOCK_H

#include <glib.h>
#include <stdbool.h>

/* Longest path a sockaddr_un can hold (without the terminating NUL). */
size_t unix_path_max(void);

/* Error naming the path and the limit if `path` does not fit sun_path. */
bool unix_path_check(const char *path, GError **err);

/* fabricd's sockets: only its own user (and root) may connect. */
#define UNIX_SOCKET_MODE        0600

/*
 * Bind and listen (non-blocking, close-on-exec), the socket file mode
 * UNIX_SOCKET_MODE whatever the umask.  A stale socket file at `path` is
 * removed first; any other kind of file is an error.
 */
int unix_listen(const char *path, GError **err);

/* Blocking connect; the error message carries strerror. */
int unix_connect(const char *path, GError **err);

#endif
