/* Counters, predictions and "Predict, then verify" without a GPU: counters.json and
 * run.json round trips, the derived quantities, the tile arithmetic of the fused
 * predictions, and the checks on the committed 6-variant H200 fixture joined with a
 * synthetic counter pass built here (real kernel names from the fixture's trace,
 * counter values chosen to hit and to miss the predictions). The H200 fixture with
 * real counters comes from the device run (bench/counters_h200.sh). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "counters.h"
#include "fixture.h"
#include "predict.h"
#include "predict_report.h"
#include "prediction.h"
#include "figures.h"
#include "report.h"

#define MiB (1024.0 * 1024.0)

static char *tmp_path(const char *name)
{
    static char p[256];
    snprintf(p, sizeof p, "/tmp/attnprof-test-%d-%s", (int)getpid(), name);
    return p;
}

Test(counters, json_round_trip_keeps_values_and_unavailable_metrics)
{
    counters_set s = {0};
    s.meta.status = CTR_OK;
    snprintf(s.meta.chip, sizeof s.meta.chip, "GH100");
    snprintf(s.meta.method, sizeof s.meta.method, "synthetic");
    s.meta.passes = 3;
    s.meta.pass_seconds = 4.25;
    for (int m = 0; m < M_COUNT; m++)
        s.meta.available[m] = m != M_GMMA_INST;
    counter_range *r = counters_add(&s, "naive", "kernel", 0, "attnprof_scale_bf16");
    cr_assert(r);
    for (int m = 0; m < M_COUNT; m++)
        r->v[m] = m == M_GMMA_INST ? NAN : counters_metric_max(m) <= 105 ? 50.5 + m : 1000.5 + m; /* % of a peak: <= 100 */
    cr_assert(counters_add(&s, "naive", "forward", -1, "forward"));
    char err[256];
    cr_assert_eq(counters_write_json(&s, tmp_path("c.json"), err, sizeof err), 0, "%s", err);
    counters_set b;
    cr_assert_eq(counters_read_json(&b, tmp_path("c.json"), err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.n, 2);
    cr_assert_eq(b.meta.status, CTR_OK);
    cr_assert_eq(b.meta.passes, 3);
    cr_assert_float_eq(b.meta.pass_seconds, 4.25, 1e-12);
    cr_assert_str_eq(b.meta.chip, "GH100");
    cr_assert_eq(b.meta.available[M_GMMA_INST], 0);
    cr_assert_eq(b.meta.available[M_DRAM_READ], 1);
    cr_assert_str_eq(b.r[0].name, "attnprof_scale_bf16");
    cr_assert_str_eq(b.r[1].kind, "forward");
    cr_assert_eq(b.r[1].index, -1);
    cr_assert_float_eq(b.r[0].v[M_DRAM_WRITE], 1000.5 + M_DRAM_WRITE, 1e-9);
    cr_assert(isnan(b.r[0].v[M_GMMA_INST]));
    counters_free(&s);
    counters_free(&b);
    unlink(tmp_path("c.json"));
}

Test(counters, reader_rejects_other_json)
{
    FILE *f = fopen(tmp_path("x.json"), "w");
    fputs("{\"traceEvents\": []}", f);
    fclose(f);
    counters_set s;
    char err[256];
    cr_assert_neq(counters_read_json(&s, tmp_path("x.json"), err, sizeof err), 0);
    cr_assert(strstr(err, "not an attnprof counters.json"), "%s", err);
    unlink(tmp_path("x.json"));
}

Test(counters, derived_quantities)
{
    counter_range r;
    memset(&r, 0, sizeof r);
    for (int m = 0; m < M_COUNT; m++)
        r.v[m] = NAN;
    r.v[M_DRAM_READ] = 100;
    r.v[M_DRAM_WRITE] = 50;
    r.v[M_L2_READ_SECTORS] = 3;
    r.v[M_L2_WRITE_SECTORS] = 1;
    r.v[M_FFMA] = 10;
    r.v[M_FADD] = 3;
    r.v[M_FMUL] = 2;
    r.v[M_DURATION_NS] = 2000;
    cr_assert_float_eq(counters_dram_bytes(&r), 150, 0);
    cr_assert_float_eq(counters_l2_bytes(&r), 128, 0);
    cr_assert_float_eq(counters_fp32_flops(&r), 25, 0);
    cr_assert(isnan(counters_tensor_flops(&r)), "no tensor metric: unknown, not 0");
    cr_assert_float_eq(counters_flops(&r), 25, 0);
    r.v[M_HGMMA_BF16_OPS] = 1000; /* hmma stays unavailable: counts 0; ops are FLOPs */
    cr_assert_float_eq(counters_tensor_flops(&r), 1000, 0);
    cr_assert_float_eq(counters_flops(&r), 1025, 0);
    cr_assert_float_eq(counters_seconds(&r), 2e-6, 1e-18);
}

Test(prediction, class_match_and_json_round_trip)
{
    attn_prediction p = {0};
    pred_class *g = prediction_add(&p, "GEMMs", "gemm|nvjet", 2, 1e9, 2e9, PIPE_TENSOR);
    cr_assert(g);
    cr_assert(pred_class_matches(g, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"));
    cr_assert(pred_class_matches(g, "sm80_xmma_gemm_f32f32"));
    cr_assert_not(pred_class_matches(g, "attnprof_softmax_rows_bf16_v4"));
    pred_class *c = prediction_add(&p, "Memcpy", "Memcpy DtoD", 1, 5e8, 0, PIPE_NONE);
    c->is_copy = 1;
    c->l2_bytes = 7;
    p.useful_flops = 1e9;
    json_t *j = prediction_to_json(&p);
    attn_prediction q;
    char err[256] = "";
    json_reader rd = {"run.json", err, sizeof err, 0};
    prediction_from_json(&rd, j, "variants[0]", &q);
    json_decref(j);
    cr_assert_eq(rd.failed, 0, "%s", err);
    cr_assert(q.valid);
    cr_assert_eq(q.n, 2);
    cr_assert_str_eq(q.cls[0].match, "gemm|nvjet");
    cr_assert_eq(q.cls[0].pipe, PIPE_TENSOR);
    cr_assert_eq(q.cls[0].count, 2);
    cr_assert(q.cls[1].is_copy);
    cr_assert_float_eq(q.cls[1].l2_bytes, 7, 0);
    cr_assert_float_eq(q.useful_flops, 1e9, 0);
    attn_prediction none;
    prediction_from_json(&rd, json_null(), "variants[0]", &none);
    cr_assert_not(none.valid);
}

Test(prediction, fused_tiles_count_the_diagonal)
{
    attn_shape s = {.batch = 8, .heads = 16, .seq = 1024, .dim = 64};
    double flops, kv;
    /* 128-row query tiles over 64-key tiles: tile i visits (i+1)·128 keys; the diagonal
     * tiles add 1/8 to the useful 2·B·H·S²·D. */
    prediction_fused_tiles(&s, 128, 64, &flops, &kv);
    cr_assert_float_eq(flops / prediction_useful_flops(&s), 1.0 + 128.0 / 1024, 1e-12);
    cr_assert_float_eq(kv, 8.0 * 16 * (128.0 * 36) * 64 * 2 * 2, 1);
    /* A ragged last tile: S = 1000 with 64×64 tiles. */
    attn_shape r = {.batch = 1, .heads = 1, .seq = 1000, .dim = 64};
    prediction_fused_tiles(&r, 64, 64, &flops, &kv);
    double want = 0;
    for (int q0 = 0; q0 < 1000; q0 += 64) {
        int rows = 1000 - q0 < 64 ? 1000 - q0 : 64, keys = q0 + 64 > 1000 ? 1000 : q0 + 64;
        want += 4.0 * rows * keys * 64;
    }
    cr_assert_float_eq(flops, want, 1);
    cr_assert_float_eq(prediction_scores_bytes(&s), 256 * MiB, 0);
    cr_assert_float_eq(prediction_io_bytes(&s), 16 * MiB, 0);
}

Test(prediction, ceilings_json_and_ridge)
{
    ceilings c = {.measured = 1, .tensor_bf16_tflops = 780, .fp32_fma_tflops = 50, .copy_tbps = 4}, d;
    json_t *j = ceilings_to_json(&c);
    char err[256] = "";
    json_reader rd = {"run.json", err, sizeof err, 0};
    ceilings_from_json(&rd, j, &d);
    json_decref(j);
    cr_assert_eq(rd.failed, 0, "%s", err);
    cr_assert(d.measured);
    cr_assert_float_eq(ceilings_ridge(&d), 195, 1e-9);
    ceilings_from_json(&rd, NULL, &d);
    cr_assert(isnan(ceilings_ridge(&d)));
}

/* ---- The checks on the 6-variant fixture with a synthetic counter pass. ---- */

static double sb(const run_info *r) { return prediction_scores_bytes(&r->shape); }
static double io(const run_info *r) { return prediction_io_bytes(&r->shape); }

/* Predictions as naive, math and flash declare them (the formulas of their files). */
static void declare(run_info *r)
{
    const double S = r->shape.seq;
    for (int i = 0; i < r->n_variants; i++) {
        variant_result *v = &r->variants[i];
        attn_prediction *p = &v->prediction;
        memset(p, 0, sizeof *p);
        p->useful_flops = prediction_useful_flops(&r->shape);
        if (!strcmp(v->name, "naive")) {
            prediction_add(p, "GEMMs", "gemm|nvjet|xmma", 2, 2 * sb(r) + 4 * io(r), 2 * p->useful_flops, PIPE_TENSOR);
            prediction_add(p, "scale", "attnprof_scale", 1, 2 * sb(r), 0, PIPE_NONE);
            prediction_add(p, "Memcpy DtoD", "Memcpy DtoD", 1, 2 * sb(r), 0, PIPE_NONE)->is_copy = 1;
            prediction_add(p, "masked_fill", "masked_fill", 1, sb(r) * (S - 1) / (2 * S) + S * S, 0, PIPE_NONE);
            prediction_add(p, "softmax", "softmax", 1, 2 * sb(r), 0, PIPE_NONE);
        } else if (!strcmp(v->name, "math")) {
            prediction_add(p, "FP32 GEMMs", "gemm|xmma|nvjet", 2, 4 * sb(r) + 8 * io(r), 2 * p->useful_flops, PIPE_FMA);
        } else if (!strcmp(v->name, "flash")) {
            prediction_add(p, "fused kernel", "attnprof_flash_fwd", 1, 4 * io(r), 0, PIPE_TENSOR);
        } else {
            continue;
        }
        for (int k = 0; k < p->n; k++) {
            p->executed_flops += p->cls[k].flops;
            p->min_dram_bytes += p->cls[k].dram_bytes;
        }
    }
    r->ceilings = (ceilings){.measured = 1, .tensor_bf16_tflops = 780, .fp32_fma_tflops = 50, .copy_tbps = 4.2};
}

/* One kernel range per GPU kernel of the variant's median forward (names from the trace),
 * with values: exactly the prediction for naive's scale and softmax, +20% for its fill,
 * the GEMMs on tensor cores, math's GEMMs on FFMA (49152 tensor-pipe instructions, as
 * cuBLAS's FFMA GEMMs issue on the H200, and `math_tensor_flops` of bf16 tensor math),
 * flash fused. */
static void synthesize(fixture *f, double math_tensor_flops)
{
    run_info *r = &f->r;
    counters_set *cs = &r->counters;
    memset(cs, 0, sizeof *cs);
    cs->meta.status = CTR_OK;
    for (int m = 0; m < M_COUNT; m++)
        cs->meta.available[m] = 1;
    for (int i = 0; i < f->a.n; i++) {
        const variant_analysis *va = &f->a.v[i];
        if (!va->n_forwards)
            continue;
        const forward *fw = &va->forwards[0];
        double kernel_dram = 0;
        int idx = 0;
        for (int k = 0; k < fw->n_ops; k++) {
            const gpu_op *o = fw->ops[k];
            if (o->kind != GPU_KERNEL)
                continue;
            counter_range *c = counters_add(cs, va->result->name, "kernel", idx++, o->name);
            for (int m = 0; m < M_COUNT; m++)
                c->v[m] = 0;
            c->v[M_DURATION_NS] = 100e3;
            double half = 0;
            if (strstr(o->name, "scale") || strstr(o->name, "softmax"))
                half = sb(r);
            else if (strstr(o->name, "masked_fill"))
                half = 0.6 * (sb(r) * (r->shape.seq - 1) / (2.0 * r->shape.seq) + (double)r->shape.seq * r->shape.seq);
            else if (strstr(o->name, "gemm") || strstr(o->name, "nvjet") || strstr(o->name, "xmma"))
                half = sb(r) / 2 + io(r);
            else if (strstr(o->name, "flash"))
                half = 2 * io(r);
            c->v[M_DRAM_READ] = c->v[M_DRAM_WRITE] = half;
            kernel_dram += 2 * half;
            if (!strcmp(va->result->name, "math") && (strstr(o->name, "gemm"))) {
                c->v[M_FFMA] = va->result->prediction.useful_flops / 2; /* 2 GEMMs: 2·useful FLOPs together */
                c->v[M_TENSOR_INST] = 49152;
                c->v[M_HMMA_BF16_OPS] = math_tensor_flops;
            } else if (strstr(o->name, "nvjet") || strstr(o->name, "flash")) {
                c->v[M_TENSOR_INST] = 1e6;
                c->v[M_HGMMA_BF16_OPS] = va->result->prediction.useful_flops; /* each GEMM: the full matrix */
            }
            c->v[M_WARPS_ACTIVE_PCT] = 40;
        }
        counter_range *fr = counters_add(cs, va->result->name, "forward", -1, "forward");
        for (int m = 0; m < M_COUNT; m++)
            fr->v[m] = 0;
        /* naive's Memcpy: 256 MiB each way, not a kernel. */
        double copy = !strcmp(va->result->name, "naive") ? 2 * sb(r) : 0;
        fr->v[M_DRAM_READ] = (kernel_dram + copy) / 2;
        fr->v[M_DRAM_WRITE] = (kernel_dram + copy) / 2;
    }
}

static const pv_check *find(const pv_variant *pv, pv_kind k, const char *cls)
{
    for (int i = 0; i < pv->n; i++)
        if (pv->c[i].kind == k && !strcmp(pv->c[i].cls, cls))
            return &pv->c[i];
    return NULL;
}

static int vindex(const analysis *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].result->name, name))
            return i;
    return -1;
}

Test(predict, hits_and_misses_on_synthetic_counters)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    synthesize(&f, 0);
    pv_variant pv;
    predict_variant(&f.a, vindex(&f.a, "naive"), &pv);
    const pv_check *c = find(&pv, PV_DRAM, "scale");
    cr_assert(c);
    cr_assert_eq(c->verdict, PV_OK);
    cr_assert_float_eq(c->measured, 2 * sb(&f.r), 1);
    c = find(&pv, PV_DRAM, "masked_fill");
    cr_assert_eq(c->verdict, PV_MISS, "a fill moving 20%% more than its minimum is a miss");
    c = find(&pv, PV_DRAM, "Memcpy DtoD");
    cr_assert_eq(c->verdict, PV_OK, "forward minus kernels gives the copy: %g", c->measured);
    cr_assert_float_eq(c->measured, 2 * sb(&f.r), 1);
    c = find(&pv, PV_PIPE, "GEMMs");
    cr_assert_eq(c->verdict, PV_OK);
    c = find(&pv, PV_COUNT, "GEMMs");
    cr_assert_float_eq(c->measured, 2, 0);
    cr_assert_eq(c->verdict, PV_OK);
    c = find(&pv, PV_FLOPS, "GEMMs");
    cr_assert_eq(c->verdict, PV_OK, "the HGMMA FLOPs of both GEMMs: the full matrices");
    cr_assert_float_eq(c->measured, 2 * prediction_useful_flops(&f.r.shape), 1);
    c = find(&pv, PV_REGIME, "forward");
    cr_assert(c);
    cr_assert_eq(c->predicted, 0, "naive predicted memory-bound");
    cr_assert_eq(c->verdict, PV_OK);

    predict_variant(&f.a, vindex(&f.a, "math"), &pv);
    c = find(&pv, PV_PIPE, "FP32 GEMMs");
    cr_assert_eq(c->verdict, PV_OK, "0 tensor instructions and FFMA work");
    cr_assert_float_eq(c->measured, 0, 0);
    c = find(&pv, PV_FLOPS, "FP32 GEMMs");
    cr_assert_eq(c->verdict, PV_OK);

    predict_variant(&f.a, vindex(&f.a, "flash"), &pv);
    c = find(&pv, PV_DRAM, "fused kernel");
    cr_assert_eq(c->verdict, PV_OK);
    cr_assert_eq(find(&pv, PV_PIPE, "fused kernel")->verdict, PV_OK);
    counters_free(&f.r.counters);
    fixture_free(&f);
}

/* The DRAM judge's rules, at their edges: the 5% tolerance, the L2 (fewer bytes than the
 * minimum of a class that fits in it is no miss; more is), the 64 KiB per kernel within which
 * a difference is not judged, and an L2 size of 0 (unknown) that makes no excuse. */
Test(predict, dram_judge_rules_at_their_edges)
{
    const double l2 = 60 * MiB, KiB = 1024;
    cr_assert_eq(predict_judge_dram(64 * MiB, 67 * MiB, l2, 1), PV_OK, "+4.7%%: within 5%%");
    cr_assert_eq(predict_judge_dram(64 * MiB, 68 * MiB, l2, 1), PV_MISS, "+6.25%%: above the minimum is never the L2's");
    cr_assert_eq(predict_judge_dram(2 * MiB, 0.4 * MiB, l2, 1), PV_L2_SERVED, "2 MiB fits in 60 MiB: served from it");
    cr_assert_eq(predict_judge_dram(2 * MiB, 0.4 * MiB, 0, 1), PV_MISS, "no L2 size recorded: no excuse");
    cr_assert_eq(predict_judge_dram(64 * MiB, 40 * MiB, l2, 1), PV_MISS, "64 MiB does not fit in a 60 MiB L2");
    cr_assert_eq(predict_judge_dram(4 * KiB, 16 * KiB, l2, 1), PV_WITHIN_FLOOR, "12 KiB more: a kernel's own traffic");
    cr_assert_eq(predict_judge_dram(4 * KiB, 100 * KiB, l2, 1), PV_MISS, "96 KiB more than one kernel's floor");
    cr_assert_eq(predict_judge_dram(4 * KiB, 100 * KiB, l2, 2), PV_WITHIN_FLOOR, "two kernels: 128 KiB of floor");
    cr_assert_eq(predict_judge_dram(4 * KiB, NAN, l2, 1), PV_NA);
}

/* Kernel replay's write-back: the decode fixture's fused kernels are counted writing 17-23
 * MiB under kernel replay, their forwards (user replay) 3-4 MiB in all, and their reads are
 * K+V. With the writes capped at the forward's they are within the minimum, and the check
 * says so instead of a miss; cuDNN's, whose 64.1 MiB do not fit in the 60 MiB L2 and whose
 * capped bytes are 6% under it, stays a miss. */
Test(counters_fixture, kernel_replay_write_back_is_named_not_missed)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-decode");
    char err[256];
    cr_assert_eq(counters_read_json(&f.r.counters, "tests/fixtures/h200-decode/counters.json", err, sizeof err), 0,
                 "%s", err);
    const char *name[] = {"efficient", "flash"}, *cls[] = {"fused kernel", "split-KV kernel"};
    for (int t = 0; t < 2; t++) {
        pv_variant pv;
        predict_variant(&f.a, vindex(&f.a, name[t]), &pv);
        const pv_check *c = find(&pv, PV_DRAM, cls[t]);
        cr_assert(c, "%s: no %s DRAM check", name[t], cls[t]);
        cr_assert_eq(c->verdict, PV_REPLAY_WRITES, "%s: verdict %d, measured %g of %g", name[t], c->verdict,
                     c->measured, c->predicted);
        cr_assert_gt(c->measured, 1.05 * c->predicted, "raw bytes above the minimum");
        cr_assert_leq(fabs(c->aux / c->predicted - 1), PV_TOL_DRAM, "capped within the tolerance: %g", c->aux);
        cr_assert_lt(c->aux2, c->measured - c->aux + c->aux2, "the forward wrote less than the class was counted");
    }
    pv_variant pv;
    predict_variant(&f.a, vindex(&f.a, "cudnn"), &pv);
    for (int i = 0; i < pv.n; i++)
        if (pv.c[i].kind == PV_DRAM)
            cr_assert_eq(pv.c[i].verdict, PV_MISS, "cudnn %s: %g of %g", pv.c[i].cls, pv.c[i].measured, pv.c[i].predicted);
    counters_free(&f.r.counters);
    fixture_free(&f);
}

/* Operations per forward: one more than expected, that one a Memset (cuBLAS's 4-byte workspace
 * fill at the default shape, h200-cudnn919-a), is the library's, not a miss; one more that is a
 * kernel (cuDNN's split-KV merge at one query, h200-decode) is. */
Test(predict, library_memset_beyond_the_expected_ops_is_named_not_missed)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-cudnn919-a");
    pv_variant pv;
    predict_variant(&f.a, vindex(&f.a, "naive"), &pv);
    const pv_check *c = find(&pv, PV_OPS, "forward");
    cr_assert(c);
    cr_assert_eq(c->predicted, 6);
    cr_assert_eq(c->measured, 7);
    cr_assert_eq(c->verdict, PV_LIBRARY_MEMSET, "verdict %d", c->verdict);
    predict_variant(&f.a, vindex(&f.a, "flash"), &pv);
    cr_assert_eq(find(&pv, PV_OPS, "forward")->verdict, PV_OK);
    fixture_free(&f);

    fixture_load(&f, "tests/fixtures/h200-decode");
    predict_variant(&f.a, vindex(&f.a, "cudnn"), &pv);
    c = find(&pv, PV_OPS, "forward");
    cr_assert(c);
    cr_assert_eq(c->measured - c->predicted, 1);
    cr_assert_eq(c->verdict, PV_MISS, "an extra kernel is the variant's: verdict %d", c->verdict);
    fixture_free(&f);
}

Test(predict, tensor_core_math_in_math_is_a_miss)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    synthesize(&f, 0);
    pv_variant pv;
    predict_variant(&f.a, vindex(&f.a, "math"), &pv);
    cr_assert_eq(find(&pv, PV_PIPE, "FP32 GEMMs")->verdict, PV_OK, "tensor-pipe instructions alone are no tensor math");
    counters_free(&f.r.counters);
    synthesize(&f, 4096);
    predict_variant(&f.a, vindex(&f.a, "math"), &pv);
    cr_assert_eq(find(&pv, PV_PIPE, "FP32 GEMMs")->verdict, PV_MISS);
    counters_free(&f.r.counters);
    fixture_free(&f);
}

Test(predict, forbidden_counters_leave_predictions_unmeasured)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    f.r.counters.meta.status = CTR_FORBIDDEN;
    snprintf(f.r.counters.meta.reason, sizeof f.r.counters.meta.reason,
             "cuptiProfilerGetCounterAvailability: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)");
    pv_variant pv;
    predict_variant(&f.a, vindex(&f.a, "naive"), &pv);
    cr_assert_eq(find(&pv, PV_DRAM, "scale")->verdict, PV_NA);
    cr_assert_eq(find(&pv, PV_REGIME, "forward")->verdict, PV_NA);
    char *md = report_markdown(&f.a, NULL, NULL);
    cr_assert(strstr(md, "## Predict, then verify"));
    cr_assert(strstr(md, "the GPU refused them"));
    cr_assert(strstr(md, "INSUFFICIENT_PRIVILEGES"));
    free(md);
    fixture_free(&f);
}

Test(predict, section_only_when_there_is_something_to_verify)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    cr_assert_not(predict_available(&f.a));
    char *md = report_markdown(&f.a, NULL, NULL);
    cr_assert_null(strstr(md, "Predict, then verify"));
    free(md);
    declare(&f.r);
    synthesize(&f, 0);
    cr_assert(predict_available(&f.a));
    md = report_markdown(&f.a, NULL, NULL);
    const char *sec = strstr(md, "### `naive`");
    cr_assert(sec, "per-variant table");
    /* The miss comes first in the variant's table. */
    const char *miss = strstr(sec, "✘"), *hit = strstr(sec, "✔");
    cr_assert(miss && hit && miss < hit);
    cr_assert(strstr(md, "Ceilings measured in this run: 780 TFLOP/s"));
    free(md);
    counters_free(&f.r.counters);
    fixture_free(&f);
}

Test(predict, findings_from_counters)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    synthesize(&f, 0);
    int before = f.a.v[vindex(&f.a, "math")].n_findings;
    predict_findings(&f.a);
    const variant_analysis *naive = &f.a.v[vindex(&f.a, "naive")], *math = &f.a.v[vindex(&f.a, "math")];
    int miss = finding_with(naive, "prediction missed"), copy = finding_with(naive, "Memcpy DtoD moves");
    cr_assert_geq(miss, 0);
    cr_assert_geq(copy, 0);
    cr_assert_lt(miss, copy, "the mismatch is the first counter finding");
    cr_assert(strstr(naive->findings[copy], "each way at"), "%s", naive->findings[copy]);
    cr_assert_geq(finding_with(math, "do 0 GFLOP of tensor-core math"), before);
    counters_free(&f.r.counters);
    fixture_free(&f);
}

Test(predict, run_json_round_trip_with_predictions_ceilings_and_counter_status)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    f.r.counters.meta.status = CTR_FORBIDDEN;
    snprintf(f.r.counters.meta.reason, sizeof f.r.counters.meta.reason, "no permission");
    char err[256];
    cr_assert_eq(run_info_write_json(&f.r, tmp_path("run.json"), err, sizeof err), 0, "%s", err);
    static run_info b;
    cr_assert_eq(run_info_read_json(&b, tmp_path("run.json"), err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.counters.meta.status, CTR_FORBIDDEN);
    cr_assert_str_eq(b.counters.meta.reason, "no permission");
    cr_assert(b.ceilings.measured);
    cr_assert_float_eq(b.ceilings.copy_tbps, 4.2, 1e-12);
    const variant_result *n = NULL;
    for (int i = 0; i < b.n_variants; i++)
        if (!strcmp(b.variants[i].name, "naive"))
            n = &b.variants[i];
    cr_assert(n && n->prediction.valid);
    cr_assert_eq(n->prediction.n, 5);
    cr_assert(n->prediction.cls[2].is_copy);
    unlink(tmp_path("run.json"));
    fixture_free(&f);
}

static int has_figure(const figure_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->files[i].figure, name))
            return 1;
    return 0;
}

Test(predict, roofline_only_with_counters)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    char dir[128], err[256];
    snprintf(dir, sizeof dir, "/tmp/attnprof-roof-%d", (int)getpid());
    figure_list figs = {0};
    cr_assert_eq(figures_render(&f.a, dir, FIG_SVG, 0, &figs, err, sizeof err), 0, "%s", err);
    cr_assert_not(has_figure(&figs, "roofline"));
    figure_list_free(&figs);
    declare(&f.r);
    synthesize(&f, 0);
    memset(&figs, 0, sizeof figs);
    cr_assert_eq(figures_render(&f.a, dir, FIG_SVG | FIG_PNG, 0, &figs, err, sizeof err), 0, "%s", err);
    cr_assert(has_figure(&figs, "roofline"));
    char path[256];
    snprintf(path, sizeof path, "%s/figures/roofline.svg", dir);
    FILE *fp = fopen(path, "r");
    cr_assert(fp, "roofline.svg written");
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    figure_list_free(&figs);
    counters_free(&f.r.counters);
    fixture_free(&f);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "cp -r %s /tmp/attnprof-roof-last 2>/dev/null; rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

static int run_bin(const char *args)
{
    const char *bin = getenv("ATTNPROF_BIN") ? getenv("ATTNPROF_BIN") : "build/attnprof";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>&1", bin, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, needle) != NULL;
}

/* `attnprof report` on an archive with counters.json: the executable reads it beside
 * run.json and renders the section and the roofline; a corrupt one is a bad archive. */
Test(predict, report_command_reads_counters_json)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    synthesize(&f, 0);
    char dir[128], path[256], err[256], cmd[512];
    snprintf(dir, sizeof dir, "/tmp/attnprof-ctr-archive-%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp tests/fixtures/h200-6var/trace.json %s/", dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/run.json", dir);
    cr_assert_eq(run_info_write_json(&f.r, path, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/counters.json", dir);
    cr_assert_eq(counters_write_json(&f.r.counters, path, err, sizeof err), 0, "%s", err);
    counters_free(&f.r.counters);
    fixture_free(&f);

    snprintf(cmd, sizeof cmd, "report %s --format png -q", dir);
    cr_assert_eq(run_bin(cmd), 0);
    snprintf(path, sizeof path, "%s/report.md", dir);
    cr_assert(file_has(path, "## Predict, then verify"));
    cr_assert(file_has(path, "figures/roofline.png"));
    cr_assert(file_has(path, "prediction missed: masked_fill"), "the counter finding reaches the summary");
    snprintf(path, sizeof path, "%s/figures/roofline.png", dir);
    cr_assert(access(path, F_OK) == 0);

    snprintf(path, sizeof path, "%s/counters.json", dir);
    FILE *c = fopen(path, "w");
    fputs("{\"meta\": ", c);
    fclose(c);
    cr_assert_eq(run_bin(cmd), 6, "a corrupt counters.json is a bad archive (exit 6)");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The H200 archive recorded with counters by bench/counters_h200.sh (step 4), once it is
 * committed as tests/fixtures/h200-counters: the predictions the issue names hold on the
 * real counters. Skipped (said so) until the device run has produced it. */
Test(counters_fixture, h200_predictions_hold_on_real_counters)
{
    const char *dir = "tests/fixtures/h200-counters";
    if (access("tests/fixtures/h200-counters/counters.json", F_OK) != 0)
        cr_skip_test("no %s yet: it comes from the device run (bench/counters_h200.sh)", dir);
    fixture f;
    fixture_load(&f, dir);
    char err[256];
    cr_assert_eq(counters_read_json(&f.r.counters, "tests/fixtures/h200-counters/counters.json", err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(f.r.counters.meta.status, CTR_OK);
    cr_assert(f.r.ceilings.measured);
    pv_variant pv;
    predict_variant(&f.a, vindex(&f.a, "naive"), &pv);
    cr_assert_eq(find(&pv, PV_DRAM, "scale")->verdict, PV_OK, "scale: %g B", find(&pv, PV_DRAM, "scale")->measured);
    for (int i = 0; i < pv.n; i++)
        if (pv.c[i].kind == PV_DRAM && strstr(pv.c[i].cls, "Memcpy"))
            cr_assert_eq(pv.c[i].verdict, PV_OK, "Memcpy: %g B", pv.c[i].measured);
    predict_variant(&f.a, vindex(&f.a, "math"), &pv);
    for (int i = 0; i < pv.n; i++)
        if (pv.c[i].kind == PV_PIPE)
            cr_assert_eq(pv.c[i].verdict, PV_OK, "math %s: %g tensor instructions", pv.c[i].cls, pv.c[i].measured);
    const char *tensor[] = {"flash", "cudnn"};
    for (int t = 0; t < 2; t++) {
        int vi = vindex(&f.a, tensor[t]);
        if (vi < 0 || f.a.v[vi].result->status != VARIANT_OK)
            continue;
        predict_variant(&f.a, vi, &pv);
        for (int i = 0; i < pv.n; i++)
            if (pv.c[i].kind == PV_PIPE)
                cr_assert_eq(pv.c[i].verdict, PV_OK, "%s: %g tensor instructions", tensor[t], pv.c[i].measured);
    }
    counters_free(&f.r.counters);
    fixture_free(&f);
}

/* Strings of counters.json and of the predictions come from an archive: a kernel name or
 * a class label cannot open HTML, a link or a new table cell in report.md. */
Test(predict, archive_strings_are_escaped_in_the_section)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    synthesize(&f, 0);
    counter_range *r = counters_add(&f.r.counters, "naive", "kernel", 99, "evil<script>x</script>|`[a](b)");
    for (int m = 0; m < M_COUNT; m++)
        r->v[m] = 1;
    for (int i = 0; i < f.r.n_variants; i++)
        if (!strcmp(f.r.variants[i].name, "naive"))
            snprintf(f.r.variants[i].prediction.cls[1].label, sizeof f.r.variants[i].prediction.cls[1].label,
                     "sc<img src=x>|ale");
    snprintf(f.r.counters.meta.chip, sizeof f.r.counters.meta.chip, "GH100<b>");
    predict_findings(&f.a);
    char *md = report_markdown(&f.a, NULL, NULL), err[256];
    char *html = report_html(md, "t", err, sizeof err);
    cr_assert(html, "%s", err);
    cr_assert_null(strstr(html, "<script>"), "raw HTML from a kernel name");
    cr_assert_null(strstr(html, "<img"), "raw HTML from a class label");
    cr_assert_null(strstr(html, "GH100<b>"), "raw HTML from the chip name");
    cr_assert(strstr(html, "evil&lt;script&gt;"), "the name is shown, as text");
    free(html);
    free(md);
    counters_free(&f.r.counters);
    fixture_free(&f);
}

/* A share of a roof takes numerator and denominator from one scope. The
 * counters fixture's naive forward holds a 256 MiB Memcpy: whole-forward DRAM bytes over
 * kernel-only time gave "113% of the copy roof ✔". Kernels' bytes over kernels' time is
 * the share; above 100% it is a measurement inconsistency, never a ✔. */
Test(counters_fixture, roof_shares_use_one_scope_and_never_pass_100_percent_with_a_tick)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-counters");
    char err[256];
    cr_assert_eq(counters_read_json(&f.r.counters, "tests/fixtures/h200-counters/counters.json", err, sizeof err), 0,
                 "%s", err);
    cr_assert(f.r.ceilings.measured);
    for (int vi = 0; vi < f.a.n; vi++) {
        pv_variant pv;
        predict_variant(&f.a, vi, &pv);
        const pv_check *c = find(&pv, PV_REGIME, "forward");
        if (!c || !isfinite(c->measured))
            continue;
        pv_sum k = predict_sum_kernels(&f.r.counters, f.a.v[vi].result->name, NULL);
        cr_assert_gt(k.seconds, 0);
        cr_assert_float_eq(c->frac_dram, k.dram / k.seconds / (f.r.ceilings.copy_tbps * 1e12), 1e-9,
                           "%s: kernels' bytes over kernels' time", f.a.v[vi].result->name);
        cr_assert_leq(c->frac_dram, 1.0, "%s: %.0f%% of the copy roof on real counters", f.a.v[vi].result->name,
                      100 * c->frac_dram);
        cr_assert_neq(c->verdict, PV_INCONSISTENT);
    }
    /* the naive forward: the kernels alone give 87% */
    int naive = vindex(&f.a, "naive");
    pv_variant pv;
    predict_variant(&f.a, naive, &pv);
    cr_assert_lt(fabs(find(&pv, PV_REGIME, "forward")->frac_dram - 0.87), 0.005);
    char *md = report_markdown(&f.a, NULL, NULL);
    cr_assert_null(strstr(md, "113% of the copy roof"));
    cr_assert_not_null(strstr(md, "87% of the copy roof (kernels' FLOPs and DRAM bytes over kernels' time) | ✔ |"));
    free(md);

    /* A roof below what the kernels reach (here: the copy roof set to half of it, a
     * synthetic change of the fixture): inconsistent, said with both rates, no ✔. */
    const double kernels_tbps = predict_sum_kernels(&f.r.counters, "naive", NULL).dram /
                                predict_sum_kernels(&f.r.counters, "naive", NULL).seconds / 1e12;
    f.r.ceilings.copy_tbps = kernels_tbps / 2;
    predict_variant(&f.a, naive, &pv);
    const pv_check *c = find(&pv, PV_REGIME, "forward");
    cr_assert_eq(c->verdict, PV_INCONSISTENT);
    cr_assert_float_eq(c->frac_dram, 2.0, 1e-9);
    md = report_markdown(&f.a, NULL, NULL);
    const char *row = strstr(md, "| **regime** | memory-bound");
    cr_assert_not_null(row, "the inconsistent row is listed first and marked");
    const char *eol = strchr(row, '\n');
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(eol - row), row);
    cr_assert_not_null(strstr(line, "**measurement inconsistent**: "), "%s", line);
    cr_assert_not_null(strstr(line, "200% of the copy roof"), "%s", line);
    char rates[128];
    snprintf(rates, sizeof rates, "the kernels moved %.2f TB/s, above the %.2f TB/s copy roof", kernels_tbps,
             kernels_tbps / 2);
    cr_assert_not_null(strstr(line, rates), "%s", line);
    cr_assert_null(strstr(line, "✔"), "%s", line);
    cr_assert_not_null(strstr(line, "| ⚠ inconsistent |"), "%s", line);
    free(md);
    counters_free(&f.r.counters);
    fixture_free(&f);
}

/* --counters-max-gib: a variant the counter pass skipped carries a "counters" fact with
 * the reason; the section then no longer says every variant was measured, and names it. */
Test(predict, a_variant_the_counter_pass_skipped_is_named_with_its_reason)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    synthesize(&f, 0);
    char *md = report_markdown(&f.a, NULL, NULL);
    cr_assert(strstr(md, "measures one forward of each variant, per kernel"), "nothing skipped: every variant");
    free(md);
    int m = -1;
    for (int i = 0; i < f.r.n_variants; i++)
        if (!strcmp(f.r.variants[i].name, "math"))
            m = i;
    cr_assert_geq(m, 0);
    attn_facts *facts = &f.r.variants[m].facts;
    cr_assert_lt(facts->n, ATTN_MAX_FACTS);
    attn_fact *fa = &facts->item[facts->n++];
    snprintf(fa->key, sizeof fa->key, "counters");
    snprintf(fa->value, sizeof fa->value, "counter pass skipped: the variant needs 37.2 GiB of device memory here, "
                                           "above --counters-max-gib 4 (kernel replay saves and restores it on every pass)");
    fa->number = NAN;
    md = report_markdown(&f.a, NULL, NULL);
    cr_assert(strstr(md, "measures one forward of each variant but those named below, per kernel"), "%.2000s",
              strstr(md, "## Predict") ? strstr(md, "## Predict") : md);
    cr_assert(strstr(md, "`math`: counter pass skipped: the variant needs 37.2 GiB"));
    free(md);
    counters_free(&f.r.counters);
    fixture_free(&f);
}

/* Ceilings taken from an earlier archive on the same GPU (run --ceilings-from, a sweep's later
 * shapes): run.json says which archive, the report says they were not measured in this run,
 * and a hostile name is kept to name characters. */
Test(prediction, ceilings_from_another_archive_say_where_they_were_measured)
{
    ceilings c = {.measured = 1, .tensor_bf16_tflops = 788, .fp32_fma_tflops = 51, .copy_tbps = 4.2}, d;
    snprintf(c.source, sizeof c.source, "2x16x16384x128");
    json_t *j = ceilings_to_json(&c);
    cr_assert_str_eq(json_string_value(json_object_get(j, "measured_in")), "2x16x16384x128");
    char err[256] = "";
    json_reader rd = {"run.json", err, sizeof err, 0};
    ceilings_from_json(&rd, j, &d);
    cr_assert_str_eq(d.source, "2x16x16384x128");
    json_object_set_new(j, "measured_in", json_string("<b>x</b> `y`"));
    ceilings_from_json(&rd, j, &d);
    cr_assert_eq(rd.failed, 0, "%s", err);
    cr_assert_str_eq(d.source, "_b_x__b___y_");
    json_decref(j);
    c.source[0] = '\0';
    j = ceilings_to_json(&c);
    cr_assert_null(json_object_get(j, "measured_in"), "measured here: no source key (archives stay as before)");
    json_decref(j);

    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    declare(&f.r);
    synthesize(&f, 0);
    f.r.ceilings = (ceilings){.measured = 1, .tensor_bf16_tflops = 788, .fp32_fma_tflops = 51, .copy_tbps = 4.2};
    char *md = report_markdown(&f.a, NULL, NULL);
    cr_assert(strstr(md, "Ceilings measured in this run: 788 TFLOP/s"));
    free(md);
    snprintf(f.r.ceilings.source, sizeof f.r.ceilings.source, "2x16x16384x128");
    md = report_markdown(&f.a, NULL, NULL);
    cr_assert(strstr(md, "Ceilings measured on the same GPU (the same UUID) in the archive `2x16x16384x128`, not again "
                         "in this run: 788 TFLOP/s"), "%s", strstr(md, "Ceilings") ? strstr(md, "Ceilings") : md);
    cr_assert_null(strstr(md, "Ceilings measured in this run"));
    free(md);
    counters_free(&f.r.counters);
    fixture_free(&f);
}
