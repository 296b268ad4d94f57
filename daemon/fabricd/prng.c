/*
 * splitmix64 + xoshiro256** (Vigna & Blackman's public-domain algorithms,
 * written out here from their published definitions).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "prng.h"

#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull

/* The splitmix64 output function on its own: a strong 64-bit mixer. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t splitmix64_next(uint64_t *state)
{
    *state += SPLITMIX_GAMMA;
    return mix64(*state);
}

void prng_seed(Prng *p, uint64_t seed)
{
    uint64_t sm = seed;

    for (int i = 0; i < 4; i++) {
        p->s[i] = splitmix64_next(&sm);
    }
    /*
     * splitmix64 is a bijection of its counter, so four zero outputs in a
     * row cannot happen; the all-zero xoshiro state is unreachable.
     */
}

void prng_seed_stream(Prng *p, uint64_t global_seed, uint64_t rule_id,
                      unsigned from, unsigned to)
{
    /*
     * Fold each coordinate in through the mixer so that neighbouring ids
     * and links give unrelated streams.
     */
    uint64_t key = mix64(global_seed ^ SPLITMIX_GAMMA);

    key = mix64(key ^ rule_id);
    key = mix64(key ^ ((uint64_t)from << 32 | to));
    prng_seed(p, key);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t prng_next(Prng *p)
{
    uint64_t *s = p->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double prng_double(Prng *p)
{
    /*
     * The top 53 bits are exact in a double; dividing by 2^53 is exact
     * too, so this maps them uniformly onto [0, 1).
     */
    return (prng_next(p) >> 11) / 9007199254740992.0;
}

uint64_t prng_below(Prng *p, uint64_t bound)
{
    if (bound == 0) {
        return 0;
    }
    /*
     * Reject the low values that would make `r % bound` favour small
     * results: 2^64 mod bound of them, computed without 128-bit math.
     */
    uint64_t threshold = -bound % bound;

    for (;;) {
        uint64_t r = prng_next(p);

        if (r >= threshold) {
            return r % bound;
        }
    }
}
