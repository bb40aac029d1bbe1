/* analysis/compare: the findings diff keys on the finding's id, never on its wording,
 * and a finding that needs a record the other run lacks is untestable there. Two loads
 * of one recorded archive, one side's findings edited in memory. */
#include <criterion/criterion.h>
#include <string.h>

#include "compare.h"
#include "exit_codes.h"
#include "figures.h"
#include "findings.h"

#define ARCHIVE "tests/fixtures/h200-cudnn914"

typedef struct two {
    compare_archive a, b;
    compare_data m;
} two;

static void load_two(two *p)
{
    char err[1024];
    cr_assert_eq(compare_load(&p->a, ARCHIVE, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(compare_load(&p->b, ARCHIVE, err, sizeof err), EXIT_OK, "%s", err);
}

static void build(two *p)
{
    char err[1024];
    compare_archive *in[2] = {&p->a, &p->b};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT, .formats = FIG_PNG};
    cr_assert_eq(compare_build(&p->m, in, 2, &opt, err, sizeof err), EXIT_OK, "%s", err);
}

static void free_two(two *p)
{
    compare_free(&p->m);
    compare_archive_free(&p->a);
    compare_archive_free(&p->b);
}

static const kernel_diff *diff_of(const two *p, const char *variant)
{
    for (int v = 0; v < p->m.n_variants; v++)
        if (!strcmp(p->m.variants[v].name, variant))
            return &p->m.variants[v].diff[1];
    cr_assert_fail("no variant %s", variant);
    return NULL;
}

Test(compare_findings, matched_by_id_not_by_wording)
{
    static two p;
    load_two(&p);
    /* The same id in other words (a number moved to the front, the name gone): the same finding. */
    variant_analysis *vb = &p.b.a.v[0];
    cr_assert(vb->n_findings > 0);
    snprintf(vb->meta[0].text, sizeof vb->meta[0].text, "reworded: 12 of them");
    snprintf(vb->findings[0], sizeof vb->findings[0], "reworded: 12 of them");
    build(&p);
    const kernel_diff *d = diff_of(&p, vb->result->name);
    cr_expect_eq(d->n_only_base + d->n_only_other + d->n_gap_base + d->n_gap_other, 0);
    compare_free(&p.m);

    /* Another id with the baseline's words: one finding of each side only. */
    char words[640];
    snprintf(words, sizeof words, "%s", p.a.a.v[0].findings[0]);
    snprintf(vb->meta[0].id, sizeof vb->meta[0].id, "another_finding");
    snprintf(vb->findings[0], sizeof vb->findings[0], "%s", words);
    build(&p);
    d = diff_of(&p, vb->result->name);
    cr_expect_eq(d->n_only_base, 1);
    cr_expect_eq(d->n_only_other, 1);
    cr_expect_str_eq(d->only_base[0], p.a.a.v[0].findings[0]);
    free_two(&p);
}

Test(compare_findings, untestable_where_the_other_run_lacks_the_record)
{
    static two p;
    load_two(&p);
    /* A finding that needs the expected operation count, absent from a side that records none. */
    int vi = -1, k = -1;
    for (int i = 0; i < p.a.a.n && vi < 0; i++)
        for (int j = 0; j < p.a.a.v[i].n_findings; j++)
            if (strstr(p.a.a.v[i].meta[j].needs, "expected_ops"))
                vi = i, k = j;
    cr_assert(vi >= 0, "the archive has a finding that needs expected_ops");
    variant_analysis *vb = &p.b.a.v[vi];
    p.b.r.variants[vi].expected_ops = -1;
    for (int j = k; j + 1 < vb->n_findings; j++) { /* the other side has no such finding */
        vb->meta[j] = vb->meta[j + 1];
        memcpy(vb->findings[j], vb->findings[j + 1], sizeof vb->findings[j]);
    }
    vb->n_findings--;
    build(&p);
    const kernel_diff *d = diff_of(&p, vb->result->name);
    cr_expect_eq(d->n_only_base, 0);
    cr_assert_eq(d->n_gap_base, 1);
    cr_expect_str_eq(d->gap_base[0].missing, "no expected operation count");
    free_two(&p);
}
