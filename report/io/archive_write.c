/* archive_write: the one writer of an archive directory, for `run` and `import`. The
 * files go into a staging folder beside the destination (archive_begin), each written
 * through its own writer; what was written is read back by the readers `report` uses,
 * so a render never sees a field the archive does not hold; the render (a callback: the
 * documents sit above io/) writes its outputs into the same folder, and the folder is
 * renamed into place whole (archive_commit) or removed. */
#include "archive_write.h"

#include "archive.h"
#include "archive_read.h"
#include "counters.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>

/* trace.json, run.json and counters.json (when the counter pass ran) into tmp. */
static int write_files(const char *tmp, const trace *t, const run_info *r, char *err, size_t errlen)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/trace.json", tmp);
    int rc = trace_write_json(t, path, err, errlen);
    snprintf(path, sizeof path, "%s/run.json", tmp);
    if (rc == EXIT_OK)
        rc = run_info_write_json(r, path, err, errlen);
    snprintf(path, sizeof path, "%s/counters.json", tmp);
    if (rc == EXIT_OK && r->counters.meta.status != CTR_NOT_RUN)
        rc = counters_write_json(&r->counters, path, err, errlen);
    return rc;
}

/* What was written, read back as o->read_back says, then rendered. */
static int read_back_and_render(const archive_write_options *o, const char *tmp, const trace *t, char *err,
                                size_t errlen)
{
    run_info *back_info = calloc(1, sizeof *back_info);
    if (!back_info)
        return err_set(err, errlen, EXIT_NO_MEMORY, "out of memory reading the archive back");
    int rc;
    if (o->read_back == ARCHIVE_READ_BACK_ALL) {
        trace back;
        rc = archive_read(tmp, &back, back_info, err, errlen);
        if (rc == EXIT_OK) {
            rc = o->render ? o->render(tmp, &back, back_info, o->render_ctx, err, errlen) : EXIT_OK;
            counters_free(&back_info->counters);
            trace_free(&back);
        }
    } else {
        char path[4400];
        snprintf(path, sizeof path, "%s/run.json", tmp);
        rc = run_info_read_json(back_info, path, err, errlen);
        if (rc == EXIT_OK && o->render)
            rc = o->render(tmp, t, back_info, o->render_ctx, err, errlen);
        counters_free(&back_info->counters);
    }
    free(back_info);
    return rc;
}

int archive_write(const archive_write_options *o, const trace *t, const run_info *r, char *err, size_t errlen)
{
    char tmp[4200];
    if (archive_begin(o->dest, tmp, sizeof tmp, err, errlen) != 0)
        return EXIT_IO;
    int rc = write_files(tmp, t, r, err, errlen);
    if (rc == EXIT_OK)
        rc = read_back_and_render(o, tmp, t, err, errlen);
    if (rc == EXIT_OK && archive_commit(tmp, o->dest, o->force, err, errlen) != 0)
        rc = o->force ? EXIT_IO : EXIT_OUTPUT_EXISTS;
    if (rc != EXIT_OK)
        remove_tree(tmp);
    return rc;
}
