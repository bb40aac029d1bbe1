/* `math`: PyTorch's SDPA math backend (at::_scaled_dot_product_attention_math, with
 * _safe_softmax), op for op, each op its own kernel, so the trace shows what the
 * careful reference costs. For bf16 q/k/v with is_causal=True PyTorch runs:
 *
 *   q, k, v .to(float32)                          3 upcast kernels
 *   q * sqrt(scale)                               mul
 *   ones(S,S,bool).tril()                         ones, tril    (rebuilt every call)
 *   where(mask, 0, scalar_tensor(-inf))           fill of the 0-dim -inf, where
 *   kᵀ * sqrt(scale)                              mul
 *   matmul(q, kᵀ)                                 FP32 GEMM (TF32 off: PyTorch's default)
 *   attn.add_(mask)                               add
 *   _safe_softmax: softmax, isneginf, all(-1), scalar_tensor(0), where_out
 *   matmul(attn, v)                               FP32 GEMM
 *   .to(bf16) of the output, attn.to(bf16)        2 downcasts (the second is the
 *                                                 attention weights the backend returns
 *                                                 and SDPA's caller drops)
 *
 * 19 GPU operations per forward, every buffer allocated once in setup. With grouped-query heads
 * (enable_gqa) the upcast K and V are repeat_interleave'd to every query head before kᵀ·√scale:
 * two copy kernels more. Decode's fewer queries make every [S,S] of the mask [q_seq,S], the
 * tril's diagonal at S - q_seq (aligned to the end of the keys). */
#include <cublas_v2.h> /* before check.h: its cuBLAS part */

#include "check.h"
#include "attn_bwd.h"
#include "math_kernels.h"
#include "variant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A workspace of our own for cuBLAS (PyTorch also hands cuBLAS its own), allocated in
 * setup so that no allocation can happen inside a timed forward. */
#define MATH_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* One forward launches this many kernels: 17 of ours + 2 cuBLAS GEMMs (one kernel
 * each for these shapes, checked with CUPTI by tests/gpu/variant_check.c --ops). */
#define MATH_OPS_PER_FORWARD 19

typedef struct math_state {
    attn_shape shape;
    cublasHandle_t cublas;
    void *cublas_workspace;
    float *q32, *k32, *v32; /* upcast inputs */
    float *k_rep, *v_rep;   /* grouped-query: k32 and v32 repeat_interleave'd to every query head */
    float *qs, *ks;         /* q·sqrt(scale), k·sqrt(scale) */
    uint8_t *ones, *tril;   /* [S,S] bool */
    float *scalars;         /* [0]: the -inf of the mask conversion, [1]: the 0 of _safe_softmax */
    float *bias;            /* [S,S] additive 0/-inf mask */
    float *scores;          /* [B,H,S,S] q·kᵀ + bias */
    float *probs;           /* [B,H,S,S] softmax, fully masked rows zeroed */
    uint8_t *neginf;        /* [B,H,S,S] scores == -inf */
    uint8_t *row_all;       /* [B,H,S] every key masked */
    void *probs_bf16;       /* [B,H,S,S] attn.to(bf16) */
    float *out32;           /* [B,H,S,D] */
} math_state;

/* q and out: [B,H,q_seq,D]; k and v: [B,kv_heads,S,D]; expanded k and v: [B,H,S,D]; scores [B,H,q_seq,S]. */
static size_t qkv_elems(const attn_shape *s) { return (size_t)s->batch * s->heads * attn_q_seq(s) * s->dim; }
static size_t kv_in_elems(const attn_shape *s) { return (size_t)s->batch * attn_kv_heads(s) * s->seq * s->dim; }
static size_t kv_full_elems(const attn_shape *s) { return (size_t)s->batch * s->heads * s->seq * s->dim; }
static size_t score_elems(const attn_shape *s) { return (size_t)s->batch * s->heads * attn_q_seq(s) * s->seq; }

static int check_shape(const attn_shape *s, attn_error *why)
{
    if (s->batch <= 0 || s->heads <= 0 || s->seq <= 0 || s->dim <= 0)
        return attn_fail(why, 1, "every dimension must be positive");
    if ((long long)s->batch * s->heads > 0x7fffffffLL)
        return attn_fail(why, 1, "B*H = %lld exceeds cuBLAS's int batch count",
                         (long long)s->batch * s->heads);
    if ((long long)s->batch * s->heads * s->seq > 0x7fffffffLL)
        return attn_fail(why, 1, "B*H*S = %lld rows exceed one launch's grid",
                         (long long)s->batch * s->heads * s->seq);
    return 0;
}

static size_t device_bytes(const attn_shape *s)
{
    const size_t n = qkv_elems(s), kv = kv_in_elems(s), kf = kv_full_elems(s), m = score_elems(s);
    const size_t ss = (size_t)attn_q_seq(s) * s->seq, rows = (size_t)s->batch * s->heads * attn_q_seq(s);
    return MATH_CUBLAS_WORKSPACE + 3 * n * sizeof(float) /* q32 qs out32 */
           + 2 * kv * sizeof(float)                      /* k32 v32 */
           + kf * sizeof(float)                          /* ks */
           + (attn_shape_is_gqa(s) ? 2 * kf * sizeof(float) : 0) /* k_rep, v_rep */
           + 2 * ss                                      /* ones, tril */
           + 2 * sizeof(float)                           /* scalars */
           + ss * sizeof(float)                          /* bias */
           + 2 * m * sizeof(float)                       /* scores, probs */
           + m                                           /* neginf */
           + rows                                        /* row_all */
           + m * 2;                                      /* probs_bf16 */
}

static void teardown(void *state)
{
    math_state *st = state;
    if (!st)
        return;
    /* Teardown has no error channel; a failed free here cannot be acted on. */
    void *bufs[] = {st->cublas_workspace, st->q32, st->k32, st->v32, st->k_rep, st->v_rep, st->qs, st->ks, st->ones, st->tril,
                    st->scalars, st->bias, st->scores, st->probs, st->neginf, st->row_all, st->probs_bf16,
                    st->out32};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            (void)cudaFree(bufs[i]);
    if (st->cublas)
        (void)cublasDestroy(st->cublas);
    free(st);
}

static int setup_into(math_state *st, cudaStream_t stream, attn_error *err)
{
    const attn_shape *s = &st->shape;
    const size_t n = qkv_elems(s), kv = kv_in_elems(s), kf = kv_full_elems(s), m = score_elems(s);
    const size_t ss = (size_t)attn_q_seq(s) * s->seq, rows = (size_t)s->batch * s->heads * attn_q_seq(s);
    CUBLAS_TRY(cublasCreate(&st->cublas), err);
    CUBLAS_TRY(cublasSetStream(st->cublas, stream), err);
    /* TF32 stays off (PyTorch's default, torch.backends.cuda.matmul.allow_tf32 = False):
     * FP32 products on the CUDA cores. */
    CUBLAS_TRY(cublasSetMathMode(st->cublas, CUBLAS_DEFAULT_MATH), err);
    CUDA_TRY(cudaMalloc(&st->cublas_workspace, MATH_CUBLAS_WORKSPACE), err);
    CUBLAS_TRY(cublasSetWorkspace(st->cublas, st->cublas_workspace, MATH_CUBLAS_WORKSPACE), err);
    CUDA_TRY(cudaMalloc((void **)&st->q32, n * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->k32, kv * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->v32, kv * sizeof(float)), err);
    if (attn_shape_is_gqa(s)) {
        CUDA_TRY(cudaMalloc((void **)&st->k_rep, kf * sizeof(float)), err);
        CUDA_TRY(cudaMalloc((void **)&st->v_rep, kf * sizeof(float)), err);
    }
    CUDA_TRY(cudaMalloc((void **)&st->qs, n * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->ks, kf * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->out32, n * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->ones, ss), err);
    CUDA_TRY(cudaMalloc((void **)&st->tril, ss), err);
    CUDA_TRY(cudaMalloc((void **)&st->scalars, 2 * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->bias, ss * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->scores, m * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->probs, m * sizeof(float)), err);
    CUDA_TRY(cudaMalloc((void **)&st->neginf, m), err);
    CUDA_TRY(cudaMalloc((void **)&st->row_all, rows), err);
    CUDA_TRY(cudaMalloc(&st->probs_bf16, m * 2), err);
    return ATTN_OK;
}

static int setup(void **state, const attn_shape *shape, const attn_options *opt, cudaStream_t stream,
                 attn_error *err)
{
    (void)opt;
    *state = NULL;
    attn_error why;
    if (check_shape(shape, &why))
        return attn_fail(err, ATTN_FAILED, "math: shape not supported: %s", why.msg);
    math_state *st = calloc(1, sizeof *st);
    if (!st)
        return attn_fail(err, ATTN_FAILED, "math: out of host memory");
    st->shape = *shape;
    int rc = setup_into(st, stream, err);
    if (rc != ATTN_OK) {
        teardown(st);
        return rc;
    }
    *state = st;
    return ATTN_OK;
}

/* The pipeline after the mask's bool matrix exists: `cond` is either the rebuilt causal
 * tril (nonzero = keep) or the caller's mask (nonzero = masked out). */
static int pipeline(math_state *st, const void *q, const void *k, const void *v, void *out,
                    const uint8_t *user_mask, cudaStream_t stream, attn_error *err)
{
    const attn_shape *s = &st->shape;
    const int S = s->seq, SQ = attn_q_seq(s), D = s->dim, BH = s->batch * s->heads;
    const size_t n = qkv_elems(s), kv = kv_in_elems(s), m = score_elems(s), rows = (size_t)BH * SQ;
    /* PyTorch scales q and k by sqrt(scale) each before the product, for stability. */
    const float sqrt_scale = (float)sqrt(1.0 / sqrt((double)D));
    const long long q_stride = (long long)SQ * D, kv_stride = (long long)S * D, sc_stride = (long long)SQ * S;
    const float one = 1.f, zero = 0.f;

    CUBLAS_TRY(cublasSetStream(st->cublas, stream), err);
    CUDA_TRY(math_upcast_bf16_f32(q, st->q32, n, stream), err);
    CUDA_TRY(math_upcast_bf16_f32(k, st->k32, kv, stream), err);
    CUDA_TRY(math_upcast_bf16_f32(v, st->v32, kv, stream), err);
    CUDA_TRY(math_mul_scale_f32(st->q32, st->qs, n, sqrt_scale, stream), err);
    const uint8_t *cond;
    int cond_is_keep;
    if (user_mask) {
        cond = user_mask;
        cond_is_keep = 0;
    } else {
        CUDA_TRY(math_ones_rect_u8(st->ones, SQ, S, stream), err);
        CUDA_TRY(math_tril_rect_u8(st->ones, st->tril, SQ, S, stream), err);
        cond = st->tril;
        cond_is_keep = 1;
    }
    CUDA_TRY(math_mask_fill_neginf(&st->scalars[0], stream), err);
    CUDA_TRY(math_where_bias_rect(cond, cond_is_keep, &st->scalars[0], st->bias, SQ, S, stream), err);
    const float *k_full = st->k32, *v_full = st->v32;
    if (st->k_rep) {
        /* enable_gqa: key and value repeat_interleave'd to every query head (FP32, after the upcast). */
        CUDA_TRY(math_repeat_interleave_f32(st->k32, st->k_rep, s->batch, attn_kv_heads(s), attn_group(s),
                                            (size_t)S * D, stream),
                 err);
        CUDA_TRY(math_repeat_interleave_f32(st->v32, st->v_rep, s->batch, attn_kv_heads(s), attn_group(s),
                                            (size_t)S * D, stream),
                 err);
        k_full = st->k_rep;
        v_full = st->v_rep;
    }
    CUDA_TRY(math_mul_scale_f32(k_full, st->ks, kv_full_elems(s), sqrt_scale, stream), err);
    /* Row-major scores[SQ,S] = qs[SQ,D]·ks[S,D]ᵀ is, column-major, scoresᵀ = ks·qsᵀ. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(st->cublas, CUBLAS_OP_T, CUBLAS_OP_N, S, SQ, D, &one, st->ks, CUDA_R_32F,
                                          D, kv_stride, st->qs, CUDA_R_32F, D, q_stride, &zero, st->scores,
                                          CUDA_R_32F, S, sc_stride, BH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    CUDA_TRY(math_add_bias_rect(st->scores, st->bias, (size_t)BH, SQ, S, stream), err);
    CUDA_TRY(math_softmax_f32(st->scores, st->probs, rows, S, stream), err);
    CUDA_TRY(math_isneginf(st->scores, st->neginf, m, stream), err);
    CUDA_TRY(math_row_all(st->neginf, st->row_all, rows, S, stream), err);
    CUDA_TRY(math_where_zero_fill(&st->scalars[1], stream), err);
    CUDA_TRY(math_where_zero(st->row_all, &st->scalars[1], st->probs, rows, S, stream), err);
    /* Row-major out[SQ,D] = probs[SQ,S]·v[S,D] is, column-major, outᵀ = vᵀ·probsᵀ. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(st->cublas, CUBLAS_OP_N, CUBLAS_OP_N, D, SQ, S, &one, v_full, CUDA_R_32F,
                                          D, kv_stride, st->probs, CUDA_R_32F, S, sc_stride, &zero, st->out32,
                                          CUDA_R_32F, D, q_stride, BH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    CUDA_TRY(math_downcast_f32_bf16(st->out32, out, n, stream), err);
    CUDA_TRY(math_downcast_probs_f32_bf16(st->probs, st->probs_bf16, m, stream), err);
    return ATTN_OK;
}

static int forward(void *state, const void *q, const void *k, const void *v, void *out, cudaStream_t stream,
                   attn_error *err)
{
    return pipeline(state, q, k, v, out, NULL, stream, err);
}

static int forward_masked(void *state, const void *q, const void *k, const void *v, void *out,
                          const uint8_t *mask, cudaStream_t stream, attn_error *err)
{
    if (!mask)
        return attn_fail(err, ATTN_FAILED, "math: forward_masked needs a mask");
    return pipeline(state, q, k, v, out, mask, stream, err);
}

static void facts(void *state, attn_facts *f)
{
    math_state *st = state;
    const attn_shape *s = &st->shape;
    const size_t m = score_elems(s);
    int ver = 0;
    if (cublasGetVersion(st->cublas, &ver) == CUBLAS_STATUS_SUCCESS)
        attn_fact_add(f, "cublas_version", ver, "%d", ver);
    attn_fact_add(f, "gemm_precision", NAN, "FP32 inputs, FP32 compute, TF32 off (CUBLAS_COMPUTE_32F, default math)");
    attn_fact_add(f, "fp32_scores_bytes", (double)(m * sizeof(float)), "%.1f MiB per [B,H,S,S] fp32 buffer (scores, probs)",
                  m * sizeof(float) / 1048576.0);
    attn_fact_add(f, "scale", NAN, "sqrt(1/sqrt(D)) applied to q and to k (two FP32 mul kernels), not to the scores");
    attn_fact_add(f, "mask", NAN, "causal bias rebuilt every call: ones -> tril -> where(0, -inf) [S,S] fp32");
    attn_fact_add(f, "safe_softmax", NAN, "isneginf -> all(-1) -> where(0): fully masked rows give 0, not NaN");
    if (st->k_rep)
        attn_fact_add(f, "kv_expansion_bytes", 2.0 * kv_full_elems(s) * sizeof(float),
                      "enable_gqa: repeat_interleave of the FP32 K and V to all %d query heads, %.1f MiB written "
                      "each forward (two copy kernels)", s->heads, 2.0 * kv_full_elems(s) * sizeof(float) / 1048576.0);
    if (attn_shape_is_decode(s))
        attn_fact_add(f, "decode_mask", NAN, "[%d, %d] causal bias aligned to the end of the keys (tril with "
                      "diagonal %d; PyTorch's is_causal aligns it top-left)", attn_q_seq(s), s->seq,
                      s->seq - attn_q_seq(s));
}

/* The same classes for grouped-query and decode shapes: eq elements of q (and out), ekv of the
 * given k (and v), ef of the expanded ones, m of the scores; plus the two repeat_interleave
 * copies of a grouped-query shape. */
static void predict_gqa(const attn_shape *s, attn_prediction *p)
{
    const double eq = (double)qkv_elems(s), ekv = (double)kv_in_elems(s), ef = (double)kv_full_elems(s);
    const double m = (double)score_elems(s);
    memset(p, 0, sizeof *p);
    p->useful_flops = attn_gqa_useful_flops(s);
    const double gemm_flops = 4.0 * s->batch * s->heads * attn_q_seq(s) * s->seq * s->dim;
    /* One query row: cuBLAS runs the FP32 products as matrix-vector kernels (gemv2T_kernel_val
     * and gemvx::kernel on the H200, cuBLAS 13, 2026-12-04), so they are matched by "gemv" too. */
    prediction_add(p, "FP32 GEMMs (Q·Kᵀ, P·V)", "gemm|xmma|nvjet|gemv", 2, 8 * m + 4 * (2 * eq + 2 * ef), gemm_flops,
                   PIPE_FMA);
    prediction_add(p, "upcasts bf16 → FP32 (Q, K, V)", "math_upcast", 3, (2 + 4) * (eq + 2 * ekv), 0, PIPE_NONE);
    if (attn_shape_is_gqa(s))
        prediction_add(p, "repeat_interleave (K/V expansion copies)", "math_repeat_interleave", 2, 2 * 4 * (ekv + ef),
                       0, PIPE_NONE);
    prediction_add(p, "√scale on Q and K", "math_mul_scale", 2, (4 + 4) * (eq + ef), 0, PIPE_NONE);
    prediction_add(p, "bias add + softmax (FP32 scores)", "math_add_bias|math_softmax", 2, 2 * (4 + 4) * m, 0,
                   PIPE_NONE);
    prediction_add(p, "NaN guard (isneginf, row all)", "math_isneginf|math_row_all", 2, (4 + 1) * m + m, 0, PIPE_NONE);
    prediction_add(p, "downcasts FP32 → bf16 (O, probs)", "math_downcast", 2, (4 + 2) * eq + (4 + 2) * m, 0,
                   PIPE_NONE);
    for (int i = 0; i < p->n; i++) {
        p->executed_flops += p->cls[i].flops;
        p->min_dram_bytes += p->cls[i].dram_bytes;
    }
}

/* One forward's operations: 19, and with grouped-query heads the two repeat_interleave copies. */
static int expected_ops_for(const attn_shape *s, int *n_memcpy)
{
    *n_memcpy = 0;
    return MATH_OPS_PER_FORWARD + (attn_shape_is_gqa(s) ? 2 : 0);
}

/* FP32 all the way: Q, K, V upcast, FP32 score matrices (twice the bf16 bytes), cuBLAS
 * SGEMM on the CUDA cores (TF32 off: CUBLAS_DEFAULT_MATH), and one kernel per op around
 * them, each streaming its FP32 [B,H,S,S] operands from and to DRAM. Minimum bytes per
 * class with e = B·H·S·D and m = B·H·S² elements; the [S,S] mask kernels (ones, tril,
 * where_bias, the scalar fills) and the where_zero guard (it writes only all-masked rows)
 * are too small to claim. */
static void predict(const attn_shape *s, int cc_major, int cc_minor, attn_prediction *p)
{
    (void)cc_major;
    (void)cc_minor;
    const int gqa_or_decode = attn_shape_is_gqa(s) || attn_shape_is_decode(s);
    if (gqa_or_decode) {
        predict_gqa(s, p);
        return;
    }
    const double e = prediction_io_bytes(s) / 2, m = prediction_scores_bytes(s) / 2;
    memset(p, 0, sizeof *p);
    p->useful_flops = prediction_useful_flops(s);
    /* qs·ksᵀ: read 2×4e, write 4m; probs·v: read 4m + 4e, write 4e. */
    prediction_add(p, "FP32 GEMMs (Q·Kᵀ, P·V)", "gemm|xmma|nvjet", 2, 8 * m + 16 * e, 2 * p->useful_flops,
                   PIPE_FMA);
    prediction_add(p, "upcasts bf16 → FP32 (Q, K, V)", "math_upcast", 3, 3 * (2 + 4) * e, 0, PIPE_NONE);
    prediction_add(p, "√scale on Q and K", "math_mul_scale", 2, 2 * (4 + 4) * e, 0, PIPE_NONE);
    prediction_add(p, "bias add + softmax (FP32 scores)", "math_add_bias|math_softmax", 2, 2 * (4 + 4) * m, 0,
                   PIPE_NONE);
    prediction_add(p, "NaN guard (isneginf, row all)", "math_isneginf|math_row_all", 2, (4 + 1) * m + m, 0, PIPE_NONE);
    prediction_add(p, "downcasts FP32 → bf16 (O, probs)", "math_downcast", 2, (4 + 2) * e + (4 + 2) * m, 0, PIPE_NONE);
    for (int i = 0; i < p->n; i++) {
        p->executed_flops += p->cls[i].flops;
        p->min_dram_bytes += p->cls[i].dram_bytes;
    }
}

/* ---- the backward (run --backward) ----
 * What autograd runs for the math path's graph above, node by node from the output, all FP32:
 *   .to(bf16) of out           dO.to(float32)                        1 upcast
 *   matmul(attn, v)            dP = dO·vᵀ, dV = attnᵀ·dO             2 FP32 GEMMs
 *   _safe_softmax              _softmax_backward_data(dP, its output) 1 kernel
 *   attn.add_(mask)            identity                               none
 *   matmul(q·√s, kᵀ·√s)        dqs = dS·ks, dks = dSᵀ·qs             2 FP32 GEMMs
 *   q·√s, kᵀ·√s                ·√s each                               2 kernels
 *   q, k, v .to(float32)       .to(bf16) of dq, dk, dv                3 downcasts
 * 11 kernels. Kept from the forward: qs, ks, v and the probabilities in FP32. The workspace
 * holds the FP32 dQ, dK, dV; dO's FP32 copy goes in the output buffer, dP and dS in the scores
 * buffer, none of which the backward reads from the forward. */
#define MATH_BWD_OPS 11

static size_t bwd_workspace_bytes(const attn_shape *s) { return 3 * qkv_elems(s) * sizeof(float); }

static int bwd_check_shape(const attn_shape *s, attn_error *why)
{
    if (attn_shape_is_gqa(s) || attn_shape_is_decode(s))
        return attn_fail(why, 1, "the math backward takes multi-head shapes only (no --kv-heads, no --q-seq)");
    return 0;
}

static int backward(void *state, const void *q, const void *k, const void *v, const void *out, const void *dout,
                    void *dq, void *dk, void *dv, void *workspace, cudaStream_t stream, attn_error *err)
{
    (void)q;
    (void)k;
    (void)v;
    (void)out;
    math_state *st = state;
    const attn_shape *s = &st->shape;
    const int S = s->seq, D = s->dim, BH = s->batch * s->heads;
    const size_t n = qkv_elems(s);
    const long long hs = (long long)S * D, sc = (long long)S * S;
    const float one = 1.f, zero = 0.f, sqrt_scale = (float)sqrt(1.0 / sqrt((double)D));
    float *dq32 = workspace, *dk32 = dq32 + n, *dv32 = dk32 + n, *do32 = st->out32, *dp = st->scores;
    CUBLAS_TRY(cublasSetStream(st->cublas, stream), err);
    CUDA_TRY(math_upcast_bf16_f32(dout, do32, n, stream), err);
    CUBLAS_TRY(cublasGemmStridedBatchedEx(st->cublas, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, &one, st->v32, CUDA_R_32F,
                                          D, hs, do32, CUDA_R_32F, D, hs, &zero, dp, CUDA_R_32F, S, sc, BH,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    CUBLAS_TRY(cublasGemmStridedBatchedEx(st->cublas, CUBLAS_OP_N, CUBLAS_OP_T, D, S, S, &one, do32, CUDA_R_32F, D,
                                          hs, st->probs, CUDA_R_32F, S, sc, &zero, dv32, CUDA_R_32F, D, hs, BH,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    CUDA_TRY(launch_softmax_bwd_f32(st->probs, dp, dp, (size_t)BH * S, S, stream), err);
    CUBLAS_TRY(cublasGemmStridedBatchedEx(st->cublas, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, &one, st->ks, CUDA_R_32F, D,
                                          hs, dp, CUDA_R_32F, S, sc, &zero, dq32, CUDA_R_32F, D, hs, BH,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    CUBLAS_TRY(cublasGemmStridedBatchedEx(st->cublas, CUBLAS_OP_N, CUBLAS_OP_T, D, S, S, &one, st->qs, CUDA_R_32F, D,
                                          hs, dp, CUDA_R_32F, S, sc, &zero, dk32, CUDA_R_32F, D, hs, BH,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    CUDA_TRY(math_mul_scale_f32(dq32, dq32, n, sqrt_scale, stream), err);
    CUDA_TRY(math_mul_scale_f32(dk32, dk32, n, sqrt_scale, stream), err);
    CUDA_TRY(math_downcast_f32_bf16(dq32, dq, n, stream), err);
    CUDA_TRY(math_downcast_f32_bf16(dk32, dk, n, stream), err);
    CUDA_TRY(math_downcast_f32_bf16(dv32, dv, n, stream), err);
    return ATTN_OK;
}

/* The FP32 probabilities, qs, ks and v. */
static double bwd_kept_bytes(const attn_shape *s) { return 4.0 * score_elems(s) + 3.0 * 4 * qkv_elems(s); }

const attn_variant variant_math = {
    .name = "math",
    .title = "PyTorch math backend, op by op",
    .what_changed = "FP32 upcast, rebuilt causal bias, FP32 GEMMs, NaN-safe softmax: one kernel per op",
    .expected_ops = MATH_OPS_PER_FORWARD,
    .expected_memcpy = 0,
    .expected_ops_for = expected_ops_for,
    .check_shape = check_shape,
    .device_bytes = device_bytes,
    .setup = setup,
    .forward = forward,
    .facts = facts,
    .forward_masked = forward_masked,
    .teardown = teardown,
    .predict = predict,
    .backward = backward,
    .bwd_workspace_bytes = bwd_workspace_bytes,
    .bwd_check_shape = bwd_check_shape,
    .expected_bwd_ops = MATH_BWD_OPS,
    .bwd_kept_bytes = bwd_kept_bytes,
    .bwd_kept = "the FP32 S×S probabilities of every head, and FP32 copies of q·√scale, k·√scale and v",
};
