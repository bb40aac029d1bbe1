/* Predictions and ceilings: construction helpers for the variants (their run.json form is
 * io/prediction_json.c). No analysis here; predict.c compares them with the counters. */
#include "prediction.h"

#include "escape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

pred_class *prediction_add(attn_prediction *p, const char *label, const char *match, int count, double dram_bytes,
                           double flops, attn_pipe pipe)
{
    if (p->n >= PRED_MAX_CLASSES)
        return NULL;
    pred_class *c = &p->cls[p->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->match, sizeof c->match, "%s", match);
    c->count = count;
    c->dram_bytes = dram_bytes;
    c->flops = flops;
    c->pipe = pipe;
    p->valid = 1;
    return c;
}

int pred_class_matches(const pred_class *c, const char *name)
{
    const char *s = c->match;
    while (*s) {
        const char *bar = strchr(s, '|');
        size_t len = bar ? (size_t)(bar - s) : strlen(s);
        char part[96];
        if (len && len < sizeof part) {
            memcpy(part, s, len);
            part[len] = '\0';
            if (strstr(name, part))
                return 1;
        }
        if (!bar)
            break;
        s = bar + 1;
    }
    return 0;
}

const char *const pipe_words[] = {"none", "tensor", "fma", NULL};

const char *pipe_name(attn_pipe p) { return p >= PIPE_NONE && p <= PIPE_FMA ? pipe_words[p] : "none"; }

void ceilings_set_source(ceilings *c, const char *name)
{
    size_t k = 0;
    for (const char *p = name; p && *p && k + 1 < sizeof c->source; p++)
        c->source[k++] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-", *p) ? *p : '_';
    c->source[k] = '\0';
}

double ceilings_ridge(const ceilings *c)
{
    if (!(c->tensor_bf16_tflops > 0) || !(c->copy_tbps > 0))
        return NAN;
    return c->tensor_bf16_tflops / c->copy_tbps;
}

double prediction_io_bytes(const attn_shape *s) { return (double)s->batch * s->heads * s->seq * s->dim * 2; }

double prediction_scores_bytes(const attn_shape *s) { return (double)s->batch * s->heads * s->seq * (double)s->seq * 2; }

double prediction_useful_flops(const attn_shape *s) { return 2.0 * s->batch * s->heads * (double)s->seq * s->seq * s->dim; }

void prediction_fused_tiles(const attn_shape *s, int block_m, int block_n, double *flops, double *kv_l2_bytes)
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

void prediction_fused_kernel(attn_prediction *p, const attn_shape *s, int kernel_dim, int block_m, int block_n,
                             double extra_bytes, const char *match)
{
    memset(p, 0, sizeof *p);
    attn_shape padded = *s;
    padded.dim = kernel_dim;
    double flops = 0, kv_l2 = 0, unused = 0;
    prediction_fused_tiles(&padded, block_m, block_n, &flops, &unused);
    prediction_fused_tiles(s, block_m, block_n, &unused, &kv_l2);
    const double io = prediction_io_bytes(s);
    p->useful_flops = prediction_useful_flops(s);
    pred_class *k = prediction_add(p, "fused kernel", match, 1, 4 * io + extra_bytes, flops, PIPE_TENSOR);
    if (k)
        k->l2_bytes = 2 * io + kv_l2 + extra_bytes; /* Q read, O written, K/V per query tile */
    p->executed_flops = flops;
    p->min_dram_bytes = 4 * io + extra_bytes;
}
