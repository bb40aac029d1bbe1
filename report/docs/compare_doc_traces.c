/* compare.md's model traces, step by step: each pair of imported model traces (as --pair
 * names them, then by name, then one against one), its steps, its roles' time per step, its
 * figure, its layers and its findings, then the traces that found no partner. */
#include "compare_doc_md.h"

#include "escape.h"
#include "findings.h"
#include "report.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- model traces, step by step (compare_traces.c) ----------------------------------- */

/* A ratio of a model-trace pair: with its interval and verdict, or the ratio of the medians
 * alone when the pair has too few steps for one. */
static void trace_ratio_text(const compare_ratio *r, char *out, size_t n)
{
    out[0] = '\0';
    if (r->verdict != VERDICT_NONE)
        compare_md_ratio_text(r, out, n);
    else if (isfinite(r->ci.ratio))
        snprintf(out, n, "%.2f× (medians; no verdict)", r->ci.ratio);
    else
        snprintf(out, n, "–");
}

/* Beside a verdict (or a ratio) of a pair whose recorded inputs differ: what differs, so no
 * verdict reads as one across the same work. */
static void across(FILE *f, const trace_pair *pr, const compare_ratio *r)
{
    if (!pr->inputs_differ[0] || !isfinite(r->ci.ratio))
        return;
    fputs(" (across ", f);
    esc_md_text(f, pr->inputs_differ);
    fputc(')', f);
}

/* "8187 µs (8184 µs – 8190 µs, n=8)" */
static void steps_text(const stats *st, char *out, size_t n)
{
    char med[48], lo[48], hi[48];
    format_us_column(st->median, med, sizeof med);
    format_us_column(st->min, lo, sizeof lo);
    format_us_column(st->max, hi, sizeof hi);
    snprintf(out, n, "%s (%s – %s, n=%d)", med, lo, hi, st->n);
}

static void share_text(double share, char *out, size_t n)
{
    if (isfinite(share))
        snprintf(out, n, "%.1f%%", 100.0 * share);
    else
        snprintf(out, n, "–");
}

static void trace_name(FILE *f, const compare_data *m, const trace_pair *pr, int j)
{
    esc_md_code(f, pr->va[j]->result->name, 1);
    fputs(" (", f);
    esc_md_text(f, m->in[j ? pr->archive : 0]->label);
    fputs(")", f);
}

static void trace_pair_head(FILE *f, const compare_data *m, const trace_pair *pr)
{
    fputs("### ", f);
    trace_name(f, m, pr, 0);
    fputs(" against ", f);
    trace_name(f, m, pr, 1);
    fputs("\n\n", f);
    if (pr->by_name) {
        fputs("Paired by name: ", f);
        esc_md_code(f, pr->va[0]->result->name, 0);
        fputs(" in both runs. ", f);
    } else {
        fputs(pr->by_option ? "Paired by `--pair`: "
                            : "Each run holds one model trace, so the two are set against each other although "
                              "their names differ: ",
              f);
        esc_md_code(f, pr->va[1]->result->name, 0);
        fputs(" of **", f);
        esc_md_text(f, m->in[pr->archive]->label);
        fputs("** against ", f);
        esc_md_code(f, pr->va[0]->result->name, 0);
        fputs(" of **", f);
        esc_md_text(f, m->in[0]->label);
        fputs("** (the baseline). ", f);
    }
    if (pr->verdicts)
        fprintf(f, "%d and %d steps (ProfilerStep#N), the samples of every interval below.\n\n", pr->step[0].n,
                pr->step[1].n);
    else
        fprintf(f, "%d and %d steps (ProfilerStep#N): no interval and no verdict below %d steps in each run, so "
                   "the ratios below are of the medians alone; record at least %d steps (the profiler's "
                   "`schedule(..., active=%d)` or more) to have them.\n\n",
                pr->step[0].n, pr->step[1].n, COMPARE_MIN_STEPS, COMPARE_MIN_STEPS, COMPARE_MIN_STEPS);
}

static void attention_impl_text(const trace_pair *pr, int j, char *out, size_t n)
{
    if (pr->backend[j])
        snprintf(out, n, "%s", pr->backend[j]);
    else if (pr->eager_blocks[j])
        snprintf(out, n, "eager, %d block%s per step", pr->eager_blocks[j], pr->eager_blocks[j] == 1 ? "" : "s");
    else
        snprintf(out, n, "none recognised");
}

static void trace_step_table(FILE *f, const compare_data *m, const trace_pair *pr)
{
    char a[160], b[160], r[96];
    fputs("| | ", f);
    trace_name(f, m, pr, 0);
    fputs(" | ", f);
    trace_name(f, m, pr, 1);
    fputs(" | Ratio [95%] |\n|---|---|---|---|\n", f);
    steps_text(&pr->step[0], a, sizeof a);
    steps_text(&pr->step[1], b, sizeof b);
    trace_ratio_text(&pr->step_ratio, r, sizeof r);
    fprintf(f, "| CUDA time per step | %s | %s | %s", a, b, r);
    across(f, pr, &pr->step_ratio);
    fputs(" |\n", f);
    share_text(pr->attn_share[0], a, sizeof a);
    share_text(pr->attn_share[1], b, sizeof b);
    fprintf(f, "| Attention's share of the step | %s | %s | |\n", a, b);
    attention_impl_text(pr, 0, a, sizeof a);
    attention_impl_text(pr, 1, b, sizeof b);
    fputs("| Attention implementation | ", f);
    esc_md_text(f, a);
    fputs(" | ", f);
    esc_md_text(f, b);
    fputs(" | |\n\n", f);
}

static void trace_role_cells(FILE *f, const trace_role_row *row, int j)
{
    if (!row->present[j]) {
        fputs(" – | – | – |", f);
        return;
    }
    char us[48], share[24];
    format_us_column(row->st[j].median, us, sizeof us);
    share_text(row->share[j], share, sizeof share);
    fprintf(f, " %g | %s (%s) | ", row->ops[j], us, share);
    esc_md_text(f, row->impl[j][0] ? row->impl[j] : "–");
    fputs(" |", f);
}

static void trace_role_table(FILE *f, const compare_data *m, const trace_pair *pr)
{
    fputs("Role by role (µs per step: median over the steps of the summed durations of the role's operations, a "
          "step without the role counting 0, and its share of the step's CUDA time, median over steps; *attention, "
          "all parts* is every attention role of the phase together, eager attention's kernels against one fused "
          "op):\n\n| Phase | Role | ", f);
    esc_md_text(f, m->in[0]->label);
    fputs(": ops / step | µs / step (share) | implementation | ", f);
    esc_md_text(f, m->in[pr->archive]->label);
    fputs(": ops / step | µs / step (share) | implementation | Ratio [95%] |\n|---|---|---|---|---|---|---|---|---|\n",
          f);
    for (int k = 0; k < pr->n_rows; k++) {
        const trace_role_row *row = &pr->rows[k];
        char r[96];
        fprintf(f, row->attention_total ? "| %s | **attention, all parts** |" : "| %s | %s |",
                model_phase_name(row->phase), model_role_name(row->role));
        trace_role_cells(f, row, 0);
        trace_role_cells(f, row, 1);
        trace_ratio_text(&row->ratio, r, sizeof r);
        fprintf(f, " %s", r);
        across(f, pr, &row->ratio);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

static void trace_layers(FILE *f, const compare_data *m, const trace_pair *pr)
{
    if (!pr->layers_paired) {
        fputs("Layers not paired: ", f);
        for (int j = 0; j < 2; j++) {
            esc_md_code(f, pr->va[j]->result->name, 0);
            if (pr->n_layers[j] >= 2)
                fprintf(f, " has %d layers of %d operations", pr->n_layers[j], pr->layer_period[j]);
            else
                fputs(" has no repeated block found", f);
            fputs(j ? "" : ", ", f);
        }
        if (pr->n_layers[0] >= 2 && pr->n_layers[0] == pr->n_layers[1] && pr->layer_period[0] == pr->layer_period[1])
            fputs(", but no step of one of them launches its representative step's sequence of operations", f);
        else if (pr->n_layers[0] >= 2 && pr->n_layers[1] >= 2)
            fputs(": the blocks are not the same sequence of operations, so layer k of one is not set against "
                  "layer k of the other", f);
        fputs("; the role table above compares them in sum.\n\n", f);
        return;
    }
    fprintf(f, "Layer by layer (%d layers of %d operations in both; µs per step over the %d and %d steps that launch "
               "the representative step's sequence of operations)",
            pr->n_layers[0], pr->layer_period[0], pr->layer_steps[0], pr->layer_steps[1]);
    if (!pr->layer_verdicts)
        fprintf(f, "; no interval and no verdict below %d such steps in each run", COMPARE_MIN_STEPS);
    fputs(":\n\n", f);
    fputs("| Layer | ", f);
    esc_md_text(f, m->in[0]->label);
    fputs(": µs / step | attention µs | ", f);
    esc_md_text(f, m->in[pr->archive]->label);
    fputs(": µs / step | attention µs | Ratio [95%] |\n|---|---|---|---|---|---|\n", f);
    for (int l = 0; l < pr->n_layers[0]; l++) {
        const trace_layer_row *L = &pr->layers[l];
        char a[48], aa[48], b[48], ba[48], r[96];
        format_us_column(L->st[0].median, a, sizeof a);
        format_us_column(L->attn_us[0], aa, sizeof aa);
        format_us_column(L->st[1].median, b, sizeof b);
        format_us_column(L->attn_us[1], ba, sizeof ba);
        trace_ratio_text(&L->ratio, r, sizeof r);
        fprintf(f, "| %d | %s | %s | %s | %s | %s", l, a, aa, b, ba, r);
        across(f, &*pr, &L->ratio);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

static void trace_findings(FILE *f, const compare_data *m, const trace_pair *pr)
{
    if (!pr->n_only[0] && !pr->n_only[1]) {
        fputs("Findings: the same finding ids in both traces.\n\n", f);
        return;
    }
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < pr->n_only[j]; k++) {
            const finding *fd = pr->only[j][k];
            const variant_analysis *va = pr->va[j];
            char text[1400];
            if (fd->text[0])
                findings_markdown(fd->text, text, sizeof text);
            else
                snprintf(text, sizeof text, "%s", va->findings[fd - va->meta]);
            fputs("- Found only in ", f);
            esc_md_code(f, va->result->name, 0);
            fputs(" (", f);
            esc_md_text(f, m->in[j ? pr->archive : 0]->label);
            fputs("): ", f);
            esc_md_code(f, fd->id, 0);
            fprintf(f, " — %s\n", text);
        }
    fputc('\n', f);
}

static void trace_unpaired_list(FILE *f, const compare_data *m)
{
    const compare_traces *t = &m->traces;
    if (!t->n_unpaired)
        return;
    fputs("Not paired (a trace pairs with the one `--pair` names, or with one of the same name in the other run, "
          "or, when each run holds exactly one model trace, with that one):\n\n", f);
    for (int k = 0; k < t->n_unpaired; k++) {
        const trace_unpaired *u = &t->unpaired[k];
        fputs("- ", f);
        esc_md_code(f, u->va->result->name, 0);
        fputs(" of **", f);
        esc_md_text(f, m->in[u->archive]->label);
        fputs("**: ", f);
        if (!t->n_model[u->against]) {
            esc_md_text(f, m->in[u->against]->label);
            fputs(" holds no model trace (no ProfilerStep#N steps with their CPU ops).\n", f);
        } else {
            fputs("no model trace of its name in ", f);
            esc_md_text(f, m->in[u->against]->label);
            fprintf(f, ", which holds %d.\n", t->n_model[u->against]);
        }
    }
    fputc('\n', f);
}

void compare_md_traces_section(FILE *f, const compare_data *m, const figure_list *figs, const char *inline_from_dir)
{
    const compare_traces *t = &m->traces;
    if (!t->any)
        return;
    fprintf(f, "## Model traces, step by step\n\nA model trace is an imported PyTorch profiler trace whose forwards "
               "are its `ProfilerStep#N` steps and whose GPU operations carry the CPU ops that launched them; its "
               "roles are those of the report's Model section. Each run's model traces are set against the "
               "baseline's: as `--pair` names them, then by name, then, when the two runs hold exactly one each, "
               "that one against that one. The steps are the samples: ratios are of the medians over steps, with a "
               "95%% interval from %d bootstrap resamples of the steps and the verdict against the %.0f%% floor of "
               "CUDA time (`--min-effect`), read as in the tables below; with fewer than %d steps in either run "
               "there is no interval and no verdict.\n\n",
            BOOTSTRAP_RESAMPLES, m->min_effect * 100, COMPARE_MIN_STEPS);
    if (!t->n_pairs)
        fputs("No model trace is paired.\n\n", f);
    for (int k = 0; k < t->n_pairs; k++) {
        const trace_pair *pr = &t->pairs[k];
        trace_pair_head(f, m, pr);
        trace_step_table(f, m, pr);
        trace_role_table(f, m, pr);
        char figure[64];
        snprintf(figure, sizeof figure, "compare-model-roles-%d", k + 1); /* figures/compare_model_roles.c */
        report_md_figure(f, figs, figure, inline_from_dir);
        trace_layers(f, m, pr);
        trace_findings(f, m, pr);
    }
    trace_unpaired_list(f, m);
}
