/* The FP64 backward reference (reference_bwd.h). Pass 1 computes, for every query row i, the
 * log-sum-exp of its visible scores s_ij = q_i · k_j / sqrt(D) (j <= i when causal, every j when
 * not) and delta_i = dO_i · O_i with O_i = Σ_j p_ij v_j; pass 2 the chosen rows' gradients from them:
 *   dS_ij = p_ij (dO_i · v_j − delta_i),  dQ_i = Σ_j dS_ij k_j / sqrt(D),
 *   dK_j = Σ_i dS_ij q_i / sqrt(D),       dV_j = Σ_i p_ij dO_i.
 * Rows are dealt to threads by index (row r to thread r mod T), so every value is computed
 * by exactly one thread in a fixed order. */
#include "reference_bwd.h"

#include "reference.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

typedef struct bwd_head {
    const reference_bwd_job *job;
    double *q, *k, *v, *dout; /* upcast [seq, dim] */
    double *lse, *delta;      /* [seq] */
    double scale;
} bwd_head;

typedef struct bwd_worker {
    bwd_head *h;
    int tid, threads, pass;
    double *row; /* [seq] scratch */
} bwd_worker;

/* The keys query row i sees end before this one. */
static int keys_seen_end(const reference_bwd_job *J, int i) { return J->causal ? i + 1 : J->seq; }

static double dotd(const double *a, const double *b, int n)
{
    double x = 0;
    for (int d = 0; d < n; d++)
        x += a[d] * b[d];
    return x;
}

/* lse_i and delta_i of query row i. */
static void pass1_row(bwd_head *h, int i, double *s)
{
    const int D = h->job->dim, end = keys_seen_end(h->job, i);
    const double *qi = h->q + (size_t)i * D;
    double m = -INFINITY;
    for (int j = 0; j < end; j++) {
        s[j] = dotd(qi, h->k + (size_t)j * D, D) * h->scale;
        if (s[j] > m)
            m = s[j];
    }
    double l = 0, od[REFERENCE_MAX_DIM] = {0};
    for (int j = 0; j < end; j++) {
        const double e = exp(s[j] - m);
        l += e;
        const double *vj = h->v + (size_t)j * D;
        for (int d = 0; d < D; d++)
            od[d] += e * vj[d];
    }
    h->lse[i] = m + log(l);
    h->delta[i] = dotd(h->dout + (size_t)i * D, od, D) / l;
}

/* The gradients of chosen row number r: dq of query row rows[r], dk and dv of key row rows[r]. */
static void pass2_row(bwd_head *h, int r)
{
    const reference_bwd_job *J = h->job;
    const int D = J->dim, S = J->seq, row = J->rows[r];
    double *dq = J->dq + (size_t)r * D, *dk = J->dk + (size_t)r * D, *dv = J->dv + (size_t)r * D;
    for (int d = 0; d < D; d++)
        dq[d] = dk[d] = dv[d] = 0;
    const double *qi = h->q + (size_t)row * D, *doi = h->dout + (size_t)row * D;
    for (int j = 0, end = keys_seen_end(J, row); j < end; j++) { /* query row `row` against every key it sees */
        const double *kj = h->k + (size_t)j * D;
        const double p = exp(dotd(qi, kj, D) * h->scale - h->lse[row]);
        const double ds = p * (dotd(doi, h->v + (size_t)j * D, D) - h->delta[row]);
        for (int d = 0; d < D; d++)
            dq[d] += ds * kj[d];
    }
    const double *kc = h->k + (size_t)row * D, *vc = h->v + (size_t)row * D;
    for (int i = J->causal ? row : 0; i < S; i++) { /* key row `row` against every query that sees it */
        const double *q = h->q + (size_t)i * D, *dout = h->dout + (size_t)i * D;
        const double p = exp(dotd(q, kc, D) * h->scale - h->lse[i]);
        const double ds = p * (dotd(dout, vc, D) - h->delta[i]);
        for (int d = 0; d < D; d++) {
            dk[d] += ds * q[d];
            dv[d] += p * dout[d];
        }
    }
    for (int d = 0; d < D; d++) {
        dq[d] *= h->scale;
        dk[d] *= h->scale;
    }
}

static void *worker(void *arg)
{
    bwd_worker *w = arg;
    if (w->pass == 1)
        for (int i = w->tid; i < w->h->job->seq; i += w->threads)
            pass1_row(w->h, i, w->row);
    else
        for (int r = w->tid; r < w->h->job->n_rows; r += w->threads)
            pass2_row(w->h, r);
    return NULL;
}

static int run_pass(bwd_head *h, int pass, int threads)
{
    bwd_worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    int rc = w && t ? 0 : -1, started = 0;
    for (int i = 0; rc == 0 && i < threads; i++) {
        w[i] = (bwd_worker){.h = h, .tid = i, .threads = threads, .pass = pass};
        if (!(w[i].row = malloc(sizeof(double) * (size_t)h->job->seq)))
            rc = -1;
    }
    for (int i = 1; rc == 0 && i < threads; i++, started++)
        if (pthread_create(&t[i], NULL, worker, &w[i]) != 0)
            break;
    if (rc == 0) {
        worker(&w[0]);
        for (int i = started + 1; i < threads; i++) /* threads that could not start: here */
            worker(&w[i]);
    }
    for (int i = 1; i <= started; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; w && i < threads; i++)
        free(w[i].row);
    free(w);
    free(t);
    return rc;
}

static double *upcast(const uint16_t *x, size_t n)
{
    double *y = malloc(sizeof *y * (n ? n : 1));
    for (size_t i = 0; y && i < n; i++)
        y[i] = bf16_to_float(x[i]);
    return y;
}

int reference_backward_head(const reference_bwd_job *job, int threads)
{
    const size_t n = (size_t)job->seq * job->dim;
    if (threads < 1)
        threads = 1;
    bwd_head h = {.job = job, .scale = 1.0 / sqrt((double)job->dim)};
    h.q = upcast(job->q, n);
    h.k = upcast(job->k, n);
    h.v = upcast(job->v, n);
    h.dout = upcast(job->dout, n);
    h.lse = malloc(sizeof(double) * (size_t)job->seq);
    h.delta = malloc(sizeof(double) * (size_t)job->seq);
    int rc = h.q && h.k && h.v && h.dout && h.lse && h.delta && job->dim <= REFERENCE_MAX_DIM ? 0 : -1;
    if (rc == 0)
        rc = run_pass(&h, 1, threads);
    if (rc == 0)
        rc = run_pass(&h, 2, threads);
    free(h.q);
    free(h.k);
    free(h.v);
    free(h.dout);
    free(h.lse);
    free(h.delta);
    return rc;
}
