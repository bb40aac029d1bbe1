/* Reads trace.json (as trace_write.c writes it) back into a trace, through the
 * streaming Kineto reader (kineto_read.c). Every event the analysis relies on is
 * validated; a bad file gives one line naming the file and what is wrong with it.
 * Times are read relative to the file and moved by baseTimeNanoseconds at the end
 * (Kineto may write that key after traceEvents). */
#include "kineto_read.h"
#include "trace.h"

#include "bounds.h"
#include "err.h"
#include "escape.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int int_or(const kineto_num *n, int dflt) { return n->set && n->is_int ? bounds_int_sat(n->i) : dflt; }
static int64_t i64_or(const kineto_num *n, int64_t dflt) { return n->set && n->is_int ? n->i : dflt; }

/* The args the in-memory trace reads as whole numbers (SECURITY.md: a fraction or a string
 * there is an error, not a 0). "blocks per SM", "warps per SM" and the occupancy
 * are fractions in Kineto's own traces. */
static const struct {
    kineto_arg arg;
    const char *key;
} WHOLE_ARGS[] = {
    {KARG_CORRELATION, "correlation"}, {KARG_DEVICE, "device"}, {KARG_STREAM, "stream"},
    {KARG_CONTEXT, "context"}, {KARG_REGISTERS, "registers per thread"}, {KARG_SHARED_MEMORY, "shared memory"},
    {KARG_STATIC_SMEM, "static shared memory"}, {KARG_DYNAMIC_SMEM, "dynamic shared memory"},
    {KARG_BYTES, "bytes"}, {KARG_ITERATION, "iteration"}, {KARG_CBID, "cbid"},
};

/* NULL when every arg the in-memory trace reads is of its type and range; else the reason. */
static const char *check_arg_types(const kineto_event *e, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof WHOLE_ARGS / sizeof WHOLE_ARGS[0]; i++) {
        const kineto_num *a = &e->arg[WHOLE_ARGS[i].arg];
        if (a->wrong_type || (a->set && !a->is_int)) {
            snprintf(buf, n, "args.%s: expected a whole number, not %s", WHOLE_ARGS[i].key,
                     a->wrong_type ? "a string, boolean, null, array or object" : "a fraction");
            return buf;
        }
    }
    if (e->bad_triple)
        return e->bad_triple & 1 ? "args.grid: expected an array of at most 3 whole numbers"
                                 : "args.block: expected an array of at most 3 whole numbers";
    /* CUPTI's correlation ids are 32-bit: a larger one would be cut to another call's. */
    const kineto_num *c = &e->arg[KARG_CORRELATION];
    if (c->set && (c->i < 0 || c->i > (int64_t)UINT32_MAX))
        return "args.correlation: out of range (0 to 2^32-1)";
    return NULL;
}

/* A cuda_runtime or cuda_driver event: an API call, found by its correlation id. */
static int add_api_call(trace *t, const kineto_event *e, int64_t start, int64_t end, int strict, size_t *skipped,
                        char *err, size_t errlen)
{
    const kineto_num *a = e->arg;
    const char *cat = e->cat;
    int pid = int_or(&e->pid, 0), tid = int_or(&e->tid, 0);
    if (!e->has_args || !a[KARG_CORRELATION].set || !a[KARG_CORRELATION].is_int) {
        if (!strict) {
            ++*skipped;
            return 0;
        }
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "API event without args.correlation");
    }
    api_call c = {.kind = cat[5] == 'r' ? API_RUNTIME : API_DRIVER,
                  .name = (char *)e->name,
                  .start_ns = start,
                  .end_ns = end,
                  .correlation = (uint32_t)a[KARG_CORRELATION].i,
                  .pid = pid,
                  .tid = tid,
                  .cbid = int_or(&a[KARG_CBID], 0)};
    trace_add_api(t, &c);
    return 0;
}

/* A recorded forward's sample: the six args come together, on a range of a
 * recorded forward, or not at all (older archives: recorded = 0). NULL, or the reason. */
static const char *read_sample(const kineto_event *e, struct forward_sample *s, char *buf, size_t n)
{
    static const struct {
        kineto_arg arg;
        const char *key;
        int whole;
        double lo, hi;
    } KEYS[] = {
        {KARG_PASS, "pass", 1, 0, 65535},          {KARG_EVENT_US, "event_us", 0, 0, 1e12},
        {KARG_SM_MHZ, "sm_mhz", 1, 0, 1e6},        {KARG_MEM_MHZ, "mem_mhz", 1, 0, 1e6},
        {KARG_POWER_W, "power_w", 0, 0, 1e6},      {KARG_TEMP_C, "temp_c", 1, -273, 1000},
    };
    int present = 0;
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
        present += e->arg[KEYS[i].arg].set || e->arg[KEYS[i].arg].wrong_type;
    if (!present)
        return NULL;
    const kineto_num *it = &e->arg[KARG_ITERATION];
    if (!it->set || it->i < 0)
        return "args.pass, event_us, sm_mhz, ...: a forward's sample on a range that is no recorded forward";
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        const kineto_num *a = &e->arg[KEYS[i].arg];
        if (!a->set || (KEYS[i].whole && !a->is_int) || !(a->d >= KEYS[i].lo && a->d <= KEYS[i].hi)) {
            snprintf(buf, n, "args.%s: expected %s from %g to %g (a forward's sample has all of pass, event_us, "
                     "sm_mhz, mem_mhz, power_w and temp_c)", KEYS[i].key, KEYS[i].whole ? "a whole number" : "a number",
                     KEYS[i].lo, KEYS[i].hi);
            return buf;
        }
    }
    *s = (struct forward_sample){.recorded = 1,
                                 .pass = (int)e->arg[KARG_PASS].i,
                                 .event_us = e->arg[KARG_EVENT_US].d,
                                 .sm_mhz = (int)e->arg[KARG_SM_MHZ].i,
                                 .mem_mhz = (int)e->arg[KARG_MEM_MHZ].i,
                                 .power_w = e->arg[KARG_POWER_W].d,
                                 .temp_c = (int)e->arg[KARG_TEMP_C].i};
    return NULL;
}

/* A user_annotation or cpu_op event: a host range (NVTX range, ATen op), with a recorded
 * forward's sample where it has one. EXIT_OK, or EXIT_BAD_ARCHIVE with err. */
static int add_host_range(trace *t, const kineto_event *e, int64_t start, int64_t end, int strict, char *err,
                          size_t errlen)
{
    const kineto_num *a = e->arg;
    const char *cat = e->cat;
    int pid = int_or(&e->pid, 0), tid = int_or(&e->tid, 0);
    /* attnprof's writer derives a ProfilerStep#N around each forward for Kineto
     * readers; it carries no variant and is not read back. */
    if (strict && !e->variant && !strncmp(e->name, "ProfilerStep#", 13))
        return 0;
    struct forward_sample sample = {0};
    char why[200];
    const char *bad = strict ? read_sample(e, &sample, why, sizeof why) : NULL;
    if (bad)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s", bad);
    host_range r = {.kind = cat[0] == 'c' ? RANGE_CPU_OP : RANGE_ANNOTATION,
                    .name = (char *)e->name,
                    .variant = (char *)(e->variant ? e->variant : ""),
                    .iteration = int_or(&a[KARG_ITERATION], -1),
                    .start_ns = start,
                    .end_ns = end,
                    .pid = pid,
                    .tid = tid,
                    .sample = sample};
    trace_add_range(t, &r);
    return 0;
}

/* A kernel, gpu_memcpy or gpu_memset event: a GPU operation, its launch found by its
 * correlation id, its numbers range-checked. */
static int add_gpu_op(trace *t, const kineto_event *e, gpu_op_kind kind, int64_t start, int64_t end, int strict,
                      size_t *skipped, char *err, size_t errlen)
{
    const kineto_num *a = e->arg;
    int pid = int_or(&e->pid, 0), tid = int_or(&e->tid, 0);
    const char *range;
    if (!e->has_args || !a[KARG_CORRELATION].set || !a[KARG_CORRELATION].is_int) {
        if (!strict) {
            ++*skipped;
            return 0;
        }
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "GPU event without args.correlation");
    }
    gpu_op o = {.kind = kind,
                .name = (char *)e->name,
                .start_ns = start,
                .end_ns = end,
                .correlation = (uint32_t)a[KARG_CORRELATION].i,
                .device = int_or(&a[KARG_DEVICE], pid),
                .stream = int_or(&a[KARG_STREAM], tid),
                .bytes = i64_or(&a[KARG_BYTES], 0),
                .context = int_or(&a[KARG_CONTEXT], 0)};
    if (kind == GPU_KERNEL) {
        memcpy(o.grid, e->grid, sizeof o.grid);
        memcpy(o.block, e->block, sizeof o.block);
        o.registers = int_or(&a[KARG_REGISTERS], 0);
        int total = int_or(&a[KARG_SHARED_MEMORY], 0);
        o.static_smem = int_or(&a[KARG_STATIC_SMEM], total);
        o.dynamic_smem = int_or(&a[KARG_DYNAMIC_SMEM], bounds_sub_sat(total, o.static_smem));
        if (a[KARG_EST_OCCUPANCY].wrong_type ||
            (a[KARG_EST_OCCUPANCY].set && !(a[KARG_EST_OCCUPANCY].d >= 0 && a[KARG_EST_OCCUPANCY].d <= 100)))
            return err_set(err, errlen, EXIT_BAD_ARCHIVE,
                           "args.est. achieved occupancy %%: expected a number from 0 to 100");
        if (a[KARG_EST_OCCUPANCY].set)
            o.has_kineto_occupancy = 1, o.kineto_occupancy = a[KARG_EST_OCCUPANCY].d;
    }
    const char *ck = e->copy_kind;
    if (kind == GPU_MEMCPY)
        snprintf(o.copy_kind, sizeof o.copy_kind, "%s", ck ? ck : (strlen(e->name) > 10 ? e->name + 7 : "?"));
    if (kind == GPU_MEMCPY && !ck) /* Kineto's "Memcpy DtoD (Device -> Device)" */
        o.copy_kind[4] = '\0';
    esc_utf8_trim(o.copy_kind);
    if ((range = bounds_op(&o)))
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s", range);
    trace_add_op(t, &o);
    return 0;
}

int trace_add_kineto_event(trace *t, const kineto_event *e, int strict, size_t *skipped, char *err, size_t errlen)
{
    if (strcmp(e->ph, "X") != 0)
        return 0;
    if (!e->cat || !e->name)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "complete event without cat or name");
    if (!e->ts.set || !e->dur.set || e->dur.d < 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "complete event without a valid ts/dur");
    static const char *const held_cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                                            "user_annotation", "cpu_op"};
    int held = 0;
    for (size_t i = 0; i < sizeof held_cats / sizeof held_cats[0]; i++)
        held |= !strcmp(e->cat, held_cats[i]);
    if (!held)
        return 0; /* gpu_user_annotation and others are derived or foreign */
    char why[160];
    const char *range = check_arg_types(e, why, sizeof why);
    if (range)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s", range);
    /* Relative to the file here; moved by baseTimeNanoseconds (and checked again) at the end. */
    int64_t start, end;
    range = bounds_event_ns(0, e->ts.d, e->dur.d, &start, &end);
    if (range)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s", range);
    const char *cat = e->cat;
    if (!strcmp(cat, "kernel"))
        return add_gpu_op(t, e, GPU_KERNEL, start, end, strict, skipped, err, errlen);
    if (!strcmp(cat, "gpu_memcpy"))
        return add_gpu_op(t, e, GPU_MEMCPY, start, end, strict, skipped, err, errlen);
    if (!strcmp(cat, "gpu_memset"))
        return add_gpu_op(t, e, GPU_MEMSET, start, end, strict, skipped, err, errlen);
    if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver"))
        return add_api_call(t, e, start, end, strict, skipped, err, errlen);
    if (!strcmp(cat, "user_annotation") || !strcmp(cat, "cpu_op"))
        return add_host_range(t, e, start, end, strict, err, errlen);
    return 0; /* gpu_user_annotation and others are derived or foreign */
}

static int on_event(void *ctx, size_t idx, const kineto_event *e, char *err, size_t errlen)
{
    (void)idx;
    return trace_add_kineto_event(ctx, e, 1, NULL, err, errlen);
}

/* t += by, kept within ±BOUNDS_MAX_NS; 1 when it would leave that range. */
static int shift_leaves_range(int64_t *t, int64_t by)
{
    return __builtin_add_overflow(*t, by, t) || *t > BOUNDS_MAX_NS || *t < -BOUNDS_MAX_NS;
}

const char *trace_shift(trace *t, size_t ops_from, size_t apis_from, size_t ranges_from, int64_t by)
{
    const char *range = bounds_base_ns(by);
    if (range)
        return range;
    int bad = 0;
    for (size_t i = ops_from; i < t->n_ops; i++)
        bad |= shift_leaves_range(&t->ops[i].start_ns, by) | shift_leaves_range(&t->ops[i].end_ns, by);
    for (size_t i = apis_from; i < t->n_apis; i++)
        bad |= shift_leaves_range(&t->apis[i].start_ns, by) | shift_leaves_range(&t->apis[i].end_ns, by);
    for (size_t i = ranges_from; i < t->n_ranges; i++)
        bad |= shift_leaves_range(&t->ranges[i].start_ns, by) | shift_leaves_range(&t->ranges[i].end_ns, by);
    return bad ? "ts: out of range (|baseTimeNanoseconds + ts·1000| must stay within 2^62 ns)" : NULL;
}

int trace_read_json(trace *t, const char *path, char *err, size_t errlen)
{
    trace_init(t);
    kineto_header h;
    kineto_status st = kineto_read(path, on_event, t, &h, NULL, err, errlen);
    if (st != KINETO_OK) {
        if (st == KINETO_ERR_JSON) {
            size_t len = strlen(err);
            snprintf(err + len, errlen - len, "; re-run `attnprof run` to record it again");
        }
        trace_free(t);
        return EXIT_BAD_ARCHIVE;
    }
    const char *range = trace_shift(t, 0, 0, 0, h.base_time_ns);
    if (!range && h.n_devices > 0) {
        t->device = h.devices[0];
        range = bounds_device(&t->device);
    }
    if (range) {
        trace_free(t);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %s", path, range);
    }
    t->pid = h.pid;
    t->cupti_version = h.cupti_version;
    t->cuda_runtime_version = h.cuda_runtime_version;
    t->cuda_driver_version = h.cuda_driver_version;
    trace_sort(t);
    char why[400];
    if (trace_check(t, why, sizeof why) != 0) {
        trace_free(t);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %s", path, why);
    }
    return EXIT_OK;
}
