/* attnprof sweep, the orchestration: GPU-free CLI code that runs each shape of a
 * sweep as a child process (`attnprof run`, or a --task-command template), one
 * worker per GPU taking shapes from one queue, or writes and submits a Slurm job
 * array whose tasks do the same, and then builds the sweep report (report/analysis/sweep.h, report/docs/sweep_doc.h).
 * It loads no CUDA library: GPUs are counted from /proc/driver/nvidia/gpus. */
#ifndef ATTNPROF_SWEEP_RUN_H
#define ATTNPROF_SWEEP_RUN_H

#include "cli.h"

/* Runs `attnprof sweep` as parsed (local sweep, --slurm, --collect or --task).
 * Returns the process's exit code; errors are one line on stderr. */
int sweep_run(const cli_options *o);

#endif
