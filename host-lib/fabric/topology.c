/*
 * The fabric kinds and the one check of a kind and its topology, for
 * fabricd and the launcher alike (topology.h).  The rules live here, not
 * in fabricd's kind models, so that the launcher can check `vcluster up`'s
 * options without linking a model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "vcluster/fabric/topology.h"

#include <string.h>

#include "proto/base.h"
#include "vcluster/fabric/myrinet-topo.h"

G_DEFINE_QUARK(fabric_topology_error, fabric_topology_error)

static bool ps1_topology(unsigned nodes, const char *topology, GError **err)
{
    FabricPs1Shape shape;

    return fabric_ps1_shape(nodes, topology, &shape, err);
}

static bool myri_topology(unsigned nodes, const char *topology, GError **err)
{
    g_autoptr(MyriTopo) t = myri_topo_new(topology, nodes, err);

    return t != NULL;
}

/*
 * A kind's rule: a check of the topology, or none for a kind that has
 * one switch (or crossbar) with node i on port i, which takes no
 * topology at all.
 */
typedef struct KindRule {
    const char *name;
    bool (*check)(unsigned nodes, const char *topology, GError **err);
    const char *one_switch;     /* without check: what the switch is called */
} KindRule;

/* Indexed by the kind's id in frame headers (proto/base.h). */
static const KindRule kind_rules[FABRIC_KIND_MAX + 1] = {
    [FABRIC_KIND_ETH] = { "eth", NULL, "switch" },
    [FABRIC_KIND_PS1] = { "ps1", ps1_topology },
    [FABRIC_KIND_MYRINET] = { "myrinet", myri_topology },
    [FABRIC_KIND_TELEGRAPHOS] = { "telegraphos", NULL, "crossbar" },
};

static bool rule_check(const KindRule *rule, unsigned nodes,
                       const char *topology, GError **err)
{
    if (rule->check) {
        return rule->check(nodes, topology, err);
    }
    if (topology) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--topology does not apply to --kind %s (one %s, node "
                    "i on port i)", rule->name, rule->one_switch);
        return false;
    }
    return true;
}

unsigned fabric_kind_lookup(const char *name)
{
    for (unsigned id = 1; name && id <= FABRIC_KIND_MAX; id++) {
        if (strcmp(kind_rules[id].name, name) == 0) {
            return id;
        }
    }
    return 0;
}

const char *fabric_kind_name(unsigned id)
{
    return id >= 1 && id <= FABRIC_KIND_MAX ? kind_rules[id].name : NULL;
}

const char *fabric_kind_names(void)
{
    static gsize once;
    static char *names;

    if (g_once_init_enter(&once)) {
        GString *s = g_string_new(NULL);

        for (unsigned id = 1; id <= FABRIC_KIND_MAX; id++) {
            g_string_append_printf(s, "%s%s", id > 1 ? ", " : "",
                                   kind_rules[id].name);
        }
        names = g_string_free(s, FALSE);
        g_once_init_leave(&once, 1);
    }
    return names;
}

bool fabric_ps1_shape(unsigned nodes, const char *topology,
                      FabricPs1Shape *shape, GError **err)
{
    if (!topology || strcmp(topology, "ring") == 0) {
        *shape = (FabricPs1Shape){ .width = nodes, .height = 1 };
        return true;
    }
    if (g_str_has_prefix(topology, "torus:")) {
        const char *spec = topology + 6;
        const char *x = strchr(spec, 'x');
        g_autofree char *w_text = x ? g_strndup(spec, x - spec) : NULL;
        guint64 w, h;

        if (x && g_ascii_isdigit(spec[0]) && g_ascii_isdigit(x[1]) &&
            g_ascii_string_to_unsigned(w_text, 10, 0, G_MAXUINT32, &w,
                                       NULL) &&
            g_ascii_string_to_unsigned(x + 1, 10, 0, G_MAXUINT32, &h, NULL)) {
            if (w < 1 || h < 1 || w > FABRIC_PS1_MAX_DIM ||
                h > FABRIC_PS1_MAX_DIM) {
                g_set_error(err, FABRIC_TOPOLOGY_ERROR,
                            FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
                            "--topology %s: width and height must be 1..%d",
                            topology, FABRIC_PS1_MAX_DIM);
                return false;
            }
            if (w * h != nodes) {
                g_set_error(err, FABRIC_TOPOLOGY_ERROR,
                            FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
                            "--topology %s has %" G_GUINT64_FORMAT
                            " nodes but --nodes is %u; W*H must equal the "
                            "node count", topology, w * h, nodes);
                return false;
            }
            *shape = (FabricPs1Shape){ .torus = true, .width = w,
                                       .height = h };
            return true;
        }
    }
    g_set_error(err, FABRIC_TOPOLOGY_ERROR, FABRIC_TOPOLOGY_ERROR_TOPOLOGY,
                "bad --topology '%s': use ring or torus:WxH (e.g. torus:3x3)",
                topology);
    return false;
}

bool fabric_topology_check(const char *kind, unsigned nodes,
                           const char *topology, GError **err)
{
    unsigned id = fabric_kind_lookup(kind);
    GError *why = NULL;

    if (!id) {
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
    if (!rule_check(&kind_rules[id], nodes, topology, &why)) {
        g_set_error_literal(err, FABRIC_TOPOLOGY_ERROR,
                            FABRIC_TOPOLOGY_ERROR_TOPOLOGY, why->message);
        g_error_free(why);
        return false;
    }
    return true;
}
