/* The local loop of attnprof sweep: one worker per GPU (--gpus: a list, or `all` from
 * CUDA_VISIBLE_DEVICES or /proc/driver/nvidia/gpus), each taking the next shape from one
 * queue ordered by work (largest first, so the workers finish together); progress as a
 * live line on a terminal or plain lines in a log; SIGINT/SIGTERM/SIGHUP stop the children
 * (each in its own process group) and discard their staging, so only complete archives
 * stay. */
#include "sweep_parts.h"

#include "archive.h"
#include "exit_codes.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

int sweep_stop_signal(void) { return (int)stop_signal; }

/* ---- GPUs ------------------------------------------------------------------- */

/* --gpus: "all" is every entry of CUDA_VISIBLE_DEVICES when set, else every GPU
 * the driver lists in /proc/driver/nvidia/gpus; a list is used as given. */
int sweep_gpu_list(const char *spec, char gpus[][32], int max, char *err, size_t errlen)
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

static void fmt_eta(double s, char *out, size_t n)
{
    if (!isfinite(s) || s < 0)
        snprintf(out, n, "?");
    else if (s >= 3600)
        snprintf(out, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
    else
        snprintf(out, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

progress_mode sweep_progress_for(const cli_options *o)
{
    return o->run.quiet ? PROGRESS_NONE : isatty(STDERR_FILENO) ? PROGRESS_LIVE : PROGRESS_LINES;
}

/* PROGRESS_LINES: a phase the child reported ("flash forward"), once per change. */
static void phase_line(child *ch, const char *gpu)
{
    char before[sizeof ch->phase];
    snprintf(before, sizeof before, "%s", ch->phase);
    sweep_child_read_phase(ch);
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
            sweep_child_read_phase(&running[w]);
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
    double deadline = sweep_now_s() + 10;
    for (int w = 0; w < n_workers; w++) {
        if (!busy[w])
            continue;
        int wstatus;
        while (waitpid(running[w].pid, &wstatus, WNOHANG) == 0) {
            if (sweep_now_s() > deadline)
                kill(-running[w].pid, SIGKILL);
            struct timespec nap = {0, 20 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
        char staging[PATH_MAX + 128];
        sweep_path_of(c, ".staging", running[w].t->name, staging, sizeof staging);
        remove_tree(staging);
    }
}

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
            sweep_now_s() - ch->started, done, n_tasks, n_tasks - done, eta);
    fflush(stderr);
}

/* The loop's state: each worker's child, which tasks are taken, each GPU's ceilings. */
typedef struct workers {
    const sweep_ctx *c;
    task *tasks;
    int n_tasks, n_workers;
    char (*gpus)[32];
    progress_mode progress;
    child running[SWEEP_MAX_GPUS];
    int busy[SWEEP_MAX_GPUS], taken[SWEEP_MAX_SHAPES + SWEEP_MAX_GPUS];
    /* The ceilings are the GPU's: a worker's first complete shape measures them, the later
     * ones take them from its run.json (not under a --task-command, which runs what it says). */
    char ceilings_from[SWEEP_MAX_GPUS][PATH_MAX + 160];
    int done, failed, last_code;
    double total_cost, done_cost, t0, last_draw;
} workers;

static const char *gpu_of(const workers *W, int w) { return W->gpus ? W->gpus[w] : NULL; }

/* The time left: the time so far scaled by the cost model's share left. */
static double eta_s(const workers *W)
{
    double el = sweep_now_s() - W->t0;
    return W->done_cost > 0 ? el * (W->total_cost - W->done_cost) / W->done_cost : NAN;
}

static void install_stop_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Every idle worker starts its next task: its pinned one first, then any. EXIT_OK, or the
 * code of a task that could not start. */
static int start_idle_workers(workers *W)
{
    for (int w = 0; w < W->n_workers; w++) {
        if (W->busy[w])
            continue;
        int pick = -1;
        for (int i = 0; i < W->n_tasks && pick < 0; i++) /* this worker's pinned task first */
            if (!W->taken[i] && W->tasks[i].pinned == w)
                pick = i;
        for (int i = 0; i < W->n_tasks && pick < 0; i++)
            if (!W->taken[i] && W->tasks[i].pinned < 0)
                pick = i;
        if (pick < 0)
            continue;
        W->taken[pick] = 1;
        int s = sweep_child_spawn(W->c, &W->tasks[pick], pick, gpu_of(W, w), W->ceilings_from[w], &W->running[w]);
        if (s != EXIT_OK)
            return s;
        W->busy[w] = 1;
    }
    return EXIT_OK;
}

/* The worker whose child `pid` exited with wstatus: its outcome recorded, counted, shown. */
static void reap(workers *W, pid_t pid, int wstatus)
{
    for (int w = 0; w < W->n_workers; w++) {
        if (!W->busy[w] || W->running[w].pid != pid)
            continue;
        child *ch = &W->running[w];
        sweep_child_close_phase(ch);
        int code = sweep_child_finish(W->c, ch, wstatus);
        W->busy[w] = 0;
        if (code == SWEEP_RETRY) {
            W->taken[ch->ti] = 0; /* again, without the refused variant */
            continue;
        }
        W->done++;
        W->done_cost += ch->t->cost;
        if (!W->ceilings_from[w][0])
            ceilings_of_gpu(W->c, ch->t, code, W->ceilings_from[w], sizeof W->ceilings_from[w]);
        if (code != EXIT_OK && code != EXIT_VARIANT_FAILED)
            W->failed++;
        if (code != EXIT_OK)
            W->last_code = code;
        if (W->progress == PROGRESS_LINES)
            shape_done_line(ch, gpu_of(W, w), code, W->done, W->n_tasks, eta_s(W));
    }
}

/* After the loop: the shapes in flight stopped (a signal) or waited for (a task that could
 * not start); the loop's exit code. */
static int end_loop(workers *W, int rc)
{
    if (W->progress == PROGRESS_LIVE)
        fprintf(stderr, "\r\033[K");
    for (int w = 0; w < W->n_workers; w++)
        if (W->busy[w])
            sweep_child_close_phase(&W->running[w]);
    if (stop_signal) {
        discard_in_flight(W->c, W->running, W->busy, W->n_workers);
        return EXIT_INTERRUPTED;
    }
    if (rc != EXIT_OK) {
        for (int w = 0; w < W->n_workers; w++)
            if (W->busy[w]) {
                int wstatus;
                waitpid(W->running[w].pid, &wstatus, 0);
                sweep_child_finish(W->c, &W->running[w], wstatus);
            }
        return rc;
    }
    return W->failed ? EXIT_VARIANT_FAILED : EXIT_OK;
}

int sweep_run_tasks(const sweep_ctx *c, task *tasks, int n_tasks, char gpus[][32], int n_workers,
                    progress_mode progress, int *last_code)
{
    install_stop_handlers();
    static workers W;
    memset(&W, 0, sizeof W);
    W.c = c, W.tasks = tasks, W.n_tasks = n_tasks, W.n_workers = n_workers, W.gpus = gpus;
    W.progress = progress;
    W.t0 = sweep_now_s();
    for (int i = 0; i < n_tasks; i++)
        W.total_cost += tasks[i].cost;
    int rc = EXIT_OK;
    while (!stop_signal) {
        if (rc == EXIT_OK)
            rc = start_idle_workers(&W);
        int n_busy = 0;
        for (int w = 0; w < n_workers; w++)
            n_busy += W.busy[w];
        if (!n_busy)
            break;
        int wstatus;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid > 0) {
            reap(&W, pid, wstatus);
            continue;
        }
        if (progress == PROGRESS_LINES)
            for (int w = 0; w < n_workers; w++)
                if (W.busy[w])
                    phase_line(&W.running[w], gpu_of(&W, w));
        if (pid < 0 && errno != EINTR && errno != ECHILD)
            break;
        if (progress == PROGRESS_LIVE && sweep_now_s() - W.last_draw >= 0.5) {
            W.last_draw = sweep_now_s();
            draw_live_line(W.running, W.busy, n_workers, gpus, W.done, n_tasks, W.failed, eta_s(&W));
        }
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    *last_code = W.last_code;
    return end_loop(&W, rc);
}
