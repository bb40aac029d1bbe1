/* CUPTI Activity API tracing: kernels (concurrent), memcpy, memset, runtime and
 * driver API calls, NVTX markers. Records are delivered through buffer callbacks
 * and appended to a trace at each flush; dropped records are counted, never lost
 * silently. */
#ifndef ATTNPROF_CUPTI_TRACING_H
#define ATTNPROF_CUPTI_TRACING_H

#include "trace.h"

#include <stddef.h>
#include <stdint.h>

/* ATTNPROF_CUPTI=off in the environment: no CUPTI call at all (no activity tracing, no NVTX
 * injection, host timestamps), so that compute-sanitizer, which cannot share the process with a
 * CUPTI subscriber, can run `attnprof run`; the archive then holds the ranges, the CUDA-event
 * times and the checks, and no GPU operation. */
int cupti_off(void);
/* Before any NVTX call: point NVTX's injection at CUPTI so markers are recorded. */
void cupti_prepare_nvtx(void);
int cupti_start(trace *t, char *err, size_t errlen);
/* Enable/disable the activity kinds (for the CUPTI-off timing probe). */
int cupti_enable(int on, char *err, size_t errlen);
/* With tracing on, Memset records alone off (0) or on again (1): the overhead probe's third
 * state, which measures what CUPTI's Memset records cost (about 1.2 µs of GPU time each on
 * the H200, bench/results/2026-12-04-cupti-memset.md). */
int cupti_enable_memset_records(int on, char *err, size_t errlen);
/* Synchronize, flush CUPTI's buffers and append the records to the trace, or count
 * them as discarded when `keep` is 0. NVTX ranges opened with cupti_range_push
 * are attributed to `variant`. Adds the records CUPTI reported dropped to *dropped. */
int cupti_flush(int keep, const char *variant, int64_t *dropped, char *err, size_t errlen);
void cupti_stop(void);

/* NVTX range around a region (iteration >= 0 for a recorded forward). Also stamps
 * CUPTI's clock on the host, so a range is kept even if the NVTX injection did not
 * load; cupti_marker_source() says which source provided the ranges. */
void cupti_range_push(const char *name, int iteration);
void cupti_range_pop(void);
const char *cupti_marker_source(void);
uint64_t cupti_timestamp(void);

#endif
