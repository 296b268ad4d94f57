/*
 * Myrinet topology: the default switch, the topology file, shortest source
 * routes and the walk of a route through the switches.
 *
 * A topology file is a GKeyFile with one group per switch:
 *
 *   [switch0]
 *   ports=16
 *   port0=node0
 *   port15=switch1:15
 *
 * Switches are numbered from 0 without gaps; a port is `nodeN`,
 * `switchK:P` or empty (no cable).  Both ends of a switch cable name each
 * other, every node has exactly one cable, and every switch is reachable.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "vcluster/fabric/myrinet-topo.h"

G_DEFINE_QUARK(fabricd_myrinet_topo_error, myri_topo_error)
#define MYRI_TOPO_ERROR (myri_topo_error_quark())

/* Every error of this file: one code, a message saying what and where. */
#define fail(err, ...) \
    g_set_error(err, MYRI_TOPO_ERROR, 0, __VA_ARGS__)

static MyriTopo *topo_alloc(unsigned nodes, unsigned switches)
{
    MyriTopo *t = g_new0(MyriTopo, 1);

    t->nodes = nodes;
    t->switches = switches;
    t->sw = g_new0(MyriSwitch, switches);
    t->node = g_new0(MyriAttach, nodes);
    return t;
}

void myri_topo_free(MyriTopo *t)
{
    if (!t) {
        return;
    }
    for (unsigned s = 0; s < t->switches; s++) {
        g_free(t->sw[s].peer);
    }
    g_free(t->sw);
    g_free(t->node);
    g_free(t);
}

static void switch_init(MyriSwitch *sw, unsigned ports)
{
    sw->ports = ports;
    sw->peer = g_new0(MyriPeer, ports);
}

static MyriTopo *topo_default(unsigned nodes, GError **err)
{
    MyriTopo *t;

    if (nodes > FABRIC_MYRI_SWITCH_PORTS) {
        fail(err, "%u nodes need more than the %d ports of the default "
             "switch: describe several switches in a topology file "
             "(docs/fabricd.md, \"The myrinet kind\")", nodes,
             FABRIC_MYRI_SWITCH_PORTS);
        return NULL;
    }
    t = topo_alloc(nodes, 1);
    t->is_default = true;
    switch_init(&t->sw[0], FABRIC_MYRI_SWITCH_PORTS);
    for (unsigned i = 0; i < nodes; i++) {
        t->sw[0].peer[i] = (MyriPeer) { .kind = MYRI_PEER_NODE, .id = i };
        t->node[i] = (MyriAttach) { .sw = 0, .port = i };
    }
    t->longest_route = 1;
    return t;
}

/* ---- routes ---- */

/*
 * Breadth-first search over the switches from `start`, ports in
 * ascending order: a switch's parent is the first one to reach it, so the
 * path to any switch is the shortest with the smallest ports first.
 */
typedef struct Bfs {
    int *dist;              /* switches from the start, -1: unreachable */
    unsigned *parent;
    unsigned *parent_out;   /* the port the parent sends it on */
    unsigned *in_port;      /* the port it receives on */
} Bfs;

static void bfs_run(const MyriTopo *t, unsigned start, Bfs *b)
{
    unsigned *queue = g_new(unsigned, t->switches);
    unsigned head = 0, tail = 0;

    b->dist = g_new(int, t->switches);
    b->parent = g_new0(unsigned, t->switches);
    b->parent_out = g_new0(unsigned, t->switches);
    b->in_port = g_new0(unsigned, t->switches);
    for (unsigned s = 0; s < t->switches; s++) {
        b->dist[s] = -1;
    }
    b->dist[start] = 0;
    queue[tail++] = start;
    while (head < tail) {
        unsigned s = queue[head++];
        const MyriSwitch *sw = &t->sw[s];

        for (unsigned p = 0; p < sw->ports; p++) {
            const MyriPeer *peer = &sw->peer[p];

            if (peer->kind != MYRI_PEER_SWITCH || b->dist[peer->id] >= 0) {
                continue;
            }
            b->dist[peer->id] = b->dist[s] + 1;
            b->parent[peer->id] = s;
            b->parent_out[peer->id] = p;
            b->in_port[peer->id] = peer->port;
            queue[tail++] = peer->id;
        }
    }
    g_free(queue);
}

static void bfs_free(Bfs *b)
{
    g_free(b->dist);
    g_free(b->parent);
    g_free(b->parent_out);
    g_free(b->in_port);
}

static uint8_t route_byte(unsigned in_port, unsigned out_port)
{
    return FABRIC_MYRI_ROUTE_BIT | (((int)out_port - (int)in_port) & 0x3f);
}

/* The route from `src` to `dst` along the BFS tree rooted at src's switch. */
static void route_from_bfs(const MyriTopo *t, const Bfs *b, unsigned src,
                           unsigned dst, MyriRoute *r)
{
    unsigned sw = t->node[dst].sw, out = t->node[dst].port;
    unsigned n = b->dist[sw] + 1;

    g_assert(b->dist[sw] >= 0 && n <= FABRIC_MYRI_MAX_ROUTE);
    r->len = n;
    /* from the destination back to the source, one switch at a time */
    while (n--) {
        unsigned in = n ? b->in_port[sw] : t->node[src].port;

        r->b[n] = route_byte(in, out);
        out = b->parent_out[sw];
        sw = b->parent[sw];
    }
}

void myri_topo_routes(const MyriTopo *t, unsigned src, MyriRoute *routes)
{
    Bfs b;

    bfs_run(t, t->node[src].sw, &b);
    for (unsigned d = 0; d < t->nodes; d++) {
        route_from_bfs(t, &b, src, d, &routes[d]);
    }
    bfs_free(&b);
}

void myri_route_append_hex(const MyriRoute *r, GString *out)
{
    for (unsigned i = 0; i < r->len; i++) {
        g_string_append_printf(out, "%02x", r->b[i]);
    }
}

char *myri_topo_route_file(const MyriTopo *t, unsigned src)
{
    MyriRoute *routes = g_new(MyriRoute, t->nodes);
    GString *out = g_string_new(NULL);

    myri_topo_routes(t, src, routes);
    for (unsigned d = 0; d < t->nodes; d++) {
        g_string_append_printf(out, "%u ", d);
        myri_route_append_hex(&routes[d], out);
        g_string_append_c(out, '\n');
    }
    g_free(routes);
    return g_string_free(out, FALSE);
}

void myri_topo_describe(const MyriTopo *t, GString *out)
{
    if (t->is_default) {
        g_string_append_printf(out, "one %u-port switch, node i on port i",
                               t->sw[0].ports);
    } else {
        g_string_append_printf(out, "%u switch%s, %u switch cable%s, "
                               "longest route %u switch%s",
                               t->switches, t->switches == 1 ? "" : "es",
                               t->cables, t->cables == 1 ? "" : "s",
                               t->longest_route,
                               t->longest_route == 1 ? "" : "es");
    }
    g_string_append(out, "; links are end to end, node to node");
}

/* ---- the topology file ---- */

/* A plain decimal number: digits only, no sign, blank or leading zero. */
static bool parse_index(const char *text, unsigned *out)
{
    guint64 v;

    if (!g_ascii_isdigit(text[0]) || (text[0] == '0' && text[1]) ||
        !g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT32, &v, NULL)) {
        return false;
    }
    *out = v;
    return true;
}

/* "switchK": K, else -1. */
static int switch_group_index(const char *group)
{
    unsigned k;

    if (!g_str_has_prefix(group, "switch") || !parse_index(group + 6, &k) ||
        k > G_MAXINT) {
        return -1;
    }
    return k;
}

/* Find every [switchK]; they must run from 0 without gaps. */
static bool parse_groups(GKeyFile *kf, const char *src, unsigned *count,
                         GError **err)
{
    gsize n;
    g_auto(GStrv) groups = g_key_file_get_groups(kf, &n);
    int highest = -1;

    if (n == 0) {
        fail(err, "%s: no [switch0] group: describe at least one switch",
             src);
        return false;
    }
    for (gsize i = 0; i < n; i++) {
        int k = switch_group_index(groups[i]);

        if (k < 0) {
            fail(err, "%s: group [%s] is not a switch: use [switch0], "
                 "[switch1], ...", src, groups[i]);
            return false;
        }
        highest = MAX(highest, k);
    }
    if (highest >= MYRI_TOPO_MAX_SWITCHES) {
        fail(err, "%s: [switch%d]: at most %d switches (switch0 to "
             "switch%d)", src, highest, MYRI_TOPO_MAX_SWITCHES,
             MYRI_TOPO_MAX_SWITCHES - 1);
        return false;
    }
    if ((gsize)highest + 1 != n) {
        for (int k = 0; k < highest; k++) {
            g_autofree char *name = g_strdup_printf("switch%d", k);

            if (!g_key_file_has_group(kf, name)) {
                fail(err, "%s: [%s] is missing: switches are numbered from "
                     "0 without gaps, and the file has [switch%d]", src,
                     name, highest);
                return false;
            }
        }
    }
    *count = n;
    return true;
}

static bool parse_ports(GKeyFile *kf, const char *src, const char *group,
                        MyriSwitch *sw, GError **err)
{
    g_autofree char *text = g_key_file_get_value(kf, group, "ports", NULL);
    unsigned ports;

    if (!text) {
        fail(err, "%s: [%s] has no ports= (the number of ports, 1..%d)", src,
             group, MYRI_TOPO_MAX_PORTS);
        return false;
    }
    g_strstrip(text);
    if (!parse_index(text, &ports) || ports == 0 ||
        ports > MYRI_TOPO_MAX_PORTS) {
        fail(err, "%s: [%s] ports=%s: use a number of ports from 1 to %d",
             src, group, text, MYRI_TOPO_MAX_PORTS);
        return false;
    }
    switch_init(sw, ports);
    return true;
}

/* One "portP=VALUE": what the cable leads to, not yet cross-checked. */
static bool parse_peer(const MyriTopo *t, const char *src,
                       const char *group, const char *key, const char *value,
                       MyriPeer *peer, GError **err)
{
    const char *colon = strchr(value, ':');
    unsigned k, p;

    if (!*value) {
        peer->kind = MYRI_PEER_NONE;
        return true;
    }
    if (g_str_has_prefix(value, "node") && parse_index(value + 4, &k)) {
        if (k >= t->nodes) {
            fail(err, "%s: [%s] %s=%s, but the fabric has nodes 0..%u", src,
                 group, key, value, t->nodes - 1);
            return false;
        }
        *peer = (MyriPeer) { .kind = MYRI_PEER_NODE, .id = k };
        return true;
    }
    if (g_str_has_prefix(value, "switch") && colon) {
        g_autofree char *name = g_strndup(value, colon - value);

        if (parse_index(name + 6, &k) && parse_index(colon + 1, &p)) {
            if (k >= t->switches) {
                fail(err, "%s: [%s] %s=%s, but there is no [%s]", src, group,
                     key, value, name);
                return false;
            }
            if (p >= t->sw[k].ports) {
                fail(err, "%s: [%s] %s=%s, but %s has ports 0..%u", src,
                     group, key, value, name, t->sw[k].ports - 1);
                return false;
            }
            *peer = (MyriPeer) { .kind = MYRI_PEER_SWITCH, .id = k,
                                 .port = p };
            return true;
        }
    }
    fail(err, "%s: [%s] %s=%s: use nodeN, switchK:P, or nothing for a port "
         "without a cable", src, group, key, value);
    return false;
}

static bool parse_switch(GKeyFile *kf, MyriTopo *t, const char *src,
                         unsigned s, GError **err)
{
    g_autofree char *group = g_strdup_printf("switch%u", s);
    MyriSwitch *sw = &t->sw[s];
    g_auto(GStrv) keys = g_key_file_get_keys(kf, group, NULL, NULL);

    for (char **key = keys; *key; key++) {
        g_autofree char *value = NULL;
        unsigned p;

        if (strcmp(*key, "ports") == 0) {
            continue;
        }
        if (!g_str_has_prefix(*key, "port") || !parse_index(*key + 4, &p)) {
            fail(err, "%s: [%s] unknown key '%s': the keys are ports and "
                 "port0..port%u", src, group, *key, sw->ports - 1);
            return false;
        }
        if (p >= sw->ports) {
            fail(err, "%s: [%s] %s, but the switch has ports 0..%u (ports=%u)",
                 src, group, *key, sw->ports - 1, sw->ports);
            return false;
        }
        value = g_strstrip(g_key_file_get_value(kf, group, *key, NULL));
        if (!parse_peer(t, src, group, *key, value, &sw->peer[p], err)) {
            return false;
        }
    }
    return true;
}

static const char *peer_text(const MyriPeer *p, char *buf, size_t len)
{
    switch (p->kind) {
    case MYRI_PEER_NONE:
        return "not connected";
    case MYRI_PEER_NODE:
        g_snprintf(buf, len, "node%u", p->id);
        return buf;
    case MYRI_PEER_SWITCH:
        g_snprintf(buf, len, "switch%u:%u", p->id, p->port);
        return buf;
    }
    return "?";
}

/* Cables have two ends that name each other; nodes have one cable each. */
static bool check_cables(MyriTopo *t, const char *src, GError **err)
{
    bool *seen = g_new0(bool, t->nodes);
    bool ok = false;
    char a[32], b[32];

    for (unsigned s = 0; s < t->switches; s++) {
        for (unsigned p = 0; p < t->sw[s].ports; p++) {
            const MyriPeer *peer = &t->sw[s].peer[p];
            const MyriPeer *back;

            if (peer->kind == MYRI_PEER_NODE) {
                const MyriAttach *at = &t->node[peer->id];

                if (seen[peer->id]) {
                    fail(err, "%s: node%u is on [switch%u] port%u and on "
                         "[switch%u] port%u: a node has one cable", src,
                         peer->id, at->sw, at->port, s, p);
                    goto out;
                }
                seen[peer->id] = true;
                t->node[peer->id] = (MyriAttach) { .sw = s, .port = p };
                continue;
            }
            if (peer->kind != MYRI_PEER_SWITCH) {
                continue;
            }
            if (peer->id == s && peer->port == p) {
                fail(err, "%s: [switch%u] port%u=%s is a cable from a port "
                     "to itself", src, s, p, peer_text(peer, a, sizeof(a)));
                goto out;
            }
            back = &t->sw[peer->id].peer[peer->port];
            if (back->kind != MYRI_PEER_SWITCH || back->id != s ||
                back->port != p) {
                fail(err, "%s: [switch%u] port%u=%s, but [switch%u] port%u "
                     "is %s: both ends of a cable must name each other", src,
                     s, p, peer_text(peer, a, sizeof(a)), peer->id,
                     peer->port, peer_text(back, b, sizeof(b)));
                goto out;
            }
            /* each cable is seen from both ends */
            if (s < peer->id || (s == peer->id && p < peer->port)) {
                t->cables++;
            }
        }
    }
    for (unsigned i = 0; i < t->nodes; i++) {
        if (!seen[i]) {
            fail(err, "%s: node%u is on no switch port (every node 0..%u "
                 "needs one cable)", src, i, t->nodes - 1);
            goto out;
        }
    }
    ok = true;
out:
    g_free(seen);
    return ok;
}

/* One network, and every node-to-node route within FABRIC_MYRI_MAX_ROUTE. */
static bool check_reach(MyriTopo *t, const char *src, GError **err)
{
    Bfs b;

    bfs_run(t, 0, &b);
    for (unsigned s = 0; s < t->switches; s++) {
        if (b.dist[s] < 0) {
            fail(err, "%s: [switch%u] cannot be reached from [switch0]: the "
                 "switches must form one network", src, s);
            bfs_free(&b);
            return false;
        }
    }
    bfs_free(&b);
    for (unsigned i = 0; i < t->nodes; i++) {
        bfs_run(t, t->node[i].sw, &b);
        for (unsigned d = 0; d < t->nodes; d++) {
            unsigned len = b.dist[t->node[d].sw] + 1;

            if (len > FABRIC_MYRI_MAX_ROUTE) {
                fail(err, "%s: the route from node%u to node%u crosses %u "
                     "switches; a route has at most %d", src, i, d, len,
                     FABRIC_MYRI_MAX_ROUTE);
                bfs_free(&b);
                return false;
            }
            t->longest_route = MAX(t->longest_route, len);
        }
        bfs_free(&b);
    }
    return true;
}

static MyriTopo *topo_from_keyfile(GKeyFile *kf, const char *src,
                                   unsigned nodes, GError **err)
{
    g_autoptr(MyriTopo) t = NULL;
    unsigned switches;

    if (!parse_groups(kf, src, &switches, err)) {
        return NULL;
    }
    t = topo_alloc(nodes, switches);
    /* every switch's size first: port values refer to other switches */
    for (unsigned s = 0; s < switches; s++) {
        g_autofree char *group = g_strdup_printf("switch%u", s);

        if (!parse_ports(kf, src, group, &t->sw[s], err)) {
            return NULL;
        }
    }
    for (unsigned s = 0; s < switches; s++) {
        if (!parse_switch(kf, t, src, s, err)) {
            return NULL;
        }
    }
    if (!check_cables(t, src, err) || !check_reach(t, src, err)) {
        return NULL;
    }
    return g_steal_pointer(&t);
}

MyriTopo *myri_topo_from_data(const char *text, const char *source,
                              unsigned nodes, GError **err)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GError) local = NULL;

    if (!g_key_file_load_from_data(kf, text, -1, G_KEY_FILE_NONE, &local)) {
        fail(err, "%s: %s", source, local->message);
        return NULL;
    }
    return topo_from_keyfile(kf, source, nodes, err);
}

MyriTopo *myri_topo_new(const char *path, unsigned nodes, GError **err)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;

    if (!path) {
        return topo_default(nodes, err);
    }
    if (!g_file_get_contents(path, &text, NULL, &local)) {
        fail(err, "cannot read the topology file: %s", local->message);
        return NULL;
    }
    return myri_topo_from_data(text, path, nodes, err);
}

/* ---- walking a route ---- */

void myri_topo_walk(const MyriTopo *t, unsigned src, const uint8_t *bytes,
                    size_t len, MyriWalk *w)
{
    unsigned sw = t->node[src].sw, in = t->node[src].port;
    size_t pos = 0;

    memset(w, 0, sizeof(*w));
    w->src = src;
    for (;;) {
        const MyriPeer *peer;
        int out;

        w->sw = sw;
        w->in_port = in;
        if (pos == len || !(bytes[pos] & FABRIC_MYRI_ROUTE_BIT)) {
            w->result = pos ? MYRI_WALK_TOO_SHORT : MYRI_WALK_NOT_ROUTE;
            break;
        }
        if (w->hops == FABRIC_MYRI_MAX_ROUTE) {
            w->result = MYRI_WALK_TOO_MANY_HOPS;
            break;
        }
        w->byte = bytes[pos++];
        out = fabric_myri_out_port(w->byte, in, t->sw[sw].ports);
        if (out < 0) {
            w->result = MYRI_WALK_BAD_PORT;
            break;
        }
        w->out_port = out;
        peer = &t->sw[sw].peer[out];
        if (peer->kind == MYRI_PEER_NONE) {
            w->result = MYRI_WALK_DEAD_PORT;
            break;
        }
        w->path[w->hops++] = sw;
        if (peer->kind == MYRI_PEER_NODE) {
            w->dst = peer->id;
            /* the packet starts at the first byte without the route bit */
            while (pos + w->left < len &&
                   (bytes[pos + w->left] & FABRIC_MYRI_ROUTE_BIT)) {
                w->left++;
            }
            w->result = w->left ? MYRI_WALK_TOO_LONG : MYRI_WALK_DELIVERED;
            break;
        }
        sw = peer->id;
        in = peer->port;
    }
    w->route_len = pos;
}

static const char *const walk_result_names[MYRI_WALK_RESULTS] = {
    [MYRI_WALK_DELIVERED] = "delivered",
    [MYRI_WALK_NOT_ROUTE] = "not_route",
    [MYRI_WALK_TOO_SHORT] = "too_short",
    [MYRI_WALK_TOO_LONG] = "too_long",
    [MYRI_WALK_BAD_PORT] = "bad_port",
    [MYRI_WALK_DEAD_PORT] = "dead_port",
    [MYRI_WALK_TOO_MANY_HOPS] = "too_many_hops",
};

const char *myri_walk_result_name(MyriWalkResult r)
{
    return r < MYRI_WALK_RESULTS ? walk_result_names[r] : "?";
}

void myri_walk_describe(const MyriTopo *t, const MyriWalk *w, GString *out)
{
    g_string_append_printf(out, "%s: ", myri_walk_result_name(w->result));
    switch (w->result) {
    case MYRI_WALK_DELIVERED:
        g_string_append_printf(out, "node%u to node%u across %u switch%s",
                               w->src, w->dst, w->hops,
                               w->hops == 1 ? "" : "es");
        break;
    case MYRI_WALK_NOT_ROUTE:
        g_string_append_printf(out, "the packet from node%u has no route "
                               "(its first byte has bit 7 clear); it stops "
                               "at switch%u", w->src, w->sw);
        break;
    case MYRI_WALK_TOO_SHORT:
        g_string_append_printf(out, "the route from node%u ends at switch%u "
                               "(in on port %u) after %u switch%s", w->src,
                               w->sw, w->in_port, w->hops,
                               w->hops == 1 ? "" : "es");
        break;
    case MYRI_WALK_TOO_LONG:
        g_string_append_printf(out, "the route from node%u reaches node%u "
                               "with %zu route byte%s left", w->src, w->dst,
                               w->left, w->left == 1 ? "" : "s");
        break;
    case MYRI_WALK_BAD_PORT:
        g_string_append_printf(out, "route byte 0x%02x from node%u, in on "
                               "port %u of switch%u, selects no port (the "
                               "switch has ports 0..%u)", w->byte, w->src,
                               w->in_port, w->sw, t->sw[w->sw].ports - 1);
        break;
    case MYRI_WALK_DEAD_PORT:
        g_string_append_printf(out, "route byte 0x%02x from node%u, in on "
                               "port %u of switch%u, selects port %u, which "
                               "has no cable", w->byte, w->src, w->in_port,
                               w->sw, w->out_port);
        break;
    case MYRI_WALK_TOO_MANY_HOPS:
        g_string_append_printf(out, "the packet from node%u reaches switch%u "
                               "after %d switches, the most a route may "
                               "cross (a routing loop?)", w->src, w->sw,
                               FABRIC_MYRI_MAX_ROUTE);
        break;
    case MYRI_WALK_RESULTS:
        break;
    }
}
