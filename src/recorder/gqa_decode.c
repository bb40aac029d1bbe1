/* The shape rules of grouped-query attention and decode, and the split-KV kernel's split count
 * (gqa_decode.h): plain C, no CUDA, so the unit tests check them without a GPU. */
#include "gqa_decode.h"

#include <stdio.h>

int gqa_shape_check(const attn_shape *s, char *why, size_t why_len)
{
    if (s->kv_heads < 0 || s->q_seq < 0) {
        snprintf(why, why_len, "--kv-heads and --q-seq must be positive");
        return 1;
    }
    if (s->kv_heads > 0 && (s->kv_heads > s->heads || s->heads % s->kv_heads != 0)) {
        snprintf(why, why_len, "--kv-heads %d does not divide --heads %d; give a divisor of the query heads (1: MQA)",
                 s->kv_heads, s->heads);
        return 1;
    }
    if (s->q_seq > 0 && s->q_seq > s->seq) {
        snprintf(why, why_len,
                 "--q-seq %d exceeds --seq %d; --seq is the keys of the cache, --q-seq the new queries (at most as many)",
                 s->q_seq, s->seq);
        return 1;
    }
    return 0;
}

void shape_text(const attn_shape *s, char *out, size_t n)
{
    int len = snprintf(out, n, "%dx%dx%dx%d", s->batch, s->heads, s->seq, s->dim);
    if (len < 0 || (size_t)len >= n || (!attn_shape_is_gqa(s) && !attn_shape_is_decode(s)))
        return;
    if (attn_shape_is_gqa(s) && attn_shape_is_decode(s))
        snprintf(out + len, n - (size_t)len, " (kv_heads %d, q_seq %d)", attn_kv_heads(s), attn_q_seq(s));
    else if (attn_shape_is_gqa(s))
        snprintf(out + len, n - (size_t)len, " (kv_heads %d)", attn_kv_heads(s));
    else
        snprintf(out + len, n - (size_t)len, " (q_seq %d)", attn_q_seq(s));
}

decode_split decode_split_choose(long long tiles, int seq, int slots, int block_keys)
{
    decode_split d = {1, 0};
    if (block_keys < 1)
        block_keys = 1;
    const int n_blocks = seq > 0 ? (seq + block_keys - 1) / block_keys : 1;
    d.keys_per_split = n_blocks * block_keys;
    if (tiles < 1 || slots < 1 || seq < 1 || tiles >= 0.8 * slots)
        return d;
    long long s = slots / tiles; /* the most splits that still fit in one wave */
    if (s > 128)
        s = 128;
    if (s > n_blocks)
        s = n_blocks;
    if (s < 1)
        s = 1;
    d.keys_per_split = (int)((n_blocks + s - 1) / s) * block_keys;
    d.splits = (seq + d.keys_per_split - 1) / d.keys_per_split;
    return d;
}

decode_grid decode_grid_choose(long long tiles, decode_split split, int slots, double kv_bytes)
{
    if (tiles < 1 || slots < 1 || kv_bytes < DECODE_BALANCED_MIN_KV_BYTES)
        return DECODE_GRID_FIXED;
    const long long blocks = tiles * (split.splits > 0 ? split.splits : 1);
    const long long waves = (blocks + slots - 1) / slots;
    if (split.splits >= DECODE_BALANCED_MIN_SPLITS || waves >= DECODE_BALANCED_MIN_WAVES)
        return DECODE_GRID_BALANCED;
    return DECODE_GRID_FIXED;
}

decode_grid decode_grid_choose_for(int tma_ring, long long tiles, decode_split split, int slots, double kv_bytes)
{
    return tma_ring ? DECODE_GRID_FIXED : decode_grid_choose(tiles, split, slots, kv_bytes);
}
