/* Reads trace.json (as trace_write.c writes it) back into a trace. Every event
 * the analysis relies on is validated; a bad file gives one line naming the
 * file and what is wrong with it. */
#include "trace.h"

#include "bounds.h"
#include "escape.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t n, const char *path, size_t idx, const char *what)
{
    snprintf(err, n, "%s: event %zu: %s", path, idx, what);
    return -1;
}

static int get_int(json_t *obj, const char *key, int dflt)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? bounds_int_sat(json_integer_value(v)) : dflt;
}

static int64_t get_i64(json_t *obj, const char *key, int64_t dflt)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static void get_triple(json_t *obj, const char *key, int out[3])
{
    json_t *v = json_object_get(obj, key);
    for (int i = 0; i < 3; i++)
        out[i] = json_is_array(v) && json_is_integer(json_array_get(v, i))
                     ? bounds_int_sat(json_integer_value(json_array_get(v, i)))
                     : 0;
}

static const char *read_device(trace *t, json_t *root)
{
    json_t *p = json_array_get(json_object_get(root, "deviceProperties"), 0);
    if (!json_is_object(p))
        return NULL;
    device_props *d = &t->device;
    json_t *name = json_object_get(p, "name");
    esc_copy_utf8(d->name, sizeof d->name, json_is_string(name) ? json_string_value(name) : "");
    d->total_mem = get_i64(p, "totalGlobalMem", 0);
    d->major = get_int(p, "computeMajor", 0);
    d->minor = get_int(p, "computeMinor", 0);
    d->max_threads_per_block = get_int(p, "maxThreadsPerBlock", 0);
    d->max_threads_per_sm = get_int(p, "maxThreadsPerMultiprocessor", 0);
    d->regs_per_block = get_int(p, "regsPerBlock", 0);
    d->regs_per_sm = get_int(p, "regsPerMultiprocessor", 0);
    d->warp_size = get_int(p, "warpSize", 32);
    d->smem_per_block = get_int(p, "sharedMemPerBlock", 0);
    d->smem_per_sm = get_int(p, "sharedMemPerMultiprocessor", 0);
    d->sm_count = get_int(p, "numSms", 0);
    d->smem_per_block_optin = get_int(p, "sharedMemPerBlockOptin", 0);
    d->max_blocks_per_sm = get_int(p, "maxBlocksPerMultiprocessor", 0);
    d->smem_reserved_per_block = get_int(p, "reservedSharedMemPerBlock", 0);
    d->l2_bytes = get_int(p, "l2CacheSize", 0);
    d->clock_khz = get_int(p, "clockRate", 0);
    d->mem_clock_khz = get_int(p, "memoryClockRate", 0);
    d->mem_bus_width = get_int(p, "memoryBusWidth", 0);
    return bounds_device(d);
}

int trace_read_json(trace *t, const char *path, char *err, size_t errlen)
{
    trace_init(t);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, errlen, "%s: not valid JSON (line %d, column %d: %s); re-run `attnprof run` to record it again",
                 path, je.line, je.column, je.text);
        return -1;
    }
    json_t *events = json_object_get(root, "traceEvents");
    if (!json_is_array(events)) {
        snprintf(err, errlen, "%s: no traceEvents array: not an attnprof/Kineto trace", path);
        json_decref(root);
        return -1;
    }
    int64_t base = get_i64(root, "baseTimeNanoseconds", 0);
    t->pid = get_int(root, "pid", 0);
    t->cupti_version = get_int(root, "cupti_version", 0);
    t->cuda_runtime_version = get_int(root, "cuda_runtime_version", 0);
    t->cuda_driver_version = get_int(root, "cuda_driver_version", 0);
    const char *range = bounds_base_ns(base);
    if (!range)
        range = read_device(t, root);
    if (range) {
        snprintf(err, errlen, "%s: %s", path, range);
        json_decref(root);
        trace_free(t);
        return -1;
    }

    size_t i;
    json_t *e;
    int rc = 0;
    json_array_foreach(events, i, e)
    {
        if (!json_is_object(e)) {
            rc = fail(err, errlen, path, i, "not an object");
            break;
        }
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (!ph || strcmp(ph, "X") != 0)
            continue;
        const char *cat = json_string_value(json_object_get(e, "cat"));
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t *ts = json_object_get(e, "ts"), *dur = json_object_get(e, "dur");
        json_t *args = json_object_get(e, "args");
        if (!cat || !name) {
            rc = fail(err, errlen, path, i, "complete event without cat or name");
            break;
        }
        if (!json_is_number(ts) || !json_is_number(dur) || json_number_value(dur) < 0) {
            rc = fail(err, errlen, path, i, "complete event without a valid ts/dur");
            break;
        }
        int64_t start, end;
        if ((range = bounds_event_ns(base, json_number_value(ts), json_number_value(dur), &start, &end))) {
            rc = fail(err, errlen, path, i, range);
            break;
        }
        int pid = get_int(e, "pid", 0), tid = get_int(e, "tid", 0);

        gpu_op_kind kind;
        if (!strcmp(cat, "kernel"))
            kind = GPU_KERNEL;
        else if (!strcmp(cat, "gpu_memcpy"))
            kind = GPU_MEMCPY;
        else if (!strcmp(cat, "gpu_memset"))
            kind = GPU_MEMSET;
        else if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) {
            if (!json_is_object(args) || !json_is_integer(json_object_get(args, "correlation"))) {
                rc = fail(err, errlen, path, i, "API event without args.correlation");
                break;
            }
            api_call a = {.kind = cat[5] == 'r' ? API_RUNTIME : API_DRIVER,
                          .name = (char *)name,
                          .start_ns = start,
                          .end_ns = end,
                          .correlation = (uint32_t)get_i64(args, "correlation", 0),
                          .pid = pid,
                          .tid = tid};
            trace_add_api(t, &a);
            continue;
        } else if (!strcmp(cat, "user_annotation")) {
            const char *variant = json_is_object(args) ? json_string_value(json_object_get(args, "variant")) : NULL;
            host_range r = {.name = (char *)name,
                            .variant = (char *)(variant ? variant : ""),
                            .iteration = json_is_object(args) ? get_int(args, "iteration", -1) : -1,
                            .start_ns = start,
                            .end_ns = end,
                            .pid = pid,
                            .tid = tid};
            trace_add_range(t, &r);
            continue;
        } else
            continue; /* gpu_user_annotation and others are derived or foreign */

        if (!json_is_object(args) || !json_is_integer(json_object_get(args, "correlation"))) {
            rc = fail(err, errlen, path, i, "GPU event without args.correlation");
            break;
        }
        gpu_op o = {.kind = kind,
                    .name = (char *)name,
                    .start_ns = start,
                    .end_ns = end,
                    .correlation = (uint32_t)get_i64(args, "correlation", 0),
                    .device = get_int(args, "device", pid),
                    .stream = get_int(args, "stream", tid),
                    .bytes = get_i64(args, "bytes", 0)};
        if (kind == GPU_KERNEL) {
            get_triple(args, "grid", o.grid);
            get_triple(args, "block", o.block);
            o.registers = get_int(args, "registers per thread", 0);
            int total = get_int(args, "shared memory", 0);
            o.static_smem = get_int(args, "static shared memory", total);
            o.dynamic_smem = get_int(args, "dynamic shared memory", bounds_sub_sat(total, o.static_smem));
        }
        const char *ck = json_is_object(args) ? json_string_value(json_object_get(args, "copy kind")) : NULL;
        if (kind == GPU_MEMCPY)
            snprintf(o.copy_kind, sizeof o.copy_kind, "%s", ck ? ck : (strlen(name) > 10 ? name + 7 : "?"));
        if (kind == GPU_MEMCPY && !ck) /* Kineto's "Memcpy DtoD (Device -> Device)" */
            o.copy_kind[4] = '\0';
        esc_utf8_trim(o.copy_kind);
        if ((range = bounds_op(&o))) {
            rc = fail(err, errlen, path, i, range);
            break;
        }
        trace_add_op(t, &o);
    }
    json_decref(root);
    if (rc) {
        trace_free(t);
        return rc;
    }
    trace_sort(t);
    return 0;
}
