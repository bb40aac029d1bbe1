/* The comparison as documents: compare.md (GitHub-flavoured Markdown, figures
 * linked), compare.html (the same page self-contained, figures inlined),
 * compare.csv (one row per variant and run) and compare.tex, all from one
 * compare_data: the rows of the comparison's bundle, which the document pipeline
 * (doc_bundle.h) writes as a directory of its own. compare.md is a table of sections
 * (compare_sections) walked by one loop; the model traces and the kernels are
 * compare_doc_traces.c's and compare_doc_kernels.c's. */
#include "compare_doc.h"

#include "alloc.h"
#include "compare_doc_md.h"

#include "archive.h"
#include "doc_bundle.h"
#include "escape.h"
#include "latex.h"
#include "exit_codes.h"
#include "findings.h"
#include "report.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void table_head(FILE *f, const compare_data *m, const char *first)
{
    fprintf(f, "| %s |", first);
    for (int i = 0; i < m->n; i++) {
        fputc(' ', f);
        esc_md_text(f, m->in[i]->label);
        fputs(i == 0 ? " (baseline) |" : " |", f);
        if (i > 0) {
            fputc(' ', f);
            esc_md_text(f, m->in[i]->label);
            fputs(" vs baseline |", f);
        }
    }
    fputs("\n|---|", f);
    for (int i = 0; i < m->n; i++)
        fputs(i ? "---|---|" : "---|", f);
    fputc('\n', f);
}

typedef enum { ROW_METRIC, ROW_CPU } row_kind;

static void summary_rows(FILE *f, const compare_data *m, row_kind kind)
{
    char buf[1024];
    for (int v = 0; v < m->n_variants; v++) {
        const compare_variant *cv = &m->variants[v];
        fputs("| ", f);
        esc_md_code(f, cv->name, 1);
        fputs(" |", f);
        for (int i = 0; i < m->n; i++) {
            const compare_cell *c = &cv->cell[i];
            compare_md_cell_text(m, c, kind == ROW_METRIC ? &c->metric_stats : &c->cpu_stats, buf, sizeof buf);
            fputc(' ', f);
            esc_md_text(f, buf);
            fputs(" |", f);
            if (i > 0) {
                compare_md_ratio_text(kind == ROW_METRIC ? &c->metric_ratio : &c->cpu_ratio, compare_unit_word(m), buf,
                                      sizeof buf);
                fprintf(f, " %s |", buf);
            }
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

static void ops_rows(FILE *f, const compare_data *m)
{
    for (int v = 0; v < m->n_variants; v++) {
        const compare_variant *cv = &m->variants[v];
        fputs("| ", f);
        esc_md_code(f, cv->name, 1);
        fputs(" |", f);
        const compare_cell *b = &cv->cell[0];
        for (int i = 0; i < m->n; i++) {
            const compare_cell *c = &cv->cell[i];
            if (!c->va || !c->n)
                fprintf(f, " %s |", c->va ? "–" : "*not run*");
            else
                fprintf(f, " %.0f |", c->ops_stats.median);
            if (i > 0) {
                if (!c->va || !c->n || !b->va || !b->n) {
                    fputs(" – |", f);
                } else {
                    double d = c->ops_stats.median - b->ops_stats.median;
                    if (d == 0)
                        fputs(" same |", f);
                    else
                        fprintf(f, " **%+.0f** (%s) |", d, d > 0 ? "more" : "fewer");
                }
            }
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}


/* 1 when some ratio was judged against the runs' between-pass spread. */
static int any_replicate_floor(const compare_data *m)
{
    for (int v = 0; v < m->n_variants; v++)
        for (int i = 1; i < m->n; i++)
            if (m->variants[v].cell[i].replicate_floor)
                return 1;
    return 0;
}

/* A cell's replicate floor beyond the rule's cap and its outlier passes (COMPARE_REPLICATE_FLOOR_CAP):
 * the spread that was capped, and each pass that disagreed with its run's others. */
static void replicate_caveats(FILE *f, const compare_data *m, int v, int i)
{
    const compare_cell *side[2] = {&m->variants[v].cell[0], &m->variants[v].cell[i]};
    for (int s = 0; s < 2; s++) {
        const compare_cell *c = side[s];
        const char *label = m->in[s ? i : 0]->label;
        if (isfinite(c->pass_spread_metric_raw) && c->pass_spread_metric_raw > COMPARE_REPLICATE_FLOOR_CAP) {
            fputs(", the spread of ", f);
            esc_md_text(f, label);
            fprintf(f, " %.1f%% capped at %.0f%%", c->pass_spread_metric_raw * 100, COMPARE_REPLICATE_FLOOR_CAP * 100);
        }
        for (int p = 0; p < 32; p++)
            if (c->outlier_passes >> p & 1u) {
                fprintf(f, ", pass %d of ", p + 1);
                esc_md_text(f, label);
                fprintf(f, " an outlier (more than %.0f%% from the median of its passes' medians; left out of the "
                        "spread)", COMPARE_REPLICATE_FLOOR_CAP * 100);
            }
    }
}

/* The replicate rule and the floor each variant was judged against, where it applied. */
static void replicate_rule(FILE *f, const compare_data *m, int which)
{
    if (!any_replicate_floor(m))
        return;
    if (which == ROW_CPU)
        fputs("Replicates: where the baseline and a run both hold two or more passes of their batch (`attnprof run "
              "--replicate K`, each forward's pass recorded), the floor of that ratio is the larger of the "
              "documented one and the two runs' between-pass spreads, the relative range (max ÷ min − 1) of the "
              "medians of each pass: host time drifts between processes more than between the passes of one "
              "(two identical batches of three passes differed by 0.62× against a 42% between-pass spread). "
              "Floors used:", f);
    else
        fputs("Replicates: where the baseline and a run both hold two or more passes of their batch (`attnprof run "
              "--replicate K`, each forward's pass recorded), the floor of that ratio is not the documented one but "
              "the larger of the two runs' between-pass spreads, the relative range (max ÷ min − 1) of the medians "
              "of each pass: the drift between batches measured in the runs themselves, at most 10% (a larger spread "
              "is capped, and with three passes or more a pass more than 10% from the median of the passes' medians "
              "is an outlier, named, and left out of the spread). Floors used:", f);
    int first = 1;
    for (int v = 0; v < m->n_variants; v++)
        for (int i = 1; i < m->n; i++) {
            const compare_cell *c = &m->variants[v].cell[i];
            if (!c->replicate_floor)
                continue;
            fputs(first ? " " : "; ", f);
            first = 0;
            esc_md_code(f, m->variants[v].name, 1);
            fputs(" in ", f);
            esc_md_text(f, m->in[i]->label);
            fprintf(f, " %.2f%% (%d and %d passes)", (which == ROW_CPU ? c->cpu_floor : c->metric_floor) * 100,
                    m->variants[v].cell[0].passes, c->passes);
            if (which != ROW_CPU)
                replicate_caveats(f, m, v, i);
        }
    fputs(".\n\n", f);
}

/* The title, the baseline and what differs between the runs (the headline). */
static void title_section(FILE *f, const compare_doc_md *d)
{
    const compare_data *m = d->m;
    const run_info *b = &m->in[0]->r;
    fprintf(f, "# attnprof compare — %d runs", m->n);
    if (!m->throughput && run_info_shape_recorded(b)) {
        fprintf(f, " of %d×%d×%d×%d ", b->shape.batch, b->shape.heads, b->shape.seq, b->shape.dim);
        esc_md_text(f, b->dtype);
        fputs(b->causal ? " causal" : "", f);
    }
    fputs("\n\n", f);
    char headline[512];
    compare_headline(m, headline, sizeof headline);
    if (headline[0]) {
        fputs("**", f);
        esc_md_text(f, headline);
        fputs(".** ", f);
    }
    fputs("Baseline: **", f);
    esc_md_text(f, m->in[0]->label);
    fputs("**. ", f);
    esc_md_text(f, m->differs_sentence);
    fputs("\n\n", f);
    if (m->throughput)
        fputs("**The shapes differ** (`--allow-shape-mismatch`): runs of different shapes do different work, so "
              "this comparison sets throughput side by side instead of time: TFLOP/s per forward, with the "
              "FLOPs of causal attention taken as half of 4·B·H·S²·D. Higher is faster.\n\n",
              f);

}

/* Each run's archive and recorded fields side by side, a differing one marked. */
static void runs_section(FILE *f, const compare_doc_md *d)
{
    const compare_data *m = d->m;
    fputs("## Runs\n\n| |", f);
    for (int i = 0; i < m->n; i++) {
        fputc(' ', f);
        esc_md_text(f, m->in[i]->label);
        fputs(i == 0 ? " (baseline) |" : " |", f);
    }
    fputs("\n|---|", f);
    for (int i = 0; i < m->n; i++)
        fputs("---|", f);
    fputs("\n| Archive |", f);
    for (int i = 0; i < m->n; i++) {
        fputc(' ', f);
        esc_md_code(f, m->in[i]->dir, 1);
        fputs(" |", f);
    }
    fputc('\n', f);
    for (int k = 0; k < m->n_fields; k++) {
        const compare_field *x = &m->fields[k];
        fprintf(f, x->differs ? "| **%s ≠** |" : "| %s |", x->name);
        for (int i = 0; i < m->n; i++) {
            fputc(' ', f);
            esc_md_text(f, x->value[i]);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    fputs("\n≠ marks a field whose value differs between the runs that record it; \"not recorded\" is neither "
          "equal nor different.\n\n",
          f);

}

static int has_traces(const compare_doc_md *d) { return d->m->traces.any; }

static void traces_section(FILE *f, const compare_doc_md *d)
{
    compare_md_traces_section(f, d->m, d->figs, d->inline_dir);
}

static void metric_section(FILE *f, const compare_doc_md *d)
{
    const compare_data *m = d->m;
    fprintf(f, "## %s per %s\n\n", m->throughput ? "Throughput" : "CUDA time", compare_unit_word(m));
    table_head(f, m, "Variant");
    summary_rows(f, m, ROW_METRIC);
    fprintf(f,
            "Each cell: median (min – max, n) over the recorded %ss. *vs baseline*: the ratio of this run's "
            "median to the baseline's (%s), then its 95%% interval from %d bootstrap resamples of the per-%s "
            "samples (seeded, so the numbers repeat), then the verdict against a noise floor of %.0f%% "
            "(`--min-effect`): *same* when the whole interval lies within ×/÷ %.2f, *faster* or *slower* when it "
            "lies wholly beyond, *ambiguous* when it straddles the edge. The interval holds the spread of one "
            "run's %ss only; the floor covers the drift between runs: two runs of one batch on the H200 "
            "differed by up to 1.4%% in CUDA time (bench/RESULTS.md).\n\n",
            compare_unit_word(m), m->throughput ? "above 1 is faster" : "below 1 is faster", BOOTSTRAP_RESAMPLES,
            compare_unit_word(m), m->min_effect * 100, 1 + m->min_effect, compare_unit_word(m));
    replicate_rule(f, m, ROW_METRIC);

}

static void cpu_section(FILE *f, const compare_doc_md *d)
{
    const compare_data *m = d->m;
    fprintf(f, "## CPU time per %s\n\n", compare_unit_word(m));
    table_head(f, m, "Variant");
    summary_rows(f, m, ROW_CPU);
    fprintf(f,
            "CPU time is the host wall time of the %s (recorded with CUPTI collecting), below 1 is "
            "faster. Host time drifts between runs far more than GPU time: runs of one batch on the H200 differed "
            "by up to 1.87× in a variant's median (bench/RESULTS.md), so the floor here is %.0f%%: a run is "
            "faster or slower only when the whole interval lies beyond ×/÷ %.2f, and same or ambiguous otherwise. "
            "%s\n\n",
            strcmp(compare_unit_word(m), "step") ? "forward call" : "step's range", m->cpu_floor * 100,
            1 + m->cpu_floor, any_replicate_floor(m) ? "Where both runs hold replicates, the floor is their between-pass spread "
                                     "where that is larger (below)."
                                   : "The archives hold one batch each, no replicate runs to measure the floor from.");
    replicate_rule(f, m, ROW_CPU);

}

static void ops_section(FILE *f, const compare_doc_md *d)
{
    const compare_data *m = d->m;
    fprintf(f, "## GPU operations per %s\n\n", compare_unit_word(m));
    table_head(f, m, "Variant");
    ops_rows(f, m);

}

static int has_backward(const compare_doc_md *d) { return d->m->backward; }

/* The ratio cell of a backward: as the forward's, with the backwards counted. */
static void backward_ratio_text(const compare_ratio *r, char *out, size_t n)
{
    compare_md_ratio_text(r, "backward", out, n); /* "no verdict (3 backwards)", "(1 backward)" */
}

/* run --backward archives: each variant's CUDA time per backward, paired with the baseline's, and
 * its operations per backward and gradient errors; the backward's findings are paired by id in
 * the kernel sections (findings.json ids bwd_*). */
static void backward_compare_section(FILE *f, const compare_doc_md *d)
{
    const compare_data *m = d->m;
    fputs("## Backward\n\n", f);
    table_head(f, m, "Variant");
    char buf[160];
    for (int v = 0; v < m->n_variants; v++) {
        const compare_variant *cv = &m->variants[v];
        fputs("| ", f);
        esc_md_code(f, cv->name, 1);
        fputs(" |", f);
        for (int i = 0; i < m->n; i++) {
            const compare_backward *b = &cv->bwd[i];
            const variant_analysis *va = cv->cell[i].va;
            if (!b->n) {
                const backward_result *r = va ? &va->result->bwd : NULL;
                fprintf(f, " %s |", !va ? "*not run*" : !r->recorded ? "no backward recorded"
                                                     : variant_status_name(r->status));
            } else {
                const backward_result *r = &va->result->bwd;
                char med[32], lo[32], hi[32];
                format_us(b->st.median, med, sizeof med);
                format_us(b->st.min, lo, sizeof lo);
                format_us(b->st.max, hi, sizeof hi);
                fprintf(f, " %s (%s – %s, n=%d); %d ops; dQ/dK/dV %.2g/%.2g/%.2g |", med, lo, hi, b->n,
                        va->ops_per_backward, r->rel_error_dq, r->rel_error_dk, r->rel_error_dv);
            }
            if (i > 0) {
                backward_ratio_text(&b->ratio, buf, sizeof buf);
                fprintf(f, " %s |", b->n && cv->bwd[0].n ? buf : "–");
            }
        }
        fputc('\n', f);
    }
    fprintf(f, "\nEach cell: the median CUDA time per backward (its GPU operations' durations summed, min – max, n "
               "over the recorded backwards of `attnprof run --backward`), the operations per backward and the "
               "gradients' errors against FP64. *vs baseline*: the ratio of the medians with its 95%% interval and "
               "verdict as for the forward, against the same %.0f%% floor; with fewer than %d backwards a side only "
               "the ratio is given. The backward's findings (ids `bwd_*`) are matched by id in the kernel sections "
               "below; against a run without a backward they are not testable there.\n\n",
            m->min_effect * 100, COMPARE_MIN_FORWARDS);
}

static void figures_section(FILE *f, const compare_doc_md *d)
{
    fputs("## Figures\n\n", f);
    report_md_figure(f, d->figs, "compare-time", d->inline_dir);
    report_md_figure(f, d->figs, "compare-speedup", d->inline_dir);
    report_md_figure(f, d->figs, "compare-timeline", d->inline_dir);

}

static void kernels_section(FILE *f, const compare_doc_md *d)
{
    const compare_data *m = d->m;
    fputs("## Kernels, variant by variant\n\n", f);
    int model = 0, series = 0;
    for (int v = 0; v < m->n_variants; v++)
        m->variants[v].model_roles ? model++ : series++;
    const char *unit = compare_unit_word(m);
    fputs("Each run's GPU operations are matched to the baseline's within their *role*", f);
    if (series)
        fprintf(f, "%s in the attention forward (QKᵀ GEMM, scale, mask build, mask apply, softmax, softmax NaN guard, "
                   "PV GEMM, fused attention, cast, copy, memset, K/V expansion, other), read from the kernel's name, the record's "
                   "kind, the ATen op that launched it where the trace has one, and its place before or after the "
                   "softmax",
                model ? " (series variants:" : "");
    if (series && model)
        fputs("; model traces:", f);
    if (model)
        fputs(" in the model's step: its phase and model role as roles.csv and kernels.csv name them (attention, "
              "attention_input_conversion, gqa_expansion, gemm, norm, elementwise, copy, ..., the phase after it "
              "when not the forward phase), read from the CPU op chain that launched it, else its kernel name",
              f);
    fputs(series && model ? ")" : "", f);
    fprintf(f, "; operations of different roles are "
               "never paired. Within a role: the same name first (copies and memsets: the same direction and bytes); "
               "then a copy or memset of the same direction with other bytes, or, in %s order, another kernel "
               "doing the same work (*renamed*: another cuDNN knob, PyTorch's kernel for ours); what has no "
               "counterpart of its role was *added* or *removed* and is listed under its role. Where the %s has "
               "more than one role, a first table sets each role's time per %s side by side (the summed durations "
               "of its operations, median over the %ss): the like-with-like measure when the runs do the work with "
               "other kernels or another number of them. In the kernel table, times are the median of one launch. ",
            unit, unit, unit, unit);
    fputs("Findings are matched by their id (as findings.json lists them); a finding that rests on a record the other "
          "run does not hold (an import records no expected operation count, setup phases or output check) is listed "
          "as not testable there, not as found in one run only.\n\n",
          f);
    for (int v = 0; v < m->n_variants; v++)
        compare_md_kernel_section(f, m, &m->variants[v]);
}

/* compare.md, in order. A section that does not apply writes nothing. */
static const compare_section compare_sections[] = {
    {"title", NULL, title_section},
    {"runs", NULL, runs_section},
    {"model traces", has_traces, traces_section},
    {"time per forward", NULL, metric_section},
    {"CPU time", NULL, cpu_section},
    {"GPU operations", NULL, ops_section},
    {"backward", has_backward, backward_compare_section},
    {"figures", NULL, figures_section},
    {"kernels", NULL, kernels_section},
};

char *compare_markdown(const compare_data *m, const figure_list *figs, const char *inline_from_dir)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    const compare_doc_md d = {m, figs, inline_from_dir};
    for (size_t i = 0; i < sizeof compare_sections / sizeof compare_sections[0]; i++)
        if (!compare_sections[i].applies || compare_sections[i].applies(&d))
            compare_sections[i].write(f, &d);
    fclose(f);
    return buf;
}

/* ",median,min,max,ratio,ratio_lo,ratio_hi,verdict" of one measure of a cell;
 * the baseline's own rows read ratio 1 and verdict "baseline". */
static void csv_stats_ratio(FILE *f, const stats *st, const compare_ratio *r, int is_baseline)
{
    esc_csv_number(f, st->median);
    esc_csv_number(f, st->min);
    esc_csv_number(f, st->max);
    esc_csv_number(f, r->ci.ratio);
    esc_csv_number(f, r->ci.lo);
    esc_csv_number(f, r->ci.hi);
    fprintf(f, ",%s", is_baseline && isfinite(r->ci.ratio) ? "baseline" : compare_verdict_word(r->verdict));
}

/* Two rows of one measure of a model-trace pair, the baseline's trace first (ratio 1,
 * verdict `baseline`), in compare.csv's columns: forwards are the steps, the CUDA columns
 * the measure's µs per step, the CPU columns empty; then kind, phase, part, implementation. */
static void trace_csv_rows(FILE *f, const compare_data *m, const trace_pair *pr, const stats *st,
                           const double *ops, const compare_ratio *r, const char *kind, const char *phase,
                           const char *part, const char (*impl)[96])
{
    static const compare_ratio one = {.ci = {1, 1, 1}, .verdict = VERDICT_NONE};
    for (int j = 0; j < 2; j++) {
        esc_csv_field(f, pr->va[j]->result->name, 1);
        fputc(',', f);
        esc_csv_field(f, m->in[j ? pr->archive : 0]->label, 1);
        fprintf(f, ",%d,ok,\"\",%d", j == 0, pr->step[j].n);
        static const compare_ratio none = {.ci = {NAN, NAN, NAN}, .verdict = VERDICT_NONE};
        csv_stats_ratio(f, &st[j], j ? r : isfinite(r->ci.ratio) ? &one : &none, j == 0);
        fputs(",,,,,,,", f);
        esc_csv_number(f, ops ? ops[j] : NAN);
        esc_csv_number(f, ops ? ops[j] - ops[0] : NAN);
        fprintf(f, ",%s,%s,", kind, phase);
        esc_csv_field(f, part, 0);
        fputc(',', f);
        esc_csv_field(f, impl ? impl[j] : "", 0);
        fputc('\n', f);
    }
}

/* A pair's rows: `step`, then `role` and `attention` (a phase's attention roles together) per
 * phase, then `layer` when the layers pair. */
static void trace_pair_csv(FILE *f, const compare_data *m, const trace_pair *pr)
{
    trace_csv_rows(f, m, pr, pr->step, NULL, &pr->step_ratio, "step", "", "", NULL);
    for (int k = 0; k < pr->n_rows; k++) {
        const trace_role_row *row = &pr->rows[k];
        stats st[2];
        for (int j = 0; j < 2; j++) /* a side without the role: empty cells, not zeros */
            st[j] = row->present[j] ? row->st[j] : (stats){.median = NAN, .min = NAN, .max = NAN};
        double ops[2] = {row->present[0] ? row->ops[0] : NAN, row->present[1] ? row->ops[1] : NAN};
        trace_csv_rows(f, m, pr, st, ops, &row->ratio, row->attention_total ? "attention" : "role",
                       model_phase_name(row->phase), row->attention_total ? "attention" : model_role_name(row->role),
                       row->impl);
    }
    for (int l = 0; pr->layers_paired && l < pr->n_layers[0]; l++) {
        char part[16];
        snprintf(part, sizeof part, "%d", l);
        trace_csv_rows(f, m, pr, pr->layers[l].st, NULL, &pr->layers[l].ratio, "layer", "forward", part, NULL);
    }
}

/* The backward rows of a run --backward comparison (kind `variant`, phase `backward`), one per run
 * of the variant, in the forward rows' columns: `forwards` counts the backwards, the metric columns
 * are the CUDA µs per backward and its ratio to the baseline's (empty in throughput mode: no
 * TFLOP/s of a backward is counted), the CPU columns empty (a backward has no CPU-time samples),
 * the ops columns its operations per backward. */
static void backward_csv_rows(FILE *f, const compare_data *m, const compare_variant *cv)
{
    static const compare_ratio one = {.ci = {1, 1, 1}, .verdict = VERDICT_NONE};
    static const compare_ratio none = {.ci = {NAN, NAN, NAN}, .verdict = VERDICT_NONE};
    static const stats empty = {.median = NAN, .min = NAN, .max = NAN};
    for (int i = 0; i < m->n; i++) {
        const compare_backward *b = &cv->bwd[i];
        const variant_analysis *va = cv->cell[i].va;
        const backward_result *r = va ? &va->result->bwd : NULL;
        esc_csv_field(f, cv->name, 1);
        fputc(',', f);
        esc_csv_field(f, m->in[i]->label, 1);
        fprintf(f, ",%d,%s,", i == 0, !va ? "not run" : !r->recorded ? "not recorded" : variant_status_name(r->status));
        esc_csv_field(f, r && r->recorded ? r->error : "", 1);
        fprintf(f, ",%d", b->n);
        int timed = b->n > 0 && !m->throughput;
        const compare_ratio *ratio = !timed || !cv->bwd[0].n ? &none : i == 0 ? &one : &b->ratio;
        csv_stats_ratio(f, timed ? &b->st : &empty, ratio, i == 0);
        fputs(",,,,,,,", f);
        const variant_analysis *base = cv->cell[0].va;
        esc_csv_number(f, b->n ? va->ops_per_backward : NAN);
        esc_csv_number(f, b->n && cv->bwd[0].n ? va->ops_per_backward - base->ops_per_backward : NAN);
        fputs(",variant,backward,,\n", f);
    }
}

char *compare_csv(const compare_data *m)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    const char *metric = m->throughput ? "tflops" : "cuda_us";
    /* Model traces and backwards add four columns (compare_traces_csv, backward_csv_rows): the
     * variants' rows are kind `variant`, their phase `forward` where the runs hold backwards. */
    int traces = m->traces.any, extra = traces || m->backward;
    fprintf(f, "variant,archive,baseline,state,reason,forwards,%s_median,%s_min,%s_max,ratio,ratio_lo,ratio_hi,"
               "verdict,cpu_us_median,cpu_us_min,cpu_us_max,cpu_ratio,cpu_ratio_lo,cpu_ratio_hi,cpu_verdict,"
               "ops_per_forward,ops_vs_baseline%s\n",
            metric, metric, metric, extra ? ",kind,phase,part,implementation" : "");
    for (int v = 0; v < m->n_variants; v++) {
        const compare_variant *cv = &m->variants[v];
        for (int i = 0; i < m->n; i++) {
            const compare_cell *c = &cv->cell[i];
            esc_csv_field(f, cv->name, 1);
            fputc(',', f);
            esc_csv_field(f, m->in[i]->label, 1);
            fprintf(f, ",%d,%s,", i == 0, c->state);
            esc_csv_field(f, c->reason, 1);
            fprintf(f, ",%d", c->n);
            csv_stats_ratio(f, &c->metric_stats, &c->metric_ratio, i == 0);
            csv_stats_ratio(f, &c->cpu_stats, &c->cpu_ratio, i == 0);
            esc_csv_number(f, c->n ? c->ops_stats.median : NAN);
            esc_csv_number(f, c->n && cv->cell[0].n ? c->ops_stats.median - cv->cell[0].ops_stats.median : NAN);
            fputs(!extra ? "\n" : m->backward ? ",variant,forward,,\n" : ",variant,,,\n", f);
        }
        if (m->backward)
            backward_csv_rows(f, m, cv);
    }
    for (int k = 0; k < m->traces.n_pairs; k++)
        trace_pair_csv(f, m, &m->traces.pairs[k]);
    fclose(f);
    return buf;
}

/* ---- the comparison's bundle (doc_bundle.h) ------------------------------------------ */

typedef struct compare_doc {
    const compare_data *m;
    const compare_options *opt;
} compare_doc;

static int draw_compare(const doc_bundle *b, const char *dir, figure_list *figs, char *err, size_t errlen)
{
    const compare_doc *d = b->data;
    /* compare.html shows each figure as an inlined PNG (cmark-gfm blanks an SVG data URI): PNGs
     * are drawn whatever --format asks, as the report's are, or the page has no images */
    unsigned formats = d->opt->formats | FIG_PNG;
    int rc = compare_figures_render(d->m, dir, formats, d->opt->log_axis, figs, err, errlen);
    if (rc == EXIT_OK)
        rc = compare_figures_render_paper(d->m, dir, formats, d->opt->figure_size, figs, err, errlen);
    return rc;
}

static char *compare_md(const doc_bundle *b, const figure_list *figs, const char *inline_from_dir)
{
    return compare_markdown(((const compare_doc *)b->data)->m, figs, inline_from_dir);
}

static int compare_csv_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(compare_csv(((const compare_doc *)p->bundle->data)->m), out, err, n);
}
static int compare_tex_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(compare_tex(((const compare_doc *)p->bundle->data)->m), out, err, n);
}

/* compare.tex is the last document written: from then on the directory is renamed in. */
static const doc_output compare_outputs[] = {
    {"compare.md", doc_markdown_row, NULL},
    {"compare.html", doc_html_row, NULL},
    {"compare.csv", compare_csv_row, NULL},
    {"compare.tex", compare_tex_row, NULL},
};

int compare_write(const compare_data *m, const char *dest, const compare_options *opt, int force, char *err,
                  size_t errlen)
{
    compare_doc d = {m, opt};
    char title[256];
    snprintf(title, sizeof title, "attnprof compare — %d runs, baseline %s", m->n, m->in[0]->label);
    const doc_bundle b = {.kind = "compare", .noun = "comparison", .title = title, .data = &d,
                          .draw = draw_compare, .markdown = compare_md, .outputs = compare_outputs,
                          .n_outputs = (int)(sizeof compare_outputs / sizeof compare_outputs[0]),
                          .placement = DOC_OWN_DIRECTORY, .quiet = 1};
    return doc_bundle_write(&b, dest, force, err, errlen);
}
