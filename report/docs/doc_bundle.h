/* One document pipeline for the report, compare and sweep (doc_bundle.c).
 *
 * A bundle is its data (what the writers read), its title, the figures drawn from it and a table of outputs, each a
 * file name and the writer that renders it from the data. doc_bundle_render draws the
 * figures and renders every output into a directory; doc_bundle_write renders into a staging
 * folder and then replaces the outputs all together or not at all. Where the outputs go is
 * the bundle's placement: a comparison is a directory of its own (built beside its
 * destination and renamed into place whole); a report and a sweep's documents sit beside
 * their inputs (trace.json and run.json; shapes/ and logs/), which stay where they are while
 * the outputs are replaced as one set (a manifest lets the next run finish a commit that was
 * killed). A new output format is one row in a bundle's table. */
#ifndef ATTNPROF_DOC_BUNDLE_H
#define ATTNPROF_DOC_BUNDLE_H

#include <stddef.h>

#include "figures.h"

typedef struct doc_bundle doc_bundle;

/* What every writer is handed: the bundle (its data and title), the figures drawn and the
 * directory they were drawn into (documents that inline images read them from there). */
typedef struct doc_page {
    const doc_bundle *bundle;
    const figure_list *figs;
    const char *dir;
} doc_page;

/* One output of a bundle. Either `render` (text): EXIT_OK with the text in *out (malloc'd), or
 * EXIT_OK with *out NULL when the bundle has nothing of this kind to say (roles.csv of a run
 * that is no import); or `write`, for an output a writer makes itself from the outputs before
 * it (report.pdf, printed from report.html), EXIT_OK also when it wrote nothing (a stated skip,
 * said on stderr by the row). A failure is an EXIT_* code with `err`. Rows run in table order. */
typedef struct doc_output {
    const char *name;
    int (*render)(const doc_page *p, char **out, char *err, size_t errlen);
    int (*write)(const doc_page *p, const char *dir, char *err, size_t errlen);
} doc_output;

typedef enum doc_placement {
    DOC_OWN_DIRECTORY,  /* the destination holds the bundle only (compare -o DIR) */
    DOC_BESIDE_INPUTS,  /* the destination also holds what the bundle was made from */
} doc_placement;

struct doc_bundle {
    const char *kind;        /* "report", "sweep-report": the staging folders' prefix (.KIND.tmp-PID) */
    const char *noun;        /* "report", "sweep report": the "waiting for" line's word for it */
    const char *title;       /* the HTML page's title */
    void *data;              /* what the writers read: an analysis, a compare_data, a sweep_data */
    /* Optional: builds the data, first thing in the render, after the lock is taken and what
     * a killed write left is repaired (so that data that cannot be built, a bad
     * --reference, still leaves the directory repaired). EXIT_OK or an EXIT_* code. */
    int (*prepare)(const doc_bundle *b, char *err, size_t errlen);
    /* Draws the figures into DIR/figures, listing them in figs; EXIT_OK or an EXIT_* code. */
    int (*draw)(const doc_bundle *b, const char *dir, figure_list *figs, char *err, size_t errlen);
    /* The Markdown text the .md and .html rows render (doc_markdown_row, doc_html_row): images
     * linked from figs, or inlined from `inline_from_dir` when it is set. */
    char *(*markdown)(const doc_bundle *b, const figure_list *figs, const char *inline_from_dir);
    const doc_output *outputs;
    int n_outputs;
    /* The render's options in one phrase ("--format pdf --figure-size column"): what the record
     * of outputs (doc_record.h, written with them) says made each. NULL: no record. */
    const char *made_by;
    doc_placement placement;
    int quiet;               /* no "waiting for" line while another attnprof holds the lock */
    int clean;               /* beside the inputs: an old output this render does not make is removed
                              * (--clean); without, it stays as an earlier render left it */
};

/* Rows any bundle can use: its Markdown (images linked), and the HTML page of its Markdown
 * with the images inlined (cmark-gfm, templates/report.html). */
int doc_markdown_row(const doc_page *p, char **out, char *err, size_t errlen);
int doc_html_row(const doc_page *p, char **out, char *err, size_t errlen);

/* A render row's ending for a writer that returns malloc'd text or NULL when out of memory:
 * EXIT_OK with *out = text, or EXIT_NO_MEMORY with "out of memory" in err. */
int doc_text(char *text, char **out, char *err, size_t errlen);

/* FIG_* bits as --format writes them ("png,svg,pdf"), into out. */
void doc_formats_text(unsigned formats, char *out, size_t n);

/* Draws the figures and writes every output into `dir`, which exists (the new archive's
 * temporary folder, a staging folder). EXIT_OK or the first failure's EXIT_* code with `err`;
 * what was written stays for the caller to remove. */
int doc_bundle_render(const doc_bundle *b, const char *dir, char *err, size_t errlen);

/* Renders the bundle and puts it in place at `dest`.
 * DOC_OWN_DIRECTORY: dest must not exist unless `force` (else EXIT_OUTPUT_EXISTS); it is built
 *   as a temporary sibling and renamed in (swapped with the old one under force).
 * DOC_BESIDE_INPUTS: dest exists; under an exclusive lock on it, after finishing or removing
 *   what a killed write left, the outputs are rendered into dest/.KIND.tmp-PID and moved in
 *   together: every output name present stays present, old or new, at every moment; an old
 *   output the new render lacks stays (a document, or a figure: carried into the new figures/),
 *   and under b->clean, one the record lists is removed (a file it does not list, never); a
 *   failure leaves the old outputs as they were.
 * EXIT_OK, or an EXIT_* code with `err`. */
int doc_bundle_write(const doc_bundle *b, const char *dest, int force, char *err, size_t errlen);

/* A staging folder's manifest, `text` (modified: split into lines), against the n output
 * names: listed[i] and ino[i] for each name it lists ("NAME INODE" lines; a name listed twice
 * keeps its last inode), *clean when it holds the line "--clean"; any other line is ignored.
 * The reader of a killed commit's leftovers (and the fuzz target's entry to it). */
void doc_manifest_parse(char *text, const char *const names[], int n, int listed[], unsigned long long ino[],
                        int *clean);

#endif
