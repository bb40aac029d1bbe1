/* Surfaces, text, colours and axis arithmetic shared by all figures. */
#include "alloc.h"
#include "fig.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "exit_codes.h"
#include "figures.h"
#include "model_inputs.h"

#include <pthread.h>

/* Every call that can touch a scaled font (choosing a font, measuring or drawing text,
 * destroying a context, finishing or destroying a surface, which subsets the fonts of a
 * PDF or SVG) runs under this lock. Figures are drawn on up to four threads that share
 * cairo's toy font faces and so their scaled fonts, and cairo 1.16 can abort when one
 * thread releases a scaled font whose glyph cache another holds frozen ("Assertion
 * `! scaled_font->cache_frozen' failed", seen once in the test suite under load; reported
 * against cairo by other programs that draw text on threads). Shapes and the PNG encoding,
 * most of the time, stay parallel. */
static pthread_mutex_t font_lock = PTHREAD_MUTEX_INITIALIZER;

const rgb FIG_INK = {0.13, 0.13, 0.13};
const rgb FIG_GREY = {0.42, 0.42, 0.42};
const rgb FIG_GRID = {0.88, 0.88, 0.88};
const rgb FIG_WHITE = {1, 1, 1};

/* ---- surfaces ----------------------------------------------------------- */

static int set_err(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, a, b);
    return EXIT_IO;
}

static cairo_status_t buffer_write(void *closure, const unsigned char *data, unsigned int len)
{
    fig_buffer *b = closure;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 64 * 1024;
        while (cap < b->len + len)
            cap *= 2;
        unsigned char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = 1;
            return CAIRO_STATUS_NO_MEMORY;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return CAIRO_STATUS_SUCCESS;
}

/* Hinting would make glyph advances depend on the surface type; without it a
 * layout measured once is the same in PNG, SVG and PDF. */
static void set_font_options(cairo_t *cr, int kind)
{
    pthread_mutex_lock(&font_lock);
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_font_options_set_antialias(fo, kind == FIG_PNG ? CAIRO_ANTIALIAS_GRAY
                                                         : CAIRO_ANTIALIAS_DEFAULT);
    cairo_set_font_options(cr, fo);
    cairo_font_options_destroy(fo);
    cairo_select_font_face(cr, FIG_FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    pthread_mutex_unlock(&font_lock);
}

/* cairo_destroy and cairo_surface_destroy under the font lock (they may release a scaled font). */
static void destroy_context(cairo_t *cr)
{
    pthread_mutex_lock(&font_lock);
    cairo_destroy(cr);
    pthread_mutex_unlock(&font_lock);
}

static void destroy_surface(cairo_surface_t *s)
{
    pthread_mutex_lock(&font_lock);
    cairo_surface_destroy(s);
    pthread_mutex_unlock(&font_lock);
}

cairo_t *fig_measure_create(void)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t *cr = cairo_create(s);
    destroy_surface(s);
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
        destroy_context(cr);
        return NULL;
    }
    set_font_options(cr, FIG_PDF);
    return cr;
}

void fig_measure_destroy(cairo_t *cr)
{
    if (cr)
        destroy_context(cr);
}

/* A fresh image surface is freshly mapped memory: the kernel zeroes every
 * page on first touch and unmaps it on destroy. Reusing one buffer per thread
 * saves that; the white paint in fig_canvas_open covers every pixel, so what
 * the buffer held before cannot show. */
static cairo_surface_t *image_surface(fig_buffer *pixels, int pw, int ph)
{
    int stride = cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, pw);
    if (!pixels || stride < 0)
        return cairo_image_surface_create(CAIRO_FORMAT_ARGB32, pw, ph);
    size_t need = (size_t)stride * (size_t)ph;
    if (need > pixels->cap) {
        /* malloc's alignment satisfies pixman's 4-byte rows */
        unsigned char *grown = malloc(need);
        if (!grown)
            return cairo_image_surface_create(CAIRO_FORMAT_ARGB32, pw, ph);
        free(pixels->data);
        pixels->data = grown;
        pixels->cap = need;
    }
    return cairo_image_surface_create_for_data(pixels->data, CAIRO_FORMAT_ARGB32, pw, ph, stride);
}

int fig_canvas_open(fig_canvas *c, int kind, const char *path, double w, double h,
                    const char *title, fig_buffer *pixels, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->path = strdup(path);
    if (!c->path)
        attn_oom();
    switch (kind) {
    case FIG_PNG:
        c->surface = image_surface(pixels, (int)ceil(w * FIG_PNG_SCALE), (int)ceil(h * FIG_PNG_SCALE));
        cairo_surface_set_device_scale(c->surface, FIG_PNG_SCALE, FIG_PNG_SCALE);
        break;
    case FIG_SVG:
        c->surface = cairo_svg_surface_create_for_stream(buffer_write, &c->buf, w, h);
        break;
    case FIG_PDF:
        c->surface = cairo_pdf_surface_create_for_stream(buffer_write, &c->buf, w, h);
        if (cairo_surface_status(c->surface) == CAIRO_STATUS_SUCCESS) {
            /* An empty date keeps cairo from writing the current time, so two
             * renders of the same run give the same bytes. */
            cairo_pdf_surface_set_metadata(c->surface, CAIRO_PDF_METADATA_CREATE_DATE, "");
            cairo_pdf_surface_set_metadata(c->surface, CAIRO_PDF_METADATA_TITLE, title ? title : "");
            cairo_pdf_surface_set_metadata(c->surface, CAIRO_PDF_METADATA_CREATOR, "attnprof");
        }
        break;
    default:
        free(c->path);
        c->path = NULL;
        return set_err(err, errlen, "%s: unknown figure format%s", path, "");
    }
    if (cairo_surface_status(c->surface) == CAIRO_STATUS_NO_MEMORY)
        attn_oom(); /* one line and exit 9, as every allocation (alloc.h) */
    if (cairo_surface_status(c->surface) != CAIRO_STATUS_SUCCESS) {
        set_err(err, errlen, "%s: %s", path, cairo_status_to_string(cairo_surface_status(c->surface)));
        destroy_surface(c->surface);
        c->surface = NULL;
        free(c->path);
        c->path = NULL;
        return EXIT_IO;
    }
    c->cr = cairo_create(c->surface);
    set_font_options(c->cr, kind);
    cairo_set_line_join(c->cr, CAIRO_LINE_JOIN_MITER);
    fig_set(c->cr, FIG_WHITE);
    cairo_paint(c->cr);
    return 0;
}

/* cairo's SVG writer names the page group after a process-wide surface
 * counter ("surface17"), which changes with every figure drawn before it.
 * Renumbering the names by first appearance makes the file depend only on
 * its drawing. */
static int write_svg_normalised(FILE *f, const fig_buffer *b)
{
    static const char key[] = "surface";
    const size_t klen = sizeof key - 1;
    long seen[64];
    int n_seen = 0;
    size_t i = 0, copied = 0;
    while (i + klen < b->len) {
        if (memcmp(b->data + i, key, klen) != 0 || !isdigit(b->data[i + klen]) ||
            (i > 0 && isalnum(b->data[i - 1]))) {
            i++;
            continue;
        }
        size_t j = i + klen;
        long id = 0;
        while (j < b->len && isdigit(b->data[j]) && id < 100000000)
            id = id * 10 + (b->data[j++] - '0');
        int k = 0;
        while (k < n_seen && seen[k] != id)
            k++;
        if (k == n_seen && n_seen < 64)
            seen[n_seen++] = id;
        if (fwrite(b->data + copied, 1, i - copied, f) != i - copied ||
            fprintf(f, "surface%d", k + 1) < 0)
            return EXIT_IO;
        copied = i = j;
    }
    if (fwrite(b->data + copied, 1, b->len - copied, f) != b->len - copied)
        return EXIT_IO;
    return 0;
}

/* PNG writing through libpng rather than cairo_surface_write_to_png: cairo
 * asks for zlib level 6 and libpng's search over all five row filters, which
 * made encoding ~90% of `attnprof report`. Our figures are flat colours and
 * anti-aliased text; on them unfiltered rows at level 2 encode 3-6x faster
 * and come out about as small. The pixels written are the ones cairo would
 * write: RGB when every pixel is opaque (always, as canvases start white),
 * else RGBA un-premultiplied with cairo's rounding; bKGD white as cairo. */
enum { PNG_ZLIB_LEVEL = 2 };

static int image_is_opaque(const unsigned char *data, int w, int h, int stride)
{
    for (int y = 0; y < h; y++) {
        const uint32_t *row = (const uint32_t *)(data + (size_t)y * (size_t)stride);
        for (int x = 0; x < w; x++)
            if ((row[x] >> 24) != 0xff)
                return 0;
    }
    return 1;
}

/* cairo's ARGB32 is native-endian premultiplied 0xAARRGGBB. */
static void pack_row(const uint32_t *in, int w, int opaque, unsigned char *out)
{
    if (opaque) {
        for (int x = 0; x < w; x++, out += 3) {
            uint32_t p = in[x];
            out[0] = (unsigned char)(p >> 16);
            out[1] = (unsigned char)(p >> 8);
            out[2] = (unsigned char)p;
        }
        return;
    }
    for (int x = 0; x < w; x++, out += 4) {
        uint32_t p = in[x], a = p >> 24;
        if (a == 0) {
            out[0] = out[1] = out[2] = out[3] = 0;
            continue;
        }
        out[0] = (unsigned char)((((p >> 16) & 0xff) * 255 + a / 2) / a);
        out[1] = (unsigned char)((((p >> 8) & 0xff) * 255 + a / 2) / a);
        out[2] = (unsigned char)(((p & 0xff) * 255 + a / 2) / a);
        out[3] = (unsigned char)a;
    }
}

typedef struct png_failure {
    char *err;
    size_t errlen;
    const char *path;
} png_failure;

static void png_on_error(png_structp png, png_const_charp msg)
{
    png_failure *f = png_get_error_ptr(png);
    int e = errno;
    if (strcasestr(msg, "memory")) /* libpng's and zlib's "out of"/"insufficient memory": exit 9 as every allocation */
        attn_oom();
    if (!strcmp(msg, "Write Error")) /* libpng's words for a failed fwrite: say why */
        set_err(f->err, f->errlen, "%s: cannot write: %s", f->path, e ? strerror(e) : "write failed");
    else
        set_err(f->err, f->errlen, "%s: %s", f->path, msg);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

/* Encodes into `f`; 0, or EXIT_IO with `err` set. Everything that lives across
 * the setjmp is allocated before it, so a longjmp leaks nothing. */
static int write_png_rows(FILE *f, cairo_surface_t *s, png_failure *fail, unsigned char *row)
{
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
    int opaque = image_is_opaque(data, w, h, stride);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, fail, png_on_error,
                                              png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        attn_oom();
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return EXIT_IO;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8,
                 opaque ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_color_16 white = {.red = 0xff, .green = 0xff, .blue = 0xff, .gray = 0xff};
    png_set_bKGD(png, info, &white);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_compression_level(png, PNG_ZLIB_LEVEL);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) {
        pack_row((const uint32_t *)(data + (size_t)y * (size_t)stride), w, opaque, row);
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

static int write_png(cairo_surface_t *s, const char *path, char *err, size_t errlen)
{
    cairo_surface_flush(s);
    if (cairo_image_surface_get_format(s) != CAIRO_FORMAT_ARGB32)
        return set_err(err, errlen, "%s: %s", path, "unexpected image format");
    png_failure fail = {err, errlen, path};
    unsigned char *row = malloc((size_t)cairo_image_surface_get_width(s) * 4 + 1);
    if (!row)
        attn_oom();
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(row);
        return set_err(err, errlen, "%s: %s", path, strerror(errno));
    }
    errno = 0;
    int rc = write_png_rows(f, s, &fail, row);
    free(row);
    if (fclose(f) != 0 && rc == 0)
        rc = set_err(err, errlen, "%s: write failed: %s", path, strerror(errno));
    return rc;
}

int fig_canvas_close(fig_canvas *c, char *err, size_t errlen)
{
    int rc = 0;
    if (!c->surface)
        return EXIT_IO;
    cairo_status_t st = cairo_status(c->cr);
    destroy_context(c->cr);
    c->cr = NULL;
    if (st == CAIRO_STATUS_NO_MEMORY)
        attn_oom();
    if (st != CAIRO_STATUS_SUCCESS) {
        rc = set_err(err, errlen, "%s: drawing failed: %s", c->path, cairo_status_to_string(st));
        if (st != CAIRO_STATUS_NO_MEMORY && st != CAIRO_STATUS_WRITE_ERROR)
            rc = EXIT_BAD_ARCHIVE; /* invalid string, bad matrix...: from the archive's data */
    } else if (c->kind == FIG_PNG) {
        rc = write_png(c->surface, c->path, err, errlen);
    } else {
        pthread_mutex_lock(&font_lock);
        cairo_surface_finish(c->surface); /* subsets the PDF/SVG fonts */
        pthread_mutex_unlock(&font_lock);
        st = cairo_surface_status(c->surface);
        if (st == CAIRO_STATUS_NO_MEMORY || c->buf.failed)
            attn_oom();
        if (st != CAIRO_STATUS_SUCCESS || c->buf.failed) {
            rc = set_err(err, errlen, "%s: %s", c->path,
                         c->buf.failed ? "out of memory" : cairo_status_to_string(st));
        } else {
            FILE *f = fopen(c->path, "wb");
            if (!f) {
                rc = set_err(err, errlen, "%s: %s", c->path, strerror(errno));
            } else {
                int wrc = c->kind == FIG_SVG
                              ? write_svg_normalised(f, &c->buf)
                              : (fwrite(c->buf.data, 1, c->buf.len, f) == c->buf.len ? 0 : -1);
                if (fclose(f) != 0 || wrc != 0)
                    rc = set_err(err, errlen, "%s: write failed: %s", c->path, strerror(errno));
            }
        }
    }
    destroy_surface(c->surface);
    c->surface = NULL;
    free(c->buf.data);
    memset(&c->buf, 0, sizeof c->buf);
    free(c->path);
    c->path = NULL;
    return rc;
}

/* ---- text ----------------------------------------------------------------- */

void fig_font(cairo_t *cr, double size, int bold)
{
    pthread_mutex_lock(&font_lock);
    cairo_select_font_face(cr, fig_family_of(cr), CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
    pthread_mutex_unlock(&font_lock);
}

static double text_width_locked(cairo_t *cr, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

double fig_text_width(cairo_t *cr, const char *s)
{
    pthread_mutex_lock(&font_lock);
    double w = text_width_locked(cr, s);
    pthread_mutex_unlock(&font_lock);
    return w;
}

void fig_text(cairo_t *cr, double x, double y, const char *s, fig_align align)
{
    if (!s || !*s)
        return;
    pthread_mutex_lock(&font_lock);
    double w = align == ALIGN_LEFT ? 0 : text_width_locked(cr, s);
    cairo_move_to(cr, align == ALIGN_LEFT ? x : align == ALIGN_CENTER ? x - w / 2 : x - w, y);
    cairo_show_text(cr, s);
    pthread_mutex_unlock(&font_lock);
}

/* Byte offset of the end of the first `chars` UTF-8 characters of s. */
static size_t utf8_prefix(const char *s, int chars)
{
    size_t i = 0;
    while (s[i] && chars > 0) {
        i++;
        while (((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        chars--;
    }
    return i;
}

static int utf8_length(const char *s)
{
    int n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

int fig_fit_text(cairo_t *cr, const char *s, double maxw, int min_chars, char *out, size_t n)
{
    if (!n)
        return 0;
    out[0] = '\0';
    if (!s || !*s || maxw <= 0)
        return 0;
    if (fig_text_width(cr, s) <= maxw) {
        snprintf(out, n, "%s", s);
        return 1;
    }
    /* Longest prefix that fits with the ellipsis: widths grow with the prefix,
     * so a binary search over the character count finds it. */
    int lo = min_chars < 1 ? 1 : min_chars, hi = utf8_length(s) - 1, best = -1;
    char tmp[512];
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        size_t bytes = utf8_prefix(s, mid);
        if (bytes + 4 > sizeof tmp) {
            hi = mid - 1;
            continue;
        }
        memcpy(tmp, s, bytes);
        memcpy(tmp + bytes, "\xe2\x80\xa6", 4); /* … */
        if (fig_text_width(cr, tmp) <= maxw) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (best < 0)
        return 0;
    size_t bytes = utf8_prefix(s, best);
    if (bytes + 4 > n)
        return 0;
    memcpy(out, s, bytes);
    memcpy(out + bytes, "\xe2\x80\xa6", 4);
    return 1;
}

/* ---- colours ---------------------------------------------------------------- */

void fig_set(cairo_t *cr, rgb c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

void fig_set_alpha(cairo_t *cr, rgb c, double alpha)
{
    cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha);
}

rgb fig_hex(unsigned hex)
{
    rgb c = {((hex >> 16) & 0xff) / 255.0, ((hex >> 8) & 0xff) / 255.0, (hex & 0xff) / 255.0};
    return c;
}

/* Paul Tol's "muted" qualitative scheme: nine colours that stay distinct
 * for the common colour-vision deficiencies. */
rgb fig_class_colour(op_class c)
{
    switch (c) {
    case OPC_GEMM: return fig_hex(TOL_MUTED_INDIGO);
    case OPC_ELEMENTWISE: return fig_hex(TOL_MUTED_CYAN);
    case OPC_SOFTMAX: return fig_hex(TOL_MUTED_SAND);
    case OPC_FUSED_ATTENTION: return fig_hex(TOL_MUTED_GREEN);
    case OPC_MEMCPY: return fig_hex(TOL_MUTED_ROSE);
    case OPC_MEMSET: return fig_hex(TOL_MUTED_WINE);
    case OPC_REDUCTION: return fig_hex(TOL_MUTED_TEAL);
    case OPC_MASK: return fig_hex(TOL_MUTED_PURPLE);
    default: return fig_hex(TOL_MUTED_PALE); /* other: pale grey, drawn outlined */
    }
}

static double channel_linear(double v)
{
    return v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

rgb fig_text_on(rgb fill)
{
    double lum = 0.2126 * channel_linear(fill.r) + 0.7152 * channel_linear(fill.g) +
                 0.0722 * channel_linear(fill.b);
    /* Contrast ratio against black vs white (WCAG): pick the larger. */
    double vs_black = (lum + 0.05) / 0.05, vs_white = 1.05 / (lum + 0.05);
    return vs_black >= vs_white ? (rgb){0, 0, 0} : FIG_WHITE;
}

void fig_heading(cairo_t *cr, double x, const char *title)
{
    fig_set(cr, FIG_INK);
    fig_font(cr, 13, 1);
    fig_text(cr, x, 28, title, ALIGN_LEFT);
    fig_font(cr, 9.5, 0);
    fig_set(cr, FIG_GREY);
}

void fig_verdict_dot(cairo_t *cr, double x, double y, double r, int decided, rgb col)
{
    cairo_arc(cr, x, y, r, 0, 2 * M_PI);
    if (!decided) {
        fig_set(cr, FIG_WHITE);
        cairo_fill_preserve(cr);
        fig_set(cr, col);
        cairo_stroke(cr);
    } else {
        cairo_fill(cr);
    }
}

void fig_axis_rule(cairo_t *cr, double x0, double x1, double y)
{
    fig_set(cr, FIG_INK);
    cairo_set_line_width(cr, 0.6);
    cairo_move_to(cr, x0, y);
    cairo_line_to(cr, x1, y);
    cairo_stroke(cr);
}

void fig_fill_rect(cairo_t *cr, double x, double y, double w, double h, rgb fill)
{
    fig_set(cr, fill);
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill(cr);
}

/* ---- numbers and axes -------------------------------------------------------- */

void fig_nice_ticks(double lo, double hi, int max_ticks, fig_ticks *t)
{
    t->n = 0;
    t->step = 0;
    if (!(hi > lo) || max_ticks < 2)
        return;
    if (max_ticks > 60)
        max_ticks = 60;
    double raw = (hi - lo) / (max_ticks - 1);
    double mag = pow(10, floor(log10(raw)));
    static const double mult[] = {1, 2, 5, 10};
    double step = 10 * mag;
    for (int i = 0; i < 4; i++)
        if (mult[i] * mag >= raw * (1 - 1e-9)) {
            step = mult[i] * mag;
            break;
        }
    t->step = step;
    for (double k = ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9 && t->n < 64; k++)
        t->v[t->n++] = k * step == 0 ? 0 : k * step; /* no "-0" */
}

fig_time_fmt fig_time_fmt_for(double max_us, double step_us)
{
    fig_time_fmt f = {1, "\xc2\xb5s", 0}; /* µs */
    if (max_us >= 1e6) {
        f.div = 1e6;
        f.unit = "s";
    } else if (max_us >= 1000) {
        f.div = 1000;
        f.unit = "ms";
    } else if (max_us > 0 && max_us < 1) {
        f.div = 0.001;
        f.unit = "ns";
    }
    double step = step_us / f.div;
    if (step > 0 && step < 1)
        f.decimals = (int)ceil(-log10(step) - 1e-9);
    /* 2.5-type steps cannot occur (1-2-5), so these decimals are exact. */
    if (f.decimals > 6)
        f.decimals = 6;
    return f;
}

void fig_time_label(const fig_time_fmt *f, double us, char *out, size_t n)
{
    if (us == 0)
        snprintf(out, n, "0");
    else
        snprintf(out, n, "%.*f %s", f->decimals, us / f->div, f->unit);
}

void fig_format_us(double us, char *out, size_t n)
{
    if (!isfinite(us))
        snprintf(out, n, "n/a");
    else if (us < 0.9995)
        snprintf(out, n, "%.0f ns", us * 1000);
    else if (us < 9.995)
        snprintf(out, n, "%.2f \xc2\xb5s", us);
    else if (us < 99.95)
        snprintf(out, n, "%.1f \xc2\xb5s", us);
    else if (us < 999.5)
        snprintf(out, n, "%.0f \xc2\xb5s", us);
    else if (us < 9995)
        snprintf(out, n, "%.2f ms", us / 1000);
    else if (us < 99950)
        snprintf(out, n, "%.1f ms", us / 1000);
    else if (us < 999500)
        snprintf(out, n, "%.0f ms", us / 1000);
    else if (us < 9995000)
        snprintf(out, n, "%.2f s", us / 1e6);
    else
        snprintf(out, n, "%.1f s", us / 1e6);
}

void fig_format_bytes(double bytes, char *out, size_t n)
{
    if (bytes < 1024)
        snprintf(out, n, "%.0f B", bytes);
    else if (fmod(bytes, 1024) == 0)
        snprintf(out, n, "%.0f KiB", bytes / 1024);
    else
        snprintf(out, n, "%.1f KiB", bytes / 1024);
}

/* ---- pieces shared by the figures ------------------------------------------- */

void fig_shape_text(const analysis *a, char *out, size_t n)
{
    if (!a->run || a->run->shape.batch <= 0) {
        /* an import has no run shape, but a trace recorded with record_shapes holds each
         * trace's attention inputs (the report's Model section gives them) */
        snprintf(out, n, a->run && model_inputs_any(a->run) ? "attention inputs recorded per trace (see Model)"
                                                            : "shape not recorded");
        return;
    }
    const attn_shape *s = &a->run->shape;
    snprintf(out, n, "B=%d H=%d S=%d D=%d", s->batch, s->heads, s->seq, s->dim);
}

void fig_op_label(const gpu_op *op, char *out, size_t n)
{
    if (op->kind == GPU_MEMCPY) {
        snprintf(out, n, op->copy_kind[0] ? "memcpy %s" : "memcpy", op->copy_kind);
        return;
    }
    if (op->kind == GPU_MEMSET) {
        snprintf(out, n, "memset");
        return;
    }
    const char *name = op->name && op->name[0] ? op->name : "kernel";
    short_kernel_name(name, out, n);
    if (!out[0])
        snprintf(out, n, "%s", strncmp(name, "void ", 5) == 0 ? name + 5 : name);
    esc_utf8_trim(out); /* a long name is cut between characters */
}

int fig_middle_forward(const variant_analysis *va)
{
    return analysis_median_forward(va);
}

double fig_legend(cairo_t *cr, double x, double y, double maxw, const fig_legend_item *items,
                  int n, int draw)
{
    return fig_legend_sized(cr, x, y, maxw, items, n, 9, draw);
}

double fig_legend_sized(cairo_t *cr, double x, double y, double maxw, const fig_legend_item *items, int n,
                        double font, int draw)
{
    const double k = font / 9;
    const double sw = 14 * k, sh = 9 * k, gap = 6 * k, item_gap = 16 * k, line_h = 15 * k;
    fig_font(cr, font, 0);
    double cx = x, cy = y;
    for (int i = 0; i < n; i++) {
        double w = sw + gap + fig_text_width(cr, items[i].label);
        if (cx > x && cx + w > x + maxw) {
            cx = x;
            cy += line_h;
        }
        if (draw) {
            double top = cy + (line_h - sh) / 2 - 2;
            if (items[i].style == 2) {
                fig_set(cr, items[i].colour);
                cairo_set_line_width(cr, 1.2);
                cairo_move_to(cr, cx, top + sh / 2);
                cairo_line_to(cr, cx + sw, top + sh / 2);
                cairo_stroke(cr);
            } else {
                fig_fill_rect(cr, cx, top, sw, sh, items[i].colour);
                if (items[i].style == 1) {
                    fig_set(cr, FIG_GREY);
                    cairo_set_line_width(cr, 0.8);
                    cairo_rectangle(cr, cx + 0.4, top + 0.4, sw - 0.8, sh - 0.8);
                    cairo_stroke(cr);
                }
            }
            fig_set(cr, FIG_INK);
            fig_text(cr, cx + sw + gap, cy + line_h - 5 * k, items[i].label, ALIGN_LEFT);
        }
        cx += w + item_gap;
    }
    return n ? cy - y + line_h : 0;
}
