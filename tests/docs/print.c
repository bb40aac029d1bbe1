/* report/docs/print: report.pdf through headless Chromium, handed a percent-encoded file://
 * URL, so that an archive whose path holds '#', '%' or a space prints its own page. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "exit_codes.h"
#include "print.h"
#include "run_cli.h"
#include "slurp.h"

Test(print, the_file_url_is_percent_encoded)
{
    char *u = print_file_url("/tmp/a b/#1/50%/é?.html");
    cr_assert_str_eq(u, "file:///tmp/a%20b/%231/50%25/%C3%A9%3F.html");
    free(u);
    u = print_file_url("/srv/run-1.2_x~/report.html");
    cr_assert_str_eq(u, "file:///srv/run-1.2_x~/report.html", "unreserved bytes stay");
    free(u);
}

/* The archive lies in "a b#1%41": an unencoded URL would load the folder "a b" (its listing)
 * and print that. pdftotext must find the report's own heading. */
Test(print, an_archive_path_with_hash_percent_and_space_prints_its_own_report, .timeout = 180)
{
    cr_assert_eq(system("command -v chromium >/dev/null && command -v pdftotext >/dev/null"), 0,
                 "this test prints with Chromium and reads with pdftotext: apt-get install chromium poppler-utils");
    char work[] = "/tmp/attnprof-url-XXXXXX", args[2048], cmd[2048];
    cr_assert_not_null(mkdtemp(work));
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/a b#1%%41' && cp -r tests/fixtures/h200-4var '%s/a b#1%%41/arch'", work,
             work);
    cr_assert_eq(system(cmd), 0);
    setenv("ATTNPROF_PDF", "1", 1);
    snprintf(args, sizeof args, "report '%s/a b#1%%41/arch' -q --format png --pdf", work);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(cmd, sizeof cmd, "pdftotext '%s/a b#1%%41/arch/report.pdf' '%s/report.txt'", work, work);
    cr_assert_eq(system(cmd), 0, "no report.pdf: %s", err_text);
    snprintf(cmd, sizeof cmd, "%s/report.txt", work);
    char *text = slurp(cmd);
    cr_assert(text && strstr(text, "What the trace revealed") && !strstr(text, "Index of"),
              "report.pdf is not the report: %.300s", text ? text : "");
    free(text);
    remove_tree(work);
}
