/* What `attnprof run` was asked to do, as the command line says it. Plain C with no
 * CUDA type: the CLI fills it without loading the recorder, and the recorder
 * (libattnprof_recorder.so) resolves the variant names against its registry. */
#ifndef ATTNPROF_RUN_CONFIG_H
#define ATTNPROF_RUN_CONFIG_H

#define RUN_COUNTERS_MAX_GIB_DEFAULT 4
#define RUN_MAX_REPLICATES 10

#include "attn_types.h"

typedef struct attn_options {
    int cudnn_replan; /* cudnn: rebuild the execution plan inside every forward */
    int backward;     /* run --backward: keep what the backward needs, allocate its buffers */
} attn_options;

typedef struct run_config {
    attn_shape shape;
    unsigned long long seed;
    int iters;      /* recorded forwards per variant and pass; 0: --iters auto (the stop rule) */
    int warmup;
    int replicates; /* --replicate K: passes of the whole batch, variants interleaved */
    int l2_cold;    /* --l2 cold: the L2 flushed before each recorded forward */
    int lock_clocks; /* --lock-clocks: lock the SM clock at its maximum (NVML) */
    int quiet;
    attn_options options;
    /* --variants as given (comma-separated names), or NULL for every variant. The
     * recorder runs them in series order, whatever order they are named in. */
    const char *variant_list;
    double rel_error_threshold;
    int heads_to_check;
    int rows_to_check; /* --check-rows: query rows per checked head; 0 every row, -1 the default
                        * (every row up to S = REFERENCE_ALL_ROWS_SEQ, else REFERENCE_DEFAULT_ROWS) */
    int counters;  /* --counters (default) / --no-counters: the hardware-counter pass */
    int calibrate; /* --calibrate (default) / --no-calibrate: measure the ceilings */
    /* --counters-max-gib: the counter pass measures a variant only when its device memory
     * at this shape is at most this many GiB (kernel replay saves and restores it for every
     * pass); a larger one's counters are skipped and the archive says why. */
    int counters_max_gib;
    /* --ceilings-from RUN.JSON: take the ceilings from that archive when it was recorded on this
     * very GPU (same UUID) and measured them; otherwise measure them here (NULL: measure). */
    const char *ceilings_from;
} run_config;

#endif
