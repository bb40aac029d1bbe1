/* A variant's prediction (its classes of GPU operations, their bytes and FLOPs) and the
 * ceilings measured in the same run, as run.json carries them: three tables of the
 * field engine; the classes array and the ceilings' source name are the hand-read parts. */
#include "prediction_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CLASS_FIELD(k, t, ...) FIELD_OF(pred_class, "", k, t, __VA_ARGS__)
#define PRED_FIELD(k, t, ...) FIELD_OF(attn_prediction, "", k, t, __VA_ARGS__)
#define CEIL_FIELD(k, t, ...) FIELD_OF(ceilings, "", k, t, __VA_ARGS__)

/* Bytes and FLOPs of one forward: far above any GPU's (an H200 does about 1e15 a second). */
#define PRED_MAX 1e30

/* A class claims nothing where a number is absent or null (0). */
static const json_field class_fields[] = {
    CLASS_FIELD("label", FIELD_STR, label),
    CLASS_FIELD("match", FIELD_STR, match),
    CLASS_FIELD("count", FIELD_INT, count),
    CLASS_FIELD("is_copy", FIELD_BOOL, is_copy),
    CLASS_FIELD("dram_bytes", FIELD_REAL, dram_bytes, .flags = ABSENT_ZERO, .rhi = PRED_MAX),
    CLASS_FIELD("l2_bytes", FIELD_REAL, l2_bytes, .flags = ABSENT_ZERO, .rhi = PRED_MAX),
    CLASS_FIELD("flops", FIELD_REAL, flops, .flags = ABSENT_ZERO, .rhi = PRED_MAX),
    CLASS_FIELD("pipe", FIELD_ENUM, pipe, .names = pipe_words),
};

static json_t *classes_part(const void *base);

static const json_field prediction_fields[] = {
    PRED_FIELD("useful_flops", FIELD_REAL, useful_flops, .rhi = PRED_MAX),
    PRED_FIELD("executed_flops", FIELD_REAL, executed_flops, .rhi = PRED_MAX),
    PRED_FIELD("min_dram_bytes", FIELD_REAL, min_dram_bytes, .rhi = PRED_MAX),
    FIELD_PART_ROW("classes", classes_part),
};

/* TFLOP/s and TB/s: far above any GPU. */
static const json_field ceiling_fields[] = {
    CEIL_FIELD("measured", FIELD_BOOL, measured),
    CEIL_FIELD("tensor_bf16_tflops", FIELD_REAL, tensor_bf16_tflops, .rhi = 1e9),
    CEIL_FIELD("fp32_fma_tflops", FIELD_REAL, fp32_fma_tflops, .rhi = 1e9),
    CEIL_FIELD("copy_tbps", FIELD_REAL, copy_tbps, .rhi = 1e9),
    CEIL_FIELD("method", FIELD_STR, method),
    CEIL_FIELD("error", FIELD_STR, error),
    /* read by hand: ceilings_set_source keeps the name safe for every format */
    CEIL_FIELD("measured_in", FIELD_STR, source, .flags = WHEN_NONEMPTY),
};

static json_t *classes_part(const void *base)
{
    const attn_prediction *p = base;
    json_t *cls = json_array();
    for (int i = 0; i < p->n; i++)
        json_array_append_new(cls, json_fields_object(FIELDS(class_fields), &p->cls[i]));
    return cls;
}

json_t *prediction_to_json(const attn_prediction *p)
{
    return p->valid ? json_fields_object(FIELDS(prediction_fields), p) : json_null();
}

void prediction_from_json(json_reader *rd, json_t *o, const char *where, attn_prediction *p)
{
    memset(p, 0, sizeof *p);
    if (!o || json_is_null(o))
        return;
    char at[64];
    snprintf(at, sizeof at, "%s%sprediction", where, *where ? "." : "");
    if (!json_is_object(o)) {
        json_reader_bad(rd, where, "prediction", "an object or null");
        return;
    }
    p->valid = 1;
    json_fields_read(rd, FIELDS(prediction_fields), o, at, p);
    size_t i;
    json_t *c;
    json_array_foreach(json_reader_array(rd, at, o, "classes"), i, c)
    {
        if (p->n == PRED_MAX_CLASSES)
            break;
        char cw[80];
        snprintf(cw, sizeof cw, "%s.classes[%zu]", at, i);
        if (!json_is_object(c)) {
            json_reader_bad(rd, "", cw, "an object");
            break;
        }
        json_fields_read(rd, FIELDS(class_fields), c, cw, &p->cls[p->n++]);
    }
}

json_t *ceilings_to_json(const ceilings *c) { return json_fields_object(FIELDS(ceiling_fields), c); }

void ceilings_from_json(json_reader *rd, json_t *o, ceilings *c)
{
    memset(c, 0, sizeof *c);
    c->tensor_bf16_tflops = c->fp32_fma_tflops = c->copy_tbps = NAN;
    if (!o || json_is_null(o))
        return;
    if (!json_is_object(o)) {
        json_reader_bad(rd, "", "ceilings", "an object or null");
        return;
    }
    json_fields_read(rd, FIELDS(ceiling_fields), o, "ceilings", c);
    ceilings_set_source(c, json_reader_str(rd, "ceilings", o, "measured_in"));
}
