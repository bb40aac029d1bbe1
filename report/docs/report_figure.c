/* A figure as Markdown, for every document (report, compare, sweep): the PNG (or SVG) image,
 * linked beside the Markdown file or inlined as a data: URI for the self-contained page, then
 * its caption and its vector files (report.h, report_md_figure). */
#include "report.h"

#include "alloc.h"
#include "escape.h"
#include "input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest figure inlined into the self-contained page; the figures attnprof draws are
 * well under 1 MiB each. */
#define FIGURE_INLINE_MAX_BYTES ((int64_t)32 << 20)

static char *base64_file(const char *path, size_t *len_out)
{
    /* input.h's rule: a figure that is a link, a FIFO or a device is not inlined (nor read). */
    const input_rules rules = {.max_bytes = FIGURE_INLINE_MAX_BYTES, .what = "a figure"};
    char *text = NULL, why[ATTN_ERR_LEN];
    size_t got = 0;
    if (input_read_text(path, &rules, &text, &got, NULL, why, sizeof why) != EXIT_OK)
        return NULL;
    unsigned char *raw = (unsigned char *)text;
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t out_len = 4 * ((got + 2) / 3);
    char *out = malloc(out_len + 1), *o = out;
    if (!out)
        attn_oom();
    for (size_t i = 0; i < got; i += 3) {
        unsigned v = raw[i] << 16 | (i + 1 < got ? raw[i + 1] << 8 : 0) | (i + 2 < got ? raw[i + 2] : 0);
        *o++ = tbl[v >> 18 & 63];
        *o++ = tbl[v >> 12 & 63];
        *o++ = i + 1 < got ? tbl[v >> 6 & 63] : '=';
        *o++ = i + 2 < got ? tbl[v & 63] : '=';
    }
    *o = '\0';
    free(raw);
    *len_out = out_len;
    return out;
}

/* The vector files of a figure: links beside report.md; in the self-contained page
 * (inline_dir set) only their names in the archive, since a link would point to a
 * file that does not travel with the page. */
static void vector_files(FILE *f, const figure_file *svg, const figure_file *pdf, const char *inline_dir)
{
    if (!svg && !pdf)
        return;
    if (inline_dir) {
        fputs(" — vector files in the archive, beside this page:", f);
        if (svg) {
            fputc(' ', f);
            esc_md_code(f, svg->path, 0);
        }
        if (pdf) {
            fputs(svg ? "," : "", f);
            fputc(' ', f);
            esc_md_code(f, pdf->path, 0);
        }
        return;
    }
    fputs(" — vector:", f);
    if (svg)
        fprintf(f, " [SVG](%s)", svg->path);
    if (pdf)
        fprintf(f, " [PDF](%s)", pdf->path);
}

/* Markdown image for a figure; PNG preferred for the page, with the vector files. */
void report_md_figure(FILE *f, const figure_list *figs, const char *name, const char *inline_dir)
{
    if (!figs)
        return;
    const figure_file *png = NULL, *svg = NULL, *pdf = NULL;
    for (int i = 0; i < figs->n; i++) {
        if (strcmp(figs->files[i].figure, name))
            continue;
        const char *k = figs->files[i].kind;
        if (!strcmp(k, "png"))
            png = &figs->files[i];
        else if (!strcmp(k, "svg"))
            svg = &figs->files[i];
        else if (!strcmp(k, "pdf"))
            pdf = &figs->files[i];
    }
    /* In the self-contained page only a PNG is inlined: cmark-gfm's safe mode
     * blanks a data:image/svg+xml source. */
    const figure_file *show = png ? png : inline_dir ? NULL : svg;
    if (!show && (svg || pdf)) { /* no page image: the vector files */
        const figure_file *any = svg ? svg : pdf;
        fputs("*", f);
        esc_md_text(f, any->caption);
        fputs("*", f);
        vector_files(f, svg, pdf, inline_dir);
        fputs("\n\n", f);
        return;
    }
    if (!show)
        return;
    if (inline_dir) {
        char path[4096];
        size_t len;
        char *b64 = NULL;
        if (snprintf(path, sizeof path, "%s/%s", inline_dir, show->path) < (int)sizeof path)
            b64 = base64_file(path, &len);
        if (b64) {
            fputs("![", f);
            esc_md_text(f, show->caption);
            fprintf(f, "](data:image/%s;base64,%s)\n\n", show == png ? "png" : "svg+xml", b64);
            free(b64);
        }
    } else {
        fputs("![", f);
        esc_md_text(f, show->caption);
        fprintf(f, "](%s)\n\n", show->path);
    }
    fputs("*", f);
    esc_md_text(f, show->caption);
    fputs("*", f);
    vector_files(f, svg, pdf, inline_dir);
    fputs("\n\n", f);
}
