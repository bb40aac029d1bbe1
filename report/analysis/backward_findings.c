/* The backward's findings (backward_findings.h). Each reads the variant's recorded backwards
 * (the attn_bwd ranges, analysis.h) and run.json's "backward" object; the representative
 * backward is the median one, as the forward's is. Shares are of the variant's CUDA time per
 * backward (its GPU operations' durations summed, the median over backwards). */
#include "backward_findings.h"

#include "alloc.h"
#include "counters.h"
#include "finding.h"
#include "findings.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const forward *rep_backward(const variant_analysis *va)
{
    int i = analysis_median_backward(va);
    return i < 0 ? NULL : &va->backwards[i];
}

/* Median over backwards of the count and summed µs of the ops matching pred. */
static void per_backward_median(const variant_analysis *va, op_predicate pred, int *count, double *us)
{
    int n = va->n_backwards;
    double *c = calloc((size_t)(n ? n : 1), sizeof(double)), *t = calloc((size_t)(n ? n : 1), sizeof(double));
    if (!c || !t)
        attn_oom();
    for (int i = 0; i < n; i++)
        for (int k = 0; k < va->backwards[i].n_ops; k++) {
            const gpu_op *o = va->backwards[i].ops[k];
            if (pred(o)) {
                c[i] += 1;
                t[i] += (double)(o->end_ns - o->start_ns) / 1000.0;
            }
        }
    stats sc = stats_of(c, n), st = stats_of(t, n);
    *count = n ? (int)lround(sc.median) : 0;
    *us = n ? st.median : 0;
    free(c);
    free(t);
}

/* The kernel's identifier without its template arguments contains needle (case-insensitive):
 * "attnprof_bwd_tc_lse<64, true>" has "lse", "kernel<false>" has not. */
static int ident_has(const gpu_op *o, const char *needle)
{
    if (o->kind != GPU_KERNEL || !o->name)
        return 0;
    char s[512];
    short_kernel_name(o->name, s, sizeof s);
    s[strcspn(s, "<")] = '\0';
    return strcasestr(s, needle) != NULL;
}

static int is_memcpy(const gpu_op *o) { return o->kind == GPU_MEMCPY; }
static int is_memset(const gpu_op *o) { return o->kind == GPU_MEMSET; }
static int is_fp32_gemm(const gpu_op *o)
{
    return o->kind == GPU_KERNEL && classify_op(o) == OPC_GEMM && gemm_on_cuda_cores(o->name);
}
static int is_gemm(const gpu_op *o) { return o->kind == GPU_KERNEL && classify_op(o) == OPC_GEMM; }
/* The pass that turns an FP32 dQ accumulator into the 16-bit dQ: ours (attnprof_bwd_tc_dq_convert),
 * cuDNN's (convert_dq_to_16bits), FlashAttention-2's (flash_bwd_convert_dq_kernel), FA3's
 * (…ConvertdQ). */
static int is_dq_convert(const gpu_op *o)
{
    return ident_has(o, "dq_convert") || ident_has(o, "convert_dq") || ident_has(o, "convertdq");
}
/* A kernel that recomputes the log-sum-exp the forward did not keep. */
static int is_lse_kernel(const gpu_op *o) { return ident_has(o, "lse"); }
/* The pre-pass delta = rowsum(dO∘O): ours (attnprof_bwd_tc_delta), cuDNN's (compute_dot_do_o),
 * FlashAttention-2's (flash_bwd_dot_do_o_kernel). */
static int is_delta_pass(const gpu_op *o) { return ident_has(o, "dot_do_o") || ident_has(o, "_delta"); }

/* The first op of the representative backward that matches, and the quoted short names of the
 * distinct ones, comma-separated. */
static const gpu_op *first_of(const forward *b, op_predicate pred)
{
    for (int k = 0; b && k < b->n_ops; k++)
        if (pred(b->ops[k]))
            return b->ops[k];
    return NULL;
}

static void names_of(const forward *b, op_predicate pred, char *out, size_t n)
{
    out[0] = '\0';
    for (int k = 0; b && k < b->n_ops; k++) {
        if (!pred(b->ops[k]))
            continue;
        char s[FINDING_NAME_MAX + 8], code[200];
        findings_short_name(b->ops[k]->name, s, sizeof s);
        findings_code_buf(code, sizeof code, s);
        if (strstr(out, code))
            continue;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? ", " : "", code);
    }
}

static void records_of(finding *fd, const forward *b, op_predicate pred)
{
    for (int k = 0; b && k < b->n_ops; k++)
        if (pred(b->ops[k]))
            findings_record(fd, b->ops[k]);
}

static double pct(double us, double of) { return of > 0 ? 100.0 * us / of : NAN; }

/* Operations per backward against the variant's prediction: a Memset beyond it is named (a
 * library's workspace fill: cuBLAS zeroes 4 bytes before some GEMMs), anything else is a
 * miscount of the prediction or of the records. */
static void op_count(variant_analysis *va, const forward *rb)
{
    const backward_result *b = &va->result->bwd;
    int want = b->expected_ops, got = va->ops_per_backward;
    if (want < 0 || got == want)
        return;
    finding *fd;
    if (got > want && got - want <= va->memset_per_backward) {
        int extra = got - want;
        double bytes = 0;
        const gpu_op *next = NULL;
        for (int k = 0; rb && k < rb->n_ops; k++)
            if (rb->ops[k]->kind == GPU_MEMSET) {
                bytes += (double)rb->ops[k]->bytes;
                for (int j = k + 1; j < rb->n_ops && !next; j++)
                    if (rb->ops[j]->kind == GPU_KERNEL)
                        next = rb->ops[j];
            }
        char human[32], after[240] = "";
        if (next) {
            char s[FINDING_NAME_MAX + 8], code[200];
            findings_short_name(next->name, s, sizeof s);
            findings_code_buf(code, sizeof code, s);
            snprintf(after, sizeof after, ", just before %s", code);
        }
        fd = findings_add(va, FK_BWD_MEMSET_OUTSIDE_EXPECTATION,
                          "backward: %d GPU operations per backward where the variant predicts %d: %d Memset%s of %s in "
                          "all%s, a library's workspace fill, beyond the prediction; the other %d operations (%d "
                          "kernel%s) are as many as predicted", got, want, extra, extra == 1 ? "" : "s",
                          human_bytes(bytes, human, sizeof human), after, got - extra, va->kernels_per_backward,
                          va->kernels_per_backward == 1 ? "" : "s");
        findings_number(fd, "memsets", extra, "");
        findings_number(fd, "memset_bytes", bytes, "B");
        records_of(fd, rb, is_memset);
    } else
        fd = findings_add(va, FK_BWD_UNEXPECTED_OP_COUNT,
                          "backward: %d GPU operations per backward (%d kernels, %d Memcpy, %d Memset) where the "
                          "variant predicts %d", got, va->kernels_per_backward, va->memcpy_per_backward,
                          va->memset_per_backward, want);
    findings_number(fd, "ops", got, "");
    findings_number(fd, "expected_ops", want, "");
}

static void hidden_memcpy(variant_analysis *va, const forward *rb, double bwd_us)
{
    int n;
    double us;
    per_backward_median(va, is_memcpy, &n, &us);
    const gpu_op *m = first_of(rb, is_memcpy);
    if (n <= 0 || !m)
        return;
    double bytes = 0;
    for (int k = 0; k < rb->n_ops; k++)
        bytes += rb->ops[k]->kind == GPU_MEMCPY ? (double)rb->ops[k]->bytes : 0;
    char human[32], kind[32];
    findings_text_buf(kind, sizeof kind, m->copy_kind);
    finding *fd = findings_add(va, FK_BWD_HIDDEN_MEMCPY, "backward: %d Memcpy (%s) of %s per backward, %.1f µs, "
                               "%.0f%% of its CUDA time", n, kind, human_bytes(bytes, human, sizeof human), us,
                               pct(us, bwd_us));
    findings_number(fd, "copies", n, "");
    findings_number(fd, "bytes", bytes, "B");
    findings_number(fd, "us_per_backward", us, "us");
    findings_number(fd, "share", us / bwd_us, "");
    records_of(fd, rb, is_memcpy);
}

static void fp32_gemms(variant_analysis *va, const forward *rb, double bwd_us)
{
    int n, all;
    double us, all_us;
    per_backward_median(va, is_fp32_gemm, &n, &us);
    per_backward_median(va, is_gemm, &all, &all_us);
    if (n <= 0)
        return;
    char names[600];
    names_of(rb, is_fp32_gemm, names, sizeof names);
    finding *fd = findings_add(va, FK_BWD_FP32_CUDA_CORE_GEMM,
                               "backward: %d of its %d GEMMs run in FP32 on the CUDA cores, not the tensor cores (%s): "
                               "%.1f µs per backward, %.0f%% of its CUDA time", n, all, names, us, pct(us, bwd_us));
    findings_number(fd, "gemms", n, "");
    findings_number(fd, "all_gemms", all, "");
    findings_number(fd, "us_per_backward", us, "us");
    findings_number(fd, "share", us / bwd_us, "");
    records_of(fd, rb, is_fp32_gemm);
}

static double q_rows(const run_info *r) { return (double)r->shape.batch * r->shape.heads * attn_q_seq(&r->shape); }

static void dq_accumulation(variant_analysis *va, const run_info *r, const forward *rb, double bwd_us)
{
    int n;
    double us;
    per_backward_median(va, is_dq_convert, &n, &us);
    const gpu_op *c = first_of(rb, is_dq_convert);
    if (n <= 0 || !c)
        return;
    const double acc = q_rows(r) * r->shape.dim * 4.0;
    char s[FINDING_NAME_MAX + 8], code[200], human[32];
    findings_short_name(c->name, s, sizeof s);
    findings_code_buf(code, sizeof code, s);
    finding *fd = findings_add(va, FK_BWD_DQ_ACCUMULATION,
                               "backward: dQ is accumulated in an FP32 buffer (%s for this shape) across key tiles and "
                               "converted to 16 bits by %s, %.1f µs per backward (%.0f%% of its CUDA time): the "
                               "FlashAttention-2 scheme, in which the block of each key tile adds its part of dQ "
                               "atomically", human_bytes(acc, human, sizeof human), code, us, pct(us, bwd_us));
    findings_number(fd, "fp32_dq_bytes", acc, "B");
    findings_number(fd, "convert_us", us, "us");
    findings_number(fd, "share", us / bwd_us, "");
    records_of(fd, rb, is_dq_convert);
}

/* P is recomputed when the forward kept less than its S×S probabilities (bf16, every head). */
static void recompute(variant_analysis *va, const run_info *r, const forward *rb, double bwd_us)
{
    const backward_result *b = &va->result->bwd;
    const double p_bytes = q_rows(r) * r->shape.seq * 2.0;
    if (!isfinite(b->kept_bytes) || b->kept_bytes >= p_bytes)
        return;
    char kept[32], p[32], lse[400] = "", delta[400] = "";
    int nl, nd;
    double lse_us, delta_us;
    per_backward_median(va, is_lse_kernel, &nl, &lse_us);
    per_backward_median(va, is_delta_pass, &nd, &delta_us);
    const gpu_op *l = first_of(rb, is_lse_kernel), *d = first_of(rb, is_delta_pass);
    char s[FINDING_NAME_MAX + 8], code[200];
    if (nl > 0 && l) {
        findings_short_name(l->name, s, sizeof s);
        findings_code_buf(code, sizeof code, s);
        snprintf(lse, sizeof lse, "; the log-sum-exp, which the forward did not keep, first, by %s: %.1f µs per "
                 "backward, %.0f%% of its CUDA time", code, lse_us, pct(lse_us, bwd_us));
    }
    if (nd > 0 && d) {
        findings_short_name(d->name, s, sizeof s);
        findings_code_buf(code, sizeof code, s);
        snprintf(delta, sizeof delta, "; a pre-pass %s (rowsum(dO∘O), which reads the output) takes %.1f µs", code,
                 delta_us);
    }
    finding *fd = findings_add(va, FK_BWD_RECOMPUTE,
                               "backward: recomputes the S×S probabilities from q and k tile by tile (the forward kept "
                               "%s, where P would take %s)%s%s", human_bytes(b->kept_bytes, kept, sizeof kept),
                               human_bytes(p_bytes, p, sizeof p), lse, delta);
    findings_number(fd, "kept_bytes", b->kept_bytes, "B");
    findings_number(fd, "p_bytes", p_bytes, "B");
    if (nl > 0 && l) {
        findings_number(fd, "lse_us", lse_us, "us");
        findings_number(fd, "share", lse_us / bwd_us, "");
        records_of(fd, rb, is_lse_kernel);
    }
    if (nd > 0 && d) {
        findings_number(fd, "delta_us", delta_us, "us");
        records_of(fd, rb, is_delta_pass);
    }
}

/* The bytes the forward keeps for the backward beyond q, k and v, against q, k and v's own. */
static void kept_bytes(variant_analysis *va, const run_info *r)
{
    const backward_result *b = &va->result->bwd;
    if (!isfinite(b->kept_bytes))
        return;
    const attn_shape *s = &r->shape;
    const double qkv = (q_rows(r) + 2.0 * s->batch * attn_kv_heads(s) * s->seq) * s->dim * 2.0;
    char kept[32], in[32], what[300];
    findings_text_buf(what, sizeof what, b->kept[0] ? b->kept : "not described");
    finding *fd = b->kept_bytes > 0
                      ? findings_add(va, FK_BWD_KEPT_BYTES,
                                     "backward: the forward keeps %s for it beyond q, k and v (%.2g× their %s): %s",
                                     human_bytes(b->kept_bytes, kept, sizeof kept), b->kept_bytes / qkv,
                                     human_bytes(qkv, in, sizeof in), what)
                      : findings_add(va, FK_BWD_KEPT_BYTES, "backward: the forward keeps nothing for it beyond q, k "
                                     "and v (%s): %s", human_bytes(qkv, in, sizeof in), what);
    findings_number(fd, "kept_bytes", b->kept_bytes, "B");
    findings_number(fd, "qkv_bytes", qkv, "B");
    findings_number(fd, "ratio", b->kept_bytes / qkv, "x");
}

/* The series' advice: masked_fill_ in place instead of masked_fill, and "with autograd on,
 * in-place will overwrite values the backward pass needs". A variant named X_inplace is the
 * in-place twin of the variant X of the same run; the check: its gradients' errors against FP64
 * equal the twin's exactly (the same backward over the same values), or they do not. */
static void inplace_advice(variant_analysis *va, const run_info *r)
{
    const char *name = va->result->name, *suffix = "_inplace";
    size_t n = strlen(name), ns = strlen(suffix);
    if (n <= ns || strcmp(name + n - ns, suffix))
        return;
    const variant_result *twin = NULL;
    for (int i = 0; i < r->n_variants; i++)
        if (strlen(r->variants[i].name) == n - ns && !strncmp(r->variants[i].name, name, n - ns))
            twin = &r->variants[i];
    if (!twin || !twin->bwd.recorded || twin->bwd.status != VARIANT_OK)
        return;
    const backward_result *x = &va->result->bwd, *y = &twin->bwd;
    const int same = x->rel_error_dq == y->rel_error_dq && x->rel_error_dk == y->rel_error_dk &&
                     x->rel_error_dv == y->rel_error_dv;
    char what[300], code[80];
    findings_text_buf(what, sizeof what, x->kept[0] ? x->kept : "not described");
    findings_code_buf(code, sizeof code, twin->name);
    finding *fd;
    if (same)
        fd = findings_add(va, FK_BWD_INPLACE_ADVICE,
                          "backward: the series' in-place advice checked: the in-place fill overwrote nothing this "
                          "backward reads (it reads what the forward kept: %s), and its dQ, dK and dV errors against "
                          "FP64 equal %s's exactly (%.2g / %.2g / %.2g)", what, code, x->rel_error_dq,
                          x->rel_error_dk, x->rel_error_dv);
    else {
        fd = findings_add(va, FK_BWD_INPLACE_ADVICE,
                          "backward: the series' in-place advice checked: the gradients differ from %s's (dQ / dK / "
                          "dV errors against FP64 %.2g / %.2g / %.2g, against %.2g / %.2g / %.2g): the in-place "
                          "fill changed a value this backward reads (%s)", code, x->rel_error_dq, x->rel_error_dk,
                          x->rel_error_dv, y->rel_error_dq, y->rel_error_dk, y->rel_error_dv, what);
        fd->severity = FINDING_NOTICE; /* the advice's warning came true: a cost worth knowing */
    }
    snprintf(fd->other, sizeof fd->other, "%s", twin->name);
    findings_number(fd, "same_gradients", same, "");
    findings_number(fd, "dq_error", x->rel_error_dq, "");
    findings_number(fd, "other_dq_error", y->rel_error_dq, "");
}

/* A backward kernel of the counter pass and where it stands against this run's roofs; bound: 1
 * memory-bound, 2 compute-bound, 0 under BWD_ROOF_BOUND of both roofs. */
typedef struct bwd_point {
    const counter_range *r;
    double s, frac_dram, frac_math;
    int tensor, bound;
} bwd_point;

/* A kernel is bound by a roof when it reaches at least this fraction of it (and more of it than of the
 * other); below it on both, neither roof is what limits it (latency, occupancy, atomics). */
#define BWD_ROOF_BOUND 0.5

static int by_time(const void *pa, const void *pb)
{
    const bwd_point *a = pa, *b = pb;
    return a->s > b->s ? -1 : a->s < b->s;
}

/* The backward's kernels on the roofline (the counter pass's "bwd_kernel" ranges, with this run's
 * measured ceilings): each is memory-bound when its DRAM traffic reaches BWD_ROOF_BOUND of the copy
 * roof and a larger fraction of it than its FLOP/s of its math roof (the bf16 tensor roof where it did
 * tensor math, the FP32 FMA roof otherwise), compute-bound the other way round (the forward's regime
 * rule, predict.c, per kernel, with the threshold), else under half of both. The sentence names them
 * by duration, longest first. */
static void roofline_regime(variant_analysis *va, const run_info *r)
{
    const ceilings *ce = &r->ceilings;
    const counters_set *cs = &r->counters;
    if (cs->meta.status != CTR_OK || !ce->measured || !(ce->copy_tbps > 0) || !(ce->tensor_bf16_tflops > 0) ||
        !(ce->fp32_fma_tflops > 0))
        return;
    bwd_point *p = attn_calloc((size_t)(cs->n ? cs->n : 1), sizeof *p);
    int n = 0, count[3] = {0, 0, 0};
    double total = 0, mem_s = 0;
    for (int i = 0; i < cs->n; i++) {
        const counter_range *k = &cs->r[i];
        double s = counters_seconds(k), f = counters_flops(k), b = counters_dram_bytes(k);
        if (strcmp(k->kind, "bwd_kernel") || strcmp(k->variant, va->result->name) || !(s > 0) || !(b >= 0) ||
            !(f >= 0))
            continue;
        bwd_point *q = &p[n++];
        q->r = k;
        q->s = s;
        q->tensor = counters_tensor_flops(k) > 0;
        q->frac_dram = b / s / (ce->copy_tbps * 1e12);
        q->frac_math = f / s / ((q->tensor ? ce->tensor_bf16_tflops : ce->fp32_fma_tflops) * 1e12);
        q->bound = q->frac_dram >= BWD_ROOF_BOUND && q->frac_dram > q->frac_math   ? 1
                   : q->frac_math >= BWD_ROOF_BOUND && q->frac_math >= q->frac_dram ? 2
                                                                                    : 0;
        count[q->bound]++;
        total += s;
        mem_s += q->bound == 1 ? s : 0;
    }
    if (n == 0) {
        free(p);
        return;
    }
    qsort(p, (size_t)n, sizeof *p, by_time);
    static const char *const words[] = {"under half of both roofs", "memory-bound", "compute-bound"};
    char list[1200] = "";
    const int shown = n < 4 ? n : 4;
    for (int i = 0; i < shown; i++) {
        char nm[FINDING_NAME_MAX + 8], code[200];
        findings_short_name(p[i].r->name, nm, sizeof nm);
        findings_code_buf(code, sizeof code, nm);
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s %s (%.0f µs: %.0f%% of the copy roof, %.0f%% of the %s roof)",
                 i ? "; " : "", code, words[p[i].bound], p[i].s * 1e6,
                 100 * p[i].frac_dram, 100 * p[i].frac_math, p[i].tensor ? "bf16 tensor" : "FP32 FMA");
    }
    if (n > shown) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "; and %d more", n - shown);
    }
    finding *fd = findings_add(va, FK_BWD_ROOFLINE,
                               "backward on the roofline (its kernels in the counter pass against this run's roofs; a "
                               "roof binds a kernel that reaches at least %.0f%% of it): of its %d kernel%s %d memory-bound (%.0f%% of "
                               "their time), %d compute-bound, %d under half of both roofs; longest first: %s",
                               100 * BWD_ROOF_BOUND, n, n == 1 ? "" : "s", count[1], pct(mem_s, total), count[2],
                               count[0], list);
    findings_number(fd, "memory_bound", count[1], "");
    findings_number(fd, "compute_bound", count[2], "");
    findings_number(fd, "neither", count[0], "");
    findings_number(fd, "kernels", n, "");
    findings_number(fd, "memory_share", mem_s / total, "");
    free(p);
}

int backward_findings_derive(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const backward_result *b = &va->result->bwd;
    if (!a->run->backward || !b->recorded || b->status != VARIANT_OK || va->n_backwards <= 0)
        return 0;
    const forward *rb = rep_backward(va);
    const double bwd_us = va->bwd_cuda_us.median;
    op_count(va, rb);
    hidden_memcpy(va, rb, bwd_us);
    fp32_gemms(va, rb, bwd_us);
    dq_accumulation(va, a->run, rb, bwd_us);
    recompute(va, a->run, rb, bwd_us);
    kept_bytes(va, a->run);
    inplace_advice(va, a->run);
    roofline_regime(va, a->run);
    return 0;
}
