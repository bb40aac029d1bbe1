/* The paper's tables: summary.tex beside every report and compare.tex beside every
 * comparison, booktabs tables a paper \input's as they are. Each table has a caption of at
 * most two lines (LATEX_CAPTION_MAX_CHARS: what the table shows) and a note under it with the
 * detail (GPU, versions, shape, how it was measured, the rule of a verdict). One decimal rule
 * per column: times as report.md prints them (one decimal below 100 µs, none from 100 µs), a
 * ratio column every ratio with the decimals its tightest interval needs (units_ratio_decimals). Archive strings are escaped as everywhere (latex.h). */
#include "latex.h"

#include "alloc.h"
#include "compare_doc_md.h"
#include "finding_phrases.h"
#include "findings.h"
#include "measurement_text.h"
#include "model_inputs.h"
#include "model_roles.h"
#include "series.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void tex(FILE *f, const char *s) { esc_latex_text(f, s, strlen(s)); }
static void tex_code(FILE *f, const char *s) { esc_latex_code(f, s, strlen(s)); }

/* The preamble every table file opens with: what to \usepackage. */
static void preamble(FILE *f, const char *what)
{
    fprintf(f, "%% attnprof %s: \\input{%s} in a document with \\usepackage{booktabs}\n"
               "%% Text is UTF-8: \\usepackage[utf8]{inputenc} (the default since LaTeX 2018) and \\usepackage[T1]{fontenc}\n"
               "%% with \\usepackage{lmodern} (or cm-super), else T1 text is Type 3 bitmaps; a character of a "
               "script T1 does not set is written [U+XXXX].\n",
            what, what);
}

/* The note under a table, in the table's width. */
static void note_open(FILE *f) { fputs("\\par\\smallskip\n\\begin{minipage}{\\linewidth}\\footnotesize\\textit{Note:} ", f); }
static void note_close(FILE *f) { fputs("\n\\end{minipage}\n", f); }

static void version3(int v, char *out, size_t n)
{
    if (v <= 0)
        snprintf(out, n, "--");
    else
        snprintf(out, n, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
}

/* "NVIDIA H200 (driver …, CUDA runtime 13.0, cuBLAS 13.1.0, cuDNN 9.19.0); $B=8$, …" */
static void setup_text(FILE *f, const run_info *r)
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

/* ---- one decimal rule per column ------------------------------------------------------ */

/* A time as report.md prints it (units_us_column's rule: one decimal below 100 µs, none from
 * 100 µs), so that the paper's table and the report cannot round one number two ways. */
static void us_number(FILE *f, double us) { fprintf(f, us >= 100 ? "%.0f" : "%.1f", us); }

/* "624 (620--625)": µs, the unit in the column head. */
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

/* Decimals of a ratio column: the most that any of its intervals needs. */
static int ratio_decimals_of(const compare_ratio *const *cells, int n)
{
    int d = 2;
    for (int i = 0; i < n; i++)
        if (cells[i] && cells[i]->verdict != VERDICT_NONE && isfinite(cells[i]->ci.ratio)) {
            int c = units_ratio_decimals(cells[i]->ci.lo, cells[i]->ci.hi);
            d = c > d ? c : d;
        }
    return d;
}

/* ---- summary.tex ------------------------------------------------------------------------ */

/* The summary table's note: setup, measurement, what the times are, the archive's date and tool. */
static void summary_note(FILE *f, const analysis *a, int series)
{
    const run_info *r = a->run;
    note_open(f);
    setup_text(f, r);
    if (r->measurement.recorded) { /* each variant's own count: said in report.md, the plan here */
        char plan[1024];
        measurement_plan_text(a, plan, sizeof plan);
        fputs(". Measurement: ", f);
        tex(f, plan);
        fputs(". Median of each variant's recorded forwards", f);
    } else
        fprintf(f, ". Median of %d recorded forwards per variant", r->iters);
    fprintf(f, ", min--max in parentheses; CUDA time is the sum of the GPU operations of a forward, CPU time %s. "
               "Recorded ",
            r->producer == PRODUCER_ATTNPROF ? "the host time of the forward call (under CUPTI)"
            : r->producer == PRODUCER_PYTORCH ? "the duration of the forward's range under PyTorch's profiler, its "
                                                "dispatcher included"
                                              : "the duration of the forward's range in the traces");
    tex(f, r->date);
    fputs(" with attnprof ", f);
    tex(f, r->tool_version);
    fputc('.', f);
    if (series)
        fputs(" The last column cites the series' own A100-SXM4-80GB numbers (kernels per forward; CUDA time per "
              "forward, or $^\\ast$ the average \\texttt{*\\_fwd} CUDA time); the series does not state its shape, "
              "so its times may be for another shape.",
              f);
    note_close(f);
}

/* One row of the summary table. */
static void summary_row(FILE *f, const variant_analysis *va, int series)
{
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
    if (!series)
        ;
    else if (!sf)
        fputs(" & --", f);
    else if (isfinite(sf->cuda_us))
        fprintf(f, " & %d; %.1f", sf->kernels, sf->cuda_us);
    else if (isfinite(sf->fwd_cuda_ms))
        fprintf(f, " & %d; %.0f$^\\ast$", sf->kernels, sf->fwd_cuda_ms * 1000);
    else
        fprintf(f, " & %d; --", sf->kernels);
    fputs(" \\\\\n", f);
}

static void summary_table_tex(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    int series = series_applies(a); /* the series' column only where it published the variants */
    fputs("\\begin{table*}[tbp]\n\\centering\n\\small\n\\setlength{\\tabcolsep}{4pt}\n", f);
    /* a model's trace imported is no set of attention variants */
    if (series || !r->imported)
        fputs("\\caption{Attention variants: CUDA and CPU time per forward (\\textmu{}s), "
              "median (min--max), and the error against FP64.}\n",
              f);
    else /* a training step (backward work in the range) is a step */
        fprintf(f, "\\caption{Imported traces: CUDA and CPU time per %s (\\textmu{}s), median (min--max).}\n",
                model_unit_word_of_run(a));
    fputs("\\label{tab:attnprof-summary}\n", f);
    fputs(series ? "\\begin{tabular}{lrrrlr}\n\\toprule\n" : "\\begin{tabular}{lrrrl}\n\\toprule\n", f);
    fprintf(f, "Variant & Ops / %s & CUDA time (\\textmu{}s) & CPU time (\\textmu{}s) & Rel.\\ error%s \\\\\n"
               "\\midrule\n",
            series || !r->imported ? "forward" : model_unit_word_of_run(a), series ? " & Series, A100: kernels; CUDA (\\textmu{}s)" : "");
    for (int i = 0; i < a->n; i++)
        summary_row(f, &a->v[i], series);
    fputs("\\bottomrule\n\\end{tabular}\n", f);
    summary_note(f, a, series);
    fputs("\\end{table*}\n\n", f);
}

/* The findings, one row per variant: the summary's short phrases (finding_phrases.h). */
static void findings_table_tex(FILE *f, const analysis *a)
{
    fputs("\\begin{table*}[tbp]\n\\centering\n\\footnotesize\n", f);
    fputs("\\caption{What the trace revealed, per variant: its headline findings, ranked (the report writes every "
          "finding in full).}\n\\label{tab:attnprof-findings}\n",
          f);
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
    fputs("\\bottomrule\n\\end{tabular}\n", f);
    note_open(f);
    fputs("Ranked ", f);
    tex(f, FINDING_RANK_RULE);
    fputs("; info-level findings only where a variant has no warning or notice. ", f);
    setup_text(f, a->run);
    fputc('.', f);
    note_close(f);
    fputs("\\end{table*}\n", f);
}

char *report_summary_tex(const analysis *a)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    preamble(f, "summary.tex");
    fputs("% Generated from this archive's trace.json and run.json; every number is derived from the records.\n", f);
    summary_table_tex(f, a);
    findings_table_tex(f, a);
    fclose(f);
    return buf;
}

/* ---- compare.tex: a pair of model traces (compare_traces.c) ---------------------------- */

/* "0.59$\times$ [0.59--0.59] & faster", "0.59$\times$ (medians) & no verdict (2 steps)", or "-- & --"
 * when a side lacks the measure; `d` decimals (the column's). */
/* The ratio and verdict cells of a pair with n0 and n1 steps. */
static void ratio_verdict_tex(FILE *f, int n0, int n1, const compare_ratio *r, int d)
{
    if (!isfinite(r->ci.ratio))
        fputs("-- & --", f);
    else if (r->verdict != VERDICT_NONE)
        fprintf(f, "%.*f$\\times$ [%.*f--%.*f] & %s", d, r->ci.ratio, d, r->ci.lo, d, r->ci.hi,
                compare_verdict_word(r->verdict));
    else if (n0 == n1)
        fprintf(f, "%.*f$\\times$ (medians) & \\mbox{no verdict (%d steps)}", d, r->ci.ratio, n0);
    else
        fprintf(f, "%.*f$\\times$ (medians) & \\mbox{no verdict (%d and %d steps)}", d, r->ci.ratio, n0, n1);
}

/* As ratio_verdict_tex, with what differs between the pair's recorded inputs beside the
 * verdict: no verdict reads as one across the same work. */
static void trace_ratio_tex(FILE *f, const trace_pair *pr, const compare_ratio *r, int d)
{
    ratio_verdict_tex(f, pr->step[0].n, pr->step[1].n, r, d);
    if (isfinite(r->ci.ratio) && pr->inputs_differ[0]) {
        fputs(" (across ", f);
        tex(f, pr->inputs_differ);
        fputc(')', f);
    }
}

static void trace_side_tex(FILE *f, const compare_data *m, const trace_pair *pr, int j)
{
    tex_code(f, pr->va[j]->result->name);
    fputs(" (", f);
    tex_code(f, m->in[j ? pr->archive : 0]->label);
    fputc(')', f);
}

/* The pair's note: which traces, how many steps, what "attention, all parts" is, the verdict's rule. */
static void trace_pair_note(FILE *f, const compare_data *m, const trace_pair *pr)
{
    note_open(f);
    trace_side_tex(f, m, pr, 1);
    fputs(" against ", f);
    trace_side_tex(f, m, pr, 0);
    fprintf(f, ", the baseline. Median (min--max) over %d and %d steps (ProfilerStep\\#N); attention, all parts: "
               "every attention role of the phase together (eager attention's kernels against one fused op), a step "
               "without it counting 0. Time ratio, below 1 is faster. ",
            pr->step[0].n, pr->step[1].n);
    if (pr->verdicts)
        fprintf(f, "Ratio of medians with a seeded 95\\%% bootstrap interval of the steps; same when the whole "
                   "interval lies within $\\times$/$\\div$ %.2f (the noise floor of CUDA time), faster or slower when "
                   "it lies wholly beyond, ambiguous when it straddles the edge.",
                1 + m->min_effect);
    else
        fprintf(f, "Ratio of the medians alone: no interval and no verdict below %d steps in each run.",
                COMPARE_MIN_STEPS);
    note_close(f);
}

/* One table per pair: the step's CUDA time and each phase's attention, all parts, µs per step
 * each side (median and min--max over the steps), the ratio with its interval and the verdict. */
static void trace_pair_tex(FILE *f, const compare_data *m, const trace_pair *pr, int k)
{
    fprintf(f, "\n\\begin{table*}[tbp]\n\\centering\n\\small\n\\setlength{\\tabcolsep}{4pt}\n\\caption{Model "
               "trace pair %d, step by step: CUDA time per step and attention (\\textmu{}s), against the baseline's "
               "trace.}\n\\label{tab:attnprof-compare-model-%d}\n",
            k + 1, k + 1);
    const stats *side[2][1 + TRACE_MAX_ROWS]; /* NULL: the run has no such row */
    const compare_ratio *ratio[1 + TRACE_MAX_ROWS];
    int n = 0;
    side[0][n] = &pr->step[0], side[1][n] = &pr->step[1], ratio[n++] = &pr->step_ratio;
    for (int r = 0; r < pr->n_rows && n < 1 + TRACE_MAX_ROWS; r++)
        if (pr->rows[r].attention_total) {
            side[0][n] = pr->rows[r].present[0] ? &pr->rows[r].st[0] : NULL;
            side[1][n] = pr->rows[r].present[1] ? &pr->rows[r].st[1] : NULL;
            ratio[n++] = &pr->rows[r].ratio;
        }
    int rd = ratio_decimals_of(ratio, n);
    fputs("\\begin{tabular}{lrrlp{0.18\\linewidth}}\n\\toprule\nMeasure & ", f); /* the verdict wraps: what differs is beside it */
    tex_code(f, m->in[0]->label);
    fputs(" & ", f);
    tex_code(f, m->in[pr->archive]->label);
    fputs(" & Time ratio [95\\%] & Verdict \\\\\n\\midrule\n", f);
    int row = 0;
    for (int r = -1; r < pr->n_rows; r++) {
        if (r >= 0 && !pr->rows[r].attention_total)
            continue;
        if (r < 0)
            fputs("CUDA time per step", f);
        else {
            fputs("Attention, all parts, ", f);
            tex(f, model_phase_name(pr->rows[r].phase));
        }
        for (int j = 0; j < 2; j++) {
            fputs(" & ", f);
            if (side[j][row])
                us_cell(f, side[j][row]);
            else
                fputs("none", f);
        }
        fputs(" & ", f);
        trace_ratio_tex(f, pr, ratio[row], rd);
        fputs(" \\\\\n", f);
        if (++row >= n)
            break;
    }
    fputs("\\bottomrule\n\\end{tabular}\n", f);
    trace_pair_note(f, m, pr);
    fputs("\\end{table*}\n", f);
}

/* ---- compare.tex ------------------------------------------------------------------------- */

static void compare_note(FILE *f, const compare_data *m)
{
    const compare_archive *base = m->in[m->baseline];
    note_open(f);
    char headline[512];
    compare_headline(m, headline, sizeof headline);
    if (headline[0]) { /* producers first, before any tool version */
        tex(f, headline);
        fputs(". ", f);
    }
    fputs("Baseline ", f);
    tex_code(f, base->label);
    fputs(": ", f);
    setup_text(f, &base->r);
    fprintf(f, ". Median (min--max) of each run's recorded %ss; %s of the medians with a seeded 95\\%% "
               "bootstrap interval; same when the whole interval lies within $\\times$/$\\div$ %.2f (the run-to-run "
               "noise floor",
            compare_unit_word(m), m->throughput ? "throughput ratio (above 1 is faster)" : "time ratio (below 1 is faster)",
            1 + m->min_effect);
    int replicates = 0; /* some ratio judged against the runs' between-pass spread */
    for (int v = 0; v < m->n_variants; v++)
        for (int i = 1; i < m->n; i++)
            replicates |= m->variants[v].cell[i].replicate_floor;
    if (replicates)
        fputs("; where both runs hold replicates, $1+f$ with $f$ the larger relative range of their per-pass medians "
              "instead, listed in compare.md",
              f);
    fputs("), faster or slower when it lies wholly beyond, ambiguous when it straddles the edge.", f);
    if (m->differs_sentence[0]) {
        fputc(' ', f);
        tex(f, m->differs_sentence); /* plain text of archive values, not Markdown: a '`' is a '`' */
    }
    note_close(f);
}

/* The decimals of each run's ratio column (the rule above). */
static void compare_decimals(const compare_data *m, int *ratio_dec)
{
    for (int i = 0; i < m->n; i++) {
        ratio_dec[i] = 2;
        for (int v = 0; v < m->n_variants; v++) {
            const compare_ratio *q = &m->variants[v].cell[i].metric_ratio;
            int r = ratio_decimals_of(&q, 1);
            ratio_dec[i] = r > ratio_dec[i] ? r : ratio_dec[i];
        }
    }
}

static void compare_row_tex(FILE *f, const compare_data *m, const compare_variant *cv, const int *ratio_dec)
{
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
        int d = ratio_dec[i];
        if (q->verdict == VERDICT_NONE || !isfinite(q->ci.ratio))
            fputs("--", f);
        else
            fprintf(f, "%.*f$\\times$ [%.*f--%.*f] %s", d, q->ci.ratio, d, q->ci.lo, d, q->ci.hi,
                    compare_verdict_word(q->verdict));
    }
    fputs(" \\\\\n", f);
}

char *compare_tex(const compare_data *m)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    preamble(f, "compare.tex");
    fputs("% Generated from the archives' trace.json and run.json.\n", f);
    fputs("\\begin{table*}[tbp]\n\\centering\n\\small\n\\caption{", f);
    fprintf(f, m->throughput ? "Throughput per %s (TFLOP/s) of each run, and each run against the baseline: "
                               "throughput ratio (above 1 is faster), its 95\\%% interval and verdict."
                             : "CUDA time per %s (\\textmu{}s) of each run, and each run against the baseline: "
                               "time ratio (below 1 is faster), its 95\\%% interval and verdict.",
            compare_unit_word(m));
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
    int ratio_dec[COMPARE_MAX_ARCHIVES];
    compare_decimals(m, ratio_dec);
    for (int v = 0; v < m->n_variants; v++)
        compare_row_tex(f, m, &m->variants[v], ratio_dec);
    fputs("\\bottomrule\n\\end{tabular}\n", f);
    compare_note(f, m);
    fputs("\\end{table*}\n", f);
    for (int k = 0; k < m->traces.n_pairs; k++)
        trace_pair_tex(f, m, &m->traces.pairs[k], k);
    fclose(f);
    return buf;
}
