/* The digest thread of the Kineto-JSON reader (kineto_parse.h): the SHA-256 of the file's
 * bytes as stored, taken by a second thread while the first parses them (2 cores: the
 * digest, about 130 MB/s, costs no wall time). Two buffers turn between the reader and
 * this thread; a buffer is handed over once read and reused only when released. */
#include "kineto_parse.h"

#include <string.h>

static void *digest_thread(void *arg)
{
    kineto_digest *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->pending && !d->closing)
            pthread_cond_wait(&d->cv, &d->mu);
        if (!d->pending)
            break;
        const unsigned char *p = d->hashing = d->pending;
        size_t n = d->len;
        d->pending = NULL;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
        sha256_update(&d->sha, p, n);
        pthread_mutex_lock(&d->mu);
        d->hashing = NULL;
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

void kineto_digest_start(kineto_digest *d)
{
    memset(d, 0, sizeof *d);
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    sha256_init(&d->sha);
    d->threaded = pthread_create(&d->thread, NULL, digest_thread, d) == 0;
}

/* Waits until buf is neither handed over nor being hashed. */
void kineto_digest_release(kineto_digest *d, const unsigned char *buf)
{
    if (!d->threaded)
        return;
    pthread_mutex_lock(&d->mu);
    while (d->pending == buf || d->hashing == buf)
        pthread_cond_wait(&d->cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

void kineto_digest_hand(kineto_digest *d, const unsigned char *buf, size_t n)
{
    if (!d->threaded) {
        sha256_update(&d->sha, buf, n);
        return;
    }
    pthread_mutex_lock(&d->mu);
    while (d->pending)
        pthread_cond_wait(&d->cv, &d->mu);
    d->pending = buf;
    d->len = n;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

void kineto_digest_finish(kineto_digest *d, char *hex)
{
    if (d->threaded) {
        pthread_mutex_lock(&d->mu);
        d->closing = 1;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->thread, NULL);
    }
    sha256_final_hex(&d->sha, hex);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
}
