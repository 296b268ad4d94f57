/*
 * Kind "ps1": ParaStation boards in a ring or torus.  Frames use the fabric
 * header; the network model (ps1net.c) decides what moves where, and this
 * file connects it to fabricd's ports, links, fault rules and capture.
 *
 * A packet crossing a physical link A>B (a neighbour in the topology) is
 * where link state and fault rules apply: a down link holds packets (the
 * network never loses them), drop rules model a hardware failure, corrupt
 * rules flip payload bits that the receiving board then detects.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "fabric.h"
#include "ps1net.h"

typedef struct Ps1Kind {
    Fabric *f;
    Ps1Config cfg;
    Ps1Net *net;
    /* free-running only: lock-step keeps these times in the stamps */
    DelayLine *wake;        /* due times of packets on delayed links */
    DelayLine *down_end;    /* Ps1DownEnd: scheduled down rules ending */
    GHashTable *down_ends;  /* their until_ns, one wake per distinct end */
} Ps1Kind;

/* The end of a `down ... until=` window that holds packets. */
typedef struct Ps1DownEnd {
    Ps1Kind *k;
    uint64_t until_ns;
} Ps1DownEnd;

static void ps1_down_end_fire(gpointer item, gpointer opaque)
{
    Ps1DownEnd *e = item;
    Ps1Kind *k = e->k;

    g_hash_table_remove(k->down_ends, &e->until_ns);
    g_free(e);
    /* the rule is over: packets held at its links go on */
    ps1net_kick(k->net, fabric_time_ns(k->f));
}

/* Retry held packets once `down` ends (rule time `now` is before that). */
static void wake_at_down_end(Ps1Kind *k, const FaultRule *down, uint64_t now)
{
    Ps1DownEnd *e;

    if (down->until_ns == FAULT_FOREVER ||
        g_hash_table_contains(k->down_ends, &down->until_ns)) {
        return;
    }
    e = g_new(Ps1DownEnd, 1);
    e->k = k;
    e->until_ns = down->until_ns;
    g_hash_table_add(k->down_ends, &e->until_ns);
    delay_line_add(k->down_end, fabric_now_ns() + (down->until_ns - now), e);
}

static bool ps1_emit(void *opaque, const Ps1Emit *e)
{
    Ps1Kind *k = opaque;
    Fabric *f = k->f;
    Port *p = &f->ports[e->node];
    g_autoptr(GBytes) frame = NULL;

    if (f->shutting_down || p->fd < 0 || p->closing) {
        return false;
    }
    frame = g_bytes_new(e->frame, e->len);
    /* credit bounds DATA far below the limit: a full queue is a stuck peer */
    if (!port_send_own(p, frame)) {
        return false;
    }
    p->c.tx_frames++;
    p->c.tx_bytes += e->len;
    if (e->capture && f->capture) {
        char comment[32];

        if (e->from >= 0) {
            g_snprintf(comment, sizeof(comment), "node%d>node%u", e->from,
                       e->node);
        } else {
            g_snprintf(comment, sizeof(comment), "fabric>node%u", e->node);
        }
        fabric_capture_frame(f, e->node, e->frame, e->len, e->corrupted,
                             comment);
    }
    return true;
}

/* The trace shows a dropped packet as the DATA frame it was. */
static void ps1_trace_drop(Fabric *f, unsigned from, unsigned to,
                           uint64_t now, const uint8_t *payload, size_t len,
                           unsigned rule)
{
    FabricHdr h = {
        .kind = FABRIC_KIND_PS1, .type = FABRIC_TYPE_DATA, .src = from,
        .dst = to, .len = len, .send_time_ns = now, .deliver_time_ns = now,
    };
    g_autofree uint8_t *frame = NULL;

    if (!f->capture || !f->lockstep) {
        return;
    }
    frame = g_malloc(FABRIC_HDR_LEN + len);
    fabric_hdr_encode(&h, frame);
    memcpy(frame + FABRIC_HDR_LEN, payload, len);
    fabric_trace_fault(f, from, to, frame, FABRIC_HDR_LEN + len, rule);
}

/*
 * Lock-step: a packet that meets `*down` at its virtual time `t` waits for
 * the window to end and crosses then, unless another one is open by then;
 * returns when it crosses.  Each window passed ends after `t`, so none
 * comes twice.  *down is left NULL, or at a window without an end, which
 * holds the packet until a command lifts it.
 */
static uint64_t wait_down_windows(Fabric *f, unsigned from, unsigned to,
                                  uint64_t t, FaultRule **down, bool count)
{
    while (*down && (*down)->until_ns != FAULT_FOREVER) {
        if (count) {
            (*down)->matched++;
            (*down)->fired++;
        }
        t = (*down)->until_ns;
        *down = fault_rules_find_down(f->rules, from, to, t);
    }
    return t;
}

static Ps1Cross ps1_cross(void *opaque, unsigned from, unsigned to,
                          uint8_t *payload, size_t len, Ps1Crossing *x)
{
    Ps1Kind *k = opaque;
    Fabric *f = k->f;
    Link *link = fabric_link(f, from, to);
    /* lock-step: the packet's virtual time; free-running: the clock now */
    uint64_t now = f->lockstep ? x->time_ns : fabric_time_ns(f);
    FaultRule *down = fault_rules_find_down(f->rules, from, to, now);
    uint64_t crossed = now;
    FaultVerdict v;

    if (f->lockstep && !link->admin_down) {
        crossed = wait_down_windows(f, from, to, now, &down, !x->retry);
        x->wait_ns = crossed - now;
        if (x->wait_ns && !down && !x->retry) {
            link->c.down++;
        }
    }
    /* a down link carries nothing: the packet waits for `link up` */
    if (link->admin_down || down) {
        if (down && !f->lockstep) {
            wake_at_down_end(k, down, now);
        }
        if (!x->retry) {
            link->c.down++;
            if (down) {
                down->matched++;
                down->fired++;
            }
        }
        return PS1_CROSS_HOLD;
    }
    /* the other rules apply as it crosses; reorder and duplicate are
       refused (ps1_check_fault) */
    fault_rules_eval(f->rules, from, to, crossed, payload, len, 0, &v);
    if (v.outcome != FAULT_PASS) {
        link->c.dropped++;
        ps1_trace_drop(f, from, to, crossed, payload, len, v.rule);
        return PS1_CROSS_DROP;
    }
    if (v.corrupted) {
        memcpy(payload, v.corrupted, len);
        g_free(v.corrupted);
        link->c.corrupted++;
        x->corrupted = true;
    }
    if (v.delay_ns) {
        link->c.delayed++;
        if (!f->lockstep) {
            delay_line_add(k->wake, fabric_now_ns() + v.delay_ns, k);
        }
    }
    x->delay_ns = (crossed - now) + v.delay_ns;
    link->c.frames++;
    link->c.bytes += FABRIC_HDR_LEN + len;
    return PS1_CROSS_PASS;
}

static const Ps1Ops ps1_ops = {
    .emit = ps1_emit,
    .cross = ps1_cross,
};

static void ps1_wake(gpointer item, gpointer opaque)
{
    Ps1Kind *k = opaque;

    ps1net_kick(k->net, fabric_time_ns(k->f));
}

static void ps1_wake_free(gpointer item)
{
    /* items are the state itself: nothing to free */
}

static void *ps1_state_new(Fabric *f, const FabricKindOptions *opts,
                           GError **err)
{
    Ps1Kind *k = g_new0(Ps1Kind, 1);

    if (!ps1_config_init(&k->cfg, f->nodes, opts->topology, err)) {
        g_free(k);
        return NULL;
    }
    if (!fabric_kind_timing(opts, &k->cfg.hop_ns, &k->cfg.link_mbps, err)) {
        g_free(k);
        return NULL;
    }
    k->cfg.lockstep = opts->lockstep;
    k->f = f;
    k->net = ps1net_new(&k->cfg, &ps1_ops, k);
    k->wake = delay_line_new(ps1_wake, ps1_wake_free, k);
    k->down_end = delay_line_new(ps1_down_end_fire, g_free, k);
    k->down_ends = g_hash_table_new(g_int64_hash, g_int64_equal);
    return k;
}

static void ps1_state_free(void *state)
{
    Ps1Kind *k = state;

    delay_line_free(k->wake);
    delay_line_free(k->down_end);
    g_hash_table_destroy(k->down_ends);
    ps1net_free(k->net);
    g_free(k);
}

static IngressStatus ps1_ingress(void *state, unsigned in_port,
                                 const FabricHdr *h, const uint8_t *frame,
                                 size_t len, char *why, size_t why_len)
{
    Ps1Kind *k = state;

    switch (ps1net_input(k->net, in_port, frame, len, fabric_time_ns(k->f),
                         why, why_len)) {
    case PS1_IN_OK:
        break;
    case PS1_IN_MALFORMED:
        return INGRESS_MALFORMED;
    case PS1_IN_REJECTED:
        return INGRESS_REJECTED;
    }
    return INGRESS_OK;
}

static void ps1_hello(void *state, unsigned port, FabricHelloAck *ack)
{
    Ps1Kind *k = state;

    ps1net_hello(k->net, port, ack);
}

static void ps1_hello_done(void *state, unsigned port)
{
    Ps1Kind *k = state;

    ps1net_hello_done(k->net, port, fabric_time_ns(k->f));
}

static void ps1_port_down(void *state, unsigned port)
{
    Ps1Kind *k = state;

    ps1net_port_down(k->net, port, fabric_time_ns(k->f));
}

static bool ps1_kind_has_link(void *state, unsigned nodes, unsigned from,
                              unsigned to)
{
    Ps1Kind *k = state;

    return ps1_has_link(&k->cfg, from, to);
}

static void ps1_kind_describe_topology(void *state, unsigned nodes,
                                       GString *out)
{
    Ps1Kind *k = state;

    ps1_describe_topology(&k->cfg, out);
}

static void ps1_dump_table(void *state, uint64_t now_ns, GString *out)
{
    Ps1Kind *k = state;

    ps1net_dump_tables(k->net, out);
}

static void ps1_report(void *state, GString *out, bool counters)
{
    Ps1Kind *k = state;

    ps1net_report(k->net, out, counters);
}

static void ps1_config_changed(void *state)
{
    Ps1Kind *k = state;

    ps1net_kick(k->net, fabric_time_ns(k->f));
}

/* The shortest path is one link: its routing delay. */
static uint64_t ps1_lookahead_ns(void *state)
{
    Ps1Kind *k = state;

    return k->cfg.hop_ns;
}

/*
 * The network never duplicates a packet, and each cable's packets move in
 * order through FIFOs; the boards' credits count on both.
 */
static bool ps1_check_fault(const FaultRule *r, GError **err)
{
    if (r->action == FAULT_DUPLICATE || r->action == FAULT_REORDER) {
        g_set_error(err, FAULT_ERROR, 0, "ps1 does not %s packets: its "
                    "network never duplicates one and keeps each cable's "
                    "packets in order (use drop, drop ge, corrupt, delay or "
                    "down)", r->action == FAULT_DUPLICATE ? "duplicate"
                                                          : "reorder");
        return false;
    }
    return true;
}

const FabricKind fabric_kind_ps1 = {
    .name = "ps1",
    .id = FABRIC_KIND_PS1,
    .pcap_linktype = PCAP_LINKTYPE_USER0,
    .corrupt_from = FABRIC_HDR_LEN,
    .parse = fabric_hdr_frame_parse,
    .encode_prefix = fabric_hdr_frame_prefix,
    .state_new = ps1_state_new,
    .state_free = ps1_state_free,
    .ingress = ps1_ingress,
    .hello = ps1_hello,
    .hello_done = ps1_hello_done,
    .hello_refused = ps1_port_down,
    .port_down = ps1_port_down,
    .has_link = ps1_kind_has_link,
    .describe_topology = ps1_kind_describe_topology,
    .dump_table = ps1_dump_table,
    .report = ps1_report,
    .config_changed = ps1_config_changed,
    .lookahead_ns = ps1_lookahead_ns,
    .check_fault = ps1_check_fault,
};
