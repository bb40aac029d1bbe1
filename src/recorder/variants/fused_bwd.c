/* The fused backward shared by flash and efficient (fused_bwd.h). */
#include "fused_bwd.h"

#include "attn_bwd.h"
#include "attn_bwd_tc.h"
#include "check.h"

static size_t rows_of(const attn_shape *s) { return (size_t)s->batch * s->heads * s->seq; }

/* Head dims 64 and 128 run the tensor-core backward (attn_bwd_tc.h: delta and the FP32 dQ
 * accumulator, then the recomputed lse); the others the FP32 one (delta, then the lse). */
size_t fused_bwd_workspace_bytes(const attn_shape *s)
{
    if (attn_bwd_tc_supports(s->dim))
        return (attn_bwd_tc_workspace_floats(s->batch * s->heads, s->seq, s->dim) + rows_of(s)) * sizeof(float);
    return 2 * rows_of(s) * sizeof(float);
}

int fused_bwd_check_shape(const attn_shape *s, attn_error *why)
{
    if (attn_shape_is_gqa(s) || attn_shape_is_decode(s))
        return attn_fail(why, 1, "the fused backward takes multi-head shapes only (no --kv-heads, no --q-seq)");
    if (s->dim > ATTN_BWD_MAX_DIM || s->dim % 8)
        return attn_fail(why, 1, "the fused backward takes head dims that are multiples of 8 up to %d, not %d",
                         ATTN_BWD_MAX_DIM, s->dim);
    if ((long long)s->batch * s->heads > 65535)
        return attn_fail(why, 1, "the fused backward's grid takes B*H up to 65535");
    return 0;
}

int fused_bwd_run(const attn_shape *s, const void *q, const void *k, const void *v, const void *out,
                  const void *dout, const float *lse, void *dq, void *dk, void *dv, void *workspace,
                  cudaStream_t stream, attn_error *err)
{
    const int bh = s->batch * s->heads;
    if (attn_bwd_tc_supports(s->dim)) {
        float *tc_ws = workspace, *own_lse = tc_ws + attn_bwd_tc_workspace_floats(bh, s->seq, s->dim);
        if (!lse) {
            CUDA_TRY(launch_attn_bwd_tc_lse(q, k, own_lse, bh, s->seq, s->dim, 1, stream), err);
            lse = own_lse;
        }
        CUDA_TRY(launch_attn_bwd_tc(q, k, v, out, dout, lse, tc_ws, dq, dk, dv, bh, s->seq, s->dim, 1, -1, stream),
                 err);
        return ATTN_OK;
    }
    float *delta = workspace, *own_lse = delta + rows_of(s);
    if (!lse) {
        CUDA_TRY(launch_attn_bwd_lse(q, k, own_lse, bh, s->seq, s->dim, stream), err);
        lse = own_lse;
    }
    CUDA_TRY(launch_attn_bwd_fused(q, k, v, out, dout, lse, delta, dq, dk, dv, bh, s->seq, s->dim, stream), err);
    return ATTN_OK;
}
