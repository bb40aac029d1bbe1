/* The occupancy calculator behind occupancy.h: a recorded kernel's theoretical occupancy
 * from its launch record and the device limits the trace holds, as CUDA's occupancy
 * calculator computes it, with the limit that bounds it; no GPU needed. */
#include "occupancy.h"

#include "err.h"

#include <stdio.h>
#include <string.h>

/* Allocation units of sm_70 .. sm_120 (CUDA occupancy calculator). */
enum {
    REG_ALLOC_UNIT = 256,   /* registers, per warp */
    SMEM_ALLOC_UNIT = 128,  /* bytes, per block */
    SUB_PARTITIONS = 4,     /* register file is split between 4 SM sub-partitions */
};

static int round_up(int64_t x, int64_t unit)
{
    return (int)(((x + unit - 1) / unit) * unit);
}

static int min_int(int a, int b) { return a < b ? a : b; }

/* Blocks per SM the register file allows, with the per-warp allocation and
 * the per-sub-partition split: a warp's registers live in one sub-partition,
 * so a sub-partition holds floor(regs/4 / regs per warp) warps. */
static int blocks_by_registers(const occ_kernel *k, const device_props *dev, int warps_per_block,
                               int *regs_per_block)
{
    int regs_per_warp = round_up((int64_t)k->registers_per_thread * dev->warp_size, REG_ALLOC_UNIT);
    *regs_per_block = regs_per_warp * warps_per_block;
    if (regs_per_warp == 0)
        return INT32_MAX;
    /* The hardware checks a block's registers as if its warps were spread over
     * all sub-partitions, i.e. warps rounded up to a multiple of 4. */
    int64_t regs_checked = (int64_t)regs_per_warp * round_up(warps_per_block, SUB_PARTITIONS);
    if (dev->regs_per_block > 0 && regs_checked > dev->regs_per_block)
        return 0;
    int warps_per_partition = (dev->regs_per_sm / SUB_PARTITIONS) / regs_per_warp;
    return warps_per_partition * SUB_PARTITIONS / warps_per_block;
}

/* Blocks per SM that shared memory allows when one block may use up to
 * `per_block_limit` bytes (the limit includes the driver's reservation). */
static int blocks_by_shared(int smem_alloc, int64_t per_block_limit, int smem_per_sm)
{
    if (smem_alloc > per_block_limit)
        return 0;
    if (smem_alloc == 0)
        return INT32_MAX;
    return smem_per_sm / smem_alloc;
}

int occupancy_compute(const occ_kernel *k, const device_props *dev, occupancy *out,
                      char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (k->threads_per_block <= 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "no threads per block in the record");
    if (dev->warp_size <= 0 || dev->max_threads_per_sm <= 0 || dev->max_blocks_per_sm <= 0 ||
        dev->regs_per_sm <= 0 || dev->smem_per_sm <= 0 || dev->sm_count <= 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "device limits not recorded in the trace");

    int warps_per_block = (k->threads_per_block + dev->warp_size - 1) / dev->warp_size;
    out->warps_per_block = warps_per_block;
    out->max_warps = dev->max_threads_per_sm / dev->warp_size;

    out->blocks_by_regs = blocks_by_registers(k, dev, warps_per_block, &out->regs_per_block);

    out->smem_per_block = round_up((int64_t)k->static_smem + k->dynamic_smem +
                                       dev->smem_reserved_per_block, SMEM_ALLOC_UNIT);
    int optin = dev->smem_per_block_optin > 0 ? dev->smem_per_block_optin : dev->smem_per_sm;
    out->blocks_by_smem = blocks_by_shared(out->smem_per_block,
                                           (int64_t)optin + dev->smem_reserved_per_block,
                                           dev->smem_per_sm);

    out->blocks_by_warps = out->max_warps / warps_per_block;
    out->blocks_by_blocks = dev->max_blocks_per_sm;

    int active = min_int(min_int(out->blocks_by_regs, out->blocks_by_smem),
                         min_int(out->blocks_by_warps, out->blocks_by_blocks));
    out->active_blocks = active;
    if (out->blocks_by_regs == active) out->limiters |= OCC_LIMIT_REGISTERS;
    if (out->blocks_by_smem == active) out->limiters |= OCC_LIMIT_SHARED_MEM;
    if (out->blocks_by_warps == active) out->limiters |= OCC_LIMIT_WARPS;
    if (out->blocks_by_blocks == active) out->limiters |= OCC_LIMIT_BLOCKS;
    if (active == 0) {
        /* The launch was recorded, so the block did fit: the device limits in
         * the trace do not match the kernel's GPU. */
        const char *what = out->blocks_by_regs == 0   ? "registers"
                           : out->blocks_by_smem == 0 ? "shared memory"
                                                      : "threads";
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "one block does not fit on an SM (%s) with the recorded limits",
                       what);
    }
    out->active_warps = active * warps_per_block;
    out->theoretical = (double)out->active_warps / out->max_warps;

    out->grid_blocks_per_sm = (double)k->grid_blocks / dev->sm_count;
    double resident = out->grid_blocks_per_sm < active ? out->grid_blocks_per_sm : active;
    out->est_achieved = resident * k->threads_per_block / dev->max_threads_per_sm;

    /* Kineto's own number: same formula, but its occupancy call leaves the
     * per-block shared memory limit at the default (not opted in). */
    int kineto_active = active;
    if (dev->smem_per_block > 0) {
        int by_default_limit = blocks_by_shared(
            out->smem_per_block, (int64_t)dev->smem_per_block + dev->smem_reserved_per_block,
            dev->smem_per_sm);
        kineto_active = min_int(kineto_active, by_default_limit);
        out->kineto_smem_limited = by_default_limit < active;
    }
    double kineto_resident =
        out->grid_blocks_per_sm < kineto_active ? out->grid_blocks_per_sm : kineto_active;
    /* Kineto computes in float and rounds with (int)(0.5 + occupancy * 100). */
    float kineto_occ = (float)kineto_resident * (float)k->threads_per_block /
                       (float)dev->max_threads_per_sm;
    double pct = 0.5 + kineto_occ * 100.0; /* clamped before the conversion */
    out->kineto_pct = !(pct > 0) ? 0 : pct > 1e6 ? 1000000 : (int)pct;
    return EXIT_OK;
}

int occupancy_of_op(const gpu_op *op, const device_props *dev, occupancy *out,
                    char *err, size_t errlen)
{
    if (op->kind != GPU_KERNEL) {
        memset(out, 0, sizeof *out);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "not a kernel");
    }
    occ_kernel k = {
        .threads_per_block = op->block[0] * op->block[1] * op->block[2],
        .registers_per_thread = op->registers,
        .static_smem = op->static_smem,
        .dynamic_smem = op->dynamic_smem,
        .grid_blocks = (int64_t)op->grid[0] * op->grid[1] * op->grid[2],
    };
    return occupancy_compute(&k, dev, out, err, errlen);
}

const char *occupancy_limiter_name(unsigned limiters, char *buf, size_t n)
{
    static const struct { unsigned bit; const char *name; } names[] = {
        {OCC_LIMIT_REGISTERS, "registers"},
        {OCC_LIMIT_SHARED_MEM, "shared memory"},
        {OCC_LIMIT_WARPS, "warps per SM"},
        {OCC_LIMIT_BLOCKS, "blocks per SM"},
    };
    if (!n)
        return buf;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(limiters & names[i].bit))
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? " + " : "", names[i].name);
        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
    }
    return buf;
}
