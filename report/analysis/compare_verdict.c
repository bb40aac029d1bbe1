/* The verdict of a ratio (compare.h): the seeded bootstrap interval of a ratio of medians
 * (bootstrap.h) read against a noise floor. Apart from compare.c so that every comparison
 * (variants, kernels, roles, and the steps of model traces in compare_traces.c) takes its
 * verdicts from this one rule without calling back into the module that builds compare_data.
 * Below COMPARE_MIN_FORWARDS samples a side there is no verdict, whatever the floor. */
#include "compare.h"

#include <string.h>

#include "median.h"

#include <math.h>

const char *compare_unit_word(const compare_data *m)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(model_unit_word_of_run(&m->in[i]->a), "step"))
            return "step";
    return "forward";
}

const char *compare_verdict_word(compare_verdict v)
{
    switch (v) {
    case VERDICT_SAME: return "same";
    case VERDICT_FASTER: return "faster";
    case VERDICT_SLOWER: return "slower";
    case VERDICT_AMBIGUOUS: return "ambiguous";
    case VERDICT_NONE: break;
    }
    return "";
}

compare_ratio compare_ratio_of(const double *base, int n_base, const double *x, int n_x, double floor,
                               int higher_is_better)
{
    compare_ratio r = {.verdict = VERDICT_NONE};
    if (n_base > 0 && n_x > 0 && (n_base < COMPARE_MIN_FORWARDS || n_x < COMPARE_MIN_FORWARDS)) {
        /* too few for a verdict (compare.h): the ratio of the medians, said to be alone */
        double mb = median_of(base, n_base), mx = median_of(x, n_x);
        r.ci = (ratio_ci){mb != 0 && isfinite(mb) && isfinite(mx) ? mx / mb : NAN, NAN, NAN};
        r.too_few = n_base < n_x ? n_base : n_x;
        return r;
    }
    r.ci = bootstrap_median_ratio(base, n_base, x, n_x, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED);
    if (!isfinite(r.ci.ratio) || !isfinite(r.ci.lo) || !isfinite(r.ci.hi))
        return r;
    /* The band is symmetric in ratio (×(1+f) and ÷(1+f)), so swapping baseline
     * and run swaps faster and slower and nothing else. */
    double hi_edge = 1.0 + floor, lo_edge = 1.0 / (1.0 + floor);
    if (r.ci.lo >= lo_edge && r.ci.hi <= hi_edge)
        r.verdict = VERDICT_SAME;
    else if (r.ci.lo > hi_edge || r.ci.hi < lo_edge)
        r.verdict = (r.ci.ratio > 1.0) == (higher_is_better != 0) ? VERDICT_FASTER : VERDICT_SLOWER;
    else
        r.verdict = VERDICT_AMBIGUOUS;
    return r;
}
