/* Reading an archive directory back: run.json, then trace.json, with one-line
 * errors that say which file is missing or wrong. `report` and `compare` read
 * archives through it. */
#ifndef ATTNPROF_ARCHIVE_READ_H
#define ATTNPROF_ARCHIVE_READ_H

#include <stddef.h>

#include "counters_json.h"
#include "run_json.h"
#include "run_info.h"
#include "trace.h"

/* EXIT_OK, with t and r filled (trace_free(t) and counters_free(&r->counters) when
 * done; counters.json is read when the archive has one); EXIT_BAD_ARCHIVE with a
 * one-line reason in `err`, and nothing to free. */
int archive_read(const char *dir, trace *t, run_info *r, char *err, size_t errlen);

#endif
