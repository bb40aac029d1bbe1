/* The model view (model_roles.h): per step, the time and op count of each phase and
 * role (model_step_roles gives each op's), their medians over steps, the attention
 * implementation and kernel of the representative step, and its layers.
 * Layers: the forward phase's op sequence (each op named by its CPU op chain and
 * kernel) is searched for the period P that repeats over the most operations
 * (the longest run of op[i] = op[i+P], plus P; ties: the shortest P); the run's
 * blocks of P ops are the layers, numbered from 0 in launch order.  */
#include "model_roles.h"
#include "alloc.h"

#include "findings.h"
#include "median.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    int blocks = model_step_roles(f, role, phase, &oop);
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
    model_step_roles(f, role, phase, &oop);
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
