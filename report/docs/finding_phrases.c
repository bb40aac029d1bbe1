/* The summary table's cell (finding_phrases.h): the finding table's rank and phrases
 * (finding.h) cut to the cell's budget of phrases and words, and the anchors the cell's links
 * point to. */
#include "finding_phrases.h"

#include "finding.h"
#include "findings.h"
#include "latex.h"
#include "escape.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char FINDING_RANK_RULE[] =
    "by severity (warning, notice, info), then by the share of the variant's CUDA time the finding accounts for, "
    "then by its departure from the prediction (larger first; a finding without one after those with one), then "
    "in the finding table's order";

int finding_words(const char *s)
{
    int words = 0, in_word = 0;
    for (; *s; s++) {
        int space = isspace((unsigned char)*s);
        words += !space && !in_word;
        in_word = !space;
    }
    return words;
}

/* The sentence's first words, for a finding whose id has no row. */
static void sentence_head(const variant_analysis *va, int k, char *out, size_t n)
{
    enum { HEAD_WORDS = 6 };
    char plain[640];
    if (va->meta[k].text[0])
        findings_plain(va->meta[k].text, plain, sizeof plain);
    else {
        char *p = md_to_plain(va->findings[k]);
        snprintf(plain, sizeof plain, "%s", p);
        free(p);
    }
    int words = 0, in_word = 0;
    char *s = plain;
    for (; *s; s++) {
        int space = isspace((unsigned char)*s);
        if (!space && !in_word && ++words > HEAD_WORDS)
            break;
        in_word = !space;
    }
    int cut = *s != '\0';
    while (s > plain && isspace((unsigned char)s[-1]))
        s--;
    *s = '\0';
    snprintf(out, n, "%s%s", plain, cut ? "…" : "");
}

void summary_finding_phrase(const variant_analysis *va, int k, char *out, size_t n)
{
    if (va->meta[k].phrase[0])
        snprintf(out, n, "%s", va->meta[k].phrase);
    else
        sentence_head(va, k, out, n);
}

static void cell_build(const variant_analysis *va, finding_cell *c, int backward)
{
    memset(c, 0, sizeof *c);
    int order[MAX_FINDINGS];
    int n = findings_ranked_phase(va, order, MAX_FINDINGS, backward);
    int above_info = n > 0 && va->meta[order[0]].severity > FINDING_INFO;
    int words = 0;
    for (int j = 0; j < n && c->n < FINDING_CELL_MAX_PHRASES; j++) {
        int k = order[j];
        if (above_info && va->meta[k].severity == FINDING_INFO)
            break;
        char phrase[FINDING_PHRASE_MAX];
        summary_finding_phrase(va, k, phrase, sizeof phrase);
        int w = finding_words(phrase);
        int left = n - j - 1; /* "N more" while findings remain */
        if (c->n > 0 && words + w + (left ? FINDING_CELL_MORE_WORDS : 0) > FINDING_CELL_MAX_WORDS)
            break;
        snprintf(c->phrase[c->n], sizeof c->phrase[c->n], "%s", phrase);
        c->index[c->n++] = k;
        words += w;
    }
    c->more = n - c->n;
}

void finding_cell_build(const variant_analysis *va, finding_cell *c) { cell_build(va, c, 0); }
void finding_cell_build_backward(const variant_analysis *va, finding_cell *c) { cell_build(va, c, 1); }

void finding_variant_anchor(int variant, char *out, size_t n) { snprintf(out, n, "v%d", variant + 1); }

void finding_anchor(const variant_analysis *va, int variant, int k, char *out, size_t n)
{
    char id[40];
    int len = 0;
    for (const char *s = va->meta[k].id; *s && len < (int)sizeof id - 1; s++)
        id[len++] = isalnum((unsigned char)*s) || *s == '_' || *s == '-' ? *s : '-';
    id[len] = '\0';
    int repeats = 0;
    for (int j = 0; j < va->n_findings && j < MAX_FINDINGS; j++)
        repeats += j != k && !strcmp(va->meta[j].id, va->meta[k].id);
    if (!len)
        snprintf(out, n, "v%d-finding-%d", variant + 1, k + 1);
    else if (repeats)
        snprintf(out, n, "v%d-%s-%d", variant + 1, id, k + 1);
    else
        snprintf(out, n, "v%d-%s", variant + 1, id);
}

void finding_cell_write_md(FILE *f, const variant_analysis *va, int variant, const finding_cell *c)
{
    char anchor[64];
    for (int j = 0; j < c->n; j++) {
        fputs(j ? "; [" : "[", f);
        esc_md_text(f, c->phrase[j]);
        finding_anchor(va, variant, c->index[j], anchor, sizeof anchor);
        fprintf(f, "](#%s)", anchor);
    }
    if (c->more) {
        finding_variant_anchor(variant, anchor, sizeof anchor);
        fprintf(f, "%s[%d more](#%s)", c->n ? "; " : "", c->more, anchor);
    }
}
