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

#endif
