/* The series' published A100 figures beside this run's, and the abstract. The
 * series' numbers are citations, labelled SERIES_LABEL wherever they appear; the
 * series does not state its shape, so the report compares counts and ratios and
 * says that absolute times may be for another shape. Everything said about this
 * run is derived from its records. */
#include "series.h"

#include "citation.h"
#include "escape.h"
#include "findings.h"
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

const series_fact *series_fact_of(const char *variant)
{
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
        if (!strcmp(facts[i].variant, variant))
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

static const variant_analysis *ok_variant(const analysis *a, const char *name)
{
    const variant_analysis *v = analysis_find(a, name);
    return v && v->n_forwards && v->cuda_us.n && v->cuda_us.median > 0 ? v : NULL;
}

/* Median CUDA time of x over y, or NAN. */
static double ratio(const analysis *a, const char *x, const char *y)
{
    const variant_analysis *vx = ok_variant(a, x), *vy = ok_variant(a, y);
    return vx && vy ? vx->cuda_us.median / vy->cuda_us.median : NAN;
}

/* The kernel of a variant's median forward that Kineto's default shared-memory
 * limit zeroes, if any: 1 with its bytes and launch API. */
static int kineto_zero_kernel(const analysis *a, const variant_analysis *va, const gpu_op **op, const api_call **via)
{
    const forward *fw = rep(va);
    for (int k = 0; fw && k < fw->n_ops; k++) {
        occupancy o;
        char err[64];
        if (fw->ops[k]->kind == GPU_KERNEL &&
            occupancy_of_op(fw->ops[k], &a->trace->device, &o, err, sizeof err) == 0 && o.kineto_smem_limited &&
            o.kineto_pct == 0) {
            *op = fw->ops[k];
            *via = fw->launchers[k];
            return 1;
        }
    }
    return 0;
}

static void code_name(const char *name, char *out, size_t n)
{
    char s[FINDING_NAME_MAX + 8];
    findings_short_name(name, s, sizeof s);
    esc_md_code_buf(out, n, s);
}

void series_section(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    fprintf(f, "## Beside the series\n\n");
    fprintf(f, "The series (\"Profiling in PyTorch\", part 3) published the numbers below for an A100-SXM4-80GB. They "
               "are citations from the series, not measurements of this run, and are labelled *%s*. The series does "
               "not state its shape, so its times may be for another shape than this run's (B=%d, H=%d, S=%d, D=%d): "
               "compare counts and ratios, not absolute times.\n\n",
            SERIES_LABEL, r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
    fprintf(f, "attnprof's `efficient` and `flash` kernels and the elementwise, mask and softmax kernels of `naive`, "
               "`naive_inplace` and `math` are attnprof's own implementations (kernels/), not PyTorch's; the GEMMs are "
               "cuBLAS's and `cudnn` is cuDNN's. CPU times are C calls into CUDA, cuBLAS and cuDNN: they hold no "
               "PyTorch dispatcher, which the series' CPU times include.\n\n");
    fprintf(f, "The series' kernel counts match GPU operations per forward with the Memsets left aside (its naive "
               "counts the Memcpy): this run's column counts the same.\n\n");
    fprintf(f, "| Variant | GPU operations / forward without Memsets, this run | Kernels / forward, %s | "
               "CUDA time / forward, this run | "
               "CUDA time / forward, %s | CPU time / forward, this run | CPU time / forward, %s |\n"
               "|---|---|---|---|---|---|---|\n",
            SERIES_LABEL, SERIES_LABEL, SERIES_LABEL);
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

    /* The ratios the series discusses. */
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

    /* Kineto's 0%: the series' explanation against the records. */
    fprintf(f, "### Kineto's 0%% occupancy: the series against the records\n\nThe series reads Kineto's estimated "
               "occupancy as ≈ 13%% for flash and 0%% for cuDNN (%s), and explains cuDNN's 0%% by CUPTI not "
               "attributing occupancy to a `cuLaunchKernelEx` launch. ",
            SERIES_LABEL);
    const variant_analysis *fl = ok_variant(a, "flash"), *cu = ok_variant(a, "cudnn");
    const gpu_op *op;
    const api_call *via;
    int said = 0;
    if (fl && kineto_zero_kernel(a, fl, &op, &via)) {
        char q[200], api[96];
        code_name(op->name, q, sizeof q);
        esc_md_code_buf(api, sizeof api, via ? via->name : "?");
        fprintf(f, "This run's records disagree: attnprof's flash kernel %s is launched with %s, not "
                   "`cuLaunchKernelEx`, and Kineto's formula still gives it 0%%, because it uses %d B of shared "
                   "memory per block, above the %d B that Kineto's occupancy call allows (the Occupancy section). ",
                q, api, op->static_smem + op->dynamic_smem, a->trace->device.smem_per_block);
        said = 1;
    }
    if (cu && kineto_zero_kernel(a, cu, &op, &via)) {
        char q[200];
        code_name(op->name, q, sizeof q);
        fprintf(f, "%s cuDNN kernel %s (%d B per block) reads 0%% for the same reason. ", said ? "The" : "This run's",
                q, op->static_smem + op->dynamic_smem);
        said = 1;
    }
    if (said)
        fprintf(f, "The cause is the shared-memory limit, not the launch API. Applied to the series, the rule "
                   "predicts 0%% for any kernel above %d B per block and a nonzero value at or below it; the series "
                   "gives no shared memory per kernel, so its two readings are checked by a trace of the same "
                   "kernels (an imported PyTorch archive, `--reference`), not by the series alone.\n\n",
                a->trace->device.smem_per_block);
    else
        fputs("This run's records hold no kernel that Kineto's shared-memory limit sets to 0%, so they neither "
              "support nor contradict it.\n\n", f);
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
    esc_md_text(f, r->device.name);
    fprintf(f, " (B=%d, H=%d, S=%d, D=%d, ", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
    esc_md_text(f, r->dtype);
    fprintf(f, "%s), %d variant%s ran; the fastest is ", r->causal ? ", causal" : "", n_ok, n_ok == 1 ? "" : "s");
    esc_md_code(f, best->result->name, 0);
    fprintf(f, " at %.1f µs CUDA time per forward (median of %d).", best->cuda_us.median, best->cuda_us.n);
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
    /* What differs from the expectation. */
    char diff[2048] = "";
    size_t len = 0;
#define SAY(...) (len += (size_t)snprintf(diff + len, len < sizeof diff ? sizeof diff - len : 0, __VA_ARGS__))
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        char nm[100];
        esc_md_code_buf(nm, sizeof nm, va->result->name);
        if (va->result->status != VARIANT_OK) {
            SAY("%s%s %s", len ? "; " : "", nm, variant_status_name(va->result->status));
            continue;
        }
        if (va->n_forwards && va->ops_per_forward != va->result->expected_ops)
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
                s->kineto_occ_approx ? "≈ " : "", s->kineto_occ_pct, va->result->name);
    }
    for (int k = 0; k < n_rs; k++) {
        double q = series_ratio_here(a, &rs[k]);
        if (isfinite(q) && isfinite(rs[k].series) && (q > 1) != (rs[k].series > 1))
            SAY("%s%s is %s than %s here (%.2f×), %s in the series (%.2f×, %s)", len ? "; " : "", rs[k].x,
                q < 1 ? "faster" : "slower", rs[k].y, q, q < 1 ? "slower" : "faster", rs[k].series, SERIES_LABEL);
    }
#undef SAY
    esc_utf8_trim(diff);
    if (len)
        fprintf(f, " Differs from the expectation: %s.", diff);
    else
        fputs(" Nothing differs from the expectation the variants and the series state.", f);
    fputs(" Every number here is derived from this archive's records; the series' are cited in \"Beside the "
          "series\".\n\n",
          f);
}

/* Why Kineto reads 0%, from the records: its occupancy call keeps the default
 * per-block shared memory limit, so every kernel above it reads 0%, whatever API
 * launched it. Evidence is listed per kernel of the representative forwards. */
void series_kineto_paragraph(FILE *f, const analysis *a)
{
    const device_props *dev = &a->trace->device;
    char zero[1600] = "", nonzero_ex[600] = "";
    int n_zero = 0, zero_runtime = 0, n_nonzero_ex = 0;
    for (int i = 0; i < a->n; i++) {
        const forward *fw = rep(&a->v[i]);
        for (int k = 0; fw && k < fw->n_ops; k++) {
            const gpu_op *o = fw->ops[k];
            const api_call *l = fw->launchers[k];
            occupancy occ;
            char oerr[64];
            if (o->kind != GPU_KERNEL || occupancy_of_op(o, dev, &occ, oerr, sizeof oerr) != 0)
                continue;
            int seen = 0; /* one mention per kernel name */
            for (int j = 0; j < i && !seen; j++) {
                const forward *pf = rep(&a->v[j]);
                for (int m = 0; pf && m < pf->n_ops && !seen; m++)
                    seen = !strcmp(pf->ops[m]->name, o->name);
            }
            for (int m = 0; m < k && !seen; m++)
                seen = !strcmp(fw->ops[m]->name, o->name);
            if (seen)
                continue;
            char nm[FINDING_NAME_MAX + 8], q[200], api[100];
            findings_short_name(o->name, nm, sizeof nm);
            esc_md_code_buf(q, sizeof q, nm);
            esc_md_code_buf(api, sizeof api, l ? l->name : "?");
            size_t len;
            if (occ.kineto_smem_limited && occ.kineto_pct == 0 && n_zero < 8) {
                len = strlen(zero);
                snprintf(zero + len, sizeof zero - len, "%s%s (%d B, via %s)", n_zero ? ", " : "", q,
                         o->static_smem + o->dynamic_smem, api);
                n_zero++;
                zero_runtime += l && !strncmp(l->name, "cudaLaunchKernel", 16);
            } else if (l && !strcmp(l->name, "cuLaunchKernelEx") && occ.kineto_pct > 0 && n_nonzero_ex < 4) {
                len = strlen(nonzero_ex);
                snprintf(nonzero_ex + len, sizeof nonzero_ex - len, "%s%s (%d%%)", n_nonzero_ex ? ", " : "", q,
                         occ.kineto_pct);
                n_nonzero_ex++;
            }
        }
    }
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
                   "0%%: the shared memory does.", zero_runtime == 1 ? "One of them is" : "Some of them are");
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
    esc_md_text(f, o->device.name);
    fprintf(f, ", B=%d, H=%d, S=%d, D=%d, ", o->shape.batch, o->shape.heads, o->shape.seq, o->shape.dim);
    esc_md_text(f, o->tool_version);
    fputs(").", f);
    if (strcmp(o->device.name, r->device.name))
        fputs(" **It ran on another GPU.**", f);
    if (memcmp(&o->shape, &r->shape, sizeof o->shape))
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
    fprintf(f, "## Cite attnprof\n\nThis run was recorded by attnprof %s (the `git describe` of its commit, from "
               "run.json). CITATION.cff beside this report holds the same entry; the repository's CITATION.cff "
               "has the same fields without a version: cite the version that recorded your run.\n\n",
            version[0] ? version : "(version not recorded)");
    fputs("```bibtex\n", f);
    citation_write_bibtex(f, version, year);
    fputs("```\n", f);
}
