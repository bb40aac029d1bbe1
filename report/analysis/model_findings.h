/* The series' findings on a user's model (imported PyTorch traces): where attention
 * time goes and which implementation ran, a kernel not built for the recorded GPU, a
 * fallback to SDPA's math backend, score matrices materialised by eager attention,
 * CPU-bound steps. Derived from the model view (model_roles.h) and the recorded
 * attention inputs (model_inputs.h); each rule's threshold is stated where it is. */
#ifndef ATTNPROF_MODEL_FINDINGS_H
#define ATTNPROF_MODEL_FINDINGS_H

#include "analysis.h"

/* Adds the variant's model findings (nothing when they do not apply). */
void model_findings_derive(const analysis *a, variant_analysis *va);

#endif
