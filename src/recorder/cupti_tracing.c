/* CUPTI Activity API tracing behind cupti_tracing.h: buffers are handed to CUPTI
 * (buffer_requested), each completed buffer's records are turned into trace events
 * (buffer_completed -> record), and at each flush the records of one variant are kept or
 * dropped, the host-stamped ranges the runner opened matched to CUPTI's NVTX markers (or to
 * the host stamps when no marker came), and dropped records counted. Failures are 0 / -1 with
 * the call, CUPTI's message and file:line in err (check.h); the runner says what each means
 * (EXIT_IO when tracing cannot start, a failed variant after that). */
#include "cupti_tracing.h"

#include <cupti.h>

#include "check.h" /* after cupti.h: its CUPTI part */

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BUFFER_BYTES (8u << 20)
#define MAX_OPEN 64

char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* Host-side stamps of the ranges the runner opened, in push order. */
typedef struct pending_range {
    char name[64];
    int iteration;
    uint64_t start, end;
    int open;
} pending_range;

/* CUPTI marker records received since the last flush (start/end paired by id). */
typedef struct marker {
    uint32_t id;
    uint64_t start, end;
    char name[64];
} marker;

static struct {
    trace *t;
    trace batch; /* records of the current flush, before filtering */
    pending_range *ranges;
    size_t n_ranges, cap_ranges;
    int open_stack[MAX_OPEN];
    int depth;
    marker *markers;
    size_t n_markers, cap_markers;
    int64_t dropped;
    int os_tid;            /* gettid() of the thread that started tracing */
    uint32_t self_pthread; /* its pthread id, as CUPTI's API records name it */
    int from_markers, from_host;
    int pid;
} C;

static int cupti_fail_at(char *err, size_t n, const char *call, CUptiResult r, const char *file, int line)
{
    check_cupti_describe(err, n, call, r, file, line);
    return -1;
}
#define cupti_fail(err, n, call, r) cupti_fail_at((err), (n), (call), (r), __FILE__, __LINE__)
#define CUPTI_TRY(call) CHECK_CALL(cupti, call, snprintf(err, errlen, "%s", check_msg_); return -1)

int cupti_off(void)
{
    const char *e = getenv("ATTNPROF_CUPTI");
    return e && !strcmp(e, "off");
}

void cupti_prepare_nvtx(void)
{
    if (cupti_off() || getenv("NVTX_INJECTION64_PATH"))
        return;
    Dl_info info;
    if (dladdr((void *)cuptiActivityEnable, &info) && info.dli_fname)
        setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

uint64_t cupti_timestamp(void)
{
    uint64_t ts = 0;
    if (cupti_off()) { /* no CUPTI call at all: the host's monotonic clock */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    }
    cuptiGetTimestamp(&ts);
    return ts;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static const char *copy_kind_name(uint8_t k, const char **long_name)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        *long_name = "Host -> Device";
        return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        *long_name = "Device -> Host";
        return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        *long_name = "Device -> Device";
        return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        *long_name = "Host -> Host";
        return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        *long_name = "Device -> Peer";
        return "PtoP";
    default:
        *long_name = "Unknown";
        return "?";
    }
}

static void api_name(CUpti_CallbackDomain dom, uint32_t cbid, char *out, size_t n)
{
    const char *name = NULL;
    if (cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
        name = "unknown API";
    snprintf(out, n, "%s", name);
    char *v = strstr(out, "_v");
    if (v && v[2] >= '0' && v[2] <= '9') /* cudaLaunchKernel_v7000 → cudaLaunchKernel, as Kineto shows it */
        *v = '\0';
}

static void add_marker(const CUpti_ActivityMarker2 *m)
{
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        if (C.n_markers == C.cap_markers) {
            C.cap_markers = C.cap_markers ? C.cap_markers * 2 : 256;
            C.markers = realloc(C.markers, C.cap_markers * sizeof *C.markers);
            if (!C.markers)
                abort();
        }
        marker *k = &C.markers[C.n_markers++];
        memset(k, 0, sizeof *k);
        k->id = m->id;
        k->start = m->timestamp;
        snprintf(k->name, sizeof k->name, "%s", m->name ? m->name : "");
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        for (size_t i = C.n_markers; i-- > 0;)
            if (C.markers[i].id == m->id && !C.markers[i].end) {
                C.markers[i].end = m->timestamp;
                break;
            }
    }
}

/* CUPTI names the calling thread by its pthread id; Kineto (and attnprof's trace)
 * by the OS thread id. The runner calls from the thread that started CUPTI. */
static int os_thread(uint32_t cupti_thread)
{
    return cupti_thread == C.self_pthread ? C.os_tid : (int)cupti_thread;
}

static void record(const CUpti_Activity *rec)
{
    trace *b = &C.batch;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        int status = -1;
        char *dem = k->name ? __cxa_demangle(k->name, NULL, NULL, &status) : NULL;
        gpu_op o = {.kind = GPU_KERNEL,
                    .name = (char *)(status == 0 && dem ? dem : (k->name ? k->name : "?")),
                    .start_ns = (int64_t)k->start,
                    .end_ns = (int64_t)k->end,
                    .correlation = k->correlationId,
                    .device = (int)k->deviceId,
                    .stream = (int)k->streamId,
                    .grid = {k->gridX, k->gridY, k->gridZ},
                    .block = {k->blockX, k->blockY, k->blockZ},
                    .registers = k->registersPerThread,
                    .static_smem = k->staticSharedMemory,
                    .dynamic_smem = k->dynamicSharedMemory,
                    .context = (int)k->contextId};
        trace_add_op(b, &o);
        free(dem);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
        const char *longn;
        const char *kind = copy_kind_name(m->copyKind, &longn);
        char name[96];
        snprintf(name, sizeof name, "Memcpy %s (%s)", kind, longn);
        gpu_op o = {.kind = GPU_MEMCPY,
                    .name = name,
                    .start_ns = (int64_t)m->start,
                    .end_ns = (int64_t)m->end,
                    .correlation = m->correlationId,
                    .device = (int)m->deviceId,
                    .stream = (int)m->streamId,
                    .bytes = (int64_t)m->bytes,
                    .context = (int)m->contextId};
        snprintf(o.copy_kind, sizeof o.copy_kind, "%s", kind);
        trace_add_op(b, &o);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
        gpu_op o = {.kind = GPU_MEMSET,
                    .name = "Memset (Device)",
                    .start_ns = (int64_t)m->start,
                    .end_ns = (int64_t)m->end,
                    .correlation = m->correlationId,
                    .device = (int)m->deviceId,
                    .stream = (int)m->streamId,
                    .bytes = (int64_t)m->bytes,
                    .context = (int)m->contextId};
        trace_add_op(b, &o);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
        char name[128];
        int runtime = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid, name, sizeof name);
        api_call c = {.kind = runtime ? API_RUNTIME : API_DRIVER,
                      .name = name,
                      .start_ns = (int64_t)a->start,
                      .end_ns = (int64_t)a->end,
                      .correlation = a->correlationId,
                      .pid = (int)a->processId,
                      .tid = os_thread(a->threadId),
                      .cbid = (int)a->cbid};
        trace_add_api(b, &c);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
        add_marker((const CUpti_ActivityMarker2 *)rec);
        break;
    default:
        break;
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        record(rec);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        C.dropped += (int64_t)dropped;
    free(buffer);
}

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MARKER,
};

int cupti_enable(int on, char *err, size_t errlen)
{
    if (cupti_off())
        return 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        CUptiResult r = on ? cuptiActivityEnable(kinds[i]) : cuptiActivityDisable(kinds[i]);
        if (r != CUPTI_SUCCESS) {
            char what[64];
            snprintf(what, sizeof what, "cuptiActivity%s(kind %d)", on ? "Enable" : "Disable", (int)kinds[i]);
            return cupti_fail(err, errlen, what, r);
        }
    }
    return 0;
}

int cupti_enable_memset_records(int on, char *err, size_t errlen)
{
    if (cupti_off())
        return 0;
    CUptiResult r = on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    if (r != CUPTI_SUCCESS)
        return cupti_fail(err, errlen, on ? "cuptiActivityEnable(MEMSET)" : "cuptiActivityDisable(MEMSET)", r);
    return 0;
}

int cupti_start(trace *t, char *err, size_t errlen)
{
    memset(&C, 0, sizeof C);
    C.t = t;
    C.pid = (int)getpid();
    C.os_tid = (int)syscall(SYS_gettid);
    C.self_pthread = (uint32_t)pthread_self();
    t->pid = C.pid;
    trace_init(&C.batch);
    if (cupti_off()) {
        fprintf(stderr, "attnprof: ATTNPROF_CUPTI=off: no CUPTI activity tracing (for compute-sanitizer); the archive "
                        "holds no GPU operations or API calls, only the ranges, times and checks\n");
        return 0;
    }
    uint32_t ver = 0;
    CUPTI_TRY(cuptiGetVersion(&ver));
    t->cupti_version = (int)ver;
    CUPTI_TRY(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    return cupti_enable(1, err, errlen);
}

void cupti_range_push(const char *name, int iteration)
{
    if (C.n_ranges == C.cap_ranges) {
        C.cap_ranges = C.cap_ranges ? C.cap_ranges * 2 : 64;
        C.ranges = realloc(C.ranges, C.cap_ranges * sizeof *C.ranges);
        if (!C.ranges)
            abort();
    }
    pending_range *r = &C.ranges[C.n_ranges];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->iteration = iteration;
    r->end = 0;
    if (C.depth < MAX_OPEN)
        C.open_stack[C.depth++] = (int)C.n_ranges;
    C.n_ranges++;
    r->start = cupti_timestamp();
    nvtxRangePushA(name);
}

void cupti_range_pop(void)
{
    nvtxRangePop();
    uint64_t now = cupti_timestamp();
    if (C.depth > 0)
        C.ranges[C.open_stack[--C.depth]].end = now;
}

const char *cupti_marker_source(void)
{
    if (C.from_markers && !C.from_host)
        return "CUPTI NVTX marker records";
    if (C.from_host && !C.from_markers)
        return "host timestamps on CUPTI's clock (NVTX injection not active)";
    if (C.from_host)
        return "CUPTI NVTX marker records, some host timestamps";
    return "none";
}

/* A CUPTI marker with the same name that starts after the host stamp and ends
 * before the host's end stamp is the record of that range. */
static const marker *matching_marker(const pending_range *r)
{
    for (size_t i = 0; i < C.n_markers; i++) {
        const marker *m = &C.markers[i];
        if (m->end && m->start >= r->start && m->end <= r->end && !strcmp(m->name, r->name))
            return m;
    }
    return NULL;
}

/* The runner issues everything from one host thread: the one CUPTI's API records name. */
static int host_thread_of(const trace *b)
{
    return b->n_apis ? b->apis[0].tid : C.pid;
}

int cupti_flush(int keep, const char *variant, int64_t *dropped, char *err, size_t errlen)
{
    if (!cupti_off())
        CUPTI_TRY(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    trace *b = &C.batch;
    if (keep) {
        /* Driver records are kept where they launched GPU work (cuLaunchKernelEx from
         * cuDNN/cuBLAS); the many bookkeeping driver calls under each runtime call are not. */
        for (size_t i = 0; i < b->n_apis; i++) {
            const api_call *a = &b->apis[i];
            int launched = 0;
            for (size_t j = 0; j < b->n_ops && !launched; j++)
                launched = b->ops[j].correlation == a->correlation;
            if (a->kind == API_RUNTIME || launched)
                trace_add_api(C.t, a);
        }
        for (size_t i = 0; i < b->n_ops; i++)
            trace_add_op(C.t, &b->ops[i]);
        int tid = host_thread_of(b);
        for (size_t i = 0; i < C.n_ranges; i++) {
            pending_range *r = &C.ranges[i];
            if (!r->end)
                continue;
            const marker *m = matching_marker(r);
            host_range h = {.name = r->name,
                            .variant = (char *)variant,
                            .iteration = r->iteration,
                            .start_ns = (int64_t)(m ? m->start : r->start),
                            .end_ns = (int64_t)(m ? m->end : r->end),
                            .pid = C.pid,
                            .tid = tid};
            if (m)
                C.from_markers++;
            else
                C.from_host++;
            trace_add_range(C.t, &h);
        }
    }
    trace_free(b);
    C.n_ranges = 0;
    C.depth = 0;
    C.n_markers = 0;
    if (dropped)
        *dropped += C.dropped;
    C.dropped = 0;
    return 0;
}

void cupti_stop(void)
{
    if (!cupti_off())
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    char err[8];
    cupti_enable(0, err, sizeof err);
    trace_free(&C.batch);
    free(C.ranges);
    free(C.markers);
    memset(&C, 0, sizeof C);
}
