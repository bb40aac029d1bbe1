/* io readers under input.h's rule: `attnprof record`'s raw files (the program recorded may
 * leave anything in its folder) and `import` of a procfs file (E19: /proc/kmsg blocked and
 * consumed the kernel log) are refused at once, with one line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exit_codes.h"
#include "inject_raw.h"
#include "run_cli.h"
#include "trace.h"

Test(input_rules, a_raw_file_that_is_a_fifo_or_a_link_is_refused_at_once, .timeout = 10)
{
    char dir[] = "/tmp/attnprof-iraw-XXXXXX", p[600], err[512];
    cr_assert_not_null(mkdtemp(dir));
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/raw-%d", dir, k);
        cr_assert_eq(k == 0 ? mkfifo(p, 0644) : symlink("/dev/zero", p), 0);
        trace t;
        inject_raw m;
        cr_assert_eq(inject_raw_read(p, "program", &t, &m, err, sizeof err), EXIT_BAD_ARCHIVE);
        cr_assert(strstr(err, k == 0 ? "FIFO" : "symbolic link"), "%s", err);
        trace_free(&t);
        unlink(p);
    }
    rmdir(dir);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* /proc/kmsg where it exists (read by root only: blocks and consumes the log when read), and
 * /proc/self/status (a procfs file any user can open): refused without reading, nothing written. */
Test(input_rules, import_of_a_procfs_file_is_refused_without_reading, .timeout = 30)
{
    char out[] = "/tmp/attnprof-iproc-XXXXXX", args[800];
    cr_assert_not_null(mkdtemp(out));
    const char *files[] = {"/proc/kmsg", "/proc/self/status"};
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (stat(files[i], &st) != 0)
            continue;
        snprintf(args, sizeof args, "import %s -o %s/a -q", files[i], out);
        double t0 = now_s();
        cr_assert_eq(attnprof(args), EXIT_BAD_ARCHIVE, "%s: %s", files[i], err_text);
        cr_assert_lt(now_s() - t0, 10.0);
        cr_assert(strstr(err_text, "procfs") || strstr(err_text, "Permission denied") || strstr(err_text, "cannot open"),
                  "%s: %s", files[i], err_text);
        cr_assert_eq(strchr(err_text, '\n'), err_text + strlen(err_text) - 1, "one line: %s", err_text);
        snprintf(args, sizeof args, "%s/a", out);
        cr_assert_neq(stat(args, &st), 0, "nothing written for %s", files[i]);
    }
    rmdir(out);
}
