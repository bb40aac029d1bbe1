/* What a variant predicts about its own forward before anything runs, and the ceilings
 * attnprof measures on the GPU to judge the predictions against. Plain C, no CUDA type:
 * the variants fill a prediction (one file per variant under src/recorder/variants, from the shape alone), it travels in
 * run.json, and the report compares it with counters.json without a GPU (predict.h). */
#ifndef ATTNPROF_PREDICTION_H
#define ATTNPROF_PREDICTION_H

#include "attn_types.h"

/* The pipe a class of kernels should issue its math on. */
typedef enum attn_pipe {
    PIPE_NONE = 0,   /* no claim */
    PIPE_TENSOR = 1, /* tensor cores: HMMA/HGMMA instructions, no FP32 FFMA bulk */
    PIPE_FMA = 2,    /* CUDA cores: FP32 FFMA, zero tensor instructions */
} attn_pipe;

/* A class of GPU operations in one forward, found by name. `match` is one or more
 * substrings separated by '|' ("gemm|nvjet"); an operation whose name contains any of
 * them belongs to the class. Byte and FLOP figures are for all `count` operations of the
 * class together in one forward; 0 means "no prediction". */
#define PRED_MAX_CLASSES 8
typedef struct pred_class {
    char label[48];
    char match[96];
    int count;            /* operations of the class per forward */
    int is_copy;          /* a Memcpy: not a kernel, measured as forward minus kernels */
    double dram_bytes;    /* minimum DRAM bytes read + written */
    double l2_bytes;      /* L2 <-> SM bytes the tiling implies (0: no claim) */
    double flops;         /* FLOPs the class executes */
    attn_pipe pipe;
} pred_class;

typedef struct attn_prediction {
    int valid;              /* 0: the variant declared nothing (old archives) */
    double useful_flops;    /* causal attention: 2·B·H·S²·D (half of 4·B·H·S²·D) */
    double executed_flops;  /* what the kernels actually compute (full matrices, tiles) */
    double min_dram_bytes;  /* the forward's minimum DRAM traffic */
    int n;
    pred_class cls[PRED_MAX_CLASSES];
} attn_prediction;

/* Ceilings measured in the same run (src/recorder/calibrate.c). NAN where not measured. */
typedef struct ceilings {
    int measured;                /* 1 when --calibrate ran */
    double tensor_bf16_tflops;   /* cuBLAS bf16 GEMM, large square */
    double fp32_fma_tflops;      /* cuBLAS SGEMM, TF32 off */
    double copy_tbps;            /* cudaMemcpy DtoD: (read + write) bytes / s, in TB/s */
    char method[200];
    char error[200];             /* why not measured */
    /* "" when measured in this run; else the archive (its directory's name) whose run on the
     * same GPU (the same UUID) measured them: `run --ceilings-from`, which a sweep passes to
     * every shape after a GPU's first, since the ceilings are the GPU's, not the shape's. */
    char source[128];
} ceilings;

/* c->source = name with every byte but letters, digits and "._+-" made '_' (it is shown in
 * captions and sentences of every format). */
void ceilings_set_source(ceilings *c, const char *name);

/* Adds a class (returns the class, or NULL when full). */
pred_class *prediction_add(attn_prediction *p, const char *label, const char *match, int count, double dram_bytes,
                           double flops, attn_pipe pipe);
/* 1 if `name` belongs to the class (any '|'-separated substring of match). */
int pred_class_matches(const pred_class *c, const char *name);
/* run.json's words for a pipe, in attn_pipe's order (NULL-terminated). */
extern const char *const pipe_words[];
const char *pipe_name(attn_pipe p);

/* Shape arithmetic for the variants' predictions. Bytes of one [B,H,S,D] bf16 tensor and
 * of one [B,H,S,S] bf16 score matrix; the causal useful FLOPs 2·B·H·S²·D. */
double prediction_io_bytes(const attn_shape *s);
double prediction_scores_bytes(const attn_shape *s);
double prediction_useful_flops(const attn_shape *s);
/* A fused causal kernel with block_m query rows per block and block_n keys per tile that
 * skips key tiles wholly above the diagonal: the FLOPs it executes (Q·Kᵀ and P·V) and the
 * K/V bytes its blocks read from the L2 (every query tile streams its keys again). */
void prediction_fused_tiles(const attn_shape *s, int block_m, int block_n, double *flops, double *kv_l2_bytes);
/* The whole prediction of a variant that is one such fused kernel (kernels whose name
 * starts with `match`), compiled for kernel_dim >= s->dim: Q, K, V read from DRAM once and
 * O written once plus extra_bytes (e.g. a log-sum-exp per row); the FLOPs executed at
 * kernel_dim (a padded head dim computes its zero columns), the bytes moved at s->dim.
 * Clears p first. */
void prediction_fused_kernel(attn_prediction *p, const attn_shape *s, int kernel_dim, int block_m, int block_n,
                             double extra_bytes, const char *match);

/* Ridge point of the roofline in FLOP per DRAM byte (tensor roof / copy roof); NAN if unknown. */
double ceilings_ridge(const ceilings *c);

#endif
