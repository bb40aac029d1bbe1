/* The archive directory as a unit (archive.h): a new one is built under a temporary
 * name beside its destination and swapped in with one rename (RENAME_EXCHANGE where the
 * file system has it), so a kill leaves either the old or the new one at the
 * destination, never neither; a temporary or a moved-aside old one that a killed
 * process left is removed (or put back) by the next archive_begin of that destination.
 * Also: removing trees without following links, and whether two paths overlap (an
 * output that is, holds or lies inside an input is refused by the commands). */
#include "archive.h"

/* The marker kind of an archive built beside its destination (leftover.h). */
#define ARCHIVE_KIND "archive"

#include "alloc.h"
#include "cleanup.h"
#include "err.h"
#include "leftover.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
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

/* mkdir -p: EXIT_OK, or EXIT_IO with the reason in errno. */
static int mkdir_p(const char *dir)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return EXIT_IO;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return EXIT_IO;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? EXIT_IO : EXIT_OK;
}

long archive_dead_owner(const char *entry, const char *prefix, int self_is_gone)
{
    size_t n = strlen(prefix);
    if (strncmp(entry, prefix, n) != 0)
        return 0;
    const char *num = entry + n;
    if (!*num || strspn(num, "0123456789") != strlen(num) || strlen(num) > 9)
        return 0;
    long pid = strtol(num, NULL, 10);
    if (pid <= 0)
        return 0;
    if (pid == (long)getpid())
        return self_is_gone ? pid : 0;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return 0; /* a live process */
    return pid;
}

/* What a killed archive_commit of `parent/name` left, when it proves to be attnprof's
 * (leftover.h): the old archive moved aside while the destination is gone goes back (its
 * marker removed), any other proven leftover is removed. An entry named like one that does
 * not prove itself (a link, someone's own folder such as a backup "NAME.old-1234", a copy) is
 * left alone and named on stderr. */
static void recover_killed(const char *parent, const char *name)
{
    char tmp_prefix[300], old_prefix[300], path[PATH_MAX + 300], dest[PATH_MAX + 300];
    if (snprintf(tmp_prefix, sizeof tmp_prefix, ".%s.tmp-", name) >= (int)sizeof tmp_prefix ||
        snprintf(old_prefix, sizeof old_prefix, "%s.old-", name) >= (int)sizeof old_prefix)
        return;
    snprintf(dest, sizeof dest, "%s/%s", parent, name);
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long old_pid = archive_dead_owner(e->d_name, old_prefix, 0);
        long pid = old_pid ? old_pid : archive_dead_owner(e->d_name, tmp_prefix, 0);
        if (!pid)
            continue;
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        char why[600];
        leftover_proof proof = leftover_prove(path, ARCHIVE_KIND, pid, why, sizeof why);
        if (proof == LEFTOVER_NOT_OURS) {
            leftover_say_left_alone(path, why);
            continue;
        }
        if (proof == LEFTOVER_OURS && old_pid && !path_exists(dest) && rename(path, dest) == 0) {
            leftover_unmark(dest);
            continue;
        }
        leftover_remove(path);
    }
    closedir(d);
}

int archive_begin(const char *dest, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    char a[4096], b[4096];
    if (snprintf(a, sizeof a, "%s", dest) >= (int)sizeof a)
        return err_set(err, errlen, EXIT_IO, "%.200s...: path too long", dest);
    snprintf(b, sizeof b, "%s", dest);
    const char *parent = dirname(a), *name = basename(b);
    if (mkdir_p(parent) != EXIT_OK)
        return err_set(err, errlen, EXIT_IO, "%s: cannot create: %s", parent, strerror(errno));
    if (snprintf(tmp, tmplen, "%s/.%s.tmp-%d", parent, name, (int)getpid()) >= (int)tmplen)
        return err_set(err, errlen, EXIT_IO, "%.200s...: path too long", dest);
    recover_killed(parent, name);
    remove_tree(tmp); /* a link of this name goes, never what it points to */
    cleanup_add_path(tmp); /* before it exists: a signal right after mkdir still removes it */
    int rc = leftover_make(tmp, parent, ARCHIVE_KIND, err, errlen);
    if (rc != EXIT_OK)
        cleanup_forget_path(tmp);
    return rc;
}

/* The old archive at dest, when it is a real directory, gets a marker naming it, so that
 * wherever a kill leaves it (swapped to the temporary name, or moved aside) it proves to be
 * attnprof's old copy; 1 when it was marked. */
static int mark_old(const char *dest)
{
    struct stat st;
    return lstat(dest, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           leftover_mark(dest, ARCHIVE_KIND, NULL, 0) == EXIT_OK;
}

int archive_commit(const char *tmp, const char *dest, int force, char *err, size_t errlen)
{
    char old[4200] = "";
    sigset_t mask;
    cleanup_block(&mask); /* SIGINT/SIGTERM wait until dest is whole again */
    int rc = EXIT_OK, marked = 0;
    if (path_exists(dest)) {
        if (!force) {
            cleanup_unblock(&mask);
            return err_set(err, errlen, EXIT_OUTPUT_EXISTS, "%s exists; pass --force to replace it or choose another -o",
                           dest);
        }
        marked = mark_old(dest);
        /* One rename swaps the two: dest is the old archive or the new one, never absent. */
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dest, RENAME_EXCHANGE) == 0) {
            leftover_unmark(dest); /* the new archive: its marker is no output */
            if (marked)
                leftover_remove(tmp); /* the old archive, now under the temporary name */
            else
                remove_tree(tmp); /* a link or a file that was at dest: itself, never its target */
            cleanup_forget_path(tmp);
            cleanup_unblock(&mask);
            return EXIT_OK;
        }
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
            rc = err_set(err, errlen, EXIT_IO, "%s: cannot swap %s into place: %s", dest, tmp, strerror(errno));
        /* A file system without RENAME_EXCHANGE: aside, then in (archive_begin repairs a kill between). */
        else if (snprintf(old, sizeof old, "%s.old-%d", dest, (int)getpid()) >= (int)sizeof old)
            rc = err_set(err, errlen, EXIT_IO, "%.200s...: path too long", dest);
        else if (rename(dest, old) != 0)
            rc = err_set(err, errlen, EXIT_IO, "%s: cannot move the old archive aside: %s", dest, strerror(errno));
        if (rc != EXIT_OK) {
            if (marked)
                leftover_unmark(dest);
            cleanup_unblock(&mask);
            return rc;
        }
    }
    if (rename(tmp, dest) != 0) {
        rc = err_set(err, errlen, EXIT_IO, "%s: cannot rename %s into place: %s", dest, tmp, strerror(errno));
        if (old[0] && rename(old, dest) == 0 && marked)
            leftover_unmark(dest);
    } else {
        leftover_unmark(dest);
        cleanup_forget_path(tmp);
        if (old[0] && marked)
            leftover_remove(old);
        else if (old[0])
            remove_tree(old);
    }
    cleanup_unblock(&mask);
    return rc;
}

/* The canonical absolute form of a path that may not exist yet: realpath of its longest
 * existing prefix, then the rest as written. EXIT_OK, or EXIT_IO (too long, or unresolvable). */
static int canonical(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX], real[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf || !*buf)
        return EXIT_IO;
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    if (realpath(buf, real))
        return snprintf(out, n, "%s", real) < (int)n ? EXIT_OK : EXIT_IO;
    if (errno != ENOENT)
        return EXIT_IO;
    char *slash = strrchr(buf, '/');
    const char *last = slash ? slash + 1 : buf;
    char parent[PATH_MAX];
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == buf)
        snprintf(parent, sizeof parent, "/");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - buf), buf);
    char cp[PATH_MAX];
    if (canonical(parent, cp, sizeof cp) != 0)
        return EXIT_IO;
    /* Folders that do not exist yet will be made as real ones: "." and ".." then read as written. */
    if (!strcmp(last, "."))
        return snprintf(out, n, "%s", cp) < (int)n ? EXIT_OK : EXIT_IO;
    if (!strcmp(last, "..")) {
        char *up = strrchr(cp, '/');
        if (up && up != cp)
            *up = '\0';
        else
            snprintf(cp, sizeof cp, "/");
        return snprintf(out, n, "%s", cp) < (int)n ? EXIT_OK : EXIT_IO;
    }
    return snprintf(out, n, "%s%s%s", cp, strcmp(cp, "/") ? "/" : "", last) < (int)n ? EXIT_OK : EXIT_IO;
}

/* a is b or lies inside b */
static int within(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (!strcmp(b, "/"))
        return 1;
    return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

int archive_paths_overlap(const char *out, const char *in)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (canonical(out, a, sizeof a) != 0 || canonical(in, b, sizeof b) != 0)
        return ATTN_NONE;
    return within(a, b) || within(b, a);
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

/* Write through a temporary file in the same directory, then rename: readers
 * never see a half-written file. The temporary's name is predictable (NAME.tmp-PID),
 * and the directory may be someone else's (a sweep's status/): it is created with
 * O_EXCL | O_NOFOLLOW, so a link planted there is never written through (a leftover
 * of that name is unlinked, the link itself and not its target, and creation tried once
 * more). The rename replaces a link at NAME by the file, never writes into its target. */
int archive_write_file(const char *dir, const char *name, const char *text, char *err, size_t errlen)
{
    char *path = NULL, *tmp = NULL;
    if (asprintf(&path, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s.tmp-%d", path, (int)getpid()) < 0)
        attn_oom();
    int rc = EXIT_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        rc = EXIT_IO;
    } else {
        size_t n = strlen(text);
        int ok = fwrite(text, 1, n, f) == n;
        ok &= fflush(f) == 0;
        int saved = errno;
        ok &= fclose(f) == 0;
        if (!ok && !errno)
            errno = saved ? saved : EIO;
        if (!ok || rename(tmp, path) != 0) {
            snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            unlink(tmp);
            rc = EXIT_IO;
        }
    }
    free(path);
    free(tmp);
    return rc;
}
