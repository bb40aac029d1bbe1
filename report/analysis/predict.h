/* "Predict, then verify": each variant's prediction (run.json, declared by the variant)
 * against the counter pass (counters.json) and the ceilings measured in the same run.
 * Checks are data (an id, the numbers, a verdict); predict_report.c turns them into the
 * report's table and predict_findings() into findings. GPU-free. */
#ifndef ATTNPROF_PREDICT_H
#define ATTNPROF_PREDICT_H

#include "analysis.h"
#include "counters.h"

typedef enum pv_verdict {
    PV_INFO = 0, /* measured, nothing predicted to compare with */
    PV_OK,       /* ✔ within tolerance */
    PV_MISS,     /* ✘ the interesting line */
    PV_NA,       /* predicted, not measurable here (metric unavailable, no counters) */
    PV_INCONSISTENT, /* the measurement contradicts itself (a share of a roof above 100%) */
    PV_L2_SERVED,    /* DRAM bytes below the minimum of a class whose bytes fit in the L2: the
                      * earlier kernels of the forward left its operands there (predict_judge_dram) */
    PV_WITHIN_FLOOR, /* DRAM bytes within PV_DRAM_FLOOR_PER_KERNEL per kernel of the prediction,
                      * outside the tolerance: shown, not judged */
    PV_REPLAY_WRITES, /* DRAM bytes above the minimum only by writes the whole forward did not make:
                       * kernel replay's restore of memory, written back during the kernel; within
                       * tolerance with the class's writes capped at the forward's (aux: the capped
                       * bytes, aux2: the forward's writes) */
    PV_LIBRARY_MEMSET, /* operations per forward above the expected count by exactly the forward's
                        * Memsets: a library's workspace fill, which its heuristic issues at some
                        * shapes and not others (findings.c names the library), not the variant's */
} pv_verdict;

typedef enum pv_kind {
    PV_OPS = 0,  /* GPU operations per forward (trace) */
    PV_COUNT,    /* kernels of a class found by the counter pass */
    PV_DRAM,     /* DRAM bytes of a class */
    PV_L2,       /* L2 <-> SM bytes of a class */
    PV_FLOPS,    /* FLOPs of a class */
    PV_PIPE,     /* the pipe a class's math ran on */
    PV_REGIME,   /* memory- or compute-bound, against the measured ridge point */
} pv_kind;

/* Relative tolerances of the ✔. */
#define PV_TOL_DRAM 0.05
#define PV_TOL_L2 0.10
#define PV_TOL_FLOPS 0.10
/* A class's DRAM bytes within this much of its prediction, per kernel of the class, are not
 * judged: that much is a kernel's own traffic, not its data's. A kernel that moves no data of
 * its own still reads 2.5-5.9 KiB (its code, parameters and constant banks), and the DRAM
 * writes counted during it include the L2's write-backs of earlier kernels' data (the H200
 * fixtures' counter passes, 2026-12-03/04: `attnprof_math_where_zero_fill` 2.8 KiB; the decode
 * masked fill, which masks nothing at one query, 12.5-15.8 KiB against 4 KiB predicted). */
#define PV_DRAM_FLOOR_PER_KERNEL (64.0 * 1024.0)
/* A share of a measured roof above 1 + PV_TOL_ROOF is a measurement inconsistency, not a
 * result: no tolerance, the roof and the counters come from the same run. */
#define PV_TOL_ROOF 0.0

typedef struct pv_check {
    pv_kind kind;
    char cls[48];        /* the class label, or "forward" */
    double predicted;    /* bytes, FLOPs, count; for PV_PIPE the attn_pipe; PV_REGIME 1 = compute-bound */
    double measured;     /* same unit; PV_PIPE: tensor instructions; PV_REGIME 1 = compute-bound */
    double aux;          /* PV_PIPE: FP32 FLOPs; PV_REGIME: arithmetic intensity predicted */
    double aux2;         /* PV_REGIME: ridge point; PV_PIPE: HGMMA instructions */
    /* PV_REGIME: achieved share of the roofs, one scope for numerator and denominator:
     * the kernels' FLOPs and the kernels' DRAM bytes over the kernels' time (the forward's
     * Memcpy is no kernel: its bytes are left out, as its time is). */
    double frac_compute, frac_dram;
    double scope_dram, scope_flops, scope_seconds; /* PV_REGIME: the kernels' sums behind those shares */
    double roof_tflops, roof_tbps;                  /* PV_REGIME: the roofs they are shares of */
    pv_verdict verdict;
} pv_check;

#define PV_MAX_CHECKS 48
typedef struct pv_variant {
    const variant_result *result;
    int n;
    pv_check c[PV_MAX_CHECKS];
} pv_variant;

/* Aggregate of some of a variant's counter ranges. */
typedef struct pv_sum {
    int n;
    double dram, dram_write, l2, fp32_flops, tensor_flops, tensor_inst, gmma_inst, seconds;
} pv_sum;

/* 1 when the archive has something to verify (a prediction of any variant, or counters). */
int predict_available(const analysis *a);
/* The checks of variant a->v[vi]. */
void predict_variant(const analysis *a, int vi, pv_variant *out);
/* The counter ranges of a variant (kind "kernel"); those of class c only when c != NULL. */
pv_sum predict_sum_kernels(const counters_set *cs, const char *variant, const pred_class *c);
/* The variant's "forward" range, or NULL. */
const counter_range *predict_forward_range(const counters_set *cs, const char *variant);
/* The verdict of a measured value against a prediction with relative tolerance. */
pv_verdict predict_judge(double predicted, double measured, double tol);
/* predict_judge for the minimum DRAM bytes of a class of `kernels` kernels on a GPU of l2_bytes
 * of L2 (0: unknown): PV_WITHIN_FLOOR within PV_DRAM_FLOOR_PER_KERNEL per kernel; PV_L2_SERVED when the measured bytes are below the
 * minimum and the class's predicted bytes fit in the L2 (its operands, written or read by
 * the forward's earlier kernels, can still be there: fewer DRAM bytes than the minimum is
 * then no miss); else predict_judge with PV_TOL_DRAM. */
pv_verdict predict_judge_dram(double predicted, double measured, double l2_bytes, int kernels);
/* Adds counter-derived findings (mismatches first) to a->v[*].findings: the walk of
 * the finding table's counter rows. Needs counters. */
/* Defined beside the derive column (findings.c), which calls predict_derive. */
void predict_findings(analysis *a);
/* The finding table's derive of those rows (finding.h) for variant vi. */
int predict_derive(analysis *a, int vi);
const char *pv_kind_id(pv_kind k);

#endif
