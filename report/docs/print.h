/* report.pdf through headless Chromium (print.c). */
#ifndef ATTNPROF_PRINT_H
#define ATTNPROF_PRINT_H

#include <stddef.h>

/* Path of a Chromium to print with, from $ATTNPROF_CHROMIUM or PATH: 1 with it in out, or 0
 * when there is none. */
int print_find_chromium(char *out, size_t n);
/* 0 when $ATTNPROF_PDF is "0", "no" or "off" (tests, the golden comparison). */
int print_pdf_enabled(void);
/* The file:// URL of an absolute path, every byte but RFC 3986's unreserved ones and '/'
 * percent-encoded ("/a b/#1" → "file:///a%20b/%231"); malloc'd, never NULL. */
char *print_file_url(const char *abs_path);
/* Prints dir/html_name to dir/pdf_name on `page_size` paper ("A4", "letter"), its
 * CreationDate and ModDate set to `date` (ISO 8601 UTC, "2026-11-30T04:18:30Z": the run's
 * recorded time) or left out when date is empty, so that two prints of one archive are the
 * same bytes. EXIT_OK with *printed 1; EXIT_OK with *printed 0 when Chromium is not
 * installed; EXIT_IO when printing failed; `msg` then holds one line saying so. Never leaves
 * a partial PDF. */
int print_html_to_pdf(const char *dir, const char *html_name, const char *pdf_name, const char *page_size,
                      const char *date, int *printed, char *msg, size_t msglen);
/* The dates of a PDF's Info dictionary in buf[0..n) set from `date` as above, in place and
 * at the same length, so that no byte offset of the file moves. Returns the number of dates
 * rewritten (0: none found in Chromium's form "/CreationDate (D:YYYYMMDDHHmmSS+00'00')"). */
int print_pdf_set_dates(char *buf, size_t n, const char *date);
/* Chromium tags a PDF's structure elements with its DOM node numbers, "(node00000017)", which
 * move by one from print to print of the same page: renumbers them by rank (the smallest 0),
 * in place at the same width, so the order (and the ID tree's sort) stays and two prints of one
 * page are the same bytes. Returns the number of ids rewritten. */
int print_pdf_renumber_nodes(char *buf, size_t n);

#endif
