/* counters.json: the counter pass's meta block and one entry per profiled range (a
 * kernel, or the whole forward), each a table of the field engine; the metric values
 * are read by hand, each bounded by counters_metric_max. */
#include "counters_json.h"

#include "alloc.h"
#include "err.h"
#include "input.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *metrics_part(const void *base);
static json_t *unavailable_part(const void *base);

#define META_FIELD(k, t, ...) FIELD_OF(counters_meta, "", k, t, __VA_ARGS__)
static const json_field meta_fields[] = {
    META_FIELD("status", FIELD_ENUM, status, .names = counters_status_words),
    META_FIELD("reason", FIELD_STR, reason),
    META_FIELD("method", FIELD_STR, method),
    META_FIELD("chip", FIELD_STR, chip),
    FIELD_PART_ROW("metrics", metrics_part),
    FIELD_PART_ROW("unavailable", unavailable_part),
    META_FIELD("passes", FIELD_INT, passes),
    /* a whole pass of every variant's kernels: far below a day */
    META_FIELD("pass_seconds", FIELD_REAL, pass_seconds, .rhi = 1e9),
};

#define RANGE_FIELD(k, t, ...) FIELD_OF(counter_range, "", k, t, __VA_ARGS__)
static const json_field range_fields[] = {
    RANGE_FIELD("variant", FIELD_STR, variant),
    RANGE_FIELD("kind", FIELD_STR, kind),
    /* order within the variant's forward; -1: the forward itself */
    RANGE_FIELD("index", FIELD_INT, index, .ilo = -1, .absent = -1),
    RANGE_FIELD("name", FIELD_STR, name),
};

static json_t *metric_names(const counters_meta *m, int available)
{
    json_t *a = json_array();
    for (int i = 0; i < M_COUNT; i++)
        if (!m->available[i] == !available)
            json_array_append_new(a, json_string(counters_metric_names[i]));
    return a;
}

static json_t *metrics_part(const void *base) { return metric_names(base, 1); }
static json_t *unavailable_part(const void *base) { return metric_names(base, 0); }

json_t *counters_meta_to_json(const counters_meta *m) { return json_fields_object(FIELDS(meta_fields), m); }

void counters_meta_from_json(json_reader *rd, json_t *o, const char *where, counters_meta *m)
{
    memset(m, 0, sizeof *m);
    m->pass_seconds = NAN;
    if (!o)
        return;
    if (!json_is_object(o)) {
        json_reader_bad(rd, where, "counters", "an object");
        return;
    }
    json_fields_read(rd, FIELDS(meta_fields), o, where, m);
    size_t i;
    json_t *n;
    json_array_foreach(json_reader_array(rd, where, o, "metrics"), i, n)
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
        json_t *vals = json_object(), *o = json_fields_object(FIELDS(range_fields), r);
        for (int m = 0; m < M_COUNT; m++)
            if (s->meta.available[m])
                json_object_set_new(vals, counters_metric_names[m], json_num(r->v[m]));
        json_object_set_new(o, "metrics", vals);
        json_array_append_new(ranges, o);
    }
    json_t *root = json_pack("{s:i,s:o,s:o}", "counters_version", 1, "meta", counters_meta_to_json(&s->meta),
                             "ranges", ranges);
    int rc = root ? json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(12)) : -1;
    json_decref(root);
    return rc ? err_set(err, errlen, EXIT_IO, "%s: cannot write: %s", path, strerror(errno)) : EXIT_OK;
}

/* One entry of "ranges" into a new range of s; its metrics bounded by counters_metric_max. */
static void read_range(json_reader *rd, counters_set *s, json_t *o, size_t i)
{
    char where[48];
    snprintf(where, sizeof where, "ranges[%zu]", i);
    if (!json_is_object(o)) {
        json_reader_bad(rd, "", where, "an object");
        return;
    }
    counter_range *r = counters_add(s, "", "", -1, "");
    if (!r)
        attn_oom();
    json_fields_read(rd, FIELDS(range_fields), o, where, r);
    json_t *vals = json_reader_object(rd, where, o, "metrics");
    for (int m = 0; m < M_COUNT; m++) {
        json_t *v = json_object_get(vals, counters_metric_names[m]);
        if (v && !json_is_number(v) && !json_is_null(v))
            json_reader_bad(rd, "", where, "metrics: numbers or null");
        r->v[m] = json_is_number(v) ? json_number_value(v) : NAN;
        double hi = counters_metric_max(m);
        if (isfinite(r->v[m]) && (r->v[m] < 0 || r->v[m] > hi) && !rd->failed++)
            err_set(rd->err, rd->errlen, EXIT_BAD_ARCHIVE, "%s: %s.metrics.%s: out of range (0 to %g)", rd->path,
                    where, counters_metric_names[m], hi);
    }
}

int counters_read_json(counters_set *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    json_t *root = NULL;
    int rc = input_read_json(path, INPUT_MAX_DOM_BYTES, &root, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    json_t *ranges = json_object_get(root, "ranges");
    if (!json_is_object(json_object_get(root, "meta")) || !json_is_array(ranges)) {
        json_decref(root);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: no meta or ranges: not an attnprof counters.json", path);
    }
    json_reader rd = {path, err, errlen, 0};
    counters_meta_from_json(&rd, json_object_get(root, "meta"), "meta", &s->meta);
    size_t i;
    json_t *o;
    json_array_foreach(ranges, i, o)
    {
        if (rd.failed)
            break;
        read_range(&rd, s, o, i);
    }
    json_decref(root);
    if (rd.failed) {
        counters_free(s);
        return EXIT_BAD_ARCHIVE;
    }
    return EXIT_OK;
}
