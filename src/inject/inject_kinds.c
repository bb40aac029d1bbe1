/* The activity kinds of libattnprof_inject.so (inject_kinds.h). */
#include "inject_kinds.h"

#include <stdio.h>
#include <string.h>

/* The activity kinds, by the names ATTNPROF_INJECT_KINDS takes (a comma-separated list, or
 * "all", or "none"; unset: those marked by_default): the overhead of each is measured apart that
 * way (bench/record_tuning_h200.sh). The device record is always asked for (the GPU's identity).
 * The synchronisation kind is not a default: with it on, CUPTI makes every runtime call pay for
 * it, also the calls it records nothing of. On the H200 (2026-12-03; bench/results/
 * 2026-12-03-record-overhead.md, section 4) a launch after ten cudaGetDevice calls, as a PyTorch
 * op makes, took 6.9-11.8 µs with kernels and sync, 4.4-4.8 with every other kind, 3.6-6.0
 * plain. Its records were only counted; the synchronising calls themselves are recorded as API
 * calls (inject.c's API_WORDS). */
static const struct {
    const char *name;
    CUpti_ActivityKind kind;
    int by_default;
} KINDS[] = {
    {"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 1}, {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY, 1},
    {"memset", CUPTI_ACTIVITY_KIND_MEMSET, 1},            {"marker", CUPTI_ACTIVITY_KIND_MARKER, 1},
    {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 0},
};

/* 1 when `name` is in the comma-separated list ("all": every kind; NULL or "": the defaults). */
static int kind_wanted(const char *list, const char *name, int by_default)
{
    if (!list || !*list)
        return by_default;
    if (!strcmp(list, "all"))
        return 1;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == len && !strncmp(p, name, len))
            return 1;
        p += n + (comma != NULL);
    }
    return 0;
}

int inject_kinds_chosen(const char *list, CUpti_ActivityKind out[INJECT_KINDS_MAX], char *named, size_t n)
{
    int k = 0;
    named[0] = '\0';
    for (size_t i = 0; i < sizeof KINDS / sizeof *KINDS && k < INJECT_KINDS_MAX; i++)
        if (kind_wanted(list, KINDS[i].name, KINDS[i].by_default)) {
            out[k++] = KINDS[i].kind;
            size_t len = strlen(named);
            snprintf(named + len, n - len, "%s%s", len ? "," : "", KINDS[i].name);
        }
    if (!k)
        snprintf(named, n, "-");
    return k;
}
