/*
 * Unit tests for prng.c: known answers, reproducibility, stream
 * independence, bounded draws.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>

#include "prng.h"

static void test_splitmix_known_answer(void)
{
    uint64_t state = 0;

    g_assert_cmphex(splitmix64_next(&state), ==, 0xe220a8397b1dcdafull);
    g_assert_cmphex(splitmix64_next(&state), ==, 0x6e789e6aa1b965f4ull);
    g_assert_cmphex(splitmix64_next(&state), ==, 0x06c45d188009454full);
}

static void test_xoshiro_known_answer(void)
{
    /* Reference values for state {1, 2, 3, 4}, computed independently. */
    Prng p = { .s = { 1, 2, 3, 4 } };

    g_assert_cmphex(prng_next(&p), ==, 0x2d00);
    g_assert_cmphex(prng_next(&p), ==, 0x0);
    g_assert_cmphex(prng_next(&p), ==, 0x5a007080);
}

static void test_reproducible(void)
{
    Prng a, b, c;
    unsigned differ = 0;

    prng_seed(&a, 12345);
    prng_seed(&b, 12345);
    prng_seed(&c, 12346);
    for (int i = 0; i < 1000; i++) {
        uint64_t x = prng_next(&a);

        g_assert_cmphex(x, ==, prng_next(&b));
        differ += x != prng_next(&c);
    }
    g_assert_cmpuint(differ, >, 990);
}

static void test_streams_independent_of_interleaving(void)
{
    uint64_t alone[64];
    Prng target, other_link, other_rule, target2;

    prng_seed_stream(&target, 42, 1, 0, 1);
    for (int i = 0; i < 64; i++) {
        alone[i] = prng_next(&target);
    }

    /* The same stream, with unrelated streams drawing in between. */
    prng_seed_stream(&target2, 42, 1, 0, 1);
    prng_seed_stream(&other_link, 42, 1, 0, 2);
    prng_seed_stream(&other_rule, 42, 2, 0, 1);
    for (int i = 0; i < 64; i++) {
        for (int j = 0; j < i % 3; j++) {
            prng_next(&other_link);
            prng_next(&other_rule);
        }
        g_assert_cmphex(prng_next(&target2), ==, alone[i]);
    }

    /* Every coordinate changes the stream. */
    Prng v[5];

    prng_seed_stream(&v[0], 42, 1, 0, 1);
    prng_seed_stream(&v[1], 43, 1, 0, 1);
    prng_seed_stream(&v[2], 42, 2, 0, 1);
    prng_seed_stream(&v[3], 42, 1, 1, 0);
    prng_seed_stream(&v[4], 42, 1, 0, 2);
    uint64_t first[5];

    for (int i = 0; i < 5; i++) {
        first[i] = prng_next(&v[i]);
        for (int j = 0; j < i; j++) {
            g_assert_cmphex(first[i], !=, first[j]);
        }
    }
}

static void test_below_range(void)
{
    static const uint64_t bounds[] = {
        1, 2, 3, 7, 10, 1000, (1ull << 32) + 1, (1ull << 63) + 1,
        G_MAXUINT64,
    };
    Prng p;

    prng_seed(&p, 7);
    g_assert_cmpuint(prng_below(&p, 0), ==, 0);
    for (size_t b = 0; b < G_N_ELEMENTS(bounds); b++) {
        for (int i = 0; i < 10000; i++) {
            g_assert_cmpuint(prng_below(&p, bounds[b]), <, bounds[b]);
        }
    }
    /* bound 1 has only one answer */
    for (int i = 0; i < 100; i++) {
        g_assert_cmpuint(prng_below(&p, 1), ==, 0);
    }
}

static void test_below_uniform(void)
{
    unsigned hist[6] = { 0 };
    Prng p;

    prng_seed(&p, 99);
    for (int i = 0; i < 60000; i++) {
        hist[prng_below(&p, 6)]++;
    }
    /* Expected 10000 each; 5 sigma is about 456. */
    for (int i = 0; i < 6; i++) {
        g_assert_cmpuint(hist[i], >, 9500);
        g_assert_cmpuint(hist[i], <, 10500);
    }
}

static void test_double_range(void)
{
    Prng p;
    double sum = 0, lo = 1, hi = 0;

    prng_seed(&p, 5);
    for (int i = 0; i < 100000; i++) {
        double d = prng_double(&p);

        g_assert_cmpfloat(d, >=, 0.0);
        g_assert_cmpfloat(d, <, 1.0);
        sum += d;
        lo = MIN(lo, d);
        hi = MAX(hi, d);
    }
    g_assert_cmpfloat(sum / 100000, >, 0.49);
    g_assert_cmpfloat(sum / 100000, <, 0.51);
    g_assert_cmpfloat(lo, <, 0.001);
    g_assert_cmpfloat(hi, >, 0.999);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/prng/splitmix64-known-answer", test_splitmix_known_answer);
    g_test_add_func("/prng/xoshiro-known-answer", test_xoshiro_known_answer);
    g_test_add_func("/prng/reproducible", test_reproducible);
    g_test_add_func("/prng/streams-independent",
                    test_streams_independent_of_interleaving);
    g_test_add_func("/prng/below-range", test_below_range);
    g_test_add_func("/prng/below-uniform", test_below_uniform);
    g_test_add_func("/prng/double-range", test_double_range);
    return g_test_run();
}
