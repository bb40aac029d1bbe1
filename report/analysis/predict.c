/* The checks of "Predict, then verify" (see predict.h): a variant's classes of kernels
 * are matched by name to the counter pass's kernel ranges; a Memcpy, not a kernel, is
 * the forward range minus every kernel range. */
#include "units.h"
#include "predict.h"

#include "err.h"
#include "escape.h"
#include "findings.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *pv_kind_id(pv_kind k)
{
    static const char *const id[] = {"ops", "count", "dram_bytes", "l2_bytes", "flops", "pipe", "regime"};
    return (unsigned)k < sizeof id / sizeof id[0] ? id[k] : "?";
}

int predict_available(const analysis *a)
{
    if (a->run->counters.meta.status != CTR_NOT_RUN)
        return 1;
    for (int i = 0; i < a->n; i++)
        if (a->v[i].result->prediction.valid)
            return 1;
    return 0;
}

pv_verdict predict_judge(double predicted, double measured, double tol)
{
    if (!isfinite(measured))
        return PV_NA;
    if (!(predicted > 0))
        return PV_INFO;
    return fabs(measured / predicted - 1) <= tol ? PV_OK : PV_MISS;
}

pv_verdict predict_judge_dram(double predicted, double measured, double l2_bytes, int kernels)
{
    const pv_verdict v = predict_judge(predicted, measured, PV_TOL_DRAM);
    if (v != PV_MISS)
        return v;
    if (fabs(measured - predicted) <= PV_DRAM_FLOOR_PER_KERNEL * (kernels > 1 ? kernels : 1))
        return PV_WITHIN_FLOOR;
    if (measured < predicted && l2_bytes > 0 && predicted <= l2_bytes)
        return PV_L2_SERVED;
    return PV_MISS;
}

static double or0(double x) { return isfinite(x) ? x : 0; }

/* First class (not a copy) whose match the kernel name satisfies, else -1. */
static int class_of(const attn_prediction *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (!p->cls[i].is_copy && pred_class_matches(&p->cls[i], name))
            return i;
    return ATTN_NONE;
}

/* Adds one kernel range's traffic, FLOPs, instructions and time to a sum. */
static void sum_add(pv_sum *s, const counter_range *r)
{
    s->n++;
    s->dram += counters_dram_bytes(r);
    s->dram_write += r->v[M_DRAM_WRITE];
    s->l2 += counters_l2_bytes(r);
    s->fp32_flops += counters_fp32_flops(r);
    s->tensor_flops += counters_tensor_flops(r);
    s->tensor_inst += r->v[M_TENSOR_INST];
    s->gmma_inst += r->v[M_GMMA_INST];
    s->seconds += counters_seconds(r);
}

pv_sum predict_sum_kernels(const counters_set *cs, const char *variant, const pred_class *c)
{
    pv_sum s = {0};
    for (int i = 0; i < cs->n; i++) {
        const counter_range *r = &cs->r[i];
        if (strcmp(r->variant, variant) || strcmp(r->kind, "kernel"))
            continue;
        if (c && !pred_class_matches(c, r->name))
            continue;
        sum_add(&s, r);
    }
    return s;
}

const counter_range *predict_forward_range(const counters_set *cs, const char *variant)
{
    for (int i = 0; i < cs->n; i++)
        if (!strcmp(cs->r[i].variant, variant) && !strcmp(cs->r[i].kind, "forward"))
            return &cs->r[i];
    return NULL;
}

static pv_check *push(pv_variant *out, pv_kind k, const char *cls, double predicted, double measured, pv_verdict v)
{
    if (out->n == PV_MAX_CHECKS)
        return NULL;
    pv_check *c = &out->c[out->n++];
    memset(c, 0, sizeof *c);
    c->kind = k;
    snprintf(c->cls, sizeof c->cls, "%s", cls);
    c->predicted = predicted;
    c->measured = measured;
    c->verdict = v;
    return c;
}

/* A kernel class against its kernels; exactly one pv_sum per class. Kernels are given to
 * the first class that matches, as class_of does, so that two classes never share one. */
static pv_sum class_sum(const counters_set *cs, const variant_result *res, int ci)
{
    pv_sum s = {0};
    for (int i = 0; i < cs->n; i++) {
        const counter_range *r = &cs->r[i];
        if (strcmp(r->variant, res->name) || strcmp(r->kind, "kernel") || class_of(&res->prediction, r->name) != ci)
            continue;
        sum_add(&s, r);
    }
    return s;
}

/* A class's DRAM bytes (s NULL: not measured). The kernel-replay pass restores device memory
 * before each kernel's passes, and the restored lines, dirty in the L2, are written back while
 * the kernel runs: counted as its writes. The whole forward, measured once under user replay,
 * has no restore inside it, so its writes bound any class's own. A class above its minimum
 * only by writes beyond that bound is judged again with its writes capped there. */
static void class_dram_check(pv_variant *out, const pred_class *c, const pv_sum *s, const counter_range *fwd,
                             double l2_bytes)
{
    const double m = s ? s->dram : NAN;
    const int kernels = s ? s->n : c->count;
    const pv_verdict v = predict_judge_dram(c->dram_bytes, m, l2_bytes, kernels);
    const double fwd_writes = fwd ? fwd->v[M_DRAM_WRITE] : NAN;
    if (v == PV_MISS && m > c->dram_bytes && isfinite(fwd_writes) && s->dram_write > fwd_writes) {
        const double capped = s->dram - s->dram_write + fwd_writes;
        const pv_verdict vc = predict_judge_dram(c->dram_bytes, capped, l2_bytes, kernels);
        if (vc == PV_OK || vc == PV_L2_SERVED || vc == PV_WITHIN_FLOOR) {
            pv_check *k = push(out, PV_DRAM, c->label, c->dram_bytes, m, PV_REPLAY_WRITES);
            if (k) {
                k->aux = capped;
                k->aux2 = fwd_writes;
            }
            return;
        }
    }
    push(out, PV_DRAM, c->label, c->dram_bytes, m, v);
}

/* Memsets beyond the expectation are a library's choice of algorithm at this shape (cuBLAS
 * issues a 4-byte one before a split one-query GEMM, at some one-query shapes and not at
 * others): shown as such, as the op-count finding does, and not judged as the variant's. */
static pv_verdict ops_verdict(const variant_analysis *va)
{
    const int extra = va->ops_per_forward - va->result->expected_ops;
    if (extra == 0)
        return PV_OK;
    return extra > 0 && extra == va->memset_per_forward ? PV_LIBRARY_MEMSET : PV_MISS;
}

void predict_variant(const analysis *a, int vi, pv_variant *out)
{
    const variant_analysis *va = &a->v[vi];
    const variant_result *res = va->result;
    const attn_prediction *p = &res->prediction;
    const counters_set *cs = &a->run->counters;
    const ceilings *ce = &a->run->ceilings;
    const double l2_bytes = a->run->device.l2_bytes;
    memset(out, 0, sizeof *out);
    out->result = res;
    if (res->status != VARIANT_OK)
        return;
    push(out, PV_OPS, "forward", res->expected_ops, va->ops_per_forward, ops_verdict(va));
    if (!p->valid)
        return;
    const int have = cs->meta.status == CTR_OK && predict_forward_range(cs, res->name) != NULL;
    const counter_range *fwd = have ? predict_forward_range(cs, res->name) : NULL;
    const pv_sum all = have ? predict_sum_kernels(cs, res->name, NULL) : (pv_sum){0};

    for (int ci = 0; ci < p->n; ci++) {
        const pred_class *c = &p->cls[ci];
        if (c->is_copy) {
            /* negative when the kernels, each replayed alone, read more than the forward: no measure */
            double m = have && counters_dram_bytes(fwd) >= all.dram ? counters_dram_bytes(fwd) - all.dram : NAN;
            push(out, PV_DRAM, c->label, c->dram_bytes, m, predict_judge_dram(c->dram_bytes, m, l2_bytes, 1));
            continue;
        }
        pv_sum s = have ? class_sum(cs, res, ci) : (pv_sum){0};
        push(out, PV_COUNT, c->label, c->count, have ? s.n : NAN, !have ? PV_NA : s.n == c->count ? PV_OK : PV_MISS);
        if (c->dram_bytes > 0)
            class_dram_check(out, c, have && s.n ? &s : NULL, fwd, l2_bytes);
        if (c->l2_bytes > 0) {
            double m = have && s.n ? s.l2 : NAN;
            push(out, PV_L2, c->label, c->l2_bytes, m, predict_judge(c->l2_bytes, m, PV_TOL_L2));
        }
        if (c->flops > 0) {
            double m = !(have && s.n) ? NAN
                       : c->pipe == PIPE_TENSOR ? s.tensor_flops
                       : c->pipe == PIPE_FMA    ? s.fp32_flops
                                                : or0(s.tensor_flops) + or0(s.fp32_flops);
            push(out, PV_FLOPS, c->label, c->flops, m, predict_judge(c->flops, m, PV_TOL_FLOPS));
        }
        if (c->pipe == PIPE_TENSOR) {
            double ti = have && s.n ? s.tensor_inst : NAN;
            pv_check *k = push(out, PV_PIPE, c->label, c->pipe, ti, !isfinite(ti) ? PV_NA : ti > 0 ? PV_OK : PV_MISS);
            if (k) {
                k->aux = s.fp32_flops;
                k->aux2 = s.gmma_inst;
            }
        } else if (c->pipe == PIPE_FMA) {
            /* FMA pipes: no tensor-core math (bf16 HMMA/HGMMA FLOPs) and FP32 work. The
             * tensor-pipe instruction count is shown beside it, not judged: cuBLAS's FFMA
             * GEMMs issue a few (49152 in 1.7e10 FFMAs on the H200, 2026-11-30). */
            double tf = have && s.n ? or0(s.tensor_flops) : NAN;
            pv_check *k = push(out, PV_PIPE, c->label, c->pipe, tf,
                               !isfinite(tf) ? PV_NA : tf == 0 && s.fp32_flops > 0 ? PV_OK : PV_MISS);
            if (k) {
                k->aux = s.fp32_flops;
                k->aux2 = s.tensor_inst;
            }
        }
    }

    /* Regime: arithmetic intensity of the prediction against the ridge of the roof the
     * variant's math runs on; measured: which roof the kernels came closer to. */
    int fma = 0;
    for (int ci = 0; ci < p->n; ci++)
        fma |= p->cls[ci].pipe == PIPE_FMA;
    const double roof = fma ? ce->fp32_fma_tflops : ce->tensor_bf16_tflops;
    const double flops = p->executed_flops > 0 ? p->executed_flops : p->useful_flops;
    if (ce->measured && roof > 0 && ce->copy_tbps > 0 && p->min_dram_bytes > 0 && flops > 0) {
        const double ai = flops / p->min_dram_bytes, ridge = roof / ce->copy_tbps;
        double measured = NAN, fc = NAN, fd = NAN;
        if (have && all.seconds > 0) {
            double f = or0(all.fp32_flops) + or0(all.tensor_flops);
            fc = f / all.seconds / (roof * 1e12);
            fd = all.dram / all.seconds / (ce->copy_tbps * 1e12);
            measured = fc >= fd;
        }
        const double predicted = ai > ridge;
        const pv_verdict v = !isfinite(measured)                                              ? PV_NA
                             : fc > 1 + PV_TOL_ROOF || fd > 1 + PV_TOL_ROOF ? PV_INCONSISTENT
                             : measured == predicted                                          ? PV_OK
                                                                                              : PV_MISS;
        pv_check *k = push(out, PV_REGIME, "forward", predicted, measured, v);
        if (k) {
            k->aux = ai;
            k->aux2 = ridge;
            k->frac_compute = fc;
            k->frac_dram = fd;
            k->scope_dram = have ? all.dram : NAN;
            k->scope_flops = have ? or0(all.fp32_flops) + or0(all.tensor_flops) : NAN;
            k->scope_seconds = have ? all.seconds : NAN;
            k->roof_tflops = roof;
            k->roof_tbps = ce->copy_tbps;
        }
    }
}

static int is_memcpy_op(const gpu_op *o) { return o->kind == GPU_MEMCPY && strstr(o->name, "DtoD"); }

/* The first missed prediction (the most interesting line first), or the counters
 * showing a share of a roof above 100%. */
static void missed_finding(variant_analysis *va, const pv_variant *pv)
{
    char b1[32], b2[32], cls[128];
    for (int k = 0; k < pv->n; k++) {
        const pv_check *c = &pv->c[k];
        if (c->verdict == PV_INCONSISTENT) {
            finding *fd = findings_add(va, FK_ROOF_SHARE_INCONSISTENT,
                                       "measurement inconsistent: the kernels reach %.0f%% of the compute roof and "
                                       "%.0f%% of the copy roof measured in this run (kernels' FLOPs and DRAM bytes "
                                       "over kernels' time); a share above 100%% means the roof or the counters are "
                                       "wrong here",
                                       100 * c->frac_compute, 100 * c->frac_dram);
            findings_number(fd, "compute_share", c->frac_compute, "");
            findings_number(fd, "copy_share", c->frac_dram, "");
            return;
        }
        if (c->verdict != PV_MISS || c->kind == PV_OPS)
            continue;
        findings_text_buf(cls, sizeof cls, c->cls); /* a label from run.json */
        finding *fd;
        if (c->kind == PV_DRAM || c->kind == PV_L2)
            fd = findings_add(va, FK_PREDICTION_MISSED, "prediction missed: %s, %s of %s traffic, predicted %s (%+.0f%%)",
                              cls, human_bytes(nearbyint(c->measured), b1, sizeof b1),
                              c->kind == PV_DRAM ? "DRAM" : "L2↔SM", human_bytes(nearbyint(c->predicted), b2, sizeof b2),
                              100 * (c->measured / c->predicted - 1));
        else
            fd = findings_add(va, FK_PREDICTION_MISSED, "prediction missed: %s (%s)", cls, pv_kind_id(c->kind));
        findings_number(fd, "predicted", c->predicted, "");
        findings_number(fd, "measured", c->measured, "");
        if (c->predicted > 0)
            findings_number(fd, "departure", c->measured / c->predicted - 1, "");
        return;
    }
}

int predict_derive(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    pv_variant pv;
    predict_variant(a, vi, &pv);
    missed_finding(va, &pv);
    char b1[32], cls[128];
    for (int k = 0; k < pv.n; k++) {
        const pv_check *c = &pv.c[k];
        findings_text_buf(cls, sizeof cls, c->cls);
        if (c->kind == PV_PIPE && c->predicted == PIPE_FMA && isfinite(c->measured)) {
            finding *fd = findings_add(va, FK_FP32_PIPE_MATH,
                                       "%s do %.3g GFLOP of tensor-core math and %.3g GFLOP on the FP32 pipes "
                                       "(counters; the tensor pipe issued %.0f other instructions)",
                                       cls, c->measured / 1e9, c->aux / 1e9, c->aux2);
            findings_number(fd, "tensor_gflop", c->measured / 1e9, "");
            findings_number(fd, "fp32_gflop", c->aux / 1e9, "");
        }
        /* The copy's traffic is the forward's range less every kernel range: at or below
         * zero the counters cannot say what it moved, and no bandwidth is claimed. */
        if (c->kind == PV_DRAM && strstr(c->cls, "Memcpy") && isfinite(c->measured) && c->measured > 0) {
            int n = 0;
            double us = 0;
            per_forward_median(va, is_memcpy_op, &n, &us);
            if (n && us > 0) {
                finding *fd = findings_add(va, FK_MEMCPY_BANDWIDTH, "the Memcpy DtoD moves %s each way at %.2f TB/s (counters)",
                                           human_bytes(nearbyint(c->measured / 2), b1, sizeof b1),
                                           c->measured / (us * 1e-6) / 1e12);
                findings_number(fd, "bytes_each_way", nearbyint(c->measured / 2), "B");
                findings_number(fd, "tbps", c->measured / (us * 1e-6) / 1e12, "");
            }
        }
    }
    return 0;
}

