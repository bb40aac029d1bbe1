/* Test helper for tests/cli/untrusted_files.c, LD_PRELOADed into the attnprof under test:
 * rename(2) and renameat2(2) as slow as on a network file system (each waits
 * ATTNPROF_SLOW_RENAME_MS milliseconds, default 40, then does the real call), so a test
 * can SIGKILL attnprof inside its final renames. Nothing else changes. Built by the test
 * itself (cc -shared), never linked into attnprof. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void nap(void)
{
    const char *v = getenv("ATTNPROF_SLOW_RENAME_MS");
    long ms = v ? atol(v) : 40;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (!real)
        real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    nap();
    return real(from, to);
}

int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned flags)
{
    static int (*real)(int, const char *, int, const char *, unsigned);
    if (!real)
        real = (int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
    nap();
    return real(from_dir, from, to_dir, to, flags);
}
