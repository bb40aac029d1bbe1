/* Grouped-query attention and decode as the recorder plans them, in plain C (tested without a
 * GPU): whether a shape is one the batch can take, and how the split-KV decode kernel cuts the
 * keys (kernels/flash_decode.h). */
#ifndef ATTNPROF_GQA_DECODE_H
#define ATTNPROF_GQA_DECODE_H

#include <stddef.h>

#include "attn_types.h"

/* 0 when --kv-heads and --q-seq make a shape (kv_heads divides heads; 1 <= q_seq <= seq; 0 in
 * either: as heads / seq), else 1 with the reason and what to change in why. */
int gqa_shape_check(const attn_shape *s, char *why, size_t why_len);

/* The shape as the recorder's messages name it: "8x16x1024x64", and for grouped-query or
 * decode shapes "16x32x8192x128 (kv_heads 8, q_seq 1)". */
void shape_text(const attn_shape *s, char *out, size_t n);

/* How the split-KV kernel cuts the keys of one row tile. */
typedef struct decode_split {
    int splits;         /* blocks per row tile, each with its own range of keys */
    int keys_per_split; /* a multiple of block_keys; splits = ceil(seq / keys_per_split) */
} decode_split;

/* The split count from the work (tiles: B × Hkv × row tiles, blocks without a split), the keys
 * and the GPU (slots: multiprocessors × resident blocks of the kernel): none when the tiles alone
 * fill 80% of the slots (FlashAttention-2's threshold, num_splits_heuristic); otherwise as many
 * as still fit in one wave (slots / tiles), at most 128 and at most one split per key block of
 * block_keys keys. One wave, not FlashAttention-2's fewest splits within 85% of the best wave
 * efficiency: a decode block streams its keys and its combine is small, and on the H200 a
 * second wave cost more than it saved (bench/RESULTS.md, GQA and decode). */
decode_split decode_split_choose(long long tiles, int seq, int slots, int block_keys);

/* Which grid the split-KV kernel runs (kernels/flash_decode.h): the fixed one (block = row tile
 * x split, a combine kernel when split) or the balanced one (one block per resident slot, the key
 * rounds of all tiles cut evenly, cut tiles merged by their last block, one kernel). */
typedef enum decode_grid { DECODE_GRID_FIXED = 0, DECODE_GRID_BALANCED = 1 } decode_grid;

/* Thresholds of decode_grid_choose, from the H200's same-run timings of both grids at the six
 * decode points (bench/results/2026-12-03-decode-balanced.md). */
#define DECODE_BALANCED_MIN_SPLITS 8           /* the fixed grid cuts each tile this many ways or more */
#define DECODE_BALANCED_MIN_WAVES 6            /* or needs this many waves of whole tiles */
#define DECODE_BALANCED_MIN_KV_BYTES (128.0 * 1024 * 1024) /* and K+V this large: not launch-bound */

/* The balanced grid when the fixed one (split: decode_split_choose's for these tiles and slots)
 * cuts every tile into DECODE_BALANCED_MIN_SPLITS or more splits (few B x Hkv tiles over a long
 * cache: 1 x 32/8 x 131072 ran 182.2 us fixed, 149.1 balanced) or needs DECODE_BALANCED_MIN_WAVES
 * or more waves of short blocks (32 x 32/32 x 4096: 531.6 against 517.4), and the K+V bytes are
 * at least DECODE_BALANCED_MIN_KV_BYTES. Otherwise the fixed grid: where whole tiles already fill
 * the multiprocessors (1 to 4 waves, at most a few splits) the balanced grid cuts nearly every
 * tile in two and its merges cost 2-8% (16 x 32/8 x 8192: 137.9 against 148.8), and a launch-bound
 * decode (64 MiB: 38.0 against 39.5) gains nothing from it. */
decode_grid decode_grid_choose(long long tiles, decode_split split, int slots, double kv_bytes);

/* The grid of a configuration: on the TMA ring (tma_ring: sm_90 at D 64 and 128) always the fixed one,
 * elsewhere decode_grid_choose's. With the TMA ring and the combine's loads batched the fixed grid ran
 * fastest at every decode point on the H200, the balanced and the persistent grid (kernels/flash_decode.h,
 * equal ranges per block that cut the tiles) slower: 1 x 32/8 x 131072 fixed 141.1 us, persistent 141.9,
 * balanced 146.8; 32 x 32/32 x 4096 508.1, 514.2, 511.0; 16 x 32/8 x 8192 133.0, 138.8, 148.5
 * (bench/results/2026-12-04-decode-persistent.md). */
decode_grid decode_grid_choose_for(int tma_ring, long long tiles, decode_split split, int slots, double kv_bytes);

#endif
