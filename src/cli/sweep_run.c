/* attnprof sweep: runs every shape of a sweep as its own child process, so a
 * variant that breaks the CUDA context on one shape costs that shape only.
 *
 * Local: one worker per GPU (--gpus; CUDA_VISIBLE_DEVICES set per child), each
 * taking the next shape from one queue ordered by work (largest first, so the
 * workers finish together). A child writes into DIR/.staging/<shape>/; when it has
 * exited with 0 or 1 and left a run.json and trace.json there, the archive is
 * renamed to DIR/shapes/<shape>/, so shapes/ only ever holds complete archives.
 * Every child's outcome goes to DIR/status/<shape>.json (exit code, last error
 * line, GPU, seconds) and its stderr to DIR/logs/<shape>.log.
 * SIGINT/SIGTERM: the children (each in its own process group) get SIGTERM, their
 * staging folders are removed, and the sweep exits 130; --resume continues.
 *
 * Slurm: --slurm writes DIR/sweep.sbatch, a job array with one task per shape;
 * each task runs `attnprof sweep --task I DIR`, which is the same child handling
 * with the GPU Slurm gave it. --collect builds the report from what exists.
 *
 * No CUDA here: GPUs are counted from /proc/driver/nvidia/gpus (or taken from
 * CUDA_VISIBLE_DEVICES). Status convention: functions return EXIT_* codes. */
#include "sweep_run.h"

#include "archive.h"
#include "cleanup.h"
#include "escape.h"
#include "exit_codes.h"
#include "figures.h"
#include "report.h"
#include "sweep_doc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static int say(int code, const char *msg)
{
    fprintf(stderr, "attnprof: %s\n", msg);
    return code;
}

/* One line whose text may hold a path or a string from DIR: control characters dropped. */
static int die_escaped(int code, const char *msg)
{
    char safe[2048];
    return say(code, esc_terminal(safe, sizeof safe, msg));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- one task: a shape (or the reference shape on one GPU) -------------------- */

typedef struct task {
    attn_shape shape;
    char name[64];       /* status and staging name: the shape, or replicate-gpu<G> */
    char final_rel[128]; /* shapes/<shape> or replicate/gpu<G> */
    double cost;         /* B·H·S²·D: the queue's order */
    int pinned;          /* replicate: only the worker of this GPU index runs it; -1 any */
    char variants[256];  /* the list after variants were left out; "": the plan's */
    int n_skipped;       /* variants left out after `run` refused the shape naming them */
    struct sweep_skip skipped[RUN_MAX_VARIANTS];
} task;

typedef struct child {
    pid_t pid;
    task *t;
    int ti;          /* index of t in the queue */
    const char *gpu; /* CUDA_VISIBLE_DEVICES, or NULL to inherit */
    double started;
    int progress_fd; /* read end of ATTNPROF_PROGRESS_FD: `run` writes "variant phase" lines; -1 none */
    char phase[64];  /* the last line read */
} child;

typedef struct sweep_ctx {
    const cli_options *o;
    char dir[PATH_MAX];
    char exe[PATH_MAX];
    sweep_plan plan;
    int slurm_task;         /* -1 locally */
    char slurm_job[32];
    int logs_fd;            /* DIR/logs, opened once without following a link; -1 until make_dirs */
} sweep_ctx;

static void shell_quote(const char *s, char *out, size_t n)
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
            shell_quote(outdir, val, sizeof val);
        else if (close && KEY("exe"))
            shell_quote(c->exe, val, sizeof val);
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

static void path_of(const sweep_ctx *c, const char *rel, const char *name, char *out, size_t n)
{
    if (name)
        snprintf(out, n, "%s/%s/%s", c->dir, rel, name);
    else
        snprintf(out, n, "%s/%s", c->dir, rel);
}

static int archive_complete(const char *dir)
{
    char a[PATH_MAX + 16], b[PATH_MAX + 16];
    snprintf(a, sizeof a, "%s/run.json", dir);
    snprintf(b, sizeof b, "%s/trace.json", dir);
    return path_exists(a) && path_exists(b);
}

/* The folders the sweep writes into. A sweep directory may come from someone else: a
 * symbolic link (or anything but a directory) where one belongs would send archives,
 * statuses, logs or remove_tree outside DIR, so it is refused (EXIT_REFUSED), and
 * DIR/logs is opened once, without following a link, for the logs (openat). */
static int make_dirs(sweep_ctx *c)
{
    static const char *subs[] = {"", "shapes", "status", "logs", ".staging", "replicate"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        char p[PATH_MAX + 32];
        path_of(c, subs[i], NULL, p, sizeof p);
        int optional = !strcmp(subs[i], "replicate") && !c->plan.replicate;
        if (!optional && mkdir(p, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "attnprof: %s: cannot create: %s\n", p, strerror(errno));
            return EXIT_IO;
        }
        struct stat st;
        if (i > 0 && lstat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
            char safe[PATH_MAX];
            fprintf(stderr, "attnprof: %s is %s, not a folder: a sweep writes only into its own folders; remove it "
                            "(or start the sweep in a new -o)\n",
                    esc_terminal(safe, sizeof safe, p), S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
            return EXIT_REFUSED;
        }
    }
    if (c->logs_fd < 0) {
        char p[PATH_MAX + 32];
        path_of(c, "logs", NULL, p, sizeof p);
        c->logs_fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->logs_fd < 0) {
            fprintf(stderr, "attnprof: %s: cannot open: %s\n", p, strerror(errno));
            return EXIT_IO;
        }
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
            char safe[PATH_MAX];
            char path[PATH_MAX + 160];
            snprintf(path, sizeof path, "%s/logs/%s", c->dir, file);
            fprintf(stderr, "attnprof: %s is %s: a sweep writes its logs only as its own files; remove it and run "
                            "again\n",
                    esc_terminal(safe, sizeof safe, path), S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
            *code = EXIT_REFUSED;
            return -1;
        }
        unlinkat(c->logs_fd, file, 0);
    }
    int fd = openat(c->logs_fd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "attnprof: %s/logs/%s: cannot create: %s\n", c->dir, file, strerror(errno));
        *code = errno == EEXIST || errno == ELOOP ? EXIT_REFUSED : EXIT_IO;
    }
    return fd;
}

/* A log the sweep wrote, read back without following a link. */
static FILE *read_log(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f)
        close(fd);
    return f;
}

/* Starts the child for `t`; its output goes to DIR/.staging/<name>/a. ceilings_from: the
 * run.json of an earlier shape on this worker's GPU, whose ceilings the child takes (the
 * child checks the GPU's UUID), or "" to measure them. */
static int spawn(const sweep_ctx *c, task *t, int ti, const char *gpu, const char *ceilings_from, child *ch)
{
    char staging[PATH_MAX + 128], out[PATH_MAX + 160];
    path_of(c, ".staging", t->name, staging, sizeof staging);
    remove_tree(staging);
    if (mkdir(staging, 0755) != 0) {
        fprintf(stderr, "attnprof: %s: cannot create: %s\n", staging, strerror(errno));
        return EXIT_IO;
    }
    snprintf(out, sizeof out, "%s/a", staging);
    static char cmd[8192];
    if (c->plan.task_command[0] && expand_template(c, t, out, cmd, sizeof cmd) != 0) {
        fprintf(stderr, "attnprof: --task-command: the expanded command is longer than %zu bytes\n", sizeof cmd);
        return EXIT_USAGE;
    }
    int log_code = EXIT_OK, log_fd = open_log(c, t->name, &log_code);
    if (log_fd < 0)
        return log_code;
    char b[16], h[16], s[16], d[16], it[16], wu[16], fmt[32];
    snprintf(b, sizeof b, "%d", t->shape.batch);
    snprintf(h, sizeof h, "%d", t->shape.heads);
    snprintf(s, sizeof s, "%d", t->shape.seq);
    snprintf(d, sizeof d, "%d", t->shape.dim);
    snprintf(it, sizeof it, "%d", c->plan.iters);
    snprintf(wu, sizeof wu, "%d", c->plan.warmup);
    formats_text(c->o->formats, fmt, sizeof fmt);
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)c->exe;
    argv[n++] = "run";
    argv[n++] = "--batch", argv[n++] = b, argv[n++] = "--heads", argv[n++] = h;
    argv[n++] = "--seq", argv[n++] = s, argv[n++] = "--dim", argv[n++] = d;
    const char *list = t->variants[0] ? t->variants : c->plan.variants;
    if (list[0])
        argv[n++] = "--variants", argv[n++] = (char *)list;
    if (c->plan.iters)
        argv[n++] = "--iters", argv[n++] = it;
    if (c->plan.warmup)
        argv[n++] = "--warmup", argv[n++] = wu;
    argv[n++] = "--format", argv[n++] = fmt;
    static char flags[sizeof c->plan.run_flags];
    snprintf(flags, sizeof flags, "%s", c->plan.run_flags);
    char bad[80];
    if (sweep_run_flags_valid(flags, bad, sizeof bad) != 0 || sweep_variant_list_valid(list) != 0) {
        close(log_fd); /* sweep_plan_read checks both; a plan built here is made of them */
        fprintf(stderr, "attnprof: the sweep's run options or variant list are not ones a sweep passes on\n");
        return EXIT_BAD_ARCHIVE;
    }
    for (char *save, *tok = strtok_r(flags, " ", &save); tok && n < 28; tok = strtok_r(NULL, " ", &save))
        argv[n++] = tok;
    if (ceilings_from[0])
        argv[n++] = "--ceilings-from", argv[n++] = (char *)ceilings_from;
    argv[n++] = "-o", argv[n++] = out; /* no -q: the step lines go to the shape's log (stdout is /dev/null) */
    argv[n] = NULL;

    int pfd[2] = {-1, -1};
    if (pipe2(pfd, O_CLOEXEC) != 0)
        pfd[0] = pfd[1] = -1;
    else
        fcntl(pfd[1], F_SETFL, O_NONBLOCK); /* a full pipe never stops the child */
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "attnprof: fork: %s\n", strerror(errno));
        if (pfd[0] >= 0)
            close(pfd[0]), close(pfd[1]);
        close(log_fd);
        return EXIT_IO;
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
        fprintf(stderr, "attnprof: cannot start %s: %s\n", c->plan.task_command[0] ? "/bin/sh" : c->exe,
                strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(log_fd);
    if (pfd[1] >= 0) {
        close(pfd[1]);
        fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    }
    *ch = (child){pid, t, ti, gpu, now_s(), pfd[0], ""};
    return EXIT_OK;
}

/* Reads what the child said about its phase; keeps the last whole line. */
static void read_phase(child *ch)
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

static void close_phase(child *ch)
{
    if (ch->progress_fd >= 0)
        close(ch->progress_fd);
    ch->progress_fd = -1;
}

/* The last non-empty line of a log: the child's one-line error. */
static void last_line(const char *path, char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = read_log(path);
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

#define SWEEP_RETRY (-1)

/* The variants `run` runs by default, as `attnprof list` names them (first word of
 * each unindented line); 0 when the recorder cannot be loaded. */
static int default_variants(const sweep_ctx *c, char names[][32])
{
    char cmd[PATH_MAX * 2 + 32], q[PATH_MAX * 2], line[512];
    shell_quote(c->exe, q, sizeof q);
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
static int finish(const sweep_ctx *c, const child *ch, int wstatus)
{
    task *t = ch->t;
    sweep_status st;
    memset(&st, 0, sizeof st);
    st.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
    st.seconds = now_s() - ch->started;
    snprintf(st.gpu, sizeof st.gpu, "%s", ch->gpu ? ch->gpu : getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "");
    st.slurm_task = c->slurm_task;
    if (c->slurm_task >= 0) {
        snprintf(st.slurm_job_id, sizeof st.slurm_job_id, "%s", c->slurm_job);
        snprintf(st.log, sizeof st.log, "logs/%s_%d.out", c->slurm_job, c->slurm_task);
    } else {
        snprintf(st.log, sizeof st.log, "logs/%s.log", t->name);
    }
    char staging[PATH_MAX + 128], out[PATH_MAX + 160], final[PATH_MAX + 160], log[PATH_MAX + 128];
    path_of(c, ".staging", t->name, staging, sizeof staging);
    snprintf(out, sizeof out, "%s/a", staging);
    path_of(c, t->final_rel, NULL, final, sizeof final);
    snprintf(log, sizeof log, "%s/logs/%s.log", c->dir, t->name);
    int ran = (st.exit_code == EXIT_OK || st.exit_code == EXIT_VARIANT_FAILED);
    if (ran && archive_complete(out)) {
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
        fprintf(stderr, "attnprof: %s\n", err);
    return st.exit_code;
}

/* ---- GPUs ------------------------------------------------------------------- */

/* --gpus: "all" is every entry of CUDA_VISIBLE_DEVICES when set, else every GPU
 * the driver lists in /proc/driver/nvidia/gpus; a list is used as given. */
static int gpu_list(const char *spec, char gpus[][32], int max, char *err, size_t errlen)
{
    int n = 0;
    char buf[512];
    if (strcmp(spec, "all") != 0) {
        snprintf(buf, sizeof buf, "%s", spec);
        for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (!*tok || strlen(tok) >= 32 || strspn(tok, "0123456789") != strlen(tok) || n == max) {
                snprintf(err, errlen, "--gpus %s: expected `all` or GPU indices like 0,1 (at most %d)", spec, max);
                return -1;
            }
            for (int i = 0; i < n; i++)
                if (!strcmp(gpus[i], tok)) {
                    snprintf(err, errlen, "--gpus %s: GPU %s is named twice", spec, tok);
                    return -1;
                }
            snprintf(gpus[n++], 32, "%s", tok);
        }
        if (!n)
            snprintf(err, errlen, "--gpus %s: empty list", spec);
        return n ? n : -1;
    }
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis && *vis) {
        snprintf(buf, sizeof buf, "%s", vis);
        for (char *save, *tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
            snprintf(gpus[n++], 32, "%.31s", tok);
        return n;
    }
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && n < max)
            snprintf(gpus[n], 32, "%d", n), n++;
    if (d)
        closedir(d);
    if (!n)
        snprintf(err, errlen, "--gpus all: no NVIDIA GPU listed in /proc/driver/nvidia/gpus (no driver?) and "
                 "CUDA_VISIBLE_DEVICES is not set; name the GPUs with --gpus 0,1");
    return n ? n : -1;
}

/* ---- the local run loop ------------------------------------------------------ */

static int cmp_cost(const void *a, const void *b)
{
    const task *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    return strcmp(x->name, y->name);
}

static void fmt_eta(double s, char *out, size_t n)
{
    if (!isfinite(s) || s < 0)
        snprintf(out, n, "?");
    else if (s >= 3600)
        snprintf(out, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
    else
        snprintf(out, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

/* How the sweep shows its progress on stderr: nothing (-q), one plain line per step that
 * matters (stderr is a file or a pipe: a Slurm job's log, a CI log), or a live line redrawn
 * in place (a terminal). */
typedef enum progress_mode { PROGRESS_NONE, PROGRESS_LINES, PROGRESS_LIVE } progress_mode;

static progress_mode progress_for(const cli_options *o)
{
    return o->run.quiet ? PROGRESS_NONE : isatty(STDERR_FILENO) ? PROGRESS_LIVE : PROGRESS_LINES;
}

/* PROGRESS_LINES: a phase the child reported ("flash forward"), once per change. */
static void phase_line(child *ch, const char *gpu)
{
    char before[sizeof ch->phase];
    snprintf(before, sizeof before, "%s", ch->phase);
    read_phase(ch);
    if (ch->phase[0] && strcmp(before, ch->phase))
        fprintf(stderr, "sweep: %s%s%s: %s\n", ch->t->name, gpu ? " on GPU " : "", gpu ? gpu : "", ch->phase);
}

/* The live progress line (a terminal): shapes done, each worker's shape and phase, the ETA. */
static void draw_live_line(child *running, const int *busy, int n_workers, char gpus[][32], int done, int n_tasks,
                           int failed, double eta_s)
{
    char eta[32], what[512] = "";
    fmt_eta(eta_s, eta, sizeof eta);
    size_t len = 0;
    for (int w = 0; w < n_workers && len + 40 < sizeof what; w++)
        if (busy[w]) {
            read_phase(&running[w]);
            len += (size_t)snprintf(what + len, sizeof what - len, "%s%s%s%s%s%s%s", len ? ", " : "",
                                    running[w].t->name, gpus ? " on GPU " : "", gpus ? gpus[w] : "",
                                    running[w].phase[0] ? " (" : "", running[w].phase,
                                    running[w].phase[0] ? ")" : "");
        }
    char failed_text[32] = "";
    if (failed)
        snprintf(failed_text, sizeof failed_text, " (%d failed)", failed);
    fprintf(stderr, "\r\033[Ksweep: %d/%d shapes done%s, running %s, ETA %s", done, n_tasks, failed_text, what, eta);
    fflush(stderr);
}

/* After SIGINT/SIGTERM/SIGHUP: the shapes in flight are stopped and their staging removed,
 * so only complete archives stay. */
static void discard_in_flight(const sweep_ctx *c, child *running, const int *busy, int n_workers)
{
    for (int w = 0; w < n_workers; w++)
        if (busy[w])
            kill(-running[w].pid, SIGTERM);
    double deadline = now_s() + 10;
    for (int w = 0; w < n_workers; w++) {
        if (!busy[w])
            continue;
        int wstatus;
        while (waitpid(running[w].pid, &wstatus, WNOHANG) == 0) {
            if (now_s() > deadline)
                kill(-running[w].pid, SIGKILL);
            struct timespec nap = {0, 20 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
        char staging[PATH_MAX + 128];
        path_of(c, ".staging", running[w].t->name, staging, sizeof staging);
        remove_tree(staging);
    }
}

/* Runs the tasks on n_workers workers (gpus[i] or NULL to inherit). Returns
 * EXIT_OK, EXIT_VARIANT_FAILED (some shape failed), EXIT_INTERRUPTED or EXIT_IO;
 * *n_done counts the tasks that ran to an exit. */
/* A worker's first complete shape measured its GPU's ceilings: its run.json is where the
 * worker's later shapes take them from (not under a --task-command, which runs what it says). */
static void ceilings_of_gpu(const sweep_ctx *c, const task *t, int code, char *dst, size_t n)
{
    if (c->plan.task_command[0] || strstr(c->plan.run_flags, "--no-calibrate") ||
        (code != EXIT_OK && code != EXIT_VARIANT_FAILED))
        return;
    char rj[PATH_MAX + 160];
    snprintf(rj, sizeof rj, "%s/%s/run.json", c->dir, t->final_rel);
    if (access(rj, R_OK) == 0)
        snprintf(dst, n, "%s", rj);
}

/* PROGRESS_LINES: one plain line when a shape ends, with the shapes left and the ETA. */
static void shape_done_line(const child *ch, const char *gpu, int code, int done, int n_tasks, double eta_s)
{
    char eta[32];
    fmt_eta(eta_s, eta, sizeof eta);
    fprintf(stderr, "sweep: %s%s%s %s in %.1f s; %d/%d shapes done, %d left, ETA %s\n", ch->t->name,
            gpu ? " on GPU " : "", gpu ? gpu : "",
            code == EXIT_OK ? "done" : code == EXIT_VARIANT_FAILED ? "done, a variant failed" : "failed",
            now_s() - ch->started, done, n_tasks, n_tasks - done, eta);
    fflush(stderr);
}

static int run_tasks(const sweep_ctx *c, task *tasks, int n_tasks, char gpus[][32], int n_workers,
                     progress_mode progress, int *last_code)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    child running[SWEEP_MAX_GPUS];
    int busy[SWEEP_MAX_GPUS] = {0}, taken[SWEEP_MAX_SHAPES + SWEEP_MAX_GPUS] = {0};
    /* The ceilings are the GPU's: a worker's first complete shape measures them, the later
     * ones take them from its run.json (not under a --task-command, which runs what it says). */
    static char ceilings_from[SWEEP_MAX_GPUS][PATH_MAX + 160];
    memset(ceilings_from, 0, sizeof ceilings_from);
    int done = 0, failed = 0, rc = EXIT_OK;
    double total_cost = 0, done_cost = 0, t0 = now_s(), last_draw = 0;
    for (int i = 0; i < n_tasks; i++)
        total_cost += tasks[i].cost;
    *last_code = EXIT_OK;
    for (;;) {
        if (stop_signal)
            break;
        for (int w = 0; w < n_workers && rc == EXIT_OK; w++) {
            if (busy[w])
                continue;
            int pick = -1;
            for (int i = 0; i < n_tasks && pick < 0; i++) /* this worker's pinned task first */
                if (!taken[i] && tasks[i].pinned == w)
                    pick = i;
            for (int i = 0; i < n_tasks && pick < 0; i++)
                if (!taken[i] && tasks[i].pinned < 0)
                    pick = i;
            if (pick < 0)
                continue;
            taken[pick] = 1;
            int s = spawn(c, &tasks[pick], pick, gpus ? gpus[w] : NULL, ceilings_from[w], &running[w]);
            if (s != EXIT_OK)
                rc = s;
            else
                busy[w] = 1;
        }
        int n_busy = 0;
        for (int w = 0; w < n_workers; w++)
            n_busy += busy[w];
        if (!n_busy)
            break;
        int wstatus;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid > 0) {
            for (int w = 0; w < n_workers; w++)
                if (busy[w] && running[w].pid == pid) {
                    close_phase(&running[w]);
                    int code = finish(c, &running[w], wstatus);
                    busy[w] = 0;
                    if (code == SWEEP_RETRY) {
                        taken[running[w].ti] = 0; /* again, without the refused variant */
                        continue;
                    }
                    done++;
                    done_cost += running[w].t->cost;
                    if (!ceilings_from[w][0])
                        ceilings_of_gpu(c, running[w].t, code, ceilings_from[w], sizeof ceilings_from[w]);
                    if (code != EXIT_OK && code != EXIT_VARIANT_FAILED)
                        failed++;
                    if (code != EXIT_OK)
                        *last_code = code;
                    if (progress == PROGRESS_LINES) {
                        /* The ETA scales the time so far by the cost model's share left. */
                        double el = now_s() - t0;
                        shape_done_line(&running[w], gpus ? gpus[w] : NULL, code, done, n_tasks,
                                        done_cost > 0 ? el * (total_cost - done_cost) / done_cost : NAN);
                    }
                }
            continue;
        }
        if (progress == PROGRESS_LINES)
            for (int w = 0; w < n_workers; w++)
                if (busy[w])
                    phase_line(&running[w], gpus ? gpus[w] : NULL);
        if (pid < 0 && errno != EINTR && errno != ECHILD)
            break;
        if (progress == PROGRESS_LIVE && now_s() - last_draw >= 0.5) {
            last_draw = now_s();
            double el = now_s() - t0;
            draw_live_line(running, busy, n_workers, gpus, done, n_tasks, failed,
                           done_cost > 0 ? el * (total_cost - done_cost) / done_cost : NAN);
        }
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    if (progress == PROGRESS_LIVE)
        fprintf(stderr, "\r\033[K");
    for (int w = 0; w < n_workers; w++)
        if (busy[w])
            close_phase(&running[w]);
    if (stop_signal) {
        discard_in_flight(c, running, busy, n_workers);
        return EXIT_INTERRUPTED;
    }
    if (rc != EXIT_OK) {
        for (int w = 0; w < n_workers; w++)
            if (busy[w]) {
                int wstatus;
                waitpid(running[w].pid, &wstatus, 0);
                finish(c, &running[w], wstatus);
            }
        return rc;
    }
    return failed ? EXIT_VARIANT_FAILED : EXIT_OK;
}

/* ---- report ----------------------------------------------------------------- */

static int collect(const char *dir, const cli_options *o, int print)
{
    char err[2048];
    static sweep_model m;
    int rc = sweep_load(&m, dir, 2, err, sizeof err);
    if (rc != EXIT_OK)
        return say(rc, err);
    rc = sweep_write(&m, o->formats, err, sizeof err);
    if (rc != EXIT_OK) {
        sweep_free(&m);
        return say(rc, err);
    }
    if (print) {
        printf("shapes: %d complete, %d failed, %d missing, %d unreadable (of %d)\n", m.n_complete, m.n_failed,
               m.n_missing, m.n_bad, m.n_shapes);
        for (int i = 0; i < m.n_shapes; i++) {
            const sweep_shape *x = &m.shapes[i];
            if (x->state == SHAPE_COMPLETE)
                continue;
            char job[64] = "", log[600] = "";
            if (x->have_status && x->status.slurm_job_id[0])
                snprintf(job, sizeof job, " job %s_%d", x->status.slurm_job_id, x->status.slurm_task);
            else if (m.plan.slurm_job_id[0])
                for (int t = 0; t < m.plan.n_shapes; t++)
                    if (!memcmp(&m.plan.shapes[t], &x->shape, sizeof x->shape))
                        snprintf(job, sizeof job, " job %s_%d", m.plan.slurm_job_id, t);
            if (x->have_status && x->status.log[0])
                snprintf(log, sizeof log, " log %s/%s", dir, x->status.log);
            else if (job[0])
                snprintf(log, sizeof log, " log %s/logs/%s.out", dir, job + 5);
            const char *why = x->state == SHAPE_FAILED ? x->status.error
                              : x->state == SHAPE_BAD_ARCHIVE ? x->error
                                                              : "no archive, no exit status";
            char safe_job[128], safe_log[700], safe_why[ATTN_ERR_LEN];
            printf("%-7s %s%s%s", x->state == SHAPE_FAILED ? "failed" : x->state == SHAPE_MISSING ? "missing" : "bad",
                   x->name, esc_terminal(safe_job, sizeof safe_job, job), esc_terminal(safe_log, sizeof safe_log, log));
            if (x->have_status && x->state == SHAPE_FAILED)
                printf(" exit %d", x->status.exit_code);
            printf(": %s\n", esc_terminal(safe_why, sizeof safe_why, why));
        }
        for (int i = 0; i < m.n_findings && i < 12; i++) {
            char text[1024], safe[1024];
            sweep_finding_text(&m, &m.findings[i], text, sizeof text);
            printf("- %s\n", esc_terminal(safe, sizeof safe, text));
        }
        printf("sweep: %s/sweep.html\n", dir);
    }
    int incomplete = m.n_failed + m.n_missing + m.n_bad;
    sweep_free(&m);
    return incomplete ? EXIT_VARIANT_FAILED : EXIT_OK;
}

/* ---- modes -------------------------------------------------------------------- */

static int self_exe(char *out, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", out, n - 1);
    if (len <= 0)
        return -1;
    out[len] = '\0';
    return 0;
}

static void task_for(task *t, const attn_shape *s)
{
    memset(t, 0, sizeof *t);
    t->shape = *s;
    sweep_shape_name(s, t->name, sizeof t->name);
    snprintf(t->final_rel, sizeof t->final_rel, "shapes/%s", t->name);
    t->cost = (double)s->batch * s->heads * (double)s->seq * s->seq * s->dim;
    t->pinned = -1;
}

static int make_plan(const cli_options *o, sweep_plan *p)
{
    const sweep_options *w = &o->sweep;
    char err[512];
    int seq[SWEEP_MAX_LIST], dim[SWEEP_MAX_LIST];
    int ns = sweep_parse_list("seq", w->seq ? w->seq : "256:16384:x2", 1 << 20, seq, err, sizeof err);
    if (ns < 0)
        return say(EXIT_USAGE, err);
    int nd = sweep_parse_list("dim", w->dim ? w->dim : "64,128", 1024, dim, err, sizeof err);
    if (nd < 0)
        return say(EXIT_USAGE, err);
    long tokens = w->batch_given ? 0 : w->tokens ? w->tokens : SWEEP_DEFAULT_TOKENS;
    int heads = w->heads_given ? o->run.shape.heads : SWEEP_DEFAULT_HEADS;
    memset(p, 0, sizeof *p);
    if (sweep_plan_shapes(p, seq, ns, dim, nd, o->run.shape.batch, tokens, heads, err, sizeof err) < 0)
        return say(EXIT_USAGE, err);
    snprintf(p->variants, sizeof p->variants, "%s", o->run.variant_list ? o->run.variant_list : "");
    p->iters = w->iters_given ? o->run.iters : 0;
    p->warmup = w->warmup_given ? o->run.warmup : 0;
    if (w->task_command && strlen(w->task_command) >= sizeof p->task_command) {
        char err2[128];
        snprintf(err2, sizeof err2, "--task-command: longer than %zu bytes; put it in a script", sizeof p->task_command - 1);
        return say(EXIT_USAGE, err2);
    }
    if (w->task_command)
        snprintf(p->task_command, sizeof p->task_command, "%s", w->task_command);
    /* run's own options that change what it does, passed on to every shape. */
    snprintf(p->run_flags, sizeof p->run_flags, "%s%s%s%s", o->run.counters ? "" : " --no-counters",
             o->run.calibrate ? "" : " --no-calibrate", o->run.options.cudnn_replan ? " --cudnn-replan" : "",
             o->pdf ? " --pdf" : "");
    if (o->run.counters_max_gib != RUN_COUNTERS_MAX_GIB_DEFAULT) {
        size_t len = strlen(p->run_flags);
        snprintf(p->run_flags + len, sizeof p->run_flags - len, " --counters-max-gib %d", o->run.counters_max_gib);
    }
    if (o->run.seed) {
        size_t len = strlen(p->run_flags);
        snprintf(p->run_flags + len, sizeof p->run_flags - len, " --seed %llu", o->run.seed);
    }
    if (w->replicate) {
        /* The reference: the middle shape of the smallest head dim. */
        int first_dim = p->shapes[0].dim, n = 0;
        for (int i = 0; i < p->n_shapes; i++)
            n += p->shapes[i].dim == first_dim;
        p->replicate = 1;
        p->reference = p->shapes[n / 2];
    }
    return EXIT_OK;
}

/* --resume and --task continue a plan read from DIR, which may come from someone else:
 * its task_command is compared with the one this command line gives and never run on
 * its own word. A stored command that differs (none given, another given, or one given
 * for a sweep of `attnprof run`) is refused in one line naming it (EXIT_REFUSED). */
static int same_task_command(const sweep_ctx *c, const char *given)
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
    char out[1600];
    fprintf(stderr, "attnprof: %s\n", esc_terminal(out, sizeof out, line));
    return EXIT_REFUSED;
}

static int start_dir(sweep_ctx *c)
{
    const cli_options *o = c->o;
    if (path_exists(o->out_dir) && !o->sweep.resume) {
        if (!o->force) {
            fprintf(stderr, "attnprof: %s exists; pass --resume to continue its sweep, --force to replace it, or "
                            "choose another -o\n", o->out_dir);
            return EXIT_OUTPUT_EXISTS;
        }
        /* --force replaces a sweep (or an empty folder), never some other directory. */
        char plan[PATH_MAX + 16];
        snprintf(plan, sizeof plan, "%s/sweep.json", o->out_dir);
        DIR *d = opendir(o->out_dir);
        int entries = 0;
        struct dirent *e;
        while (d && (e = readdir(d)))
            entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
        if (d)
            closedir(d);
        if (!path_exists(plan) && entries) {
            fprintf(stderr, "attnprof: %s exists and holds no sweep.json: --force replaces only a sweep; choose another "
                            "-o\n", o->out_dir);
            return EXIT_OUTPUT_EXISTS;
        }
        if (remove_tree(o->out_dir) != 0) {
            fprintf(stderr, "attnprof: %s: cannot remove: %s\n", o->out_dir, strerror(errno));
            return EXIT_IO;
        }
    }
    if (mkdir(o->out_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "attnprof: %s: cannot create: %s\n", o->out_dir, strerror(errno));
        return EXIT_IO;
    }
    if (!realpath(o->out_dir, c->dir)) {
        fprintf(stderr, "attnprof: %s: %s\n", o->out_dir, strerror(errno));
        return EXIT_IO;
    }
    return EXIT_OK;
}

static int write_sbatch(const sweep_ctx *c)
{
    const sweep_options *w = &c->o->sweep;
    char path[PATH_MAX + 32], q_exe[PATH_MAX * 2], q_dir[PATH_MAX * 2], logs[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/sweep.sbatch", c->dir);
    shell_quote(c->exe, q_exe, sizeof q_exe);
    shell_quote(c->dir, q_dir, sizeof q_dir);
    snprintf(logs, sizeof logs, "%s/logs", c->dir);
    /* The directory goes into comments and #SBATCH lines, which have no quoting, and
     * sbatch expands % in --output: a path with a control character or % is refused. */
    for (const char *p = c->dir; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '%')
            return say(EXIT_USAGE, "--slurm: the sweep directory's path holds a control character or '%', which "
                                   "sweep.sbatch's #SBATCH lines cannot quote; choose another -o");
    char q_cmd[sizeof c->plan.task_command * 4 + 4] = "";
    if (c->plan.task_command[0])
        shell_quote(c->plan.task_command, q_cmd, sizeof q_cmd);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return say(EXIT_NO_MEMORY, "out of memory");
    fprintf(f, "#!/bin/bash\n# attnprof sweep: one array task per shape (%d shapes); written by attnprof sweep --slurm.\n"
               "# Each task runs one shape into %s/shapes/ and records its exit status in status/.\n"
               "# After the array: attnprof sweep --collect %s\n",
            c->plan.n_shapes, c->dir, c->dir);
    fprintf(f, "#SBATCH --job-name=attnprof-sweep\n#SBATCH --array=0-%d\n#SBATCH --ntasks=1\n", c->plan.n_shapes - 1);
    fprintf(f, "#SBATCH --output=%s/%%A_%%a.out\n", logs);
    if (!w->no_gres)
        fprintf(f, "#SBATCH --gres=gpu:1\n");
    if (w->partition)
        fprintf(f, "#SBATCH --partition=%s\n", w->partition);
    if (w->time_limit)
        fprintf(f, "#SBATCH --time=%s\n", w->time_limit);
    /* --task takes the task command from this line, never from sweep.json. */
    fprintf(f, "exec %s sweep --task \"$SLURM_ARRAY_TASK_ID\"%s%s %s\n", q_exe, q_cmd[0] ? " --task-command " : "", q_cmd,
            q_dir);
    fclose(f);
    char err[512];
    int rc = archive_write_file(c->dir, "sweep.sbatch", text, err, sizeof err);
    free(text);
    if (rc == 0)
        chmod(path, 0755);
    return rc == 0 ? EXIT_OK : say(EXIT_IO, err);
}

static int submit(sweep_ctx *c)
{
    char cmd[PATH_MAX * 2 + 64], q[PATH_MAX * 2], line[512] = "", last[512] = "";
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sweep.sbatch", c->dir);
    shell_quote(path, q, sizeof q);
    snprintf(cmd, sizeof cmd, "sbatch --parsable %s 2>&1", q);
    FILE *p = popen(cmd, "r");
    if (!p)
        return say(EXIT_IO, "cannot run sbatch");
    while (fgets(line, sizeof line, p))
        if (line[strspn(line, " \t\r\n")])
            snprintf(last, sizeof last, "%s", line);
    int st = pclose(p);
    last[strcspn(last, "\r\n")] = '\0';
    if (st != 0 || !last[0] || strspn(last, "0123456789") == 0) {
        char err[700];
        snprintf(err, sizeof err, "sbatch failed (%s): %s", WIFEXITED(st) ? "exit status" : "did not run",
                 last[0] ? last : "no output; is Slurm installed and sbatch on PATH?");
        return say(EXIT_IO, err);
    }
    last[strspn(last, "0123456789")] = '\0'; /* "123;cluster" → "123" */
    snprintf(c->plan.slurm_job_id, sizeof c->plan.slurm_job_id, "%s", last);
    char err[512];
    if (sweep_plan_write(&c->plan, c->dir, err, sizeof err) != 0)
        return say(EXIT_IO, err);
    printf("submitted: job %s (%d array tasks); logs in %s/logs/; then: attnprof sweep --collect %s\n", last,
           c->plan.n_shapes, c->dir, c->dir);
    return EXIT_OK;
}

static int slurm_task(sweep_ctx *c)
{
    const cli_options *o = c->o;
    char err[512];
    if (!realpath(o->sweep.task_dir, c->dir)) {
        snprintf(err, sizeof err, "%s: %s", o->sweep.task_dir, strerror(errno));
        return say(EXIT_BAD_ARCHIVE, err);
    }
    int r = sweep_plan_read(&c->plan, c->dir, err, sizeof err);
    if (r != 0)
        return say(EXIT_BAD_ARCHIVE, r > 0 ? "no sweep.json in the directory: not a sweep" : err);
    if ((r = same_task_command(c, o->sweep.task_command)) != EXIT_OK)
        return r;
    if (o->sweep.task >= c->plan.n_shapes) {
        snprintf(err, sizeof err, "--task %d: the sweep has %d shapes (tasks 0-%d)", o->sweep.task, c->plan.n_shapes,
                 c->plan.n_shapes - 1);
        return say(EXIT_USAGE, err);
    }
    const char *job = getenv("SLURM_ARRAY_JOB_ID") ? getenv("SLURM_ARRAY_JOB_ID") : getenv("SLURM_JOB_ID");
    snprintf(c->slurm_job, sizeof c->slurm_job, "%s", job ? job : "");
    c->slurm_task = o->sweep.task;
    task t;
    task_for(&t, &c->plan.shapes[o->sweep.task]);
    char final[PATH_MAX + 160];
    path_of(c, t.final_rel, NULL, final, sizeof final);
    if (archive_complete(final)) {
        printf("%s: complete already\n", t.name);
        return EXIT_OK;
    }
    int rc = make_dirs(c);
    if (rc != EXIT_OK)
        return rc;
    int code;
    rc = run_tasks(c, &t, 1, NULL, 1, progress_for(c->o), &code);
    if (rc != EXIT_OK && rc != EXIT_VARIANT_FAILED && rc != EXIT_INTERRUPTED)
        return rc; /* the shape did not start (a refused log, no fork): said on stderr */
    if (rc == EXIT_INTERRUPTED) {
        /* Slurm's time limit or scancel: say so in the task's status, for --collect. */
        sweep_status st = {.exit_code = EXIT_INTERRUPTED, .slurm_task = c->slurm_task};
        snprintf(st.error, sizeof st.error, "stopped by signal %d before the shape finished (Slurm time limit or "
                 "scancel?); the shape in flight was discarded", (int)stop_signal);
        snprintf(st.slurm_job_id, sizeof st.slurm_job_id, "%s", c->slurm_job);
        snprintf(st.log, sizeof st.log, "logs/%s_%d.out", c->slurm_job, c->slurm_task);
        if (sweep_status_write(c->dir, t.name, &st, err, sizeof err) != 0)
            fprintf(stderr, "attnprof: %s\n", err);
    }
    /* The child's stderr into this task's Slurm log too. */
    char log[PATH_MAX + 128], line[1024];
    snprintf(log, sizeof log, "%s/logs/%s.log", c->dir, t.name);
    FILE *f = read_log(log);
    while (f && fgets(line, sizeof line, f))
        fputs(line, stderr);
    if (f)
        fclose(f);
    printf("%s: exit %d\n", t.name, rc == EXIT_INTERRUPTED ? rc : code);
    return rc == EXIT_INTERRUPTED ? rc : code;
}

int sweep_run(const cli_options *o)
{
    static sweep_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.slurm_task = -1;
    c.logs_fd = -1;
    if (o->sweep.collect)
        return collect(o->sweep.collect, o, !o->run.quiet);
    if (self_exe(c.exe, sizeof c.exe) != 0)
        return say(EXIT_IO, "cannot find this executable (/proc/self/exe)");
    if (o->sweep.task >= 0)
        return slurm_task(&c);

    char err[1024];
    int rc;
    char gpus[SWEEP_MAX_GPUS][32];
    int n_gpus = 0;
    if (o->sweep.gpus && (n_gpus = gpu_list(o->sweep.gpus, gpus, SWEEP_MAX_GPUS, err, sizeof err)) < 0)
        return say(!strcmp(o->sweep.gpus, "all") ? EXIT_NO_DEVICE : EXIT_USAGE, err);
    if (o->sweep.resume) {
        int r = realpath(o->out_dir, c.dir) ? sweep_plan_read(&c.plan, c.dir, err, sizeof err) : 1;
        if (r != 0) {
            if (r > 0)
                snprintf(err, sizeof err, "--resume: %s holds no sweep.json; start the sweep without --resume",
                         o->out_dir);
            return die_escaped(EXIT_BAD_ARCHIVE, err);
        }
        if ((rc = same_task_command(&c, o->sweep.task_command)) != EXIT_OK)
            return rc;
    } else {
        if ((rc = make_plan(o, &c.plan)) != EXIT_OK)
            return rc;
        if ((rc = start_dir(&c)) != EXIT_OK)
            return rc;
    }
    c.plan.n_gpus = n_gpus;
    for (int i = 0; i < n_gpus; i++)
        snprintf(c.plan.gpus[i], sizeof c.plan.gpus[i], "%s", gpus[i]);
    if ((rc = make_dirs(&c)) != EXIT_OK)
        return rc;
    if (sweep_plan_write(&c.plan, c.dir, err, sizeof err) != 0)
        return say(EXIT_IO, err);

    if (o->sweep.slurm) {
        if ((rc = write_sbatch(&c)) != EXIT_OK)
            return rc;
        if (o->sweep.submit)
            return submit(&c);
        printf("sbatch %s/sweep.sbatch\n", c.dir);
        return EXIT_OK;
    }

    static task tasks[SWEEP_MAX_SHAPES + SWEEP_MAX_GPUS];
    int n = 0, skipped = 0;
    for (int i = 0; i < c.plan.n_shapes; i++) {
        task_for(&tasks[n], &c.plan.shapes[i]);
        char final[PATH_MAX + 160];
        path_of(&c, tasks[n].final_rel, NULL, final, sizeof final);
        if (o->sweep.resume && archive_complete(final)) {
            skipped++;
            continue;
        }
        n++;
    }
    qsort(tasks, (size_t)n, sizeof *tasks, cmp_cost);
    if (c.plan.replicate) {
        int workers = n_gpus ? n_gpus : 1;
        for (int w = 0; w < workers; w++) {
            task *t = &tasks[n];
            task_for(t, &c.plan.reference);
            snprintf(t->name, sizeof t->name, "replicate-gpu%s", n_gpus ? gpus[w] : "0");
            snprintf(t->final_rel, sizeof t->final_rel, "replicate/gpu%s", n_gpus ? gpus[w] : "0");
            t->pinned = w;
            char final[PATH_MAX + 160];
            path_of(&c, t->final_rel, NULL, final, sizeof final);
            if (o->sweep.resume && archive_complete(final))
                continue;
            n++;
        }
    }
    if (skipped && !o->run.quiet)
        printf("resume: %d of %d shapes are complete already; running %d\n", skipped, c.plan.n_shapes, n);
    double t0 = now_s();
    int code;
    rc = run_tasks(&c, tasks, n, n_gpus ? gpus : NULL, n_gpus ? n_gpus : 1, progress_for(o), &code);
    double wall = now_s() - t0;
    cleanup_install(); /* run_tasks had its own handlers; the collect's temporaries are cleanup.h's */
    char staging[PATH_MAX + 32];
    path_of(&c, ".staging", NULL, staging, sizeof staging);
    rmdir(staging);
    if (rc == EXIT_INTERRUPTED) {
        fprintf(stderr, "attnprof: interrupted; the shapes in flight were discarded, shapes/ holds only complete "
                        "archives; `attnprof sweep --resume -o %s` continues\n", o->out_dir);
        return rc;
    }
    if (rc != EXIT_OK && rc != EXIT_VARIANT_FAILED)
        return rc;
    if (!o->run.quiet)
        printf("ran %d task%s in %.1f s on %d worker%s\n", n, n == 1 ? "" : "s", wall, n_gpus ? n_gpus : 1,
               n_gpus > 1 ? "s" : "");
    int crc = collect(c.dir, o, !o->run.quiet);
    if (crc != EXIT_OK && crc != EXIT_VARIANT_FAILED)
        return crc;
    return rc != EXIT_OK ? rc : crc;
}
