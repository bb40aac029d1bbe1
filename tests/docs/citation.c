/* docs/citation: the BibTeX footer holds @software and, for the classic styles that know no
 * @software, the same entry as @misc; CITATION.cff names the LICENSE by its SPDX id. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../slurp.h"
#include "citation.h"

static char *bibtex_of(const char *version, const char *year)
{
    static char *buf; /* static: the stream writes its address after this returns, as gcc sees it */
    static size_t len;
    buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    citation_write_bibtex(f, version, year);
    fclose(f);
    return buf;
}

/* The value of `field` in the entry that starts at `entry`, into out. */
static void field_of(const char *entry, const char *field, char *out, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, "\n  %s", field);
    const char *p = strstr(entry, key);
    cr_assert_not_null(p, "%s in %s", field, entry);
    p = strchr(p, '{') + 1;
    const char *end = strstr(p, "},\n");
    snprintf(out, n, "%.*s", (int)(end - p), p);
}

Test(citation, misc_beside_software_with_the_same_fields)
{
    char *bib = bibtex_of("v1.2-3-gabc", "2026");
    const char *sw = strstr(bib, "@software{attnprof,"), *misc = strstr(bib, "@misc{attnprof-misc,");
    cr_assert(sw && misc && sw < misc, "%s", bib);
    static const char *const shared[] = {"title", "author", "note", "year"};
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) {
        char a[256], b[256];
        field_of(sw, shared[i], a, sizeof a);
        field_of(misc, shared[i], b, sizeof b);
        cr_expect_str_eq(a, b, "%s", shared[i]);
    }
    char how[256];
    field_of(misc, "howpublished", how, sizeof how);
    cr_expect_not_null(strstr(how, "version v1.2-3-gabc"), "%s", how);
    cr_expect_not_null(strstr(how, "BSD-3-Clause"), "%s", how);
    free(bib);
}

Test(citation, cff_names_the_license_the_repository_holds)
{
    char *cff = citation_cff("", "");
    cr_assert_not_null(strstr(cff, "\nlicense: BSD-3-Clause\n"), "%s", cff);
    free(cff);
    char *license = slurp_required("LICENSE");
    cr_expect_eq(strncmp(license, "BSD 3-Clause License\n", 21), 0, "LICENSE is the BSD 3-Clause text");
    cr_expect_not_null(strstr(license, "Copyright (c) 2026, the attnprof authors"));
    cr_expect_not_null(strstr(license, "Neither the name of the copyright holder"), "the third clause");
    free(license);
}
