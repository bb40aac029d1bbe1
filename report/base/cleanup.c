/* The temporaries a command must not leave behind when it is stopped (cleanup.h).
 * The table is written by the command and read by a signal handler: a slot's path is
 * filled before the slot is marked used, and unmarked before it is reused, so the
 * handler never reads a half-written path. Removal uses system calls only (no stdio,
 * no malloc, no nftw), which is what a signal handler may call. */
#include "cleanup.h"

#include "exit_codes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char paths[CLEANUP_MAX][4096];
static volatile sig_atomic_t path_used[CLEANUP_MAX];
static volatile pid_t groups[CLEANUP_MAX];

int cleanup_add_path(const char *path)
{
    size_t len = strlen(path);
    if (len >= sizeof paths[0])
        return EXIT_IO;
    for (int i = 0; i < CLEANUP_MAX; i++)
        if (!path_used[i]) {
            memcpy(paths[i], path, len + 1);
            path_used[i] = 1;
            return EXIT_OK;
        }
    return EXIT_IO;
}

void cleanup_forget_path(const char *path)
{
    for (int i = 0; i < CLEANUP_MAX; i++)
        if (path_used[i] && !strcmp(paths[i], path))
            path_used[i] = 0;
}

int cleanup_add_group(pid_t pgid)
{
    for (int i = 0; i < CLEANUP_MAX; i++)
        if (!groups[i]) {
            groups[i] = pgid;
            return EXIT_OK;
        }
    return EXIT_IO;
}

void cleanup_forget_group(pid_t pgid)
{
    for (int i = 0; i < CLEANUP_MAX; i++)
        if (groups[i] == pgid)
            groups[i] = 0;
}

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Empties the directory open as fd; EXIT_OK when it is empty, else EXIT_IO. */
static int empty_dir(int fd, int depth)
{
    char buf[2048] __attribute__((aligned(8)));
    int failed = 0;
    for (int pass = 0; pass < 1000; pass++) {
        lseek(fd, 0, SEEK_SET);
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n < 0)
            return EXIT_IO;
        int removed = 0, others = 0;
        for (long off = 0; off < n;) {
            struct linux_dirent64 *e = (struct linux_dirent64 *)(buf + off);
            off += e->d_reclen;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            others++;
            if (unlinkat(fd, e->d_name, 0) == 0) {
                removed++;
                continue;
            }
            if ((errno == EISDIR || errno == EPERM) && depth < 32) {
                int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0) {
                    empty_dir(sub, depth + 1);
                    close(sub);
                }
                if (unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0) {
                    removed++;
                    continue;
                }
            }
            failed = 1;
        }
        if (!others)
            return EXIT_OK;
        if (!removed)
            return EXIT_IO; /* what is left cannot be removed */
    }
    return failed ? EXIT_IO : EXIT_OK;
}

int cleanup_remove_tree(const char *path)
{
    if (unlink(path) == 0 || errno == ENOENT)
        return EXIT_OK;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return EXIT_IO;
    empty_dir(fd, 0);
    close(fd);
    return rmdir(path) == 0 || errno == ENOENT ? EXIT_OK : EXIT_IO;
}

void cleanup_now(void)
{
    for (int i = 0; i < CLEANUP_MAX; i++) {
        pid_t g = groups[i];
        if (g > 0)
            kill(-g, SIGKILL);
    }
    for (int i = 0; i < CLEANUP_MAX; i++)
        if (path_used[i])
            cleanup_remove_tree(paths[i]);
}

int cleanup_claim_ending(void)
{
    static atomic_long ending_thread; /* 0: nobody is ending the process yet */
    long self = (long)syscall(SYS_gettid), none = 0;
    if (atomic_compare_exchange_strong(&ending_thread, &none, self))
        return CLEANUP_ENDING_OURS;
    if (none == self)
        return CLEANUP_ENDING_AGAIN;
    for (;;)
        pause(); /* the other thread's _exit ends this one too */
}

static void on_stop(int sig)
{
    if (cleanup_claim_ending() == CLEANUP_ENDING_AGAIN)
        _exit(EXIT_INTERRUPTED);
    cleanup_now();
    char line[] = "attnprof: stopped by signal NN; its temporaries were removed and no output is half-written\n";
    char *nn = strstr(line, "NN");
    nn[0] = (char)('0' + sig / 10 % 10);
    nn[1] = (char)('0' + sig % 10);
    if (sig < 10) {
        nn[0] = nn[1];
        memmove(nn + 1, nn + 2, strlen(nn + 2) + 1);
    }
    (void)!write(STDERR_FILENO, line, strlen(line));
    _exit(EXIT_INTERRUPTED);
}

void cleanup_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* A write past the file-size limit (ulimit -f) then fails with EFBIG, an error the writer
     * reports and cleans up after like a full disk, instead of SIGXFSZ's default: a core dump
     * with the temporaries left. */
    signal(SIGXFSZ, SIG_IGN);
}

void cleanup_block(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    sigprocmask(SIG_BLOCK, &s, old);
}

void cleanup_unblock(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }
