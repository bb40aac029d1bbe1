/* Every archive string reaches a document or the terminal through its target's escaper:
 * report, compare and sweep on hostile archives, each writer's output checked against what
 * its target (terminal, Markdown, HTML, LaTeX, CSV) acts on. The archives are synthetic,
 * derived from the hostile fixtures. No GPU needed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"
#include "counters.h"
#include "escape.h"
#include "exit_codes.h"
#include "fixture.h"
#include "input.h"
#include "synthetic_trace.h"

/* ==== 2. escaping by construction ============================================ */

/* Terminal: nothing a terminal acts on (C0 but newline, DEL, C1 as UTF-8 or as a
 * byte, a bidi override). */
static void check_terminal(const char *what, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        cr_assert(*p >= 0x20 || *p == '\n', "%s: control 0x%02x at %zu", what, *p, (size_t)(p - (const unsigned char *)s));
        cr_assert(*p != 0x7f, "%s: DEL", what);
        cr_assert(!(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f), "%s: a C1 control", what);
        cr_assert(!(p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae), "%s: a bidi override", what);
    }
}

/* Cell separators of a GFM table row: '|' not escaped by a backslash and not inside
 * a code span (GFM splits cells before code spans, so an escaped one is all it takes). */
static int cells(const char *line, const char *end)
{
    int n = 0;
    for (const char *p = line; p < end; p++) {
        if (*p == '\\' && p + 1 < end) {
            p++;
            continue;
        }
        n += *p == '|';
    }
    return n;
}

/* Markdown: no heading, list or quote from an archive string; every table row as
 * many cells as its header; no image, link or raw HTML tag from the names. */
static void check_markdown(const char *what, const char *md)
{
    int header = -1;
    for (const char *line = md; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        if (*line == '|') {
            int n = cells(line, end);
            if (header < 0)
                header = n;
            cr_assert_eq(n, header, "%s: a row of %d cells under a header of %d: %.*s", what, n, header,
                          (int)(end - line), line);
        } else {
            header = -1;
        }
        cr_assert(strncmp(line, "# H", 3) && strncmp(line, "- # H", 5) && strncmp(line, "> ", 2),
                  "%s: an archive string started a block: %.*s", what, (int)(end - line), line);
        line = *end ? end + 1 : end;
    }
    cr_assert_null(strstr(md, "![](/x)"), "%s: an image from the dtype", what);
    cr_assert_null(strstr(md, "\x1b"), "%s: ESC", what);
}

static void check_html(const char *what, const char *html)
{
    for (const char *p = strstr(html, "src=\""); p; p = strstr(p + 1, "src=\""))
        cr_assert_eq(strncmp(p + 5, "data:", 5), 0, "%s: loads %.60s", what, p);
    static const char *const never[] = {"<b>", "<i>", "<h1>H", "<h2>H", "<h3>H", "<img src=\"/x\"",
                                        "\x1b"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        cr_assert_null(strstr(html, never[i]), "%s: %s from an archive string", what, never[i]);
}

static void check_latex(const char *what, const char *tex)
{
    /* the names' LaTeX specials, unescaped, would be commands, parameters, comments */
    static const char *const never[] = {"&%$_~^", "{}%$#", "\x1b", "\xc2\x9b", "]0;t\x07"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        cr_assert_null(strstr(tex, never[i]), "%s: raw %s", what, never[i]);
    cr_assert_not_null(strstr(tex, "\\&\\%\\$\\_"), "%s: the name, escaped", what);
}

/* CSV: every record has the header's field count, no field is a formula, no
 * terminal control survives. */
static void check_csv(const char *what, const char *csv)
{
    check_terminal(what, csv[0] ? csv : "");
    int header = -1, records = 0;
    const char *p = csv;
    while (*p) {
        int n = 1, quoted = 0;
        const char *field = p;
        cr_assert(!strchr("=+-@", *field), "%s: a formula in record %d", what, records);
        for (; *p && (quoted || *p != '\n'); p++) {
            if (*p == '"')
                quoted = !quoted;
            else if (*p == ',' && !quoted) {
                n++;
                cr_assert(!strchr("=+-@", p[1]) || p[1] == '-' /* a negative number */, "%s: a formula", what);
            }
        }
        if (*p == '\n')
            p++;
        if (header < 0)
            header = n;
        cr_assert_eq(n, header, "%s: record %d has %d fields, the header %d", what, records, n, header);
        records++;
    }
    cr_assert_gt(records, 1, "%s", what);
}

static char *hostile_copy(const char *name)
{
    char *dir = temp_dir(), *dst = path_in(dir, name), *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "cp -r tests/fixtures/hostile/%s '%s'", name, dst), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    free(dir);
    return dst;
}

static void remove_parent(char *dst)
{
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "rm -rf \"$(dirname '%s')\"", dst), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    free(dst);
}

static void check_documents(const char *dir, const char *md, const char *html, const char *csv, const char *tex)
{
    char *t = file_of(dir, md);
    check_markdown(md, t);
    free(t);
    t = file_of(dir, html);
    check_html(html, t);
    free(t);
    t = file_of(dir, csv);
    check_csv(csv, t);
    free(t);
    t = file_of(dir, tex);
    check_latex(tex, t);
    free(t);
    /* and it compiles, where pdflatex is installed (CI has it: tests/paper/latex.sh) */
    if (system("command -v pdflatex >/dev/null 2>&1") == 0) {
        char *cmd = NULL;
        cr_assert_geq(asprintf(&cmd,
                               "cd '%s' && printf '%%s\\n' '\\documentclass{article}' '\\usepackage[T1]{fontenc}' "
                               "'\\usepackage{booktabs}' '\\begin{document}' '\\input{%s}' '\\end{document}' "
                               "> doc-%s && pdflatex -interaction=nonstopmode -halt-on-error doc-%s >/dev/null 2>&1",
                               dir, tex, tex, tex),
                      0);
        cr_assert_eq(system(cmd), 0, "%s/%s does not compile", dir, tex);
        free(cmd);
    }
}

/* report: every writer (Markdown, HTML, CSV, LaTeX, the terminal) on an archive whose
 * every name is hostile (tests/fixtures/hostile/make.py, w-escape-a). */
Test(escape_targets, report_every_writer)
{
    char *a = hostile_copy("w-escape-a"), *args = NULL, *out = NULL;
    cr_assert_geq(asprintf(&args, "report '%s' --no-pdf", a), 0);
    cr_assert_eq(run_cli(args, &out), 0, "%s", out);
    check_terminal("report's terminal", out);
    check_documents(a, "report.md", "report.html", "summary.csv", "summary.tex");
    free(out), free(args);
    remove_parent(a);
}

/* compare: variant, GPU and driver names went raw to the terminal; run.json's dtype
 * raw into compare.md (an image made compare exit 7); a '|' in a kernel name added
 * cells to the kernel table. */
Test(escape_targets, compare_every_writer)
{
    char *a = hostile_copy("w-escape-a"), *b = hostile_copy("w-escape-b"), *args = NULL, *out = NULL;
    char *c = path_in(a, "../cmp");
    cr_assert_geq(asprintf(&args, "compare '%s' '%s' -o '%s'", a, b, c), 0);
    cr_assert_eq(run_cli(args, &out), 0, "%s", out);
    check_terminal("compare's terminal", out);
    cr_assert_not_null(strstr(out, "Driver differs (550.1"), "%s", out);
    check_documents(c, "compare.md", "compare.html", "compare.csv", "compare.tex");
    char *md = file_of(c, "compare.md");
    cr_assert_not_null(strstr(md, "``k\\|x`{}%$#_&~^\\<int>``"), "the kernel, one cell");
    free(md), free(out), free(args), free(c);
    remove_parent(a);
    remove_parent(b);
}

/* sweep: a variant named "# …" became a heading in sweep.md/html. */
Test(escape_targets, sweep_every_writer)
{
    char *dir = temp_dir(), *s = path_in(dir, "sweep"), *cmd = NULL, *out = NULL;
    cr_assert_geq(asprintf(&cmd, "python3 tests/fixtures/hostile/make.py --sweep '%s'", s), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    cr_assert_geq(asprintf(&cmd, "sweep --collect '%s'", s), 0);
    cr_assert_eq(run_cli(cmd, &out), 0, "%s", out);
    check_terminal("sweep's terminal", out);
    check_documents(s, "sweep.md", "sweep.html", "sweep.csv", "sweep.tex");
    free(out), free(cmd), free(s);
    remove_parent(path_in(dir, "x"));
    free(dir);
}

/* The escapers themselves, on the strings above. */
Test(escape_targets, escapers)
{
    char buf[256];
    esc_terminal(buf, sizeof buf, "a\x1b[2Jb\xc2\x9b" "31mc\xe2\x80\xae" "d\x9b" "e\n");
    cr_assert_str_eq(buf, "a[2Jb31mcd?e");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    esc_md_text(f, "# H");
    fputc('\n', f);
    esc_md_text(f, "- x");
    fputc('\n', f);
    esc_md_text(f, "1. x");
    fputc('\n', f);
    esc_md_text(f, "13.0");
    fputc('\n', f);
    esc_csv_field(f, "a\x1b[2Jb", 0);
    fclose(f);
    cr_assert_str_eq(text, "\\# H\n\\- x\n1\\. x\n13.0\na[2Jb");
    free(text);
    esc_md_code_cell_buf(buf, sizeof buf, "k|x");
    cr_assert_str_eq(buf, "`k\\|x`");
}
