/* attnprof sweep over grouped-query and decode shapes without a GPU: --kv-heads and
 * --q-seq lists crossed with the planned shapes (names, sweep.json, the child's command
 * line), the decode FLOPs, and collect on the recorded H200 decode sweep
 * (tests/fixtures/sweep-h200-decode: B = 8, H = 32, Hkv = 8, one query, KV length 2k, 16k,
 * 128k): its family, K+V rates, findings, tables and the decode figure. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"
#include "exit_codes.h"
#include "figures.h"
#include "finding.h"
#include "sweep_doc.h"

#include "run_cli.h"
#include "slurp.h"

static void fresh_dir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "/tmp/attnprof-sweep-decode-%s-%d", tag, (int)getpid());
    remove_tree(out);
}

Test(sweep_plan, kv_heads_and_q_seq_lists_cross_the_shapes)
{
    static sweep_plan p;
    char err[256];
    int seq[] = {2048, 8192}, dim[] = {128}, kv[] = {8, 32}, q[] = {1, 2048};
    cr_assert_eq(sweep_plan_shapes(&p, seq, 2, dim, 1, 8, 0, 32, err, sizeof err), EXIT_OK);
    cr_assert_eq(sweep_plan_cross(&p, kv, 2, q, 2, err, sizeof err), EXIT_OK, "%s", err);
    /* Hkv 32 = H and q 2048 = S at S = 2048 are the plain shape: stored as 0 */
    cr_assert_eq(p.n_shapes, 8);
    char name[64];
    sweep_shape_name(&p.shapes[0], name, sizeof name);
    cr_expect_str_eq(name, "8x32x2048x128", "Hkv 32 and q 2048 at S = 2048: the plain name");
    int found = 0;
    for (int i = 0; i < p.n_shapes; i++) {
        sweep_shape_name(&p.shapes[i], name, sizeof name);
        found += !strcmp(name, "8x32x8192x128-kv8-q1") || !strcmp(name, "8x32x8192x128-q2048");
        attn_shape back;
        cr_expect_eq(sweep_shape_parse(name, &back), EXIT_OK, "%s", name);
        cr_expect(!memcmp(&back, &p.shapes[i], sizeof back), "%s round trip", name);
        if (i)
            cr_expect(p.shapes[i - 1].kv_heads <= p.shapes[i].kv_heads, "ordered by Hkv before S");
    }
    cr_expect_eq(found, 2);
    const char *bad_names[] = {"8x32x2048x128-kv", "8x32x2048x128-q0", "8x32x2048x128-q1-kv8", "8x32x2048x128-kv08"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        attn_shape s;
        cr_expect_eq(sweep_shape_parse(bad_names[i], &s), EXIT_BAD_ARCHIVE, "%s", bad_names[i]);
    }

    int odd[] = {5}, many[] = {4096};
    cr_assert_eq(sweep_plan_shapes(&p, seq, 2, dim, 1, 8, 0, 32, err, sizeof err), EXIT_OK);
    cr_expect_eq(sweep_plan_cross(&p, odd, 1, NULL, 0, err, sizeof err), EXIT_USAGE);
    cr_expect(strstr(err, "--kv-heads 5") != NULL, "%s", err);
    cr_assert_eq(sweep_plan_shapes(&p, seq, 2, dim, 1, 8, 0, 32, err, sizeof err), EXIT_OK);
    cr_expect_eq(sweep_plan_cross(&p, NULL, 0, many, 1, err, sizeof err), EXIT_USAGE);
    cr_expect(strstr(err, "--q-seq 4096") != NULL, "%s", err);

    /* decode FLOPs: query i of q sees S - q + i + 1 keys (bottom-right) */
    attn_shape d = {.batch = 2, .heads = 4, .seq = 100, .dim = 8, .q_seq = 3};
    cr_expect_float_eq(sweep_flops(&d, 1), 4.0 * 2 * 4 * 8 * (98 + 99 + 100), 1e-6);
    cr_expect_float_eq(sweep_flops(&d, 0), 4.0 * 2 * 4 * 8 * 3 * 100, 1e-6);
}

Test(sweep_plan, kv_heads_and_q_seq_survive_sweep_json)
{
    static sweep_plan p, back;
    char dir[256], err[256];
    fresh_dir(dir, sizeof dir, "json");
    cr_assert_eq(mkdir(dir, 0755), 0);
    int seq[] = {4096}, dim[] = {64}, kv[] = {2}, q[] = {1};
    cr_assert_eq(sweep_plan_shapes(&p, seq, 1, dim, 1, 4, 0, 16, err, sizeof err), EXIT_OK);
    cr_assert_eq(sweep_plan_cross(&p, kv, 1, q, 1, err, sizeof err), EXIT_OK);
    cr_assert_eq(sweep_plan_write(&p, dir, err, sizeof err), EXIT_OK, "%s", err);
    int found = 0;
    cr_assert_eq(sweep_plan_read(&back, dir, &found, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(found && back.n_shapes == 1);
    cr_expect_eq(back.shapes[0].kv_heads, 2);
    cr_expect_eq(back.shapes[0].q_seq, 1);
    /* a K/V head count that does not divide H is no shape attnprof wrote */
    char path[512];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    char *text = slurp_required(path);
    char *at = strstr(text, "\"kv_heads\": 2");
    cr_assert(at, "%s", text);
    at[12] = '3';
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    cr_expect_eq(sweep_plan_read(&back, dir, &found, err, sizeof err), EXIT_BAD_ARCHIVE);
    remove_tree(dir);
}

Test(sweep_cli, kv_heads_and_q_seq_lists_reach_the_task_command, .timeout = 60)
{
    char dir[256], args[1024];
    fresh_dir(dir, sizeof dir, "cli");
    snprintf(args, sizeof args,
             "sweep -q -o %s --seq 2048,8192 --heads 32 --kv-heads 8,32 --q-seq 1 --dim 128 --batch 8 "
             "--task-command 'echo {shape} {kv_heads} {q_seq} >> %s.tasks; exit 3'", dir, dir);
    cr_expect_eq(attnprof(args), EXIT_VARIANT_FAILED, "every task exits 3: %s", err_text);
    char path[512];
    snprintf(path, sizeof path, "%s.tasks", dir);
    char *lines = slurp_required(path);
    cr_expect(strstr(lines, "8x32x8192x128-kv8-q1 8 1\n") != NULL, "%s", lines);
    cr_expect(strstr(lines, "8x32x2048x128-q1 32 1\n") != NULL, "Hkv 32 = H: the plain shape: %s", lines);
    free(lines);
    remove(path);
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    char *plan = slurp_required(path);
    cr_expect(strstr(plan, "\"kv_heads\": 8") && strstr(plan, "\"q_seq\": 1"), "%s", plan);
    free(plan);
    remove_tree(dir);
}

static const sweep_finding *find_kind(const sweep_data *m, finding_kind id, const char *v)
{
    for (int i = 0; i < m->n_findings; i++)
        if (m->findings[i].kind == id && !strcmp(m->findings[i].subject, v))
            return &m->findings[i];
    return NULL;
}

Test(sweep_collect, the_recorded_h200_decode_sweep, .timeout = 120)
{
    char dir[256], err[512], cmd[1024];
    fresh_dir(dir, sizeof dir, "h200");
    snprintf(cmd, sizeof cmd, "cp -r tests/fixtures/sweep-h200-decode %s", dir);
    cr_assert_eq(system(cmd), 0);
    static sweep_data m;
    cr_assert_eq(sweep_load(&m, dir, 2, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect_eq(m.n_complete, 3);
    cr_assert_eq(m.n_families, 1, "one curve per variant: D 128, Hkv 8, one query");
    cr_expect(m.families[0].dim == 128 && m.families[0].kv_heads == 8 && m.families[0].q_seq == 1);
    cr_expect(sweep_has_decode(&m));
    cr_expect(isfinite(m.copy_tbps) && m.copy_tbps > 2 && m.copy_tbps < 6, "the runs' copy ceiling: %g TB/s",
              m.copy_tbps);
    int flash = -1, naive = -1;
    for (int k = 0; k < m.n_variants; k++) {
        flash = !strcmp(m.variants[k], "flash") ? k : flash;
        naive = !strcmp(m.variants[k], "naive") ? k : naive;
    }
    cr_assert(flash >= 0 && naive >= 0);
    for (int i = 0; i < m.n_shapes; i++) {
        const sweep_shape *x = &m.shapes[i];
        cr_expect(x->shape.kv_heads == 8 && x->shape.q_seq == 1, "%s", x->name);
        for (int k = 0; k < m.n_variants; k++) {
            const sweep_point *p = &x->p[k];
            cr_assert_eq(p->state, SWEEP_OK, "%s %s: %s", x->name, m.variants[k], p->reason);
            double bytes = 2.0 * 2 * x->shape.batch * 8 * x->shape.seq * x->shape.dim;
            cr_expect_float_eq(p->kv_gbps, bytes / (p->us * 1e-6) / 1e9, 1e-6, "%s %s", x->name, m.variants[k]);
        }
        /* the split-KV kernel reads K and V faster than the series' eager code with its repeat_kv copies */
        cr_expect_gt(x->p[flash].kv_gbps, 2 * x->p[naive].kv_gbps, "%s", x->name);
    }
    const sweep_finding *bw = find_kind(&m, FK_SWEEP_BEST_KV_BANDWIDTH, "flash");
    cr_assert(bw, "flash's best K+V rate");
    cr_expect_float_eq(findings_value(bw, "copy_share"), findings_value(bw, "gbps") / (m.copy_tbps * 1e3), 1e-9);
    cr_expect_eq((int)findings_value(bw, "kv_heads"), 8);
    cr_expect_null(find_kind(&m, FK_SWEEP_BEST_TFLOPS, "flash"), "TFLOP/s is not the measure of a decode step");
    const sweep_finding *fit = find_kind(&m, FK_SWEEP_SCALING, "flash");
    cr_assert(fit);
    cr_expect(strstr(fit->text, "D = 128, Hkv = 8, 1 query") != NULL, "%s", fit->text);

    cr_assert_eq(sweep_write(&m, FIG_PNG, err, sizeof err), EXIT_OK, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/figures/sweep-decode.png", dir);
    cr_expect(path_exists(path), "the decode figure is drawn");
    snprintf(path, sizeof path, "%s/sweep.md", dir);
    char *md = slurp_required(path);
    cr_expect(strstr(md, "## K+V GB/s, D = 128, Hkv = 8, 1 query") != NULL);
    cr_expect(strstr(md, "figures/sweep-decode.png") != NULL);
    free(md);
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    char *csv = slurp_required(path);
    cr_expect(strstr(csv, "8x32x131072x128-kv8-q1,8,32,131072,128,") != NULL);
    free(csv);
    sweep_free(&m);
    remove_tree(dir);

    /* a sweep of prefill shapes draws no decode figure */
    fresh_dir(dir, sizeof dir, "prefill");
    snprintf(cmd, sizeof cmd, "cp -r tests/fixtures/sweep-h200 %s", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(sweep_load(&m, dir, 2, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect(!sweep_has_decode(&m));
    cr_assert_eq(sweep_write(&m, FIG_PNG, err, sizeof err), EXIT_OK, "%s", err);
    snprintf(path, sizeof path, "%s/figures/sweep-decode.png", dir);
    cr_expect(!path_exists(path));
    sweep_free(&m);
    remove_tree(dir);
}
