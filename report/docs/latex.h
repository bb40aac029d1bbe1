/* The LaTeX writer (latex.c: escaping; latex_tables.c: summary.tex, compare.tex) and the
 * plain-text form of the findings (summary.csv, LaTeX). Findings are Markdown we wrote: literal text with
 * backslash escapes, and code spans (escape.h). Here they are read back span by
 * span and written for a target that is not Markdown. */
#ifndef ATTNPROF_LATEX_H
#define ATTNPROF_LATEX_H

#include "analysis.h"
#include "compare.h"

#include <stdio.h>

/* ---- findings' Markdown, span by span ------------------------------------- */

/* Calls `span(ctx, text, len, is_code)` for each text run and code span of `md`,
 * escapes undone: "\\|" is '|', "`a`" is code "a". */
typedef void (*md_span_fn)(void *ctx, const char *text, size_t len, int is_code);
void md_spans(const char *md, md_span_fn span, void *ctx);
/* The plain text of `md` (malloc'd): no backticks, no escapes. */
char *md_to_plain(const char *md);

/* ---- LaTeX ------------------------------------------------------------------ */

/* The most characters of a table's caption as printed: two lines of a full-width caption at
 * 10 pt (about 100 characters each); the detail goes in the note under the table. */
#define LATEX_CAPTION_MAX_CHARS 200

/* Literal text in LaTeX: the ten special characters escaped, the non-ASCII
 * characters attnprof writes (µ, →, –, —, ×, …, ≥, ≤, ‖, √, ·) as commands that need
 * no package beyond the defaults, a Latin letter (U+00A0-U+017F) as itself in UTF-8
 * (LaTeX reads UTF-8 by default; fontenc T1 sets them), a character of another script as
 * "[U+XXXX]" (pdflatex could not set it), a byte of no valid UTF-8 sequence as '?'.
 * Control characters become a space. */
void esc_latex_text(FILE *f, const char *s, size_t len);
/* \texttt{...} of `s`, breakable after '_' (\_\allowbreak{}). */
void esc_latex_code(FILE *f, const char *s, size_t len);
/* A finding (our Markdown) as LaTeX: text escaped, code spans in \texttt. */
void latex_from_md(FILE *f, const char *md);

/* summary.tex (malloc'd): the summary as booktabs tables to \input into a paper
 * (needs \usepackage{booktabs}); each caption at most LATEX_CAPTION_MAX_CHARS, a note under
 * the table states shape, GPU, versions and method. Tables are table*: the text width in a
 * two-column paper, a plain table in one. */
char *report_summary_tex(const analysis *a);
/* compare.tex (malloc'd): the comparison's summary as a booktabs table. */
char *compare_tex(const compare_data *m);

#endif
