/* Model findings (model_findings.h). Rules and their thresholds:
 * - attention_share (info): attention was recognised; its implementation and share.
 * - kernel_arch: a kernel of the representative step whose name carries an smXY or
 *   cutlass_XY_ tag (model_kernel_sm) below the recorded GPU's compute capability; the
 *   one with the most time is named, all such kernels counted; a notice from
 *   ARCH_NOTICE_SHARE of the step's CUDA time on, info below.
 * - math_fallback (notice): operations launched under aten::_scaled_dot_product_attention_math.
 * - eager_scores (notice): eager attention blocks found and the recorded inputs are the
 *   eager QKᵀ matmul's: B·H·S_q·S_kv elements of the matmul's dtype per layer.
 * - fp32_cuda_core_16bit (notice) / fp32_cuda_core_inputs (info): the import's record of
 *   the dtypes the ops behind FP32 CUDA-core kernels were given (16-bit: a notice).
 * - host_copies (notice): Memcpy HtoD / DtoH in the representative step, each with the
 *   CPU op chain that launched it, its bytes and direction; one under aten::item or
 *   aten::_local_scalar_dense is a host sync (the host waits for the value).
 * - cpu_bound_step (notice): host-bound, measured: the GPU idles at least
 *   HOST_BOUND_GAP_SHARE (25%) of the step's GPU span (first operation to last) in gaps
 *   that a launch closes (the next operation's launch call began after the GPU went
 *   idle), medians over steps; its numbers are the host's time and its waits
 *   (cuda*Synchronize, cudaEventSynchronize, cudaStreamWaitEvent, blocking memcpy on the
 *   step's thread), the GPU's busy time, idle and launch-gap shares.
 * - sdpa_input_conversion (info): operations SDPA launched outside its backend op (the
 *   attn_mask made additive, autocast's casts: those under aten::_to_copy), counted in
 *   attention.
 * - attention_inputs_fused (info): Inductor kernels that only compute SDPA's inputs.
 * - gqa_expansion (notice): K/V heads repeated by copies before attention (the import
 *   recorded the expansion's shapes); the bytes are the recorded output's, per copy.
 *   Where the view names mask conversion or attention inputs, the series' mask_rebuild
 *   (which reads them as a causal mask rebuilt) is dropped.
 * - host_waits (info): not host-bound, and the host waits at least HOST_WAIT_SHARE (10%)
 *   of its time for the GPU: the GPU sets the pace; the waits are named. */
#include "units.h"
#include "model_findings.h"
#include "alloc.h"

#include "findings.h"
#include "model_inputs.h"
#include "model_roles.h"

#include "median.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define ARCH_NOTICE_SHARE 0.01

static double op_us(const gpu_op *o) { return (double)(o->end_ns - o->start_ns) / 1000.0; }

static void arch_finding(const analysis *a, variant_analysis *va)
{
    int dev = a->run->device.major * 10 + a->run->device.minor;
    int rep = analysis_median_forward(va);
    if (dev <= 0 || rep < 0)
        return;
    const forward *f = &va->forwards[rep];
    const gpu_op *worst = NULL;
    double us = 0, worst_us = 0;
    int n = 0;
    for (int k = 0; k < f->n_ops; k++) {
        const gpu_op *o = f->ops[k];
        int sm = o->kind == GPU_KERNEL ? model_kernel_sm(o->name) : 0;
        if (!sm || sm >= dev)
            continue;
        n++;
        us += op_us(o);
        if (op_us(o) > worst_us)
            worst = o, worst_us = op_us(o);
    }
    if (!worst)
        return;
    char kn[FINDING_NAME_MAX + 8];
    findings_short_name(worst->name, kn, sizeof kn);
    int sm = model_kernel_sm(worst->name);
    const char *origin = findings_kernel_origin(worst);
    char tag[16];
    snprintf(tag, sizeof tag, "cutlass_%d_", sm);
    if (!strstr(worst->name, tag))
        snprintf(tag, sizeof tag, "sm%d", sm);
    double share = f->cuda_us > 0 ? us / f->cuda_us : 0.0;
    finding *fd = findings_add(va, FK_KERNEL_ARCH,
                               "%d kernel%s per step built for an older architecture than the GPU's: \x01%s\x02 (%s, "
                               "\x01%s\x02 in its name) is an sm_%d kernel on this compute capability %d.%d GPU, %.1f "
                               "µs per step (%.1f%% of the step's CUDA time)%s",
                               n, n == 1 ? "" : "s", kn, origin, tag, sm, a->run->device.major, a->run->device.minor,
                               us, 100.0 * share,
                               dev == 90 ? ": it runs without Hopper's wgmma and TMA instructions" : "");
    fd->severity = share >= ARCH_NOTICE_SHARE ? FINDING_NOTICE : FINDING_INFO;
    findings_number(fd, "kernel_sm", sm, "");
    findings_number(fd, "device_sm", dev, "");
    findings_number(fd, "kernels", n, "");
    findings_number(fd, "us_per_step", us, "us");
    findings_record(fd, worst);
}

static void eager_finding(const analysis *a, variant_analysis *va, const model_view *v)
{
    (void)a;
    model_attn_inputs m;
    if (!v->eager_blocks || !model_inputs_of(va->result, &m) || m.kind != MODEL_ATTN_EAGER)
        return;
    int elem = model_dtype_bytes(m.dtype);
    if (!elem)
        return;
    double bytes = (double)m.batch * m.heads_q * m.seq_q * m.seq_kv * elem;
    char hb[32];
    human_bytes(bytes, hb, sizeof hb);
    finding *fd = findings_add(va, FK_EAGER_SCORES,
                               "eager attention materialises the score matrix in every layer: %d×%d×%d×%d %s = %s "
                               "written by the QKᵀ GEMM and read back by the softmax, %d time%s per step%s; SDPA's "
                               "fused backends never write it (let SDPA pick the backend)",
                               m.batch, m.heads_q, m.seq_q, m.seq_kv, m.dtype, hb, v->eager_blocks,
                               v->eager_blocks == 1 ? "" : "s",
                               v->eager_out_of_place_mask
                                   ? ", and \x01" "aten::masked_fill\x02 copies it once more (masked_fill_ under "
                                     "no_grad writes in place)"
                                   : "");
    findings_number(fd, "bytes_per_layer", bytes, "B");
    findings_number(fd, "blocks", v->eager_blocks, "");
    findings_number(fd, "masked_fill_copies", v->eager_out_of_place_mask, "");
}

static void math_finding(variant_analysis *va, const model_view *v)
{
    char count[48];
    for (int k = 0; k < v->n_rows; k++) {
        const model_role_row *r = &v->rows[k];
        if (r->role != MROLE_ATTN_FUSED || !strstr(r->implementation, "math"))
            continue;
        finding *fd = findings_add(va, FK_MATH_FALLBACK,
                                   "SDPA fell back to its math backend (\x01" "aten::_scaled_dot_product_attention_math"
                                   "\x02): %s per step, %.1f µs (%.1f%% of the step), attention unfused as "
                                   "in the series' reference; PyTorch takes it when no fused backend accepts the "
                                   "inputs (dtype, head dim, mask, dropout, device)",
                                   units_count_noun(r->ops, "operation", count, sizeof count), r->us, 100.0 * r->share);
        findings_number(fd, "ops_per_step", r->ops, "");
        findings_number(fd, "us_per_step", r->us, "us");
        return;
    }
}

/* The host's waits for the GPU: calls that block until device work is done. */
static int host_wait_call(const char *n)
{
    static const char *const waits[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                                        "cudaStreamWaitEvent", "cudaMemcpy", "cudaMemcpy2D", "cudaMemset",
                                        "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
                                        "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2"};
    for (size_t i = 0; i < sizeof waits / sizeof *waits; i++)
        if (!strcmp(n, waits[i]))
            return 1;
    return 0;
}

/* One step's host and GPU time: the host's range and its waits (on the range's thread),
 * the GPU's busy time (the union of its operations), and the idle time in gaps that a
 * launch closes (the next operation's launch call started after the GPU went idle). */
typedef struct step_pace {
    double host_us, wait_us, busy_us, span_us, launch_gap_us;
    char waits[160];
} step_pace;

static void pace_of(const trace *t, const forward *f, step_pace *p)
{
    memset(p, 0, sizeof *p);
    p->host_us = f->cpu_us;
    const host_range *h = f->range;
    if (h && t) {
        size_t lo = 0, hi = t->n_apis;
        while (lo < hi) { /* the first call starting in the range */
            size_t mid = lo + (hi - lo) / 2;
            if (t->apis[mid].start_ns < h->start_ns)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo; i < t->n_apis && t->apis[i].start_ns <= h->end_ns; i++) {
            const api_call *a = &t->apis[i];
            if (a->tid != h->tid || a->pid != h->pid || !a->name || !host_wait_call(a->name))
                continue;
            int64_t end = a->end_ns < h->end_ns ? a->end_ns : h->end_ns;
            p->wait_us += (double)(end - a->start_ns) / 1000.0;
            if (!strstr(p->waits, a->name)) {
                size_t L = strlen(p->waits);
                snprintf(p->waits + L, sizeof p->waits - L, "%s%s", L ? ", " : "", a->name);
            }
        }
    }
    if (f->n_ops < 1)
        return;
    int64_t lo = f->ops[0]->start_ns, cur_lo = lo, cur_hi = f->ops[0]->end_ns, hi_all = cur_hi;
    double busy = 0, gap = 0;
    for (int k = 1; k < f->n_ops; k++) {
        const gpu_op *o = f->ops[k];
        if (o->start_ns > cur_hi) {
            busy += (double)(cur_hi - cur_lo);
            const api_call *l = f->launchers ? f->launchers[k] : NULL;
            if (l && l->start_ns > cur_hi) /* the GPU idled until this launch came */
                gap += (double)(o->start_ns - cur_hi);
            cur_lo = o->start_ns;
        }
        if (o->end_ns > cur_hi)
            cur_hi = o->end_ns;
        if (o->end_ns > hi_all)
            hi_all = o->end_ns;
    }
    busy += (double)(cur_hi - cur_lo);
    p->busy_us = busy / 1000.0;
    p->span_us = (double)(hi_all - lo) / 1000.0;
    p->launch_gap_us = gap / 1000.0;
}

static double median_pace(const step_pace *p, int n, size_t field, double *tmp)
{
    for (int s = 0; s < n; s++)
        tmp[s] = *(const double *)((const char *)&p[s] + field);
    return median_of(tmp, n);
}

/* Host-bound is measured: a step is host-bound when the GPU idles, waiting for launches,
 * at least HOST_BOUND_GAP_SHARE of its span (first operation to last); the host's time
 * less its waits is set against the GPU's busy time. A step whose host mostly waits for the
 * GPU is GPU-bound, and the waits are named. */
#define HOST_BOUND_GAP_SHARE 0.25
#define HOST_WAIT_SHARE 0.10

static void pace_finding(const analysis *a, variant_analysis *va)
{
    int n = va->n_forwards, rep = analysis_median_forward(va);
    if (n < 1 || rep < 0)
        return;
    step_pace *p = calloc((size_t)n, sizeof *p);
    double *tmp = malloc((size_t)n * sizeof *tmp);
    if (!p || !tmp)
        attn_oom();
    for (int s = 0; s < n; s++)
        pace_of(a->trace, &va->forwards[s], &p[s]);
    for (int s = 0; s < n; s++) /* each step's share, then their median */
        tmp[s] = p[s].span_us > 0 ? p[s].launch_gap_us / p[s].span_us : 0;
    double gap_share = median_of(tmp, n);
    for (int s = 0; s < n; s++)
        tmp[s] = p[s].span_us > 0 ? 1 - p[s].busy_us / p[s].span_us : 0;
    double idle_share = median_of(tmp, n);
    double host = median_pace(p, n, offsetof(step_pace, host_us), tmp);
    double wait = median_pace(p, n, offsetof(step_pace, wait_us), tmp);
    double busy = median_pace(p, n, offsetof(step_pace, busy_us), tmp);
    const char *waits = p[rep].waits[0] ? p[rep].waits : "none";
    finding *fd = NULL;
    if (gap_share >= HOST_BOUND_GAP_SHARE)
        fd = findings_add(va, FK_CPU_BOUND_STEP,
                          "host-bound step: the GPU idles %.0f%% of its span waiting for launches (gaps that a launch "
                          "call closes; %.0f%% idle in all, from %.0f%% a step is called host-bound), busy %.1f µs of "
                          "the host's %.1f µs per step; the host works %.1f µs outside its waits (%.1f µs in %s), %.1f "
                          "µs per launched operation",
                          100.0 * gap_share, 100.0 * idle_share, 100.0 * HOST_BOUND_GAP_SHARE, busy, host, host - wait,
                          wait, waits, (host - wait) / va->forwards[rep].n_ops);
    else if (host > 0 && wait >= HOST_WAIT_SHARE * host)
        fd = findings_add(va, FK_HOST_WAITS,
                          "the GPU sets the pace: the host waits %.1f µs of its %.1f µs per step (%.0f%%) in %s; the "
                          "GPU is busy %.1f µs and idles %.0f%% of its span, %.0f%% waiting for launches (below the "
                          "%.0f%% that makes a step host-bound)",
                          wait, host, 100.0 * wait / host, waits, busy, 100.0 * idle_share, 100.0 * gap_share,
                          100.0 * HOST_BOUND_GAP_SHARE);
    if (fd) {
        findings_number(fd, "host_us", host, "us");
        findings_number(fd, "host_wait_us", wait, "us");
        findings_number(fd, "gpu_busy_us", busy, "us");
        findings_number(fd, "gpu_idle_share", idle_share, "");
        findings_number(fd, "launch_gap_share", gap_share, "");
    }
    free(p), free(tmp);
}

static void host_copy_finding(variant_analysis *va)
{
    int rep = analysis_median_forward(va);
    if (rep < 0)
        return;
    const forward *f = &va->forwards[rep];
    char list[512] = "";
    int n = 0, syncs = 0;
    double bytes = 0, us = 0;
    for (int k = 0; k < f->n_ops; k++) {
        const gpu_op *o = f->ops[k];
        if (o->kind != GPU_MEMCPY || (strcmp(o->copy_kind, "HtoD") && strcmp(o->copy_kind, "DtoH")))
            continue;
        int sync = op_launched_in(o, "aten::item") || op_launched_in(o, "aten::_local_scalar_dense");
        syncs += sync;
        n++;
        bytes += (double)o->bytes;
        us += op_us(o);
        if (n > 4)
            continue;
        char outer[96] = "";
        const char *p = o->cpu_op_path ? o->cpu_op_path : "";
        size_t len = strcspn(p, " ");
        snprintf(outer, sizeof outer, "%.*s", (int)(len < 95 ? len : 95), p);
        char hb[32];
        human_bytes((double)o->bytes, hb, sizeof hb);
        size_t L = strlen(list);
        snprintf(list + L, sizeof list - L, "%s%s %s in %s%s%s", L ? "; " : "", hb, o->copy_kind,
                 outer[0] ? outer : "no CPU op", sync ? " (a host sync: the host waits for the value)" : "",
                 strstr(o->name, "Pageable") ? " (from pageable host memory)" : "");
    }
    if (!n)
        return;
    finding *fd = findings_add(va, FK_HOST_COPIES,
                               "%d %s between host and device in every step (%.1f µs): %s%s", n,
                               n == 1 ? "copy" : "copies", us, list, n > 4 ? "; …" : "");
    findings_number(fd, "copies", n, "");
    findings_number(fd, "bytes", bytes, "B");
    findings_number(fd, "host_syncs", syncs, "");
    findings_number(fd, "us_per_step", us, "us");
}

/* What the ops behind FP32 CUDA-core kernels were given (the import's fact fp32_core_inputs). */
static void fp32_inputs_finding(variant_analysis *va)
{
    const variant_result *r = va->result;
    for (int i = 0; i < r->facts.n; i++) {
        const attn_fact *fa = &r->facts.item[i];
        if (strcmp(fa->key, "fp32_core_inputs") || !isfinite(fa->number))
            continue;
        finding *fd;
        if (fa->number > 0)
            fd = findings_add(va, FK_FP32_CUDA_CORE_16BIT,
                              "%.0f FP32 CUDA-core GEMM or convolution kernel%s in the trace ran on 16-bit inputs "
                              "(record_shapes; first: %s): tensor cores would take them",
                              fa->number, fa->number == 1 ? "" : "s", fa->value);
        else
            fd = findings_add(va, FK_FP32_CUDA_CORE_INPUTS,
                              "the FP32 CUDA-core kernels' ops had fp32 inputs (record_shapes; %s): FP32 is what the "
                              "model asked for there", fa->value);
        findings_number(fd, "kernels_16bit", fa->number, "");
        return;
    }
}

static const model_role_row *role_row(const model_view *v, model_role role)
{
    for (int k = 0; k < v->n_rows; k++)
        if (v->rows[k].role == role && v->rows[k].phase == MPHASE_FORWARD)
            return &v->rows[k];
    return NULL;
}

/* Removes the series' finding `id`: the model view says what those operations are. */
static void drop_series_finding(variant_analysis *va, const char *id)
{
    for (int k = 0; k < va->n_findings; k++)
        if (!strcmp(va->meta[k].id, id)) {
            for (int j = k + 1; j < va->n_findings; j++) {
                memcpy(va->findings[j - 1], va->findings[j], sizeof va->findings[0]);
                va->meta[j - 1] = va->meta[j];
            }
            va->n_findings--;
            return;
        }
}

/* SDPA's own conversions in the representative step: all of them, and the casts among them. */
static void count_conversion(const variant_analysis *va, int *casts, int *all)
{
    const forward *f = &va->forwards[analysis_median_forward(va)];
    model_role *role = malloc(((size_t)f->n_ops + 1) * sizeof *role);
    model_phase *phase = malloc(((size_t)f->n_ops + 1) * sizeof *phase);
    if (!role || !phase)
        attn_oom();
    int oop;
    model_step_roles(f, role, phase, &oop);
    for (int k = 0; k < f->n_ops; k++)
        if (role[k] == MROLE_ATTN_CONVERT) {
            (*all)++;
            *casts += op_launched_in(f->ops[k], "aten::_to_copy");
        }
    free(role), free(phase);
}

/* What runs around the attention op in a model: SDPA's mask conversion (attention), the
 * kernels a compiler fused to compute SDPA's inputs, and K/V heads repeated before SDPA
 * (neither is attention). The series' mask_rebuild, which takes such kernels for a
 * causal mask rebuilt in the forward, is dropped where the view names them. */
static void around_attention_findings(variant_analysis *va, const model_view *v)
{
    char count[48];
    model_attn_inputs m;
    int have_inputs = model_inputs_of(va->result, &m);
    const model_role_row *conv = role_row(v, MROLE_ATTN_CONVERT), *prep = role_row(v, MROLE_ATTN_INPUTS);
    const model_role_row *kv = role_row(v, MROLE_KV_EXPAND);
    if (conv || prep)
        drop_series_finding(va, "mask_rebuild");
    finding *fd;
    if (conv) {
        int casts = 0, all = 0;
        count_conversion(va, &casts, &all);
        char what[96];
        snprintf(what, sizeof what, "%s%s%s", all > casts ? "its attn_mask made additive" : "",
                 all > casts && casts ? " and " : "", casts ? "autocast's casts of its inputs" : "");
        fd = findings_add(va, FK_SDPA_INPUT_CONVERSION,
                          "SDPA converts its inputs in every step (%s%s%s%s): %s inside \x01"
                          "aten::scaled_dot_product_attention\x02 outside its backend op, %.1f µs per step (%.1f%% of the "
                          "step), counted in attention",
                          what, have_inputs && m.mask[0] ? "; the mask recorded: " : "", have_inputs ? m.mask : "", "",
                          units_count_noun(conv->ops, "operation", count, sizeof count), conv->us,
                          100.0 * conv->share);
        findings_number(fd, "ops_per_step", conv->ops, "");
        findings_number(fd, "casts", casts, "");
        findings_number(fd, "us_per_step", conv->us, "us");
    }
    if (prep) {
        fd = findings_add(va, FK_ATTENTION_INPUTS_FUSED,
                          "%g Triton kernels per step that Inductor fused from the ops feeding SDPA (its kernels name "
                          "the SDPA node among their fused ops: the rotary embedding, the K/V expand, the mask build) "
                          "take %.1f µs (%.1f%% of the step): not attention, the role attention_inputs",
                          prep->ops, prep->us, 100.0 * prep->share);
        findings_number(fd, "ops_per_step", prep->ops, "");
        findings_number(fd, "us_per_step", prep->us, "us");
    }
    if (kv && have_inputs && m.heads_kv_model > 0) {
        double bytes = (double)m.batch * m.heads_kv * m.seq_kv * m.dim * model_dtype_bytes(m.dtype);
        fd = findings_add(va, FK_GQA_EXPANSION,
                          "GQA by copies: the model's %d KV heads are repeated to %d by \x01%s\x02 before attention, "
                          "%s per step of %.0f B each ([B, Hkv×n_rep, S_kv, D] = [%d, %d, %d, %d] %s), %.1f µs "
                          "per step (%.1f%% of the step)",
                          m.heads_kv_model, m.heads_kv, m.expand_op, units_count_noun(kv->ops, "copy", count, sizeof count),
                          bytes, m.batch, m.heads_kv, m.seq_kv, m.dim,
                          m.dtype, kv->us, 100.0 * kv->share);
        findings_number(fd, "copies_per_step", kv->ops, "");
        findings_number(fd, "bytes_per_step", bytes * kv->ops, "B");
        findings_number(fd, "us_per_step", kv->us, "us");
        findings_number(fd, "kv_heads", m.heads_kv_model, "");
    }
}

void model_findings_derive(const analysis *a, variant_analysis *va)
{
    if (!findings_model_trace(a, va))
        return;
    model_view *v = malloc(sizeof *v);
    if (!v)
        attn_oom();
    if (model_view_build(va, v) == 0) {
        double attn = v->attn_share_total;
        if (v->backend || v->eager_blocks) {
            finding *fd = findings_add(va, FK_ATTENTION_SHARE,
                                       "attention ran as %s: %.1f%% of the step's CUDA time (median over %d step%s)",
                                       v->backend ? v->backend : "eager attention (the series' naive variant)",
                                       100.0 * attn, v->n_steps, v->n_steps == 1 ? "" : "s");
            findings_number(fd, "share", attn, "");
            findings_number(fd, "step_us", v->step_us, "us");
        }
        math_finding(va, v);
        eager_finding(a, va, v);
        around_attention_findings(va, v);
    }
    arch_finding(a, va);
    fp32_inputs_finding(va);
    host_copy_finding(va);
    pace_finding(a, va);
    free(v);
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
