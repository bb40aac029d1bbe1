/* compare of run --backward archives (tests/fixtures/h200-backward): each variant's backwards
 * paired with the baseline's (too few for a verdict: the ratio alone), and, against a run without
 * a backward (h200-cudnn919-a, the same default shape), the backward's findings not testable
 * there rather than found in one run only. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "compare.h"
#include "exit_codes.h"

#define BWD "tests/fixtures/h200-backward"
#define FWD_ONLY "tests/fixtures/h200-cudnn919-a"

typedef struct pair {
    compare_archive a, b;
    compare_data m;
} pair;

static void build(pair *p, const char *da, const char *db)
{
    char err[512];
    memset(p, 0, sizeof *p);
    cr_assert_eq(compare_load(&p->a, da, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(compare_load(&p->b, db, err, sizeof err), EXIT_OK, "%s", err);
    compare_archive *in[2] = {&p->a, &p->b};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT};
    cr_assert_eq(compare_build(&p->m, in, 2, &opt, err, sizeof err), EXIT_OK, "%s", err);
}

static void release(pair *p)
{
    compare_free(&p->m);
    compare_archive_free(&p->a);
    compare_archive_free(&p->b);
}

Test(compare_backward, backwards_paired_with_the_baseline)
{
    pair p;
    build(&p, BWD, BWD);
    cr_assert_eq(p.m.backward, 1);
    for (int v = 0; v < p.m.n_variants; v++) {
        const compare_variant *cv = &p.m.variants[v];
        cr_assert_eq(cv->bwd[0].n, 3, "%s", cv->name);
        cr_assert_eq(cv->bwd[1].n, 3);
        cr_assert_float_eq(cv->bwd[1].ratio.ci.ratio, 1.0, 1e-12, "%s", cv->name);
        cr_assert_eq(cv->bwd[1].ratio.verdict, VERDICT_NONE, "3 backwards a side: no verdict");
        cr_assert_eq(cv->bwd[1].ratio.too_few, 3);
        cr_assert_gt(cv->bwd[0].st.median, 0);
    }
    release(&p);
}

Test(compare_backward, findings_not_testable_without_a_backward)
{
    pair p;
    build(&p, FWD_ONLY, BWD);
    cr_assert_eq(p.m.backward, 1);
    int gaps = 0;
    for (int v = 0; v < p.m.n_variants; v++) {
        const compare_variant *cv = &p.m.variants[v];
        cr_assert_eq(cv->bwd[0].n, 0);
        cr_assert(isnan(cv->bwd[1].ratio.ci.ratio) || cv->bwd[1].ratio.ci.ratio == 0, "no ratio without a baseline");
        const kernel_diff *d = &cv->diff[1];
        for (int k = 0; k < d->n_only_other; k++)
            cr_assert_null(strstr(d->only_other[k], "backward:"), "%s: a backward finding counted as new: %s",
                           cv->name, d->only_other[k]);
        for (int k = 0; k < d->n_gap_other; k++)
            gaps += strstr(d->gap_other[k].missing, "no backward") != NULL;
    }
    cr_assert_geq(gaps, 6, "every variant's backward findings not testable on the forward-only run");
    release(&p);
}
