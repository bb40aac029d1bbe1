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
 * and the GPU (slots: multiprocessors × resident blocks of the kernel), by FlashAttention-2's
 * rule (num_splits_heuristic): none when the tiles alone fill 80% of the slots; otherwise the
 * fewest splits whose wave efficiency (waves / whole waves) is within 85% of the best, at most
 * 128, the slots and the key blocks of block_keys keys each; a count that leaves the blocks per
 * split as they were for one fewer is never taken. */
decode_split decode_split_choose(long long tiles, int seq, int slots, int block_keys);

#endif
