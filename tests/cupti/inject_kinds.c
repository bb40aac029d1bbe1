/* Runs in `make test` of a CUDA build, without a GPU: the activity kinds libattnprof_inject.so
 * asks CUPTI for (src/inject/inject_kinds.c). By default every kind but the synchronisation
 * kind, which made every runtime call of the program pay (bench/results/
 * 2026-12-03-record-overhead.md, section 4); "all", a list and "none" as the README says.
 * Exit 0 on success; prints each mismatch. */
#include <stdio.h>
#include <string.h>

#include "inject_kinds.h"

static int check(const char *list, const char *want_named, int want_n)
{
    CUpti_ActivityKind kinds[INJECT_KINDS_MAX];
    char named[128];
    int n = inject_kinds_chosen(list, kinds, named, sizeof named);
    int bad = n != want_n || strcmp(named, want_named) != 0;
    for (int i = 0; i < n; i++)
        bad |= kinds[i] == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && !strstr(want_named, "sync");
    if (bad)
        printf("inject_kinds: ATTNPROF_INJECT_KINDS=%s: %d kinds (%s), expected %d (%s)\n", list ? list : "(unset)", n,
               named, want_n, want_named);
    return bad;
}

int main(void)
{
    int bad = 0;
    bad |= check(NULL, "kernel,memcpy,memset,marker", 4);
    bad |= check("", "kernel,memcpy,memset,marker", 4);
    bad |= check("all", "kernel,memcpy,memset,marker,sync", 5);
    bad |= check("kernel,sync", "kernel,sync", 2);
    bad |= check("sync,kernel", "kernel,sync", 2);
    bad |= check("none", "-", 0);
    bad |= check("kern,memcpy", "memcpy", 1);
    printf("inject_kinds: %s\n", bad ? "FAILED" : "the default, all, lists and none as documented");
    return bad;
}
