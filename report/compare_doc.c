/* The comparison as documents: compare.md (GitHub-flavoured Markdown, figures
 * linked), compare.html (the same page self-contained, figures inlined) and
 * compare.csv (one row per variant and run), all from one compare_model, and
 * the atomic directory they are written into. */
#include "compare.h"

#include "archive.h"
#include "escape.h"
#include "latex.h"
#include "exit_codes.h"
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
    snprintf(out, n, "%.2f× [%.2f–%.2f] %s%s%s", r->ci.ratio, r->ci.lo, r->ci.hi, r->verdict == VERDICT_SAME ? "" : "**",
             w, r->verdict == VERDICT_SAME ? "" : "**");
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
        if (!notable && !d->n_only_base && !d->n_only_other) {
            fprintf(f, "the same GPU operations (%d distinct, %g per forward), with the same resources and no "
                       "significant difference in time.\n\n",
                    d->n, per_forward);
            continue;
        }
        if (notable)
            fprintf(f, "%d of the %d distinct GPU operations differ%s (below); the rest have the same name, "
                       "resources, count and time (no significant difference).\n\n",
                    notable, d->n, notable == 1 ? "s" : "");
        else
            fprintf(f, "the same GPU operations (%d distinct), but not the same findings:\n\n", d->n);
        if (notable)
            fputs("| Change | Baseline | This run | Per forward | Median time (baseline → this run) | Ratio [95%] | "
                  "Regs / thread | Shared mem / block | Occupancy (theor.) |\n",
                  f);
        if (notable)
            fputs("|---|---|---|---|---|---|---|---|---|\n", f);
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
            fprintf(f, "| %s | ", change_word(r->change));
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
        if (d->n_only_base || d->n_only_other)
            fputc('\n', f);
    }
}

char *compare_markdown(const compare_model *m, const figure_list *figs, const char *inline_from_dir)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    const run_info *b = &m->in[0]->r;
    fprintf(f, "# attnprof compare — %d runs", m->n);
    if (!m->throughput) {
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
    fputs("\n≠ marks a field whose value differs between the runs.\n\n", f);

    fprintf(f, "## %s\n\n", m->throughput ? "Throughput per forward" : "CUDA time per forward");
    table_head(f, m, "Variant");
    summary_rows(f, m, ROW_METRIC);
    fprintf(f,
            "Each cell: median (min – max, n) over the recorded forwards. *vs baseline*: the ratio of this run's "
            "median to the baseline's (%s), then its 95%% interval from %d bootstrap resamples of the per-forward "
            "samples (seeded, so the numbers repeat), then the verdict. A run is called faster or slower only when "
            "the interval excludes 1 and the ratio is at least %.0f%% from 1 (`--min-effect`): two identical "
            "batches on one H200 differ by up to about 1.5%% in a fused kernel's median.\n\n",
            m->throughput ? "above 1 is faster" : "below 1 is faster", BOOTSTRAP_RESAMPLES, m->min_effect * 100);

    fputs("## CPU time per forward\n\n", f);
    table_head(f, m, "Variant");
    summary_rows(f, m, ROW_CPU);
    fputs("CPU time is the host wall time of the forward call (recorded with CUPTI collecting); the same "
          "statistics and threshold as above, below 1 is faster.\n\n",
          f);

    fputs("## GPU operations per forward\n\n", f);
    table_head(f, m, "Variant");
    ops_rows(f, m);

    fputs("## Figures\n\n", f);
    report_md_figure(f, figs, "compare-time", inline_from_dir);
    report_md_figure(f, figs, "compare-speedup", inline_from_dir);
    report_md_figure(f, figs, "compare-timeline", inline_from_dir);

    fputs("## Kernels, variant by variant\n\n", f);
    fputs("Each run's GPU operations are matched to the baseline's: by name first, then, in forward order, a "
          "kernel of the same class in the same place is the same kernel *renamed* (another cuDNN knob, another "
          "cuBLAS GEMM); the rest were *added* or *removed*. Findings are matched by their wording with the "
          "numbers taken out.\n\n",
          f);
    for (int v = 0; v < m->n_variants; v++)
        kernel_section(f, m, &m->variants[v]);
    fclose(f);
    return buf;
}

/* ",median,min,max,ratio,ratio_lo,ratio_hi,verdict" of one measure of a cell. */
static void csv_stats_ratio(FILE *f, const stats *st, const compare_ratio *r)
{
    esc_csv_number(f, st->median);
    esc_csv_number(f, st->min);
    esc_csv_number(f, st->max);
    esc_csv_number(f, r->ci.ratio);
    esc_csv_number(f, r->ci.lo);
    esc_csv_number(f, r->ci.hi);
    fprintf(f, ",%s", compare_verdict_word(r->verdict));
}

char *compare_csv(const compare_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
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
            csv_stats_ratio(f, &c->metric_stats, &c->metric_ratio);
            csv_stats_ratio(f, &c->cpu_stats, &c->cpu_ratio);
            esc_csv_number(f, c->n ? c->ops_stats.median : NAN);
            esc_csv_number(f, c->n && cv->cell[0].n && i ? c->ops_stats.median - cv->cell[0].ops_stats.median : NAN);
            fputc('\n', f);
        }
    }
    fclose(f);
    return buf;
}

int compare_write(const compare_model *m, const char *dest, const compare_options *opt, int force, char *err,
                  size_t errlen)
{
    if (path_exists(dest) && !force) {
        snprintf(err, errlen, "%s exists; pass --force to replace it or choose another -o", dest);
        return EXIT_OUTPUT_EXISTS;
    }
    char tmp[PATH_MAX + 64];
    if (archive_begin(dest, tmp, sizeof tmp, err, errlen) != 0)
        return EXIT_IO;
    figure_list figs = {0};
    int rc = EXIT_OK;
    if (compare_figures_render(m, tmp, opt->formats, opt->log_axis, &figs, err, errlen) != 0 ||
        compare_figures_render_paper(m, tmp, opt->formats, opt->figure_size, &figs, err, errlen) != 0)
        rc = EXIT_IO;
    char *md = NULL, *md_inline = NULL, *html = NULL, *csv = NULL, *tex = NULL;
    if (rc == EXIT_OK) {
        md = compare_markdown(m, &figs, NULL);
        md_inline = compare_markdown(m, &figs, tmp);
        char title[256];
        snprintf(title, sizeof title, "attnprof compare — %d runs, baseline %s", m->n, m->in[0]->label);
        html = report_html(md_inline, title, err, errlen);
        csv = compare_csv(m);
        tex = compare_tex(m);
        if (!html)
            rc = EXIT_IO;
    }
    if (rc == EXIT_OK && (report_write_file(tmp, "compare.md", md, err, errlen) != 0 ||
                          report_write_file(tmp, "compare.html", html, err, errlen) != 0 ||
                          report_write_file(tmp, "compare.csv", csv, err, errlen) != 0 ||
                          report_write_file(tmp, "compare.tex", tex, err, errlen) != 0))
        rc = EXIT_IO;
    free(md);
    free(md_inline);
    free(html);
    free(csv);
    free(tex);
    figure_list_free(&figs);
    if (rc == EXIT_OK && archive_commit(tmp, dest, force, err, errlen) != 0)
        rc = force ? EXIT_IO : EXIT_OUTPUT_EXISTS;
    if (rc != EXIT_OK)
        remove_tree(tmp);
    return rc;
}
