/* The escapers of report/base/escape.h, unit by unit: Markdown text and code spans, CSV
 * fields (formula-looking ones quoted), the terminal, and UTF-8 cut between characters.
 * Every writer's use of them is checked in tests/docs/escape_targets.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

Test(escape, utf8_cut_between_characters)
{
    char out[8];
    cr_assert_eq(esc_copy_utf8(out, sizeof out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"), 0); /* éééé: 8 bytes */
    cr_assert_str_eq(out, "\xc3\xa9\xc3\xa9\xc3\xa9");
    cr_assert_eq(esc_copy_utf8(out, sizeof out, "abcdef\xe2\x86\x92"), 0); /* → cut: dropped whole */
    cr_assert_str_eq(out, "abcdef");
    cr_assert_eq(esc_copy_utf8(out, sizeof out, "ab\xf0\x9f\x98\x80z"), 1);
    char s[] = "x\xe6\xb3";
    esc_utf8_trim(s);
    cr_assert_str_eq(s, "x");
}

/* ---- escaping, unit by unit --------------------------------------------------------- */

static char *through(void (*fn)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, s);
    fclose(f);
    return buf;
}

static void code_in_table(FILE *f, const char *s) { esc_md_code(f, s, 1); }
static void csv_plain(FILE *f, const char *s) { esc_csv_field(f, s, 0); }

Test(escape, markdown)
{
    char *t = through(esc_md_text, "a|b`c[d]!e<f\\g\nh\x1bi");
    cr_assert_str_eq(t, "a\\|b\\`c\\[d\\]\\!e\\<f\\\\g h i");
    free(t);
    t = through(code_in_table, "x`y``z|");
    cr_assert_str_eq(t, "```x`y``z\\|```");
    free(t);
    t = through(code_in_table, "`a");
    cr_assert_str_eq(t, "`` `a ``");
    free(t);
    char buf[16];
    esc_md_text_buf(buf, 6, "abcd[");
    cr_assert_str_eq(buf, "abcd", "no lone backslash at a cut");
}

Test(escape, csv_and_terminal)
{
    char *t = through(csv_plain, "plain");
    cr_assert_str_eq(t, "plain");
    free(t);
    t = through(csv_plain, "a,\"b\"");
    cr_assert_str_eq(t, "\"a,\"\"b\"\"\"");
    free(t);
    const char *formulas[] = {"=1+1", "+1", "-1", "@SUM(A1)"};
    for (int i = 0; i < 4; i++) {
        t = through(csv_plain, formulas[i]);
        cr_assert_eq(strncmp(t, "\"'", 2), 0, "%s", t);
        free(t);
    }
    char out[32];
    cr_assert_str_eq(esc_terminal(out, sizeof out, "a\x1b[2Jb\nc\xc2\x9b" "d\x7f"), "a[2Jbcd");
}
