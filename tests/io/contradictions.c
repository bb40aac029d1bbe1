/* Archives that contradict themselves are refused as inconsistent (EXIT_BAD_ARCHIVE, one
 * line naming the field), never rendered: each case is a fixture copied into a temporary
 * folder with one field changed in the test. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "archive_read.h"
#include "exit_codes.h"
#include "run_cli.h"
#include "run_info.h"
#include "slurp.h"
#include "trace.h"

/* A copy of fixture `name` (run.json, trace.json) in a new temporary folder. */
static char *copy_fixture(const char *name)
{
    char *dir = strdup("/tmp/attnprof-contra-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    const char *files[] = {"run.json", "trace.json"};
    for (int i = 0; i < 2; i++) {
        char from[512], to[512];
        snprintf(from, sizeof from, "tests/fixtures/%s/%s", name, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        size_t n = 0;
        char *text = slurp_len(from, &n);
        cr_assert_not_null(text, "%s", from);
        FILE *f = fopen(to, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(text, 1, n, f), n);
        fclose(f);
        free(text);
    }
    return dir;
}

/* Replaces the first `from` in dir/file by `to` (the case's one change). */
static void edit(const char *dir, const char *file, const char *from, const char *to)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = slurp(path);
    cr_assert_not_null(text);
    char *at = strstr(text, from);
    cr_assert_not_null(at, "%s holds no %s", path, from);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    fclose(f);
    free(text);
}

static void remove_copy(char *dir)
{
    char p[600];
    const char *files[] = {"run.json", "trace.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    free(dir);
}

/* archive_read then analysis_build, as every command does: EXIT_OK or the refusal in err. */
static int read_and_analyse(const char *dir, char *err, size_t errlen)
{
    trace t;
    run_info r;
    int rc = archive_read(dir, &t, &r, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    analysis a;
    rc = analysis_build(&a, &t, &r, err, errlen) == 0 ? EXIT_OK : EXIT_BAD_ARCHIVE;
    if (rc == EXIT_OK)
        analysis_free(&a);
    trace_free(&t);
    return rc;
}

static void assert_refused(const char *fixture, const char *file, const char *from, const char *to,
                           const char *says)
{
    char *dir = copy_fixture(fixture), err[1024] = "";
    cr_assert_eq(read_and_analyse(dir, err, sizeof err), EXIT_OK, "the unchanged copy reads: %s", err);
    edit(dir, file, from, to);
    err[0] = '\0';
    cr_assert_eq(read_and_analyse(dir, err, sizeof err), EXIT_BAD_ARCHIVE, "%s → %s was read", from, to);
    cr_assert(strstr(err, says), "%s → %s: %s", from, to, err);
    cr_assert_null(strchr(err, '\n'), "one line: %s", err);
    remove_copy(dir);
}

/* Kineto's clock origin as a fraction or a string was ignored: the trace dated 1970-03-03. */
Test(contradictions, base_time_as_a_float_or_a_string_is_refused)
{
    const char *base = "\"baseTimeNanoseconds\":1795983530123591510";
    assert_refused("h200-4var", "trace.json", base, "\"baseTimeNanoseconds\":1795983530123591510.5",
                   "baseTimeNanoseconds: expected a whole number");
    assert_refused("h200-4var", "trace.json", base, "\"baseTimeNanoseconds\":\"1795983530123591510\"",
                   "baseTimeNanoseconds: expected a whole number");
}

/* A CUPTI-off time of 0 printed "+inf%" in the overhead table. */
Test(contradictions, a_zero_cupti_probe_is_refused)
{
    assert_refused("h200-4var", "run.json", "\"event_us_no_cupti\": 58.60799924", "\"event_us_no_cupti\": 0",
                   "event_us_no_cupti of 0 us");
}

/* Two "shape" keys: which holds cannot be told (jansson kept the last one silently). */
Test(contradictions, a_duplicate_shape_key_is_refused)
{
    assert_refused("h200-4var", "run.json", "\"tool_version\"",
                   "\"shape\": {\"batch\": 1, \"heads\": 1, \"seq\": 64, \"dim\": 64}, \"tool_version\"",
                   "a key appears twice");
}

/* sm_count 0 against a trace of 132 SMs rendered occupancy and roofs of nothing. */
Test(contradictions, an_sm_count_other_than_the_traces_is_refused)
{
    assert_refused("h200-4var", "run.json", "\"sm_count\": 132", "\"sm_count\": 0", "differ in SM count");
    assert_refused("h200-4var", "run.json", "\"sm_count\": 132", "\"sm_count\": 114", "differ in SM count");
}

/* A forward of another process has no launches of its own: it entered the minimum as 0.0 us. */
Test(contradictions, a_forward_in_another_process_is_refused)
{
    assert_refused("h200-4var", "trace.json", "\"name\":\"attn_fwd\",\"pid\":549",
                   "\"name\":\"attn_fwd\",\"pid\":550", "is in process 550, but the run is process 549");
}

/* A kernel 11 days after its launch (the bound: TRACE_MAX_LAUNCH_LAG_NS, one hour). */
Test(contradictions, a_kernel_long_after_its_launch_is_refused)
{
    assert_refused("h200-4var", "trace.json", "\"ts\":28944.118,\"dur\":1.249", "\"ts\":950400028944.118,\"dur\":1.249",
                   "after its launch call");
    /* within the bound it is a late kernel, not a contradiction */
    char *dir = copy_fixture("h200-4var"), err[1024] = "";
    edit(dir, "trace.json", "\"ts\":28944.118,\"dur\":1.249", "\"ts\":29944.118,\"dur\":1.249");
    cr_assert_eq(read_and_analyse(dir, err, sizeof err), EXIT_OK, "%s", err);
    remove_copy(dir);
}

/* run.json describes one GPU; a kernel on device 3 would be judged against its limits. */
Test(contradictions, a_kernel_on_a_device_run_json_does_not_describe_is_refused)
{
    assert_refused("h200-4var", "trace.json", "\"External id\":1221,\"device\":0",
                   "\"External id\":1221,\"device\":3", "on device 3");
}

/* A forward's sample (samples.csv's row) in a pass the plan does not have. */
Test(contradictions, a_sample_outside_the_plans_passes_is_refused)
{
    assert_refused("h200-gqa", "trace.json", "\"iteration\": 0, \"pass\": 0", "\"iteration\": 0, \"pass\": 4",
                   "is in pass 4, but run.json's measurement has replicates = 1");
}

/* The command line: one line, exit 6, nothing rendered. */
Test(contradictions, report_refuses_with_one_line, .timeout = 60)
{
    char *dir = copy_fixture("h200-4var");
    edit(dir, "run.json", "\"sm_count\": 132", "\"sm_count\": 0");
    char args[600];
    snprintf(args, sizeof args, "report %s -q", dir);
    cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s", err_text);
    cr_assert(strstr(err_text, "SM count"), "%s", err_text);
    cr_assert_eq(strchr(err_text, '\n'), err_text + strlen(err_text) - 1, "one line: %s", err_text);
    char p[700];
    snprintf(p, sizeof p, "%s/report.md", dir);
    struct stat st;
    cr_assert_neq(stat(p, &st), 0, "nothing rendered");
    remove_copy(dir);
}
