/* Check and benchmark for the fused attention kernels (kernels/flash_fwd.cu,
 * kernels/efficient_fwd.cu, enumerated through the family table of kernels/families.h),
 * standalone: no attnprof code besides the kernels.
 *
 *   fused_bench              correctness on every shape, then timings, cuBLAS ceiling
 *   fused_bench --check      correctness on every shape only (make gpu-test)
 *   fused_bench --sanitize [NAME]   small shapes only, correctness only (for compute-sanitizer);
 *                                   NAME: only the kernels whose name contains it
 *
 * The sm_90a flash kernels (names with "sm90a") run where the GPU takes them
 * (compute capability 9.0), each causal and non-causal; the others are
 * causal only.
 *
 * Every head dim a kernel is compiled for (32, 64, 96, 128, 256) is checked, and
 * padded ones (8, 40, 80, 112, 160, 200: the kernel of the next compiled D up,
 * the missing columns zero-filled in shared memory), odd S included.
 *
 * Correctness: fresh random normal inputs each run (seed printed), every kernel
 * compared with an FP64 CPU reference (at the real head dim) by relative Frobenius error over the
 * sampled heads (all heads when B*H <= 4, else three), the log-sum-exp of the
 * flash kernels by max absolute error; outputs are poisoned with NaN before
 * each launch and every element must come back finite; each kernel runs twice
 * and the two outputs must be bit-identical (a moving result means a race).
 *
 * Timing: CUDA events between back-to-back launches (the queue stays full, so
 * an interval is one kernel plus the gap between kernels), rotating among
 * enough input sets to exceed the L2 several times over; kernels interleaved in
 * rounds (see ROUNDS); median, 10th and 90th percentile of all launches. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <string>
#include <vector>

#include "efficient_fwd.h"
#include "families.h"
#include "flash_fwd.h"
#include "flash_fwd_sm90a.h"

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)
#define CKB(call)                                                                                  \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_);  \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

typedef __nv_bfloat16 bf16;

struct Kern {
    std::string name;
    const kernel_family *fam; /* kernels/families.h: efficient_fwd or flash_fwd */
    bool flash;
    bool noncausal; /* also runs non-causal (the sm_90a flash kernels) */
    int index;
    int D, bm, bn, warps, threads;
    size_t smem;
};

struct Shape {
    int B, H, S, D;
};

/* Every configuration of the forward families (kernels/families.h), efficient's first. */
static std::vector<Kern> all_kernels()
{
    std::vector<Kern> ks;
    for (int id : {KERNEL_FAMILY_EFFICIENT_FWD, KERNEL_FAMILY_FLASH_FWD}) {
        const kernel_family *f = kernel_family_at(id);
        const bool flash = id == KERNEL_FAMILY_FLASH_FWD;
        kernel_config_desc c;
        for (int i = 0; f->describe(i, &c) == 0; i++) {
            const bool sm90a = flash && strstr(c.name, "sm90a") != nullptr;
            if (sm90a && !flash_sm90a_available())
                continue; /* not this GPU's (or this build's) */
            ks.push_back({c.name, f, flash, sm90a, i, c.head_dim, c.block_m, c.block_n, c.warps, c.threads,
                          c.smem_bytes});
        }
    }
    return ks;
}

/* The sm_90a kernels' tile counter: zeroed once, left zeroed by every launch. */
static void *flash_workspace = nullptr;

static cudaError_t launch(const Kern &k, const bf16 *q, const bf16 *kk, const bf16 *v, bf16 *o,
                          float *lse, const Shape &s, cudaStream_t st, bool causal = true)
{
    if (k.flash)
        return launch_flash_fwd(k.index, q, kk, v, o, lse, flash_workspace, s.B, s.H, s.S, s.D, causal, st);
    return launch_efficient_fwd(k.index, q, kk, v, o, s.B, s.H, s.S, s.D, st);
}

/* Whether a kernel runs this shape: its compiled head dim is the one the shape's
 * head dim pads to (the same head dim, or the next compiled one up). */
static bool runs_shape(const Kern &k, const Shape &s)
{
    return k.D == k.fam->padded_dim(s.D);
}

__device__ __forceinline__ uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Standard normal bf16 values, Box-Muller on a counter-based hash. */
__global__ void fill_normal(bf16 *x, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t h = splitmix64(seed * 0x100000001B3ull + i);
        const float u1 = ((float)(h >> 40) + 0.5f) * (1.0f / 16777216.0f);
        const float u2 = ((float)(h & 0xFFFFFF) + 0.5f) * (1.0f / 16777216.0f);
        x[i] = __float2bfloat16(sqrtf(-2.f * logf(u1)) * cospif(2.f * u2));
    }
}

static void fill(bf16 *x, size_t n, uint64_t seed)
{
    fill_normal<<<1024, 256>>>(x, n, seed);
    CK(cudaGetLastError());
}

static float bf16_to_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static std::vector<float> download_bf16(const bf16 *d, size_t n)
{
    std::vector<uint16_t> raw(n);
    CK(cudaMemcpy(raw.data(), d, n * 2, cudaMemcpyDeviceToHost));
    std::vector<float> f(n);
#pragma omp parallel for
    for (long long i = 0; i < (long long)n; i++)
        f[i] = bf16_to_float(raw[i]);
    return f;
}

/* FP64 attention of one head, causal or not: out [S, D], lse [S] (natural log). */
static void reference_head(const float *q, const float *k, const float *v, int S, int D, bool causal,
                           std::vector<double> &out, std::vector<double> &lse)
{
    out.assign((size_t)S * D, 0.0);
    lse.assign(S, 0.0);
    const double scale = 1.0 / std::sqrt((double)D);
#pragma omp parallel
    {
        std::vector<double> sc(S), acc(D), qi(D);
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < S; i++) {
            for (int x = 0; x < D; x++)
                qi[x] = q[(size_t)i * D + x];
            double mx = -INFINITY;
            const int last = causal ? i : S - 1;
            for (int j = 0; j <= last; j++) {
                const float *kj = k + (size_t)j * D;
                double d = 0;
                for (int x = 0; x < D; x++)
                    d += qi[x] * (double)kj[x];
                sc[j] = d * scale;
                mx = std::max(mx, sc[j]);
            }
            double sum = 0;
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int j = 0; j <= last; j++) {
                const double p = std::exp(sc[j] - mx);
                sum += p;
                const float *vj = v + (size_t)j * D;
                for (int x = 0; x < D; x++)
                    acc[x] += p * (double)vj[x];
            }
            for (int x = 0; x < D; x++)
                out[(size_t)i * D + x] = acc[x] / sum;
            lse[i] = mx + std::log(sum);
        }
    }
}

static int failures = 0;

static void check_shape(const Shape &s, const std::vector<Kern> &ks, uint64_t seed)
{
    const size_t n = (size_t)s.B * s.H * s.S * s.D;
    const int BH = s.B * s.H;
    bf16 *q, *k, *v, *o;
    float *lse;
    CK(cudaMalloc(&q, n * 2));
    CK(cudaMalloc(&k, n * 2));
    CK(cudaMalloc(&v, n * 2));
    CK(cudaMalloc(&o, n * 2));
    CK(cudaMalloc(&lse, (size_t)BH * s.S * 4));
    fill(q, n, seed * 3 + 0);
    fill(k, n, seed * 3 + 1);
    fill(v, n, seed * 3 + 2);
    CK(cudaDeviceSynchronize());
    std::vector<float> hq = download_bf16(q, n), hk = download_bf16(k, n), hv = download_bf16(v, n);

    std::vector<int> heads;
    if (BH <= 4)
        for (int h = 0; h < BH; h++)
            heads.push_back(h);
    else
        heads = {0, BH / 2 + 1, BH - 1};
    const size_t hs = (size_t)s.S * s.D;
    for (const bool causal : {true, false}) {
        bool any = false;
        for (const Kern &kern : ks)
            any |= runs_shape(kern, s) && (causal || kern.noncausal);
        if (!any)
            continue;
        std::vector<std::vector<double>> ref_o(heads.size()), ref_lse(heads.size());
        for (size_t i = 0; i < heads.size(); i++)
            reference_head(&hq[heads[i] * hs], &hk[heads[i] * hs], &hv[heads[i] * hs], s.S, s.D, causal,
                           ref_o[i], ref_lse[i]);

        for (const Kern &kern : ks) {
            if (!runs_shape(kern, s) || !(causal || kern.noncausal))
                continue;
            std::vector<uint16_t> first;
            bool ok = true;
            double rel = 0, lse_err = 0;
            size_t nonfinite = 0, lse_nonfinite = 0;
            bool identical = true;
            for (int rep = 0; rep < 2; rep++) {
                CK(cudaMemset(o, 0xFF, n * 2)); /* bf16 0xFFFF is NaN: unwritten elements show */
                CK(cudaMemset(lse, 0xFF, (size_t)BH * s.S * 4));
                CK(launch(kern, q, k, v, o, lse, s, 0, causal));
                CK(cudaDeviceSynchronize());
                std::vector<uint16_t> raw(n);
                CK(cudaMemcpy(raw.data(), o, n * 2, cudaMemcpyDeviceToHost));
                if (rep == 0) {
                    for (size_t i = 0; i < n; i++) {
                        const float f = bf16_to_float(raw[i]);
                        if (!std::isfinite(f))
                            nonfinite++;
                    }
                    double num = 0, den = 0;
                    for (size_t hi = 0; hi < heads.size(); hi++)
                        for (size_t i = 0; i < hs; i++) {
                            const double d = bf16_to_float(raw[heads[hi] * hs + i]) - ref_o[hi][i];
                            num += d * d;
                            den += ref_o[hi][i] * ref_o[hi][i];
                        }
                    rel = std::sqrt(num / den);
                    if (kern.flash) {
                        std::vector<float> hl((size_t)BH * s.S);
                        CK(cudaMemcpy(hl.data(), lse, hl.size() * 4, cudaMemcpyDeviceToHost));
                        for (float x : hl)
                            if (!std::isfinite(x))
                                lse_nonfinite++;
                        for (size_t hi = 0; hi < heads.size(); hi++)
                            for (int i = 0; i < s.S; i++)
                                lse_err = std::max(
                                    lse_err, std::fabs(hl[(size_t)heads[hi] * s.S + i] - ref_lse[hi][i]));
                    }
                    first.swap(raw);
                } else {
                    identical = memcmp(first.data(), raw.data(), n * 2) == 0;
                }
            }
            ok = !(rel > 2.5e-3) && nonfinite == 0 && lse_nonfinite == 0 && !(lse_err > 1e-3) && identical;
            if (!ok)
                failures++;
            printf("check %-50s %-9s %2dx%2dx%5dx%3d  rel_frob %.2e  lse_maxabs %s  nonfinite %zu/%zu  "
                   "repeat %s  %s\n",
                   kern.name.c_str(), causal ? "causal" : "noncausal", s.B, s.H, s.S, s.D, rel,
                   kern.flash ? (std::to_string(lse_err).substr(0, 9)).c_str() : "   -     ",
                   nonfinite + lse_nonfinite, n, identical ? "identical" : "DIFFERS", ok ? "ok" : "FAIL");
            fflush(stdout);
        }
    }
    CK(cudaFree(q));
    CK(cudaFree(k));
    CK(cudaFree(v));
    CK(cudaFree(o));
    CK(cudaFree(lse));
}

struct Timing {
    double median, p10, p90;
};

static Timing summarize(std::vector<float> t)
{
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    return {t[n / 2] * 1e3, t[n / 10] * 1e3, t[(n * 9) / 10] * 1e3}; /* microseconds */
}

/* Timing is interleaved: ROUNDS rounds, each timing every kernel for ITERS
 * launches after WARMUP, so that clock and temperature drift over the run
 * spreads over all kernels instead of favouring the ones timed first. */
static const int ROUNDS = 5, ITERS = 10, WARMUP = 3;

struct InputSets {
    std::vector<bf16 *> q, k, v;
    bf16 *o = nullptr;
    float *lse = nullptr;
};

static InputSets make_sets(const Shape &s, int nsets, uint64_t seed)
{
    InputSets in;
    const size_t n = (size_t)s.B * s.H * s.S * s.D;
    for (int i = 0; i < nsets; i++) {
        bf16 *q, *k, *v;
        CK(cudaMalloc(&q, n * 2));
        CK(cudaMalloc(&k, n * 2));
        CK(cudaMalloc(&v, n * 2));
        fill(q, n, seed + 10 * i + 1);
        fill(k, n, seed + 10 * i + 2);
        fill(v, n, seed + 10 * i + 3);
        in.q.push_back(q);
        in.k.push_back(k);
        in.v.push_back(v);
    }
    CK(cudaMalloc(&in.o, n * 2));
    CK(cudaMalloc(&in.lse, (size_t)s.B * s.H * s.S * 4));
    CK(cudaDeviceSynchronize());
    return in;
}

static void free_sets(InputSets &in)
{
    for (size_t i = 0; i < in.q.size(); i++) {
        CK(cudaFree(in.q[i]));
        CK(cudaFree(in.k[i]));
        CK(cudaFree(in.v[i]));
    }
    CK(cudaFree(in.o));
    CK(cudaFree(in.lse));
}

/* Appends ITERS per-launch times (ms) of one round to `t`. */
static void time_round(const Kern &kern, const Shape &s, const InputSets &in, std::vector<float> &t)
{
    const int nsets = (int)in.q.size();
    std::vector<cudaEvent_t> ev(ITERS + 1);
    for (auto &e : ev)
        CK(cudaEventCreate(&e));
    for (int i = 0; i < WARMUP; i++)
        CK(launch(kern, in.q[i % nsets], in.k[i % nsets], in.v[i % nsets], in.o, in.lse, s, 0));
    CK(cudaEventRecord(ev[0], 0));
    for (int i = 0; i < ITERS; i++) {
        const int set = (i + 1) % nsets;
        CK(launch(kern, in.q[set], in.k[set], in.v[set], in.o, in.lse, s, 0));
        CK(cudaEventRecord(ev[i + 1], 0));
    }
    CK(cudaEventSynchronize(ev[ITERS]));
    for (int i = 0; i < ITERS; i++) {
        float ms;
        CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
        t.push_back(ms);
    }
    for (auto &e : ev)
        CK(cudaEventDestroy(e));
}

/* bf16 GEMM ceiling: C = A * B, 8192^3, fp32 accumulation, random normal data. */
static void gemm_ceiling(uint64_t seed)
{
    const int N = 8192;
    const size_t n = (size_t)N * N;
    bf16 *a, *b, *c;
    CK(cudaMalloc(&a, n * 2));
    CK(cudaMalloc(&b, n * 2));
    CK(cudaMalloc(&c, n * 2));
    fill(a, n, seed + 101);
    fill(b, n, seed + 102);
    cublasHandle_t h;
    CKB(cublasCreate(&h));
    const float alpha = 1.f, beta = 0.f;
    auto gemm = [&]() {
        CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, a, CUDA_R_16BF, N, b,
                         CUDA_R_16BF, N, &beta, c, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT));
    };
    for (int i = 0; i < 5; i++)
        gemm();
    const int iters = 30;
    std::vector<cudaEvent_t> ev(iters + 1);
    for (auto &e : ev)
        CK(cudaEventCreate(&e));
    CK(cudaEventRecord(ev[0], 0));
    for (int i = 0; i < iters; i++) {
        gemm();
        CK(cudaEventRecord(ev[i + 1], 0));
    }
    CK(cudaEventSynchronize(ev[iters]));
    std::vector<float> t(iters);
    for (int i = 0; i < iters; i++)
        CK(cudaEventElapsedTime(&t[i], ev[i], ev[i + 1]));
    Timing tm = summarize(t);
    printf("ceiling cuBLAS bf16 GEMM 8192^3 (fp32 acc, random data): median %.1f us  %.1f TFLOP/s "
           "(p10 %.1f, p90 %.1f us)\n",
           tm.median, 2.0 * N * N * (double)N / (tm.median * 1e-6) / 1e12, tm.p10, tm.p90);
    for (auto &e : ev)
        CK(cudaEventDestroy(e));
    CKB(cublasDestroy(h));

    /* Device-to-device copy ceiling, bytes read + written. */
    const size_t bytes = (size_t)1 << 30;
    void *x, *y;
    CK(cudaMalloc(&x, bytes));
    CK(cudaMalloc(&y, bytes));
    CK(cudaMemset(x, 1, bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, 0));
    CK(cudaEventRecord(e0, 0));
    for (int i = 0; i < 10; i++)
        CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, 0));
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("ceiling device copy 1 GiB: %.0f GB/s (read + write)\n", 10.0 * 2 * bytes / (ms * 1e-3) / 1e9);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
}

int main(int argc, char **argv)
{
    const bool sanitize = argc > 1 && strcmp(argv[1], "--sanitize") == 0;
    const bool check_only = argc > 1 && strcmp(argv[1], "--check") == 0;
    const uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    int dev = 0;
    CK(cudaSetDevice(dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("device %s  cc %d.%d  %d SMs  L2 %d MB  smem/block opt-in %zu KB  seed %llu  omp threads %d\n",
           prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20,
           prop.sharedMemPerBlockOptin >> 10, (unsigned long long)seed, omp_get_max_threads());

    CK(cudaMalloc(&flash_workspace, 64));
    CK(cudaMemset(flash_workspace, 0, 64));
    std::vector<Kern> ks = all_kernels();
    /* racecheck is slow: a run may check one family of kernels only. */
    if (sanitize && argc > 2) {
        std::vector<Kern> picked;
        for (const Kern &k : ks)
            if (strstr(k.name.c_str(), argv[2]))
                picked.push_back(k);
        if (picked.empty()) {
            fprintf(stderr, "fused_bench: no kernel name contains '%s'; run without it to list them\n", argv[2]);
            return 2;
        }
        ks = picked;
    }
    for (const Kern &k : ks) {
        CK(k.fam->prepare(k.index));
        int blocks = 0;
        CK(k.fam->blocks_per_sm(k.index, &blocks));
        printf("kernel %-44s D=%3d tile %3dx%-3d warps %d smem %6zu B  blocks/SM %d\n", k.name.c_str(), k.D,
               k.bm, k.bn, k.warps, k.smem, blocks);
    }
    const int compiled_dims[] = {32, 64, 96, 128, 256};
    printf("flash defaults:");
    for (int D : compiled_dims) {
        const int c = flash_fwd_default_config(D, prop.major, prop.minor);
        printf(" d%d %s", D, c < 0 ? "none" : flash_fwd_config_at(c)->kernel_name);
    }
    printf("\n");

    std::vector<Shape> checks;
    if (sanitize) {
        /* 520 keys (200 at d256, whose tiles hold 32 keys): enough tiles that every
         * K/V buffer is refilled at least once; 80 and 40 run padded kernels. */
        checks = {{1, 2, 77, 64}, {1, 2, 77, 128}, {1, 1, 200, 64}, {2, 1, 130, 128}, {1, 1, 520, 64},
                  {1, 1, 520, 128}, {1, 2, 77, 32}, {1, 1, 130, 96}, {1, 1, 200, 256}, {2, 1, 90, 80},
                  {1, 1, 100, 40}};
    } else {
        for (int D : compiled_dims)
            for (int S : {77, 1000, 1024, 4096}) {
                checks.push_back({1, 2, S, D});
                checks.push_back({S <= 1024 ? 8 : 4, 16, S, D});
            }
        /* Odd S and head dims that run the kernel of the next compiled D up. */
        const Shape odd[] = {{1, 3, 77, 32},   {1, 2, 333, 96},  {1, 2, 257, 256}, {2, 2, 190, 80},
                             {1, 3, 77, 40},   {1, 2, 333, 200}, {1, 1, 100, 8},   {1, 2, 257, 160},
                             {2, 2, 1000, 112}, {4, 16, 1024, 80}};
        checks.insert(checks.end(), std::begin(odd), std::end(odd));
    }
    for (const Shape &s : checks)
        check_shape(s, ks, seed + (uint64_t)s.S * 1000 + s.D + s.B);
    printf("correctness: %s (%d failure%s)\n", failures ? "FAILED" : "all ok", failures,
           failures == 1 ? "" : "s");
    if (sanitize || check_only)
        return failures ? 1 : 0;

    gemm_ceiling(seed);

    /* The two goal shapes of bench/RESULTS.md, and the other compiled head dims
     * (80 runs the d96 kernels: the cost of padding) at 4x16x4096. */
    const Shape goals[] = {{8, 16, 1024, 64},  {4, 16, 4096, 128}, {4, 16, 4096, 32},
                           {4, 16, 4096, 96},  {4, 16, 4096, 80},  {4, 16, 4096, 256}};
    struct Row {
        std::string name;
        Shape s;
        std::vector<float> all;
        double round_min = 1e30, round_max = 0; /* spread of the per-round medians, us */
    };
    std::vector<Row> rows;
    for (const Shape &s : goals) {
        const size_t set_bytes = (size_t)s.B * s.H * s.S * s.D * 2 * 3;
        const int nsets = std::max(2, (int)((3 * (size_t)prop.l2CacheSize + set_bytes - 1) / set_bytes));
        InputSets in = make_sets(s, nsets, seed + 7777);
        std::vector<Row> shape_rows;
        std::vector<const Kern *> shape_kerns;
        for (const Kern &k : ks)
            if (runs_shape(k, s)) {
                shape_rows.push_back({k.name, s, {}});
                shape_kerns.push_back(&k);
            }
        for (int round = 0; round < ROUNDS; round++)
            for (size_t r = 0; r < shape_rows.size(); r++) {
                std::vector<float> t;
                time_round(*shape_kerns[r], s, in, t);
                const Timing tr = summarize(t);
                shape_rows[r].round_min = std::min(shape_rows[r].round_min, tr.median);
                shape_rows[r].round_max = std::max(shape_rows[r].round_max, tr.median);
                shape_rows[r].all.insert(shape_rows[r].all.end(), t.begin(), t.end());
            }
        printf("timing %dx%dx%dx%d: %d input sets rotated, %d rounds x %d launches per kernel\n", s.B, s.H,
               s.S, s.D, nsets, ROUNDS, ITERS);
        free_sets(in);
        rows.insert(rows.end(), shape_rows.begin(), shape_rows.end());
    }

    printf("\n| kernel | shape | median us | p10-p90 us | round medians us | TFLOP/s |\n");
    printf("| --- | --- | ---: | --- | --- | ---: |\n");
    for (const Row &r : rows) {
        const double flops = 2.0 * r.s.B * r.s.H * (double)r.s.S * r.s.S * r.s.D;
        const Timing t = summarize(r.all);
        printf("| %s | %dx%dx%dx%d | %.1f | %.1f-%.1f | %.1f-%.1f | %.1f |\n", r.name.c_str(), r.s.B, r.s.H,
               r.s.S, r.s.D, t.median, t.p10, t.p90, r.round_min, r.round_max,
               flops / (t.median * 1e-6) / 1e12);
    }
    printf("correctness: %s (%d failure%s)\n", failures ? "FAILED" : "all ok", failures,
           failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
