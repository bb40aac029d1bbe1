/* Compare, one figure per pair of model traces (compare-model-roles-<N>, N the pair's number
 * from 1 in compare.md's order): each phase × role row that compare_traces.c built, top to
 * bottom, as two horizontal bars, the baseline's trace over the other run's (the colours of
 * the runs in compare's other figures), each the median over its steps of the role's µs per
 * step (a step without the role counting 0), with the ratio, its 95% interval and verdict
 * beside the row as compare.md's role table gives them; below COMPARE_MIN_STEPS steps a side
 * the ratio of the medians alone, with no verdict. Within each phase the attention roles come
 * first on a tinted band, closed by their sum ("attention, all parts"), then the phase's
 * other roles. The axis is linear, from 0: the figure is read for how much of the step each
 * role takes and how the two traces split it, and eager attention's parts against one fused
 * op are ratios of 10× and more that a log axis would flatten; every bar carries its number,
 * so a short bar stays readable. Reads only the comparison's data (compare.h). */
#include "fig.h"
#include "units.h"

#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LABEL_COL 150.0
#define PLOT_X0 (FIG_MARGIN + LABEL_COL + 10)
#define RATIO_COL 190.0
#define VALUE_ROOM 48.0  /* right of the longest bar: its label */
#define LEGEND_Y 54.0
#define TOP_MIN 104.0    /* the first row's top under a one-line legend */
#define PHASE_H 20.0
#define ROW_H 24.0
#define BAR_H 8.5
#define BOTTOM 44.0

static const unsigned ATTENTION_BAND = 0xF3EFE6, ATTENTION_MARK = 0x8C7A5B;

int compare_model_roles_order(const trace_pair *pr, int *order)
{
    int n = 0;
    for (int p = 0; p < MPHASE_COUNT; p++) {
        /* the phase's attention roles, their sum, then the rest, each in compare_traces' order */
        for (int pass = 0; pass < 3; pass++)
            for (int k = 0; k < pr->n_rows; k++) {
                const trace_role_row *r = &pr->rows[k];
                int attention = !r->attention_total && model_role_is_attention(r->role);
                if ((int)r->phase == p && (pass == 0 ? attention : pass == 1 ? r->attention_total
                                                                              : !attention && !r->attention_total))
                    order[n++] = k;
            }
    }
    return n;
}

/* The run label of side j of a pair. */
static const char *side_label(const compare_data *m, const trace_pair *pr, int j)
{
    return m->in[j ? pr->archive : 0]->label;
}

void compare_model_roles_ratio_text(const compare_data *m, const trace_pair *pr, const trace_role_row *row,
                                    char *ratio, size_t n_ratio, char *verdict, size_t n_verdict)
{
    snprintf(verdict, n_verdict, "%s", "");
    if (!row->present[0] || !row->present[1])
        snprintf(ratio, n_ratio, "only in %s", side_label(m, pr, row->present[0] ? 0 : 1));
    else if (row->ratio.verdict != VERDICT_NONE) {
        int d = units_ratio_decimals(row->ratio.ci.lo, row->ratio.ci.hi);
        snprintf(ratio, n_ratio, "%.*f\xc3\x97 [%.*f\xe2\x80\x93%.*f]", d, row->ratio.ci.ratio, d,
                 row->ratio.ci.lo, d, row->ratio.ci.hi);
        snprintf(verdict, n_verdict, "%s", compare_verdict_word(row->ratio.verdict));
    } else if (isfinite(row->ratio.ci.ratio))
        snprintf(ratio, n_ratio, "%.2f\xc3\x97 (medians)", row->ratio.ci.ratio);
    else
        snprintf(ratio, n_ratio, "\xe2\x80\x93");
}

static double rows_height(const trace_pair *pr)
{
    int phases = 0;
    for (int p = 0; p < MPHASE_COUNT; p++) {
        int has = 0;
        for (int k = 0; k < pr->n_rows; k++)
            has |= (int)pr->rows[k].phase == p;
        phases += has;
    }
    return phases * PHASE_H + pr->n_rows * ROW_H;
}

static double largest_median(const trace_pair *pr)
{
    double hi = 0;
    for (int k = 0; k < pr->n_rows; k++)
        for (int j = 0; j < 2; j++)
            if (pr->rows[k].present[j] && isfinite(pr->rows[k].st[j].median) && pr->rows[k].st[j].median > hi)
                hi = pr->rows[k].st[j].median;
    return hi;
}

/* The µs axis along the top of the rows: grid lines down to `bottom`, round labels. */
static void draw_axis(cairo_t *cr, const fig_ticks *t, double scale, double top, double bottom)
{
    fig_time_fmt tf = fig_time_fmt_for(t->n ? t->v[t->n - 1] : 0, t->step);
    char buf[32];
    fig_font(cr, 8, 0);
    for (int i = 0; i < t->n; i++) {
        double x = PLOT_X0 + t->v[i] * scale;
        fig_set(cr, FIG_GRID);
        cairo_set_line_width(cr, 0.5);
        cairo_move_to(cr, x, top);
        cairo_line_to(cr, x, bottom);
        cairo_stroke(cr);
        fig_time_label(&tf, t->v[i], buf, sizeof buf);
        fig_set(cr, FIG_INK);
        fig_text(cr, x, top - 4, buf, ALIGN_CENTER);
    }
    fig_set(cr, FIG_INK);
    cairo_set_line_width(cr, 0.8);
    cairo_move_to(cr, PLOT_X0, top);
    cairo_line_to(cr, PLOT_X0, bottom);
    cairo_stroke(cr);
}

/* One side's bar and its number, or "none" where the trace has no operation of the role. */
static void draw_bar(cairo_t *cr, const trace_role_row *row, int j, unsigned colour, double y, double scale,
                     double limit)
{
    char buf[48];
    fig_font(cr, 7.5, 0);
    if (!row->present[j]) {
        fig_set(cr, FIG_GREY);
        fig_text(cr, PLOT_X0 + 3, y + BAR_H - 1.5, "none", ALIGN_LEFT);
        return;
    }
    double w = row->st[j].median * scale;
    if (w > 0 && w < 1)
        w = 1; /* a role that ran stays visible */
    fig_fill_rect(cr, PLOT_X0, y, w, BAR_H, fig_hex(colour));
    fig_format_us(row->st[j].median, buf, sizeof buf);
    double tw = fig_text_width(cr, buf);
    if (PLOT_X0 + w + 3 + tw <= limit) {
        fig_set(cr, FIG_INK);
        fig_text(cr, PLOT_X0 + w + 3, y + BAR_H - 1.5, buf, ALIGN_LEFT);
    } else { /* no room after it: inside its end */
        fig_set(cr, fig_text_on(fig_hex(colour)));
        fig_text(cr, PLOT_X0 + w - 3, y + BAR_H - 1.5, buf, ALIGN_RIGHT);
    }
}

static void draw_ratio(cairo_t *cr, const compare_data *m, const trace_pair *pr, const trace_role_row *row, double x,
                       double y, double right)
{
    char ratio[96], verdict[32], fit[128];
    compare_model_roles_ratio_text(m, pr, row, ratio, sizeof ratio, verdict, sizeof verdict);
    fig_font(cr, 8.5, 0);
    fig_set(cr, row->present[0] && row->present[1] ? FIG_INK : FIG_GREY);
    if (fig_text_width(cr, ratio) > right - x && (!row->present[0] || !row->present[1])) /* a long run label */
        snprintf(ratio, sizeof ratio, "only in the %s", row->present[0] ? "baseline" : "other run");
    fig_fit_text(cr, ratio, right - x, 4, fit, sizeof fit);
    fig_text(cr, x, y, fit, ALIGN_LEFT);
    if (!verdict[0])
        return;
    double vx = x + fig_text_width(cr, fit) + 5;
    int strong = row->ratio.verdict == VERDICT_FASTER || row->ratio.verdict == VERDICT_SLOWER;
    fig_font(cr, 8.5, strong);
    fig_set(cr, FIG_INK);
    fig_text(cr, vx, y, verdict, ALIGN_LEFT);
}

/* The attention band of a phase: its attention rows and their sum on a tint, marked at the left. */
static void draw_band(cairo_t *cr, double y, double h, double right)
{
    fig_fill_rect(cr, FIG_MARGIN, y, right - FIG_MARGIN, h, fig_hex(ATTENTION_BAND));
    fig_fill_rect(cr, FIG_MARGIN, y, 3, h, fig_hex(ATTENTION_MARK));
}

static int is_attention_row(const trace_role_row *r) { return r->attention_total || model_role_is_attention(r->role); }

/* The attention band of each phase, from its first attention row to their sum. */
static void draw_bands(cairo_t *cr, const trace_pair *pr, const int *order, int n, double top, double right)
{
    double y = top;
    for (int i = 0; i < n; i++) {
        const trace_role_row *row = &pr->rows[order[i]];
        int new_phase = i == 0 || pr->rows[order[i - 1]].phase != row->phase;
        if (new_phase)
            y += PHASE_H;
        if (is_attention_row(row) && (new_phase || !is_attention_row(&pr->rows[order[i - 1]]))) {
            int k = i;
            while (k < n && pr->rows[order[k]].phase == row->phase && is_attention_row(&pr->rows[order[k]]))
                k++;
            draw_band(cr, y, (k - i) * ROW_H, right);
        }
        y += ROW_H;
    }
}

static void draw_row_label(cairo_t *cr, const trace_role_row *row, double y)
{
    char fit[96];
    fig_set(cr, FIG_INK);
    fig_font(cr, 9, row->attention_total);
    fig_fit_text(cr, row->attention_total ? "attention, all parts" : model_role_name(row->role), LABEL_COL - 12, 4, fit,
                 sizeof fit);
    fig_text(cr, FIG_MARGIN + 10, y + ROW_H / 2 + 3.5, fit, ALIGN_LEFT);
}

/* The legend under the subtitle (draw 0: only measured); its height. Long run labels wrap it. */
static double legend(cairo_t *cr, const compare_data *m, const trace_pair *pr, double right, int draw)
{
    char labels[2][160];
    fig_legend_item items[3];
    for (int j = 0; j < 2; j++) {
        snprintf(labels[j], sizeof labels[j], "%s (%s%s)", pr->va[j]->result->name, side_label(m, pr, j),
                 j ? "" : ", baseline");
        items[j] = (fig_legend_item){fig_hex(fig_archive_colour(j ? pr->archive : 0)), labels[j], 0};
    }
    items[2] = (fig_legend_item){fig_hex(ATTENTION_BAND), "attention roles of a phase, then their sum", 1};
    return fig_legend(cr, FIG_MARGIN, LEGEND_Y, right - FIG_MARGIN, items, 3, draw);
}

/* The first row's top: below the legend, however many lines it takes, and the axis labels. */
static double rows_top(cairo_t *cr, const compare_data *m, const trace_pair *pr, double right)
{
    double top = LEGEND_Y + legend(cr, m, pr, right, 0) + 35;
    return top > TOP_MIN ? top : TOP_MIN;
}

static void draw_head(cairo_t *cr, const fig_job *job, const trace_pair *pr, double right)
{
    const compare_data *m = job->cmp;
    char buf[512], fit[512], a[48], b[48];
    fig_set(cr, FIG_INK);
    fig_font(cr, 13, 1);
    fig_text(cr, FIG_MARGIN, 28, "Model traces, role by role: CUDA time per step", ALIGN_LEFT);
    fig_font(cr, 9.5, 0);
    fig_set(cr, FIG_GREY);
    fig_format_us(pr->step[0].median, a, sizeof a);
    fig_format_us(pr->step[1].median, b, sizeof b);
    int len = snprintf(buf, sizeof buf, "bars: median over %d and %d steps \xc2\xb7 step %s \xe2\x86\x92 %s", pr->step[0].n,
                       pr->step[1].n, a, b);
    if (len > 0 && (size_t)len < sizeof buf) {
        char ratio[96], verdict[32];
        trace_role_row step = {.present = {1, 1}, .ratio = pr->step_ratio};
        compare_model_roles_ratio_text(m, pr, &step, ratio, sizeof ratio, verdict, sizeof verdict);
        snprintf(buf + len, sizeof buf - (size_t)len, ", %s%s%s%s", ratio, verdict[0] ? " " : "", verdict,
                 pr->verdicts ? "" : " \xc2\xb7 no interval or verdict below 5 steps a side");
    }
    fig_fit_text(cr, buf, right - FIG_MARGIN, 8, fit, sizeof fit);
    fig_text(cr, FIG_MARGIN, 45, fit, ALIGN_LEFT);

    legend(cr, m, pr, right, 1);
}

static int compare_model_roles_draw(cairo_t *cr, const fig_job *job)
{
    const compare_data *m = job->cmp;
    const trace_pair *pr = &m->traces.pairs[job->pair];
    double right = job->w - FIG_MARGIN, ratio_x = right - RATIO_COL + 10, limit = right - RATIO_COL;
    draw_head(cr, job, pr, right);
    const double top = rows_top(cr, m, pr, right);

    double hi = largest_median(pr);
    fig_ticks t;
    fig_nice_ticks(0, hi > 0 ? hi : 1, 6, &t);
    double axis_hi = t.n ? t.v[t.n - 1] : 1;
    if (axis_hi < hi) { /* the last tick holds the longest bar */
        axis_hi += t.step;
        fig_nice_ticks(0, axis_hi, 6, &t);
    }
    double scale = (limit - VALUE_ROOM - PLOT_X0) / axis_hi;
    double bottom = top + rows_height(pr);

    fig_font(cr, 8, 0);
    fig_set(cr, FIG_GREY);
    char head[160];
    snprintf(head, sizeof head, "%s / %s", side_label(m, pr, 1), side_label(m, pr, 0));
    char fit[160];
    if (fig_text_width(cr, head) > RATIO_COL - 10) /* long run labels */
        snprintf(head, sizeof head, "other run / baseline");
    fig_fit_text(cr, head, RATIO_COL - 10, 4, fit, sizeof fit);
    fig_text(cr, ratio_x, top - 18, fit, ALIGN_LEFT);
    fig_text(cr, ratio_x, top - 6, pr->verdicts ? "[95% interval] verdict" : "ratio of the medians", ALIGN_LEFT);

    int order[TRACE_MAX_ROWS];
    int n = compare_model_roles_order(pr, order);
    draw_bands(cr, pr, order, n, top, right); /* under the grid */
    draw_axis(cr, &t, scale, top, bottom);

    double y = top;
    for (int i = 0; i < n; i++) {
        const trace_role_row *row = &pr->rows[order[i]];
        if (i == 0 || pr->rows[order[i - 1]].phase != row->phase) {
            fig_set(cr, FIG_INK);
            fig_font(cr, 9.5, 1);
            fig_text(cr, FIG_MARGIN, y + PHASE_H - 6, model_phase_name(row->phase), ALIGN_LEFT);
            y += PHASE_H;
        }
        if (row->attention_total) { /* the sum closes the parts above it */
            fig_set(cr, fig_hex(ATTENTION_MARK));
            cairo_set_line_width(cr, 0.6);
            cairo_move_to(cr, FIG_MARGIN + 3, y + 0.3);
            cairo_line_to(cr, right, y + 0.3);
            cairo_stroke(cr);
        }
        draw_row_label(cr, row, y);
        draw_bar(cr, row, 0, fig_archive_colour(0), y + 3, scale, limit);
        draw_bar(cr, row, 1, fig_archive_colour(pr->archive), y + 3 + BAR_H + 1.5, scale, limit);
        draw_ratio(cr, m, pr, row, ratio_x, y + ROW_H / 2 + 3.5, right);
        y += ROW_H;
    }
    fig_set(cr, FIG_INK);
    cairo_set_line_width(cr, 0.8);
    cairo_move_to(cr, PLOT_X0, bottom);
    cairo_line_to(cr, limit, bottom);
    cairo_stroke(cr);
    fig_font(cr, 8.5, 0);
    fig_set(cr, FIG_GREY);
    fig_text(cr, PLOT_X0, bottom + 16,
             "\xc2\xb5s per step: the summed durations of the role's operations in a step (0 in a step without it), "
             "median over the steps",
             ALIGN_LEFT);
    return 0;
}

int fig_compare_model_roles_prepare(fig_job *job, cairo_t *measure, const compare_data *m, int pair)
{
    const trace_pair *pr = &m->traces.pairs[pair];
    snprintf(job->name, sizeof job->name, "compare-model-roles-%d", pair + 1);
    const char *a = side_label(m, pr, 0), *b = side_label(m, pr, 1);
    char tail[96];
    if (pr->verdicts)
        snprintf(tail, sizeof tail, "with each row's ratio, its 95%% interval and verdict");
    else
        snprintf(tail, sizeof tail, "with each row's ratio of the medians (no verdict below %d steps a side)",
                 COMPARE_MIN_STEPS);
    int len = snprintf(job->caption, sizeof job->caption,
                       "CUDA time per step of each phase and role in %s (baseline) and %s: medians over %d and %d "
                       "steps, %s.", a, b, pr->step[0].n, pr->step[1].n, tail);
    if (len < 0 || (size_t)len >= sizeof job->caption) /* long run labels: the pair's heading names them */
        snprintf(job->caption, sizeof job->caption,
                 "CUDA time per step of each phase and role in the two traces: medians over %d and %d steps, %s.",
                 pr->step[0].n, pr->step[1].n, tail);
    job->cmp = m;
    job->pair = pair;
    job->draw = compare_model_roles_draw;
    job->w = FIG_WIDTH;
    job->h = rows_top(measure, m, pr, FIG_WIDTH - FIG_MARGIN) + rows_height(pr) + BOTTOM;
    return 0;
}
