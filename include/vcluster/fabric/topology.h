/*
 * Which fabric kinds and topologies fabricd accepts, checked without
 * starting anything: fabricd checks its options with it (fabric_new), and
 * the launcher checks `vcluster up`'s before it starts a fabric or a VM, so
 * both accept and refuse the same things with the same words.
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

/*
 * True when `kind` is an implemented fabric kind ("eth, ps1, myrinet,
 * telegraphos") and `topology` is one it accepts for `nodes` nodes
 * (1..FABRIC_MAX_NODES):
 *  - eth, telegraphos: NULL only (one switch or crossbar, node i on port i);
 *  - ps1: NULL or "ring", or "torus:WxH" with 1 <= W, H <= 255 and
 *    W*H == nodes (ps1_config_init);
 *  - myrinet: a switch file, or NULL for one 16-port switch
 *    (myri_topo_new; docs/fabricd.md "The myrinet kind").
 * Otherwise false, and `err` (FABRIC_TOPOLOGY_ERROR) names the option
 * (--topology, --nodes) or the kind and the rule.
 */
bool fabric_topology_check(const char *kind, unsigned nodes,
                           const char *topology, GError **err);

#endif
