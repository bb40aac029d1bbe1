/* run.json: tool version, command line, shape, GPU and library versions, and
 * each variant's status, error, correctness and CUPTI-overhead probe. */
#include "run_info.h"

#include "escape.h"
#include "input.h"

#include <errno.h>
#include <limits.h>
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

/* NaN is not JSON: unmeasured numbers are written as null. */
static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *device_json(const device_props *d)
{
    json_t *o = json_pack("{s:s,s:s,s:i,s:I,s:i,s:i}", "name", d->name, "compute_capability", "", "sm_count",
                          d->sm_count, "total_memory_bytes", (json_int_t)d->total_mem, "clock_khz", d->clock_khz,
                          "memory_clock_khz", d->mem_clock_khz);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->major, d->minor);
    json_object_set_new(o, "compute_capability", json_string(cc));
    json_object_set_new(o, "memory_bus_width_bits", json_integer(d->mem_bus_width));
    json_object_set_new(o, "l2_bytes", json_integer(d->l2_bytes));
    return o;
}

int run_info_write_json(const run_info *r, const char *path, char *err, size_t errlen)
{
    json_t *vars = json_array();
    for (int i = 0; i < r->n_variants; i++) {
        const variant_result *v = &r->variants[i];
        json_t *facts = json_object();
        for (int f = 0; f < v->facts.n; f++)
            json_object_set_new(facts, v->facts.item[f].key,
                                json_pack("{s:s,s:o}", "text", v->facts.item[f].value, "value",
                                          num(v->facts.item[f].number)));
        json_t *var = json_pack("{s:s,s:s,s:s,s:i,s:i,s:s,s:s,s:o,s:i,s:o,s:o,s:I,s:o}", "name", v->name, "title",
                            v->title, "what_changed", v->what_changed, "expected_ops", v->expected_ops,
                            "expected_memcpy", v->expected_memcpy, "status", variant_status_name(v->status),
                            "error", v->error, "rel_error", num(v->rel_error), "heads_checked", v->heads_checked,
                            "event_us_no_cupti", num(v->event_us_no_cupti), "event_us_cupti",
                            num(v->event_us_cupti), "dropped_records", (json_int_t)v->dropped_records, "facts",
                            facts);
        /* Imported traces expect nothing: -1 is written as no key at all. */
        if (v->expected_ops < 0)
            json_object_del(var, "expected_ops");
        if (v->expected_memcpy < 0)
            json_object_del(var, "expected_memcpy");
        json_object_set_new(var, "host_us_no_cupti", num(v->host_us_no_cupti));
        json_object_set_new(var, "host_us_cupti", num(v->host_us_cupti));
        if (isfinite(v->device_bytes))
            json_object_set_new(var, "device_bytes", json_integer((json_int_t)v->device_bytes));
        if (v->rows_checked > 0)
            json_object_set_new(var, "rows_checked", json_integer(v->rows_checked));
        if (v->prediction.valid)
            json_object_set_new(var, "prediction", prediction_to_json(&v->prediction));
        if (v->kernel_origin[0])
            json_object_set_new(var, "kernel_origin", json_string(v->kernel_origin));
        json_array_append_new(vars, var);
    }
    char cuda_rt[16], cuda_drv[16];
    snprintf(cuda_rt, sizeof cuda_rt, "%d.%d", r->cuda_runtime_version / 1000, r->cuda_runtime_version % 1000 / 10);
    snprintf(cuda_drv, sizeof cuda_drv, "%d.%d", r->cuda_driver_version / 1000, r->cuda_driver_version % 1000 / 10);
    json_t *root = json_pack(
        "{s:s,s:s,s:s,s:{s:i,s:i,s:i,s:i},s:s,s:b,s:I,s:i,s:i,s:f,s:o,s:{s:s,s:s,s:s,s:i,s:i,s:i},s:o}",
        "tool_version", r->tool_version, "command_line", r->command_line, "date", r->date, "shape", "batch",
        r->shape.batch, "heads", r->shape.heads, "seq", r->shape.seq, "dim", r->shape.dim, "dtype", r->dtype,
        "causal", r->causal, "seed", (json_int_t)r->seed, "iters", r->iters, "warmup", r->warmup,
        "rel_error_threshold", r->rel_error_threshold, "gpu", device_json(&r->device), "versions", "driver",
        r->driver_version, "cuda_runtime", cuda_rt, "cuda_driver_api", cuda_drv, "cublas", r->cublas_version,
        "cudnn", r->cudnn_version, "cupti", r->cupti_version, "variants", vars);
    if (!root) {
        snprintf(err, errlen, "%s: could not build the JSON document", path);
        return -1;
    }
    json_object_set_new(root, "nvtx_ranges_from", json_string(r->marker_source));
    /* What an import does not know is absent, never 0 (an attnprof run knows both). */
    if (r->imported && !r->seed_recorded)
        json_object_del(root, "seed");
    if (r->imported && !r->warmup_recorded)
        json_object_del(root, "warmup");
    json_object_set_new(root, "provenance",
                        json_pack("{s:s,s:s}", "producer", run_producer_name(r->producer), "evidence",
                                  r->producer_evidence[0] || r->producer != PRODUCER_ATTNPROF
                                      ? r->producer_evidence
                                      : "recorded by attnprof run (its CUPTI recorder)"));
    json_t *probes = json_array();
    for (int i = 0; i < r->n_probes; i++) {
        const occupancy_probe *p = &r->probes[i];
        json_array_append_new(probes, json_pack("{s:s,s:i,s:i,s:i,s:i,s:i}", "kernel", p->kernel, "threads",
                                                p->threads, "registers", p->registers, "static_smem",
                                                p->static_smem, "dynamic_smem", p->dynamic_smem,
                                                "blocks_per_sm", p->blocks_per_sm));
    }
    json_object_set_new(root, "occupancy_api", probes);
    json_t *gpu = json_object_get(root, "gpu");
    if (r->gpu_uuid[0])
        json_object_set_new(gpu, "uuid", json_string(r->gpu_uuid));
    if (r->gpu_pci_bus_id[0])
        json_object_set_new(gpu, "pci_bus_id", json_string(r->gpu_pci_bus_id));
    if (r->visible_devices[0])
        json_object_set_new(gpu, "cuda_visible_devices", json_string(r->visible_devices));
    if (r->ceilings.measured || r->ceilings.error[0])
        json_object_set_new(root, "ceilings", ceilings_to_json(&r->ceilings));
    if (r->counters.meta.status != CTR_NOT_RUN || r->counters.meta.reason[0])
        json_object_set_new(root, "counters", counters_meta_to_json(&r->counters.meta));
    const run_env *e = &r->env;
    if (e->clock_samples > 0)
        json_object_set_new(root, "measured",
                            json_pack("{s:i,s:i,s:i,s:i,s:i,s:i}", "clock_samples", e->clock_samples,
                                      "sm_clock_mhz_min", e->sm_clock_mhz_min, "sm_clock_mhz_max", e->sm_clock_mhz_max,
                                      "memory_clock_mhz_min", e->mem_clock_mhz_min, "memory_clock_mhz_max",
                                      e->mem_clock_mhz_max, "power_limit_w", e->power_limit_w));
    if (e->host_cpu[0] || e->os[0])
        json_object_set_new(root, "host",
                            json_pack("{s:s,s:i,s:s}", "cpu", e->host_cpu, "logical_cpus", e->host_cpus, "os", e->os));
    if (e->nvcc[0] || e->build_flags[0])
        json_object_set_new(root, "build", json_pack("{s:s,s:s}", "nvcc", e->nvcc, "flags", e->build_flags));
    json_object_set_new(json_object_get(root, "versions"), "cuda_runtime_int", json_integer(r->cuda_runtime_version));
    json_object_set_new(json_object_get(root, "versions"), "cuda_driver_int", json_integer(r->cuda_driver_version));
    if (r->imported) {
        json_t *src = json_array();
        for (int i = 0; i < r->n_sources; i++) {
            const import_source *s = &r->sources[i];
            json_t *o = json_pack("{s:s,s:I,s:s,s:s,s:i,s:I,s:s}", "name", s->file, "size", (json_int_t)s->size,
                                  "sha256", s->sha256, "variant", s->variant, "schemaVersion", s->schema_version,
                                  "baseTimeNanoseconds", (json_int_t)s->base_time_ns, "trace_id", s->trace_id);
            if (s->has_distributed)
                json_object_set_new(o, "distributedInfo", json_pack("{s:s,s:i,s:i}", "backend", s->backend, "rank",
                                                                    s->rank, "world_size", s->world_size));
            json_array_append_new(src, o);
        }
        json_object_set_new(root, "imported_from", src);
        json_object_set_new(root, "shape_from", json_string(r->shape_source));
        if (r->device_limits_note[0])
            json_object_set_new(root, "device_limits_note", json_string(r->device_limits_note));
    }
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
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

/* Counts, sizes and versions: never negative, and they fit an int. */
static int integer(reader *rd, const char *where, json_t *o, const char *k)
{
    return (int)integer_in(rd, where, o, k, 0, INT_MAX);
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

static void run_info_check(const run_info *r, reader *rd)
{
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
    esc_copy_utf8(r->tool_version, sizeof r->tool_version, str(R, "", root, "tool_version"));
    esc_copy_utf8(r->command_line, sizeof r->command_line, str(R, "", root, "command_line"));
    esc_copy_utf8(r->date, sizeof r->date, str(R, "", root, "date"));
    esc_copy_utf8(r->dtype, sizeof r->dtype, str(R, "", root, "dtype"));
    esc_copy_utf8(r->marker_source, sizeof r->marker_source, str(R, "", root, "nvtx_ranges_from"));
    /* The shape's product and the sizes derived from it stay far inside 64 bits. */
    r->shape = (attn_shape){(int)integer_in(R, "shape", shape, "batch", 0, 1 << 20),
                            (int)integer_in(R, "shape", shape, "heads", 0, 1 << 20),
                            (int)integer_in(R, "shape", shape, "seq", 0, 1 << 24),
                            (int)integer_in(R, "shape", shape, "dim", 0, 1 << 16)};
    json_t *causal = json_object_get(root, "causal");
    if (causal && !json_is_boolean(causal))
        bad(R, "", "causal", "true or false");
    r->causal = json_is_true(causal);
    r->seed = (unsigned long long)integer_in(R, "", root, "seed", LLONG_MIN, LLONG_MAX);
    r->iters = integer(R, "", root, "iters");
    r->warmup = integer(R, "", root, "warmup");
    r->seed_recorded = json_object_get(root, "seed") != NULL;
    r->warmup_recorded = json_object_get(root, "warmup") != NULL;
    r->rel_error_threshold = real_in(R, "", root, "rel_error_threshold", 0, 1e30);
    esc_copy_utf8(r->device.name, sizeof r->device.name, str(R, "gpu", gpu, "name"));
    const char *cc = str(R, "gpu", gpu, "compute_capability");
    if (*cc && (sscanf(cc, "%3d.%3d", &r->device.major, &r->device.minor) != 2 || r->device.major < 0 ||
                r->device.minor < 0))
        bad(R, "gpu", "compute_capability", "\"major.minor\"");
    r->device.sm_count = integer(R, "gpu", gpu, "sm_count");
    r->device.total_mem = integer_in(R, "gpu", gpu, "total_memory_bytes", 0, INT64_MAX);
    r->device.clock_khz = integer(R, "gpu", gpu, "clock_khz");
    r->device.mem_clock_khz = integer(R, "gpu", gpu, "memory_clock_khz");
    r->device.mem_bus_width = integer(R, "gpu", gpu, "memory_bus_width_bits");
    r->device.l2_bytes = integer(R, "gpu", gpu, "l2_bytes");
    esc_copy_utf8(r->gpu_uuid, sizeof r->gpu_uuid, str(R, "gpu", gpu, "uuid"));
    esc_copy_utf8(r->gpu_pci_bus_id, sizeof r->gpu_pci_bus_id, str(R, "gpu", gpu, "pci_bus_id"));
    esc_copy_utf8(r->visible_devices, sizeof r->visible_devices, str(R, "gpu", gpu, "cuda_visible_devices"));
    esc_copy_utf8(r->driver_version, sizeof r->driver_version, str(R, "versions", ver, "driver"));
    r->cuda_runtime_version = integer(R, "versions", ver, "cuda_runtime_int");
    r->cuda_driver_version = integer(R, "versions", ver, "cuda_driver_int");
    r->cublas_version = integer(R, "versions", ver, "cublas");
    r->cudnn_version = integer(R, "versions", ver, "cudnn");
    r->cupti_version = integer(R, "versions", ver, "cupti");

    ceilings_from_json(json_object_get(root, "ceilings"), &r->ceilings);
    counters_meta_from_json(json_object_get(root, "counters"), &r->counters.meta);
    json_t *measured = json_object_get(root, "measured"), *host = json_object_get(root, "host");
    json_t *build = json_object_get(root, "build");
    if ((measured && !json_is_object(measured)) || (host && !json_is_object(host)) || (build && !json_is_object(build)))
        bad(R, "", "measured/host/build", "objects");
    run_env *e = &r->env;
    e->clock_samples = integer(R, "measured", measured, "clock_samples");
    e->sm_clock_mhz_min = integer(R, "measured", measured, "sm_clock_mhz_min");
    e->sm_clock_mhz_max = integer(R, "measured", measured, "sm_clock_mhz_max");
    e->mem_clock_mhz_min = integer(R, "measured", measured, "memory_clock_mhz_min");
    e->mem_clock_mhz_max = integer(R, "measured", measured, "memory_clock_mhz_max");
    e->power_limit_w = integer(R, "measured", measured, "power_limit_w");
    esc_copy_utf8(e->host_cpu, sizeof e->host_cpu, str(R, "host", host, "cpu"));
    e->host_cpus = integer(R, "host", host, "logical_cpus");
    esc_copy_utf8(e->os, sizeof e->os, str(R, "host", host, "os"));
    esc_copy_utf8(e->nvcc, sizeof e->nvcc, str(R, "build", build, "nvcc"));
    esc_copy_utf8(e->build_flags, sizeof e->build_flags, str(R, "build", build, "flags"));

    size_t i;
    json_t *v;
    json_t *imported = json_object_get(root, "imported_from");
    if (imported && !json_is_array(imported))
        bad(R, "", "imported_from", "an array");
    r->imported = json_is_array(imported);
    /* An import never knew a seed or a warm-up: older imports wrote 0 for both. */
    if (r->imported)
        r->seed_recorded = r->warmup_recorded = 0, r->seed = 0, r->warmup = 0;
    json_t *prov = object(R, "", root, "provenance");
    if (prov) {
        const char *p = str(R, "provenance", prov, "producer");
        int known = 0;
        for (int k = PRODUCER_ATTNPROF; k <= PRODUCER_KINETO; k++)
            if (!strcmp(p, run_producer_name((run_producer)k)))
                r->producer = (run_producer)k, known = 1;
        if (!known)
            bad(R, "provenance", "producer", "\"attnprof\", \"pytorch_profiler\" or \"kineto\"");
        esc_copy_utf8(r->producer_evidence, sizeof r->producer_evidence, str(R, "provenance", prov, "evidence"));
        r->provenance_recorded = 1;
    } else {
        /* Older archives: `import` took PyTorch profiler traces only. */
        r->producer = r->imported ? PRODUCER_PYTORCH : PRODUCER_ATTNPROF;
        snprintf(r->producer_evidence, sizeof r->producer_evidence, "%s",
                 r->imported ? "inferred: an import from before attnprof recorded provenance"
                             : "inferred: an attnprof run from before attnprof recorded provenance");
    }
    esc_copy_utf8(r->shape_source, sizeof r->shape_source, str(R, "", root, "shape_from"));
    esc_copy_utf8(r->device_limits_note, sizeof r->device_limits_note, str(R, "", root, "device_limits_note"));
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
        esc_copy_utf8(s->file, sizeof s->file, str(R, where, v, "name"));
        s->size = integer_in(R, where, v, "size", 0, LLONG_MAX);
        esc_copy_utf8(s->sha256, sizeof s->sha256, str(R, where, v, "sha256"));
        esc_copy_utf8(s->variant, sizeof s->variant, str(R, where, v, "variant"));
        s->schema_version = integer(R, where, v, "schemaVersion");
        s->base_time_ns = integer_in(R, where, v, "baseTimeNanoseconds", 0, LLONG_MAX);
        esc_copy_utf8(s->trace_id, sizeof s->trace_id, str(R, where, v, "trace_id"));
        json_t *d = json_object_get(v, "distributedInfo");
        if ((s->has_distributed = json_is_object(d))) {
            esc_copy_utf8(s->backend, sizeof s->backend, str(R, where, d, "backend"));
            s->rank = integer(R, where, d, "rank");
            s->world_size = integer(R, where, d, "world_size");
        }
    }
    json_t *probes = json_object_get(root, "occupancy_api");
    if (probes && !json_is_array(probes))
        bad(R, "", "occupancy_api", "an array");
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
        occupancy_probe *p = &r->probes[r->n_probes++];
        esc_copy_utf8(p->kernel, sizeof p->kernel, str(R, where, v, "kernel"));
        p->threads = integer(R, where, v, "threads");
        p->registers = integer(R, where, v, "registers");
        p->static_smem = integer(R, where, v, "static_smem");
        p->dynamic_smem = integer(R, where, v, "dynamic_smem");
        p->blocks_per_sm = integer(R, where, v, "blocks_per_sm");
    }
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
        /* The name ties the variant to its ranges in trace.json: never cut it. */
        if (!esc_copy_utf8(x->name, sizeof x->name, str(R, where, v, "name")))
            bad(R, where, "name", "at most 31 bytes");
        esc_copy_utf8(x->title, sizeof x->title, str(R, where, v, "title"));
        esc_copy_utf8(x->what_changed, sizeof x->what_changed, str(R, where, v, "what_changed"));
        esc_copy_utf8(x->error, sizeof x->error, str(R, where, v, "error"));
        esc_copy_utf8(x->kernel_origin, sizeof x->kernel_origin, str(R, where, v, "kernel_origin"));
        /* Absent (an imported trace): nothing expected, -1. */
        x->expected_ops = json_object_get(v, "expected_ops") ? integer(R, where, v, "expected_ops") : -1;
        x->expected_memcpy = json_object_get(v, "expected_memcpy") ? integer(R, where, v, "expected_memcpy") : -1;
        int st = status_from_name(str(R, where, v, "status"));
        if (st < 0)
            bad(R, where, "status", "\"ok\", \"FAILED\", \"unavailable\" or \"skipped\"");
        x->status = st < 0 ? VARIANT_FAILED : (variant_status)st;
        /* Relative errors, µs and bytes: bounds far above any measurement (1e12 µs is 11 days). */
        x->rel_error = real_in(R, where, v, "rel_error", 0, 1e30);
        x->heads_checked = integer(R, where, v, "heads_checked");
        /* Absent (archives from before the row sample, imports): 0, "not recorded"; those
         * archives checked every row of their heads. */
        x->rows_checked = json_object_get(v, "rows_checked") ? integer(R, where, v, "rows_checked") : 0;
        if (x->rows_checked < 0 || (r->shape.seq > 0 && x->rows_checked > r->shape.seq))
            bad(R, where, "rows_checked", "a number of query rows, at most the sequence length");
        x->event_us_no_cupti = real_in(R, where, v, "event_us_no_cupti", 0, 1e12);
        x->event_us_cupti = real_in(R, where, v, "event_us_cupti", 0, 1e12);
        x->host_us_no_cupti = real_in(R, where, v, "host_us_no_cupti", 0, 1e12);
        x->host_us_cupti = real_in(R, where, v, "host_us_cupti", 0, 1e12);
        x->dropped_records = integer_in(R, where, v, "dropped_records", 0, INT64_MAX);
        prediction_from_json(json_object_get(v, "prediction"), &x->prediction);
        x->device_bytes = real_in(R, where, v, "device_bytes", 0, 9007199254740992.0 /* 2^53 */);
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
    json_decref(root);
    if (!rd.failed)
        run_info_check(r, R);
    return rd.failed ? -1 : 0;
}
