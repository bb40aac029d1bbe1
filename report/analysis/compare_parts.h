/* The parts of the comparison's build (compare.c), one file each: the metadata
 * fields, the kernel pairing by role and the findings diff. Internal to analysis/. */
#ifndef ATTNPROF_COMPARE_PARTS_H
#define ATTNPROF_COMPARE_PARTS_H

#include "compare.h"

/* compare_fields.c: m->fields (one row per field, each archive's value, differs and
 * unrecorded marked) and m->differs_sentence. */
void compare_fields_fill(compare_data *m);

/* compare_kernels.c: the distinct operations of a variant's forwards into *out
 * (malloc'd; each summary's samples too). Returns their count, 0 for none. */
int compare_kernels_summarise(const variant_analysis *va, const device_props *dev, kernel_summary **out);
/* Pairs the baseline's operations with another run's, within each role, into d->rows. */
void compare_kernels_diff(kernel_diff *d, const kernel_summary *base, int nb, const kernel_summary *other, int no,
                          double min_effect);
/* Each role's summed µs and operation count per forward into rt[ROLE_COUNT]. */
void compare_roles_summarise(const variant_analysis *va, role_time *rt);

/* compare_findings.c: the findings of one side only and those the other cannot test. */
void compare_findings_diff(kernel_diff *d, const variant_analysis *base, const variant_analysis *other);

#endif
