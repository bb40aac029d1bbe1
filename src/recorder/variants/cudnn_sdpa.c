/* The cuDNN backend-API builders of cudnn_sdpa.h. */
#include "cudnn_sdpa.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int sdpa_cudnn_failure(attn_error *err, cudnnStatus_t st, const char *call, const char *file, int line)
{
    char msg[CHECK_MSG_MAX];
    check_cudnn_describe(msg, sizeof msg, call, st, file, line);
    return attn_fail(err, sdpa_failure_code(st), "%s", msg);
}

cudnnStatus_t sdpa_arena_new(desc_arena *a, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    if (a->n >= ARENA_MAX)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(type, out);
    if (st == CUDNN_STATUS_SUCCESS)
        a->d[a->n++] = *out;
    return st;
}

void sdpa_arena_free(desc_arena *a)
{
    /* Teardown path, no error channel: a failed destroy cannot be acted on. */
    while (a->n > 0)
        (void)cudnnBackendDestroyDescriptor(a->d[--a->n]);
}

double sdpa_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int sdpa_tensor(desc_arena *a, int64_t uid, cudnnDataType_t type, const int64_t dims[4],
                       const int64_t strides[4], bool is_virtual, bool by_value, cudnnBackendDescriptor_t *out,
                       attn_error *err)
{
    const int64_t alignment = 16;
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out), err);
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
int sdpa_pointwise(desc_arena *a, cudnnPointwiseMode_t mode, cudnnDataType_t math_prec, int64_t axis,
                     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                     cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op, attn_error *err)
{
    cudnnBackendDescriptor_t pw;
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw), err);
    CUDNN_TRY(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode), err);
    CUDNN_TRY(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math_prec), err);
    if (mode == CUDNN_POINTWISE_GEN_INDEX)
        CUDNN_TRY(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis), err);
    CUDNN_TRY(cudnnBackendFinalize(pw), err);

    const float alpha = 1.0f;
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, op), err);
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

int sdpa_reduction(desc_arena *a, cudnnReduceTensorOp_t how, cudnnBackendDescriptor_t x,
                     cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op, attn_error *err)
{
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t red;
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &red), err);
    CUDNN_TRY(cudnnBackendSetAttribute(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp), err);
    CUDNN_TRY(cudnnBackendSetAttribute(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1,
                                       &how),
              err);
    CUDNN_TRY(cudnnBackendFinalize(red), err);
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, op), err);
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

int sdpa_matmul(desc_arena *a, cudnnBackendDescriptor_t A, cudnnBackendDescriptor_t B,
                  cudnnBackendDescriptor_t C, cudnnBackendDescriptor_t *op, attn_error *err)
{
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm;
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_MATMUL_DESCRIPTOR, &mm), err);
    CUDNN_TRY(cudnnBackendSetAttribute(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp), err);
    CUDNN_TRY(cudnnBackendFinalize(mm), err);
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, op), err);
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

static const char *knob_name(int type)
{
    /* The knob types cuDNN 9 documents as current (deprecated ones print as numbers). */
    switch (type) {
    case 1: return "swizzle";
    case 2: return "tile_size";
    case 4: return "edge";
    case 11: return "multiply";
    case 12: return "split_k_buf";
    case 13: return "tilek";
    case 14: return "stages";
    case 15: return "reduction_mode";
    case 17: return "split_k_slc";
    case 18: return "idx_mode";
    case 23: return "specfilt";
    case 24: return "kernel_cfg";
    case 25: return "workspace";
    case 27: return "tile_cga_m";
    case 28: return "tile_cga_n";
    case 29: return "block_size";
    case 30: return "occupancy";
    case 31: return "array_size_per_thread";
    case 33: return "split_cols";
    case 34: return "tile_rows";
    case 35: return "tile_cols";
    case 36: return "load_size";
    case 37: return "cta_count";
    case 38: return "stream_k";
    case 39: return "split_p_slc";
    case 40: return "tile_m";
    case 41: return "tile_n";
    case 42: return "warp_spec_cfg";
    case 43: return "swap_ab";
    default: return NULL;
    }
}

/* Engine id, knob choices and behaviour notes of the engine config a plan was built from. */
static int sdpa_describe_config(sdpa_plan *p, cudnnBackendDescriptor_t cfg, attn_error *err)
{
    cudnnBackendDescriptor_t engine;
    int64_t count = 0;
    CUDNN_TRY(sdpa_arena_new(&p->arena, CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine), err);
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
        CUDNN_TRY(sdpa_arena_new(&p->arena, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[i]), err);
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
int sdpa_plan_from_heuristics(sdpa_plan *p, cudnnHandle_t h, cudnnBackendDescriptor_t graph,
                                cudnnBackendHeurMode_t mode, attn_error *err)
{
    const double t0 = sdpa_now_us();
    cudnnBackendDescriptor_t heur;
    CUDNN_TRY(sdpa_arena_new(&p->arena, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur), err);
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
        CUDNN_TRY(sdpa_arena_new(&p->arena, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]), err);
    int64_t got = 0;
    if (count > 0)
        CUDNN_TRY(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                           &got, cfgs),
                  err);
    const double t1 = sdpa_now_us();
    p->heur_us += t1 - t0;
    p->configs_returned += (int)got;

    int rc = attn_fail(err, ATTN_UNAVAILABLE, "heuristics mode %d returned no engine config", (int)mode);
    for (int64_t i = 0; i < got; i++) {
        p->configs_tried++;
        cudnnBackendDescriptor_t plan;
        CUDNN_TRY(sdpa_arena_new(&p->arena, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan), err);
        CUDNN_TRY(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h), err);
        CUDNN_TRY(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]),
                  err);
        cudnnStatus_t st = cudnnBackendFinalize(plan);
        if (st != CUDNN_STATUS_SUCCESS) {
            /* This engine config cannot run here; the next one may. */
            rc = sdpa_cudnn_failure(err, st, "cudnnBackendFinalize(execution plan)", __FILE__, __LINE__);
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
        if (sdpa_describe_config(p, cfgs[i], &why) != ATTN_OK) {
            /* The plan is good; only its description could not be read back. */
            snprintf(p->knobs, sizeof p->knobs, "unreadable: %.150s", why.msg);
            snprintf(p->notes, sizeof p->notes, "unreadable");
        }
        break;
    }
    p->plan_us += sdpa_now_us() - t1;
    return rc;
}

void sdpa_plan_destroy(sdpa_plan *p)
{
    sdpa_arena_free(&p->arena);
    memset(p, 0, sizeof *p);
}

int sdpa_plan_finalize(sdpa_plan *p, cudnnHandle_t h, cudnnBackendDescriptor_t graph, attn_error *err)
{
    int rc = sdpa_plan_from_heuristics(p, h, graph, CUDNN_HEUR_MODE_A, err);
    if (rc == ATTN_UNAVAILABLE)
        rc = sdpa_plan_from_heuristics(p, h, graph, CUDNN_HEUR_MODE_FALLBACK, err);
    return rc;
}

int sdpa_reshape(desc_arena *a, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op,
                 attn_error *err)
{
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, op), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y),
              err);
    CUDNN_TRY(cudnnBackendFinalize(*op), err);
    return ATTN_OK;
}

int sdpa_graph(desc_arena *a, cudnnHandle_t h, cudnnBackendDescriptor_t *ops, int n, cudnnBackendDescriptor_t *graph,
               attn_error *err)
{
    CUDNN_TRY(sdpa_arena_new(a, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops),
              err);
    CUDNN_TRY(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h), err);
    CUDNN_TRY(cudnnBackendFinalize(*graph), err);
    return ATTN_OK;
}

int sdpa_varpack(cudnnBackendDescriptor_t *vp, const int64_t *uids, void *const *ptrs, int n, void *workspace,
                 attn_error *err)
{
    if (*vp) {
        CUDNN_TRY(cudnnBackendDestroyDescriptor(*vp), err);
        *vp = NULL;
    }
    CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, vp), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs), err);
    CUDNN_TRY(cudnnBackendSetAttribute(*vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace), err);
    CUDNN_TRY(cudnnBackendFinalize(*vp), err);
    return ATTN_OK;
}
