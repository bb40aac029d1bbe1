/* Runs in `make test` of a CUDA build, without a GPU: the driver calls the recorder traces
 * (src/recorder/driver_apis.c), chosen by name from CUPTI's own table, are the launches,
 * copies and memsets, and none of the bookkeeping calls cuDNN and cuBLAS make around their
 * launches. A rename in cupti_driver_cbid.h that drops a launch from the set fails here. */
#include <cupti.h>
#include <stdio.h>
#include <string.h>

#include "driver_apis.h"

static int traced(const char *want, int expect)
{
    for (uint32_t cb = 1; cb < CUPTI_DRIVER_TRACE_CBID_SIZE; cb++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cb, &name) == CUPTI_SUCCESS && name &&
            !strcmp(name, want)) {
            if (cupti_driver_api_traced(name) == expect)
                return 0;
            printf("driver_apis: %s is %straced, expected the opposite\n", want, expect ? "not " : "");
            return 1;
        }
    }
    printf("driver_apis: CUPTI names no driver API %s\n", want);
    return 1;
}

int main(void)
{
    const char *launches[] = {"cuLaunchKernel", "cuLaunchKernelEx", "cuGraphLaunch", "cuMemcpyAsync",
                              "cuMemcpyDtoDAsync_v2", "cuMemsetD8Async", "cuMemsetD32Async"};
    const char *bookkeeping[] = {"cuCtxGetCurrent", "cuStreamGetCaptureInfo", "cuPointerGetAttribute",
                                 "cuGetProcAddress", "cuModuleGetFunction", "cuEventRecord", "cuMemAlloc_v2"};
    int bad = 0, n = 0;
    for (size_t i = 0; i < sizeof launches / sizeof *launches; i++)
        bad |= traced(launches[i], 1);
    for (size_t i = 0; i < sizeof bookkeeping / sizeof *bookkeeping; i++)
        bad |= traced(bookkeeping[i], 0);
    for (uint32_t cb = 1; cb < CUPTI_DRIVER_TRACE_CBID_SIZE; cb++) {
        const char *name = NULL;
        n += cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cb, &name) == CUPTI_SUCCESS && cupti_driver_api_traced(name);
    }
    if (n == 0 || n > CUPTI_DRIVER_TRACE_CBID_SIZE / 4) {
        printf("driver_apis: %d of %d driver APIs traced: the selection is not the launches'\n", n,
               (int)CUPTI_DRIVER_TRACE_CBID_SIZE);
        bad = 1;
    }
    if (!bad)
        printf("driver_apis: %d of %d driver APIs traced, launches in, bookkeeping out\n", n,
               (int)CUPTI_DRIVER_TRACE_CBID_SIZE);
    return bad;
}
