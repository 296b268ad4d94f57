/*
 * Fault rule set and evaluator: what happens to one copy of a frame on one
 * directed link.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "fault.h"
#include "prng.h"

typedef struct FaultLinkState {
    Prng prng;
    uint64_t seen;          /* frames counted by an nth rule */
    bool done;              /* nth rule already fired on this link */
    bool bad;               /* drop ge: in the Bad state (starts Good) */
} FaultLinkState;

struct FaultRules {
    uint64_t seed;
    unsigned next_id;
    GPtrArray *rules;       /* FaultRule *, ascending id */
};

FaultRules *fault_rules_new(uint64_t seed)
{
    FaultRules *rs = g_new0(FaultRules, 1);

    rs->seed = seed;
    rs->next_id = 1;
    rs->rules = g_ptr_array_new_with_free_func((GDestroyNotify)fault_rule_free);
    return rs;
}

void fault_rules_free(FaultRules *rs)
{
    if (!rs) {
        return;
    }
    g_ptr_array_free(rs->rules, TRUE);
    g_free(rs);
}

unsigned fault_rules_add(FaultRules *rs, FaultRule *r)
{
    r->id = rs->next_id++;
    r->matched = r->fired = 0;
    if (r->per_link) {
        g_hash_table_remove_all(r->per_link);
    } else {
        r->per_link = g_hash_table_new_full(g_direct_hash, g_direct_equal,
                                            NULL, g_free);
    }
    g_ptr_array_add(rs->rules, r);
    return r->id;
}

bool fault_rules_del(FaultRules *rs, unsigned id)
{
    for (unsigned i = 0; i < rs->rules->len; i++) {
        const FaultRule *r = rs->rules->pdata[i];

        if (r->id == id) {
            g_ptr_array_remove_index(rs->rules, i);
            return true;
        }
    }
    return false;
}

void fault_rules_clear(FaultRules *rs)
{
    g_ptr_array_set_size(rs->rules, 0);
}

unsigned fault_rules_count(const FaultRules *rs)
{
    return rs->rules->len;
}

const FaultRule *fault_rules_get(const FaultRules *rs, unsigned index)
{
    return index < rs->rules->len ? rs->rules->pdata[index] : NULL;
}

static FaultLinkState *link_state(FaultRules *rs, FaultRule *r,
                                  unsigned from, unsigned to)
{
    gpointer key = GUINT_TO_POINTER(from << 16 | to);
    FaultLinkState *st = g_hash_table_lookup(r->per_link, key);

    if (!st) {
        st = g_new0(FaultLinkState, 1);
        prng_seed_stream(&st->prng, rs->seed, r->id, from, to);
        g_hash_table_insert(r->per_link, key, st);
    }
    return st;
}

static void flip_bit(uint8_t *payload, uint64_t bit)
{
    payload[bit / 8] ^= 1u << (bit % 8);
}

/*
 * Flip `k` distinct bits chosen uniformly among `nbits` (Floyd's sampling:
 * exactly k draws, a bitmap remembers what was chosen).
 */
static void flip_random_bits(Prng *prng, uint8_t *payload, uint64_t nbits,
                             uint64_t k)
{
    uint8_t *chosen = g_malloc0((nbits + 7) / 8);

    for (uint64_t j = nbits - k; j < nbits; j++) {
        uint64_t t = prng_below(prng, j + 1);

        if (chosen[t / 8] & (1u << (t % 8))) {
            t = j;
        }
        chosen[t / 8] |= 1u << (t % 8);
        flip_bit(payload, t);
    }
    g_free(chosen);
}

/* Apply a corrupt rule that fired; returns true if any bit changed. */
static bool corrupt_copy(const FaultRule *r, Prng *prng, const uint8_t *frame,
                         size_t len, size_t corrupt_from, uint8_t **copy)
{
    uint64_t nbits = (uint64_t)(len - corrupt_from) * 8;

    /* Offsets are sorted: if the first is past the end, all are. */
    if (nbits == 0 || (!r->bits && r->offsets[0] >= nbits)) {
        return false;
    }
    if (!*copy) {
        *copy = g_memdup2(frame, len);
    }
    uint8_t *payload = *copy + corrupt_from;

    if (r->bits) {
        flip_random_bits(prng, payload, nbits, MIN((uint64_t)r->bits, nbits));
        return true;
    }
    for (unsigned i = 0; i < r->n_offsets && r->offsets[i] < nbits; i++) {
        flip_bit(payload, r->offsets[i]);
    }
    return true;
}

bool fault_rule_active(const FaultRule *r, uint64_t now_ns)
{
    return now_ns >= r->at_ns && now_ns < r->until_ns;
}

/*
 * Gilbert-Elliott (tc-netem's `loss gemodel`): two draws per copy, first
 * the transition, then the loss, which the state the copy found decides.
 */
static bool ge_lost(const FaultRule *r, FaultLinkState *st)
{
    double move = prng_double(&st->prng);
    double loss = prng_double(&st->prng);

    if (!st->bad) {
        st->bad = move < r->p;
        return loss < 1.0 - r->ge_k;
    }
    st->bad = !(move < r->ge_r);
    return loss < 1.0 - r->ge_h;
}

/* The delay of one copy: D, or uniform in [D-J, D+J] (one draw). */
static uint64_t delay_of(const FaultRule *r, FaultLinkState *st)
{
    if (!r->jitter_ns) {
        return r->delay_ns;
    }
    return r->delay_ns - r->jitter_ns +
           prng_below(&st->prng, 2 * r->jitter_ns + 1);
}

void fault_rules_eval(FaultRules *rs, unsigned from, unsigned to,
                      uint64_t now_ns, const uint8_t *frame, size_t len,
                      size_t corrupt_from, FaultVerdict *v)
{
    *v = (FaultVerdict){ .outcome = FAULT_PASS };
    if (corrupt_from > len) {
        corrupt_from = len;
    }

    for (unsigned i = 0; i < rs->rules->len; i++) {
        FaultRule *r = rs->rules->pdata[i];
        FaultLinkState *st;
        uint64_t d;

        /* outside its window a rule does not exist: no count, no draw */
        if (!fault_rule_active(r, now_ns) ||
            !fault_link_matches(&r->link, from, to)) {
            continue;
        }
        r->matched++;
        st = link_state(rs, r, from, to);
        switch (r->action) {
        case FAULT_DOWN:
            r->fired++;
            v->outcome = FAULT_DOWNED;
            break;
        case FAULT_DROP:
            if (r->nth) {
                if (!st->done && ++st->seen == r->nth) {
                    st->done = true;
                    r->fired++;
                    v->outcome = FAULT_DROPPED;
                }
            } else if (prng_double(&st->prng) < r->p) {
                r->fired++;
                v->outcome = FAULT_DROPPED;
            }
            break;
        case FAULT_DROP_GE:
            if (ge_lost(r, st)) {
                r->fired++;
                v->outcome = FAULT_DROPPED;
            }
            break;
        case FAULT_CORRUPT:
            if (prng_double(&st->prng) < r->p &&
                corrupt_copy(r, &st->prng, frame, len, corrupt_from,
                             &v->corrupted)) {
                r->fired++;
            }
            break;
        case FAULT_DELAY:
            d = delay_of(r, st);
            if (d) {
                r->fired++;
                v->delay_ns += d;
            }
            break;
        case FAULT_DUPLICATE:
            /* the draw happens either way; one extra copy at most */
            if (prng_double(&st->prng) < r->p && !v->duplicates) {
                r->fired++;
                v->duplicates = 1;
            }
            break;
        case FAULT_REORDER:
            if (prng_double(&st->prng) < r->p) {
                r->fired++;
                v->reorder_ns += r->delay_ns;
            }
            break;
        }
        if (v->outcome != FAULT_PASS) {
            /* A dropped copy goes no further; later rules never see it. */
            g_clear_pointer(&v->corrupted, g_free);
            *v = (FaultVerdict){ .outcome = v->outcome, .rule = r->id };
            return;
        }
    }
}

FaultRule *fault_rules_find_down(FaultRules *rs, unsigned from, unsigned to,
                                 uint64_t now_ns)
{
    for (unsigned i = 0; i < rs->rules->len; i++) {
        FaultRule *r = rs->rules->pdata[i];

        if (r->action == FAULT_DOWN && fault_rule_active(r, now_ns) &&
            fault_link_matches(&r->link, from, to)) {
            return r;
        }
    }
    return NULL;
}
