/* run.json: tool version, command line, shape, GPU and library versions, and
 * each variant's status, error, correctness and CUPTI-overhead probe. */
#include "run_info.h"

#include <errno.h>
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

static variant_status status_from_name(const char *s)
{
    if (s && !strcmp(s, "ok"))
        return VARIANT_OK;
    if (s && !strcmp(s, "unavailable"))
        return VARIANT_UNAVAILABLE;
    if (s && !strcmp(s, "skipped"))
        return VARIANT_SKIPPED;
    return VARIANT_FAILED;
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
        json_object_set_new(var, "host_us_no_cupti", num(v->host_us_no_cupti));
        json_object_set_new(var, "host_us_cupti", num(v->host_us_cupti));
        if (isfinite(v->device_bytes))
            json_object_set_new(var, "device_bytes", json_integer((json_int_t)v->device_bytes));
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
    json_object_set_new(json_object_get(root, "versions"), "cuda_runtime_int", json_integer(r->cuda_runtime_version));
    json_object_set_new(json_object_get(root, "versions"), "cuda_driver_int", json_integer(r->cuda_driver_version));
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (rc) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static double real(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int integer(json_t *o, const char *k) { return (int)json_integer_value(json_object_get(o, k)); }

int run_info_read_json(run_info *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
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
    snprintf(r->tool_version, sizeof r->tool_version, "%s", str(root, "tool_version"));
    snprintf(r->command_line, sizeof r->command_line, "%s", str(root, "command_line"));
    snprintf(r->date, sizeof r->date, "%s", str(root, "date"));
    snprintf(r->dtype, sizeof r->dtype, "%s", str(root, "dtype"));
    snprintf(r->marker_source, sizeof r->marker_source, "%s", str(root, "nvtx_ranges_from"));
    r->shape = (attn_shape){integer(shape, "batch"), integer(shape, "heads"), integer(shape, "seq"),
                            integer(shape, "dim")};
    r->causal = json_is_true(json_object_get(root, "causal"));
    r->seed = (unsigned long long)json_integer_value(json_object_get(root, "seed"));
    r->iters = integer(root, "iters");
    r->warmup = integer(root, "warmup");
    r->rel_error_threshold = real(root, "rel_error_threshold");
    snprintf(r->device.name, sizeof r->device.name, "%s", str(gpu, "name"));
    sscanf(str(gpu, "compute_capability"), "%d.%d", &r->device.major, &r->device.minor);
    r->device.sm_count = integer(gpu, "sm_count");
    r->device.total_mem = json_integer_value(json_object_get(gpu, "total_memory_bytes"));
    r->device.clock_khz = integer(gpu, "clock_khz");
    r->device.mem_clock_khz = integer(gpu, "memory_clock_khz");
    r->device.mem_bus_width = integer(gpu, "memory_bus_width_bits");
    r->device.l2_bytes = integer(gpu, "l2_bytes");
    snprintf(r->gpu_uuid, sizeof r->gpu_uuid, "%s", str(gpu, "uuid"));
    snprintf(r->gpu_pci_bus_id, sizeof r->gpu_pci_bus_id, "%s", str(gpu, "pci_bus_id"));
    snprintf(r->visible_devices, sizeof r->visible_devices, "%s", str(gpu, "cuda_visible_devices"));
    snprintf(r->driver_version, sizeof r->driver_version, "%s", str(ver, "driver"));
    r->cuda_runtime_version = integer(ver, "cuda_runtime_int");
    r->cuda_driver_version = integer(ver, "cuda_driver_int");
    r->cublas_version = integer(ver, "cublas");
    r->cudnn_version = integer(ver, "cudnn");
    r->cupti_version = integer(ver, "cupti");

    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(root, "occupancy_api"), i, v)
    {
        if (r->n_probes == RUN_MAX_PROBES)
            break;
        occupancy_probe *p = &r->probes[r->n_probes++];
        snprintf(p->kernel, sizeof p->kernel, "%s", str(v, "kernel"));
        p->threads = integer(v, "threads");
        p->registers = integer(v, "registers");
        p->static_smem = integer(v, "static_smem");
        p->dynamic_smem = integer(v, "dynamic_smem");
        p->blocks_per_sm = integer(v, "blocks_per_sm");
    }
    json_array_foreach(vars, i, v)
    {
        if (r->n_variants == RUN_MAX_VARIANTS)
            break;
        variant_result *x = &r->variants[r->n_variants++];
        if (!json_is_object(v) || !*str(v, "name")) {
            snprintf(err, errlen, "%s: variants[%zu] has no name", path, i);
            json_decref(root);
            return -1;
        }
        snprintf(x->name, sizeof x->name, "%s", str(v, "name"));
        snprintf(x->title, sizeof x->title, "%s", str(v, "title"));
        snprintf(x->what_changed, sizeof x->what_changed, "%s", str(v, "what_changed"));
        snprintf(x->error, sizeof x->error, "%s", str(v, "error"));
        x->expected_ops = integer(v, "expected_ops");
        x->expected_memcpy = integer(v, "expected_memcpy");
        x->status = status_from_name(str(v, "status"));
        x->rel_error = real(v, "rel_error");
        x->heads_checked = integer(v, "heads_checked");
        x->event_us_no_cupti = real(v, "event_us_no_cupti");
        x->event_us_cupti = real(v, "event_us_cupti");
        x->host_us_no_cupti = real(v, "host_us_no_cupti");
        x->host_us_cupti = real(v, "host_us_cupti");
        x->dropped_records = json_integer_value(json_object_get(v, "dropped_records"));
        x->device_bytes = real(v, "device_bytes");
        const char *key;
        json_t *f;
        json_object_foreach(json_object_get(v, "facts"), key, f)
        {
            if (x->facts.n == ATTN_MAX_FACTS)
                break;
            attn_fact *it = &x->facts.item[x->facts.n++];
            snprintf(it->key, sizeof it->key, "%s", key);
            snprintf(it->value, sizeof it->value, "%s", str(f, "text"));
            it->number = real(f, "value");
        }
    }
    json_decref(root);
    return 0;
}
