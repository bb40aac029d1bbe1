/* The recorder as the CLI sees it. Everything that needs CUDA (runner, CUPTI
 * tracing, variants, kernels, cuBLAS, cuDNN) is built into one shared object,
 * libattnprof_recorder.so, which `attnprof run` and `attnprof list` load with
 * dlopen. The attnprof binary itself links only the report half, so `report` (and
 * every other GPU-free command) starts without loading a CUDA library, and a build
 * without the CUDA Toolkit has every command but `run`.
 *
 * Why one shared object rather than dlopen'ing cudart, cuBLAS, cuDNN and CUPTI
 * behind a function table: the recorder calls well over a hundred functions of
 * those libraries, and nvcc's generated code registers the kernels with cudart
 * when the object loads. A table would wrap all of that by hand; the shared object
 * keeps the recorder ordinary CUDA code and moves the whole dependency behind one
 * dlopen and one symbol. */
#ifndef ATTNPROF_RECORDER_H
#define ATTNPROF_RECORDER_H

#include <stddef.h>

#include "run_config.h"
#include "run_info.h"
#include "trace.h"

/* Bumped whenever recorder_api, run_config, trace or run_info change shape. */
#define RECORDER_ABI 5 /* 2: counters (main); 3: variant status "skipped"; 4: run_info GPU identity, device bytes; 5: attn_shape kv_heads, q_seq */
#define RECORDER_ENTRY "attnprof_recorder_api"
#define RECORDER_FILE "libattnprof_recorder.so"

typedef struct recorder_variant {
    const char *name, *title, *what_changed;
    int expected_ops;
} recorder_variant;

typedef struct recorder_api {
    int abi;
    /* sizeof of the structs crossing the boundary, checked by the loader. */
    size_t sizeof_trace, sizeof_run_info, sizeof_run_config;
    int n_variants;
    const recorder_variant *variants; /* series order */
    /* Resolves cfg->variant_list, checks the shape, runs the batch. Returns an
     * EXIT_* code: EXIT_OK or EXIT_VARIANT_FAILED when the batch ran (trace and
     * run_info are then complete), another code with a one-line `err` otherwise. */
    int (*record_batch)(const run_config *cfg, trace *t, run_info *info, char *err, size_t errlen);
} recorder_api;

/* The one symbol the shared object exports for the CLI. */
const recorder_api *attnprof_recorder_api(void);

/* recorder_load.c: finds and loads the recorder. Looks at $ATTNPROF_RECORDER, then
 * beside the executable, then in ../lib/attnprof/ next to it. Returns EXIT_OK, or
 * EXIT_NO_DEVICE with a one-line reason (no CUDA in this build, library missing,
 * CUDA libraries not loadable). */
int recorder_load(const recorder_api **api, char *err, size_t errlen);

#endif
