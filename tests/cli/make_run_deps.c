/* Issue 37, item 12: `make run` installs only what building and running needs, not the test,
 * sanitizer and paper toolchains (.ci/packages' run line; `make deps` and CI take them all). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(cli_make, make_run_asks_for_the_run_packages_only)
{
    FILE *p = popen("make -n run CUDA_HOME=/nonexistent BUILD=/tmp/attnprof-make-n 2>/dev/null", "r");
    cr_assert(p);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    pclose(p);
    cr_assert(strstr(text, "libcairo2-dev"), "make -n run names no package: %.300s", text);
    const char *not_for_run[] = {"libcriterion-dev", "clang", "chromium", "texlive", "poppler-utils"};
    for (size_t i = 0; i < sizeof not_for_run / sizeof not_for_run[0]; i++)
        cr_expect(!strstr(text, not_for_run[i]), "make run would install %s", not_for_run[i]);
}
