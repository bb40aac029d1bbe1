/* The variant interface: every attention implementation the batch runs is one
 * `attn_variant` (one file under src/variants/) plus one line in registry.c.
 * Tensors are bf16, laid out [B, H, S, D] contiguous; attention is causal with
 * scale 1/sqrt(D). */
#ifndef ATTNPROF_VARIANT_H
#define ATTNPROF_VARIANT_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "attn_types.h"
#include "prediction.h"
#include "run_config.h"

/* Outcome of setup/forward. UNAVAILABLE means "cannot run here" (library too
 * old, no engine for this GPU): reported with its reason, the batch goes on. */
enum { ATTN_OK = 0, ATTN_FAILED = 1, ATTN_UNAVAILABLE = 2 };

typedef struct attn_variant {
    const char *name;         /* CLI name: naive, naive_inplace, math, efficient, flash, cudnn */
    const char *title;        /* the series' row title */
    const char *what_changed; /* the series' "what we changed" column, one line */
    int expected_ops;         /* GPU operations (kernels + memcpy + memset) per forward */
    int expected_memcpy;      /* of which memcpy */
    /* 0 if the variant can take this shape, else 1 with the reason in `why`. */
    int (*check_shape)(const attn_shape *shape, attn_error *why);
    /* Device bytes the variant allocates for this shape (q/k/v/out excluded). */
    size_t (*device_bytes)(const attn_shape *shape);
    int (*setup)(void **state, const attn_shape *shape, const attn_options *opt,
                 cudaStream_t stream, attn_error *err);
    /* Enqueue one forward on `stream`; must not synchronize. */
    int (*forward)(void *state, const void *q, const void *k, const void *v, void *out,
                   cudaStream_t stream, attn_error *err);
    void (*facts)(void *state, attn_facts *facts); /* optional */
    /* Optional: one forward with a caller-given boolean mask [S, S] on the device
     * (nonzero = masked out) in place of the causal mask. The runner uses it for the
     * fully-masked-rows check (does a row with every key masked give NaN or 0?). */
    int (*forward_masked)(void *state, const void *q, const void *k, const void *v, void *out,
                          const uint8_t *mask, cudaStream_t stream, attn_error *err);
    void (*teardown)(void *state);
    /* Optional: what one forward should cost, from the shape and the GPU's compute
     * capability alone (before anything runs): FLOPs, minimum DRAM bytes and the pipe
     * of each class of kernels (prediction.h). It travels in run.json; the report checks
     * it against the counter pass (report/analysis/predict.c). */
    void (*predict)(const attn_shape *shape, int cc_major, int cc_minor, attn_prediction *p);
} attn_variant;

/* registry.c: the variants in series order. */
extern const attn_variant *const attn_registry[];
extern const int attn_registry_count;
const attn_variant *attn_find_variant(const char *name);

/* Helpers for variants (variant_util.c). */
void attn_fact_add(attn_facts *f, const char *key, double number, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int attn_fail(attn_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* When a fused kernel runs a head dim `dim` on the kernel compiled for the larger
 * `padded_dim` (columns zero-filled in shared memory), the fact that says so:
 * key "head_dim_padding", number padded_dim. Nothing when they are equal. */
void attn_fact_head_dim_padding(attn_facts *f, int dim, int padded_dim);
/* The checks every fused kernel of ours makes of a shape (flash, efficient): its head dim
 * compiled for (`padded_dim` < 0: none up to `max_head_dim`), S, B, H at least 1, and S*D
 * within the kernels' int offsets inside a head. 0, or attn_fail's code with "NAME: ..." in
 * why; the kernel's own grid limits are checked after it. */
int attn_fused_shape_check(const char *name, const attn_shape *s, int padded_dim, int max_head_dim,
                           attn_error *why);
/* Compute capability and opt-in shared memory per block of the current device. */
int attn_device_caps(int *major, int *minor, int *smem_optin, attn_error *err);
/* Prediction helpers: prediction.h (prediction_io_bytes, prediction_fused_tiles, ...). */

#endif
