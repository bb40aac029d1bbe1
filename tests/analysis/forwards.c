/* Grouping records into forwards, statistics, classification, findings — on a
 * run recorded on the H200 (tests/fixtures/h200-4var: 2×4×256×64, 4 forwards). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "findings.h"
#include "fixture.h"

Test(stats, median_min_max_mean)
{
    double odd[] = {5, 1, 3};
    stats s = stats_of(odd, 3);
    cr_assert_eq(s.n, 3);
    cr_assert_float_eq(s.median, 3, 1e-12);
    cr_assert_float_eq(s.min, 1, 1e-12);
    cr_assert_float_eq(s.max, 5, 1e-12);
    cr_assert_float_eq(s.mean, 3, 1e-12);
    double even[] = {4, 1, 3, 2};
    cr_assert_float_eq(stats_of(even, 4).median, 2.5, 1e-12);
    cr_assert(isnan(stats_of(even, 0).median));
    cr_assert_float_eq(even[0], 4, 0, "input untouched");
}

Test(classify, kernel_names_to_classes)
{
    struct {
        const char *name;
        op_class want;
    } cases[] = {
        {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", OPC_GEMM},
        {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_ffma", OPC_GEMM},
        {"void attnprof_softmax_rows_bf16<4>(__nv_bfloat16 const*, __nv_bfloat16*, unsigned long, int)", OPC_SOFTMAX},
        {"attnprof_masked_fill_bf16", OPC_MASK},
        {"attnprof_math_tril", OPC_MASK},
        {"attnprof_scale_bf16", OPC_ELEMENTWISE},
        {"attnprof_math_row_all", OPC_REDUCTION},
        {"attnprof_flash_fwd_bf16_d64_128x64_w4", OPC_FUSED_ATTENTION},
        {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7", OPC_FUSED_ATTENTION},
        {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80", OPC_FUSED_ATTENTION},
        {"some_kernel", OPC_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpu_op o = {.kind = GPU_KERNEL, .name = (char *)cases[i].name};
        cr_assert_eq(classify_op(&o), cases[i].want, "%s → %s", cases[i].name, op_class_name(classify_op(&o)));
    }
    gpu_op m = {.kind = GPU_MEMCPY, .name = "Memcpy DtoD (Device -> Device)"};
    cr_assert_eq(classify_op(&m), OPC_MEMCPY);
    cr_assert(gemm_on_cuda_cores("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_ffma"));
    cr_assert(gemm_on_cuda_cores("ampere_sgemm_128x64_nn"));
    cr_assert(!gemm_on_cuda_cores("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"));
}

Test(short_names, strip_return_type_params_namespaces)
{
    char out[128];
    short_kernel_name("void attnprof_softmax_rows_bf16<4>(__nv_bfloat16 const*, int)", out, sizeof out);
    cr_assert_str_eq(out, "attnprof_softmax_rows_bf16<4>");
    short_kernel_name("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
                      "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true>"
                      "(pytorch_flash::Flash_fwd_params)",
                      out, sizeof out);
    cr_assert_str_eq(out, "flash_fwd_kernel<…>");
    short_kernel_name("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, "
                      "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
                      out, sizeof out);
    cr_assert_str_eq(out, "cunn_SoftMaxForward<…>");
    short_kernel_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", out, sizeof out);
    cr_assert_str_eq(out, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT");
}

Test(analysis, groups_the_h200_fixture_into_forwards)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    cr_assert_eq(f.a.n, 4);
    const char *names[] = {"naive", "naive_inplace", "math", "cudnn"};
    int ops[] = {6, 5, 19, 2};
    for (int i = 0; i < 4; i++) {
        const variant_analysis *va = &f.a.v[i];
        cr_assert_str_eq(va->result->name, names[i]);
        cr_assert_eq(va->n_forwards, 4, "%s: 4 recorded forwards", names[i]);
        cr_assert_eq(va->ops_per_forward, ops[i], "%s: %d ops", names[i], va->ops_per_forward);
        for (int k = 0; k < va->n_forwards; k++) {
            const forward *fw = &va->forwards[k];
            cr_assert_eq(fw->n_ops, ops[i]);
            double sum = 0;
            for (int j = 0; j < fw->n_ops; j++) {
                sum += (fw->ops[j]->end_ns - fw->ops[j]->start_ns) / 1000.0;
                cr_assert_not_null(fw->launchers[j], "every op has its launching API call");
                if (j)
                    cr_assert_geq(fw->ops[j]->start_ns, fw->ops[j - 1]->start_ns);
            }
            cr_assert_float_eq(fw->cuda_us, sum, 1e-9);
            cr_assert_float_eq(fw->cpu_us, (fw->range->end_ns - fw->range->start_ns) / 1000.0, 1e-9);
            cr_assert_leq(fw->cuda_us, fw->gpu_span_us + 1e-9, "sum of a serial stream ≤ its span");
        }
        cr_assert_leq(va->cuda_us.min, va->cuda_us.median);
        cr_assert_leq(va->cuda_us.median, va->cuda_us.max);
    }
    cr_assert_eq(f.a.v[0].memcpy_per_forward, 1);
    cr_assert_eq(f.a.v[1].memcpy_per_forward, 0);
    cr_assert_eq(f.a.v[3].memset_per_forward, 1);
    fixture_free(&f);
}

Test(findings, derived_from_the_records)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    const variant_analysis *naive = analysis_find(&f.a, "naive"), *inplace = analysis_find(&f.a, "naive_inplace");
    const variant_analysis *math = analysis_find(&f.a, "math"), *cudnn = analysis_find(&f.a, "cudnn");
    /* 2×4×256×256 bf16 scores = 1 MiB */
    cr_assert_geq(finding_with(naive, "a 1 MiB Memcpy DtoD inside every forward"), 0);
    cr_assert_geq(finding_with(inplace, "no Memcpy; 1 fewer operation than naive"), 0);
    cr_assert_lt(finding_with(inplace, "Memcpy DtoD inside"), 0);
    cr_assert_geq(finding_with(math, "GEMMs in FP32 on CUDA cores"), 0);
    cr_assert_geq(finding_with(math, "the tensor-core GEMMs of naive_inplace"), 0);
    cr_assert_geq(finding_with(math, "the causal mask is rebuilt in every forward: 4 kernels"), 0);
    cr_assert_geq(finding_with(math, "`attnprof_math_mask_fill_neginf`"), 0, "the -inf fill is part of the rebuild");
    cr_assert_geq(finding_with(math, "safe softmax: 4 extra kernels"), 0);
    cr_assert_geq(finding_with(math, "`attnprof_math_where_zero`)"), 0, "names are kept apart by whole name");
    cr_assert_geq(finding_with(math, "fully-masked rows → 0:"), 0);
    cr_assert_geq(finding_with(inplace, "fully-masked rows → NaN:"), 0);
    cr_assert_geq(finding_with(cudnn, "the kernel launched with `cuLaunchKernelEx` (driver API)"), 0);
    cr_assert_geq(finding_with(cudnn, "one-off cost"), 0);
    cr_assert_geq(finding_with(cudnn, "host time per forward"), 0);
    cr_assert_geq(finding_with(cudnn, "one fused kernel `cudnn_generated_fort_native_sdpa_sm90"), 0);
    /* math's two FP32 GEMMs come from cuBLAS through cudaLaunchKernelExC: its own API */
    cr_assert_geq(finding_with(math, "17 with `cudaLaunchKernel`, 2 with `cudaLaunchKernelExC`"), 0);
    cr_assert_lt(finding_with(math, "every kernel launched with `cudaLaunchKernel`"), 0);
    fixture_free(&f);
}

Test(findings, expectation_mismatch_is_reported)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    /* Pretend naive_inplace expected 4 ops: the report must say what it saw. */
    f.r.variants[1].expected_ops = 4;
    findings_derive(&f.a);
    cr_assert_geq(finding_with(&f.a.v[1], "observed 5 GPU operations per forward where 4 were expected"), 0);
    fixture_free(&f);
}

/* All six variants, recorded on the H200 (tests/fixtures/h200-6var: 2×4×256×64). */
Test(findings, fused_kernels_of_the_six_variant_fixture)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    cr_assert_eq(f.a.n, 6);
    const char *fused[] = {"efficient", "flash"};
    const char *kernel[] = {"attnprof_efficient_fwd_bf16_d64_64x64_w4", "attnprof_flash_fwd_bf16_d64_128x64_w4"};
    for (int i = 0; i < 2; i++) {
        const variant_analysis *va = analysis_find(&f.a, fused[i]);
        cr_assert_not_null(va);
        cr_assert_eq(va->ops_per_forward, 1, "%s: one fused kernel", fused[i]);
        cr_assert_eq(va->ops_per_forward, va->result->expected_ops);
        const gpu_op *k = va->forwards[0].ops[0];
        cr_assert_str_eq(k->name, kernel[i], "the kernel name decodes itself");
        cr_assert_eq(classify_op(k), OPC_FUSED_ATTENTION);
        cr_assert_gt(k->registers, 0);
        cr_assert_gt(k->dynamic_smem, 0, "shared memory per block from the CUPTI record");
        cr_assert_geq(finding_with(va, "one fused kernel `"), 0);
        cr_assert_geq(finding_with(va, "the kernel launched with `cudaLaunchKernel`;"), 0);
        cr_assert_lt(va->result->rel_error, 1e-2);
    }
    /* CUPTI-off/on probes and host times are recorded for every variant */
    for (int i = 0; i < f.a.n; i++) {
        const variant_result *r = f.a.v[i].result;
        cr_assert(r->event_us_no_cupti > 0 && r->event_us_cupti > 0, "%s", r->name);
        cr_assert(r->host_us_no_cupti > 0 && r->host_us_cupti > 0, "%s", r->name);
        cr_assert_eq(r->status, VARIANT_OK);
    }
    fixture_free(&f);
}
