/* Is a difference real or run-to-run noise? A seeded percentile bootstrap of the
 * ratio of two medians: resample each side's per-forward samples with
 * replacement, take the ratio of the resampled medians, and read the 2.5th and
 * 97.5th percentiles. The same inputs and seed always give the same interval, so
 * compare and sweep outputs stay byte-identical. */
#ifndef ATTNPROF_BOOTSTRAP_H
#define ATTNPROF_BOOTSTRAP_H

#include <stdint.h>

#define BOOTSTRAP_RESAMPLES 2000
#define BOOTSTRAP_SEED 0x5eed0a77u

typedef struct ratio_ci {
    double ratio;  /* median(x) / median(base); NAN when either side is empty or base is 0 */
    double lo, hi; /* 95% percentile interval of the resampled ratio */
} ratio_ci;

/* Ratio of median(x) to median(base) with its 95% interval from `resamples`
 * bootstrap draws seeded by `seed`. Identical samples give exactly 1 and [1, 1]. */
ratio_ci bootstrap_median_ratio(const double *base, int n_base, const double *x, int n_x, int resamples,
                                uint64_t seed);

#endif
