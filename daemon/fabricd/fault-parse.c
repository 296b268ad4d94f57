/*
 * Fault rule text: parsing with clear errors, and the canonical form.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

G_DEFINE_QUARK(fabricd_fault_error, fault_error)

/* Every error of this file: one code, a message saying what is wrong. */
#define fail(err, ...) g_set_error(err, FAULT_ERROR, 0, __VA_ARGS__)

/* ---- links ---- */

/* One side of a link: "*", "3" or "node3". */
static bool parse_node(const char *text, unsigned nodes, int *out,
                       const char *whole, GError **err)
{
    const char *digits = text;
    guint64 v;

    if (strcmp(text, "*") == 0) {
        *out = FAULT_ANY_NODE;
        return true;
    }
    if (g_str_has_prefix(text, "node")) {
        digits += 4;
    }
    if (!g_ascii_isdigit(digits[0]) ||
        !g_ascii_string_to_unsigned(digits, 10, 0, G_MAXUINT32, &v, NULL)) {
        fail(err, "bad node '%s' in link '%s' (expected a number, nodeN or *)",
             text, whole);
        return false;
    }
    if (v >= nodes) {
        fail(err, "node %" G_GUINT64_FORMAT " does not exist "
             "(this fabric has nodes 0..%u)", v, nodes - 1);
        return false;
    }
    *out = (int)v;
    return true;
}

static bool set_has(const uint8_t *set, unsigned node)
{
    return node < FAULT_MAX_NODES && (set[node / 8] & (1u << (node % 8)));
}

static void set_add(uint8_t *set, unsigned node)
{
    set[node / 8] |= 1u << (node % 8);
}

/* The smallest node of a set, or FAULT_MAX_NODES if it is empty. */
static unsigned set_first(const uint8_t *set)
{
    for (unsigned n = 0; n < FAULT_MAX_NODES; n++) {
        if (set_has(set, n)) {
            return n;
        }
    }
    return FAULT_MAX_NODES;
}

static unsigned set_count(const uint8_t *set)
{
    unsigned c = 0;

    for (unsigned i = 0; i < FAULT_MAX_NODES / 8; i++) {
        c += __builtin_popcount(set[i]);
    }
    return c;
}

/* "0,1,node3": a list of distinct nodes, no wildcard. */
static bool parse_node_list(const char *text, unsigned nodes, uint8_t *set,
                            const char *whole, GError **err)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);

    for (char **p = parts; *p; p++) {
        int node;

        if (strcmp(*p, "*") == 0) {
            fail(err, "bad link '%s' (* stands alone, and only on the right "
                 "of a partition: S|* is S and every other node)", whole);
            return false;
        }
        if (!parse_node(*p, nodes, &node, whole, err)) {
            return false;
        }
        if (node >= FAULT_MAX_NODES) {
            fail(err, "node %d is past the %d nodes a rule can name", node,
                 FAULT_MAX_NODES);
            return false;
        }
        if (set_has(set, node)) {
            fail(err, "node %d is listed twice in link '%s'", node, whole);
            return false;
        }
        set_add(set, node);
    }
    return true;
}

/* `S|T` or `S>|T`; `bar` points at the '|'. */
static bool parse_partition(const char *text, const char *bar,
                            unsigned nodes, FaultLink *l, GError **err)
{
    g_autofree char *left = g_strndup(text, bar - text);
    const char *right = bar + 1;
    size_t left_len = strlen(left);

    l->sets = true;
    l->both = true;
    if (left_len && left[left_len - 1] == '>') {
        left[--left_len] = '\0';
        l->both = false;
    }
    if (!left_len || !*right || strchr(right, '|')) {
        fail(err, "bad link '%s' (a partition is S|T or S>|T with lists of "
             "nodes, e.g. 2|0,1)", text);
        return false;
    }
    if (!parse_node_list(left, nodes, l->set_from, text, err)) {
        return false;
    }
    if (strcmp(right, "*") == 0) {
        l->rest = true;
        if (set_count(l->set_from) >= nodes) {
            fail(err, "link '%s' leaves no node on the other side", text);
            return false;
        }
        return true;
    }
    if (!parse_node_list(right, nodes, l->set_to, text, err)) {
        return false;
    }
    for (unsigned n = 0; n < FAULT_MAX_NODES; n++) {
        if (set_has(l->set_from, n) && set_has(l->set_to, n)) {
            fail(err, "node %u is on both sides of link '%s'", n, text);
            return false;
        }
    }
    /* Normal form: both ways, the side with the smallest node first. */
    if (l->both && set_first(l->set_to) < set_first(l->set_from)) {
        uint8_t t[sizeof(l->set_from)];

        memcpy(t, l->set_from, sizeof(t));
        memcpy(l->set_from, l->set_to, sizeof(t));
        memcpy(l->set_to, t, sizeof(t));
    }
    return true;
}

bool fault_link_parse(const char *text, unsigned nodes, FaultLink *out,
                      GError **err)
{
    FaultLink l = { .from = FAULT_ANY_NODE, .to = FAULT_ANY_NODE };
    const char *bar = strchr(text, '|');
    const char *sep = strpbrk(text, ">-");

    if (bar) {
        if (!parse_partition(text, bar, nodes, &l, err)) {
            return false;
        }
        *out = l;
        return true;
    }
    if (strcmp(text, "*") == 0) {
        *out = l;
        return true;
    }
    if (strchr(text, ',')) {
        fail(err, "bad link '%s' (a list of nodes needs the partition form "
             "S|T or S>|T, e.g. 2|0,1)", text);
        return false;
    }
    if (!sep || strpbrk(sep + 1, ">-") || sep == text || !sep[1]) {
        fail(err, "bad link '%s' (expected A>B, A-B, S|T, S>|T or *, with "
             "node ids or *)", text);
        return false;
    }
    g_autofree char *left = g_strndup(text, sep - text);

    if (!parse_node(left, nodes, &l.from, text, err) ||
        !parse_node(sep + 1, nodes, &l.to, text, err)) {
        return false;
    }
    l.both = *sep == '-';
    if (l.from != FAULT_ANY_NODE && l.from == l.to) {
        fail(err, "link '%s' joins node %d to itself", text, l.from);
        return false;
    }
    /*
     * Normal form: "*>*" and "*-*" are "*"; an undirected pair lists the
     * wildcard or the smaller id first.
     */
    if (l.from == FAULT_ANY_NODE && l.to == FAULT_ANY_NODE) {
        l.both = false;
    } else if (l.both && (l.to == FAULT_ANY_NODE ||
                          (l.from != FAULT_ANY_NODE && l.from > l.to))) {
        int t = l.from;

        l.from = l.to;
        l.to = t;
    }
    *out = l;
    return true;
}

static bool side_matches(int side, unsigned node)
{
    return side == FAULT_ANY_NODE || (unsigned)side == node;
}

/* A partition S|T or S>|T: from in S, to in T (or not in S with `rest`). */
static bool sets_match(const FaultLink *l, unsigned from, unsigned to)
{
    if (l->rest) {
        return set_has(l->set_from, from) && to < FAULT_MAX_NODES &&
               !set_has(l->set_from, to);
    }
    return set_has(l->set_from, from) && set_has(l->set_to, to);
}

bool fault_link_matches(const FaultLink *l, unsigned from, unsigned to)
{
    if (l->sets) {
        return sets_match(l, from, to) || (l->both && sets_match(l, to, from));
    }
    if (side_matches(l->from, from) && side_matches(l->to, to)) {
        return true;
    }
    return l->both && side_matches(l->from, to) && side_matches(l->to, from);
}

bool fault_link_equal(const FaultLink *a, const FaultLink *b)
{
    return a->from == b->from && a->to == b->to && a->both == b->both &&
           a->sets == b->sets && a->rest == b->rest &&
           memcmp(a->set_from, b->set_from, sizeof(a->set_from)) == 0 &&
           memcmp(a->set_to, b->set_to, sizeof(a->set_to)) == 0;
}

static void append_side(int side, GString *out)
{
    if (side == FAULT_ANY_NODE) {
        g_string_append_c(out, '*');
    } else {
        g_string_append_printf(out, "%d", side);
    }
}

static void append_set(const uint8_t *set, GString *out)
{
    const char *comma = "";

    for (unsigned n = 0; n < FAULT_MAX_NODES; n++) {
        if (set_has(set, n)) {
            g_string_append_printf(out, "%s%u", comma, n);
            comma = ",";
        }
    }
}

void fault_link_append(const FaultLink *l, GString *out)
{
    if (l->sets) {
        append_set(l->set_from, out);
        g_string_append(out, l->both ? "|" : ">|");
        if (l->rest) {
            g_string_append_c(out, '*');
        } else {
            append_set(l->set_to, out);
        }
        return;
    }
    if (l->from == FAULT_ANY_NODE && l->to == FAULT_ANY_NODE) {
        g_string_append_c(out, '*');
        return;
    }
    append_side(l->from, out);
    g_string_append_c(out, l->both ? '-' : '>');
    append_side(l->to, out);
}

/* ---- rules ---- */

typedef struct KeyValue {
    const char *key;
    const char *value;
} KeyValue;

static bool parse_u64(const char *key, const char *value, guint64 min,
                      guint64 max, guint64 *out, GError **err)
{
    if (!g_ascii_isdigit(value[0]) ||
        !g_ascii_string_to_unsigned(value, 10, 0, G_MAXUINT64, out, NULL)) {
        fail(err, "bad number '%s' for %s", value, key);
        return false;
    }
    if (*out < min) {
        fail(err, "%s=%s is too small (minimum %" G_GUINT64_FORMAT ")",
             key, value, min);
        return false;
    }
    if (*out > max) {
        fail(err, "%s=%s is too large (maximum %" G_GUINT64_FORMAT ")",
             key, value, max);
        return false;
    }
    return true;
}

static bool parse_probability(const char *key, const char *value,
                              double *out, GError **err)
{
    char *end;
    double p = g_ascii_strtod(value, &end);

    if (end == value || *end || !isfinite(p)) {
        fail(err, "bad number '%s' for %s", value, key);
        return false;
    }
    if (p < 0.0 || p > 1.0) {
        fail(err, "%s=%s is out of range (a probability is between 0 and 1)",
             key, value);
        return false;
    }
    *out = p;
    return true;
}

static const struct {
    const char *unit;
    uint64_t ns;
} time_units[] = {
    { "s", 1000000000 }, { "ms", 1000000 }, { "us", 1000 }, { "ns", 1 },
};

/* The largest unit that shows `ns` exactly: "2s", "2500ms", "7ns", "0s". */
static void append_time(GString *out, uint64_t ns)
{
    for (unsigned i = 0; i < G_N_ELEMENTS(time_units); i++) {
        if (ns % time_units[i].ns == 0) {
            g_string_append_printf(out, "%" G_GUINT64_FORMAT "%s",
                                   ns / time_units[i].ns, time_units[i].unit);
            return;
        }
    }
}

/* A time with its unit: "2s", "2500ms", "30us", "100ns"; at most `max`. */
static bool parse_time(const char *key, const char *value, uint64_t max,
                       uint64_t *out, GError **err)
{
    const char *unit = value;
    guint64 v;

    while (g_ascii_isdigit(*unit)) {
        unit++;
    }
    for (unsigned i = 0; unit > value && i < G_N_ELEMENTS(time_units); i++) {
        g_autofree char *digits = NULL;

        if (strcmp(unit, time_units[i].unit) != 0) {
            continue;
        }
        digits = g_strndup(value, unit - value);
        if (!g_ascii_string_to_unsigned(digits, 10, 0, G_MAXUINT64, &v,
                                        NULL) ||
            v > max / time_units[i].ns) {
            g_autoptr(GString) limit = g_string_new(NULL);

            append_time(limit, max);
            fail(err, "%s=%s is too large (maximum %s)", key, value,
                 limit->str);
            return false;
        }
        *out = v * time_units[i].ns;
        return true;
    }
    fail(err, "bad time '%s' for %s (expected a whole number and a unit: "
         "ns, us, ms or s, e.g. %s=2s)", value, key, key);
    return false;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

static bool parse_offsets(const char *value, FaultRule *r, GError **err)
{
    g_auto(GStrv) parts = g_strsplit(value, ",", -1);
    unsigned n = g_strv_length(parts);

    if (n > FAULT_MAX_BIT_OFFSETS) {
        fail(err, "too many offsets (maximum %d)", FAULT_MAX_BIT_OFFSETS);
        return false;
    }
    r->offsets = g_new(uint32_t, n);
    for (unsigned i = 0; i < n; i++) {
        guint64 v;

        if (!parse_u64("offsets", parts[i], 0, G_MAXUINT32, &v, err)) {
            return false;
        }
        r->offsets[i] = v;
    }
    qsort(r->offsets, n, sizeof(r->offsets[0]), compare_u32);
    for (unsigned i = 1; i < n; i++) {
        if (r->offsets[i] == r->offsets[i - 1]) {
            fail(err, "bit offset %u is listed twice", r->offsets[i]);
            return false;
        }
    }
    r->n_offsets = n;
    return true;
}

static const char *const action_names[] = {
    [FAULT_DROP] = "drop",
    [FAULT_CORRUPT] = "corrupt",
    [FAULT_DELAY] = "delay",
    [FAULT_DOWN] = "down",
    [FAULT_DROP_GE] = "drop ge",
    [FAULT_DUPLICATE] = "duplicate",
    [FAULT_REORDER] = "reorder",
};

#define ACTION_LIST "drop, drop ge, corrupt, delay, down, duplicate or reorder"

/* Keys each action accepts, besides the schedule's. */
#define MAX_ACTION_KEYS 4
static const char *const action_keys[][MAX_ACTION_KEYS] = {
    [FAULT_DROP] = { "nth", "p" },
    [FAULT_CORRUPT] = { "p", "bits", "offsets" },
    [FAULT_DELAY] = { "ns", "us", "ms", "jitter" },
    [FAULT_DOWN] = { NULL },
    [FAULT_DROP_GE] = { "p", "r", "h", "k" },
    [FAULT_DUPLICATE] = { "p" },
    [FAULT_REORDER] = { "p", "ns", "us", "ms" },
};

/* Every action takes a schedule: active from at=T, until=T or for=D. */
static const char *const schedule_keys[] = { "at", "until", "for" };

static bool key_allowed(FaultAction a, const char *key)
{
    for (unsigned i = 0; i < G_N_ELEMENTS(schedule_keys); i++) {
        if (strcmp(schedule_keys[i], key) == 0) {
            return true;
        }
    }
    for (int i = 0; i < MAX_ACTION_KEYS && action_keys[a][i]; i++) {
        if (strcmp(action_keys[a][i], key) == 0) {
            return true;
        }
    }
    return false;
}

/* "nth, p, at, until, for": what `a` accepts, for error messages. */
static char *accepted_keys(FaultAction a)
{
    GString *s = g_string_new(NULL);

    for (int i = 0; i < MAX_ACTION_KEYS && action_keys[a][i]; i++) {
        g_string_append_printf(s, "%s, ", action_keys[a][i]);
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(schedule_keys); i++) {
        g_string_append_printf(s, "%s%s", schedule_keys[i],
                               i + 1 < G_N_ELEMENTS(schedule_keys) ? ", "
                                                                   : "");
    }
    return g_string_free(s, FALSE);
}

static const char *find_value(const KeyValue *kv, unsigned n, const char *key)
{
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(kv[i].key, key) == 0) {
            return kv[i].value;
        }
    }
    return NULL;
}

/* Exactly one of ns=, us=, ms= (delay, reorder), at least `min` ns. */
static bool parse_duration(const KeyValue *kv, unsigned n, FaultRule *r,
                           uint64_t min, GError **err)
{
    static const struct { const char *key; uint64_t ns; } units[] = {
        { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
    };
    const char *name = action_names[r->action];
    unsigned found = 0, which = 0;

    for (unsigned i = 0; i < G_N_ELEMENTS(units); i++) {
        if (find_value(kv, n, units[i].key)) {
            found++;
            which = i;
        }
    }
    if (found != 1) {
        fail(err, found ? "%s takes one of ns=, us= or ms=, not several"
                        : "%s needs ns=N, us=N or ms=N", name);
        return false;
    }
    guint64 v;

    if (!parse_u64(units[which].key, find_value(kv, n, units[which].key),
                   (min + units[which].ns - 1) / units[which].ns,
                   FAULT_MAX_DELAY_NS / units[which].ns, &v, err)) {
        return false;
    }
    r->delay_ns = v * units[which].ns;
    return true;
}

static bool parse_jitter(const char *jitter, FaultRule *r, GError **err)
{
    if (!jitter) {
        return true;
    }
    if (!parse_time("jitter", jitter, FAULT_MAX_DELAY_NS, &r->jitter_ns,
                    err)) {
        return false;
    }
    if (r->jitter_ns > r->delay_ns) {
        g_autoptr(GString) d = g_string_new(NULL);

        append_time(d, r->delay_ns);
        fail(err, "jitter=%s is more than the delay (%s): the delay is "
             "uniform in [D-J, D+J] and cannot go below 0", jitter, d->str);
        return false;
    }
    return true;
}

static bool parse_params(const KeyValue *kv, unsigned n, FaultRule *r,
                         GError **err)
{
    const char *nth = find_value(kv, n, "nth");
    const char *p = find_value(kv, n, "p");
    const char *bits = find_value(kv, n, "bits");
    const char *offsets = find_value(kv, n, "offsets");
    const char *gr = find_value(kv, n, "r");
    const char *gh = find_value(kv, n, "h");
    const char *gk = find_value(kv, n, "k");
    guint64 v;

    switch (r->action) {
    case FAULT_DROP:
        if (!nth == !p) {
            fail(err, nth ? "drop takes nth=K or p=P, not both"
                          : "drop needs nth=K or p=P");
            return false;
        }
        if (nth) {
            if (!parse_u64("nth", nth, 1, G_MAXUINT64, &v, err)) {
                return false;
            }
            r->nth = v;
            return true;
        }
        return parse_probability("p", p, &r->p, err);
    case FAULT_DROP_GE:
        if (!p || !gr) {
            fail(err, "drop ge needs p=P and r=R (the Good>Bad and Bad>Good "
                 "transition probabilities)");
            return false;
        }
        r->ge_h = 0.0;
        r->ge_k = 1.0;
        return parse_probability("p", p, &r->p, err) &&
               parse_probability("r", gr, &r->ge_r, err) &&
               (!gh || parse_probability("h", gh, &r->ge_h, err)) &&
               (!gk || parse_probability("k", gk, &r->ge_k, err));
    case FAULT_CORRUPT:
        if (!p) {
            fail(err, "corrupt needs p=P (use p=1 to corrupt every frame)");
            return false;
        }
        if (!bits == !offsets) {
            fail(err, bits ? "corrupt takes bits=K or offsets=..., not both"
                           : "corrupt needs bits=K or offsets=O1,O2,...");
            return false;
        }
        if (!parse_probability("p", p, &r->p, err)) {
            return false;
        }
        if (bits) {
            if (!parse_u64("bits", bits, 1, 65536 * 8, &v, err)) {
                return false;
            }
            r->bits = v;
            return true;
        }
        return parse_offsets(offsets, r, err);
    case FAULT_DELAY:
        return parse_duration(kv, n, r, 0, err) &&
               parse_jitter(find_value(kv, n, "jitter"), r, err);
    case FAULT_DOWN:
        return true;
    case FAULT_DUPLICATE:
        if (!p) {
            fail(err, "duplicate needs p=P (use p=1 to duplicate every "
                 "frame)");
            return false;
        }
        return parse_probability("p", p, &r->p, err);
    case FAULT_REORDER:
        if (!p) {
            fail(err, "reorder needs p=P and ns=N, us=N or ms=N (how far "
                 "later copies may overtake)");
            return false;
        }
        return parse_probability("p", p, &r->p, err) &&
               parse_duration(kv, n, r, 1, err);
    }
    g_assert_not_reached();
}

/* at=T, until=T, for=D: the window [at, until) of rule time. */
static bool parse_schedule(const KeyValue *kv, unsigned n, FaultRule *r,
                           GError **err)
{
    const char *at = find_value(kv, n, "at");
    const char *until = find_value(kv, n, "until");
    const char *length = find_value(kv, n, "for");
    uint64_t d;

    r->at_ns = 0;
    r->until_ns = FAULT_FOREVER;
    if (at && !parse_time("at", at, FAULT_MAX_TIME_NS, &r->at_ns, err)) {
        return false;
    }
    if (until && length) {
        fail(err, "until= and for= are alternatives, not both (until=T "
             "ends the rule at T, for=D at at+D)");
        return false;
    }
    if (length) {
        if (!at) {
            fail(err, "for=%s needs at=T (the rule is active from at=T to "
                 "at+for)", length);
            return false;
        }
        if (!parse_time("for", length, FAULT_MAX_TIME_NS, &d, err)) {
            return false;
        }
        if (d == 0) {
            fail(err, "for=%s is an empty window (give a positive "
                 "duration)", length);
            return false;
        }
        r->until_ns = r->at_ns + d;
    }
    if (until) {
        if (!parse_time("until", until, FAULT_MAX_TIME_NS, &r->until_ns,
                        err)) {
            return false;
        }
        if (r->until_ns <= r->at_ns) {
            fail(err, "until=%s is not after at=%s (a rule is active from "
                 "at to before until)", until, at ? at : "0s");
            return false;
        }
    }
    return true;
}

/* tokens[1] (and [2] for "drop ge"); returns how many words it took. */
static unsigned parse_action(GPtrArray *tokens, FaultAction *out,
                             GError **err)
{
    const char *word = tokens->pdata[1];

    if (strcmp(word, "drop") == 0 && tokens->len > 2 &&
        strcmp(tokens->pdata[2], "ge") == 0) {
        *out = FAULT_DROP_GE;
        return 2;
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(action_names); i++) {
        if (strcmp(word, action_names[i]) == 0) {
            *out = i;
            return 1;
        }
    }
    fail(err, "unknown action '%s' (expected " ACTION_LIST ")", word);
    return 0;
}

FaultRule *fault_rule_parse(const char *text, unsigned nodes, GError **err)
{
    g_auto(GStrv) words = g_strsplit_set(text, " \t", -1);
    GPtrArray *tokens = g_ptr_array_new();
    FaultRule *r = g_new0(FaultRule, 1);
    KeyValue *kv = NULL;
    unsigned n_kv = 0, first_kv;

    for (char **w = words; *w; w++) {
        if (**w) {
            g_ptr_array_add(tokens, *w);
        }
    }
    if (tokens->len == 0) {
        fail(err, "empty rule (expected LINK ACTION [key=value ...])");
        goto fail;
    }
    if (!fault_link_parse(tokens->pdata[0], nodes, &r->link, err)) {
        goto fail;
    }
    if (tokens->len < 2) {
        fail(err, "missing action after '%s' (expected " ACTION_LIST ")",
             (char *)tokens->pdata[0]);
        goto fail;
    }
    first_kv = 1 + parse_action(tokens, &r->action, err);
    if (first_kv == 1) {
        goto fail;
    }
    kv = g_new0(KeyValue, tokens->len);
    for (unsigned i = first_kv; i < tokens->len; i++) {
        char *word = tokens->pdata[i];
        char *eq = strchr(word, '=');

        if (!eq || eq == word) {
            fail(err, "expected key=value, got '%s'", word);
            goto fail;
        }
        *eq = '\0';
        if (!key_allowed(r->action, word)) {
            g_autofree char *keys = accepted_keys(r->action);

            fail(err, "unknown key '%s' for %s (accepted: %s)", word,
                 action_names[r->action], keys);
            goto fail;
        }
        if (find_value(kv, n_kv, word)) {
            fail(err, "key '%s' is given twice", word);
            goto fail;
        }
        if (!eq[1]) {
            fail(err, "key '%s' has no value", word);
            goto fail;
        }
        kv[n_kv++] = (KeyValue){ word, eq + 1 };
    }
    if (!parse_params(kv, n_kv, r, err) ||
        !parse_schedule(kv, n_kv, r, err)) {
        goto fail;
    }
    g_free(kv);
    g_ptr_array_free(tokens, TRUE);
    return r;

fail:
    g_free(kv);
    g_ptr_array_free(tokens, TRUE);
    fault_rule_free(r);
    return NULL;
}

GPtrArray *fault_file_parse(const char *text, size_t len, const char *name,
                            unsigned nodes, FaultRuleCheck check,
                            void *opaque, GError **err)
{
    GPtrArray *rules =
        g_ptr_array_new_with_free_func((GDestroyNotify)fault_rule_free);
    const char *p = text, *end = text + len;
    unsigned line = 0;

    while (p < end) {
        const char *nl = memchr(p, '\n', end - p);
        const char *eol = nl ? nl : end;
        g_autofree char *s = NULL;
        g_autoptr(GError) why = NULL;
        FaultRule *r;
        char *hash;

        line++;
        if (memchr(p, '\0', eol - p)) {
            fail(err, "%s:%u: a NUL byte (a fault file is text)", name,
                 line);
            goto fail;
        }
        s = g_strndup(p, eol - p);
        p = nl ? nl + 1 : end;
        hash = strchr(s, '#');
        if (hash) {
            *hash = '\0';
        }
        g_strstrip(s);
        if (!*s) {
            continue;
        }
        if (rules->len == FAULT_MAX_RULES) {
            fail(err, "%s:%u: more than %d rules (the limit of a fabric)",
                 name, line, FAULT_MAX_RULES);
            goto fail;
        }
        r = fault_rule_parse(s, nodes, &why);
        if (r && check && !check(r, opaque, &why)) {
            g_clear_pointer(&r, fault_rule_free);
        }
        if (!r) {
            fail(err, "%s:%u: %s", name, line, why->message);
            goto fail;
        }
        g_ptr_array_add(rules, r);
    }
    return rules;

fail:
    g_ptr_array_free(rules, TRUE);
    return NULL;
}

/* Shortest decimal text that reads back as exactly the same double. */
static void append_double(GString *out, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];

    for (int prec = 1; prec <= 17; prec++) {
        char fmt[8];

        g_snprintf(fmt, sizeof(fmt), "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof(buf), fmt, v);
        if (g_ascii_strtod(buf, NULL) == v) {
            break;
        }
    }
    g_string_append(out, buf);
}

static void append_probability(GString *out, const char *key, double v)
{
    g_string_append_printf(out, " %s=", key);
    append_double(out, v);
}

char *fault_rule_to_string(const FaultRule *r)
{
    GString *s = g_string_new(NULL);

    fault_link_append(&r->link, s);
    g_string_append_printf(s, " %s", action_names[r->action]);
    switch (r->action) {
    case FAULT_DROP:
        if (r->nth) {
            g_string_append_printf(s, " nth=%" G_GUINT64_FORMAT, r->nth);
        } else {
            append_probability(s, "p", r->p);
        }
        break;
    case FAULT_DROP_GE:
        append_probability(s, "p", r->p);
        append_probability(s, "r", r->ge_r);
        if (r->ge_h != 0.0) {
            append_probability(s, "h", r->ge_h);
        }
        if (r->ge_k != 1.0) {
            append_probability(s, "k", r->ge_k);
        }
        break;
    case FAULT_CORRUPT:
        append_probability(s, "p", r->p);
        if (r->bits) {
            g_string_append_printf(s, " bits=%u", r->bits);
        } else {
            g_string_append(s, " offsets=");
            for (unsigned i = 0; i < r->n_offsets; i++) {
                g_string_append_printf(s, "%s%u", i ? "," : "", r->offsets[i]);
            }
        }
        break;
    case FAULT_DELAY:
        g_string_append_printf(s, " ns=%" G_GUINT64_FORMAT, r->delay_ns);
        if (r->jitter_ns) {
            g_string_append(s, " jitter=");
            append_time(s, r->jitter_ns);
        }
        break;
    case FAULT_DOWN:
        break;
    case FAULT_DUPLICATE:
        append_probability(s, "p", r->p);
        break;
    case FAULT_REORDER:
        append_probability(s, "p", r->p);
        g_string_append_printf(s, " ns=%" G_GUINT64_FORMAT, r->delay_ns);
        break;
    }
    if (r->at_ns) {
        g_string_append(s, " at=");
        append_time(s, r->at_ns);
    }
    if (r->until_ns != FAULT_FOREVER) {
        g_string_append(s, " until=");
        append_time(s, r->until_ns);
    }
    return g_string_free(s, FALSE);
}

void fault_rule_free(FaultRule *r)
{
    if (!r) {
        return;
    }
    if (r->per_link) {
        g_hash_table_destroy(r->per_link);
    }
    g_free(r->offsets);
    g_free(r);
}
