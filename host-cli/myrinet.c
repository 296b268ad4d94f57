/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The myrinet fabric's topology and the route files its guests load.
 * Routes come from the same module fabricd walks them with
 * (daemon/fabricd/myrinet-topo.c), and from the same topology file: the
 * copy in RUN/fabric-myrinet/.  docs/fabricd.md "Route files".
 */
#include "vcluster.h"

#include <errno.h>

#include "vcluster/fabric/myrinet-topo.h"

#define TOPOLOGY_COPY "topology.ini"

char *myrinet_routes_file(Cluster *c, int node)
{
    g_autofree char *dir = cluster_fabric_dir(c, "myrinet");
    g_autofree char *leaf = g_strdup_printf("node%d", node);

    return g_build_filename(dir, "routes", leaf, NULL);
}

gboolean myrinet_prepare(Cluster *c, const char *file, GError **err)
{
    g_autofree char *dir = cluster_fabric_dir(c, "myrinet");
    g_autofree char *routes = g_build_filename(dir, "routes", NULL);
    g_autoptr(MyriTopo) t = NULL;

    if (g_mkdir_with_parents(routes, 0755) < 0) {
        g_set_error(err, VC_ERROR, errno, "mkdir %s: %s", routes,
                    g_strerror(errno));
        return FALSE;
    }
    if (file) {
        g_autofree char *text = NULL;
        g_autofree char *copy = g_build_filename(dir, TOPOLOGY_COPY, NULL);

        if (!g_file_get_contents(file, &text, NULL, err) ||
            !g_file_set_contents(copy, text, -1, err)) {
            return FALSE;
        }
        g_free(c->myri_topology);
        c->myri_topology = g_steal_pointer(&copy);
    }
    t = myri_topo_new(c->myri_topology, c->nodes, err);
    if (!t) {
        return FALSE;
    }
    for (int i = 0; i < c->nodes; i++) {
        g_autofree char *path = myrinet_routes_file(c, i);
        g_autofree char *text = myri_topo_route_file(t, i);

        if (!g_file_set_contents(path, text, -1, err)) {
            return FALSE;
        }
    }
    return TRUE;
}
