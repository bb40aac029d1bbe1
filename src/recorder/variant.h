/* The variant interface: every attention implementation the batch runs is one
 * `attn_variant` (one file under src/variants/) plus one line in registry.c.
 * Tensors are bf16, laid out [B, H, S, D] contiguous; attention is causal with
 * scale 1/sqrt(D). Grouped-query and decode shapes (attn_types.h): q and out are
 * [B, H, q_seq, D], k and v [B, kv_heads, S, D], the causal mask aligned to the end of the keys;
 * a variant that cannot take one says why in check_shape. */
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
    /* Optional: the same for a shape where they differ (grouped-query K/V expanded by copy
     * kernels, decode's split-KV combine); on the current device. Returns the operations and
     * sets *n_memcpy. NULL: expected_ops and expected_memcpy hold for every shape. */
    int (*expected_ops_for)(const attn_shape *shape, int *n_memcpy);
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
    /* Optional (`run --backward`): enqueue the backward of the last forward on `stream`, from
     * what that forward kept in the variant's state and the incoming gradient dout, into dq, dk,
     * dv (bf16, the layout of q, k, v), with `workspace` (bwd_workspace_bytes of device memory,
     * allocated by the runner); must not synchronize, and may run many times after one forward.
     * NULL: the variant has no backward (reported as skipped, with bwd_missing as the reason). */
    int (*backward)(void *state, const void *q, const void *k, const void *v, const void *out, const void *dout,
                    void *dq, void *dk, void *dv, void *workspace, cudaStream_t stream, attn_error *err);
    size_t (*bwd_workspace_bytes)(const attn_shape *shape);
    /* 0 if the backward takes this shape, else 1 with the reason (NULL: any the forward takes). */
    int (*bwd_check_shape)(const attn_shape *shape, attn_error *why);
    int expected_bwd_ops; /* GPU operations per backward, as the variant's file predicts them */
    /* Device bytes the forward keeps for the backward beyond q, k, v (the S×S probabilities of
     * the unfused chains, the log-sum-exp of flash), at this shape, and what they are. */
    double (*bwd_kept_bytes)(const attn_shape *shape);
    const char *bwd_kept;
    const char *bwd_missing; /* backward == NULL: why */
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
 * compiled for in the kernel family (kernels/families.h: none when the family pads it to no
 * compiled D, up to the family's largest), S, B, H at least 1, and S*D within the kernels'
 * int offsets inside a head. 0, or attn_fail's code with "NAME: ..." in why; the kernel's own
 * grid limits are checked after it. */
struct kernel_family;
struct kernel_config_desc;
int attn_fused_shape_check(const char *name, const attn_shape *s, const struct kernel_family *family,
                           attn_error *why);
/* The family's configuration that head dim `dim` runs by default on the current device, into
 * *config and *desc: ATTN_OK, or ATTN_UNAVAILABLE with "NAME: ..." in err when no kernel of
 * the family takes the head dim on this compute capability or its shared memory exceeds the
 * device's opt-in limit (attn_device_caps' errors as they are). */
int attn_fused_pick(const char *name, const struct kernel_family *family, int dim, int *config,
                    struct kernel_config_desc *desc, attn_error *err);
/* Compute capability and opt-in shared memory per block of the current device. */
int attn_device_caps(int *major, int *minor, int *smem_optin, attn_error *err);
/* Prediction helpers: prediction.h (prediction_io_bytes, prediction_fused_tiles, ...), which
 * are of multi-head shapes; for grouped-query and decode shapes these (variant_util.c): the
 * useful FLOPs of the causal mask aligned to the end of the keys, the bytes of q (or out) and of
 * k (or v), and the prediction of one fused kernel (count operations) that reads Q, K, V once
 * and writes O once plus extra_bytes. */
double attn_gqa_useful_flops(const attn_shape *s);
double attn_q_bytes(const attn_shape *s);
double attn_kv_bytes(const attn_shape *s);
void attn_predict_gqa_fused(attn_prediction *p, const attn_shape *s, int kernel_dim, double extra_bytes,
                            const char *label, const char *match, int count);
/* A decode step's executed FLOPs in a fused kernel whose tensor-core tiles hold tile_rows query
 * rows: `packed` 1 when a tile takes the rows of all query heads of one key/value group together
 * (group × q_seq rows per key/value head), 0 when each query head has its own tiles; every tile
 * runs against all S keys (the queries sit at the end of the keys). Sets the first class's FLOPs
 * and executed_flops of a prediction attn_predict_gqa_fused made. */
void attn_predict_decode_tiles(attn_prediction *p, const attn_shape *s, int kernel_dim, int tile_rows, int packed);
/* The current device's multiprocessors (0 when it cannot say). */
int attn_device_sms(void);

#endif
