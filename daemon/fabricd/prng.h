/*
 * Seeded pseudo-random numbers for fabricd's fault injection.
 *
 * splitmix64 expands seeds; xoshiro256** produces the streams.  Every
 * (rule, directed link) pair draws from its own stream so that what happens
 * on one link never depends on traffic elsewhere.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_PRNG_H
#define FABRICD_PRNG_H

#include <stdint.h>

typedef struct Prng {
    uint64_t s[4];
} Prng;

/* Advance a splitmix64 state and return its next output. */
uint64_t splitmix64_next(uint64_t *state);

/* Seed a xoshiro256** generator from one 64-bit value (via splitmix64). */
void prng_seed(Prng *p, uint64_t seed);

/* Seed the stream that belongs to one fault rule on one directed link. */
void prng_seed_stream(Prng *p, uint64_t global_seed, uint64_t rule_id,
                      unsigned from, unsigned to);

/* Next raw 64-bit output of xoshiro256**. */
uint64_t prng_next(Prng *p);

/* Uniform double in [0, 1) with 53 bits of precision. */
double prng_double(Prng *p);

/* Uniform integer in [0, bound) without modulo bias; bound 0 returns 0. */
uint64_t prng_below(Prng *p, uint64_t bound);

#endif
