/*
 * Fault rules: a pure text parser and a per-copy evaluator.
 *
 * Rule text is `LINK ACTION [key=value ...]`, e.g. `0>1 drop p=0.1` or
 * `*-2 delay ms=5`.  docs/fabricd.md has the full syntax.  Every random
 * decision comes from a PRNG stream owned by one (rule, directed link) pair.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_FAULT_H
#define FABRICD_FAULT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define FAULT_ANY_NODE          (-1)
/* Upper bound for delay rules: keeps ns arithmetic far from overflow. */
#define FAULT_MAX_DELAY_NS      (3600ull * 1000000000ull)
#define FAULT_MAX_BIT_OFFSETS   256

#define FAULT_ERROR (fault_error_quark())
GQuark fault_error_quark(void);

/* A set of directed links: `A>B`, `A-B` (both ways), wildcards as -1. */
typedef struct FaultLink {
    int from;
    int to;
    bool both;
} FaultLink;

typedef enum FaultAction {
    FAULT_DROP,
    FAULT_CORRUPT,
    FAULT_DELAY,
    FAULT_DOWN,
} FaultAction;

typedef struct FaultRule {
    unsigned id;            /* assigned by fault_rules_add(); 0 before */
    FaultLink link;
    FaultAction action;
    uint64_t nth;           /* drop: K-th frame, 0 when p is used */
    double p;               /* drop / corrupt probability */
    unsigned bits;          /* corrupt: random bit count, 0 when offsets */
    uint32_t *offsets;      /* corrupt: sorted, distinct bit offsets */
    unsigned n_offsets;
    uint64_t delay_ns;
    uint64_t matched;       /* copies evaluated on a matching link */
    uint64_t fired;         /* copies the rule dropped/corrupted/delayed */
    GHashTable *per_link;   /* (from << 16 | to) -> per-link state */
} FaultRule;

/*
 * Parse "A>B", "A-B", "*", "*>B", "node2-node0"...  Ids must be < nodes.
 * A set naming a single node twice (1>1) is refused.
 */
bool fault_link_parse(const char *text, unsigned nodes, FaultLink *out,
                      GError **err);
bool fault_link_matches(const FaultLink *l, unsigned from, unsigned to);
/* Canonical form, e.g. "0>1", "0-2", "*>3", "*". */
void fault_link_append(const FaultLink *l, GString *out);

FaultRule *fault_rule_parse(const char *text, unsigned nodes, GError **err);
/* Canonical text (no id); fault_rule_parse() of it gives the same rule. */
char *fault_rule_to_string(const FaultRule *r);
void fault_rule_free(FaultRule *r);

typedef enum FaultOutcome {
    FAULT_PASS,
    FAULT_DROPPED,          /* a drop rule fired */
    FAULT_DOWNED,           /* a down rule matched */
} FaultOutcome;

typedef struct FaultVerdict {
    FaultOutcome outcome;
    uint8_t *corrupted;     /* g_malloc'd modified copy, or NULL */
    uint64_t delay_ns;
} FaultVerdict;

typedef struct FaultRules FaultRules;

FaultRules *fault_rules_new(uint64_t seed);
void fault_rules_free(FaultRules *rs);
/* Takes ownership of `r`; returns its new id (ids are never reused). */
unsigned fault_rules_add(FaultRules *rs, FaultRule *r);
bool fault_rules_del(FaultRules *rs, unsigned id);
void fault_rules_clear(FaultRules *rs);
unsigned fault_rules_count(const FaultRules *rs);
/* `fault add` refuses more rules than this. */
#define FAULT_MAX_RULES         1024
/* Rules in id order; index < fault_rules_count(). */
const FaultRule *fault_rules_get(const FaultRules *rs, unsigned index);

/*
 * Run the rules over one copy of a frame crossing from>to.  Bits before
 * `corrupt_from` (a header the fabric itself needs) are never flipped; bit
 * offsets count from there.  `frame` is not modified: a corrupt rule puts a
 * modified copy in verdict->corrupted, which the caller must g_free().
 */
void fault_rules_eval(FaultRules *rs, unsigned from, unsigned to,
                      const uint8_t *frame, size_t len, size_t corrupt_from,
                      FaultVerdict *verdict);

/*
 * The first `down` rule matching from>to, or NULL.  No side effects: kinds
 * that hold traffic at a down link (ps1) ask before evaluating.
 */
FaultRule *fault_rules_find_down(FaultRules *rs, unsigned from, unsigned to);

#endif
