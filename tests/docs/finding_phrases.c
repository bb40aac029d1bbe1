/* docs/finding_phrases: the summary's "What the trace revealed" cell is the variant's ranked
 * findings as short phrases within the word limit in report.md, report.html (and so
 * report.pdf, printed from it) and summary.tex, for every fixture; each phrase links to a
 * sentence that exists; the rank is the stated rule; the findings list keeps a name as written. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"
#include "../fixture.h"
#include "finding.h"
#include "finding_phrases.h"
#include "latex.h"
#include "report.h"

/* Words of `s[0..len)` outside markup: Markdown link targets "(#…)", HTML tags, and the
 * brackets of a link's text are not words. */
static int words_of(const char *s, size_t len)
{
    char *plain = calloc(len + 1, 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '<') { /* an HTML tag: inline, it separates no words */
            while (i < len && s[i] != '>')
                i++;
        } else if (s[i] == ']' && i + 1 < len && s[i + 1] == '(') { /* "](#target)" */
            while (i < len && s[i] != ')')
                i++;
        } else if (s[i] != '[')
            plain[o++] = s[i];
    }
    int w = finding_words(plain);
    free(plain);
    return w;
}

/* The last cell of each row of report.md's summary table: each within the limit, each link's
 * target an anchor of the page. Returns the rows seen. */
static int check_markdown(const char *md, const char *fixture)
{
    const char *t = strstr(md, "## Summary\n\n");
    cr_assert_not_null(t, "%s: a summary", fixture);
    t = strstr(t, "|---|");
    t = strchr(t, '\n') + 1;
    int rows = 0;
    for (; *t == '|'; rows++) {
        const char *end = strchr(t, '\n');
        const char *last = end - 2; /* " |" closes the row */
        while (last > t && !(last[0] == '|' && last[-1] == ' ' && last[-2] != '\\'))
            last--;
        int w = words_of(last + 1, (size_t)(end - 2 - last - 1));
        cr_expect_leq(w, FINDING_CELL_MAX_WORDS, "%s: report.md's cell of row %d holds %d words", fixture, rows + 1, w);
        for (const char *l = strstr(last, "](#"); l && l < end; l = strstr(l + 3, "](#")) {
            char target[96], anchor[128];
            sscanf(l + 3, "%95[^)]", target);
            snprintf(anchor, sizeof anchor, "<a id=\"%s\"></a>", target);
            cr_expect_not_null(strstr(md, anchor), "%s: the cell links to #%s, which the report holds", fixture, target);
        }
        t = end + 1;
    }
    return rows;
}

/* The same in report.html: the last <td> of each row of the first table after the Summary heading. */
static int check_html(const char *html, const char *fixture)
{
    const char *t = strstr(html, "<h2>Summary</h2>");
    cr_assert_not_null(t, "%s: a summary in the page", fixture);
    const char *end = strstr(t, "</table>");
    int rows = 0;
    for (const char *tr = strstr(t, "<tbody>"); (tr = strstr(tr, "<tr>")) && tr < end; rows++) {
        const char *close = strstr(tr, "</tr>");
        const char *td = tr, *next;
        while ((next = strstr(td + 1, "<td")) && next < close)
            td = next;
        int w = words_of(td, (size_t)(close - td));
        cr_expect_leq(w, FINDING_CELL_MAX_WORDS, "%s: report.html's cell of row %d holds %d words", fixture, rows + 1, w);
        for (const char *h = strstr(td, "href=\"#"); h && h < close; h = strstr(h + 1, "href=\"#")) {
            char target[96], anchor[128];
            sscanf(h + 7, "%95[^\"]", target);
            snprintf(anchor, sizeof anchor, "id=\"%s\"", target);
            cr_expect_not_null(strstr(html, anchor), "%s: the page links to #%s, which it holds", fixture, target);
        }
        tr = close;
    }
    return rows;
}

/* summary.tex's findings table: the cell after "&" of each row. */
static int check_tex(const char *tex, const char *fixture)
{
    const char *t = strstr(tex, "tab:attnprof-findings");
    cr_assert_not_null(t, "%s: the findings table", fixture);
    t = strstr(t, "\\midrule\n") + 9;
    int rows = 0;
    for (; strncmp(t, "\\bottomrule", 11); rows++) {
        const char *end = strstr(t, " \\\\\n");
        const char *amp = strstr(t, " & ");
        cr_assert(amp && end && amp < end, "%s: a findings row", fixture);
        int w = words_of(amp + 3, (size_t)(end - amp - 3));
        cr_expect_leq(w, FINDING_CELL_MAX_WORDS, "%s: summary.tex's cell of row %d holds %d words", fixture, rows + 1, w);
        t = end + 4;
    }
    return rows;
}

Test(finding_phrases, every_summary_cell_fits_the_limit_in_every_format)
{
    DIR *d = opendir("tests/fixtures");
    cr_assert_not_null(d);
    int fixtures = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "h200-", 5))
            continue;
        char dir[512];
        snprintf(dir, sizeof dir, "tests/fixtures/%s", e->d_name);
        fixture f;
        fixture_load(&f, dir);
        char *md = report_markdown(&f.a, NULL, NULL);
        char err[256];
        char *html = report_html(md, "t", err, sizeof err);
        cr_assert_not_null(html, "%s", err);
        char *tex = report_summary_tex(&f.a);
        cr_expect_eq(check_markdown(md, e->d_name), f.a.n, "%s: a row per variant in report.md", e->d_name);
        cr_expect_eq(check_html(html, e->d_name), f.a.n, "%s: a row per variant in report.html", e->d_name);
        cr_expect_eq(check_tex(tex, e->d_name), f.a.n, "%s: a row per variant in summary.tex", e->d_name);
        free(md);
        free(html);
        free(tex);
        fixture_free(&f);
        fixtures++;
    }
    closedir(d);
    cr_assert_geq(fixtures, 14, "every H200 fixture was read (%d)", fixtures);
}

/* A finding with the given id, severity and share of a 100 µs forward (us: NAN, none), its
 * rank keys and phrase as the finding table's engine fills them (finding_finish). */
static void add_finding(variant_analysis *va, const char *id, finding_severity sev, double us)
{
    finding *f = &va->meta[va->n_findings++];
    memset(f, 0, sizeof *f);
    snprintf(f->id, sizeof f->id, "%s", id);
    int kind = finding_kind_of_id(id);
    f->kind = kind >= 0 ? (finding_kind)kind : (finding_kind)0;
    f->severity = sev;
    snprintf(f->text, sizeof f->text, "%s happened", id);
    if (isfinite(us))
        findings_number(f, "us_per_forward", us, "us");
    if (kind >= 0)
        finding_finish(f, 100);
    else /* a kind the table does not hold: no phrase, no rank key */
        f->share = f->departure = NAN;
    f->severity = sev; /* the test's, whatever the row says */
}

Test(finding_phrases, rank_is_severity_then_share_of_cuda_time_then_order)
{
    static variant_analysis va;
    memset(&va, 0, sizeof va);
    va.cuda_us = (stats){.median = 100, .min = 100, .max = 100, .n = 5};
    add_finding(&va, "fused_kernel", FINDING_INFO, 90);      /* the largest share, but info */
    add_finding(&va, "host_bound", FINDING_NOTICE, NAN);     /* a notice naming no time */
    add_finding(&va, "mask_rebuild", FINDING_NOTICE, 5);     /* a notice, 5% */
    add_finding(&va, "hidden_memcpy", FINDING_NOTICE, 20);   /* a notice, 20% */
    add_finding(&va, "no_forward", FINDING_WARNING, NAN);    /* a warning */
    int order[MAX_FINDINGS];
    cr_assert_eq(findings_ranked(&va, order, MAX_FINDINGS), 5);
    const char *want[] = {"no_forward", "hidden_memcpy", "mask_rebuild", "host_bound", "fused_kernel"};
    for (int k = 0; k < 5; k++)
        cr_expect_str_eq(va.meta[order[k]].id, want[k], "rank %d", k + 1);

    finding_cell c;
    finding_cell_build(&va, &c);
    cr_assert_eq(c.n, FINDING_CELL_MAX_PHRASES, "three phrases fit");
    cr_expect_str_eq(va.meta[c.index[0]].id, "no_forward");
    cr_expect_str_eq(va.meta[c.index[1]].id, "hidden_memcpy");
    cr_expect_eq(c.more, 2, "the rest is \"2 more\"");
    for (int j = 0; j < c.n; j++)
        cr_expect_neq(va.meta[c.index[j]].severity, FINDING_INFO, "no info-level finding beside a notice");
}

Test(finding_phrases, info_findings_fill_a_cell_without_notices)
{
    static variant_analysis va;
    memset(&va, 0, sizeof va);
    va.cuda_us = (stats){.median = 100, .min = 100, .max = 100, .n = 5};
    add_finding(&va, "launch_api", FINDING_INFO, NAN);
    add_finding(&va, "fused_kernel", FINDING_INFO, 95);
    finding_cell c;
    finding_cell_build(&va, &c);
    cr_assert_eq(c.n, 2);
    cr_expect_str_eq(va.meta[c.index[0]].id, "fused_kernel", "the one that names CUDA time first");
    cr_expect_eq(c.more, 0);
    cr_expect_str_eq(c.phrase[0], va.meta[c.index[0]].phrase, "the finding table's phrase");
}

Test(finding_phrases, phrases_carry_the_numbers_of_their_finding)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    const variant_analysis *naive = analysis_find(&f.a, "naive");
    cr_assert_not_null(naive);
    for (int k = 0; k < naive->n_findings; k++) {
        if (strcmp(naive->meta[k].id, "hidden_memcpy"))
            continue;
        char phrase[FINDING_PHRASE_MAX], bytes[32], pct[16];
        summary_finding_phrase(naive, k, phrase, sizeof phrase);
        human_bytes(findings_value(&naive->meta[k], "bytes"), bytes, sizeof bytes);
        snprintf(pct, sizeof pct, "%.0f%%", findings_value(&naive->meta[k], "pct_of_cuda_time"));
        cr_expect_not_null(strstr(phrase, bytes), "%s holds %s", phrase, bytes);
        cr_expect_not_null(strstr(phrase, pct), "%s holds %s", phrase, pct);
        fixture_free(&f);
        return;
    }
    cr_assert_fail("naive of h200-6var has a hidden_memcpy finding");
}

Test(finding_phrases, an_unknown_id_gets_the_head_of_its_sentence)
{
    static variant_analysis va;
    memset(&va, 0, sizeof va);
    add_finding(&va, "some_future_finding", FINDING_NOTICE, NAN);
    snprintf(va.meta[0].text, sizeof va.meta[0].text, "one two three four five six seven eight nine");
    char phrase[FINDING_PHRASE_MAX];
    summary_finding_phrase(&va, 0, phrase, sizeof phrase);
    cr_expect_str_eq(phrase, "one two three four five six…");
}

Test(finding_phrases, the_findings_list_keeps_a_name_as_written)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    variant_analysis *va = &f.a.v[0];
    snprintf(va->findings[0], sizeof va->findings[0], "the kernel `evil|cell` ran");
    char *md = report_markdown(&f.a, NULL, NULL);
    const char *section = strstr(md, "## Variants");
    cr_assert_not_null(section);
    cr_expect_not_null(strstr(section, "`evil|cell`"), "the list item holds the name as written");
    cr_expect_null(strstr(section, "evil\\|cell"), "no table escape outside a table");
    free(md);
    fixture_free(&f);
}

Test(finding_phrases, the_page_keeps_our_anchors_and_nothing_else_raw)
{
    const char *md = "a <a id=\"v1-x\"></a> b <b>bold</b> [l](javascript:alert(1)) [m](#v1-x)\n\n<div>\nx\n</div>\n";
    char err[256];
    char *html = report_html(md, "t", err, sizeof err);
    cr_assert_not_null(html, "%s", err);
    cr_expect_not_null(strstr(html, "<a id=\"v1-x\"></a>"), "our anchor is kept");
    cr_expect_not_null(strstr(html, "<a href=\"#v1-x\">m</a>"), "a link to it is kept");
    cr_expect_null(strstr(html, "<b>"), "other raw HTML is omitted");
    cr_expect_null(strstr(html, "<div>"), "an HTML block is omitted");
    cr_expect_null(strstr(html, "javascript:"), "a dangerous URL is blanked");
    free(html);
}
