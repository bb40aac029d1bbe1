/* Sweep, figure 1: CUDA time per forward against S, log-log, one panel per head
 * dim D and one line per variant; a curve that ends early says why. */
#include "fig.h"

#include "sweep.h"

#include <math.h>
#include <stdio.h>

static int sweep_time_draw(cairo_t *cr, const fig_job *job)
{
    const sweep_data *m = job->sweep;
    char sub[256];
    snprintf(sub, sizeof sub, "%s \xc2\xb7 median CUDA time per forward \xc2\xb7 log-log \xc2\xb7 x: the variant stops there",
             m->gpu_name);
    fig_sweep_spec spec = {.title = "Time per forward vs sequence length", .subtitle = sub,
                           .axis = "CUDA time per forward", .metric = FIG_SWEEP_TIME, .log_y = 1, .capacity = NAN};
    return fig_sweep_draw(cr, job, &spec);
}

int fig_sweep_time_prepare(fig_job *job, cairo_t *measure, const sweep_data *m)
{
    (void)measure;
    return fig_sweep_job(job, m, "sweep-time",
             "CUDA time per forward against sequence length S (log-log), one panel per head dim D.",
                         sweep_time_draw);
}
