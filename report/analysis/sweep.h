/* attnprof sweep, the GPU-free half: the plan (which shapes, written to
 * DIR/sweep.json before anything runs), each shape's outcome (DIR/status/<shape>.json,
 * written by whoever ran it: a local worker or a Slurm array task), and the sweep's
 * data read back from DIR/shapes/<B>x<H>x<S>x<D>/ archives — per variant and shape
 * the CUDA time, TFLOP/s, device memory and GPU operations per forward — with the
 * findings derived from it (crossovers, memory walls, scaling exponents, best
 * throughput, GPUs that disagree). The plan and the status files are io/sweep_plan.h;
 * the writers (docs/sweep_doc.h) and the figures (figures/figures.h, figures/sweep_*.c)
 * read the data; nothing here formats a document. */
#ifndef ATTNPROF_SWEEP_H
#define ATTNPROF_SWEEP_H

#include <stddef.h>

#include "attn_types.h"
#include "analysis.h"
#include "bootstrap.h"
#include "run_info.h"
#include "sweep_plan.h"

#define SWEEP_MAX_FINDINGS 160

/* ---- sweep.c: the data ---------------------------------------------------- */

typedef enum sweep_point_state {
    SWEEP_OK = 0,
    SWEEP_SKIPPED,     /* run.json says skipped: the variant cannot take the shape */
    SWEEP_UNAVAILABLE, /* cannot run on this machine (library, GPU) */
    SWEEP_FAILED,      /* the variant failed (error or wrong result) */
    SWEEP_NOT_RUN,     /* the shape has no archive, or the variant is not in it */
} sweep_point_state;

/* One variant at one shape. */
typedef struct sweep_point {
    sweep_point_state state;
    char reason[ATTN_ERR_LEN];   /* run.json's error, or the shape's failure */
    double us, us_min, us_max;   /* CUDA time per forward: median, min, max */
    double tflops;               /* at the median */
    double kv_gbps;              /* K and V bytes (B·Hkv·S·D·2 each, bf16) per second at the median, in GB/s:
                                  * what a decode step must read at least */
    int ops, kernels, memcpys, memsets; /* GPU operations per forward (medians) */
    double device_bytes;         /* NAN: not recorded */
    double *samples;             /* per-forward CUDA µs (n_samples), for the GPU check */
    /* sweep --backward: the backward's CUDA time per backward (median over its attn_bwd ranges) and
     * its TFLOP/s at 2.5 times the forward's FLOPs (the FlashAttention papers' convention); NAN
     * where none was recorded. bwd_status: run.json's (VARIANT_SKIPPED with bwd_reason). */
    double bwd_us, bwd_tflops;
    int bwd_recorded;
    variant_status bwd_status;
    char bwd_reason[ATTN_ERR_LEN];
    int n_samples;
} sweep_point;

typedef enum sweep_shape_state {
    SHAPE_COMPLETE = 0, /* archive read */
    SHAPE_FAILED,       /* the child ran and failed: status has its exit code and error */
    SHAPE_MISSING,      /* planned, no archive, no status (not run yet, or the task died) */
    SHAPE_BAD_ARCHIVE,  /* an archive that does not read */
} sweep_shape_state;

/* The shapes one curve runs through: one head dim D, one key/value head count and one
 * query count (0: as many as H / as S, as attn_shape stores them), S varying. A sweep
 * without --kv-heads and --q-seq has one family per D; every table, panel and per-curve
 * finding is per family. */
typedef struct sweep_family {
    int dim, kv_heads, q_seq;
} sweep_family;

typedef struct sweep_shape {
    attn_shape shape;
    char name[64];
    sweep_shape_state state;
    int have_status;
    sweep_status status;
    int status_rc;               /* sweep_status_read's answer, and its error */
    char status_err[512];
    char error[ATTN_ERR_LEN];    /* SHAPE_BAD_ARCHIVE: why */
    char gpu_uuid[48], visible_devices[64];
    double flops;
    sweep_point *p;              /* [sweep_data.n_variants] */
} sweep_shape;

/* A sweep's finding is the one finding shape (finding.h): its kind (FK_SWEEP_*), its
 * subject (the variant), other (the variant or GPU it is set against), its numbers
 * ("seq", "seq2", "dim", "ratio", …) and its sentence, plain text. */
typedef finding sweep_finding;

/* The reference shape as run on one GPU (DIR/replicate/gpu<N>/). */
typedef struct sweep_replica {
    char gpu[64];
    sweep_point *p; /* [n_variants] */
} sweep_replica;

typedef struct sweep_data {
    char dir[1024];
    int have_plan;
    sweep_plan plan;
    char gpu_name[128];
    double gpu_bytes;           /* total memory of the GPU (first complete archive) */
    double peak_tflops;         /* dense BF16 tensor-core peak at the recorded clock; NAN: unknown GPU */
    int peak_at_measured_clock; /* that clock is the median SM clock of the forwards' NVML samples,
                                 * else the device's maximum clock */
    double gemm_tflops;         /* cuBLAS bf16 GEMM ceiling measured by the runs (--calibrate),
                                 * median over the shapes; NAN: not measured */
    double roof_tflops;         /* the roof the figures and findings use: gemm_tflops, else peak_tflops */
    double copy_tbps;           /* cudaMemcpy DtoD (read + write) ceiling measured by the runs, median over
                                 * the shapes, in TB/s; NAN: not measured */
    const char *roof_name;      /* "measured cuBLAS bf16 GEMM ceiling" or "dense BF16 tensor peak" */
    char cudnn[16];
    int iters;
    int n_variants;
    char variants[RUN_MAX_VARIANTS][32]; /* series order, as the archives list them */
    int backward;               /* some shape's archive recorded backwards (sweep --backward) */
    int n_shapes;
    sweep_shape *shapes;        /* by D, then S, then B */
    int n_dims;
    int dims[SWEEP_MAX_LIST];
    int n_families;             /* in shape order; sweep_list_families */
    sweep_family families[SWEEP_MAX_SHAPES];
    int n_complete, n_failed, n_missing, n_bad;
    int n_replicas;
    sweep_replica replicas[SWEEP_MAX_GPUS];
    attn_shape reference;
    int n_findings;
    sweep_finding findings[SWEEP_MAX_FINDINGS];
} sweep_data;

/* Reads DIR/sweep.json (if any), every archive under DIR/shapes/ and
 * DIR/replicate/, and every status file, then derives the findings. Shapes
 * planned but absent are SHAPE_MISSING; a bad archive is listed, not fatal.
 * Returns EXIT_OK, or EXIT_BAD_ARCHIVE when DIR holds no sweep at all.
 * `threads` > 1 reads archives in parallel. sweep_free releases it. */
int sweep_load(sweep_data *m, const char *dir, int threads, char *err, size_t errlen);
void sweep_free(sweep_data *m);
/* (Re)derives m->findings from the shapes and replicas, in rank order (finding.h:
 * every sweep finding is info, so the finding table's order: crossovers, memory walls,
 * best throughput, GPU checks, then the fits and the operation counts);
 * sweep_findings.c. */
void sweep_derive(sweep_data *m);

/* m->families from m->shapes (sweep_load and sweep_derive call it). */
void sweep_list_families(sweep_data *m);
/* 1 when s belongs to family f. */
int sweep_in_family(const attn_shape *s, const sweep_family *f);
/* "D = 128", or with the family's K/V heads and queries "D = 128, Hkv = 8, 1 query": how
 * headings, panels and sentences name it. */
void sweep_family_label(const sweep_family *f, char *out, size_t n);
/* 1 when some family has fewer queries than keys: the sweep draws decode curves. */
int sweep_has_decode(const sweep_data *m);

/* Pure helpers, tested on synthetic data. */
/* Dense BF16 tensor-core FLOPs per clock per SM times SMs times the recorded clock, in
 * TFLOP/s: 4096 FLOP/clk/SM on sm_90 (H100/H200), 2048 on sm_80 (A100); NAN otherwise. */
double sweep_peak_tflops(int major, int minor, int sm_count, int clock_khz);
/* Whether all shapes share B·S (the tokens rule): the common B·S, or 0. */
long sweep_common_tokens(const sweep_data *m);
typedef struct sweep_fit {
    double k, c, r2; /* log t = c + k log S; R² of that line */
    int n;
} sweep_fit;
/* Least squares in log-log over the n points (all > 0); 0, or ATTN_NONE with fewer than 3 points. */
int sweep_fit_power(const double *s, const double *t, int n, sweep_fit *f);
/* a and b measured at the same ascending s. Returns the index i of the smallest S
 * such that a is faster than b by at least min_effect at every j >= i (at least two
 * points), and not at i-1; ATTN_NONE when there is no such crossover (including a faster
 * everywhere). */
int sweep_crossover(const double *a, const double *b, int n, double min_effect);

#endif
