/* err_set and err_prefix: a status code and its one-line reason in one statement (err.h). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

int err_prefix(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (!err || !errlen) return code;
    char reason[1024];
    snprintf(reason, sizeof reason, "%s", err);
    char head[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    if (reason[0])
        snprintf(err, errlen, "%s: %s", head, reason);
    else
        snprintf(err, errlen, "%s", head);
    return code;
}
