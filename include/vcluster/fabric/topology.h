/*
 * The fabric kinds and which topologies each accepts, checked without
 * starting anything: fabricd checks its options with it (fabric_new), and
 * the launcher checks `vcluster up`'s before it starts a fabric or a VM, so
 * both accept and refuse the same things with the same words.  Part of the
 * fabric library (host-lib/fabric/), which holds no fabric model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_FABRIC_TOPOLOGY_H
#define VCLUSTER_FABRIC_TOPOLOGY_H

#include <glib.h>
#include <stdbool.h>

#define FABRIC_TOPOLOGY_ERROR (fabric_topology_error_quark())
GQuark fabric_topology_error_quark(void);

/* What fabric_topology_check() refused (its error's code). */
typedef enum FabricTopologyError {
    FABRIC_TOPOLOGY_ERROR_KIND,     /* no such fabric kind */
    FABRIC_TOPOLOGY_ERROR_NODES,    /* nodes out of 1..FABRIC_MAX_NODES */
    FABRIC_TOPOLOGY_ERROR_TOPOLOGY, /* the kind refuses the topology */
} FabricTopologyError;

/* The kind called `name` as its id in frame headers (FABRIC_KIND_*), or 0. */
unsigned fabric_kind_lookup(const char *name);
/* The name of kind `id` ("ps1"), or NULL for no such kind. */
const char *fabric_kind_name(unsigned id);
/* "eth, ps1, myrinet, telegraphos": every implemented kind, for messages. */
const char *fabric_kind_names(void);

/* A ParaStation torus side: node ids are one byte per dimension. */
#define FABRIC_PS1_MAX_DIM      255

/* The ps1 kind's shape: a ring is a torus of one row that wraps once. */
typedef struct FabricPs1Shape {
    bool torus;             /* "torus:WxH"; false: a ring ("ring" or none) */
    unsigned width;         /* nodes per row */
    unsigned height;        /* rows */
} FabricPs1Shape;

/*
 * The ps1 kind's --topology for `nodes` nodes: NULL or "ring", or
 * "torus:WxH" with 1 <= W, H <= FABRIC_PS1_MAX_DIM and W*H == nodes.
 */
bool fabric_ps1_shape(unsigned nodes, const char *topology,
                      FabricPs1Shape *shape, GError **err);

/*
 * True when `kind` is an implemented fabric kind ("eth, ps1, myrinet,
 * telegraphos") and `topology` is one it accepts for `nodes` nodes
 * (1..FABRIC_MAX_NODES):
 *  - eth, telegraphos: NULL only (one switch or crossbar, node i on port i);
 *  - ps1: fabric_ps1_shape();
 *  - myrinet: a switch file, or NULL for one 16-port switch
 *    (myri_topo_new; docs/fabricd.md "The myrinet kind").
 * Otherwise false, and `err` (FABRIC_TOPOLOGY_ERROR) names the option
 * (--topology, --nodes) or the kind and the rule.
 */
bool fabric_topology_check(const char *kind, unsigned nodes,
                           const char *topology, GError **err);

#endif
