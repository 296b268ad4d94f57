/*
 * Lock-step mode: rounds of virtual time (lockstep.h, docs/lockstep.md).
 *
 * Every node runs to the grant G, sends what it has, then SYNC with its
 * next event.  Once all have reported, the round's frames are routed in
 * (send time, node, arrival) order; everything they cause waits for its
 * delivery time.  E, the earliest time any node can send again, is the
 * least of the nodes' next events and of the delivery times still held;
 * nothing can then arrive anywhere before E + lookahead, which is the next
 * grant.  While the fabric is quiet, rounds are a quantum long instead,
 * and a frame sent in such a round arrives no earlier than its end.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "framing.h"
#include "lockstep.h"
#include "proto/base.h"
#include "proto/sync.h"

typedef struct InFrame {
    uint64_t send_ns;
    unsigned port;
    uint64_t seq;           /* arrival order: a node's own order */
    GBytes *frame;
} InFrame;

typedef struct OutFrame {
    uint64_t deliver_ns;
    GBytes *frame;
} OutFrame;

typedef struct LsNode {
    bool left;              /* disconnected: out of the run for good */
    bool reported;          /* SYNC for the current grant came */
    uint64_t time;          /* its clock at its last SYNC (≤ the grant) */
    uint64_t next_event;
    size_t in_cost;         /* this round's input, with bookkeeping */
    GQueue out;             /* OutFrame by delivery time, stable */
} LsNode;

struct Lockstep {
    const LockstepOps *ops; /* the owner's (the ports), with `opaque` */
    void *opaque;
    unsigned nodes;
    const bool *connected;  /* the owner's: connected[i], port i has a peer */
    uint8_t kind;
    bool one_write;         /* LockstepSetup.one_write */
    uint64_t lookahead;
    uint64_t quantum;       /* 0: every round is one look-ahead */
    uint64_t last_data;     /* send time of the newest DATA routed */
    bool any_data;
    uint64_t grant;
    uint64_t now;
    bool routing;           /* inside a round's routing */
    bool direct;            /* output goes straight to the port */
    GArray *in;             /* InFrame */
    GByteArray *grant_out;  /* a grant's bytes, reused */
    uint64_t seq;
    LsNode *node;
    uint64_t rounds, ordered;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

Lockstep *lockstep_new(const LockstepSetup *setup, const LockstepOps *ops,
                       void *opaque)
{
    Lockstep *ls = g_new0(Lockstep, 1);

    ls->ops = ops;
    ls->opaque = opaque;
    ls->nodes = setup->nodes;
    ls->connected = setup->connected;
    ls->kind = setup->kind;
    ls->one_write = setup->one_write;
    ls->lookahead = MAX(setup->lookahead_ns, 1);
    ls->quantum = setup->quantum_ns ? MAX(setup->quantum_ns, ls->lookahead)
                                    : 0;
    ls->in = g_array_new(FALSE, FALSE, sizeof(InFrame));
    ls->grant_out = g_byte_array_new();
    ls->node = g_new0(LsNode, ls->nodes);
    for (unsigned i = 0; i < ls->nodes; i++) {
        g_queue_init(&ls->node[i].out);
    }
    return ls;
}

static void out_frame_free(gpointer data)
{
    OutFrame *o = data;

    g_bytes_unref(o->frame);
    g_free(o);
}

static void node_out_clear(Lockstep *ls, unsigned i)
{
    OutFrame *o;

    while ((o = g_queue_pop_head(&ls->node[i].out))) {
        ls->ops->held(ls->opaque, i, g_bytes_get_size(o->frame), false);
        out_frame_free(o);
    }
}

void lockstep_free(Lockstep *ls)
{
    if (!ls) {
        return;
    }
    for (guint i = 0; i < ls->in->len; i++) {
        g_bytes_unref(g_array_index(ls->in, InFrame, i).frame);
    }
    g_array_free(ls->in, TRUE);
    g_byte_array_unref(ls->grant_out);
    for (unsigned i = 0; i < ls->nodes; i++) {
        node_out_clear(ls, i);
    }
    g_free(ls->node);
    g_free(ls);
}

uint64_t lockstep_now(const Lockstep *ls)
{
    return ls->now;
}

void lockstep_stats(const Lockstep *ls, LockstepStats *st)
{
    st->rounds = ls->rounds;
    st->grant_ns = ls->grant;
    st->frames_ordered = ls->ordered;
    st->lookahead_ns = ls->lookahead;
    st->quantum_ns = ls->quantum;
}

/*
 * The earliest a frame made now may arrive: a look-ahead after the frame
 * being routed, and never before the grant the nodes ran to (after a
 * quantum round that is later than a look-ahead).
 */
static uint64_t earliest_delivery(const Lockstep *ls)
{
    return MAX(sat_add(ls->now, ls->lookahead), ls->grant);
}

/*
 * How far the next grant may go past E: a look-ahead while the fabric
 * carries data, a quantum once it has been quiet for a quantum.
 */
static uint64_t round_length(const Lockstep *ls)
{
    if (ls->quantum &&
        (!ls->any_data || ls->grant > sat_add(ls->last_data, ls->quantum))) {
        return ls->quantum;
    }
    return ls->lookahead;
}

uint64_t lockstep_deliver_time(const Lockstep *ls, const uint8_t *frame,
                               size_t len)
{
    uint64_t stamped = len >= FABRIC_HDR_LEN ? fabric_get_le64(frame + 24)
                                             : 0;

    return MAX(stamped, earliest_delivery(ls));
}

GBytes *lockstep_retime(GBytes *frame, uint64_t deliver_ns)
{
    size_t len;
    const uint8_t *data = g_bytes_get_data(frame, &len);
    uint8_t *copy;

    if (len < FABRIC_HDR_LEN || fabric_get_le64(data + 24) == deliver_ns) {
        return g_bytes_ref(frame);
    }
    copy = g_memdup2(data, len);
    fabric_put_le64(copy + 24, deliver_ns);
    return g_bytes_new_take(copy, len);
}

bool lockstep_output(Lockstep *ls, unsigned port, GBytes *frame,
                     size_t limit)
{
    LsNode *n = &ls->node[port];
    size_t len;
    const uint8_t *data = g_bytes_get_data(frame, &len);
    OutFrame *o;
    GList *after;

    if (n->left || ls->ops->out_cost(ls->opaque, port) + len +
                   FABRIC_FRAME_COST > limit + LOCKSTEP_HELD_EXTRA) {
        return false;
    }
    o = g_new(OutFrame, 1);
    o->deliver_ns = lockstep_deliver_time(ls, data, len);
    o->frame = lockstep_retime(frame, o->deliver_ns);
    for (after = n->out.tail; after; after = after->prev) {
        if (((OutFrame *)after->data)->deliver_ns <= o->deliver_ns) {
            break;
        }
    }
    if (after) {
        g_queue_insert_after(&n->out, after, o);
    } else {
        g_queue_push_head(&n->out, o);
    }
    ls->ops->held(ls->opaque, port, len, true);
    return true;
}

bool lockstep_holds_output(const Lockstep *ls)
{
    return !ls->direct;
}

static int in_frame_cmp(gconstpointer a, gconstpointer b)
{
    const InFrame *x = a, *y = b;

    if (x->send_ns != y->send_ns) {
        return x->send_ns < y->send_ns ? -1 : 1;
    }
    if (x->port != y->port) {
        return x->port < y->port ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void route_round(Lockstep *ls)
{
    g_array_sort(ls->in, in_frame_cmp);
    ls->routing = true;
    for (guint i = 0; i < ls->in->len; i++) {
        InFrame *in = &g_array_index(ls->in, InFrame, i);
        size_t len;
        const uint8_t *data = g_bytes_get_data(in->frame, &len);

        /* a node that left takes its unrouted frames with it */
        if (!ls->node[in->port].left &&
            ls->ops->live(ls->opaque, in->port)) {
            ls->now = MAX(ls->now, in->send_ns);
            if (data[6] == FABRIC_TYPE_DATA) {
                ls->any_data = true;
                ls->last_data = ls->now;
            }
            ls->ops->route(ls->opaque, in->port, data, len);
            ls->ordered++;
        }
        g_bytes_unref(in->frame);
    }
    g_array_set_size(ls->in, 0);
    ls->routing = false;
    for (unsigned i = 0; i < ls->nodes; i++) {
        ls->node[i].in_cost = 0;
    }
}

/*
 * The frames due before the grant, then the grant: one write.  Header-framed
 * kinds put nothing before a frame on the wire, so they go as one buffer.
 */
static void send_grant(Lockstep *ls, unsigned i)
{
    LsNode *n = &ls->node[i];
    GByteArray *out = ls->grant_out;
    uint8_t buf[FABRIC_HDR_LEN];
    FabricHdr h = {
        .kind = ls->kind, .type = FABRIC_TYPE_SYNC,
        .src = FABRIC_NODE_NONE, .dst = i,
        .send_time_ns = ls->grant, .deliver_time_ns = ls->grant,
    };
    OutFrame *o;

    ls->direct = true;
    g_byte_array_set_size(out, 0);
    while ((o = g_queue_peek_head(&n->out)) && o->deliver_ns < ls->grant) {
        g_queue_pop_head(&n->out);
        ls->ops->held(ls->opaque, i, g_bytes_get_size(o->frame), false);
        /* counted in the port's bound when it was held */
        if (ls->one_write) {
            size_t len;
            const uint8_t *data = g_bytes_get_data(o->frame, &len);

            g_byte_array_append(out, data, len);
        } else {
            ls->ops->send(ls->opaque, i, o->frame);
        }
        out_frame_free(o);
    }
    fabric_hdr_encode(&h, buf);
    g_byte_array_append(out, buf, sizeof(buf));
    g_autoptr(GBytes) all = g_bytes_new(out->data, out->len);
    ls->ops->send(ls->opaque, i, all);
    ls->direct = false;
}

/* When every node still in the run has reported: route, then grant. */
static void try_round(Lockstep *ls)
{
    uint64_t e = UINT64_MAX;
    bool anyone = false;

    if (ls->routing) {
        return;
    }
    for (unsigned i = 0; i < ls->nodes; i++) {
        LsNode *n = &ls->node[i];

        if (!n->left && !(ls->connected[i] && n->reported)) {
            return;
        }
    }
    route_round(ls);
    for (unsigned i = 0; i < ls->nodes; i++) {
        LsNode *n = &ls->node[i];
        OutFrame *o = g_queue_peek_head(&n->out);

        if (n->left || !ls->connected[i]) {
            continue;
        }
        anyone = true;
        e = MIN(e, n->next_event);
        if (o) {
            e = MIN(e, o->deliver_ns);
        }
    }
    if (!anyone) {
        return;
    }
    ls->now = MAX(ls->now, ls->grant);
    ls->grant = MAX(sat_add(e, round_length(ls)), sat_add(ls->grant, 1));
    ls->rounds++;
    for (unsigned i = 0; i < ls->nodes; i++) {
        if (!ls->node[i].left && ls->connected[i]) {
            ls->node[i].reported = false;
            send_grant(ls, i);
        }
    }
}

static bool take_report(Lockstep *ls, unsigned port, const FabricHdr *h,
                        const uint8_t *pl)
{
    LsNode *n = &ls->node[port];
    uint64_t next = 0;
    g_autofree char *why = NULL;

    if (!fabric_sync_report_decode(pl, h->len, &next)) {
        why = g_strdup_printf("SYNC payload is %u bytes; expected %d",
                              h->len, FABRIC_SYNC_REPORT_LEN);
    } else if (h->send_time_ns > ls->grant || n->reported ||
               h->send_time_ns < n->time) {
        why = g_strdup_printf("SYNC at %" PRIu64 " ns, the grant is %" PRIu64
                              " ns and its last report was at %" PRIu64
                              " ns%s", h->send_time_ns, ls->grant, n->time,
                              n->reported ? "; it already reported" : "");
    }
    if (why) {
        g_autofree char *msg = g_strdup_printf("lock-step broken: %s", why);
        ls->ops->broken(ls->opaque, port, msg);
        return false;
    }
    n->reported = true;
    n->time = h->send_time_ns;
    n->next_event = MAX(next, h->send_time_ns);
    try_round(ls);
    return ls->connected[port];
}

bool lockstep_input(Lockstep *ls, unsigned port, const uint8_t *frame,
                    size_t len)
{
    LsNode *n = &ls->node[port];
    const uint8_t *pl = frame + FABRIC_HDR_LEN;
    InFrame in;
    FabricHdr h;

    fabric_hdr_decode(frame, &h);
    if (h.type == FABRIC_TYPE_SYNC && h.kind == ls->kind) {
        return take_report(ls, port, &h, pl);
    }
    /* a free-running device never reports: refuse it at once */
    if (h.type == FABRIC_TYPE_CONTROL && h.len >= 1 &&
        pl[0] == FABRIC_CTL_HELLO &&
        !(h.len == FABRIC_HELLO_MAX_LEN &&
          (pl[3] & FABRIC_HELLO_F_LOCKSTEP))) {
        bool alive;

        ls->direct = true;
        alive = ls->ops->route(ls->opaque, port, frame, len);
        ls->direct = false;
        return alive;
    }
    /* its round: after its last report, up to the grant it runs to */
    if (h.send_time_ns > ls->grant || h.send_time_ns < n->time) {
        g_autofree char *msg = g_strdup_printf(
            "lock-step broken: a frame stamped %" PRIu64 " ns, outside its "
            "round (%" PRIu64 " to %" PRIu64 " ns)", h.send_time_ns, n->time,
            ls->grant);

        ls->ops->broken(ls->opaque, port, msg);
        return false;
    }
    n->in_cost += len + FABRIC_FRAME_COST;
    if (n->in_cost > LOCKSTEP_ROUND_IN_MAX) {
        ls->ops->cut_off(ls->opaque, port, "lock-step: more input in one "
                         "round than LOCKSTEP_ROUND_IN_MAX (16 MiB); "
                         "closing");
        return false;
    }
    in.send_ns = h.send_time_ns;
    in.port = port;
    in.seq = ls->seq++;
    in.frame = g_bytes_new(frame, len);
    g_array_append_val(ls->in, in);
    return true;
}

void lockstep_port_down(Lockstep *ls, unsigned port)
{
    LsNode *n = &ls->node[port];

    if (n->left) {
        return;
    }
    n->left = true;
    node_out_clear(ls, port);
    try_round(ls);
}

bool lockstep_may_connect(const Lockstep *ls, unsigned port)
{
    return !ls->node[port].left;
}
