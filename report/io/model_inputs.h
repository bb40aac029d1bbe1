/* The attention inputs a PyTorch trace recorded with record_shapes (the cpu_op
 * events' "Input Dims", "Input type", "Concrete Inputs"): B, Hq, Hkv, S_q, S_kv, D
 * and dtype of the first attention of the trace, and which op they were read from.
 * Gathered while `attnprof import` streams the file, kept in run.json as the
 * variant's fact "attn_inputs" (one line of text, parsed back here), so a report
 * re-rendered from the archive says the same. */
#ifndef ATTNPROF_MODEL_INPUTS_H
#define ATTNPROF_MODEL_INPUTS_H

#include "kineto_read.h"
#include "run_info.h"

typedef enum model_attn_kind {
    MODEL_ATTN_NONE = 0,
    MODEL_ATTN_SDPA,  /* aten::scaled_dot_product_attention: q, k, v [B, H, S, D] */
    MODEL_ATTN_FLEX,  /* a FlexAttention op (flex_attention in its name): q, k, v [B, H, S, D] */
    MODEL_ATTN_EAGER, /* aten::matmul q [B, H, S_q, D] × kᵀ [B, H, D, S_kv] followed by a softmax over [B, H, S_q, S_kv] */
} model_attn_kind;

typedef struct model_attn_inputs {
    model_attn_kind kind;
    int batch, heads_q, heads_kv, seq_q, seq_kv, dim;
    char dtype[16];  /* "bf16", "fp16", "fp32", or PyTorch's name of another type */
    int causal;      /* 1 / 0 from SDPA's is_causal; -1 not recorded (eager, flex: the mask is a tensor or a function) */
    char op[64];     /* the op the dims were read from */
    /* attn_mask as recorded: "bool [2,1,2048,2048]", "bf16 [2,1,1024,1024]"; "" for none (or not recorded) */
    char mask[48];
    int gqa;         /* enable_gqa: 1 / 0; -1 not recorded */
    /* K/V heads before an eager expansion (repeat_kv's expand + reshape, repeat_interleave) that
     * made heads_kv of them, and the op that recorded it; 0 / "" when none was seen */
    int heads_kv_model;
    char expand_op[32];
} model_attn_inputs;

/* A GEMM or convolution CPU op's interval and first input's dtype (file-relative ns). */
typedef struct model_op_dtype {
    int tid;
    int64_t start_ns, end_ns;
    char dtype[16];
    char op[32];
} model_op_dtype;

/* What the import keeps while a file streams by. */
typedef struct model_inputs_scan {
    model_op_dtype *gemms; /* GEMM/convolution cpu_ops with Input type, at most MODEL_MAX_GEMM_OPS */
    size_t n_gemms, cap_gemms;
    model_attn_inputs found;
    int backend_seen; /* sdpa: the backend op after it was looked at */
    /* eager: the last 4-D × 4-D aten::matmul seen, waiting for a softmax over its output */
    int pending_matmul;
    model_attn_inputs matmul;
    /* the first K/V expansion seen: [B, Hkv, n_rep, S, D] reshaped, or [B, Hkv, S, D] repeat_interleave'd */
    int expand_batch, expand_heads, expand_rep, expand_dim;
    char expand_op[32];
    /* a backend op's inputs, for a trace without the public SDPA op (a compiled model) */
    model_attn_inputs backend;
} model_inputs_scan;

#define MODEL_MAX_GEMM_OPS (1u << 20)

/* Looks at one event (any; only cpu_op events with Input Dims count). */
void model_inputs_see(model_inputs_scan *s, const kineto_event *e);
/* Once the file is read: the attention's inputs from the public SDPA op or, without one,
 * from a backend op, with the K/V expansion that made its KV heads when its shapes agree. */
void model_inputs_finish(model_inputs_scan *s);

/* The dtypes of the ops that launched the file's FP32 CUDA-core GEMM and convolution
 * kernels (kernel names with sgemm, ffma, simt, f32f32_f32f32, as findings.c's
 * gemm_on_cuda_cores, or convolve_sgemm): ops [ops0, n_ops) and calls [apis0, n_apis)
 * of `t`, whose times are the file's moved by shift_ns. Counts the kernels whose op had
 * 16-bit and fp32 inputs and describes the first of them in text (16-bit first);
 * frees the scan's list. */
void model_inputs_fp32_cores(model_inputs_scan *s, const trace *t, size_t ops0, size_t apis0, int64_t shift_ns,
                             int *n16, int *n32, char *text, size_t n);

/* The fact's text ("sdpa: B=4, Hq=16, Hkv=4, S_q=1024, S_kv=1024, D=128, bf16, causal, from
 * aten::scaled_dot_product_attention", then "; mask bool [2,1,1024,1024]", "; enable_gqa True",
 * "; kv_heads 8 by aten::reshape" when recorded), and back. Parsing returns EXIT_OK, or EXIT_BAD_ARCHIVE when
 * the text is not one (run.json's fact was edited). */
void model_inputs_format(const model_attn_inputs *m, char *out, size_t n);
int model_inputs_parse(const char *text, model_attn_inputs *m);
/* The variant's recorded attention inputs (its fact "attn_inputs"): 1 with *m, 0 without. */
int model_inputs_of(const variant_result *v, model_attn_inputs *m);
/* 1 when some variant of the run has recorded attention inputs. */
int model_inputs_any(const run_info *r);
/* Bytes of one element of the recorded dtype; 0 when unknown. */
int model_dtype_bytes(const char *dtype);
const char *model_attn_kind_name(model_attn_kind k); /* "sdpa", "flex", "eager" */

#endif
