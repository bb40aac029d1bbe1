/* The figures' font families (fig.h). Screen figures are set in DejaVu Sans. Paper-sized
 * figures (--figure-size) go into a LaTeX document whose body is Latin Modern Roman (the
 * lmodern package): they are set in it when fontconfig finds that family (Debian's
 * fonts-lmodern), and in DejaVu Sans, the stated fallback, when it does not. fontconfig
 * always answers a match with some font, so the family it returns is compared with the
 * one asked for. A context drawing (or measuring) a paper figure carries the family as
 * cairo user data; fig_font reads it. */
#include "fig.h"

#include <fontconfig/fontconfig.h>
#include <pthread.h>
#include <string.h>

static const char *paper_family = FIG_FONT;
static pthread_once_t paper_once = PTHREAD_ONCE_INIT;
static const cairo_user_data_key_t family_key;

static void find_paper_family(void)
{
    FcPattern *want = FcNameParse((const FcChar8 *)FIG_PAPER_FONT);
    if (!want)
        return;
    FcConfigSubstitute(NULL, want, FcMatchPattern);
    FcDefaultSubstitute(want);
    FcResult res;
    FcPattern *got = FcFontMatch(NULL, want, &res);
    FcChar8 *family = NULL;
    if (got && FcPatternGetString(got, FC_FAMILY, 0, &family) == FcResultMatch && family &&
        !strcmp((const char *)family, FIG_PAPER_FONT))
        paper_family = FIG_PAPER_FONT;
    if (got)
        FcPatternDestroy(got);
    FcPatternDestroy(want);
}

const char *fig_paper_family(void)
{
    pthread_once(&paper_once, find_paper_family);
    return paper_family;
}

void fig_use_paper_font(cairo_t *cr, int paper)
{
    cairo_set_user_data(cr, &family_key, paper ? (void *)fig_paper_family() : NULL, NULL);
}

const char *fig_family_of(cairo_t *cr)
{
    const char *family = cairo_get_user_data(cr, &family_key);
    return family ? family : FIG_FONT;
}
