/* The environment a batch records: CUDA device 0 opened with its properties, which GPU it is
 * (UUID, PCI bus id, CUDA_VISIBLE_DEVICES), the host (CPU, OS), how the recorder was built
 * (the Makefile passes the nvcc release and flags) and the libraries' versions. */
#include "runner_steps.h"

#include "err.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "nvml_sampler.h"
#include "families.h"
#include "flash_fwd_sm90a.h"

int runner_device_props(int dev, device_props *p, char *err, size_t errlen)
{
    struct cudaDeviceProp cp;
    cudaError_t rc = cudaGetDeviceProperties(&cp, dev);
    if (rc != cudaSuccess)
        return err_set(err, errlen, EXIT_IO, "cudaGetDeviceProperties: %s", cudaGetErrorString(rc));
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", cp.name);
    p->major = cp.major;
    p->minor = cp.minor;
    p->sm_count = cp.multiProcessorCount;
    p->total_mem = (int64_t)cp.totalGlobalMem;
    p->warp_size = cp.warpSize;
    p->max_threads_per_block = cp.maxThreadsPerBlock;
    p->max_threads_per_sm = cp.maxThreadsPerMultiProcessor;
    p->max_blocks_per_sm = cp.maxBlocksPerMultiProcessor;
    p->regs_per_sm = cp.regsPerMultiprocessor;
    p->regs_per_block = cp.regsPerBlock;
    p->smem_per_sm = (int)cp.sharedMemPerMultiprocessor;
    p->smem_per_block = (int)cp.sharedMemPerBlock;
    p->smem_per_block_optin = (int)cp.sharedMemPerBlockOptin;
    p->smem_reserved_per_block = (int)cp.reservedSharedMemPerBlock;
    p->l2_bytes = cp.l2CacheSize;
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev) == cudaSuccess)
        p->clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev) == cudaSuccess)
        p->mem_clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess)
        p->mem_bus_width = v;
    return EXIT_OK;
}

/* Which GPU this process ran on: CUDA's UUID in nvidia-smi's form, the PCI bus id,
 * and CUDA_VISIBLE_DEVICES as given (a sweep worker sets it to its GPU's index). */
static void gpu_identity(int dev, run_info *info)
{
    struct cudaDeviceProp cp;
    if (cudaGetDeviceProperties(&cp, dev) == cudaSuccess) {
        const unsigned char *u = (const unsigned char *)cp.uuid.bytes;
        snprintf(info->gpu_uuid, sizeof info->gpu_uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    }
    if (cudaDeviceGetPCIBusId(info->gpu_pci_bus_id, (int)sizeof info->gpu_pci_bus_id, dev) != cudaSuccess)
        info->gpu_pci_bus_id[0] = '\0';
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(info->visible_devices, sizeof info->visible_devices, "%s", vis ? vis : "");
}

#ifndef ATTNPROF_NVCC_VERSION
#define ATTNPROF_NVCC_VERSION ""
#endif
#ifndef ATTNPROF_BUILD_FLAGS
#define ATTNPROF_BUILD_FLAGS ""
#endif

/* The architectures the kernels were compiled for, as the objects themselves say:
 * __CUDA_ARCH_LIST__ of the kernel objects ("800,900" -> "sm_80,sm_90"), then sm_90a if the
 * Hopper object holds its kernels. A command-line CUDA_ARCH once left them out while the
 * Makefile's flag string still named sm_90a; what the objects report cannot say so. */
static void build_arches(char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    const char *p = kernel_arch_list();
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        if (v > 0 && len < n)
            len += (size_t)snprintf(out + len, n - len, "%ssm_%ld", len ? "," : "", v / 10);
        p = *end == ',' ? end + 1 : end;
    }
    if (flash_sm90a_built() && len < n)
        snprintf(out + len, n - len, "%ssm_90a", len ? "," : "");
}

/* Host CPU, OS, and how the recorder was built (Makefile: nvcc release, flags; the objects:
 * the architectures). */
static void host_and_build(run_env *env)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10))
            continue;
        const char *v = strchr(line, ':');
        if (v) {
            snprintf(env->host_cpu, sizeof env->host_cpu, "%s", v + 1 + (v[1] == ' '));
            env->host_cpu[strcspn(env->host_cpu, "\n")] = '\0';
        }
        break;
    }
    if (f)
        fclose(f);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    env->host_cpus = n > 0 ? (int)n : 0;
    char pretty[128] = "";
    f = fopen("/etc/os-release", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "PRETTY_NAME=", 12)) {
            const char *v = line + 12 + (line[12] == '"');
            snprintf(pretty, sizeof pretty, "%s", v);
            pretty[strcspn(pretty, "\"\n")] = '\0';
        }
    if (f)
        fclose(f);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(env->os, sizeof env->os, "%s%s%s %s", pretty, pretty[0] ? ", " : "", u.sysname, u.release);
    else
        snprintf(env->os, sizeof env->os, "%s", pretty);
    snprintf(env->nvcc, sizeof env->nvcc, "%s", ATTNPROF_NVCC_VERSION);
    snprintf(env->build_flags, sizeof env->build_flags, "%s", ATTNPROF_BUILD_FLAGS);
    build_arches(env->build_arches, sizeof env->build_arches);
}

static void iso_date(char *out, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The CUDA runtime and driver, cuBLAS, cuDNN and CUPTI versions, and the driver's own
 * version string (NVML). */
static void fill_versions(run_info *info, const trace *t)
{
    cudaRuntimeGetVersion(&info->cuda_runtime_version);
    cudaDriverGetVersion(&info->cuda_driver_version);
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
        info->cublas_version = major * 10000 + minor * 100 + patch;
    info->cudnn_version = (int)cudnnGetVersion();
    info->cupti_version = t->cupti_version;
    nvml_driver_version(info->driver_version, sizeof info->driver_version);
}

/* CUDA device 0, opened, with its properties and versions in the trace and run_info. */
int step_open_device(run_ctx *c)
{
    trace *t = c->t;
    run_info *info = c->info;
    char *err = c->err;
    size_t errlen = c->errlen;
    int n_dev = 0;
    cudaError_t ce = cudaGetDeviceCount(&n_dev);
    /* No driver at all: CUDA then says "driver version is insufficient", which reads as "update it". */
    if (ce != cudaSuccess && access("/proc/driver/nvidia", F_OK) != 0)
        return err_set(err, errlen, EXIT_NO_DEVICE, "no NVIDIA driver loaded (no /proc/driver/nvidia); `attnprof report "
                       "DIR` re-renders an archived run without one");
    if (ce != cudaSuccess || n_dev == 0)
        return err_set(err, errlen, EXIT_NO_DEVICE,
                    "no usable CUDA device or driver (%s); `attnprof report DIR` re-renders an archived run without one",
                    ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
    if ((ce = cudaSetDevice(0)) != cudaSuccess || (ce = cudaFree(0)) != cudaSuccess)
        return err_set(err, errlen, EXIT_NO_DEVICE, "cannot use CUDA device 0: %s", cudaGetErrorString(ce));
    int rc = runner_device_props(0, &t->device, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    info->device = t->device;
    gpu_identity(0, info);
    t->cuda_runtime_version = 0;
    cudaRuntimeGetVersion(&t->cuda_runtime_version);
    cudaDriverGetVersion(&t->cuda_driver_version);
    return EXIT_OK;
}

/* What run.json says of the whole run: the shape and the rules, the date, the versions, the
 * host and the build. */
int step_describe_run(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    run_info *info = c->info;
    const trace *t = c->t;
    info->shape = cfg->c.shape;
    info->seed = cfg->c.seed;
    info->iters = cfg->c.iters;
    info->warmup = cfg->c.warmup;
    info->causal = 1;
    info->rel_error_threshold = cfg->c.rel_error_threshold;
    snprintf(info->dtype, sizeof info->dtype, "bf16");
    iso_date(info->date, sizeof info->date);
    fill_versions(info, t);
    host_and_build(&info->env);
    return EXIT_OK;
}
