/* Distinct exit codes, so scripts can tell what went wrong.
 *
 * They are also the status every function of report/ returns: EXIT_OK (0) on success,
 * otherwise the code the command exits with, its one-line reason written with err_set
 * (err.h). This is the only place the convention is stated. */
#ifndef ATTNPROF_EXIT_CODES_H
#define ATTNPROF_EXIT_CODES_H
enum {
    EXIT_OK = 0,
    EXIT_VARIANT_FAILED = 1, /* the run completed, but a variant failed (error or wrong result) */
    EXIT_USAGE = 2,          /* bad command line */
    EXIT_NO_DEVICE = 3,      /* no CUDA device / driver */
    EXIT_DEVICE_MEMORY = 4,  /* a variant needs more device memory than is free */
    EXIT_OUTPUT_EXISTS = 5,  /* -o DIR exists and --force was not given */
    EXIT_BAD_ARCHIVE = 6,    /* missing or corrupt trace.json / run.json */
    EXIT_IO = 7,             /* cannot write the output, or a CUDA/CUPTI failure outside any variant */
    EXIT_REFUSED = 8,        /* a sweep directory asks for what its command line did not (a stored --task-command
                              * that differs), or holds a symbolic link where attnprof writes */
    EXIT_NO_MEMORY = 9,      /* out of host memory: one line, temporaries removed */
    EXIT_L2_MISMATCH = 10,   /* compare: the runs measured different L2 states (cold, warm) and
                              * --allow-l2-mismatch was not given; nothing written */
    EXIT_VERDICT_GATE = 11,  /* compare --fail-on: a variant's CUDA-time verdict is in the list
                              * (the outputs were written) */
    EXIT_SHAPE_CONFLICT = 12, /* import: a declared --shape contradicts the shapes the trace recorded */
    EXIT_NOTHING_RECORDED = 13, /* record: the program ran no CUDA, or no GPU work, before it exited */
    EXIT_NOTHING_GATED = 14, /* compare --fail-on: no verdict it could gate was compared (no shared variant,
                              * too few forwards or steps); one line names what was not and why
                              * (the outputs were written) */
    EXIT_INTERRUPTED = 130,  /* SIGINT/SIGTERM: stopped, only complete archives left (128 + SIGINT, as shells say) */
};
#endif
