/* Folders attnprof makes to commit outputs (a render's staging folder, the old copies kept for a
 * roll-back, a new archive built beside its destination) and what a killed process left of them
 * (leftover.c). Such a folder gets a marker right after mkdir: its kind, the PID and its own
 * device and inode. A leftover is touched only when it proves to be one: a real directory (not a
 * link) owned by this user holding the marker that names it; a folder unpacked or copied from
 * elsewhere has another inode. Anything else named like one is left alone and named on stderr. */
#ifndef ATTNPROF_LEFTOVER_H
#define ATTNPROF_LEFTOVER_H

#include <stddef.h>

/* The marker's name inside a marked folder. */
#define LEFTOVER_MARKER ".made-by-attnprof"

/* Writes the marker into the existing real directory `folder`. EXIT_OK or EXIT_IO with `err`. */
int leftover_mark(const char *folder, const char *kind, char *err, size_t errlen);
/* mkdir(folder), then its marker. EXIT_OK or EXIT_IO with `err` (naming `dir`, where it is made). */
int leftover_make(const char *folder, const char *dir, const char *kind, char *err, size_t errlen);
/* Removes the marker of a folder that is committed (it becomes an output). */
void leftover_unmark(const char *folder);

typedef enum {
    LEFTOVER_OURS,     /* a real directory of this user, holding the marker that names it */
    LEFTOVER_EMPTY,    /* a real directory of this user holding no more than a marker that does not
                        * (a kill between mkdir and the marker): removing it loses nothing */
    LEFTOVER_NOT_OURS, /* anything else: `why` says what it is */
} leftover_proof;

/* Whether `path`, named as a leftover of `kind` of the dead process `pid`, proves to be one. */
leftover_proof leftover_prove(const char *path, const char *kind, long pid, char *why, size_t n);
/* Removes a proven folder, its marker last (a kill in between leaves it proving itself). */
void leftover_remove(const char *path);
/* One line on stderr: `path` is left alone, and why. */
void leftover_say_left_alone(const char *path, const char *why);

/* A small regular file read whole into buf (NUL-terminated): opened without following a link
 * and without blocking (input_open), refused when it is not a regular file or holds more than
 * n - 1 bytes. EXIT_OK; EXIT_BAD_ARCHIVE with `err` (what it is instead); *missing when there
 * is nothing of that name. */
int leftover_read_small(const char *path, char *buf, size_t n, int *missing, char *err, size_t errlen);

#endif
