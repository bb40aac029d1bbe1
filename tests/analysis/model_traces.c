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
#include "compare.h"
#include "exit_codes.h"
#include "findings.h"
#include "kineto_import.h"
#include "kineto_read.h"
#include "model_inputs.h"
#include "model_roles.h"
#include "run_cli.h"
#include "imported_compare.h"

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
    jop steps[16];
    int n_steps;
    /* GPU ops with their launcher's ts and tid */
    struct jgpu {
        const char *name;
        double dur, launch_ts, ts;
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
        else if (!strcmp(cat, "user_annotation") && !strncmp(name, "ProfilerStep#", 13) && t->n_steps < 16)
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
                                           json_number_value(json_object_get(e, "ts")), ltid[id], step};
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
    double ops[16] = {0}, us[16] = {0}, total[16] = {0}, share[16];
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

static int cmp_gpu_ts(const void *a, const void *b)
{
    const struct jgpu *x = *(const struct jgpu *const *)a, *y = *(const struct jgpu *const *)b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Median over steps of the GPU's idle time in gaps that a launch closes (the next
 * operation's launch call began after the GPU went idle), over the step's GPU span. */
static double launch_gap_share(const jtrace *t)
{
    double share[16];
    const struct jgpu **ops = malloc(t->n_gpu * sizeof *ops);
    for (int s = 0; s < t->n_steps; s++) {
        size_t n = 0;
        for (size_t g = 0; g < t->n_gpu; g++)
            if (t->gpu[g].step == s)
                ops[n++] = &t->gpu[g];
        qsort(ops, n, sizeof *ops, cmp_gpu_ts);
        double hi = n ? ops[0]->ts + ops[0]->dur : 0, end = hi, gap = 0;
        for (size_t k = 1; k < n; k++) {
            if (ops[k]->ts > hi && ops[k]->launch_ts > hi)
                gap += ops[k]->ts - hi;
            if (ops[k]->ts + ops[k]->dur > hi)
                hi = ops[k]->ts + ops[k]->dur;
            if (hi > end)
                end = hi;
        }
        share[s] = n && end > ops[0]->ts ? gap / (end - ops[0]->ts) : 0;
    }
    free(ops);
    return median2(share, t->n_steps);
}

/* ---- attnprof's numbers -------------------------------------------------------- */

/* The findings of one side only (compare's pair `pr`, side 0 the baseline) are the step's
 * pace, which is measured: each side's host-bound finding follows its own launch gaps
 * (counted from its JSON, t), from the stated 25% on; others_allowed: other ids may differ. */
static void only_pace_findings_differ(const trace_pair *pr, int side, const jtrace *t, int others_allowed)
{
    for (int k = 0; k < pr->n_only[side]; k++) {
        const char *id = pr->only[side][k]->id;
        if (others_allowed && strcmp(id, "cpu_bound_step") && strcmp(id, "host_waits"))
            continue;
        cr_assert(!strcmp(id, "cpu_bound_step") || !strcmp(id, "host_waits"), "only on side %d: %s", side, id);
        double gap = launch_gap_share(t);
        cr_assert_eq(!strcmp(id, "cpu_bound_step"), gap >= 0.25, "%s with launch gaps %.3f of the span", id, gap);
    }
}

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

/* The steps of a trace recorded without ProfilerStep#N: its user_annotation ranges named
 * `range` (at most 8), each GPU op in the step whose range holds its launch. */
static void steps_from_ranges(jtrace *t, const char *range)
{
    json_t *ev = json_object_get(t->root, "traceEvents"), *e;
    size_t k;
    t->n_steps = 0;
    json_array_foreach(ev, k, e) {
        const char *cat = jstr(e, "cat"), *name = jstr(e, "name");
        if (cat && name && !strcmp(cat, "user_annotation") && !strcmp(name, range) && t->n_steps < 8)
            t->steps[t->n_steps++] = (jop){name, json_number_value(json_object_get(e, "ts")),
                                           json_number_value(json_object_get(e, "dur")), 0};
    }
    for (size_t g = 0; g < t->n_gpu; g++) {
        t->gpu[g].step = -1;
        for (int s = 0; s < t->n_steps; s++)
            if (t->gpu[g].launch_ts >= t->steps[s].ts && t->gpu[g].launch_ts <= t->steps[s].ts + t->steps[s].dur)
                t->gpu[g].step = s;
    }
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
static int is_sdpa_forward(const char *n) { return !strcmp(n, "aten::scaled_dot_product_attention"); }
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
    /* attention is what the attention op launched: the backend op's kernels and, under autocast, SDPA's casts */
    within_1pct(im->v.attn_share[MPHASE_FORWARD], count_under(&t, is_sdpa_forward).share, "forward attention share");
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
    steps_from_ranges(&t, "attn_fwd");
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
    steps_from_ranges(&t, "attn_fwd");
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
    cr_assert_eq(model_inputs_parse(text, &back), EXIT_OK, "%s", text);
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
    cr_assert_eq(model_inputs_parse("sdpa: B=0, Hq=1, Hkv=1, S_q=1, S_kv=1, D=1, bf16, causal, from x", &back), EXIT_BAD_ARCHIVE,
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

/* ---- compare of two model imports (compare_traces.c), the steps as the samples ----------- */

/* Per step: the summed durations of the GPU ops launched under a CPU op for which pred holds. */
static int per_step(const jtrace *t, name_pred pred, double *out)
{
    for (int s = 0; s < t->n_steps; s++)
        out[s] = 0;
    for (size_t g = 0; g < t->n_gpu; g++)
        if (t->gpu[g].step >= 0 && launched_under(t, &t->gpu[g], pred))
            out[t->gpu[g].step] += t->gpu[g].dur;
    return t->n_steps;
}

static double min_of(const double *v, int n)
{
    double x = INFINITY;
    for (int i = 0; i < n; i++)
        x = v[i] < x ? v[i] : x;
    return x;
}

static double max_of(const double *v, int n)
{
    double x = -INFINITY;
    for (int i = 0; i < n; i++)
        x = v[i] > x ? v[i] : x;
    return x;
}

static const trace_role_row *pair_row(const trace_pair *pr, model_phase p, model_role r, int attention_total)
{
    for (int k = 0; k < pr->n_rows; k++)
        if (pr->rows[k].phase == p && pr->rows[k].attention_total == attention_total &&
            (attention_total || pr->rows[k].role == r))
            return &pr->rows[k];
    return NULL;
}

Test(model_compare, eager_against_sdpa_role_by_role, .timeout = 120)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer-s8a.json.gz", MODELS "llama-gqa-sdpa-infer-s8a.json.gz", "");
    cr_assert_eq(c->m.traces.n_pairs, 1, "the one model trace of each run");
    cr_assert_eq(c->m.traces.n_unpaired, 0);
    const trace_pair *pr = &c->m.traces.pairs[0];
    cr_assert_eq(pr->by_name, 0, "their names differ");
    jtrace e, s;
    jtrace_load(&e, MODELS "llama-gqa-eager-infer-s8a.json.gz");
    jtrace_load(&s, MODELS "llama-gqa-sdpa-infer-s8a.json.gz");
    cr_assert(e.n_steps >= COMPARE_MIN_STEPS && s.n_steps >= COMPARE_MIN_STEPS);
    cr_assert_eq(pr->step[0].n, e.n_steps);
    cr_assert_eq(pr->step[1].n, s.n_steps);
    cr_assert(pr->verdicts);
    /* µs per step of each side's roles, against the count from the trace JSON */
    within_1pct(pr->step[0].median, count_under(&e, always).us, "eager step");
    within_1pct(pr->step[1].median, count_under(&s, always).us, "sdpa step");
    const trace_role_row *soft = pair_row(pr, MPHASE_FORWARD, MROLE_ATTN_SOFTMAX, 0);
    const trace_role_row *fused = pair_row(pr, MPHASE_FORWARD, MROLE_ATTN_FUSED, 0);
    const trace_role_row *attn = pair_row(pr, MPHASE_FORWARD, 0, 1);
    cr_assert(soft && fused && attn);
    within_1pct(soft->st[0].median, count_under(&e, is_softmax).us, "eager softmax");
    cr_assert_eq(soft->ops[0], count_under(&e, is_softmax).ops);
    cr_assert(!soft->present[1] && !fused->present[0], "eager's parts beside SDPA's one op, no ratio across");
    cr_assert_eq(fused->ratio.verdict, VERDICT_NONE);
    within_1pct(fused->st[1].median, count_under(&s, is_cudnn_fwd).us, "sdpa attention");
    cr_assert_eq(fused->ops[1], count_under(&s, is_cudnn_fwd).ops);
    cr_assert_str_eq(fused->impl[1], "cuDNN");
    cr_assert_str_eq(soft->impl[0], "eager");
    within_1pct(attn->st[1].median, count_under(&s, is_cudnn_fwd).us, "sdpa attention, all parts");
    within_1pct(attn->share[1], count_under(&s, is_cudnn_fwd).share, "sdpa attention's share");
    within_1pct(pr->attn_share[1], count_under(&s, is_cudnn_fwd).share, "sdpa attention's share of the step");
    within_1pct(soft->share[0], count_under(&e, is_softmax).share, "eager softmax's share");
    /* The verdict from the data alone: eager's attention holds at least its softmax; when every
     * step of SDPA's attention is below every step of eager's softmax by more than the floor, every
     * resampled ratio is, and so the whole interval: faster. */
    double sa[16], es[16];
    int ns = per_step(&s, is_cudnn_fwd, sa), ne = per_step(&e, is_softmax, es);
    cr_assert(max_of(sa, ns) * (1 + COMPARE_DEFAULT_MIN_EFFECT) < min_of(es, ne), "the data separate them");
    cr_assert_eq(attn->ratio.verdict, VERDICT_FASTER, "ratio %.3f [%.3f, %.3f]", attn->ratio.ci.ratio,
                 attn->ratio.ci.lo, attn->ratio.ci.hi);
    cr_assert(attn->ratio.ci.hi <= max_of(sa, ns) / min_of(es, ne), "attention below SDPA's ÷ eager's softmax alone");
    cr_assert(attn->st[0].median > count_under(&e, is_softmax).us, "eager's attention is more than its softmax");
    /* the step: every SDPA step below every eager step by more than the floor */
    double ea[16], sst[16];
    per_step(&e, always, ea), per_step(&s, always, sst);
    cr_assert(max_of(sst, ns) * (1 + COMPARE_DEFAULT_MIN_EFFECT) < min_of(ea, ne));
    cr_assert_eq(pr->step_ratio.verdict, VERDICT_FASTER);
    cr_assert(pr->step_ratio.ci.lo >= min_of(sst, ns) / max_of(ea, ne) && pr->step_ratio.ci.hi <= max_of(sst, ns) / min_of(ea, ne));
    within_1pct(pr->step_ratio.ci.ratio, count_under(&s, always).us / count_under(&e, always).us, "step ratio");
    /* layers: 4 each, of different periods (eager's block launches more ops): not paired */
    cr_assert_eq(pr->n_layers[0], layers_in_notes("llama-gqa-eager-infer-s8a"));
    cr_assert_eq(pr->n_layers[1], layers_in_notes("llama-gqa-sdpa-infer-s8a"));
    cr_assert_neq(pr->layer_period[0], pr->layer_period[1]);
    cr_assert_eq(pr->layers_paired, 0);
    /* eager's score matrix is a finding of its side only */
    int eager_scores = 0;
    for (int k = 0; k < pr->n_only[0]; k++)
        eager_scores |= !strcmp(pr->only[0][k]->id, "eager_scores");
    cr_assert(eager_scores);
    only_pace_findings_differ(pr, 0, &e, 1);
    only_pace_findings_differ(pr, 1, &s, 0);
    /* the documents: the pairing sentence, the verdict, the CSV rows */
    char out[256], args[512];
    static char text[1 << 20];
    snprintf(out, sizeof out, "%s/cmp", c->dir);
    snprintf(args, sizeof args, "compare %s/a %s/b -o %s -q", c->dir, c->dir, out);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "%s/compare.md", out);
    read_into(args, text, sizeof text);
    cr_assert(strstr(text, "Each run holds one model trace, so the two are set against each other"), "pairing");
    cr_assert(strstr(text, "| forward | **attention, all parts** | 24 |"), "eager's 24 attention ops per step");
    cr_assert(strstr(text, "Layers not paired"));
    snprintf(args, sizeof args, "%s/compare.csv", out);
    read_into(args, text, sizeof text);
    cr_assert(strstr(text, "ops_per_forward,ops_vs_baseline,kind,phase,part,implementation\n"));
    char want[160];
    snprintf(want, sizeof want, ",faster,,,,,,,,8,-16,attention,forward,attention,cuDNN\n");
    cr_assert(strstr(text, want), "the attention row of the SDPA side: %s", want);
    jtrace_free(&e), jtrace_free(&s);
    compared_free(c);
    free(c);
}

/* Two recordings of one model (bench/model_traces.py run twice, 30 s apart): what the data
 * support. Every bootstrap ratio of the steps lies in [min(b)/max(a), max(b)/min(a)]; where
 * that range is inside the 2% floor, the verdict can only be same. */
static void same_model_twice(const char *a, const char *b, const char *name)
{
    compared *c = calloc(1, sizeof *c);
    char fa[256], fb[256], extra[128];
    snprintf(fa, sizeof fa, MODELS "%s.json.gz", a);
    snprintf(fb, sizeof fb, MODELS "%s.json.gz", b);
    snprintf(extra, sizeof extra, "--variant %s", name);
    compare_imports(c, fa, fb, extra);
    cr_assert_eq(c->m.traces.n_pairs, 1);
    const trace_pair *pr = &c->m.traces.pairs[0];
    cr_assert_eq(pr->by_name, 1, "both named %s", name);
    jtrace ta, tb;
    jtrace_load(&ta, fa);
    jtrace_load(&tb, fb);
    double sa[16], sb[16];
    int na = per_step(&ta, always, sa), nb = per_step(&tb, always, sb);
    double lo = min_of(sb, nb) / max_of(sa, na), hi = max_of(sb, nb) / min_of(sa, na);
    cr_assert(lo >= 1 / (1 + COMPARE_DEFAULT_MIN_EFFECT) && hi <= 1 + COMPARE_DEFAULT_MIN_EFFECT,
              "the recordings' steps lie within the floor of each other: [%.4f, %.4f]", lo, hi);
    cr_assert_eq(pr->step_ratio.verdict, VERDICT_SAME, "%.4f [%.4f, %.4f]", pr->step_ratio.ci.ratio,
                 pr->step_ratio.ci.lo, pr->step_ratio.ci.hi);
    cr_assert(pr->step_ratio.ci.lo >= lo - 1e-12 && pr->step_ratio.ci.hi <= hi + 1e-12);
    /* no role and no layer comes out faster or slower between two recordings of one model */
    for (int k = 0; k < pr->n_rows; k++) {
        const trace_role_row *r = &pr->rows[k];
        cr_assert(r->present[0] && r->present[1], "%s in both", model_role_name(r->role));
        cr_assert(r->ratio.verdict == VERDICT_SAME || r->ratio.verdict == VERDICT_AMBIGUOUS, "%s: %s %.3f [%.3f, %.3f]",
                  model_role_name(r->role), compare_verdict_word(r->ratio.verdict), r->ratio.ci.ratio, r->ratio.ci.lo,
                  r->ratio.ci.hi);
    }
    cr_assert(pr->layers_paired, "the same layers: %d×%d and %d×%d", pr->n_layers[0], pr->layer_period[0],
              pr->n_layers[1], pr->layer_period[1]);
    cr_assert_eq(pr->n_layers[0], layers_in_notes(a));
    cr_assert_eq(pr->layer_steps[0], na, "every step launches the same ops");
    cr_assert(pr->layer_verdicts);
    for (int l = 0; l < pr->n_layers[0]; l++)
        cr_assert(pr->layers[l].ratio.verdict == VERDICT_SAME || pr->layers[l].ratio.verdict == VERDICT_AMBIGUOUS,
                  "layer %d", l);
    /* the same findings, but for the step's pace: host-bound is measured, and a recording whose host
     * ran slower can cross the threshold; each side's pace finding follows its own launch gaps */
    only_pace_findings_differ(pr, 0, &ta, 0);
    only_pace_findings_differ(pr, 1, &tb, 0);
    jtrace_free(&ta), jtrace_free(&tb);
    compared_free(c);
    free(c);
}

Test(model_compare, two_recordings_of_eager_are_the_same, .timeout = 120)
{
    same_model_twice("llama-gqa-eager-infer-s8a", "llama-gqa-eager-infer-s8b", "llama-eager");
}

Test(model_compare, two_recordings_of_sdpa_are_the_same, .timeout = 120)
{
    same_model_twice("llama-gqa-sdpa-infer-s8a", "llama-gqa-sdpa-infer-s8b", "llama-sdpa");
}

Test(model_compare, two_recordings_of_a_vision_model_are_the_same, .timeout = 120)
{
    same_model_twice("vit-b16-bf16-s8a", "vit-b16-bf16-s8b", "vit");
}

/* A training step: forward, backward and optimizer compared phase by phase; each phase's
 * attention and the optimizer against the JSON's own per-step sums. */
Test(model_compare, two_recordings_of_a_training_step_phase_by_phase, .timeout = 180)
{
    same_model_twice("llama-gqa-sdpa-train-s8a", "llama-gqa-sdpa-train-s8b", "train");
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-sdpa-train-s8a.json.gz", MODELS "llama-gqa-sdpa-train-s8b.json.gz",
                    "--variant train");
    const trace_pair *pr = &c->m.traces.pairs[0];
    const struct { model_phase phase; model_role role; name_pred pred; } want[] = {
        {MPHASE_FORWARD, MROLE_ATTN_FUSED, is_cudnn_fwd},
        {MPHASE_BACKWARD, MROLE_ATTN_BACKWARD, is_cudnn_bwd},
        {MPHASE_OPTIMIZER, MROLE_OPTIMIZER, is_optimizer},
    };
    jtrace t[2];
    jtrace_load(&t[0], MODELS "llama-gqa-sdpa-train-s8a.json.gz");
    jtrace_load(&t[1], MODELS "llama-gqa-sdpa-train-s8b.json.gz");
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        const trace_role_row *row = pair_row(pr, want[w].phase, want[w].role, 0);
        cr_assert_not_null(row, "%s/%s compared", model_phase_name(want[w].phase), model_role_name(want[w].role));
        for (int j = 0; j < 2; j++) {
            double us[16];
            int n = per_step(&t[j], want[w].pred, us);
            double expect = median2(us, n);
            cr_assert(fabs(row->st[j].median - expect) <= 0.01 * expect, "%s side %d: %.2f µs, the JSON says %.2f",
                      model_role_name(want[w].role), j, row->st[j].median, expect);
        }
    }
    jtrace_free(&t[0]), jtrace_free(&t[1]);
    compared_free(c);
}

/* The attention µs of layer l in each step, counted from the JSON: the step's SDPA ops in launch
 * order, k per layer (k = the step's count ÷ layers); their median over steps. */
static double layer_attention(const jtrace *t, int l, int layers)
{
    double per[16];
    for (int s = 0; s < t->n_steps; s++) {
        double ts[64], dur[64];
        int n = 0;
        for (size_t g = 0; g < t->n_gpu; g++)
            if (t->gpu[g].step == s && launched_under(t, &t->gpu[g], is_cudnn_fwd) && n < 64)
                ts[n] = t->gpu[g].launch_ts, dur[n++] = t->gpu[g].dur;
        for (int a = 0; a < n; a++) /* launch order */
            for (int b = a + 1; b < n; b++)
                if (ts[b] < ts[a]) {
                    double x = ts[a], y = dur[a];
                    ts[a] = ts[b], dur[a] = dur[b], ts[b] = x, dur[b] = y;
                }
        int k = n / layers;
        per[s] = 0;
        for (int i = l * k; i < (l + 1) * k; i++)
            per[s] += dur[i];
    }
    return median2(per, t->n_steps);
}

Test(model_compare, layer_by_layer_from_every_step, .timeout = 120)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-sdpa-infer-s8a.json.gz", MODELS "llama-gqa-sdpa-infer-s8b.json.gz",
                    "--variant llama");
    const trace_pair *pr = &c->m.traces.pairs[0];
    cr_assert(pr->layers_paired);
    jtrace t[2];
    jtrace_load(&t[0], MODELS "llama-gqa-sdpa-infer-s8a.json.gz");
    jtrace_load(&t[1], MODELS "llama-gqa-sdpa-infer-s8b.json.gz");
    for (int j = 0; j < 2; j++) {
        cr_assert_eq(pr->layers[0].st[j].n, t[j].n_steps, "every step has layer times");
        double sum = 0;
        for (int l = 0; l < pr->n_layers[j]; l++) {
            sum += pr->layers[l].st[j].median;
            within_1pct(pr->layers[l].attn_us[j], layer_attention(&t[j], l, pr->n_layers[j]), "a layer's attention");
        }
        cr_assert(sum > 0.5 * pr->step[j].median && sum < pr->step[j].median, "layers %.1f of a %.1f µs step", sum,
                  pr->step[j].median);
    }
    jtrace_free(&t[0]), jtrace_free(&t[1]);
    compared_free(c);
    free(c);
}

Test(model_compare, two_steps_give_no_verdict, .timeout = 120)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer.json.gz", MODELS "llama-gqa-sdpa-infer.json.gz", "");
    const trace_pair *pr = &c->m.traces.pairs[0];
    cr_assert_eq(pr->step[0].n, 2);
    cr_assert_eq(pr->verdicts, 0);
    cr_assert_eq(pr->step_ratio.verdict, VERDICT_NONE, "no verdict on 2 steps");
    jtrace e, s;
    jtrace_load(&e, MODELS "llama-gqa-eager-infer.json.gz");
    jtrace_load(&s, MODELS "llama-gqa-sdpa-infer.json.gz");
    within_1pct(pr->step_ratio.ci.ratio, count_under(&s, always).us / count_under(&e, always).us,
                "the ratio of the medians");
    cr_assert(!isfinite(pr->step_ratio.ci.lo), "no interval either");
    for (int k = 0; k < pr->n_rows; k++)
        cr_assert_eq(pr->rows[k].ratio.verdict, VERDICT_NONE);
    char out[256], args[512];
    static char text[1 << 20];
    snprintf(out, sizeof out, "%s/cmp", c->dir);
    snprintf(args, sizeof args, "compare %s/a %s/b -o %s -q", c->dir, c->dir, out);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "%s/compare.md", out);
    read_into(args, text, sizeof text);
    char *sec = strstr(text, "## Model traces"), *end = sec ? strstr(sec, "\n## ") : NULL;
    cr_assert(sec && end);
    *end = '\0';
    cr_assert(strstr(sec, "2 and 2 steps (ProfilerStep#N): no interval and no verdict below 5 steps"), "%s", sec);
    cr_assert(!strstr(sec, "faster") && !strstr(sec, "slower") && !strstr(sec, "same |"), "no verdict word");
    jtrace_free(&e), jtrace_free(&s);
    compared_free(c);
    free(c);
}

Test(model_compare, several_traces_pair_by_name_and_the_rest_is_listed, .timeout = 180)
{
    compared *c = calloc(1, sizeof *c);
    /* the same two names on both sides: two pairs by name */
    compare_imports(c, MODELS "llama-gqa-eager-infer-s8a.json.gz " MODELS "llama-gqa-sdpa-infer-s8a.json.gz",
                    MODELS "llama-gqa-eager-infer-s8b.json.gz " MODELS "llama-gqa-sdpa-infer-s8b.json.gz",
                    "--variant eager,sdpa");
    cr_assert_eq(c->m.traces.n_pairs, 2);
    cr_assert(c->m.traces.pairs[0].by_name && c->m.traces.pairs[1].by_name);
    cr_assert_str_eq(c->m.traces.pairs[0].va[1]->result->name, "eager");
    cr_assert_eq(c->m.traces.n_unpaired, 0);
    compared_free(c);
    /* names from the files: no name in common and two traces a side: nothing pairs, all four listed */
    memset(c, 0, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer-s8a.json.gz " MODELS "llama-gqa-sdpa-infer-s8a.json.gz",
                    MODELS "llama-gqa-eager-infer-s8b.json.gz " MODELS "llama-gqa-sdpa-infer-s8b.json.gz", "");
    cr_assert_eq(c->m.traces.n_pairs, 0);
    cr_assert_eq(c->m.traces.n_unpaired, 4);
    char out[256], args[512];
    static char text[1 << 20];
    snprintf(out, sizeof out, "%s/cmp", c->dir);
    snprintf(args, sizeof args, "compare %s/a %s/b -o %s -q", c->dir, c->dir, out);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "%s/compare.md", out);
    read_into(args, text, sizeof text);
    cr_assert(strstr(text, "No model trace is paired."));
    cr_assert(strstr(text, "- `llama-gqa-sdpa-infer-s8b` of **b**: no model trace of its name in a, which holds 2."),
              "each unpaired trace listed");
    /* --pair names one pair across the names; the rest stays listed */
    snprintf(args, sizeof args, "compare %s/a %s/b -o %s --force -q --pair llama-gqa-sdpa-infer-s8a=llama-gqa-sdpa-infer-s8b",
             c->dir, c->dir, out);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "%s/compare.md", out);
    read_into(args, text, sizeof text);
    cr_assert(strstr(text, "Paired by `--pair`: `llama-gqa-sdpa-infer-s8b` of **b** against `llama-gqa-sdpa-infer-s8a` of **a**"));
    cr_assert(strstr(text, "- `llama-gqa-eager-infer-s8b` of **b**: no model trace of its name in a"));
    cr_assert(!strstr(text, "- `llama-gqa-sdpa-infer-s8b` of **b**"), "paired, so not listed");
    /* a name that is no model trace of the baseline: one line, exit 2, nothing written */
    snprintf(args, sizeof args, "compare %s/a %s/b -o %s/none -q --pair llama-gqa-sdpa-infer-s8b=llama-gqa-sdpa-infer-s8a",
             c->dir, c->dir, c->dir);
    cr_assert_eq(attnprof(args), EXIT_USAGE, "%s", err_text);
    cr_assert(strstr(err_text, "llama-gqa-sdpa-infer-s8b is no model trace of a") &&
              strchr(err_text, '\n') == strrchr(err_text, '\n'), "%s", err_text);
    snprintf(args, sizeof args, "%s/none", c->dir);
    cr_assert(!path_exists(args));
    compared_free(c);
    free(c);
}

Test(model_compare, model_import_against_an_attnprof_run_is_refused)
{
    char dir[] = "/tmp/attnprof-mcmp-XXXXXX", args[1024], path[1100];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "import " MODELS "llama-gqa-sdpa-infer.json.gz -o %s/model -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    for (int order = 0; order < 2; order++) {
        snprintf(args, sizeof args, order ? "compare %s/model tests/fixtures/h200-6var -o %s/cmp -q"
                                          : "compare tests/fixtures/h200-6var %s/model -o %s/cmp -q", dir, dir);
        cr_assert_eq(attnprof(args), EXIT_USAGE, "%s", err_text);
        cr_assert(strstr(err_text, "model holds model traces") && strstr(err_text, "h200-6var none") &&
                  !strstr(err_text, "--shape") && strchr(err_text, '\n') == strrchr(err_text, '\n'),
                  "one true line, no --shape advice: %s", err_text);
        snprintf(path, sizeof path, "%s/cmp", dir);
        cr_assert(!path_exists(path), "nothing written");
    }
    snprintf(args, sizeof args, "rm -rf %s", dir);
    cr_assert_eq(system(args), 0);
}

Test(model_compare, math_backend_against_cudnn_is_slower_and_gates, .timeout = 120)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-sdpa-infer-s8a.json.gz", MODELS "llama-gqa-sdpa-math-infer-s8a.json.gz", "");
    const trace_pair *pr = &c->m.traces.pairs[0];
    const trace_role_row *fused = pair_row(pr, MPHASE_FORWARD, MROLE_ATTN_FUSED, 0);
    cr_assert(fused && fused->present[0] && fused->present[1]);
    cr_assert_str_eq(fused->impl[0], "cuDNN");
    cr_assert_str_eq(fused->impl[1], "math");
    jtrace s, m;
    jtrace_load(&s, MODELS "llama-gqa-sdpa-infer-s8a.json.gz");
    jtrace_load(&m, MODELS "llama-gqa-sdpa-math-infer-s8a.json.gz");
    within_1pct(fused->st[1].median, count_under(&m, is_math).us, "math attention");
    cr_assert_eq(fused->ops[1], count_under(&m, is_math).ops);
    double ms[16], cs[16];
    int nm = per_step(&m, is_math, ms), ncs = per_step(&s, is_cudnn_fwd, cs);
    cr_assert(min_of(ms, nm) > max_of(cs, ncs) * (1 + COMPARE_DEFAULT_MIN_EFFECT), "the data separate them");
    cr_assert_eq(fused->ratio.verdict, VERDICT_SLOWER);
    int math = 0;
    for (int k = 0; k < pr->n_only[1]; k++)
        math |= !strcmp(pr->only[1][k]->id, "math_fallback");
    cr_assert(math, "math_fallback only in the math run");
    char args[512];
    snprintf(args, sizeof args, "compare %s/a %s/b -o %s/cmp -q --fail-on slower", c->dir, c->dir, c->dir);
    cr_assert_eq(attnprof(args), EXIT_VERDICT_GATE, "%s", err_text);
    cr_assert(strstr(err_text, "model trace llama-gqa-sdpa-math-infer-s8a's step slower"), "%s", err_text);
    jtrace_free(&s), jtrace_free(&m);
    compared_free(c);
    free(c);
}
