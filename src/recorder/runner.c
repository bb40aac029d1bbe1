/* The recorder's batch behind runner.h: runner_plan resolves the command line against the
 * registry and the device (exit codes for what the user can change), runner_collect draws the
 * inputs and their FP64 reference, then for each variant runs setup, warm-up, the correctness
 * check, the recorded forwards under CUPTI, the overhead probe and the fully-masked-rows check,
 * and fills the trace and run_info. Errors the user sees are EXIT_* codes with one line in err;
 * the variants' own ATTN_* codes stay inside. */
#include "runner.h"

#include "calibrate.h"
#include "counter_pass.h"
#include "cupti_collect.h"
#include "exit_codes.h"
#include "median.h"
#include "reference.h"
#include "run_json.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <errno.h>
#include <sys/utsname.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h" /* after the CUDA libraries' headers: their parts */
#include "nvml_sampler.h"
#include "stop_rule.h"

/* The CUPTI overhead probe (cupti_overhead_probe) takes samples of a few forwards each,
 * alternately with activity collection off and on. A sample is PROBE_SAMPLE_US of GPU time
 * at least (event resolution and launch gaps stay small against it), up to PROBE_MAX_BATCH
 * forwards; the probe takes PROBE_MAX_SAMPLES per state, fewer (never under
 * PROBE_MIN_SAMPLES) where that would cost more than PROBE_BUDGET_US of GPU time. Without
 * the budget the probe's 320 forwards were 95% of a run's time at 2x16x16384x128 (math:
 * 68 s of 194 ms forwards on the H200, bench/results/2026-12-02-default-sweep.md). */
#define PROBE_MAX_SAMPLES 20
#define PROBE_MIN_SAMPLES 5
#define PROBE_MAX_BATCH 8
#define PROBE_SAMPLE_US 2000.0
#define PROBE_BUDGET_US 1.0e6

typedef struct sampled_head {
    int b, h;
    double *ref; /* [n_rows, D] FP64 reference of the checked rows */
} sampled_head;

/* The query rows checked in every sampled head (reference.h), the same for each variant. */
typedef struct checked_rows {
    int *row;
    int n;
} checked_rows;

/* Writes one line into err; returns code (an EXIT_* code). */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t n, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return code;
}

int runner_device_props(int dev, device_props *p, char *err, size_t errlen)
{
    struct cudaDeviceProp cp;
    cudaError_t rc = cudaGetDeviceProperties(&cp, dev);
    if (rc != cudaSuccess)
        return fail(err, errlen, EXIT_IO, "cudaGetDeviceProperties: %s", cudaGetErrorString(rc));
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", cp.name);
    p->major = cp.major;
    p->minor = cp.minor;
    p->sm_count = cp.multiProcessorCount;
    p->total_mem = (int64_t)cp.totalGlobalMem;
    p->warp_size = cp.warpSize;
    p->max_threads_per_block = cp.maxThreadsPerBlock;
    p->max_threads_per_sm = cp.maxThreadsPerMultiProcessor;
    p->max_blocks_per_sm = cp.maxBlocksPerMultiProcessor;
    p->regs_per_sm = cp.regsPerMultiprocessor;
    p->regs_per_block = cp.regsPerBlock;
    p->smem_per_sm = (int)cp.sharedMemPerMultiprocessor;
    p->smem_per_block = (int)cp.sharedMemPerBlock;
    p->smem_per_block_optin = (int)cp.sharedMemPerBlockOptin;
    p->smem_reserved_per_block = (int)cp.reservedSharedMemPerBlock;
    p->l2_bytes = cp.l2CacheSize;
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev) == cudaSuccess)
        p->clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev) == cudaSuccess)
        p->mem_clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess)
        p->mem_bus_width = v;
    return EXIT_OK;
}

/* Which GPU this process ran on: CUDA's UUID in nvidia-smi's form, the PCI bus id,
 * and CUDA_VISIBLE_DEVICES as given (a sweep worker sets it to its GPU's index). */
static void gpu_identity(int dev, run_info *info)
{
    struct cudaDeviceProp cp;
    if (cudaGetDeviceProperties(&cp, dev) == cudaSuccess) {
        const unsigned char *u = (const unsigned char *)cp.uuid.bytes;
        snprintf(info->gpu_uuid, sizeof info->gpu_uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    }
    if (cudaDeviceGetPCIBusId(info->gpu_pci_bus_id, (int)sizeof info->gpu_pci_bus_id, dev) != cudaSuccess)
        info->gpu_pci_bus_id[0] = '\0';
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(info->visible_devices, sizeof info->visible_devices, "%s", vis ? vis : "");
}

/* The driver's version string ("580.159.04") is NVML's; loaded at run time so the
 * binary does not depend on the driver's library at link time. */
static void driver_version(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
    int (*get)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion");
    int (*shutdown)(void) = (int (*)(void))dlsym(h, "nvmlShutdown");
    if (init && get && init() == 0) {
        char buf[96];
        if (get(buf, sizeof buf) == 0)
            snprintf(out, n, "%s", buf);
        if (shutdown)
            shutdown();
    }
    dlclose(h);
}

/* Clocks and power measured during the run, through NVML loaded at run time as
 * above: one sample after each variant's recorded forwards (the GPU has just run
 * them), min and max kept. The device is found by its PCI bus id. */
static void sample_clocks(int dev, run_env *env)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    typedef void *nvml_device;
    int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
    int (*shutdown)(void) = (int (*)(void))dlsym(h, "nvmlShutdown");
    int (*by_pci)(const char *, nvml_device *) =
        (int (*)(const char *, nvml_device *))dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
    int (*clock)(nvml_device, int, unsigned *) = (int (*)(nvml_device, int, unsigned *))dlsym(h, "nvmlDeviceGetClockInfo");
    int (*power)(nvml_device, unsigned *) = (int (*)(nvml_device, unsigned *))dlsym(h, "nvmlDeviceGetEnforcedPowerLimit");
    char bus[32];
    nvml_device nd = NULL;
    if (init && by_pci && clock && cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess && init() == 0) {
        unsigned sm = 0, mem = 0, mw = 0;
        enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
        if (by_pci(bus, &nd) == 0 && clock(nd, NVML_CLOCK_SM, &sm) == 0 && clock(nd, NVML_CLOCK_MEM, &mem) == 0) {
            if (env->clock_samples == 0 || (int)sm < env->sm_clock_mhz_min)
                env->sm_clock_mhz_min = (int)sm;
            if ((int)sm > env->sm_clock_mhz_max)
                env->sm_clock_mhz_max = (int)sm;
            if (env->clock_samples == 0 || (int)mem < env->mem_clock_mhz_min)
                env->mem_clock_mhz_min = (int)mem;
            if ((int)mem > env->mem_clock_mhz_max)
                env->mem_clock_mhz_max = (int)mem;
            env->clock_samples++;
            if (power && power(nd, &mw) == 0)
                env->power_limit_w = (int)(mw / 1000);
        }
        if (shutdown)
            shutdown();
    }
    dlclose(h);
}

#ifndef ATTNPROF_NVCC_VERSION
#define ATTNPROF_NVCC_VERSION ""
#endif
#ifndef ATTNPROF_BUILD_FLAGS
#define ATTNPROF_BUILD_FLAGS ""
#endif

/* Host CPU, OS, and how the recorder was built (Makefile: nvcc release, flags). */
static void host_and_build(run_env *env)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10))
            continue;
        const char *v = strchr(line, ':');
        if (v) {
            snprintf(env->host_cpu, sizeof env->host_cpu, "%s", v + 1 + (v[1] == ' '));
            env->host_cpu[strcspn(env->host_cpu, "\n")] = '\0';
        }
        break;
    }
    if (f)
        fclose(f);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    env->host_cpus = n > 0 ? (int)n : 0;
    char pretty[128] = "";
    f = fopen("/etc/os-release", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "PRETTY_NAME=", 12)) {
            const char *v = line + 12 + (line[12] == '"');
            snprintf(pretty, sizeof pretty, "%s", v);
            pretty[strcspn(pretty, "\"\n")] = '\0';
        }
    if (f)
        fclose(f);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(env->os, sizeof env->os, "%s%s%s %s", pretty, pretty[0] ? ", " : "", u.sysname, u.release);
    else
        snprintf(env->os, sizeof env->os, "%s", pretty);
    snprintf(env->nvcc, sizeof env->nvcc, "%s", ATTNPROF_NVCC_VERSION);
    snprintf(env->build_flags, sizeof env->build_flags, "%s", ATTNPROF_BUILD_FLAGS);
}

static void iso_date(char *out, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double host_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A sweep that runs this batch as its child reads the phase from the pipe it passes
 * in ATTNPROF_PROGRESS_FD ("flash forward\n"), for its own progress line. */
static void progress(const run_plan *cfg, int vi, const char *name, const char *what, int j, int n)
{
    static int fd = -2;
    if (fd == -2)
        fd = getenv("ATTNPROF_PROGRESS_FD") ? atoi(getenv("ATTNPROF_PROGRESS_FD")) : -1;
    if (fd >= 0 && j == 1) {
        char line[96];
        int len = snprintf(line, sizeof line, "%s %s\n", name, what);
        if (write(fd, line, (size_t)len) < 0 && errno != EAGAIN)
            fd = -1;
    }
    if (cfg->c.quiet || !isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "\r\033[K[%d/%d] %-14s %s %d/%d", vi + 1, cfg->n_variants, name, what, j, n);
    fflush(stderr);
}

/* A step that matters, as one plain line when stderr is no terminal (a Slurm job's or a CI
 * log, a sweep's per-shape log): no carriage return, no escape sequence. On a terminal the
 * live line above says the same. */
__attribute__((format(printf, 2, 3))) static void step_line(const run_plan *cfg, const char *fmt, ...)
{
    if (cfg->c.quiet || isatty(STDERR_FILENO))
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("attnprof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

static size_t tensor_elems(const attn_shape *s) { return (size_t)s->batch * s->heads * s->seq * s->dim; }

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Heads checked against FP64: the first, the last and others spread between them; in each,
 * the rows reference_check_rows picks (every row up to S = REFERENCE_ALL_ROWS_SEQ by
 * default). The reference is the same for every variant, so it is computed once, on every
 * core. */
static int sample_heads(const run_plan *cfg, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                        sampled_head *heads, checked_rows *rows)
{
    const attn_shape *s = &cfg->c.shape;
    int bh = s->batch * s->heads, n = cfg->c.heads_to_check < bh ? cfg->c.heads_to_check : bh;
    int max_rows = cfg->c.rows_to_check >= 0 ? cfg->c.rows_to_check
                   : s->seq <= REFERENCE_ALL_ROWS_SEQ ? 0
                                                      : REFERENCE_DEFAULT_ROWS;
    rows->row = malloc(sizeof(int) * (size_t)s->seq);
    if (!rows->row)
        abort();
    rows->n = reference_check_rows(s->seq, max_rows, cfg->c.seed, rows->row);
    size_t head = (size_t)s->seq * s->dim;
    reference_job jobs[8];
    for (int i = 0; i < n; i++) {
        int idx = n == 1 ? 0 : (int)((long long)i * (bh - 1) / (n - 1));
        heads[i].b = idx / s->heads;
        heads[i].h = idx % s->heads;
        heads[i].ref = malloc(sizeof(double) * (size_t)rows->n * s->dim);
        if (!heads[i].ref)
            abort();
        jobs[i] = (reference_job){q + idx * head, k + idx * head, v + idx * head, s->seq, s->dim, NULL,
                                  rows->row, rows->n, heads[i].ref};
    }
    reference_run(jobs, n, online_cpus());
    return n;
}

typedef struct device_inputs {
    void *q, *k, *v, *out;
    uint16_t *host_out; /* one head */
    uint8_t *mask;      /* fully-masked-rows check: built on the first use, the same for every variant */
    int mask_ready;
    cudaStream_t stream;
    cudaEvent_t ev0, ev1;    /* the overhead probe's samples */
    cudaEvent_t fwd0, fwd1;  /* each recorded forward, just outside its NVTX range */
    void *flush;             /* --l2 cold: the buffer written before each recorded forward */
    size_t flush_bytes;
} device_inputs;

/* A throttled forward: its SM clock below this fraction of the highest SM clock the run
 * recorded (nvbench's 75%). Recorded in run.json; the report applies it. */
#define THROTTLE_FRACTION 0.75

/* Each recorded forward's sample (trace.h's forward_sample), by variant: s[i] is the
 * forward of iteration i (every pass continues the numbering); attached to the trace's
 * attn_fwd ranges once the run's records are in. */
typedef struct forward_log {
    struct forward_sample *s;
    int n, cap;
} forward_log;

static void forward_log_add(forward_log *l, const struct forward_sample *fs)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        if (!(l->s = realloc(l->s, sizeof *l->s * (size_t)l->cap)))
            abort();
    }
    l->s[l->n++] = *fs;
}

/* What the per-forward measurement costs and did, over the whole run. */
typedef struct measure_state {
    forward_log logs[RUN_MAX_VARIANTS];
    double *nvml_us; /* host time of each NVML sample */
    int n_nvml, cap_nvml;
} measure_state;

static double check_correctness(const run_plan *cfg, const attn_variant *var, void *state, device_inputs *d,
                                const sampled_head *heads, int n_heads, const checked_rows *rows, attn_error *e,
                                int *rc)
{
    const attn_shape *s = &cfg->c.shape;
    size_t head = (size_t)s->seq * s->dim;
    /* 0xFF bytes are bf16 NaN: an element the variant fails to write cannot pass. */
    if (cudaMemsetAsync(d->out, 0xff, tensor_elems(s) * 2, d->stream) != cudaSuccess) {
        *rc = attn_fail(e, ATTN_FAILED, "cudaMemsetAsync(out): %s", cudaGetErrorString(cudaGetLastError()));
        return NAN;
    }
    if ((*rc = var->forward(state, d->q, d->k, d->v, d->out, d->stream, e)) != ATTN_OK)
        return NAN;
    cudaError_t ce = cudaStreamSynchronize(d->stream);
    if (ce != cudaSuccess) {
        *rc = attn_fail(e, ATTN_FAILED, "forward: %s", cudaGetErrorString(ce));
        return NAN;
    }
    double worst = 0;
    for (int i = 0; i < n_heads; i++) {
        size_t idx = (size_t)heads[i].b * s->heads + heads[i].h;
        ce = cudaMemcpy(d->host_out, (uint16_t *)d->out + idx * head, head * 2, cudaMemcpyDeviceToHost);
        if (ce != cudaSuccess) {
            *rc = attn_fail(e, ATTN_FAILED, "cudaMemcpy(out head): %s", cudaGetErrorString(ce));
            return NAN;
        }
        double err = relative_error_rows_bf16(d->host_out, s->dim, rows->row, rows->n, heads[i].ref);
        if (isnan(err) || err > worst)
            worst = err;
        if (isnan(err))
            break;
    }
    return worst;
}

/* One sample: `batch` forwards queued back to back between two CUDA events, so that
 * where the host issues faster than the GPU runs, the host's own cost (which CUPTI's
 * API records raise) stays out of the GPU figure. Returns µs per forward and appends
 * each forward call's host wall time to h. */
static double event_sample_us(const attn_variant *var, void *state, device_inputs *d, int batch, double *h,
                              int *nh, attn_error *e, int *rc)
{
    float ms = 0;
    cudaError_t ce = cudaEventRecord(d->ev0, d->stream);
    for (int j = 0; ce == cudaSuccess && j < batch; j++) {
        double t0 = host_us();
        if ((*rc = var->forward(state, d->q, d->k, d->v, d->out, d->stream, e)) != ATTN_OK)
            return NAN;
        if (h)
            h[(*nh)++] = host_us() - t0;
    }
    if (ce == cudaSuccess)
        ce = cudaEventRecord(d->ev1, d->stream);
    if (ce == cudaSuccess)
        ce = cudaEventSynchronize(d->ev1);
    if (ce == cudaSuccess)
        ce = cudaEventElapsedTime(&ms, d->ev0, d->ev1);
    if (ce != cudaSuccess) {
        *rc = attn_fail(e, ATTN_FAILED, "CUDA events: %s", cudaGetErrorString(ce));
        return NAN;
    }
    return ms * 1000.0 / batch;
}

/* CUPTI's cost: samples with collection off and on, interleaved so that clock or
 * power drift of the GPU during the probe falls on both alike. Medians per forward
 * of GPU time (events) and of the host time of the call. The samples' size and count
 * follow from one forward's time (PROBE_* above) and are recorded as a fact. */
static int cupti_overhead_probe(const attn_variant *var, void *state, device_inputs *d, variant_result *res,
                                attn_error *e)
{
    double t_off[PROBE_MAX_SAMPLES], t_on[PROBE_MAX_SAMPLES];
    double h_off[PROBE_MAX_SAMPLES * PROBE_MAX_BATCH], h_on[PROBE_MAX_SAMPLES * PROBE_MAX_BATCH];
    int n_off = 0, n_on = 0, rc = ATTN_OK;
    char cerr[256];
    double one_us = event_sample_us(var, state, d, 1, NULL, NULL, e, &rc); /* sizes the samples */
    if (rc != ATTN_OK)
        return rc;
    if (!(one_us > 0))
        one_us = 1;
    int batch = (int)ceil(PROBE_SAMPLE_US / one_us);
    batch = batch < 1 ? 1 : batch > PROBE_MAX_BATCH ? PROBE_MAX_BATCH : batch;
    double fit = PROBE_BUDGET_US / (2.0 * batch * one_us);
    int samples = fit >= PROBE_MAX_SAMPLES ? PROBE_MAX_SAMPLES : fit < PROBE_MIN_SAMPLES ? PROBE_MIN_SAMPLES : (int)fit;
    for (int i = 0; i < samples && rc == ATTN_OK; i++) {
        if (cupti_enable(0, cerr, sizeof cerr) != 0)
            return attn_fail(e, ATTN_FAILED, "%s", cerr);
        t_off[i] = event_sample_us(var, state, d, batch, h_off, &n_off, e, &rc);
        if (cupti_enable(1, cerr, sizeof cerr) != 0)
            return attn_fail(e, ATTN_FAILED, "%s", cerr);
        if (rc == ATTN_OK)
            t_on[i] = event_sample_us(var, state, d, batch, h_on, &n_on, e, &rc);
    }
    if (rc != ATTN_OK)
        return rc;
    res->event_us_no_cupti = median_of(t_off, samples);
    res->event_us_cupti = median_of(t_on, samples);
    res->host_us_no_cupti = median_of(h_off, n_off);
    res->host_us_cupti = median_of(h_on, n_on);
    attn_fact_add(&res->facts, "overhead_probe_samples", samples,
                  "CUPTI overhead probe: %d samples of %d forward%s per state (off, on), interleaved", samples, batch,
                  batch == 1 ? "" : "s");
    return ATTN_OK;
}

/* Rows 3, 10, 17, ... have every key masked: a softmax over no keys. What does the
 * variant write there, NaN (plain softmax) or 0 (safe softmax)? Measured, not assumed. */
static void fully_masked_rows_check(const run_plan *cfg, const attn_variant *var, void *state, device_inputs *d,
                                    attn_facts *facts)
{
    if (!var->forward_masked)
        return;
    const attn_shape *s = &cfg->c.shape;
    const int S = s->seq, D = s->dim;
    int masked_rows = (S + 3) / 7; /* rows 3, 10, 17, ... below S */
    int ok = 1;
    if (!d->mask_ready) {
        /* S² bytes (256 MiB at S = 16384): built and copied once per run, not per variant. */
        uint8_t *m = malloc((size_t)S * S);
        if (!m)
            abort();
        for (int i = 0; i < S; i++)
            for (int j = 0; j < S; j++)
                m[(size_t)i * S + j] = i % 7 == 3 ? 1 : j > i;
        ok = cudaMemcpy(d->mask, m, (size_t)S * S, cudaMemcpyHostToDevice) == cudaSuccess;
        free(m);
        d->mask_ready = ok;
    }
    attn_error e = {{0}};
    ok = ok && var->forward_masked(state, d->q, d->k, d->v, d->out, d->mask, d->stream, &e) == ATTN_OK &&
         cudaStreamSynchronize(d->stream) == cudaSuccess &&
         cudaMemcpy(d->host_out, d->out, (size_t)S * D * 2, cudaMemcpyDeviceToHost) == cudaSuccess;
    if (!ok) {
        attn_fact_add(facts, "fully_masked_rows", NAN, "check failed: %s",
                      e.msg[0] ? e.msg : cudaGetErrorString(cudaGetLastError()));
        return;
    }
    long nan = 0, zero = 0, other = 0;
    for (int i = 3; i < S; i += 7)
        for (int dd = 0; dd < D; dd++) {
            float x = bf16_to_float(d->host_out[(size_t)i * D + dd]);
            if (isnan(x))
                nan++;
            else if (x == 0.0f)
                zero++;
            else
                other++;
        }
    const char *verdict = nan && !zero && !other ? "NaN" : zero && !nan && !other ? "0" : "mixed";
    attn_fact_add(facts, "fully_masked_rows", (double)nan,
                  "%s: %d fully-masked rows of head (0,0) hold %ld NaN, %ld zeros, %ld other values", verdict,
                  masked_rows, nan, zero, other);
}

/* The shared object this code was loaded from. The recorder is dlopen'ed with
 * RTLD_LOCAL, so its symbols are found through its own handle, not RTLD_DEFAULT. */
static void *recorder_handle(void)
{
    static void *self;
    Dl_info where;
    if (!self && dladdr((void *)&runner_collect, &where) && where.dli_fname)
        self = dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    return self ? self : RTLD_DEFAULT;
}

/* Our kernels are extern "C" with default visibility: the host stub CUPTI's kernel
 * name resolves to is the handle the occupancy API takes. */
static void probe_occupancy(const trace *t, size_t first_op, run_info *info)
{
    for (size_t i = first_op; i < t->n_ops; i++) {
        const gpu_op *o = &t->ops[i];
        if (o->kind != GPU_KERNEL || info->n_probes == RUN_MAX_PROBES)
            continue;
        int seen = 0;
        for (int p = 0; p < info->n_probes && !seen; p++)
            seen = !strcmp(info->probes[p].kernel, o->name) &&
                   info->probes[p].threads == o->block[0] * o->block[1] * o->block[2] &&
                   info->probes[p].dynamic_smem == o->dynamic_smem;
        void *stub = seen ? NULL : dlsym(recorder_handle(), o->name);
        if (!stub)
            continue;
        int threads = o->block[0] * o->block[1] * o->block[2], blocks = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, stub, threads, (size_t)o->dynamic_smem) !=
            cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        occupancy_probe *p = &info->probes[info->n_probes++];
        snprintf(p->kernel, sizeof p->kernel, "%s", o->name);
        p->threads = threads;
        p->registers = o->registers;
        p->static_smem = o->static_smem;
        p->dynamic_smem = o->dynamic_smem;
        p->blocks_per_sm = blocks;
    }
}

/* The recorded forwards of one pass of a variant: --iters N of them, or (--iters auto) until
 * the stop rule says (stop_rule.h). Each is timed by CUDA events just outside its NVTX range,
 * preceded by the L2 flush under --l2 cold (outside the range too, so no variant counts it),
 * and followed by an NVML sample once it completed. Returns rc (ATTN_*). */
static int recorded_forwards(const run_plan *cfg, int vi, int pass, device_inputs *d, void *state,
                             variant_result *res, measure_state *ms, attn_error *e, int rc)
{
    const attn_variant *var = cfg->variants[vi];
    const stop_rule rule = STOP_RULE_DEFAULT;
    forward_log *log = &ms->logs[vi];
    double t_pass = host_us(), noise = NAN;
    const char *why = NULL;
    double *x = NULL;
    int cap = cfg->c.iters ? cfg->c.iters : rule.max_forwards;
    if (!(x = malloc(sizeof *x * (size_t)cap)))
        abort();
    int n = 0;
    for (; rc == ATTN_OK && n < cap && !why; n++) {
        progress(cfg, vi, var->name, "forward", n + 1, cap); /* auto: out of at most max_forwards */
        cudaError_t ce = cudaSuccess;
        if (d->flush)
            ce = cudaMemsetAsync(d->flush, (pass * 131 + n) & 0xff, d->flush_bytes, d->stream);
        if (ce == cudaSuccess)
            ce = cudaEventRecord(d->fwd0, d->stream);
        int iteration = log->n;
        cupti_range_push("attn_fwd", iteration);
        rc = var->forward(state, d->q, d->k, d->v, d->out, d->stream, e);
        cupti_range_pop();
        if (ce == cudaSuccess)
            ce = cudaEventRecord(d->fwd1, d->stream);
        cudaError_t se = cudaStreamSynchronize(d->stream);
        float ms_f = 0;
        if (ce == cudaSuccess)
            ce = se != cudaSuccess ? se : cudaEventElapsedTime(&ms_f, d->fwd0, d->fwd1);
        if (rc == ATTN_OK && ce != cudaSuccess)
            rc = attn_fail(e, ATTN_FAILED, "forward %d: %s", iteration, cudaGetErrorString(ce));
        if (rc != ATTN_OK)
            break;
        double t0 = host_us();
        nvml_reading nr = nvml_read();
        if (ms->n_nvml == ms->cap_nvml) {
            ms->cap_nvml = ms->cap_nvml ? 2 * ms->cap_nvml : 256;
            if (!(ms->nvml_us = realloc(ms->nvml_us, sizeof *ms->nvml_us * (size_t)ms->cap_nvml)))
                abort();
        }
        ms->nvml_us[ms->n_nvml++] = host_us() - t0;
        /* 0: not sampled (no NVML, or it refused one reading); the reader takes 0 as that. */
        struct forward_sample fs = {.recorded = 1, .pass = pass, .event_us = ms_f * 1000.0,
                                    .sm_mhz = nr.ok ? nr.sm_mhz : 0, .mem_mhz = nr.ok ? nr.mem_mhz : 0,
                                    .power_w = nr.ok && nr.power_w >= 0 ? nr.power_w : 0,
                                    .temp_c = nr.ok && nr.temp_c >= 0 ? nr.temp_c : 0};
        forward_log_add(log, &fs);
        x[n] = fs.event_us;
        if (!cfg->c.iters)
            why = stop_rule_check(&rule, x, n + 1, (host_us() - t_pass) / 1e6, &noise);
    }
    /* The outcome over every pass so far: forwards, GPU time, the median's noise. */
    double gpu_s = 0;
    double *all = malloc(sizeof *all * (size_t)(log->n ? log->n : 1));
    if (!all)
        abort();
    for (int i = 0; i < log->n; i++)
        gpu_s += (all[i] = log->s[i].event_us) / 1e6;
    res->stop.forwards = log->n;
    res->stop.gpu_s = gpu_s;
    res->stop.noise = stop_rule_noise(all, log->n);
    snprintf(res->stop.reason, sizeof res->stop.reason, "%s",
             rc != ATTN_OK ? "failed" : cfg->c.iters ? "fixed" : why ? why : "max_forwards");
    free(all);
    free(x);
    return rc;
}

static int run_variant(const run_plan *cfg, int vi, int pass, device_inputs *d, const sampled_head *heads,
                       int n_heads, const checked_rows *rows, variant_result *res, trace *t, run_info *info,
                       measure_state *ms)
{
    const attn_variant *var = cfg->variants[vi];
    attn_error e = {{0}};
    void *state = NULL;
    int rc;
    int64_t dropped = 0;
    char cerr[256];

    cupti_range_push(var->name, -1);
    double t0 = host_us();
    rc = var->setup(&state, &cfg->c.shape, &cfg->c.options, d->stream, &e);
    double setup_us = host_us() - t0;
    if (pass == 0)
        attn_fact_add(&res->facts, "setup_us", setup_us, "%.0f µs host time in setup", setup_us);
    for (int i = 0; rc == ATTN_OK && i < cfg->c.warmup; i++) {
        progress(cfg, vi, var->name, "warm-up", i + 1, cfg->c.warmup);
        rc = var->forward(state, d->q, d->k, d->v, d->out, d->stream, &e);
    }
    if (rc == ATTN_OK && cudaStreamSynchronize(d->stream) != cudaSuccess)
        rc = attn_fail(&e, ATTN_FAILED, "warm-up: %s", cudaGetErrorString(cudaGetLastError()));
    if (rc == ATTN_OK && pass == 0) { /* later passes run the very same code on the same inputs */
        res->rel_error = check_correctness(cfg, var, state, d, heads, n_heads, rows, &e, &rc);
        res->heads_checked = n_heads;
        res->rows_checked = rows->n;
    }
    rc = recorded_forwards(cfg, vi, pass, d, state, res, ms, &e, rc);
    cupti_range_pop();
    int cur = 0;
    if (cudaGetDevice(&cur) == cudaSuccess)
        sample_clocks(cur, &info->env);
    size_t first_op = t->n_ops;
    if (cupti_flush(1, var->name, &dropped, cerr, sizeof cerr) != 0 && rc == ATTN_OK)
        rc = attn_fail(&e, ATTN_FAILED, "%s", cerr);
    if (pass == 0)
        probe_occupancy(t, first_op, info);

    if (rc == ATTN_OK && pass == 0) {
        progress(cfg, vi, var->name, "overhead probe", 1, 1);
        rc = cupti_overhead_probe(var, state, d, res, &e);
        if (rc == ATTN_OK)
            fully_masked_rows_check(cfg, var, state, d, &res->facts);
        cupti_flush(0, var->name, NULL, cerr, sizeof cerr);
    }
    if (state && var->facts && pass == 0)
        var->facts(state, &res->facts);
    if (var->teardown)
        var->teardown(state);
    cudaGetLastError(); /* a failed variant's sticky launch error must not fail the next one */
    res->dropped_records += dropped;
    if (pass > 0) { /* it passed the check in pass 0: a later pass can only fail to run */
        if (rc != ATTN_OK) {
            res->status = VARIANT_FAILED;
            snprintf(res->error, sizeof res->error, "pass %d of %d: %s", pass + 1, cfg->c.replicates, e.msg);
            fprintf(stderr, "attnprof: variant %s failed: %s\n", var->name, res->error);
        }
        return res->status;
    }

    if (rc == ATTN_UNAVAILABLE) {
        res->status = VARIANT_UNAVAILABLE;
    } else if (rc != ATTN_OK) {
        res->status = VARIANT_FAILED;
    } else if (!(res->rel_error <= cfg->c.rel_error_threshold)) {
        res->status = VARIANT_FAILED;
        snprintf(e.msg, sizeof e.msg, "relative error %.3g vs FP64 exceeds %.3g", res->rel_error,
                 cfg->c.rel_error_threshold);
    } else {
        res->status = VARIANT_OK;
    }
    snprintf(res->error, sizeof res->error, "%s", res->status == VARIANT_OK ? "" : e.msg);
    if (!cfg->c.quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    if (!cfg->c.quiet && res->status != VARIANT_OK)
        fprintf(stderr, "attnprof: variant %s %s: %s\n", var->name, variant_status_name(res->status), res->error);
    return res->status;
}

typedef struct counted_forward {
    const attn_variant *var;
    void *state;
    device_inputs *d;
    attn_error e;
} counted_forward;

static int counted_forward_once(void *p)
{
    counted_forward *f = p;
    return f->var->forward(f->state, f->d->q, f->d->k, f->d->v, f->d->out, f->d->stream, &f->e) != ATTN_OK;
}

/* The counter pass (counter_pass.h): every variant that ran ok is set up again, warmed
 * by one forward, profiled for one forward and torn down. A refusal (no permission, a
 * profiling lock) is recorded in run.json and the batch goes on without counters. */
/* CUPTI names its auto ranges by their index. The timed pass recorded which kernels
 * one forward launches, in order (one stream): each kernel range takes the name of the
 * kernel at its index in the variant's first recorded forward. */
static void name_kernel_ranges(const trace *t, const char *variant, counters_set *cs, int from)
{
    const host_range *fwd = NULL;
    for (size_t i = 0; i < t->n_ranges && !fwd; i++)
        if (t->ranges[i].iteration >= 0 && t->ranges[i].variant && !strcmp(t->ranges[i].variant, variant) &&
            !strcmp(t->ranges[i].name, "attn_fwd"))
            fwd = &t->ranges[i];
    if (!fwd)
        return;
    int n = 0;
    for (int j = from; j < cs->n; j++) {
        counter_range *r = &cs->r[j];
        if (strcmp(r->kind, "kernel") || strcmp(r->variant, variant))
            continue;
        n = 0;
        for (size_t i = 0; i < t->n_ops; i++) { /* ops are in start order */
            const gpu_op *o = &t->ops[i];
            const api_call *l = o->kind == GPU_KERNEL ? trace_launcher(t, o) : NULL;
            if (!l || l->start_ns < fwd->start_ns || l->start_ns > fwd->end_ns)
                continue;
            if (n++ == r->index) {
                snprintf(r->name, sizeof r->name, "%s", o->name);
                break;
            }
        }
    }
}

static void counter_batch(const run_plan *cfg, device_inputs *d, run_info *info, const trace *t)
{
    counters_set *cs = &info->counters;
    double t0 = host_us();
    int failed = 0, skipped = 0;
    char first_error[300] = "";
    if (counter_pass_open(&cs->meta) != 0) {
        if (!cfg->c.quiet)
            fprintf(stderr, "\r\033[Kattnprof: no hardware counters (%s): %s\n",
                    counters_status_name(cs->meta.status), cs->meta.reason);
        return;
    }
    for (int i = 0; i < cfg->n_variants && i < info->n_variants; i++) {
        const attn_variant *var = cfg->variants[i];
        variant_result *res = &info->variants[i];
        if (res->status != VARIANT_OK || strcmp(res->name, var->name))
            continue;
        double max_bytes = (double)cfg->c.counters_max_gib * 1073741824.0;
        if (res->device_bytes > max_bytes) {
            attn_fact_add(&res->facts, "counters", NAN,
                          "counter pass skipped: the variant needs %.1f GiB of device memory here, above "
                          "--counters-max-gib %d (kernel replay saves and restores it on every pass)",
                          res->device_bytes / 1073741824.0, cfg->c.counters_max_gib);
            step_line(cfg, "counters of %s skipped: %.1f GiB of device memory > --counters-max-gib %d", var->name,
                      res->device_bytes / 1073741824.0, cfg->c.counters_max_gib);
            skipped++;
            continue;
        }
        progress(cfg, i, var->name, "counters", 1, 1);
        double tv = host_us();
        counted_forward f = {.var = var, .d = d};
        char err[256] = "";
        int prc = 0;
        int rc = var->setup(&f.state, &cfg->c.shape, &cfg->c.options, d->stream, &f.e);
        if (rc == ATTN_OK && counted_forward_once(&f) != 0)
            rc = ATTN_FAILED;
        cudaError_t ce = cudaStreamSynchronize(d->stream);
        if (rc != ATTN_OK || ce != cudaSuccess)
            snprintf(err, sizeof err, "setup or warm-up forward: %s", f.e.msg[0] ? f.e.msg : cudaGetErrorString(ce));
        int first_range = cs->n;
        if (!err[0] &&
            (prc = counter_pass_forward(var->name, counted_forward_once, &f, d->stream, cs, err, sizeof err)) == 0) {
            err[0] = '\0';
            name_kernel_ranges(t, var->name, cs, first_range);
        }
        if (prc == -2) { /* refused: say so once, for the whole pass */
            cs->meta.status = CTR_FORBIDDEN;
            cs->n = 0; /* none of a refused pass counts */
            snprintf(cs->meta.reason, sizeof cs->meta.reason, "%s", err);
            if (!cfg->c.quiet)
                fprintf(stderr, "\r\033[Kattnprof: no hardware counters (forbidden): %s\n", err);
        } else if (err[0]) {
            failed++;
            if (!first_error[0])
                snprintf(first_error, sizeof first_error, "%s: %s", var->name, err);
            attn_fact_add(&res->facts, "counters", NAN, "counter pass failed: %s", err);
            if (!cfg->c.quiet)
                fprintf(stderr, "\r\033[Kattnprof: counters of %s: %s\n", var->name, err);
        }
        if (var->teardown)
            var->teardown(f.state);
        cudaGetLastError();
        step_line(cfg, "counters of %s: %s in %.1f s (%.2f GiB of device memory)", var->name, err[0] ? "failed" : "ok",
                  (host_us() - tv) / 1e6, res->device_bytes / 1073741824.0);
        if (prc == -2)
            break;
    }
    counter_pass_close();
    if (cs->meta.status == CTR_OK && failed && !cs->n) { /* not one variant measured */
        cs->meta.status = CTR_FAILED;
        snprintf(cs->meta.reason, sizeof cs->meta.reason, "%s", first_error);
    }
    cs->meta.pass_seconds = (host_us() - t0) / 1e6;
}

static void fill_versions(run_info *info, const trace *t)
{
    cudaRuntimeGetVersion(&info->cuda_runtime_version);
    cudaDriverGetVersion(&info->cuda_driver_version);
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
        info->cublas_version = major * 10000 + minor * 100 + patch;
    info->cudnn_version = (int)cudnnGetVersion();
    info->cupti_version = t->cupti_version;
    driver_version(info->driver_version, sizeof info->driver_version);
}

int runner_plan(const run_config *cfg, run_plan *plan, char *err, size_t errlen)
{
    memset(plan, 0, sizeof *plan);
    plan->c = *cfg;
    plan->c.variant_list = NULL;
    if (plan->c.replicates < 1)
        plan->c.replicates = 1;
    int chosen[RUN_MAX_VARIANTS] = {0};
    if (!cfg->variant_list) {
        for (int i = 0; i < attn_registry_count && i < RUN_MAX_VARIANTS; i++)
            chosen[i] = 1;
    } else {
        char *names = strdup(cfg->variant_list);
        if (!names)
            return fail(err, errlen, EXIT_IO, "out of memory");
        for (char *save, *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int found = 0;
            for (int i = 0; i < attn_registry_count && i < RUN_MAX_VARIANTS; i++)
                if (!strcmp(attn_registry[i]->name, tok))
                    chosen[i] = found = 1;
            if (!found) {
                snprintf(err, errlen, "--variants: unknown variant '%s'; `attnprof list` shows the variants", tok);
                free(names);
                return EXIT_USAGE;
            }
        }
        free(names);
    }
    for (int i = 0; i < attn_registry_count && i < RUN_MAX_VARIANTS; i++)
        if (chosen[i])
            plan->variants[plan->n_variants++] = attn_registry[i];
    if (!plan->n_variants)
        return fail(err, errlen, EXIT_USAGE, "--variants: empty list; name at least one variant");
    /* Every named variant must take the shape; the message names the variant and what to
     * change. With the default list a misfit is skipped with the same reason. */
    plan->named = cfg->variant_list != NULL;
    const attn_shape *s = &cfg->shape;
    int runnable = 0;
    for (int i = 0; i < plan->n_variants; i++) {
        attn_error why = {{0}};
        if (plan->variants[i]->check_shape && plan->variants[i]->check_shape(s, &why) != 0) {
            if (!plan->named) {
                snprintf(plan->skip[i], sizeof plan->skip[i], "cannot take %dx%dx%dx%d: %s", s->batch, s->heads,
                         s->seq, s->dim, why.msg);
                continue;
            }
            snprintf(err, errlen,
                     "variant %s cannot take %dx%dx%dx%d: %s; change the shape or leave it out with --variants",
                     plan->variants[i]->name, s->batch, s->heads, s->seq, s->dim, why.msg);
            return EXIT_USAGE;
        }
        runnable++;
    }
    if (!runnable)
        return fail(err, errlen, EXIT_USAGE, "no variant can take %s; change the shape (see the variants' limits in "
                                             "`attnprof list`)", "this shape");
    return EXIT_OK;
}

/* Step 1: CUDA device 0, opened, with its properties and versions in the trace and run_info. */
static int open_device(trace *t, run_info *info, char *err, size_t errlen)
{
    int n_dev = 0;
    cudaError_t ce = cudaGetDeviceCount(&n_dev);
    if (ce != cudaSuccess || n_dev == 0)
        return fail(err, errlen, EXIT_NO_DEVICE,
                    "no usable CUDA device or driver (%s); `attnprof report DIR` re-renders an archived run without one",
                    ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
    if ((ce = cudaSetDevice(0)) != cudaSuccess || (ce = cudaFree(0)) != cudaSuccess)
        return fail(err, errlen, EXIT_NO_DEVICE, "cannot use CUDA device 0: %s", cudaGetErrorString(ce));
    int rc = runner_device_props(0, &t->device, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    info->device = t->device;
    gpu_identity(0, info);
    t->cuda_runtime_version = 0;
    cudaRuntimeGetVersion(&t->cuda_runtime_version);
    cudaDriverGetVersion(&t->cuda_driver_version);
    return EXIT_OK;
}

/* Step 2, memory first, so a too-large shape fails before anything runs: each variant's device
 * bytes into need_bytes (NAN: a variant skipped before the memory check); a variant of the
 * default list that does not fit is skipped (its reason in skip), a named one is an error. */
static int check_device_memory(const run_plan *cfg, double *need_bytes, char (*skip)[ATTN_ERR_LEN], char *err,
                               size_t errlen)
{
    const attn_shape *s = &cfg->c.shape;
    size_t io_bytes = tensor_elems(s) * 2 * 4 + (size_t)s->seq * s->seq;
    size_t free_b = 0, total_b = 0;
    cudaError_t ce;
    if ((ce = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess)
        return fail(err, errlen, EXIT_IO, "cudaMemGetInfo: %s", cudaGetErrorString(ce));
    for (int i = 0; i < RUN_MAX_VARIANTS; i++)
        need_bytes[i] = NAN;
    int runnable = 0;
    for (int i = 0; i < cfg->n_variants; i++) {
        if (skip[i][0])
            continue;
        size_t need = io_bytes + cfg->variants[i]->device_bytes(s);
        need_bytes[i] = (double)need;
        if (need > free_b) {
            if (!cfg->named) {
                snprintf(skip[i], ATTN_ERR_LEN, "needs %.2f GiB of device memory at %dx%dx%dx%d but %.2f GiB are free",
                         need / 1073741824.0, s->batch, s->heads, s->seq, s->dim, free_b / 1073741824.0);
                continue;
            }
            snprintf(err, errlen,
                     "variant %s needs %.2f GiB of device memory at %dx%dx%dx%d but %.2f GiB are free; "
                     "use a smaller --batch/--seq or drop it from --variants",
                     cfg->variants[i]->name, need / 1073741824.0, s->batch, s->heads, s->seq, s->dim,
                     free_b / 1073741824.0);
            return EXIT_DEVICE_MEMORY;
        }
        runnable++;
    }
    if (!runnable) {
        for (int i = 0; i < cfg->n_variants; i++)
            if (strncmp(skip[i], "needs", 5) == 0) {
                snprintf(err, errlen, "no variant fits in device memory: %s %.400s; use a smaller --batch/--seq",
                         cfg->variants[i]->name, skip[i]);
                return EXIT_DEVICE_MEMORY;
            }
        return fail(err, errlen, EXIT_USAGE, "no variant can take this shape");
    }
    return EXIT_OK;
}

/* Step 4: the stream, the events and the inputs on the device (the caller frees them). */
static int upload_inputs(device_inputs *d, const uint16_t *host, size_t n, const attn_shape *s, char *err,
                         size_t errlen)
{
#define SETUP_TRY(call) CHECK_CALL(cuda, call, snprintf(err, errlen, "%s", check_msg_); return EXIT_IO)
    SETUP_TRY(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    SETUP_TRY(cudaEventCreate(&d->ev0));
    SETUP_TRY(cudaEventCreate(&d->ev1));
    SETUP_TRY(cudaEventCreate(&d->fwd0));
    SETUP_TRY(cudaEventCreate(&d->fwd1));
    SETUP_TRY(cudaMalloc(&d->q, n * 2));
    SETUP_TRY(cudaMalloc(&d->k, n * 2));
    SETUP_TRY(cudaMalloc(&d->v, n * 2));
    SETUP_TRY(cudaMalloc(&d->out, n * 2));
    SETUP_TRY(cudaMalloc((void **)&d->mask, (size_t)s->seq * s->seq));
    SETUP_TRY(cudaMemcpy(d->q, host, n * 2, cudaMemcpyHostToDevice));
    SETUP_TRY(cudaMemcpy(d->k, host + n, n * 2, cudaMemcpyHostToDevice));
    SETUP_TRY(cudaMemcpy(d->v, host + 2 * n, n * 2, cudaMemcpyHostToDevice));
#undef SETUP_TRY
    return EXIT_OK;
}

/* Step 5: what run.json says of the whole run. */
static void describe_run(const run_plan *cfg, run_info *info, trace *t)
{
    info->shape = cfg->c.shape;
    info->seed = cfg->c.seed;
    info->iters = cfg->c.iters;
    info->warmup = cfg->c.warmup;
    info->causal = 1;
    info->rel_error_threshold = cfg->c.rel_error_threshold;
    snprintf(info->dtype, sizeof info->dtype, "bf16");
    iso_date(info->date, sizeof info->date);
    fill_versions(info, t);
    host_and_build(&info->env);
}

/* A variant's result before it runs: its names and expectations, nothing measured yet. */
static void start_result(variant_result *res, const attn_variant *v, double device_bytes, const attn_shape *s,
                         const trace *t)
{
    snprintf(res->name, sizeof res->name, "%s", v->name);
    snprintf(res->title, sizeof res->title, "%s", v->title);
    snprintf(res->what_changed, sizeof res->what_changed, "%s", v->what_changed);
    res->expected_ops = v->expected_ops;
    res->expected_memcpy = v->expected_memcpy;
    res->rel_error = res->event_us_cupti = res->event_us_no_cupti = NAN;
    res->host_us_cupti = res->host_us_no_cupti = NAN;
    res->device_bytes = device_bytes;
    if (v->predict)
        v->predict(s, t->device.major, t->device.minor, &res->prediction);
}

/* Step 7, after the timed batch, with activity collection off (neither perturbs the timings):
 * the ceilings, then the counter pass. */
/* --ceilings-from: the ceilings of an archive recorded on this GPU (same UUID) that measured
 * them, with the archive's directory name as their source. 0, or -1 with why not in why. */
static int ceilings_from_archive(const char *path, run_info *info, char *why, size_t why_len)
{
    static run_info other;
    char err[512];
    if (run_info_read_json(&other, path, err, sizeof err) != 0)
        return snprintf(why, why_len, "%s", err), -1;
    if (!other.ceilings.measured)
        return snprintf(why, why_len, "%s measured no ceilings", path), -1;
    if (!other.gpu_uuid[0] || strcmp(other.gpu_uuid, info->gpu_uuid))
        return snprintf(why, why_len, "%s was recorded on GPU %s, this is %s", path,
                        other.gpu_uuid[0] ? other.gpu_uuid : "(no UUID recorded)", info->gpu_uuid), -1;
    info->ceilings = other.ceilings;
    /* The archive's directory: "DIR/shapes/2x16x16384x128/run.json" -> "2x16x16384x128". */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    ceilings_set_source(&info->ceilings, strrchr(dir, '/') ? strrchr(dir, '/') + 1 : slash ? dir : ".");
    return 0;
}

static void after_batch(const run_plan *cfg, device_inputs *d, run_info *info, trace *t)
{
    char why[700] = "";
    if (cfg->c.calibrate && cfg->c.ceilings_from) {
        if (ceilings_from_archive(cfg->c.ceilings_from, info, why, sizeof why) == 0) {
            step_line(cfg, "ceilings from %s (same GPU): not measured again", info->ceilings.source);
            goto counters;
        }
        if (!cfg->c.quiet)
            fprintf(stderr, "attnprof: --ceilings-from: %s; measuring them here\n", why);
    }
    if (cfg->c.calibrate) {
        if (!cfg->c.quiet && isatty(STDERR_FILENO))
            fprintf(stderr, "\r\033[Kcalibrating ceilings (GEMM bf16, SGEMM, DtoD copy)");
        double t0 = host_us();
        calibrate_run(&info->ceilings);
        step_line(cfg, "ceilings calibrated in %.1f s", (host_us() - t0) / 1e6);
    }
counters:
    trace_sort(t); /* the counter pass names its kernel ranges from the sorted records */
    if (cfg->c.counters) {
        double t0 = host_us();
        counter_batch(cfg, d, info, t);
        step_line(cfg, "counter pass: %s in %.1f s", counters_status_name(info->counters.meta.status),
                  (host_us() - t0) / 1e6);
    }
    if (!cfg->c.quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
}

/* How the forwards will be measured, into run.json's "measurement": NVML opened for the
 * per-forward samples, --lock-clocks tried (refused: one line, the run goes on), and under
 * --l2 cold the flush buffer (twice the L2) allocated and one flush timed. */
static int measurement_begin(const run_plan *cfg, device_inputs *d, run_info *info, char *err, size_t errlen)
{
    measurement_plan *m = &info->measurement;
    const stop_rule rule = STOP_RULE_DEFAULT;
    memset(m, 0, sizeof *m);
    m->recorded = 1;
    snprintf(m->iters_rule, sizeof m->iters_rule, "%s", cfg->c.iters ? "fixed" : "auto");
    m->noise_target = rule.noise_target;
    m->min_forwards = cfg->c.iters ? cfg->c.iters : rule.min_forwards;
    m->max_forwards = cfg->c.iters ? cfg->c.iters : rule.max_forwards;
    m->min_gpu_s = cfg->c.iters ? 0 : rule.min_gpu_s;
    m->time_cap_s = cfg->c.iters ? 0 : rule.time_cap_s;
    m->replicates = cfg->c.replicates;
    m->throttle_fraction = THROTTLE_FRACTION;
    m->lock_clocks_requested = cfg->c.lock_clocks;
    char why[200] = "";
    int nvml_ok = nvml_open(0, why, sizeof why) == 0;
    if (!nvml_ok && !cfg->c.quiet)
        fprintf(stderr, "attnprof: no per-forward clocks (NVML: %s); the run goes on\n", why);
    if (cfg->c.lock_clocks) {
        if (nvml_lock_sm_clock(m->lock_clocks, sizeof m->lock_clocks) != 0 && !cfg->c.quiet)
            fprintf(stderr, "attnprof: --lock-clocks %s; the run goes on with the clocks as they are\n",
                    m->lock_clocks);
    }
    snprintf(m->l2, sizeof m->l2, "%s", cfg->c.l2_cold ? "cold" : "warm");
    if (!cfg->c.l2_cold)
        return EXIT_OK;
    int l2 = info->device.l2_bytes > 0 ? info->device.l2_bytes : 64 << 20;
    d->flush_bytes = 2 * (size_t)l2;
    m->l2_flush_bytes = (int64_t)d->flush_bytes;
    cudaError_t ce = cudaMalloc(&d->flush, d->flush_bytes);
    if (ce != cudaSuccess) {
        d->flush = NULL;
        return fail(err, errlen, EXIT_DEVICE_MEMORY, "--l2 cold: cannot allocate the %.0f MiB flush buffer: %s; "
                    "use --l2 warm or a smaller shape", d->flush_bytes / 1048576.0, cudaGetErrorString(ce));
    }
    double t[5];
    for (int i = 0; i < 5 && ce == cudaSuccess; i++) {
        float ms_f = 0;
        if ((ce = cudaEventRecord(d->fwd0, d->stream)) == cudaSuccess &&
            (ce = cudaMemsetAsync(d->flush, i, d->flush_bytes, d->stream)) == cudaSuccess &&
            (ce = cudaEventRecord(d->fwd1, d->stream)) == cudaSuccess &&
            (ce = cudaEventSynchronize(d->fwd1)) == cudaSuccess &&
            (ce = cudaEventElapsedTime(&ms_f, d->fwd0, d->fwd1)) == cudaSuccess)
            t[i] = ms_f * 1000.0;
    }
    if (ce != cudaSuccess)
        return fail(err, errlen, EXIT_IO, "--l2 cold: the flush failed: %s", cudaGetErrorString(ce));
    m->flush_us = median_of(t, 5);
    return EXIT_OK;
}

/* After the last record: each forward's sample onto its attn_fwd range (by variant and
 * iteration), the cost of an NVML sample, and run.json's iters: --iters N per pass, or under
 * --iters auto the most forwards any variant recorded (each has its own count, in its "stop"). */
static void measurement_end(const run_plan *cfg, measure_state *ms, run_info *info, trace *t)
{
    for (size_t i = 0; i < t->n_ranges; i++) {
        host_range *r = &t->ranges[i];
        if (!r->variant || !r->name || strcmp(r->name, "attn_fwd") || r->iteration < 0)
            continue;
        for (int v = 0; v < info->n_variants; v++) {
            forward_log *log = &ms->logs[v];
            if (strcmp(info->variants[v].name, r->variant))
                continue;
            if (r->iteration < log->n)
                r->sample = log->s[r->iteration];
        }
    }
    if (ms->n_nvml)
        info->measurement.nvml_sample_us = median_of(ms->nvml_us, ms->n_nvml);
    int most = 0;
    for (int v = 0; v < info->n_variants; v++)
        if (info->variants[v].stop.forwards > most)
            most = info->variants[v].stop.forwards;
    info->iters = cfg->c.iters ? cfg->c.iters : most; /* --iters N: per pass, as run.json reads it */
    for (int v = 0; v < RUN_MAX_VARIANTS; v++)
        free(ms->logs[v].s);
    free(ms->nvml_us);
    memset(ms, 0, sizeof *ms);
}

int runner_collect(const run_plan *cfg, trace *t, run_info *info, char *err, size_t errlen)
{
    int rc = open_device(t, info, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    const attn_shape *s = &cfg->c.shape;
    double need_bytes[RUN_MAX_VARIANTS];
    /* A copy: the memory check may skip more variants of the default list. */
    static char skip[RUN_MAX_VARIANTS][ATTN_ERR_LEN];
    memcpy(skip, cfg->skip, sizeof skip);
    if ((rc = check_device_memory(cfg, need_bytes, skip, err, errlen)) != EXIT_OK)
        return rc;

    /* Step 3: the inputs and the FP64 reference of the sampled heads, on the host. */
    device_inputs d = {0};
    size_t n = tensor_elems(s);
    uint16_t *host = malloc(n * 2 * 3);
    d.host_out = malloc((size_t)s->seq * s->dim * 2);
    if (!host || !d.host_out)
        abort();
    rng r;
    rng_seed(&r, cfg->c.seed);
    double t_inputs = host_us();
    fill_normal_bf16_threads(host, n * 3, &r, online_cpus());
    double t_reference = host_us();
    sampled_head heads[8];
    checked_rows rows = {0};
    int n_heads = sample_heads(cfg, host, host + n, host + 2 * n, heads, &rows);
    double t_variants = host_us();
    step_line(cfg, "inputs %dx%dx%dx%d drawn in %.1f s; FP64 reference of %d heads x %d rows in %.1f s (%d CPUs)",
              s->batch, s->heads, s->seq, s->dim, (t_reference - t_inputs) / 1e6, n_heads, rows.n,
              (t_variants - t_reference) / 1e6, online_cpus());

    if ((rc = upload_inputs(&d, host, n, s, err, errlen)) != EXIT_OK)
        goto out;
    if (cupti_start(t, err, errlen) != 0) {
        rc = EXIT_IO;
        goto out;
    }
    describe_run(cfg, info, t);

    /* Step 6: the variants, in series order; with --replicate K, K passes of them all. */
    rc = EXIT_OK;
    static measure_state ms;
    memset(&ms, 0, sizeof ms);
    if ((rc = measurement_begin(cfg, &d, info, err, errlen)) != EXIT_OK)
        goto out;
    for (int i = 0; i < cfg->n_variants; i++) {
        variant_result *res = &info->variants[info->n_variants++];
        start_result(res, cfg->variants[i], need_bytes[i], s, t);
    }
    for (int pass = 0; pass < cfg->c.replicates; pass++)
        for (int i = 0; i < cfg->n_variants; i++) {
            variant_result *res = &info->variants[i];
            const attn_variant *v = cfg->variants[i];
            if (skip[i][0]) {
                if (pass == 0) {
                    res->status = VARIANT_SKIPPED;
                    snprintf(res->error, sizeof res->error, "%s", skip[i]);
                    if (!cfg->c.quiet)
                        fprintf(stderr, "attnprof: variant %s skipped: %s\n", v->name, res->error);
                }
                continue;
            }
            if (pass > 0 && res->status != VARIANT_OK)
                continue;
            double t0 = host_us();
            if (run_variant(cfg, i, pass, &d, heads, n_heads, &rows, res, t, info, &ms) == VARIANT_FAILED)
                rc = EXIT_VARIANT_FAILED;
            double done_s = (host_us() - t_variants) / 1e6;
            int step = pass * cfg->n_variants + i + 1, steps = cfg->c.replicates * cfg->n_variants;
            char pass_text[32] = "";
            if (cfg->c.replicates > 1)
                snprintf(pass_text, sizeof pass_text, " (pass %d/%d)", pass + 1, cfg->c.replicates);
            step_line(cfg,
                      "[%d/%d] %s%s %s: %.1f µs per forward (CUDA events), rel. error %.2g; %d forwards (%s, "
                      "noise %.2g%%); %.1f s, about %.0f s left",
                      i + 1, cfg->n_variants, v->name, pass_text, variant_status_name(res->status),
                      res->event_us_no_cupti, res->rel_error, res->stop.forwards, res->stop.reason,
                      100 * res->stop.noise, (host_us() - t0) / 1e6, done_s / step * (steps - step));
        }
    snprintf(info->marker_source, sizeof info->marker_source, "%s", cupti_marker_source());
    cupti_stop();
    measurement_end(cfg, &ms, info, t); /* every record is in: the samples go onto their ranges */
    after_batch(cfg, &d, info, t);
out:
    cudaFree(d.q);
    cudaFree(d.k);
    cudaFree(d.v);
    cudaFree(d.out);
    cudaFree(d.mask);
    if (d.ev0)
        cudaEventDestroy(d.ev0);
    if (d.ev1)
        cudaEventDestroy(d.ev1);
    if (d.fwd0)
        cudaEventDestroy(d.fwd0);
    if (d.fwd1)
        cudaEventDestroy(d.fwd1);
    cudaFree(d.flush);
    nvml_close(); /* after the counter pass: a locked clock stays locked for it */
    if (d.stream)
        cudaStreamDestroy(d.stream);
    for (int i = 0; i < n_heads; i++)
        free(heads[i].ref);
    free(rows.row);
    free(host);
    free(d.host_out);
    return rc;
}
