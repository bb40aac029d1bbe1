/* report/docs/sweep_doc: sweep --collect's documents as a user gets them: the findings in the
 * Unicode the other documents use (S⁰·⁹⁸, R², ≥, ×, –), and a collect that keeps the figures
 * an earlier collect drew in other formats. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "exit_codes.h"
#include "run_cli.h"
#include "slurp.h"

static char *collect_copy(char *work, size_t n)
{
    snprintf(work, n, "/tmp/attnprof-sweepdoc-XXXXXX");
    cr_assert_not_null(mkdtemp(work));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp -r tests/fixtures/sweep-h200 %s/S", work);
    cr_assert_eq(system(cmd), 0);
    char *sweep = NULL;
    cr_assert_geq(asprintf(&sweep, "%s/S", work), 0);
    return sweep;
}

Test(sweep_doc, the_findings_are_written_in_unicode, .timeout = 60)
{
    char work[64], args[1024];
    char *sweep = collect_copy(work, sizeof work);
    snprintf(args, sizeof args, "sweep --collect %s", sweep);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "%s/sweep.md", sweep);
    char *md = slurp(args);
    cr_assert_not_null(md);
    cr_assert(strstr(md, "grows as S\u2070\u00b7") && strstr(md, "R\u00b2 = ") && strstr(md, "every S \u2265 ") &&
                  strstr(md, "\u00d7 its time") && strstr(md, "S = 256\u20134096") && strstr(md, "B\u00b7S fixed at"),
              "%s", md);
    cr_assert(!strstr(md, "S^") && !strstr(md, "R^2") && !strstr(md, ">="), "ASCII stand-ins left: %s", md);
    free(md);
    remove_tree(work);
    free(sweep);
}

Test(sweep_doc, a_collect_keeps_the_figures_an_earlier_collect_drew, .timeout = 60)
{
    char work[64], args[1024], path[1024];
    char *sweep = collect_copy(work, sizeof work);
    snprintf(args, sizeof args, "sweep --collect %s --format pdf", sweep);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "sweep --collect %s --format svg", sweep);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/figures/sweep-time.pdf", sweep);
    cr_assert(path_exists(path), "the earlier collect's PDF is gone");
    snprintf(path, sizeof path, "%s/figures/sweep-time.svg", sweep);
    cr_assert(path_exists(path));
    remove_tree(work);
    free(sweep);
}
