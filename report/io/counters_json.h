/* counters.json, and the counter pass's meta block that run.json carries too (in memory:
 * counters.h): read and written over the field engine. */
#ifndef ATTNPROF_COUNTERS_JSON_H
#define ATTNPROF_COUNTERS_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "counters.h"
#include "json_fields.h"

/* counters.json. EXIT_OK, or EXIT_IO (writing) / EXIT_BAD_ARCHIVE (reading) with one line;
 * a failed read leaves nothing to free. */
int counters_write_json(const counters_set *s, const char *path, char *err, size_t errlen);
int counters_read_json(counters_set *s, const char *path, char *err, size_t errlen);
/* The meta block alone (run.json names the metrics and the method). A missing object
 * reads as "not run"; a field of the wrong type or out of bounds is an error in rd. */
json_t *counters_meta_to_json(const counters_meta *m);
void counters_meta_from_json(json_reader *rd, json_t *o, const char *where, counters_meta *m);

#endif
