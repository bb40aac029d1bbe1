/* The forwards of a file's slice of an imported trace (kineto_import.c's steps). Internal
 * to report/io/. */
#ifndef ATTNPROF_KINETO_FORWARDS_H
#define ATTNPROF_KINETO_FORWARDS_H

#include "trace.h"

#include <stddef.h>

/* Marks the forwards among the ranges [ranges0, n_ranges) of `t`: the user_annotation ranges
 * named `range`, else (unless explicit_range) each ProfilerStep#N; numbered from 0 in time
 * order, named `variant`; the other annotations get the variant with iteration -1. The marker
 * text says which. Returns how many, or minus the exit code with one line in err:
 * -EXIT_BAD_ARCHIVE when the trace has no forward, -EXIT_USAGE when an explicit --range names
 * none (the line lists the ranges the trace holds). */
int kineto_mark_forwards(trace *t, size_t ranges0, const char *path, const char *variant, const char *range,
                         int explicit_range, char *marker, size_t markerlen, char *err, size_t errlen);
/* Takes the mark off the forwards of the slice that hold no launch call of a kept GPU
 * operation (ops [ops0..), calls [apis0..), same process) and numbers the rest again.
 * Returns the forwards left; *dropped, those left out. */
int kineto_drop_empty_forwards(trace *t, size_t ops0, size_t apis0, size_t ranges0, int *dropped);

#endif
