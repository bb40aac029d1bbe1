/* Predictions and ceilings: construction helpers for the variants and their run.json form.
 * No analysis here; predict.c compares them with the counters. */
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

const char *pipe_name(attn_pipe p)
{
    switch (p) {
    case PIPE_TENSOR:
        return "tensor";
    case PIPE_FMA:
        return "fma";
    case PIPE_NONE:
        break;
    }
    return "none";
}

static attn_pipe pipe_from_name(const char *s)
{
    if (s && !strcmp(s, "tensor"))
        return PIPE_TENSOR;
    if (s && !strcmp(s, "fma"))
        return PIPE_FMA;
    return PIPE_NONE;
}

static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static double real(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static double real0(json_t *o, const char *k)
{
    double x = real(o, k);
    return isfinite(x) ? x : 0;
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

json_t *prediction_to_json(const attn_prediction *p)
{
    if (!p->valid)
        return json_null();
    json_t *cls = json_array();
    for (int i = 0; i < p->n; i++) {
        const pred_class *c = &p->cls[i];
        json_array_append_new(cls, json_pack("{s:s,s:s,s:i,s:b,s:o,s:o,s:o,s:s}", "label", c->label, "match",
                                             c->match, "count", c->count, "is_copy", c->is_copy, "dram_bytes",
                                             num(c->dram_bytes), "l2_bytes", num(c->l2_bytes), "flops",
                                             num(c->flops), "pipe", pipe_name(c->pipe)));
    }
    return json_pack("{s:o,s:o,s:o,s:o}", "useful_flops", num(p->useful_flops), "executed_flops",
                     num(p->executed_flops), "min_dram_bytes", num(p->min_dram_bytes), "classes", cls);
}

void prediction_from_json(json_t *o, attn_prediction *p)
{
    memset(p, 0, sizeof *p);
    if (!json_is_object(o))
        return;
    p->valid = 1;
    p->useful_flops = real(o, "useful_flops");
    p->executed_flops = real(o, "executed_flops");
    p->min_dram_bytes = real(o, "min_dram_bytes");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(o, "classes"), i, c)
    {
        if (p->n == PRED_MAX_CLASSES)
            break;
        pred_class *x = &p->cls[p->n++];
        esc_copy_utf8(x->label, sizeof x->label, str(c, "label"));
        esc_copy_utf8(x->match, sizeof x->match, str(c, "match"));
        x->count = (int)json_integer_value(json_object_get(c, "count"));
        x->is_copy = json_is_true(json_object_get(c, "is_copy"));
        x->dram_bytes = real0(c, "dram_bytes");
        x->l2_bytes = real0(c, "l2_bytes");
        x->flops = real0(c, "flops");
        x->pipe = pipe_from_name(str(c, "pipe"));
    }
}

json_t *ceilings_to_json(const ceilings *c)
{
    json_t *o = json_pack("{s:b,s:o,s:o,s:o,s:s,s:s}", "measured", c->measured, "tensor_bf16_tflops",
                          num(c->tensor_bf16_tflops), "fp32_fma_tflops", num(c->fp32_fma_tflops), "copy_tbps",
                          num(c->copy_tbps), "method", c->method, "error", c->error);
    if (o && c->source[0])
        json_object_set_new(o, "measured_in", json_string(c->source));
    return o;
}

void ceilings_from_json(json_t *o, ceilings *c)
{
    memset(c, 0, sizeof *c);
    c->tensor_bf16_tflops = c->fp32_fma_tflops = c->copy_tbps = NAN;
    if (!json_is_object(o))
        return;
    c->measured = json_is_true(json_object_get(o, "measured"));
    c->tensor_bf16_tflops = real(o, "tensor_bf16_tflops");
    c->fp32_fma_tflops = real(o, "fp32_fma_tflops");
    c->copy_tbps = real(o, "copy_tbps");
    esc_copy_utf8(c->method, sizeof c->method, str(o, "method"));
    esc_copy_utf8(c->error, sizeof c->error, str(o, "error"));
    ceilings_set_source(c, str(o, "measured_in"));
}

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
