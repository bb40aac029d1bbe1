/* Markdown pieces the report's sections share (report_md.h): a finding inside a table cell,
 * and the word after a variant that did not run. */
#include "report_md.h"

#include <stdio.h>

/* A '|' would end the cell, a newline the row. Archive strings go through esc_md_text /
 * esc_md_code before they reach a finding. */
void report_md_cell(FILE *f, const char *s)
{
    int backslashes = 0; /* run just before this character: odd means it is escaped */
    for (; *s; s++) {
        if (*s == '|' && backslashes % 2 == 0)
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
        backslashes = *s == '\\' ? backslashes + 1 : 0;
    }
}

const char *report_status_word(const variant_result *r)
{
    switch (r->status) {
    case VARIANT_OK:
        return "";
    case VARIANT_FAILED:
        return " **FAILED**";
    case VARIANT_SKIPPED:
        return " *(skipped)*";
    default:
        return " *(unavailable)*";
    }
}
