/* The JSON field engine under run.json, counters.json and a variant's prediction: a
 * document's scalar fields as a table of rows (JSON name, type, bounds, where the value
 * lives in the struct), walked by one writer and one reader, so a field is added,
 * renamed or bounded in one row.
 *
 * Rows are in the order the keys are written. A FIELD_OBJECT row opens a nested object
 * that later rows name in .object; FIELD_PART rows stand for what is no scalar (arrays,
 * other tables' objects) so that the key order stays the table's: the writer calls
 * .part, the reader leaves them to its caller. */
#ifndef ATTNPROF_JSON_FIELDS_H
#define ATTNPROF_JSON_FIELDS_H

#include <jansson.h>
#include <stddef.h>

typedef enum field_type {
    FIELD_OBJECT,       /* a nested object; written when .present says so (NULL: always) */
    FIELD_PART,         /* written by .part (NULL from it: the key is left out); not read here */
    FIELD_STR,          /* char[.size] */
    FIELD_INT,          /* int in [.ilo, .ihi] */
    FIELD_INT64,        /* int64_t in [.ilo, .ihi] */
    FIELD_SEED,         /* unsigned long long, any 64-bit pattern */
    FIELD_BOOL,         /* int, true or false */
    FIELD_REAL,         /* double in [.rlo, .rhi], null when not finite */
    FIELD_REAL_AS_INT,  /* double written as a whole number (when finite), read as a real */
    FIELD_CC,           /* ints major (.offset) and minor (.aux) as "major.minor" */
    FIELD_CUDA_VERSION, /* int 12080 written as "12.8"; never read (the _int key is) */
    FIELD_ENUM,         /* an int (an enum) written as .names[value], read back from the word */
} field_type;

enum {
    WHEN_NONEMPTY = 1,   /* a string: left out when "" */
    WHEN_IMPORTED = 2,   /* written in imported documents only */
    WHEN_RECORDED = 4,   /* int flag at .aux: 1 when read from the file; an imported document
                          * that does not know it leaves the key out */
    WHEN_NONNEG = 8,     /* an int: left out when negative */
    WHEN_POSITIVE = 16,  /* an int: left out when 0 */
    WHEN_FINITE = 32,    /* a real: left out when not finite */
    MUST_BE_FINITE = 64, /* a real: the document cannot be written without it */
    WHOLE_STRING = 128,  /* a string that must not be cut on reading */
    REQUIRED = 256,      /* FIELD_ENUM: absent is an error (else it reads as 0) */
    ABSENT_ZERO = 512,   /* a real: absent, null or not finite reads as 0 (a claim of nothing) */
};

typedef struct json_field {
    const char *object; /* "" for the top level of the table's object */
    const char *key;
    field_type type;
    size_t offset, aux, size;
    int flags;
    long long ilo, ihi;  /* FIELD_INT, FIELD_INT64: both 0 means 0..INT_MAX */
    long long absent;    /* FIELD_INT, FIELD_INT64: the value when the key is absent */
    double rlo, rhi;     /* FIELD_REAL, FIELD_REAL_AS_INT */
    const char *const *names; /* FIELD_ENUM: the words, NULL-terminated, index = value */
    int (*present)(const void *base);     /* FIELD_OBJECT */
    json_t *(*part)(const void *base);    /* FIELD_PART */
    const char *object_error;             /* FIELD_OBJECT: the key named when it is no object */
} json_field;

/* A row for `member` of struct `st`; the optional arguments are designators
 * (.flags, .ilo/.ihi, .rlo/.rhi, .aux, .names, .absent). */
#define FIELD_OF(st, obj, k, t, member, ...) \
    {.object = obj, .key = k, .type = t, .offset = offsetof(st, member), .size = sizeof(((st *)0)->member), \
     __VA_ARGS__}
#define FIELD_OBJECT_ROW(k, present_fn, object_error_key) \
    {.object = "", .key = k, .type = FIELD_OBJECT, .present = present_fn, .object_error = object_error_key}
#define FIELD_PART_ROW(k, part_fn) {.object = "", .key = k, .type = FIELD_PART, .part = part_fn}
#define FIELDS(t) t, sizeof t / sizeof t[0]

/* NaN is not JSON: an unmeasured number is written as null. The one number helper of
 * every JSON writer. */
json_t *json_num(double x);

/* ---- writing ---- */
/* Adds the table's keys of `base` to `o` in the table's order; `imported` says whether the
 * document is an import's (WHEN_IMPORTED, WHEN_RECORDED). EXIT_OK, or EXIT_IO when a
 * MUST_BE_FINITE number is not (the document cannot be built). */
int json_fields_write(json_t *o, const json_field *t, size_t n, const void *base, int imported);
/* A new object of the table's keys (a document that is never imported). */
json_t *json_fields_object(const json_field *t, size_t n, const void *base);

/* ---- reading ---- */
/* Typed reads of one document. A key that is absent gives the row's default (older
 * documents lack some); a key of the wrong type, or a number out of its range, is an
 * error naming the field. The first error is kept in err (EXIT_BAD_ARCHIVE); reading
 * goes on so that the caller's code stays linear, and `failed` counts them. */
typedef struct json_reader {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} json_reader;

/* Fills `base` from the table's keys of `o`; `where` names the top level in errors (a
 * nested object is named by its key). Parts are read by the caller. */
void json_fields_read(json_reader *rd, const json_field *t, size_t n, json_t *o, const char *where, void *base);
/* "path: where.key: expected what" (the first error only). */
void json_reader_bad(json_reader *rd, const char *where, const char *key, const char *what);
/* "path: inconsistent: " + fmt (one %s, then the second %s is `detail`): what one document
 * cannot say of itself. */
void json_reader_inconsistent(json_reader *rd, const char *fmt, const char *name, const char *detail);
/* The string at o.k ("" when absent; an error when it is no string). */
const char *json_reader_str(json_reader *rd, const char *where, json_t *o, const char *k);
/* A number in [lo, hi] at o.k, or NaN when null or absent. */
double json_reader_real(json_reader *rd, const char *where, json_t *o, const char *k, double lo, double hi);
/* The object at o.k, NULL when absent (an error when it is something else). */
json_t *json_reader_object(json_reader *rd, const char *where, json_t *o, const char *k);
/* The array at o.k, NULL when absent (an error when it is something else). */
json_t *json_reader_array(json_reader *rd, const char *where, json_t *o, const char *k);
/* EXIT_OK when nothing failed, else EXIT_BAD_ARCHIVE (the line is in err). */
int json_reader_status(const json_reader *rd);

#endif
