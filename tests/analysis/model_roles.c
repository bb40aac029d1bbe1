/* analysis/model_roles (and model_view, model_findings, io/model_inputs on the way): each model
 * rule against the numbers tests/model_trace_counts.py counted from the trace JSON alone
 * (tests/fixtures/models-roles-h200/counts.txt), on PyTorch 2.11 traces recorded on the H200 by
 * bench/model_role_traces.py: a compiled Llama, SDPA replayed from a CUDA graph, Mistral with
 * repeat_kv and a boolean sliding-window mask, a training step with a synchronize inside it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "exit_codes.h"
#include "findings.h"
#include "kineto_import.h"
#include "median.h"
#include "model_inputs.h"
#include "model_roles.h"

#define FIXTURES "tests/fixtures/models-roles-h200/"

/* counts.txt: "<trace> <key> <value>" */
static int count_text(const char *trace, const char *key, char *out, size_t n)
{
    FILE *f = fopen(FIXTURES "counts.txt", "r");
    cr_assert_not_null(f, "counts.txt (tests/model_trace_counts.py)");
    char line[512], t[128], k[64], v[256];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (sscanf(line, "%127s %63s %255s", t, k, v) == 3 && !strcmp(t, trace) && !strcmp(k, key)) {
            snprintf(out, n, "%s", v);
            found = 1;
        }
    fclose(f);
    return found;
}

static double count_of(const char *trace, const char *key)
{
    char v[256];
    cr_assert(count_text(trace, key, v, sizeof v), "%s %s in counts.txt", trace, key);
    return strtod(v, NULL);
}

typedef struct imported {
    trace t;
    run_info r;
    analysis a;
    model_view v;
    model_steps st;
} imported;

static imported *import_trace(const char *name)
{
    imported *im = calloc(1, sizeof *im);
    char path[256], err[512];
    snprintf(path, sizeof path, FIXTURES "%s.json.gz", name);
    const char *files[] = {path};
    import_options o = {.device = -1};
    cr_assert_eq(kineto_import(files, 1, &o, &im->t, &im->r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(analysis_build(&im->a, &im->t, &im->r, err, sizeof err), 0, "%s", err);
    findings_derive(&im->a);
    cr_assert_eq(model_view_build_steps(&im->a.v[0], &im->v, &im->st), 0, "%s has a model view", name);
    return im;
}

static void imported_free(imported *im)
{
    model_steps_free(&im->st);
    analysis_free(&im->a);
    trace_free(&im->t);
    free(im);
}

/* Median over steps of the ops and µs of the attention roles, every phase. */
static void attention_per_step(const imported *im, double *ops, double *us)
{
    int S = im->st.n_steps;
    double o[64], u[64];
    cr_assert(S <= 64);
    for (int s = 0; s < S; s++) {
        o[s] = u[s] = 0;
        for (int p = 0; p < MPHASE_COUNT; p++)
            for (int r = 0; r < MROLE_COUNT; r++)
                if (model_role_is_attention((model_role)r)) {
                    o[s] += im->st.ops[model_steps_cell(s, p, r)];
                    u[s] += im->st.us[model_steps_cell(s, p, r)];
                }
    }
    *ops = median_of(o, S), *us = median_of(u, S);
}

static const model_role_row *row_of(const model_view *v, model_role r)
{
    for (int k = 0; k < v->n_rows; k++)
        if (v->rows[k].role == r)
            return &v->rows[k];
    return NULL;
}

static const finding *finding_of(const imported *im, const char *id) { return findings_find(&im->a.v[0], id); }

static double number_of(const finding *f, const char *key)
{
    for (int i = 0; i < f->n_numbers; i++)
        if (!strcmp(f->numbers[i].key, key))
            return f->numbers[i].value;
    cr_assert_fail("finding %s has no number %s", f->id, key);
    return NAN;
}

static void near(double got, double want, double tol, const char *what)
{
    cr_assert(fabs(got - want) <= tol, "%s: attnprof %.6g, counted from the JSON %.6g", what, got, want);
}

/* Attention is what the attention ops launched, the step's pace follows its launch gaps. */
static void common_rules(const char *name, const imported *im)
{
    cr_assert_eq(im->st.n_steps, (int)count_of(name, "steps"));
    double ops, us;
    attention_per_step(im, &ops, &us);
    near(ops, count_of(name, "attn_ops"), 0, "attention ops per step");
    near(us, count_of(name, "attn_us"), 0.002, "attention µs per step");
    const finding *bound = finding_of(im, "cpu_bound_step"), *waits = finding_of(im, "host_waits");
    double gap = count_of(name, "launch_gap_share");
    cr_assert_eq(bound != NULL, gap >= 0.25, "host-bound from 25%% of the span in launch gaps: %.3f", gap);
    const finding *pace = bound ? bound : waits;
    if (pace) {
        near(number_of(pace, "launch_gap_share"), gap, 0.0006, "launch-gap share");
        near(number_of(pace, "gpu_idle_share"), count_of(name, "gpu_idle_share"), 0.0006, "GPU idle share");
        near(number_of(pace, "host_us"), count_of(name, "host_us"), 0.002, "host µs per step");
        near(number_of(pace, "host_wait_us"), count_of(name, "host_wait_us"), 0.002, "host waits per step");
    }
}

Test(model_roles, compiled_model_attention_is_the_backend_ops_not_inductors_fused_names, .timeout = 60)
{
    const char *name = "llama-compiled-gqa";
    imported *im = import_trace(name);
    common_rules(name, im);
    const model_role_row *prep = row_of(&im->v, MROLE_ATTN_INPUTS);
    cr_assert_not_null(prep, "the Triton kernels feeding SDPA have their own role");
    cr_assert_not(model_role_is_attention(MROLE_ATTN_INPUTS));
    cr_assert_str_eq(prep->implementation, "Triton (Inductor)");
    /* every Inductor kernel is Triton (Inductor): as many as the JSON's kernel_backend ranges launched */
    int inductor = 0;
    const forward *f = &im->a.v[0].forwards[analysis_median_forward(&im->a.v[0])];
    char kind[8];
    const char *ops;
    size_t len;
    for (int k = 0; k < f->n_ops; k++)
        inductor += model_inductor_kernel(f->ops[k], kind, &ops, &len);
    cr_assert_eq(inductor, (int)count_of(name, "inductor_ops"));
    cr_assert_null(findings_find(&im->a.v[0], "mask_rebuild"), "the fused kernels are no causal mask rebuilt");
    /* shapes from the backend op, the mask as recorded */
    model_attn_inputs m;
    cr_assert(model_inputs_of(&im->r.variants[0], &m), "a compiled trace's shapes are recorded");
    cr_assert_str_eq(m.op, "aten::_scaled_dot_product_cudnn_attention");
    cr_assert_eq(m.heads_q, (int)count_of(name, "heads_q"));
    cr_assert_eq(m.heads_kv, (int)count_of(name, "heads_kv"));
    char mask[64], want[64];
    snprintf(mask, sizeof mask, "%s", m.mask);
    char *sp = strchr(mask, ' ');
    cr_assert_not_null(sp);
    memmove(sp, sp + 1, strlen(sp));
    cr_assert(count_text(name, "mask", want, sizeof want));
    cr_assert(strstr(want, "[2,1,1024,1024]") && strstr(mask, "bf16[2,1,1024,1024]"), "%s against %s", mask, want);
    cr_assert_geq(im->v.n_layers, 3, "layers found on the normalised sequence");
    imported_free(im);
}

Test(model_roles, compiled_model_shape_conflict_is_refused)
{
    char err[512];
    const char *files[] = {FIXTURES "llama-compiled-gqa.json.gz"};
    attn_shape bad = {.batch = 2, .heads = 32, .seq = 1024, .dim = 64};
    import_options o = {.device = -1, .shape = &bad};
    trace t;
    static run_info r;
    cr_assert_eq(kineto_import(files, 1, &o, &t, &r, err, sizeof err), EXIT_SHAPE_CONFLICT, "%s", err);
    cr_assert(strstr(err, "aten::_scaled_dot_product_cudnn_attention"), "%s", err);
    attn_shape good = {.batch = 2, .heads = 16, .seq = 1024, .dim = 64};
    o.shape = &good;
    cr_assert_eq(kineto_import(files, 1, &o, &t, &r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(r.shape.batch, 0, "an agreeing --shape adds nothing: the recorded shape is said");
    trace_free(&t);
}

Test(model_roles, graph_replay_is_pytorchs_with_roles_by_kernel_name)
{
    const char *name = "sdpa-cudagraph-fp16";
    imported *im = import_trace(name);
    common_rules(name, im);
    cr_assert_eq(im->r.producer, PRODUCER_PYTORCH, "%s", im->r.producer_evidence);
    cr_assert(model_is_step_trace(&im->a.v[0]));
    cr_assert_eq(im->v.graph_ops, im->v.step_ops, "every op replayed");
    cr_assert_eq((int)count_of(name, "graph_launches"), 1);
    const model_role_row *attn = row_of(&im->v, MROLE_ATTN_FUSED), *gemm = row_of(&im->v, MROLE_GEMM);
    cr_assert(attn && gemm);
    cr_assert_str_eq(attn->implementation, "cuDNN");
    cr_assert_null(findings_find(&im->a.v[0], "host_bound"), "not the series' 'cost moved to the CPU'");
    imported_free(im);
}

Test(model_roles, repeat_kv_expansion_and_boolean_mask)
{
    const char *name = "mistral-gqa-window-fp16";
    imported *im = import_trace(name);
    common_rules(name, im);
    const model_role_row *conv = row_of(&im->v, MROLE_ATTN_CONVERT), *kv = row_of(&im->v, MROLE_KV_EXPAND);
    cr_assert(conv && kv);
    near(conv->ops, count_of(name, "mask_conv_ops"), 0, "SDPA's mask conversion ops");
    near(conv->us, count_of(name, "mask_conv_us"), 0.002, "SDPA's mask conversion µs");
    near(kv->ops, count_of(name, "gqa_copy_ops"), 0, "GQA expansion copies");
    const finding *g = finding_of(im, "gqa_expansion");
    cr_assert_not_null(g);
    near(number_of(g, "bytes_per_step"), count_of(name, "gqa_copy_bytes"), 0, "GQA expansion bytes");
    model_attn_inputs m;
    cr_assert(model_inputs_of(&im->r.variants[0], &m));
    cr_assert_eq(m.heads_kv_model, (int)count_of(name, "heads_kv_before_expand"));
    cr_assert_eq(m.heads_kv, (int)count_of(name, "heads_kv"));
    cr_assert_eq(m.causal, 0);
    cr_assert_str_eq(m.mask, "bool [2,1,1024,1024]");
    char want[64];
    cr_assert(count_text(name, "mask", want, sizeof want));
    cr_assert_str_eq(want, "bool[2,1,1024,1024]");
    cr_assert_null(findings_find(&im->a.v[0], "mask_rebuild"), "SDPA's conversion is no causal mask rebuilt");
    cr_assert_not_null(finding_of(im, "sdpa_input_conversion"));
    imported_free(im);
}

Test(model_roles, training_step_with_a_sync_is_gpu_bound)
{
    const char *name = "llama-train-sync-bf16";
    imported *im = import_trace(name);
    common_rules(name, im);
    cr_assert_null(finding_of(im, "cpu_bound_step"), "the GPU idles %.3f of its span", count_of(name, "gpu_idle_share"));
    const finding *w = finding_of(im, "host_waits");
    cr_assert_not_null(w, "the host's waits are named");
    cr_assert(strstr(w->text, "cudaDeviceSynchronize"), "%s", w->text);
    cr_assert(im->v.has_phase[MPHASE_BACKWARD] && im->v.has_phase[MPHASE_OPTIMIZER]);
    imported_free(im);
}

Test(model_roles, explicit_range_matching_nothing_lists_the_ranges)
{
    char err[1024];
    const char *files[] = {FIXTURES "sdpa-cudagraph-fp16.json.gz"};
    import_options o = {.device = -1, .range = "attn_fwd"};
    trace t;
    static run_info r;
    cr_assert_eq(kineto_import(files, 1, &o, &t, &r, err, sizeof err), EXIT_USAGE, "%s", err);
    cr_assert(strstr(err, "`attn_fwd`") && strstr(err, "ProfilerStep#2"), "%s", err);
}
