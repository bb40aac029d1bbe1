/* The record of the outputs the document pipeline made in a directory (doc_record.c): each
 * file's name ("report.md", "figures/timeline-naive.svg") and the render that made it
 * ("report --format pdf --figure-size column"). A re-render replaces what it makes and keeps
 * what earlier renders made with other options; --clean removes the recorded outputs it does
 * not make, and never a file the record does not name. */
#ifndef ATTNPROF_DOC_RECORD_H
#define ATTNPROF_DOC_RECORD_H

#include <stddef.h>

/* The record's file in the directory, written and replaced with the outputs it lists. */
#define DOC_RECORD ".attnprof-outputs"
/* A record of this size lists about 8000 outputs; a larger file is not one attnprof wrote. */
#define DOC_RECORD_MAX_BYTES ((size_t)1 << 20)

typedef struct doc_record_entry {
    char *name;    /* relative to the directory */
    char *made_by; /* the render's options, as the bundle states them */
} doc_record_entry;

typedef struct doc_record {
    doc_record_entry *e;
    int n, cap;
    int found; /* read from a directory that had one (an archive rendered before the record has none) */
} doc_record;

/* dir's record into r (found 0 and empty when there is none): read without following a link,
 * never blocking, at most DOC_RECORD_MAX_BYTES. EXIT_OK, or EXIT_BAD_ARCHIVE with `err` when
 * the name holds something else (a FIFO, a link, a device, too large). */
int doc_record_read(doc_record *r, const char *dir, char *err, size_t errlen);
/* The render that made `name`, or NULL when the record does not list it. */
const char *doc_record_made_by(const doc_record *r, const char *name);
/* Lists `name` as made by `made_by` (replacing an earlier entry of that name). */
void doc_record_add(doc_record *r, const char *name, const char *made_by);
/* The record's text: a heading line, then "NAME<TAB>MADE_BY" lines sorted by name; malloc'd. */
char *doc_record_text(const doc_record *r);
/* Parses text (modified) into r: the reader's part, also the fuzz target's entry. */
void doc_record_parse(doc_record *r, char *text);
void doc_record_free(doc_record *r);

#endif
