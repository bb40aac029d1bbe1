/* The unfused attention of naive.c and naive_inplace.c (see unfused.h): cuBLAS batched GEMMs
 * for Q·Kᵀ and P·V around the scale, causal masked_fill and softmax kernels of elementwise.h,
 * each buffer allocated once in setup; `inplace` says whether the fill writes over the scores.
 * Grouped-query shapes first expand K and V to every query head as the series' eager code does
 * (repeat_kv: two copy kernels a forward); decode's fewer queries make the scores [q_seq, S]
 * and the causal mask is aligned to the end of the keys. */
#include "unfused.h"

#include <cublas_v2.h> /* before check.h: its cuBLAS part */

#include "check.h"
#include "attn_bwd.h"
#include "elementwise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct unfused {
    attn_shape shape;
    int inplace;
    cublasHandle_t cublas;
    uint8_t *causal_mask; /* [q_seq, S], built once before timing, as in the series */
    void *k_rep, *v_rep;  /* grouped-query: K and V expanded to every query head (repeat_kv) */
    void *scores;         /* Q·Kᵀ */
    void *scaled;         /* scores·scale (out-of-place, a new buffer as `s * scale` makes) */
    void *filled;         /* naive: the masked_fill copy; naive_inplace: unused */
    void *probs;          /* softmax output */
} unfused;

static size_t scores_bytes(const attn_shape *s)
{
    return (size_t)s->batch * s->heads * attn_q_seq(s) * s->seq * 2;
}

/* K or V expanded to every query head: [B, H, S, D] bf16 (0 for multi-head shapes). */
static size_t repeat_bytes(const attn_shape *s)
{
    return attn_shape_is_gqa(s) ? (size_t)s->batch * s->heads * s->seq * s->dim * 2 : 0;
}

int unfused_check_shape(const attn_shape *shape, attn_error *why)
{
    (void)shape;
    (void)why;
    return 0; /* cuBLAS and the row kernels take any positive size, grouped-query and decode too */
}

size_t unfused_device_bytes(const attn_shape *shape, int inplace)
{
    return (size_t)attn_q_seq(shape) * shape->seq + scores_bytes(shape) * (inplace ? 3 : 4) + 2 * repeat_bytes(shape);
}

int unfused_setup(void **state, const attn_shape *shape, int inplace, cudaStream_t stream, attn_error *err)
{
    unfused *u = calloc(1, sizeof *u);
    if (!u)
        return attn_fail(err, ATTN_FAILED, "out of host memory");
    *state = u;
    u->shape = *shape;
    u->inplace = inplace;
    size_t sb = scores_bytes(shape);
    CUBLAS_TRY(cublasCreate(&u->cublas), err);
    CUBLAS_TRY(cublasSetStream(u->cublas, stream), err);
    CUDA_TRY(cudaMalloc((void **)&u->causal_mask, (size_t)attn_q_seq(shape) * shape->seq), err);
    if (attn_shape_is_gqa(shape)) {
        CUDA_TRY(cudaMalloc(&u->k_rep, repeat_bytes(shape)), err);
        CUDA_TRY(cudaMalloc(&u->v_rep, repeat_bytes(shape)), err);
    }
    CUDA_TRY(cudaMalloc(&u->scores, sb), err);
    CUDA_TRY(cudaMalloc(&u->scaled, sb), err);
    if (!inplace)
        CUDA_TRY(cudaMalloc(&u->filled, sb), err);
    CUDA_TRY(cudaMalloc(&u->probs, sb), err);
    CUDA_TRY(launch_causal_mask_rect_u8(u->causal_mask, attn_q_seq(shape), shape->seq, stream), err);
    CUDA_TRY(cudaStreamSynchronize(stream), err);
    return ATTN_OK;
}

static int forward_with_mask(unfused *u, const void *q, const void *k, const void *v, void *out,
                             const uint8_t *mask, cudaStream_t stream, attn_error *err)
{
    const attn_shape *s = &u->shape;
    const int S = s->seq, SQ = attn_q_seq(s), D = s->dim, BH = s->batch * s->heads;
    const long long kv_stride = (long long)S * D, q_stride = (long long)SQ * D, sc_stride = (long long)SQ * S;
    const float one = 1.f, zero = 0.f;
    if (u->k_rep) {
        /* Grouped-query: repeat_kv, as the series' eager code runs it (a copy of K and of V). */
        CUDA_TRY(launch_repeat_kv_bf16(k, u->k_rep, s->batch, attn_kv_heads(s), attn_group(s), (size_t)S * D, stream),
                 err);
        CUDA_TRY(launch_repeat_kv_bf16(v, u->v_rep, s->batch, attn_kv_heads(s), attn_group(s), (size_t)S * D, stream),
                 err);
        k = u->k_rep;
        v = u->v_rep;
    }
    /* Row-major scores[SQ,S] = Q[SQ,D]·K[S,D]ᵀ is, column-major, scoresᵀ = K·Qᵀ. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(u->cublas, CUBLAS_OP_T, CUBLAS_OP_N, S, SQ, D, &one, k, CUDA_R_16BF, D,
                                          kv_stride, q, CUDA_R_16BF, D, q_stride, &zero, u->scores,
                                          CUDA_R_16BF, S, sc_stride, BH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    size_t n = (size_t)BH * SQ * S;
    CUDA_TRY(launch_scale_bf16(u->scores, u->scaled, n, 1.0f / sqrtf((float)D), stream), err);
    void *filled = u->scaled;
    if (!u->inplace) {
        /* Out-of-place masked_fill: PyTorch clones the input (a device-to-device copy)
         * and fills the clone. */
        CUDA_TRY(cudaMemcpyAsync(u->filled, u->scaled, n * 2, cudaMemcpyDeviceToDevice, stream), err);
        filled = u->filled;
    }
    CUDA_TRY(launch_masked_fill_rect_bf16(filled, mask, (size_t)BH, SQ, S, -INFINITY, stream), err);
    CUDA_TRY(launch_softmax_rows_bf16(filled, u->probs, (size_t)BH * SQ, S, stream), err);
    /* Row-major out[SQ,D] = P[SQ,S]·V[S,D] is, column-major, outᵀ = Vᵀ·Pᵀ. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(u->cublas, CUBLAS_OP_N, CUBLAS_OP_N, D, SQ, S, &one, v, CUDA_R_16BF, D,
                                          kv_stride, u->probs, CUDA_R_16BF, S, sc_stride, &zero, out,
                                          CUDA_R_16BF, D, q_stride, BH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    return ATTN_OK;
}

int unfused_forward(void *state, const void *q, const void *k, const void *v, void *out, cudaStream_t stream,
                    attn_error *err)
{
    unfused *u = state;
    return forward_with_mask(u, q, k, v, out, u->causal_mask, stream, err);
}

int unfused_forward_masked(void *state, const void *q, const void *k, const void *v, void *out,
                           const uint8_t *mask, cudaStream_t stream, attn_error *err)
{
    return forward_with_mask(state, q, k, v, out, mask, stream, err);
}

void unfused_facts(void *state, attn_facts *facts)
{
    unfused *u = state;
    size_t sb = scores_bytes(&u->shape);
    attn_fact_add(facts, "scores_bytes", (double)sb, "%.1f MiB per [B,H,S,S] bf16 buffer", sb / 1048576.0);
    if (u->k_rep)
        attn_fact_add(facts, "kv_expansion_bytes", 2.0 * repeat_bytes(&u->shape),
                      "repeat_kv copies K and V to all %d query heads each forward: %.1f MiB written (%d query heads "
                      "per key/value head)", u->shape.heads, 2.0 * repeat_bytes(&u->shape) / 1048576.0,
                      attn_group(&u->shape));
    int ver = 0;
    if (cublasGetVersion(u->cublas, &ver) == CUBLAS_STATUS_SUCCESS)
        attn_fact_add(facts, "cublas_version", ver, "%d", ver);
}

void unfused_teardown(void *state)
{
    unfused *u = state;
    if (!u)
        return;
    cudaFree(u->causal_mask);
    cudaFree(u->k_rep);
    cudaFree(u->v_rep);
    cudaFree(u->scores);
    cudaFree(u->scaled);
    cudaFree(u->filled);
    cudaFree(u->probs);
    if (u->cublas)
        cublasDestroy(u->cublas);
    free(u);
}

/* The minimum each step must move through DRAM at this shape. The [B,H,S,S] score
 * matrices are far larger than the L2, so every step streams them from and to DRAM;
 * the fill writes only the masked (upper) triangle and reads the [S,S] mask. */
void unfused_predict(const attn_shape *s, int inplace, attn_prediction *p)
{
    const int gqa_or_decode = attn_shape_is_gqa(s) || attn_shape_is_decode(s);
    const double sb = gqa_or_decode ? (double)scores_bytes(s) : prediction_scores_bytes(s);
    const double io = prediction_io_bytes(s), S = s->seq, SQ = attn_q_seq(s);
    const double n = sb / 2; /* elements of the score matrices */
    memset(p, 0, sizeof *p);
    p->useful_flops = gqa_or_decode ? attn_gqa_useful_flops(s) : prediction_useful_flops(s);
    /* Q·Kᵀ reads Q, K and writes the scores; P·V reads P, V and writes O. Full
     * matrices: cuBLAS computes the masked half too. K and V are the expanded ones. */
    const double gemm_io = gqa_or_decode ? 2 * attn_q_bytes(s) + 2.0 * s->batch * s->heads * S * s->dim * 2 : 4 * io;
    /* Tensor-core products compute whole tiles: the smallest tile side of an sm_80/sm_90 MMA is 8
     * (mma.sync m16n8k16, wgmma n >= 8), so a decode step's few query rows execute as 8 (measured:
     * one query, 8.0x the useful FLOPs on the H200, tests/fixtures/h200-decode). */
    const double rows = gqa_or_decode && SQ < S ? ceil(SQ / 8) * 8 : SQ;
    const double gemm_flops = gqa_or_decode ? 4.0 * s->batch * s->heads * rows * S * s->dim : 2 * p->useful_flops;
    if (attn_shape_is_gqa(s)) {
        /* Copy kernels (not Memcpy operations): K and V read once, written once per query head. */
        prediction_add(p, "repeat_kv (K/V expansion copies)", "attnprof_repeat_kv", 2,
                       2 * attn_kv_bytes(s) + 2.0 * repeat_bytes(s), 0, PIPE_NONE);
    }
    prediction_add(p, "GEMMs (Q·Kᵀ, P·V)", "gemm|nvjet|xmma", 2, 2 * sb + gemm_io, gemm_flops, PIPE_TENSOR);
    prediction_add(p, "scale", "attnprof_scale", 1, 2 * sb, n, PIPE_NONE);
    if (!inplace) {
        pred_class *c = prediction_add(p, "Memcpy DtoD (masked_fill's clone)", "Memcpy DtoD", 1, 2 * sb, 0, PIPE_NONE);
        if (c)
            c->is_copy = 1;
    }
    const double masked = gqa_or_decode ? (SQ * (SQ - 1) / 2) / (SQ * S) : (S - 1) / (2 * S); /* masked fraction */
    prediction_add(p, "masked_fill (writes the masked triangle)", "masked_fill", 1, sb * masked + SQ * S, 0,
                   PIPE_NONE);
    prediction_add(p, "softmax", "softmax", 1, 2 * sb, 0, PIPE_NONE);
    for (int i = 0; i < p->n; i++) {
        p->executed_flops += p->cls[i].flops;
        p->min_dram_bytes += p->cls[i].dram_bytes;
    }
}

int unfused_expected_ops(const attn_shape *s, int inplace, int *n_memcpy)
{
    *n_memcpy = inplace ? 0 : 1;
    /* + repeat_kv of K and of V. Not counted: the 4-byte Memset cuBLAS issues before a one-row
     * Q·Kᵀ it splits over the keys (nvjet ..._512x8_..._bz_TNT; H200, cuBLAS 13, 2026-12-04): at
     * B 4 and 8, H 32, S 2048 to 131072 it did, at 2×8×777, 2×8×1001, 1×16×4099 and 1×32×3001 it
     * did not. It is its heuristic's, not a function of the shape we can state; the op-count
     * finding and the prediction's check name it as the library's. */
    return (inplace ? 5 : 6) + (attn_shape_is_gqa(s) ? 2 : 0);
}

/* ---- the backward (run --backward) ----
 * What PyTorch's eager autograd runs for the series' code, node by node from the output:
 *   out = P·V        BmmBackward: dP = dO·Vᵀ, dV = Pᵀ·dO        2 GEMMs
 *   P = softmax(X)   _softmax_backward_data(dP, P)               1 kernel (reads P, the output)
 *   masked_fill      grad.masked_fill(mask, 0)                   1 kernel (reads the bool mask)
 *   ·scale           grad · scale                                1 kernel (reads nothing saved)
 *   Q·Kᵀ             BmmBackward: dQ = dS·K, dK = dSᵀ·Q          2 GEMMs
 * 7 kernels; the clone of the out-of-place fill has no backward of its own. What autograd keeps
 * from the forward: Q, K, V, the mask and P. The in-place fill (naive_inplace) overwrites the
 * scaled scores, which no node's backward reads: masked_fill_'s backward needs only the mask,
 * and the scale's none, so autograd has nothing to refuse and the gradients equal the out-of-place
 * ones (the run checks both against FP64). The scratch of the backward is the forward's scores and
 * scaled buffers, which the backward does not read. */
int unfused_bwd_check_shape(const attn_shape *s, attn_error *why)
{
    if (attn_shape_is_gqa(s) || attn_shape_is_decode(s))
        return attn_fail(why, 1, "the unfused backward takes multi-head shapes only (no --kv-heads, no --q-seq)");
    return 0;
}

int unfused_backward(void *state, const void *q, const void *k, const void *v, const void *out, const void *dout,
                     void *dq, void *dk, void *dv, void *workspace, cudaStream_t stream, attn_error *err)
{
    (void)out;
    (void)workspace;
    unfused *u = state;
    const attn_shape *s = &u->shape;
    const int S = s->seq, D = s->dim, BH = s->batch * s->heads;
    const long long hs = (long long)S * D, sc = (long long)S * S;
    const size_t n = (size_t)BH * S * S;
    const float one = 1.f, zero = 0.f;
    void *dp = u->scores, *ds = u->scaled;
    /* Row-major dP[S,S] = dO·Vᵀ is, column-major, dPᵀ = V·dOᵀ. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(u->cublas, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, &one, v, CUDA_R_16BF, D, hs,
                                          dout, CUDA_R_16BF, D, hs, &zero, dp, CUDA_R_16BF, S, sc, BH,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    /* dV[S,D] = Pᵀ·dO is, column-major, dVᵀ = dOᵀ·P. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(u->cublas, CUBLAS_OP_N, CUBLAS_OP_T, D, S, S, &one, dout, CUDA_R_16BF, D,
                                          hs, u->probs, CUDA_R_16BF, S, sc, &zero, dv, CUDA_R_16BF, D, hs, BH,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    CUDA_TRY(launch_softmax_bwd_bf16(u->probs, dp, ds, (size_t)BH * S, S, stream), err);
    CUDA_TRY(launch_masked_fill_rect_bf16(ds, u->causal_mask, (size_t)BH, S, S, 0.0f, stream), err);
    CUDA_TRY(launch_scale_bf16(ds, dp, n, 1.0f / sqrtf((float)D), stream), err);
    /* dQ[S,D] = dS·K is, column-major, dQᵀ = Kᵀ·dSᵀ; dK[S,D] = dSᵀ·Q is dKᵀ = Qᵀ·dS. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(u->cublas, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, &one, k, CUDA_R_16BF, D, hs,
                                          dp, CUDA_R_16BF, S, sc, &zero, dq, CUDA_R_16BF, D, hs, BH,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    CUBLAS_TRY(cublasGemmStridedBatchedEx(u->cublas, CUBLAS_OP_N, CUBLAS_OP_T, D, S, S, &one, q, CUDA_R_16BF, D, hs,
                                          dp, CUDA_R_16BF, S, sc, &zero, dk, CUDA_R_16BF, D, hs, BH,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    return ATTN_OK;
}

/* P (bf16, [B,H,S,S]) and the bool mask [S,S]. */
double unfused_bwd_kept_bytes(const attn_shape *s) { return (double)scores_bytes(s) + (double)s->seq * s->seq; }
