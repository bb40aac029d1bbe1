/* Without an NVIDIA driver, `run` says so in those words (not CUDA's "driver
 * version is insufficient"), and `sweep` stops in one line with exit 3 before it writes anything,
 * unless a task command or Slurm runs its shapes. Skipped where a driver is loaded. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "exit_codes.h"
#include "run_cli.h"

static int driver_loaded(void) { return access("/proc/driver/nvidia", F_OK) == 0; }

static int one_line(void) { return strchr(err_text, '\n') == err_text + strlen(err_text) - 1; }

Test(cli_no_gpu, sweep_stops_in_one_line_before_writing)
{
    if (driver_loaded())
        cr_skip_test("an NVIDIA driver is loaded here");
    const char *dir = "/tmp/attnprof-nogpu-sweep";
    remove_tree(dir);
    cr_assert_eq(attnprof("sweep --seq 256 --dim 64 --tokens 1024 -o /tmp/attnprof-nogpu-sweep"), EXIT_NO_DEVICE, "%s",
                 err_text);
    cr_expect(one_line() && strstr(err_text, "--task-command") && strstr(err_text, "--slurm"), "%s", err_text);
    cr_expect(!path_exists(dir), "the sweep wrote %s", dir);
    /* a task command runs the shapes elsewhere: the sweep goes on */
    cr_assert_eq(attnprof("sweep --seq 256 --dim 64 --tokens 1024 -q -o /tmp/attnprof-nogpu-sweep --task-command true"),
                 EXIT_VARIANT_FAILED, "%s", err_text);
    cr_expect(path_exists(dir));
    remove_tree(dir);
    cr_assert_eq(attnprof("sweep --seq 256 --dim 64 --tokens 1024 --slurm -o /tmp/attnprof-nogpu-sweep"), EXIT_OK, "%s",
                 err_text);
    remove_tree(dir);
}

#if ATTNPROF_WITH_RECORDER
Test(cli_no_gpu, run_names_the_missing_driver)
{
    if (driver_loaded())
        cr_skip_test("an NVIDIA driver is loaded here");
    cr_assert_eq(attnprof("run --variants naive --seq 64 -o /tmp/attnprof-nogpu-run"), EXIT_NO_DEVICE, "%s", err_text);
    cr_expect(one_line() && strstr(err_text, "no NVIDIA driver loaded (no /proc/driver/nvidia)") &&
                  !strstr(err_text, "insufficient"),
              "%s", err_text);
    cr_expect(!path_exists("/tmp/attnprof-nogpu-run"));
}
#endif
