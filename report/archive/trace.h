/* The in-memory trace: what CUPTI recorded for a batch, and what trace.json
 * holds. Times are nanoseconds on CUPTI's clock. The CUPTI activity tracing (src/recorder/cupti_tracing.c)
 * fills it, trace_write.c writes it as a Kineto-style Chrome trace, trace_read.c
 * reads that file back, so analysis/figures/report never need a GPU. */
#ifndef ATTNPROF_TRACE_H
#define ATTNPROF_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* Bounds of gpu_op.cpu_op_path, so a trace's cost stays linear in its records
 * whatever the nesting (PyTorch's ATen chains are about 10 deep). */
#define TRACE_CPU_PATH_MAX_LEVELS 32
#define TRACE_CPU_PATH_MAX_BYTES 4096

typedef enum gpu_op_kind { GPU_KERNEL = 0, GPU_MEMCPY = 1, GPU_MEMSET = 2 } gpu_op_kind;

typedef struct gpu_op {
    gpu_op_kind kind;
    char *name;  /* kernel name (demangled), or "Memcpy DtoD (Device -> Device)", "Memset (Device)" */
    int64_t start_ns, end_ns;
    uint32_t correlation;
    int device, stream;
    int grid[3], block[3];     /* kernels */
    int registers;             /* per thread */
    int static_smem, dynamic_smem; /* bytes per block */
    int64_t bytes;             /* memcpy / memset */
    char copy_kind[8];         /* memcpy: "DtoD", "HtoD", "DtoH", ... */
    int context;               /* CUDA context id (0: not recorded) */
    int has_kineto_occupancy;  /* imported: Kineto's own "est. achieved occupancy %" */
    double kineto_occupancy;
    /* The CPU op (ATen op, from cpu_op ranges) whose launch made this op: the innermost
     * cpu_op range around the launching API call. Set by trace_sort, borrowed from the
     * range's name (valid while the trace lives); NULL when the trace has no cpu_op. */
    const char *cpu_op;
    /* The chain of cpu_op ranges around the launch, outermost first, joined by
     * " > " ("aten::masked_fill > aten::clone > aten::copy_"): the innermost
     * TRACE_CPU_PATH_MAX_LEVELS of them within TRACE_CPU_PATH_MAX_BYTES, "… > " in
     * front when outer ones were left out; owned by the trace, set by trace_sort,
     * NULL like cpu_op. */
    char *cpu_op_path;
} gpu_op;

typedef enum api_kind { API_RUNTIME = 0, API_DRIVER = 1 } api_kind;

typedef struct api_call {
    api_kind kind;
    char *name; /* cudaLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync, ... */
    int64_t start_ns, end_ns;
    uint32_t correlation;
    int pid, tid;
    int cbid;   /* CUPTI callback id (0: not recorded) */
} api_call;

/* NVTX ranges pushed by the runner: "attn_fwd" around each recorded forward
 * (iteration >= 0), and the variant's outer range named after the variant
 * (iteration -1). `variant` names the variant the range belongs to.
 * Imported PyTorch traces add their ATen ops as RANGE_CPU_OP (iteration -1). */
typedef enum range_kind { RANGE_ANNOTATION = 0, RANGE_CPU_OP = 1 } range_kind;

typedef struct host_range {
    range_kind kind;
    char *name;
    char *variant;
    int iteration;
    int64_t start_ns, end_ns;
    int pid, tid;
    /* A recorded forward of `attnprof run` (an attn_fwd range): what was measured
     * around it, outside its NVTX range, written as the range's args in trace.json.
     * recorded = 0 in older archives, in imports and for every other range. */
    struct forward_sample {
        int recorded;
        int pass;         /* --replicate K: the pass of the batch it belongs to, 0..K-1 */
        double event_us;  /* CUDA events recorded on the stream just outside the range */
        int sm_mhz, mem_mhz; /* NVML, sampled after the forward completed */
        double power_w;
        int temp_c;
    } sample;
} host_range;

typedef struct device_props {
    char name[128];
    int major, minor;
    int sm_count;
    int64_t total_mem;
    int warp_size;
    int max_threads_per_block, max_threads_per_sm, max_blocks_per_sm;
    int regs_per_sm, regs_per_block;
    int smem_per_sm, smem_per_block, smem_per_block_optin, smem_reserved_per_block;
    int l2_bytes;
    int clock_khz, mem_clock_khz, mem_bus_width;
} device_props;

typedef struct trace {
    gpu_op *ops;
    size_t n_ops, cap_ops;
    api_call *apis;
    size_t n_apis, cap_apis;
    host_range *ranges;
    size_t n_ranges, cap_ranges;
    int pid;
    /* apis ordered by correlation id, for trace_launcher; built by trace_sort and
     * dropped whenever apis change. */
    const api_call **apis_by_corr;
    size_t n_apis_by_corr;
    device_props device;
    int cupti_version, cuda_runtime_version, cuda_driver_version;
} trace;

void trace_init(trace *t);
void trace_free(trace *t);
/* Append copies (strings are duplicated); return the new element. */
gpu_op *trace_add_op(trace *t, const gpu_op *op);
api_call *trace_add_api(trace *t, const api_call *api);
host_range *trace_add_range(trace *t, const host_range *r);
/* Sort ops, apis and ranges by start time (ties broken deterministically), index
 * the API calls by correlation id, and tie each op to its CPU op (gpu_op.cpu_op). */
void trace_sort(trace *t);
/* For each API call i, 1 + the index in t->ranges of the innermost range around its
 * start on the same thread whose kind is in `kinds` (bits 1u << range_kind), or 0.
 * The caller frees the array. */
size_t *trace_api_enclosing(const trace *t, unsigned kinds);
/* The longest a GPU operation may start after its launch call: a launch queue holds at most
 * a few thousand operations, so even a queue of long kernels drains in minutes; an
 * operation an hour after its launch (a trace said 11 days) is of another recording or
 * another clock. */
#define TRACE_MAX_LAUNCH_LAG_NS ((int64_t)3600 * 1000000000)
/* Checks what a real recording cannot hold (after trace_sort): two runtime (or two
 * driver) calls with one correlation id; two GPU operations with one id unless a
 * graph launch made them; an operation whose id no call has; an operation that
 * starts before its launch call, or more than TRACE_MAX_LAUNCH_LAG_NS after it. Linear after an
 * n·log n sort. EXIT_OK, or EXIT_BAD_ARCHIVE with one line in err ("inconsistent: …") naming
 * the events. */
int trace_check(const trace *t, char *err, size_t errlen);
/* The API call that launched an op (same correlation id), or NULL. */
const api_call *trace_launcher(const trace *t, const gpu_op *op);
/* The Memsets among ops[first_op..] launched inside a recorded forward (an "attn_fwd" range of
 * iteration >= 0 among ranges[first_range..], of `variant`): not setup's or a check's. */
int trace_memsets_in_forwards(const trace *t, size_t first_op, size_t first_range, const char *variant);

/* trace_write.c / trace_read.c: Chrome Trace Event Format, Kineto schema.
 * EXIT_OK, or with a one-line reason in `err` EXIT_IO (the writer) or EXIT_BAD_ARCHIVE (the
 * reader: missing, corrupt or inconsistent).
 * The writer adds what Kineto readers expect (a ProfilerStep#N user_annotation per
 * forward, process/thread metadata, Kineto's External ids); the reader leaves the
 * derived ProfilerStep ranges out, so a trace reads back as it was written. */
int trace_write_json(const trace *t, const char *path, char *err, size_t errlen);
int trace_read_json(trace *t, const char *path, char *err, size_t errlen);

#endif
