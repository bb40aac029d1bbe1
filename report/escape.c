/* Escaping of archive strings per target (escape.h). Each function writes only
 * what its target reads as literal text; the tests in tests/test_hostile.c feed
 * each one the strings the hardening audit used (issue 15, D2). */
#include "escape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

void esc_md_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (is_control(*p))
            fputc(' ', f);
        else if (strchr("\\`|[]!<", *p))
            fputc('\\', f), fputc(*p, f);
        else
            fputc(*p, f);
    }
}

static size_t longest_backtick_run(const char *s)
{
    size_t best = 0, run = 0;
    for (; *s; s++) {
        run = *s == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    return best;
}

void esc_md_code(FILE *f, const char *s, int in_table)
{
    size_t fence = longest_backtick_run(s) + 1;
    size_t len = strlen(s);
    int pad = len && (s[0] == '`' || s[len - 1] == '`');
    for (size_t i = 0; i < fence; i++)
        fputc('`', f);
    if (pad)
        fputc(' ', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (is_control(*p))
            fputc(' ', f);
        else if (*p == '|' && in_table)
            fputs("\\|", f);
        else
            fputc(*p, f);
    }
    if (pad)
        fputc(' ', f);
    for (size_t i = 0; i < fence; i++)
        fputc('`', f);
}

void esc_md_code_buf(char *out, size_t n, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        esc_copy_utf8(out, n, "`?`");
        return;
    }
    esc_md_code(f, s, 0);
    fclose(f);
    if (!esc_copy_utf8(out, n, buf)) /* cut: keep it a code span */
        esc_copy_utf8(out, n, "`…`");
    free(buf);
}

void esc_csv_field(FILE *f, const char *s, int always_quote)
{
    int quote = always_quote || strpbrk(s, ",\"\r\n") != NULL;
    int neutralise = s[0] && strchr("=+-@\t\r", s[0]);
    if (neutralise)
        quote = 1;
    if (quote)
        fputc('"', f);
    if (neutralise)
        fputc('\'', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    if (quote)
        fputc('"', f);
}

char *esc_terminal(char *out, size_t n, const char *s)
{
    if (!n)
        return out;
    size_t j = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && j + 1 < n) {
        if (is_control(*p)) {
            p++;
            continue;
        }
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) { /* C1 controls (CSI is 0x9b) */
            p += 2;
            continue;
        }
        out[j++] = (char)*p++;
    }
    out[j] = '\0';
    esc_utf8_trim(out);
    return out;
}

void esc_utf8_trim(char *s)
{
    size_t len = strlen(s);
    /* Back up over continuation bytes to the lead byte of the last character. */
    size_t i = len;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80 && len - i < 3)
        i--;
    if (i == 0)
        return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (lead < 0x80)
        return;
    if (len - (i - 1) < need)
        s[i - 1] = '\0';
}

int esc_copy_utf8(char *out, size_t n, const char *s)
{
    if (!n)
        return 0;
    size_t len = strlen(s);
    if (len < n) {
        memcpy(out, s, len + 1);
        return 1;
    }
    memcpy(out, s, n - 1);
    out[n - 1] = '\0';
    esc_utf8_trim(out);
    return 0;
}

void esc_md_text_buf(char *out, size_t n, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        esc_copy_utf8(out, n, "?");
        return;
    }
    esc_md_text(f, s);
    fclose(f);
    esc_copy_utf8(out, n, buf);
    /* A cut inside an escape leaves a lone backslash: drop it. */
    size_t l = strlen(out), k = 0;
    while (k < l && out[l - 1 - k] == '\\')
        k++;
    if (k % 2)
        out[l - 1] = '\0';
    free(buf);
}

void esc_csv_number(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, ",%.6g", x);
    else
        fputs(",", f);
}
