/* The series' hand-written attention, step by step as in PyTorch eager mode:
 * scores = Q·Kᵀ (cuBLAS) → scores·scale → masked_fill(causal, -inf) → softmax → ·V.
 * naive.c and naive_inplace.c differ only in how the fill is done. */
#ifndef ATTNPROF_UNFUSED_H
#define ATTNPROF_UNFUSED_H

#include "variant.h"

int unfused_check_shape(const attn_shape *shape, attn_error *why);
size_t unfused_device_bytes(const attn_shape *shape, int inplace);
int unfused_setup(void **state, const attn_shape *shape, int inplace, cudaStream_t stream, attn_error *err);
int unfused_forward(void *state, const void *q, const void *k, const void *v, void *out, cudaStream_t stream,
                    attn_error *err);
int unfused_forward_masked(void *state, const void *q, const void *k, const void *v, void *out,
                           const uint8_t *mask, cudaStream_t stream, attn_error *err);
void unfused_facts(void *state, attn_facts *facts);
void unfused_teardown(void *state);
void unfused_predict(const attn_shape *s, int inplace, attn_prediction *p);
/* GPU operations per forward at this shape: 6 (naive) or 5 (in place), plus the two repeat_kv
 * copies of a grouped-query shape; *n_memcpy the masked_fill clone's. */
int unfused_expected_ops(const attn_shape *s, int inplace, int *n_memcpy);

/* The backward (run --backward): PyTorch eager autograd's chain for this code, 7 kernels. */
#define UNFUSED_BWD_OPS 7
int unfused_bwd_check_shape(const attn_shape *s, attn_error *why);
int unfused_backward(void *state, const void *q, const void *k, const void *v, const void *out, const void *dout,
                     void *dq, void *dk, void *dv, void *workspace, cudaStream_t stream, attn_error *err);
double unfused_bwd_kept_bytes(const attn_shape *s);

#endif
