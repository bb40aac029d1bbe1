/* Issue 37, item 2: the README starts with the newcomer's path. Its first screen (before
 * "## Contents", within the first 40 lines) holds the three commands (run, import your own trace,
 * compare), and the first screen's import and compare lines run as written (the trace and the
 * archives replaced by fixtures); it says that `run` times attnprof's own implementations, not
 * PyTorch's SDPA, and names the series by its title; the table of contents links every "## "
 * section after it, and each of its links names a heading that exists. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
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
    free(first);

    /* the first screen's import and compare lines, as written, with fixtures for their inputs */
    char line[512], args[1024];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(imp, "#\n"), imp + strlen("    build/attnprof "));
    cr_assert_not_null(strstr(line, "import trace.json -o out/mine"), "%s", line);
    const char *mine = "/tmp/attnprof-readme-mine", *ab = "/tmp/attnprof-readme-a-vs-b";
    remove_tree(mine);
    remove_tree(ab);
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
    remove_tree(mine);
    remove_tree(ab);

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
