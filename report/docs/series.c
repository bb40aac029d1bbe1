/* The series' published A100 figures beside this run's, and the abstract. The
 * series' numbers are citations, labelled SERIES_LABEL wherever they appear; the
 * series does not state its shape, so the report compares counts and ratios and
 * says that absolute times may be for another shape. Everything said about this
 * run is derived from its records. */
#include "series.h"

#include "citation.h"
#include "escape.h"
#include "hash_index.h"
#include "findings.h"
#include "model_inputs.h"
#include "model_roles.h"
#include "occupancy.h"

#include <math.h>
#include <string.h>

/* "Profiling in PyTorch (Part 3)": kernels per forward 6/5/20/1/1/1; `*_fwd` CUDA
 * time avg naive in-place 1.955 ms vs SDPA math 7.239 ms (self CUDA total 7.194 vs
 * 27.279 ms); CUDA/CPU per forward efficient 277.9/117 µs, flash 146.8/138 µs,
 * cuDNN 186.3/214 µs; Kineto's estimated occupancy flash ≈ 13%, cuDNN 0%. */
static const series_fact facts[] = {
    {"naive", 6, NAN, NAN, NAN, NAN, -1, 0, NULL, NULL},
    {"naive_inplace", 5, 1.955, 7.194, NAN, NAN, -1, 0, NULL, NULL},
    {"math", 20, 7.239, 27.279, NAN, NAN, -1, 0, NULL, NULL},
    {"efficient", 1, NAN, NAN, 277.9, 117, -1, 0, "fmha_cutlassF_bf16_aligned_64x64_rf_sm80", NULL},
    {"flash", 1, NAN, NAN, 146.8, 138, 13, 1, "pytorch_flash::flash_fwd_kernel", NULL},
    {"cudnn", 1, NAN, NAN, 186.3, 214, 0, 0,
     "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_6_128x64x64_4x1x1_cga1x1x1_kernel0_0",
     "240 registers × 256 threads"},
};

/* A variant's name as the series names it: attnprof's names as they are, an import of the
 * bench's PyTorch harness without its kineto_ and sdpa_ prefixes (analysis_plain_name). */
static const char *series_name(const char *variant) { return analysis_plain_name(variant); }

const variant_analysis *series_counterpart(const analysis *ref, const char *name)
{
    return analysis_counterpart(ref, name);
}

const series_fact *series_fact_of(const char *variant)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
            if (!strcmp(facts[i].variant, pass ? series_name(variant) : variant))
                return &facts[i];
    return NULL;
}

void series_cell(const char *variant, char *out, size_t n)
{
    const series_fact *s = series_fact_of(variant);
    if (!s) {
        snprintf(out, n, "–");
        return;
    }
    int len = snprintf(out, n, "%d kernel%s", s->kernels, s->kernels == 1 ? "" : "s");
    if (isfinite(s->fwd_cuda_ms))
        len += snprintf(out + len, n - (size_t)len, "; `*_fwd` CUDA %.0f µs (avg)", s->fwd_cuda_ms * 1000);
    if (isfinite(s->cuda_us))
        len += snprintf(out + len, n - (size_t)len, "; CUDA %.1f µs, CPU %.0f µs", s->cuda_us, s->cpu_us);
    if (s->kineto_occ_pct >= 0)
        snprintf(out + len, n - (size_t)len, "; Kineto %s%d%%", s->kineto_occ_approx ? "≈ " : "", s->kineto_occ_pct);
}

/* The series' CUDA time of a variant: its per-forward time, else its `*_fwd` average. */
static double series_time(const char *variant)
{
    const series_fact *s = series_fact_of(variant);
    return !s ? NAN : isfinite(s->cuda_us) ? s->cuda_us : isfinite(s->fwd_cuda_ms) ? s->fwd_cuda_ms * 1000 : NAN;
}

const series_ratio *series_ratios(int *n)
{
    static series_ratio rs[] = {
        {"math", "naive_inplace", "math vs naive in-place", NAN,
         "`*_fwd` CUDA time avg 7.239 vs 1.955 ms, which it writes as 3.7×; self CUDA total 27.279 vs 7.194 ms"},
        {"flash", "efficient", "flash vs efficient", NAN, NULL},
        {"cudnn", "flash", "cuDNN vs flash", NAN, NULL},
    };
    for (size_t k = 0; k < sizeof rs / sizeof *rs; k++)
        rs[k].series = series_time(rs[k].x) / series_time(rs[k].y);
    *n = (int)(sizeof rs / sizeof *rs);
    return rs;
}

static double ratio(const analysis *a, const char *x, const char *y);

double series_ratio_here(const analysis *a, const series_ratio *r) { return ratio(a, r->x, r->y); }

static const forward *rep(const variant_analysis *va)
{
    int m = analysis_median_forward(va);
    return m < 0 ? NULL : &va->forwards[m];
}

/* The variant the series calls `name` (series_fact_of's mapping), with forwards. */
static const variant_analysis *ok_variant(const analysis *a, const char *name)
{
    const variant_analysis *v = analysis_find(a, name);
    for (int i = 0; !v && i < a->n; i++)
        if (!strcmp(series_name(a->v[i].result->name), name))
            v = &a->v[i];
    return v && v->n_forwards && v->cuda_us.n && v->cuda_us.median > 0 ? v : NULL;
}

int series_applies(const analysis *a)
{
    for (int i = 0; i < a->n; i++)
        if (series_fact_of(a->v[i].result->name))
            return 1;
    return 0;
}

/* Where the kernels came from, per variant, and what the CPU times hold: chosen by
 * what produced the records (run.json provenance), never assumed. */
static void implementations_paragraph(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    char list[1600] = "";
    size_t len = 0;
    int all_pytorch = 1, n_listed = 0;
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        char buf[64], nm[100];
        const char *o = findings_variant_origin(a, va, buf, sizeof buf);
        if (!o[0])
            continue;
        esc_md_code_buf(nm, sizeof nm, va->result->name);
        char words[160] = "";
        size_t wl = 0;
        for (const char *p = o; *p;) { /* "ours" is attnprof's kernels/ */
            size_t l = strcspn(p, ",");
            int ours = l == 4 && !strncmp(p, "ours", 4);
            all_pytorch &= !ours && !(l == 12 && !strncmp(p, "unattributed", 12));
            wl += (size_t)snprintf(words + wl, wl < sizeof words ? sizeof words - wl : 0, "%s%.*s", wl ? ", " : "",
                                   ours ? 26 : (int)l, ours ? "attnprof's own (kernels/)" : p);
            p += l;
            while (*p == ',' || *p == ' ')
                p++;
        }
        len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%s: %s", len ? "; " : "", nm,
                                words);
        n_listed++;
    }
    esc_utf8_trim(list);
    if (r->producer == PRODUCER_ATTNPROF) {
        if (n_listed)
            fprintf(f, "Where this run's kernels come from, read off their names: %s. attnprof's own kernels are its "
                       "implementations, not PyTorch's. ", list);
        fputs("CPU times are attnprof's C calls into CUDA, cuBLAS and cuDNN: they hold no PyTorch dispatcher, which "
              "the series' CPU times include.\n\n", f);
    } else if (r->producer == PRODUCER_PYTORCH) {
        fputs("These records are PyTorch's own, as the series' are: imported profiler traces (", f);
        esc_md_text(f, r->producer_evidence);
        fputc(')', f);
        if (n_listed)
            fprintf(f, "; their kernels, read off their names: %s%s", list,
                    all_pytorch ? "" : " (a kernel named neither by PyTorch nor by a library is unattributed)");
        fputs(". CPU times are the durations of the traces' ranges: they include PyTorch's dispatcher and the "
              "profiler's own cost, as the series' CPU times do.\n\n", f);
    } else if (r->producer == PRODUCER_INJECTION) {
        fputs("These records were taken by CUPTI injected into the program (attnprof record), with no code of its "
              "own changed", f);
        if (n_listed)
            fprintf(f, "; their kernels, read off their names: %s", list);
        fputs(". CPU times are the durations of the steps' ranges on the host, CUPTI's own cost included.\n\n", f);
    } else {
        fputs("These records come from a Kineto producer other than PyTorch", f);
        if (n_listed)
            fprintf(f, "; their kernels, read off their names: %s", list);
        fputs(". What the CPU times include is the producer's; the traces do not say.\n\n", f);
    }
}

/* Median CUDA time of x over y, or NAN. */
static double ratio(const analysis *a, const char *x, const char *y)
{
    const variant_analysis *vx = ok_variant(a, x), *vy = ok_variant(a, y);
    return vx && vy ? vx->cuda_us.median / vy->cuda_us.median : NAN;
}

/* The kernel of a variant's median forward that Kineto's default shared-memory
 * limit zeroes, if any (findings_kineto_zero): 1 with it and its launch API. */
static int kineto_zero_kernel(const analysis *a, const variant_analysis *va, const gpu_op **op, const api_call **via)
{
    int own;
    return findings_kineto_zero(a, va, op, via, &own);
}

static void code_name(const char *name, char *out, size_t n)
{
    char s[FINDING_NAME_MAX + 8];
    findings_short_name(name, s, sizeof s);
    esc_md_code_buf(out, n, s);
}

/* The table of the series' variants: this run's counts and times beside the series'. */
static void series_table(FILE *f, const analysis *a)
{
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        const series_fact *s = series_fact_of(va->result->name);
        fputs("| ", f);
        esc_md_code(f, va->result->name, 1);
        char cuda[48] = "–", cpu[48] = "–", scuda[64] = "–", scpu[32] = "–", sk[16] = "–";
        if (va->n_forwards) {
            snprintf(cuda, sizeof cuda, va->cuda_us.median >= 100 ? "%.0f µs" : "%.1f µs", va->cuda_us.median);
            snprintf(cpu, sizeof cpu, va->cpu_us.median >= 100 ? "%.0f µs" : "%.1f µs", va->cpu_us.median);
        }
        if (s) {
            snprintf(sk, sizeof sk, "%d", s->kernels);
            if (isfinite(s->cuda_us))
                snprintf(scuda, sizeof scuda, "%.1f µs", s->cuda_us);
            else if (isfinite(s->fwd_cuda_ms))
                snprintf(scuda, sizeof scuda, "%.0f µs (`*_fwd` avg)", s->fwd_cuda_ms * 1000);
            if (isfinite(s->cpu_us))
                snprintf(scpu, sizeof scpu, "%.0f µs", s->cpu_us);
        }
        if (va->n_forwards)
            fprintf(f, " | %d | %s | %s | %s | %s | %s |\n", va->ops_per_forward - va->memset_per_forward, sk, cuda,
                    scuda, cpu, scpu);
        else
            fprintf(f, " | – | %s | – | %s | – | %s |\n", sk, scuda, scpu);
    }
    fputc('\n', f);
}

/* The ratios the series discusses, this run's beside the series'. */
static void series_ratio_list(FILE *f, const analysis *a)
{
    int n_rs;
    const series_ratio *rs = series_ratios(&n_rs);
    int any = 0;
    for (int k = 0; k < n_rs; k++) {
        double q = series_ratio_here(a, &rs[k]);
        if (!isfinite(q) || !isfinite(rs[k].series))
            continue;
        if (!any++)
            fputs("The ratios the series discusses, this run beside the series:\n\n", f);
        fprintf(f, "- %s: %.2f× here (CUDA time per forward); %.2f× in the series (%s", rs[k].what, q, rs[k].series,
                SERIES_LABEL);
        if (rs[k].basis)
            fprintf(f, ": %s)", rs[k].basis);
        else
            fputs(")", f);
        if ((q > 1) != (rs[k].series > 1))
            fputs(": **the order differs**", f);
        fputs("\n", f);
    }
    if (any)
        fputc('\n', f);
}

/* Kineto's 0%: the series' explanation against this run's records. */
static void series_kineto_against_records(FILE *f, const analysis *a)
{
    fprintf(f, "### Kineto's 0%% occupancy: the series against the records\n\nThe series reads Kineto's estimated "
               "occupancy as ≈ 13%% for flash and 0%% for cuDNN (%s), and explains cuDNN's 0%% by CUPTI not "
               "attributing occupancy to a `cuLaunchKernelEx` launch. ",
            SERIES_LABEL);
    /* Every variant's kernel that reads 0% by the shared-memory rule, whoever wrote it. */
    char list[1400] = "";
    size_t len = 0;
    int n_zero = 0, by_runtime = 0, own_any = 0;
    for (int i = 0; i < a->n; i++) {
        const gpu_op *op;
        const api_call *via;
        int own;
        if (!a->v[i].n_forwards || !findings_kineto_zero(a, &a->v[i], &op, &via, &own))
            continue;
        char q[200], api[96] = "", vn[100];
        code_name(op->name, q, sizeof q);
        esc_md_code_buf(vn, sizeof vn, a->v[i].result->name);
        if (via)
            esc_md_code_buf(api, sizeof api, via->name);
        len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%s of %s (%d B per block%s%s)",
                                len ? "; " : "", q, vn, op->static_smem + op->dynamic_smem, via ? ", launched with " : "",
                                api);
        n_zero++;
        own_any |= own;
        by_runtime += via && !strncmp(via->name, "cudaLaunchKernel", 16);
    }
    esc_utf8_trim(list);
    if (n_zero) {
        fprintf(f, "This run's records hold %d kernel%s that Kineto's estimate puts at 0%%%s, each above the %d B of "
                   "shared memory per block that Kineto's occupancy call allows (the Occupancy section): %s.",
                n_zero, n_zero == 1 ? "" : "s", own_any ? " (Kineto's own number, recorded in the traces)" : "",
                a->trace->device.smem_per_block, list);
        if (by_runtime)
            fprintf(f, " %s launched with the runtime's `cudaLaunchKernel*`, not `cuLaunchKernelEx`: the cause is the "
                       "shared-memory limit, not the launch API.", by_runtime == 1 ? "One of them is" : "Some are");
        fprintf(f, " Applied to the series, the rule predicts 0%% for any kernel above %d B per block and a nonzero "
                   "value at or below it; the series gives no shared memory per kernel, so its readings are checked by "
                   "a trace of the same kernels, not by the series alone.\n\n",
                a->trace->device.smem_per_block);
    } else if (a->trace->device.smem_per_block > 0)
        fputs("This run's records hold no kernel that Kineto's shared-memory limit sets to 0%, so they neither "
              "support nor contradict it.\n\n", f);
    else
        fputs("The records do not hold the device's default shared-memory limit per block (deviceProperties "
              "sharedMemPerBlock), so the rule cannot be checked against them.\n\n", f);
}

void series_section(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    fprintf(f, "## Beside the series\n\n");
    fprintf(f, "The series (\"Profiling in PyTorch\", part 3) published the numbers below for an A100-SXM4-80GB. They "
               "are citations from the series, not measurements of this run, and are labelled *%s*. The series does "
               "not state its shape, so its times may be for another shape than this run's (",
            SERIES_LABEL);
    if (run_info_shape_recorded(r))
        fprintf(f, "B=%d, H=%d, S=%d, D=%d", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
    else
        fputs("whose shape is not recorded", f);
    fputs("): compare counts and ratios, not absolute times.\n\n", f);
    implementations_paragraph(f, a);
    fprintf(f, "The series' kernel counts match GPU operations per forward with the Memsets left aside (its naive "
               "counts the Memcpy): this run's column counts the same.\n\n");
    fprintf(f, "| Variant | GPU operations / forward without Memsets, this run | Kernels / forward, %s | "
               "CUDA time / forward, this run | "
               "CUDA time / forward, %s | CPU time / forward, this run | CPU time / forward, %s |\n"
               "|---|---|---|---|---|---|---|\n",
            SERIES_LABEL, SERIES_LABEL, SERIES_LABEL);
    series_table(f, a);
    series_ratio_list(f, a);
    series_kineto_against_records(f, a);
}

/* What differs from the expectation the variants and the series state, "; "-separated, into
 * diff (n bytes); its length as written (it may exceed n: the caller trims). */
static size_t abstract_differences(const analysis *a, char *diff, size_t n)
{
    int n_rs;
    const series_ratio *rs = series_ratios(&n_rs);
    size_t len = 0;
    diff[0] = '\0';
#define SAY(...) (len += (size_t)snprintf(diff + len, len < n ? n - len : 0, __VA_ARGS__))
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        char nm[100];
        esc_md_code_buf(nm, sizeof nm, va->result->name);
        if (va->result->status != VARIANT_OK) {
            SAY("%s%s %s", len ? "; " : "", nm, variant_status_name(va->result->status));
            continue;
        }
        if (va->n_forwards && va->result->expected_ops >= 0 && va->ops_per_forward != va->result->expected_ops)
            SAY("%s%s runs %d GPU operations per forward where %d were expected (%d Memset%s)", len ? "; " : "", nm,
                va->ops_per_forward, va->result->expected_ops, va->memset_per_forward,
                va->memset_per_forward == 1 ? "" : "s");
        const series_fact *s = series_fact_of(va->result->name);
        if (s && va->n_forwards && va->ops_per_forward - va->memset_per_forward != s->kernels)
            SAY("%s%s runs %d GPU operations per forward besides Memsets where the series counts %d", len ? "; " : "",
                nm, va->ops_per_forward - va->memset_per_forward, s->kernels);
        const gpu_op *op;
        const api_call *via;
        if (va->n_forwards && s && s->kineto_occ_pct > 0 && kineto_zero_kernel(a, va, &op, &via))
            SAY("%sKineto's estimate for %s's kernel is 0%% (%d B shared memory per block), where the series reads "
                "%s%d%% for its %s", len ? "; " : "", nm, op->static_smem + op->dynamic_smem,
                s->kineto_occ_approx ? "≈ " : "", s->kineto_occ_pct, s->variant);
    }
    for (int k = 0; k < n_rs; k++) {
        double q = series_ratio_here(a, &rs[k]);
        if (isfinite(q) && isfinite(rs[k].series) && (q > 1) != (rs[k].series > 1))
            SAY("%s%s is %s than %s here (%.2f×), %s in the series (%.2f×, %s)", len ? "; " : "", rs[k].x,
                q < 1 ? "faster" : "slower", rs[k].y, q, q < 1 ? "slower" : "faster", rs[k].series, SERIES_LABEL);
    }
#undef SAY
    return len;
}

void series_abstract(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    const variant_analysis *best = NULL;
    int n_ok = 0;
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        if (va->result->status != VARIANT_OK || !va->n_forwards)
            continue;
        n_ok++;
        if (!best || va->cuda_us.median < best->cuda_us.median)
            best = va;
    }
    fputs("## Abstract\n\n", f);
    if (!best) {
        fputs("No variant recorded a forward in this run.\n\n", f);
        return;
    }
    fprintf(f, "On ");
    esc_md_text(f, r->device.name[0] ? r->device.name : "a GPU whose name is not recorded");
    /* an import knows its shape only when declared (import --shape): never B=0 */
    if (run_info_shape_recorded(r)) {
        fprintf(f, " (B=%d, H=%d, S=%d, D=%d", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
        if (r->dtype[0]) {
            fputs(", ", f);
            esc_md_text(f, r->dtype);
        }
        fprintf(f, "%s)", r->causal ? ", causal" : "");
    } else if (model_inputs_any(r))
        fputs(" (attention inputs recorded with record_shapes: see *Model*)", f);
    else
        fputs(" (shape not recorded)", f);
    /* "the fastest" ranks variants of one series; model traces side by side are different
     * models or programs: each is given with its own time, and a training step is a step */
    int models = 0;
    for (int i = 0; i < a->n; i++)
        models += a->v[i].result->status == VARIANT_OK && a->v[i].n_forwards && model_is_step_trace(&a->v[i]);
    if (n_ok > 1 && models) {
        fprintf(f, ", %d traces side by side: ", n_ok);
        int k = 0;
        for (int i = 0; i < a->n; i++) {
            const variant_analysis *va = &a->v[i];
            if (va->result->status != VARIANT_OK || !va->n_forwards)
                continue;
            fputs(k++ ? ", " : "", f);
            esc_md_code(f, va->result->name, 0);
            fprintf(f, " at %.1f µs CUDA time per %s (median of %d)", va->cuda_us.median, model_unit_word(va),
                    va->cuda_us.n);
        }
        fputs(".", f);
    } else {
        if (n_ok == 1)
            fputs(", one variant ran: ", f);
        else
            fprintf(f, ", %d variants ran; the fastest is ", n_ok);
        esc_md_code(f, best->result->name, 0);
        fprintf(f, " at %.1f µs CUDA time per %s (median of %d).", best->cuda_us.median, model_unit_word(best),
                best->cuda_us.n);
    }
    /* Only the series' own pairs, each beside the series' value for the same pair. */
    int n_rs;
    const series_ratio *rs = series_ratios(&n_rs);
    int k_any = 0;
    for (int k = 0; k < n_rs; k++) {
        double q = series_ratio_here(a, &rs[k]);
        if (!isfinite(q) || !isfinite(rs[k].series))
            continue;
        fputs(k_any++ ? ", " : " CUDA time ratios of the pairs the series compares (this run; the series): ", f);
        fprintf(f, "%s / %s %.2f× (%.2f×)", rs[k].x, rs[k].y, q, rs[k].series);
    }
    if (k_any)
        fputs(".", f);
    char diff[2048];
    size_t len = abstract_differences(a, diff, sizeof diff);
    esc_utf8_trim(diff);
    /* An expectation exists only where a variant states one (an attnprof run) or the
     * series published the variant: a model's trace has neither. */
    int expected = series_applies(a);
    for (int i = 0; i < a->n; i++)
        expected |= a->v[i].result->expected_ops >= 0;
    if (len)
        fprintf(f, " Differs from the expectation: %s.", diff);
    else if (expected)
        fputs(" Nothing differs from the expectation the variants and the series state.", f);
    if (series_applies(a))
        fputs(" Every number here is derived from this archive's records; the series' are cited in \"Beside the "
              "series\".\n\n",
              f);
    else
        fputs(" Every number here is derived from this archive's records.\n\n", f);
}

/* Why Kineto reads 0%, from the records: its occupancy call keeps the default
 * per-block shared memory limit, so every kernel above it reads 0%, whatever API
 * launched it. Evidence is listed per kernel of the representative forwards. */
void series_kineto_paragraph(FILE *f, const analysis *a)
{
    const device_props *dev = &a->trace->device;
    char zero[1600] = "", nonzero_ex[600] = "";
    int n_zero = 0, zero_runtime = 0, n_nonzero_ex = 0;
    /* one mention per kernel name: the names of the operations before, in any representative
     * forward, by hash (a scan of them was quadratic: 64 000 distinct kernels) */
    str_set names;
    str_set_init(&names);
    for (int i = 0; i < a->n; i++) {
        const forward *fw = rep(&a->v[i]);
        for (int k = 0; fw && k < fw->n_ops; k++) {
            const gpu_op *o = fw->ops[k];
            const api_call *l = fw->launchers[k];
            occupancy occ;
            char oerr[64];
            int seen = str_set_seen(&names, o->name);
            if (o->kind != GPU_KERNEL)
                continue;
            int computed = occupancy_of_op(o, dev, &occ, oerr, sizeof oerr) == 0;
            /* an import carries Kineto's own number: the rule is checked against it */
            long long smem = (long long)o->static_smem + o->dynamic_smem;
            int reads_zero = dev->smem_per_block > 0 && smem > dev->smem_per_block &&
                       (o->has_kineto_occupancy ? o->kineto_occupancy == 0 : computed && occ.kineto_pct == 0);
            if (!computed && !o->has_kineto_occupancy)
                continue;
            if (seen)
                continue;
            char nm[FINDING_NAME_MAX + 8], q[200], api[100];
            findings_short_name(o->name, nm, sizeof nm);
            esc_md_code_buf(q, sizeof q, nm);
            esc_md_code_buf(api, sizeof api, l ? l->name : "no launch recorded");
            size_t len;
            if (reads_zero && n_zero < 8) {
                len = strlen(zero);
                snprintf(zero + len, sizeof zero - len, "%s%s (%d B, via %s)", n_zero ? ", " : "", q,
                         o->static_smem + o->dynamic_smem, api);
                n_zero++;
                zero_runtime += l && !strncmp(l->name, "cudaLaunchKernel", 16);
            } else if (l && !strcmp(l->name, "cuLaunchKernelEx") &&
                       (o->has_kineto_occupancy ? o->kineto_occupancy > 0 : occ.kineto_pct > 0) && n_nonzero_ex < 4) {
                len = strlen(nonzero_ex);
                snprintf(nonzero_ex + len, sizeof nonzero_ex - len, "%s%s (%.0f%%)", n_nonzero_ex ? ", " : "", q,
                         o->has_kineto_occupancy ? o->kineto_occupancy : (double)occ.kineto_pct);
                n_nonzero_ex++;
            }
        }
    }
    str_set_free(&names);
    esc_utf8_trim(zero);
    fprintf(f, "### Why Kineto reads 0%%\n\nKineto's estimate (the column *Kineto's estimate* in the op tables, "
               "and Kineto's number in grey in the chart) uses the same formula, but its occupancy call keeps "
               "the default per-block shared memory limit (%d B) instead of the opted-in one (%d B): a kernel "
               "that needs more shared memory per block than that reads 0%%, however it was launched.",
            dev->smem_per_block, dev->smem_per_block_optin);
    if (n_zero)
        fprintf(f, " In this run: %s.", zero);
    if (zero_runtime)
        fprintf(f, " %s launched with the runtime's `cudaLaunchKernel*`, so the launch API does not explain the "
                   "0%%: the shared memory does.",
                n_zero == 1 ? "It is" : zero_runtime == 1 ? "One of them is" : "Some of them are");
    if (n_nonzero_ex)
        fprintf(f, " Kernels launched with `cuLaunchKernelEx` below the limit read above 0%%: %s.", nonzero_ex);
    fputs("\n\n", f);
}

/* The reference archive: what it is, and whether it ran where we ran. */
void series_reference_note(FILE *f, const analysis *a, const analysis *ref, const char *label)
{
    const run_info *o = ref->run, *r = a->run;
    fputs("The reference column holds another archive's medians, derived from its records as ours are: ", f);
    esc_md_text(f, label);
    fputs(" (", f);
    esc_md_text(f, o->device.name[0] ? o->device.name : "GPU not recorded");
    if (run_info_shape_recorded(o))
        fprintf(f, ", B=%d, H=%d, S=%d, D=%d, ", o->shape.batch, o->shape.heads, o->shape.seq, o->shape.dim);
    else
        fputs(", shape not recorded, ", f);
    esc_md_text(f, run_producer_phrase(o));
    fputs(", attnprof ", f);
    esc_md_text(f, o->tool_version);
    fputs(").", f);
    if (strcmp(o->device.name, r->device.name))
        fputs(" **It ran on another GPU.**", f);
    if (!run_info_shape_recorded(o) || !run_info_shape_recorded(r))
        fputs(" Whether its shape is this run's is not recorded.", f);
    else if (memcmp(&o->shape, &r->shape, sizeof o->shape))
        fputs(" **Its shape differs from this run's.**", f);
    fputs("\n\n", f);
}

/* The footer: how to cite the tool, with the version that recorded this run. The entry and
 * the CITATION.cff written beside the report come from one writer (citation.c). */
void series_citation(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    char year[8], version[64];
    citation_year(r->date, year, sizeof year);
    citation_version(r->tool_version, version, sizeof version);
    fprintf(f, "## Cite attnprof\n\nThis %s by attnprof %s (the `git describe` of its commit, from "
               "run.json). CITATION.cff beside this report holds the same entry; the repository's CITATION.cff "
               "has the same fields without a version: cite the version named here.\n\n",
            r->imported ? "archive was imported" : "run was recorded", version[0] ? version : "(version not recorded)");
    fputs("```bibtex\n", f);
    citation_write_bibtex(f, version, year);
    fputs("```\n", f);
}
