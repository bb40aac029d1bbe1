/* The consistency checks of an archive, apart from its readers: what one run.json cannot
 * say of itself. */
#ifndef ATTNPROF_ARCHIVE_CHECKS_H
#define ATTNPROF_ARCHIVE_CHECKS_H

#include "json_fields.h"
#include "run_info.h"

/* run.json against itself, once it is read: the first contradiction goes into rd
 * ("path: inconsistent: ..."), EXIT_BAD_ARCHIVE from json_reader_status. */
void archive_check_run(const run_info *r, json_reader *rd);

#endif
