/* recorder/gqa_fixtures: the two H200 archives of grouped-query attention and decode
 * (tests/fixtures/h200-gqa: 2x16x512x64 with 4 key/value heads; tests/fixtures/h200-decode:
 * 4x32x4096x128 with 8 key/value heads and one query) read back, analysed and rendered without a
 * GPU: what each variant launched against its expectation at that shape, the expansion copies,
 * the split-KV decode's two kernels and split count, cuDNN's grouped-query/decode graph. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture.h"
#include "archive_read.h"
#include "predict.h"
#include "run_cli.h"

#define GQA "tests/fixtures/h200-gqa"
#define DECODE "tests/fixtures/h200-decode"

static const attn_fact *fact_of(const variant_result *r, const char *key)
{
    for (int i = 0; i < r->facts.n; i++)
        if (!strcmp(r->facts.item[i].key, key))
            return &r->facts.item[i];
    return NULL;
}

static const variant_analysis *variant(const fixture *f, const char *name)
{
    for (int i = 0; i < f->a.n; i++)
        if (!strcmp(f->a.v[i].result->name, name))
            return &f->a.v[i];
    cr_assert_fail("no variant %s", name);
    return NULL;
}

/* Every variant ran, correct against FP64, and launched what it expected at this shape (a library
 * Memset aside); cudnn (its grouped-query/decode graph, cudnn.c) too, except at one query where
 * cuDNN may add its own split-KV merge (cudnn::fusion::lean_reduction_kernel) to the one kernel
 * predicted: then the report says so (unexpected_op_count, 2 operations where 1 was expected). */
static void check_ops(const fixture *f)
{
    for (int i = 0; i < f->a.n; i++) {
        const variant_analysis *va = &f->a.v[i];
        const variant_result *r = va->result;
        cr_assert_eq(r->status, VARIANT_OK, "%s: %s", r->name, r->error);
        cr_assert_lt(r->rel_error, 1e-2, "%s", r->name);
        const int extra = va->ops_per_forward - r->expected_ops; /* cuBLAS's workspace Memset at some shapes */
        if (!strcmp(r->name, "cudnn") && f->r.shape.q_seq == 1 && extra == 1) {
            const finding *u = findings_find(va, "unexpected_op_count");
            cr_assert_not_null(u, "cuDNN's extra kernel is said");
            cr_assert_eq(findings_value(u, "ops"), 2);
            cr_assert_eq(findings_value(u, "expected_ops"), 1);
            continue;
        }
        cr_assert(extra == 0 || (extra > 0 && extra <= va->memset_per_forward), "%s: %d ops, expected %d", r->name,
                  va->ops_per_forward, r->expected_ops);
    }
}

Test(gqa_fixtures, the_gqa_archive_records_the_expansion_copies_and_native_gqa)
{
    static fixture f;
    fixture_load(&f, GQA);
    cr_assert_eq(f.r.shape.heads, 16);
    cr_assert_eq(f.r.shape.kv_heads, 4);
    cr_assert_eq(f.r.shape.q_seq, 0);
    check_ops(&f);
    /* naive: GEMM, scale, clone, fill, softmax, GEMM and the two repeat_kv copies. */
    cr_assert_eq(variant(&f, "naive")->result->expected_ops, 8);
    cr_assert_eq(variant(&f, "naive_inplace")->result->expected_ops, 7);
    cr_assert_eq(variant(&f, "math")->result->expected_ops, 21);
    for (const char *const *n = (const char *const[]){"naive", "naive_inplace", "math", NULL}; *n; n++) {
        const attn_fact *x = fact_of(variant(&f, *n)->result, "kv_expansion_bytes");
        cr_assert_not_null(x, "%s", *n);
        cr_assert_gt(x->number, 0);
    }
    /* K and V of 2x4x512x64 bf16 expanded to 16 heads: 2 x 2x16x512x64x2 bytes (math: FP32, twice that). */
    cr_assert_float_eq(fact_of(variant(&f, "naive")->result, "kv_expansion_bytes")->number, 2.0 * 2 * 16 * 512 * 64 * 2,
                       0.5);
    cr_assert_float_eq(fact_of(variant(&f, "math")->result, "kv_expansion_bytes")->number, 2.0 * 2 * 16 * 512 * 64 * 4,
                       0.5);
    for (const char *const *n = (const char *const[]){"flash", "efficient", NULL}; *n; n++) {
        const attn_fact *x = fact_of(variant(&f, *n)->result, "gqa");
        cr_assert_not_null(x, "%s", *n);
        cr_assert_float_eq(x->number, 4, 1e-9);
        cr_assert_eq(variant(&f, *n)->kernels_per_forward, 1, "%s: native, no copy kernel", *n);
    }
    fixture_free(&f);
}

Test(gqa_fixtures, the_decode_archive_records_the_split_kv_kernel_and_its_combine)
{
    static fixture f;
    fixture_load(&f, DECODE);
    cr_assert_eq(f.r.shape.kv_heads, 8);
    cr_assert_eq(f.r.shape.q_seq, 1);
    cr_assert_eq(f.r.shape.seq, 4096);
    check_ops(&f);
    const variant_analysis *fl = variant(&f, "flash");
    const attn_fact *split = fact_of(fl->result, "split_count");
    cr_assert_not_null(split);
    cr_assert_gt(split->number, 1, "4 x 8 key/value heads fill a quarter of 132 multiprocessors: split");
    cr_assert_eq(fl->result->expected_ops, 2);
    cr_assert_eq(fl->kernels_per_forward, 2, "the split kernel and the combine");
    cr_assert(strstr(fact_of(fl->result, "kernel")->value, "attnprof_flash_decode_combine_bf16"));
    cr_assert_not_null(fact_of(variant(&f, "efficient")->result, "decode"));
    cr_assert_not_null(fact_of(variant(&f, "math")->result, "decode_mask"));
    fixture_free(&f);
}

/* The decode_split finding of the decode archive: the fixed grid (the archive predates the
 * decode_grid fact), the split count of the recorder's fact, and the combine kernel's time and
 * share of the variant's CUDA time as the records give them. No finding where there is no split. */
Test(gqa_fixtures, the_decode_split_finding_gives_the_splits_and_the_combine_share)
{
    static fixture f;
    fixture_load(&f, DECODE);
    const variant_analysis *fl = variant(&f, "flash");
    const finding *d = findings_find(fl, "decode_split");
    cr_assert_not_null(d);
    cr_assert_eq(findings_value(d, "splits"), fact_of(fl->result, "split_count")->number);
    cr_assert_eq(findings_value(d, "balanced"), 0);
    cr_assert_eq(findings_value(d, "merged_in_kernel"), 0);
    cr_assert_eq(findings_value(d, "combine_kernels"), 1);
    const double us = findings_value(d, "combine_us"), pct = findings_value(d, "combine_pct");
    cr_assert(us > 0 && us < fl->cuda_us.median, "combine %.2f us of %.2f", us, fl->cuda_us.median);
    cr_assert_float_eq(pct, 100.0 * us / fl->cuda_us.median, 1e-9);
    for (const char *const *n = (const char *const[]){"naive", "math", "efficient", NULL}; *n; n++)
        cr_assert_null(findings_find(variant(&f, *n), "decode_split"), "%s", *n);
    fixture_free(&f);
    static fixture g;
    fixture_load(&g, GQA);
    cr_assert_null(findings_find(variant(&g, "flash"), "decode_split"), "prefill: no split-KV kernel");
    fixture_free(&g);
}

/* The decode archive as the recorder now writes it where the split kernel merges its own splits (few query rows
 * a key/value head on the TMA ring): the decode_grid fact says so and no combine kernel ran (its records renamed
 * here to the split kernel's). The finding says the splits were merged inside the kernel, not that a combine
 * kernel took 0 µs. */
Test(gqa_fixtures, the_decode_split_finding_of_a_kernel_that_merges_its_own_splits)
{
    static fixture f;
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/trace.json", DECODE);
    cr_assert_eq(trace_read_json(&f.t, path, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/run.json", DECODE);
    cr_assert_eq(run_info_read_json(&f.r, path, err, sizeof err), 0, "%s", err);
    int renamed = 0;
    for (size_t i = 0; i < f.t.n_ops; i++)
        if (f.t.ops[i].name && strstr(f.t.ops[i].name, "decode_combine")) {
            free(f.t.ops[i].name);
            f.t.ops[i].name = strdup("attnprof_flash_decode_bf16_d128_16x32_w4_s2_tma");
            renamed++;
        }
    cr_assert_gt(renamed, 0, "the fixture's combine kernels");
    for (int i = 0; i < f.r.n_variants; i++)
        if (!strcmp(f.r.variants[i].name, "flash")) {
            attn_facts *fs = &f.r.variants[i].facts;
            attn_fact *g = NULL;
            for (int j = 0; j < fs->n && !g; j++) /* the archive's own fact, where it has one */
                if (!strcmp(fs->item[j].key, "decode_grid"))
                    g = &fs->item[j];
            if (!g) {
                cr_assert_lt(fs->n, ATTN_MAX_FACTS);
                g = &fs->item[fs->n++];
            }
            snprintf(g->key, sizeof g->key, "decode_grid");
            snprintf(g->value, sizeof g->value, "fixed: row tile x split blocks, the splits merged by each tile's last "
                     "block in the kernel (decode_grid_choose_for)");
            g->number = NAN;
        }
    cr_assert_eq(analysis_build(&f.a, &f.t, &f.r, err, sizeof err), 0, "%s", err);
    findings_derive(&f.a);
    const variant_analysis *fl = variant(&f, "flash");
    const finding *d = findings_find(fl, "decode_split");
    cr_assert_not_null(d);
    cr_assert_eq(findings_value(d, "combine_kernels"), 0);
    cr_assert_eq(findings_value(d, "merged_in_kernel"), 1);
    cr_assert_eq(findings_value(d, "balanced"), 0);
    cr_assert(isnan(findings_value(d, "combine_us")) && isnan(findings_value(d, "combine_pct")),
              "no combine time where no combine kernel ran");
    cr_assert_null(strstr(d->text, "µs"), "no combine time is said: %s", d->text);
    cr_assert_null(strstr(d->phrase, "combine"), "%s", d->phrase);
    fixture_free(&f);
}

/* The kv_expansion finding: naive, in-place and math copy K and V out to every query head (two
 * copy kernels a forward); the bytes are the recorder's kv_expansion_bytes fact and the time and
 * share the records'. The native grouped-query kernels (efficient, flash) have none. */
Test(gqa_fixtures, the_kv_expansion_finding_gives_the_copies_their_bytes_and_share)
{
    const char *fx[] = {GQA, DECODE};
    for (int i = 0; i < 2; i++) {
        static fixture f;
        fixture_load(&f, fx[i]);
        for (const char *const *n = (const char *const[]){"naive", "naive_inplace", "math", NULL}; *n; n++) {
            const variant_analysis *va = variant(&f, *n);
            const finding *e = findings_find(va, "kv_expansion");
            cr_assert_not_null(e, "%s %s", fx[i], *n);
            cr_assert_eq(findings_value(e, "copies"), 2, "%s: K and V", *n);
            cr_assert_eq(findings_value(e, "bytes"), fact_of(va->result, "kv_expansion_bytes")->number);
            cr_assert_eq(findings_value(e, "kv_heads"), f.r.shape.kv_heads);
            cr_assert_eq(findings_value(e, "heads"), f.r.shape.heads);
            const double us = findings_value(e, "us_per_forward");
            cr_assert(us > 0 && us < va->cuda_us.median, "%s: %.2f of %.2f us", *n, us, va->cuda_us.median);
            cr_assert_float_eq(findings_value(e, "pct_of_cuda_time"), 100.0 * us / va->cuda_us.median, 1e-9);
        }
        for (const char *const *n = (const char *const[]){"efficient", "flash", NULL}; *n; n++)
            cr_assert_null(findings_find(variant(&f, *n), "kv_expansion"), "%s reads K/V in place", *n);
        fixture_free(&f);
    }
}

/* The decode_bandwidth finding (decode archive only): K+V bytes over each variant's CUDA time per
 * forward against the copy ceiling the run measured, the arithmetic intensity (Hq/Hkv FLOP/B at
 * one query: 4·Hq·D FLOPs per key against 4·Hkv·D bytes) below the ridge; a notice below half the
 * ceiling. A prefill archive has none. */
Test(gqa_fixtures, the_decode_bandwidth_finding_sets_each_variant_against_the_copy_ceiling)
{
    static fixture f;
    fixture_load(&f, DECODE);
    const double kv = 2.0 * 4 * 8 * 4096 * 128 * 2, ceiling = f.r.ceilings.copy_tbps * 1e3;
    cr_assert_gt(ceiling, 0);
    for (int i = 0; i < f.a.n; i++) {
        const variant_analysis *va = &f.a.v[i];
        const finding *b = findings_find(va, "decode_bandwidth");
        if (va->result->status != VARIANT_OK) {
            cr_assert_null(b, "%s did not run", va->result->name);
            continue;
        }
        cr_assert_not_null(b, "%s", va->result->name);
        const double gbps = kv / (va->cuda_us.median * 1e3);
        cr_assert_float_eq(findings_value(b, "kv_bytes"), kv, 1e-6);
        cr_assert_float_eq(findings_value(b, "gbps"), gbps, 1e-9);
        cr_assert_float_eq(findings_value(b, "ceiling_gbps"), ceiling, 1e-9);
        cr_assert_float_eq(findings_value(b, "ceiling_pct"), 100 * gbps / ceiling, 1e-9);
        cr_assert_float_eq(findings_value(b, "intensity"), 32.0 / 8, 1e-12);
        cr_assert_eq(findings_value(b, "memory_bound"), 1);
        cr_assert_eq(b->severity, gbps < 0.5 * ceiling ? FINDING_NOTICE : FINDING_INFO, "%s", va->result->name);
    }
    cr_assert_gt(findings_value(findings_find(variant(&f, "flash"), "decode_bandwidth"), "gbps"),
                 10 * findings_value(findings_find(variant(&f, "math"), "decode_bandwidth"), "gbps"));
    fixture_free(&f);
    static fixture g;
    fixture_load(&g, GQA);
    for (int i = 0; i < g.a.n; i++)
        cr_assert_null(findings_find(&g.a.v[i], "decode_bandwidth"), "prefill");
    fixture_free(&g);
}

/* `attnprof report` renders both archives (Markdown, HTML, figures) and exits 0. */
Test(gqa_fixtures, both_archives_render)
{
    const char *fx[] = {GQA, DECODE};
    for (int i = 0; i < 2; i++) {
        char dir[] = "/tmp/attnprof-gqa-render-XXXXXX", cmd[1024], path[1200];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(cmd, sizeof cmd, "cp %s/run.json %s/trace.json %s/counters.json %s/", fx[i], fx[i], fx[i], dir);
        cr_assert_eq(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "report %s --format png -q", dir);
        cr_assert_eq(attnprof(cmd), 0, "%s: %s", fx[i], err_text);
        struct stat st;
        for (const char *const *o = (const char *const[]){"report.md", "report.html", "summary.csv", "findings.json",
                                                          NULL};
             *o; o++) {
            snprintf(path, sizeof path, "%s/%s", dir, *o);
            cr_assert_eq(stat(path, &st), 0, "%s: no %s", fx[i], *o);
            cr_assert_gt(st.st_size, 0);
        }
        snprintf(path, sizeof path, "%s/report.md", dir);
        static char md[1 << 20];
        read_into(path, md, sizeof md);
        cr_assert(strstr(md, "cudnn_generated_fort_native_sdpa"), "%s: cuDNN's kernel is in the report", fx[i]);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        system(cmd);
    }
}

/* The variants' predictions at one query (the decode archive, recorded with them): the
 * operations per forward of every variant but cuDNN (a library: its second kernel is said by
 * unexpected_op_count), the kernels of every class, and the FLOPs of the tensor-core classes —
 * the GEMMs' 8-row tiles, efficient's 16 rows per query head, flash's 16-row tile of a key/value
 * group — within the tolerance; and no class of bytes measured below zero (a copy's bytes are the
 * forward's less its kernels', not measured when that is negative). */
Test(gqa_fixtures, the_decode_predictions_hold)
{
    static fixture f; /* with its counters.json, as `report` reads it */
    char err[512];
    trace_init(&f.t);
    cr_assert_eq(archive_read(DECODE, &f.t, &f.r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(f.r.counters.meta.status, CTR_OK);
    cr_assert_eq(analysis_build(&f.a, &f.t, &f.r, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < f.a.n; i++) {
        const char *name = f.a.v[i].result->name;
        static pv_variant pv;
        predict_variant(&f.a, i, &pv);
        for (int k = 0; k < pv.n; k++) {
            const pv_check *c = &pv.c[k];
            if (isfinite(c->measured))
                cr_expect_geq(c->measured, 0, "%s %s: %g", name, c->cls, c->measured);
            const int library = !strcmp(name, "cudnn");
            if ((c->kind == PV_OPS || c->kind == PV_COUNT || (c->kind == PV_FLOPS && c->predicted > 0)) && !library)
                cr_expect_eq(c->verdict, PV_OK, "%s %s (%s): predicted %g, measured %g", name, c->cls,
                             pv_kind_id(c->kind), c->predicted, c->measured);
        }
    }
    fixture_free(&f);
}
