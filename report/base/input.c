/* Input files opened once and checked (input.h). A path is opened with O_NONBLOCK (a
 * FIFO then opens at once instead of waiting for a writer) and O_NOFOLLOW unless the
 * caller follows links; fstat and fstatfs decide, and the same descriptor is then read:
 * what is checked is what is read, and a digest taken over the bytes read is the digest
 * of what was parsed. The token guard keeps yajl's cost linear (see
 * INPUT_MAX_TOKEN_BYTES); the DOM budget bounds what a document read whole may take. */
#include "input.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* The kernel's pseudo file systems (linux/magic.h): their files are no data. */
static const char *pseudo_fs(int fd)
{
    static const struct {
        unsigned long magic;
        const char *name;
    } fs[] = {
        {0x9fa0, "procfs"},        {0x62656572, "sysfs"},     {0x64626720, "debugfs"},
        {0x74726163, "tracefs"},   {0x73636673, "securityfs"}, {0x27e0eb, "cgroupfs"},
        {0x63677270, "cgroup2fs"}, {0x62656570, "configfs"},  {0xcafe4a11, "bpffs"},
        {0x6165676c, "pstorefs"},  {0xde5e81e4, "efivarfs"},
    };
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if ((unsigned long)sf.f_type == fs[i].magic)
            return fs[i].name;
    return NULL;
}

int input_open_file(const char *path, const input_rules *rules, int *fd_out, int64_t *size, char *err, size_t errlen)
{
    *fd_out = -1;
    int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (rules->follow_links ? 0 : O_NOFOLLOW);
    int fd = open(path, flags);
    if (fd < 0) {
        if (errno == ELOOP && !rules->follow_links)
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: is a symbolic link; name the file it points to "
                           "(inputs are not followed through links)", path);
        return err_set(err, errlen, EXIT_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    const char *pseudo = NULL;
    int rc = EXIT_OK;
    if (fstat(fd, &st) != 0)
        rc = err_set(err, errlen, EXIT_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: is %s, not a regular file; give a plain file", path,
                     kind_of(st.st_mode));
    else if ((pseudo = pseudo_fs(fd)))
        rc = err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: is a %s file (the kernel's, not data: reading it can block "
                     "or consume it); copy what you mean into a plain file", path, pseudo);
    else if (rules->max_bytes > 0 && (int64_t)st.st_size > rules->max_bytes) {
        char limit[48];
        if (rules->max_bytes >= ((int64_t)1 << 20))
            snprintf(limit, sizeof limit, "%lld MiB", (long long)(rules->max_bytes >> 20));
        else
            snprintf(limit, sizeof limit, "%lld KiB", (long long)(rules->max_bytes >> 10));
        rc = err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %lld bytes, more than the %s attnprof reads of %s "
                     "(limit in SECURITY.md)", path, (long long)st.st_size, limit, rules->what ? rules->what : "it");
    }
    if (rc != EXIT_OK) {
        close(fd);
        return rc;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (size)
        *size = (int64_t)st.st_size;
    *fd_out = fd;
    return EXIT_OK;
}

int input_open(const char *path, int64_t *size, char *err, size_t errlen)
{
    const input_rules rules = {0};
    int fd = -1;
    return input_open_file(path, &rules, &fd, size, err, errlen) == EXIT_OK ? fd : -1;
}

int input_read_text(const char *path, const input_rules *rules, char **text, size_t *len, int *missing, char *err,
                    size_t errlen)
{
    *text = NULL;
    if (len)
        *len = 0;
    if (missing)
        *missing = 0;
    int fd = -1;
    int64_t size = 0;
    int rc = input_open_file(path, rules, &fd, &size, err, errlen);
    if (rc != EXIT_OK) {
        if (missing && rc == EXIT_IO && errno == ENOENT)
            *missing = 1;
        return rc;
    }
    /* The size fstat saw bounds the buffer; one byte more is asked for, so a file that grew
     * meanwhile is seen and refused instead of read past the limit. */
    int64_t cap = rules->max_bytes > 0 ? rules->max_bytes : size;
    char *buf = malloc((size_t)cap + 2);
    if (!buf) {
        close(fd);
        return err_set(err, errlen, EXIT_NO_MEMORY, "%s: out of memory reading %lld bytes", path, (long long)cap);
    }
    size_t got = 0;
    ssize_t k = 0;
    while (got <= (size_t)cap && (k = read(fd, buf + got, (size_t)cap + 1 - got)) > 0)
        got += (size_t)k;
    int saved = errno;
    close(fd);
    if (k < 0) {
        free(buf);
        return err_set(err, errlen, EXIT_IO, "%s: cannot read: %s", path, strerror(saved));
    }
    if (got > (size_t)cap) {
        free(buf);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: grew past the %lld bytes attnprof reads of %s while it was "
                       "read", path, (long long)cap, rules->what ? rules->what : "it");
    }
    buf[got] = '\0';
    *text = buf;
    if (len)
        *len = got;
    return EXIT_OK;
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
                return EXIT_BAD_ARCHIVE;
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
            return EXIT_BAD_ARCHIVE;
    }
    return EXIT_OK;
}

/* The DOM budget: while this thread parses a document, jansson's allocations are
 * counted (as malloc's chunks: the request and its header, rounded to 16 bytes) and
 * refused past the limit, which jansson reports as a failed parse. Installed once,
 * chained to the allocator that was in place (the CLI's attn_malloc). */
static _Thread_local int64_t dom_used, dom_limit;
static _Thread_local int dom_counting, dom_over;
static json_malloc_t outer_malloc;
static pthread_once_t budget_once = PTHREAD_ONCE_INIT;

static void *budget_malloc(size_t n)
{
    if (dom_counting) {
        int64_t chunk = (int64_t)((n + 8 + 15) & ~(size_t)15);
        if (chunk < 32)
            chunk = 32;
        if (dom_used + chunk > dom_limit) {
            dom_over = 1;
            return NULL;
        }
        dom_used += chunk;
    }
    return outer_malloc(n);
}

static void budget_install(void)
{
    json_free_t outer_free;
    json_get_alloc_funcs(&outer_malloc, &outer_free);
    json_set_alloc_funcs(budget_malloc, outer_free);
}

/* jansson's own fd loader (json_loadfd) reads one byte per read(2): a 60 MB document cost
 * 60 million system calls, 14 s of CPU (bench/results/2026-12-03-cost-scaling.md). This feed
 * reads 64 KiB at a time and hands jansson what it asks for (1 KiB a call) from that. */
struct fd_feed {
    int fd;
    size_t pos, len;
    unsigned char buf[1 << 16];
};

static size_t feed_fd(void *buffer, size_t buflen, void *data)
{
    struct fd_feed *f = data;
    while (f->pos == f->len) {
        ssize_t got = read(f->fd, f->buf, sizeof f->buf);
        if (got == 0)
            return 0; /* end of file */
        if (got < 0 && errno != EINTR)
            return (size_t)-1;
        if (got > 0)
            f->pos = 0, f->len = (size_t)got;
    }
    size_t n = f->len - f->pos < buflen ? f->len - f->pos : buflen;
    memcpy(buffer, f->buf + f->pos, n);
    f->pos += n;
    return n;
}

/* Parses fd (size bytes) under the budget; the caller closes fd. */
static json_t *parse_budgeted(int fd, int64_t size, json_error_t *je)
{
    pthread_once(&budget_once, budget_install);
    dom_used = 0, dom_over = 0;
    dom_limit = INPUT_DOM_MULTIPLE * size + INPUT_DOM_SLACK_BYTES;
    dom_counting = 1;
    /* Reads until end of file; JSON_DISABLE_EOF_CHECK is not set, so trailing bytes are an error. */
    static _Thread_local struct fd_feed feed;
    feed.fd = fd, feed.pos = feed.len = 0;
    json_t *root = json_load_callback(feed_fd, &feed, JSON_REJECT_DUPLICATES, je);
    dom_counting = 0;
    if (dom_over) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* The one line for a document jansson refused. */
static int json_refusal(const char *path, const json_error_t *je, int64_t size, char *err, size_t errlen)
{
    if (dom_over)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: its %lld bytes would take more than %d x that in memory "
                       "(%lld MiB) once parsed: no file attnprof writes is so dense; not an attnprof document",
                       path, (long long)size, INPUT_DOM_MULTIPLE,
                       (long long)((INPUT_DOM_MULTIPLE * size + INPUT_DOM_SLACK_BYTES) >> 20));
    if (json_error_code(je) == json_error_duplicate_key)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: inconsistent: a key appears twice in one object (line %d, "
                       "column %d: %s): which one holds cannot be told; remove one or record the archive again",
                       path, je->line, je->column, je->text);
    return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: not valid JSON (line %d, column %d: %s)", path, je->line,
                   je->column, je->text);
}

int input_read_json(const char *path, int64_t max_bytes, json_t **root, char *err, size_t errlen)
{
    *root = NULL;
    const input_rules rules = {.max_bytes = max_bytes};
    int64_t size = 0;
    int fd = -1;
    int rc = input_open_file(path, &rules, &fd, &size, err, errlen);
    if (rc != EXIT_OK)
        return rc == EXIT_IO ? EXIT_BAD_ARCHIVE : rc;
    json_error_t je;
    *root = parse_budgeted(fd, size, &je);
    close(fd);
    return *root ? EXIT_OK : json_refusal(path, &je, size, err, errlen);
}

json_t *input_load_json(const char *path, char *err, size_t errlen, json_error_t *je)
{
    memset(je, 0, sizeof *je);
    je->position = -1;
    const input_rules rules = {.max_bytes = INPUT_MAX_DOM_BYTES};
    int64_t size = 0;
    int fd = -1;
    if (input_open_file(path, &rules, &fd, &size, err, errlen) != EXIT_OK)
        return NULL;
    json_t *root = parse_budgeted(fd, size, je);
    close(fd);
    if (!root && (dom_over || json_error_code(je) == json_error_duplicate_key)) {
        json_refusal(path, je, size, err, errlen);
        je->position = -1; /* the reason is in err */
    } else if (!root && je->position < 0)
        je->position = 0; /* a JSON error always says where; keep "< 0" for ours */
    return root;
}
