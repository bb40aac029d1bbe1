/* attnprof compare: two or more archived runs side by side, with no GPU. The
 * model is built from each archive's trace.json and run.json exactly as `report`
 * builds its analysis; the writers (docs/compare_doc.h) and the figures
 * (figures/figures.h, figures/compare_*.c) only read it.
 *
 *   metadata     one row per field (GPU, clocks, driver, libraries, shape...),
 *                the fields that differ marked and named in one sentence;
 *   summary      per variant and archive: CUDA time, CPU time and GPU operations
 *                per forward, each non-baseline archive's ratio to the baseline
 *                with a seeded 95% bootstrap interval and a verdict;
 *   kernel diff  per variant: kernels renamed, operations added or removed,
 *                per-kernel time ratios, registers/shared memory/occupancy that
 *                changed, findings present in one archive and not the other. */
#ifndef ATTNPROF_COMPARE_H
#define ATTNPROF_COMPARE_H

#include <limits.h>
#include <stddef.h>

#include "analysis.h"
#include "bootstrap.h"
#include "model_roles.h"
#include "op_role.h"

#define COMPARE_MAX_ARCHIVES 8
/* Run-to-run noise floors. The bootstrap interval of a ratio of medians holds
 * the spread of the forwards of one run only; two runs of the same batch also
 * differ by a drift the forwards of either cannot show. A ratio r is a
 * difference only when its whole 95% interval lies beyond the floor f, outside
 * [1/(1+f), 1+f] (compare_ratio_of).
 *
 * CUDA time (--min-effect, this default): 2%. Measured on the H200 (bench/
 * RESULTS.md, "compare: run-to-run noise floors", 2026-12-01) over the runs of
 * one batch recorded in one device run on 2026-11-30 (h200-cudnn919-a and -b:
 * same binary, flags, seed, GPU, driver and libraries, 4 s apart; and
 * h200-cudnn914 for the five variants that make no cuDNN call): the medians
 * differ by at most 1.4% (cudnn, a vs b), whose interval excludes 1. */
#define COMPARE_DEFAULT_MIN_EFFECT 0.02
/* CPU time (host time of the forward call under CUPTI): 90%. Over the same runs
 * the medians differ by up to 1.87× (math: 124.8 µs in h200-cudnn914, 233.2 µs
 * in h200-cudnn919-a) and by 1.51× between a and b alone (naive_inplace 48.0 vs
 * 72.6 µs, efficient 10.4 vs 6.9 µs); 1.87 rounded up to 1.9 is the floor. The
 * archives carry one batch each, no replicates to measure it from. */
#define COMPARE_CPU_NOISE_FLOOR 0.90

/* Replicates: the floor a run's own passes may set, at most 10%. A between-pass
 * spread is the drift of batches of one process; above 10% it says the batch drifted more than
 * any floor can absorb, and an unbounded floor let one noisy pass hide a 2x regression (20x in
 * that pass) as "same". With three passes or more, a pass whose median lies more than this cap
 * from the median of the passes' medians disagrees with the others: it is an outlier, reported,
 * and not part of the spread (two passes cannot say which one disagrees: the cap alone). */
#define COMPARE_REPLICATE_FLOOR_CAP 0.10

/* A verdict needs this many forwards a side, as a model trace needs
 * COMPARE_MIN_STEPS steps: one forward a side gives a [1.03–1.03] interval from a single
 * resample value, a verdict from nothing. Below it only the ratio of the medians is given,
 * "no verdict (n forwards)", and --fail-on never gates it. */
#define COMPARE_MIN_FORWARDS 5

/* --pair A=B[,C=D]: a model trace of the baseline (A) set against one of another run (B)
 * whatever their names (compare_traces.c). */
#define COMPARE_MAX_PAIRS 8
typedef struct compare_pair_name {
    char base[32], other[32];  /* variant names (run.json's are at most 31 bytes) */
} compare_pair_name;

typedef struct compare_options {
    int baseline;          /* index into the inputs */
    int allow_shape_mismatch;
    double min_effect;     /* fraction, e.g. 0.02 */
    unsigned formats;      /* FIG_* */
    int log_axis;
    int figure_size;       /* FIG_SIZE_*: also compare-speedup-<size> for a paper */
    int allow_l2_mismatch; /* compare runs that measured different L2 states */
    compare_pair_name pair[COMPARE_MAX_PAIRS]; /* --pair */
    int n_pair;
} compare_options;

typedef struct compare_archive {
    char dir[PATH_MAX];
    char label[64];        /* the directory's base name, made unique */
    trace t;
    run_info r;
    analysis a;
    double flops;          /* per forward, from the shape (causal: half of 4·B·H·S²·D) */
} compare_archive;

typedef enum compare_verdict {
    VERDICT_NONE = 0,      /* nothing to compare (not run, failed, baseline itself) */
    VERDICT_SAME,          /* the whole interval within the noise floor */
    VERDICT_FASTER,        /* the whole interval beyond it, faster */
    VERDICT_SLOWER,
    VERDICT_AMBIGUOUS,     /* the interval straddles the floor: noise too large to say */
} compare_verdict;

typedef struct compare_ratio {
    ratio_ci ci;           /* value / baseline value */
    compare_verdict verdict;
    int too_few;           /* > 0: the smaller side's samples, below COMPARE_MIN_FORWARDS: the ratio of
                            * the medians alone, no interval, no verdict */
} compare_ratio;

/* One variant in one archive. */
typedef struct compare_cell {
    const variant_analysis *va; /* NULL: the archive did not run this variant */
    const char *state;          /* "ok", "FAILED", "unavailable", "not run" */
    const char *reason;         /* run.json's error, "" if none */
    double *metric;             /* per forward: CUDA µs, or TFLOP/s in throughput mode */
    double *cpu;                /* per forward: CPU µs */
    double *ops;                /* per forward: GPU operations */
    int n;                      /* forwards */
    stats metric_stats, cpu_stats, ops_stats;
    compare_ratio metric_ratio, cpu_ratio, ops_ratio; /* against the baseline's cell */
    /* Replicates: the passes its forwards came from (0: not recorded) and the
     * relative range (max ÷ min − 1) of its per-pass medians; NAN below 2 passes. */
    int passes;
    double pass_spread_metric, pass_spread_cpu;
    /* The floors its metric and CPU verdicts were judged against, and 1 when they are the
     * between-pass spread (both runs hold replicates) rather than the documented floors. */
    double metric_floor, cpu_floor;
    int replicate_floor;
    /* The rule of COMPARE_REPLICATE_FLOOR_CAP on the metric's passes: the passes set apart as
     * outliers (bit p: pass p), and the spread before the cap (above it: the floor is the cap). */
    unsigned outlier_passes;
    double pass_spread_metric_raw;
} compare_cell;

typedef enum kernel_change {
    KERNEL_SAME = 0,       /* same role and name (copies, memsets: same direction and bytes) in both */
    KERNEL_RENAMED,        /* another kernel in the same role (another cuDNN knob, PyTorch's for ours),
                              or a copy/memset of the same direction with other bytes */
    KERNEL_ADDED,          /* only in the other archive: no operation of its role left in the baseline */
    KERNEL_REMOVED,        /* only in the baseline */
} kernel_change;

/* One GPU operation of a variant's forward (kind, role and name; copies and
 * memsets also by direction and bytes), summarised over all its forwards. */
typedef struct kernel_summary {
    const gpu_op *op;      /* a representative record (first occurrence) */
    op_class cls;
    op_role role;          /* in the forward (op_role.h): operations are paired only within a role */
    double per_forward;    /* occurrences per forward */
    double median_us;      /* median duration of one occurrence */
    int registers, smem;   /* per thread / per block (static + dynamic) */
    double occupancy;      /* theoretical, 0..1; NAN for copies and memsets */
    int order;             /* position of the first occurrence in its forward */
    double *samples;       /* every occurrence's duration, µs */
    int n_samples;
} kernel_summary;

typedef struct kernel_row {
    kernel_change change;
    const kernel_summary *base, *other; /* NULL on the side that lacks it */
    compare_ratio time;    /* other / base median duration with its interval; VERDICT_NONE unless both */
    int changed_resources; /* registers, shared memory or occupancy differ */
    int notable;           /* renamed/added/removed, a significant time change, other resources or counts */
} kernel_row;

/* A finding of one side whose facts the other side does not record (an import
 * has no expected operation count, no setup phases, no output check): it is
 * neither "only in" one run nor shared, it cannot be tested on the other. */
typedef struct finding_gap {
    const char *text;      /* the finding */
    const char *missing;   /* "the expected operation count", … */
} finding_gap;

typedef struct kernel_diff {
    kernel_row *rows;
    int n;
    /* findings of one side only: no finding of the other side has the same id */
    const char **only_base, **only_other;
    int n_only_base, n_only_other;
    finding_gap *gap_base, *gap_other; /* one side's findings the other cannot test */
    int n_gap_base, n_gap_other;
} kernel_diff;

/* The time a variant's forward spends in one role: the like-with-like measure
 * when two runs do a step with different kernels or a different number of them. */
typedef struct role_time {
    double *us;            /* per forward: the summed durations of the role's operations, µs */
    int n;                 /* forwards; 0: no operation of this role in any forward */
    double ops;            /* median number of the role's operations per forward */
    stats st;              /* of us */
    compare_ratio ratio;   /* against the baseline's; VERDICT_NONE when either side lacks the role */
} role_time;

/* run --backward: a variant's recorded backwards in one archive (its attn_bwd ranges), CUDA µs
 * per backward (its GPU operations' durations summed), and the ratio against the baseline's with
 * the CUDA-time floor (fewer than COMPARE_MIN_FORWARDS backwards a side: the ratio of the medians,
 * no verdict). n 0: the archive recorded no backward of the variant. */
typedef struct compare_backward {
    double *us;
    int n;
    stats st;
    compare_ratio ratio;
} compare_backward;

typedef struct compare_variant {
    char name[32];
    compare_backward bwd[COMPARE_MAX_ARCHIVES];
    role_time roles[COMPARE_MAX_ARCHIVES][ROLE_COUNT];
    compare_cell cell[COMPARE_MAX_ARCHIVES];
    kernel_summary *kernels[COMPARE_MAX_ARCHIVES];
    int n_kernels[COMPARE_MAX_ARCHIVES];
    kernel_diff diff[COMPARE_MAX_ARCHIVES]; /* against the baseline; empty for the baseline */
} compare_variant;

#define COMPARE_MAX_FIELDS 24
typedef struct compare_field {
    const char *name;
    char value[COMPARE_MAX_ARCHIVES][160];
    int differs;           /* two runs that record it hold different values */
    int unrecorded;        /* some run does not record it ("not recorded"): never a difference */
    int in_sentence;       /* named in the "what differs" sentence (the date is not) */
} compare_field;

/* ---- model traces (compare_traces.c) ----------------------------------------------
 * Imported model traces (model_is_step_trace: ProfilerStep#N steps, CPU op chains) set
 * against the baseline's, with the steps as the samples: each step's CUDA time, then role
 * by role (phase × model role, and each phase's attention roles together), then layer by
 * layer. Pairing, for each run against the baseline: traces of the same name; else, when
 * each of the two runs holds exactly one model trace, those two. A trace left unpaired is
 * listed, never dropped. */

/* A verdict needs this many steps in each run: below it the bootstrap of a median has too
 * few distinct resamples to bound it (two steps give three medians), so only the ratio of
 * the medians is given, with no interval and no verdict. */
#define COMPARE_MIN_STEPS 5

typedef struct trace_role_row {
    model_phase phase;
    model_role role;
    int attention_total;       /* 1: the phase's attention roles summed (eager's parts against one fused op) */
    int present[2];            /* the role ran in some step of the side ([0] the baseline's trace) */
    stats st[2];               /* µs per step over the side's steps (0 in a step without it) */
    double ops[2], share[2];   /* medians over steps: ops per step, fraction of the step's CUDA time */
    char impl[2][96];
    compare_ratio ratio;       /* [1] / [0]: verdict only with COMPARE_MIN_STEPS steps a side; ci.ratio alone below */
} trace_role_row;

typedef struct trace_layer_row {
    stats st[2];               /* µs per step of the layer, over the steps with layer times */
    double attn_us[2];         /* median attention µs in the layer */
    compare_ratio ratio;
} trace_layer_row;

#define TRACE_MAX_ROWS (MPHASE_COUNT * (MROLE_COUNT + 1))

typedef struct trace_pair {
    int archive;               /* the run set against the baseline (index into compare_data.in) */
    const variant_analysis *va[2]; /* [0] the baseline's trace, [1] the run's */
    int by_name;               /* 1: the same name; 0: the one model trace of each run, or --pair */
    int by_option;             /* 1: named by --pair */
    int verdicts;              /* both sides hold COMPARE_MIN_STEPS steps or more */
    stats step[2];             /* CUDA µs per step */
    compare_ratio step_ratio;
    double attn_share[2];      /* attention's share of the step, all phases (median) */
    const char *backend[2];    /* the fused attention's backend, or NULL */
    int eager_blocks[2];
    trace_role_row rows[TRACE_MAX_ROWS];
    int n_rows;
    int n_layers[2], layer_period[2], layer_steps[2];
    int layers_paired;         /* same count (≥ 2) and period, and steps with layer times on both sides */
    trace_layer_row layers[MODEL_MAX_LAYERS];
    int layer_verdicts;        /* COMPARE_MIN_STEPS steps with layer times on both sides */
    const finding *only[2][MAX_FINDINGS]; /* finding ids of one side only (the first of each id) */
    /* The recorded attention inputs that differ between the two traces ("Hkv 4 vs 8, D 64 vs 128,
     * mask none vs bool [2,1,1024,1024], causal vs not causal, backend cuDNN vs flash, compiled vs
     * not compiled"); "" when none does or a side records none. Every verdict of the pair is
     * across these: the writers set it beside each verdict cell. */
    char inputs_differ[480];
    int n_only[2];
} trace_pair;

typedef struct trace_unpaired {
    int archive;               /* the run that holds it */
    int against;               /* the run it found no partner in */
    const variant_analysis *va;
} trace_unpaired;

typedef struct compare_traces {
    int n_model[COMPARE_MAX_ARCHIVES]; /* model traces per run */
    int any;                   /* some run holds a model trace */
    trace_pair *pairs;
    int n_pairs;
    trace_unpaired *unpaired;
    int n_unpaired;
} compare_traces;

typedef struct compare_data {
    int n;
    compare_archive *in[COMPARE_MAX_ARCHIVES];
    int baseline;
    int throughput;        /* shapes differ: TFLOP/s compared instead of time */
    int backward;          /* some archive recorded backwards (run --backward) */
    double min_effect;     /* CUDA time's (and kernels') noise floor, fraction */
    double cpu_floor;      /* CPU time's: the larger of min_effect and COMPARE_CPU_NOISE_FLOOR */
    compare_field fields[COMPARE_MAX_FIELDS];
    int n_fields;
    char differs_sentence[1024];
    compare_variant *variants; /* union of the archives' variants, series order */
    int n_variants;
    compare_traces traces;     /* model traces, step by step (compare_traces.c) */
} compare_data;

/* Reads DIR/trace.json and DIR/run.json and analyses them. Returns EXIT_OK or
 * EXIT_BAD_ARCHIVE with a one-line reason. */
int compare_load(compare_archive *ar, const char *dir, char *err, size_t errlen);
/* The analysis of an archive already read into ar->t and ar->r (ar->dir set by the
 * caller; an import in memory, say). EXIT_OK, or EXIT_BAD_ARCHIVE (ar->t freed). */
int compare_analyse(compare_archive *ar, char *err, size_t errlen);
void compare_archive_free(compare_archive *ar);

/* Builds the comparison's data over loaded archives (labels are made unique here). Returns
 * EXIT_OK; EXIT_USAGE when shapes or dtypes differ and the options do not allow
 * it, or the baseline index is out of range. */
int compare_build(compare_data *m, compare_archive **in, int n, const compare_options *opt, char *err,
                  size_t errlen);
void compare_free(compare_data *m);

const char *compare_verdict_word(compare_verdict v);
/* What one recorded range of the compared runs is: "step" when a run holds a training step
 * (model_unit_word_of_run), else "forward" (attention forwards, a model's inference steps). The
 * tables' headings and compare.tex's caption name it, once. */
const char *compare_unit_word(const compare_data *m);

/* compare_measurement.c: what compare takes from how each run was measured. */
/* "warm" or "cold" as run.json's measurement plan records it; NULL when not recorded. */
const char *compare_l2_state(const run_info *r);
/* EXIT_OK, or EXIT_L2_MISMATCH with one line when two runs measured different L2 states
 * (an archive that records none ran its forwards back to back: it is taken as warm only
 * when it is an attnprof run; an import's state is unknown and differs from cold). */
int compare_l2_check(compare_archive *const *in, int n, int allow, char *err, size_t errlen);
/* The cell's passes and per-pass spreads (after its samples are filled). */
void compare_cell_passes(compare_cell *c, const run_info *r);
/* 1 when both cells' runs hold replicates: their verdicts use the between-pass spread. */
int compare_replicates_apply(const compare_cell *base, const compare_cell *x);
/* Verdict bits for --fail-on (1u << VERDICT_*), from "slower,ambiguous"; EXIT_OK, or
 * EXIT_USAGE with one line in err for a word that is not a verdict. */
int compare_fail_on_parse(const char *list, unsigned *mask, char *err, size_t errlen);
/* The variants of non-baseline runs whose CUDA-time (or throughput) verdict is in
 * `mask`, named in one line into msg; their count. */
int compare_gate(const compare_data *m, unsigned mask, char *msg, size_t n);
/* What --fail-on could gate: the count of non-baseline CUDA-time (or throughput) verdicts and
 * model-trace step verdicts; msg lists, in one line, each comparison that has none and why (not in
 * a run, failed, too few forwards or steps, a model trace unpaired). 0: nothing was gated, and
 * `compare --fail-on` exits EXIT_NOTHING_GATED. */
int compare_gate_scope(const compare_data *m, char *msg, size_t n);
/* Bootstrap a ratio of two cells' samples and give it a verdict against the noise
 * floor f: same when the whole 95% interval lies in [1/(1+f), 1+f], faster or
 * slower when it lies wholly outside, ambiguous when it straddles an edge.
 * `higher_is_better` for throughput; time and operation counts are better lower. */
compare_ratio compare_ratio_of(const double *base, int n_base, const double *x, int n_x, double floor,
                               int higher_is_better);

/* compare_traces.c: pairs the runs' model traces against the baseline's and compares them
 * step by step (compare_build calls it; compare_free frees it): the --pair names first, then
 * the same names, then the one of each run. EXIT_OK, or EXIT_USAGE with one line when a
 * --pair name is no model trace of the baseline or of any other run. */
int compare_traces_build(compare_data *m, const compare_options *opt, char *err, size_t errlen);
/* The model traces' compared fields (their attention inputs, attention backend and whether
 * compiled, and the producer), added to m->fields with their `differs` (compare_build calls it
 * before the "what differs" sentence). */
void compare_traces_fields(compare_data *m);
/* --pair A=B[,C=D] into opt->pair ('\' escapes '=', ',' and '\' inside a name); EXIT_OK, or
 * EXIT_USAGE with one line in err when malformed. */
int compare_pairs_parse(const char *list, compare_options *opt, char *err, size_t errlen);
void compare_traces_free(compare_traces *t);

#endif
