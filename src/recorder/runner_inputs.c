/* The batch's inputs: each variant's device memory checked first (a shape too large fails, or
 * skips the variant, before anything runs), q, k and v drawn from the seed with the FP64
 * reference of the sampled heads computed once on the host, then the inputs uploaded with the
 * stream and events every variant uses. */
#include "runner_steps.h"

#include "err.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h" /* after the CUDA headers: their parts */

size_t tensor_elems(const attn_shape *s) { return (size_t)s->batch * s->heads * s->seq * s->dim; }

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Heads checked against FP64: the first, the last and others spread between them; in each,
 * the rows reference_check_rows picks (every row up to S = REFERENCE_ALL_ROWS_SEQ by
 * default). The reference is the same for every variant, so it is computed once, on every
 * core. */
static int sample_heads(const run_plan *cfg, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                        sampled_head *heads, checked_rows *rows)
{
    const attn_shape *s = &cfg->c.shape;
    int bh = s->batch * s->heads, n = cfg->c.heads_to_check < bh ? cfg->c.heads_to_check : bh;
    int max_rows = cfg->c.rows_to_check >= 0 ? cfg->c.rows_to_check
                   : s->seq <= REFERENCE_ALL_ROWS_SEQ ? 0
                                                      : REFERENCE_DEFAULT_ROWS;
    rows->row = malloc(sizeof(int) * (size_t)s->seq);
    if (!rows->row)
        abort();
    rows->n = reference_check_rows(s->seq, max_rows, cfg->c.seed, rows->row);
    size_t head = (size_t)s->seq * s->dim;
    reference_job jobs[RUN_MAX_SAMPLED_HEADS];
    for (int i = 0; i < n; i++) {
        int idx = n == 1 ? 0 : (int)((long long)i * (bh - 1) / (n - 1));
        heads[i].b = idx / s->heads;
        heads[i].h = idx % s->heads;
        heads[i].ref = malloc(sizeof(double) * (size_t)rows->n * s->dim);
        if (!heads[i].ref)
            abort();
        jobs[i] = (reference_job){q + idx * head, k + idx * head, v + idx * head, s->seq, s->dim, NULL,
                                  rows->row, rows->n, heads[i].ref};
    }
    reference_run(jobs, n, online_cpus());
    return n;
}

/* Memory first, so a too-large shape fails before anything runs: each variant's device
 * bytes into need_bytes (NAN: a variant skipped before the memory check); a variant of the
 * default list that does not fit is skipped (its reason in skip), a named one is an error. */
int step_device_memory(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    double *need_bytes = c->need_bytes;
    char(*skip)[ATTN_ERR_LEN] = c->skip;
    char *err = c->err;
    size_t errlen = c->errlen;
    const attn_shape *s = &cfg->c.shape;
    size_t io_bytes = tensor_elems(s) * 2 * 4 + (size_t)s->seq * s->seq;
    size_t free_b = 0, total_b = 0;
    cudaError_t ce;
    if ((ce = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess)
        return err_set(err, errlen, EXIT_IO, "cudaMemGetInfo: %s", cudaGetErrorString(ce));
    for (int i = 0; i < RUN_MAX_VARIANTS; i++)
        need_bytes[i] = NAN;
    int runnable = 0;
    for (int i = 0; i < cfg->n_variants; i++) {
        if (skip[i][0])
            continue;
        size_t need = io_bytes + cfg->variants[i]->device_bytes(s);
        need_bytes[i] = (double)need;
        if (need > free_b) {
            if (!cfg->named) {
                snprintf(skip[i], ATTN_ERR_LEN, "needs %.2f GiB of device memory at %dx%dx%dx%d but %.2f GiB are free",
                         need / 1073741824.0, s->batch, s->heads, s->seq, s->dim, free_b / 1073741824.0);
                continue;
            }
            snprintf(err, errlen,
                     "variant %s needs %.2f GiB of device memory at %dx%dx%dx%d but %.2f GiB are free; "
                     "use a smaller --batch/--seq or drop it from --variants",
                     cfg->variants[i]->name, need / 1073741824.0, s->batch, s->heads, s->seq, s->dim,
                     free_b / 1073741824.0);
            return EXIT_DEVICE_MEMORY;
        }
        runnable++;
    }
    if (!runnable) {
        for (int i = 0; i < cfg->n_variants; i++)
            if (strncmp(skip[i], "needs", 5) == 0) {
                snprintf(err, errlen, "no variant fits in device memory: %s %.400s; use a smaller --batch/--seq",
                         cfg->variants[i]->name, skip[i]);
                return EXIT_DEVICE_MEMORY;
            }
        return err_set(err, errlen, EXIT_USAGE, "no variant can take this shape");
    }
    return EXIT_OK;
}

/* The inputs (q, k, v drawn from N(0, 1) in bf16 from the seed, on every core) and the FP64
 * reference of the sampled heads, on the host. */
int step_draw_inputs(run_ctx *c)
{
    const run_plan *cfg = c->cfg;
    const attn_shape *s = &cfg->c.shape;
    size_t n = tensor_elems(s);
    c->host = malloc(n * 2 * 3);
    c->d.host_out = malloc((size_t)s->seq * s->dim * 2);
    if (!c->host || !c->d.host_out)
        abort();
    rng r;
    rng_seed(&r, cfg->c.seed);
    double t_inputs = host_us();
    fill_normal_bf16_threads(c->host, n * 3, &r, online_cpus());
    double t_reference = host_us();
    c->n_heads = sample_heads(cfg, c->host, c->host + n, c->host + 2 * n, c->heads, &c->rows);
    c->t_variants = host_us();
    step_line(cfg, "inputs %dx%dx%dx%d drawn in %.1f s; FP64 reference of %d heads x %d rows in %.1f s (%d CPUs)",
              s->batch, s->heads, s->seq, s->dim, (t_reference - t_inputs) / 1e6, c->n_heads, c->rows.n,
              (c->t_variants - t_reference) / 1e6, online_cpus());
    return EXIT_OK;
}

/* What the input steps allocated, on the host and the device. */
void inputs_free(run_ctx *c)
{
    device_inputs *d = &c->d;
    cudaFree(d->q);
    cudaFree(d->k);
    cudaFree(d->v);
    cudaFree(d->out);
    cudaFree(d->mask);
    if (d->ev0)
        cudaEventDestroy(d->ev0);
    if (d->ev1)
        cudaEventDestroy(d->ev1);
    if (d->fwd0)
        cudaEventDestroy(d->fwd0);
    if (d->fwd1)
        cudaEventDestroy(d->fwd1);
    cudaFree(d->flush);
    if (d->stream)
        cudaStreamDestroy(d->stream);
    for (int i = 0; i < c->n_heads; i++)
        free(c->heads[i].ref);
    free(c->rows.row);
    free(c->host);
    free(d->host_out);
}

/* The stream, the events and the inputs on the device (inputs_free frees them). */
int step_upload_inputs(run_ctx *c)
{
    device_inputs *d = &c->d;
    const uint16_t *host = c->host;
    const attn_shape *s = &c->cfg->c.shape;
    size_t n = tensor_elems(s);
    char *err = c->err;
    size_t errlen = c->errlen;
#define SETUP_TRY(call) CHECK_CALL(cuda, call, snprintf(err, errlen, "%s", check_msg_); return EXIT_IO)
    SETUP_TRY(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    SETUP_TRY(cudaEventCreate(&d->ev0));
    SETUP_TRY(cudaEventCreate(&d->ev1));
    SETUP_TRY(cudaEventCreate(&d->fwd0));
    SETUP_TRY(cudaEventCreate(&d->fwd1));
    SETUP_TRY(cudaMalloc(&d->q, n * 2));
    SETUP_TRY(cudaMalloc(&d->k, n * 2));
    SETUP_TRY(cudaMalloc(&d->v, n * 2));
    SETUP_TRY(cudaMalloc(&d->out, n * 2));
    SETUP_TRY(cudaMalloc((void **)&d->mask, (size_t)s->seq * s->seq));
    SETUP_TRY(cudaMemcpy(d->q, host, n * 2, cudaMemcpyHostToDevice));
    SETUP_TRY(cudaMemcpy(d->k, host + n, n * 2, cudaMemcpyHostToDevice));
    SETUP_TRY(cudaMemcpy(d->v, host + 2 * n, n * 2, cudaMemcpyHostToDevice));
#undef SETUP_TRY
    return EXIT_OK;
}
