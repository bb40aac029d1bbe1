/* The backward's findings (report/analysis/backward_findings.c) on the H200 --backward archive
 * (tests/fixtures/h200-backward: 8x16x1024x64 causal, three backwards per variant): asserted on
 * the findings' ids and numbers. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../fixture.h"
#include "backward_findings.h"
#include "finding.h"
#include "findings.h"

#define FIXTURE_BWD "tests/fixtures/h200-backward"

static variant_analysis *va_of(fixture *f, const char *name)
{
    for (int i = 0; i < f->a.n; i++)
        if (!strcmp(f->a.v[i].result->name, name))
            return &f->a.v[i];
    cr_assert_fail("no variant %s", name);
    return NULL;
}

static variant_result *result_of(fixture *f, const char *name)
{
    for (int i = 0; i < f->r.n_variants; i++)
        if (!strcmp(f->r.variants[i].name, name))
            return &f->r.variants[i];
    cr_assert_fail("no variant %s", name);
    return NULL;
}

static const finding *must(const variant_analysis *va, const char *id)
{
    const finding *fd = findings_find(va, id);
    cr_assert(fd, "%s has no %s finding", va->result->name, id);
    return fd;
}

Test(backward_findings, backwards_grouped_from_the_attn_bwd_ranges)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    for (int i = 0; i < f.a.n; i++) {
        const variant_analysis *va = &f.a.v[i];
        cr_assert_eq(va->n_backwards, 3, "%s", va->result->name);
        cr_assert_gt(va->bwd_cuda_us.median, 0);
    }
    const variant_analysis *n = va_of(&f, "naive");
    cr_assert_eq(n->ops_per_backward, 8);
    cr_assert_eq(n->kernels_per_backward, 7);
    cr_assert_eq(n->memset_per_backward, 1);
    cr_assert_eq(va_of(&f, "flash")->ops_per_backward, 3);
    fixture_free(&f);
}

/* naive's eighth operation: cuBLAS's 4-byte Memset beyond the seven predicted kernels, a real
 * operation that the prediction (of the autograd chain's kernels) does not count. */
Test(backward_findings, naive_extra_operation_is_a_library_memset)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    const char *names[] = {"naive", "naive_inplace"};
    for (int i = 0; i < 2; i++) {
        const variant_analysis *va = va_of(&f, names[i]);
        const finding *fd = must(va, "bwd_memset_outside_expectation");
        cr_assert_eq(findings_value(fd, "memsets"), 1);
        cr_assert_eq(findings_value(fd, "memset_bytes"), 4);
        cr_assert_eq(findings_value(fd, "ops"), 8);
        cr_assert_eq(findings_value(fd, "expected_ops"), 7);
        cr_assert_null(findings_find(va, "bwd_unexpected_op_count"));
    }
    /* cuDNN's Memset is in its prediction (4 operations): nothing to say */
    cr_assert_null(findings_find(va_of(&f, "cudnn"), "bwd_memset_outside_expectation"));
    fixture_free(&f);
}

Test(backward_findings, a_count_off_the_prediction_is_said)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    result_of(&f, "flash")->bwd.expected_ops = 2;
    findings_derive(&f.a);
    const finding *fd = must(va_of(&f, "flash"), "bwd_unexpected_op_count");
    cr_assert_eq(findings_value(fd, "ops"), 3);
    cr_assert_eq(findings_value(fd, "expected_ops"), 2);
    fixture_free(&f);
}

Test(backward_findings, math_runs_its_backward_gemms_in_fp32)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    const finding *fd = must(va_of(&f, "math"), "bwd_fp32_cuda_core_gemm");
    cr_assert_eq(findings_value(fd, "gemms"), 4);
    cr_assert_eq(findings_value(fd, "all_gemms"), 4);
    cr_assert(findings_value(fd, "share") > 0.5 && findings_value(fd, "share") < 1);
    cr_assert_eq(fd->n_records, 4);
    /* naive's GEMMs are cuBLAS's bf16 tensor-core ones */
    cr_assert_null(findings_find(va_of(&f, "naive"), "bwd_fp32_cuda_core_gemm"));
    fixture_free(&f);
}

Test(backward_findings, fused_backwards_accumulate_dq_in_fp32)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    const char *fused[] = {"efficient", "flash", "cudnn"};
    for (int i = 0; i < 3; i++) {
        const finding *fd = must(va_of(&f, fused[i]), "bwd_dq_accumulation");
        cr_assert_eq(findings_value(fd, "fp32_dq_bytes"), 8.0 * 16 * 1024 * 64 * 4);
        cr_assert(findings_value(fd, "share") > 0 && findings_value(fd, "share") < 0.2, "%s", fused[i]);
    }
    cr_assert_null(findings_find(va_of(&f, "naive"), "bwd_dq_accumulation"));
    fixture_free(&f);
}

/* The recompute where the forward kept less than P: efficient recomputes the log-sum-exp too
 * (its kernel's share of the backward), flash and cuDNN read it. */
Test(backward_findings, recompute_and_its_share)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    const finding *e = must(va_of(&f, "efficient"), "bwd_recompute");
    cr_assert_eq(findings_value(e, "kept_bytes"), 0);
    cr_assert_eq(findings_value(e, "p_bytes"), 8.0 * 16 * 1024 * 1024 * 2);
    cr_assert(findings_value(e, "share") > 0.1 && findings_value(e, "share") < 0.4);
    const finding *fl = must(va_of(&f, "flash"), "bwd_recompute");
    cr_assert_eq(findings_value(fl, "kept_bytes"), 8.0 * 16 * 1024 * 4);
    cr_assert(isnan(findings_value(fl, "share")), "flash recomputes no log-sum-exp");
    cr_assert(isfinite(findings_value(fl, "delta_us")));
    cr_assert_null(findings_find(va_of(&f, "naive"), "bwd_recompute"));
    cr_assert_null(findings_find(va_of(&f, "math"), "bwd_recompute"));
    fixture_free(&f);
}

Test(backward_findings, kept_bytes_against_the_inputs)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    const double qkv = 3.0 * 8 * 16 * 1024 * 64 * 2;
    const finding *n = must(va_of(&f, "naive"), "bwd_kept_bytes");
    cr_assert_eq(findings_value(n, "kept_bytes"), 128.0 * 1024 * 1024 * 2 + 1024 * 1024);
    cr_assert_eq(findings_value(n, "qkv_bytes"), qkv);
    cr_assert_float_eq(findings_value(n, "ratio"), (128.0 * 1024 * 1024 * 2 + 1024 * 1024) / qkv, 1e-12);
    cr_assert_eq(findings_value(must(va_of(&f, "flash"), "bwd_kept_bytes"), "kept_bytes"), 128.0 * 1024 * 4);
    cr_assert_eq(findings_value(must(va_of(&f, "efficient"), "bwd_kept_bytes"), "kept_bytes"), 0);
    fixture_free(&f);
}

/* The series' advice, checked either way: equal gradients (the fixture), and, with one error
 * changed, gradients that differ (a notice). */
Test(backward_findings, inplace_advice_both_outcomes)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    const finding *fd = must(va_of(&f, "naive_inplace"), "bwd_inplace_advice");
    cr_assert_eq(findings_value(fd, "same_gradients"), 1);
    cr_assert_str_eq(fd->other, "naive");
    cr_assert_eq(fd->severity, FINDING_INFO);
    cr_assert_null(findings_find(va_of(&f, "naive"), "bwd_inplace_advice"));
    result_of(&f, "naive_inplace")->bwd.rel_error_dq *= 2;
    findings_derive(&f.a);
    fd = must(va_of(&f, "naive_inplace"), "bwd_inplace_advice");
    cr_assert_eq(findings_value(fd, "same_gradients"), 0);
    cr_assert_eq(fd->severity, FINDING_NOTICE);
    fixture_free(&f);
}

/* A forward-only archive: no backwards, no backward finding. */
Test(backward_findings, none_without_backward)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    for (int i = 0; i < f.a.n; i++) {
        cr_assert_eq(f.a.v[i].n_backwards, 0);
        for (int k = 0; k < f.a.v[i].n_findings; k++)
            cr_assert_not(finding_kind_is_backward(f.a.v[i].meta[k].kind), "%s", f.a.v[i].meta[k].id);
    }
    fixture_free(&f);
}

/* The forward's ranking leaves the backward's findings out; the backward's holds only them. */
Test(backward_findings, ranked_by_phase)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    for (int i = 0; i < f.a.n; i++) {
        const variant_analysis *va = &f.a.v[i];
        int idx[MAX_FINDINGS], nf = findings_ranked(va, idx, MAX_FINDINGS);
        for (int j = 0; j < nf; j++)
            cr_assert_not(finding_kind_is_backward(va->meta[idx[j]].kind));
        int nb = findings_ranked_phase(va, idx, MAX_FINDINGS, 1);
        cr_assert_gt(nb, 0, "%s", va->result->name);
        for (int j = 0; j < nb; j++)
            cr_assert(finding_kind_is_backward(va->meta[idx[j]].kind));
        cr_assert_eq(nf + nb, va->n_findings);
    }
    fixture_free(&f);
}

/* bwd_roofline with the fixture's counters (counters.json: the backward's kernels as "bwd_kernel"
 * ranges): every variant's backward kernels are classed, as many as the timed backward launched,
 * each class counted as the stated rule gives it from the counters and the run's ceilings, and
 * the sentence starts from the longest kernel. Without counters: no such finding. */
Test(backward_findings, roofline_classes_every_backward_kernel)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    for (int i = 0; i < f.a.n; i++)
        cr_expect_null(findings_find(&f.a.v[i], "bwd_roofline"), "no counters loaded: no roofline finding");
    char err[256];
    cr_assert_eq(counters_read_json(&f.r.counters, FIXTURE_BWD "/counters.json", err, sizeof err), 0, "%s", err);
    findings_derive(&f.a);
    const ceilings *ce = &f.r.ceilings;
    cr_assert(ce->measured);
    for (int i = 0; i < f.a.n; i++) {
        const variant_analysis *va = &f.a.v[i];
        const finding *fd = must(va, "bwd_roofline");
        int n = 0, cls[3] = {0, 0, 0};
        double longest = 0;
        const char *longest_name = NULL;
        for (int k = 0; k < f.r.counters.n; k++) {
            const counter_range *r = &f.r.counters.r[k];
            if (strcmp(r->kind, "bwd_kernel") || strcmp(r->variant, va->result->name))
                continue;
            double s = counters_seconds(r);
            double fd_ = counters_dram_bytes(r) / s / (ce->copy_tbps * 1e12);
            double fm = counters_flops(r) / s /
                        ((counters_tensor_flops(r) > 0 ? ce->tensor_bf16_tflops : ce->fp32_fma_tflops) * 1e12);
            cls[fd_ >= 0.5 && fd_ > fm ? 1 : fm >= 0.5 && fm >= fd_ ? 2 : 0]++;
            n++;
            if (s > longest)
                longest = s, longest_name = r->name;
        }
        cr_expect_eq(n, va->kernels_per_backward, "%s: one counted range per kernel of the backward", va->result->name);
        cr_expect_eq(findings_value(fd, "kernels"), n);
        cr_expect_eq(findings_value(fd, "memory_bound"), cls[1], "%s", va->result->name);
        cr_expect_eq(findings_value(fd, "compute_bound"), cls[2], "%s", va->result->name);
        cr_expect_eq(findings_value(fd, "neither"), cls[0], "%s", va->result->name);
        char nm[64];
        snprintf(nm, sizeof nm, "%.20s", strncmp(longest_name, "void ", 5) ? longest_name : longest_name + 5);
        const char *text = va->findings[fd - va->meta];
        const char *first = strstr(text, "longest first: `");
        cr_expect(first && !strncmp(first + 16, nm, strlen(nm)), "%s: %s", nm, text);
    }
    counters_free(&f.r.counters);
    fixture_free(&f);
}
