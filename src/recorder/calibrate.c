/* The ceilings (see calibrate.h). Inputs are seeded random values, never zeros (zeros
 * draw less power and run faster than real data). Each figure is the best of several
 * timed repetitions between CUDA events after warm-up, the usual way a roof is quoted. */
#include "calibrate.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEMM_BF16_N 8192
#define GEMM_F32_N 4096
#define COPY_BYTES ((size_t)1 << 30)
#define REPS 8

static uint32_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 32);
}

/* Uniform in [-1, 1): bf16 (top half of the float) or float. */
static void *random_host(size_t n, int bf16, uint64_t seed)
{
    void *h = malloc(n * (bf16 ? 2 : 4));
    if (!h)
        return NULL;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        float x = (float)next_rand(&s) / 2147483648.0f - 1.0f;
        if (bf16) {
            uint32_t b;
            memcpy(&b, &x, 4);
            ((uint16_t *)h)[i] = (uint16_t)(b >> 16);
        } else {
            ((float *)h)[i] = x;
        }
    }
    return h;
}

typedef struct timing {
    cudaStream_t stream;
    cudaEvent_t e0, e1;
    cublasHandle_t blas;
} timing;

#define CK(call)                                                                                             \
    do {                                                                                                     \
        cudaError_t ce_ = (call);                                                                            \
        if (ce_ != cudaSuccess) {                                                                            \
            snprintf(c->error, sizeof c->error, "%s: %s", #call, cudaGetErrorString(ce_));                   \
            goto out;                                                                                        \
        }                                                                                                    \
    } while (0)
#define CB(call)                                                                                             \
    do {                                                                                                     \
        cublasStatus_t cs_ = (call);                                                                         \
        if (cs_ != CUBLAS_STATUS_SUCCESS) {                                                                  \
            snprintf(c->error, sizeof c->error, "%s: cuBLAS status %d", #call, (int)cs_);                    \
            goto out;                                                                                        \
        }                                                                                                    \
    } while (0)

/* Best seconds of one GEMM (n×n×n) of the given types. */
static double time_gemm(ceilings *c, timing *t, int n, cudaDataType ab, cudaDataType cd, cublasComputeType_t comp)
{
    double best = NAN;
    void *a = NULL, *b = NULL, *d = NULL, *ha = NULL, *hb = NULL;
    const size_t el = (size_t)n * n, esz = ab == CUDA_R_16BF ? 2 : 4, dsz = cd == CUDA_R_16BF ? 2 : 4;
    const float one = 1.0f, zero = 0.0f;
    ha = random_host(el, esz == 2, 1);
    hb = random_host(el, esz == 2, 2);
    if (!ha || !hb) {
        snprintf(c->error, sizeof c->error, "out of host memory");
        goto out;
    }
    CK(cudaMalloc(&a, el * esz));
    CK(cudaMalloc(&b, el * esz));
    CK(cudaMalloc(&d, el * dsz));
    CK(cudaMemcpy(a, ha, el * esz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb, el * esz, cudaMemcpyHostToDevice));
    for (int rep = -2; rep < REPS; rep++) {
        CK(cudaEventRecord(t->e0, t->stream));
        CB(cublasGemmEx(t->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, ab, n, b, ab, n, &zero, d, cd, n, comp,
                        CUBLAS_GEMM_DEFAULT));
        CK(cudaEventRecord(t->e1, t->stream));
        CK(cudaEventSynchronize(t->e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, t->e0, t->e1));
        if (rep >= 0 && (isnan(best) || ms * 1e-3 < best))
            best = ms * 1e-3;
    }
out:
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
    free(ha);
    free(hb);
    return best;
}

static double time_copy(ceilings *c, timing *t)
{
    double best = NAN;
    void *src = NULL, *dst = NULL;
    CK(cudaMalloc(&src, COPY_BYTES));
    CK(cudaMalloc(&dst, COPY_BYTES));
    CK(cudaMemset(src, 0x5a, COPY_BYTES));
    for (int rep = -2; rep < REPS; rep++) {
        CK(cudaEventRecord(t->e0, t->stream));
        CK(cudaMemcpyAsync(dst, src, COPY_BYTES, cudaMemcpyDeviceToDevice, t->stream));
        CK(cudaEventRecord(t->e1, t->stream));
        CK(cudaEventSynchronize(t->e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, t->e0, t->e1));
        if (rep >= 0 && (isnan(best) || ms * 1e-3 < best))
            best = ms * 1e-3;
    }
out:
    cudaFree(src);
    cudaFree(dst);
    return best;
}

void calibrate_run(ceilings *c)
{
    memset(c, 0, sizeof *c);
    c->tensor_bf16_tflops = c->fp32_fma_tflops = c->copy_tbps = NAN;
    snprintf(c->method, sizeof c->method,
             "best of %d: cublasGemmEx bf16→fp32 %d³ (compute 32F); SGEMM %d³ pedantic math (no TF32); "
             "cudaMemcpyAsync DtoD %zu MiB, (read + write bytes) / time",
             REPS, GEMM_BF16_N, GEMM_F32_N, COPY_BYTES >> 20);
    timing t = {0};
    double s;
    CK(cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking));
    CK(cudaEventCreate(&t.e0));
    CK(cudaEventCreate(&t.e1));
    CB(cublasCreate(&t.blas));
    CB(cublasSetStream(t.blas, t.stream));
    CB(cublasSetMathMode(t.blas, CUBLAS_DEFAULT_MATH));
    s = time_gemm(c, &t, GEMM_BF16_N, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F);
    if (isnan(s))
        goto out;
    c->tensor_bf16_tflops = 2.0 * GEMM_BF16_N * GEMM_BF16_N * (double)GEMM_BF16_N / s / 1e12;
    CB(cublasSetMathMode(t.blas, CUBLAS_PEDANTIC_MATH));
    s = time_gemm(c, &t, GEMM_F32_N, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC);
    if (isnan(s))
        goto out;
    c->fp32_fma_tflops = 2.0 * GEMM_F32_N * GEMM_F32_N * (double)GEMM_F32_N / s / 1e12;
    s = time_copy(c, &t);
    if (isnan(s))
        goto out;
    c->copy_tbps = 2.0 * COPY_BYTES / s / 1e12;
    c->measured = 1;
out:
    if (t.blas)
        cublasDestroy(t.blas);
    if (t.e0)
        cudaEventDestroy(t.e0);
    if (t.e1)
        cudaEventDestroy(t.e1);
    if (t.stream)
        cudaStreamDestroy(t.stream);
    cudaGetLastError();
}
