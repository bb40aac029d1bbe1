/* The role a GPU operation plays in the attention forward (QKᵀ GEMM, scale,
 * mask build, mask apply, softmax, softmax's NaN guard, PV GEMM, fused
 * attention, cast, copy, memset, K/V expansion), so that two archives' operations are compared
 * like with like: attnprof's kernels and PyTorch's do the same steps under
 * different names. A role is derived from the record alone (kind, kernel name,
 * the ATen op that launched it when the trace has one) and from its place in the
 * forward (a GEMM before the softmax is QKᵀ, one after it is PV), never from a
 * list of known kernels. */
#ifndef ATTNPROF_OP_ROLE_H
#define ATTNPROF_OP_ROLE_H

#include "trace.h"

typedef enum op_role {
    ROLE_QK_GEMM = 0,    /* S = Q·Kᵀ: a GEMM before the softmax */
    ROLE_SCALE,          /* × 1/√D (or √ of it on Q and K) before the softmax */
    ROLE_MASK_BUILD,     /* the causal mask built before the QKᵀ GEMM (ones, tril, where → bias) */
    ROLE_MASK_APPLY,     /* the mask applied to the scores (masked_fill, + bias) */
    ROLE_SOFTMAX,
    ROLE_SOFTMAX_GUARD,  /* safe softmax's NaN-row guard (isneginf, all, where) */
    ROLE_PV_GEMM,        /* O = P·V: a GEMM after the softmax */
    ROLE_GEMM,           /* another GEMM (no softmax to place it by) */
    ROLE_FUSED_ATTENTION,
    ROLE_CAST,           /* dtype conversion (bf16 ↔ fp32) */
    ROLE_COPY,           /* a Memcpy record */
    ROLE_MEMSET,         /* a Memset record */
    ROLE_KV_EXPAND,      /* grouped-query K/V copied out to every query head (repeat_kv, repeat_interleave) */
    ROLE_OTHER,
    ROLE_COUNT
} op_role;

/* The roles of the `n` operations of one forward, in the forward's order (by
 * start time, as analysis.h's forward holds them), into roles[0..n-1]. */
void op_roles_of_forward(const gpu_op *const *ops, int n, op_role *roles);

/* Whether an op copies grouped-query K/V out to every query head (ROLE_KV_EXPAND's rule: a kernel
 * named repeat_kv or repeat_interleave, or one launched in aten::repeat_interleave). */
int op_expands_kv(const gpu_op *op);

/* "QKᵀ GEMM", "mask build", …: a static string. */
const char *op_role_name(op_role r);

#endif
