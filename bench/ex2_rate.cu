/* How many exp2 results per clock an SM gives: ex2.approx.f32 against the
 * packed ex2.approx.f16x2 and ex2.approx.ftz.bf16x2 (two results per
 * instruction), to decide whether the softmax's exponentials can go packed.
 * One block of 1024 threads per SM, 8 independent chains per thread; the
 * rate is results over the block's clock64 cycles, median over blocks.
 *
 *   nvcc -O3 -gencode arch=compute_90a,code=sm_90a bench/ex2_rate.cu -o build/ex2_rate
 *   build/ex2_rate    (and cuobjdump -sass build/ex2_rate | grep MUFU) */
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

__global__ void ex2_f32(float *out, long long *cycles, float seed)
{
    float x[CHAINS];
    for (int c = 0; c < CHAINS; c++)
        x[c] = -0.001f * (threadIdx.x + c) * seed;
    __syncthreads();
    const long long t0 = clock64();
    for (int i = 0; i < ITERS; i++)
#pragma unroll
        for (int c = 0; c < CHAINS; c++)
            asm volatile("ex2.approx.ftz.f32 %0, %0;\n" : "+f"(x[c]));
    __syncthreads();
    const long long t1 = clock64();
    float s = 0.f;
    for (int c = 0; c < CHAINS; c++)
        s += x[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0)
        cycles[blockIdx.x] = t1 - t0;
}

__global__ void ex2_f16x2(float *out, long long *cycles, float seed)
{
    uint32_t x[CHAINS];
    for (int c = 0; c < CHAINS; c++) {
        __half2 h = __floats2half2_rn(-0.001f * (threadIdx.x + c) * seed, -0.002f * seed);
        x[c] = *reinterpret_cast<uint32_t *>(&h);
    }
    __syncthreads();
    const long long t0 = clock64();
    for (int i = 0; i < ITERS; i++)
#pragma unroll
        for (int c = 0; c < CHAINS; c++)
            asm volatile("ex2.approx.f16x2 %0, %0;\n" : "+r"(x[c]));
    __syncthreads();
    const long long t1 = clock64();
    float s = 0.f;
    for (int c = 0; c < CHAINS; c++) {
        __half2 h = *reinterpret_cast<__half2 *>(&x[c]);
        s += __low2float(h) + __high2float(h);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0)
        cycles[blockIdx.x] = t1 - t0;
}

__global__ void ex2_bf16x2(float *out, long long *cycles, float seed)
{
    uint32_t x[CHAINS];
    for (int c = 0; c < CHAINS; c++) {
        __nv_bfloat162 h = __floats2bfloat162_rn(-0.001f * (threadIdx.x + c) * seed, -0.002f * seed);
        x[c] = *reinterpret_cast<uint32_t *>(&h);
    }
    __syncthreads();
    const long long t0 = clock64();
    for (int i = 0; i < ITERS; i++)
#pragma unroll
        for (int c = 0; c < CHAINS; c++)
            asm volatile("ex2.approx.ftz.bf16x2 %0, %0;\n" : "+r"(x[c]));
    __syncthreads();
    const long long t1 = clock64();
    float s = 0.f;
    for (int c = 0; c < CHAINS; c++) {
        __nv_bfloat162 h = *reinterpret_cast<__nv_bfloat162 *>(&x[c]);
        s += __low2float(h) + __high2float(h);
    }
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
    } kernels[] = {{"ex2.approx.ftz.f32", ex2_f32, 1},
                   {"ex2.approx.f16x2", ex2_f16x2, 2},
                   {"ex2.approx.ftz.bf16x2", ex2_bf16x2, 2}};
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
