/* The two halves of the Kineto-JSON reader that kineto_read.c (the file pump) drives:
 * the event state machine (kineto_events.c), fed the file's text chunk by chunk, and the
 * digest thread (kineto_digest.c), which takes the SHA-256 of the bytes read while they
 * are parsed. Internal to report/io/. */
#ifndef ATTNPROF_KINETO_PARSE_H
#define ATTNPROF_KINETO_PARSE_H

#include "kineto_read.h"
#include "sha256.h"

#include <pthread.h>
#include <stddef.h>

typedef struct kineto_parser kineto_parser;

/* A parser of one file's text, calling fn for each event of traceEvents and filling hdr;
 * errors name `path` and go into err. */
kineto_parser *kineto_parser_new(const char *path, kineto_event_fn fn, void *user, kineto_header *hdr, char *err,
                                 size_t errlen);
/* Parses the next len bytes of the text: KINETO_OK, or the status with err set. */
kineto_status kineto_parser_feed(kineto_parser *p, const unsigned char *text, size_t len);
/* At the end of the text: a complete document with a traceEvents array, or the status. */
kineto_status kineto_parser_finish(kineto_parser *p);
kineto_status kineto_parser_status(const kineto_parser *p);
long long kineto_parser_line(const kineto_parser *p); /* the line the text has reached */
size_t kineto_parser_events(const kineto_parser *p);  /* events handed to fn so far */
void kineto_parser_free(kineto_parser *p);

/* The SHA-256 of the bytes read, computed by a second thread while the first parses
 * them. The reader hands over each chunk it has read (kineto_digest_hand) and, before
 * it reuses a buffer, waits until the digest is done with it (kineto_digest_release). */
typedef struct kineto_digest {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const unsigned char *pending, *hashing; /* handed over / being hashed; NULL: none */
    size_t len;
    int closing, threaded;
    pthread_t thread;
    sha256_ctx sha;
} kineto_digest;

/* Starts the digest (a thread when one can be made; else each chunk is hashed as it is handed). */
void kineto_digest_start(kineto_digest *d);
void kineto_digest_hand(kineto_digest *d, const unsigned char *buf, size_t n);
void kineto_digest_release(kineto_digest *d, const unsigned char *buf);
/* Joins the thread and writes the hex digest (65 bytes). */
void kineto_digest_finish(kineto_digest *d, char *hex);

#endif
