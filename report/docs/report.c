/* report.md: a table of sections (report_sections below: each a name, when it applies and its
 * writer), walked in order by one loop. This file holds the table and the sections that are a
 * table or a paragraph of their own: the summary, the measurement, the CUPTI overhead, the
 * occupancy and the figures for a paper; the header (report_header.c), the variants
 * (report_variants.c) and the sections of other modules (series, prediction, model, kernel
 * names, citation) are rows of the table too. */
#include "report_md.h"

#include "alloc.h"
#include "backward_section.h"
#include "escape.h"
#include "finding_phrases.h"
#include "kernel_names.h"
#include "measurement_text.h"
#include "model_roles.h"
#include "model_section.h"
#include "record_section.h"
#include "predict.h"
#include "predict_report.h"
#include "series.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A table cell of medians and ranges: µs throughout (one unit per column). */
static void time_stats_column(const stats *s, char *out, size_t n)
{
    if (s->n == 0) {
        snprintf(out, n, "–");
        return;
    }
    char med[32], lo[32], hi[32];
    format_us_column(s->median, med, sizeof med);
    format_us_column(s->min, lo, sizeof lo);
    format_us_column(s->max, hi, sizeof hi);
    snprintf(out, n, "%s (%s – %s, n=%d)", med, lo, hi, s->n);
}

void format_time_stats(const stats *s, char *out, size_t n)
{
    if (s->n == 0) {
        snprintf(out, n, "–");
        return;
    }
    char med[32], lo[32], hi[32];
    format_us(s->median, med, sizeof med);
    format_us(s->min, lo, sizeof lo);
    format_us(s->max, hi, sizeof hi);
    snprintf(out, n, "%s (%s – %s, n=%d)", med, lo, hi, s->n);
}

static void ops_text(const variant_analysis *va, char *out, size_t n)
{
    if (!va->n_forwards) {
        snprintf(out, n, "–");
        return;
    }
    int other = va->ops_per_forward - va->kernels_per_forward - va->memcpy_per_forward;
    int len = snprintf(out, n, "%d", va->ops_per_forward);
    if (va->memcpy_per_forward || other)
        len += snprintf(out + len, n - (size_t)len, " (%d kernel%s%s", va->kernels_per_forward,
                        va->kernels_per_forward == 1 ? "" : "s", va->memcpy_per_forward ? " + " : "");
    if (va->memcpy_per_forward)
        len += snprintf(out + len, n - (size_t)len, "%d Memcpy", va->memcpy_per_forward);
    if (other)
        len += snprintf(out + len, n - (size_t)len, " + %d Memset", other);
    if (va->memcpy_per_forward || other)
        len += snprintf(out + len, n - (size_t)len, ")");
    if (va->result->expected_ops >= 0 && va->ops_per_forward != va->result->expected_ops)
        snprintf(out + len, n - (size_t)len, "; expected %d", va->result->expected_ops);
}

/* The variant's headline findings as short phrases, each linked to its sentence in the
 * variant's section, then "N more" linked to the section (finding_phrases.h: rank and limit). */
static void summary_findings_cell(FILE *f, const variant_analysis *va, int variant)
{
    finding_cell c;
    finding_cell_build(va, &c);
    finding_cell_write_md(f, va, variant, &c);
}

static void summary_table(FILE *f, const report_doc *d)
{
    const analysis *a = d->a;
    const report_reference *ref = d->ref;
    fprintf(f, "## Summary\n\n");
    int series = series_applies(a); /* the series' column only where it published the variants */
    /* an import changed nothing: its variants are sources, and its CPU times were taken under the
     * producer's profiler */
    const char *unit = model_unit_word_of_run(a); /* a training step is a step */
    fprintf(f, "| Variant | %s | Kernels / %s | CUDA time / %s (median, min – max, n) | "
               "CPU time / %s (%s) | rel. error vs FP64 |",
            a->run->imported ? "Source" : "What we changed", unit, unit, unit,
            a->run->producer == PRODUCER_PYTORCH ? "under PyTorch's profiler"
            : a->run->imported                   ? "under the producer's profiler"
                                                 : "under CUPTI");
    if (series)
        fprintf(f, " Reference: %s |", SERIES_LABEL);
    if (ref) {
        fputs(" Reference: ", f);
        esc_md_text(f, ref->label);
        fputs(", CUDA / CPU time per forward |", f);
    }
    fprintf(f, " What the trace revealed |\n");
    fprintf(f, "|---|---|---|---|---|---|%s%s---|\n", series ? "---|" : "", ref ? "---|" : "");
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        const variant_result *r = va->result;
        char ops[96], cuda[96], cpu[96], err[32];
        ops_text(va, ops, sizeof ops);
        time_stats_column(&va->cuda_us, cuda, sizeof cuda);
        time_stats_column(&va->cpu_us, cpu, sizeof cpu);
        if (isfinite(r->rel_error))
            snprintf(err, sizeof err, "%.1e", r->rel_error);
        else
            snprintf(err, sizeof err, "%s",
                     a->run->imported ? REPORT_NOT_RECORDED : r->status == VARIANT_OK ? "–" : "NaN or none");
        fputs("| ", f);
        esc_md_code(f, r->name, 1);
        fprintf(f, "%s | ", report_status_word(r));
        esc_md_text(f, r->what_changed);
        fprintf(f, " | %s | %s | %s | %s | ", ops, cuda, cpu, err);
        if (series) {
            char cellv[256];
            series_cell(r->name, cellv, sizeof cellv);
            fprintf(f, "%s | ", cellv);
        }
        if (ref) {
            /* PyTorch's variants carry their file's kineto_ and sdpa_ prefixes in an import */
            const variant_analysis *rv = series_counterpart(ref->a, r->name);
            if (rv && rv->n_forwards) {
                char rc[32], rp[32];
                format_us_column(rv->cuda_us.median, rc, sizeof rc);
                format_us_column(rv->cpu_us.median, rp, sizeof rp);
                char ops_noun[24];
                fprintf(f, "%s / %s (%s, n=%d) | ", rc, rp,
                        units_count_noun(rv->ops_per_forward, "op", ops_noun, sizeof ops_noun), rv->n_forwards);
            } else {
                fputs("not in the reference | ", f);
            }
        }
        summary_findings_cell(f, va, i);
        fprintf(f, " |\n");
    }
    fputc('\n', f);
}

/* Per variant, how the stop rule ended, the clocks its forwards ran at and which were
 * throttled; absent for archives without a measurement plan or samples (the header's
 * Measurement row says "not recorded"). */
static int measurement_applies(const report_doc *d) { return measurement_variant_applies(d->a); }

static void measurement_table(FILE *f, const report_doc *d)
{
    const analysis *a = d->a;
    fputs("## Measurement\n\n| Variant | Stop rule outcome | Clocks of its forwards (NVML) | Throttled forwards |\n"
          "|---|---|---|---|\n", f);
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        char stop[256], clocks[96], thr[192];
        measurement_stop_text(a, va, stop, sizeof stop);
        measurement_clock_text(va, clocks, sizeof clocks);
        measurement_throttle_text(a, va, thr, sizeof thr);
        fputs("| ", f);
        esc_md_code(f, va->result->name, 1);
        fputs(" | ", f);
        esc_md_text(f, stop);
        fputs(" | ", f);
        esc_md_text(f, clocks);
        fputs(" | ", f);
        esc_md_text(f, thr);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

/* The CUPTI overhead probe's times, where the run measured them (never in an import). */
static int overhead_applies(const report_doc *d)
{
    for (int i = 0; i < d->a->n; i++)
        if (isfinite(d->a->v[i].result->event_us_cupti))
            return 1;
    return 0;
}

/* The share of a forward below which the Memset records' cost is not told apart from the
 * probe's jitter. */
#define MEMSET_RECORDS_RESOLVED 0.01

/* Where the probe also timed CUPTI on with its Memset records off (the variant's forwards
 * issued Memsets), what those records cost, from the three medians. */
static void memset_records_cost(FILE *f, const analysis *a)
{
    int n = 0;
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        const variant_result *r = va->result;
        const double off = r->event_us_no_cupti, on = r->event_us_cupti, quiet = r->event_us_cupti_no_memset;
        const int memsets = va->memset_per_forward;
        /* Said only of forwards that issue Memsets, as the sentence claims. */
        if (!(memsets > 0 && isfinite(quiet) && quiet > 0 && isfinite(on) && isfinite(off) && off > 0))
            continue;
        if (!n++)
            fputs("The probe timed a third state where a variant's forwards issued Memsets: CUPTI on, its Memset "
                  "records alone off. ",
                  f);
        esc_md_code(f, r->name, 1);
        fprintf(f, ": %.1f µs, %+.1f%% over CUPTI off, against %+.1f%% with them (%d Memset%s per forward", quiet,
                100.0 * (quiet / off - 1.0), 100.0 * (on / off - 1.0), memsets, memsets == 1 ? "" : "s");
        /* A per-record cost only where the records' share reaches MEMSET_RECORDS_RESOLVED: the
         * probe's states differed by ±0.3% where they differ in nothing (H200, 2026-12-04; 1.7%
         * the worst seen), so a smaller difference says nothing per record. */
        if ((on - quiet) / off >= MEMSET_RECORDS_RESOLVED)
            fprintf(f, ": %.2f µs of GPU time per Memset record)", (on - quiet) / memsets);
        else
            fprintf(f, "; the difference is under %.1f%% of the forward, within the probe's jitter)",
                    100 * MEMSET_RECORDS_RESOLVED);
        fputs(". ", f);
    }
    if (n)
        fputs("\n\n", f);
}

static void overhead_table(FILE *f, const report_doc *d)
{
    const analysis *a = d->a;
    /* Archives since the probe sized its samples hold its sizes as a fact per variant. */
    int sized = 0;
    for (int i = 0; i < a->n; i++)
        for (int k = 0; k < a->v[i].result->facts.n; k++)
            sized |= !strcmp(a->v[i].result->facts.item[k].key, "overhead_probe_samples");
    fprintf(f, "## CUPTI overhead\n\n");
    if (sized)
        fputs("The same forward timed with CUDA events, CUPTI's activity collection off and on: samples of 1 to 8 "
              "forwards queued back to back between two events (enough for 2 ms of GPU time), up to 20 samples "
              "with CUPTI off and 20 with it on (never under 5; fewer where 20 would take more than 1 s of GPU "
              "time: each variant's count is among its facts), interleaved, median per forward. Beside it, the ",
              f);
    else
        fputs("The same forward timed with CUDA events, CUPTI's activity collection off and on: 8 forwards "
              "queued back to back between two events, 20 such samples with CUPTI off and 20 with it on, "
              "interleaved, median per forward. Beside it, the ", f);
    fprintf(f, ""
               "host wall time of one forward call in both cases: CUPTI's API records cost host time, so the CPU "
               "times of the summary, taken under CUPTI, are upper bounds.\n\n"
               "The summary's CPU time and the host time here are two measurements of the same call, taken "
               "differently. The summary's is the median length of the recorded forwards' `attn_fwd` ranges: each "
               "forward starts after the previous one was synchronized, so the host issues into an idle queue, and "
               "the range includes the NVTX push and pop. The host times here are forward calls queued back to back "
               "(%s per sample, no synchronization between them), timed around the call alone. The last column "
               "repeats the summary's number beside them.\n\n"
               "| Variant | GPU, CUPTI off | GPU, CUPTI on | overhead | host, CUPTI off | host, CUPTI on | "
               "summary CPU time (recorded forwards) |\n"
               "|---|---|---|---|---|---|---|\n",
            sized ? "1 to 8" : "8");
    for (int i = 0; i < a->n; i++) {
        const variant_result *r = a->v[i].result;
        if (!isfinite(r->event_us_cupti) || !isfinite(r->event_us_no_cupti))
            continue;
        char off[32], on[32], hoff[32], hon[32], summ[32];
        format_us_column(r->event_us_no_cupti, off, sizeof off);
        format_us_column(r->event_us_cupti, on, sizeof on);
        format_us_column(r->host_us_no_cupti, hoff, sizeof hoff);
        format_us_column(r->host_us_cupti, hon, sizeof hon);
        format_us_column(a->v[i].cpu_us.n ? a->v[i].cpu_us.median : NAN, summ, sizeof summ);
        fputs("| ", f);
        esc_md_code(f, r->name, 1);
        fprintf(f, " | %s | %s | %+.1f%% | %s | %s | %s |\n", off, on,
                100.0 * (r->event_us_cupti / r->event_us_no_cupti - 1.0), hoff, hon, summ);
    }
    fputc('\n', f);
    memset_records_cost(f, a);
}

static int imported(const report_doc *d) { return d->a->run->imported; }
static int has_reference(const report_doc *d) { return d->ref != NULL; }
static int series_applies_doc(const report_doc *d) { return series_applies(d->a); }
static int prediction_applies(const report_doc *d) { return predict_available(d->a); }

/* Figures for a paper, where --figure-size drew them: the compact timelines. */
static int paper_applies(const report_doc *d)
{
    for (int i = 0; d->figs && i < d->figs->n; i++)
        if (!strncmp(d->figs->files[i].figure, "timeline-compact-", 17))
            return 1;
    return 0;
}

static void header_section(FILE *f, const report_doc *d) { report_header_md(f, d->a); }
static void abstract_section(FILE *f, const report_doc *d) { series_abstract(f, d->a); }
static void model_section(FILE *f, const report_doc *d) { model_section_md(f, d->a); }
static void recorded_section(FILE *f, const report_doc *d) { record_section_md(f, d->a); }
static void reference_note(FILE *f, const report_doc *d) { series_reference_note(f, d->a, d->ref->a, d->ref->label); }
static void series_section_doc(FILE *f, const report_doc *d) { series_section(f, d->a); }
static void kernel_names_section(FILE *f, const report_doc *d) { kernel_names_appendix(f, d->a); }
static void citation_section(FILE *f, const report_doc *d) { series_citation(f, d->a); }

static void overview_figures(FILE *f, const report_doc *d)
{
    report_md_figure(f, d->figs, "timeline-overview", d->inline_dir);
    report_md_figure(f, d->figs, "time-per-forward", d->inline_dir);
}

static void prediction_section(FILE *f, const report_doc *d)
{
    predict_write_markdown(f, d->a);
    report_md_figure(f, d->figs, "roofline", d->inline_dir);
}

static void occupancy_section(FILE *f, const report_doc *d)
{
    fprintf(f, "## Occupancy\n\n");
    fprintf(f, "Theoretical occupancy from each kernel's registers, shared memory and block size against the "
               "device limits; the estimate also accounts for the grid (blocks ÷ SMs), as Kineto's does, and is "
               "computed for every kernel, whatever API launched it.\n\n");
    if (d->a->run->device_limits_note[0]) { /* an import: which device limits are not the traces' own */
        fputs("Device limits: ", f);
        esc_md_text(f, d->a->run->device_limits_note);
        fputs(".\n\n", f);
    }
    series_kineto_paragraph(f, d->a);
    report_md_figure(f, d->figs, "occupancy", d->inline_dir);
}

static void paper_figures(FILE *f, const report_doc *d)
{
    const figure_list *figs = d->figs;
    fprintf(f, "## Figures for a paper\n\nDrawn at their printed size (--figure-size), every text at least 8 pt: "
               "include the PDF at 100%% (README, \"Figures and tables in a LaTeX paper\").\n\n");
    for (int i = 0; i < figs->n; i++)
        if (!strcmp(figs->files[i].kind, figs->files[0].kind) &&
            (!strncmp(figs->files[i].figure, "timeline-compact-", 17) ||
             !strncmp(figs->files[i].figure, "occupancy-table-", 16)))
            report_md_figure(f, figs, figs->files[i].figure, d->inline_dir);
}

static int backward_applies(const report_doc *d) { return backward_section_applies(d->a); }
static void backward_section(FILE *f, const report_doc *d)
{
    backward_section_md(f, d->a);
    report_md_figure(f, d->figs, "timeline-backward", d->inline_dir); /* drawn where the archive has backwards */
}

/* report.md, in order. A section that does not apply writes nothing. */
static const report_section report_sections[] = {
    {"header", NULL, header_section},
    {"abstract", NULL, abstract_section},
    {"summary", NULL, summary_table},
    {"backward", backward_applies, backward_section},
    {"model", imported, model_section},
    {"recorded program", imported, recorded_section},
    {"reference", has_reference, reference_note},
    {"series", series_applies_doc, series_section_doc},
    {"overview figures", NULL, overview_figures},
    {"measurement", measurement_applies, measurement_table},
    {"CUPTI overhead", overhead_applies, overhead_table},
    {"prediction", prediction_applies, prediction_section},
    {"occupancy", NULL, occupancy_section},
    {"figures for a paper", paper_applies, paper_figures},
    {"variants", NULL, report_variants_md},
    {"kernel names", NULL, kernel_names_section},
    {"citation", NULL, citation_section},
};

char *report_markdown(const analysis *a, const figure_list *figs, const char *inline_from_dir)
{
    return report_markdown_ref(a, figs, inline_from_dir, NULL);
}

char *report_markdown_ref(const analysis *a, const figure_list *figs, const char *inline_from_dir,
                          const report_reference *ref)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    const report_doc d = {a, figs, inline_from_dir, ref};
    for (size_t i = 0; i < sizeof report_sections / sizeof report_sections[0]; i++)
        if (!report_sections[i].applies || report_sections[i].applies(&d))
            report_sections[i].write(f, &d);
    fclose(f);
    return buf;
}
