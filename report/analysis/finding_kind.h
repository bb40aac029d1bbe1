/* The kinds of finding: one name per finding id, the index of its row in the finding
 * table (finding_table.h). Within a source the order is the order a variant's section
 * lists them (the derive order); the rank order is finding_table.h's rule. */
#ifndef ATTNPROF_FINDING_KIND_H
#define ATTNPROF_FINDING_KIND_H

typedef enum finding_kind {
    /* the series (findings.c) */
    FK_VARIANT_UNAVAILABLE = 0,
    FK_VARIANT_SKIPPED,
    FK_NO_FORWARD,
    FK_MEMSET_OUTSIDE_EXPECTATION,
    FK_UNEXPECTED_OP_COUNT,
    FK_HIDDEN_MEMCPY,
    FK_OPS_VS_PREVIOUS,
    FK_FP32_CUDA_CORE_GEMM,
    FK_MASK_REBUILD,
    FK_SAFE_SOFTMAX,
    FK_FUSED_KERNEL,
    FK_DECODE_SPLIT,
    FK_KV_EXPANSION,
    FK_DECODE_BANDWIDTH,
    FK_KINETO_ZERO_OCCUPANCY,
    FK_HEAD_DIM_PADDING,
    FK_LAUNCH_API,
    FK_HOST_BOUND,
    FK_PLAN_CPU_COST,
    FK_FULLY_MASKED_ROWS,
    FK_DROPPED_RECORDS,
    FK_THROTTLED_FORWARDS,
    FK_IMPLAUSIBLE_SAMPLES,
    /* a model trace (model_findings.c) */
    FK_ATTENTION_SHARE,
    FK_MATH_FALLBACK,
    FK_EAGER_SCORES,
    FK_KERNEL_ARCH,
    FK_FP32_CUDA_CORE_16BIT,
    FK_FP32_CUDA_CORE_INPUTS,
    FK_HOST_COPIES,
    FK_SDPA_INPUT_CONVERSION,
    FK_ATTENTION_INPUTS_FUSED,
    FK_GQA_EXPANSION,
    FK_CPU_BOUND_STEP,
    FK_HOST_WAITS,
    /* the backward of run --backward (backward_findings.c) */
    FK_BWD_MEMSET_OUTSIDE_EXPECTATION,
    FK_BWD_UNEXPECTED_OP_COUNT,
    FK_BWD_HIDDEN_MEMCPY,
    FK_BWD_FP32_CUDA_CORE_GEMM,
    FK_BWD_DQ_ACCUMULATION,
    FK_BWD_RECOMPUTE,
    FK_BWD_KEPT_BYTES,
    FK_BWD_INPLACE_ADVICE,
    FK_BWD_ROOFLINE,
    /* the counters against the prediction (predict.c) */
    FK_ROOF_SHARE_INCONSISTENT,
    FK_PREDICTION_MISSED,
    FK_FP32_PIPE_MATH,
    FK_MEMCPY_BANDWIDTH,
    /* a sweep (sweep_findings.c) */
    FK_SWEEP_CROSSOVER,
    FK_SWEEP_MEMORY_WALL,
    FK_SWEEP_BEST_TFLOPS,
    FK_SWEEP_GPU_DIFFERS,
    FK_SWEEP_GPU_AGREES,
    FK_SWEEP_SCALING,
    FK_SWEEP_OPS_CHANGE,
    FK_SWEEP_BEST_KV_BANDWIDTH,
    FK_COUNT
} finding_kind;

#endif
