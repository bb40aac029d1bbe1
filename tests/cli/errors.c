/* The command line, run as a user would: every error is one line on stderr with
 * its own exit code, and nothing half-written is left behind. No GPU needed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"
#include "exit_codes.h"
#include "run_cli.h"


static void assert_one_line(void)
{
    size_t len = strlen(err_text);
    cr_assert_gt(len, 0, "an error message");
    cr_assert_eq(strchr(err_text, '\n'), err_text + len - 1, "one line: %s", err_text);
    cr_assert_eq(strncmp(err_text, "attnprof: ", 10), 0, "%s", err_text);
}

Test(cli, usage_errors)
{
    const char *bad[] = {"",
                         "frobnicate",
                         "run --variants ''",
                         "run --variants ,,",
                         "run --seq 0",
                         "run --seq -5",
                         "run --batch abc",
                         "run --heads 3x",
                         "run --dim 0",
                         "run --iters 0",
                         "run --warmup -1",
                         "run --format gif",
                         "run --no-such-option",
                         "run --seq",
                         "report",
                         "report a b",
                         "list extra"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(attnprof(bad[i]), EXIT_USAGE, "`attnprof %s` → %s", bad[i], err_text);
        assert_one_line();
    }
    attnprof("run --seq abc");
    cr_assert(strstr(err_text, "--seq abc: expected a whole number"), "%s", err_text);
}

#if ATTNPROF_WITH_RECORDER
/* Variant names and shapes are checked by the recorder, which owns the registry;
 * it is loaded (no GPU needed) before anything runs. */
Test(cli, unknown_variant)
{
    cr_assert_eq(attnprof("run --variants naive,nosuch"), EXIT_USAGE, "%s", err_text);
    assert_one_line();
    cr_assert(strstr(err_text, "unknown variant 'nosuch'") && strstr(err_text, "attnprof list"), "%s", err_text);
}

Test(cli, head_dim_the_variants_cannot_take)
{
    /* Named explicitly, a variant that cannot take D = 20 (the fused kernels take
     * multiples of 8 up to 256) stops the run (exit 2), and the message names it
     * and says what would do. */
    cr_assert_eq(attnprof("run --variants efficient --dim 20"), EXIT_USAGE, "%s", err_text);
    assert_one_line();
    cr_assert(strstr(err_text, "variant efficient cannot take 8x16x1024x20"), "%s", err_text);
    cr_assert(strstr(err_text, "needs a multiple of 8 up to 256"), "%s", err_text);
    cr_assert_eq(attnprof("run --variants flash --dim 264"), EXIT_USAGE, "%s", err_text);
    cr_assert(strstr(err_text, "flash: head dim 264 not supported"), "%s", err_text);
    /* With the default list it is skipped and the others run: no usage error, so
     * this machine gets as far as looking for the GPU (exit 3 without one). A
     * head dim between the compiled ones (80 runs the D = 96 kernels) is no
     * usage error either. */
    struct stat st;
    if (stat("/dev/nvidia0", &st) == 0)
        cr_skip_test("a GPU is present: the batch would run");
    cr_assert_eq(attnprof("run --dim 20 -o /tmp/attnprof-never-written"), EXIT_NO_DEVICE, "%s", err_text);
    assert_one_line();
    cr_assert_eq(attnprof("run --variants efficient,flash --dim 80 -o /tmp/attnprof-never-written"), EXIT_NO_DEVICE,
                 "%s", err_text);
    assert_one_line();
}

Test(cli, long_variant_list_is_not_cut)
{
    /* 600 bytes of valid names, then an unknown one: it must be seen. */
    char args[1024] = "run --variants ";
    for (int i = 0; i < 100; i++)
        strcat(args, "naive,");
    strcat(args, "nosuch");
    cr_assert_eq(attnprof(args), EXIT_USAGE, "%s", err_text);
    cr_assert(strstr(err_text, "unknown variant 'nosuch'"), "%s", err_text);
}

Test(cli, help_version_list)
{
    cr_assert_eq(attnprof("--help"), 0);
    cr_assert_eq(attnprof("--version"), 0);
    cr_assert_eq(attnprof("list"), 0);
}

Test(cli, recorder_that_cannot_load)
{
    /* A recorder the loader cannot use is one line and exit 3, never a crash. */
    char bad[] = "/tmp/attnprof-recorder-XXXXXX";
    int fd = mkstemp(bad);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "not an ELF object", 17), 17);
    close(fd);
    char real[8192];
    cr_assert_eq(attnprof_out("list", real, sizeof real), EXIT_OK, "%s", err_text);
    setenv("ATTNPROF_RECORDER", bad, 1); /* this test's own process */
    cr_assert_eq(attnprof("run --variants naive"), EXIT_NO_DEVICE, "%s", err_text);
    assert_one_line();
    cr_assert(strstr(err_text, "cannot load the recorder"), "%s", err_text);
    /* list still lists, from the build's catalog, and says in one line why */
    char out[8192];
    cr_assert_eq(attnprof_out("list", out, sizeof out), EXIT_OK, "%s", err_text);
    assert_one_line();
    cr_assert(strstr(err_text, "cannot load the recorder"), "%s", err_text);
    cr_assert(strstr(out, "naive_inplace") && strstr(out, "cudnn"), "%s", out);
    cr_assert_str_eq(out, real, "the build's catalog is the recorder's own table");
    unsetenv("ATTNPROF_RECORDER");
    unlink(bad);
}
#else
/* A build without CUDA: every GPU-free command works; `run` says in one line that this
 * build cannot record, and exits 3; `list` lists the variants from the build's catalog. */
Test(cli, no_recorder_in_this_build)
{
    cr_assert_eq(attnprof("--help"), 0);
    cr_assert_eq(attnprof("--version"), 0);
    char out[8192];
    cr_assert_eq(attnprof_out("list", out, sizeof out), EXIT_OK, "%s", err_text);
    assert_one_line();
    cr_assert(strstr(err_text, "built without CUDA"), "%s", err_text);
    cr_assert(strstr(out, "naive ") && strstr(out, "(19 GPU operations per forward expected)"), "%s", out);
    const char *need_recorder[] = {"run", "run --variants naive,nosuch", "run --dim 96"};
    for (size_t i = 0; i < sizeof need_recorder / sizeof need_recorder[0]; i++) {
        cr_assert_eq(attnprof(need_recorder[i]), EXIT_NO_DEVICE, "`attnprof %s` → %s", need_recorder[i], err_text);
        assert_one_line();
        cr_assert(strstr(err_text, "built without CUDA"), "%s", err_text);
    }
}
#endif

Test(cli, no_cuda_device_points_to_report)
{
    struct stat st;
    if (stat("/dev/nvidia0", &st) == 0)
        cr_skip_test("a GPU is present: this test is for machines without one");
    cr_assert_eq(attnprof("run --variants naive --seq 64 -o /tmp/attnprof-never-written"), EXIT_NO_DEVICE, "%s",
                 err_text);
    assert_one_line();
    cr_assert(strstr(err_text, "attnprof report"), "%s", err_text);
    cr_assert(!path_exists("/tmp/attnprof-never-written"), "nothing written");
}

Test(cli, output_dir_exists)
{
    char dir[] = "/tmp/attnprof-exists-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char args[256];
    snprintf(args, sizeof args, "run --variants naive -o %s", dir);
    cr_assert_eq(attnprof(args), EXIT_OUTPUT_EXISTS, "%s", err_text);
    assert_one_line();
    cr_assert(strstr(err_text, "--force"), "%s", err_text);
    rmdir(dir);
}

static void copy_fixture(char *dir)
{
    cr_assert_not_null(mkdtemp(dir));
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp tests/fixtures/h200-4var/trace.json tests/fixtures/h200-4var/run.json %s/", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(cli, report_rerenders_an_archive_without_a_gpu)
{
    char dir[] = "/tmp/attnprof-archive-XXXXXX", args[256], path[512];
    copy_fixture(dir);
    snprintf(args, sizeof args, "report %s --format png,svg,pdf", dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    const char *files[] = {"report.md", "report.html", "summary.csv", "figures/timeline-overview.png",
                           "figures/timeline-overview.pdf", "figures/occupancy.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        cr_assert(path_exists(path), "%s", path);
    }
    remove_tree(dir);
}

Test(cli, missing_corrupt_and_truncated_archives)
{
    char dir[] = "/tmp/attnprof-archive-XXXXXX", args[256], path[512];
    cr_assert_eq(attnprof("report /tmp/attnprof-no-such-archive"), EXIT_BAD_ARCHIVE);
    assert_one_line();

    copy_fixture(dir);
    snprintf(args, sizeof args, "report %s", dir);
    snprintf(path, sizeof path, "%s/trace.json", dir);
    /* truncated: the first 1000 bytes of a real trace */
    cr_assert_eq(truncate(path, 1000), 0);
    cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s", err_text);
    assert_one_line();
    cr_assert(strstr(err_text, "trace.json: not valid JSON"), "%s", err_text);
    /* corrupt: valid JSON, wrong content */
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\": 3}", f);
    fclose(f);
    cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s", err_text);
    assert_one_line();
    snprintf(path, sizeof path, "%s/report.html", dir);
    cr_assert(!path_exists(path), "no report from a bad archive");
    /* missing trace.json, then a corrupt run.json */
    snprintf(path, sizeof path, "%s/trace.json", dir);
    unlink(path);
    cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s", err_text);
    cr_assert(strstr(err_text, "trace.json: missing"), "%s", err_text);
    snprintf(path, sizeof path, "%s/run.json", dir);
    f = fopen(path, "w");
    fputs("{\"shape\": ", f);
    fclose(f);
    cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s", err_text);
    assert_one_line();
    remove_tree(dir);
}
