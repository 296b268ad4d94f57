/*
 * Unit tests for fault rules (fault.c): parser, canonical text, and the
 * evaluator's decisions.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <string.h>

#include "fault.h"

#define NODES 4

static FaultRule *parse_ok(const char *text)
{
    g_autoptr(GError) err = NULL;
    FaultRule *r = fault_rule_parse(text, NODES, &err);

    if (!r) {
        g_test_message("'%s' was rejected: %s", text, err->message);
    }
    g_assert_no_error(err);
    g_assert_nonnull(r);
    return r;
}

static void test_parse_valid(void)
{
    static const struct { const char *in, *canonical; } cases[] = {
        { "0>1 drop p=0.5", "0>1 drop p=0.5" },
        { "node0>node1 drop nth=3", "0>1 drop nth=3" },
        { "1-0 down", "0-1 down" },
        { "*>2 corrupt p=1 bits=3", "*>2 corrupt p=1 bits=3" },
        { "2-* delay ms=5", "*-2 delay ns=5000000" },
        { "* delay us=7", "* delay ns=7000" },
        { "*>* down", "* down" },
        { "*-* down", "* down" },
        { "0>* corrupt p=0.25 offsets=9,0,3", "0>* corrupt p=0.25 offsets=0,3,9" },
        { "  3>0\tdrop   p=1  ", "3>0 drop p=1" },
        { "0>1 drop p=0", "0>1 drop p=0" },
        { "0>1 drop p=1e-3", "0>1 drop p=0.001" },
        { "0>1 drop p=0.1", "0>1 drop p=0.1" },
        { "0>1 delay ns=0", "0>1 delay ns=0" },
        { "node3-node1 corrupt bits=1 p=0.05", "1-3 corrupt p=0.05 bits=1" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        FaultRule *r = parse_ok(cases[i].in);
        g_autofree char *text = fault_rule_to_string(r);

        g_assert_cmpstr(text, ==, cases[i].canonical);
        fault_rule_free(r);
    }
}

static void assert_same_rule(const FaultRule *a, const FaultRule *b)
{
    g_assert_cmpint(a->link.from, ==, b->link.from);
    g_assert_cmpint(a->link.to, ==, b->link.to);
    g_assert_cmpint(a->link.both, ==, b->link.both);
    g_assert_cmpint(a->action, ==, b->action);
    g_assert_cmpuint(a->nth, ==, b->nth);
    g_assert_true(a->p == b->p);
    g_assert_cmpuint(a->bits, ==, b->bits);
    g_assert_cmpuint(a->delay_ns, ==, b->delay_ns);
    g_assert_cmpmem(a->offsets, a->n_offsets * sizeof(uint32_t),
                    b->offsets, b->n_offsets * sizeof(uint32_t));
}

static void test_canonical_round_trip(void)
{
    static const char *const rules[] = {
        "0>1 drop p=0.1", "2-1 drop p=0.3333333333333333", "*>3 drop nth=17",
        "* down", "node1>* corrupt p=0.7 bits=12",
        "0-3 corrupt p=1 offsets=100,5,77", "*-0 delay us=250",
        "1>2 drop p=1e-9", "3>2 drop p=0.12345678901234567",
    };

    for (size_t i = 0; i < G_N_ELEMENTS(rules); i++) {
        FaultRule *a = parse_ok(rules[i]);
        g_autofree char *text = fault_rule_to_string(a);
        FaultRule *b = parse_ok(text);
        g_autofree char *again = fault_rule_to_string(b);

        assert_same_rule(a, b);
        g_assert_cmpstr(text, ==, again);
        fault_rule_free(a);
        fault_rule_free(b);
    }
}

static void test_parse_invalid(void)
{
    /* Each bad rule and a fragment its error message must contain. */
    static const struct { const char *in, *message; } cases[] = {
        { "", "empty rule" },
        { "   ", "empty rule" },
        { "0>1", "missing action" },
        { "0>1 explode", "unknown action 'explode'" },
        { "0>1 drop", "drop needs nth=K or p=P" },
        { "0>1 drop q=1", "unknown key 'q'" },
        { "0>1 drop p=0.1 p=0.2", "'p' is given twice" },
        { "0>1 drop p=1.5", "out of range" },
        { "0>1 drop p=-0.1", "out of range" },
        { "0>1 drop p=abc", "bad number 'abc'" },
        { "0>1 drop p=nan", "bad number 'nan'" },
        { "0>1 drop nth=0", "nth=0 is too small" },
        { "0>1 drop nth=-1", "bad number '-1'" },
        { "0>1 drop nth=1x", "bad number '1x'" },
        { "0>1 drop nth=2 p=0.1", "not both" },
        { "0>1 drop p", "expected key=value" },
        { "0>1 drop =1", "expected key=value" },
        { "0>1 drop p=", "has no value" },
        { "0>4 down", "node 4 does not exist" },
        { "node9>1 down", "node 9 does not exist" },
        { "1>1 down", "to itself" },
        { "node2-2 down", "to itself" },
        { "0>>1 down", "bad link" },
        { "0>1-2 down", "bad link" },
        { ">1 down", "bad link" },
        { "0> down", "bad link" },
        { "a>b down", "bad node 'a'" },
        { "nodex>1 down", "bad node 'nodex'" },
        { "0>1 down x=1", "unknown key 'x' for down" },
        { "0>1 corrupt bits=3", "corrupt needs p=P" },
        { "0>1 corrupt p=0.5", "bits=K or offsets" },
        { "0>1 corrupt p=1 bits=0", "bits=0 is too small" },
        { "0>1 corrupt p=1 bits=2 offsets=1", "not both" },
        { "0>1 corrupt p=1 offsets=1,1", "listed twice" },
        { "0>1 corrupt p=1 offsets=1,x", "bad number 'x'" },
        { "0>1 corrupt p=1 offsets=1,,2", "bad number ''" },
        { "0>1 corrupt p=2 bits=1", "out of range" },
        { "0>1 delay", "delay needs" },
        { "0>1 delay ns=1 ms=1", "not several" },
        { "0>1 delay s=1", "unknown key 's' for delay" },
        { "0>1 delay ms=-5", "bad number '-5'" },
        { "0>1 delay ms=99999999999", "too large" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        FaultRule *r = fault_rule_parse(cases[i].in, NODES, &err);

        if (r) {
            g_test_message("'%s' was accepted", cases[i].in);
        }
        g_assert_null(r);
        g_assert_error(err, FAULT_ERROR, 0);
        if (!strstr(err->message, cases[i].message)) {
            g_test_message("'%s' -> '%s', expected '%s'", cases[i].in,
                           err->message, cases[i].message);
        }
        g_assert_nonnull(strstr(err->message, cases[i].message));
    }
}

static void test_link_matching(void)
{
    FaultLink l;

    g_assert_true(fault_link_parse("0-1", NODES, &l, NULL));
    g_assert_true(fault_link_matches(&l, 0, 1));
    g_assert_true(fault_link_matches(&l, 1, 0));
    g_assert_false(fault_link_matches(&l, 0, 2));

    g_assert_true(fault_link_parse("node0>node1", NODES, &l, NULL));
    g_assert_true(fault_link_matches(&l, 0, 1));
    g_assert_false(fault_link_matches(&l, 1, 0));

    g_assert_true(fault_link_parse("*>2", NODES, &l, NULL));
    g_assert_true(fault_link_matches(&l, 0, 2));
    g_assert_true(fault_link_matches(&l, 3, 2));
    g_assert_false(fault_link_matches(&l, 2, 0));

    g_assert_true(fault_link_parse("2-*", NODES, &l, NULL));
    g_assert_true(fault_link_matches(&l, 0, 2));
    g_assert_true(fault_link_matches(&l, 2, 3));
    g_assert_false(fault_link_matches(&l, 0, 1));

    g_assert_true(fault_link_parse("*", NODES, &l, NULL));
    g_assert_true(fault_link_matches(&l, 3, 1));
}

/* Evaluate one copy of a 64-byte frame on from>to; returns the outcome. */
static FaultOutcome eval(FaultRules *rs, unsigned from, unsigned to,
                         uint64_t *delay_ns)
{
    uint8_t frame[64] = { 0 };
    FaultVerdict v;

    fault_rules_eval(rs, from, to, 0, frame, sizeof(frame), 0, &v);
    g_free(v.corrupted);
    if (delay_ns) {
        *delay_ns = v.delay_ns;
    }
    return v.outcome;
}

static void test_nth_per_direction(void)
{
    FaultRules *rs = fault_rules_new(1);
    unsigned counts[NODES][NODES] = { { 0 } };
    unsigned drops[NODES][NODES] = { { 0 } };

    fault_rules_add(rs, parse_ok("0-1 drop nth=3"));
    /* Interleave the two directions and an unmatched link unevenly. */
    for (int round = 0; round < 10; round++) {
        static const unsigned pairs[][2] = {
            { 0, 1 }, { 0, 1 }, { 1, 0 }, { 0, 2 },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++) {
            unsigned a = pairs[i][0], b = pairs[i][1];

            counts[a][b]++;
            if (eval(rs, a, b, NULL) == FAULT_DROPPED) {
                drops[a][b]++;
                /* exactly the third frame of this direction */
                g_assert_cmpuint(counts[a][b], ==, 3);
            }
        }
    }
    g_assert_cmpuint(drops[0][1], ==, 1);
    g_assert_cmpuint(drops[1][0], ==, 1);
    g_assert_cmpuint(drops[0][2], ==, 0);
    g_assert_cmpuint(fault_rules_get(rs, 0)->fired, ==, 2);
    g_assert_cmpuint(fault_rules_get(rs, 0)->matched, ==, 30);
    fault_rules_free(rs);
}

static void test_p_one_and_zero(void)
{
    FaultRules *rs = fault_rules_new(2);

    fault_rules_add(rs, parse_ok("0>1 drop p=1"));
    fault_rules_add(rs, parse_ok("1>0 drop p=0"));
    for (int i = 0; i < 1000; i++) {
        g_assert_cmpint(eval(rs, 0, 1, NULL), ==, FAULT_DROPPED);
        g_assert_cmpint(eval(rs, 1, 0, NULL), ==, FAULT_PASS);
        g_assert_cmpint(eval(rs, 2, 3, NULL), ==, FAULT_PASS);
    }
    g_assert_cmpuint(fault_rules_get(rs, 0)->fired, ==, 1000);
    g_assert_cmpuint(fault_rules_get(rs, 1)->fired, ==, 0);
    g_assert_cmpuint(fault_rules_get(rs, 1)->matched, ==, 1000);
    fault_rules_free(rs);
}

static void test_corrupt_offsets(void)
{
    FaultRules *rs = fault_rules_new(3);
    uint8_t frame[16] = { 0 };
    uint8_t expect[16] = { 0 };
    FaultVerdict v;

    fault_rules_add(rs, parse_ok("0>1 corrupt p=1 offsets=0,9,127,200"));
    fault_rules_eval(rs, 0, 1, 0, frame, sizeof(frame), 0, &v);
    g_assert_cmpint(v.outcome, ==, FAULT_PASS);
    g_assert_nonnull(v.corrupted);
    expect[0] = 0x01;       /* bit 0 = LSB of byte 0 */
    expect[1] = 0x02;       /* bit 9 */
    expect[15] = 0x80;      /* bit 127; 200 is past the end */
    g_assert_cmpmem(v.corrupted, 16, expect, 16);
    g_free(v.corrupted);
    /* the caller's frame is never modified */
    memset(expect, 0, sizeof(expect));
    g_assert_cmpmem(frame, 16, expect, 16);

    /* offsets count from corrupt_from: a fabric header stays intact */
    fault_rules_eval(rs, 0, 1, 0, frame, sizeof(frame), 4, &v);
    g_assert_nonnull(v.corrupted);
    expect[4] = 0x01;
    expect[5] = 0x02;
    g_assert_cmpmem(v.corrupted, 16, expect, 16);
    g_free(v.corrupted);

    /* a one-byte frame: only offset 0 lands */
    fault_rules_eval(rs, 0, 1, 0, frame, 1, 0, &v);
    g_assert_cmphex(v.corrupted[0], ==, 0x01);
    g_free(v.corrupted);
    FaultRules *far = fault_rules_new(3);

    fault_rules_add(far, parse_ok("0>1 corrupt p=1 offsets=500"));
    fault_rules_eval(far, 0, 1, 0, frame, sizeof(frame), 0, &v);
    g_assert_null(v.corrupted);
    g_assert_cmpuint(fault_rules_get(far, 0)->fired, ==, 0);
    fault_rules_free(far);
    fault_rules_free(rs);
}

static unsigned popcount_xor(const uint8_t *a, const uint8_t *b, size_t len)
{
    unsigned n = 0;

    for (size_t i = 0; i < len; i++) {
        n += __builtin_popcount(a[i] ^ b[i]);
    }
    return n;
}

static void test_corrupt_bits(void)
{
    FaultRules *rs = fault_rules_new(4);
    uint8_t frame[60];
    FaultVerdict v;

    for (size_t i = 0; i < sizeof(frame); i++) {
        frame[i] = i * 37;
    }
    fault_rules_add(rs, parse_ok("0>1 corrupt p=1 bits=5"));
    fault_rules_add(rs, parse_ok("2>3 corrupt p=1 bits=100"));
    for (int i = 0; i < 2000; i++) {
        fault_rules_eval(rs, 0, 1, 0, frame, sizeof(frame), 0, &v);
        g_assert_nonnull(v.corrupted);
        g_assert_cmpuint(popcount_xor(frame, v.corrupted, sizeof(frame)), ==,
                         5);
        g_free(v.corrupted);
    }
    /* more bits than the payload has: every bit flips once */
    fault_rules_eval(rs, 2, 3, 0, frame, 8, 0, &v);
    g_assert_cmpuint(popcount_xor(frame, v.corrupted, 8), ==, 64);
    g_free(v.corrupted);
    /* with a protected header only the payload may change */
    fault_rules_eval(rs, 2, 3, 0, frame, 12, 4, &v);
    g_assert_cmpmem(v.corrupted, 4, frame, 4);
    g_assert_cmpuint(popcount_xor(frame, v.corrupted, 12), ==, 64);
    g_free(v.corrupted);
    fault_rules_free(rs);
}

static void test_probability_rate(void)
{
    FaultRules *rs = fault_rules_new(0x5eed);
    unsigned drops = 0;

    fault_rules_add(rs, parse_ok("0>1 drop p=0.05"));
    for (int i = 0; i < 100000; i++) {
        drops += eval(rs, 0, 1, NULL) == FAULT_DROPPED;
    }
    /* mean 5000, sigma about 69: allow 5 sigma */
    g_test_message("%u drops of 100000 at p=0.05", drops);
    g_assert_cmpuint(drops, >, 4650);
    g_assert_cmpuint(drops, <, 5350);
    fault_rules_free(rs);
}

/* Outcomes of 5000 frames on 0>1 as a string, corruption included. */
static char *decision_trace(uint64_t seed, bool other_traffic)
{
    FaultRules *rs = fault_rules_new(seed);
    GString *trace = g_string_new(NULL);
    uint8_t frame[32] = { 0 };

    fault_rules_add(rs, parse_ok("* drop p=0.3"));
    fault_rules_add(rs, parse_ok("* corrupt p=0.5 bits=2"));
    for (int i = 0; i < 5000; i++) {
        FaultVerdict v;

        if (other_traffic && i % 3 == 0) {
            fault_rules_eval(rs, 0, 2, 0, frame, sizeof(frame), 0, &v);
            g_free(v.corrupted);
            fault_rules_eval(rs, 1, 0, 0, frame, sizeof(frame), 0, &v);
            g_free(v.corrupted);
        }
        fault_rules_eval(rs, 0, 1, 0, frame, sizeof(frame), 0, &v);
        g_string_append_c(trace, "PDd"[v.outcome]);
        if (v.corrupted) {
            for (size_t b = 0; b < sizeof(frame); b++) {
                g_string_append_printf(trace, "%02x", v.corrupted[b]);
            }
            g_free(v.corrupted);
        }
    }
    fault_rules_free(rs);
    return g_string_free(trace, FALSE);
}

static void test_same_seed_same_decisions(void)
{
    g_autofree char *a = decision_trace(42, false);
    g_autofree char *b = decision_trace(42, false);
    g_autofree char *c = decision_trace(43, false);

    g_assert_cmpstr(a, ==, b);
    g_assert_cmpstr(a, !=, c);
    /* plausibility: both outcomes and corruption do occur */
    g_assert_nonnull(strchr(a, 'D'));
    g_assert_nonnull(strchr(a, 'P'));
}

static void test_links_independent(void)
{
    g_autofree char *quiet = decision_trace(7, false);
    g_autofree char *busy = decision_trace(7, true);

    g_assert_cmpstr(quiet, ==, busy);
}

static void test_delay_down_and_order(void)
{
    FaultRules *rs = fault_rules_new(5);
    uint64_t delay;
    unsigned id_down, id_delay;

    fault_rules_add(rs, parse_ok("0>1 delay us=1"));
    id_delay = fault_rules_add(rs, parse_ok("0-1 delay ns=2000"));
    g_assert_cmpint(eval(rs, 0, 1, &delay), ==, FAULT_PASS);
    g_assert_cmpuint(delay, ==, 3000);
    g_assert_cmpint(eval(rs, 1, 0, &delay), ==, FAULT_PASS);
    g_assert_cmpuint(delay, ==, 2000);

    id_down = fault_rules_add(rs, parse_ok("*>1 down"));
    g_assert_cmpint(eval(rs, 0, 1, &delay), ==, FAULT_DOWNED);
    g_assert_cmpuint(delay, ==, 0);
    g_assert_cmpint(eval(rs, 2, 1, NULL), ==, FAULT_DOWNED);

    /* a drop stops evaluation: later rules do not see the copy */
    FaultRules *order = fault_rules_new(5);

    fault_rules_add(order, parse_ok("0>1 drop p=1"));
    fault_rules_add(order, parse_ok("0>1 drop nth=1"));
    g_assert_cmpint(eval(order, 0, 1, NULL), ==, FAULT_DROPPED);
    g_assert_cmpuint(fault_rules_get(order, 1)->matched, ==, 0);
    fault_rules_free(order);

    /* ids are never reused; del and clear work */
    g_assert_true(fault_rules_del(rs, id_down));
    g_assert_false(fault_rules_del(rs, id_down));
    g_assert_cmpint(eval(rs, 0, 1, &delay), ==, FAULT_PASS);
    g_assert_cmpuint(fault_rules_add(rs, parse_ok("* down")), >, id_down);
    g_assert_true(fault_rules_del(rs, id_delay));
    g_assert_cmpuint(fault_rules_count(rs), ==, 2);
    fault_rules_clear(rs);
    g_assert_cmpuint(fault_rules_count(rs), ==, 0);
    g_assert_cmpint(eval(rs, 0, 1, &delay), ==, FAULT_PASS);
    g_assert_cmpuint(delay, ==, 0);
    fault_rules_free(rs);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/fault/parse-valid", test_parse_valid);
    g_test_add_func("/fault/canonical-round-trip", test_canonical_round_trip);
    g_test_add_func("/fault/parse-invalid", test_parse_invalid);
    g_test_add_func("/fault/link-matching", test_link_matching);
    g_test_add_func("/fault/nth-per-direction", test_nth_per_direction);
    g_test_add_func("/fault/p-one-and-zero", test_p_one_and_zero);
    g_test_add_func("/fault/corrupt-offsets", test_corrupt_offsets);
    g_test_add_func("/fault/corrupt-bits", test_corrupt_bits);
    g_test_add_func("/fault/probability-rate", test_probability_rate);
    g_test_add_func("/fault/same-seed-same-decisions",
                    test_same_seed_same_decisions);
    g_test_add_func("/fault/links-independent", test_links_independent);
    g_test_add_func("/fault/delay-down-order", test_delay_down_and_order);
    return g_test_run();
}
