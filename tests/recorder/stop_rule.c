/* --iters auto's stop rule (src/stop_rule.c) on number sequences: each reason happens where
 * the rule in stop_rule.h says, and nowhere else. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "stop_rule.h"

/* Feeds x one value at a time as the recorder does; returns n at the stop and the reason. */
static int run_rule(const stop_rule *r, const double *x, int n, double forward_wall_s, const char **why)
{
    double noise;
    for (int i = 1; i <= n; i++)
        if ((*why = stop_rule_check(r, x, i, forward_wall_s * i, &noise)))
            return i;
    *why = NULL;
    return n;
}

Test(stop_rule, noise_is_the_medians_relative_standard_error)
{
    double x[] = {100, 102, 98, 101, 99}; /* median 100, |x - 100| = 0,2,2,1,1: MAD 1 */
    double want = 1.2533 * 1.4826 * 1.0 / sqrt(5.0) / 100;
    cr_assert_float_eq(stop_rule_noise(x, 5), want, 1e-12);
    cr_assert(isnan(stop_rule_noise(x, 1)));
}

Test(stop_rule, a_steady_kernel_stops_on_noise_at_the_minimum)
{
    const stop_rule r = STOP_RULE_DEFAULT;
    double x[600];
    for (int i = 0; i < 600; i++)
        x[i] = 1000 + (i % 3) - 1; /* 1 ms ± 0.1% */
    const char *why;
    int n = run_rule(&r, x, 600, 0.001, &why);
    cr_assert_str_eq(why, "noise");
    cr_assert_eq(n, r.min_forwards, "stopped at %d", n);
}

Test(stop_rule, a_fast_kernel_waits_for_the_minimum_gpu_time)
{
    const stop_rule r = STOP_RULE_DEFAULT; /* 10 ms of GPU time: 200 forwards of 50 µs */
    double x[600];
    for (int i = 0; i < 600; i++)
        x[i] = 50;
    const char *why;
    int n = run_rule(&r, x, 600, 0.0001, &why);
    cr_assert_str_eq(why, "noise");
    cr_assert_eq(n, 200, "stopped at %d", n);
}

Test(stop_rule, a_noisy_kernel_whose_median_settled_stops_converged)
{
    const stop_rule r = STOP_RULE_DEFAULT;
    double x[600];
    srand(7);
    for (int i = 0; i < 600; i++) /* ±30% spread, symmetric about 1000: the median settles near it */
        x[i] = 1000 + (i % 2 ? 1 : -1) * (300.0 * (i % 97) / 97.0);
    const char *why;
    int n = run_rule(&r, x, 600, 0.001, &why);
    cr_assert(why, "never stopped");
    cr_assert_str_eq(why, "converged", "%s at %d", why, n);
    cr_assert_geq(n, 3 * r.min_forwards);
    double noise = stop_rule_noise(x, n);
    cr_assert_gt(noise, r.noise_target, "converged means the noise target was not met (%g)", noise);
}

Test(stop_rule, the_caps_stop_a_variant_that_never_settles)
{
    const stop_rule r = STOP_RULE_DEFAULT;
    static double x[600];
    for (int i = 0; i < 600; i++) /* a drifting median: never converged, never quiet */
        x[i] = 1000.0 * (1 + 0.01 * i) * (i % 2 ? 1.3 : 0.7);
    const char *why;
    int n = run_rule(&r, x, 600, 0.001, &why);
    cr_assert_str_eq(why, "max_forwards");
    cr_assert_eq(n, r.max_forwards);
    n = run_rule(&r, x, 600, 0.5, &why); /* 0.5 s per forward: the 10 s cap after 20 */
    cr_assert_str_eq(why, "time_cap");
    cr_assert_eq(n, 20);
}
