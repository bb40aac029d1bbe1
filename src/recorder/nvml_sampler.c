/* NVML for the per-forward samples and the clock lock (nvml_sampler.h). The toolkit ships
 * no nvml.h here, so the few entry points are declared with NVML's documented
 * signatures and resolved with dlsym; every NVML status is checked. */
#include "nvml_sampler.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *nvml_device;
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

static struct {
    void *lib;
    nvml_device dev;
    int locked;
    int (*shutdown)(void);
    int (*clock)(nvml_device, int, unsigned *);
    int (*max_clock)(nvml_device, int, unsigned *);
    int (*power)(nvml_device, unsigned *);
    int (*temperature)(nvml_device, int, unsigned *);
    int (*lock)(nvml_device, unsigned, unsigned);
    int (*reset)(nvml_device);
    const char *(*error_string)(int);
} nv;

static const char *nvml_error(int rc)
{
    return nv.error_string ? nv.error_string(rc) : "NVML error";
}

int nvml_open(int dev, char *why, int why_len)
{
    memset(&nv, 0, sizeof nv);
    nv.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib) {
        snprintf(why, (size_t)why_len, "libnvidia-ml.so.1 not found");
        return -1;
    }
    int (*init)(void) = (int (*)(void))dlsym(nv.lib, "nvmlInit_v2");
    int (*by_pci)(const char *, nvml_device *) =
        (int (*)(const char *, nvml_device *))dlsym(nv.lib, "nvmlDeviceGetHandleByPciBusId_v2");
    nv.shutdown = (int (*)(void))dlsym(nv.lib, "nvmlShutdown");
    nv.clock = (int (*)(nvml_device, int, unsigned *))dlsym(nv.lib, "nvmlDeviceGetClockInfo");
    nv.max_clock = (int (*)(nvml_device, int, unsigned *))dlsym(nv.lib, "nvmlDeviceGetMaxClockInfo");
    nv.power = (int (*)(nvml_device, unsigned *))dlsym(nv.lib, "nvmlDeviceGetPowerUsage");
    nv.temperature = (int (*)(nvml_device, int, unsigned *))dlsym(nv.lib, "nvmlDeviceGetTemperature");
    nv.lock = (int (*)(nvml_device, unsigned, unsigned))dlsym(nv.lib, "nvmlDeviceSetGpuLockedClocks");
    nv.reset = (int (*)(nvml_device))dlsym(nv.lib, "nvmlDeviceResetGpuLockedClocks");
    nv.error_string = (const char *(*)(int))dlsym(nv.lib, "nvmlErrorString");
    char bus[32];
    int rc;
    if (!init || !by_pci || !nv.clock) {
        snprintf(why, (size_t)why_len, "libnvidia-ml.so.1 lacks nvmlInit_v2 or the clock queries");
    } else if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) {
        snprintf(why, (size_t)why_len, "cudaDeviceGetPCIBusId failed");
    } else if ((rc = init()) != NVML_SUCCESS) {
        snprintf(why, (size_t)why_len, "nvmlInit: %s", nvml_error(rc));
    } else if ((rc = by_pci(bus, &nv.dev)) != NVML_SUCCESS) {
        snprintf(why, (size_t)why_len, "nvmlDeviceGetHandleByPciBusId(%s): %s", bus, nvml_error(rc));
        nv.shutdown();
    } else {
        return 0;
    }
    dlclose(nv.lib);
    memset(&nv, 0, sizeof nv);
    return -1;
}

nvml_reading nvml_read(void)
{
    nvml_reading r = {0};
    unsigned sm = 0, mem = 0, mw = 0, temp = 0;
    if (!nv.dev || nv.clock(nv.dev, NVML_CLOCK_SM, &sm) != NVML_SUCCESS ||
        nv.clock(nv.dev, NVML_CLOCK_MEM, &mem) != NVML_SUCCESS)
        return r;
    r.ok = 1;
    r.sm_mhz = (int)sm;
    r.mem_mhz = (int)mem;
    r.power_w = nv.power && nv.power(nv.dev, &mw) == NVML_SUCCESS ? mw / 1000.0 : -1;
    r.temp_c = nv.temperature && nv.temperature(nv.dev, NVML_TEMPERATURE_GPU, &temp) == NVML_SUCCESS ? (int)temp : -1;
    return r;
}

int nvml_lock_sm_clock(char *what, int what_len)
{
    unsigned max_sm = 0;
    int rc;
    if (!nv.dev) {
        snprintf(what, (size_t)what_len, "refused: NVML is not available");
        return -1;
    }
    if (!nv.lock || !nv.reset || !nv.max_clock) {
        snprintf(what, (size_t)what_len, "refused: this NVML has no nvmlDeviceSetGpuLockedClocks");
        return -1;
    }
    if ((rc = nv.max_clock(nv.dev, NVML_CLOCK_SM, &max_sm)) != NVML_SUCCESS) {
        snprintf(what, (size_t)what_len, "refused: nvmlDeviceGetMaxClockInfo: %s", nvml_error(rc));
        return -1;
    }
    if ((rc = nv.lock(nv.dev, max_sm, max_sm)) != NVML_SUCCESS) {
        snprintf(what, (size_t)what_len, "refused: nvmlDeviceSetGpuLockedClocks(%u MHz): %s", max_sm, nvml_error(rc));
        return -1;
    }
    nv.locked = 1;
    snprintf(what, (size_t)what_len, "locked the SM clock at %u MHz (nvmlDeviceSetGpuLockedClocks; reset after the run)",
             max_sm);
    return 0;
}

void nvml_close(void)
{
    if (!nv.lib)
        return;
    if (nv.locked) {
        int rc = nv.reset(nv.dev);
        if (rc != NVML_SUCCESS)
            fprintf(stderr, "attnprof: nvmlDeviceResetGpuLockedClocks: %s; reset the clocks with "
                            "`nvidia-smi -rgc`\n", nvml_error(rc));
    }
    if (nv.shutdown)
        nv.shutdown();
    dlclose(nv.lib);
    memset(&nv, 0, sizeof nv);
}
