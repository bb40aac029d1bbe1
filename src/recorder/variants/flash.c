/* `flash`: our flash attention kernel, one launch per forward. On compute
 * capability 9.0 the Hopper-native one (kernels/flash_fwd_sm90a.cu: TMA, wgmma,
 * a producer warp and two or three consumer warpgroups, persistent); elsewhere the
 * FlashAttention-2 style one (kernels/flash_fwd.cu: the query tile split across
 * warps, K/V through a two-deep cp.async pipeline, mma.sync). Both run the
 * softmax in the exp2 domain with the scale folded in and write each row's
 * log-sum-exp to a float buffer this variant owns (as FlashAttention's forward
 * keeps it for the backward pass). Tile sizes per head dim:
 * flash_fwd_default_config; a head dim with no kernel of its own runs the next
 * larger one, which zero-fills the missing columns (flash_fwd_padded_dim). */
#include "check.h"
#include "variant.h"

#include "flash_fwd.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct flash_state {
    attn_shape shape;
    int config;
    float *lse; /* [B, H, S] natural-log log-sum-exp */
    size_t lse_bytes;
    void *workspace; /* the persistent kernels' tile counter (NULL when the kernel needs none) */
    size_t workspace_bytes;
} flash_state;

/* The largest head dim a kernel is compiled for. */
static int max_head_dim(void)
{
    int d = 0;
    for (int i = 0; i < flash_fwd_config_count(); i++)
        if (flash_fwd_config_at(i)->head_dim > d)
            d = flash_fwd_config_at(i)->head_dim;
    return d;
}

static int check_shape(const attn_shape *s, attn_error *why)
{
    int rc = attn_fused_shape_check("flash", s, flash_fwd_padded_dim(s->dim), max_head_dim(), why);
    if (rc != 0)
        return rc;
    /* One block per (64 or 128 query rows, head): the grid must fit in int. */
    if ((long long)s->batch * s->heads * ((s->seq + 63) / 64) > INT_MAX)
        return attn_fail(why, 1, "flash: B*H*ceil(S/64) exceeds the grid limit");
    return 0;
}

static size_t device_bytes(const attn_shape *s)
{
    return (size_t)s->batch * s->heads * s->seq * sizeof(float);
}

static int setup(void **state, const attn_shape *shape, const attn_options *opt, cudaStream_t stream,
                 attn_error *err)
{
    (void)opt;
    (void)stream;
    int major, minor, smem_optin, status;
    if ((status = attn_device_caps(&major, &minor, &smem_optin, err)) != ATTN_OK)
        return status;
    const int config = flash_fwd_default_config(shape->dim, major, minor);
    if (config < 0)
        return attn_fail(err, ATTN_UNAVAILABLE, "flash: no kernel for D=%d on compute capability %d.%d (needs 8.0+)",
                         shape->dim, major, minor);
    const flash_fwd_config *c = flash_fwd_config_at(config);
    if (c->smem_bytes > (size_t)smem_optin)
        return attn_fail(err, ATTN_UNAVAILABLE, "flash: %s needs %zu B of shared memory per block, this GPU allows %d",
                         c->kernel_name, c->smem_bytes, smem_optin);

    flash_state *st = calloc(1, sizeof *st);
    if (!st)
        return attn_fail(err, ATTN_FAILED, "flash: out of host memory");
    st->shape = *shape;
    st->config = config;
    st->lse_bytes = device_bytes(shape);
    st->workspace_bytes = flash_fwd_workspace_bytes(config);
    cudaError_t rc = flash_fwd_prepare(config);
    if (rc == cudaErrorNotSupported) {
        free(st);
        return attn_fail(err, ATTN_UNAVAILABLE, "flash: %s cannot run on this GPU or driver", c->kernel_name);
    }
    if (rc == cudaSuccess)
        rc = cudaMalloc((void **)&st->lse, st->lse_bytes);
    if (rc == cudaSuccess && st->workspace_bytes) {
        rc = cudaMalloc(&st->workspace, st->workspace_bytes);
        if (rc == cudaSuccess)
            rc = cudaMemset(st->workspace, 0, st->workspace_bytes);
    }
    if (rc != cudaSuccess) {
        cudaFree(st->workspace);
        cudaFree(st->lse);
        free(st);
        return attn_fail(err, ATTN_FAILED, "flash: setup of %s: %s (%s:%d)", c->kernel_name, cudaGetErrorString(rc),
                         __FILE__, __LINE__);
    }
    *state = st;
    return ATTN_OK;
}

static int forward(void *state, const void *q, const void *k, const void *v, void *out, cudaStream_t stream,
                   attn_error *err)
{
    flash_state *st = state;
    CUDA_TRY(launch_flash_fwd(st->config, q, k, v, out, st->lse, st->workspace, st->shape.batch, st->shape.heads,
                              st->shape.seq, st->shape.dim, 1, stream),
             err);
    return ATTN_OK;
}

static void facts(void *state, attn_facts *f)
{
    flash_state *st = state;
    const flash_fwd_config *c = flash_fwd_config_at(st->config);
    attn_fact_add(f, "kernel", NAN, "%s", c->kernel_name);
    attn_fact_add(f, "tile", NAN, "%d queries x %d keys; %s", c->block_m, c->block_n, c->layout);
    attn_fact_add(f, "threads_per_block", c->threads, "%d", c->threads);
    attn_fact_add(f, "smem_bytes_per_block", (double)c->smem_bytes, "%zu (Q tile + 2 stages of K and V)", c->smem_bytes);
    attn_fact_add(f, "path", NAN, "%s", c->path);
    attn_fact_head_dim_padding(f, st->shape.dim, c->head_dim);
    attn_fact_add(f, "lse_bytes", (double)st->lse_bytes, "%zu (float log-sum-exp per row)", st->lse_bytes);
    attn_fact_add(f, "schedule", NAN, "%s", c->schedule);
}

static void teardown(void *state)
{
    flash_state *st = state;
    if (!st)
        return;
    /* No error channel here: report a failed free, then carry on. */
    cudaError_t rc = cudaFree(st->lse);
    if (rc == cudaSuccess)
        rc = cudaFree(st->workspace);
    if (rc != cudaSuccess)
        fprintf(stderr, "attnprof: flash teardown: cudaFree: %s\n", cudaGetErrorString(rc));
    free(st);
}

/* One fused kernel: Q, K, V read from DRAM once and O written once, plus the float log-sum-exp per row (a head's K and V
 * stay in the L2 while its query tiles stream them); the tiles decide the K/V bytes each
 * block reads again from the L2 and the FLOPs of the diagonal tiles. A padded head dim
 * executes the FLOPs of the kernel's D but moves only the real columns. */
static void predict(const attn_shape *s, int cc_major, int cc_minor, attn_prediction *p)
{
    memset(p, 0, sizeof *p);
    const int config = flash_fwd_default_config(s->dim, cc_major, cc_minor);
    if (config < 0)
        return;
    const flash_fwd_config *c = flash_fwd_config_at(config);
    const double lse_bytes = (double)s->batch * s->heads * s->seq * sizeof(float);
    prediction_fused_kernel(p, s, c->head_dim, c->block_m, c->block_n, lse_bytes, "attnprof_flash_fwd");
}

const attn_variant variant_flash = {
    .name = "flash",
    .title = "Flash attention fused kernel (ours: TMA + wgmma on Hopper, FlashAttention-2 style elsewhere)",
    .what_changed = "one fused kernel: Q tiles against streamed K/V, exp2 online softmax; Hopper: TMA ring, wgmma, producer/consumer warpgroups",
    .expected_ops = 1,
    .expected_memcpy = 0,
    .check_shape = check_shape,
    .device_bytes = device_bytes,
    .setup = setup,
    .forward = forward,
    .facts = facts,
    .teardown = teardown,
    .predict = predict,
};
