/* Occupancy of a recorded kernel, computed from its launch record (block size,
 * registers, shared memory, grid) and the device limits stored in the trace,
 * so the report can show it without a GPU.
 *
 * Theoretical occupancy follows the CUDA occupancy calculator for sm_70 and
 * newer: registers are allocated per warp in units of 256 and per SM
 * sub-partition (4 per SM), shared memory per block in units of 128 bytes plus
 * the driver's reservation (1 KiB on sm_80/sm_90), warps and blocks per SM are
 * capped by the device.
 *
 * The "estimated achieved" occupancy is Kineto's "est. achieved occupancy %"
 * (libkineto DeviceProperties.cpp, kernelOccupancy): a grid smaller than one
 * wave cannot fill every SM, so the blocks per SM are min(grid blocks / SMs,
 * active blocks per SM), times threads per block over max threads per SM. */
#ifndef ATTNPROF_OCCUPANCY_H
#define ATTNPROF_OCCUPANCY_H

#include <stdint.h>

#include "trace.h"

/* Resources that cap the active blocks per SM; several can tie. */
enum {
    OCC_LIMIT_REGISTERS = 1,
    OCC_LIMIT_SHARED_MEM = 2,
    OCC_LIMIT_WARPS = 4,  /* threads/warps per SM */
    OCC_LIMIT_BLOCKS = 8, /* blocks per SM */
};

typedef struct occ_kernel {
    int threads_per_block;
    int registers_per_thread;
    int static_smem, dynamic_smem; /* bytes per block, as recorded */
    int64_t grid_blocks;           /* total blocks of the launch */
} occ_kernel;

typedef struct occupancy {
    int warps_per_block;
    int regs_per_block;        /* allocated (after granularity) */
    int smem_per_block;        /* allocated, including the driver's reservation */
    /* Blocks per SM each resource alone would allow (INT32_MAX: no limit). */
    int blocks_by_regs, blocks_by_smem, blocks_by_warps, blocks_by_blocks;
    int active_blocks;         /* per SM: the minimum of the four */
    int active_warps;          /* per SM */
    int max_warps;             /* per SM */
    double theoretical;        /* active_warps / max_warps, 0..1 */
    unsigned limiters;         /* OCC_LIMIT_* bits of the resources at the minimum */
    double grid_blocks_per_sm; /* grid blocks / SM count ("blocks per SM" in Kineto) */
    double est_achieved;       /* Kineto's formula with this calculator's active blocks, 0..1 */
    /* What Kineto itself writes as "est. achieved occupancy %": it calls the
     * occupancy calculator with the default per-block shared memory limit
     * (sharedMemPerBlock, 48 KiB, plus the reservation), so a kernel that opted
     * in to more shared memory counts as 0 active blocks and gets 0. */
    int kineto_pct;
    int kineto_smem_limited;   /* 1 when Kineto's default per-block shared memory limit (not the opted-in
                                * one) is what lowers its number: above it, Kineto reports 0% */
} occupancy;

/* EXIT_OK; or EXIT_BAD_ARCHIVE with a reason in `err` (when given) when the record or the
 * device limits cannot give an answer (no threads, device limits not recorded, a block that
 * does not fit one SM at all). */
int occupancy_compute(const occ_kernel *k, const device_props *dev, occupancy *out,
                      char *err, size_t errlen);
/* Same, from a kernel record of the trace (EXIT_BAD_ARCHIVE for memcpy/memset). */
int occupancy_of_op(const gpu_op *op, const device_props *dev, occupancy *out,
                    char *err, size_t errlen);
/* "registers", "shared memory", "warps per SM", "blocks per SM", or ties joined
 * by " + " (e.g. "registers + shared memory"); "" for no bits. */
const char *occupancy_limiter_name(unsigned limiters, char *buf, size_t n);

#endif
