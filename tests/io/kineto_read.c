/* The streaming Kineto reader and `attnprof import`, on the PyTorch 2.11 traces
 * recorded on the H200 (tests/fixtures/torch-h200, 8×16×1024×64 bf16 causal,
 * record_function("attn_fwd")) and on small hand-written traces for the messy cases. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis.h"
#include "archive.h"
#include "exit_codes.h"
#include "findings.h"
#include "kineto_import.h"
#include "kernel_names.h"
#include "report.h"
#include "kineto_read.h"
#include "run_cli.h"

#define TORCH "tests/fixtures/torch-h200/"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static int count_event(void *ctx, size_t idx, const kineto_event *e, char *err, size_t errlen)
{
    (void)idx, (void)err, (void)errlen;
    size_t *n = ctx;
    n[0]++;
    if (e->cat && !strcmp(e->cat, "kernel"))
        n[1]++;
    return 0;
}

Test(kineto_read, gzip_and_plain_give_the_same_events)
{
    char plain[] = "/tmp/attnprof-kineto-XXXXXX", cmd[256], err[512];
    close(mkstemp(plain));
    snprintf(cmd, sizeof cmd, "zcat " TORCH "kineto_sdpa_flash.json.gz > %s", plain);
    cr_assert_eq(system(cmd), 0);
    size_t a[2] = {0}, b[2] = {0};
    kineto_header h;
    kineto_file_info info;
    cr_assert_eq(kineto_read(TORCH "kineto_sdpa_flash.json.gz", count_event, a, &h, &info, err, sizeof err), KINETO_OK,
                 "%s", err);
    cr_assert(info.gzip);
    struct stat st;
    cr_assert_eq(stat(TORCH "kineto_sdpa_flash.json.gz", &st), 0);
    cr_assert_eq(info.size, st.st_size);
    /* The header as jansson's whole-file parse reads it. */
    json_error_t je;
    json_t *doc = json_load_file(plain, 0, &je);
    cr_assert_not_null(doc, "%s", je.text);
    cr_assert_eq(h.schema_version, json_integer_value(json_object_get(doc, "schemaVersion")));
    cr_assert_eq(h.base_time_ns, json_integer_value(json_object_get(doc, "baseTimeNanoseconds")));
    cr_assert_str_eq(h.trace_id, json_string_value(json_object_get(doc, "trace_id")));
    cr_assert_eq(h.cupti_version, json_integer_value(json_object_get(doc, "cupti_version")));
    json_t *dev = json_array_get(json_object_get(doc, "deviceProperties"), 0);
    cr_assert_str_eq(h.devices[0].name, json_string_value(json_object_get(dev, "name")));
    cr_assert_str_eq(h.devices[0].name, "NVIDIA H200");
    cr_assert_eq(h.devices[0].sm_count, json_integer_value(json_object_get(dev, "numSms")));
    cr_assert_eq(h.devices[0].sm_count, 132);
    json_decref(doc);
    cr_assert_eq(kineto_read(plain, count_event, b, NULL, &info, err, sizeof err), KINETO_OK, "%s", err);
    cr_assert_not(info.gzip);
    cr_assert_eq(a[0], b[0]);
    cr_assert_eq(a[1], 5, "5 forwards, one flash kernel each");
    unlink(plain);
}

Test(kineto_read, truncated_gzip_is_an_error)
{
    char path[] = "/tmp/attnprof-kineto-XXXXXX", cmd[256], err[512];
    close(mkstemp(path));
    snprintf(cmd, sizeof cmd, "head -c 2000 " TORCH "kineto_sdpa_flash.json.gz > %s", path);
    cr_assert_eq(system(cmd), 0);
    size_t n[2] = {0};
    cr_assert_eq(kineto_read(path, count_event, n, NULL, NULL, err, sizeof err), KINETO_ERR_JSON);
    cr_assert(strstr(err, path) && strstr(err, "truncated gzip"), "%s", err);
    cr_assert_null(strchr(err, '\n'));
    unlink(path);
}

Test(kineto_read, keys_after_events_unicode_and_foreign_events)
{
    char path[] = "/tmp/attnprof-kineto-XXXXXX", err[512];
    close(mkstemp(path));
    /* baseTimeNanoseconds after traceEvents (attnprof's old order); a name in UTF-8 and
     * one with a \u escape; instant, async and metadata events; nested args. */
    write_text(path, "{\"traceEvents\": [\n"
                     "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"x\"}},\n"
                     "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"Iteration Start: PyTorch Profiler\", \"ts\": 1},\n"
                     "{\"ph\": \"b\", \"cat\": \"async\", \"name\": \"a\", \"id\": 5, \"ts\": 2},\n"
                     "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"sch\\u00e4tzen \xe2\x9c\x93\", "
                     "\"pid\": 1, \"tid\": 2, \"ts\": 10.5, \"dur\": 100, \"args\": {\"deep\": {\"x\": [1, {\"y\": 2}]}}}\n"
                     "], \"baseTimeNanoseconds\": 1000000, \"pid\": 1}");
    trace t;
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n_ranges, 1);
    cr_assert_str_eq(t.ranges[0].name, "sch\xc3\xa4tzen \xe2\x9c\x93");
    cr_assert_eq(t.ranges[0].start_ns, 1000000 + 10500, "baseTimeNanoseconds read after the events");
    trace_free(&t);
    write_text(path, "{\"traceEvents\": [{\"ph\": \"X\"}, 7]}");
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "event 0"), "%s", err);
    write_text(path, "{\"traceEvents\": [{\"ph\": \"i\"}, 7]}");
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "event 1: not an object"), "%s", err);
    unlink(path);
}

/* ---- import -------------------------------------------------------------- */

typedef struct imported {
    trace t;
    run_info r;
    analysis a;
} imported;

static imported *import_torch(void)
{
    static const char *const files[] = {TORCH "kineto_naive.json.gz",          TORCH "kineto_naive_inplace.json.gz",
                                        TORCH "kineto_sdpa_math.json.gz",      TORCH "kineto_sdpa_efficient.json.gz",
                                        TORCH "kineto_sdpa_flash.json.gz",     TORCH "kineto_sdpa_cudnn.json.gz"};
    imported *im = calloc(1, sizeof *im);
    char err[1024];
    import_options o = {.device = -1};
    cr_assert_eq(kineto_import(files, 6, &o, &im->t, &im->r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(analysis_build(&im->a, &im->t, &im->r, err, sizeof err), 0, "%s", err);
    findings_derive(&im->a);
    return im;
}

static void imported_free(imported *im)
{
    analysis_free(&im->a);
    trace_free(&im->t);
    free(im);
}

static int finding_with(const variant_analysis *va, const char *needle)
{
    for (int i = 0; i < va->n_findings; i++)
        if (strstr(va->findings[i], needle))
            return i;
    return -1;
}

Test(import, pytorch_kernel_counts_on_the_h200)
{
    imported *im = import_torch();
    struct { const char *name; int ops, kernels, memcpy, memset; } want[] = {
        {"kineto_naive", 7, 5, 1, 1},      {"kineto_naive_inplace", 6, 5, 0, 1}, {"kineto_sdpa_math", 20, 20, 0, 0},
        {"kineto_sdpa_efficient", 1, 1, 0, 0}, {"kineto_sdpa_flash", 1, 1, 0, 0}, {"kineto_sdpa_cudnn", 2, 1, 0, 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const variant_analysis *va = analysis_find(&im->a, want[i].name);
        cr_assert_not_null(va, "%s", want[i].name);
        cr_assert_eq(va->n_forwards, 5, "%s", want[i].name);
        cr_assert_eq(va->ops_per_forward, want[i].ops, "%s: %d ops", want[i].name, va->ops_per_forward);
        cr_assert_eq(va->kernels_per_forward, want[i].kernels, "%s", want[i].name);
        cr_assert_eq(va->memcpy_per_forward, want[i].memcpy, "%s", want[i].name);
        cr_assert_eq(va->memset_per_forward, want[i].memset, "%s", want[i].name);
    }
    /* naive's Memset is cuBLAS's 4 bytes; its Memcpy the 256 MiB clone of masked_fill. */
    const variant_analysis *naive = analysis_find(&im->a, "kineto_naive");
    for (int k = 0; k < naive->forwards[0].n_ops; k++) {
        const gpu_op *o = naive->forwards[0].ops[k];
        if (o->kind == GPU_MEMSET)
            cr_assert_eq(o->bytes, 4);
        if (o->kind == GPU_MEMCPY) {
            cr_assert_eq(o->bytes, 268435456);
            cr_assert_str_eq(o->copy_kind, "DtoD");
            cr_assert_str_eq(o->cpu_op_path, "aten::masked_fill > aten::clone > aten::copy_");
        }
    }
    /* Metadata: what Kineto records, and nothing it does not. */
    cr_assert_str_eq(im->r.device.name, "NVIDIA H200");
    cr_assert_eq(im->r.cuda_runtime_version, 13000);
    cr_assert_eq(im->r.cudnn_version, 0);
    cr_assert_eq(im->r.device.clock_khz, 0);
    cr_assert(isnan(im->r.variants[0].rel_error));
    cr_assert_eq(im->r.n_sources, 6);
    struct stat st;
    cr_assert_eq(stat(TORCH "kineto_naive.json.gz", &st), 0);
    cr_assert_eq(im->r.sources[0].size, st.st_size);
    cr_assert_eq(strlen(im->r.sources[0].sha256), 64);
    imported_free(im);
}

Test(import, classes_from_the_aten_op)
{
    imported *im = import_torch();
    const variant_analysis *math = analysis_find(&im->a, "kineto_sdpa_math");
    int mask = 0, gemm = 0, reduction = 0, softmax = 0;
    for (int k = 0; k < math->forwards[0].n_ops; k++) {
        op_class c = classify_op(math->forwards[0].ops[k]);
        mask += c == OPC_MASK, gemm += c == OPC_GEMM, reduction += c == OPC_REDUCTION, softmax += c == OPC_SOFTMAX;
    }
    cr_assert_eq(mask, 4, "ones, tril, where (scalar + select)");
    cr_assert_eq(gemm, 2);
    cr_assert_eq(reduction, 1, "aten::all in _safe_softmax");
    cr_assert_eq(softmax, 1);
    const variant_analysis *flash = analysis_find(&im->a, "kineto_sdpa_flash");
    cr_assert_eq(classify_op(flash->forwards[0].ops[0]), OPC_FUSED_ATTENTION);
    const variant_analysis *cudnn = analysis_find(&im->a, "kineto_sdpa_cudnn");
    cr_assert_eq(classify_op(cudnn->forwards[0].ops[1]), OPC_FUSED_ATTENTION);
    const variant_analysis *eff = analysis_find(&im->a, "kineto_sdpa_efficient");
    cr_assert_eq(classify_op(eff->forwards[0].ops[0]), OPC_FUSED_ATTENTION);
    char aten[96];
    const variant_analysis *naive = analysis_find(&im->a, "kineto_naive");
    int named_mul = 0;
    for (int k = 0; k < naive->forwards[0].n_ops; k++)
        named_mul += op_aten_name(naive->forwards[0].ops[k], aten, sizeof aten) && !strcmp(aten, "aten::mul");
    cr_assert_eq(named_mul, 1, "the scale kernel is named aten::mul");
    imported_free(im);
}

Test(import, the_series_findings)
{
    imported *im = import_torch();
    const variant_analysis *naive = analysis_find(&im->a, "kineto_naive");
    cr_assert_geq(finding_with(naive, "256 MiB Memcpy DtoD inside every forward"), 0);
    cr_assert_geq(finding_with(naive, "hidden in `aten::masked_fill`"), 0);
    const variant_analysis *inpl = analysis_find(&im->a, "kineto_naive_inplace");
    cr_assert_geq(finding_with(inpl, "no Memcpy"), 0);
    const variant_analysis *math = analysis_find(&im->a, "kineto_sdpa_math");
    cr_assert_geq(finding_with(math, "2 GEMMs in FP32 on CUDA cores"), 0);
    int m = finding_with(math, "the causal mask is rebuilt in every forward: 4 kernels");
    cr_assert_geq(m, 0);
    cr_assert(strstr(math->findings[m], "aten::ones") && strstr(math->findings[m], "aten::tril") &&
              strstr(math->findings[m], "aten::where"), "%s", math->findings[m]);
    cr_assert_geq(finding_with(math, "safe softmax (`aten::_safe_softmax`): 4 extra kernels"), 0);
    cr_assert_geq(finding_with(analysis_find(&im->a, "kineto_sdpa_flash"), "one fused kernel `flash_fwd_kernel"), 0);
    cr_assert_geq(finding_with(analysis_find(&im->a, "kineto_sdpa_efficient"), "one fused kernel `fmha_cutlassF"), 0);
    const variant_analysis *cudnn = analysis_find(&im->a, "kineto_sdpa_cudnn");
    cr_assert_geq(finding_with(cudnn, "one fused kernel `cudnn_generated_fort_native_sdpa"), 0);
    cr_assert_geq(finding_with(cudnn, "launched with `cuLaunchKernelEx`"), 0);
    imported_free(im);
}

static int import_small(const char *json, const import_options *o, trace *t, run_info *r, char *err, size_t n)
{
    char path[] = "/tmp/attnprof-kineto-XXXXXX";
    close(mkstemp(path));
    write_text(path, json);
    const char *files[] = {path};
    int rc = kineto_import(files, 1, o, t, r, err, n);
    unlink(path);
    return rc;
}

#define API(corr, ts) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9," \
                      "\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #corr "}}"
#define KERNEL(corr, dev, ts) "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":" #dev ",\"tid\":7," \
                              "\"ts\":" #ts ",\"dur\":2,\"args\":{\"correlation\":" #corr ",\"device\":" #dev "}}"

Test(import, profiler_steps_devices_and_uncorrelated_events)
{
    static run_info r;
    trace t;
    char err[1024];
    import_options o = {.device = -1};
    /* No attn_fwd: each ProfilerStep#N is a forward. Two GPUs: device 0 by default. */
    const char *steps = "{\"traceEvents\":["
                        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":9,\"tid\":9,\"ts\":0,\"dur\":10},"
                        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":9,\"tid\":9,\"ts\":20,\"dur\":10},"
                        API(1, 1) "," API(2, 2) "," API(3, 21) ","
                        KERNEL(1, 0, 5) "," KERNEL(2, 1, 6) "," KERNEL(3, 0, 25) ","
                        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"lost\",\"pid\":0,\"tid\":7,\"ts\":26,\"dur\":1,\"args\":{}}"
                        "],\"baseTimeNanoseconds\":0}";
    cr_assert_eq(import_small(steps, &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(t.n_ops, 2, "device 1's kernel and the uncorrelated one are not kept");
    cr_assert_eq(r.variants[0].facts.n, 3, "device, other_device_ops, uncorrelated_events");
    cr_assert(strstr(r.marker_source, "ProfilerStep"));
    trace_free(&t);
    o.device = 1;
    cr_assert_eq(import_small(steps, &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(t.n_ops, 1);
    cr_assert_eq(t.ops[0].device, 1);
    trace_free(&t);
    o.device = 3;
    cr_assert_eq(import_small(steps, &o, &t, &r, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "no GPU events on device 3"), "%s", err);

    /* Neither attn_fwd nor ProfilerStep: the error names the ranges the trace holds. */
    o.device = -1;
    cr_assert_eq(import_small("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fwd\",\"pid\":9,"
                              "\"tid\":9,\"ts\":0,\"dur\":10}," API(1, 1) "," KERNEL(1, 0, 5) "]}",
                              &o, &t, &r, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "no user_annotation range `attn_fwd`") && strstr(err, "`fwd`") && strstr(err, "--range"),
              "%s", err);
    o.range = "fwd";
    cr_assert_eq(import_small("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fwd\",\"pid\":9,"
                              "\"tid\":9,\"ts\":0,\"dur\":10}," API(1, 1) "," KERNEL(1, 0, 5) "]}",
                              &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    trace_free(&t);
    /* No correlation in the args, but ac2g flows: the flow ties op and call. */
    o.range = NULL;
    cr_assert_eq(import_small("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"attn_fwd\","
                              "\"pid\":9,\"tid\":9,\"ts\":0,\"dur\":10},"
                              "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,"
                              "\"tid\":9,\"ts\":1.5,\"dur\":1,\"args\":{}},"
                              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":5.25,"
                              "\"dur\":2,\"args\":{\"device\":0}},"
                              "{\"ph\":\"s\",\"id\":41,\"pid\":9,\"tid\":9,\"ts\":1.5,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
                              "{\"ph\":\"f\",\"id\":41,\"pid\":0,\"tid\":7,\"ts\":5.25,\"cat\":\"ac2g\",\"name\":\"ac2g\","
                              "\"bp\":\"e\"}]}",
                              &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(t.n_ops, 1);
    cr_assert_neq(t.ops[0].correlation, 0);
    cr_assert_eq(trace_launcher(&t, &t.ops[0]), &t.apis[0], "tied by the flow");
    cr_assert_eq(r.variants[0].facts.n, 1, "nothing left unattributed");
    trace_free(&t);
    /* CPU only. */
    o.range = NULL;
    cr_assert_eq(import_small("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"attn_fwd\","
                              "\"pid\":9,\"tid\":9,\"ts\":0,\"dur\":10},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":"
                              "\"aten::mul\",\"pid\":9,\"tid\":9,\"ts\":1,\"dur\":1}]}",
                              &o, &t, &r, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "no GPU events"), "%s", err);
}

Test(import, pytorch_kernel_names)
{
    struct { const char *name; op_class cls; int cuda_cores; } k[] = {
        {"ampere_sgemm_128x64_nn", OPC_GEMM, 1},
        {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4", OPC_GEMM, 1},
        {"cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_nn_align8", OPC_GEMM, 0},
        {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", OPC_GEMM, 0},
        {"void cunn_SoftMaxForward<4, float, float, float, Epilogue>(float*, float const*, int)", OPC_SOFTMAX, 0},
        {"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>()", OPC_SOFTMAX, 0},
        {"void at::native::triu_tril_kernel<bool, int, false, 8, false>()", OPC_MASK, 0},
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<bool> >()", OPC_REDUCTION, 0},
        {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t>)",
         OPC_FUSED_ATTENTION, 0},
        {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4> >()", OPC_FUSED_ATTENTION, 0},
        {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64", OPC_FUSED_ATTENTION, 0},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >()", OPC_ELEMENTWISE, 0},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        gpu_op o = {.kind = GPU_KERNEL, .name = (char *)k[i].name};
        cr_assert_eq(classify_op(&o), k[i].cls, "%s: %s", k[i].name, op_class_name(classify_op(&o)));
        if (k[i].cls == OPC_GEMM)
            cr_assert_eq(gemm_on_cuda_cores(k[i].name), k[i].cuda_cores, "%s", k[i].name);
    }
    gpu_op memcpy_op = {.kind = GPU_MEMCPY, .name = "Memcpy DtoD (Device -> Device)"};
    gpu_op memset_op = {.kind = GPU_MEMSET, .name = "Memset (Device)"};
    cr_assert_eq(classify_op(&memcpy_op), OPC_MEMCPY);
    cr_assert_eq(classify_op(&memset_op), OPC_MEMSET);
}

Test(import, variant_names)
{
    char out[64];
    kineto_variant_name("a/b/kineto_sdpa_flash.json.gz", out, sizeof out);
    cr_assert_str_eq(out, "kineto_sdpa_flash");
    kineto_variant_name("host_123.1700000000.pt.trace.json.gz", out, sizeof out);
    cr_assert_str_eq(out, "host_123.1700000000");
    kineto_variant_name("plain.json", out, sizeof out);
    cr_assert_str_eq(out, "plain");
}

/* ---- the command, as a user runs it --------------------------------------- */


static int one_line(void) { return strchr(err_text, '\n') == strrchr(err_text, '\n'); }

Test(import_cli, archive_renders_and_rerenders)
{
    char dir[] = "/tmp/attnprof-import-XXXXXX", args[1024], path[1200];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "import " TORCH "kineto_naive.json.gz " TORCH "kineto_sdpa_flash.json.gz -o %s/a -q",
             dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/a/report.html", dir);
    cr_assert(path_exists(path));
    snprintf(path, sizeof path, "%s/a/run.json", dir);
    FILE *f = fopen(path, "r");
    static char buf[1 << 18];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    /* The file's SHA-256 as coreutils computes it. */
    char want[65] = "";
    FILE *sum = popen("sha256sum " TORCH "kineto_sdpa_flash.json.gz", "r");
    cr_assert_not_null(sum);
    cr_assert_eq(fscanf(sum, "%64s", want), 1);
    pclose(sum);
    cr_assert(strstr(buf, "\"imported_from\"") && strstr(buf, want), "run.json: sha256 %s", want);
    /* The import rendered from the trace it had in memory; `report` renders from the
     * archive: the same bytes. */
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp %s/a/report.md %s/a/summary.csv %s/", dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "report %s/a -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(cmd, sizeof cmd, "cmp -s %s/report.md %s/a/report.md && cmp -s %s/summary.csv %s/a/summary.csv", dir, dir,
             dir, dir);
    cr_assert_eq(system(cmd), 0, "the re-rendered report differs from the import's");
    snprintf(path, sizeof path, "%s/a/report.md", dir);
    f = fopen(path, "r");
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    cr_assert(strstr(buf, "not recorded") && strstr(buf, "hidden in `aten::masked_fill`"), "report.md");
    cr_assert(strstr(buf, "| 13% (Kineto's own) |"), "Kineto's own occupancy of the flash kernel in its column");
    cr_assert(strstr(buf, "` from `aten::mul`"), "elementwise kernels named by their ATen op");
    remove_tree(dir);
}

Test(import_cli, bad_input_writes_nothing)
{
    char dir[] = "/tmp/attnprof-import-XXXXXX", args[1024], path[1200], cmd[1400];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "head -c 3000 " TORCH "kineto_naive.json.gz > %s/cut.json.gz", dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "import " TORCH "kineto_sdpa_flash.json.gz %s/cut.json.gz -o %s/out", dir, dir);
    cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s", err_text);
    cr_assert(strstr(err_text, "truncated gzip") && one_line(), "%s", err_text);
    snprintf(path, sizeof path, "%s/out", dir);
    cr_assert_not(path_exists(path), "nothing written");
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -c . | grep -qx 1", dir);
    cr_assert_eq(system(cmd), 0, "no temporary directory left behind");
    snprintf(args, sizeof args, "import %s/missing.json -o %s/out", dir, dir);
    cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err_text, "cannot open") && one_line(), "%s", err_text);
    cr_assert_eq(attnprof("import " TORCH "kineto_naive.json.gz"), EXIT_USAGE);
    cr_assert(strstr(err_text, "-o DIR"), "%s", err_text);
    cr_assert_eq(attnprof("import -o /tmp/x"), EXIT_USAGE);
    cr_assert_eq(attnprof("report /tmp/x --range attn_fwd"), EXIT_USAGE);
    snprintf(args, sizeof args, "import --variant v " TORCH "kineto_naive.json.gz " TORCH "kineto_sdpa_flash.json.gz -o %s/o",
             dir);
    cr_assert_eq(attnprof(args), EXIT_USAGE);
    remove_tree(dir);
}

/* ---- our trace.json as a Kineto drop-in --------------------------------- */

static void drop_in_trace(trace *t)
{
    trace_init(t);
    t->pid = 4242;
    snprintf(t->device.name, sizeof t->device.name, "NVIDIA H200");
    t->device = (device_props){.major = 9, .sm_count = 132, .warp_size = 32, .max_threads_per_block = 1024,
                               .max_threads_per_sm = 2048, .max_blocks_per_sm = 32, .regs_per_sm = 65536,
                               .regs_per_block = 65536, .smem_per_sm = 233472, .smem_per_block = 49152,
                               .smem_per_block_optin = 232448, .smem_reserved_per_block = 1024};
    snprintf(t->device.name, sizeof t->device.name, "NVIDIA H200");
    host_range outer = {.name = "naive", .variant = "naive", .iteration = -1, .start_ns = 1000, .end_ns = 900000,
                        .pid = 4242, .tid = 77};
    trace_add_range(t, &outer);
    for (int i = 0; i < 2; i++) {
        int64_t s = 10000 + i * 400000;
        host_range fwd = {.name = "attn_fwd", .variant = "naive", .iteration = i, .start_ns = s, .end_ns = s + 50000,
                          .pid = 4242, .tid = 77};
        trace_add_range(t, &fwd);
        api_call launch = {.kind = API_RUNTIME, .name = "cudaLaunchKernel", .start_ns = s + 1000, .end_ns = s + 4000,
                           .correlation = (uint32_t)(10 + i), .pid = 4242, .tid = 77, .cbid = 211};
        trace_add_api(t, &launch);
        gpu_op k = {.kind = GPU_KERNEL, .name = "attnprof_softmax_rows_bf16", .start_ns = s + 9000,
                    .end_ns = s + 20000, .correlation = (uint32_t)(10 + i), .device = 0, .stream = 13,
                    .grid = {1056, 1, 1}, .block = {256, 1, 1}, .registers = 32, .context = 3};
        trace_add_op(t, &k);
    }
    api_call copy = {.kind = API_RUNTIME, .name = "cudaMemcpyAsync", .start_ns = 12000, .end_ns = 13000,
                     .correlation = 20, .pid = 4242, .tid = 77, .cbid = 41};
    trace_add_api(t, &copy);
    gpu_op m = {.kind = GPU_MEMCPY, .name = "Memcpy DtoD (Device -> Device)", .start_ns = 30000, .end_ns = 35000,
                .correlation = 20, .stream = 13, .bytes = 1024, .context = 3};
    snprintf(m.copy_kind, sizeof m.copy_kind, "DtoD");
    trace_add_op(t, &m);
    trace_sort(t);
}

static json_int_t ext_id(json_t *e) { return json_integer_value(json_object_get(json_object_get(e, "args"), "External id")); }

Test(kineto_write, reads_like_pytorchs_own_trace)
{
    trace t;
    drop_in_trace(&t);
    char path[] = "/tmp/attnprof-trace-XXXXXX", err[256];
    close(mkstemp(path));
    cr_assert_eq(trace_write_json(&t, path, err, sizeof err), 0, "%s", err);
    /* The text: every key but traceName before traceEvents; HTA's rank regex. */
    FILE *f = fopen(path, "r");
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    const char *events = strstr(text, "\"traceEvents\"");
    cr_assert_not_null(events);
    const char *keys[] = {"\"schemaVersion\"", "\"deviceProperties\"", "\"distributedInfo\"", "\"trace_id\"",
                          "\"baseTimeNanoseconds\"", "\"cupti_version\"", "\"displayTimeUnit\""};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert(strstr(text, keys[i]) && strstr(text, keys[i]) < events, "%s before traceEvents", keys[i]);
    cr_assert(strstr(events, "\"traceName\""), "traceName after traceEvents");
    cr_assert_not_null(strstr(text, "\"rank\": 0"), "a space after the colon: HTA's \"rank\":\\s+(\\d+)");

    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    cr_assert_not_null(root, "%s", je.text);
    json_t *e, *fwd[2] = {0}, *step[2] = {0}, *api[2] = {0}, *kern[2] = {0}, *gann[2] = {0};
    size_t i;
    int metadata_with_ts = 0, host_thread_named = 0, memcpy_context = 0, trace_span = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *cat = json_string_value(json_object_get(e, "cat"));
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t *args = json_object_get(e, "args");
        if (!strcmp(ph, "M")) {
            metadata_with_ts += json_is_number(json_object_get(e, "ts"));
            host_thread_named += !strcmp(name, "thread_name") && json_integer_value(json_object_get(e, "tid")) == 77;
            continue;
        }
        if (!cat)
            continue;
        trace_span += !strcmp(cat, "Trace");
        int it = json_is_integer(json_object_get(args, "iteration")) ? (int)json_integer_value(json_object_get(args, "iteration")) : -1;
        if (!strcmp(cat, "user_annotation") && !strncmp(name, "ProfilerStep#", 13))
            step[name[13] - '0'] = e;
        else if (!strcmp(cat, "user_annotation") && !strcmp(name, "attn_fwd"))
            fwd[it] = e;
        else if (!strcmp(cat, "gpu_user_annotation"))
            gann[it] = e;
        else if (!strcmp(cat, "cuda_runtime") && !strcmp(name, "cudaLaunchKernel")) {
            cr_assert_eq(json_integer_value(json_object_get(args, "cbid")), 211);
            api[json_integer_value(json_object_get(args, "correlation")) - 10] = e;
        } else if (!strcmp(cat, "kernel")) {
            kern[json_integer_value(json_object_get(args, "correlation")) - 10] = e;
            cr_assert_eq(json_integer_value(json_object_get(args, "context")), 3);
            cr_assert(json_is_integer(json_object_get(args, "queued")));
            cr_assert_float_eq(json_number_value(json_object_get(args, "blocks per SM")), 1056.0 / 132, 1e-6);
            cr_assert_float_eq(json_number_value(json_object_get(args, "warps per SM")), 8.0 * 8, 1e-6);
            cr_assert(json_is_integer(json_object_get(args, "est. achieved occupancy %")));
        } else if (!strcmp(cat, "gpu_memcpy"))
            memcpy_context += json_integer_value(json_object_get(args, "context")) == 3;
    }
    cr_assert(metadata_with_ts >= 6 && host_thread_named == 1 && trace_span == 1);
    cr_assert_eq(memcpy_context, 1);
    for (int k = 0; k < 2; k++) {
        cr_assert(fwd[k] && step[k] && api[k] && kern[k] && gann[k], "forward %d: every event", k);
        /* Kineto's External id: the enclosing range's, on the calls, GPU ops and the
         * gpu_user_annotation inside it; the step has its own. */
        cr_assert_eq(ext_id(api[k]), ext_id(fwd[k]));
        cr_assert_eq(ext_id(kern[k]), ext_id(fwd[k]));
        cr_assert_eq(ext_id(gann[k]), ext_id(fwd[k]));
        cr_assert_neq(ext_id(step[k]), ext_id(fwd[k]));
        cr_assert_eq(json_real_value(json_object_get(step[k], "ts")), json_real_value(json_object_get(fwd[k], "ts")));
    }
    cr_assert_neq(ext_id(fwd[0]), ext_id(fwd[1]));
    json_decref(root);

    /* Read back: the derived steps are left out; cbid and context come back. */
    trace back;
    cr_assert_eq(trace_read_json(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.n_ranges, t.n_ranges);
    cr_assert_eq(back.apis[0].cbid, 211);
    cr_assert_eq(back.ops[0].context, 3);
    trace_free(&back);
    trace_free(&t);
    unlink(path);
}

Test(import_cli, compare_with_attnprofs_own_run)
{
    char dir[] = "/tmp/attnprof-import-XXXXXX", args[2048], path[1200];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args,
             "import " TORCH "kineto_sdpa_flash.json.gz " TORCH "kineto_sdpa_cudnn.json.gz --variant flash,cudnn "
             "--shape 8x16x1024x64,bf16,causal -o %s/torch -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "compare tests/fixtures/h200-cudnn919-a %s/torch -o %s/cmp -q", dir, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/cmp/compare.md", dir);
    cr_assert(path_exists(path));
    FILE *md = fopen(path, "r");
    static char text[1 << 20];
    size_t len = md ? fread(text, 1, sizeof text - 1, md) : 0;
    text[len] = '\0';
    if (md)
        fclose(md);
    /* Kineto records no clock: said, not 0, and not marked as a difference (unknown). */
    cr_assert(strstr(text, "| SM clock | 1980 MHz | not recorded |"), "Kineto records no clock: said, not 0");
    /* Without the declared shape, compare refuses (Kineto records none): exit 2, one line. */
    snprintf(args, sizeof args, "import " TORCH "kineto_sdpa_flash.json.gz --variant flash -o %s/noshape -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "compare tests/fixtures/h200-cudnn919-a %s/noshape -o %s/cmp2 -q", dir, dir);
    cr_assert_eq(attnprof(args), EXIT_USAGE, "%s", err_text);
    cr_assert(one_line());
    cr_assert_eq(attnprof("import " TORCH "kineto_sdpa_flash.json.gz --shape 8x16x1024 -o /tmp/never"), EXIT_USAGE);
    cr_assert(strstr(err_text, "--shape") && one_line(), "%s", err_text);
    cr_assert_eq(attnprof("import " TORCH "kineto_sdpa_flash.json.gz --seq 64 -o /tmp/never"), EXIT_USAGE);
    cr_assert(strstr(err_text, "--seq is not an option of import; import takes: ") && one_line(), "%s", err_text);
    cr_assert_not(path_exists("/tmp/never"));
    remove_tree(dir);
}

Test(import_cli, hostile_names_are_escaped)
{
    char dir[] = "/tmp/attnprof-import-XXXXXX", args[1024], path[1200];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/evil|<b>.json", dir);
    write_text(path, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"attn_fwd\",\"pid\":9,"
                     "\"tid\":9,\"ts\":0,\"dur\":10},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::`x`|<script>\","
                     "\"pid\":9,\"tid\":9,\"ts\":0.5,\"dur\":5}," API(1, 1) ","
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k`|<img src=x onerror=alert(1)>\",\"pid\":0,"
                     "\"tid\":7,\"ts\":5,\"dur\":2,\"args\":{\"correlation\":1,\"device\":0}}]}");
    snprintf(args, sizeof args, "import '%s' --variant evil -o %s/a -q", path, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/a/report.html", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    cr_assert_null(strstr(buf, "<script>"), "a CPU op's name is never HTML");
    cr_assert_null(strstr(buf, "<img src=x"), "a kernel's name is never HTML");
    cr_assert_null(strstr(buf, "<b>"), "a file's name is never HTML");
    remove_tree(dir);
}

/* Every full kernel name that the report shortens appears in it. The
 * op tables' footnotes stopped after 16, so math's 187 µs `aten::to` kernel (op 18 of the
 * imported PyTorch math forward) had its name nowhere; the appendix lists them all. */
static char *html_escaped(const char *s)
{
    char *out = malloc(strlen(s) * 6 + 1), *o = out;
    for (; *s; s++)
        o += *s == '<' ? sprintf(o, "&lt;") : *s == '>' ? sprintf(o, "&gt;") : *s == '&' ? sprintf(o, "&amp;")
             : *s == '"' ? sprintf(o, "&quot;") : sprintf(o, "%c", *s);
    *o = '\0';
    return out;
}

Test(import, every_shortened_kernel_name_is_in_the_report_in_full)
{
    imported *im = import_torch();
    char *md = report_markdown(&im->a, NULL, NULL);
    char err[256];
    char *html = report_html(md, "imported", err, sizeof err);
    cr_assert_not_null(html, "%s", err);
    /* the HTML writer puts <wbr> break hints into long code spans: read past them */
    for (char *w; (w = strstr(html, "<wbr>"));)
        memmove(w, w + 5, strlen(w + 5) + 1);
    int shortened = 0, in_rep = 0;
    for (size_t i = 0; i < im->t.n_ops; i++) {
        const gpu_op *o = &im->t.ops[i];
        char s[FINDING_NAME_MAX + 8];
        if (o->kind != GPU_KERNEL)
            continue;
        findings_short_name(o->name, s, sizeof s);
        if (!strcmp(s, o->name))
            continue;
        shortened++;
        cr_assert_not_null(strstr(md, o->name), "report.md lacks the full name of %s:\n%s", s, o->name);
        char *h = html_escaped(o->name);
        cr_assert_not_null(strstr(html, h), "report.html lacks the full name of %s", s);
        free(h);
    }
    cr_assert_gt(shortened, 16, "more shortened kernels than the 16 footnotes held");
    /* the 187 µs kernel of math's representative forward, past the 16th footnote */
    const variant_analysis *m = analysis_find(&im->a, "kineto_sdpa_math");
    cr_assert_not_null(m);
    const forward *fw = &m->forwards[analysis_median_forward(m)];
    for (int k = 16; k < fw->n_ops; k++) {
        const gpu_op *o = fw->ops[k];
        char s[FINDING_NAME_MAX + 8];
        findings_short_name(o->name, s, sizeof s);
        if (o->kind == GPU_KERNEL && strcmp(s, o->name) && o->end_ns - o->start_ns > 100000) {
            in_rep++;
            /* its footnote under math's op table, past the 16th */
            char want[2048];
            snprintf(want, sizeof want, "] op %d: `%s`", k + 1, o->name);
            const char *sec = strstr(md, "### `kineto_sdpa_math`");
            cr_assert_not_null(sec);
            cr_assert_not_null(strstr(sec, want), "math's op table has no footnote for op %d (%s)", k + 1, s);
        }
    }
    cr_assert_gt(in_rep, 0, "math's long shortened kernels past the 16th op");
    const char *app = strstr(md, "## Appendix: full kernel names");
    cr_assert_not_null(app);
    int rows = 0;
    for (const char *p = strstr(app, "|---|---|---|\n"); p && (p = strstr(p + 1, "\n| `")) && p < strstr(app, "\n## Cite");)
        rows++;
    int n;
    free(kernel_names_shortened(&im->a, &n));
    cr_assert_eq(rows, n, "one appendix row per distinct shortened name");
    free(html);
    free(md);
    imported_free(im);
}
