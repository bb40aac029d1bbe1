/* The archive directory: built under a temporary name next to its destination and
 * renamed into place, so a crash never leaves a half-written archive. */
#ifndef ATTNPROF_ARCHIVE_H
#define ATTNPROF_ARCHIVE_H

#include <stddef.h>

/* Creates `<parent>/.<name>.tmp-<pid>` (and the parent) for `dest`; the path goes to tmp. */
int archive_begin(const char *dest, char *tmp, size_t tmplen, char *err, size_t errlen);
/* Renames tmp → dest; with `force`, an existing dest is replaced (moved aside, then removed). */
int archive_commit(const char *tmp, const char *dest, int force, char *err, size_t errlen);
/* Removes a directory tree (used for the temporary one on failure). */
int remove_tree(const char *path);
int path_exists(const char *path);
/* "NVIDIA H200" → "h200": the GPU part of the default archive name. */
void gpu_slug(const char *gpu_name, char *out, size_t n);

#endif
