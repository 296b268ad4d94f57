/*
 * Unit tests for the ps1 network model (ps1net.c), without sockets: a
 * small simulator plays the devices.  It sends DATA only while it holds an
 * insertion credit, returns RX credit as its "host" reads, and records what
 * the model emits.  Emitted frames are queued and handled after the model
 * returns, as the real ports do.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <string.h>

#include "proto/base.h"
#include "ps1net.h"

#define T0 1000000ull       /* device virtual time of the first send */

/* What a device saw of one delivered DATA frame. */
typedef struct Rx {
    unsigned src;           /* from the header word */
    unsigned hdr_src;       /* from the fabric header */
    unsigned count;
    uint32_t tag;           /* first data word: src << 24 | dst << 16 | seq */
    unsigned hops;
    uint64_t send_ns, deliver_ns;
    bool corrupted;         /* FABRIC_F_CORRUPTED */
    bool crc_ok;            /* CRC over the delivered header and data */
} Rx;

typedef struct Dev {
    bool connected;         /* emit() accepts frames */
    unsigned ins_credit;    /* insertion credits held */
    GQueue tx;              /* GBytes DATA payloads still to send */
    GArray *rx;             /* Rx, in delivery order */
    unsigned rx_read;       /* rx entries the host has read */
    bool auto_read;         /* read (return credit) at once */
    unsigned credit_frames; /* CREDIT frames received */
    uint64_t credit_ns;     /* the last one's deliver_time_ns */
    GArray *released;       /* barrier releases: guint8 bits */
    GArray *release_ns;     /* their deliver_time_ns (guint64) */
    GPtrArray *rejects;     /* REJECT reasons */
    unsigned acks;
    uint8_t ack[FABRIC_PS1_HELLO_ACK_LEN];
} Dev;

typedef struct Link {
    bool down;
    unsigned drop_next;     /* drop this many packets */
    int flip_bit;           /* flip this payload bit on every packet, or -1 */
    uint64_t delay_ns;
    uint64_t down_until_ns; /* lock-step: down until then (virtual time) */
    uint64_t last_time_ns;  /* the time the last crossing was asked at */
    unsigned crossed, held, dropped;
} Link;

typedef struct Sim {
    Ps1Config cfg;
    Ps1Net *net;
    unsigned nodes;
    Dev *dev;
    Link *link;             /* [from * nodes + to] */
    GQueue out;             /* emitted frames: GBytes, node in a side queue */
    GQueue out_node;
    uint64_t now_ns;        /* monotonic clock for link delays */
    uint64_t vtime;         /* device virtual time stamped on sends */
    unsigned seq;
} Sim;

/* ---- simulator ---- */

static bool sim_emit(void *opaque, const Ps1Emit *e)
{
    Sim *s = opaque;

    g_assert_cmpuint(e->node, <, s->nodes);
    g_assert_cmpuint(e->len, >=, FABRIC_HDR_LEN);
    if (!s->dev[e->node].connected) {
        return false;
    }
    g_queue_push_tail(&s->out, g_bytes_new(e->frame, e->len));
    g_queue_push_tail(&s->out_node, GUINT_TO_POINTER(e->node));
    if (e->type == FABRIC_TYPE_DATA) {
        /* hops travel in the emit record only: keep them with the frame */
        g_queue_push_tail(&s->out_node, GUINT_TO_POINTER(e->hops));
    }
    return true;
}

static Ps1Cross sim_cross(void *opaque, unsigned from, unsigned to,
                          uint8_t *payload, size_t len, Ps1Crossing *x)
{
    Sim *s = opaque;
    Link *l = &s->link[from * s->nodes + to];

    g_assert_true(ps1_has_link(&s->cfg, from, to));
    l->last_time_ns = x->time_ns;
    if (l->down) {
        l->held += !x->retry;
        return PS1_CROSS_HOLD;
    }
    if (l->drop_next) {
        l->drop_next--;
        l->dropped++;
        return PS1_CROSS_DROP;
    }
    if (l->flip_bit >= 0 && (size_t)l->flip_bit < len * 8) {
        payload[l->flip_bit / 8] ^= 1u << (l->flip_bit % 8);
        x->corrupted = true;
    }
    /* lock-step: a down window ending at down_until_ns is waited out */
    if (s->cfg.lockstep && x->time_ns < l->down_until_ns) {
        x->wait_ns = l->down_until_ns - x->time_ns;
        x->delay_ns = x->wait_ns;
    }
    x->delay_ns += l->delay_ns;
    l->crossed++;
    return PS1_CROSS_PASS;
}

static const Ps1Ops sim_ops = { .emit = sim_emit, .cross = sim_cross };

static Sim *sim_new_cfg(const Ps1Config *cfg)
{
    Sim *s = g_new0(Sim, 1);

    s->cfg = *cfg;
    s->nodes = cfg->nodes;
    s->net = ps1net_new(cfg, &sim_ops, s);
    s->dev = g_new0(Dev, s->nodes);
    s->link = g_new0(Link, s->nodes * s->nodes);
    for (unsigned i = 0; i < s->nodes * s->nodes; i++) {
        s->link[i].flip_bit = -1;
    }
    for (unsigned i = 0; i < s->nodes; i++) {
        Dev *d = &s->dev[i];

        g_queue_init(&d->tx);
        d->rx = g_array_new(FALSE, TRUE, sizeof(Rx));
        d->released = g_array_new(FALSE, TRUE, sizeof(guint8));
        d->release_ns = g_array_new(FALSE, TRUE, sizeof(guint64));
        d->rejects = g_ptr_array_new_with_free_func(g_free);
        d->auto_read = true;
    }
    g_queue_init(&s->out);
    g_queue_init(&s->out_node);
    s->vtime = T0;
    return s;
}

static Sim *sim_new(unsigned nodes, const char *topology)
{
    Ps1Config cfg;
    g_autoptr(GError) err = NULL;

    g_assert_true(ps1_config_init(&cfg, nodes, topology, &err));
    g_assert_no_error(err);
    return sim_new_cfg(&cfg);
}

static void sim_free(Sim *s)
{
    ps1net_free(s->net);
    for (unsigned i = 0; i < s->nodes; i++) {
        Dev *d = &s->dev[i];

        g_queue_clear_full(&d->tx, (GDestroyNotify)g_bytes_unref);
        g_array_free(d->rx, TRUE);
        g_array_free(d->released, TRUE);
        g_array_free(d->release_ns, TRUE);
        g_ptr_array_free(d->rejects, TRUE);
    }
    g_queue_clear_full(&s->out, (GDestroyNotify)g_bytes_unref);
    g_queue_clear(&s->out_node);
    g_free(s->dev);
    g_free(s->link);
    g_free(s);
}

/* Hand one frame from `node`'s device to the model. */
static Ps1Input sim_input(Sim *s, unsigned node, uint8_t kind, uint8_t type,
                          const uint8_t *pl, size_t len, char **why_out)
{
    g_autofree uint8_t *frame = g_malloc(FABRIC_HDR_LEN + len);
    FabricHdr h = {
        .kind = kind, .type = type, .src = node, .dst = FABRIC_NODE_NONE,
        .len = len, .send_time_ns = s->vtime,
    };
    char why[200] = "";
    Ps1Input r;

    fabric_hdr_encode(&h, frame);
    memcpy(frame + FABRIC_HDR_LEN, pl, len);
    /* lock-step: fabricd routes a frame at its virtual send time */
    r = ps1net_input(s->net, node, frame, FABRIC_HDR_LEN + len,
                     s->cfg.lockstep ? s->vtime : s->now_ns, why,
                     sizeof(why));
    if (r != PS1_IN_OK) {
        g_assert_cmpuint(strlen(why), >, 0);
    }
    if (why_out) {
        *why_out = g_strdup(why);
    }
    return r;
}

/* A DATA payload for `dst` as a board encodes it (proto/ps1.h). */
static size_t data_encode(uint16_t dst, const uint32_t *words,
                          unsigned count, uint8_t *out)
{
    return fabric_ps1_data_encode(fabric_ps1_header_word(dst, count), words,
                                  out);
}

static Ps1Input send_ps1(Sim *s, unsigned node, uint8_t type,
                         const uint8_t *pl, size_t len)
{
    return sim_input(s, node, FABRIC_KIND_PS1, type, pl, len, NULL);
}

static void send_credit(Sim *s, unsigned node, uint32_t bytes)
{
    uint8_t pl[4];

    fabric_put_le32(pl, bytes);
    g_assert_cmpint(send_ps1(s, node, FABRIC_TYPE_CREDIT, pl, 4), ==,
                    PS1_IN_OK);
}

static void send_barrier(Sim *s, unsigned node, uint8_t op, uint8_t bits)
{
    uint8_t pl[2] = { op, bits };

    g_assert_cmpint(send_ps1(s, node, FABRIC_TYPE_BARRIER, pl, 2), ==,
                    PS1_IN_OK);
}

static Ps1Input send_routes(Sim *s, unsigned node, unsigned id,
                            const uint8_t *table, unsigned count)
{
    g_autofree uint8_t *pl = g_malloc(FABRIC_PS1_ROUTES_HDR_LEN + count);

    pl[0] = FABRIC_CTL_ROUTES;
    fabric_put_le16(pl + 1, id);
    fabric_put_le16(pl + 3, count);
    memcpy(pl + FABRIC_PS1_ROUTES_HDR_LEN, table, count);
    return send_ps1(s, node, FABRIC_TYPE_CONTROL, pl,
                    FABRIC_PS1_ROUTES_HDR_LEN + count);
}

static bool crc_ok(const uint8_t *pl, unsigned count)
{
    size_t covered = 4 + 4 * (size_t)count;

    return fabric_crc32(pl, covered) == fabric_get_le32(pl + covered + count);
}

/* Handle what the model emitted; true if anything was there. */
static bool sim_drain(Sim *s)
{
    bool any = false;

    while (!g_queue_is_empty(&s->out)) {
        g_autoptr(GBytes) b = g_queue_pop_head(&s->out);
        unsigned node = GPOINTER_TO_UINT(g_queue_pop_head(&s->out_node));
        size_t len;
        const uint8_t *f = g_bytes_get_data(b, &len);
        const uint8_t *pl = f + FABRIC_HDR_LEN;
        Dev *d = &s->dev[node];
        FabricHdr h;

        any = true;
        g_assert_cmpint(fabric_hdr_decode(f, &h), ==, FABRIC_HDR_OK);
        g_assert_cmpuint(h.kind, ==, FABRIC_KIND_PS1);
        g_assert_cmpuint(h.dst, ==, node);
        g_assert_cmpuint(h.len, ==, len - FABRIC_HDR_LEN);
        switch (h.type) {
        case FABRIC_TYPE_DATA: {
            Rx rx = { 0 };
            uint32_t word = fabric_get_le32(pl);

            rx.hops = GPOINTER_TO_UINT(g_queue_pop_head(&s->out_node));
            rx.src = word >> 16;
            rx.hdr_src = h.src;
            rx.count = word & 0xffff;
            g_assert_cmpuint(h.len, ==, FABRIC_PS1_DATA_LEN(rx.count));
            rx.tag = fabric_get_le32(pl + 4);
            rx.send_ns = h.send_time_ns;
            rx.deliver_ns = h.deliver_time_ns;
            rx.corrupted = h.flags & FABRIC_F_CORRUPTED;
            rx.crc_ok = crc_ok(pl, rx.count);
            g_array_append_val(d->rx, rx);
            break;
        }
        case FABRIC_TYPE_CREDIT:
            g_assert_cmpuint(h.len, ==, 4);
            g_assert_cmpuint(fabric_get_le32(pl), ==, 1);
            d->ins_credit++;
            d->credit_frames++;
            d->credit_ns = h.deliver_time_ns;
            /* flow control: never more than the one packet in host-in */
            g_assert_cmpuint(d->ins_credit, ==, 1);
            break;
        case FABRIC_TYPE_BARRIER:
            g_assert_cmpuint(h.len, ==, 2);
            g_assert_cmpuint(pl[0], ==, FABRIC_PS1_BARRIER_RELEASE);
            g_array_append_val(d->released, pl[1]);
            g_array_append_val(d->release_ns, h.deliver_time_ns);
            break;
        case FABRIC_TYPE_CONTROL:
            if (pl[0] == FABRIC_CTL_HELLO_ACK) {
                g_assert_cmpuint(h.len, ==, FABRIC_PS1_HELLO_ACK_LEN);
                memcpy(d->ack, pl, sizeof(d->ack));
                d->acks++;
                d->ins_credit = 1;
            } else {
                g_assert_cmpuint(pl[0], ==, FABRIC_CTL_REJECT);
                g_ptr_array_add(d->rejects,
                                g_strndup((const char *)pl + 1, h.len - 1));
            }
            break;
        default:
            g_assert_not_reached();
        }
    }
    return any;
}

/* The host of `node` reads one packet and returns its FIFO bytes. */
static bool host_read(Sim *s, unsigned node)
{
    Dev *d = &s->dev[node];
    const Rx *rx;

    if (d->rx_read >= d->rx->len) {
        return false;
    }
    rx = &g_array_index(d->rx, Rx, d->rx_read++);
    send_credit(s, node, FABRIC_PS1_PKT_BYTES(rx->count));
    return true;
}

/* Channels never hold more than they can. */
static void check_capacity(Sim *s)
{
    for (unsigned i = 0; i < s->nodes; i++) {
        Ps1NodeInfo in;

        ps1net_node_info(s->net, i, &in);
        g_assert_cmpuint(in.x_in, <=, PS1_CHANNEL_PACKETS);
        g_assert_cmpuint(in.y_in, <=, PS1_CHANNEL_PACKETS);
        g_assert_cmpuint(in.host_in, <=, 1 + PS1_HOST_IN_SLACK);
        if (!s->cfg.torus) {
            g_assert_cmpuint(in.y_in, ==, 0);
        }
    }
}

/* Let devices act (send with credit, auto-read) until nothing happens. */
static void sim_settle(Sim *s)
{
    bool again = true;

    while (again) {
        again = sim_drain(s);
        for (unsigned i = 0; i < s->nodes; i++) {
            Dev *d = &s->dev[i];

            while (d->auto_read && host_read(s, i)) {
                again = true;
            }
            if (d->ins_credit && !g_queue_is_empty(&d->tx)) {
                g_autoptr(GBytes) b = g_queue_pop_head(&d->tx);
                size_t len;
                const uint8_t *pl = g_bytes_get_data(b, &len);

                d->ins_credit--;
                s->vtime += 10;
                g_assert_cmpint(send_ps1(s, i, FABRIC_TYPE_DATA, pl, len), ==,
                                PS1_IN_OK);
                again = true;
            }
        }
        check_capacity(s);
    }
}

/*
 * A HELLO as fabricd's kind layer handles it (fabric_kind_ingress): the
 * model restarts the node, the HELLO_ACK is queued, the node takes part.
 */
static void hello(Sim *s, unsigned node)
{
    FabricHelloAck ack = { .nodes = s->nodes };
    uint8_t frame[FABRIC_HDR_LEN + FABRIC_PS1_HELLO_ACK_LEN];
    FabricHdr h = {
        .kind = FABRIC_KIND_PS1, .type = FABRIC_TYPE_CONTROL,
        .src = FABRIC_NODE_NONE, .dst = node,
    };

    s->dev[node].connected = true;
    ps1net_hello(s->net, node, &ack);
    g_assert_cmpuint(ack.extra_len, ==, FABRIC_PS1_HELLO_ACK_EXTRA);
    h.len = fabric_hello_ack_encode(&ack, frame + FABRIC_HDR_LEN);
    fabric_hdr_encode(&h, frame);
    g_queue_push_tail(&s->out, g_bytes_new(frame, FABRIC_HDR_LEN + h.len));
    g_queue_push_tail(&s->out_node, GUINT_TO_POINTER(node));
    ps1net_hello_done(s->net, node, s->now_ns);
    sim_drain(s);
    g_assert_cmpuint(s->dev[node].acks, >=, 1);
}

static void hello_all(Sim *s)
{
    for (unsigned i = 0; i < s->nodes; i++) {
        hello(s, i);
    }
}

/* Queue a packet of `count` words from src to dst; returns its tag. */
static uint32_t queue_packet(Sim *s, unsigned src, unsigned dst,
                             unsigned count)
{
    uint32_t words[FABRIC_PS1_MAX_WORDS];
    uint8_t pl[FABRIC_PS1_DATA_LEN(FABRIC_PS1_MAX_WORDS)];
    uint32_t tag = (src & 0xff) << 24 | (dst & 0xff) << 16 |
                   (s->seq++ & 0xffff);

    words[0] = tag;
    for (unsigned i = 1; i < count; i++) {
        words[i] = tag * 2654435761u + i;
    }
    g_queue_push_tail(&s->dev[src].tx,
                      g_bytes_new(pl, data_encode(dst, words, count, pl)));
    return tag;
}

static Ps1NodeInfo info(Sim *s, unsigned node)
{
    Ps1NodeInfo in;

    ps1net_node_info(s->net, node, &in);
    return in;
}

/* ---- topology and tables ---- */

static void test_topology(void)
{
    Ps1Config c;
    g_autoptr(GError) err = NULL;

    g_assert_true(ps1_config_init(&c, 4, NULL, &err));
    g_assert_false(c.torus);
    g_assert_true(ps1_config_init(&c, 4, "ring", &err));
    g_assert_cmpuint(c.hop_ns, ==, 250);
    g_assert_cmpuint(c.link_mbps, ==, 20);
    /* a unidirectional ring */
    for (unsigned i = 0; i < 4; i++) {
        g_assert_cmpuint(ps1_next_x(&c, i), ==, (i + 1) % 4);
        for (unsigned j = 0; j < 4; j++) {
            g_assert_cmpint(ps1_has_link(&c, i, j), ==, j == (i + 1) % 4);
        }
    }

    g_assert_true(ps1_config_init(&c, 6, "torus:3x2", &err));
    g_assert_true(c.torus);
    g_assert_cmpuint(c.width, ==, 3);
    g_assert_cmpuint(c.height, ==, 2);
    /* node = y * W + x: (2,0) -> (0,0) on x, (2,0) -> (2,1) on y */
    g_assert_cmpuint(ps1_next_x(&c, 2), ==, 0);
    g_assert_cmpuint(ps1_next_y(&c, 2), ==, 5);
    g_assert_cmpuint(ps1_next_x(&c, 5), ==, 3);
    g_assert_cmpuint(ps1_next_y(&c, 5), ==, 2);
    g_assert_true(ps1_has_link(&c, 0, 1));
    g_assert_false(ps1_has_link(&c, 1, 0));
    g_assert_true(ps1_has_link(&c, 0, 3));
    g_assert_false(ps1_has_link(&c, 0, 4));
    g_assert_false(ps1_has_link(&c, 0, 0));
    /* a dimension of 1 has no cables: 1x3 is a ring on y */
    g_assert_true(ps1_config_init(&c, 3, "torus:1x3", &err));
    g_assert_true(ps1_has_link(&c, 0, 1));
    g_assert_true(ps1_has_link(&c, 2, 0));
    g_assert_false(ps1_has_link(&c, 1, 0));
    g_assert_cmpuint(ps1_default_route(&c, 0, 2), ==, FABRIC_PS1_ROUTE_Y);

    static const struct { unsigned n; const char *t, *msg; } bad[] = {
        { 4, "torus:2x3", "W*H must equal" },
        { 4, "torus:0x4", "1..255" },
        { 4, "torus:4x0", "1..255" },
        { 4, "torus:2", "bad --topology" },
        { 4, "torus:x2", "bad --topology" },
        { 4, "torus:2x2x", "bad --topology" },
        { 4, "mesh", "bad --topology" },
        { 512, "torus:256x2", "1..255" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) e = NULL;

        g_assert_false(ps1_config_init(&c, bad[i].n, bad[i].t, &e));
        g_assert_nonnull(e);
        g_assert_nonnull(strstr(e->message, bad[i].msg));
    }
}

/* Follow a table from src; returns the links crossed, or -1. */
static int walk(const Ps1Config *c, unsigned src, unsigned dst)
{
    unsigned at = src;

    for (unsigned hops = 0; hops <= c->nodes; hops++) {
        switch (ps1_default_route(c, at, dst)) {
        case FABRIC_PS1_ROUTE_HERE:
            return at == dst ? (int)hops : -1;
        case FABRIC_PS1_ROUTE_X:
            at = ps1_next_x(c, at);
            break;
        case FABRIC_PS1_ROUTE_Y:
            g_assert_true(c->torus);
            at = ps1_next_y(c, at);
            break;
        default:
            return -1;
        }
    }
    return -1;
}

static void test_default_tables(void)
{
    static const char *const topo[] = { "ring", "ring", "torus:2x2",
                                        "torus:3x3", "torus:4x2",
                                        "torus:1x4", "torus:4x1" };
    static const unsigned nodes[] = { 1, 5, 4, 9, 8, 4, 4 };
    Ps1Config c;

    /* ring of 4: always x unless here */
    g_assert_true(ps1_config_init(&c, 4, "ring", NULL));
    g_assert_cmpuint(ps1_default_route(&c, 1, 1), ==, FABRIC_PS1_ROUTE_HERE);
    g_assert_cmpuint(ps1_default_route(&c, 1, 0), ==, FABRIC_PS1_ROUTE_X);
    g_assert_cmpuint(ps1_default_hops(&c, 1, 0), ==, 3);
    /* 3x3 torus: x until the column matches, then y */
    g_assert_true(ps1_config_init(&c, 9, "torus:3x3", NULL));
    g_assert_cmpuint(ps1_default_route(&c, 0, 8), ==, FABRIC_PS1_ROUTE_X);
    g_assert_cmpuint(ps1_default_route(&c, 2, 8), ==, FABRIC_PS1_ROUTE_Y);
    g_assert_cmpuint(ps1_default_route(&c, 5, 8), ==, FABRIC_PS1_ROUTE_Y);
    g_assert_cmpuint(ps1_default_route(&c, 8, 8), ==, FABRIC_PS1_ROUTE_HERE);
    g_assert_cmpuint(ps1_default_route(&c, 7, 1), ==, FABRIC_PS1_ROUTE_Y);
    g_assert_cmpuint(ps1_default_hops(&c, 8, 0), ==, 2);
    g_assert_cmpuint(ps1_default_hops(&c, 0, 8), ==, 4);

    for (size_t t = 0; t < G_N_ELEMENTS(topo); t++) {
        g_assert_true(ps1_config_init(&c, nodes[t], topo[t], NULL));
        for (unsigned s = 0; s < c.nodes; s++) {
            for (unsigned d = 0; d < c.nodes; d++) {
                g_assert_cmpint(walk(&c, s, d), ==,
                                (int)ps1_default_hops(&c, s, d));
            }
        }
    }

    /* the model's view agrees, and `table` prints it */
    Sim *s = sim_new(4, "torus:2x2");
    g_autoptr(GString) out = g_string_new(NULL);

    ps1net_dump_tables(s->net, out);
    g_assert_cmpstr(out->str, ==, "node 0 default 0121\n"
                                  "node 1 default 1012\n"
                                  "node 2 default 2101\n"
                                  "node 3 default 1210\n");
    sim_free(s);
}

static void test_payload_helpers(void)
{
    uint32_t words[2] = { 0x00000001, 0x0301ff00 };
    uint8_t pl[FABRIC_PS1_DATA_LEN(2)];

    /* the zlib check value */
    g_assert_cmphex(fabric_crc32((const uint8_t *)"123456789", 9), ==,
                    0xcbf43926);
    /* byte 0 has one bit set; bytes 1, 2 and 3 have 8, 1 and 2 */
    g_assert_cmphex(fabric_ps1_parity(0x00000001), ==, 0x1);
    g_assert_cmphex(fabric_ps1_parity(0x0301ff00), ==, 0x4);
    g_assert_cmpuint(data_encode(7, words, 2, pl), ==, 4 + 8 + 2 + 4);
    g_assert_cmphex(fabric_get_le32(pl), ==, 0x00070002);
    g_assert_cmphex(pl[12], ==, 0x1);
    g_assert_cmphex(pl[13], ==, 0x4);
    g_assert_true(crc_ok(pl, 2));
}

/* ---- link setup and framing ---- */

static void test_hello(void)
{
    Sim *s = sim_new(9, "torus:3x3");
    uint8_t pl[FABRIC_HELLO_LEN];
    g_autofree char *why = NULL;

    /* the ack carries the node count and the torus shape */
    hello(s, 4);
    g_assert_cmpuint(s->dev[4].ack[0], ==, FABRIC_CTL_HELLO_ACK);
    g_assert_cmpuint(fabric_get_le16(s->dev[4].ack + 1), ==, 9);
    g_assert_cmpuint(s->dev[4].ack[3], ==, 3);
    g_assert_cmpuint(s->dev[4].ack[4], ==, 3);
    g_assert_true(info(s, 4).linked);
    g_assert_cmpuint(info(s, 4).credit, ==, FABRIC_PS1_RX_FIFO);
    g_assert_cmpuint(info(s, 4).dev_credit, ==, 1);

    /*
     * HELLO is the kind layer's: one handed to the model is malformed and
     * changes nothing (test-fabricd-ps1 checks the kind layer's REJECTs).
     */
    s->dev[2].connected = true;
    fabric_hello_encode(2, 0, pl);
    g_assert_cmpint(sim_input(s, 2, FABRIC_KIND_PS1, FABRIC_TYPE_CONTROL, pl,
                              sizeof(pl), &why), ==, PS1_IN_MALFORMED);
    g_assert_nonnull(strstr(why, "opcode 1"));
    g_assert_false(info(s, 2).linked);

    /* a refused re-HELLO takes a linked node off the net */
    ps1net_port_down(s->net, 4, s->now_ns);
    g_assert_false(info(s, 4).linked);
    g_assert_cmpuint(info(s, 4).credit, ==, 0);
    g_assert_cmpuint(info(s, 4).dev_credit, ==, 0);

    /* a ring reports width and height 0 */
    sim_free(s);
    s = sim_new(3, "ring");
    hello(s, 1);
    g_assert_cmpuint(fabric_get_le16(s->dev[1].ack + 1), ==, 3);
    g_assert_cmpuint(s->dev[1].ack[3], ==, 0);
    g_assert_cmpuint(s->dev[1].ack[4], ==, 0);
    sim_free(s);
}

static void test_malformed(void)
{
    Sim *s = sim_new(3, "ring");
    uint32_t words[128] = { 0 };
    uint8_t pl[FABRIC_PS1_DATA_LEN(128)];
    uint8_t small[8] = { 0 };
    size_t len;

    /* before HELLO, traffic is refused */
    len = data_encode(1, words, 1, pl);
    s->dev[0].connected = true;
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_DATA, pl, len), ==,
                    PS1_IN_MALFORMED);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_CREDIT, small, 4), ==,
                    PS1_IN_MALFORMED);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_BARRIER, small, 2), ==,
                    PS1_IN_MALFORMED);
    hello_all(s);

    /* word count 0 and 128 */
    fabric_put_le32(pl, 1u << 16 | 0);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_DATA, pl,
                             FABRIC_PS1_DATA_LEN(0)), ==, PS1_IN_MALFORMED);
    len = data_encode(1, words, 128, pl);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_DATA, pl, len), ==,
                    PS1_IN_MALFORMED);
    /* a length that does not match the count, either way */
    len = data_encode(1, words, 3, pl);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_DATA, pl, len - 1), ==,
                    PS1_IN_MALFORMED);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_DATA, pl, len + 1), ==,
                    PS1_IN_MALFORMED);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_DATA, pl, 3), ==,
                    PS1_IN_MALFORMED);
    /* a destination outside the fabric */
    len = data_encode(3, words, 3, pl);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_DATA, pl, len), ==,
                    PS1_IN_MALFORMED);
    /* other frames with bad payloads */
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_CREDIT, small, 3), ==,
                    PS1_IN_MALFORMED);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_BARRIER, small, 3), ==,
                    PS1_IN_MALFORMED);
    small[0] = FABRIC_PS1_BARRIER_RELEASE;
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_BARRIER, small, 2), ==,
                    PS1_IN_MALFORMED);
    small[0] = FABRIC_PS1_BARRIER_ARRIVE;
    small[1] = 0x10;
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_BARRIER, small, 2), ==,
                    PS1_IN_MALFORMED);
    small[0] = FABRIC_CTL_HELLO_ACK;
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_CONTROL, small, 5), ==,
                    PS1_IN_MALFORMED);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_CONTROL, small, 0), ==,
                    PS1_IN_MALFORMED);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_SYNC, small, 8), ==,
                    PS1_IN_MALFORMED);
    g_assert_cmpint(sim_input(s, 0, FABRIC_KIND_ETH, FABRIC_TYPE_DATA, small,
                              8, NULL), ==, PS1_IN_MALFORMED);

    /* none of it touched the network or the insertion credit */
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 0);
    g_assert_cmpuint(info(s, 0).c.accepted, ==, 0);
    g_assert_cmpuint(info(s, 0).dev_credit, ==, 1);
    g_assert_true(info(s, 0).linked);
    /* and a good packet still goes through */
    queue_packet(s, 0, 2, 5);
    sim_settle(s);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 1);
    sim_free(s);
}

/* ---- delivery ---- */

static void check_all_to_all(unsigned nodes, const char *topology)
{
    Sim *s = sim_new(nodes, topology);

    hello_all(s);
    for (unsigned src = 0; src < nodes; src++) {
        for (unsigned dst = 0; dst < nodes; dst++) {
            queue_packet(s, src, dst, 1 + (src * 7 + dst * 13) % 127);
        }
    }
    sim_settle(s);
    for (unsigned dst = 0; dst < nodes; dst++) {
        Dev *d = &s->dev[dst];
        g_autofree bool *seen = g_new0(bool, nodes);

        g_assert_cmpuint(d->rx->len, ==, nodes);
        for (unsigned i = 0; i < d->rx->len; i++) {
            const Rx *rx = &g_array_index(d->rx, Rx, i);

            g_assert_cmpuint(rx->src, <, nodes);
            g_assert_false(seen[rx->src]);
            seen[rx->src] = true;
            g_assert_cmpuint(rx->hdr_src, ==, rx->src);
            g_assert_cmphex(rx->tag >> 16, ==, (rx->src << 8 | dst) & 0xffff);
            g_assert_cmpuint(rx->count, ==, 1 + (rx->src * 7 + dst * 13) % 127);
            g_assert_cmpuint(rx->hops, ==,
                             ps1_default_hops(&s->cfg, rx->src, dst));
            g_assert_cmpuint(rx->deliver_ns - rx->send_ns, ==,
                             ps1_latency_ns(&s->cfg, rx->hops, rx->count));
            g_assert_true(rx->crc_ok);
            g_assert_false(rx->corrupted);
        }
        /* every packet left host-in, and each gave a credit back */
        g_assert_cmpuint(info(s, dst).c.accepted, ==, nodes);
        g_assert_cmpuint(info(s, dst).c.inserted, ==, nodes);
        g_assert_cmpuint(info(s, dst).c.delivered, ==, nodes);
        g_assert_cmpuint(s->dev[dst].credit_frames, ==, nodes);
        g_assert_cmpuint(info(s, dst).credit, ==, FABRIC_PS1_RX_FIFO);
    }
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 0);
    sim_free(s);
}

static void test_all_to_all(void)
{
    check_all_to_all(1, "ring");
    check_all_to_all(2, "ring");
    check_all_to_all(5, "ring");
    check_all_to_all(4, "torus:2x2");
    check_all_to_all(9, "torus:3x3");
    check_all_to_all(12, "torus:4x3");
    /* a dimension of 1 has no links: a ring on the other one */
    check_all_to_all(4, "torus:1x4");
    check_all_to_all(4, "torus:4x1");
    check_all_to_all(1, "torus:1x1");
}

static void test_timing(void)
{
    Ps1Config c;
    Sim *s;
    const Rx *rx;

    g_assert_true(ps1_config_init(&c, 4, "ring", NULL));
    s = sim_new_cfg(&c);
    hello_all(s);
    queue_packet(s, 0, 3, 10);
    sim_settle(s);
    rx = &g_array_index(s->dev[3].rx, Rx, 0);
    /* 3 hops of 250 ns, 44 bytes at 20 MB/s (50 ns a byte) */
    g_assert_cmpuint(rx->hops, ==, 3);
    g_assert_cmpuint(rx->send_ns, ==, T0 + 10);
    g_assert_cmpuint(rx->deliver_ns, ==, T0 + 10 + 750 + 2200);
    sim_free(s);

    c.hop_ns = 100;
    c.link_mbps = 40;
    s = sim_new_cfg(&c);
    hello_all(s);
    queue_packet(s, 2, 1, 127);
    sim_settle(s);
    rx = &g_array_index(s->dev[1].rx, Rx, 0);
    g_assert_cmpuint(rx->deliver_ns - rx->send_ns, ==, 3 * 100 + 512 * 25);
    sim_free(s);
}

/* The receiver's host does not read: packets wait, nothing is lost. */
static void test_flow_control(void)
{
    Sim *s = sim_new(3, "ring");
    uint32_t tags[10];
    Ps1NodeInfo in;

    hello_all(s);
    s->dev[1].auto_read = false;
    for (int i = 0; i < 10; i++) {
        tags[i] = queue_packet(s, 0, 1, FABRIC_PS1_MAX_WORDS);
    }
    sim_settle(s);
    /* two 512-byte packets fill the 1 KiB RX FIFO */
    g_assert_cmpuint(s->dev[1].rx->len, ==, 2);
    g_assert_cmpuint(info(s, 1).credit, ==, 0);
    /* node 1's x-in holds two, node 0's host-in one: the rest wait */
    in = info(s, 1);
    g_assert_cmpuint(in.x_in, ==, 2);
    g_assert_cmpuint(in.c.held, >=, 1);
    in = info(s, 0);
    g_assert_cmpuint(in.host_in, ==, 1);
    g_assert_cmpuint(in.c.held, >=, 1);
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 3);
    /* the sender stopped getting insertion credits */
    g_assert_cmpuint(s->dev[0].ins_credit, ==, 0);
    g_assert_cmpuint(g_queue_get_length(&s->dev[0].tx), ==, 5);
    g_assert_cmpuint(s->dev[0].credit_frames, ==, 4);
    g_assert_cmpuint(in.c.accepted, ==, 5);
    g_assert_cmpuint(in.c.dropped + info(s, 1).c.dropped, ==, 0);

    /* a partial credit is not enough for a whole packet */
    send_credit(s, 1, 500);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 2);
    send_credit(s, 1, 12);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 3);
    s->dev[1].rx_read = 1;  /* those 512 bytes are what was read */

    /* the host reads one packet at a time: all arrive, in order */
    while (host_read(s, 1)) {
        sim_settle(s);
    }
    g_assert_cmpuint(s->dev[1].rx->len, ==, 10);
    for (int i = 0; i < 10; i++) {
        g_assert_cmphex(g_array_index(s->dev[1].rx, Rx, i).tag, ==, tags[i]);
    }
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 0);
    g_assert_cmpuint(s->dev[0].ins_credit, ==, 1);
    sim_free(s);
}

/* A full destination blocks its x-in: traffic through it waits too. */
static void test_head_of_line(void)
{
    Sim *s = sim_new(4, "ring");

    hello_all(s);
    s->dev[1].auto_read = false;
    for (int i = 0; i < 4; i++) {
        queue_packet(s, 0, 1, FABRIC_PS1_MAX_WORDS);
    }
    queue_packet(s, 0, 2, 1);
    sim_settle(s);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 0);
    while (host_read(s, 1)) {
        sim_settle(s);
    }
    g_assert_cmpuint(s->dev[1].rx->len, ==, 4);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 1);
    sim_free(s);
}

/* The paper's forwarding rules, one by one. */
static void test_forwarding_rules(void)
{
    Sim *s = sim_new(3, "ring");

    /* the host inserts only while the node's incoming channel is empty */
    hello_all(s);
    s->dev[1].auto_read = false;
    for (int i = 0; i < 3; i++) {
        queue_packet(s, 0, 1, FABRIC_PS1_MAX_WORDS);
    }
    sim_settle(s);
    g_assert_cmpuint(info(s, 1).x_in, ==, 1);   /* waits for host 1 */
    queue_packet(s, 1, 2, 1);
    sim_settle(s);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 0);
    g_assert_cmpuint(info(s, 1).host_in, ==, 1);
    g_assert_cmpuint(info(s, 2).x_in, ==, 0);   /* though there is room */
    host_read(s, 1);
    sim_settle(s);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 1);
    sim_free(s);

    /*
     * 3x2 torus, node = y*3+x: y has priority.  Host 1 does not read, so
     * a packet from 4 waits in y-in(1).  Behind it a packet 0->2 in x-in(1)
     * waits, though it stays on x and x-in(2) has room; and host 1 may not
     * insert a packet for 2 on x while y-in(1) is busy.
     */
    s = sim_new(6, "torus:3x2");
    hello_all(s);
    s->dev[1].auto_read = false;
    for (int i = 0; i < 3; i++) {
        queue_packet(s, 4, 1, FABRIC_PS1_MAX_WORDS);
    }
    sim_settle(s);
    g_assert_cmpuint(info(s, 1).y_in, ==, 1);
    queue_packet(s, 0, 2, 1);
    sim_settle(s);
    g_assert_cmpuint(info(s, 1).x_in, ==, 1);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 0);
    host_read(s, 1);
    sim_settle(s);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 1);
    g_assert_cmpuint(info(s, 1).x_in + info(s, 1).y_in, ==, 0);

    queue_packet(s, 4, 1, FABRIC_PS1_MAX_WORDS);
    queue_packet(s, 4, 1, FABRIC_PS1_MAX_WORDS);
    sim_settle(s);
    g_assert_cmpuint(info(s, 1).y_in, ==, 2);  /* host 1's FIFO is full */
    queue_packet(s, 1, 2, 1);
    sim_settle(s);
    g_assert_cmpuint(info(s, 1).host_in, ==, 1);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 1);
    while (host_read(s, 1)) {
        sim_settle(s);
    }
    g_assert_cmpuint(s->dev[2].rx->len, ==, 2);
    sim_free(s);

    /*
     * x-in moves only with room on both outgoing links, whatever its
     * route: y-in(3) full (host 3 does not read) stops a packet in x-in(1)
     * that is for node 1 itself.
     */
    s = sim_new(4, "torus:2x2");
    hello_all(s);
    s->dev[3].auto_read = false;
    for (int i = 0; i < 4; i++) {
        queue_packet(s, 1, 3, FABRIC_PS1_MAX_WORDS);
    }
    sim_settle(s);
    g_assert_cmpuint(info(s, 3).y_in, ==, 2);
    queue_packet(s, 0, 1, 1);
    sim_settle(s);
    g_assert_cmpuint(info(s, 1).x_in, ==, 1);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 0);
    host_read(s, 3);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 1);
    sim_free(s);
}

/* ---- routing tables ---- */

static void test_routes(void)
{
    Sim *s = sim_new(3, "ring");
    uint8_t table[4] = { 0, 1, 3, 9 };
    uint8_t good[3] = { 0, 1, 1 };
    const Rx *rx;

    s->dev[0].connected = true;
    g_assert_cmpint(send_routes(s, 0, 0, good, 3), ==, PS1_IN_REJECTED);
    hello_all(s);
    /* validation: node, count, length, values; the link stays */
    g_assert_cmpint(send_routes(s, 0, 1, good, 3), ==, PS1_IN_REJECTED);
    g_assert_cmpint(send_routes(s, 0, 0, good, 2), ==, PS1_IN_REJECTED);
    g_assert_cmpint(send_routes(s, 0, 0, table, 4), ==, PS1_IN_REJECTED);
    table[2] = 4;
    g_assert_cmpint(send_routes(s, 0, 0, table, 3), ==, PS1_IN_REJECTED);
    g_assert_cmpint(send_ps1(s, 0, FABRIC_TYPE_CONTROL,
                             (const uint8_t[]){ FABRIC_CTL_ROUTES, 0, 0 }, 3),
                    ==, PS1_IN_REJECTED);
    sim_drain(s);
    g_assert_cmpuint(s->dev[0].rejects->len, ==, 6);
    g_assert_nonnull(strstr(s->dev[0].rejects->pdata[1], "node 1"));
    g_assert_nonnull(strstr(s->dev[0].rejects->pdata[2], "3 nodes"));
    g_assert_nonnull(strstr(s->dev[0].rejects->pdata[4], "is 4"));
    g_assert_cmpuint(info(s, 0).c.routes_rejected, ==, 6);
    g_assert_true(info(s, 0).linked);
    g_assert_false(info(s, 0).table_loaded);

    /* an invalid route at the source: held in host-in, no credit back */
    table[2] = FABRIC_PS1_ROUTE_INVALID;
    g_assert_cmpint(send_routes(s, 0, 0, table, 3), ==, PS1_IN_OK);
    g_assert_true(info(s, 0).table_loaded);
    g_assert_cmpuint(ps1net_route(s->net, 0, 2), ==, FABRIC_PS1_ROUTE_INVALID);
    queue_packet(s, 0, 2, 4);
    queue_packet(s, 0, 1, 4);
    sim_settle(s);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 0);
    g_assert_cmpuint(info(s, 0).host_in, ==, 1);
    g_assert_cmpuint(info(s, 0).c.unroutable, ==, 1);
    g_assert_cmpuint(info(s, 0).unroutable_now, ==, 1);
    g_assert_cmpuint(s->dev[0].ins_credit, ==, 0);
    g_autoptr(GString) status = g_string_new(NULL);
    ps1net_report(s->net, status, false);
    g_assert_nonnull(strstr(status->str, "node 0: linked   table=loaded "));
    g_assert_nonnull(strstr(status->str, "unroutable_now=1"));

    /* a good table lets it go, and the next one after it */
    g_assert_cmpint(send_routes(s, 0, 0, good, 3), ==, PS1_IN_OK);
    sim_settle(s);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 1);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 1);
    g_assert_cmpuint(info(s, 0).unroutable_now, ==, 0);

    /* an invalid route on the way: stuck in node 1's x-in */
    table[2] = FABRIC_PS1_ROUTE_INVALID;
    table[1] = 0;
    table[0] = 1;
    g_assert_cmpint(send_routes(s, 1, 1, table, 3), ==, PS1_IN_OK);
    queue_packet(s, 0, 2, 4);
    sim_settle(s);
    g_assert_cmpuint(info(s, 1).x_in, ==, 1);
    g_assert_cmpuint(info(s, 1).c.unroutable, ==, 1);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 1);
    /* a re-HELLO (board reset) brings back the default table */
    hello(s, 1);
    sim_settle(s);
    g_assert_false(info(s, 1).table_loaded);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 2);
    rx = &g_array_index(s->dev[2].rx, Rx, 1);
    g_assert_cmpuint(rx->src, ==, 0);
    g_assert_cmpuint(rx->hops, ==, 2);

    /* a table that sends a packet round and round is caught */
    table[0] = 1;
    table[1] = 1;   /* node 1 forwards its own packets */
    table[2] = 1;
    g_assert_cmpint(send_routes(s, 1, 1, table, 3), ==, PS1_IN_OK);
    queue_packet(s, 0, 1, 2);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 1);
    g_assert_cmpuint(info(s, 2).c.unroutable, ==, 1);
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 1);
    /* y on a ring is not a route either */
    table[1] = 2;
    g_assert_cmpint(send_routes(s, 1, 1, table, 3), ==, PS1_IN_OK);
    sim_settle(s);
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 1);
    table[1] = 0;
    g_assert_cmpint(send_routes(s, 1, 1, table, 3), ==, PS1_IN_OK);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 2);
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 0);
    g_assert_cmpuint(g_array_index(s->dev[1].rx, Rx, 1).hops, ==, 4);
    sim_free(s);

    /* packets on y stay on y: a table turning them to x is an error */
    s = sim_new(4, "torus:2x2");
    hello_all(s);
    memcpy(table, (const uint8_t[]){ 0, 1, 2, 2 }, 4);
    g_assert_cmpint(send_routes(s, 0, 0, table, 4), ==, PS1_IN_OK);
    queue_packet(s, 0, 3, 1);
    sim_settle(s);
    g_assert_cmpuint(info(s, 2).y_in, ==, 1);
    g_assert_cmpuint(info(s, 2).c.unroutable, ==, 1);
    g_assert_cmpuint(info(s, 2).unroutable_now, ==, 1);
    g_assert_cmpuint(s->dev[3].rx->len, ==, 0);
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 1);
    sim_free(s);

    /* a 1-wide torus has no x cable: x is no route there */
    s = sim_new(3, "torus:1x3");
    hello_all(s);
    g_assert_cmpint(send_routes(s, 0, 0, (const uint8_t[]){ 0, 1, 2 }, 3),
                    ==, PS1_IN_OK);
    queue_packet(s, 0, 1, 1);
    queue_packet(s, 0, 2, 1);
    sim_settle(s);
    g_assert_cmpuint(info(s, 0).c.unroutable, ==, 1);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 0);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 0);
    g_assert_cmpint(send_routes(s, 0, 0, (const uint8_t[]){ 0, 2, 2 }, 3),
                    ==, PS1_IN_OK);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 1);
    g_assert_cmpuint(s->dev[2].rx->len, ==, 1);
    sim_free(s);
}

/* ---- links and faults ---- */

static void test_link_faults(void)
{
    Sim *s = sim_new(4, "torus:2x2");
    Link *l01 = &s->link[0 * 4 + 1];
    Link *l13 = &s->link[1 * 4 + 3];
    uint32_t tags[3];
    const Rx *rx;

    hello_all(s);
    /* a down link holds packets until it is up and the model is kicked */
    l01->down = true;
    tags[0] = queue_packet(s, 0, 1, 8);
    tags[1] = queue_packet(s, 0, 1, 8);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 0);
    g_assert_cmpuint(l01->held, ==, 1);
    g_assert_cmpuint(info(s, 0).host_in, ==, 1);
    ps1net_kick(s->net, s->now_ns);
    sim_settle(s);
    g_assert_cmpuint(l01->held, ==, 1);     /* counted once per packet */
    l01->down = false;
    ps1net_kick(s->net, s->now_ns);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 2);
    g_assert_cmphex(g_array_index(s->dev[1].rx, Rx, 0).tag, ==, tags[0]);
    g_assert_cmphex(g_array_index(s->dev[1].rx, Rx, 1).tag, ==, tags[1]);

    /* a dropped packet is gone; the next one arrives */
    l01->drop_next = 1;
    queue_packet(s, 0, 1, 8);
    tags[2] = queue_packet(s, 0, 1, 8);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 3);
    g_assert_cmphex(g_array_index(s->dev[1].rx, Rx, 2).tag, ==, tags[2]);
    g_assert_cmpuint(info(s, 0).c.dropped, ==, 1);

    /* corruption on 1>3 is flagged and breaks the CRC; 0>3 goes x then y */
    l13->flip_bit = 40;
    queue_packet(s, 0, 3, 8);
    sim_settle(s);
    rx = &g_array_index(s->dev[3].rx, Rx, 0);
    g_assert_true(rx->corrupted);
    g_assert_false(rx->crc_ok);
    g_assert_cmpuint(rx->src, ==, 0);
    g_assert_cmpuint(rx->hops, ==, 2);
    /* corruption of the source bits is not hidden by the rewrite */
    l13->flip_bit = 16;
    queue_packet(s, 0, 3, 8);
    sim_settle(s);
    rx = &g_array_index(s->dev[3].rx, Rx, 1);
    g_assert_cmpuint(rx->src, ==, 0);
    g_assert_false(rx->crc_ok);
    l13->flip_bit = -1;

    /* a delayed link: in flight until due, and never overtaken */
    l01->delay_ns = 5000;
    tags[0] = queue_packet(s, 0, 1, 8);
    sim_settle(s);
    l01->delay_ns = 0;
    tags[1] = queue_packet(s, 0, 1, 8);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 3);
    g_assert_cmpuint(info(s, 1).x_in, ==, 2);
    g_assert_cmpuint(info(s, 1).in_flight, ==, 1);
    s->now_ns += 4999;
    ps1net_kick(s->net, s->now_ns);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 3);
    s->now_ns += 1;
    ps1net_kick(s->net, s->now_ns);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 5);
    g_assert_cmphex(g_array_index(s->dev[1].rx, Rx, 3).tag, ==, tags[0]);
    g_assert_cmphex(g_array_index(s->dev[1].rx, Rx, 4).tag, ==, tags[1]);
    sim_free(s);
}

/*
 * Lock-step: a delay or a down window's wait is virtual time in the stamp.
 * The packet moves on at once (nothing would wake the model later), the
 * packets behind it on the cable arrive no earlier, and the destination's
 * RX credit stays taken until its board reads it.
 */
static void test_lockstep_delay(void)
{
    Ps1Config c;
    Sim *s;
    Link *l01, *l12;
    const Rx *rx;
    uint64_t lat4, first;

    g_assert_true(ps1_config_init(&c, 3, "ring", NULL));
    c.lockstep = true;
    s = sim_new_cfg(&c);
    l01 = &s->link[0 * 3 + 1];
    l12 = &s->link[1 * 3 + 2];
    lat4 = ps1_latency_ns(&c, 1, 4);
    hello_all(s);
    s->dev[1].auto_read = false;

    /* send + hop + bytes + delay, and no wake-up needed */
    l01->delay_ns = 5000;
    queue_packet(s, 0, 1, 4);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 1);
    rx = &g_array_index(s->dev[1].rx, Rx, 0);
    g_assert_cmpuint(rx->deliver_ns, ==, rx->send_ns + lat4 + 5000);
    first = rx->deliver_ns;
    g_assert_cmpuint(info(s, 1).in_flight, ==, 0);
    /* on the cable, not in host-in: the insertion credit is not late */
    g_assert_cmpuint(s->dev[0].credit_ns, ==,
                     rx->send_ns + ps1_latency_ns(&c, 0, 4));
    g_assert_cmpuint(info(s, 1).credit, ==,
                     FABRIC_PS1_RX_FIFO - FABRIC_PS1_PKT_BYTES(4));

    /* the next packet on the cable is not delayed but waits behind it */
    l01->delay_ns = 0;
    queue_packet(s, 0, 1, 4);
    sim_settle(s);
    rx = &g_array_index(s->dev[1].rx, Rx, 1);
    g_assert_cmpuint(rx->send_ns, ==, T0 + 20);
    g_assert_cmpuint(rx->deliver_ns, ==, first);
    /* once the cable is clear, stamps are the model's again */
    s->vtime += 100000;
    queue_packet(s, 0, 1, 4);
    sim_settle(s);
    rx = &g_array_index(s->dev[1].rx, Rx, 2);
    g_assert_cmpuint(rx->deliver_ns, ==, rx->send_ns + lat4);
    g_assert_cmpuint(info(s, 1).credit, ==,
                     FABRIC_PS1_RX_FIFO - 3 * FABRIC_PS1_PKT_BYTES(4));
    while (host_read(s, 1)) {
        sim_settle(s);
    }

    /* two hops: the next cable is asked at the packet's delayed time */
    l01->delay_ns = 7000;
    queue_packet(s, 0, 2, 1);
    sim_settle(s);
    rx = &g_array_index(s->dev[2].rx, Rx, 0);
    g_assert_cmpuint(l12->last_time_ns, ==, rx->send_ns + 7000);
    g_assert_cmpuint(rx->deliver_ns, ==,
                     rx->send_ns + ps1_latency_ns(&c, 2, 1) + 7000);
    l01->delay_ns = 0;

    /* a down window with an end: crossed when it ends, counted as held */
    s->vtime += 100000;
    l01->down_until_ns = s->vtime + 30000;
    queue_packet(s, 0, 1, 4);
    sim_settle(s);
    g_assert_cmpuint(s->dev[1].rx->len, ==, 4);
    rx = &g_array_index(s->dev[1].rx, Rx, 3);
    g_assert_cmpuint(rx->deliver_ns, ==, l01->down_until_ns + lat4);
    g_assert_cmpuint(info(s, 0).c.held, ==, 1);
    /* it left host-in then: so comes the board's next insertion credit */
    g_assert_cmpuint(s->dev[0].credit_ns, ==,
                     l01->down_until_ns + ps1_latency_ns(&c, 0, 4));
    sim_free(s);
}

/* ---- barrier ---- */

static void test_barrier(void)
{
    Sim *s = sim_new(4, "ring");
    Ps1NodeInfo in;

    hello_all(s);
    /* line 0: nodes 0, 1, 2; line 1: nodes 0, 1, 3 */
    send_barrier(s, 0, FABRIC_PS1_BARRIER_MASK, 0x3);
    send_barrier(s, 1, FABRIC_PS1_BARRIER_MASK, 0x3);
    send_barrier(s, 2, FABRIC_PS1_BARRIER_MASK, 0x1);
    send_barrier(s, 3, FABRIC_PS1_BARRIER_MASK, 0x2);

    /* node 3 is not on line 0: its arrival is ignored and counted */
    send_barrier(s, 3, FABRIC_PS1_BARRIER_ARRIVE, 0x1);
    g_assert_cmpuint(info(s, 3).c.barrier_ignored, ==, 1);
    s->vtime = 100;
    send_barrier(s, 0, FABRIC_PS1_BARRIER_ARRIVE, 0x1);
    s->vtime = 300;
    send_barrier(s, 1, FABRIC_PS1_BARRIER_ARRIVE, 0x1);
    send_barrier(s, 1, FABRIC_PS1_BARRIER_ARRIVE, 0x1);     /* twice: once */
    sim_drain(s);
    for (int i = 0; i < 4; i++) {
        g_assert_cmpuint(s->dev[i].released->len, ==, 0);
    }
    in = info(s, 1);
    g_assert_cmphex(in.barrier_arrived, ==, 0x1);
    g_assert_cmpuint(ps1net_barrier_completions(s->net, 0), ==, 0);
    s->vtime = 200;
    send_barrier(s, 2, FABRIC_PS1_BARRIER_ARRIVE, 0x1);
    sim_drain(s);
    for (int i = 0; i < 3; i++) {
        g_assert_cmpuint(s->dev[i].released->len, ==, 1);
        g_assert_cmphex(g_array_index(s->dev[i].released, guint8, 0), ==, 1);
        g_assert_cmpuint(g_array_index(s->dev[i].release_ns, guint64, 0), ==,
                         300 + PS1_BARRIER_NS);
    }
    g_assert_cmpuint(s->dev[3].released->len, ==, 0);
    g_assert_cmpuint(ps1net_barrier_completions(s->net, 0), ==, 1);
    g_assert_cmphex(info(s, 0).barrier_arrived, ==, 0);

    /* line 1: node 1 leaves while 0 and 3 wait; they complete */
    send_barrier(s, 0, FABRIC_PS1_BARRIER_ARRIVE, 0x2);
    send_barrier(s, 3, FABRIC_PS1_BARRIER_ARRIVE, 0x2);
    sim_drain(s);
    g_assert_cmpuint(s->dev[3].released->len, ==, 0);
    s->dev[1].connected = false;
    ps1net_port_down(s->net, 1, s->now_ns);
    sim_drain(s);
    g_assert_cmpuint(s->dev[0].released->len, ==, 2);
    g_assert_cmphex(g_array_index(s->dev[0].released, guint8, 1), ==, 2);
    g_assert_cmpuint(s->dev[3].released->len, ==, 1);
    g_assert_cmpuint(s->dev[2].released->len, ==, 1);
    g_assert_cmpuint(ps1net_barrier_completions(s->net, 1), ==, 1);

    /* a new mask withdraws arrivals at lines it drops */
    send_barrier(s, 0, FABRIC_PS1_BARRIER_ARRIVE, 0x1);
    send_barrier(s, 0, FABRIC_PS1_BARRIER_MASK, 0x2);
    g_assert_cmphex(info(s, 0).barrier_arrived, ==, 0);
    /* line 0 is now node 2 alone (node 1 is gone) */
    send_barrier(s, 2, FABRIC_PS1_BARRIER_ARRIVE, 0x1);
    sim_drain(s);
    g_assert_cmpuint(s->dev[2].released->len, ==, 2);
    g_assert_cmpuint(s->dev[0].released->len, ==, 2);
    g_assert_cmpuint(ps1net_barrier_completions(s->net, 0), ==, 2);

    /* two lines at once */
    send_barrier(s, 0, FABRIC_PS1_BARRIER_MASK, 0xc);
    send_barrier(s, 3, FABRIC_PS1_BARRIER_MASK, 0xc);
    send_barrier(s, 0, FABRIC_PS1_BARRIER_ARRIVE, 0xc);
    send_barrier(s, 3, FABRIC_PS1_BARRIER_ARRIVE, 0x4);
    sim_drain(s);
    g_assert_cmpuint(s->dev[3].released->len, ==, 2);
    g_assert_cmphex(g_array_index(s->dev[3].released, guint8, 1), ==, 0x4);
    send_barrier(s, 3, FABRIC_PS1_BARRIER_ARRIVE, 0x8);
    sim_drain(s);
    g_assert_cmpuint(s->dev[3].released->len, ==, 3);
    g_assert_cmpuint(s->dev[0].released->len, ==, 4);
    sim_free(s);
}

/* ---- credits and resets ---- */

/* Send DATA as a device that does not wait for its insertion credit. */
static Ps1Input send_eager(Sim *s, unsigned node, const uint8_t *pl,
                           size_t len)
{
    Ps1Input r;

    if (s->dev[node].ins_credit) {
        s->dev[node].ins_credit--;
    }
    r = send_ps1(s, node, FABRIC_TYPE_DATA, pl, len);
    sim_drain(s);
    return r;
}

static void test_insertion_credit(void)
{
    Sim *s = sim_new(3, "ring");
    uint32_t words[FABRIC_PS1_MAX_WORDS] = { 0 };
    uint8_t pl[FABRIC_PS1_DATA_LEN(FABRIC_PS1_MAX_WORDS)];
    size_t len = data_encode(1, words, FABRIC_PS1_MAX_WORDS, pl);

    hello_all(s);
    s->dev[1].auto_read = false;
    /*
     * 1 and 2 fill host 1's FIFO, 3 and 4 node 1's x-in, 5 waits in host-in
     * and used the last credit: 6 and 7 are overruns, still accepted.
     */
    for (int i = 0; i < 7; i++) {
        g_assert_cmpint(send_eager(s, 0, pl, len), ==, PS1_IN_OK);
    }
    g_assert_cmpuint(info(s, 0).c.overrun, ==, 2);
    g_assert_cmpuint(info(s, 0).host_in, ==, 3);
    g_assert_cmpuint(s->dev[0].credit_frames, ==, 4);
    /* host-in drains one at a time: the credit comes once it is empty */
    host_read(s, 1);
    sim_drain(s);
    g_assert_cmpuint(info(s, 0).host_in, ==, 2);
    g_assert_cmpuint(s->dev[0].credit_frames, ==, 4);
    while (host_read(s, 1)) {
        sim_drain(s);
    }
    g_assert_cmpuint(s->dev[1].rx->len, ==, 7);
    g_assert_cmpuint(s->dev[0].credit_frames, ==, 5);
    /* the overrun has a bound: the rest is refused */
    s->link[2 * 3 + 0].down = true;
    for (int i = 0; i < 16; i++) {
        send_eager(s, 2, pl, len);
    }
    g_assert_cmpuint(info(s, 2).host_in, ==, PS1_HOST_IN_SLACK + 1);
    g_assert_cmpuint(info(s, 2).c.accepted, ==, PS1_HOST_IN_SLACK + 1);

    /* credit beyond the FIFO size is clamped */
    send_credit(s, 0, 5000);
    g_assert_cmpuint(info(s, 0).credit, ==, FABRIC_PS1_RX_FIFO);
    g_assert_cmpuint(info(s, 0).c.credit_excess, ==, 1);

    /* a disconnected node gets nothing; packets for it wait */
    s->dev[2].connected = false;
    ps1net_port_down(s->net, 2, 0);
    g_assert_false(info(s, 2).linked);
    g_assert_cmpuint(info(s, 2).credit, ==, 0);
    queue_packet(s, 1, 2, 3);
    sim_settle(s);
    g_assert_cmpuint(info(s, 2).x_in, ==, 1);
    hello(s, 2);
    sim_settle(s);
    g_assert_cmpuint(info(s, 2).x_in, ==, 0);
    sim_free(s);
}

/* ---- deadlock freedom ---- */

/*
 * Every node sends `per_pair` packets of random sizes to every node while
 * hosts read one packet at a time in random order.  Whenever nothing can
 * happen any more, every packet must have been delivered, in order.
 */
static void check_no_deadlock(unsigned nodes, const char *topology,
                              unsigned per_pair, guint32 seed, bool gates)
{
    Sim *s = sim_new(nodes, topology);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    g_autofree uint32_t *next = g_new0(uint32_t, nodes * nodes);
    unsigned total = nodes * nodes * per_pair, got = 0;

    hello_all(s);
    for (unsigned k = 0; k < per_pair; k++) {
        for (unsigned src = 0; src < nodes; src++) {
            for (unsigned dst = 0; dst < nodes; dst++) {
                unsigned count = g_rand_boolean(rand)
                    ? g_rand_int_range(rand, 1, 4)
                    : g_rand_int_range(rand, 1, FABRIC_PS1_MAX_WORDS + 1);

                queue_packet(s, src, dst, count);
            }
        }
    }
    for (unsigned i = 0; i < nodes; i++) {
        s->dev[i].auto_read = false;
    }
    for (;;) {
        unsigned start = g_rand_int_range(rand, 0, nodes);
        bool read = false;

        /*
         * Gates: links go down and up at random, so traffic piles up in
         * some channels and is let go in bursts.
         */
        if (gates && g_rand_int_range(rand, 0, 4) == 0) {
            unsigned from = g_rand_int_range(rand, 0, nodes);
            unsigned to = g_rand_boolean(rand) || !s->cfg.torus
                          ? ps1_next_x(&s->cfg, from)
                          : ps1_next_y(&s->cfg, from);

            s->link[from * nodes + to].down = g_rand_boolean(rand);
            ps1net_kick(s->net, s->now_ns);
        }
        sim_settle(s);
        /* one random host with unread packets reads one */
        for (unsigned j = 0; j < nodes && !read; j++) {
            read = host_read(s, (start + j) % nodes);
        }
        if (!read && gates) {
            /* open every gate; stop when even that changes nothing */
            for (unsigned i = 0; i < nodes * nodes; i++) {
                s->link[i].down = false;
            }
            ps1net_kick(s->net, s->now_ns);
            sim_settle(s);
            for (unsigned j = 0; j < nodes && !read; j++) {
                read = host_read(s, j);
            }
        }
        if (!read) {
            break;
        }
    }
    for (unsigned dst = 0; dst < nodes; dst++) {
        const Dev *d = &s->dev[dst];

        for (unsigned i = 0; i < d->rx->len; i++) {
            const Rx *rx = &g_array_index(d->rx, Rx, i);

            /* per (source, destination): sequence numbers only grow */
            g_assert_cmpuint(rx->tag & 0xffff, >=,
                             next[rx->src * nodes + dst]);
            next[rx->src * nodes + dst] = (rx->tag & 0xffff) + 1;
            g_assert_true(rx->crc_ok);
            got++;
        }
    }
    if (got != total) {
        g_test_message("%s seed %u: %u of %u delivered; %u packets stuck in "
                       "the network", topology, seed, got, total,
                       ps1net_in_network(s->net));
    }
    g_assert_cmpuint(got, ==, total);
    g_assert_cmpuint(ps1net_in_network(s->net), ==, 0);
    for (unsigned i = 0; i < nodes; i++) {
        g_assert_cmpuint(info(s, i).c.dropped, ==, 0);
        g_assert_true(g_queue_is_empty(&s->dev[i].tx));
    }
    sim_free(s);
}

static void test_deadlock_freedom(void)
{
    for (guint32 seed = 1; seed <= 4; seed++) {
        check_no_deadlock(9, "torus:3x3", 6, seed, false);
        check_no_deadlock(5, "ring", 8, seed, false);
        check_no_deadlock(8, "torus:4x2", 4, seed, false);
    }
    check_no_deadlock(16, "torus:4x4", 3, 99, false);
    /* with links as gates, channels fill up: the rules must still hold */
    for (guint32 seed = 1; seed <= 20; seed++) {
        check_no_deadlock(9, "torus:3x3", 4, seed, true);
        check_no_deadlock(4, "ring", 8, seed, true);
        check_no_deadlock(5, "torus:1x5", 4, seed, true);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ps1net/topology", test_topology);
    g_test_add_func("/ps1net/default-tables", test_default_tables);
    g_test_add_func("/ps1net/payload-helpers", test_payload_helpers);
    g_test_add_func("/ps1net/hello", test_hello);
    g_test_add_func("/ps1net/malformed", test_malformed);
    g_test_add_func("/ps1net/all-to-all", test_all_to_all);
    g_test_add_func("/ps1net/timing", test_timing);
    g_test_add_func("/ps1net/flow-control", test_flow_control);
    g_test_add_func("/ps1net/head-of-line", test_head_of_line);
    g_test_add_func("/ps1net/forwarding-rules", test_forwarding_rules);
    g_test_add_func("/ps1net/routes", test_routes);
    g_test_add_func("/ps1net/link-faults", test_link_faults);
    g_test_add_func("/ps1net/lockstep-delay", test_lockstep_delay);
    g_test_add_func("/ps1net/barrier", test_barrier);
    g_test_add_func("/ps1net/insertion-credit", test_insertion_credit);
    g_test_add_func("/ps1net/deadlock-freedom", test_deadlock_freedom);
    return g_test_run();
}
