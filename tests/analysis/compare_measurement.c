/* The measurement as the report reads it: run.json's measurement plan and stop outcomes and trace.json's
 * per-forward samples read back exactly; older archives read as "not recorded"; throttled
 * forwards leave every median; samples.csv and kernels.csv against trace.json; compare's
 * L2 rule, replicate floors and --fail-on. No GPU needed.
 *
 * The archives with a plan, samples or passes are SYNTHETIC: built here from the recorded
 * H200 fixtures h200-cudnn919-a/-b by rewriting their run.json and trace.json (the records
 * are the recorded ones; the plan, clocks and passes are invented by the test and say
 * nothing about the H200). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "compare.h"
#include "compare_doc.h"
#include "figures.h"
#include "exit_codes.h"
#include "fixture.h"
#include "measurement_text.h"
#include "median.h"
#include "run_cli.h"
#include "slurp.h"

#define CUDNN914 "tests/fixtures/h200-cudnn914"
#define CUDNN919_A "tests/fixtures/h200-cudnn919-a"
#define CUDNN919_B "tests/fixtures/h200-cudnn919-b"

static const char *const OLD_FIXTURES[] = {"tests/fixtures/h200-4var",        "tests/fixtures/h200-6var",
                                           "tests/fixtures/h200-counters",    CUDNN914,
                                           CUDNN919_A,                        CUDNN919_B,
                                           "tests/fixtures/h200-cudnn919-gpu1", "tests/fixtures/h200-sm90a"};

/* How a synthetic archive's forwards are tagged: the SM clock of forward `k` (its rank
 * among the variant's forwards in recording order) and its pass. */
typedef struct synth {
    const char *l2;
    int replicates;        /* passes: forward k is in pass k % replicates */
    int iters_per_pass;    /* run.json iters (0: leave it) */
    int slow_a, slow_b;    /* forwards of every variant given slow_mhz (-1: none) */
    int slow_mhz, fast_mhz;
    int edge;              /* a forward given exactly the throttle line's clock (-1: none) */
    double fraction;
    int with_stop;         /* write stop outcomes ("fixed", the forwards per variant) */
} synth;

static void rm_rf(const char *dir) { remove_tree(dir); }

/* dst (created) gets src's run.json and trace.json rewritten per `s`. */
static void make_synthetic(const char *src, const char *dst, const synth *s)
{
    char path[600], err[512];
    static run_info r;
    trace t;
    snprintf(path, sizeof path, "%s/run.json", src);
    cr_assert_eq(run_info_read_json(&r, path, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/trace.json", src);
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), 0, "%s", err);
    measurement_plan *m = &r.measurement;
    memset(m, 0, sizeof *m);
    m->recorded = 1;
    snprintf(m->l2, sizeof m->l2, "%s", s->l2);
    m->l2_flush_bytes = !strcmp(s->l2, "cold") ? 2LL * r.device.l2_bytes : 0;
    m->flush_us = !strcmp(s->l2, "cold") ? 41.25 : NAN;
    snprintf(m->iters_rule, sizeof m->iters_rule, "fixed");
    m->noise_target = 0.005;
    m->min_forwards = 10;
    m->max_forwards = s->iters_per_pass ? s->iters_per_pass : r.iters;
    m->min_gpu_s = 0.5;
    m->time_cap_s = 15;
    m->replicates = s->replicates;
    m->throttle_fraction = s->fraction;
    m->nvml_sample_us = 0.1 + 12.3; /* not a short decimal: the writer must keep every bit */
    m->lock_clocks_requested = 1;
    snprintf(m->lock_clocks, sizeof m->lock_clocks, "refused: synthetic (no NVML here)");
    if (s->iters_per_pass)
        r.iters = s->iters_per_pass;
    for (int v = 0; v < r.n_variants; v++) {
        int n = 0;
        for (size_t i = 0; i < t.n_ranges; i++)
            n += t.ranges[i].iteration >= 0 && !strcmp(t.ranges[i].variant, r.variants[v].name);
        if (s->with_stop && n)
            r.variants[v].stop = (stop_outcome){.reason = "fixed", .forwards = n, .noise = 1.0 / 300, .gpu_s = 0.01};
        int k = 0;
        for (size_t i = 0; i < t.n_ranges; i++) { /* ranges are sorted by start: recording order */
            host_range *h = &t.ranges[i];
            if (h->iteration < 0 || strcmp(h->variant, r.variants[v].name))
                continue;
            int mhz = k == s->slow_a || k == s->slow_b ? s->slow_mhz : s->fast_mhz;
            if (k == s->edge)
                mhz = (int)ceil(s->fraction * s->fast_mhz);
            h->sample = (struct forward_sample){.recorded = 1,
                                                .pass = k % s->replicates,
                                                .event_us = (double)(h->end_ns - h->start_ns) / 1000.0 + 0.1,
                                                .sm_mhz = mhz,
                                                .mem_mhz = 3201,
                                                .power_w = 300.0 + k / 3.0,
                                                .temp_c = 40 + k % 5};
            k++;
        }
    }
    cr_assert_eq(mkdir(dst, 0755), 0, "%s", dst);
    snprintf(path, sizeof path, "%s/run.json", dst);
    cr_assert_eq(run_info_write_json(&r, path, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/trace.json", dst);
    cr_assert_eq(trace_write_json(&t, path, err, sizeof err), 0, "%s", err);
    trace_free(&t);
}

static char *temp_dir(void)
{
    char *d = strdup("/tmp/attnprof-measure-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static const synth THROTTLED = {.l2 = "cold", .replicates = 1, .slow_a = 3, .slow_b = 11, .slow_mhz = 1400,
                                .fast_mhz = 1980, .edge = 7, .fraction = 0.75, .with_stop = 1};

/* ---- round trip ------------------------------------------------------------- */

Test(measurement, plan_stop_and_samples_read_back_exactly)
{
    char *dir = temp_dir(), dst[600], path[700], err[512];
    snprintf(dst, sizeof dst, "%s/a", dir);
    make_synthetic(CUDNN919_A, dst, &THROTTLED);
    static run_info r;
    trace t;
    snprintf(path, sizeof path, "%s/run.json", dst);
    cr_assert_eq(run_info_read_json(&r, path, err, sizeof err), 0, "%s", err);
    const measurement_plan *m = &r.measurement;
    cr_assert_eq(m->recorded, 1);
    cr_assert_str_eq(m->l2, "cold");
    cr_assert_eq(m->l2_flush_bytes, 2LL * r.device.l2_bytes);
    cr_assert_eq(m->flush_us, 41.25);
    cr_assert_str_eq(m->iters_rule, "fixed");
    cr_assert_eq(m->noise_target, 0.005);
    cr_assert_eq(m->min_forwards, 10);
    cr_assert_eq(m->max_forwards, 20);
    cr_assert_eq(m->min_gpu_s, 0.5);
    cr_assert_eq(m->time_cap_s, 15);
    cr_assert_eq(m->replicates, 1);
    cr_assert_eq(m->throttle_fraction, 0.75);
    cr_assert_eq(m->nvml_sample_us, 0.1 + 12.3, "every bit of the double");
    cr_assert_eq(m->lock_clocks_requested, 1);
    cr_assert_str_eq(m->lock_clocks, "refused: synthetic (no NVML here)");
    for (int v = 0; v < r.n_variants; v++) {
        cr_assert_str_eq(r.variants[v].stop.reason, "fixed");
        cr_assert_eq(r.variants[v].stop.forwards, 20);
        cr_assert_eq(r.variants[v].stop.noise, 1.0 / 300);
        cr_assert_eq(r.variants[v].stop.gpu_s, 0.01);
    }
    snprintf(path, sizeof path, "%s/trace.json", dst);
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), 0, "%s", err);
    int sampled = 0;
    for (size_t i = 0; i < t.n_ranges; i++) {
        const host_range *h = &t.ranges[i];
        if (h->iteration < 0) {
            cr_assert_eq(h->sample.recorded, 0, "only recorded forwards carry a sample");
            continue;
        }
        cr_assert_eq(h->sample.recorded, 1);
        cr_assert_eq(h->sample.event_us, (double)(h->end_ns - h->start_ns) / 1000.0 + 0.1, "%.17g",
                     h->sample.event_us);
        cr_assert_eq(h->sample.mem_mhz, 3201);
        cr_assert(h->sample.sm_mhz == 1980 || h->sample.sm_mhz == 1400 || h->sample.sm_mhz == 1485);
        sampled++;
    }
    cr_assert_eq(sampled, 120, "six variants of 20 forwards");
    /* written again from what was read: the same bytes (no field is lost or rounded) */
    char again[700];
    snprintf(again, sizeof again, "%s/again.json", dir);
    cr_assert_eq(trace_write_json(&t, again, err, sizeof err), 0, "%s", err);
    char *x = slurp(path), *y = slurp(again);
    cr_assert_str_eq(x, y);
    free(x), free(y);
    trace_free(&t);
    rm_rf(dir);
    free(dir);
}

Test(measurement, older_archives_read_as_not_recorded)
{
    for (size_t k = 0; k < sizeof OLD_FIXTURES / sizeof OLD_FIXTURES[0]; k++) {
        fixture f;
        fixture_load(&f, OLD_FIXTURES[k]);
        cr_assert_eq(f.r.measurement.recorded, 0, "%s", OLD_FIXTURES[k]);
        for (int v = 0; v < f.r.n_variants; v++)
            cr_assert_str_eq(f.r.variants[v].stop.reason, "", "%s", OLD_FIXTURES[k]);
        for (size_t i = 0; i < f.t.n_ranges; i++)
            cr_assert_eq(f.t.ranges[i].sample.recorded, 0, "%s", OLD_FIXTURES[k]);
        cr_assert_eq(f.a.throttle_judged, 0);
        for (int v = 0; v < f.a.n; v++)
            cr_assert_eq(f.a.v[v].n_throttled + f.a.v[v].n_sampled, 0);
        char text[1024];
        measurement_plan_text(&f.a, text, sizeof text);
        cr_assert(strstr(text, "not recorded"), "%s", text);
        cr_assert_eq(measurement_variant_applies(&f.a), 0, "no per-variant table without a plan");
        fixture_free(&f);
    }
}

/* run.json's measurement.KEY set to v (v is stolen). */
static void set_measurement_key(const char *path, const char *key, json_t *v)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    cr_assert_not_null(root, "%s", je.text);
    json_object_set_new(json_object_get(root, "measurement"), key, v);
    cr_assert_eq(json_dump_file(root, path, JSON_INDENT(2)), 0);
    json_decref(root);
}

/* A plan that contradicts itself is refused, naming what; `report` exits 6 on it. */
Test(measurement, an_inconsistent_plan_is_refused)
{
    char *dir = temp_dir(), dst[600], path[700], err[512], cmd[1400];
    snprintf(dst, sizeof dst, "%s/a", dir);
    make_synthetic(CUDNN919_A, dst, &THROTTLED);
    snprintf(path, sizeof path, "%s/run.json", dst);
    /* cold without flush bytes */
    set_measurement_key(path, "l2_flush_bytes", json_integer(0));
    static run_info r;
    cr_assert_eq(run_info_read_json(&r, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "inconsistent: measurement says the L2 was cold but no flush bytes"), "%s", err);
    snprintf(cmd, sizeof cmd, "report %s -q", dst);
    cr_assert_eq(attnprof(cmd), EXIT_BAD_ARCHIVE, "%s", err_text);
    cr_assert(strstr(err_text, "inconsistent:"), "%s", err_text);
    /* an L2 state that is neither */
    set_measurement_key(path, "l2", json_string("tepid"));
    cr_assert_eq(run_info_read_json(&r, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "measurement.l2: expected \"warm\" or \"cold\""), "%s", err);
    /* a stop outcome beyond the plan's most forwards */
    set_measurement_key(path, "l2", json_string("warm"));
    set_measurement_key(path, "max_forwards", json_integer(5));
    set_measurement_key(path, "min_forwards", json_integer(5));
    cr_assert_eq(run_info_read_json(&r, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "recorded 20 forwards, above max_forwards 5 x 1 passes"), "%s", err);
    rm_rf(dir);
    free(dir);
}

/* ---- throttled forwards ------------------------------------------------------ */

Test(measurement, throttled_forwards_leave_every_median)
{
    char *dir = temp_dir(), dst[600];
    snprintf(dst, sizeof dst, "%s/a", dir);
    make_synthetic(CUDNN919_A, dst, &THROTTLED);
    fixture orig, syn;
    fixture_load(&orig, CUDNN919_A);
    fixture_load(&syn, dst);
    cr_assert_eq(syn.a.throttle_judged, 1);
    cr_assert_eq(syn.a.max_sm_mhz, 1980);
    for (int v = 0; v < orig.a.n; v++) {
        const variant_analysis *o = &orig.a.v[v], *s = &syn.a.v[v];
        cr_assert_eq(o->n_forwards, 20);
        /* independently: the recorded forwards in order, leaving out ranks 3 and 11 (1400 MHz <
         * 0.75 x 1980 = 1485); rank 7 sits at 1485 MHz, on the line, and stays */
        double cuda[20], cpu[20];
        int n = 0;
        for (int k = 0; k < 20; k++)
            if (k != 3 && k != 11)
                cuda[n] = o->forwards[k].cuda_us, cpu[n++] = o->forwards[k].cpu_us;
        cr_assert_eq(s->n_forwards, 18, "%s", s->result->name);
        cr_assert_eq(s->n_throttled, 2);
        cr_assert_eq(s->all_throttled, 0);
        cr_assert_eq(s->throttled[0].iteration, o->forwards[3].iteration);
        cr_assert_eq(s->throttled[1].iteration, o->forwards[11].iteration);
        cr_assert_eq(s->cuda_us.n, 18);
        cr_assert_eq(s->cuda_us.median, median_of(cuda, n), "%s", s->result->name);
        cr_assert_eq(s->cpu_us.median, median_of(cpu, n));
        /* the median with them would differ for some variant: checked below over all */
        char text[256];
        measurement_throttle_text(&syn.a, s, text, sizeof text);
        cr_assert_str_eq(text, "2 of 20 forwards throttled (SM clock below 75% of 1980 MHz), left out of the medians");
        measurement_clock_text(s, text, sizeof text);
        cr_assert_str_eq(text, "SM 1400–1980 MHz, memory 3201 MHz");
    }
    int moved = 0;
    for (int v = 0; v < orig.a.n; v++)
        moved += orig.a.v[v].cuda_us.median != syn.a.v[v].cuda_us.median;
    cr_assert_gt(moved, 0, "leaving two forwards out changed no median: the test would not see the rule");
    fixture_free(&orig);
    fixture_free(&syn);
    rm_rf(dir);
    free(dir);
}

/* Every forward of a variant below the line: none is left out, and the report says so. */
Test(measurement, all_throttled_keeps_them_and_says_so)
{
    char *dir = temp_dir(), dst[600];
    snprintf(dst, sizeof dst, "%s/a", dir);
    synth s = THROTTLED;
    s.fast_mhz = 1980, s.slow_a = s.slow_b = s.edge = -1;
    make_synthetic(CUDNN919_A, dst, &s);
    /* then one variant's clocks all low: rewrite naive's forwards in the trace */
    fixture f;
    fixture_load(&f, dst);
    for (size_t i = 0; i < f.t.n_ranges; i++)
        if (f.t.ranges[i].iteration >= 0 && !strcmp(f.t.ranges[i].variant, "naive"))
            f.t.ranges[i].sample.sm_mhz = 900;
    analysis_free(&f.a);
    char err[512];
    cr_assert_eq(analysis_build(&f.a, &f.t, &f.r, err, sizeof err), 0, "%s", err);
    const variant_analysis *va = analysis_find(&f.a, "naive");
    cr_assert_eq(va->all_throttled, 1);
    cr_assert_eq(va->n_forwards, 20);
    char text[256];
    measurement_throttle_text(&f.a, va, text, sizeof text);
    cr_assert(strstr(text, "20 of 20 forwards throttled") && strstr(text, "the medians are over them all"), "%s",
              text);
    fixture_free(&f);
    rm_rf(dir);
    free(dir);
}

/* ---- samples.csv and kernels.csv ----------------------------------------------- */

/* Independently of analysis.c: the ops launched by API calls of the same process that lie
 * inside the range (by correlation id), their count and summed duration. */
static void ops_of_range(const trace *t, const host_range *h, int *n, int64_t *sum_ns)
{
    *n = 0, *sum_ns = 0;
    for (size_t j = 0; j < t->n_ops; j++) {
        int inside = 0;
        for (size_t a = 0; a < t->n_apis && !inside; a++) {
            const api_call *c = &t->apis[a];
            inside = c->correlation == t->ops[j].correlation && c->pid == h->pid && c->start_ns >= h->start_ns &&
                     c->end_ns <= h->end_ns;
        }
        if (inside)
            ++*n, *sum_ns += t->ops[j].end_ns - t->ops[j].start_ns;
    }
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Row `row` (1-based after the header) of a CSV without quoted commas in the fields read. */
static void csv_field(const char *text, int row, int col, char *out, size_t n)
{
    const char *p = text;
    for (int r = 0; r < row; r++)
        p = strchr(p, '\n') + 1;
    for (int c = 0; c < col; c++)
        p = strchr(p, ',') + 1;
    size_t len = strcspn(p, ",\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

static void check_csvs(const char *archive, int sampled)
{
    char cmd[800], path[700], err[512];
    snprintf(cmd, sizeof cmd, "report %s -q --format png", archive);
    cr_assert_eq(attnprof(cmd), EXIT_OK, "%s", err_text);
    trace t;
    snprintf(path, sizeof path, "%s/trace.json", archive);
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/samples.csv", archive);
    char *samples = slurp(path);
    snprintf(path, sizeof path, "%s/kernels.csv", archive);
    char *kernels = slurp(path);
    cr_assert_not_null(samples);
    cr_assert_not_null(kernels);
    static const char head[] = "variant,pass,iteration,cuda_us,cpu_us,span_us,event_us,sm_mhz,mem_mhz,power_w,"
                               "temp_c,throttled\n";
    cr_assert(!strncmp(samples, head, sizeof head - 1), "%.120s", samples);
    int forwards = 0, ops = 0, row = 0;
    for (size_t i = 0; i < t.n_ranges; i++) {
        const host_range *h = &t.ranges[i];
        if (h->iteration < 0)
            continue;
        forwards++;
        int n;
        int64_t sum;
        ops_of_range(&t, h, &n, &sum);
        ops += n;
        /* rows are per variant in recording order; the trace's ranges are sorted by start,
         * and each variant's forwards are contiguous: the same order */
        row++;
        char got[64], want[64];
        csv_field(samples, row, 0, got, sizeof got);
        cr_assert_str_eq(got, h->variant);
        csv_field(samples, row, 2, got, sizeof got);
        snprintf(want, sizeof want, "%d", h->iteration);
        cr_assert_str_eq(got, want);
        csv_field(samples, row, 3, got, sizeof got);
        snprintf(want, sizeof want, "%lld.%03lld", (long long)(sum / 1000), (long long)(sum % 1000));
        cr_assert_str_eq(got, want, "cuda_us of %s #%d", h->variant, h->iteration);
        csv_field(samples, row, 4, got, sizeof got);
        int64_t d = h->end_ns - h->start_ns;
        snprintf(want, sizeof want, "%lld.%03lld", (long long)(d / 1000), (long long)(d % 1000));
        cr_assert_str_eq(got, want, "cpu_us");
        csv_field(samples, row, 7, got, sizeof got);
        if (sampled) {
            snprintf(want, sizeof want, "%d", h->sample.sm_mhz);
            cr_assert_str_eq(got, want);
            csv_field(samples, row, 6, got, sizeof got);
            cr_assert_eq(strtod(got, NULL), h->sample.event_us, "event_us reads back exactly");
            csv_field(samples, row, 11, got, sizeof got);
            cr_assert_str_eq(got, h->sample.sm_mhz < 1485 ? "1" : "0");
        } else {
            cr_assert_str_eq(got, "", "no sample: an empty field, never 0");
            csv_field(samples, row, 11, got, sizeof got);
            cr_assert_str_eq(got, "");
        }
    }
    cr_assert_eq(count_lines(samples), forwards + 1, "one row per recorded forward");
    cr_assert_eq(count_lines(kernels), ops + 1, "one row per GPU operation per forward");
    /* rendered again: the same bytes */
    cr_assert_eq(attnprof(cmd), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/samples.csv", archive);
    char *again = slurp(path);
    cr_assert_str_eq(again, samples);
    free(again);
    snprintf(path, sizeof path, "%s/kernels.csv", archive);
    again = slurp(path);
    cr_assert_str_eq(again, kernels);
    free(again);
    free(samples);
    free(kernels);
    trace_free(&t);
}

Test(measurement, samples_and_kernels_csv_match_the_trace)
{
    char *dir = temp_dir(), dst[600], cmd[1400];
    snprintf(dst, sizeof dst, "%s/a", dir);
    make_synthetic(CUDNN919_A, dst, &THROTTLED);
    check_csvs(dst, 1);
    /* an older archive gets them too, its missing samples empty */
    snprintf(dst, sizeof dst, "%s/old", dir);
    snprintf(cmd, sizeof cmd, "cp -r %s %s", CUDNN914, dst);
    cr_assert_eq(system(cmd), 0);
    check_csvs(dst, 0);
    rm_rf(dir);
    free(dir);
}

/* ---- compare ------------------------------------------------------------------ */

typedef struct pair {
    compare_archive a, b;
    compare_data m;
} pair;

static int build_pair(pair *p, const char *da, const char *db, int allow_l2, char *err, size_t n)
{
    cr_assert_eq(compare_load(&p->a, da, err, n), EXIT_OK, "%s", err);
    cr_assert_eq(compare_load(&p->b, db, err, n), EXIT_OK, "%s", err);
    compare_archive *in[2] = {&p->a, &p->b};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT, .formats = FIG_PNG,
                           .allow_l2_mismatch = allow_l2};
    return compare_build(&p->m, in, 2, &opt, err, n);
}

static void free_pair(pair *p, int built)
{
    if (built)
        compare_free(&p->m);
    compare_archive_free(&p->a);
    compare_archive_free(&p->b);
}

Test(measurement, compare_refuses_mixed_l2_states)
{
    char *dir = temp_dir(), cold[600], warm[600], out[700], cmd[2000], err[1024];
    snprintf(cold, sizeof cold, "%s/cold", dir);
    snprintf(warm, sizeof warm, "%s/warm", dir);
    make_synthetic(CUDNN919_A, cold, &THROTTLED);
    synth w = THROTTLED;
    w.l2 = "warm";
    make_synthetic(CUDNN919_B, warm, &w);
    pair p = {0};
    cr_assert_eq(build_pair(&p, cold, warm, 0, err, sizeof err), EXIT_L2_MISMATCH);
    cr_assert(strstr(err, "L2 states differ") && strstr(err, "--allow-l2-mismatch"), "%s", err);
    free_pair(&p, 0);
    memset(&p, 0, sizeof p);
    cr_assert_eq(build_pair(&p, cold, warm, 1, err, sizeof err), EXIT_OK, "%s", err);
    int shown = 0;
    for (int f = 0; f < p.m.n_fields; f++)
        if (!strcmp(p.m.fields[f].name, "L2 state")) {
            cr_assert_str_eq(p.m.fields[f].value[0], "cold");
            cr_assert_str_eq(p.m.fields[f].value[1], "warm");
            cr_assert(p.m.fields[f].differs);
            shown = 1;
        }
    cr_assert(shown);
    free_pair(&p, 1);
    /* cold against an archive from before --l2 (its forwards ran back to back): refused */
    memset(&p, 0, sizeof p);
    cr_assert_eq(build_pair(&p, cold, CUDNN919_B, 0, err, sizeof err), EXIT_L2_MISMATCH);
    free_pair(&p, 0);
    /* warm against one: allowed (not recorded is no difference) */
    memset(&p, 0, sizeof p);
    cr_assert_eq(build_pair(&p, warm, CUDNN919_B, 0, err, sizeof err), EXIT_OK, "%s", err);
    free_pair(&p, 1);
    /* the command line: exit 10, one line, nothing written */
    snprintf(out, sizeof out, "%s/cmp", dir);
    snprintf(cmd, sizeof cmd, "compare %s %s -o %s -q", cold, warm, out);
    cr_assert_eq(attnprof(cmd), EXIT_L2_MISMATCH, "%s", err_text);
    cr_assert_eq(count_lines(err_text), 1, "%s", err_text);
    cr_assert_neq(access(out, F_OK), 0, "nothing written");
    snprintf(cmd, sizeof cmd, "compare %s %s -o %s -q --allow-l2-mismatch", cold, warm, out);
    cr_assert_eq(attnprof(cmd), EXIT_OK, "%s", err_text);
    rm_rf(dir);
    free(dir);
}

/* The rule restated: the interval against the band [1/(1+f), 1+f]. */
static compare_verdict expected_verdict(const ratio_ci *ci, double f)
{
    if (ci->lo >= 1 / (1 + f) && ci->hi <= 1 + f)
        return VERDICT_SAME;
    if (ci->lo > 1 + f)
        return VERDICT_SLOWER;
    if (ci->hi < 1 / (1 + f))
        return VERDICT_FASTER;
    return VERDICT_AMBIGUOUS;
}

/* Relative range of the per-pass medians of a variant's CUDA times, from the archive's
 * forwards and their passes, computed here. */
static double pass_spread_of(const variant_analysis *va, int passes)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int p = 0; p < passes; p++) {
        double x[64];
        int n = 0;
        for (int i = 0; i < va->n_forwards; i++)
            if (va->forwards[i].range->sample.pass == p)
                x[n++] = va->forwards[i].cuda_us;
        double m = median_of(x, n);
        lo = fmin(lo, m), hi = fmax(hi, m);
    }
    return hi / lo - 1;
}

Test(measurement, replicates_set_the_floor_from_between_pass_spread)
{
    char *dir = temp_dir(), a[600], b[600], err[1024];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    /* two passes of 10 forwards each, alternating; clocks all at 1980: nothing throttled */
    synth rep = {.l2 = "warm", .replicates = 2, .iters_per_pass = 10, .slow_a = -1, .slow_b = -1, .edge = -1,
                 .fast_mhz = 1980, .slow_mhz = 1980, .fraction = 0.75};
    make_synthetic(CUDNN919_A, a, &rep);
    make_synthetic(CUDNN919_B, b, &rep);
    pair p = {0};
    cr_assert_eq(build_pair(&p, a, b, 0, err, sizeof err), EXIT_OK, "%s", err);
    int differs_from_floor = 0;
    for (int v = 0; v < p.m.n_variants; v++) {
        const compare_cell *base = &p.m.variants[v].cell[0], *c = &p.m.variants[v].cell[1];
        cr_assert_eq(base->passes, 2);
        cr_assert_eq(c->passes, 2);
        cr_assert_eq(c->replicate_floor, 1, "%s", p.m.variants[v].name);
        double f = fmax(pass_spread_of(base->va, 2), pass_spread_of(c->va, 2));
        cr_assert_float_eq(c->metric_floor, f, 1e-12, "%s: %g vs %g", p.m.variants[v].name, c->metric_floor, f);
        cr_assert_eq(c->metric_ratio.verdict, expected_verdict(&c->metric_ratio.ci, f), "%s",
                     p.m.variants[v].name);
        cr_assert_neq(c->metric_ratio.verdict, VERDICT_NONE);
        differs_from_floor += expected_verdict(&c->metric_ratio.ci, COMPARE_DEFAULT_MIN_EFFECT) !=
                              c->metric_ratio.verdict;
    }
    /* the compare document states the rule */
    char *md = compare_markdown(&p.m, NULL, NULL);
    cr_assert(strstr(md, "Replicates: where the baseline and a run both hold two or more passes"), "rule stated");
    free(md);
    free_pair(&p, 1);
    (void)differs_from_floor; /* reported by the rule, not required to differ on these records */
    /* without replicates in one run: the documented floors */
    memset(&p, 0, sizeof p);
    cr_assert_eq(build_pair(&p, a, CUDNN919_B, 0, err, sizeof err), EXIT_OK, "%s", err);
    for (int v = 0; v < p.m.n_variants; v++) {
        const compare_cell *c = &p.m.variants[v].cell[1];
        cr_assert_eq(c->replicate_floor, 0);
        cr_assert_eq(c->metric_floor, COMPARE_DEFAULT_MIN_EFFECT);
        cr_assert_eq(c->cpu_floor, COMPARE_CPU_NOISE_FLOOR);
    }
    free_pair(&p, 1);
    rm_rf(dir);
    free(dir);
}

Test(measurement, fail_on_takes_every_verdict_word)
{
    char err[256];
    for (compare_verdict v = VERDICT_SAME; v <= VERDICT_AMBIGUOUS; v++) {
        unsigned mask = 0;
        cr_assert_eq(compare_fail_on_parse(compare_verdict_word(v), &mask, err, sizeof err), 0, "%s", err);
        cr_assert_eq(mask, 1u << v, "%s", compare_verdict_word(v));
    }
    unsigned mask = 0;
    cr_assert_eq(compare_fail_on_parse("slower,ambiguous", &mask, err, sizeof err), 0, "%s", err);
    cr_assert_eq(mask, 1u << VERDICT_SLOWER | 1u << VERDICT_AMBIGUOUS);
    cr_assert_eq(compare_fail_on_parse("slower,", &mask, err, sizeof err), EXIT_USAGE, "an empty word is no verdict");
}

Test(measurement, fail_on_gates_after_writing)
{
    char *dir = temp_dir(), out[700], cmd[2000];
    snprintf(out, sizeof out, "%s/cmp", dir);
    /* cuDNN 9.14 -> 9.19: cudnn comes out faster, the other five the same (tests/analysis/compare_archives.c) */
    snprintf(cmd, sizeof cmd, "compare %s %s -o %s -q --fail-on faster", CUDNN914, CUDNN919_A, out);
    cr_assert_eq(attnprof(cmd), EXIT_VERDICT_GATE, "%s", err_text);
    cr_assert(strstr(err_text, "cudnn faster"), "%s", err_text);
    char path[800];
    snprintf(path, sizeof path, "%s/compare.md", out);
    cr_assert_eq(access(path, F_OK), 0, "the outputs are written before the gate");
    snprintf(cmd, sizeof cmd, "compare %s %s -o %s -q --force --fail-on slower,ambiguous", CUDNN914, CUDNN919_A,
             out);
    cr_assert_eq(attnprof(cmd), EXIT_OK, "%s", err_text);
    snprintf(cmd, sizeof cmd, "compare %s %s -o %s -q --force --fail-on slow", CUDNN914, CUDNN919_A, out);
    cr_assert_eq(attnprof(cmd), EXIT_USAGE, "%s", err_text);
    cr_assert(strstr(err_text, "--fail-on slow: expected verdicts"), "%s", err_text);
    rm_rf(dir);
    free(dir);
}
