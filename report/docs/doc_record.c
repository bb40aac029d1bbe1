/* The record of what the document pipeline made in a directory (doc_record.h): a small text
 * file of "NAME<TAB>RENDER" lines, read as every file a stranger may have planted is read
 * (input_open: no link followed, no FIFO waited on, regular files only, a size limit). A
 * line that is not of that form is ignored; a name that would leave the directory ("..",
 * an absolute path) is dropped, so a forged record can name nothing outside it. */
#include "doc_record.h"

#include "alloc.h"
#include "err.h"
#include "input.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char RECORD_HEADING[] =
    "# attnprof: the outputs its renders made here, each with the render that made it; "
    "a render with --clean removes those it did not make\n";

const char *doc_record_made_by(const doc_record *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->e[i].name, name))
            return r->e[i].made_by;
    return NULL;
}

void doc_record_add(doc_record *r, const char *name, const char *made_by)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->e[i].name, name)) {
            free(r->e[i].made_by);
            r->e[i].made_by = attn_strdup(made_by);
            return;
        }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 32;
        r->e = attn_realloc(r->e, (size_t)r->cap * sizeof *r->e);
    }
    char *by = attn_strdup(made_by);
    for (char *c = by; *c; c++) /* one line per entry, one tab between its fields */
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    r->e[r->n++] = (doc_record_entry){attn_strdup(name), by};
}

/* A name the record may hold: "NAME" or "figures/NAME", no "..", no other slash, no control
 * characters. */
static int name_inside(const char *name)
{
    const char *rest = !strncmp(name, "figures/", 8) ? name + 8 : name;
    if (!*rest || !strcmp(rest, ".") || !strcmp(rest, "..") || strchr(rest, '/'))
        return 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return 0;
    return 1;
}

void doc_record_parse(doc_record *r, char *text)
{
    for (char *line = text, *next; *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next)
            *next++ = '\0';
        char *tab = strchr(line, '\t');
        if (line[0] == '#' || !tab)
            continue;
        *tab = '\0';
        if (name_inside(line) && tab[1])
            doc_record_add(r, line, tab + 1);
    }
}

int doc_record_read(doc_record *r, const char *dir, char *err, size_t errlen)
{
    *r = (doc_record){0};
    char *path = attn_asprintf("%s/%s", dir, DOC_RECORD);
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT) {
        free(path);
        return EXIT_OK;
    }
    int64_t size = 0;
    int fd = input_open(path, &size, err, errlen);
    if (fd < 0) {
        free(path);
        return EXIT_BAD_ARCHIVE;
    }
    int rc = EXIT_OK;
    if (size < 0 || (uint64_t)size > DOC_RECORD_MAX_BYTES) {
        rc = err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %lld bytes, more than a record of outputs holds (%zu); "
                     "remove it", path, (long long)size, DOC_RECORD_MAX_BYTES);
    } else {
        char *text = attn_malloc((size_t)size + 1);
        size_t got = 0;
        ssize_t k;
        while (got < (size_t)size && (k = read(fd, text + got, (size_t)size - got)) > 0)
            got += (size_t)k;
        text[got] = '\0';
        doc_record_parse(r, text);
        r->found = 1;
        free(text);
    }
    close(fd);
    free(path);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const doc_record_entry *)a)->name, ((const doc_record_entry *)b)->name);
}

char *doc_record_text(const doc_record *r)
{
    qsort(r->e, (size_t)r->n, sizeof *r->e, by_name);
    size_t len = sizeof RECORD_HEADING;
    for (int i = 0; i < r->n; i++)
        len += strlen(r->e[i].name) + strlen(r->e[i].made_by) + 2;
    char *text = attn_malloc(len), *o = text;
    o += sprintf(o, "%s", RECORD_HEADING);
    for (int i = 0; i < r->n; i++)
        o += sprintf(o, "%s\t%s\n", r->e[i].name, r->e[i].made_by);
    return text;
}

void doc_record_free(doc_record *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->e[i].name);
        free(r->e[i].made_by);
    }
    free(r->e);
    *r = (doc_record){0};
}
