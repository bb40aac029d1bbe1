/* Writing an archive directory: trace.json, run.json and counters.json into a staging
 * folder, read back as `report` reads them, rendered, then committed into place (or
 * removed, on any failure). `attnprof run` and `attnprof import` both write through it. */
#ifndef ATTNPROF_ARCHIVE_WRITE_H
#define ATTNPROF_ARCHIVE_WRITE_H

#include <stddef.h>

#include "run_info.h"
#include "trace.h"

/* Renders the archive staged in `dir` from its trace and run.json as read back: the
 * documents layer's report_render, passed in by the caller (io/ sits below docs/). */
typedef int (*archive_render_fn)(const char *dir, const trace *t, const run_info *r, void *ctx, char *err,
                                 size_t errlen);

typedef enum archive_read_back {
    /* trace.json, run.json and counters.json read back: the report is rendered from what
     * was written, exactly as `attnprof report` would (run) */
    ARCHIVE_READ_BACK_ALL,
    /* run.json read back, the trace rendered from memory, which trace.json keeps to the
     * nanosecond: a 2-million-event trace is not read twice (import) */
    ARCHIVE_READ_BACK_RUN_INFO,
} archive_read_back;

typedef struct archive_write_options {
    const char *dest;          /* the archive directory */
    int force;                 /* replace dest if it exists */
    archive_read_back read_back;
    archive_render_fn render;  /* NULL: no report */
    void *render_ctx;
} archive_write_options;

/* Writes t and r (counters.json when r's counter pass ran) as the archive o->dest.
 * EXIT_OK; or the writer's, reader's or renderer's EXIT_* code with its line in err,
 * EXIT_OUTPUT_EXISTS when dest appeared meanwhile (without force), and nothing left
 * behind: the staging folder is removed. */
int archive_write(const archive_write_options *o, const trace *t, const run_info *r, char *err, size_t errlen);

#endif
