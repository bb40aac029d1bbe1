/* The recorder's batch as steps (runner.c walks them in order): what the steps share, one
 * run_ctx, and the functions of the files that hold them. runner_env.c opens the device and
 * describes the environment (device, identity, host, build, versions); runner_inputs.c draws
 * the inputs, computes their FP64 reference, checks the device memory and uploads them;
 * runner_checks.c holds the checks of a variant (FP64, fully-masked rows, CUPTI overhead,
 * occupancy); runner_measure.c the recorded forwards (the stop rule's loop, the clocks);
 * runner_after.c the ceilings and the counter batch; runner_progress.c the live line and the
 * log lines. Internal to src/recorder: the CLI sees runner.h only. */
#ifndef ATTNPROF_RUNNER_STEPS_H
#define ATTNPROF_RUNNER_STEPS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "runner.h"

/* One sampled head's FP64 reference: [n_rows, D] of the checked rows. */
typedef struct sampled_head {
    int b, h;
    double *ref;
} sampled_head;

/* The query rows checked in every sampled head (reference.h), the same for each variant. */
typedef struct checked_rows {
    int *row;
    int n;
} checked_rows;

typedef struct device_inputs {
    void *q, *k, *v, *out;
    uint16_t *host_out; /* one head */
    uint8_t *mask;      /* fully-masked-rows check: built on the first use, the same for every variant */
    int mask_ready;
    cudaStream_t stream;
    cudaEvent_t ev0, ev1;    /* the overhead probe's samples */
    cudaEvent_t fwd0, fwd1;  /* each recorded forward, just outside its NVTX range */
    void *flush;             /* --l2 cold: the buffer written before each recorded forward */
    size_t flush_bytes;
} device_inputs;

/* Each recorded forward's sample (trace.h's forward_sample), by variant: s[i] is the
 * forward of iteration i (every pass continues the numbering); attached to the trace's
 * attn_fwd ranges once the run's records are in. */
typedef struct forward_log {
    struct forward_sample *s;
    int n, cap;
} forward_log;

#define RUN_MAX_SAMPLED_HEADS 8

/* run --backward (runner_backward.c): the fixed random dO, the gradients' buffers, the largest
 * workspace a selected variant's backward needs, the FP64 gradients of the sampled heads and
 * rows, and each recorded backward's CUDA-event time by variant. */
typedef struct backward_inputs {
    void *dout, *dq, *dk, *dv, *workspace;
    size_t workspace_bytes;
    uint16_t *host_dout;      /* [B, H, S, D] */
    uint16_t *host_grad;      /* one head's gradient read back */
    double *ref[RUN_MAX_SAMPLED_HEADS][3]; /* by sampled head: dq, dk, dv, each [rows, D] */
    forward_log logs[RUN_MAX_VARIANTS];
} backward_inputs;

/* What the per-forward measurement costs and did, over the whole run. */
typedef struct measure_state {
    backward_inputs *bwd; /* run --backward: the backward's inputs (NULL: none) */
    forward_log logs[RUN_MAX_VARIANTS];
    double *nvml_us; /* host time of each NVML sample */
    int n_nvml, cap_nvml;
} measure_state;

/* Everything the steps of one batch share. */
typedef struct run_ctx {
    const run_plan *cfg;
    trace *t;
    run_info *info;
    char *err;
    size_t errlen;
    double need_bytes[RUN_MAX_VARIANTS]; /* each variant's device bytes (NAN: skipped before the check) */
    char skip[RUN_MAX_VARIANTS][ATTN_ERR_LEN]; /* the plan's skips, and the memory check's */
    uint16_t *host;                      /* q, k, v on the host, one after the other */
    device_inputs d;
    sampled_head heads[RUN_MAX_SAMPLED_HEADS];
    int n_heads;
    checked_rows rows;
    measure_state ms;
    backward_inputs bwd;
    double t_variants; /* host µs when the variants began: the live line's estimate */
} run_ctx;

/* runner_progress.c */
double host_us(void);
void progress(const run_plan *cfg, int vi, const char *name, const char *what, int j, int n);
__attribute__((format(printf, 2, 3))) void step_line(const run_plan *cfg, const char *fmt, ...);
void clear_live_line(const run_plan *cfg);

/* runner_env.c: the device and the environment run.json describes. */
int step_open_device(run_ctx *c);
int step_describe_run(run_ctx *c);

/* runner_inputs.c */
size_t q_elems(const attn_shape *s);  /* q and out: B × H × q_seq × D */
size_t kv_elems(const attn_shape *s); /* k and v: B × kv_heads × seq × D */
int step_device_memory(run_ctx *c);
int step_draw_inputs(run_ctx *c);
int step_upload_inputs(run_ctx *c);
void inputs_free(run_ctx *c);

/* runner_checks.c: the checks of one variant, on its set-up state. */
double check_correctness(const run_plan *cfg, const attn_variant *var, void *state, device_inputs *d,
                         const sampled_head *heads, int n_heads, const checked_rows *rows, attn_error *e, int *rc);
/* memsets: the Memsets the variant's recorded forwards issued; where there are any, a third
 * state (CUPTI on, its Memset records off) measures what those records cost. */
int cupti_overhead_probe(const attn_variant *var, void *state, device_inputs *d, variant_result *res, int memsets,
                         attn_error *e);
void fully_masked_rows_check(const run_plan *cfg, const attn_variant *var, void *state, device_inputs *d,
                             attn_facts *facts);
void probe_occupancy(const trace *t, size_t first_op, run_info *info);

/* runner_measure.c: the recorded forwards and the clocks. */
int step_measurement_begin(run_ctx *c);
int recorded_forwards(const run_plan *cfg, int vi, int pass, device_inputs *d, void *state, variant_result *res,
                      measure_state *ms, attn_error *e, int rc);
void sample_clocks(run_env *env);
int step_measurement_end(run_ctx *c);

/* runner_backward.c: run --backward. The step after the inputs draws dO, computes the FP64
 * gradients and allocates the buffers; backward_phase runs inside a variant's range, after its
 * recorded forwards (the check on pass 0, then the recorded backwards in attn_bwd ranges);
 * the step after the records frees what the first allocated. */
int wants_backward(const run_ctx *c);
int step_backward_inputs(run_ctx *c);
int backward_phase(const run_plan *cfg, int vi, int pass, device_inputs *d, void *state, const sampled_head *heads,
                   int n_heads, const checked_rows *rows, variant_result *res, measure_state *ms, int fwd_rc);
int step_backward_end(run_ctx *c);

/* runner_after.c: after the timed batch, with activity tracing off. */
int step_ceilings(run_ctx *c);
int step_counters(run_ctx *c);

#endif
