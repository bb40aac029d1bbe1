/* cuDNN's fused SDPA backward through the backend API (cudnn_bwd.h).
 *
 * The operation graph is the composite form NVIDIA's C++ frontend lowers its SDPA backward node
 * to for cuDNN 9 (multi-head, no dropout, the causal mask as GEN_INDEX/CMP_GE/BINARY_SELECT, as
 * the forward's graph in cudnn.c); the fused backward engine matches this pattern:
 *
 *   sum = reduce ADD(dO ⊙ O) over D · 1     FP32, non-virtual [B,H,S,1] (the dO·O kernel writes it)
 *   S   = matmul(Q, Kᵀ) · scale − stats      stats: the forward's log-sum-exp [B,H,S,1]
 *   S   = BINARY_SELECT(S, -inf, row >= col)
 *   P   = exp(S)                             the probabilities, recomputed per tile
 *   dV  = matmul(Pᵀ, dO)                     Pᵀ a reshape (transpose view) in bf16
 *   dS  = (matmul(dO, Vᵀ) − sum) ⊙ P · scale
 *   dK  = matmul(dSᵀ, Q)
 *   dQ  = identity(matmul(dS, K))            through an FP32 non-virtual accumulator [B,H,S,D]
 *
 * The two non-virtual FP32 tensors are the frontend's workspace tensors; here they live in the
 * side buffer the runner allocates (cudnn_bwd_side_bytes). */
#include "cudnn_bwd.h"

#include <string.h>

enum {
    BUID_Q = 1, BUID_K, BUID_V, BUID_O, BUID_DO, BUID_STATS, BUID_DQ, BUID_DK, BUID_DV, BUID_SCALE, BUID_ONE,
    BUID_NEGINF, BUID_SUM, BUID_DQ_ACCUM, BUID_COUNT = BUID_DQ_ACCUM, BUID_VIRTUAL = 100
};

static size_t align256(size_t n) { return (n + 255) / 256 * 256; }
static size_t sum_bytes(const attn_shape *s) { return align256((size_t)s->batch * s->heads * s->seq * sizeof(float)); }

size_t cudnn_bwd_side_bytes(const attn_shape *s)
{
    return sum_bytes(s) + align256((size_t)s->batch * s->heads * s->seq * s->dim * sizeof(float));
}

/* The tensors of the graph, named as in the file comment. */
typedef struct bwd_tensors {
    cudnnBackendDescriptor_t q, kt, vt, o, dout, stats, dq, dk, dv, scale, one, neginf, sum, dq_accum;
    cudnnBackendDescriptor_t dodo, dodo_sum, s_raw, s_scaled, s_sub, row, col, keep, s_masked, p, pt, dp, dp_sub,
        dp_p, ds, dst, k_r;
} bwd_tensors;

#define TRY_RC(x)                                                                                        \
    do {                                                                                                 \
        int rc_ = (x);                                                                                   \
        if (rc_ != ATTN_OK)                                                                              \
            return rc_;                                                                                  \
    } while (0)

static int make_tensors(desc_arena *a, const attn_shape *s, bwd_tensors *t, attn_error *err)
{
    const int64_t B = s->batch, H = s->heads, S = s->seq, D = s->dim;
    const int64_t qkv_dims[4] = {B, H, S, D}, qkv_strides[4] = {H * S * D, S * D, D, 1};
    /* Kᵀ and Vᵀ are K's and V's memory seen as [B,H,D,S]: the last two strides swapped. */
    const int64_t t_dims[4] = {B, H, D, S}, t_strides[4] = {H * S * D, S * D, 1, D};
    const int64_t sc_dims[4] = {B, H, S, S}, sc_strides[4] = {H * S * S, S * S, S, 1};
    const int64_t sct_strides[4] = {H * S * S, S * S, 1, S}; /* [B,H,S,S] transposed */
    const int64_t row_dims[4] = {B, H, S, 1}, row_strides[4] = {H * S, S, 1, 1};
    /* The frontend's strides for the virtual dO ⊙ O (it is never stored). */
    const int64_t dodo_strides[4] = {H * S * D, S * D, H * D, 1};
    const int64_t one[4] = {1, 1, 1, 1};
    const cudnnDataType_t bf16 = CUDNN_DATA_BFLOAT16, f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32,
                          boolean = CUDNN_DATA_BOOLEAN;
    TRY_RC(sdpa_tensor(a, BUID_Q, bf16, qkv_dims, qkv_strides, false, false, &t->q, err));
    TRY_RC(sdpa_tensor(a, BUID_K, bf16, t_dims, t_strides, false, false, &t->kt, err));
    TRY_RC(sdpa_tensor(a, BUID_V, bf16, t_dims, t_strides, false, false, &t->vt, err));
    TRY_RC(sdpa_tensor(a, BUID_O, bf16, qkv_dims, qkv_strides, false, false, &t->o, err));
    TRY_RC(sdpa_tensor(a, BUID_DO, bf16, qkv_dims, qkv_strides, false, false, &t->dout, err));
    TRY_RC(sdpa_tensor(a, BUID_STATS, f32, row_dims, row_strides, false, false, &t->stats, err));
    TRY_RC(sdpa_tensor(a, BUID_DQ, bf16, qkv_dims, qkv_strides, false, false, &t->dq, err));
    TRY_RC(sdpa_tensor(a, BUID_DK, bf16, qkv_dims, qkv_strides, false, false, &t->dk, err));
    TRY_RC(sdpa_tensor(a, BUID_DV, bf16, qkv_dims, qkv_strides, false, false, &t->dv, err));
    TRY_RC(sdpa_tensor(a, BUID_SCALE, f32, one, one, false, true, &t->scale, err));
    TRY_RC(sdpa_tensor(a, BUID_ONE, f32, one, one, false, true, &t->one, err));
    TRY_RC(sdpa_tensor(a, BUID_NEGINF, f32, one, one, false, true, &t->neginf, err));
    TRY_RC(sdpa_tensor(a, BUID_SUM, f32, row_dims, row_strides, false, false, &t->sum, err));
    TRY_RC(sdpa_tensor(a, BUID_DQ_ACCUM, f32, qkv_dims, qkv_strides, false, false, &t->dq_accum, err));

    int64_t uid = BUID_VIRTUAL;
    TRY_RC(sdpa_tensor(a, uid++, f32, qkv_dims, dodo_strides, true, false, &t->dodo, err));
    TRY_RC(sdpa_tensor(a, uid++, f32, row_dims, row_strides, true, false, &t->dodo_sum, err));
    cudnnBackendDescriptor_t *f32_scores[] = {&t->s_raw, &t->s_scaled, &t->s_sub, &t->s_masked, &t->p,
                                              &t->dp,    &t->dp_sub,   &t->dp_p,  &t->ds};
    for (size_t i = 0; i < sizeof f32_scores / sizeof *f32_scores; i++)
        TRY_RC(sdpa_tensor(a, uid++, f32, sc_dims, sc_strides, true, false, f32_scores[i], err));
    TRY_RC(sdpa_tensor(a, uid++, i32, sc_dims, sc_strides, true, false, &t->row, err));
    TRY_RC(sdpa_tensor(a, uid++, i32, sc_dims, sc_strides, true, false, &t->col, err));
    TRY_RC(sdpa_tensor(a, uid++, boolean, sc_dims, sc_strides, true, false, &t->keep, err));
    /* Pᵀ and dSᵀ in the inputs' type: the A operands of the dV and dK GEMMs. */
    TRY_RC(sdpa_tensor(a, uid++, bf16, sc_dims, sct_strides, true, false, &t->pt, err));
    TRY_RC(sdpa_tensor(a, uid++, bf16, sc_dims, sct_strides, true, false, &t->dst, err));
    /* K seen as [B,H,S,D] again (Kᵀ reshaped back) for dQ = dS·K. */
    TRY_RC(sdpa_tensor(a, uid++, bf16, qkv_dims, qkv_strides, true, false, &t->k_r, err));
    return ATTN_OK;
}

/* The graph of the file comment, finalized, in `graph`. */
static int build_graph(desc_arena *a, cudnnHandle_t h, const attn_shape *s, cudnnBackendDescriptor_t *graph,
                       attn_error *err)
{
    bwd_tensors t;
    TRY_RC(make_tensors(a, s, &t, err));
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, boolean = CUDNN_DATA_BOOLEAN;
    cudnnBackendDescriptor_t ops[24];
    int n = 0;
    /* the dO·O row sums */
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_MUL, f32, 0, t.dout, t.o, NULL, t.dodo, &ops[n++], err));
    TRY_RC(sdpa_reduction(a, CUDNN_REDUCE_TENSOR_ADD, t.dodo, t.dodo_sum, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_MUL, f32, 0, t.dodo_sum, t.one, NULL, t.sum, &ops[n++], err));
    /* P recomputed from the saved stats */
    TRY_RC(sdpa_matmul(a, t.q, t.kt, t.s_raw, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_MUL, f32, 0, t.s_raw, t.scale, NULL, t.s_scaled, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_SUB, f32, 0, t.s_scaled, t.stats, NULL, t.s_sub, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_GEN_INDEX, f32, 2, t.s_sub, NULL, NULL, t.row, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_GEN_INDEX, f32, 3, t.s_sub, NULL, NULL, t.col, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_CMP_GE, boolean, 0, t.row, t.col, NULL, t.keep, &ops[n++], err));
    /* BINARY_SELECT: y = t ? x : b, so kept scores pass and the rest become -inf. */
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_BINARY_SELECT, f32, 0, t.s_sub, t.neginf, t.keep, t.s_masked, &ops[n++],
                          err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_EXP, f32, 0, t.s_masked, NULL, NULL, t.p, &ops[n++], err));
    /* dV */
    TRY_RC(sdpa_reshape(a, t.p, t.pt, &ops[n++], err));
    TRY_RC(sdpa_matmul(a, t.pt, t.dout, t.dv, &ops[n++], err));
    /* dS */
    TRY_RC(sdpa_matmul(a, t.dout, t.vt, t.dp, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_SUB, f32, 0, t.dp, t.sum, NULL, t.dp_sub, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_MUL, f32, 0, t.dp_sub, t.p, NULL, t.dp_p, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_MUL, f32, 0, t.dp_p, t.scale, NULL, t.ds, &ops[n++], err));
    /* dK */
    TRY_RC(sdpa_reshape(a, t.ds, t.dst, &ops[n++], err));
    TRY_RC(sdpa_matmul(a, t.dst, t.q, t.dk, &ops[n++], err));
    /* dQ through the FP32 accumulator */
    TRY_RC(sdpa_reshape(a, t.kt, t.k_r, &ops[n++], err));
    TRY_RC(sdpa_matmul(a, t.ds, t.k_r, t.dq_accum, &ops[n++], err));
    TRY_RC(sdpa_pointwise(a, CUDNN_POINTWISE_IDENTITY, f32, 0, t.dq_accum, NULL, NULL, t.dq, &ops[n++], err));
    return sdpa_graph(a, h, ops, n, graph, err);
}

int cudnn_bwd_build(cudnn_bwd *b, cudnnHandle_t h, const attn_shape *s, attn_error *err)
{
    memset(b, 0, sizeof *b);
    b->one = 1.0f;
    b->sum_bytes = sum_bytes(s);
    sdpa_plan *p = &b->plan;
    const double t0 = sdpa_now_us();
    cudnnBackendDescriptor_t graph;
    int rc = build_graph(&p->arena, h, s, &graph, err);
    p->graph_us = sdpa_now_us() - t0;
    if (rc == ATTN_OK)
        rc = sdpa_plan_finalize(p, h, graph, err);
    if (rc == ATTN_OK && p->workspace_bytes > 0) {
        cudaError_t ce = cudaMalloc(&b->workspace, (size_t)p->workspace_bytes);
        if (ce != cudaSuccess) {
            b->workspace = NULL;
            rc = attn_fail(err, ATTN_FAILED, "cudnn backward: cudaMalloc(workspace, %lld): %s",
                           (long long)p->workspace_bytes, cudaGetErrorString(ce));
        }
    }
    if (rc != ATTN_OK)
        cudnn_bwd_destroy(b);
    return rc;
}

int cudnn_bwd_run(cudnn_bwd *b, cudnnHandle_t h, const cudnn_bwd_io *io, attn_error *err)
{
    if (!b->plan.plan)
        return attn_fail(err, ATTN_FAILED, "cudnn backward: no plan was built (the forward was set up without --backward)");
    /* By-value tensors are passed as host pointers to their value; uid i+1 is ptrs[i]. */
    void *ptrs[BUID_COUNT] = {(void *)io->q, (void *)io->k,  (void *)io->v, (void *)io->o, (void *)io->dout,
                              (void *)io->stats, io->dq,   io->dk,        io->dv,        io->scale,
                              &b->one,          io->neginf, io->side,     (char *)io->side + b->sum_bytes};
    int same = b->varpack != NULL;
    for (int i = 0; i < BUID_COUNT && same; i++)
        same = ptrs[i] == b->vp_ptrs[i];
    if (!same) {
        int64_t uids[BUID_COUNT];
        for (int i = 0; i < BUID_COUNT; i++)
            uids[i] = i + 1;
        TRY_RC(sdpa_varpack(&b->varpack, uids, ptrs, BUID_COUNT, b->workspace, err));
        memcpy(b->vp_ptrs, ptrs, sizeof ptrs);
    }
    CUDNN_TRY(cudnnBackendExecute(h, b->plan.plan, b->varpack), err);
    return ATTN_OK;
}

void cudnn_bwd_destroy(cudnn_bwd *b)
{
    if (b->varpack)
        (void)cudnnBackendDestroyDescriptor(b->varpack);
    sdpa_plan_destroy(&b->plan);
    if (b->workspace)
        (void)cudaFree(b->workspace);
    memset(b, 0, sizeof *b);
}
