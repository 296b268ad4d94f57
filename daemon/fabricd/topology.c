/*
 * The one check of a fabric kind and its topology, for fabricd and the
 * launcher alike (topology.h).  Each kind judges its own topology
 * (FabricKind.check_topology).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "vcluster/fabric/topology.h"

#include "kind.h"
#include "proto/base.h"

G_DEFINE_QUARK(fabric_topology_error, fabric_topology_error)

bool fabric_topology_check(const char *kind, unsigned nodes,
                           const char *topology, GError **err)
{
    const FabricKind *k = kind ? fabric_kind_find(kind) : NULL;
    GError *why = NULL;

    if (!k) {
        g_set_error(err, FABRIC_TOPOLOGY_ERROR, FABRIC_TOPOLOGY_ERROR_KIND,
                    "fabric kind '%s' is not implemented yet (known kinds: "
                    "%s)", kind ? kind : "", fabric_kind_names());
        return false;
    }
    if (nodes < 1 || nodes > FABRIC_MAX_NODES) {
        g_set_error(err, FABRIC_TOPOLOGY_ERROR, FABRIC_TOPOLOGY_ERROR_NODES,
                    "--nodes %u is out of range; use 1..%d", nodes,
                    FABRIC_MAX_NODES);
        return false;
    }
    if (!k->check_topology(nodes, topology, &why)) {
        g_set_error_literal(err, FABRIC_TOPOLOGY_ERROR,
                            FABRIC_TOPOLOGY_ERROR_TOPOLOGY, why->message);
        g_error_free(why);
        return false;
    }
    return true;
}
