/*
 * Fault rules: a pure text parser and a per-copy evaluator.
 *
 * Rule text is `LINK ACTION [key=value ...]`, e.g. `0>1 drop p=0.1`,
 * `*-2 delay ms=5 jitter=1ms` or `2|0,1 down at=1s for=500ms`.
 * docs/fabricd.md has the full syntax.  Every random decision comes from a
 * PRNG stream owned by one (rule, directed link) pair, and every rule is
 * active in a window of rule time (at=, until=): the time of the copy that
 * the caller passes in (fabric_time_ns()).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_FAULT_H
#define FABRICD_FAULT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define FAULT_ANY_NODE          (-1)
/* Node ids a rule can name (fabricd's FABRIC_MAX_NODES). */
#define FAULT_MAX_NODES         1024
/* Upper bound for delay rules: keeps ns arithmetic far from overflow. */
#define FAULT_MAX_DELAY_NS      (3600ull * 1000000000ull)
/* Upper bound for at=, until= and for= (10^9 s, about 31 years). */
#define FAULT_MAX_TIME_NS       (1000000000ull * 1000000000ull)
/* until_ns of a rule without an end. */
#define FAULT_FOREVER           UINT64_MAX
#define FAULT_MAX_BIT_OFFSETS   256

#define FAULT_ERROR (fault_error_quark())
GQuark fault_error_quark(void);

/*
 * A set of directed links: `A>B`, `A-B` (both ways), wildcards as -1; or
 * a partition `S|T` (every link between a node of S and a node of T, both
 * ways) or `S>|T` (only from S into T), S and T lists of nodes, T maybe
 * `*`: every node not in S.
 */
typedef struct FaultLink {
    int from;               /* A>B, A-B: a node or FAULT_ANY_NODE */
    int to;
    bool both;              /* A-B, S|T */
    bool sets;              /* S|T or S>|T: set_from, set_to below */
    bool rest;              /* S|*, S>|*: T is every node not in S */
    uint8_t set_from[FAULT_MAX_NODES / 8];      /* S, a bit per node */
    uint8_t set_to[FAULT_MAX_NODES / 8];        /* T (empty with rest) */
} FaultLink;

typedef enum FaultAction {
    FAULT_DROP,
    FAULT_CORRUPT,
    FAULT_DELAY,
    FAULT_DOWN,
    FAULT_DROP_GE,          /* drop ge: Gilbert-Elliott bursty loss */
    FAULT_DUPLICATE,
    FAULT_REORDER,
} FaultAction;

typedef struct FaultRule {
    unsigned id;            /* assigned by fault_rules_add(); 0 before */
    FaultLink link;
    FaultAction action;
    uint64_t nth;           /* drop: K-th frame, 0 when p is used */
    double p;               /* drop, corrupt, duplicate, reorder: the
                               probability; drop ge: Good>Bad */
    double ge_r;            /* drop ge: Bad>Good */
    double ge_h;            /* drop ge: delivery probability in Bad */
    double ge_k;            /* drop ge: delivery probability in Good */
    unsigned bits;          /* corrupt: random bit count, 0 when offsets */
    uint32_t *offsets;      /* corrupt: sorted, distinct bit offsets */
    unsigned n_offsets;
    uint64_t delay_ns;      /* delay: D; reorder: how far it may be passed */
    uint64_t jitter_ns;     /* delay: J, the delay is in [D-J, D+J] */
    uint64_t at_ns;         /* active from this rule time (0: always) */
    uint64_t until_ns;      /* ... and before this one (FAULT_FOREVER) */
    uint64_t matched;       /* copies evaluated on a matching link */
    uint64_t fired;         /* copies the rule acted on */
    GHashTable *per_link;   /* (from << 16 | to) -> per-link state */
} FaultRule;

/*
 * Parse "A>B", "A-B", "*", "*>B", "node2-node0"...  Ids must be < nodes.
 * A set naming a single node twice (1>1) is refused.
 */
bool fault_link_parse(const char *text, unsigned nodes, FaultLink *out,
                      GError **err);
bool fault_link_matches(const FaultLink *l, unsigned from, unsigned to);
bool fault_link_equal(const FaultLink *a, const FaultLink *b);
/* Canonical form, e.g. "0>1", "0-2", "*>3", "*", "0,1|2", "2>|0,1". */
void fault_link_append(const FaultLink *l, GString *out);

FaultRule *fault_rule_parse(const char *text, unsigned nodes, GError **err);
/* Canonical text (no id); fault_rule_parse() of it gives the same rule. */
char *fault_rule_to_string(const FaultRule *r);
void fault_rule_free(FaultRule *r);
/* Whether the rule is active at rule time `now_ns`: at <= now < until. */
bool fault_rule_active(const FaultRule *r, uint64_t now_ns);

/*
 * What the parser cannot know (the fabric's links, what its kind applies):
 * false with err to refuse a rule.
 */
typedef bool (*FaultRuleCheck)(const FaultRule *r, void *opaque,
                               GError **err);

/*
 * Parse a fault file's `len` bytes of text: one rule a line, `#` starts a
 * comment, blank lines are skipped.  `check` (may be NULL) vets each rule.
 * Returns the rules in file order, in an array that owns them, or NULL and
 * an error "NAME:LINE: message" (NAME is the file name for messages).
 * At most FAULT_MAX_RULES rules.
 */
GPtrArray *fault_file_parse(const char *text, size_t len, const char *name,
                            unsigned nodes, FaultRuleCheck check,
                            void *opaque, GError **err);

typedef enum FaultOutcome {
    FAULT_PASS,
    FAULT_DROPPED,          /* a drop rule fired */
    FAULT_DOWNED,           /* a down rule matched */
} FaultOutcome;

typedef struct FaultVerdict {
    FaultOutcome outcome;
    uint8_t *corrupted;     /* g_malloc'd modified copy, or NULL */
    uint64_t delay_ns;      /* hold this long; copies behind it wait */
    uint64_t reorder_ns;    /* then this much longer, which later copies
                               on the link may overtake */
    unsigned duplicates;    /* extra identical copies to deliver: 0 or 1 */
    unsigned rule;          /* DROPPED or DOWNED: the id of the rule */
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
 * Run the rules over one copy of a frame crossing from>to at rule time
 * `now_ns`; a rule outside its window neither matches nor draws.  Bits
 * before `corrupt_from` (a header the fabric itself needs) are never
 * flipped; bit offsets count from there.  `frame` is not modified: a
 * corrupt rule puts a modified copy in verdict->corrupted, which the
 * caller must g_free().
 */
void fault_rules_eval(FaultRules *rs, unsigned from, unsigned to,
                      uint64_t now_ns, const uint8_t *frame, size_t len,
                      size_t corrupt_from, FaultVerdict *verdict);

/*
 * The first `down` rule matching from>to and active at `now_ns`, or NULL.
 * No side effects: kinds that hold traffic at a down link (ps1) ask
 * before evaluating.
 */
FaultRule *fault_rules_find_down(FaultRules *rs, unsigned from, unsigned to,
                                 uint64_t now_ns);

#endif
