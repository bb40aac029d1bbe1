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

/* The longest JSON token (string, number or literal) any reader accepts. yajl
 * re-scans a token that spans read chunks from its start (quadratic in its
 * length); no name a profiler writes comes near this. */
#define INPUT_MAX_TOKEN_BYTES ((size_t)1 << 20)
/* A gzip file may inflate to at most INPUT_MAX_INFLATE_RATIO × its own size plus
 * INPUT_INFLATE_SLACK_BYTES: real Kineto traces inflate 10-14× (the fixtures);
 * gzip's maximum is about 1032×. */
#define INPUT_MAX_INFLATE_RATIO 64
#define INPUT_INFLATE_SLACK_BYTES ((int64_t)16 << 20)
/* run.json and counters.json are read whole (jansson's DOM, about 10× the file):
 * at most this size. attnprof writes a few KiB of run.json and about 1 KiB of
 * counters.json per counted range. */
#define INPUT_MAX_DOM_BYTES ((int64_t)64 << 20)

/* Opens `path` for reading: O_NOFOLLOW, no blocking on a FIFO, then fstat. Returns
 * the descriptor (close it when done) and, with `size`, the file's size; or -1 with
 * one line in err naming the path and what it is instead of a regular file. */
int input_open(const char *path, int64_t *size, char *err, size_t errlen);

/* Watches the text a JSON parser is fed for a token longer than
 * INPUT_MAX_TOKEN_BYTES, in one pass over each byte (chunks may split tokens). */
typedef struct input_token_guard {
    int in_string, escaped, in_bare;
    size_t len;
} input_token_guard;
/* 0 while every token is within the limit; -1 once one exceeds it. */
int input_token_check(input_token_guard *g, const unsigned char *s, size_t n);


/* ---- JSON documents read whole (run.json, counters.json) ---- */
#include <jansson.h>
/* input_open, at most INPUT_MAX_DOM_BYTES, then jansson from that descriptor.
 * NULL on failure: with je->position < 0 the reason is in err already (not a
 * regular file, too large, unreadable); otherwise je says where the JSON is bad. */
json_t *input_load_json(const char *path, char *err, size_t errlen, json_error_t *je);

#endif
