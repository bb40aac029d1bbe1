/* `make run` installs only what building and running needs, not the test,
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

/* The sm_90-only build (`make CUDA_ARCH="-gencode arch=compute_90,code=sm_90"`, the recipe for a
 * small device tree) still builds the Hopper flash object for sm_90a: a CUDA_ARCH given on the
 * command line overrode the object's own target-specific one, so flash_sm90a_built() returned 0
 * and the H200 ran the portable kernel (bench/results/2026-12-03-decode-grid.md). */
Test(cli_make, a_command_line_cuda_arch_keeps_the_sm90a_object_on_sm90a)
{
    FILE *p = popen("env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -n -B CUDA_HOME=/nonexistent "
                    "BUILD=/tmp/attnprof-make-n CUDA_ARCH='-gencode arch=compute_90,code=sm_90' "
                    "/tmp/attnprof-make-n/kernels/flash_fwd_sm90a.o 2>/dev/null", "r");
    cr_assert(p);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    pclose(p);
    const char *line = strstr(text, "flash_fwd_sm90a.cu");
    cr_assert(line, "make -n printed no compile line of flash_fwd_sm90a.cu: %.300s", text);
    cr_assert(strstr(text, "arch=compute_90a,code=sm_90a") && strstr(text, "-DATTNPROF_HAVE_SM90A"), "%.600s", text);
    cr_assert(!strstr(text, "arch=compute_90,code=sm_90 "), "the command line's arch reached the sm_90a object: %.600s",
              text);
}
