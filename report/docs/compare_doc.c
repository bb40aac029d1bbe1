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
    snprintf(out, n, "%.2f× [%.2f–%.2f] %s%s%s", r->ci.ratio, r->ci.lo, r->ci.hi, bold ? "**" : "", w, bold ? "**" : "");
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
          "Findings are matched by their head (the wording before the first colon, parenthesis or "
          "name, numbers taken out); a finding that rests on a record the other run does not hold (an import "
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

char *compare_csv(const compare_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    const char *metric = m->throughput ? "tflops" : "cuda_us";
    fprintf(f, "variant,archive,baseline,state,reason,forwards,%s_median,%s_min,%s_max,ratio,ratio_lo,ratio_hi,"
               "verdict,cpu_us_median,cpu_us_min,cpu_us_max,cpu_ratio,cpu_ratio_lo,cpu_ratio_hi,cpu_verdict,"
               "ops_per_forward,ops_vs_baseline\n",
            metric, metric, metric);
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
            fputc('\n', f);
        }
    }
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
    if (compare_figures_render(d->m, dir, d->opt->formats, d->opt->log_axis, figs, err, errlen) != 0 ||
        compare_figures_render_paper(d->m, dir, d->opt->formats, d->opt->figure_size, figs, err, errlen) != 0)
        return EXIT_IO;
    return EXIT_OK;
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
