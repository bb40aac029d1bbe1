/* Naive, in-place fill: the series' step-by-step attention (see unfused.h), with the mask
 * applied in place, so no copy of the [B,H,S,S] scores is made */
#include "unfused.h"

static size_t device_bytes(const attn_shape *s) { return unfused_device_bytes(s, 1); }

static int setup(void **state, const attn_shape *s, const attn_options *opt, cudaStream_t st, attn_error *err)
{
    (void)opt;
    return unfused_setup(state, s, 1, st, err);
}

static int expected_ops_for(const attn_shape *s, int *n_memcpy) { return unfused_expected_ops(s, 1, n_memcpy); }

static void predict(const attn_shape *s, int cc_major, int cc_minor, attn_prediction *p)
{
    (void)cc_major;
    (void)cc_minor;
    unfused_predict(s, 1, p);
}

const attn_variant variant_naive_inplace = {
    .name = "naive_inplace",
    .title = "Naive, in-place fill",
    .what_changed = "masked_fill_ in place: the scores copy is gone",
    .expected_ops = 5, /* GEMM, scale, fill, softmax, GEMM */
    .expected_memcpy = 0,
    .expected_ops_for = expected_ops_for,
    .check_shape = unfused_check_shape,
    .device_bytes = device_bytes,
    .setup = setup,
    .forward = unfused_forward,
    .forward_masked = unfused_forward_masked,
    .facts = unfused_facts,
    .teardown = unfused_teardown,
    .predict = predict,
    .backward = unfused_backward,
    .bwd_check_shape = unfused_bwd_check_shape,
    .expected_bwd_ops = UNFUSED_BWD_OPS, /* dP, dV GEMMs, softmax backward, masked_fill backward, scale, dQ, dK GEMMs */
    .bwd_kept_bytes = unfused_bwd_kept_bytes,
    .bwd_kept = "P, the bf16 S×S probabilities of every head, and the bool S×S mask",
};
