/* The comparison model (compare.h): archives loaded and analysed as `report`
 * does, their metadata set side by side, each variant's per-forward samples
 * bootstrapped against the baseline's, and each variant's GPU operations
 * aligned kernel by kernel. Writers and figures read the model; nothing here
 * formats a document. */
#include "compare.h"
#include "alloc.h"

#include "archive_read.h"
#include "exit_codes.h"
#include "findings.h"
#include "median.h"
#include "occupancy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int compare_load(compare_archive *ar, const char *dir, char *err, size_t errlen)
{
    memset(ar, 0, sizeof *ar);
    trace_init(&ar->t);
    snprintf(ar->dir, sizeof ar->dir, "%s", dir);
    if (archive_read(dir, &ar->t, &ar->r, err, errlen) != 0)
        return EXIT_BAD_ARCHIVE;
    return compare_analyse(ar, err, errlen);
}

int compare_analyse(compare_archive *ar, char *err, size_t errlen)
{
    if (analysis_build(&ar->a, &ar->t, &ar->r, err, errlen) != 0) {
        trace_free(&ar->t);
        return EXIT_BAD_ARCHIVE;
    }
    findings_derive(&ar->a);
    const attn_shape *s = &ar->r.shape;
    double full = 4.0 * s->batch * s->heads * (double)s->seq * s->seq * s->dim;
    ar->flops = ar->r.causal ? full / 2 : full;
    return EXIT_OK;
}

void compare_archive_free(compare_archive *ar)
{
    analysis_free(&ar->a);
    trace_free(&ar->t);
}

/* ---- metadata ----------------------------------------------------------- */

static const char nr_text[] = "not recorded";

static void version_text(int v, char *out, size_t n)
{
    if (v <= 0)
        snprintf(out, n, "%s", nr_text);
    else
        snprintf(out, n, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
}

static compare_field *field(compare_model *m, const char *name, int in_sentence)
{
    compare_field *f = &m->fields[m->n_fields++];
    memset(f, 0, sizeof *f);
    f->name = name;
    f->in_sentence = in_sentence;
    return f;
}

static void fill_fields(compare_model *m)
{
    m->n_fields = 0;
    compare_field *gpu = field(m, "GPU", 1), *uuid = field(m, "GPU UUID", 1), *sms = field(m, "SMs", 1), *mem = field(m, "Memory", 1),
                  *clk = field(m, "SM clock", 1), *mclk = field(m, "Memory clock", 1),
                  *drv = field(m, "Driver", 1), *rt = field(m, "CUDA runtime", 1), *cublas = field(m, "cuBLAS", 1),
                  *cudnn = field(m, "cuDNN", 1), *cupti = field(m, "CUPTI", 1),
                  *tool = field(m, "attnprof", 1), *date = field(m, "Date", 0), *shape = field(m, "Shape", 1),
                  *dtype = field(m, "Data type", 1), *iters = field(m, "Recorded forwards", 1),
                  *warmup = field(m, "Warm-up forwards", 1), *seed = field(m, "Seed", 1),
                  *l2 = field(m, "L2 state", 1), *rule = field(m, "Stop rule", 1), *passes = field(m, "Passes", 1);
    for (int i = 0; i < m->n; i++) {
        const run_info *r = &m->in[i]->r;
        const device_props *d = &r->device;
        snprintf(gpu->value[i], sizeof gpu->value[i], "%s (sm_%d%d)", d->name, d->major, d->minor);
        /* Which physical GPU: recorded since the sweep (run.json "gpu.uuid"). */
        snprintf(uuid->value[i], sizeof uuid->value[i], "%s", r->gpu_uuid[0] ? r->gpu_uuid : nr_text);
        /* An imported Kineto trace lacks some of these: say so rather than print 0. */
        const char *nr = nr_text;
        if (d->sm_count > 0)
            snprintf(sms->value[i], sizeof sms->value[i], "%d", d->sm_count);
        else
            snprintf(sms->value[i], sizeof sms->value[i], "%s", nr);
        if (d->total_mem > 0)
            snprintf(mem->value[i], sizeof mem->value[i], "%.1f GiB", d->total_mem / 1073741824.0);
        else
            snprintf(mem->value[i], sizeof mem->value[i], "%s", nr);
        if (d->clock_khz > 0)
            snprintf(clk->value[i], sizeof clk->value[i], "%d MHz", d->clock_khz / 1000);
        else
            snprintf(clk->value[i], sizeof clk->value[i], "%s", nr);
        if (d->mem_clock_khz > 0)
            snprintf(mclk->value[i], sizeof mclk->value[i], "%d MHz", d->mem_clock_khz / 1000);
        else
            snprintf(mclk->value[i], sizeof mclk->value[i], "%s", nr);
        snprintf(drv->value[i], sizeof drv->value[i], "%s", r->driver_version[0] ? r->driver_version : nr_text);
        if (r->cuda_runtime_version > 0)
            snprintf(rt->value[i], sizeof rt->value[i], "%d.%d", r->cuda_runtime_version / 1000,
                     r->cuda_runtime_version % 1000 / 10);
        else
            snprintf(rt->value[i], sizeof rt->value[i], "%s", nr);
        version_text(r->cublas_version, cublas->value[i], sizeof cublas->value[i]);
        version_text(r->cudnn_version, cudnn->value[i], sizeof cudnn->value[i]);
        snprintf(cupti->value[i], sizeof cupti->value[i], "%d", r->cupti_version);
        snprintf(tool->value[i], sizeof tool->value[i], "%s", r->tool_version);
        snprintf(date->value[i], sizeof date->value[i], "%s", r->date);
        /* An import without --shape records neither shape nor dtype. */
        if (run_info_shape_recorded(r))
            snprintf(shape->value[i], sizeof shape->value[i], "%d×%d×%d×%d", r->shape.batch, r->shape.heads,
                     r->shape.seq, r->shape.dim);
        else
            snprintf(shape->value[i], sizeof shape->value[i], "%s", nr);
        if (r->dtype[0])
            snprintf(dtype->value[i], sizeof dtype->value[i], "%s%s", r->dtype, r->causal ? ", causal" : "");
        else
            snprintf(dtype->value[i], sizeof dtype->value[i], "%s", nr);
        if (!strcmp(r->measurement.iters_rule, "auto")) /* each variant its own count (the stop rule) */
            snprintf(iters->value[i], sizeof iters->value[i], "up to %d (--iters auto)", r->iters);
        else
            snprintf(iters->value[i], sizeof iters->value[i], "%d", r->iters);
        /* A Kineto trace holds neither the inputs' seed nor the forwards run
         * before profiling: for an import both are not recorded, whatever
         * run.json says (older imports wrote 0 for them). */
        /* issue 25: how the forwards were measured; archives before it do not say */
        const measurement_plan *mp = &r->measurement;
        snprintf(l2->value[i], sizeof l2->value[i], "%s", compare_l2_state(r) ? compare_l2_state(r) : nr);
        if (mp->recorded && !strcmp(mp->iters_rule, "auto"))
            snprintf(rule->value[i], sizeof rule->value[i], "auto (noise below %.2g%%, %d–%d forwards)",
                     mp->noise_target * 100, mp->min_forwards, mp->max_forwards);
        else if (mp->recorded)
            snprintf(rule->value[i], sizeof rule->value[i], "fixed (%d forwards)", r->iters);
        else
            snprintf(rule->value[i], sizeof rule->value[i], "%s", nr);
        if (mp->recorded)
            snprintf(passes->value[i], sizeof passes->value[i], "%d", mp->replicates > 0 ? mp->replicates : 1);
        else
            snprintf(passes->value[i], sizeof passes->value[i], "%s", nr);
        if (r->imported) {
            snprintf(warmup->value[i], sizeof warmup->value[i], "%s", nr);
            snprintf(seed->value[i], sizeof seed->value[i], "%s", nr);
        } else {
            snprintf(warmup->value[i], sizeof warmup->value[i], "%d", r->warmup);
            snprintf(seed->value[i], sizeof seed->value[i], "%llu", r->seed);
        }
    }
    /* issue 25's fields are named in the sentence only where some run records them:
     * archives before it record none, and listing them would say nothing. */
    compare_field *measured[] = {l2, rule, passes};
    for (size_t k = 0; k < sizeof measured / sizeof measured[0]; k++) {
        compare_field *x = measured[k];
        int any = 0;
        for (int i = 0; i < m->n; i++)
            any |= strcmp(x->value[i], nr_text) != 0;
        x->in_sentence = any;
    }
    /* A field differs when two runs that record it hold different values; "not
     * recorded" against a value is unknown, not a difference. */
    for (int f = 0; f < m->n_fields; f++) {
        compare_field *x = &m->fields[f];
        int first = -1;
        for (int i = 0; i < m->n; i++) {
            if (!strcmp(x->value[i], nr_text)) {
                x->unrecorded = 1;
                continue;
            }
            if (first < 0)
                first = i;
            else if (strcmp(x->value[i], x->value[first]))
                x->differs = 1;
        }
    }
}

/* "cuDNN differs (9.14.0 vs 9.19.0); GPU, driver and shape are equal.", then the
 * fields some run does not record. */
static void differs_sentence(compare_model *m)
{
    char *s = m->differs_sentence;
    size_t cap = sizeof m->differs_sentence, len = 0;
    s[0] = '\0';
#define PUT(...) (len += (size_t)snprintf(s + len, len < cap ? cap - len : 0, __VA_ARGS__))
    int named = 0;
    for (int f = 0; f < m->n_fields; f++) {
        const compare_field *x = &m->fields[f];
        if (!x->differs || !x->in_sentence)
            continue;
        size_t nl = strlen(x->name);
        int plural = nl > 1 && x->name[nl - 1] == 's';
        PUT("%s%s %s (", named++ ? "; " : "", x->name, plural ? "differ" : "differs");
        for (int i = 0; i < m->n; i++)
            PUT("%s%s", i ? " vs " : "", x->value[i]);
        PUT(")");
    }
    const char *anchors[] = {"GPU", "Driver", "Shape"};
    const char *equal[3];
    int n_equal = 0;
    for (int k = 0; k < 3; k++)
        for (int f = 0; f < m->n_fields; f++)
            if (!strcmp(m->fields[f].name, anchors[k]) && !m->fields[f].differs && !m->fields[f].unrecorded)
                equal[n_equal++] = k == 0 ? "GPU" : k == 1 ? "driver" : "shape";
    int date_differs = 0;
    for (int f = 0; f < m->n_fields; f++)
        if (!m->fields[f].in_sentence && m->fields[f].differs)
            date_differs = 1;
    if (!named)
        PUT("Nothing recorded differs%s", date_differs ? " but the date" : "");
    if (n_equal) {
        PUT("%s", named ? "; " : ": ");
        for (int k = 0; k < n_equal; k++)
            PUT("%s%s", k == 0 ? "" : k == n_equal - 1 ? " and " : ", ", equal[k]);
        PUT(" %s equal", n_equal == 1 ? "is" : "are");
    }
    PUT(".");
    /* What some run does not record is neither equal nor different: say which. */
    int n_unrecorded = 0;
    for (int f = 0; f < m->n_fields; f++)
        if (m->fields[f].unrecorded && m->fields[f].in_sentence)
            PUT("%s%s", n_unrecorded++ ? ", " : " Not recorded by every run, so not compared: ", m->fields[f].name);
    if (n_unrecorded)
        PUT(".");
#undef PUT
}

/* ---- per-variant cells -------------------------------------------------- */

static int variant_index(const compare_model *m, const char *name)
{
    for (int i = 0; i < m->n_variants; i++)
        if (!strcmp(m->variants[i].name, name))
            return i;
    return -1;
}

static void fill_cell(compare_cell *c, const compare_archive *ar, const char *name, int throughput)
{
    memset(c, 0, sizeof *c);
    /* No ratio until one is computed: NAN, never a 0 that reads as a value. */
    compare_ratio none = {.ci = {NAN, NAN, NAN}, .verdict = VERDICT_NONE};
    c->metric_ratio = c->cpu_ratio = c->ops_ratio = none;
    c->va = analysis_find(&ar->a, name);
    c->state = "not run";
    c->reason = "";
    if (!c->va)
        return;
    c->state = variant_status_name(c->va->result->status);
    c->reason = c->va->result->error;
    int n = c->va->n_forwards;
    c->n = n;
    size_t bytes = sizeof(double) * (size_t)(n ? n : 1);
    c->metric = malloc(bytes);
    c->cpu = malloc(bytes);
    c->ops = malloc(bytes);
    if (!c->metric || !c->cpu || !c->ops)
        attn_oom();
    for (int i = 0; i < n; i++) {
        const forward *fw = &c->va->forwards[i];
        c->metric[i] = throughput ? (fw->cuda_us > 0 ? ar->flops / (fw->cuda_us * 1e-6) / 1e12 : NAN) : fw->cuda_us;
        c->cpu[i] = fw->cpu_us;
        c->ops[i] = fw->n_ops;
    }
    c->metric_stats = stats_of(c->metric, n);
    c->cpu_stats = stats_of(c->cpu, n);
    c->ops_stats = stats_of(c->ops, n);
}

static int comparable(const compare_cell *c) { return c->va && c->va->result->status == VARIANT_OK && c->n > 0; }

/* ---- kernel-level summaries and alignment ------------------------------- */

typedef struct sample_list {
    double *v;
    int n, cap;
} sample_list;

static void sample_push(sample_list *l, double x)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
        if (!l->v)
            attn_oom();
    }
    l->v[l->n++] = x;
}

/* The same operation in one forward and another: kind, role and name, and for
 * copies and memsets the direction and the bytes, which the name does not carry. */
static int same_operation(const kernel_summary *k, const gpu_op *op, op_role role)
{
    return k->op->kind == op->kind && k->role == role && !strcmp(k->op->name, op->name) &&
           (op->kind == GPU_KERNEL || (k->op->bytes == op->bytes && !strcmp(k->op->copy_kind, op->copy_kind)));
}

/* Every distinct GPU operation of a variant's forwards, with its role, how
 * often it runs per forward and the median duration of one run. */
static int summarise_kernels(const variant_analysis *va, const device_props *dev, kernel_summary **out)
{
    *out = NULL;
    if (!va || !va->n_forwards)
        return 0;
    int n = 0, cap = 0;
    kernel_summary *k = NULL;
    sample_list *durs = NULL;
    for (int f = 0; f < va->n_forwards; f++) {
        const forward *fw = &va->forwards[f];
        op_role *roles = malloc(sizeof *roles * (size_t)(fw->n_ops ? fw->n_ops : 1));
        if (!roles)
            attn_oom();
        op_roles_of_forward(fw->ops, fw->n_ops, roles);
        for (int i = 0; i < fw->n_ops; i++) {
            const gpu_op *op = fw->ops[i];
            int j = 0;
            while (j < n && !same_operation(&k[j], op, roles[i]))
                j++;
            if (j == n) {
                if (n == cap) {
                    cap = cap ? cap * 2 : 16;
                    k = realloc(k, sizeof *k * (size_t)cap);
                    durs = realloc(durs, sizeof *durs * (size_t)cap);
                    if (!k || !durs)
                        attn_oom();
                }
                memset(&k[n], 0, sizeof k[n]);
                memset(&durs[n], 0, sizeof durs[n]);
                k[n].op = op;
                k[n].cls = classify_op(op);
                k[n].role = roles[i];
                k[n].order = i;
                k[n].registers = op->registers;
                k[n].smem = op->static_smem + op->dynamic_smem;
                occupancy occ;
                k[n].occupancy = op->kind == GPU_KERNEL && occupancy_of_op(op, dev, &occ, NULL, 0) == 0
                                     ? occ.theoretical
                                     : NAN;
                n++;
            }
            if (i < k[j].order)
                k[j].order = i;
            sample_push(&durs[j], (double)(op->end_ns - op->start_ns) / 1000.0);
        }
        free(roles);
    }
    for (int j = 0; j < n; j++) {
        k[j].per_forward = (double)durs[j].n / va->n_forwards;
        k[j].median_us = median_of(durs[j].v, durs[j].n);
        k[j].samples = durs[j].v;
        k[j].n_samples = durs[j].n;
    }
    free(durs);
    *out = k;
    return n;
}

static int by_order(const void *pa, const void *pb)
{
    const kernel_summary *a = *(const kernel_summary *const *)pa, *b = *(const kernel_summary *const *)pb;
    return a->order - b->order;
}

static int row_order(const kernel_row *r) { return r->base ? r->base->order : r->other->order; }

static int rows_by_order(const void *pa, const void *pb)
{
    const kernel_row *a = pa, *b = pb;
    int d = row_order(a) - row_order(b);
    if (d)
        return d;
    return (int)a->change - (int)b->change;
}

static void add_row(kernel_diff *d, kernel_change ch, const kernel_summary *b, const kernel_summary *o,
                    double min_effect)
{
    kernel_row *r = &d->rows[d->n++];
    r->change = ch;
    r->base = b;
    r->other = o;
    if (b && o)
        r->time = compare_ratio_of(b->samples, b->n_samples, o->samples, o->n_samples, min_effect, 0);
    r->changed_resources = b && o &&
                           (b->registers != o->registers || b->smem != o->smem ||
                            (isfinite(b->occupancy) && isfinite(o->occupancy) &&
                             fabs(b->occupancy - o->occupancy) > 1e-9));
    r->notable = ch != KERNEL_SAME || r->changed_resources ||
                 r->time.verdict == VERDICT_FASTER || r->time.verdict == VERDICT_SLOWER ||
                 r->time.verdict == VERDICT_AMBIGUOUS ||
                 (b && o && fabs(b->per_forward - o->per_forward) > 1e-9);
}

/* A finding's head: its wording up to the first ':', '(' or '`' (what was found,
 * before the details: the numbers, the kernels' names, where it was launched),
 * with numbers taken out, so "a 256 MiB Memcpy DtoD inside every forward (…)"
 * is one finding whether or not the trace says which ATen op hid it, and one
 * fused kernel is one finding whichever kernel it is (the kernel table shows
 * the rename). */
static void finding_key(const char *s, char *out, size_t n)
{
    size_t j = 0;
    for (; *s && *s != ':' && *s != '(' && *s != '`' && j + 1 < n; s++) {
        if (*s == '\\' && s[1] == '`') /* an escaped backquote starts a name too */
            break;
        if (isdigit((unsigned char)*s)) {
            while (isdigit((unsigned char)s[1]) || s[1] == '.' || s[1] == ',')
                s++;
            out[j++] = '#';
        } else {
            out[j++] = *s;
        }
    }
    while (j > 0 && out[j - 1] == ' ')
        j--;
    out[j] = '\0';
}

static int has_finding_key(const variant_analysis *va, const char *key)
{
    char k[400];
    for (int i = 0; va && i < va->n_findings; i++) {
        finding_key(va->findings[i], k, sizeof k);
        if (!strcmp(k, key))
            return 1;
    }
    return 0;
}

/* Findings that rest on a record not every archive holds, by head: without the
 * record on the other side the finding cannot be tested there, so its absence
 * says nothing. (The findings themselves are derived in findings.c from these
 * same records: r->expected_ops and the variant's facts.) */
static const struct finding_need {
    const char *head;      /* prefix of finding_key */
    const char *fact;      /* the variant fact it needs; NULL: the expected operation count */
    const char *missing;
} finding_needs[] = {
    {"observed # GPU operations per forward where # were expected", NULL, "no expected operation count"},
    {"one-off cost # ms in setup", "plan_build_us", "no setup phases"},
    {"plan rebuilt in every forward", "plan_build_us", "no setup phases"},
    {"fully-masked rows", "fully_masked_rows", "no check of the output's fully-masked rows"},
};

static int has_fact(const variant_result *r, const char *key)
{
    for (int i = 0; i < r->facts.n; i++)
        if (!strcmp(r->facts.item[i].key, key))
            return 1;
    return 0;
}

/* What `other` lacks to test a finding with this head, or NULL when it has it all. */
static const char *missing_for(const char *key, const variant_analysis *other)
{
    for (size_t k = 0; k < sizeof finding_needs / sizeof finding_needs[0]; k++) {
        const struct finding_need *w = &finding_needs[k];
        if (strncmp(key, w->head, strlen(w->head)))
            continue;
        const variant_result *r = other->result;
        if (w->fact ? !has_fact(r, w->fact) : r->expected_ops < 0)
            return w->missing;
    }
    return NULL;
}

/* The findings of `from` that `to` lacks: either a gap (`to` cannot test it, missing_for says
 * why) or a finding of `from` only. Called once per direction. */
static void one_sided_findings(const variant_analysis *from, const variant_analysis *to, finding_gap *gaps,
                               int *n_gaps, const char **only, int *n_only)
{
    char key[400];
    for (int i = 0; from && i < from->n_findings; i++) {
        finding_key(from->findings[i], key, sizeof key);
        if (has_finding_key(to, key))
            continue;
        const char *missing = missing_for(key, to);
        if (missing)
            gaps[(*n_gaps)++] = (finding_gap){from->findings[i], missing};
        else
            only[(*n_only)++] = from->findings[i];
    }
}

static void diff_findings(kernel_diff *d, const variant_analysis *base, const variant_analysis *other)
{
    d->only_base = calloc(MAX_FINDINGS, sizeof *d->only_base);
    d->only_other = calloc(MAX_FINDINGS, sizeof *d->only_other);
    d->gap_base = calloc(MAX_FINDINGS, sizeof *d->gap_base);
    d->gap_other = calloc(MAX_FINDINGS, sizeof *d->gap_other);
    if (!d->only_base || !d->only_other || !d->gap_base || !d->gap_other)
        attn_oom();
    one_sided_findings(base, other, d->gap_base, &d->n_gap_base, d->only_base, &d->n_only_base);
    one_sided_findings(other, base, d->gap_other, &d->n_gap_other, d->only_other, &d->n_only_other);
}

/* Operations are paired only within a role (op_role.h), so a scale is never set
 * beside a mask or a softmax beside a cast. Within a role: the same operation
 * first (same_operation: name, and for copies and memsets direction and bytes);
 * then a copy or memset of the same direction with other bytes; then, in forward
 * order, an unmatched kernel of the baseline and one of the other archive are
 * the step done by another kernel, "renamed" (another cuDNN knob, PyTorch's
 * kernel for ours). What is left has no counterpart of its role on the other
 * side: added or removed, listed under its role. */
static void diff_kernels(kernel_diff *d, const kernel_summary *base, int nb, const kernel_summary *other, int no,
                         double min_effect)
{
    d->rows = calloc((size_t)(nb + no + 1), sizeof *d->rows);
    const kernel_summary **b = calloc((size_t)nb + 1, sizeof *b), **o = calloc((size_t)no + 1, sizeof *o);
    if (!d->rows || !b || !o)
        attn_oom();
    for (int i = 0; i < nb; i++)
        b[i] = &base[i];
    for (int i = 0; i < no; i++)
        o[i] = &other[i];
    qsort(b, (size_t)nb, sizeof *b, by_order);
    qsort(o, (size_t)no, sizeof *o, by_order);
    char *used_o = calloc((size_t)no + 1, 1), *used_b = calloc((size_t)nb + 1, 1);
    if (!used_o || !used_b)
        attn_oom();
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < no; j++)
            if (!used_o[j] && same_operation(b[i], o[j]->op, o[j]->role)) {
                add_row(d, KERNEL_SAME, b[i], o[j], min_effect);
                used_b[i] = used_o[j] = 1;
                break;
            }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nb; i++) {
            if (used_b[i])
                continue;
            for (int j = 0; j < no; j++) {
                if (used_o[j] || b[i]->op->kind != o[j]->op->kind || b[i]->role != o[j]->role)
                    continue;
                /* Pass 0: copies and memsets of one direction; pass 1: the rest of the role. */
                if (pass == 0 && (b[i]->op->kind == GPU_KERNEL || strcmp(b[i]->op->copy_kind, o[j]->op->copy_kind)))
                    continue;
                add_row(d, KERNEL_RENAMED, b[i], o[j], min_effect);
                used_b[i] = used_o[j] = 1;
                break;
            }
        }
    for (int i = 0; i < nb; i++)
        if (!used_b[i])
            add_row(d, KERNEL_REMOVED, b[i], NULL, min_effect);
    for (int j = 0; j < no; j++)
        if (!used_o[j])
            add_row(d, KERNEL_ADDED, NULL, o[j], min_effect);
    qsort(d->rows, (size_t)d->n, sizeof *d->rows, rows_by_order);
    free(b);
    free(o);
    free(used_b);
    free(used_o);
}

/* Per forward, the summed durations and the count of each role's operations. */
static void summarise_roles(const variant_analysis *va, role_time *rt)
{
    for (int r = 0; r < ROLE_COUNT; r++) {
        memset(&rt[r], 0, sizeof rt[r]);
        rt[r].ratio = (compare_ratio){.ci = {NAN, NAN, NAN}, .verdict = VERDICT_NONE};
    }
    if (!va || !va->n_forwards)
        return;
    int nf = va->n_forwards;
    double *us = calloc((size_t)nf * ROLE_COUNT, sizeof *us), *count = calloc((size_t)nf * ROLE_COUNT, sizeof *count);
    if (!us || !count)
        attn_oom();
    int present[ROLE_COUNT] = {0};
    for (int f = 0; f < nf; f++) {
        const forward *fw = &va->forwards[f];
        op_role *roles = malloc(sizeof *roles * (size_t)(fw->n_ops ? fw->n_ops : 1));
        if (!roles)
            attn_oom();
        op_roles_of_forward(fw->ops, fw->n_ops, roles);
        for (int i = 0; i < fw->n_ops; i++) {
            us[(size_t)roles[i] * nf + f] += (double)(fw->ops[i]->end_ns - fw->ops[i]->start_ns) / 1000.0;
            count[(size_t)roles[i] * nf + f] += 1;
            present[roles[i]] = 1;
        }
        free(roles);
    }
    for (int r = 0; r < ROLE_COUNT; r++) {
        if (!present[r])
            continue;
        rt[r].us = malloc(sizeof *rt[r].us * (size_t)nf);
        if (!rt[r].us)
            attn_oom();
        memcpy(rt[r].us, us + (size_t)r * nf, sizeof *rt[r].us * (size_t)nf);
        rt[r].n = nf;
        rt[r].st = stats_of(rt[r].us, nf);
        rt[r].ops = median_of(count + (size_t)r * nf, nf);
    }
    free(us);
    free(count);
}

/* ---- the model ---------------------------------------------------------- */

static void unique_labels(compare_model *m)
{
    for (int i = 0; i < m->n; i++) {
        compare_archive *ar = m->in[i];
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s", ar->dir);
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/')
            path[--len] = '\0';
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        snprintf(ar->label, sizeof ar->label, "%s", *base ? base : "archive");
        int same = 0;
        for (int j = 0; j < i; j++)
            if (!strncmp(m->in[j]->label, ar->label, strlen(ar->label)))
                same++;
        if (same) {
            char tail[16];
            snprintf(tail, sizeof tail, " (%d)", same + 1);
            size_t room = sizeof ar->label - strlen(tail) - 1;
            if (strlen(ar->label) > room)
                ar->label[room] = '\0';
            strcat(ar->label, tail);
        }
    }
}

/* How many of an archive's variants are model traces (model_is_step_trace). */
static int model_traces_in(const compare_archive *ar)
{
    int n = 0;
    for (int v = 0; v < ar->a.n; v++)
        n += model_is_step_trace(&ar->a.v[v]);
    return n;
}

/* The shapes and dtypes of the runs against the baseline's: equal, or compared in TFLOP/s
 * under --allow-shape-mismatch (m->throughput); an import without a shape, or a model's
 * traces against a run of one attention shape, compare neither way. EXIT_OK or EXIT_USAGE. */
static int check_shapes(compare_model *m, const compare_options *opt, char *err, size_t errlen)
{
    const run_info *b = &m->in[0]->r;
    for (int i = 1; i < m->n; i++) {
        const run_info *r = &m->in[i]->r;
        int shape_differs = memcmp(&r->shape, &b->shape, sizeof r->shape) != 0 || r->causal != b->causal;
        int dtype_differs = strcmp(r->dtype, b->dtype) != 0;
        /* An import without --shape records none: no time per shape nor throughput compares. */
        const run_info *unshaped = !run_info_shape_recorded(b) ? b : !run_info_shape_recorded(r) ? r : NULL;
        const compare_archive *ua = unshaped == b ? m->in[0] : m->in[i], *sa = unshaped == b ? m->in[i] : m->in[0];
        if ((shape_differs || dtype_differs) && unshaped && model_traces_in(ua) && !model_traces_in(sa)) {
            /* --shape would be the wrong advice: a model's step is no one attention shape */
            snprintf(err, errlen,
                     "%s holds model traces (ProfilerStep#N steps with their CPU ops) and %s none: a model's step is "
                     "not a forward of one attention shape, so nothing of the one pairs with the other; compare a "
                     "model import with another import of a model",
                     ua->label, sa->label);
            return EXIT_USAGE;
        }
        if ((shape_differs || dtype_differs) && unshaped) {
            snprintf(err, errlen,
                     "%s records no shape (its traces carry none), so it compares with %s neither per forward nor "
                     "in TFLOP/s; import it again with --shape BxHxSxD[,dtype][,causal]",
                     unshaped == b ? m->in[0]->label : m->in[i]->label, unshaped == b ? m->in[i]->label
                                                                                      : m->in[0]->label);
            return EXIT_USAGE;
        }
        if ((shape_differs || dtype_differs) && !opt->allow_shape_mismatch) {
            snprintf(err, errlen,
                     "%s is %dx%dx%dx%d %s%s but the baseline %s is %dx%dx%dx%d %s%s; compare runs of one shape, "
                     "or pass --allow-shape-mismatch to compare throughput (TFLOP/s)",
                     m->in[i]->label, r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim, r->dtype,
                     r->causal ? " causal" : "", m->in[0]->label, b->shape.batch, b->shape.heads, b->shape.seq,
                     b->shape.dim, b->dtype, b->causal ? " causal" : "");
            return EXIT_USAGE;
        }
        if (shape_differs || dtype_differs)
            m->throughput = 1;
    }
    return EXIT_OK;
}

int compare_build(compare_model *m, compare_archive **in, int n, const compare_options *opt, char *err,
                  size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (n < 2 || n > COMPARE_MAX_ARCHIVES) {
        snprintf(err, errlen, "compare takes 2 to %d archives, got %d", COMPARE_MAX_ARCHIVES, n);
        return EXIT_USAGE;
    }
    if (opt->baseline < 0 || opt->baseline >= n) {
        snprintf(err, errlen, "--baseline: no such archive among the %d given", n);
        return EXIT_USAGE;
    }
    /* The baseline goes first: every table reads left to right from it. */
    m->n = n;
    m->in[0] = in[opt->baseline];
    for (int i = 0, k = 1; i < n; i++)
        if (i != opt->baseline)
            m->in[k++] = in[i];
    m->baseline = 0;
    m->min_effect = opt->min_effect;
    m->cpu_floor = opt->min_effect > COMPARE_CPU_NOISE_FLOOR ? opt->min_effect : COMPARE_CPU_NOISE_FLOOR;
    unique_labels(m);

    int src = check_shapes(m, opt, err, errlen);
    if (src != EXIT_OK)
        return src;

    int l2rc = compare_l2_check(m->in, n, opt->allow_l2_mismatch, err, errlen);
    if (l2rc != EXIT_OK)
        return l2rc;
    fill_fields(m);
    compare_traces_fields(m);
    differs_sentence(m);

    int cap = 0;
    for (int i = 0; i < n; i++)
        cap += m->in[i]->a.n;
    m->variants = calloc((size_t)(cap ? cap : 1), sizeof *m->variants);
    if (!m->variants)
        attn_oom();
    for (int i = 0; i < n; i++)
        for (int v = 0; v < m->in[i]->a.n; v++) {
            const char *name = m->in[i]->a.v[v].result->name;
            if (variant_index(m, name) < 0)
                snprintf(m->variants[m->n_variants++].name, sizeof m->variants[0].name, "%s", name);
        }
    for (int v = 0; v < m->n_variants; v++) {
        compare_variant *cv = &m->variants[v];
        for (int i = 0; i < n; i++) {
            fill_cell(&cv->cell[i], m->in[i], cv->name, m->throughput);
            compare_cell_passes(&cv->cell[i], &m->in[i]->r);
            cv->n_kernels[i] = summarise_kernels(cv->cell[i].va, &m->in[i]->t.device, &cv->kernels[i]);
            summarise_roles(cv->cell[i].va, cv->roles[i]);
        }
        for (int i = 1; i < n; i++)
            for (int r = 0; r < ROLE_COUNT; r++) {
                const role_time *b = &cv->roles[0][r];
                role_time *o = &cv->roles[i][r];
                /* Times of different shapes are different work: no ratio then. */
                if (b->n && o->n && !m->throughput)
                    o->ratio = compare_ratio_of(b->us, b->n, o->us, o->n, m->min_effect, 0);
            }
        compare_cell *base = &cv->cell[0];
        /* The baseline against itself: exactly 1 (no verdict, it is the reference). */
        if (comparable(base)) {
            compare_ratio one = {.ci = {1, 1, 1}, .verdict = VERDICT_NONE};
            base->metric_ratio = base->cpu_ratio = base->ops_ratio = one;
        }
        for (int i = 1; i < n; i++) {
            compare_cell *c = &cv->cell[i];
            if (comparable(base) && comparable(c)) {
                /* Both runs hold replicates: the drift between their own passes is the floor
                 * (compare_measurement.c); else the documented floors (compare.h). */
                c->replicate_floor = compare_replicates_apply(base, c);
                c->metric_floor = c->replicate_floor ? fmax(base->pass_spread_metric, c->pass_spread_metric)
                                                     : m->min_effect;
                /* CPU time: never below the documented floor. Three passes in one process missed the
                 * drift between processes: two identical batches came out 0.62x "faster" against a
                 * 42% between-pass spread (bench/results/2026-12-02-measurement.md). */
                c->cpu_floor = c->replicate_floor
                                   ? fmax(m->cpu_floor, fmax(base->pass_spread_cpu, c->pass_spread_cpu))
                                   : m->cpu_floor;
                c->metric_ratio = compare_ratio_of(base->metric, base->n, c->metric, c->n, c->metric_floor,
                                                   m->throughput);
                c->cpu_ratio = compare_ratio_of(base->cpu, base->n, c->cpu, c->n, c->cpu_floor, 0);
                c->ops_ratio = compare_ratio_of(base->ops, base->n, c->ops, c->n, 0, 0);
            }
            if (base->va && c->va) {
                diff_kernels(&cv->diff[i], cv->kernels[0], cv->n_kernels[0], cv->kernels[i], cv->n_kernels[i],
                             m->min_effect);
                diff_findings(&cv->diff[i], base->va, c->va);
            }
        }
    }
    int rc = compare_traces_build(m, opt, err, errlen);
    if (rc != EXIT_OK)
        compare_free(m);
    return rc;
}

void compare_free(compare_model *m)
{
    for (int v = 0; v < m->n_variants; v++) {
        compare_variant *cv = &m->variants[v];
        for (int i = 0; i < m->n; i++) {
            free(cv->cell[i].metric);
            free(cv->cell[i].cpu);
            free(cv->cell[i].ops);
            for (int k = 0; k < cv->n_kernels[i]; k++)
                free(cv->kernels[i][k].samples);
            free(cv->kernels[i]);
            free(cv->diff[i].rows);
            free(cv->diff[i].only_base);
            free(cv->diff[i].only_other);
            for (int r = 0; r < ROLE_COUNT; r++)
                free(cv->roles[i][r].us);
            free(cv->diff[i].gap_base);
            free(cv->diff[i].gap_other);
        }
    }
    free(m->variants);
    compare_traces_free(&m->traces);
    memset(m, 0, sizeof *m);
}
