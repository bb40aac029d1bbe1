/* From trace + run.json to the numbers of the report: records
 * grouped into forwards (NVTX "attn_fwd" range -> API calls inside it ->
 * correlated GPU ops), per-forward CUDA/CPU time, statistics. Findings (findings.h) are derived from a
 * finished analysis afterwards. */
#ifndef ATTNPROF_ANALYSIS_H
#define ATTNPROF_ANALYSIS_H

#include "finding_kind.h"
#include "run_info.h"
#include "trace.h"

typedef struct forward {
    int iteration;
    const host_range *range;     /* the attn_fwd range */
    const gpu_op **ops;          /* GPU ops launched inside it, by start time */
    const api_call **launchers;  /* launcher of ops[i] (NULL if none found) */
    int n_ops;
    double cuda_us;              /* sum of GPU op durations */
    double cpu_us;               /* duration of the host range (the forward call, no sync) */
    double gpu_span_us;          /* first op start to last op end */
    int throttled;               /* its SM clock was below the run's throttle line */
} forward;

typedef struct stats {
    int n;
    double median, min, max, mean;
} stats;

typedef enum op_class {
    OPC_GEMM = 0, OPC_ELEMENTWISE, OPC_SOFTMAX, OPC_FUSED_ATTENTION, OPC_MEMCPY, OPC_MEMSET,
    OPC_REDUCTION, OPC_MASK, OPC_OTHER, OPC_COUNT
} op_class;

#define MAX_FINDINGS 16
#define FINDING_MAX_NUMBERS 8
#define FINDING_MAX_RECORDS 8

typedef enum finding_severity {
    FINDING_INFO = 0,    /* what the records show, nothing wrong */
    FINDING_NOTICE = 1,  /* a cost worth knowing (a hidden copy, a rebuilt mask) */
    FINDING_WARNING = 2, /* the records may be incomplete or a variant did not run */
} finding_severity;

/* One finding as data, the one shape of the report's, the counters' and the sweep's
 * findings (finding_table.h): its kind (the row of the finding table, which gives the
 * id, the severity, the archive facts it needs and how it ranks), the numbers and
 * record ids behind it, its sentence and its short phrase. Compare and findings.json
 * key on the id. */
typedef struct finding {
    finding_kind kind;
    char id[32];                /* the row's id: "hidden_memcpy", "fp32_cuda_core_gemm", … */
    finding_severity severity;
    int n_numbers;
    struct {
        char key[24];           /* "us_per_forward", "bytes", "ops", … */
        double value;
        char unit[8];           /* "us", "B", "%", "x", "" */
    } numbers[FINDING_MAX_NUMBERS];
    int n_records;
    uint32_t records[FINDING_MAX_RECORDS]; /* correlation ids, representative forward */
    char needs[64];             /* archive facts it needs, comma-separated: "expected_ops", "provenance", … */
    /* What it is about beyond its variant: a sweep's variant and the variant or GPU it
     * is set against ("" when none). */
    char subject[64], other[64];
    /* The sentence in no output's syntax: plain text, names between FINDING_CODE_OPEN and
     * FINDING_CODE_CLOSE (findings.h); each writer renders it (findings_spans). */
    char text[640];
    /* The short phrase (at most about 8 words, with its key number) for a summary
     * cell, plain text from the row's template (finding_table.h). */
    char phrase[96];
    /* Its rank keys (finding_table.h): the share of the variant's CUDA time it
     * accounts for, and its departure from the prediction (a fraction); NAN: none. */
    double share, departure;
} finding;

typedef struct variant_analysis {
    const variant_result *result;
    /* The forwards every statistic, view and finding is drawn from: the recorded ones
     * but the throttled, which are in `throttled` (kept for samples.csv and
     * named in the report). When every forward of a variant is throttled none is left
     * out (all_throttled = 1): there is nothing else to draw from, and the report says so. */
    forward *forwards;
    int n_forwards;
    forward *throttled;
    int n_throttled;
    int all_throttled;
    int n_sampled;               /* forwards with a plausible per-forward sample (trace.json args) */
    int n_implausible;           /* forwards whose sample is outside physical bounds (analysis_sample_plausible):
                                  * its clocks judge nothing, the forward's CUPTI times are kept */
    int sm_mhz_min, sm_mhz_max;  /* over those samples; 0 when none */
    int mem_mhz_min, mem_mhz_max;
    stats cuda_us, cpu_us, span_us;
    /* run --backward: the variant's attn_bwd ranges grouped as its forwards are (the API calls
     * inside each, the GPU operations they launched); no throttle rule (the backwards carry no
     * samples). n_backwards 0 in an archive without them. */
    forward *backwards;
    int n_backwards;
    stats bwd_cuda_us;           /* sum of each backward's GPU op durations */
    int ops_per_backward, kernels_per_backward, memcpy_per_backward, memset_per_backward; /* medians */
    int ops_per_forward;         /* median over forwards */
    int memcpy_per_forward;
    int kernels_per_forward;
    int memset_per_forward;
    int n_findings;
    char findings[MAX_FINDINGS][640]; /* meta[k]'s sentence as Markdown (findings_markdown) */
    finding meta[MAX_FINDINGS];       /* the findings, in derive order (findings_ranked: rank order) */
} variant_analysis;

typedef struct analysis {
    const trace *trace;
    const run_info *run;
    /* The throttle rule: judged when run.json has a measurement plan with a
     * throttle fraction and trace.json holds SM clocks; a forward whose sampled SM clock
     * is below throttle_fraction × max_sm_mhz (the highest of the run, every variant) is
     * throttled. A sample with no SM clock (0: NVML gave none) is never judged. */
    int throttle_judged;
    double throttle_fraction;
    int max_sm_mhz;
    int clock_limit_mhz;         /* the highest SM clock a sample may read (analysis_sample_plausible); 0: none known */
    int n;
    variant_analysis v[RUN_MAX_VARIANTS];
} analysis;

/* Groups the trace's records into the variants' forwards, checked against run.json: EXIT_OK, or
 * EXIT_BAD_ARCHIVE with one line in err when the two files contradict each other. */
int analysis_build(analysis *a, const trace *t, const run_info *r, char *err, size_t errlen);
void analysis_free(analysis *a);
const variant_analysis *analysis_find(const analysis *a, const char *variant);
/* A variant's name without the prefixes of PyTorch's harness (bench/torch_traces.py names its
 * files kineto_<variant> and its SDPA backends sdpa_<backend>; `import` names a variant after
 * its file): "kineto_sdpa_flash" -> "flash". Other names as they are. */
const char *analysis_plain_name(const char *variant);
/* The variant of `a` that stands for `variant` of another archive: the one of that name, else
 * one whose plain name (analysis_plain_name) is variant's. NULL when none. */
const variant_analysis *analysis_counterpart(const analysis *a, const char *variant);
/* Index of the representative forward of a variant, the one every view shows
 * (op tables, timelines, occupancy, findings that name kernels): the forward whose
 * CUDA time is the median, the lower middle one when the count is even (an actual
 * forward, not an average); ties go to the earlier iteration. ATTN_NONE when none. */
int analysis_median_forward(const variant_analysis *va);
/* The representative backward, chosen as the forward is (ATTN_NONE when none). */
int analysis_median_backward(const variant_analysis *va);
/* Physical bounds of a per-forward sample: an SM clock not negative and, where
 * run.json records the GPU's maximum SM clock (gpu.clock_khz), at most ANALYSIS_CLOCK_MARGIN
 * above it (NVML reports the clock the SM runs at, never above the rated boost; the margin is
 * for a board that boosts past what cudaDevAttrClockRate says); a memory clock, power and event
 * time not negative and finite; an event time under ANALYSIS_MAX_EVENT_US; a temperature in
 * -50..200 °C. A sample outside them is dropped: counted (n_implausible, the finding
 * implausible_samples), never the run's highest clock, never throttled. 1 when plausible. */
#define ANALYSIS_CLOCK_MARGIN 0.10
#define ANALYSIS_MAX_EVENT_US 3.6e9 /* one hour: no forward of a benchmark batch lasts that long */
int analysis_sample_plausible(const analysis *a, const struct forward_sample *s);
/* 1 when the forward's sample puts it below the run's throttle line. */
int analysis_forward_throttled(const analysis *a, const host_range *r);
/* The forwards a variant was expected to record: its stop outcome's count when
 * recorded (--iters auto, every pass), else iters × replicates. */
int analysis_expected_forwards(const run_info *r, const variant_result *v);

/* Pure helpers, tested on their own. */
stats stats_of(const double *x, int n);
/* By kernel name, and for PyTorch's generic kernels (elementwise_kernel, fill, where…)
 * by the ATen op that launched them (gpu_op.cpu_op_path) when the trace has one. */
op_class classify_op(const gpu_op *op);
/* 1 when `cpu_op` ("aten::tril") is one of the CPU ops around the op's launch. */
int op_launched_in(const gpu_op *op, const char *cpu_op);
/* Launched by the ATen ops PyTorch builds a causal mask with (ones, tril, triu,
 * where; not inside _safe_softmax). 0 for traces without CPU ops. */
int op_builds_mask_aten(const gpu_op *op);
/* The ATen op to name an op by: the innermost CPU op around its launch that is not a
 * mere fill/copy/allocation ("aten::ones" for ones > fill_), into out. Returns 1, or 0
 * when the trace has no CPU ops. */
int op_aten_name(const gpu_op *op, char *out, size_t n);
const char *op_class_name(op_class c);
/* Median over forwards of (count, summed µs) of the ops matching `pred`. */
typedef int (*op_predicate)(const gpu_op *op);
void per_forward_median(const variant_analysis *va, op_predicate pred, int *count, double *us);
/* Short display name for a kernel: strips templates/arguments, keeps the identifier. */
void short_kernel_name(const char *name, char *out, size_t n);

#endif
