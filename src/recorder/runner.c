/* The recorder's batch behind runner.h: runner_plan resolves the command line against the
 * registry (exit codes for what the user can change), runner_record_batch walks the batch's steps
 * (run_steps below: the device, the memory check, the inputs and their FP64 reference, the
 * upload, the measurement, the variants, the ceilings, the counter pass), each in a file of its
 * own (runner_steps.h). One pass of one variant is run_variant here: setup, warm-up, the
 * correctness check, the recorded forwards under CUPTI, the overhead probe, the
 * fully-masked-rows check, teardown. Errors the user sees are EXIT_* codes with one line in
 * err; the variants' own ATTN_* codes stay inside. */
#include "runner_steps.h"

#include "cupti_tracing.h"
#include "err.h"
#include "gqa_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml_sampler.h"

/* The plan: --variants resolved against the registry (in series order), every variant's
 * shape check. */
int runner_plan(const run_config *cfg, run_plan *plan, char *err, size_t errlen)
{
    memset(plan, 0, sizeof *plan);
    plan->c = *cfg;
    plan->c.variant_list = NULL;
    if (plan->c.replicates < 1)
        plan->c.replicates = 1;
    int chosen[RUN_MAX_VARIANTS] = {0};
    if (!cfg->variant_list) {
        for (int i = 0; i < attn_registry_count && i < RUN_MAX_VARIANTS; i++)
            chosen[i] = 1;
    } else {
        char *names = strdup(cfg->variant_list);
        if (!names)
            return err_set(err, errlen, EXIT_IO, "out of memory");
        for (char *save, *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int found = 0;
            for (int i = 0; i < attn_registry_count && i < RUN_MAX_VARIANTS; i++)
                if (!strcmp(attn_registry[i]->name, tok))
                    chosen[i] = found = 1;
            if (!found) {
                snprintf(err, errlen, "--variants: unknown variant '%s'; `attnprof list` shows the variants", tok);
                free(names);
                return EXIT_USAGE;
            }
        }
        free(names);
    }
    for (int i = 0; i < attn_registry_count && i < RUN_MAX_VARIANTS; i++)
        if (chosen[i])
            plan->variants[plan->n_variants++] = attn_registry[i];
    if (!plan->n_variants)
        return err_set(err, errlen, EXIT_USAGE, "--variants: empty list; name at least one variant");
    /* Every named variant must take the shape; the message names the variant and what to
     * change. With the default list a misfit is skipped with the same reason. */
    plan->named = cfg->variant_list != NULL;
    const attn_shape *s = &cfg->shape;
    char why_shape[ATTN_ERR_LEN], shape[96];
    if (gqa_shape_check(s, why_shape, sizeof why_shape) != 0)
        return err_set(err, errlen, EXIT_USAGE, "%s", why_shape);
    shape_text(s, shape, sizeof shape);
    int runnable = 0;
    for (int i = 0; i < plan->n_variants; i++) {
        attn_error why = {{0}};
        if (plan->variants[i]->check_shape && plan->variants[i]->check_shape(s, &why) != 0) {
            if (!plan->named) {
                snprintf(plan->skip[i], sizeof plan->skip[i], "cannot take %s: %s", shape, why.msg);
                continue;
            }
            snprintf(err, errlen,
                     "variant %s cannot take %s: %s; change the shape or leave it out with --variants",
                     plan->variants[i]->name, shape, why.msg);
            return EXIT_USAGE;
        }
        runnable++;
    }
    if (!runnable)
        return err_set(err, errlen, EXIT_USAGE, "no variant can take %s; change the shape (see the variants' limits in "
                                             "`attnprof list`)", "this shape");
    return EXIT_OK;
}

/* A variant's result before it runs: its names and expectations, nothing measured yet. */
static void start_result(variant_result *res, const attn_variant *v, double device_bytes, const attn_shape *s,
                         const trace *t)
{
    snprintf(res->name, sizeof res->name, "%s", v->name);
    snprintf(res->title, sizeof res->title, "%s", v->title);
    snprintf(res->what_changed, sizeof res->what_changed, "%s", v->what_changed);
    res->expected_ops = v->expected_ops;
    res->expected_memcpy = v->expected_memcpy;
    if (v->expected_ops_for) /* grouped-query and decode shapes change what a forward launches */
        res->expected_ops = v->expected_ops_for(s, &res->expected_memcpy);
    res->rel_error = res->event_us_cupti = res->event_us_no_cupti = res->event_us_cupti_no_memset = NAN;
    res->host_us_cupti = res->host_us_no_cupti = NAN;
    res->device_bytes = device_bytes;
    if (v->predict)
        v->predict(s, t->device.major, t->device.minor, &res->prediction);
}

/* One pass of one variant: setup, warm-up, (pass 0) the correctness check, the recorded
 * forwards, the clocks, the records flushed, and (pass 0) the occupancy probe, the overhead
 * probe and the fully-masked-rows check; then teardown and the variant's status. */
static int run_variant(const run_plan *cfg, int vi, int pass, device_inputs *d, const sampled_head *heads,
                       int n_heads, const checked_rows *rows, variant_result *res, trace *t, run_info *info,
                       measure_state *ms)
{
    const attn_variant *var = cfg->variants[vi];
    attn_error e = {{0}};
    void *state = NULL;
    int rc;
    int64_t dropped = 0;
    char cerr[256];

    cupti_range_push(var->name, -1);
    double t0 = host_us();
    rc = var->setup(&state, &cfg->c.shape, &cfg->c.options, d->stream, &e);
    double setup_us = host_us() - t0;
    if (pass == 0)
        attn_fact_add(&res->facts, "setup_us", setup_us, "%.0f µs host time in setup", setup_us);
    for (int i = 0; rc == ATTN_OK && i < cfg->c.warmup; i++) {
        progress(cfg, vi, var->name, "warm-up", i + 1, cfg->c.warmup);
        rc = var->forward(state, d->q, d->k, d->v, d->out, d->stream, &e);
    }
    if (rc == ATTN_OK && cudaStreamSynchronize(d->stream) != cudaSuccess)
        rc = attn_fail(&e, ATTN_FAILED, "warm-up: %s", cudaGetErrorString(cudaGetLastError()));
    if (rc == ATTN_OK && pass == 0) { /* later passes run the very same code on the same inputs */
        res->rel_error = check_correctness(cfg, var, state, d, heads, n_heads, rows, &e, &rc);
        res->heads_checked = n_heads;
        res->rows_checked = rows->n;
    }
    rc = recorded_forwards(cfg, vi, pass, d, state, res, ms, &e, rc);
    const int bwd_status = backward_phase(cfg, vi, pass, d, state, heads, n_heads, rows, res, ms, rc);
    cupti_range_pop();
    sample_clocks(&info->env);
    size_t first_op = t->n_ops, first_range = t->n_ranges;
    if (cupti_flush(1, var->name, &dropped, cerr, sizeof cerr) != 0 && rc == ATTN_OK)
        rc = attn_fail(&e, ATTN_FAILED, "%s", cerr);
    if (pass == 0)
        probe_occupancy(t, first_op, info);

    if (rc == ATTN_OK && pass == 0) {
        progress(cfg, vi, var->name, "overhead probe", 1, 1);
        /* in the variant's recorded forwards, flushed above (the check's NaN fill is no forward's) */
        const int memsets = trace_memsets_in_forwards(t, first_op, first_range, var->name);
        rc = cupti_overhead_probe(var, state, d, res, memsets, &e);
        if (rc == ATTN_OK)
            fully_masked_rows_check(cfg, var, state, d, &res->facts);
        cupti_flush(0, var->name, NULL, cerr, sizeof cerr);
    }
    if (state && var->facts && pass == 0)
        var->facts(state, &res->facts);
    if (var->teardown)
        var->teardown(state);
    cudaGetLastError(); /* a failed variant's sticky launch error must not fail the next one */
    res->dropped_records += dropped;
    if (pass > 0) { /* it passed the check in pass 0: a later pass can only fail to run */
        if (rc != ATTN_OK) {
            res->status = VARIANT_FAILED;
            snprintf(res->error, sizeof res->error, "pass %d of %d: %s", pass + 1, cfg->c.replicates, e.msg);
            fprintf(stderr, "attnprof: variant %s failed: %s\n", var->name, res->error);
        }
        return bwd_status == VARIANT_FAILED ? VARIANT_FAILED : res->status;
    }

    if (rc == ATTN_UNAVAILABLE) {
        res->status = VARIANT_UNAVAILABLE;
    } else if (rc != ATTN_OK) {
        res->status = VARIANT_FAILED;
    } else if (!(res->rel_error <= cfg->c.rel_error_threshold)) {
        res->status = VARIANT_FAILED;
        snprintf(e.msg, sizeof e.msg, "relative error %.3g vs FP64 exceeds %.3g", res->rel_error,
                 cfg->c.rel_error_threshold);
    } else {
        res->status = VARIANT_OK;
    }
    snprintf(res->error, sizeof res->error, "%s", res->status == VARIANT_OK ? "" : e.msg);
    clear_live_line(cfg);
    if (!cfg->c.quiet && res->status != VARIANT_OK)
        fprintf(stderr, "attnprof: variant %s %s: %s\n", var->name, variant_status_name(res->status), res->error);
    return bwd_status == VARIANT_FAILED ? VARIANT_FAILED : res->status; /* a wrong gradient fails the batch too */
}

/* The variants, in series order; with --replicate K, K passes of them all. EXIT_OK, or
 * EXIT_VARIANT_FAILED when one failed (the batch goes on). */
static int step_variants(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    run_info *info = c->info;
    int rc = EXIT_OK;
    for (int i = 0; i < cfg->n_variants; i++) {
        variant_result *res = &info->variants[info->n_variants++];
        start_result(res, cfg->variants[i], c->need_bytes[i], &cfg->c.shape, c->t);
    }
    for (int pass = 0; pass < cfg->c.replicates; pass++)
        for (int i = 0; i < cfg->n_variants; i++) {
            variant_result *res = &info->variants[i];
            const attn_variant *v = cfg->variants[i];
            if (c->skip[i][0]) {
                if (pass == 0) {
                    res->status = VARIANT_SKIPPED;
                    snprintf(res->error, sizeof res->error, "%s", c->skip[i]);
                    if (!cfg->c.quiet)
                        fprintf(stderr, "attnprof: variant %s skipped: %s\n", v->name, res->error);
                }
                continue;
            }
            if (pass > 0 && res->status != VARIANT_OK)
                continue;
            double t0 = host_us();
            if (run_variant(cfg, i, pass, &c->d, c->heads, c->n_heads, &c->rows, res, c->t, info, &c->ms) ==
                VARIANT_FAILED)
                rc = EXIT_VARIANT_FAILED;
            double done_s = (host_us() - c->t_variants) / 1e6;
            int step = pass * cfg->n_variants + i + 1, steps = cfg->c.replicates * cfg->n_variants;
            char pass_text[32] = "";
            if (cfg->c.replicates > 1)
                snprintf(pass_text, sizeof pass_text, " (pass %d/%d)", pass + 1, cfg->c.replicates);
            step_line(cfg,
                      "[%d/%d] %s%s %s: %.1f µs per forward (CUDA events), rel. error %.2g; %d forwards (%s, "
                      "noise %.2g%%); %.1f s, about %.0f s left",
                      i + 1, cfg->n_variants, v->name, pass_text, variant_status_name(res->status),
                      res->event_us_no_cupti, res->rel_error, res->stop.forwards, res->stop.reason,
                      100 * res->stop.noise, (host_us() - t0) / 1e6, done_s / step * (steps - step));
        }
    return rc;
}

static int step_cupti_start(run_ctx *c)
{
    return cupti_start(c->t, c->err, c->errlen) != 0 ? EXIT_IO : EXIT_OK;
}

static int wants_calibration(const run_ctx *c) { return c->cfg->c.calibrate; }

/* A step of the batch: `applies` (NULL: always) says whether it runs for this plan; `run`
 * returns EXIT_OK, EXIT_VARIANT_FAILED (the batch goes on, and ends with that code) or another
 * EXIT_* code with err set (the batch stops). */
typedef struct run_step {
    const char *name;
    int (*applies)(const run_ctx *c);
    int (*run)(run_ctx *c);
} run_step;

/* The batch, in order. Memory first, so a too-large shape fails before anything runs; the
 * ceilings and the counter pass after the timed batch, with activity tracing off. */
static const run_step run_steps[] = {
    {"device", NULL, step_open_device},             /* runner_env.c */
    {"device memory", NULL, step_device_memory},    /* runner_inputs.c */
    {"inputs", NULL, step_draw_inputs},             /* runner_inputs.c: and their FP64 reference */
    {"upload", NULL, step_upload_inputs},           /* runner_inputs.c */
    {"backward inputs", wants_backward, step_backward_inputs}, /* runner_backward.c: dO, FP64 gradients */
    {"activity tracing", NULL, step_cupti_start},
    {"describe", NULL, step_describe_run},          /* runner_env.c */
    {"measurement", NULL, step_measurement_begin},  /* runner_measure.c */
    {"variants", NULL, step_variants},
    {"records", NULL, step_measurement_end},        /* runner_measure.c: CUPTI stopped, samples on ranges */
    {"ceilings", wants_calibration, step_ceilings}, /* runner_after.c */
    {"counters", NULL, step_counters},              /* runner_after.c: the backward's kernels too */
    {"backward end", wants_backward, step_backward_end}, /* runner_backward.c: its buffers freed */
};

int runner_record_batch(const run_plan *cfg, trace *t, run_info *info, char *err, size_t errlen)
{
    static run_ctx c; /* large (the skip reasons, the forward logs): not on the stack */
    memset(&c, 0, sizeof c);
    c.cfg = cfg;
    c.t = t;
    c.info = info;
    c.err = err;
    c.errlen = errlen;
    memcpy(c.skip, cfg->skip, sizeof c.skip); /* a copy: the memory check may skip more of the default list */
    int rc = EXIT_OK;
    size_t i = 0;
    for (; i < sizeof run_steps / sizeof run_steps[0]; i++) {
        const run_step *s = &run_steps[i];
        if (s->applies && !s->applies(&c))
            continue;
        int step_rc = s->run(&c);
        if (step_rc == EXIT_VARIANT_FAILED)
            rc = step_rc;
        else if (step_rc != EXIT_OK) {
            rc = step_rc;
            break;
        }
    }
    if (i > 0) { /* the device was opened: what the steps allocated */
        inputs_free(&c);
        nvml_close(); /* after the counter pass: a locked clock stays locked for it */
    }
    return rc;
}
