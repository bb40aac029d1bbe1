/* How many exp2 results per clock an SM gives: ex2.approx.f32 against the
 * packed ex2.approx.f16x2 and ex2.approx.ftz.bf16x2 (two results per
 * instruction), to decide whether the softmax's exponentials can go packed.
 * One block of 1024 threads per SM, 8 independent chains per thread; the
 * rate is results over the block's clock64 cycles, median over blocks.
 *
 *   nvcc -O3 -gencode arch=compute_90a,code=sm_90a bench/ex2_rate.cu -o build/ex2_rate
 *   build/ex2_rate    (and cuobjdump -sass build/ex2_rate | grep MUFU)
 * Measured on the H200: bench/RESULTS.md, "The ladder, fourth session". */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "ex2_rate: %s: %s\n", #x, cudaGetErrorString(e_));                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { ITERS = 4096, CHAINS = 8 };

/* The three forms differ only in the register type, how a chain starts, the
 * instruction, and how a result is read back. */
struct Ex2F32 {
    typedef float reg;
    static __device__ reg start(float a, float) { return a; }
    static __device__ void step(reg &x) { asm volatile("ex2.approx.ftz.f32 %0, %0;\n" : "+f"(x)); }
    static __device__ float sum(reg x) { return x; }
};
/* The packed forms: two halves (or bfloat16s) in one 32-bit register. */
__device__ __half2 pack2(float a, float b, __half2 *) { return __floats2half2_rn(a, b); }
__device__ __nv_bfloat162 pack2(float a, float b, __nv_bfloat162 *) { return __floats2bfloat162_rn(a, b); }
__device__ void ex2_packed(uint32_t &x, __half2 *) { asm volatile("ex2.approx.f16x2 %0, %0;\n" : "+r"(x)); }
__device__ void ex2_packed(uint32_t &x, __nv_bfloat162 *) { asm volatile("ex2.approx.ftz.bf16x2 %0, %0;\n" : "+r"(x)); }

template <typename H2> struct Ex2Packed {
    typedef uint32_t reg;
    static __device__ reg start(float a, float b)
    {
        H2 h = pack2(a, b, (H2 *)nullptr);
        return *reinterpret_cast<uint32_t *>(&h);
    }
    static __device__ void step(reg &x) { ex2_packed(x, (H2 *)nullptr); }
    static __device__ float sum(reg x)
    {
        H2 h = *reinterpret_cast<H2 *>(&x);
        return __low2float(h) + __high2float(h);
    }
};

template <typename Op> __global__ void ex2_rate(float *out, long long *cycles, float seed)
{
    typename Op::reg x[CHAINS];
    for (int c = 0; c < CHAINS; c++)
        x[c] = Op::start(-0.001f * (threadIdx.x + c) * seed, -0.002f * seed);
    __syncthreads();
    const long long t0 = clock64();
    for (int i = 0; i < ITERS; i++)
#pragma unroll
        for (int c = 0; c < CHAINS; c++)
            Op::step(x[c]);
    __syncthreads();
    const long long t1 = clock64();
    float s = 0.f;
    for (int c = 0; c < CHAINS; c++)
        s += Op::sum(x[c]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0)
        cycles[blockIdx.x] = t1 - t0;
}

typedef void (*kernel_fn)(float *, long long *, float);

int main(void)
{
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int threads = 1024;
    float *out;
    long long *cycles;
    CHECK(cudaMalloc(&out, sizeof(float) * sms * threads));
    CHECK(cudaMalloc(&cycles, sizeof(long long) * sms));
    const struct {
        const char *name;
        kernel_fn fn;
        int results_per_op;
    } kernels[] = {{"ex2.approx.ftz.f32", ex2_rate<Ex2F32>, 1},
                   {"ex2.approx.f16x2", ex2_rate<Ex2Packed<__half2>>, 2},
                   {"ex2.approx.ftz.bf16x2", ex2_rate<Ex2Packed<__nv_bfloat162>>, 2}};
    for (const auto &k : kernels) {
        std::vector<long long> c(sms);
        for (int rep = 0; rep < 3; rep++) {
            k.fn<<<sms, threads>>>(out, cycles, 1.f + rep);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
        }
        CHECK(cudaMemcpy(c.data(), cycles, sizeof(long long) * sms, cudaMemcpyDeviceToHost));
        std::sort(c.begin(), c.end());
        const double results = (double)threads * ITERS * CHAINS * k.results_per_op;
        printf("%-24s %6.2f results/clock/SM (median of %d blocks; %lld cycles)\n", k.name,
               results / (double)c[sms / 2], sms, c[sms / 2]);
    }
    CHECK(cudaFree(out));
    CHECK(cudaFree(cycles));
    return 0;
}
