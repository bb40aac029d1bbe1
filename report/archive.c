#include "archive.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int path_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int unlink_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

int remove_tree(const char *path)
{
    if (!path_exists(path))
        return 0;
    return nftw(path, unlink_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int mkdir_p(const char *dir)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int archive_begin(const char *dest, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    char a[4096], b[4096];
    if (snprintf(a, sizeof a, "%s", dest) >= (int)sizeof a) {
        snprintf(err, errlen, "%.200s...: path too long", dest);
        return -1;
    }
    snprintf(b, sizeof b, "%s", dest);
    const char *parent = dirname(a), *name = basename(b);
    if (mkdir_p(parent) != 0) {
        snprintf(err, errlen, "%s: cannot create: %s", parent, strerror(errno));
        return -1;
    }
    if (snprintf(tmp, tmplen, "%s/.%s.tmp-%d", parent, name, (int)getpid()) >= (int)tmplen) {
        snprintf(err, errlen, "%.200s...: path too long", dest);
        return -1;
    }
    remove_tree(tmp);
    if (mkdir(tmp, 0755) != 0) {
        snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        return -1;
    }
    return 0;
}

int archive_commit(const char *tmp, const char *dest, int force, char *err, size_t errlen)
{
    char old[4200] = "";
    if (path_exists(dest)) {
        if (!force) {
            snprintf(err, errlen, "%s exists; pass --force to replace it or choose another -o", dest);
            return -1;
        }
        if (snprintf(old, sizeof old, "%s.old-%d", dest, (int)getpid()) >= (int)sizeof old) {
            snprintf(err, errlen, "%.200s...: path too long", dest);
            return -1;
        }
        if (rename(dest, old) != 0) {
            snprintf(err, errlen, "%s: cannot move the old archive aside: %s", dest, strerror(errno));
            return -1;
        }
    }
    if (rename(tmp, dest) != 0) {
        snprintf(err, errlen, "%s: cannot rename %s into place: %s", dest, tmp, strerror(errno));
        if (old[0])
            rename(old, dest);
        return -1;
    }
    if (old[0])
        remove_tree(old);
    return 0;
}

void gpu_slug(const char *gpu_name, char *out, size_t n)
{
    const char *s = gpu_name;
    if (!strncmp(s, "NVIDIA ", 7))
        s += 7;
    size_t j = 0;
    for (; *s && j + 1 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c))
            out[j++] = (char)tolower(c);
        else if (j && out[j - 1] != '-')
            out[j++] = '-';
    }
    while (j && out[j - 1] == '-')
        j--;
    out[j] = '\0';
    if (!j)
        snprintf(out, n, "gpu");
}
