/* Finds libattnprof_recorder.so and loads it, the redis-module way: dlopen with
 * RTLD_NOW | RTLD_LOCAL (every CUDA library it needs resolves now, or the load
 * fails with dlerror's reason), one entry symbol, a static function table, and a
 * check that both sides were built from the same headers. Only `run` and `list`
 * come here; nothing else in attnprof loads a CUDA library. */
#include "recorder.h"

#include "err.h"
#include "exit_codes.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ATTNPROF_WITH_RECORDER
#define ATTNPROF_WITH_RECORDER 1
#endif

static int no_recorder(char *err, size_t errlen, const char *why)
{
    return err_set(err, errlen, EXIT_NO_DEVICE, "%s; `attnprof report DIR` re-renders an archived run without one", why);
}

/* Candidate paths in search order; returns how many were written. */
static int candidates(char paths[3][PATH_MAX])
{
    int n = 0;
    const char *env = getenv("ATTNPROF_RECORDER");
    if (env && *env)
        snprintf(paths[n++], PATH_MAX, "%s", env);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            if (snprintf(paths[n], PATH_MAX, "%s/%s", exe, RECORDER_FILE) < PATH_MAX)
                n++;
            if (snprintf(paths[n], PATH_MAX, "%s/../lib/attnprof/%s", exe, RECORDER_FILE) < PATH_MAX)
                n++;
        }
    }
    return n;
}

int recorder_load(const recorder_api **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!ATTNPROF_WITH_RECORDER)
        return no_recorder(err, errlen,
                           "this attnprof was built without CUDA (no nvcc under CUDA_HOME), so it cannot record; "
                           "rebuild with the CUDA Toolkit to run the batch");
    char paths[3][PATH_MAX];
    int n = candidates(paths);
    for (int i = 0; i < n; i++) {
        if (access(paths[i], R_OK) != 0)
            continue;
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            char why[1024];
            snprintf(why, sizeof why, "cannot load the recorder %s: %s", paths[i], dlerror());
            return no_recorder(err, errlen, why);
        }
        const recorder_api *(*entry)(void) = (const recorder_api *(*)(void))dlsym(h, RECORDER_ENTRY);
        const recorder_api *api = entry ? entry() : NULL;
        if (!api || api->abi != RECORDER_ABI || api->sizeof_trace != sizeof(trace) ||
            api->sizeof_run_info != sizeof(run_info) || api->sizeof_run_config != sizeof(run_config)) {
            dlclose(h);
            return err_set(err, errlen, EXIT_IO, "%s was built from another attnprof (ABI mismatch); rebuild with "
                           "`make`", paths[i]);
        }
        *out = api; /* stays loaded until exit */
        return EXIT_OK;
    }
    char why[256];
    snprintf(why, sizeof why, "no %s beside the attnprof executable; build it with `make` (needs the CUDA Toolkit) "
             "or point ATTNPROF_RECORDER at it", RECORDER_FILE);
    return no_recorder(err, errlen, why);
}
