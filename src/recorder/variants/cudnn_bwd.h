/* The cudnn variant's backward (run --backward): cuDNN's fused SDPA backward through the
 * backend API, from the stats (log-sum-exp per query row) its forward saved. */
#ifndef ATTNPROF_CUDNN_BWD_H
#define ATTNPROF_CUDNN_BWD_H

#include "cudnn_sdpa.h"

typedef struct cudnn_bwd {
    sdpa_plan plan;
    void *workspace; /* the plan's own workspace */
    float one;       /* by-value 1.0 of the graph's dO·O row-sum scaling (the dropout scale without dropout) */
    cudnnBackendDescriptor_t varpack;
    void *vp_ptrs[16]; /* the pointers the current variant pack was finalized with */
    size_t sum_bytes;  /* the row sums' share of the side buffer; the dQ accumulator follows */
} cudnn_bwd;

/* What one backward reads and writes. side: cudnn_bwd_side_bytes of device memory for the two
 * FP32 buffers the graph keeps outside cuDNN's workspace (the dO·O row sums, the dQ accumulator). */
typedef struct cudnn_bwd_io {
    const void *q, *k, *v, *o, *dout;
    const float *stats;
    void *dq, *dk, *dv, *side;
    float *scale, *neginf; /* host scalars, by value */
} cudnn_bwd_io;

size_t cudnn_bwd_side_bytes(const attn_shape *s);
/* Graph, heuristics, plan and its workspace, once; the host time of each in b->plan. */
int cudnn_bwd_build(cudnn_bwd *b, cudnnHandle_t h, const attn_shape *s, attn_error *err);
int cudnn_bwd_run(cudnn_bwd *b, cudnnHandle_t h, const cudnn_bwd_io *io, attn_error *err);
void cudnn_bwd_destroy(cudnn_bwd *b);
/* Operations one backward launches: a memset (the dQ accumulator, which cuDNN >= 9.6 clears
 * itself), the dO·O row sums, the fused bprop kernel, the dQ conversion to bf16; the four that
 * PyTorch's cuDNN backward launches in the H200 training trace of
 * tests/fixtures/models-roles-h200/llama-train-sync-bf16.json.gz. */
#define CUDNN_BWD_OPS 4

#endif
