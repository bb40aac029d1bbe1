/* trace.json in the Chrome Trace Event Format, with the keys PyTorch's profiler
 * (Kineto) writes, so Perfetto, chrome://tracing and Kineto-reading tools open it.
 * Timestamps are µs relative to baseTimeNanoseconds, printed with ns resolution. */
#include "trace.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static int64_t base_ns(const trace *t)
{
    int64_t b = INT64_MAX;
    for (size_t i = 0; i < t->n_ops; i++)
        if (t->ops[i].start_ns < b)
            b = t->ops[i].start_ns;
    for (size_t i = 0; i < t->n_apis; i++)
        if (t->apis[i].start_ns < b)
            b = t->apis[i].start_ns;
    for (size_t i = 0; i < t->n_ranges; i++)
        if (t->ranges[i].start_ns < b)
            b = t->ranges[i].start_ns;
    return b == INT64_MAX ? 0 : b;
}

/* ns → µs as a JSON real; %.3f keeps every nanosecond. */
static json_t *us(int64_t ns, int64_t base) { return json_real((double)(ns - base) / 1000.0); }

static json_t *triple(const int v[3]) { return json_pack("[iii]", v[0], v[1], v[2]); }

static json_t *x_event(const char *cat, const char *name, int pid, int tid, int64_t start, int64_t end,
                       int64_t base, json_t *args)
{
    return json_pack("{s:s,s:s,s:s,s:i,s:i,s:o,s:o,s:o}", "ph", "X", "cat", cat, "name", name, "pid", pid,
                     "tid", tid, "ts", us(start, base), "dur", json_real((double)(end - start) / 1000.0),
                     "args", args);
}

static const char *op_category(gpu_op_kind k)
{
    return k == GPU_KERNEL ? "kernel" : k == GPU_MEMCPY ? "gpu_memcpy" : "gpu_memset";
}

static json_t *op_args(const gpu_op *o)
{
    json_t *a = json_pack("{s:i,s:i,s:i,s:I}", "External id", (int)o->correlation, "device", o->device, "stream",
                          o->stream, "correlation", (json_int_t)o->correlation);
    if (o->kind == GPU_KERNEL) {
        json_object_set_new(a, "registers per thread", json_integer(o->registers));
        json_object_set_new(a, "shared memory", json_integer(o->static_smem + o->dynamic_smem));
        json_object_set_new(a, "static shared memory", json_integer(o->static_smem));
        json_object_set_new(a, "dynamic shared memory", json_integer(o->dynamic_smem));
        json_object_set_new(a, "grid", triple(o->grid));
        json_object_set_new(a, "block", triple(o->block));
    } else {
        json_object_set_new(a, "bytes", json_integer(o->bytes));
        double dur_s = (double)(o->end_ns - o->start_ns) * 1e-9;
        if (dur_s > 0)
            json_object_set_new(a, "memory bandwidth (GB/s)", json_real((double)o->bytes / dur_s / 1e9));
        if (o->kind == GPU_MEMCPY)
            json_object_set_new(a, "copy kind", json_string(o->copy_kind));
    }
    return a;
}

static json_t *device_properties(const trace *t)
{
    const device_props *d = &t->device;
    json_t *p = json_pack("{s:i,s:s,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "id", 0, "name", d->name,
                          "totalGlobalMem", (json_int_t)d->total_mem, "computeMajor", d->major, "computeMinor",
                          d->minor, "maxThreadsPerBlock", d->max_threads_per_block, "maxThreadsPerMultiprocessor",
                          d->max_threads_per_sm, "regsPerBlock", d->regs_per_block, "regsPerMultiprocessor",
                          d->regs_per_sm, "warpSize", d->warp_size, "sharedMemPerBlock", d->smem_per_block,
                          "sharedMemPerMultiprocessor", d->smem_per_sm, "numSms", d->sm_count,
                          "sharedMemPerBlockOptin", d->smem_per_block_optin);
    json_object_set_new(p, "maxBlocksPerMultiprocessor", json_integer(d->max_blocks_per_sm));
    json_object_set_new(p, "reservedSharedMemPerBlock", json_integer(d->smem_reserved_per_block));
    json_object_set_new(p, "l2CacheSize", json_integer(d->l2_bytes));
    json_object_set_new(p, "clockRate", json_integer(d->clock_khz));
    json_object_set_new(p, "memoryClockRate", json_integer(d->mem_clock_khz));
    json_object_set_new(p, "memoryBusWidth", json_integer(d->mem_bus_width));
    return json_pack("[o]", p);
}

static json_t *metadata(const char *what, int pid, int tid, const char *name)
{
    return json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", what, "ph", "M", "pid", pid, "tid", tid, "args", "name",
                     name);
}

/* gpu_user_annotation: the GPU-side extent of each forward (first op start to last
 * op end among the ops launched inside the range), as Kineto draws it. */
static void add_gpu_annotations(const trace *t, json_t *ev, int64_t base)
{
    for (size_t r = 0; r < t->n_ranges; r++) {
        const host_range *h = &t->ranges[r];
        if (h->iteration < 0)
            continue;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        int stream = 0;
        for (size_t i = 0; i < t->n_apis; i++) {
            const api_call *a = &t->apis[i];
            if (a->tid != h->tid || a->start_ns < h->start_ns || a->end_ns > h->end_ns)
                continue;
            for (size_t j = 0; j < t->n_ops; j++)
                if (t->ops[j].correlation == a->correlation) {
                    if (t->ops[j].start_ns < lo)
                        lo = t->ops[j].start_ns, stream = t->ops[j].stream;
                    if (t->ops[j].end_ns > hi)
                        hi = t->ops[j].end_ns;
                }
        }
        if (lo == INT64_MAX)
            continue;
        json_array_append_new(ev, x_event("gpu_user_annotation", h->name, 0, stream, lo, hi, base,
                                          json_pack("{s:s,s:i}", "variant", h->variant, "iteration",
                                                    h->iteration)));
    }
}

int trace_write_json(const trace *t, const char *path, char *err, size_t errlen)
{
    const int64_t base = base_ns(t);
    json_t *ev = json_array();
    json_array_append_new(ev, metadata("process_name", t->pid, 0, "attnprof"));
    json_array_append_new(ev, metadata("process_name", 0, 0, "CUDA GPU 0"));

    for (size_t i = 0; i < t->n_ranges; i++) {
        const host_range *h = &t->ranges[i];
        json_array_append_new(ev, x_event(h->kind == RANGE_CPU_OP ? "cpu_op" : "user_annotation", h->name, h->pid, h->tid, h->start_ns, h->end_ns, base,
                                          json_pack("{s:s,s:i}", "variant", h->variant, "iteration",
                                                    h->iteration)));
    }
    for (size_t i = 0; i < t->n_apis; i++) {
        const api_call *a = &t->apis[i];
        json_array_append_new(ev, x_event(a->kind == API_RUNTIME ? "cuda_runtime" : "cuda_driver", a->name, a->pid,
                                          a->tid, a->start_ns, a->end_ns, base,
                                          json_pack("{s:i,s:I}", "External id", (int)a->correlation,
                                                    "correlation", (json_int_t)a->correlation)));
    }
    for (size_t i = 0; i < t->n_ops; i++) {
        const gpu_op *o = &t->ops[i];
        json_array_append_new(ev, x_event(op_category(o->kind), o->name, o->device, o->stream, o->start_ns,
                                          o->end_ns, base, op_args(o)));
        const api_call *l = trace_launcher(t, o);
        if (!l)
            continue;
        /* Flow arrow launch → GPU op, Kineto's "ac2g" pair. */
        json_array_append_new(ev, json_pack("{s:s,s:I,s:i,s:i,s:o,s:s,s:s}", "ph", "s", "id",
                                            (json_int_t)o->correlation, "pid", l->pid, "tid", l->tid, "ts",
                                            us(l->start_ns, base), "cat", "ac2g", "name", "ac2g"));
        json_array_append_new(ev, json_pack("{s:s,s:I,s:i,s:i,s:o,s:s,s:s,s:s}", "ph", "f", "id",
                                            (json_int_t)o->correlation, "pid", o->device, "tid", o->stream, "ts",
                                            us(o->start_ns, base), "cat", "ac2g", "name", "ac2g", "bp", "e"));
    }
    add_gpu_annotations(t, ev, base);

    json_t *root = json_pack("{s:i,s:o,s:i,s:i,s:i,s:o,s:s,s:I}", "schemaVersion", 1, "deviceProperties",
                             device_properties(t), "cupti_version", t->cupti_version, "cuda_runtime_version",
                             t->cuda_runtime_version, "cuda_driver_version", t->cuda_driver_version, "traceEvents",
                             ev, "displayTimeUnit", "ms", "baseTimeNanoseconds", (json_int_t)base);
    if (!root) {
        snprintf(err, errlen, "%s: could not build the JSON document", path);
        return -1;
    }
    json_object_set_new(root, "traceName", json_string("attnprof"));
    json_object_set_new(root, "pid", json_integer(t->pid));
    int rc = json_dump_file(root, path, JSON_INDENT(0) | JSON_REAL_PRECISION(15) | JSON_COMPACT);
    json_decref(root);
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
