/* compare's outputs for pairs of model traces: the figure of each pair
 * (figures/compare-model-roles-<N>, report/figures/compare_model_roles.c) and compare.tex's
 * table of each pair (report/docs/latex.c). Real H200 fixtures (tests/fixtures/models-h200),
 * imported with the binary. The figure's rows are counted independently from the two
 * archives' roles.csv (each phase and role that ran in either trace, and one sum per phase
 * with an attention role), not from compare_traces.c; compare.tex's numbers are checked
 * against the compare.csv of the same comparison. tests/paper/latex.sh compiles compare.tex. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "compare.h"
#include "units.h"
#include "exit_codes.h"
#include "figures.h"
#include "run_cli.h"
#include "slurp.h"
#include "imported_compare.h"

#define MODELS "tests/fixtures/models-h200/"

/* Splits one CSV line (RFC 4180 quotes) into at most max fields, in place; their count. */
static int csv_fields(char *line, char **field, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        char *out = p;
        field[n++] = p;
        int quoted = *p == '"';
        if (quoted)
            p++;
        for (;; p++) {
            if (quoted && *p == '"' && p[1] == '"')
                *out++ = '"', p++;
            else if (quoted && *p == '"')
                quoted = 0;
            else if (!quoted && (*p == ',' || *p == '\n' || *p == '\0'))
                break;
            else
                *out++ = *p;
        }
        char end = *p;
        *out = '\0';
        if (end != ',')
            break;
        p++;
    }
    return n;
}

/* The figure's rows, counted from the archives: the distinct (phase, role) of both roles.csv
 * files, and one "attention, all parts" per phase in which either has a role named attention*. */
static int rows_from_roles_csv(const char *dir_a, const char *dir_b)
{
    char seen[64][80];
    int n_seen = 0, attention_phases = 0;
    char phases_with_attention[8][32];
    const char *dirs[2] = {dir_a, dir_b};
    for (int j = 0; j < 2; j++) {
        char path[256];
        snprintf(path, sizeof path, "%s/roles.csv", dirs[j]);
        char *text = slurp_len(path, NULL);
        cr_assert_not_null(text, "%s", path);
        char *save = NULL, *line = strtok_r(text, "\n", &save);
        cr_assert(line && !strncmp(line, "variant,phase,role,", 19), "roles.csv's head: %s", line);
        while ((line = strtok_r(NULL, "\n", &save))) {
            char *f[16];
            cr_assert_geq(csv_fields(line, f, 16), 3);
            char key[80];
            snprintf(key, sizeof key, "%s/%s", f[1], f[2]);
            int known = 0;
            for (int k = 0; k < n_seen; k++)
                known |= !strcmp(seen[k], key);
            if (!known) {
                cr_assert_lt(n_seen, 64);
                snprintf(seen[n_seen++], sizeof seen[0], "%s", key);
            }
            if (strncmp(f[2], "attention", 9))
                continue;
            int phase_known = 0;
            for (int k = 0; k < attention_phases; k++)
                phase_known |= !strcmp(phases_with_attention[k], f[1]);
            if (!phase_known)
                snprintf(phases_with_attention[attention_phases++], sizeof phases_with_attention[0], "%s", f[1]);
        }
        free(text);
    }
    return n_seen + attention_phases;
}

/* The figure's row order: each row once; per phase its attention parts, their sum, the rest. */
static void check_order(const trace_pair *pr)
{
    int order[TRACE_MAX_ROWS + 1], used[TRACE_MAX_ROWS] = {0};
    int n = compare_model_roles_order(pr, order);
    cr_assert_eq(n, pr->n_rows, "the figure draws every row compare_traces built");
    int stage = 0; /* 0 attention parts, 1 their sum, 2 the rest; reset at each phase */
    for (int i = 0; i < n; i++) {
        cr_assert(order[i] >= 0 && order[i] < pr->n_rows && !used[order[i]], "each row once");
        used[order[i]] = 1;
        const trace_role_row *r = &pr->rows[order[i]];
        if (i > 0 && pr->rows[order[i - 1]].phase != r->phase) {
            cr_assert_gt(r->phase, pr->rows[order[i - 1]].phase, "phases in order");
            stage = 0;
        }
        int here = r->attention_total ? 1 : !strncmp(model_role_name(r->role), "attention", 9) ? 0 : 2;
        cr_assert_geq(here, stage, "%s: attention parts, their sum, then the rest", model_role_name(r->role));
        stage = here;
    }
}

static int starts_with(const char *path, const char *magic)
{
    char *b = slurp_len(path, NULL);
    int ok = b && !strncmp(b, magic, strlen(magic));
    free(b);
    return ok;
}

Test(compare_model_figure, one_per_pair_in_every_format_and_none_without_model_traces, .timeout = 180)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer-s8a.json.gz", MODELS "llama-gqa-sdpa-infer-s8a.json.gz", "");
    char args[1024], path[512], a[256], b[256];
    snprintf(a, sizeof a, "%s/a", c->dir);
    snprintf(b, sizeof b, "%s/b", c->dir);
    cr_assert_eq(c->m.traces.n_pairs, 1);
    const trace_pair *pr = &c->m.traces.pairs[0];
    cr_assert_eq(pr->n_rows, rows_from_roles_csv(a, b), "rows against both archives' roles.csv");
    check_order(pr);

    snprintf(args, sizeof args, "compare %s %s -o %s/cmp -q --format png,svg,pdf", a, b, c->dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    static const char *const ext[] = {"png", "svg", "pdf"}, *const magic[] = {"\x89PNG", "<?xml", "%PDF"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/cmp/figures/compare-model-roles-1.%s", c->dir, ext[k]);
        cr_assert(starts_with(path, magic[k]), "%s is a %s", path, ext[k]);
    }
    snprintf(path, sizeof path, "%s/cmp/figures/compare-model-roles-2.png", c->dir);
    cr_assert(access(path, F_OK) != 0, "one pair, one figure");
    /* compare.md shows it in the pair's subsection, between its role table and its layers */
    snprintf(path, sizeof path, "%s/cmp/compare.md", c->dir);
    char *md = slurp_len(path, NULL);
    cr_assert_not_null(md);
    char *sec = strstr(md, "### `llama-gqa-eager-infer-s8a` (a) against `llama-gqa-sdpa-infer-s8a` (b)");
    char *roles = sec ? strstr(sec, "| forward | **attention, all parts** |") : NULL;
    char *fig = sec ? strstr(sec, "](figures/compare-model-roles-1.png)") : NULL;
    char *layers = sec ? strstr(sec, "Layers not paired") : NULL;
    cr_assert(sec && roles && fig && layers && roles < fig && fig < layers, "in the pair's subsection");
    cr_assert(strstr(md, "*CUDA time per step of each phase and role in a (baseline) and b: medians over 8 and 8 steps, "
                         "with each row's ratio, its 95% interval and verdict.* — vector: "
                         "[SVG](figures/compare-model-roles-1.svg) [PDF](figures/compare-model-roles-1.pdf)"),
              "its caption says what the bars are");
    /* compare.html inlines every figure compare.md shows */
    int shown = 0;
    for (char *p = md; (p = strstr(p, "\n![")); p++)
        shown++;
    free(md);
    snprintf(path, sizeof path, "%s/cmp/compare.html", c->dir);
    char *html = slurp_len(path, NULL);
    int inlined = 0;
    for (char *p = html; (p = strstr(p, "<img src=\"data:image/png;base64,")); p++)
        inlined++;
    cr_assert(strstr(html, "CUDA time per step of each phase and role in a (baseline) and b"));
    free(html);
    cr_assert_eq(inlined, shown, "compare.html inlines the %d figures of compare.md", shown);
    cr_assert_eq(shown, 4, "compare-time, -speedup, -timeline and the pair's");

    /* one format asked for: that one, and the PNG compare.html inlines (as the report's) */
    snprintf(args, sizeof args, "compare %s %s -o %s/svg -q --format svg", a, b, c->dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/svg/figures/compare-model-roles-1.svg", c->dir);
    cr_assert(starts_with(path, "<?xml"));
    snprintf(path, sizeof path, "%s/svg/figures/compare-model-roles-1.png", c->dir);
    cr_assert(access(path, F_OK) == 0, "the page's PNG is drawn whatever --format says");
    snprintf(path, sizeof path, "%s/svg/compare.html", c->dir);
    html = slurp_len(path, NULL);
    inlined = 0;
    for (char *p = html; (p = strstr(p, "<img src=\"data:image/png;base64,")); p++)
        inlined++;
    free(html);
    cr_assert_eq(inlined, 4, "compare.html has its figures with --format svg");

    /* runs of the series' variants: no model trace, no such figure */
    snprintf(args, sizeof args, "compare tests/fixtures/h200-cudnn914 tests/fixtures/h200-cudnn919-a -o %s/runs -q "
                                "--format png,svg,pdf", c->dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/runs/figures/compare-time.png", c->dir);
    cr_assert(starts_with(path, "\x89PNG"));
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/runs/figures/compare-model-roles-1.%s", c->dir, ext[k]);
        cr_assert(access(path, F_OK) != 0, "%s", path);
    }
    snprintf(path, sizeof path, "%s/runs/compare.md", c->dir);
    md = slurp_len(path, NULL);
    cr_assert(md && !strstr(md, "compare-model-roles"));
    free(md);
    compared_free(c);
    free(c);
}

Test(compare_model_figure, every_phase_of_a_training_step, .timeout = 180)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-sdpa-train.json.gz", MODELS "llama-gqa-sdpa-train.json.gz", "");
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/a", c->dir);
    snprintf(b, sizeof b, "%s/b", c->dir);
    const trace_pair *pr = &c->m.traces.pairs[0];
    int phases[MPHASE_COUNT] = {0};
    for (int k = 0; k < pr->n_rows; k++)
        phases[pr->rows[k].phase] = 1;
    cr_assert(phases[MPHASE_FORWARD] && phases[MPHASE_BACKWARD] && phases[MPHASE_OPTIMIZER], "three phases");
    cr_assert_eq(pr->n_rows, rows_from_roles_csv(a, b));
    check_order(pr);
    compared_free(c);
    free(c);
}

/* Two pairs (the same two names on both sides): two figures, numbered in compare.md's order. */
Test(compare_model_figure, a_figure_per_pair, .timeout = 180)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer-s8a.json.gz " MODELS "llama-gqa-sdpa-infer-s8a.json.gz",
                     MODELS "llama-gqa-eager-infer-s8b.json.gz " MODELS "llama-gqa-sdpa-infer-s8b.json.gz",
                     "--variant eager,sdpa");
    cr_assert_eq(c->m.traces.n_pairs, 2);
    char dir[128], err[512];
    snprintf(dir, sizeof dir, "%s/figs", c->dir);
    figure_list l = {0};
    cr_assert_eq(compare_figures_render(&c->m, dir, FIG_SVG, 0, &l, err, sizeof err), 0, "%s", err);
    int found[2] = {0};
    for (int i = 0; i < l.n; i++)
        for (int k = 0; k < 2; k++) {
            char name[64];
            snprintf(name, sizeof name, "compare-model-roles-%d", k + 1);
            if (!strcmp(l.files[i].figure, name)) {
                found[k]++;
                cr_assert(strstr(l.files[i].caption, "medians over 8 and 8 steps"), "%s", l.files[i].caption);
            }
        }
    cr_assert(found[0] == 1 && found[1] == 1, "one SVG each: %d, %d", found[0], found[1]);
    cr_assert_eq(l.n, 5, "three figures of the runs and two of the pairs");
    figure_list_free(&l);
    for (int k = 0; k < 2; k++)
        check_order(&c->m.traces.pairs[k]);
    compared_free(c);
    free(c);
}

/* The text beside each row: the ratio, interval and verdict with 5 steps a side, the ratio of
 * the medians and no verdict word below. */
static void check_ratio_texts(const compare_data *m, const trace_pair *pr)
{
    for (int k = 0; k < pr->n_rows; k++) {
        const trace_role_row *r = &pr->rows[k];
        char ratio[96], verdict[32], want[96];
        compare_model_roles_ratio_text(m, pr, r, ratio, sizeof ratio, verdict, sizeof verdict);
        if (!r->present[0] || !r->present[1]) {
            snprintf(want, sizeof want, "only in %s", m->in[r->present[0] ? 0 : pr->archive]->label);
            cr_assert_str_eq(ratio, want);
            cr_assert_str_eq(verdict, "");
        } else if (pr->verdicts) {
            /* the interval's ends print apart: as many decimals (2 to 4) as that takes */
            int d = 2;
            char lo[32], hi[32];
            for (;; d++) {
                snprintf(lo, sizeof lo, "%.*f", d, r->ratio.ci.lo);
                snprintf(hi, sizeof hi, "%.*f", d, r->ratio.ci.hi);
                if (strcmp(lo, hi) || d == 4)
                    break;
            }
            snprintf(want, sizeof want, "%.*f× [%s–%s]", d, r->ratio.ci.ratio, lo, hi);
            cr_assert_str_eq(ratio, want);
            cr_assert(verdict[0], "%s has a verdict", model_role_name(r->role));
            cr_assert_str_eq(verdict, compare_verdict_word(r->ratio.verdict));
        } else {
            snprintf(want, sizeof want, "%.2f× (medians)", r->ratio.ci.ratio);
            cr_assert_str_eq(ratio, want);
            cr_assert_str_eq(verdict, "", "no verdict below %d steps", COMPARE_MIN_STEPS);
        }
    }
}

Test(compare_model_figure, verdict_text_only_with_five_steps, .timeout = 180)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer-s8a.json.gz", MODELS "llama-gqa-sdpa-infer-s8a.json.gz", "");
    cr_assert(c->m.traces.pairs[0].verdicts);
    check_ratio_texts(&c->m, &c->m.traces.pairs[0]);
    compared_free(c);
    memset(c, 0, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer.json.gz", MODELS "llama-gqa-sdpa-infer.json.gz", "");
    const trace_pair *pr = &c->m.traces.pairs[0];
    cr_assert_eq(pr->step[0].n, 2);
    cr_assert(!pr->verdicts);
    check_ratio_texts(&c->m, pr);
    compared_free(c);
    free(c);
}

/* The other run's `step` row of compare.csv: its ratio, interval and verdict columns. */
typedef struct csv_step {
    double ratio, lo, hi;
    char verdict[32];
    int steps;
} csv_step;

static csv_step step_row_of(const char *csv_path)
{
    char *text = slurp_len(csv_path, NULL);
    cr_assert_not_null(text, "%s", csv_path);
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    char *head[32];
    int n = csv_fields(line, head, 32), c_ratio = -1, c_lo = -1, c_hi = -1, c_verdict = -1, c_kind = -1,
        c_base = -1, c_fw = -1;
    for (int i = 0; i < n; i++) {
        c_ratio = !strcmp(head[i], "ratio") ? i : c_ratio;
        c_lo = !strcmp(head[i], "ratio_lo") ? i : c_lo;
        c_hi = !strcmp(head[i], "ratio_hi") ? i : c_hi;
        c_verdict = !strcmp(head[i], "verdict") ? i : c_verdict;
        c_kind = !strcmp(head[i], "kind") ? i : c_kind;
        c_base = !strcmp(head[i], "baseline") ? i : c_base;
        c_fw = !strcmp(head[i], "forwards") ? i : c_fw;
    }
    cr_assert(c_ratio >= 0 && c_lo >= 0 && c_hi >= 0 && c_verdict >= 0 && c_kind >= 0 && c_base >= 0 && c_fw >= 0);
    csv_step s = {NAN, NAN, NAN, "", 0};
    int rows = 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        char *f[32];
        int m = csv_fields(line, f, 32);
        if (m <= c_kind || strcmp(f[c_kind], "step") || strcmp(f[c_base], "0"))
            continue;
        rows++;
        s.ratio = f[c_ratio][0] ? strtod(f[c_ratio], NULL) : NAN;
        s.lo = f[c_lo][0] ? strtod(f[c_lo], NULL) : NAN;
        s.hi = f[c_hi][0] ? strtod(f[c_hi], NULL) : NAN;
        snprintf(s.verdict, sizeof s.verdict, "%s", f[c_verdict]);
        s.steps = atoi(f[c_fw]);
    }
    free(text);
    cr_assert_eq(rows, 1, "one step row of the other run");
    return s;
}

static void check_tex_against_csv(const char *dir, int steps_each)
{
    char path[512], want[256];
    snprintf(path, sizeof path, "%s/compare.csv", dir);
    csv_step s = step_row_of(path);
    cr_assert_eq(s.steps, steps_each);
    snprintf(path, sizeof path, "%s/compare.tex", dir);
    char *tex = slurp_len(path, NULL);
    cr_assert_not_null(tex);
    char *table = strstr(tex, "\\caption{Model trace pair 1, step by step: ");
    cr_assert_not_null(table, "a table for the pair");
    cr_assert(strstr(table, "\\label{tab:attnprof-compare-model-1}"));
    char *row = strstr(table, "\nCUDA time per step & ");
    cr_assert_not_null(row);
    /* one decimal rule per column: the ratio column prints with the decimals its tightest
     * interval needs, so the step row's at least those its own interval needs */
    char *end = strchr(row + 1, '\n');
    int found = 0;
    for (int d = s.verdict[0] ? units_ratio_decimals(s.lo, s.hi) : 2; d <= 4 && !found; d++) {
        if (s.verdict[0])
            snprintf(want, sizeof want, "%.*f$\\times$ [%.*f--%.*f] & %s", d, s.ratio, d, s.lo, d, s.hi,
                     s.verdict); /* then " \\" or, inputs differing, " (across ...) \\" */
        else {
            cr_assert(!isfinite(s.lo), "no interval in compare.csv either");
            snprintf(want, sizeof want, "%.*f$\\times$ (medians) & \\mbox{no verdict (%d steps)}", d, s.ratio,
                     steps_each);
        }
        found = end && strstr(row, want) && strstr(row, want) < end;
    }
    cr_assert(found, "the step row holds \"%s\":\n%.*s", want, (int)(end ? end - row : 0), row);
    cr_assert(strstr(table, "\nAttention, all parts, forward & "), "the phase's attention");
    /* the trace names are LaTeX-escaped as latex.c escapes names: no raw '-' ligatures */
    cr_assert(strstr(table, "\\texttt{llama-{}gqa-{}sdpa-{}infer"), "escaped trace name");
    free(tex);
}

Test(compare_model_tex, the_step_ratio_and_verdict_of_compare_csv, .timeout = 180)
{
    compared *c = calloc(1, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer-s8a.json.gz", MODELS "llama-gqa-sdpa-infer-s8a.json.gz", "");
    char args[1024], dir[256];
    snprintf(dir, sizeof dir, "%s/cmp", c->dir);
    snprintf(args, sizeof args, "compare %s/a %s/b -o %s -q --format svg", c->dir, c->dir, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    check_tex_against_csv(dir, 8);
    cr_assert_eq(c->m.traces.pairs[0].step_ratio.verdict, VERDICT_FASTER, "the fixtures' step: faster");
    compared_free(c);
    memset(c, 0, sizeof *c);
    compare_imports(c, MODELS "llama-gqa-eager-infer.json.gz", MODELS "llama-gqa-sdpa-infer.json.gz", "");
    snprintf(dir, sizeof dir, "%s/cmp", c->dir);
    snprintf(args, sizeof args, "compare %s/a %s/b -o %s -q --format svg", c->dir, c->dir, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    check_tex_against_csv(dir, 2);
    compared_free(c);
    free(c);
}
