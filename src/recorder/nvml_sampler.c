/* NVML, the one place the recorder loads it (nvml_sampler.h): the driver's version, the
 * per-forward samples, the clocks after each variant and the clock lock. The toolkit ships
 * no nvml.h here, so the few entry points are declared with NVML's documented signatures
 * and resolved with dlsym; every NVML status is checked. */
#include "nvml_sampler.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *nvml_device;
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

/* The library and its entry points: loaded once per process (nvml_load), the one place
 * libnvidia-ml.so.1 is opened. */
static struct {
    int tried;
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*by_pci)(const char *, nvml_device *);
    int (*driver_version)(char *, unsigned);
    int (*clock)(nvml_device, int, unsigned *);
    int (*max_clock)(nvml_device, int, unsigned *);
    int (*power)(nvml_device, unsigned *);
    int (*power_limit)(nvml_device, unsigned *);
    int (*temperature)(nvml_device, int, unsigned *);
    int (*lock)(nvml_device, unsigned, unsigned);
    int (*reset)(nvml_device);
    const char *(*error_string)(int);
} lib;

/* The opened session of nvml_open: the device, and whether we locked its clock. */
static struct {
    nvml_device dev;
    int locked;
} nv;

static const char *nvml_error(int rc)
{
    return lib.error_string ? lib.error_string(rc) : "NVML error";
}

#define NVML_SYM(field, name) (*(void **)&lib.field = dlsym(lib.lib, name))

/* 0 when libnvidia-ml.so.1 is loaded (now or before), -1 when it is not there. */
static int nvml_load(void)
{
    if (lib.tried)
        return lib.lib ? 0 : -1;
    lib.tried = 1;
    if (!(lib.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)))
        return -1;
    NVML_SYM(init, "nvmlInit_v2");
    NVML_SYM(shutdown, "nvmlShutdown");
    NVML_SYM(by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    NVML_SYM(driver_version, "nvmlSystemGetDriverVersion");
    NVML_SYM(clock, "nvmlDeviceGetClockInfo");
    NVML_SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
    NVML_SYM(power, "nvmlDeviceGetPowerUsage");
    NVML_SYM(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    NVML_SYM(temperature, "nvmlDeviceGetTemperature");
    NVML_SYM(lock, "nvmlDeviceSetGpuLockedClocks");
    NVML_SYM(reset, "nvmlDeviceResetGpuLockedClocks");
    NVML_SYM(error_string, "nvmlErrorString");
    return 0;
}

int nvml_open(int dev, char *why, int why_len)
{
    memset(&nv, 0, sizeof nv);
    if (nvml_load() != 0) {
        snprintf(why, (size_t)why_len, "libnvidia-ml.so.1 not found");
        return -1;
    }
    char bus[32];
    int rc;
    if (!lib.init || !lib.by_pci || !lib.clock) {
        snprintf(why, (size_t)why_len, "libnvidia-ml.so.1 lacks nvmlInit_v2 or the clock queries");
    } else if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) {
        snprintf(why, (size_t)why_len, "cudaDeviceGetPCIBusId failed");
    } else if ((rc = lib.init()) != NVML_SUCCESS) {
        snprintf(why, (size_t)why_len, "nvmlInit: %s", nvml_error(rc));
    } else if ((rc = lib.by_pci(bus, &nv.dev)) != NVML_SUCCESS) {
        snprintf(why, (size_t)why_len, "nvmlDeviceGetHandleByPciBusId(%s): %s", bus, nvml_error(rc));
        if (lib.shutdown)
            lib.shutdown();
        nv.dev = NULL;
    } else {
        return 0;
    }
    return -1;
}

void nvml_driver_version(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    if (nvml_load() != 0 || !lib.init || !lib.driver_version || lib.init() != NVML_SUCCESS)
        return; /* nvmlInit counts: this one is undone below, an open session stays open */
    char buf[96];
    if (lib.driver_version(buf, sizeof buf) == NVML_SUCCESS)
        snprintf(out, n, "%s", buf);
    if (lib.shutdown)
        lib.shutdown();
}

int nvml_power_limit_w(void)
{
    unsigned mw = 0;
    if (!nv.dev || !lib.power_limit || lib.power_limit(nv.dev, &mw) != NVML_SUCCESS)
        return -1;
    return (int)(mw / 1000);
}

nvml_reading nvml_read(void)
{
    nvml_reading r = {0};
    unsigned sm = 0, mem = 0, mw = 0, temp = 0;
    if (!nv.dev || lib.clock(nv.dev, NVML_CLOCK_SM, &sm) != NVML_SUCCESS ||
        lib.clock(nv.dev, NVML_CLOCK_MEM, &mem) != NVML_SUCCESS)
        return r;
    r.ok = 1;
    r.sm_mhz = (int)sm;
    r.mem_mhz = (int)mem;
    r.power_w = lib.power && lib.power(nv.dev, &mw) == NVML_SUCCESS ? mw / 1000.0 : -1;
    r.temp_c = lib.temperature && lib.temperature(nv.dev, NVML_TEMPERATURE_GPU, &temp) == NVML_SUCCESS ? (int)temp : -1;
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
    if (!lib.lock || !lib.reset || !lib.max_clock) {
        snprintf(what, (size_t)what_len, "refused: this NVML has no nvmlDeviceSetGpuLockedClocks");
        return -1;
    }
    if ((rc = lib.max_clock(nv.dev, NVML_CLOCK_SM, &max_sm)) != NVML_SUCCESS) {
        snprintf(what, (size_t)what_len, "refused: nvmlDeviceGetMaxClockInfo: %s", nvml_error(rc));
        return -1;
    }
    if ((rc = lib.lock(nv.dev, max_sm, max_sm)) != NVML_SUCCESS) {
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
    if (!nv.dev)
        return;
    if (nv.locked) {
        int rc = lib.reset(nv.dev);
        if (rc != NVML_SUCCESS)
            fprintf(stderr, "attnprof: nvmlDeviceResetGpuLockedClocks: %s; reset the clocks with "
                            "`nvidia-smi -rgc`\n", nvml_error(rc));
    }
    if (lib.shutdown)
        lib.shutdown();
    memset(&nv, 0, sizeof nv);
}
