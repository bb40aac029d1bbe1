/* The lanes of a timeline on one time axis: NVTX ranges, host API calls (shaded by kind of
 * call) and GPU operations (coloured by class), launch arrows from call to operation, dense
 * lanes drawn at the figure's resolution, the time grid and axis, and the legend of what the
 * scenes hold. */
#include "timeline_parts.h"

#include "alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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


tl_lane_pos tl_lane_layout(const tl_scene *sc, const tl_lane_style *st, double y)
{
    tl_lane_pos p;
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

void tl_draw_lane_backgrounds(cairo_t *cr, const tl_geom *g, const tl_lane_style *st,
                              const tl_lane_pos *p, double lane_x0)
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

static void dense_open(dense_lane *d, const tl_geom *g)
{
    d->n_cols = (int)ceil((g->x1 - g->x0) / DENSE_COL) + 1;
    for (int r = 0; r < MAX_ROWS; r++)
        d->col[r] = attn_calloc((size_t)d->n_cols, sizeof *d->col[r]);
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

void tl_draw_lane_items(cairo_t *cr, const tl_scene *sc, const tl_geom *g, const tl_lane_style *st,
                        const tl_lane_pos *p)
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
    const int dense = sc->api.n > DENSE_ITEMS || sc->gpu.n > DENSE_ITEMS;
    if (dense)
        dense_open(&dl, g);
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
        const forward *f = &sc->calls[k];
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
void tl_draw_time_grid(cairo_t *cr, const tl_geom *g, int64_t origin, double y0, double y1)
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
void tl_draw_time_axis(cairo_t *cr, const tl_geom *g, int64_t origin, double y)
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
int tl_legend_items(const tl_scene *scenes, int n, fig_legend_item *items, int with_nvtx,
                    tl_legend_text *text)
{
    int present[OPC_COUNT] = {0}, api_count[API_CAT_COUNT] = {0}, flows = 0, bwd = 0, fwd = 0;
    char names[API_CAT_COUNT][160] = {{0}};
    for (int s = 0; s < n; s++) {
        for (int i = 0; i < scenes[s].gpu.n; i++)
            present[classify_op(scenes[s].gpu.v[i].op)] = 1;
        for (int i = 0; i < scenes[s].nvtx.n; i++) { /* the legend says which calls the ranges are */
            const char *rn = scenes[s].nvtx.v[i].range->name;
            int b = rn && !strcmp(rn, "attn_bwd");
            bwd |= b;
            fwd |= !b;
        }
        for (int i = 0; i < scenes[s].api.n; i++) {
            const char *name = scenes[s].api.v[i].api->name;
            api_category c = categorize_api(name);
            add_name(names[c], sizeof names[c], name, &api_count[c]);
        }
        for (int k = scenes[s].first; k < scenes[s].first + scenes[s].count; k++)
            for (int i = 0; i < scenes[s].calls[k].n_ops; i++)
                flows |= scenes[s].calls[k].launchers &&
                         scenes[s].calls[k].launchers[i] != NULL;
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
        items[m++] = (fig_legend_item){NVTX_FILL, bwd && !fwd ? "NVTX range (one backward call)"
                                                  : bwd ? "NVTX range (one forward or backward call)"
                                                        : "NVTX range (one forward call)", 1};
    if (flows)
        items[m++] = (fig_legend_item){FLOW, "launch \xe2\x86\x92 GPU operation", 2};
    return m;
}

