/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "control.h"
#include "report.h"

#define U64 "%" G_GUINT64_FORMAT

static void append_port_counters(const PortCounters *c, GString *out)
{
    g_string_append_printf(out, "rx_frames=" U64 " rx_bytes=" U64
                           " tx_frames=" U64 " tx_bytes=" U64
                           " malformed=" U64 " rejected=" U64
                           " connects=" U64 " overflows=" U64,
                           c->rx_frames, c->rx_bytes, c->tx_frames,
                           c->tx_bytes, c->malformed, c->rejected,
                           c->connects, c->overflows);
}

static void append_link_counters(const LinkCounters *c, GString *out)
{
    g_string_append_printf(out, "frames=" U64 " bytes=" U64 " dropped=" U64
                           " down=" U64 " corrupted=" U64 " delayed=" U64
                           " congested=" U64 " duplicated=" U64
                           " reordered=" U64,
                           c->frames, c->bytes, c->dropped, c->down,
                           c->corrupted, c->delayed, c->congested,
                           c->duplicated, c->reordered);
}

static bool link_is_interesting(const Link *l)
{
    static const LinkCounters zero;

    return l->admin_down || l->pending ||
           memcmp(&l->c, &zero, sizeof(zero)) != 0;
}

void report_rules(Fabric *f, GString *out)
{
    for (unsigned i = 0; i < fault_rules_count(f->rules); i++) {
        const FaultRule *r = fault_rules_get(f->rules, i);
        g_autofree char *text = fault_rule_to_string(r);

        g_string_append_printf(out, "%u %s matched=" U64 " fired=" U64 "\n",
                               r->id, text, r->matched, r->fired);
    }
}

void report_status(Fabric *f, GString *out)
{
    unsigned shown = 0;

    g_string_append_printf(out,
                           "fabric: kind=%s nodes=%u seed=0x%016"
                           G_GINT64_MODIFIER "x dir=%s\n",
                           f->kind->name, f->nodes, f->seed, f->dir);
    g_string_append(out, "topology: ");
    f->kind->describe_topology(f->kind_state, f->nodes, out);
    g_string_append_c(out, '\n');
    if (f->capture) {
        g_string_append_printf(out, "capture: on, %s, " U64 " frames\n",
                               capture_path(f->capture),
                               capture_frames(f->capture));
    } else {
        g_string_append(out, "capture: off\n");
    }
    if (f->lockstep) {
        LockstepStats st;

        lockstep_stats(f->lockstep, &st);
        g_string_append_printf(out, "lockstep: grant=" U64 " ns rounds=" U64
                               " lookahead=" U64 " ns quantum=" U64
                               " ns ordered=" U64 "\n", st.grant_ns,
                               st.rounds, st.lookahead_ns, st.quantum_ns,
                               st.frames_ordered);
    } else {
        g_string_append(out, "lockstep: off\n");
    }
    g_string_append_printf(out, "control: %u of %d clients, idle timeout %u "
                           "ms, port bound %zu\n", f->ctl.clients,
                           CONTROL_MAX_CLIENTS, f->ctl.idle_ms,
                           f->out_limit);
    for (unsigned i = 0; i < f->nodes; i++) {
        const Port *p = &f->ports[i];

        g_string_append_printf(out, "port %u: %-12s ", i,
                               p->fd >= 0 ? "connected" : "disconnected");
        append_port_counters(&p->c, out);
        if (p->out_bytes) {
            g_string_append_printf(out, " queued=%zu", p->out_bytes);
        }
        if (p->input_paused) {
            g_string_append(out, " input-paused");
        }
        g_string_append_c(out, '\n');
    }
    for (unsigned from = 0; from < f->nodes; from++) {
        for (unsigned to = 0; to < f->nodes; to++) {
            const Link *l = fabric_link(f, from, to);

            if (!fabric_has_link(f, from, to) || !link_is_interesting(l)) {
                continue;
            }
            g_string_append_printf(out, "link %u>%u: %-4s ", from, to,
                                   l->admin_down ? "down" : "up");
            append_link_counters(&l->c, out);
            if (l->pending) {
                g_string_append_printf(out, " held=%u", l->pending);
            }
            g_string_append_c(out, '\n');
            shown++;
        }
    }
    if (!shown) {
        g_string_append(out, "links: no traffic yet, all up\n");
    }
    if (f->kind->report) {
        f->kind->report(f->kind_state, out, false);
    }
    if (fault_rules_count(f->rules) == 0) {
        g_string_append(out, "fault rules: none\n");
    } else {
        g_string_append_printf(out, "fault rules: %u\n",
                               fault_rules_count(f->rules));
        report_rules(f, out);
    }
}

void report_counters(Fabric *f, GString *out)
{
    for (unsigned i = 0; i < f->nodes; i++) {
        const Port *p = &f->ports[i];

        g_string_append_printf(out, "port %u connected=%d ", i, p->fd >= 0);
        append_port_counters(&p->c, out);
        g_string_append_c(out, '\n');
    }
    for (unsigned from = 0; from < f->nodes; from++) {
        for (unsigned to = 0; to < f->nodes; to++) {
            const Link *l = fabric_link(f, from, to);

            if (!fabric_has_link(f, from, to)) {
                continue;
            }
            g_string_append_printf(out, "link %u>%u state=%s ", from, to,
                                   l->admin_down ? "down" : "up");
            append_link_counters(&l->c, out);
            g_string_append_c(out, '\n');
        }
    }
    g_string_append_printf(out, "control clients=%u max=%d idle_ms=%u "
                           "accepted=" U64 " refused=" U64 " idle_closed="
                           U64 " evicted=" U64 "\n", f->ctl.clients,
                           CONTROL_MAX_CLIENTS, f->ctl.idle_ms,
                           f->ctl.accepted, f->ctl.refused,
                           f->ctl.idle_closed, f->ctl.evicted);
    if (f->kind->report) {
        f->kind->report(f->kind_state, out, true);
    }
}
