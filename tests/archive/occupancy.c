/* Occupancy calculator against hand-worked examples on H100/H200 limits.
 * A value measured on the GPU with cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * is one more row of `cases` (use -1 / 0 for what was not measured). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "err.h"
#include "occupancy.h"

/* sm_90 (H100 SXM / H200): 132 SMs, 64K registers, 2048 threads, 32 blocks,
 * 228 KiB shared memory per SM, 227 KiB opt-in per block, 1 KiB reserved. */
static device_props hopper(void)
{
    device_props d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "NVIDIA H200");
    d.major = 9;
    d.minor = 0;
    d.sm_count = 132;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.regs_per_sm = 65536;
    d.regs_per_block = 65536;
    d.smem_per_sm = 228 * 1024;
    d.smem_per_block = 48 * 1024;
    d.smem_per_block_optin = 227 * 1024;
    d.smem_reserved_per_block = 1024;
    return d;
}

#define REGS OCC_LIMIT_REGISTERS
#define SMEM OCC_LIMIT_SHARED_MEM
#define WARPS OCC_LIMIT_WARPS
#define BLOCKS OCC_LIMIT_BLOCKS

typedef struct occ_case {
    const char *what;
    int threads, regs, static_smem, dynamic_smem;
    long long grid;
    int blocks_per_sm;    /* expected active blocks per SM */
    double theoretical;   /* expected %, < 0: not checked */
    unsigned limiters;    /* expected OCC_LIMIT_* bits, 0: not checked */
    double est_achieved;  /* expected Kineto-style %, < 0: not checked */
    int kineto_pct;       /* what Kineto would print, < 0: not checked */
} occ_case;

static const occ_case cases[] = {
    /* The series' example: 255 regs -> 8160 per warp -> 8192 allocated; a
     * sub-partition (16384 regs) holds 2 warps -> 8 warps/SM -> 2 blocks of 4
     * warps -> 8 of 64 warps = 12.5%. Grid of 4 waves: estimate = theoretical. */
    {"128 thr x 255 regs", 128, 255, 0, 0, 132 * 4, 2, 12.5, REGS, 12.5, 13},
    /* 134144 B dynamic + 1 KiB reserved = 135168 B -> 1 block in 228 KiB;
     * 168 regs -> 5376 per warp -> 3 warps per sub-partition -> 12 warps = one
     * 12-warp block: both resources stop at 1. Over 48 KiB, so Kineto's call
     * (default shared memory limit) gets 0 blocks and prints 0. */
    {"384 thr x 168 regs, 131 KiB smem", 384, 168, 0, 134144, 264, 1, 18.75, REGS | SMEM, 18.75, 0},
    /* Shared memory alone: 100 KiB + 1 KiB -> 103424 B -> 2 blocks (registers
     * would allow 16); 2 x 4 warps = 12.5%. */
    {"128 thr, 100 KiB smem", 128, 32, 0, 100 * 1024, 1000, 2, 12.5, SMEM, 12.5, 0},
    /* Static and dynamic shared memory add up: 16 KiB + 24 KiB + 1 KiB = 41 KiB
     * -> 5 blocks in 228 KiB; under 48 KiB, so Kineto agrees. */
    {"256 thr, 16+24 KiB smem", 256, 40, 16 * 1024, 24 * 1024, 132 * 5, 5, 62.5, SMEM, 62.5, 63},
    /* One-warp blocks with few registers: warps would allow 64, the 32-block
     * cap stops them -> 32 warps = 50%. */
    {"32 thr x 16 regs", 32, 16, 0, 0, 132 * 32, 32, 50.0, BLOCKS, 50.0, 50},
    /* Same kernel, grid of 66 blocks on 132 SMs: 0.5 blocks per SM on average
     * -> 0.5 x 32 / 2048 = 0.78%. */
    {"32 thr x 16 regs, half a wave", 32, 16, 0, 0, 66, 32, 50.0, BLOCKS, 0.78125, 1},
    /* Threads: 1024-thread blocks, 16 regs -> 2 blocks fill 2048 threads = 100%. */
    {"1024 thr x 16 regs", 1024, 16, 0, 0, 264, 2, 100.0, WARPS, 100.0, 100},
    /* The sub-partition split matters: 200 regs -> 6400 per warp; 65536/6400
     * would give 10 warps, but each sub-partition holds floor(16384/6400) = 2
     * -> 8 warps -> 4 blocks of 2 warps = 12.5%. */
    {"64 thr x 200 regs", 64, 200, 0, 0, 132 * 4, 4, 12.5, REGS, 12.5, 13},
    /* Partial warp: 96+1 threads occupy 4 warps; registers 64 -> 2048 per warp
     * -> 32 warps -> 8 blocks; estimate uses threads (97), like Kineto. */
    {"97 thr x 64 regs", 97, 64, 0, 0, 132 * 8, 8, 50.0, REGS, 8 * 97 * 100.0 / 2048, 38},
    /* No register count recorded (0): registers impose no limit. */
    {"256 thr, regs unknown", 256, 0, 0, 0, 132 * 8, 8, 100.0, WARPS, 100.0, 100},
};

Test(occupancy, hand_worked_cases)
{
    device_props dev = hopper();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const occ_case *c = &cases[i];
        occ_kernel k = {c->threads, c->regs, c->static_smem, c->dynamic_smem, c->grid};
        occupancy o;
        char err[128] = "";
        cr_assert_eq(occupancy_compute(&k, &dev, &o, err, sizeof err), 0, "%s: %s", c->what, err);
        cr_expect_eq(o.active_blocks, c->blocks_per_sm, "%s: %d blocks/SM, expected %d", c->what,
                     o.active_blocks, c->blocks_per_sm);
        cr_expect_eq(o.active_warps, o.active_blocks * ((c->threads + 31) / 32), "%s", c->what);
        if (c->theoretical >= 0)
            cr_expect(fabs(o.theoretical * 100 - c->theoretical) < 1e-9,
                      "%s: theoretical %.4f%%, expected %.4f%%", c->what, o.theoretical * 100,
                      c->theoretical);
        if (c->limiters) {
            char a[64], b[64];
            cr_expect_eq(o.limiters, c->limiters, "%s: limited by %s, expected %s", c->what,
                         occupancy_limiter_name(o.limiters, a, sizeof a),
                         occupancy_limiter_name(c->limiters, b, sizeof b));
        }
        if (c->est_achieved >= 0)
            cr_expect(fabs(o.est_achieved * 100 - c->est_achieved) < 1e-6,
                      "%s: estimate %.4f%%, expected %.4f%%", c->what, o.est_achieved * 100,
                      c->est_achieved);
        if (c->kineto_pct >= 0)
            cr_expect_eq(o.kineto_pct, c->kineto_pct, "%s: Kineto %d%%, expected %d%%", c->what,
                         o.kineto_pct, c->kineto_pct);
    }
}

Test(occupancy, allocation_sizes)
{
    device_props dev = hopper();
    occ_kernel k = {128, 255, 100, 1000, 1};
    occupancy o;
    cr_assert_eq(occupancy_compute(&k, &dev, &o, NULL, 0), 0);
    cr_expect_eq(o.regs_per_block, 4 * 8192);                /* 4 warps x 8192 */
    cr_expect_eq(o.smem_per_block, 17 * 128); /* 100 + 1000 + 1024 = 2124 -> 2176 */
    cr_expect_eq(o.max_warps, 64);
    cr_expect(fabs(o.grid_blocks_per_sm - 1.0 / 132) < 1e-12);
}

Test(occupancy, from_trace_record)
{
    device_props dev = hopper();
    gpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = GPU_KERNEL;
    op.grid[0] = 8; op.grid[1] = 16; op.grid[2] = 4;   /* 512 blocks */
    op.block[0] = 32; op.block[1] = 4; op.block[2] = 1; /* 128 threads */
    op.registers = 255;
    occupancy o;
    cr_assert_eq(occupancy_of_op(&op, &dev, &o, NULL, 0), 0);
    cr_expect_eq(o.active_blocks, 2);
    cr_expect(fabs(o.grid_blocks_per_sm - 512.0 / 132) < 1e-12);

    op.kind = GPU_MEMCPY;
    char err[64];
    cr_expect_eq(occupancy_of_op(&op, &dev, &o, err, sizeof err), EXIT_BAD_ARCHIVE);
}

Test(occupancy, impossible_inputs_are_errors)
{
    device_props dev = hopper();
    occupancy o;
    char err[128];
    /* 1024 threads x 72 regs = 73728 > 64K registers per block. */
    occ_kernel too_many_regs = {1024, 72, 0, 0, 1};
    cr_expect_eq(occupancy_compute(&too_many_regs, &dev, &o, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_expect(strstr(err, "registers") != NULL, "%s", err);
    /* 227 KiB + 1 B of shared memory: over the opt-in limit. */
    occ_kernel too_much_smem = {128, 32, 0, 227 * 1024 + 1, 1};
    cr_expect_eq(occupancy_compute(&too_much_smem, &dev, &o, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_expect(strstr(err, "shared memory") != NULL, "%s", err);
    occ_kernel no_threads = {0, 32, 0, 0, 1};
    cr_expect_eq(occupancy_compute(&no_threads, &dev, &o, err, sizeof err), EXIT_BAD_ARCHIVE);
    device_props unknown;
    memset(&unknown, 0, sizeof unknown);
    occ_kernel fine = {128, 32, 0, 0, 1};
    cr_expect_eq(occupancy_compute(&fine, &unknown, &o, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_expect(strstr(err, "device limits") != NULL, "%s", err);
}

Test(occupancy, limiter_names)
{
    char b[64];
    cr_expect_str_eq(occupancy_limiter_name(OCC_LIMIT_REGISTERS, b, sizeof b), "registers");
    cr_expect_str_eq(occupancy_limiter_name(OCC_LIMIT_REGISTERS | OCC_LIMIT_SHARED_MEM, b, sizeof b),
                     "registers + shared memory");
    cr_expect_str_eq(occupancy_limiter_name(OCC_LIMIT_BLOCKS, b, sizeof b), "blocks per SM");
    cr_expect_str_eq(occupancy_limiter_name(0, b, sizeof b), "");
}
