/* The series' findings (findings.h) and the finding table (finding.h): each derive
 * function reads a finished analysis and adds the findings of its row, its numbers and
 * the records behind them; the table names every kind of finding once, with its
 * severity, the facts it needs, how it ranks and its phrase. */
#include "findings.h"
#include "measurement_text.h"
#include "model_findings.h"
#include "predict.h"
#include "alloc.h"

#include "escape.h"
#include "occupancy.h"

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
        findings_code_buf(code, sizeof code, s);
        if (op_aten_name(f->ops[k], aten, sizeof aten)) { /* imported: the ATen op that launched it */
            findings_code_buf(acode, sizeof acode, aten);
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

static int launch_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
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
        return 0;
    char lat_text[64] = "";
    if (s.n)
        snprintf(lat_text, sizeof lat_text, "; first kernel launch → GPU start %.1f µs (median)", s.median);
    char quoted[120];
    finding *fd;
    if (n_api == 1) {
        findings_code_buf(quoted, sizeof quoted, api[0]);
        fd = findings_add(va, FK_LAUNCH_API, "%s launched with %s%s%s", total == 1 ? "the kernel" : "every kernel",
                 quoted, !strncmp(api[0], "cu", 2) && strncmp(api[0], "cuda", 4) ? " (driver API)" : "", lat_text);
    } else {
        char list[320] = "";
        for (int j = 0; j < n_api; j++) {
            findings_code_buf(quoted, sizeof quoted, api[j]);
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%d with %s%s", j ? ", " : "", count[j], quoted,
                     !strncmp(api[j], "cu", 2) && strncmp(api[j], "cuda", 4) ? " (driver API)" : "");
        }
        fd = findings_add(va, FK_LAUNCH_API, "kernels per forward by launch API: %s%s", list, lat_text);
    }
    findings_number(fd, "kernels", total, "");
    findings_number(fd, "launch_apis", n_api, "");
    if (s.n)
        findings_number(fd, "launch_to_start_us", s.median, "us");
    return 0;
}

/* The correlation ids of the representative forward's ops that match. */
static void records_of(finding *fd, const variant_analysis *va, op_predicate pred)
{
    const forward *f = rep_forward(va);
    for (int k = 0; f && k < f->n_ops; k++)
        if (pred(f->ops[k]))
            findings_record(fd, f->ops[k]);
}

/* The first kernel of the representative forward whose Kineto estimate is 0% because
 * it needs more shared memory per block than Kineto's occupancy call allows (the
 * default limit, not the opted-in one): Kineto's own number when the trace carries
 * it (an import), else Kineto's formula applied to the record. */
int findings_kineto_zero(const analysis *a, const variant_analysis *va, const gpu_op **op, const api_call **via,
                         int *own)
{
    const forward *fw = rep_forward(va);
    const device_props *dev = &a->trace->device;
    for (int k = 0; fw && k < fw->n_ops; k++) {
        const gpu_op *o = fw->ops[k];
        if (o->kind != GPU_KERNEL || dev->smem_per_block <= 0)
            continue;
        occupancy occ;
        char err[64];
        int computed = occupancy_of_op(o, dev, &occ, err, sizeof err) == 0;
        int zero = o->has_kineto_occupancy ? o->kineto_occupancy == 0 : computed && occ.kineto_pct == 0;
        long long smem = (long long)o->static_smem + o->dynamic_smem;
        if (zero && smem > dev->smem_per_block) {
            *op = o;
            *via = fw->launchers[k];
            *own = o->has_kineto_occupancy;
            return 1;
        }
    }
    return 0;
}

static int kineto_zero_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const gpu_op *op;
    const api_call *via;
    int own;
    if (!findings_kineto_zero(a, va, &op, &via, &own))
        return 0;
    char nm[FINDING_NAME_MAX + 8], q[200];
    findings_short_name(op->name, nm, sizeof nm);
    findings_code_buf(q, sizeof q, nm);
    int smem = op->static_smem + op->dynamic_smem;
    finding *fd = findings_add(va, FK_KINETO_ZERO_OCCUPANCY, "Kineto's occupancy estimate for %s is 0%% (%s): it needs %d B of shared memory per block, "
                      "above the %d B default limit that Kineto's occupancy call keeps",
                      q, own ? "Kineto's own number in the trace" : "Kineto's formula on the record", smem,
                      a->trace->device.smem_per_block);
    findings_number(fd, "shared_mem_bytes", smem, "B");
    findings_number(fd, "kineto_limit_bytes", a->trace->device.smem_per_block, "B");
    findings_number(fd, "kineto_pct", 0, "%");
    findings_record(fd, op);
    return 0;
}

/* A variant that never recorded a forward gets one warning saying why, and nothing else. */
static int unrecorded_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const variant_result *r = va->result;
    char text[ATTN_ERR_LEN];
    findings_text_buf(text, sizeof text, r->error);
    if (r->status == VARIANT_UNAVAILABLE) {
        findings_add(va, FK_VARIANT_UNAVAILABLE, "not run: %s", text);
        return 1;
    }
    if (r->status == VARIANT_SKIPPED) {
        findings_add(va, FK_VARIANT_SKIPPED, "skipped (cannot take this shape): %s", text);
        return 1;
    }
    if (!va->n_forwards) {
        findings_add(va, FK_NO_FORWARD, "no forward recorded: %s",
            r->error[0] ? text : "the variant failed before its forwards");
        return 1;
    }
    return 0;
}

static int op_count_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const variant_result *r = va->result;
    char buf[64];
    finding *fd;
    /* Only a variant that states its expectation (an attnprof run) can differ from it. */
    if (r->expected_ops < 0 || va->ops_per_forward == r->expected_ops)
        return 0;
    const gpu_op *ms = first_match(va, is_memset);
    const api_call *via = NULL;
    const forward *rf = rep_forward(va);
    int ms_k = -1;
    for (int i = 0; ms && rf && i < rf->n_ops; i++)
        if (rf->ops[i] == ms)
            via = rf->launchers[i], ms_k = i;
    char via_text[240] = "", whose[400] = "";
    if (via) {
        char via_name[200];
        findings_code_buf(via_name, sizeof via_name, via->name);
        snprintf(via_text, sizeof via_text, ", via %s", via_name);
    }
    const char *lib;
    const gpu_op *next;
    if (ms_k >= 0 && findings_memset_library(a->trace, rf, ms_k, &lib, &next) == 0) {
        char kn[FINDING_NAME_MAX + 8], kq[200];
        findings_short_name(next->name, kn, sizeof kn);
        findings_code_buf(kq, sizeof kq, kn);
        snprintf(whose, sizeof whose, ", issued by %s: the next launch on the same host thread is %s's %s, with "
                 "no launch between (CUPTI keeps no call stack, so the Memset is attributed by the launching "
                 "library's API window)",
                 lib, lib, kq);
    }
    if (ms && va->ops_per_forward - r->expected_ops == va->memset_per_forward) {
        fd = findings_add(va, FK_MEMSET_OUTSIDE_EXPECTATION, "observed %d GPU operations per forward where %d were expected: the extra %s %d Memset (%s%s) "
                 "outside the variant's own expectation%s",
                 va->ops_per_forward, r->expected_ops, va->memset_per_forward == 1 ? "is" : "are",
                 va->memset_per_forward, human_bytes((double)ms->bytes, buf, sizeof buf), via_text, whose);
        findings_number(fd, "memset_bytes", (double)ms->bytes, "B");
        findings_number(fd, "memsets", va->memset_per_forward, "");
        records_of(fd, va, is_memset);
    } else
        fd = findings_add(va, FK_UNEXPECTED_OP_COUNT, "observed %d GPU operations per forward where %d were expected", va->ops_per_forward,
                 r->expected_ops);
    findings_number(fd, "ops", va->ops_per_forward, "");
    findings_number(fd, "expected_ops", r->expected_ops, "");
    return 0;
}

static int hidden_memcpy_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    int n;
    double us;
    per_forward_median(va, is_memcpy, &n, &us);
    if (n <= 0)
        return 0;
    char buf[64];
    const gpu_op *m = first_match(va, is_memcpy);
    char kind[32];
    findings_text_buf(kind, sizeof kind, m->copy_kind);
    char where[600] = "";
    if (m->cpu_op_path) { /* imported: named by its CPU op, the outermost first */
        char top[128], code[200], chain[400];
        snprintf(top, sizeof top, "%.*s", (int)strcspn(m->cpu_op_path, " "), m->cpu_op_path);
        findings_code_buf(code, sizeof code, top);
        findings_text_buf(chain, sizeof chain, m->cpu_op_path);
        if (strchr(m->cpu_op_path, ' '))
            snprintf(where, sizeof where, ", hidden in %s (%s)", code, chain);
        else
            snprintf(where, sizeof where, ", from %s", code);
    }
    finding *fd = findings_add(va, FK_HIDDEN_MEMCPY, "a %s Memcpy %s inside every forward (%.1f µs, %.0f%% of CUDA time)%s",
                      human_bytes((double)m->bytes, buf, sizeof buf), kind, us, 100.0 * us / va->cuda_us.median, where);
    findings_number(fd, "bytes", (double)m->bytes, "B");
    findings_number(fd, "copies", n, "");
    findings_number(fd, "us_per_forward", us, "us");
    findings_number(fd, "pct_of_cuda_time", 100.0 * us / va->cuda_us.median, "%");
    records_of(fd, va, is_memcpy);
    return 0;
}

/* Against the previous variant of the run that recorded forwards. */
static int vs_previous_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    for (int p = vi - 1; p >= 0; p--) {
        const variant_analysis *pv = &a->v[p];
        if (!pv->n_forwards)
            continue;
        int d_ops = va->ops_per_forward - pv->ops_per_forward;
        double d_us = va->cuda_us.median - pv->cuda_us.median;
        const char *prefix = pv->memcpy_per_forward > 0 && va->memcpy_per_forward == 0 ? "no Memcpy; " : "";
        char pname[100];
        findings_text_buf(pname, sizeof pname, pv->result->name);
        finding *fd = NULL;
        if (d_ops)
            fd = findings_add(va, FK_OPS_VS_PREVIOUS, "%s%d %s operation%s than %s (%+.1f µs CUDA time per forward)",
                     prefix, abs(d_ops), d_ops < 0 ? "fewer" : "more", abs(d_ops) == 1 ? "" : "s", pname, d_us);
        else if (*prefix)
            fd = findings_add(va, FK_OPS_VS_PREVIOUS, "%sas many operations as %s (%+.1f µs)", prefix, pname, d_us);
        if (fd) {
            snprintf(fd->other, sizeof fd->other, "%s", pname);
            findings_number(fd, "ops_delta", d_ops, "");
            findings_number(fd, "cuda_us_delta", d_us, "us");
        }
        break;
    }
    return 0;
}

static int fp32_gemm_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    int n;
    double us;
    char names[640];
    finding *fd;
    per_forward_median(va, is_fp32_gemm, &n, &us);
    if (n <= 0)
        return 0;
    names_of(va, is_fp32_gemm, names, sizeof names);
    const variant_analysis *ref = analysis_find(a, "naive_inplace");
    for (int p = 0; !ref && a->run->imported && p < a->n; p++) /* imported: the first with tensor-core GEMMs */
        if (p != vi && a->v[p].n_forwards && first_match(&a->v[p], is_gemm) && !first_match(&a->v[p], is_fp32_gemm))
            ref = &a->v[p];
    int rn = 0;
    double rus = 0;
    if (ref && ref->n_forwards)
        per_forward_median(ref, is_gemm, &rn, &rus);
    char rname[100] = "";
    if (ref)
        findings_text_buf(rname, sizeof rname, ref->result->name);
    if (rn > 0 && rus > 0)
        fd = findings_add(va, FK_FP32_CUDA_CORE_GEMM, "%d GEMMs in FP32 on CUDA cores (%s): %.1f µs per forward, %.1f× the tensor-core GEMMs of "
                "%s (%.1f µs)", n, names, us, us / rus, rname, rus);
    else
        fd = findings_add(va, FK_FP32_CUDA_CORE_GEMM, "%d GEMMs in FP32 on CUDA cores (%s): %.1f µs per forward", n, names, us);
    findings_number(fd, "gemms", n, "");
    findings_number(fd, "us_per_forward", us, "us");
    if (rn > 0 && rus > 0) {
        findings_number(fd, "tensor_core_gemm_us", rus, "us");
        findings_number(fd, "ratio", us / rus, "x");
    }
    records_of(fd, va, is_fp32_gemm);
    return 0;
}

/* The mask rebuild, the safe-softmax checks and the single fused kernel: what the
 * representative forward's kernels say about the variant's attention. */
static int mask_rebuild_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    int n;
    double us;
    char names[640];
    per_forward_median(va, is_mask_build, &n, &us);
    if (n <= 0)
        return 0;
    names_of(va, is_mask_build, names, sizeof names);
    finding *fd = findings_add(va, FK_MASK_REBUILD, "the causal mask is rebuilt in every forward: %d kernels (%s), %.1f µs", n, names, us);
    findings_number(fd, "kernels", n, "");
    findings_number(fd, "us_per_forward", us, "us");
    records_of(fd, va, is_mask_build);
    return 0;
}

static int safe_softmax_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    int n;
    double us;
    char names[640];
    finding *fd;
    per_forward_median(va, is_safe_check, &n, &us);
    if (n <= 0)
        return 0;
    names_of(va, is_safe_check, names, sizeof names);
    if (first_match(va, aten_safe_check))
        fd = findings_add(va, FK_SAFE_SOFTMAX, "safe softmax (\x01" "aten::_safe_softmax\x02): %d extra kernels per forward (%s) replace NaN rows by 0, "
                "%.1f µs", n, names, us);
    else
        fd = findings_add(va, FK_SAFE_SOFTMAX, "safe softmax: %d extra kernels per forward (%s) replace NaN rows by 0, %.1f µs", n, names, us);
    findings_number(fd, "kernels", n, "");
    findings_number(fd, "us_per_forward", us, "us");
    records_of(fd, va, is_safe_check);
    return 0;
}

static int fused_kernel_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    int n;
    double us;
    per_forward_median(va, is_kernel, &n, &us);
    if (n != 1 || va->ops_per_forward > 2)
        return 0;
    const gpu_op *k = first_match(va, is_kernel);
    char shortname[256], names[640];
    short_kernel_name(k->name, shortname, sizeof shortname);
    findings_code_buf(names, sizeof names, shortname);
    finding *fd = findings_add(va, FK_FUSED_KERNEL, "one fused kernel %s (%.1f µs; %d regs/thread, %d B shared memory per block)", names, us,
        k->registers, k->static_smem + k->dynamic_smem);
    findings_number(fd, "us_per_forward", us, "us");
    findings_number(fd, "registers", k->registers, "");
    findings_number(fd, "shared_mem_bytes", k->static_smem + k->dynamic_smem, "B");
    findings_record(fd, k);
    return 0;
}

static int head_dim_padding_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    /* A head dim with no kernel of its own ran on a larger one: the time above
     * includes tensor-core work on zero columns. */
    const attn_fact *padding = fact(va->result, "head_dim_padding");
    if (!padding)
        return 0;
    char text[ATTN_ERR_LEN];
    findings_text_buf(text, sizeof text, padding->value);
    finding *fd = findings_add(va, FK_HEAD_DIM_PADDING, "head dim padded: %s", text);
    findings_number(fd, "value", padding->number, "");
    return 0;
}

static int host_bound_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    /* A model trace's CPU-bound step is said by model_findings.c, with its own numbers. */
    if (va->cpu_us.median > va->cuda_us.median && !findings_model_trace(a, va)) {
        finding *fd = findings_add(va, FK_HOST_BOUND, "host time per forward (%.1f µs) exceeds GPU time (%.1f µs): the cost moved to the CPU",
            va->cpu_us.median, va->cuda_us.median);
        findings_number(fd, "cpu_us", va->cpu_us.median, "us");
        findings_number(fd, "cuda_us", va->cuda_us.median, "us");
    }
    return 0;
}

static int plan_cost_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const variant_result *r = va->result;
    finding *fd;
    const attn_fact *plan = fact(r, "plan_build_us"), *graph = fact(r, "graph_build_us");
    const attn_fact *heur = fact(r, "heuristics_us"), *replan = fact(r, "replan");
    if (!plan || !isfinite(plan->number))
        return 0;
    double g = graph && isfinite(graph->number) ? graph->number : 0;
    double h = heur && isfinite(heur->number) ? heur->number : 0;
    if (replan && replan->number > 0) {
        fd = findings_add(va, FK_PLAN_CPU_COST, "plan rebuilt in every forward (--cudnn-replan): %.0f µs host time per forward, against a "
                "one-off %.0f µs (graph %.0f + heuristics %.0f + plan %.0f µs) when built once",
            va->cpu_us.median, g + h + plan->number, g, h, plan->number);
        fd->severity = FINDING_NOTICE; /* a cost paid in every forward, not once */
    } else
        fd = findings_add(va, FK_PLAN_CPU_COST, "one-off cost %.1f ms in setup (graph %.1f + heuristics %.1f + plan build %.1f ms) vs %.1f µs "
                "host time per forward",
            (g + h + plan->number) / 1000, g / 1000, h / 1000, plan->number / 1000, va->cpu_us.median);
    findings_number(fd, "setup_us", g + h + plan->number, "us");
    findings_number(fd, "plan_build_us", plan->number, "us");
    findings_number(fd, "cpu_us_per_forward", va->cpu_us.median, "us");
    findings_number(fd, "replan", replan && replan->number > 0, "");
    return 0;
}

/* Fully-masked rows, dropped CUPTI records and throttled forwards: what the run's
 * own facts and samples say about how far its numbers can be trusted. */
static int fully_masked_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const attn_fact *fm = fact(va->result, "fully_masked_rows");
    if (!fm)
        return 0;
    char text[ATTN_ERR_LEN];
    findings_text_buf(text, sizeof text, fm->value);
    finding *fd = findings_add(va, FK_FULLY_MASKED_ROWS, "fully-masked rows → %s", text);
    findings_number(fd, "value", fm->number, "");
    return 0;
}

static int dropped_records_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const variant_result *r = va->result;
    if (r->dropped_records <= 0)
        return 0;
    finding *fd = findings_add(va, FK_DROPPED_RECORDS, "CUPTI dropped %lld records: counts above may be incomplete", (long long)r->dropped_records);
    findings_number(fd, "records", (double)r->dropped_records, "");
    return 0;
}

static int throttled_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    int throttled = va->all_throttled ? va->n_forwards : va->n_throttled;
    if (!a->throttle_judged || throttled <= 0)
        return 0;
    char why[256]; /* measurement_text.c words it for every writer */
    measurement_throttle_text(a, va, why, sizeof why);
    finding *fd = findings_add(va, FK_THROTTLED_FORWARDS, "%s", why);
    findings_number(fd, "throttled", throttled, "");
    findings_number(fd, "forwards", va->n_forwards + va->n_throttled, "");
    findings_number(fd, "throttle_fraction", a->throttle_fraction, "");
    findings_number(fd, "max_sm_mhz", a->max_sm_mhz, "MHz");
    return 0;
}

int findings_model_trace(const analysis *a, const variant_analysis *va)
{
    if (!a->run->imported || va->n_forwards < 1)
        return 0;
    for (int s = 0; s < va->n_forwards; s++)
        for (int k = 0; k < va->forwards[s].n_ops; k++)
            if (va->forwards[s].ops[k]->cpu_op_path || (va->forwards[s].launchers && va->forwards[s].launchers[k] &&
                                                         strstr(va->forwards[s].launchers[k]->name, "GraphLaunch")))
                return 1; /* a model's op chain, or its work replayed from a CUDA graph */
    return 0;
}

static int model_trace_findings(analysis *a, int vi)
{
    model_findings_derive(a, &a->v[vi]);
    return 0;
}

/* ---- the finding table --------------------------------------------------------- */

#define ROW(kind, id, sev, needs, rank, derive, phrase) [kind] = {kind, id, sev, needs, rank, derive, phrase}
#define NO_RANK {NULL, NULL, NULL}
#define BY_US(key) {key, NULL, NULL}
#define BY_SHARE(key) {NULL, key, NULL}
#define BY_DEPARTURE(key) {NULL, NULL, key}

/* One row per kind of finding, in the order a variant's section lists them (the
 * derive order). Severity: warning where the records may be incomplete or the
 * variant did not run, notice for a cost worth knowing, info for what the records
 * show. */
const finding_row finding_table[FK_COUNT] = {
    ROW(FK_VARIANT_UNAVAILABLE, "variant_unavailable", FINDING_WARNING, "", NO_RANK, unrecorded_finding,
        "not run on this machine"),
    ROW(FK_VARIANT_SKIPPED, "variant_skipped", FINDING_WARNING, "", NO_RANK, NULL, "skipped: cannot take this shape"),
    ROW(FK_NO_FORWARD, "no_forward", FINDING_WARNING, "", NO_RANK, NULL, "no forward recorded"),
    ROW(FK_MEMSET_OUTSIDE_EXPECTATION, "memset_outside_expectation", FINDING_NOTICE, "expected_ops", NO_RANK,
        op_count_finding, "{memsets} unexpected Memset of {memset_bytes}"),
    ROW(FK_UNEXPECTED_OP_COUNT, "unexpected_op_count", FINDING_NOTICE, "expected_ops", NO_RANK, NULL,
        "{ops} GPU operations, {expected_ops} expected"),
    ROW(FK_HIDDEN_MEMCPY, "hidden_memcpy", FINDING_NOTICE, "", BY_US("us_per_forward"), hidden_memcpy_finding,
        "hidden {bytes} Memcpy, {pct_of_cuda_time} of CUDA time"),
    ROW(FK_OPS_VS_PREVIOUS, "ops_vs_previous", FINDING_INFO, "", NO_RANK, vs_previous_finding,
        "{ops_delta:+} ops, {cuda_us_delta:+} vs {@other}"),
    ROW(FK_FP32_CUDA_CORE_GEMM, "fp32_cuda_core_gemm", FINDING_NOTICE, "", BY_US("us_per_forward"), fp32_gemm_finding,
        "{gemms} FP32 CUDA-core GEMMs[, {ratio} tensor-core time]"),
    ROW(FK_MASK_REBUILD, "mask_rebuild", FINDING_NOTICE, "", BY_US("us_per_forward"), mask_rebuild_finding,
        "causal mask rebuilt: {kernels} kernels, {us_per_forward}"),
    ROW(FK_SAFE_SOFTMAX, "safe_softmax", FINDING_INFO, "", BY_US("us_per_forward"), safe_softmax_finding,
        "safe softmax: {kernels} extra kernels, {us_per_forward}"),
    ROW(FK_FUSED_KERNEL, "fused_kernel", FINDING_INFO, "", BY_US("us_per_forward"), fused_kernel_finding,
        "one fused kernel, {us_per_forward}"),
    ROW(FK_KINETO_ZERO_OCCUPANCY, "kineto_zero_occupancy", FINDING_NOTICE, "device.sharedMemPerBlock", NO_RANK,
        kineto_zero_finding, "Kineto occupancy 0%: {shared_mem_bytes} shared memory"),
    ROW(FK_HEAD_DIM_PADDING, "head_dim_padding", FINDING_NOTICE, "facts.head_dim_padding", NO_RANK,
        head_dim_padding_finding, "head dim padded to a larger kernel"),
    ROW(FK_LAUNCH_API, "launch_api", FINDING_INFO, "", NO_RANK, launch_finding,
        "launch to GPU start[ {launch_to_start_us}]"),
    ROW(FK_HOST_BOUND, "host_bound", FINDING_NOTICE, "", NO_RANK, host_bound_finding,
        "host-bound: {cpu_us} host, {cuda_us} GPU"),
    /* info when the plan is built once; a notice when rebuilt in every forward */
    ROW(FK_PLAN_CPU_COST, "plan_cpu_cost", FINDING_INFO, "facts.plan_build_us", NO_RANK, plan_cost_finding,
        "cuDNN plan: {setup_us} setup, {cpu_us_per_forward} per forward"),
    ROW(FK_FULLY_MASKED_ROWS, "fully_masked_rows", FINDING_INFO, "facts.fully_masked_rows", NO_RANK,
        fully_masked_finding, "fully-masked rows checked"),
    ROW(FK_DROPPED_RECORDS, "dropped_records", FINDING_WARNING, "", NO_RANK, dropped_records_finding,
        "CUPTI dropped {records} records"),
    ROW(FK_THROTTLED_FORWARDS, "throttled_forwards", FINDING_WARNING, "measurement.throttle_fraction,samples",
        NO_RANK, throttled_finding, "{throttled} of {forwards} forwards throttled"),
    /* a model trace's, derived by model_findings_derive in this order */
    ROW(FK_ATTENTION_SHARE, "attention_share", FINDING_INFO, "", BY_SHARE("share"), model_trace_findings,
        "attention {share:pct} of the step's CUDA time"),
    ROW(FK_MATH_FALLBACK, "math_fallback", FINDING_NOTICE, "", BY_US("us_per_step"), NULL,
        "SDPA math fallback, {us_per_step} per step"),
    ROW(FK_EAGER_SCORES, "eager_scores", FINDING_NOTICE, "facts.attn_inputs", NO_RANK, NULL,
        "eager scores: {bytes_per_layer} per layer"),
    /* a notice from 1% of the step's CUDA time on, info below */
    ROW(FK_KERNEL_ARCH, "kernel_arch", FINDING_NOTICE, "device.computeMajor", BY_US("us_per_step"), NULL,
        "{kernels} kernels built for sm_{kernel_sm}, {us_per_step}"),
    ROW(FK_FP32_CUDA_CORE_16BIT, "fp32_cuda_core_16bit", FINDING_NOTICE, "facts.fp32_core_inputs", NO_RANK, NULL,
        "{kernels_16bit} FP32 CUDA-core kernels on 16-bit inputs"),
    ROW(FK_FP32_CUDA_CORE_INPUTS, "fp32_cuda_core_inputs", FINDING_INFO, "facts.fp32_core_inputs", NO_RANK, NULL,
        "FP32 CUDA-core kernels given fp32 inputs"),
    ROW(FK_HOST_COPIES, "host_copies", FINDING_NOTICE, "", BY_US("us_per_step"), NULL,
        "{copies} host–device copies, {host_syncs} host syncs"),
    ROW(FK_SDPA_INPUT_CONVERSION, "sdpa_input_conversion", FINDING_INFO, "", BY_US("us_per_step"), NULL,
        "SDPA converts its inputs: {ops_per_step} ops, {us_per_step}"),
    ROW(FK_ATTENTION_INPUTS_FUSED, "attention_inputs_fused", FINDING_INFO, "", BY_US("us_per_step"), NULL,
        "{ops_per_step} fused kernels feed SDPA, {us_per_step}"),
    ROW(FK_GQA_EXPANSION, "gqa_expansion", FINDING_NOTICE, "facts.attn_inputs", BY_US("us_per_step"), NULL,
        "GQA by copies: {kv_heads} KV heads, {bytes_per_step} per step"),
    /* host-bound is measured: the GPU idling for launches (model_findings.c, pace_finding) */
    ROW(FK_CPU_BOUND_STEP, "cpu_bound_step", FINDING_NOTICE, "", NO_RANK, NULL,
        "host-bound step: GPU waits for launches {launch_gap_share:pct}"),
    ROW(FK_HOST_WAITS, "host_waits", FINDING_INFO, "", NO_RANK, NULL,
        "GPU-bound: the host waits {host_wait_us} per step"),
    /* the counters against the prediction, derived by predict_derive (predict.c) */
    /* a warning: the roof or the counters are wrong, not the kernel */
    ROW(FK_ROOF_SHARE_INCONSISTENT, "roof_share_inconsistent", FINDING_WARNING, "counters", NO_RANK, predict_derive,
        "counters inconsistent: {compute_share:pct} of compute roof"),
    ROW(FK_PREDICTION_MISSED, "prediction_missed", FINDING_NOTICE, "counters", BY_DEPARTURE("departure"), NULL,
        "prediction missed[ by {departure:pct+}]"),
    ROW(FK_FP32_PIPE_MATH, "fp32_pipe_math", FINDING_NOTICE, "counters", NO_RANK, NULL,
        "{fp32_gflop:.3} GFLOP on the FP32 pipes"),
    ROW(FK_MEMCPY_BANDWIDTH, "memcpy_bandwidth", FINDING_NOTICE, "counters", NO_RANK, NULL,
        "Memcpy DtoD at {tbps:.2} TB/s"),
    /* a sweep's, derived over the whole sweep by sweep_derive (sweep_findings.c) */
    ROW(FK_SWEEP_CROSSOVER, "sweep_crossover", FINDING_INFO, "", NO_RANK, NULL,
        "{@subject} beats {@other} from S = {seq}"),
    ROW(FK_SWEEP_MEMORY_WALL, "sweep_memory_wall", FINDING_INFO, "", NO_RANK, NULL,
        "{@subject} out of memory at S = {seq}"),
    ROW(FK_SWEEP_BEST_TFLOPS, "sweep_best_tflops", FINDING_INFO, "", NO_RANK, NULL,
        "{@subject} best {tflops:.0} TFLOP/s"),
    ROW(FK_SWEEP_GPU_DIFFERS, "sweep_gpu_differs", FINDING_INFO, "", NO_RANK, NULL,
        "GPU {@other} {ratio:.3} for {@subject}"),
    ROW(FK_SWEEP_GPU_AGREES, "sweep_gpu_agrees", FINDING_INFO, "", NO_RANK, NULL,
        "GPU {@other} agrees ({variants} variants)"),
    ROW(FK_SWEEP_SCALING, "sweep_scaling", FINDING_INFO, "", NO_RANK, NULL,
        "{@subject} time grows as S^{exponent:.2}"),
    ROW(FK_SWEEP_OPS_CHANGE, "sweep_ops_change", FINDING_INFO, "", NO_RANK, NULL,
        "{@subject}: {ops_from} to {ops_to} operations at S = {seq}"),
};

void findings_derive(analysis *a)
{
    for (int i = 0; i < a->n; i++)
        a->v[i].n_findings = 0;
    findings_walk(a, FK_VARIANT_UNAVAILABLE, FK_HOST_WAITS);
}
