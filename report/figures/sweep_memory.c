/* Sweep, figure 3: device memory each variant needs against S, with the GPU's
 * capacity as a dashed line. Hollow points are variants skipped for want of
 * memory, drawn at the bytes they would have needed: the memory wall. */
#include "fig.h"

#include "sweep.h"

#include <math.h>
#include <stdio.h>

static int sweep_memory_draw(cairo_t *cr, const fig_job *job)
{
    const sweep_data *m = job->sweep;
    char sub[256], cap[64];
    snprintf(sub, sizeof sub, "%s \xc2\xb7 inputs, output, mask and the variant's own buffers \xc2\xb7 hollow: skipped, "
             "needed this much \xc2\xb7 log scale", m->gpu_name);
    snprintf(cap, sizeof cap, "GPU memory %.1f GiB", floor(m->gpu_bytes / 1073741824.0 * 10) / 10);
    fig_sweep_spec spec = {.title = "Device memory vs sequence length", .subtitle = sub, .axis = "device memory",
                           .metric = FIG_SWEEP_MEMORY, .log_y = 1,
                           .capacity = m->gpu_bytes > 0 ? m->gpu_bytes : NAN, .capacity_label = cap};
    return fig_sweep_draw(cr, job, &spec);
}

int fig_sweep_memory_prepare(fig_job *job, cairo_t *measure, const sweep_data *m)
{
    (void)measure;
    return fig_sweep_job(job, m, "sweep-memory",
             "Device memory per variant against S with the GPU's capacity (dashed); archives older than the sweep "
             "do not record it.",
                         sweep_memory_draw);
}
