/* libattnprof_inject.so: the CUPTI injection library behind `attnprof record`. The CUDA
 * driver loads the library named by CUDA_INJECTION64_PATH into any process at its first
 * CUDA call and calls its InitializeInjection (as the CUPTI samples' cupti_injection and
 * Kineto's libkineto do); the library then asks CUPTI for activity records of kernels,
 * memcpy, memset, the runtime and driver calls that launch, copy, set, record or synchronise
 * (API_WORDS), NVTX ranges and markers, and the devices (synchronisation records only when
 * asked for: KINDS says why), and writes them as they complete into one raw text file per process,
 * ATTNPROF_INJECT_DIR/raw-<pid>.txt (the format: report/io/inject_raw.h). The record
 * command turns that file into an archive; nothing here knows about archives.
 *
 * Bounded: CUPTI gets buffers of BUFFER_BYTES, at most ATTNPROF_INJECT_BUFFER_MB of them
 * outstanding (default DEFAULT_BUFFER_MB); past that it drops records and counts them,
 * and the counts go into the file ("X" lines). The raw file itself stops growing at
 * ATTNPROF_INJECT_RAW_MB (default DEFAULT_RAW_MB), checked at each completed buffer: the
 * records of later buffers are counted, not written ("T" line), and the archive says the
 * recording is incomplete, so a long-running program cannot fill the disk. Buffers come zeroed
 * and are reused (POOL_MAX), so CUPTI clears none on the program's thread. Buffers complete on CUPTI's own worker
 * thread, every FLUSH_PERIOD_MS and when full; records are written there, under
 * out_lock, so the program's threads pay only CUPTI's own cost. At exit (atexit) the
 * last buffers are flushed and an "E complete" line ends the file; a fatal signal
 * flushes what it can and ends it with "E signal N" before the signal goes on; a file
 * without an E line was cut short (SIGKILL, _exit). NVTX: the record command points
 * NVTX_INJECTION64_PATH at this library too, and InitializeInjectionNvtx2 hands NVTX
 * to CUPTI's own handler, so ranges come back as CUPTI marker records. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "inject_kinds.h"

#include <cupti.h>

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BUFFER_BYTES (4u << 20)
#define DEFAULT_BUFFER_MB 512
#define DEFAULT_RAW_MB 4096
#define FLUSH_PERIOD_MS 2000
#define POOL_MAX 16 /* zeroed buffers kept for reuse (64 MiB); more are freed */
#define CLOCK_SAMPLE_NS 200000000ull /* at most one NVML clock sample per 0.2 s of completed buffers */

/* Demangled kernel names kept (open addressing); a program with more distinct kernels demangles
 * the rest each time. */
#define NAME_SLOTS 4096

char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* CUPTI shares one name string among every record of the same kernel ("should not be
 * modified"), so its address keys the demangled name: a decode step launches a few dozen
 * distinct kernels thousands of times, and demangling each record again cost the worker
 * thread microseconds a record (bench/inject_record_cost.c). */
struct demangled {
    const char *mangled; /* CUPTI's pointer */
    char *copy;          /* its text when cached: a pointer reused for another kernel's name (a
                          * module unloaded, another loaded) is caught */
    char *name;          /* malloc'ed; NULL when the name does not demangle (used as it is) */
};

struct nvml {
    void *lib;
    void *dev;
    int (*clock)(void *, int, unsigned *);
    int sm_min, sm_max, mem_min, mem_max, samples;
    uint64_t last_ns;
};
static struct {
    FILE *out;
    pthread_mutex_t out_lock;
    atomic_long buffers_out;  /* buffers handed to CUPTI and not yet completed */
    long buffers_max;
    long long raw_max_bytes;  /* the raw file's bound */
    long long past_bound;     /* records not written because the file reached its bound */
    atomic_llong refused;     /* buffer requests refused at the bound */
    /* Buffers CUPTI gave back, zeroed on CUPTI's worker thread, handed out again: CUPTI is told
     * (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) that every buffer comes zeroed, so it
     * does not clear 4 MiB on the program's thread when that thread needs a new buffer, and a
     * reused buffer takes no page faults there either. */
    pthread_mutex_t pool_lock;
    uint8_t *pool[POOL_MAX];
    int n_pool;
    int finished;             /* the E line is written */
    struct nvml nvml_state;
    pid_t first_tid;          /* the thread of the process's first CUDA call (the program's) */
    atomic_int finishing;     /* finish() began: its own flush completes buffers on the exiting thread */
    long completed, completed_on_first; /* buffers completed, and how many on that thread */
    struct demangled names[NAME_SLOTS]; /* demangled kernel names by CUPTI's name pointer */
    long demangle_calls, name_hits;
} S = {.out_lock = PTHREAD_MUTEX_INITIALIZER, .pool_lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- NVML, resolved with dlsym (the toolkit ships no nvml.h): driver version and clocks ---- */

enum { NVML_OK = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Opens NVML on the GPU with this UUID ("GPU-…") and writes the driver version and power limit. */
static void nvml_open(const char *uuid)
{
    struct nvml *n = &S.nvml_state;
    if (n->lib || !(n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)))
        return;
    int (*init)(void) = (int (*)(void))dlsym(n->lib, "nvmlInit_v2");
    int (*by_uuid)(const char *, void **) = (int (*)(const char *, void **))dlsym(n->lib, "nvmlDeviceGetHandleByUUID");
    int (*driver)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(n->lib, "nvmlSystemGetDriverVersion");
    int (*power)(void *, unsigned *) = (int (*)(void *, unsigned *))dlsym(n->lib, "nvmlDeviceGetEnforcedPowerLimit");
    n->clock = (int (*)(void *, int, unsigned *))dlsym(n->lib, "nvmlDeviceGetClockInfo");
    if (!init || !by_uuid || !n->clock || init() != NVML_OK || by_uuid(uuid, &n->dev) != NVML_OK) {
        n->dev = NULL;
        return;
    }
    char ver[96];
    if (driver && driver(ver, sizeof ver) == NVML_OK)
        fprintf(S.out, "V\tdriver\t%s\n", ver);
    unsigned mw = 0;
    if (power && power(n->dev, &mw) == NVML_OK)
        fprintf(S.out, "V\tpower_limit_w\t%u\n", mw / 1000);
}

/* One SM and memory clock sample (called with out_lock held), rate-limited by CLOCK_SAMPLE_NS. */
static void nvml_sample(int force)
{
    struct nvml *n = &S.nvml_state;
    uint64_t t = now_ns();
    if (!n->dev || (!force && t - n->last_ns < CLOCK_SAMPLE_NS))
        return;
    n->last_ns = t;
    unsigned sm = 0, mem = 0;
    if (n->clock(n->dev, NVML_CLOCK_SM, &sm) != NVML_OK || n->clock(n->dev, NVML_CLOCK_MEM, &mem) != NVML_OK)
        return;
    if (!n->samples || (int)sm < n->sm_min)
        n->sm_min = (int)sm;
    if (!n->samples || (int)sm > n->sm_max)
        n->sm_max = (int)sm;
    if (!n->samples || (int)mem < n->mem_min)
        n->mem_min = (int)mem;
    if (!n->samples || (int)mem > n->mem_max)
        n->mem_max = (int)mem;
    n->samples++;
}

/* ---- records → lines ---------------------------------------------------------------------- */

/* Names go on one line of tab-separated fields: tabs and line breaks become spaces. */
static void put_name(const char *s)
{
    for (const char *p = s ? s : ""; *p; p++)
        fputc(*p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p, S.out);
    fputc('\n', S.out);
}

static const char *copy_kind(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
    }
}

/* The kernel's name as written: demangled once per distinct name (called with out_lock held). */
static const char *kernel_name(const char *mangled)
{
    if (!mangled)
        return "";
    uint64_t h = (uint64_t)(uintptr_t)mangled * 0x9e3779b97f4a7c15ull; /* Fibonacci hashing: the high bits */
    for (size_t probe = 0; probe < 8; probe++) {
        struct demangled *d = &S.names[((h >> 40) + probe) % NAME_SLOTS];
        if (d->mangled == mangled && !strcmp(d->copy, mangled)) {
            S.name_hits++;
            return d->name ? d->name : mangled;
        }
        if (!d->mangled || d->mangled == mangled) { /* empty, or the same pointer holding another name now */
            int status = -1;
            S.demangle_calls++;
            char *dem = __cxa_demangle(mangled, NULL, NULL, &status), *copy = strdup(mangled);
            if (status != 0) {
                free(dem);
                dem = NULL;
            }
            if (!copy) {
                free(dem);
                return mangled; /* out of memory: written as it is, nothing cached */
            }
            free(d->copy);
            free(d->name);
            d->mangled = mangled;
            d->copy = copy;
            d->name = dem;
            return dem ? dem : mangled;
        }
    }
    /* The probe window is full: demangle into a scratch buffer kept for the next miss. */
    static char *scratch;
    static size_t scratch_len;
    int status = -1;
    S.demangle_calls++;
    char *dem = __cxa_demangle(mangled, scratch, &scratch_len, &status);
    if (status == 0)
        return scratch = dem;
    return mangled;
}

static void write_kernel(const CUpti_ActivityKernel10 *k)
{
    fprintf(S.out, "K\t%llu\t%llu\t%u\t%u\t%u\t%u\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%u\t",
            (unsigned long long)k->start, (unsigned long long)k->end, k->correlationId, k->deviceId, k->streamId,
            k->contextId, k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, k->registersPerThread,
            k->staticSharedMemory, k->dynamicSharedMemory, k->graphId);
    put_name(kernel_name(k->name));
}

static void write_api(const CUpti_ActivityAPI *a, int runtime)
{
    const char *name = NULL;
    if (cuptiGetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid, &name) !=
            CUPTI_SUCCESS ||
        !name)
        name = "unknown API";
    char buf[128];
    snprintf(buf, sizeof buf, "%s", name);
    char *v = strstr(buf, "_v"); /* cudaLaunchKernel_v7000 → cudaLaunchKernel, as Kineto names it */
    if (v && v[2] >= '0' && v[2] <= '9')
        *v = '\0';
    fprintf(S.out, "%c\t%llu\t%llu\t%u\t%u\t%u\t%u\t", runtime ? 'R' : 'A', (unsigned long long)a->start,
            (unsigned long long)a->end, a->correlationId, a->processId, a->threadId, a->cbid);
    put_name(buf);
}

static void write_marker(const CUpti_ActivityMarker2 *m)
{
    unsigned long long ts = (unsigned long long)m->timestamp;
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        fprintf(S.out, "NI\t%llu\t%u\t%u\t", ts, m->id, m->objectId.pt.threadId);
        put_name(m->name);
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        fprintf(S.out, "NS\t%llu\t%u\t%u\t", ts, m->id, m->objectId.pt.threadId);
        put_name(m->name);
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
        fprintf(S.out, "NE\t%llu\t%u\n", ts, m->id);
}

static void write_device(const CUpti_ActivityDevice5 *d)
{
    const unsigned char *u = (const unsigned char *)d->uuid.bytes;
    char uuid[48];
    snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    fprintf(S.out,
            "D\t%u\t%u\t%u\t%u\t%llu\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%llu\t%s\t",
            d->id, d->computeCapabilityMajor, d->computeCapabilityMinor, d->numMultiprocessors,
            (unsigned long long)d->globalMemorySize, d->numThreadsPerWarp, d->maxThreadsPerBlock,
            d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp, d->maxBlocksPerMultiprocessor,
            d->maxRegistersPerMultiprocessor, d->maxRegistersPerBlock, d->maxSharedMemoryPerMultiprocessor,
            d->maxSharedMemoryPerBlock, d->l2CacheSize, d->coreClockRate, d->globalMemoryBandwidth ? 1u : 0u,
            (unsigned long long)d->globalMemoryBandwidth, uuid);
    put_name(d->name);
    nvml_open(uuid);
}

static void write_record(const CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        write_kernel((const CUpti_ActivityKernel10 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
        fprintf(S.out, "M\t%llu\t%llu\t%u\t%u\t%u\t%u\t%llu\t%s\t%u\n", (unsigned long long)m->start,
                (unsigned long long)m->end, m->correlationId, m->deviceId, m->streamId, m->contextId,
                (unsigned long long)m->bytes, copy_kind(m->copyKind), m->graphId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
        fprintf(S.out, "S\t%llu\t%llu\t%u\t%u\t%u\t%u\t%llu\t%u\n", (unsigned long long)m->start,
                (unsigned long long)m->end, m->correlationId, m->deviceId, m->streamId, m->contextId,
                (unsigned long long)m->bytes, m->graphId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        write_api((const CUpti_ActivityAPI *)rec, rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)rec;
        fprintf(S.out, "Y\t%llu\t%llu\t%u\t%u\t%u\t%d\n", (unsigned long long)s->start, (unsigned long long)s->end,
                s->correlationId, s->contextId, s->streamId, (int)s->type);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
        write_marker((const CUpti_ActivityMarker2 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
        write_device((const CUpti_ActivityDevice5 *)rec);
        break;
    default:
        break;
    }
}

/* ---- CUPTI's buffers ------------------------------------------------------------------------ */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *max_records = 0;
    *buffer = NULL;
    *size = 0;
    if (atomic_fetch_add(&S.buffers_out, 1) >= S.buffers_max) { /* the bound: CUPTI drops and counts */
        atomic_fetch_sub(&S.buffers_out, 1);
        atomic_fetch_add(&S.refused, 1);
        return;
    }
    pthread_mutex_lock(&S.pool_lock);
    *buffer = S.n_pool ? S.pool[--S.n_pool] : NULL;
    pthread_mutex_unlock(&S.pool_lock);
    if (!*buffer)
        *buffer = calloc(1, BUFFER_BYTES); /* fresh pages from the kernel: zero, not written here */
    if (*buffer)
        *size = BUFFER_BYTES;
    else
        atomic_fetch_sub(&S.buffers_out, 1);
}

/* CUPTI calls this on its worker thread (or on the thread that flushes); out_lock orders the lines. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    pthread_mutex_lock(&S.out_lock);
    S.completed++;
    if (!atomic_load(&S.finishing) && syscall(SYS_gettid) == S.first_tid)
        S.completed_on_first++;
    if (S.out && !S.finished) {
        CUpti_Activity *rec = NULL;
        CUptiResult r;
        /* One ftello a buffer (a few MiB of records), not one a record. */
        int full = S.past_bound > 0 || (long long)ftello(S.out) >= S.raw_max_bytes;
        while ((r = cuptiActivityGetNextRecord(buffer, valid, &rec)) == CUPTI_SUCCESS) {
            if (full)
                S.past_bound++;
            else
                write_record(rec);
        }
        if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) {
            const char *s = NULL;
            cuptiGetResultString(r, &s);
            fprintf(S.out, "W\tcuptiActivityGetNextRecord\t%s\n", s ? s : "?");
        }
        size_t dropped = 0;
        if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
            fprintf(S.out, "X\t%zu\n", dropped);
        nvml_sample(0);
    }
    pthread_mutex_unlock(&S.out_lock);
    memset(buffer, 0, size); /* here, on CUPTI's worker thread: the next request takes it zeroed */
    pthread_mutex_lock(&S.pool_lock);
    if (S.n_pool < POOL_MAX)
        S.pool[S.n_pool++] = buffer, buffer = NULL;
    pthread_mutex_unlock(&S.pool_lock);
    free(buffer);
    atomic_fetch_sub(&S.buffers_out, 1);
}

/* ---- the end of the file: exit, fatal signal, CUPTI's fatal error --------------------------- */

static void finish(const char *how, int sig)
{
    atomic_store(&S.finishing, 1);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&S.out_lock);
    if (S.out && !S.finished) {
        struct nvml *n = &S.nvml_state;
        nvml_sample(1);
        if (n->samples)
            fprintf(S.out, "C\t%d\t%d\t%d\t%d\t%d\n", n->samples, n->sm_min, n->sm_max, n->mem_min, n->mem_max);
        /* Where the records were written: on CUPTI's worker thread, or (counted here) on the
         * program's own first CUDA thread, which then paid for it; and how many kernel records
         * needed a demangling (one per distinct kernel when the name cache holds them all). */
        fprintf(S.out, "V\tbuffers_completed\t%ld\nV\tbuffers_completed_on_program_thread\t%ld\n", S.completed,
                S.completed_on_first);
        fprintf(S.out, "V\tkernel_names_demangled\t%ld\nV\tkernel_names_cached\t%ld\n", S.demangle_calls,
                S.name_hits);
        long long refused = atomic_load(&S.refused);
        if (refused)
            fprintf(S.out, "B\t%lld\t%d\n", refused, (int)(BUFFER_BYTES >> 20));
        if (S.past_bound)
            fprintf(S.out, "T\t%lld\t%lld\n", S.past_bound, S.raw_max_bytes >> 20);
        if (sig)
            fprintf(S.out, "E\t%s\t%d\n", how, sig);
        else
            fprintf(S.out, "E\t%s\n", how);
        S.finished = 1;
        fflush(S.out);
    }
    pthread_mutex_unlock(&S.out_lock);
}

static void at_exit(void) { finish("complete", 0); }

static void on_fatal_signal(int sig)
{
    /* Not async-signal-safe, knowingly: the process is going down, and what CUPTI holds
     * is worth more than the small chance of a deadlock here. */
    finish("signal", sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    (void)data;
    if (domain == CUPTI_CB_DOMAIN_STATE && cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        pthread_mutex_lock(&S.out_lock);
        if (S.out)
            fprintf(S.out, "W\tCUPTI\tfatal error; records after it are lost\n");
        pthread_mutex_unlock(&S.out_lock);
    }
}

/* ---- the entry points ------------------------------------------------------------------------ */

static void enable_kind(CUpti_ActivityKind kind)
{
    CUptiResult r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) {
        const char *s = NULL;
        cuptiGetResultString(r, &s);
        fprintf(S.out, "W\tcuptiActivityEnable(kind %d)\t%s\n", (int)kind, s ? s : "?");
    }
}

/* The kinds asked for, and a "V kinds" line naming them ("-" for none). */
static void enable_kinds(void)
{
    CUpti_ActivityKind kinds[INJECT_KINDS_MAX];
    char named[128];
    int n = inject_kinds_chosen(getenv("ATTNPROF_INJECT_KINDS"), kinds, named, sizeof named);
    enable_kind(CUPTI_ACTIVITY_KIND_DEVICE);
    for (int i = 0; i < n; i++)
        enable_kind(kinds[i]);
    fprintf(S.out, "V\tkinds\t%s\n", named);
}

/* The API calls recorded: those that put work on the GPU or wait for it. Every other call
 * (PyTorch makes about ten cudaGetDevice and cuGetProcAddress calls per kernel) would cost a
 * record each: recording them all made a PyTorch decode step's raw file 3.5 times larger
 * (tests/inject/README.md has what it did to the step's time). */
static const char *const API_WORDS[] = {"Launch", "Memcpy", "Memset", "Synchronize", "EventRecord", "StreamWaitEvent"};

static int api_wanted(CUpti_CallbackDomain domain, uint32_t cbid)
{
    const char *name = NULL;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
        return 0;
    for (size_t i = 0; i < sizeof API_WORDS / sizeof *API_WORDS; i++)
        if (strstr(name, API_WORDS[i]))
            return 1;
    return 0;
}

/* Which API calls are recorded: ATTNPROF_INJECT_APIS=all (or ATTNPROF_INJECT_ALL_APIS=1)
 * records every runtime and driver call, as Kineto does; =none records none (kernels, copies
 * and NVTX only: no launch latency, no host-side view, the least cost per launch, which is
 * how the overhead's part that is CUPTI's own kernel tracing is measured apart); otherwise
 * the calls of API_WORDS. */
static void enable_apis(void)
{
    const char *apis = getenv("ATTNPROF_INJECT_APIS"), *all = getenv("ATTNPROF_INJECT_ALL_APIS");
    if ((all && !strcmp(all, "1")) || (apis && !strcmp(apis, "all"))) {
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
        fputs("V\tapis\tall\n", S.out);
        return;
    }
    if (apis && !strcmp(apis, "none")) {
        fputs("V\tapis\t0\n", S.out);
        return;
    }
    int n = 0;
    for (uint32_t cb = 1; cb < CUPTI_RUNTIME_TRACE_CBID_SIZE; cb++)
        if (api_wanted(CUPTI_CB_DOMAIN_RUNTIME_API, cb) && cuptiActivityEnableRuntimeApi(cb, 1) == CUPTI_SUCCESS)
            n++;
    for (uint32_t cb = 1; cb < CUPTI_DRIVER_TRACE_CBID_SIZE; cb++)
        if (api_wanted(CUPTI_CB_DOMAIN_DRIVER_API, cb) && cuptiActivityEnableDriverApi(cb, 1) == CUPTI_SUCCESS)
            n++;
    fprintf(S.out, "V\tapis\t%d\n", n);
}

static int open_output(void)
{
    const char *dir = getenv("ATTNPROF_INJECT_DIR");
    if (!dir || !*dir)
        return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/raw-%d.txt", dir, (int)getpid());
    S.out = fopen(path, "w");
    if (!S.out)
        return 0;
    setvbuf(S.out, NULL, _IOFBF, 1 << 20);
    const char *mb = getenv("ATTNPROF_INJECT_BUFFER_MB");
    long limit = mb && atol(mb) > 0 ? atol(mb) : DEFAULT_BUFFER_MB;
    S.buffers_max = limit / (long)(BUFFER_BYTES >> 20) > 0 ? limit / (long)(BUFFER_BYTES >> 20) : 1;
    const char *raw_mb = getenv("ATTNPROF_INJECT_RAW_MB");
    S.raw_max_bytes = (raw_mb && atoll(raw_mb) > 0 ? atoll(raw_mb) : DEFAULT_RAW_MB) << 20;
    uint32_t ver = 0;
    cuptiGetVersion(&ver);
    int drv = 0;
    cuDriverGetVersion(&drv);
    uint64_t ts = 0;
    cuptiGetTimestamp(&ts);
    fprintf(S.out, "attnprof-inject\t1\nP\t%d\t%llu\nV\tcupti\t%u\nV\tcuda_driver\t%d\nV\tbuffer_mb\t%ld\n",
            (int)getpid(), (unsigned long long)ts, ver, drv, S.buffers_max * (long)(BUFFER_BYTES >> 20));
    fflush(S.out);
    return 1;
}

/* CUPTI's attributes that might change what tracing costs a launch were measured on the H200
 * (2026-12-03; bench/results/2026-12-03-record-overhead.md, section 4): kernel timestamps in
 * pinned host memory instead of device memory (slower), one activity buffer for all threads
 * instead of one per thread, no periodic flush, and buffers touched before the first launch (no
 * change within the noise), so CUPTI's defaults stay; CUPTI completed no buffer on the
 * program's thread. */
static int start_tracing(void)
{
    uint8_t zeroed = 1;
    size_t len = sizeof zeroed;
    if (cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &zeroed) != CUPTI_SUCCESS)
        fputs("W\tcuptiActivitySetAttribute\tzeroed buffers not accepted: CUPTI clears each new buffer itself\n", S.out);
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
        return 0;
    enable_kinds();
    enable_apis();
    cuptiActivityFlushPeriod(FLUSH_PERIOD_MS);
    CUpti_SubscriberHandle sub;
    if (cuptiSubscribe(&sub, on_callback, NULL) == CUPTI_SUCCESS)
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
    return 1;
}

static void init_once(void)
{
    S.first_tid = (pid_t)syscall(SYS_gettid);
    if (!open_output())
        return;
    if (!start_tracing()) {
        fputs("W\tcuptiActivityRegisterCallbacks\tfailed; nothing recorded\n", S.out);
        return;
    }
    atexit(at_exit);
    static const int fatal[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) {
        struct sigaction old;
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            signal(fatal[i], on_fatal_signal); /* a program's own handler is left alone */
    }
}

/* Called by the CUDA driver at the process's first CUDA call; 1 when recording. */
int InitializeInjection(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_once);
    return S.out != NULL;
}

/* NVTX's injection entry: NVTX_INJECTION64_PATH names this library, and CUPTI's own
 * handler (in the libcupti this library links) turns the ranges into marker records. */
int InitializeInjectionNvtx2(const void *get_export_table)
{
    Dl_info info;
    if (!dladdr((void *)cuptiActivityEnable, &info) || !info.dli_fname)
        return 0;
    void *cupti = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    int (*entry)(const void *) = cupti ? (int (*)(const void *))dlsym(cupti, "InitializeInjectionNvtx2") : NULL;
    return entry ? entry(get_export_table) : 0;
}
