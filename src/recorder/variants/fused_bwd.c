/* The fused backward shared by flash and efficient (fused_bwd.h). */
#include "fused_bwd.h"

#include "attn_bwd.h"
#include "check.h"

static size_t rows_of(const attn_shape *s) { return (size_t)s->batch * s->heads * s->seq; }

size_t fused_bwd_workspace_bytes(const attn_shape *s) { return 2 * rows_of(s) * sizeof(float); }

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
    float *delta = workspace, *own_lse = delta + rows_of(s);
    const int bh = s->batch * s->heads;
    if (!lse) {
        CUDA_TRY(launch_attn_bwd_lse(q, k, own_lse, bh, s->seq, s->dim, stream), err);
        lse = own_lse;
    }
    CUDA_TRY(launch_attn_bwd_fused(q, k, v, out, dout, lse, delta, dq, dk, dv, bh, s->seq, s->dim, stream), err);
    return ATTN_OK;
}
