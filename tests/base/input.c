/* base/input: every file attnprof reads is opened under the caller's rules (links, size),
 * never blocks, is refused unless a regular file of a real file system, and a document read
 * whole is refused once its DOM would pass the stated multiple of the file, or when a key
 * appears twice in one object. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exit_codes.h"
#include "input.h"

static char *temp_dir(void)
{
    char *d = strdup("/tmp/attnprof-input-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static char *in(const char *dir, const char *name)
{
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(input, links_are_refused_unless_the_caller_follows_them)
{
    char *dir = temp_dir(), *file = in(dir, "run.json"), *link = in(dir, "link.json"), err[512] = "";
    write_text(file, "{}");
    cr_assert_eq(symlink(file, link), 0);
    int fd = -1;
    const input_rules strict = {0}, follow = {.follow_links = 1};
    cr_assert_eq(input_open_file(link, &strict, &fd, NULL, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "symbolic link") && fd < 0, "%s", err);
    cr_assert_eq(input_open_file(link, &follow, &fd, NULL, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_geq(fd, 0);
    close(fd);
    unlink(link);
    unlink(file);
    rmdir(dir);
    free(file), free(link), free(dir);
}

Test(input, a_fifo_is_refused_without_blocking, .timeout = 10)
{
    char *dir = temp_dir(), *fifo = in(dir, "trace.json"), err[512] = "";
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    int fd = -1;
    const input_rules rules = {0};
    cr_assert_eq(input_open_file(fifo, &rules, &fd, NULL, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "a FIFO"), "%s", err);
    unlink(fifo);
    rmdir(dir);
    free(fifo), free(dir);
}

/* /proc/kmsg blocks and consumes the kernel log; /proc/self/status is a "regular file"
 * of size 0: both are procfs, refused before a byte is read. */
Test(input, procfs_and_sysfs_files_are_refused)
{
    char err[512] = "";
    int fd = -1;
    const input_rules follow = {.follow_links = 1};
    cr_assert_eq(input_open_file("/proc/self/status", &follow, &fd, NULL, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "procfs") && fd < 0, "%s", err);
    cr_assert_eq(input_open("/proc/self/status", NULL, err, sizeof err), -1, "the streaming readers' open too");
    struct stat st;
    if (stat("/sys/kernel/mm/transparent_hugepage/enabled", &st) == 0) {
        cr_assert_eq(input_open_file("/sys/kernel/mm/transparent_hugepage/enabled", &follow, &fd, NULL, err,
                                     sizeof err),
                     EXIT_BAD_ARCHIVE);
        cr_assert(strstr(err, "sysfs"), "%s", err);
    }
}

Test(input, the_callers_size_limit_names_the_file)
{
    char *dir = temp_dir(), *file = in(dir, "status"), err[512] = "";
    FILE *f = fopen(file, "w");
    for (int i = 0; i < (1 << 20) + 1; i++)
        fputc(' ', f);
    fclose(f);
    int fd = -1;
    const input_rules rules = {.max_bytes = 1 << 20, .what = "a sweep status file"};
    cr_assert_eq(input_open_file(file, &rules, &fd, NULL, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "1 MiB attnprof reads of a sweep status file"), "%s", err);
    const input_rules wide = {.max_bytes = 2 << 20};
    int64_t size = 0;
    cr_assert_eq(input_open_file(file, &wide, &fd, &size, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(size, (1 << 20) + 1);
    close(fd);
    unlink(file);
    rmdir(dir);
    free(file), free(dir);
}

/* 2 MB of empty objects would take about 140 MB of DOM (70x); the budget is 8x + 16 MiB:
 * refused while parsing. A 2 MB string takes about 3x: read. */
Test(input, a_dom_past_the_stated_multiple_is_refused)
{
    char *dir = temp_dir(), *dense = in(dir, "dense.json"), *plain = in(dir, "plain.json"), err[512] = "";
    FILE *f = fopen(dense, "w");
    fputs("{\"padding\": [{}", f);
    for (int i = 0; i < 700000; i++)
        fputs(",{}", f);
    fputs("]}", f);
    fclose(f);
    f = fopen(plain, "w");
    fputs("{\"padding\": \"", f);
    for (int i = 0; i < 2000000; i++)
        fputc('x', f);
    fputs("\"}", f);
    fclose(f);
    json_t *root = NULL;
    cr_assert_eq(input_read_json(dense, INPUT_MAX_DOM_BYTES, &root, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "more than 8 x that in memory") && !root, "%s", err);
    cr_assert_eq(input_read_json(plain, INPUT_MAX_DOM_BYTES, &root, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(strlen(json_string_value(json_object_get(root, "padding"))), 2000000);
    json_decref(root);
    /* the budget is the thread's while it parses: jansson allocates as before afterwards */
    json_t *big = json_array();
    for (int i = 0; i < 1000000; i++)
        cr_assert_eq(json_array_append_new(big, json_object()), 0);
    json_decref(big);
    unlink(dense), unlink(plain);
    rmdir(dir);
    free(dense), free(plain), free(dir);
}

/* {"shape": {...}, "shape": {...}}: which one holds cannot be told. */
Test(input, a_key_twice_in_one_object_is_refused_naming_it)
{
    char *dir = temp_dir(), *file = in(dir, "run.json"), err[512] = "";
    write_text(file, "{\"shape\": {\"batch\": 8},\n \"shape\": {\"batch\": 1}}");
    json_t *root = NULL;
    cr_assert_eq(input_read_json(file, INPUT_MAX_DOM_BYTES, &root, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "inconsistent: a key appears twice") && strstr(err, "shape") && !strchr(err, '\n'), "%s",
              err);
    json_error_t je;
    cr_assert_null(input_load_json(file, err, sizeof err, &je));
    cr_assert(je.position < 0 && strstr(err, "twice"), "%s", err);
    unlink(file);
    rmdir(dir);
    free(file), free(dir);
}

/* The read(2) calls this process has made (/proc/self/io's syscr); -1 where the kernel keeps no
 * I/O accounting. */
static long read_calls(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long n = -1;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "syscr: %ld", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

/* A document is read in blocks, not a byte a call: jansson's own fd loader made one read(2) per
 * byte, so a 60 MB run.json cost 14 s of CPU in system calls before its first value was used
 * (bench/results/2026-12-03-cost-scaling.md). 1 MB here: about a million reads before, 16 now. */
Test(input, a_document_is_read_in_blocks_not_bytes)
{
    if (read_calls() < 0)
        cr_skip_test("no /proc/self/io: the kernel keeps no I/O accounting here");
    char *dir = temp_dir(), *file = in(dir, "run.json"), err[512] = "";
    FILE *f = fopen(file, "w");
    fputs("{\"padding\": \"", f);
    for (int i = 0; i < 1000000; i++)
        fputc('x', f);
    fputs("\", \"n\": 5}", f);
    fclose(f);
    json_t *root = NULL;
    long before = read_calls();
    cr_assert_eq(input_read_json(file, INPUT_MAX_DOM_BYTES, &root, err, sizeof err), EXIT_OK, "%s", err);
    long calls = read_calls() - before - 1; /* the second look at /proc/self/io reads it too */
    cr_assert_eq(json_integer_value(json_object_get(root, "n")), 5);
    cr_assert_lt(calls, 1000, "%ld read(2) calls for 1 MB", calls);
    json_decref(root);
    unlink(file);
    rmdir(dir);
    free(file), free(dir);
}
