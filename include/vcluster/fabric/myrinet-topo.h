/*
 * Myrinet topology: crossbar switches, the cables between their ports and
 * the nodes, source routes between nodes and the walk of a route through
 * the switches.  Pure (glib only), so that fabricd and vcluster both link
 * it: fabricd walks the routes the cards send, vcluster writes the route
 * files the guests load.  docs/fabricd.md "The myrinet kind" describes the
 * topology file and the route file.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_FABRIC_MYRINET_TOPO_H
#define VCLUSTER_FABRIC_MYRINET_TOPO_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/myrinet.h"

/* Relative route bytes reach -32..+31 ports: 32 ports are always reachable. */
#define MYRI_TOPO_MAX_PORTS     32
/* HELLO_ACK names the switch in one byte. */
#define MYRI_TOPO_MAX_SWITCHES  256

typedef enum MyriPeerKind {
    MYRI_PEER_NONE,         /* no cable in this port */
    MYRI_PEER_NODE,
    MYRI_PEER_SWITCH,
} MyriPeerKind;

/* Where the cable in one switch port leads. */
typedef struct MyriPeer {
    MyriPeerKind kind;
    unsigned id;            /* node id, or switch index */
    unsigned port;          /* switch: the port at the far end */
} MyriPeer;

typedef struct MyriSwitch {
    unsigned ports;
    MyriPeer *peer;         /* [ports] */
} MyriSwitch;

/* The switch port a node's cable plugs into. */
typedef struct MyriAttach {
    unsigned sw, port;
} MyriAttach;

typedef struct MyriTopo {
    unsigned nodes;
    unsigned switches;
    MyriSwitch *sw;         /* [switches] */
    MyriAttach *node;       /* [nodes] */
    unsigned cables;        /* between switches */
    unsigned longest_route; /* route bytes of the longest node-to-node route */
    bool is_default;        /* no file: one switch, node i on port i */
} MyriTopo;

typedef struct MyriRoute {
    unsigned len;
    uint8_t b[FABRIC_MYRI_MAX_ROUTE];
} MyriRoute;

/*
 * The topology in the GKeyFile `path`, or with `path` NULL the default
 * switch of FABRIC_MYRI_SWITCH_PORTS ports with node i on port i.  Every
 * error names what is wrong and where.
 */
MyriTopo *myri_topo_new(const char *path, unsigned nodes, GError **err);
/* The same from text; `source` names it in error messages. */
MyriTopo *myri_topo_from_data(const char *text, const char *source,
                              unsigned nodes, GError **err);
void myri_topo_free(MyriTopo *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MyriTopo, myri_topo_free)

/*
 * Routes from `src` to every node (routes[nodes]): the fewest switches;
 * among equals, the smallest output ports first, switch by switch from
 * the source.  The route to `src` itself loops back (0x80 on one switch).
 */
void myri_topo_routes(const MyriTopo *t, unsigned src, MyriRoute *routes);
/* Route bytes as lowercase hex, two digits a byte ("8183"). */
void myri_route_append_hex(const MyriRoute *r, GString *out);
/* The route file for `src`: "NODE HEX\n" for every node, in node order. */
char *myri_topo_route_file(const MyriTopo *t, unsigned src);

/* "one 16-port switch, node i on port i" or a summary of the file. */
void myri_topo_describe(const MyriTopo *t, GString *out);

typedef enum MyriWalkResult {
    MYRI_WALK_DELIVERED,
    MYRI_WALK_NOT_ROUTE,        /* the frame starts without a route byte */
    MYRI_WALK_TOO_SHORT,        /* the route ends inside a switch */
    MYRI_WALK_TOO_LONG,         /* a node is reached with route bytes left */
    MYRI_WALK_BAD_PORT,         /* a byte that selects no port */
    MYRI_WALK_DEAD_PORT,        /* a port without a cable */
    MYRI_WALK_TOO_MANY_HOPS,    /* more than FABRIC_MYRI_MAX_ROUTE switches */
    MYRI_WALK_RESULTS,
} MyriWalkResult;

/* Where a route led. */
typedef struct MyriWalk {
    MyriWalkResult result;
    unsigned src;
    unsigned dst;               /* DELIVERED and TOO_LONG: the node reached */
    unsigned hops;              /* switches the packet left through a cable */
    unsigned path[FABRIC_MYRI_MAX_ROUTE];   /* those switches, in order */
    unsigned sw, in_port;       /* the last switch and its input port */
    uint8_t byte;               /* BAD_PORT, DEAD_PORT: the route byte */
    unsigned out_port;          /* DEAD_PORT: the port it selected */
    size_t route_len;           /* route bytes consumed */
    size_t left;                /* TOO_LONG: route bytes left over */
} MyriWalk;

/*
 * Follow the route at the start of `bytes` (a DATA payload without its
 * CRC) from node `src`, each switch consuming one byte.
 */
void myri_topo_walk(const MyriTopo *t, unsigned src, const uint8_t *bytes,
                    size_t len, MyriWalk *w);
/* Counter name of a result: "delivered", "not_route", "too_short"... */
const char *myri_walk_result_name(MyriWalkResult r);
/* One line saying where and why a walk failed, for the log. */
void myri_walk_describe(const MyriTopo *t, const MyriWalk *w, GString *out);

#endif
