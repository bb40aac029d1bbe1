/* `attnprof record [-o DIR] [--range NAME] [--skip N] [--steps N] [--variant NAME] [--force] [-q] -- CMD ARGS...`:
 * runs CMD with libattnprof_inject.so named by CUDA_INJECTION64_PATH (and by
 * NVTX_INJECTION64_PATH, for its NVTX ranges), each process that reaches CUDA writing one
 * raw file into a temporary folder; then turns the raw file into an archive
 * (record_convert.h) written as `import` writes one (a temporary directory beside DIR,
 * rendered, renamed into place). CMD's exit status is attnprof's (128 + N for a signal),
 * once the archive is written; CMD not found exits 127, not executable 126, a program
 * that ran no CUDA or no GPU work EXIT_NOTHING_RECORDED, each with its one line. While CMD
 * runs, SIGINT and SIGQUIT are left to it (as system() does): a program stopped with
 * Ctrl-C still leaves what it recorded. */
#include "record.h"
#include "cli.h"
#include "commands.h"

#include "archive.h"
#include "archive_write.h"
#include "cleanup.h"
#include "counters.h"
#include "escape.h"
#include "exit_codes.h"
#include "record_convert.h"
#include "report_render.h"
#include "figures.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INJECT_FILE "libattnprof_inject.so"

/* What record needs of the command line (cli_options, parsed by cli.c's tables). */
typedef struct record_cli {
    const char *variant; /* --variant NAME; NULL: from CMD (or the raw file) */
    const char *out_dir;
    step_options steps;
    int force, quiet;
    const char *raw;   /* --raw FILE: convert a kept raw file, run nothing */
    char **cmd;
    int n_cmd;
} record_cli;

/* The injection library: $ATTNPROF_INJECT, beside the executable, or ../lib/attnprof/. */
static int find_library(char *out, size_t n, char *err, size_t errlen)
{
    const char *env = getenv("ATTNPROF_INJECT");
    if (env && *env) {
        if (realpath(env, out) && access(out, R_OK) == 0)
            return EXIT_OK;
        snprintf(err, errlen, "ATTNPROF_INJECT=%s: no such library", env);
        return EXIT_NO_DEVICE;
    }
    char exe[PATH_MAX], path[PATH_MAX + 64];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        *slash = '\0';
        const char *tails[] = {"/" INJECT_FILE, "/../lib/attnprof/" INJECT_FILE};
        for (int i = 0; i < 2; i++) {
            snprintf(path, sizeof path, "%s%s", exe, tails[i]);
            if (access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < n)
                return EXIT_OK;
        }
    }
    snprintf(err, errlen, "no %s beside the attnprof executable: this attnprof was built without CUDA (no nvcc "
             "under CUDA_HOME); rebuild with the CUDA Toolkit, or point ATTNPROF_INJECT at the library", INJECT_FILE);
    return EXIT_NO_DEVICE;
}

/* The child: the environment, the default SIGINT/SIGQUIT back, exec; errno on the pipe if exec fails. */
static void run_child(const record_cli *c, const char *lib, const char *raw_dir, int report_fd)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    setenv("CUDA_INJECTION64_PATH", lib, 1);
    setenv("NVTX_INJECTION64_PATH", lib, 1);
    setenv("ATTNPROF_INJECT_DIR", raw_dir, 1);
    execvp(c->cmd[0], c->cmd);
    int e = errno;
    (void)!write(report_fd, &e, sizeof e);
    _exit(127);
}

static volatile sig_atomic_t stop_waiting;
static void on_stop_waiting(int sig)
{
    (void)sig;
    stop_waiting = 1;
}

/* After CMD's own process ended: the processes it started and left running were reparented to
 * attnprof (a subreaper, set before the fork), and each writes its raw file as it exits, so they
 * are waited for too, said in one line. SIGINT or SIGTERM stops the wait (what those processes
 * had written is kept, marked incomplete where it was cut short). */
static void wait_descendants(const record_cli *c)
{
    struct sigaction stop = {.sa_handler = on_stop_waiting}, old_int, old_term;
    sigaction(SIGINT, &stop, &old_int);
    sigaction(SIGTERM, &stop, &old_term);
    int said = 0, st;
    for (;;) {
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0)
            continue; /* one of them ended */
        if (p < 0 && errno != EINTR)
            break;    /* ECHILD: none left */
        if (stop_waiting) {
            fprintf(stderr, "attnprof: record: stopped waiting; converting what was written\n");
            break;
        }
        if (!said && !c->quiet)
            fprintf(stderr, "attnprof: record: %s ended, but processes it started are still running; waiting for them "
                    "to end (each writes its records as it exits; Ctrl-C stops the wait)\n", c->cmd[0]);
        said = 1;
        struct timespec tick = {0, 20 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    stop_waiting = 0;
}

/* Runs CMD to its end; EXIT_OK with its wait status, or 126/127 when it could not start. */
static int run_program(const record_cli *c, const char *lib, const char *raw_dir, int *status, char *err, size_t n)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return snprintf(err, n, "pipe: %s", strerror(errno)), EXIT_IO;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1); /* where it is refused, orphans go to init, unrecorded */
    pid_t pid = fork();
    if (pid == 0)
        run_child(c, lib, raw_dir, pipefd[1]);
    close(pipefd[1]);
    int rc = EXIT_OK, e = 0;
    if (pid < 0) {
        snprintf(err, n, "fork: %s", strerror(errno));
        rc = EXIT_IO;
    } else {
        ssize_t got = read(pipefd[0], &e, sizeof e);
        while (waitpid(pid, status, 0) < 0 && errno == EINTR)
            ;
        if (got == (ssize_t)sizeof e) {
            snprintf(err, n, "%s: %s", c->cmd[0],
                     e == ENOENT ? "command not found (not a file, and not on PATH)" : strerror(e));
            rc = e == ENOENT ? 127 : 126;
        } else
            wait_descendants(c);
    }
    close(pipefd[0]);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return rc;
}

/* The raw files the program's processes left; the one with the most bytes (the most records) in best. */
static int pick_raw(const char *raw_dir, char *best, size_t n)
{
    DIR *d = opendir(raw_dir);
    int count = 0;
    off_t most = -1;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "raw-", 4))
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", raw_dir, e->d_name);
        struct stat st; /* never opened here: a FIFO named raw-* would block; the reader refuses it */
        if (lstat(path, &st) != 0)
            continue;
        off_t size = S_ISREG(st.st_mode) ? st.st_size : 0;
        count++;
        if (size > most) {
            most = size;
            snprintf(best, n, "%s", path);
        }
    }
    if (d)
        closedir(d);
    return count;
}

static void program_line(const record_cli *c, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < c->n_cmd && len + 1 < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? " " : "", c->cmd[i]);
    if (len >= n)
        out[n - 1] = '\0';
    esc_utf8_trim(out);
}

/* The archive writer's render step: the report, as `attnprof report` renders it. */
static int render_archive(const char *dir, const trace *t, const run_info *r, void *ctx, char *err, size_t errlen)
{
    return report_render(dir, t, r, ctx, err, errlen);
}

/* The archive through the one archive writer (archive_write.h): trace.json and run.json read
 * back and rendered as `attnprof report` renders them, so a re-render gives the same bytes. */
static int write_archive(const record_cli *c, trace *t, run_info *r, char *err, size_t n)
{
    report_render_options ro = {FIG_PNG | FIG_SVG, 0, 1, 0, FIG_SIZE_SCREEN, NULL, 0};
    const archive_write_options wo = {c->out_dir, c->force, ARCHIVE_READ_BACK_ALL, render_archive, &ro};
    return archive_write(&wo, t, r, err, n);
}

static void default_out(const char *variant, char *out, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32] = "now";
    if (gmtime_r(&now, &tm))
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(out, n, "out/record-%s-%s", variant, stamp);
}

static void summary(const record_cli *c, const inject_raw *m, const step_result *s, const run_info *r)
{
    if (c->quiet)
        return;
    printf("recorded %zu kernels, %zu memcpy, %zu memset, %zu NVTX ranges, %zu synchronising calls; CUPTI dropped "
           "%lld records\n", m->n_kernels, m->n_memcpy, m->n_memset, m->n_nvtx_ranges, m->n_sync_calls,
           (long long)m->dropped);
    printf("steps: %d of %d found, from %s (rule: %s)\n", s->kept, s->found, s->rule_text, step_rule_name(s->rule));
    if (r->variants[0].status != VARIANT_OK)
        printf("%s\n", r->variants[0].error);
    printf("report: %s/report.html\n", c->out_dir);
}

/* From the raw folder the program left to the archive; returns the exit status. */
static int convert(const record_cli *c, const char *raw_dir, int status, const char *cmdline, const char *version)
{
    char err[2048], raw[PATH_MAX], variant[32], program[1024], out[PATH_MAX];
    int processes = c->raw ? 1 : pick_raw(raw_dir, raw, sizeof raw);
    if (c->raw)
        snprintf(raw, sizeof raw, "%s", c->raw);
    int child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (processes == 0) {
        snprintf(err, sizeof err, "%s %s before any CUDA call: nothing recorded (the injection library loads at a "
                 "process's first CUDA call)", c->cmd[0], child_rc ? "failed" : "exited");
        if (child_rc)
            snprintf(err + strlen(err), sizeof err - strlen(err), "; its exit status was %d", child_rc);
        return cli_fail(EXIT_NOTHING_RECORDED, "record: %s", err);
    }
    if (c->raw) {
        char *argv1[1] = {(char *)c->raw};
        record_variant_name(argv1, 1, variant, sizeof variant);
        if (c->variant)
            snprintf(variant, sizeof variant, "%s", c->variant);
        snprintf(program, sizeof program, "converted from the raw file %s", c->raw);
        esc_utf8_trim(program);
    } else {
        record_variant_name(c->cmd, c->n_cmd, variant, sizeof variant);
        if (c->variant)
            snprintf(variant, sizeof variant, "%s", c->variant);
        program_line(c, program, sizeof program);
    }
    record_options ro = {variant, program, c->steps, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1, processes};
    trace t;
    static run_info r;
    inject_raw m;
    step_result s;
    int rc = record_convert(raw, &ro, &t, &r, &m, &s, err, sizeof err);
    if (rc != EXIT_OK)
        return cli_fail(rc, "record: %s", err);
    snprintf(r.tool_version, sizeof r.tool_version, "%s", version);
    snprintf(r.command_line, sizeof r.command_line, "%s", cmdline);
    if (processes > 1 && !c->quiet)
        printf("%d processes of the program used CUDA; the archive holds the one with the most records (pid %d)\n",
               processes, m.pid);
    if (!c->out_dir) {
        default_out(variant, out, sizeof out);
        ((record_cli *)c)->out_dir = out;
    }
    rc = write_archive(c, &t, &r, err, sizeof err);
    if (rc == EXIT_OK)
        summary(c, &m, &s, &r);
    counters_free(&r.counters);
    trace_free(&t);
    return rc != EXIT_OK ? cli_fail(rc, "record: %s", err) : child_rc;
}

int record_main(const cli_options *o, const char *cmdline, const char *version)
{
    record_cli c = {o->import_variant, o->out_dir, {o->import_range, o->record_skip, o->record_steps}, o->force,
                    o->run.quiet, o->record_raw, o->inputs, o->n_inputs};
    char err[PATH_MAX + 512], lib[PATH_MAX];
    int rc;
    if (c.variant && (strlen(c.variant) >= 32 || strspn(c.variant, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                 "0123456789_-") != strlen(c.variant)))
        return cli_fail(EXIT_USAGE, "record: --variant: a name of 1 to 31 letters, digits, '_' or '-'");
    if (c.out_dir && path_exists(c.out_dir) && !c.force) {
        snprintf(err, sizeof err, "%s exists; pass --force to replace it or choose another -o", c.out_dir);
        return cli_fail(EXIT_OUTPUT_EXISTS, "record: %s", err);
    }
    if (c.raw)
        return convert(&c, NULL, 0, cmdline, version);
    if ((rc = find_library(lib, sizeof lib, err, sizeof err)) != EXIT_OK)
        return cli_fail(rc, "record: %s", err);
    char raw_dir[] = "/tmp/attnprof-record-XXXXXX";
    const char *tmpdir = getenv("TMPDIR");
    char raw_buf[PATH_MAX];
    snprintf(raw_buf, sizeof raw_buf, "%s/attnprof-record-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    char *dir = mkdtemp(raw_buf);
    if (!dir && !(dir = mkdtemp(raw_dir)))
        return cli_fail(EXIT_IO, "record: cannot create a temporary folder for the raw records (TMPDIR, /tmp)");
    cleanup_add_path(dir);
    int status = 0;
    rc = run_program(&c, lib, dir, &status, err, sizeof err);
    rc = rc != EXIT_OK ? cli_fail(rc, "record: %s", err) : convert(&c, dir, status, cmdline, version);
    if (getenv("ATTNPROF_RECORD_KEEP_RAW"))
        fprintf(stderr, "attnprof: record: raw records kept in %s (ATTNPROF_RECORD_KEEP_RAW)\n", dir);
    else
        remove_tree(dir);
    cleanup_forget_path(dir);
    return rc;
}
