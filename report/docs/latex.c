/* Text for LaTeX and plain text: literal text escaped for LaTeX (Latin letters kept as UTF-8,
 * the characters attnprof writes as commands, other scripts as [U+XXXX]), and the findings' Markdown read back span by span
 * as plain text (summary.csv) or LaTeX. Archive strings are escaped here as everywhere
 * (escape.h): a name never becomes a command. The tables are latex_tables.c's. */
#include "latex.h"

#include "alloc.h"
#include "escape.h"

#include <stdlib.h>
#include <string.h>

/* ---- findings' Markdown, span by span ------------------------------------- */

void md_spans(const char *md, md_span_fn span, void *ctx)
{
    char *buf = malloc(strlen(md) + 1);
    if (!buf)
        attn_oom();
    size_t n = 0;
    const char *p = md;
    while (*p) {
        if (*p == '`') {
            size_t fence = 0;
            while (p[fence] == '`')
                fence++;
            /* the closing run of exactly `fence` backticks */
            const char *q = p + fence, *close = NULL;
            while (*q) {
                if (*q == '`') {
                    size_t r = 0;
                    while (q[r] == '`')
                        r++;
                    if (r == fence) {
                        close = q;
                        break;
                    }
                    q += r;
                } else {
                    q++;
                }
            }
            if (close) {
                if (n)
                    span(ctx, buf, n, 0);
                n = 0;
                const char *s = p + fence, *e = close;
                if (e - s >= 2 && s[0] == ' ' && e[-1] == ' ') /* the padding of a span that starts with '`' */
                    s++, e--;
                for (const char *c = s; c < e; c++) {
                    if (c[0] == '\\' && c[1] == '|' && c + 1 < e) /* "\|" in a table cell is '|' */
                        c++;
                    buf[n++] = *c;
                }
                span(ctx, buf, n, 1);
                n = 0;
                p = close + fence;
                continue;
            }
            /* an unclosed run is literal text */
            for (size_t i = 0; i < fence; i++)
                buf[n++] = '`';
            p += fence;
            continue;
        }
        if (p[0] == '\\' && p[1] && strchr("\\`|[]!<*_#>-+.(){}", p[1])) {
            buf[n++] = p[1];
            p += 2;
            continue;
        }
        buf[n++] = *p++;
    }
    if (n)
        span(ctx, buf, n, 0);
    free(buf);
}

static void plain_span(void *ctx, const char *t, size_t len, int is_code)
{
    (void)is_code;
    fwrite(t, 1, len, (FILE *)ctx);
}

char *md_to_plain(const char *md)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    md_spans(md, plain_span, f);
    fclose(f);
    return buf;
}

/* ---- LaTeX ------------------------------------------------------------------ */

static const struct {
    const char *utf8, *tex;
} latex_chars[] = {
    {"\xc2\xb5", "\\textmu{}"},            /* µ */
    {"\xe2\x86\x92", "\\ensuremath{\\rightarrow}"}, /* → */
    {"\xe2\x80\x93", "--"},                 /* – */
    {"\xe2\x80\x94", "---"},                /* — */
    {"\xc3\x97", "\\ensuremath{\\times}"},  /* × */
    {"\xe2\x80\xa6", "\\ldots{}"},          /* … */
    {"\xe2\x89\xa5", "\\ensuremath{\\geq}"}, /* ≥ */
    {"\xe2\x89\xa4", "\\ensuremath{\\leq}"}, /* ≤ */
    {"\xe2\x80\x96", "\\ensuremath{\\|}"},  /* ‖ */
    {"\xe2\x88\x9a", "\\ensuremath{\\surd}"}, /* √ */
    {"\xc2\xb7", "\\ensuremath{\\cdot}"},   /* · */
    {"\xe2\x88\x92", "\\ensuremath{-}"},    /* − */
    {"\xe2\x89\x88", "\\ensuremath{\\approx}"}, /* ≈ */
    {"\xe2\x89\xa0", "\\ensuremath{\\neq}"}, /* ≠ */
};

/* Bytes of the valid UTF-8 sequence (2 to 4 bytes, no overlong form, no surrogate, at most
 * U+10FFFF) at s[0..len), its code point in *cp; or 0. */
static size_t utf8_sequence(const char *p, size_t len, unsigned *cp)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (!n || n > len)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) ||
        (s[0] == 0xf4 && s[1] >= 0x90))
        return 0; /* overlong, surrogate, or beyond U+10FFFF */
    *cp = s[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++)
        *cp = *cp << 6 | (s[i] & 0x3f);
    return n;
}

static void latex_escaped(FILE *f, const char *s, size_t len, int code)
{
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) {
            fputc(' ', f);
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t k;
            for (k = 0; k < sizeof latex_chars / sizeof *latex_chars; k++) {
                size_t m = strlen(latex_chars[k].utf8);
                if (i + m <= len && !memcmp(s + i, latex_chars[k].utf8, m)) {
                    fputs(latex_chars[k].tex, f);
                    i += m;
                    break;
                }
            }
            if (k == sizeof latex_chars / sizeof *latex_chars) {
                /* a Latin letter (U+00A0-U+017F: what inputenc and fontenc T1 set) as itself in
                 * UTF-8; a character of another script as "[U+XXXX]", so that pdflatex compiles
                 * the table; a byte that starts no valid sequence as '?' */
                unsigned cp;
                size_t m = utf8_sequence(s + i, len - i, &cp);
                if (m && cp >= 0xa0 && cp <= 0x17f)
                    fwrite(s + i, 1, m, f);
                else if (m)
                    fprintf(f, "[U+%04X]", cp);
                else
                    fputc('?', f);
                i += m ? m : 1;
            }
            continue;
        }
        switch (c) {
        case '\\': fputs("\\textbackslash{}", f); break;
        case '{': fputs("\\{", f); break;
        case '}': fputs("\\}", f); break;
        case '#': fputs("\\#", f); break;
        case '$': fputs("\\$", f); break;
        case '%': fputs("\\%", f); break;
        case '&': fputs("\\&", f); break;
        case '~': fputs("\\textasciitilde{}", f); break;
        case '^': fputs("\\textasciicircum{}", f); break;
        case '_': fputs(code ? "\\_\\allowbreak{}" : "\\_", f); break;
        case '<': fputs("\\textless{}", f); break;
        case '>': fputs("\\textgreater{}", f); break;
        case '|': fputs("\\textbar{}", f); break;
        case '"': fputs("\\textquotedbl{}", f); break;
        case '-': fputs(code ? "-{}" : "-", f); break; /* no -- ligature inside a name */
        default: fputc(c, f);
        }
        i++;
    }
}

void esc_latex_text(FILE *f, const char *s, size_t len) { latex_escaped(f, s, len, 0); }

void esc_latex_code(FILE *f, const char *s, size_t len)
{
    fputs("\\texttt{", f);
    latex_escaped(f, s, len, 1);
    fputc('}', f);
}

static void latex_span(void *ctx, const char *t, size_t len, int is_code)
{
    if (is_code)
        esc_latex_code((FILE *)ctx, t, len);
    else
        esc_latex_text((FILE *)ctx, t, len);
}

void latex_from_md(FILE *f, const char *md) { md_spans(md, latex_span, f); }

