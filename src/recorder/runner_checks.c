/* The checks made of each variant once it is set up: its output against the FP64 reference
 * (the sampled heads' checked rows), what it writes in fully-masked rows (NaN or 0), CUPTI's
 * overhead on its forwards (samples with activity tracing off and on), and the occupancy API's
 * answer for each of our kernels it launched. */
#include "runner_steps.h"

#include "cupti_tracing.h"
#include "median.h"
#include "probe_hold.h"
#include "reference.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CUPTI overhead probe (cupti_overhead_probe) takes samples of a few forwards each,
 * alternately with activity tracing off and on. A sample is PROBE_SAMPLE_US of GPU time
 * at least (event resolution and launch gaps stay small against it), up to PROBE_MAX_BATCH
 * forwards; the probe takes PROBE_MAX_SAMPLES per state, fewer (never under
 * PROBE_MIN_SAMPLES) where that would cost more than PROBE_BUDGET_US of GPU time. Without
 * the budget the probe's 320 forwards were 95% of a run's time at 2x16x16384x128 (math:
 * 68 s of 194 ms forwards on the H200, bench/results/2026-12-02-default-sweep.md). */
#define PROBE_MAX_SAMPLES 20
#define PROBE_MIN_SAMPLES 5
#define PROBE_MAX_BATCH 8
#define PROBE_SAMPLE_US 2000.0
#define PROBE_BUDGET_US 1.0e6
#define PROBE_HOLD_MIN_US 50.0
#define PROBE_HOLD_MAX_US 20000.0

/* One forward into an output filled with NaN, then the worst relative error of the sampled
 * heads' checked rows against their FP64 reference. */
double check_correctness(const run_plan *cfg, const attn_variant *var, void *state, device_inputs *d,
                         const sampled_head *heads, int n_heads, const checked_rows *rows, attn_error *e,
                         int *rc)
{
    const attn_shape *s = &cfg->c.shape;
    size_t head = (size_t)attn_q_seq(s) * s->dim;
    /* 0xFF bytes are bf16 NaN: an element the variant fails to write cannot pass. */
    if (cudaMemsetAsync(d->out, 0xff, q_elems(s) * 2, d->stream) != cudaSuccess) {
        *rc = attn_fail(e, ATTN_FAILED, "cudaMemsetAsync(out): %s", cudaGetErrorString(cudaGetLastError()));
        return NAN;
    }
    if ((*rc = var->forward(state, d->q, d->k, d->v, d->out, d->stream, e)) != ATTN_OK)
        return NAN;
    cudaError_t ce = cudaStreamSynchronize(d->stream);
    if (ce != cudaSuccess) {
        *rc = attn_fail(e, ATTN_FAILED, "forward: %s", cudaGetErrorString(ce));
        return NAN;
    }
    double worst = 0;
    for (int i = 0; i < n_heads; i++) {
        size_t idx = (size_t)heads[i].b * s->heads + heads[i].h;
        ce = cudaMemcpy(d->host_out, (uint16_t *)d->out + idx * head, head * 2, cudaMemcpyDeviceToHost);
        if (ce != cudaSuccess) {
            *rc = attn_fail(e, ATTN_FAILED, "cudaMemcpy(out head): %s", cudaGetErrorString(ce));
            return NAN;
        }
        double err = relative_error_rows_bf16(d->host_out, s->dim, rows->row, rows->n, heads[i].ref);
        if (isnan(err) || err > worst)
            worst = err;
        if (isnan(err))
            break;
    }
    return worst;
}

/* One sample: `batch` forwards queued back to back between two CUDA events, behind a hold
 * kernel of hold_us (0: none) that keeps the GPU busy while the host queues the first event
 * and the forwards, so that the host's own cost (which CUPTI's API records raise) stays out
 * of the GPU figure: without it the first forward's host time fell inside the window.
 * *queued_in_time is set to whether the first event was still pending when the last forward
 * had been queued (the hold outlasted the queuing). Returns µs per forward and appends each
 * forward call's host wall time to h. */
static double event_sample_us(const attn_variant *var, void *state, device_inputs *d, int batch, double hold_us,
                              int *queued_in_time, double *h, int *nh, attn_error *e, int *rc)
{
    float ms = 0;
    cudaError_t ce = hold_us > 0 ? launch_probe_hold(hold_us, d->stream) : cudaSuccess;
    if (ce == cudaSuccess)
        ce = cudaEventRecord(d->ev0, d->stream);
    for (int j = 0; ce == cudaSuccess && j < batch; j++) {
        double t0 = host_us();
        if ((*rc = var->forward(state, d->q, d->k, d->v, d->out, d->stream, e)) != ATTN_OK)
            return NAN;
        if (h)
            h[(*nh)++] = host_us() - t0;
    }
    if (queued_in_time)
        *queued_in_time = ce == cudaSuccess && cudaEventQuery(d->ev0) == cudaErrorNotReady;
    cudaGetLastError(); /* "not ready" is an answer, not an error for the next launch to find */
    if (ce == cudaSuccess)
        ce = cudaEventRecord(d->ev1, d->stream);
    if (ce == cudaSuccess)
        ce = cudaEventSynchronize(d->ev1);
    if (ce == cudaSuccess)
        ce = cudaEventElapsedTime(&ms, d->ev0, d->ev1);
    if (ce != cudaSuccess) {
        *rc = attn_fail(e, ATTN_FAILED, "CUDA events: %s", cudaGetErrorString(ce));
        return NAN;
    }
    return ms * 1000.0 / batch;
}

/* CUPTI's cost: samples with activity tracing off and on, interleaved so that clock or
 * power drift of the GPU during the probe falls on both alike. Medians per forward
 * of GPU time (events) and of the host time of the call. The samples' size and count
 * follow from one forward's time (PROBE_* above) and are recorded as a fact. Where the
 * forwards issued Memsets, a third state interleaved with the two: tracing on with its
 * Memset records off. Those records are what CUPTI's cost is made of for a forward with a
 * Memset (H200: cudnn +1.7-2.4% with them, +0.6-0.8% without; a kernel record costs next to
 * nothing), and the run says so from its own numbers. */
enum { PROBE_OFF, PROBE_ON, PROBE_NO_MEMSET, PROBE_STATES };

static int probe_state(int state, char *cerr, size_t n)
{
    if (cupti_enable(state != PROBE_OFF, cerr, n) != 0)
        return -1;
    return state == PROBE_NO_MEMSET ? cupti_enable_memset_records(0, cerr, n) : 0;
}

int cupti_overhead_probe(const attn_variant *var, void *state, device_inputs *d, variant_result *res, int memsets,
                         attn_error *e)
{
    double t[PROBE_STATES][PROBE_MAX_SAMPLES], h[PROBE_STATES][PROBE_MAX_SAMPLES * PROBE_MAX_BATCH];
    int n_h[PROBE_STATES] = {0}, rc = ATTN_OK;
    char cerr[256];
    double one_host[1];
    int n_one = 0;
    /* sizes the samples and the hold */
    double one_us = event_sample_us(var, state, d, 1, 0, NULL, one_host, &n_one, e, &rc);
    if (rc != ATTN_OK)
        return rc;
    if (!(one_us > 0))
        one_us = 1;
    const int states = memsets > 0 ? PROBE_STATES : PROBE_NO_MEMSET;
    int batch = (int)ceil(PROBE_SAMPLE_US / one_us);
    batch = batch < 1 ? 1 : batch > PROBE_MAX_BATCH ? PROBE_MAX_BATCH : batch;
    /* The hold: four times the host time of queuing the sample's forwards (measured under
     * CUPTI, the slower state), and PROBE_HOLD_MIN_US at least. */
    double hold_us = 4.0 * batch * one_host[0];
    hold_us = hold_us < PROBE_HOLD_MIN_US ? PROBE_HOLD_MIN_US : hold_us > PROBE_HOLD_MAX_US ? PROBE_HOLD_MAX_US : hold_us;
    int in_time = 0, late = 0;
    double fit = PROBE_BUDGET_US / (states * batch * one_us);
    int samples = fit >= PROBE_MAX_SAMPLES ? PROBE_MAX_SAMPLES : fit < PROBE_MIN_SAMPLES ? PROBE_MIN_SAMPLES : (int)fit;
    for (int i = 0; i < samples && rc == ATTN_OK; i++)
        for (int st = 0; st < states && rc == ATTN_OK; st++) {
            if (probe_state(st, cerr, sizeof cerr) != 0)
                return attn_fail(e, ATTN_FAILED, "%s", cerr);
            t[st][i] = event_sample_us(var, state, d, batch, hold_us, &in_time, h[st], &n_h[st], e, &rc);
            late += rc == ATTN_OK && !in_time;
        }
    /* back to the recording state: everything on */
    if (cupti_enable(1, cerr, sizeof cerr) != 0 || (states > PROBE_NO_MEMSET && cupti_enable_memset_records(1, cerr, sizeof cerr) != 0))
        return attn_fail(e, ATTN_FAILED, "%s", cerr);
    if (rc != ATTN_OK)
        return rc;
    res->event_us_no_cupti = median_of(t[PROBE_OFF], samples);
    res->event_us_cupti = median_of(t[PROBE_ON], samples);
    res->host_us_no_cupti = median_of(h[PROBE_OFF], n_h[PROBE_OFF]);
    res->host_us_cupti = median_of(h[PROBE_ON], n_h[PROBE_ON]);
    if (states > PROBE_NO_MEMSET)
        res->event_us_cupti_no_memset = median_of(t[PROBE_NO_MEMSET], samples);
    attn_fact_add(&res->facts, "overhead_probe_samples", samples,
                  "CUPTI overhead probe: %d samples of %d forward%s per state (%s), interleaved", samples, batch,
                  batch == 1 ? "" : "s", states > PROBE_NO_MEMSET ? "off, on, on without Memset records" : "off, on");
    attn_fact_add(&res->facts, "overhead_probe_hold_us", hold_us,
                  "CUPTI overhead probe: each sample queued behind a %.0f µs hold kernel; in %d of %d samples the "
                  "hold ended before the last forward was queued",
                  hold_us, late, states * samples);
    return ATTN_OK;
}

/* Rows 3, 10, 17, ... have every key masked: a softmax over no keys. What does the
 * variant write there, NaN (plain softmax) or 0 (safe softmax)? Measured, not assumed. */
void fully_masked_rows_check(const run_plan *cfg, const attn_variant *var, void *state, device_inputs *d,
                             attn_facts *facts)
{
    if (!var->forward_masked)
        return;
    const attn_shape *s = &cfg->c.shape;
    /* [queries, keys]: decode's causal part aligned to the end of the keys. */
    const int S = s->seq, SQ = attn_q_seq(s), off = S - SQ, D = s->dim;
    int masked_rows = (SQ + 3) / 7; /* rows 3, 10, 17, ... below the query rows */
    if (masked_rows == 0) {
        attn_fact_add(facts, "fully_masked_rows", NAN, "not run: %d query row%s, and the check masks rows 3, 10, ...",
                      SQ, SQ == 1 ? "" : "s");
        return;
    }
    int ok = 1;
    if (!d->mask_ready) {
        /* S² bytes (256 MiB at S = 16384): built and copied once per run, not per variant. */
        uint8_t *m = malloc((size_t)SQ * S);
        if (!m)
            abort();
        for (int i = 0; i < SQ; i++)
            for (int j = 0; j < S; j++)
                m[(size_t)i * S + j] = i % 7 == 3 ? 1 : j > i + off;
        ok = cudaMemcpy(d->mask, m, (size_t)SQ * S, cudaMemcpyHostToDevice) == cudaSuccess;
        free(m);
        d->mask_ready = ok;
    }
    attn_error e = {{0}};
    ok = ok && var->forward_masked(state, d->q, d->k, d->v, d->out, d->mask, d->stream, &e) == ATTN_OK &&
         cudaStreamSynchronize(d->stream) == cudaSuccess &&
         cudaMemcpy(d->host_out, d->out, (size_t)SQ * D * 2, cudaMemcpyDeviceToHost) == cudaSuccess;
    if (!ok) {
        attn_fact_add(facts, "fully_masked_rows", NAN, "check failed: %s",
                      e.msg[0] ? e.msg : cudaGetErrorString(cudaGetLastError()));
        return;
    }
    long nan = 0, zero = 0, other = 0;
    for (int i = 3; i < SQ; i += 7)
        for (int dd = 0; dd < D; dd++) {
            float x = bf16_to_float(d->host_out[(size_t)i * D + dd]);
            if (isnan(x))
                nan++;
            else if (x == 0.0f)
                zero++;
            else
                other++;
        }
    const char *verdict = nan && !zero && !other ? "NaN" : zero && !nan && !other ? "0" : "mixed";
    attn_fact_add(facts, "fully_masked_rows", (double)nan,
                  "%s: %d fully-masked rows of head (0,0) hold %ld NaN, %ld zeros, %ld other values", verdict,
                  masked_rows, nan, zero, other);
}

/* The shared object this code was loaded from. The recorder is dlopen'ed with
 * RTLD_LOCAL, so its symbols are found through its own handle, not RTLD_DEFAULT. */
static void *recorder_handle(void)
{
    static void *self;
    Dl_info where;
    if (!self && dladdr((void *)&probe_occupancy, &where) && where.dli_fname)
        self = dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    return self ? self : RTLD_DEFAULT;
}

/* Our kernels are extern "C" with default visibility: the host stub CUPTI's kernel
 * name resolves to is the handle the occupancy API takes. */
void probe_occupancy(const trace *t, size_t first_op, run_info *info)
{
    for (size_t i = first_op; i < t->n_ops; i++) {
        const gpu_op *o = &t->ops[i];
        if (o->kind != GPU_KERNEL || info->n_probes == RUN_MAX_PROBES)
            continue;
        int seen = 0;
        for (int p = 0; p < info->n_probes && !seen; p++)
            seen = !strcmp(info->probes[p].kernel, o->name) &&
                   info->probes[p].threads == o->block[0] * o->block[1] * o->block[2] &&
                   info->probes[p].dynamic_smem == o->dynamic_smem;
        void *stub = seen ? NULL : dlsym(recorder_handle(), o->name);
        if (!stub)
            continue;
        int threads = o->block[0] * o->block[1] * o->block[2], blocks = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, stub, threads, (size_t)o->dynamic_smem) !=
            cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        occupancy_probe *p = &info->probes[info->n_probes++];
        snprintf(p->kernel, sizeof p->kernel, "%s", o->name);
        p->threads = threads;
        p->registers = o->registers;
        p->static_smem = o->static_smem;
        p->dynamic_smem = o->dynamic_smem;
        p->blocks_per_sm = blocks;
    }
}
