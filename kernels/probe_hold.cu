// The CUPTI overhead probe's hold (probe_hold.h): one thread reads the global timer
// (nanoseconds) until the time has passed, sleeping between reads so that it takes no issue
// slots from anything else.
#include "probe_hold.h"

#include <stdint.h>

extern "C" __global__ void attnprof_probe_hold(uint64_t ns)
{
    uint64_t start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

extern "C" cudaError_t launch_probe_hold(double us, cudaStream_t s)
{
    attnprof_probe_hold<<<1, 1, 0, s>>>((uint64_t)(us * 1000.0));
    return cudaGetLastError();
}
