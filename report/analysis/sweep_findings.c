/* A sweep's findings (sweep.h), in the one finding shape (finding.h): crossovers,
 * memory walls, best throughput, the GPUs of a replicate against each other, scaling
 * exponents and changes of the operation count, each with its numbers and its
 * sentence (plain text; the writers escape it), ordered by the rank rule. */
#include "sweep.h"

#include "err.h"
#include "finding.h"

#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bytes_text(double b, char *out, size_t n)
{
    if (!isfinite(b))
        snprintf(out, n, "not recorded");
    else if (b >= 1099511627776.0)
        snprintf(out, n, "%.1f TiB", b / 1099511627776.0);
    else if (b >= 1073741824.0 * 100)
        snprintf(out, n, "%.1f GiB", floor(b / 1073741824.0 * 10) / 10); /* 139.8, never rounded up past the GPU */
    else if (b >= 1073741824.0)
        snprintf(out, n, "%.2f GiB", b / 1073741824.0);
    else
        snprintf(out, n, "%.0f MiB", b / 1048576.0);
}

/* ---- families: the shapes of one curve (sweep.h) ---- */

int sweep_in_family(const attn_shape *s, const sweep_family *f)
{
    return s->dim == f->dim && s->kv_heads == f->kv_heads && s->q_seq == f->q_seq;
}

void sweep_list_families(sweep_data *m)
{
    m->n_families = 0;
    for (int i = 0; i < m->n_shapes; i++) {
        const attn_shape *s = &m->shapes[i].shape;
        int seen = 0;
        for (int j = 0; j < m->n_families && !seen; j++)
            seen = sweep_in_family(s, &m->families[j]);
        if (!seen)
            m->families[m->n_families++] = (sweep_family){.dim = s->dim, .kv_heads = s->kv_heads, .q_seq = s->q_seq};
    }
}

void sweep_family_label(const sweep_family *f, char *out, size_t n)
{
    char kv[32] = "", q[32] = "";
    if (f->kv_heads > 0)
        snprintf(kv, sizeof kv, ", Hkv = %d", f->kv_heads);
    if (f->q_seq > 0)
        snprintf(q, sizeof q, ", %d %s", f->q_seq, f->q_seq == 1 ? "query" : "queries");
    snprintf(out, n, "D = %d%s%s", f->dim, kv, q);
}

int sweep_has_decode(const sweep_data *m)
{
    for (int j = 0; j < m->n_families; j++)
        if (m->families[j].q_seq > 0)
            return 1;
    return 0;
}

/* The next finding slot with its kind, subject and head dim, or NULL when full; the
 * caller formats its sentence (finding_init) and adds its numbers. */
static finding *next_finding(sweep_data *m)
{
    return m->n_findings == SWEEP_MAX_FINDINGS ? NULL : &m->findings[m->n_findings++];
}

static void about(finding *f, const char *subject, const char *other, int dim)
{
    snprintf(f->subject, sizeof f->subject, "%s", subject ? subject : "");
    snprintf(f->other, sizeof f->other, "%s", other ? other : "");
    findings_number(f, "dim", dim, "");
}

/* about() for a finding over one family's curve: its K/V heads and queries as numbers too,
 * where the family has them. */
static void about_family(finding *f, const char *subject, const char *other, const sweep_family *fam)
{
    about(f, subject, other, fam->dim);
    if (fam->kv_heads > 0)
        findings_number(f, "kv_heads", fam->kv_heads, "");
    if (fam->q_seq > 0)
        findings_number(f, "q_seq", fam->q_seq, "");
}

static void shape_numbers(finding *f, const attn_shape *s)
{
    findings_number(f, "batch", s->batch, "");
    findings_number(f, "heads", s->heads, "");
}

/* The complete shapes of family `fam` where variant k is ok, ascending in S (the
 * first of each S). Returns the count; idx gets shape indices. */
static int ok_series(const sweep_data *m, int k, const sweep_family *fam, int *idx)
{
    int n = 0;
    for (int i = 0; i < m->n_shapes; i++) {
        const sweep_shape *x = &m->shapes[i];
        if (!sweep_in_family(&x->shape, fam) || x->p[k].state != SWEEP_OK || !isfinite(x->p[k].us))
            continue;
        if (n && m->shapes[idx[n - 1]].shape.seq == x->shape.seq)
            continue;
        idx[n++] = i;
    }
    return n;
}

static int memory_skip(const sweep_data *m, const sweep_point *p)
{
    if (p->state != SWEEP_SKIPPED)
        return 0;
    return strstr(p->reason, "memory") != NULL ||
           (isfinite(p->device_bytes) && m->gpu_bytes > 0 && p->device_bytes > m->gpu_bytes);
}

static void memory_wall_finding(sweep_data *m, int k, const sweep_family *fam)
{
    const char *v = m->variants[k];
    for (int i = 0; i < m->n_shapes; i++) {
        const sweep_shape *x = &m->shapes[i];
        if (!sweep_in_family(&x->shape, fam) || !memory_skip(m, &x->p[k]))
            continue;
        finding *f = next_finding(m);
        if (!f)
            return;
        double need = x->p[k].device_bytes;
        char a[32], b[32], shape[64];
        bytes_text(need, a, sizeof a);
        bytes_text(m->gpu_bytes, b, sizeof b);
        sweep_shape_name(&x->shape, shape, sizeof shape);
        if (isfinite(need) && need > m->gpu_bytes)
            finding_init(f, FK_SWEEP_MEMORY_WALL, "%s needs %s at S = %d (%s); this GPU has %s: its curve ends there", v,
                         a, x->shape.seq, shape, b);
        else if (isfinite(need))
            finding_init(f, FK_SWEEP_MEMORY_WALL,
                         "%s needs %s at S = %d (%s), more than was free on this %s GPU: its curve ends there", v, a,
                         x->shape.seq, shape, b);
        else
            finding_init(f, FK_SWEEP_MEMORY_WALL,
                         "%s does not fit in device memory at S = %d (%s; need not recorded); this GPU has %s", v,
                         x->shape.seq, shape, b);
        about_family(f, v, NULL, fam);
        findings_number(f, "seq", x->shape.seq, "");
        shape_numbers(f, &x->shape);
        findings_number(f, "bytes_needed", need, "B");
        findings_number(f, "gpu_bytes", m->gpu_bytes, "B");
        return;
    }
}

long sweep_common_tokens(const sweep_data *m)
{
    long t = 0;
    for (int i = 0; i < m->n_shapes; i++) {
        long x = (long)m->shapes[i].shape.batch * m->shapes[i].shape.seq;
        if (t && x != t)
            return 0;
        t = x;
    }
    return t;
}

static void scaling_finding(sweep_data *m, int k, const sweep_family *fam, const int *idx, const double *s, const double *t, int n)
{
    sweep_fit fit;
    finding *f;
    if (sweep_fit_power(s, t, n, &fit) != 0 || !(f = next_finding(m)))
        return;
    const char *v = m->variants[k];
    char exponent[64], fixed[64] = "", label[64];
    sweep_family_label(fam, label, sizeof label);
    units_superscript(fabs(fit.k) < 0.005 ? 0.0 : fit.k, 2, exponent, sizeof exponent);
    long tokens = sweep_common_tokens(m);
    if (tokens) /* the tokens rule: S grows as B shrinks, so the exponent is at fixed B·S */
        snprintf(fixed, sizeof fixed, ", B\u00b7S fixed at %ld", tokens);
    finding_init(f, FK_SWEEP_SCALING,
                 "%s: time per forward grows as S%s over S = %d\u2013%d at %s%s (log-log fit, R\u00b2 = %.3f, %d "
                 "shapes)",
                 v, exponent, (int)s[0], (int)s[n - 1], label, fixed, fit.r2, n);
    about_family(f, v, NULL, fam);
    findings_number(f, "exponent", fit.k, "");
    findings_number(f, "r2", fit.r2, "");
    findings_number(f, "shapes", n, "");
    findings_number(f, "seq", s[0], "");
    findings_number(f, "seq2", s[n - 1], "");
    if (tokens) /* the short phrase says the exponent is at fixed B·S */
        findings_number(f, "tokens", (double)tokens, "");
    shape_numbers(f, &m->shapes[idx[0]].shape);
}

static void ops_change_findings(sweep_data *m, int k, const sweep_family *fam, const int *idx, const double *s, int n)
{
    const char *v = m->variants[k];
    char label[64];
    sweep_family_label(fam, label, sizeof label);
    for (int i = 1; i < n; i++) {
        const sweep_point *a = &m->shapes[idx[i - 1]].p[k], *b = &m->shapes[idx[i]].p[k];
        finding *f;
        if (a->ops == b->ops || !(f = next_finding(m)))
            continue;
        finding_init(f, FK_SWEEP_OPS_CHANGE, "%s runs %d GPU operations per forward at S = %d but %d at S = %d (%s)",
                     v, a->ops, (int)s[i - 1], b->ops, (int)s[i], label);
        about_family(f, v, NULL, fam);
        findings_number(f, "seq", s[i], "");
        findings_number(f, "seq2", s[i - 1], "");
        findings_number(f, "ops_from", a->ops, "");
        findings_number(f, "ops_to", b->ops, "");
    }
}

/* Variant k against variant o in family fam, over the S both were measured at. */
static void crossover_finding(sweep_data *m, int k, int o, const sweep_family *fam, const int *idx, int n)
{
    int jdx[SWEEP_MAX_SHAPES], common[SWEEP_MAX_SHAPES];
    double t[SWEEP_MAX_SHAPES], u[SWEEP_MAX_SHAPES];
    int nb = ok_series(m, o, fam, jdx), c = 0;
    for (int i = 0, j = 0; i < n && j < nb;) {
        int si = m->shapes[idx[i]].shape.seq, sj = m->shapes[jdx[j]].shape.seq;
        if (si == sj) {
            common[c] = si;
            t[c] = m->shapes[idx[i]].p[k].us;
            u[c] = m->shapes[jdx[j]].p[o].us;
            c++, i++, j++;
        } else if (si < sj) {
            i++;
        } else {
            j++;
        }
    }
    int at = sweep_crossover(t, u, c, 0.02);
    finding *f;
    if (at <= 0 || !(f = next_finding(m)))
        return;
    const char *v = m->variants[k], *w = m->variants[o];
    double ratio = t[c - 1] / u[c - 1];
    char label[64];
    sweep_family_label(fam, label, sizeof label);
    finding_init(f, FK_SWEEP_CROSSOVER, "%s is faster than %s for every S \u2265 %d at %s (not below; %.2f\u00d7 its time at S = %d)",
                 v, w, common[at], label, ratio, common[c - 1]);
    about_family(f, v, w, fam);
    findings_number(f, "seq", common[at], "");
    findings_number(f, "seq2", common[c - 1], "");
    findings_number(f, "ratio", ratio, "x");
    findings_number(f, "shapes", c - at, "");
}

static void derive_per_family(sweep_data *m, const sweep_family *fam)
{
    int idx[SWEEP_MAX_SHAPES];
    double s[SWEEP_MAX_SHAPES], t[SWEEP_MAX_SHAPES];
    for (int k = 0; k < m->n_variants; k++) {
        memory_wall_finding(m, k, fam);
        int n = ok_series(m, k, fam, idx);
        for (int i = 0; i < n; i++) {
            s[i] = m->shapes[idx[i]].shape.seq;
            t[i] = m->shapes[idx[i]].p[k].us;
        }
        scaling_finding(m, k, fam, idx, s, t, n);
        ops_change_findings(m, k, fam, idx, s, n);
        for (int o = 0; o < m->n_variants; o++)
            if (o != k)
                crossover_finding(m, k, o, fam, idx, n);
    }
}

static void derive_best(sweep_data *m)
{
    for (int k = 0; k < m->n_variants; k++) {
        int fused = 1, best = -1;
        for (int i = 0; i < m->n_shapes; i++) {
            const sweep_point *p = &m->shapes[i].p[k];
            /* a decode step is bound by its K/V reads, not its FLOPs: derive_best_bandwidth */
            if (p->state != SWEEP_OK || !isfinite(p->tflops) || attn_shape_is_decode(&m->shapes[i].shape))
                continue;
            fused &= p->kernels == 1;
            if (best < 0 || p->tflops > m->shapes[best].p[k].tflops)
                best = i;
        }
        finding *f;
        if (!fused || best < 0 || !(f = next_finding(m)))
            continue;
        const attn_shape *x = &m->shapes[best].shape;
        double tflops = m->shapes[best].p[k].tflops, share = m->roof_tflops > 0 ? tflops / m->roof_tflops : NAN;
        char shape[64];
        sweep_shape_name(x, shape, sizeof shape);
        if (isfinite(share))
            finding_init(f, FK_SWEEP_BEST_TFLOPS, "%s reaches its best %.0f TFLOP/s at %s: %.0f%% of the %s (%.0f TFLOP/s%s)",
                         m->variants[k], tflops, shape, 100 * share, m->roof_name, m->roof_tflops,
                         isfinite(m->gemm_tflops) ? "" : " at the recorded clock");
        else
            finding_init(f, FK_SWEEP_BEST_TFLOPS, "%s reaches its best %.0f TFLOP/s at %s", m->variants[k], tflops, shape);
        about(f, m->variants[k], NULL, x->dim);
        findings_number(f, "seq", x->seq, "");
        shape_numbers(f, x);
        findings_number(f, "tflops", tflops, "");
        findings_number(f, "roof_share", share, "");
    }
}

/* Decode shapes: each variant's best K+V rate (K and V bytes over its median CUDA time per
 * step) against the copy ceiling the runs measured, since a decode step must read its KV cache
 * once and does little else. */
static void derive_best_bandwidth(sweep_data *m)
{
    const double ceiling = m->copy_tbps > 0 ? m->copy_tbps * 1e3 : NAN; /* GB/s */
    for (int k = 0; k < m->n_variants; k++) {
        int best = -1;
        for (int i = 0; i < m->n_shapes; i++) {
            const sweep_point *p = &m->shapes[i].p[k];
            if (p->state == SWEEP_OK && isfinite(p->kv_gbps) && attn_shape_is_decode(&m->shapes[i].shape) &&
                (best < 0 || p->kv_gbps > m->shapes[best].p[k].kv_gbps))
                best = i;
        }
        finding *f;
        if (best < 0 || !(f = next_finding(m)))
            continue;
        const attn_shape *x = &m->shapes[best].shape;
        double gbps = m->shapes[best].p[k].kv_gbps, share = gbps / ceiling;
        char shape[64];
        sweep_shape_name(x, shape, sizeof shape);
        if (isfinite(share))
            finding_init(f, FK_SWEEP_BEST_KV_BANDWIDTH, "%s reads K and V at its best %.0f GB/s at %s (decode): %.0f%% of "
                         "the %.0f GB/s copy ceiling measured in the runs (DtoD, read + write)", m->variants[k], gbps,
                         shape, 100 * share, ceiling);
        else
            finding_init(f, FK_SWEEP_BEST_KV_BANDWIDTH, "%s reads K and V at its best %.0f GB/s at %s (decode; no copy "
                         "ceiling measured)", m->variants[k], gbps, shape);
        about_family(f, m->variants[k], NULL, &(sweep_family){.dim = x->dim, .kv_heads = x->kv_heads, .q_seq = x->q_seq});
        findings_number(f, "seq", x->seq, "");
        shape_numbers(f, x);
        findings_number(f, "gbps", gbps, "");
        findings_number(f, "copy_share", share, "");
    }
}

/* Replica x against the first GPU: a finding per variant that differs, or one saying
 * they agree. */
static void derive_gpu(sweep_data *m, const sweep_replica *x)
{
    const sweep_replica *base = &m->replicas[0];
    char shape[64];
    sweep_shape_name(&m->reference, shape, sizeof shape);
    int differs = 0, compared = 0;
    double worst = 1;
    for (int k = 0; k < m->n_variants; k++) {
        const sweep_point *a = &base->p[k], *b = &x->p[k];
        if (!a->n_samples || !b->n_samples)
            continue;
        ratio_ci ci = bootstrap_median_ratio(a->samples, a->n_samples, b->samples, b->n_samples, BOOTSTRAP_RESAMPLES,
                                             BOOTSTRAP_SEED);
        if (!isfinite(ci.ratio))
            continue;
        compared++;
        if (fabs(ci.ratio - 1) > fabs(worst - 1))
            worst = ci.ratio;
        if (!((ci.lo > 1 || ci.hi < 1) && fabs(ci.ratio - 1) >= 0.02))
            continue;
        differs++;
        finding *f = next_finding(m);
        if (!f)
            continue;
        finding_init(f, FK_SWEEP_GPU_DIFFERS, "GPU %s takes %.3f\u00d7 the time of GPU %s for %s on %s (95%% interval %.3f\u2013%.3f)",
                     x->gpu, ci.ratio, base->gpu, m->variants[k], shape, ci.lo, ci.hi);
        about(f, m->variants[k], x->gpu, m->reference.dim);
        findings_number(f, "ratio", ci.ratio, "x");
        findings_number(f, "lo", ci.lo, "x");
        findings_number(f, "hi", ci.hi, "x");
        findings_number(f, "seq", m->reference.seq, "");
    }
    finding *f;
    if (differs || !compared || !(f = next_finding(m)))
        return;
    finding_init(f, FK_SWEEP_GPU_AGREES, "GPU %s agrees with GPU %s on %s: no significant difference in %d variants (largest %.3f\u00d7)",
                 x->gpu, base->gpu, shape, compared, worst);
    about(f, "", x->gpu, m->reference.dim);
    findings_number(f, "ratio", worst, "x");
    findings_number(f, "variants", compared, "");
    findings_number(f, "seq", m->reference.seq, "");
}

void sweep_derive(sweep_data *m)
{
    m->n_findings = 0;
    sweep_list_families(m);
    for (int d = 0; d < m->n_families; d++)
        derive_per_family(m, &m->families[d]);
    derive_best(m);
    derive_best_bandwidth(m);
    for (int r = 1; r < m->n_replicas; r++)
        derive_gpu(m, &m->replicas[r]);
    for (int i = 0; i < m->n_findings; i++)
        finding_finish(&m->findings[i], NAN);
    for (int i = 1; i < m->n_findings; i++) /* stable: equal findings keep their derive order */
        for (int j = i; j > 0 && findings_rank_cmp(&m->findings[j - 1], &m->findings[j]) > 0; j--) {
            finding t = m->findings[j];
            m->findings[j] = m->findings[j - 1];
            m->findings[j - 1] = t;
        }
}

int sweep_fit_power(const double *s, const double *t, int n, sweep_fit *f)
{
    memset(f, 0, sizeof *f);
    if (n < 3)
        return ATTN_NONE;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double x = log(s[i]), y = log(t[i]);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    double den = n * sxx - sx * sx;
    if (!(fabs(den) > 0))
        return ATTN_NONE;
    f->k = (n * sxy - sx * sy) / den;
    f->c = (sy - f->k * sx) / n;
    double mean = sy / n, ss_tot = 0, ss_res = 0;
    for (int i = 0; i < n; i++) {
        double y = log(t[i]), e = y - (f->c + f->k * log(s[i]));
        ss_tot += (y - mean) * (y - mean);
        ss_res += e * e;
    }
    /* Times that do not vary (to rounding) fit a flat line exactly: R² is 1, not noise over noise. */
    f->r2 = ss_tot > 1e-18 * n ? 1 - ss_res / ss_tot : 1;
    f->n = n;
    return 0;
}

int sweep_crossover(const double *a, const double *b, int n, double min_effect)
{
    int i = n;
    while (i > 0 && a[i - 1] < b[i - 1] * (1 - min_effect))
        i--;
    if (i == 0 || n - i < 2)
        return ATTN_NONE;
    return i;
}
