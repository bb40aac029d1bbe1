/* Running the attnprof binary as a user would (tests of the command line): the binary
 * named by $ATTNPROF_BIN (make test sets it), stderr kept in err_text. */
#ifndef ATTNPROF_TEST_RUN_CLI_H
#define ATTNPROF_TEST_RUN_CLI_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char err_text[4096];

static inline const char *attnprof_bin(void)
{
    return getenv("ATTNPROF_BIN") ? getenv("ATTNPROF_BIN") : "build/attnprof";
}

/* Reads at most len - 1 bytes of path into text, NUL-terminated (empty if unreadable). */
static inline void read_into(const char *path, char *text, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, len - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
}

/* Runs `attnprof ARGS` through the shell, stderr into err_text and stdout into out_text when
 * one is given (dropped otherwise); returns its exit code (-1 if it did not exit). */
static inline int attnprof_out(const char *args, char *out_text, size_t out_len)
{
    char errf[] = "/tmp/attnprof-stderr-XXXXXX", outf[] = "/tmp/attnprof-stdout-XXXXXX";
    close(mkstemp(errf));
    if (out_text)
        close(mkstemp(outf));
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s", attnprof_bin(), args, out_text ? outf : "/dev/null", errf);
    int st = system(cmd);
    read_into(errf, err_text, sizeof err_text);
    unlink(errf);
    if (out_text) {
        read_into(outf, out_text, out_len);
        unlink(outf);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The PID of a process that existed and is gone: what a killed writer's leftovers are named for. */
static inline pid_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

/* Runs `attnprof ARGS`, stdout dropped. */
static inline int attnprof(const char *args) { return attnprof_out(args, NULL, 0); }

#endif
