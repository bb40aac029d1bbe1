/* `attnprof record -- CMD ARGS...`: any CUDA program recorded by CUPTI injection into an
 * archive (record.c). */
#ifndef ATTNPROF_RECORD_H
#define ATTNPROF_RECORD_H

#include "cli.h"

/* The parsed command line (o->inputs is CMD); cmdline and version go into run.json. Returns
 * the exit status: the program's own once the archive is written, else an EXIT_* code
 * (127/126 when CMD cannot be started) with its one line on stderr. */
int record_main(const cli_options *o, const char *cmdline, const char *version);

#endif
