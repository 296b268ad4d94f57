/*
 * Node ports: one listening socket per node, at most one peer on each.
 * Reads are framed with the owner's parse(); writes go through a bounded
 * output queue so a slow peer never blocks the others.  The owner hears of
 * frames, departures and drained output through PortOps (ports.h).
 *
 * The ports and their lock-step stage call each other: the stage is the
 * ports' own (ports call lockstep.c), and what it needs done to a port
 * comes back through the LockstepOps at the end of this file.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE     /* accept4 */
#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lockstep.h"
#include "ports.h"
#include "sock.h"

/* One read per wakeup, so a busy port cannot starve the others. */
#define READ_CHUNK          (64 * 1024)
#define WRITE_IOV_MAX       64
/* After this many log lines about a peer's garbage, stay quiet. */
#define MALFORMED_LOG_LIMIT 5
/* A peer that does not read its REJECT is cut off after this long. */
#define CLOSE_FLUSH_MS      1000

typedef struct OutItem {
    GBytes *frame;
    uint8_t prefix[FABRIC_PREFIX_MAX];
    uint8_t prefix_len;
    size_t sent;            /* bytes of prefix + frame already written */
} OutItem;

static gboolean port_writable(int fd, GIOCondition cond, gpointer opaque);
static gboolean port_readable(int fd, GIOCondition cond, gpointer opaque);

static void out_item_free(gpointer data)
{
    OutItem *item = data;

    g_bytes_unref(item->frame);
    g_free(item);
}

void port_disconnect(Port *p, const char *why)
{
    PortSet *set = p->set;

    if (p->fd < 0) {
        return;
    }
    if (why) {
        fprintf(stderr, "fabricd: node%u: %s; port free again\n", p->id, why);
    }
    if (p->in_watch) {
        g_source_remove(p->in_watch);
        p->in_watch = 0;
    }
    if (p->out_watch) {
        g_source_remove(p->out_watch);
        p->out_watch = 0;
    }
    if (p->close_timer) {
        g_source_remove(p->close_timer);
        p->close_timer = 0;
    }
    if (p->resume_idle) {
        g_source_remove(p->resume_idle);
        p->resume_idle = 0;
    }
    p->closing = false;
    p->input_paused = false;
    g_clear_pointer(&p->close_why, g_free);
    close(p->fd);
    p->fd = -1;
    set->connected[p->id] = false;
    g_queue_clear_full(&p->out, out_item_free);
    p->out_bytes = 0;
    p->out_frames = 0;
    g_byte_array_unref(p->in);
    p->in = NULL;
    set->ops.disconnected(set->opaque, p->id);
    if (set->lockstep) {
        lockstep_port_down(set->lockstep, p->id);
    }
}

/* Advance the queue past `n` written bytes. */
static void consume_written(Port *p, size_t n)
{
    while (n) {
        OutItem *item = g_queue_peek_head(&p->out);
        size_t total = item->prefix_len + g_bytes_get_size(item->frame);
        size_t step = MIN(n, total - item->sent);

        item->sent += step;
        p->out_bytes -= step;
        n -= step;
        if (item->sent == total) {
            out_item_free(g_queue_pop_head(&p->out));
            p->out_frames--;
        }
    }
}

/* Write as much as the socket takes; arm a write watch for the rest. */
static void port_flush(Port *p)
{
    PortSet *set = p->set;
    size_t queued = p->out_bytes;

    while (!g_queue_is_empty(&p->out)) {
        struct iovec iov[WRITE_IOV_MAX];
        struct msghdr msg = { .msg_iov = iov };
        int n_iov = 0;
        ssize_t n;

        for (GList *l = p->out.head; l && n_iov + 2 <= WRITE_IOV_MAX;
             l = l->next) {
            OutItem *item = l->data;
            size_t flen;
            const uint8_t *fdata = g_bytes_get_data(item->frame, &flen);
            size_t skip = item->sent;

            if (skip < item->prefix_len) {
                iov[n_iov].iov_base = item->prefix + skip;
                iov[n_iov++].iov_len = item->prefix_len - skip;
                skip = 0;
            } else {
                skip -= item->prefix_len;
            }
            if (flen > skip) {
                iov[n_iov].iov_base = (void *)(fdata + skip);
                iov[n_iov++].iov_len = flen - skip;
            }
        }
        msg.msg_iovlen = n_iov;
        n = sendmsg(p->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                break;
            }
            g_autofree char *why = g_strdup_printf("write failed: %s",
                                                   g_strerror(errno));
            port_disconnect(p, why);
            return;
        }
        consume_written(p, n);
    }
    if (!g_queue_is_empty(&p->out) && !p->out_watch) {
        p->out_watch = g_unix_fd_add(p->fd, G_IO_OUT, port_writable, p);
    } else if (g_queue_is_empty(&p->out) && p->out_watch) {
        g_source_remove(p->out_watch);
        p->out_watch = 0;
    }
    if (p->out_bytes < queued) {
        set->ops.drained(set->opaque, p->id);
    }
    if (p->closing && g_queue_is_empty(&p->out)) {
        g_autofree char *why = g_steal_pointer(&p->close_why);

        port_disconnect(p, why);
    }
}

static gboolean close_timeout(gpointer opaque)
{
    Port *p = opaque;
    g_autofree char *why = g_strdup_printf("%s (peer did not read it)",
                                           p->close_why);

    p->close_timer = 0;     /* this source ends */
    port_disconnect(p, why);
    return G_SOURCE_REMOVE;
}

/* Stop reading; disconnect once the queued output (a REJECT) is written. */
static void port_close_after_flush(Port *p, const char *why)
{
    if (p->fd < 0 || p->closing) {
        return;
    }
    if (p->in_watch) {
        g_source_remove(p->in_watch);
        p->in_watch = 0;
    }
    p->closing = true;
    p->close_why = g_strdup(why);
    p->close_timer = g_timeout_add(CLOSE_FLUSH_MS, close_timeout, p);
    if (!p->out_watch) {
        port_flush(p);
    }
}

static gboolean port_writable(int fd, GIOCondition cond, gpointer opaque)
{
    Port *p = opaque;

    p->out_watch = 0;       /* this source ends; port_flush re-arms */
    port_flush(p);
    return G_SOURCE_REMOVE;
}

size_t port_out_cost(const Port *p)
{
    return p->out_bytes + p->held_bytes +
           (p->out_frames + p->held_frames) * FABRIC_FRAME_COST;
}

void port_count_held(Port *p, size_t len, bool held)
{
    if (held) {
        p->held_bytes += len;
        p->held_frames++;
    } else {
        p->held_bytes -= len;
        p->held_frames--;
    }
}

/* Queue `frame` if the port's cost stays within `limit`. */
static bool port_queue(Port *p, GBytes *frame, size_t limit)
{
    PortSet *set = p->set;
    uint8_t prefix[FABRIC_PREFIX_MAX];
    size_t prefix_len, total, cost;
    OutItem *item;

    /* lock-step holds the frame until its grant; it is queued then */
    if (set->lockstep && lockstep_holds_output(set->lockstep)) {
        return !p->closing && lockstep_output(set->lockstep, p->id, frame,
                                              limit);
    }
    prefix_len = set->ops.encode_prefix(g_bytes_get_size(frame), prefix);
    total = prefix_len + g_bytes_get_size(frame);
    /* frames lock-step holds have their own bound (lockstep_output) */
    cost = set->lockstep ? p->out_bytes + p->out_frames * FABRIC_FRAME_COST
                         : port_out_cost(p);
    if (p->closing || cost + total + FABRIC_FRAME_COST > limit) {
        return false;
    }
    item = g_new0(OutItem, 1);
    memcpy(item->prefix, prefix, prefix_len);
    item->prefix_len = prefix_len;
    item->frame = g_bytes_ref(frame);
    g_queue_push_tail(&p->out, item);
    p->out_bytes += total;
    p->out_frames++;
    if (!p->out_watch) {
        port_flush(p);
    }
    return true;
}

bool port_send(Port *p, GBytes *frame)
{
    return port_queue(p, frame, p->set->out_limit);
}

/*
 * Queue a frame that was counted in the port's bound while lock-step held
 * it (at a grant): it is queued whatever the bound says now.
 */
static bool port_send_held(Port *p, GBytes *frame)
{
    return port_queue(p, frame, SIZE_MAX);
}

void port_cut_off(Port *p, const char *why)
{
    if (p->fd < 0 || p->closing) {
        return;
    }
    p->c.overflows++;
    /* deferred: the caller may be in the middle of this port's input */
    port_close_after_flush(p, why);
}

void port_overflow(Port *p, const char *what)
{
    g_autofree char *why = g_strdup_printf(
        "%s: output queue over its bound (%zu bytes, %zu frames; the peer "
        "does not read); closing", what, p->out_bytes, p->out_frames);

    port_cut_off(p, why);
}

bool port_send_own(Port *p, GBytes *frame)
{
    if (p->fd < 0 || p->closing) {
        return false;
    }
    if (!port_queue(p, frame, p->set->out_limit + FABRIC_OWN_RESERVE)) {
        port_overflow(p, "fabricd's own frame not sent");
        return false;
    }
    return true;
}

unsigned port_drop_queued(Port *p)
{
    OutItem *head = g_queue_peek_head(&p->out);
    unsigned dropped = 0;

    /* a frame partly written must be finished, or the stream breaks */
    if (head && head->sent) {
        g_queue_pop_head(&p->out);
    } else {
        head = NULL;
    }
    while (!g_queue_is_empty(&p->out)) {
        OutItem *item = g_queue_pop_head(&p->out);

        p->out_bytes -= item->prefix_len + g_bytes_get_size(item->frame);
        p->out_frames--;
        out_item_free(item);
        dropped++;
    }
    if (head) {
        g_queue_push_head(&p->out, head);
    }
    return dropped;
}

/*
 * A node's input watch.  fabricd never runs the loop from inside a
 * callback, so the watch may be dispatched as "recursive": GLib then
 * does not take its fd out of the poll set and put it back around each
 * dispatch, two wake-ups of the loop per read (in lock-step, per round
 * and node).
 */
static guint port_watch_input(Port *p, GIOCondition cond,
                              GUnixFDSourceFunc fn)
{
    GSource *s = g_unix_fd_source_new(p->fd, cond);
    guint id;

    g_source_set_callback(s, (GSourceFunc)(void (*)(void))fn, p, NULL);
    g_source_set_can_recurse(s, TRUE);
    id = g_source_attach(s, NULL);
    g_source_unref(s);
    return id;
}

/* While input is paused: the peer hung up, nothing more will be read. */
static gboolean port_hangup(int fd, GIOCondition cond, gpointer opaque)
{
    Port *p = opaque;

    p->in_watch = 0;        /* returning REMOVE ends this source */
    port_disconnect(p, "peer disconnected while its input was paused");
    return G_SOURCE_REMOVE;
}

static bool port_process_input(Port *p);

/* Run the frames a pause left in the input buffer. */
static gboolean port_resume_input(gpointer opaque)
{
    Port *p = opaque;

    p->resume_idle = 0;     /* this source ends */
    if (p->fd >= 0 && !p->closing && !p->input_paused && p->in) {
        port_process_input(p);
    }
    return G_SOURCE_REMOVE;
}

void port_pause_input(Port *p, bool paused)
{
    /* a paused node could not report its round: virtual time would stop */
    if (p->set->lockstep || p->input_paused == paused) {
        return;
    }
    p->input_paused = paused;
    if (p->fd < 0 || p->closing) {
        return;     /* nothing is read anyway */
    }
    /* may run inside this port's own read callback: removing it is safe */
    if (p->in_watch) {
        g_source_remove(p->in_watch);
    }
    if (paused) {
        p->in_watch = g_unix_fd_add(p->fd, G_IO_HUP | G_IO_ERR, port_hangup,
                                    p);
    } else {
        p->in_watch = port_watch_input(p, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                       port_readable);
        /* not from here: resuming may happen deep inside another port */
        if (p->in && p->in->len && !p->resume_idle) {
            p->resume_idle = g_idle_add(port_resume_input, p);
        }
    }
}

static void log_limited(Port *p, const char *what, const char *why)
{
    if (p->logged_malformed++ < MALFORMED_LOG_LIMIT) {
        fprintf(stderr, "fabricd: node%u: %s: %s%s\n", p->id, what, why,
                p->logged_malformed == MALFORMED_LOG_LIMIT ?
                " (further malformed frames on this connection not logged)"
                : "");
    }
}

/* Route one whole frame from `p`; false once `p` is gone or closing. */
static bool port_route_frame(Port *p, const uint8_t *frame, size_t len)
{
    PortSet *set = p->set;
    unsigned generation = p->generation;
    char why[160] = "";
    IngressStatus st = set->ops.frame(set->opaque, p->id, frame, len, why,
                                      sizeof(why));

    if (st == INGRESS_MALFORMED) {
        p->c.malformed++;
        log_limited(p, "malformed frame skipped", why);
    } else {
        p->c.rx_frames++;
        p->c.rx_bytes += len;
    }
    if (p->fd < 0 || p->generation != generation) {
        return false;   /* a write to this port failed */
    }
    if (st == INGRESS_REJECTED) {
        log_limited(p, "rejected", why);
    } else if (st == INGRESS_REJECT_CLOSE) {
        g_autofree char *msg = g_strdup_printf("rejected (%s); closing", why);

        p->c.rejected++;
        port_close_after_flush(p, msg);
        return false;
    }
    return true;
}

/* Frame and route everything complete in the input buffer. */
static bool port_process_input(Port *p)
{
    PortSet *set = p->set;
    size_t pos = 0;

    /*
     * A paused port stops after the frame that paused it: the rest waits
     * in `in`, so a sender adds at most one frame past a full queue.  A
     * port being cut off (port_overflow) stops at once.
     */
    while (pos < p->in->len && !p->input_paused && !p->closing) {
        FrameSpan span = { 0 };
        const uint8_t *at = p->in->data + pos;

        switch (set->ops.parse(at, p->in->len - pos, &span)) {
        case FRAME_NEED_MORE:
            goto done;
        case FRAME_FATAL: {
            g_autofree char *why = g_strdup_printf(
                "stream out of sync (%s); closing", span.why);

            p->c.malformed++;
            port_disconnect(p, why);
            return false;
        }
        case FRAME_SKIP:
            p->c.malformed++;
            log_limited(p, "malformed frame skipped", span.why);
            break;
        case FRAME_OK: {
            /* the kind may write to this port, and a failed write frees */
            GByteArray *hold = g_byte_array_ref(p->in);
            bool alive = set->lockstep
                ? lockstep_input(set->lockstep, p->id, at + span.offset,
                                 span.len)
                : port_route_frame(p, at + span.offset, span.len);

            g_byte_array_unref(hold);
            if (!alive) {
                return false;
            }
            break;
        }
        }
        pos += span.consumed;
    }
done:
    g_byte_array_remove_range(p->in, 0, pos);
    return true;
}

static gboolean port_readable(int fd, GIOCondition cond, gpointer opaque)
{
    Port *p = opaque;
    guint old_len = p->in->len;
    size_t room = MIN(READ_CHUNK, FABRIC_IN_MAX - MIN(old_len, FABRIC_IN_MAX));
    ssize_t n;
    int read_errno;

    if (!room) {
        /* a pause left whole frames: run them before reading more */
        if (!port_process_input(p)) {
            p->in_watch = 0;
            return G_SOURCE_REMOVE;
        }
        return G_SOURCE_CONTINUE;
    }
    g_byte_array_set_size(p->in, old_len + room);
    n = read(fd, p->in->data + old_len, room);
    read_errno = errno;
    g_byte_array_set_size(p->in, old_len + MAX(n, 0));
    if (n < 0 && (read_errno == EAGAIN || read_errno == EINTR)) {
        return G_SOURCE_CONTINUE;
    }
    if (n <= 0) {
        g_autofree char *why = n == 0 ? g_strdup("peer disconnected")
            : g_strdup_printf("read failed: %s", g_strerror(read_errno));

        p->in_watch = 0;    /* returning REMOVE ends this source */
        port_disconnect(p, why);
        return G_SOURCE_REMOVE;
    }
    if (!port_process_input(p)) {
        p->in_watch = 0;
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

static gboolean port_acceptable(int listen_fd, GIOCondition cond,
                                gpointer opaque)
{
    Port *p = opaque;
    PortSet *set = p->set;
    int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (fd < 0) {
        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
            fprintf(stderr, "fabricd: node%u: accept failed: %s\n", p->id,
                    g_strerror(errno));
        }
        return G_SOURCE_CONTINUE;
    }
    if (set->lockstep && !lockstep_may_connect(set->lockstep, p->id)) {
        p->c.rejected++;
        fprintf(stderr, "fabricd: node%u: connection refused: the node left "
                "this lock-step run (start a new run)\n", p->id);
        close(fd);
        return G_SOURCE_CONTINUE;
    }
    if (p->fd >= 0) {
        /* One peer per node: the socket is the node's identity. */
        p->c.rejected++;
        fprintf(stderr, "fabricd: node%u: second connection rejected "
                "(port already in use)\n", p->id);
        close(fd);
        return G_SOURCE_CONTINUE;
    }
    p->fd = fd;
    p->generation++;
    p->epoch++;
    p->c.connects++;
    p->logged_malformed = 0;
    p->input_paused = false;
    p->in = g_byte_array_sized_new(READ_CHUNK);
    set->connected[p->id] = true;
    p->in_watch = port_watch_input(p, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                   port_readable);
    fprintf(stderr, "fabricd: node%u: connected\n", p->id);
    return G_SOURCE_CONTINUE;
}

/* ---- what the lock-step stage asks of the ports (LockstepOps) ---- */

static bool ls_route(void *opaque, unsigned port, const uint8_t *frame,
                     size_t len)
{
    PortSet *set = opaque;

    return port_route_frame(&set->port[port], frame, len);
}

static bool ls_live(void *opaque, unsigned port)
{
    PortSet *set = opaque;
    const Port *p = &set->port[port];

    return p->fd >= 0 && !p->closing;
}

static void ls_send(void *opaque, unsigned port, GBytes *frame)
{
    PortSet *set = opaque;

    port_send_held(&set->port[port], frame);
}

static void ls_held(void *opaque, unsigned port, size_t len, bool in)
{
    PortSet *set = opaque;

    port_count_held(&set->port[port], len, in);
}

static size_t ls_out_cost(void *opaque, unsigned port)
{
    PortSet *set = opaque;

    return port_out_cost(&set->port[port]);
}

static void ls_broken(void *opaque, unsigned port, const char *why)
{
    PortSet *set = opaque;
    Port *p = &set->port[port];

    p->c.malformed++;
    port_disconnect(p, why);
}

static void ls_cut_off(void *opaque, unsigned port, const char *why)
{
    PortSet *set = opaque;

    port_cut_off(&set->port[port], why);
}

static const LockstepOps port_lockstep_ops = {
    .route = ls_route,
    .live = ls_live,
    .send = ls_send,
    .held = ls_held,
    .out_cost = ls_out_cost,
    .broken = ls_broken,
    .cut_off = ls_cut_off,
};

Lockstep *port_set_start_lockstep(PortSet *set, uint8_t kind,
                                  bool one_write, uint64_t lookahead_ns,
                                  uint64_t quantum_ns)
{
    LockstepSetup setup = {
        .nodes = set->count,
        .connected = set->connected,
        .kind = kind,
        .one_write = one_write,
        .lookahead_ns = lookahead_ns,
        .quantum_ns = quantum_ns,
    };

    set->lockstep = lockstep_new(&setup, &port_lockstep_ops, set);
    return set->lockstep;
}

/* ---- the set of ports ---- */

PortSet *port_set_new(unsigned count, const char *dir, const PortOps *ops,
                      void *opaque)
{
    PortSet *set = g_new0(PortSet, 1);

    set->port = g_new0(Port, count);
    set->connected = g_new0(bool, count);
    set->count = count;
    set->out_limit = FABRIC_OUT_LIMIT;
    set->ops = *ops;
    set->opaque = opaque;
    for (unsigned i = 0; i < count; i++) {
        Port *p = &set->port[i];

        p->set = set;
        p->id = i;
        p->listen_fd = -1;
        p->fd = -1;
        g_queue_init(&p->out);
        p->path = g_strdup_printf("%s/node%u.sock", dir, i);
    }
    return set;
}

bool port_set_listen(PortSet *set, GError **err)
{
    for (unsigned i = 0; i < set->count; i++) {
        Port *p = &set->port[i];

        p->listen_fd = unix_listen(p->path, err);
        if (p->listen_fd < 0) {
            return false;
        }
        p->listen_watch = g_unix_fd_add(p->listen_fd, G_IO_IN,
                                        port_acceptable, p);
    }
    return true;
}

void port_set_close(PortSet *set)
{
    lockstep_free(set->lockstep);
    set->lockstep = NULL;
    for (unsigned i = 0; i < set->count; i++) {
        Port *p = &set->port[i];

        if (p->fd >= 0) {
            port_disconnect(p, NULL);
        }
        if (p->listen_watch) {
            g_source_remove(p->listen_watch);
            p->listen_watch = 0;
        }
        if (p->listen_fd >= 0) {
            close(p->listen_fd);
            unlink(p->path);
            p->listen_fd = -1;
        }
        g_clear_pointer(&p->path, g_free);
    }
}

void port_set_free(PortSet *set)
{
    if (!set) {
        return;
    }
    g_free(set->connected);
    g_free(set->port);
    g_free(set);
}
