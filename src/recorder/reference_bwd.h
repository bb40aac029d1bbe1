/* FP64 CPU reference of the attention backward (scale 1/sqrt(D)), causal or not, for one head: given
 * q, k, v and the incoming gradient dout ([S, D] bf16 each), dQ of chosen query rows and dK, dV
 * of chosen key rows. The rows' gradients need the log-sum-exp and delta_i = dO_i · O_i of every
 * query row (O(S² · D) per head, spread over threads); the chosen rows then cost
 * O(rows · S · D). Pure code, unit-tested (tests/test_reference_bwd.c). */
#ifndef ATTNPROF_REFERENCE_BWD_H
#define ATTNPROF_REFERENCE_BWD_H

#include <stdint.h>

typedef struct reference_bwd_job {
    const uint16_t *q, *k, *v, *dout; /* [seq, dim] bf16 */
    int seq, dim;
    int causal; /* 1: query row i sees keys 0..i (attnprof's run); 0: every key (the bench's non-causal check) */
    const int *rows; /* ascending rows in [0, seq): query rows for dq, key rows for dk and dv */
    int n_rows;
    double *dq, *dk, *dv; /* [n_rows, dim] each */
} reference_bwd_job;

/* One head on `threads` threads (the calling one included); the result does not depend on
 * the thread count. 0, or -1 when out of memory. */
int reference_backward_head(const reference_bwd_job *job, int threads);

#endif
