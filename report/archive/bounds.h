/* Range checks of the numbers an archive's trace holds, so that everything
 * computed from them afterwards (durations, differences of timestamps, grid and
 * block products, occupancy) stays inside its type: no undefined behaviour, and
 * a hostile number is an error naming the field instead of a wrong report.
 * Self-contained (no JSON): the trace reader calls these on the values it read. */
#ifndef ATTNPROF_BOUNDS_H
#define ATTNPROF_BOUNDS_H

#include <stdint.h>

#include "trace.h"

/* Every time in a trace lies within ±BOUNDS_MAX_NS, so the difference of any two
 * fits an int64_t (about ±146 years). */
#define BOUNDS_MAX_NS ((int64_t)1 << 62)

/* An int64 read from the archive, saturated to int (then rejected by the checks
 * below if it matters). */
int bounds_int_sat(int64_t v);
/* a - b, saturated to int. */
int bounds_sub_sat(int a, int b);

/* Each returns NULL when the value is in range, else a static description of the
 * field and its range ("ts: out of range (…)") for the caller's error line. */
const char *bounds_base_ns(int64_t base);
/* start = base + ts·1000, end = start + dur·1000 (ts, dur in µs), in 64-bit with
 * overflow checks; ts and dur must be finite, dur >= 0. */
const char *bounds_event_ns(int64_t base, double ts_us, double dur_us, int64_t *start, int64_t *end);
/* Grid, block, registers, shared memory and bytes of a GPU operation (CUDA's own
 * limits, which a real launch never exceeds). */
const char *bounds_op(const gpu_op *o);
/* deviceProperties: every limit non-negative and within what any GPU has. */
const char *bounds_device(const device_props *d);

#endif
