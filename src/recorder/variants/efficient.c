/* `efficient`: our memory-efficient attention kernel in the xformers/CUTLASS
 * style (kernels/efficient_fwd.cu), one launch per forward: 64x64 tiles, the
 * working set in registers, tensor-core MMA, online softmax; causal tiles above
 * the diagonal are skipped and partial tiles masked. No log-sum-exp is kept. A
 * head dim with no kernel of its own runs the next larger one, which zero-fills
 * the missing columns in shared memory (efficient_fwd_padded_dim). Grouped-query attention is
 * native (each query head reads its group's K/V); decode's fewer queries run the same kernel
 * with the causal mask aligned to the end of the keys. */
#include "fused_bwd.h"
#include "check.h"
#include "variant.h"

#include "efficient_fwd.h"
#include "families.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct efficient_state {
    attn_shape shape;
    int config;
} efficient_state;

static int check_shape(const attn_shape *s, attn_error *why)
{
    int rc = attn_fused_shape_check("efficient", s, kernel_family_at(KERNEL_FAMILY_EFFICIENT_FWD), why);
    if (rc != 0)
        return rc;
    /* The grid is (query tiles, B*H): B*H is grid.y, at most 65535. */
    if ((long long)s->batch * s->heads > 65535)
        return attn_fail(why, 1, "efficient: B*H = %lld exceeds the grid's y limit 65535",
                         (long long)s->batch * s->heads);
    return 0;
}

static size_t device_bytes(const attn_shape *s)
{
    (void)s;
    return 0;
}

static int setup(void **state, const attn_shape *shape, const attn_options *opt, cudaStream_t stream,
                 attn_error *err)
{
    (void)opt;
    (void)stream;
    int config, status;
    kernel_config_desc c;
    if ((status = attn_fused_pick("efficient", kernel_family_at(KERNEL_FAMILY_EFFICIENT_FWD), shape->dim, &config,
                                  &c, err)) != ATTN_OK)
        return status;
    CUDA_TRY(efficient_fwd_prepare(config), err);
    efficient_state *st = calloc(1, sizeof *st);
    if (!st)
        return attn_fail(err, ATTN_FAILED, "efficient: out of host memory");
    st->shape = *shape;
    st->config = config;
    *state = st;
    return ATTN_OK;
}

static int forward(void *state, const void *q, const void *k, const void *v, void *out, cudaStream_t stream,
                   attn_error *err)
{
    efficient_state *st = state;
    const attn_shape *s = &st->shape;
    CUDA_TRY(launch_efficient_fwd_gqa(st->config, q, k, v, out, s->batch, s->heads, attn_kv_heads(s), attn_q_seq(s),
                                      s->seq, s->dim, stream),
             err);
    return ATTN_OK;
}

static void facts(void *state, attn_facts *f)
{
    efficient_state *st = state;
    const efficient_fwd_config *c = efficient_fwd_config_at(st->config);
    attn_fact_add(f, "kernel", NAN, "%s", c->kernel_name);
    attn_fact_add(f, "tile", NAN, "%d queries x %d keys, %d warps of %d query rows", c->block_m, c->block_n,
                  c->warps, c->block_m / c->warps);
    attn_fact_add(f, "threads_per_block", c->threads, "%d", c->threads);
    attn_fact_add(f, "smem_bytes_per_block", (double)c->smem_bytes, "%zu (Q, K and V tiles, rows padded 16 B)",
                  c->smem_bytes);
    attn_fact_add(f, "path", NAN, "%s", c->path);
    attn_fact_head_dim_padding(f, st->shape.dim, c->head_dim);
    if (attn_shape_is_gqa(&st->shape))
        attn_fact_add(f, "gqa", attn_group(&st->shape), "native: each of %d query heads per key/value head reads "
                      "its group's K/V, no copy", attn_group(&st->shape));
    if (attn_shape_is_decode(&st->shape))
        attn_fact_add(f, "decode", attn_q_seq(&st->shape), "%d queries against %d keys, the causal mask aligned to "
                      "the end of the keys; one block per 64 queries and head, no split of the keys",
                      attn_q_seq(&st->shape), st->shape.seq);
}

static void teardown(void *state)
{
    free(state);
}

/* One fused kernel: Q, K, V read from DRAM once and O written once (a head's K and V
 * stay in the L2 while its query tiles stream them); the tiles decide the K/V bytes each
 * block reads again from the L2 and the FLOPs of the diagonal tiles. A padded head dim
 * executes the FLOPs of the kernel's D but moves only the real columns. */
static void predict(const attn_shape *s, int cc_major, int cc_minor, attn_prediction *p)
{
    memset(p, 0, sizeof *p);
    const int config = efficient_fwd_default_config(s->dim, cc_major, cc_minor);
    if (config < 0)
        return;
    const efficient_fwd_config *c = efficient_fwd_config_at(config);
    if (attn_shape_is_gqa(s) || attn_shape_is_decode(s)) {
        attn_predict_gqa_fused(p, s, c->head_dim, 0, "fused kernel", "attnprof_efficient_fwd", 1);
        /* each query head its own block; a warp's mma.sync rows come 16 at a time, and the warps
         * with no query row of a decode step skip their work (measured 16x the useful FLOPs at one
         * query, tests/fixtures/h200-decode) */
        attn_predict_decode_tiles(p, s, c->head_dim, 16, 0);
        return;
    }
    prediction_fused_kernel(p, s, c->head_dim, c->block_m, c->block_n, 0, "attnprof_efficient_fwd");
}


/* The backward (run --backward): the fused backward of fused_bwd.h (tensor cores at D 64 and 128, FP32 elsewhere), which recomputes the log-sum-exp this forward does not keep. */
static int backward(void *state, const void *q, const void *k, const void *v, const void *out, const void *dout,
                    void *dq, void *dk, void *dv, void *workspace, cudaStream_t stream, attn_error *err)
{
    efficient_state *st = state;
    return fused_bwd_run(&st->shape, q, k, v, out, dout, NULL, dq, dk, dv, workspace, stream, err);
}

static double bwd_kept_bytes(const attn_shape *s)
{
    (void)s;
    return 0;
}

const attn_variant variant_efficient = {
    .name = "efficient",
    .title = "memory-efficient fused kernel (ours, xformers style)",
    .what_changed = "one fused kernel: tiles in registers, online softmax",
    .expected_ops = 1,
    .expected_memcpy = 0,
    .check_shape = check_shape,
    .device_bytes = device_bytes,
    .setup = setup,
    .forward = forward,
    .facts = facts,
    .teardown = teardown,
    .predict = predict,
    .backward = backward,
    .bwd_workspace_bytes = fused_bwd_workspace_bytes,
    .bwd_check_shape = fused_bwd_check_shape,
    .expected_bwd_ops = FUSED_BWD_OPS + 1, /* lse recompute, delta, dK/dV, dQ */
    .bwd_kept_bytes = bwd_kept_bytes,
    .bwd_kept = "nothing: the forward keeps no log-sum-exp, the backward recomputes it",
};
