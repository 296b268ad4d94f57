/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vcluster cp: copy a file to or from a guest through its guest agent. */
#include "vcluster.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Raw bytes per guest-file-read or guest-file-write: 48 KiB is 64 KiB of
 * base64, so one request or reply stays a little above 64 KiB whatever
 * the file's size (qemu-ga would read up to 48 MiB at once, and jsonchan
 * takes lines up to 64 MiB).
 */
#define CP_CHUNK (48 * 1024)
#define CP_AGENT_TIMEOUT_US (15 * G_USEC_PER_SEC)
/* Resync or reconnect only to close a handle after an error. */
#define CP_CLOSE_TIMEOUT_US (5 * G_USEC_PER_SEC)

gboolean cp_split_remote(const char *arg, char **node, char **path)
{
    const char *colon = strchr(arg, ':');

    if (!colon || colon == arg || memchr(arg, '/', colon - arg)) {
        return FALSE;
    }
    *node = g_strndup(arg, colon - arg);
    *path = g_strdup(colon + 1);
    return TRUE;
}

gboolean cp_parse_args(const char *src, const char *dst, CpArgs *a,
                       GError **err)
{
    g_autofree char *src_node = NULL, *src_path = NULL;
    g_autofree char *dst_node = NULL, *dst_path = NULL;
    gboolean from = cp_split_remote(src, &src_node, &src_path);
    gboolean to = cp_split_remote(dst, &dst_node, &dst_path);

    memset(a, 0, sizeof(*a));
    if (from == to) {
        g_set_error(err, VC_ERROR, EINVAL, "%s: give one NODE:PATH and one "
                    "local path (both are %s: '%s', '%s')",
                    from ? "cannot copy between two nodes" : "no node",
                    from ? "NODE:PATH" : "local", src, dst);
        return FALSE;
    }
    const char *remote = from ? src_path : dst_path;
    const char *local = from ? dst : src;
    if (!*remote) {
        g_set_error(err, VC_ERROR, EINVAL, "'%s': no PATH after the node",
                    from ? src : dst);
        return FALSE;
    }
    if (!*local) {
        g_set_error(err, VC_ERROR, EINVAL, "empty local path");
        return FALSE;
    }
    a->to_guest = to;
    a->node = g_steal_pointer((from ? &src_node : &dst_node));
    a->local = g_strdup(local);
    if (to && g_str_has_suffix(remote, "/")) {
        /* A directory in the guest: keep the file's name, as cp does. */
        g_autofree char *base = g_path_get_basename(local);
        if (strcmp(local, "-") == 0 || strcmp(base, "/") == 0) {
            g_set_error(err, VC_ERROR, EINVAL, "'%s': give the guest file a "
                        "name when copying %s", dst,
                        strcmp(local, "-") == 0 ? "stdin" : "a directory");
            cp_args_clear(a);
            return FALSE;
        }
        a->remote = g_strconcat(remote, base, NULL);
    } else {
        a->remote = g_strdup(remote);
    }
    return TRUE;
}

void cp_args_clear(CpArgs *a)
{
    g_clear_pointer(&a->node, g_free);
    g_clear_pointer(&a->remote, g_free);
    g_clear_pointer(&a->local, g_free);
}

char *cp_local_dest(const char *dest, const char *remote)
{
    g_autofree char *base = g_path_get_basename(remote);

    if (strcmp(base, "/") != 0 && strcmp(base, ".") != 0 &&
        (g_str_has_suffix(dest, "/") ||
         g_file_test(dest, G_FILE_TEST_IS_DIR))) {
        return g_build_filename(dest, base, NULL);
    }
    return g_strdup(dest);
}

static volatile sig_atomic_t cp_stop;

static void on_cp_signal(int sig)
{
    cp_stop = sig;
}

/* What the agent said, without the command and its context. */
static const char *reason(const GError *e)
{
    const char *last = g_strrstr(e->message, ": ");
    return last ? last + 2 : e->message;
}

/* A guest file and the agent connection that opened it. */
typedef struct {
    char *sock;
    JsonChan *ch;
    gint64 handle;              /* -1: none open */
    char *label;                /* "node1:/path", for messages */
} GuestFile;

static gboolean guest_connect(GuestFile *g, int node, GError **err)
{
    g->ch = agent_open(g->sock, g_get_monotonic_time() + CP_AGENT_TIMEOUT_US,
                       err);
    if (!g->ch) {
        g_prefix_error(err, "node%d: ", node);
    }
    return g->ch != NULL;
}

/*
 * qemu-ga keeps an open handle after its client goes, until the agent
 * restarts, so every path closes it.  After an error a late reply may
 * still be on its way (a call that timed out): sync first, so that it
 * does not pass for the close's answer, and reconnect if the channel
 * broke.
 */
static gboolean guest_close(GuestFile *g, gboolean after_error,
                            GError **err)
{
    gint64 id = g_random_int_range(1, G_MAXINT32);
    gint64 deadline = g_get_monotonic_time() + CP_CLOSE_TIMEOUT_US;
    GError *e = NULL;

    if (g->handle < 0) {
        return TRUE;
    }
    if (after_error && !(g->ch && agent_send_sync(g->ch, id, NULL) &&
                         agent_wait_sync(g->ch, id, deadline, NULL))) {
        jsonchan_close(g->ch);
        g->ch = agent_open(g->sock, deadline, &e);
    }
    gboolean ok = g->ch && agent_file_close(g->ch, g->handle, &e);
    if (!ok && after_error) {
        g_printerr("vcluster cp: %s: could not close the agent's handle %"
                   G_GINT64_FORMAT ": %s\n", g->label, g->handle,
                   e ? e->message : "guest agent gone");
    }
    if (e) {
        g_propagate_error(err, e);
    }
    g->handle = -1;
    return ok;
}

static void guest_clear(GuestFile *g)
{
    jsonchan_close(g->ch);
    g_free(g->sock);
    g_free(g->label);
}

/* Read up to len bytes, fewer only at the end; -1 on error. */
static gssize read_full(int fd, char *buf, gsize len)
{
    gsize done = 0;

    while (done < len) {
        gssize n = read(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR && !cp_stop) {
            continue;
        }
        if (n < 0) {
            return -1;
        }
        if (n == 0) {
            break;
        }
        done += n;
    }
    return done;
}

static gboolean write_all(int fd, const char *buf, gsize len)
{
    while (len > 0) {
        gssize n = write(fd, buf, len);
        if (n < 0 && errno == EINTR && !cp_stop) {
            continue;
        }
        if (n < 0) {
            return FALSE;
        }
        buf += n;
        len -= n;
    }
    return TRUE;
}

static int interrupted(void)
{
    g_printerr("vcluster cp: interrupted by signal %d\n", (int)cp_stop);
    return 128 + cp_stop;
}

static int copy_to_guest(GuestFile *g, int node, const CpArgs *a)
{
    gboolean use_stdin = strcmp(a->local, "-") == 0;
    int fd = use_stdin ? STDIN_FILENO : open(a->local, O_RDONLY | O_CLOEXEC);
    struct stat st;
    g_autoptr(GError) err = NULL;
    g_autofree char *buf = NULL;
    int rc = 1;

    /* Nothing in the guest is touched before the source opens. */
    if (fd < 0 || fstat(fd, &st) < 0) {
        g_printerr("vcluster cp: %s: %s\n", a->local, g_strerror(errno));
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        g_printerr("vcluster cp: %s: %s\n", a->local, g_strerror(EISDIR));
        goto out;
    }
    if (!guest_connect(g, node, &err)) {
        g_printerr("vcluster cp: %s\n", err->message);
        goto out;
    }
    g->label = g_strdup_printf("node%d:%s", node, a->remote);
    g->handle = agent_file_open(g->ch, a->remote, "wb", &err);
    /* The agent's text is strerror in the guest's C locale. */
    if (g->handle < 0 && !use_stdin &&
        strcmp(reason(err), "Is a directory") == 0) {
        /* An existing guest directory: the file goes in it, as cp does. */
        g_autofree char *base = g_path_get_basename(a->local);
        g_autofree char *inside = g_build_filename(a->remote, base, NULL);
        g_clear_error(&err);
        g_free(g->label);
        g->label = g_strdup_printf("node%d:%s", node, inside);
        g->handle = agent_file_open(g->ch, inside, "wb", &err);
    }
    if (g->handle < 0) {
        g_printerr("vcluster cp: %s: %s\n", g->label, reason(err));
        goto out;
    }

    buf = g_malloc(CP_CHUNK);
    for (;;) {
        gssize n = read_full(fd, buf, CP_CHUNK);
        if (cp_stop) {
            rc = interrupted();
            break;
        }
        if (n < 0) {
            g_printerr("vcluster cp: %s: %s\n", a->local, g_strerror(errno));
            break;
        }
        if (n == 0) {
            rc = 0;
            break;
        }
        if (!agent_file_write(g->ch, g->handle, buf, n, &err)) {
            g_printerr("vcluster cp: %s: %s\n", g->label, reason(err));
            break;
        }
    }
    /* The agent's stdio flushes at close: a full disk shows up here. */
    g_clear_error(&err);
    if (!guest_close(g, rc != 0, &err) && rc == 0) {
        g_printerr("vcluster cp: %s: %s\n", g->label, reason(err));
        rc = 1;
    }
out:
    if (fd > STDIN_FILENO) {
        close(fd);
    }
    return rc;
}

/*
 * The host file is written under a temporary name beside it and renamed
 * once the copy is complete, so a failed copy leaves the old file (or
 * none).  A device or FIFO is written in place.
 */
typedef struct {
    char *dest;
    char *tmp;                  /* NULL: writing `dest` directly */
    int fd;
} HostFile;

static gboolean host_open(HostFile *h, const char *path, GError **err)
{
    struct stat st;

    h->fd = -1;
    if (strcmp(path, "-") == 0) {
        h->dest = g_strdup(path);
        h->fd = STDOUT_FILENO;
        return TRUE;
    }
    /* Through a symlink to its target, as cp writes. */
    char *real = realpath(path, NULL);
    h->dest = g_strdup(real ? real : path);
    free(real);
    gboolean exists = stat(h->dest, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        h->fd = open(h->dest, O_WRONLY | O_CLOEXEC);
    } else {
        g_autofree char *dir = g_path_get_dirname(h->dest);
        g_autofree char *base = g_path_get_basename(h->dest);
        h->tmp = g_strdup_printf("%s/.%s.vcluster-cp-XXXXXX", dir, base);
        h->fd = g_mkstemp_full(h->tmp, O_WRONLY | O_CLOEXEC, 0666);
        if (h->fd >= 0 && exists && fchmod(h->fd, st.st_mode & 07777) < 0) {
            int e = errno;
            close(h->fd);
            unlink(h->tmp);
            h->fd = -1;
            errno = e;
        }
    }
    if (h->fd < 0) {
        g_set_error(err, VC_ERROR, errno, "%s: %s", path, g_strerror(errno));
        g_clear_pointer(&h->tmp, g_free);
        return FALSE;
    }
    return TRUE;
}

/* Done: rename into place (ok) or remove the temporary file. */
static gboolean host_finish(HostFile *h, gboolean ok, GError **err)
{
    const char *what = h->tmp ? h->tmp : h->dest;

    if (ok && h->tmp && fsync(h->fd) < 0) {
        g_set_error(err, VC_ERROR, errno, "%s: %s", what, g_strerror(errno));
        ok = FALSE;
    }
    if (h->fd > STDOUT_FILENO && close(h->fd) < 0 && ok) {
        g_set_error(err, VC_ERROR, errno, "%s: %s", what, g_strerror(errno));
        ok = FALSE;
    }
    h->fd = -1;
    if (ok && h->tmp && rename(h->tmp, h->dest) < 0) {
        g_set_error(err, VC_ERROR, errno, "%s: %s", h->dest,
                    g_strerror(errno));
        ok = FALSE;
    }
    if (!ok && h->tmp) {
        unlink(h->tmp);
    }
    g_clear_pointer(&h->tmp, g_free);
    g_clear_pointer(&h->dest, g_free);
    return ok;
}

static int copy_from_guest(GuestFile *g, int node, const CpArgs *a)
{
    gboolean to_stdout = strcmp(a->local, "-") == 0;
    g_autofree char *dest = to_stdout ? g_strdup("-")
                                      : cp_local_dest(a->local, a->remote);
    g_autoptr(GError) err = NULL;
    HostFile h = { .fd = -1 };
    int rc = 1;

    if (!guest_connect(g, node, &err)) {
        g_printerr("vcluster cp: %s\n", err->message);
        return 1;
    }
    g->label = g_strdup_printf("node%d:%s", node, a->remote);
    g->handle = agent_file_open(g->ch, a->remote, "rb", &err);
    if (g->handle < 0) {
        g_printerr("vcluster cp: %s: %s\n", g->label, reason(err));
        return 1;
    }
    if (!host_open(&h, dest, &err)) {
        g_printerr("vcluster cp: %s\n", err->message);
        guest_close(g, TRUE, NULL);
        return 1;
    }
    for (;;) {
        gboolean eof = FALSE;
        g_autoptr(GBytes) data = agent_file_read(g->ch, g->handle, CP_CHUNK,
                                                 &eof, &err);
        if (cp_stop) {
            rc = interrupted();
            break;
        }
        if (!data) {
            g_printerr("vcluster cp: %s: %s\n", g->label, reason(err));
            break;
        }
        gsize len;
        const char *p = g_bytes_get_data(data, &len);
        if (!write_all(h.fd, p, len)) {
            g_printerr("vcluster cp: %s: %s\n", dest,
                       cp_stop ? "interrupted" : g_strerror(errno));
            break;
        }
        /* A regular file ends with eof; count 0 ends anything else. */
        if (eof || len == 0) {
            rc = 0;
            break;
        }
    }
    g_clear_error(&err);
    if (!guest_close(g, rc != 0, &err) && rc == 0) {
        g_printerr("vcluster cp: %s: %s\n", g->label, reason(err));
        rc = 1;
    }
    g_clear_error(&err);
    if (!host_finish(&h, rc == 0, &err) && rc == 0) {
        g_printerr("vcluster cp: %s\n", err->message);
        rc = 1;
    }
    return rc;
}

int cmd_cp(int argc, char **argv)
{
    g_autofree char *name = NULL;
    GOptionEntry entries[] = {
        { "name", 0, 0, G_OPTION_ARG_STRING, &name, "cluster name", "NAME" },
        { NULL }
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new(
        "NODE:PATH LOCALPATH | LOCALPATH NODE:PATH - copy a file");
    g_autoptr(GError) err = NULL;
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("vcluster cp: %s\n", err->message);
        return 2;
    }
    /* GOption leaves a leading "--" (before a path that starts with -). */
    int first = argc > 1 && strcmp(argv[1], "--") == 0 ? 2 : 1;
    if (argc - first != 2) {
        g_printerr("vcluster cp: usage: vcluster cp [--name NAME] "
                   "NODE:PATH LOCALPATH|-, or LOCALPATH|- NODE:PATH\n");
        return 2;
    }
    CpArgs a;
    if (!cp_parse_args(argv[first], argv[first + 1], &a, &err)) {
        g_printerr("vcluster cp: %s\n", err->message);
        return 2;
    }
    g_autofree char *cname = cluster_default_name(name);
    Cluster *c = cluster_load(cname, &err);
    if (!c) {
        g_printerr("vcluster cp: %s\n", err->message);
        cp_args_clear(&a);
        return 1;
    }
    g_autoptr(GArray) nodes = NULL;
    if (strcmp(a.node, "all") == 0 || strchr(a.node, ',')) {
        g_printerr("vcluster cp: '%s': give one node (a number or nodeN)\n",
                   a.node);
    } else if (!(nodes = cluster_parse_nodes(c, a.node, NULL))) {
        g_printerr("vcluster cp: bad node '%s': cluster '%s' has nodes "
                   "0..%d\n", a.node, c->name, c->nodes - 1);
    }
    if (!nodes) {
        cp_args_clear(&a);
        cluster_free(c);
        return 2;
    }
    int node = g_array_index(nodes, int, 0);

    /* Stop between chunks, so that the guest handle is closed and no
     * temporary file stays behind; EPIPE instead of death by SIGPIPE. */
    struct sigaction sa = { .sa_handler = on_cp_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    GuestFile g = { .sock = cluster_node_file(c, node, "qga.sock"),
                    .handle = -1 };
    int rc = a.to_guest ? copy_to_guest(&g, node, &a)
                        : copy_from_guest(&g, node, &a);
    guest_clear(&g);
    cp_args_clear(&a);
    cluster_free(c);
    return rc;
}
