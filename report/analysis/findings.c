/* The series' findings (findings.h) and the finding table (finding.h): each derive
 * function reads a finished analysis and adds the findings of its row, its numbers and
 * the records behind them; the table names every kind of finding once, with its
 * severity, the facts it needs, how it ranks and its phrase. */
#include "units.h"
#include "findings.h"
#include "measurement_text.h"
#include "backward_findings.h"
#include "model_findings.h"
#include "model_roles.h"
#include "op_role.h"
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
        fd = findings_add(va, FK_LAUNCH_API, "kernels per %s by launch API: %s%s", model_unit_word(va), list, lat_text);
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
    finding *fd = findings_add(va, FK_HIDDEN_MEMCPY, "a %s Memcpy %s inside every %s (%.1f µs, %.0f%% of CUDA time)%s",
                      human_bytes((double)m->bytes, buf, sizeof buf), kind, model_unit_word(va), us, 100.0 * us / va->cuda_us.median, where);
    findings_number(fd, "bytes", (double)m->bytes, "B");
    findings_number(fd, "copies", n, "");
    findings_number(fd, "us_per_forward", us, "us");
    findings_number(fd, "pct_of_cuda_time", 100.0 * us / va->cuda_us.median, "%");
    records_of(fd, va, is_memcpy);
    return 0;
}

/* Against the previous variant of the run that recorded forwards, when both are variants of
 * one series (attention forwards): two model traces side by side are different models or
 * programs, whose operation counts say nothing about each other (the Model section's
 * side-by-side role table compares them). */
static int vs_previous_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    if (model_is_step_trace(va))
        return 0;
    for (int p = vi - 1; p >= 0; p--) {
        const variant_analysis *pv = &a->v[p];
        if (!pv->n_forwards)
            continue;
        if (model_is_step_trace(pv))
            break;
        int d_ops = va->ops_per_forward - pv->ops_per_forward;
        double d_us = va->cuda_us.median - pv->cuda_us.median;
        const char *prefix = pv->memcpy_per_forward > 0 && va->memcpy_per_forward == 0 ? "no Memcpy; " : "";
        char pname[100], word[24];
        findings_text_buf(pname, sizeof pname, pv->result->name);
        finding *fd = NULL;
        if (d_ops)
            fd = findings_add(va, FK_OPS_VS_PREVIOUS, "%s%d %s %s than %s (%+.1f µs CUDA time per forward)",
                     prefix, abs(d_ops), d_ops < 0 ? "fewer" : "more", units_plural(abs(d_ops), "operation", word, sizeof word),
                     pname, d_us);
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
    char gemms[48];
    units_count_noun(n, "GEMM", gemms, sizeof gemms);
    if (rn > 0 && rus > 0)
        fd = findings_add(va, FK_FP32_CUDA_CORE_GEMM, "%s in FP32 on CUDA cores (%s): %.1f µs per %s, %.1f× the tensor-core GEMMs of "
                "%s (%.1f µs)", gemms, names, us, model_unit_word(va), us / rus, rname, rus);
    else
        fd = findings_add(va, FK_FP32_CUDA_CORE_GEMM, "%s in FP32 on CUDA cores (%s): %.1f µs per %s", gemms, names, us,
                          model_unit_word(va));
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
    char names[640], count[48];
    per_forward_median(va, is_mask_build, &n, &us);
    if (n <= 0)
        return 0;
    names_of(va, is_mask_build, names, sizeof names);
    finding *fd = findings_add(va, FK_MASK_REBUILD, "the causal mask is rebuilt in every %s: %s (%s), %.1f µs", model_unit_word(va),
                               units_count_noun(n, "kernel", count, sizeof count), names, us);
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
    char names[640], count[48];
    finding *fd;
    per_forward_median(va, is_safe_check, &n, &us);
    if (n <= 0)
        return 0;
    names_of(va, is_safe_check, names, sizeof names);
    if (first_match(va, aten_safe_check))
        fd = findings_add(va, FK_SAFE_SOFTMAX, "safe softmax (\x01" "aten::_safe_softmax\x02): %s per %s (%s) replace NaN rows by 0, "
                "%.1f µs", units_count_noun(n, "extra kernel", count, sizeof count), model_unit_word(va), names, us);
    else
        fd = findings_add(va, FK_SAFE_SOFTMAX, "safe softmax: %s per %s (%s) replace NaN rows by 0, %.1f µs",
                          units_count_noun(n, "extra kernel", count, sizeof count), model_unit_word(va), names, us);
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

static int is_decode_combine(const gpu_op *o) { return o->kind == GPU_KERNEL && strstr(o->name, "decode_combine"); }

/* A split-KV decode (the recorder's split_count fact): how its keys were cut, on which grid, and
 * what merging the splits' partial softmaxes cost: the combine kernel's time per forward and its
 * share of the variant's CUDA time, or, where no combine kernel ran (the balanced grid, the fixed grid's
 * kernel that merges its own splits, one split), no such numbers and merged_in_kernel saying which. An
 * archive without the decode_grid fact predates the balanced grid: its grid was the fixed one. */
static int decode_split_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const attn_fact *split = fact(va->result, "split_count"), *grid = fact(va->result, "decode_grid");
    if (!split || !isfinite(split->number) || !(va->cuda_us.median > 0))
        return 0;
    const int balanced = grid && !strncmp(grid->value, "balanced", 8);
    /* The fixed grid whose kernel merges its own splits (the TMA ring): its decode_grid fact says so. */
    const int merged_in_kernel = !balanced && grid && strstr(grid->value, "last block");
    int n;
    double us;
    per_forward_median(va, is_decode_combine, &n, &us);
    char how[200], cost[120];
    if (balanced)
        snprintf(how, sizeof how, "on the balanced grid: every tile's keys cut into at most %.0f pieces over one "
                 "block per resident slot, merged inside the kernel", split->number);
    else
        snprintf(how, sizeof how, "on the fixed grid: %.0f split%s per row tile%s", split->number,
                 split->number == 1 ? "" : "s",
                 merged_in_kernel && split->number > 1 ? ", merged by each tile's last block inside the split kernel"
                                                       : "");
    /* No combine kernel, no combine time: the sentence and the numbers say so rather than 0 µs. */
    if (n > 0)
        snprintf(cost, sizeof cost, "; the combine kernel %.1f µs per forward, %.1f%% of CUDA time", us,
                 100.0 * us / va->cuda_us.median);
    else
        snprintf(cost, sizeof cost, " (no combine kernel)");
    finding *fd = findings_add(va, FK_DECODE_SPLIT, "split-KV decode %s%s", how, cost);
    findings_number(fd, "splits", split->number, "");
    findings_number(fd, "combine_kernels", n, "");
    if (n > 0) {
        findings_number(fd, "combine_us", us, "us");
        findings_number(fd, "combine_pct", 100.0 * us / va->cuda_us.median, "%");
    }
    findings_number(fd, "merged_in_kernel", n == 0 && (balanced || merged_in_kernel) && split->number > 1, "");
    findings_number(fd, "balanced", balanced, "");
    return 0;
}

/* Grouped-query K/V expanded by copies (naive and in-place as PyTorch's eager repeat_kv, math as its
 * enable_gqa repeat_interleave): the copy kernels per forward, the bytes they write (the recorder's
 * kv_expansion_bytes fact, where it has one), their time and share of the variant's CUDA time. A
 * native GQA kernel (efficient, flash, cuDNN) reads each K/V head in place and launches none. */
static int kv_expansion_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    int n;
    double us;
    per_forward_median(va, op_expands_kv, &n, &us);
    if (n <= 0)
        return 0;
    const attn_shape *s = &a->run->shape;
    const attn_fact *bytes = fact(va->result, "kv_expansion_bytes");
    const double b = bytes && isfinite(bytes->number) ? bytes->number : NAN;
    const double pct = va->cuda_us.median > 0 ? 100.0 * us / va->cuda_us.median : NAN;
    char names[640], count[48], written[64] = "", heads[96] = "", share[48] = "";
    names_of(va, op_expands_kv, names, sizeof names);
    if (isfinite(b)) {
        char hb[32];
        human_bytes(b, hb, sizeof hb);
        snprintf(written, sizeof written, " write %s", hb);
    }
    if (s->heads > 0 && attn_shape_is_gqa(s))
        snprintf(heads, sizeof heads, " (%d K/V heads repeated to %d query heads)", attn_kv_heads(s), s->heads);
    if (isfinite(pct))
        snprintf(share, sizeof share, ", %.1f%% of CUDA time", pct);
    finding *fd = findings_add(va, FK_KV_EXPANSION, "K/V expanded by copies: %s per %s (%s)%s%s, %.1f µs%s; a native "
                               "grouped-query kernel reads each K/V head in place", units_count_noun(n, "copy kernel", count,
                               sizeof count), model_unit_word(va), names, written, heads, us, share);
    findings_number(fd, "copies", n, "");
    findings_number(fd, "bytes", b, "B");
    findings_number(fd, "us_per_forward", us, "us");
    findings_number(fd, "pct_of_cuda_time", pct, "%");
    if (attn_shape_is_gqa(s)) {
        findings_number(fd, "kv_heads", attn_kv_heads(s), "");
        findings_number(fd, "heads", s->heads, "");
    }
    records_of(fd, va, op_expands_kv);
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

/* Samples outside physical bounds: dropped from the throttle rule and the clock
 * range, and said, so that a reader knows the rule judged the others without them. */
static int implausible_samples_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    if (va->n_implausible <= 0)
        return 0;
    int forwards = va->all_throttled ? va->n_forwards : va->n_forwards + va->n_throttled;
    finding *fd;
    if (a->clock_limit_mhz > 0)
        fd = findings_add(va, FK_IMPLAUSIBLE_SAMPLES, "%d of %d forwards' NVML samples are outside physical bounds "
                          "(an SM clock above %d MHz, 10%% over the GPU's maximum in run.json, or a negative or "
                          "absurd value): dropped, their clocks judge no forward throttled",
                          va->n_implausible, forwards, a->clock_limit_mhz);
    else
        fd = findings_add(va, FK_IMPLAUSIBLE_SAMPLES, "%d of %d forwards' NVML samples are outside physical bounds "
                          "(a negative or absurd value): dropped, their clocks judge no forward throttled",
                          va->n_implausible, forwards);
    findings_number(fd, "dropped", va->n_implausible, "");
    findings_number(fd, "forwards", forwards, "");
    findings_number(fd, "clock_limit_mhz", a->clock_limit_mhz, "MHz");
    return 0;
}

static int model_trace_findings(analysis *a, int vi)
{
    model_findings_derive(a, &a->v[vi]);
    return 0;
}

/* ---- the finding table --------------------------------------------------------- */

/* The derive column of the finding table (finding.c): for each kind, the function that adds
 * the findings of its kind (and of the kinds after it that have none: one function can decide
 * between kinds); NULL for a kind derived by an earlier one or over a whole sweep. Apart from
 * the table so that the engine (finding.c) calls nothing of the rules here. */
static const finding_derive_fn finding_derives[FK_COUNT] = {
    [FK_VARIANT_UNAVAILABLE] = unrecorded_finding,
    [FK_MEMSET_OUTSIDE_EXPECTATION] = op_count_finding,
    [FK_HIDDEN_MEMCPY] = hidden_memcpy_finding,
    [FK_OPS_VS_PREVIOUS] = vs_previous_finding,
    [FK_FP32_CUDA_CORE_GEMM] = fp32_gemm_finding,
    [FK_MASK_REBUILD] = mask_rebuild_finding,
    [FK_SAFE_SOFTMAX] = safe_softmax_finding,
    [FK_FUSED_KERNEL] = fused_kernel_finding,
    [FK_DECODE_SPLIT] = decode_split_finding,
    [FK_KV_EXPANSION] = kv_expansion_finding,
    [FK_DECODE_BANDWIDTH] = decode_bandwidth_finding,
    [FK_KINETO_ZERO_OCCUPANCY] = kineto_zero_finding,
    [FK_HEAD_DIM_PADDING] = head_dim_padding_finding,
    [FK_LAUNCH_API] = launch_finding,
    [FK_HOST_BOUND] = host_bound_finding,
    [FK_PLAN_CPU_COST] = plan_cost_finding,
    [FK_FULLY_MASKED_ROWS] = fully_masked_finding,
    [FK_DROPPED_RECORDS] = dropped_records_finding,
    [FK_THROTTLED_FORWARDS] = throttled_finding,
    [FK_IMPLAUSIBLE_SAMPLES] = implausible_samples_finding,
    [FK_ATTENTION_SHARE] = model_trace_findings,
    [FK_BWD_MEMSET_OUTSIDE_EXPECTATION] = backward_findings_derive,
    [FK_ROOF_SHARE_INCONSISTENT] = predict_derive,
};

int finding_has_derive(finding_kind kind) { return kind >= 0 && kind < FK_COUNT && finding_derives[kind]; }

void findings_walk(analysis *a, finding_kind first, finding_kind last)
{
    for (int vi = 0; vi < a->n; vi++) {
        variant_analysis *va = &a->v[vi];
        for (int k = (int)first; k <= (int)last; k++) {
            if (!finding_derives[k])
                continue;
            int from = va->n_findings;
            int stop = finding_derives[k](a, vi);
            for (int i = from; i < va->n_findings; i++)
                finding_finish(&va->meta[i], va->cuda_us.median);
            if (stop)
                break;
        }
    }
}


void findings_derive(analysis *a)
{
    for (int i = 0; i < a->n; i++)
        a->v[i].n_findings = 0;
    findings_walk(a, FK_VARIANT_UNAVAILABLE, FK_BWD_ROOFLINE);
}

void predict_findings(analysis *a)
{
    if (a->run->counters.meta.status != CTR_OK)
        return;
    findings_walk(a, FK_ROOF_SHARE_INCONSISTENT, FK_MEMCPY_BANDWIDTH);
}
