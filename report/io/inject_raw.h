/* The raw file of `attnprof record`: what the injection library (src/inject/inject.c)
 * wrote in one process, read into the in-memory trace and a summary of the recording.
 *
 * The file is text, one record a line, fields separated by tabs, the record's letter
 * first; a name is always the last field (tabs and line breaks in it became spaces):
 *   attnprof-inject 1                     the format and its version (first line)
 *   P pid start_ts                        the process, CUPTI's clock when recording began
 *   V key value                           cupti, cuda_driver, driver, power_limit_w, buffer_mb
 *   D id major minor sms mem warp thr/blk thr/sm blk/sm regs/sm regs/blk smem/sm smem/blk l2
 *     clock_khz has_bw bw uuid name       a device (CUPTI's device record; 20 fields)
 *   K start end corr dev stream ctx gx gy gz bx by bz regs ssmem dsmem graph name   a kernel
 *   M start end corr dev stream ctx bytes kind graph                               a memcpy
 *   S start end corr dev stream ctx bytes graph                                    a memset
 *   R|A start end corr pid tid cbid name  a runtime (R) or driver (A) API call
 *   Y start end corr ctx stream type      a synchronisation (CUPTI's type number)
 *   NS ts id tid name / NE ts id / NI ts id tid name   NVTX range start, end, marker
 *   X n                                   records CUPTI dropped
 *   B n mb                                buffer requests refused at the bound (of mb MiB each)
 *   T n mb                                records not written: the raw file reached its bound of mb MiB
 *   C samples sm_min sm_max mem_min mem_max   NVML clocks (MHz) while recording
 *   W what message                        a CUPTI call that failed
 *   E complete | E signal N               how the recording ended (no E: cut short)
 * Times are nanoseconds on CUPTI's clock. */
#ifndef ATTNPROF_INJECT_RAW_H
#define ATTNPROF_INJECT_RAW_H

#include "trace.h"

#include <stdint.h>

typedef enum inject_end { INJECT_END_NONE = 0, INJECT_END_COMPLETE, INJECT_END_SIGNAL } inject_end;

typedef struct inject_raw {
    int pid;
    inject_end end;
    int end_signal;
    int64_t dropped;          /* CUPTI's dropped-record counts, summed */
    int64_t buffers_refused;  /* buffer requests refused at the bound */
    int buffer_mb;            /* the bound */
    int64_t past_raw_bound;   /* records not written once the raw file reached raw_bound_mb */
    int64_t raw_bound_mb;
    char driver[32];          /* NVML's driver version, "" when NVML was not there */
    int power_limit_w;
    int clock_samples, sm_min, sm_max, mem_min, mem_max;
    int has_device;
    char gpu_uuid[48];
    size_t n_kernels, n_memcpy, n_memset, n_runtime, n_driver_kept, n_driver_all;
    size_t n_syncs, n_nvtx_ranges, n_nvtx_unclosed, n_nvtx_markers, n_graph_launches;
    double sync_us;           /* time the host spent in synchronisation records */
    size_t n_sync_calls;      /* runtime and driver calls that wait for the GPU (…Synchronize) */
    char warnings[512];       /* the W lines, joined by "; " */
} inject_raw;

/* Reads the raw file at path into t (initialized here) and m. NVTX ranges become
 * annotation ranges (iteration -1) of `variant`; driver calls are kept where they
 * launched GPU work. EXIT_OK, or EXIT_BAD_ARCHIVE when the file is not a raw file of
 * this version or a line is malformed (the line number said), EXIT_IO when it cannot
 * be read; t is freed on failure. */
int inject_raw_read(const char *path, const char *variant, trace *t, inject_raw *m, char *err, size_t errlen);

#endif
