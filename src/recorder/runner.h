/* The batch: for each selected variant, setup → warm-up → correctness check →
 * recorded forwards (NVTX "attn_fwd", CUPTI tracing) → CUPTI-overhead probe →
 * fully-masked-rows check → teardown. Fills the trace and run_info. */
#ifndef ATTNPROF_RUNNER_H
#define ATTNPROF_RUNNER_H

#include "run_config.h"
#include "run_info.h"
#include "trace.h"
#include "variant.h"

/* A run_config with its variant names resolved against the registry, in series order. */
typedef struct run_plan {
    run_config c;
    const attn_variant *variants[RUN_MAX_VARIANTS];
    int n_variants;
    /* Default list only (no --variants): why variants[i] is skipped (cannot take the
     * shape, or too little device memory), "" when it runs. A variant named in
     * --variants is never skipped: it stops the batch, as the user asked for it. */
    int named;
    char skip[RUN_MAX_VARIANTS][ATTN_ERR_LEN];
} run_plan;

/* Resolves cfg->variant_list (unknown names are usage errors) and checks that every
 * selected variant takes the shape. A named variant that cannot is EXIT_USAGE with a
 * one-line message that says what to change; with the default list it is marked
 * skipped (plan->skip) and the others run, unless none can (EXIT_USAGE). */
int runner_plan(const run_config *cfg, run_plan *plan, char *err, size_t errlen);

/* Returns an EXIT_* code: EXIT_OK or EXIT_VARIANT_FAILED when the batch ran (the
 * trace and run_info are then complete), another code with `err` set otherwise. */
int runner_record_batch(const run_plan *plan, trace *t, run_info *info, char *err, size_t errlen);

/* Fills device_props from the CUDA device (runner.c; used by tests on the GPU too). */
int runner_device_props(int dev, device_props *p, char *err, size_t errlen);

#endif
