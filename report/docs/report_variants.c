/* The report's Variants section: per variant its heading, what changed (or its source), its
 * error when it did not run, its findings in full, the facts it recorded, the representative
 * forward's GPU operations as a table (launch configuration, occupancy, launcher, latency) and
 * its timeline figure. */
#include "report_md.h"

#include "escape.h"
#include "finding_phrases.h"
#include "findings.h"
#include "model_roles.h"
#include "occupancy.h"
#include "units.h"

#include <stdio.h>
#include <string.h>

/* A forward's operation table stops here: a report stays readable (and linear in
 * size) when a forward has 500k operations. */
enum { REPORT_MAX_OP_ROWS = 1000 };

/* The forward shown in the variant's table: the one with the median CUDA time. */
static const forward *median_forward(const variant_analysis *va)
{
    int i = analysis_median_forward(va);
    return i < 0 ? NULL : &va->forwards[i];
}

/* The variant's heading, its source or change, and its error when it did not run. */
static void variant_heading(FILE *f, const analysis *a, const variant_result *r, int variant)
{
    char anchor[16];
    finding_variant_anchor(variant, anchor, sizeof anchor);
    fprintf(f, "<a id=\"%s\"></a>\n\n### ", anchor);
    esc_md_code(f, r->name, 0);
    fputs(" — ", f);
    esc_md_text(f, r->title);
    fprintf(f, "%s\n\n", report_status_word(r));
    fputs(a->run->imported ? "*Source:* " : "*What we changed:* ", f);
    esc_md_text(f, r->what_changed);
    fprintf(f, "\n\n");
    if (r->status != VARIANT_OK) {
        fprintf(f, "**%s:** ", variant_status_name(r->status));
        esc_md_text(f, r->error);
        fputs("\n\n", f);
    }
}

/* The variant's findings as a list, then the facts it recorded in one sentence. */
static void variant_findings_and_facts(FILE *f, const variant_analysis *va, int variant)
{
    const variant_result *r = va->result;
    for (int k = 0; k < va->n_findings; k++) {
        char anchor[64];
        finding_anchor(va, variant, k, anchor, sizeof anchor);
        fprintf(f, "- <a id=\"%s\"></a>", anchor); /* the summary's phrase links here */
        /* Markdown we wrote, archive strings escaped inside; a list item, not a cell: a '|'
         * stays as written (escaped it would read "\|" inside a code span) */
        for (const char *s = va->findings[k]; *s; s++)
            fputc(*s == '\n' ? ' ' : *s, f);
        fputc('\n', f);
    }
    if (va->n_findings)
        fputc('\n', f);
    if (r->facts.n) {
        fputs("Facts recorded by the variant: ", f);
        for (int k = 0; k < r->facts.n; k++) {
            fputs(k ? "; " : "", f);
            esc_md_text(f, r->facts.item[k].key);
            fputs(" = ", f);
            esc_md_text(f, r->facts.item[k].value);
        }
        fputs(".\n\n", f);
    }
}

/* A kernel's grid, block, registers, shared memory, occupancy and Kineto's estimate. */
static void kernel_columns(FILE *f, const analysis *a, const gpu_op *o)
{
    occupancy occ;
    char oerr[128], lim[64];
    fprintf(f, "%d×%d×%d | %d×%d×%d | %d | %d B | ", o->grid[0], o->grid[1], o->grid[2], o->block[0],
            o->block[1], o->block[2], o->registers, o->static_smem + o->dynamic_smem);
    if (occupancy_of_op(o, &a->trace->device, &occ, oerr, sizeof oerr) == 0)
        fprintf(f, "%.0f%% / %.0f%%, %s | ", 100 * occ.theoretical, 100 * occ.est_achieved,
                occupancy_limiter_name(occ.limiters, lim, sizeof lim));
    else
        fputs("– | ", f);
    /* Kineto's estimate: its own "est. achieved occupancy %" for imported PyTorch
     * traces, else its formula applied to our record (with its 48 KiB limit). */
    if (a->run->imported && o->has_kineto_occupancy)
        fprintf(f, "%.0f%% (Kineto's own) | ", o->kineto_occupancy);
    else if (occupancy_of_op(o, &a->trace->device, &occ, oerr, sizeof oerr) == 0)
        fprintf(f, "%d%% | ", occ.kineto_pct);
    else
        fputs("– | ", f);
}

/* Row k of the operation table; a shortened name gets the next note number, and
 * its index joins notes[]. */
static void op_table_row(FILE *f, const analysis *a, const forward *fw, int k, int *notes, int *n_notes)
{
    const gpu_op *o = fw->ops[k];
    const api_call *l = fw->launchers[k];
    char name[FINDING_NAME_MAX + 8], full[1024], dur[32], lat[32];
    if (o->kind == GPU_KERNEL) {
        findings_short_name(o->name, name, sizeof name);
        short_kernel_name(o->name, full, sizeof full);
    } else {
        esc_copy_utf8(name, sizeof name, o->name);
        esc_copy_utf8(full, sizeof full, o->name);
    }
    format_us_column((double)(o->end_ns - o->start_ns) / 1000.0, dur, sizeof dur);
    if (l)
        format_us_column((double)(o->start_ns - l->start_ns) / 1000.0, lat, sizeof lat);
    fprintf(f, "| %d | ", k + 1);
    esc_md_code(f, name, 1);
    char aten[96];
    if (op_aten_name(o, aten, sizeof aten)) { /* imported PyTorch traces: the ATen op that launched it */
        fputs(" from ", f);
        esc_md_code(f, aten, 1);
    }
    /* a shortened name: the full one in a note under the table */
    if (strcmp(name, o->name)) {
        notes[(*n_notes)++] = k;
        fprintf(f, " [%d]", *n_notes);
    }
    fprintf(f, " | %s | %s | ", op_class_name(classify_op(o)), dur);
    if (o->kind == GPU_KERNEL)
        kernel_columns(f, a, o);
    else
        fprintf(f, "– | – | – | %lld B moved | – | – | ", (long long)o->bytes);
    if (l) {
        esc_md_code(f, l->name, 1);
        const char *lib;
        const gpu_op *next;
        if (o->kind == GPU_MEMSET && findings_memset_library(a->trace, fw, k, &lib, &next) == 0)
            fprintf(f, " (%s)", lib);
    } else {
        fputs("–", f);
    }
    fprintf(f, " | %s |\n", l ? lat : "–");
}

/* The representative forward's (or step's: unit) GPU operations in order, at most
 * REPORT_MAX_OP_ROWS, with the full names of the shortened ones under the table. */
static void op_table(FILE *f, const analysis *a, const forward *fw, const char *unit)
{
    char buf[64];
    format_us(fw->cuda_us, buf, sizeof buf);
    fprintf(f, "The representative %s (iteration %d, CUDA time %s: the median one, the %s every view of "
               "this report shows), GPU operations in order:\n\n", unit, fw->iteration, buf, unit);
    fprintf(f, "| # | Operation | Class | Duration | Grid | Block | Regs / thread | Shared mem / block | "
               "Occupancy (theor. / est., limiter) | Kineto's estimate | Launched by | Launch → start |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int notes[REPORT_MAX_OP_ROWS]; /* every shortened name of the table, however many */
    int n_notes = 0;
    int shown = fw->n_ops < REPORT_MAX_OP_ROWS ? fw->n_ops : REPORT_MAX_OP_ROWS;
    for (int k = 0; k < shown; k++)
        op_table_row(f, a, fw, k, notes, &n_notes);
    fputc('\n', f);
    if (shown < fw->n_ops)
        fprintf(f, "The first %d of the %s's %d operations are listed; trace.json holds them all.\n\n", shown,
                unit, fw->n_ops);
    /* Full names of the shortened ones (a name is never cut silently). */
    for (int j = 0; j < n_notes; j++) {
        fprintf(f, "%s[%d] op %d: ", j ? "\\\n" : "", j + 1, notes[j] + 1);
        esc_md_code(f, fw->ops[notes[j]]->name, 0);
        fputc('\n', f);
    }
    if (n_notes)
        fputc('\n', f);
}

static void variant_section(FILE *f, const report_doc *d, int variant)
{
    const variant_analysis *va = &d->a->v[variant];
    const variant_result *r = va->result;
    variant_heading(f, d->a, r, variant);
    variant_findings_and_facts(f, va, variant);
    const forward *fw = median_forward(va);
    if (!fw)
        return;
    op_table(f, d->a, fw, model_unit_word(va));
    char fig[96];
    snprintf(fig, sizeof fig, "timeline-%s", r->name);
    report_md_figure(f, d->figs, fig, d->inline_dir);
}

void report_variants_md(FILE *f, const report_doc *d)
{
    fprintf(f, "## Variants\n\n");
    for (int i = 0; i < d->a->n; i++)
        variant_section(f, d, i);
}
