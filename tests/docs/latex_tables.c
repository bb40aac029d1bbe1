/* docs/latex_tables: the paper's tables have captions of at most two lines (the detail in a note
 * under the table), one decimal rule per column, and text outside ASCII as UTF-8 or [U+XXXX]. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../fixture.h"
#include "compare.h"
#include "figures.h"
#include "latex.h"

/* Printed characters of LaTeX source: a command (\textmu{}, \ensuremath{\times}) counts one,
 * braces and '$' none, a UTF-8 character one. */
static int printed_chars(const char *s, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') {
            n++;
            i++;
            while (i < len && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
                i++;
            i--;
        } else if (c != '{' && c != '}' && c != '$' && (c & 0xc0) != 0x80)
            n++;
    }
    return n;
}

/* Every \caption{…} of a table file within LATEX_CAPTION_MAX_CHARS; returns how many. */
static int check_captions(const char *tex, const char *what)
{
    int n = 0;
    for (const char *c = strstr(tex, "\\caption{"); c; c = strstr(c + 1, "\\caption{"), n++) {
        const char *p = c + 9;
        int depth = 1;
        for (; *p && depth; p++)
            depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
        int chars = printed_chars(c + 9, (size_t)(p - 1 - (c + 9)));
        cr_expect_leq(chars, LATEX_CAPTION_MAX_CHARS, "%s: a caption of %d characters: %.*s", what, chars,
                      (int)(p - c), c);
    }
    return n;
}

/* The decimals of the first number of a cell ("11.1 (11.0--11.1)" → 1, "624 (…)" → 0). */
static int decimals_of(const char *cell)
{
    const char *dot = strchr(cell, '.'), *end = strpbrk(cell, " &(");
    if (!dot || (end && dot > end))
        return 0;
    int d = 0;
    for (dot++; *dot >= '0' && *dot <= '9'; dot++)
        d++;
    return d;
}

/* Column `col` (0: the first after the name) of each row between \midrule and \bottomrule
 * prints with one number of decimals (`time`: as report.md, one below 100 µs, none from 100);
 * "--" cells are left out. */
static void check_column_decimals(const char *tex, int col, int time, const char *what)
{
    const char *t = strstr(strstr(tex, "\\midrule\n"), "\n") + 1;
    const char *end = strstr(t, "\\bottomrule");
    int want = -1;
    for (const char *row = t; row < end; row = strchr(row, '\n') + 1) {
        const char *cell = row;
        for (int k = 0; k <= col; k++)
            cell = strstr(cell, " & ") + 3;
        if (!strncmp(cell, "--", 2))
            continue;
        int d = decimals_of(cell);
        if (time)
            want = atof(cell) >= 100 ? 0 : 1;
        else if (want < 0)
            want = d;
        cr_expect_eq(d, want, "%s: column %d mixes %d and %d decimals: %.60s", what, col, want, d, cell);
    }
}

Test(latex_tables, captions_fit_two_lines_and_columns_keep_one_decimal_rule)
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
        char *tex = report_summary_tex(&f.a);
        cr_expect_eq(check_captions(tex, e->d_name), 2, "%s: two tables, two captions", e->d_name);
        cr_expect_not_null(strstr(tex, "\\textit{Note:}"), "%s: the detail is in a note", e->d_name);
        check_column_decimals(tex, 1, 1, e->d_name); /* CUDA time */
        check_column_decimals(tex, 2, 1, e->d_name); /* CPU time */
        free(tex);
        fixture_free(&f);
        fixtures++;
    }
    closedir(d);
    cr_assert_geq(fixtures, 14);
}

Test(latex_tables, compare_caption_and_ratio_column)
{
    static compare_archive a, b;
    char err[512];
    cr_assert_eq(compare_load(&a, "tests/fixtures/h200-cudnn914", err, sizeof err), 0, "%s", err);
    cr_assert_eq(compare_load(&b, "tests/fixtures/h200-cudnn919-a", err, sizeof err), 0, "%s", err);
    compare_archive *in[] = {&a, &b};
    compare_options opt = {.baseline = 0, .min_effect = COMPARE_DEFAULT_MIN_EFFECT, .formats = FIG_PNG};
    compare_data m;
    cr_assert_eq(compare_build(&m, in, 2, &opt, err, sizeof err), 0, "%s", err);
    char *tex = compare_tex(&m);
    cr_expect_eq(check_captions(tex, "compare.tex"), 1);
    cr_expect_not_null(strstr(tex, "time ratio (below 1 is faster)"), "the caption states the convention");
    check_column_decimals(tex, 1, 1, "compare.tex"); /* the run's time */
    check_column_decimals(tex, 2, 0, "compare.tex"); /* its ratio against the baseline */
    free(tex);
    compare_free(&m);
    compare_archive_free(&a);
    compare_archive_free(&b);
}

static char *latex_of(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    esc_latex_text(f, s, strlen(s));
    fclose(f);
    return buf;
}

Test(latex_tables, non_ascii_is_utf8_or_a_code_point)
{
    char *t = latex_of("Größe ñ 日 \xff µs");
    cr_expect_str_eq(t, "Größe ñ [U+65E5] ? \\textmu{}s");
    free(t);
}
