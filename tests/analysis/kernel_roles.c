/* Roles from kernel names alone (report/analysis/kernel_roles.c): each library's and
 * backend's names as they are launched, with the rule that named them. No GPU. */
#include <criterion/criterion.h>

#include "kernel_roles.h"

static kernel_role role_of(gpu_op_kind kind, const char *name)
{
    gpu_op op = {.kind = kind, .name = (char *)name};
    return kernel_role_of(&op, NULL);
}

Test(kernel_roles, names_of_each_library)
{
    static const struct {
        const char *name;
        model_role role;
        const char *backend;
    } cases[] = {
        {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x128x128_4x1x1_kernel0_0",
         MROLE_ATTN_FUSED, "cuDNN SDPA"},
        {"cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_1", MROLE_ATTN_BACKWARD, "cuDNN SDPA"},
        {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
         "cutlass::bfloat16_t>, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
         MROLE_ATTN_FUSED, "PyTorch flash (FlashAttention 2)"},
        {"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<64, 64, 256, 4>>(Flash_fwd_params)",
         MROLE_ATTN_FUSED, "FlashAttention 2"},
        {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<...>>>(...)",
         MROLE_ATTN_FUSED, "FlashAttention 3"},
        {"kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at_0", MROLE_ATTN_FUSED,
         "FlashAttention 4 (CuTe DSL)"},
        {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<...>::Params)",
         MROLE_ATTN_FUSED, "PyTorch memory-efficient (CUTLASS fmha)"},
        {"fmha_cutlassB_bf16_aligned_128x64_k128_sm80", MROLE_ATTN_BACKWARD, "PyTorch memory-efficient (CUTLASS fmha)"},
        {"triton_tem_fused_flex_attention_0", MROLE_ATTN_FUSED, "FlexAttention (Triton)"},
        {"triton_per_fused__softmax_0", MROLE_SOFTMAX, "Triton"},
        {"triton_red_fused_add_mean_mul_pow_rsqrt_1", MROLE_REDUCTION, "Triton"},
        {"triton_poi_fused_add_mul_silu_2", MROLE_ELEMENTWISE, "Triton"},
        {"nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT", MROLE_GEMM, "cuBLASLt"},
        {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1", MROLE_GEMM,
         "cuBLAS/CUTLASS"},
        {"input_reduce_fusion_3", MROLE_REDUCTION, "XLA"},
        {"loop_multiply_fusion_1", MROLE_ELEMENTWISE, "XLA"},
        {"gemm_fusion_dot_2", MROLE_GEMM, "XLA"},
        {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", MROLE_COMM, "NCCL"},
        {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, Epilogue>(...)",
         MROLE_SOFTMAX, NULL},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>(...)",
         MROLE_ELEMENTWISE, NULL},
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, MeanOps<float, float>>>(...)",
         MROLE_REDUCTION, NULL},
        {"void scale_rows(float*, float, int)", MROLE_OTHER, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kernel_role k = role_of(GPU_KERNEL, cases[i].name);
        cr_expect_eq(k.role, cases[i].role, "%s: %s (rule %s)", cases[i].name, model_role_name(k.role), k.rule);
        if (cases[i].backend)
            cr_expect(k.backend && !strcmp(k.backend, cases[i].backend), "%s: %s", cases[i].name,
                      k.backend ? k.backend : "(none)");
        cr_expect_not_null(k.rule);
    }
    cr_expect_eq(role_of(GPU_MEMCPY, "Memcpy HtoD (Host -> Device)").role, MROLE_COPY);
    cr_expect_eq(role_of(GPU_MEMSET, "Memset (Device)").role, MROLE_MEMSET);
    cr_expect_str_eq(role_of(GPU_KERNEL, "my_kernel").rule, "no rule matched the name");
}
