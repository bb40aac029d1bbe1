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
