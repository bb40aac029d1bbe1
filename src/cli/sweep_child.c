/* One child of attnprof sweep: the task command's template and its placeholders, the
 * folders and logs a sweep writes (never through a link), the child started in its own
 * process group with its stderr in DIR/logs/<shape>.log and a pipe for its phase, and its
 * outcome: the archive moved from DIR/.staging/<shape>/ into DIR/shapes/ when complete, the
 * status written to DIR/status/<shape>.json, or the shape run again without a variant that
 * `run` refused. */
#include "sweep_parts.h"

#include "archive.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "figures.h"
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double sweep_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sweep_shell_quote(const char *s, char *out, size_t n)
{
    size_t j = 0;
    if (j + 1 < n)
        out[j++] = '\'';
    for (; *s && j + 5 < n; s++) {
        if (*s == '\'') {
            memcpy(out + j, "'\\''", 4);
            j += 4;
        } else {
            out[j++] = *s;
        }
    }
    if (j + 1 < n)
        out[j++] = '\'';
    out[j] = '\0';
}

static void formats_text(unsigned f, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", f & FIG_PNG ? "png," : "", f & FIG_SVG ? "svg," : "", f & FIG_PDF ? "pdf," : "");
    size_t len = strlen(out);
    if (len)
        out[len - 1] = '\0';
}

/* Expands the task command's placeholders; paths are shell-quoted. -1 when too long. */
static int expand_template(const sweep_ctx *c, const task *t, const char *outdir, char *out, size_t n)
{
    const char *s = c->plan.task_command;
    size_t j = 0;
    while (*s) {
        char val[PATH_MAX * 2 + 8] = "";
        const char *close = *s == '{' ? strchr(s, '}') : NULL;
        size_t klen = close ? (size_t)(close - s - 1) : 0;
        int known = 1;
#define KEY(k) (klen == strlen(k) && !strncmp(s + 1, k, klen))
        if (close && KEY("dir"))
            sweep_shell_quote(outdir, val, sizeof val);
        else if (close && KEY("exe"))
            sweep_shell_quote(c->exe, val, sizeof val);
        else if (close && KEY("shape"))
            snprintf(val, sizeof val, "%s", t->name);
        else if (close && KEY("batch"))
            snprintf(val, sizeof val, "%d", t->shape.batch);
        else if (close && KEY("heads"))
            snprintf(val, sizeof val, "%d", t->shape.heads);
        else if (close && KEY("seq"))
            snprintf(val, sizeof val, "%d", t->shape.seq);
        else if (close && KEY("dim"))
            snprintf(val, sizeof val, "%d", t->shape.dim);
        else if (close && KEY("kv_heads"))
            snprintf(val, sizeof val, "%d", attn_kv_heads(&t->shape));
        else if (close && KEY("q_seq"))
            snprintf(val, sizeof val, "%d", attn_q_seq(&t->shape));
        else if (close && KEY("variants"))
            snprintf(val, sizeof val, "%s", t->variants[0] ? t->variants : c->plan.variants);
        else if (close && KEY("iters") && c->plan.iters)
            snprintf(val, sizeof val, "%d", c->plan.iters);
        else if (close && KEY("iters")) /* --iters auto */
            snprintf(val, sizeof val, "auto");
        else if (close && KEY("run_flags"))
            snprintf(val, sizeof val, "%s", c->plan.run_flags);
        else if (close && KEY("warmup"))
            snprintf(val, sizeof val, "%d", c->plan.warmup ? c->plan.warmup : 5);
        else
            known = 0;
#undef KEY
        if (known) {
            size_t l = strlen(val);
            if (j + l + 1 >= n)
                return -1;
            memcpy(out + j, val, l);
            j += l;
            s = close + 1;
        } else {
            if (j + 2 >= n)
                return -1;
            out[j++] = *s++;
        }
    }
    out[j] = '\0';
    return 0;
}
void sweep_path_of(const sweep_ctx *c, const char *rel, const char *name, char *out, size_t n)
{
    if (name)
        snprintf(out, n, "%s/%s/%s", c->dir, rel, name);
    else
        snprintf(out, n, "%s/%s", c->dir, rel);
}

int sweep_archive_complete(const char *dir)
{
    char a[PATH_MAX + 16], b[PATH_MAX + 16];
    snprintf(a, sizeof a, "%s/run.json", dir);
    snprintf(b, sizeof b, "%s/trace.json", dir);
    return path_exists(a) && path_exists(b);
}

/* The folders the sweep writes into. A sweep directory may come from someone else: a
 * symbolic link (or anything but a directory) where one belongs would send archives,
 * DIR/logs is opened once, without following a link, for the logs (openat). */
int sweep_make_dirs(sweep_ctx *c)
{
    static const char *subs[] = {"", "shapes", "status", "logs", ".staging", "replicate"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        char p[PATH_MAX + 32];
        sweep_path_of(c, subs[i], NULL, p, sizeof p);
        int optional = !strcmp(subs[i], "replicate") && !c->plan.replicate;
        if (!optional && mkdir(p, 0755) != 0 && errno != EEXIST)
            return cli_fail(EXIT_IO, "%s: cannot create: %s", p, strerror(errno));
        struct stat st;
        if (i > 0 && lstat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
            return cli_fail(EXIT_REFUSED, "%s is %s, not a folder: a sweep writes only into its own folders; remove it "
                            "(or start the sweep in a new -o)", p, S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
        }
    }
    if (c->logs_fd < 0) {
        char p[PATH_MAX + 32];
        sweep_path_of(c, "logs", NULL, p, sizeof p);
        c->logs_fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->logs_fd < 0)
            return cli_fail(EXIT_IO, "%s: cannot open: %s", p, strerror(errno));
    }
    return EXIT_OK;
}

/* DIR/logs/<name>.log for a child's stderr: a link or anything but a regular file there
 * is refused and left as it is (its target untouched); a regular file is replaced by a
 * new one (unlinked, then created with O_EXCL, so not even a hard link is written
 * through). Returns the fd, or -1 with the process's exit code in *code. */
static int open_log(const sweep_ctx *c, const char *name, int *code)
{
    char file[128];
    snprintf(file, sizeof file, "%s.log", name);
    struct stat st;
    if (fstatat(c->logs_fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISREG(st.st_mode)) {
            *code = cli_fail(EXIT_REFUSED, "%s/logs/%s is %s: a sweep writes its logs only as its own files; remove "
                             "it and run again", c->dir, file,
                             S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
            return -1;
        }
        unlinkat(c->logs_fd, file, 0);
    }
    int fd = openat(c->logs_fd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        *code = cli_fail(e == EEXIST || e == ELOOP ? EXIT_REFUSED : EXIT_IO, "%s/logs/%s: cannot create: %s", c->dir,
                         file, strerror(e));
    }
    return fd;
}

/* A log the sweep wrote, read back without following a link. */
FILE *sweep_read_log(const char *path)
{
    /* input.h's rule for every file read: no link, no FIFO or device, no procfs; a log has
     * no size limit (it is the child's stderr), its readers take a line at a time. */
    const input_rules rules = {.what = "a sweep log"};
    char why[ATTN_ERR_LEN];
    int fd = -1;
    if (input_open_file(path, &rules, &fd, NULL, why, sizeof why) != EXIT_OK)
        return NULL;
    FILE *f = fdopen(fd, "r");
    if (!f)
        close(fd);
    return f;
}

/* `attnprof run`'s command line for task t, writing into out: argv points into a. */
typedef struct run_argv {
    char *argv[40];
    char b[16], h[16], s[16], d[16], kv[16], q[16], it[16], wu[16], fmt[32];
    char flags[sizeof ((sweep_plan *)0)->run_flags];
} run_argv;

/* EXIT_OK, or EXIT_BAD_ARCHIVE (said) when the plan's run options or variant list are not
 * ones a sweep passes on. */
static int build_run_argv(const sweep_ctx *c, const task *t, const char *out, const char *ceilings_from, run_argv *a)
{
    char **argv = a->argv;
    snprintf(a->b, sizeof a->b, "%d", t->shape.batch);
    snprintf(a->h, sizeof a->h, "%d", t->shape.heads);
    snprintf(a->s, sizeof a->s, "%d", t->shape.seq);
    snprintf(a->d, sizeof a->d, "%d", t->shape.dim);
    snprintf(a->it, sizeof a->it, "%d", c->plan.iters);
    snprintf(a->wu, sizeof a->wu, "%d", c->plan.warmup);
    formats_text(c->o->formats, a->fmt, sizeof a->fmt);
    int n = 0;
    argv[n++] = (char *)c->exe;
    argv[n++] = "run";
    argv[n++] = "--batch", argv[n++] = a->b, argv[n++] = "--heads", argv[n++] = a->h;
    argv[n++] = "--seq", argv[n++] = a->s, argv[n++] = "--dim", argv[n++] = a->d;
    if (t->shape.kv_heads > 0) {
        snprintf(a->kv, sizeof a->kv, "%d", t->shape.kv_heads);
        argv[n++] = "--kv-heads", argv[n++] = a->kv;
    }
    if (t->shape.q_seq > 0) {
        snprintf(a->q, sizeof a->q, "%d", t->shape.q_seq);
        argv[n++] = "--q-seq", argv[n++] = a->q;
    }
    const char *list = t->variants[0] ? t->variants : c->plan.variants;
    if (list[0])
        argv[n++] = "--variants", argv[n++] = (char *)list;
    if (c->plan.iters)
        argv[n++] = "--iters", argv[n++] = a->it;
    if (c->plan.warmup)
        argv[n++] = "--warmup", argv[n++] = a->wu;
    argv[n++] = "--format", argv[n++] = a->fmt;
    snprintf(a->flags, sizeof a->flags, "%s", c->plan.run_flags);
    char bad[80];
    if (sweep_run_flags_valid(a->flags, bad, sizeof bad) != 0 || sweep_variant_list_valid(list) != 0) {
        /* sweep_plan_read checks both; a plan built here is made of them */
        return cli_fail(EXIT_BAD_ARCHIVE, "the sweep's run options or variant list are not ones a sweep passes on");
    }
    for (char *save, *tok = strtok_r(a->flags, " ", &save); tok && n < 28; tok = strtok_r(NULL, " ", &save))
        argv[n++] = tok;
    if (ceilings_from[0])
        argv[n++] = "--ceilings-from", argv[n++] = (char *)ceilings_from;
    argv[n++] = "-o", argv[n++] = (char *)out; /* no -q: the step lines go to the shape's log (stdout is /dev/null) */
    argv[n] = NULL;
    return EXIT_OK;
}

/* Starts the child for `t`; its output goes to DIR/.staging/<name>/a. ceilings_from: the
 * run.json of an earlier shape on this worker's GPU, whose ceilings the child takes (the
 * child checks the GPU's UUID), or "" to measure them. */
int sweep_child_spawn(const sweep_ctx *c, task *t, int ti, const char *gpu, const char *ceilings_from, child *ch)
{
    char staging[PATH_MAX + 128], out[PATH_MAX + 160];
    sweep_path_of(c, ".staging", t->name, staging, sizeof staging);
    remove_tree(staging);
    if (mkdir(staging, 0755) != 0)
        return cli_fail(EXIT_IO, "%s: cannot create: %s", staging, strerror(errno));
    snprintf(out, sizeof out, "%s/a", staging);
    static char cmd[8192];
    if (c->plan.task_command[0] && expand_template(c, t, out, cmd, sizeof cmd) != 0)
        return cli_fail(EXIT_USAGE, "--task-command: the expanded command is longer than %zu bytes", sizeof cmd);
    int log_code = EXIT_OK, log_fd = open_log(c, t->name, &log_code);
    if (log_fd < 0)
        return log_code;
    static run_argv ra;
    int arc = build_run_argv(c, t, out, ceilings_from, &ra);
    if (arc != EXIT_OK) {
        close(log_fd);
        return arc;
    }
    char **argv = ra.argv;

    int pfd[2] = {-1, -1};
    if (pipe2(pfd, O_CLOEXEC) != 0)
        pfd[0] = pfd[1] = -1;
    else
        fcntl(pfd[1], F_SETFL, O_NONBLOCK); /* a full pipe never stops the child */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        if (pfd[0] >= 0)
            close(pfd[0]), close(pfd[1]);
        close(log_fd);
        return cli_fail(EXIT_IO, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0); /* its own group: the sweep signals the child and everything it starts */
        if (pfd[1] >= 0) {
            char num[16];
            fcntl(pfd[1], F_SETFD, 0);
            snprintf(num, sizeof num, "%d", pfd[1]);
            setenv("ATTNPROF_PROGRESS_FD", num, 1);
        }
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (gpu)
            setenv("CUDA_VISIBLE_DEVICES", gpu, 1);
        int nul = open("/dev/null", O_RDWR);
        dup2(log_fd, 2);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 1);
        }
        if (c->plan.task_command[0])
            execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        else
            execv(c->exe, argv);
        cli_fail(127, "cannot start %s: %s", c->plan.task_command[0] ? "/bin/sh" : c->exe, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(log_fd);
    if (pfd[1] >= 0) {
        close(pfd[1]);
        fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    }
    *ch = (child){pid, t, ti, gpu, sweep_now_s(), pfd[0], ""};
    return EXIT_OK;
}

/* Reads what the child said about its phase; keeps the last whole line. */
void sweep_child_read_phase(child *ch)
{
    if (ch->progress_fd < 0)
        return;
    char buf[512];
    ssize_t n = read(ch->progress_fd, buf, sizeof buf - 1);
    if (n <= 0)
        return;
    buf[n] = '\0';
    char *end = strrchr(buf, '\n');
    if (!end)
        return;
    *end = '\0';
    char *start = strrchr(buf, '\n');
    snprintf(ch->phase, sizeof ch->phase, "%s", start ? start + 1 : buf);
}

void sweep_child_close_phase(child *ch)
{
    if (ch->progress_fd >= 0)
        close(ch->progress_fd);
    ch->progress_fd = -1;
}

/* The last non-empty line of a log: the child's one-line error. */
static void last_line(const char *path, char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = sweep_read_log(path);
    if (!f)
        return;
    char line[ATTN_ERR_LEN * 2];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[strspn(line, " \t")])
            snprintf(out, n, "%s", line);
    }
    fclose(f);
}


/* The variants `run` runs by default, as `attnprof list` names them (first word of
 * each unindented line); 0 when the recorder cannot be loaded. */
static int default_variants(const sweep_ctx *c, char names[][32])
{
    char cmd[PATH_MAX * 2 + 32], q[PATH_MAX * 2], line[512];
    sweep_shell_quote(c->exe, q, sizeof q);
    snprintf(cmd, sizeof cmd, "%s list 2>/dev/null", q);
    FILE *p = popen(cmd, "r");
    int n = 0;
    while (p && fgets(line, sizeof line, p))
        if (line[0] != ' ' && line[0] != '\n' && n < RUN_MAX_VARIANTS && sscanf(line, "%31s", names[n]) == 1)
            n++;
    if (p && pclose(p) != 0)
        n = 0;
    return n;
}

/* `run` refused the shape naming one variant (explicit --variants: it does not fit, or
 * cannot take the head dim): leave that variant out and run the shape again, as `run`
 * itself skips it with the default list. Returns 1 when the task is to run again. */
static int drop_refused(const sweep_ctx *c, task *t, const char *error_line)
{
    char name[64], names[RUN_MAX_VARIANTS][32], buf[256];
    double bytes;
    if (sweep_refused_variant(error_line, name, sizeof name, &bytes) != 0 || t->n_skipped == RUN_MAX_VARIANTS)
        return 0;
    const char *list = t->variants[0] ? t->variants : c->plan.variants;
    int n = 0;
    if (list[0]) {
        snprintf(buf, sizeof buf, "%s", list);
        for (char *save, *tok = strtok_r(buf, ",", &save); tok && n < RUN_MAX_VARIANTS; tok = strtok_r(NULL, ",", &save))
            snprintf(names[n++], 32, "%s", tok);
    } else if (!c->plan.task_command[0]) {
        n = default_variants(c, names);
    }
    int found = 0;
    char rest[256] = "";
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(names[i], name)) {
            found = 1;
            continue;
        }
        len += (size_t)snprintf(rest + len, sizeof rest - len, "%s%s", len ? "," : "", names[i]);
    }
    if (!found || !rest[0] || len >= sizeof rest)
        return 0;
    struct sweep_skip *sk = &t->skipped[t->n_skipped++];
    snprintf(sk->variant, sizeof sk->variant, "%s", name);
    snprintf(sk->reason, sizeof sk->reason, "%s", strstr(error_line, "variant "));
    sk->device_bytes = bytes;
    snprintf(t->variants, sizeof t->variants, "%s", rest);
    return 1;
}

/* A child has exited: move its archive into place, write its status. Returns the
 * shape's exit code as recorded, or SWEEP_RETRY when it is to run again without a
 * variant that `run` refused. */
int sweep_child_finish(const sweep_ctx *c, const child *ch, int wstatus)
{
    task *t = ch->t;
    sweep_status st;
    memset(&st, 0, sizeof st);
    st.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
    st.seconds = sweep_now_s() - ch->started;
    snprintf(st.gpu, sizeof st.gpu, "%s", ch->gpu ? ch->gpu : getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "");
    st.slurm_task = c->slurm_task;
    if (c->slurm_task >= 0) {
        snprintf(st.slurm_job_id, sizeof st.slurm_job_id, "%s", c->slurm_job);
        snprintf(st.log, sizeof st.log, "logs/%s_%d.out", c->slurm_job, c->slurm_task);
    } else {
        snprintf(st.log, sizeof st.log, "logs/%s.log", t->name);
    }
    char staging[PATH_MAX + 128], out[PATH_MAX + 160], final[PATH_MAX + 160], log[PATH_MAX + 128];
    sweep_path_of(c, ".staging", t->name, staging, sizeof staging);
    snprintf(out, sizeof out, "%s/a", staging);
    sweep_path_of(c, t->final_rel, NULL, final, sizeof final);
    snprintf(log, sizeof log, "%s/logs/%s.log", c->dir, t->name);
    int ran = (st.exit_code == EXIT_OK || st.exit_code == EXIT_VARIANT_FAILED);
    if (ran && sweep_archive_complete(out)) {
        char parent[PATH_MAX + 160];
        snprintf(parent, sizeof parent, "%s", final);
        *strrchr(parent, '/') = '\0';
        mkdir(parent, 0755);
        remove_tree(final);
        if (rename(out, final) != 0) {
            st.exit_code = EXIT_IO;
            snprintf(st.error, sizeof st.error, "%s: cannot move the archive into place: %s", final, strerror(errno));
        }
    } else {
        if (ran) {
            st.exit_code = EXIT_BAD_ARCHIVE;
            snprintf(st.error, sizeof st.error, "the task exited %d but left no run.json and trace.json in its output "
                     "folder", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
        } else {
            last_line(log, st.error, sizeof st.error);
            if ((st.exit_code == EXIT_DEVICE_MEMORY || st.exit_code == EXIT_USAGE) && drop_refused(c, t, st.error)) {
                remove_tree(staging);
                return SWEEP_RETRY;
            }
            if (!st.error[0])
                snprintf(st.error, sizeof st.error, WIFSIGNALED(wstatus) ? "killed by signal %d" : "exit code %d",
                         WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : st.exit_code);
        }
    }
    remove_tree(staging);
    st.n_skipped = t->n_skipped;
    memcpy(st.skipped, t->skipped, sizeof t->skipped);
    char err[512];
    if (sweep_status_write(c->dir, t->name, &st, err, sizeof err) != 0)
        cli_fail(EXIT_IO, "%s", err); /* the shape's outcome stands; its status file could not be written */
    return st.exit_code;
}

/* ---- GPUs ------------------------------------------------------------------- */

void sweep_task_for(task *t, const attn_shape *s)
{
    memset(t, 0, sizeof *t);
    t->shape = *s;
    sweep_shape_name(s, t->name, sizeof t->name);
    snprintf(t->final_rel, sizeof t->final_rel, "shapes/%s", t->name);
    t->cost = (double)s->batch * s->heads * (double)attn_q_seq(s) * s->seq * s->dim;
    t->pinned = -1;
}

/* --resume and --task continue a plan read from DIR, which may come from someone else:
 * its task_command is compared with the one this command line gives and never run on
 * its own word. A stored command that differs (none given, another given, or one given
 * for a sweep of `attnprof run`) is refused in one line naming it (EXIT_REFUSED). */
int sweep_same_task_command(const sweep_ctx *c, const char *given)
{
    const char *stored = c->plan.task_command;
    given = given ? given : "";
    if (!strcmp(stored, given))
        return EXIT_OK;
    char safe[1200], line[1600];
    esc_terminal(safe, sizeof safe, stored);
    if (!given[0])
        snprintf(line, sizeof line, "%s/sweep.json asks to run each shape with `%s`; attnprof runs no command read from "
                 "a directory: if you trust it, give it yourself with --task-command", c->dir, safe);
    else if (!stored[0])
        snprintf(line, sizeof line, "%s/sweep.json runs its shapes with `attnprof run`, not with --task-command: drop "
                 "--task-command, or start a new sweep", c->dir);
    else
        snprintf(line, sizeof line, "--task-command differs from the command %s/sweep.json records (`%s`): a sweep's "
                 "shapes run one command; give that one, or start a new sweep", c->dir, safe);
    return cli_fail(EXIT_REFUSED, "%s", line);
}
