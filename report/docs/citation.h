/* How to cite attnprof, in two formats from one source: the report's BibTeX entry, the
 * CITATION.cff written beside every report, and the repository's CITATION.cff are all
 * written here from the same fields and the same version string, so they cannot name
 * different versions or titles. */
#ifndef ATTNPROF_CITATION_H
#define ATTNPROF_CITATION_H

#include <stdio.h>

/* The version as a citation field: letters, digits and -._+ only (a run.json string may
 * hold anything); "" when nothing is left. */
void citation_version(const char *tool_version, char *out, size_t n);
/* The four-digit year that starts an ISO date ("2026-11-30T..."), or "" . */
void citation_year(const char *date, char *out, size_t n);

/* The BibTeX entries of attnprof `version` (from citation_version; "" = not recorded) for a
 * run recorded in `year` ("" = unknown): @software{attnprof}, then the same as
 * @misc{attnprof-misc} for the classic styles that know no @software. */
void citation_write_bibtex(FILE *f, const char *version, const char *year);
/* CITATION.cff (CFF 1.2.0) of attnprof `version`, with `year` as its preferred
 * citation's year and the LICENSE's SPDX id. With version "" the file names no version: the repository's own
 * CITATION.cff, which cannot name the commit that holds it. */
void citation_write_cff(FILE *f, const char *version, const char *year);
/* The same as a new string (caller frees). */
char *citation_cff(const char *version, const char *year);

#endif
