/* `attnprof record`, run as a user would: the refusals (each one line, its own exit code,
 * nothing left behind), a raw file kept from a recording converted into an archive that
 * `report` re-renders to the same bytes, and an incomplete recording marked as such.
 * No GPU: the program runs no CUDA, or the raw file comes from tests/record_raw.h. */
#include <criterion/criterion.h>

#include "archive.h"
#include "exit_codes.h"
#include "record_raw.h"
#include "run_cli.h"
#include "slurp.h"

#include <sys/stat.h>

static void assert_one_line(void)
{
    size_t len = strlen(err_text);
    cr_assert_gt(len, 0, "an error message");
    cr_expect_eq(strchr(err_text, '\n'), err_text + len - 1, "one line: %s", err_text);
    cr_expect_eq(strncmp(err_text, "attnprof: ", 10), 0, "%s", err_text);
}

/* The build has the injection library beside attnprof (a CUDA build). */
static int have_library(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s", attnprof_bin());
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "libattnprof_inject.so");
    return access(path, R_OK) == 0;
}

Test(record_cli, usage)
{
    const char *bad[] = {"record", "record --steps 0 -- true", "record --skip -1 -- true", "record --range '' -- true",
                         "record --frobnicate -- true", "record --raw x.txt -- true", "record --raw x.txt"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(attnprof(bad[i]), EXIT_USAGE, "%s: %s", bad[i], err_text);
        assert_one_line();
    }
}

Test(record_cli, output_exists)
{
    char dir[] = "/tmp/attnprof-rec-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char args[256];
    snprintf(args, sizeof args, "record -o %s -- true", dir);
    cr_expect_eq(attnprof(args), EXIT_OUTPUT_EXISTS, "%s", err_text);
    assert_one_line();
    rmdir(dir);
}

Test(record_cli, program_not_found_or_without_cuda)
{
    if (!have_library()) {
        cr_expect_eq(attnprof("record -- true"), EXIT_NO_DEVICE, "%s", err_text);
        assert_one_line();
        return;
    }
    cr_expect_eq(attnprof("record -o /tmp/attnprof-rec-none -- /nonexistent/program"), 127, "%s", err_text);
    assert_one_line();
    cr_expect(strstr(err_text, "not found") != NULL, "%s", err_text);
    cr_expect_eq(attnprof("record -o /tmp/attnprof-rec-none -- /dev/null"), 126, "%s", err_text);
    assert_one_line();
    cr_expect_eq(attnprof("record -o /tmp/attnprof-rec-none -- true"), EXIT_NOTHING_RECORDED, "%s", err_text);
    assert_one_line();
    cr_expect_eq(attnprof("record -o /tmp/attnprof-rec-none -- sh -c 'exit 3'"), EXIT_NOTHING_RECORDED, "%s",
                 err_text);
    cr_expect(strstr(err_text, "exit status was 3") != NULL, "%s", err_text);
    /* a program that crashes before any CUDA call: nothing to keep, its signal said as 128 + N */
    cr_expect_eq(attnprof("record -o /tmp/attnprof-rec-none -- sh -c 'kill -SEGV $$'"), EXIT_NOTHING_RECORDED, "%s",
                 err_text);
    cr_expect(strstr(err_text, "exit status was 139") != NULL, "%s", err_text);
    cr_expect(!path_exists("/tmp/attnprof-rec-none"), "nothing written");
}

/* A program that forks and exits at once, leaving its child running: record waits for the
 * child (it writes its records when it exits), says so in one line, and only then converts;
 * here nothing of either ran CUDA, so the end is the one "nothing recorded" line (exit 13).
 * Before the wait, record returned while the child still ran, and a CUDA child's raw file
 * was removed under it. */
Test(record_cli, program_that_forks_and_exits_is_waited_for)
{
    if (!have_library())
        return;
    char dir[] = "/tmp/attnprof-rec-XXXXXX", args[600], done[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(done, sizeof done, "%s/child-ended", dir);
    snprintf(args, sizeof args, "record -o %s/out -- sh -c '(sleep 0.4; touch %s) &'", dir, done);
    cr_expect_eq(attnprof(args), EXIT_NOTHING_RECORDED, "%s", err_text);
    cr_expect(access(done, F_OK) == 0, "record returned before the child it left running ended");
    cr_expect(strstr(err_text, "still running; waiting for them") != NULL, "%s", err_text);
    cr_expect(strstr(err_text, "nothing recorded") != NULL, "%s", err_text);
    snprintf(args, sizeof args, "%s/out", dir);
    cr_expect(!path_exists(args), "nothing written");
    remove_tree(dir);
}

static void write_raw(raw_file *r, int steps, const char *end)
{
    raw_open(r);
    for (int s = 0; s < steps; s++) {
        raw_line(r, "NS\t%lld\t%d\t77\tstep", r->t, s + 1);
        raw_kernel(r, "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT", 9000);
        raw_kernel(r, "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3", 15000);
        raw_kernel(r, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", 2000);
        raw_sync(r, 30000);
        raw_line(r, "NE\t%lld\t%d", r->t, s + 1);
        r->t += 100000;
    }
    raw_close(r, end);
}

Test(record_cli, raw_file_to_archive)
{
    raw_file r;
    write_raw(&r, 6, "E\tcomplete");
    char dir[] = "/tmp/attnprof-rec-XXXXXX", out[300], args[600], text[4096];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/archive", dir);
    snprintf(args, sizeof args, "record --raw %s -o %s --skip 1", r.path, out);
    cr_assert_eq(attnprof_out(args, text, sizeof text), EXIT_OK, "%s", err_text);
    cr_expect(strstr(text, "steps: 5 of 6") != NULL, "%s", text);
    char path[400];
    snprintf(path, sizeof path, "%s/run.json", out);
    char *run = slurp(path);
    cr_assert_not_null(run);
    cr_expect(strstr(run, "\"producer\": \"injection\"") != NULL, "%s", run);
    free(run);
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = slurp(path);
    cr_assert_not_null(md);
    cr_expect(strstr(md, "recorded by injection") != NULL);
    cr_expect(strstr(md, "## Recorded program") != NULL);
    cr_expect(strstr(md, "cuDNN SDPA") != NULL, "the backend from the kernel's name");
    snprintf(args, sizeof args, "report %s", out);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    char *again = slurp(path);
    cr_expect_str_eq(again, md, "report re-renders the same bytes");
    free(md);
    free(again);
    snprintf(args, sizeof args, "record --raw %s -o %s", r.path, out);
    cr_expect_eq(attnprof(args), EXIT_OUTPUT_EXISTS, "%s", err_text);
    remove_tree(dir);
    unlink(r.path);
}

Test(record_cli, incomplete_recording_kept_and_marked)
{
    raw_file r;
    write_raw(&r, 4, NULL);
    char dir[] = "/tmp/attnprof-rec-XXXXXX", out[300], args[600], text[4096];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/archive", dir);
    snprintf(args, sizeof args, "record --raw %s -o %s", r.path, out);
    cr_assert_eq(attnprof_out(args, text, sizeof text), EXIT_OK, "%s", err_text);
    cr_expect(strstr(text, "incomplete") != NULL, "%s", text);
    char path[400];
    snprintf(path, sizeof path, "%s/run.json", out);
    char *run = slurp(path);
    cr_assert_not_null(run);
    cr_expect(strstr(run, "\"status\": \"FAILED\"") != NULL, "%s", run);
    cr_expect(strstr(run, "incomplete") != NULL);
    free(run);
    remove_tree(dir);
    unlink(r.path);
}

/* The injection library stops writing at ATTNPROF_INJECT_RAW_MB and counts what it did not
 * write in a "T" line: the archive is kept, and says the recording is incomplete and why. */
Test(record_cli, raw_file_past_its_bound_is_incomplete)
{
    raw_file r;
    write_raw(&r, 6, NULL);
    FILE *f = fopen(r.path, "a");
    cr_assert_not_null(f);
    fputs("T\t123456\t4096\nE\tcomplete\n", f);
    fclose(f);
    char dir[] = "/tmp/attnprof-rec-XXXXXX", out[300], args[600], text[4096];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/archive", dir);
    snprintf(args, sizeof args, "record --raw %s -o %s", r.path, out);
    cr_assert_eq(attnprof_out(args, text, sizeof text), EXIT_OK, "%s", err_text);
    char path[400];
    snprintf(path, sizeof path, "%s/run.json", out);
    char *run = slurp(path);
    cr_assert_not_null(run);
    cr_expect(strstr(run, "\"status\": \"FAILED\"") != NULL, "%s", run);
    cr_expect(strstr(run, "bound of 4096 MiB") != NULL, "%s", run);
    cr_expect(strstr(run, "123456 records") != NULL, "%s", run);
    free(run);
    remove_tree(dir);
    unlink(r.path);
}
