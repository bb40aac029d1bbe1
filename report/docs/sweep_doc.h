/* attnprof sweep's documents (sweep_doc.c): sweep.md, sweep.html, sweep.csv and
 * sweep.tex written from the sweep's data (sweep.h), with its figures. */
#ifndef ATTNPROF_SWEEP_DOC_H
#define ATTNPROF_SWEEP_DOC_H

#include <stddef.h>

#include "figures.h"
#include "sweep.h"

/* One sentence for a finding, plain text (no Markdown), in `out`. */
void sweep_finding_text(const sweep_data *m, const sweep_finding *f, char *out, size_t n);
char *sweep_markdown(const sweep_data *m, const figure_list *figs, const char *inline_from_dir);
char *sweep_csv(const sweep_data *m);
char *sweep_latex(const sweep_data *m);
/* Writes sweep.md, sweep.html, sweep.csv, sweep.tex and figures/sweep-* into
 * m->dir through the document pipeline (doc_bundle.h), beside the shapes and logs:
 * rendered into a staging folder, then moved in all together, so a failure leaves
 * the previous documents as they were; figures an earlier collect drew in other formats
 * stay (the record of outputs says which collect made each). EXIT_OK or EXIT_IO. */
int sweep_write(const sweep_data *m, unsigned formats, char *err, size_t errlen);

#endif
