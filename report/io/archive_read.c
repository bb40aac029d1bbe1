/* archive_read: an archive directory's run.json and trace.json, checked in the
 * order a user would fix them (is this an archive at all, then is it whole).
 * Only regular files are read: a FIFO or a directory named trace.json is an
 * error, not a hang. counters.json, when present, joins run_info (r->counters;
 * counters_free when done). */
#include "archive_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/stat.h>

/* 0 when dir/name is a regular file; -1 with the reason otherwise. */
static int archive_file(const char *dir, const char *name, const char *missing_hint, char **path, char *err,
                        size_t errlen)
{
    if (asprintf(path, "%s/%s", dir, name) < 0) {
        *path = NULL;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct stat st;
    if (stat(*path, &st) != 0) {
        snprintf(err, errlen, "%s: missing; %s", *path, missing_hint);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file; an archive holds plain trace.json and run.json files", *path);
        return -1;
    }
    /* A file that cannot be opened (permissions) is unreadable, not "invalid JSON". */
    int fd = open(*path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: unreadable: %s; give this user read permission (chmod a+r)", *path,
                 strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

int archive_read(const char *dir, trace *t, run_info *r, char *err, size_t errlen)
{
    char *path = NULL, hint[1200];
    snprintf(hint, sizeof hint, "is %.1000s an archive written by `attnprof run -o DIR`?", dir);
    int bad = archive_file(dir, "run.json", hint, &path, err, errlen);
    if (!bad && run_info_read_json(r, path, err, errlen) != 0)
        bad = 1;
    free(path);
    if (bad)
        return -1;
    bad = archive_file(dir, "trace.json", "the archive is incomplete", &path, err, errlen);
    if (!bad && trace_read_json(t, path, err, errlen) != 0)
        bad = 1;
    free(path);
    if (bad)
        return -1;
    /* counters.json (the counter pass) is optional: archives without it render as before. */
    struct stat st;
    if (asprintf(&path, "%s/counters.json", dir) < 0) {
        trace_free(t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int present = lstat(path, &st) == 0;
    free(path);
    path = NULL;
    if (present) {
        counters_set cs;
        bad = archive_file(dir, "counters.json", "", &path, err, errlen) != 0 ||
              counters_read_json(&cs, path, err, errlen) != 0;
        if (!bad)
            r->counters = cs;
        free(path);
    }
    if (bad)
        trace_free(t);
    return bad ? -1 : 0;
}
