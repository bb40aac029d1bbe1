/* Sweep, figure 5 (sweeps with --q-seq below --seq): the decode curves users draw. Above,
 * the median CUDA time per decode step against the KV length; below, the K+V bytes read per
 * second at that time, with the copy ceiling the runs measured (DtoD, read + write) as a
 * dashed line where the archives hold it. One panel per decode family, one line per variant. */
#include "fig.h"

#include "sweep.h"

#include <math.h>
#include <stdio.h>

static int sweep_decode_draw(cairo_t *cr, const fig_job *job)
{
    const sweep_data *m = job->sweep;
    char sub[256], sub2[256], ceiling[96];
    snprintf(sub, sizeof sub, "%s \xc2\xb7 median CUDA time per decode step \xc2\xb7 log-log \xc2\xb7 x: the variant "
             "stops there", m->gpu_name);
    fig_sweep_spec time = {.title = "Decode: time per step vs KV length", .subtitle = sub,
                           .axis = "CUDA time per step", .x_axis = "KV length S", .metric = FIG_SWEEP_TIME,
                           .log_y = 1, .decode_only = 1, .capacity = NAN};
    int rc = fig_sweep_draw(cr, job, &time);
    if (rc)
        return rc;
    double gbps = isfinite(m->copy_tbps) ? m->copy_tbps * 1e3 : NAN;
    snprintf(sub2, sizeof sub2, "%s \xc2\xb7 K and V bytes (bf16, B\xc2\xb7Hkv\xc2\xb7S\xc2\xb7" "D each) over the "
             "median CUDA time \xc2\xb7 dashed: %s \xc2\xb7 log scale", m->gpu_name,
             isfinite(gbps) ? "the copy ceiling measured in the runs" : "no copy ceiling measured");
    snprintf(ceiling, sizeof ceiling, "copy ceiling %.0f GB/s (DtoD, read + write)", gbps);
    fig_sweep_spec bw = {.title = "Decode: K+V bandwidth vs KV length", .subtitle = sub2, .axis = "K+V GB/s",
                         .x_axis = "KV length S", .metric = FIG_SWEEP_KV_GBPS, .log_y = 1, .decode_only = 1,
                         .capacity = gbps, .capacity_label = ceiling};
    cairo_save(cr);
    cairo_translate(cr, 0, fig_sweep_height(m));
    rc = fig_sweep_draw(cr, job, &bw);
    cairo_restore(cr);
    return rc;
}

int fig_sweep_decode_prepare(fig_job *job, cairo_t *measure, const sweep_data *m)
{
    (void)measure;
    int rc = fig_sweep_job(job, m, "sweep-decode",
                           "Decode curves: CUDA time per step and K+V GB/s against the KV length, one line per "
                           "variant, with the copy ceiling measured in the runs (dashed).",
                           sweep_decode_draw);
    job->h = 2 * fig_sweep_height(m);
    return rc;
}
