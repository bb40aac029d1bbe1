/* A kernel that keeps the GPU busy for a given time (kernels/probe_hold.cu): the CUPTI
 * overhead probe queues it ahead of each sample, so that the sample's forwards are all
 * queued before its first event is reached and the event window holds GPU time only. */
#ifndef ATTNPROF_PROBE_HOLD_H
#define ATTNPROF_PROBE_HOLD_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One thread spinning on the GPU's global timer for `us` microseconds. */
cudaError_t launch_probe_hold(double us, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
