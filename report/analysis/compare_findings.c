/* Compare's findings diff (compare.h): a finding of one run is shared when the other
 * run has a finding of its id, untestable there when the other run lacks a record its
 * row of the finding table needs, else found in that run only. */
#include "compare_parts.h"
#include "alloc.h"

#include "findings.h"

#include <stdlib.h>
#include <string.h>

static int has_fact(const variant_result *r, const char *key)
{
    for (int i = 0; i < r->facts.n; i++)
        if (!strcmp(r->facts.item[i].key, key))
            return 1;
    return 0;
}

static int records_expected_ops(const variant_result *r, const char *key) { (void)key; return r->expected_ops >= 0; }
static int records_backward(const variant_result *r, const char *key)
{
    (void)key;
    return r->bwd.recorded && r->bwd.status == VARIANT_OK;
}

/* The needs of the finding table (finding.h) whose record not every archive holds:
 * without it on the other side the finding cannot be tested there, so its absence says
 * nothing. A need not listed here (a fact that is the finding itself, as head dim
 * padding, or a device property every trace has) is always testable. */
static const struct finding_need {
    const char *need;    /* as the row's needs list it */
    int (*recorded)(const variant_result *r, const char *key);
    const char *key;     /* for recorded() */
    const char *missing; /* what the other side lacks, for the reader */
} finding_needs[] = {
    {"expected_ops", records_expected_ops, NULL, "no expected operation count"},
    {"backward", records_backward, NULL, "no backward recorded (run without --backward)"},
    {"facts.plan_build_us", has_fact, "plan_build_us", "no setup phases"},
    {"facts.fully_masked_rows", has_fact, "fully_masked_rows", "no check of the output's fully-masked rows"},
};

/* What `other` lacks to test finding f, or NULL when it has it all. */
static const char *missing_for(const finding *f, const variant_analysis *other)
{
    for (const char *p = f->needs; *p;) {
        size_t len = strcspn(p, ",");
        for (size_t k = 0; k < sizeof finding_needs / sizeof finding_needs[0]; k++) {
            const struct finding_need *w = &finding_needs[k];
            if (strlen(w->need) == len && !strncmp(p, w->need, len) && !w->recorded(other->result, w->key))
                return w->missing;
        }
        p += len + (p[len] == ',');
    }
    return NULL;
}

/* The findings of `from` whose id `to` lacks: either a gap (`to` cannot test it, missing_for
 * says why) or a finding of `from` only. Called once per direction. */
static void one_sided_findings(const variant_analysis *from, const variant_analysis *to, finding_gap *gaps,
                               int *n_gaps, const char **only, int *n_only)
{
    for (int i = 0; from && i < from->n_findings; i++) {
        const finding *f = &from->meta[i];
        if (findings_find(to, f->id))
            continue;
        const char *missing = to ? missing_for(f, to) : NULL;
        if (missing)
            gaps[(*n_gaps)++] = (finding_gap){from->findings[i], missing};
        else
            only[(*n_only)++] = from->findings[i];
    }
}

void compare_findings_diff(kernel_diff *d, const variant_analysis *base, const variant_analysis *other)
{
    d->only_base = calloc(MAX_FINDINGS, sizeof *d->only_base);
    d->only_other = calloc(MAX_FINDINGS, sizeof *d->only_other);
    d->gap_base = calloc(MAX_FINDINGS, sizeof *d->gap_base);
    d->gap_other = calloc(MAX_FINDINGS, sizeof *d->gap_other);
    if (!d->only_base || !d->only_other || !d->gap_base || !d->gap_other)
        attn_oom();
    one_sided_findings(base, other, d->gap_base, &d->n_gap_base, d->only_base, &d->n_only_base);
    one_sided_findings(other, base, d->gap_other, &d->n_gap_other, d->only_other, &d->n_only_other);
}

