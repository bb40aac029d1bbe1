/* The forwards of an imported trace (kineto_forwards.h): which of a file's ranges are its
 * forwards (the ranges named --range, else its ProfilerStep#N steps), numbered in time
 * order and given the variant's name; a forward that holds no kept GPU operation's launch
 * is none; the names of the ranges a trace holds, for the errors that ask for one. */
#include "kineto_forwards.h"
#include "alloc.h"

#include "exit_codes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_range_ptr(const void *a, const void *b)
{
    const host_range *x = *(host_range *const *)a, *y = *(host_range *const *)b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns);
}

static void set_variant(host_range *h, const char *variant, int iteration)
{
    char *v = strdup(variant);
    if (!v)
        attn_oom();
    free(h->variant);
    h->variant = v;
    h->iteration = iteration;
}

/* The names of the user_annotation ranges of a file, for the error that says none is a forward. */
static void range_names(const trace *t, size_t from, char *out, size_t n)
{
    out[0] = '\0';
    int shown = 0, more = 0;
    for (size_t i = from; i < t->n_ranges; i++) {
        const host_range *h = &t->ranges[i];
        if (h->kind != RANGE_ANNOTATION)
            continue;
        char q[140];
        snprintf(q, sizeof q, "`%.120s`", h->name);
        if (strstr(out, q))
            continue;
        if (shown == 6) {
            more++;
            continue;
        }
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", shown ? ", " : "", q);
        shown++;
    }
    if (more) {
        size_t len = strlen(out);
        snprintf(out + len, n - len, " and %d more", more);
    }
}

/* Marks the forwards of the file's slice; returns how many, or minus the exit code (err set):
 * -EXIT_BAD_ARCHIVE when the trace has no forward, -EXIT_USAGE when --range names none. */
int kineto_mark_forwards(trace *t, size_t ranges0, const char *path, const char *variant, const char *range,
                         int explicit_range, char *marker, size_t markerlen, char *err, size_t errlen)
{
    size_t n = 0, steps = 0;
    for (size_t i = ranges0; i < t->n_ranges; i++) {
        const host_range *h = &t->ranges[i];
        if (h->kind != RANGE_ANNOTATION)
            continue;
        n += !strcmp(h->name, range);
        steps += !strncmp(h->name, "ProfilerStep#", 13);
    }
    int by_step = n == 0;
    if (by_step && explicit_range) { /* a range asked for by name is never replaced by the steps */
        char names[512];
        range_names(t, ranges0, names, sizeof names);
        snprintf(err, errlen, "%s: no user_annotation range `%s` (--range); the trace holds %s: name one of them, "
                 "or leave --range out to take each ProfilerStep#N as a step", path, range,
                 names[0] ? names : "no user_annotation range");
        return -EXIT_USAGE;
    }
    if (by_step)
        n = steps;
    if (!n) {
        char names[512];
        range_names(t, ranges0, names, sizeof names);
        if (names[0])
            snprintf(err, errlen, "%s: no user_annotation range `%s` and no ProfilerStep#N to take as forwards; "
                     "the trace holds %s (pick one with --range NAME)", path, range, names);
        else
            snprintf(err, errlen, "%s: no user_annotation range `%s` and no ProfilerStep#N to take as forwards; "
                     "the trace holds no user_annotation range (wrap each forward in "
                     "torch.profiler.record_function(\"%s\"))", path, range, range);
        return -EXIT_BAD_ARCHIVE;
    }
    host_range **fw = malloc(n * sizeof *fw);
    if (!fw)
        attn_oom();
    size_t k = 0;
    for (size_t i = ranges0; i < t->n_ranges; i++) {
        host_range *h = &t->ranges[i];
        if (h->kind != RANGE_ANNOTATION)
            continue;
        if (by_step ? !strncmp(h->name, "ProfilerStep#", 13) : !strcmp(h->name, range))
            fw[k++] = h;
        else
            set_variant(h, variant, -1);
    }
    qsort(fw, n, sizeof *fw, cmp_range_ptr);
    for (size_t i = 0; i < n; i++)
        set_variant(fw[i], variant, (int)i);
    free(fw);
    if (by_step)
        snprintf(marker, markerlen, "Kineto ProfilerStep#N ranges");
    else
        snprintf(marker, markerlen, "Kineto user_annotation ranges \"%s\" (record_function)", range);
    return (int)n;
}

typedef struct corr_start {
    uint32_t correlation;
    int pid;
    int64_t start_ns;
} corr_start;

static int cmp_corr_start(const void *a, const void *b)
{
    const corr_start *x = a, *y = b;
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static int cmp_launch_time(const void *a, const void *b)
{
    const corr_start *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* A forward holds the work whose launch call starts inside it: the forwards of the file's
 * slice that hold no kept GPU operation's launch are no forwards (a step of another
 * thread's work, or of none) and lose their mark; the rest are numbered again. Returns the
 * forwards left, and in *dropped those left out. */
int kineto_drop_empty_forwards(trace *t, size_t ops0, size_t apis0, size_t ranges0, int *dropped)
{
    size_t n_apis = t->n_apis - apis0, n_ops = t->n_ops - ops0, n_launch = 0;
    corr_start *calls = malloc((n_apis + 1) * sizeof *calls), *launch = malloc((n_ops + 1) * sizeof *launch);
    if (!calls || !launch)
        attn_oom();
    for (size_t i = 0; i < n_apis; i++)
        calls[i] = (corr_start){t->apis[apis0 + i].correlation, t->apis[apis0 + i].pid, t->apis[apis0 + i].start_ns};
    qsort(calls, n_apis, sizeof *calls, cmp_corr_start);
    for (size_t i = 0; i < n_ops; i++) {
        corr_start key = {t->ops[ops0 + i].correlation, 0, 0};
        const corr_start *c = bsearch(&key, calls, n_apis, sizeof *calls, cmp_corr_start);
        if (c)
            launch[n_launch++] = *c;
    }
    qsort(launch, n_launch, sizeof *launch, cmp_launch_time);
    int kept = 0;
    *dropped = 0;
    for (size_t i = ranges0; i < t->n_ranges; i++) {
        host_range *h = &t->ranges[i];
        if (h->iteration < 0)
            continue;
        size_t lo = 0, hi = n_launch; /* the first launch of the range's process at or after its start */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (launch[mid].pid < h->pid || (launch[mid].pid == h->pid && launch[mid].start_ns < h->start_ns))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n_launch && launch[lo].pid == h->pid && launch[lo].start_ns <= h->end_ns)
            h->iteration = kept++;
        else
            h->iteration = -1, (*dropped)++;
    }
    free(calls), free(launch);
    return kept;
}
