/* run.json in memory: what was run, on what, and how each variant fared (read and written by
 * io/run_json.c). */
#ifndef ATTNPROF_RUN_INFO_H
#define ATTNPROF_RUN_INFO_H

#include "trace.h"
#include "attn_types.h"
#include "counters.h"
#include "prediction.h"

typedef enum variant_status {
    VARIANT_OK = 0,
    VARIANT_FAILED = 1,      /* error, or rel. error above the threshold */
    VARIANT_UNAVAILABLE = 2, /* cannot run here (library/GPU); reason in `error` */
    VARIANT_SKIPPED = 3,     /* default list only: cannot take the shape (head dim, device
                              * memory); reason in `error`, the batch went on */
} variant_status;

/* How `--iters auto` ended for a variant (run.json "variants[].stop"). */
typedef struct stop_outcome {
    char reason[24];  /* "noise" (below the target), "converged" (the median stopped moving),
                       * "max_forwards", "time_cap", "fixed" (--iters N), "failed" (the variant
                       * failed while recording); "" not recorded */
    int forwards;     /* recorded forwards, every pass together */
    double noise;     /* the median's relative standard error when it stopped (0.005 = 0.5%) */
    double gpu_s;     /* GPU time of those forwards (CUDA events), seconds */
} stop_outcome;

/* A variant's backward (`run --backward`; run.json "variants[].backward"): recorded = 0 when
 * the run had no --backward (then absent from run.json). */
typedef struct backward_result {
    int recorded;
    variant_status status;      /* ok; FAILED (error, or a gradient above the tolerance);
                                 * skipped (no backward for this variant or shape: why in error) */
    char error[ATTN_ERR_LEN];
    int expected_ops;           /* GPU operations per backward, the variant's prediction */
    double event_us;            /* CUDA-event median per backward (CUPTI collecting) */
    stop_outcome stop;          /* the forwards' stop rule, applied to the backwards */
    /* ‖g − ref‖ / ‖ref‖ of dQ, dK, dV against FP64 on the sampled heads and rows; NAN: not
     * computed. tolerance: the threshold they were held to. */
    double rel_error_dq, rel_error_dk, rel_error_dv, tolerance;
    double kept_bytes;          /* device bytes the forward keeps for the backward (NAN: unknown) */
    char kept[96];              /* what they are */
} backward_result;

typedef struct variant_result {
    char name[32];
    /* Where the variant's kernels come from, from their names (provenance_derive):
     * "ours", "cuBLAS", "cuDNN", "PyTorch", "unattributed", comma-separated in order of
     * first launch; "" when not derived (run.json without provenance). */
    char kernel_origin[64];
    char title[96];
    char what_changed[200];
    int expected_ops, expected_memcpy;
    variant_status status;
    char error[ATTN_ERR_LEN];
    double rel_error;           /* vs FP64 CPU reference on sampled heads; NAN if not computed */
    int heads_checked;
    int rows_checked;           /* query rows checked in each of those heads (reference.h);
                                 * 0: not recorded (before the row sample every row was) */
    double event_us_no_cupti;   /* CUDA-event median per forward, CUPTI off */
    double event_us_cupti;      /* same, CUPTI tracing */
    double event_us_cupti_no_memset; /* same, CUPTI tracing with its Memset records off: measured where
                                      * the forwards issue a Memset; NAN elsewhere and in older archives */
    double host_us_no_cupti;    /* host wall time of the forward call, median, CUPTI off */
    double host_us_cupti;       /* same, CUPTI tracing (API records cost host time) */
    int64_t dropped_records;
    attn_facts facts;
    attn_prediction prediction; /* declared by the variant from the shape (prediction.h) */
    double device_bytes;        /* device memory the variant needs at this shape (inputs, output,
                                 * mask and its own buffers); NAN: not recorded (older archives) */
    stop_outcome stop;
    backward_result bwd;
} variant_result;

/* How the forwards were measured (run.json "measurement"). recorded = 0 in
 * archives from before it and in imports: the report says "not recorded". */
typedef struct measurement_plan {
    int recorded;
    char l2[8];                 /* "warm" (back to back) or "cold" (flushed before each forward) */
    int64_t l2_flush_bytes;     /* cold: bytes written by the flush before each recorded forward */
    double flush_us;            /* cold: median GPU time of one flush (CUDA events) */
    char iters_rule[8];         /* "auto" or "fixed" */
    double noise_target;        /* auto: stop once the median's relative standard error is below */
    int min_forwards, max_forwards; /* per variant and pass */
    double min_gpu_s, time_cap_s;   /* per variant and pass */
    int replicates;             /* --replicate K: passes of the whole batch (1: one) */
    double throttle_fraction;   /* a forward whose SM clock is below this × the run's highest
                                 * recorded SM clock is throttled: kept, left out of medians */
    double nvml_sample_us;      /* median host time of one per-forward NVML sample */
    int lock_clocks_requested;  /* --lock-clocks */
    char lock_clocks[160];      /* what happened: "locked the SM clock at 1980 MHz", "refused: …" */
} measurement_plan;

#define RUN_MAX_VARIANTS 16
#define RUN_MAX_PROBES 64

/* cudaOccupancyMaxActiveBlocksPerMultiprocessor for one of our own kernels, with
 * the launch configuration CUPTI recorded: the ground truth the occupancy
 * calculator is tested against. */
typedef struct occupancy_probe {
    char kernel[128];
    int threads, registers, static_smem, dynamic_smem;
    int blocks_per_sm;
} occupancy_probe;

/* A file an archive was imported from (`attnprof import`): what it was, byte for
 * byte, and the Kineto metadata it carried. */
typedef struct import_source {
    char file[256];             /* as named on the command line */
    int64_t size;
    char sha256[65];
    char variant[32];           /* the variant it became */
    int schema_version;
    int64_t base_time_ns;
    char trace_id[64];
    int has_distributed;        /* distributedInfo present */
    char backend[32];
    int rank, world_size;
} import_source;

/* What the run measured and was built with beyond the device's nominal limits
 * (run.json "measured", "host", "build"); zero / empty in archives from before
 * attnprof recorded them, which the report shows as "not recorded". */
typedef struct run_env {
    int clock_samples;              /* NVML samples taken, one after each variant's recorded forwards */
    int sm_clock_mhz_min, sm_clock_mhz_max;   /* nvmlDeviceGetClockInfo(NVML_CLOCK_SM) */
    int mem_clock_mhz_min, mem_clock_mhz_max; /* nvmlDeviceGetClockInfo(NVML_CLOCK_MEM) */
    int power_limit_w;              /* nvmlDeviceGetEnforcedPowerLimit, watts */
    char host_cpu[128];             /* /proc/cpuinfo "model name" */
    int host_cpus;                  /* online logical CPUs */
    char os[160];                   /* /etc/os-release PRETTY_NAME, uname release */
    char nvcc[64];                  /* nvcc release the recorder's kernels were built with */
    char build_flags[512];          /* NVCCFLAGS and CFLAGS of the recorder */
    char build_arches[96];          /* the architectures the kernels were compiled for, as the objects
                                     * themselves say: "sm_80,sm_90,sm_90a" (sm_90a: the Hopper flash
                                     * kernels are in); "" in archives from before attnprof recorded it */
} run_env;

/* What produced the records (run.json "provenance"). Every paragraph of a report
 * that speaks of implementations or CPU cost is chosen by it. */
typedef enum run_producer {
    PRODUCER_ATTNPROF = 0,  /* `attnprof run`: our recorder, our kernels and the libraries' */
    PRODUCER_PYTORCH = 1,   /* `attnprof import` of PyTorch profiler traces (ATen ops in them) */
    PRODUCER_KINETO = 2,    /* `attnprof import` of another Kineto producer's traces */
    PRODUCER_INJECTION = 3, /* `attnprof record`: any program, CUPTI injected (src/inject/) */
} run_producer;

typedef struct run_info {
    char tool_version[64];
    char command_line[1024];
    char date[32];              /* ISO 8601, UTC */
    attn_shape shape;
    char dtype[8];
    int causal;
    unsigned long long seed;
    int iters, warmup;
    /* 1 when run.json holds the field (an attnprof run always does); an import does not
     * know them, and a report or compare says "not recorded", never 0. */
    int seed_recorded, warmup_recorded;
    run_producer producer;
    char producer_evidence[160]; /* why this producer: e.g. "cpu_op events named aten::*" */
    int provenance_recorded;     /* run.json had "provenance" (else inferred, see run_json.h) */
    double rel_error_threshold;
    int backward;               /* run --backward: every variant's backward recorded too */
    device_props device;
    /* Which GPU ran it: CUDA's UUID ("GPU-…"), PCI bus id, and CUDA_VISIBLE_DEVICES as the
     * process saw it (a sweep worker's GPU index). Empty: not recorded (older archives). */
    char gpu_uuid[48];
    char gpu_pci_bus_id[24];
    char visible_devices[64];
    char driver_version[32];
    int cuda_runtime_version, cuda_driver_version;
    int cublas_version, cudnn_version, cupti_version;
    char marker_source[96];     /* where the NVTX ranges came from (CUPTI markers or host stamps) */
    run_env env;
    measurement_plan measurement;
    int n_variants;
    variant_result variants[RUN_MAX_VARIANTS];
    int n_probes;
    occupancy_probe probes[RUN_MAX_PROBES];
    ceilings ceilings;          /* --calibrate: roofs measured in the same run */
    /* The counter pass: run.json carries counters.meta (status, method, metrics); the
     * values live in counters.json beside it, read into counters.r by the caller. */
    counters_set counters;
    /* Set by `attnprof import`: the archive holds PyTorch profiler (Kineto) traces, and
     * what Kineto does not record (shape, clocks, cuDNN, correctness, CUPTI-off times)
     * is "not recorded". */
    int imported;
    char shape_source[16];      /* imported: "--shape" when the user declared it, else "" (not recorded) */
    /* imported: the device limits the traces' deviceProperties lack, taken from the
     * compute capability's documented limits, said in a sentence ("" when none). */
    char device_limits_note[240];
    int n_sources;
    import_source sources[RUN_MAX_VARIANTS];
} run_info;

/* run.json's words for a status, in variant_status's order (NULL-terminated). */
extern const char *const variant_status_words[];
const char *variant_status_name(variant_status s);
/* "attnprof", "pytorch_profiler", "kineto", "injection": run.json's words. */
const char *run_producer_name(run_producer p);
/* "attnprof run", "imported PyTorch profiler traces", "imported Kineto traces". */
const char *run_producer_phrase(const run_info *r);
/* 1 when run.json holds a shape (an import holds one only when declared). */
int run_info_shape_recorded(const run_info *r);

#endif
