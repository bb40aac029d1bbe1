/* The parts of attnprof sweep (sweep_run.h) and what they share: a task (one shape, or the
 * reference shape on one GPU), a child (the process running a task) and the sweep's context.
 *   sweep_run.c    the modes (local, --slurm, --collect, --resume, --task) and the plan
 *   sweep_child.c  one child: the task command's template, the folders and logs, the
 *                  spawn, the phase pipe and the outcome (archive moved in, status written)
 *   sweep_local.c  the local loop: the GPU list, one worker per GPU, the live line, signals
 *   sweep_slurm.c  the job array: sweep.sbatch, sbatch, and one array task
 * Every function returns an EXIT_* code unless it says otherwise; its error line is printed
 * (cli_fail) where it is found. */
#ifndef ATTNPROF_SWEEP_PARTS_H
#define ATTNPROF_SWEEP_PARTS_H

#include "cli.h"
#include "sweep_plan.h"

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct task {
    attn_shape shape;
    char name[64];       /* status and staging name: the shape, or replicate-gpu<G> */
    char final_rel[128]; /* shapes/<shape> or replicate/gpu<G> */
    double cost;         /* B·H·S²·D: the queue's order */
    int pinned;          /* replicate: only the worker of this GPU index runs it; -1 any */
    char variants[256];  /* the list after variants were left out; "": the plan's */
    int n_skipped;       /* variants left out after `run` refused the shape naming them */
    struct sweep_skip skipped[RUN_MAX_VARIANTS];
} task;

typedef struct child {
    pid_t pid;
    task *t;
    int ti;          /* index of t in the queue */
    const char *gpu; /* CUDA_VISIBLE_DEVICES, or NULL to inherit */
    double started;
    int progress_fd; /* read end of ATTNPROF_PROGRESS_FD: `run` writes "variant phase" lines; -1 none */
    char phase[64];  /* the last line read */
} child;

typedef struct sweep_ctx {
    const cli_options *o;
    char dir[PATH_MAX];
    char exe[PATH_MAX];
    sweep_plan plan;
    int slurm_task;         /* -1 locally */
    char slurm_job[32];
    int logs_fd;            /* DIR/logs, opened once without following a link; -1 until make_dirs */
} sweep_ctx;

/* ---- sweep_child.c ------------------------------------------------------------ */

/* SWEEP_RETRY: sweep_child_finish's answer when the task is to run again without a
 * variant that `run` refused. */
#define SWEEP_RETRY (-1)

double sweep_now_s(void);
/* DIR/rel/name (name NULL: DIR/rel). */
void sweep_path_of(const sweep_ctx *c, const char *rel, const char *name, char *out, size_t n);
/* 1 when dir holds a run.json and a trace.json. */
int sweep_archive_complete(const char *dir);
/* s in single quotes for sh, cut to n. */
void sweep_shell_quote(const char *s, char *out, size_t n);
/* The folders the sweep writes into (links refused: EXIT_REFUSED), DIR/logs opened. */
int sweep_make_dirs(sweep_ctx *c);
/* A log the sweep wrote, read back without following a link; NULL when it is not a
 * regular file of ours. */
FILE *sweep_read_log(const char *path);
/* Starts the child for t (index ti of the queue) on gpu (NULL: inherited), taking the
 * ceilings from ceilings_from ("": measure them). */
int sweep_child_spawn(const sweep_ctx *c, task *t, int ti, const char *gpu, const char *ceilings_from, child *ch);
/* The phase the child last reported on its pipe, into ch->phase; and the pipe closed. */
void sweep_child_read_phase(child *ch);
void sweep_child_close_phase(child *ch);
/* The child exited with wstatus: its archive moved into place, its status written. The
 * shape's exit code as recorded, or SWEEP_RETRY. */
int sweep_child_finish(const sweep_ctx *c, const child *ch, int wstatus);

/* ---- sweep_local.c -------------------------------------------------------------- */

/* How the sweep shows its progress on stderr: nothing (-q), one plain line per step that
 * matters (stderr is a file or a pipe: a Slurm job's log, a CI log), or a live line redrawn
 * in place (a terminal). */
typedef enum progress_mode { PROGRESS_NONE, PROGRESS_LINES, PROGRESS_LIVE } progress_mode;
progress_mode sweep_progress_for(const cli_options *o);
/* --gpus: the workers' CUDA_VISIBLE_DEVICES; their count, or -1 with err. */
int sweep_gpu_list(const char *spec, char gpus[][32], int max, char *err, size_t errlen);
/* Runs the tasks on n_workers workers (gpus[i], or NULL to inherit). EXIT_OK,
 * EXIT_VARIANT_FAILED (some shape failed), EXIT_INTERRUPTED or the code of a shape that
 * could not start; *last_code is the last shape's non-zero exit code (EXIT_OK if none). */
int sweep_run_tasks(const sweep_ctx *c, task *tasks, int n_tasks, char gpus[][32], int n_workers,
                    progress_mode progress, int *last_code);
/* The signal that stopped sweep_run_tasks; 0 when none did. */
int sweep_stop_signal(void);

/* ---- sweep_slurm.c --------------------------------------------------------------- */

int sweep_slurm_write_sbatch(const sweep_ctx *c);
int sweep_slurm_submit(sweep_ctx *c);
/* `attnprof sweep --task I DIR`: one array task, one shape. */
int sweep_slurm_task(sweep_ctx *c);

/* ---- sweep_run.c ------------------------------------------------------------------ */

void sweep_task_for(task *t, const attn_shape *s);
/* The task command this command line gives against the one DIR/sweep.json stores:
 * EXIT_OK when they are one, EXIT_REFUSED (said) otherwise. */
int sweep_same_task_command(const sweep_ctx *c, const char *given);

#endif
