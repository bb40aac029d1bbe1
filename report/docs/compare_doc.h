/* attnprof compare's documents (compare_doc.c): compare.md, compare.html, compare.csv and
 * compare.tex written from the comparison's data (compare.h), with its figures. */
#ifndef ATTNPROF_COMPARE_DOC_H
#define ATTNPROF_COMPARE_DOC_H

#include <stddef.h>
#include <stdio.h>

#include "compare.h"
#include "figures.h"

/* compare.md, compare.html, compare.csv (malloc'd text). */
char *compare_markdown(const compare_data *m, const figure_list *figs, const char *inline_from_dir);
char *compare_csv(const compare_data *m);
/* The terminal's summary after compare (report_terminal.c): the headline, the ratio
 * convention, each variant's ratio and verdict per run, the model-trace pairs, what differs. */
void compare_terminal_summary(FILE *f, const compare_data *m);
/* Everything into DIR through the document pipeline (doc_bundle.h), as a directory of
 * its own: built beside DIR and renamed into place (swapped with an old one under
 * `force`). EXIT_OK, EXIT_OUTPUT_EXISTS, or EXIT_IO. */
int compare_write(const compare_data *m, const char *dir, const compare_options *opt, int force, char *err,
                  size_t errlen);

#endif
