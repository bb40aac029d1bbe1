/* The scene of a timeline: which of a variant's NVTX ranges, API calls and GPU operations a
 * figure shows (the forwards picked, padded or strict), sorted and packed into rows so that
 * overlapping items do not cover each other. */
#include "timeline_parts.h"

#include "alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- scene ---------------------------------------------------------------- */

static void list_push(tl_list *l, tl_item it)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = attn_realloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = it;
}

static int by_start(const void *pa, const void *pb)
{
    const tl_item *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    return a->e < b->e ? -1 : a->e > b->e;
}

/* Greedy rows: an item goes to the first row that is free at its start. */
static void pack_rows(tl_list *l)
{
    int64_t row_end[MAX_ROWS];
    l->rows = 0;
    if (l->n > 0) /* qsort(NULL, 0) is undefined: a forward can have no items in a lane */
        qsort(l->v, (size_t)l->n, sizeof *l->v, by_start);
    for (int i = 0; i < l->n; i++) {
        int r = 0;
        while (r < l->rows && row_end[r] > l->v[i].s)
            r++;
        if (r == l->rows) {
            if (l->rows < MAX_ROWS)
                row_end[l->rows++] = INT64_MIN;
            else
                r = MAX_ROWS - 1;
        }
        l->v[i].row = r;
        if (l->v[i].e > row_end[r])
            row_end[r] = l->v[i].e;
    }
}

void tl_scene_free(tl_scene *sc)
{
    free(sc->nvtx.v);
    free(sc->api.v);
    free(sc->gpu.v);
    memset(sc, 0, sizeof *sc);
}

static void forward_extent(const forward *f, int64_t *s, int64_t *e)
{
    *s = f->range ? f->range->start_ns : f->n_ops ? f->ops[0]->start_ns : 0;
    *e = f->range ? f->range->end_ns : *s;
    for (int i = 0; i < f->n_ops; i++) {
        if (f->ops[i]->start_ns < *s)
            *s = f->ops[i]->start_ns;
        if (f->ops[i]->end_ns > *e)
            *e = f->ops[i]->end_ns;
    }
}

static int overlaps(int64_t s, int64_t e, int64_t lo, int64_t hi) { return e >= lo && s <= hi; }

void tl_scene_build(tl_scene *sc, const trace *t, const variant_analysis *va, int first,
                    int count, int strict)
{
    tl_scene_build_of(sc, t, va, va->forwards, first, count, strict);
}

void tl_scene_build_of(tl_scene *sc, const trace *t, const variant_analysis *va, const forward *calls,
                       int first, int count, int strict)
{
    memset(sc, 0, sizeof *sc);
    sc->va = va;
    sc->calls = calls;
    sc->first = first;
    sc->count = count;
    if (count <= 0)
        return;
    int64_t s, e, lo, hi;
    forward_extent(&calls[first], &lo, &hi);
    sc->origin = calls[first].range ? calls[first].range->start_ns : lo;
    for (int i = first; i < first + count; i++) {
        forward_extent(&calls[i], &s, &e);
        if (s < lo) lo = s;
        if (e > hi) hi = e;
    }
    if (!strict) {
        int64_t pad = (hi - lo) / 40 + 100;
        lo -= pad;
        hi += pad;
    }
    sc->lo = lo;
    sc->hi = hi;

    const host_range *r0 = calls[first].range;
    for (int i = first; i < first + count; i++) {
        const forward *f = &calls[i];
        if (strict) {
            if (f->range)
                list_push(&sc->nvtx, (tl_item){.s = f->range->start_ns, .e = f->range->end_ns, .range = f->range});
            for (int k = 0; k < f->n_ops; k++)
                list_push(&sc->gpu, (tl_item){.s = f->ops[k]->start_ns, .e = f->ops[k]->end_ns, .op = f->ops[k]});
        }
    }
    if (t) {
        for (size_t i = 0; i < t->n_apis; i++) {
            const api_call *c = &t->apis[i];
            if (r0 && (c->pid != r0->pid || c->tid != r0->tid))
                continue;
            int inside = 0;
            if (strict) {
                for (int k = first; k < first + count && !inside; k++) {
                    const host_range *r = calls[k].range;
                    inside = r && c->start_ns >= r->start_ns && c->end_ns <= r->end_ns;
                }
            } else {
                inside = overlaps(c->start_ns, c->end_ns, lo, hi);
            }
            if (inside)
                list_push(&sc->api, (tl_item){.s = c->start_ns, .e = c->end_ns, .api = c});
        }
        if (!strict) {
            for (size_t i = 0; i < t->n_ops; i++) {
                const gpu_op *op = &t->ops[i];
                if (overlaps(op->start_ns, op->end_ns, lo, hi))
                    list_push(&sc->gpu, (tl_item){.s = op->start_ns, .e = op->end_ns, .op = op});
            }
            for (size_t i = 0; i < t->n_ranges; i++) {
                const host_range *r = &t->ranges[i];
                /* The variant's outer range spans everything: only forwards. */
                /* Imported PyTorch traces: their ATen ops (cpu_op) share the host lane. */
                if ((r->iteration < 0 && r->kind != RANGE_CPU_OP) || (r0 && (r->pid != r0->pid || r->tid != r0->tid)))
                    continue;
                if (overlaps(r->start_ns, r->end_ns, lo, hi))
                    list_push(&sc->nvtx, (tl_item){.s = r->start_ns, .e = r->end_ns, .range = r});
            }
        }
    }
    pack_rows(&sc->nvtx);
    pack_rows(&sc->api);
    pack_rows(&sc->gpu);
}

const char *tl_variant_name(const variant_analysis *va, int i, char *buf, size_t n)
{
    if (va->result && va->result->name[0])
        return va->result->name;
    snprintf(buf, n, "variant %d", i + 1);
    return buf;
}
