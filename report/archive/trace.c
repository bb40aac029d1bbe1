/* The in-memory trace (trace.h): records appended as the recorder or a reader produces
 * them, sorted, CPU ops linked into their call paths, and checked for consistency (events a real recording cannot hold are an
 * error naming them), then looked up by correlation id and by time. */
#include "trace.h"
#include "alloc.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void trace_init(trace *t) { memset(t, 0, sizeof *t); }

void trace_free(trace *t)
{
    for (size_t i = 0; i < t->n_ops; i++) {
        free(t->ops[i].name);
        free(t->ops[i].cpu_op_path);
    }
    for (size_t i = 0; i < t->n_apis; i++)
        free(t->apis[i].name);
    for (size_t i = 0; i < t->n_ranges; i++) {
        free(t->ranges[i].name);
        free(t->ranges[i].variant);
    }
    free(t->ops);
    free(t->apis);
    free(t->ranges);
    free(t->apis_by_corr);
    trace_init(t);
}

static void *grow(void *arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return arr;
    size_t nc = *cap ? *cap * 2 : 256;
    void *p = realloc(arr, nc * elem);
    if (!p)
        attn_oom(); /* a trace that does not fit in host memory is not recoverable here */
    *cap = nc;
    return p;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

gpu_op *trace_add_op(trace *t, const gpu_op *op)
{
    t->ops = grow(t->ops, &t->cap_ops, t->n_ops, sizeof *t->ops);
    gpu_op *o = &t->ops[t->n_ops++];
    *o = *op;
    o->name = dup_or_empty(op->name);
    o->cpu_op = NULL; /* derived by trace_sort */
    o->cpu_op_path = NULL;
    return o;
}

static void drop_api_index(trace *t)
{
    free(t->apis_by_corr);
    t->apis_by_corr = NULL;
    t->n_apis_by_corr = 0;
}

api_call *trace_add_api(trace *t, const api_call *api)
{
    drop_api_index(t);
    t->apis = grow(t->apis, &t->cap_apis, t->n_apis, sizeof *t->apis);
    api_call *a = &t->apis[t->n_apis++];
    *a = *api;
    a->name = dup_or_empty(api->name);
    return a;
}

host_range *trace_add_range(trace *t, const host_range *r)
{
    t->ranges = grow(t->ranges, &t->cap_ranges, t->n_ranges, sizeof *t->ranges);
    host_range *h = &t->ranges[t->n_ranges++];
    *h = *r;
    h->name = dup_or_empty(r->name);
    h->variant = dup_or_empty(r->variant);
    return h;
}

/* qsort is not stable; ties on start time are broken by correlation id (ops, apis)
 * or by longer-first (ranges, so an outer range precedes the inner one). */
static int cmp_op(const void *a, const void *b)
{
    const gpu_op *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static int cmp_api(const void *a, const void *b)
{
    const api_call *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns > y->end_ns ? -1 : 1;
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static int cmp_range(const void *a, const void *b)
{
    const host_range *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns);
}

static int cmp_api_corr(const void *a, const void *b)
{
    const api_call *x = *(const api_call *const *)a, *y = *(const api_call *const *)b;
    if (x->correlation != y->correlation)
        return x->correlation < y->correlation ? -1 : 1;
    return (x > y) - (x < y);
}

/* A point in time on one host thread, to be placed inside the cpu_op ranges. */
typedef struct cpu_query {
    int pid, tid;
    int64_t at;
    gpu_op *op;
} cpu_query;

static int cmp_query(const void *a, const void *b)
{
    const cpu_query *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

static int cmp_cpu_range(const void *a, const void *b)
{
    const host_range *x = *(const host_range *const *)a, *y = *(const host_range *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns);
}

static int same_thread(const host_range *r, const cpu_query *q) { return r->pid == q->pid && r->tid == q->tid; }

/* The chain of the innermost TRACE_CPU_PATH_MAX_LEVELS ranges of stack[0..depth),
 * outermost first, at most TRACE_CPU_PATH_MAX_BYTES (whole names only, the innermost
 * always); "… > " in front when outer ones were left out. Bounded whatever the
 * nesting: an op costs O(1), not O(depth) (16 000 nested ranges took 65 s and
 * 2.9 GB when every op held its whole chain). */
static char *cpu_path(const host_range *const *stack, size_t depth)
{
    static const char more[] = "\u2026 > ", sep[] = " > ";
    size_t first = depth, bytes = 0;
    while (first > 0 && depth - first < TRACE_CPU_PATH_MAX_LEVELS) {
        size_t len = strnlen(stack[first - 1]->name, TRACE_CPU_PATH_MAX_BYTES + 1) + (first < depth ? 3 : 0);
        if (first < depth && bytes + len > TRACE_CPU_PATH_MAX_BYTES)
            break;
        bytes += len;
        first--;
    }
    size_t cap = bytes + sizeof more + 1;
    char *p = malloc(cap);
    if (!p)
        attn_oom();
    size_t at = 0;
    if (first > 0)
        at += (size_t)snprintf(p, cap, "%s", more);
    for (size_t k = first; k < depth; k++)
        at += (size_t)snprintf(p + at, cap - at, "%s%.*s", k > first ? sep : "", (int)TRACE_CPU_PATH_MAX_BYTES,
                               stack[k]->name);
    return p;
}

/* gpu_op.cpu_op: one sweep per host thread over the cpu_op ranges (outer before
 * inner) and the launch times, with a stack of the ranges open at each time. */
static void link_cpu_ops(trace *t)
{
    size_t nr = 0;
    for (size_t i = 0; i < t->n_ranges; i++)
        nr += t->ranges[i].kind == RANGE_CPU_OP;
    for (size_t i = 0; i < t->n_ops; i++) {
        t->ops[i].cpu_op = NULL;
        free(t->ops[i].cpu_op_path);
        t->ops[i].cpu_op_path = NULL;
    }
    if (!nr || !t->n_ops)
        return;
    const host_range **rs = malloc(nr * sizeof *rs), **stack = malloc(nr * sizeof *stack);
    cpu_query *qs = malloc(t->n_ops * sizeof *qs);
    if (!rs || !stack || !qs)
        attn_oom();
    nr = 0;
    for (size_t i = 0; i < t->n_ranges; i++)
        if (t->ranges[i].kind == RANGE_CPU_OP)
            rs[nr++] = &t->ranges[i];
    qsort(rs, nr, sizeof *rs, cmp_cpu_range);
    size_t nq = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        const api_call *l = trace_launcher(t, &t->ops[i]);
        if (l)
            qs[nq++] = (cpu_query){l->pid, l->tid, l->start_ns, &t->ops[i]};
    }
    qsort(qs, nq, sizeof *qs, cmp_query);
    size_t r = 0, depth = 0;
    for (size_t q = 0; q < nq; q++) {
        const cpu_query *cq = &qs[q];
        if (q && (qs[q - 1].pid != cq->pid || qs[q - 1].tid != cq->tid))
            depth = 0;
        /* skip ranges of earlier threads */
        while (r < nr && (rs[r]->pid < cq->pid || (rs[r]->pid == cq->pid && rs[r]->tid < cq->tid)))
            r++;
        while (r < nr && same_thread(rs[r], cq) && rs[r]->start_ns <= cq->at) {
            while (depth && stack[depth - 1]->end_ns < rs[r]->start_ns)
                depth--;
            stack[depth++] = rs[r++];
        }
        while (depth && stack[depth - 1]->end_ns < cq->at)
            depth--;
        if (!depth)
            continue;
        cq->op->cpu_op = stack[depth - 1]->name;
        cq->op->cpu_op_path = cpu_path(stack, depth);
    }
    free(rs);
    free(stack);
    free(qs);
}

typedef struct api_query {
    int pid, tid;
    int64_t at;
    size_t api;
} api_query;

static int cmp_api_query(const void *a, const void *b)
{
    const api_query *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

size_t *trace_api_enclosing(const trace *t, unsigned kinds)
{
    size_t *out = calloc(t->n_apis ? t->n_apis : 1, sizeof *out);
    const host_range **rs = malloc((t->n_ranges ? t->n_ranges : 1) * sizeof *rs);
    const host_range **stack = malloc((t->n_ranges ? t->n_ranges : 1) * sizeof *stack);
    api_query *qs = malloc((t->n_apis ? t->n_apis : 1) * sizeof *qs);
    if (!out || !rs || !stack || !qs)
        attn_oom();
    size_t nr = 0;
    for (size_t i = 0; i < t->n_ranges; i++)
        if (kinds & (1u << t->ranges[i].kind))
            rs[nr++] = &t->ranges[i];
    qsort(rs, nr, sizeof *rs, cmp_cpu_range);
    for (size_t i = 0; i < t->n_apis; i++)
        qs[i] = (api_query){t->apis[i].pid, t->apis[i].tid, t->apis[i].start_ns, i};
    qsort(qs, t->n_apis, sizeof *qs, cmp_api_query);
    size_t r = 0, depth = 0;
    for (size_t q = 0; q < t->n_apis; q++) {
        const api_query *aq = &qs[q];
        if (q && (qs[q - 1].pid != aq->pid || qs[q - 1].tid != aq->tid))
            depth = 0;
        while (r < nr && (rs[r]->pid < aq->pid || (rs[r]->pid == aq->pid && rs[r]->tid < aq->tid)))
            r++;
        while (r < nr && rs[r]->pid == aq->pid && rs[r]->tid == aq->tid && rs[r]->start_ns <= aq->at) {
            while (depth && stack[depth - 1]->end_ns < rs[r]->start_ns)
                depth--;
            stack[depth++] = rs[r++];
        }
        while (depth && stack[depth - 1]->end_ns < aq->at)
            depth--;
        out[aq->api] = depth ? (size_t)(stack[depth - 1] - t->ranges) + 1 : 0;
    }
    free(rs);
    free(stack);
    free(qs);
    return out;
}

void trace_sort(trace *t)
{
    if (t->n_ops)
        qsort(t->ops, t->n_ops, sizeof *t->ops, cmp_op);
    if (t->n_apis)
        qsort(t->apis, t->n_apis, sizeof *t->apis, cmp_api);
    if (t->n_ranges)
        qsort(t->ranges, t->n_ranges, sizeof *t->ranges, cmp_range);
    drop_api_index(t);
    if (!t->n_apis)
        return;
    t->apis_by_corr = malloc(t->n_apis * sizeof *t->apis_by_corr);
    if (!t->apis_by_corr)
        attn_oom();
    for (size_t i = 0; i < t->n_apis; i++)
        t->apis_by_corr[i] = &t->apis[i];
    qsort(t->apis_by_corr, t->n_apis, sizeof *t->apis_by_corr, cmp_api_corr);
    t->n_apis_by_corr = t->n_apis;
    link_cpu_ops(t);
}

/* The launching API call: a runtime call when there is one (what the user's code
 * called); the driver call it went through otherwise (cuDNN calls the driver directly). */
int trace_memsets_in_forwards(const trace *t, size_t first_op, size_t first_range, const char *variant)
{
    int n = 0;
    for (size_t i = first_op; i < t->n_ops; i++) {
        if (t->ops[i].kind != GPU_MEMSET)
            continue;
        const api_call *l = trace_launcher(t, &t->ops[i]);
        for (size_t k = first_range; l && k < t->n_ranges; k++) {
            const host_range *r = &t->ranges[k];
            if (r->iteration >= 0 && r->name && !strcmp(r->name, "attn_fwd") && r->variant &&
                !strcmp(r->variant, variant) && l->start_ns >= r->start_ns && l->start_ns <= r->end_ns) {
                n++;
                break;
            }
        }
    }
    return n;
}

const api_call *trace_launcher(const trace *t, const gpu_op *op)
{
    const api_call *driver = NULL;
    if (t->n_apis_by_corr == t->n_apis && t->apis_by_corr) {
        size_t lo = 0, hi = t->n_apis;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (t->apis_by_corr[mid]->correlation < op->correlation)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < t->n_apis && t->apis_by_corr[lo]->correlation == op->correlation; lo++) {
            if (t->apis_by_corr[lo]->kind == API_RUNTIME)
                return t->apis_by_corr[lo];
            driver = t->apis_by_corr[lo];
        }
        return driver;
    }
    for (size_t i = 0; i < t->n_apis; i++) { /* not indexed yet: while records are being added */
        const api_call *a = &t->apis[i];
        if (a->correlation != op->correlation)
            continue;
        if (a->kind == API_RUNTIME)
            return a;
        driver = a;
    }
    return driver;
}

/* ---- consistency: an archive that contradicts itself ---- */

static int is_graph_launch(const api_call *a) { return a && strstr(a->name, "GraphLaunch") != NULL; }

static int cmp_op_corr(const void *a, const void *b)
{
    const gpu_op *x = *(const gpu_op *const *)a, *y = *(const gpu_op *const *)b;
    if (x->correlation != y->correlation)
        return x->correlation < y->correlation ? -1 : 1;
    return (x > y) - (x < y);
}

/* A name for the error line, cut short and with control characters dropped. */
static const char *shown(const char *s, char *buf, size_t n)
{
    size_t j = 0;
    for (; *s && j + 1 < n; s++)
        if ((unsigned char)*s >= 0x20 && *s != 0x7f)
            buf[j++] = *s;
    buf[j] = '\0';
    return buf;
}

int trace_check(const trace *t, char *err, size_t errlen)
{
    char a[80], b[80];
    /* One call of each kind (runtime, and the driver call under it) per correlation id. */
    for (size_t i = 1; i < t->n_apis_by_corr; i++) {
        const api_call *x = t->apis_by_corr[i - 1], *y = t->apis_by_corr[i];
        for (size_t k = i; k < t->n_apis_by_corr && t->apis_by_corr[k]->correlation == x->correlation; k++)
            if (t->apis_by_corr[k]->kind == x->kind) {
                y = t->apis_by_corr[k];
                return err_set(err, errlen, EXIT_BAD_ARCHIVE, "inconsistent: API calls %s at %.3f us and %s at "
                               "%.3f us both have correlation id %u (one call has one id); the trace was edited or "
                               "merged wrongly", shown(x->name, a, sizeof a), (double)x->start_ns / 1e3,
                               shown(y->name, b, sizeof b), (double)y->start_ns / 1e3, x->correlation);
            }
        (void)y;
    }
    if (!t->n_ops)
        return 0;
    const gpu_op **by = malloc(t->n_ops * sizeof *by);
    if (!by)
        attn_oom();
    for (size_t i = 0; i < t->n_ops; i++)
        by[i] = &t->ops[i];
    qsort(by, t->n_ops, sizeof *by, cmp_op_corr);
    int bad = 0;
    for (size_t i = 0; i < t->n_ops && !bad; i++) {
        const gpu_op *o = by[i];
        const api_call *l = trace_launcher(t, o);
        if (!l) {
            snprintf(err, errlen, "inconsistent: GPU operation %s at %.3f us has correlation id %u, which no API "
                     "call has: its launch is not in the trace", shown(o->name, a, sizeof a),
                     (double)o->start_ns / 1e3, o->correlation);
            bad = 1;
        } else if (i + 1 < t->n_ops && by[i + 1]->correlation == o->correlation && !is_graph_launch(l)) {
            snprintf(err, errlen, "inconsistent: GPU operations %s at %.3f us and %s at %.3f us both have "
                     "correlation id %u, but %s launches one (an event listed twice?)", shown(o->name, a, sizeof a),
                     (double)o->start_ns / 1e3, shown(by[i + 1]->name, b, sizeof b),
                     (double)by[i + 1]->start_ns / 1e3, o->correlation, l->name);
            bad = 1;
        } else if (o->start_ns < l->start_ns) {
            snprintf(err, errlen, "inconsistent: GPU operation %s (correlation id %u) starts at %.3f us, before "
                     "its launch call %s at %.3f us", shown(o->name, a, sizeof a), o->correlation,
                     (double)o->start_ns / 1e3, shown(l->name, b, sizeof b), (double)l->start_ns / 1e3);
            bad = 1;
        } else if (o->start_ns - l->start_ns > TRACE_MAX_LAUNCH_LAG_NS) {
            snprintf(err, errlen, "inconsistent: GPU operation %s (correlation id %u) starts %.0f s after its launch "
                     "call %s, more than the %.0f s any launch queue holds: the two are of different recordings or "
                     "clocks", shown(o->name, a, sizeof a), o->correlation, (double)(o->start_ns - l->start_ns) / 1e9,
                     shown(l->name, b, sizeof b), (double)TRACE_MAX_LAUNCH_LAG_NS / 1e9);
            bad = 1;
        }
    }
    free(by);
    return bad ? EXIT_BAD_ARCHIVE : EXIT_OK;
}
