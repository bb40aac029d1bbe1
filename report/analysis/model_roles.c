/* Roles, phases and eager attention's parts of a model trace's GPU operations
 * (model_roles.h). Rules, in the order they are tried for one op (its launching CPU op
 * chain first, because a kernel name alone does not say what a generic ATen kernel is for;
 * ops in the chain are matched whole, never as substrings of a fused kernel's name):
 * phase: backward when launched under autograd's engine (evaluate_function, a
 * *Backward0 node); optimizer when under an optimizer step, a fused Adam/AdamW or a
 * _foreach_ op. Role: communication (NCCL, c10d); attention when an attention op is in the
 * chain (an SDPA backend op, aten::_flash_attention_forward and its kin, FlexAttention's
 * Triton template) and, for an op replayed from a CUDA graph (no chain), when its kernel is
 * an attention kernel by name; SDPA's own conversion of its inputs (inside
 * aten::scaled_dot_product_attention, outside its backend op: the attn_mask made additive,
 * autocast's casts of q, k, v) is attention too. A kernel
 * Inductor launched (triton_<kind>_fused_<ops>_<n>, its own range around the launch) is
 * "Triton (Inductor)": a template (tem) that fused an attention op is the attention; any
 * other kernel whose fused ops include an attention op only computes that op's inputs
 * (attention_inputs: RoPE, the K/V expand, the mask build); the rest by its fused ops
 * (norm, softmax, a reduction, pointwise). Then memcpy → copy, copy (innermost op
 * copy_/_to_copy/cat, copy kernels: autocast's casts inside a conv2d or linear too),
 * convolution (its memsets too), memset (one launched in aten::mm/addmm/bmm/baddbmm is the
 * GEMM's), GEMM (analysis.c's classify_op), normalization, softmax, reduction, elementwise,
 * other. Eager attention is found from the ops around a softmax (not log_softmax): the
 * nearest GEMM launched by aten::matmul/bmm/baddbmm before it (at most EAGER_WINDOW ops
 * away) is QKᵀ, the nearest after it is PV; mul/div between QKᵀ and softmax are the scale,
 * add, masked_fill, where and sub the mask, dropout after the softmax the dropout. K/V
 * heads repeated before SDPA (the import recorded the 5-D expand's shapes): the copies
 * launched by aten::reshape/aten::repeat_interleave/aten::expand right before an
 * attention op's first operation are the GQA expansion. */
#include "model_roles.h"
#include "alloc.h"

#include "escape.h"
#include "findings.h"
#include "median.h"
#include "model_inputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EAGER_WINDOW = 12 };

static const char *const MROLE_NAMES[MROLE_COUNT] = {
    [MROLE_ATTN_FUSED] = "attention", [MROLE_ATTN_QK] = "attention_qk_gemm", [MROLE_ATTN_SCALE] = "attention_scale",
    [MROLE_ATTN_MASK] = "attention_mask", [MROLE_ATTN_SOFTMAX] = "attention_softmax",
    [MROLE_ATTN_DROPOUT] = "attention_dropout", [MROLE_ATTN_PV] = "attention_pv_gemm",
    [MROLE_ATTN_CONVERT] = "attention_input_conversion", [MROLE_ATTN_BACKWARD] = "attention_backward",
    [MROLE_ATTN_INPUTS] = "attention_inputs", [MROLE_KV_EXPAND] = "gqa_expansion", [MROLE_GEMM] = "gemm", [MROLE_CONV] = "convolution",
    [MROLE_NORM] = "normalization", [MROLE_SOFTMAX] = "softmax", [MROLE_ELEMENTWISE] = "elementwise",
    [MROLE_REDUCTION] = "reduction", [MROLE_OPTIMIZER] = "optimizer", [MROLE_COPY] = "copy", [MROLE_MEMSET] = "memset",
    [MROLE_COMM] = "communication", [MROLE_OTHER] = "other",
};

const char *model_role_name(model_role r) { return r >= 0 && r < MROLE_COUNT ? MROLE_NAMES[r] : "other"; }
const char *model_phase_name(model_phase p)
{
    return p == MPHASE_BACKWARD ? "backward" : p == MPHASE_OPTIMIZER ? "optimizer" : "forward";
}
int model_role_is_attention(model_role r) { return r <= MROLE_ATTN_BACKWARD; }

static int has(const char *s, const char *needle) { return s && strcasestr(s, needle) != NULL; }

/* The attention ops of PyTorch: the public SDPA op is not among them (its backend op is
 * what ran; what SDPA launches outside it is its mask conversion). */
static const struct { const char *op, *backend; } ATTENTION_OPS[] = {
    {"aten::_scaled_dot_product_cudnn_attention", "cuDNN"},
    {"aten::_scaled_dot_product_cudnn_attention_backward", "cuDNN"},
    {"aten::_cudnn_attention_forward", "cuDNN"},
    {"aten::_cudnn_attention_backward", "cuDNN"},
    {"aten::_scaled_dot_product_flash_attention", "flash"},
    {"aten::_scaled_dot_product_flash_attention_backward", "flash"},
    {"aten::_flash_attention_forward", "flash"},
    {"aten::_flash_attention_backward", "flash"},
    {"aten::_scaled_dot_product_efficient_attention", "memory-efficient"},
    {"aten::_scaled_dot_product_efficient_attention_backward", "memory-efficient"},
    {"aten::_efficient_attention_forward", "memory-efficient"},
    {"aten::_efficient_attention_backward", "memory-efficient"},
    {"aten::_scaled_dot_product_fused_attention_overrideable", "overrideable (out-of-tree backend)"},
    {"aten::_scaled_dot_product_attention_math", "math"},
    {"aten::_native_multi_head_attention", "nn.MultiheadAttention fast path"},
    {"aten::_transformer_encoder_layer_fwd", "nn.TransformerEncoderLayer fast path"},
};

int model_inductor_kernel(const gpu_op *op, char kind[8], const char **ops, size_t *ops_len)
{
    const char *n = op->kind == GPU_KERNEL ? op->name : NULL;
    if (!n || strncmp(n, "triton_", 7))
        return 0;
    const char *k = n + 7, *u = strchr(k, '_');
    if (!u || u - k > 7 || strncmp(u, "_fused_", 7))
        return 0;
    snprintf(kind, 8, "%.*s", (int)(u - k), k);
    const char *o = u + 7, *end = o + strlen(o);
    while (end > o && end[-1] >= '0' && end[-1] <= '9') /* Inductor's number of the kernel */
        end--;
    if (end > o && end[-1] == '_')
        end--;
    *ops = o, *ops_len = (size_t)(end - o);
    return 1;
}

/* An Inductor kernel's fused ops name an attention op. */
static int inductor_fused_attention(const char *ops, size_t len)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), ops);
    return strstr(buf, "scaled_dot_product") || strstr(buf, "flex_attention") || strstr(buf, "flash_attention") ||
           strstr(buf, "efficient_attention");
}

/* An attention kernel by name alone (for an op replayed from a CUDA graph). */
static const char *attention_kernel_by_name(const char *n)
{
    if (has(n, "cudnn") && (has(n, "sdpa") || has(n, "fmha") || has(n, "attention")))
        return "cuDNN";
    if (has(n, "pytorch_flash") || has(n, "flash_fwd") || has(n, "flash_bwd"))
        return "flash";
    if (has(n, "fmha_cutlass") || has(n, "efficient_attention") || has(n, "mem_efficient"))
        return "memory-efficient";
    if (has(n, "fmha") || has(n, "_sdpa_") || has(n, "attnprof_"))
        return "fused kernel";
    return NULL;
}

const char *model_attn_backend(const gpu_op *op)
{
    for (size_t i = 0; i < sizeof ATTENTION_OPS / sizeof *ATTENTION_OPS; i++)
        if (op_launched_in(op, ATTENTION_OPS[i].op))
            return ATTENTION_OPS[i].backend;
    char kind[8];
    const char *ops;
    size_t len;
    if (model_inductor_kernel(op, kind, &ops, &len))
        return !strcmp(kind, "tem") && inductor_fused_attention(ops, len) ? "FlexAttention (Triton)" : NULL;
    if (op->kind == GPU_KERNEL && !op->cpu_op_path)
        return attention_kernel_by_name(op->name);
    return NULL;
}

/* SDPA's own work outside its backend op: the conversion of its inputs. */
static int sdpa_input_conversion(const gpu_op *op)
{
    return op_launched_in(op, "aten::scaled_dot_product_attention") && !model_attn_backend(op);
}

/* The role of a kernel Inductor fused (not an attention one: model_attn_backend said so). */
static model_role inductor_role(const char *kind, const char *ops, size_t len)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), ops);
    if (inductor_fused_attention(ops, len))
        return MROLE_ATTN_INPUTS;
    if (!strcmp(kind, "tem") && (strstr(buf, "mm") || strstr(buf, "addmm") || strstr(buf, "bmm")))
        return MROLE_GEMM;
    if (strstr(buf, "convolution"))
        return MROLE_CONV;
    if (strstr(buf, "native_layer_norm") || strstr(buf, "rsqrt") || strstr(buf, "native_group_norm") ||
        strstr(buf, "batch_norm"))
        return MROLE_NORM;
    if (strstr(buf, "softmax") || (strstr(buf, "amax") && strstr(buf, "exp") && strstr(buf, "sum")))
        return MROLE_SOFTMAX;
    if (!strcmp(kind, "red") || !strcmp(kind, "per"))
        return MROLE_REDUCTION;
    return MROLE_ELEMENTWISE;
}

int model_kernel_sm(const char *n)
{
    /* cuBLAS's CUTLASS kernels carry the architecture they target as cutlass_XY_ (cutlass_75_tensorop_…,
     * cutlass_80_simt_sgemm_…); "cutlass__5x" (CUTLASS 3.x/2.x families) carries none. */
    for (const char *p = n; p && (p = strstr(p, "cutlass_")) != NULL; p += 8)
        if (p[8] >= '5' && p[8] <= '9' && p[9] >= '0' && p[9] <= '9' && p[10] == '_')
            return (p[8] - '0') * 10 + (p[9] - '0');
    for (const char *p = n; p && (p = strstr(p, "sm")) != NULL; p += 2) {
        int before_ok = p == n || p[-1] == '_' || p[-1] == ' ';
        if (before_ok && p[2] >= '5' && p[2] <= '9' && p[3] >= '0' && p[3] <= '9' &&
            (p[4] == '_' || p[4] == 'a' || p[4] == '\0'))
            return (p[2] - '0') * 10 + (p[3] - '0');
        if (before_ok && p[2] == '1' && p[3] >= '0' && p[3] <= '2' && p[4] >= '0' && p[4] <= '9' &&
            (p[5] == '_' || p[5] == 'a' || p[5] == '\0'))
            return 100 + (p[3] - '0') * 10 + (p[4] - '0');
    }
    return 0;
}

static int launched_in_any(const gpu_op *op, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (op_launched_in(op, names[i]))
            return 1;
    return 0;
}

model_role model_role_of(const gpu_op *op, model_phase *phase)
{
    const char *path = op->cpu_op_path ? op->cpu_op_path : "";
    const char *n = op->name ? op->name : "";
    *phase = MPHASE_FORWARD;
    if (strstr(path, "autograd::engine::evaluate_function") || strstr(path, "Backward0") ||
        strstr(path, "Backward1"))
        *phase = MPHASE_BACKWARD;
    if (strstr(path, "Optimizer.") || strstr(path, "aten::_fused_adam") || strstr(path, "aten::_fused_sgd") ||
        strstr(path, "aten::_foreach_") || (op->kind == GPU_KERNEL && (has(n, "adam") && !has(n, "adamant")))) {
        *phase = MPHASE_OPTIMIZER;
        return MROLE_OPTIMIZER;
    }
    if (has(n, "nccl") || strstr(path, "c10d::") || strstr(path, "nccl:"))
        return MROLE_COMM;
    if (model_attn_backend(op))
        return *phase == MPHASE_BACKWARD || strstr(path, "attention_backward") ? MROLE_ATTN_BACKWARD : MROLE_ATTN_FUSED;
    if (sdpa_input_conversion(op))
        return MROLE_ATTN_CONVERT;
    char kind[8];
    const char *fused;
    size_t fused_len;
    if (model_inductor_kernel(op, kind, &fused, &fused_len))
        return inductor_role(kind, fused, fused_len);
    if (op->kind == GPU_MEMCPY)
        return MROLE_COPY;
    /* a copy first: autocast's cast of a weight inside aten::conv2d or aten::linear is a copy */
    static const char *const copy_ops[] = {"aten::copy_", "aten::_to_copy", "aten::clone", "aten::cat",
                                           "aten::contiguous"};
    if ((op->cpu_op && launched_in_any(op, copy_ops, sizeof copy_ops / sizeof *copy_ops) &&
         (!strcmp(op->cpu_op, "aten::copy_") || !strcmp(op->cpu_op, "aten::cat") ||
          !strcmp(op->cpu_op, "aten::_to_copy"))) ||
        has(n, "copy_kernel") || has(n, "CatArrayBatchedCopy"))
        return MROLE_COPY;
    static const char *const conv_ops[] = {"aten::convolution", "aten::_convolution", "aten::cudnn_convolution",
                                           "aten::convolution_backward", "aten::conv1d", "aten::conv2d",
                                           "aten::conv3d"};
    if (launched_in_any(op, conv_ops, sizeof conv_ops / sizeof *conv_ops) || has(n, "convolve") ||
        has(n, "fprop") || has(n, "dgrad") || has(n, "wgrad"))
        return MROLE_CONV;
    static const char *const gemm_ops[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_scaled_mm"};
    if (op->kind == GPU_MEMSET) /* a library's workspace memset belongs to the GEMM that asked for it */
        return op->cpu_op && launched_in_any(op, gemm_ops, sizeof gemm_ops / sizeof *gemm_ops) ? MROLE_GEMM
                                                                                                : MROLE_MEMSET;
    if (classify_op(op) == OPC_GEMM)
        return MROLE_GEMM;
    if (has(path, "layer_norm") || has(path, "rms_norm") || has(path, "group_norm") || has(path, "batch_norm") ||
        has(path, "instance_norm") || has(n, "layer_norm") || has(n, "rms_norm") || has(n, "batch_norm"))
        return MROLE_NORM;
    if (has(path, "softmax") || has(n, "softmax"))
        return MROLE_SOFTMAX;
    if (classify_op(op) == OPC_REDUCTION)
        return MROLE_REDUCTION;
    op_class c = classify_op(op);
    if (c == OPC_ELEMENTWISE || c == OPC_MASK || c == OPC_SOFTMAX)
        return MROLE_ELEMENTWISE;
    if (c == OPC_FUSED_ATTENTION)
        return MROLE_ATTN_FUSED;
    return MROLE_OTHER;
}

/* ---- one step --------------------------------------------------------------- */

static int attn_gemm(const gpu_op *op, model_role r)
{
    static const char *const mm[] = {"aten::matmul", "aten::bmm", "aten::baddbmm", "aten::einsum"};
    return r == MROLE_GEMM && !op_launched_in(op, "aten::linear") &&
           launched_in_any(op, mm, sizeof mm / sizeof *mm);
}

/* Launched in a softmax over the scores (its dtype casts too), not a log_softmax. */
static int eager_softmax(const gpu_op *op, model_role r)
{
    (void)r;
    return op_launched_in(op, "aten::softmax") || op_launched_in(op, "aten::_softmax") ||
           op_launched_in(op, "aten::_safe_softmax");
}

/* Roles and phases of a forward's ops, eager attention's parts included; returns the eager blocks found. */
int model_graph_replayed(const forward *f, int k)
{
    const api_call *a = f->launchers ? f->launchers[k] : NULL;
    return a && a->name && (!strcmp(a->name, "cudaGraphLaunch") || !strcmp(a->name, "cuGraphLaunch") ||
                            !strncmp(a->name, "cudaGraphLaunch_", 16));
}

/* The copies that repeat K/V heads: those launched by an expanding op right before the
 * first operation of each attention op (back to the first op that is none of them). */
static void mark_kv_expansion(const forward *f, model_role *role, const model_phase *phase)
{
    static const char *const expanding[] = {"aten::reshape", "aten::repeat_interleave", "aten::expand",
                                            "aten::repeat"};
    for (int k = 1; k < f->n_ops; k++) {
        if (role[k] != MROLE_ATTN_FUSED && role[k] != MROLE_ATTN_CONVERT)
            continue;
        if (role[k - 1] == MROLE_ATTN_FUSED || role[k - 1] == MROLE_ATTN_CONVERT)
            continue; /* not the first op of this attention */
        for (int j = k - 1; j >= 0 && phase[j] == MPHASE_FORWARD; j--) {
            char a[64];
            int expands = 0;
            if (op_aten_name(f->ops[j], a, sizeof a))
                for (size_t e = 0; e < sizeof expanding / sizeof *expanding; e++)
                    expands |= !strcmp(a, expanding[e]);
            if (!expands || (role[j] != MROLE_COPY && role[j] != MROLE_ELEMENTWISE))
                break;
            role[j] = MROLE_KV_EXPAND;
        }
    }
}

int model_step_roles(const forward *f, model_role *role, model_phase *phase, int *out_of_place)
{
    return model_step_roles_kv(f, 0, role, phase, out_of_place);
}

int model_step_roles_kv(const forward *f, int kv_expand, model_role *role, model_phase *phase, int *out_of_place)
{
    for (int k = 0; k < f->n_ops; k++)
        role[k] = model_role_of(f->ops[k], &phase[k]);
    if (kv_expand)
        mark_kv_expansion(f, role, phase);
    int blocks = 0;
    *out_of_place = 0;
    for (int k = 0; k < f->n_ops; k++) {
        if (phase[k] != MPHASE_FORWARD || !eager_softmax(f->ops[k], role[k]))
            continue;
        int j = k - 1, m = k + 1;
        while (j >= 0 && k - j <= EAGER_WINDOW && !attn_gemm(f->ops[j], role[j]))
            j--;
        while (m < f->n_ops && eager_softmax(f->ops[m], role[m]))
            m++;
        int soft_end = m;
        while (m < f->n_ops && m - soft_end < EAGER_WINDOW && !attn_gemm(f->ops[m], role[m]))
            m++;
        if (j < 0 || k - j > EAGER_WINDOW || m >= f->n_ops || !attn_gemm(f->ops[m], role[m]))
            continue;
        role[j] = MROLE_ATTN_QK;
        role[m] = MROLE_ATTN_PV;
        int copied = 0;
        for (int x = j + 1; x < k; x++) {
            const gpu_op *o = f->ops[x];
            if (role[x] != MROLE_ELEMENTWISE && role[x] != MROLE_COPY)
                continue;
            if (op_launched_in(o, "aten::masked_fill") || op_launched_in(o, "aten::masked_fill_") ||
                op_launched_in(o, "aten::where") || op_launched_in(o, "aten::add") || op_launched_in(o, "aten::sub") ||
                op_launched_in(o, "aten::add_"))
                role[x] = MROLE_ATTN_MASK;
            else if (op_launched_in(o, "aten::mul") || op_launched_in(o, "aten::div") ||
                     op_launched_in(o, "aten::mul_") || op_launched_in(o, "aten::div_"))
                role[x] = MROLE_ATTN_SCALE;
            copied |= op_launched_in(o, "aten::masked_fill");
        }
        for (int x = k; x < soft_end; x++)
            role[x] = MROLE_ATTN_SOFTMAX;
        for (int x = soft_end; x < m; x++)
            if (has(f->ops[x]->cpu_op_path, "dropout"))
                role[x] = MROLE_ATTN_DROPOUT;
        *out_of_place += copied;
        blocks++;
        k = m;
    }
    return blocks;
}

