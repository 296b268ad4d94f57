/*
 * The path of one frame: route, then per copy: admin state, fault rules,
 * delay line, output queue, capture and counters.  The ports (ports.c)
 * hand their frames up through the PortOps registered here; this file
 * calls down into them, the kind layer (kind.c) and the lock-step clock.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "fabric.h"
#include "proto/base.h"
#include "vcluster/fabric/topology.h"

/* A copy waiting in the delay line. */
typedef struct HeldCopy {
    Fabric *fabric;
    unsigned from, to;
    unsigned epoch;         /* destination's epoch when scheduled */
    GBytes *frame;
    bool corrupted;
} HeldCopy;

uint64_t fabric_now_ns(void)
{
    /* The GLib clock, so delays agree with GSource ready times. */
    return (uint64_t)g_get_monotonic_time() * 1000;
}

uint64_t fabric_time_ns(const Fabric *f)
{
    return f->lockstep ? lockstep_now(f->lockstep)
                       : fabric_now_ns() - f->start_ns;
}

bool fabric_start_lockstep(Fabric *f, uint64_t quantum_ns, GError **err)
{
    if (!f->kind->lookahead_ns) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                    "--lockstep is not available for --kind %s yet "
                    "(lock-step kinds: eth, ps1, myrinet, telegraphos)",
                    f->kind->name);
        return false;
    }
    f->lockstep = port_set_start_lockstep(
        f->portset, f->kind->id,
        f->kind->encode_prefix == fabric_hdr_frame_prefix,
        f->kind->lookahead_ns(f->kind_state), quantum_ns);
    return true;
}

static uint64_t wall_clock_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

bool fabric_has_link(const Fabric *f, unsigned from, unsigned to)
{
    return f->kind->has_link(f->kind_state, f->nodes, from, to);
}

void fabric_capture_frame(Fabric *f, unsigned to, const uint8_t *data,
                          size_t len, bool corrupted, const char *comment)
{
    g_autoptr(GError) err = NULL;
    uint32_t flags = PCAPNG_EPB_INBOUND;

    if (!f->capture) {
        return;
    }
    if (corrupted) {
        flags |= PCAPNG_EPB_CRC_ERROR;
    }
    /* lock-step: a frame's time is its virtual delivery time */
    uint64_t ts = f->lockstep ? lockstep_deliver_time(f->lockstep, data, len)
                              : wall_clock_ns();
    size_t skip = MIN(f->kind->capture_from, len);

    if (!capture_write(f->capture, to, ts, data + skip, len - skip, flags,
                       comment, &err)) {
        uint64_t frames;

        fprintf(stderr, "fabricd: %s; capture stopped\n", err->message);
        fabric_capture_stop(f, &frames, NULL);
    }
}

/*
 * A lock-step trace names each copy's link and virtual send time, and a
 * fault's verdict: "node0>node1 send=1200", "... dropped rule=3", "... down"
 * (docs/lockstep.md, "Traces").
 */
static void capture_record(Fabric *f, unsigned from, unsigned to,
                           const uint8_t *data, size_t len, bool corrupted,
                           const char *verdict)
{
    char comment[96];

    if (f->lockstep && len >= FABRIC_HDR_LEN) {
        g_snprintf(comment, sizeof(comment), "node%u>node%u send=%" PRIu64
                   "%s%s", from, to, fabric_get_le64(data + 16),
                   verdict ? " " : "", verdict ? verdict : "");
    } else {
        g_snprintf(comment, sizeof(comment), "node%u>node%u", from, to);
    }
    fabric_capture_frame(f, to, data, len, corrupted, comment);
}

static void capture_copy(Fabric *f, unsigned from, unsigned to,
                         GBytes *frame, bool corrupted)
{
    size_t len;
    const uint8_t *data = g_bytes_get_data(frame, &len);

    capture_record(f, from, to, data, len, corrupted, NULL);
}

void fabric_trace_fault(Fabric *f, unsigned from, unsigned to,
                        const uint8_t *frame, size_t len, unsigned rule)
{
    char verdict[32];

    if (!f->capture || !f->lockstep) {
        return;
    }
    if (rule) {
        g_snprintf(verdict, sizeof(verdict), "dropped rule=%u", rule);
    } else {
        g_strlcpy(verdict, "down", sizeof(verdict));
    }
    capture_record(f, from, to, frame, len, false, verdict);
}

void fabric_config_changed(Fabric *f)
{
    if (f->kind->config_changed) {
        f->kind->config_changed(f->kind_state);
    }
}

/* Hand a copy to the destination's output queue and account for it. */
static void deliver(Fabric *f, unsigned from, unsigned to, GBytes *frame,
                    bool corrupted)
{
    Link *link = fabric_link(f, from, to);
    Port *dst = &f->ports[to];
    size_t len = g_bytes_get_size(frame);

    if (dst->fd < 0 || dst->closing) {
        return;     /* the peer left while the copy was on its way */
    }
    if (!port_send(dst, frame)) {
        if (f->no_drop && f->lockstep) {
            /* held for its time: the receiver could not take it sooner */
            g_autofree char *why = g_strdup_printf(
                "lock-step: more held for node %u than its output bound "
                "+ LOCKSTEP_HELD_EXTRA; this node sent "
                "the frame past it; closing", to);

            port_cut_off(&f->ports[from], why);
        } else if (f->no_drop) {
            port_overflow(dst, "copy not queued");
        } else {
            link->c.congested++;
        }
        return;
    }
    link->c.frames++;
    link->c.bytes += len;
    dst->c.tx_frames++;
    dst->c.tx_bytes += len;
    if (f->capture) {
        capture_copy(f, from, to, frame, corrupted);
    }
}

static void held_copy_free(gpointer item)
{
    HeldCopy *h = item;

    g_bytes_unref(h->frame);
    g_free(h);
}

static void held_copy_fire(gpointer item, gpointer opaque)
{
    HeldCopy *h = item;
    Fabric *f = h->fabric;
    Link *link = fabric_link(f, h->from, h->to);

    Port *dst = &f->ports[h->to];

    link->pending--;
    port_count_held(dst, g_bytes_get_size(h->frame), false);
    if (dst->epoch == h->epoch) {
        deliver(f, h->from, h->to, h->frame, h->corrupted);
    } else if (f->kind->output_drained && !f->shutting_down) {
        f->kind->output_drained(f->kind_state, h->to);
    }
    held_copy_free(h);
}

/*
 * Hold a copy in the delay line: `delay_ns` keeps the link's order (it is
 * also held while an earlier copy is), `reorder_ns` is added after that
 * without holding back later copies, which may overtake it by that much.
 */
static void hold_copy(Fabric *f, unsigned from, unsigned to, GBytes *frame,
                      bool corrupted, uint64_t delay_ns, uint64_t reorder_ns)
{
    Link *link = fabric_link(f, from, to);
    HeldCopy *h = g_new0(HeldCopy, 1);
    uint64_t due = fabric_now_ns() + delay_ns;

    /* Never overtake a copy already held on this link: order is kept. */
    if (link->pending && due < link->hold_until_ns) {
        due = link->hold_until_ns;
    }
    link->hold_until_ns = due;
    link->pending++;
    port_count_held(&f->ports[to], g_bytes_get_size(frame), true);
    h->fabric = f;
    h->from = from;
    h->to = to;
    h->epoch = f->ports[to].epoch;
    h->frame = g_bytes_ref(frame);
    h->corrupted = corrupted;
    delay_line_add(f->delays, due + reorder_ns, h);
}

/* Whether one more copy of `len` bytes fits in `to`'s output bound. */
static bool copy_fits(Fabric *f, unsigned to, size_t len)
{
    uint8_t prefix[FABRIC_PREFIX_MAX];
    size_t total = len + f->kind->encode_prefix(len, prefix);

    return port_out_cost(&f->ports[to]) + total + FABRIC_FRAME_COST <=
           f->out_limit;
}

/* Deliver a copy now, or hold it when it is delayed or must keep order. */
static void send_or_hold(Fabric *f, unsigned from, unsigned to, GBytes *copy,
                         bool corrupted, const FaultVerdict *v)
{
    Link *link = fabric_link(f, from, to);

    if (f->lockstep) {
        /*
         * Virtual time: later by the delay, never before an earlier copy
         * on the link, and a reordered copy later still without holding
         * back the next ones.
         */
        size_t len;
        const uint8_t *data = g_bytes_get_data(copy, &len);
        uint64_t due = MAX(lockstep_deliver_time(f->lockstep, data, len) +
                           v->delay_ns, link->hold_until_ns);
        g_autoptr(GBytes) timed = lockstep_retime(copy, due + v->reorder_ns);

        link->hold_until_ns = due;
        deliver(f, from, to, timed, corrupted);
        return;
    }
    if (v->delay_ns || v->reorder_ns || link->pending) {
        /* held copies count towards the port's bound, as queued ones */
        if (!copy_fits(f, to, g_bytes_get_size(copy))) {
            if (f->no_drop) {
                port_overflow(&f->ports[to], "copy not held");
            } else {
                link->c.congested++;
            }
            return;
        }
        hold_copy(f, from, to, copy, corrupted, v->delay_ns, v->reorder_ns);
    } else {
        deliver(f, from, to, copy, corrupted);
    }
}

void fabric_send_copy(Fabric *f, unsigned from, unsigned to, GBytes *frame)
{
    Link *link = fabric_link(f, from, to);
    FaultVerdict v;
    size_t len;
    const uint8_t *data = g_bytes_get_data(frame, &len);
    g_autoptr(GBytes) copy = NULL;
    bool corrupted;

    if (link->admin_down) {
        link->c.down++;
        fabric_trace_fault(f, from, to, data, len, 0);
        return;
    }
    fault_rules_eval(f->rules, from, to, fabric_time_ns(f), data, len,
                     f->kind->corrupt_from, &v);
    switch (v.outcome) {
    case FAULT_DROPPED:
        link->c.dropped++;
        fabric_trace_fault(f, from, to, data, len, v.rule);
        return;
    case FAULT_DOWNED:
        link->c.down++;
        fabric_trace_fault(f, from, to, data, len, 0);
        return;
    case FAULT_PASS:
        break;
    }
    corrupted = v.corrupted != NULL;
    if (v.corrupted) {
        link->c.corrupted++;
        /* a header-framed copy says so; the rules never touch the header */
        if (f->kind->corrupt_from >= FABRIC_HDR_LEN) {
            FabricHdr h;

            fabric_hdr_decode(v.corrupted, &h);
            h.flags |= FABRIC_F_CORRUPTED;
            fabric_hdr_encode(&h, v.corrupted);
        }
        copy = g_bytes_new_take(v.corrupted, len);
    } else {
        copy = g_bytes_ref(frame);
    }
    if (v.delay_ns) {
        link->c.delayed++;
    }
    if (v.reorder_ns) {
        link->c.reordered++;
    }
    send_or_hold(f, from, to, copy, corrupted, &v);
    /*
     * A duplicate goes the same way right behind it.  It is made only if
     * it fits the port's bound: a fault never cuts a peer off, and never
     * makes more than one extra copy.
     */
    if (v.duplicates && f->ports[to].fd >= 0 && !f->ports[to].closing) {
        if (!copy_fits(f, to, len)) {
            if (!f->no_drop) {
                link->c.congested++;
            }
            return;
        }
        link->c.duplicated++;
        send_or_hold(f, from, to, copy, corrupted, &v);
    }
}

/*
 * Route a frame received on `in_port` and send a copy to each destination,
 * or hand it to the kind's own ingress.  `why` is set unless INGRESS_OK.
 */
static IngressStatus fabric_ingress(Fabric *f, unsigned in_port,
                                    const uint8_t *frame, size_t len,
                                    char *why, size_t why_len)
{
    g_autoptr(GBytes) shared = NULL;

    if (f->kind->ingress) {
        return fabric_kind_ingress(f, in_port, frame, len, why, why_len);
    }
    g_array_set_size(f->dests, 0);
    f->kind->route(f->kind_state, in_port, frame, len, f->portset->connected,
                   f->nodes, fabric_time_ns(f), f->dests);
    if (f->dests->len == 0) {
        return INGRESS_OK;
    }
    /* One buffer shared by every destination; corruption copies it. */
    shared = g_bytes_new(frame, len);
    for (guint i = 0; i < f->dests->len; i++) {
        unsigned to = g_array_index(f->dests, guint, i);

        if (to != in_port && fabric_has_link(f, in_port, to)) {
            fabric_send_copy(f, in_port, to, shared);
        }
    }
    return INGRESS_OK;
}

/* ---- what the ports hand up (PortOps) ---- */

static IngressStatus on_port_frame(void *opaque, unsigned port,
                                   const uint8_t *frame, size_t len,
                                   char *why, size_t why_len)
{
    return fabric_ingress(opaque, port, frame, len, why, why_len);
}

static void on_port_down(void *opaque, unsigned port)
{
    Fabric *f = opaque;

    f->kind->port_down(f->kind_state, port);
}

static void on_port_drained(void *opaque, unsigned port)
{
    Fabric *f = opaque;

    if (f->kind->output_drained && !f->shutting_down) {
        f->kind->output_drained(f->kind_state, port);
    }
}

bool fabric_ports_listen(Fabric *f, GError **err)
{
    return port_set_listen(f->portset, err);
}

unsigned fabric_port_flush(Fabric *f, unsigned port)
{
    Port *p = &f->ports[port];

    p->epoch++;
    return port_drop_queued(p);
}

static gboolean capture_flush_tick(gpointer opaque)
{
    Fabric *f = opaque;
    g_autoptr(GError) err = NULL;

    if (f->capture && !capture_flush(f->capture, &err)) {
        uint64_t frames;

        fprintf(stderr, "fabricd: %s; capture stopped\n", err->message);
        f->capture_flush_timer = 0;
        fabric_capture_stop(f, &frames, NULL);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

bool fabric_capture_start(Fabric *f, const char *path, GError **err)
{
    if (f->capture) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                    "a capture to %s is running; stop it first",
                    capture_path(f->capture));
        return false;
    }
    f->capture = capture_open(path, f->nodes, f->kind->pcap_linktype, err);
    if (!f->capture) {
        return false;
    }
    /* Readers of a running capture see it at most a second late. */
    f->capture_flush_timer = g_timeout_add_seconds(1, capture_flush_tick, f);
    return true;
}

bool fabric_capture_stop(Fabric *f, uint64_t *frames, GError **err)
{
    if (!f->capture) {
        g_set_error_literal(err, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                            "no capture is running");
        return false;
    }
    if (f->capture_flush_timer) {
        g_source_remove(f->capture_flush_timer);
        f->capture_flush_timer = 0;
    }
    *frames = capture_frames(f->capture);
    Capture *c = f->capture;

    f->capture = NULL;
    return capture_close(c, err);
}

Fabric *fabric_new(const FabricKind *kind, unsigned nodes, uint64_t seed,
                   const char *dir, const FabricKindOptions *opts,
                   GError **err)
{
    PortOps port_ops = {
        .frame = on_port_frame,
        .disconnected = on_port_down,
        .drained = on_port_drained,
    };
    Fabric *f;

    if (!fabric_topology_check(kind->name, nodes, opts->topology, err)) {
        return NULL;
    }
    if (opts->lockstep && kind->lockstep_kind) {
        kind = kind->lockstep_kind;
    }
    f = g_new0(Fabric, 1);
    f->kind = kind;
    f->nodes = nodes;
    f->seed = seed;
    f->start_ns = fabric_now_ns();
    f->dir = g_strdup(dir);
    f->ctl_path = g_build_filename(dir, "ctl.sock", NULL);
    port_ops.parse = kind->parse;
    port_ops.encode_prefix = kind->encode_prefix;
    f->portset = port_set_new(nodes, dir, &port_ops, f);
    f->ports = f->portset->port;
    /* Untouched links stay zero pages, so large fabrics cost little. */
    f->links = g_new0(Link, (size_t)nodes * nodes);
    f->rules = fault_rules_new(seed);
    f->delays = delay_line_new(held_copy_fire, held_copy_free, f);
    f->dests = g_array_new(FALSE, FALSE, sizeof(guint));
    f->out_limit = FABRIC_OUT_LIMIT;
    f->kind_state = kind->state_new(f, opts, err);
    if (!f->kind_state) {
        fabric_free(f);
        return NULL;
    }
    f->portset->out_limit = f->out_limit;
    return f;
}

void fabric_free(Fabric *f)
{
    g_autoptr(GError) err = NULL;
    uint64_t frames;

    if (!f) {
        return;
    }
    f->shutting_down = true;
    if (f->capture && !fabric_capture_stop(f, &frames, &err)) {
        fprintf(stderr, "fabricd: %s\n", err->message);
    }
    /* Held copies are dropped before the ports they point at go away. */
    delay_line_free(f->delays);
    f->lockstep = NULL;     /* port_set_close() frees it */
    port_set_close(f->portset);
    fault_rules_free(f->rules);
    if (f->kind_state) {
        f->kind->state_free(f->kind_state);
    }
    g_array_free(f->dests, TRUE);
    g_free(f->links);
    port_set_free(f->portset);
    g_free(f->ctl_path);
    g_free(f->dir);
    g_free(f);
}
