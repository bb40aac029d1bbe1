/* The steps of a recorded program (report/analysis/record_steps.c) and its conversion
 * into an archive's records (record_convert.c): each rule on a raw file made for it, in
 * order of precedence, --skip and --steps, and the refusals. No GPU. */
#include <criterion/criterion.h>

#include <signal.h>

#include "analysis.h"
#include "exit_codes.h"
#include "inject_raw.h"
#include "record_convert.h"
#include "record_raw.h"
#include "record_steps.h"

static const char *const STEP_KERNELS[] = {"embed", "qkv_gemm", "fmha_cutlassF_bf16_aligned_64x64_rf_sm80",
                                           "out_gemm", "norm"};
enum { N_STEP_KERNELS = 5 };

/* n steps of the kernels above (each step inside NVTX "step" when nvtx), a sync and a host pause after each;
 * `layers` copies of the middle three kernels per step. */
static void write_steps(raw_file *r, int n, int layers, int nvtx)
{
    for (int s = 0; s < n; s++) {
        if (nvtx)
            raw_line(r, "NS\t%lld\t%d\t77\tstep", r->t, s + 1);
        r->t += 1000;
        raw_kernel(r, STEP_KERNELS[0], 4000);
        for (int l = 0; l < layers; l++)
            for (int k = 1; k < 4; k++)
                raw_kernel(r, STEP_KERNELS[k], 6000);
        raw_kernel(r, STEP_KERNELS[4], 2000);
        raw_sync(r, 20000);
        if (nvtx)
            raw_line(r, "NE\t%lld\t%d", r->t, s + 1);
        r->t += 300000; /* the program's pause between steps */
    }
}

static int steps_of(const char *path, const step_options *o, trace *t, step_result *res)
{
    inject_raw m;
    char err[512];
    cr_assert_eq(inject_raw_read(path, "prog", t, &m, err, sizeof err), EXIT_OK, "%s", err);
    return record_steps_find(t, "prog", o, res, err, sizeof err);
}

/* The analysis of the steps found, as a recording's run.json would have it. */
static void analyse(const trace *t, int steps, analysis *a)
{
    static run_info info;
    info.n_variants = 1;
    snprintf(info.variants[0].name, sizeof info.variants[0].name, "prog");
    info.imported = 1;
    info.iters = steps;
    char err[512];
    cr_assert_eq(analysis_build(a, t, &info, err, sizeof err), 0, "%s", err);
}

static int kept_ranges(const trace *t, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < t->n_ranges; i++)
        n += t->ranges[i].iteration >= 0 && !strcmp(t->ranges[i].name, name);
    return n;
}

Test(record_steps, nvtx_ranges_first)
{
    raw_file r;
    raw_open(&r);
    write_steps(&r, 6, 2, 1);
    raw_close(&r, "E\tcomplete");
    trace t;
    step_result res;
    cr_assert_eq(steps_of(r.path, &(step_options){0}, &t, &res), EXIT_OK);
    cr_expect_eq(res.rule, STEP_RULE_NVTX);
    cr_expect_eq(res.found, 6);
    cr_expect_eq(res.kept, 6);
    cr_expect_eq(kept_ranges(&t, "step"), 6);
    cr_expect(strstr(res.rule_text, "\"step\"") != NULL, "%s", res.rule_text);
    trace_free(&t);
    cr_assert_eq(steps_of(r.path, &(step_options){.range = "step", .skip = 2, .steps = 3}, &t, &res), EXIT_OK);
    cr_expect_eq(res.found, 6);
    cr_expect_eq(res.kept, 3);
    cr_expect(strstr(res.rule_text, "--range") != NULL, "%s", res.rule_text);
    /* the kept steps are the 3rd to 5th: each holds its own 2 + 3 x 2 ops */
    analysis a;
    analyse(&t, res.kept, &a);
    cr_assert_eq(a.v[0].n_forwards, 3);
    for (int k = 0; k < 3; k++)
        cr_expect_eq(a.v[0].forwards[k].n_ops, 2 + 3 * 2, "step %d", k);
    analysis_free(&a);
    trace_free(&t);
    unlink(r.path);
}

/* --range naming no range falls through to the next rule, and says so. */
Test(record_steps, missing_range_falls_through)
{
    raw_file r;
    raw_open(&r);
    write_steps(&r, 5, 1, 0);
    raw_close(&r, "E\tcomplete");
    trace t;
    step_result res;
    cr_assert_eq(steps_of(r.path, &(step_options){.range = "decode"}, &t, &res), EXIT_OK);
    cr_expect_eq(res.rule, STEP_RULE_PERIOD);
    cr_expect(strstr(res.rule_text, "no NVTX range \"decode\"") != NULL, "%s", res.rule_text);
    trace_free(&t);
    unlink(r.path);
}

Test(record_steps, graph_launches)
{
    raw_file r;
    raw_open(&r);
    for (int s = 0; s < 7; s++) {
        raw_line(&r, "R\t%lld\t%lld\t%u\t4242\t77\t311\tcudaGraphLaunch", r.t, r.t + 4000, r.corr);
        for (int k = 0; k < 3; k++)
            raw_line(&r, "K\t%lld\t%lld\t%u\t0\t7\t1\t1\t1\t1\t64\t1\t1\t16\t0\t0\t9\tnode%d", r.t + 6000 + k * 5000,
                     r.t + 10000 + k * 5000, r.corr, k);
        r.corr++;
        r.t += 30000;
        raw_sync(&r, 10000);
        r.t += 100000;
    }
    raw_close(&r, "E\tcomplete");
    trace t;
    step_result res;
    cr_assert_eq(steps_of(r.path, &(step_options){0}, &t, &res), EXIT_OK);
    cr_expect_eq(res.rule, STEP_RULE_GRAPH);
    cr_expect_eq(res.kept, 7);
    trace_free(&t);
    unlink(r.path);
}

/* No NVTX, no graph: the period of the kernel sequence is the step (not the layer, which
 * repeats within it), and the steps start at the host's pause: each begins with "embed". */
Test(record_steps, period_of_the_kernel_sequence)
{
    raw_file r;
    raw_open(&r);
    write_steps(&r, 8, 3, 0);
    raw_close(&r, "E\tcomplete");
    trace t;
    step_result res;
    cr_assert_eq(steps_of(r.path, &(step_options){0}, &t, &res), EXIT_OK);
    cr_expect_eq(res.rule, STEP_RULE_PERIOD);
    cr_expect_eq(res.period, 2 + 3 * 3, "a step's ops, not a layer's 3");
    cr_expect_eq(res.kept, 8);
    analysis a;
    analyse(&t, res.kept, &a);
    for (int k = 0; k < a.v[0].n_forwards; k++) {
        cr_expect_eq(a.v[0].forwards[k].n_ops, 11);
        cr_expect_str_eq(a.v[0].forwards[k].ops[0]->name, "embed", "step %d starts at the pause", k);
    }
    analysis_free(&a);
    trace_free(&t);
    unlink(r.path);
}

Test(record_steps, refusals)
{
    raw_file r;
    raw_open(&r);
    raw_kernel(&r, "once", 1000);
    raw_close(&r, "E\tcomplete");
    trace t;
    step_result res;
    cr_expect_eq(steps_of(r.path, &(step_options){0}, &t, &res), EXIT_BAD_ARCHIVE, "one kernel: no step");
    trace_free(&t);
    unlink(r.path);
    raw_open(&r);
    write_steps(&r, 3, 1, 1);
    raw_close(&r, "E\tcomplete");
    cr_expect_eq(steps_of(r.path, &(step_options){.skip = 3}, &t, &res), EXIT_BAD_ARCHIVE, "--skip leaves none");
    trace_free(&t);
    unlink(r.path);
}

/* The conversion: provenance, the variant, dropped records, and an incomplete recording kept as such. */
Test(record_convert, run_json_of_a_recording)
{
    const char *ends[] = {"E\tcomplete", "E\tsignal\t6", NULL};
    for (int k = 0; k < 3; k++) {
        raw_file r;
        raw_open(&r);
        write_steps(&r, 4, 1, 1);
        raw_line(&r, "X\t5");
        raw_close(&r, ends[k]);
        record_options o = {.variant = "prog", .program = "./prog --fast", .processes = 1};
        trace t;
        static run_info info;
        inject_raw m;
        step_result s;
        char err[512];
        cr_assert_eq(record_convert(r.path, &o, &t, &info, &m, &s, err, sizeof err), EXIT_OK, "%s", err);
        cr_expect_eq(info.producer, PRODUCER_INJECTION);
        cr_expect_str_eq(run_producer_phrase(&info), "recorded by injection");
        cr_expect_eq(info.n_variants, 1);
        cr_expect_str_eq(info.variants[0].name, "prog");
        cr_expect_str_eq(info.variants[0].what_changed, "./prog --fast");
        cr_expect_eq(info.variants[0].dropped_records, 5);
        cr_expect_eq(info.iters, 4);
        cr_expect_str_eq(info.driver_version, "580.159.03");
        cr_expect_str_eq(info.device.name, "NVIDIA H200");
        cr_expect_eq(info.variants[0].status, k == 0 ? VARIANT_OK : VARIANT_FAILED, "end %d", k);
        cr_expect_eq(strncmp(info.variants[0].error, "incomplete", k ? 10 : 0), 0, "%s", info.variants[0].error);
        trace_free(&t);
        unlink(r.path);
    }
}

/* A program killed by a signal that ran no handler (SIGKILL: no E line in its raw file) leaves
 * what CUPTI had completed, marked incomplete with the signal that ended it, its steps kept. */
Test(record_convert, killed_program_is_incomplete_with_its_signal)
{
    raw_file r;
    raw_open(&r);
    write_steps(&r, 4, 1, 1);
    raw_close(&r, NULL);
    record_options o = {.variant = "prog", .program = "./prog", .child_signal = SIGKILL, .processes = 1};
    trace t;
    static run_info info;
    inject_raw m;
    step_result s;
    char err[512];
    cr_assert_eq(record_convert(r.path, &o, &t, &info, &m, &s, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect_eq(info.variants[0].status, VARIANT_FAILED);
    cr_expect(strstr(info.variants[0].error, "incomplete: the program was ended by signal 9") != NULL, "%s",
              info.variants[0].error);
    cr_expect_eq(info.iters, 4, "the steps recorded before the kill are kept");
    trace_free(&t);
    unlink(r.path);
}

Test(record_convert, no_gpu_work)
{
    raw_file r;
    raw_open(&r);
    raw_sync(&r, 1000);
    raw_close(&r, "E\tcomplete");
    record_options o = {.variant = "prog", .program = "prog", .processes = 1};
    trace t;
    static run_info info;
    inject_raw m;
    step_result s;
    char err[512];
    cr_expect_eq(record_convert(r.path, &o, &t, &info, &m, &s, err, sizeof err), EXIT_NOTHING_RECORDED);
    unlink(r.path);
}

Test(record_convert, variant_names)
{
    char out[32];
    char *py[] = {"/usr/bin/python3", "-u", "tests/inject/torch_sdpa.py", "--mode", "decode"};
    record_variant_name(py, 5, out, sizeof out);
    cr_expect_str_eq(out, "torch_sdpa");
    char *bin[] = {"./build/my server!", "--port=1"};
    record_variant_name(bin, 2, out, sizeof out);
    cr_expect_str_eq(out, "myserver");
    char *dots[] = {"..."};
    record_variant_name(dots, 1, out, sizeof out);
    cr_expect_str_eq(out, "program");
}
