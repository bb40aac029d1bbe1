/* base/input_read_text: a whole small file under input.h's rule, the one read every small
 * file of the pipeline and the sweep goes through: a FIFO or a link to /dev/zero is refused
 * at once (never waited on, never read forever), a file past the limit is refused by its size,
 * a missing one says so. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exit_codes.h"
#include "input.h"

static char *path_in(const char *dir, const char *name)
{
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

Test(input_text, reads_a_regular_file_whole_and_refuses_the_rest, .timeout = 10)
{
    char dir[] = "/tmp/attnprof-itext-XXXXXX", err[512];
    cr_assert_not_null(mkdtemp(dir));
    char *file = path_in(dir, "a"), *fifo = path_in(dir, "f"), *zero = path_in(dir, "z"), *none = path_in(dir, "n");
    FILE *f = fopen(file, "w");
    fputs("hello\n", f);
    fclose(f);
    cr_assert_eq(mkfifo(fifo, 0644), 0);
    cr_assert_eq(symlink("/dev/zero", zero), 0);
    const input_rules rules = {.max_bytes = 64, .what = "a test file"};
    char *text = NULL;
    size_t len = 0;
    int missing = 0;
    cr_assert_eq(input_read_text(file, &rules, &text, &len, &missing, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_str_eq(text, "hello\n");
    cr_assert_eq(len, 6);
    free(text);
    const char *bad[] = {fifo, zero};
    const char *says[] = {"FIFO", "symbolic link"};
    for (int i = 0; i < 2; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cr_assert_eq(input_read_text(bad[i], &rules, &text, &len, &missing, err, sizeof err), EXIT_BAD_ARCHIVE);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cr_assert_lt((double)(t1.tv_sec - t0.tv_sec), 1.0);
        cr_assert(strstr(err, says[i]) && !text && !missing, "%s", err);
    }
    /* followed when the caller says so: /dev/zero is then a character device, still refused */
    const input_rules follow = {.max_bytes = 64, .follow_links = 1};
    cr_assert_eq(input_read_text(zero, &follow, &text, &len, NULL, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "character device"), "%s", err);
    cr_assert_eq(input_read_text(none, &rules, &text, &len, &missing, err, sizeof err), EXIT_IO);
    cr_assert(missing, "%s", err);
    const input_rules small = {.max_bytes = 4, .what = "a test file"};
    cr_assert_eq(input_read_text(file, &small, &text, &len, NULL, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "0 KiB attnprof reads of a test file") || strstr(err, "attnprof reads of a test file"), "%s",
              err);
    cr_assert_eq(input_read_text("/proc/self/status", &follow, &text, &len, NULL, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "procfs"), "%s", err);
    unlink(file), unlink(fifo), unlink(zero), rmdir(dir);
    free(file), free(fifo), free(zero), free(none);
}
