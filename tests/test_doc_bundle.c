/* The document pipeline (report/docs/doc_bundle.h) on its own: a bundle of plain text rows
 * written beside its inputs and as a directory of its own, with outputs that come and go,
 * a row that fails, and the report's bundle over a recorded archive. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "doc_bundle.h"
#include "exit_codes.h"
#include "fixture.h"
#include "report_render.h"
#include "slurp.h"

/* The model of the test bundle: what each row says, NULL for nothing to say, "FAIL" for a
 * writer that fails. */
typedef struct toy_model {
    const char *a, *b, *figure;
} toy_model;

static int toy_draw(const doc_bundle *b, const char *dir, figure_list *figs, char *err, size_t errlen)
{
    (void)figs;
    const toy_model *m = b->model;
    char path[512];
    snprintf(path, sizeof path, "%s/figures", dir);
    if (mkdir(path, 0755) != 0)
        return EXIT_IO;
    return archive_write_file(path, "chart.svg", m->figure, err, errlen) == 0 ? EXIT_OK : EXIT_IO;
}

static char *toy_markdown(const doc_bundle *b, const figure_list *figs, const char *inline_from_dir)
{
    (void)figs;
    const toy_model *m = b->model;
    char *s = NULL;
    if (asprintf(&s, "# toy\n\n%s%s\n", m->a ? m->a : "", inline_from_dir ? " (inlined)" : "") < 0)
        return NULL;
    return s;
}

static int toy_row(const char *text, char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (text && !strcmp(text, "FAIL")) {
        snprintf(err, errlen, "the toy row failed");
        return -1;
    }
    *out = text ? strdup(text) : NULL;
    return 0;
}
static int row_a(const doc_page *p, char **out, char *err, size_t n)
{
    return toy_row(((const toy_model *)p->bundle->model)->a, out, err, n);
}
static int row_b(const doc_page *p, char **out, char *err, size_t n)
{
    return toy_row(((const toy_model *)p->bundle->model)->b, out, err, n);
}

static const doc_output toy_outputs[] = {
    {"toy.md", doc_markdown_row, NULL},
    {"toy.html", doc_html_row, NULL},
    {"a.txt", row_a, NULL},
    {"b.txt", row_b, NULL},
};

static doc_bundle toy_bundle(toy_model *m, doc_placement where)
{
    return (doc_bundle){.kind = "toy", .noun = "toy", .title = "toy", .model = m, .draw = toy_draw,
                        .markdown = toy_markdown, .outputs = toy_outputs, .n_outputs = 4, .placement = where,
                        .quiet = 1};
}

static char *read_in(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return slurp(path);
}

static int exists_in(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path_exists(path);
}

/* Entries of dir whose names start with '.' (staging and roll-back folders). */
static int hidden_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

Test(doc_bundle, beside_inputs_the_outputs_are_replaced_as_one_set)
{
    char dir[] = "/tmp/attnprof-bundle-XXXXXX", err[256];
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(archive_write_file(dir, "input.json", "{\"kept\": true}\n", err, sizeof err), 0);
    toy_model m1 = {"first a\n", "first b\n", "<svg>1</svg>"};
    doc_bundle b = toy_bundle(&m1, DOC_BESIDE_INPUTS);
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    char *a = read_in(dir, "a.txt"), *fig = read_in(dir, "figures/chart.svg"), *html = read_in(dir, "toy.html");
    cr_assert_str_eq(a, "first a\n");
    cr_assert_str_eq(fig, "<svg>1</svg>");
    cr_assert(html && strstr(html, "first a") && strstr(html, "(inlined)"), "the HTML row reads the inlined Markdown");
    free(a), free(fig), free(html);
    cr_assert(exists_in(dir, "b.txt"));

    /* The second render has nothing for b.txt: the old one goes, the rest is replaced. */
    toy_model m2 = {"second a\n", NULL, "<svg>2</svg>"};
    b = toy_bundle(&m2, DOC_BESIDE_INPUTS);
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    a = read_in(dir, "a.txt");
    fig = read_in(dir, "figures/chart.svg");
    cr_assert_str_eq(a, "second a\n");
    cr_assert_str_eq(fig, "<svg>2</svg>");
    free(a), free(fig);
    cr_assert(!exists_in(dir, "b.txt"), "an output the new render lacks is removed");
    char *in = read_in(dir, "input.json");
    cr_assert_str_eq(in, "{\"kept\": true}\n", "the inputs stay");
    free(in);
    cr_assert_eq(hidden_entries(dir), 0, "no staging or roll-back folder left");

    /* A row that fails: every old output as it was, nothing left behind. */
    toy_model m3 = {"third a\n", "FAIL", "<svg>3</svg>"};
    b = toy_bundle(&m3, DOC_BESIDE_INPUTS);
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_IO);
    cr_assert_str_eq(err, "the toy row failed");
    a = read_in(dir, "a.txt");
    fig = read_in(dir, "figures/chart.svg");
    cr_assert_str_eq(a, "second a\n");
    cr_assert_str_eq(fig, "<svg>2</svg>");
    free(a), free(fig);
    cr_assert_eq(hidden_entries(dir), 0);
    remove_tree(dir);
}

Test(doc_bundle, a_directory_of_its_own_is_new_or_replaced_whole_under_force)
{
    char parent[] = "/tmp/attnprof-bundle-XXXXXX", dest[600], err[256];
    cr_assert_not_null(mkdtemp(parent));
    snprintf(dest, sizeof dest, "%s/out", parent);
    toy_model m1 = {"one\n", "two\n", "<svg/>"};
    doc_bundle b = toy_bundle(&m1, DOC_OWN_DIRECTORY);
    cr_assert_eq(doc_bundle_write(&b, dest, 0, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(exists_in(dest, "toy.md") && exists_in(dest, "b.txt") && exists_in(dest, "figures/chart.svg"));
    cr_assert_eq(doc_bundle_write(&b, dest, 0, err, sizeof err), EXIT_OUTPUT_EXISTS);
    cr_assert(strstr(err, "--force"), "%s", err);
    cr_assert_eq(archive_write_file(dest, "stray.txt", "x", err, sizeof err), 0);
    toy_model m2 = {"three\n", NULL, "<svg/>"};
    b = toy_bundle(&m2, DOC_OWN_DIRECTORY);
    cr_assert_eq(doc_bundle_write(&b, dest, 1, err, sizeof err), EXIT_OK, "%s", err);
    char *a = read_in(dest, "a.txt");
    cr_assert_str_eq(a, "three\n");
    free(a);
    cr_assert(!exists_in(dest, "b.txt") && !exists_in(dest, "stray.txt"), "replaced whole");
    cr_assert_eq(hidden_entries(parent), 0, "no temporary sibling left");
    remove_tree(parent);
}

/* The report's bundle over a recorded archive: its documents and figures, no temporaries. */
Test(doc_bundle, the_report_bundle_writes_every_document)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-4var");
    char dir[] = "/tmp/attnprof-report-XXXXXX", err[256];
    cr_assert_not_null(mkdtemp(dir));
    const report_render_options o = {.formats = FIG_PNG, .quiet = 1, .figure_size = FIG_SIZE_SCREEN};
    cr_assert_eq(report_render(dir, &f.t, &f.r, &o, err, sizeof err), EXIT_OK, "%s", err);
    static const char *const docs[] = {"report.md", "report.html", "summary.csv", "summary.tex", "CITATION.cff",
                                       "findings.json", "samples.csv", "kernels.csv", "figures"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        cr_expect(exists_in(dir, docs[i]), "%s missing", docs[i]);
    cr_expect(!exists_in(dir, "roles.csv"), "roles.csv is an import's");
    cr_expect(!exists_in(dir, "report.pdf"), "report.pdf only with --pdf");
    cr_expect_eq(hidden_entries(dir), 0);
    remove_tree(dir);
    fixture_free(&f);
}
