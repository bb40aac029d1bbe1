/* The batch: for each selected variant, setup → warm-up → correctness check →
 * recorded forwards (NVTX "attn_fwd", CUPTI collecting) → CUPTI-overhead probe →
 * fully-masked-rows check → teardown. Fills the trace and run_info. */
#ifndef ATTNPROF_RUNNER_H
#define ATTNPROF_RUNNER_H

#include "run_info.h"
#include "trace.h"
#include "variant.h"

typedef struct run_config {
    attn_shape shape;
    unsigned long long seed;
    int iters, warmup;
    int quiet;
    attn_options options;
    const attn_variant *variants[RUN_MAX_VARIANTS];
    int n_variants;
    double rel_error_threshold;
    int heads_to_check;
} run_config;

/* Returns an EXIT_* code: EXIT_OK or EXIT_VARIANT_FAILED when the batch ran (the
 * trace and run_info are then complete), another code with `err` set otherwise. */
int runner_collect(const run_config *cfg, trace *t, run_info *info, char *err, size_t errlen);

/* Fills device_props from the CUDA device (runner.c; used by tests on the GPU too). */
int runner_device_props(int dev, device_props *p, char *err, size_t errlen);

#endif
