/* run --backward (runner_steps.h): after each variant's recorded forwards, inside its range,
 * its backward on a fixed random dO drawn from the seed: on pass 0 a check of dQ, dK and dV
 * against the FP64 reference (reference_bwd.h) on the sampled heads and rows, then warm-ups and
 * the recorded backwards, each in an NVTX "attn_bwd" range (iteration -1: the report's forwards
 * are the attn_fwd ranges alone) timed by CUDA events just outside it, under the forwards' stop
 * rule. A variant with no backward, or whose backward cannot take the shape, is reported as
 * skipped with the reason; a gradient above the tolerance fails the variant (exit 1). */
#include "runner_steps.h"

#include "cupti_tracing.h"
#include "err.h"
#include "median.h"
#include "reference.h"
#include "reference_bwd.h"
#include "stop_rule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ‖g − ref‖ / ‖ref‖ each gradient is held to. bf16 gradients: the unfused chains round the
 * S×S probabilities and dS to bf16 before the last GEMMs, which costs several times the
 * forward's error; 5e-2 still fails a wrong mask, scale or transpose (errors of order 1). */
#define BACKWARD_REL_TOL 5e-2
/* dO is drawn from the run's seed with this added, so it differs from q, k and v. */
#define BACKWARD_SEED_OFFSET 0x6261636bULL

int wants_backward(const run_ctx *c) { return c->cfg->c.options.backward; }

static int bwd_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static size_t head_offset(const attn_shape *s, int b, int h) { return ((size_t)b * s->heads + h) * s->seq * s->dim; }

/* The FP64 gradients of every sampled head. */
static int reference_gradients(run_ctx *c)
{
    const attn_shape *s = &c->cfg->c.shape;
    const size_t nq = q_elems(s), nkv = kv_elems(s), per = (size_t)c->rows.n * s->dim;
    backward_inputs *B = &c->bwd;
    for (int i = 0; i < c->n_heads; i++) {
        const size_t off = head_offset(s, c->heads[i].b, c->heads[i].h);
        for (int g = 0; g < 3; g++)
            if (!(B->ref[i][g] = malloc(sizeof(double) * (per ? per : 1))))
                abort();
        reference_bwd_job j = {.q = c->host + off, .k = c->host + nq + off, .v = c->host + nq + nkv + off,
                               .dout = B->host_dout + off, .seq = s->seq, .dim = s->dim, .causal = 1, /* run is causal */
                               .rows = c->rows.row,
                               .n_rows = c->rows.n, .dq = B->ref[i][0], .dk = B->ref[i][1], .dv = B->ref[i][2]};
        if (reference_backward_head(&j, bwd_cpus()) != 0)
            return err_set(c->err, c->errlen, EXIT_IO, "--backward: out of host memory for the FP64 gradients");
    }
    return EXIT_OK;
}

int step_backward_inputs(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    const attn_shape *s = &cfg->c.shape;
    backward_inputs *B = &c->bwd;
    c->info->backward = 1;
    c->ms.bwd = B;
    if (attn_shape_is_gqa(s) || attn_shape_is_decode(s))
        return EXIT_OK; /* no backward takes these shapes: each variant says so */
    const size_t n = q_elems(s);
    B->host_dout = malloc(n * 2);
    B->host_grad = malloc((size_t)s->seq * s->dim * 2);
    if (!B->host_dout || !B->host_grad)
        abort();
    rng r;
    rng_seed(&r, cfg->c.seed + BACKWARD_SEED_OFFSET);
    fill_normal_bf16_threads(B->host_dout, n, &r, bwd_cpus());
    for (int i = 0; i < cfg->n_variants; i++) {
        const attn_variant *v = cfg->variants[i];
        size_t w = v->backward && v->bwd_workspace_bytes ? v->bwd_workspace_bytes(s) : 0;
        if (w > B->workspace_bytes)
            B->workspace_bytes = w;
    }
    void **bufs[4] = {&B->dout, &B->dq, &B->dk, &B->dv};
    for (int i = 0; i < 4; i++) {
        cudaError_t e = cudaMalloc(bufs[i], n * 2);
        if (e != cudaSuccess)
            return err_set(c->err, c->errlen, EXIT_DEVICE_MEMORY, "--backward: cannot allocate dO and the gradients "
                           "(%.0f MiB each): %s; use a smaller --batch/--seq", n * 2 / 1048576.0, cudaGetErrorString(e));
    }
    cudaError_t e = B->workspace_bytes ? cudaMalloc(&B->workspace, B->workspace_bytes) : cudaSuccess;
    if (e == cudaSuccess)
        e = cudaMemcpy(B->dout, B->host_dout, n * 2, cudaMemcpyHostToDevice);
    if (e != cudaSuccess)
        return err_set(c->err, c->errlen, EXIT_DEVICE_MEMORY, "--backward: workspace of %.0f MiB or upload: %s; use a "
                       "smaller --batch/--seq", B->workspace_bytes / 1048576.0, cudaGetErrorString(e));
    double t0 = host_us();
    int rc = reference_gradients(c);
    step_line(cfg, "backward: FP64 dQ, dK, dV of %d heads x %d rows in %.1f s", c->n_heads, c->rows.n,
              (host_us() - t0) / 1e6);
    return rc;
}

/* Σ (got − ref)² and Σ ref² over the chosen rows of one head (got: the whole [S, D] head). */
static void add_sq(const uint16_t *got, int D, const checked_rows *rows, const double *ref, double *num, double *den)
{
    for (int r = 0; r < rows->n; r++)
        for (int d = 0; d < D; d++) {
            const double x = bf16_to_float(got[(size_t)rows->row[r] * D + d]), y = ref[(size_t)r * D + d];
            *num += (x - y) * (x - y);
            *den += y * y;
        }
}

/* One backward after the poisoned gradients, read back on the sampled heads: the three errors. */
static int check_gradients(const run_plan *cfg, const attn_variant *var, void *state, device_inputs *d,
                           backward_inputs *B, const sampled_head *heads, int n_heads, const checked_rows *rows,
                           backward_result *br, attn_error *e)
{
    const attn_shape *s = &cfg->c.shape;
    const size_t n = q_elems(s), head = (size_t)s->seq * s->dim;
    void *grad[3] = {B->dq, B->dk, B->dv};
    for (int g = 0; g < 3; g++) /* 0xffff is a bf16 NaN: an element left unwritten fails the check */
        if (cudaMemsetAsync(grad[g], 0xff, n * 2, d->stream) != cudaSuccess)
            return attn_fail(e, ATTN_FAILED, "backward check: memset: %s", cudaGetErrorString(cudaGetLastError()));
    int rc = var->backward(state, d->q, d->k, d->v, d->out, B->dout, B->dq, B->dk, B->dv, B->workspace, d->stream, e);
    if (rc != ATTN_OK)
        return rc;
    if (cudaStreamSynchronize(d->stream) != cudaSuccess)
        return attn_fail(e, ATTN_FAILED, "backward: %s", cudaGetErrorString(cudaGetLastError()));
    double num[3] = {0}, den[3] = {0};
    for (int i = 0; i < n_heads; i++)
        for (int g = 0; g < 3; g++) {
            const size_t off = head_offset(s, heads[i].b, heads[i].h);
            if (cudaMemcpy(B->host_grad, (uint16_t *)grad[g] + off, head * 2, cudaMemcpyDeviceToHost) != cudaSuccess)
                return attn_fail(e, ATTN_FAILED, "backward check: copy: %s", cudaGetErrorString(cudaGetLastError()));
            add_sq(B->host_grad, s->dim, rows, B->ref[i][g], &num[g], &den[g]);
        }
    double *out[3] = {&br->rel_error_dq, &br->rel_error_dk, &br->rel_error_dv};
    for (int g = 0; g < 3; g++)
        *out[g] = den[g] > 0 ? sqrt(num[g] / den[g]) : NAN;
    return ATTN_OK;
}

/* The recorded backwards of one pass: the forwards' stop rule, each in an attn_bwd range. */
static int recorded_backwards(const run_plan *cfg, int vi, int pass, const attn_variant *var, void *state,
                              device_inputs *d, backward_inputs *B, backward_result *br, attn_error *e)
{
    const stop_rule rule = STOP_RULE_DEFAULT;
    forward_log *log = &B->logs[vi];
    const int cap = cfg->c.iters ? cfg->c.iters : rule.max_forwards;
    double *x = malloc(sizeof *x * (size_t)cap), t_pass = host_us(), noise = NAN;
    if (!x)
        abort();
    const char *why = NULL;
    int rc = ATTN_OK, n = 0;
    for (; rc == ATTN_OK && n < cap && !why; n++) {
        progress(cfg, vi, var->name, "backward", n + 1, cap);
        cudaError_t ce = cudaEventRecord(d->fwd0, d->stream);
        cupti_range_push("attn_bwd", -1);
        rc = var->backward(state, d->q, d->k, d->v, d->out, B->dout, B->dq, B->dk, B->dv, B->workspace, d->stream, e);
        cupti_range_pop();
        if (ce == cudaSuccess)
            ce = cudaEventRecord(d->fwd1, d->stream);
        cudaError_t se = cudaStreamSynchronize(d->stream);
        float ms_f = 0;
        if (ce == cudaSuccess)
            ce = se != cudaSuccess ? se : cudaEventElapsedTime(&ms_f, d->fwd0, d->fwd1);
        if (rc == ATTN_OK && ce != cudaSuccess)
            rc = attn_fail(e, ATTN_FAILED, "backward %d: %s", log->n, cudaGetErrorString(ce));
        if (rc != ATTN_OK)
            break;
        struct forward_sample fs = {.recorded = 1, .pass = pass, .event_us = ms_f * 1000.0};
        if (log->n == log->cap) {
            log->cap = log->cap ? 2 * log->cap : 64;
            if (!(log->s = realloc(log->s, sizeof *log->s * (size_t)log->cap)))
                abort();
        }
        log->s[log->n++] = fs;
        x[n] = fs.event_us;
        if (!cfg->c.iters)
            why = stop_rule_check(&rule, x, n + 1, (host_us() - t_pass) / 1e6, &noise);
    }
    double *all = malloc(sizeof *all * (size_t)(log->n ? log->n : 1)), gpu_s = 0;
    if (!all)
        abort();
    for (int i = 0; i < log->n; i++)
        gpu_s += (all[i] = log->s[i].event_us) / 1e6;
    br->event_us = log->n ? median_of(all, log->n) : NAN;
    br->stop.forwards = log->n;
    br->stop.gpu_s = gpu_s;
    br->stop.noise = stop_rule_noise(all, log->n);
    snprintf(br->stop.reason, sizeof br->stop.reason, "%s",
             rc != ATTN_OK ? "failed" : cfg->c.iters ? "fixed" : why ? why : "max_forwards");
    free(all);
    free(x);
    return rc;
}

/* Why the variant's backward does not run at this shape ("" when it does). */
static void backward_skip_reason(const attn_variant *var, const attn_shape *s, int fwd_rc, char *why, size_t n)
{
    attn_error e = {{0}};
    why[0] = '\0';
    if (fwd_rc != ATTN_OK)
        snprintf(why, n, "the forward did not complete");
    else if (!var->backward)
        snprintf(why, n, "%s", var->bwd_missing ? var->bwd_missing : "no backward implemented for this variant");
    else if (var->bwd_check_shape && var->bwd_check_shape(s, &e) != 0)
        snprintf(why, n, "%s", e.msg);
}

int backward_phase(const run_plan *cfg, int vi, int pass, device_inputs *d, void *state, const sampled_head *heads,
                   int n_heads, const checked_rows *rows, variant_result *res, measure_state *ms, int fwd_rc)
{
    backward_inputs *B = ms->bwd;
    const attn_variant *var = cfg->variants[vi];
    backward_result *br = &res->bwd;
    if (!B)
        return VARIANT_OK;
    attn_error e = {{0}};
    int rc = ATTN_OK;
    if (pass == 0) {
        const attn_shape *s = &cfg->c.shape;
        br->recorded = 1;
        br->expected_ops = var->backward ? var->expected_bwd_ops : -1;
        br->event_us = br->rel_error_dq = br->rel_error_dk = br->rel_error_dv = NAN;
        br->tolerance = BACKWARD_REL_TOL;
        br->kept_bytes = var->bwd_kept_bytes ? var->bwd_kept_bytes(s) : NAN;
        snprintf(br->kept, sizeof br->kept, "%s", var->bwd_kept ? var->bwd_kept : "");
        backward_skip_reason(var, s, fwd_rc, br->error, sizeof br->error);
        if (br->error[0] || !B->dout) {
            if (!br->error[0])
                snprintf(br->error, sizeof br->error, "no backward takes grouped-query or decode shapes");
            br->status = VARIANT_SKIPPED;
            return VARIANT_OK;
        }
        progress(cfg, vi, var->name, "backward check", 1, 1);
        rc = check_gradients(cfg, var, state, d, B, heads, n_heads, rows, br, &e);
        if (rc == ATTN_UNAVAILABLE) { /* the library has no backward for this shape here: skipped, with why */
            snprintf(br->error, sizeof br->error, "%s", e.msg);
            br->status = VARIANT_SKIPPED;
            return VARIANT_OK;
        }
        for (int i = 0; rc == ATTN_OK && i < cfg->c.warmup; i++)
            rc = var->backward(state, d->q, d->k, d->v, d->out, B->dout, B->dq, B->dk, B->dv, B->workspace, d->stream,
                               &e);
        if (rc == ATTN_OK && cudaStreamSynchronize(d->stream) != cudaSuccess)
            rc = attn_fail(&e, ATTN_FAILED, "backward warm-up: %s", cudaGetErrorString(cudaGetLastError()));
    } else if (!br->recorded || br->status != VARIANT_OK) {
        return br->recorded && br->status == VARIANT_FAILED ? VARIANT_FAILED : VARIANT_OK;
    }
    if (rc == ATTN_OK)
        rc = recorded_backwards(cfg, vi, pass, var, state, d, B, br, &e);
    cudaGetLastError();
    const double worst = fmax(fmax(br->rel_error_dq, br->rel_error_dk), br->rel_error_dv);
    if (rc != ATTN_OK) {
        br->status = VARIANT_FAILED;
        snprintf(br->error, sizeof br->error, "%s", e.msg);
    } else if (!(br->rel_error_dq <= br->tolerance && br->rel_error_dk <= br->tolerance &&
                 br->rel_error_dv <= br->tolerance)) {
        br->status = VARIANT_FAILED;
        snprintf(br->error, sizeof br->error, "gradient error vs FP64 (dQ %.3g, dK %.3g, dV %.3g; worst %.3g) exceeds %.3g",
                 br->rel_error_dq, br->rel_error_dk, br->rel_error_dv, worst, br->tolerance);
    } else {
        br->status = VARIANT_OK;
    }
    if (br->status == VARIANT_FAILED && !cfg->c.quiet)
        fprintf(stderr, "attnprof: variant %s backward FAILED: %s\n", var->name, br->error);
    return br->status == VARIANT_FAILED ? VARIANT_FAILED : VARIANT_OK;
}

int step_backward_end(run_ctx *c)
{
    backward_inputs *B = &c->bwd;
    cudaFree(B->dout);
    cudaFree(B->dq);
    cudaFree(B->dk);
    cudaFree(B->dv);
    cudaFree(B->workspace);
    free(B->host_dout);
    free(B->host_grad);
    for (int i = 0; i < RUN_MAX_SAMPLED_HEADS; i++)
        for (int g = 0; g < 3; g++)
            free(B->ref[i][g]);
    for (int v = 0; v < RUN_MAX_VARIANTS; v++)
        free(B->logs[v].s);
    memset(B, 0, sizeof *B);
    c->ms.bwd = NULL;
    return EXIT_OK;
}
