/* Findings as one table: each kind of finding (finding_kind.h) is a row
 * {id, severity, needs, rank, derive, phrase} of finding_table (findings.c), and every
 * finding of the report, the counters and the sweep has one shape (struct finding,
 * analysis.h). This module is the engine over the table: adding a finding of a kind,
 * its numbers and records, its phrase, the rank order, the walk of the derive column,
 * and the sentence's rendering for writers.
 *
 * The rank rule (findings_ranked, findings_rank_cmp): higher severity first; then the
 * larger share of the variant's CUDA time (a finding without one after those with
 * one); then the larger departure from the prediction (likewise); then the table's
 * order; then the order they were derived in. */
#ifndef ATTNPROF_FINDING_H
#define ATTNPROF_FINDING_H

#include "analysis.h"

#include <stdio.h>

/* A row's derive: adds the findings of its kind (and of the rows after it whose derive
 * is NULL: one function can decide between kinds) to variant vi. Returns 1 when the
 * variant gets no further finding of this walk (a variant that never ran), else 0. */
typedef int (*finding_derive_fn)(analysis *a, int vi);

/* How a finding ranks beyond its severity: the names of its numbers that give its
 * share of the variant's CUDA time (`us`: µs per forward, over the variant's median
 * CUDA time; `share`: a share already, 0–1) and its departure from the prediction
 * (`departure`, a fraction). NULL: the finding carries none. */
typedef struct finding_rank_by {
    const char *us, *share, *departure;
} finding_rank_by;

typedef struct finding_row {
    finding_kind kind;          /* its index in finding_table (checked by the tests) */
    const char *id;             /* stable: findings.json, compare and the tests key on it */
    finding_severity severity;  /* the kind's severity (a derive may state another, saying why) */
    const char *needs;          /* archive facts it needs, comma-separated ("" none): compare
                                 * calls a finding untestable where the other side lacks one */
    finding_rank_by rank;
    /* The short phrase: text with {key} for the number of that key in its unit ("B":
     * bytes, "us": µs (ms from 1000 µs), "%": percent, "x": times), {key:pct} for a share as a percent,
     * {key:+} signed, {key:.N} N decimals, {@subject} and {@other}; a part in [ ] is
     * left out when a number in it is missing. */
    const char *phrase;
} finding_row;

extern const finding_row finding_table[FK_COUNT];
/* Whether a kind has its own derive (findings.c's derive column, apart from the table). */
int finding_has_derive(finding_kind kind);

/* The row of a kind; the kind of an id (ATTN_NONE when no row has it). */
const finding_row *finding_row_of(finding_kind kind);
int finding_kind_of_id(const char *id);

/* ---- adding findings -------------------------------------------------------- */

/* Adds a finding of this kind to a variant, its id, severity and needs from the row,
 * its sentence formatted now (past MAX_FINDINGS it goes to a scratch slot, dropped). */
finding *findings_add(variant_analysis *va, finding_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A finding outside a variant (a sweep's) of this kind, into f. */
void finding_init(finding *f, finding_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Adds a number (skipped when not finite: a finding never carries a placeholder) or
 * the correlation id of a record to a finding. */
void findings_number(finding *f, const char *key, double value, const char *unit);
void findings_record(finding *f, const gpu_op *o);
/* Fills the phrase and the rank keys from the numbers; cuda_us is the variant's CUDA
 * time per forward (NAN: none). The derive walk calls it for each finding it adds. */
void finding_finish(finding *f, double cuda_us);
/* The phrase of a finding from its row's template, into out[n]. */
void finding_phrase(const finding *f, char *out, size_t n);

/* Walks the rows first..last for every variant of a built analysis, calling each
 * row's derive and finishing what it adds. */
void findings_walk(analysis *a, finding_kind first, finding_kind last);

/* ---- reading findings ------------------------------------------------------- */

/* The finding of a variant with this id or kind, or NULL; a number of it by key, or NAN. */
const finding *findings_find(const variant_analysis *va, const char *id);
const finding *findings_of_kind(const variant_analysis *va, finding_kind kind);
double findings_value(const finding *f, const char *key);
const char *findings_severity_name(finding_severity s); /* "info", "notice", "warning" */
/* The rank rule's order of two findings (<0: a first); ties by position are the caller's. */
int findings_rank_cmp(const finding *a, const finding *b);
/* A variant's findings in rank order: idx[0..n) gets indices into va->meta (and
 * va->findings), at most max of them. Returns n. */
int findings_ranked(const variant_analysis *va, int *idx, int max);
/* The same over one phase's findings: the forward's (backward 0: what findings_ranked gives, the
 * summary's cell) or the backward's (1: the FK_BWD_* kinds, the backward table's cell). */
int findings_ranked_phase(const variant_analysis *va, int *idx, int max, int backward);
/* 1 for the kinds of the backward (FK_BWD_*, backward_findings.c): the forward's summary cell
 * leaves them out, the backward table's shows them. */
int finding_kind_is_backward(finding_kind k);

/* ---- the sentence ------------------------------------------------------------- */

/* A finding's sentence (finding.text) marks the names it quotes (kernels, APIs, ATen
 * ops) with these two control characters, which archive strings never keep. */
#define FINDING_CODE_OPEN '\x01'
#define FINDING_CODE_CLOSE '\x02'
/* One span of a sentence: `code` 1 for a quoted name. A writer's span function keeps
 * its stream (or buffer) in ctx, so analysis/ declares no writer. */
typedef void (*finding_span_fn)(const char *s, size_t len, int code, void *ctx);
/* Calls span for each span of text, in order. */
void findings_spans(const char *text, finding_span_fn span, void *ctx);
/* The sentence as Markdown (names as code spans, text escaped) or as plain text, into
 * out[n]; cut at a character, with an ellipsis, if it must be. */
void findings_markdown(const char *text, char *out, size_t n);
void findings_plain(const char *text, char *out, size_t n);
/* Archive text for a sentence: control characters (the markers among them) become a
 * space; a quoted name: the text between the two markers. */
void findings_text_buf(char *out, size_t n, const char *s);
void findings_code_buf(char *out, size_t n, const char *s);

#endif
