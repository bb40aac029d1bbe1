/* Input files from strangers (SECURITY.md): every file attnprof reads (trace.json,
 * run.json, counters.json, Kineto traces) is opened here, once, without
 * following a symbolic link, and must be a regular file; a FIFO, a device
 * (/dev/zero) or a directory is refused before a byte is read, so a read can
 * neither hang nor run forever. The limits every reader enforces are stated here
 * and in SECURITY.md. */
#ifndef ATTNPROF_INPUT_H
#define ATTNPROF_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "exit_codes.h"

/* The longest JSON token (string, number or literal) any reader accepts. yajl
 * re-scans a token that spans read chunks from its start (quadratic in its
 * length); no name a profiler writes comes near this. */
#define INPUT_MAX_TOKEN_BYTES ((size_t)1 << 20)
/* A gzip file may inflate to at most INPUT_MAX_INFLATE_RATIO × its own size plus
 * INPUT_INFLATE_SLACK_BYTES: real Kineto traces inflate 10-14× (the fixtures);
 * gzip's maximum is about 1032×. */
#define INPUT_MAX_INFLATE_RATIO 64
#define INPUT_INFLATE_SLACK_BYTES ((int64_t)16 << 20)
/* run.json and counters.json are read whole (jansson's DOM): at most this size.
 * attnprof writes a few KiB of run.json and about 1 KiB of counters.json per counted
 * range. */
#define INPUT_MAX_DOM_BYTES ((int64_t)64 << 20)
/* The DOM of a document read whole may take at most INPUT_DOM_MULTIPLE × the file's
 * size plus INPUT_DOM_SLACK_BYTES of heap (every allocation the parser makes, counted
 * as malloc's chunks); a document that needs more is refused while it is parsed. The
 * files attnprof writes take 4.7× (counters.json) to 7× (a run.json of 5 KB)
 * (bench/results/2026-12-03-run-json-memory.md). */
#define INPUT_DOM_MULTIPLE 8
#define INPUT_DOM_SLACK_BYTES ((int64_t)16 << 20)

/* What a caller asks of a file it opens for reading. Every open is non-blocking (a FIFO
 * opens at once, then is refused), must be a regular file, and is refused on a pseudo
 * file system (procfs, sysfs, debugfs, ...: their files say size 0, may block and may
 * change what they read, as /proc/kmsg consumes the kernel log). */
typedef struct input_rules {
    int64_t max_bytes;  /* a larger file is refused; 0: no limit of the caller's */
    int follow_links;   /* 0: a symbolic link is refused (O_NOFOLLOW); 1: followed (a path
                         * the user named on the command line) */
    const char *what;   /* the file's role in the size error ("a sweep status file"); NULL: none */
} input_rules;

/* Opens `path` under `rules`: EXIT_OK with *fd (close it when done) and, with `size`, the
 * file's size; otherwise EXIT_BAD_ARCHIVE with one line naming the path and what it is
 * instead (a link, a FIFO, a procfs file, too large), or EXIT_IO when it cannot be
 * opened at all (missing, permissions). */
int input_open_file(const char *path, const input_rules *rules, int *fd, int64_t *size, char *err, size_t errlen);

/* input_open_file with no size limit and no link followed, as open(2) answers: the
 * descriptor, or -1 with the line in err (kept for the streaming readers). */
int input_open(const char *path, int64_t *size, char *err, size_t errlen);

/* A whole small file under `rules` (input_open_file: no link followed unless asked, never
 * blocking on a FIFO or a device, procfs and sysfs refused, at most rules->max_bytes, which
 * must be set): EXIT_OK with *text (NUL-terminated, free it) and *len; *missing (when given)
 * is 1 when nothing has that name (then EXIT_IO). Otherwise the open's code with its line,
 * or EXIT_BAD_ARCHIVE when the file grew past the limit while it was read. */
int input_read_text(const char *path, const input_rules *rules, char **text, size_t *len, int *missing, char *err,
                    size_t errlen);

/* Watches the text a JSON parser is fed for a token longer than
 * INPUT_MAX_TOKEN_BYTES, in one pass over each byte (chunks may split tokens). */
typedef struct input_token_guard {
    int in_string, escaped, in_bare;
    size_t len;
} input_token_guard;
/* EXIT_OK while every token is within the limit; EXIT_BAD_ARCHIVE once one exceeds it. */
int input_token_check(input_token_guard *g, const unsigned char *s, size_t n);


/* ---- JSON documents read whole (run.json, counters.json) ---- */
#include <jansson.h>
/* input_open_file (no link followed, at most max_bytes), then jansson from that
 * descriptor under the DOM budget above, a key twice in one object refused. EXIT_OK with
 * *root (json_decref it); otherwise EXIT_BAD_ARCHIVE with one line: not a regular file,
 * too large, not valid JSON (line and column), a duplicate key (its name), or a DOM over
 * the budget. */
int input_read_json(const char *path, int64_t max_bytes, json_t **root, char *err, size_t errlen);
/* input_read_json at INPUT_MAX_DOM_BYTES, as jansson answers: NULL on failure, with
 * je->position < 0 when the reason is in err already; otherwise je says where the
 * JSON is bad. */
json_t *input_load_json(const char *path, char *err, size_t errlen, json_error_t *je);

#endif
