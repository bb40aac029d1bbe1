/* Compare's kernel pairing (compare.h): every distinct GPU operation of a variant's
 * forwards with its role, count per forward and median duration; the baseline's and
 * another run's operations paired within each role (same, renamed, added, removed);
 * and each role's summed time per forward, the like-with-like measure. */
#include "compare_parts.h"
#include "alloc.h"

#include "hash_index.h"
#include "median.h"
#include "occupancy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int same_operation(const kernel_summary *k, const gpu_op *op, int role)
{
    return k->op->kind == op->kind && k->role == role && !strcmp(k->op->name, op->name) &&
           (op->kind == GPU_KERNEL || (k->op->bytes == op->bytes && !strcmp(k->op->copy_kind, op->copy_kind)));
}

/* The key of an operation in the summaries' hash index: what same_operation compares. */
static uint64_t operation_hash(const gpu_op *op, int role)
{
    uint64_t h = hash_str(HASH_SEED, op->name);
    int kind = op->kind, r = role;
    h = hash_bytes(h, &kind, sizeof kind);
    h = hash_bytes(h, &r, sizeof r);
    if (op->kind != GPU_KERNEL) {
        h = hash_bytes(h, &op->bytes, sizeof op->bytes);
        h = hash_str(h, op->copy_kind);
    }
    return h;
}

typedef struct operation_key {
    const kernel_summary *k;
    const gpu_op *op;
    int role;
} operation_key;

static int operation_equal(int pos, const void *ctx)
{
    const operation_key *key = ctx;
    return same_operation(&key->k[pos], key->op, key->role);
}

_Static_assert(ROLE_COUNT <= COMPARE_ROLE_COUNT, "a series role is a compare role");

const char *compare_role_name(int model_roles, int role, char *out, size_t n)
{
    if (!model_roles) {
        snprintf(out, n, "%s", op_role_name((op_role)role));
        return out;
    }
    model_phase phase = (model_phase)(role / MROLE_COUNT);
    const char *name = model_role_name((model_role)(role % MROLE_COUNT));
    if (phase == MPHASE_FORWARD || strstr(name, model_phase_name(phase))) /* "attention_backward" says it */
        snprintf(out, n, "%s", name);
    else
        snprintf(out, n, "%s (%s)", name, model_phase_name(phase));
    return out;
}

/* The compare roles of a forward's ops into out[0..n_ops): the model's phase and role
 * (model_forward_roles, as kernels.csv says them) when model_roles, else the series' op_role. */
static int *forward_roles(const variant_analysis *va, const forward *fw, int model_roles)
{
    size_t cap = (size_t)(fw->n_ops ? fw->n_ops : 1);
    int *out = malloc(sizeof *out * cap);
    if (!out)
        attn_oom();
    if (model_roles) {
        model_role *role = malloc(sizeof *role * cap);
        model_phase *phase = malloc(sizeof *phase * cap);
        if (!role || !phase)
            attn_oom();
        model_forward_roles(va, fw, role, phase);
        for (int i = 0; i < fw->n_ops; i++)
            out[i] = compare_model_role(phase[i], role[i]);
        free(role), free(phase);
    } else {
        op_role *role = malloc(sizeof *role * cap);
        if (!role)
            attn_oom();
        op_roles_of_forward(fw->ops, fw->n_ops, role);
        for (int i = 0; i < fw->n_ops; i++)
            out[i] = (int)role[i];
        free(role);
    }
    return out;
}

/* Every distinct GPU operation of a variant's forwards, with its role, how
 * often it runs per forward and the median duration of one run. The distinct ones are found
 * by hash (hash_index.h), not by a scan of those found so far: a forward of 64 000 distinct
 * kernels made that scan quadratic. */
int compare_kernels_summarise(const variant_analysis *va, const device_props *dev, int model_roles,
                              kernel_summary **out)
{
    *out = NULL;
    if (!va || !va->n_forwards)
        return 0;
    int n = 0, cap = 0;
    kernel_summary *k = NULL;
    sample_list *durs = NULL;
    hash_index index;
    hash_index_init(&index);
    for (int f = 0; f < va->n_forwards; f++) {
        const forward *fw = &va->forwards[f];
        int *roles = forward_roles(va, fw, model_roles);
        for (int i = 0; i < fw->n_ops; i++) {
            const gpu_op *op = fw->ops[i];
            uint64_t hv = operation_hash(op, roles[i]);
            operation_key key = {k, op, roles[i]};
            int j = hash_index_find(&index, hv, operation_equal, &key);
            if (j < 0) {
                j = n;
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
                hash_index_add(&index, hv, n);
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
    hash_index_free(&index);
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

/* The same operation on both sides (same_operation), found by hash: the summaries of a side are
 * distinct, so each of the baseline's has at most one equal on the other side (a scan of the
 * other side for each was quadratic in 64 000 distinct kernels). */
static void pair_same(kernel_diff *d, const kernel_summary **b, int nb, const kernel_summary **o, int no,
                      char *used_b, char *used_o, double min_effect)
{
    hash_index index;
    hash_index_init(&index);
    kernel_summary *keys = malloc(sizeof *keys * (size_t)(no ? no : 1));
    if (!keys)
        attn_oom();
    for (int j = 0; j < no; j++) {
        keys[j] = *o[j];
        hash_index_add(&index, operation_hash(o[j]->op, o[j]->role), j);
    }
    for (int i = 0; i < nb; i++) {
        operation_key key = {keys, b[i]->op, b[i]->role};
        int j = hash_index_find(&index, operation_hash(b[i]->op, b[i]->role), operation_equal, &key);
        if (j >= 0 && !used_o[j]) {
            add_row(d, KERNEL_SAME, b[i], o[j], min_effect);
            used_b[i] = used_o[j] = 1;
        }
    }
    free(keys);
    hash_index_free(&index);
}

/* The bucket of an operation for the renamed pairing: kind and role, and in pass 0 (copies and
 * memsets of one direction) the direction. */
static uint64_t rename_hash(const kernel_summary *k, int pass)
{
    int kind = k->op->kind, role = k->role;
    uint64_t h = hash_bytes(HASH_SEED, &kind, sizeof kind);
    h = hash_bytes(h, &role, sizeof role);
    return pass == 0 ? hash_str(h, k->op->copy_kind) : h;
}

typedef struct rename_key {
    const kernel_summary *const *first; /* each bucket's first operation */
    const kernel_summary *k;
    int pass;
} rename_key;

static int rename_equal(int pos, const void *ctx)
{
    const rename_key *key = ctx;
    const kernel_summary *a = key->first[pos], *b = key->k;
    return a->op->kind == b->op->kind && a->role == b->role &&
           (key->pass != 0 || !strcmp(a->op->copy_kind, b->op->copy_kind));
}

/* Each unmatched operation of the baseline, in forward order, with the first unmatched one of
 * its bucket on the other side (in forward order): the buckets' members in order, and a cursor
 * a bucket that only moves forward, since a member once used stays used. */
static void pair_renamed(kernel_diff *d, const kernel_summary **b, int nb, const kernel_summary **o, int no,
                         char *used_b, char *used_o, int pass, double min_effect)
{
    hash_index index;
    hash_index_init(&index);
    const kernel_summary **first = malloc(sizeof *first * (size_t)(no ? no : 1));
    int *bucket_of = malloc(sizeof *bucket_of * (size_t)(no ? no : 1));
    int *start = calloc((size_t)no + 2, sizeof *start), *members = malloc(sizeof *members * (size_t)(no ? no : 1));
    if (!first || !bucket_of || !start || !members)
        attn_oom();
    int buckets = 0;
    for (int j = 0; j < no; j++) {
        bucket_of[j] = -1;
        if (used_o[j] || (pass == 0 && o[j]->op->kind == GPU_KERNEL))
            continue;
        uint64_t hv = rename_hash(o[j], pass);
        rename_key key = {first, o[j], pass};
        int at = hash_index_find(&index, hv, rename_equal, &key);
        if (at < 0) {
            first[buckets] = o[j];
            hash_index_add(&index, hv, at = buckets++);
        }
        bucket_of[j] = at;
        start[at + 1]++;
    }
    for (int k = 0; k < buckets; k++)
        start[k + 1] += start[k];
    int *cursor = malloc(sizeof *cursor * (size_t)(buckets + 1));
    if (!cursor)
        attn_oom();
    for (int k = 0; k < buckets; k++)
        cursor[k] = start[k];
    for (int j = 0; j < no; j++) /* members in forward order: o is sorted by it */
        if (bucket_of[j] >= 0)
            members[cursor[bucket_of[j]]++] = j;
    for (int k = 0; k < buckets; k++)
        cursor[k] = start[k];
    for (int i = 0; i < nb; i++) {
        if (used_b[i] || (pass == 0 && b[i]->op->kind == GPU_KERNEL))
            continue;
        rename_key key = {first, b[i], pass};
        int at = hash_index_find(&index, rename_hash(b[i], pass), rename_equal, &key);
        if (at < 0)
            continue;
        while (cursor[at] < start[at + 1] && used_o[members[cursor[at]]])
            cursor[at]++;
        if (cursor[at] == start[at + 1])
            continue;
        int j = members[cursor[at]++];
        add_row(d, KERNEL_RENAMED, b[i], o[j], min_effect);
        used_b[i] = used_o[j] = 1;
    }
    free(cursor);
    free(first);
    free(bucket_of);
    free(start);
    free(members);
    hash_index_free(&index);
}

/* Operations are paired only within a role (op_role.h), so a scale is never set
 * beside a mask or a softmax beside a cast. Within a role: the same operation
 * first (same_operation: name, and for copies and memsets direction and bytes);
 * then a copy or memset of the same direction with other bytes; then, in forward
 * order, an unmatched kernel of the baseline and one of the other archive are
 * the step done by another kernel, "renamed" (another cuDNN knob, PyTorch's
 * kernel for ours). What is left has no counterpart of its role on the other
 * side: added or removed, listed under its role. */
void compare_kernels_diff(kernel_diff *d, const kernel_summary *base, int nb, const kernel_summary *other, int no,
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
    pair_same(d, b, nb, o, no, used_b, used_o, min_effect);
    for (int pass = 0; pass < 2; pass++)
        pair_renamed(d, b, nb, o, no, used_b, used_o, pass, min_effect);
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
void compare_roles_summarise(const variant_analysis *va, int model_roles, role_time *rt)
{
    for (int r = 0; r < COMPARE_ROLE_COUNT; r++) {
        memset(&rt[r], 0, sizeof rt[r]);
        rt[r].ratio = (compare_ratio){.ci = {NAN, NAN, NAN}, .verdict = VERDICT_NONE};
    }
    if (!va || !va->n_forwards)
        return;
    int nf = va->n_forwards;
    double *us = calloc((size_t)nf * COMPARE_ROLE_COUNT, sizeof *us);
    double *count = calloc((size_t)nf * COMPARE_ROLE_COUNT, sizeof *count);
    if (!us || !count)
        attn_oom();
    int present[COMPARE_ROLE_COUNT] = {0};
    for (int f = 0; f < nf; f++) {
        const forward *fw = &va->forwards[f];
        int *roles = forward_roles(va, fw, model_roles);
        for (int i = 0; i < fw->n_ops; i++) {
            us[(size_t)roles[i] * nf + f] += (double)(fw->ops[i]->end_ns - fw->ops[i]->start_ns) / 1000.0;
            count[(size_t)roles[i] * nf + f] += 1;
            present[roles[i]] = 1;
        }
        free(roles);
    }
    for (int r = 0; r < COMPARE_ROLE_COUNT; r++) {
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

