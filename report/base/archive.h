/* The archive directory: built under a temporary name next to its destination and
 * renamed into place, so a crash never leaves a half-written archive. */
#ifndef ATTNPROF_ARCHIVE_H
#define ATTNPROF_ARCHIVE_H

#include <stddef.h>

/* Creates `<parent>/.<name>.tmp-<pid>` (and the parent) for `dest`, marked as attnprof's
 * (leftover.h); the path goes to tmp and is registered for removal if the process is stopped
 * (cleanup.h). First, what a killed commit of the same dest left is repaired when it proves
 * to be attnprof's: its old archive put back when dest is missing, its temporaries removed;
 * anything else of those names is left alone and named on stderr. EXIT_OK or EXIT_IO. */
int archive_begin(const char *dest, char *tmp, size_t tmplen, char *err, size_t errlen);
/* Renames tmp → dest; with `force`, an existing dest is replaced: swapped with tmp in one
 * rename (RENAME_EXCHANGE; moved aside, then in, where the file system lacks it), then
 * the old one removed. SIGINT/SIGTERM wait until it is done. EXIT_OK, EXIT_OUTPUT_EXISTS
 * (dest exists, no force) or EXIT_IO. */
int archive_commit(const char *tmp, const char *dest, int force, char *err, size_t errlen);
/* 1 when `out` is, holds, or lies inside `in` (after resolving links and "..", for paths
 * that need not exist yet); 0 when not; ATTN_NONE (err.h) when either cannot be resolved. */
int archive_paths_overlap(const char *out, const char *in);
/* Writes dir/name through a temporary file (NAME.tmp-PID) and a rename, so a reader
 * never sees a half-written file; EXIT_OK, or EXIT_IO with `err`. */
int archive_write_file(const char *dir, const char *name, const char *text, char *err, size_t errlen);
/* The PID of a directory entry named "<prefix><PID>" when that process is gone (when it is
 * this one too, with `self_is_gone`: a writer that holds the lock left it earlier); 0 for
 * another name or a live process. What a killed writer left is found with it. */
long archive_dead_owner(const char *entry, const char *prefix, int self_is_gone);
/* Removes a directory tree (used for the temporary one on failure). */
int remove_tree(const char *path);
int path_exists(const char *path);
/* "NVIDIA H200" → "h200": the GPU part of the default archive name. */
void gpu_slug(const char *gpu_name, char *out, size_t n);

#endif
