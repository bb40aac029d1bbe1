/* archive_read: an archive directory's run.json and trace.json, checked in the
 * order a user would fix them (is this an archive at all, then is it whole). */
#include "archive_read.h"

#include "archive.h"

#include <limits.h>
#include <stdio.h>

int archive_read(const char *dir, trace *t, run_info *r, char *err, size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/run.json", dir);
    if (!path_exists(dir) || !path_exists(path)) {
        snprintf(err, errlen, "%s: missing; is %s an archive written by `attnprof run -o DIR`?", path, dir);
        return -1;
    }
    if (run_info_read_json(r, path, err, errlen) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/trace.json", dir);
    if (!path_exists(path)) {
        snprintf(err, errlen, "%s: missing; the archive is incomplete", path);
        return -1;
    }
    return trace_read_json(t, path, err, errlen) != 0 ? -1 : 0;
}
