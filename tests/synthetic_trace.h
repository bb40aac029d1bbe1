/* Synthetic inputs for the tests of untrusted input (tests/io/bounded_reads.c,
 * tests/io/archive_checks.c, tests/docs/escape_targets.c): temporary folders, a minimal
 * consistent trace.json whose API call and kernel arguments a test replaces one at a time,
 * and the binary run on them. Nothing here was recorded. */
#ifndef ATTNPROF_TEST_SYNTHETIC_TRACE_H
#define ATTNPROF_TEST_SYNTHETIC_TRACE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "slurp.h"
#include "trace.h"

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline char *temp_dir(void)
{
    char tmpl[] = "/tmp/attnprof-hardening-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    return strdup(tmpl);
}

static inline char *path_in(const char *dir, const char *name)
{
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    cr_assert_eq(fclose(f), 0);
}

/* The text of a minimal consistent attnprof trace.json: one forward of variant "v",
 * one launch, one kernel; `kernel_args` and `api_args` are spliced in. */
static inline char *small_trace(const char *api_args, const char *kernel_args, const char *kernel_name)
{
    char *s = NULL;
    cr_assert_geq(asprintf(&s,
                           "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H200\","
                           "\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}],\"traceEvents\":["
                           "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"attn_fwd\",\"ts\":10,\"dur\":100,"
                           "\"pid\":1,\"tid\":1,\"args\":{\"variant\":\"v\",\"iteration\":0}},"
                           "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":20,\"dur\":5,"
                           "\"pid\":1,\"tid\":1,\"args\":{%s}},"
                           "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"ts\":30,\"dur\":10,\"pid\":0,"
                           "\"tid\":7,\"args\":{%s}}],\"baseTimeNanoseconds\":1000}",
                           api_args, kernel_name, kernel_args),
                  0);
    return s;
}

#define API_OK "\"correlation\":7"
#define KERNEL_OK \
    "\"correlation\":7,\"device\":0,\"stream\":7,\"grid\":[1,1,1],\"block\":[128,1,1],\"registers per thread\":32"

static inline int read_trace_text(const char *text, char *err, size_t errlen)
{
    char *dir = temp_dir(), *p = path_in(dir, "trace.json");
    write_text(p, text);
    trace t;
    int rc = trace_read_json(&t, p, err, errlen);
    if (rc == 0)
        trace_free(&t);
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
    return rc;
}

/* Runs `attnprof ARGS` (a shell fragment); returns its exit status and its stdout
 * (malloc'd) in *out. */
static inline int run_cli(const char *args, char **out)
{
    const char *bin = getenv("ATTNPROF_BIN") ? getenv("ATTNPROF_BIN") : "build/attnprof";
    char outf[] = "/tmp/attnprof-hardening-out-XXXXXX";
    close(mkstemp(outf));
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "ATTNPROF_PDF=0 timeout 120 %s %s >%s 2>&1", bin, args, outf), 0);
    int st = system(cmd);
    free(cmd);
    *out = slurp(outf);
    unlink(outf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline char *file_of(const char *dir, const char *name)
{
    char *p = path_in(dir, name), *text = slurp(p);
    cr_assert_not_null(text, "%s", p);
    free(p);
    return text;
}

#endif
