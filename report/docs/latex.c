/* LaTeX for papers: summary.tex beside every report and compare.tex beside every
 * comparison, booktabs tables a paper \input's as they are; and the findings'
 * Markdown read back as plain text (summary.csv) or LaTeX. Archive strings are
 * escaped here as everywhere (escape.h): a name never becomes a command. */
#include "latex.h"
#include "units.h"
#include "measurement_text.h"
#include "alloc.h"

#include "finding_phrases.h"
#include "findings.h"
#include "model_inputs.h"

#include "escape.h"
#include "series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- findings' Markdown, span by span ------------------------------------- */

void md_spans(const char *md, md_span_fn span, void *ctx)
{
    char *buf = malloc(strlen(md) + 1);
    if (!buf)
        attn_oom();
    size_t n = 0;
    const char *p = md;
    while (*p) {
        if (*p == '`') {
            size_t fence = 0;
            while (p[fence] == '`')
                fence++;
            /* the closing run of exactly `fence` backticks */
            const char *q = p + fence, *close = NULL;
            while (*q) {
                if (*q == '`') {
                    size_t r = 0;
                    while (q[r] == '`')
                        r++;
                    if (r == fence) {
                        close = q;
                        break;
                    }
                    q += r;
                } else {
                    q++;
                }
            }
            if (close) {
                if (n)
                    span(ctx, buf, n, 0);
                n = 0;
                const char *s = p + fence, *e = close;
                if (e - s >= 2 && s[0] == ' ' && e[-1] == ' ') /* the padding of a span that starts with '`' */
                    s++, e--;
                for (const char *c = s; c < e; c++) {
                    if (c[0] == '\\' && c[1] == '|' && c + 1 < e) /* "\|" in a table cell is '|' */
                        c++;
                    buf[n++] = *c;
                }
                span(ctx, buf, n, 1);
                n = 0;
                p = close + fence;
                continue;
            }
            /* an unclosed run is literal text */
            for (size_t i = 0; i < fence; i++)
                buf[n++] = '`';
            p += fence;
            continue;
        }
        if (p[0] == '\\' && p[1] && strchr("\\`|[]!<*_#>-+.(){}", p[1])) {
            buf[n++] = p[1];
            p += 2;
            continue;
        }
        buf[n++] = *p++;
    }
    if (n)
        span(ctx, buf, n, 0);
    free(buf);
}

static void plain_span(void *ctx, const char *t, size_t len, int is_code)
{
    (void)is_code;
    fwrite(t, 1, len, (FILE *)ctx);
}

char *md_to_plain(const char *md)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    md_spans(md, plain_span, f);
    fclose(f);
    return buf;
}

/* ---- LaTeX ------------------------------------------------------------------ */

static const struct {
    const char *utf8, *tex;
} latex_chars[] = {
    {"\xc2\xb5", "\\textmu{}"},            /* µ */
    {"\xe2\x86\x92", "\\ensuremath{\\rightarrow}"}, /* → */
    {"\xe2\x80\x93", "--"},                 /* – */
    {"\xe2\x80\x94", "---"},                /* — */
    {"\xc3\x97", "\\ensuremath{\\times}"},  /* × */
    {"\xe2\x80\xa6", "\\ldots{}"},          /* … */
    {"\xe2\x89\xa5", "\\ensuremath{\\geq}"}, /* ≥ */
    {"\xe2\x89\xa4", "\\ensuremath{\\leq}"}, /* ≤ */
    {"\xe2\x80\x96", "\\ensuremath{\\|}"},  /* ‖ */
    {"\xe2\x88\x9a", "\\ensuremath{\\surd}"}, /* √ */
    {"\xc2\xb7", "\\ensuremath{\\cdot}"},   /* · */
    {"\xe2\x88\x92", "\\ensuremath{-}"},    /* − */
    {"\xe2\x89\x88", "\\ensuremath{\\approx}"}, /* ≈ */
    {"\xe2\x89\xa0", "\\ensuremath{\\neq}"}, /* ≠ */
};

static void latex_escaped(FILE *f, const char *s, size_t len, int code)
{
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) {
            fputc(' ', f);
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t k;
            for (k = 0; k < sizeof latex_chars / sizeof *latex_chars; k++) {
                size_t m = strlen(latex_chars[k].utf8);
                if (i + m <= len && !memcmp(s + i, latex_chars[k].utf8, m)) {
                    fputs(latex_chars[k].tex, f);
                    i += m;
                    break;
                }
            }
            if (k == sizeof latex_chars / sizeof *latex_chars) { /* any other character: '?' */
                fputc('?', f);
                i++;
                while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
                    i++;
            }
            continue;
        }
        switch (c) {
        case '\\': fputs("\\textbackslash{}", f); break;
        case '{': fputs("\\{", f); break;
        case '}': fputs("\\}", f); break;
        case '#': fputs("\\#", f); break;
        case '$': fputs("\\$", f); break;
        case '%': fputs("\\%", f); break;
        case '&': fputs("\\&", f); break;
        case '~': fputs("\\textasciitilde{}", f); break;
        case '^': fputs("\\textasciicircum{}", f); break;
        case '_': fputs(code ? "\\_\\allowbreak{}" : "\\_", f); break;
        case '<': fputs("\\textless{}", f); break;
        case '>': fputs("\\textgreater{}", f); break;
        case '|': fputs("\\textbar{}", f); break;
        case '"': fputs("\\textquotedbl{}", f); break;
        case '-': fputs(code ? "-{}" : "-", f); break; /* no -- ligature inside a name */
        default: fputc(c, f);
        }
        i++;
    }
}

void esc_latex_text(FILE *f, const char *s, size_t len) { latex_escaped(f, s, len, 0); }

void esc_latex_code(FILE *f, const char *s, size_t len)
{
    fputs("\\texttt{", f);
    latex_escaped(f, s, len, 1);
    fputc('}', f);
}

static void latex_span(void *ctx, const char *t, size_t len, int is_code)
{
    if (is_code)
        esc_latex_code((FILE *)ctx, t, len);
    else
        esc_latex_text((FILE *)ctx, t, len);
}

void latex_from_md(FILE *f, const char *md) { md_spans(md, latex_span, f); }

static void tex(FILE *f, const char *s) { esc_latex_text(f, s, strlen(s)); }
static void tex_code(FILE *f, const char *s) { esc_latex_code(f, s, strlen(s)); }

static void version3(int v, char *out, size_t n)
{
    if (v <= 0)
        snprintf(out, n, "--");
    else
        snprintf(out, n, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
}

/* "NVIDIA H200 (driver …, CUDA …, cuBLAS …, cuDNN …)" and the shape, for a caption. */
static void caption_setup(FILE *f, const run_info *r)
{
    char cublas[32], cudnn[32];
    version3(r->cublas_version, cublas, sizeof cublas);
    version3(r->cudnn_version, cudnn, sizeof cudnn);
    tex(f, r->device.name[0] ? r->device.name : "a GPU whose name is not recorded");
    /* what the archive does not hold is said once, never printed as 0 or an empty field */
    fputs(" (", f);
    if (r->driver_version[0]) {
        fputs("driver ", f);
        tex(f, r->driver_version);
        fputs(", ", f);
    }
    if (r->cuda_runtime_version > 0)
        fprintf(f, "CUDA runtime %d.%d", r->cuda_runtime_version / 1000, r->cuda_runtime_version % 1000 / 10);
    else
        fputs("CUDA runtime not recorded", f);
    if (r->cublas_version > 0 || r->cudnn_version > 0)
        fprintf(f, ", cuBLAS %s, cuDNN %s)", cublas, cudnn);
    else
        fputs(", cuBLAS and cuDNN versions not recorded)", f);
    if (r->shape.batch > 0 && r->shape.heads > 0 && r->shape.seq > 0 && r->shape.dim > 0) {
        fprintf(f, "; $B=%d$, $H=%d$, $S=%d$, $D=%d$", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
        if (r->dtype[0]) {
            fputs(", ", f);
            tex(f, r->dtype);
        }
        fputs(r->causal ? ", causal" : ", not causal", f);
    } else if (model_inputs_any(r))
        fputs("; attention inputs recorded with record\\_shapes", f);
    else
        fputs("; shape not recorded", f);
}

static void us_number(FILE *f, double us) { fprintf(f, us >= 100 ? "%.0f" : "%.1f", us); }

/* "624 (620--625)": µs, the unit in the column head; precision as report.md's. */
static void us_cell(FILE *f, const stats *s)
{
    if (!s->n || !isfinite(s->median)) {
        fputs("--", f);
        return;
    }
    us_number(f, s->median);
    fputs(" (", f);
    us_number(f, s->min);
    fputs("--", f);
    us_number(f, s->max);
    fputc(')', f);
}

char *report_summary_tex(const analysis *a)
{
    const run_info *r = a->run;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    fputs("% attnprof summary.tex: \\input{summary.tex} in a document with \\usepackage{booktabs}\n"
          "% With \\usepackage[T1]{fontenc} also \\usepackage{lmodern} (or cm-super): else T1 text is Type 3 bitmaps.\n"
          "% Generated from this archive's trace.json and run.json; every number is derived from the records.\n",
          f);
    fputs("\\begin{table*}[tbp]\n\\centering\n\\small\n\\setlength{\\tabcolsep}{4pt}\n", f);
    /* a model's trace imported is no set of attention variants */
    fputs(series_applies(a) || !r->imported ? "\\caption{Attention variants on " : "\\caption{Imported traces on ", f);
    caption_setup(f, r);
    /* issue 25: with a measurement plan the count is each variant's own (stop rule, throttled
     * forwards left out), so it is said per variant in report.md, and the plan here */
    if (r->measurement.recorded) {
        char plan[1024];
        measurement_plan_text(a, plan, sizeof plan);
        fputs(". Measurement: ", f);
        tex(f, plan);
        fputs(". Median of each variant's recorded forwards", f);
    } else
        fprintf(f, ". Median of %d recorded forwards per variant", r->iters);
    fprintf(f, ", min--max in parentheses; CUDA time is the sum of "
               "the GPU operations of a forward, CPU time %s. "
               "Recorded ",
            r->producer == PRODUCER_ATTNPROF ? "the host time of the forward call (under CUPTI)"
            : r->producer == PRODUCER_PYTORCH ? "the duration of the forward's range under PyTorch's profiler, its "
                                                "dispatcher included"
                                              : "the duration of the forward's range in the traces");
    tex(f, r->date);
    fputs(" with attnprof ", f);
    tex(f, r->tool_version);
    int series = series_applies(a); /* the series' column only where it published the variants */
    if (series)
        fputs(". The last column cites the series' own A100-SXM4-80GB numbers (kernels per forward; CUDA time per "
              "forward, or $^\\ast$ the average \\texttt{*\\_fwd} CUDA time); the series does not state its shape, "
              "so its times may be for another shape.}\n\\label{tab:attnprof-summary}\n", f);
    else
        fputs(".}\n\\label{tab:attnprof-summary}\n", f);
    fputs(series ? "\\begin{tabular}{lrrrlr}\n\\toprule\n" : "\\begin{tabular}{lrrrl}\n\\toprule\n", f);
    fprintf(f, "Variant & Ops / forward & CUDA time (\\textmu{}s) & CPU time (\\textmu{}s) & Rel.\\ error%s \\\\\n"
               "\\midrule\n",
            series ? " & Series, A100: kernels; CUDA (\\textmu{}s)" : "");
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        const variant_result *vr = va->result;
        tex_code(f, vr->name);
        if (vr->status != VARIANT_OK) {
            fputs(" (", f);
            tex(f, variant_status_name(vr->status));
            fputc(')', f);
        }
        fputs(" & ", f);
        if (va->n_forwards)
            fprintf(f, "%d", va->ops_per_forward);
        else
            fputs("--", f);
        fputs(" & ", f);
        us_cell(f, &va->cuda_us);
        fputs(" & ", f);
        us_cell(f, &va->cpu_us);
        fputs(" & ", f);
        if (isfinite(vr->rel_error))
            fprintf(f, "%.1e", vr->rel_error);
        else
            fputs("--", f);
        const series_fact *sf = series_fact_of(vr->name);
        if (series)
            fputs(" & ", f);
        if (!series)
            ;
        else if (!sf)
            fputs("--", f);
        else if (isfinite(sf->cuda_us))
            fprintf(f, "%d; %.1f", sf->kernels, sf->cuda_us);
        else if (isfinite(sf->fwd_cuda_ms))
            fprintf(f, "%d; %.0f$^\\ast$", sf->kernels, sf->fwd_cuda_ms * 1000);
        else
            fprintf(f, "%d; --", sf->kernels);
        fputs(" \\\\\n", f);
    }
    fputs("\\bottomrule\n\\end{tabular}\n\\end{table*}\n\n", f);

    /* The findings, one row per variant: the summary's short phrases (finding_phrases.h). */
    fputs("\\begin{table*}[tbp]\n\\centering\n\\footnotesize\n", f);
    fputs("\\caption{What the trace revealed, per variant (", f);
    caption_setup(f, r);
    fputs("); derived from the records by attnprof.}\n\\label{tab:attnprof-findings}\n", f);
    fputs("\\begin{tabular}{@{}p{0.16\\linewidth}p{0.8\\linewidth}@{}}\n\\toprule\n"
          "Variant & What the trace revealed \\\\\n\\midrule\n",
          f);
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        tex_code(f, va->result->name);
        fputs(" & ", f);
        finding_cell c;
        finding_cell_build(va, &c);
        for (int j = 0; j < c.n; j++) {
            fputs(j ? "; " : "", f);
            tex(f, c.phrase[j]);
        }
        if (c.more)
            fprintf(f, "%s%d more in the report", c.n ? "; " : "", c.more);
        fputs(" \\\\\n", f);
    }
    fputs("\\bottomrule\n\\end{tabular}\n\\end{table*}\n", f);
    fclose(f);
    return buf;
}

/* ---- compare.tex: a pair of model traces (compare_traces.c) ---------------------------- */

/* "0.59$\times$ [0.59--0.59] & faster", "0.59$\times$ (medians) & no verdict (2 steps)", or "-- & --"
 * when a side lacks the measure. */
static void trace_ratio_tex(FILE *f, const trace_pair *pr, const compare_ratio *r)
{
    if (!isfinite(r->ci.ratio))
        fputs("-- & --", f);
    else if (r->verdict != VERDICT_NONE) {
        int d = units_ratio_decimals(r->ci.lo, r->ci.hi);
        fprintf(f, "%.*f$\\times$ [%.*f--%.*f] & %s", d, r->ci.ratio, d, r->ci.lo, d, r->ci.hi,
                compare_verdict_word(r->verdict));
    }
    else if (pr->step[0].n == pr->step[1].n)
        fprintf(f, "%.2f$\\times$ (medians) & no verdict (%d steps)", r->ci.ratio, pr->step[0].n);
    else
        fprintf(f, "%.2f$\\times$ (medians) & no verdict (%d and %d steps)", r->ci.ratio, pr->step[0].n, pr->step[1].n);
}

static void trace_side_tex(FILE *f, const compare_model *m, const trace_pair *pr, int j)
{
    tex_code(f, pr->va[j]->result->name);
    fputs(" (", f);
    tex_code(f, m->in[j ? pr->archive : 0]->label);
    fputc(')', f);
}

/* One table per pair: the step's CUDA time and each phase's attention, all parts, µs per step
 * each side (median and min--max over the steps), the ratio with its interval and the verdict. */
static void trace_pair_tex(FILE *f, const compare_model *m, const trace_pair *pr, int k)
{
    fputs("\n\\begin{table*}[tbp]\n\\centering\n\\small\n\\setlength{\\tabcolsep}{4pt}\n\\caption{Model traces, step by step: ", f);
    trace_side_tex(f, m, pr, 1);
    fputs(" against ", f);
    trace_side_tex(f, m, pr, 0);
    fprintf(f, ", the baseline. CUDA time per step (\\textmu{}s), median (min--max) over %d and %d steps "
               "(ProfilerStep\\#N), and attention, all parts: every attention role of the phase together (eager "
               "attention's kernels against one fused op), a step without it counting 0. ",
            pr->step[0].n, pr->step[1].n);
    if (pr->verdicts)
        fprintf(f, "Ratio of medians with a seeded 95\\%% bootstrap interval of the steps; same when the whole "
                   "interval lies within $\\times$/$\\div$ %.2f (the noise floor of CUDA time), faster or slower when "
                   "it lies wholly beyond, ambiguous when it straddles the edge.",
                1 + m->min_effect);
    else
        fprintf(f, "Ratio of the medians alone: no interval and no verdict below %d steps in each run.",
                COMPARE_MIN_STEPS);
    fprintf(f, "}\n\\label{tab:attnprof-compare-model-%d}\n", k + 1);
    fputs("\\begin{tabular}{lrrll}\n\\toprule\nMeasure & ", f);
    tex_code(f, m->in[0]->label);
    fputs(" & ", f);
    tex_code(f, m->in[pr->archive]->label);
    fputs(" & Ratio [95\\%] & Verdict \\\\\n\\midrule\nCUDA time per step & ", f);
    us_cell(f, &pr->step[0]);
    fputs(" & ", f);
    us_cell(f, &pr->step[1]);
    fputs(" & ", f);
    trace_ratio_tex(f, pr, &pr->step_ratio);
    fputs(" \\\\\n", f);
    for (int r = 0; r < pr->n_rows; r++) {
        const trace_role_row *row = &pr->rows[r];
        if (!row->attention_total)
            continue;
        fputs("Attention, all parts, ", f);
        tex(f, model_phase_name(row->phase));
        for (int j = 0; j < 2; j++) {
            fputs(" & ", f);
            if (row->present[j])
                us_cell(f, &row->st[j]);
            else
                fputs("none", f);
        }
        fputs(" & ", f);
        trace_ratio_tex(f, pr, &row->ratio);
        fputs(" \\\\\n", f);
    }
    fputs("\\bottomrule\n\\end{tabular}\n\\end{table*}\n", f);
}

char *compare_tex(const compare_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    const compare_archive *base = m->in[m->baseline];
    fputs("% attnprof compare.tex: \\input{compare.tex} in a document with \\usepackage{booktabs}\n"
          "% With \\usepackage[T1]{fontenc} also \\usepackage{lmodern} (or cm-super): else T1 text is Type 3 bitmaps.\n"
          "% Generated from the archives' trace.json and run.json.\n",
          f);
    fputs("\\begin{table*}[tbp]\n\\centering\n\\small\n\\caption{", f);
    fputs(m->throughput ? "Throughput (TFLOP/s) per forward" : "CUDA time per forward (\\textmu{}s)", f);
    fputs(", median (min--max) of each run's recorded forwards, and each run against the baseline (", f);
    tex_code(f, base->label);
    fputs("): ratio of medians with a seeded 95\\% bootstrap interval", f);
    int replicates = 0; /* issue 25: some ratio judged against the runs' between-pass spread */
    for (int v = 0; v < m->n_variants; v++)
        for (int i = 1; i < m->n; i++)
            replicates |= m->variants[v].cell[i].replicate_floor;
    fprintf(f, "; same when the whole interval lies within $\\times$/$\\div$ %.2f (the run-to-run noise floor%s), "
               "faster or slower when it lies wholly beyond, ambiguous when it straddles the edge. Baseline: ",
            1 + m->min_effect,
            replicates ? "; where both runs hold replicates, $1+f$ with $f$ the larger relative range of their "
                         "per-pass medians instead, listed in compare.md"
                       : "");
    caption_setup(f, &base->r);
    fputc('.', f);
    if (m->differs_sentence[0]) {
        fputc(' ', f);
        tex(f, m->differs_sentence); /* plain text of archive values, not Markdown: a '`' is a '`' */
    }
    fputs("}\n\\label{tab:attnprof-compare}\n", f);
    fputs("\\begin{tabular}{l", f);
    for (int i = 0; i < m->n; i++)
        fputs(i == m->baseline ? "r" : "rl", f);
    fputs("}\n\\toprule\nVariant", f);
    for (int i = 0; i < m->n; i++) {
        fputs(" & ", f);
        tex_code(f, m->in[i]->label);
        if (i != m->baseline)
            fputs(" & vs.\\ baseline", f);
    }
    fputs(" \\\\\n\\midrule\n", f);
    for (int v = 0; v < m->n_variants; v++) {
        const compare_variant *cv = &m->variants[v];
        tex_code(f, cv->name);
        for (int i = 0; i < m->n; i++) {
            const compare_cell *c = &cv->cell[i];
            fputs(" & ", f);
            if (c->va && c->n)
                us_cell(f, &c->metric_stats);
            else
                tex(f, c->state ? c->state : "not run");
            if (i == m->baseline)
                continue;
            fputs(" & ", f);
            const compare_ratio *q = &c->metric_ratio;
            if (q->verdict == VERDICT_NONE || !isfinite(q->ci.ratio))
                fputs("--", f);
            else {
                int d = units_ratio_decimals(q->ci.lo, q->ci.hi);
                fprintf(f, "%.*f$\\times$ [%.*f--%.*f] %s", d, q->ci.ratio, d, q->ci.lo, d, q->ci.hi,
                        compare_verdict_word(q->verdict));
            }
        }
        fputs(" \\\\\n", f);
    }
    fputs("\\bottomrule\n\\end{tabular}\n\\end{table*}\n", f);
    for (int k = 0; k < m->traces.n_pairs; k++)
        trace_pair_tex(f, m, &m->traces.pairs[k], k);
    fclose(f);
    return buf;
}
