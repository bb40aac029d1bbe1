/* The one status convention of report/ and the CLI.
 *
 * A function that can fail returns EXIT_OK (0) or one of the EXIT_* codes of exit_codes.h,
 * the code the command will exit with, and writes one line into the caller's buffer
 * (err, errlen): what went wrong and, where there is one, what to do. err_set does both
 * in one statement:
 *
 *     if (!f) return err_set(err, errlen, EXIT_IO, "%s: %s", path, strerror(errno));
 *
 * A caller that adds context keeps the callee's code (err_prefix). Nothing in report/
 * returns -1 for a failure (tests/limits.sh fails on a `return -1;` there). A function whose
 * answer is a value — an index, a rank, a count — says "there is none" with ATTN_NONE: a
 * value, never a failure, and it writes no line. */
#ifndef ATTNPROF_ERR_H
#define ATTNPROF_ERR_H
#include <stddef.h>

#include "exit_codes.h"

/* "There is none": what a function returning an index, a rank or a yes/no answer returns
 * for not found, not recorded or not applicable. Callers test it with < 0 or != 0. */
enum { ATTN_NONE = -1 };

/* Writes the formatted line into err (when err and errlen are set) and returns code. */
int err_set(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Puts "<prefix>: " in front of the line already in err and returns code: the context a
 * caller knows (a path, a variant) without losing the callee's reason. */
int err_prefix(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#endif
