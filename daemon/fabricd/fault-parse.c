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

bool fault_link_parse(const char *text, unsigned nodes, FaultLink *out,
                      GError **err)
{
    FaultLink l = { FAULT_ANY_NODE, FAULT_ANY_NODE, false };
    const char *sep = strpbrk(text, ">-");

    if (strcmp(text, "*") == 0) {
        *out = l;
        return true;
    }
    if (!sep || strpbrk(sep + 1, ">-") || sep == text || !sep[1]) {
        fail(err, "bad link '%s' (expected A>B, A-B or *, with node ids or *)",
             text);
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

bool fault_link_matches(const FaultLink *l, unsigned from, unsigned to)
{
    if (side_matches(l->from, from) && side_matches(l->to, to)) {
        return true;
    }
    return l->both && side_matches(l->from, to) && side_matches(l->to, from);
}

static void append_side(int side, GString *out)
{
    if (side == FAULT_ANY_NODE) {
        g_string_append_c(out, '*');
    } else {
        g_string_append_printf(out, "%d", side);
    }
}

void fault_link_append(const FaultLink *l, GString *out)
{
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

static bool parse_probability(const char *value, double *out, GError **err)
{
    char *end;
    double p = g_ascii_strtod(value, &end);

    if (end == value || *end || !isfinite(p)) {
        fail(err, "bad number '%s' for p", value);
        return false;
    }
    if (p < 0.0 || p > 1.0) {
        fail(err, "p=%s is out of range (a probability is between 0 and 1)",
             value);
        return false;
    }
    *out = p;
    return true;
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
};

/* Keys each action accepts, for validation and error messages. */
static const char *const action_keys[] = {
    [FAULT_DROP] = "nth, p",
    [FAULT_CORRUPT] = "p, bits, offsets",
    [FAULT_DELAY] = "ns, us, ms",
    [FAULT_DOWN] = "none",
};

static bool key_allowed(FaultAction a, const char *key)
{
    static const char *const keys[][4] = {
        [FAULT_DROP] = { "nth", "p" },
        [FAULT_CORRUPT] = { "p", "bits", "offsets" },
        [FAULT_DELAY] = { "ns", "us", "ms" },
        [FAULT_DOWN] = { NULL },
    };

    for (int i = 0; i < 4 && keys[a][i]; i++) {
        if (strcmp(keys[a][i], key) == 0) {
            return true;
        }
    }
    return false;
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

static bool parse_delay(const KeyValue *kv, unsigned n, FaultRule *r,
                        GError **err)
{
    static const struct { const char *key; uint64_t ns; } units[] = {
        { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
    };

    if (n != 1) {
        fail(err, n ? "delay takes one of ns=, us= or ms=, not several"
                    : "delay needs ns=N, us=N or ms=N");
        return false;
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(units); i++) {
        guint64 v;

        if (strcmp(kv[0].key, units[i].key) == 0) {
            if (!parse_u64(kv[0].key, kv[0].value, 0,
                           FAULT_MAX_DELAY_NS / units[i].ns, &v, err)) {
                return false;
            }
            r->delay_ns = v * units[i].ns;
            return true;
        }
    }
    g_assert_not_reached();
}

static bool parse_params(const KeyValue *kv, unsigned n, FaultRule *r,
                         GError **err)
{
    const char *nth = find_value(kv, n, "nth");
    const char *p = find_value(kv, n, "p");
    const char *bits = find_value(kv, n, "bits");
    const char *offsets = find_value(kv, n, "offsets");
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
        return parse_probability(p, &r->p, err);
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
        if (!parse_probability(p, &r->p, err)) {
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
        return parse_delay(kv, n, r, err);
    case FAULT_DOWN:
        return true;
    }
    g_assert_not_reached();
}

static bool parse_action(const char *word, FaultAction *out, GError **err)
{
    for (unsigned i = 0; i < G_N_ELEMENTS(action_names); i++) {
        if (strcmp(word, action_names[i]) == 0) {
            *out = i;
            return true;
        }
    }
    fail(err, "unknown action '%s' (expected drop, corrupt, delay or down)",
         word);
    return false;
}

FaultRule *fault_rule_parse(const char *text, unsigned nodes, GError **err)
{
    g_auto(GStrv) words = g_strsplit_set(text, " \t", -1);
    GPtrArray *tokens = g_ptr_array_new();
    FaultRule *r = g_new0(FaultRule, 1);
    KeyValue *kv = NULL;
    unsigned n_kv = 0;

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
        fail(err, "missing action after '%s' "
             "(expected drop, corrupt, delay or down)",
             (char *)tokens->pdata[0]);
        goto fail;
    }
    if (!parse_action(tokens->pdata[1], &r->action, err)) {
        goto fail;
    }
    kv = g_new0(KeyValue, tokens->len);
    for (unsigned i = 2; i < tokens->len; i++) {
        char *word = tokens->pdata[i];
        char *eq = strchr(word, '=');

        if (!eq || eq == word) {
            fail(err, "expected key=value, got '%s'", word);
            goto fail;
        }
        *eq = '\0';
        if (!key_allowed(r->action, word)) {
            fail(err, "unknown key '%s' for %s (accepted: %s)", word,
                 action_names[r->action], action_keys[r->action]);
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
    if (!parse_params(kv, n_kv, r, err)) {
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
            g_string_append(s, " p=");
            append_double(s, r->p);
        }
        break;
    case FAULT_CORRUPT:
        g_string_append(s, " p=");
        append_double(s, r->p);
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
        break;
    case FAULT_DOWN:
        break;
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
