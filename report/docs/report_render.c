/* The report of one archive, rendered and committed through the document pipeline
 * (doc_bundle.h): the analysis and its findings are the bundle's data; the figures, report.md,
 * report.html, the CSV, LaTeX, JSON and citation files and report.pdf are the rows of the
 * report's bundle. `run` and `import` render into the new archive's temporary folder, which
 * archive_commit renames into place whole (report_render); `report` re-renders an existing
 * archive beside its trace.json and run.json, which stay where they are, and the outputs
 * are replaced all together or not at all (report_rerender_archive). */
#include "report_render.h"

#include "alloc.h"
#include "archive.h"
#include "citation.h"
#include "compare.h"
#include "doc_bundle.h"
#include "err.h"
#include "figures.h"
#include "findings.h"
#include "findings_json.h"
#include "latex.h"
#include "model_section.h"
#include "predict.h"
#include "print.h"
#include "report.h"
#include "report_csv.h"
#include "series.h"

#include "escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the report's writers read: built by report_doc_open (the bundle's prepare step). */
typedef struct report_doc {
    const trace *t;
    const run_info *r;
    const report_render_options *o;
    int opened;            /* the analysis is built (report_doc_close frees it) */
    analysis a;
    compare_archive *ref;  /* --reference DIR, loaded; NULL without */
    report_reference rr;
    char title[256];
    char made_by[160];     /* the options, for the record of outputs */
} report_doc;

static const report_doc *doc_of(const doc_page *p) { return p->bundle->data; }

static int draw_report(const doc_bundle *b, const char *dir, figure_list *figs, char *err, size_t errlen)
{
    const report_doc *d = b->data;
    /* report.html shows each figure as an inlined PNG (cmark-gfm's safe mode blanks an SVG
     * data URI): PNGs are drawn whatever --format asks, or the page has no images. */
    unsigned formats = d->o->formats | FIG_PNG;
    int frc = figures_render(&d->a, dir, formats, d->o->log_axis, figs, err, errlen);
    if (frc == 0 && d->o->figure_size != FIG_SIZE_SCREEN)
        frc = figures_render_paper(&d->a, dir, formats, d->o->figure_size, figs, err, errlen);
    return frc; /* EXIT_OK, EXIT_IO or EXIT_BAD_ARCHIVE, as the figures know it */
}

static char *report_md(const doc_bundle *b, const figure_list *figs, const char *inline_from_dir)
{
    const report_doc *d = b->data;
    return report_markdown_ref(&d->a, figs, inline_from_dir, d->ref ? &d->rr : NULL);
}

static int samples_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(samples_csv(&doc_of(p)->a), out, err, n);
}
static int kernels_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(kernels_csv(&doc_of(p)->a), out, err, n);
}
static int findings_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(findings_json(&doc_of(p)->a), out, err, n);
}
static int summary_csv_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(report_summary_csv(&doc_of(p)->a), out, err, n);
}
static int summary_tex_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(report_summary_tex(&doc_of(p)->a), out, err, n);
}

/* roles.csv: the roles of a model trace's operations (model_roles.h), for an import only. */
static int roles_row(const doc_page *p, char **out, char *err, size_t n)
{
    const report_doc *d = doc_of(p);
    if (!d->r->imported) {
        *out = NULL;
        return EXIT_OK;
    }
    return doc_text(model_roles_csv(&d->a), out, err, n);
}

/* CITATION.cff, from the version string the footer's BibTeX uses. */
static int citation_row(const doc_page *p, char **out, char *err, size_t n)
{
    const run_info *r = doc_of(p)->r;
    char version[64], year[8];
    citation_version(r->tool_version, version, sizeof version);
    citation_year(r->date, year, sizeof year);
    return doc_text(citation_cff(version, year), out, err, n);
}

/* --pdf: report.pdf printed by Chromium when installed, dated with the run's date so that
 * two renders are the same bytes. Opt-in: one browser start costs seconds, the rest of a
 * render well under one. Without Chromium it is a stated skip (one line, even under -q); a
 * print that fails (the disk full, Chromium crashed) is an error, and the old report,
 * report.pdf included, stays. */
static int pdf_row(const doc_page *p, const char *dir, char *err, size_t errlen)
{
    const report_doc *d = doc_of(p);
    if (!d->o->pdf || !print_pdf_enabled())
        return EXIT_OK;
    char msg[512];
    int printed, prc = print_html_to_pdf(dir, "report.html", "report.pdf", "A4", d->r->date, &printed, msg, sizeof msg);
    if (prc != EXIT_OK)
        return err_set(err, errlen, prc, "%s", msg);
    if (!printed)
        fprintf(stderr, "attnprof: %s\n", msg); /* a stated skip: the archive is complete without it */
    return EXIT_OK;
}

/* The report's outputs in an archive directory. report.html is the last document written
 * before the PDF is printed from it. */
static const doc_output report_outputs[] = {
    {"samples.csv", samples_row, NULL},   {"kernels.csv", kernels_row, NULL},
    {"findings.json", findings_row, NULL}, {"roles.csv", roles_row, NULL},
    {"summary.csv", summary_csv_row, NULL}, {"summary.tex", summary_tex_row, NULL},
    {"CITATION.cff", citation_row, NULL}, {"report.md", doc_markdown_row, NULL},
    {"report.html", doc_html_row, NULL},  {"report.pdf", NULL, pdf_row},
};

/* The label of --reference DIR's column: DIR's last name ("dir/" too). */
static void reference_label(const char *reference, char *out, size_t n)
{
    const char *base = strrchr(reference, '/');
    while (base && !base[1] && base > reference) { /* "dir/" */
        const char *p = base - 1;
        while (p > reference && *p != '/')
            p--;
        base = p;
    }
    const char *from = base && *base == '/' ? base + 1 : reference;
    snprintf(out, n, "%.*s", (int)strcspn(from, "/"), from);
}

/* The reference variant beside ours, as report.c's column reads it (series_counterpart). */
static int reference_matches(const analysis *ref, const char *name)
{
    const variant_analysis *rv = series_counterpart(ref, name);
    return rv && rv->n_forwards;
}

/* --reference that matches none of our variants would fill its column with "not in the
 * reference": one warning line on stderr naming the variants on both sides. */
static void warn_reference_unmatched(const analysis *ours, const analysis *ref, const char *dir)
{
    for (int i = 0; i < ours->n; i++)
        if (reference_matches(ref, ours->v[i].result->name))
            return;
    char a[512] = "", b[512] = "";
    size_t la = 0, lb = 0;
    for (int i = 0; i < ours->n && la < sizeof a; i++)
        la += (size_t)snprintf(a + la, sizeof a - la, "%s%s", i ? ", " : "", ours->v[i].result->name);
    for (int i = 0; i < ref->n && lb < sizeof b; i++)
        lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%s", i ? ", " : "", ref->v[i].result->name);
    char line[1400], shown[1400];
    snprintf(line, sizeof line, "warning: --reference %s matches none of this archive's variants (%s) by name, "
             "sdpa_<name> or kineto_<name>; the reference holds: %s", dir, a[0] ? a : "none", b[0] ? b : "none");
    fprintf(stderr, "attnprof: %s\n", esc_terminal(shown, sizeof shown, line));
}

/* The analysis, its findings and the reference archive: the report's data. EXIT_OK, or
 * EXIT_BAD_ARCHIVE with the line in err (nothing is then left to free). */
static int report_doc_open(const doc_bundle *b, char *err, size_t errlen)
{
    report_doc *d = b->data;
    const report_render_options *o = d->o;
    const run_info *r = d->r;
    if (analysis_build(&d->a, d->t, r, err, errlen) != 0)
        return EXIT_BAD_ARCHIVE;
    findings_derive(&d->a);
    predict_findings(&d->a);
    if (o->reference) {
        /* another archive (PyTorch's variants on the same GPU) beside ours */
        d->ref = attn_calloc(1, sizeof *d->ref);
        char rerr[512];
        if (compare_load(d->ref, o->reference, rerr, sizeof rerr) != EXIT_OK) {
            snprintf(err, errlen, "--reference %s: %s", o->reference, rerr);
            free(d->ref);
            d->ref = NULL;
            analysis_free(&d->a);
            return EXIT_BAD_ARCHIVE;
        }
        reference_label(o->reference, d->rr.label, sizeof d->rr.label);
        d->rr.a = &d->ref->a;
        warn_reference_unmatched(&d->a, &d->ref->a, o->reference);
    }
    if (r->imported)
        snprintf(d->title, sizeof d->title, "attnprof — %s, %s",
                 r->device.name[0] ? r->device.name : "GPU not recorded", run_producer_phrase(r));
    else
        snprintf(d->title, sizeof d->title, "attnprof — %s, %d×%d×%d×%d %s", r->device.name, r->shape.batch,
                 r->shape.heads, r->shape.seq, r->shape.dim, r->dtype);
    d->opened = 1;
    return EXIT_OK;
}

static void report_doc_close(report_doc *d)
{
    if (!d->opened)
        return;
    if (d->ref) {
        compare_archive_free(d->ref);
        free(d->ref);
    }
    analysis_free(&d->a);
}

/* The options that decide which outputs a render makes, as the command line says them. */
static void report_made_by(const report_render_options *o, char *out, size_t n)
{
    static const char *const sizes[] = {"screen", "column", "text"};
    char formats[32];
    doc_formats_text(o->formats | FIG_PNG, formats, sizeof formats); /* PNG always: report.html inlines it */
    int size = o->figure_size >= 0 && o->figure_size <= 2 ? o->figure_size : 0;
    snprintf(out, n, "report --format %s --figure-size %s%s%s%s", formats, sizes[size], o->log_axis ? " --log" : "",
             o->pdf ? " --pdf" : "", o->reference ? " --reference" : "");
}

static doc_bundle report_bundle(report_doc *d)
{
    report_made_by(d->o, d->made_by, sizeof d->made_by);
    return (doc_bundle){.made_by = d->made_by, .kind = "report", .noun = "report", .title = d->title, .data = d,
                        .prepare = report_doc_open, .draw = draw_report, .markdown = report_md,
                        .outputs = report_outputs, .n_outputs = (int)(sizeof report_outputs / sizeof report_outputs[0]),
                        .placement = DOC_BESIDE_INPUTS, .quiet = d->o->quiet,
                        .clean = d->o->clean};
}

/* Where a render goes: into the new archive's folder (renamed in by its caller), in place
 * beside the archive's inputs, or into a directory of its own (report DIR -o OUT). */
enum { INTO_NEW_ARCHIVE, IN_PLACE, ELSEWHERE };

static int render_report(const char *dir, int where, int force, const trace *t, const run_info *r,
                         const report_render_options *o, char *err, size_t errlen)
{
    report_doc d = {.t = t, .r = r, .o = o};
    doc_bundle b = report_bundle(&d);
    if (where == ELSEWHERE)
        b.placement = DOC_OWN_DIRECTORY;
    int rc = where == INTO_NEW_ARCHIVE ? doc_bundle_render(&b, dir, err, errlen)
                                       : doc_bundle_write(&b, dir, force, err, errlen);
    if (rc == EXIT_OK && !o->quiet)
        report_terminal_summary(stdout, &d.a);
    report_doc_close(&d);
    return rc;
}

int report_render(const char *dir, const trace *t, const run_info *r, const report_render_options *o, char *err,
                  size_t errlen)
{
    return render_report(dir, INTO_NEW_ARCHIVE, 0, t, r, o, err, errlen);
}

int report_rerender_archive(const char *archive, const trace *t, const run_info *r, const report_render_options *o,
                            char *err, size_t errlen)
{
    return render_report(archive, IN_PLACE, 0, t, r, o, err, errlen);
}

int report_render_elsewhere(const char *archive, const char *out, int force, const trace *t, const run_info *r,
                            const report_render_options *o, char *err, size_t errlen)
{
    int overlap = archive_paths_overlap(out, archive);
    if (overlap != 0)
        return err_set(err, errlen, EXIT_USAGE, overlap > 0 ? "-o %s: is, holds or lies inside the archive %s; choose "
                       "another -o, or leave -o out to render in place" : "-o %s: cannot resolve it against %s", out,
                       archive);
    return render_report(out, ELSEWHERE, force, t, r, o, err, errlen);
}
