/* The counter pass over CUPTI's Range Profiler (see counter_pass.h). Every CUPTI status
 * is checked; a refusal for lack of permission (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES and
 * its vGPU twin), an unsupported device or a profiler already in use becomes
 * CTR_FORBIDDEN with the reason, so run.json and the report say so and the batch goes on.
 * The host half (metric enumeration, config image, evaluation) needs no GPU. */
#include "counter_pass.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "check.h" /* after cupti.h: its CUPTI part */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KERNEL_RANGES 64 /* kernels per forward: math has 17 */
#define MAX_USER_PASSES 64

static struct {
    int initialized;
    CUpti_Profiler_Host_Object *host;
    uint8_t *config;
    /* The host object reads the availability image again when metrics are added
     * (CUPTI keeps a pointer, not a copy): it lives until counter_pass_close. */
    uint8_t *availability;
    size_t config_size;
    const char *names[M_COUNT]; /* the available metrics, in order */
    int metric_of[M_COUNT];     /* names[i] is counters_metric_names[metric_of[i]] */
    size_t n_names;
    char chip[32];
} P;

/* "call: CUPTI_ERROR_X (text)" into err; returns the status. */
/* Writes the message of a failed call into err (when there is one); returns its status. */
static CUptiResult said_at(CUptiResult r, const char *call, const char *file, int line, char *err, size_t errlen)
{
    if (r != CUPTI_SUCCESS && err)
        check_cupti_describe(err, errlen, call, r, file, line);
    return r;
}
#define said(r, call, err, errlen) said_at((r), (call), __FILE__, __LINE__, (err), (errlen))
#define TRY(call) CHECK_CALL(cupti, call, if (err) snprintf(err, errlen, "%s", check_msg_); return check_st_)

/* The GPU or the system refuses counters (no permission, another profiler holds the
 * hardware, a device kind without profiling): nothing a later variant would change. */
static int is_forbidden(CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
        return 1;
    default:
        return 0;
    }
}

static int current_context(CUcontext *ctx, char *err, size_t errlen)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t ce = cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q);
    if (ce != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
        snprintf(err, errlen, "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent): %s",
                 ce != cudaSuccess ? cudaGetErrorString(ce) : "symbol not found");
        return -1;
    }
    CUresult cr = ((CUresult(*)(CUcontext *))fn)(ctx);
    if (cr != CUDA_SUCCESS || !*ctx) {
        snprintf(err, errlen, "cuCtxGetCurrent: driver error %d%s", (int)cr, *ctx ? "" : " (no current context)");
        return -1;
    }
    return 0;
}

/* Base name of a metric: "dram__bytes_read.sum" → "dram__bytes_read". */
static void base_name(const char *metric, char *out, size_t n)
{
    snprintf(out, n, "%s", metric);
    char *dot = strchr(out, '.');
    if (dot)
        *dot = '\0';
}

static CUptiResult open_host(counters_meta *meta, CUcontext ctx, char *err, size_t errlen)
{
    CUpti_Profiler_Initialize_Params init = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    TRY(cuptiProfilerInitialize(&init));
    P.initialized = 1;

    CUpti_Profiler_DeviceSupported_Params sup = {.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    sup.cuDevice = 0;
    sup.api = CUPTI_PROFILER_RANGE_PROFILING;
    TRY(cuptiProfilerDeviceSupported(&sup));
    if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
        snprintf(err, errlen,
                 "cuptiProfilerDeviceSupported: range profiling not supported here (architecture %d, vGPU %d, "
                 "confidential compute %d, CMP %d, WSL %d; 1 = unsupported, 2 = disabled)",
                 (int)sup.architecture, (int)sup.vGpu, (int)sup.confidentialCompute, (int)sup.cmp, (int)sup.wsl);
        return CUPTI_ERROR_NOT_SUPPORTED;
    }

    CUpti_Device_GetChipName_Params chip = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = 0;
    TRY(cuptiDeviceGetChipName(&chip));
    snprintf(P.chip, sizeof P.chip, "%s", chip.pChipName);
    snprintf(meta->chip, sizeof meta->chip, "%s", chip.pChipName);

    CUpti_Profiler_GetCounterAvailability_Params av = {.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    av.ctx = ctx;
    TRY(cuptiProfilerGetCounterAvailability(&av));
    uint8_t *avail = malloc(av.counterAvailabilityImageSize);
    if (!avail) {
        snprintf(err, errlen, "out of host memory");
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    av.pCounterAvailabilityImage = avail;
    P.availability = avail;
    CUptiResult r = said(cuptiProfilerGetCounterAvailability(&av), "cuptiProfilerGetCounterAvailability", err, errlen);
    if (r == CUPTI_SUCCESS) {
        CUpti_Profiler_Host_Initialize_Params hi = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
        hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        hi.pChipName = P.chip;
        hi.pCounterAvailabilityImage = avail;
        r = said(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize", err, errlen);
        P.host = hi.pHostObject;
    }
    return r;
}

/* Which of our metrics the chip has: a metric is available when its base name is among
 * the chip's base metrics (any type) and its properties resolve. */
static CUptiResult enumerate(counters_meta *meta, char *err, size_t errlen)
{
    char base[128];
    P.n_names = 0;
    for (int m = 0; m < M_COUNT; m++) {
        base_name(counters_metric_names[m], base, sizeof base);
        int found = 0;
        for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT && !found; type++) {
            CUpti_Profiler_Host_GetBaseMetrics_Params bm = {.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
            bm.pHostObject = P.host;
            bm.metricType = (CUpti_MetricType)type;
            TRY(cuptiProfilerHostGetBaseMetrics(&bm));
            for (size_t i = 0; i < bm.numMetrics && !found; i++)
                found = !strcmp(bm.ppMetricNames[i], base);
        }
        if (found) {
            CUpti_Profiler_Host_GetMetricProperties_Params mp = {
                .structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
            mp.pHostObject = P.host;
            mp.pMetricName = base;
            found = cuptiProfilerHostGetMetricProperties(&mp) == CUPTI_SUCCESS;
        }
        meta->available[m] = found;
        if (found) {
            P.metric_of[P.n_names] = m;
            P.names[P.n_names++] = counters_metric_names[m];
        }
    }
    if (!P.n_names) {
        snprintf(err, errlen, "none of the metrics exists on chip %s", P.chip);
        return CUPTI_ERROR_INVALID_METRIC_NAME;
    }
    return CUPTI_SUCCESS;
}

static CUptiResult build_config(counters_meta *meta, char *err, size_t errlen)
{
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = P.host;
    add.ppMetricNames = P.names;
    add.numMetrics = P.n_names;
    TRY(cuptiProfilerHostConfigAddMetrics(&add));
    CUpti_Profiler_Host_GetConfigImageSize_Params sz = {.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    sz.pHostObject = P.host;
    TRY(cuptiProfilerHostGetConfigImageSize(&sz));
    P.config = malloc(sz.configImageSize);
    if (!P.config) {
        snprintf(err, errlen, "out of host memory");
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    P.config_size = sz.configImageSize;
    CUpti_Profiler_Host_GetConfigImage_Params img = {.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    img.pHostObject = P.host;
    img.configImageSize = P.config_size;
    img.pConfigImage = P.config;
    TRY(cuptiProfilerHostGetConfigImage(&img));
    CUpti_Profiler_Host_GetNumOfPasses_Params np = {.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.configImageSize = P.config_size;
    np.pConfigImage = P.config;
    TRY(cuptiProfilerHostGetNumOfPasses(&np));
    meta->passes = (int)np.numOfPasses;
    return CUPTI_SUCCESS;
}

int counter_pass_open(counters_meta *meta)
{
    memset(&P, 0, sizeof P);
    snprintf(meta->method, sizeof meta->method,
             "CUPTI Range Profiler: auto range per kernel with kernel replay, plus one user range (user replay) "
             "around the forward; one forward per variant after the timed pass");
    char err[256] = "";
    size_t errlen = sizeof err;
    CUcontext ctx = NULL;
    CUptiResult r = CUPTI_SUCCESS;
    if (current_context(&ctx, err, errlen) != 0)
        r = CUPTI_ERROR_INVALID_CONTEXT;
    if (r == CUPTI_SUCCESS)
        r = open_host(meta, ctx, err, errlen);
    if (r == CUPTI_SUCCESS)
        r = enumerate(meta, err, errlen);
    if (r == CUPTI_SUCCESS)
        r = build_config(meta, err, errlen);
    if (r == CUPTI_SUCCESS) {
        meta->status = CTR_OK;
        return 0;
    }
    meta->status = is_forbidden(r) ? CTR_FORBIDDEN : CTR_FAILED;
    snprintf(meta->reason, sizeof meta->reason, "%s%s", err,
             r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
                 ? "; counters need NVreg_RestrictProfilingToAdminUsers=0 or root"
                 : "");
    counter_pass_close();
    return -1;
}

int counter_pass_host_check(const char *chip, counters_meta *meta, char *err, size_t errlen)
{
    memset(&P, 0, sizeof P);
    memset(meta, 0, sizeof *meta);
    snprintf(P.chip, sizeof P.chip, "%s", chip);
    snprintf(meta->chip, sizeof meta->chip, "%s", chip);
    CUpti_Profiler_Host_Initialize_Params hi = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = P.chip;
    hi.pCounterAvailabilityImage = NULL; /* no device: every counter of the chip */
    CUptiResult r = said(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize", err, errlen);
    P.host = hi.pHostObject;
    if (r == CUPTI_SUCCESS)
        r = enumerate(meta, err, errlen);
    if (r == CUPTI_SUCCESS)
        r = build_config(meta, err, errlen);
    counter_pass_close();
    if (r != CUPTI_SUCCESS)
        return -1;
    meta->status = CTR_OK;
    return 0;
}

void counter_pass_close(void)
{
    if (P.host) {
        CUpti_Profiler_Host_Deinitialize_Params d = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        d.pHostObject = P.host;
        (void)cuptiProfilerHostDeinitialize(&d); /* teardown: nothing left to report to */
    }
    if (P.initialized) {
        CUpti_Profiler_DeInitialize_Params d = {.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        (void)cuptiProfilerDeInitialize(&d);
    }
    free(P.config);
    free(P.availability);
    memset(&P, 0, sizeof P);
}

/* One session: enable on the context, size and initialize a counter-data image, set the
 * config for (range, replay), run, decode, disable. The image is handed back for
 * evaluation (malloc'd). */
typedef struct session {
    CUpti_RangeProfiler_Object *obj;
    uint8_t *data;
    size_t data_size;
} session;

static CUptiResult session_begin(session *s, CUcontext ctx, CUpti_ProfilerRange range,
                                 CUpti_ProfilerReplayMode replay, size_t max_ranges, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    CUpti_RangeProfiler_Enable_Params en = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    en.ctx = ctx;
    TRY(cuptiRangeProfilerEnable(&en));
    s->obj = en.pRangeProfilerObject;
    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    ds.pRangeProfilerObject = s->obj;
    ds.pMetricNames = P.names;
    ds.numMetrics = P.n_names;
    ds.maxNumOfRanges = max_ranges;
    ds.maxNumRangeTreeNodes = (uint32_t)max_ranges;
    TRY(cuptiRangeProfilerGetCounterDataSize(&ds));
    s->data = calloc(1, ds.counterDataSize);
    if (!s->data) {
        snprintf(err, errlen, "out of host memory");
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    s->data_size = ds.counterDataSize;
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    ci.pRangeProfilerObject = s->obj;
    ci.counterDataSize = s->data_size;
    ci.pCounterData = s->data;
    TRY(cuptiRangeProfilerCounterDataImageInitialize(&ci));
    CUpti_RangeProfiler_SetConfig_Params sc = {.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    sc.pRangeProfilerObject = s->obj;
    sc.configSize = P.config_size;
    sc.pConfig = P.config;
    sc.counterDataImageSize = s->data_size;
    sc.pCounterDataImage = s->data;
    sc.range = range;
    sc.replayMode = replay;
    sc.maxRangesPerPass = max_ranges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    TRY(cuptiRangeProfilerSetConfig(&sc));
    return CUPTI_SUCCESS;
}

static CUptiResult session_start(session *s, char *err, size_t errlen)
{
    CUpti_RangeProfiler_Start_Params st = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    st.pRangeProfilerObject = s->obj;
    TRY(cuptiRangeProfilerStart(&st));
    return CUPTI_SUCCESS;
}

static CUptiResult session_stop(session *s, int *all_submitted, char *err, size_t errlen)
{
    CUpti_RangeProfiler_Stop_Params sp = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    sp.pRangeProfilerObject = s->obj;
    TRY(cuptiRangeProfilerStop(&sp));
    *all_submitted = sp.isAllPassSubmitted;
    return CUPTI_SUCCESS;
}

/* Decode and disable; the object is gone afterwards whatever happened. */
static CUptiResult session_end(session *s, size_t *dropped, char *err, size_t errlen)
{
    CUptiResult r = CUPTI_SUCCESS;
    if (dropped) {
        CUpti_RangeProfiler_DecodeData_Params dd = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
        dd.pRangeProfilerObject = s->obj;
        r = said(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData", err, errlen);
        *dropped = dd.numOfRangeDropped;
    }
    if (s->obj) {
        CUpti_RangeProfiler_Disable_Params di = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        di.pRangeProfilerObject = s->obj;
        CUptiResult r2 = cuptiRangeProfilerDisable(&di);
        if (r == CUPTI_SUCCESS)
            r = said(r2, "cuptiRangeProfilerDisable", err, errlen);
        s->obj = NULL;
    }
    return r;
}

/* Every range of a decoded image into `out`. */
static CUptiResult evaluate(const session *s, const char *variant, const char *kind, counters_set *out, char *err,
                            size_t errlen)
{
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = s->data;
    info.counterDataImageSize = s->data_size;
    TRY(cuptiRangeProfilerGetCounterDataInfo(&info));
    double values[M_COUNT];
    for (size_t i = 0; i < info.numTotalRanges; i++) {
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri = {
            .structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
        ri.pCounterDataImage = s->data;
        ri.counterDataImageSize = s->data_size;
        ri.rangeIndex = i;
        ri.rangeDelimiter = "/";
        TRY(cuptiRangeProfilerCounterDataGetRangeInfo(&ri));
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
            .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        ev.pHostObject = P.host;
        ev.pCounterDataImage = s->data;
        ev.counterDataImageSize = s->data_size;
        ev.rangeIndex = i;
        ev.ppMetricNames = P.names;
        ev.numMetrics = P.n_names;
        ev.pMetricValues = values;
        TRY(cuptiProfilerHostEvaluateToGpuValues(&ev));
        counter_range *r = counters_add(out, variant, kind, strstr(kind, "kernel") ? (int)i : -1,
                                        ri.rangeName ? ri.rangeName : "");
        if (!r) {
            snprintf(err, errlen, "out of host memory");
            return CUPTI_ERROR_OUT_OF_MEMORY;
        }
        for (size_t k = 0; k < P.n_names; k++)
            r->v[P.metric_of[k]] = values[k];
    }
    return CUPTI_SUCCESS;
}

static CUptiResult kernel_ranges(CUcontext ctx, const char *variant, const char *kind, int (*fwd)(void *),
                                 void *ctx_fwd, cudaStream_t stream, counters_set *out, char *err, size_t errlen)
{
    session s;
    CUptiResult r = session_begin(&s, ctx, CUPTI_AutoRange, CUPTI_KernelReplay, MAX_KERNEL_RANGES, err, errlen);
    int all = 0;
    if (r == CUPTI_SUCCESS)
        r = session_start(&s, err, errlen);
    if (r == CUPTI_SUCCESS) {
        int frc = fwd(ctx_fwd);
        cudaError_t ce = cudaStreamSynchronize(stream);
        r = session_stop(&s, &all, err, errlen);
        if (r == CUPTI_SUCCESS && (frc || ce != cudaSuccess)) {
            snprintf(err, errlen, "%s under kernel replay failed: %s", kind,
                     ce != cudaSuccess ? cudaGetErrorString(ce) : "the variant's call returned an error");
            r = CUPTI_ERROR_UNKNOWN;
        }
        if (r == CUPTI_SUCCESS && !all) {
            snprintf(err, errlen, "kernel replay: cuptiRangeProfilerStop reports passes not submitted");
            r = CUPTI_ERROR_UNKNOWN;
        }
    }
    size_t dropped = 0;
    CUptiResult r2 = session_end(&s, r == CUPTI_SUCCESS ? &dropped : NULL, err, errlen);
    if (r == CUPTI_SUCCESS)
        r = r2;
    if (r == CUPTI_SUCCESS && dropped) {
        snprintf(err, errlen, "%zu %s ranges dropped (more than %d kernels per call)", dropped, kind,
                 MAX_KERNEL_RANGES);
        r = CUPTI_ERROR_UNKNOWN;
    }
    if (r == CUPTI_SUCCESS)
        r = evaluate(&s, variant, kind, out, err, errlen);
    free(s.data);
    return r;
}

static CUptiResult forward_range(CUcontext ctx, const char *variant, const char *kind, int (*fwd)(void *),
                                 void *ctx_fwd, cudaStream_t stream, counters_set *out, char *err, size_t errlen)
{
    session s;
    CUptiResult r = session_begin(&s, ctx, CUPTI_UserRange, CUPTI_UserReplay, 1, err, errlen);
    int all = 0, passes = 0;
    while (r == CUPTI_SUCCESS && !all) {
        if (++passes > MAX_USER_PASSES) {
            snprintf(err, errlen, "%s range: not all passes submitted after %d", kind, MAX_USER_PASSES);
            r = CUPTI_ERROR_UNKNOWN;
            break;
        }
        r = session_start(&s, err, errlen);
        if (r != CUPTI_SUCCESS)
            break;
        CUpti_RangeProfiler_PushRange_Params pu = {.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
        pu.pRangeProfilerObject = s.obj;
        pu.pRangeName = kind;
        r = said(cuptiRangeProfilerPushRange(&pu), "cuptiRangeProfilerPushRange", err, errlen);
        int frc = r == CUPTI_SUCCESS ? fwd(ctx_fwd) : 0;
        cudaError_t ce = cudaStreamSynchronize(stream);
        if (r == CUPTI_SUCCESS) {
            CUpti_RangeProfiler_PopRange_Params po = {.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
            po.pRangeProfilerObject = s.obj;
            r = said(cuptiRangeProfilerPopRange(&po), "cuptiRangeProfilerPopRange", err, errlen);
        }
        CUptiResult r2 = session_stop(&s, &all, err, errlen);
        if (r == CUPTI_SUCCESS)
            r = r2;
        if (r == CUPTI_SUCCESS && (frc || ce != cudaSuccess)) {
            snprintf(err, errlen, "%s under user replay failed: %s", kind,
                     ce != cudaSuccess ? cudaGetErrorString(ce) : "the variant's call returned an error");
            r = CUPTI_ERROR_UNKNOWN;
        }
    }
    size_t dropped = 0;
    CUptiResult r2 = session_end(&s, r == CUPTI_SUCCESS ? &dropped : NULL, err, errlen);
    if (r == CUPTI_SUCCESS)
        r = r2;
    if (r == CUPTI_SUCCESS)
        r = evaluate(&s, variant, kind, out, err, errlen);
    free(s.data);
    return r;
}

int counter_pass_forward(const char *variant, int (*fwd)(void *ctx), void *ctx, void *stream, counters_set *out,
                         char *err, size_t errlen)
{
    return counter_pass_call(variant, "kernel", "forward", fwd, ctx, stream, out, err, errlen);
}

int counter_pass_call(const char *variant, const char *kernel_kind, const char *call_kind, int (*fwd)(void *ctx),
                      void *ctx, void *stream, counters_set *out, char *err, size_t errlen)
{
    if (!P.host) {
        snprintf(err, errlen, "counter pass not open");
        return -1;
    }
    CUcontext cu = NULL;
    if (current_context(&cu, err, errlen) != 0)
        return -1;
    int before = out->n;
    CUptiResult r = kernel_ranges(cu, variant, kernel_kind, fwd, ctx, (cudaStream_t)stream, out, err, errlen);
    if (r == CUPTI_SUCCESS)
        r = forward_range(cu, variant, call_kind, fwd, ctx, (cudaStream_t)stream, out, err, errlen);
    if (r != CUPTI_SUCCESS) {
        out->n = before; /* all of the variant's ranges or none */
        return is_forbidden(r) ? -2 : -1;
    }
    return 0;
}
