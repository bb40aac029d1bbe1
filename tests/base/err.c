/* base/err: the status code and its line come back from one call; context is prefixed, not lost. */
#include <criterion/criterion.h>
#include <string.h>

#include "err.h"

Test(err, set_returns_the_code_and_writes_the_line)
{
    char err[64] = "";
    cr_assert_eq(err_set(err, sizeof err, EXIT_IO, "%s: %d", "out.json", 7), EXIT_IO);
    cr_assert_str_eq(err, "out.json: 7");
    cr_assert_eq(err_set(NULL, 0, EXIT_USAGE, "ignored"), EXIT_USAGE);
}

Test(err, prefix_keeps_the_callee_reason_and_truncates_safely)
{
    char err[32];
    err_set(err, sizeof err, EXIT_BAD_ARCHIVE, "no run.json");
    cr_assert_eq(err_prefix(err, sizeof err, EXIT_BAD_ARCHIVE, "%s", "out/a"), EXIT_BAD_ARCHIVE);
    cr_assert_str_eq(err, "out/a: no run.json");
    err_prefix(err, sizeof err, EXIT_BAD_ARCHIVE, "%s", "a-very-long-context-prefix-here");
    cr_assert_eq(strlen(err), sizeof err - 1);
}
