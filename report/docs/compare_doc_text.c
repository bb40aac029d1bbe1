/* compare's numbers as text, for every table of compare.md (compare_doc_md.h): a run's
 * time or throughput, a cell's median and range, and a ratio with its interval and verdict. */
#include "compare_doc_md.h"

#include "escape.h"
#include "findings.h"
#include "report.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void compare_md_metric_text(const compare_data *m, double v, char *out, size_t n)
{
    if (!isfinite(v))
        snprintf(out, n, "–");
    else if (m->throughput)
        snprintf(out, n, "%.1f TFLOP/s", v);
    else
        format_us_column(v, out, n);
}

/* "622 µs (620 µs – 627 µs, n=20)", or why there is no number. */
void compare_md_cell_text(const compare_data *m, const compare_cell *c, const stats *st, char *out, size_t n)
{
    if (!c->va) {
        snprintf(out, n, "*not run*");
        return;
    }
    if (c->va->result->status == VARIANT_UNAVAILABLE) {
        snprintf(out, n, "*unavailable*: %s", c->reason);
        return;
    }
    char med[48], lo[48], hi[48];
    if (st == &c->cpu_stats) {
        format_us_column(st->median, med, sizeof med);
        format_us_column(st->min, lo, sizeof lo);
        format_us_column(st->max, hi, sizeof hi);
    } else {
        compare_md_metric_text(m, st->median, med, sizeof med);
        compare_md_metric_text(m, st->min, lo, sizeof lo);
        compare_md_metric_text(m, st->max, hi, sizeof hi);
    }
    int len = st->n ? snprintf(out, n, "%s (%s – %s, n=%d)", med, lo, hi, st->n) : snprintf(out, n, "no forwards");
    if (c->va->result->status == VARIANT_FAILED && len >= 0 && (size_t)len < n)
        snprintf(out + len, n - (size_t)len, "; **FAILED**: %s", c->reason);
}

/* "0.93× [0.92–0.94] **faster**" */
void compare_md_ratio_text(const compare_ratio *r, char *out, size_t n)
{
    if (r->verdict == VERDICT_NONE && r->too_few > 0 && isfinite(r->ci.ratio)) {
        snprintf(out, n, "%.3f×, no verdict (%d forwards)", r->ci.ratio, r->too_few);
        return;
    }
    if (r->verdict == VERDICT_NONE) {
        snprintf(out, n, r->too_few > 0 ? "no verdict (%d forwards)" : "–", r->too_few);
        return;
    }
    const char *w = compare_verdict_word(r->verdict);
    int bold = r->verdict == VERDICT_FASTER || r->verdict == VERDICT_SLOWER;
    int d = units_ratio_decimals(r->ci.lo, r->ci.hi);
    snprintf(out, n, "%.*f× [%.*f–%.*f] %s%s%s", d, r->ci.ratio, d, r->ci.lo, d, r->ci.hi, bold ? "**" : "", w,
             bold ? "**" : "");
}

/* ---- the headline: who made what is compared ------------------------------------------ */

static const char *kernels_of(run_producer p)
{
    return p == PRODUCER_PYTORCH ? "PyTorch's" : p == PRODUCER_KINETO ? "another Kineto producer's" : "attnprof's";
}

/* "9.14" of a library version 91400 (major.minor: what a reader names a release by); "" when
 * not recorded. */
static void release_text(int v, char *out, size_t n)
{
    if (v > 0)
        snprintf(out, n, "%d.%d", v / 10000, v % 10000 / 100);
    else
        out[0] = '\0';
}

/* "<baseline's value> against <the others'>" when the runs' recorded values differ: each
 * value once, in run order; nothing when fewer than two distinct values are recorded. */
static void against(char values[][96], int n, const char *prefix, char *out, size_t cap, size_t *len)
{
    int first = -1, distinct[COMPARE_MAX_ARCHIVES], n_distinct = 0;
    for (int i = 0; i < n; i++) {
        if (!values[i][0])
            continue;
        int seen = 0;
        for (int k = 0; k < n_distinct; k++)
            seen |= !strcmp(values[distinct[k]], values[i]);
        if (!seen)
            distinct[n_distinct++] = i;
        if (first < 0)
            first = i;
    }
    if (n_distinct < 2)
        return;
    *len += (size_t)snprintf(out + *len, *len < cap ? cap - *len : 0, "%s%s%s against ", *len ? "; " : "", prefix,
                             values[distinct[0]]);
    for (int k = 1; k < n_distinct; k++)
        *len += (size_t)snprintf(out + *len, *len < cap ? cap - *len : 0, "%s%s",
                                 k == 1 ? "" : k == n_distinct - 1 ? " and " : ", ", values[distinct[k]]);
}

void compare_headline(const compare_data *m, char *out, size_t n)
{
    char v[COMPARE_MAX_ARCHIVES][96];
    size_t len = 0;
    out[0] = '\0';
    int producers_differ = 0;
    for (int i = 1; i < m->n; i++)
        producers_differ |= m->in[i]->r.producer != m->in[0]->r.producer;
    if (producers_differ) { /* whose kernels: the one thing that matters most */
        for (int i = 0; i < m->n; i++) /* "attnprof's kernels against PyTorch's" */
            snprintf(v[i], sizeof v[i], "%s%s", kernels_of(m->in[i]->r.producer),
                     m->in[i]->r.producer == m->in[0]->r.producer ? " kernels" : "");
        against(v, m->n, "", out, n, &len);
        return;
    }
    for (int i = 0; i < m->n; i++)
        release_text(m->in[i]->r.cudnn_version, v[i], sizeof v[i]);
    against(v, m->n, "cuDNN ", out, n, &len);
    for (int i = 0; i < m->n; i++)
        release_text(m->in[i]->r.cublas_version, v[i], sizeof v[i]);
    against(v, m->n, "cuBLAS ", out, n, &len);
    for (int i = 0; i < m->n; i++)
        snprintf(v[i], sizeof v[i], "%s", m->in[i]->r.device.name);
    against(v, m->n, "", out, n, &len);
}
