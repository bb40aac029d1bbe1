/* The sweep's documents from the sweep's data (sweep.h): sweep.md (and sweep.html through
 * the report's Markdown renderer), sweep.csv (one row per shape and variant) and
 * sweep.tex (a table and the findings for a paper). Findings are rows of the
 * sweep's data, each with its sentence (sweep_findings.c). */
#include "sweep_doc.h"

#include "units.h"

#include "alloc.h"
#include "archive.h"
#include "doc_bundle.h"
#include "escape.h"
#include "finding.h"
#include "latex.h"
#include "exit_codes.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sweep_finding_text(const sweep_data *m, const sweep_finding *f, char *out, size_t n)
{
    (void)m;
    findings_plain(f->text, out, n); /* the sentence is derived with the finding (sweep_findings.c) */
}

static const char *point_word(const sweep_point *p)
{
    switch (p->state) {
    case SWEEP_OK: return "ok";
    case SWEEP_SKIPPED: return "skipped";
    case SWEEP_UNAVAILABLE: return "unavailable";
    case SWEEP_FAILED: return "FAILED";
    case SWEEP_NOT_RUN: break;
    }
    return "not run";
}

static const char *shape_word(sweep_shape_state s)
{
    switch (s) {
    case SHAPE_COMPLETE: return "complete";
    case SHAPE_FAILED: return "failed";
    case SHAPE_MISSING: return "missing";
    case SHAPE_BAD_ARCHIVE: return "unreadable";
    }
    return "?";
}

/* One cell of a sweep table: a shape's point for a variant, as the table's measure. */
typedef void (*sweep_cell_writer)(char *buf, size_t len, const sweep_shape *x, const sweep_point *p, int tflops);

/* What a forward table shows (the cell writers' `tflops` argument). */
enum { TABLE_TIME = 0, TABLE_TFLOPS = 1, TABLE_KV_GBPS = 2 };

/* The forward: CUDA µs per forward, TFLOP/s or K+V GB/s; a point that did not run says why. */
static void forward_cell(char *buf, size_t len, const sweep_shape *x, const sweep_point *p, int tflops)
{
    if (p->state == SWEEP_OK && tflops == TABLE_KV_GBPS)
        snprintf(buf, len, "%.0f", p->kv_gbps);
    else if (p->state == SWEEP_OK && tflops)
        snprintf(buf, len, "%.1f", p->tflops);
    else if (p->state == SWEEP_OK)
        format_us(p->us, buf, len);
    else if (p->state == SWEEP_NOT_RUN && x->state != SHAPE_COMPLETE)
        snprintf(buf, len, "%s", shape_word(x->state));
    else
        snprintf(buf, len, "%s", point_word(p));
}

/* sweep --backward: CUDA µs per backward or TFLOP/s; a backward not measured gives its status. */
static void backward_cell(char *buf, size_t len, const sweep_shape *x, const sweep_point *p, int tflops)
{
    (void)x;
    if (isfinite(p->bwd_us) && tflops)
        snprintf(buf, len, "%.1f", p->bwd_tflops);
    else if (isfinite(p->bwd_us))
        format_us(p->bwd_us, buf, len);
    else if (p->bwd_recorded)
        snprintf(buf, len, "%s", variant_status_name(p->bwd_status));
    else
        snprintf(buf, len, "–");
}

/* A table of the shapes of one family (rows: S and B) by variant (columns). */
static void table(FILE *f, const sweep_data *m, const sweep_family *fam, int tflops, sweep_cell_writer cell)
{
    fprintf(f, "| S | B |");
    for (int k = 0; k < m->n_variants; k++) {
        fputc(' ', f);
        esc_md_code(f, m->variants[k], 1);
        fputs(" |", f);
    }
    fprintf(f, "\n|---:|---:|");
    for (int k = 0; k < m->n_variants; k++)
        fprintf(f, "---:|");
    fputc('\n', f);
    for (int i = 0; i < m->n_shapes; i++) {
        const sweep_shape *x = &m->shapes[i];
        if (!sweep_in_family(&x->shape, fam))
            continue;
        fprintf(f, "| %d | %d |", x->shape.seq, x->shape.batch);
        for (int k = 0; k < m->n_variants; k++) {
            char buf[64];
            cell(buf, sizeof buf, x, &x->p[k], tflops);
            fprintf(f, " %s |", buf);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

static int findings_of(const sweep_data *m, finding_kind kind)
{
    int n = 0;
    for (int i = 0; i < m->n_findings; i++)
        n += m->findings[i].kind == kind;
    return n;
}

/* "Failed, missing and skipped": a row per shape that is not complete or has a variant
 * skipped or failed, with its exit code, reason, GPU, Slurm job and log; nothing when
 * every shape is complete. */
static void md_failed_shapes(FILE *f, const sweep_data *m)
{
    int listed = 0;
    for (int i = 0; i < m->n_shapes; i++) {
        const sweep_shape *x = &m->shapes[i];
        int skipped = 0;
        for (int k = 0; k < m->n_variants; k++)
            skipped |= x->p[k].state == SWEEP_SKIPPED || x->p[k].state == SWEEP_FAILED;
        if (x->state == SHAPE_COMPLETE && !skipped)
            continue;
        if (!listed++)
            fprintf(f, "## Failed, missing and skipped\n\n| Shape | State | Exit code | Reason | GPU | Slurm job | Log "
                       "|\n|---|---|---:|---|---|---|---|\n");
        char code[16] = "–", job[64] = "–";
        const char *reason = x->state == SHAPE_BAD_ARCHIVE ? x->error
                             : x->state == SHAPE_MISSING   ? "no archive and no exit status: not run yet, or the task died"
                                                           : x->status.error;
        if (x->have_status && x->state != SHAPE_MISSING)
            snprintf(code, sizeof code, "%d", x->status.exit_code);
        if (x->have_status && x->status.slurm_job_id[0])
            snprintf(job, sizeof job, "%s_%d", x->status.slurm_job_id, x->status.slurm_task);
        else if (m->plan.slurm_job_id[0]) {
            for (int t = 0; t < m->plan.n_shapes; t++)
                if (!memcmp(&m->plan.shapes[t], &x->shape, sizeof x->shape))
                    snprintf(job, sizeof job, "%s_%d", m->plan.slurm_job_id, t);
        }
        fprintf(f, "| `%s` | %s | %s | ", x->name, shape_word(x->state), code);
        if (x->state == SHAPE_COMPLETE) {
            for (int k = 0; k < m->n_variants; k++)
                if (x->p[k].state == SWEEP_SKIPPED || x->p[k].state == SWEEP_FAILED) {
                    char t[ATTN_ERR_LEN + 64];
                    snprintf(t, sizeof t, "%s %s: %s; ", m->variants[k], point_word(&x->p[k]), x->p[k].reason);
                    esc_md_text(f, t);
                }
        } else {
            esc_md_text(f, reason);
        }
        fprintf(f, " | ");
        esc_md_text(f, x->have_status && x->status.gpu[0] ? x->status.gpu : "–");
        fputs(" | ", f);
        esc_md_text(f, job);
        fputs(" | ", f);
        char log[600] = "";
        if (x->have_status && x->status.log[0])
            snprintf(log, sizeof log, "%s", x->status.log);
        else if (strcmp(job, "–"))
            snprintf(log, sizeof log, "logs/%s.out", job);
        if (log[0])
            esc_md_code(f, log, 1);
        else
            fputs("–", f);
        fprintf(f, " |\n");
    }
    if (listed)
        fputc('\n', f);
}

/* The reference shape's time on each GPU that replicated it (--replicate). */
static void md_replicas(FILE *f, const sweep_data *m)
{
    if (!m->n_replicas)
        return;
    char shape[64];
    sweep_shape_name(&m->reference, shape, sizeof shape);
    fprintf(f, "## GPUs on the reference shape %s\n\n| GPU |", shape);
    for (int k = 0; k < m->n_variants; k++) {
        fputc(' ', f);
        esc_md_code(f, m->variants[k], 1);
        fputs(" |", f);
    }
    fprintf(f, "\n|---|");
    for (int k = 0; k < m->n_variants; k++)
        fprintf(f, "---:|");
    fputc('\n', f);
    for (int r = 0; r < m->n_replicas; r++) {
        fputs("| ", f);
        esc_md_text(f, m->replicas[r].gpu);
        fputs(" |", f);
        for (int k = 0; k < m->n_variants; k++) {
            char t[32] = "–";
            if (m->replicas[r].p[k].state == SWEEP_OK)
                format_us(m->replicas[r].p[k].us, t, sizeof t);
            fprintf(f, " %s |", t);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

char *sweep_markdown(const sweep_data *m, const figure_list *figs, const char *inline_from_dir)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    fputs("# attnprof sweep: ", f);
    esc_md_text(f, m->gpu_name[0] ? m->gpu_name : "no GPU recorded");
    char count[48];
    fprintf(f, ", %s\n\n", units_count_noun(m->n_shapes, "shape", count, sizeof count));
    long tokens = sweep_common_tokens(m);
    int heads = m->n_shapes ? m->shapes[0].shape.heads : 0;
    fprintf(f, "bf16, causal, H = %d", heads);
    if (tokens)
        fprintf(f, ", B·S = %ld tokens in every shape", tokens);
    fprintf(f, "; %s per variant; cuDNN %s. Shapes: %d complete, %d failed, %d missing, %d "
               "unreadable.\n\n",
            units_count_noun(m->iters, "recorded forward", count, sizeof count), m->cudnn[0] ? m->cudnn : "–", m->n_complete, m->n_failed, m->n_missing, m->n_bad);
    fprintf(f, "Time is CUDA time per forward (median over the recorded forwards); TFLOP/s counts half of "
               "4·B·H·S²·D for the causal mask. Each shape is a complete archive under `shapes/`.\n\n");
    if (sweep_has_decode(m))
        fprintf(f, "At decode shapes (q queries against S keys, the queries aligned to the end of the keys) TFLOP/s "
                   "counts 4·B·H·D times the keys the queries see, q·(S − q) + q·(q + 1)/2, and the K+V tables give "
                   "the bytes of K and V read per second.\n\n");

    fprintf(f, "## Findings\n\n");
    int any = 0;
    for (int i = 0; i < m->n_findings; i++) { /* in sweep_derive's order: headlines first */
        char text[1024];
        sweep_finding_text(m, &m->findings[i], text, sizeof text);
        fputs("- ", f);
        esc_md_text(f, text);
        fputs("\n", f);
        any = 1;
    }
    if (!any)
        fprintf(f, "No finding: too few complete shapes to compare.\n");
    fputc('\n', f);
    if (!findings_of(m, FK_SWEEP_CROSSOVER))
        fprintf(f, "No crossover: where two variants were measured at the same S, the order never changes.\n\n");

    fprintf(f, "## Figures\n\n");
    static const char *fig_names[] = {"sweep-time", "sweep-tflops", "sweep-memory", "sweep-kernels", "sweep-decode"};
    for (int i = 0; i < 5; i++)
        report_md_figure(f, figs, fig_names[i], inline_from_dir);

    for (int d = 0; d < m->n_families; d++) {
        const sweep_family *fam = &m->families[d];
        char label[64];
        sweep_family_label(fam, label, sizeof label);
        fprintf(f, "## Time per forward, %s\n\n", label);
        if (fam->q_seq > 0)
            fprintf(f, "Decode: S is the KV length; the %s aligned to the end of the keys (bottom-right causal "
                       "mask).\n\n", fam->q_seq == 1 ? "query is" : "queries are");
        table(f, m, fam, TABLE_TIME, forward_cell);
        fprintf(f, "## TFLOP/s, %s\n\n", label);
        table(f, m, fam, TABLE_TFLOPS, forward_cell);
        if (fam->q_seq > 0) {
            fprintf(f, "## K+V GB/s, %s\n\n", label);
            fprintf(f, "K and V bytes (bf16, B·Hkv·S·D each) over the median CUDA time per step");
            if (isfinite(m->copy_tbps))
                fprintf(f, "; the copy ceiling measured in the runs is %.0f GB/s (DtoD, read + write)",
                        m->copy_tbps * 1e3);
            fprintf(f, ".\n\n");
            table(f, m, fam, TABLE_KV_GBPS, forward_cell);
        }
    }
    for (int d = 0; d < m->n_families && m->backward; d++) {
        const sweep_family *fam = &m->families[d];
        char label[64];
        sweep_family_label(fam, label, sizeof label);
        fprintf(f, "## Time per backward, %s\n\n", label);
        fprintf(f, "Each shape's backward (`run --backward`): the CUDA time per backward, its GPU operations' "
                   "durations summed, the median over the recorded backwards; – where the shape recorded none, "
                   "the backward's status where it did not run.\n\n");
        table(f, m, fam, TABLE_TIME, backward_cell);
        fprintf(f, "## Backward TFLOP/s, %s\n\n", label);
        fprintf(f, "At 2.5 times the forward's FLOPs (the FlashAttention papers' convention for the backward).\n\n");
        table(f, m, fam, TABLE_TFLOPS, backward_cell);
    }

    md_failed_shapes(f, m);
    md_replicas(f, m);
    fclose(f);
    return buf;
}

static void csv_num(FILE *f, double x, const char *fmt)
{
    fputc(',', f);
    if (isfinite(x))
        fprintf(f, fmt, x);
}

char *sweep_csv(const sweep_data *m)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    fputs("shape,batch,heads,seq,dim,variant,shape_state,state,reason,cuda_us_median,cuda_us_min,cuda_us_max,"
          "tflops,ops_per_forward,kernels_per_forward,memcpy_per_forward,memset_per_forward,device_bytes,gpu,"
          "gpu_uuid,exit_code,kv_heads,q_seq,kv_gbps\n",
          f);
    for (int i = 0; i < m->n_shapes; i++) {
        const sweep_shape *x = &m->shapes[i];
        for (int k = 0; k < m->n_variants; k++) {
            const sweep_point *p = &x->p[k];
            fprintf(f, "%s,%d,%d,%d,%d,", x->name, x->shape.batch, x->shape.heads, x->shape.seq, x->shape.dim);
            esc_csv_field(f, m->variants[k], 0);
            fprintf(f, ",%s,%s,", shape_word(x->state), point_word(p));
            esc_csv_field(f, p->reason, 0);
            csv_num(f, p->us, "%.3f");
            csv_num(f, p->us_min, "%.3f");
            csv_num(f, p->us_max, "%.3f");
            csv_num(f, p->tflops, "%.3f");
            csv_num(f, p->ops >= 0 ? p->ops : NAN, "%.0f");
            csv_num(f, p->kernels >= 0 ? p->kernels : NAN, "%.0f");
            csv_num(f, p->memcpys >= 0 ? p->memcpys : NAN, "%.0f");
            csv_num(f, p->memsets >= 0 ? p->memsets : NAN, "%.0f");
            csv_num(f, p->device_bytes, "%.0f");
            fputc(',', f);
            esc_csv_field(f, x->have_status ? x->status.gpu : x->visible_devices, 0);
            fputc(',', f);
            esc_csv_field(f, x->gpu_uuid, 0);
            if (x->have_status)
                fprintf(f, ",%d", x->status.exit_code);
            else
                fputc(',', f);
            fprintf(f, ",%d,%d", attn_kv_heads(&x->shape), attn_q_seq(&x->shape));
            csv_num(f, p->kv_gbps, "%.1f");
            fputc('\n', f);
        }
    }
    fclose(f);
    return buf;
}

/* The one LaTeX escaper (latex.h): controls dropped, specials escaped. */
/* The length of the superscript number at s (digits, minus, and a middle dot between two
 * digits), 0 when none starts there; its plain form into plain. */
static size_t superscript_at(const char *s, char *plain, size_t n)
{
    size_t at = 0, len = 0;
    for (;;) {
        int k = -1;
        for (int d = 0; d < 10; d++)
            if (!strncmp(s + at, units_superscript_digit[d], strlen(units_superscript_digit[d])))
                k = d;
        if (k >= 0 && len + 1 < n) {
            plain[len++] = (char)('0' + k);
            at += strlen(units_superscript_digit[k]);
        } else if (!strncmp(s + at, SUPERSCRIPT_MINUS, strlen(SUPERSCRIPT_MINUS)) && len + 1 < n) {
            plain[len++] = '-';
            at += strlen(SUPERSCRIPT_MINUS);
        } else if (len && !strncmp(s + at, MIDDLE_DOT, strlen(MIDDLE_DOT)) && len + 1 < n &&
                   superscript_at(s + at + strlen(MIDDLE_DOT), plain + len + 1, n - len - 1)) {
            plain[len++] = '.';
            at += strlen(MIDDLE_DOT);
        } else {
            break;
        }
    }
    plain[len] = '\0';
    return at;
}

/* Literal text in LaTeX; a superscript number (S⁰·⁹⁸, R²) as \textsuperscript{0.98}. */
static void tex(FILE *f, const char *s)
{
    size_t from = 0, i = 0, len = strlen(s);
    char plain[48];
    while (i < len) {
        size_t k = superscript_at(s + i, plain, sizeof plain);
        if (!k) {
            i++;
            continue;
        }
        esc_latex_text(f, s + from, i - from);
        fprintf(f, "\\textsuperscript{%s}", plain);
        i += k;
        from = i;
    }
    esc_latex_text(f, s + from, len - from);
}

char *sweep_latex(const sweep_data *m)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    fputs("% attnprof sweep: \\input{sweep.tex} in a document with \\usepackage{booktabs}.\n", f);
    for (int d = 0; d < m->n_families; d++) {
        const sweep_family *fam = &m->families[d];
        char label[64];
        sweep_family_label(fam, label, sizeof label);
        fprintf(f, "\\begin{table}[t]\n\\centering\n\\caption{CUDA time per forward (median), ");
        tex(f, m->gpu_name);
        fprintf(f, ", bf16 causal, %s%s.}\n\\begin{tabular}{rr", label, fam->q_seq > 0 ? " (S: KV length)" : "");
        for (int k = 0; k < m->n_variants; k++)
            fputc('r', f);
        fputs("}\n\\toprule\nS & B", f);
        for (int k = 0; k < m->n_variants; k++) {
            fputs(" & ", f);
            tex(f, m->variants[k]);
        }
        fputs(" \\\\\n\\midrule\n", f);
        for (int i = 0; i < m->n_shapes; i++) {
            const sweep_shape *x = &m->shapes[i];
            if (!sweep_in_family(&x->shape, fam))
                continue;
            fprintf(f, "%d & %d", x->shape.seq, x->shape.batch);
            for (int k = 0; k < m->n_variants; k++) {
                char t[64];
                if (x->p[k].state == SWEEP_OK)
                    format_us(x->p[k].us, t, sizeof t);
                else
                    snprintf(t, sizeof t, "%s", point_word(&x->p[k]));
                fputs(" & ", f);
                tex(f, t);
            }
            fputs(" \\\\\n", f);
        }
        char kv[16] = "", q[16] = "";
        if (fam->kv_heads > 0)
            snprintf(kv, sizeof kv, "-kv%d", fam->kv_heads);
        if (fam->q_seq > 0)
            snprintf(q, sizeof q, "-q%d", fam->q_seq);
        fprintf(f, "\\bottomrule\n\\end{tabular}\n\\label{tab:sweep-d%d%s%s}\n\\end{table}\n\n", fam->dim, kv, q);
    }
    if (m->n_findings) {
        fputs("\\begin{itemize}\n", f);
        for (int i = 0; i < m->n_findings; i++) {
            char text[1024];
            sweep_finding_text(m, &m->findings[i], text, sizeof text);
            fputs("  \\item ", f);
            tex(f, text);
            fputc('\n', f);
        }
        fputs("\\end{itemize}\n", f);
    }
    fclose(f);
    return buf;
}

/* ---- the sweep's bundle (doc_bundle.h) ----------------------------------------------- */

typedef struct sweep_doc {
    const sweep_data *m;
    unsigned formats;
} sweep_doc;

static int draw_sweep(const doc_bundle *b, const char *dir, figure_list *figs, char *err, size_t errlen)
{
    const sweep_doc *d = b->data;
    return sweep_figures_render(d->m, dir, d->formats, figs, err, errlen);
}

static char *sweep_md(const doc_bundle *b, const figure_list *figs, const char *inline_from_dir)
{
    return sweep_markdown(((const sweep_doc *)b->data)->m, figs, inline_from_dir);
}

static int sweep_csv_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(sweep_csv(((const sweep_doc *)p->bundle->data)->m), out, err, n);
}
static int sweep_tex_row(const doc_page *p, char **out, char *err, size_t n)
{
    return doc_text(sweep_latex(((const sweep_doc *)p->bundle->data)->m), out, err, n);
}

static const doc_output sweep_outputs[] = {
    {"sweep.md", doc_markdown_row, NULL},
    {"sweep.html", doc_html_row, NULL},
    {"sweep.csv", sweep_csv_row, NULL},
    {"sweep.tex", sweep_tex_row, NULL},
};

int sweep_write(const sweep_data *m, unsigned formats, char *err, size_t errlen)
{
    sweep_doc d = {m, formats | FIG_PNG}; /* PNG always: sweep.html inlines it, as report.html and compare.html do */
    char title[256], formats_text[32], made_by[64];
    char shapes[48];
    snprintf(title, sizeof title, "attnprof sweep — %s, %s", m->gpu_name,
             units_count_noun(m->n_shapes, "shape", shapes, sizeof shapes));
    doc_formats_text(d.formats, formats_text, sizeof formats_text);
    snprintf(made_by, sizeof made_by, "sweep --collect --format %s", formats_text);
    /* One writer at a time per sweep directory (the pipeline's lock): a second --collect waits. */
    const doc_bundle b = {.kind = "sweep-report", .noun = "sweep report", .title = title, .data = &d,
                          .draw = draw_sweep, .markdown = sweep_md, .outputs = sweep_outputs,
                          .n_outputs = (int)(sizeof sweep_outputs / sizeof sweep_outputs[0]),
                          .placement = DOC_BESIDE_INPUTS, .quiet = 0, .made_by = made_by};
    return doc_bundle_write(&b, m->dir, 0, err, errlen);
}
