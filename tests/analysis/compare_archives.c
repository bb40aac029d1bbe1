/* attnprof compare on archives recorded on the H200 in one device run
 * (2026-11-30): the default batch with the system cuDNN 9.14, and twice with
 * PyTorch's cuDNN 9.19 with nothing else changed; and a later run of flash and
 * cudnn after flash moved to its sm_90a kernel. No GPU needed. */
#include <criterion/criterion.h>
#include "slurp.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"
#include "bootstrap.h"
#include "median.h"
#include "compare_doc.h"
#include "exit_codes.h"
#include "kineto_import.h"
#include "run_cli.h"
#include "units.h"

#define CUDNN914 "tests/fixtures/h200-cudnn914"
#define CUDNN919_A "tests/fixtures/h200-cudnn919-a"
#define CUDNN919_B "tests/fixtures/h200-cudnn919-b"
#define CUDNN919_GPU1 "tests/fixtures/h200-cudnn919-gpu1" /* the same batch on another physical H200 */
#define SMALL "tests/fixtures/h200-6var" /* 2x4x256x64: another shape */
#define SM90A "tests/fixtures/h200-sm90a"  /* flash on attnprof_flash_fwd_sm90a_*, cudnn: same shape */
/* The bundled example as it was recorded on 2026-11-30 (default shape, 5 forwards, before the
 * L2 state and the clocks were recorded): these tests check sentences against what that
 * recording holds, so they keep it as a fixture; out/example-h200 is re-recorded with each
 * current tool (tests/cli/example_current.c checks that it is current). */
#define EXAMPLE "tests/fixtures/h200-5fwd"
#define TORCH "tests/fixtures/torch-h200/"  /* PyTorch's six variants, Kineto traces of one H200 */

typedef struct pair {
    compare_archive a, b;
    compare_data m;
} pair;

static int build_pair(pair *p, const char *da, const char *db, int allow_shape, char *err, size_t n)
{
    cr_assert_eq(compare_load(&p->a, da, err, n), EXIT_OK, "%s", err);
    cr_assert_eq(compare_load(&p->b, db, err, n), EXIT_OK, "%s", err);
    compare_archive *in[2] = {&p->a, &p->b};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT,
                           .allow_shape_mismatch = allow_shape, .formats = FIG_PNG};
    return compare_build(&p->m, in, 2, &opt, err, n);
}

/* PyTorch's six variants imported in memory as `attnprof import … --variant
 * naive,…,cudnn --shape 8x16x1024x64,bf16,causal` would archive them. */
static void load_torch_import(compare_archive *ar)
{
    static const char *const files[] = {TORCH "kineto_naive.json.gz",      TORCH "kineto_naive_inplace.json.gz",
                                        TORCH "kineto_sdpa_math.json.gz",  TORCH "kineto_sdpa_efficient.json.gz",
                                        TORCH "kineto_sdpa_flash.json.gz", TORCH "kineto_sdpa_cudnn.json.gz"};
    memset(ar, 0, sizeof *ar);
    snprintf(ar->dir, sizeof ar->dir, "out/torch-h200");
    attn_shape shape = {.batch = 8, .heads = 16, .seq = 1024, .dim = 64};
    import_options o = {.device = -1, .variant = "naive,naive_inplace,math,efficient,flash,cudnn", .shape = &shape,
                        .dtype = "bf16", .causal = 1};
    char err[1024];
    cr_assert_eq(kineto_import(files, 6, &o, &ar->t, &ar->r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(compare_analyse(ar, err, sizeof err), EXIT_OK, "%s", err);
}

/* Ours (the default archive) as the baseline, PyTorch's imported as the other run. */
static void build_ours_vs_torch(pair *p)
{
    char err[1024];
    cr_assert_eq(compare_load(&p->a, EXAMPLE, err, sizeof err), EXIT_OK, "%s", err);
    load_torch_import(&p->b);
    compare_archive *in[2] = {&p->a, &p->b};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT, .formats = FIG_PNG};
    cr_assert_eq(compare_build(&p->m, in, 2, &opt, err, sizeof err), EXIT_OK, "%s", err);
}

static void free_pair(pair *p)
{
    compare_free(&p->m);
    compare_archive_free(&p->a);
    compare_archive_free(&p->b);
}

static const compare_variant *variant(const compare_data *m, const char *name)
{
    for (int i = 0; i < m->n_variants; i++)
        if (!strcmp(m->variants[i].name, name))
            return &m->variants[i];
    cr_assert_fail("no variant %s in the comparison", name);
    return NULL;
}

static const compare_field *field_named(const compare_data *m, const char *name)
{
    for (int i = 0; i < m->n_fields; i++)
        if (!strcmp(m->fields[i].name, name))
            return &m->fields[i];
    cr_assert_fail("no field %s", name);
    return NULL;
}

/* The verdict rule of compare_ratio_of, restated: the interval against the band
 * [1/(1+f), 1+f]. */
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

Test(bootstrap, deterministic_and_brackets_the_ratio)
{
    double base[20], x[20];
    for (int i = 0; i < 20; i++) {
        base[i] = 100 + (i * 7 % 11) * 0.3;
        x[i] = 90 + (i * 5 % 13) * 0.3;
    }
    ratio_ci r1 = bootstrap_median_ratio(base, 20, x, 20, 2000, 42);
    ratio_ci r2 = bootstrap_median_ratio(base, 20, x, 20, 2000, 42);
    cr_assert_eq(memcmp(&r1, &r2, sizeof r1), 0, "same seed, same interval");
    cr_assert_float_eq(r1.ratio, median_of(x, 20) / median_of(base, 20), 1e-12);
    cr_assert(r1.lo <= r1.ratio && r1.ratio <= r1.hi, "[%g, %g] holds %g", r1.lo, r1.hi, r1.ratio);
    cr_assert(r1.hi < 1, "a 10%% shift is outside the noise: [%g, %g]", r1.lo, r1.hi);
    ratio_ci same = bootstrap_median_ratio(base, 20, base, 20, 2000, 42);
    cr_assert(same.ratio == 1.0 && same.lo == 1.0 && same.hi == 1.0);
    ratio_ci none = bootstrap_median_ratio(base, 0, x, 20, 2000, 42);
    cr_assert(isnan(none.ratio));
}

Test(compare, cudnn_versions_named_and_cudnn_row_as_the_samples_say)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN914, CUDNN919_A, 0, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(field_named(&p.m, "cuDNN")->differs);
    cr_assert(!field_named(&p.m, "GPU")->differs && !field_named(&p.m, "Driver")->differs &&
              !field_named(&p.m, "Shape")->differs);
    cr_assert(strstr(p.m.differs_sentence, "cuDNN differs (9.14.0 vs 9.19.0)"), "%s", p.m.differs_sentence);
    cr_assert(strstr(p.m.differs_sentence, "GPU, driver and shape are equal"), "%s", p.m.differs_sentence);

    /* The verdict follows the samples: recompute the medians and the rule. */
    const compare_variant *cudnn = variant(&p.m, "cudnn");
    const compare_cell *b = &cudnn->cell[0], *c = &cudnn->cell[1];
    double ratio = median_of(c->metric, c->n) / median_of(b->metric, b->n);
    cr_assert_float_eq(c->metric_ratio.ci.ratio, ratio, 1e-12);
    cr_assert_eq(c->metric_ratio.verdict, expected_verdict(&c->metric_ratio.ci, COMPARE_DEFAULT_MIN_EFFECT));
    /* 9.19 picked another knob and is ~8% faster on this GPU: a real difference. */
    cr_assert(ratio < 0.95 && c->metric_ratio.verdict == VERDICT_FASTER, "cudnn ratio %g", ratio);
    const kernel_diff *d = &cudnn->diff[1];
    int renamed = 0;
    for (int k = 0; k < d->n; k++)
        if (d->rows[k].change == KERNEL_RENAMED) {
            renamed++;
            cr_assert(strstr(d->rows[k].base->op->name, "knob_32") && strstr(d->rows[k].other->op->name, "knob_7"),
                      "%s -> %s", d->rows[k].base->op->name, d->rows[k].other->op->name);
            cr_assert(d->rows[k].changed_resources, "shared memory changed with the knob");
        }
    cr_assert_eq(renamed, 1);
    free_pair(&p);
}

Test(compare, the_same_batch_twice_is_no_significant_difference)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN919_A, CUDNN919_B, 0, err, sizeof err), EXIT_OK, "%s", err);
    const char *fused[] = {"efficient", "flash", "cudnn"};
    for (int i = 0; i < 3; i++) {
        const compare_cell *c = &variant(&p.m, fused[i])->cell[1];
        cr_assert_eq(c->metric_ratio.verdict, VERDICT_SAME, "%s: %g [%g, %g]", fused[i], c->metric_ratio.ci.ratio,
                     c->metric_ratio.ci.lo, c->metric_ratio.ci.hi);
    }
    cr_assert(!field_named(&p.m, "cuDNN")->differs);
    cr_assert(strstr(p.m.differs_sentence, "Nothing recorded differs but the date"), "%s", p.m.differs_sentence);
    free_pair(&p);
}

/* Four verdicts, on synthetic samples (built here): a shift well beyond the
 * floor, one well inside it, and one whose interval straddles its edge. */
Test(compare, four_verdicts_against_a_noise_floor)
{
    double base[40], beyond[40], inside[40], straddle[40];
    for (int i = 0; i < 40; i++) {
        double jitter = (i * 7 % 11) - 5; /* -5 … 5 */
        base[i] = 100 + 0.2 * jitter;
        beyond[i] = 80 + 0.2 * jitter;
        inside[i] = 99.5 + 0.2 * jitter;
        straddle[i] = 97.5 + 3 * jitter; /* median 2.5% below, spread wider than the 2% band */
    }
    compare_ratio r = compare_ratio_of(base, 40, beyond, 40, 0.02, 0);
    cr_assert_eq(r.verdict, VERDICT_FASTER, "[%g, %g]", r.ci.lo, r.ci.hi);
    r = compare_ratio_of(base, 40, beyond, 40, 0.02, 1);
    cr_assert_eq(r.verdict, VERDICT_SLOWER, "higher is better: lower is slower");
    r = compare_ratio_of(beyond, 40, base, 40, 0.02, 0);
    cr_assert_eq(r.verdict, VERDICT_SLOWER);
    r = compare_ratio_of(base, 40, inside, 40, 0.02, 0);
    cr_assert_eq(r.verdict, VERDICT_SAME, "[%g, %g]", r.ci.lo, r.ci.hi);
    r = compare_ratio_of(base, 40, straddle, 40, 0.02, 0);
    cr_assert(r.ci.lo < 1 / 1.02 && r.ci.hi > 1 / 1.02, "the interval straddles the edge: [%g, %g]", r.ci.lo, r.ci.hi);
    cr_assert_eq(r.verdict, VERDICT_AMBIGUOUS);
    /* The same shift under a wider floor (CPU time's) is within noise. */
    r = compare_ratio_of(base, 40, beyond, 40, COMPARE_CPU_NOISE_FLOOR, 0);
    cr_assert_eq(r.verdict, VERDICT_SAME);
    cr_assert_str_eq(compare_verdict_word(VERDICT_AMBIGUOUS), "ambiguous");
}

/* Two runs of one batch (a and b: same binary, command line but -o, seed, GPU,
 * driver and libraries; 4 s apart) are never faster or slower, neither in CUDA
 * nor in CPU time. Today's CPU verdicts called them "faster" (math 0.85×,
 * efficient 0.66×) and "slower" (naive 1.45×, naive_inplace 1.51×). */
Test(compare, two_runs_of_one_batch_are_same_or_ambiguous_in_cuda_and_cpu_time)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN919_A, CUDNN919_B, 0, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(p.a.r.seed, p.b.r.seed);
    cr_assert(p.a.r.iters == p.b.r.iters && p.a.r.warmup == p.b.r.warmup);
    cr_assert_str_eq(p.a.r.tool_version, p.b.r.tool_version);
    cr_assert_eq(p.m.n_variants, 6);
    for (int v = 0; v < p.m.n_variants; v++) {
        const compare_cell *c = &p.m.variants[v].cell[1];
        const compare_ratio *q[2] = {&c->metric_ratio, &c->cpu_ratio};
        for (int k = 0; k < 2; k++)
            cr_assert(q[k]->verdict == VERDICT_SAME || q[k]->verdict == VERDICT_AMBIGUOUS, "%s %s: %g [%g, %g] %s",
                      p.m.variants[v].name, k ? "CPU" : "CUDA", q[k]->ci.ratio, q[k]->ci.lo, q[k]->ci.hi,
                      compare_verdict_word(q[k]->verdict));
        for (int k = 0; k < p.m.variants[v].diff[1].n; k++) {
            const kernel_row *row = &p.m.variants[v].diff[1].rows[k];
            cr_assert(row->time.verdict != VERDICT_FASTER && row->time.verdict != VERDICT_SLOWER, "%s %s: %g [%g, %g]",
                      p.m.variants[v].name, row->base->op->name, row->time.ci.ratio, row->time.ci.lo, row->time.ci.hi);
        }
    }
    free_pair(&p);
}

/* cuDNN 9.14 against 9.19: the cudnn kernel is faster in CUDA time (another knob),
 * but its 1.41× CPU time is inside the run-to-run noise of host time. */
Test(compare, cudnn_914_vs_919_cpu_time_is_inside_the_noise)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN914, CUDNN919_A, 0, err, sizeof err), EXIT_OK, "%s", err);
    const compare_cell *c = &variant(&p.m, "cudnn")->cell[1];
    cr_assert_eq(c->metric_ratio.verdict, VERDICT_FASTER);
    cr_assert(c->cpu_ratio.ci.ratio > 1.3, "%g", c->cpu_ratio.ci.ratio);
    cr_assert(c->cpu_ratio.verdict == VERDICT_SAME || c->cpu_ratio.verdict == VERDICT_AMBIGUOUS, "%s",
              compare_verdict_word(c->cpu_ratio.verdict));
    cr_assert_eq(c->cpu_ratio.verdict, expected_verdict(&c->cpu_ratio.ci, COMPARE_CPU_NOISE_FLOOR));
    free_pair(&p);
}

/* A third fixture from a 2-GPU H200 machine (2026-11-30): the same batch and cuDNN on
 * another physical H200. The metadata names the GPU's UUID; the verdicts are what the
 * samples say, and every one is recomputed here from the rule. */
Test(compare, another_physical_h200)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN919_A, CUDNN919_GPU1, 0, err, sizeof err), EXIT_OK, "%s", err);
    const compare_field *uuid = field_named(&p.m, "GPU UUID");
    cr_assert_str_eq(uuid->value[0], "not recorded", "the older fixture predates the UUID");
    cr_assert(!strncmp(uuid->value[1], "GPU-", 4), "%s", uuid->value[1]);
    /* One side does not record it: unknown, not a difference. */
    cr_assert(!uuid->differs && uuid->unrecorded);
    cr_assert(!field_named(&p.m, "cuDNN")->differs && !field_named(&p.m, "Shape")->differs);
    cr_assert_null(strstr(p.m.differs_sentence, "GPU UUID differs"), "%s", p.m.differs_sentence);
    cr_assert(strstr(p.m.differs_sentence, "Not recorded by every run, so not compared: GPU UUID."), "%s",
              p.m.differs_sentence);
    for (int v = 0; v < p.m.n_variants; v++) {
        const compare_cell *b = &p.m.variants[v].cell[0], *c = &p.m.variants[v].cell[1];
        const compare_ratio *r = &c->metric_ratio;
        double ratio = median_of(c->metric, c->n) / median_of(b->metric, b->n);
        cr_assert_float_eq(r->ci.ratio, ratio, 1e-12);
        cr_assert_eq(r->verdict, expected_verdict(&r->ci, COMPARE_DEFAULT_MIN_EFFECT), "%s", p.m.variants[v].name);
    }
    free_pair(&p);
}

Test(compare, an_archive_against_itself_is_exactly_one)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN914, CUDNN914, 0, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_str_eq(p.m.in[1]->label, "h200-cudnn914 (2)", "labels are made unique");
    for (int v = 0; v < p.m.n_variants; v++) {
        const compare_variant *cv = &p.m.variants[v];
        const compare_ratio *r = &cv->cell[1].metric_ratio;
        cr_assert(r->ci.ratio == 1.0 && r->ci.lo == 1.0 && r->ci.hi == 1.0, "%s: %g", cv->name, r->ci.ratio);
        cr_assert_eq(r->verdict, VERDICT_SAME);
        for (int k = 0; k < cv->diff[1].n; k++)
            cr_assert(!cv->diff[1].rows[k].notable, "%s: kernel row %d", cv->name, k);
        cr_assert_eq(cv->diff[1].n_only_base + cv->diff[1].n_only_other, 0);
    }
    char *md = compare_markdown(&p.m, NULL, NULL);
    cr_assert(strstr(md, "| `cudnn` |") && strstr(md, "1.00× [1.00–1.00] same |"));
    free(md);
    free_pair(&p);
}

/* Two decode runs that differ only in their key/value heads are different work: refused, and the
 * refusal names the kv_heads of each (their BxHxSxD alone reads the same). */
Test(compare, kv_heads_and_q_seq_are_shape)
{
    pair p;
    char err[1024];
    cr_assert_eq(compare_load(&p.a, "tests/fixtures/h200-decode", err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(compare_load(&p.b, "tests/fixtures/h200-decode", err, sizeof err), EXIT_OK, "%s", err);
    p.b.r.shape.kv_heads = 4;
    compare_archive *in[2] = {&p.a, &p.b};
    compare_options opt = {.min_effect = COMPARE_DEFAULT_MIN_EFFECT, .formats = FIG_PNG};
    cr_assert_eq(compare_build(&p.m, in, 2, &opt, err, sizeof err), EXIT_USAGE);
    cr_assert(strstr(err, "4x32x4096x128 (kv_heads 4) (q_seq 1)") && strstr(err, "4x32x4096x128 (kv_heads 8) (q_seq 1)") &&
              strstr(err, "--allow-shape-mismatch"), "%s", err);
    p.b.r.shape.kv_heads = 8, p.b.r.shape.q_seq = 2;
    cr_assert_eq(compare_build(&p.m, in, 2, &opt, err, sizeof err), EXIT_USAGE);
    cr_assert(strstr(err, "(q_seq 2)"), "%s", err);
    compare_archive_free(&p.a);
    compare_archive_free(&p.b);
}

Test(compare, mismatched_shapes_refused_unless_allowed)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, SMALL, CUDNN914, 0, err, sizeof err), EXIT_USAGE);
    cr_assert(strstr(err, "--allow-shape-mismatch") && strstr(err, "8x16x1024x64") && strstr(err, "2x4x256x64"), "%s",
              err);
    compare_archive_free(&p.a);
    compare_archive_free(&p.b);
    cr_assert_eq(build_pair(&p, SMALL, CUDNN914, 1, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(p.m.throughput);
    /* Throughput: FLOPs of causal attention over time, higher is faster. */
    const compare_cell *flash = &variant(&p.m, "flash")->cell[1];
    double tflops = p.b.flops / (median_of((double[]){flash->va->forwards[0].cuda_us}, 1) * 1e-6) / 1e12;
    cr_assert(fabs(flash->metric[0] - tflops) < 1e-9 * tflops);
    /* the small archive holds 4 forwards a variant: the ratio alone, no verdict */
    cr_assert(flash->metric_ratio.ci.ratio > 1, "the large shape runs at a higher TFLOP/s");
    cr_assert_eq(flash->metric_ratio.verdict, VERDICT_NONE);
    cr_assert_eq(flash->metric_ratio.too_few, 4);
    char *md = compare_markdown(&p.m, NULL, NULL);
    cr_assert(strstr(md, "The shapes differ") && strstr(md, "TFLOP/s"));
    free(md);
    free_pair(&p);
}

/* ---- like with like: ours against PyTorch's --------------------------------- */

static const kernel_row *row_with_base(const kernel_diff *d, const char *base_name)
{
    for (int k = 0; k < d->n; k++)
        if (d->rows[k].base && !strcmp(d->rows[k].base->op->name, base_name))
            return &d->rows[k];
    cr_assert_fail("no row for %s", base_name);
    return NULL;
}

/* Today's false pairs: attnprof_math_add_bias (274 µs, the mask applied to the
 * scores) was set beside a 0.8 µs fill, "0.00× faster", and
 * attnprof_math_mask_fill_neginf (0.7 µs, the mask build) beside PyTorch's
 * 207 µs where, "293× slower". Only operations of one role are paired now. */
Test(compare_roles, ours_against_pytorch_pairs_only_operations_of_one_role)
{
    pair p;
    build_ours_vs_torch(&p);
    for (int v = 0; v < p.m.n_variants; v++) {
        const kernel_diff *d = &p.m.variants[v].diff[1];
        for (int k = 0; k < d->n; k++) {
            const kernel_row *r = &d->rows[k];
            if (r->base && r->other)
                cr_assert_eq(r->base->role, r->other->role, "%s: %s (%s) beside %s (%s)", p.m.variants[v].name,
                             r->base->op->name, op_role_name(r->base->role), r->other->op->name,
                             op_role_name(r->other->role));
        }
    }
    const kernel_diff *math = &variant(&p.m, "math")->diff[1];
    const kernel_row *add = row_with_base(math, "attnprof_math_add_bias");
    cr_assert_not_null(add->other, "PyTorch applies the mask too");
    cr_assert_eq(add->other->role, ROLE_MASK_APPLY);
    cr_assert(op_launched_in(add->other->op, "aten::add_"), "%s", add->other->op->cpu_op_path);
    cr_assert(add->time.ci.ratio > 0.5 && add->time.ci.ratio < 2, "%g", add->time.ci.ratio);
    const kernel_row *fill = row_with_base(math, "attnprof_math_mask_fill_neginf");
    cr_assert(!fill->other || fill->other->role == ROLE_MASK_BUILD);
    cr_assert(!fill->other || (fill->time.ci.ratio > 0.2 && fill->time.ci.ratio < 5), "%g", fill->time.ci.ratio);
    free_pair(&p);
}

/* Time per forward by role: every forward's roles add up to its CUDA time (the
 * roles partition the forward), and the mask is applied once per forward on
 * both sides. */
Test(compare_roles, time_by_role_adds_up_to_the_forward)
{
    pair p;
    build_ours_vs_torch(&p);
    for (int v = 0; v < p.m.n_variants; v++)
        for (int i = 0; i < 2; i++) {
            const compare_variant *cv = &p.m.variants[v];
            const variant_analysis *va = cv->cell[i].va;
            for (int f = 0; f < va->n_forwards; f++) {
                double sum = 0;
                for (int r = 0; r < COMPARE_ROLE_COUNT; r++)
                    if (cv->roles[i][r].n)
                        sum += cv->roles[i][r].us[f];
                cr_assert_float_eq(sum, va->forwards[f].cuda_us, 1e-6, "%s run %d forward %d", cv->name, i, f);
            }
        }
    const compare_variant *math = variant(&p.m, "math");
    const role_time *apply_ours = &math->roles[0][ROLE_MASK_APPLY], *apply_torch = &math->roles[1][ROLE_MASK_APPLY];
    cr_assert(apply_ours->ops == 1 && apply_torch->ops == 1);
    cr_assert_float_eq(apply_torch->ratio.ci.ratio, apply_torch->st.median / apply_ours->st.median, 1e-9);
    cr_assert_eq(apply_torch->ratio.verdict, expected_verdict(&apply_torch->ratio.ci, COMPARE_DEFAULT_MIN_EFFECT));
    free_pair(&p);
}

/* naive: both runs copy the 256 MiB scores (DtoD) and issue cuBLAS's 4-byte
 * Memset. Today the copy's finding was "found only in this run" and "found only
 * in the baseline", and the Memset's "only in the baseline". */
Test(compare_roles, the_same_memcpy_and_memset_are_in_both_runs)
{
    pair p;
    build_ours_vs_torch(&p);
    const char *both[] = {"naive", "naive_inplace", "cudnn"};
    for (int v = 0; v < 3; v++) {
        const kernel_diff *d = &variant(&p.m, both[v])->diff[1];
        int memsets = 0, copies = 0;
        for (int k = 0; k < d->n; k++) {
            const kernel_row *r = &d->rows[k];
            const kernel_summary *any = r->base ? r->base : r->other;
            if (any->op->kind == GPU_KERNEL)
                continue;
            cr_assert(r->base && r->other, "%s: %s %lld B on one side only", both[v], any->op->name,
                      (long long)any->op->bytes);
            cr_assert_eq(r->change, KERNEL_SAME, "%s: %s", both[v], any->op->name);
            memsets += any->op->kind == GPU_MEMSET;
            copies += any->op->kind == GPU_MEMCPY;
        }
        cr_assert_eq(memsets, 1, "%s", both[v]);
        cr_assert_eq(copies, !strcmp(both[v], "naive"), "%s", both[v]);
        for (int k = 0; k < d->n_only_base; k++)
            cr_assert(!strstr(d->only_base[k], "Memcpy") && !strstr(d->only_base[k], "Memset"), "%s: only in the "
                      "baseline: %s", both[v], d->only_base[k]);
        for (int k = 0; k < d->n_only_other; k++)
            cr_assert(!strstr(d->only_other[k], "Memcpy") && !strstr(d->only_other[k], "Memset"), "%s: only in this "
                      "run: %s", both[v], d->only_other[k]);
    }
    /* The Memset finding rests on the expected operation count, which an import
     * does not record: it is not testable there, not absent. */
    const kernel_diff *naive = &variant(&p.m, "naive")->diff[1];
    int gap = 0;
    for (int k = 0; k < naive->n_gap_base; k++)
        gap += strstr(naive->gap_base[k].text, "Memset") != NULL;
    cr_assert_eq(gap, 1);
    char *md = compare_markdown(&p.m, NULL, NULL);
    cr_assert_null(strstr(md, "Found only in this run: a 256 MiB Memcpy"), "%s", md);
    cr_assert_null(strstr(md, "Found only in the baseline: a 256 MiB Memcpy"));
    free(md);
    free_pair(&p);
}

/* What an import does not record (clocks, driver, cuBLAS, cuDNN, seed, warm-up)
 * is "not recorded": never called equal to ours, never marked as differing.
 * Today the import's seed 0 and warm-up 0 were compared as values. */
Test(compare_fields, not_recorded_is_neither_equal_nor_different)
{
    pair p;
    build_ours_vs_torch(&p);
    const char *unknown[] = {"SM clock", "Memory clock", "Driver", "cuBLAS", "cuDNN", "Warm-up forwards", "Seed"};
    for (int k = 0; k < 7; k++) {
        const compare_field *x = field_named(&p.m, unknown[k]);
        cr_assert_str_eq(x->value[1], "not recorded", "%s: %s", unknown[k], x->value[1]);
        cr_assert(x->unrecorded && !x->differs, "%s", unknown[k]);
        char differs[64];
        snprintf(differs, sizeof differs, "%s differ", unknown[k]);
        cr_assert_null(strstr(p.m.differs_sentence, differs), "%s", p.m.differs_sentence);
    }
    cr_assert_str_eq(field_named(&p.m, "Seed")->value[0], "0", "ours records its seed");
    cr_assert_null(strstr(p.m.differs_sentence, "driver"), "the driver is not called equal: %s", p.m.differs_sentence);
    cr_assert(strstr(p.m.differs_sentence, "GPU and shape are equal"), "%s", p.m.differs_sentence);
    cr_assert(!field_named(&p.m, "Recorded forwards")->differs, "5 and 5");
    /* the importer's version is no difference of the measurement, and the table says whose it is */
    cr_assert_null(strstr(p.m.differs_sentence, "attnprof differ"), "%s", p.m.differs_sentence);
    /* imported in memory here: no importer's version yet (the archive writer records it) */
    cr_assert_str_eq(field_named(&p.m, "attnprof")->value[1], "imported (the importer's version not recorded)");
    cr_assert(strncmp(field_named(&p.m, "attnprof")->value[0], "imported", 8), "ours is recorded");
    char *md = compare_markdown(&p.m, NULL, NULL);
    cr_assert_null(strstr(md, "**Seed ≠**"));
    cr_assert_null(strstr(md, "**cuDNN ≠**"));
    free(md);
    free_pair(&p);
}

/* The CSV's baseline rows: the baseline over itself is 1, not 0. */
Test(compare_csv, the_baseline_rows_read_ratio_one)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN919_A, CUDNN919_B, 0, err, sizeof err), EXIT_OK, "%s", err);
    char *csv = compare_csv(&p.m);
    int rows = 0;
    for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "\"h200-cudnn919-a\",1,"))
            continue;
        rows++;
        /* ratio,ratio_lo,ratio_hi,verdict for CUDA and for CPU time */
        cr_assert(strstr(line, ",1,1,1,baseline,"), "%s", line);
        const char *cpu = strstr(strstr(line, ",1,1,1,baseline,") + 1, ",1,1,1,baseline,");
        cr_assert_not_null(cpu, "CPU ratio 1 too: %s", line);
        cr_assert(strlen(line) > 2 && !strcmp(line + strlen(line) - 2, ",0"), "ops vs baseline 0: %s", line);
    }
    cr_assert_eq(rows, 6);
    free(csv);
    free_pair(&p);
}

/* compare-timeline's lane labels print the table's number by its name: the
 * median CUDA time as the CUDA-time table prints it, and the span (idle gaps
 * included) only as "span … incl. idle". Today the label was the bare span:
 * cudnn "74.0 µs" beside a table that says 61.9 µs. */
Test(compare_figures, timeline_labels_are_the_tables_numbers_or_say_what_they_are)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN914, CUDNN919_A, 0, err, sizeof err), EXIT_OK, "%s", err);
    char *md = compare_markdown(&p.m, NULL, NULL);
    const char *cuda_table = strstr(md, "## CUDA time per forward"), *cpu_table = strstr(md, "## CPU time per forward");
    cr_assert(cuda_table && cpu_table);
    for (int v = 0; v < p.m.n_variants; v++)
        for (int i = 0; i < 2; i++) {
            const compare_cell *c = &p.m.variants[v].cell[i];
            char label[200], median[48], want[96], cell[96];
            compare_timeline_label(c, 0, label, sizeof label);
            units_us_column(c->metric_stats.median, median, sizeof median);
            snprintf(want, sizeof want, "CUDA %s (median) · span ", median);
            cr_assert(!strncmp(label, want, strlen(want)), "%s: label \"%s\", table median %s", p.m.variants[v].name,
                      label, median);
            cr_assert(strstr(label, " incl. idle"), "%s", label);
            /* … and that is the number the CUDA-time table prints in this cell. */
            snprintf(cell, sizeof cell, "| %s (", median);
            const char *at = strstr(cuda_table, cell);
            cr_assert(at && at < cpu_table, "%s: %s in the CUDA table", p.m.variants[v].name, cell);
        }
    /* cudnn's lane is longer than its CUDA time (idle between the Memset and the kernel). */
    const compare_cell *cudnn = &variant(&p.m, "cudnn")->cell[0];
    char label[200];
    compare_timeline_label(cudnn, 0, label, sizeof label);
    cr_assert(strstr(label, "CUDA 61.9 µs (median) · span 74.0 µs incl. idle"), "%s", label);
    free(md);
    free_pair(&p);
}

/* ---- the command line ----------------------------------------------------- */


Test(compare_cli, writes_every_output_in_every_format_deterministically)
{
    char dir[] = "/tmp/attnprof-compare-XXXXXX", args[1024], path[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "compare %s %s %s -o %s/a --format png,svg,pdf -q", CUDNN914, CUDNN919_A, CUDNN919_B,
             dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    const char *files[] = {"compare.md", "compare.html", "compare.csv"};
    const char *figs[] = {"compare-time", "compare-speedup", "compare-timeline"};
    const char *exts[] = {"png", "svg", "pdf"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/a/%s", dir, files[i]);
        cr_assert(path_exists(path), "%s", path);
        for (int k = 0; k < 3; k++) {
            snprintf(path, sizeof path, "%s/a/figures/%s.%s", dir, figs[i], exts[k]);
            cr_assert(path_exists(path), "%s", path);
        }
    }
    snprintf(path, sizeof path, "%s/a/compare.html", dir);
    char *html = slurp_required(path);
    cr_assert(strstr(html, "src=\"data:image/png;base64,"), "figures inlined");
    cr_assert_null(strstr(html, "src=\"figures/"), "no image read from beside the page");
    cr_assert(strstr(html, "cuDNN differs (9.14.0 vs 9.19.0 vs 9.19.0)"));
    free(html);
    snprintf(path, sizeof path, "%s/a/compare.csv", dir);
    char *csv = slurp_required(path);
    cr_assert(strstr(csv, "\"cudnn\",\"h200-cudnn919-a\",0,ok,"), "%s", csv);
    /* Again into another directory: the same bytes. */
    snprintf(args, sizeof args, "compare %s %s %s -o %s/b --format png -q", CUDNN914, CUDNN919_A, CUDNN919_B, dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/b/compare.csv", dir);
    char *csv2 = slurp_required(path);
    cr_assert_str_eq(csv, csv2);
    free(csv);
    free(csv2);
    remove_tree(dir);
}

Test(compare_cli, errors_are_one_line_with_their_exit_code)
{
    char dir[] = "/tmp/attnprof-compare-XXXXXX", args[1024];
    cr_assert_not_null(mkdtemp(dir));
    struct {
        const char *fmt;
        int code;
        const char *says;
    } cases[] = {
        {"compare " CUDNN914 " -o %s/x", EXIT_USAGE, "two or more"},
        {"compare " CUDNN914 " " CUDNN919_A, EXIT_USAGE, "-o DIR"},
        {"compare " CUDNN914 " /nonexistent/archive -o %s/x", EXIT_BAD_ARCHIVE, "missing"},
        {"compare " CUDNN914 " " SMALL " -o %s/x", EXIT_USAGE, "--allow-shape-mismatch"},
        {"compare " CUDNN914 " " CUDNN919_A " --baseline nosuch -o %s/x", EXIT_USAGE, "--baseline nosuch"},
        {"compare " CUDNN914 " " CUDNN919_A " --min-effect abc -o %s/x", EXIT_USAGE, "--min-effect"},
        {"compare " CUDNN914 " " CUDNN919_A " -o %s", EXIT_OUTPUT_EXISTS, "--force"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char x[512];
        snprintf(x, sizeof x, cases[i].fmt, dir, dir);
        snprintf(args, sizeof args, "%s", x);
        cr_assert_eq(attnprof(args), cases[i].code, "`%s` → %s", args, err_text);
        cr_assert(strstr(err_text, cases[i].says), "`%s` → %s", args, err_text);
        cr_assert_eq(strchr(err_text, '\n'), err_text + strlen(err_text) - 1, "one line: %s", err_text);
        snprintf(x, sizeof x, "%s/x", dir);
        cr_assert(!path_exists(x), "nothing written for `%s`", args);
    }
    /* --baseline by directory name puts that run first; --force replaces. */
    snprintf(args, sizeof args, "compare %s %s --baseline h200-cudnn919-a -o %s --force -q", CUDNN914, CUDNN919_A, dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    char path[1024];
    snprintf(path, sizeof path, "%s/compare.md", dir);
    char *md = slurp_required(path);
    cr_assert(strstr(md, "Baseline: **h200-cudnn919-a**"), "%.300s", md);
    cr_assert(strstr(md, "cuDNN differs (9.19.0 vs 9.14.0)"));
    free(md);
    remove_tree(dir);
}

/* The same variant on another kernel: the kernel diff pairs the two as renamed
 * (one kernel each side, same role) and the verdict follows the medians. */
Test(compare_cli, flash_on_its_sm90a_kernel_is_a_renamed_kernel)
{
    pair p;
    char err[1024];
    cr_assert_eq(build_pair(&p, CUDNN919_A, SM90A, 0, err, sizeof err), EXIT_OK, "%s", err);
    const compare_variant *f = variant(&p.m, "flash");
    const compare_cell *b = &f->cell[0], *c = &f->cell[1];
    cr_assert_eq(c->metric_ratio.verdict,
                 median_of(c->metric, c->n) < median_of(b->metric, b->n) ? VERDICT_FASTER : VERDICT_SLOWER);
    free_pair(&p);

    char dir[] = "/tmp/attnprof-compare-XXXXXX", args[1024], path[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "compare %s %s -o %s/c -q", CUDNN919_A, SM90A, dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/c/compare.md", dir);
    char *md = slurp_required(path);
    cr_assert(strstr(md, "| fused attention | **renamed** | `attnprof_flash_fwd_bf16_d64_128x64_w4` | "
                         "`attnprof_flash_fwd_sm90a_bf16_d64_192x128_wg3_ea` |"),
              "%s", md);
    free(md);
    remove_tree(dir);
}

/* An import without --shape records none: compare says so and what to do, instead of
 * "imp is 0x0x0x0 but the baseline is 8x16x1024x64", and --allow-shape-mismatch does not
 * turn it into a throughput of nothing. */
Test(compare_cli, an_import_without_a_shape_is_named_not_printed_as_zeros)
{
    char dir[] = "/tmp/attnprof-unshaped-XXXXXX", args[2048];
    cr_assert(mkdtemp(dir));
    snprintf(args, sizeof args, "import " TORCH "kineto_sdpa_flash.json.gz -o %s/imp -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    for (int allow = 0; allow < 2; allow++) {
        snprintf(args, sizeof args, "compare out/example-h200 %s/imp -o %s/cmp -q%s", dir, dir,
                 allow ? " --allow-shape-mismatch" : "");
        cr_assert_eq(attnprof(args), EXIT_USAGE, "%s", err_text);
        cr_expect(strstr(err_text, "imp records no shape") && strstr(err_text, "import it again with --shape"),
                  "%s", err_text);
        cr_expect(!strstr(err_text, "0x0x0x0"), "no placeholder shape: %s", err_text);
    }
    /* Two imports without a shape compare (same shape: none), and no writer prints zeros. */
    snprintf(args, sizeof args, "import " TORCH "kineto_sdpa_flash.json.gz -o %s/imp2 -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "compare %s/imp %s/imp2 -o %s/both -q", dir, dir, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    const char *outputs[] = {"compare.md", "compare.html", "compare.csv", "compare.tex"};
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
        snprintf(args, sizeof args, "%s/both/%s", dir, outputs[i]);
        char *text = slurp(args);
        cr_assert(text, "%s", args);
        cr_expect(!strstr(text, "0×0×0×0") && !strstr(text, "0x0x0x0"), "%s prints a shape of zeros", outputs[i]);
        if (i == 0) {
            cr_expect(strstr(text, "| Shape | not recorded | not recorded |"), "%s", text);
            cr_expect(!strstr(text, "shape are equal") && !strstr(text, "shape is equal"), "an unrecorded shape is not equal");
        }
        free(text);
    }
    snprintf(args, sizeof args, "rm -rf %s", dir);
    cr_assert_eq(system(args), 0);
}

/* An import written by `attnprof import` records the importer's version: the row names it as
 * the importer's, and the sentence does not call it a difference of the measurement. */
Test(compare_fields, an_imports_attnprof_is_the_importer)
{
    pair p;
    char err[1024];
    cr_assert_eq(compare_load(&p.a, EXAMPLE, err, sizeof err), EXIT_OK, "%s", err);
    load_torch_import(&p.b);
    snprintf(p.b.r.tool_version, sizeof p.b.r.tool_version, "0da88ba");
    compare_archive *in[2] = {&p.a, &p.b};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT, .formats = FIG_PNG};
    cr_assert_eq(compare_build(&p.m, in, 2, &opt, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_str_eq(field_named(&p.m, "attnprof")->value[1], "imported by 0da88ba");
    cr_assert(field_named(&p.m, "attnprof")->differs, "the table still marks the two versions apart");
    cr_assert_null(strstr(p.m.differs_sentence, "attnprof differ"), "%s", p.m.differs_sentence);
    free_pair(&p);
}
