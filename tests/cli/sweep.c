/* attnprof sweep without a GPU: planning (LIST ranges, the tokens rule), the
 * scaling fit and the crossover rule on synthetic data, the findings derived
 * from a synthetic model, collect on a tree of H200 fixture archives (with a
 * failed, a missing and an unreadable shape, and two GPUs' replicas), and the
 * command itself with a task command that re-renders fixtures: workers over
 * GPUs, resume, Ctrl-C, --slurm script, usage errors. */
#include <criterion/criterion.h>
#include "err.h"
#include "slurp.h"
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "archive.h"
#include "exit_codes.h"
#include "sweep_doc.h"

#include "fixture.h"
#include "run_cli.h"


static void tmpdir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "/tmp/attnprof-sweep-%s-%d", tag, (int)getpid());
    remove_tree(out);
}

static void sh(const char *fmt, const char *a, const char *b)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* ---- planning ---------------------------------------------------------------- */

Test(sweep_plan, lists_and_ranges)
{
    int v[SWEEP_MAX_LIST], n;
    char err[256];
    cr_assert_eq(sweep_parse_list("seq", "256:16384:x2", 1 << 20, v, &n, err, sizeof err), EXIT_OK);
    cr_assert_eq(n, 7);
    cr_expect_eq(v[0], 256);
    cr_expect_eq(v[6], 16384);
    cr_assert_eq(sweep_parse_list("seq", "256:1000:x2", 1 << 20, v, &n, err, sizeof err), EXIT_OK);
    cr_assert_eq(n, 2, "256, 512: 1024 > 1000");
    cr_assert_eq(sweep_parse_list("dim", "128,64,128", 1024, v, &n, err, sizeof err), EXIT_OK);
    cr_assert_eq(n, 2, "sorted, no repeats");
    cr_expect(v[0] == 64 && v[1] == 128);
    cr_assert_eq(sweep_parse_list("seq", "100:400:+100", 1 << 20, v, &n, err, sizeof err), EXIT_OK);
    cr_assert_eq(n, 4);
    cr_expect_eq(v[3], 400);
    const char *bad[] = {"", "0", "a", "64,,128", "256:128:x2", "256:1024:x1", "256:1024", "256:1024:x2:x2",
                         "-64", "64,2048", "1:100000:+1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        cr_expect_eq(sweep_parse_list("dim", bad[i], 1024, v, &n, err, sizeof err), EXIT_USAGE, "'%s' accepted", bad[i]);
        cr_expect(strstr(err, "--dim") != NULL, "'%s': %s", bad[i], err);
    }
}

Test(sweep_plan, the_tokens_rule_and_the_default_sweep)
{
    int seq[SWEEP_MAX_LIST], dim[SWEEP_MAX_LIST];
    char err[256];
    int ns, nd;
    cr_assert_eq(sweep_parse_list("seq", "256:16384:x2", 1 << 20, seq, &ns, err, sizeof err), EXIT_OK);
    cr_assert_eq(sweep_parse_list("dim", "64,128", 1024, dim, &nd, err, sizeof err), EXIT_OK);
    static sweep_plan p;
    cr_assert_eq(sweep_plan_shapes(&p, seq, ns, dim, nd, 8, SWEEP_DEFAULT_TOKENS, 16, err, sizeof err), EXIT_OK);
    cr_assert_eq(p.n_shapes, 14);
    for (int i = 0; i < p.n_shapes; i++)
        cr_expect_eq((long)p.shapes[i].batch * p.shapes[i].seq, 32768, "B·S = 32768 in every shape");
    cr_expect(p.shapes[0].batch == 128 && p.shapes[0].seq == 256 && p.shapes[0].dim == 64);
    cr_expect(p.shapes[13].batch == 2 && p.shapes[13].seq == 16384 && p.shapes[13].dim == 128);
    /* --batch: B fixed. */
    cr_assert_eq(sweep_plan_shapes(&p, seq, 2, dim, 1, 4, 0, 8, err, sizeof err), EXIT_OK);
    cr_assert_eq(p.n_shapes, 2);
    cr_expect(p.shapes[1].batch == 4 && p.shapes[1].heads == 8 && p.shapes[1].seq == 512);
    /* A sequence length that does not divide the tokens is refused, naming it. */
    int odd[] = {256, 3000};
    cr_assert_eq(sweep_plan_shapes(&p, odd, 2, dim, 1, 8, 32768, 16, err, sizeof err), EXIT_USAGE);
    cr_expect(strstr(err, "S = 3000") && strstr(err, "--tokens 32768"), "%s", err);
    int big[] = {65536};
    cr_assert_eq(sweep_plan_shapes(&p, big, 1, dim, 1, 8, 32768, 16, err, sizeof err), EXIT_USAGE, "B would be 0");
}

Test(sweep_plan, names_files_and_status_round_trip)
{
    attn_shape s = {.batch = 2, .heads = 16, .seq = 16384, .dim = 128}, back;
    char name[64], dir[256], err[256];
    sweep_shape_name(&s, name, sizeof name);
    cr_assert_str_eq(name, "2x16x16384x128");
    cr_assert_eq(sweep_shape_parse(name, &back), EXIT_OK);
    cr_assert_eq(memcmp(&s, &back, sizeof s), 0);
    const char *bad[] = {"2x16x16384", "02x16x16384x128", "2x16x16384x128x1", "axbxcxd", "0x1x1x1", ".2x1x1x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(sweep_shape_parse(bad[i], &back), EXIT_BAD_ARCHIVE, "%s", bad[i]);
    cr_expect_float_eq(sweep_flops(&s, 1), 2.0 * 2 * 16 * 16384.0 * 16384 * 128, 1);

    tmpdir(dir, sizeof dir, "plan");
    mkdir(dir, 0755);
    static sweep_plan p, q;
    memset(&p, 0, sizeof p);
    p.n_shapes = 2;
    p.shapes[0] = (attn_shape){.batch = 8, .heads = 16, .seq = 1024, .dim = 64};
    p.shapes[1] = s;
    snprintf(p.variants, sizeof p.variants, "flash,cudnn");
    snprintf(p.task_command, sizeof p.task_command, "echo {dir} 'x'");
    p.iters = 3;
    p.replicate = 1;
    p.reference = p.shapes[0];
    p.n_gpus = 2;
    snprintf(p.gpus[1], sizeof p.gpus[1], "1");
    snprintf(p.slurm_job_id, sizeof p.slurm_job_id, "4711");
    cr_assert_eq(sweep_plan_write(&p, dir, err, sizeof err), 0, "%s", err);
    int found = 0;
    cr_assert_eq(sweep_plan_read(&q, dir, &found, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect_eq(found, 1);
    cr_expect_eq(q.n_shapes, 2);
    cr_expect_eq(memcmp(&q.shapes[1], &s, sizeof s), 0);
    cr_expect_str_eq(q.variants, "flash,cudnn");
    cr_expect_str_eq(q.task_command, "echo {dir} 'x'");
    cr_expect_str_eq(q.slurm_job_id, "4711");
    cr_expect(q.iters == 3 && q.replicate && q.reference.seq == 1024 && q.n_gpus == 2);

    sweep_status st = {.exit_code = 4, .seconds = 1.5, .slurm_task = 7}, got;
    snprintf(st.error, sizeof st.error, "attnprof: variant naive needs \"512\" GiB");
    snprintf(st.slurm_job_id, sizeof st.slurm_job_id, "4711");
    cr_assert_eq(sweep_status_write(dir, name, &st, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sweep_status_read(dir, name, &got, &found, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect_eq(found, 1);
    cr_expect(got.exit_code == 4 && got.slurm_task == 7 && fabs(got.seconds - 1.5) < 1e-9);
    cr_expect_str_eq(got.error, st.error);
    cr_expect_eq(sweep_status_read(dir, "1x1x1x1", &got, &found, err, sizeof err), EXIT_OK);
    cr_expect_eq(found, 0, "absent");
    sh("echo '{not json' > %s/status/%s.json", dir, "1x1x1x1");
    cr_expect_eq(sweep_status_read(dir, "1x1x1x1", &got, &found, err, sizeof err), EXIT_BAD_ARCHIVE);
    sh("echo '{\"shapes\": 3}' > %s/sweep.json%s", dir, "");
    cr_expect_eq(sweep_plan_read(&q, dir, &found, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_expect(strstr(err, "not an attnprof sweep.json") != NULL, "%s", err);
    remove_tree(dir);
}

/* ---- fit and crossover: synthetic ------------------------------------------------ */

Test(sweep_fit, power_law_exponent_and_quality)
{
    double s[6] = {256, 512, 1024, 2048, 4096, 8192}, t[6], u[6];
    for (int i = 0; i < 6; i++) {
        t[i] = 3e-3 * s[i] * s[i];
        u[i] = 5 * s[i] * (i % 2 ? 1.3 : 0.77); /* ∝ S with ±30% zig-zag */
    }
    sweep_fit f;
    cr_assert_eq(sweep_fit_power(s, t, 6, &f), 0);
    cr_expect_float_eq(f.k, 2.0, 1e-9);
    cr_expect_float_eq(f.r2, 1.0, 1e-12);
    cr_expect_eq(f.n, 6);
    cr_assert_eq(sweep_fit_power(s, u, 6, &f), 0);
    cr_expect(fabs(f.k - 1) < 0.1, "k = %f", f.k);
    cr_expect(f.r2 < 0.99 && f.r2 > 0.8, "R² = %f", f.r2);
    cr_expect_eq(sweep_fit_power(s, t, 2, &f), ATTN_NONE, "two points are no fit");
    double flat[6] = {5, 5, 5, 5, 5, 5 * (1 + 1e-15)};
    cr_assert_eq(sweep_fit_power(s, flat, 6, &f), 0);
    cr_expect(fabs(f.k) < 1e-9 && f.r2 == 1, "a flat series: k %g, R² %g", f.k, f.r2);
}

Test(sweep_fit, crossover_rule)
{
    /* a: slower below 1024, faster from 1024 on (by more than 2%). */
    double a[5] = {10, 20, 35, 60, 110}, b[5] = {8, 18, 40, 80, 160};
    cr_expect_eq(sweep_crossover(a, b, 5, 0.02), 2);
    cr_expect_eq(sweep_crossover(b, a, 5, 0.02), ATTN_NONE, "b is not faster at the end");
    double c[5] = {5, 10, 20, 40, 80};
    cr_expect_eq(sweep_crossover(c, b, 5, 0.02), ATTN_NONE, "faster everywhere is no crossover");
    double d[5] = {10, 20, 45, 90, 150};
    cr_expect_eq(sweep_crossover(d, b, 5, 0.02), ATTN_NONE, "one point at the end is not enough");
    double e[5] = {10, 20, 39.5, 79, 150};
    cr_expect_eq(sweep_crossover(e, b, 5, 0.02), ATTN_NONE, "within 2% at 2048: faster at the last S only");
    double g[4] = {9, 9, 9, 9}, h[4] = {10, 8, 10, 10};
    cr_expect_eq(sweep_crossover(g, h, 4, 0.02), 2, "the last change counts");
}

/* A synthetic model: shapes at D = 64 with S = 256 … 4096. */
static void synthetic(sweep_data *m)
{
    memset(m, 0, sizeof *m);
    m->n_variants = 4;
    const char *names[] = {"naive", "efficient", "flash", "cudnn"};
    for (int k = 0; k < 4; k++)
        snprintf(m->variants[k], sizeof m->variants[k], "%s", names[k]);
    m->gpu_bytes = 150109880320.0;
    m->shapes = calloc(SWEEP_MAX_SHAPES, sizeof *m->shapes);
    int seqs[] = {256, 512, 1024, 2048, 4096};
    for (int i = 0; i < 5; i++) {
        sweep_shape *x = &m->shapes[m->n_shapes++];
        x->shape = (attn_shape){.batch = 32768 / seqs[i], .heads = 16, .seq = seqs[i], .dim = 64};
        sweep_shape_name(&x->shape, x->name, sizeof x->name);
        x->flops = sweep_flops(&x->shape, 1);
        x->p = calloc(4, sizeof *x->p);
        double S = seqs[i];
        double us[4] = {0.01 * S * S / 32 + 5, 0.05 * S + 40, 0.04 * S + 52, 0.045 * S + 30};
        int kernels[4] = {5, 1, 1, 1}, ops[4] = {7, 1, 1, S >= 1024 ? 2 : 1};
        for (int k = 0; k < 4; k++) {
            sweep_point *p = &x->p[k];
            p->state = SWEEP_OK;
            p->us = p->us_min = p->us_max = us[k];
            p->tflops = x->flops / (us[k] * 1e-6) / 1e12;
            p->kernels = kernels[k];
            p->ops = ops[k];
            p->device_bytes = k == 0 ? 2.0 * x->shape.batch * 16 * S * S * 4 : 1e9;
        }
        if (seqs[i] == 4096) { /* naive's scores do not fit: skipped, with the bytes it needed */
            x->p[0].state = SWEEP_SKIPPED;
            x->p[0].device_bytes = 2.2e11;
            snprintf(x->p[0].reason, sizeof x->p[0].reason, "needs 204.9 GiB of device memory");
        }
    }
    m->n_dims = 1;
    m->dims[0] = 64;
}

static const sweep_finding *find(const sweep_data *m, finding_kind id, const char *v, const char *other)
{
    for (int i = 0; i < m->n_findings; i++)
        if (m->findings[i].kind == id && !strcmp(m->findings[i].subject, v) &&
            (!other || !strcmp(m->findings[i].other, other)))
            return &m->findings[i];
    return NULL;
}

Test(sweep_findings, derived_from_a_synthetic_sweep)
{
    static sweep_data m;
    synthetic(&m);
    sweep_derive(&m);
    /* flash: 0.04 S + 52 vs efficient 0.05 S + 40: equal at S = 1200, 2% apart from ~1900. */
    const sweep_finding *f = find(&m, FK_SWEEP_CROSSOVER, "flash", "efficient");
    cr_assert(f, "flash over efficient");
    cr_expect_eq(findings_value(f, "seq"), 2048);
    cr_expect_eq(findings_value(f, "seq2"), 4096);
    cr_expect_float_eq(findings_value(f, "ratio"), (0.04 * 4096 + 52) / (0.05 * 4096 + 40), 1e-12);
    cr_expect_null(find(&m, FK_SWEEP_CROSSOVER, "efficient", "flash"));
    cr_expect_null(find(&m, FK_SWEEP_CROSSOVER, "cudnn", "flash"), "cudnn is faster at every S: no crossover");
    f = find(&m, FK_SWEEP_MEMORY_WALL, "naive", NULL);
    cr_assert(f);
    cr_expect(findings_value(f, "seq") == 4096 && findings_value(f, "bytes_needed") == 2.2e11 &&
              findings_value(f, "gpu_bytes") == m.gpu_bytes);
    char text[512];
    sweep_finding_text(&m, f, text, sizeof text);
    cr_expect_str_eq(text, "naive needs 204.8 GiB at S = 4096 (8x16x4096x64); this GPU has 139.8 GiB: its curve "
                           "ends there");
    f = find(&m, FK_SWEEP_SCALING, "naive", NULL);
    cr_assert(f);
    cr_expect_eq(findings_value(f, "shapes"), 4, "naive's ok points only");
    cr_expect(findings_value(f, "exponent") > 1.8 && findings_value(f, "exponent") < 2.0, "naive here ~S^2: %f",
              findings_value(f, "exponent"));
    cr_expect_null(find(&m, FK_SWEEP_BEST_TFLOPS, "naive", NULL), "naive is not one fused kernel");
    f = find(&m, FK_SWEEP_BEST_TFLOPS, "flash", NULL);
    cr_assert(f);
    cr_expect_eq(findings_value(f, "seq"), 4096);
    f = find(&m, FK_SWEEP_OPS_CHANGE, "cudnn", NULL);
    cr_assert(f, "cudnn's Memset appears");
    cr_expect(findings_value(f, "seq") == 1024 && findings_value(f, "seq2") == 512 &&
              findings_value(f, "ops_from") == 1 && findings_value(f, "ops_to") == 2);
    /* Findings are data; every one has words. */
    for (int i = 0; i < m.n_findings; i++) {
        sweep_finding_text(&m, &m.findings[i], text, sizeof text);
        cr_expect(strlen(text) > 20 && !strchr(text, '|') && !strchr(text, '`'), "%s", text);
    }
    char *tex = sweep_latex(&m);
    cr_assert(tex);
    cr_expect(strstr(tex, "\\begin{tabular}") && strstr(tex, "S\\textsuperscript{") && !strstr(tex, "S^") &&
                  !strstr(tex, "?"), "LaTeX escaped, the exponent a superscript: %s", tex);
    free(tex);
    sweep_free(&m);
}

/* ---- collect on H200 fixture archives ------------------------------------------- */

static void fixture_tree(char *dir, size_t n)
{
    tmpdir(dir, n, "tree");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/shapes %s/replicate %s/status && cp -r tests/fixtures/h200-6var %s/shapes/2x4x256x64 && "
             "cp -r tests/fixtures/h200-cudnn919-a %s/shapes/8x16x1024x64 && "
             "mkdir %s/shapes/1x16x8192x64 && echo '{' > %s/shapes/1x16x8192x64/run.json && "
             "cp -r tests/fixtures/h200-6var %s/shapes/4x4x512x64 && "
             "cp -r tests/fixtures/h200-cudnn914 %s/replicate/gpu0 && cp -r tests/fixtures/h200-cudnn919-a %s/replicate/gpu1",
             dir, dir, dir, dir, dir, dir, dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    /* A plan with a shape that never ran and one that failed. */
    static sweep_plan p;
    memset(&p, 0, sizeof p);
    attn_shape shapes[] = {{.batch = 2, .heads = 4, .seq = 256, .dim = 64},
                           {.batch = 8, .heads = 16, .seq = 1024, .dim = 64},
                           {.batch = 4, .heads = 16, .seq = 2048, .dim = 64},
                           {.batch = 2, .heads = 16, .seq = 4096, .dim = 64}};
    p.n_shapes = 4;
    memcpy(p.shapes, shapes, sizeof shapes);
    snprintf(p.slurm_job_id, sizeof p.slurm_job_id, "%s", "");
    char err[256];
    cr_assert_eq(sweep_plan_write(&p, dir, err, sizeof err), 0, "%s", err);
    sweep_status st = {.exit_code = 4, .slurm_task = 3};
    snprintf(st.error, sizeof st.error, "attnprof: variant naive needs 300.00 GiB of device memory at 2x16x4096x64 "
                                        "but 139.00 GiB are free; use a smaller --batch/--seq");
    snprintf(st.slurm_job_id, sizeof st.slurm_job_id, "77");
    snprintf(st.log, sizeof st.log, "logs/77_3.out");
    cr_assert_eq(sweep_status_write(dir, "2x16x4096x64", &st, err, sizeof err), 0, "%s", err);
}

static const sweep_shape *shape_named(const sweep_data *m, const char *name)
{
    for (int i = 0; i < m->n_shapes; i++)
        if (!strcmp(m->shapes[i].name, name))
            return &m->shapes[i];
    return NULL;
}

Test(sweep_collect, fixture_archives_failed_missing_and_unreadable_shapes)
{
    char dir[256], err[512];
    fixture_tree(dir, sizeof dir);
    static sweep_data m;
    cr_assert_eq(sweep_load(&m, dir, 2, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect_eq(m.n_shapes, 6);
    cr_expect(m.n_complete == 2 && m.n_failed == 1 && m.n_missing == 1 && m.n_bad == 2,
              "%d complete %d failed %d missing %d bad", m.n_complete, m.n_failed, m.n_missing, m.n_bad);
    cr_expect_str_eq(m.gpu_name, "NVIDIA H200");
    cr_expect_eq(m.n_variants, 6);
    cr_expect_str_eq(m.variants[0], "naive");
    cr_expect_str_eq(m.variants[5], "cudnn");
    /* Sorted by D, then S. */
    cr_expect_str_eq(m.shapes[0].name, "2x4x256x64");
    cr_expect_str_eq(m.shapes[5].name, "1x16x8192x64");

    /* The points are the report's own numbers for that archive. */
    fixture fx;
    fixture_load(&fx, "tests/fixtures/h200-cudnn919-a");
    const sweep_shape *x = shape_named(&m, "8x16x1024x64");
    cr_assert(x && x->state == SHAPE_COMPLETE);
    for (int k = 0; k < m.n_variants; k++) {
        const variant_analysis *va = analysis_find(&fx.a, m.variants[k]);
        cr_assert(va);
        cr_expect_float_eq(x->p[k].us, va->cuda_us.median, 1e-9, "%s", m.variants[k]);
        cr_expect_eq(x->p[k].ops, va->ops_per_forward);
        cr_expect_eq(x->p[k].n_samples, va->n_forwards);
        cr_expect_float_eq(x->p[k].tflops, sweep_flops(&x->shape, 1) / (va->cuda_us.median * 1e-6) / 1e12, 1e-9);
        cr_expect(isnan(x->p[k].device_bytes), "not recorded in this older archive");
    }
    fixture_free(&fx);

    x = shape_named(&m, "2x16x4096x64");
    cr_assert(x && x->state == SHAPE_FAILED && x->status.exit_code == 4);
    cr_expect_eq(x->p[0].state, SWEEP_SKIPPED, "the error names naive: skipped, with its bytes");
    cr_expect_float_eq(x->p[0].device_bytes, 300.0 * 1073741824.0, 1);
    cr_expect_eq(x->p[4].state, SWEEP_NOT_RUN);
    x = shape_named(&m, "4x16x2048x64");
    cr_assert(x && x->state == SHAPE_MISSING);
    x = shape_named(&m, "1x16x8192x64");
    cr_assert(x && x->state == SHAPE_BAD_ARCHIVE);
    cr_expect(strstr(x->error, "run.json") != NULL, "%s", x->error);
    x = shape_named(&m, "4x4x512x64");
    cr_assert(x && x->state == SHAPE_BAD_ARCHIVE, "a folder whose run.json is another shape");
    cr_expect(strstr(x->error, "holds a run of 2x4x256x64") != NULL, "%s", x->error);

    /* Replicas: cuDNN 9.14 on "GPU 0" vs 9.19 on "GPU 1": cudnn differs, flash does not. */
    cr_assert_eq(m.n_replicas, 2);
    const sweep_finding *differs = find(&m, FK_SWEEP_GPU_DIFFERS, "cudnn", NULL);
    cr_assert(differs, "cudnn differs between the two replicas");
    cr_expect(findings_value(differs, "ratio") < 0.95 && findings_value(differs, "hi") < 1, "%f",
              findings_value(differs, "ratio"));
    cr_expect_null(find(&m, FK_SWEEP_GPU_DIFFERS, "flash", NULL));

    /* Documents. */
    cr_assert_eq(sweep_write(&m, FIG_PNG | FIG_SVG, err, sizeof err), EXIT_OK, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/sweep.md", dir);
    char *md = slurp(path);
    cr_assert(md);
    cr_expect(strstr(md, "Shapes: 2 complete, 1 failed, 1 missing, 2 unreadable.") != NULL);
    cr_expect(strstr(md, "| `2x16x4096x64` | failed | 4 | attnprof: variant naive needs 300.00 GiB") != NULL);
    cr_expect(strstr(md, "| 77_3 | `logs/77_3.out` |") != NULL, "job id and log of the failed task");
    cr_expect(strstr(md, "GPU gpu1 takes 0.9") != NULL, "the replica finding");
    cr_expect(strstr(md, "![") != NULL && strstr(md, "figures/sweep-time.png") != NULL);
    free(md);
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    char *csv = slurp(path);
    cr_assert(csv);
    int rows = 0;
    for (char *c = csv; (c = strchr(c, '\n')); c++)
        rows++;
    cr_expect_eq(rows, 1 + 6 * 6, "header + shapes x variants");
    free(csv);
    const char *files[] = {"sweep.html", "sweep.tex", "figures/sweep-time.png", "figures/sweep-tflops.svg",
                           "figures/sweep-memory.png", "figures/sweep-kernels.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        cr_expect(stat(path, &st) == 0 && st.st_size > 500, "%s", path);
    }
    sweep_free(&m);
    remove_tree(dir);
}

Test(sweep_collect, the_same_bytes_whatever_the_thread_count)
{
    char dir[256], err[512];
    fixture_tree(dir, sizeof dir);
    static sweep_data a, b;
    cr_assert_eq(sweep_load(&a, dir, 1, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(sweep_load(&b, dir, 4, err, sizeof err), EXIT_OK, "%s", err);
    figure_list none = {0};
    char *x = sweep_markdown(&a, &none, NULL), *y = sweep_markdown(&b, &none, NULL);
    char *p = sweep_csv(&a), *q = sweep_csv(&b);
    cr_expect_str_eq(x, y);
    cr_expect_str_eq(p, q);
    free(x), free(y), free(p), free(q);
    sweep_free(&a);
    sweep_free(&b);
    remove_tree(dir);
}

/* ---- the command ------------------------------------------------------------------ */

static void task_cmd(char *out, size_t n, const char *fixture, const char *extra)
{
    char cwd[1024];
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(out, n, "--task-command '%s/tests/sweep/task.sh %s/tests/fixtures/%s {dir} {batch} {heads} {seq} {dim} %s'",
             cwd, cwd, fixture, extra);
}

Test(sweep_cli, usage_errors_are_one_line)
{
    char dir[256];
    tmpdir(dir, sizeof dir, "usage");
    const char *bad[] = {"sweep",
                         "sweep -o /tmp/x --seq 256,300 --tokens 1000",
                         "sweep -o /tmp/x --tokens 4096 --batch 2",
                         "sweep -o /tmp/x --seq 0",
                         "sweep -o /tmp/x --dim 64:32:x2",
                         "sweep -o /tmp/x --submit",
                         "sweep -o /tmp/x --slurm --gpus 0,1",
                         "sweep -o /tmp/x --gpus 0,0 --task-command true",
                         "sweep -o /tmp/x --gpus a --task-command true",
                         "sweep -o /tmp/x --resume --seq 256",
                         "sweep -o /tmp/x --heads 32 --kv-heads 5 --task-command true",
                         "sweep -o /tmp/x --seq 256 --q-seq 512 --task-command true",
                         "sweep -o /tmp/x --kv-heads 0 --task-command true",
                         "sweep -o /tmp/x --resume --q-seq 1",
                         "sweep --collect /tmp/x -o /tmp/y",
                         "sweep -o /tmp/x extra",
                         "sweep --task 1",
                         "sweep -o /tmp/x --task-command ' '",
                         "run --gpus 0",
                         "compare a b -o c --tokens 5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(attnprof(bad[i]), EXIT_USAGE, "%s: %s", bad[i], err_text);
        cr_expect(strchr(err_text, '\n') == err_text + strlen(err_text) - 1, "%s: one line: %s", bad[i], err_text);
    }
    char args[512];
    snprintf(args, sizeof args, "sweep --collect %s", dir);
    cr_expect_eq(attnprof(args), EXIT_BAD_ARCHIVE, "no such sweep: %s", err_text);
    mkdir(dir, 0755);
    snprintf(args, sizeof args, "sweep -o %s --task-command true", dir);
    cr_expect_eq(attnprof(args), EXIT_OUTPUT_EXISTS, "%s", err_text);
    snprintf(args, sizeof args, "sweep -o %s --resume", dir);
    cr_expect_eq(attnprof(args), EXIT_BAD_ARCHIVE, "resume without a plan: %s", err_text);
    remove_tree(dir);
}

Test(sweep_cli, two_workers_one_queue_then_resume)
{
    char dir[256], args[4096], t[1024], out[8192], path[512];
    tmpdir(dir, sizeof dir, "resume");
    /* One task command for both runs (--resume takes only the one it is given, and the
     * same as the plan's): the failing S comes from the environment. */
    char cwd[1024];
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(t, sizeof t,
             "--task-command 'echo {shape} >> %s/ran; %s/tests/sweep/task.sh %s/tests/fixtures/h200-6var {dir} {batch} "
             "{heads} {seq} {dim} ${ATTNPROF_TEST_FAIL_SEQ:-0}'",
             dir, cwd, cwd);
    snprintf(args, sizeof args, "sweep --seq 256:4096:x2 --dim 64,128 --tokens 8192 --heads 4 --gpus 0,1 -o %s %s",
             dir, t);
    setenv("ATTNPROF_TEST_FAIL_SEQ", "4096", 1);
    int first = attnprof_out(args, out, sizeof out);
    unsetenv("ATTNPROF_TEST_FAIL_SEQ");
    cr_assert_eq(first, EXIT_VARIANT_FAILED, "S = 4096 fails: %s", err_text);
    cr_expect(strstr(out, "shapes: 8 complete, 2 failed, 0 missing") != NULL, "%s", out);
    cr_expect(strstr(out, "on 2 workers") != NULL, "%s", out);
    /* Both GPUs took shapes from the queue; each status says which. */
    snprintf(args, sizeof args, "grep -l '\"gpu\": \"0\"' %s/status/*.json | wc -l > %s/g0 && "
             "grep -l '\"gpu\": \"1\"' %s/status/*.json | wc -l > %s/g1", dir, dir, dir, dir);
    cr_assert_eq(system(args), 0);
    snprintf(path, sizeof path, "%s/g0", dir);
    char *g0 = slurp(path);
    snprintf(path, sizeof path, "%s/g1", dir);
    char *g1 = slurp(path);
    cr_expect(atoi(g0) >= 1 && atoi(g1) >= 1 && atoi(g0) + atoi(g1) == 10, "GPU 0: %s GPU 1: %s", g0, g1);
    free(g0), free(g1);
    snprintf(path, sizeof path, "%s/.staging", dir);
    cr_expect(!path_exists(path), "no staging folder left");

    /* Resume: one archive gone, the failed shapes now succeed; only those three run. */
    snprintf(args, sizeof args, "rm -rf %s/shapes/4x4x2048x128 %s/ran", dir, dir);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "sweep --resume -o %s %s", dir, t);
    cr_assert_eq(attnprof_out(args, out, sizeof out), EXIT_OK, "%s %s", err_text, out);
    cr_expect(strstr(out, "resume: 7 of 10 shapes are complete already; running 3") != NULL, "%s", out);
    cr_expect(strstr(out, "shapes: 10 complete, 0 failed, 0 missing") != NULL, "%s", out);
    snprintf(path, sizeof path, "%s/ran", dir);
    char *ran = slurp(path);
    cr_assert(ran);
    cr_expect(strstr(ran, "4x4x2048x128") && strstr(ran, "2x4x4096x64") && strstr(ran, "2x4x4096x128"), "%s", ran);
    int lines = 0;
    for (char *c = ran; (c = strchr(c, '\n')); c++)
        lines++;
    cr_expect_eq(lines, 3, "%s", ran);
    free(ran);
    remove_tree(dir);
}

Test(sweep_cli, gpus_all_follows_cuda_visible_devices_and_check_gpus_runs_on_each)
{
    char dir[256], args[4096], t[1024], out[8192];
    tmpdir(dir, sizeof dir, "gpus");
    task_cmd(t, sizeof t, "h200-6var", "0");
    snprintf(args, sizeof args,
             "sweep --seq 256,512 --dim 64 --tokens 1024 --heads 4 --gpus all --check-gpus -o %s %s", dir, t);
    char env_args[4200];
    snprintf(env_args, sizeof env_args, "%s", args);
    setenv("CUDA_VISIBLE_DEVICES", "3,5", 1);
    int rc = attnprof_out(env_args, out, sizeof out);
    unsetenv("CUDA_VISIBLE_DEVICES");
    cr_assert_eq(rc, EXIT_OK, "%s", err_text);
    char path[512];
    snprintf(path, sizeof path, "%s/replicate/gpu3/run.json", dir);
    cr_expect(path_exists(path));
    snprintf(path, sizeof path, "%s/replicate/gpu5/run.json", dir);
    cr_expect(path_exists(path));
    snprintf(path, sizeof path, "%s/status/replicate-gpu5.json", dir);
    char *st = slurp(path);
    cr_assert(st);
    cr_expect(strstr(st, "\"gpu\": \"5\"") != NULL, "the replica of GPU 5 ran on GPU 5: %s", st);
    free(st);
    /* The two replicas are the same archive: the GPUs agree. */
    cr_expect(strstr(out, "agrees with GPU gpu3") != NULL, "%s", out);
    remove_tree(dir);
}

Test(sweep_cli, slurm_script_without_submitting)
{
    char dir[256], args[1024], out[4096], path[512];
    tmpdir(dir, sizeof dir, "sbatch");
    snprintf(args, sizeof args, "sweep --slurm --partition gpu --time 00:30:00 --seq 256,512 --dim 64 -o %s", dir);
    cr_assert_eq(attnprof_out(args, out, sizeof out), EXIT_OK, "%s", err_text);
    cr_expect(strncmp(out, "sbatch /", 8) == 0 && strstr(out, "/sweep.sbatch\n"), "%s", out);
    snprintf(path, sizeof path, "%s/sweep.sbatch", dir);
    char *s = slurp(path);
    cr_assert(s);
    cr_expect(strstr(s, "#SBATCH --array=0-1\n") && strstr(s, "#SBATCH --gres=gpu:1\n") &&
              strstr(s, "#SBATCH --partition=gpu\n") && strstr(s, "#SBATCH --time=00:30:00\n") &&
              strstr(s, "sweep --task \"$SLURM_ARRAY_TASK_ID\" '"),
              "%s", s);
    free(s);
    /* Nothing ran: collect lists both shapes as missing. */
    snprintf(args, sizeof args, "sweep --collect %s", dir);
    cr_expect_eq(attnprof_out(args, out, sizeof out), EXIT_VARIANT_FAILED, "%s", err_text);
    cr_expect(strstr(out, "shapes: 0 complete, 0 failed, 2 missing") != NULL, "%s", out);
    /* A task index out of range. */
    snprintf(args, sizeof args, "sweep --task 2 %s", dir);
    cr_expect_eq(attnprof(args), EXIT_USAGE, "%s", err_text);
    remove_tree(dir);
}

Test(sweep_cli, interrupt_leaves_only_complete_archives, .timeout = 60)
{
    char dir[256], t[1024], cmd[4096];
    tmpdir(dir, sizeof dir, "sigint");
    char cwd[1024];
    cr_assert(getcwd(cwd, sizeof cwd));
    /* Four shapes on two workers; each task takes 3 s: SIGINT comes while two run. */
    snprintf(t, sizeof t,
             "%s/tests/sweep/task.sh %s/tests/fixtures/h200-6var {dir} {batch} {heads} {seq} {dim} 0 "
             "${ATTNPROF_TEST_SLEEP:-0}",
             cwd, cwd);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", 1);
        dup2(nul, 1);
        dup2(nul, 2);
        setenv("ATTNPROF_TEST_SLEEP", "3", 1);
        execl(attnprof_bin(), attnprof_bin(), "sweep", "--seq", "256:2048:x2", "--dim", "64", "--tokens", "4096",
              "--heads", "4", "--gpus", "0,1", "-o", dir, "--task-command", t, (char *)NULL);
        _exit(127);
    }
    struct timespec nap = {1, 200 * 1000 * 1000};
    nanosleep(&nap, NULL);
    kill(pid, SIGINT);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == EXIT_INTERRUPTED, "exit %d", WEXITSTATUS(st));
    /* The children were stopped (the task's sleep never finished) and nothing partial stays. */
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s/shapes)\" && test ! -e %s/.staging", dir, dir);
    cr_expect_eq(system(cmd), 0, "shapes/ empty, no staging left");
    snprintf(cmd, sizeof cmd, "cd %s && ! ls -A . shapes | grep -q -e part -e tmp%s", dir, "");
    cr_expect_eq(system(cmd), 0, "no partial folder");
    /* And resume finishes it. */
    char args[4096];
    snprintf(args, sizeof args, "sweep --resume -o %s --task-command '%s'", dir, t);
    char out[4096];
    cr_expect_eq(attnprof_out(args, out, sizeof out), EXIT_OK, "%s", err_text);
    cr_expect(strstr(out, "shapes: 4 complete") != NULL, "%s", out);
    remove_tree(dir);
}

Test(sweep_cli, the_default_child_is_attnprof_run_and_its_failure_is_recorded)
{
    /* No GPU here: `attnprof run` exits 3 with one line; the sweep records it per shape and
     * still writes its report. (Without a task command a sweep with no GPU stops before it
     * starts, tests/cli/no_gpu.c; the task here is the default child's command line.) */
    char dir[256], args[1024], out[8192], path[512];
    tmpdir(dir, sizeof dir, "nogpu");
    snprintf(args, sizeof args, "sweep --seq 256,512 --dim 64 --tokens 1024 --iters 2 --no-counters --seed 7 -o %s "
             "--task-command '{exe} run --batch {batch} --heads {heads} --seq {seq} --dim {dim} --iters {iters}{run_flags} "
             "-q --force -o {dir}'", dir);
    cr_assert_eq(attnprof_out(args, out, sizeof out), EXIT_VARIANT_FAILED, "%s", err_text);
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    char *plan = slurp(path);
    cr_assert(plan);
    cr_expect(strstr(plan, "\"run_flags\": \" --no-counters --seed 7\"") != NULL, "run's options go to every shape: %s",
              plan);
    free(plan);
    cr_expect(strstr(out, "shapes: 0 complete, 2 failed, 0 missing") != NULL, "%s", out);
    cr_expect(strstr(out, "failed  4x16x256x64 log ") != NULL && strstr(out, " exit 3: attnprof: ") != NULL, "%s", out);
    snprintf(path, sizeof path, "%s/status/2x16x512x64.json", dir);
    char *st = slurp(path);
    cr_assert(st);
    cr_expect(strstr(st, "\"exit_code\": 3") != NULL, "%s", st);
    free(st);
    snprintf(path, sizeof path, "%s/sweep.html", dir);
    cr_expect(path_exists(path));
    remove_tree(dir);
}

Test(sweep_cli, progress_on_a_terminal_names_shape_gpu_and_phase)
{
    /* `script` gives the sweep a terminal; the task says its phase on ATTNPROF_PROGRESS_FD
     * as `attnprof run` does. */
    char dir[256], cmd[4096], cwd[1024], path[512];
    tmpdir(dir, sizeof dir, "progress");
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(path, sizeof path, "%s.typescript", dir);
    snprintf(cmd, sizeof cmd,
             "script -qec \"%s sweep --seq 256,512 --dim 64 --tokens 1024 --heads 4 --gpus 0,1 -o %s --task-command "
             "'echo flash forward >&\\$ATTNPROF_PROGRESS_FD; sleep 1.2; %s/tests/sweep/task.sh "
             "%s/tests/fixtures/h200-6var {dir} {batch} {heads} {seq} {dim} 0'\" %s >/dev/null",
             attnprof_bin(), dir, cwd, cwd, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char *t = slurp(path);
    cr_assert(t);
    cr_expect(strstr(t, "sweep: 0/2 shapes done, running 2x4x512x64 on GPU 0 (flash forward), 4x4x256x64 on GPU 1 "
                        "(flash forward), ETA") != NULL, "%s", t);
    free(t);
    unlink(path);
    remove_tree(dir);
}

/* When stderr is a file (a Slurm or CI log): one plain line per phase change and per shape
 * done, with its wall time, what is left and an ETA; never a carriage return or escape. */
Test(sweep_cli, progress_in_a_log_is_plain_lines_per_shape_with_an_eta)
{
    char dir[256], args[4096], cwd[1024];
    tmpdir(dir, sizeof dir, "progress-log");
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(args, sizeof args,
             "sweep --seq 256,512 --dim 64 --tokens 1024 --heads 4 -o %s --task-command "
             "'echo flash forward >&$ATTNPROF_PROGRESS_FD; sleep 0.3; %s/tests/sweep/task.sh "
             "%s/tests/fixtures/h200-6var {dir} {batch} {heads} {seq} {dim} 0'",
             dir, cwd, cwd);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_expect(strchr(err_text, '\r') == NULL && strchr(err_text, '\033') == NULL, "plain lines only: %s", err_text);
    cr_expect(strstr(err_text, "sweep: 2x4x512x64: flash forward\n") != NULL, "the phase: %s", err_text);
    cr_expect(strstr(err_text, "sweep: 2x4x512x64 done in ") != NULL, "%s", err_text);
    cr_expect(strstr(err_text, "; 1/2 shapes done, 1 left, ETA ") != NULL, "%s", err_text);
    cr_expect(strstr(err_text, "; 2/2 shapes done, 0 left, ETA 0m00s\n") != NULL, "%s", err_text);
    remove_tree(dir);
    /* -q: nothing. */
    snprintf(args, sizeof args, "sweep -q --seq 256 --dim 64 --tokens 1024 --heads 4 -o %s --task-command "
             "'%s/tests/sweep/task.sh %s/tests/fixtures/h200-6var {dir} {batch} {heads} {seq} {dim} 0'",
             dir, cwd, cwd);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_expect(strstr(err_text, "sweep: ") == NULL, "-q prints no progress: %s", err_text);
    remove_tree(dir);
}

/* The small sweep recorded on the H200 by `bench/sweep_h200.sh fixture` (S 256, 1024,
 * 4096, 16384 x D 64, 128 at B·S = 32768, 3 forwards), committed as
 * tests/fixtures/sweep-h200. Until it is committed this test says so and is skipped. */
Test(sweep_collect, the_recorded_h200_sweep)
{
    const char *src = "tests/fixtures/sweep-h200";
    char probe[256];
    snprintf(probe, sizeof probe, "%s/sweep.json", src);
    if (!path_exists(probe))
        cr_skip_test("%s is not committed yet: record it with bench/sweep_h200.sh fixture", src);
    char dir[256], err[512];
    tmpdir(dir, sizeof dir, "h200");
    sh("cp -r %s %s", src, dir);
    static sweep_data m;
    cr_assert_eq(sweep_load(&m, dir, 2, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect_eq(m.n_complete, m.n_shapes, "every shape of the fixture is complete");
    cr_expect_eq(m.n_dims, 2);
    cr_expect_str_eq(m.gpu_name, "NVIDIA H200");
    for (int i = 0; i < m.n_shapes; i++) {
        const sweep_shape *x = &m.shapes[i];
        cr_expect(strncmp(x->gpu_uuid, "GPU-", 4) == 0, "%s: GPU UUID recorded: '%s'", x->name, x->gpu_uuid);
        cr_expect_eq((long)x->shape.batch * x->shape.seq, 32768);
        for (int k = 0; k < m.n_variants; k++) {
            const sweep_point *p = &x->p[k];
            cr_expect(p->state == SWEEP_OK || p->state == SWEEP_SKIPPED, "%s %s: %d %s", x->name, m.variants[k],
                      p->state, p->reason);
            if (p->state == SWEEP_OK)
                cr_expect(isfinite(p->device_bytes) && p->device_bytes > 0 && p->device_bytes < m.gpu_bytes,
                          "%s %s: device bytes recorded", x->name, m.variants[k]);
        }
    }
    /* At B·S fixed, every variant's work grows as S: the fused kernels' exponents are
     * near 1 over 256…16384, and their throughput grows with S. */
    for (int i = 0; i < m.n_findings; i++) {
        const sweep_finding *f = &m.findings[i];
        double k = findings_value(f, "exponent"), r2 = findings_value(f, "r2");
        if (f->kind == FK_SWEEP_SCALING && (!strcmp(f->subject, "flash") || !strcmp(f->subject, "efficient")))
            cr_expect(k > 0.5 && k < 1.6 && r2 > 0.9, "%s D=%g: S^%.2f R²=%.3f", f->subject,
                      findings_value(f, "dim"), k, r2);
    }
    cr_expect(find(&m, FK_SWEEP_BEST_TFLOPS, "flash", NULL) != NULL);
    cr_assert_eq(sweep_write(&m, FIG_PNG, err, sizeof err), EXIT_OK, "%s", err);
    sweep_free(&m);
    remove_tree(dir);
}

Test(sweep_cli, a_slurm_task_runs_its_shape_and_says_when_it_was_stopped, .timeout = 60)
{
    char dir[256], args[4096], cwd[1024], path[512], out[4096];
    tmpdir(dir, sizeof dir, "task");
    cr_assert(getcwd(cwd, sizeof cwd));
    char t[1024];
    snprintf(t, sizeof t, "%s/tests/sweep/task.sh %s/tests/fixtures/h200-6var {dir} {batch} {heads} {seq} {dim} 0 2", cwd,
             cwd);
    snprintf(args, sizeof args,
             "sweep --slurm --no-gres --seq 256,512 --dim 64 --tokens 1024 --heads 4 -o %s --slurm-task-command '%s'",
             dir, t);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    setenv("SLURM_ARRAY_JOB_ID", "99", 1);
    /* Task 1, stopped by SIGTERM (a time limit) while its shape runs. */
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 1);
        dup2(nul, 2);
        execl(attnprof_bin(), attnprof_bin(), "sweep", "--task", "1", "--task-command", t, dir, (char *)NULL);
        _exit(127);
    }
    struct timespec nap = {0, 700 * 1000 * 1000};
    nanosleep(&nap, NULL);
    kill(pid, SIGTERM);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == EXIT_INTERRUPTED, "exit %d", WEXITSTATUS(st));
    snprintf(path, sizeof path, "%s/status/2x4x512x64.json", dir);
    char *s = slurp(path);
    cr_assert(s, "a status for the stopped task");
    cr_expect(strstr(s, "\"exit_code\": 130") && strstr(s, "stopped by signal 15") && strstr(s, "\"slurm_job_id\": \"99\"") &&
              strstr(s, "\"log\": \"logs/99_1.out\""), "%s", s);
    free(s);
    snprintf(path, sizeof path, "%s/shapes/2x4x512x64", dir);
    cr_expect(!path_exists(path), "nothing partial in shapes/");
    /* Task 0 runs to the end. */
    snprintf(args, sizeof args, "sweep --task 0 --task-command '%s' %s", t, dir);
    cr_expect_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_expect(strstr(err_text, "task.sh: 4 x 4 x 256 x 64") != NULL, "the child's stderr is in the task's log: %s",
              err_text);
    unsetenv("SLURM_ARRAY_JOB_ID");
    snprintf(args, sizeof args, "sweep --collect %s", dir);
    cr_expect_eq(attnprof_out(args, out, sizeof out), EXIT_VARIANT_FAILED);
    cr_expect(strstr(out, "shapes: 1 complete, 1 failed, 0 missing") != NULL, "%s", out);
    cr_expect(strstr(out, "failed  2x4x512x64 job 99_1 log ") != NULL && strstr(out, "exit 130: stopped by signal 15"),
              "%s", out);
    /* --force replaces a sweep, never another folder. */
    snprintf(args, sizeof args, "mkdir -p %s-other && touch %s-other/keep", dir, dir);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "sweep -o %s-other --force --task-command true", dir);
    cr_expect_eq(attnprof(args), EXIT_OUTPUT_EXISTS, "%s", err_text);
    snprintf(path, sizeof path, "%s-other/keep", dir);
    cr_expect(path_exists(path));
    snprintf(path, sizeof path, "%s-other", dir);
    remove_tree(path);
    remove_tree(dir);
}

Test(sweep_cli, a_variant_run_refuses_is_left_out_and_the_shape_runs_again)
{
    char dir[256], args[4096], cwd[1024], path[512], out[8192];
    tmpdir(dir, sizeof dir, "retry");
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(args, sizeof args,
             "sweep --seq 256,512 --dim 64 --tokens 1024 --heads 4 --variants naive,flash,cudnn -o %s --task-command "
             "'%s/tests/sweep/task.sh %s/tests/fixtures/h200-6var {dir} {batch} {heads} {seq} {dim} 512 0 {variants}'",
             dir, cwd, cwd);
    cr_assert_eq(attnprof_out(args, out, sizeof out), EXIT_OK, "%s %s", err_text, out);
    cr_expect(strstr(out, "shapes: 2 complete, 0 failed") != NULL, "%s", out);
    snprintf(path, sizeof path, "%s/status/2x4x512x64.json", dir);
    char *s = slurp(path);
    cr_assert(s);
    cr_expect(strstr(s, "\"variant\": \"naive\"") && strstr(s, "\"device_bytes\": 549755813888") &&
              strstr(s, "\"exit_code\": 0"), "%s", s);
    free(s);
    snprintf(path, sizeof path, "%s/logs/2x4x512x64.log", dir);
    s = slurp(path);
    cr_assert(s);
    cr_expect(strstr(s, "task.sh: variants 'flash,cudnn'") != NULL, "run again without naive: %s", s);
    free(s);
    remove_tree(dir);
}

Test(sweep_collect, variants_the_sweep_left_out_are_skipped_with_their_reason)
{
    char dir[256], err[512];
    tmpdir(dir, sizeof dir, "skips");
    sh("mkdir -p %s/shapes && cp -r tests/fixtures/h200-4var %s/shapes/2x4x256x64", dir, dir);
    sweep_status st = {.exit_code = 0, .slurm_task = -1, .n_skipped = 1};
    snprintf(st.skipped[0].variant, sizeof st.skipped[0].variant, "flash");
    snprintf(st.skipped[0].reason, sizeof st.skipped[0].reason, "variant flash cannot take 2x4x256x64: head dim");
    st.skipped[0].device_bytes = NAN;
    cr_assert_eq(sweep_status_write(dir, "2x4x256x64", &st, err, sizeof err), 0, "%s", err);
    static sweep_data m;
    cr_assert_eq(sweep_load(&m, dir, 1, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(m.n_variants, 5, "4 in the archive + flash from the status");
    int flash = -1, cudnn = -1;
    for (int k = 0; k < m.n_variants; k++) {
        if (!strcmp(m.variants[k], "flash")) flash = k;
        if (!strcmp(m.variants[k], "cudnn")) cudnn = k;
    }
    cr_assert(flash >= 0 && cudnn >= 0);
    cr_expect_eq(m.shapes[0].p[flash].state, SWEEP_SKIPPED);
    cr_expect(strstr(m.shapes[0].p[flash].reason, "head dim") != NULL);
    cr_expect_eq(m.shapes[0].p[cudnn].state, SWEEP_OK);
    sweep_free(&m);
    remove_tree(dir);
}

Test(sweep_findings, tensor_peak_and_share_of_it)
{
    cr_expect_float_eq(sweep_peak_tflops(9, 0, 132, 1980000), 4096.0 * 132 * 1.98e9 / 1e12, 1e-9, "H200");
    cr_expect_float_eq(sweep_peak_tflops(8, 0, 108, 1410000), 2048.0 * 108 * 1.41e9 / 1e12, 1e-9, "A100");
    cr_expect(isnan(sweep_peak_tflops(8, 6, 84, 1700000)), "a GPU it does not know: no roof");
    cr_expect(isnan(sweep_peak_tflops(9, 0, 132, 0)));
    static sweep_data m;
    synthetic(&m);
    m.roof_tflops = 1000;
    m.gemm_tflops = NAN;
    m.roof_name = "dense BF16 tensor peak";
    sweep_derive(&m);
    const sweep_finding *f = find(&m, FK_SWEEP_BEST_TFLOPS, "flash", NULL);
    cr_assert(f);
    cr_expect_float_eq(findings_value(f, "roof_share"), findings_value(f, "tflops") / 1000, 1e-12);
    char text[512];
    sweep_finding_text(&m, f, text, sizeof text);
    cr_expect(strstr(text, "of the dense BF16 tensor peak (1000 TFLOP/s at the recorded clock)") != NULL, "%s", text);
    /* Headlines first. */
    cr_expect_eq(m.findings[0].kind, FK_SWEEP_CROSSOVER);
    for (int i = 1; i < m.n_findings; i++)
        cr_expect(m.findings[i - 1].kind != FK_SWEEP_SCALING || m.findings[i].kind == FK_SWEEP_SCALING ||
                  m.findings[i].kind == FK_SWEEP_OPS_CHANGE);
    sweep_free(&m);
}

/* The run options a sweep passes to every shape, as sweep.json holds them: the two that
 * take a number take exactly one whole number. */
Test(sweep_plan, run_flags_take_counters_max_gib_with_a_number)
{
    char bad[80];
    cr_expect_eq(sweep_run_flags_valid(" --no-calibrate --counters-max-gib 8 --seed 3", bad, sizeof bad), EXIT_OK, "%s", bad);
    cr_expect_eq(sweep_run_flags_valid(" --counters-max-gib", bad, sizeof bad), EXIT_BAD_ARCHIVE);
    cr_expect_eq(sweep_run_flags_valid(" --counters-max-gib 8x", bad, sizeof bad), EXIT_BAD_ARCHIVE);
    cr_expect_eq(sweep_run_flags_valid(" --counters-max-gib ;rm", bad, sizeof bad), EXIT_BAD_ARCHIVE);
}

/* {iters} in a task command: the sweep's --iters N, or "auto" (run's default stop rule) when
 * the sweep was given none or --iters auto. */
Test(sweep_cli, iters_placeholder_is_the_number_or_auto)
{
    const char *given[] = {"", "--iters 7", "--iters auto"}, *want[] = {"auto\n", "7\n", "auto\n"};
    char cwd[1024];
    cr_assert(getcwd(cwd, sizeof cwd));
    for (int i = 0; i < 3; i++) {
        char dir[256], args[4096], path[512];
        tmpdir(dir, sizeof dir, "itersph");
        snprintf(args, sizeof args,
                 "sweep -o %s --seq 256 --dim 64 --tokens 512 --heads 4 %s --task-command 'echo {iters} >> %s.iters; "
                 "%s/tests/sweep/task.sh %s/tests/fixtures/h200-6var {dir} {batch} {heads} {seq} {dim} 0' -q",
                 dir, given[i], dir, cwd, cwd);
        cr_assert_eq(attnprof(args), EXIT_OK, "%s: %s", given[i], err_text);
        snprintf(path, sizeof path, "%s.iters", dir);
        char *text = slurp(path);
        cr_assert(text, "the task command ran");
        cr_expect_str_eq(text, want[i], "%s", given[i]);
        free(text);
        unlink(path);
        remove_tree(dir);
    }
}

/* Issue 37, item 12: the terminal of `sweep --collect` shows the first findings and says how
 * many of how many it shows (it showed 12 of 16 and said nothing); every finding it shows is one
 * of sweep.md's, in sweep.md's order. */
Test(sweep_cli, the_terminal_says_how_many_findings_it_shows)
{
    char dir[256], err[512], args[512];
    tmpdir(dir, sizeof dir, "shown");
    sh("cp -r %s %s", "tests/fixtures/sweep-h200", dir);
    static char out[1 << 16];
    snprintf(args, sizeof args, "sweep --collect %s", dir);
    cr_assert_eq(attnprof_out(args, out, sizeof out), EXIT_OK, "%s", err_text);
    static sweep_data m;
    cr_assert_eq(sweep_load(&m, dir, 1, err, sizeof err), EXIT_OK, "%s", err);
    char mdpath[300];
    snprintf(mdpath, sizeof mdpath, "%s/sweep.md", dir);
    char *md = slurp_required(mdpath);
    int shown = 0;
    const char *after = md;
    for (const char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        if (strncmp(l, "- ", 2))
            continue;
        shown++;
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(l, "\n"), l);
        const char *at = strstr(after, line);
        cr_expect(at != NULL, "a finding on the terminal is sweep.md's, in its order: %s", line);
        if (at)
            after = at + strlen(line);
    }
    cr_assert_gt(m.n_findings, shown, "the fixture has more findings (%d) than the terminal shows (%d)", m.n_findings,
                 shown);
    char note[128];
    snprintf(note, sizeof note, "(%d of %d findings shown, headlines first; sweep.md lists them all)", shown,
             m.n_findings);
    cr_expect_not_null(strstr(out, note), "the terminal says %s:\n%s", note, out);
    free(md);
    sweep_free(&m);
    remove_tree(dir);
}

/* sweep --backward: run passes --backward to every shape, and the sweep reads each shape's
 * backwards (the H200 --backward archive as a one-shape sweep): CUDA µs per backward and TFLOP/s
 * at 2.5 times the forward's FLOPs, in sweep.md's backward tables. */
Test(sweep_plan, backward_flag_passed_on_and_backwards_read)
{
    char bad[80];
    cr_expect_eq(sweep_run_flags_valid(" --no-counters --backward", bad, sizeof bad), EXIT_OK, "%s", bad);
    char dir[256], err[512];
    tmpdir(dir, sizeof dir, "backward");
    sh("mkdir -p %s/shapes && cp -r tests/fixtures/h200-backward %s/shapes/8x16x1024x64", dir, dir);
    static sweep_data m;
    cr_assert_eq(sweep_load(&m, dir, 1, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(m.backward, 1);
    cr_assert_eq(m.n_shapes, 1);
    int flash = -1;
    for (int k = 0; k < m.n_variants; k++)
        flash = strcmp(m.variants[k], "flash") ? flash : k;
    cr_assert_geq(flash, 0);
    const sweep_point *p = &m.shapes[0].p[flash];
    cr_assert_eq(p->bwd_recorded, 1);
    cr_assert(p->bwd_us > 200 && p->bwd_us < 400, "%g", p->bwd_us);
    const double flops = 2.5 * 4.0 * 8 * 16 * 1024.0 * 1024 * 64 / 2; /* causal */
    cr_assert_float_eq(p->bwd_tflops, flops / (p->bwd_us * 1e-6) / 1e12, 1e-9);
    cr_assert_eq(sweep_write(&m, 0, err, sizeof err), EXIT_OK, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/sweep.md", dir);
    char *md = slurp(path);
    cr_assert(md && strstr(md, "## Time per backward, D = 64") && strstr(md, "## Backward TFLOP/s, D = 64"));
    free(md);
    sweep_free(&m);
    remove_tree(dir);
}
