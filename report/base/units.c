/* Numbers as text shared by the documents and the figures (units.h), so that a
 * figure's label and the table beside it cannot round one number two ways. */
#include "units.h"

#include <math.h>
#include <string.h>
#include <stdio.h>

/* A time in prose: "93.4 µs", "1.08 ms", "12.3 ms". */
void format_us(double us, char *out, size_t n)
{
    if (!isfinite(us))
        snprintf(out, n, "–");
    else if (us >= 10000)
        snprintf(out, n, "%.1f ms", us / 1000);
    else if (us >= 1000)
        snprintf(out, n, "%.2f ms", us / 1000);
    else if (us >= 100)
        snprintf(out, n, "%.0f µs", us);
    else
        snprintf(out, n, "%.1f µs", us);
}

void units_us_column(double us, char *out, size_t n)
{
    if (!isfinite(us))
        snprintf(out, n, "–");
    else if (us >= 100)
        snprintf(out, n, "%.0f µs", us);
    else
        snprintf(out, n, "%.1f µs", us);
}

int units_ratio_decimals(double lo, double hi)
{
    int d = 2;
    for (; d < 4 && lo != hi; d++) {
        char a[48], b[48];
        snprintf(a, sizeof a, "%.*f", d, lo);
        snprintf(b, sizeof b, "%.*f", d, hi);
        if (strcmp(a, b) != 0)
            break;
    }
    return d;
}

void format_us_column(double us, char *out, size_t n) { units_us_column(us, out, n); }

size_t units_utf8_columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

const char *const units_superscript_digit[10] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                                 "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};

void units_superscript(double v, int decimals, char *out, size_t n)
{
    char plain[48];
    snprintf(plain, sizeof plain, "%.*f", decimals, v);
    size_t len = 0;
    out[0] = '\0';
    for (const char *c = plain; *c && len + 4 < n; c++) {
        const char *piece = *c == '-' ? SUPERSCRIPT_MINUS : *c == '.' ? MIDDLE_DOT
                            : *c >= '0' && *c <= '9' ? units_superscript_digit[*c - '0'] : "";
        len += (size_t)snprintf(out + len, n - len, "%s", piece);
    }
}

const char *units_plural(double n, const char *noun, char *out, size_t len)
{
    size_t w = strlen(noun);
    if (n == 1 || !w) {
        snprintf(out, len, "%s", noun);
        return out;
    }
    char last = noun[w - 1], before = w > 1 ? noun[w - 2] : '\0';
    int vowel_before = before && strchr("aeiouAEIOU", before);
    if ((last == 'y' || last == 'Y') && before && !vowel_before)
        snprintf(out, len, "%.*sies", (int)(w - 1), noun);
    else if (last == 's' || last == 'x' || (last == 'h' && (before == 's' || before == 'c')))
        snprintf(out, len, "%ses", noun);
    else
        snprintf(out, len, "%ss", noun);
    return out;
}

const char *units_count_noun(double n, const char *noun, char *out, size_t len)
{
    char word[160];
    units_plural(n, noun, word, sizeof word);
    /* a whole count in full (%g would write 2250000 as 2.25e+06), a median like 2.5 as %g does */
    if (n == floor(n) && fabs(n) < 1e15)
        snprintf(out, len, "%.0f %s", n, word);
    else
        snprintf(out, len, "%g %s", n, word);
    return out;
}

const char *units_pair_count(double a, double b, const char *noun, char *out, size_t len)
{
    char word[160];
    if (a == 1 && b == 1) {
        snprintf(out, len, "1 %s each", noun);
        return out;
    }
    units_plural(2, noun, word, sizeof word);
    snprintf(out, len, "%g and %g %s", a, b, word);
    return out;
}

const char *human_bytes(double b, char *buf, size_t n)
{
    if (b >= 1 << 30)
        snprintf(buf, n, "%.3g GiB", b / (1 << 30));
    else if (b >= 1 << 20)
        snprintf(buf, n, "%.3g MiB", b / (1 << 20));
    else if (b >= 1 << 10)
        snprintf(buf, n, "%.3g KiB", b / (1 << 10));
    else
        snprintf(buf, n, "%.0f B", b);
    return buf;
}

void units_version_text(int v, const char *none, char *out, size_t n)
{
    if (v <= 0)
        snprintf(out, n, "%s", none);
    else
        snprintf(out, n, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
}
