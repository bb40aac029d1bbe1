// The tensor-core backward's own harness (kernels/attn_bwd_tc.h), outside attnprof so that
// compute-sanitizer can run it (attnprof's CUPTI subscription collides with the sanitizer's).
//   bwd_tc_bench check [N|mma|sm90a]  every configuration (or configuration N only, the mma.sync
//                            ones only, the sm_90a ones only), causal and not, odd
//                            S, D 64 and 128, against an FP32 reference on the GPU (one thread
//                            per key or query row); the tensor-core lse against the reference
//                            lse. Exit 1 on any error over the tolerance.
//   bwd_tc_bench small [N]   the same on two small shapes (for compute-sanitizer), every
//                            configuration or configuration N only.
//   bwd_tc_bench time [N]    S 1024..16384 x D 64/128 x causal/not, B = 32768/S, H = 16: every
//                            configuration of the head dim (or configuration N only), CUDA-event
//                            median of 10 backwards after 2 warm-ups, and (without N) the lse
//                            recompute.
//   bwd_tc_bench list        the configurations' numbers and names (N of the other modes).
//   bwd_tc_bench point S D CAUSAL [N,...]  one point of that grid (configurations N, a comma
//                            list, "d" or none for the head dim's default): 2 warm-ups and 10
//                            timed backwards each, one allocation (for ncu).
// Built with -DATTNPROF_HAVE_SM90A and kernels/attn_bwd_sm90a.o (the Makefile's build), the list of
// configurations goes on past the mma.sync ones with the sm_90a backward's (attn_bwd_sm90a.h,
// bench-only, named sm90a_*): every mode runs them beside the others, numbered after them; on a
// device that cannot run them they are skipped with a line that says so.
// Inputs are uniform in [-1, 1) (O and dO too: the backward is a function of its inputs, so the
// check needs no forward).
#include "attn_bwd_tc.h"
#include "flash_tile_order.h"
#ifdef ATTNPROF_HAVE_SM90A
#include "attn_bwd_sm90a.h"
#endif

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

typedef __nv_bfloat16 bf16;

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void fill(bf16 *x, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed * 0x9e3779b9u;
        h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
        x[i] = __float2bfloat16((h >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}

__device__ float dotb(const bf16 *a, const bf16 *b, int d)
{
    float x = 0.f;
    for (int i = 0; i < d; i++)
        x = fmaf(__bfloat162float(a[i]), __bfloat162float(b[i]), x);
    return x;
}

__global__ void ref_lse(const bf16 *q, const bf16 *k, float *lse, int bh, int S, int D, int causal)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= bh * S)
        return;
    const int h = r / S, i = r % S;
    const float scale = 1.f / sqrtf((float)D);
    float m = -INFINITY, l = 0.f;
    for (int j = 0; j < (causal ? i + 1 : S); j++) {
        const float x = dotb(q + (size_t)r * D, k + ((size_t)h * S + j) * D, D) * scale;
        const float mn = fmaxf(m, x);
        l = l * expf(m - mn) + expf(x - mn);
        m = mn;
    }
    lse[r] = m + logf(l);
}

__global__ void ref_delta(const bf16 *o, const bf16 *dout, float *delta, int rows, int D)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows)
        delta[r] = dotb(o + (size_t)r * D, dout + (size_t)r * D, D);
}

// dK, dV of key j (mode 0) or dQ of query i (mode 1), FP32.
__global__ void ref_grad(const bf16 *q, const bf16 *k, const bf16 *v, const bf16 *dout, const float *lse,
                         const float *delta, float *g1, float *g2, int bh, int S, int D, int causal, int mode)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= bh * S)
        return;
    const int h = r / S, x = r % S;
    const float scale = 1.f / sqrtf((float)D);
    float a1[128], a2[128];
    for (int d = 0; d < D; d++)
        a1[d] = a2[d] = 0.f;
    const size_t hb = (size_t)h * S;
    const int lo = mode == 0 && causal ? x : 0, hi = mode == 1 && causal ? x + 1 : S;
    for (int y = lo; y < hi; y++) {
        const int i = mode == 0 ? y : x, j = mode == 0 ? x : y;
        const bf16 *qi = q + (hb + i) * D, *kj = k + (hb + j) * D, *vj = v + (hb + j) * D, *doi = dout + (hb + i) * D;
        const float p = expf(dotb(qi, kj, D) * scale - lse[hb + i]);
        const float ds = p * (dotb(doi, vj, D) - delta[hb + i]);
        for (int d = 0; d < D; d++) {
            if (mode == 0) {
                a1[d] = fmaf(ds, __bfloat162float(qi[d]), a1[d]);
                a2[d] = fmaf(p, __bfloat162float(doi[d]), a2[d]);
            } else {
                a1[d] = fmaf(ds, __bfloat162float(kj[d]), a1[d]);
            }
        }
    }
    for (int d = 0; d < D; d++) {
        g1[(size_t)r * D + d] = a1[d] * scale;
        if (mode == 0)
            g2[(size_t)r * D + d] = a2[d];
    }
}

// The bench's list of configurations: the mma.sync ones (attn_bwd_tc.h), then the sm_90a ones.
struct BenchConfig {
    int head_dim;
    const char *name;
    int sm90a; // 1: index into attn_bwd_sm90a's table
    int index;
};

static int bench_config_count()
{
    int n = attn_bwd_tc_config_count();
#ifdef ATTNPROF_HAVE_SM90A
    n += attn_bwd_sm90a_config_count();
#endif
    return n;
}

static BenchConfig bench_config(int c)
{
    const int tc = attn_bwd_tc_config_count();
    if (c < tc) {
        const attn_bwd_tc_config *cf = attn_bwd_tc_config_at(c);
        return {cf->head_dim, cf->name, 0, c};
    }
#ifdef ATTNPROF_HAVE_SM90A
    const attn_bwd_sm90a_config *cf = attn_bwd_sm90a_config_at(c - tc);
    return {cf->head_dim, cf->name, 1, c - tc};
#else
    return {0, "none", 0, -1};
#endif
}

// Whether configuration c can run here (the sm_90a ones need an sm_90 device); says so once.
static bool bench_config_runs(const BenchConfig &cf)
{
    if (!cf.sm90a)
        return true;
#ifdef ATTNPROF_HAVE_SM90A
    static int available = -1;
    if (available < 0) {
        available = attn_bwd_sm90a_available();
        if (!available)
            printf("sm90a configurations skipped: no sm_90 device or no tensor-map encoder\n");
    }
    return available != 0;
#else
    return false;
#endif
}

static size_t bench_workspace_floats(int bh, int S, int D)
{
    size_t n = attn_bwd_tc_workspace_floats(bh, S, D);
#ifdef ATTNPROF_HAVE_SM90A
    n = std::max(n, attn_bwd_sm90a_workspace_floats(bh, S, D));
#endif
    return n;
}

struct Bufs;
static cudaError_t bench_launch(const BenchConfig &cf, const Bufs &b, int bh, int S, int D, int causal);

struct Bufs {
    size_t n, rows;
    bf16 *q, *k, *v, *o, *dout, *dq, *dk, *dv;
    float *lse, *lse_tc, *ws, *delta, *rq, *rk, *rv;
    void alloc(int bh, int S, int D, bool ref)
    {
        rows = (size_t)bh * S;
        n = rows * D;
        bf16 **b[] = {&q, &k, &v, &o, &dout, &dq, &dk, &dv};
        for (auto p : b)
            CK(cudaMalloc(p, n * sizeof(bf16)));
        CK(cudaMalloc(&lse, rows * 4));
        CK(cudaMalloc(&lse_tc, rows * 4));
        CK(cudaMalloc(&ws, bench_workspace_floats(bh, S, D) * 4));
        rq = rk = rv = delta = nullptr;
        if (ref) {
            CK(cudaMalloc(&delta, rows * 4));
            CK(cudaMalloc(&rq, n * 4));
            CK(cudaMalloc(&rk, n * 4));
            CK(cudaMalloc(&rv, n * 4));
        }
        bf16 *in[] = {q, k, v, o, dout};
        for (int i = 0; i < 5; i++)
            fill<<<1024, 256>>>(in[i], n, 17 + i);
        CK(cudaGetLastError());
    }
    void release()
    {
        void *p[] = {q, k, v, o, dout, dq, dk, dv, lse, lse_tc, ws, delta, rq, rk, rv};
        for (auto x : p)
            if (x)
                cudaFree(x);
    }
};

static cudaError_t bench_launch(const BenchConfig &cf, const Bufs &b, int bh, int S, int D, int causal)
{
#ifdef ATTNPROF_HAVE_SM90A
    if (cf.sm90a)
        return launch_attn_bwd_sm90a(b.q, b.k, b.v, b.o, b.dout, b.lse, b.ws, b.dq, b.dk, b.dv, bh, S, D, causal,
                                     cf.index, 0);
#endif
    return launch_attn_bwd_tc(b.q, b.k, b.v, b.o, b.dout, b.lse, b.ws, b.dq, b.dk, b.dv, bh, S, D, causal, cf.index,
                              0);
}

static double rel_err(const bf16 *got_d, const float *ref_d, size_t n)
{
    std::vector<bf16> g(n);
    std::vector<float> r(n);
    CK(cudaMemcpy(g.data(), got_d, n * sizeof(bf16), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), ref_d, n * 4, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)__bfloat162float(g[i]) - r[i];
        num += d * d;
        den += (double)r[i] * r[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double lse_err(const float *a_d, const float *b_d, size_t n)
{
    std::vector<float> a(n), b(n);
    CK(cudaMemcpy(a.data(), a_d, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), b_d, n * 4, cudaMemcpyDeviceToHost));
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = std::max(m, (double)fabsf(a[i] - b[i]));
    return m;
}

// check's selector past a configuration number: every configuration (-1), the mma.sync ones
// alone (`check mma`: what gpu-test holds the tree to) or the sm_90a ones alone (`check sm90a`,
// checked by bench/bwd_wgmma_h200.sh until they have passed on a GPU).
enum { CHECK_ALL = -1, CHECK_MMA = -2, CHECK_SM90A = -3 };

static int check_selector(int argc, char **argv)
{
    if (argc <= 2)
        return CHECK_ALL;
    if (!strcmp(argv[2], "mma"))
        return CHECK_MMA;
    if (!strcmp(argv[2], "sm90a"))
        return CHECK_SM90A;
    return atoi(argv[2]);
}

static int check(bool small, int only)
{
    const double tol = 5e-2;
    // The last two have enough heads for two L2 head groups of the grouped block order (the
    // "groups" of their lse line), which the other shapes, one group each, never exercise.
    struct { int b, h, s, d; } shapes_all[] = {{2, 3, 77, 64},    {1, 2, 333, 128}, {1, 2, 1000, 64},
                                               {1, 2, 1000, 128}, {1, 3, 333, 64},  {2, 2, 77, 128},
                                               {1, 1, 256, 64},   {1, 1, 129, 128}, {2, 20, 1000, 128},
                                               {4, 20, 1000, 64}};
    int dev = 0, l2 = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    const int count = small ? 2 : (int)(sizeof shapes_all / sizeof shapes_all[0]);
    int bad = 0;
    for (int si = 0; si < count; si++) {
        auto sh = shapes_all[si];
        if (small)
            sh.s = si == 0 ? 77 : 133;
        const int bh = sh.b * sh.h;
        for (int causal = 0; causal < 2; causal++) {
            Bufs b;
            b.alloc(bh, sh.s, sh.d, true);
            const int th = 64, blocks = (int)((b.rows + th - 1) / th);
            ref_lse<<<blocks, th>>>(b.q, b.k, b.lse, bh, sh.s, sh.d, causal);
            ref_delta<<<blocks, th>>>(b.o, b.dout, b.delta, (int)b.rows, sh.d);
            ref_grad<<<blocks, th>>>(b.q, b.k, b.v, b.dout, b.lse, b.delta, b.rk, b.rv, bh, sh.s, sh.d, causal, 0);
            ref_grad<<<blocks, th>>>(b.q, b.k, b.v, b.dout, b.lse, b.delta, b.rq, nullptr, bh, sh.s, sh.d, causal, 1);
            CK(cudaGetLastError());
            CK(launch_attn_bwd_tc_lse(b.q, b.k, b.lse_tc, bh, sh.s, sh.d, causal, 0));
            CK(cudaDeviceSynchronize());
            const double le = lse_err(b.lse_tc, b.lse, b.rows);
            const int per_group = flash_heads_per_group(l2, sh.s, 2 * sh.d, bh);
            printf("check %dx%dx%dx%d causal=%d lse max|diff| %.2e (head groups %d)%s\n", sh.b, sh.h, sh.s, sh.d,
                   causal, le, (bh + per_group - 1) / per_group, le > 2e-2 ? "  FAIL" : "");
            bad += le > 2e-2;
            for (int c = 0; c < bench_config_count(); c++) {
                const BenchConfig cf = bench_config(c);
                if (cf.head_dim != sh.d || (only >= 0 && c != only) || (only == CHECK_MMA && cf.sm90a) ||
                    (only == CHECK_SM90A && !cf.sm90a) || !bench_config_runs(cf))
                    continue;
                CK(cudaMemset(b.dq, 0xff, b.n * 2)); // NaN: a gradient element never written shows
                CK(cudaMemset(b.dk, 0xff, b.n * 2));
                CK(cudaMemset(b.dv, 0xff, b.n * 2));
                CK(bench_launch(cf, b, bh, sh.s, sh.d, causal));
                CK(cudaDeviceSynchronize());
                const double eq = rel_err(b.dq, b.rq, b.n), ek = rel_err(b.dk, b.rk, b.n), ev = rel_err(b.dv, b.rv, b.n);
                const bool fail = !(eq <= tol && ek <= tol && ev <= tol);
                printf("check %dx%dx%dx%d causal=%d %-20s dq %.2e dk %.2e dv %.2e%s\n", sh.b, sh.h, sh.s, sh.d, causal,
                       cf.name, eq, ek, ev, fail ? "  FAIL" : "");
                bad += fail;
            }
            b.release();
        }
    }
    printf("check: %s (%d failures, tolerance %.0e)\n", bad ? "FAILED" : "passed", bad, tol);
    return bad ? 1 : 0;
}


template <typename F> static float time_ms(int reps, F f)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 2; i++)
        f();
    std::vector<float> t;
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[t.size() / 2];
}

// only: the configurations to time (empty: every one of the head dim, and the lse recompute).
static void time_point(int s, int d, int causal, const std::vector<int> &only)
{
    const int B = 32768 / s, H = 16, bh = B * H;
    Bufs b;
    b.alloc(bh, s, d, false);
    CK(launch_attn_bwd_tc_lse(b.q, b.k, b.lse, bh, s, d, causal, 0));
    const double flops = 2.5 * 4.0 * bh * (double)s * s * d / (causal ? 2 : 1);
    if (only.empty()) {
        const float lms = time_ms(10, [&] { CK(launch_attn_bwd_tc_lse(b.q, b.k, b.lse_tc, bh, s, d, causal, 0)); });
        printf("time S=%d D=%d causal=%d lse_recompute %.3f ms\n", s, d, causal, lms);
    }
    for (int c = 0; c < bench_config_count(); c++) {
        const BenchConfig cf = bench_config(c);
        const bool listed = only.empty() || std::find(only.begin(), only.end(), c) != only.end();
        if (cf.head_dim != d || !listed || !bench_config_runs(cf))
            continue;
        const float ms = time_ms(10, [&] { CK(bench_launch(cf, b, bh, s, d, causal)); });
        printf("time S=%d D=%d causal=%d %-20s %.3f ms %.1f TFLOP/s%s\n", s, d, causal, cf.name, ms,
               flops / ms / 1e9, c == attn_bwd_tc_default_config_masked(d, causal) ? " (default)" : "");
    }
    fflush(stdout);
    b.release();
}

static int timing(int only)
{
    for (int d : {64, 128})
        for (int causal : {1, 0})
            for (int s : {1024, 4096, 16384})
                time_point(s, d, causal, only >= 0 ? std::vector<int>{only} : std::vector<int>{});
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    if (!strcmp(mode, "check"))
        return check(false, check_selector(argc, argv));
    if (!strcmp(mode, "small"))
        return check(true, argc > 2 ? atoi(argv[2]) : -1);
    if (!strcmp(mode, "list")) {
        for (int c = 0; c < bench_config_count(); c++)
            printf("%d %s D=%d%s\n", c, bench_config(c).name, bench_config(c).head_dim,
                   bench_config(c).sm90a ? " sm90a" : "");
        return 0;
    }
    if (!strcmp(mode, "time"))
        return timing(argc > 2 ? atoi(argv[2]) : -1);
    if (!strcmp(mode, "point") && argc >= 5) {
        const int d = atoi(argv[3]);
        const int causal = atoi(argv[4]);
        // N: a comma-separated list of configurations ("d": the head dim's default).
        std::vector<int> only;
        for (const char *c = argc > 5 ? argv[5] : "d"; *c; c += strcspn(c, ","), c += *c == ',')
            only.push_back(*c == 'd' ? attn_bwd_tc_default_config_masked(d, causal) : atoi(c));
        time_point(atoi(argv[2]), d, causal, only);
        return 0;
    }
    fprintf(stderr, "usage: bwd_tc_bench check [config|mma|sm90a]|list|small [config]|time [config]|point S D CAUSAL [config,...]\n");
    return 2;
}
