/* recorder/gqa_decode: the shape rules of grouped-query attention and decode, the split-KV
 * kernel's split count (one wave of blocks), the FP64 reference with the causal mask aligned
 * to the end of the keys, and run.json's kv_heads and q_seq. No GPU. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gqa_decode.h"
#include "reference.h"
#include "run_info.h"
#include "run_json.h"

Test(gqa_shape, kv_heads_divide_the_query_heads_and_q_seq_is_at_most_the_keys)
{
    char why[256];
    attn_shape s = {.batch = 2, .heads = 32, .seq = 8192, .dim = 128, .kv_heads = 8, .q_seq = 1};
    cr_assert_eq(gqa_shape_check(&s, why, sizeof why), 0);
    s.kv_heads = 0, s.q_seq = 0; /* as many as heads, seq */
    cr_assert_eq(gqa_shape_check(&s, why, sizeof why), 0);
    s.kv_heads = 32;
    cr_assert_eq(gqa_shape_check(&s, why, sizeof why), 0);
    s.kv_heads = 1; /* multi-query */
    cr_assert_eq(gqa_shape_check(&s, why, sizeof why), 0);
    s.kv_heads = 3;
    cr_assert_eq(gqa_shape_check(&s, why, sizeof why), 1);
    cr_assert(strstr(why, "--kv-heads 3") && strstr(why, "--heads 32"), "%s", why);
    s.kv_heads = 64;
    cr_assert_eq(gqa_shape_check(&s, why, sizeof why), 1);
    s.kv_heads = 8, s.q_seq = 8193;
    cr_assert_eq(gqa_shape_check(&s, why, sizeof why), 1);
    cr_assert(strstr(why, "--q-seq 8193"), "%s", why);
    s.q_seq = 8192;
    cr_assert_eq(gqa_shape_check(&s, why, sizeof why), 0);
}

Test(gqa_shape, the_shape_text_names_kv_heads_and_q_seq_only_when_given)
{
    char t[96];
    attn_shape s = {.batch = 8, .heads = 16, .seq = 1024, .dim = 64};
    shape_text(&s, t, sizeof t);
    cr_assert_str_eq(t, "8x16x1024x64");
    s.kv_heads = 16; /* as many as the heads: multi-head */
    shape_text(&s, t, sizeof t);
    cr_assert_str_eq(t, "8x16x1024x64");
    s.kv_heads = 4;
    shape_text(&s, t, sizeof t);
    cr_assert_str_eq(t, "8x16x1024x64 (kv_heads 4)");
    s.q_seq = 1;
    shape_text(&s, t, sizeof t);
    cr_assert_str_eq(t, "8x16x1024x64 (kv_heads 4, q_seq 1)");
    s.kv_heads = 0;
    shape_text(&s, t, sizeof t);
    cr_assert_str_eq(t, "8x16x1024x64 (q_seq 1)");
}

Test(decode_split, no_split_when_the_tiles_fill_the_multiprocessors)
{
    /* 16 x 8 key/value heads, one row tile each: 128 blocks, 80% of 132 slots is 105.6. */
    decode_split d = decode_split_choose(128, 8192, 132, 128);
    cr_assert_eq(d.splits, 1);
    cr_assert_eq(d.keys_per_split, 8192);
}

Test(decode_split, as_many_splits_as_fit_in_one_wave)
{
    /* B = 1, 8 key/value heads, 131072 keys in 2048 blocks of 64, 132 slots: 16 splits make 128
     * blocks, one wave; 17 would make 136, two. */
    decode_split d = decode_split_choose(8, 131072, 132, 64);
    cr_assert_eq(d.splits, 16);
    cr_assert_eq(d.keys_per_split, 128 * 64);
    /* Two blocks per multiprocessor: 33 splits, 264 blocks. */
    d = decode_split_choose(8, 131072, 264, 64);
    cr_assert_eq(d.splits, 33);
    cr_assert_eq(d.keys_per_split, 63 * 64); /* ceil(2048 / 33) blocks */
    /* Two key blocks and one tile: at most two splits. */
    d = decode_split_choose(1, 128, 132, 64);
    cr_assert_eq(d.splits, 2);
    cr_assert_eq(d.keys_per_split, 64);
    /* 64 tiles on 132 slots: 2 splits (128 blocks). */
    d = decode_split_choose(64, 32768, 132, 64);
    cr_assert_eq(d.splits, 2);
}

Test(decode_split, every_choice_covers_the_keys_in_whole_blocks_at_most_128_splits)
{
    const int seqs[] = {1, 31, 128, 129, 777, 4096, 4099, 65536, 131072, 1 << 20};
    const long long tiles[] = {1, 2, 7, 8, 64, 100, 512};
    const int slots[] = {1, 108, 132, 264};
    for (size_t a = 0; a < sizeof seqs / sizeof *seqs; a++)
        for (size_t b = 0; b < sizeof tiles / sizeof *tiles; b++)
            for (size_t c = 0; c < sizeof slots / sizeof *slots; c++) {
                decode_split d = decode_split_choose(tiles[b], seqs[a], slots[c], 64);
                cr_assert(d.splits >= 1 && d.splits <= 128, "%d splits", d.splits);
                cr_assert_eq(d.keys_per_split % 64, 0);
                cr_assert(d.splits == 1 || tiles[b] * d.splits <= slots[c], "more than one wave");
                cr_assert_geq((long long)d.splits * d.keys_per_split, seqs[a]);
                cr_assert_lt((long long)(d.splits - 1) * d.keys_per_split, seqs[a], "an empty split");
                if (tiles[b] >= 0.8 * slots[c])
                    cr_assert_eq(d.splits, 1);
            }
}

/* The six decode points of the H200 table (132 SMs; D = 128 one block per SM, D = 64 two): the
 * grid each ran fastest on in the same run (bench/results/2026-12-03-decode-balanced.md). */
Test(decode_grid, the_faster_grid_of_the_h200_table_at_each_point)
{
    struct {
        int B, Hq, Hkv, L, D, slots;
        decode_grid want;
    } pts[] = {
        {16, 32, 8, 8192, 128, 132, DECODE_GRID_FIXED},     /* 1 split, 1 wave */
        {64, 32, 8, 4096, 128, 132, DECODE_GRID_FIXED},     /* 4 waves */
        {1, 32, 8, 131072, 128, 132, DECODE_GRID_BALANCED}, /* 16 splits */
        {8, 64, 8, 32768, 128, 132, DECODE_GRID_FIXED},     /* 2 splits */
        {32, 32, 32, 4096, 128, 132, DECODE_GRID_BALANCED}, /* 8 waves of one-row tiles */
        {4, 32, 4, 16384, 64, 264, DECODE_GRID_FIXED},      /* 16 splits, but 64 MiB */
    };
    for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
        const long long rows = (long long)pts[i].Hq / pts[i].Hkv, tiles = (long long)pts[i].B * pts[i].Hkv * ((rows + 15) / 16);
        const double kv = 2.0 * pts[i].B * pts[i].Hkv * pts[i].L * pts[i].D * 2;
        const decode_split d = decode_split_choose(tiles, pts[i].L, pts[i].slots, 64);
        cr_assert_eq(decode_grid_choose(tiles, d, pts[i].slots, kv), pts[i].want, "point %zu (%d splits)", i,
                     d.splits);
    }
    /* Nothing to run or no slots: the fixed grid. */
    cr_assert_eq(decode_grid_choose(0, (decode_split){1, 64}, 132, 1e12), DECODE_GRID_FIXED);
    cr_assert_eq(decode_grid_choose(8, (decode_split){16, 64}, 0, 1e12), DECODE_GRID_FIXED);
}

/* The TMA ring (sm_90, D 64 and 128): the fixed grid at every point, also where decode_grid_choose takes
 * the balanced one (bench/results/2026-12-04-decode-persistent.md); other configurations as decode_grid_choose. */
Test(decode_grid, the_fixed_grid_on_the_tma_ring)
{
    const long long tiles[] = {128, 512, 8, 64, 1024, 16};
    const int seqs[] = {8192, 4096, 131072, 32768, 4096, 16384}, slots[] = {132, 132, 132, 132, 132, 264};
    for (size_t i = 0; i < sizeof tiles / sizeof *tiles; i++) {
        const decode_split d = decode_split_choose(tiles[i], seqs[i], slots[i], 64);
        cr_assert_eq(decode_grid_choose_for(1, tiles[i], d, slots[i], 1e12), DECODE_GRID_FIXED, "point %zu", i);
        cr_assert_eq(decode_grid_choose_for(0, tiles[i], d, slots[i], 1e12),
                     decode_grid_choose(tiles[i], d, slots[i], 1e12), "point %zu", i);
    }
    cr_assert_eq(decode_grid_choose_for(0, 8, decode_split_choose(8, 131072, 132, 64), 132, 1e12), DECODE_GRID_BALANCED);
}

static void fill(uint16_t *x, size_t n, uint64_t seed)
{
    rng r;
    rng_seed(&r, seed);
    fill_normal_bf16(x, n, &r);
}

/* Decode's rows are the last rows of a prefill over the same keys: the mask aligned to the end of
 * the keys gives query i of q_seq the keys 0 .. i + S - q_seq, as prefill row i + S - q_seq has. */
Test(reference_decode, decode_rows_equal_the_last_rows_of_the_full_causal_head)
{
    enum { S = 37, D = 24, SQ = 5 };
    uint16_t q[S * D], k[S * D], v[S * D];
    fill(q, S * D, 1), fill(k, S * D, 2), fill(v, S * D, 3);
    static double full[S * D], dec[SQ * D];
    reference_attention_head(q, k, v, S, D, NULL, full);
    int rows[SQ];
    for (int i = 0; i < SQ; i++)
        rows[i] = i;
    reference_job job = {q + (S - SQ) * D, k, v, SQ, D, NULL, rows, SQ, dec, S};
    reference_run(&job, 1, 2);
    for (int i = 0; i < SQ * D; i++)
        cr_assert_float_eq(dec[i], full[(S - SQ) * D + i], 1e-12, "element %d", i);
}

/* One query sees every key: the softmax over all of them, computed here the plain way. */
Test(reference_decode, one_query_attends_to_every_key)
{
    enum { S = 301, D = 16 };
    uint16_t q[D], k[S * D], v[S * D];
    fill(q, D, 4), fill(k, S * D, 5), fill(v, S * D, 6);
    double out[D], want[D] = {0}, p[S], mx = -INFINITY, sum = 0;
    int row = 0;
    reference_job job = {q, k, v, 1, D, NULL, &row, 1, out, S};
    reference_run(&job, 1, 1);
    for (int j = 0; j < S; j++) {
        double s = 0;
        for (int d = 0; d < D; d++)
            s += (double)bf16_to_float(q[d]) * bf16_to_float(k[j * D + d]);
        p[j] = s / sqrt((double)D);
        mx = p[j] > mx ? p[j] : mx;
    }
    for (int j = 0; j < S; j++)
        sum += (p[j] = exp(p[j] - mx));
    for (int j = 0; j < S; j++)
        for (int d = 0; d < D; d++)
            want[d] += p[j] / sum * bf16_to_float(v[j * D + d]);
    for (int d = 0; d < D; d++)
        cr_assert_float_eq(out[d], want[d], 1e-12 * (1 + fabs(want[d])), "column %d", d);
}

/* A [q_seq, S] mask: query rows with every key masked give NaN, the others follow the mask. */
Test(reference_decode, a_rectangular_mask_is_read_per_query_row)
{
    enum { S = 20, D = 8, SQ = 3 };
    uint16_t q[SQ * D], k[S * D], v[S * D];
    fill(q, SQ * D, 7), fill(k, S * D, 8), fill(v, S * D, 9);
    uint8_t mask[SQ * S];
    for (int i = 0; i < SQ; i++)
        for (int j = 0; j < S; j++)
            mask[i * S + j] = i == 1 ? 1 : j > i + S - SQ; /* row 1 fully masked, the others causal */
    double masked[SQ * D], causal[SQ * D];
    int rows[SQ] = {0, 1, 2};
    reference_job a = {q, k, v, SQ, D, mask, rows, SQ, masked, S}, b = {q, k, v, SQ, D, NULL, rows, SQ, causal, S};
    reference_run(&a, 1, 1);
    reference_run(&b, 1, 1);
    for (int d = 0; d < D; d++) {
        cr_assert(isnan(masked[1 * D + d]));
        cr_assert_float_eq(masked[0 * D + d], causal[0 * D + d], 1e-15);
        cr_assert_float_eq(masked[2 * D + d], causal[2 * D + d], 1e-15);
    }
}

/* run.json writes kv_heads and q_seq when given (and only then) and reads them back; a kv_heads
 * that does not divide the heads is refused as inconsistent. */
Test(run_json_gqa, kv_heads_and_q_seq_round_trip_and_are_checked)
{
    static run_info r, back;
    char err[512] = "", path[] = "/tmp/attnprof-gqa-XXXXXX";
    cr_assert_eq(run_info_read_json(&r, "tests/fixtures/h200-6var/run.json", err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.shape.kv_heads, 0);
    cr_assert_eq(r.shape.q_seq, 0);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(run_info_write_json(&r, path, err, sizeof err), 0, "%s", err);
    json_t *doc = json_load_file(path, 0, NULL);
    cr_assert_not_null(doc);
    json_t *shape = json_object_get(doc, "shape");
    cr_assert_null(json_object_get(shape, "kv_heads"), "a multi-head run writes no kv_heads");
    cr_assert_null(json_object_get(shape, "q_seq"));
    json_decref(doc);

    r.shape.kv_heads = r.shape.heads / 4;
    r.shape.q_seq = 1;
    cr_assert_eq(run_info_write_json(&r, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_info_read_json(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.shape.kv_heads, r.shape.heads / 4);
    cr_assert_eq(back.shape.q_seq, 1);
    cr_assert_eq(attn_group(&back.shape), 4);

    r.shape.kv_heads = r.shape.heads - 1; /* does not divide */
    cr_assert_eq(run_info_write_json(&r, path, err, sizeof err), 0, "%s", err);
    cr_assert_neq(run_info_read_json(&back, path, err, sizeof err), 0);
    cr_assert(strstr(err, "kv_heads"), "%s", err);
    r.shape.kv_heads = 0;
    r.shape.q_seq = r.shape.seq + 1;
    cr_assert_eq(run_info_write_json(&r, path, err, sizeof err), 0, "%s", err);
    cr_assert_neq(run_info_read_json(&back, path, err, sizeof err), 0);
    cr_assert(strstr(err, "q_seq"), "%s", err);
    unlink(path);
}
