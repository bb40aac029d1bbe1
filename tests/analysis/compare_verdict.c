/* compare's verdicts on archives recorded on the H200 (bench/measure_h200.sh, 2026-12-02):
 * two identical batches of three passes compare same (or ambiguous) everywhere, cuDNN 9.14 ->
 * 9.19 still comes out faster, --fail-on gates on it, a warm run and a cold one are not
 * compared unless asked, and an archive's samples are its recorded forwards. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "exit_codes.h"
#include "run_cli.h"

#define FX "tests/fixtures/"

/* Column `col` (0-based) of a CSV line whose fields hold no comma inside quotes. */
static void csv_field(const char *line, int col, char *out, size_t n)
{
    const char *p = line;
    for (int c = 0; c < col && p; c++)
        p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    size_t len = p ? strcspn(p, ",\n") : 0;
    snprintf(out, n, "%.*s", (int)len, p ? p : "");
    if (out[0] == '"') { /* "naive" -> naive */
        memmove(out, out + 1, strlen(out));
        out[strcspn(out, "\"")] = '\0';
    }
}

/* The column of `name` in compare.csv's header. */
static int csv_column(const char *header, const char *name)
{
    char field[64];
    for (int c = 0; c < 64; c++) {
        csv_field(header, c, field, sizeof field);
        if (!field[0])
            return -1;
        if (!strcmp(field, name))
            return c;
    }
    return -1;
}

/* Runs compare A B into a fresh folder; each non-baseline row's (variant, verdict, cpu_verdict)
 * into rows (at most 16); returns the exit code. */
typedef struct verdict_row {
    char variant[32], verdict[16], cpu_verdict[16];
} verdict_row;

static int compare_rows(const char *a, const char *b, const char *extra, verdict_row *rows, int *n)
{
    char dir[] = "/tmp/attnprof-measured-XXXXXX";
    cr_assert(mkdtemp(dir));
    char args[1024];
    snprintf(args, sizeof args, "compare " FX "%s " FX "%s -o %s/c %s", a, b, dir, extra);
    int rc = attnprof(args);
    char path[256];
    snprintf(path, sizeof path, "%s/c/compare.csv", dir);
    FILE *f = fopen(path, "r");
    *n = 0;
    if (f) {
        char header[1024], line[1024];
        cr_assert(fgets(header, sizeof header, f));
        int cv = csv_column(header, "variant"), cb = csv_column(header, "baseline"),
            cd = csv_column(header, "verdict"), cc = csv_column(header, "cpu_verdict");
        cr_assert(cv >= 0 && cb >= 0 && cd >= 0 && cc >= 0, "compare.csv header: %s", header);
        while (fgets(line, sizeof line, f) && *n < 16) {
            char base[8];
            csv_field(line, cb, base, sizeof base);
            if (!strcmp(base, "1"))
                continue;
            csv_field(line, cv, rows[*n].variant, sizeof rows[*n].variant);
            csv_field(line, cd, rows[*n].verdict, sizeof rows[*n].verdict);
            csv_field(line, cc, rows[*n].cpu_verdict, sizeof rows[*n].cpu_verdict);
            (*n)++;
        }
        fclose(f);
    }
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    cr_assert_eq(system(rm), 0);
    return rc;
}

static int same_or_ambiguous(const char *v) { return !strcmp(v, "same") || !strcmp(v, "ambiguous"); }

Test(measured_h200, identical_batches_with_replicates_are_same_or_ambiguous_everywhere)
{
    verdict_row rows[16];
    int n;
    int rc = compare_rows("h200-rep3-a", "h200-rep3-b", "--fail-on slower,ambiguous", rows, &n);
    cr_assert_eq(n, 6, "six variants compared");
    for (int i = 0; i < n; i++) {
        cr_expect(same_or_ambiguous(rows[i].verdict), "%s CUDA time: %s", rows[i].variant, rows[i].verdict);
        cr_expect(same_or_ambiguous(rows[i].cpu_verdict), "%s CPU time: %s", rows[i].variant, rows[i].cpu_verdict);
    }
    /* Measured: every CUDA verdict is same, none ambiguous, so the gate lets it through. */
    for (int i = 0; i < n; i++)
        cr_expect_str_eq(rows[i].verdict, "same", "%s", rows[i].variant);
    cr_expect_eq(rc, EXIT_OK, "--fail-on slower,ambiguous: %s", err_text);
}

Test(measured_h200, cudnn_914_to_919_is_faster_and_the_gate_catches_the_reverse)
{
    verdict_row rows[16];
    int n;
    int rc = compare_rows("h200-rep3-cudnn914", "h200-rep3-cudnn919", "--fail-on slower", rows, &n);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(rows[0].verdict, "faster");
    cr_expect(same_or_ambiguous(rows[0].cpu_verdict), "CPU: %s", rows[0].cpu_verdict);
    cr_expect_eq(rc, EXIT_OK, "%s", err_text);
    rc = compare_rows("h200-rep3-cudnn919", "h200-rep3-cudnn914", "--fail-on slower", rows, &n);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(rows[0].verdict, "slower");
    cr_expect_eq(rc, EXIT_VERDICT_GATE, "9.19 as the baseline: 9.14 is slower, the gate fails the job");
    int lines = 0;
    for (const char *p = err_text; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 1, "one line: %s", err_text);
}

Test(measured_h200, a_warm_run_and_a_cold_one_are_compared_only_when_asked)
{
    verdict_row rows[16];
    int n;
    int rc = compare_rows("h200-rep3-a", "h200-l2cold", "", rows, &n);
    cr_expect_eq(rc, EXIT_L2_MISMATCH, "%s", err_text);
    cr_expect(strstr(err_text, "warm") && strstr(err_text, "cold"), "names both states: %s", err_text);
    cr_expect_eq(n, 0, "nothing written");
    rc = compare_rows("h200-rep3-a", "h200-l2cold", "--allow-l2-mismatch", rows, &n);
    cr_expect_eq(rc, EXIT_OK, "%s", err_text);
    cr_expect_eq(n, 6);
}

/* run.json's stop outcome per variant, trace.json's samples and samples.csv agree: each
 * variant's forwards are its rows, its passes are 0..2, and every sample holds a clock. */
Test(measured_h200, samples_are_the_recorded_forwards)
{
    char dir[] = "/tmp/attnprof-measured-XXXXXX", cmd[512], path[300];
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp -r " FX "h200-rep3-a %s/a", dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "report %s/a -q --format png", dir);
    cr_assert_eq(attnprof(cmd), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/a/run.json", dir);
    json_error_t je;
    json_t *run = json_load_file(path, 0, &je);
    cr_assert(run, "%s", je.text);
    json_t *m = json_object_get(run, "measurement");
    cr_assert_str_eq(json_string_value(json_object_get(m, "l2")), "warm");
    cr_assert_eq(json_integer_value(json_object_get(m, "replicates")), 3);
    snprintf(path, sizeof path, "%s/a/samples.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f, "samples.csv written");
    char header[512], line[512];
    cr_assert(fgets(header, sizeof header, f));
    int cv = csv_column(header, "variant"), cp = csv_column(header, "pass"), cs = csv_column(header, "sm_mhz");
    cr_assert(cv >= 0 && cp >= 0 && cs >= 0, "%s", header);
    int count[8] = {0}, max_pass = 0, no_clock = 0;
    size_t nv = json_array_size(json_object_get(run, "variants"));
    while (fgets(line, sizeof line, f)) {
        char v[32], p[8], sm[16];
        csv_field(line, cv, v, sizeof v);
        csv_field(line, cp, p, sizeof p);
        csv_field(line, cs, sm, sizeof sm);
        for (size_t i = 0; i < nv && i < 8; i++)
            if (!strcmp(v, json_string_value(json_object_get(json_array_get(json_object_get(run, "variants"), i), "name"))))
                count[i]++;
        if (atoi(p) > max_pass)
            max_pass = atoi(p);
        no_clock += atoi(sm) <= 0;
    }
    fclose(f);
    cr_expect_eq(max_pass, 2, "three passes: 0, 1, 2");
    cr_expect_eq(no_clock, 0, "every forward has its SM clock");
    for (size_t i = 0; i < nv && i < 8; i++) {
        json_t *v = json_array_get(json_object_get(run, "variants"), i);
        int forwards = (int)json_integer_value(json_object_get(json_object_get(v, "stop"), "forwards"));
        cr_expect_eq(count[i], forwards, "%s: %d rows, stop.forwards %d", json_string_value(json_object_get(v, "name")),
                     count[i], forwards);
        cr_expect_str_eq(json_string_value(json_object_get(json_object_get(v, "stop"), "reason")), "noise");
    }
    json_decref(run);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A variant that failed while its forwards were recorded keeps a stop outcome ("failed"),
 * under either rule: the archive stays readable and says so; an unknown reason is refused. */
Test(measured_h200, a_variant_that_failed_while_recording_reads_back)
{
    const char *reasons[] = {"failed", "bogus"};
    for (int k = 0; k < 2; k++) {
        char dir[] = "/tmp/attnprof-measured-XXXXXX", cmd[512], path[300];
        cr_assert(mkdtemp(dir));
        snprintf(cmd, sizeof cmd, "cp -r " FX "h200-l2cold %s/a", dir);
        cr_assert_eq(system(cmd), 0);
        snprintf(path, sizeof path, "%s/a/run.json", dir);
        json_error_t je;
        json_t *run = json_load_file(path, 0, &je);
        cr_assert(run, "%s", je.text);
        json_t *stop = json_object_get(json_array_get(json_object_get(run, "variants"), 0), "stop");
        json_object_set_new(stop, "reason", json_string(reasons[k]));
        cr_assert_eq(json_dump_file(run, path, JSON_INDENT(2)), 0);
        json_decref(run);
        snprintf(cmd, sizeof cmd, "report %s/a -q --format png", dir);
        int rc = attnprof(cmd);
        if (k == 0) {
            cr_expect_eq(rc, EXIT_OK, "%s", err_text);
            snprintf(path, sizeof path, "%s/a/report.md", dir);
            FILE *f = fopen(path, "r");
            cr_assert(f);
            static char md[1 << 20];
            md[fread(md, 1, sizeof md - 1, f)] = '\0';
            fclose(f);
            cr_expect(strstr(md, "the variant failed while its forwards were recorded"));
        } else {
            cr_expect_eq(rc, EXIT_BAD_ARCHIVE, "%s", err_text);
            cr_expect(strstr(err_text, "stop.reason"), "%s", err_text);
        }
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
    }
}
