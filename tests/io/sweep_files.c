/* The sweep's own files read back (sweep.json, status/<shape>.json) under input.h's rule:
 * a FIFO, a link (to a file or to /dev/zero) or a file past the stated limit is refused at
 * once with one line, never waited on or followed (E05); the sweep's commands return. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exit_codes.h"
#include "run_cli.h"
#include "sweep_plan.h"

static char *temp_dir(void)
{
    char *d = strdup("/tmp/attnprof-sweepio-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static const char STATUS[] = "{\"exit_code\": 0, \"error\": \"\", \"gpu\": \"0\", \"seconds\": 1.0, "
                             "\"slurm_job_id\": \"\", \"slurm_task\": -1, \"log\": \"logs/x.log\"}";

/* The three hostile kinds in place of `file` in dir: 0 a FIFO, 1 a link to /dev/zero, 2 a
 * link to a valid copy beside it (followed, it would read). */
static void plant(const char *dir, const char *file, int kind, const char *valid)
{
    char p[600], real[640];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    unlink(p);
    if (kind == 0)
        cr_assert_eq(mkfifo(p, 0644), 0);
    else if (kind == 1)
        cr_assert_eq(symlink("/dev/zero", p), 0);
    else {
        snprintf(real, sizeof real, "%s.real", p);
        write_text(real, valid);
        cr_assert_eq(symlink(real, p), 0);
    }
}

static const char *const SAYS[] = {"FIFO", "symbolic link", "symbolic link"};

Test(sweep_files, a_status_file_that_is_a_fifo_or_a_link_is_refused_at_once, .timeout = 20)
{
    char *dir = temp_dir(), sdir[600], err[1024];
    snprintf(sdir, sizeof sdir, "%s/status", dir);
    cr_assert_eq(mkdir(sdir, 0755), 0);
    for (int k = 0; k < 3; k++) {
        plant(sdir, "s1.json", k, STATUS);
        sweep_status st;
        int found = 0;
        double t0 = now_s();
        cr_assert_eq(sweep_status_read(dir, "s1", &st, &found, err, sizeof err), EXIT_BAD_ARCHIVE, "kind %d", k);
        cr_assert_lt(now_s() - t0, 1.0);
        cr_assert(found, "a link or FIFO of that name is found, then refused");
        cr_assert(strstr(err, SAYS[k]), "kind %d: %s", k, err);
    }
    /* the same text as a plain file reads */
    char p[700];
    snprintf(p, sizeof p, "%s/s1.json", sdir);
    unlink(p);
    write_text(p, STATUS);
    sweep_status st;
    int found = 0;
    cr_assert_eq(sweep_status_read(dir, "s1", &st, &found, err, sizeof err), EXIT_OK, "%s", err);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* A status file past SWEEP_STATUS_MAX_BYTES is refused by its size, before it is parsed
 * (15 MB took 670 MB). */
Test(sweep_files, a_status_file_past_its_limit_is_refused_by_size, .timeout = 20)
{
    char *dir = temp_dir(), sdir[600], p[700], err[1024];
    snprintf(sdir, sizeof sdir, "%s/status", dir);
    cr_assert_eq(mkdir(sdir, 0755), 0);
    snprintf(p, sizeof p, "%s/s1.json", sdir);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs("{\"exit_code\": 0, \"error\": \"", f);
    for (int64_t i = 0; i < SWEEP_STATUS_MAX_BYTES; i++)
        fputc('x', f);
    fputs("\"}", f);
    fclose(f);
    sweep_status st;
    int found = 0;
    cr_assert_eq(sweep_status_read(dir, "s1", &st, &found, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "64 KiB attnprof reads"), "%s", err);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

Test(sweep_files, a_sweep_json_that_is_a_fifo_or_a_link_is_refused_at_once, .timeout = 20)
{
    char *dir = temp_dir(), err[1024];
    for (int k = 0; k < 3; k++) {
        plant(dir, "sweep.json", k, "{\"sweep_version\": 1, \"shapes\": []}");
        sweep_plan *p = malloc(sizeof *p);
        int found = 0;
        double t0 = now_s();
        cr_assert_eq(sweep_plan_read(p, dir, &found, err, sizeof err), EXIT_BAD_ARCHIVE, "kind %d", k);
        cr_assert_lt(now_s() - t0, 1.0);
        cr_assert(strstr(err, SAYS[k]) && strstr(err, "sweep.json"), "kind %d: %s", k, err);
        free(p);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* sweep --collect over a complete archive whose status file is refused (a FIFO, a link to
 * /dev/zero, a link to a valid file, a file past SWEEP_STATUS_MAX_BYTES): the sweep is still
 * complete (exit 0), but the refusal is one line on stderr naming the status file and why (it
 * was swallowed: nothing said that the shape's GPU, log and skipped variants were left out). */
Test(sweep_files, collect_names_a_refused_status_file_of_a_complete_shape, .timeout = 120)
{
    char *dir = temp_dir(), sdir[600], args[800];
    snprintf(args, sizeof args, "mkdir -p %s/shapes %s/status && cp -r tests/fixtures/h200-4var %s/shapes/2x4x256x64",
             dir, dir, dir);
    cr_assert_eq(system(args), 0);
    snprintf(sdir, sizeof sdir, "%s/status", dir);
    static const char *const why[] = {"FIFO", "symbolic link", "symbolic link", "more than"};
    for (int k = 0; k < 4; k++) {
        if (k < 3) {
            plant(sdir, "2x4x256x64.json", k, STATUS);
        } else {
            char p[700];
            snprintf(p, sizeof p, "%s/2x4x256x64.json", sdir);
            unlink(p);
            FILE *f = fopen(p, "w");
            cr_assert_not_null(f);
            fprintf(f, "{\"exit_code\": 0, \"pad\": \"");
            for (int64_t i = 0; i < SWEEP_STATUS_MAX_BYTES; i++)
                fputc('x', f);
            fprintf(f, "\"}");
            fclose(f);
        }
        snprintf(args, sizeof args, "sweep --collect %s", dir);
        cr_assert_eq(attnprof(args), EXIT_OK, "kind %d: %s", k, err_text);
        cr_assert(strstr(err_text, "2x4x256x64.json") && strstr(err_text, why[k]), "kind %d: %s", k, err_text);
        cr_assert_eq(strchr(err_text, '\n'), err_text + strlen(err_text) - 1, "kind %d: one line: %s", k, err_text);
    }
    /* and a status file that reads says nothing */
    char p[700];
    snprintf(p, sizeof p, "%s/2x4x256x64.json", sdir);
    unlink(p);
    write_text(p, STATUS);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_assert_eq(err_text[0], '\0', "%s", err_text);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    cr_assert_eq(system(args), 0);
    free(dir);
}

/* The commands: `sweep --collect` over a FIFO status file returns, and over a FIFO sweep.json
 * exits 6 with one line, both in well under the test's timeout (they hung forever). */
Test(sweep_files, collect_over_a_fifo_sweep_json_or_status_returns, .timeout = 60)
{
    char *dir = temp_dir(), p[700], args[800];
    snprintf(args, sizeof args, "mkdir -p %s/shapes %s/status && cp -r tests/fixtures/h200-4var %s/shapes/2x4x256x64",
             dir, dir, dir);
    cr_assert_eq(system(args), 0);
    snprintf(p, sizeof p, "%s/status/2x4x256x64.json", dir);
    cr_assert_eq(mkfifo(p, 0644), 0);
    snprintf(args, sizeof args, "sweep --collect %s", dir);
    double t0 = now_s();
    /* the shape's archive is complete, so its refused status file does not make it unreadable */
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    cr_assert_lt(now_s() - t0, 20.0);
    unlink(p);
    snprintf(p, sizeof p, "%s/sweep.json", dir);
    cr_assert_eq(mkfifo(p, 0644), 0);
    t0 = now_s();
    cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s", err_text);
    cr_assert_lt(now_s() - t0, 20.0);
    cr_assert(strstr(err_text, "FIFO") && strstr(err_text, "sweep.json"), "%s", err_text);
    cr_assert_eq(strchr(err_text, '\n'), err_text + strlen(err_text) - 1, "one line: %s", err_text);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    cr_assert_eq(system(args), 0);
    free(dir);
}

/* E05 at the command line for --resume and --task (the collect test above covers --collect): a
 * FIFO sweep.json makes both return at once with one line naming it (exit 6), and a FIFO status
 * file of a complete shape does not hold --task (it hung reading it). */
Test(sweep_files, resume_and_task_over_a_fifo_return_at_once, .timeout = 60)
{
    char *dir = temp_dir(), p[700], args[900];
    snprintf(p, sizeof p, "%s/sweep.json", dir);
    cr_assert_eq(mkfifo(p, 0644), 0);
    const char *cmds[] = {"sweep --resume -o %s --task-command true", "sweep --task 0 %s"};
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, cmds[k], dir);
        double t0 = now_s();
        cr_expect_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s: %s", args, err_text);
        cr_expect_lt(now_s() - t0, 20.0, "%s returns", args);
        cr_expect(strstr(err_text, "FIFO") && strstr(err_text, "sweep.json") &&
                      strchr(err_text, '\n') == err_text + strlen(err_text) - 1,
                  "%s: one line naming the FIFO: %s", args, err_text);
    }
    snprintf(args, sizeof args, "rm -rf %s && cp -r tests/fixtures/sweep-h200 %s && rm %s/status/128x16x256x64.json", dir,
             dir, dir);
    cr_assert_eq(system(args), 0);
    snprintf(p, sizeof p, "%s/status/128x16x256x64.json", dir);
    cr_assert_eq(mkfifo(p, 0644), 0);
    snprintf(args, sizeof args, "sweep --task 0 %s", dir);
    double t0 = now_s();
    int rc = attnprof(args);
    cr_expect_lt(now_s() - t0, 20.0, "--task over a FIFO status returns");
    cr_expect(rc == EXIT_OK || rc == EXIT_BAD_ARCHIVE, "--task: exit %d: %s", rc, err_text);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    cr_assert_eq(system(args), 0);
    free(dir);
}
