/* Roles, phases and layers of a model trace's GPU operations (model_roles.h).
 * Rules, in the order they are tried for one op (its launching CPU op chain first,
 * because a kernel name alone does not say what a generic ATen kernel is for):
 * phase: backward when launched under autograd's engine (evaluate_function, a
 * *Backward0 node); optimizer when under an optimizer step, a fused Adam/AdamW or a
 * _foreach_ op. Role: communication (NCCL, c10d), attention (an SDPA backend op or a
 * FlexAttention op in the chain; a fused-attention kernel name), memcpy → copy,
 * copy (innermost op copy_/_to_copy/cat, copy kernels: autocast's casts inside a
 * conv2d or linear too), convolution (its memsets too), memset (one launched in
 * aten::mm/addmm/bmm/baddbmm is the GEMM's), GEMM (analysis.c's classify_op),
 * normalization, softmax, reduction, elementwise, other. Eager attention is
 * found from the ops around a softmax (not log_softmax): the nearest GEMM launched by
 * aten::matmul/bmm/baddbmm before it (at most EAGER_WINDOW ops away) is QKᵀ, the
 * nearest after it is PV; mul/div between QKᵀ and softmax are the scale, add,
 * masked_fill, where and sub the mask, dropout after the softmax the dropout.
 * Layers: the forward phase's op sequence (each op named by its CPU op chain and
 * kernel) is searched for the period P that repeats over the most operations
 * (the longest run of op[i] = op[i+P], plus P; ties: the shortest P); the run's
 * blocks of P ops are the layers, numbered from 0 in launch order. */
#include "model_roles.h"
#include "alloc.h"

#include "escape.h"
#include "findings.h"
#include "median.h"
#include "model_inputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EAGER_WINDOW = 12 };

static const char *const MROLE_NAMES[MROLE_COUNT] = {
    [MROLE_ATTN_FUSED] = "attention", [MROLE_ATTN_QK] = "attention_qk_gemm", [MROLE_ATTN_SCALE] = "attention_scale",
    [MROLE_ATTN_MASK] = "attention_mask", [MROLE_ATTN_SOFTMAX] = "attention_softmax",
    [MROLE_ATTN_DROPOUT] = "attention_dropout", [MROLE_ATTN_PV] = "attention_pv_gemm",
    [MROLE_ATTN_BACKWARD] = "attention_backward", [MROLE_GEMM] = "gemm", [MROLE_CONV] = "convolution",
    [MROLE_NORM] = "normalization", [MROLE_SOFTMAX] = "softmax", [MROLE_ELEMENTWISE] = "elementwise",
    [MROLE_REDUCTION] = "reduction", [MROLE_OPTIMIZER] = "optimizer", [MROLE_COPY] = "copy", [MROLE_MEMSET] = "memset",
    [MROLE_COMM] = "communication", [MROLE_OTHER] = "other",
};

const char *model_role_name(model_role r) { return r >= 0 && r < MROLE_COUNT ? MROLE_NAMES[r] : "other"; }
const char *model_phase_name(model_phase p)
{
    return p == MPHASE_BACKWARD ? "backward" : p == MPHASE_OPTIMIZER ? "optimizer" : "forward";
}
int model_role_is_attention(model_role r) { return r <= MROLE_ATTN_BACKWARD; }

static int has(const char *s, const char *needle) { return s && strcasestr(s, needle) != NULL; }
static int path_has(const gpu_op *op, const char *needle) { return op->cpu_op_path && strstr(op->cpu_op_path, needle); }

const char *model_attn_backend(const gpu_op *op)
{
    static const struct { const char *op, *name; } backends[] = {
        {"_scaled_dot_product_cudnn_attention", "cuDNN"},
        {"_scaled_dot_product_flash_attention", "flash"},
        {"_scaled_dot_product_efficient_attention", "memory-efficient"},
        {"_scaled_dot_product_fused_attention_overrideable", "overrideable (out-of-tree backend)"},
        {"_scaled_dot_product_attention_math", "math"},
        {"flex_attention", "FlexAttention (Triton)"},
    };
    for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
        if (path_has(op, backends[i].op))
            return backends[i].name;
    const char *n = op->name;
    if (op->kind == GPU_KERNEL && has(n, "flex_attention"))
        return "FlexAttention (Triton)";
    if (op->kind == GPU_KERNEL && (has(n, "fmha") || has(n, "flash_fwd") || has(n, "flash_bwd") || has(n, "_sdpa_") ||
                                   has(n, "attnprof_")))
        return "fused kernel";
    return NULL;
}

int model_kernel_sm(const char *n)
{
    /* cuBLAS's CUTLASS kernels carry the architecture they target as cutlass_XY_ (cutlass_75_tensorop_…,
     * cutlass_80_simt_sgemm_…); "cutlass__5x" (CUTLASS 3.x/2.x families) carries none. */
    for (const char *p = n; p && (p = strstr(p, "cutlass_")) != NULL; p += 8)
        if (p[8] >= '5' && p[8] <= '9' && p[9] >= '0' && p[9] <= '9' && p[10] == '_')
            return (p[8] - '0') * 10 + (p[9] - '0');
    for (const char *p = n; p && (p = strstr(p, "sm")) != NULL; p += 2) {
        int before_ok = p == n || p[-1] == '_' || p[-1] == ' ';
        if (before_ok && p[2] >= '5' && p[2] <= '9' && p[3] >= '0' && p[3] <= '9' &&
            (p[4] == '_' || p[4] == 'a' || p[4] == '\0'))
            return (p[2] - '0') * 10 + (p[3] - '0');
        if (before_ok && p[2] == '1' && p[3] >= '0' && p[3] <= '2' && p[4] >= '0' && p[4] <= '9' &&
            (p[5] == '_' || p[5] == 'a' || p[5] == '\0'))
            return 100 + (p[3] - '0') * 10 + (p[4] - '0');
    }
    return 0;
}

static int launched_in_any(const gpu_op *op, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (op_launched_in(op, names[i]))
            return 1;
    return 0;
}

model_role model_role_of(const gpu_op *op, model_phase *phase)
{
    const char *path = op->cpu_op_path ? op->cpu_op_path : "";
    const char *n = op->name ? op->name : "";
    *phase = MPHASE_FORWARD;
    if (strstr(path, "autograd::engine::evaluate_function") || strstr(path, "Backward0") ||
        strstr(path, "Backward1"))
        *phase = MPHASE_BACKWARD;
    if (strstr(path, "Optimizer.") || strstr(path, "aten::_fused_adam") || strstr(path, "aten::_fused_sgd") ||
        strstr(path, "aten::_foreach_") || (op->kind == GPU_KERNEL && (has(n, "adam") && !has(n, "adamant")))) {
        *phase = MPHASE_OPTIMIZER;
        return MROLE_OPTIMIZER;
    }
    if (has(n, "nccl") || strstr(path, "c10d::") || strstr(path, "nccl:"))
        return MROLE_COMM;
    if (model_attn_backend(op))
        return *phase == MPHASE_BACKWARD || strstr(path, "attention_backward") ? MROLE_ATTN_BACKWARD : MROLE_ATTN_FUSED;
    if (op->kind == GPU_MEMCPY)
        return MROLE_COPY;
    /* a copy first: autocast's cast of a weight inside aten::conv2d or aten::linear is a copy */
    static const char *const copy_ops[] = {"aten::copy_", "aten::_to_copy", "aten::clone", "aten::cat",
                                           "aten::contiguous"};
    if ((op->cpu_op && launched_in_any(op, copy_ops, sizeof copy_ops / sizeof *copy_ops) &&
         (!strcmp(op->cpu_op, "aten::copy_") || !strcmp(op->cpu_op, "aten::cat") ||
          !strcmp(op->cpu_op, "aten::_to_copy"))) ||
        has(n, "copy_kernel") || has(n, "CatArrayBatchedCopy"))
        return MROLE_COPY;
    static const char *const conv_ops[] = {"aten::convolution", "aten::_convolution", "aten::cudnn_convolution",
                                           "aten::convolution_backward", "aten::conv1d", "aten::conv2d",
                                           "aten::conv3d"};
    if (launched_in_any(op, conv_ops, sizeof conv_ops / sizeof *conv_ops) || has(n, "convolve") ||
        has(n, "fprop") || has(n, "dgrad") || has(n, "wgrad"))
        return MROLE_CONV;
    static const char *const gemm_ops[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_scaled_mm"};
    if (op->kind == GPU_MEMSET) /* a library's workspace memset belongs to the GEMM that asked for it */
        return op->cpu_op && launched_in_any(op, gemm_ops, sizeof gemm_ops / sizeof *gemm_ops) ? MROLE_GEMM
                                                                                                : MROLE_MEMSET;
    if (classify_op(op) == OPC_GEMM)
        return MROLE_GEMM;
    if (has(path, "layer_norm") || has(path, "rms_norm") || has(path, "group_norm") || has(path, "batch_norm") ||
        has(path, "instance_norm") || has(n, "layer_norm") || has(n, "rms_norm") || has(n, "batch_norm"))
        return MROLE_NORM;
    if (has(path, "softmax") || has(n, "softmax"))
        return MROLE_SOFTMAX;
    if (classify_op(op) == OPC_REDUCTION)
        return MROLE_REDUCTION;
    op_class c = classify_op(op);
    if (c == OPC_ELEMENTWISE || c == OPC_MASK || c == OPC_SOFTMAX)
        return MROLE_ELEMENTWISE;
    if (c == OPC_FUSED_ATTENTION)
        return MROLE_ATTN_FUSED;
    return MROLE_OTHER;
}

/* ---- one step --------------------------------------------------------------- */

static int attn_gemm(const gpu_op *op, model_role r)
{
    static const char *const mm[] = {"aten::matmul", "aten::bmm", "aten::baddbmm", "aten::einsum"};
    return r == MROLE_GEMM && !op_launched_in(op, "aten::linear") &&
           launched_in_any(op, mm, sizeof mm / sizeof *mm);
}

/* Launched in a softmax over the scores (its dtype casts too), not a log_softmax. */
static int eager_softmax(const gpu_op *op, model_role r)
{
    (void)r;
    return op_launched_in(op, "aten::softmax") || op_launched_in(op, "aten::_softmax") ||
           op_launched_in(op, "aten::_safe_softmax");
}

/* Roles and phases of a forward's ops, eager attention's parts included; returns the eager blocks found. */
static int step_roles(const forward *f, model_role *role, model_phase *phase, int *out_of_place)
{
    for (int k = 0; k < f->n_ops; k++)
        role[k] = model_role_of(f->ops[k], &phase[k]);
    int blocks = 0;
    *out_of_place = 0;
    for (int k = 0; k < f->n_ops; k++) {
        if (phase[k] != MPHASE_FORWARD || !eager_softmax(f->ops[k], role[k]))
            continue;
        int j = k - 1, m = k + 1;
        while (j >= 0 && k - j <= EAGER_WINDOW && !attn_gemm(f->ops[j], role[j]))
            j--;
        while (m < f->n_ops && eager_softmax(f->ops[m], role[m]))
            m++;
        int soft_end = m;
        while (m < f->n_ops && m - soft_end < EAGER_WINDOW && !attn_gemm(f->ops[m], role[m]))
            m++;
        if (j < 0 || k - j > EAGER_WINDOW || m >= f->n_ops || !attn_gemm(f->ops[m], role[m]))
            continue;
        role[j] = MROLE_ATTN_QK;
        role[m] = MROLE_ATTN_PV;
        int copied = 0;
        for (int x = j + 1; x < k; x++) {
            const gpu_op *o = f->ops[x];
            if (role[x] != MROLE_ELEMENTWISE && role[x] != MROLE_COPY)
                continue;
            if (op_launched_in(o, "aten::masked_fill") || op_launched_in(o, "aten::masked_fill_") ||
                op_launched_in(o, "aten::where") || op_launched_in(o, "aten::add") || op_launched_in(o, "aten::sub") ||
                op_launched_in(o, "aten::add_"))
                role[x] = MROLE_ATTN_MASK;
            else if (op_launched_in(o, "aten::mul") || op_launched_in(o, "aten::div") ||
                     op_launched_in(o, "aten::mul_") || op_launched_in(o, "aten::div_"))
                role[x] = MROLE_ATTN_SCALE;
            copied |= op_launched_in(o, "aten::masked_fill");
        }
        for (int x = k; x < soft_end; x++)
            role[x] = MROLE_ATTN_SOFTMAX;
        for (int x = soft_end; x < m; x++)
            if (has(f->ops[x]->cpu_op_path, "dropout"))
                role[x] = MROLE_ATTN_DROPOUT;
        *out_of_place += copied;
        blocks++;
        k = m;
    }
    return blocks;
}

static double op_us(const gpu_op *o) { return (double)(o->end_ns - o->start_ns) / 1000.0; }

/* ---- layers ----------------------------------------------------------------- */

typedef struct token {
    const gpu_op *op;
    int index;
} token;

static int token_cmp_str(const gpu_op *a, const gpu_op *b)
{
    int c = strcmp(a->cpu_op_path ? a->cpu_op_path : "", b->cpu_op_path ? b->cpu_op_path : "");
    return c ? c : strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

static int cmp_token(const void *x, const void *y)
{
    const token *a = x, *b = y;
    int c = token_cmp_str(a->op, b->op);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Finds the layers among the forward-phase ops fw[0..n): period, first op and count (0 when none repeats). */
static void find_layers(const gpu_op **fw, int n, int *period, int *first, int *count)
{
    *period = *first = *count = 0;
    if (n < 4 || n > MODEL_MAX_LAYER_OPS)
        return;
    token *tk = malloc((size_t)n * sizeof *tk);
    int *id = malloc((size_t)n * sizeof *id);
    if (!tk || !id)
        attn_oom();
    for (int i = 0; i < n; i++)
        tk[i] = (token){fw[i], i};
    qsort(tk, (size_t)n, sizeof *tk, cmp_token);
    int next = 0;
    for (int i = 0; i < n; i++) {
        if (i && token_cmp_str(tk[i - 1].op, tk[i].op))
            next++;
        id[tk[i].index] = next;
    }
    int best_cover = 0;
    for (int p = 2; p <= n / 2; p++) {
        int run = 0, run_start = 0;
        for (int i = 0; i + p < n; i++) {
            if (id[i] == id[i + p]) {
                if (!run)
                    run_start = i;
                run++;
                int copies = run / p + 1;
                if (copies >= 2 && run + p > best_cover) {
                    best_cover = run + p;
                    *period = p, *first = run_start, *count = copies;
                }
            } else
                run = 0;
        }
    }
    free(tk), free(id);
    if (*count < 2)
        *period = *first = *count = 0;
}

/* ---- the view ---------------------------------------------------------------- */

static void origin_list(char *out, size_t n, const char *origin)
{
    if (!origin || strstr(out, origin))
        return;
    size_t len = strlen(out);
    snprintf(out + len, n - len, "%s%s", len ? ", " : "", origin);
}

/* Only a trace whose GPU ops carry their CPU ops (an imported model trace) has roles. */
static int has_cpu_op_paths(const variant_analysis *va)
{
    for (int s = 0; s < va->n_forwards; s++)
        for (int k = 0; k < va->forwards[s].n_ops; k++)
            if (va->forwards[s].ops[k]->cpu_op_path != NULL)
                return 1;
    return 0;
}

/* The per-step tallies: time and op count by step, phase and role, each step's CUDA
 * time, and the implementations seen per phase and role. */
typedef struct step_tally {
    int n_steps;
    double *us, *cnt, *steps, *tmp;
    char (*impl)[96];
} step_tally;


/* Adds to the implementations of op o's role: the fused attention's backend, "eager"
 * for the attention's own pieces, else the kernel's origin. */
static void note_implementation(char *im, model_role role, const gpu_op *o)
{
    if (model_role_is_attention(role) && role != MROLE_ATTN_QK && role != MROLE_ATTN_PV &&
        role != MROLE_ATTN_SCALE && role != MROLE_ATTN_MASK && role != MROLE_ATTN_SOFTMAX &&
        role != MROLE_ATTN_DROPOUT)
        origin_list(im, 96, model_attn_backend(o));
    else if (model_role_is_attention(role))
        origin_list(im, 96, "eager");
    else if (o->kind == GPU_KERNEL)
        origin_list(im, 96, findings_kernel_origin(o));
}

/* The layers of the representative step, from its forward-phase ops fw (fw_k: their
 * indices in the step, to look up their roles). */
static void view_layers(model_view *v, const gpu_op **fw, const int *fw_k, int n_fw, const model_role *role)
{
    int period, first, count;
    v->forward_ops = n_fw;
    find_layers(fw, n_fw, &period, &first, &count);
    if (count > MODEL_MAX_LAYERS)
        count = 0;
    v->n_layers = count, v->layer_period = period, v->layer_first_op = first;
    for (int l = 0; l < count; l++)
        for (int x = first + l * period; x < first + (l + 1) * period; x++) {
            model_layer *L = &v->layers[l];
            L->ops++;
            L->us += op_us(fw[x]);
            if (model_role_is_attention(role[fw_k[x]]))
                L->attn_us += op_us(fw[x]);
        }
}

/* Tallies step s; the representative step rep also gives the attention kernel, the
 * eager blocks and the layers. */
static void tally_step(const variant_analysis *va, int s, int rep, step_tally *t, model_view *v,
                       double *attn_kernel_us)
{
    const forward *f = &va->forwards[s];
    model_role *role = malloc(((size_t)f->n_ops + 1) * sizeof *role);
    model_phase *phase = malloc(((size_t)f->n_ops + 1) * sizeof *phase);
    if (!role || !phase)
        attn_oom();
    int oop = 0;
    int blocks = step_roles(f, role, phase, &oop);
    t->steps[s] = f->cuda_us;
    const gpu_op **fw = malloc(((size_t)f->n_ops + 1) * sizeof *fw);
    int *fw_k = malloc(((size_t)f->n_ops + 1) * sizeof *fw_k);
    if (!fw || !fw_k)
        attn_oom();
    int n_fw = 0;
    for (int k = 0; k < f->n_ops; k++) {
        const gpu_op *o = f->ops[k];
        size_t cell = model_steps_cell(s, phase[k], role[k]);
        t->us[cell] += op_us(o);
        t->cnt[cell] += 1;
        note_implementation(t->impl[phase[k] * MROLE_COUNT + role[k]], role[k], o);
        if (s == rep && model_role_is_attention(role[k]) && o->kind == GPU_KERNEL && op_us(o) > *attn_kernel_us) {
            *attn_kernel_us = op_us(o);
            v->attn_kernel = o;
            v->backend = model_attn_backend(o);
        }
        if (phase[k] == MPHASE_FORWARD) {
            fw_k[n_fw] = k;
            fw[n_fw++] = o;
        }
    }
    if (s == rep) {
        v->eager_blocks = blocks;
        v->eager_out_of_place_mask = oop;
        view_layers(v, fw, fw_k, n_fw, role);
    }
    free(fw), free(fw_k), free(role), free(phase);
}

/* One row per phase and role that ran in any step: medians over the steps. */
static void view_rows(model_view *v, const step_tally *t)
{
    int S = t->n_steps;
    double *tmp = t->tmp;
    for (int p = 0; p < MPHASE_COUNT; p++) {
        for (int r = 0; r < MROLE_COUNT; r++) {
            int ran = 0;
            for (int s = 0; s < S; s++)
                ran |= t->cnt[model_steps_cell(s, p, r)] > 0;
            if (!ran)
                continue;
            v->has_phase[p] = 1;
            model_role_row *row = &v->rows[v->n_rows++];
            row->phase = (model_phase)p, row->role = (model_role)r;
            snprintf(row->implementation, sizeof row->implementation, "%s", t->impl[p * MROLE_COUNT + r]);
            for (int s = 0; s < S; s++)
                tmp[s] = t->cnt[model_steps_cell(s, p, r)];
            row->ops = median_of(tmp, S);
            for (int s = 0; s < S; s++)
                tmp[s] = t->us[model_steps_cell(s, p, r)];
            row->us = median_of(tmp, S);
            for (int s = 0; s < S; s++)
                tmp[s] = t->steps[s] > 0 ? t->us[model_steps_cell(s, p, r)] / t->steps[s] : NAN;
            row->share = median_of(tmp, S);
        }
        for (int s = 0; s < S; s++) {
            double a = 0;
            for (int r = 0; r <= MROLE_ATTN_BACKWARD; r++)
                a += t->us[model_steps_cell(s, p, r)];
            tmp[s] = a;
        }
        v->attn_us[p] = median_of(tmp, S);
        for (int s = 0; s < S; s++)
            tmp[s] = t->steps[s] > 0 ? tmp[s] / t->steps[s] : NAN;
        v->attn_share[p] = median_of(tmp, S);
    }
}

/* Step s's layer times into st (NAN when its forward launches another op sequence than the
 * representative step's, rep_fw, over the layers' span). */
static void step_layers(const variant_analysis *va, int s, const model_view *v, const gpu_op **rep_fw, int n_rep,
                        model_steps *st)
{
    const forward *f = &va->forwards[s];
    model_role *role = malloc(((size_t)f->n_ops + 1) * sizeof *role);
    model_phase *phase = malloc(((size_t)f->n_ops + 1) * sizeof *phase);
    const gpu_op **fw = malloc(((size_t)f->n_ops + 1) * sizeof *fw);
    int *fw_k = malloc(((size_t)f->n_ops + 1) * sizeof *fw_k);
    if (!role || !phase || !fw || !fw_k)
        attn_oom();
    int oop, n_fw = 0;
    step_roles(f, role, phase, &oop);
    for (int k = 0; k < f->n_ops; k++)
        if (phase[k] == MPHASE_FORWARD)
            fw_k[n_fw] = k, fw[n_fw++] = f->ops[k];
    int L = v->n_layers, from = v->layer_first_op, to = from + L * v->layer_period;
    int same = n_fw == n_rep;
    for (int x = from; same && x < to; x++)
        same = token_cmp_str(fw[x], rep_fw[x]) == 0;
    for (int l = 0; l < L; l++) {
        double us = 0, attn = 0;
        for (int x = from + l * v->layer_period; same && x < from + (l + 1) * v->layer_period; x++) {
            us += op_us(fw[x]);
            if (model_role_is_attention(role[fw_k[x]]))
                attn += op_us(fw[x]);
        }
        st->layer_us[(size_t)s * L + l] = same ? us : NAN;
        st->layer_attn_us[(size_t)s * L + l] = same ? attn : NAN;
    }
    st->layer_steps += same;
    free(role), free(phase), free(fw), free(fw_k);
}

/* The forward-phase ops of step s (malloc'd) and their count. */
static const gpu_op **forward_ops_of(const variant_analysis *va, int s, int *n)
{
    const forward *f = &va->forwards[s];
    const gpu_op **fw = malloc(((size_t)f->n_ops + 1) * sizeof *fw);
    if (!fw)
        attn_oom();
    *n = 0;
    for (int k = 0; k < f->n_ops; k++) {
        model_phase p;
        model_role_of(f->ops[k], &p);
        if (p == MPHASE_FORWARD)
            fw[(*n)++] = f->ops[k];
    }
    return fw;
}

static void steps_layers(const variant_analysis *va, const model_view *v, model_steps *st)
{
    st->n_layers = v->n_layers;
    size_t cells = (size_t)st->n_steps * (size_t)(v->n_layers ? v->n_layers : 1);
    st->layer_us = malloc(cells * sizeof *st->layer_us);
    st->layer_attn_us = malloc(cells * sizeof *st->layer_attn_us);
    if (!st->layer_us || !st->layer_attn_us)
        attn_oom();
    if (v->n_layers < 2)
        return;
    int n_rep;
    const gpu_op **rep_fw = forward_ops_of(va, analysis_median_forward(va), &n_rep);
    for (int s = 0; s < st->n_steps; s++)
        step_layers(va, s, v, rep_fw, n_rep, st);
    free(rep_fw);
}

int model_view_build_steps(const variant_analysis *va, model_view *v, model_steps *st)
{
    memset(v, 0, sizeof *v);
    if (st)
        memset(st, 0, sizeof *st);
    if (va->n_forwards < 1)
        return -1;
    if (!has_cpu_op_paths(va))
        return -1;
    int S = va->n_forwards, rep = analysis_median_forward(va);
    v->n_steps = S;
    char impl[MPHASE_COUNT * MROLE_COUNT][96];
    memset(impl, 0, sizeof impl);
    step_tally t = {.n_steps = S, .impl = impl};
    t.us = calloc((size_t)S * MPHASE_COUNT * MROLE_COUNT, sizeof *t.us);
    t.cnt = calloc((size_t)S * MPHASE_COUNT * MROLE_COUNT, sizeof *t.cnt);
    t.steps = malloc((size_t)S * sizeof *t.steps), t.tmp = malloc((size_t)S * sizeof *t.tmp);
    if (!t.us || !t.cnt || !t.steps || !t.tmp)
        attn_oom();
    double attn_kernel_us = 0;
    for (int s = 0; s < S; s++)
        tally_step(va, s, rep, &t, v, &attn_kernel_us);
    v->step_us = median_of(t.steps, S);
    for (int s = 0; s < S; s++) {
        double a = 0;
        for (int p = 0; p < MPHASE_COUNT; p++)
            for (int r = 0; r <= MROLE_ATTN_BACKWARD; r++)
                a += t.us[model_steps_cell(s, p, r)];
        t.tmp[s] = t.steps[s] > 0 ? a / t.steps[s] : NAN;
    }
    v->attn_share_total = median_of(t.tmp, S);
    view_rows(v, &t);
    free(t.tmp);
    if (!st) {
        free(t.us), free(t.cnt), free(t.steps);
        return 0;
    }
    *st = (model_steps){.n_steps = S, .step_us = t.steps, .us = t.us, .ops = t.cnt};
    steps_layers(va, v, st);
    return 0;
}

int model_view_build(const variant_analysis *va, model_view *v) { return model_view_build_steps(va, v, NULL); }

void model_steps_free(model_steps *st)
{
    free(st->step_us), free(st->us), free(st->ops), free(st->layer_us), free(st->layer_attn_us);
    memset(st, 0, sizeof *st);
}

int model_is_step_trace(const variant_analysis *va)
{
    if (va->n_forwards < 1 || !has_cpu_op_paths(va))
        return 0;
    for (int s = 0; s < va->n_forwards; s++) {
        const host_range *h = va->forwards[s].range;
        if (!h || !h->name || strncmp(h->name, "ProfilerStep#", 13))
            return 0;
    }
    return 1;
}

/* ---- roles.csv and the report's section ----------------------------------------- */

char *model_roles_csv(const analysis *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    fputs("variant,phase,role,implementation,ops_per_step,cuda_us_per_step,share,steps\n", f);
    for (int i = 0; i < a->n; i++) {
        model_view *v = malloc(sizeof *v);
        if (!v)
            attn_oom();
        if (model_view_build(&a->v[i], v) == 0)
            for (int k = 0; k < v->n_rows; k++) {
                const model_role_row *r = &v->rows[k];
                esc_csv_field(f, a->v[i].result->name, 0);
                fprintf(f, ",%s,%s,", model_phase_name(r->phase), model_role_name(r->role));
                esc_csv_field(f, r->implementation, 0);
                esc_csv_number(f, r->ops);
                fprintf(f, ",%.3f", r->us);
                esc_csv_number(f, r->share);
                fprintf(f, ",%d\n", v->n_steps);
            }
        free(v);
    }
    fclose(f);
    return buf;
}

static void md_share(FILE *f, double share)
{
    if (isfinite(share))
        fprintf(f, "%.1f%%", 100.0 * share);
    else
        fputs("not computed (no CUDA time)", f);
}

static void shapes_line(FILE *f, const variant_result *r)
{
    model_attn_inputs m;
    if (!model_inputs_of(r, &m)) {
        fputs("- Attention inputs: not recorded (profile with `record_shapes=True` to read B, H, S and D from the "
              "trace).\n", f);
        return;
    }
    fprintf(f, "- Attention inputs (record_shapes, the trace's first attention): B=%d, Hq=%d, Hkv=%d", m.batch,
            m.heads_q, m.heads_kv);
    if (m.kind == MODEL_ATTN_EAGER)
        fputs(" (the keys as the QKᵀ matmul sees them, after any repeat of KV heads)", f);
    else if (m.heads_q != m.heads_kv && m.heads_kv > 0 && m.heads_q % m.heads_kv == 0)
        fprintf(f, " (GQA: %d query heads per KV head)", m.heads_q / m.heads_kv);
    fprintf(f, ", S_q=%d, S_kv=%d, D=%d, ", m.seq_q, m.seq_kv, m.dim);
    esc_md_text(f, m.dtype);
    fprintf(f, "%s; read from ", m.causal == 1 ? ", causal" : m.causal == 0 ? ", not causal" : "");
    esc_md_code(f, m.op, 0);
    fputs(".\n", f);
}

static void variant_model(FILE *f, const analysis *a, const variant_analysis *va, const model_view *v)
{
    fputs("### ", f);
    esc_md_code(f, va->result->name, 0);
    fputs("\n\n", f);
    if (v->backend && v->attn_kernel) {
        char kn[FINDING_NAME_MAX + 8];
        findings_short_name(v->attn_kernel->name, kn, sizeof kn);
        fputs("- Attention implementation: ", f);
        esc_md_text(f, v->backend);
        fputs(" (its longest kernel ", f);
        esc_md_code(f, kn, 0);
        int sm = model_kernel_sm(v->attn_kernel->name);
        int dev = a->run->device.major * 10 + a->run->device.minor;
        if (sm && dev > 0)
            fprintf(f, ", built for sm_%d on this compute capability %d.%d GPU%s", sm, a->run->device.major,
                    a->run->device.minor, sm == dev ? "" : ": not the GPU's own architecture");
        fputs(").\n", f);
    } else if (v->eager_blocks) {
        fprintf(f, "- Attention implementation: eager, %d block%s per step of QKᵀ GEMM, scale, mask, softmax and PV "
                   "GEMM as separate kernels (the series' naive variant), the mask %s.\n",
                v->eager_blocks, v->eager_blocks == 1 ? "" : "s",
                v->eager_out_of_place_mask ? "with an out-of-place `aten::masked_fill` (a copy of the scores)"
                                           : "without an out-of-place `aten::masked_fill` copy");
    } else
        fputs("- Attention implementation: no attention recognised (no SDPA or FlexAttention op, no fused attention "
              "kernel, no softmax between two matmuls).\n", f);
    shapes_line(f, va->result);
    fprintf(f, "- Attention's share of the step's CUDA time (median over %d step%s of ", v->n_steps,
            v->n_steps == 1 ? "" : "s");
    fprintf(f, "%.1f µs CUDA time): ", v->step_us);
    int phases = v->has_phase[MPHASE_BACKWARD] || v->has_phase[MPHASE_OPTIMIZER];
    md_share(f, v->attn_share_total);
    if (phases) {
        fputs(" (forward ", f);
        md_share(f, v->attn_share[MPHASE_FORWARD]);
        fputs(", backward ", f);
        md_share(f, v->attn_share[MPHASE_BACKWARD]);
        fputs(")", f);
    }
    fputs(".\n\n", f);
    fputs("| Phase | Role | Implementation | Ops / step | CUDA µs / step | Share of step |\n|---|---|---|---|---|---|\n",
          f);
    for (int k = 0; k < v->n_rows; k++) {
        const model_role_row *r = &v->rows[k];
        fprintf(f, "| %s | %s | ", model_phase_name(r->phase), model_role_name(r->role));
        esc_md_text(f, r->implementation[0] ? r->implementation : "–");
        fprintf(f, " | %g | %.1f | ", r->ops, r->us);
        md_share(f, r->share);
        fputs(" |\n", f);
    }
    fputs("\n", f);
    if (v->n_layers >= 2) {
        fprintf(f, "Repeated blocks (layers): the forward's operations repeat with a period of %d operations, %d "
                   "times, from forward operation %d on (the representative step); attention per block:\n\n",
                v->layer_period, v->n_layers, v->layer_first_op + 1);
        fputs("| Block | Ops | CUDA µs | Attention µs | Attention share of block | of step |\n|---|---|---|---|---|---|\n",
              f);
        const forward *rf = &va->forwards[analysis_median_forward(va)];
        for (int l = 0; l < v->n_layers; l++) {
            const model_layer *L = &v->layers[l];
            fprintf(f, "| %d | %d | %.1f | %.1f | ", l, L->ops, L->us, L->attn_us);
            md_share(f, L->us > 0 ? L->attn_us / L->us : NAN);
            fputs(" | ", f);
            md_share(f, rf->cuda_us > 0 ? L->attn_us / rf->cuda_us : NAN);
            fputs(" |\n", f);
        }
        fputs("\n", f);
    } else if (v->forward_ops > MODEL_MAX_LAYER_OPS)
        fprintf(f, "Repeated blocks (layers) not searched: the representative step's forward has %d operations, above "
                   "the %d the search takes (it is quadratic in them).\n\n", v->forward_ops, MODEL_MAX_LAYER_OPS);
    else
        fputs("No repeated block of operations found in the forward (no layers numbered).\n\n", f);
}

static const model_role_row *find_row(const model_view *v, int phase, int role)
{
    for (int k = 0; k < v->n_rows; k++)
        if ((int)v->rows[k].phase == phase && (int)v->rows[k].role == role)
            return &v->rows[k];
    return NULL;
}

/* Two or more traces in one archive: their roles side by side, each against the first. */
static void side_by_side(FILE *f, const analysis *a, model_view *const *views, const int *vi, int n)
{
    fputs("### Role by role\n\nCUDA µs per step (median) and share of the step for each trace; the ratio is each "
          "trace's time against the first's (", f);
    esc_md_code(f, a->v[vi[0]].result->name, 0);
    fputs("); – where a trace has no operation of the role.\n\n| Phase | Role |", f);
    for (int j = 0; j < n; j++) {
        fputc(' ', f);
        esc_md_code(f, a->v[vi[j]].result->name, 1);
        fputs(" |", f);
        if (j)
            fputs(" ratio |", f);
    }
    fputs("\n|---|---|", f);
    for (int j = 0; j < n; j++)
        fputs(j ? "---|---|" : "---|", f);
    fputs("\n", f);
    for (int p = 0; p < MPHASE_COUNT; p++)
        for (int r = 0; r < MROLE_COUNT; r++) {
            int any = 0;
            for (int j = 0; j < n; j++)
                any |= find_row(views[j], p, r) != NULL;
            if (!any)
                continue;
            fprintf(f, "| %s | %s |", model_phase_name((model_phase)p), model_role_name((model_role)r));
            const model_role_row *first = find_row(views[0], p, r);
            for (int j = 0; j < n; j++) {
                const model_role_row *row = find_row(views[j], p, r);
                if (row) {
                    fprintf(f, " %.1f (", row->us);
                    md_share(f, row->share);
                    fputs(") |", f);
                } else
                    fputs(" – |", f);
                if (j) {
                    if (row && first && first->us > 0)
                        fprintf(f, " %.2f× |", row->us / first->us);
                    else
                        fputs(" – |", f);
                }
            }
            fputs("\n", f);
        }
    fputs("| all | attention |", f);
    for (int j = 0; j < n; j++) {
        double us = 0;
        for (int p = 0; p < MPHASE_COUNT; p++)
            us += views[j]->attn_us[p];
        fprintf(f, " %.1f (", us);
        md_share(f, views[j]->attn_share_total);
        fputs(") |", f);
        if (j) {
            double u0 = 0;
            for (int p = 0; p < MPHASE_COUNT; p++)
                u0 += views[0]->attn_us[p];
            if (u0 > 0)
                fprintf(f, " %.2f× |", us / u0);
            else
                fputs(" – |", f);
        }
    }
    fputs("\n| all | step |", f);
    for (int j = 0; j < n; j++) {
        fprintf(f, " %.1f |", views[j]->step_us);
        if (j)
            fprintf(f, views[0]->step_us > 0 ? " %.2f× |" : " – |", views[j]->step_us / views[0]->step_us);
    }
    fputs("\n\n", f);
}

void model_section_md(FILE *f, const analysis *a)
{
    if (!a->run->imported)
        return;
    enum { SIDE_MAX = 4 };
    model_view *views[SIDE_MAX] = {0};
    int vi[SIDE_MAX], n_side = 0;
    model_view *v = malloc(sizeof *v);
    if (!v)
        attn_oom();
    int header = 0;
    for (int i = 0; i < a->n; i++) {
        if (model_view_build(&a->v[i], v) != 0)
            continue;
        if (n_side < SIDE_MAX) {
            views[n_side] = malloc(sizeof *v);
            if (!views[n_side])
                attn_oom();
            *views[n_side] = *v;
            vi[n_side++] = i;
        }
        if (!header) {
            fputs("## Model\n\nWhere each trace's GPU time goes, by role: each operation's role comes from the CPU op "
                  "chain that launched it (Kineto's op nesting and correlation ids), then its kernel name; a step "
                  "is a forward range of the trace. Shares are fractions of the step's CUDA time, medians over "
                  "steps; the same numbers are in `roles.csv`.\n\n", f);
            header = 1;
        }
        variant_model(f, a, &a->v[i], v);
    }
    if (n_side >= 2) /* the first SIDE_MAX traces: a wider table would not read */
        side_by_side(f, a, views, vi, n_side);
    for (int j = 0; j < n_side; j++)
        free(views[j]);
    free(v);
}
