/* An index from a 64-bit hash to positions in a caller's array, for finding the equal of a
 * record among many in O(1) expected: kernels grouped by name and launch,
 * names seen before. The table holds positions, not records; the caller's equality decides
 * between records of one hash, so any key (a name, a name and a launch configuration) works.
 * Open addressing with linear probing, grown at half full. */
#ifndef ATTNPROF_HASH_INDEX_H
#define ATTNPROF_HASH_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct hash_index {
    uint64_t *hash;  /* per slot */
    int *pos;        /* per slot: the caller's position, -1 for an empty slot */
    size_t cap, n;
} hash_index;

/* Whether the record at position `pos` of the caller's array equals the key in ctx. */
typedef int (*hash_index_eq)(int pos, const void *ctx);

void hash_index_init(hash_index *h);
void hash_index_free(hash_index *h);
/* The position of the record equal to the key (hash `hv`, equality `eq` on ctx), or ATTN_NONE (err.h). */
int hash_index_find(const hash_index *h, uint64_t hv, hash_index_eq eq, const void *ctx);
/* Adds position `pos` under hash `hv` (not checked for an equal: find first). */
void hash_index_add(hash_index *h, uint64_t hv, int pos);

/* FNV-1a over bytes, then over a NUL-terminated string (NULL hashes as ""), chained from `h`
 * (start with HASH_SEED). */
#define HASH_SEED 0xcbf29ce484222325ull
uint64_t hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t hash_str(uint64_t h, const char *s);

/* A set of strings (borrowed, not copied): 1 when s was in it already, else adds it and 0. */
typedef struct str_set {
    hash_index index;
    const char **items;
    int n, cap;
} str_set;
void str_set_init(str_set *s);
void str_set_free(str_set *s);
int str_set_seen(str_set *s, const char *str);

#endif
