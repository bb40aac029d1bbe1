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
 * - cpu_bound_step (notice): the step's host time exceeds its CUDA time (the same
 *   threshold as the series' host_bound); the GPU's idle share of the step's GPU span
 *   and the host time per launched operation are its numbers. */
#include "model_findings.h"
#include "alloc.h"

#include "findings.h"
#include "model_inputs.h"
#include "model_roles.h"

#include <math.h>
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
    for (int k = 0; k < v->n_rows; k++) {
        const model_role_row *r = &v->rows[k];
        if (r->role != MROLE_ATTN_FUSED || !strstr(r->implementation, "math"))
            continue;
        finding *fd = findings_add(va, FK_MATH_FALLBACK,
                                   "SDPA fell back to its math backend (\x01" "aten::_scaled_dot_product_attention_math"
                                   "\x02): %g operations per step, %.1f µs (%.1f%% of the step), attention unfused as "
                                   "in the series' reference; PyTorch takes it when no fused backend accepts the "
                                   "inputs (dtype, head dim, mask, dropout, device)",
                                   r->ops, r->us, 100.0 * r->share);
        findings_number(fd, "ops_per_step", r->ops, "");
        findings_number(fd, "us_per_step", r->us, "us");
        return;
    }
}

static void cpu_bound_finding(variant_analysis *va)
{
    int rep = analysis_median_forward(va);
    if (rep < 0 || !(va->cpu_us.median > va->cuda_us.median))
        return;
    const forward *f = &va->forwards[rep];
    if (f->n_ops < 1 || !(f->gpu_span_us > 0))
        return;
    double idle = f->gpu_span_us - f->cuda_us;
    if (idle < 0)
        idle = 0; /* operations overlapping on several streams */
    finding *fd = findings_add(va, FK_CPU_BOUND_STEP,
                               "CPU-bound step: host time per step (%.1f µs) exceeds its CUDA time (%.1f µs); in the "
                               "representative step the GPU is idle %.0f%% of the %.1f µs from its first to its last "
                               "operation, and the host spends %.1f µs per launched operation (measure CPU time beside "
                               "CUDA time)",
                               va->cpu_us.median, va->cuda_us.median, 100.0 * idle / f->gpu_span_us, f->gpu_span_us,
                               f->cpu_us / f->n_ops);
    findings_number(fd, "cpu_us", va->cpu_us.median, "us");
    findings_number(fd, "cuda_us", va->cuda_us.median, "us");
    findings_number(fd, "gpu_idle_share", idle / f->gpu_span_us, "");
    findings_number(fd, "host_us_per_op", f->cpu_us / f->n_ops, "us");
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
    }
    arch_finding(a, va);
    fp32_inputs_finding(va);
    host_copy_finding(va);
    cpu_bound_finding(va);
    free(v);
}
