/* io/kineto_import and io/kineto_events on hostile or unusual traces built here: names that
 * decode to no UTF-8, steps that hold no launch, and traces of two different GPUs in one import. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exit_codes.h"
#include "kineto_import.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static int import_texts(const char *const *texts, int n, const import_options *o, trace *t, run_info *r, char *err,
                        size_t errlen)
{
    char paths[4][64];
    const char *files[4];
    for (int i = 0; i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "/tmp/attnprof-kimport-%d-%d.json", (int)getpid(), i);
        write_file(paths[i], texts[i]);
        files[i] = paths[i];
    }
    int rc = kineto_import(files, n, o, t, r, err, errlen);
    for (int i = 0; i < n; i++)
        unlink(paths[i]);
    return rc;
}

#define STEP(n, ts) "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" #n "\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":10}"
#define CALL(corr, ts) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #corr "}}"
#define KERNEL(name, corr, dev, ts) "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts ",\"dur\":2,\"args\":{\"correlation\":" #corr ",\"device\":" #dev "}}"
#define DEVICE(id, name, sms) "{\"id\":" #id ",\"name\":\"" name "\",\"totalGlobalMem\":1000,\"computeMajor\":9,\"computeMinor\":0,\"maxThreadsPerBlock\":1024,\"maxThreadsPerMultiprocessor\":2048,\"regsPerBlock\":65536,\"regsPerMultiprocessor\":65536,\"warpSize\":32,\"sharedMemPerBlock\":49152,\"sharedMemPerMultiprocessor\":233472,\"numSms\":" #sms ",\"sharedMemPerBlockOptin\":232448}"

Test(kineto_import, a_lone_escaped_surrogate_decodes_to_replacement_characters)
{
    const char *text = "{\"traceEvents\":[" STEP(0, 0) "," CALL(5, 1) "," KERNEL("bad\\udcffname", 5, 0, 4)
                       "],\"baseTimeNanoseconds\":0}";
    trace t;
    static run_info r;
    char err[512];
    import_options o = {.device = -1};
    cr_assert_eq(import_texts(&text, 1, &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(t.n_ops, 1);
    /* ED B3 BF (a surrogate, no UTF-8): each byte that starts no character is U+FFFD */
    cr_assert_str_eq(t.ops[0].name, "bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdname");
    trace_free(&t);
}

Test(kineto_import, steps_holding_no_launch_are_left_out_or_refused)
{
    /* step 1 holds no launch call: left out, counted */
    const char *some = "{\"traceEvents\":[" STEP(0, 0) "," STEP(1, 20) "," STEP(2, 40) "," CALL(1, 1) "," CALL(2, 41) ","
                       KERNEL("k", 1, 0, 4) "," KERNEL("k", 2, 0, 44) "],\"baseTimeNanoseconds\":0}";
    trace t;
    static run_info r;
    char err[512];
    import_options o = {.device = -1};
    cr_assert_eq(import_texts(&some, 1, &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    int forwards = 0, empty = -1;
    for (size_t i = 0; i < t.n_ranges; i++)
        forwards += t.ranges[i].iteration >= 0;
    for (int i = 0; i < r.variants[0].facts.n; i++)
        if (!strcmp(r.variants[0].facts.item[i].key, "empty_forwards"))
            empty = (int)r.variants[0].facts.item[i].number;
    cr_assert_eq(forwards, 2, "the two steps that launched work");
    cr_assert_eq(empty, 1);
    trace_free(&t);
    /* no step holds a launch (they ran before the steps): refused */
    const char *none = "{\"traceEvents\":[" STEP(0, 100) "," STEP(1, 120) "," CALL(1, 1) "," KERNEL("k", 1, 0, 4)
                       "],\"baseTimeNanoseconds\":0}";
    cr_assert_eq(import_texts(&none, 1, &o, &t, &r, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "holds the launch call"), "%s", err);
}

Test(kineto_import, two_different_gpus_in_one_import_are_refused_naming_device)
{
    const char *a = "{\"deviceProperties\":[" DEVICE(0, "NVIDIA H200", 132) "],\"traceEvents\":[" STEP(0, 0) ","
                    CALL(1, 1) "," KERNEL("k", 1, 0, 4) "],\"baseTimeNanoseconds\":0}";
    const char *b_other = "{\"deviceProperties\":[" DEVICE(1, "NVIDIA H100", 114) "],\"traceEvents\":[" STEP(0, 1000) ","
                          CALL(1, 1001) "," KERNEL("k", 1, 1, 1004) "],\"baseTimeNanoseconds\":0}";
    const char *b_same = "{\"deviceProperties\":[" DEVICE(1, "NVIDIA H200", 132) "],\"traceEvents\":[" STEP(0, 1000) ","
                         CALL(1, 1001) "," KERNEL("k", 1, 1, 1004) "],\"baseTimeNanoseconds\":0}";
    trace t;
    static run_info r;
    char err[512];
    import_options o = {.device = -1, .variant = "a,b"};
    const char *other[] = {a, b_other}, *same[] = {a, b_same};
    cr_assert_eq(import_texts(other, 2, &o, &t, &r, err, sizeof err), EXIT_USAGE);
    cr_assert(strstr(err, "--device") && strstr(err, "NVIDIA H100"), "%s", err);
    /* two GPUs of one kind: each GPU's limits are the run's */
    cr_assert_eq(import_texts(same, 2, &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(r.n_variants, 2);
    trace_free(&t);
}
