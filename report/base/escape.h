/* Strings that come from an archive, made safe for each place they go: Markdown
 * text and code spans, CSV fields, the terminal; and UTF-8 cut only between
 * characters. An archive is written by anyone (SECURITY.md): every writer passes
 * its archive strings through here. */
#ifndef ATTNPROF_ESCAPE_H
#define ATTNPROF_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* ---- Markdown -------------------------------------------------------------- */

/* Text (a table cell or a paragraph): '\\', '`', '|', '[', ']', '!', '<', '#' are
 * backslash-escaped, and so is a block marker at the start ('>', "- ", "+ ", "* ",
 * "1. ", "---" after spaces), so the text may begin a line or a list item; newlines
 * and other control characters become a space. The result is one line of literal
 * text: no link, image, HTML, heading, list, quote, code span or cell boundary
 * can start in it. */
void esc_md_text(FILE *f, const char *s);
/* The same text into out[n] (cut at a character boundary if it must be). */
void esc_md_text_buf(char *out, size_t n, const char *s);
/* A code span around `s`: fenced with one backtick more than the longest run in
 * `s` (padded when `s` starts or ends with one); control characters become a
 * space; '|' is written "\\|" when `in_table` (GFM reads it back as '|'). */
void esc_md_code(FILE *f, const char *s, int in_table);
/* The same code span into out[n] (cut at a character boundary if it must be). */
void esc_md_code_buf(char *out, size_t n, const char *s);
/* The same for a table cell ('|' written "\\|"). */
void esc_md_code_cell_buf(char *out, size_t n, const char *s);

/* ---- CSV (RFC 4180) ---------------------------------------------------------- */

/* One field: quoted when it holds ',', '"', CR or LF, or when `always_quote`;
 * a leading '=', '+', '-', '@', tab or CR is neutralised with a leading '\'' so
 * a spreadsheet never reads the field as a formula; terminal controls (ESC and
 * the rest of C0 but tab, CR, LF; DEL; C1) are dropped. */
void esc_csv_field(FILE *f, const char *s, int always_quote);

/* A number as the next field (",%.6g"); an empty field when it is not finite. */
void esc_csv_number(FILE *f, double x);

/* ---- HTML (text outside Markdown: <title>, attributes) ---------------------- */

/* `s` with '&', '<', '>', '"', '\'' as entities, controls (as for the terminal)
 * dropped and bytes that are not UTF-8 as U+FFFD. The caller frees it. */
char *esc_html_dup(const char *s);

/* ---- terminal ------------------------------------------------------------- */

/* Copies `s` with every control character (C0 with ESC, DEL, C1, the bidirectional
 * overrides, U+2028/2029) dropped, newlines and tabs included, so a one-line
 * message stays one line; a byte that is not valid UTF-8 becomes '?'. Cut between
 * characters when out is too small. Returns out. */
char *esc_terminal(char *out, size_t n, const char *s);
/* The same, written to f whatever its length. */
void esc_terminal_fputs(const char *s, FILE *f);

/* ---- UTF-8 ---------------------------------------------------------------- */

/* Copies `s` into out[n], cutting (if it must) only between UTF-8 characters.
 * Returns 1 if the whole string fit, 0 if it was cut. */
int esc_copy_utf8(char *out, size_t n, const char *s);
/* Drops a partial UTF-8 character at the end of `s` (left by a byte-limited cut,
 * e.g. snprintf). */
void esc_utf8_trim(char *s);

#endif
