/* The full names of the kernels a report shortens. Sentences, tables and figures show a
 * kernel by its short name (findings_short_name, short_kernel_name, fig_op_label); the
 * appendix gives every such kernel of the archive its full name, however many there are,
 * so no name is cut without its whole form somewhere in the same document. */
#ifndef ATTNPROF_KERNEL_NAMES_H
#define ATTNPROF_KERNEL_NAMES_H

#include <stdio.h>

#include "analysis.h"

/* 1 when the report writes `name` shorter than it is anywhere (sentence or figure form). */
int kernel_name_is_shortened(const char *name);
/* The distinct kernel names of the archive that the report shortens, in trace order:
 * *n of them, in an array the caller frees (the strings are the trace's). */
const char **kernel_names_shortened(const analysis *a, int *n);
/* "## Appendix: full kernel names" (Markdown; nothing when no name is shortened). */
void kernel_names_appendix(FILE *f, const analysis *a);

#endif
