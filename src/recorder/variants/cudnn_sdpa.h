/* The cuDNN backend-API pieces the cudnn variant's forward (cudnn.c) and backward (cudnn_bwd.c)
 * graphs are built from: an arena owning every descriptor of one plan build, tensor and
 * operation builders, and the heuristics-to-plan step with its host cost timed. */
#ifndef ATTNPROF_CUDNN_SDPA_H
#define ATTNPROF_CUDNN_SDPA_H

#include <cudnn_graph.h> /* before check.h: its cuDNN part */

#include "check.h"
#include "variant.h"

#include <stdbool.h>
#include <stdint.h>

/* Every cuDNN call is checked. A NOT_SUPPORTED category status means the loaded
 * library cannot do this here: ATTN_UNAVAILABLE; anything else is a failure. */
static inline int sdpa_failure_code(cudnnStatus_t st)
{
    return CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_NOT_SUPPORTED ? ATTN_UNAVAILABLE : ATTN_FAILED;
}

/* For calls whose status is kept (cudnnBackendFinalize of a plan, the handle's setup). */
int sdpa_cudnn_failure(attn_error *err, cudnnStatus_t st, const char *call, const char *file, int line);

#define CUDNN_TRY(call, err)                                                                             \
    CHECK_CALL(cudnn, call, return attn_fail((err), sdpa_failure_code(check_st_), "%s", check_msg_))

/* All descriptors of one plan build, destroyed together: the plan may refer to the
 * tensors and operations it was built from, so they live as long as it does. The
 * backward graph (about 30 tensors, 22 operations) plus up to 32 engine configs and
 * their plans is the largest build. */
#define ARENA_MAX 256
typedef struct desc_arena {
    int n;
    cudnnBackendDescriptor_t d[ARENA_MAX];
} desc_arena;

cudnnStatus_t sdpa_arena_new(desc_arena *a, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out);
void sdpa_arena_free(desc_arena *a);

typedef struct sdpa_plan {
    desc_arena arena;
    cudnnBackendDescriptor_t plan;
    int64_t workspace_bytes;
    int64_t engine_id;
    char knobs[192];
    char notes[96];
    const char *heur_mode;
    int configs_returned, configs_tried;
    double graph_us, heur_us, plan_us; /* host time of the graph, the heuristics, the plan finalize */
} sdpa_plan;

double sdpa_now_us(void);

/* A finalized tensor descriptor (16-byte aligned). */
int sdpa_tensor(desc_arena *a, int64_t uid, cudnnDataType_t type, const int64_t dims[4], const int64_t strides[4],
                bool is_virtual, bool by_value, cudnnBackendDescriptor_t *out, attn_error *err);
/* y = mode(x[, b[, t]]); `axis` is GEN_INDEX's axis, ignored otherwise. */
int sdpa_pointwise(desc_arena *a, cudnnPointwiseMode_t mode, cudnnDataType_t math_prec, int64_t axis,
                   cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                   cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op, attn_error *err);
int sdpa_reduction(desc_arena *a, cudnnReduceTensorOp_t how, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
                   cudnnBackendDescriptor_t *op, attn_error *err);
/* C = A·B, FP32 compute. */
int sdpa_matmul(desc_arena *a, cudnnBackendDescriptor_t A, cudnnBackendDescriptor_t B, cudnnBackendDescriptor_t C,
                cudnnBackendDescriptor_t *op, attn_error *err);
/* y = x seen with y's dims and strides (a transpose view: no data moves). */
int sdpa_reshape(desc_arena *a, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op,
                 attn_error *err);
/* The operation graph of ops[0..n), finalized. */
int sdpa_graph(desc_arena *a, cudnnHandle_t h, cudnnBackendDescriptor_t *ops, int n, cudnnBackendDescriptor_t *graph,
               attn_error *err);

/* Heuristics in `mode`; the first engine config whose execution plan finalizes wins.
 * Returns ATTN_OK with p->plan set, or ATTN_UNAVAILABLE with the last refusal. */
int sdpa_plan_from_heuristics(sdpa_plan *p, cudnnHandle_t h, cudnnBackendDescriptor_t graph,
                              cudnnBackendHeurMode_t mode, attn_error *err);
/* Heuristics mode A, then FALLBACK when A finds no plan. */
int sdpa_plan_finalize(sdpa_plan *p, cudnnHandle_t h, cudnnBackendDescriptor_t graph, attn_error *err);
void sdpa_plan_destroy(sdpa_plan *p);

/* A variant pack of n tensors (uids, pointers) and the workspace, finalized into *vp (an old
 * one destroyed first). */
int sdpa_varpack(cudnnBackendDescriptor_t *vp, const int64_t *uids, void *const *ptrs, int n, void *workspace,
                 attn_error *err);

#endif
