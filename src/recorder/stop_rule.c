/* The stop rule of --iters auto (stop_rule.h). */
#include "stop_rule.h"

#include "median.h"

#include <math.h>
#include <stdlib.h>

double stop_rule_noise(const double *x, int n)
{
    if (n < 2)
        return NAN;
    double med = median_of(x, n);
    double *dev = malloc(sizeof *dev * (size_t)n);
    if (!dev)
        return NAN;
    for (int i = 0; i < n; i++)
        dev[i] = fabs(x[i] - med);
    double mad = median_of(dev, n);
    free(dev);
    if (!(med > 0))
        return NAN;
    return 1.2533 * 1.4826 * mad / sqrt((double)n) / med;
}

const char *stop_rule_check(const stop_rule *r, const double *x, int n, double wall_s, double *noise)
{
    *noise = stop_rule_noise(x, n);
    if (n >= r->max_forwards)
        return "max_forwards";
    if (n >= 1 && wall_s >= r->time_cap_s)
        return "time_cap";
    double gpu_s = 0;
    for (int i = 0; i < n; i++)
        gpu_s += x[i] / 1e6;
    if (n < r->min_forwards || gpu_s < r->min_gpu_s * (1 - 1e-9)) /* a sum of µs in seconds: no float edge */
        return NULL;
    if (*noise <= r->noise_target)
        return "noise";
    if (n >= 3 * r->min_forwards) {
        double now = median_of(x, n), before = median_of(x, n - r->min_forwards);
        if (now > 0 && fabs(now - before) / now <= r->noise_target / 5)
            return "converged";
    }
    return NULL;
}
