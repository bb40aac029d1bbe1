// The median GPU time of a launch, in µs, between two CUDA events on one stream: `warm`
// untimed launches, then `samples` timed ones (at most EVENT_MEDIAN_MAX), each synchronized.
// Shared by the elementwise benches (elementwise_bench.cu, fill_probe.cu); a CUDA error
// exits with its call and line, as their CK does.
#ifndef ATTNPROF_BENCH_EVENT_MEDIAN_CUH
#define ATTNPROF_BENCH_EVENT_MEDIAN_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define EVENT_MEDIAN_MAX 64

static inline void event_median_check(cudaError_t e, const char *what, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, what, cudaGetErrorString(e));
        exit(1);
    }
}

template <class F>
static double event_median_us(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int samples, int warm, F launch)
{
    double t[EVENT_MEDIAN_MAX];
    if (samples < 1 || samples > EVENT_MEDIAN_MAX) {
        fprintf(stderr, "event_median_us: %d samples (1 to %d)\n", samples, EVENT_MEDIAN_MAX);
        exit(2);
    }
    for (int i = 0; i < warm; i++)
        launch();
    for (int i = 0; i < samples; i++) {
        event_median_check(cudaEventRecord(e0, s), "cudaEventRecord", __LINE__);
        launch();
        event_median_check(cudaEventRecord(e1, s), "cudaEventRecord", __LINE__);
        event_median_check(cudaEventSynchronize(e1), "cudaEventSynchronize", __LINE__);
        float ms = 0;
        event_median_check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime", __LINE__);
        t[i] = ms * 1000.0;
    }
    for (int i = 1; i < samples; i++) /* insertion sort: a few dozen samples */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            const double y = t[j];
            t[j] = t[j - 1];
            t[j - 1] = y;
        }
    event_median_check(cudaGetLastError(), "a launch", __LINE__);
    return t[samples / 2];
}

#endif
