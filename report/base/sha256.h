/* SHA-256 (FIPS 180-4), streamed: run.json records the files an archive was
 * imported from by size and digest. */
#ifndef ATTNPROF_SHA256_H
#define ATTNPROF_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t nbuf;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);

#endif
