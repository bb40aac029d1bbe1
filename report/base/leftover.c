/* Marked folders and their leftovers (leftover.h): the marker written, read back and compared,
 * a proven folder removed with its marker last. Every read goes through input_open: no link is
 * followed, a FIFO or a device is refused before a byte is read, and the sizes are bounded. */
#include "leftover.h"

#include "alloc.h"
#include "cleanup.h"
#include "err.h"
#include "escape.h"
#include "input.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *join(const char *dir, const char *name) { return attn_asprintf("%s/%s", dir, name); }

int leftover_mark(const char *folder, const char *kind, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(folder, &st) != 0 || !S_ISDIR(st.st_mode))
        return err_set(err, errlen, EXIT_IO, "%s: cannot mark: %s", folder, strerror(errno ? errno : ENOTDIR));
    char text[160];
    snprintf(text, sizeof text, "attnprof %s %d %llu %llu\n", kind, (int)getpid(), (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    /* Written in place (O_EXCL, no link followed): a kill while it is written leaves a folder
     * that holds no more than a marker, which leftover_prove calls empty. */
    char *path = join(folder, LEFTOVER_MARKER);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    size_t len = strlen(text);
    int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    int saved = errno;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (!ok && fd >= 0)
        unlink(path);
    int rc = ok ? EXIT_OK : err_set(err, errlen, EXIT_IO, "%s: cannot write: %s", path, strerror(saved ? saved : EIO));
    free(path);
    return rc;
}

int leftover_make(const char *folder, const char *dir, const char *kind, char *err, size_t errlen)
{
    if (mkdir(folder, 0755) != 0)
        return err_set(err, errlen, EXIT_IO, "%s: cannot write into the directory: %s", dir, strerror(errno));
    return leftover_mark(folder, kind, err, errlen);
}

void leftover_unmark(const char *folder)
{
    char *marker = join(folder, LEFTOVER_MARKER);
    unlink(marker);
    free(marker);
}

int leftover_read_small(const char *path, char *buf, size_t n, int *missing, char *err, size_t errlen)
{
    int64_t size = 0;
    struct stat st;
    *missing = lstat(path, &st) != 0 && errno == ENOENT;
    if (*missing)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: none", path);
    if (!S_ISREG(st.st_mode))
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s is %s, not a regular file", path,
                       S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISDIR(st.st_mode) ? "a directory" : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a file");
    int fd = input_open(path, &size, err, errlen); /* no link followed, no blocking: what was checked is read */
    if (fd < 0)
        return EXIT_BAD_ARCHIVE;
    if (size < 0 || (uint64_t)size >= n) {
        close(fd);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %lld bytes, more than the %zu this pipeline writes", path,
                       (long long)size, n - 1);
    }
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got < 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: cannot read: %s", path, strerror(errno));
    buf[got] = '\0';
    return EXIT_OK;
}

/* 1 when the folder holds nothing but, at most, regular files named like the marker (the
 * marker or its temporary: a kill while the marker was written). Removing such a folder
 * loses nothing of anyone's. */
static int folder_holds_no_more_than_a_marker(const char *path)
{
    DIR *d = opendir(path);
    int other = 0;
    struct dirent *e;
    while (d && !other && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = join(path, e->d_name);
        struct stat st;
        other = strncmp(e->d_name, LEFTOVER_MARKER, strlen(LEFTOVER_MARKER)) != 0 || lstat(p, &st) != 0 || !S_ISREG(st.st_mode);
        free(p);
    }
    if (d)
        closedir(d);
    return d && !other;
}

leftover_proof leftover_prove(const char *path, const char *kind, long pid, char *why, size_t n)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return snprintf(why, n, "cannot stat it: %s", strerror(errno)), LEFTOVER_NOT_OURS;
    if (S_ISLNK(st.st_mode))
        return snprintf(why, n, "a symbolic link"), LEFTOVER_NOT_OURS;
    if (!S_ISDIR(st.st_mode))
        return snprintf(why, n, "not a directory"), LEFTOVER_NOT_OURS;
    if (st.st_uid != geteuid())
        return snprintf(why, n, "owned by user %u, not this one", (unsigned)st.st_uid), LEFTOVER_NOT_OURS;
    char *marker = join(path, LEFTOVER_MARKER), text[256], expect[160], rerr[512];
    int missing, rc = leftover_read_small(marker, text, sizeof text, &missing, rerr, sizeof rerr);
    free(marker);
    if (rc != EXIT_OK && folder_holds_no_more_than_a_marker(path))
        return LEFTOVER_EMPTY;
    if (rc != EXIT_OK)
        return snprintf(why, n, "no marker of attnprof's in it (%s)", missing ? "none" : rerr), LEFTOVER_NOT_OURS;
    snprintf(expect, sizeof expect, "attnprof %s %ld %llu %llu\n", kind, pid, (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    if (strcmp(text, expect) != 0)
        return snprintf(why, n, "its marker names another folder (copied or unpacked here)"), LEFTOVER_NOT_OURS;
    return LEFTOVER_OURS;
}

void leftover_say_left_alone(const char *path, const char *why)
{
    char safe[1024], safe_why[600];
    fprintf(stderr, "attnprof: %s: left alone: %s, so not a leftover attnprof can prove it made; remove it "
                    "yourself if nothing needs it\n", esc_terminal(safe, sizeof safe, path),
            esc_terminal(safe_why, sizeof safe_why, why));
}

void leftover_remove(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, LEFTOVER_MARKER))
            continue;
        char *p = join(path, e->d_name);
        cleanup_remove_tree(p);
        free(p);
    }
    if (d)
        closedir(d);
    char *marker = join(path, LEFTOVER_MARKER);
    unlink(marker);
    free(marker);
    rmdir(path);
}
