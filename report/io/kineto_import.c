/* `attnprof import` (kineto_import.h). Each file is streamed into the one trace
 * (kineto_read.c, the same reader as trace.json's) with times moved by its
 * baseTimeNanoseconds; then that file's slice of the trace is finished: the
 * forward ranges get the variant's name and their iteration, GPU ops of other
 * devices are dropped, and correlation ids are moved past the previous files'
 * so that files never share an id. Nothing is invented: what Kineto does not
 * record stays zero/NaN in run_info and the report says "not recorded". The forwards
 * of each file are kineto_forwards.c's. */
#include "kineto_import.h"
#include "units.h"
#include "alloc.h"

#include "bounds.h"
#include "err.h"
#include "exit_codes.h"
#include "kineto_forwards.h"
#include "kineto_read.h"
#include "model_inputs.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void kineto_variant_name(const char *path, char *out, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", base);
    static const char *const suffixes[] = {".gz", ".json", ".pt.trace"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t L = strlen(buf), s = strlen(suffixes[i]);
        if (L > s && !strcmp(buf + L - s, suffixes[i]))
            buf[L - s] = '\0';
    }
    snprintf(out, n, "%s", buf);
}

/* An ac2g flow end: "s" at the launching call, "f" at the GPU op (Kineto's arrows). */
typedef struct flow_end {
    int64_t id;
    int pid, tid;
    int64_t ts_ns; /* relative to the file, as the events' */
    int start;     /* "s" */
} flow_end;

/* What the importer keeps while a file streams by: the trace, the flows, and the
 * GPU ops / API calls that came without args.correlation (indices into the trace),
 * which the flows may still tie together. */
typedef struct read_ctx {
    trace *t;
    size_t skipped; /* events the in-memory trace does not take (trace_add_kineto_event) */
    flow_end *flows;
    size_t n_flows, cap_flows;
    size_t *loose_ops, n_loose_ops, cap_loose_ops;
    size_t *loose_apis, n_loose_apis, cap_loose_apis;
    size_t aten_ops; /* cpu_op events named aten::*: PyTorch's operators (provenance) */
    size_t step_ranges; /* user_annotation ranges ProfilerStep#N: torch.profiler's step marks (provenance) */
    size_t cpu_ops;     /* cpu_op events of any name (provenance) */
    model_inputs_scan inputs; /* record_shapes: the first attention's inputs */
} read_ctx;

static void push_index(size_t **v, size_t *n, size_t *cap, size_t x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *v = realloc(*v, *cap * sizeof **v);
        if (!*v)
            attn_oom();
    }
    (*v)[(*n)++] = x;
}

static int is_gpu_cat(const char *c) { return !strcmp(c, "kernel") || !strcmp(c, "gpu_memcpy") || !strcmp(c, "gpu_memset"); }
static int is_api_cat(const char *c) { return !strcmp(c, "cuda_runtime") || !strcmp(c, "cuda_driver"); }

static int on_event(void *ctx, size_t idx, const kineto_event *e, char *err, size_t errlen)
{
    read_ctx *c = ctx;
    (void)idx;
    if (e->cat && !strcmp(e->cat, "cpu_op") && e->name && !strncmp(e->name, "aten::", 6))
        c->aten_ops++;
    if (e->cat && !strcmp(e->cat, "cpu_op"))
        c->cpu_ops++;
    if (e->cat && !strcmp(e->cat, "user_annotation") && e->name && !strncmp(e->name, "ProfilerStep#", 13))
        c->step_ranges++;
    model_inputs_see(&c->inputs, e);
    if ((e->ph[0] == 's' || e->ph[0] == 'f') && !e->ph[1] && e->cat && !strcmp(e->cat, "ac2g") && e->id.set &&
        e->ts.set && e->pid.is_int && e->tid.is_int) {
        if (c->n_flows == c->cap_flows) {
            c->cap_flows = c->cap_flows ? c->cap_flows * 2 : 256;
            c->flows = realloc(c->flows, c->cap_flows * sizeof *c->flows);
            if (!c->flows)
                attn_oom();
        }
        c->flows[c->n_flows++] = (flow_end){e->id.i, (int)e->pid.i, (int)e->tid.i, llround(e->ts.d * 1000.0),
                                            e->ph[0] == 's'};
        return 0;
    }
    /* A correlation of the wrong type or a fraction is not "absent": trace_add_kineto_event refuses it. */
    int loose = !strcmp(e->ph, "X") && e->cat && (is_gpu_cat(e->cat) || is_api_cat(e->cat)) &&
                !e->arg[KARG_CORRELATION].set && !e->arg[KARG_CORRELATION].wrong_type;
    if (!loose)
        return trace_add_kineto_event(c->t, e, 0, &c->skipped, err, errlen);
    /* Kept for now with id 0; tied by a flow below, or dropped and counted. */
    kineto_event copy = *e;
    copy.has_args = 1;
    copy.arg[KARG_CORRELATION] = (kineto_num){.set = 1, .is_int = 1, .i = 0, .d = 0};
    size_t ops = c->t->n_ops, apis = c->t->n_apis;
    int rc = trace_add_kineto_event(c->t, &copy, 0, &c->skipped, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    if (c->t->n_ops > ops)
        push_index(&c->loose_ops, &c->n_loose_ops, &c->cap_loose_ops, ops);
    if (c->t->n_apis > apis)
        push_index(&c->loose_apis, &c->n_loose_apis, &c->cap_loose_apis, apis);
    return 0;
}

static int cmp_flow(const void *a, const void *b)
{
    const flow_end *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return y->start - x->start; /* "s" first */
}

/* Ops and calls keyed by (pid, tid, start), to find a flow's two ends. */
typedef struct keyed {
    int pid, tid;
    int64_t start;
    size_t index;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

static const keyed *find_keyed(const keyed *v, size_t n, int pid, int tid, int64_t start)
{
    keyed k = {pid, tid, start, 0};
    return bsearch(&k, v, n, sizeof *v, cmp_keyed);
}

/* Ties the file's uncorrelated GPU ops to their launching calls through the ac2g
 * flows (same flow id at the call's and at the op's start), then drops what stays
 * loose. Returns how many events were dropped. */
static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static size_t tie_by_flows(read_ctx *c, size_t ops0, size_t apis0)
{
    trace *t = c->t;
    size_t dropped = 0;
    if (c->n_loose_ops) {
        uint32_t next = 1;
        for (size_t i = ops0; i < t->n_ops; i++)
            if (t->ops[i].correlation >= next)
                next = t->ops[i].correlation + 1;
        for (size_t i = apis0; i < t->n_apis; i++)
            if (t->apis[i].correlation >= next)
                next = t->apis[i].correlation + 1;
        keyed *ops = malloc(c->n_loose_ops * sizeof *ops);
        keyed *apis = malloc((t->n_apis - apis0 + 1) * sizeof *apis);
        char *api_loose = calloc(t->n_apis - apis0 + 1, 1);
        if (!ops || !apis || !api_loose)
            attn_oom();
        for (size_t i = 0; i < c->n_loose_ops; i++) {
            const gpu_op *o = &t->ops[c->loose_ops[i]];
            ops[i] = (keyed){o->device, o->stream, o->start_ns, c->loose_ops[i]};
        }
        for (size_t i = apis0; i < t->n_apis; i++)
            apis[i - apis0] = (keyed){t->apis[i].pid, t->apis[i].tid, t->apis[i].start_ns, i};
        for (size_t i = 0; i < c->n_loose_apis; i++)
            api_loose[c->loose_apis[i] - apis0] = 1;
        qsort(ops, c->n_loose_ops, sizeof *ops, cmp_keyed);
        qsort(apis, t->n_apis - apis0, sizeof *apis, cmp_keyed);
        if (c->n_flows) /* qsort(NULL, 0) is undefined */
            qsort(c->flows, c->n_flows, sizeof *c->flows, cmp_flow);
        for (size_t i = 0; i + 1 < c->n_flows; i++) {
            const flow_end *s = &c->flows[i], *f = &c->flows[i + 1];
            if (s->id != f->id || !s->start || f->start)
                continue;
            const keyed *op = find_keyed(ops, c->n_loose_ops, f->pid, f->tid, f->ts_ns);
            const keyed *api = find_keyed(apis, t->n_apis - apis0, s->pid, s->tid, s->ts_ns);
            if (!op || !api || t->ops[op->index].correlation)
                continue;
            api_call *a = &t->apis[api->index];
            if (api_loose[api->index - apis0] && !a->correlation)
                a->correlation = next++;
            t->ops[op->index].correlation = a->correlation;
        }
        free(ops), free(apis), free(api_loose);
    }
    /* Drop what no flow tied: an op or call left with id 0; and an op whose id no call
     * of the file has (its launch fell before the profiler's window): kept, it would
     * make the archive inconsistent (trace_check). */
    size_t n_corr = t->n_apis - apis0;
    uint32_t *corr = malloc((n_corr ? n_corr : 1) * sizeof *corr);
    if (!corr)
        attn_oom();
    for (size_t i = 0; i < n_corr; i++)
        corr[i] = t->apis[apis0 + i].correlation;
    qsort(corr, n_corr, sizeof *corr, cmp_u32);
    size_t w = ops0;
    for (size_t i = ops0, k = 0; i < t->n_ops; i++) {
        int loose = k < c->n_loose_ops && c->loose_ops[k] == i;
        k += loose;
        uint32_t id = t->ops[i].correlation;
        if ((loose && !id) || !bsearch(&id, corr, n_corr, sizeof *corr, cmp_u32)) {
            free(t->ops[i].name);
            dropped++;
            continue;
        }
        t->ops[w++] = t->ops[i];
    }
    t->n_ops = w;
    free(corr);
    w = apis0;
    for (size_t i = apis0, k = 0; i < t->n_apis; i++) {
        int loose = k < c->n_loose_apis && c->loose_apis[k] == i;
        k += loose;
        if (loose && !t->apis[i].correlation) {
            free(t->apis[i].name);
            dropped++;
            continue;
        }
        t->apis[w++] = t->apis[i];
    }
    t->n_apis = w;
    free(c->flows), free(c->loose_ops), free(c->loose_apis);
    c->flows = NULL, c->loose_ops = c->loose_apis = NULL;
    return dropped;
}

/* Keeps the ops of the file's slice that ran on `device`; returns how many were dropped. */
static size_t keep_device(trace *t, size_t ops0, int device)
{
    size_t w = ops0, dropped = 0;
    for (size_t i = ops0; i < t->n_ops; i++) {
        if (t->ops[i].device != device) {
            free(t->ops[i].name);
            dropped++;
            continue;
        }
        t->ops[w++] = t->ops[i];
    }
    t->n_ops = w;
    return dropped;
}

static void add_fact(variant_result *v, const char *key, const char *text, double number)
{
    if (v->facts.n == ATTN_MAX_FACTS)
        return;
    attn_fact *f = &v->facts.item[v->facts.n++];
    snprintf(f->key, sizeof f->key, "%s", key);
    snprintf(f->value, sizeof f->value, "%s", text);
    f->number = number;
}

typedef struct span {
    int pid;
    int64_t lo, hi;
    const char *path;
} span;

/* PyTorch's deviceProperties carry no maxBlocksPerMultiprocessor and no
 * reservedSharedMemPerBlock, without which occupancy cannot be computed. Both are
 * fixed by the compute capability (CUDA C++ Programming Guide, "Technical
 * Specifications per Compute Capability"; the reservation is 1 KiB from sm_80 on,
 * as cudaDevAttrReservedSharedMemoryPerBlock reports on the H200 archives here).
 * Only capabilities listed are filled; the note says what was taken and why. */
static void fill_device_limits(device_props *d, run_info *r)
{
    static const struct { int major, minor, max_blocks, reserved; } caps[] = {
        {7, 0, 32, 0}, {7, 5, 16, 0}, {8, 0, 32, 1024}, {8, 6, 16, 1024}, {8, 9, 24, 1024}, {9, 0, 32, 1024},
    };
    if (d->max_blocks_per_sm > 0)
        return;
    for (size_t i = 0; i < sizeof caps / sizeof *caps; i++)
        if (caps[i].major == d->major && caps[i].minor == d->minor) {
            d->max_blocks_per_sm = caps[i].max_blocks;
            int reserved = d->smem_reserved_per_block == 0 && caps[i].reserved;
            if (reserved)
                d->smem_reserved_per_block = caps[i].reserved;
            snprintf(r->device_limits_note, sizeof r->device_limits_note,
                     "the traces' deviceProperties lack maxBlocksPerMultiprocessor%s: %d blocks per SM%s are compute "
                     "capability %d.%d's documented limits",
                     reserved ? " and reservedSharedMemPerBlock" : "", caps[i].max_blocks,
                     reserved ? " and 1024 B reserved per block" : "", d->major, d->minor);
            return;
        }
    snprintf(r->device_limits_note, sizeof r->device_limits_note,
             "the traces' deviceProperties lack maxBlocksPerMultiprocessor, and compute capability %d.%d is not in "
             "attnprof's table of documented limits: theoretical occupancy is not computed",
             d->major, d->minor);
}

/* What the files held that says who made them. */
typedef struct import_tally {
    size_t aten_ops, step_ranges, cpu_ops;
} import_tally;

/* What produced the traces: PyTorch's profiler when its ATen operators are among the CPU
 * ops, or when its step marks (ProfilerStep#N, written by torch.profiler's schedule) are
 * there and no cpu_op at all (work replayed from CUDA graphs dispatches no op); else another
 * Kineto producer (CPU ops none of which is ATen's; the metadata names no producer). */
static void set_producer(run_info *r, const import_tally *tally, int files)
{
    int pytorch = tally->aten_ops || (tally->step_ranges && !tally->cpu_ops);
    if (tally->aten_ops) {
        r->producer = PRODUCER_PYTORCH;
        snprintf(r->producer_evidence, sizeof r->producer_evidence,
                 "%zu cpu_op events named aten::* (PyTorch's ATen operators) in %d trace%s", tally->aten_ops, files,
                 files == 1 ? "" : "s");
    } else if (tally->step_ranges && !tally->cpu_ops) {
        r->producer = PRODUCER_PYTORCH;
        snprintf(r->producer_evidence, sizeof r->producer_evidence,
                 "%zu ProfilerStep#N ranges (torch.profiler's step marks) in %d trace%s and no cpu_op at all "
                 "(work replayed from CUDA graphs dispatches no op)", tally->step_ranges, files, files == 1 ? "" : "s");
    } else {
        r->producer = PRODUCER_KINETO;
        snprintf(r->producer_evidence, sizeof r->producer_evidence,
                 tally->step_ranges ? "Kineto trace%s with ProfilerStep#N ranges but no cpu_op named aten::* among "
                                      "its CPU ops: not PyTorch's operators"
                                    : "Kineto trace%s with no cpu_op named aten::*: not PyTorch's operators",
                 files == 1 ? "" : "s");
    }
    for (int i = 0; i < r->n_variants; i++) /* each variant's title says the same */
        snprintf(r->variants[i].title, sizeof r->variants[i].title, "%s",
                 pytorch ? "PyTorch profiler trace" : "Kineto trace");
}

/* The device whose GPU ops a file keeps: --device N, else the lowest one in the file. */
static int pick_device(const trace *t, size_t ops0, int wanted)
{
    if (wanted >= 0)
        return wanted;
    int device = t->ops[ops0].device;
    for (size_t i = ops0; i < t->n_ops; i++)
        if (t->ops[i].device < device)
            device = t->ops[i].device;
    return device;
}

/* Shifts the file's correlation ids past those of the files before it, so that ids
 * stay unique across the files of one archive. */
static int offset_correlations(trace *t, size_t ops0, size_t apis0, uint32_t *corr_base, const char *path,
                               char *err, size_t errlen)
{
    uint32_t max_corr = 0;
    for (size_t i = ops0; i < t->n_ops; i++)
        if (t->ops[i].correlation > max_corr)
            max_corr = t->ops[i].correlation;
    for (size_t i = apis0; i < t->n_apis; i++)
        if (t->apis[i].correlation > max_corr)
            max_corr = t->apis[i].correlation;
    if ((uint64_t)*corr_base + max_corr + 1 > UINT32_MAX) {
        snprintf(err, errlen, "%s: correlation ids of the traces together exceed 32 bits; import fewer files at once",
                 path);
        return EXIT_BAD_ARCHIVE;
    }
    for (size_t i = ops0; i < t->n_ops; i++)
        t->ops[i].correlation += *corr_base;
    for (size_t i = apis0; i < t->n_apis; i++)
        t->apis[i].correlation += *corr_base;
    *corr_base += max_corr + 1;
    return EXIT_OK;
}

/* The time span of the file's forwards, refused where it overlaps another file's in
 * the same process, then recorded in spans[idx] and as the variant's own range. */
static int claim_forward_span(trace *t, size_t ranges0, const char *path, const char *variant, span *spans, int idx,
                              span *out, char *err, size_t errlen)
{
    /* Forwards are matched to API calls by process and time: two files of one
     * process whose forwards overlap in time cannot be told apart. */
    span s = {0, INT64_MAX, INT64_MIN, path};
    int tid = 0;
    for (size_t i = ranges0; i < t->n_ranges; i++) {
        const host_range *hr = &t->ranges[i];
        if (hr->iteration < 0)
            continue;
        s.pid = hr->pid;
        tid = hr->tid;
        if (hr->start_ns < s.lo)
            s.lo = hr->start_ns;
        if (hr->end_ns > s.hi)
            s.hi = hr->end_ns;
    }
    for (int j = 0; j < idx; j++)
        if (spans[j].pid == s.pid && spans[j].lo <= s.hi && s.lo <= spans[j].hi) {
            snprintf(err, errlen, "%s: its forwards overlap in time with those of %s in the same process (pid %d); "
                     "import them into separate archives", path, spans[j].path, s.pid);
            return EXIT_BAD_ARCHIVE;
        }
    spans[idx] = s;
    /* The variant's own range around its forwards, as attnprof's runner records it:
     * Kineto readers (HTA) tell the variants apart by it. */
    host_range outer = {.kind = RANGE_ANNOTATION, .name = (char *)variant, .variant = (char *)variant,
                        .iteration = -1, .start_ns = s.lo, .end_ns = s.hi, .pid = s.pid, .tid = tid};
    trace_add_range(t, &outer);
    *out = s;
    return EXIT_OK;
}

/* Two GPUs whose limits agree (a device's own properties; the documented ones filled in
 * afterwards are left out of the comparison). */
static int same_gpu(const device_props *a, const device_props *b)
{
    return !strcmp(a->name, b->name) && a->major == b->major && a->minor == b->minor && a->sm_count == b->sm_count &&
           a->regs_per_sm == b->regs_per_sm && a->smem_per_sm == b->smem_per_sm &&
           a->smem_per_block_optin == b->smem_per_block_optin && a->max_threads_per_sm == b->max_threads_per_sm;
}

/* The run's device, versions, marker and date, taken from the first file. */
static void take_run_header(trace *t, run_info *r, const kineto_header *h, const device_props *dp, const span *s,
                            const char *marker)
{
    if (dp) {
        t->device = *dp;
        fill_device_limits(&t->device, r);
        r->device = t->device;
    }
    t->pid = s->pid;
    t->cupti_version = r->cupti_version = h->cupti_version;
    t->cuda_runtime_version = r->cuda_runtime_version = h->cuda_runtime_version;
    t->cuda_driver_version = r->cuda_driver_version = h->cuda_driver_version;
    snprintf(r->marker_source, sizeof r->marker_source, "%s", marker);
    /* Kineto's clock: ts (µs) + baseTimeNanoseconds is wall-clock time since the epoch. */
    time_t sec = (time_t)(s->lo / 1000000000);
    struct tm tm;
    if (s->lo > 0 && gmtime_r(&sec, &tm))
        strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A new variant for the file: named, with what an import cannot know left unstated. */
static variant_result *new_imported_variant(run_info *r, const char *variant, const char *path)
{
    variant_result *v = &r->variants[r->n_variants++];
    snprintf(v->name, sizeof v->name, "%s", variant);
    snprintf(v->title, sizeof v->title, "PyTorch profiler trace");
    const char *base = strrchr(path, '/');
    snprintf(v->what_changed, sizeof v->what_changed, "imported from %s", base ? base + 1 : path);
    v->expected_ops = -1;
    v->expected_memcpy = -1;
    v->status = VARIANT_OK;
    v->rel_error = v->event_us_no_cupti = v->event_us_cupti = v->event_us_cupti_no_memset = NAN;
    v->host_us_no_cupti = v->host_us_cupti = NAN;
    return v;
}

/* The variant's facts: its device, the attention's recorded inputs (checked against
 * --shape), the FP32 CUDA-core kernels' inputs and what the import left out. */
static int add_import_facts(variant_result *v, const import_options *o, const model_inputs_scan *inputs,
                            int device, int fp32_16, int fp32_32, const char *fp32_text, size_t other, size_t uncorrelated,
                            const char *path, char *err, size_t errlen)
{
    char text[200];
    snprintf(text, sizeof text, "%d", device);
    add_fact(v, "device", text, device);
    if (inputs->found.kind != MODEL_ATTN_NONE) {
        const model_attn_inputs *m = &inputs->found;
        /* A declared shape must agree with what the trace recorded (H: the query heads). */
        if (o->shape && (o->shape->batch != m->batch || o->shape->heads != m->heads_q || o->shape->seq != m->seq_q ||
                         o->shape->dim != m->dim)) {
            snprintf(err, errlen, "%s: --shape B=%d,H=%d,S=%d,D=%d contradicts the recorded Input Dims of %s "
                     "(B=%d, H=%d, S=%d, D=%d); drop --shape (the recorded shape is used) or fix it", path,
                     o->shape->batch, o->shape->heads, o->shape->seq, o->shape->dim, m->op, m->batch, m->heads_q,
                     m->seq_q, m->dim);
            return EXIT_SHAPE_CONFLICT;
        }
        model_inputs_format(m, text, sizeof text);
        add_fact(v, "attn_inputs", text, NAN);
    }
    if (fp32_16 + fp32_32) /* record_shapes: what the FP32 CUDA-core kernels' ops were given */
        add_fact(v, "fp32_core_inputs", fp32_text, fp32_16);
    if (other) {
        char ops[48];
        snprintf(text, sizeof text, "%s on other devices ignored (--device picks one)",
                 units_count_noun((double)other, "GPU operation", ops, sizeof ops));
        add_fact(v, "other_device_ops", text, (double)other);
    }
    if (uncorrelated) {
        snprintf(text, sizeof text, "%zu GPU/API events not attributed (no args.correlation or ac2g flow, or a "
                 "GPU operation whose launch call is not in the trace)", uncorrelated);
        add_fact(v, "uncorrelated_events", text, (double)uncorrelated);
    }
    return EXIT_OK;
}

/* The file's provenance for run.json: its name, size, sum and Kineto header. */
static void add_import_source(run_info *r, const char *path, const char *variant, const kineto_file_info *info,
                              const kineto_header *h)
{
    import_source *src = &r->sources[r->n_sources++];
    snprintf(src->file, sizeof src->file, "%s", path);
    src->size = info->size;
    snprintf(src->sha256, sizeof src->sha256, "%s", info->sha256);
    snprintf(src->variant, sizeof src->variant, "%s", variant);
    src->schema_version = h->schema_version;
    src->base_time_ns = h->base_time_ns;
    snprintf(src->trace_id, sizeof src->trace_id, "%s", h->trace_id);
    src->has_distributed = h->has_distributed;
    snprintf(src->backend, sizeof src->backend, "%s", h->dist_backend);
    src->rank = h->rank;
    src->world_size = h->world_size;
}

static int import_one(const char *path, const char *variant, const import_options *o, int first, trace *t,
                      run_info *r, uint32_t *corr_base, span *spans, int idx, import_tally *tally, char *err,
                      size_t errlen)
{
    size_t ops0 = t->n_ops, apis0 = t->n_apis, ranges0 = t->n_ranges;
    read_ctx c = {.t = t};
    kineto_header h;
    kineto_file_info info;
    if (kineto_read(path, on_event, &c, &h, &info, err, errlen) != KINETO_OK) {
        free(c.flows), free(c.loose_ops), free(c.loose_apis), free(c.inputs.gemms);
        return EXIT_BAD_ARCHIVE;
    }
    tally->aten_ops += c.aten_ops;
    tally->step_ranges += c.step_ranges;
    tally->cpu_ops += c.cpu_ops;
    model_inputs_finish(&c.inputs);
    size_t uncorrelated = tie_by_flows(&c, ops0, apis0);
    const char *range = trace_shift(t, ops0, apis0, ranges0, h.base_time_ns);
    if (range) {
        free(c.inputs.gemms);
        snprintf(err, errlen, "%s: %s", path, range);
        return EXIT_BAD_ARCHIVE;
    }
    int fp32_16 = 0, fp32_32 = 0;
    char fp32_text[200];
    model_inputs_fp32_cores(&c.inputs, t, ops0, apis0, h.base_time_ns, &fp32_16, &fp32_32, fp32_text,
                            sizeof fp32_text);

    char marker[96];
    int n_fwd = kineto_mark_forwards(t, ranges0, path, variant, o->range ? o->range : "attn_fwd", o->range != NULL, marker,
                              sizeof marker, err, errlen);
    if (n_fwd < 0)
        return -n_fwd;
    if (t->n_ops == ops0) {
        snprintf(err, errlen, "%s: no GPU events (kernel, gpu_memcpy or gpu_memset with args.correlation): a "
                 "CPU-only trace? profile with ProfilerActivity.CUDA", path);
        return EXIT_BAD_ARCHIVE;
    }
    int device = pick_device(t, ops0, o->device);
    size_t other = keep_device(t, ops0, device);
    if (t->n_ops == ops0) {
        snprintf(err, errlen, "%s: no GPU events on device %d (pick another with --device N)", path, device);
        return EXIT_BAD_ARCHIVE;
    }
    int empty_forwards;
    int marked = n_fwd;
    n_fwd = kineto_drop_empty_forwards(t, ops0, apis0, ranges0, &empty_forwards);
    if (n_fwd == 0) {
        snprintf(err, errlen, "%s: none of its %d forward ranges (%s) holds the launch call of a GPU operation "
                 "(the work was launched outside them, or on another device: --device N)", path, marked, marker);
        return EXIT_BAD_ARCHIVE;
    }
    if (offset_correlations(t, ops0, apis0, corr_base, path, err, errlen) != EXIT_OK)
        return EXIT_BAD_ARCHIVE;
    span s;
    if (claim_forward_span(t, ranges0, path, variant, spans, idx, &s, err, errlen) != EXIT_OK)
        return EXIT_BAD_ARCHIVE;

    const device_props *dp = kineto_header_device(&h, device);
    if (!dp && h.n_devices)
        dp = &h.devices[0];
    if (dp && (range = bounds_device(dp))) {
        snprintf(err, errlen, "%s: %s", path, range);
        return EXIT_BAD_ARCHIVE;
    }
    if (first)
        take_run_header(t, r, &h, dp, &s, marker);
    else if (dp && !same_gpu(dp, &r->device)) {
        /* one archive has one GPU's limits: occupancy against another GPU's would be wrong */
        snprintf(err, errlen, "%s: its GPU operations ran on device %d (%s, %d SMs), not the GPU of %s (%s, %d SMs): "
                 "import each GPU's traces into their own archive, or pick one GPU in every trace with --device N",
                 path, device, dp->name, dp->sm_count, r->sources[0].file, r->device.name, r->device.sm_count);
        return EXIT_USAGE;
    }
    if (n_fwd > r->iters)
        r->iters = n_fwd;

    variant_result *v = new_imported_variant(r, variant, path);
    int rc = add_import_facts(v, o, &c.inputs, device, fp32_16, fp32_32, fp32_text, other,
                              uncorrelated, path, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    if (empty_forwards) {
        char text[160];
        snprintf(text, sizeof text, "%d forward range%s (%s) held no GPU operation's launch: left out", empty_forwards,
                 empty_forwards == 1 ? "" : "s", marker);
        add_fact(v, "empty_forwards", text, empty_forwards);
    }
    add_import_source(r, path, variant, &info, &h);
    return EXIT_OK;
}

int kineto_import(const char *const *paths, int n, const import_options *o, trace *t, run_info *r, char *err,
                  size_t errlen)
{
    trace_init(t);
    memset(r, 0, sizeof *r);
    r->imported = 1;
    if (o->shape) { /* declared on the command line: run.json says so */
        r->shape = *o->shape;
        snprintf(r->dtype, sizeof r->dtype, "%s", o->dtype ? o->dtype : "");
        r->causal = o->causal;
        snprintf(r->shape_source, sizeof r->shape_source, "--shape");
    }
    if (n > RUN_MAX_VARIANTS) {
        snprintf(err, errlen, "import takes at most %d traces at once (got %d)", RUN_MAX_VARIANTS, n);
        return EXIT_USAGE;
    }
    /* --variant a,b,c: one name per trace, in order. */
    int n_names = 0;
    for (const char *p = o->variant; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
        n_names++;
    if (o->variant && n_names != n) {
        snprintf(err, errlen, "--variant gives %d name%s for %d trace%s: give one name per trace, comma-separated, "
                 "or none (each is then named after its file)", n_names, n_names == 1 ? "" : "s", n, n == 1 ? "" : "s");
        return EXIT_USAGE;
    }
    const char *next_name = o->variant;
    span spans[RUN_MAX_VARIANTS];
    uint32_t corr_base = 0;
    import_tally tally = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        char name[512];
        if (next_name) {
            size_t len = strcspn(next_name, ",");
            snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), next_name);
            next_name = next_name[len] ? next_name + len + 1 : NULL;
        } else
            kineto_variant_name(paths[i], name, sizeof name);
        if (!name[0] || strlen(name) >= sizeof r->variants[0].name) {
            snprintf(err, errlen, "%s: the variant name '%s' must be 1 to %zu characters; name it with --variant",
                     paths[i], name, sizeof r->variants[0].name - 1);
            trace_free(t);
            return EXIT_USAGE;
        }
        for (int j = 0; j < r->n_variants; j++)
            if (!strcmp(r->variants[j].name, name)) {
                snprintf(err, errlen, "%s: variant '%s' is already the name of %s; rename one of the files", paths[i],
                         name, r->sources[j].file);
                trace_free(t);
                return EXIT_USAGE;
            }
        int rc = import_one(paths[i], name, o, i == 0, t, r, &corr_base, spans, i, &tally, err, errlen);
        if (rc != EXIT_OK) {
            trace_free(t);
            return rc;
        }
    }
    set_producer(r, &tally, n);
    if (o->shape) { /* a --shape that agrees with what every trace recorded adds nothing: the recorded one is said */
        int all_recorded = r->n_variants > 0;
        model_attn_inputs m;
        for (int i = 0; i < r->n_variants; i++)
            all_recorded &= model_inputs_of(&r->variants[i], &m);
        if (all_recorded) {
            memset(&r->shape, 0, sizeof r->shape);
            r->dtype[0] = r->shape_source[0] = '\0';
            r->causal = 0;
        }
    }
    trace_sort(t);
    /* What a real recording cannot hold is refused here too: the archive written would
     * not read back (trace_read_json checks the same). */
    char why[400];
    if (trace_check(t, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s", why);
        trace_free(t);
        return EXIT_BAD_ARCHIVE;
    }
    return EXIT_OK;
}
