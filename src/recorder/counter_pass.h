/* The counter pass: after the timed batch, one forward of each variant under
 * CUPTI's Range Profiler (cupti_range_profiler.h + cupti_profiler_host.h): an auto range
 * per kernel with kernel replay, then one user range around the whole forward (user
 * replay), so operations that are not kernels (a Memcpy) show as forward minus kernels.
 * Activity tracing is off by then (cupti_stop), so neither perturbs the other and the
 * timed numbers are already taken. */
#ifndef ATTNPROF_COUNTER_PASS_H
#define ATTNPROF_COUNTER_PASS_H

#include <stddef.h>

#include "counters.h"

/* Prepares the profiler for device 0 (current context): chip name, counter availability,
 * the metrics this chip has (the rest marked unavailable in meta), the config image.
 * Returns 0 when the pass can run; otherwise -1 with meta->status CTR_FORBIDDEN (no
 * permission, profiling lock, unsupported device) or CTR_FAILED and meta->reason set. */
int counter_pass_open(counters_meta *meta);

/* One forward of `variant`, run by calling fwd(ctx) (enqueue on `stream`, no sync; it
 * returns 0 or nonzero on failure). Appends a "kernel" range per kernel and a "forward"
 * range to `out`. Returns 0; -1 with a one-line reason in err when this variant could not
 * be measured (the caller records it and goes on); -2 when the GPU refuses profiling
 * (permission, lock: no later variant will do better). fwd is called once under kernel
 * replay, then once per replay pass of the forward range. */
int counter_pass_forward(const char *variant, int (*fwd)(void *ctx), void *ctx, void *stream, counters_set *out,
                         char *err, size_t errlen);
/* The same for any call of the variant, its ranges of kinds `kernel_kind` (one per kernel) and
 * `call_kind` (the whole call): the forward's are "kernel" and "forward", the backward's
 * "bwd_kernel" and "backward". */
int counter_pass_call(const char *variant, const char *kernel_kind, const char *call_kind, int (*fwd)(void *ctx),
                      void *ctx, void *stream, counters_set *out, char *err, size_t errlen);

/* Host only, no GPU needed: which metrics `chip` ("GH100", "GA100") has and how many
 * replay passes their config takes, through the same enumeration and config-image code
 * the pass uses (tests/cupti/host_metrics.c runs it in `make test`). Returns 0 (meta
 * filled), or -1 with a one-line reason in err. */
int counter_pass_host_check(const char *chip, counters_meta *meta, char *err, size_t errlen);

/* Releases the host object and the profiler. */
void counter_pass_close(void);

#endif
