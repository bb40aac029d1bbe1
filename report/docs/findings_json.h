/* findings.json (findings_json.c): an archive's findings as data, by stable id, for
 * compare and other tools. Written beside report.md (one row of the report's bundle, report_render.c). */
#ifndef ATTNPROF_FINDINGS_JSON_H
#define ATTNPROF_FINDINGS_JSON_H

#include "findings.h"

/* The findings of every variant of a derived analysis as findings.json text; the
 * caller frees it. */
char *findings_json(const analysis *a);

typedef struct findings_doc_variant {
    char name[32];
    int n;
    finding f[MAX_FINDINGS];
    char text[MAX_FINDINGS][640]; /* plain text */
} findings_doc_variant;

typedef struct findings_doc {
    char producer[24]; /* run_producer_name */
    int n;
    findings_doc_variant v[RUN_MAX_VARIANTS];
} findings_doc;

/* Reads findings.json into d. EXIT_OK, or EXIT_BAD_ARCHIVE (or input.h's code for an unreadable
 * file) with one line in err naming the field. */
int findings_read_json(const char *path, findings_doc *d, char *err, size_t errlen);
/* The finding `id` of `variant` in d, or NULL. */
const finding *findings_doc_find(const findings_doc *d, const char *variant, const char *id);

#endif
