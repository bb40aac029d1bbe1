/* The counter pass in memory (its ranges, built by the recorder) and the derived
 * quantities (bytes, FLOPs) every consumer computes the same way; counters.json's reader
 * and writer are io/counters_json.c. */
#include "counters.h"

#include "escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const counters_metric_names[M_COUNT] = {
    [M_DURATION_NS] = "gpu__time_duration.sum",
    [M_DRAM_READ] = "dram__bytes_read.sum",
    [M_DRAM_WRITE] = "dram__bytes_write.sum",
    [M_L2_READ_SECTORS] = "lts__t_sectors_srcunit_tex_op_read.sum",
    [M_L2_WRITE_SECTORS] = "lts__t_sectors_srcunit_tex_op_write.sum",
    [M_TENSOR_INST] = "sm__inst_executed_pipe_tensor.sum",
    [M_GMMA_INST] = "sm__inst_executed_pipe_tensor_op_gmma.sum",
    [M_FFMA] = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    [M_FADD] = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
    [M_FMUL] = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    [M_HMMA_BF16_OPS] = "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum",
    [M_HGMMA_BF16_OPS] = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
    [M_WARPS_ACTIVE_PCT] = "sm__warps_active.avg.pct_of_peak_sustained_active",
    [M_SM_THROUGHPUT_PCT] = "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    [M_DRAM_THROUGHPUT_PCT] = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
};

const char *const counters_status_words[] = {"not_run", "ok", "forbidden", "failed", NULL};

const char *counters_status_name(ctr_status s)
{
    return s >= CTR_NOT_RUN && s <= CTR_FAILED ? counters_status_words[s] : "not_run";
}

counter_range *counters_add(counters_set *s, const char *variant, const char *kind, int index, const char *name)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 32;
        counter_range *r = realloc(s->r, sizeof *r * (size_t)cap);
        if (!r)
            return NULL;
        s->r = r;
        s->cap = cap;
    }
    counter_range *r = &s->r[s->n++];
    memset(r, 0, sizeof *r);
    esc_copy_utf8(r->variant, sizeof r->variant, variant);
    esc_copy_utf8(r->kind, sizeof r->kind, kind);
    esc_copy_utf8(r->name, sizeof r->name, name);
    r->index = index;
    for (int m = 0; m < M_COUNT; m++)
        r->v[m] = NAN;
    return r;
}

void counters_free(counters_set *s)
{
    free(s->r);
    s->r = NULL;
    s->n = s->cap = 0;
}

double counters_metric_max(int m)
{
    /* Percentages of a peak; every other metric is a count (bytes, sectors, instructions,
     * operations, ns) that 10^18 bounds far above any kernel (an H200 moves 4.8e12
     * bytes and does about 1e15 tensor operations a second), so every number derived
     * from them (bytes/s, FLOP/s, ratios) prints in a few digits. */
    return m == M_WARPS_ACTIVE_PCT || m == M_SM_THROUGHPUT_PCT || m == M_DRAM_THROUGHPUT_PCT ? 100.0 * 1.05 : 1e18;
}

static double or0(double x) { return isfinite(x) ? x : 0; }

double counters_dram_bytes(const counter_range *r) { return r->v[M_DRAM_READ] + r->v[M_DRAM_WRITE]; }

double counters_l2_bytes(const counter_range *r)
{
    return (r->v[M_L2_READ_SECTORS] + r->v[M_L2_WRITE_SECTORS]) * 32.0;
}

double counters_fp32_flops(const counter_range *r) { return 2 * r->v[M_FFMA] + r->v[M_FADD] + r->v[M_FMUL]; }

/* The ops_path_tensor counters count floating-point operations, not multiply-adds:
 * on the H200 naive's Q·Kᵀ GEMM (2·B·H·S²·D = 17.2 GFLOP at 8×16×1024×64) read
 * 1.72e10 (2026-11-30, bench/RESULTS.md). */
double counters_tensor_flops(const counter_range *r)
{
    if (!isfinite(r->v[M_HMMA_BF16_OPS]) && !isfinite(r->v[M_HGMMA_BF16_OPS]))
        return NAN;
    return or0(r->v[M_HMMA_BF16_OPS]) + or0(r->v[M_HGMMA_BF16_OPS]);
}

double counters_flops(const counter_range *r)
{
    return or0(counters_fp32_flops(r)) + or0(counters_tensor_flops(r));
}

double counters_seconds(const counter_range *r) { return r->v[M_DURATION_NS] * 1e-9; }
int counters_is_kernel(const counter_range *r) { return !strcmp(r->kind, "kernel") || !strcmp(r->kind, "bwd_kernel"); }
