/* compare.md's kernels, variant by variant: each run's GPU operations matched to the
 * baseline's within their role (a table of each role's time per forward, then the kernel
 * table: same, renamed, added, removed) and the findings diffed between the runs. */
#include "compare_doc_md.h"

#include "escape.h"
#include "findings.h"
#include "report.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *change_word(kernel_change c)
{
    switch (c) {
    case KERNEL_SAME: return "same";
    case KERNEL_RENAMED: return "**renamed**";
    case KERNEL_ADDED: return "**added**";
    case KERNEL_REMOVED: return "**removed**";
    }
    return "";
}

static void op_name(const kernel_summary *k, char *out, size_t n)
{
    if (!k) {
        snprintf(out, n, "–");
        return;
    }
    char s[256];
    if (k->op->kind == GPU_KERNEL) {
        short_kernel_name(k->op->name, s, sizeof s);
        if (!s[0])
            snprintf(s, sizeof s, "%s", k->op->name);
    } else {
        snprintf(s, sizeof s, "%s", k->op->name);
    }
    esc_md_code_cell_buf(out, n, s); /* a cell of the kernel table */
    /* A copy's or memset's name says its direction, not its size: add the bytes,
     * by which they are paired. */
    if (k->op->kind != GPU_KERNEL) {
        char b[32];
        size_t len = strlen(out);
        snprintf(out + len, len < n ? n - len : 0, " %s", human_bytes((double)k->op->bytes, b, sizeof b));
    }
}

/* "168" when equal, "168 → 232" when not, "–" on a missing side. */
static void pair_int(const kernel_row *r, int b, int o, const char *unit, char *out, size_t n)
{
    if (!r->base || !r->other)
        snprintf(out, n, "%d%s", r->base ? b : o, unit);
    else if (b == o)
        snprintf(out, n, "%d%s", b, unit);
    else
        snprintf(out, n, "**%d%s → %d%s**", b, unit, o, unit);
}

static void pair_occ(const kernel_row *r, char *out, size_t n)
{
    double b = r->base ? r->base->occupancy : NAN, o = r->other ? r->other->occupancy : NAN;
    if (!isfinite(b) && !isfinite(o))
        snprintf(out, n, "–");
    else if (!r->base || !r->other || !isfinite(b) || !isfinite(o))
        snprintf(out, n, "%.0f%%", (isfinite(b) ? b : o) * 100);
    else if (fabs(b - o) < 1e-9)
        snprintf(out, n, "%.0f%%", b * 100);
    else
        snprintf(out, n, "**%.0f%% → %.0f%%**", b * 100, o * 100);
}

/* "4 ops, 12.2 µs" of one role in one run, or "–" when the run has none. */
static void role_cell(const role_time *rt, char *out, size_t n)
{
    if (!rt->n) {
        snprintf(out, n, "–");
        return;
    }
    char us[48];
    format_us_column(rt->st.median, us, sizeof us);
    snprintf(out, n, "%g op%s, %s", rt->ops, rt->ops == 1 ? "" : "s", us);
}

/* Time per forward by role, when the forward has more than one role: the step
 * by step comparison that holds when the two runs use other kernels or another
 * number of them for a step. */
static void role_table(FILE *f, const compare_data *m, const compare_variant *cv, int i)
{
    int n_roles = 0;
    for (int r = 0; r < ROLE_COUNT; r++)
        n_roles += cv->roles[0][r].n || cv->roles[i][r].n;
    if (n_roles < 2)
        return;
    fputs("Time per forward by role (median over the forwards of the summed durations of the role's "
          "operations, with the median operation count):\n\n",
          f);
    fputs("| Role | Baseline | This run | Ratio [95%] |\n|---|---|---|---|\n", f);
    for (int r = 0; r < ROLE_COUNT; r++) {
        const role_time *b = &cv->roles[0][r], *o = &cv->roles[i][r];
        if (!b->n && !o->n)
            continue;
        char bt[96], ot[96], ratio[96];
        role_cell(b, bt, sizeof bt);
        role_cell(o, ot, sizeof ot);
        compare_md_ratio_text(&o->ratio, ratio, sizeof ratio);
        fprintf(f, "| %s | %s | %s | %s |\n", op_role_name((op_role)r), bt, ot, ratio);
    }
    fputc('\n', f);
}

void compare_md_kernel_section(FILE *f, const compare_data *m, const compare_variant *cv)
{
    fputs("### ", f);
    esc_md_code(f, cv->name, 0);
    fputs("\n\n", f);
    for (int i = 1; i < m->n; i++) {
        const kernel_diff *d = &cv->diff[i];
        fputs("**", f);
        esc_md_text(f, m->in[i]->label);
        fputs("** vs the baseline: ", f);
        if (!cv->cell[0].va || !cv->cell[i].va) {
            fprintf(f, "%s.\n\n", !cv->cell[i].va ? "not run in this archive" : "not run in the baseline");
            continue;
        }
        int notable = 0;
        for (int k = 0; k < d->n; k++)
            notable += d->rows[k].notable;
        double per_forward = 0;
        for (int k = 0; k < d->n; k++)
            per_forward += d->rows[k].base ? d->rows[k].base->per_forward : 0;
        if (!notable && !d->n_only_base && !d->n_only_other && !d->n_gap_base && !d->n_gap_other) {
            fprintf(f, "the same GPU operations (%d distinct, %g per forward), with the same resources and the "
                       "same time (every interval within the %.0f%% noise floor).\n\n",
                    d->n, per_forward, m->min_effect * 100);
            continue;
        }
        if (notable)
            fprintf(f, "%d of the %d distinct GPU operations %s below: another kernel, another count or other "
                       "resources, or a time not shown to be the same (faster, slower or ambiguous against the "
                       "%.0f%% noise floor); the rest have the same role, name, resources and count, and the same "
                       "time.\n\n",
                    notable, d->n, notable == 1 ? "is" : "are", m->min_effect * 100);
        else
            fprintf(f, "the same GPU operations (%d distinct), but not the same findings:\n\n", d->n);
        if (notable)
            role_table(f, m, cv, i);
        if (notable)
            fputs("| Role | Change | Baseline | This run | Per forward | Median time of one launch (baseline → this run) "
                  "| Ratio [95%] | Regs / thread | Shared mem / block | Occupancy (theor.) |\n",
                  f);
        if (notable)
            fputs("|---|---|---|---|---|---|---|---|---|---|\n", f);
        for (int k = 0; k < d->n; k++) {
            const kernel_row *r = &d->rows[k];
            if (!r->notable)
                continue;
            char bn[300], on[300], tb[48], to[48], regs[64], smem[80], occ[64], per[48];
            op_name(r->base, bn, sizeof bn);
            op_name(r->other, on, sizeof on);
            format_us_column(r->base ? r->base->median_us : NAN, tb, sizeof tb);
            format_us_column(r->other ? r->other->median_us : NAN, to, sizeof to);
            if (r->base && r->other && fabs(r->base->per_forward - r->other->per_forward) > 1e-9)
                snprintf(per, sizeof per, "**%g → %g**", r->base->per_forward, r->other->per_forward);
            else
                snprintf(per, sizeof per, "%g", r->base ? r->base->per_forward : r->other->per_forward);
            pair_int(r, r->base ? r->base->registers : 0, r->other ? r->other->registers : 0, "", regs, sizeof regs);
            pair_int(r, r->base ? r->base->smem : 0, r->other ? r->other->smem : 0, " B", smem, sizeof smem);
            pair_occ(r, occ, sizeof occ);
            fprintf(f, "| %s | %s | ", op_role_name(r->base ? r->base->role : r->other->role), change_word(r->change));
            fputs(bn, f);
            fputs(" | ", f);
            fputs(r->change == KERNEL_SAME ? "same" : on, f);
            fprintf(f, " | %s | %s → %s | ", per, tb, to);
            char ratio[96];
            compare_md_ratio_text(&r->time, ratio, sizeof ratio);
            fputs(ratio, f);
            fprintf(f, " | %s | %s | %s |\n", regs, smem, occ);
        }
        if (notable)
            fputc('\n', f);
        for (int k = 0; k < d->n_only_other; k++) {
            fputs("- Found only in this run: ", f);
            esc_md_text(f, d->only_other[k]);
            fputc('\n', f);
        }
        for (int k = 0; k < d->n_only_base; k++) {
            fputs("- Found only in the baseline: ", f);
            esc_md_text(f, d->only_base[k]);
            fputc('\n', f);
        }
        for (int k = 0; k < d->n_gap_base; k++) {
            fprintf(f, "- Found in the baseline, not testable in this run (it records %s): ", d->gap_base[k].missing);
            esc_md_text(f, d->gap_base[k].text);
            fputc('\n', f);
        }
        for (int k = 0; k < d->n_gap_other; k++) {
            fprintf(f, "- Found in this run, not testable in the baseline (it records %s): ", d->gap_other[k].missing);
            esc_md_text(f, d->gap_other[k].text);
            fputc('\n', f);
        }
        if (d->n_only_base || d->n_only_other || d->n_gap_base || d->n_gap_other)
            fputc('\n', f);
    }
}
