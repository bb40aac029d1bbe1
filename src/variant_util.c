#include "variant.h"

#include "check.h"

#include <math.h>
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

double attn_io_bytes(const attn_shape *s) { return (double)s->batch * s->heads * s->seq * s->dim * 2; }

double attn_scores_bytes(const attn_shape *s) { return (double)s->batch * s->heads * s->seq * (double)s->seq * 2; }

double attn_useful_flops(const attn_shape *s) { return 2.0 * s->batch * s->heads * (double)s->seq * s->seq * s->dim; }

void attn_fused_tiles(const attn_shape *s, int block_m, int block_n, double *flops, double *kv_l2_bytes)
{
    double f = 0, kv = 0;
    for (long long q0 = 0; q0 < s->seq; q0 += block_m) {
        long long rows = s->seq - q0 < block_m ? s->seq - q0 : block_m;
        long long last = q0 + rows; /* keys 0 .. last-1 are at or below the diagonal */
        long long keys = (last + block_n - 1) / block_n * block_n;
        if (keys > s->seq)
            keys = s->seq;
        f += 4.0 * rows * keys * s->dim; /* 2·rows·keys·D for Q·Kᵀ, the same for P·V */
        kv += 2.0 * keys * s->dim * 2;   /* K and V tiles, bf16 */
    }
    double bh = (double)s->batch * s->heads;
    *flops = bh * f;
    *kv_l2_bytes = bh * kv;
}
