/* trace.json in the Chrome Trace Event Format, as PyTorch's profiler (Kineto)
 * writes it, so Perfetto, chrome://tracing and Kineto readers (Holistic Trace
 * Analysis, torch-tb-profiler) take it as one of PyTorch's own:
 *   - every top-level key before traceEvents but traceName (HTA's streaming reader
 *     stops at traceEvents), trace_id, and distributedInfo written with a space
 *     after each colon (HTA finds the rank with the regex "rank":\s+(\d+));
 *   - process/thread metadata events with ts; a Trace span and an Iteration Start;
 *   - a ProfilerStep#N user_annotation around each recorded forward (N counts all
 *     forwards of the run), beside the variant's own range and attn_fwd;
 *   - External id in Kineto's meaning: the id of the enclosing host range, shared
 *     by the API calls, GPU ops and gpu_user_annotation inside it;
 *   - kernel args blocks per SM, warps per SM, est. achieved occupancy %, queued,
 *     context; context on memcpy/memset; cbid on API calls.
 * The document is streamed with stdio (memory does not grow with the trace).
 * Timestamps are µs relative to baseTimeNanoseconds with every nanosecond. */
#include "alloc.h"
#include "err.h"
#include "trace.h"

#include "occupancy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static int64_t end_ns(const trace *t)
{
    int64_t e = INT64_MIN;
    for (size_t i = 0; i < t->n_ops; i++)
        if (t->ops[i].end_ns > e)
            e = t->ops[i].end_ns;
    for (size_t i = 0; i < t->n_apis; i++)
        if (t->apis[i].end_ns > e)
            e = t->apis[i].end_ns;
    for (size_t i = 0; i < t->n_ranges; i++)
        if (t->ranges[i].end_ns > e)
            e = t->ranges[i].end_ns;
    return e == INT64_MIN ? 0 : e;
}

/* A JSON string: quotes, backslashes and control characters escaped; UTF-8 as is.
 * Runs without anything to escape go out in one fwrite. */
static void jstr(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : ""), *run = p;
    putc_unlocked('"', f);
    for (; *p; p++) {
        if (*p != '"' && *p != '\\' && *p >= 0x20)
            continue;
        fwrite_unlocked(run, 1, (size_t)(p - run), f);
        if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else {
            putc_unlocked('\\', f);
            putc_unlocked(*p, f);
        }
        run = p + 1;
    }
    fwrite_unlocked(run, 1, (size_t)(p - run), f);
    putc_unlocked('"', f);
}

/* ns → µs with three decimals, exactly (digits by hand: the writer's hot path). */
static void jus(FILE *f, int64_t ns)
{
    char buf[32], *e = buf + sizeof buf, *p = e;
    int neg = ns < 0;
    uint64_t v = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    for (int i = 0; i < 3; i++, v /= 10)
        *--p = (char)('0' + v % 10);
    *--p = '.';
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        *--p = '-';
    fwrite_unlocked(p, 1, (size_t)(e - p), f);
}

static void x_head(FILE *f, const char *cat, const char *name, int pid, int tid, int64_t start, int64_t end,
                   int64_t base)
{
    fputs(",\n{\"ph\": \"X\", \"cat\": ", f);
    jstr(f, cat);
    fputs(", \"name\": ", f);
    jstr(f, name);
    fprintf(f, ", \"pid\": %d, \"tid\": %d, \"ts\": ", pid, tid);
    jus(f, start - base);
    fputs(", \"dur\": ", f);
    jus(f, end - start);
}

static const char *op_category(gpu_op_kind k)
{
    return k == GPU_KERNEL ? "kernel" : k == GPU_MEMCPY ? "gpu_memcpy" : "gpu_memset";
}

static void op_args(FILE *f, const trace *t, const gpu_op *o, size_t external_id)
{
    fprintf(f, ", \"args\": {\"External id\": %zu", external_id);
    if (o->kind == GPU_KERNEL)
        fputs(", \"queued\": 0", f);
    fprintf(f, ", \"device\": %d, \"context\": %d, \"stream\": %d, \"correlation\": %u", o->device, o->context,
            o->stream, o->correlation);
    if (o->kind == GPU_KERNEL) {
        fprintf(f, ", \"registers per thread\": %d, \"shared memory\": %d, \"static shared memory\": %d, "
                   "\"dynamic shared memory\": %d",
                o->registers, o->static_smem + o->dynamic_smem, o->static_smem, o->dynamic_smem);
        occupancy occ;
        char err[128];
        int have = occupancy_of_op(o, &t->device, &occ, err, sizeof err) == 0;
        if (have)
            fprintf(f, ", \"blocks per SM\": %.6f, \"warps per SM\": %.6f", occ.grid_blocks_per_sm,
                    occ.grid_blocks_per_sm * occ.warps_per_block);
        fprintf(f, ", \"grid\": [%d, %d, %d], \"block\": [%d, %d, %d]", o->grid[0], o->grid[1], o->grid[2],
                o->block[0], o->block[1], o->block[2]);
        if (o->has_kineto_occupancy)
            fprintf(f, ", \"est. achieved occupancy %%\": %.15g", o->kineto_occupancy);
        else if (have)
            fprintf(f, ", \"est. achieved occupancy %%\": %d", occ.kineto_pct);
    } else {
        fprintf(f, ", \"bytes\": %lld", (long long)o->bytes);
        double dur_s = (double)(o->end_ns - o->start_ns) * 1e-9;
        if (dur_s > 0)
            fprintf(f, ", \"memory bandwidth (GB/s)\": %.15g", (double)o->bytes / dur_s / 1e9);
        if (o->kind == GPU_MEMCPY) {
            fputs(", \"copy kind\": ", f);
            jstr(f, o->copy_kind);
        }
    }
    fputs("}}", f);
}

static void device_properties(FILE *f, const trace *t)
{
    const device_props *d = &t->device;
    fputs("  \"deviceProperties\": [\n    {\"id\": 0, \"name\": ", f);
    jstr(f, d->name);
    fprintf(f, ", \"totalGlobalMem\": %lld, \"computeMajor\": %d, \"computeMinor\": %d, \"maxThreadsPerBlock\": %d, "
               "\"maxThreadsPerMultiprocessor\": %d, \"regsPerBlock\": %d, \"regsPerMultiprocessor\": %d, "
               "\"warpSize\": %d, \"sharedMemPerBlock\": %d, \"sharedMemPerMultiprocessor\": %d, \"numSms\": %d, "
               "\"sharedMemPerBlockOptin\": %d, \"maxBlocksPerMultiprocessor\": %d, "
               "\"reservedSharedMemPerBlock\": %d, \"l2CacheSize\": %d, \"clockRate\": %d, \"memoryClockRate\": %d, "
               "\"memoryBusWidth\": %d}\n  ],\n",
            (long long)d->total_mem, d->major, d->minor, d->max_threads_per_block, d->max_threads_per_sm,
            d->regs_per_block, d->regs_per_sm, d->warp_size, d->smem_per_block, d->smem_per_sm, d->sm_count,
            d->smem_per_block_optin, d->max_blocks_per_sm, d->smem_reserved_per_block, d->l2_bytes, d->clock_khz,
            d->mem_clock_khz, d->mem_bus_width);
}

static void meta(FILE *f, const char *what, int pid, int tid, int64_t ts, const char *key, const char *text, long num)
{
    fprintf(f, ",\n{\"name\": \"%s\", \"ph\": \"M\", \"ts\": ", what);
    jus(f, ts);
    fprintf(f, ", \"pid\": %d, \"tid\": %d, \"args\": {\"%s\": ", pid, tid, key);
    if (text)
        jstr(f, text);
    else
        fprintf(f, "%ld", num);
    fputs("}}", f);
}

static int is_step(const host_range *h) { return !strncmp(h->name, "ProfilerStep#", 13); }

/* Process and thread names as Kineto writes them: host process and threads, GPU
 * devices and streams seen in the trace. */
/* (pid, tid) or (device, stream) as one key; a negative id shifted left would be
 * undefined (a hostile import writes one), its 32-bit pattern is not. */
static uint64_t thread_key(int hi, int lo) { return (uint64_t)(uint32_t)hi << 32 | (uint32_t)lo; }

static void metadata(FILE *f, const trace *t, int64_t ts)
{
    int host_pid = t->pid;
    meta(f, "process_name", host_pid, 0, ts, "name", "attnprof", 0);
    meta(f, "process_labels", host_pid, 0, ts, "labels", "CPU", 0);
    meta(f, "process_sort_index", host_pid, 0, ts, "sort_index", NULL, host_pid);
    int devices[64], n_dev = 0;
    uint64_t streams[256];
    int n_streams = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        const gpu_op *o = &t->ops[i];
        int seen = 0;
        for (int k = 0; k < n_dev && !seen; k++)
            seen = devices[k] == o->device;
        if (!seen && n_dev < 64) {
            devices[n_dev++] = o->device;
            char label[32];
            snprintf(label, sizeof label, "GPU %d", o->device);
            meta(f, "process_name", o->device, 0, ts, "name", "attnprof", 0);
            meta(f, "process_labels", o->device, 0, ts, "labels", label, 0);
            meta(f, "process_sort_index", o->device, 0, ts, "sort_index", NULL, 5000000L + o->device);
        }
        uint64_t key = thread_key(o->device, o->stream);
        seen = 0;
        for (int k = 0; k < n_streams && !seen; k++)
            seen = streams[k] == key;
        if (!seen && n_streams < 256) {
            streams[n_streams++] = key;
            char name[32];
            snprintf(name, sizeof name, "stream %d ", o->stream);
            meta(f, "thread_name", o->device, o->stream, ts, "name", name, 0);
            meta(f, "thread_sort_index", o->device, o->stream, ts, "sort_index", NULL, o->stream);
        }
    }
    uint64_t threads[256];
    int n_threads = 0;
    for (size_t i = 0; i < t->n_apis + t->n_ranges; i++) {
        int pid = i < t->n_apis ? t->apis[i].pid : t->ranges[i - t->n_apis].pid;
        int tid = i < t->n_apis ? t->apis[i].tid : t->ranges[i - t->n_apis].tid;
        uint64_t key = thread_key(pid, tid);
        int seen = 0;
        for (int k = 0; k < n_threads && !seen; k++)
            seen = threads[k] == key;
        if (seen || n_threads == 256)
            continue;
        threads[n_threads++] = key;
        char name[48];
        snprintf(name, sizeof name, "thread %d (attnprof)", tid);
        meta(f, "thread_name", pid, tid, ts, "name", name, 0);
        meta(f, "thread_sort_index", pid, tid, ts, "sort_index", NULL, tid);
    }
}

/* The GPU extent of each forward, as gpu_user_annotation: the ops launched by the
 * API calls whose innermost user_annotation is the forward. */
static void gpu_annotations(FILE *f, const trace *t, int64_t base)
{
    size_t *enclosing = trace_api_enclosing(t, 1u << RANGE_ANNOTATION);
    int64_t *lo = malloc((t->n_ranges ? t->n_ranges : 1) * sizeof *lo);
    int64_t *hi = malloc((t->n_ranges ? t->n_ranges : 1) * sizeof *hi);
    int *stream = calloc(t->n_ranges ? t->n_ranges : 1, sizeof *stream);
    int *device = calloc(t->n_ranges ? t->n_ranges : 1, sizeof *device);
    if (!lo || !hi || !stream || !device)
        attn_oom();
    for (size_t r = 0; r < t->n_ranges; r++)
        lo[r] = INT64_MAX, hi[r] = INT64_MIN;
    for (size_t j = 0; j < t->n_ops; j++) {
        const api_call *l = trace_launcher(t, &t->ops[j]);
        if (!l)
            continue;
        size_t r = enclosing[l - t->apis];
        if (!r)
            continue;
        r--;
        if (t->ops[j].start_ns < lo[r])
            lo[r] = t->ops[j].start_ns, stream[r] = t->ops[j].stream, device[r] = t->ops[j].device;
        if (t->ops[j].end_ns > hi[r])
            hi[r] = t->ops[j].end_ns;
    }
    for (size_t r = 0; r < t->n_ranges; r++) {
        const host_range *h = &t->ranges[r];
        if (h->iteration < 0 || lo[r] == INT64_MAX)
            continue;
        x_head(f, "gpu_user_annotation", h->name, device[r], stream[r], lo[r], hi[r], base);
        fprintf(f, ", \"args\": {\"External id\": %zu, \"variant\": ", r + 1);
        jstr(f, h->variant);
        fprintf(f, ", \"iteration\": %d}}", h->iteration);
    }
    free(lo), free(hi), free(stream), free(device);
    free(enclosing);
}

int trace_write_json(const trace *t, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return err_set(err, errlen, EXIT_IO, "%s: cannot write: %s", path, strerror(errno));
    static char buf[1 << 16];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    const int64_t base = base_ns(t), last = end_ns(t);
    fputs("{\n  \"schemaVersion\": 1,\n", f);
    device_properties(f, t);
    fputs("  \"distributedInfo\": {\"backend\": \"none\", \"rank\": 0, \"world_size\": 1},\n", f);
    fprintf(f, "  \"trace_id\": \"%016llX%016llX\",\n", (unsigned long long)base, (unsigned long long)t->pid);
    fprintf(f, "  \"cupti_version\": %d,\n  \"cuda_runtime_version\": %d,\n  \"cuda_driver_version\": %d,\n",
            t->cupti_version, t->cuda_runtime_version, t->cuda_driver_version);
    fprintf(f, "  \"pid\": %d,\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": %lld,\n", t->pid,
            (long long)base);
    fputs("  \"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 0.000, \"dur\": ", f);
    jus(f, last - base);
    fputs(", \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler (0)\", "
          "\"args\": {\"Op count\": 0}}",
          f);
    fputs(",\n{\"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"Traces\", "
          "\"tid\": \"Trace PyTorch Profiler\", \"ts\": 0.000}",
          f);
    metadata(f, t, 0);

    /* External ids: range i is i + 1; the derived ProfilerStep#N follow. */
    size_t *enclosing = trace_api_enclosing(t, 1u << RANGE_ANNOTATION | 1u << RANGE_CPU_OP);
    size_t step = 0;
    for (size_t i = 0; i < t->n_ranges; i++) {
        const host_range *h = &t->ranges[i];
        if (h->iteration < 0 || h->kind != RANGE_ANNOTATION || is_step(h))
            continue;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%zu", step);
        x_head(f, "user_annotation", name, h->pid, h->tid, h->start_ns, h->end_ns, base);
        fprintf(f, ", \"args\": {\"External id\": %zu}}", t->n_ranges + ++step);
    }
    for (size_t i = 0; i < t->n_ranges; i++) {
        const host_range *h = &t->ranges[i];
        x_head(f, h->kind == RANGE_CPU_OP ? "cpu_op" : "user_annotation", h->name, h->pid, h->tid, h->start_ns,
               h->end_ns, base);
        fprintf(f, ", \"args\": {\"External id\": %zu, \"variant\": ", i + 1);
        jstr(f, h->variant);
        fprintf(f, ", \"iteration\": %d", h->iteration);
        if (h->sample.recorded) /* %.17g reads back to the same double */
            fprintf(f, ", \"pass\": %d, \"event_us\": %.17g, \"sm_mhz\": %d, \"mem_mhz\": %d, \"power_w\": %.17g, "
                       "\"temp_c\": %d",
                    h->sample.pass, h->sample.event_us, h->sample.sm_mhz, h->sample.mem_mhz, h->sample.power_w,
                    h->sample.temp_c);
        fputs("}}", f);
    }
    for (size_t i = 0; i < t->n_apis; i++) {
        const api_call *a = &t->apis[i];
        x_head(f, a->kind == API_RUNTIME ? "cuda_runtime" : "cuda_driver", a->name, a->pid, a->tid, a->start_ns,
               a->end_ns, base);
        fprintf(f, ", \"args\": {\"External id\": %zu, \"cbid\": %d, \"correlation\": %u}}", enclosing[i], a->cbid,
                a->correlation);
    }
    for (size_t i = 0; i < t->n_ops; i++) {
        const gpu_op *o = &t->ops[i];
        const api_call *l = trace_launcher(t, o);
        x_head(f, op_category(o->kind), o->name, o->device, o->stream, o->start_ns, o->end_ns, base);
        op_args(f, t, o, l ? enclosing[l - t->apis] : 0);
        if (!l)
            continue;
        /* Flow arrow launch → GPU op, Kineto's "ac2g" pair. */
        fprintf(f, ",\n{\"ph\": \"s\", \"id\": %u, \"pid\": %d, \"tid\": %d, \"ts\": ", o->correlation, l->pid,
                l->tid);
        jus(f, l->start_ns - base);
        fputs(", \"cat\": \"ac2g\", \"name\": \"ac2g\"}", f);
        fprintf(f, ",\n{\"ph\": \"f\", \"id\": %u, \"pid\": %d, \"tid\": %d, \"ts\": ", o->correlation, o->device,
                o->stream);
        jus(f, o->start_ns - base);
        fputs(", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}", f);
    }
    gpu_annotations(f, t, base);
    free(enclosing);
    fputs("\n  ],\n  \"traceName\": \"attnprof\"\n}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return err_set(err, errlen, EXIT_IO, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
    return EXIT_OK;
}
