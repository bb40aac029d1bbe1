/* Running the attnprof binary as a user would (tests of the command line): the binary
 * named by $ATTNPROF_BIN (make test sets it), stdout dropped, stderr kept in err_text. */
#ifndef ATTNPROF_TEST_RUN_CLI_H
#define ATTNPROF_TEST_RUN_CLI_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char err_text[4096];

/* Runs `attnprof ARGS` through the shell; returns its exit code (-1 if it did not exit). */
static inline int attnprof(const char *args)
{
    const char *bin = getenv("ATTNPROF_BIN") ? getenv("ATTNPROF_BIN") : "build/attnprof";
    char errf[] = "/tmp/attnprof-stderr-XXXXXX";
    close(mkstemp(errf));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>%s", bin, args, errf);
    int st = system(cmd);
    FILE *f = fopen(errf, "r");
    size_t n = f ? fread(err_text, 1, sizeof err_text - 1, f) : 0;
    err_text[n] = '\0';
    if (f)
        fclose(f);
    unlink(errf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
