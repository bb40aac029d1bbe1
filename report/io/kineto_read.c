/* The file pump of the streaming Kineto-JSON reader (kineto_read.h). The file is opened
 * once (input.h: a regular file, no link followed) and read in 256 KiB chunks; each chunk,
 * inflated by zlib when the file starts with the gzip magic (member after member, as
 * `cat a.gz b.gz` makes), feeds the event state machine (kineto_events.c), and the very
 * bytes read go to the digest thread (kineto_digest.c) for the file's SHA-256. Limits
 * (input.h, SECURITY.md): gzip inflates to at most INPUT_MAX_INFLATE_RATIO × the
 * compressed size (plus a slack), and no JSON token is longer than INPUT_MAX_TOKEN_BYTES:
 * time and memory stay linear in the file's size. */
#include "kineto_read.h"
#include "alloc.h"

#include "input.h"
#include "kineto_parse.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

enum { CHUNK = 256 * 1024 };

const device_props *kineto_header_device(const kineto_header *h, int id)
{
    for (int i = 0; i < h->n_devices; i++)
        if (h->device_ids[i] == id)
            return &h->devices[i];
    return NULL;
}


/* One chunk read from a gzip file, inflated and parsed, against the decompression-bomb
 * limit of INPUT_MAX_INFLATE_RATIO times `limit_base` (the file's size). */
static kineto_status inflate_and_parse(kineto_parser *p, const char *path, z_stream *zs, int *z_ended,
                                       unsigned char *out, int64_t *inflated, int64_t limit_base, char *err,
                                       size_t errlen)
{
    while (zs->avail_in > 0) {
        if (*z_ended) { /* another gzip member follows */
            inflateReset(zs);
            *z_ended = 0;
        }
        zs->next_out = out;
        zs->avail_out = CHUNK;
        int zr = inflate(zs, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
            snprintf(err, errlen, "%s: corrupt gzip data: %s", path, zs->msg ? zs->msg : "inflate failed");
            return KINETO_ERR_JSON;
        }
        if (zr == Z_STREAM_END)
            *z_ended = 1;
        /* Against the size of the whole file (known from fstat): a bomb stops early. */
        *inflated += CHUNK - zs->avail_out;
        if (*inflated > INPUT_MAX_INFLATE_RATIO * limit_base + INPUT_INFLATE_SLACK_BYTES) {
            snprintf(err, errlen, "%s: inflates to more than %d times its compressed size: refused as a "
                     "decompression bomb (limit in SECURITY.md)", path, INPUT_MAX_INFLATE_RATIO);
            return KINETO_ERR_LIMIT;
        }
        kineto_status s = CHUNK - zs->avail_out ? kineto_parser_feed(p, out, CHUNK - zs->avail_out) : KINETO_OK;
        if (s != KINETO_OK)
            return s;
        if (zr == Z_BUF_ERROR)
            break;
    }
    return KINETO_OK;
}

/* The checks once the file is read whole: a gzip stream that ended, a file that was not
 * empty, then the parser's (a complete JSON document with a traceEvents array). */
static kineto_status check_whole_file(kineto_parser *p, const char *path, const kineto_file_info *info,
                                      int z_ended, char *err, size_t errlen)
{
    if (info->gzip && !z_ended) {
        snprintf(err, errlen, "%s: truncated gzip stream (the file ends inside the compressed data)", path);
        return KINETO_ERR_JSON;
    }
    if (info->size == 0) {
        snprintf(err, errlen, "%s: not valid JSON (line 1, column 1: empty file)", path);
        return KINETO_ERR_JSON;
    }
    return kineto_parser_finish(p);
}

/* The chunks of an open file, each handed to the digest and parsed (inflated first when
 * the file is gzip); then the whole-file checks. */
static kineto_status pump(int fd, const char *path, int64_t file_size, kineto_parser *p, kineto_digest *digest,
                          kineto_file_info *info, char *err, size_t errlen)
{
    unsigned char *raws[2] = {malloc(CHUNK), malloc(CHUNK)}, *out = malloc(CHUNK);
    if (!raws[0] || !raws[1] || !out)
        attn_oom();
    unsigned turn = 0;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    int z_open = 0, z_ended = 0, first = 1;
    int64_t inflated = 0;
    kineto_status s = KINETO_OK;
    for (;;) {
        unsigned char *raw = raws[turn++ & 1];
        if (digest)
            kineto_digest_release(digest, raw);
        ssize_t n = read(fd, raw, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            s = KINETO_ERR_IO;
            break;
        }
        if (n == 0)
            break;
        if (digest)
            kineto_digest_hand(digest, raw, (size_t)n);
        info->size += n;
        if (first) {
            first = 0;
            if (n >= 2 && raw[0] == 0x1f && raw[1] == 0x8b) {
                info->gzip = 1;
                if (inflateInit2(&zs, 15 + 16) != Z_OK)
                    attn_oom();
                z_open = 1;
            }
        }
        if (!info->gzip)
            s = kineto_parser_feed(p, raw, (size_t)n);
        else {
            zs.next_in = raw;
            zs.avail_in = (uInt)n;
            s = inflate_and_parse(p, path, &zs, &z_ended, out, &inflated,
                                  file_size > info->size ? file_size : info->size, err, errlen);
        }
        if (s != KINETO_OK)
            break;
    }
    if (s == KINETO_OK)
        s = check_whole_file(p, path, info, z_ended, err, errlen);
    if (digest) /* the buffers go only once the digest is done with them */
        kineto_digest_release(digest, raws[0]), kineto_digest_release(digest, raws[1]);
    if (z_open)
        inflateEnd(&zs);
    free(raws[0]), free(raws[1]), free(out);
    return s;
}

kineto_status kineto_read(const char *path, kineto_event_fn fn, void *ctx_user, kineto_header *hdr,
                          kineto_file_info *info, char *err, size_t errlen)
{
    kineto_header hdr_local;
    kineto_file_info info_local;
    int want_sha = info != NULL;
    if (!hdr)
        hdr = &hdr_local;
    if (!info)
        info = &info_local;
    memset(hdr, 0, sizeof *hdr);
    memset(info, 0, sizeof *info);
    int64_t file_size = 0;
    int fd = input_open(path, &file_size, err, errlen);
    if (fd < 0)
        return KINETO_ERR_IO;
    kineto_parser *p = kineto_parser_new(path, fn, ctx_user, hdr, err, errlen);
    kineto_digest digest;
    if (want_sha)
        kineto_digest_start(&digest);
    kineto_status status = pump(fd, path, file_size, p, want_sha ? &digest : NULL, info, err, errlen);
    info->n_events = kineto_parser_events(p);
    if (want_sha)
        kineto_digest_finish(&digest, info->sha256);
    kineto_parser_free(p);
    close(fd);
    return status;
}
