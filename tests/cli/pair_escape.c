/* compare --pair names traces whose names hold '=' or ',' by escaping them
 * with '\' (attnprof help compare says how); a malformed list is refused. */
#include <criterion/criterion.h>
#include <string.h>

#include "err.h"
#include "compare.h"

Test(cli_pair, escaped_equals_comma_and_backslash_are_part_of_the_name)
{
    compare_options o = {0};
    char err[512];
    cr_assert_eq(compare_pairs_parse("run\\=2\\,seed\\=1=other,a\\\\b=c", &o, err, sizeof err), 0, "%s", err);
    cr_assert_eq(o.n_pair, 2);
    cr_expect_str_eq(o.pair[0].base, "run=2,seed=1");
    cr_expect_str_eq(o.pair[0].other, "other");
    cr_expect_str_eq(o.pair[1].base, "a\\b");
    cr_expect_str_eq(o.pair[1].other, "c");
    cr_assert_eq(compare_pairs_parse("a=b", &o, err, sizeof err), 0);
    cr_expect(o.n_pair == 1 && !strcmp(o.pair[0].base, "a") && !strcmp(o.pair[0].other, "b"));
    const char *bad[] = {"a", "=b", "a=", "a=b,", "a\\", "a=b\\", ",a=b", "a,b=c"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(compare_pairs_parse(bad[i], &o, err, sizeof err), EXIT_USAGE, "%s accepted", bad[i]);
}
