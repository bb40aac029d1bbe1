/* One streaming reader for Kineto-schema Chrome traces (what PyTorch's profiler
 * writes, and attnprof's own trace.json), plain or gzip-compressed. The file is
 * read in chunks, inflated with zlib when it is gzip, parsed with yajl, and each
 * complete event is handed to a callback: memory stays bounded by the largest
 * single event, whatever the file size. trace_read.c (attnprof archives) and
 * kineto_import.c (`attnprof import`) are the two callers. */
#ifndef ATTNPROF_KINETO_READ_H
#define ATTNPROF_KINETO_READ_H

#include "trace.h"

#include <stddef.h>
#include <stdint.h>

/* The args an event may carry that the readers use. Absent ones have set == 0. */
typedef enum kineto_arg {
    KARG_CORRELATION = 0, KARG_EXTERNAL_ID, KARG_DEVICE, KARG_STREAM, KARG_CONTEXT, KARG_REGISTERS,
    KARG_SHARED_MEMORY, KARG_STATIC_SMEM, KARG_DYNAMIC_SMEM, KARG_BYTES, KARG_ITERATION, KARG_CBID,
    KARG_QUEUED, KARG_BLOCKS_PER_SM, KARG_WARPS_PER_SM, KARG_EST_OCCUPANCY,
    /* attnprof's per-forward sample on attn_fwd ranges (host_range.sample) */
    KARG_PASS, KARG_EVENT_US, KARG_SM_MHZ, KARG_MEM_MHZ, KARG_POWER_W, KARG_TEMP_C, KARG_COUNT
} kineto_arg;

typedef struct kineto_num {
    int set;    /* present as a number */
    int wrong_type; /* present, but a string, boolean, null, array or object */
    int is_int; /* written without fraction or exponent */
    int64_t i;  /* the integer value (when is_int) */
    double d;   /* the value as a double */
} kineto_num;

/* One event. Strings are valid only during the callback; ph is "" when absent,
 * cat and name are NULL when absent (or not strings). */
typedef struct kineto_event {
    const char *ph, *cat, *name;
    kineto_num ts, dur, pid, tid, id;
    int has_args;
    kineto_num arg[KARG_COUNT];
    int grid[3], block[3]; /* args.grid / args.block; 0 when absent */
    int bad_triple;        /* bit 0 grid, bit 1 block: not an array of at most 3 whole numbers */
    const char *copy_kind, *variant; /* args "copy kind" / "variant"; NULL when absent */
    /* record_shapes (cpu_op events): args "Input Dims" as compact JSON ("[[4,16,1024,128],[],[]]"),
     * "Input type" and "Concrete Inputs" as their strings joined by '\x1f'; NULL when absent
     * or longer than KINETO_MAX_INPUTS_TEXT (then cut: not read as shapes). */
    const char *input_dims, *input_types, *concrete_inputs;
} kineto_event;

#define KINETO_MAX_INPUTS_TEXT 4096

#define KINETO_MAX_DEVICES 16

/* The top-level keys (before or after traceEvents: both orders occur). */
typedef struct kineto_header {
    int has_trace_events;
    int schema_version;
    int has_base_time;
    int64_t base_time_ns;
    int pid;
    int cupti_version, cuda_runtime_version, cuda_driver_version;
    char trace_id[64], trace_name[64];
    int has_distributed;
    char dist_backend[32];
    int rank, world_size;
    int n_devices;
    int device_ids[KINETO_MAX_DEVICES];
    device_props devices[KINETO_MAX_DEVICES];
} kineto_header;

/* What was read: the file's own size and SHA-256 (of its bytes as stored, taken
 * over the bytes the parser read: the file is opened once). */
typedef struct kineto_file_info {
    int64_t size;
    char sha256[65];
    int gzip;
    size_t n_events;
} kineto_file_info;

typedef enum kineto_status {
    KINETO_OK = 0,
    KINETO_ERR_IO = 1,    /* cannot open or read the file */
    KINETO_ERR_JSON = 2,  /* not JSON, or truncated (plain or gzip) */
    KINETO_ERR_EVENT = 3, /* the callback rejected an event, or an event is not an object */
    KINETO_ERR_SCHEMA = 4, /* no traceEvents array */
    KINETO_ERR_LIMIT = 5   /* a token or the inflated text beyond the limits of input.h */
} kineto_status;

/* Called once per element of traceEvents, in file order; `index` counts from 0.
 * Returns EXIT_OK to go on, or an EXIT_* code with a one-line reason in err (without the path). */
typedef int (*kineto_event_fn)(void *ctx, size_t index, const kineto_event *e, char *err, size_t errlen);

/* Reads `path`, calling `fn` for every event and filling `hdr` and `info` (either
 * may be NULL; without `info` no SHA-256 is computed). Returns KINETO_OK, or another status with one line in err naming
 * the file and what is wrong. */
kineto_status kineto_read(const char *path, kineto_event_fn fn, void *ctx, kineto_header *hdr,
                          kineto_file_info *info, char *err, size_t errlen);

/* ---- Events into the in-memory trace (trace_read.c) ---- */

/* Adds one event to `t` if it is one the in-memory trace holds (kernel, gpu_memcpy, gpu_memset,
 * cuda_runtime, cuda_driver, user_annotation, cpu_op; others are ignored), with times
 * in ns relative to the file (ts × 1000). `strict` (attnprof archives): a GPU or API
 * event without an integer args.correlation is an error; otherwise it is skipped and
 * counted in *skipped. EXIT_OK, or EXIT_BAD_ARCHIVE with the reason in err. */
int trace_add_kineto_event(trace *t, const kineto_event *e, int strict, size_t *skipped, char *err, size_t errlen);
/* Moves the times of the ops, calls and ranges from the given indices on by `by` ns
 * (baseTimeNanoseconds). Returns NULL, or the range error (bounds.h) when `by` or a
 * moved time leaves ±2^62 ns (the trace is then unusable). */
const char *trace_shift(trace *t, size_t ops_from, size_t apis_from, size_t ranges_from, int64_t by);

/* The properties of device `id` in the header, or NULL. */
const device_props *kineto_header_device(const kineto_header *h, int id);

#endif
