/* attnprof sweep's plan and outcomes as files (sweep_plan.c): which shapes, written to
 * DIR/sweep.json before anything runs, and each shape's outcome (DIR/status/<shape>.json,
 * written by whoever ran it: a local worker or a Slurm array task). The sweep's data
 * (sweep.h) reads them back beside the archives. */
#ifndef ATTNPROF_SWEEP_PLAN_H
#define ATTNPROF_SWEEP_PLAN_H

#include <stddef.h>

#include "attn_types.h"
#include "run_info.h"

#define SWEEP_MAX_SHAPES 256
#define SWEEP_MAX_LIST 64
#define SWEEP_MAX_GPUS 16
#define SWEEP_DEFAULT_TOKENS 32768
#define SWEEP_DEFAULT_HEADS 16
/* The largest sweep.json and status file read back (opened as input.h opens every input:
 * no link followed, a FIFO or a device refused before a byte is read). attnprof writes
 * about 25 KiB of sweep.json at SWEEP_MAX_SHAPES shapes and under 4 KiB of a status file. */
#define SWEEP_PLAN_MAX_BYTES ((int64_t)1 << 20)
#define SWEEP_STATUS_MAX_BYTES ((int64_t)64 << 10)

/* ---- sweep_plan.c: the plan ------------------------------------------------ */

typedef struct sweep_plan {
    int n_shapes;
    attn_shape shapes[SWEEP_MAX_SHAPES]; /* by D, then S */
    char variants[256];                  /* --variants as given; "": run's default list */
    int iters, warmup;                   /* 0: run's defaults */
    char task_command[1024];             /* child command template; "": `attnprof run` */
    char run_flags[128];                 /* run options passed on (--no-counters, --no-calibrate, --seed N, --cudnn-replan) */
    int replicate;                       /* every GPU also runs `reference` */
    attn_shape reference;
    int n_gpus;                          /* local workers; 0 under Slurm */
    char gpus[SWEEP_MAX_GPUS][32];       /* CUDA_VISIBLE_DEVICES of each worker */
    char slurm_job_id[32];               /* the array's job id once submitted; "" otherwise */
} sweep_plan;

/* A LIST option: "256,512,1024" or a geometric range "256:32768:x2" (also
 * "a:b:+k", arithmetic). Values are whole numbers in 1..max; at most
 * SWEEP_MAX_LIST of them, sorted and without repeats, their count in *count.
 * EXIT_OK, or EXIT_USAGE with "--<opt> …: expected …" in `err`. */
int sweep_parse_list(const char *opt, const char *s, int max, int *out, int *count, char *err, size_t errlen);

/* Fills p->shapes (and p->n_shapes) with every (S, D): B = batch, or B = tokens / S when
 * tokens > 0 (then every S must divide tokens). EXIT_OK, or EXIT_USAGE with `err`. */
int sweep_plan_shapes(sweep_plan *p, const int *seq, int n_seq, const int *dim, int n_dim, int batch, long tokens,
                      int heads, char *err, size_t errlen);

/* Crosses p->shapes with --kv-heads and --q-seq lists (n 0: the list not given, every
 * shape keeps kv_heads/q_seq 0): every planned (B, S, D) at every Hkv and every query count,
 * ordered by D, then Hkv, then q_seq, then S. A value equal to H or to S is stored as 0
 * (the same shape run plainly), so the names and archives of such shapes are those of a
 * sweep without the lists. EXIT_OK, or EXIT_USAGE with `err` when an Hkv does not divide
 * H, a query count exceeds an S, or the cross has more than SWEEP_MAX_SHAPES shapes. */
int sweep_plan_cross(sweep_plan *p, const int *kv_heads, int n_kv, const int *q_seq, int n_q, char *err,
                     size_t errlen);

/* "8x16x1024x64": a shape's folder name under DIR/shapes/; "-kv8" after it for 8 key/value
 * heads and "-q1" for one query (decode), each only when the shape has them. */
void sweep_shape_name(const attn_shape *s, char *out, size_t n);
/* The inverse; EXIT_OK, or EXIT_BAD_ARCHIVE when `name` is no shape name. */
int sweep_shape_parse(const char *name, attn_shape *s);
/* Work of one forward in FLOPs: causal attention, half of 4·B·H·S²·D. */
double sweep_flops(const attn_shape *s, int causal);

/* run_flags as sweep.json may hold them: space-separated --no-counters, --no-calibrate,
 * --cudnn-replan, --no-pdf and --seed N only. EXIT_OK, or EXIT_BAD_ARCHIVE with the first
 * other word in `bad`. */
int sweep_run_flags_valid(const char *flags, char *bad, size_t n);
/* "" or comma-separated names of [A-Za-z0-9_.-] none of which starts with '-': EXIT_OK;
 * anything else EXIT_BAD_ARCHIVE. */
int sweep_variant_list_valid(const char *list);

/* DIR/sweep.json, written through a temporary file and a rename. EXIT_OK or EXIT_IO. */
int sweep_plan_write(const sweep_plan *p, const char *dir, char *err, size_t errlen);
/* EXIT_OK with *found 1; EXIT_OK with *found 0 when DIR has no sweep.json (p is zeroed);
 * EXIT_BAD_ARCHIVE with `err` when it is corrupt or any field is outside what `attnprof
 * sweep` writes (types, ranges, the characters of names, run_flags beyond
 * sweep_run_flags_valid, a string that would be cut). The task command read is data to
 * compare with the command line's, never a command to run. */
int sweep_plan_read(sweep_plan *p, const char *dir, int *found, char *err, size_t errlen);

/* ---- sweep_plan.c: one shape's outcome ------------------------------------ */

typedef struct sweep_status {
    int exit_code;                /* the child's exit code; 128+N killed by signal N */
    char error[ATTN_ERR_LEN];     /* the child's last line on stderr when it failed */
    char gpu[32];                 /* CUDA_VISIBLE_DEVICES it ran with; "" inherited */
    double seconds;               /* wall time of the child */
    char slurm_job_id[32];        /* SLURM_ARRAY_JOB_ID, "" when run locally */
    int slurm_task;               /* SLURM_ARRAY_TASK_ID, -1 when run locally */
    char log[512];                /* the task's log, relative to DIR ("" locally) */
    /* Variants the sweep left out of this shape after `run` refused it naming them
     * (explicit --variants: exit 4 "variant X needs … GiB", exit 2 "variant X cannot
     * take …"); the shape was run again without them. */
    int n_skipped;
    struct sweep_skip {
        char variant[32];
        char reason[ATTN_ERR_LEN];
        double device_bytes; /* from "needs N GiB"; NAN otherwise */
    } skipped[RUN_MAX_VARIANTS];
} sweep_status;

/* "…variant naive needs 512.00 GiB of device memory…" or "…variant flash cannot
 * take …": the variant `run` names in a one-line refusal, and the bytes when given
 * (NAN otherwise). EXIT_OK, or EXIT_BAD_ARCHIVE when the line names no variant. */
int sweep_refused_variant(const char *error_line, char *variant, size_t n, double *bytes);

/* DIR/status/<name>.json, atomically. EXIT_OK or EXIT_IO. */
int sweep_status_write(const char *dir, const char *name, const sweep_status *s, char *err, size_t errlen);
/* EXIT_OK with *found 1; EXIT_OK with *found 0 when there is none; EXIT_BAD_ARCHIVE with
 * `err` when it is corrupt. */
int sweep_status_read(const char *dir, const char *name, sweep_status *s, int *found, char *err, size_t errlen);

#endif
