/* analysis/finding: the finding table (one row per kind, ids once), the phrase from
 * the row's template and the numbers, the rank rule, and the one shape of every
 * finding the recorded archives give. Assertions on ids and numbers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "fixture.h"
#include "predict.h"

#include <unistd.h>

/* A recorded archive with its counters when it has them, and every finding derived. */
static void load_all(fixture *f, const char *dir)
{
    char path[512], err[256];
    fixture_load(f, dir);
    snprintf(path, sizeof path, "%s/counters.json", dir);
    if (access(path, F_OK) == 0)
        cr_assert_eq(counters_read_json(&f->r.counters, path, err, sizeof err), 0, "%s", err);
    predict_findings(&f->a);
}

static void free_all(fixture *f)
{
    counters_free(&f->r.counters);
    fixture_free(f);
}

Test(finding_table, one_row_per_kind_with_a_unique_id_and_a_phrase)
{
    for (int k = 0; k < FK_COUNT; k++) {
        const finding_row *r = &finding_table[k];
        cr_assert_eq(r->kind, k, "row %d holds kind %d", k, r->kind);
        cr_assert(r->id && r->id[0] && strlen(r->id) < sizeof((finding *)0)->id, "row %d", k);
        cr_assert(r->needs && r->phrase && r->phrase[0], "%s", r->id);
        cr_assert_eq(finding_kind_of_id(r->id), k, "%s is the id of one row only", r->id);
    }
    cr_assert_eq(finding_kind_of_id("no_such_finding"), ATTN_NONE);
    /* The first row of each source derives; a NULL derive follows a row of its source. */
    cr_assert(finding_has_derive(FK_VARIANT_UNAVAILABLE) && finding_has_derive(FK_ATTENTION_SHARE) &&
              finding_has_derive(FK_ROOF_SHARE_INCONSISTENT));
}

static finding make(finding_kind kind, double us, double cuda_us)
{
    finding f;
    finding_init(&f, kind, "sentence");
    if (isfinite(us))
        findings_number(&f, "us_per_forward", us, "us");
    finding_finish(&f, cuda_us);
    return f;
}

Test(finding_table, phrase_from_the_template_and_the_numbers)
{
    finding f;
    finding_init(&f, FK_HIDDEN_MEMCPY, "a 256 MiB Memcpy DtoD inside every forward");
    findings_number(&f, "bytes", 268435456, "B");
    findings_number(&f, "us_per_forward", 126.8, "us");
    findings_number(&f, "pct_of_cuda_time", 20.2, "%");
    finding_finish(&f, 634);
    cr_expect_str_eq(f.phrase, "hidden 256 MiB Memcpy, 20% of CUDA time");
    cr_expect_float_eq(f.share, 126.8 / 634, 1e-12);
    cr_expect(isnan(f.departure));

    /* An optional part goes when its number is missing; the rest stays. */
    finding_init(&f, FK_FP32_CUDA_CORE_GEMM, "2 GEMMs in FP32");
    findings_number(&f, "gemms", 2, "");
    finding_finish(&f, NAN);
    cr_expect_str_eq(f.phrase, "2 FP32 CUDA-core GEMMs");
    findings_number(&f, "ratio", 3.1, "x");
    finding_finish(&f, NAN);
    cr_expect_str_eq(f.phrase, "2 FP32 CUDA-core GEMMs, 3.10× tensor-core time");

    /* A required number missing: the id stands in, never a placeholder. */
    finding_init(&f, FK_THROTTLED_FORWARDS, "x");
    findings_number(&f, "throttled", 3, "");
    finding_finish(&f, NAN);
    cr_expect_str_eq(f.phrase, "throttled_forwards");

    /* The departure from the prediction, signed, as a percent. */
    finding_init(&f, FK_PREDICTION_MISSED, "prediction missed");
    findings_number(&f, "departure", -0.28, "");
    finding_finish(&f, NAN);
    cr_expect_str_eq(f.phrase, "prediction missed by -28%");
    cr_expect_float_eq(f.departure, 0.28, 1e-12);
}

Test(finding_table, rank_is_severity_then_share_then_departure)
{
    variant_analysis va;
    memset(&va, 0, sizeof va);
    va.meta[va.n_findings++] = make(FK_LAUNCH_API, NAN, 100);          /* info, no share */
    va.meta[va.n_findings++] = make(FK_MASK_REBUILD, 10, 100);         /* notice, 10% */
    va.meta[va.n_findings++] = make(FK_FUSED_KERNEL, 90, 100);         /* info, 90% */
    va.meta[va.n_findings++] = make(FK_HIDDEN_MEMCPY, 30, 100);        /* notice, 30% */
    va.meta[va.n_findings++] = make(FK_DROPPED_RECORDS, NAN, 100);     /* warning */
    va.meta[va.n_findings++] = make(FK_HEAD_DIM_PADDING, NAN, 100);    /* notice, no share */
    finding missed = make(FK_PREDICTION_MISSED, NAN, 100);             /* notice, departure only */
    findings_number(&missed, "departure", 0.5, "");
    finding_finish(&missed, 100);
    va.meta[va.n_findings++] = missed;
    int idx[MAX_FINDINGS];
    int n = findings_ranked(&va, idx, MAX_FINDINGS);
    cr_assert_eq(n, 7);
    static const char *want[] = {"dropped_records", "hidden_memcpy", "mask_rebuild", "prediction_missed",
                                 "head_dim_padding", "fused_kernel", "launch_api"};
    for (int i = 0; i < n; i++)
        cr_expect_str_eq(va.meta[idx[i]].id, want[i], "rank %d", i);
    /* The top ones only: the same order, cut. */
    cr_assert_eq(findings_ranked(&va, idx, 2), 2);
    cr_expect_str_eq(va.meta[idx[1]].id, "hidden_memcpy");
}

/* Every finding of an archive has the one shape: its row's id and needs, a phrase of
 * at most 9 words that is not the id standing in, and its Markdown beside it. */
static void check_shape(const analysis *a)
{
    int seen = 0;
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        for (int k = 0; k < va->n_findings; k++, seen++) {
            const finding *f = &va->meta[k];
            const finding_row *row = finding_row_of(f->kind);
            cr_assert(row, "%s: a kind", f->id);
            cr_expect_str_eq(f->id, row->id);
            cr_expect_str_eq(f->needs, row->needs, "%s", f->id);
            cr_expect(f->text[0] && va->findings[k][0], "%s: a sentence", f->id);
            cr_expect(f->phrase[0] && strcmp(f->phrase, f->id), "%s: phrase '%s'", f->id, f->phrase);
            int words = 1;
            for (const char *p = f->phrase; *p; p++)
                words += *p == ' ';
            cr_expect(words <= 9, "%s: '%s' is %d words", f->id, f->phrase, words);
        }
    }
    cr_assert(seen > 0);
}

Test(finding_table, every_recorded_finding_has_the_one_shape)
{
    static const char *dirs[] = {"tests/fixtures/h200-6var", "tests/fixtures/h200-counters",
                                 "tests/fixtures/h200-kineto", "tests/fixtures/h200-rep3-a"};
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
        static fixture f;
        memset(&f, 0, sizeof f);
        load_all(&f, dirs[d]);
        check_shape(&f.a);
        free_all(&f);
    }
}

Test(finding_table, the_counters_findings_carry_numbers)
{
    static fixture f;
    load_all(&f, "tests/fixtures/h200-counters");
    int missed = 0, bandwidth = 0;
    for (int i = 0; i < f.a.n; i++) {
        const finding *m = findings_of_kind(&f.a.v[i], FK_PREDICTION_MISSED);
        if (m) {
            missed++;
            double p = findings_value(m, "predicted"), x = findings_value(m, "measured");
            cr_expect_float_eq(findings_value(m, "departure"), x / p - 1, 1e-12, "%s", f.a.v[i].result->name);
            cr_expect_float_eq(m->departure, fabs(x / p - 1), 1e-12);
        }
        const finding *b = findings_of_kind(&f.a.v[i], FK_MEMCPY_BANDWIDTH);
        if (b) {
            bandwidth++;
            cr_expect(findings_value(b, "bytes_each_way") > 0 && findings_value(b, "tbps") > 0,
                      "a copy moves a positive number of bytes: %g", findings_value(b, "bytes_each_way"));
        }
    }
    cr_expect(missed > 0 && bandwidth > 0, "%d missed, %d bandwidth", missed, bandwidth);
    free_all(&f);
}

/* A Memcpy's counter traffic is the forward's range less its kernels' ranges: where
 * that is negative (the Kineto fixture), no bandwidth is claimed. */
Test(finding_table, no_bandwidth_from_a_negative_copy)
{
    static fixture f;
    load_all(&f, "tests/fixtures/h200-kineto");
    for (int i = 0; i < f.a.n; i++) {
        const finding *b = findings_of_kind(&f.a.v[i], FK_MEMCPY_BANDWIDTH);
        cr_expect(!b || findings_value(b, "bytes_each_way") > 0, "%s: %s", f.a.v[i].result->name, b ? b->text : "");
    }
    free_all(&f);
}

/* The sweep's short phrase: the exponent in Unicode (S⁰·⁹⁸, not S^0.98), and "at fixed B·S"
 * exactly when the sweep held B·S fixed (--tokens); a count agrees with its noun. */
Test(finding_table, sweep_scaling_phrase_says_when_b_s_was_fixed)
{
    finding f;
    finding_init(&f, FK_SWEEP_SCALING, "naive: time per forward grows as S0.98");
    snprintf(f.subject, sizeof f.subject, "naive");
    findings_number(&f, "exponent", 0.98, "");
    finding_finish(&f, NAN);
    cr_expect_str_eq(f.phrase, "naive time grows as S\u2070\u00b7\u2079\u2078");
    findings_number(&f, "tokens", 32768, "");
    finding_finish(&f, NAN);
    cr_expect_str_eq(f.phrase, "naive time grows as S\u2070\u00b7\u2079\u2078 at fixed B\u00b7S = 32768");

    finding_init(&f, FK_FP32_CUDA_CORE_GEMM, "1 GEMM in FP32");
    findings_number(&f, "gemms", 1, "");
    finding_finish(&f, NAN);
    cr_expect_str_eq(f.phrase, "1 FP32 CUDA-core GEMM");
}
