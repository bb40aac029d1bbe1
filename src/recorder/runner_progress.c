/* What the batch says while it runs: the live line on a terminal ("[2/6] flash forward 12/40"),
 * one plain line per step that matters when stderr is a log, and the phase a sweep reads from
 * the pipe it passes in ATTNPROF_PROGRESS_FD. Host time for the steps' durations. */
#include "runner_steps.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double host_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A sweep that runs this batch as its child reads the phase from the pipe it passes
 * in ATTNPROF_PROGRESS_FD ("flash forward\n"), for its own progress line. */
void progress(const run_plan *cfg, int vi, const char *name, const char *what, int j, int n)
{
    static int fd = -2;
    if (fd == -2)
        fd = getenv("ATTNPROF_PROGRESS_FD") ? atoi(getenv("ATTNPROF_PROGRESS_FD")) : -1;
    if (fd >= 0 && j == 1) {
        char line[96];
        int len = snprintf(line, sizeof line, "%s %s\n", name, what);
        if (write(fd, line, (size_t)len) < 0 && errno != EAGAIN)
            fd = -1;
    }
    if (cfg->c.quiet || !isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "\r\033[K[%d/%d] %-14s %s %d/%d", vi + 1, cfg->n_variants, name, what, j, n);
    fflush(stderr);
}

/* A step that matters, as one plain line when stderr is no terminal (a Slurm job's or a CI
 * log, a sweep's per-shape log): no carriage return, no escape sequence. On a terminal the
 * live line above says the same. */
void step_line(const run_plan *cfg, const char *fmt, ...)
{
    if (cfg->c.quiet || isatty(STDERR_FILENO))
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("attnprof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

/* The live line cleared, before a line of its own or at the end of the batch. */
void clear_live_line(const run_plan *cfg)
{
    if (!cfg->c.quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
}
