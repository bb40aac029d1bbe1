/* Issue 37, item 2: the README starts with the newcomer's path. Its first screen (before
 * "## Contents", within the first 40 lines) holds the three commands (run, import your own trace,
 * compare), and the first screen's import and compare lines run as written (the trace and the
 * archives replaced by fixtures), and so do its run-against-an-import lines (import --shape, compare
 * --allow-l2-mismatch), which fail as the first screen says without what they add; it says that
 * `run` times attnprof's own implementations, not
 * PyTorch's SDPA, and names the series by its title; the table of contents links every "## "
 * section after it, and each of its links names a heading that exists. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "exit_codes.h"
#include "run_cli.h"
#include "slurp.h"

/* GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces as '-'. */
static void anchor_of(const char *heading, size_t len, char *out, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < n; i++) {
        unsigned char c = (unsigned char)heading[i];
        if (c == ' ')
            out[o++] = '-';
        else if (isalnum(c) || c == '-' || c == '_')
            out[o++] = (char)tolower(c);
    }
    out[o] = '\0';
}

/* The line of `text` that starts with `head` within [from, to), or NULL. */
static const char *line_starting(const char *from, const char *to, const char *head)
{
    for (const char *l = from; l && l < to; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, head, strlen(head)))
            return l;
    return NULL;
}

/* The first screen's inline command that starts with `head` (its backticks dropped, wrapped
 * lines joined), with each `from` replaced by its `to`, in `out` after "build/attnprof ". */
static int inline_command(const char *first, const char *head, const char *const subst[][2], size_t n_subst, char *out,
                          size_t n)
{
    const char *at = strstr(first, head);
    if (!at)
        return -1;
    at += strlen("`build/attnprof ");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%.*s", (int)strcspn(at, "`"), at);
    size_t o = 0;
    for (const char *c = cmd; *c && o + 1 < n;) {
        size_t k = 0;
        while (k < n_subst && strncmp(c, subst[k][0], strlen(subst[k][0])))
            k++;
        if (k < n_subst) {
            o += (size_t)snprintf(out + o, n - o, "%s", subst[k][1]);
            c += strlen(subst[k][0]);
        } else
            out[o++] = *c++;
    }
    out[o < n ? o : n - 1] = '\0';
    return 0;
}

/* The first screen's run-against-an-import commands run as written (the trace a fixture, the
 * outputs in a temporary folder), and each thing they add is needed: without --allow-l2-mismatch
 * compare exits EXIT_L2_MISMATCH, without --shape it names --shape. */
static void run_against_an_import(const char *first)
{
    char dir[] = "/tmp/attnprof-readme-import-XXXXXX";
    cr_assert(mkdtemp(dir));
    char mine[300], cmp[300], bare[300], args[1024];
    snprintf(mine, sizeof mine, "%s/mine", dir);
    snprintf(cmp, sizeof cmp, "%s/run-vs-mine", dir);
    snprintf(bare, sizeof bare, "%s/bare", dir);
    const char *const subst[][2] = {{"trace.json", "tests/fixtures/torch-h200/kineto_sdpa_flash.json.gz"},
                                    {"out/mine", mine},
                                    {"out/run-vs-mine", cmp}};
    cr_assert_eq(inline_command(first, "`build/attnprof import trace.json --shape ", subst, 3, args, sizeof args), 0,
                 "the first screen's import with --shape");
    cr_expect_eq(attnprof(args), 0, "%s: %s", args, err_text);
    cr_assert_eq(inline_command(first, "`build/attnprof compare out/example-h200 out/mine ", subst, 3, args, sizeof args),
                 0, "the first screen's compare of the example with the import");
    cr_assert_not_null(strstr(args, " --allow-l2-mismatch"), "%s", args);
    cr_expect_eq(attnprof(args), 0, "%s: %s", args, err_text);
    *strstr(args, " --allow-l2-mismatch") = '\0';
    strcat(args, " --force");
    cr_expect_eq(attnprof(args), EXIT_L2_MISMATCH, "without --allow-l2-mismatch: %s", err_text);
    cr_expect_not_null(strstr(err_text, "--allow-l2-mismatch"), "%s", err_text);
    snprintf(args, sizeof args, "import tests/fixtures/torch-h200/kineto_sdpa_flash.json.gz -o %s -q", bare);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(args, sizeof args, "compare out/example-h200 %s -o %s/cmp-bare -q --allow-l2-mismatch", bare, dir);
    cr_expect_eq(attnprof(args), EXIT_USAGE, "without --shape: %s", err_text);
    cr_expect_not_null(strstr(err_text, "--shape"), "%s", err_text);
    remove_tree(dir);
}

Test(readme, the_first_screen_holds_the_three_commands_and_they_run)
{
    char *md = slurp_required("README.md");
    const char *contents = strstr(md, "\n## Contents\n");
    cr_assert_not_null(contents, "README.md has a \"## Contents\" section");
    int lines = 0;
    for (const char *c = md; c < contents; c++)
        lines += *c == '\n';
    cr_expect_leq(lines, 40, "the first screen (before Contents) is %d lines", lines);
    cr_expect(line_starting(md, contents, "    make run "), "the first screen's run command");
    const char *imp = line_starting(md, contents, "    build/attnprof import ");
    const char *cmp = line_starting(md, contents, "    build/attnprof compare ");
    cr_assert(imp && cmp, "the first screen's import and compare commands");
    /* the first screen as one line (its sentences wrap) */
    size_t first_len = (size_t)(contents - md);
    char *first = strndup(md, first_len);
    for (char *c = first; *c; c++)
        if (*c == '\n')
            *c = ' ';
    cr_expect(strstr(first, "attnprof's own C/CUDA implementations") && strstr(first, "not PyTorch's"),
              "the first screen says what run times");
    cr_expect_not_null(strstr(first, "Profiling in PyTorch (Part 3): Attention is all you profile"),
                       "the first screen names the series by its title");
    run_against_an_import(first);
    free(first);

    /* the first screen's import and compare lines, as written, with fixtures for their inputs */
    char line[512], args[1024];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(imp, "#\n"), imp + strlen("    build/attnprof "));
    cr_assert_not_null(strstr(line, "import trace.json -o out/mine"), "%s", line);
    char tmp[] = "/tmp/attnprof-readme-XXXXXX", mine[64], ab[64];
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(mine, sizeof mine, "%s/mine", tmp);
    snprintf(ab, sizeof ab, "%s/a-vs-b", tmp);
    snprintf(args, sizeof args, "import tests/fixtures/torch-h200/kineto_sdpa_flash.json.gz -o %s -q", mine);
    cr_expect_eq(attnprof(args), 0, "%s: %s", args, err_text);
    char path[300];
    snprintf(path, sizeof path, "%s/report.html", mine);
    cr_expect(path_exists(path), "import wrote %s, as the first screen says", path);
    snprintf(line, sizeof line, "%.*s", (int)strcspn(cmp, "#\n"), cmp + strlen("    build/attnprof "));
    cr_assert_not_null(strstr(line, "compare out/a out/b -o out/a-vs-b"), "%s", line);
    snprintf(args, sizeof args, "compare tests/fixtures/h200-cudnn914 tests/fixtures/h200-cudnn919-a -o %s -q", ab);
    cr_expect_eq(attnprof(args), 0, "%s: %s", args, err_text);
    snprintf(path, sizeof path, "%s/compare.html", ab);
    cr_expect(path_exists(path), "compare wrote %s, as the first screen says", path);
    remove_tree(tmp);

    /* the table of contents: every "## " section after it linked, every link a heading */
    const char *toc_end = strstr(contents + 1, "\n## ");
    cr_assert_not_null(toc_end);
    int sections = 0;
    for (const char *h = toc_end; (h = strstr(h, "\n## ")); h += 4) {
        char a[160], link[176];
        anchor_of(h + 4, strcspn(h + 4, "\n"), a, sizeof a);
        snprintf(link, sizeof link, "(#%s)", a);
        const char *at = strstr(contents, link);
        cr_expect(at && at < toc_end, "Contents does not link the section \"%.*s\" (#%s)", (int)strcspn(h + 4, "\n"),
                  h + 4, a);
        sections++;
    }
    cr_expect_geq(sections, 10);
    for (const char *l = strstr(contents, "(#"); l && l < toc_end; l = strstr(l + 2, "(#")) {
        char target[160];
        snprintf(target, sizeof target, "%.*s", (int)strcspn(l + 2, ")"), l + 2);
        int found = 0;
        for (const char *h = md; (h = strstr(h, "\n## ")) && !found; h += 4) {
            char a[160];
            anchor_of(h + 4, strcspn(h + 4, "\n"), a, sizeof a);
            found = !strcmp(a, target);
        }
        cr_expect(found, "Contents links #%s, which no heading has", target);
    }
    free(md);
}
