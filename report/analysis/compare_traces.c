/* Model traces in compare (compare.h, "model traces"): the imported traces of a model
 * (ProfilerStep#N steps whose GPU ops carry their CPU op chains) of each run are paired with
 * the baseline's and compared with the steps as the samples. Pairing: the same variant name;
 * else, when the baseline and the run each hold exactly one model trace, those two (the
 * usual `import eager.json.gz` against `import sdpa.json.gz`, named after their files). What
 * is compared, per pair: the step's CUDA time; each phase and model role's µs per step (ops,
 * implementation and share beside it) and each phase's attention roles together, which is
 * what sets eager attention's five kernels against one fused op; layer k against layer k
 * when both traces have the same number of layers of the same period (else the blocks are
 * not the same sequence of operations and are not paired); the finding ids of one side only.
 * Ratios, intervals and verdicts come from compare_ratio_of against compare's CUDA-time
 * floor (--min-effect), and only with COMPARE_MIN_STEPS steps on each side. --pair A=B names
 * pairs across runs whose traces have other names (several traces a side), before the rules. */
#include "compare.h"
#include "alloc.h"

#include "err.h"
#include "exit_codes.h"
#include "median.h"
#include "model_inputs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ratio of two sample sets: its interval and verdict when the pair has the steps for
 * one, else the ratio of the medians alone. */
static compare_ratio ratio_of(const double *b, int nb, const double *x, int nx, double floor, int verdicts)
{
    if (verdicts)
        return compare_ratio_of(b, nb, x, nx, floor, 0);
    compare_ratio r = {.ci = {NAN, NAN, NAN}, .verdict = VERDICT_NONE};
    double mb = median_of(b, nb), mx = median_of(x, nx);
    if (nb > 0 && nx > 0 && mb > 0 && isfinite(mx))
        r.ci.ratio = mx / mb;
    return r;
}

/* One side of a pair: the trace's view and its per-step numbers. */
typedef struct side {
    model_view *v;
    model_steps st;
} side;

static void add_impl(char *out, size_t n, const char *impl)
{
    if (!impl || !impl[0] || strstr(out, impl))
        return;
    size_t len = strlen(out);
    snprintf(out + len, n - len, "%s%s", len ? ", " : "", impl);
}

static const model_role_row *view_row(const model_view *v, int phase, int role)
{
    for (int k = 0; k < v->n_rows; k++)
        if ((int)v->rows[k].phase == phase && (int)v->rows[k].role == role)
            return &v->rows[k];
    return NULL;
}

/* The µs per step of a role (attention_total: every attention role of the phase) into us;
 * its op counts into ops; 1 when it ran in some step. */
static int role_samples(const side *sd, int p, int r, int attention_total, double *us, double *ops)
{
    int ran = 0;
    for (int s = 0; s < sd->st.n_steps; s++) {
        us[s] = ops[s] = 0;
        for (int x = attention_total ? 0 : r; x <= (attention_total ? MROLE_ATTN_BACKWARD : r); x++) {
            us[s] += sd->st.us[model_steps_cell(s, p, x)];
            ops[s] += sd->st.ops[model_steps_cell(s, p, x)];
        }
        ran |= ops[s] > 0;
    }
    return ran;
}

/* buf: room for 4 × stride samples (stride: the larger side's step count). */
static void fill_row(trace_role_row *row, const side *sd, int p, int r, int attention_total, double floor,
                     int verdicts, double *buf, int stride)
{
    double *us[2], *ops[2];
    for (int j = 0; j < 2; j++) {
        int S = sd[j].st.n_steps;
        us[j] = buf + (size_t)(2 * j) * (size_t)stride, ops[j] = us[j] + stride;
        row->present[j] = role_samples(&sd[j], p, r, attention_total, us[j], ops[j]);
        row->st[j] = stats_of(us[j], S);
        row->ops[j] = median_of(ops[j], S);
        double *share = ops[j]; /* the counts are taken: reuse their room for the shares */
        for (int s = 0; s < S; s++)
            share[s] = sd[j].st.step_us[s] > 0 ? us[j][s] / sd[j].st.step_us[s] : NAN;
        row->share[j] = median_of(share, S);
        for (int x = attention_total ? 0 : r; x <= (attention_total ? MROLE_ATTN_BACKWARD : r); x++) {
            const model_role_row *vr = view_row(sd[j].v, p, x);
            if (vr)
                add_impl(row->impl[j], sizeof row->impl[j], vr->implementation);
        }
    }
    row->ratio = (compare_ratio){.ci = {NAN, NAN, NAN}, .verdict = VERDICT_NONE};
    if (row->present[0] && row->present[1])
        row->ratio = ratio_of(us[0], sd[0].st.n_steps, us[1], sd[1].st.n_steps, floor, verdicts);
}

/* Rows: per phase, each role that ran on either side, then the phase's attention roles
 * together where either side has attention in it. */
static void pair_rows(trace_pair *pr, const side *sd, double floor)
{
    int S = sd[0].st.n_steps > sd[1].st.n_steps ? sd[0].st.n_steps : sd[1].st.n_steps;
    double *buf = malloc(sizeof *buf * (size_t)S * 4);
    if (!buf)
        attn_oom();
    for (int p = 0; p < MPHASE_COUNT; p++) {
        int attention = 0;
        for (int r = 0; r < MROLE_COUNT; r++) {
            if (!view_row(sd[0].v, p, r) && !view_row(sd[1].v, p, r))
                continue;
            attention |= model_role_is_attention((model_role)r);
            trace_role_row *row = &pr->rows[pr->n_rows++];
            row->phase = (model_phase)p, row->role = (model_role)r;
            fill_row(row, sd, p, r, 0, floor, pr->verdicts, buf, S);
        }
        if (!attention)
            continue;
        trace_role_row *row = &pr->rows[pr->n_rows++];
        row->phase = (model_phase)p, row->role = MROLE_ATTN_FUSED, row->attention_total = 1;
        fill_row(row, sd, p, 0, 1, floor, pr->verdicts, buf, S);
    }
    free(buf);
}

/* The layer times of the steps that have them (NAN: another op sequence) into out; their count. */
static int layer_samples(const model_steps *st, int l, const double *from, double *out)
{
    int n = 0;
    for (int s = 0; s < st->n_steps; s++)
        if (isfinite(from[(size_t)s * st->n_layers + l]))
            out[n++] = from[(size_t)s * st->n_layers + l];
    return n;
}

static void pair_layers(trace_pair *pr, const side *sd, double floor)
{
    for (int j = 0; j < 2; j++) {
        pr->n_layers[j] = sd[j].v->n_layers;
        pr->layer_period[j] = sd[j].v->layer_period;
        pr->layer_steps[j] = sd[j].st.layer_steps;
    }
    pr->layers_paired = pr->n_layers[0] >= 2 && pr->n_layers[0] == pr->n_layers[1] &&
                        pr->layer_period[0] == pr->layer_period[1] && pr->layer_steps[0] > 0 && pr->layer_steps[1] > 0;
    if (!pr->layers_paired)
        return;
    pr->layer_verdicts = pr->layer_steps[0] >= COMPARE_MIN_STEPS && pr->layer_steps[1] >= COMPARE_MIN_STEPS;
    int S = sd[0].st.n_steps > sd[1].st.n_steps ? sd[0].st.n_steps : sd[1].st.n_steps;
    double *buf = malloc(sizeof *buf * (size_t)S * 4);
    if (!buf)
        attn_oom();
    for (int l = 0; l < pr->n_layers[0]; l++) {
        trace_layer_row *L = &pr->layers[l];
        double *us[2] = {buf, buf + S}, *attn = buf + 2 * S;
        int n[2];
        for (int j = 0; j < 2; j++) {
            n[j] = layer_samples(&sd[j].st, l, sd[j].st.layer_us, us[j]);
            L->st[j] = stats_of(us[j], n[j]);
            layer_samples(&sd[j].st, l, sd[j].st.layer_attn_us, attn);
            L->attn_us[j] = median_of(attn, n[j]);
        }
        L->ratio = ratio_of(us[0], n[0], us[1], n[1], floor, pr->layer_verdicts);
    }
    free(buf);
}

static int has_id(const variant_analysis *va, const char *id)
{
    for (int k = 0; k < va->n_findings; k++)
        if (!strcmp(va->meta[k].id, id))
            return 1;
    return 0;
}

/* The findings of each side whose id the other side has no finding of (the first of each id). */
static void pair_findings(trace_pair *pr)
{
    for (int j = 0; j < 2; j++) {
        const variant_analysis *me = pr->va[j], *other = pr->va[1 - j];
        for (int k = 0; k < me->n_findings; k++) {
            const char *id = me->meta[k].id;
            int first = 1;
            for (int e = 0; e < k; e++)
                first &= strcmp(me->meta[e].id, id) != 0;
            if (id[0] && first && !has_id(other, id))
                pr->only[j][pr->n_only[j]++] = &me->meta[k];
        }
    }
}

static void build_pair(trace_pair *pr, int archive, const variant_analysis *b, const variant_analysis *o, int by_name,
                       double floor)
{
    memset(pr, 0, sizeof *pr);
    pr->archive = archive, pr->by_name = by_name;
    pr->va[0] = b, pr->va[1] = o;
    side sd[2];
    for (int j = 0; j < 2; j++) {
        sd[j].v = malloc(sizeof *sd[j].v);
        if (!sd[j].v)
            attn_oom();
        model_view_build_steps(pr->va[j], sd[j].v, &sd[j].st);
        pr->step[j] = stats_of(sd[j].st.step_us, sd[j].st.n_steps);
        pr->attn_share[j] = sd[j].v->attn_share_total;
        pr->backend[j] = sd[j].v->backend;
        pr->eager_blocks[j] = sd[j].v->eager_blocks;
    }
    pr->verdicts = sd[0].st.n_steps >= COMPARE_MIN_STEPS && sd[1].st.n_steps >= COMPARE_MIN_STEPS;
    pr->step_ratio = ratio_of(sd[0].st.step_us, sd[0].st.n_steps, sd[1].st.step_us, sd[1].st.n_steps, floor,
                              pr->verdicts);
    pair_rows(pr, sd, floor);
    pair_layers(pr, sd, floor);
    pair_findings(pr);
    for (int j = 0; j < 2; j++) {
        model_steps_free(&sd[j].st);
        free(sd[j].v);
    }
}

/* The model traces of run i (malloc'd, in its order) and their count. */
static const variant_analysis **model_traces_of(const compare_archive *ar, int *n)
{
    const variant_analysis **out = calloc((size_t)ar->a.n + 1, sizeof *out);
    if (!out)
        attn_oom();
    *n = 0;
    for (int v = 0; v < ar->a.n; v++)
        if (model_is_step_trace(&ar->a.v[v]))
            out[(*n)++] = &ar->a.v[v];
    return out;
}

static int index_of(const variant_analysis **list, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(list[k]->result->name, name))
            return k;
    return ATTN_NONE;
}

/* Pairs the baseline's model traces B with run i's O: --pair names first, then the same names,
 * then the one of each; what is left goes to the unpaired list. */
static void pair_run(compare_data *m, const compare_options *opt, int i, const variant_analysis **B, int nb,
                     const variant_analysis **O, int no)
{
    compare_traces *t = &m->traces;
    char *used_b = calloc((size_t)nb + 1, 1), *used_o = calloc((size_t)no + 1, 1);
    if (!used_b || !used_o)
        attn_oom();
    for (int k = 0; k < opt->n_pair; k++) {
        int b = index_of(B, nb, opt->pair[k].base), o = index_of(O, no, opt->pair[k].other);
        if (b >= 0 && o >= 0 && !used_b[b] && !used_o[o]) {
            build_pair(&t->pairs[t->n_pairs++], i, B[b], O[o], 0, m->min_effect);
            t->pairs[t->n_pairs - 1].by_option = 1;
            used_b[b] = used_o[o] = 1;
        }
    }
    for (int b = 0; b < nb; b++)
        for (int o = 0; o < no; o++)
            if (!used_b[b] && !used_o[o] && !strcmp(B[b]->result->name, O[o]->result->name)) {
                build_pair(&t->pairs[t->n_pairs++], i, B[b], O[o], 1, m->min_effect);
                used_b[b] = used_o[o] = 1;
                break;
            }
    if (nb == 1 && no == 1 && !used_b[0]) {
        build_pair(&t->pairs[t->n_pairs++], i, B[0], O[0], 0, m->min_effect);
        used_b[0] = used_o[0] = 1;
    }
    for (int b = 0; b < nb; b++)
        if (!used_b[b])
            t->unpaired[t->n_unpaired++] = (trace_unpaired){.archive = 0, .against = i, .va = B[b]};
    for (int o = 0; o < no; o++)
        if (!used_o[o])
            t->unpaired[t->n_unpaired++] = (trace_unpaired){.archive = i, .against = 0, .va = O[o]};
    free(used_b), free(used_o);
}

/* --pair A=B[,C=D]: a '\\' makes the next character part of the name, so names that hold '=', ','
 * or '\\' are written \\=, \\, and \\\\ (a Kineto file name such as "run=2,seed=1"). */
int compare_pairs_parse(const char *list, compare_options *opt, char *err, size_t errlen)
{
    opt->n_pair = 0;
    const char *p = list;
    for (;;) {
        if (opt->n_pair == COMPARE_MAX_PAIRS)
            goto bad;
        compare_pair_name *pn = &opt->pair[opt->n_pair];
        char *side[2] = {pn->base, pn->other};
        size_t cap[2] = {sizeof pn->base, sizeof pn->other};
        for (int k = 0; k < 2; k++) {
            size_t len = 0;
            for (; *p && *p != (k ? ',' : '=') && !(k == 0 && *p == ','); p++) {
                if (*p == '\\' && !*++p)
                    goto bad; /* a lone '\\' at the end */
                if (len + 1 >= cap[k])
                    goto bad;
                side[k][len++] = *p;
            }
            side[k][len] = '\0';
            if (!len || (k == 0 && *p != '='))
                goto bad;
            if (k == 0)
                p++;
        }
        opt->n_pair++;
        if (!*p)
            return EXIT_OK;
        p++; /* ',' */
    }
bad:
    return err_set(err, errlen, EXIT_USAGE, "--pair %s: expected BASELINE_TRACE=OTHER_TRACE[,...] (at most %d, "
                   "names of 1 to %zu bytes; write '=', ',' and '\\' inside a name as \\=, \\, and \\\\), e.g. "
                   "--pair llama-eager=llama-sdpa", list, COMPARE_MAX_PAIRS, sizeof opt->pair[0].base - 1);
}

/* EXIT_OK when every --pair name is a model trace: A of the baseline, B of some other run. */
static int pairs_known(const compare_data *m, const compare_options *opt, const variant_analysis ***lists,
                       char *err, size_t errlen)
{
    for (int k = 0; k < opt->n_pair; k++) {
        const compare_pair_name *pn = &opt->pair[k];
        int other = 0;
        for (int i = 1; i < m->n; i++)
            other |= index_of(lists[i], m->traces.n_model[i], pn->other) >= 0;
        if (index_of(lists[0], m->traces.n_model[0], pn->base) < 0 || !other) {
            int base_missing = index_of(lists[0], m->traces.n_model[0], pn->base) < 0;
            snprintf(err, errlen, "--pair %s=%s: %s is no model trace of %s; name a trace of the baseline, then one "
                     "of another run (their variant names, as in their report.md)", pn->base, pn->other,
                     base_missing ? pn->base : pn->other, base_missing ? m->in[0]->label : "the other runs");
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

/* ---- what differs --------------------------------------------------------------- */

/* The model's KV heads: before a recorded repeat of them; 0 (unknown) when the op that
 * recorded them sees the keys after any repeat (the eager QKᵀ matmul, a backend op behind a
 * compiled model's fused expand) and they equal the query heads. */
static int model_kv_heads(const model_attn_inputs *m)
{
    if (m->heads_kv_model > 0)
        return m->heads_kv_model;
    int after_repeat = m->kind == MODEL_ATTN_EAGER || strcmp(m->op, "aten::scaled_dot_product_attention");
    return after_repeat && m->heads_kv == m->heads_q ? 0 : m->heads_kv;
}

/* A trace's attention inputs as compared: the model's KV heads, the mask as recorded; ""
 * when none was recorded. */
static void inputs_text(const variant_analysis *va, char *out, size_t n)
{
    model_attn_inputs m;
    out[0] = '\0';
    if (!model_inputs_of(va->result, &m))
        return;
    char kv[48];
    if (model_kv_heads(&m))
        snprintf(kv, sizeof kv, "%d", model_kv_heads(&m));
    else
        snprintf(kv, sizeof kv, "%d after any repeat", m.heads_kv);
    snprintf(out, n, "B=%d, Hq=%d, Hkv=%s, S=%d/%d, D=%d, %s, %s%s", m.batch, m.heads_q, kv, m.seq_q, m.seq_kv,
             m.dim, m.dtype, m.mask[0] ? "mask " : "no mask", m.mask);
    if (m.causal >= 0) {
        size_t len = strlen(out);
        snprintf(out + len, n - len, ", %s", m.causal ? "causal" : "not causal");
    }
}

/* Compiled by torch.compile: the trace's ops include kernels Inductor generated. */
static int compiled(const variant_analysis *va)
{
    char kind[8];
    const char *ops;
    size_t len;
    for (int s = 0; s < va->n_forwards; s++)
        for (int k = 0; k < va->forwards[s].n_ops; k++)
            if (model_inductor_kernel(va->forwards[s].ops[k], kind, &ops, &len))
                return 1;
    return 0;
}

static void append(char *out, size_t n, const char *name, const char *text, int several)
{
    size_t len = strlen(out);
    if (several)
        snprintf(out + len, n - len, "%s%s: %s", len ? "; " : "", name, text);
    else
        snprintf(out + len, n - len, "%s", text);
}

void compare_traces_fields(compare_data *m)
{
    static const char *const names[] = {"Attention inputs", "Attention backend", "Producer"};
    enum { N_FIELDS = sizeof names / sizeof *names };
    int any = 0;
    for (int i = 0; i < m->n; i++)
        for (int v = 0; v < m->in[i]->a.n; v++)
            any |= model_is_step_trace(&m->in[i]->a.v[v]);
    if (!any || m->n_fields + N_FIELDS > COMPARE_MAX_FIELDS)
        return;
    compare_field *f = &m->fields[m->n_fields];
    m->n_fields += N_FIELDS;
    memset(f, 0, N_FIELDS * sizeof *f);
    for (int k = 0; k < N_FIELDS; k++)
        f[k].name = names[k], f[k].in_sentence = 1;
    for (int i = 0; i < m->n; i++) {
        const analysis *a = &m->in[i]->a;
        int n_model = 0;
        for (int v = 0; v < a->n; v++)
            n_model += model_is_step_trace(&a->v[v]);
        for (int v = 0; v < a->n; v++) {
            const variant_analysis *va = &a->v[v];
            if (!model_is_step_trace(va))
                continue;
            char in[160];
            inputs_text(va, in, sizeof in);
            append(f[0].value[i], sizeof f[0].value[i], va->result->name, in[0] ? in : "not recorded", n_model > 1);
            model_view *view = malloc(sizeof *view);
            if (!view)
                attn_oom();
            const char *backend = model_view_build(va, view) == 0 && view->backend ? view->backend
                                  : view->eager_blocks ? "eager" : "none recognised";
            char how[96];
            snprintf(how, sizeof how, "%s, %s", backend, compiled(va) ? "compiled (torch.compile, Inductor)" : "not compiled");
            append(f[1].value[i], sizeof f[1].value[i], va->result->name, how, n_model > 1);
            free(view);
        }
        for (int k = 0; k < 2; k++)
            if (!f[k].value[i][0])
                snprintf(f[k].value[i], sizeof f[k].value[i], "not recorded");
        const run_info *r = &m->in[i]->r;
        snprintf(f[2].value[i], sizeof f[2].value[i], "%s", r->producer == PRODUCER_PYTORCH ? "PyTorch's profiler"
                                                           : r->producer == PRODUCER_KINETO ? "another Kineto producer"
                                                                                            : "attnprof");
    }
    /* as every compared field: a difference between two runs that record it */
    for (int k = 0; k < N_FIELDS; k++) {
        int first = -1;
        for (int i = 0; i < m->n; i++) {
            if (!strcmp(f[k].value[i], "not recorded")) {
                f[k].unrecorded = 1;
                continue;
            }
            if (first < 0)
                first = i;
            else if (strcmp(f[k].value[i], f[k].value[first]))
                f[k].differs = 1;
        }
    }
}

/* A pair whose recorded attention shapes differ (B, Hq, the model's KV heads, S, D, dtype)
 * compares different work: refused without --allow-shape-mismatch, as series runs of two
 * shapes are. A field one side does not record is no difference; the mask and causality
 * (a compiled model hands its backend an explicit mask for is_causal) are compared fields,
 * named in what differs, not refused. */
/* What differs between the pair's recorded inputs into diff: the shape (B, Hq, the model's KV
 * heads, S, D, dtype), then, with `all`, the mask, causality, the backend and compilation. */
static void inputs_differ(const trace_pair *pr, int all, char *diff, size_t n_diff)
{
    model_attn_inputs a, b;
    diff[0] = '\0';
    if (!model_inputs_of(pr->va[0]->result, &a) || !model_inputs_of(pr->va[1]->result, &b))
        return;
#define DIFF(cond, ...)                                                                                               \
    do {                                                                                                           \
        if (cond) {                                                                                                \
            size_t len = strlen(diff);                                                                             \
            snprintf(diff + len, n_diff - len, "%s", len ? ", " : "");                                             \
            len = strlen(diff);                                                                                    \
            snprintf(diff + len, n_diff - len, __VA_ARGS__);                                                       \
        }                                                                                                          \
    } while (0)
    int kva = model_kv_heads(&a), kvb = model_kv_heads(&b);
    DIFF(a.batch != b.batch, "B %d vs %d", a.batch, b.batch);
    DIFF(a.heads_q != b.heads_q, "Hq %d vs %d", a.heads_q, b.heads_q);
    DIFF(kva && kvb && kva != kvb, "Hkv %d vs %d", kva, kvb);
    DIFF(a.seq_q != b.seq_q || a.seq_kv != b.seq_kv, "S %d/%d vs %d/%d", a.seq_q, a.seq_kv, b.seq_q, b.seq_kv);
    DIFF(a.dim != b.dim, "D %d vs %d", a.dim, b.dim);
    DIFF(strcmp(a.dtype, b.dtype), "dtype %s vs %s", a.dtype, b.dtype);
    if (all) {
        DIFF(strcmp(a.mask, b.mask), "mask %s vs %s", a.mask[0] ? a.mask : "none", b.mask[0] ? b.mask : "none");
        DIFF(a.causal >= 0 && b.causal >= 0 && a.causal != b.causal, "%s vs %s", a.causal ? "causal" : "not causal",
             b.causal ? "causal" : "not causal");
        const char *ba = pr->backend[0] ? pr->backend[0] : "eager", *bb = pr->backend[1] ? pr->backend[1] : "eager";
        DIFF(strcmp(ba, bb), "backend %s vs %s", ba, bb);
        int ca = compiled(pr->va[0]), cb = compiled(pr->va[1]);
        DIFF(ca != cb, "%s vs %s", ca ? "compiled" : "not compiled", cb ? "compiled" : "not compiled");
    }
#undef DIFF
}

static int inputs_conflict(const trace_pair *pr, const compare_data *m, char *err, size_t errlen)
{
    char diff[400];
    inputs_differ(pr, 0, diff, sizeof diff);
    if (!diff[0])
        return EXIT_OK;
    return err_set(err, errlen, EXIT_USAGE,
                   "the model traces %s (%s) and %s (%s) record different attention inputs (%s): their steps are "
                   "different work; compare traces of one model's inputs, or pass --allow-shape-mismatch to set them "
                   "side by side anyway",
                   pr->va[0]->result->name, m->in[0]->label, pr->va[1]->result->name, m->in[pr->archive]->label, diff);
}

int compare_traces_build(compare_data *m, const compare_options *opt, char *err, size_t errlen)
{
    compare_traces *t = &m->traces;
    memset(t, 0, sizeof *t);
    const variant_analysis **lists[COMPARE_MAX_ARCHIVES];
    int total = 0;
    for (int i = 0; i < m->n; i++) {
        lists[i] = model_traces_of(m->in[i], &t->n_model[i]);
        total += t->n_model[i];
        t->any |= t->n_model[i] > 0;
    }
    int rc = pairs_known(m, opt, lists, err, errlen);
    /* each run's traces pair with the baseline's at most once each: room for all of them */
    size_t room = (size_t)(total + t->n_model[0] * m->n + 1);
    t->pairs = calloc(room, sizeof *t->pairs);
    t->unpaired = calloc(room, sizeof *t->unpaired);
    if (!t->pairs || !t->unpaired)
        attn_oom();
    for (int i = 1; rc == EXIT_OK && t->any && i < m->n; i++)
        pair_run(m, opt, i, lists[0], t->n_model[0], lists[i], t->n_model[i]);
    for (int k = 0; rc == EXIT_OK && !opt->allow_shape_mismatch && k < t->n_pairs; k++)
        rc = inputs_conflict(&t->pairs[k], m, err, errlen);
    for (int k = 0; rc == EXIT_OK && k < t->n_pairs; k++)
        inputs_differ(&t->pairs[k], 1, t->pairs[k].inputs_differ, sizeof t->pairs[k].inputs_differ);
    for (int i = 0; i < m->n; i++)
        free(lists[i]);
    return rc;
}

void compare_traces_free(compare_traces *t)
{
    free(t->pairs);
    free(t->unpaired);
    memset(t, 0, sizeof *t);
}
