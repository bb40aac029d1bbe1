/* The archives `attnprof record` wrote on the H200 (tests/fixtures/record-h200/: a CUDA C++
 * program in each step mode, a crash, a program that forks, a PyTorch script with no profiler
 * code in prefill and decode, a JAX script; tests/inject/README.md says how), rendered here
 * without a GPU: each renders, names its producer and its step rule, and says what the
 * kernel names give; the raw files kept with them convert to the same trace.json again. */
#include <criterion/criterion.h>

#include "analysis.h"
#include "compare.h"
#include "archive.h"
#include "archive_read.h"
#include "counters.h"
#include "exit_codes.h"
#include "kernel_roles.h"
#include "run_cli.h"
#include "slurp.h"

#define FIXTURES "tests/fixtures/record-h200"

static const struct {
    const char *name;
    const char *rule;   /* how marker_source (the step rule) begins */
    int incomplete;
} ARCHIVES[] = {
    {"cuda_nvtx", "NVTX ranges named \"step\"", 0},     {"cuda_graph", "CUDA graph launches", 0},
    {"cuda_period", "the kernel sequence's period", 0}, {"cuda_crash", "NVTX ranges named \"step\"", 1},
    {"cuda_forks", "NVTX ranges named \"step\"", 0},    {"torch_prefill", "NVTX ranges named \"step\"", 0},
    {"torch_decode", "NVTX ranges named \"step\"", 0},  {"jax_attn", "NVTX ranges named \"XlaModule:", 0},
};

static void load(const char *name, trace *t, run_info *r, analysis *a)
{
    char dir[256], err[1024];
    snprintf(dir, sizeof dir, FIXTURES "/%s", name);
    cr_assert_eq(archive_read(dir, t, r, err, sizeof err), 0, "%s: %s", name, err);
    cr_assert_eq(analysis_build(a, t, r, err, sizeof err), 0, "%s: %s", name, err);
}

Test(record_fixtures, provenance_rule_and_completeness)
{
    for (size_t i = 0; i < sizeof ARCHIVES / sizeof *ARCHIVES; i++) {
        trace t;
        static run_info r;
        analysis a;
        load(ARCHIVES[i].name, &t, &r, &a);
        cr_expect_eq(r.producer, PRODUCER_INJECTION, "%s", ARCHIVES[i].name);
        cr_expect_eq(strncmp(r.marker_source, ARCHIVES[i].rule, strlen(ARCHIVES[i].rule)), 0, "%s: %s",
                     ARCHIVES[i].name, r.marker_source);
        cr_expect_eq(r.variants[0].dropped_records, 0, "%s: buffers large enough", ARCHIVES[i].name);
        cr_expect_str_eq(r.device.name, "NVIDIA H200");
        cr_expect_gt(r.env.clock_samples, 0, "%s: NVML clocks", ARCHIVES[i].name);
        cr_expect_gt((int)strlen(r.driver_version), 0);
        cr_expect_eq(r.variants[0].status, ARCHIVES[i].incomplete ? VARIANT_FAILED : VARIANT_OK, "%s",
                     ARCHIVES[i].name);
        if (ARCHIVES[i].incomplete) /* steps.cu crash: abort() after 6 steps, exit 134 passed through */
            cr_expect(strstr(r.variants[0].error, "incomplete: the program was ended by signal 6") != NULL, "%s: %s",
                      ARCHIVES[i].name, r.variants[0].error);
        cr_expect_eq(a.v[0].n_forwards, r.iters, "%s: every step is a forward", ARCHIVES[i].name);
        for (int k = 0; k < a.v[0].n_forwards; k++)
            cr_expect_gt(a.v[0].forwards[k].n_ops, 0, "%s step %d has its ops", ARCHIVES[i].name, k);
        analysis_free(&a);
        counters_free(&r.counters);
        trace_free(&t);
    }
}

/* The PyTorch steps' attention is one cuDNN or flash kernel per layer (two layers), named by the
 * kernel-name table; the CUDA C++ program's steps hold the kernels the program launches. */
Test(record_fixtures, roles_from_kernel_names)
{
    const char *torch[] = {"torch_prefill", "torch_decode"};
    for (int i = 0; i < 2; i++) {
        trace t;
        static run_info r;
        analysis a;
        load(torch[i], &t, &r, &a);
        kernel_roles_view v;
        char err[256];
        cr_assert_eq(kernel_roles_build(&a.v[0], &v, err, sizeof err), EXIT_OK, "%s", err);
        cr_expect_eq(v.ops[MROLE_ATTN_FUSED], 2, "%s: one SDPA kernel per layer", torch[i]);
        cr_expect_not_null(v.backend, "%s", torch[i]);
        cr_expect_gt(v.ops[MROLE_GEMM], 0, "%s: the projections", torch[i]);
        cr_expect_gt(v.driver_launches, 0, "%s: cuBLAS launches through the driver", torch[i]);
        double sum = 0;
        for (int k = 0; k < MROLE_COUNT; k++)
            sum += v.share[k];
        cr_expect(sum > 0.9 && sum < 1.1, "%s: shares of the step sum to about 1 (%g)", torch[i], sum);
        analysis_free(&a);
        counters_free(&r.counters);
        trace_free(&t);
    }
    trace t;
    static run_info r;
    analysis a;
    load("cuda_nvtx", &t, &r, &a);
    /* each step: a memcpy in, scale, softmax, a memset, a column sum, a memcpy out */
    cr_expect_eq(a.v[0].kernels_per_forward, 3);
    cr_expect_eq(a.v[0].memcpy_per_forward, 2);
    cr_expect_eq(a.v[0].memset_per_forward, 1);
    analysis_free(&a);
    counters_free(&r.counters);
    trace_free(&t);
}

/* Each archive renders without a GPU, and the report has the recorded program's section. */
Test(record_fixtures, render_anywhere)
{
    for (size_t i = 0; i < sizeof ARCHIVES / sizeof *ARCHIVES; i++) {
        char dir[] = "/tmp/attnprof-recfx-XXXXXX", cmd[600];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(cmd, sizeof cmd, "cp " FIXTURES "/%s/trace.json " FIXTURES "/%s/run.json %s/", ARCHIVES[i].name,
                 ARCHIVES[i].name, dir);
        cr_assert_eq(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "report %s -q", dir);
        cr_expect_eq(attnprof(cmd), EXIT_OK, "%s: %s", ARCHIVES[i].name, err_text);
        char path[300];
        snprintf(path, sizeof path, "%s/report.md", dir);
        char *md = slurp(path);
        cr_assert_not_null(md, "%s", ARCHIVES[i].name);
        cr_expect(strstr(md, "recorded by injection") != NULL, "%s", ARCHIVES[i].name);
        cr_expect(strstr(md, "## Recorded program") != NULL, "%s", ARCHIVES[i].name);
        free(md);
        remove_tree(dir);
    }
}

/* The raw files recorded with the archives convert to the same trace.json (with the variant's name
 * the recording gave it): the conversion is the same code here as on the GPU machine. */
Test(record_fixtures, raw_files_convert_to_the_same_trace)
{
    const char *raws[] = {"cuda_nvtx", "cuda_graph", "cuda_period", "cuda_crash"};
    for (int i = 0; i < 4; i++) {
        char dir[] = "/tmp/attnprof-recfx-XXXXXX", args[700], a[400], b[400];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(args, sizeof args, "record -q --raw " FIXTURES "/raw/%s.txt --variant steps -o %s/out", raws[i], dir);
        cr_assert_eq(attnprof(args), EXIT_OK, "%s: %s", raws[i], err_text);
        snprintf(a, sizeof a, "%s/out/trace.json", dir);
        snprintf(b, sizeof b, FIXTURES "/%s/trace.json", raws[i]);
        char *x = slurp(a), *y = slurp(b);
        cr_assert(x && y);
        cr_expect_str_eq(x, y, "%s: the same trace.json", raws[i]);
        free(x);
        free(y);
        remove_tree(dir);
    }
}

/* One PyTorch model (tests/inject/torch_sdpa.py, decode, 2 small layers, 8 steps) recorded on
 * the H200 by injection (pair_record) and, in the next process, by its own profiler, imported
 * (pair_import; bench/record_overhead_h200.sh, step 2): compare pairs the two as one variant,
 * with as many GPU operations a step, the same kernels by name and count, and the CUDA time per
 * step within the noise floor. */
Test(record_fixtures, record_and_import_of_one_model_pair_in_compare)
{
    compare_archive ar[2];
    char err[1024];
    memset(ar, 0, sizeof ar);
    cr_assert_eq(compare_load(&ar[0], FIXTURES "/pair_record", err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(compare_load(&ar[1], FIXTURES "/pair_import", err, sizeof err), EXIT_OK, "%s", err);
    compare_archive *in[2] = {&ar[0], &ar[1]};
    compare_data m;
    compare_options o = {.min_effect = COMPARE_DEFAULT_MIN_EFFECT};
    cr_assert_eq(compare_build(&m, in, 2, &o, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(m.n_variants, 1, "one variant, in both runs");
    const compare_variant *v = &m.variants[0];
    cr_expect_str_eq(v->name, "pair");
    cr_assert_not_null(v->cell[0].va, "recorded by injection");
    cr_assert_not_null(v->cell[1].va, "imported from the profiler");
    cr_expect_eq(v->cell[0].n, 8, "8 steps recorded");
    cr_expect_eq(v->cell[1].n, 8, "8 steps imported");
    cr_expect_eq(v->cell[0].ops_stats.median, v->cell[1].ops_stats.median, "GPU operations per step: %g and %g",
                 v->cell[0].ops_stats.median, v->cell[1].ops_stats.median);
    /* The same kernels by name and count a step. Not by role: without ATen's op chain the
     * recording files some kernels under other roles than the import does (the roles' pairing,
     * compare's kernel table, then differs; the names do not). */
    cr_assert_gt(v->n_kernels[0], 5, "the step's kernels");
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < v->n_kernels[side]; i++) {
            const char *name = v->kernels[side][i].op->name;
            double count[2] = {0, 0};
            for (int s2 = 0; s2 < 2; s2++)
                for (int j = 0; j < v->n_kernels[s2]; j++)
                    if (!strcmp(v->kernels[s2][j].op->name, name))
                        count[s2] += v->kernels[s2][j].per_forward;
            cr_expect_eq(count[0], count[1], "%s: %g a step recorded, %g imported", name, count[0], count[1]);
        }
    cr_expect_eq(v->cell[1].metric_ratio.verdict, VERDICT_SAME, "CUDA time per step %.4f× the recording's",
                 v->cell[1].metric_ratio.ci.ratio);
    compare_free(&m);
    compare_archive_free(&ar[0]);
    compare_archive_free(&ar[1]);
}
