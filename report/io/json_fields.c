/* The field engine (json_fields.h): one writer and one reader over tables of rows, each
 * row a JSON key, its type and bounds, and the offset of its member. run.json,
 * counters.json and the prediction inside run.json are tables of this engine; what no
 * row can say (arrays, the checks between fields) is their own code. */
#include "json_fields.h"

#include "err.h"
#include "escape.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define AT(base, off, type) ((type *)((char *)(base) + (off)))
#define AT_C(base, off, type) ((const type *)((const char *)(base) + (off)))

json_t *json_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* ---- writing ---- */

/* 0: the row's key is left out of this document. */
static int field_written(const json_field *f, const void *base, int imported)
{
    if ((f->flags & WHEN_IMPORTED) && !imported)
        return 0;
    if ((f->flags & WHEN_RECORDED) && imported && !*AT_C(base, f->aux, int))
        return 0;
    if ((f->flags & WHEN_NONEMPTY) && !*AT_C(base, f->offset, char))
        return 0;
    if ((f->flags & WHEN_NONNEG) && *AT_C(base, f->offset, int) < 0)
        return 0;
    if ((f->flags & WHEN_POSITIVE) && *AT_C(base, f->offset, int) <= 0)
        return 0;
    if ((f->flags & WHEN_FINITE) && !isfinite(*AT_C(base, f->offset, double)))
        return 0;
    if (f->type == FIELD_OBJECT && f->present)
        return f->present(base);
    return 1;
}

static const char *enum_word(const json_field *f, int v)
{
    for (int i = 0; f->names[i]; i++)
        if (i == v)
            return f->names[i];
    return "?";
}

static json_t *field_value(const json_field *f, const void *base)
{
    char s[32];
    switch (f->type) {
    case FIELD_OBJECT:
        return json_object();
    case FIELD_PART:
        return f->part(base);
    case FIELD_STR:
        return json_string(AT_C(base, f->offset, char));
    case FIELD_INT:
        return json_integer(*AT_C(base, f->offset, int));
    case FIELD_INT64:
        return json_integer((json_int_t)*AT_C(base, f->offset, int64_t));
    case FIELD_SEED:
        return json_integer((json_int_t)*AT_C(base, f->offset, unsigned long long));
    case FIELD_BOOL:
        return json_boolean(*AT_C(base, f->offset, int));
    case FIELD_REAL:
        return json_num(*AT_C(base, f->offset, double));
    case FIELD_REAL_AS_INT:
        return json_integer((json_int_t)*AT_C(base, f->offset, double));
    case FIELD_CC:
        snprintf(s, sizeof s, "%d.%d", *AT_C(base, f->offset, int), *AT_C(base, f->aux, int));
        return json_string(s);
    case FIELD_CUDA_VERSION: {
        int v = *AT_C(base, f->offset, int);
        snprintf(s, sizeof s, "%d.%d", v / 1000, v % 1000 / 10);
        return json_string(s);
    }
    case FIELD_ENUM:
        return json_string(enum_word(f, *AT_C(base, f->offset, int)));
    }
    return NULL;
}

int json_fields_write(json_t *o, const json_field *t, size_t n, const void *base, int imported)
{
    for (size_t i = 0; i < n; i++) {
        const json_field *f = &t[i];
        json_t *into = *f->object ? json_object_get(o, f->object) : o;
        if (!into || !field_written(f, base, imported))
            continue; /* its object is left out, or the key is */
        if ((f->flags & MUST_BE_FINITE) && !isfinite(*AT_C(base, f->offset, double)))
            return EXIT_IO;
        json_t *v = field_value(f, base);
        if (v)
            json_object_set_new(into, f->key, v);
    }
    return EXIT_OK;
}

json_t *json_fields_object(const json_field *t, size_t n, const void *base)
{
    json_t *o = json_object();
    json_fields_write(o, t, n, base, 0);
    return o;
}

/* ---- reading ---- */

void json_reader_bad(json_reader *rd, const char *where, const char *key, const char *what)
{
    if (rd->failed++)
        return;
    err_set(rd->err, rd->errlen, EXIT_BAD_ARCHIVE, "%s: %s%s%s: expected %s", rd->path, where, *where ? "." : "",
            key, what);
}

void json_reader_inconsistent(json_reader *rd, const char *fmt, const char *name, const char *detail)
{
    if (rd->failed++)
        return;
    char what[320];
    snprintf(what, sizeof what, fmt, name, detail);
    err_set(rd->err, rd->errlen, EXIT_BAD_ARCHIVE, "%s: inconsistent: %s", rd->path, what);
}

int json_reader_status(const json_reader *rd) { return rd->failed ? EXIT_BAD_ARCHIVE : EXIT_OK; }

const char *json_reader_str(json_reader *rd, const char *where, json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (v && !json_is_string(v))
        json_reader_bad(rd, where, k, "a string");
    const char *s = json_string_value(v);
    return s ? s : "";
}

/* A number in [lo, hi] or null/absent (NaN): wider ones would print as hundreds of
 * digits or overflow what is derived from them. */
double json_reader_real(json_reader *rd, const char *where, json_t *o, const char *k, double lo, double hi)
{
    json_t *v = json_object_get(o, k);
    if (v && !json_is_number(v) && !json_is_null(v))
        json_reader_bad(rd, where, k, "a number or null");
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (isfinite(x) && (x < lo || x > hi)) {
        char what[96];
        snprintf(what, sizeof what, "a number from %g to %g, or null", lo, hi);
        json_reader_bad(rd, where, k, what);
        return NAN;
    }
    return x;
}

static long long integer_in(json_reader *rd, const char *where, json_t *o, const char *k, long long lo, long long hi,
                            long long absent)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return absent;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        char what[96];
        snprintf(what, sizeof what, "a whole number from %lld to %lld", lo, hi);
        json_reader_bad(rd, where, k, what);
        return absent;
    }
    return json_integer_value(v);
}

json_t *json_reader_object(json_reader *rd, const char *where, json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (v && !json_is_object(v))
        json_reader_bad(rd, where, k, "an object");
    return json_is_object(v) ? v : NULL;
}

json_t *json_reader_array(json_reader *rd, const char *where, json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (v && !json_is_array(v))
        json_reader_bad(rd, where, k, "an array");
    return json_is_array(v) ? v : NULL;
}

/* The words of an enum row as a reader's "expected": "a", "b" or "c". */
static void enum_expected(const json_field *f, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; f->names[i] && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s\"%s\"", !i ? "" : f->names[i + 1] ? ", " : " or ", f->names[i]);
}

static void read_enum(json_reader *rd, const json_field *f, json_t *in, const char *at, void *base)
{
    json_t *v = json_object_get(in, f->key);
    int *out = AT(base, f->offset, int);
    *out = 0;
    if (!v && !(f->flags & REQUIRED))
        return;
    if (v && !json_is_string(v)) {
        json_reader_bad(rd, at, f->key, "a string");
        return;
    }
    const char *s = json_string_value(v);
    for (int i = 0; s && f->names[i]; i++)
        if (!strcmp(s, f->names[i])) {
            *out = i;
            return;
        }
    char what[160];
    enum_expected(f, what, sizeof what);
    json_reader_bad(rd, at, f->key, what);
}

static void read_scalar(json_reader *rd, const json_field *f, json_t *in, const char *at, void *base)
{
    long long lo = f->ilo, hi = f->ihi ? f->ihi : INT_MAX; /* counts, sizes, versions: fit an int */
    switch (f->type) {
    case FIELD_OBJECT:
    case FIELD_PART:
    case FIELD_CUDA_VERSION:
        break;
    case FIELD_STR:
        if (!esc_copy_utf8(AT(base, f->offset, char), f->size, json_reader_str(rd, at, in, f->key)) &&
            (f->flags & WHOLE_STRING)) {
            char what[32];
            snprintf(what, sizeof what, "at most %zu bytes", f->size - 1);
            json_reader_bad(rd, at, f->key, what);
        }
        break;
    case FIELD_INT:
        *AT(base, f->offset, int) = (int)integer_in(rd, at, in, f->key, lo, hi, f->absent);
        break;
    case FIELD_INT64:
        *AT(base, f->offset, int64_t) = integer_in(rd, at, in, f->key, lo, hi, f->absent);
        break;
    case FIELD_SEED:
        *AT(base, f->offset, unsigned long long) = (unsigned long long)integer_in(rd, at, in, f->key, lo, hi, 0);
        break;
    case FIELD_BOOL: {
        json_t *v = json_object_get(in, f->key);
        if (v && !json_is_boolean(v))
            json_reader_bad(rd, at, f->key, "true or false");
        *AT(base, f->offset, int) = json_is_true(v);
        break;
    }
    case FIELD_REAL:
    case FIELD_REAL_AS_INT: {
        double x = json_reader_real(rd, at, in, f->key, f->rlo, f->rhi);
        *AT(base, f->offset, double) = (f->flags & ABSENT_ZERO) && !isfinite(x) ? 0 : x;
        break;
    }
    case FIELD_CC: {
        const char *cc = json_reader_str(rd, at, in, f->key);
        int *major = AT(base, f->offset, int), *minor = AT(base, f->aux, int);
        if (*cc && (sscanf(cc, "%3d.%3d", major, minor) != 2 || *major < 0 || *minor < 0))
            json_reader_bad(rd, at, f->key, "\"major.minor\"");
        break;
    }
    case FIELD_ENUM:
        read_enum(rd, f, in, at, base);
        break;
    }
}

void json_fields_read(json_reader *rd, const json_field *t, size_t n, json_t *o, const char *where, void *base)
{
    for (size_t i = 0; i < n; i++) {
        const json_field *f = &t[i];
        json_t *in = *f->object ? json_object_get(o, f->object) : o;
        const char *at = *f->object ? f->object : where;
        if (f->type == FIELD_OBJECT) {
            json_t *v = json_object_get(o, f->key);
            if (f->object_error && v && !json_is_object(v))
                json_reader_bad(rd, at, f->object_error, "objects");
            continue;
        }
        read_scalar(rd, f, in, at, base);
        if (f->flags & WHEN_RECORDED)
            *AT(base, f->aux, int) = json_object_get(in, f->key) != NULL;
    }
}
