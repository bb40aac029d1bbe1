/* archive_read: an archive directory's run.json and trace.json, checked in the
 * order a user would fix them (is this an archive at all, then is it whole), then
 * against each other (archive_checks.c). Only regular files are read: a FIFO or a
 * directory named trace.json is an error, not a hang. counters.json, when present,
 * joins run_info (r->counters; counters_free when done). */
#include "archive_read.h"

#include "alloc.h"
#include "archive_checks.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/stat.h>

/* EXIT_OK when dir/name is a regular file this user can read (*path to free either way). */
static int archive_file(const char *dir, const char *name, const char *missing_hint, char **path, char *err,
                        size_t errlen)
{
    *path = attn_asprintf("%s/%s", dir, name);
    struct stat st;
    if (stat(*path, &st) != 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: missing; %s", *path, missing_hint);
    if (!S_ISREG(st.st_mode))
        return err_set(err, errlen, EXIT_BAD_ARCHIVE,
                       "%s: not a regular file; an archive holds plain trace.json and run.json files", *path);
    /* A file that cannot be opened (permissions) is unreadable, not "invalid JSON". */
    int fd = open(*path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: unreadable: %s; give this user read permission (chmod a+r)",
                       *path, strerror(errno));
    close(fd);
    return EXIT_OK;
}

/* archive_file, then the reader; the path freed. */
static int read_one(const char *dir, const char *name, const char *hint, int (*read)(void *, const char *, char *, size_t),
                    void *into, char *err, size_t errlen)
{
    char *path = NULL;
    int rc = archive_file(dir, name, hint, &path, err, errlen);
    if (rc == EXIT_OK)
        rc = read(into, path, err, errlen);
    free(path);
    return rc;
}

static int read_run(void *r, const char *path, char *err, size_t errlen) { return run_info_read_json(r, path, err, errlen); }
/* trace.json's reader answers 0 or -1 (the Kineto reader's callbacks' convention). */
static int read_trace(void *t, const char *path, char *err, size_t errlen)
{
    return trace_read_json(t, path, err, errlen) == 0 ? EXIT_OK : EXIT_BAD_ARCHIVE;
}
static int read_counters(void *c, const char *path, char *err, size_t errlen)
{
    return counters_read_json(c, path, err, errlen);
}

int archive_read(const char *dir, trace *t, run_info *r, char *err, size_t errlen)
{
    char hint[1200];
    snprintf(hint, sizeof hint, "is %.1000s an archive written by `attnprof run -o DIR`?", dir);
    int rc = read_one(dir, "run.json", hint, read_run, r, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    rc = read_one(dir, "trace.json", "the archive is incomplete", read_trace, t, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    /* counters.json (the counter pass) is optional: archives without it render as before. */
    struct stat st;
    char *path = attn_asprintf("%s/counters.json", dir);
    int present = lstat(path, &st) == 0;
    free(path);
    if (present) {
        counters_set cs;
        rc = read_one(dir, "counters.json", "", read_counters, &cs, err, errlen);
        if (rc == EXIT_OK)
            r->counters = cs;
    }
    if (rc != EXIT_OK)
        trace_free(t);
    return rc;
}
