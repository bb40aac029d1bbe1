/* report.html and every other self-contained page: Markdown through cmark-gfm (tables
 * on), a <wbr> at the break points of identifiers, inside templates/report.html with
 * templates/style.css inlined; a page that would load anything but a data: URI is refused. */
#include "report.h"

#include "alloc.h"
#include "escape.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char _binary_templates_report_html_start[], _binary_templates_report_html_end[];
extern const char _binary_templates_style_css_start[], _binary_templates_style_css_end[];

static void append_template_part(FILE *out, const char *start, const char *end, const char *title,
                                 const char *body, const char *version)
{
    const char *p = start;
    while (p < end) {
        const char *open = memmem(p, (size_t)(end - p), "{{", 2);
        if (!open) {
            fwrite(p, 1, (size_t)(end - p), out);
            break;
        }
        fwrite(p, 1, (size_t)(open - p), out);
        const char *close = memmem(open, (size_t)(end - open), "}}", 2);
        if (!close)
            break;
        size_t klen = (size_t)(close - open - 2);
        if (klen == 5 && !memcmp(open + 2, "title", 5))
            fputs(title, out);
        else if (klen == 4 && !memcmp(open + 2, "body", 4))
            fputs(body, out);
        else if (klen == 7 && !memcmp(open + 2, "version", 7))
            fputs(version, out);
        else if (klen == 5 && !memcmp(open + 2, "style", 5))
            fwrite(_binary_templates_style_css_start, 1,
                   (size_t)(_binary_templates_style_css_end - _binary_templates_style_css_start), out);
        p = close + 2;
    }
}

/* Inside <code> elements, a <wbr> after each '_' (and each ':' of "::"): a long
 * identifier may break there, and only there, on a narrow screen or a printed page.
 * Copying the name still gives the name. The tag is ours, never archive text. */
static char *code_break_points(const char *html)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    int in_code = 0;
    for (const char *p = html; *p; p++) {
        if (*p == '<') {
            if (!strncmp(p, "<code>", 6) || !strncmp(p, "<code ", 6))
                in_code = 1;
            else if (!strncmp(p, "</code>", 7))
                in_code = 0;
        }
        fputc(*p, f);
        if (in_code && (*p == '_' || (*p == ':' && p[1] != ':' && p > html && p[-1] == ':')) && p[1] != '<')
            fputs("<wbr>", f);
    }
    fclose(f);
    return buf;
}

/* 1 when `s` is exactly an anchor we write, <a id="NAME"> (NAME: letters, digits, '-', '_'),
 * then `tail` ("" for the opening tag alone, "</a>\n" for an HTML block). */
static int our_anchor(const char *s, const char *tail)
{
    if (strncmp(s, "<a id=\"", 7))
        return 0;
    s += 7;
    const char *name = s;
    while (isalnum((unsigned char)*s) || *s == '-' || *s == '_')
        s++;
    return s > name && !strncmp(s, "\">", 2) && !strcmp(s + 2, tail);
}

/* A URL cmark's safe mode would blank: javascript:, vbscript:, file:, and data: other than a
 * PNG, GIF, JPEG or WebP image. */
static int dangerous_url(const char *url)
{
    static const char *const schemes[] = {"javascript:", "vbscript:", "file:"};
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (!strncasecmp(url, schemes[i], strlen(schemes[i])))
            return 1;
    if (strncasecmp(url, "data:", 5))
        return 0;
    static const char *const images[] = {"data:image/png", "data:image/gif", "data:image/jpeg", "data:image/webp"};
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++)
        if (!strncasecmp(url, images[i], strlen(images[i])))
            return 0;
    return 1;
}

/* Raw HTML in the Markdown: the documents write none but the anchors that the summary's links
 * point to (finding_phrases.h). Those are kept; any other raw HTML reads as cmark's safe mode
 * writes it, "<!-- raw HTML omitted -->", and a dangerous URL is blanked as safe mode blanks
 * it, so the page is rendered as safely as in safe mode. */
static void keep_only_anchors(cmark_node *doc)
{
    static const char omitted[] = "<!-- raw HTML omitted -->";
    cmark_iter *it = cmark_iter_new(doc);
    int after_anchor = 0; /* the previous node was an opening anchor: "</a>" may close it */
    for (cmark_event_type ev; (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;) {
        cmark_node *node = cmark_iter_get_node(it);
        if (ev != CMARK_EVENT_ENTER)
            continue;
        cmark_node_type type = cmark_node_get_type(node);
        if ((type == CMARK_NODE_LINK || type == CMARK_NODE_IMAGE) && cmark_node_get_url(node) &&
            dangerous_url(cmark_node_get_url(node)))
            cmark_node_set_url(node, "");
        const char *lit = cmark_node_get_literal(node);
        int keep = 0, opening = 0;
        if (type == CMARK_NODE_HTML_INLINE && lit) {
            opening = our_anchor(lit, "");
            keep = opening || (after_anchor && !strcmp(lit, "</a>"));
        } else if (type == CMARK_NODE_HTML_BLOCK && lit)
            keep = our_anchor(lit, "</a>\n");
        if ((type == CMARK_NODE_HTML_INLINE || type == CMARK_NODE_HTML_BLOCK) && !keep)
            cmark_node_set_literal(node, type == CMARK_NODE_HTML_BLOCK ? "<!-- raw HTML omitted -->\n" : omitted);
        after_anchor = opening;
    }
    cmark_iter_free(it);
}

char *report_html(const char *markdown, const char *title, char *err, size_t errlen)
{
    cmark_gfm_core_extensions_ensure_registered();
    cmark_syntax_extension *table = cmark_find_syntax_extension("table");
    if (!table) {
        snprintf(err, errlen, "cmark-gfm has no table extension: install libcmark-gfm-extensions");
        return NULL;
    }
    /* cmark's own allocator aborts when memory runs out: ours says so in one line (alloc.h). */
    static cmark_mem mem = {attn_calloc, attn_realloc, free};
    cmark_parser *p = cmark_parser_new_with_mem(CMARK_OPT_DEFAULT, &mem);
    cmark_parser_attach_syntax_extension(p, table);
    cmark_parser_feed(p, markdown, strlen(markdown));
    cmark_node *doc = cmark_parser_finish(p);
    keep_only_anchors(doc);
    char *body = cmark_render_html(doc, CMARK_OPT_UNSAFE, cmark_parser_get_syntax_extensions(p));
    cmark_node_free(doc);
    cmark_parser_free(p);
    if (!body) {
        snprintf(err, errlen, "cmark-gfm could not render the report");
        return NULL;
    }
    /* Self-contained: every resource the page loads is a data: URI. Archive strings
     * are escaped before this; this is the last line of defence. */
    for (const char *src = strstr(body, "src=\""); src; src = strstr(src + 5, "src=\""))
        if (strncmp(src + 5, "data:", 5) != 0) {
            snprintf(err, errlen, "the report would load a remote resource; refusing to write it");
            free(body);
            return NULL;
        }
    char *broken = code_break_points(body);
    free(body);
    body = broken;
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    char *esc_title = esc_html_dup(title); /* it holds the GPU name and dtype from run.json */
    append_template_part(f, _binary_templates_report_html_start, _binary_templates_report_html_end, esc_title, body,
                         ATTNPROF_VERSION);
    fclose(f);
    free(esc_title);
    free(body);
    return buf;
}
