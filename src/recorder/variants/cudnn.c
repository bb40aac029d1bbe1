/* `cudnn`: cuDNN's fused SDPA forward through the backend C API (cudnn_graph.h).
 *
 * The operation graph is the one cuDNN's fused flash-attention engine matches, the
 * form NVIDIA's C++ frontend lowers its SDPA node to for cuDNN < 9.21 (composite
 * softmax and composite causal mask):
 *
 *   S  = matmul(Q, Kᵀ)                    bf16 in, FP32 compute, FP32 virtual out
 *   S  = S * scale                         scale: by-value FP32 scalar (1/sqrt(D))
 *   r  = GEN_INDEX(S, axis 2)  c = GEN_INDEX(S, axis 3)       INT32
 *   keep = CMP_GE(r, c)                    BOOLEAN (decode: CMP_GE(r + seq - q_seq, c), see below)
 *   S  = BINARY_SELECT(S, -inf, keep)      -inf: by-value FP32 scalar
 *   M  = reduce MAX(S) over keys           [B,H,S,1]
 *   E  = exp(S - M);  L = reduce ADD(E)
 *   stats = M + log(L)                     virtual and unused: the frontend emits it
 *                                          for inference too, and we keep its form
 *   P  = E / L                             virtual bf16 (bmm2's A type)
 *   O  = matmul(P, V)                      bf16 out
 *
 * Grouped-query attention and decode take the same graph: K and V with their own (fewer) heads,
 * which cuDNN's fused engine broadcasts over each group of query heads, and q_seq query rows
 * against seq keys. Decode's causal mask is aligned to the end of the keys (bottom right, as
 * PyTorch and FlashAttention align it): the row index is shifted by seq - q_seq, by an INT32 ADD
 * of seq and SUB of q_seq (by-value scalars), the form the C++ frontend gives its bottom-right
 * causal mask. One query (q_seq = 1) sees every key, so its graph has no mask at all.
 *
 * The plan (heuristics + execution plan) is built once in setup; forward executes it.
 * With attn_options.cudnn_replan the whole build is redone inside every forward, the
 * cost a caller without a plan cache pays on each call. */
#include <cudnn_graph.h> /* before check.h: its cuDNN part */

#include "check.h"
#include "variant.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every cuDNN call is checked. A NOT_SUPPORTED category status means the loaded
 * library cannot do this here: ATTN_UNAVAILABLE; anything else is a failure. */
static int cudnn_failure_code(cudnnStatus_t st)
{
    return CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_NOT_SUPPORTED ? ATTN_UNAVAILABLE : ATTN_FAILED;
}

/* For calls whose status is kept (cudnnBackendFinalize of a plan, the handle's setup). */
static int cudnn_failure(attn_error *err, cudnnStatus_t st, const char *call, const char *file, int line)
{
    char msg[CHECK_MSG_MAX];
    check_cudnn_describe(msg, sizeof msg, call, st, file, line);
    return attn_fail(err, cudnn_failure_code(st), "%s", msg);
}

#define CUDNN_TRY(call, err)                                                                             \
    CHECK_CALL(cudnn, call, return attn_fail((err), cudnn_failure_code(check_st_), "%s", check_msg_))

/* Tensor uids of the variant pack; virtual tensors start at 100. */
enum { UID_Q = 1, UID_K, UID_V, UID_O, UID_SCALE, UID_NEGINF, UID_SEQ_KV, UID_SEQ_Q, UID_VIRTUAL = 100 };

/* The mask a shape's graph carries: causal from the top left (prefill, q_seq = seq), causal from
 * the bottom right (decode, 1 < q_seq < seq), or none (one query sees every key). */
typedef enum { MASK_TOP_LEFT, MASK_BOTTOM_RIGHT, MASK_NONE } mask_kind;

static mask_kind mask_of(const attn_shape *s)
{
    if (!attn_shape_is_decode(s))
        return MASK_TOP_LEFT;
    return attn_q_seq(s) == 1 ? MASK_NONE : MASK_BOTTOM_RIGHT;
}

/* All descriptors of one plan build, destroyed together: the plan may refer to the
 * tensors and operations it was built from, so they live as long as it does. */
#define ARENA_MAX 160
typedef struct desc_arena {
    int n;
    cudnnBackendDescriptor_t d[ARENA_MAX];
} desc_arena;

static cudnnStatus_t arena_new(desc_arena *a, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    if (a->n >= ARENA_MAX)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(type, out);
    if (st == CUDNN_STATUS_SUCCESS)
        a->d[a->n++] = *out;
    return st;
}

static void arena_free(desc_arena *a)
{
    /* Teardown path, no error channel: a failed destroy cannot be acted on. */
    while (a->n > 0)
        (void)cudnnBackendDestroyDescriptor(a->d[--a->n]);
}

typedef struct sdpa_plan {
    desc_arena arena;
    cudnnBackendDescriptor_t plan;
    int64_t workspace_bytes;
    int64_t engine_id;
    char knobs[192];
    char notes[96];
    const char *heur_mode;
    int configs_returned, configs_tried;
    double graph_us, heur_us, plan_us;
} sdpa_plan;

typedef struct cudnn_state {
    attn_shape shape;
    int replan;
    cudnnHandle_t handle;
    cudaStream_t stream; /* the stream the handle is set to */
    sdpa_plan plans[2];  /* replan keeps the previous plan alive while the next is built */
    int cur;
    void *workspace;
    int64_t workspace_bytes;
    float scale, neginf; /* by-value scalars: host memory the variant pack points to */
    int32_t seq_kv, seq_q; /* the bottom-right mask's shift, by value */
    cudnnBackendDescriptor_t varpack;
    const void *vp_q, *vp_k, *vp_v;
    void *vp_o;
    size_t version;
    int sm;
    /* the build made in setup */
    double setup_graph_us, setup_heur_us, setup_plan_us;
    /* the builds made by forwards with replan */
    long long replans;
    double replan_us_total;
} cudnn_state;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int make_tensor(desc_arena *a, int64_t uid, cudnnDataType_t type, const int64_t dims[4],
                       const int64_t strides[4], bool is_virtual, bool by_value, cudnnBackendDescriptor_t *out,
                       attn_error *err)
{
    const int64_t alignment = 16;
    CUDNN_TRY(arena_new(a, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual), err);
    if (by_value)
        CUDNN_TRY(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value),
                  err);
    CUDNN_TRY(cudnnBackendFinalize(*out), err);
    return ATTN_OK;
}

/* y = mode(x[, b[, t]]); `axis` is GEN_INDEX's axis, ignored otherwise. */
static int pointwise(desc_arena *a, cudnnPointwiseMode_t mode, cudnnDataType_t math_prec, int64_t axis,
                     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                     cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op, attn_error *err)
{
    cudnnBackendDescriptor_t pw;
    CUDNN_TRY(arena_new(a, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw), err);
    CUDNN_TRY(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode), err);
    CUDNN_TRY(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math_prec), err);
    if (mode == CUDNN_POINTWISE_GEN_INDEX)
        CUDNN_TRY(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis), err);
    CUDNN_TRY(cudnnBackendFinalize(pw), err);

    const float alpha = 1.0f;
    CUDNN_TRY(arena_new(a, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, op), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &x),
              err);
    if (b)
        CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                           1, &b),
                  err);
    if (t)
        CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                           1, &t),
                  err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &y),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &alpha),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &alpha),
              err);
    CUDNN_TRY(cudnnBackendFinalize(*op), err);
    return ATTN_OK;
}

static int reduction(desc_arena *a, cudnnReduceTensorOp_t how, cudnnBackendDescriptor_t x,
                     cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op, attn_error *err)
{
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t red;
    CUDNN_TRY(arena_new(a, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &red), err);
    CUDNN_TRY(cudnnBackendSetAttribute(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp), err);
    CUDNN_TRY(cudnnBackendSetAttribute(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1,
                                       &how),
              err);
    CUDNN_TRY(cudnnBackendFinalize(red), err);
    CUDNN_TRY(arena_new(a, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, op), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &red),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &x),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &y),
              err);
    CUDNN_TRY(cudnnBackendFinalize(*op), err);
    return ATTN_OK;
}

static int matmul(desc_arena *a, cudnnBackendDescriptor_t A, cudnnBackendDescriptor_t B,
                  cudnnBackendDescriptor_t C, cudnnBackendDescriptor_t *op, attn_error *err)
{
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm;
    CUDNN_TRY(arena_new(a, CUDNN_BACKEND_MATMUL_DESCRIPTOR, &mm), err);
    CUDNN_TRY(cudnnBackendSetAttribute(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp), err);
    CUDNN_TRY(cudnnBackendFinalize(mm), err);
    CUDNN_TRY(arena_new(a, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, op), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &A),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &B),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &C),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm),
              err);
    CUDNN_TRY(cudnnBackendFinalize(*op), err);
    return ATTN_OK;
}

/* The operation graph of the file comment, finalized, in `graph`. */
static int build_graph(desc_arena *a, cudnnHandle_t h, const attn_shape *s, cudnnBackendDescriptor_t *graph,
                       attn_error *err)
{
    const int64_t B = s->batch, H = s->heads, S = s->seq, D = s->dim, HK = attn_kv_heads(s), SQ = attn_q_seq(s);
    const int64_t q_dims[4] = {B, H, SQ, D}, q_strides[4] = {H * SQ * D, SQ * D, D, 1};
    const int64_t v_dims[4] = {B, HK, S, D}, v_strides[4] = {HK * S * D, S * D, D, 1};
    /* Kᵀ is K's memory seen as [B,Hkv,D,S]: the last two strides swapped. */
    const int64_t kt_dims[4] = {B, HK, D, S}, kt_strides[4] = {HK * S * D, S * D, 1, D};
    const int64_t sc_dims[4] = {B, H, SQ, S}, sc_strides[4] = {H * SQ * S, SQ * S, S, 1};
    const int64_t row_dims[4] = {B, H, SQ, 1}, row_strides[4] = {H * SQ, SQ, 1, 1};
    const mask_kind mask = mask_of(s);
    const int64_t one[4] = {1, 1, 1, 1};
    const cudnnDataType_t bf16 = CUDNN_DATA_BFLOAT16, f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32,
                          boolean = CUDNN_DATA_BOOLEAN;
    int rc;
#define TRY_RC(x)                                                                                        \
    do {                                                                                                 \
        if ((rc = (x)) != ATTN_OK)                                                                       \
            return rc;                                                                                   \
    } while (0)

    cudnnBackendDescriptor_t q, kt, v, o, scale, neginf;
    TRY_RC(make_tensor(a, UID_Q, bf16, q_dims, q_strides, false, false, &q, err));
    TRY_RC(make_tensor(a, UID_K, bf16, kt_dims, kt_strides, false, false, &kt, err));
    TRY_RC(make_tensor(a, UID_V, bf16, v_dims, v_strides, false, false, &v, err));
    TRY_RC(make_tensor(a, UID_O, bf16, q_dims, q_strides, false, false, &o, err));
    TRY_RC(make_tensor(a, UID_SCALE, f32, one, one, false, true, &scale, err));
    TRY_RC(make_tensor(a, UID_NEGINF, f32, one, one, false, true, &neginf, err));

    int64_t uid = UID_VIRTUAL;
    cudnnBackendDescriptor_t s_raw, s_scaled, row, col, keep, s_masked, mx, sub, ex, sum, lg, stats, p;
    TRY_RC(make_tensor(a, uid++, f32, sc_dims, sc_strides, true, false, &s_raw, err));
    TRY_RC(make_tensor(a, uid++, f32, sc_dims, sc_strides, true, false, &s_scaled, err));
    TRY_RC(make_tensor(a, uid++, i32, sc_dims, sc_strides, true, false, &row, err));
    TRY_RC(make_tensor(a, uid++, i32, sc_dims, sc_strides, true, false, &col, err));
    TRY_RC(make_tensor(a, uid++, boolean, sc_dims, sc_strides, true, false, &keep, err));
    TRY_RC(make_tensor(a, uid++, f32, sc_dims, sc_strides, true, false, &s_masked, err));
    TRY_RC(make_tensor(a, uid++, f32, row_dims, row_strides, true, false, &mx, err));
    TRY_RC(make_tensor(a, uid++, f32, sc_dims, sc_strides, true, false, &sub, err));
    TRY_RC(make_tensor(a, uid++, f32, sc_dims, sc_strides, true, false, &ex, err));
    TRY_RC(make_tensor(a, uid++, f32, row_dims, row_strides, true, false, &sum, err));
    TRY_RC(make_tensor(a, uid++, f32, row_dims, row_strides, true, false, &lg, err));
    TRY_RC(make_tensor(a, uid++, f32, row_dims, row_strides, true, false, &stats, err));
    TRY_RC(make_tensor(a, uid++, bf16, sc_dims, sc_strides, true, false, &p, err));

    cudnnBackendDescriptor_t ops[16];
    int n = 0;
    TRY_RC(matmul(a, q, kt, s_raw, &ops[n++], err));
    TRY_RC(pointwise(a, CUDNN_POINTWISE_MUL, f32, 0, s_raw, scale, NULL, s_scaled, &ops[n++], err));
    if (mask == MASK_NONE) {
        s_masked = s_scaled; /* one query sees every key */
    } else {
        TRY_RC(pointwise(a, CUDNN_POINTWISE_GEN_INDEX, f32, 2, s_scaled, NULL, NULL, row, &ops[n++], err));
        TRY_RC(pointwise(a, CUDNN_POINTWISE_GEN_INDEX, f32, 3, s_scaled, NULL, NULL, col, &ops[n++], err));
        if (mask == MASK_BOTTOM_RIGHT) { /* row + seq - q_seq >= col */
            cudnnBackendDescriptor_t seq_kv, seq_q, row_plus, row_shift;
            TRY_RC(make_tensor(a, UID_SEQ_KV, i32, one, one, false, true, &seq_kv, err));
            TRY_RC(make_tensor(a, UID_SEQ_Q, i32, one, one, false, true, &seq_q, err));
            TRY_RC(make_tensor(a, uid++, i32, sc_dims, sc_strides, true, false, &row_plus, err));
            TRY_RC(make_tensor(a, uid++, i32, sc_dims, sc_strides, true, false, &row_shift, err));
            TRY_RC(pointwise(a, CUDNN_POINTWISE_ADD, i32, 0, row, seq_kv, NULL, row_plus, &ops[n++], err));
            TRY_RC(pointwise(a, CUDNN_POINTWISE_SUB, i32, 0, row_plus, seq_q, NULL, row_shift, &ops[n++], err));
            row = row_shift;
        }
        TRY_RC(pointwise(a, CUDNN_POINTWISE_CMP_GE, boolean, 0, row, col, NULL, keep, &ops[n++], err));
        /* BINARY_SELECT: y = t ? x : b, so kept scores pass and the rest become -inf. */
        TRY_RC(pointwise(a, CUDNN_POINTWISE_BINARY_SELECT, f32, 0, s_scaled, neginf, keep, s_masked, &ops[n++], err));
    }
    TRY_RC(reduction(a, CUDNN_REDUCE_TENSOR_MAX, s_masked, mx, &ops[n++], err));
    TRY_RC(pointwise(a, CUDNN_POINTWISE_SUB, f32, 0, s_masked, mx, NULL, sub, &ops[n++], err));
    TRY_RC(pointwise(a, CUDNN_POINTWISE_EXP, f32, 0, sub, NULL, NULL, ex, &ops[n++], err));
    TRY_RC(reduction(a, CUDNN_REDUCE_TENSOR_ADD, ex, sum, &ops[n++], err));
    TRY_RC(pointwise(a, CUDNN_POINTWISE_LOG, f32, 0, sum, NULL, NULL, lg, &ops[n++], err));
    TRY_RC(pointwise(a, CUDNN_POINTWISE_ADD, f32, 0, mx, lg, NULL, stats, &ops[n++], err));
    TRY_RC(pointwise(a, CUDNN_POINTWISE_DIV, f32, 0, ex, sum, NULL, p, &ops[n++], err));
    TRY_RC(matmul(a, p, v, o, &ops[n++], err));
#undef TRY_RC

    CUDNN_TRY(arena_new(a, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h), err);
    CUDNN_TRY(cudnnBackendFinalize(*graph), err);
    return ATTN_OK;
}

/* The knob types cuDNN 9 documents as current (deprecated ones print as numbers). */
static const char *knob_name(int type)
{
    static const char *const names[] = {
        [1] = "swizzle", [2] = "tile_size", [4] = "edge", [11] = "multiply", [12] = "split_k_buf", [13] = "tilek",
        [14] = "stages", [15] = "reduction_mode", [17] = "split_k_slc", [18] = "idx_mode", [23] = "specfilt",
        [24] = "kernel_cfg", [25] = "workspace", [27] = "tile_cga_m", [28] = "tile_cga_n", [29] = "block_size",
        [30] = "occupancy", [31] = "array_size_per_thread", [33] = "split_cols", [34] = "tile_rows",
        [35] = "tile_cols", [36] = "load_size", [37] = "cta_count", [38] = "stream_k", [39] = "split_p_slc",
        [40] = "tile_m", [41] = "tile_n", [42] = "warp_spec_cfg", [43] = "swap_ab"};
    return type > 0 && type < (int)(sizeof names / sizeof *names) ? names[type] : NULL;
}

/* Engine id, knob choices and behaviour notes of the engine config a plan was built from. */
static int describe_config(sdpa_plan *p, cudnnBackendDescriptor_t cfg, attn_error *err)
{
    cudnnBackendDescriptor_t engine;
    int64_t count = 0;
    CUDNN_TRY(arena_new(&p->arena, CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine), err);
    CUDNN_TRY(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                                       &engine),
              err);
    CUDNN_TRY(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count,
                                       &p->engine_id),
              err);

    cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    CUDNN_TRY(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                       CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &count, notes),
              err);
    p->notes[0] = 0;
    for (int64_t i = 0; i < count; i++) {
        const char *name = notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION          ? "runtime_compilation"
                           : notes[i] == CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API ? "cuda_graph_native"
                           : notes[i] == CUDNN_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY       ? "cublaslt"
                                                                                       : "other";
        size_t used = strlen(p->notes);
        snprintf(p->notes + used, sizeof p->notes - used, "%s%s", used ? "," : "", name);
    }
    if (!p->notes[0])
        snprintf(p->notes, sizeof p->notes, "none");

    enum { MAX_KNOBS = 24 };
    cudnnBackendDescriptor_t knobs[MAX_KNOBS];
    for (int i = 0; i < MAX_KNOBS; i++)
        CUDNN_TRY(arena_new(&p->arena, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[i]), err);
    CUDNN_TRY(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                       MAX_KNOBS, &count, knobs),
              err);
    p->knobs[0] = 0;
    for (int64_t i = 0; i < count && i < MAX_KNOBS; i++) {
        cudnnBackendKnobType_t type;
        int64_t value, got;
        CUDNN_TRY(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &got,
                                           &type),
                  err);
        CUDNN_TRY(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &got,
                                           &value),
                  err);
        size_t used = strlen(p->knobs);
        const char *name = knob_name((int)type);
        if (name)
            snprintf(p->knobs + used, sizeof p->knobs - used, "%s%s=%lld", used ? " " : "", name, (long long)value);
        else
            snprintf(p->knobs + used, sizeof p->knobs - used, "%sknob%d=%lld", used ? " " : "", (int)type,
                     (long long)value);
    }
    if (!p->knobs[0])
        snprintf(p->knobs, sizeof p->knobs, "none");
    return ATTN_OK;
}

/* Heuristics in `mode`; the first engine config whose execution plan finalizes wins.
 * Returns ATTN_OK with p->plan set, or ATTN_UNAVAILABLE with the last refusal. */
static int plan_from_heuristics(sdpa_plan *p, cudnnHandle_t h, cudnnBackendDescriptor_t graph,
                                cudnnBackendHeurMode_t mode, attn_error *err)
{
    const double t0 = now_us();
    cudnnBackendDescriptor_t heur;
    CUDNN_TRY(arena_new(&p->arena, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur), err);
    CUDNN_TRY(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &graph),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode), err);
    CUDNN_TRY(cudnnBackendFinalize(heur), err);
    int64_t count = 0;
    CUDNN_TRY(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                       NULL),
              err);
    enum { MAX_CONFIGS = 32 };
    if (count > MAX_CONFIGS)
        count = MAX_CONFIGS;
    cudnnBackendDescriptor_t cfgs[MAX_CONFIGS];
    for (int64_t i = 0; i < count; i++)
        CUDNN_TRY(arena_new(&p->arena, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]), err);
    int64_t got = 0;
    if (count > 0)
        CUDNN_TRY(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                           &got, cfgs),
                  err);
    const double t1 = now_us();
    p->heur_us += t1 - t0;
    p->configs_returned += (int)got;

    int rc = attn_fail(err, ATTN_UNAVAILABLE, "heuristics mode %d returned no engine config", (int)mode);
    for (int64_t i = 0; i < got; i++) {
        p->configs_tried++;
        cudnnBackendDescriptor_t plan;
        CUDNN_TRY(arena_new(&p->arena, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan), err);
        CUDNN_TRY(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h), err);
        CUDNN_TRY(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]),
                  err);
        cudnnStatus_t st = cudnnBackendFinalize(plan);
        if (st != CUDNN_STATUS_SUCCESS) {
            /* This engine config cannot run here; the next one may. */
            rc = cudnn_failure(err, st, "cudnnBackendFinalize(execution plan)", __FILE__, __LINE__);
            continue;
        }
        int64_t n = 0;
        CUDNN_TRY(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                           &p->workspace_bytes),
                  err);
        p->plan = plan;
        p->heur_mode = mode == CUDNN_HEUR_MODE_A ? "A" : "FALLBACK";
        rc = ATTN_OK;
        attn_error why;
        if (describe_config(p, cfgs[i], &why) != ATTN_OK) {
            /* The plan is good; only its description could not be read back. */
            snprintf(p->knobs, sizeof p->knobs, "unreadable: %.150s", why.msg);
            snprintf(p->notes, sizeof p->notes, "unreadable");
        }
        break;
    }
    p->plan_us += now_us() - t1;
    return rc;
}

static void plan_destroy(sdpa_plan *p)
{
    arena_free(&p->arena);
    memset(p, 0, sizeof *p);
}

/* Graph, heuristics and execution plan for `s`, timed. On failure p is left empty. */
static int plan_build(sdpa_plan *p, cudnnHandle_t h, const attn_shape *s, attn_error *err)
{
    memset(p, 0, sizeof *p);
    const double t0 = now_us();
    cudnnBackendDescriptor_t graph;
    int rc = build_graph(&p->arena, h, s, &graph, err);
    p->graph_us = now_us() - t0;
    if (rc == ATTN_OK) {
        rc = plan_from_heuristics(p, h, graph, CUDNN_HEUR_MODE_A, err);
        if (rc == ATTN_UNAVAILABLE)
            rc = plan_from_heuristics(p, h, graph, CUDNN_HEUR_MODE_FALLBACK, err);
    }
    if (rc != ATTN_OK)
        plan_destroy(p);
    return rc;
}

static int check_shape(const attn_shape *s, attn_error *why)
{
    if (s->batch <= 0 || s->heads <= 0 || s->seq <= 0 || s->dim <= 0)
        return attn_fail(why, 1, "every dimension must be positive");
    /* cuDNN's fused attention needs 16-byte aligned rows: D a multiple of 8 bf16. Other
     * limits (head dim, sequence length per GPU) are the engine's to refuse in setup. */
    if (s->dim % 8 != 0)
        return attn_fail(why, 1, "head dim %d is not a multiple of 8", s->dim);
    /* Grouped-query and decode shapes: cuDNN's engine refuses what it cannot run when the plan is
     * built (setup), and the variant is then reported unavailable with cuDNN's reason. */
    return 0;
}

static void teardown(void *state)
{
    cudnn_state *st = state;
    if (!st)
        return;
    if (st->varpack)
        (void)cudnnBackendDestroyDescriptor(st->varpack);
    plan_destroy(&st->plans[0]);
    plan_destroy(&st->plans[1]);
    if (st->workspace)
        (void)cudaFree(st->workspace);
    if (st->handle)
        (void)cudnnDestroy(st->handle);
    free(st);
}

/* Device bytes = the plan's workspace, which only a built plan knows: build one on a
 * throwaway handle (the same build setup makes) and remember it per shape. 0 if cuDNN
 * cannot build the plan here; setup then reports why. */
static size_t device_bytes(const attn_shape *s)
{
    static attn_shape cached_shape;
    static size_t cached_bytes;
    static int cached;
    if (cached && memcmp(&cached_shape, s, sizeof *s) == 0)
        return cached_bytes;
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
        return 0;
    sdpa_plan p;
    attn_error err;
    size_t bytes = 0;
    if (plan_build(&p, h, s, &err) == ATTN_OK) {
        bytes = (size_t)p.workspace_bytes;
        plan_destroy(&p);
        cached_shape = *s;
        cached_bytes = bytes;
        cached = 1;
    }
    (void)cudnnDestroy(h);
    return bytes;
}

static void version_text(size_t v, char *buf, size_t len)
{
    /* cuDNN 9 encodes major*10000 + minor*100 + patch. */
    snprintf(buf, len, "%zu.%zu.%zu", v / 10000, (v / 100) % 100, v % 100);
}

static int setup(void **state, const attn_shape *shape, const attn_options *opt, cudaStream_t stream,
                 attn_error *err)
{
    *state = NULL;
    attn_error why;
    if (check_shape(shape, &why))
        return attn_fail(err, ATTN_FAILED, "cudnn: shape not supported: %s", why.msg);
    char ver[32];
    const size_t version = cudnnGetVersion();
    version_text(version, ver, sizeof ver);
    if (version < 90000)
        return attn_fail(err, ATTN_UNAVAILABLE,
                         "cuDNN %s found; this variant uses the cuDNN 9 backend API (needs cuDNN >= 9.0)", ver);

    cudnn_state *st = calloc(1, sizeof *st);
    if (!st)
        return attn_fail(err, ATTN_FAILED, "cudnn: out of host memory");
    st->shape = *shape;
    st->replan = opt ? opt->cudnn_replan : 0;
    st->version = version;
    st->scale = (float)(1.0 / sqrt((double)shape->dim));
    /* The frontend masks with the lowest float before cuDNN 9.10 (older engines
     * preferred it for the softmax) and with -inf from 9.10 on. */
    st->neginf = version < 91000 ? -3.40282347e38f : -INFINITY;
    st->seq_kv = shape->seq;
    st->seq_q = attn_q_seq(shape);

    int dev = 0, major = 0, minor = 0;
    int rc = ATTN_OK;
#define SETUP_TRY(x)                                                                                     \
    do {                                                                                                 \
        if ((rc = (x)) != ATTN_OK)                                                                       \
            goto fail;                                                                                   \
    } while (0)
    {
        cudaError_t ce = cudaGetDevice(&dev);
        if (ce == cudaSuccess)
            ce = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        if (ce == cudaSuccess)
            ce = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        if (ce != cudaSuccess) {
            rc = attn_fail(err, ATTN_FAILED, "cudnn: reading the device's compute capability: %s",
                           cudaGetErrorString(ce));
            goto fail;
        }
        st->sm = major * 10 + minor;
    }
    {
        cudnnStatus_t cs = cudnnCreate(&st->handle);
        if (cs != CUDNN_STATUS_SUCCESS) {
            st->handle = NULL;
            rc = cudnn_failure(err, cs, "cudnnCreate(&st->handle)", __FILE__, __LINE__);
            goto fail;
        }
        cs = cudnnSetStream(st->handle, stream);
        if (cs != CUDNN_STATUS_SUCCESS) {
            rc = cudnn_failure(err, cs, "cudnnSetStream(st->handle, stream)", __FILE__, __LINE__);
            goto fail;
        }
        st->stream = stream;
    }
    rc = plan_build(&st->plans[0], st->handle, shape, err);
    if (rc == ATTN_UNAVAILABLE) {
        char reason[ATTN_ERR_LEN];
        snprintf(reason, sizeof reason, "%s", err->msg);
        rc = attn_fail(err, ATTN_UNAVAILABLE,
                       "cuDNN %s found, no engine supports this SDPA graph on sm_%d (%s); needs a cuDNN 9 "
                       "whose fused-attention engine covers sm_%d, bf16, %s, head dim %d%s",
                       ver, st->sm, reason, st->sm,
                       mask_of(shape) == MASK_TOP_LEFT       ? "causal"
                       : mask_of(shape) == MASK_BOTTOM_RIGHT ? "causal aligned bottom-right"
                                                             : "no mask",
                       shape->dim, attn_shape_is_gqa(shape) ? ", fewer K/V heads than query heads" : "");
        goto fail;
    }
    SETUP_TRY(rc);
    st->cur = 0;
    st->setup_graph_us = st->plans[0].graph_us;
    st->setup_heur_us = st->plans[0].heur_us;
    st->setup_plan_us = st->plans[0].plan_us;
    st->workspace_bytes = st->plans[0].workspace_bytes;
    if (st->workspace_bytes > 0) {
        cudaError_t ce = cudaMalloc(&st->workspace, (size_t)st->workspace_bytes);
        if (ce != cudaSuccess) {
            st->workspace = NULL;
            rc = attn_fail(err, ATTN_FAILED, "cudnn: cudaMalloc(workspace, %lld): %s",
                           (long long)st->workspace_bytes, cudaGetErrorString(ce));
            goto fail;
        }
    }
#undef SETUP_TRY
    *state = st;
    return ATTN_OK;
fail:
    teardown(st);
    return rc;
}

static int build_varpack(cudnn_state *st, const void *q, const void *k, const void *v, void *out, attn_error *err)
{
    if (st->varpack) {
        CUDNN_TRY(cudnnBackendDestroyDescriptor(st->varpack), err);
        st->varpack = NULL;
    }
    int64_t uids[8] = {UID_Q, UID_K, UID_V, UID_O, UID_SCALE, UID_NEGINF, UID_SEQ_KV, UID_SEQ_Q};
    /* By-value tensors are passed as host pointers to their value. */
    void *ptrs[8] = {(void *)q, (void *)k, (void *)v, out, &st->scale, &st->neginf, &st->seq_kv, &st->seq_q};
    /* Only the by-value tensors the graph has: the -inf of the mask and the bottom-right mask's
     * shift (cuDNN refuses a pack with a uid its graph lacks: CUDNN_STATUS_BAD_PARAM_NULL_POINTER,
     * isCompatibleVariantPack, as measured on the H200 with cuDNN 9.19). */
    const mask_kind mask = mask_of(&st->shape);
    const int64_t n_ptrs = mask == MASK_BOTTOM_RIGHT ? 8 : mask == MASK_TOP_LEFT ? 6 : 5;
    cudnnBackendDescriptor_t vp;
    CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp), err);
    st->varpack = vp;
    CUDNN_TRY(cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n_ptrs, uids), err);
    CUDNN_TRY(cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n_ptrs, ptrs), err);
    CUDNN_TRY(cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &st->workspace),
              err);
    CUDNN_TRY(cudnnBackendFinalize(vp), err);
    st->vp_q = q;
    st->vp_k = k;
    st->vp_v = v;
    st->vp_o = out;
    return ATTN_OK;
}

static int forward(void *state, const void *q, const void *k, const void *v, void *out, cudaStream_t stream,
                   attn_error *err)
{
    cudnn_state *st = state;
    int rc;
    if (st->replan) {
        /* The plan used by the previous forward may still be running on the GPU: build
         * into the other slot and free the one from two forwards back. */
        const double t0 = now_us();
        const int next = st->cur ^ 1;
        plan_destroy(&st->plans[next]);
        if ((rc = plan_build(&st->plans[next], st->handle, &st->shape, err)) != ATTN_OK)
            return rc;
        if (st->plans[next].workspace_bytes > st->workspace_bytes)
            return attn_fail(err, ATTN_FAILED,
                             "cudnn: the rebuilt plan wants %lld workspace bytes, setup's plan %lld (engine %lld "
                             "then %lld)",
                             (long long)st->plans[next].workspace_bytes, (long long)st->workspace_bytes,
                             (long long)st->plans[st->cur].engine_id, (long long)st->plans[next].engine_id);
        st->cur = next;
        st->replans++;
        st->replan_us_total += now_us() - t0;
    }
    if (stream != st->stream) {
        CUDNN_TRY(cudnnSetStream(st->handle, stream), err);
        st->stream = stream;
    }
    if (!st->varpack || q != st->vp_q || k != st->vp_k || v != st->vp_v || out != st->vp_o)
        if ((rc = build_varpack(st, q, k, v, out, err)) != ATTN_OK)
            return rc;
    CUDNN_TRY(cudnnBackendExecute(st->handle, st->plans[st->cur].plan, st->varpack), err);
    return ATTN_OK;
}

static void facts(void *state, attn_facts *f)
{
    cudnn_state *st = state;
    const sdpa_plan *p = &st->plans[st->cur];
    char ver[32];
    version_text(st->version, ver, sizeof ver);
    attn_fact_add(f, "cudnn_version", (double)st->version, "%s (loaded at run time; built against %d.%d.%d)", ver,
                  CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
    attn_fact_add(f, "engine_id", (double)p->engine_id, "%lld (heuristics mode %s, config %d of %d tried)",
                  (long long)p->engine_id, p->heur_mode ? p->heur_mode : "?", p->configs_tried, p->configs_returned);
    attn_fact_add(f, "engine_knobs", NAN, "%s", p->knobs);
    attn_fact_add(f, "engine_notes", NAN, "%s", p->notes);
    attn_fact_add(f, "workspace_bytes", (double)st->workspace_bytes, "%lld", (long long)st->workspace_bytes);
    if (attn_shape_is_gqa(&st->shape))
        attn_fact_add(f, "gqa", attn_group(&st->shape), "native: K/V of %d heads broadcast over %d query heads each, "
                      "no copy", attn_kv_heads(&st->shape), attn_group(&st->shape));
    if (attn_shape_is_decode(&st->shape))
        attn_fact_add(f, "decode_mask", NAN, "%s", mask_of(&st->shape) == MASK_NONE
                      ? "none: one query sees every key (the causal mask aligned bottom-right keeps them all)"
                      : "causal aligned bottom-right: row + seq - q_seq >= col (INT32 ADD and SUB before CMP_GE)");
    attn_fact_add(f, "graph_build_us", st->setup_graph_us, "%.0f us (host, descriptors + operation graph)",
                  st->setup_graph_us);
    attn_fact_add(f, "heuristics_us", st->setup_heur_us, "%.0f us (host)", st->setup_heur_us);
    attn_fact_add(f, "plan_build_us", st->setup_plan_us, "%.0f us (host, execution plan finalize)",
                  st->setup_plan_us);
    attn_fact_add(f, "replan", st->replan, "%s", st->replan ? "on: graph, heuristics and plan rebuilt every forward"
                                                           : "off: plan built once in setup");
    if (st->replan && st->replans > 0)
        attn_fact_add(f, "replan_us_mean", st->replan_us_total / st->replans, "%.0f us per forward over %lld forwards",
                      st->replan_us_total / st->replans, st->replans);
}

/* cuDNN's fused SDPA: the same minimum traffic as our fused kernels (Q, K, V read
 * once, O written once); its tiles are cuDNN's own, so no FLOP or L2 claim beyond the
 * useful causal FLOPs, and the 4-byte memset is left out. */
static void predict(const attn_shape *s, int cc_major, int cc_minor, attn_prediction *p)
{
    (void)cc_major;
    (void)cc_minor;
    memset(p, 0, sizeof *p);
    if (attn_shape_is_gqa(s) || attn_shape_is_decode(s)) {
        attn_predict_gqa_fused(p, s, s->dim, 0, "fused SDPA kernel", "sdpa|fmha|flash_fprop|cudnn", 1);
        p->executed_flops = 0; /* cuDNN's tiles are its own */
        return;
    }
    p->useful_flops = prediction_useful_flops(s);
    prediction_add(p, "fused SDPA kernel", "sdpa|fmha|flash_fprop|cudnn", 1, 4 * prediction_io_bytes(s), 0, PIPE_TENSOR);
    p->min_dram_bytes = p->cls[0].dram_bytes;
}

const attn_variant variant_cudnn = {
    .name = "cudnn",
    .title = "cuDNN fused SDPA (backend API)",
    .what_changed = "one cuDNN graph: flash-attention engine, plan built once",
    /* Seen with CUPTI on an H200 (tests/gpu/variant_check.c --ops, cuDNN 9.14.0 and 9.19.0,
     * every shape tried): cudnnBackendExecute issues a 4-byte memset, then one
     * cudnn_generated_fort_native_sdpa_sm90_flash_fprop kernel (persistent: one CTA per
     * SM, so the memset is presumably its work counter; cuDNN does not document it).
     * The same two operations PyTorch's cuDNN path shows. */
    .expected_ops = 2,
    .expected_memcpy = 0,
    .check_shape = check_shape,
    .device_bytes = device_bytes,
    .setup = setup,
    .forward = forward,
    .facts = facts,
    .teardown = teardown,
    .predict = predict,
    /* run --backward: the SDPA backward graph (the forward's stats saved) is not built yet. */
    .bwd_missing = "cuDNN's SDPA backward graph is not built yet (issue 39: the backend API graph with the "
                   "forward's saved stats is future work)",
};
