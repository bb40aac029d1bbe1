/* Status checking for CUDA, cuBLAS, cuDNN and CUPTI calls in the recorder, in one shape (as the
 * CUPTI samples' CUPTI_API_CALL): CHECK_CALL(lib, call, on_failure...) runs the call and, if
 * its status is not the library's success, writes "call: the library's message (file:line)"
 * into check_msg_ and runs on_failure, which may use check_msg_ and check_st_ (the status).
 * Each library's part is defined when its header was included before this one, so a file
 * pulls in only the libraries it calls. The recorder's conventions stay where they were: inside
 * a variant CUDA_TRY / CUBLAS_TRY / CUDNN_TRY return attn_fail's ATTN_* code; other callers
 * give their own on_failure (return a CUPTI status, set EXIT_IO and clean up). */
#ifndef ATTNPROF_CHECK_H
#define ATTNPROF_CHECK_H

#include "variant.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

#define CHECK_MSG_MAX 512

#define CHECK_CALL(lib, call, ...)                                                                 \
    do {                                                                                           \
        check_##lib##_status check_st_ = (call);                                                   \
        if (check_st_ != check_##lib##_success) {                                                  \
            char check_msg_[CHECK_MSG_MAX];                                                        \
            check_##lib##_describe(check_msg_, sizeof check_msg_, #call, check_st_, __FILE__, __LINE__); \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
    } while (0)

/* "call: message (file:line)", the shape every library's describe writes. */
static inline void check_say(char *buf, size_t n, const char *call, const char *message, const char *file, int line)
{
    snprintf(buf, n, "%s: %s (%s:%d)", call, message, file, line);
}

typedef cudaError_t check_cuda_status;
#define check_cuda_success cudaSuccess
static inline void check_cuda_describe(char *buf, size_t n, const char *call, cudaError_t st, const char *file,
                                       int line)
{
    check_say(buf, n, call, cudaGetErrorString(st), file, line);
}

#define CUDA_TRY(call, err) CHECK_CALL(cuda, call, return attn_fail((err), ATTN_FAILED, "%s", check_msg_))

/* After a kernel launch: launch errors surface through cudaGetLastError. */
#define CUDA_LAUNCHED(err) CUDA_TRY(cudaGetLastError(), err)

#ifdef CUBLAS_VER_MAJOR
typedef cublasStatus_t check_cublas_status;
#define check_cublas_success CUBLAS_STATUS_SUCCESS
static inline void check_cublas_describe(char *buf, size_t n, const char *call, cublasStatus_t st, const char *file,
                                         int line)
{
    char message[160];
    snprintf(message, sizeof message, "%s (cuBLAS status %d)", cublasGetStatusString(st), (int)st);
    check_say(buf, n, call, message, file, line);
}

#define CUBLAS_TRY(call, err) CHECK_CALL(cublas, call, return attn_fail((err), ATTN_FAILED, "%s", check_msg_))
#endif

#ifdef CUDNN_MAJOR
typedef cudnnStatus_t check_cudnn_status;
#define check_cudnn_success CUDNN_STATUS_SUCCESS
/* cuDNN's message for the status, and its last error string when it has one. */
static inline void check_cudnn_describe(char *buf, size_t n, const char *call, cudnnStatus_t st, const char *file,
                                        int line)
{
    char last[256] = "", message[400];
    cudnnGetLastErrorString(last, sizeof last);
    snprintf(message, sizeof message, "%s (status %d)%s%s", cudnnGetErrorString(st), (int)st, last[0] ? ": " : "",
             last);
    check_say(buf, n, call, message, file, line);
}
#endif

#ifdef CUPTI_API_VERSION
typedef CUptiResult check_cupti_status;
#define check_cupti_success CUPTI_SUCCESS
static inline void check_cupti_describe(char *buf, size_t n, const char *call, CUptiResult st, const char *file,
                                        int line)
{
    const char *s = NULL;
    if (cuptiGetResultString(st, &s) != CUPTI_SUCCESS || !s)
        s = "unknown CUPTI error";
    char message[160];
    snprintf(message, sizeof message, "%s (%d)", s, (int)st);
    check_say(buf, n, call, message, file, line);
}
#endif

#endif
