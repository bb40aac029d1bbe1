/* Allocation that ends the process cleanly when memory runs out (alloc.h). The line is
 * written with write(2): stdio may itself need memory to print it. */
#include "alloc.h"

#include "cleanup.h"
#include "exit_codes.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void attn_oom(void)
{
    /* Threads (figures, readers) may run out together, or one crashes in a library that
     * does not check its malloc: the first to claim the ending says it, the others wait. */
    if (cleanup_claim_ending() == CLEANUP_ENDING_AGAIN)
        _exit(EXIT_NO_MEMORY); /* ran out again inside our own cleanup */
    static const char line[] = "attnprof: out of memory (host RAM); free some, or give a smaller input "
                               "(exit 9)\n";
    (void)!write(STDERR_FILENO, line, sizeof line - 1);
    cleanup_now();
    _exit(EXIT_NO_MEMORY);
}

void *attn_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        attn_oom();
    return p;
}

void *attn_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        attn_oom();
    return p;
}

void *attn_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        attn_oom();
    return q;
}

char *attn_strdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        attn_oom();
    return p;
}

char *attn_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = NULL;
    int n = vasprintf(&p, fmt, ap);
    va_end(ap);
    if (n < 0)
        attn_oom();
    return p;
}

FILE *attn_memstream(char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f)
        attn_oom();
    return f;
}
