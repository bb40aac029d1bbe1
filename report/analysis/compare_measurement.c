/* What compare takes from how each run was measured (issue 25):
 *   - the L2 state: runs of a cold L2 (flushed before each forward) and of a warm one
 *     measure different things, so compare refuses to set them side by side unless
 *     told to (--allow-l2-mismatch);
 *   - replicates: a run recorded with --replicate K holds K passes of its batch, each
 *     forward tagged with its pass; the spread of the per-pass medians is the drift
 *     between batches measured in the run itself, and replaces the documented floors
 *     (compare.h) when both runs of a ratio hold it;
 *   - the regression gate: which verdicts make `compare --fail-on` exit non-zero.
 * The rule, stated in compare.md and README: for a variant whose baseline and run both
 * hold two or more passes, the noise floor of a measure is the larger of the two runs'
 * relative ranges (max ÷ min − 1) of their per-pass medians — for CPU time never below the
 * documented floor, since host time drifts between processes more than between the passes
 * of one (measured: bench/results/2026-12-02-measurement.md); the verdict is then read from
 * the bootstrap interval against that floor, as against the documented ones. */
#include "compare.h"

#include "exit_codes.h"
#include "median.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *compare_l2_state(const run_info *r)
{
    return r->measurement.recorded && r->measurement.l2[0] ? r->measurement.l2 : NULL;
}

/* What compare can say of a run's L2 state: recorded, or what its producer implies. */
static const char *l2_said(const run_info *r)
{
    const char *s = compare_l2_state(r);
    if (s)
        return s;
    /* attnprof flushed nothing before --l2: its forwards ran back to back */
    return r->imported ? "not recorded (an import)" : "not recorded (forwards back to back, as warm)";
}

static int l2_is_cold(const run_info *r)
{
    const char *s = compare_l2_state(r);
    return s && !strcmp(s, "cold");
}

int compare_l2_check(compare_archive *const *in, int n, int allow, char *err, size_t errlen)
{
    if (allow)
        return EXIT_OK;
    for (int i = 1; i < n; i++) {
        const run_info *a = &in[0]->r, *b = &in[i]->r;
        const char *sa = compare_l2_state(a), *sb = compare_l2_state(b);
        int differ = sa && sb ? strcmp(sa, sb) != 0
                              /* one side unrecorded: warm for an attnprof run, unknown for an import */
                              : (l2_is_cold(a) || l2_is_cold(b) || ((sa || sb) && (a->imported || b->imported)));
        if (differ) {
            snprintf(err, errlen,
                     "L2 states differ (%s: %s; %s: %s): the times are of different things; record both with one "
                     "--l2, or pass --allow-l2-mismatch",
                     in[0]->dir, l2_said(a), in[i]->dir, l2_said(b));
            return EXIT_L2_MISMATCH;
        }
    }
    return EXIT_OK;
}

/* The relative range of the per-pass medians of x (the cell's forwards, in its order),
 * into *spread; the number of passes. */
static int pass_spread(const compare_cell *c, const double *x, double *spread)
{
    *spread = NAN;
    int n = c->n, max_pass = -1;
    for (int i = 0; i < n; i++) {
        const struct forward_sample *s = &c->va->forwards[i].range->sample;
        if (!s->recorded)
            return 0; /* a forward without its pass: no passes to tell apart */
        if (s->pass > max_pass)
            max_pass = s->pass;
    }
    if (max_pass < 1)
        return max_pass + 1;
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    if (!v)
        return 0;
    int passes = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int p = 0; p <= max_pass; p++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (c->va->forwards[i].range->sample.pass == p && isfinite(x[i]))
                v[k++] = x[i];
        if (!k)
            continue;
        qsort(v, (size_t)k, sizeof *v, median_cmp_double);
        double med = median_sorted(v, k);
        passes++;
        lo = med < lo ? med : lo;
        hi = med > hi ? med : hi;
    }
    free(v);
    if (passes >= 2 && lo > 0)
        *spread = hi / lo - 1.0;
    return passes;
}

void compare_cell_passes(compare_cell *c, const run_info *r)
{
    c->passes = 0;
    c->pass_spread_metric = c->pass_spread_cpu = NAN;
    if (!c->va || c->n <= 0 || !r->measurement.recorded || r->measurement.replicates < 2)
        return;
    c->passes = pass_spread(c, c->metric, &c->pass_spread_metric);
    pass_spread(c, c->cpu, &c->pass_spread_cpu);
}

int compare_replicates_apply(const compare_cell *base, const compare_cell *x)
{
    return base->passes >= 2 && x->passes >= 2 && isfinite(base->pass_spread_metric) &&
           isfinite(x->pass_spread_metric) && isfinite(base->pass_spread_cpu) && isfinite(x->pass_spread_cpu);
}

/* The verdicts' words, as compare_verdict_word gives them (kept here: compare.c calls
 * this module, and a call back would make the two modules a loop; tests check both). */
static const char *verdict_word(compare_verdict v)
{
    static const char *const WORDS[] = {[VERDICT_SAME] = "same", [VERDICT_FASTER] = "faster",
                                        [VERDICT_SLOWER] = "slower", [VERDICT_AMBIGUOUS] = "ambiguous"};
    return v > VERDICT_NONE && v <= VERDICT_AMBIGUOUS ? WORDS[v] : "";
}

int compare_fail_on_parse(const char *list, unsigned *mask, char *err, size_t errlen)
{
    static const compare_verdict GATED[] = {VERDICT_SLOWER, VERDICT_AMBIGUOUS, VERDICT_FASTER, VERDICT_SAME};
    *mask = 0;
    const char *p = list;
    do {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int known = 0;
        for (size_t i = 0; i < sizeof GATED / sizeof GATED[0]; i++) {
            const char *w = verdict_word(GATED[i]);
            if (strlen(w) == len && !strncmp(p, w, len))
                *mask |= 1u << GATED[i], known = 1;
        }
        if (!known) {
            snprintf(err, errlen, "--fail-on %s: expected verdicts separated by commas (slower, ambiguous, faster, "
                     "same), e.g. --fail-on slower,ambiguous", list);
            return -1;
        }
        p = end ? end + 1 : NULL;
    } while (p);
    return 0;
}

int compare_gate(const compare_model *m, unsigned mask, char *msg, size_t n)
{
    int hits = 0;
    size_t len = 0;
    msg[0] = '\0';
    for (int v = 0; v < m->n_variants; v++)
        for (int i = 1; i < m->n; i++) {
            compare_verdict vd = m->variants[v].cell[i].metric_ratio.verdict;
            if (vd == VERDICT_NONE || !(mask & (1u << vd)))
                continue;
            if (len < n)
                len += (size_t)snprintf(msg + len, n - len, "%s%s %s in %s (%.3fx)", hits ? ", " : "",
                                        m->variants[v].name, verdict_word(vd), m->in[i]->label,
                                        m->variants[v].cell[i].metric_ratio.ci.ratio);
            hits++;
        }
    /* a model trace's step time (compare_traces.c) gates as a variant's forward does */
    for (int k = 0; k < m->traces.n_pairs; k++) {
        const trace_pair *pr = &m->traces.pairs[k];
        compare_verdict vd = pr->step_ratio.verdict;
        if (vd == VERDICT_NONE || !(mask & (1u << vd)))
            continue;
        if (len < n)
            len += (size_t)snprintf(msg + len, n - len, "%smodel trace %s's step %s in %s (%.3fx)", hits ? ", " : "",
                                    pr->va[1]->result->name, verdict_word(vd), m->in[pr->archive]->label,
                                    pr->step_ratio.ci.ratio);
        hits++;
    }
    return hits;
}
