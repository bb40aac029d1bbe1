/* The unfused attention of naive.c and naive_inplace.c (see unfused.h): cuBLAS batched GEMMs
 * for Q·Kᵀ and P·V around the scale, causal masked_fill and softmax kernels of elementwise.h,
 * each buffer allocated once in setup; `inplace` says whether the fill writes over the scores. */
#include "unfused.h"

#include <cublas_v2.h> /* before check.h: its cuBLAS part */

#include "check.h"
#include "elementwise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct unfused {
    attn_shape shape;
    int inplace;
    cublasHandle_t cublas;
    uint8_t *causal_mask; /* [S, S], built once before timing, as in the series */
    void *scores;         /* Q·Kᵀ */
    void *scaled;         /* scores·scale (out-of-place, a new buffer as `s * scale` makes) */
    void *filled;         /* naive: the masked_fill copy; naive_inplace: unused */
    void *probs;          /* softmax output */
} unfused;

static size_t scores_bytes(const attn_shape *s)
{
    return (size_t)s->batch * s->heads * s->seq * s->seq * 2;
}

int unfused_check_shape(const attn_shape *shape, attn_error *why)
{
    (void)shape;
    (void)why;
    return 0; /* cuBLAS and the row kernels take any positive size */
}

size_t unfused_device_bytes(const attn_shape *shape, int inplace)
{
    return (size_t)shape->seq * shape->seq + scores_bytes(shape) * (inplace ? 3 : 4);
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
    CUDA_TRY(cudaMalloc((void **)&u->causal_mask, (size_t)shape->seq * shape->seq), err);
    CUDA_TRY(cudaMalloc(&u->scores, sb), err);
    CUDA_TRY(cudaMalloc(&u->scaled, sb), err);
    if (!inplace)
        CUDA_TRY(cudaMalloc(&u->filled, sb), err);
    CUDA_TRY(cudaMalloc(&u->probs, sb), err);
    CUDA_TRY(launch_causal_mask_u8(u->causal_mask, shape->seq, stream), err);
    CUDA_TRY(cudaStreamSynchronize(stream), err);
    return ATTN_OK;
}

static int forward_with_mask(unfused *u, const void *q, const void *k, const void *v, void *out,
                             const uint8_t *mask, cudaStream_t stream, attn_error *err)
{
    const attn_shape *s = &u->shape;
    const int S = s->seq, D = s->dim, BH = s->batch * s->heads;
    const long long qkv_stride = (long long)S * D, sc_stride = (long long)S * S;
    const float one = 1.f, zero = 0.f;
    /* Row-major scores[S,S] = Q[S,D]·K[S,D]ᵀ is, column-major, scoresᵀ = K·Qᵀ. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(u->cublas, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, &one, k, CUDA_R_16BF, D,
                                          qkv_stride, q, CUDA_R_16BF, D, qkv_stride, &zero, u->scores,
                                          CUDA_R_16BF, S, sc_stride, BH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    size_t n = (size_t)BH * S * S;
    CUDA_TRY(launch_scale_bf16(u->scores, u->scaled, n, 1.0f / sqrtf((float)D), stream), err);
    void *filled = u->scaled;
    if (!u->inplace) {
        /* Out-of-place masked_fill: PyTorch clones the input (a device-to-device copy)
         * and fills the clone. */
        CUDA_TRY(cudaMemcpyAsync(u->filled, u->scaled, n * 2, cudaMemcpyDeviceToDevice, stream), err);
        filled = u->filled;
    }
    CUDA_TRY(launch_masked_fill_bf16(filled, mask, (size_t)BH, S, -INFINITY, stream), err);
    CUDA_TRY(launch_softmax_rows_bf16(filled, u->probs, (size_t)BH * S, S, stream), err);
    /* Row-major out[S,D] = P[S,S]·V[S,D] is, column-major, outᵀ = Vᵀ·Pᵀ. */
    CUBLAS_TRY(cublasGemmStridedBatchedEx(u->cublas, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, &one, v, CUDA_R_16BF, D,
                                          qkv_stride, u->probs, CUDA_R_16BF, S, sc_stride, &zero, out,
                                          CUDA_R_16BF, D, qkv_stride, BH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
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
    const double sb = prediction_scores_bytes(s), io = prediction_io_bytes(s), S = s->seq;
    const double n = sb / 2; /* elements of the score matrices */
    memset(p, 0, sizeof *p);
    p->useful_flops = prediction_useful_flops(s);
    /* Q·Kᵀ reads Q, K and writes the scores; P·V reads P, V and writes O. Full
     * matrices: cuBLAS computes the masked half too. */
    prediction_add(p, "GEMMs (Q·Kᵀ, P·V)", "gemm|nvjet|xmma", 2, 2 * sb + 4 * io, 2 * p->useful_flops, PIPE_TENSOR);
    prediction_add(p, "scale", "attnprof_scale", 1, 2 * sb, n, PIPE_NONE);
    if (!inplace) {
        pred_class *c = prediction_add(p, "Memcpy DtoD (masked_fill's clone)", "Memcpy DtoD", 1, 2 * sb, 0, PIPE_NONE);
        if (c)
            c->is_copy = 1;
    }
    prediction_add(p, "masked_fill (writes the masked triangle)", "masked_fill", 1, sb * (S - 1) / (2 * S) + S * S, 0,
                   PIPE_NONE);
    prediction_add(p, "softmax", "softmax", 1, 2 * sb, 0, PIPE_NONE);
    for (int i = 0; i < p->n; i++) {
        p->executed_flops += p->cls[i].flops;
        p->min_dram_bytes += p->cls[i].dram_bytes;
    }
}
