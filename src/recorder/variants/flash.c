/* `flash`: our flash attention kernel, one launch per forward. On compute
 * capability 9.0 the Hopper-native one (kernels/flash_fwd_sm90a.cu: TMA, wgmma,
 * a producer warp and two or three consumer warpgroups, persistent); elsewhere the
 * FlashAttention-2 style one (kernels/flash_fwd.cu: the query tile split across
 * warps, K/V through a two-deep cp.async pipeline, mma.sync). Both run the
 * softmax in the exp2 domain with the scale folded in and write each row's
 * log-sum-exp to a float buffer this variant owns (as FlashAttention's forward
 * keeps it for the backward pass). Tile sizes per head dim:
 * flash_fwd_default_config; a head dim with no kernel of its own runs the next
 * larger one, which zero-fills the missing columns (flash_fwd_padded_dim).
 *
 * Grouped-query attention is native on both paths (each query head reads its key/value
 * head's tiles, no copy). Decode, fewer queries than keys, runs the split-KV kernel
 * (kernels/flash_decode.cu): the group's query rows share each K/V load, and the keys are spread
 * over the multiprocessors on one of two grids, chosen per shape (decode_grid_choose_for,
 * gqa_decode.h): the fixed grid (one wave of row tile x split blocks, and a combine kernel,
 * counted as this variant's, that merges the splits' partial softmaxes) or the balanced grid
 * (one block per resident slot, the keys of all tiles cut evenly, a cut tile merged by its last
 * block: one kernel). The TMA ring (sm_90, D 64 and 128) always runs the fixed grid: it measured
 * fastest there at every point. */
#include "fused_bwd.h"
#include "check.h"
#include "variant.h"

#include "families.h"
#include "flash_decode.h"
#include "flash_fwd.h"
#include "gqa_decode.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct flash_state {
    attn_shape shape;
    int decode; /* fewer queries than keys: the split-KV kernel (flash_decode.h) */
    int config; /* flash_fwd's configuration, or flash_decode's when decode */
    decode_split split;
    decode_grid grid;  /* the fixed grid (config, split) or the balanced one (balanced_config) */
    int balanced_config, balanced_blocks, balanced_pieces;
    int merges_in_kernel; /* decode_run's */
    float *lse; /* [B, H, S] natural-log log-sum-exp */
    size_t lse_bytes;
    void *workspace; /* the split-KV kernel's partials and arrival counters, or the persistent kernels' tile
                      * counter (NULL when the kernel needs none) */
    size_t workspace_bytes;
} flash_state;

/* Keys per split of the split-KV kernel come in whole blocks of this many (a multiple of every
 * configuration's four warps' chunks). */
#define DECODE_BLOCK_KEYS 64

/* How a decode shape runs on the current device. */
typedef struct decode_run {
    int config;     /* the fixed grid's configuration (flash_decode_config_for_device) */
    decode_split split;
    decode_grid grid;
    int balanced_config, balanced_blocks, balanced_pieces; /* grid == DECODE_GRID_BALANCED */
    int merges_in_kernel; /* the fixed grid's splits merged by each tile's last block, no combine kernel */
} decode_run;

/* The current device's compute capability major, 0 with none: on 9.x the split-KV kernel runs its
 * TMA ring (flash_decode_config_for_device). */
static int device_cc_major(void)
{
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return major;
}

static int resident_slots(int config)
{
    int blocks = 1, sms = attn_device_sms();
    if (flash_decode_prepare(config) != cudaSuccess || flash_decode_blocks_per_sm(config, &blocks) != cudaSuccess ||
        blocks < 1)
        blocks = 1;
    cudaGetLastError();
    return (sms > 0 ? sms : 1) * blocks;
}

/* The split-KV plan of a decode shape on the current device: its configuration, the split count
 * from B × Hkv × row tiles against the multiprocessors' resident blocks, and the grid
 * (decode_grid_choose). -1: no kernel for the head dim. */
static int decode_plan(const attn_shape *s, decode_run *r)
{
    memset(r, 0, sizeof *r);
    r->config = flash_decode_config_for_device(s->dim, device_cc_major());
    r->balanced_config = -1;
    if (r->config < 0)
        return -1;
    const int slots = resident_slots(r->config);
    const long long tiles = (long long)s->batch * attn_kv_heads(s) *
                            flash_decode_row_tiles(r->config, s->heads, attn_kv_heads(s), attn_q_seq(s));
    /* The TMA ring splits for one block per multiprocessor, however many would fit: its four warps'
     * rings already keep the SM's stream full, and at D = 64 (two resident blocks) 16 splits ran 28.5 us
     * against 8 splits' 26.3 on the H200 (bench/results/2026-12-04-decode-ring.md). */
    const int split_slots = flash_decode_tma_ring(r->config) && attn_device_sms() > 0 ? attn_device_sms() : slots;
    r->split = decode_split_choose(tiles, s->seq, split_slots, DECODE_BLOCK_KEYS);
    r->grid = decode_grid_choose_for(flash_decode_tma_ring(r->config), tiles, r->split, slots,
                                     2 * attn_kv_bytes(s)); /* K and V */
    const int bc = flash_decode_balanced_twin(r->config);
    if (r->grid == DECODE_GRID_BALANCED && bc >= 0) {
        const int bslots = resident_slots(bc);
        r->balanced_blocks = flash_decode_balanced_grid(bc, s->batch, s->heads, attn_kv_heads(s), attn_q_seq(s), s->seq,
                                                        bslots);
        r->balanced_pieces = flash_decode_balanced_pieces(bc, s->batch, s->heads, attn_kv_heads(s), attn_q_seq(s),
                                                          s->seq, r->balanced_blocks);
        if (r->balanced_blocks >= 1 && r->balanced_pieces >= 1)
            r->balanced_config = bc;
    }
    if (r->balanced_config < 0)
        r->grid = DECODE_GRID_FIXED;
    r->merges_in_kernel = r->grid == DECODE_GRID_FIXED &&
                          flash_decode_merges_in_kernel(r->config, s->heads, attn_kv_heads(s), attn_q_seq(s),
                                                        r->split.splits);
    return r->config;
}

/* The fixed grid cut into splits whose kernel does not merge them: the combine kernel follows. */
static int decode_runs_combine(const decode_run *r)
{
    return r->grid == DECODE_GRID_FIXED && r->split.splits > 1 && !r->merges_in_kernel;
}

/* Partials written once and read back once inside the kernel: the balanced grid's cut tiles, the
 * fixed grid's splits where its kernel merges them. */
static int decode_merges_inside(const decode_run *r)
{
    return r->grid == DECODE_GRID_BALANCED || r->merges_in_kernel; /* merges_in_kernel: fixed grid only */
}

static size_t decode_workspace_bytes(const attn_shape *s, const decode_run *r)
{
    if (r->grid == DECODE_GRID_BALANCED)
        return flash_decode_balanced_workspace_bytes(r->balanced_config, s->batch, s->heads, attn_kv_heads(s),
                                                     attn_q_seq(s), s->seq, s->dim, r->balanced_blocks);
    return flash_decode_workspace_bytes(s->batch, s->heads, attn_q_seq(s), s->dim, r->split.splits);
}

static int check_shape(const attn_shape *s, attn_error *why)
{
    int rc = attn_fused_shape_check("flash", s, kernel_family_at(KERNEL_FAMILY_FLASH_FWD), why);
    if (rc != 0)
        return rc;
    if (attn_shape_is_decode(s)) {
        if (flash_decode_config_for_dim(s->dim) < 0)
            return attn_fail(why, 1, "flash: decode (q_seq %d < seq %d) runs the split-KV kernel, compiled for "
                                     "D = 64 and 128 only (D = %d)", attn_q_seq(s), s->seq, s->dim);
        if ((long long)s->batch * attn_kv_heads(s) *
                ((long long)attn_group(s) * attn_q_seq(s) + 15) / 16 > INT_MAX)
            return attn_fail(why, 1, "flash: B*Hkv*row tiles exceeds the split-KV kernel's grid limit");
        return 0;
    }
    /* One block per (64 or 128 query rows, head): the grid must fit in int. */
    if ((long long)s->batch * s->heads * ((s->seq + 63) / 64) > INT_MAX)
        return attn_fail(why, 1, "flash: B*H*ceil(S/64) exceeds the grid limit");
    return 0;
}

static size_t device_bytes(const attn_shape *s)
{
    size_t lse = (size_t)s->batch * s->heads * attn_q_seq(s) * sizeof(float);
    decode_run r;
    if (attn_shape_is_decode(s) && decode_plan(s, &r) >= 0)
        lse += decode_workspace_bytes(s, &r);
    return lse;
}

/* One kernel per forward; decode on the fixed grid with more than one split adds the combine,
 * unless its kernel merges its own splits (the TMA ring; the balanced grid merges inside its one
 * kernel too). */
static int expected_ops_for(const attn_shape *s, int *n_memcpy)
{
    decode_run r;
    *n_memcpy = 0;
    if (!attn_shape_is_decode(s) || decode_plan(s, &r) < 0)
        return 1;
    return decode_runs_combine(&r) ? 2 : 1;
}

static int setup_decode(void **state, const attn_shape *shape, attn_error *err)
{
    flash_state *st = calloc(1, sizeof *st);
    if (!st)
        return attn_fail(err, ATTN_FAILED, "flash: out of host memory");
    st->shape = *shape;
    st->decode = 1;
    decode_run plan;
    st->config = decode_plan(shape, &plan);
    st->split = plan.split;
    st->grid = plan.grid;
    st->balanced_config = plan.balanced_config;
    st->balanced_blocks = plan.balanced_blocks;
    st->balanced_pieces = plan.balanced_pieces;
    st->merges_in_kernel = plan.merges_in_kernel;
    const int run_config = st->grid == DECODE_GRID_BALANCED ? st->balanced_config : st->config;
    const flash_decode_config *c = flash_decode_config_at(run_config);
    int major, minor, smem_optin, status;
    if ((status = attn_device_caps(&major, &minor, &smem_optin, err)) != ATTN_OK || !c) {
        free(st);
        return status != ATTN_OK ? status : attn_fail(err, ATTN_UNAVAILABLE, "flash: no split-KV kernel for D=%d", shape->dim);
    }
    if (major < 8 || c->smem_bytes > (size_t)smem_optin) {
        free(st);
        return attn_fail(err, ATTN_UNAVAILABLE, "flash: %s needs compute capability 8.0+ and %zu B of shared memory "
                         "per block (this GPU: %d.%d, %d B)", c->kernel_name, c->smem_bytes, major, minor, smem_optin);
    }
    st->lse_bytes = (size_t)shape->batch * shape->heads * attn_q_seq(shape) * sizeof(float);
    st->workspace_bytes = decode_workspace_bytes(shape, &plan);
    cudaError_t rc = flash_decode_prepare(run_config);
    if (rc == cudaSuccess)
        rc = cudaMalloc((void **)&st->lse, st->lse_bytes);
    if (rc == cudaSuccess && st->workspace_bytes)
        rc = cudaMalloc(&st->workspace, st->workspace_bytes);
    /* The arrival counters (the balanced grid's, the fixed grid's that merges in the kernel) start at zero;
     * every launch leaves them there. */
    if (rc == cudaSuccess && st->workspace_bytes)
        rc = cudaMemset(st->workspace, 0, st->workspace_bytes);
    if (rc == cudaSuccess && st->workspace_bytes)
        rc = cudaDeviceSynchronize(); /* the memset done before the first forward is timed */
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

static int setup(void **state, const attn_shape *shape, const attn_options *opt, cudaStream_t stream,
                 attn_error *err)
{
    (void)opt;
    (void)stream;
    if (attn_shape_is_decode(shape))
        return setup_decode(state, shape, err);
    int config, status;
    kernel_config_desc c;
    if ((status = attn_fused_pick("flash", kernel_family_at(KERNEL_FAMILY_FLASH_FWD), shape->dim, &config, &c,
                                  err)) != ATTN_OK)
        return status;

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
        return attn_fail(err, ATTN_UNAVAILABLE, "flash: %s cannot run on this GPU or driver", c.name);
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
        return attn_fail(err, ATTN_FAILED, "flash: setup of %s: %s (%s:%d)", c.name, cudaGetErrorString(rc),
                         __FILE__, __LINE__);
    }
    *state = st;
    return ATTN_OK;
}

static int forward(void *state, const void *q, const void *k, const void *v, void *out, cudaStream_t stream,
                   attn_error *err)
{
    flash_state *st = state;
    const attn_shape *s = &st->shape;
    if (st->decode && st->grid == DECODE_GRID_BALANCED)
        CUDA_TRY(launch_flash_decode_balanced(st->balanced_config, q, k, v, out, st->lse, st->workspace, s->batch,
                                              s->heads, attn_kv_heads(s), attn_q_seq(s), s->seq, s->dim,
                                              st->balanced_blocks, stream),
                 err);
    else if (st->decode)
        CUDA_TRY(launch_flash_decode(st->config, q, k, v, out, st->lse, st->workspace, s->batch, s->heads,
                                     attn_kv_heads(s), attn_q_seq(s), s->seq, s->dim, st->split.splits,
                                     st->split.keys_per_split, stream),
                 err);
    else
        CUDA_TRY(launch_flash_fwd_gqa(st->config, q, k, v, out, st->lse, st->workspace, s->batch, s->heads,
                                      attn_kv_heads(s), s->seq, s->dim, 1, stream),
                 err);
    return ATTN_OK;
}

static void decode_facts(const flash_state *st, attn_facts *f)
{
    const attn_shape *s = &st->shape;
    const int rt = flash_decode_row_tiles(st->config, s->heads, attn_kv_heads(s), attn_q_seq(s));
    if (st->grid == DECODE_GRID_BALANCED) {
        const flash_decode_config *c = flash_decode_config_at(st->balanced_config);
        attn_fact_add(f, "kernel", NAN, "%s", c->kernel_name);
        attn_fact_add(f, "decode_grid", NAN, "balanced: %d blocks (one per resident slot), the key rounds of %d x %d x %d "
                      "tiles cut evenly, a cut tile merged by its last block (the fixed grid: %d split%s a tile; "
                      "decode_grid_choose_for)", st->balanced_blocks, s->batch, attn_kv_heads(s), rt, st->split.splits,
                      st->split.splits == 1 ? "" : "s");
        attn_fact_add(f, "split_count", st->balanced_pieces,
                      "at most %d piece%s per row tile on %d blocks (B x Hkv x row tiles = %d x %d x %d, %d "
                      "multiprocessors), merged in the kernel", st->balanced_pieces,
                      st->balanced_pieces == 1 ? "" : "s", st->balanced_blocks, s->batch, attn_kv_heads(s), rt,
                      attn_device_sms());
        attn_fact_add(f, "tile", NAN, "%d query rows (the group's %d heads x %d queries share each K/V load) x %d "
                      "keys per warp step", c->block_rows, attn_group(s), attn_q_seq(s), c->chunk_keys);
        attn_fact_add(f, "threads_per_block", c->threads, "%d", c->threads);
        attn_fact_add(f, "smem_bytes_per_block", (double)c->smem_bytes, "%zu (the Q tile and each warp's K/V ring)",
                      c->smem_bytes);
        attn_fact_add(f, "path", NAN, "%s", c->path);
        attn_fact_head_dim_padding(f, s->dim, c->head_dim);
        attn_fact_add(f, "workspace_bytes", (double)st->workspace_bytes, "%zu (the pieces' partial outputs and "
                      "log-sum-exps, fp32, and one arrival counter per tile)", st->workspace_bytes);
        return;
    }
    const flash_decode_config *c = flash_decode_config_at(st->config);
    const int merges = st->merges_in_kernel, combine = st->split.splits > 1 && !merges;
    attn_fact_add(f, "decode_grid", NAN, "fixed: row tile x split blocks%s (decode_grid_choose_for)",
                  st->split.splits == 1 ? ""
                  : merges          ? ", the splits merged by each tile's last block in the kernel"
                                    : ", the splits merged by the combine kernel");
    attn_fact_add(f, "kernel", NAN, "%s%s%s", c->kernel_name, combine ? " + " : "", combine ? c->combine_name : "");
    attn_fact_add(f, "split_count", st->split.splits,
                  "%d split%s of %d keys per row tile (B x Hkv x row tiles = %d x %d x %d blocks without a split, "
                  "%d multiprocessors)", st->split.splits, st->split.splits == 1 ? "" : "s", st->split.keys_per_split,
                  s->batch, attn_kv_heads(s), rt, attn_device_sms());
    attn_fact_add(f, "tile", NAN, "%d query rows (the group's %d heads x %d queries share each K/V load) x %d keys "
                  "per warp step", c->block_rows, attn_group(s), attn_q_seq(s), c->chunk_keys);
    attn_fact_add(f, "threads_per_block", c->threads, "%d", c->threads);
    attn_fact_add(f, "smem_bytes_per_block", (double)c->smem_bytes, "%zu (the Q tile and each warp's K/V ring)",
                  c->smem_bytes);
    attn_fact_add(f, "path", NAN, "%s", c->path);
    attn_fact_head_dim_padding(f, s->dim, c->head_dim);
    attn_fact_add(f, "workspace_bytes", (double)st->workspace_bytes, "%zu (the splits' partial outputs and "
                  "log-sum-exps, fp32)", st->workspace_bytes);
}

static void facts(void *state, attn_facts *f)
{
    flash_state *st = state;
    if (st->decode) {
        decode_facts(st, f);
        return;
    }
    if (attn_shape_is_gqa(&st->shape))
        attn_fact_add(f, "gqa", attn_group(&st->shape), "native: each of %d query heads per key/value head reads "
                      "its group's K/V, no copy", attn_group(&st->shape));
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
    if (attn_shape_is_decode(s)) {
        decode_run r;
        if (decode_plan(s, &r) < 0)
            return;
        const double lse = (double)s->batch * s->heads * attn_q_seq(s) * sizeof(float);
        /* Cut tiles write their partials and the last block reads them back (the counters: noise). */
        const double merged = decode_merges_inside(&r) ? 2.0 * decode_workspace_bytes(s, &r) : 0;
        attn_predict_gqa_fused(p, s, flash_decode_config_at(r.config)->head_dim, lse + merged, "split-KV kernel",
                               "attnprof_flash_decode_bf16", 1);
        /* kernels/flash_decode.cu: 16-row tiles of one key/value group's query rows */
        attn_predict_decode_tiles(p, s, flash_decode_config_at(r.config)->head_dim, 16, 1);
        if (decode_runs_combine(&r)) /* partial outputs written once, read once by the combine */
            prediction_add(p, "combine", "attnprof_flash_decode_combine", 1,
                           2.0 * flash_decode_workspace_bytes(s->batch, s->heads, attn_q_seq(s), s->dim, r.split.splits) +
                               attn_q_bytes(s) + lse, 0, PIPE_NONE);
        return;
    }
    const int config = flash_fwd_default_config(s->dim, cc_major, cc_minor);
    if (config < 0)
        return;
    const flash_fwd_config *c = flash_fwd_config_at(config);
    const double lse_bytes = (double)s->batch * s->heads * s->seq * sizeof(float);
    if (attn_shape_is_gqa(s)) {
        attn_predict_gqa_fused(p, s, c->head_dim, lse_bytes, "fused kernel", "attnprof_flash_fwd", 1);
        return;
    }
    prediction_fused_kernel(p, s, c->head_dim, c->block_m, c->block_n, lse_bytes, "attnprof_flash_fwd");
}


/* The backward (run --backward): the fused backward of fused_bwd.h (tensor cores at D 64 and 128, FP32 elsewhere), from the log-sum-exp this forward keeps. */
static int backward(void *state, const void *q, const void *k, const void *v, const void *out, const void *dout,
                    void *dq, void *dk, void *dv, void *workspace, cudaStream_t stream, attn_error *err)
{
    flash_state *st = state;
    return fused_bwd_run(&st->shape, q, k, v, out, dout, st->lse, dq, dk, dv, workspace, stream, err);
}

static double bwd_kept_bytes(const attn_shape *s) { return (double)s->batch * s->heads * s->seq * sizeof(float); }

const attn_variant variant_flash = {
    .name = "flash",
    .title = "Flash attention fused kernel (ours: TMA + wgmma on Hopper, FlashAttention-2 style elsewhere)",
    .what_changed = "one fused kernel: Q tiles against streamed K/V, exp2 online softmax; Hopper: TMA ring, wgmma, producer/consumer warpgroups",
    .expected_ops = 1,
    .expected_memcpy = 0,
    .expected_ops_for = expected_ops_for,
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
    .expected_bwd_ops = FUSED_BWD_OPS, /* delta, dK/dV, dQ */
    .bwd_kept_bytes = bwd_kept_bytes,
    .bwd_kept = "the float log-sum-exp per query row",
};
