/* Medians for report/: the per-forward statistics (analysis.c), the bootstrap's
 * resampled medians (bootstrap.c) and the medians of compare and sweep all sort
 * with the same comparison and take the middle the same way, so they agree on
 * what "median" means (an even count averages the two middle values). */
#include "median.h"
#include "alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int median_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_sorted(const double *v, int n) { return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

double median_of(const double *v, int n)
{
    if (n <= 0)
        return NAN;
    double *c = malloc(sizeof *c * (size_t)n);
    if (!c)
        attn_oom();
    memcpy(c, v, sizeof *c * (size_t)n);
    qsort(c, (size_t)n, sizeof *c, median_cmp_double);
    double m = median_sorted(c, n);
    free(c);
    return m;
}
