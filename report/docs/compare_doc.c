/* The comparison as documents: compare.md (GitHub-flavoured Markdown, figures
 * linked), compare.html (the same page self-contained, figures inlined),
 * compare.csv (one row per variant and run) and compare.tex, all from one
 * compare_model: the rows of the comparison's bundle, which the document pipeline
 * (doc_bundle.h) writes as a directory of its own. */
#include "alloc.h"
#include "compare_doc.h"

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

static void metric_text(const compare_model *m, double v, char *out, size_t n)
{
    if (!isfinite(v))
        snprintf(out, n, "–");
    else if (m->throughput)
        snprintf(out, n, "%.1f TFLOP/s", v);
    else
        format_us_column(v, out, n);
}

/* "622 µs (620 µs – 627 µs, n=20)", or why there is no number. */
static void cell_text(const compare_model *m, const compare_cell *c, const stats *st, char *out, size_t n)
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
        metric_text(m, st->median, med, sizeof med);
        metric_text(m, st->min, lo, sizeof lo);
        metric_text(m, st->max, hi, sizeof hi);
    }
    int len = st->n ? snprintf(out, n, "%s (%s – %s, n=%d)", med, lo, hi, st->n) : snprintf(out, n, "no forwards");
    if (c->va->result->status == VARIANT_FAILED && len >= 0 && (size_t)len < n)
        snprintf(out + len, n - (size_t)len, "; **FAILED**: %s", c->reason);
}

/* "0.93× [0.92–0.94] **faster**" */
static void ratio_text(const compare_ratio *r, char *out, size_t n)
{
    if (r->verdict == VERDICT_NONE) {
        snprintf(out, n, "–");
        return;
    }
    const char *w = compare_verdict_word(r->verdict);
    int bold = r->verdict == VERDICT_FASTER || r->verdict == VERDICT_SLOWER;
    int d = units_ratio_decimals(r->ci.lo, r->ci.hi);
    snprintf(out, n, "%.*f× [%.*f–%.*f] %s%s%s", d, r->ci.ratio, d, r->ci.lo, d, r->ci.hi, bold ? "**" : "", w,
             bold ? "**" : "");
}

static void table_head(FILE *f, const compare_model *m, const char *first)
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

static void summary_rows(FILE *f, const compare_model *m, row_kind kind)
{
    char buf[1024];
    for (int v = 0; v < m->n_variants; v++) {
        const compare_variant *cv = &m->variants[v];
        fputs("| ", f);
        esc_md_code(f, cv->name, 1);
        fputs(" |", f);
        for (int i = 0; i < m->n; i++) {
            const compare_cell *c = &cv->cell[i];
            cell_text(m, c, kind == ROW_METRIC ? &c->metric_stats : &c->cpu_stats, buf, sizeof buf);
            fputc(' ', f);
            esc_md_text(f, buf);
            fputs(" |", f);
            if (i > 0) {
                ratio_text(kind == ROW_METRIC ? &c->metric_ratio : &c->cpu_ratio, buf, sizeof buf);
                fprintf(f, " %s |", buf);
            }
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

static void ops_rows(FILE *f, const compare_model *m)
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

static const char *change_word(kernel_change c)
{
    switch (c) {
    case KERNEL_SAME: return "same";
    case KERNEL_RENAMED: return "**renamed**";
    case KERNEL_ADDED: return "**added**";
    case KERNEL_REMOVED: return "**removed**";
    }
    return "";
}

static void op_name(const kernel_summary *k, char *out, size_t n)
{
    if (!k) {
        snprintf(out, n, "–");
        return;
    }
    char s[256];
    if (k->op->kind == GPU_KERNEL) {
        short_kernel_name(k->op->name, s, sizeof s);
        if (!s[0])
            snprintf(s, sizeof s, "%s", k->op->name);
    } else {
        snprintf(s, sizeof s, "%s", k->op->name);
    }
    esc_md_code_cell_buf(out, n, s); /* a cell of the kernel table */
    /* A copy's or memset's name says its direction, not its size: add the bytes,
     * by which they are paired. */
    if (k->op->kind != GPU_KERNEL) {
        char b[32];
        size_t len = strlen(out);
        snprintf(out + len, len < n ? n - len : 0, " %s", human_bytes((double)k->op->bytes, b, sizeof b));
    }
}

/* "168" when equal, "168 → 232" when not, "–" on a missing side. */
static void pair_int(const kernel_row *r, int b, int o, const char *unit, char *out, size_t n)
{
    if (!r->base || !r->other)
        snprintf(out, n, "%d%s", r->base ? b : o, unit);
    else if (b == o)
        snprintf(out, n, "%d%s", b, unit);
    else
        snprintf(out, n, "**%d%s → %d%s**", b, unit, o, unit);
}

static void pair_occ(const kernel_row *r, char *out, size_t n)
{
    double b = r->base ? r->base->occupancy : NAN, o = r->other ? r->other->occupancy : NAN;
    if (!isfinite(b) && !isfinite(o))
        snprintf(out, n, "–");
    else if (!r->base || !r->other || !isfinite(b) || !isfinite(o))
        snprintf(out, n, "%.0f%%", (isfinite(b) ? b : o) * 100);
    else if (fabs(b - o) < 1e-9)
        snprintf(out, n, "%.0f%%", b * 100);
    else
        snprintf(out, n, "**%.0f%% → %.0f%%**", b * 100, o * 100);
}

/* "4 ops, 12.2 µs" of one role in one run, or "–" when the run has none. */
static void role_cell(const role_time *rt, char *out, size_t n)
{
    if (!rt->n) {
        snprintf(out, n, "–");
        return;
    }
    char us[48];
    format_us_column(rt->st.median, us, sizeof us);
    snprintf(out, n, "%g op%s, %s", rt->ops, rt->ops == 1 ? "" : "s", us);
}

/* Time per forward by role, when the forward has more than one role: the step
 * by step comparison that holds when the two runs use other kernels or another
 * number of them for a step. */
static void role_table(FILE *f, const compare_model *m, const compare_variant *cv, int i)
{
    int n_roles = 0;
    for (int r = 0; r < ROLE_COUNT; r++)
        n_roles += cv->roles[0][r].n || cv->roles[i][r].n;
    if (n_roles < 2)
        return;
    fputs("Time per forward by role (median over the forwards of the summed durations of the role's "
          "operations, with the median operation count):\n\n",
          f);
    fputs("| Role | Baseline | This run | Ratio [95%] |\n|---|---|---|---|\n", f);
    for (int r = 0; r < ROLE_COUNT; r++) {
        const role_time *b = &cv->roles[0][r], *o = &cv->roles[i][r];
        if (!b->n && !o->n)
            continue;
        char bt[96], ot[96], ratio[96];
        role_cell(b, bt, sizeof bt);
        role_cell(o, ot, sizeof ot);
        ratio_text(&o->ratio, ratio, sizeof ratio);
        fprintf(f, "| %s | %s | %s | %s |\n", op_role_name((op_role)r), bt, ot, ratio);
    }
    fputc('\n', f);
}

static void kernel_section(FILE *f, const compare_model *m, const compare_variant *cv)
{
    fputs("### ", f);
    esc_md_code(f, cv->name, 0);
    fputs("\n\n", f);
    for (int i = 1; i < m->n; i++) {
        const kernel_diff *d = &cv->diff[i];
        fputs("**", f);
        esc_md_text(f, m->in[i]->label);
        fputs("** vs the baseline: ", f);
        if (!cv->cell[0].va || !cv->cell[i].va) {
            fprintf(f, "%s.\n\n", !cv->cell[i].va ? "not run in this archive" : "not run in the baseline");
            continue;
        }
        int notable = 0;
        for (int k = 0; k < d->n; k++)
            notable += d->rows[k].notable;
        double per_forward = 0;
        for (int k = 0; k < d->n; k++)
            per_forward += d->rows[k].base ? d->rows[k].base->per_forward : 0;
        if (!notable && !d->n_only_base && !d->n_only_other && !d->n_gap_base && !d->n_gap_other) {
            fprintf(f, "the same GPU operations (%d distinct, %g per forward), with the same resources and the "
                       "same time (every interval within the %.0f%% noise floor).\n\n",
                    d->n, per_forward, m->min_effect * 100);
            continue;
        }
        if (notable)
            fprintf(f, "%d of the %d distinct GPU operations %s below: another kernel, another count or other "
                       "resources, or a time not shown to be the same (faster, slower or ambiguous against the "
                       "%.0f%% noise floor); the rest have the same role, name, resources and count, and the same "
                       "time.\n\n",
                    notable, d->n, notable == 1 ? "is" : "are", m->min_effect * 100);
        else
            fprintf(f, "the same GPU operations (%d distinct), but not the same findings:\n\n", d->n);
        if (notable)
            role_table(f, m, cv, i);
        if (notable)
            fputs("| Role | Change | Baseline | This run | Per forward | Median time of one launch (baseline → this run) "
                  "| Ratio [95%] | Regs / thread | Shared mem / block | Occupancy (theor.) |\n",
                  f);
        if (notable)
            fputs("|---|---|---|---|---|---|---|---|---|---|\n", f);
        for (int k = 0; k < d->n; k++) {
            const kernel_row *r = &d->rows[k];
            if (!r->notable)
                continue;
            char bn[300], on[300], tb[48], to[48], regs[64], smem[80], occ[64], per[48];
            op_name(r->base, bn, sizeof bn);
            op_name(r->other, on, sizeof on);
            format_us_column(r->base ? r->base->median_us : NAN, tb, sizeof tb);
            format_us_column(r->other ? r->other->median_us : NAN, to, sizeof to);
            if (r->base && r->other && fabs(r->base->per_forward - r->other->per_forward) > 1e-9)
                snprintf(per, sizeof per, "**%g → %g**", r->base->per_forward, r->other->per_forward);
            else
                snprintf(per, sizeof per, "%g", r->base ? r->base->per_forward : r->other->per_forward);
            pair_int(r, r->base ? r->base->registers : 0, r->other ? r->other->registers : 0, "", regs, sizeof regs);
            pair_int(r, r->base ? r->base->smem : 0, r->other ? r->other->smem : 0, " B", smem, sizeof smem);
            pair_occ(r, occ, sizeof occ);
            fprintf(f, "| %s | %s | ", op_role_name(r->base ? r->base->role : r->other->role), change_word(r->change));
            fputs(bn, f);
            fputs(" | ", f);
            fputs(r->change == KERNEL_SAME ? "same" : on, f);
            fprintf(f, " | %s | %s → %s | ", per, tb, to);
            char ratio[96];
            ratio_text(&r->time, ratio, sizeof ratio);
            fputs(ratio, f);
            fprintf(f, " | %s | %s | %s |\n", regs, smem, occ);
        }
        if (notable)
            fputc('\n', f);
        for (int k = 0; k < d->n_only_other; k++) {
            fputs("- Found only in this run: ", f);
            esc_md_text(f, d->only_other[k]);
            fputc('\n', f);
        }
        for (int k = 0; k < d->n_only_base; k++) {
            fputs("- Found only in the baseline: ", f);
            esc_md_text(f, d->only_base[k]);
            fputc('\n', f);
        }
        for (int k = 0; k < d->n_gap_base; k++) {
            fprintf(f, "- Found in the baseline, not testable in this run (it records %s): ", d->gap_base[k].missing);
            esc_md_text(f, d->gap_base[k].text);
            fputc('\n', f);
        }
        for (int k = 0; k < d->n_gap_other; k++) {
            fprintf(f, "- Found in this run, not testable in the baseline (it records %s): ", d->gap_other[k].missing);
            esc_md_text(f, d->gap_other[k].text);
            fputc('\n', f);
        }
        if (d->n_only_base || d->n_only_other || d->n_gap_base || d->n_gap_other)
            fputc('\n', f);
    }
}

/* ---- model traces, step by step (compare_traces.c) ----------------------------------- */

/* A ratio of a model-trace pair: with its interval and verdict, or the ratio of the medians
 * alone when the pair has too few steps for one. */
static void trace_ratio_text(const compare_ratio *r, char *out, size_t n)
{
    if (r->verdict != VERDICT_NONE)
        ratio_text(r, out, n);
    else if (isfinite(r->ci.ratio))
        snprintf(out, n, "%.2f× (medians; no verdict)", r->ci.ratio);
    else
        snprintf(out, n, "–");
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

static void trace_name(FILE *f, const compare_model *m, const trace_pair *pr, int j)
{
    esc_md_code(f, pr->va[j]->result->name, 1);
    fputs(" (", f);
    esc_md_text(f, m->in[j ? pr->archive : 0]->label);
    fputs(")", f);
}

static void trace_pair_head(FILE *f, const compare_model *m, const trace_pair *pr)
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

static void trace_step_table(FILE *f, const compare_model *m, const trace_pair *pr)
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
    fprintf(f, "| CUDA time per step | %s | %s | %s |\n", a, b, r);
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

static void trace_role_table(FILE *f, const compare_model *m, const trace_pair *pr)
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
        fprintf(f, " %s |\n", r);
    }
    fputc('\n', f);
}

static void trace_layers(FILE *f, const compare_model *m, const trace_pair *pr)
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
        fprintf(f, "| %d | %s | %s | %s | %s | %s |\n", l, a, aa, b, ba, r);
    }
    fputc('\n', f);
}

static void trace_findings(FILE *f, const compare_model *m, const trace_pair *pr)
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

static void trace_unpaired_list(FILE *f, const compare_model *m)
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

static void traces_section(FILE *f, const compare_model *m, const figure_list *figs, const char *inline_from_dir)
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

/* issue 25: 1 when some ratio was judged against the runs' between-pass spread. */
static int any_replicate_floor(const compare_model *m)
{
    for (int v = 0; v < m->n_variants; v++)
        for (int i = 1; i < m->n; i++)
            if (m->variants[v].cell[i].replicate_floor)
                return 1;
    return 0;
}

/* The replicate rule and the floor each variant was judged against, where it applied. */
static void replicate_rule(FILE *f, const compare_model *m, int which)
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
              "of each pass: the drift between batches measured in the runs themselves. Floors used:", f);
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
        }
    fputs(".\n\n", f);
}

char *compare_markdown(const compare_model *m, const figure_list *figs, const char *inline_from_dir)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    const run_info *b = &m->in[0]->r;
    fprintf(f, "# attnprof compare — %d runs", m->n);
    if (!m->throughput && run_info_shape_recorded(b)) {
        fprintf(f, " of %d×%d×%d×%d ", b->shape.batch, b->shape.heads, b->shape.seq, b->shape.dim);
        esc_md_text(f, b->dtype);
        fputs(b->causal ? " causal" : "", f);
    }
    fputs("\n\n", f);
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

    traces_section(f, m, figs, inline_from_dir);

    fprintf(f, "## %s\n\n", m->throughput ? "Throughput per forward" : "CUDA time per forward");
    table_head(f, m, "Variant");
    summary_rows(f, m, ROW_METRIC);
    fprintf(f,
            "Each cell: median (min – max, n) over the recorded forwards. *vs baseline*: the ratio of this run's "
            "median to the baseline's (%s), then its 95%% interval from %d bootstrap resamples of the per-forward "
            "samples (seeded, so the numbers repeat), then the verdict against a noise floor of %.0f%% "
            "(`--min-effect`): *same* when the whole interval lies within ×/÷ %.2f, *faster* or *slower* when it "
            "lies wholly beyond, *ambiguous* when it straddles the edge. The interval holds the spread of one "
            "run's forwards only; the floor covers the drift between runs: two runs of one batch on the H200 "
            "differed by up to 1.4%% in CUDA time (bench/RESULTS.md).\n\n",
            m->throughput ? "above 1 is faster" : "below 1 is faster", BOOTSTRAP_RESAMPLES, m->min_effect * 100,
            1 + m->min_effect);
    replicate_rule(f, m, ROW_METRIC);

    fputs("## CPU time per forward\n\n", f);
    table_head(f, m, "Variant");
    summary_rows(f, m, ROW_CPU);
    fprintf(f,
            "CPU time is the host wall time of the forward call (recorded with CUPTI collecting), below 1 is "
            "faster. Host time drifts between runs far more than GPU time: runs of one batch on the H200 differed "
            "by up to 1.87× in a variant's median (bench/RESULTS.md), so the floor here is %.0f%%: a run is "
            "faster or slower only when the whole interval lies beyond ×/÷ %.2f, and same or ambiguous otherwise. "
            "%s\n\n",
            m->cpu_floor * 100, 1 + m->cpu_floor,
            any_replicate_floor(m) ? "Where both runs hold replicates, the floor is their between-pass spread "
                                     "where that is larger (below)."
                                   : "The archives hold one batch each, no replicate runs to measure the floor from.");
    replicate_rule(f, m, ROW_CPU);

    fputs("## GPU operations per forward\n\n", f);
    table_head(f, m, "Variant");
    ops_rows(f, m);

    fputs("## Figures\n\n", f);
    report_md_figure(f, figs, "compare-time", inline_from_dir);
    report_md_figure(f, figs, "compare-speedup", inline_from_dir);
    report_md_figure(f, figs, "compare-timeline", inline_from_dir);

    fputs("## Kernels, variant by variant\n\n", f);
    fputs("Each run's GPU operations are matched to the baseline's within their *role* in the attention forward "
          "(QKᵀ GEMM, scale, mask build, mask apply, softmax, softmax NaN guard, PV GEMM, fused attention, cast, "
          "copy, memset, other), read from the kernel's name, the record's kind, the ATen op that launched it "
          "where the trace has one, and its place before or after the softmax; operations of different roles are "
          "never paired. Within a role: the same name first (copies and memsets: the same direction and bytes); "
          "then a copy or memset of the same direction with other bytes, or, in forward order, another kernel "
          "doing the same step (*renamed*: another cuDNN knob, PyTorch's kernel for ours); what has no "
          "counterpart of its role was *added* or *removed* and is listed under its role. Where the forward has "
          "more than one role, a first table sets each role's time per forward side by side (the summed durations "
          "of its operations, median over the forwards): the like-with-like measure when the runs do a step with "
          "other kernels or another number of them. In the kernel table, times are the median of one launch. "
          "Findings are matched by their id (as findings.json lists them); a finding that rests on a record the other run does not hold (an import "
          "records no expected operation count, setup phases or output check) is listed as not testable there, "
          "not as found in one run only.\n\n",
          f);
    for (int v = 0; v < m->n_variants; v++)
        kernel_section(f, m, &m->variants[v]);
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
static void trace_csv_rows(FILE *f, const compare_model *m, const trace_pair *pr, const stats *st,
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
static void trace_pair_csv(FILE *f, const compare_model *m, const trace_pair *pr)
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

char *compare_csv(const compare_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    const char *metric = m->throughput ? "tflops" : "cuda_us";
    /* Model traces add four columns (compare_traces_csv): the rows above them are kind `variant`. */
    int traces = m->traces.any;
    fprintf(f, "variant,archive,baseline,state,reason,forwards,%s_median,%s_min,%s_max,ratio,ratio_lo,ratio_hi,"
               "verdict,cpu_us_median,cpu_us_min,cpu_us_max,cpu_ratio,cpu_ratio_lo,cpu_ratio_hi,cpu_verdict,"
               "ops_per_forward,ops_vs_baseline%s\n",
            metric, metric, metric, traces ? ",kind,phase,part,implementation" : "");
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
            fputs(traces ? ",variant,,,\n" : "\n", f);
        }
    }
    for (int k = 0; k < m->traces.n_pairs; k++)
        trace_pair_csv(f, m, &m->traces.pairs[k]);
    fclose(f);
    return buf;
}

/* ---- the comparison's bundle (doc_bundle.h) ------------------------------------------ */

typedef struct compare_doc {
    const compare_model *m;
    const compare_options *opt;
} compare_doc;

static int draw_compare(const doc_bundle *b, const char *dir, figure_list *figs, char *err, size_t errlen)
{
    const compare_doc *d = b->model;
    int rc = compare_figures_render(d->m, dir, d->opt->formats, d->opt->log_axis, figs, err, errlen);
    if (rc == EXIT_OK)
        rc = compare_figures_render_paper(d->m, dir, d->opt->formats, d->opt->figure_size, figs, err, errlen);
    return rc;
}

static char *compare_md(const doc_bundle *b, const figure_list *figs, const char *inline_from_dir)
{
    return compare_markdown(((const compare_doc *)b->model)->m, figs, inline_from_dir);
}

static int compare_csv_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(compare_csv(((const compare_doc *)p->bundle->model)->m), out, err, n);
}
static int compare_tex_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(compare_tex(((const compare_doc *)p->bundle->model)->m), out, err, n);
}

/* compare.tex is the last document written: from then on the directory is renamed in. */
static const doc_output compare_outputs[] = {
    {"compare.md", doc_markdown_row, NULL},
    {"compare.html", doc_html_row, NULL},
    {"compare.csv", compare_csv_row, NULL},
    {"compare.tex", compare_tex_row, NULL},
};

int compare_write(const compare_model *m, const char *dest, const compare_options *opt, int force, char *err,
                  size_t errlen)
{
    compare_doc d = {m, opt};
    char title[256];
    snprintf(title, sizeof title, "attnprof compare — %d runs, baseline %s", m->n, m->in[0]->label);
    const doc_bundle b = {.kind = "compare", .noun = "comparison", .title = title, .model = &d,
                          .draw = draw_compare, .markdown = compare_md, .outputs = compare_outputs,
                          .n_outputs = (int)(sizeof compare_outputs / sizeof compare_outputs[0]),
                          .placement = DOC_OWN_DIRECTORY, .quiet = 1};
    return doc_bundle_write(&b, dest, force, err, errlen);
}
