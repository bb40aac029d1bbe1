/* The stop rule of --iters auto (stop_rule.h). */
#include "stop_rule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of x[0..n) using scratch (n doubles). */
static double median_into(const double *x, int n, double *scratch)
{
    memcpy(scratch, x, sizeof *x * (size_t)n);
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_double);
    return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

double stop_rule_noise(const double *x, int n)
{
    if (n < 2)
        return NAN;
    double *s = malloc(sizeof *s * (size_t)n);
    if (!s)
        return NAN;
    double med = median_into(x, n, s);
    for (int i = 0; i < n; i++)
        s[i] = fabs(x[i] - med);
    double *d = malloc(sizeof *d * (size_t)n);
    double mad = d ? median_into(s, n, d) : NAN;
    free(d);
    free(s);
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
        double *s = malloc(sizeof *s * (size_t)n);
        if (!s)
            return NULL;
        double now = median_into(x, n, s), before = median_into(x, n - r->min_forwards, s);
        free(s);
        if (now > 0 && fabs(now - before) / now <= r->noise_target / 5)
            return "converged";
    }
    return NULL;
}
