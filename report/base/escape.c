/* Escaping of archive strings per target (escape.h). Each function writes only
 * what its target reads as literal text; the tests in tests/base/escape.c feed
 * each one the strings of the hostile archives (tests/fixtures/hostile/). */
#include "escape.h"
#include "alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }
static size_t utf8_char_len(const unsigned char *p, unsigned *cp);
static int terminal_control(unsigned c);

/* Where a string starts (after spaces), these would open a block if the string
 * began a line ("- " + a name is a list item whose name may start another list,
 * a quote or an ordered item): escaped there, wherever the writer puts it. */
static size_t block_marker_at_start(const unsigned char *s)
{
    size_t i = 0;
    while (s[i] == ' ')
        i++;
    unsigned char c = s[i], next = c ? s[i + 1] : 0;
    int ends = next == ' ' || next == '\t' || next == '\0';
    if (c == '>' || ((c == '-' || c == '+' || c == '*') && (ends || next == c)) || (c == '_' && next == '_'))
        return i + 1; /* a quote, a list item, a thematic break ("---", "***", "___") */
    size_t d = i;
    while (s[d] >= '0' && s[d] <= '9')
        d++;
    if (d > i && (s[d] == '.' || s[d] == ')') && (s[d + 1] == ' ' || s[d + 1] == '\t' || s[d + 1] == '\0'))
        return d + 1; /* an ordered list item */
    return 0;
}

void esc_md_text(FILE *f, const char *s)
{
    size_t marker = block_marker_at_start((const unsigned char *)s); /* 1 + its index, or 0 */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (is_control(*p))
            fputc(' ', f);
        else if (strchr("\\`|[]!<#", *p) || (size_t)(p - (const unsigned char *)s) + 1 == marker)
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

static void code_buf(char *out, size_t n, const char *s, int in_table)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        esc_copy_utf8(out, n, "`?`");
        return;
    }
    esc_md_code(f, s, in_table);
    fclose(f);
    if (!esc_copy_utf8(out, n, buf)) /* cut: keep it a code span */
        esc_copy_utf8(out, n, "`…`");
    free(buf);
}

void esc_md_code_buf(char *out, size_t n, const char *s) { code_buf(out, n, s, 0); }

void esc_md_code_cell_buf(char *out, size_t n, const char *s) { code_buf(out, n, s, 1); }

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
    /* Terminal controls (ESC, C0 but tab and line ends, DEL, C1, bidi overrides) are
     * dropped: `cat summary.csv` must not act on them. */
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp;
        size_t len = utf8_char_len(p, &cp);
        if (!len) {
            fputc(*p++, f); /* not UTF-8: kept as the byte it is */
            continue;
        }
        if (!terminal_control(cp) || cp == '\t' || cp == '\n' || cp == '\r') {
            if (cp == '"')
                fputc('"', f);
            fwrite(p, 1, len, f);
        }
        p += len;
    }
    if (quote)
        fputc('"', f);
}

/* Length of the valid UTF-8 character at p (1 to 4), or 0 when p does not start one
 * (a stray continuation byte, an overlong form, a surrogate, a cut sequence). */
static size_t utf8_char_len(const unsigned char *p, unsigned *cp)
{
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    size_t len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
    if (!len || p[0] > 0xf4)
        return 0;
    unsigned c = p[0] & (0x7f >> len);
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (p[k] & 0x3f);
    }
    if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) || (len == 4 && (c < 0x10000 || c > 0x10ffff)))
        return 0;
    *cp = c;
    return len;
}

/* What a terminal acts on instead of showing: C0 (ESC included), DEL, C1 (CSI is
 * U+009B), and the bidirectional overrides that reorder what is shown. */
static int terminal_control(unsigned c)
{
    return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
           (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

/* Calls put(ctx, bytes, len) for each character of s that a terminal shows as
 * itself; a byte that is no valid UTF-8 becomes '?' (a lone 0x9b is CSI to an
 * 8-bit terminal). */
static void terminal_chars(const char *s, void (*put)(void *, const char *, size_t), void *ctx)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned cp;
        size_t len = utf8_char_len(p, &cp);
        if (!len) {
            put(ctx, "?", 1);
            p++;
            continue;
        }
        if (!terminal_control(cp))
            put(ctx, (const char *)p, len);
        p += len;
    }
}

typedef struct term_buf {
    char *out;
    size_t n, j;
    int full;
} term_buf;

static void put_buf(void *ctx, const char *c, size_t len)
{
    term_buf *b = ctx;
    if (b->full || b->j + len + 1 > b->n) {
        b->full = 1; /* cut between characters */
        return;
    }
    memcpy(b->out + b->j, c, len);
    b->j += len;
}

char *esc_terminal(char *out, size_t n, const char *s)
{
    if (!n)
        return out;
    term_buf b = {out, n, 0, 0};
    terminal_chars(s, put_buf, &b);
    out[b.j] = '\0';
    return out;
}

static void put_file(void *ctx, const char *c, size_t len) { fwrite(c, 1, len, ctx); }

void esc_terminal_fputs(const char *s, FILE *f) { terminal_chars(s, put_file, f); }

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

char *esc_html_dup(const char *s)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp;
        size_t n = utf8_char_len(p, &cp);
        if (!n) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD for a byte that is not UTF-8 */
            p++;
            continue;
        }
        if (terminal_control(cp))
            ;
        else if (cp == '&')
            fputs("&amp;", f);
        else if (cp == '<')
            fputs("&lt;", f);
        else if (cp == '>')
            fputs("&gt;", f);
        else if (cp == '"')
            fputs("&quot;", f);
        else if (cp == '\'')
            fputs("&#39;", f);
        else
            fwrite(p, 1, n, f);
        p += n;
    }
    fclose(f);
    return buf;
}
