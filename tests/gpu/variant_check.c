/* Standalone GPU check of attention variants (C11): for each variant named on the
 * command line (default: math cudnn) and each shape, setup -> forward -> teardown,
 * the output compared with an FP64 CPU reference (rel. Frobenius error <= 2e-2 on
 * random normal inputs, the output poisoned with NaN first so an unwritten element
 * fails), a forward_masked check with fully masked rows (what do those rows hold?),
 * and the time of 20 forwards (CUDA events, median) and of their host side.
 * With --ops, one forward runs under CUPTI and its kernels/memsets/memcpys are
 * listed and counted against the variant's expected_ops.
 *
 * usage: variant_check [--ops] [--replan] [--shapes BxHxSxD[,BxHxSxD...]] [variant...]
 * exit status: 0 all checks passed (unavailable variants are reported, not failed),
 * 1 a check failed. Built by tests/gpu/build_variant_check.sh. */
#include "variant.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef VC_NO_CUPTI
#include <cupti.h>
#endif

/* ---- variant lookup: through the registry, or the objects linked directly ---- */
#ifdef VC_REGISTRY
static const attn_variant *find_variant(const char *name) { return attn_find_variant(name); }
#else
#ifdef VC_HAVE_MATH
extern const attn_variant variant_math;
#endif
#ifdef VC_HAVE_CUDNN
extern const attn_variant variant_cudnn;
#endif
#ifdef VC_HAVE_NAIVE_INPLACE
extern const attn_variant variant_naive_inplace;
#endif
static const attn_variant *find_variant(const char *name)
{
    const attn_variant *all[] = {
#ifdef VC_HAVE_MATH
        &variant_math,
#endif
#ifdef VC_HAVE_CUDNN
        &variant_cudnn,
#endif
#ifdef VC_HAVE_NAIVE_INPLACE
        &variant_naive_inplace,
#endif
        NULL};
    for (int i = 0; all[i]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}
#endif

static int failures;

#define CK(call)                                                                                         \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess) {                                                                         \
            fprintf(stderr, "FATAL %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(2);                                                                                     \
        }                                                                                                \
    } while (0)

/* ---- bf16 and random inputs ---- */
static float bf16_to_f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double rng_uniform(void) { return ((rng_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static double rng_normal(void)
{
    return sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform());
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- FP64 reference for one head; mask NULL = causal, else nonzero = masked ---- */
static void reference_head(const uint16_t *q, const uint16_t *k, const uint16_t *v, int S, int D,
                           const uint8_t *mask, double *out)
{
    double *p = malloc(sizeof(double) * S);
    const double scale = 1.0 / sqrt((double)D);
    for (int i = 0; i < S; i++) {
        double m = -INFINITY;
        for (int j = 0; j < S; j++) {
            int masked = mask ? mask[(size_t)i * S + j] != 0 : j > i;
            if (masked) {
                p[j] = -INFINITY;
                continue;
            }
            double acc = 0;
            for (int d = 0; d < D; d++)
                acc += (double)bf16_to_f(q[(size_t)i * D + d]) * bf16_to_f(k[(size_t)j * D + d]);
            p[j] = acc * scale;
            if (p[j] > m)
                m = p[j];
        }
        double sum = 0;
        for (int j = 0; j < S; j++) {
            p[j] = p[j] == -INFINITY ? 0.0 : exp(p[j] - m);
            sum += p[j];
        }
        for (int d = 0; d < D; d++) {
            double acc = 0;
            for (int j = 0; j < S; j++)
                if (p[j] != 0.0)
                    acc += p[j] * bf16_to_f(v[(size_t)j * D + d]);
            /* A row with no key has no value: NaN, kept out of the error norm. */
            out[(size_t)i * D + d] = sum > 0 ? acc / sum : NAN;
        }
    }
    free(p);
}

typedef struct problem {
    attn_shape shape;
    size_t n;              /* elements of q/k/v/out */
    uint16_t *q, *k, *v;   /* host */
    void *dq, *dk, *dv, *dout;
    int heads_checked;     /* reference heads: all, or a spread of them for large shapes */
    int head_ids[4];
    double *ref;           /* [heads_checked][S][D] */
} problem;

static void problem_init(problem *p, attn_shape s, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->shape = s;
    p->n = (size_t)s.batch * s.heads * s.seq * s.dim;
    p->q = malloc(p->n * 2);
    p->k = malloc(p->n * 2);
    p->v = malloc(p->n * 2);
    rng_state = seed;
    for (size_t i = 0; i < p->n; i++) {
        p->q[i] = f_to_bf16((float)rng_normal());
        p->k[i] = f_to_bf16((float)rng_normal());
        p->v[i] = f_to_bf16((float)rng_normal());
    }
    CK(cudaMalloc(&p->dq, p->n * 2));
    CK(cudaMalloc(&p->dk, p->n * 2));
    CK(cudaMalloc(&p->dv, p->n * 2));
    CK(cudaMalloc(&p->dout, p->n * 2));
    CK(cudaMemcpy(p->dq, p->q, p->n * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p->dk, p->k, p->n * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p->dv, p->v, p->n * 2, cudaMemcpyHostToDevice));
    const int bh = s.batch * s.heads;
    /* The CPU reference costs O(B·H·S²·D): past ~2^31 multiply-adds check 2-4 heads. */
    const double work = (double)bh * s.seq * s.seq * s.dim;
    if (work <= 2.2e9 && bh <= 4) {
        p->heads_checked = bh;
        for (int h = 0; h < bh; h++)
            p->head_ids[h] = h;
    } else if (work / bh * 4 <= 2.2e9) {
        p->heads_checked = 4;
        p->head_ids[0] = 0;
        p->head_ids[1] = bh / 3;
        p->head_ids[2] = (2 * bh) / 3;
        p->head_ids[3] = bh - 1;
    } else {
        p->heads_checked = 2;
        p->head_ids[0] = 0;
        p->head_ids[1] = bh - 1;
    }
    const size_t hs = (size_t)s.seq * s.dim;
    p->ref = malloc(sizeof(double) * hs * p->heads_checked);
    const double t0 = now_us();
    for (int i = 0; i < p->heads_checked; i++) {
        const size_t off = (size_t)p->head_ids[i] * hs;
        reference_head(p->q + off, p->k + off, p->v + off, s.seq, s.dim, NULL, p->ref + i * hs);
    }
    printf("  reference: %d of %d heads in FP64 on the CPU (%.1f s)\n", p->heads_checked, bh,
           (now_us() - t0) / 1e6);
}

static void problem_free(problem *p)
{
    free(p->q);
    free(p->k);
    free(p->v);
    free(p->ref);
    CK(cudaFree(p->dq));
    CK(cudaFree(p->dk));
    CK(cudaFree(p->dv));
    CK(cudaFree(p->dout));
}

/* Rel. Frobenius error over the checked heads; *nan_count counts NaN anywhere in out. */
static double check_output(const problem *p, const uint16_t *out, size_t *nan_count)
{
    *nan_count = 0;
    for (size_t i = 0; i < p->n; i++)
        if (isnan(bf16_to_f(out[i])))
            (*nan_count)++;
    const size_t hs = (size_t)p->shape.seq * p->shape.dim;
    double num = 0, den = 0;
    for (int h = 0; h < p->heads_checked; h++) {
        const uint16_t *got = out + (size_t)p->head_ids[h] * hs;
        const double *ref = p->ref + h * hs;
        for (size_t i = 0; i < hs; i++) {
            double d = bf16_to_f(got[i]) - ref[i];
            num += d * d;
            den += ref[i] * ref[i];
        }
    }
    return sqrt(num / den);
}

static void print_facts(const attn_variant *var, void *state)
{
    if (!var->facts)
        return;
    attn_facts f;
    memset(&f, 0, sizeof f);
    var->facts(state, &f);
    for (int i = 0; i < f.n; i++)
        printf("    fact %-20s %s\n", f.item[i].key, f.item[i].value);
}

/* ---- CUPTI: the GPU operations of one forward ---- */
#ifndef VC_NO_CUPTI
static int ops_kernels, ops_memsets, ops_memcpys;
static char ops_names[64][160];
static int ops_named;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 1 << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        char line[160] = "";
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            ops_kernels++;
            snprintf(line, sizeof line, "kernel %.1f us grid %dx%dx%d block %d %s", (k->end - k->start) / 1e3,
                     k->gridX, k->gridY, k->gridZ, k->blockX, k->name);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
            ops_memsets++;
            snprintf(line, sizeof line, "memset %llu bytes %.1f us", (unsigned long long)m->bytes,
                     (m->end - m->start) / 1e3);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
            ops_memcpys++;
            snprintf(line, sizeof line, "memcpy %llu bytes kind %d", (unsigned long long)m->bytes,
                     (int)m->copyKind);
        }
        if (line[0] && ops_named < 64)
            snprintf(ops_names[ops_named++], sizeof ops_names[0], "%s", line);
    }
    free(buffer);
}

#define CUPTI_CK(call)                                                                                   \
    do {                                                                                                 \
        CUptiResult r_ = (call);                                                                         \
        if (r_ != CUPTI_SUCCESS) {                                                                       \
            const char *s_ = "?";                                                                        \
            cuptiGetResultString(r_, &s_);                                                               \
            fprintf(stderr, "FATAL %s: %s\n", #call, s_);                                               \
            exit(2);                                                                                     \
        }                                                                                                \
    } while (0)

static void count_ops(const attn_variant *var, void *state, const problem *p, cudaStream_t stream)
{
    static int registered;
    if (!registered) {
        CUPTI_CK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
        registered = 1;
    }
    ops_kernels = ops_memsets = ops_memcpys = ops_named = 0;
    CK(cudaStreamSynchronize(stream));
    CUPTI_CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CUPTI_CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    CUPTI_CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    attn_error err = {{0}};
    int rc = var->forward(state, p->dq, p->dk, p->dv, p->dout, stream, &err);
    CK(cudaStreamSynchronize(stream));
    CUPTI_CK(cuptiActivityFlushAll(1));
    CUPTI_CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CUPTI_CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET));
    CUPTI_CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
    if (rc != ATTN_OK) {
        printf("  FAIL ops: forward under CUPTI: %s\n", err.msg);
        failures++;
        return;
    }
    const int total = ops_kernels + ops_memsets + ops_memcpys;
    printf("  ops per forward: %d (kernels %d, memsets %d, memcpys %d); expected_ops %d, expected_memcpy %d: %s\n",
           total, ops_kernels, ops_memsets, ops_memcpys, var->expected_ops, var->expected_memcpy,
           total == var->expected_ops && ops_memcpys == var->expected_memcpy ? "ok" : "MISMATCH");
    if (total != var->expected_ops || ops_memcpys != var->expected_memcpy)
        failures++;
    for (int i = 0; i < ops_named; i++)
        printf("    op %2d: %s\n", i + 1, ops_names[i]);
}
#endif

/* ---- fully masked rows: forward_masked with causal + some rows with every key masked ---- */
static void masked_check(const attn_variant *var, void *state, const problem *p, cudaStream_t stream)
{
    if (!var->forward_masked) {
        printf("  forward_masked: not implemented by %s, skipped\n", var->name);
        return;
    }
    const int S = p->shape.seq, D = p->shape.dim;
    const int full_rows[3] = {0, S / 2, S - 1};
    uint8_t *mask = malloc((size_t)S * S);
    for (int i = 0; i < S; i++)
        for (int j = 0; j < S; j++)
            mask[(size_t)i * S + j] = j > i;
    for (int r = 0; r < 3; r++)
        memset(mask + (size_t)full_rows[r] * S, 1, S);
    uint8_t *dmask;
    CK(cudaMalloc((void **)&dmask, (size_t)S * S));
    CK(cudaMemcpy(dmask, mask, (size_t)S * S, cudaMemcpyHostToDevice));
    CK(cudaMemsetAsync(p->dout, 0xff, p->n * 2, stream)); /* 0xffff is a bf16 NaN */
    attn_error err = {{0}};
    int rc = var->forward_masked(state, p->dq, p->dk, p->dv, p->dout, dmask, stream, &err);
    CK(cudaStreamSynchronize(stream));
    if (rc != ATTN_OK) {
        printf("  FAIL forward_masked: %s\n", err.msg);
        failures++;
        goto done;
    }
    uint16_t *out = malloc(p->n * 2);
    CK(cudaMemcpy(out, p->dout, p->n * 2, cudaMemcpyDeviceToHost));
    /* Head 0: the other rows against the masked reference; the full rows reported. */
    double *ref = malloc(sizeof(double) * S * D);
    reference_head(p->q, p->k, p->v, S, D, mask, ref);
    double num = 0, den = 0;
    size_t nan_other = 0;
    for (int i = 0; i < S; i++) {
        if (i == full_rows[0] || i == full_rows[1] || i == full_rows[2])
            continue;
        for (int d = 0; d < D; d++) {
            double g = bf16_to_f(out[(size_t)i * D + d]), r = ref[(size_t)i * D + d];
            if (isnan(g))
                nan_other++;
            num += (g - r) * (g - r);
            den += r * r;
        }
    }
    const double rel = sqrt(num / den);
    const int ok = nan_other == 0 && rel <= 2e-2;
    printf("  forward_masked: other rows rel err %.3e, NaN %zu: %s\n", rel, nan_other, ok ? "ok" : "FAIL");
    if (!ok)
        failures++;
    /* Fully masked rows, over every head. */
    size_t nan = 0, zero = 0, other = 0;
    const int bh = p->shape.batch * p->shape.heads;
    for (int h = 0; h < bh; h++)
        for (int r = 0; r < 3; r++)
            for (int d = 0; d < D; d++) {
                float g = bf16_to_f(out[((size_t)h * S + full_rows[r]) * D + d]);
                if (isnan(g))
                    nan++;
                else if (g == 0.0f)
                    zero++;
                else
                    other++;
            }
    printf("  fully masked rows {0, %d, %d}: %zu values: NaN %zu, zero %zu, other %zu -> %s\n", S / 2, S - 1,
           nan + zero + other, nan, zero, other,
           nan == 0 && other == 0 ? "zeros (NaN-safe)" : nan > 0 && zero == 0 && other == 0 ? "NaN" : "mixed");
    if (strcmp(var->name, "math") == 0 && !(nan == 0 && other == 0)) {
        printf("  FAIL math must give 0 on fully masked rows\n");
        failures++;
    }
    free(out);
    free(ref);
done:
    CK(cudaFree(dmask));
    free(mask);
}

static void run_variant(const attn_variant *var, const problem *p, const attn_options *opt, int do_ops,
                        int do_masked, cudaStream_t stream)
{
    const attn_shape *s = &p->shape;
    printf("[%s] %dx%dx%dx%d%s\n", var->name, s->batch, s->heads, s->seq, s->dim,
           opt->cudnn_replan ? " (replan)" : "");
    attn_error why = {{0}};
    if (var->check_shape && var->check_shape(s, &why)) {
        printf("  skipped: shape not supported: %s\n", why.msg);
        return;
    }
    if (var->device_bytes)
        printf("  device_bytes: %.1f MiB\n", var->device_bytes(s) / 1048576.0);
    void *state = NULL;
    attn_error err = {{0}};
    const double t0 = now_us();
    int rc = var->setup(&state, s, opt, stream, &err);
    const double setup_us = now_us() - t0;
    if (rc == ATTN_UNAVAILABLE) {
        printf("  UNAVAILABLE: %s\n", err.msg);
        return;
    }
    if (rc != ATTN_OK) {
        printf("  FAIL setup: %s\n", err.msg);
        failures++;
        return;
    }
    printf("  setup: %.0f us host\n", setup_us);

    /* Correctness: poisoned output, one forward. */
    CK(cudaMemsetAsync(p->dout, 0xff, p->n * 2, stream));
    rc = var->forward(state, p->dq, p->dk, p->dv, p->dout, stream, &err);
    CK(cudaStreamSynchronize(stream));
    if (rc != ATTN_OK) {
        printf("  FAIL forward: %s\n", err.msg);
        failures++;
        var->teardown(state);
        return;
    }
    CK(cudaGetLastError());
    uint16_t *out = malloc(p->n * 2);
    CK(cudaMemcpy(out, p->dout, p->n * 2, cudaMemcpyDeviceToHost));
    size_t nans;
    const double rel = check_output(p, out, &nans);
    const int ok = nans == 0 && rel <= 2e-2;
    printf("  correctness: rel err %.3e over %d heads, NaN/unwritten %zu of %zu: %s\n", rel, p->heads_checked, nans,
           p->n, ok ? "ok" : "FAIL");
    if (!ok)
        failures++;
    free(out);

    if (do_masked)
        masked_check(var, state, p, stream);

    /* Timing: 3 warm-ups, then 20 forwards, each between its own pair of events. */
    enum { WARM = 3, REPS = 20 };
    cudaEvent_t ev[REPS + 1];
    for (int i = 0; i <= REPS; i++)
        CK(cudaEventCreate(&ev[i]));
    for (int i = 0; i < WARM && rc == ATTN_OK; i++)
        rc = var->forward(state, p->dq, p->dk, p->dv, p->dout, stream, &err);
    CK(cudaStreamSynchronize(stream));
    double host[REPS], gpu[REPS];
    CK(cudaEventRecord(ev[0], stream));
    for (int i = 0; i < REPS && rc == ATTN_OK; i++) {
        const double h0 = now_us();
        rc = var->forward(state, p->dq, p->dk, p->dv, p->dout, stream, &err);
        host[i] = now_us() - h0;
        CK(cudaEventRecord(ev[i + 1], stream));
    }
    CK(cudaStreamSynchronize(stream));
    if (rc != ATTN_OK) {
        printf("  FAIL timed forward: %s\n", err.msg);
        failures++;
    } else {
        for (int i = 0; i < REPS; i++) {
            float ms;
            CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            gpu[i] = ms * 1e3;
        }
        double gmin = gpu[0], gmax = gpu[0];
        for (int i = 1; i < REPS; i++) {
            gmin = gpu[i] < gmin ? gpu[i] : gmin;
            gmax = gpu[i] > gmax ? gpu[i] : gmax;
        }
        const double gmed = median(gpu, REPS), hmed = median(host, REPS);
        printf("  time: %.1f us median per forward (events; min %.1f, max %.1f, %d forwards), host %.1f us median "
               "per forward call\n",
               gmed, gmin, gmax, REPS, hmed);
        printf("TIME %s %dx%dx%dx%d replan=%d gpu_us=%.1f host_us=%.1f\n", var->name, s->batch, s->heads, s->seq,
               s->dim, opt->cudnn_replan, gmed, hmed);
    }
    for (int i = 0; i <= REPS; i++)
        CK(cudaEventDestroy(ev[i]));
    print_facts(var, state);
#ifndef VC_NO_CUPTI
    if (do_ops)
        count_ops(var, state, p, stream);
#else
    if (do_ops)
        printf("  ops: built without CUPTI\n");
#endif
    var->teardown(state);
    CK(cudaGetLastError());
}

static int parse_shapes(const char *text, attn_shape *shapes, int max)
{
    int n = 0;
    const char *c = text;
    while (*c && n < max) {
        attn_shape s;
        int used = 0;
        if (sscanf(c, "%dx%dx%dx%d%n", &s.batch, &s.heads, &s.seq, &s.dim, &used) != 4)
            return -1;
        shapes[n++] = s;
        c += used;
        if (*c == ',')
            c++;
    }
    return n;
}

int main(int argc, char **argv)
{
    attn_shape shapes[16] = {{2, 3, 77, 64}, {1, 2, 256, 128}, {2, 4, 1024, 64}};
    int nshapes = 3;
    const char *names[16];
    int nnames = 0, do_ops = 0;
    attn_options opt = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ops") == 0)
            do_ops = 1;
        else if (strcmp(argv[i], "--replan") == 0)
            opt.cudnn_replan = 1;
        else if (strcmp(argv[i], "--shapes") == 0 && i + 1 < argc) {
            nshapes = parse_shapes(argv[++i], shapes, 16);
            if (nshapes <= 0) {
                fprintf(stderr, "bad --shapes %s (want BxHxSxD[,...])\n", argv[i]);
                return 2;
            }
        } else if (nnames < 16)
            names[nnames++] = argv[i];
    }
    if (nnames == 0) {
        names[nnames++] = "math";
        names[nnames++] = "cudnn";
    }
    int dev;
    struct cudaDeviceProp prop;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    int rt = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    printf("device: %s (sm_%d%d, %d SMs), CUDA runtime %d, driver %d\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, rt, drv);
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int si = 0; si < nshapes; si++) {
        printf("== shape %dx%dx%dx%d ==\n", shapes[si].batch, shapes[si].heads, shapes[si].seq, shapes[si].dim);
        problem p;
        problem_init(&p, shapes[si], 0x5eed0000ull + (uint64_t)si * 7919u);
        for (int vi = 0; vi < nnames; vi++) {
            const attn_variant *var = find_variant(names[vi]);
            if (!var) {
                printf("[%s] not linked into this build, skipped\n", names[vi]);
                continue;
            }
            run_variant(var, &p, &opt, do_ops, si == 0, stream);
        }
        problem_free(&p);
    }
    CK(cudaStreamDestroy(stream));
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
