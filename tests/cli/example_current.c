/* The bundled example (out/example-h200, what `make run` renders where there is
 * no GPU) is the first report anyone sees; it must hold every field a current `attnprof run`
 * writes, so that none of its header rows reads "not recorded (this archive predates ...)".
 * When this fails, re-record it on the H200 with the default batch:
 *     build/attnprof run --force -o out/example-h200   (then keep only run.json and trace.json)
 * The failure names exactly the fields that are missing. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "run_cli.h"
#include "slurp.h"

/* The top-level run.json fields a default `attnprof run` writes today (tests/fixtures/h200-gqa,
 * recorded by the current tool, holds all of them). */
static const char *const current_fields[] = {"build", "causal", "ceilings", "command_line", "counters", "date",
                                             "dtype", "gpu", "host", "iters", "measured", "measurement",
                                             "nvtx_ranges_from", "occupancy_api", "provenance",
                                             "rel_error_threshold", "seed", "shape", "tool_version", "variants",
                                             "versions", "warmup"};

/* A summary row of report.md as the README's excerpt writes it: without its second column
 * ("What we changed") and with the findings' links reduced to their text. */
static void excerpt_row(const char *row, size_t len, char *out, size_t n)
{
    size_t o = 0, i = 0;
    int cell = 0;
    while (i < len && o + 1 < n) {
        if (!strncmp(row + i, " | ", 3) && ++cell == 1) {
            const char *next = strstr(row + i + 3, " | ");
            if (!next)
                break;
            i = (size_t)(next - row);
            continue;
        }
        const char *close = row[i] == '[' ? strstr(row + i, "](#") : NULL;
        if (close && close < row + len && memchr(row + i, '\n', (size_t)(close - row - i)) == NULL) {
            size_t t = (size_t)(close - row - i - 1);
            o += (size_t)snprintf(out + o, n - o, "%.*s", (int)t, row + i + 1);
            i = (size_t)(strchr(close, ')') - row) + 1;
            continue;
        }
        out[o++] = row[i++];
    }
    out[o < n ? o : n - 1] = '\0';
}

/* The README's excerpt of the example's summary table is the table the example renders now. */
static void readme_excerpt_is_the_report(const char *md)
{
    char *readme = slurp("README.md");
    cr_assert(readme);
    const char *at = strstr(readme, "The report of the bundled example archive");
    cr_assert(at, "README introduces the example's excerpt");
    at = strstr(at, "\n| `");
    int rows = 0;
    for (; at && !strncmp(at, "\n| `", 4); at = strchr(at + 1, '\n')) {
        const char *line = at + 1;
        size_t len = strcspn(line, "\n");
        size_t name = strcspn(line + 3, "`");
        char head[80], got[2048];
        snprintf(head, sizeof head, "\n%.*s", (int)(name + 4), line);
        const char *r = strstr(md, head);
        cr_assert(r, "the report has no row %s", head + 1);
        excerpt_row(r + 1, strcspn(r + 1, "\n"), got, sizeof got);
        cr_expect(strlen(got) == len && !strncmp(got, line, len), "README's excerpt row\n%.*s\nbut the example renders\n%s",
                  (int)len, line, got);
        rows++;
    }
    cr_expect_eq(rows, 6, "README's excerpt holds a row per variant of the example");
    free(readme);
}

Test(cli_example, the_bundled_example_holds_every_current_field)
{
    json_error_t e;
    json_t *fresh = json_load_file("tests/fixtures/h200-gqa/run.json", 0, &e);
    cr_assert(fresh, "tests/fixtures/h200-gqa/run.json: %s", e.text);
    for (size_t i = 0; i < sizeof current_fields / sizeof current_fields[0]; i++)
        cr_assert(json_object_get(fresh, current_fields[i]), "the list names %s, which a current run does not write",
                  current_fields[i]);
    json_decref(fresh);
    json_t *ex = json_load_file("out/example-h200/run.json", 0, &e);
    cr_assert(ex, "out/example-h200/run.json: %s", e.text);
    char missing[1024] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof current_fields / sizeof current_fields[0]; i++)
        if (!json_object_get(ex, current_fields[i]))
            len += (size_t)snprintf(missing + len, sizeof missing - len, " %s", current_fields[i]);
    json_decref(ex);
    cr_expect_eq(len, 0, "out/example-h200/run.json is older than the reader: missing%s; re-record it on the H200 "
                 "with `build/attnprof run --force -o out/example-h200`", missing);
    /* and its report, as the reader renders it now, marks no row as predating the archive */
    char tmp[] = "/tmp/attnprof-example-current-XXXXXX", dir[64];
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/r", tmp);
    char args[256], path[256];
    snprintf(args, sizeof args, "report out/example-h200 -o %s --format png -q", dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = slurp(path);
    cr_assert(md);
    const char *old = strstr(md, "predates");
    cr_expect_null(old, "the example's report says: %.200s", old ? old - 100 : "");
    readme_excerpt_is_the_report(md);
    free(md);
    remove_tree(tmp);
}
