/* Temporaries a command owns until it commits them — a render's staging folder, a
 * Chromium profile, a child's process group — removed however the command ends: on
 * SIGINT, SIGTERM or SIGHUP (cleanup_install's handler kills the registered process
 * groups, removes the registered folders with async-signal-safe calls only, says so in
 * one line and exits EXIT_INTERRUPTED), on out of memory (attn_oom, alloc.h), or by
 * the command itself. The renames of a commit run with those signals blocked
 * (cleanup_block), so no signal cuts a commit in half; SIGKILL still can, and the next
 * run repairs that (archive.c, report.c).
 *
 * Paths are kept as given (relative ones against the working directory, which no
 * command changes). The adds return EXIT_OK, or EXIT_IO when the table is full (or the path
 * too long): no line is written, as a signal handler shares the table. */
#ifndef ATTNPROF_CLEANUP_H
#define ATTNPROF_CLEANUP_H

#include <signal.h>
#include <sys/types.h>

#define CLEANUP_MAX 16

/* ---- what to remove ------------------------------------------------------- */

/* A folder (or file) to remove if the process is stopped before it forgets it. */
int cleanup_add_path(const char *path);
/* The path is committed (renamed into place) or already removed: no longer ours. */
void cleanup_forget_path(const char *path);
/* A child's process group, killed (SIGKILL) if the process is stopped. */
int cleanup_add_group(pid_t pgid);
void cleanup_forget_group(pid_t pgid);

/* ---- when ------------------------------------------------------------------ */

/* Handlers for SIGINT, SIGTERM and SIGHUP that remove what is registered and exit 130. */
void cleanup_install(void);
/* Kills the registered groups and removes the registered paths now (async-signal-safe). */
void cleanup_now(void);
/* Blocks SIGINT, SIGTERM and SIGHUP (the old mask into *old) for a critical section;
 * cleanup_unblock restores it, and a signal that came meanwhile is handled then. */
void cleanup_block(sigset_t *old);
void cleanup_unblock(const sigset_t *old);

/* One thread ends the process. Out of memory (attn_oom), a crash (main.c) and a stop
 * signal each claim the ending first: a thread that finds another thread's claim
 * waits (pause) for that thread's exit, so a figure thread that crashes in fontconfig
 * after a reader ran out of memory does not turn one "out of memory" line into a
 * crash report, nor the other way round. CLEANUP_ENDING_OURS: this thread ends it
 * (first claim); CLEANUP_ENDING_AGAIN: this thread had claimed it already (it failed
 * inside its own ending: exit at once). Async-signal-safe. */
enum { CLEANUP_ENDING_OURS, CLEANUP_ENDING_AGAIN };
int cleanup_claim_ending(void);

/* Removes a tree with async-signal-safe calls only (openat, getdents64, unlinkat),
 * never following a link, at most 32 levels deep. EXIT_OK, or EXIT_IO when something stayed. */
int cleanup_remove_tree(const char *path);

#endif
