/* Input files opened once and checked (input.h): issue 29. A path is opened with
 * O_NOFOLLOW | O_NONBLOCK (a FIFO then opens at once instead of waiting for a
 * writer), fstat decides, and the same descriptor is then read: what is checked is
 * what is read, and a digest taken over the bytes read is the digest of what was
 * parsed. The token guard keeps yajl's cost linear (see INPUT_MAX_TOKEN_BYTES). */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int input_open(const char *path, int64_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(err, errlen, "%s: is a symbolic link; name the file it points to (inputs are not followed "
                     "through links)", path);
        else
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: is %s, not a regular file; give a plain file", path, kind_of(st.st_mode));
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (size)
        *size = (int64_t)st.st_size;
    return fd;
}

/* JSON's structural characters and whitespace end a bare token (number, literal). */
static int ends_bare(unsigned char c)
{
    return c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || c == ' ' || c == '\t' ||
           c == '\n' || c == '\r' || c == '"';
}

int input_token_check(input_token_guard *g, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (g->in_string) {
            /* the common case: a run of plain characters */
            const unsigned char *p = s + i, *end = s + n;
            while (p < end && *p != '"' && *p != '\\' && !g->escaped)
                p++;
            size_t run = (size_t)(p - (s + i));
            g->len += run;
            i += run;
            if (g->len > INPUT_MAX_TOKEN_BYTES)
                return -1;
            if (i == n)
                break;
            c = s[i];
            g->len++;
            if (g->escaped)
                g->escaped = 0;
            else if (c == '\\')
                g->escaped = 1;
            else if (c == '"')
                g->in_string = 0, g->len = 0;
        } else if (c == '"') {
            g->in_string = 1, g->in_bare = 0, g->len = 0;
        } else if (ends_bare(c)) {
            g->in_bare = 0, g->len = 0;
        } else {
            if (!g->in_bare)
                g->in_bare = 1, g->len = 0;
            g->len++;
        }
        if (g->len > INPUT_MAX_TOKEN_BYTES)
            return -1;
    }
    return 0;
}

json_t *input_load_json(const char *path, char *err, size_t errlen, json_error_t *je)
{
    memset(je, 0, sizeof *je);
    je->position = -1;
    int64_t size = 0;
    int fd = input_open(path, &size, err, errlen);
    if (fd < 0)
        return NULL;
    if (size > INPUT_MAX_DOM_BYTES) {
        snprintf(err, errlen, "%s: %lld bytes, more than the %lld MiB attnprof reads of it (limit in SECURITY.md)",
                 path, (long long)size, (long long)(INPUT_MAX_DOM_BYTES >> 20));
        close(fd);
        return NULL;
    }
    /* Reads until end of file; JSON_DISABLE_EOF_CHECK is not set, so trailing bytes are an error. */
    json_t *root = json_loadfd(fd, 0, je);
    if (!root && je->position < 0)
        je->position = 0; /* a JSON error always says where; keep "< 0" for ours */
    close(fd);
    return root;
}
