/* Two imports compared in the test's process (tests of compare on model traces): each list of
 * traces imported by the binary (`import FILES [extra] -o DIR/a|b`), then compare's data built
 * over the two archives here, so the tests read its numbers. Needs run_cli.h first. */
#ifndef ATTNPROF_TEST_IMPORTED_COMPARE_H
#define ATTNPROF_TEST_IMPORTED_COMPARE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "compare.h"
#include "exit_codes.h"

typedef struct compared {
    char dir[64];
    compare_archive ar[2];
    compare_data m;
} compared;

static inline void compare_imports(compared *c, const char *a_files, const char *b_files, const char *extra)
{
    snprintf(c->dir, sizeof c->dir, "/tmp/attnprof-mcmp-XXXXXX");
    cr_assert_not_null(mkdtemp(c->dir));
    char args[2048], err[1024];
    const char *files[2] = {a_files, b_files};
    compare_archive *in[2];
    for (int j = 0; j < 2; j++) {
        snprintf(args, sizeof args, "import %s %s -o %s/%c -q", files[j], extra, c->dir, 'a' + j);
        cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
        snprintf(args, sizeof args, "%s/%c", c->dir, 'a' + j);
        cr_assert_eq(compare_load(&c->ar[j], args, err, sizeof err), EXIT_OK, "%s", err);
        in[j] = &c->ar[j];
    }
    compare_options o = {.min_effect = COMPARE_DEFAULT_MIN_EFFECT};
    cr_assert_eq(compare_build(&c->m, in, 2, &o, err, sizeof err), EXIT_OK, "%s", err);
}

static inline void compared_free(compared *c)
{
    compare_free(&c->m);
    compare_archive_free(&c->ar[0]);
    compare_archive_free(&c->ar[1]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", c->dir);
    cr_assert_eq(system(cmd), 0);
}

#endif
