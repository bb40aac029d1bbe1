/* A variant's headline findings for the summary table's "What the trace revealed" cell: the
 * findings in the finding table's rank order (finding.h, findings_ranked), each as its short
 * phrase (finding.phrase, from its row's template), cut to a word budget
 * (finding_phrases.c). The full sentences stay in the variant's own section. */
#ifndef ATTNPROF_FINDING_PHRASES_H
#define ATTNPROF_FINDING_PHRASES_H

#include "analysis.h"

#include <stddef.h>
#include <stdio.h>

/* The most words a summary cell holds, its "N more" included. */
#define FINDING_CELL_MAX_WORDS 25
/* The most phrases a summary cell shows. */
#define FINDING_CELL_MAX_PHRASES 3
/* The words the budget keeps for the cell's last part: "N more" links to the variant's section
 * in the report, "N more in the report" in LaTeX. */
#define FINDING_CELL_MORE_WORDS 5
#define FINDING_PHRASE_MAX 160

/* The rank rule of finding.h in words, for a note under a table (README says the same). */
extern const char FINDING_RANK_RULE[];

/* A summary cell: the findings shown, in rank order, and how many are not. */
typedef struct finding_cell {
    int n;                                   /* phrases shown */
    int index[FINDING_CELL_MAX_PHRASES];     /* which finding of the variant (k of va->meta[k]) */
    char phrase[FINDING_CELL_MAX_PHRASES][FINDING_PHRASE_MAX]; /* plain UTF-8 text, no markup */
    int more;                                /* the variant's findings not shown */
} finding_cell;

/* Finding k of the variant as its short phrase (plain text): the row's phrase, or, for a
 * finding without one, the first words of its sentence. */
void summary_finding_phrase(const variant_analysis *va, int k, char *out, size_t n);
/* The cell: the ranked findings as phrases while they fit FINDING_CELL_MAX_PHRASES and
 * FINDING_CELL_MAX_WORDS (FINDING_CELL_MORE_WORDS kept for "N more"); info-level findings only when the
 * variant has no warning or notice. At least one phrase when the variant has a finding. */
void finding_cell_build(const variant_analysis *va, finding_cell *c);
/* The same over the backward's findings (FK_BWD_*), for the backward table; the forward's cell
 * above leaves them out. */
void finding_cell_build_backward(const variant_analysis *va, finding_cell *c);
/* The cell in Markdown: each phrase linked to its finding's sentence, then "N more" linked to
 * the variant's section; nothing for an empty cell. */
void finding_cell_write_md(FILE *f, const variant_analysis *va, int variant, const finding_cell *c);
/* Words of plain text (runs of non-space), as the limit counts them. */
int finding_words(const char *s);

/* Anchors of the report's variant sections and their findings, for links from the summary:
 * "v3" for the third variant, "v3-hidden_memcpy" for a finding of it (its position added
 * when an id repeats). Letters, digits, '-' and '_' only. */
void finding_variant_anchor(int variant, char *out, size_t n);
void finding_anchor(const variant_analysis *va, int variant, int k, char *out, size_t n);

#endif
