/* The hash index (hash_index.h). */
#include "hash_index.h"
#include "alloc.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

void hash_index_init(hash_index *h) { memset(h, 0, sizeof *h); }

void hash_index_free(hash_index *h)
{
    free(h->hash);
    free(h->pos);
    memset(h, 0, sizeof *h);
}

/* Mixes the low bits (FNV's are weak) into the slot number. */
static size_t slot_of(uint64_t hv, size_t cap)
{
    hv ^= hv >> 33;
    hv *= 0xff51afd7ed558ccdull;
    hv ^= hv >> 33;
    return (size_t)hv & (cap - 1);
}

int hash_index_find(const hash_index *h, uint64_t hv, hash_index_eq eq, const void *ctx)
{
    if (!h->cap)
        return ATTN_NONE;
    for (size_t s = slot_of(hv, h->cap);; s = (s + 1) & (h->cap - 1)) {
        if (h->pos[s] < 0)
            return ATTN_NONE;
        if (h->hash[s] == hv && eq(h->pos[s], ctx))
            return h->pos[s];
    }
}

static void place(hash_index *h, uint64_t hv, int pos)
{
    size_t s = slot_of(hv, h->cap);
    while (h->pos[s] >= 0)
        s = (s + 1) & (h->cap - 1);
    h->hash[s] = hv;
    h->pos[s] = pos;
}

void hash_index_add(hash_index *h, uint64_t hv, int pos)
{
    if (2 * (h->n + 1) > h->cap) {
        hash_index old = *h;
        h->cap = old.cap ? old.cap * 2 : 64;
        h->hash = malloc(sizeof *h->hash * h->cap);
        h->pos = malloc(sizeof *h->pos * h->cap);
        if (!h->hash || !h->pos)
            attn_oom();
        memset(h->pos, 0xff, sizeof *h->pos * h->cap); /* every slot -1 */
        for (size_t s = 0; s < old.cap; s++)
            if (old.pos[s] >= 0)
                place(h, old.hash[s], old.pos[s]);
        free(old.hash);
        free(old.pos);
    }
    place(h, hv, pos);
    h->n++;
}

uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t hash_str(uint64_t h, const char *s)
{
    for (const unsigned char *b = (const unsigned char *)(s ? s : ""); *b; b++)
        h = (h ^ *b) * 0x100000001b3ull;
    return h;
}

void str_set_init(str_set *s) { memset(s, 0, sizeof *s); }

void str_set_free(str_set *s)
{
    hash_index_free(&s->index);
    free(s->items);
    memset(s, 0, sizeof *s);
}

typedef struct str_key {
    const str_set *set;
    const char *s;
} str_key;

static int str_equal(int pos, const void *ctx)
{
    const str_key *k = ctx;
    return !strcmp(k->set->items[pos], k->s);
}

int str_set_seen(str_set *s, const char *str)
{
    str = str ? str : "";
    uint64_t hv = hash_str(HASH_SEED, str);
    str_key key = {s, str};
    if (hash_index_find(&s->index, hv, str_equal, &key) >= 0)
        return 1;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->items = realloc(s->items, sizeof *s->items * (size_t)s->cap);
        if (!s->items)
            attn_oom();
    }
    s->items[s->n] = str;
    hash_index_add(&s->index, hv, s->n++);
    return 0;
}
