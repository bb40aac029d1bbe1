/* The document pipeline (report/docs/doc_bundle.h) on its own: a bundle of plain text rows
 * written beside its inputs and as a directory of its own, with outputs that come and go,
 * a row that fails, and the report's bundle over a recorded archive. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"
#include "doc_bundle.h"
#include "doc_record.h"
#include "exit_codes.h"
#include "fixture.h"
#include "report_render.h"
#include "run_cli.h"
#include "slurp.h"

/* The data of the test bundle: what each row says, NULL for nothing to say, "FAIL" for a
 * writer that fails. */
typedef struct toy_data {
    const char *a, *b, *figure;
    const char *figure_name; /* NULL: chart.svg */
} toy_data;

static int toy_draw(const doc_bundle *b, const char *dir, figure_list *figs, char *err, size_t errlen)
{
    (void)figs;
    const toy_data *m = b->data;
    char path[512];
    snprintf(path, sizeof path, "%s/figures", dir);
    if (mkdir(path, 0755) != 0)
        return EXIT_IO;
    return archive_write_file(path, m->figure_name ? m->figure_name : "chart.svg", m->figure, err, errlen) == 0
               ? EXIT_OK
               : EXIT_IO;
}

static char *toy_markdown(const doc_bundle *b, const figure_list *figs, const char *inline_from_dir)
{
    (void)figs;
    const toy_data *m = b->data;
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
    return toy_row(((const toy_data *)p->bundle->data)->a, out, err, n);
}
static int row_b(const doc_page *p, char **out, char *err, size_t n)
{
    return toy_row(((const toy_data *)p->bundle->data)->b, out, err, n);
}

static const doc_output toy_outputs[] = {
    {"toy.md", doc_markdown_row, NULL},
    {"toy.html", doc_html_row, NULL},
    {"a.txt", row_a, NULL},
    {"b.txt", row_b, NULL},
};

static doc_bundle toy_bundle(toy_data *m, doc_placement where)
{
    return (doc_bundle){.kind = "toy", .noun = "toy", .title = "toy", .data = m, .draw = toy_draw,
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

/* Entries of dir whose names start with '.' (staging and roll-back folders; the record of
 * outputs is not one). */
static int hidden_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, DOC_RECORD);
    if (d)
        closedir(d);
    return n;
}

Test(doc_bundle, beside_inputs_the_outputs_are_replaced_as_one_set)
{
    char dir[] = "/tmp/attnprof-bundle-XXXXXX", err[256];
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(archive_write_file(dir, "input.json", "{\"kept\": true}\n", err, sizeof err), 0);
    toy_data m1 = {"first a\n", "first b\n", "<svg>1</svg>", NULL};
    doc_bundle b = toy_bundle(&m1, DOC_BESIDE_INPUTS);
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    char *a = read_in(dir, "a.txt"), *fig = read_in(dir, "figures/chart.svg"), *html = read_in(dir, "toy.html");
    cr_assert_str_eq(a, "first a\n");
    cr_assert_str_eq(fig, "<svg>1</svg>");
    cr_assert(html && strstr(html, "first a") && strstr(html, "(inlined)"), "the HTML row reads the inlined Markdown");
    free(a), free(fig), free(html);
    cr_assert(exists_in(dir, "b.txt"));

    /* The second render has nothing for b.txt: the old one stays, the rest is replaced. */
    toy_data m2 = {"second a\n", NULL, "<svg>2</svg>", NULL};
    b = toy_bundle(&m2, DOC_BESIDE_INPUTS);
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    a = read_in(dir, "a.txt");
    fig = read_in(dir, "figures/chart.svg");
    char *kept = read_in(dir, "b.txt");
    cr_assert_str_eq(a, "second a\n");
    cr_assert_str_eq(fig, "<svg>2</svg>");
    cr_assert(kept && !strcmp(kept, "first b\n"), "an output the new render lacks stays as it was");
    free(a), free(fig), free(kept);
    /* The same under clean: the old one goes. */
    b.clean = 1;
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(!exists_in(dir, "b.txt"), "under clean, an output the new render lacks is removed");
    char *in = read_in(dir, "input.json");
    cr_assert_str_eq(in, "{\"kept\": true}\n", "the inputs stay");
    free(in);
    cr_assert_eq(hidden_entries(dir), 0, "no staging or roll-back folder left");

    /* A row that fails: every old output as it was, nothing left behind. */
    toy_data m3 = {"third a\n", "FAIL", "<svg>3</svg>", NULL};
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
    toy_data m1 = {"one\n", "two\n", "<svg/>", NULL};
    doc_bundle b = toy_bundle(&m1, DOC_OWN_DIRECTORY);
    cr_assert_eq(doc_bundle_write(&b, dest, 0, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(exists_in(dest, "toy.md") && exists_in(dest, "b.txt") && exists_in(dest, "figures/chart.svg"));
    cr_assert_eq(doc_bundle_write(&b, dest, 0, err, sizeof err), EXIT_OUTPUT_EXISTS);
    cr_assert(strstr(err, "--force"), "%s", err);
    cr_assert_eq(archive_write_file(dest, "stray.txt", "x", err, sizeof err), 0);
    toy_data m2 = {"three\n", NULL, "<svg/>", NULL};
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

/* ---- leftovers: only what the pipeline proves it made is touched ---------------------- */

static void sh_ok(const char *fmt, const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* A staging folder as the pipeline makes one (mkdir, then the marker naming its kind, PID,
 * device and inode), for the manifest tests: what a killed render of `kind` leaves. */
static void plant_staging(const char *path, const char *kind, pid_t pid)
{
    struct stat st;
    cr_assert_eq(mkdir(path, 0755), 0);
    cr_assert_eq(stat(path, &st), 0);
    char text[160], err[256];
    snprintf(text, sizeof text, "attnprof %s %d %llu %llu\n", kind, (int)pid, (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    cr_assert_eq(archive_write_file(path, ".made-by-attnprof", text, err, sizeof err), 0, "%s", err);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A received archive carries `.report.old-<dead pid>` -> ../.. and `.report.tmp-<dead pid>`
 * -> ../.. with a manifest naming the victim's figures/: the victim beside the archive
 * survives whole, the links stay, and each is named on stderr. */
Test(doc_bundle, a_link_named_like_a_leftover_is_never_followed, .timeout = 120)
{
    char work[] = "/tmp/attnprof-e01-XXXXXX", arch[600], path[800], args[1200];
    cr_assert_not_null(mkdtemp(work));
    snprintf(arch, sizeof arch, "%s/runs/a", work);
    sh_ok("mkdir -p %s/runs && cp -r tests/fixtures/h200-4var %s", work, arch);
    sh_ok("mkdir -p %s/figures && echo mine > %s/figures/paper-figure.pdf", work, work);
    struct stat st;
    snprintf(path, sizeof path, "%s/figures", work);
    cr_assert_eq(stat(path, &st), 0);
    char manifest[160];
    snprintf(manifest, sizeof manifest, "figures %llu\n", (unsigned long long)st.st_ino);
    char err[256];
    cr_assert_eq(archive_write_file(work, ".manifest", manifest, err, sizeof err), 0, "%s", err);
    pid_t dead = dead_pid();
    static const char *const kinds[] = {".report.old-%d", ".report.tmp-%d"};
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, kinds[k], (int)dead);
        snprintf(path, sizeof path, "%s/%s", arch, name);
        cr_assert_eq(symlink("../..", path), 0);
    }
    snprintf(args, sizeof args, "report %s -q --format svg", arch);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/figures/paper-figure.pdf", work);
    char *mine = slurp(path);
    cr_assert(mine && !strcmp(mine, "mine\n"), "the victim's figures/ outside the archive is gone");
    free(mine);
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, kinds[k], (int)dead);
        snprintf(path, sizeof path, "%s/%s", arch, name);
        cr_assert_eq(lstat(path, &st), 0, "%s: the link was removed", name);
        cr_assert(S_ISLNK(st.st_mode));
        cr_assert(strstr(err_text, name) && strstr(err_text, "left alone") && strstr(err_text, "symbolic link"),
                  "%s is not named on stderr: %s", name, err_text);
    }
    cr_assert(exists_in(arch, "report.md"), "the report is written all the same");
    remove_tree(work);
}

/* The same through sweep --collect's `.sweep-report.old-<dead pid>`, and a real folder of
 * that name that was unpacked with a marker copied from elsewhere. */
Test(doc_bundle, a_sweep_leftover_that_is_not_ours_is_left_alone, .timeout = 120)
{
    char work[] = "/tmp/attnprof-e01s-XXXXXX", sweep[600], path[800], args[1200];
    cr_assert_not_null(mkdtemp(work));
    snprintf(sweep, sizeof sweep, "%s/runs/S", work);
    sh_ok("mkdir -p %s/shapes && cp -r tests/fixtures/h200-4var %s/shapes/2x4x256x64", sweep, sweep);
    sh_ok("mkdir -p %s/figures && echo mine > %s/figures/sweep-time.svg", work, work);
    pid_t dead = dead_pid();
    snprintf(path, sizeof path, "%s/.sweep-report.old-%d", sweep, (int)dead);
    cr_assert_eq(symlink("../..", path), 0);
    char unpacked[800];
    snprintf(unpacked, sizeof unpacked, "%s/.sweep-report.old-%d", sweep, (int)dead + 1000000);
    plant_staging(unpacked, "sweep-report", dead + 1000000);
    /* copied: the marker names the original folder's inode, not this one's */
    snprintf(args, sizeof args, "cp -r %s %s.copy && rm -rf %s && mv %s.copy %s", unpacked, unpacked, unpacked,
             unpacked, unpacked);
    cr_assert_eq(system(args), 0);
    snprintf(path, sizeof path, "%s/figures", unpacked);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(args, sizeof args, "sweep --collect %s", sweep);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/figures/sweep-time.svg", work);
    char *mine = slurp(path);
    cr_assert(mine && !strcmp(mine, "mine\n"), "the victim's figures/ outside the sweep is gone");
    free(mine);
    cr_assert(path_exists(unpacked), "an unpacked folder with a copied marker is not ours to remove");
    cr_assert(strstr(err_text, "symbolic link") && strstr(err_text, "another folder"), "%s", err_text);
    remove_tree(work);
}

/* Our own staging folder whose manifest is now a FIFO, or a link to /dev/zero: the write
 * returns at once (nothing read), the folder is left and named, the outputs are written. */
Test(doc_bundle, a_manifest_that_is_a_fifo_or_a_device_link_never_hangs, .timeout = 30)
{
    char dir[] = "/tmp/attnprof-e04-XXXXXX", err[256], path[600], stage[600];
    cr_assert_not_null(mkdtemp(dir));
    for (int k = 0; k < 2; k++) {
        pid_t dead = dead_pid();
        snprintf(stage, sizeof stage, "%s/.toy.tmp-%d", dir, (int)dead);
        plant_staging(stage, "toy", dead);
        snprintf(path, sizeof path, "%s/.manifest", stage);
        cr_assert_eq(k == 0 ? mkfifo(path, 0644) : symlink("/dev/zero", path), 0);
        toy_data m = {"a\n", "b\n", "<svg/>", NULL};
        doc_bundle b = toy_bundle(&m, DOC_BESIDE_INPUTS);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        char errf[] = "/tmp/attnprof-e04-err-XXXXXX";
        int fd = mkstemp(errf), saved = dup(2);
        dup2(fd, 2);
        int rc = doc_bundle_write(&b, dir, 0, err, sizeof err);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        close(fd);
        double s = seconds_since(&t0);
        char *said = slurp(errf);
        unlink(errf);
        cr_assert_eq(rc, EXIT_OK, "%s", err);
        cr_assert_lt(s, 1.0, "%s manifest: the write took %.2f s", k ? "/dev/zero" : "FIFO", s);
        cr_assert(said && strstr(said, ".manifest") && strstr(said, "left alone") &&
                      strstr(said, k == 0 ? "FIFO" : "symbolic link"), "stderr: %s", said ? said : "");
        cr_assert_eq(strchr(said, '\n'), said + strlen(said) - 1, "one line: %s", said);
        free(said);
        cr_assert(path_exists(stage), "the folder whose manifest cannot be read is left");
        cr_assert(exists_in(dir, "a.txt"));
        remove_tree(stage);
    }
    remove_tree(dir);
}

/* report and sweep --collect over a FIFO manifest in a proven staging folder: both finish. */
Test(doc_bundle, report_and_collect_return_over_a_fifo_manifest, .timeout = 120)
{
    char work[] = "/tmp/attnprof-e04c-XXXXXX", arch[600], sweep[600], stage[700], path[800], args[1500];
    cr_assert_not_null(mkdtemp(work));
    snprintf(arch, sizeof arch, "%s/a", work);
    snprintf(sweep, sizeof sweep, "%s/S", work);
    sh_ok("cp -r tests/fixtures/h200-4var %s && mkdir -p %s/shapes", arch, sweep);
    sh_ok("cp -r tests/fixtures/h200-4var %s/shapes/2x4x256x64%s", sweep, "");
    const char *const where[] = {arch, sweep}, *const kind[] = {"report", "sweep-report"};
    for (int k = 0; k < 2; k++) {
        pid_t dead = dead_pid();
        snprintf(stage, sizeof stage, "%s/.%s.tmp-%d", where[k], kind[k], (int)dead);
        plant_staging(stage, kind[k], dead);
        snprintf(path, sizeof path, "%s/.manifest", stage);
        cr_assert_eq(mkfifo(path, 0644), 0);
        if (k == 0)
            snprintf(args, sizeof args, "report %s -q --format svg", arch);
        else
            snprintf(args, sizeof args, "sweep --collect %s", sweep);
        cr_assert_eq(attnprof(args), EXIT_OK, "%s: %s", args, err_text);
        cr_assert(strstr(err_text, "FIFO") && strstr(err_text, "left alone"), "%s: %s", args, err_text);
    }
    remove_tree(work);
}

/* ---- renders keep what earlier ones made ---------------------------------------------- */

/* A render with other options adds its figures beside the earlier ones; the record says which
 * render made each; --clean removes the recorded ones it did not make, never a file of
 * someone else's in figures/. */
Test(doc_bundle, a_render_keeps_the_figures_an_earlier_one_made)
{
    char dir[] = "/tmp/attnprof-keep-XXXXXX", err[256];
    cr_assert_not_null(mkdtemp(dir));
    toy_data m1 = {"a\n", "b\n", "<svg>column</svg>", "chart-column.pdf"};
    doc_bundle b = toy_bundle(&m1, DOC_BESIDE_INPUTS);
    b.made_by = "toy --figure-size column";
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(archive_write_file(dir, "figures/mine.txt", "my own note\n", err, sizeof err), 0);
    toy_data m2 = {"a2\n", NULL, "<svg>screen</svg>", "chart.svg"};
    b = toy_bundle(&m2, DOC_BESIDE_INPUTS);
    b.made_by = "toy --figure-size screen";
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    char *column = read_in(dir, "figures/chart-column.pdf"), *screen = read_in(dir, "figures/chart.svg");
    char *mine = read_in(dir, "figures/mine.txt"), *record = read_in(dir, DOC_RECORD), *bt = read_in(dir, "b.txt");
    cr_assert(column && !strcmp(column, "<svg>column</svg>"), "the earlier render's figure is gone");
    cr_assert(screen && !strcmp(screen, "<svg>screen</svg>"));
    cr_assert(mine && !strcmp(mine, "my own note\n"), "a file of someone else's in figures/ is gone");
    cr_assert(bt && !strcmp(bt, "b\n"), "the earlier render's document is gone");
    cr_assert(record && strstr(record, "figures/chart-column.pdf\ttoy --figure-size column\n") &&
                  strstr(record, "figures/chart.svg\ttoy --figure-size screen\n") &&
                  strstr(record, "b.txt\ttoy --figure-size column\n") && strstr(record, "a.txt\ttoy --figure-size screen\n"),
              "%s", record);
    cr_assert(!strstr(record, "mine.txt"), "the record lists only what a render made");
    free(column), free(screen), free(mine), free(record), free(bt);
    b.clean = 1;
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(!exists_in(dir, "figures/chart-column.pdf") && !exists_in(dir, "b.txt"),
              "--clean keeps what the latest render did not make");
    cr_assert(exists_in(dir, "figures/chart.svg") && exists_in(dir, "figures/mine.txt"));
    record = read_in(dir, DOC_RECORD);
    cr_assert(record && !strstr(record, "chart-column") && !strstr(record, "b.txt"), "%s", record);
    free(record);
    cr_assert_eq(hidden_entries(dir), 0);
    remove_tree(dir);
}

/* A record that is a FIFO is refused in one line; one that names paths outside the directory
 * names nothing (its lines are dropped). */
Test(doc_bundle, a_forged_record_is_refused_or_names_nothing_outside, .timeout = 20)
{
    char dir[] = "/tmp/attnprof-record-XXXXXX", err[256], path[600];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/%s", dir, DOC_RECORD);
    cr_assert_eq(mkfifo(path, 0644), 0);
    toy_data m = {"a\n", "b\n", "<svg/>", NULL};
    doc_bundle b = toy_bundle(&m, DOC_BESIDE_INPUTS);
    b.made_by = "toy";
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "FIFO"), "%s", err);
    unlink(path);
    char text[] = "# forged\n../../victim\tx\n/etc/passwd\tx\nfigures/../../v\tx\nfigures/ok.svg\ty\nnotab\n";
    doc_record r = {0};
    doc_record_parse(&r, text);
    cr_assert_eq(r.n, 1);
    cr_assert_str_eq(r.e[0].name, "figures/ok.svg");
    doc_record_free(&r);
    remove_tree(dir);
}

/* The README's recipe: column PDFs, then a plain re-render; the PDFs the LaTeX example
 * includes are still there; report -o OUT renders elsewhere and leaves the archive alone. */
Test(doc_bundle, a_plain_rerender_keeps_the_column_pdfs_and_o_renders_elsewhere, .timeout = 120)
{
    char work[] = "/tmp/attnprof-recipe-XXXXXX", arch[600], out[600], args[1400];
    cr_assert_not_null(mkdtemp(work));
    snprintf(arch, sizeof arch, "%s/a", work);
    snprintf(out, sizeof out, "%s/elsewhere", work);
    sh_ok("cp -r tests/fixtures/h200-4var %s%s", arch, "");
    snprintf(args, sizeof args, "report %s -q --format pdf --figure-size column", arch);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "report %s -q", arch);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_assert(exists_in(arch, "figures/timeline-compact-column.pdf") && exists_in(arch, "figures/occupancy-table-column.pdf"),
              "a plain re-render removed the column PDFs");
    cr_assert(exists_in(arch, "figures/occupancy.svg"), "the plain render's SVGs");
    snprintf(args, sizeof args, "report %s -q --clean", arch);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_assert(!exists_in(arch, "figures/timeline-compact-column.pdf"), "--clean leaves the column PDFs");
    char before[128], after[128];
    snprintf(args, sizeof args, "cd %s && find . -printf '%%p %%s %%T@\\n' | LC_ALL=C sort | sha256sum > %s/ls", arch, work);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "report %s -o %s -q --format pdf", arch, out);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_assert(exists_in(out, "report.md") && exists_in(out, "figures/occupancy.pdf"));
    cr_assert_eq(attnprof(args), EXIT_OUTPUT_EXISTS, "%s", err_text);
    snprintf(args, sizeof args, "report %s -o %s -q --force", arch, out);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_assert(!exists_in(out, "figures/occupancy.pdf"), "-o OUT --force is replaced whole");
    snprintf(args, sizeof args, "cd %s && find . -printf '%%p %%s %%T@\\n' | LC_ALL=C sort | sha256sum > %s/ls2", arch, work);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "%s/ls", work);
    read_into(args, before, sizeof before);
    snprintf(args, sizeof args, "%s/ls2", work);
    read_into(args, after, sizeof after);
    cr_assert_str_eq(before, after, "report -o changed the archive");
    snprintf(args, sizeof args, "report %s -o %s/figures -q", arch, arch);
    cr_assert_eq(attnprof(args), EXIT_USAGE, "an -o inside the archive: %s", err_text);
    remove_tree(work);
}

/* A kill between mkdir and the marker's rename leaves a folder holding only the marker's own
 * temporary: the next write removes it (it holds nothing of anyone's), for a roll-back and a
 * staging folder alike. A folder holding anything more is left alone. */
Test(doc_bundle, a_folder_killed_before_its_marker_landed_is_removed)
{
    char dir[] = "/tmp/attnprof-marker-XXXXXX", err[256], path[600], tmp[700];
    cr_assert_not_null(mkdtemp(dir));
    pid_t pid = dead_pid();
    const char *kinds[] = {"old", "tmp"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/.toy.%s-%d", dir, kinds[i], (int)pid);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(tmp, sizeof tmp, "%s/.made-by-attnprof.tmp-%d", path, (int)pid);
        FILE *f = fopen(tmp, "w");
        cr_assert_not_null(f);
        fputs("attnprof toy", f); /* cut off mid-write */
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/.toy.old-%d", dir, (int)pid + 1);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(tmp, sizeof tmp, "%s/keep.txt", path);
    fclose(fopen(tmp, "w"));

    toy_data m = {"a\n", "b\n", "<svg>1</svg>", NULL};
    doc_bundle b = toy_bundle(&m, DOC_BESIDE_INPUTS);
    cr_assert_eq(doc_bundle_write(&b, dir, 0, err, sizeof err), EXIT_OK, "%s", err);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/.toy.%s-%d", dir, kinds[i], (int)pid);
        cr_expect(!path_exists(path), "%s was left behind", path);
    }
    cr_expect(path_exists(tmp), "a folder holding more than the marker's temporary was touched");
    remove_tree(dir);
}
