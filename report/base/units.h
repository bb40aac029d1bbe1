/* Numbers as text, the same in every layer: a table's cell and a figure's label
 * that name one number print it alike. Base layer: includes nothing of ours. */
#ifndef ATTNPROF_UNITS_H
#define ATTNPROF_UNITS_H

#include <stddef.h>

/* A time in µs as a table column prints it: "2243 µs" from 100 µs up, "61.9 µs"
 * below, "–" when not finite. Writes at most n bytes into out. */
void units_us_column(double us, char *out, size_t n);

#endif
