/* Reading a whole file in a test: outputs, logs and fixtures are compared as text.
 * One copy for the Criterion tests (five kept their own). */
#ifndef ATTNPROF_TEST_SLURP_H
#define ATTNPROF_TEST_SLURP_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file's bytes, NUL-terminated (free them); NULL when it cannot be opened. *len,
 * when given, gets the byte count (the file may hold NULs). Reads in chunks, so pipes
 * and files that grow work too. */
static inline char *slurp_len(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    char chunk[65536];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (n + got + 1 > cap) {
            cap = (n + got + 1) * 2;
            char *grown = realloc(buf, cap);
            cr_assert_not_null(grown, "out of memory reading %s", path);
            buf = grown;
        }
        memcpy(buf + n, chunk, got);
        n += got;
    }
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    cr_assert_not_null(buf, "out of memory reading %s", path);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static inline char *slurp(const char *path) { return slurp_len(path, NULL); }

/* As slurp, and the test fails when the file cannot be read. */
static inline char *slurp_required(const char *path)
{
    char *s = slurp(path);
    cr_assert_not_null(s, "%s", path);
    return s;
}

#endif
