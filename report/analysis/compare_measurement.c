/* What compare takes from how each run was measured:
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

#include "alloc.h"
#include "err.h"
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

/* The median of each pass's finite samples of x (the cell's forwards, in its order) into
 * med[p] (NAN for a pass without any); the highest pass + 1, 0 when a forward carries no
 * pass (nothing to tell apart). */
static int pass_medians(const compare_cell *c, const double *x, double **med)
{
    int n = c->n, max_pass = -1;
    *med = NULL;
    for (int i = 0; i < n; i++) {
        const struct forward_sample *s = &c->va->forwards[i].range->sample;
        if (!s->recorded || s->pass < 0)
            return 0;
        if (s->pass > max_pass)
            max_pass = s->pass;
    }
    if (max_pass < 0)
        return 0;
    int passes = max_pass + 1;
    /* each pass's samples in one sweep: counting sort by pass, then one median a pass */
    int *start = calloc((size_t)passes + 1, sizeof *start);
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    *med = malloc(sizeof **med * (size_t)passes);
    if (!start || !v || !*med)
        attn_oom();
    for (int i = 0; i < n; i++)
        start[c->va->forwards[i].range->sample.pass + 1] += isfinite(x[i]);
    for (int p = 0; p < passes; p++)
        start[p + 1] += start[p];
    int *fill = calloc((size_t)passes, sizeof *fill);
    if (!fill)
        attn_oom();
    for (int i = 0; i < n; i++) {
        int p = c->va->forwards[i].range->sample.pass;
        if (isfinite(x[i]))
            v[start[p] + fill[p]++] = x[i];
    }
    for (int p = 0; p < passes; p++)
        (*med)[p] = start[p + 1] > start[p] ? median_of(v + start[p], start[p + 1] - start[p]) : NAN;
    free(fill);
    free(start);
    free(v);
    return passes;
}

static int by_value(const void *a, const void *b) { return median_cmp_double(a, b); }

/* The spread of the per-pass medians under COMPARE_REPLICATE_FLOOR_CAP (compare.h): with three
 * passes or more, those beyond the cap from the median of the medians are outliers (bits into
 * *outliers) and left out, unless fewer than two would be left; *raw the relative range of the
 * rest, the spread the cap (at most) of it. Returns the passes holding samples. */
static int pass_spread(const compare_cell *c, const double *x, double *spread, double *raw, unsigned *outliers)
{
    *spread = *raw = NAN;
    *outliers = 0;
    double *med;
    int passes = pass_medians(c, x, &med);
    int k = 0;
    double *sorted = malloc(sizeof *sorted * (size_t)(passes ? passes : 1));
    if (!sorted)
        attn_oom();
    for (int p = 0; p < passes; p++)
        if (isfinite(med[p]))
            sorted[k++] = med[p];
    if (k >= 2) {
        qsort(sorted, (size_t)k, sizeof *sorted, by_value);
        double centre = median_sorted(sorted, k), cap = 1.0 + COMPARE_REPLICATE_FLOOR_CAP;
        unsigned out = 0;
        int kept = k;
        for (int p = 0; k >= 3 && p < passes && p < 32; p++)
            if (isfinite(med[p]) && (med[p] > centre * cap || med[p] < centre / cap))
                out |= 1u << p, kept--;
        if (kept < 2)
            out = 0; /* they all disagree: no majority to set one apart from */
        double lo = INFINITY, hi = -INFINITY;
        for (int p = 0; p < passes; p++)
            if (isfinite(med[p]) && !(p < 32 && (out >> p & 1u))) {
                lo = fmin(lo, med[p]);
                hi = fmax(hi, med[p]);
            }
        if (lo > 0) {
            *raw = hi / lo - 1.0;
            *spread = fmin(*raw, COMPARE_REPLICATE_FLOOR_CAP);
            *outliers = out;
        }
    }
    free(sorted);
    free(med);
    return k;
}

void compare_cell_passes(compare_cell *c, const run_info *r)
{
    c->passes = 0;
    c->outlier_passes = 0;
    c->pass_spread_metric = c->pass_spread_cpu = c->pass_spread_metric_raw = NAN;
    if (!c->va || c->n <= 0 || !r->measurement.recorded || r->measurement.replicates < 2)
        return;
    double raw_cpu;
    unsigned cpu_outliers;
    c->passes = pass_spread(c, c->metric, &c->pass_spread_metric, &c->pass_spread_metric_raw, &c->outlier_passes);
    pass_spread(c, c->cpu, &c->pass_spread_cpu, &raw_cpu, &cpu_outliers);
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
        if (!known)
            return err_set(err, errlen, EXIT_USAGE, "--fail-on %s: expected verdicts separated by commas (slower, "
                           "ambiguous, faster, same), e.g. --fail-on slower,ambiguous", list);
        p = end ? end + 1 : NULL;
    } while (p);
    return EXIT_OK;
}

int compare_gate(const compare_data *m, unsigned mask, char *msg, size_t n)
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

/* Why a non-baseline cell has no CUDA-time verdict, in a few words into out. */
static void ungated_reason(const compare_data *m, const compare_variant *cv, int i, char *out, size_t n)
{
    const compare_cell *b = &cv->cell[0], *c = &cv->cell[i];
    if (!b->va)
        snprintf(out, n, "not in the baseline %s", m->in[0]->label);
    else if (!c->va)
        snprintf(out, n, "not in %s", m->in[i]->label);
    else if (b->va->result->status != VARIANT_OK || c->va->result->status != VARIANT_OK)
        snprintf(out, n, "%s in %s", b->va->result->status != VARIANT_OK ? b->state : c->state,
                 b->va->result->status != VARIANT_OK ? m->in[0]->label : m->in[i]->label);
    else if (c->metric_ratio.too_few)
        snprintf(out, n, "%d and %d forwards in %s and %s (a verdict needs %d a side)", b->n, c->n, m->in[0]->label,
                 m->in[i]->label, COMPARE_MIN_FORWARDS);
    else if (!b->n || !c->n)
        snprintf(out, n, "no forwards in %s", !b->n ? m->in[0]->label : m->in[i]->label);
    else
        snprintf(out, n, "no ratio in %s (a median of 0 or not finite)", m->in[i]->label);
}

/* Appends "; " (after the first) and the text to msg, within its n bytes. */
static void append_item(char *msg, size_t n, size_t *len, int *items, const char *text)
{
    if (*len < n)
        *len += (size_t)snprintf(msg + *len, n - *len, "%s%s", *items ? "; " : "", text);
    (*items)++;
}

int compare_gate_scope(const compare_data *m, char *msg, size_t n)
{
    int gated = 0, items = 0;
    size_t len = 0;
    char item[512], why[400];
    msg[0] = '\0';
    for (int v = 0; v < m->n_variants; v++) {
        const compare_variant *cv = &m->variants[v];
        int model = 0;
        for (int i = 0; i < m->n; i++)
            model |= cv->cell[i].va && model_is_step_trace(cv->cell[i].va);
        if (model)
            continue; /* a model trace gates by its steps, below */
        for (int i = 1; i < m->n; i++) {
            if (cv->cell[i].metric_ratio.verdict != VERDICT_NONE) {
                gated++;
                continue;
            }
            ungated_reason(m, cv, i, why, sizeof why);
            snprintf(item, sizeof item, "variant %s: %s", cv->name, why);
            append_item(msg, n, &len, &items, item);
        }
    }
    for (int k = 0; k < m->traces.n_pairs; k++) {
        const trace_pair *pr = &m->traces.pairs[k];
        if (pr->step_ratio.verdict != VERDICT_NONE) {
            gated++;
            continue;
        }
        snprintf(item, sizeof item, "model trace %s against %s: %d and %d steps (a verdict needs %d a side)",
                 pr->va[1]->result->name, pr->va[0]->result->name, pr->step[0].n, pr->step[1].n, COMPARE_MIN_STEPS);
        append_item(msg, n, &len, &items, item);
    }
    for (int k = 0; k < m->traces.n_unpaired; k++) {
        const trace_unpaired *u = &m->traces.unpaired[k];
        snprintf(item, sizeof item, "model trace %s of %s: no model trace to pair with in %s", u->va->result->name,
                 m->in[u->archive]->label, m->in[u->against]->label);
        append_item(msg, n, &len, &items, item);
    }
    if (!items && !gated)
        snprintf(msg, n, "no variant and no model trace in the archives");
    return gated;
}
