/* summary.csv, samples.csv and kernels.csv of an archive (report_csv.c): the text of
 * each, from a finished analysis. The caller frees it. */
#ifndef ATTNPROF_REPORT_CSV_H
#define ATTNPROF_REPORT_CSV_H

#include "analysis.h"

/* variant,pass,iteration,cuda_us,cpu_us,span_us,event_us,sm_mhz,mem_mhz,power_w,temp_c,throttled:
 * one row per recorded forward (throttled ones too), in recording order per variant. */
char *samples_csv(const analysis *a);
/* One row per variant: status, title, change, counts, CUDA and CPU times, error, the CUPTI
 * probe's times and the findings as plain text. */
char *report_summary_csv(const analysis *a);
/* One row per GPU operation of each of those forwards: role, kind, name, start (µs from
 * the forward's first operation), duration, grid, block, registers, shared memory,
 * occupancy (kernels), bytes (copies and memsets). */
char *kernels_csv(const analysis *a);

#endif
