/* Loads a committed H200 archive (trace.json + run.json) and its analysis. */
#ifndef ATTNPROF_TEST_FIXTURE_H
#define ATTNPROF_TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "analysis.h"
#include "counters_json.h"
#include "findings.h"
#include "prediction_json.h"
#include "run_json.h"

typedef struct fixture {
    trace t;
    run_info r;
    analysis a;
} fixture;

static inline void fixture_load(fixture *f, const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    cr_assert_eq(trace_read_json(&f->t, path, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/run.json", dir);
    cr_assert_eq(run_info_read_json(&f->r, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(analysis_build(&f->a, &f->t, &f->r, err, sizeof err), 0, "%s", err);
    findings_derive(&f->a);
}

static inline void fixture_free(fixture *f)
{
    analysis_free(&f->a);
    trace_free(&f->t);
}

/* Index of the finding of `va` that contains `needle`, or -1. */
static inline int finding_with(const variant_analysis *va, const char *needle)
{
    for (int i = 0; i < va->n_findings; i++)
        if (strstr(va->findings[i], needle))
            return i;
    return -1;
}

#define FIXTURE_4VAR "tests/fixtures/h200-4var"

#endif
