/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sock.h"

size_t unix_path_max(void)
{
    return sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1;
}

bool unix_path_check(const char *path, GError **err)
{
    size_t len = strlen(path);

    if (len > unix_path_max()) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG,
                    "socket path %s is %zu bytes, more than the %zu a unix "
                    "socket allows; use a shorter directory",
                    path, len, unix_path_max());
        return false;
    }
    return true;
}

static void fill_addr(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    memcpy(sa->sun_path, path, strlen(path));
}

static void set_errno_error(GError **err, int e, const char *what,
                            const char *path)
{
    g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s %s: %s",
                what, path, g_strerror(e));
}

int unix_listen(const char *path, GError **err)
{
    struct sockaddr_un sa;
    struct stat st;
    mode_t old_mask;
    int fd, rc, e;

    if (!unix_path_check(path, err)) {
        return -1;
    }
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                        "%s exists and is not a socket; remove it or use "
                        "another directory", path);
            return -1;
        }
        if (unlink(path) < 0 && errno != ENOENT) {
            set_errno_error(err, errno, "cannot remove stale socket", path);
            return -1;
        }
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        set_errno_error(err, errno, "cannot create socket for", path);
        return -1;
    }
    fill_addr(&sa, path);
    /* created 0600 whatever the umask: nobody else connects, not even
       between bind() and a chmod() */
    old_mask = umask(0777 & ~UNIX_SOCKET_MODE);
    rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    e = errno;
    umask(old_mask);
    if (rc < 0) {
        set_errno_error(err, e, "cannot bind", path);
        close(fd);
        return -1;
    }
    if (chmod(path, UNIX_SOCKET_MODE) < 0) {
        set_errno_error(err, errno, "cannot chmod", path);
        close(fd);
        unlink(path);
        return -1;
    }
    if (listen(fd, 8) < 0) {
        set_errno_error(err, errno, "cannot listen on", path);
        close(fd);
        unlink(path);
        return -1;
    }
    return fd;
}

int unix_connect(const char *path, GError **err)
{
    struct sockaddr_un sa;
    int fd;

    if (!unix_path_check(path, err)) {
        return -1;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        set_errno_error(err, errno, "cannot create socket for", path);
        return -1;
    }
    fill_addr(&sa, path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;

        close(fd);
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s",
                    g_strerror(e));
        return -1;
    }
    return fd;
}
