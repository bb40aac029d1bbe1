/* Sweep, figure 4: GPU operations per forward (kernels, memcpys, memsets)
 * against S: a step in a line is a library changing its plan with the shape,
 * e.g. cuBLAS adding a Memset. */
#include "fig.h"

#include "sweep.h"

#include <math.h>
#include <stdio.h>

static int sweep_kernels_draw(cairo_t *cr, const fig_job *job)
{
    const sweep_data *m = job->sweep;
    char sub[256];
    snprintf(sub, sizeof sub, "%s \xc2\xb7 kernels + memcpys + memsets launched inside one forward (median)",
             m->gpu_name);
    fig_sweep_spec spec = {.title = "GPU operations per forward vs sequence length", .subtitle = sub,
                           .axis = "GPU operations per forward", .metric = FIG_SWEEP_OPS, .log_y = 0,
                           .capacity = NAN};
    return fig_sweep_draw(cr, job, &spec);
}

int fig_sweep_kernels_prepare(fig_job *job, cairo_t *measure, const sweep_data *m)
{
    (void)measure;
    return fig_sweep_job(job, m, "sweep-kernels",
             "GPU operations (kernels, memcpys, memsets) per forward against S, per head dim D.",
                         sweep_kernels_draw);
}
