/* The FP64 reference, bf16 conversion and the seeded generator. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "reference.h"

Test(reference, bf16_rounds_to_nearest_even)
{
    cr_assert_eq(float_to_bf16(1.0f), 0x3f80);
    cr_assert_eq(bf16_to_float(0x3f80), 1.0f);
    cr_assert_eq(float_to_bf16(-2.5f), 0xc020);
    /* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0). */
    cr_assert_eq(float_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    cr_assert_eq(float_to_bf16(1.0f + 0x1p-8f + 0x1p-12f), 0x3f81);
    cr_assert(isnan(bf16_to_float(float_to_bf16(NAN))));
    cr_assert(isinf(bf16_to_float(float_to_bf16(INFINITY))));
}

/* S = 2, D = 1: row 0 sees only key 0 → out = v0; row 1 softmax over [q1·k0, q1·k1]. */
Test(reference, two_tokens_by_hand)
{
    uint16_t q[2] = {float_to_bf16(1.0f), float_to_bf16(2.0f)};
    uint16_t k[2] = {float_to_bf16(0.5f), float_to_bf16(-1.0f)};
    uint16_t v[2] = {float_to_bf16(3.0f), float_to_bf16(-4.0f)};
    double out[2];
    reference_attention_head(q, k, v, 2, 1, NULL, out);
    cr_assert_float_eq(out[0], 3.0, 1e-12);
    /* scores: 2*0.5 = 1, 2*-1 = -2 (scale 1/sqrt(1)); weights e^1, e^-2 */
    double w0 = exp(1.0), w1 = exp(-2.0);
    cr_assert_float_eq(out[1], (3.0 * w0 - 4.0 * w1) / (w0 + w1), 1e-12);
}

Test(reference, scale_is_one_over_sqrt_d)
{
    /* D = 4, S = 2, q = k = all ones: scores 4 * 1/sqrt(4) = 2 on both keys → equal weights. */
    uint16_t q[8], k[8], v[8];
    for (int i = 0; i < 8; i++) {
        q[i] = k[i] = float_to_bf16(1.0f);
        v[i] = float_to_bf16((float)i);
    }
    double out[8];
    reference_attention_head(q, k, v, 2, 4, NULL, out);
    for (int d = 0; d < 4; d++)
        cr_assert_float_eq(out[4 + d], (d + (4.0 + d)) / 2, 1e-12);
}

Test(reference, fully_masked_row_is_nan)
{
    uint16_t q[2] = {float_to_bf16(1.0f), float_to_bf16(1.0f)}, k[2], v[2];
    memcpy(k, q, sizeof q);
    memcpy(v, q, sizeof q);
    uint8_t mask[4] = {1, 1, 0, 1}; /* row 0: everything masked */
    double out[2];
    reference_attention_head(q, k, v, 2, 1, mask, out);
    cr_assert(isnan(out[0]));
    cr_assert_float_eq(out[1], 1.0, 1e-12);
}

Test(reference, relative_error)
{
    uint16_t got[2] = {float_to_bf16(3.0f), float_to_bf16(4.0f)};
    double ref[2] = {3.0, 4.0};
    cr_assert_float_eq(relative_error_bf16(got, ref, 2), 0.0, 1e-15);
    double off[2] = {3.0, 5.0};
    cr_assert_float_eq(relative_error_bf16(got, off, 2), 1.0 / sqrt(34.0), 1e-12);
    uint16_t nan[2] = {float_to_bf16(NAN), float_to_bf16(1.0f)};
    cr_assert(isnan(relative_error_bf16(nan, ref, 2)), "NaN never passes");
}

Test(reference, seeded_normals_are_reproducible_and_plausible)
{
    rng a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    double sum = 0, sq = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double x = rng_normal(&a);
        cr_assert_eq(x, rng_normal(&b));
        sum += x;
        sq += x * x;
    }
    cr_assert(fabs(sum / n) < 0.01, "mean %g", sum / n);
    cr_assert(fabs(sq / n - 1.0) < 0.02, "variance %g", sq / n);
    rng_seed(&b, 43);
    rng_seed(&a, 42);
    cr_assert_neq(rng_normal(&a), rng_normal(&b));
}

/* ---- The sampled, blocked, threaded check ---- */

/* A second FP64 reference, written the plain way (one row at a time, one accumulator), to
 * hold the blocked one against. */
static void plain_reference_row(const uint16_t *q, const uint16_t *k, const uint16_t *v, int S, int D, int i,
                                double *o)
{
    double p[256], mx = -INFINITY, sum = 0;
    for (int j = 0; j <= i; j++) {
        double s = 0;
        for (int d = 0; d < D; d++)
            s += (double)bf16_to_float(q[i * D + d]) * bf16_to_float(k[j * D + d]);
        p[j] = s / sqrt((double)D);
        mx = p[j] > mx ? p[j] : mx;
    }
    for (int j = 0; j <= i; j++)
        sum += p[j] = exp(p[j] - mx);
    for (int d = 0; d < D; d++) {
        o[d] = 0;
        for (int j = 0; j <= i; j++)
            o[d] += p[j] / sum * bf16_to_float(v[j * D + d]);
    }
}

static void random_head(uint16_t *x, size_t n, uint64_t seed)
{
    rng r;
    rng_seed(&r, seed);
    fill_normal_bf16(x, n, &r);
}

Test(reference, blocked_rows_match_a_plain_reference)
{
    enum { S = 200, D = 72 }; /* neither a multiple of the row block nor of the 4 lanes */
    static uint16_t q[S * D], k[S * D], v[S * D];
    random_head(q, S * D, 1);
    random_head(k, S * D, 2);
    random_head(v, S * D, 3);
    static double out[S * D];
    reference_attention_head(q, k, v, S, D, NULL, out);
    for (int i = 0; i < S; i++) {
        double o[D];
        plain_reference_row(q, k, v, S, D, i, o);
        for (int d = 0; d < D; d++)
            cr_assert(fabs(out[i * D + d] - o[d]) <= 1e-12 * (1 + fabs(o[d])), "row %d dim %d: %.17g vs %.17g", i,
                      d, out[i * D + d], o[d]);
    }
}

/* A row's value does not depend on which rows share its block, nor on the thread count. */
Test(reference, chosen_rows_and_threads_give_the_same_bits)
{
    enum { S = 300, D = 64 };
    static uint16_t q[S * D], k[S * D], v[S * D];
    random_head(q, S * D, 4);
    random_head(k, S * D, 5);
    random_head(v, S * D, 6);
    static double all[S * D];
    reference_attention_head(q, k, v, S, D, NULL, all);
    int rows[] = {0, 1, 17, 63, 64, 150, 298, 299};
    int n = (int)(sizeof rows / sizeof rows[0]);
    double some[8 * D];
    reference_attention_rows(q, k, v, S, D, NULL, rows, n, some);
    for (int r = 0; r < n; r++)
        cr_assert(!memcmp(some + r * D, all + rows[r] * D, sizeof(double) * D), "row %d differs", rows[r]);
    static double t1[S * D], t5[S * D];
    int every[S];
    for (int i = 0; i < S; i++)
        every[i] = i;
    reference_job job1 = {q, k, v, S, D, NULL, every, S, t1, S}, job5 = {q, k, v, S, D, NULL, every, S, t5, S};
    cr_assert_eq(reference_run(&job1, 1, 1), 1);
    cr_assert_eq(reference_run(&job5, 1, 5), 5, "19 blocks of rows keep 5 threads busy");
    cr_assert(!memcmp(t1, t5, sizeof t1), "the thread count changed the result");
    cr_assert(!memcmp(t1, all, sizeof t1));
}

Test(reference, check_rows_cover_both_ends_and_every_64_row_tile)
{
    static int rows[16384];
    cr_assert_eq(reference_check_rows(2048, 0, 0, rows), 2048, "0: every row");
    cr_assert_eq(reference_check_rows(500, REFERENCE_DEFAULT_ROWS, 0, rows), 500, "S below the count: every row");
    int n = reference_check_rows(16384, REFERENCE_DEFAULT_ROWS, 7, rows);
    cr_assert_eq(n, REFERENCE_DEFAULT_ROWS);
    for (int i = 0; i < REFERENCE_EDGE_ROWS; i++) {
        cr_assert_eq(rows[i], i);
        cr_assert_eq(rows[n - 1 - i], 16383 - i);
    }
    int tiles[16384 / 64] = {0};
    for (int i = 0; i < n; i++) {
        cr_assert(i == 0 || rows[i] > rows[i - 1], "rows ascend and are distinct (%d after %d)", rows[i],
                  rows[i - 1]);
        tiles[rows[i] / 64]++;
    }
    for (int t = 0; t < 16384 / 64; t++)
        cr_assert(tiles[t] > 0, "query tile %d (rows %d-%d) holds no checked row", t, t * 64, t * 64 + 63);
    static int again[16384], other[16384];
    cr_assert_eq(reference_check_rows(16384, REFERENCE_DEFAULT_ROWS, 7, again), n);
    cr_assert(!memcmp(rows, again, sizeof(int) * n), "the same seed picks the same rows");
    reference_check_rows(16384, REFERENCE_DEFAULT_ROWS, 8, other);
    cr_assert(memcmp(rows, other, sizeof(int) * n), "another seed picks other rows");
    /* Few rows asked for: a quarter at each end, still ascending and in range. */
    n = reference_check_rows(1000, 40, 0, rows);
    cr_assert_eq(n, 40);
    cr_assert(rows[0] == 0 && rows[9] == 9 && rows[39] == 999 && rows[30] == 990);
    for (int i = 1; i < n; i++)
        cr_assert(rows[i] > rows[i - 1]);
}

Test(reference, relative_error_over_rows)
{
    enum { S = 4, D = 2 };
    uint16_t got[S * D];
    for (int i = 0; i < S * D; i++)
        got[i] = float_to_bf16((float)i);
    int rows[2] = {1, 3};
    double ref[2 * D] = {2, 3, 6, 8}; /* row 3 off by one in its last value */
    cr_assert_float_eq(relative_error_rows_bf16(got, D, rows, 2, ref), 1.0 / sqrt(4 + 9 + 36 + 64.0), 1e-12);
    got[2] = float_to_bf16(NAN);
    cr_assert(isnan(relative_error_rows_bf16(got, D, rows, 2, ref)), "NaN in a checked row never passes");
}

/* The threaded generator draws the sequence one thread draws, across chunk boundaries. */
Test(reference, threaded_normals_are_the_same_sequence)
{
    const size_t n = (1u << 22) + 1001; /* past one chunk */
    uint16_t *a = malloc(n * 2), *b = malloc(n * 2);
    cr_assert(a && b);
    rng ra, rb;
    rng_seed(&ra, 9);
    rng_seed(&rb, 9);
    fill_normal_bf16(a, n, &ra);
    fill_normal_bf16_threads(b, n, &rb, 3);
    cr_assert(!memcmp(a, b, n * 2), "3 threads drew other values than 1");
    cr_assert_eq(rng_normal(&ra), rng_normal(&rb), "and left the generator in the same state");
    free(a);
    free(b);
}
