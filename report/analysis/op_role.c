/* Roles of a forward's GPU operations (op_role.h), in two passes.
 *
 * Pass 1 reads each record alone: its kind (a Memcpy or Memset record is a copy
 * or a memset whatever launched it), its kernel name (library kernels name their
 * functor: MulFunctor, FillFunctor, triu_tril, where_kernel, CUDAFunctor_add,
 * isneginf, LoadWithCast…; attnprof's name their step), and, in imported PyTorch
 * traces, the ATen op around its launch (aten::mul, aten::_to_copy, aten::bmm,
 * aten::_safe_softmax…). That gives a tentative kind of step: GEMM, softmax,
 * scale, mask, add, cast, guard, fused attention or other.
 *
 * Pass 2 places the steps by the two landmarks every unfused attention has, the
 * first softmax and the GEMMs around it:
 *   - a GEMM before the softmax computes Q·Kᵀ, one after it P·V;
 *   - mask steps before the QKᵀ GEMM build the mask; those after it (and an add,
 *     which puts a bias onto the scores) apply it;
 *   - a fill between the first mask-building step and the QKᵀ GEMM belongs to
 *     the mask build (the -inf and 0 a `where` selects from); other kernels there
 *     (a model's rotary embedding, say) stay other;
 *   - between the softmax and the PV GEMM, every kernel but a cast guards the
 *     softmax against fully-masked rows (PyTorch's _safe_softmax, ours alike);
 *   - a scale after the softmax is no attention scale (dropout's, say): other.
 * A forward with no softmax keeps its GEMMs unplaced (ROLE_GEMM) unless it has
 * exactly a first and a last one to call QKᵀ and PV. */
#include "op_role.h"
#include "alloc.h"

#include "analysis.h"

#include <stdlib.h>
#include <string.h>

static int has(const char *name, const char *needle) { return name && strcasestr(name, needle) != NULL; }

/* The innermost ATen op (not a mere fill/copy) is `aten_op`. */
static int aten_is(const gpu_op *op, const char *aten_op)
{
    char a[128];
    return op_aten_name(op, a, sizeof a) && !strcmp(a, aten_op);
}

/* A fill (a constant written into a tensor: PyTorch's FillFunctor, aten::fill_,
 * aten::full, aten::scalar_tensor): the -inf or 0 a `where` builds the mask from. */
static int is_fill(const gpu_op *op)
{
    return has(op->name, "fill") || op_launched_in(op, "aten::fill_") || op_launched_in(op, "aten::full") ||
           op_launched_in(op, "aten::scalar_tensor");
}

int op_expands_kv(const gpu_op *op)
{
    return op->kind == GPU_KERNEL && (has(op->name, "repeat_kv") || has(op->name, "repeat_interleave") ||
                                      op_launched_in(op, "aten::repeat_interleave"));
}

typedef enum step {
    STEP_OTHER = 0, STEP_GEMM, STEP_SOFTMAX, STEP_GUARD, STEP_SCALE, STEP_MASK, STEP_ADD, STEP_CAST, STEP_FUSED,
    STEP_COPY, STEP_MEMSET, STEP_KV_EXPAND
} step;

static step step_of(const gpu_op *op)
{
    if (op->kind == GPU_MEMCPY)
        return STEP_COPY;
    if (op->kind == GPU_MEMSET)
        return STEP_MEMSET;
    const char *n = op->name;
    op_class cls = classify_op(op);
    if (cls == OPC_FUSED_ATTENTION || op_launched_in(op, "aten::_flash_attention_forward") ||
        op_launched_in(op, "aten::_efficient_attention_forward") ||
        op_launched_in(op, "aten::_cudnn_attention_forward"))
        return STEP_FUSED;
    /* Grouped-query K/V written out to every query head: PyTorch's repeat_kv (expand + reshape: a copy
     * inside aten::repeat_interleave or the model's repeat_kv), math's enable_gqa repeat_interleave, ours
     * named after them. A copy, however fast, of bytes a native GQA kernel reads in place. */
    if (op_expands_kv(op))
        return STEP_KV_EXPAND;
    if (cls == OPC_GEMM || aten_is(op, "aten::bmm") || aten_is(op, "aten::mm") || aten_is(op, "aten::baddbmm") ||
        aten_is(op, "aten::addmm"))
        return STEP_GEMM;
    if (has(n, "softmax") && !has(n, "where") && !has(n, "isneginf"))
        return STEP_SOFTMAX;
    /* Conversions: "upcast", "downcast", PyTorch's LoadWithCast/StoreWithCast,
     * fetch_and_cast and bfloat16_copy_kernel, or any kernel inside
     * aten::_to_copy ("_cast", not "cast": a broadcast is no conversion). */
    if (has(n, "upcast") || has(n, "downcast") || has(n, "WithCast") || has(n, "_cast") || has(n, "bfloat16_copy") || has(n, "half_copy") || op_launched_in(op, "aten::_to_copy"))
        return STEP_CAST;
    /* Inside safe softmax, or named after its guard: -inf test, all-masked row,
     * rows zeroed (ours: isneginf, row_all, where_zero). */
    if (op_launched_in(op, "aten::_safe_softmax") || has(n, "isneginf") || has(n, "row_all") || has(n, "where_zero"))
        return STEP_GUARD;
    if (cls == OPC_MASK || has(n, "masked_fill") || op_launched_in(op, "aten::masked_fill") ||
        op_launched_in(op, "aten::masked_fill_"))
        return STEP_MASK;
    if (has(n, "scale") || has(n, "MulFunctor") || has(n, "DivFunctor") || aten_is(op, "aten::mul") ||
        aten_is(op, "aten::mul_") || aten_is(op, "aten::div") || aten_is(op, "aten::div_"))
        return STEP_SCALE;
    if (has(n, "add_bias") || has(n, "Functor_add") || has(n, "AddFunctor") || aten_is(op, "aten::add") ||
        aten_is(op, "aten::add_"))
        return STEP_ADD;
    return STEP_OTHER;
}

void op_roles_of_forward(const gpu_op *const *ops, int n, op_role *roles)
{
    step *steps = malloc(sizeof *steps * (size_t)(n > 0 ? n : 1));
    if (!steps)
        attn_oom();
    int softmax = -1, first_gemm = -1, last_gemm = -1, n_gemm = 0;
    for (int i = 0; i < n; i++) {
        step s = steps[i] = step_of(ops[i]);
        if (s == STEP_SOFTMAX && softmax < 0)
            softmax = i;
        if (s == STEP_GEMM) {
            if (first_gemm < 0)
                first_gemm = i;
            last_gemm = i;
            n_gemm++;
        }
    }
    /* The QKᵀ GEMM: the last GEMM before the softmax, or without a softmax the
     * first of two or more. The PV GEMM: the first GEMM after the softmax. */
    int qk = -1, pv = -1;
    for (int i = 0; i < n; i++)
        if (steps[i] == STEP_GEMM) {
            if (softmax >= 0 && i < softmax)
                qk = i;
            else if (softmax >= 0 && i > softmax && pv < 0)
                pv = i;
        }
    if (softmax < 0 && n_gemm >= 2)
        qk = first_gemm, pv = last_gemm;
    int first_mask = -1;
    for (int i = 0; i < n && (qk < 0 || i < qk); i++)
        if (steps[i] == STEP_MASK) {
            first_mask = i;
            break;
        }
    for (int i = 0; i < n; i++) {
        step s = steps[i];
        int before_softmax = softmax < 0 || i < softmax;
        int before_qk = qk < 0 ? softmax < 0 || i < softmax : i < qk;
        int in_guard_span = softmax >= 0 && i > softmax && (pv < 0 || i < pv);
        op_role r = ROLE_OTHER;
        switch (s) {
        case STEP_COPY: r = ROLE_COPY; break;
        case STEP_MEMSET: r = ROLE_MEMSET; break;
        case STEP_KV_EXPAND: r = ROLE_KV_EXPAND; break;
        case STEP_FUSED: r = ROLE_FUSED_ATTENTION; break;
        case STEP_CAST: r = ROLE_CAST; break;
        case STEP_SOFTMAX: r = i == softmax ? ROLE_SOFTMAX : ROLE_OTHER; break;
        case STEP_GEMM: r = i == qk ? ROLE_QK_GEMM : i == pv ? ROLE_PV_GEMM : ROLE_GEMM; break;
        case STEP_GUARD: r = ROLE_SOFTMAX_GUARD; break;
        case STEP_MASK:
            r = in_guard_span ? ROLE_SOFTMAX_GUARD : before_qk ? ROLE_MASK_BUILD : before_softmax ? ROLE_MASK_APPLY
                                                                                                 : ROLE_OTHER;
            break;
        case STEP_ADD:
            r = in_guard_span ? ROLE_SOFTMAX_GUARD : !before_qk && before_softmax ? ROLE_MASK_APPLY : ROLE_OTHER;
            break;
        case STEP_SCALE: r = in_guard_span ? ROLE_SOFTMAX_GUARD : before_softmax ? ROLE_SCALE : ROLE_OTHER; break;
        case STEP_OTHER:
            r = in_guard_span ? ROLE_SOFTMAX_GUARD
                : first_mask >= 0 && i > first_mask && before_qk && is_fill(ops[i]) ? ROLE_MASK_BUILD
                                                                                    : ROLE_OTHER;
            break;
        }
        roles[i] = r;
    }
    free(steps);
}

const char *op_role_name(op_role r)
{
    static const char *const names[ROLE_COUNT] = {
        [ROLE_QK_GEMM] = "QKᵀ GEMM",       [ROLE_SCALE] = "scale",
        [ROLE_MASK_BUILD] = "mask build",  [ROLE_MASK_APPLY] = "mask apply",
        [ROLE_SOFTMAX] = "softmax",        [ROLE_SOFTMAX_GUARD] = "softmax NaN guard",
        [ROLE_PV_GEMM] = "PV GEMM",        [ROLE_GEMM] = "GEMM",
        [ROLE_FUSED_ATTENTION] = "fused attention", [ROLE_CAST] = "cast",
        [ROLE_COPY] = "copy",              [ROLE_MEMSET] = "memset",
        [ROLE_KV_EXPAND] = "K/V expansion",
        [ROLE_OTHER] = "other",
    };
    return (unsigned)r < ROLE_COUNT ? names[r] : "?";
}
