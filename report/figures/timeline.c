/* Timelines: one figure per variant (NVTX ranges and API calls over GPU
 * operations, 1-3 forwards) and the overview (one forward of every variant on
 * one time scale). */
#include "fig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 6          /* overlapping items beyond this share the last row */
#define MIN_BOX_W 1.0       /* pt: 2 px in the PNG, so a 1 µs call stays visible */
#define LABEL_COL 76.0      /* timeline: lane names */
#define OVERVIEW_COL 150.0  /* overview: variant names */
#define TIMELINE_TOP 60.0   /* below the title and subtitle */

typedef struct tl_item {
    int64_t s, e;
    int row;
    const gpu_op *op;
    const api_call *api;
    const host_range *range;
} tl_item;

typedef struct tl_list {
    tl_item *v;
    int n, cap, rows;
} tl_list;

typedef struct tl_scene {
    int64_t origin;     /* t = 0 on the axis: start of the first forward shown */
    int64_t lo, hi;     /* what is selected */
    tl_list nvtx, api, gpu;
    const variant_analysis *va;
    int first, count;   /* forwards shown */
} tl_scene;

/* The series contrasts runtime launches (cudaLaunchKernel) with driver ones
 * (cuLaunchKernelEx, used by cuBLAS and cuDNN), so they get their own shades. */
typedef enum api_category {
    API_CAT_RUNTIME_LAUNCH, API_CAT_DRIVER_LAUNCH, API_CAT_COPY, API_CAT_OTHER, API_CAT_COUNT
} api_category;

static const char *const api_category_label[API_CAT_COUNT] = {
    "runtime launch", "driver launch", "copy/set call", "other CUDA call"};

static api_category categorize_api(const char *name)
{
    if (!name)
        return API_CAT_OTHER;
    if (strncmp(name, "cudaLaunch", 10) == 0)
        return API_CAT_RUNTIME_LAUNCH;
    if (strncmp(name, "cuLaunch", 8) == 0)
        return API_CAT_DRIVER_LAUNCH;
    if (strstr(name, "Memcpy") || strstr(name, "Memset"))
        return API_CAT_COPY;
    return API_CAT_OTHER;
}

static rgb api_colour(api_category c)
{
    switch (c) {
    case API_CAT_RUNTIME_LAUNCH: return fig_hex(0x555555);
    case API_CAT_DRIVER_LAUNCH: return fig_hex(0x8C6A3F); /* brown: apart from the greys */
    case API_CAT_COPY: return fig_hex(0x9A9A9A);
    default: return fig_hex(0xC8C8C8);
    }
}

static const rgb NVTX_FILL = {0.96, 0.96, 0.96};
static const rgb LANE_BG = {0.975, 0.975, 0.975};
static const rgb FLOW = {0.15, 0.15, 0.15};

/* ---- scene ---------------------------------------------------------------- */

static int list_push(tl_list *l, tl_item it)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        tl_item *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = it;
    return 0;
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

static void scene_free(tl_scene *sc)
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

/* `strict`: only the forwards' own ops and the calls inside their ranges (the
 * overview); otherwise everything recorded in the padded window (timeline). */
static int scene_build(tl_scene *sc, const trace *t, const variant_analysis *va, int first,
                       int count, int strict)
{
    memset(sc, 0, sizeof *sc);
    sc->va = va;
    sc->first = first;
    sc->count = count;
    if (count <= 0)
        return 0;
    int64_t s, e, lo, hi;
    forward_extent(&va->forwards[first], &lo, &hi);
    sc->origin = va->forwards[first].range ? va->forwards[first].range->start_ns : lo;
    for (int i = first; i < first + count; i++) {
        forward_extent(&va->forwards[i], &s, &e);
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

    const host_range *r0 = va->forwards[first].range;
    for (int i = first; i < first + count; i++) {
        const forward *f = &va->forwards[i];
        if (strict) {
            if (f->range && list_push(&sc->nvtx, (tl_item){.s = f->range->start_ns,
                                                           .e = f->range->end_ns,
                                                           .range = f->range}))
                return -1;
            for (int k = 0; k < f->n_ops; k++)
                if (list_push(&sc->gpu, (tl_item){.s = f->ops[k]->start_ns,
                                                  .e = f->ops[k]->end_ns, .op = f->ops[k]}))
                    return -1;
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
                    const host_range *r = va->forwards[k].range;
                    inside = r && c->start_ns >= r->start_ns && c->end_ns <= r->end_ns;
                }
            } else {
                inside = overlaps(c->start_ns, c->end_ns, lo, hi);
            }
            if (inside && list_push(&sc->api, (tl_item){.s = c->start_ns, .e = c->end_ns, .api = c}))
                return -1;
        }
        if (!strict) {
            for (size_t i = 0; i < t->n_ops; i++) {
                const gpu_op *op = &t->ops[i];
                if (overlaps(op->start_ns, op->end_ns, lo, hi) &&
                    list_push(&sc->gpu, (tl_item){.s = op->start_ns, .e = op->end_ns, .op = op}))
                    return -1;
            }
            for (size_t i = 0; i < t->n_ranges; i++) {
                const host_range *r = &t->ranges[i];
                /* The variant's outer range spans everything: only forwards. */
                /* Imported PyTorch traces: their ATen ops (cpu_op) share the host lane. */
                if ((r->iteration < 0 && r->kind != RANGE_CPU_OP) || (r0 && (r->pid != r0->pid || r->tid != r0->tid)))
                    continue;
                if (overlaps(r->start_ns, r->end_ns, lo, hi) &&
                    list_push(&sc->nvtx, (tl_item){.s = r->start_ns, .e = r->end_ns, .range = r}))
                    return -1;
            }
        }
    }
    pack_rows(&sc->nvtx);
    pack_rows(&sc->api);
    pack_rows(&sc->gpu);
    return 0;
}

/* ---- drawing ---------------------------------------------------------------- */

typedef struct tl_geom {
    double x0, x1;     /* plot area */
    double t0, t1;     /* ns at x0 and x1 */
} tl_geom;

static double xof(const tl_geom *g, int64_t ns)
{
    return g->x0 + ((double)ns - g->t0) / (g->t1 - g->t0) * (g->x1 - g->x0);
}

/* A box from s to e (ns), at least MIN_BOX_W wide. The label is the first of
 * `labels` that fits whole, else the last one cut with an ellipsis (at least
 * `min_chars` characters), else nothing; `sub` goes on a second line when it
 * fits whole. */
static void draw_box(cairo_t *cr, const tl_geom *g, const tl_item *it, double y, double h,
                     rgb fill, int outline, const char *const *labels, int n_labels, int min_chars,
                     const char *sub, double font)
{
    double xs = xof(g, it->s), xe = xof(g, it->e);
    if (xs < g->x0) xs = g->x0;
    if (xe > g->x1) xe = g->x1;
    double w = xe - xs;
    if (w < MIN_BOX_W) {
        w = MIN_BOX_W;
        if (xs + w > g->x1)
            xs = g->x1 - w;
    }
    /* A hairline gap separates back-to-back boxes of the same colour. */
    double drawn = w > 3 ? w - 0.5 : w;
    fig_fill_rect(cr, xs, y, drawn, h, fill);
    if (outline) {
        fig_set(cr, FIG_GREY);
        cairo_set_line_width(cr, 0.6);
        cairo_rectangle(cr, xs + 0.3, y + 0.3, drawn - 0.6 > 0 ? drawn - 0.6 : 0, h - 0.6);
        cairo_stroke(cr);
    }
    if (n_labels <= 0 || drawn < 12 || h < font + 2)
        return;
    char fit[256], fit_sub[64];
    double pad = 3, room = drawn - 2 * pad;
    fig_font(cr, font, 0);
    int found = 0;
    for (int i = 0; i < n_labels && !found; i++)
        found = fig_fit_text(cr, labels[i], room, i == n_labels - 1 ? min_chars : 1000, fit, sizeof fit);
    if (!found)
        return;
    fig_set(cr, fig_text_on(fill));
    int two = sub && h >= 2.6 * font && fig_fit_text(cr, sub, room, 1000, fit_sub, sizeof fit_sub);
    if (two) {
        fig_text(cr, xs + pad, y + h / 2 - 1.5, fit, ALIGN_LEFT);
        fig_font(cr, font - 1.5, 0);
        fig_text(cr, xs + pad, y + h / 2 + font - 0.5, fit_sub, ALIGN_LEFT);
    } else {
        fig_text(cr, xs + pad, y + h / 2 + font * 0.36, fit, ALIGN_LEFT);
    }
}

typedef struct lane_style {
    double nvtx_row, api_row, gpu_row; /* row heights */
    double gap_api_gpu;                /* room for the flow lines */
    double font;
    int sublabels;                     /* durations under the names */
} lane_style;

typedef struct lane_pos {
    double nvtx_y, api_y, gpu_y, end_y;
} lane_pos;

static lane_pos lane_layout(const tl_scene *sc, const lane_style *st, double y)
{
    lane_pos p;
    int nv = sc->nvtx.rows > 0 ? sc->nvtx.rows : 1;
    int na = sc->api.rows > 0 ? sc->api.rows : 1;
    int ng = sc->gpu.rows > 0 ? sc->gpu.rows : 1;
    p.nvtx_y = y;
    p.api_y = st->nvtx_row > 0 ? y + nv * st->nvtx_row + 3 : y;
    p.gpu_y = p.api_y + na * st->api_row + st->gap_api_gpu;
    p.end_y = p.gpu_y + ng * st->gpu_row;
    return p;
}

/* The item of `what` (an API call or a GPU op starting at `s`): the list is sorted
 * by start (pack_rows), so a binary search finds the first item starting at `s`
 * and only the few that share that start are compared. */
static const tl_item *find_item(const tl_list *l, const void *what, int api, int64_t s)
{
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (l->v[mid].s < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = lo; i < l->n && l->v[i].s == s; i++)
        if ((api ? (const void *)l->v[i].api : (const void *)l->v[i].op) == what)
            return &l->v[i];
    return NULL;
}

static void draw_arrow(cairo_t *cr, double xa, double ya, double xb, double yb)
{
    fig_set_alpha(cr, FLOW, 0.55);
    cairo_set_line_width(cr, 0.6);
    cairo_move_to(cr, xa, ya);
    cairo_line_to(cr, xb, yb - 2.5);
    cairo_stroke(cr);
    cairo_move_to(cr, xb, yb);
    cairo_line_to(cr, xb - 1.8, yb - 3.2);
    cairo_line_to(cr, xb + 1.8, yb - 3.2);
    cairo_close_path(cr);
    cairo_fill(cr);
}

static void draw_lane_backgrounds(cairo_t *cr, const tl_geom *g, const lane_style *st,
                                  const lane_pos *p, double lane_x0)
{
    if (st->nvtx_row > 0)
        fig_fill_rect(cr, lane_x0, p->nvtx_y, g->x1 - lane_x0, p->api_y - 3 - p->nvtx_y, LANE_BG);
    fig_fill_rect(cr, lane_x0, p->api_y, g->x1 - lane_x0, p->gpu_y - st->gap_api_gpu - p->api_y,
                  LANE_BG);
    fig_fill_rect(cr, lane_x0, p->gpu_y, g->x1 - lane_x0, p->end_y - p->gpu_y, LANE_BG);
}

static int same_rgb(rgb a, rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

/* A lane with more items than the figure can show (one forward of 500k operations) is
 * drawn at the figure's resolution: each row is cut into DENSE_COL-wide columns, each
 * column takes the colour of the item that covers most of it, and neighbouring columns
 * of one colour become one unlabelled box; launch arrows are left out. The SVG and PDF
 * then hold a few thousand shapes, not a million (cairo's vector surfaces keep every
 * shape in memory). Lanes under DENSE_ITEMS draw every item, exactly as before. */
#define DENSE_ITEMS 20000
#define DENSE_COL 0.5 /* pt */

typedef struct dense_col {
    double cover; /* the widest single item's share of the column, pt; 0: empty */
    rgb fill;
    int outline;
} dense_col;

typedef struct dense_lane {
    int n_cols;
    dense_col *col[MAX_ROWS];
} dense_lane;

static int dense_open(dense_lane *d, const tl_geom *g)
{
    d->n_cols = (int)ceil((g->x1 - g->x0) / DENSE_COL) + 1;
    for (int r = 0; r < MAX_ROWS; r++)
        if (!(d->col[r] = calloc((size_t)d->n_cols, sizeof *d->col[r])))
            return -1;
    return 0;
}

static void dense_add(dense_lane *d, const tl_geom *g, const tl_item *it, rgb fill, int outline)
{
    double xs = xof(g, it->s), xe = xof(g, it->e);
    if (xs < g->x0) xs = g->x0;
    if (xe > g->x1) xe = g->x1;
    if (xe - xs < MIN_BOX_W)
        xe = xs + MIN_BOX_W;
    int c0 = (int)((xs - g->x0) / DENSE_COL), c1 = (int)((xe - g->x0) / DENSE_COL);
    if (c0 < 0) c0 = 0;
    if (c1 >= d->n_cols) c1 = d->n_cols - 1;
    dense_col *row = d->col[it->row < MAX_ROWS ? it->row : MAX_ROWS - 1];
    if (!row) /* out of memory: the lane is left empty rather than drawn wrong */
        return;
    for (int c = c0; c <= c1; c++) {
        double lo = g->x0 + c * DENSE_COL, hi = lo + DENSE_COL;
        double cover = (xe < hi ? xe : hi) - (xs > lo ? xs : lo);
        if (cover > row[c].cover)
            row[c] = (dense_col){cover, fill, outline};
    }
}

/* Draws the columns, one box per run of one colour, and frees them. */
static void dense_draw(cairo_t *cr, const tl_geom *g, dense_lane *d, double y0, double row_h)
{
    for (int r = 0; r < MAX_ROWS; r++) {
        dense_col *row = d->col[r];
        for (int c = 0; row && c < d->n_cols;) {
            if (row[c].cover <= 0) {
                c++;
                continue;
            }
            int e = c + 1;
            while (e < d->n_cols && row[e].cover > 0 && same_rgb(row[e].fill, row[c].fill) &&
                   row[e].outline == row[c].outline)
                e++;
            double x = g->x0 + c * DENSE_COL, w = (e - c) * DENSE_COL;
            if (x + w > g->x1)
                w = g->x1 - x;
            fig_fill_rect(cr, x, y0 + r * row_h + 1, w, row_h - 2, row[c].fill);
            c = e;
        }
        free(row);
        d->col[r] = NULL;
    }
}

static void draw_lane_items(cairo_t *cr, const tl_scene *sc, const tl_geom *g, const lane_style *st,
                            const lane_pos *p)
{
    cairo_save(cr);
    cairo_rectangle(cr, g->x0 - MIN_BOX_W, p->nvtx_y - 1, g->x1 - g->x0 + 2 * MIN_BOX_W,
                    p->end_y - p->nvtx_y + 2);
    cairo_clip(cr);

    char label[256], label2[96], sub[96], dur[32];
    if (st->nvtx_row > 0) {
        for (int i = 0; i < sc->nvtx.n; i++) {
            const tl_item *it = &sc->nvtx.v[i];
            const char *name = it->range->name ? it->range->name : "range";
            fig_format_us((it->e - it->s) / 1000.0, dur, sizeof dur);
            if (it->range->iteration >= 0) {
                snprintf(label, sizeof label, "%s #%d \xc2\xb7 %s", name, it->range->iteration, dur);
                snprintf(label2, sizeof label2, "%s #%d", name, it->range->iteration);
            } else { /* an ATen op of an imported trace: no iteration of its own */
                snprintf(label, sizeof label, "%s \xc2\xb7 %s", name, dur);
                snprintf(label2, sizeof label2, "%s", name);
            }
            const char *labels[] = {label, label2, name};
            draw_box(cr, g, it, p->nvtx_y + it->row * st->nvtx_row + 1, st->nvtx_row - 2, NVTX_FILL,
                     1, labels, 3, 4, NULL, st->font - 0.5);
        }
    }
    dense_lane dl = {0};
    const int dense = (sc->api.n > DENSE_ITEMS || sc->gpu.n > DENSE_ITEMS) && dense_open(&dl, g) == 0;
    for (int i = 0; i < sc->api.n; i++) {
        const tl_item *it = &sc->api.v[i];
        api_category c = categorize_api(it->api->name);
        if (dense) {
            dense_add(&dl, g, it, api_colour(c), 0);
            continue;
        }
        const char *labels[] = {it->api->name ? it->api->name : "?"};
        draw_box(cr, g, it, p->api_y + it->row * st->api_row + 1, st->api_row - 2, api_colour(c), 0,
                 labels, 1, 8, NULL, st->font - 0.5);
    }
    if (dense) {
        dense_draw(cr, g, &dl, p->api_y, st->api_row);
        dense_open(&dl, g);
    }
    for (int i = 0; i < sc->gpu.n; i++) {
        const tl_item *it = &sc->gpu.v[i];
        if (dense) {
            op_class dcls = classify_op(it->op);
            dense_add(&dl, g, it, fig_class_colour(dcls), dcls == OPC_OTHER);
            continue;
        }
        fig_op_label(it->op, label, sizeof label);
        fig_format_us((it->e - it->s) / 1000.0, sub, sizeof sub);
        op_class cls = classify_op(it->op);
        /* "memcpy DtoD" can fall back to "memcpy", our kernels to their name without the
         * project prefix ("math_add_bias"); what still does not fit gets cut */
        const char *own = strncmp(label, "attnprof_", 9) == 0 ? label + 9 : label;
        const char *labels[] = {label, it->op->kind == GPU_MEMCPY ? "memcpy" : own};
        draw_box(cr, g, it, p->gpu_y + it->row * st->gpu_row + 1, st->gpu_row - 2,
                 fig_class_colour(cls), cls == OPC_OTHER, labels, 2, 4, st->sublabels ? sub : NULL,
                 st->font);
    }
    if (dense)
        dense_draw(cr, g, &dl, p->gpu_y, st->gpu_row);
    /* launch -> GPU op, for the forwards shown (a dense lane would be one black smear) */
    for (int k = sc->first; !dense && k < sc->first + sc->count; k++) {
        const forward *f = &sc->va->forwards[k];
        for (int i = 0; i < f->n_ops; i++) {
            if (!f->launchers || !f->launchers[i])
                continue;
            const tl_item *a = find_item(&sc->api, f->launchers[i], 1, f->launchers[i]->start_ns);
            const tl_item *o = find_item(&sc->gpu, f->ops[i], 0, f->ops[i]->start_ns);
            if (!a || !o)
                continue;
            draw_arrow(cr, xof(g, a->s) + 0.5, p->api_y + (a->row + 1) * st->api_row - 1,
                       xof(g, o->s) + 0.5, p->gpu_y + o->row * st->gpu_row + 1);
        }
    }
    cairo_restore(cr);
}

typedef struct axis_ticks {
    fig_ticks t;
    fig_time_fmt f;
} axis_ticks;

static axis_ticks time_ticks(const tl_geom *g, int64_t origin)
{
    axis_ticks a;
    double lo_us = (g->t0 - origin) / 1000.0, hi_us = (g->t1 - origin) / 1000.0;
    fig_nice_ticks(lo_us > 0 ? lo_us : 0, hi_us, 9, &a.t);
    a.f = fig_time_fmt_for(a.t.n ? a.t.v[a.t.n - 1] : hi_us, a.t.step);
    return a;
}

/* Grid lines at the ticks from y0 to y1. */
static void draw_time_grid(cairo_t *cr, const tl_geom *g, int64_t origin, double y0, double y1)
{
    axis_ticks a = time_ticks(g, origin);
    fig_set(cr, FIG_GRID);
    cairo_set_line_width(cr, 0.5);
    for (int i = 0; i < a.t.n; i++) {
        double x = xof(g, origin + (int64_t)llround(a.t.v[i] * 1000));
        cairo_move_to(cr, x, y0);
        cairo_line_to(cr, x, y1);
    }
    cairo_stroke(cr);
}

/* Axis line at y with tick marks and labels below it. */
static void draw_time_axis(cairo_t *cr, const tl_geom *g, int64_t origin, double y)
{
    axis_ticks a = time_ticks(g, origin);
    fig_font(cr, 8.5, 0);
    fig_set(cr, FIG_INK);
    cairo_set_line_width(cr, 0.8);
    cairo_move_to(cr, g->x0, y);
    cairo_line_to(cr, g->x1, y);
    cairo_stroke(cr);
    for (int i = 0; i < a.t.n; i++) {
        double x = xof(g, origin + (int64_t)llround(a.t.v[i] * 1000));
        char s[32];
        fig_time_label(&a.f, a.t.v[i], s, sizeof s);
        cairo_move_to(cr, x, y);
        cairo_line_to(cr, x, y + 4);
        cairo_stroke(cr);
        fig_text(cr, x, y + 14, s, ALIGN_CENTER);
    }
}

/* Legend entries for what the scenes contain, in a fixed order. */
typedef struct legend_text {
    char api[API_CAT_COUNT][200];
} legend_text;

/* Adds `name` to a comma-separated list of at most 3 names, then "…". */
static void add_name(char *list, size_t n, const char *name, int *count)
{
    if (!name || !*name)
        return;
    /* already listed? compare whole entries */
    for (const char *p = list; (p = strstr(p, name)); p++) {
        size_t len = strlen(name);
        if ((p == list || p[-1] == ' ') && (p[len] == ',' || p[len] == '\0' || p[len] == ')'))
            return;
    }
    size_t used = strlen(list);
    if (*count == 3)
        snprintf(list + used, n - used, ", \xe2\x80\xa6");
    else if (*count < 3)
        snprintf(list + used, n - used, "%s%s", *count ? ", " : "", name);
    (*count)++;
}

/* Legend entries for what the scenes contain, in a fixed order. API calls are
 * too short to carry their names, so the legend names them. */
static int legend_items(const tl_scene *scenes, int n, fig_legend_item *items, int with_nvtx,
                        legend_text *text)
{
    int present[OPC_COUNT] = {0}, api_count[API_CAT_COUNT] = {0}, flows = 0;
    char names[API_CAT_COUNT][160] = {{0}};
    for (int s = 0; s < n; s++) {
        for (int i = 0; i < scenes[s].gpu.n; i++)
            present[classify_op(scenes[s].gpu.v[i].op)] = 1;
        for (int i = 0; i < scenes[s].api.n; i++) {
            const char *name = scenes[s].api.v[i].api->name;
            api_category c = categorize_api(name);
            add_name(names[c], sizeof names[c], name, &api_count[c]);
        }
        for (int k = scenes[s].first; k < scenes[s].first + scenes[s].count; k++)
            for (int i = 0; i < scenes[s].va->forwards[k].n_ops; i++)
                flows |= scenes[s].va->forwards[k].launchers &&
                         scenes[s].va->forwards[k].launchers[i] != NULL;
    }
    int m = 0;
    for (int c = 0; c < OPC_COUNT; c++)
        if (present[c])
            items[m++] = (fig_legend_item){fig_class_colour((op_class)c), op_class_name((op_class)c),
                                           c == OPC_OTHER};
    for (int c = 0; c < API_CAT_COUNT; c++) {
        if (!api_count[c])
            continue;
        snprintf(text->api[c], sizeof text->api[c], "%s (%s)", api_category_label[c], names[c]);
        items[m++] = (fig_legend_item){api_colour((api_category)c), text->api[c], 0};
    }
    if (with_nvtx)
        items[m++] = (fig_legend_item){NVTX_FILL, "NVTX range (one forward call)", 1};
    if (flows)
        items[m++] = (fig_legend_item){FLOW, "launch \xe2\x86\x92 GPU operation", 2};
    return m;
}

/* ---- per-variant timeline --------------------------------------------------- */

static const lane_style TIMELINE_STYLE = {.nvtx_row = 17, .api_row = 19, .gpu_row = 32,
                                          .gap_api_gpu = 18, .font = 9, .sublabels = 1};

static const char *variant_name(const variant_analysis *va, int i, char *buf, size_t n)
{
    if (va->result && va->result->name[0])
        return va->result->name;
    snprintf(buf, n, "variant %d", i + 1);
    return buf;
}

/* One to three consecutive forwards around the representative (median) one
 * (analysis_median_forward): three when a forward is a few operations (the
 * repetition is the story), one when it is many (the names must stay readable). */
static void pick_forwards(const variant_analysis *va, int *first, int *count)
{
    int ops = va->ops_per_forward;
    int want = ops <= 4 ? 3 : ops <= 12 ? 2 : 1;
    if (want > va->n_forwards)
        want = va->n_forwards;
    *count = want;
    int med = analysis_median_forward(va);
    int first_ = med - want / 2;
    if (first_ + want > va->n_forwards)
        first_ = va->n_forwards - want;
    *first = want && first_ > 0 ? first_ : 0;
}

static void medians_text(const variant_analysis *va, char *out, size_t n)
{
    char cuda[32], cpu[32];
    if (va->cuda_us.n == 0 && va->cpu_us.n == 0) {
        snprintf(out, n, "no forwards recorded");
        return;
    }
    fig_format_us(va->cuda_us.median, cuda, sizeof cuda);
    fig_format_us(va->cpu_us.median, cpu, sizeof cpu);
    snprintf(out, n, "median per forward: CUDA %s, CPU %s (%d forwards)", cuda, cpu,
             va->cuda_us.n > va->cpu_us.n ? va->cuda_us.n : va->cpu_us.n);
}

static double timeline_legend_height(cairo_t *cr, const tl_scene *sc, double maxw)
{
    fig_legend_item items[OPC_COUNT + API_CAT_COUNT + 2];
    legend_text text;
    int n = legend_items(sc, 1, items, 1, &text);
    return fig_legend(cr, 0, 0, maxw, items, n, 0);
}

static int timeline_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    const variant_analysis *va = &a->v[job->variant];
    tl_scene sc;
    if (scene_build(&sc, a->trace, va, job->first_forward, job->n_forwards, 0)) {
        scene_free(&sc);
        return -1;
    }
    char buf[512], name[48], shape[96], med[160];
    const char *vname = variant_name(va, job->variant, name, sizeof name);
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN;

    fig_set(cr, FIG_INK);
    fig_font(cr, 13, 1);
    snprintf(buf, sizeof buf, "Timeline \xe2\x80\x94 %s%s%s", vname,
             va->result && va->result->title[0] ? ": " : "", va->result ? va->result->title : "");
    char fit[512];
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 28, fit, ALIGN_LEFT);

    fig_shape_text(a, shape, sizeof shape);
    medians_text(va, med, sizeof med);
    int rep = analysis_median_forward(va);
    if (sc.count > 1)
        snprintf(buf, sizeof buf, "%s \xc2\xb7 %s \xc2\xb7 showing %d of %d forwards (iterations %d\xe2\x80\x93%d; "
                 "iteration %d has the median CUDA time)",
                 shape, med, sc.count, va->n_forwards, va->forwards[sc.first].iteration,
                 va->forwards[sc.first + sc.count - 1].iteration, rep >= 0 ? va->forwards[rep].iteration : -1);
    else if (sc.count == 1)
        snprintf(buf, sizeof buf, "%s \xc2\xb7 %s \xc2\xb7 showing 1 of %d forwards (iteration %d, of median CUDA time)",
                 shape, med, va->n_forwards, va->forwards[sc.first].iteration);
    else
        snprintf(buf, sizeof buf, "%s \xc2\xb7 %s", shape, med);
    fig_font(cr, 9.5, 0);
    fig_set(cr, FIG_GREY);
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    double y = TIMELINE_TOP;
    if (sc.count == 0) {
        const char *why = va->result && va->result->error[0] ? va->result->error : "";
        snprintf(buf, sizeof buf, "No forward of this variant was recorded%s%s%s%s",
                 va->result ? " (" : "", va->result ? variant_status_name(va->result->status) : "",
                 va->result ? ")" : "", why[0] ? ": " : "");
        fig_set(cr, FIG_INK);
        fig_font(cr, 10, 0);
        fig_text(cr, x, y + 16, buf, ALIGN_LEFT);
        if (why[0]) {
            fig_fit_text(cr, why, right - x, 8, fit, sizeof fit);
            fig_text(cr, x, y + 32, fit, ALIGN_LEFT);
        }
        scene_free(&sc);
        return 0;
    }

    tl_geom g = {x + LABEL_COL, right, (double)sc.lo, (double)sc.hi};
    lane_pos p = lane_layout(&sc, &TIMELINE_STYLE, y);
    draw_lane_backgrounds(cr, &g, &TIMELINE_STYLE, &p, g.x0);
    draw_time_grid(cr, &g, sc.origin, p.nvtx_y, p.end_y + 2);
    draw_lane_items(cr, &sc, &g, &TIMELINE_STYLE, &p);

    /* lane names */
    fig_set(cr, FIG_INK);
    fig_font(cr, 9, 1);
    fig_text(cr, g.x0 - 6, p.nvtx_y + TIMELINE_STYLE.nvtx_row / 2 + 3, "NVTX", ALIGN_RIGHT);
    fig_text(cr, g.x0 - 6, p.api_y + TIMELINE_STYLE.api_row / 2 + 3, "CPU API", ALIGN_RIGHT);
    fig_text(cr, g.x0 - 6, p.gpu_y + TIMELINE_STYLE.gpu_row / 2 + 3, "GPU", ALIGN_RIGHT);
    fig_font(cr, 7.5, 0);
    fig_set(cr, FIG_GREY);
    fig_text(cr, g.x0 - 6, p.api_y + TIMELINE_STYLE.api_row / 2 + 12, "host thread", ALIGN_RIGHT);
    fig_text(cr, g.x0 - 6, p.gpu_y + TIMELINE_STYLE.gpu_row / 2 + 12, "all streams", ALIGN_RIGHT);

    double axis_y = p.end_y + 2;
    draw_time_axis(cr, &g, sc.origin, axis_y);
    fig_font(cr, 8.5, 0);
    fig_set(cr, FIG_GREY);
    snprintf(buf, sizeof buf, "time since the start of iteration %d", va->forwards[sc.first].iteration);
    fig_text(cr, g.x1, axis_y + 27, buf, ALIGN_RIGHT);

    fig_legend_item items[OPC_COUNT + API_CAT_COUNT + 2];
    legend_text text;
    int n = legend_items(&sc, 1, items, 1, &text);
    fig_legend(cr, x, axis_y + 34, right - x, items, n, 1);
    scene_free(&sc);
    return 0;
}

int fig_timeline_prepare(fig_job *job, cairo_t *measure, const analysis *a, int variant)
{
    const variant_analysis *va = &a->v[variant];
    char name[48], med[160];
    const char *vname = variant_name(va, variant, name, sizeof name);
    snprintf(job->name, sizeof job->name, "timeline-%s", vname);
    job->a = a;
    job->variant = variant;
    job->draw = timeline_draw;
    job->w = FIG_WIDTH;
    pick_forwards(va, &job->first_forward, &job->n_forwards);
    medians_text(va, med, sizeof med);
    if (job->n_forwards == 0) {
        snprintf(job->caption, sizeof job->caption, "Timeline of %s: no forward was recorded.", vname);
        job->h = 110;
        return 0;
    }
    snprintf(job->caption, sizeof job->caption,
             "Timeline of %s: CUDA API calls and %s on the host above the GPU's "
             "operations for %d of %d forwards; %.90s.",
             vname, a->run && a->run->imported ? "the traces' ranges and CPU ops" : "NVTX ranges", job->n_forwards,
             va->n_forwards, med);
    tl_scene sc;
    if (scene_build(&sc, a->trace, va, job->first_forward, job->n_forwards, 0)) {
        scene_free(&sc);
        return -1;
    }
    lane_pos p = lane_layout(&sc, &TIMELINE_STYLE, TIMELINE_TOP);
    double legend = timeline_legend_height(measure, &sc, FIG_WIDTH - 2 * FIG_MARGIN);
    job->h = ceil(p.end_y + 2 + 34 + legend + 8);
    scene_free(&sc);
    return 0;
}

int fig_timeline_geometry_of(const fig_job *job, fig_timeline_geometry *geo)
{
    const variant_analysis *va = &job->a->v[job->variant];
    tl_scene sc;
    if (job->n_forwards <= 0 ||
        scene_build(&sc, job->a->trace, va, job->first_forward, job->n_forwards, 0)) {
        scene_free(&sc);
        return -1;
    }
    lane_pos p = lane_layout(&sc, &TIMELINE_STYLE, TIMELINE_TOP);
    *geo = (fig_timeline_geometry){FIG_MARGIN + LABEL_COL, job->w - FIG_MARGIN, p.nvtx_y, p.api_y,
                                   p.gpu_y, p.end_y, sc.lo, sc.hi};
    scene_free(&sc);
    return 0;
}

/* ---- overview ---------------------------------------------------------------- */

static const lane_style OVERVIEW_STYLE = {.nvtx_row = 6, .api_row = 15, .gpu_row = 22,
                                          .gap_api_gpu = 10, .font = 8, .sublabels = 0};
#define OVERVIEW_GAP 12.0

typedef struct overview_plan {
    int n;
    tl_scene *scenes;
    int64_t span; /* longest forward: the common time scale */
    double legend_h;
} overview_plan;

static void overview_free(overview_plan *pl)
{
    for (int i = 0; i < pl->n; i++)
        scene_free(&pl->scenes[i]);
    free(pl->scenes);
    memset(pl, 0, sizeof *pl);
}

static int overview_plan_build(overview_plan *pl, const analysis *a)
{
    memset(pl, 0, sizeof *pl);
    pl->scenes = calloc(a->n > 0 ? (size_t)a->n : 1, sizeof *pl->scenes);
    if (!pl->scenes)
        return -1;
    pl->n = a->n;
    for (int i = 0; i < a->n; i++) {
        int mid = fig_middle_forward(&a->v[i]);
        if (scene_build(&pl->scenes[i], a->trace, &a->v[i], mid < 0 ? 0 : mid, mid < 0 ? 0 : 1, 1))
            return -1;
        if (mid >= 0 && pl->scenes[i].hi - pl->scenes[i].origin > pl->span)
            pl->span = pl->scenes[i].hi - pl->scenes[i].origin;
    }
    /* a little room right of the longest forward */
    pl->span = pl->span > 0 ? pl->span + pl->span / 50 : 1000;
    return 0;
}

static double overview_block_height(const tl_scene *sc)
{
    lane_pos p = lane_layout(sc, &OVERVIEW_STYLE, 0);
    return p.end_y > 48 ? p.end_y : 48; /* room for the name and its three label lines */
}

void fig_overview_label(const variant_analysis *va, char *cuda, size_t n_cuda, char *cpu, size_t n_cpu)
{
    char t[32];
    fig_format_us(va->cuda_us.n ? va->cuda_us.median : NAN, t, sizeof t);
    snprintf(cuda, n_cuda, "median CUDA %s", t);
    fig_format_us(va->cpu_us.n ? va->cpu_us.median : NAN, t, sizeof t);
    snprintf(cpu, n_cpu, "median CPU %s", t);
}

static int overview_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    overview_plan pl;
    if (overview_plan_build(&pl, a)) {
        overview_free(&pl);
        return -1;
    }
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN;
    char buf[512], shape[96], fit[256], name[48];
    fig_set(cr, FIG_INK);
    fig_font(cr, 13, 1);
    fig_text(cr, x, 28, "One forward of each variant, same time scale", ALIGN_LEFT);
    fig_shape_text(a, shape, sizeof shape);
    snprintf(buf, sizeof buf,
             "%s \xc2\xb7 each variant's forward of median CUDA time, aligned at the start of its "
             "forward call \xc2\xb7 labels: medians over all forwards, as in the summary table",
             shape);
    fig_font(cr, 9.5, 0);
    fig_set(cr, FIG_GREY);
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    double y = 62;
    tl_geom g = {x + OVERVIEW_COL, right, 0, 0};
    for (int i = 0; i < pl.n; i++) {
        const tl_scene *sc = &pl.scenes[i];
        const variant_analysis *va = &a->v[i];
        double h = overview_block_height(sc);
        if (i > 0) {
            fig_set(cr, FIG_GRID);
            cairo_set_line_width(cr, 0.6);
            cairo_move_to(cr, x, y - OVERVIEW_GAP / 2);
            cairo_line_to(cr, right, y - OVERVIEW_GAP / 2);
            cairo_stroke(cr);
        }
        fig_set(cr, FIG_INK);
        fig_font(cr, 10, 1);
        fig_fit_text(cr, variant_name(va, i, name, sizeof name), OVERVIEW_COL - 8, 4, fit, sizeof fit);
        fig_text(cr, x, y + 12, fit, ALIGN_LEFT);
        fig_font(cr, 8, 0);
        fig_set(cr, FIG_GREY);
        if (sc->count > 0) {
            /* The table's numbers (medians over all forwards), not the drawn forward's own:
             * that one is picked by CUDA time, so its CPU time can be any of the forwards'. */
            char cuda[64], cpu[64];
            fig_overview_label(va, cuda, sizeof cuda, cpu, sizeof cpu);
            snprintf(buf, sizeof buf, "%d GPU op%s, iteration %d", va->forwards[sc->first].n_ops,
                     va->forwards[sc->first].n_ops == 1 ? "" : "s", va->forwards[sc->first].iteration);
            const char *lines[] = {cuda, cpu, buf};
            for (int l = 0; l < 3; l++) { /* left of the lanes' "CPU" / "GPU" names */
                fig_fit_text(cr, lines[l], OVERVIEW_COL - 26, 4, fit, sizeof fit);
                fig_text(cr, x, y + 23 + 10 * l, fit, ALIGN_LEFT);
            }
            g.t0 = (double)sc->origin;
            g.t1 = (double)(sc->origin + pl.span);
            lane_pos p = lane_layout(sc, &OVERVIEW_STYLE, y);
            draw_lane_backgrounds(cr, &g, &OVERVIEW_STYLE, &p, g.x0);
            draw_time_grid(cr, &g, sc->origin, p.nvtx_y, p.end_y + 2);
            draw_lane_items(cr, sc, &g, &OVERVIEW_STYLE, &p);
            fig_font(cr, 7.5, 0);
            fig_set(cr, FIG_GREY);
            fig_text(cr, g.x0 - 4, p.api_y + OVERVIEW_STYLE.api_row / 2 + 3, "CPU", ALIGN_RIGHT);
            fig_text(cr, g.x0 - 4, p.gpu_y + OVERVIEW_STYLE.gpu_row / 2 + 3, "GPU", ALIGN_RIGHT);
        } else {
            snprintf(buf, sizeof buf, "no forward recorded%s%s",
                     va->result ? ": " : "", va->result ? variant_status_name(va->result->status) : "");
            fig_text(cr, x, y + 23, buf, ALIGN_LEFT);
        }
        y += h + OVERVIEW_GAP;
    }
    /* One axis for all: time since each forward's start. */
    g.t0 = 0;
    g.t1 = (double)pl.span;
    double axis_y = y - OVERVIEW_GAP + 4;
    draw_time_axis(cr, &g, 0, axis_y);
    fig_font(cr, 8.5, 0);
    fig_set(cr, FIG_GREY);
    fig_text(cr, g.x1, axis_y + 27, "time since the start of each variant's forward call", ALIGN_RIGHT);

    fig_legend_item items[OPC_COUNT + API_CAT_COUNT + 2];
    legend_text text;
    int n = legend_items(pl.scenes, pl.n, items, 1, &text);
    fig_legend(cr, x, axis_y + 34, right - x, items, n, 1);
    overview_free(&pl);
    return 0;
}

int fig_overview_prepare(fig_job *job, cairo_t *measure, const analysis *a)
{
    snprintf(job->name, sizeof job->name, "timeline-overview");
    snprintf(job->caption, sizeof job->caption,
             "One forward of each of the %d variants (its forward of median CUDA time) on one time scale: "
             "host API calls above, GPU operations below, aligned at the start of the forward call; the "
             "labels are the median CUDA and CPU times per forward of the summary table.", a->n);
    job->a = a;
    job->draw = overview_draw;
    job->w = FIG_WIDTH;
    overview_plan pl;
    if (overview_plan_build(&pl, a)) {
        overview_free(&pl);
        return -1;
    }
    double y = 62;
    for (int i = 0; i < pl.n; i++)
        y += overview_block_height(&pl.scenes[i]) + OVERVIEW_GAP;
    fig_legend_item items[OPC_COUNT + API_CAT_COUNT + 2];
    legend_text text;
    int n = legend_items(pl.scenes, pl.n, items, 1, &text);
    double legend = fig_legend(measure, 0, 0, FIG_WIDTH - 2 * FIG_MARGIN, items, n, 0);
    job->h = ceil(y - OVERVIEW_GAP + 4 + 34 + legend + 8);
    overview_free(&pl);
    return 0;
}
