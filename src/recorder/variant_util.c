/* Helpers every variant uses (declared in variant.h): facts for the archive (attn_fact_add,
 * the head-dim padding fact), attn_fail, which writes one message and returns an ATTN_* code,
 * the device's compute capability and opt-in shared memory, and a fused kernel family's
 * shape check and default configuration (kernels/families.h). */
#include "variant.h"

#include "check.h"
#include "families.h"

#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void attn_fact_add(attn_facts *f, const char *key, double number, const char *fmt, ...)
{
    if (f->n >= ATTN_MAX_FACTS)
        return;
    attn_fact *it = &f->item[f->n++];
    snprintf(it->key, sizeof it->key, "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->value, sizeof it->value, fmt, ap);
    va_end(ap);
    it->number = number;
}

void attn_fact_head_dim_padding(attn_facts *f, int dim, int padded_dim)
{
    if (padded_dim == dim || dim <= 0)
        return;
    /* Both matrix products scale with D: the tensor cores execute padded/real
     * times the useful FLOPs. */
    attn_fact_add(f, "head_dim_padding", padded_dim,
                  "D=%d runs the D=%d kernel; columns %d-%d zero-filled in shared memory (+%.0f%% tensor-core FLOPs)",
                  dim, padded_dim, dim, padded_dim - 1, 100.0 * (padded_dim - dim) / dim);
}

int attn_fail(attn_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int attn_device_caps(int *major, int *minor, int *smem_optin, attn_error *err)
{
    int dev;
    CUDA_TRY(cudaGetDevice(&dev), err);
    CUDA_TRY(cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, dev), err);
    CUDA_TRY(cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, dev), err);
    CUDA_TRY(cudaDeviceGetAttribute(smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), err);
    return ATTN_OK;
}

int attn_fused_shape_check(const char *name, const attn_shape *s, const kernel_family *family, attn_error *why)
{
    if (family->padded_dim(s->dim) < 0)
        return attn_fail(why, 1, "%s: head dim %d not supported: needs a multiple of 8 up to %d", name, s->dim,
                         kernel_family_max_head_dim(family));
    if (s->seq < 1 || s->batch < 1 || s->heads < 1)
        return attn_fail(why, 1, "%s: needs S >= 1, B >= 1, H >= 1 (got S=%d B=%d H=%d)", name, s->seq, s->batch,
                         s->heads);
    if ((long long)s->seq * s->dim > INT_MAX)
        return attn_fail(why, 1, "%s: S*D = %lld exceeds the kernel's int offsets within a head", name,
                         (long long)s->seq * s->dim);
    return 0;
}

int attn_fused_pick(const char *name, const kernel_family *family, int dim, int *config, kernel_config_desc *desc,
                    attn_error *err)
{
    int major, minor, smem_optin, status;
    if ((status = attn_device_caps(&major, &minor, &smem_optin, err)) != ATTN_OK)
        return status;
    *config = family->default_for(dim, major, minor);
    if (*config < 0 || family->describe(*config, desc) != 0)
        return attn_fail(err, ATTN_UNAVAILABLE, "%s: no kernel for D=%d on compute capability %d.%d (needs 8.0+)", name,
                         dim, major, minor);
    if (desc->smem_bytes > (size_t)smem_optin)
        return attn_fail(err, ATTN_UNAVAILABLE, "%s: %s needs %zu B of shared memory per block, this GPU allows %d",
                         name, desc->name, desc->smem_bytes, smem_optin);
    return ATTN_OK;
}

double attn_gqa_useful_flops(const attn_shape *s)
{
    const double sq = attn_q_seq(s), off = s->seq - sq;
    const double pairs = sq * (off + 1) + sq * (sq - 1) / 2; /* (query, visible key) pairs of one head */
    return 4.0 * s->batch * s->heads * s->dim * pairs;
}

double attn_q_bytes(const attn_shape *s) { return 2.0 * s->batch * s->heads * attn_q_seq(s) * s->dim; }

double attn_kv_bytes(const attn_shape *s) { return 2.0 * s->batch * attn_kv_heads(s) * s->seq * s->dim; }

void attn_predict_gqa_fused(attn_prediction *p, const attn_shape *s, int kernel_dim, double extra_bytes,
                            const char *label, const char *match, int count)
{
    memset(p, 0, sizeof *p);
    p->useful_flops = attn_gqa_useful_flops(s);
    const double flops = p->useful_flops * kernel_dim / s->dim;
    const double dram = 2 * attn_q_bytes(s) + 2 * attn_kv_bytes(s) + extra_bytes;
    prediction_add(p, label, match, count, dram, flops, PIPE_TENSOR);
    p->executed_flops = flops;
    p->min_dram_bytes = dram;
}

void attn_predict_decode_tiles(attn_prediction *p, const attn_shape *s, int kernel_dim, int tile_rows, int packed)
{
    if (!attn_shape_is_decode(s) || p->n < 1)
        return;
    const double rows = packed ? (double)attn_group(s) * attn_q_seq(s) : attn_q_seq(s);
    const double heads = packed ? attn_kv_heads(s) : s->heads;
    const double tiles = ceil(rows / tile_rows);
    /* Q·Kᵀ and P·V, 2·rows·keys·D each */
    const double flops = 4.0 * s->batch * heads * tiles * tile_rows * (double)s->seq * kernel_dim;
    p->executed_flops += flops - p->cls[0].flops;
    p->cls[0].flops = flops;
}

int attn_device_sms(void)
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return 0;
    return sms;
}
