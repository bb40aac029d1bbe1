/* Host memory that cannot be had is one line and a documented exit code, not an
 * abort: attn_oom says "out of memory" on stderr, removes the command's registered
 * temporaries (cleanup.h) and exits EXIT_NO_MEMORY (9). The wrappers call it when
 * malloc, calloc, realloc, strdup or asprintf fail; the result never is NULL and is
 * freed with free(). */
#ifndef ATTNPROF_ALLOC_H
#define ATTNPROF_ALLOC_H

#include <stddef.h>
#include <stdio.h>

_Noreturn void attn_oom(void);
void *attn_malloc(size_t n);
void *attn_calloc(size_t n, size_t size);
void *attn_realloc(void *p, size_t n);
char *attn_strdup(const char *s);
/* asprintf that never fails: the formatted text, to free(). */
char *attn_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A text written with stdio (open_memstream into *buf and *len, both reset), never NULL;
 * after fclose the text is *buf, to free(). Every in-memory writer opens with it. */
FILE *attn_memstream(char **buf, size_t *len);

#endif
