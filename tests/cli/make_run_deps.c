/* Issue 37, item 12: `make run` installs only what building and running needs, not the test,
 * sanitizer and paper toolchains (.ci/packages' run line; `make deps` and CI take them all). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(cli_make, make_run_asks_for_the_run_packages_only)
{
    /* env -u: under `make sanitize` the outer make's MAKEFLAGS (CC=clang, …) would reach this one */
    FILE *p = popen("env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -n run CUDA_HOME=/nonexistent "
                    "BUILD=/tmp/attnprof-make-n 2>/dev/null", "r");
    cr_assert(p);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    pclose(p);
    /* the package check: the line that lists the packages (compile lines may name a compiler) */
    const char *line = strstr(text, "libcairo2-dev");
    cr_assert(line, "make -n run names no package: %.300s", text);
    while (line > text && line[-1] != '\n')
        line--;
    char packages[4096];
    snprintf(packages, sizeof packages, "%.*s", (int)strcspn(line, "\n"), line);
    const char *not_for_run[] = {"libcriterion-dev", "clang", "chromium", "texlive", "poppler-utils"};
    for (size_t i = 0; i < sizeof not_for_run / sizeof not_for_run[0]; i++)
        cr_expect(!strstr(packages, not_for_run[i]), "make run would install %s: %s", not_for_run[i], packages);
}
