/* Findings as data, provenance, and no placeholder in any writer's text: on the H200
 * archives recorded by attnprof (tests/fixtures/h200-*), on PyTorch's six variants
 * recorded on the H200 as Kineto traces (tests/fixtures/torch-h200, imported here),
 * and on two SYNTHETIC Kineto traces built below (not recorded anywhere): one with the
 * structure of a model step (ProfilerStep#N, aten::linear → cuBLAS-named GEMMs, an
 * SDPA op), one from a Kineto producer other than PyTorch (no ATen op). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_json.h"
#include "counters_json.h"
#include "analysis.h"
#include "exit_codes.h"
#include "findings.h"
#include "findings_json.h"
#include "kineto_import.h"
#include "latex.h"
#include "occupancy.h"
#include "report.h"

#define TORCH "tests/fixtures/torch-h200/"

typedef struct loaded {
    trace t;
    run_info r;
    analysis a;
} loaded;

static loaded *load_dir(const char *dir)
{
    loaded *l = calloc(1, sizeof *l);
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    cr_assert_eq(trace_read_json(&l->t, path, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/run.json", dir);
    cr_assert_eq(run_info_read_json(&l->r, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(analysis_build(&l->a, &l->t, &l->r, err, sizeof err), 0, "%s", err);
    findings_derive(&l->a);
    return l;
}

/* kineto_import, then run.json written and read back as `import` does. */
static loaded *import_files(const char *const *files, int n, const char *range)
{
    loaded *l = calloc(1, sizeof *l);
    static run_info written;
    char err[1024], path[] = "/tmp/attnprof-findings-run-XXXXXX";
    import_options o = {.device = -1, .range = range};
    cr_assert_eq(kineto_import(files, n, &o, &l->t, &written, err, sizeof err), EXIT_OK, "%s", err);
    snprintf(written.tool_version, sizeof written.tool_version, "test");
    close(mkstemp(path));
    cr_assert_eq(run_info_write_json(&written, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_info_read_json(&l->r, path, err, sizeof err), 0, "%s", err);
    unlink(path);
    cr_assert_eq(analysis_build(&l->a, &l->t, &l->r, err, sizeof err), 0, "%s", err);
    findings_derive(&l->a);
    return l;
}

static loaded *import_torch(void)
{
    static const char *const files[] = {TORCH "kineto_naive.json.gz",      TORCH "kineto_naive_inplace.json.gz",
                                        TORCH "kineto_sdpa_math.json.gz",  TORCH "kineto_sdpa_efficient.json.gz",
                                        TORCH "kineto_sdpa_flash.json.gz", TORCH "kineto_sdpa_cudnn.json.gz"};
    return import_files(files, 6, NULL);
}

/* The op a finding's record id names. */
static const gpu_op *op_by_corr(const trace *t, uint32_t corr)
{
    for (size_t i = 0; i < t->n_ops; i++)
        if (t->ops[i].correlation == corr)
            return &t->ops[i];
    return NULL;
}

static void loaded_free(loaded *l)
{
    analysis_free(&l->a);
    trace_free(&l->t);
    free(l);
}

/* ---- the placeholder scan ----------------------------------------------------- */

/* Text with code spans (`…`, \texttt{…}, <code>…</code>) blanked: kernel names such
 * as "operator()()" are names, not placeholders. */
static char *without_code(const char *s)
{
    char *out = strdup(s), *o = out;
    for (const char *p = s; *p;) {
        const char *end = NULL;
        if (*p == '`')
            end = strchr(p + 1, '`');
        else if (!strncmp(p, "\\texttt{", 8))
            end = strchr(p + 8, '}');
        else if (!strncmp(p, "<code>", 6))
            end = strstr(p, "</code>");
        if (end) {
            *o++ = 'X';
            p = end + 1;
        } else
            *o++ = *p++;
    }
    *o = '\0';
    return out;
}

static void assert_no_placeholder(const char *what, const char *text)
{
    static const char *const bad[] = {"B=0",  "H=0",  "S=0",       "D=0",      "$B=0$", "where -1", "-1 were",
                                      "()",   "( )",  "(, ",       ", )",      " ,",    "0 blocks per SM",
                                      "nan",  "(driver ,", "driver ,", "0 warm-up"};
    char *t = without_code(text);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *hit = strstr(t, bad[i]);
        cr_assert_null(hit, "%s holds the placeholder \"%s\": …%.120s…", what, bad[i],
                       hit ? (hit - t > 60 ? hit - 60 : t) : "");
    }
    free(t);
}

/* Every writer's text of an analysis: Markdown, HTML, CSV, LaTeX, terminal, findings.json. */
static void assert_no_placeholder_anywhere(const analysis *a)
{
    char *md = report_markdown(a, NULL, NULL), err[256];
    assert_no_placeholder("report.md", md);
    char *html = report_html(md, "t", err, sizeof err);
    cr_assert_not_null(html, "%s", err);
    assert_no_placeholder("report.html", strstr(html, "<main>"));
    char *csv = report_summary_csv(a), *tex = report_summary_tex(a), *fj = findings_json(a);
    assert_no_placeholder("summary.csv", csv);
    cr_assert_null(strstr(csv, ",-1,"), "summary.csv: an expectation nobody stated is empty, not -1");
    cr_assert_null(strstr(csv, "`"), "summary.csv holds no Markdown");
    assert_no_placeholder("summary.tex", tex);
    cr_assert_null(strstr(tex, "`"), "summary.tex holds no Markdown");
    assert_no_placeholder("findings.json", fj);
    char *term = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&term, &n);
    report_terminal_summary(f, a);
    fclose(f);
    assert_no_placeholder("terminal", term);
    free(md), free(html), free(csv), free(tex), free(fj), free(term);
}

/* ---- imported PyTorch traces ---------------------------------------------------- */

Test(provenance, pytorch_import_is_told_as_pytorchs)
{
    loaded *l = import_torch();
    cr_assert_eq(l->r.producer, PRODUCER_PYTORCH);
    cr_assert(strstr(l->r.producer_evidence, "aten::"), "%s", l->r.producer_evidence);
    char *md = report_markdown(&l->a, NULL, NULL);
    cr_assert_null(strstr(md, "attnprof's own implementations"), "every kernel here is PyTorch's");
    cr_assert_null(strstr(md, "attnprof's own (kernels/)"));
    cr_assert_null(strstr(md, "hold no PyTorch dispatcher"));
    cr_assert_not_null(strstr(md, "they include PyTorch's dispatcher"));
    cr_assert_null(strstr(md, "seed 0"), "an import knows no seed");
    cr_assert_not_null(strstr(md, "| Variant | Source |"), "an import changed nothing");
    cr_assert_null(strstr(md, "What we changed"));
    cr_assert_not_null(strstr(md, "CPU time / forward (under PyTorch's profiler)"));
    cr_assert_not_null(strstr(md, "seed, warm-up forwards, correctness against FP64"));
    free(md);
    /* origins from the kernel names, per variant (derived when rendered) */
    char buf[64];
    cr_assert_str_eq(findings_variant_origin(&l->a, analysis_find(&l->a, "kineto_sdpa_cudnn"), buf, sizeof buf),
                     "cuDNN");
    cr_assert_str_eq(findings_variant_origin(&l->a, analysis_find(&l->a, "kineto_sdpa_flash"), buf, sizeof buf),
                     "PyTorch");
    cr_assert_str_eq(findings_variant_origin(&l->a, analysis_find(&l->a, "kineto_sdpa_efficient"), buf, sizeof buf),
                     "PyTorch", "fmha_cutlassF is PyTorch's memory-efficient kernel, not cuBLAS's");
    cr_assert_str_eq(findings_variant_origin(&l->a, analysis_find(&l->a, "kineto_naive"), buf, sizeof buf),
                     "cuBLAS, PyTorch");
    loaded_free(l);
}

Test(provenance, import_records_no_seed_or_warmup)
{
    static const char *const files[] = {TORCH "kineto_sdpa_flash.json.gz"};
    static run_info r;
    trace t;
    char err[512], path[] = "/tmp/attnprof-findings-seed-XXXXXX";
    import_options o = {.device = -1};
    cr_assert_eq(kineto_import(files, 1, &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    close(mkstemp(path));
    cr_assert_eq(run_info_write_json(&r, path, err, sizeof err), 0, "%s", err);
    json_t *root = json_load_file(path, 0, NULL);
    cr_assert_null(json_object_get(root, "seed"), "an import knows no seed");
    cr_assert_null(json_object_get(root, "warmup"), "an import knows no warm-up");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "provenance"), "producer")),
                     "pytorch_profiler");
    /* an archive from before provenance: imported, seed 0 and warmup 0 invented */
    json_object_del(root, "provenance");
    json_object_set_new(root, "seed", json_integer(0));
    json_object_set_new(root, "warmup", json_integer(0));
    cr_assert_eq(json_dump_file(root, path, 0), 0);
    json_decref(root);
    static run_info back;
    cr_assert_eq(run_info_read_json(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.producer, PRODUCER_PYTORCH, "older imports were PyTorch's");
    cr_assert_eq(back.provenance_recorded, 0);
    cr_assert_eq(back.seed_recorded, 0, "the 0 an older import wrote is not a seed");
    cr_assert_eq(back.warmup_recorded, 0);
    unlink(path);
    trace_free(&t);
}

Test(provenance, unknown_producer_is_one_line_naming_the_field)
{
    json_t *root = json_load_file("tests/fixtures/h200-4var/run.json", 0, NULL);
    cr_assert_not_null(root);
    json_object_set_new(root, "provenance", json_pack("{s:s,s:s}", "producer", "mystery", "evidence", ""));
    char path[] = "/tmp/attnprof-findings-badprov-XXXXXX", err[512];
    close(mkstemp(path));
    cr_assert_eq(json_dump_file(root, path, 0), 0);
    json_decref(root);
    static run_info r;
    cr_assert_eq(run_info_read_json(&r, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "provenance.producer") && strstr(err, "pytorch_profiler") && !strchr(err, '\n'), "%s", err);
    unlink(path);
}

Test(provenance, older_attnprof_archive_reads_as_before)
{
    loaded *l = load_dir("tests/fixtures/h200-6var");
    cr_assert_eq(l->r.producer, PRODUCER_ATTNPROF);
    cr_assert_eq(l->r.provenance_recorded, 0);
    cr_assert(l->r.seed_recorded && l->r.warmup_recorded);
    json_t *root = json_load_file("tests/fixtures/h200-6var/run.json", 0, NULL);
    cr_assert_eq(l->r.seed, (unsigned long long)json_integer_value(json_object_get(root, "seed")));
    cr_assert_eq(l->r.warmup, json_integer_value(json_object_get(root, "warmup")));
    json_decref(root);
    /* kernels' origins derived from the names, since this run.json has none */
    char buf[64];
    cr_assert_str_eq(findings_variant_origin(&l->a, analysis_find(&l->a, "flash"), buf, sizeof buf), "ours");
    cr_assert_str_eq(findings_variant_origin(&l->a, analysis_find(&l->a, "cudnn"), buf, sizeof buf), "cuDNN");
    const char *naive = findings_variant_origin(&l->a, analysis_find(&l->a, "naive"), buf, sizeof buf);
    cr_assert(strstr(naive, "ours") && strstr(naive, "cuBLAS"), "%s", naive);
    char *md = report_markdown(&l->a, NULL, NULL);
    cr_assert_not_null(strstr(md, "they hold no PyTorch dispatcher"), "an attnprof run calls C, not PyTorch");
    free(md);
    loaded_free(l);
}

Test(provenance, attnprof_run_json_round_trip)
{
    loaded *l = load_dir("tests/fixtures/h200-6var");
    static run_info r, back;
    r = l->r;
    char err[512], path[] = "/tmp/attnprof-findings-prov-XXXXXX";
    cr_assert_eq(findings_record_provenance(&r, &l->t, err, sizeof err), 0, "%s", err);
    close(mkstemp(path));
    cr_assert_eq(run_info_write_json(&r, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_info_read_json(&back, path, err, sizeof err), 0, "%s", err);
    unlink(path);
    cr_assert_eq(back.producer, PRODUCER_ATTNPROF);
    cr_assert_eq(back.provenance_recorded, 1);
    cr_assert(back.producer_evidence[0]);
    cr_assert(back.seed_recorded && back.seed == l->r.seed && back.warmup == l->r.warmup);
    for (int i = 0; i < back.n_variants; i++) {
        const char *name = back.variants[i].name, *o = back.variants[i].kernel_origin;
        if (!strcmp(name, "cudnn"))
            cr_assert_str_eq(o, "cuDNN");
        else if (!strcmp(name, "flash") || !strcmp(name, "efficient"))
            cr_assert_str_eq(o, "ours", "%s: %s", name, o);
        else
            cr_assert(strstr(o, "ours") && strstr(o, "cuBLAS"), "%s: %s", name, o);
    }
    loaded_free(l);
}

Test(placeholders, none_in_the_pytorch_import)
{
    loaded *l = import_torch();
    assert_no_placeholder_anywhere(&l->a);
    loaded_free(l);
}

Test(placeholders, none_in_attnprofs_own_archives)
{
    static const char *const dirs[] = {"tests/fixtures/h200-4var",       "tests/fixtures/h200-6var",
                                       "tests/fixtures/h200-counters",   "tests/fixtures/h200-cudnn914",
                                       "tests/fixtures/h200-cudnn919-a", "tests/fixtures/h200-kineto",
                                       "tests/fixtures/h200-sm90a",      "out/example-h200"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        loaded *l = load_dir(dirs[i]);
        assert_no_placeholder_anywhere(&l->a);
        loaded_free(l);
    }
}

/* ---- Kineto's 0%: the report sees its own evidence -------------------------------- */

Test(kineto_zero, imported_cudnn_and_cublas_kernels_read_zero)
{
    loaded *l = import_torch();
    const variant_analysis *cu = analysis_find(&l->a, "kineto_sdpa_cudnn");
    const finding *fd = findings_find(cu, "kineto_zero_occupancy");
    cr_assert_not_null(fd, "Kineto's own 0% for the cuDNN kernel, recorded in the trace");
    cr_assert_eq(findings_value(fd, "shared_mem_bytes"), 134144);
    cr_assert_eq(findings_value(fd, "kineto_limit_bytes"), 49152);
    cr_assert_eq(fd->n_records, 1);
    const gpu_op *op = op_by_corr(&l->t, fd->records[0]);
    cr_assert_not_null(op);
    cr_assert(op->has_kineto_occupancy && op->kineto_occupancy == 0);
    cr_assert_not_null(findings_find(analysis_find(&l->a, "kineto_naive"), "kineto_zero_occupancy"),
                       "cuBLAS's nvjet GEMM reads 0% too");
    cr_assert_null(findings_find(analysis_find(&l->a, "kineto_sdpa_flash"), "kineto_zero_occupancy"),
                   "PyTorch's flash kernel fits 48 KiB and reads above 0%");
    char *md = report_markdown(&l->a, NULL, NULL);
    cr_assert_null(strstr(md, "hold no kernel that Kineto's shared-memory limit sets to 0%"));
    cr_assert_not_null(strstr(md, "This run's records hold 3 kernels that Kineto's estimate puts at 0%"));
    free(md);
    loaded_free(l);
}

Test(kineto_zero, imported_occupancy_is_computed_or_says_why)
{
    loaded *l = import_torch();
    /* PyTorch's deviceProperties lack maxBlocksPerMultiprocessor: taken from compute
     * capability 9.0's limits, and said so */
    cr_assert_eq(l->t.device.max_blocks_per_sm, 32);
    cr_assert_eq(l->t.device.smem_reserved_per_block, 1024);
    cr_assert(strstr(l->r.device_limits_note, "maxBlocksPerMultiprocessor"), "%s", l->r.device_limits_note);
    const variant_analysis *cu = analysis_find(&l->a, "kineto_sdpa_cudnn");
    const gpu_op *k = op_by_corr(&l->t, findings_find(cu, "fused_kernel")->records[0]);
    occupancy occ;
    char err[128];
    cr_assert_eq(occupancy_of_op(k, &l->t.device, &occ, err, sizeof err), 0, "%s", err);
    /* 168 regs × 384 threads: 1 block per SM, 12 of 64 warps; Kineto's formula agrees with its own 0% */
    cr_assert_eq(occ.active_blocks, 1);
    cr_assert_eq(occ.active_warps, 12);
    cr_assert_eq(occ.kineto_pct, (int)k->kineto_occupancy);
    char *md = report_markdown(&l->a, NULL, NULL);
    cr_assert_not_null(strstr(md, "Device limits: the traces' deviceProperties lack maxBlocksPerMultiprocessor"));
    free(md);
    loaded_free(l);
}

/* ---- findings as data ------------------------------------------------------------ */

Test(findings_data, ids_and_numbers_of_the_h200_run)
{
    loaded *l = load_dir("tests/fixtures/h200-6var");
    const variant_analysis *naive = analysis_find(&l->a, "naive"), *math = analysis_find(&l->a, "math");
    const variant_analysis *cudnn = analysis_find(&l->a, "cudnn");
    const finding *m = findings_find(naive, "hidden_memcpy");
    cr_assert_not_null(m);
    const attn_shape *sh = &l->r.shape; /* the B×H×S×S bf16 scores, copied */
    cr_assert_eq(findings_value(m, "bytes"), 2.0 * sh->batch * sh->heads * sh->seq * sh->seq);
    cr_assert_eq(m->n_records, 1);
    cr_assert_eq(op_by_corr(&l->t, m->records[0])->kind, GPU_MEMCPY);
    const finding *g = findings_find(math, "fp32_cuda_core_gemm");
    cr_assert_not_null(g);
    cr_assert_eq(findings_value(g, "gemms"), 2);
    cr_assert_eq(g->n_records, 2);
    cr_assert_not_null(findings_find(math, "mask_rebuild"));
    cr_assert_not_null(findings_find(cudnn, "plan_cpu_cost"));
    cr_assert_not_null(findings_find(cudnn, "launch_api"));
    cr_assert_str_eq(findings_find(cudnn, "plan_cpu_cost")->needs, "facts.plan_build_us");
    /* every finding has an id */
    for (int i = 0; i < l->a.n; i++)
        for (int k = 0; k < l->a.v[i].n_findings; k++)
            cr_assert(l->a.v[i].meta[k].id[0], "%s: finding %d has no id", l->a.v[i].result->name, k);
    loaded_free(l);
}

Test(findings_data, json_round_trip_by_id)
{
    loaded *l = load_dir("tests/fixtures/h200-6var");
    char *text = findings_json(&l->a), path[] = "/tmp/attnprof-findings-XXXXXX", err[256];
    int fd = mkstemp(path);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    static findings_doc d;
    cr_assert_eq(findings_read_json(path, &d, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(d.producer, "attnprof");
    cr_assert_eq(d.n, l->a.n);
    const finding *m = findings_doc_find(&d, "naive", "hidden_memcpy");
    cr_assert_not_null(m);
    cr_assert_eq(findings_value(m, "bytes"), findings_value(findings_find(analysis_find(&l->a, "naive"),
                                                                          "hidden_memcpy"), "bytes"));
    cr_assert_eq(m->records[0], findings_find(analysis_find(&l->a, "naive"), "hidden_memcpy")->records[0]);
    /* plain text, no Markdown */
    for (int i = 0; i < d.n; i++)
        for (int k = 0; k < d.v[i].n; k++)
            cr_assert_null(strchr(d.v[i].text[k], '`'), "%s", d.v[i].text[k]);
    /* a damaged file: one line naming the field */
    FILE *f = fopen(path, "w");
    fputs("{\"findings_version\":1,\"variants\":[{\"variant\":\"x\",\"findings\":[{\"id\":\"a\"}]}]}", f);
    fclose(f);
    cr_assert_eq(findings_read_json(path, &d, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "variants[0].findings[0]") && !strchr(err, '\n'), "%s", err);
    unlink(path);
    free(text);
    loaded_free(l);
}

/* Collects a sentence's quoted names, "|"-separated. */
static void collect_code(const char *s, size_t len, int code, void *ctx)
{
    if (code) {
        char *out = ctx;
        size_t n = strlen(out);
        snprintf(out + n, 1024 - n, "%.*s|", (int)len, s);
    }
}

Test(findings_data, sentences_are_data_each_writer_renders)
{
    loaded *l = import_torch();
    const variant_analysis *math = analysis_find(&l->a, "kineto_sdpa_math");
    for (int k = 0; k < math->n_findings; k++) {
        const finding *fd = &math->meta[k];
        cr_assert(fd->text[0], "%s has its sentence as data", fd->id);
        cr_assert_null(strchr(fd->text, '`'), "no Markdown in the data: %s", fd->text);
        char md[640];
        findings_markdown(fd->text, md, sizeof md);
        cr_assert_str_eq(md, math->findings[k], "the Markdown writer gives the report's sentence");
    }
    const finding *g = findings_find(math, "fp32_cuda_core_gemm");
    char names[1024] = "";
    findings_spans(g->text, collect_code, names);
    cr_assert(strstr(names, "|aten::bmm|"), "names quoted as names: %s", names);
    cr_assert(strstr(names, "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n"), "%s", names);
    loaded_free(l);
}

/* ---- SYNTHETIC traces: a model step, and a producer other than PyTorch -------------- */

/* A trace with the structure of a model's profiled steps, built here (synthetic: not
 * recorded): `steps` ProfilerStep#N, each with three aten::linear → cuBLAS-named GEMMs,
 * one aten::scaled_dot_product_attention → PyTorch's flash kernel, an aten::add →
 * ATen elementwise kernel. `aten` 0 renames the CPU ops (another Kineto producer). */
static char *synthetic_model_trace(int steps, int aten)
{
    json_t *ev = json_array();
    int corr = 100;
    for (int s = 0; s < steps; s++) {
        double t0 = 1000.0 * s;
        char step[32];
        snprintf(step, sizeof step, "ProfilerStep#%d", s + 10);
        json_array_append_new(ev, json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f}", "ph", "X", "cat", "user_annotation",
                                            "name", step, "pid", 7, "tid", 7, "ts", t0, "dur", 900.0));
        static const char *const ops[] = {"aten::linear", "aten::linear", "aten::linear",
                                          "aten::scaled_dot_product_attention", "aten::add"};
        static const char *const other[] = {"Dense", "Dense", "Dense", "Attention", "Add"};
        static const char *const kernels[] = {"nvjet_sm90_tst_128x128_64x4_1x2_h_bz_TNT",
                                              "nvjet_sm90_tst_128x128_64x4_1x2_h_bz_TNT",
                                              "nvjet_sm90_tst_128x128_64x4_1x2_h_bz_TNT",
                                              "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, "
                                              "64, 4, false, false, cutlass::bfloat16_t> >(flash::Flash_fwd_params)",
                                              "void at::native::vectorized_elementwise_kernel<4, "
                                              "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >"
                                              "(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"};
        static const int smem[] = {98304, 98304, 98304, 49152, 0}, regs[] = {168, 168, 168, 255, 30};
        static const int threads[] = {384, 384, 384, 128, 128}, grid[] = {132, 132, 132, 1024, 4096};
        for (int k = 0; k < 5; k++, corr++) {
            double ts = t0 + 10 + 150.0 * k;
            json_array_append_new(ev, json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f}", "ph", "X", "cat", "cpu_op", "name",
                                                aten ? ops[k] : other[k], "pid", 7, "tid", 7, "ts", ts, "dur", 40.0));
            json_array_append_new(ev, json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:{s:i}}", "ph", "X", "cat",
                                                "cuda_runtime", "name", "cudaLaunchKernel", "pid", 7, "tid", 7, "ts",
                                                ts + 5, "dur", 10.0, "args", "correlation", corr));
            json_array_append_new(
                ev, json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:{s:i,s:i,s:i,s:i,s:i,s:[i,i,i],s:[i,i,i]}}", "ph", "X",
                              "cat", "kernel", "name", kernels[k], "pid", 0, "tid", 7, "ts", ts + 20, "dur", 60.0,
                              "args", "correlation", corr, "device", 0, "stream", 7, "registers per thread", regs[k],
                              "shared memory", smem[k], "grid", grid[k], 1, 1, "block", threads[k], 1, 1));
        }
    }
    json_t *dev = json_pack("[{s:i,s:s,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}]", "id", 0, "name",
                            "NVIDIA H200", "totalGlobalMem", (json_int_t)150109880320, "computeMajor", 9,
                            "computeMinor", 0, "maxThreadsPerBlock", 1024, "maxThreadsPerMultiprocessor", 2048,
                            "regsPerBlock", 65536, "warpSize", 32, "sharedMemPerBlock", 49152, "numSms", 132,
                            "regsPerMultiprocessor", 65536, "sharedMemPerBlockOptin", 232448,
                            "sharedMemPerMultiprocessor", 233472);
    json_t *root = json_pack("{s:i,s:o,s:I,s:o}", "schemaVersion", 1, "deviceProperties", dev, "baseTimeNanoseconds",
                             (json_int_t)1790857026000000000, "traceEvents", ev);
    char *text = json_dumps(root, 0);
    json_decref(root);
    return text;
}

static loaded *import_synthetic(int aten)
{
    char path[] = "/tmp/attnprof-synthetic-model-XXXXXX";
    int fd = mkstemp(path);
    char *text = synthetic_model_trace(6, aten);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    free(text);
    const char *files[] = {path};
    loaded *l = import_files(files, 1, NULL);
    unlink(path);
    return l;
}

Test(placeholders, none_in_a_synthetic_model_trace)
{
    loaded *l = import_synthetic(1);
    cr_assert_eq(l->r.producer, PRODUCER_PYTORCH);
    cr_assert_eq(l->a.v[0].n_forwards, 6, "each ProfilerStep#N is a forward");
    char buf[64];
    cr_assert_str_eq(findings_variant_origin(&l->a, &l->a.v[0], buf, sizeof buf), "cuBLAS, PyTorch");
    assert_no_placeholder_anywhere(&l->a);
    char *md = report_markdown(&l->a, NULL, NULL);
    cr_assert_null(strstr(md, "attnprof's own"), "no claim about attnprof's kernels");
    cr_assert_null(strstr(md, "kernels/"));
    cr_assert_null(strstr(md, "hold no PyTorch dispatcher"));
    cr_assert_null(strstr(md, "## Beside the series"), "a model is none of the series' six variants");
    cr_assert_null(strstr(md, "Reference: A100"));
    cr_assert_not_null(strstr(md, "(shape not recorded)"));
    free(md);
    char *tex = report_summary_tex(&l->a);
    cr_assert_null(strstr(tex, "Series, A100"), "no series column for a model");
    cr_assert_null(strstr(tex, "Attention variants on"));
    free(tex);
    loaded_free(l);
}

Test(provenance, another_kineto_producer_is_not_called_pytorch)
{
    loaded *l = import_synthetic(0);
    cr_assert_eq(l->r.producer, PRODUCER_KINETO);
    cr_assert_str_eq(l->r.variants[0].title, "Kineto trace");
    assert_no_placeholder_anywhere(&l->a);
    char *md = report_markdown(&l->a, NULL, NULL);
    cr_assert_null(strstr(md, "PyTorch profiler traces"), "the title names Kineto, not PyTorch");
    cr_assert_not_null(strstr(md, "imported Kineto traces"));
    cr_assert_null(strstr(md, "PyTorch's dispatcher"));
    cr_assert_null(strstr(md, "attnprof's own"));
    free(md);
    loaded_free(l);
}

/* ---- the command line: findings.json in every rendered archive ----------------------- */

#include "run_cli.h"

Test(findings_cli, report_and_import_write_findings_json)
{
    char dir[] = "/tmp/attnprof-findings-cli-XXXXXX", cmd[1024], path[1200], err[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp tests/fixtures/h200-6var/trace.json tests/fixtures/h200-6var/run.json %s/", dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "report %s -q --no-pdf", dir);
    cr_assert_eq(attnprof(cmd), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/findings.json", dir);
    static findings_doc d;
    cr_assert_eq(findings_read_json(path, &d, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(findings_doc_find(&d, "math", "fp32_cuda_core_gemm"));
    snprintf(cmd, sizeof cmd, "import " TORCH "kineto_sdpa_cudnn.json.gz -o %s/imp -q", dir);
    cr_assert_eq(attnprof(cmd), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/imp/findings.json", dir);
    cr_assert_eq(findings_read_json(path, &d, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(d.producer, "pytorch_profiler");
    const finding *z = findings_doc_find(&d, "kineto_sdpa_cudnn", "kineto_zero_occupancy");
    cr_assert_not_null(z);
    cr_assert_eq(findings_value(z, "shared_mem_bytes"), 134144);
    /* the terminal: findings by id, and what an import lacks said, not nan */
    char out[4096];
    snprintf(cmd, sizeof cmd, "report %s/imp --no-pdf", dir);
    cr_assert_eq(attnprof_out(cmd, out, sizeof out), 0, "%s", err_text);
    cr_assert_not_null(strstr(out, "kineto_zero_occupancy"), "%s", out);
    cr_assert_not_null(strstr(out, "not recorded"), "%s", out);
    cr_assert_null(strstr(out, "nan"), "%s", out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
