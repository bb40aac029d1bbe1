/* Range checks of trace numbers (bounds.h), so that an extreme number in an archive is an
 * error naming its field. The limits are CUDA's
 * (grid 2^31-1 × 65535 × 65535, 1024 threads per block, 255 registers per
 * thread) or far above any GPU's, and they keep every product and difference
 * the analysis, findings, occupancy and figures compute inside its type. */
#include "bounds.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>

int bounds_int_sat(int64_t v) { return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v; }

int bounds_sub_sat(int a, int b) { return bounds_int_sat((int64_t)a - (int64_t)b); }

const char *bounds_base_ns(int64_t base)
{
    return base < 0 || base > BOUNDS_MAX_NS ? "baseTimeNanoseconds: out of range (0 to 2^62)" : NULL;
}

/* µs → ns as int64 into *ns (0), or 1 when |us·1000| would not stay within the bound
 * (checked in double before the conversion: no float→int overflow). */
static int us_to_ns_out_of_range(double us, int64_t *ns)
{
    double x = round(us * 1000.0); /* as llround did: half away from zero */
    if (!isfinite(us) || !(fabs(x) <= (double)BOUNDS_MAX_NS))
        return 1;
    *ns = (int64_t)x;
    return 0;
}

const char *bounds_event_ns(int64_t base, double ts_us, double dur_us, int64_t *start, int64_t *end)
{
    int64_t ts, dur;
    if (us_to_ns_out_of_range(ts_us, &ts) || __builtin_add_overflow(base, ts, start) || *start > BOUNDS_MAX_NS ||
        *start < -BOUNDS_MAX_NS)
        return "ts: out of range (|baseTimeNanoseconds + ts·1000| must stay within 2^62 ns)";
    if (dur_us < 0 || us_to_ns_out_of_range(dur_us, &dur) || __builtin_add_overflow(*start, dur, end) ||
        *end > BOUNDS_MAX_NS)
        return "dur: out of range (0 to 2^62 ns after ts)";
    return NULL;
}

const char *bounds_op(const gpu_op *o)
{
    if (o->kind == GPU_KERNEL) {
        if (o->grid[0] < 0 || o->grid[1] < 0 || o->grid[2] < 0 || o->grid[1] > 65535 || o->grid[2] > 65535 ||
            o->grid[0] == INT_MAX)
            return "args.grid: out of range (0 to 2^31-2 × 0 to 65535 × 0 to 65535)";
        if (o->block[0] < 0 || o->block[1] < 0 || o->block[2] < 0 || o->block[0] > 1024 || o->block[1] > 1024 ||
            o->block[2] > 64 || o->block[0] * o->block[1] * o->block[2] > 1024)
            return "args.block: out of range (at most 1024 threads per block)";
        if (o->registers < 0 || o->registers > 255)
            return "args.registers per thread: out of range (0 to 255)";
        if (o->static_smem < 0 || o->static_smem > (1 << 24) || o->dynamic_smem < 0 || o->dynamic_smem > (1 << 24))
            return "args.shared memory: out of range (0 to 16 MiB per block, static and dynamic)";
    }
    if (o->bytes < 0 || o->bytes > ((int64_t)1 << 53))
        return "args.bytes: out of range (0 to 2^53)";
    return NULL;
}

const char *bounds_device(const device_props *d)
{
    static const struct {
        const char *what;
        size_t off;
        int max;
    } limits[] = {
#define LIMIT(field, key, max) {"deviceProperties[0]." key ": out of range (0 to " #max ")", offsetof(device_props, field), max}
        LIMIT(major, "computeMajor", 1000),
        LIMIT(minor, "computeMinor", 1000),
        LIMIT(sm_count, "numSms", 65536),
        LIMIT(warp_size, "warpSize", 1024),
        LIMIT(max_threads_per_block, "maxThreadsPerBlock", 65536),
        LIMIT(max_threads_per_sm, "maxThreadsPerMultiprocessor", 65536),
        LIMIT(max_blocks_per_sm, "maxBlocksPerMultiprocessor", 1024),
        LIMIT(regs_per_sm, "regsPerMultiprocessor", 16777216),
        LIMIT(regs_per_block, "regsPerBlock", 16777216),
        LIMIT(smem_per_sm, "sharedMemPerMultiprocessor", 16777216),
        LIMIT(smem_per_block, "sharedMemPerBlock", 16777216),
        LIMIT(smem_per_block_optin, "sharedMemPerBlockOptin", 16777216),
        LIMIT(smem_reserved_per_block, "reservedSharedMemPerBlock", 16777216),
        LIMIT(l2_bytes, "l2CacheSize", INT_MAX),
        LIMIT(clock_khz, "clockRate", INT_MAX),
        LIMIT(mem_clock_khz, "memoryClockRate", INT_MAX),
        LIMIT(mem_bus_width, "memoryBusWidth", 65536),
#undef LIMIT
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        int v = *(const int *)((const char *)d + limits[i].off);
        if (v < 0 || v > limits[i].max)
            return limits[i].what;
    }
    if (d->total_mem < 0)
        return "deviceProperties[0].totalGlobalMem: out of range (0 to 2^63-1)";
    return NULL;
}
