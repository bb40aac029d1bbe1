/* report/figures/fonts: paper-sized figures are set in the LaTeX body's family, Latin Modern
 * Roman, when fontconfig finds it, and in DejaVu Sans, the stated fallback, when it does not;
 * screen figures stay in DejaVu Sans. Read back from the PDFs' embedded fonts (pdffonts). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "exit_codes.h"
#include "run_cli.h"

/* The embedded font names of a PDF, one line. */
static void fonts_of(const char *pdf, char *out, size_t n)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "pdffonts '%s' | awk 'NR > 2 {printf \"%%s \", $1}'", pdf);
    FILE *p = popen(cmd, "r");
    size_t got = p ? fread(out, 1, n - 1, p) : 0;
    out[got] = '\0';
    if (p)
        pclose(p);
}

static void render_column(const char *dir, const char *fontconfig_file)
{
    char args[1200];
    snprintf(args, sizeof args, "rm -rf %s && cp -r tests/fixtures/h200-4var %s", dir, dir);
    cr_assert_eq(system(args), 0);
    if (fontconfig_file)
        setenv("FONTCONFIG_FILE", fontconfig_file, 1);
    snprintf(args, sizeof args, "report %s -q --format pdf --figure-size column", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    unsetenv("FONTCONFIG_FILE");
}

Test(fonts, paper_figures_in_latin_modern_screen_figures_in_dejavu, .timeout = 90)
{
    cr_assert_eq(system("command -v pdffonts >/dev/null && fc-list | grep -q 'Latin Modern Roman'"), 0,
                 "this test needs pdffonts and Latin Modern Roman: apt-get install poppler-utils fonts-lmodern");
    char work[] = "/tmp/attnprof-fonts-XXXXXX", dir[600], path[800], fonts[512];
    cr_assert_not_null(mkdtemp(work));
    snprintf(dir, sizeof dir, "%s/a", work);
    render_column(dir, NULL);
    static const char *const paper[] = {"timeline-compact-column.pdf", "occupancy-table-column.pdf"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/figures/%s", dir, paper[i]);
        fonts_of(path, fonts, sizeof fonts);
        cr_assert(strstr(fonts, "LMRoman10") && !strstr(fonts, "DejaVu"), "%s: %s", paper[i], fonts);
    }
    snprintf(path, sizeof path, "%s/figures/occupancy.pdf", dir);
    fonts_of(path, fonts, sizeof fonts);
    cr_assert(strstr(fonts, "DejaVuSans") && !strstr(fonts, "LMRoman"), "the screen figure: %s", fonts);

    /* A fontconfig that knows DejaVu only: the paper figures fall back to it. */
    char conf[700];
    snprintf(conf, sizeof conf, "%s/fonts.conf", work);
    FILE *f = fopen(conf, "w");
    cr_assert_not_null(f);
    fprintf(f, "<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"fonts.dtd\">\n<fontconfig><dir>"
               "/usr/share/fonts/truetype/dejavu</dir><cachedir>%s/fc-cache</cachedir></fontconfig>\n", work);
    fclose(f);
    render_column(dir, conf);
    snprintf(path, sizeof path, "%s/figures/%s", dir, paper[0]);
    fonts_of(path, fonts, sizeof fonts);
    cr_assert(strstr(fonts, "DejaVuSans") && !strstr(fonts, "LMRoman"), "the fallback: %s", fonts);
    remove_tree(work);
}
