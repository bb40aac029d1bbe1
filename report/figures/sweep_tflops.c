/* Sweep, figure 2: throughput (TFLOP/s at the median time, causal FLOPs) against
 * S, one panel per head dim D, under the roof (dashed): the cuBLAS bf16 GEMM ceiling
 * the runs measured (--calibrate), else the GPU's dense BF16 tensor-core peak at the
 * recorded clock: how close each variant gets to the roof as S grows. */
#include "fig.h"

#include "sweep.h"

#include <math.h>
#include <stdio.h>

static int sweep_tflops_draw(cairo_t *cr, const fig_job *job)
{
    const sweep_data *m = job->sweep;
    char sub[256];
    snprintf(sub, sizeof sub, "%s \xc2\xb7 FLOPs: half of 4\xc2\xb7" "B\xc2\xb7H\xc2\xb7S\xc2\xb2\xc2\xb7" "D (causal) "
             "over the median CUDA time \xc2\xb7 log scale", m->gpu_name);
    char roof[128];
    snprintf(roof, sizeof roof, "%s %.0f TFLOP/s", m->roof_name, m->roof_tflops);
    fig_sweep_spec spec = {.title = "TFLOP/s vs sequence length", .subtitle = sub, .axis = "TFLOP/s",
                           .metric = FIG_SWEEP_TFLOPS, .log_y = 1,
                           .capacity = m->roof_tflops > 0 ? m->roof_tflops : NAN, .capacity_label = roof};
    return fig_sweep_draw(cr, job, &spec);
}

int fig_sweep_tflops_prepare(fig_job *job, cairo_t *measure, const sweep_data *m)
{
    (void)measure;
    return fig_sweep_job(job, m, "sweep-tflops",
             "Throughput in TFLOP/s (causal FLOPs over the median CUDA time per forward) against S, per head dim D.",
                         sweep_tflops_draw);
}
