/* `attnprof import` of real model traces (tests/fixtures/models-h200, recorded on the
 * H200 by bench/model_traces.py): roles, the attention implementation, the recorded
 * shapes and attention's share of the step, each checked against numbers this test
 * computes itself from the trace JSON (read with jansson here, not with attnprof's
 * streaming reader): GPU ops whose launching call lies inside a ProfilerStep#N range,
 * attributed to the CPU ops around that call on its thread. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis.h"
#include "archive.h"
#include "exit_codes.h"
#include "findings.h"
#include "kineto_import.h"
#include "kineto_read.h"
#include "model_inputs.h"
#include "model_roles.h"
#include "run_cli.h"

#define MODELS "tests/fixtures/models-h200/"

/* ---- the independent count --------------------------------------------------- */

typedef struct jop {
    const char *name;
    double ts, dur;
    int tid;
} jop;

typedef struct jtrace {
    json_t *root;
    jop *cpu;
    size_t n_cpu;
    jop steps[8];
    int n_steps;
    /* GPU ops with their launcher's ts and tid */
    struct jgpu {
        const char *name;
        double dur, launch_ts;
        int launch_tid, step;
    } *gpu;
    size_t n_gpu;
} jtrace;

static json_t *load_gz(const char *path)
{
    gzFile z = gzopen(path, "rb");
    cr_assert_not_null(z, "%s", path);
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    int n;
    while ((n = gzread(z, buf + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)n;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    gzclose(z);
    json_error_t e;
    json_t *root = json_loadb(buf, len, 0, &e);
    free(buf);
    cr_assert_not_null(root, "%s: %s", path, e.text);
    return root;
}

static const char *jstr(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void jtrace_load(jtrace *t, const char *path)
{
    memset(t, 0, sizeof *t);
    t->root = load_gz(path);
    json_t *ev = json_object_get(t->root, "traceEvents");
    size_t n = json_array_size(ev), i;
    t->cpu = calloc(n, sizeof *t->cpu);
    t->gpu = calloc(n, sizeof *t->gpu);
    /* launchers by correlation id */
    json_int_t max_corr = 0;
    json_t *e;
    json_array_foreach(ev, i, e) {
        json_t *c = json_object_get(json_object_get(e, "args"), "correlation");
        if (json_is_integer(c) && json_integer_value(c) > max_corr)
            max_corr = json_integer_value(c);
    }
    double *lts = calloc((size_t)max_corr + 1, sizeof *lts);
    int *ltid = calloc((size_t)max_corr + 1, sizeof *ltid);
    char *have = calloc((size_t)max_corr + 1, 1);
    json_array_foreach(ev, i, e) {
        const char *cat = jstr(e, "cat"), *name = jstr(e, "name");
        if (!cat || !name)
            continue;
        double ts = json_number_value(json_object_get(e, "ts")), dur = json_number_value(json_object_get(e, "dur"));
        int tid = (int)json_integer_value(json_object_get(e, "tid"));
        if (!strcmp(cat, "cpu_op"))
            t->cpu[t->n_cpu++] = (jop){name, ts, dur, tid};
        else if (!strcmp(cat, "user_annotation") && !strncmp(name, "ProfilerStep#", 13) && t->n_steps < 8)
            t->steps[t->n_steps++] = (jop){name, ts, dur, tid};
        else if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) {
            json_t *c = json_object_get(json_object_get(e, "args"), "correlation");
            if (json_is_integer(c)) {
                lts[json_integer_value(c)] = ts, ltid[json_integer_value(c)] = tid;
                have[json_integer_value(c)] = 1;
            }
        }
    }
    json_array_foreach(ev, i, e) {
        const char *cat = jstr(e, "cat");
        if (!cat || (strcmp(cat, "kernel") && strcmp(cat, "gpu_memcpy") && strcmp(cat, "gpu_memset")))
            continue;
        json_t *c = json_object_get(json_object_get(e, "args"), "correlation");
        if (!json_is_integer(c) || !have[json_integer_value(c)])
            continue;
        json_int_t id = json_integer_value(c);
        int step = -1;
        for (int s = 0; s < t->n_steps; s++)
            if (lts[id] >= t->steps[s].ts && lts[id] <= t->steps[s].ts + t->steps[s].dur)
                step = s;
        t->gpu[t->n_gpu++] = (struct jgpu){jstr(e, "name"), json_number_value(json_object_get(e, "dur")), lts[id],
                                           ltid[id], step};
    }
    free(lts), free(ltid), free(have);
    /* steps in time order */
    for (int a = 0; a < t->n_steps; a++)
        for (int b = a + 1; b < t->n_steps; b++)
            if (t->steps[b].ts < t->steps[a].ts) {
                jop x = t->steps[a];
                t->steps[a] = t->steps[b], t->steps[b] = x;
            }
    for (size_t g = 0; g < t->n_gpu; g++) {
        t->gpu[g].step = -1;
        for (int s = 0; s < t->n_steps; s++)
            if (t->gpu[g].launch_ts >= t->steps[s].ts && t->gpu[g].launch_ts <= t->steps[s].ts + t->steps[s].dur)
                t->gpu[g].step = s;
    }
}

static void jtrace_free(jtrace *t)
{
    json_decref(t->root);
    free(t->cpu), free(t->gpu);
}

/* 1 when a CPU op on the launcher's thread around its start has a name for which `pred` holds. */
typedef int (*name_pred)(const char *name);
static int launched_under(const jtrace *t, const struct jgpu *g, name_pred pred)
{
    for (size_t c = 0; c < t->n_cpu; c++)
        if (t->cpu[c].tid == g->launch_tid && t->cpu[c].ts <= g->launch_ts &&
            g->launch_ts <= t->cpu[c].ts + t->cpu[c].dur && pred(t->cpu[c].name))
            return 1;
    return 0;
}

typedef struct counted {
    double ops, us, share; /* medians over steps (two steps: their mean) */
} counted;

static double median2(double *v, int n)
{
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (v[b] < v[a]) {
                double x = v[a];
                v[a] = v[b], v[b] = x;
            }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static counted count_under(const jtrace *t, name_pred pred)
{
    double ops[8] = {0}, us[8] = {0}, total[8] = {0}, share[8];
    for (size_t g = 0; g < t->n_gpu; g++) {
        int s = t->gpu[g].step;
        if (s < 0)
            continue;
        total[s] += t->gpu[g].dur;
        if (launched_under(t, &t->gpu[g], pred))
            ops[s]++, us[s] += t->gpu[g].dur;
    }
    for (int s = 0; s < t->n_steps; s++)
        share[s] = us[s] / total[s];
    return (counted){median2(ops, t->n_steps), median2(us, t->n_steps), median2(share, t->n_steps)};
}

/* ---- attnprof's numbers -------------------------------------------------------- */

typedef struct imported {
    trace t;
    run_info r;
    analysis a;
    model_view v;
} imported;

static void import_model(imported *im, const char *name)
{
    char path[256], err[512];
    snprintf(path, sizeof path, MODELS "%s.json.gz", name);
    const char *files[] = {path};
    import_options o = {.device = -1};
    cr_assert_eq(kineto_import(files, 1, &o, &im->t, &im->r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(analysis_build(&im->a, &im->t, &im->r, err, sizeof err), 0, "%s", err);
    findings_derive(&im->a);
    cr_assert_eq(model_view_build(&im->a.v[0], &im->v), 0);
}

static void imported_free(imported *im)
{
    analysis_free(&im->a);
    trace_free(&im->t);
}

static const model_role_row *row_of(const model_view *v, model_phase p, model_role r)
{
    for (int k = 0; k < v->n_rows; k++)
        if (v->rows[k].phase == p && v->rows[k].role == r)
            return &v->rows[k];
    return NULL;
}

static void within_1pct(double got, double want, const char *what)
{
    cr_assert(want > 0 && fabs(got - want) <= 0.01 * want, "%s: attnprof %.6g, counted from the trace %.6g", what,
              got, want);
}

static void assert_row(const model_view *v, model_phase p, model_role r, counted want, const char *what)
{
    const model_role_row *row = row_of(v, p, r);
    cr_assert_not_null(row, "%s: no %s row", what, model_role_name(r));
    cr_assert_eq(row->ops, want.ops, "%s: %g ops per step, counted %g", what, row->ops, want.ops);
    within_1pct(row->us, want.us, what);
    within_1pct(row->share, want.share, what);
}

/* The first cpu_op named `name` whose first input is 4-D: its Input Dims, tensor i, dimension d. */
static long long input_dim(const jtrace *t, const char *name, int i, int d)
{
    json_t *ev = json_object_get(t->root, "traceEvents"), *e;
    size_t k;
    json_array_foreach(ev, k, e) {
        const char *cat = jstr(e, "cat"), *n = jstr(e, "name");
        json_t *dims = json_object_get(json_object_get(e, "args"), "Input Dims");
        if (cat && n && !strcmp(cat, "cpu_op") && !strcmp(n, name) && json_array_size(json_array_get(dims, 0)) == 4)
            return json_integer_value(json_array_get(json_array_get(dims, i), d));
    }
    return -1;
}

/* The layer count bench/model_traces.py wrote for the model ("4 layers" in model-traces.txt). */
static int layers_in_notes(const char *name)
{
    FILE *f = fopen(MODELS "model-traces.txt", "r");
    cr_assert_not_null(f);
    char line[1024], key[128];
    snprintf(key, sizeof key, "%s: ", name);
    int layers = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) {
            const char *p = strstr(line, " layers");
            while (p && p > line && p[-1] >= '0' && p[-1] <= '9')
                p--;
            layers = p ? atoi(p) : -1;
        }
    fclose(f);
    return layers;
}

static int is_cudnn_fwd(const char *n) { return strstr(n, "_scaled_dot_product_cudnn_attention") && !strstr(n, "backward"); }
static int is_cudnn_bwd(const char *n) { return strstr(n, "_scaled_dot_product_cudnn_attention_backward") != NULL; }
static int is_softmax(const char *n) { return !strcmp(n, "aten::softmax") || !strcmp(n, "aten::_softmax"); }
static int is_flex(const char *n) { return strstr(n, "flex_attention") != NULL; }
static int is_conv(const char *n) { return !strcmp(n, "aten::cudnn_convolution") || !strcmp(n, "aten::_convolution"); }
static int always(const char *n) { return n != NULL; }
static int is_optimizer(const char *n) { return !strncmp(n, "aten::_fused_adam", 17) || !strncmp(n, "aten::_foreach_", 15); }

static void assert_inputs(const imported *im, const jtrace *t, const char *op, model_attn_kind kind)
{
    model_attn_inputs m;
    cr_assert(model_inputs_of(&im->r.variants[0], &m), "no attn_inputs fact");
    cr_assert_eq(m.kind, kind);
    cr_assert_eq(m.batch, input_dim(t, op, 0, 0));
    cr_assert_eq(m.heads_q, input_dim(t, op, 0, 1));
    cr_assert_eq(m.seq_q, input_dim(t, op, 0, 2));
    cr_assert_eq(m.dim, input_dim(t, op, 0, 3));
    if (kind == MODEL_ATTN_EAGER) /* q [B,H,S_q,D] × kᵀ [B,H,D,S_kv] */
        cr_assert_eq(m.seq_kv, input_dim(t, op, 1, 3));
    else {
        cr_assert_eq(m.heads_kv, input_dim(t, op, 1, 1));
        cr_assert_eq(m.seq_kv, input_dim(t, op, 1, 2));
    }
}

Test(model_import, llama_sdpa_inference_runs_cudnn_with_gqa)
{
    imported *im = calloc(1, sizeof *im);
    jtrace t;
    import_model(im, "llama-gqa-sdpa-infer");
    jtrace_load(&t, MODELS "llama-gqa-sdpa-infer.json.gz");
    assert_row(&im->v, MPHASE_FORWARD, MROLE_ATTN_FUSED, count_under(&t, is_cudnn_fwd), "attention");
    within_1pct(im->v.attn_share_total, count_under(&t, is_cudnn_fwd).share, "attention's share");
    cr_assert_str_eq(row_of(&im->v, MPHASE_FORWARD, MROLE_ATTN_FUSED)->implementation, "cuDNN");
    cr_assert_str_eq(im->v.backend, "cuDNN");
    assert_inputs(im, &t, "aten::scaled_dot_product_attention", MODEL_ATTN_SDPA);
    model_attn_inputs m;
    model_inputs_of(&im->r.variants[0], &m);
    cr_assert(m.heads_q != m.heads_kv, "GQA: Hq %d, Hkv %d", m.heads_q, m.heads_kv);
    cr_assert_eq(m.causal, 1);
    cr_assert_eq(im->v.n_layers, layers_in_notes("llama-gqa-sdpa-infer"));
    cr_assert_eq(model_kernel_sm(im->v.attn_kernel->name), 90);
    cr_assert_null(row_of(&im->v, MPHASE_BACKWARD, MROLE_GEMM), "no backward in inference");
    /* the rotary embedding's FP32 bmm (cutlass_80_simt_sgemm): its inputs are recorded as fp32 */
    const finding *fp = findings_find(&im->a.v[0], "fp32_cuda_core_inputs");
    cr_assert(fp && strstr(fp->text, "aten::bmm with fp32 inputs"), "%s", fp ? fp->text : "none");
    cr_assert_null(findings_find(&im->a.v[0], "fp32_cuda_core_16bit"));
    jtrace_free(&t);
    imported_free(im);
    free(im);
}

Test(model_import, llama_eager_is_the_naive_variant)
{
    imported *im = calloc(1, sizeof *im);
    jtrace t;
    import_model(im, "llama-gqa-eager-infer");
    jtrace_load(&t, MODELS "llama-gqa-eager-infer.json.gz");
    assert_row(&im->v, MPHASE_FORWARD, MROLE_ATTN_SOFTMAX, count_under(&t, is_softmax), "eager softmax");
    cr_assert_null(row_of(&im->v, MPHASE_FORWARD, MROLE_ATTN_FUSED), "no fused attention in eager mode");
    int layers = layers_in_notes("llama-gqa-eager-infer");
    cr_assert_eq(im->v.eager_blocks, layers, "one eager attention per layer");
    cr_assert_eq(row_of(&im->v, MPHASE_FORWARD, MROLE_ATTN_QK)->ops, layers);
    cr_assert_eq(row_of(&im->v, MPHASE_FORWARD, MROLE_ATTN_PV)->ops, layers);
    cr_assert_eq(im->v.n_layers, layers);
    assert_inputs(im, &t, "aten::matmul", MODEL_ATTN_EAGER);
    cr_assert_eq(im->v.eager_out_of_place_mask, 0, "transformers adds the mask; no aten::masked_fill in the trace");
    jtrace_free(&t);
    imported_free(im);
    free(im);
}

Test(model_import, gpt2_eager_fp16)
{
    imported *im = calloc(1, sizeof *im);
    jtrace t;
    import_model(im, "gpt2-eager-fp16");
    jtrace_load(&t, MODELS "gpt2-eager-fp16.json.gz");
    assert_row(&im->v, MPHASE_FORWARD, MROLE_ATTN_SOFTMAX, count_under(&t, is_softmax), "eager softmax");
    cr_assert_eq(im->v.eager_blocks, layers_in_notes("gpt2-eager-fp16"));
    cr_assert_eq(im->v.n_layers, layers_in_notes("gpt2-eager-fp16"));
    assert_inputs(im, &t, "aten::matmul", MODEL_ATTN_EAGER);
    model_attn_inputs m;
    model_inputs_of(&im->r.variants[0], &m);
    cr_assert_str_eq(m.dtype, "fp16");
    /* cuBLAS's cutlass_75 (Turing) tensor-core GEMM on the sm_90 H200: the kernels of an older
     * architecture per step, counted here from the names in the trace */
    const finding *fd = findings_find(&im->a.v[0], "kernel_arch");
    cr_assert_not_null(fd);
    cr_assert_eq(findings_value(fd, "kernel_sm"), 75);
    double old[8] = {0};
    for (size_t g = 0; g < t.n_gpu; g++)
        if (t.gpu[g].step >= 0 && t.gpu[g].name &&
            (strstr(t.gpu[g].name, "cutlass_75_") || strstr(t.gpu[g].name, "cutlass_80_") ||
             strstr(t.gpu[g].name, "_sm80_") || strstr(t.gpu[g].name, "sm80_")))
            old[t.gpu[g].step] += t.gpu[g].dur;
    double got = findings_value(fd, "us_per_step");
    cr_assert(fabs(got - old[0]) <= 0.01 * old[0] || fabs(got - old[1]) <= 0.01 * old[1],
              "older-architecture kernels: attnprof %.1f µs, counted %.1f / %.1f µs per step", got, old[0], old[1]);
    jtrace_free(&t);
    imported_free(im);
    free(im);
}

Test(model_import, training_step_separates_forward_backward_and_optimizer)
{
    imported *im = calloc(1, sizeof *im);
    jtrace t;
    import_model(im, "llama-gqa-sdpa-train");
    jtrace_load(&t, MODELS "llama-gqa-sdpa-train.json.gz");
    counted fwd = count_under(&t, is_cudnn_fwd), bwd = count_under(&t, is_cudnn_bwd);
    assert_row(&im->v, MPHASE_FORWARD, MROLE_ATTN_FUSED, fwd, "forward attention");
    assert_row(&im->v, MPHASE_BACKWARD, MROLE_ATTN_BACKWARD, bwd, "attention backward");
    assert_row(&im->v, MPHASE_OPTIMIZER, MROLE_OPTIMIZER, count_under(&t, is_optimizer), "optimizer");
    within_1pct(im->v.attn_share[MPHASE_FORWARD], fwd.share, "forward attention share");
    within_1pct(im->v.attn_share[MPHASE_BACKWARD], bwd.share, "backward attention share");
    cr_assert(row_of(&im->v, MPHASE_BACKWARD, MROLE_GEMM), "backward GEMMs");
    cr_assert_eq(im->v.n_layers, layers_in_notes("llama-gqa-sdpa-train"));
    model_attn_inputs m;
    model_inputs_of(&im->r.variants[0], &m);
    cr_assert_str_eq(m.dtype, "bf16", "autocast: the backend op's dtype, not the fp32 the public op saw");
    jtrace_free(&t);
    imported_free(im);
    free(im);
}

Test(model_import, decode_runs_an_sm80_cudnn_kernel_on_the_h200)
{
    imported *im = calloc(1, sizeof *im);
    jtrace t;
    import_model(im, "llama-gqa-sdpa-decode");
    jtrace_load(&t, MODELS "llama-gqa-sdpa-decode.json.gz");
    assert_row(&im->v, MPHASE_FORWARD, MROLE_ATTN_FUSED, count_under(&t, is_cudnn_fwd), "decode attention");
    cr_assert(strstr(im->v.attn_kernel->name, "sm80"), "%s", im->v.attn_kernel->name);
    cr_assert_eq(model_kernel_sm(im->v.attn_kernel->name), 80);
    cr_assert_eq(im->r.device.major * 10 + im->r.device.minor, 90);
    assert_inputs(im, &t, "aten::scaled_dot_product_attention", MODEL_ATTN_SDPA);
    model_attn_inputs m;
    model_inputs_of(&im->r.variants[0], &m);
    cr_assert_eq(m.seq_q, 1);
    cr_assert_eq(m.causal, 0);
    const finding *fd = findings_find(&im->a.v[0], "kernel_arch");
    cr_assert_not_null(fd, "an sm80 kernel on sm_90 is a finding");
    cr_assert_eq(findings_value(fd, "kernel_sm"), 80);
    jtrace_free(&t);
    imported_free(im);
    free(im);
}

Test(model_import, vit_cudnn_attention_and_convolution)
{
    imported *im = calloc(1, sizeof *im);
    jtrace t;
    import_model(im, "vit-b16-bf16");
    jtrace_load(&t, MODELS "vit-b16-bf16.json.gz");
    assert_row(&im->v, MPHASE_FORWARD, MROLE_ATTN_FUSED, count_under(&t, is_cudnn_fwd), "attention");
    assert_row(&im->v, MPHASE_FORWARD, MROLE_CONV, count_under(&t, is_conv), "patch embedding");
    assert_inputs(im, &t, "aten::scaled_dot_product_attention", MODEL_ATTN_SDPA);
    cr_assert_eq(im->v.n_layers, layers_in_notes("vit-b16-bf16"));
    jtrace_free(&t);
    imported_free(im);
    free(im);
}

Test(model_import, flex_attention_compiled)
{
    imported *im = calloc(1, sizeof *im);
    jtrace t;
    import_model(im, "flex-causal-bf16");
    jtrace_load(&t, MODELS "flex-causal-bf16.json.gz");
    assert_row(&im->v, MPHASE_FORWARD, MROLE_ATTN_FUSED, count_under(&t, is_flex), "FlexAttention");
    cr_assert_str_eq(im->v.backend, "FlexAttention (Triton)");
    assert_inputs(im, &t, "triton_tem_fused_flex_attention_0", MODEL_ATTN_FLEX);
    jtrace_free(&t);
    imported_free(im);
    free(im);
}

Test(model_import, roles_of_single_ops)
{
    gpu_op o = {.kind = GPU_KERNEL, .name = "void at::native::vectorized_elementwise_kernel<4>",
                .cpu_op_path = "autograd::engine::evaluate_function: MulBackward0 > MulBackward0 > aten::mul"};
    o.cpu_op = "aten::mul";
    model_phase p;
    cr_assert_eq(model_role_of(&o, &p), MROLE_ELEMENTWISE);
    cr_assert_eq(p, MPHASE_BACKWARD);
    gpu_op m = {.kind = GPU_KERNEL, .name = "void at::native::softmax_warp_forward<float>",
                .cpu_op_path = "aten::scaled_dot_product_attention > aten::_scaled_dot_product_attention_math > "
                               "aten::_softmax", .cpu_op = "aten::_softmax"};
    cr_assert_eq(model_role_of(&m, &p), MROLE_ATTN_FUSED);
    cr_assert_str_eq(model_attn_backend(&m), "math");
    gpu_op c = {.kind = GPU_KERNEL, .name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)"};
    cr_assert_eq(model_role_of(&c, &p), MROLE_COMM);
    cr_assert_eq(model_kernel_sm("sm90_xmma_gemm_bf16"), 90);
    cr_assert_eq(model_kernel_sm("void cutlass::Kernel2<cutlass_75_tensorop_f16_s1688gemm_f16_256x128_tn_align1>"), 75);
    cr_assert_eq(model_kernel_sm("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop>"), 0,
                 "no architecture in the name");
    cr_assert_eq(model_kernel_sm("nvjet_tst_128x64"), 0);
    cr_assert_eq(model_kernel_sm("x_sm100a_y"), 100);
}

Test(model_import_cli, shape_conflict_refused_and_rerender_identical)
{
    char dir[] = "/tmp/attnprof-model-XXXXXX", args[1024], cmd[2048];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "import " MODELS "vit-b16-bf16.json.gz --shape 64x12x196x64 -o %s/bad -q", dir);
    cr_assert_eq(attnprof(args), EXIT_SHAPE_CONFLICT, "%s", err_text);
    cr_assert(strstr(err_text, "196") && strstr(err_text, "197") && strchr(err_text, '\n') == strrchr(err_text, '\n'),
              "one line naming both: %s", err_text);
    snprintf(cmd, sizeof cmd, "%s/bad", dir);
    cr_assert(!path_exists(cmd), "nothing written");
    snprintf(args, sizeof args, "import " MODELS "llama-gqa-sdpa-train.json.gz -o %s/a -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(cmd, sizeof cmd, "cp %s/a/report.md %s/a/roles.csv %s/", dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "report %s/a -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(cmd, sizeof cmd, "cmp -s %s/report.md %s/a/report.md && cmp -s %s/roles.csv %s/a/roles.csv", dir, dir, dir,
             dir);
    cr_assert_eq(system(cmd), 0, "the re-rendered report or roles.csv differs from the import's");
    static char text[1 << 20];
    snprintf(cmd, sizeof cmd, "%s/a/roles.csv", dir);
    read_into(cmd, text, sizeof text);
    const char *head = "variant,phase,role,implementation,ops_per_step,cuda_us_per_step,share";
    cr_assert(!strncmp(text, head, strlen(head)), "%.80s", text);
    cr_assert(strstr(text, "llama-gqa-sdpa-train,backward,attention_backward,cuDNN,"), "roles.csv");
    snprintf(cmd, sizeof cmd, "%s/a/report.md", dir);
    read_into(cmd, text, sizeof text);
    char *model = strstr(text, "## Model"), *end = model ? strstr(model + 1, "\n## ") : NULL;
    cr_assert(model && end && strstr(model, "(forward "), "the model section, phases apart");
    *end = '\0';
    cr_assert(!strstr(model, "=0,") && !strstr(model, "-1") && !strstr(model, "()") && !strstr(model, "nan"),
              "no placeholder in the model section");
    cr_assert(!strstr(end + 1, "B=0") && !strstr(end + 1, "-1 were expected"), "no placeholder");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(model_import_cli, eager_and_sdpa_side_by_side)
{
    char dir[] = "/tmp/attnprof-model-XXXXXX", args[1024], path[1200];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args,
             "import " MODELS "llama-gqa-eager-infer.json.gz " MODELS "llama-gqa-sdpa-infer.json.gz -o %s/a -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    static char text[1 << 20];
    snprintf(path, sizeof path, "%s/a/report.md", dir);
    read_into(path, text, sizeof text);
    const char *side = strstr(text, "### Role by role");
    cr_assert_not_null(side);
    /* the step ratio, from the two traces' own step times */
    jtrace e, s;
    jtrace_load(&e, MODELS "llama-gqa-eager-infer.json.gz");
    jtrace_load(&s, MODELS "llama-gqa-sdpa-infer.json.gz");
    double te = count_under(&e, always).us / count_under(&e, always).share;
    double ts = count_under(&s, always).us / count_under(&s, always).share;
    char want[64];
    snprintf(want, sizeof want, "| all | step | %.1f | %.1f | %.2f× |", te, ts, ts / te);
    cr_assert(strstr(side, want), "want %s", want);
    cr_assert(strstr(side, "| forward | attention_softmax | ") && strstr(side, "| forward | attention | – | "),
              "eager's parts beside SDPA's one op");
    jtrace_free(&e), jtrace_free(&s);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    cr_assert_eq(system(args), 0);
}

/* The series' own PyTorch traces (tests/fixtures/torch-h200, recorded on the H200 by
 * bench/torch_traces.py, one forward per attn_fwd range): the naive variant's
 * out-of-place masked_fill, and SDPA's math backend. */
static int is_math(const char *n) { return strstr(n, "_scaled_dot_product_attention_math") != NULL; }
static int is_masked_fill(const char *n) { return !strcmp(n, "aten::masked_fill"); }

Test(model_import, series_traces_math_fallback_and_masked_fill_copy)
{
    char err[512];
    const char *files[] = {"tests/fixtures/torch-h200/kineto_naive.json.gz",
                           "tests/fixtures/torch-h200/kineto_sdpa_math.json.gz"};
    imported *im = calloc(1, sizeof *im);
    import_options o = {.device = -1};
    cr_assert_eq(kineto_import(files, 2, &o, &im->t, &im->r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(analysis_build(&im->a, &im->t, &im->r, err, sizeof err), 0, "%s", err);
    findings_derive(&im->a);
    model_view *naive = calloc(1, sizeof *naive), *math = calloc(1, sizeof *math);
    cr_assert_eq(model_view_build(&im->a.v[0], naive), 0);
    cr_assert_eq(model_view_build(&im->a.v[1], math), 0);
    /* attn_fwd ranges are the steps here: count GPU ops launched inside them */
    jtrace t;
    jtrace_load(&t, files[0]);
    json_t *ev = json_object_get(t.root, "traceEvents"), *e;
    size_t k;
    t.n_steps = 0;
    json_array_foreach(ev, k, e) {
        const char *cat = jstr(e, "cat"), *name = jstr(e, "name");
        if (cat && name && !strcmp(cat, "user_annotation") && !strcmp(name, "attn_fwd") && t.n_steps < 8)
            t.steps[t.n_steps++] = (jop){name, json_number_value(json_object_get(e, "ts")),
                                         json_number_value(json_object_get(e, "dur")), 0};
    }
    for (size_t g = 0; g < t.n_gpu; g++) {
        t.gpu[g].step = -1;
        for (int s = 0; s < t.n_steps; s++)
            if (t.gpu[g].launch_ts >= t.steps[s].ts && t.gpu[g].launch_ts <= t.steps[s].ts + t.steps[s].dur)
                t.gpu[g].step = s;
    }
    cr_assert_eq(naive->eager_blocks, 1);
    cr_assert_eq(naive->eager_out_of_place_mask, 1, "aten::masked_fill copies the scores");
    counted fill = count_under(&t, is_masked_fill);
    cr_assert_eq(fill.ops, 2, "the masked_fill's copy and fill: %g", fill.ops);
    cr_assert_geq(row_of(naive, MPHASE_FORWARD, MROLE_ATTN_MASK)->ops, fill.ops);
    cr_assert_not_null(findings_find(&im->a.v[0], "attention_share"));
    cr_assert_str_eq(math->backend, "math");
    const finding *fd = findings_find(&im->a.v[1], "math_fallback");
    cr_assert_not_null(fd);
    jtrace_free(&t);
    jtrace_load(&t, files[1]);
    t.n_steps = 0;
    ev = json_object_get(t.root, "traceEvents");
    json_array_foreach(ev, k, e) {
        const char *cat = jstr(e, "cat"), *name = jstr(e, "name");
        if (cat && name && !strcmp(cat, "user_annotation") && !strcmp(name, "attn_fwd") && t.n_steps < 8)
            t.steps[t.n_steps++] = (jop){name, json_number_value(json_object_get(e, "ts")),
                                         json_number_value(json_object_get(e, "dur")), 0};
    }
    for (size_t g = 0; g < t.n_gpu; g++) {
        t.gpu[g].step = -1;
        for (int s = 0; s < t.n_steps; s++)
            if (t.gpu[g].launch_ts >= t.steps[s].ts && t.gpu[g].launch_ts <= t.steps[s].ts + t.steps[s].dur)
                t.gpu[g].step = s;
    }
    counted m = count_under(&t, is_math);
    cr_assert_eq(findings_value(fd, "ops_per_step"), m.ops, "math: %g ops, counted %g", findings_value(fd, "ops_per_step"),
                 m.ops);
    within_1pct(findings_value(fd, "us_per_step"), m.us, "math backend µs");
    jtrace_free(&t);
    free(naive), free(math);
    imported_free(im);
    free(im);
}

/* Synthetic traces (written here, not recorded): record_shapes args the reader must not misread. */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static int see_event(void *ctx, size_t idx, const kineto_event *e, char *err, size_t errlen)
{
    (void)idx, (void)err, (void)errlen;
    model_inputs_see(ctx, e);
    return 0;
}

Test(model_import, record_shapes_args_synthetic)
{
    char path[] = "/tmp/attnprof-shapes-XXXXXX";
    close(mkstemp(path));
    char err[256];
    /* nested lists in Concrete Inputs, a string with a comma, empty leading types */
    write_text(path, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::scaled_dot_product_attention\","
                     "\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"args\":{\"Input Dims\":[[2,8,128,64],[2,2,256,64],"
                     "[2,2,256,64],[],[],[],[],[]],\"Input type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\","
                     "\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",[\"1, 2\",[3]],"
                     "\"0.\",\"True\",\"0.125\",\"True\"]}}]}");
    model_inputs_scan scan = {0};
    cr_assert_eq(kineto_read(path, see_event, &scan, NULL, NULL, err, sizeof err), KINETO_OK, "%s", err);
    const model_attn_inputs *m = &scan.found;
    cr_assert_eq(m->kind, MODEL_ATTN_SDPA);
    cr_assert(m->batch == 2 && m->heads_q == 8 && m->heads_kv == 2 && m->seq_q == 128 && m->seq_kv == 256 &&
              m->dim == 64, "B %d Hq %d Hkv %d S_q %d S_kv %d D %d", m->batch, m->heads_q, m->heads_kv, m->seq_q,
              m->seq_kv, m->dim);
    cr_assert_str_eq(m->dtype, "fp16");
    cr_assert_eq(m->causal, 1, "is_causal is the 6th input whatever the lists before it");
    char text[200];
    model_inputs_format(m, text, sizeof text);
    model_attn_inputs back;
    cr_assert_eq(model_inputs_parse(text, &back), 0, "%s", text);
    cr_assert(back.batch == 2 && back.heads_kv == 2 && back.seq_kv == 256 && back.causal == 1, "%s", text);
    /* dims past KINETO_MAX_INPUTS_TEXT are not read as shapes; 3-D inputs are passed over */
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::scaled_dot_product_attention\","
          "\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"args\":{\"Input Dims\":[[2,8,128,64],[2,2,256,64]", f);
    for (int i = 0; i < 2000; i++)
        fputs(",[1,2,3]", f);
    fputs("]}},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::scaled_dot_product_attention\",\"ts\":5,\"dur\":1,"
          "\"pid\":1,\"tid\":1,\"args\":{\"Input Dims\":[[8,128,64],[8,128,64]]}}]}", f);
    fclose(f);
    memset(&scan, 0, sizeof scan);
    cr_assert_eq(kineto_read(path, see_event, &scan, NULL, NULL, err, sizeof err), KINETO_OK, "%s", err);
    cr_assert_eq(scan.found.kind, MODEL_ATTN_NONE, "a cut Input Dims or a 3-D q is no shape");
    cr_assert_eq(model_inputs_parse("sdpa: B=0, Hq=1, Hkv=1, S_q=1, S_kv=1, D=1, bf16, causal, from x", &back), -1,
                 "B=0 is never a recorded shape");
    unlink(path);
}

/* Synthetic (written here, not recorded): an FP32 CUDA-core GEMM kernel launched by an aten::bmm whose
 * recorded inputs are bf16, inside one ProfilerStep. */
Test(model_import, fp32_cuda_core_kernel_on_16bit_inputs_synthetic)
{
    char path[] = "/tmp/attnprof-fp32-XXXXXX";
    close(mkstemp(path));
    write_text(path,
               "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H200\",\"computeMajor\":9,"
               "\"computeMinor\":0,\"numSms\":132,\"sharedMemPerBlock\":49152,\"sharedMemPerBlockOptin\":232448,"
               "\"regsPerBlock\":65536,\"regsPerMultiprocessor\":65536,\"maxThreadsPerBlock\":1024,"
               "\"maxThreadsPerMultiprocessor\":2048,\"warpSize\":32,\"sharedMemPerMultiprocessor\":233472,"
               "\"totalGlobalMem\":150000000000}],\"traceEvents\":["
               "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":100,"
               "\"dur\":100},"
               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::bmm\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":20,"
               "\"args\":{\"Input Dims\":[[16,64,64],[16,64,64]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}},"
               "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":115,"
               "\"dur\":5,\"args\":{\"correlation\":7}},"
               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>"
               "(int)\",\"pid\":0,\"tid\":7,\"ts\":125,\"dur\":10,\"args\":{\"correlation\":7,\"device\":0,\"stream\":7,"
               "\"grid\":[1,1,1],\"block\":[128,1,1],\"registers per thread\":80,\"shared memory\":0}}]}");
    imported *im = calloc(1, sizeof *im);
    char err[512];
    const char *files[] = {path};
    import_options o = {.device = -1, .variant = "synthetic"};
    cr_assert_eq(kineto_import(files, 1, &o, &im->t, &im->r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(analysis_build(&im->a, &im->t, &im->r, err, sizeof err), 0, "%s", err);
    findings_derive(&im->a);
    const finding *fd = findings_find(&im->a.v[0], "fp32_cuda_core_16bit");
    cr_assert_not_null(fd, "an FP32 CUDA-core kernel on bf16 inputs");
    cr_assert_eq(findings_value(fd, "kernels_16bit"), 1);
    cr_assert(strstr(fd->text, "aten::bmm with bf16 inputs"), "%s", fd->text);
    cr_assert_null(findings_find(&im->a.v[0], "fp32_cuda_core_inputs"));
    imported_free(im);
    free(im);
    unlink(path);
}
