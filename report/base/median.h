/* Medians of doubles, and the comparison that sorts them: one copy for report/. */
#ifndef ATTNPROF_MEDIAN_H
#define ATTNPROF_MEDIAN_H

/* qsort comparison of two doubles, ascending (NaN compares equal to everything). */
int median_cmp_double(const void *a, const void *b);
/* Median of n >= 1 values already sorted ascending: the middle one, or the mean of
 * the two middle ones. */
double median_sorted(const double *v, int n);
/* Median of n values in any order (v is not changed); NAN when n <= 0. Aborts
 * through attn_oom when no copy can be allocated. */
double median_of(const double *v, int n);

#endif
