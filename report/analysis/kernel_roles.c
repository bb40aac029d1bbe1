/* Roles of GPU operations from kernel names (kernel_roles.h). The rules are one table,
 * tried in order, the first match winning; a row matches when its name contains every
 * one of its (at most two) words, case-insensitively:
 *   memcpy → copy, memset → memset (by the record's kind, not a name);
 *   NCCL → communication;
 *   fused attention, by the implementation the name belongs to: cuDNN's generated SDPA
 *   kernels, FlashAttention 4 (CuTe DSL), 3 (Hopper), PyTorch's copy of FlashAttention 2
 *   (pytorch_flash::), FlashAttention 2, PyTorch's memory-efficient (CUTLASS fmha),
 *   FlexAttention, any other fmha, attnprof's own; a fused-attention name with bwd,
 *   bprop or backward in it (or fmha_cutlassB) is the backward;
 *   Triton (Inductor's names: triton_poi_ pointwise, triton_red_/triton_per_ reductions,
 *   triton_tem_ templates, the fused op's name after them);
 *   XLA fusions (loop/input fusions; a dot or gemm fusion is a GEMM);
 *   cuBLASLt's nvjet, cuBLAS/CUTLASS GEMMs (gemm, gemv, xmma, cutlass, splitK);
 *   convolutions (cuDNN's convolve, fprop, dgrad, wgrad);
 *   PyTorch's native kernels by name (norms, softmax, reductions, copies, elementwise);
 *   else other.
 * The report's "Recorded program" section (report/docs/record_section.c) shows them per
 * step for `attnprof record` archives. */
#include "kernel_roles.h"

#include "alloc.h"
#include "err.h"
#include "median.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct role_rule {
    const char *word, *and_word; /* both in the name (and_word may be NULL) */
    model_role role;
    const char *backend;
    const char *rule;
} role_rule;

static const role_rule RULES[] = {
    {"nccl", NULL, MROLE_COMM, "NCCL", "name contains nccl"},
    {"cudnn", "sdpa", MROLE_ATTN_FUSED, "cuDNN SDPA", "name contains cudnn and sdpa (cuDNN's generated SDPA kernels)"},
    {"flash_attncute", NULL, MROLE_ATTN_FUSED, "FlashAttention 4 (CuTe DSL)", "name contains flash_attncute"},
    {"FlashAttentionForwardSm", NULL, MROLE_ATTN_FUSED, "FlashAttention 4 (CuTe DSL)",
     "name contains FlashAttentionForwardSm"},
    {"FlashAttn", "Sm90", MROLE_ATTN_FUSED, "FlashAttention 3", "name contains FlashAttn and Sm90"},
    {"pytorch_flash::", NULL, MROLE_ATTN_FUSED, "PyTorch flash (FlashAttention 2)", "name contains pytorch_flash::"},
    {"flash_fwd", NULL, MROLE_ATTN_FUSED, "FlashAttention 2", "name contains flash_fwd"},
    {"flash_bwd", NULL, MROLE_ATTN_FUSED, "FlashAttention 2", "name contains flash_bwd"},
    {"fmha_cutlassB", NULL, MROLE_ATTN_BACKWARD, "PyTorch memory-efficient (CUTLASS fmha)",
     "name contains fmha_cutlassB (the backward)"},
    {"fmha_cutlass", NULL, MROLE_ATTN_FUSED, "PyTorch memory-efficient (CUTLASS fmha)", "name contains fmha_cutlass"},
    {"flex_attention", NULL, MROLE_ATTN_FUSED, "FlexAttention (Triton)", "name contains flex_attention"},
    {"fmha", NULL, MROLE_ATTN_FUSED, "fused attention (fmha)", "name contains fmha"},
    {"attnprof_", NULL, MROLE_ATTN_FUSED, "attnprof's own kernels", "name starts attnprof_"},
    {"triton", "softmax", MROLE_SOFTMAX, "Triton", "Triton kernel named after a softmax"},
    {"triton", "norm", MROLE_NORM, "Triton", "Triton kernel named after a norm"},
    {"triton_tem_", NULL, MROLE_GEMM, "Triton", "Inductor template kernel (triton_tem_)"},
    {"triton", "_mm", MROLE_GEMM, "Triton", "Triton kernel named after a matmul"},
    {"triton_red_", NULL, MROLE_REDUCTION, "Triton", "Inductor reduction (triton_red_)"},
    {"triton_per_", NULL, MROLE_REDUCTION, "Triton", "Inductor persistent reduction (triton_per_)"},
    {"triton_poi_", NULL, MROLE_ELEMENTWISE, "Triton", "Inductor pointwise kernel (triton_poi_)"},
    {"triton", NULL, MROLE_OTHER, "Triton", "name contains triton, no role in it"},
    {"nvjet", NULL, MROLE_GEMM, "cuBLASLt", "name contains nvjet (cuBLASLt's GEMMs)"},
    {"fusion", "gemm", MROLE_GEMM, "XLA", "XLA gemm fusion"},
    {"fusion", "dot", MROLE_GEMM, "XLA", "XLA dot fusion"},
    {"fusion", "reduce", MROLE_REDUCTION, "XLA", "XLA reduce fusion"},
    {"fusion", "softmax", MROLE_SOFTMAX, "XLA", "XLA fusion named after a softmax"},
    {"fusion", NULL, MROLE_ELEMENTWISE, "XLA", "XLA loop fusion (name contains fusion)"},
    {"splitKreduce", NULL, MROLE_GEMM, "cuBLAS", "cuBLAS split-K reduction"},
    {"gemm", NULL, MROLE_GEMM, "cuBLAS/CUTLASS", "name contains gemm"},
    {"gemv", NULL, MROLE_GEMM, "cuBLAS", "name contains gemv"},
    {"xmma", NULL, MROLE_GEMM, "cuBLAS", "name contains xmma"},
    {"cutlass", NULL, MROLE_GEMM, "CUTLASS", "name contains cutlass"},
    {"convolve", NULL, MROLE_CONV, "cuDNN", "name contains convolve"},
    {"fprop", NULL, MROLE_CONV, "cuDNN", "name contains fprop"},
    {"dgrad", NULL, MROLE_CONV, "cuDNN", "name contains dgrad"},
    {"wgrad", NULL, MROLE_CONV, "cuDNN", "name contains wgrad"},
    {"layer_norm", NULL, MROLE_NORM, NULL, "name contains layer_norm"},
    {"rms_norm", NULL, MROLE_NORM, NULL, "name contains rms_norm"},
    {"RowwiseMoments", NULL, MROLE_NORM, NULL, "name contains RowwiseMoments (a norm's statistics)"},
    {"batch_norm", NULL, MROLE_NORM, NULL, "name contains batch_norm"},
    {"softmax", NULL, MROLE_SOFTMAX, NULL, "name contains softmax"},
    {"adam", NULL, MROLE_OPTIMIZER, NULL, "name contains adam"},
    {"reduce_kernel", NULL, MROLE_REDUCTION, NULL, "name contains reduce_kernel"},
    {"CatArrayBatchedCopy", NULL, MROLE_COPY, NULL, "name contains CatArrayBatchedCopy"},
    {"copy_kernel", NULL, MROLE_COPY, NULL, "name contains copy_kernel"},
    {"elementwise", NULL, MROLE_ELEMENTWISE, NULL, "name contains elementwise"},
};

static int has(const char *s, const char *w) { return w && strcasestr(s, w) != NULL; }

kernel_role kernel_role_of(const gpu_op *op, const api_call *launcher)
{
    (void)launcher;
    if (op->kind == GPU_MEMCPY)
        return (kernel_role){MROLE_COPY, NULL, "a memcpy record"};
    if (op->kind == GPU_MEMSET)
        return (kernel_role){MROLE_MEMSET, NULL, "a memset record"};
    const char *n = op->name ? op->name : "";
    for (size_t i = 0; i < sizeof RULES / sizeof *RULES; i++) {
        const role_rule *r = &RULES[i];
        if (!has(n, r->word) || (r->and_word && !has(n, r->and_word)))
            continue;
        kernel_role k = {r->role, r->backend, r->rule};
        if (r->role == MROLE_ATTN_FUSED &&
            (has(n, "bwd") || has(n, "bprop") || has(n, "backward")))
            k.role = MROLE_ATTN_BACKWARD;
        return k;
    }
    return (kernel_role){MROLE_OTHER, NULL, "no rule matched the name"};
}

static void note_rule(kernel_roles_view *v, const char *rule, model_role role)
{
    for (int i = 0; i < v->n_rules; i++)
        if (v->rules[i] == rule)
            return;
    if (v->n_rules < KERNEL_ROLES_MAX_RULES) {
        v->rule_role[v->n_rules] = role;
        v->rules[v->n_rules++] = rule;
    }
}

/* The median step's attention kernel, backend, rules and launch APIs. */
static void median_step_facts(const forward *f, kernel_roles_view *v)
{
    double longest = -1;
    for (int k = 0; k < f->n_ops; k++) {
        const gpu_op *op = f->ops[k];
        kernel_role r = kernel_role_of(op, f->launchers[k]);
        note_rule(v, r.rule, r.role);
        if (f->launchers[k])
            f->launchers[k]->kind == API_DRIVER ? v->driver_launches++ : v->runtime_launches++;
        double us = (double)(op->end_ns - op->start_ns);
        if (model_role_is_attention(r.role) && us > longest) {
            longest = us;
            v->attn_kernel = op;
            v->backend = r.backend;
        }
    }
}

int kernel_roles_build(const variant_analysis *va, kernel_roles_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    int n = va->n_forwards;
    if (n <= 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "variant %s has no step", va->result->name);
    double *ops = attn_calloc((size_t)n * MROLE_COUNT, sizeof *ops);
    double *us = attn_calloc((size_t)n * MROLE_COUNT, sizeof *us);
    double *step = attn_malloc((size_t)n * sizeof *step), *attn = attn_malloc((size_t)n * sizeof *attn);
    double *col = attn_malloc((size_t)n * sizeof *col);
    for (int s = 0; s < n; s++) {
        const forward *f = &va->forwards[s];
        step[s] = f->cuda_us;
        attn[s] = 0;
        for (int k = 0; k < f->n_ops; k++) {
            model_role r = kernel_role_of(f->ops[k], f->launchers[k]).role;
            double d = (double)(f->ops[k]->end_ns - f->ops[k]->start_ns) / 1000.0;
            ops[s * MROLE_COUNT + r] += 1;
            us[s * MROLE_COUNT + r] += d;
            if (model_role_is_attention(r))
                attn[s] += d;
        }
    }
    v->n_steps = n;
    v->step_us = median_of(step, n);
    for (int r = 0; r < MROLE_COUNT; r++) {
        for (int s = 0; s < n; s++)
            col[s] = ops[s * MROLE_COUNT + r];
        v->ops[r] = median_of(col, n);
        for (int s = 0; s < n; s++)
            col[s] = us[s * MROLE_COUNT + r];
        v->us[r] = median_of(col, n);
        for (int s = 0; s < n; s++)
            col[s] = step[s] > 0 ? us[s * MROLE_COUNT + r] / step[s] : 0;
        v->share[r] = median_of(col, n);
    }
    v->attn_us = median_of(attn, n);
    for (int s = 0; s < n; s++)
        col[s] = step[s] > 0 ? attn[s] / step[s] : 0;
    v->attn_share = median_of(col, n);
    median_step_facts(&va->forwards[analysis_median_forward(va)], v);
    free(ops);
    free(us);
    free(step);
    free(attn);
    free(col);
    return EXIT_OK;
}
