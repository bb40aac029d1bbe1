/* docs/compare_doc: compare's headline names producers first, then releases, before any tool
 * version; every output states the one ratio convention (time ratio, below 1 is faster); the
 * page has its figures whatever --format asks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../slurp.h"
#include "compare.h"
#include "compare_doc.h"
#include "compare_doc_md.h"
#include "exit_codes.h"
#include "figures.h"
#include "latex.h"

typedef struct pair {
    compare_archive a, b;
    compare_data m;
} pair;

static void build(pair *p, const char *da, const char *db, run_producer producer_b)
{
    char err[512];
    cr_assert_eq(compare_load(&p->a, da, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(compare_load(&p->b, db, err, sizeof err), EXIT_OK, "%s", err);
    p->b.r.producer = producer_b; /* whose kernels the second run holds */
    compare_archive *in[2] = {&p->a, &p->b};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT, .formats = FIG_PDF};
    cr_assert_eq(compare_build(&p->m, in, 2, &opt, err, sizeof err), EXIT_OK, "%s", err);
}

static void release(pair *p)
{
    compare_free(&p->m);
    compare_archive_free(&p->a);
    compare_archive_free(&p->b);
}

Test(compare_doc, the_headline_names_releases_then_stays_quiet_when_nothing_differs)
{
    static pair p;
    build(&p, "tests/fixtures/h200-cudnn914", "tests/fixtures/h200-cudnn919-a", PRODUCER_ATTNPROF);
    char h[512];
    compare_headline(&p.m, h, sizeof h);
    cr_expect_str_eq(h, "cuDNN 9.14 against 9.19");
    char *md = compare_markdown(&p.m, NULL, NULL);
    const char *lead = strstr(md, "**cuDNN 9.14 against 9.19.**"), *differs = strstr(md, "cuDNN differs");
    cr_expect(lead && differs && lead < differs, "the headline comes first");
    free(md);
    release(&p);

    build(&p, "tests/fixtures/h200-cudnn919-a", "tests/fixtures/h200-cudnn919-b", PRODUCER_ATTNPROF);
    compare_headline(&p.m, h, sizeof h);
    cr_expect_str_eq(h, "", "one producer, one release, one GPU: no headline");
    release(&p);
}

Test(compare_doc, the_headline_names_producers_before_any_tool_version)
{
    static pair p;
    build(&p, "tests/fixtures/h200-cudnn919-a", "tests/fixtures/h200-cudnn919-b", PRODUCER_PYTORCH);
    char h[512];
    compare_headline(&p.m, h, sizeof h);
    cr_expect_str_eq(h, "attnprof's kernels against PyTorch's");
    char *tex = compare_tex(&p.m);
    cr_expect_not_null(strstr(tex, "\\textit{Note:} attnprof's kernels against PyTorch's."), "in compare.tex's note");
    free(tex);
    release(&p);
}

Test(compare_doc, every_output_states_the_time_ratio_convention)
{
    static pair p;
    build(&p, "tests/fixtures/h200-cudnn914", "tests/fixtures/h200-cudnn919-a", PRODUCER_ATTNPROF);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    compare_terminal_summary(f, &p.m);
    fclose(f);
    cr_expect_not_null(strstr(buf, "time ratio against the baseline h200-cudnn914 (below 1 is faster)"), "%s", buf);
    const compare_variant *cudnn = NULL;
    for (int v = 0; v < p.m.n_variants; v++)
        if (!strcmp(p.m.variants[v].name, "cudnn"))
            cudnn = &p.m.variants[v];
    cr_assert_not_null(cudnn);
    const compare_ratio *r = &cudnn->cell[1].metric_ratio;
    cr_assert_lt(r->ci.ratio, 1, "cuDNN 9.19 is faster: a time ratio below 1");
    char want[64];
    snprintf(want, sizeof want, "%.2fx faster", r->ci.ratio);
    cr_expect_not_null(strstr(buf, want), "the terminal prints the table's ratio %s:\n%s", want, buf);
    free(buf);
    char *tex = compare_tex(&p.m);
    cr_expect_not_null(strstr(tex, "time ratio (below 1 is faster)"));
    free(tex);
    char *md = compare_markdown(&p.m, NULL, NULL);
    cr_expect_not_null(strstr(md, "below 1 is faster"));
    free(md);
    release(&p);
}

Test(compare_doc, the_page_has_its_figures_whatever_the_format)
{
    static pair p;
    build(&p, "tests/fixtures/h200-cudnn914", "tests/fixtures/h200-cudnn919-a", PRODUCER_ATTNPROF);
    char dir[] = "/tmp/attnprof-compare-pdf-XXXXXX", out[64], path[128], err[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/cmp", dir);
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT, .formats = FIG_PDF};
    cr_assert_eq(compare_write(&p.m, out, &opt, 0, err, sizeof err), EXIT_OK, "%s", err);
    snprintf(path, sizeof path, "%s/compare.html", out);
    char *html = slurp_len(path, NULL);
    cr_assert_not_null(html);
    int inlined = 0;
    for (char *q = html; (q = strstr(q, "<img src=\"data:image/png;base64,")); q++)
        inlined++;
    cr_expect_eq(inlined, 3, "compare-time, -speedup and -timeline inlined with --format pdf");
    free(html);
    snprintf(path, sizeof path, "%s/figures/compare-speedup.pdf", out);
    cr_expect_eq(access(path, F_OK), 0, "the format asked for is drawn too");
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    release(&p);
}

/* The number as compare.csv writes it (esc_csv_number: %g), for matching a row's cell. */
static void csv_num(char *out, size_t n, double v) { snprintf(out, n, "%g", v); }

/* compare.csv of run --backward archives: each variant's forward rows (phase `forward`), then one
 * backward row per run (phase `backward`) with its backwards counted, its CUDA µs per backward
 * (median, min, max as the analysis has them) and operations per backward; against a run without
 * a backward, that run's row says `not recorded` with empty numbers. Runs without backwards keep
 * the old header (no phase column). */
Test(compare_doc, compare_csv_has_backward_rows)
{
    pair p;
    build(&p, "tests/fixtures/h200-cudnn919-a", "tests/fixtures/h200-backward", PRODUCER_ATTNPROF);
    char *csv = compare_csv(&p.m);
    cr_assert(strstr(csv, "ops_per_forward,ops_vs_baseline,kind,phase,part,implementation\n"), "%s", csv);
    int rows = 0;
    for (int v = 0; v < p.m.n_variants; v++) {
        const compare_variant *cv = &p.m.variants[v];
        const variant_analysis *va = cv->cell[1].va;
        char want[512], med[32], lo[32], hi[32];
        csv_num(med, sizeof med, cv->bwd[1].st.median);
        csv_num(lo, sizeof lo, cv->bwd[1].st.min);
        csv_num(hi, sizeof hi, cv->bwd[1].st.max);
        snprintf(want, sizeof want, "\"%s\",\"h200-backward\",0,ok,\"\",%d,%s,%s,%s,,,,,,,,,,,,%d,,variant,backward,,\n",
                 cv->name, va->n_backwards, med, lo, hi, va->ops_per_backward);
        cr_expect(strstr(csv, want), "no backward row %s in:\n%s", want, csv);
        snprintf(want, sizeof want, "\"%s\",\"h200-cudnn919-a\",1,not recorded,\"\",0,,,,,,,,,,,,,,,,,variant,backward,,\n",
                 cv->name);
        cr_expect(strstr(csv, want), "no baseline backward row %s", want);
        rows++;
    }
    cr_expect_eq(rows, 6);
    const char *line = csv;
    int fwd = 0, bwd = 0;
    for (; (line = strstr(line, ",variant,")); line++) {
        fwd += !strncmp(line, ",variant,forward,,\n", 19);
        bwd += !strncmp(line, ",variant,backward,,\n", 20);
    }
    cr_expect_eq(fwd, 2 * p.m.n_variants);
    cr_expect_eq(bwd, 2 * p.m.n_variants);
    free(csv);
    release(&p);

    build(&p, "tests/fixtures/h200-cudnn914", "tests/fixtures/h200-cudnn919-a", PRODUCER_ATTNPROF);
    csv = compare_csv(&p.m);
    cr_expect(strstr(csv, "ops_per_forward,ops_vs_baseline\n") && !strstr(csv, "backward"), "%s", csv);
    free(csv);
    release(&p);
}
