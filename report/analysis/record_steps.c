/* The steps of a recorded program (record_steps.h): the three rules, tried in order, over
 * the trace's GPU operations in launch order (each op at its launching API call's start).
 * A step is a host span [first launch's start, last launch's end], so the analysis, which
 * gives a forward the operations launched inside its range, gives a step exactly its own. */
#include "record_steps.h"
#include "units.h"

#include "alloc.h"
#include "err.h"
#include "median.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct launch {
    const gpu_op *op;
    int64_t start, end; /* the launching call's */
    int pid;
} launch;

typedef struct span {
    int64_t start, end;
} span;

typedef struct steps {
    span *s;
    int n, cap;
} steps;

const char *step_rule_name(step_rule r)
{
    return r == STEP_RULE_NVTX ? "nvtx" : r == STEP_RULE_GRAPH ? "graph" : r == STEP_RULE_PERIOD ? "period" : "none";
}

static void push(steps *st, int64_t start, int64_t end)
{
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 64;
        st->s = attn_realloc(st->s, (size_t)st->cap * sizeof *st->s);
    }
    st->s[st->n++] = (span){start, end};
}

static int cmp_launch(const void *a, const void *b)
{
    const launch *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->op > y->op) - (x->op < y->op);
}

/* The ops that have a launching call, in launch order; returns the count. */
static size_t launches_of(const trace *t, launch **out)
{
    launch *l = attn_malloc((t->n_ops ? t->n_ops : 1) * sizeof *l);
    size_t n = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        const api_call *a = trace_launcher(t, &t->ops[i]);
        if (a)
            l[n++] = (launch){&t->ops[i], a->start_ns, a->end_ns, a->pid};
    }
    qsort(l, n, sizeof *l, cmp_launch);
    *out = l;
    return n;
}

/* Launches starting inside [lo, hi]; the first one's index in *first (when first is set). */
static size_t launches_in(const launch *l, size_t n, int64_t lo, int64_t hi, size_t *first)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (l[m].start < lo)
            a = m + 1;
        else
            b = m;
    }
    size_t c = a;
    while (c < n && l[c].start <= hi)
        c++;
    if (first)
        *first = a;
    return c - a;
}

static size_t launches_within(const launch *l, size_t n, int64_t lo, int64_t hi)
{
    return launches_in(l, n, lo, hi, NULL);
}

/* What a range launched, as one number: its launches' kernel names in order (FNV-1a). */
static uint64_t work_signature(const launch *l, size_t first, size_t count)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = first; i < first + count; i++) {
        for (const char *c = l[i].op->name; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    return h;
}

typedef struct range_work {
    uint64_t signature;
    size_t launches;
} range_work;

static int cmp_work(const void *a, const void *b)
{
    const range_work *x = a, *y = b;
    return x->signature != y->signature ? (x->signature < y->signature ? -1 : 1)
                                        : (x->launches > y->launches) - (x->launches < y->launches);
}

/* The launches of the ranges that repeat one piece of work most: the most frequent
 * signature's count times its launches (a compiler's or autotuner's ranges, each
 * launching other kernels, score low; a step's score high). */
static size_t repeated_work(const launch *l, size_t nl, const steps *st, int *repeats)
{
    range_work *w = attn_malloc((size_t)(st->n ? st->n : 1) * sizeof *w);
    for (int k = 0; k < st->n; k++) {
        size_t first, count = launches_in(l, nl, st->s[k].start, st->s[k].end, &first);
        w[k] = (range_work){work_signature(l, first, count), count};
    }
    qsort(w, (size_t)st->n, sizeof *w, cmp_work);
    size_t best = 0;
    *repeats = 0;
    for (int k = 0, run = 1; k < st->n; k++, run++) {
        if (k + 1 < st->n && w[k + 1].signature == w[k].signature)
            continue;
        if ((size_t)run * w[k].launches > best)
            best = (size_t)run * w[k].launches, *repeats = run;
        run = 0;
    }
    free(w);
    return best;
}

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->start != y->start ? (x->start < y->start ? -1 : 1) : (x->end > y->end) - (x->end < y->end);
}

/* The ranges named `name` that launched work, outermost and apart (a range inside the one
 * before it is left out). */
static void nvtx_spans(const trace *t, const char *variant, const char *name, const launch *l, size_t nl, steps *st)
{
    st->n = 0;
    for (size_t i = 0; i < t->n_ranges; i++) {
        const host_range *r = &t->ranges[i];
        if (r->kind == RANGE_ANNOTATION && r->iteration < 0 && !strcmp(r->variant, variant) &&
            !strcmp(r->name, name) && launches_within(l, nl, r->start_ns, r->end_ns) > 0)
            push(st, r->start_ns, r->end_ns);
    }
    if (st->n > 1)
        qsort(st->s, (size_t)st->n, sizeof *st->s, cmp_span);
    int kept = 0;
    for (int i = 0; i < st->n; i++)
        if (!kept || st->s[i].start > st->s[kept - 1].end)
            st->s[kept++] = st->s[i];
    st->n = kept;
}

/* Without --range: the name whose ranges repeat one piece of work (the same kernels in the same
 * order, at least STEPS_MIN_REPEATS times) over the most launches; ties: fewer ranges, then the
 * first seen. NULL when none repeats. */
static const char *repeated_range(const trace *t, const char *variant, const launch *l, size_t nl)
{
    const char *best = NULL;
    size_t best_launches = 0;
    int best_n = 0;
    steps st = {0};
    for (size_t i = 0; i < t->n_ranges; i++) {
        const host_range *r = &t->ranges[i];
        if (r->kind != RANGE_ANNOTATION || r->iteration >= 0 || strcmp(r->variant, variant))
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = t->ranges[j].kind == RANGE_ANNOTATION && !strcmp(t->ranges[j].name, r->name);
        if (seen)
            continue;
        nvtx_spans(t, variant, r->name, l, nl, &st);
        int repeats;
        size_t covered = repeated_work(l, nl, &st, &repeats);
        if (repeats >= STEPS_MIN_REPEATS && (covered > best_launches || (covered == best_launches && st.n < best_n))) {
            best = r->name;
            best_launches = covered;
            best_n = st.n;
        }
    }
    free(st.s);
    return best;
}

static void graph_spans(const trace *t, const launch *l, size_t nl, steps *st)
{
    for (size_t i = 0; i < nl; i++) {
        const api_call *a = trace_launcher(t, l[i].op);
        if (!strstr(a->name, "GraphLaunch"))
            continue;
        if (st->n && st->s[st->n - 1].start == a->start_ns)
            continue; /* the graph's other operations */
        push(st, a->start_ns, a->end_ns);
    }
}

typedef struct name_id {
    const char *name;
    size_t index;
} name_id;

static int cmp_name(const void *a, const void *b)
{
    const name_id *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Each launch's name as a small integer; returns the number of names. */
static int name_ids(const launch *l, size_t n, int *id)
{
    name_id *v = attn_malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (name_id){l[i].op->name, i};
    qsort(v, n, sizeof *v, cmp_name);
    int ids = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(v[i].name, v[i - 1].name))
            ids++;
        id[v[i].index] = ids;
    }
    free(v);
    return n ? ids + 1 : 0;
}

typedef struct name_count {
    int count;
    int id;
} name_count;

static int cmp_count(const void *a, const void *b)
{
    const name_count *x = a, *y = b;
    return x->count != y->count ? x->count - y->count : x->id - y->id;
}

/* The candidate periods: the median distance between repeats of each of the rarest names that repeat. */
static int period_candidates(const int *id, size_t n, int names, int *cand)
{
    name_count *c = attn_calloc((size_t)names, sizeof *c);
    for (int k = 0; k < names; k++)
        c[k].id = k;
    for (size_t i = 0; i < n; i++)
        c[id[i]].count++;
    qsort(c, (size_t)names, sizeof *c, cmp_count);
    int nc = 0;
    double *gaps = attn_malloc((n ? n : 1) * sizeof *gaps);
    for (int k = 0; k < names && nc < STEPS_PERIOD_CANDIDATES; k++) {
        if (c[k].count < STEPS_MIN_REPEATS)
            continue;
        int ng = 0;
        long last = -1;
        for (size_t i = 0; i < n; i++)
            if (id[i] == c[k].id) {
                if (last >= 0)
                    gaps[ng++] = (double)((long)i - last);
                last = (long)i;
            }
        int p = (int)median_of(gaps, ng);
        int dup = 0;
        for (int j = 0; j < nc && !dup; j++)
            dup = cand[j] == p;
        if (p >= 1 && (size_t)p * 2 <= n && !dup)
            cand[nc++] = p;
    }
    free(gaps);
    free(c);
    return nc;
}

/* The period rule: steps of `period` launches where the sequence repeats longest. */
static void period_spans(const launch *l, size_t n, steps *st, int *period)
{
    *period = 0;
    if (n < 2)
        return;
    int *id = attn_malloc(n * sizeof *id);
    int cand[STEPS_PERIOD_CANDIDATES];
    int nc = period_candidates(id, n, name_ids(l, n, id), cand);
    size_t best_score = 0, best_start = 0, best_run = 0;
    for (int c = 0; c < nc; c++) {
        size_t p = (size_t)cand[c], run = 0, start = 0;
        for (size_t i = 0; i + p < n; i++) {
            if (id[i] != id[i + p])
                continue;
            size_t j = i;
            while (j + p < n && id[j] == id[j + p])
                j++;
            if (j - i > run)
                run = j - i, start = i;
            i = j;
        }
        size_t score = run + p;
        if (run >= p && (score > best_score || (score == best_score && (int)p < *period)))
            best_score = score, best_start = start, best_run = run, *period = (int)p;
    }
    if (*period > 0) {
        size_t p = (size_t)*period, end = best_start + best_run + p; /* [best_start, end) repeats */
        /* The phase: where the host pauses longest between launches, over the periods. */
        size_t phase = 0;
        double longest = -1;
        double *gap = attn_malloc((end / p + 1) * sizeof *gap);
        for (size_t j = 0; j < p; j++) {
            int ng = 0;
            for (size_t i = best_start + j; i < end; i += p)
                if (i > 0)
                    gap[ng++] = (double)(l[i].start - l[i - 1].start);
            double g = ng ? median_of(gap, ng) : -1;
            if (g > longest)
                longest = g, phase = j;
        }
        free(gap);
        for (size_t s = best_start + phase; s + p <= end; s += p) {
            int64_t hi = l[s].end;
            for (size_t i = s; i < s + p; i++)
                if (l[i].end > hi)
                    hi = l[i].end;
            push(st, l[s].start, hi);
        }
    }
    free(id);
}

/* Finds the spans by the rules in order; the rule and its sentence go to res. */
static void find_spans(const trace *t, const char *variant, const step_options *o, const launch *l, size_t nl,
                       steps *st, step_result *res)
{
    char missing[160] = "";
    const char *name = o->range;
    if (name) {
        nvtx_spans(t, variant, name, l, nl, st);
        if (st->n == 0)
            snprintf(missing, sizeof missing, "no NVTX range \"%.20s\" with GPU work; ", name);
    } else if ((name = repeated_range(t, variant, l, nl)) != NULL)
        nvtx_spans(t, variant, name, l, nl, st);
    if (st->n > 0) {
        res->rule = STEP_RULE_NVTX;
        snprintf(res->name, sizeof res->name, "%s", name);
        snprintf(res->rule_text, sizeof res->rule_text, "NVTX ranges named \"%.24s\"%s", name,
                 o->range ? " (--range)" : " (the name that repeats the same GPU work most)");
        return;
    }
    graph_spans(t, l, nl, st);
    if (st->n > 0) {
        res->rule = STEP_RULE_GRAPH;
        snprintf(res->name, sizeof res->name, "graph launch");
        snprintf(res->rule_text, sizeof res->rule_text, "%sCUDA graph launches (a step each)", missing);
        return;
    }
    period_spans(l, nl, st, &res->period);
    if (st->n > 0) {
        res->rule = STEP_RULE_PERIOD;
        char ops[32];
        units_count_noun(res->period, "op", ops, sizeof ops);
        snprintf(res->name, sizeof res->name, "period of %s", ops);
        snprintf(res->rule_text, sizeof res->rule_text, "%sthe kernel sequence's period (%s), cut at the longest "
                 "launch gap", missing, ops);
    }
}

int record_steps_find(trace *t, const char *variant, const step_options *o, step_result *res, char *err,
                      size_t errlen)
{
    memset(res, 0, sizeof *res);
    launch *l;
    size_t nl = launches_of(t, &l);
    steps st = {0};
    find_spans(t, variant, o, l, nl, &st, res);
    int pid = nl ? l[0].pid : t->pid;
    free(l);
    res->found = st.n;
    if (st.n == 0) {
        free(st.s);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE,
                       "no steps: %zu GPU operations with a launching call, no repeated NVTX range, no graph launch "
                       "and no repeating kernel sequence; mark a step with an NVTX range and pass --range NAME",
                       nl);
    }
    if (o->skip >= st.n) {
        free(st.s);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "--skip %d leaves none of the %d steps found (%s); skip fewer",
                       o->skip, st.n, step_rule_name(res->rule));
    }
    int last = o->steps > 0 && o->skip + o->steps < st.n ? o->skip + o->steps : st.n;
    for (int k = o->skip; k < last; k++) {
        host_range h = {.kind = RANGE_ANNOTATION,
                        .name = res->name,
                        .variant = (char *)variant,
                        .iteration = k - o->skip,
                        .start_ns = st.s[k].start,
                        .end_ns = st.s[k].end,
                        .pid = pid};
        trace_add_range(t, &h);
    }
    res->kept = last - o->skip;
    free(st.s);
    trace_sort(t);
    return EXIT_OK;
}
