/* The report's "Recorded program" section, for archives of `attnprof record`. */
#ifndef ATTNPROF_RECORD_SECTION_H
#define ATTNPROF_RECORD_SECTION_H

#include "analysis.h"

#include <stdio.h>

/* For an archive whose provenance is "injection" only: each variant's steps by role (kernel
 * names' rules), the attention backend, the launch APIs, the rules used and what a kernel name
 * cannot say; nothing otherwise. */
void record_section_md(FILE *f, const analysis *a);

#endif
