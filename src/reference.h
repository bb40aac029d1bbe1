/* FP64 CPU reference for causal attention, the bf16 conversions and the seeded
 * normal generator the runner draws inputs from. Pure code, unit-tested. */
#ifndef ATTNPROF_REFERENCE_H
#define ATTNPROF_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f); /* round to nearest even; NaN stays NaN */

/* xoshiro-style generator: the same seed gives the same inputs on every machine. */
typedef struct rng {
    uint64_t s[4];
} rng;
void rng_seed(rng *r, uint64_t seed);
double rng_normal(rng *r);
void fill_normal_bf16(uint16_t *x, size_t n, rng *r);

/* One head: q, k, v are [S, D] bf16; out [S, D] double. mask (may be NULL:
 * causal) is [S, S], nonzero = masked out. A fully masked row gives NaN, as a
 * softmax over no keys has no value. */
void reference_attention_head(const uint16_t *q, const uint16_t *k, const uint16_t *v, int S, int D,
                              const uint8_t *mask, double *out);

/* ‖got − ref‖_F / ‖ref‖_F over n values (got is bf16). NaN anywhere gives NaN. */
double relative_error_bf16(const uint16_t *got, const double *ref, size_t n);

#endif
