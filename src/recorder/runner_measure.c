/* The measurement of the recorded forwards: how they are measured (run.json's "measurement":
 * the stop rule or --iters N, NVML opened for the per-forward samples, --lock-clocks, the L2
 * flush of --l2 cold), the loop of one pass of a variant until the stop rule says (each forward
 * timed by CUDA events just outside its NVTX range, then an NVML sample), the clocks after each
 * variant, and at the end each forward's sample put onto its attn_fwd range. */
#include "runner_steps.h"

#include "cupti_tracing.h"
#include "err.h"
#include "median.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml_sampler.h"
#include "stop_rule.h"

/* A throttled forward: its SM clock below this fraction of the highest SM clock the run
 * recorded (nvbench's 75%). Recorded in run.json; the report applies it. */
#define THROTTLE_FRACTION 0.75

static void forward_log_add(forward_log *l, const struct forward_sample *fs)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        if (!(l->s = realloc(l->s, sizeof *l->s * (size_t)l->cap)))
            abort();
    }
    l->s[l->n++] = *fs;
}

/* How the forwards will be measured, into run.json's "measurement": NVML opened for the
 * per-forward samples, --lock-clocks tried (refused: one line, the run goes on), and under
 * --l2 cold the flush buffer (twice the L2) allocated and one flush timed. */
int step_measurement_begin(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    device_inputs *d = &c->d;
    run_info *info = c->info;
    char *err = c->err;
    size_t errlen = c->errlen;
    measurement_plan *m = &info->measurement;
    const stop_rule rule = STOP_RULE_DEFAULT;
    memset(m, 0, sizeof *m);
    m->recorded = 1;
    snprintf(m->iters_rule, sizeof m->iters_rule, "%s", cfg->c.iters ? "fixed" : "auto");
    m->noise_target = rule.noise_target;
    m->min_forwards = cfg->c.iters ? cfg->c.iters : rule.min_forwards;
    m->max_forwards = cfg->c.iters ? cfg->c.iters : rule.max_forwards;
    m->min_gpu_s = cfg->c.iters ? 0 : rule.min_gpu_s;
    m->time_cap_s = cfg->c.iters ? 0 : rule.time_cap_s;
    m->replicates = cfg->c.replicates;
    m->throttle_fraction = THROTTLE_FRACTION;
    m->lock_clocks_requested = cfg->c.lock_clocks;
    char why[200] = "";
    int nvml_ok = nvml_open(0, why, sizeof why) == 0;
    if (!nvml_ok && !cfg->c.quiet)
        fprintf(stderr, "attnprof: no per-forward clocks (NVML: %s); the run goes on\n", why);
    if (cfg->c.lock_clocks) {
        if (nvml_lock_sm_clock(m->lock_clocks, sizeof m->lock_clocks) != 0 && !cfg->c.quiet)
            fprintf(stderr, "attnprof: --lock-clocks %s; the run goes on with the clocks as they are\n",
                    m->lock_clocks);
    }
    snprintf(m->l2, sizeof m->l2, "%s", cfg->c.l2_cold ? "cold" : "warm");
    if (!cfg->c.l2_cold)
        return EXIT_OK;
    int l2 = info->device.l2_bytes > 0 ? info->device.l2_bytes : 64 << 20;
    d->flush_bytes = 2 * (size_t)l2;
    m->l2_flush_bytes = (int64_t)d->flush_bytes;
    cudaError_t ce = cudaMalloc(&d->flush, d->flush_bytes);
    if (ce != cudaSuccess) {
        d->flush = NULL;
        return err_set(err, errlen, EXIT_DEVICE_MEMORY, "--l2 cold: cannot allocate the %.0f MiB flush buffer: %s; "
                    "use --l2 warm or a smaller shape", d->flush_bytes / 1048576.0, cudaGetErrorString(ce));
    }
    double t[5];
    for (int i = 0; i < 5 && ce == cudaSuccess; i++) {
        float ms_f = 0;
        if ((ce = cudaEventRecord(d->fwd0, d->stream)) == cudaSuccess &&
            (ce = cudaMemsetAsync(d->flush, i, d->flush_bytes, d->stream)) == cudaSuccess &&
            (ce = cudaEventRecord(d->fwd1, d->stream)) == cudaSuccess &&
            (ce = cudaEventSynchronize(d->fwd1)) == cudaSuccess &&
            (ce = cudaEventElapsedTime(&ms_f, d->fwd0, d->fwd1)) == cudaSuccess)
            t[i] = ms_f * 1000.0;
    }
    if (ce != cudaSuccess)
        return err_set(err, errlen, EXIT_IO, "--l2 cold: the flush failed: %s", cudaGetErrorString(ce));
    m->flush_us = median_of(t, 5);
    return EXIT_OK;
}

/* The recorded forwards of one pass of a variant: --iters N of them, or (--iters auto) until
 * the stop rule says (stop_rule.h). Each is timed by CUDA events just outside its NVTX range,
 * preceded by the L2 flush under --l2 cold (outside the range too, so no variant counts it),
 * and followed by an NVML sample once it completed. Returns rc (ATTN_*). */
int recorded_forwards(const run_plan *cfg, int vi, int pass, device_inputs *d, void *state, variant_result *res,
                      measure_state *ms, attn_error *e, int rc)
{
    const attn_variant *var = cfg->variants[vi];
    const stop_rule rule = STOP_RULE_DEFAULT;
    forward_log *log = &ms->logs[vi];
    double t_pass = host_us(), noise = NAN;
    const char *why = NULL;
    double *x = NULL;
    int cap = cfg->c.iters ? cfg->c.iters : rule.max_forwards;
    if (!(x = malloc(sizeof *x * (size_t)cap)))
        abort();
    int n = 0;
    for (; rc == ATTN_OK && n < cap && !why; n++) {
        progress(cfg, vi, var->name, "forward", n + 1, cap); /* auto: out of at most max_forwards */
        cudaError_t ce = cudaSuccess;
        if (d->flush)
            ce = cudaMemsetAsync(d->flush, (pass * 131 + n) & 0xff, d->flush_bytes, d->stream);
        if (ce == cudaSuccess)
            ce = cudaEventRecord(d->fwd0, d->stream);
        int iteration = log->n;
        cupti_range_push("attn_fwd", iteration);
        rc = var->forward(state, d->q, d->k, d->v, d->out, d->stream, e);
        cupti_range_pop();
        if (ce == cudaSuccess)
            ce = cudaEventRecord(d->fwd1, d->stream);
        cudaError_t se = cudaStreamSynchronize(d->stream);
        float ms_f = 0;
        if (ce == cudaSuccess)
            ce = se != cudaSuccess ? se : cudaEventElapsedTime(&ms_f, d->fwd0, d->fwd1);
        if (rc == ATTN_OK && ce != cudaSuccess)
            rc = attn_fail(e, ATTN_FAILED, "forward %d: %s", iteration, cudaGetErrorString(ce));
        if (rc != ATTN_OK)
            break;
        double t0 = host_us();
        nvml_reading nr = nvml_read();
        if (ms->n_nvml == ms->cap_nvml) {
            ms->cap_nvml = ms->cap_nvml ? 2 * ms->cap_nvml : 256;
            if (!(ms->nvml_us = realloc(ms->nvml_us, sizeof *ms->nvml_us * (size_t)ms->cap_nvml)))
                abort();
        }
        ms->nvml_us[ms->n_nvml++] = host_us() - t0;
        /* 0: not sampled (no NVML, or it refused one reading); the reader takes 0 as that. */
        struct forward_sample fs = {.recorded = 1, .pass = pass, .event_us = ms_f * 1000.0,
                                    .sm_mhz = nr.ok ? nr.sm_mhz : 0, .mem_mhz = nr.ok ? nr.mem_mhz : 0,
                                    .power_w = nr.ok && nr.power_w >= 0 ? nr.power_w : 0,
                                    .temp_c = nr.ok && nr.temp_c >= 0 ? nr.temp_c : 0};
        forward_log_add(log, &fs);
        x[n] = fs.event_us;
        if (!cfg->c.iters)
            why = stop_rule_check(&rule, x, n + 1, (host_us() - t_pass) / 1e6, &noise);
    }
    /* The outcome over every pass so far: forwards, GPU time, the median's noise. */
    double gpu_s = 0;
    double *all = malloc(sizeof *all * (size_t)(log->n ? log->n : 1));
    if (!all)
        abort();
    for (int i = 0; i < log->n; i++)
        gpu_s += (all[i] = log->s[i].event_us) / 1e6;
    res->stop.forwards = log->n;
    res->stop.gpu_s = gpu_s;
    res->stop.noise = stop_rule_noise(all, log->n);
    snprintf(res->stop.reason, sizeof res->stop.reason, "%s",
             rc != ATTN_OK ? "failed" : cfg->c.iters ? "fixed" : why ? why : "max_forwards");
    free(all);
    free(x);
    return rc;
}

/* Clocks and power limit measured during the run (NVML, nvml_sampler.h): one sample after each
 * variant's recorded forwards (the GPU has just run them), min and max kept. */
void sample_clocks(run_env *env)
{
    nvml_reading r = nvml_read();
    if (!r.ok)
        return;
    if (env->clock_samples == 0 || r.sm_mhz < env->sm_clock_mhz_min)
        env->sm_clock_mhz_min = r.sm_mhz;
    if (r.sm_mhz > env->sm_clock_mhz_max)
        env->sm_clock_mhz_max = r.sm_mhz;
    if (env->clock_samples == 0 || r.mem_mhz < env->mem_clock_mhz_min)
        env->mem_clock_mhz_min = r.mem_mhz;
    if (r.mem_mhz > env->mem_clock_mhz_max)
        env->mem_clock_mhz_max = r.mem_mhz;
    env->clock_samples++;
    int limit_w = nvml_power_limit_w();
    if (limit_w >= 0)
        env->power_limit_w = limit_w;
}

/* After the last record (activity tracing stopped, every record in): each forward's sample onto its attn_fwd range (by variant and
 * iteration), the cost of an NVML sample, and run.json's iters: --iters N per pass, or under
 * --iters auto the most forwards any variant recorded (each has its own count, in its "stop"). */
int step_measurement_end(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    measure_state *ms = &c->ms;
    run_info *info = c->info;
    trace *t = c->t;
    snprintf(info->marker_source, sizeof info->marker_source, "%s", cupti_marker_source());
    cupti_stop();
    for (size_t i = 0; i < t->n_ranges; i++) {
        host_range *r = &t->ranges[i];
        if (!r->variant || !r->name || strcmp(r->name, "attn_fwd") || r->iteration < 0)
            continue;
        for (int v = 0; v < info->n_variants; v++) {
            forward_log *log = &ms->logs[v];
            if (strcmp(info->variants[v].name, r->variant))
                continue;
            if (r->iteration < log->n)
                r->sample = log->s[r->iteration];
        }
    }
    if (ms->n_nvml)
        info->measurement.nvml_sample_us = median_of(ms->nvml_us, ms->n_nvml);
    int most = 0;
    for (int v = 0; v < info->n_variants; v++)
        if (info->variants[v].stop.forwards > most)
            most = info->variants[v].stop.forwards;
    info->iters = cfg->c.iters ? cfg->c.iters : most; /* --iters N: per pass, as run.json reads it */
    for (int v = 0; v < RUN_MAX_VARIANTS; v++)
        free(ms->logs[v].s);
    free(ms->nvml_us);
    memset(ms, 0, sizeof *ms);
    return EXIT_OK;
}
