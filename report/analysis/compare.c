/* The comparison's data (compare.h; the type is compare_data): archives loaded and analysed as `report`
 * does, their metadata set side by side (compare_fields.c), each variant's
 * per-forward samples bootstrapped against the baseline's, each variant's GPU
 * operations paired by role (compare_kernels.c) and its findings diffed by id
 * (compare_findings.c). Writers and figures read this data; nothing here formats a
 * document. */
#include "compare_parts.h"
#include "alloc.h"

#include "archive_read.h"
#include "err.h"
#include "exit_codes.h"
#include "findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int compare_load(compare_archive *ar, const char *dir, char *err, size_t errlen)
{
    memset(ar, 0, sizeof *ar);
    trace_init(&ar->t);
    snprintf(ar->dir, sizeof ar->dir, "%s", dir);
    if (archive_read(dir, &ar->t, &ar->r, err, errlen) != 0)
        return EXIT_BAD_ARCHIVE;
    return compare_analyse(ar, err, errlen);
}

int compare_analyse(compare_archive *ar, char *err, size_t errlen)
{
    if (analysis_build(&ar->a, &ar->t, &ar->r, err, errlen) != 0) {
        trace_free(&ar->t);
        return EXIT_BAD_ARCHIVE;
    }
    findings_derive(&ar->a);
    const attn_shape *s = &ar->r.shape;
    double full = 4.0 * s->batch * s->heads * (double)s->seq * s->seq * s->dim;
    ar->flops = ar->r.causal ? full / 2 : full;
    return EXIT_OK;
}

void compare_archive_free(compare_archive *ar)
{
    analysis_free(&ar->a);
    trace_free(&ar->t);
}

/* ---- per-variant cells -------------------------------------------------- */

/* A row for `name` already: its own, or that of a variant it stands for (an import of PyTorch's
 * kineto_naive is the row of our naive, analysis_counterpart). */
static int counterpart_listed(const compare_data *m, const char *name)
{
    const char *plain = analysis_plain_name(name);
    for (int i = 0; i < m->n_variants; i++)
        if (!strcmp(m->variants[i].name, name) || !strcmp(analysis_plain_name(m->variants[i].name), plain))
            return 1;
    return 0;
}

static void fill_cell(compare_cell *c, const compare_archive *ar, const char *name, int throughput)
{
    memset(c, 0, sizeof *c);
    /* No ratio until one is computed: NAN, never a 0 that reads as a value. */
    compare_ratio none = {.ci = {NAN, NAN, NAN}, .verdict = VERDICT_NONE};
    c->metric_ratio = c->cpu_ratio = c->ops_ratio = none;
    c->va = analysis_counterpart(&ar->a, name); /* PyTorch's kineto_sdpa_flash beside our flash */
    c->state = "not run";
    c->reason = "";
    if (!c->va)
        return;
    c->state = variant_status_name(c->va->result->status);
    c->reason = c->va->result->error;
    int n = c->va->n_forwards;
    c->n = n;
    size_t bytes = sizeof(double) * (size_t)(n ? n : 1);
    c->metric = malloc(bytes);
    c->cpu = malloc(bytes);
    c->ops = malloc(bytes);
    if (!c->metric || !c->cpu || !c->ops)
        attn_oom();
    for (int i = 0; i < n; i++) {
        const forward *fw = &c->va->forwards[i];
        c->metric[i] = throughput ? (fw->cuda_us > 0 ? ar->flops / (fw->cuda_us * 1e-6) / 1e12 : NAN) : fw->cuda_us;
        c->cpu[i] = fw->cpu_us;
        c->ops[i] = fw->n_ops;
    }
    c->metric_stats = stats_of(c->metric, n);
    c->cpu_stats = stats_of(c->cpu, n);
    c->ops_stats = stats_of(c->ops, n);
}

static int comparable(const compare_cell *c) { return c->va && c->va->result->status == VARIANT_OK && c->n > 0; }

/* ---- the data ----------------------------------------------------------- */

static void unique_labels(compare_data *m)
{
    for (int i = 0; i < m->n; i++) {
        compare_archive *ar = m->in[i];
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s", ar->dir);
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/')
            path[--len] = '\0';
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        snprintf(ar->label, sizeof ar->label, "%s", *base ? base : "archive");
        int same = 0;
        for (int j = 0; j < i; j++)
            if (!strncmp(m->in[j]->label, ar->label, strlen(ar->label)))
                same++;
        if (same) {
            char tail[16];
            snprintf(tail, sizeof tail, " (%d)", same + 1);
            size_t room = sizeof ar->label - strlen(tail) - 1;
            if (strlen(ar->label) > room)
                ar->label[room] = '\0';
            strcat(ar->label, tail);
        }
    }
}

/* How many of an archive's variants are model traces (model_is_step_trace). */
static int model_traces_in(const compare_archive *ar)
{
    int n = 0;
    for (int v = 0; v < ar->a.n; v++)
        n += model_is_step_trace(&ar->a.v[v]);
    return n;
}

/* A run's shape as the refusal names it: BxHxSxD, with the key/value heads and the queries when
 * they differ from the heads and the keys (two shapes that differ only there must read apart). */
static void shape_words(const attn_shape *s, char *out, size_t n)
{
    int len = snprintf(out, n, "%dx%dx%dx%d", s->batch, s->heads, s->seq, s->dim);
    if (len > 0 && (size_t)len < n && attn_shape_is_gqa(s))
        len += snprintf(out + len, n - (size_t)len, " (kv_heads %d)", attn_kv_heads(s));
    if (len > 0 && (size_t)len < n && attn_shape_is_decode(s))
        snprintf(out + len, n - (size_t)len, " (q_seq %d)", attn_q_seq(s));
}

/* The shapes and dtypes of the runs against the baseline's: equal, or compared in TFLOP/s
 * under --allow-shape-mismatch (m->throughput); an import without a shape, or a model's
 * traces against a run of one attention shape, compare neither way. EXIT_OK or EXIT_USAGE. */
static int check_shapes(compare_data *m, const compare_options *opt, char *err, size_t errlen)
{
    const run_info *b = &m->in[0]->r;
    for (int i = 1; i < m->n; i++) {
        const run_info *r = &m->in[i]->r;
        int shape_differs = memcmp(&r->shape, &b->shape, sizeof r->shape) != 0 || r->causal != b->causal;
        int dtype_differs = strcmp(r->dtype, b->dtype) != 0;
        /* An import without --shape records none: no time per shape nor throughput compares. */
        const run_info *unshaped = !run_info_shape_recorded(b) ? b : !run_info_shape_recorded(r) ? r : NULL;
        const compare_archive *ua = unshaped == b ? m->in[0] : m->in[i], *sa = unshaped == b ? m->in[i] : m->in[0];
        if ((shape_differs || dtype_differs) && unshaped && model_traces_in(ua) && !model_traces_in(sa)) {
            /* --shape would be the wrong advice: a model's step is no one attention shape */
            snprintf(err, errlen,
                     "%s holds model traces (ProfilerStep#N steps with their CPU ops) and %s none: a model's step is "
                     "not a forward of one attention shape, so nothing of the one pairs with the other; compare a "
                     "model import with another import of a model",
                     ua->label, sa->label);
            return EXIT_USAGE;
        }
        if ((shape_differs || dtype_differs) && unshaped) {
            snprintf(err, errlen,
                     "%s records no shape (its traces carry none), so it compares with %s neither per forward nor "
                     "in TFLOP/s; import it again with --shape BxHxSxD[,dtype][,causal]",
                     unshaped == b ? m->in[0]->label : m->in[i]->label, unshaped == b ? m->in[i]->label
                                                                                      : m->in[0]->label);
            return EXIT_USAGE;
        }
        if ((shape_differs || dtype_differs) && !opt->allow_shape_mismatch) {
            char rs[96], bs[96];
            shape_words(&r->shape, rs, sizeof rs);
            shape_words(&b->shape, bs, sizeof bs);
            snprintf(err, errlen,
                     "%s is %s %s%s but the baseline %s is %s %s%s; compare runs of one shape, "
                     "or pass --allow-shape-mismatch to compare throughput (TFLOP/s)",
                     m->in[i]->label, rs, r->dtype, r->causal ? " causal" : "", m->in[0]->label, bs, b->dtype,
                     b->causal ? " causal" : "");
            return EXIT_USAGE;
        }
        if (shape_differs || dtype_differs)
            m->throughput = 1;
    }
    return EXIT_OK;
}

/* One variant across the archives: its cells, kernels and roles per archive, each
 * archive's ratios against the baseline's, the kernel pairing and the findings diff. */
static void build_variant(compare_data *m, compare_variant *cv)
{
    for (int i = 0; i < m->n; i++) {
        fill_cell(&cv->cell[i], m->in[i], cv->name, m->throughput);
        compare_cell_passes(&cv->cell[i], &m->in[i]->r);
        cv->n_kernels[i] = compare_kernels_summarise(cv->cell[i].va, &m->in[i]->t.device, &cv->kernels[i]);
        compare_roles_summarise(cv->cell[i].va, cv->roles[i]);
    }
    for (int i = 1; i < m->n; i++)
        for (int r = 0; r < ROLE_COUNT; r++) {
            const role_time *b = &cv->roles[0][r];
            role_time *o = &cv->roles[i][r];
            /* Times of different shapes are different work: no ratio then. */
            if (b->n && o->n && !m->throughput)
                o->ratio = compare_ratio_of(b->us, b->n, o->us, o->n, m->min_effect, 0);
        }
    for (int i = 0; i < m->n; i++) {
        const variant_analysis *va = cv->cell[i].va;
        compare_backward *b = &cv->bwd[i];
        if (!va || va->n_backwards <= 0 || va->result->bwd.status != VARIANT_OK)
            continue;
        b->us = malloc(sizeof(double) * (size_t)va->n_backwards);
        if (!b->us)
            attn_oom();
        for (int k = 0; k < va->n_backwards; k++)
            b->us[b->n++] = va->backwards[k].cuda_us;
        b->st = stats_of(b->us, b->n);
        m->backward = 1;
    }
    /* Backward times of different shapes are different work: no ratio then, as for the roles. */
    for (int i = 1; i < m->n; i++)
        if (cv->bwd[0].n && cv->bwd[i].n && !m->throughput)
            cv->bwd[i].ratio = compare_ratio_of(cv->bwd[0].us, cv->bwd[0].n, cv->bwd[i].us, cv->bwd[i].n,
                                                m->min_effect, 0);
    compare_cell *base = &cv->cell[0];
    /* The baseline against itself: exactly 1 (no verdict, it is the reference). */
    if (comparable(base)) {
        compare_ratio one = {.ci = {1, 1, 1}, .verdict = VERDICT_NONE};
        base->metric_ratio = base->cpu_ratio = base->ops_ratio = one;
    }
    for (int i = 1; i < m->n; i++) {
        compare_cell *c = &cv->cell[i];
        if (comparable(base) && comparable(c)) {
            /* Both runs hold replicates: the drift between their own passes is the floor
             * (compare_measurement.c); else the documented floors (compare.h). */
            c->replicate_floor = compare_replicates_apply(base, c);
            c->metric_floor = c->replicate_floor ? fmax(base->pass_spread_metric, c->pass_spread_metric)
                                                 : m->min_effect;
            /* CPU time: never below the documented floor. Three passes in one process missed the
             * drift between processes: two identical batches came out 0.62x "faster" against a
             * 42% between-pass spread (bench/results/2026-12-02-measurement.md). */
            c->cpu_floor = c->replicate_floor
                               ? fmax(m->cpu_floor, fmax(base->pass_spread_cpu, c->pass_spread_cpu))
                               : m->cpu_floor;
            c->metric_ratio = compare_ratio_of(base->metric, base->n, c->metric, c->n, c->metric_floor,
                                               m->throughput);
            c->cpu_ratio = compare_ratio_of(base->cpu, base->n, c->cpu, c->n, c->cpu_floor, 0);
            c->ops_ratio = compare_ratio_of(base->ops, base->n, c->ops, c->n, 0, 0);
        }
        if (base->va && c->va) {
            compare_kernels_diff(&cv->diff[i], cv->kernels[0], cv->n_kernels[0], cv->kernels[i], cv->n_kernels[i],
                                 m->min_effect);
            compare_findings_diff(&cv->diff[i], base->va, c->va);
        }
    }
}

int compare_build(compare_data *m, compare_archive **in, int n, const compare_options *opt, char *err,
                  size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (n < 2 || n > COMPARE_MAX_ARCHIVES) {
        snprintf(err, errlen, "compare takes 2 to %d archives, got %d", COMPARE_MAX_ARCHIVES, n);
        return EXIT_USAGE;
    }
    if (opt->baseline < 0 || opt->baseline >= n) {
        snprintf(err, errlen, "--baseline: no such archive among the %d given", n);
        return EXIT_USAGE;
    }
    /* The baseline goes first: every table reads left to right from it. */
    m->n = n;
    m->in[0] = in[opt->baseline];
    for (int i = 0, k = 1; i < n; i++)
        if (i != opt->baseline)
            m->in[k++] = in[i];
    m->baseline = 0;
    m->min_effect = opt->min_effect;
    m->cpu_floor = opt->min_effect > COMPARE_CPU_NOISE_FLOOR ? opt->min_effect : COMPARE_CPU_NOISE_FLOOR;
    unique_labels(m);

    int src = check_shapes(m, opt, err, errlen);
    if (src != EXIT_OK)
        return src;

    int l2rc = compare_l2_check(m->in, n, opt->allow_l2_mismatch, err, errlen);
    if (l2rc != EXIT_OK)
        return l2rc;
    compare_fields_fill(m);

    int cap = 0;
    for (int i = 0; i < n; i++)
        cap += m->in[i]->a.n;
    m->variants = calloc((size_t)(cap ? cap : 1), sizeof *m->variants);
    if (!m->variants)
        attn_oom();
    for (int i = 0; i < n; i++)
        for (int v = 0; v < m->in[i]->a.n; v++) {
            const char *name = m->in[i]->a.v[v].result->name;
            if (!counterpart_listed(m, name))
                snprintf(m->variants[m->n_variants++].name, sizeof m->variants[0].name, "%s", name);
        }
    for (int v = 0; v < m->n_variants; v++)
        build_variant(m, &m->variants[v]);
    int rc = compare_traces_build(m, opt, err, errlen);
    if (rc != EXIT_OK)
        compare_free(m);
    return rc;
}

void compare_free(compare_data *m)
{
    for (int v = 0; v < m->n_variants; v++) {
        compare_variant *cv = &m->variants[v];
        for (int i = 0; i < m->n; i++) {
            free(cv->bwd[i].us);
            free(cv->cell[i].metric);
            free(cv->cell[i].cpu);
            free(cv->cell[i].ops);
            for (int k = 0; k < cv->n_kernels[i]; k++)
                free(cv->kernels[i][k].samples);
            free(cv->kernels[i]);
            free(cv->diff[i].rows);
            free(cv->diff[i].only_base);
            free(cv->diff[i].only_other);
            for (int r = 0; r < ROLE_COUNT; r++)
                free(cv->roles[i][r].us);
            free(cv->diff[i].gap_base);
            free(cv->diff[i].gap_other);
        }
    }
    free(m->variants);
    compare_traces_free(&m->traces);
    memset(m, 0, sizeof *m);
}
