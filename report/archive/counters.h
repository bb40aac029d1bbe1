/* counters.json: hardware counters of one forward of each variant, per kernel, measured
 * by the counter pass (src/recorder/counter_pass.c, CUPTI Range Profiler, auto range per kernel, kernel
 * replay) plus one user range around the whole forward, so traffic of operations that are
 * not kernels (a Memcpy) shows as forward minus kernels. The counters in memory and the quantities
 * derived from raw metrics (bytes, FLOPs, pipes) live here, GPU-free; counters.json is
 * io/counters_json.h. */
#ifndef ATTNPROF_COUNTERS_H
#define ATTNPROF_COUNTERS_H

#include <stddef.h>

/* The metrics, in the order the counter pass measures them. Each name exists on sm_80 and sm_90 unless noted;
 * the pass enumerates them at run time and records those the chip lacks. */
typedef enum ctr_metric {
    M_DURATION_NS = 0,   /* gpu__time_duration.sum */
    M_DRAM_READ,         /* dram__bytes_read.sum */
    M_DRAM_WRITE,        /* dram__bytes_write.sum */
    M_L2_READ_SECTORS,   /* lts__t_sectors_srcunit_tex_op_read.sum (32 B sectors, SM → L2 reads) */
    M_L2_WRITE_SECTORS,  /* lts__t_sectors_srcunit_tex_op_write.sum */
    M_TENSOR_INST,       /* sm__inst_executed_pipe_tensor.sum (warp instructions) */
    M_GMMA_INST,         /* sm__inst_executed_pipe_tensor_op_gmma.sum (sm_90 only) */
    M_FFMA,              /* sm__sass_thread_inst_executed_op_ffma_pred_on.sum */
    M_FADD,              /* sm__sass_thread_inst_executed_op_fadd_pred_on.sum */
    M_FMUL,              /* sm__sass_thread_inst_executed_op_fmul_pred_on.sum */
    M_HMMA_BF16_OPS,     /* sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum (sm_90) */
    M_HGMMA_BF16_OPS,    /* sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum (sm_90) */
    M_WARPS_ACTIVE_PCT,  /* sm__warps_active.avg.pct_of_peak_sustained_active: achieved occupancy */
    M_SM_THROUGHPUT_PCT, /* sm__throughput.avg.pct_of_peak_sustained_elapsed */
    M_DRAM_THROUGHPUT_PCT, /* gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed */
    M_COUNT
} ctr_metric;

extern const char *const counters_metric_names[M_COUNT];

typedef enum ctr_status {
    CTR_NOT_RUN = 0, /* --no-counters, or an archive from before the counter pass */
    CTR_OK,
    CTR_FORBIDDEN,   /* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, a profiling lock, vGPU... */
    CTR_FAILED,      /* another CUPTI error; `reason` names the call */
} ctr_status;

typedef struct counters_meta {
    ctr_status status;
    char reason[256];
    char method[200];
    char chip[32];
    int available[M_COUNT]; /* 1 when the chip has the metric */
    int passes;             /* replay passes per kernel */
    double pass_seconds;    /* wall time of the whole counter pass */
} counters_meta;

/* One profiled range: a kernel (kind "kernel") or the whole forward (kind "forward"); with run
 * --backward also each kernel of one backward ("bwd_kernel") and the whole backward ("backward"). */
typedef struct counter_range {
    char variant[32];
    char kind[16];  /* "kernel", "forward"; the backward's "bwd_kernel", "backward" */
    int index;      /* order within the variant's forward (kernels), -1 for the forward */
    char name[256];
    double v[M_COUNT]; /* NAN where unavailable */
} counter_range;

typedef struct counters_set {
    counters_meta meta;
    int n, cap;
    counter_range *r; /* malloc'd; counters_free */
} counters_set;

/* Building: appends a zeroed range (values NAN); NULL when out of memory. */
counter_range *counters_add(counters_set *s, const char *variant, const char *kind, int index, const char *name);
void counters_free(counters_set *s);
/* counters.json's words for a status, in ctr_status's order (NULL-terminated). */
extern const char *const counters_status_words[];
const char *counters_status_name(ctr_status s);


/* Derived quantities of a range (NAN when an input metric is unavailable). */
double counters_dram_bytes(const counter_range *r);  /* read + write */
double counters_l2_bytes(const counter_range *r);    /* (read + write sectors) × 32 */
double counters_fp32_flops(const counter_range *r);  /* 2·FFMA + FADD + FMUL */
/* Tensor FLOPs: 2 × the bf16 HMMA + HGMMA math ops (one op is one multiply-add). */
double counters_tensor_flops(const counter_range *r);
double counters_flops(const counter_range *r);       /* FP32 + tensor (unavailable parts count 0) */
double counters_seconds(const counter_range *r);
/* A kernel's range, of a forward ("kernel") or of a backward ("bwd_kernel"). */
int counters_is_kernel(const counter_range *r);

/* The largest value counters.json may hold for metric m (percentages: 105; counts:
 * 1e18); the reader refuses more, and anything negative, with exit 6. */
double counters_metric_max(int m);

#endif
