/* base/archive: what a killed commit of an archive left beside its destination is repaired
 * only when it proves to be attnprof's (leftover.h); a user's backup named like an old copy,
 * a folder named like a temporary and a link of either name are left alone. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive.h"
#include "exit_codes.h"
#include "run_cli.h"
#include "slurp.h"

static void put(const char *dir, const char *name, const char *text)
{
    char err[256];
    cr_assert_eq(mkdir(dir, 0755) == 0 || path_exists(dir), 1);
    cr_assert_eq(archive_write_file(dir, name, text, err, sizeof err), EXIT_OK, "%s", err);
}

Test(archive, leftovers_that_are_not_ours_survive_the_next_commit)
{
    char parent[] = "/tmp/attnprof-archive-XXXXXX", dest[600], backup[700], tmpdir_[700], link_[700],
        victim[700], tmp[PATH_MAX + 64], err[512];
    cr_assert_not_null(mkdtemp(parent));
    snprintf(dest, sizeof dest, "%s/out", parent);
    snprintf(victim, sizeof victim, "%s/victim", parent);
    put(victim, "keep.txt", "victim\n");
    pid_t d1 = dead_pid(), d2 = dead_pid(), d3 = dead_pid();
    snprintf(backup, sizeof backup, "%s/out.old-%d", parent, (int)d1); /* someone's backup */
    put(backup, "report.md", "my backup\n");
    snprintf(tmpdir_, sizeof tmpdir_, "%s/.out.tmp-%d", parent, (int)d2); /* a folder of that name */
    put(tmpdir_, "notes.txt", "mine\n");
    snprintf(link_, sizeof link_, "%s/.out.tmp-%d", parent, (int)d3);
    cr_assert_eq(symlink("victim", link_), 0);
    put(dest, "report.md", "the old archive\n");
    /* a killed writer's own temporary: proves itself and goes */
    pid_t child = fork();
    if (child == 0) {
        freopen("/dev/null", "w", stderr); /* it names the strangers too */
        char t[PATH_MAX + 64], e[256];
        _exit(archive_begin(dest, t, sizeof t, e, sizeof e) == EXIT_OK ? 0 : 1);
    }
    int st;
    waitpid(child, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char killed[700];
    snprintf(killed, sizeof killed, "%s/.out.tmp-%d", parent, (int)child);
    cr_assert(path_exists(killed));

    char errf[] = "/tmp/attnprof-archive-err-XXXXXX";
    int efd = mkstemp(errf), saved = dup(2);
    dup2(efd, 2);
    int rc = archive_begin(dest, tmp, sizeof tmp, err, sizeof err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(efd);
    char *said = slurp(errf);
    unlink(errf);
    cr_assert_eq(rc, EXIT_OK, "%s", err);
    const char *const strangers[] = {backup, tmpdir_, link_};
    for (int i = 0; i < 3; i++)
        cr_assert(said && strstr(said, strangers[i]) && strstr(said, "left alone"), "%s not named: %s", strangers[i],
                  said ? said : "");
    free(said);
    cr_assert(!path_exists(killed), "the killed writer's own temporary is left");
    put(tmp, "report.md", "the new archive\n");
    cr_assert_eq(archive_commit(tmp, dest, 1, err, sizeof err), EXIT_OK, "%s", err);
    char path[800];
    snprintf(path, sizeof path, "%s/report.md", dest);
    char *t = slurp(path);
    cr_assert(t && !strcmp(t, "the new archive\n"));
    free(t);
    snprintf(path, sizeof path, "%s/.made-by-attnprof", dest);
    cr_assert(!path_exists(path), "the committed archive carries the marker");
    snprintf(path, sizeof path, "%s/report.md", backup);
    t = slurp(path);
    cr_assert(t && !strcmp(t, "my backup\n"), "a backup named like an old copy was removed");
    free(t);
    snprintf(path, sizeof path, "%s/notes.txt", tmpdir_);
    cr_assert(path_exists(path), "a folder named like a temporary was removed");
    struct stat ls;
    cr_assert(lstat(link_, &ls) == 0 && S_ISLNK(ls.st_mode), "the link was removed");
    snprintf(path, sizeof path, "%s/keep.txt", victim);
    cr_assert(path_exists(path), "the link's target was touched");
    char cmd[800];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -c -e '^\\.out\\.tmp-' -e '^out\\.old-' | grep -qx 3", parent);
    cr_assert_eq(system(cmd), 0, "only the three strangers stay");
    remove_tree(parent);
}
