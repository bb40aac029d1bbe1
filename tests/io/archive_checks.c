/* An archive that contradicts itself is called inconsistent, one line naming what: trace
 * events a recording cannot hold, duplicate and misplaced events, run.json against itself
 * and against trace.json, counters out of range, and import's orphans and contradictions.
 * Each case is synthetic (tests/synthetic_trace.h) or an H200 fixture with one stated
 * change. No GPU needed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"
#include "counters.h"
#include "escape.h"
#include "exit_codes.h"
#include "fixture.h"
#include "input.h"
#include "synthetic_trace.h"

/* ==== 3. consistency ========================================================= */

/* Each event of a synthetic trace that a real recording cannot hold, one at a time. */
Test(consistency, trace_events_that_contradict)
{
    static const struct {
        const char *api, *kernel, *expect;
    } cases[] = {
        /* a kernel whose correlation matches no call (was: 0.0 µs, "the cost moved to the CPU") */
        {API_OK, "\"correlation\":8,\"device\":0,\"stream\":7", "which no API call has"},
        /* correlation 2^32 + 7, cut to 7 before */
        {API_OK, "\"correlation\":4294967303,\"device\":0,\"stream\":7", "args.correlation: out of range"},
        /* fractional and string-typed kernel fields (were read as 0) */
        {API_OK, KERNEL_OK ",\"shared memory\":12.5", "args.shared memory: expected a whole number, not a fraction"},
        {API_OK, KERNEL_OK ",\"shared memory\":\"12\"", "args.shared memory: expected a whole number"},
        {API_OK, "\"correlation\":\"7\",\"device\":0", "args.correlation: expected a whole number"},
        {"\"correlation\":7.5", KERNEL_OK, "args.correlation: expected a whole number, not a fraction"},
        {API_OK, "\"correlation\":7,\"device\":0,\"stream\":7,\"grid\":[1.5,1,1]", "args.grid"},
        {API_OK, "\"correlation\":7,\"device\":0,\"stream\":7,\"block\":[\"128\",1,1]", "args.block"},
        /* huge numbers: no float->int overflow, an error naming the field */
        {API_OK, KERNEL_OK ",\"bytes\":1e300", "args.bytes: expected a whole number"},
        {API_OK, KERNEL_OK ",\"est. achieved occupancy %\":1e300", "occupancy %: expected a number from 0 to 100"},
        {API_OK, KERNEL_OK ",\"stream\":-1e300", "args.stream"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        char *s = small_trace(cases[i].api, cases[i].kernel, "k");
        cr_assert_neq(read_trace_text(s, err, sizeof err), 0, "case %zu accepted", i);
        cr_assert(strstr(err, cases[i].expect), "case %zu: %s", i, err);
        free(s);
    }
}

static void trace_fails(trace *t, const char *expect)
{
    trace_sort(t);
    char err[512] = "";
    cr_assert_neq(trace_check(t, err, sizeof err), 0, "accepted, expected: %s", expect);
    cr_assert(strstr(err, "inconsistent") && strstr(err, expect), "%s", err);
}

/* On the H200 fixture, one change each. */
Test(consistency, duplicate_and_misplaced_events)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    char err[512];
    cr_assert_eq(trace_check(&f.t, err, sizeof err), 0, "%s", err);
    /* every event with one correlation id (was: "5 GPU operations per forward where 1 were expected") */
    trace t;
    cr_assert_eq(trace_read_json(&t, FIXTURE_4VAR "/trace.json", err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < t.n_ops; i++)
        t.ops[i].correlation = 1;
    for (size_t i = 0; i < t.n_apis; i++)
        t.apis[i].correlation = 1;
    trace_fails(&t, "both have correlation id 1");
    trace_free(&t);
    /* a kernel event listed twice */
    cr_assert_eq(trace_read_json(&t, FIXTURE_4VAR "/trace.json", err, sizeof err), 0, "%s", err);
    size_t k = 0;
    while (t.ops[k].kind != GPU_KERNEL)
        k++;
    gpu_op copy = t.ops[k];
    trace_add_op(&t, &copy);
    trace_fails(&t, "an event listed twice?");
    trace_free(&t);
    /* a kernel that starts before its launch call */
    cr_assert_eq(trace_read_json(&t, FIXTURE_4VAR "/trace.json", err, sizeof err), 0, "%s", err);
    const api_call *l = trace_launcher(&t, &t.ops[k]);
    cr_assert_not_null(l);
    int64_t dur = t.ops[k].end_ns - t.ops[k].start_ns;
    t.ops[k].start_ns = l->start_ns - 1000;
    t.ops[k].end_ns = t.ops[k].start_ns + dur;
    trace_fails(&t, "before its launch call");
    trace_free(&t);
    fixture_free(&f);
}

/* run.json's own contradictions, written by the writer and read back. */
Test(consistency, run_json_contradictions)
{
    char *dir = temp_dir(), *p = path_in(dir, "run.json");
    static const char *const expect[] = {
        "are both named naive", "status \"ok\" with rel_error", "expected a number from 0 to 1e+30",
        "\"skipped\" (it did not run) but has measured numbers", "rel_error: expected a number from 0"};
    for (int c = 0; c < 5; c++) {
        fixture f;
        fixture_load(&f, FIXTURE_4VAR);
        variant_result *v = &f.r.variants[1];
        switch (c) {
        case 0: snprintf(v->name, sizeof v->name, "%s", f.r.variants[0].name); break;
        case 1: v->rel_error = 10 * f.r.rel_error_threshold; break;
        case 2: v->rel_error = 1e308; break;
        case 3: v->status = VARIANT_SKIPPED; break;
        case 4: v->rel_error = -1e-3; break;
        }
        char err[512] = "";
        cr_assert_eq(run_info_write_json(&f.r, p, err, sizeof err), 0, "%s", err);
        run_info back;
        cr_assert_neq(run_info_read_json(&back, p, err, sizeof err), 0, "case %d accepted", c);
        cr_assert(strstr(err, expect[c]), "case %d: %s", c, err);
        fixture_free(&f);
    }
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
}

/* run.json against trace.json. */
Test(consistency, run_json_against_trace)
{
    static const char *const expect[] = {"iters = 0, but trace.json holds 4 forwards",
                                         "\"skipped\" (it did not run), but trace.json holds 4",
                                         "differ in SM count", "differ in name"};
    for (int c = 0; c < 4; c++) {
        fixture f;
        fixture_load(&f, FIXTURE_4VAR);
        analysis_free(&f.a);
        variant_result *v = &f.r.variants[0];
        switch (c) {
        case 0: f.r.iters = 0; break;
        case 1:
            v->status = VARIANT_SKIPPED;
            v->rel_error = v->event_us_cupti = v->event_us_no_cupti = v->host_us_cupti = v->host_us_no_cupti = NAN;
            break;
        case 2: f.r.device.sm_count = 100; break;
        case 3: snprintf(f.r.device.name, sizeof f.r.device.name, "NVIDIA A100"); break;
        }
        char err[512] = "";
        cr_assert_neq(analysis_build(&f.a, &f.t, &f.r, err, sizeof err), 0, "case %d accepted", c);
        cr_assert(strstr(err, "inconsistent") && strstr(err, expect[c]), "case %d: %s", c, err);
        trace_free(&f.t);
    }
}

/* counters.json: ±1e308, strings, negatives and percentages over 100 (were printed
 * as 300-digit numbers and nan%). */
Test(consistency, counters_values_out_of_range)
{
    char *dir = temp_dir(), *p = path_in(dir, "counters.json");
    static const struct {
        const char *metric, *value, *expect;
    } cases[] = {
        {"dram__bytes_read.sum", "1e308", "dram__bytes_read.sum: out of range (0 to 1e+18)"},
        {"dram__bytes_read.sum", "-1e308", "out of range"},
        {"gpu__time_duration.sum", "-5", "out of range"},
        {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "250", "out of range (0 to 105)"},
        {"dram__bytes_read.sum", "\"123456789\"", "metrics: numbers or null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        cr_assert_geq(asprintf(&text,
                               "{\"counters_version\":1,\"meta\":{\"status\":\"ok\",\"metrics\":[\"%s\"]},"
                               "\"ranges\":[{\"variant\":\"naive\",\"kind\":\"kernel\",\"index\":0,\"name\":\"k\","
                               "\"metrics\":{\"%s\":%s}}]}",
                               cases[i].metric, cases[i].metric, cases[i].value),
                      0);
        write_text(p, text);
        counters_set cs;
        char err[512] = "";
        cr_assert_neq(counters_read_json(&cs, p, err, sizeof err), 0, "case %zu accepted", i);
        cr_assert(strstr(err, cases[i].expect), "case %zu: %s", i, err);
        free(text);
    }
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
}

/* A negative pid and device (an import of a hostile Kineto trace) are written
 * without shifting a negative value (undefined; `make sanitize` catches it). */
Test(consistency, negative_pid_and_device_written)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    for (size_t i = 0; i < f.t.n_ops; i++)
        f.t.ops[i].device = -3;
    for (size_t i = 0; i < f.t.n_apis; i++)
        f.t.apis[i].pid = -7;
    for (size_t i = 0; i < f.t.n_ranges; i++)
        f.t.ranges[i].pid = -7;
    char *dir = temp_dir(), *p = path_in(dir, "trace.json"), err[512] = "";
    cr_assert_eq(trace_write_json(&f.t, p, err, sizeof err), 0, "%s", err);
    trace back;
    cr_assert_eq(trace_read_json(&back, p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.ops[0].device, -3);
    trace_free(&back);
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
    fixture_free(&f);
}

/* import: a kernel whose launch is not in the file is left out and counted (real
 * traces start mid-stream); a contradiction is refused before anything is written. */
Test(consistency, import_drops_orphans_refuses_contradictions)
{
    char *dir = temp_dir(), *p = path_in(dir, "k.json"), *out = NULL, *args = NULL;
    char *s = small_trace(API_OK,
                          KERNEL_OK "}},{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"ts\":50,"
                                    "\"dur\":1,\"pid\":0,\"tid\":7,\"args\":{\"correlation\":8,\"device\":0",
                          "k");
    write_text(p, s);
    free(s);
    cr_assert_geq(asprintf(&args, "import '%s' -o '%s/a' -q", p, dir), 0);
    cr_assert_eq(run_cli(args, &out), 0, "%s", out);
    free(out), free(args);
    char *a = path_in(dir, "a"), *run = file_of(a, "run.json");
    cr_assert_not_null(strstr(run, "whose launch call is not in the trace"), "%s", run);
    free(run);
    /* two runtime calls with one id */
    char *api2 = NULL;
    cr_assert_geq(asprintf(&api2, API_OK "}},{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                                         "\"ts\":26,\"dur\":1,\"pid\":1,\"tid\":1,\"args\":{" API_OK),
                  0);
    s = small_trace(api2, KERNEL_OK, "k");
    write_text(p, s);
    cr_assert_geq(asprintf(&args, "import '%s' -o '%s/b' -q", p, dir), 0);
    cr_assert_eq(run_cli(args, &out), EXIT_BAD_ARCHIVE, "%s", out);
    cr_assert(strstr(out, "inconsistent: API calls cudaLaunchKernel") && strstr(out, "correlation id 7"), "%s", out);
    struct stat sb;
    char *b = path_in(dir, "b");
    cr_assert_neq(stat(b, &sb), 0, "nothing written");
    free(b), free(out), free(args), free(s), free(api2), free(a), free(p);
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "rm -rf '%s'", dir), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd), free(dir);
}
