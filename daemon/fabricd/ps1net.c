/*
 * The ps1 network model: channels, routing, flow control, barrier lines
 * and delivery stamps of a ParaStation ring or torus.
 *
 * Forwarding rules (Warschko et al., section 4.1.2), per node:
 *  - the head of y-in moves when its target has room: the next node's
 *    y-in, or the host (RX credit);
 *  - the head of x-in moves only while y-in is empty (y has priority) and
 *    both outgoing channels have room, as the hardware decides before it
 *    reads the route; then its own target must take it;
 *  - the head of host-in is inserted only when x-in and y-in are empty and
 *    both outgoing channels have room.
 * A packet that enters a ring (from the host, or turning from x to y) thus
 * does so only while the node's own input channel of that ring is empty.
 * Since a channel holds two packets, a ring of k channels then never holds
 * more than 2k - 1 packets: some channel always has room.  Packets on y
 * stay on y (a table that turns them back to x is a routing error, held
 * as unroutable), so y never waits for x and no cycle of full channels
 * can form.  A route that loops (more hops than nodes since the last table
 * change) is held as unroutable too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "ps1net.h"

enum { CH_Y, CH_X, CH_HOST, CH_COUNT };

/* Largest frame the model builds: header and a maximum DATA payload. */
#define PS1_FRAME_MAX (FABRIC_HDR_LEN + \
                       FABRIC_PS1_DATA_LEN(FABRIC_PS1_MAX_WORDS))

typedef struct Ps1Packet {
    uint16_t src, dst, count;
    unsigned hops;          /* links crossed */
    unsigned guard;         /* links crossed since the last table change */
    int held_at;            /* node where its wait was counted, or -1 */
    int unroutable_at;      /* node where it met an invalid route, or -1 */
    bool link_held;         /* waiting at a down link (counted once) */
    bool corrupted;
    uint64_t send_time_ns;
    uint64_t arrive_ns;     /* free-running: still crossing a delayed link */
    uint64_t late_ns;       /* lock-step: virtual time delays added */
    uint64_t ready_ns;      /* lock-step: its time at this node, if later
                               than the model's (it was delayed) */
    uint32_t len;
    uint8_t payload[];
} Ps1Packet;

typedef struct Ps1Node {
    GQueue ch[CH_COUNT];    /* Ps1Packet *, oldest first */
    uint8_t *table;         /* loaded routes, or NULL: the default table */
    bool linked;
    bool down_pending;      /* port went down while the model was busy */
    bool queued;            /* in the work list */
    unsigned credit;
    unsigned dev_credit;
    uint8_t bar_mask, bar_arrived;
    uint64_t bar_time[FABRIC_PS1_BARRIER_LINES];
    /* lock-step: when the last late packet's tail reached the next node
       on the y and x cable (CH_Y, CH_X) */
    uint64_t cable_tail[CH_HOST];
    Ps1NodeCounters c;
} Ps1Node;

struct Ps1Net {
    Ps1Config cfg;
    Ps1Ops ops;
    void *opaque;
    Ps1Node *node;
    GQueue work;            /* node ids whose heads may move */
    uint64_t now_ns;
    bool busy;              /* inside an entry point: defer port downs */
    bool down_pending;
    uint64_t completions[FABRIC_PS1_BARRIER_LINES];
};

/* ---- topology ---- */

bool ps1_config_init(Ps1Config *cfg, unsigned nodes, const char *topology,
                     GError **err)
{
    FabricPs1Shape shape;

    memset(cfg, 0, sizeof(*cfg));
    if (!fabric_ps1_shape(nodes, topology, &shape, err)) {
        return false;
    }
    cfg->nodes = nodes;
    cfg->hop_ns = PS1_DEFAULT_HOP_NS;
    cfg->link_mbps = PS1_DEFAULT_LINK_MBPS;
    cfg->torus = shape.torus;
    cfg->width = shape.width;
    cfg->height = shape.height;
    return true;
}

unsigned ps1_next_x(const Ps1Config *cfg, unsigned node)
{
    unsigned x = node % cfg->width, row = node - x;

    return row + (x + 1) % cfg->width;
}

unsigned ps1_next_y(const Ps1Config *cfg, unsigned node)
{
    return (node + cfg->width) % cfg->nodes;
}

static unsigned prev_x(const Ps1Config *cfg, unsigned node)
{
    unsigned x = node % cfg->width, row = node - x;

    return row + (x + cfg->width - 1) % cfg->width;
}

static unsigned prev_y(const Ps1Config *cfg, unsigned node)
{
    return (node + cfg->nodes - cfg->width) % cfg->nodes;
}

bool ps1_has_link(const Ps1Config *cfg, unsigned from, unsigned to)
{
    if (from >= cfg->nodes || to >= cfg->nodes || from == to) {
        return false;
    }
    return to == ps1_next_x(cfg, from) ||
           (cfg->torus && to == ps1_next_y(cfg, from));
}

uint8_t ps1_default_route(const Ps1Config *cfg, unsigned node, unsigned dst)
{
    if (dst == node) {
        return FABRIC_PS1_ROUTE_HERE;
    }
    if (!cfg->torus || node % cfg->width != dst % cfg->width) {
        return FABRIC_PS1_ROUTE_X;
    }
    return FABRIC_PS1_ROUTE_Y;
}

unsigned ps1_default_hops(const Ps1Config *cfg, unsigned src, unsigned dst)
{
    unsigned w = cfg->width, h = cfg->height;
    unsigned dx = (dst % w + w - src % w) % w;
    unsigned dy = (dst / w + h - src / w) % h;

    return dx + dy;
}

void ps1_describe_topology(const Ps1Config *cfg, GString *out)
{
    if (cfg->torus) {
        g_string_append_printf(out, "torus %ux%u of %u nodes (node = y*%u+x;"
                               " links (x,y)>(x+1,y) and (x,y)>(x,y+1), "
                               "mod %ux%u)", cfg->width, cfg->height,
                               cfg->nodes, cfg->width, cfg->width,
                               cfg->height);
    } else {
        g_string_append_printf(out, "ring of %u nodes (links i>i+1 mod %u)",
                               cfg->nodes, cfg->nodes);
    }
}

uint64_t ps1_latency_ns(const Ps1Config *cfg, unsigned hops, unsigned words)
{
    uint64_t bytes = FABRIC_PS1_PKT_BYTES((uint64_t)words);

    /* bytes * 1e9 / (mbps * 1e6): serialised once (cut-through) */
    return hops * cfg->hop_ns + bytes * 1000 / cfg->link_mbps;
}

/* ---- model state ---- */

Ps1Net *ps1net_new(const Ps1Config *cfg, const Ps1Ops *ops, void *opaque)
{
    Ps1Net *n = g_new0(Ps1Net, 1);

    n->cfg = *cfg;
    n->ops = *ops;
    n->opaque = opaque;
    n->node = g_new0(Ps1Node, cfg->nodes);
    for (unsigned i = 0; i < cfg->nodes; i++) {
        for (int c = 0; c < CH_COUNT; c++) {
            g_queue_init(&n->node[i].ch[c]);
        }
    }
    g_queue_init(&n->work);
    return n;
}

void ps1net_free(Ps1Net *n)
{
    if (!n) {
        return;
    }
    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        for (int c = 0; c < CH_COUNT; c++) {
            g_queue_clear_full(&n->node[i].ch[c], g_free);
        }
        g_free(n->node[i].table);
    }
    g_queue_clear(&n->work);
    g_free(n->node);
    g_free(n);
}

const Ps1Config *ps1net_config(const Ps1Net *n)
{
    return &n->cfg;
}

uint8_t ps1net_route(const Ps1Net *n, unsigned node, unsigned dst)
{
    const Ps1Node *nd = &n->node[node];

    return nd->table ? nd->table[dst]
                     : ps1_default_route(&n->cfg, node, dst);
}

static void mark(Ps1Net *n, unsigned node)
{
    if (!n->node[node].queued) {
        n->node[node].queued = true;
        g_queue_push_tail(&n->work, GUINT_TO_POINTER(node));
    }
}

static void mark_all(Ps1Net *n)
{
    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        mark(n, i);
    }
}

static bool emit(Ps1Net *n, unsigned node, uint8_t type, const uint8_t *pl,
                 size_t len, uint64_t send_ns, uint64_t deliver_ns)
{
    uint8_t frame[PS1_FRAME_MAX];
    FabricHdr h = {
        .kind = FABRIC_KIND_PS1, .type = type, .src = FABRIC_NODE_NONE,
        .dst = node, .len = len, .send_time_ns = send_ns,
        .deliver_time_ns = deliver_ns,
    };
    Ps1Emit e = {
        .node = node, .frame = frame, .len = FABRIC_HDR_LEN + len,
        .type = type, .capture = type == FABRIC_TYPE_BARRIER, .from = -1,
    };

    g_assert(len <= sizeof(frame) - FABRIC_HDR_LEN);
    fabric_hdr_encode(&h, frame);
    memcpy(frame + FABRIC_HDR_LEN, pl, len);
    return n->ops.emit(n->opaque, &e);
}

static void emit_reject(Ps1Net *n, unsigned node, const char *reason)
{
    uint8_t pl[FABRIC_REJECT_MAX_LEN];

    emit(n, node, FABRIC_TYPE_CONTROL, pl, fabric_reject_encode(reason, pl),
         0, 0);
}

/* ---- barrier lines ---- */

static void check_line(Ps1Net *n, unsigned line)
{
    uint8_t bit = 1u << line;
    unsigned participants = 0;
    uint64_t last = 0;

    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        const Ps1Node *nd = &n->node[i];

        if (!nd->linked || !(nd->bar_mask & bit)) {
            continue;
        }
        if (!(nd->bar_arrived & bit)) {
            return;
        }
        participants++;
        last = MAX(last, nd->bar_time[line]);
    }
    if (!participants) {
        return;
    }
    n->completions[line]++;
    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        Ps1Node *nd = &n->node[i];
        uint8_t pl[FABRIC_PS1_BARRIER_LEN] = { FABRIC_PS1_BARRIER_RELEASE,
                                               bit };

        if (nd->linked && (nd->bar_mask & bit)) {
            nd->bar_arrived &= ~bit;
            emit(n, i, FABRIC_TYPE_BARRIER, pl, sizeof(pl), last,
                 last + PS1_BARRIER_NS);
        }
    }
}

static void check_lines(Ps1Net *n)
{
    for (unsigned l = 0; l < FABRIC_PS1_BARRIER_LINES; l++) {
        check_line(n, l);
    }
}

/* ---- forwarding ---- */

static bool room(const Ps1Net *n, unsigned node, int ch)
{
    return g_queue_get_length((GQueue *)&n->node[node].ch[ch]) <
           PS1_CHANNEL_PACKETS;
}

static bool waits(Ps1Net *n, unsigned u, Ps1Packet *p)
{
    if (p->held_at != (int)u) {
        p->held_at = u;
        n->node[u].c.held++;
    }
    return false;
}

static bool unroutable(Ps1Net *n, unsigned u, Ps1Packet *p)
{
    if (p->unroutable_at != (int)u) {
        p->unroutable_at = u;
        n->node[u].c.unroutable++;
    }
    return false;
}

static bool deliver(Ps1Net *n, unsigned u, Ps1Packet *p)
{
    uint8_t frame[PS1_FRAME_MAX];
    FabricHdr h = {
        .kind = FABRIC_KIND_PS1, .type = FABRIC_TYPE_DATA,
        .flags = p->corrupted ? FABRIC_F_CORRUPTED : 0,
        .src = p->src, .dst = u, .len = p->len,
        .send_time_ns = p->send_time_ns,
        .deliver_time_ns = p->send_time_ns +
                           ps1_latency_ns(&n->cfg, p->hops, p->count) +
                           p->late_ns,
    };
    Ps1Emit e = {
        .node = u, .frame = frame, .len = FABRIC_HDR_LEN + p->len,
        .type = FABRIC_TYPE_DATA, .capture = true,
        .corrupted = p->corrupted, .from = p->src, .hops = p->hops,
    };

    fabric_hdr_encode(&h, frame);
    memcpy(frame + FABRIC_HDR_LEN, p->payload, p->len);
    fabric_ps1_data_set_node(frame + FABRIC_HDR_LEN, p->count, p->src);
    return n->ops.emit(n->opaque, &e);
}

/*
 * The head of host-in left: give the device its next insertion credit.
 * In lock-step it left `wait_ns` later than its stamp says when it waited
 * for a down window to end.
 */
static void host_in_left(Ps1Net *n, unsigned u, const Ps1Packet *p,
                         uint64_t wait_ns)
{
    Ps1Node *nd = &n->node[u];
    uint8_t pl[FABRIC_PS1_CREDIT_LEN];

    nd->c.inserted++;
    if (!nd->linked || nd->dev_credit || !g_queue_is_empty(&nd->ch[CH_HOST])) {
        return;
    }
    fabric_put_le32(pl, 1);
    if (emit(n, u, FABRIC_TYPE_CREDIT, pl, sizeof(pl), p->send_time_ns,
             p->send_time_ns + ps1_latency_ns(&n->cfg, 0, p->count) +
             wait_ns)) {
        nd->dev_credit = 1;
    }
}

/*
 * Lock-step: the packet crossed the cable from `u` into `to_ch` at its time
 * `t`, `extra` later than its stamp said (a delay, a down window).  The
 * cable keeps its order: a packet arrives no earlier than the late one
 * before it, whether late itself or not.  A packet that is not late leaves
 * no mark, so without delays the stamps are those of the free-running model.
 */
static void cross_late(Ps1Net *n, unsigned u, int to_ch, Ps1Packet *p,
                       uint64_t t, uint64_t extra)
{
    uint64_t *tail = &n->node[u].cable_tail[to_ch];
    uint64_t at = p->send_time_ns +
                  ps1_latency_ns(&n->cfg, p->hops + 1, p->count) +
                  p->late_ns + extra;

    if (at < *tail) {
        extra += *tail - at;
        at = *tail;
    }
    if (!p->late_ns && !extra) {
        return;
    }
    p->late_ns += extra;
    p->ready_ns = t + extra;
    *tail = at;
}

/* Try to move the head of channel `c` of node `u`; true if it left. */
static bool try_head(Ps1Net *n, unsigned u, int c)
{
    const Ps1Config *cfg = &n->cfg;
    Ps1Node *nd = &n->node[u];
    Ps1Packet *p = g_queue_peek_head(&nd->ch[c]);
    /* a dimension of size 1 (and a ring of 1) has no cable */
    unsigned nx = ps1_next_x(cfg, u);
    unsigned ny = cfg->torus ? ps1_next_y(cfg, u) : u;
    bool has_x = nx != u, has_y = ny != u;
    unsigned to = u;
    int to_ch = CH_HOST;
    Ps1Packet *gone = NULL;
    uint64_t wait_ns = 0;
    bool valid;

    if (!p || p->arrive_ns > n->now_ns) {
        return false;
    }
    /* y has priority; the host inserts only into an idle node */
    if (c == CH_X && !g_queue_is_empty(&nd->ch[CH_Y])) {
        return waits(n, u, p);
    }
    if (c == CH_HOST && (!g_queue_is_empty(&nd->ch[CH_X]) ||
                         !g_queue_is_empty(&nd->ch[CH_Y]))) {
        return waits(n, u, p);
    }
    /* A path that crossed every node once more is a routing loop. */
    switch (ps1net_route(n, u, p->dst)) {
    case FABRIC_PS1_ROUTE_HERE:
        valid = p->dst == u;
        break;
    case FABRIC_PS1_ROUTE_X:
        /* "a packet pending at the y-channel has to stay on the y-channel" */
        valid = has_x && c != CH_Y && p->guard + 1 < cfg->nodes;
        to = nx;
        to_ch = CH_X;
        break;
    case FABRIC_PS1_ROUTE_Y:
        valid = has_y && p->guard + 1 < cfg->nodes;
        to = ny;
        to_ch = CH_Y;
        break;
    default:
        valid = false;
        break;
    }
    if (!valid) {
        return unroutable(n, u, p);
    }
    /* x-in and host-in: room on both outgoing links, route unread */
    if (c != CH_Y && ((has_x && !room(n, nx, CH_X)) ||
                      (has_y && !room(n, ny, CH_Y)))) {
        return waits(n, u, p);
    }
    if (to_ch == CH_HOST) {
        unsigned bytes = FABRIC_PS1_PKT_BYTES(p->count);

        if (!nd->linked || nd->credit < bytes || !deliver(n, u, p)) {
            return waits(n, u, p);
        }
        nd->credit -= bytes;
        nd->c.delivered++;
        g_queue_pop_head(&nd->ch[c]);
        gone = p;
    } else {
        /* a delayed packet's time runs ahead of the model's (lock-step) */
        Ps1Crossing x = { .time_ns = MAX(n->now_ns, p->ready_ns),
                          .retry = p->link_held };
        Ps1Cross verdict = PS1_CROSS_PASS;

        if (!room(n, to, to_ch)) {
            return waits(n, u, p);
        }
        if (n->ops.cross) {
            verdict = n->ops.cross(n->opaque, u, to, p->payload, p->len, &x);
        }
        if (verdict == PS1_CROSS_HOLD) {
            p->link_held = true;
            return waits(n, u, p);
        }
        g_queue_pop_head(&nd->ch[c]);
        wait_ns = x.wait_ns;
        if (wait_ns) {
            waits(n, u, p);
        }
        if (verdict == PS1_CROSS_DROP) {
            nd->c.dropped++;
            gone = p;
        } else {
            p->corrupted |= x.corrupted;
            if (cfg->lockstep) {
                cross_late(n, u, to_ch, p, x.time_ns, x.delay_ns);
            } else {
                p->arrive_ns = n->now_ns + x.delay_ns;
            }
            p->hops++;
            p->guard++;
            p->held_at = p->unroutable_at = -1;
            p->link_held = false;
            g_queue_push_tail(&n->node[to].ch[to_ch], p);
            mark(n, to);
        }
    }
    /* the channel has room again for whoever feeds it */
    if (c == CH_X) {
        mark(n, prev_x(cfg, u));
    } else if (c == CH_Y) {
        mark(n, prev_y(cfg, u));
    } else {
        host_in_left(n, u, p, wait_ns);
    }
    g_free(gone);
    return true;
}

static void pump(Ps1Net *n)
{
    while (!g_queue_is_empty(&n->work)) {
        unsigned u = GPOINTER_TO_UINT(g_queue_pop_head(&n->work));
        bool moved;

        n->node[u].queued = false;
        do {
            moved = false;
            for (int c = 0; c < CH_COUNT; c++) {
                moved |= try_head(n, u, c);
            }
        } while (moved);
    }
}

/* ---- entry points ---- */

static void enter(Ps1Net *n, uint64_t now_ns)
{
    n->busy = true;
    n->now_ns = MAX(n->now_ns, now_ns);
}

static void unlink_node(Ps1Net *n, unsigned u)
{
    Ps1Node *nd = &n->node[u];

    nd->linked = false;
    nd->credit = 0;
    nd->dev_credit = 0;
    nd->bar_mask = nd->bar_arrived = 0;
    /* a line may have waited only for this node */
    check_lines(n);
}

static void leave(Ps1Net *n)
{
    pump(n);
    while (n->down_pending) {
        n->down_pending = false;
        for (unsigned i = 0; i < n->cfg.nodes; i++) {
            if (n->node[i].down_pending) {
                n->node[i].down_pending = false;
                unlink_node(n, i);
            }
        }
        pump(n);
    }
    n->busy = false;
}

void ps1net_port_down(Ps1Net *n, unsigned node, uint64_t now_ns)
{
    if (n->busy) {
        n->node[node].down_pending = true;
        n->down_pending = true;
        return;
    }
    enter(n, now_ns);
    unlink_node(n, node);
    leave(n);
}

void ps1net_kick(Ps1Net *n, uint64_t now_ns)
{
    enter(n, now_ns);
    mark_all(n);
    leave(n);
}

static void table_changed(Ps1Net *n)
{
    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        for (int c = 0; c < CH_COUNT; c++) {
            for (GList *l = n->node[i].ch[c].head; l; l = l->next) {
                ((Ps1Packet *)l->data)->guard = 0;
            }
        }
    }
    mark_all(n);
}

static Ps1Input malformed(char *why, size_t why_len, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static Ps1Input malformed(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    return PS1_IN_MALFORMED;
}

/* Send REJECT with the reason; the connection stays. */
static Ps1Input reject(Ps1Net *n, unsigned u, char *why, size_t why_len,
                       const char *fmt, ...) G_GNUC_PRINTF(5, 6);

static Ps1Input reject(Ps1Net *n, unsigned u, char *why, size_t why_len,
                       const char *fmt, ...)
{
    char reason[FABRIC_REASON_MAX + 1];
    va_list ap;

    va_start(ap, fmt);
    g_vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    g_snprintf(why, why_len, "%s", reason);
    emit_reject(n, u, reason);
    n->node[u].c.routes_rejected++;
    return PS1_IN_REJECTED;
}

void ps1net_hello(Ps1Net *n, unsigned u, FabricHelloAck *ack)
{
    Ps1Node *nd = &n->node[u];

    /* a (re-)announced board starts empty, with the default table */
    nd->linked = true;
    nd->credit = FABRIC_PS1_RX_FIFO;
    nd->dev_credit = 1;
    nd->bar_mask = nd->bar_arrived = 0;
    g_clear_pointer(&nd->table, g_free);
    ack->extra_len = FABRIC_PS1_HELLO_ACK_EXTRA;
    ack->extra[FABRIC_PS1_ACK_WIDTH] = n->cfg.torus ? n->cfg.width : 0;
    ack->extra[FABRIC_PS1_ACK_HEIGHT] = n->cfg.torus ? n->cfg.height : 0;
}

void ps1net_hello_done(Ps1Net *n, unsigned u, uint64_t now_ns)
{
    enter(n, now_ns);
    table_changed(n);
    check_lines(n);
    leave(n);
}

static Ps1Input routes(Ps1Net *n, unsigned u, const uint8_t *pl, size_t len,
                       char *why, size_t why_len)
{
    Ps1Node *nd = &n->node[u];
    uint16_t id, count;

    if (!nd->linked) {
        return reject(n, u, why, why_len, "ROUTES before HELLO");
    }
    if (!fabric_ps1_routes_decode(pl, len, &id, &count)) {
        return reject(n, u, why, why_len,
                      "ROUTES payload of %zu bytes is shorter than its "
                      "%d-byte header", len, FABRIC_PS1_ROUTES_HDR_LEN);
    }
    if (id != u) {
        return reject(n, u, why, why_len,
                      "ROUTES for node %u on the link of node %u", id, u);
    }
    if (count != n->cfg.nodes) {
        return reject(n, u, why, why_len,
                      "ROUTES has %u entries; this fabric has %u nodes",
                      count, n->cfg.nodes);
    }
    if (len != FABRIC_PS1_ROUTES_HDR_LEN + (size_t)count) {
        return reject(n, u, why, why_len,
                      "ROUTES payload is %zu bytes; %u entries need %u", len,
                      count, FABRIC_PS1_ROUTES_HDR_LEN + count);
    }
    for (unsigned d = 0; d < count; d++) {
        uint8_t r = pl[FABRIC_PS1_ROUTES_HDR_LEN + d];

        if (r > FABRIC_PS1_ROUTE_INVALID) {
            return reject(n, u, why, why_len,
                          "ROUTES entry for node %u is %u; use 0 here, 1 x, "
                          "2 y or 3 invalid", d, r);
        }
    }
    g_free(nd->table);
    nd->table = g_memdup2(pl + FABRIC_PS1_ROUTES_HDR_LEN, count);
    table_changed(n);
    return PS1_IN_OK;
}

static Ps1Input control(Ps1Net *n, unsigned u, const uint8_t *pl, size_t len,
                        char *why, size_t why_len)
{
    if (len == 0) {
        return malformed(why, why_len, "CONTROL frame without an opcode");
    }
    if (pl[0] == FABRIC_CTL_ROUTES) {
        return routes(n, u, pl, len, why, why_len);
    }
    return malformed(why, why_len, "CONTROL opcode %u is not one a device "
                     "sends (1 HELLO, 16 ROUTES)", pl[0]);
}

static Ps1Input data(Ps1Net *n, unsigned u, const FabricHdr *h,
                     const uint8_t *pl, size_t len, char *why,
                     size_t why_len)
{
    Ps1Node *nd = &n->node[u];
    uint32_t word;
    unsigned count, dst;
    Ps1Packet *p;

    if (!nd->linked) {
        return malformed(why, why_len, "DATA before HELLO");
    }
    if (len < 4) {
        return malformed(why, why_len, "DATA payload of %zu bytes has no "
                         "header word", len);
    }
    word = fabric_get_le32(pl);
    count = word & 0xffff;
    dst = word >> 16;
    if (count < 1 || count > FABRIC_PS1_MAX_WORDS) {
        return malformed(why, why_len, "DATA word count %u is outside 1..%d",
                         count, FABRIC_PS1_MAX_WORDS);
    }
    if (len != FABRIC_PS1_DATA_LEN(count)) {
        return malformed(why, why_len, "DATA payload is %zu bytes; %u words "
                         "need %u", len, count, FABRIC_PS1_DATA_LEN(count));
    }
    if (dst >= n->cfg.nodes) {
        return malformed(why, why_len, "DATA for node %u; this fabric has "
                         "nodes 0..%u", dst, n->cfg.nodes - 1);
    }
    if (nd->dev_credit) {
        nd->dev_credit--;
    } else {
        nd->c.overrun++;
        if (g_queue_get_length(&nd->ch[CH_HOST]) > PS1_HOST_IN_SLACK) {
            return malformed(why, why_len, "DATA without an insertion credit "
                             "(host-in is full)");
        }
    }
    p = g_malloc0(sizeof(*p) + len);
    p->src = u;
    p->dst = dst;
    p->count = count;
    p->held_at = p->unroutable_at = -1;
    p->send_time_ns = h->send_time_ns;
    p->len = len;
    memcpy(p->payload, pl, len);
    g_queue_push_tail(&nd->ch[CH_HOST], p);
    nd->c.accepted++;
    mark(n, u);
    return PS1_IN_OK;
}

static Ps1Input credit(Ps1Net *n, unsigned u, const uint8_t *pl, size_t len,
                       char *why, size_t why_len)
{
    Ps1Node *nd = &n->node[u];
    uint64_t sum;

    if (!nd->linked) {
        return malformed(why, why_len, "CREDIT before HELLO");
    }
    if (len != FABRIC_PS1_CREDIT_LEN) {
        return malformed(why, why_len, "CREDIT payload is %zu bytes; "
                         "expected %d", len, FABRIC_PS1_CREDIT_LEN);
    }
    sum = (uint64_t)nd->credit + fabric_get_le32(pl);
    if (sum > FABRIC_PS1_RX_FIFO) {
        /* e.g. credit for words a board reset threw away: harmless */
        nd->c.credit_excess++;
        sum = FABRIC_PS1_RX_FIFO;
    }
    nd->credit = sum;
    mark(n, u);
    return PS1_IN_OK;
}

static Ps1Input barrier(Ps1Net *n, unsigned u, const FabricHdr *h,
                        const uint8_t *pl, size_t len, char *why,
                        size_t why_len)
{
    Ps1Node *nd = &n->node[u];
    uint8_t op, bits;

    if (!nd->linked) {
        return malformed(why, why_len, "BARRIER before HELLO");
    }
    if (len != FABRIC_PS1_BARRIER_LEN) {
        return malformed(why, why_len, "BARRIER payload is %zu bytes; "
                         "expected %d", len, FABRIC_PS1_BARRIER_LEN);
    }
    op = pl[0];
    bits = pl[1];
    if (bits & ~((1u << FABRIC_PS1_BARRIER_LINES) - 1)) {
        return malformed(why, why_len, "BARRIER line bits 0x%02x: only "
                         "lines 0-%d exist", bits,
                         FABRIC_PS1_BARRIER_LINES - 1);
    }
    switch (op) {
    case FABRIC_PS1_BARRIER_ARRIVE:
        for (unsigned l = 0; l < FABRIC_PS1_BARRIER_LINES; l++) {
            uint8_t bit = 1u << l;

            if (!(bits & bit)) {
                continue;
            }
            if (!(nd->bar_mask & bit)) {
                nd->c.barrier_ignored++;
                continue;
            }
            if (!(nd->bar_arrived & bit)) {
                nd->bar_arrived |= bit;
                nd->bar_time[l] = h->send_time_ns;
            }
        }
        break;
    case FABRIC_PS1_BARRIER_MASK:
        nd->bar_mask = bits;
        nd->bar_arrived &= bits;
        break;
    default:
        return malformed(why, why_len, "BARRIER op %u is not one a device "
                         "sends (1 arrive, 2 mask)", op);
    }
    check_lines(n);
    return PS1_IN_OK;
}

static Ps1Input dispatch(Ps1Net *n, unsigned u, const uint8_t *frame,
                         size_t len, char *why, size_t why_len)
{
    const uint8_t *pl = frame + FABRIC_HDR_LEN;
    size_t pl_len = len - FABRIC_HDR_LEN;
    FabricHdr h;

    if (len < FABRIC_HDR_LEN || fabric_hdr_decode(frame, &h) != FABRIC_HDR_OK
        || h.len != pl_len) {
        return malformed(why, why_len, "not a whole fabric frame");
    }
    if (h.kind != FABRIC_KIND_PS1) {
        return malformed(why, why_len, "frame of kind %u on a ps1 fabric",
                         h.kind);
    }
    switch (h.type) {
    case FABRIC_TYPE_CONTROL:
        return control(n, u, pl, pl_len, why, why_len);
    case FABRIC_TYPE_DATA:
        return data(n, u, &h, pl, pl_len, why, why_len);
    case FABRIC_TYPE_CREDIT:
        return credit(n, u, pl, pl_len, why, why_len);
    case FABRIC_TYPE_BARRIER:
        return barrier(n, u, &h, pl, pl_len, why, why_len);
    }
    return malformed(why, why_len, "frame type %u is not used by ps1",
                     h.type);
}

Ps1Input ps1net_input(Ps1Net *n, unsigned node, const uint8_t *frame,
                      size_t len, uint64_t now_ns, char *why, size_t why_len)
{
    Ps1Input r;

    enter(n, now_ns);
    r = dispatch(n, node, frame, len, why, why_len);
    leave(n);
    return r;
}

/* ---- reports ---- */

void ps1net_node_info(const Ps1Net *n, unsigned node, Ps1NodeInfo *info)
{
    const Ps1Node *nd = &n->node[node];
    unsigned *len[CH_COUNT] = { &info->y_in, &info->x_in, &info->host_in };

    memset(info, 0, sizeof(*info));
    info->linked = nd->linked;
    info->table_loaded = nd->table != NULL;
    info->credit = nd->credit;
    info->dev_credit = nd->dev_credit;
    info->barrier_mask = nd->bar_mask;
    info->barrier_arrived = nd->bar_arrived;
    info->c = nd->c;
    for (int c = 0; c < CH_COUNT; c++) {
        const Ps1Packet *head = g_queue_peek_head((GQueue *)&nd->ch[c]);

        *len[c] = g_queue_get_length((GQueue *)&nd->ch[c]);
        for (GList *l = nd->ch[c].head; l; l = l->next) {
            const Ps1Packet *p = l->data;

            info->in_flight += p->arrive_ns > n->now_ns;
        }
        if (head && head->unroutable_at == (int)node) {
            info->unroutable_now++;
        }
    }
}

unsigned ps1net_in_network(const Ps1Net *n)
{
    unsigned total = 0;

    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        for (int c = 0; c < CH_COUNT; c++) {
            total += g_queue_get_length((GQueue *)&n->node[i].ch[c]);
        }
    }
    return total;
}

uint64_t ps1net_barrier_completions(const Ps1Net *n, unsigned line)
{
    return line < FABRIC_PS1_BARRIER_LINES ? n->completions[line] : 0;
}

#define U64 "%" G_GUINT64_FORMAT

static void report_node(const Ps1Net *n, unsigned i, GString *out,
                        bool counters)
{
    Ps1NodeInfo in;

    ps1net_node_info(n, i, &in);
    if (counters) {
        g_string_append_printf(out, "node %u linked=%d table=%s", i,
                               in.linked, in.table_loaded ? "loaded"
                                                          : "default");
    } else {
        g_string_append_printf(out, "node %u: %-8s table=%-7s", i,
                               in.linked ? "linked" : "unlinked",
                               in.table_loaded ? "loaded" : "default");
    }
    g_string_append_printf(out, " credit=%u dev_credit=%u x_in=%u y_in=%u "
                           "host_in=%u in_flight=%u unroutable_now=%u "
                           "accepted=" U64 " inserted=" U64 " delivered="
                           U64 " held=" U64 " unroutable=" U64 " dropped="
                           U64, in.credit, in.dev_credit, in.x_in, in.y_in,
                           in.host_in, in.in_flight, in.unroutable_now,
                           in.c.accepted, in.c.inserted, in.c.delivered,
                           in.c.held, in.c.unroutable, in.c.dropped);
    if (counters || in.c.overrun || in.c.credit_excess ||
        in.c.barrier_ignored || in.c.routes_rejected) {
        g_string_append_printf(out, " overrun=" U64 " credit_excess=" U64
                               " barrier_ignored=" U64 " routes_rejected="
                               U64, in.c.overrun, in.c.credit_excess,
                               in.c.barrier_ignored, in.c.routes_rejected);
    }
    if (counters || in.barrier_mask) {
        g_string_append_printf(out, " barrier_mask=0x%x barrier_arrived=0x%x",
                               in.barrier_mask, in.barrier_arrived);
    }
    g_string_append_c(out, '\n');
}

void ps1net_report(const Ps1Net *n, GString *out, bool counters)
{
    if (!counters) {
        g_string_append_printf(out, "ps1: hop %" G_GUINT64_FORMAT " ns, link "
                               "%" G_GUINT64_FORMAT " MB/s, x-in and y-in "
                               "hold %d packets, host-in 1, RX credit %d "
                               "bytes; %u packets in the network\n",
                               n->cfg.hop_ns, n->cfg.link_mbps,
                               PS1_CHANNEL_PACKETS,
                               FABRIC_PS1_RX_FIFO, ps1net_in_network(n));
    }
    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        report_node(n, i, out, counters);
    }
    for (unsigned l = 0; l < FABRIC_PS1_BARRIER_LINES; l++) {
        unsigned participants = 0, arrived = 0;

        for (unsigned i = 0; i < n->cfg.nodes; i++) {
            const Ps1Node *nd = &n->node[i];

            if (nd->linked && (nd->bar_mask & (1u << l))) {
                participants++;
                arrived += !!(nd->bar_arrived & (1u << l));
            }
        }
        if (counters || participants || n->completions[l]) {
            g_string_append_printf(out, "barrier %u%s participants=%u "
                                   "arrived=%u completions=" U64 "\n", l,
                                   counters ? "" : ":", participants,
                                   arrived, n->completions[l]);
        }
    }
}

void ps1net_dump_tables(const Ps1Net *n, GString *out)
{
    for (unsigned i = 0; i < n->cfg.nodes; i++) {
        g_string_append_printf(out, "node %u %s ", i,
                               n->node[i].table ? "loaded" : "default");
        for (unsigned d = 0; d < n->cfg.nodes; d++) {
            g_string_append_c(out, '0' + ps1net_route(n, i, d));
        }
        g_string_append_c(out, '\n');
    }
}
