/* Roles and layers of the GPU operations of an imported model trace: what each
 * operation is for (attention and its parts, GEMM, convolution, normalization, ...),
 * in which phase it ran (forward, backward, optimizer), and which repeated block
 * (layer) it belongs to; per step (a forward range: ProfilerStep#N) and as medians
 * over steps. Derived from the trace alone (each op's launching CPU op chain,
 * gpu_op.cpu_op_path, then its kernel name), so a report re-rendered from the archive
 * gives the same numbers. roles.csv and the report's model section are written
 * from it (model_section.h, in docs/). */
#ifndef ATTNPROF_MODEL_ROLES_H
#define ATTNPROF_MODEL_ROLES_H

#include "analysis.h"

typedef enum model_role {
    MROLE_ATTN_FUSED = 0, /* one fused attention op: SDPA's flash/efficient/cuDNN/math backend, FlexAttention */
    MROLE_ATTN_QK,        /* eager attention: the QKᵀ GEMM */
    MROLE_ATTN_SCALE,     /* eager: the 1/√D scale (mul/div between QKᵀ and softmax) */
    MROLE_ATTN_MASK,      /* eager: the mask (add/masked_fill/where between QKᵀ and softmax) */
    MROLE_ATTN_SOFTMAX,   /* eager: the softmax over the scores */
    MROLE_ATTN_DROPOUT,   /* eager: dropout on the probabilities */
    MROLE_ATTN_PV,        /* eager: the PV GEMM */
    MROLE_ATTN_CONVERT,   /* SDPA's own conversion of its inputs (inside aten::scaled_dot_product_attention,
                           * outside its backend op): a boolean attn_mask made additive, autocast's casts */
    MROLE_ATTN_BACKWARD,  /* the backward of a fused attention op */
    MROLE_ATTN_INPUTS,    /* not attention: a compiler-fused kernel that only computes SDPA's inputs (RoPE, the
                           * expand of K/V, the mask build), named after the SDPA node it feeds */
    MROLE_KV_EXPAND,      /* not attention: the copies that repeat K/V heads before SDPA (repeat_kv's expand +
                           * reshape, repeat_interleave), when the trace recorded that expansion's shapes */
    MROLE_GEMM, MROLE_CONV, MROLE_NORM, MROLE_SOFTMAX, MROLE_ELEMENTWISE, MROLE_REDUCTION, MROLE_OPTIMIZER, MROLE_COPY,
    MROLE_MEMSET, MROLE_COMM, MROLE_OTHER, MROLE_COUNT
} model_role;

typedef enum model_phase { MPHASE_FORWARD = 0, MPHASE_BACKWARD, MPHASE_OPTIMIZER, MPHASE_COUNT } model_phase;

const char *model_role_name(model_role r);   /* "attention_fused", "gemm", ... (roles.csv) */
const char *model_phase_name(model_phase p); /* "forward", "backward", "optimizer" */
int model_role_is_attention(model_role r);

/* The role and phase of one op from its CPU op chain and kernel name, without the
 * ops around it (eager attention's parts need those: model_step_roles). */
model_role model_role_of(const gpu_op *op, model_phase *phase);
/* Roles and phases of a forward's ops into role[0..n_ops) and phase[0..n_ops), eager
 * attention's parts included (found from the ops around each softmax); returns the eager
 * blocks found and sets *out_of_place to those with an out-of-place aten::masked_fill. */
int model_step_roles(const forward *f, model_role *role, model_phase *phase, int *out_of_place);
/* As model_step_roles, when the variant's import recorded K/V heads repeated before SDPA
 * (kv_expand = 1): the copies launched by the reshape/repeat_interleave right before each
 * attention op are MROLE_KV_EXPAND. */
int model_step_roles_kv(const forward *f, int kv_expand, model_role *role, model_phase *phase, int *out_of_place);
/* The roles and phases of one forward of a variant into role[0..n_ops) and phase[0..n_ops),
 * as its model view reads them (K/V expansion copies where the import recorded them):
 * what kernels.csv's role column says of a model trace's operations. */
void model_forward_roles(const variant_analysis *va, const forward *f, model_role *role, model_phase *phase);
/* What one of a variant's recorded ranges is: "step" for a model trace whose steps hold
 * backward or optimizer work (a training step, with its forward and backward phases),
 * else "forward" (an attention forward, or a model's inference step: a forward). */
const char *model_unit_word(const variant_analysis *va);
/* As model_unit_word over a run's variants that recorded a range: "step" when any is. */
const char *model_unit_word_of_run(const analysis *a);
/* 1 when an op was replayed from a CUDA graph (its launch call is cudaGraphLaunch or
 * cuGraphLaunch): the trace holds no op chain for it. */
int model_graph_replayed(const forward *f, int k);
/* The SDPA backend or fused implementation an attention op ran in: "cuDNN", "flash",
 * "memory-efficient", "math", "FlexAttention (Triton)", "fused kernel", or NULL. Read off
 * the CPU op chain (an attention op among the ops around the launch, matched whole), or,
 * for an op with no chain (replayed from a CUDA graph), off an attention kernel's name. */
const char *model_attn_backend(const gpu_op *op);
/* 1 when an op was launched by Inductor (torch.compile): its kernel is named
 * triton_<kind>_fused_<ops>_<n>, kind poi/red/per/tem/...; *kind and *ops (not
 * NUL-terminated, *ops_len bytes) point into the name. */
int model_inductor_kernel(const gpu_op *op, char kind[8], const char **ops, size_t *ops_len);
/* The GPU architecture a kernel's name says it was built for (…_sm80_… → 80, cuBLAS's
 * cutlass_75_… → 75), or 0. */
int model_kernel_sm(const char *kernel_name);

typedef struct model_role_row {
    model_phase phase;
    model_role role;
    char implementation[96];
    double ops, us, share; /* medians over steps: ops and µs per step, fraction of the step's CUDA time */
} model_role_row;

typedef struct model_layer {
    int ops;
    double us, attn_us; /* in the representative step */
} model_layer;

#define MODEL_MAX_LAYERS 512
#define MODEL_MAX_LAYER_OPS 20000 /* the period search is quadratic in the step's forward ops */

typedef struct model_view {
    int n_steps;
    double step_us;               /* median CUDA time per step */
    int n_rows;
    model_role_row rows[MPHASE_COUNT * MROLE_COUNT];
    double attn_share[MPHASE_COUNT]; /* attention roles' share of the step (median), per phase */
    double attn_us[MPHASE_COUNT];
    double attn_share_total;      /* all phases together (median over steps of their sum) */
    int has_phase[MPHASE_COUNT];
    /* layers of the forward phase of the representative step (period of the repeating op sequence) */
    int n_layers, layer_period, layer_first_op;
    int forward_ops;              /* forward-phase ops of the representative step (searched up to MODEL_MAX_LAYER_OPS) */
    model_layer layers[MODEL_MAX_LAYERS];
    int eager_blocks;             /* eager attention blocks (QKᵀ … softmax … PV) in the representative step */
    int eager_out_of_place_mask;  /* of them, with an out-of-place aten::masked_fill (a copy of the scores) */
    int graph_ops, step_ops;      /* of the representative step's ops, those replayed from CUDA graphs */
    const gpu_op *attn_kernel;    /* the longest attention kernel of the representative step */
    const char *backend;
} model_view;

/* Builds the view of a variant; 0, or ATTN_NONE when it has no step or no CPU op chains (then nothing to say). */
int model_view_build(const variant_analysis *va, model_view *v);

/* The per-step numbers the view's medians are taken over, for compare (a step is a sample):
 * each step's CUDA time, µs and op count by phase and role, and per layer. A step's layer k
 * is its forward-phase ops at the positions of the representative step's layer k, when the
 * step launches the same forward op sequence (each op's CPU op chain and kernel name, over the
 * layers' span); a step that launches another sequence has no layer times (NAN). */
typedef struct model_steps {
    int n_steps;
    double *step_us;                 /* [s] */
    double *us, *ops;                /* [model_steps_cell(s, phase, role)] */
    int n_layers;                    /* the view's */
    double *layer_us, *layer_attn_us; /* [s * n_layers + l]; NAN for a step of another op sequence */
    int layer_steps;                 /* steps with layer times */
} model_steps;

static inline size_t model_steps_cell(int s, int phase, int role)
{
    return ((size_t)s * MPHASE_COUNT + (size_t)phase) * MROLE_COUNT + (size_t)role;
}
/* The view and its per-step numbers (free with model_steps_free); 0 or ATTN_NONE as model_view_build. */
int model_view_build_steps(const variant_analysis *va, model_view *v, model_steps *st);
void model_steps_free(model_steps *st);
/* 1 when a variant is a model trace: its forwards are the profiler's ProfilerStep#N ranges
 * (an import that found no --range) and its GPU ops carry their CPU op chains; an attn_fwd
 * range of the series' pattern is one attention forward, not a model's step. */
int model_is_step_trace(const variant_analysis *va);

#endif
