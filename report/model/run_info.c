/* run.json: tool version, command line, shape, GPU and library versions, and
 * each variant's status, error, correctness and CUPTI-overhead probe. */
#include "run_info.h"

#include "escape.h"
#include "input.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *variant_status_name(variant_status s)
{
    switch (s) {
    case VARIANT_OK:
        return "ok";
    case VARIANT_FAILED:
        return "FAILED";
    case VARIANT_UNAVAILABLE:
        return "unavailable";
    case VARIANT_SKIPPED:
        return "skipped";
    }
    return "?";
}

const char *run_producer_name(run_producer p)
{
    switch (p) {
    case PRODUCER_ATTNPROF:
        return "attnprof";
    case PRODUCER_PYTORCH:
        return "pytorch_profiler";
    case PRODUCER_KINETO:
        return "kineto";
    case PRODUCER_INJECTION:
        return "injection";
    }
    return "?";
}

int run_info_shape_recorded(const run_info *r)
{
    return r->shape.batch > 0 && r->shape.heads > 0 && r->shape.seq > 0 && r->shape.dim > 0;
}

const char *run_producer_phrase(const run_info *r)
{
    switch (r->producer) {
    case PRODUCER_PYTORCH:
        return "imported PyTorch profiler traces";
    case PRODUCER_KINETO:
        return "imported Kineto traces";
    case PRODUCER_INJECTION:
        return "recorded by injection";
    default:
        return "attnprof run";
    }
}

/* -1 for a word that is no status. */
static int status_from_name(const char *s)
{
    for (int st = VARIANT_OK; st <= VARIANT_SKIPPED; st++)
        if (!strcmp(s, variant_status_name((variant_status)st)))
            return st;
    return -1;
}

/* run.json's scalar fields, one row each, in the order they are written: the writer
 * walks the table to build the document and the reader walks it to fill the struct,
 * so a field is added, renamed or bounded in one place. Rows of type FIELD_OBJECT
 * open a nested object (later rows name it in .object); FIELD_PART rows stand for
 * what is no scalar (arrays, other modules' objects) so that the key order stays the
 * table's; their reading is done by hand after the scalars. */
typedef enum field_type {
    FIELD_OBJECT,       /* a nested object; written when .present says so (NULL: always) */
    FIELD_PART,         /* written by .part (NULL from it: the key is left out); not read here */
    FIELD_STR,          /* char[.size] */
    FIELD_INT,          /* int in [.ilo, .ihi] */
    FIELD_INT64,        /* int64_t in [.ilo, .ihi] */
    FIELD_SEED,         /* unsigned long long, any 64-bit pattern */
    FIELD_BOOL,         /* int, true or false */
    FIELD_REAL,         /* double in [.rlo, .rhi], null when not finite */
    FIELD_REAL_AS_INT,  /* double written as a whole number (when finite), read as a real */
    FIELD_CC,           /* ints major (.offset) and minor (.aux) as "major.minor" */
    FIELD_CUDA_VERSION, /* int 12080 written as "12.8"; never read (the _int key is) */
} field_type;

enum {
    WHEN_NONEMPTY = 1,   /* a string: left out when "" */
    WHEN_IMPORTED = 2,   /* written by imports only */
    WHEN_RECORDED = 4,   /* int flag at .aux: 1 when read from the file; an import that
                          * does not know it leaves the key out */
    WHEN_NONNEG = 8,     /* an int: left out when negative, and absent reads as -1 */
    WHEN_POSITIVE = 16,  /* an int: left out when 0 */
    WHEN_FINITE = 32,    /* a real: left out when not finite */
    MUST_BE_FINITE = 64, /* a real: the document cannot be written without it */
    WHOLE_STRING = 128,  /* a string that must not be cut on reading */
};

typedef struct json_field {
    const char *object; /* "" for the top level of the table's object */
    const char *key;
    field_type type;
    size_t offset, aux, size;
    int flags;
    long long ilo, ihi; /* FIELD_INT, FIELD_INT64: both 0 means 0..INT_MAX */
    double rlo, rhi;    /* FIELD_REAL, FIELD_REAL_AS_INT */
    int (*present)(const void *base);     /* FIELD_OBJECT */
    json_t *(*part)(const void *base);    /* FIELD_PART */
    const char *object_error;             /* FIELD_OBJECT: the key named when it is no object */
} json_field;

/* A row for `member` of struct `st`; the optional arguments are designators
 * (.flags, .ilo/.ihi, .rlo/.rhi, .aux). */
#define FIELD_OF(st, obj, k, t, member, ...) \
    {.object = obj, .key = k, .type = t, .offset = offsetof(st, member), .size = sizeof(((st *)0)->member), \
     __VA_ARGS__}
#define RUN_FIELD(obj, k, t, ...) FIELD_OF(run_info, obj, k, t, __VA_ARGS__)
#define RUN_OBJECT(k, present_fn, object_error_key) \
    {.object = "", .key = k, .type = FIELD_OBJECT, .present = present_fn, .object_error = object_error_key}
#define RUN_PART(k, part_fn) {.object = "", .key = k, .type = FIELD_PART, .part = part_fn}
#define VARIANT_FIELD(k, t, ...) FIELD_OF(variant_result, "", k, t, __VA_ARGS__)
#define PROBE_FIELD(k, t, ...) FIELD_OF(occupancy_probe, "", k, t, __VA_ARGS__)
#define SOURCE_FIELD(k, t, ...) FIELD_OF(import_source, "", k, t, __VA_ARGS__)

static json_t *variants_part(const void *base);
static json_t *provenance_part(const void *base);
static json_t *probes_part(const void *base);
static json_t *ceilings_part(const void *base);
static json_t *counters_part(const void *base);
static json_t *sources_part(const void *base);
static json_t *status_part(const void *base);
static json_t *facts_part(const void *base);
static json_t *prediction_part(const void *base);

static int measured_present(const void *base) { return ((const run_info *)base)->env.clock_samples > 0; }
static int host_present(const void *base)
{
    const run_env *e = &((const run_info *)base)->env;
    return e->host_cpu[0] || e->os[0];
}
/* Issue 25: absent in archives from before it and in imports (measurement.recorded = 0). */
static int measurement_present(const void *base) { return ((const run_info *)base)->measurement.recorded; }
static int stop_present(const void *base) { return ((const variant_result *)base)->stop.reason[0] != '\0'; }
static int build_present(const void *base)
{
    const run_env *e = &((const run_info *)base)->env;
    return e->nvcc[0] || e->build_flags[0];
}

static const json_field run_fields[] = {
    RUN_FIELD("", "tool_version", FIELD_STR, tool_version),
    RUN_FIELD("", "command_line", FIELD_STR, command_line),
    RUN_FIELD("", "date", FIELD_STR, date),
    RUN_OBJECT("shape", NULL, NULL),
    /* The shape's product and the sizes derived from it stay far inside 64 bits. */
    RUN_FIELD("shape", "batch", FIELD_INT, shape.batch, .ihi = 1 << 20),
    RUN_FIELD("shape", "heads", FIELD_INT, shape.heads, .ihi = 1 << 20),
    RUN_FIELD("shape", "seq", FIELD_INT, shape.seq, .ihi = 1 << 24),
    RUN_FIELD("shape", "dim", FIELD_INT, shape.dim, .ihi = 1 << 16),
    RUN_FIELD("", "dtype", FIELD_STR, dtype),
    RUN_FIELD("", "causal", FIELD_BOOL, causal),
    RUN_FIELD("", "seed", FIELD_SEED, seed, .aux = offsetof(run_info, seed_recorded), .flags = WHEN_RECORDED,
              .ilo = LLONG_MIN, .ihi = LLONG_MAX),
    RUN_FIELD("", "iters", FIELD_INT, iters),
    RUN_FIELD("", "warmup", FIELD_INT, warmup, .aux = offsetof(run_info, warmup_recorded), .flags = WHEN_RECORDED),
    RUN_FIELD("", "rel_error_threshold", FIELD_REAL, rel_error_threshold, .flags = MUST_BE_FINITE, .rhi = 1e30),
    RUN_OBJECT("gpu", NULL, NULL),
    RUN_FIELD("gpu", "name", FIELD_STR, device.name),
    RUN_FIELD("gpu", "compute_capability", FIELD_CC, device.major, .aux = offsetof(run_info, device.minor)),
    RUN_FIELD("gpu", "sm_count", FIELD_INT, device.sm_count),
    RUN_FIELD("gpu", "total_memory_bytes", FIELD_INT64, device.total_mem, .ihi = INT64_MAX),
    RUN_FIELD("gpu", "clock_khz", FIELD_INT, device.clock_khz),
    RUN_FIELD("gpu", "memory_clock_khz", FIELD_INT, device.mem_clock_khz),
    RUN_FIELD("gpu", "memory_bus_width_bits", FIELD_INT, device.mem_bus_width),
    RUN_FIELD("gpu", "l2_bytes", FIELD_INT, device.l2_bytes),
    RUN_FIELD("gpu", "uuid", FIELD_STR, gpu_uuid, .flags = WHEN_NONEMPTY),
    RUN_FIELD("gpu", "pci_bus_id", FIELD_STR, gpu_pci_bus_id, .flags = WHEN_NONEMPTY),
    RUN_FIELD("gpu", "cuda_visible_devices", FIELD_STR, visible_devices, .flags = WHEN_NONEMPTY),
    RUN_OBJECT("versions", NULL, NULL),
    RUN_FIELD("versions", "driver", FIELD_STR, driver_version),
    RUN_FIELD("versions", "cuda_runtime", FIELD_CUDA_VERSION, cuda_runtime_version),
    RUN_FIELD("versions", "cuda_driver_api", FIELD_CUDA_VERSION, cuda_driver_version),
    RUN_FIELD("versions", "cublas", FIELD_INT, cublas_version),
    RUN_FIELD("versions", "cudnn", FIELD_INT, cudnn_version),
    RUN_FIELD("versions", "cupti", FIELD_INT, cupti_version),
    RUN_FIELD("versions", "cuda_runtime_int", FIELD_INT, cuda_runtime_version),
    RUN_FIELD("versions", "cuda_driver_int", FIELD_INT, cuda_driver_version),
    RUN_PART("variants", variants_part),
    RUN_FIELD("", "nvtx_ranges_from", FIELD_STR, marker_source),
    RUN_PART("provenance", provenance_part),
    RUN_PART("occupancy_api", probes_part),
    RUN_PART("ceilings", ceilings_part),
    RUN_PART("counters", counters_part),
    RUN_OBJECT("measured", measured_present, "measured/host/build"),
    RUN_FIELD("measured", "clock_samples", FIELD_INT, env.clock_samples),
    RUN_FIELD("measured", "sm_clock_mhz_min", FIELD_INT, env.sm_clock_mhz_min),
    RUN_FIELD("measured", "sm_clock_mhz_max", FIELD_INT, env.sm_clock_mhz_max),
    RUN_FIELD("measured", "memory_clock_mhz_min", FIELD_INT, env.mem_clock_mhz_min),
    RUN_FIELD("measured", "memory_clock_mhz_max", FIELD_INT, env.mem_clock_mhz_max),
    RUN_FIELD("measured", "power_limit_w", FIELD_INT, env.power_limit_w),
    /* How the forwards were measured (issue 25); bounds far above any plan. */
    RUN_OBJECT("measurement", measurement_present, "measurement"),
    RUN_FIELD("measurement", "l2", FIELD_STR, measurement.l2),
    RUN_FIELD("measurement", "l2_flush_bytes", FIELD_INT64, measurement.l2_flush_bytes, .ihi = INT64_MAX),
    RUN_FIELD("measurement", "flush_us", FIELD_REAL, measurement.flush_us, .rhi = 1e12),
    RUN_FIELD("measurement", "iters_rule", FIELD_STR, measurement.iters_rule),
    RUN_FIELD("measurement", "noise_target", FIELD_REAL, measurement.noise_target, .rhi = 1),
    RUN_FIELD("measurement", "min_forwards", FIELD_INT, measurement.min_forwards),
    RUN_FIELD("measurement", "max_forwards", FIELD_INT, measurement.max_forwards),
    RUN_FIELD("measurement", "min_gpu_s", FIELD_REAL, measurement.min_gpu_s, .rhi = 1e9),
    RUN_FIELD("measurement", "time_cap_s", FIELD_REAL, measurement.time_cap_s, .rhi = 1e9),
    RUN_FIELD("measurement", "replicates", FIELD_INT, measurement.replicates, .ilo = 1, .ihi = 1 << 16),
    RUN_FIELD("measurement", "throttle_fraction", FIELD_REAL, measurement.throttle_fraction, .rhi = 1),
    RUN_FIELD("measurement", "nvml_sample_us", FIELD_REAL, measurement.nvml_sample_us, .rhi = 1e12),
    RUN_FIELD("measurement", "lock_clocks_requested", FIELD_BOOL, measurement.lock_clocks_requested),
    RUN_FIELD("measurement", "lock_clocks", FIELD_STR, measurement.lock_clocks),
    RUN_OBJECT("host", host_present, "measured/host/build"),
    RUN_FIELD("host", "cpu", FIELD_STR, env.host_cpu),
    RUN_FIELD("host", "logical_cpus", FIELD_INT, env.host_cpus),
    RUN_FIELD("host", "os", FIELD_STR, env.os),
    RUN_OBJECT("build", build_present, "measured/host/build"),
    RUN_FIELD("build", "nvcc", FIELD_STR, env.nvcc),
    RUN_FIELD("build", "flags", FIELD_STR, env.build_flags),
    RUN_PART("imported_from", sources_part),
    RUN_FIELD("", "shape_from", FIELD_STR, shape_source, .flags = WHEN_IMPORTED),
    RUN_FIELD("", "device_limits_note", FIELD_STR, device_limits_note, .flags = WHEN_IMPORTED | WHEN_NONEMPTY),
};

/* Relative errors, µs and bytes: bounds far above any measurement (1e12 µs is 11 days). */
static const json_field variant_fields[] = {
    /* The name ties the variant to its ranges in trace.json: never cut it. */
    VARIANT_FIELD("name", FIELD_STR, name, .flags = WHOLE_STRING),
    VARIANT_FIELD("title", FIELD_STR, title),
    VARIANT_FIELD("what_changed", FIELD_STR, what_changed),
    /* Imported traces expect nothing: -1, written as no key at all. */
    VARIANT_FIELD("expected_ops", FIELD_INT, expected_ops, .flags = WHEN_NONNEG),
    VARIANT_FIELD("expected_memcpy", FIELD_INT, expected_memcpy, .flags = WHEN_NONNEG),
    RUN_PART("status", status_part),
    VARIANT_FIELD("error", FIELD_STR, error),
    VARIANT_FIELD("rel_error", FIELD_REAL, rel_error, .rhi = 1e30),
    VARIANT_FIELD("heads_checked", FIELD_INT, heads_checked),
    VARIANT_FIELD("event_us_no_cupti", FIELD_REAL, event_us_no_cupti, .rhi = 1e12),
    VARIANT_FIELD("event_us_cupti", FIELD_REAL, event_us_cupti, .rhi = 1e12),
    VARIANT_FIELD("dropped_records", FIELD_INT64, dropped_records, .ihi = INT64_MAX),
    RUN_PART("facts", facts_part),
    VARIANT_FIELD("host_us_no_cupti", FIELD_REAL, host_us_no_cupti, .rhi = 1e12),
    VARIANT_FIELD("host_us_cupti", FIELD_REAL, host_us_cupti, .rhi = 1e12),
    VARIANT_FIELD("device_bytes", FIELD_REAL_AS_INT, device_bytes, .flags = WHEN_FINITE,
                  .rhi = 9007199254740992.0 /* 2^53 */),
    /* Absent (archives from before the row sample, imports): 0, "not recorded"; those
     * archives checked every row of their heads. */
    VARIANT_FIELD("rows_checked", FIELD_INT, rows_checked, .flags = WHEN_POSITIVE),
    RUN_PART("prediction", prediction_part),
    VARIANT_FIELD("kernel_origin", FIELD_STR, kernel_origin, .flags = WHEN_NONEMPTY),
    /* How the stop rule ended (issue 25); absent: reason "", not recorded. */
    {.object = "", .key = "stop", .type = FIELD_OBJECT, .present = stop_present, .object_error = "stop"},
    FIELD_OF(variant_result, "stop", "reason", FIELD_STR, stop.reason),
    FIELD_OF(variant_result, "stop", "forwards", FIELD_INT, stop.forwards),
    FIELD_OF(variant_result, "stop", "noise", FIELD_REAL, stop.noise, .rhi = 1e6),
    FIELD_OF(variant_result, "stop", "gpu_s", FIELD_REAL, stop.gpu_s, .rhi = 1e9),
};

/* Ground truth for tests only (cudaOccupancyMaxActiveBlocksPerMultiprocessor). */
static const json_field probe_fields[] = {
    PROBE_FIELD("kernel", FIELD_STR, kernel),
    PROBE_FIELD("threads", FIELD_INT, threads),
    PROBE_FIELD("registers", FIELD_INT, registers),
    PROBE_FIELD("static_smem", FIELD_INT, static_smem),
    PROBE_FIELD("dynamic_smem", FIELD_INT, dynamic_smem),
    PROBE_FIELD("blocks_per_sm", FIELD_INT, blocks_per_sm),
};

static const json_field source_fields[] = {
    SOURCE_FIELD("name", FIELD_STR, file),
    SOURCE_FIELD("size", FIELD_INT64, size, .ihi = LLONG_MAX),
    SOURCE_FIELD("sha256", FIELD_STR, sha256),
    SOURCE_FIELD("variant", FIELD_STR, variant),
    SOURCE_FIELD("schemaVersion", FIELD_INT, schema_version),
    SOURCE_FIELD("baseTimeNanoseconds", FIELD_INT64, base_time_ns, .ihi = LLONG_MAX),
    SOURCE_FIELD("trace_id", FIELD_STR, trace_id),
};

static const json_field distributed_fields[] = {
    SOURCE_FIELD("backend", FIELD_STR, backend),
    SOURCE_FIELD("rank", FIELD_INT, rank),
    SOURCE_FIELD("world_size", FIELD_INT, world_size),
};

#define FIELDS(t) t, sizeof t / sizeof t[0]
#define AT(base, off, type) ((type *)((char *)(base) + (off)))
#define AT_C(base, off, type) ((const type *)((const char *)(base) + (off)))

/* NaN is not JSON: unmeasured numbers are written as null. */
static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* 0: the row's key is left out of this document. */
static int field_written(const json_field *f, const void *base)
{
    const run_info *r = base; /* read only for the run-level flags */
    if ((f->flags & WHEN_IMPORTED) && !r->imported)
        return 0;
    if ((f->flags & WHEN_RECORDED) && r->imported && !*AT_C(base, f->aux, int))
        return 0;
    if ((f->flags & WHEN_NONEMPTY) && !*AT_C(base, f->offset, char))
        return 0;
    if ((f->flags & WHEN_NONNEG) && *AT_C(base, f->offset, int) < 0)
        return 0;
    if ((f->flags & WHEN_POSITIVE) && *AT_C(base, f->offset, int) <= 0)
        return 0;
    if ((f->flags & WHEN_FINITE) && !isfinite(*AT_C(base, f->offset, double)))
        return 0;
    if (f->type == FIELD_OBJECT && f->present)
        return f->present(base);
    return 1;
}

static json_t *field_value(const json_field *f, const void *base)
{
    char s[32];
    switch (f->type) {
    case FIELD_OBJECT:
        return json_object();
    case FIELD_PART:
        return f->part(base);
    case FIELD_STR:
        return json_string(AT_C(base, f->offset, char));
    case FIELD_INT:
        return json_integer(*AT_C(base, f->offset, int));
    case FIELD_INT64:
        return json_integer((json_int_t)*AT_C(base, f->offset, int64_t));
    case FIELD_SEED:
        return json_integer((json_int_t)*AT_C(base, f->offset, unsigned long long));
    case FIELD_BOOL:
        return json_boolean(*AT_C(base, f->offset, int));
    case FIELD_REAL:
        return num(*AT_C(base, f->offset, double));
    case FIELD_REAL_AS_INT:
        return json_integer((json_int_t)*AT_C(base, f->offset, double));
    case FIELD_CC:
        snprintf(s, sizeof s, "%d.%d", *AT_C(base, f->offset, int), *AT_C(base, f->aux, int));
        return json_string(s);
    case FIELD_CUDA_VERSION: {
        int v = *AT_C(base, f->offset, int);
        snprintf(s, sizeof s, "%d.%d", v / 1000, v % 1000 / 10);
        return json_string(s);
    }
    }
    return NULL;
}

/* Adds the table's keys to `o` in the table's order. -1: a MUST_BE_FINITE number is not. */
static int fields_write(json_t *o, const json_field *t, size_t n, const void *base)
{
    for (size_t i = 0; i < n; i++) {
        const json_field *f = &t[i];
        json_t *into = *f->object ? json_object_get(o, f->object) : o;
        if (!into || !field_written(f, base))
            continue; /* its object is left out, or the key is */
        if ((f->flags & MUST_BE_FINITE) && !isfinite(*AT_C(base, f->offset, double)))
            return -1;
        json_t *v = field_value(f, base);
        if (v)
            json_object_set_new(into, f->key, v);
    }
    return 0;
}

static json_t *fields_object(const json_field *t, size_t n, const void *base)
{
    json_t *o = json_object();
    fields_write(o, t, n, base);
    return o;
}

static json_t *status_part(const void *base)
{
    return json_string(variant_status_name(((const variant_result *)base)->status));
}

static json_t *facts_part(const void *base)
{
    const attn_facts *facts = &((const variant_result *)base)->facts;
    json_t *o = json_object();
    for (int f = 0; f < facts->n; f++)
        json_object_set_new(o, facts->item[f].key,
                            json_pack("{s:s,s:o}", "text", facts->item[f].value, "value", num(facts->item[f].number)));
    return o;
}

static json_t *prediction_part(const void *base)
{
    const variant_result *v = base;
    return v->prediction.valid ? prediction_to_json(&v->prediction) : NULL;
}

static json_t *variants_part(const void *base)
{
    const run_info *r = base;
    json_t *vars = json_array();
    for (int i = 0; i < r->n_variants; i++)
        json_array_append_new(vars, fields_object(FIELDS(variant_fields), &r->variants[i]));
    return vars;
}

static json_t *provenance_part(const void *base)
{
    const run_info *r = base;
    return json_pack("{s:s,s:s}", "producer", run_producer_name(r->producer), "evidence",
                     r->producer_evidence[0] || r->producer != PRODUCER_ATTNPROF
                         ? r->producer_evidence
                         : "recorded by attnprof run (its CUPTI recorder)");
}

static json_t *probes_part(const void *base)
{
    const run_info *r = base;
    json_t *probes = json_array();
    for (int i = 0; i < r->n_probes; i++)
        json_array_append_new(probes, fields_object(FIELDS(probe_fields), &r->probes[i]));
    return probes;
}

static json_t *ceilings_part(const void *base)
{
    const run_info *r = base;
    return r->ceilings.measured || r->ceilings.error[0] ? ceilings_to_json(&r->ceilings) : NULL;
}

static json_t *counters_part(const void *base)
{
    const run_info *r = base;
    return r->counters.meta.status != CTR_NOT_RUN || r->counters.meta.reason[0]
               ? counters_meta_to_json(&r->counters.meta)
               : NULL;
}

static json_t *sources_part(const void *base)
{
    const run_info *r = base;
    if (!r->imported)
        return NULL;
    json_t *src = json_array();
    for (int i = 0; i < r->n_sources; i++) {
        const import_source *s = &r->sources[i];
        json_t *o = fields_object(FIELDS(source_fields), s);
        if (s->has_distributed)
            json_object_set_new(o, "distributedInfo", fields_object(FIELDS(distributed_fields), s));
        json_array_append_new(src, o);
    }
    return src;
}

int run_info_write_json(const run_info *r, const char *path, char *err, size_t errlen)
{
    json_t *root = json_object();
    if (fields_write(root, FIELDS(run_fields), r) < 0) {
        json_decref(root);
        snprintf(err, errlen, "%s: could not build the JSON document", path);
        return -1;
    }
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(17)); /* every double reads back as written */
    json_decref(root);
    if (rc) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Typed reads of run.json. A key that is absent gives the default (older
 * archives lack some); a key of the wrong type, or an integer out of its range,
 * is an error naming the field (the first one found is reported). */
typedef struct reader {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} reader;

static void bad(reader *rd, const char *where, const char *key, const char *what)
{
    if (rd->failed++)
        return;
    snprintf(rd->err, rd->errlen, "%s: %s%s%s: expected %s", rd->path, where, *where ? "." : "", key, what);
}

static const char *str(reader *rd, const char *where, json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (v && !json_is_string(v))
        bad(rd, where, k, "a string");
    const char *s = json_string_value(v);
    return s ? s : "";
}

static double real(reader *rd, const char *where, json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (v && !json_is_number(v) && !json_is_null(v))
        bad(rd, where, k, "a number or null");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A number in [lo, hi] or null/absent (NaN): wider ones would print as hundreds of
 * digits or overflow what is derived from them. */
static double real_in(reader *rd, const char *where, json_t *o, const char *k, double lo, double hi)
{
    double x = real(rd, where, o, k);
    if (isfinite(x) && (x < lo || x > hi)) {
        char what[96];
        snprintf(what, sizeof what, "a number from %g to %g, or null", lo, hi);
        bad(rd, where, k, what);
        return NAN;
    }
    return x;
}

static long long integer_in(reader *rd, const char *where, json_t *o, const char *k, long long lo, long long hi)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        char what[96];
        snprintf(what, sizeof what, "a whole number from %lld to %lld", lo, hi);
        bad(rd, where, k, what);
        return 0;
    }
    return json_integer_value(v);
}

static json_t *object(reader *rd, const char *where, json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (v && !json_is_object(v))
        bad(rd, where, k, "an object");
    return json_is_object(v) ? v : NULL;
}

/* What one run.json cannot say of itself (issue 29): each is an error naming the
 * variant, so no number is derived from a contradiction. */
static void inconsistent(reader *rd, const char *fmt, const char *name, const char *detail)
{
    if (rd->failed++)
        return;
    char what[320];
    snprintf(what, sizeof what, fmt, name, detail);
    snprintf(rd->err, rd->errlen, "%s: inconsistent: %s", rd->path, what);
}

/* The words of the measurement plan and of each stop outcome (issue 25). */
static int one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (!strcmp(s, *words))
            return 1;
    return 0;
}

static const char *const STOP_REASONS[] = {"noise", "converged", "max_forwards", "time_cap", "fixed", "failed", NULL};

/* What a measurement plan and the stop outcomes cannot say together: no medians
 * are drawn from a plan that contradicts itself. */
static void measurement_check(const run_info *r, reader *rd)
{
    const measurement_plan *m = &r->measurement;
    char detail[96];
    if (m->recorded) {
        static const char *const L2[] = {"warm", "cold", NULL}, *const RULES[] = {"auto", "fixed", NULL};
        if (!one_of(m->l2, L2))
            bad(rd, "measurement", "l2", "\"warm\" or \"cold\"");
        if (!one_of(m->iters_rule, RULES))
            bad(rd, "measurement", "iters_rule", "\"auto\" or \"fixed\"");
        if (m->replicates < 1)
            bad(rd, "measurement", "replicates", "a whole number from 1 to 65536");
        if (!strcmp(m->l2, "cold") && m->l2_flush_bytes <= 0)
            inconsistent(rd, "measurement says the L2 was %s but no flush bytes are recorded%s", "cold", "");
        if (!strcmp(m->l2, "warm") && m->l2_flush_bytes > 0) {
            snprintf(detail, sizeof detail, "%lld", (long long)m->l2_flush_bytes);
            inconsistent(rd, "measurement says the L2 was %s but records a flush of %s bytes", "warm", detail);
        }
        if (m->min_forwards > m->max_forwards && m->max_forwards > 0) {
            snprintf(detail, sizeof detail, "%d above max_forwards %d", m->min_forwards, m->max_forwards);
            inconsistent(rd, "measurement's %s is %s", "min_forwards", detail);
        }
    }
    for (int i = 0; i < r->n_variants; i++) {
        const stop_outcome *s = &r->variants[i].stop;
        char name[40];
        esc_terminal(name, sizeof name, r->variants[i].name);
        if (!s->reason[0])
            continue;
        if (!one_of(s->reason, STOP_REASONS)) {
            bad(rd, name, "stop.reason", "\"noise\", \"converged\", \"max_forwards\", \"time_cap\", \"fixed\" or \"failed\"");
            continue;
        }
        if (!m->recorded) {
            inconsistent(rd, "variant %s has a stop outcome but run.json has no measurement plan%s", name, "");
            continue;
        }
        /* "failed": the variant failed while recording, under either rule */
        int fixed_reason = !strcmp(s->reason, "fixed"), fixed_rule = !strcmp(m->iters_rule, "fixed");
        if (strcmp(s->reason, "failed") && fixed_reason != fixed_rule) {
            snprintf(detail, sizeof detail, "\"%s\" under the iters rule \"%s\"", s->reason, m->iters_rule);
            inconsistent(rd, "variant %s stopped for %s", name, detail);
        }
        int reps = m->replicates > 0 ? m->replicates : 1;
        if (m->max_forwards > 0 && (long long)s->forwards > (long long)m->max_forwards * reps) {
            snprintf(detail, sizeof detail, "%d forwards, above max_forwards %d x %d passes", s->forwards,
                     m->max_forwards, reps);
            inconsistent(rd, "variant %s recorded %s", name, detail);
        }
    }
}

static void run_info_check(const run_info *r, reader *rd)
{
    measurement_check(r, rd);
    for (int i = 0; i < r->n_variants; i++) {
        const variant_result *v = &r->variants[i];
        char name[40], detail[96];
        esc_terminal(name, sizeof name, v->name);
        for (int k = 0; k < i; k++)
            if (!strcmp(r->variants[k].name, v->name)) {
                snprintf(detail, sizeof detail, "%d and %d", k, i);
                inconsistent(rd, "variants %2$s are both named %1$s (a name ties a variant to its records)", name,
                             detail);
            }
        if (v->status == VARIANT_OK && isfinite(v->rel_error) && isfinite(r->rel_error_threshold) &&
            v->rel_error > r->rel_error_threshold) {
            snprintf(detail, sizeof detail, "%.3g above the threshold %.3g", v->rel_error, r->rel_error_threshold);
            inconsistent(rd, "variant %s has status \"ok\" with rel_error %s (that is a wrong result)", name, detail);
        }
        if ((v->status == VARIANT_SKIPPED || v->status == VARIANT_UNAVAILABLE) &&
            (isfinite(v->rel_error) || isfinite(v->event_us_no_cupti) || isfinite(v->event_us_cupti) ||
             isfinite(v->host_us_no_cupti) || isfinite(v->host_us_cupti)))
            inconsistent(rd, "variant %s is \"%s\" (it did not run) but has measured numbers", name,
                         variant_status_name(v->status));
    }
}

/* Fills `base` from the table's keys of `o`; `where` names the top level in errors
 * (a nested object is named by its key). Parts are read by the caller. */
static void fields_read(reader *rd, const json_field *t, size_t n, json_t *o, const char *where, void *base)
{
    for (size_t i = 0; i < n; i++) {
        const json_field *f = &t[i];
        json_t *in = *f->object ? json_object_get(o, f->object) : o;
        const char *at = *f->object ? f->object : where;
        long long lo = f->ilo, hi = f->ihi ? f->ihi : INT_MAX; /* counts, sizes, versions: fit an int */
        switch (f->type) {
        case FIELD_OBJECT: {
            json_t *v = json_object_get(o, f->key);
            if (f->object_error && v && !json_is_object(v))
                bad(rd, at, f->object_error, "objects");
            break;
        }
        case FIELD_PART:
        case FIELD_CUDA_VERSION:
            break;
        case FIELD_STR:
            if (!esc_copy_utf8(AT(base, f->offset, char), f->size, str(rd, at, in, f->key)) &&
                (f->flags & WHOLE_STRING)) {
                char what[32];
                snprintf(what, sizeof what, "at most %zu bytes", f->size - 1);
                bad(rd, at, f->key, what);
            }
            break;
        case FIELD_INT:
            if ((f->flags & WHEN_NONNEG) && !json_object_get(in, f->key))
                *AT(base, f->offset, int) = -1;
            else
                *AT(base, f->offset, int) = (int)integer_in(rd, at, in, f->key, lo, hi);
            break;
        case FIELD_INT64:
            *AT(base, f->offset, int64_t) = integer_in(rd, at, in, f->key, lo, hi);
            break;
        case FIELD_SEED:
            *AT(base, f->offset, unsigned long long) = (unsigned long long)integer_in(rd, at, in, f->key, lo, hi);
            break;
        case FIELD_BOOL: {
            json_t *v = json_object_get(in, f->key);
            if (v && !json_is_boolean(v))
                bad(rd, at, f->key, "true or false");
            *AT(base, f->offset, int) = json_is_true(v);
            break;
        }
        case FIELD_REAL:
        case FIELD_REAL_AS_INT:
            *AT(base, f->offset, double) = real_in(rd, at, in, f->key, f->rlo, f->rhi);
            break;
        case FIELD_CC: {
            const char *cc = str(rd, at, in, f->key);
            int *major = AT(base, f->offset, int), *minor = AT(base, f->aux, int);
            if (*cc && (sscanf(cc, "%3d.%3d", major, minor) != 2 || *major < 0 || *minor < 0))
                bad(rd, at, f->key, "\"major.minor\"");
            break;
        }
        }
        if (f->flags & WHEN_RECORDED)
            *AT(base, f->aux, int) = json_object_get(in, f->key) != NULL;
    }
}

static void read_provenance(reader *R, json_t *root, run_info *r)
{
    json_t *prov = object(R, "", root, "provenance");
    if (prov) {
        const char *p = str(R, "provenance", prov, "producer");
        int known = 0;
        for (int k = PRODUCER_ATTNPROF; k <= PRODUCER_INJECTION; k++)
            if (!strcmp(p, run_producer_name((run_producer)k)))
                r->producer = (run_producer)k, known = 1;
        if (!known)
            bad(R, "provenance", "producer", "\"attnprof\", \"pytorch_profiler\", \"kineto\" or \"injection\"");
        esc_copy_utf8(r->producer_evidence, sizeof r->producer_evidence, str(R, "provenance", prov, "evidence"));
        r->provenance_recorded = 1;
    } else {
        /* Older archives: `import` took PyTorch profiler traces only. */
        r->producer = r->imported ? PRODUCER_PYTORCH : PRODUCER_ATTNPROF;
        snprintf(r->producer_evidence, sizeof r->producer_evidence, "%s",
                 r->imported ? "inferred: an import from before attnprof recorded provenance"
                             : "inferred: an attnprof run from before attnprof recorded provenance");
    }
}

static void read_sources(reader *R, json_t *imported, run_info *r)
{
    size_t i;
    json_t *v;
    json_array_foreach(imported, i, v)
    {
        if (r->n_sources == RUN_MAX_VARIANTS)
            break;
        char where[48];
        snprintf(where, sizeof where, "imported_from[%zu]", i);
        if (!json_is_object(v)) {
            bad(R, "", where, "an object");
            break;
        }
        import_source *s = &r->sources[r->n_sources++];
        fields_read(R, FIELDS(source_fields), v, where, s);
        json_t *d = json_object_get(v, "distributedInfo");
        if ((s->has_distributed = json_is_object(d)))
            fields_read(R, FIELDS(distributed_fields), d, where, s);
    }
}

static void read_probes(reader *R, json_t *root, run_info *r)
{
    json_t *probes = json_object_get(root, "occupancy_api");
    if (probes && !json_is_array(probes))
        bad(R, "", "occupancy_api", "an array");
    size_t i;
    json_t *v;
    json_array_foreach(probes, i, v)
    {
        if (r->n_probes == RUN_MAX_PROBES)
            break; /* ground truth for tests only: the first ones are enough */
        char where[48];
        snprintf(where, sizeof where, "occupancy_api[%zu]", i);
        if (!json_is_object(v)) {
            bad(R, "", where, "an object");
            break;
        }
        fields_read(R, FIELDS(probe_fields), v, where, &r->probes[r->n_probes++]);
    }
}

/* One entry of "variants" (an object with a name: the caller checked). */
static void read_variant(reader *R, json_t *v, const char *where, const run_info *r, variant_result *x)
{
    fields_read(R, FIELDS(variant_fields), v, where, x);
    int st = status_from_name(str(R, where, v, "status"));
    if (st < 0)
        bad(R, where, "status", "\"ok\", \"FAILED\", \"unavailable\" or \"skipped\"");
    x->status = st < 0 ? VARIANT_FAILED : (variant_status)st;
    if (x->rows_checked < 0 || (r->shape.seq > 0 && x->rows_checked > r->shape.seq))
        bad(R, where, "rows_checked", "a number of query rows, at most the sequence length");
    prediction_from_json(json_object_get(v, "prediction"), &x->prediction);
    const char *key;
    json_t *f;
    json_object_foreach(object(R, where, v, "facts"), key, f)
    {
        if (x->facts.n == ATTN_MAX_FACTS) {
            bad(R, where, "facts", "at most 16 facts");
            break;
        }
        attn_fact *it = &x->facts.item[x->facts.n++];
        esc_copy_utf8(it->key, sizeof it->key, key);
        if (!json_is_object(f)) {
            bad(R, where, "facts", "an object of {text, value} objects");
            break;
        }
        esc_copy_utf8(it->value, sizeof it->value, str(R, where, f, "text"));
        it->number = real_in(R, where, f, "value", -1e30, 1e30);
    }
}

int run_info_read_json(run_info *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    json_error_t je;
    json_t *root = input_load_json(path, err, errlen, &je);
    if (!root && je.position < 0)
        return -1; /* not a regular file, too large, unreadable: err says which */
    if (!root) {
        snprintf(err, errlen, "%s: not valid JSON (line %d, column %d: %s); re-run `attnprof run` to record it again",
                 path, je.line, je.column, je.text);
        return -1;
    }
    json_t *shape = json_object_get(root, "shape"), *gpu = json_object_get(root, "gpu");
    json_t *ver = json_object_get(root, "versions"), *vars = json_object_get(root, "variants");
    if (!json_is_object(shape) || !json_is_object(gpu) || !json_is_object(ver) || !json_is_array(vars)) {
        snprintf(err, errlen, "%s: missing shape, gpu, versions or variants: not an attnprof run.json", path);
        json_decref(root);
        return -1;
    }
    if (json_array_size(vars) > RUN_MAX_VARIANTS) {
        snprintf(err, errlen, "%s: variants: %zu variants, at most %d can be rendered", path, json_array_size(vars),
                 RUN_MAX_VARIANTS);
        json_decref(root);
        return -1;
    }
    reader rd = {path, err, errlen, 0}, *R = &rd;
    fields_read(R, FIELDS(run_fields), root, "", r);
    r->measurement.recorded = json_is_object(json_object_get(root, "measurement"));
    ceilings_from_json(json_object_get(root, "ceilings"), &r->ceilings);
    counters_meta_from_json(json_object_get(root, "counters"), &r->counters.meta);
    json_t *imported = json_object_get(root, "imported_from");
    if (imported && !json_is_array(imported))
        bad(R, "", "imported_from", "an array");
    r->imported = json_is_array(imported);
    /* An import never knew a seed or a warm-up: older imports wrote 0 for both. */
    if (r->imported)
        r->seed_recorded = r->warmup_recorded = 0, r->seed = 0, r->warmup = 0;
    read_provenance(R, root, r);
    read_sources(R, imported, r);
    read_probes(R, root, r);
    size_t i;
    json_t *v;
    json_array_foreach(vars, i, v)
    {
        variant_result *x = &r->variants[r->n_variants++];
        char where[32];
        snprintf(where, sizeof where, "variants[%zu]", i);
        if (!json_is_object(v) || !*str(R, where, v, "name")) {
            if (!rd.failed)
                snprintf(err, errlen, "%s: variants[%zu] has no name", path, i);
            json_decref(root);
            return -1;
        }
        read_variant(R, v, where, r, x);
    }
    json_decref(root);
    if (!rd.failed)
        run_info_check(r, R);
    return rd.failed ? -1 : 0;
}

