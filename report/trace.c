#include "trace.h"

#include <stdlib.h>
#include <string.h>

void trace_init(trace *t) { memset(t, 0, sizeof *t); }

void trace_free(trace *t)
{
    for (size_t i = 0; i < t->n_ops; i++)
        free(t->ops[i].name);
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
        abort(); /* a trace that does not fit in host memory is not recoverable here */
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
        abort();
    for (size_t i = 0; i < t->n_apis; i++)
        t->apis_by_corr[i] = &t->apis[i];
    qsort(t->apis_by_corr, t->n_apis, sizeof *t->apis_by_corr, cmp_api_corr);
    t->n_apis_by_corr = t->n_apis;
}

/* The launching API call: a runtime call when there is one (what the user's code
 * called); the driver call it went through otherwise (cuDNN calls the driver directly). */
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
