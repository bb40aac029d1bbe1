/* The occupancy calculator against the CUDA occupancy API on the H200: run.json's
 * "occupancy_api" holds cudaOccupancyMaxActiveBlocksPerMultiprocessor for each of
 * our kernels with the launch configuration CUPTI recorded. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "run_json.h"
#include "counters_json.h"
#include "occupancy.h"
#include "run_info.h"
#include "trace.h"

#define FIXTURE_6VAR "tests/fixtures/h200-6var"

Test(occupancy_h200, calculator_matches_the_cuda_api_for_our_kernels)
{
    trace t;
    static run_info r;
    char err[512];
    cr_assert_eq(trace_read_json(&t, FIXTURE_6VAR "/trace.json", err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_info_read_json(&r, FIXTURE_6VAR "/run.json", err, sizeof err), 0, "%s", err);
    cr_assert_geq(r.n_probes, 10, "probes recorded for our kernels");
    int fused = 0;
    for (int i = 0; i < r.n_probes; i++) {
        const occupancy_probe *p = &r.probes[i];
        occ_kernel k = {.threads_per_block = p->threads,
                        .registers_per_thread = p->registers,
                        .static_smem = p->static_smem,
                        .dynamic_smem = p->dynamic_smem,
                        .grid_blocks = 1000000};
        occupancy o;
        cr_assert_eq(occupancy_compute(&k, &t.device, &o, err, sizeof err), 0, "%s: %s", p->kernel, err);
        cr_assert_eq(o.active_blocks, p->blocks_per_sm, "%s (%d threads, %d regs, %d+%d B smem): ours %d, CUDA %d",
                     p->kernel, p->threads, p->registers, p->static_smem, p->dynamic_smem, o.active_blocks,
                     p->blocks_per_sm);
        fused += strstr(p->kernel, "flash") || strstr(p->kernel, "efficient");
    }
    cr_assert_geq(fused, 2, "the fused kernels are among them");
    trace_free(&t);
}
