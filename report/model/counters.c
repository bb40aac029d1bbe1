/* counters.json: the counter pass's model, its JSON reader and writer, and the derived
 * quantities (bytes, FLOPs) every consumer computes the same way. */
#include "counters.h"

#include <errno.h>
#include "escape.h"
#include "input.h"

#include <limits.h>
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

const char *counters_status_name(ctr_status s)
{
    switch (s) {
    case CTR_OK:
        return "ok";
    case CTR_FORBIDDEN:
        return "forbidden";
    case CTR_FAILED:
        return "failed";
    case CTR_NOT_RUN:
        break;
    }
    return "not_run";
}

static ctr_status status_from_name(const char *s)
{
    if (!s)
        return CTR_NOT_RUN;
    if (!strcmp(s, "ok"))
        return CTR_OK;
    if (!strcmp(s, "forbidden"))
        return CTR_FORBIDDEN;
    if (!strcmp(s, "failed"))
        return CTR_FAILED;
    return CTR_NOT_RUN;
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

static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

json_t *counters_meta_to_json(const counters_meta *m)
{
    json_t *avail = json_array(), *unavail = json_array();
    for (int i = 0; i < M_COUNT; i++)
        json_array_append_new(m->available[i] ? avail : unavail, json_string(counters_metric_names[i]));
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:i}", "status", counters_status_name(m->status), "reason",
                          m->reason, "method", m->method, "chip", m->chip, "metrics", avail, "unavailable", unavail,
                          "passes", m->passes);
    json_object_set_new(o, "pass_seconds", num(m->pass_seconds));
    return o;
}

void counters_meta_from_json(json_t *o, counters_meta *m)
{
    memset(m, 0, sizeof *m);
    m->pass_seconds = NAN;
    if (!json_is_object(o))
        return;
    m->status = status_from_name(json_string_value(json_object_get(o, "status")));
    esc_copy_utf8(m->reason, sizeof m->reason, str(o, "reason"));
    esc_copy_utf8(m->method, sizeof m->method, str(o, "method"));
    esc_copy_utf8(m->chip, sizeof m->chip, str(o, "chip"));
    json_int_t passes = json_integer_value(json_object_get(o, "passes"));
    m->passes = passes < 0 ? -1 : passes > INT_MAX ? INT_MAX : (int)passes; /* -1: refused by the reader */
    json_t *ps = json_object_get(o, "pass_seconds");
    m->pass_seconds = json_is_number(ps) ? json_number_value(ps) : NAN;
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(o, "metrics"), i, n)
    {
        for (int k = 0; k < M_COUNT; k++)
            if (json_is_string(n) && !strcmp(json_string_value(n), counters_metric_names[k]))
                m->available[k] = 1;
    }
}

int counters_write_json(const counters_set *s, const char *path, char *err, size_t errlen)
{
    json_t *ranges = json_array();
    for (int i = 0; i < s->n; i++) {
        const counter_range *r = &s->r[i];
        json_t *vals = json_object();
        for (int m = 0; m < M_COUNT; m++)
            if (s->meta.available[m])
                json_object_set_new(vals, counters_metric_names[m], num(r->v[m]));
        json_array_append_new(ranges, json_pack("{s:s,s:s,s:i,s:s,s:o}", "variant", r->variant, "kind", r->kind,
                                                "index", r->index, "name", r->name, "metrics", vals));
    }
    json_t *root = json_pack("{s:i,s:o,s:o}", "counters_version", 1, "meta", counters_meta_to_json(&s->meta),
                             "ranges", ranges);
    int rc = root ? json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(12)) : -1;
    json_decref(root);
    if (rc) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int counters_read_json(counters_set *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    json_error_t je;
    json_t *root = input_load_json(path, err, errlen, &je);
    if (!root && je.position < 0)
        return -1; /* not a regular file, too large, unreadable: err says which */
    if (!root) {
        snprintf(err, errlen, "%s: not valid JSON (line %d: %s)", path, je.line, je.text);
        return -1;
    }
    json_t *ranges = json_object_get(root, "ranges");
    if (!json_is_object(json_object_get(root, "meta")) || !json_is_array(ranges)) {
        snprintf(err, errlen, "%s: no meta or ranges: not an attnprof counters.json", path);
        json_decref(root);
        return -1;
    }
    counters_meta_from_json(json_object_get(root, "meta"), &s->meta);
    size_t i;
    json_t *o;
    json_array_foreach(ranges, i, o)
    {
        json_t *idx = json_object_get(o, "index");
        counter_range *r = counters_add(s, str(o, "variant"), str(o, "kind"),
                                        json_is_integer(idx) ? (int)json_integer_value(idx) : -1, str(o, "name"));
        if (!r) {
            snprintf(err, errlen, "%s: out of memory", path);
            json_decref(root);
            counters_free(s);
            return -1;
        }
        json_t *vals = json_object_get(o, "metrics");
        const char *why = json_is_object(o) ? NULL : "an object";
        if (!why && idx && !(json_is_integer(idx) && json_integer_value(idx) >= -1 &&
                             json_integer_value(idx) <= INT_MAX))
            why = "index: a whole number from -1 to 2^31-1";
        if (!why && vals && !json_is_object(vals))
            why = "metrics: an object";
        for (int m = 0; m < M_COUNT && !why; m++) {
            json_t *v = json_object_get(vals, counters_metric_names[m]);
            if (v && !json_is_number(v) && !json_is_null(v))
                why = "metrics: numbers or null";
            r->v[m] = json_is_number(v) ? json_number_value(v) : NAN;
            if (!isfinite(r->v[m]))
                continue;
            double hi = counters_metric_max(m);
            if (r->v[m] < 0 || r->v[m] > hi) {
                snprintf(err, errlen, "%s: ranges[%zu].metrics.%s: out of range (0 to %g)", path, i,
                         counters_metric_names[m], hi);
                json_decref(root);
                counters_free(s);
                return -1;
            }
        }
        if (why) {
            snprintf(err, errlen, "%s: ranges[%zu]: expected %s", path, i, why);
            json_decref(root);
            counters_free(s);
            return -1;
        }
    }
    json_decref(root);
    if (s->meta.passes < 0 || (isfinite(s->meta.pass_seconds) && s->meta.pass_seconds < 0)) {
        snprintf(err, errlen, "%s: meta: passes and pass_seconds must not be negative", path);
        counters_free(s);
        return -1;
    }
    return 0;
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
