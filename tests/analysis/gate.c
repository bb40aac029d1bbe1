/* analysis/compare's gate: the cases that fooled `compare --fail-on`
 * built here from recorded fixtures, their times rewritten in memory (and written to a temp
 * directory for the command line):
 *   - one noisy pass among replicates cannot set the floor (E02);
 *   - a sample outside physical bounds judges no forward throttled (E03);
 *   - a verdict needs COMPARE_MIN_FORWARDS forwards a side (E06);
 *   - --fail-on that compared nothing exits EXIT_NOTHING_GATED (E07).
 * Times are made faster by shrinking GPU operations (never stretched: a stretched kernel would
 * overlap the next one on its stream), so a "2x regression" is a baseline at half the time. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"
#include "archive_read.h"
#include "compare.h"
#include "exit_codes.h"
#include "findings.h"
#include "run_cli.h"

#define REP3 "tests/fixtures/h200-rep3-a"     /* 3 passes a variant, samples with SM clocks */
#define FOUR "tests/fixtures/h200-4var"       /* 4 forwards a variant */
#define TWO_STEPS "tests/fixtures/models-h200/llama-gqa-sdpa-infer.json.gz" /* a model trace of 2 steps */

static void read_archive(compare_archive *ar, const char *dir)
{
    char err[1024];
    memset(ar, 0, sizeof *ar);
    trace_init(&ar->t);
    snprintf(ar->dir, sizeof ar->dir, "%s", dir);
    cr_assert_eq(archive_read(dir, &ar->t, &ar->r, err, sizeof err), EXIT_OK, "%s", err);
}

static void analyse(compare_archive *ar)
{
    char err[1024];
    cr_assert_eq(compare_analyse(ar, err, sizeof err), EXIT_OK, "%s", err);
}

/* The factor each forward's GPU operations are shrunk by: by the forward's pass, or its rank. */
typedef double (*shrink_fn)(const forward *fw, int rank);

/* Shrinks every operation of every forward of every variant of ar by fn (ar analysed; it is
 * analysed again after). */
static void shrink(compare_archive *ar, shrink_fn fn)
{
    for (int v = 0; v < ar->a.n; v++) {
        const variant_analysis *va = &ar->a.v[v];
        for (int i = 0; i < va->n_forwards; i++) {
            double f = fn(&va->forwards[i], i);
            for (int k = 0; k < va->forwards[i].n_ops; k++) {
                gpu_op *op = (gpu_op *)va->forwards[i].ops[k];
                op->end_ns = op->start_ns + (int64_t)llround((double)(op->end_ns - op->start_ns) * f);
            }
        }
    }
    analysis_free(&ar->a);
    analyse(ar);
}

static compare_data build(compare_archive *base, compare_archive *other)
{
    char err[1024];
    compare_archive *in[2] = {base, other};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT};
    compare_data m;
    cr_assert_eq(compare_build(&m, in, 2, &opt, err, sizeof err), EXIT_OK, "%s", err);
    return m;
}

static char *temp_dir(void)
{
    char *d = strdup("/tmp/attnprof-gate-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

/* ar's run.json and trace.json into dst (created). */
static void write_archive(const compare_archive *ar, const char *dst)
{
    char path[700], err[512];
    cr_assert_eq(mkdir(dst, 0755), 0, "%s", dst);
    snprintf(path, sizeof path, "%s/run.json", dst);
    cr_assert_eq(run_info_write_json(&ar->r, path, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/trace.json", dst);
    cr_assert_eq(trace_write_json(&ar->t, path, err, sizeof err), 0, "%s", err);
}

/* `compare A B --fail-on LIST`'s exit code, A and B written under dir. */
static int fail_on(const char *dir, const compare_archive *a, const compare_archive *b, const char *list)
{
    char pa[600], pb[600], cmd[2400];
    snprintf(pa, sizeof pa, "%s/base", dir);
    snprintf(pb, sizeof pb, "%s/run", dir);
    write_archive(a, pa);
    write_archive(b, pb);
    snprintf(cmd, sizeof cmd, "compare %s %s -o %s/cmp -q --fail-on %s", pa, pb, dir, list);
    return attnprof(cmd);
}

/* ---- E02: one noisy pass ---------------------------------------------------------------- */

static double pass_factor[3];
static double by_pass(const forward *fw, int rank) { return pass_factor[fw->range->sample.pass]; }

/* The run (rep3-a as recorded) against a baseline shrunk by 1/r_p in pass p: a regression of
 * r_p in pass p. Every variant's verdict, its floor and its outlier passes are checked. */
static void regression_with_a_noisy_pass(double every, double noisy, const char *label)
{
    static compare_archive base, run;
    read_archive(&base, REP3);
    read_archive(&run, REP3);
    analyse(&base);
    analyse(&run);
    pass_factor[0] = pass_factor[1] = 1 / every;
    pass_factor[2] = 1 / noisy; /* the baseline's pass 2 is the one that disagrees */
    shrink(&base, by_pass);
    compare_data m = build(&base, &run);
    int checked = 0;
    for (int v = 0; v < m.n_variants; v++) {
        const compare_cell *b = &m.variants[v].cell[0], *c = &m.variants[v].cell[1];
        if (!b->va || b->n < COMPARE_MIN_FORWARDS)
            continue;
        checked++;
        cr_assert_eq(b->passes, 3, "%s", m.variants[v].name);
        cr_assert_eq(c->replicate_floor, 1, "%s", m.variants[v].name);
        cr_expect_eq(b->outlier_passes, 1u << 2, "%s %s: the noisy pass is the outlier (mask %#x)", label,
                     m.variants[v].name, b->outlier_passes);
        cr_expect_leq(c->metric_floor, COMPARE_REPLICATE_FLOOR_CAP, "%s %s: floor %g", label, m.variants[v].name,
                      c->metric_floor);
        cr_expect_eq(c->metric_ratio.verdict, VERDICT_SLOWER, "%s %s: %g [%g, %g] against a floor %g", label,
                     m.variants[v].name, c->metric_ratio.ci.ratio, c->metric_ratio.ci.lo, c->metric_ratio.ci.hi,
                     c->metric_floor);
    }
    cr_assert_gt(checked, 0);
    char msg[1024];
    cr_expect_gt(compare_gate(&m, 1u << VERDICT_SLOWER | 1u << VERDICT_AMBIGUOUS, msg, sizeof msg), 0);
    char *dir = temp_dir();
    cr_expect_eq(fail_on(dir, &base, &run, "slower,ambiguous"), EXIT_VERDICT_GATE, "%s: %s", label, err_text);
    remove_tree(dir);
    free(dir);
    compare_free(&m);
    compare_archive_free(&base);
    compare_archive_free(&run);
}

Test(gate, one_pass_at_1_95x_cannot_hide_a_1_3x_regression, .timeout = 120)
{
    regression_with_a_noisy_pass(1.3, 1.95, "1.3x, one pass 1.95x");
}

Test(gate, one_pass_at_20x_cannot_hide_a_2x_regression, .timeout = 120)
{
    regression_with_a_noisy_pass(2.0, 20.0, "2x, one pass 20x");
}

Test(gate, the_pass_that_disagrees_is_named_in_the_run_too)
{
    /* The run's pass 0 at 1.5x its two others: set apart, the spread of the two that agree. */
    static compare_archive base, run;
    read_archive(&base, REP3);
    read_archive(&run, REP3);
    analyse(&base);
    analyse(&run);
    pass_factor[0] = 1, pass_factor[1] = 1 / 1.5, pass_factor[2] = 1 / 1.5;
    shrink(&run, by_pass);
    compare_data m = build(&base, &run);
    const compare_cell *c = &m.variants[0].cell[1];
    cr_assert_eq(c->outlier_passes, 1u << 0, "pass 0 disagrees with the two others (mask %#x)", c->outlier_passes);
    cr_expect_lt(c->pass_spread_metric, 0.05, "the spread of the two that agree: %g", c->pass_spread_metric);
    compare_free(&m);
    compare_archive_free(&base);
    compare_archive_free(&run);
}

/* ---- E03: a sample outside physical bounds ------------------------------------------------ */

static int glitched; /* the rank of the forward with the absurd clock */
static double all_but_glitched(const forward *fw, int rank) { return rank == glitched ? 0.5 : 1.0; }
static double half(const forward *fw, int rank) { return 0.5; }

Test(gate, an_absurd_clock_marks_no_forward_throttled, .timeout = 120)
{
    static compare_archive base, run;
    read_archive(&base, REP3);
    read_archive(&run, REP3);
    analyse(&run);
    const variant_analysis *va = &run.a.v[0];
    cr_assert_eq(va->n_throttled, 0, "the recorded run has no throttled forward");
    int n = va->n_forwards;
    cr_assert_gt(n, 20);
    glitched = n / 2;
    host_range *h = (host_range *)va->forwards[glitched].range;
    cr_assert(h->sample.recorded && base.r.device.clock_khz == 1980000);
    h->sample.sm_mhz = 1000000; /* the GPU's maximum is 1980 MHz */
    analysis_free(&run.a);
    analyse(&run);
    va = &run.a.v[0];
    cr_assert_eq(va->n_forwards, n, "every forward stays: %d of %d", va->n_forwards, n);
    cr_assert_eq(va->n_throttled, 0);
    cr_assert_eq(va->n_implausible, 1);
    cr_assert_eq(run.a.max_sm_mhz, 1980, "the run's highest clock is a plausible one: %d", run.a.max_sm_mhz);
    const finding *fd = NULL;
    for (int k = 0; k < va->n_findings; k++)
        if (!strcmp(va->meta[k].id, "implausible_samples"))
            fd = &va->meta[k];
    cr_assert_not_null(fd, "the dropped sample is stated");
    cr_expect_eq(findings_value(fd, "dropped"), 1);
    cr_expect_eq(findings_value(fd, "forwards"), n);

    /* the run 2x slower than the baseline in every forward but the glitched one */
    shrink(&run, all_but_glitched);
    analyse(&base);
    shrink(&base, half);
    compare_data m = build(&base, &run);
    const compare_cell *c = &m.variants[0].cell[1];
    cr_assert_eq(c->n, n);
    cr_expect_eq(c->metric_ratio.verdict, VERDICT_SLOWER, "%g [%g, %g]", c->metric_ratio.ci.ratio,
                 c->metric_ratio.ci.lo, c->metric_ratio.ci.hi);
    cr_expect(fabs(c->metric_ratio.ci.ratio - 2) < 0.05, "%g", c->metric_ratio.ci.ratio);
    compare_free(&m);
    compare_archive_free(&base);
    compare_archive_free(&run);
}

Test(gate, samples_outside_bounds_are_each_dropped)
{
    static compare_archive ar;
    read_archive(&ar, REP3);
    analyse(&ar);
    struct forward_sample ok = ar.a.v[0].forwards[0].range->sample;
    cr_assert(analysis_sample_plausible(&ar.a, &ok));
    struct forward_sample bad[] = {ok, ok, ok, ok, ok, ok, ok};
    bad[0].sm_mhz = -5;
    bad[1].sm_mhz = 2200; /* above 1980 MHz + 10% */
    bad[2].event_us = -1;
    bad[3].event_us = INFINITY;
    bad[4].event_us = 1e12;
    bad[5].power_w = -300;
    bad[6].temp_c = 900;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_not(analysis_sample_plausible(&ar.a, &bad[i]), "sample %zu", i);
    ok.sm_mhz = 1980;
    cr_expect(analysis_sample_plausible(&ar.a, &ok), "the maximum itself is plausible");
    compare_archive_free(&ar);
}

/* ---- E06: a verdict needs its forwards -------------------------------------------------- */

Test(gate, four_forwards_give_a_ratio_and_no_verdict)
{
    static compare_archive base, run;
    read_archive(&base, FOUR);
    read_archive(&run, FOUR);
    analyse(&base);
    analyse(&run);
    shrink(&base, half);
    compare_data m = build(&base, &run);
    for (int v = 0; v < m.n_variants; v++) {
        const compare_cell *c = &m.variants[v].cell[1];
        if (!c->va || c->n == 0)
            continue;
        cr_assert_eq(c->n, 4);
        cr_expect_eq(c->metric_ratio.verdict, VERDICT_NONE, "%s", m.variants[v].name);
        cr_expect_eq(c->metric_ratio.too_few, 4, "%s", m.variants[v].name);
        cr_expect(fabs(c->metric_ratio.ci.ratio - 2) < 0.05, "the ratio is still given: %g", c->metric_ratio.ci.ratio);
        cr_expect(isnan(c->metric_ratio.ci.lo) && isnan(c->metric_ratio.ci.hi), "no interval");
    }
    char msg[1024];
    cr_expect_eq(compare_gate(&m, 1u << VERDICT_SLOWER | 1u << VERDICT_AMBIGUOUS, msg, sizeof msg), 0, "%s", msg);
    cr_expect_eq(compare_gate_scope(&m, msg, sizeof msg), 0, "%s", msg);
    compare_free(&m);
    compare_archive_free(&base);
    compare_archive_free(&run);
}

Test(gate, the_rule_holds_for_every_ratio)
{
    double a[COMPARE_MIN_FORWARDS], b[COMPARE_MIN_FORWARDS];
    for (int i = 0; i < COMPARE_MIN_FORWARDS; i++)
        a[i] = 100 + i, b[i] = 200 + i;
    compare_ratio r = compare_ratio_of(a, 1, b, 1, 0.02, 0);
    cr_expect_eq(r.verdict, VERDICT_NONE);
    cr_expect_eq(r.too_few, 1);
    r = compare_ratio_of(a, COMPARE_MIN_FORWARDS, b, COMPARE_MIN_FORWARDS - 1, 0.02, 0);
    cr_expect_eq(r.too_few, COMPARE_MIN_FORWARDS - 1);
    r = compare_ratio_of(a, COMPARE_MIN_FORWARDS, b, COMPARE_MIN_FORWARDS, 0.02, 0);
    cr_expect_eq(r.verdict, VERDICT_SLOWER);
    cr_expect_eq(r.too_few, 0);
}

/* ---- E07: nothing compared, nothing passed ----------------------------------------------- */

Test(gate, fail_on_with_too_few_forwards_exits_nothing_gated, .timeout = 120)
{
    static compare_archive base, run;
    read_archive(&base, FOUR);
    read_archive(&run, FOUR);
    analyse(&base);
    analyse(&run);
    shrink(&base, half);
    char *dir = temp_dir();
    cr_assert_eq(fail_on(dir, &base, &run, "slower,ambiguous"), EXIT_NOTHING_GATED, "%s", err_text);
    cr_expect(strchr(err_text, '\n') == strrchr(err_text, '\n'), "one line: %s", err_text);
    cr_expect(strstr(err_text, "4 and 4 forwards"), "names why: %s", err_text);
    remove_tree(dir);
    free(dir);
    compare_archive_free(&base);
    compare_archive_free(&run);
}

Test(gate, fail_on_with_no_shared_variant_exits_nothing_gated, .timeout = 120)
{
    static compare_archive base, run;
    read_archive(&base, REP3);
    read_archive(&run, REP3);
    /* every variant of the run renamed: no variant in both */
    for (int v = 0; v < run.r.n_variants; v++) {
        char old[32], renamed[32];
        snprintf(old, sizeof old, "%s", run.r.variants[v].name);
        snprintf(renamed, sizeof renamed, "x%.30s", old);
        snprintf(run.r.variants[v].name, sizeof run.r.variants[v].name, "%s", renamed);
        for (size_t i = 0; i < run.t.n_ranges; i++)
            if (run.t.ranges[i].variant && !strcmp(run.t.ranges[i].variant, old)) {
                free(run.t.ranges[i].variant);
                run.t.ranges[i].variant = strdup(renamed);
            }
    }
    char *dir = temp_dir();
    cr_assert_eq(fail_on(dir, &base, &run, "slower"), EXIT_NOTHING_GATED, "%s", err_text);
    cr_expect(strstr(err_text, "not in"), "names why: %s", err_text);
    /* the same archives with a shared variant gate as before */
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "compare %s/base %s/base -o %s/cmp2 -q --fail-on slower", dir, dir, dir);
    cr_expect_eq(attnprof(cmd), EXIT_OK, "%s", err_text);
    remove_tree(dir);
    free(dir);
    compare_archive_free(&base);
    compare_archive_free(&run);
}

Test(gate, fail_on_with_a_model_trace_of_two_steps_exits_nothing_gated, .timeout = 120)
{
    char *dir = temp_dir(), cmd[2400];
    snprintf(cmd, sizeof cmd, "import %s -o %s/a -q", TWO_STEPS, dir);
    cr_assert_eq(attnprof(cmd), EXIT_OK, "%s", err_text);
    snprintf(cmd, sizeof cmd, "import %s -o %s/b -q", TWO_STEPS, dir);
    cr_assert_eq(attnprof(cmd), EXIT_OK, "%s", err_text);
    snprintf(cmd, sizeof cmd, "compare %s/a %s/b -o %s/cmp -q --fail-on slower,ambiguous", dir, dir, dir);
    cr_assert_eq(attnprof(cmd), EXIT_NOTHING_GATED, "%s", err_text);
    cr_expect(strstr(err_text, "2 and 2 steps"), "names why: %s", err_text);
    snprintf(cmd, sizeof cmd, "compare %s/a %s/b -o %s/cmp2 -q", dir, dir, dir);
    cr_expect_eq(attnprof(cmd), EXIT_OK, "without --fail-on nothing fails: %s", err_text);
    remove_tree(dir);
    free(dir);
}
