/* --iters auto: when to stop recording a variant's forwards. Pure C, no CUDA:
 * the GPU-free tests check the rule on number sequences.
 *
 * After each recorded forward the rule looks at the CUDA-event times so far (x, µs):
 *   noise = 1.2533 · 1.4826 · MAD(x) / √n / median(x), the median's relative standard error
 *           (the MAD scaled to a normal σ, and the median's efficiency against the mean);
 *   stop "noise"        when n ≥ min_forwards, Σx ≥ min_gpu_s and noise ≤ noise_target;
 *   stop "converged"    when n ≥ 3 · min_forwards, Σx ≥ min_gpu_s and the median moved by at
 *                       most noise_target / 5 over the last min_forwards forwards (a noisy
 *                       variant whose median no longer changes: more forwards tell nothing);
 *   stop "max_forwards" at max_forwards; stop "time_cap" once the pass has run time_cap_s of
 *                       wall time (checked after each forward, so one forward longer than the
 *                       cap is still recorded whole).
 * nvbench's rules were the start (relative noise below 0.5%, or the noise no longer changing,
 * with a minimum count, a minimum GPU time and a cap); ours measures the noise of the median,
 * which attnprof reports, rather than of the mean. */
#ifndef ATTNPROF_STOP_RULE_H
#define ATTNPROF_STOP_RULE_H

typedef struct stop_rule {
    double noise_target; /* 0.005: 0.5% */
    int min_forwards, max_forwards;
    double min_gpu_s, time_cap_s;
} stop_rule;

/* The defaults README states: 0.5%, 20 to 500 forwards, 10 ms of GPU time, 10 s per pass. */
#define STOP_RULE_DEFAULT {0.005, 20, 500, 0.01, 10.0}

/* NULL: record another forward; else why to stop ("noise", "converged", "max_forwards",
 * "time_cap"). *noise gets the median's relative standard error over x[0..n). */
const char *stop_rule_check(const stop_rule *r, const double *x, int n, double wall_s, double *noise);

/* The median's relative standard error of x[0..n) as above; NAN for n < 2 or a median <= 0. */
double stop_rule_noise(const double *x, int n);

#endif
