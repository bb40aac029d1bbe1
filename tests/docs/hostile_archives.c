/* Archives from anyone: each hostile archive under tests/fixtures/hostile/ (made by make.py
 * there) is rendered by the binary, as a user would, and the result checked: a one-line
 * error naming the field (exit 6), or a correct report with every archive string escaped
 * for its target. The escapers and range checks on their own are tests/base/escape.c and
 * tests/archive/bounds.c. No GPU needed. */
#include <criterion/criterion.h>
#include "slurp.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"
#include "exit_codes.h"
#include "figures.h"
#include "fig.h"

#define HOSTILE "tests/fixtures/hostile/"

static char err_text[4096];
static char out_text[1 << 16];

/* Runs `attnprof ARGS` (a shell fragment); stdout lands in out_text, stderr in err_text. */
static int attnprof(const char *args)
{
    const char *bin = getenv("ATTNPROF_BIN") ? getenv("ATTNPROF_BIN") : "build/attnprof";
    char errf[] = "/tmp/attnprof-stderr-XXXXXX", outf[] = "/tmp/attnprof-stdout-XXXXXX";
    close(mkstemp(errf));
    close(mkstemp(outf));
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "timeout 60 %s %s >%s 2>%s", bin, args, outf, errf), 0);
    int st = system(cmd);
    free(cmd);
    char *e = slurp_len(errf, NULL), *o = slurp_len(outf, NULL);
    snprintf(err_text, sizeof err_text, "%s", e ? e : "");
    snprintf(out_text, sizeof out_text, "%s", o ? o : "");
    free(e);
    free(o);
    unlink(errf);
    unlink(outf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void assert_one_line(void)
{
    size_t len = strlen(err_text);
    cr_assert_gt(len, 0, "an error message");
    cr_assert_eq(strchr(err_text, '\n'), err_text + len - 1, "one line: %s", err_text);
    cr_assert_eq(strncmp(err_text, "attnprof: ", 10), 0, "%s", err_text);
}

/* A fresh copy of `src` in a new temporary directory; returns the copy's path (malloc'd). */
static char *copy_archive(const char *src)
{
    char tmpl[] = "/tmp/attnprof-hostile-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    char *dst = NULL, *cmd = NULL;
    cr_assert_geq(asprintf(&dst, "%s/a", tmpl), 0);
    cr_assert_geq(asprintf(&cmd, "cp -r '%s' '%s'", src, dst), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    return dst;
}

static void remove_copy(char *dst)
{
    char *parent = strdup(dst);
    *strrchr(parent, '/') = '\0';
    remove_tree(parent);
    free(parent);
    free(dst);
}

static char *file_in(const char *dir, const char *name)
{
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
    char *text = slurp_len(p, NULL);
    cr_assert_not_null(text, "%s", p);
    free(p);
    return text;
}

static int render(const char *dir, const char *opts)
{
    char *args = NULL;
    cr_assert_geq(asprintf(&args, "report '%s' %s", dir, opts), 0);
    int rc = attnprof(args);
    free(args);
    return rc;
}

/* Cell separators of a GFM table row: '|' not escaped by a backslash. */
static int pipes(const char *line, const char *end)
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

/* ---- D2: escaping per target ----------------------------------------------- */

Test(hostile, d2_markdown_and_html)
{
    char *dir = copy_archive(HOSTILE "d2-injection");
    cr_assert_eq(render(dir, "-q"), 0, "%s", err_text);
    char *md = file_in(dir, "report.md"), *html = file_in(dir, "report.html");
    /* Every row of a table has as many cells as its header. */
    int header = -1, rows = 0;
    for (char *line = md; *line;) {
        char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        if (*line == '|') {
            int n = pipes(line, end);
            if (header < 0)
                header = n;
            cr_assert_eq(n, header, "row with %d separators, header %d: %.*s", n, header, (int)(end - line), line);
            rows++;
        } else {
            header = -1;
        }
        cr_assert(strncmp(line, "# Fake", 6) != 0, "an archive string became a heading");
        line = *end ? end + 1 : end;
    }
    cr_assert_gt(rows, 20);
    /* Self-contained HTML: no remote resource, no heading or link from the archive. */
    for (const char *p = strstr(html, "src=\""); p; p = strstr(p + 1, "src=\""))
        cr_assert_eq(strncmp(p + 5, "data:", 5), 0, "remote resource: %.60s", p);
    cr_assert_null(strstr(html, "<h1>Fake"));
    cr_assert_null(strstr(html, "href=\"javascript"));
    cr_assert_null(strstr(html, "href=\"http://evil"));
    cr_assert_null(strstr(html, "<img src=http"));
    cr_assert_not_null(strstr(html, "![p](http://evil.example/p.png)"), "shown as text");
    free(md);
    free(html);
    remove_copy(dir);
}

/* RFC 4180: fields of one record (quoted fields may hold commas, quotes, newlines). */
static int csv_record(const char **p, char fields[][256], int max)
{
    int n = 0;
    const char *s = *p;
    for (;;) {
        char *out = n < max ? fields[n] : NULL;
        size_t j = 0;
        if (*s == '"') {
            for (s++; *s; s++) {
                if (*s == '"' && s[1] == '"')
                    s++;
                else if (*s == '"') {
                    s++;
                    break;
                }
                if (out && j < 255)
                    out[j++] = *s;
            }
        } else {
            for (; *s && *s != ',' && *s != '\n'; s++)
                if (out && j < 255)
                    out[j++] = *s;
        }
        if (out)
            out[j] = '\0';
        n++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\n')
            s++;
        break;
    }
    *p = s;
    return n;
}

Test(hostile, d2_csv)
{
    char *dir = copy_archive(HOSTILE "d2-injection");
    cr_assert_eq(render(dir, "-q"), 0, "%s", err_text);
    char *csv = file_in(dir, "summary.csv");
    static char f[32][256];
    const char *p = csv;
    int header = csv_record(&p, f, 32), records = 0, saw_formula = 0;
    cr_assert_eq(header, 20);
    while (*p) {
        cr_assert_eq(csv_record(&p, f, 32), header, "record %d", records);
        cr_assert(!strchr("=+-@", f[0][0]), "a formula: %s", f[0]);
        saw_formula |= !strcmp(f[0], "'=1+1,a");
        records++;
    }
    cr_assert_eq(records, 4);
    cr_assert(saw_formula, "the name =1+1,a is kept, neutralised");
    free(csv);
    remove_copy(dir);
}

Test(hostile, d2_terminal)
{
    char *dir = copy_archive(HOSTILE "d2-injection");
    cr_assert_eq(render(dir, ""), 0, "%s", err_text);
    cr_assert_null(strchr(out_text, '\x1b'), "ESC reached the terminal");
    cr_assert_not_null(strstr(out_text, "m[31mredx"), "%s", out_text);
    remove_copy(dir);
    /* A newline in the path stays out of the one-line error. */
    cr_assert_eq(attnprof("report \"$(printf '/tmp/no\\nsuch\\033[2J')\""), EXIT_BAD_ARCHIVE, "%s", err_text);
    assert_one_line();
    cr_assert_null(strchr(err_text, '\x1b'));
}

/* ---- D3: extreme numbers ----------------------------------------------------- */

Test(hostile, d3_out_of_range_names_field_and_event)
{
    static const struct {
        const char *dir, *expect;
    } cases[] = {
        {"d3-base-time-max", "trace.json: baseTimeNanoseconds: out of range"},
        {"d3-ts-1e300", "trace.json: event 908: ts: out of range"},
        {"d3-dur-1e300", "trace.json: event 908: dur: out of range"},
        {"d3-block-2e31", "trace.json: event 908: args.grid: out of range"},
        {"d3-negative-smem", "trace.json: event 908: args.shared memory: out of range"},
        {"d3-device-warp", "trace.json: deviceProperties[0].warpSize: out of range"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[256];
        snprintf(src, sizeof src, HOSTILE "%s", cases[i].dir);
        char *dir = copy_archive(src);
        cr_assert_eq(render(dir, "-q"), EXIT_BAD_ARCHIVE, "%s: %s", cases[i].dir, err_text);
        assert_one_line();
        cr_assert_not_null(strstr(err_text, cases[i].expect), "%s: %s", cases[i].dir, err_text);
        remove_copy(dir);
    }
}

Test(hostile, d3_zero_length_ranges_render)
{
    char *dir = copy_archive(HOSTILE "d3-zero-ranges");
    cr_assert_eq(render(dir, "-q --format png,svg,pdf"), 0, "%s", err_text);
    remove_copy(dir);
}

/* ---- D4: UTF-8 cut between characters ------------------------------------------ */

Test(hostile, d4_long_non_ascii_names_render)
{
    char *dir = copy_archive(HOSTILE "d4-utf8-long");
    cr_assert_eq(render(dir, "-q --format png,svg,pdf"), 0, "%s", err_text);
    remove_copy(dir);
}

/* ---- D1: long archive paths ---------------------------------------------------- */

Test(hostile, d1_long_paths_stay_inside_dir)
{
    static const int lengths[] = {470, 530, 1500};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        char *dir = copy_archive("tests/fixtures/h200-4var");
        char *parent = strdup(dir);
        *strrchr(parent, '/') = '\0';
        /* parent/ddd.../ddd... until the path is `lengths[k]` bytes long */
        char *deep = strdup(parent);
        while (strlen(deep) + 101 < (size_t)lengths[k]) {
            char *next = NULL;
            cr_assert_geq(asprintf(&next, "%s/%0100d", deep, 0), 0);
            mkdir(next, 0755);
            free(deep);
            deep = next;
        }
        char *target = NULL;
        cr_assert_geq(asprintf(&target, "%s/%.*s", deep, (int)(lengths[k] - strlen(deep) - 1),
                               "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
                      0);
        cr_assert_eq(strlen(target), (size_t)lengths[k]);
        char *cmd = NULL;
        cr_assert_geq(asprintf(&cmd, "mv '%s' '%s'", dir, target), 0);
        cr_assert_eq(system(cmd), 0);
        free(cmd);
        cr_assert_eq(render(target, "-q"), 0, "%d: %s", lengths[k], err_text);
        /* Nothing beside the archive: only it in its parent. */
        cr_assert_geq(asprintf(&cmd, "test $(ls -A '%s' | wc -l) = 1", deep), 0);
        cr_assert_eq(system(cmd), 0, "a file was written beside DIR (%d)", lengths[k]);
        free(cmd);
        cr_assert_geq(asprintf(&cmd, "test $(ls '%s/figures' | wc -l) = 14", target), 0);
        cr_assert_eq(system(cmd), 0, "14 figure files (%d)", lengths[k]);
        free(cmd);
        char *html = file_in(target, "report.html");
        int imgs = 0;
        for (const char *p = strstr(html, "<img src=\"data:"); p; p = strstr(p + 1, "<img src=\"data:"))
            imgs++;
        cr_assert_eq(imgs, 7, "every figure in the page (%d)", lengths[k]);
        free(html);
        free(deep);
        free(target);
        remove_tree(parent);
        free(parent);
        free(dir);
    }
}

/* ---- D6: all or nothing -------------------------------------------------------- */

Test(hostile, d6_outputs_replaced_all_or_nothing)
{
    char *dir = copy_archive("tests/fixtures/h200-4var");
    cr_assert_eq(render(dir, "-q"), 0, "%s", err_text);
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd,
                           "cd '%s' && rm report.html && mkdir report.html && "
                           "find . -type f | LC_ALL=C sort | xargs sha256sum > ../before && ls -a > ../ls-before",
                           dir),
                  0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    cr_assert_eq(render(dir, "-q --format png"), EXIT_IO, "%s", err_text);
    assert_one_line();
    cr_assert_not_null(strstr(err_text, "report.html"), "%s", err_text);
    cr_assert_geq(asprintf(&cmd,
                           "cd '%s' && find . -type f | LC_ALL=C sort | xargs sha256sum | cmp -s - ../before && "
                           "ls -a | cmp -s - ../ls-before",
                           dir),
                  0);
    cr_assert_eq(system(cmd), 0, "old report, figures and file list untouched");
    free(cmd);
    remove_copy(dir);
}

Test(hostile, d6_stale_temporaries_of_dead_processes_removed)
{
    char *dir = copy_archive("tests/fixtures/h200-4var");
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char *stale = NULL, *live = NULL;
    cr_assert_geq(asprintf(&stale, "%s/.report.tmp-%d", dir, (int)dead), 0);
    cr_assert_geq(asprintf(&live, "%s/.report.tmp-%d", dir, (int)getpid()), 0);
    cr_assert_eq(mkdir(stale, 0755), 0);
    cr_assert_eq(mkdir(live, 0755), 0);
    cr_assert_eq(render(dir, "-q --format svg"), 0, "%s", err_text);
    cr_assert(!path_exists(stale), "a dead process's temporary is removed");
    cr_assert(path_exists(live), "a live process's temporary is left alone");
    free(stale);
    free(live);
    remove_copy(dir);
}

/* ---- D7, D8 --------------------------------------------------------------------- */

Test(hostile, d7_figure_files_unique_per_variant)
{
    char *dir = copy_archive(HOSTILE "d7-collide");
    cr_assert_eq(render(dir, "-q --format png"), 0, "%s", err_text);
    char *md = file_in(dir, "report.md");
    cr_assert_not_null(strstr(md, "](figures/timeline-a_b.png)"));
    cr_assert_not_null(strstr(md, "](figures/timeline-a_b-2.png)"));
    size_t n1, n2;
    char *p1 = NULL, *p2 = NULL;
    cr_assert_geq(asprintf(&p1, "%s/figures/timeline-a_b.png", dir), 0);
    cr_assert_geq(asprintf(&p2, "%s/figures/timeline-a_b-2.png", dir), 0);
    char *a = slurp_len(p1, &n1), *b = slurp_len(p2, &n2);
    cr_assert(a && b);
    cr_assert(n1 != n2 || memcmp(a, b, n1), "two different timelines");
    free(a), free(b), free(p1), free(p2), free(md);
    remove_copy(dir);
}

Test(hostile, d8_pdf_only_report_links_the_pdfs)
{
    char *dir = copy_archive("tests/fixtures/h200-4var");
    cr_assert_eq(render(dir, "-q --format pdf"), 0, "%s", err_text);
    char *md = file_in(dir, "report.md");
    static const char *figs[] = {"timeline-overview", "time-per-forward", "occupancy", "timeline-naive",
                                 "timeline-naive_inplace", "timeline-math", "timeline-cudnn"};
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        char link[128];
        snprintf(link, sizeof link, "[PDF](figures/%s.pdf)", figs[i]);
        cr_assert_not_null(strstr(md, link), "%s", link);
    }
    free(md);
    remove_copy(dir);
}

/* ---- minor items ------------------------------------------------------------------ */

Test(hostile, run_json_types_and_limits)
{
    static const struct {
        const char *dir, *expect;
    } cases[] = {
        {"minor-17-variants", "variants: 17 variants, at most 16"},
        {"minor-wrong-type", "variants[1].rel_error: expected a number"},
        {"minor-wrong-status", "variants[2].status: expected a string"},
        {"minor-negative-seq", "shape.seq: expected a whole number"},
        {"minor-long-name", "variants[0].name: expected at most 31 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[256];
        snprintf(src, sizeof src, HOSTILE "%s", cases[i].dir);
        char *dir = copy_archive(src);
        cr_assert_eq(render(dir, "-q"), EXIT_BAD_ARCHIVE, "%s: %s", cases[i].dir, err_text);
        assert_one_line();
        cr_assert_not_null(strstr(err_text, cases[i].expect), "%s: %s", cases[i].dir, err_text);
        remove_copy(dir);
    }
}

Test(hostile, only_regular_files_are_read)
{
    char *dir = copy_archive("tests/fixtures/h200-4var");
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/trace.json", dir), 0);
    unlink(p);
    cr_assert_eq(mkfifo(p, 0644), 0);
    cr_assert_eq(render(dir, "-q"), EXIT_BAD_ARCHIVE, "%s", err_text); /* a hang is killed by timeout: -1 */
    assert_one_line();
    cr_assert_not_null(strstr(err_text, "not a regular file"), "%s", err_text);
    free(p);
    remove_copy(dir);
}

Test(hostile, strict_command_line)
{
    char fmt[700] = "report tests/fixtures/h200-4var --format ";
    for (int i = 0; i < 40; i++)
        strcat(fmt, "png,svg,");
    strcat(fmt, "bogus");
    const char *bad[] = {"run --seq ' 5'", "run --seq +5", "run --seed ' -1'", "run --warmup +0",
                         "run --iters 5x", "report ''", "report tests/fixtures/h200-4var --seq 5",
                         "report tests/fixtures/h200-4var -o tests/fixtures/h200-4var/figures",
                         "report tests/fixtures/h200-4var --force", "report tests/fixtures/h200-4var -o /tmp/x --clean",
                         fmt};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(attnprof(bad[i]), EXIT_USAGE, "`attnprof %.80s` → %s", bad[i], err_text);
        assert_one_line();
    }
    attnprof(fmt);
    cr_assert_not_null(strstr(err_text, "'bogus'"), "%s", err_text);
    /* -o longer than any path buffer: refused, not cut. */
    char *longo = NULL;
    cr_assert_geq(asprintf(&longo, "run -o /tmp/%04000d", 0), 0);
    cr_assert_eq(attnprof(longo), EXIT_USAGE, "%s", err_text);
    free(longo);
}

Test(hostile, disk_full_says_so)
{
    static const int kinds[] = {FIG_PNG, FIG_SVG, FIG_PDF};
    for (size_t i = 0; i < 3; i++) {
        fig_canvas c;
        char err[256] = "";
        cr_assert_eq(fig_canvas_open(&c, kinds[i], "/dev/full", 100, 50, "t", NULL, err, sizeof err), 0, "%s", err);
        cr_assert_neq(fig_canvas_close(&c, err, sizeof err), 0);
        cr_assert_not_null(strstr(err, "No space left on device"), "%s", err);
    }
}

/* D4: text cairo refuses (not UTF-8) is the archive's fault: EXIT_BAD_ARCHIVE (exit 6),
 * not the I/O exit 7, from the canvas that knows it through to `report`. */
Test(hostile, cairo_text_error_is_bad_input)
{
    static const int kinds[] = {FIG_PNG, FIG_SVG, FIG_PDF};
    for (size_t i = 0; i < 3; i++) {
        fig_canvas c;
        char err[256] = "";
        cr_assert_eq(fig_canvas_open(&c, kinds[i], "/tmp/attnprof-never-written.fig", 100, 50, "t", NULL, err,
                                     sizeof err),
                     0, "%s", err);
        fig_text(c.cr, 10, 10, "ab\xe2\x86", ALIGN_LEFT); /* half of '→' */
        cr_assert_eq(fig_canvas_close(&c, err, sizeof err), EXIT_BAD_ARCHIVE, "%s", err);
        cr_assert(!path_exists("/tmp/attnprof-never-written.fig"));
    }
}
