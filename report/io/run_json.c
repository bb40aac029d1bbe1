/* run.json: tool version, command line, shape, GPU and library versions, and each
 * variant's status, error, correctness and CUPTI-overhead probe, written and read over
 * the field engine (json_fields.h). The tables below are the document: a field is added,
 * renamed or bounded in one row; arrays and other tables' objects are parts, written by
 * their functions and read by hand after the scalars. What one run.json cannot say of
 * itself is checked after reading (archive_checks.c). */
#include "run_json.h"

#include "archive_checks.h"
#include "counters_json.h"
#include "err.h"
#include "escape.h"
#include "input.h"
#include "json_fields.h"
#include "prediction_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define RUN_FIELD(obj, k, t, ...) FIELD_OF(run_info, obj, k, t, __VA_ARGS__)
#define VARIANT_FIELD(k, t, ...) FIELD_OF(variant_result, "", k, t, __VA_ARGS__)
#define PROBE_FIELD(k, t, ...) FIELD_OF(occupancy_probe, "", k, t, __VA_ARGS__)
#define SOURCE_FIELD(k, t, ...) FIELD_OF(import_source, "", k, t, __VA_ARGS__)

static json_t *variants_part(const void *base);
static json_t *provenance_part(const void *base);
static json_t *probes_part(const void *base);
static json_t *ceilings_part(const void *base);
static json_t *counters_part(const void *base);
static json_t *sources_part(const void *base);
static json_t *facts_part(const void *base);
static json_t *prediction_part(const void *base);

static int measured_present(const void *base) { return ((const run_info *)base)->env.clock_samples > 0; }
static int host_present(const void *base)
{
    const run_env *e = &((const run_info *)base)->env;
    return e->host_cpu[0] || e->os[0];
}
/* Absent in archives from before the measurement plan and in imports (measurement.recorded = 0). */
static int measurement_present(const void *base) { return ((const run_info *)base)->measurement.recorded; }
static int stop_present(const void *base) { return ((const variant_result *)base)->stop.reason[0] != '\0'; }
static int backward_present(const void *base) { return ((const variant_result *)base)->bwd.recorded; }
static int build_present(const void *base)
{
    const run_env *e = &((const run_info *)base)->env;
    return e->nvcc[0] || e->build_flags[0];
}

static const json_field run_fields[] = {
    RUN_FIELD("", "tool_version", FIELD_STR, tool_version),
    RUN_FIELD("", "command_line", FIELD_STR, command_line),
    RUN_FIELD("", "date", FIELD_STR, date),
    FIELD_OBJECT_ROW("shape", NULL, NULL),
    /* The shape's product and the sizes derived from it stay far inside 64 bits. */
    RUN_FIELD("shape", "batch", FIELD_INT, shape.batch, .ihi = 1 << 20),
    RUN_FIELD("shape", "heads", FIELD_INT, shape.heads, .ihi = 1 << 20),
    RUN_FIELD("shape", "seq", FIELD_INT, shape.seq, .ihi = 1 << 24),
    RUN_FIELD("shape", "dim", FIELD_INT, shape.dim, .ihi = 1 << 16),
    /* Grouped-query heads and decode's new queries: written only when given (0: as heads, seq). */
    RUN_FIELD("shape", "kv_heads", FIELD_INT, shape.kv_heads, .flags = WHEN_POSITIVE, .ihi = 1 << 20),
    RUN_FIELD("shape", "q_seq", FIELD_INT, shape.q_seq, .flags = WHEN_POSITIVE, .ihi = 1 << 24),
    RUN_FIELD("", "dtype", FIELD_STR, dtype),
    RUN_FIELD("", "causal", FIELD_BOOL, causal),
    RUN_FIELD("", "seed", FIELD_SEED, seed, .aux = offsetof(run_info, seed_recorded), .flags = WHEN_RECORDED,
              .ilo = LLONG_MIN, .ihi = LLONG_MAX),
    RUN_FIELD("", "iters", FIELD_INT, iters),
    RUN_FIELD("", "warmup", FIELD_INT, warmup, .aux = offsetof(run_info, warmup_recorded), .flags = WHEN_RECORDED),
    RUN_FIELD("", "rel_error_threshold", FIELD_REAL, rel_error_threshold, .flags = MUST_BE_FINITE, .rhi = 1e30),
    /* run --backward: written only then, true (absent: a forward-only archive). */
    RUN_FIELD("", "backward", FIELD_BOOL, backward, .flags = WHEN_POSITIVE),
    FIELD_OBJECT_ROW("gpu", NULL, NULL),
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
    FIELD_OBJECT_ROW("versions", NULL, NULL),
    RUN_FIELD("versions", "driver", FIELD_STR, driver_version),
    RUN_FIELD("versions", "cuda_runtime", FIELD_CUDA_VERSION, cuda_runtime_version),
    RUN_FIELD("versions", "cuda_driver_api", FIELD_CUDA_VERSION, cuda_driver_version),
    RUN_FIELD("versions", "cublas", FIELD_INT, cublas_version),
    RUN_FIELD("versions", "cudnn", FIELD_INT, cudnn_version),
    RUN_FIELD("versions", "cupti", FIELD_INT, cupti_version),
    RUN_FIELD("versions", "cuda_runtime_int", FIELD_INT, cuda_runtime_version),
    RUN_FIELD("versions", "cuda_driver_int", FIELD_INT, cuda_driver_version),
    FIELD_PART_ROW("variants", variants_part),
    RUN_FIELD("", "nvtx_ranges_from", FIELD_STR, marker_source),
    FIELD_PART_ROW("provenance", provenance_part),
    FIELD_PART_ROW("occupancy_api", probes_part),
    FIELD_PART_ROW("ceilings", ceilings_part),
    FIELD_PART_ROW("counters", counters_part),
    FIELD_OBJECT_ROW("measured", measured_present, "measured/host/build"),
    RUN_FIELD("measured", "clock_samples", FIELD_INT, env.clock_samples),
    RUN_FIELD("measured", "sm_clock_mhz_min", FIELD_INT, env.sm_clock_mhz_min),
    RUN_FIELD("measured", "sm_clock_mhz_max", FIELD_INT, env.sm_clock_mhz_max),
    RUN_FIELD("measured", "memory_clock_mhz_min", FIELD_INT, env.mem_clock_mhz_min),
    RUN_FIELD("measured", "memory_clock_mhz_max", FIELD_INT, env.mem_clock_mhz_max),
    RUN_FIELD("measured", "power_limit_w", FIELD_INT, env.power_limit_w),
    /* How the forwards were measured; bounds far above any plan. */
    FIELD_OBJECT_ROW("measurement", measurement_present, "measurement"),
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
    FIELD_OBJECT_ROW("host", host_present, "measured/host/build"),
    RUN_FIELD("host", "cpu", FIELD_STR, env.host_cpu),
    RUN_FIELD("host", "logical_cpus", FIELD_INT, env.host_cpus),
    RUN_FIELD("host", "os", FIELD_STR, env.os),
    FIELD_OBJECT_ROW("build", build_present, "measured/host/build"),
    RUN_FIELD("build", "nvcc", FIELD_STR, env.nvcc),
    RUN_FIELD("build", "flags", FIELD_STR, env.build_flags),
    RUN_FIELD("build", "arches", FIELD_STR, env.build_arches, .flags = WHEN_NONEMPTY),
    FIELD_PART_ROW("imported_from", sources_part),
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
    VARIANT_FIELD("expected_ops", FIELD_INT, expected_ops, .flags = WHEN_NONNEG, .absent = -1),
    VARIANT_FIELD("expected_memcpy", FIELD_INT, expected_memcpy, .flags = WHEN_NONNEG, .absent = -1),
    VARIANT_FIELD("status", FIELD_ENUM, status, .names = variant_status_words, .flags = REQUIRED),
    VARIANT_FIELD("error", FIELD_STR, error),
    VARIANT_FIELD("rel_error", FIELD_REAL, rel_error, .rhi = 1e30),
    VARIANT_FIELD("heads_checked", FIELD_INT, heads_checked),
    VARIANT_FIELD("event_us_no_cupti", FIELD_REAL, event_us_no_cupti, .rhi = 1e12),
    VARIANT_FIELD("event_us_cupti", FIELD_REAL, event_us_cupti, .rhi = 1e12),
    /* Only where the probe measured it: the forwards issued a Memset. */
    VARIANT_FIELD("event_us_cupti_no_memset_records", FIELD_REAL, event_us_cupti_no_memset, .flags = WHEN_FINITE,
                  .rhi = 1e12),
    VARIANT_FIELD("dropped_records", FIELD_INT64, dropped_records, .ihi = INT64_MAX),
    FIELD_PART_ROW("facts", facts_part),
    VARIANT_FIELD("host_us_no_cupti", FIELD_REAL, host_us_no_cupti, .rhi = 1e12),
    VARIANT_FIELD("host_us_cupti", FIELD_REAL, host_us_cupti, .rhi = 1e12),
    VARIANT_FIELD("device_bytes", FIELD_REAL_AS_INT, device_bytes, .flags = WHEN_FINITE,
                  .rhi = 9007199254740992.0 /* 2^53 */),
    /* Absent (archives from before the row sample, imports): 0, "not recorded"; those
     * archives checked every row of their heads. */
    VARIANT_FIELD("rows_checked", FIELD_INT, rows_checked, .flags = WHEN_POSITIVE),
    FIELD_PART_ROW("prediction", prediction_part),
    VARIANT_FIELD("kernel_origin", FIELD_STR, kernel_origin, .flags = WHEN_NONEMPTY),
    /* How the stop rule ended; absent: reason "", not recorded. */
    FIELD_OBJECT_ROW("stop", stop_present, "stop"),
    FIELD_OF(variant_result, "stop", "reason", FIELD_STR, stop.reason),
    FIELD_OF(variant_result, "stop", "forwards", FIELD_INT, stop.forwards),
    FIELD_OF(variant_result, "stop", "noise", FIELD_REAL, stop.noise, .rhi = 1e6),
    FIELD_OF(variant_result, "stop", "gpu_s", FIELD_REAL, stop.gpu_s, .rhi = 1e9),
    /* run --backward: the variant's backward (absent: none recorded). */
    FIELD_OBJECT_ROW("backward", backward_present, "backward"),
    FIELD_OF(variant_result, "backward", "status", FIELD_ENUM, bwd.status, .names = variant_status_words),
    FIELD_OF(variant_result, "backward", "error", FIELD_STR, bwd.error),
    FIELD_OF(variant_result, "backward", "expected_ops", FIELD_INT, bwd.expected_ops, .flags = WHEN_NONNEG,
             .absent = -1),
    FIELD_OF(variant_result, "backward", "event_us", FIELD_REAL, bwd.event_us, .rhi = 1e12),
    FIELD_OF(variant_result, "backward", "rel_error_dq", FIELD_REAL, bwd.rel_error_dq, .rhi = 1e30),
    FIELD_OF(variant_result, "backward", "rel_error_dk", FIELD_REAL, bwd.rel_error_dk, .rhi = 1e30),
    FIELD_OF(variant_result, "backward", "rel_error_dv", FIELD_REAL, bwd.rel_error_dv, .rhi = 1e30),
    FIELD_OF(variant_result, "backward", "tolerance", FIELD_REAL, bwd.tolerance, .rhi = 1e30),
    FIELD_OF(variant_result, "backward", "kept_bytes", FIELD_REAL, bwd.kept_bytes, .rhi = 1e18),
    FIELD_OF(variant_result, "backward", "kept", FIELD_STR, bwd.kept),
    FIELD_OF(variant_result, "backward", "stop_reason", FIELD_STR, bwd.stop.reason),
    FIELD_OF(variant_result, "backward", "backwards", FIELD_INT, bwd.stop.forwards),
    FIELD_OF(variant_result, "backward", "noise", FIELD_REAL, bwd.stop.noise, .rhi = 1e6),
    FIELD_OF(variant_result, "backward", "gpu_s", FIELD_REAL, bwd.stop.gpu_s, .rhi = 1e9),
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

static json_t *facts_part(const void *base)
{
    const attn_facts *facts = &((const variant_result *)base)->facts;
    json_t *o = json_object();
    for (int f = 0; f < facts->n; f++)
        json_object_set_new(o, facts->item[f].key,
                            json_pack("{s:s,s:o}", "text", facts->item[f].value, "value", json_num(facts->item[f].number)));
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
        json_array_append_new(vars, json_fields_object(FIELDS(variant_fields), &r->variants[i]));
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
        json_array_append_new(probes, json_fields_object(FIELDS(probe_fields), &r->probes[i]));
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
        json_t *o = json_fields_object(FIELDS(source_fields), s);
        if (s->has_distributed)
            json_object_set_new(o, "distributedInfo", json_fields_object(FIELDS(distributed_fields), s));
        json_array_append_new(src, o);
    }
    return src;
}

int run_info_write_json(const run_info *r, const char *path, char *err, size_t errlen)
{
    json_t *root = json_object();
    if (json_fields_write(root, FIELDS(run_fields), r, r->imported) != EXIT_OK) {
        json_decref(root);
        return err_set(err, errlen, EXIT_IO, "%s: could not build the JSON document (a number that must be "
                       "finite is not)", path);
    }
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(17)); /* every double reads back as written */
    json_decref(root);
    return rc ? err_set(err, errlen, EXIT_IO, "%s: cannot write: %s", path, strerror(errno)) : EXIT_OK;
}

/* A bad run.json is best recorded again: said after the reader's reason. */
static int err_suffix_rerun(char *err, size_t errlen, int rc)
{
    size_t n = strlen(err);
    if (rc == EXIT_BAD_ARCHIVE && strstr(err, "not valid JSON") && n + 1 < errlen)
        snprintf(err + n, errlen - n, "; re-run `attnprof run` to record it again");
    return rc;
}

static void read_provenance(json_reader *R, json_t *root, run_info *r)
{
    json_t *prov = json_reader_object(R, "", root, "provenance");
    if (prov) {
        const char *p = json_reader_str(R, "provenance", prov, "producer");
        int known = 0;
        for (int k = PRODUCER_ATTNPROF; k <= PRODUCER_INJECTION; k++)
            if (!strcmp(p, run_producer_name((run_producer)k)))
                r->producer = (run_producer)k, known = 1;
        if (!known)
            json_reader_bad(R, "provenance", "producer", "\"attnprof\", \"pytorch_profiler\", \"kineto\" or \"injection\"");
        esc_copy_utf8(r->producer_evidence, sizeof r->producer_evidence, json_reader_str(R, "provenance", prov, "evidence"));
        r->provenance_recorded = 1;
    } else {
        /* Older archives: `import` took PyTorch profiler traces only. */
        r->producer = r->imported ? PRODUCER_PYTORCH : PRODUCER_ATTNPROF;
        snprintf(r->producer_evidence, sizeof r->producer_evidence, "%s",
                 r->imported ? "inferred: an import from before attnprof recorded provenance"
                             : "inferred: an attnprof run from before attnprof recorded provenance");
    }
}

static void read_sources(json_reader *R, json_t *imported, run_info *r)
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
            json_reader_bad(R, "", where, "an object");
            break;
        }
        import_source *s = &r->sources[r->n_sources++];
        json_fields_read(R, FIELDS(source_fields), v, where, s);
        json_t *d = json_object_get(v, "distributedInfo");
        if ((s->has_distributed = json_is_object(d)))
            json_fields_read(R, FIELDS(distributed_fields), d, where, s);
    }
}

static void read_probes(json_reader *R, json_t *root, run_info *r)
{
    json_t *probes = json_object_get(root, "occupancy_api");
    if (probes && !json_is_array(probes))
        json_reader_bad(R, "", "occupancy_api", "an array");
    size_t i;
    json_t *v;
    json_array_foreach(probes, i, v)
    {
        if (r->n_probes == RUN_MAX_PROBES)
            break; /* ground truth for tests only: the first ones are enough */
        char where[48];
        snprintf(where, sizeof where, "occupancy_api[%zu]", i);
        if (!json_is_object(v)) {
            json_reader_bad(R, "", where, "an object");
            break;
        }
        json_fields_read(R, FIELDS(probe_fields), v, where, &r->probes[r->n_probes++]);
    }
}

/* One entry of "variants" (an object with a name: the caller checked). */
static void read_variant(json_reader *R, json_t *v, const char *where, const run_info *r, variant_result *x)
{
    json_fields_read(R, FIELDS(variant_fields), v, where, x);
    x->bwd.recorded = json_is_object(json_object_get(v, "backward"));
    if (x->rows_checked < 0 || (r->shape.seq > 0 && x->rows_checked > r->shape.seq))
        json_reader_bad(R, where, "rows_checked", "a number of query rows, at most the sequence length");
    prediction_from_json(R, json_object_get(v, "prediction"), where, &x->prediction);
    const char *key;
    json_t *f;
    json_object_foreach(json_reader_object(R, where, v, "facts"), key, f)
    {
        if (x->facts.n == ATTN_MAX_FACTS) {
            json_reader_bad(R, where, "facts", "at most 16 facts");
            break;
        }
        attn_fact *it = &x->facts.item[x->facts.n++];
        esc_copy_utf8(it->key, sizeof it->key, key);
        if (!json_is_object(f)) {
            json_reader_bad(R, where, "facts", "an object of {text, value} objects");
            break;
        }
        esc_copy_utf8(it->value, sizeof it->value, json_reader_str(R, where, f, "text"));
        it->number = json_reader_real(R, where, f, "value", -1e30, 1e30);
    }
}

/* The document's frame: the objects every run.json has, and a bounded variant count. */
static int check_frame(json_t *root, const char *path, char *err, size_t errlen)
{
    json_t *shape = json_object_get(root, "shape"), *gpu = json_object_get(root, "gpu");
    json_t *ver = json_object_get(root, "versions"), *vars = json_object_get(root, "variants");
    if (!json_is_object(shape) || !json_is_object(gpu) || !json_is_object(ver) || !json_is_array(vars))
        return err_set(err, errlen, EXIT_BAD_ARCHIVE,
                       "%s: missing shape, gpu, versions or variants: not an attnprof run.json", path);
    if (json_array_size(vars) > RUN_MAX_VARIANTS)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: variants: %zu variants, at most %d can be rendered", path,
                       json_array_size(vars), RUN_MAX_VARIANTS);
    return EXIT_OK;
}

/* Everything but the variants, in the table's order, then the parts. */
static void read_run_level(json_reader *R, json_t *root, run_info *r)
{
    json_fields_read(R, FIELDS(run_fields), root, "", r);
    r->measurement.recorded = json_is_object(json_object_get(root, "measurement"));
    ceilings_from_json(R, json_object_get(root, "ceilings"), &r->ceilings);
    counters_meta_from_json(R, json_object_get(root, "counters"), "counters", &r->counters.meta);
    json_t *imported = json_reader_array(R, "", root, "imported_from");
    r->imported = imported != NULL;
    /* An import never knew a seed or a warm-up: older imports wrote 0 for both. */
    if (r->imported)
        r->seed_recorded = r->warmup_recorded = 0, r->seed = 0, r->warmup = 0;
    read_provenance(R, root, r);
    read_sources(R, imported, r);
    read_probes(R, root, r);
}

int run_info_read_json(run_info *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    json_t *root = NULL;
    int rc = input_read_json(path, INPUT_MAX_DOM_BYTES, &root, err, errlen);
    if (rc != EXIT_OK)
        return err_suffix_rerun(err, errlen, rc);
    if ((rc = check_frame(root, path, err, errlen)) != EXIT_OK) {
        json_decref(root);
        return rc;
    }
    json_reader rd = {path, err, errlen, 0}, *R = &rd;
    read_run_level(R, root, r);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(root, "variants"), i, v)
    {
        variant_result *x = &r->variants[r->n_variants++];
        char where[32];
        snprintf(where, sizeof where, "variants[%zu]", i);
        if (!json_is_object(v) || !*json_reader_str(R, where, v, "name")) {
            if (!rd.failed)
                err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: variants[%zu] has no name", path, i);
            json_decref(root);
            return EXIT_BAD_ARCHIVE;
        }
        read_variant(R, v, where, r, x);
    }
    json_decref(root);
    if (!rd.failed)
        archive_check_run(r, R);
    return json_reader_status(R);
}
