/* run.json read and written (in memory: run_info.h). */
#ifndef ATTNPROF_RUN_JSON_H
#define ATTNPROF_RUN_JSON_H

#include <stddef.h>

#include "run_info.h"

/* EXIT_OK, or EXIT_IO with one line (a number that must be finite is not; cannot write). */
int run_info_write_json(const run_info *r, const char *path, char *err, size_t errlen);
/* Reads run.json: EXIT_OK, or EXIT_BAD_ARCHIVE with one line naming the field (a wrong type,
 * out of bounds, a contradiction). An archive without "provenance" (older ones) reads as an
 * attnprof run unless it was imported, then as a PyTorch import (the only producer `import`
 * was made for then); seed and warm-up of an import read as not recorded. */
int run_info_read_json(run_info *r, const char *path, char *err, size_t errlen);

#endif
