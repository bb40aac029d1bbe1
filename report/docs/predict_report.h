/* The "Predict, then verify" section of report.md (predict.h has the checks). */
#ifndef ATTNPROF_PREDICT_REPORT_H
#define ATTNPROF_PREDICT_REPORT_H

#include <stdio.h>

#include "analysis.h"

/* Writes the section: counter status and ceilings, each variant's checks (missed ones
 * first) and its kernels' counters. Call only when predict_available(a). */
void predict_write_markdown(FILE *f, const analysis *a);

#endif
