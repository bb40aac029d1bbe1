#include "findings.h"
#include "alloc.h"

#include "escape.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has(const char *name, const char *needle) { return strcasestr(name, needle) != NULL; }

int gemm_on_cuda_cores(const char *n)
{
    return has(n, "sgemm") || has(n, "ffma") || has(n, "simt") || has(n, "f32f32_f32f32");
}

int builds_mask(const char *n)
{
    /* mask_fill: math's -inf fill of the masked positions, a step of the rebuild
     * (naive's masked_fill applies the mask; it is not a rebuild) */
    return has(n, "tril") || has(n, "triu") || has(n, "_ones") || has(n, "where_bias") || has(n, "causal_mask") ||
           has(n, "mask_fill");
}

int safe_softmax_check(const char *n) { return has(n, "isneginf") || has(n, "row_all") || has(n, "where_zero"); }

static void add(variant_analysis *va, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(variant_analysis *va, const char *fmt, ...)
{
    if (va->n_findings >= MAX_FINDINGS)
        return;
    va->n_findings++;
    va_list ap;
    va_start(ap, fmt);
    char *out = va->findings[va->n_findings - 1];
    int len = vsnprintf(out, sizeof va->findings[0], fmt, ap);
    va_end(ap);
    if (len >= (int)sizeof va->findings[0]) { /* never cut silently: an ellipsis marks the cut */
        out[sizeof va->findings[0] - 4] = '\0';
        esc_utf8_trim(out);
        strcat(out, "\xe2\x80\xa6");
    }
}

static int is_memcpy(const gpu_op *o) { return o->kind == GPU_MEMCPY; }
static int is_kernel(const gpu_op *o) { return o->kind == GPU_KERNEL; }
static int is_memset(const gpu_op *o) { return o->kind == GPU_MEMSET; }
static int is_gemm(const gpu_op *o) { return o->kind == GPU_KERNEL && classify_op(o) == OPC_GEMM; }
static int is_fp32_gemm(const gpu_op *o) { return is_gemm(o) && gemm_on_cuda_cores(o->name); }
static int is_mask_build(const gpu_op *o)
{
    return o->kind == GPU_KERNEL && (builds_mask(o->name) || op_builds_mask_aten(o));
}
/* PyTorch's _safe_softmax: the kernels it launches besides the softmax itself. */
static int aten_safe_check(const gpu_op *o)
{
    return op_launched_in(o, "aten::_safe_softmax") && !op_launched_in(o, "aten::_softmax");
}
static int is_safe_check(const gpu_op *o)
{
    return o->kind == GPU_KERNEL && (safe_softmax_check(o->name) || aten_safe_check(o));
}

const char *human_bytes(double b, char *buf, size_t n)
{
    if (b >= 1 << 30)
        snprintf(buf, n, "%.3g GiB", b / (1 << 30));
    else if (b >= 1 << 20)
        snprintf(buf, n, "%.3g MiB", b / (1 << 20));
    else if (b >= 1 << 10)
        snprintf(buf, n, "%.3g KiB", b / (1 << 10));
    else
        snprintf(buf, n, "%.0f B", b);
    return buf;
}

/* The representative forward: the median one, which every view shows. */
static const forward *rep_forward(const variant_analysis *va)
{
    int i = analysis_median_forward(va);
    return i < 0 ? NULL : &va->forwards[i];
}

/* First matching op of the representative forward (then of any forward). */
static const gpu_op *first_match(const variant_analysis *va, op_predicate pred)
{
    const forward *r = rep_forward(va);
    for (int k = 0; r && k < r->n_ops; k++)
        if (pred(r->ops[k]))
            return r->ops[k];
    for (int i = 0; i < va->n_forwards; i++)
        for (int k = 0; k < va->forwards[i].n_ops; k++)
            if (pred(va->forwards[i].ops[k]))
                return va->forwards[i].ops[k];
    return NULL;
}

/* Distinct short names of matching ops in the representative forward,
 * comma-separated; a name longer than FINDING_NAME_MAX ends in "…" (the op table
 * of the variant names it in full). */
static void names_of(const variant_analysis *va, op_predicate pred, char *out, size_t n)
{
    out[0] = '\0';
    const forward *f = rep_forward(va);
    if (!f)
        return;
    for (int k = 0; k < f->n_ops; k++) {
        if (!pred(f->ops[k]))
            continue;
        char s[FINDING_NAME_MAX + 8], quoted[400], code[200], aten[96], acode[200];
        findings_short_name(f->ops[k]->name, s, sizeof s);
        esc_md_code_buf(code, sizeof code, s);
        if (op_aten_name(f->ops[k], aten, sizeof aten)) { /* imported: the ATen op that launched it */
            esc_md_code_buf(acode, sizeof acode, aten);
            snprintf(quoted, sizeof quoted, "%s from %s", code, acode);
        } else
            snprintf(quoted, sizeof quoted, "%s", code);
        if (strstr(out, quoted)) /* whole quoted name: where_zero is not where_zero_fill */
            continue;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? ", " : "", quoted);
    }
}

static const attn_fact *fact(const variant_result *r, const char *key)
{
    for (int i = 0; i < r->facts.n; i++)
        if (!strcmp(r->facts.item[i].key, key))
            return &r->facts.item[i];
    return NULL;
}

void findings_short_name(const char *name, char *out, size_t n)
{
    char full[1024];
    short_kernel_name(name, full, sizeof full);
    /* count characters, not bytes */
    size_t chars = 0, cut = 0;
    for (const unsigned char *p = (const unsigned char *)full; *p; p++)
        if ((*p & 0xc0) != 0x80 && ++chars == FINDING_NAME_MAX)
            cut = (size_t)((const char *)p - full);
    if (chars > FINDING_NAME_MAX && cut + 4 <= n)
        snprintf(out, n, "%.*s\xe2\x80\xa6", (int)cut, full);
    else if (!esc_copy_utf8(out, n, full) && n >= 4) {
        out[n - 4] = '\0';
        esc_utf8_trim(out);
        strcat(out, "\xe2\x80\xa6");
    }
}

const char *findings_launch_api_name(const api_call *l)
{
    static const char *known[] = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchKernelEx",
                                  "cudaLaunchCooperativeKernel", "cuLaunchKernel", "cuLaunchKernelEx",
                                  "cuLaunchCooperativeKernel", "cudaGraphLaunch", "cuGraphLaunch"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(l->name, known[i]))
            return known[i];
    return l->name;
}

/* The library behind an op, from its kernel name (cuBLAS/cuBLASLt, cuDNN, ours). */
static const char *library_of_kernel(const char *n)
{
    if (!strncmp(n, "attnprof_", 9) || strstr(n, " attnprof_"))
        return "attnprof";
    if (has(n, "cudnn"))
        return "cuDNN";
    if (has(n, "nvjet") || has(n, "cublas") || has(n, "xmma_gemm") || has(n, "sgemm") || has(n, "gemv") ||
        has(n, "cutlass"))
        return "cuBLAS";
    return NULL;
}

int findings_memset_library(const trace *t, const forward *f, int k, const char **library, const gpu_op **next)
{
    *library = NULL;
    *next = NULL;
    const api_call *l = f->launchers[k];
    if (!l || f->ops[k]->kind != GPU_MEMSET)
        return -1;
    /* The first kernel launched after the Memset's call on the same thread, inside
     * the forward, with no other launch in between: the Memset belongs to its library. */
    const gpu_op *best = NULL;
    const api_call *best_l = NULL;
    for (int j = 0; j < f->n_ops; j++) {
        const api_call *lj = f->launchers[j];
        if (j == k || !lj || lj->tid != l->tid || lj->start_ns < l->end_ns)
            continue;
        if (!best_l || lj->start_ns < best_l->start_ns)
            best = f->ops[j], best_l = lj;
    }
    if (!best || best->kind != GPU_KERNEL)
        return -1;
    (void)t;
    *library = library_of_kernel(best->name);
    *next = best;
    return *library ? 0 : -1;
}

static void launch_findings(variant_analysis *va)
{
    /* Launch latency is read off each forward's first kernel (not a Memset or copy
     * before it): the GPU is idle then (the previous forward was synchronized). */
    double *lat = calloc((size_t)(va->n_forwards ? va->n_forwards : 1), sizeof(double));
    int nl = 0;
    if (!lat)
        attn_oom();
    for (int i = 0; i < va->n_forwards; i++) {
        const forward *f = &va->forwards[i];
        for (int k = 0; k < f->n_ops; k++)
            if (f->ops[k]->kind == GPU_KERNEL && f->launchers[k]) {
                lat[nl++] = (double)(f->ops[k]->start_ns - f->launchers[k]->start_ns) / 1000.0;
                break;
            }
    }
    stats s = stats_of(lat, nl);
    free(lat);
    /* Launch APIs of the representative forward's kernels, each counted as itself:
     * cudaLaunchKernelExC is not cudaLaunchKernel. */
    const forward *f = rep_forward(va);
    const char *api[8];
    int count[8], n_api = 0, total = 0;
    for (int k = 0; f && k < f->n_ops; k++) {
        const api_call *l = f->launchers[k];
        if (f->ops[k]->kind != GPU_KERNEL || !l)
            continue;
        total++;
        const char *name = findings_launch_api_name(l);
        int j = 0;
        while (j < n_api && strcmp(api[j], name))
            j++;
        if (j == n_api) {
            if (n_api == 8)
                continue;
            api[n_api] = name, count[n_api++] = 0;
        }
        count[j]++;
    }
    if (!total)
        return;
    char lat_text[64] = "";
    if (s.n)
        snprintf(lat_text, sizeof lat_text, "; first kernel launch → GPU start %.1f µs (median)", s.median);
    char quoted[120];
    if (n_api == 1) {
        esc_md_code_buf(quoted, sizeof quoted, api[0]);
        add(va, "%s launched with %s%s%s", total == 1 ? "the kernel" : "every kernel", quoted, !strncmp(api[0], "cu", 2) && strncmp(api[0], "cuda", 4) ? " (driver API)" : "", lat_text);
        return;
    }
    char list[320] = "";
    for (int j = 0; j < n_api; j++) {
        esc_md_code_buf(quoted, sizeof quoted, api[j]);
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%d with %s%s", j ? ", " : "", count[j], quoted,
                 !strncmp(api[j], "cu", 2) && strncmp(api[j], "cuda", 4) ? " (driver API)" : "");
    }
    add(va, "kernels per forward by launch API: %s%s", list, lat_text);
}

static void derive(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const variant_result *r = va->result;
    char buf[64], names[640], text[ATTN_ERR_LEN];
    esc_md_text_buf(text, sizeof text, r->error);
    if (r->status == VARIANT_UNAVAILABLE) {
        add(va, "not run: %s", text);
        return;
    }
    if (r->status == VARIANT_SKIPPED) {
        add(va, "skipped (cannot take this shape): %s", text);
        return;
    }
    if (!va->n_forwards) {
        add(va, "no forward recorded: %s", r->error[0] ? text : "the variant failed before its forwards");
        return;
    }
    if (r->expected_ops >= 0 && va->ops_per_forward != r->expected_ops) {
        const gpu_op *ms = first_match(va, is_memset);
        const api_call *via = NULL;
        const forward *rf = rep_forward(va);
        int ms_k = -1;
        for (int i = 0; ms && rf && i < rf->n_ops; i++)
            if (rf->ops[i] == ms)
                via = rf->launchers[i], ms_k = i;
        char via_name[200], whose[400] = "";
        esc_md_code_buf(via_name, sizeof via_name, via ? via->name : "?");
        const char *lib;
        const gpu_op *next;
        if (ms_k >= 0 && findings_memset_library(a->trace, rf, ms_k, &lib, &next) == 0) {
            char kn[FINDING_NAME_MAX + 8], kq[200];
            findings_short_name(next->name, kn, sizeof kn);
            esc_md_code_buf(kq, sizeof kq, kn);
            snprintf(whose, sizeof whose, ", issued by %s: the next launch on the same host thread is %s's %s, with "
                     "no launch between (CUPTI keeps no call stack, so the Memset is attributed by the launching "
                     "library's API window)",
                     lib, lib, kq);
        }
        if (ms && va->ops_per_forward - r->expected_ops == va->memset_per_forward)
            add(va, "observed %d GPU operations per forward where %d were expected: the extra %s %d Memset (%s, "
                    "via %s) outside the variant's own expectation%s",
                va->ops_per_forward, r->expected_ops, va->memset_per_forward == 1 ? "is" : "are",
                va->memset_per_forward, human_bytes((double)ms->bytes, buf, sizeof buf), via_name, whose);
        else
            add(va, "observed %d GPU operations per forward where %d were expected", va->ops_per_forward,
                r->expected_ops);
    }

    int n;
    double us;
    per_forward_median(va, is_memcpy, &n, &us);
    if (n > 0) {
        const gpu_op *m = first_match(va, is_memcpy);
        char kind[32];
        esc_md_text_buf(kind, sizeof kind, m->copy_kind);
        if (m->cpu_op_path) { /* imported: named by its CPU op, the outermost first */
            char top[128], code[200], chain[400];
            snprintf(top, sizeof top, "%.*s", (int)strcspn(m->cpu_op_path, " "), m->cpu_op_path);
            esc_md_code_buf(code, sizeof code, top);
            esc_md_text_buf(chain, sizeof chain, m->cpu_op_path);
            if (strchr(m->cpu_op_path, ' '))
                add(va, "a %s Memcpy %s inside every forward (%.1f µs, %.0f%% of CUDA time), hidden in %s (%s)",
                    human_bytes((double)m->bytes, buf, sizeof buf), kind, us, 100.0 * us / va->cuda_us.median, code,
                    chain);
            else
                add(va, "a %s Memcpy %s inside every forward (%.1f µs, %.0f%% of CUDA time), from %s",
                    human_bytes((double)m->bytes, buf, sizeof buf), kind, us, 100.0 * us / va->cuda_us.median, code);
        } else
            add(va, "a %s Memcpy %s inside every forward (%.1f µs, %.0f%% of CUDA time)",
                human_bytes((double)m->bytes, buf, sizeof buf), kind, us, 100.0 * us / va->cuda_us.median);
    }
    /* Against the previous variant of the run that recorded forwards. */
    for (int p = vi - 1; p >= 0; p--) {
        const variant_analysis *pv = &a->v[p];
        if (!pv->n_forwards)
            continue;
        int d_ops = va->ops_per_forward - pv->ops_per_forward;
        double d_us = va->cuda_us.median - pv->cuda_us.median;
        const char *prefix = pv->memcpy_per_forward > 0 && va->memcpy_per_forward == 0 ? "no Memcpy; " : "";
        char pname[100];
        esc_md_text_buf(pname, sizeof pname, pv->result->name);
        if (d_ops)
            add(va, "%s%d %s operation%s than %s (%+.1f µs CUDA time per forward)", prefix, abs(d_ops),
                d_ops < 0 ? "fewer" : "more", abs(d_ops) == 1 ? "" : "s", pname, d_us);
        else if (*prefix)
            add(va, "%sas many operations as %s (%+.1f µs)", prefix, pname, d_us);
        break;
    }

    per_forward_median(va, is_fp32_gemm, &n, &us);
    if (n > 0) {
        names_of(va, is_fp32_gemm, names, sizeof names);
        const variant_analysis *ref = analysis_find(a, "naive_inplace");
        for (int p = 0; !ref && a->run->imported && p < a->n; p++) /* imported: the first with tensor-core GEMMs */
            if (p != vi && a->v[p].n_forwards && first_match(&a->v[p], is_gemm) && !first_match(&a->v[p], is_fp32_gemm))
                ref = &a->v[p];
        int rn = 0;
        double rus = 0;
        if (ref && ref->n_forwards)
            per_forward_median(ref, is_gemm, &rn, &rus);
        if (rn > 0 && rus > 0)
            add(va, "%d GEMMs in FP32 on CUDA cores (%s): %.1f µs per forward, %.1f× the tensor-core GEMMs of "
                    "%s (%.1f µs)", n, names, us, us / rus, ref->result->name, rus);
        else
            add(va, "%d GEMMs in FP32 on CUDA cores (%s): %.1f µs per forward", n, names, us);
    }
    per_forward_median(va, is_mask_build, &n, &us);
    if (n > 0) {
        names_of(va, is_mask_build, names, sizeof names);
        add(va, "the causal mask is rebuilt in every forward: %d kernels (%s), %.1f µs", n, names, us);
    }
    per_forward_median(va, is_safe_check, &n, &us);
    if (n > 0) {
        names_of(va, is_safe_check, names, sizeof names);
        if (first_match(va, aten_safe_check))
            add(va, "safe softmax (`aten::_safe_softmax`): %d extra kernels per forward (%s) replace NaN rows by 0, "
                    "%.1f µs", n, names, us);
        else
            add(va, "safe softmax: %d extra kernels per forward (%s) replace NaN rows by 0, %.1f µs", n, names, us);
    }
    per_forward_median(va, is_kernel, &n, &us);
    if (n == 1 && va->ops_per_forward <= 2) {
        const gpu_op *k = first_match(va, is_kernel);
        char shortname[256];
        short_kernel_name(k->name, shortname, sizeof shortname);
        esc_md_code_buf(names, sizeof names, shortname);
        add(va, "one fused kernel %s (%.1f µs; %d regs/thread, %d B shared memory per block)", names, us,
            k->registers, k->static_smem + k->dynamic_smem);
    }
    /* A head dim with no kernel of its own ran on a larger one: the time above
     * includes tensor-core work on zero columns. */
    const attn_fact *padding = fact(r, "head_dim_padding");
    if (padding) {
        esc_md_text_buf(text, sizeof text, padding->value);
        add(va, "head dim padded: %s", text);
    }
    launch_findings(va);
    if (va->cpu_us.median > va->cuda_us.median)
        add(va, "host time per forward (%.1f µs) exceeds GPU time (%.1f µs): the cost moved to the CPU",
            va->cpu_us.median, va->cuda_us.median);
    const attn_fact *plan = fact(r, "plan_build_us"), *graph = fact(r, "graph_build_us");
    const attn_fact *heur = fact(r, "heuristics_us"), *replan = fact(r, "replan");
    if (plan && isfinite(plan->number)) {
        double g = graph && isfinite(graph->number) ? graph->number : 0;
        double h = heur && isfinite(heur->number) ? heur->number : 0;
        if (replan && replan->number > 0)
            add(va, "plan rebuilt in every forward (--cudnn-replan): %.0f µs host time per forward, against a "
                    "one-off %.0f µs (graph %.0f + heuristics %.0f + plan %.0f µs) when built once",
                va->cpu_us.median, g + h + plan->number, g, h, plan->number);
        else
            add(va, "one-off cost %.1f ms in setup (graph %.1f + heuristics %.1f + plan build %.1f ms) vs %.1f µs "
                    "host time per forward",
                (g + h + plan->number) / 1000, g / 1000, h / 1000, plan->number / 1000, va->cpu_us.median);
    }
    const attn_fact *fm = fact(r, "fully_masked_rows");
    if (fm) {
        esc_md_text_buf(text, sizeof text, fm->value);
        add(va, "fully-masked rows → %s", text);
    }
    if (r->dropped_records > 0)
        add(va, "CUPTI dropped %lld records: counts above may be incomplete", (long long)r->dropped_records);
}

void findings_derive(analysis *a)
{
    for (int i = 0; i < a->n; i++) {
        a->v[i].n_findings = 0;
        derive(a, i);
    }
}
