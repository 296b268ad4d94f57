/*
 * Unit tests for fault rules (fault.c): parser, canonical text, and the
 * evaluator's decisions.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <math.h>
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
        /* partitions */
        { "2|0,1 down", "0,1|2 down" },
        { "node2|node1,0 drop p=0.5", "0,1|2 drop p=0.5" },
        { "2>|1,0 down", "2>|0,1 down" },
        { "1,0|* down", "0,1|* down" },
        { "3,1>|* drop p=1", "1,3>|* drop p=1" },
        { "0,3|1,2 down", "0,3|1,2 down" },
        { "1,2|3,0 down", "0,3|1,2 down" },
        /* bursty loss, duplication, reordering, jitter */
        { "0>1 drop ge p=0.01 r=0.25", "0>1 drop ge p=0.01 r=0.25" },
        { "0>1 drop ge r=0.5 p=0.1 h=0 k=1", "0>1 drop ge p=0.1 r=0.5" },
        { "0>1 drop  ge p=0.1 r=0.5 h=0.2 k=0.99",
          "0>1 drop ge p=0.1 r=0.5 h=0.2 k=0.99" },
        { "* duplicate p=0.1", "* duplicate p=0.1" },
        { "1-0 reorder p=0.2 ms=3", "0-1 reorder p=0.2 ns=3000000" },
        { "0>1 reorder p=1 ns=1", "0>1 reorder p=1 ns=1" },
        { "0>1 delay ms=5 jitter=1ms", "0>1 delay ns=5000000 jitter=1ms" },
        { "0>1 delay ms=5 jitter=0ns", "0>1 delay ns=5000000" },
        { "0>1 delay us=10 jitter=2500ns", "0>1 delay ns=10000 jitter=2500ns" },
        { "0>1 delay ms=5 jitter=5000us", "0>1 delay ns=5000000 jitter=5ms" },
        /* schedules */
        { "0>1 down at=1s for=500ms", "0>1 down at=1s until=1500ms" },
        { "0>1 drop p=0.1 at=2s until=2500ms",
          "0>1 drop p=0.1 at=2s until=2500ms" },
        { "0>1 drop p=0.1 until=3000ms", "0>1 drop p=0.1 until=3s" },
        { "0>1 drop p=0.1 at=0s", "0>1 drop p=0.1" },
        { "0>1 down at=0s for=1us", "0>1 down until=1us" },
        { "* corrupt p=1 bits=1 at=1000000000ns", "* corrupt p=1 bits=1 at=1s" },
        { "2|0,1 down at=1s for=2s", "0,1|2 down at=1s until=3s" },
        { "0>1 duplicate p=0.5 at=7ns", "0>1 duplicate p=0.5 at=7ns" },
        { "0>1 delay ms=1 jitter=1ms until=1000000000s",
          "0>1 delay ns=1000000 jitter=1ms until=1000000000s" },
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
    g_assert_true(fault_link_equal(&a->link, &b->link));
    g_assert_cmpint(a->action, ==, b->action);
    g_assert_cmpuint(a->nth, ==, b->nth);
    g_assert_true(a->p == b->p);
    g_assert_true(a->ge_r == b->ge_r);
    g_assert_true(a->ge_h == b->ge_h);
    g_assert_true(a->ge_k == b->ge_k);
    g_assert_cmpuint(a->bits, ==, b->bits);
    g_assert_cmpuint(a->delay_ns, ==, b->delay_ns);
    g_assert_cmpuint(a->jitter_ns, ==, b->jitter_ns);
    g_assert_cmpuint(a->at_ns, ==, b->at_ns);
    g_assert_cmpuint(a->until_ns, ==, b->until_ns);
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
        "2|0,1 down at=1s for=500ms", "3>|1,0 drop p=0.5", "2,3|* down",
        "0>1 drop ge p=0.0123 r=0.3333333333333333 h=0.1 k=0.999",
        "0>1 drop ge p=1 r=0", "* duplicate p=0.25 until=17us",
        "1-2 reorder p=0.5 us=250 at=3ms", "0>3 delay ms=7 jitter=3333ns",
        "*>1 corrupt p=0.5 offsets=3,1 at=1000000001ns until=2s",
        "0>1 delay ns=1 jitter=1ns at=1ns for=1ns",
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
        { "0>1 explode", "(expected drop, drop ge, corrupt, delay, down, "
                         "duplicate or reorder)" },
        { "0>1 ge p=1", "unknown action 'ge'" },
        /* schedules */
        { "0>1 drop p=0.1 at=5", "bad time '5' for at (expected a whole "
                                 "number and a unit: ns, us, ms or s, e.g. "
                                 "at=2s)" },
        { "0>1 drop p=0.1 at=1.5s", "bad time '1.5s' for at" },
        { "0>1 drop p=0.1 at=s", "bad time 's' for at" },
        { "0>1 drop p=0.1 at=1h", "bad time '1h' for at" },
        { "0>1 drop p=0.1 at=-1s", "bad time '-1s' for at" },
        { "0>1 down until=2ms5", "bad time '2ms5' for until" },
        { "0>1 down at=2s until=1s",
          "until=1s is not after at=2s (a rule is active from at to before "
          "until)" },
        { "0>1 down at=2s until=2000ms", "until=2000ms is not after at=2s" },
        { "0>1 down until=0s", "until=0s is not after at=0s" },
        { "0>1 down for=1s", "for=1s needs at=T" },
        { "0>1 down at=1s until=2s for=1s",
          "until= and for= are alternatives, not both" },
        { "0>1 down at=1s for=0ms", "for=0ms is an empty window" },
        { "0>1 down at=1000000001s", "at=1000000001s is too large "
                                     "(maximum 1000000000s)" },
        { "0>1 down at=99999999999999999999999ns", "too large" },
        { "0>1 down at=1s for=x", "bad time 'x' for for" },
        { "0>1 down at=1s at=2s", "'at' is given twice" },
        { "0>1 down at=", "has no value" },
        { "0>1 down x=1", "(accepted: at, until, for)" },
        /* drop ge */
        { "0>1 drop ge", "drop ge needs p=P and r=R" },
        { "0>1 drop ge p=0.1", "drop ge needs p=P and r=R" },
        { "0>1 drop ge r=0.1", "drop ge needs p=P and r=R" },
        { "0>1 drop ge p=0.1 r=2", "r=2 is out of range" },
        { "0>1 drop ge p=0.1 r=0.5 h=x", "bad number 'x' for h" },
        { "0>1 drop ge p=0.1 r=0.5 k=-1", "k=-1 is out of range" },
        { "0>1 drop ge p=0.1 r=0.5 nth=3",
          "unknown key 'nth' for drop ge (accepted: p, r, h, k, at, until, "
          "for)" },
        { "0>1 drop r=0.5", "unknown key 'r' for drop" },
        /* duplicate, reorder, jitter */
        { "0>1 duplicate", "duplicate needs p=P" },
        { "0>1 duplicate p=1.5", "p=1.5 is out of range" },
        { "0>1 duplicate p=0.1 ms=1", "unknown key 'ms' for duplicate" },
        { "0>1 reorder ms=1", "reorder needs p=P" },
        { "0>1 reorder p=0.1", "reorder needs ns=N, us=N or ms=N" },
        { "0>1 reorder p=0.1 ms=0", "ms=0 is too small (minimum 1)" },
        { "0>1 reorder p=0.1 ns=1 us=1", "not several" },
        { "0>1 reorder p=0.1 ms=3600001", "too large" },
        { "0>1 reorder p=0.1 ms=1 jitter=1ms", "unknown key 'jitter'" },
        { "0>1 delay ms=1 jitter=2ms",
          "jitter=2ms is more than the delay (1ms)" },
        { "0>1 delay ms=1 jitter=1000001ns", "is more than the delay" },
        { "0>1 delay ms=1 jitter=5", "bad time '5' for jitter" },
        { "0>1 delay jitter=1ms", "delay needs ns=N, us=N or ms=N" },
        { "0>1 delay ms=1 jitter=2h", "bad time '2h'" },
        { "0>1 drop p=0.1 jitter=1ms", "unknown key 'jitter' for drop" },
        /* partitions */
        { "2|2 down", "node 2 is on both sides of link '2|2'" },
        { "2|0,1,node2 down", "node 2 is on both sides" },
        { "2|0,0 down", "node 0 is listed twice in link '2|0,0'" },
        { "2| down", "bad link '2|'" },
        { "|1 down", "bad link '|1'" },
        { ">|1 down", "bad link '>|1'" },
        { "2|0|1 down", "bad link '2|0|1'" },
        { "*|1 down", "* stands alone" },
        { "2|0,* down", "* stands alone" },
        { "2|0,x down", "bad node 'x'" },
        { "2|0,,1 down", "bad node ''" },
        { "2|0,4 down", "node 4 does not exist" },
        { "0,1,2,3|* down", "leaves no node on the other side" },
        { "0>1,2 down", "needs the partition form S|T or S>|T" },
        { "0-1|2 down", "bad node '0-1'" },
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

/* Which of the 12 directed links of 4 nodes `text` matches, as "0>1 ..." */
static char *matched_links(const char *text)
{
    GString *s = g_string_new(NULL);
    FaultLink l;

    g_assert_true(fault_link_parse(text, NODES, &l, NULL));
    for (unsigned a = 0; a < NODES; a++) {
        for (unsigned b = 0; b < NODES; b++) {
            if (a != b && fault_link_matches(&l, a, b)) {
                g_string_append_printf(s, "%s%u>%u", s->len ? " " : "", a,
                                       b);
            }
        }
    }
    return g_string_free(s, FALSE);
}

static void test_partition_matching(void)
{
    static const struct { const char *link, *matches; } cases[] = {
        { "2|0,1", "0>2 1>2 2>0 2>1" },
        { "0,1|2", "0>2 1>2 2>0 2>1" },
        { "2>|0,1", "2>0 2>1" },
        { "0,1>|2", "0>2 1>2" },
        { "0,1|*", "0>2 0>3 1>2 1>3 2>0 2>1 3>0 3>1" },
        { "0,1>|*", "0>2 0>3 1>2 1>3" },
        { "3|*", "0>3 1>3 2>3 3>0 3>1 3>2" },
        { "0,3|1,2", "0>1 0>2 1>0 1>3 2>0 2>3 3>1 3>2" },
        { "0|1", "0>1 1>0" },
        /* the old forms, for comparison */
        { "*-2", "0>2 1>2 2>0 2>1 2>3 3>2" },
        { "2>0", "2>0" },
    };
    FaultLink a, b;

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got = matched_links(cases[i].link);

        if (strcmp(got, cases[i].matches)) {
            g_test_message("%s matches '%s'", cases[i].link, got);
        }
        g_assert_cmpstr(got, ==, cases[i].matches);
    }
    /* a partition is the same rule however its sides are written */
    g_assert_true(fault_link_parse("2|1,0", NODES, &a, NULL));
    g_assert_true(fault_link_parse("node0,node1|node2", NODES, &b, NULL));
    g_assert_true(fault_link_equal(&a, &b));
    g_assert_true(fault_link_parse("2>|0,1", NODES, &b, NULL));
    g_assert_false(fault_link_equal(&a, &b));
    g_assert_true(fault_link_parse("0|1", NODES, &a, NULL));
    g_assert_true(fault_link_parse("0-1", NODES, &b, NULL));
    g_assert_false(fault_link_equal(&a, &b));   /* same links, other form */
    /* node ids past a small fabric's never match */
    g_assert_true(fault_link_parse("0|*", NODES, &a, NULL));
    g_assert_false(fault_link_matches(&a, 0, FAULT_MAX_NODES + 5));
    g_assert_false(fault_link_matches(&a, FAULT_MAX_NODES, 1));
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

/* One copy of a 64-byte frame on from>to at rule time `now`. */
static FaultVerdict eval_at(FaultRules *rs, unsigned from, unsigned to,
                            uint64_t now)
{
    uint8_t frame[64] = { 0 };
    FaultVerdict v;

    fault_rules_eval(rs, from, to, now, frame, sizeof(frame), 0, &v);
    g_free(v.corrupted);
    v.corrupted = NULL;
    return v;
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

#define MS 1000000ull
#define SEC 1000000000ull

static void test_schedule_window(void)
{
    FaultRules *rs = fault_rules_new(9);
    const FaultRule *r;

    fault_rules_add(rs, parse_ok("0>1 drop p=1 at=1ms until=2ms"));
    r = fault_rules_get(rs, 0);
    /* active in [at, until): both boundaries */
    g_assert_cmpint(eval_at(rs, 0, 1, 0).outcome, ==, FAULT_PASS);
    g_assert_cmpint(eval_at(rs, 0, 1, MS - 1).outcome, ==, FAULT_PASS);
    g_assert_cmpuint(r->matched, ==, 0);
    g_assert_cmpint(eval_at(rs, 0, 1, MS).outcome, ==, FAULT_DROPPED);
    g_assert_cmpint(eval_at(rs, 0, 1, 2 * MS - 1).outcome, ==,
                    FAULT_DROPPED);
    g_assert_cmpint(eval_at(rs, 0, 1, 2 * MS).outcome, ==, FAULT_PASS);
    g_assert_cmpint(eval_at(rs, 0, 1, 100 * SEC).outcome, ==, FAULT_PASS);
    /* outside its window it is not even counted as matched */
    g_assert_cmpuint(r->matched, ==, 2);
    g_assert_cmpuint(r->fired, ==, 2);
    g_assert_false(fault_rule_active(r, MS - 1));
    g_assert_true(fault_rule_active(r, MS));
    g_assert_false(fault_rule_active(r, 2 * MS));
    fault_rules_free(rs);

    /* a link down for a duration; find_down() sees the window too */
    rs = fault_rules_new(9);
    fault_rules_add(rs, parse_ok("0-1 down at=1s for=500ms"));
    fault_rules_add(rs, parse_ok("0>1 delay us=3 until=1s"));
    g_assert_null(fault_rules_find_down(rs, 0, 1, SEC - 1));
    g_assert_nonnull(fault_rules_find_down(rs, 0, 1, SEC));
    g_assert_nonnull(fault_rules_find_down(rs, 1, 0, SEC + 499 * MS));
    g_assert_null(fault_rules_find_down(rs, 1, 0, SEC + 500 * MS));
    g_assert_null(fault_rules_find_down(rs, 0, 2, SEC));
    g_assert_cmpuint(eval_at(rs, 0, 1, SEC - 1).delay_ns, ==, 3000);
    g_assert_cmpint(eval_at(rs, 0, 1, SEC).outcome, ==, FAULT_DOWNED);
    g_assert_cmpint(eval_at(rs, 1, 0, SEC + 250 * MS).outcome, ==,
                    FAULT_DOWNED);
    FaultVerdict v = eval_at(rs, 0, 1, SEC + 500 * MS);

    g_assert_cmpint(v.outcome, ==, FAULT_PASS);
    g_assert_cmpuint(v.delay_ns, ==, 0);
    g_assert_cmpuint(fault_rules_get(rs, 0)->fired, ==, 2);
    /* a partition with a window */
    fault_rules_clear(rs);
    fault_rules_add(rs, parse_ok("2|0,1 down at=2s until=3s"));
    g_assert_cmpint(eval_at(rs, 2, 0, 2 * SEC).outcome, ==, FAULT_DOWNED);
    g_assert_cmpint(eval_at(rs, 1, 2, 2 * SEC).outcome, ==, FAULT_DOWNED);
    g_assert_cmpint(eval_at(rs, 0, 1, 2 * SEC).outcome, ==, FAULT_PASS);
    g_assert_cmpint(eval_at(rs, 3, 2, 2 * SEC).outcome, ==, FAULT_PASS);
    g_assert_cmpint(eval_at(rs, 2, 0, 3 * SEC).outcome, ==, FAULT_PASS);
    fault_rules_free(rs);
}

/*
 * Decisions inside the window [1s, 2s) of random rules, as text; with
 * `outside`, copies before and after the window are evaluated too.
 */
static char *window_trace(bool outside)
{
    static const char *const rules[] = {
        "0>1 drop p=0.3 at=1s for=1s",
        "0>1 drop ge p=0.1 r=0.4 k=0.9 at=1s until=2s",
        "0>1 corrupt p=0.5 bits=3 at=1s until=2s",
        "0>1 delay ms=5 jitter=1ms at=1s until=2s",
        "0>1 duplicate p=0.3 at=1s until=2s",
        "0>1 reorder p=0.3 us=7 at=1s until=2s",
    };
    FaultRules *rs = fault_rules_new(0xabc);
    GString *trace = g_string_new(NULL);
    uint8_t frame[32] = { 0 };
    FaultVerdict v;

    for (size_t i = 0; i < G_N_ELEMENTS(rules); i++) {
        fault_rules_add(rs, parse_ok(rules[i]));
    }
    for (int i = 0; outside && i < 500; i++) {
        fault_rules_eval(rs, 0, 1, i * MS, frame, sizeof(frame), 0, &v);
        g_assert_null(v.corrupted);
        g_assert_cmpint(v.outcome, ==, FAULT_PASS);
        g_assert_cmpuint(v.delay_ns | v.reorder_ns | v.duplicates, ==, 0);
    }
    for (int i = 0; i < 3000; i++) {
        fault_rules_eval(rs, 0, 1, SEC + i * 1000, frame, sizeof(frame), 0,
                         &v);
        g_string_append_printf(trace, "%c%" G_GUINT64_FORMAT ",%"
                               G_GUINT64_FORMAT ",%u", "PDd"[v.outcome],
                               v.delay_ns, v.reorder_ns, v.duplicates);
        if (v.corrupted) {
            for (size_t b = 0; b < sizeof(frame); b++) {
                g_string_append_printf(trace, "%02x", v.corrupted[b]);
            }
            g_free(v.corrupted);
        }
        g_string_append_c(trace, ' ');
    }
    for (int i = 0; outside && i < 500; i++) {
        fault_rules_eval(rs, 0, 1, 2 * SEC + i, frame, sizeof(frame), 0, &v);
        g_assert_cmpint(v.outcome, ==, FAULT_PASS);
    }
    /* only the copies inside count */
    g_assert_cmpuint(fault_rules_get(rs, 0)->matched, ==, 3000);
    fault_rules_free(rs);
    return g_string_free(trace, FALSE);
}

static void test_schedule_no_draw_outside(void)
{
    g_autofree char *quiet = window_trace(false);
    g_autofree char *busy = window_trace(true);

    /* (not cmpstr: a failure would print both traces) */
    g_assert_true(strcmp(quiet, busy) == 0);
    /* plausibility: every model acted inside */
    g_assert_nonnull(strchr(quiet, 'D'));
    g_assert_nonnull(strstr(quiet, ",7000,"));
    g_assert_nonnull(strstr(quiet, ",1 "));
}

/* n copies on 0>1 of `rule`: the loss rate and the mean loss burst. */
static void ge_run(const char *rule, uint64_t seed, unsigned n,
                   double *rate, double *mean_burst)
{
    FaultRules *rs = fault_rules_new(seed);
    unsigned lost = 0, bursts = 0, run = 0;

    fault_rules_add(rs, parse_ok(rule));
    for (unsigned i = 0; i < n; i++) {
        if (eval_at(rs, 0, 1, i).outcome == FAULT_DROPPED) {
            lost++;
            run++;
        } else if (run) {
            bursts++;
            run = 0;
        }
    }
    bursts += run > 0;
    g_assert_cmpuint(fault_rules_get(rs, 0)->fired, ==, lost);
    *rate = (double)lost / n;
    *mean_burst = bursts ? (double)lost / bursts : 0;
    g_test_message("%s: loss %.5f, %u bursts of mean %.3f", rule, *rate,
                   bursts, *mean_burst);
    fault_rules_free(rs);
}

static double ge_stationary(double p, double r, double h, double k)
{
    return p / (p + r) * (1 - h) + r / (p + r) * (1 - k);
}

static void test_gilbert_elliott(void)
{
    double rate, burst, want;

    /* h=0, k=1: every copy in Bad is lost, none in Good */
    ge_run("0>1 drop ge p=0.01 r=0.25", 0x6e, 200000, &rate, &burst);
    want = ge_stationary(0.01, 0.25, 0, 1);
    g_assert_cmpfloat(fabs(rate - want), <, 0.08 * want);
    /* loss bursts are the Bad sojourns: geometric, mean 1/r */
    g_assert_cmpfloat(fabs(burst - 1 / 0.25), <, 0.08 / 0.25);

    ge_run("0>1 drop ge p=0.002 r=0.5", 0x6f, 200000, &rate, &burst);
    want = ge_stationary(0.002, 0.5, 0, 1);
    g_assert_cmpfloat(fabs(rate - want), <, 0.15 * want);
    g_assert_cmpfloat(fabs(burst - 2), <, 0.25);

    /* losses in both states */
    ge_run("0>1 drop ge p=0.05 r=0.2 h=0.3 k=0.95", 0x70, 200000, &rate,
           &burst);
    want = ge_stationary(0.05, 0.2, 0.3, 0.95);
    g_assert_cmpfloat(fabs(rate - want), <, 0.06 * want);

    /* the same total loss, but bursty vs independent: bursts differ */
    double bernoulli_rate, bernoulli_burst;

    ge_run("0>1 drop p=0.03846", 0x6e, 200000, &bernoulli_rate,
           &bernoulli_burst);
    g_assert_cmpfloat(bernoulli_burst, <, 1.1);

    /* starts Good; the copy's loss is decided in the state it found */
    FaultRules *rs = fault_rules_new(1);

    fault_rules_add(rs, parse_ok("0>1 drop ge p=1 r=0"));
    g_assert_cmpint(eval_at(rs, 0, 1, 0).outcome, ==, FAULT_PASS);
    for (int i = 0; i < 100; i++) {
        g_assert_cmpint(eval_at(rs, 0, 1, 0).outcome, ==, FAULT_DROPPED);
    }
    /* the state is per directed link: 1>0 starts Good too */
    fault_rules_add(rs, parse_ok("1>0 drop ge p=1 r=0"));
    g_assert_cmpint(eval_at(rs, 1, 0, 0).outcome, ==, FAULT_PASS);
    g_assert_cmpint(eval_at(rs, 1, 0, 0).outcome, ==, FAULT_DROPPED);
    fault_rules_clear(rs);
    /* p=0: stays Good; k=1 loses nothing */
    fault_rules_add(rs, parse_ok("0>1 drop ge p=0 r=1"));
    for (int i = 0; i < 1000; i++) {
        g_assert_cmpint(eval_at(rs, 0, 1, 0).outcome, ==, FAULT_PASS);
    }
    /* Bad with h=1 loses nothing either, Good with k=0 everything */
    fault_rules_clear(rs);
    fault_rules_add(rs, parse_ok("0>1 drop ge p=1 r=0 h=1 k=0"));
    g_assert_cmpint(eval_at(rs, 0, 1, 0).outcome, ==, FAULT_DROPPED);
    for (int i = 0; i < 1000; i++) {
        g_assert_cmpint(eval_at(rs, 0, 1, 0).outcome, ==, FAULT_PASS);
    }
    fault_rules_free(rs);
}

static void test_duplicate(void)
{
    FaultRules *rs = fault_rules_new(0xd0b);
    unsigned dups = 0;

    fault_rules_add(rs, parse_ok("0>1 duplicate p=0.1"));
    for (int i = 0; i < 100000; i++) {
        FaultVerdict v = eval_at(rs, 0, 1, 0);

        g_assert_cmpint(v.outcome, ==, FAULT_PASS);
        g_assert_cmpuint(v.duplicates, <=, 1);
        g_assert_cmpuint(v.delay_ns | v.reorder_ns, ==, 0);
        dups += v.duplicates;
    }
    /* mean 10000, sigma about 95 */
    g_test_message("%u duplicates of 100000 at p=0.1", dups);
    g_assert_cmpuint(dups, >, 9500);
    g_assert_cmpuint(dups, <, 10500);
    g_assert_cmpuint(fault_rules_get(rs, 0)->fired, ==, dups);
    g_assert_cmpuint(eval_at(rs, 1, 0, 0).duplicates, ==, 0);

    /* never more than one extra copy, however many rules say so */
    fault_rules_clear(rs);
    fault_rules_add(rs, parse_ok("0>1 duplicate p=1"));
    fault_rules_add(rs, parse_ok("* duplicate p=1"));
    for (int i = 0; i < 100; i++) {
        g_assert_cmpuint(eval_at(rs, 0, 1, 0).duplicates, ==, 1);
    }
    g_assert_cmpuint(fault_rules_get(rs, 1)->matched, ==, 100);
    g_assert_cmpuint(fault_rules_get(rs, 1)->fired, ==, 0);
    /* a dropped copy is not duplicated */
    fault_rules_add(rs, parse_ok("0>1 drop p=1"));
    FaultVerdict v = eval_at(rs, 0, 1, 0);

    g_assert_cmpint(v.outcome, ==, FAULT_DROPPED);
    g_assert_cmpuint(v.duplicates, ==, 0);
    fault_rules_free(rs);
}

static void test_reorder(void)
{
    FaultRules *rs = fault_rules_new(0x7e0);
    unsigned reordered = 0;

    fault_rules_add(rs, parse_ok("0>1 reorder p=0.2 ms=3"));
    fault_rules_add(rs, parse_ok("0>1 delay us=10"));
    for (int i = 0; i < 100000; i++) {
        FaultVerdict v = eval_at(rs, 0, 1, 0);

        /* exactly D, apart from the order-keeping delay */
        g_assert_true(v.reorder_ns == 0 || v.reorder_ns == 3 * MS);
        g_assert_cmpuint(v.delay_ns, ==, 10000);
        reordered += v.reorder_ns != 0;
    }
    /* mean 20000, sigma about 126 */
    g_test_message("%u reordered of 100000 at p=0.2", reordered);
    g_assert_cmpuint(reordered, >, 19300);
    g_assert_cmpuint(reordered, <, 20700);
    g_assert_cmpuint(fault_rules_get(rs, 0)->fired, ==, reordered);
    fault_rules_free(rs);
}

static void test_jitter(void)
{
    FaultRules *rs = fault_rules_new(0x1177);
    uint64_t lo = UINT64_MAX, hi = 0;
    double sum = 0;
    enum { N = 100000 };

    fault_rules_add(rs, parse_ok("0>1 delay ms=5 jitter=1ms"));
    for (int i = 0; i < N; i++) {
        uint64_t d = eval_at(rs, 0, 1, 0).delay_ns;

        g_assert_cmpuint(d, >=, 4 * MS);
        g_assert_cmpuint(d, <=, 6 * MS);
        lo = MIN(lo, d);
        hi = MAX(hi, d);
        sum += d;
    }
    /* uniform: sigma of the mean 577 us / sqrt(N), about 1.8 us */
    g_test_message("jitter: min %" G_GUINT64_FORMAT " max %" G_GUINT64_FORMAT
                   " mean %.0f", lo, hi, sum / N);
    g_assert_cmpfloat(fabs(sum / N - 5e6), <, 10e3);
    g_assert_cmpuint(lo, <, 4 * MS + 20000);
    g_assert_cmpuint(hi, >, 6 * MS - 20000);

    /* J = D: down to zero, and a zero delay is not counted as fired */
    fault_rules_clear(rs);
    fault_rules_add(rs, parse_ok("0>1 delay ns=1 jitter=1ns"));
    unsigned seen[3] = { 0 };

    for (int i = 0; i < 3000; i++) {
        uint64_t d = eval_at(rs, 0, 1, 0).delay_ns;

        g_assert_cmpuint(d, <=, 2);
        seen[d]++;
    }
    g_assert_cmpuint(seen[0], >, 800);
    g_assert_cmpuint(seen[1], >, 800);
    g_assert_cmpuint(seen[2], >, 800);
    g_assert_cmpuint(fault_rules_get(rs, 0)->fired, ==, 3000 - seen[0]);
    fault_rules_free(rs);
}

/* The new models' decisions for 5000 copies on 0>1 as a string. */
static char *model_trace(uint64_t seed)
{
    static const char *const rules[] = {
        "* drop ge p=0.1 r=0.3 h=0.1 k=0.98", "* duplicate p=0.2",
        "* reorder p=0.3 us=50", "* delay ms=1 jitter=500us",
        "2|0,1 drop p=0.5", "0,1|3 corrupt p=0.5 bits=1",
    };
    FaultRules *rs = fault_rules_new(seed);
    GString *trace = g_string_new(NULL);

    for (size_t i = 0; i < G_N_ELEMENTS(rules); i++) {
        fault_rules_add(rs, parse_ok(rules[i]));
    }
    for (int i = 0; i < 5000; i++) {
        FaultVerdict v = eval_at(rs, 0, 1, i);

        g_string_append_printf(trace, "%c%u,%" G_GUINT64_FORMAT ",%"
                               G_GUINT64_FORMAT " ", "PDd"[v.outcome],
                               v.duplicates, v.reorder_ns, v.delay_ns);
        v = eval_at(rs, i % 2 ? 2 : 0, i % 2 ? 0 : 2, i);
        g_string_append_c(trace, "PDd"[v.outcome]);
    }
    fault_rules_free(rs);
    return g_string_free(trace, FALSE);
}

static void test_models_same_seed(void)
{
    g_autofree char *a = model_trace(42);
    g_autofree char *b = model_trace(42);
    g_autofree char *c = model_trace(43);

    g_assert_cmpstr(a, ==, b);
    g_assert_cmpstr(a, !=, c);
    g_assert_nonnull(strstr(a, "D0,0,0"));
    g_assert_nonnull(strstr(a, "P1,"));
    g_assert_nonnull(strstr(a, ",50000,"));
}

/* A check callback: refuses duplicate rules, as ps1 does. */
static bool no_duplicates(const FaultRule *r, void *opaque, GError **err)
{
    (*(unsigned *)opaque)++;
    if (r->action == FAULT_DUPLICATE) {
        g_set_error(err, FAULT_ERROR, 0, "no duplicates here");
        return false;
    }
    return true;
}

static void file_err(const char *text, size_t len, const char *message)
{
    g_autoptr(GError) err = NULL;
    unsigned checked = 0;
    GPtrArray *rules = fault_file_parse(text, len, "faults.txt", NODES,
                                        no_duplicates, &checked, &err);

    g_assert_null(rules);
    g_assert_error(err, FAULT_ERROR, 0);
    if (strcmp(err->message, message)) {
        g_test_message("got '%s', expected '%s'", err->message, message);
    }
    g_assert_cmpstr(err->message, ==, message);
}

static void test_fault_file(void)
{
    static const char text[] =
        "# faults for run 7\n"
        "\n"
        "0>1 drop p=0.1   # 10 % loss\n"
        "  2|0,1 down at=1s for=500ms\r\n"
        "\t \n"
        "#0>1 duplicate p=1\n"
        "* delay ms=5 jitter=1ms";
    g_autoptr(GError) err = NULL;
    unsigned checked = 0;
    GPtrArray *rules = fault_file_parse(text, strlen(text), "f", NODES,
                                        no_duplicates, &checked, &err);
    static const char *const want[] = {
        "0>1 drop p=0.1", "0,1|2 down at=1s until=1500ms",
        "* delay ns=5000000 jitter=1ms",
    };

    g_assert_no_error(err);
    g_assert_cmpuint(rules->len, ==, G_N_ELEMENTS(want));
    g_assert_cmpuint(checked, ==, G_N_ELEMENTS(want));
    for (unsigned i = 0; i < rules->len; i++) {
        g_autofree char *s = fault_rule_to_string(rules->pdata[i]);

        g_assert_cmpstr(s, ==, want[i]);
    }
    g_ptr_array_free(rules, TRUE);

    /* nothing, or only comments: no rules, no error */
    rules = fault_file_parse("", 0, "f", NODES, NULL, NULL, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(rules->len, ==, 0);
    g_ptr_array_free(rules, TRUE);
    rules = fault_file_parse("# x\n\n#\n", 7, "f", NODES, NULL, NULL, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(rules->len, ==, 0);
    g_ptr_array_free(rules, TRUE);

    /* errors name the file and the line */
    file_err("0>1 drop p=0.1\n\n0>1 drop p=2\n", 29,
             "faults.txt:3: p=2 is out of range (a probability is between "
             "0 and 1)");
    file_err("# header\n0>1 down for=1s", 24,
             "faults.txt:2: for=1s needs at=T (the rule is active from at=T "
             "to at+for)");
    file_err("0>1 drop p=0.1\n0>1 duplicate p=0.5 # dup\n", 41,
             "faults.txt:2: no duplicates here");
    file_err("0>1 down\n0>9 down\n", 18,
             "faults.txt:2: node 9 does not exist (this fabric has nodes "
             "0..3)");
    file_err("0>1 down\n0>1 down\0\n", 19,
             "faults.txt:2: a NUL byte (a fault file is text)");
    file_err("0>1 down\r\n2|2 down\r\n", 20,
             "faults.txt:2: node 2 is on both sides of link '2|2'");

    /* FAULT_MAX_RULES rules fit, one more does not */
    GString *many = g_string_new(NULL);

    for (int i = 0; i < FAULT_MAX_RULES; i++) {
        g_string_append(many, "0>1 drop p=0.5\n");
    }
    rules = fault_file_parse(many->str, many->len, "f", NODES, NULL, NULL,
                             &err);
    g_assert_no_error(err);
    g_assert_cmpuint(rules->len, ==, FAULT_MAX_RULES);
    g_ptr_array_free(rules, TRUE);
    g_string_append(many, "# one more:\n0>1 down\n");
    file_err(many->str, many->len,
             "faults.txt:1026: more than 1024 rules (the limit of a fabric)");
    g_string_free(many, TRUE);
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
    g_test_add_func("/fault/partition-matching", test_partition_matching);
    g_test_add_func("/fault/schedule-window", test_schedule_window);
    g_test_add_func("/fault/schedule-no-draw-outside",
                    test_schedule_no_draw_outside);
    g_test_add_func("/fault/gilbert-elliott", test_gilbert_elliott);
    g_test_add_func("/fault/duplicate", test_duplicate);
    g_test_add_func("/fault/reorder", test_reorder);
    g_test_add_func("/fault/jitter", test_jitter);
    g_test_add_func("/fault/models-same-seed", test_models_same_seed);
    g_test_add_func("/fault/fault-file", test_fault_file);
    return g_test_run();
}
