/* The CUPTI activity kinds libattnprof_inject.so asks for, by the names ATTNPROF_INJECT_KINDS
 * takes (inject_kinds.c holds the table, its defaults and why). No CUPTI call here: the choice
 * is checked without a GPU (tests/cupti/inject_kinds.c). */
#ifndef ATTNPROF_INJECT_KINDS_H
#define ATTNPROF_INJECT_KINDS_H

#include <cupti_activity.h>
#include <stddef.h>

#define INJECT_KINDS_MAX 8

/* The kinds `list` asks for (a comma-separated list of names, "all", "none"; NULL or "": the
 * defaults) into out, in the table's order, and their names, comma-separated ("-" for none), into
 * named; returns how many. Unknown names are ignored. */
__attribute__((visibility("hidden"))) /* not a symbol of the programs the library is loaded into */
int inject_kinds_chosen(const char *list, CUpti_ActivityKind out[INJECT_KINDS_MAX], char *named, size_t n);

#endif
