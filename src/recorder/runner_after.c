/* After the timed batch, with activity tracing off (neither perturbs the timings): the
 * ceilings (measured, or taken from an archive of this very GPU), then the counter pass
 * (counter_pass.h), where every variant that ran ok is set up again, warmed by one forward,
 * profiled for one forward (and one backward, with run --backward) and torn down. */
#include "runner_steps.h"

#include "calibrate.h"
#include "counter_pass.h"
#include "err.h"
#include "run_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --ceilings-from: the ceilings of an archive recorded on this GPU (same UUID) that measured
 * them, with the archive's directory name as their source. 0, or -1 with why not in why. */
static int ceilings_from_archive(const char *path, run_info *info, char *why, size_t why_len)
{
    static run_info other;
    char err[512];
    if (run_info_read_json(&other, path, err, sizeof err) != 0)
        return snprintf(why, why_len, "%s", err), -1;
    if (!other.ceilings.measured)
        return snprintf(why, why_len, "%s measured no ceilings", path), -1;
    if (!other.gpu_uuid[0] || strcmp(other.gpu_uuid, info->gpu_uuid))
        return snprintf(why, why_len, "%s was recorded on GPU %s, this is %s", path,
                        other.gpu_uuid[0] ? other.gpu_uuid : "(no UUID recorded)", info->gpu_uuid), -1;
    info->ceilings = other.ceilings;
    /* The archive's directory: "DIR/shapes/2x16x16384x128/run.json" -> "2x16x16384x128". */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    ceilings_set_source(&info->ceilings, strrchr(dir, '/') ? strrchr(dir, '/') + 1 : slash ? dir : ".");
    return 0;
}

typedef struct counted_forward {
    const attn_variant *var;
    void *state;
    device_inputs *d;
    attn_error e;
} counted_forward;

static int counted_forward_once(void *p)
{
    counted_forward *f = p;
    return f->var->forward(f->state, f->d->q, f->d->k, f->d->v, f->d->out, f->d->stream, &f->e) != ATTN_OK;
}

/* The backward of the last forward (run --backward), into the run's gradient buffers. */
typedef struct counted_backward {
    counted_forward *f;
    const backward_inputs *B;
} counted_backward;

static int counted_backward_once(void *p)
{
    counted_backward *b = p;
    const counted_forward *f = b->f;
    return f->var->backward(f->state, f->d->q, f->d->k, f->d->v, f->d->out, b->B->dout, b->B->dq, b->B->dk,
                            b->B->dv, b->B->workspace, f->d->stream, &b->f->e) != ATTN_OK;
}

/* CUPTI names its auto ranges by their index. The timed pass recorded which kernels
 * one call launches, in order (one stream): each kernel range (of `kind`: "kernel" for the
 * forward, "bwd_kernel" for the backward) takes the name of the kernel at its index in the
 * variant's first recorded range named `range` (attn_fwd, whose iterations count from 0, or
 * attn_bwd, at iteration -1). */
static void name_kernel_ranges(const trace *t, const char *variant, const char *kind, const char *range,
                               counters_set *cs, int from)
{
    const host_range *fwd = NULL;
    int backward = !strcmp(range, "attn_bwd");
    for (size_t i = 0; i < t->n_ranges && !fwd; i++)
        if ((backward || t->ranges[i].iteration >= 0) && t->ranges[i].variant &&
            !strcmp(t->ranges[i].variant, variant) && !strcmp(t->ranges[i].name, range))
            fwd = &t->ranges[i];
    if (!fwd)
        return;
    int n = 0;
    for (int j = from; j < cs->n; j++) {
        counter_range *r = &cs->r[j];
        if (strcmp(r->kind, kind) || strcmp(r->variant, variant))
            continue;
        n = 0;
        for (size_t i = 0; i < t->n_ops; i++) { /* ops are in start order */
            const gpu_op *o = &t->ops[i];
            const api_call *l = o->kind == GPU_KERNEL ? trace_launcher(t, o) : NULL;
            if (!l || l->start_ns < fwd->start_ns || l->start_ns > fwd->end_ns)
                continue;
            if (n++ == r->index) {
                snprintf(r->name, sizeof r->name, "%s", o->name);
                break;
            }
        }
    }
}

/* The counter pass (counter_pass.h): every variant that ran ok is set up again, warmed
 * by one forward, profiled for one forward (and, with run --backward where its backward ran ok,
 * for one backward of a fresh forward) and torn down. A refusal (no permission, a
 * profiling lock) is recorded in run.json and the batch goes on without counters. */
static void counter_batch(const run_plan *cfg, device_inputs *d, run_info *info, const trace *t,
                          const backward_inputs *B)
{
    counters_set *cs = &info->counters;
    double t0 = host_us();
    int failed = 0, skipped = 0;
    char first_error[300] = "";
    if (counter_pass_open(&cs->meta) != 0) {
        if (!cfg->c.quiet)
            fprintf(stderr, "\r\033[Kattnprof: no hardware counters (%s): %s\n",
                    counters_status_name(cs->meta.status), cs->meta.reason);
        return;
    }
    for (int i = 0; i < cfg->n_variants && i < info->n_variants; i++) {
        const attn_variant *var = cfg->variants[i];
        variant_result *res = &info->variants[i];
        if (res->status != VARIANT_OK || strcmp(res->name, var->name))
            continue;
        double max_bytes = (double)cfg->c.counters_max_gib * 1073741824.0;
        if (res->device_bytes > max_bytes) {
            attn_fact_add(&res->facts, "counters", NAN,
                          "counter pass skipped: the variant needs %.1f GiB of device memory here, above "
                          "--counters-max-gib %d (kernel replay saves and restores it on every pass)",
                          res->device_bytes / 1073741824.0, cfg->c.counters_max_gib);
            step_line(cfg, "counters of %s skipped: %.1f GiB of device memory > --counters-max-gib %d", var->name,
                      res->device_bytes / 1073741824.0, cfg->c.counters_max_gib);
            skipped++;
            continue;
        }
        progress(cfg, i, var->name, "counters", 1, 1);
        double tv = host_us();
        counted_forward f = {.var = var, .d = d};
        char err[256] = "";
        int prc = 0;
        int rc = var->setup(&f.state, &cfg->c.shape, &cfg->c.options, d->stream, &f.e);
        if (rc == ATTN_OK && counted_forward_once(&f) != 0)
            rc = ATTN_FAILED;
        cudaError_t ce = cudaStreamSynchronize(d->stream);
        if (rc != ATTN_OK || ce != cudaSuccess)
            snprintf(err, sizeof err, "setup or warm-up forward: %s", f.e.msg[0] ? f.e.msg : cudaGetErrorString(ce));
        int first_range = cs->n;
        if (!err[0] &&
            (prc = counter_pass_forward(var->name, counted_forward_once, &f, d->stream, cs, err, sizeof err)) == 0) {
            err[0] = '\0';
            name_kernel_ranges(t, var->name, "kernel", "attn_fwd", cs, first_range);
        }
        /* run --backward: the backward's kernels too, after the forward just counted (its state
         * is what the backward reads), where the timed backward ran ok */
        if (!err[0] && prc == 0 && B && var->backward && res->bwd.recorded && res->bwd.status == VARIANT_OK) {
            counted_forward_once(&f); /* the state of one forward, as the recorded backwards had */
            counted_backward b = {.f = &f, .B = B};
            int first_bwd = cs->n;
            char berr[256] = "";
            prc = counter_pass_call(var->name, "bwd_kernel", "backward", counted_backward_once, &b, d->stream, cs,
                                    berr, sizeof berr);
            if (prc == 0)
                name_kernel_ranges(t, var->name, "bwd_kernel", "attn_bwd", cs, first_bwd);
            else
                snprintf(err, sizeof err, "%s", berr); /* names the backward's range kinds */
        }
        if (prc == -2) { /* refused: say so once, for the whole pass */
            cs->meta.status = CTR_FORBIDDEN;
            cs->n = 0; /* none of a refused pass counts */
            snprintf(cs->meta.reason, sizeof cs->meta.reason, "%s", err);
            if (!cfg->c.quiet)
                fprintf(stderr, "\r\033[Kattnprof: no hardware counters (forbidden): %s\n", err);
        } else if (err[0]) {
            failed++;
            if (!first_error[0])
                snprintf(first_error, sizeof first_error, "%s: %s", var->name, err);
            attn_fact_add(&res->facts, "counters", NAN, "counter pass failed: %s", err);
            if (!cfg->c.quiet)
                fprintf(stderr, "\r\033[Kattnprof: counters of %s: %s\n", var->name, err);
        }
        if (var->teardown)
            var->teardown(f.state);
        cudaGetLastError();
        step_line(cfg, "counters of %s: %s in %.1f s (%.2f GiB of device memory)", var->name, err[0] ? "failed" : "ok",
                  (host_us() - tv) / 1e6, res->device_bytes / 1073741824.0);
        if (prc == -2)
            break;
    }
    counter_pass_close();
    if (cs->meta.status == CTR_OK && failed && !cs->n) { /* not one variant measured */
        cs->meta.status = CTR_FAILED;
        snprintf(cs->meta.reason, sizeof cs->meta.reason, "%s", first_error);
    }
    cs->meta.pass_seconds = (host_us() - t0) / 1e6;
}

/* The ceilings (GEMM bf16, SGEMM, DtoD copy): taken from --ceilings-from's archive when it was
 * recorded on this GPU, measured here otherwise. */
int step_ceilings(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    run_info *info = c->info;
    char why[700] = "";
    if (cfg->c.ceilings_from) {
        if (ceilings_from_archive(cfg->c.ceilings_from, info, why, sizeof why) == 0) {
            step_line(cfg, "ceilings from %s (same GPU): not measured again", info->ceilings.source);
            return EXIT_OK;
        }
        if (!cfg->c.quiet)
            fprintf(stderr, "attnprof: --ceilings-from: %s; measuring them here\n", why);
    }
    if (!cfg->c.quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[Kcalibrating ceilings (GEMM bf16, SGEMM, DtoD copy)");
    double t0 = host_us();
    calibrate_run(&info->ceilings);
    step_line(cfg, "ceilings calibrated in %.1f s", (host_us() - t0) / 1e6);
    return EXIT_OK;
}

/* The trace sorted (the counter pass names its kernel ranges from the sorted records), then,
 * under --counters, the counter pass. */
int step_counters(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    trace_sort(c->t);
    if (cfg->c.counters) {
        double t0 = host_us();
        counter_batch(cfg, &c->d, c->info, c->t, c->bwd.dout ? &c->bwd : NULL);
        step_line(cfg, "counter pass: %s in %.1f s", counters_status_name(c->info->counters.meta.status),
                  (host_us() - t0) / 1e6);
    }
    clear_live_line(cfg);
    return EXIT_OK;
}
