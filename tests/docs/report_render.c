/* report/docs/report_render: `attnprof report` over an archive, as a user runs it: what a
 * re-render keeps of an earlier one, and a file-size limit met while writing (a write error,
 * exit 7, nothing half-written left). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"
#include "exit_codes.h"
#include "run_cli.h"
#include "slurp.h"

static char *copy_fixture(const char *fixture)
{
    char *dir = strdup("/tmp/attnprof-render-XXXXXX"), cmd[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp -r %s/. %s/", fixture, dir);
    cr_assert_eq(system(cmd), 0);
    return dir;
}

static char *file_in(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return slurp(path);
}

/* report.pdf from an earlier `--pdf` render stays through a render without --pdf. */
Test(report_render, a_render_without_pdf_keeps_report_pdf, .timeout = 60)
{
    char *dir = copy_fixture("tests/fixtures/h200-4var"), err[256], args[1200];
    cr_assert_eq(archive_write_file(dir, "report.pdf", "%PDF-1.4 an earlier print\n%%EOF\n", err, sizeof err), 0);
    snprintf(args, sizeof args, "report %s -q --format png", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    char *pdf = file_in(dir, "report.pdf");
    cr_assert(pdf && strstr(pdf, "an earlier print"), "report.pdf was deleted by a render without --pdf");
    free(pdf);
    remove_tree(dir);
    free(dir);
}

/* Under a file-size limit (ulimit -f) the render's writes fail with EFBIG: exit 7 with one
 * line, no staging folder or temporary file left, the earlier report as it was. */
Test(report_render, a_file_size_limit_is_a_write_error, .timeout = 60)
{
    char *dir = copy_fixture("tests/fixtures/h200-4var"), args[1200];
    snprintf(args, sizeof args, "report %s -q --format png", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    char *before = file_in(dir, "report.md");
    char errf[] = "/tmp/attnprof-xfsz-XXXXXX";
    int efd = mkstemp(errf);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit lim = {32 * 1024, 32 * 1024}; /* report.html inlines its PNGs: far above this */
        setrlimit(RLIMIT_FSIZE, &lim);
        dup2(efd, 2);
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 1);
        setenv("ATTNPROF_PDF", "0", 1);
        execl(attnprof_bin(), attnprof_bin(), "report", dir, "-q", "--format", "png", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    close(efd);
    char *said = slurp(errf);
    unlink(errf);
    cr_assert(WIFEXITED(st), "killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    cr_assert_eq(WEXITSTATUS(st), EXIT_IO, "exit %d: %s", WEXITSTATUS(st), said);
    cr_assert(said && strstr(said, "File too large") && strchr(said, '\n') == said + strlen(said) - 1,
              "one line naming the limit: %s", said ? said : "");
    snprintf(args, sizeof args, "ls -A %s %s/figures | grep -q -e '^\\.report\\.' -e 'tmp-' -e '^\\.print-'", dir, dir);
    cr_assert_neq(system(args), 0, "temporaries left under the limit");
    char *after = file_in(dir, "report.md");
    cr_assert(before && after && !strcmp(before, after), "the earlier report.md changed");
    free(said), free(before), free(after);
    remove_tree(dir);
    free(dir);
}
