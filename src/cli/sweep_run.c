/* attnprof sweep: runs every shape of a sweep as its own child process, so a variant that
 * breaks the CUDA context on one shape costs that shape only. This file holds the modes
 * and the plan: a new sweep (the plan from --seq, --dim, --tokens written to
 * DIR/sweep.json before anything runs), --resume (the plan read back; shapes with a
 * complete archive are not run again), --slurm and --task (sweep_slurm.c), --collect (the
 * sweep report rebuilt from what DIR holds); the children are sweep_child.c's, the local
 * loop sweep_local.c's (sweep_parts.h).
 *
 * A child writes into DIR/.staging/<shape>/; when it has exited with 0 or 1 and left a
 * run.json and trace.json there, the archive is renamed to DIR/shapes/<shape>/, so shapes/
 * only ever holds complete archives. Every child's outcome goes to DIR/status/<shape>.json
 * and its stderr to DIR/logs/<shape>.log. No CUDA here: GPUs are counted from
 * /proc/driver/nvidia/gpus (or taken from CUDA_VISIBLE_DEVICES). */
#include "sweep_run.h"

#ifndef ATTNPROF_WITH_RECORDER
#define ATTNPROF_WITH_RECORDER 1
#endif
#include "sweep_parts.h"

#include "archive.h"
#include "cleanup.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "report.h"
#include "sweep_doc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The queue's order: the most work first, so the workers finish together. */
static int cmp_cost(const void *a, const void *b)
{
    const task *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int collect(const char *dir, const cli_options *o, int print)
{
    char err[2048];
    static sweep_data m;
    int rc = sweep_load(&m, dir, 2, err, sizeof err);
    if (rc != EXIT_OK)
        return cli_fail(rc, "%s", err);
    rc = sweep_write(&m, o->formats, err, sizeof err);
    if (rc != EXIT_OK) {
        sweep_free(&m);
        return cli_fail(rc, "%s", err);
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
        enum { SHOWN_MAX = 12 }; /* the terminal's share; sweep.md holds them all */
        for (int i = 0; i < m.n_findings && i < SHOWN_MAX; i++) {
            char text[1024], safe[1024];
            sweep_finding_text(&m, &m.findings[i], text, sizeof text);
            printf("- %s\n", esc_terminal(safe, sizeof safe, text));
        }
        if (m.n_findings > SHOWN_MAX)
            printf("(%d of %d findings shown, headlines first; sweep.md lists them all)\n", SHOWN_MAX, m.n_findings);
        printf("sweep: %s/sweep.html\n", dir);
    }
    /* A shape whose archive is complete stays in the sweep when its status file is refused (a
     * link, a FIFO, a device, too large, out of range), but the refusal is said, never swallowed:
     * the status held its GPU, log and skipped variants. */
    for (int i = 0; i < m.n_shapes; i++) {
        const sweep_shape *x = &m.shapes[i];
        if (x->state == SHAPE_COMPLETE && x->status_rc != EXIT_OK) {
            char safe[sizeof x->status_err];
            fprintf(stderr, "attnprof: sweep --collect: status file of %s left out (its archive is complete): %s\n",
                    x->name, esc_terminal(safe, sizeof safe, x->status_err));
        }
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
        return EXIT_IO;
    out[len] = '\0';
    return EXIT_OK;
}


static int make_plan(const cli_options *o, sweep_plan *p)
{
    const sweep_options *w = &o->sweep;
    char err[512];
    int seq[SWEEP_MAX_LIST], dim[SWEEP_MAX_LIST], kv[SWEEP_MAX_LIST], qs[SWEEP_MAX_LIST];
    int ns, nd, nk = 0, nq = 0, rc;
    if ((rc = sweep_parse_list("seq", w->seq ? w->seq : "256:16384:x2", 1 << 20, seq, &ns, err, sizeof err)) ||
        (rc = sweep_parse_list("dim", w->dim ? w->dim : "64,128", 1024, dim, &nd, err, sizeof err)) ||
        (w->kv_heads && (rc = sweep_parse_list("kv-heads", w->kv_heads, 1 << 12, kv, &nk, err, sizeof err))) ||
        (w->q_seq && (rc = sweep_parse_list("q-seq", w->q_seq, 1 << 20, qs, &nq, err, sizeof err))))
        return cli_fail(rc, "%s", err);
    long tokens = w->batch_given ? 0 : w->tokens ? w->tokens : SWEEP_DEFAULT_TOKENS;
    int heads = w->heads_given ? o->run.shape.heads : SWEEP_DEFAULT_HEADS;
    memset(p, 0, sizeof *p);
    if ((rc = sweep_plan_shapes(p, seq, ns, dim, nd, o->run.shape.batch, tokens, heads, err, sizeof err)) != EXIT_OK ||
        (rc = sweep_plan_cross(p, kv, nk, qs, nq, err, sizeof err)) != EXIT_OK)
        return cli_fail(rc, "%s", err);
    snprintf(p->variants, sizeof p->variants, "%s", o->run.variant_list ? o->run.variant_list : "");
    p->iters = w->iters_given ? o->run.iters : 0;
    p->warmup = w->warmup_given ? o->run.warmup : 0;
    if (w->task_command && strlen(w->task_command) >= sizeof p->task_command) {
        char err2[128];
        snprintf(err2, sizeof err2, "--task-command: longer than %zu bytes; put it in a script", sizeof p->task_command - 1);
        return cli_fail(EXIT_USAGE, "%s", err2);
    }
    if (w->task_command)
        snprintf(p->task_command, sizeof p->task_command, "%s", w->task_command);
    /* run's own options that change what it does, passed on to every shape. */
    snprintf(p->run_flags, sizeof p->run_flags, "%s%s%s%s%s", o->run.counters ? "" : " --no-counters",
             o->run.calibrate ? "" : " --no-calibrate", o->run.options.cudnn_replan ? " --cudnn-replan" : "",
             o->run.options.backward ? " --backward" : "", o->pdf ? " --pdf" : "");
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


static int start_dir(sweep_ctx *c)
{
    const cli_options *o = c->o;
    if (path_exists(o->out_dir) && !o->sweep.resume) {
        if (!o->force) {
            return cli_fail(EXIT_OUTPUT_EXISTS, "%s exists; pass --resume to continue its sweep, --force to replace "
                            "it, or choose another -o", o->out_dir);
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
            return cli_fail(EXIT_OUTPUT_EXISTS, "%s exists and holds no sweep.json: --force replaces only a sweep; "
                            "choose another -o", o->out_dir);
        }
        if (remove_tree(o->out_dir) != 0)
            return cli_fail(EXIT_IO, "%s: cannot remove: %s", o->out_dir, strerror(errno));
    }
    if (mkdir(o->out_dir, 0755) != 0 && errno != EEXIST)
        return cli_fail(EXIT_IO, "%s: cannot create: %s", o->out_dir, strerror(errno));
    if (!realpath(o->out_dir, c->dir))
        return cli_fail(EXIT_IO, "%s: %s", o->out_dir, strerror(errno));
    return EXIT_OK;
}

/* The queue: the plan's shapes (under --resume, those without a complete archive), the
 * most work first, then the reference shape once on each worker (--check-gpus). Returns
 * its length; *skipped counts the shapes complete already. */
static int queue_tasks(const sweep_ctx *c, task *tasks, char gpus[][32], int n_gpus, int *skipped)
{
    int n = 0, resume = c->o->sweep.resume;
    *skipped = 0;
    for (int i = 0; i < c->plan.n_shapes; i++) {
        sweep_task_for(&tasks[n], &c->plan.shapes[i]);
        char final[PATH_MAX + 160];
        sweep_path_of(c, tasks[n].final_rel, NULL, final, sizeof final);
        if (resume && sweep_archive_complete(final)) {
            (*skipped)++;
            continue;
        }
        n++;
    }
    qsort(tasks, (size_t)n, sizeof *tasks, cmp_cost);
    if (!c->plan.replicate)
        return n;
    int workers = n_gpus ? n_gpus : 1;
    for (int w = 0; w < workers; w++) {
        task *t = &tasks[n];
        sweep_task_for(t, &c->plan.reference);
        snprintf(t->name, sizeof t->name, "replicate-gpu%s", n_gpus ? gpus[w] : "0");
        snprintf(t->final_rel, sizeof t->final_rel, "replicate/gpu%s", n_gpus ? gpus[w] : "0");
        t->pinned = w;
        char final[PATH_MAX + 160];
        sweep_path_of(c, t->final_rel, NULL, final, sizeof final);
        if (resume && sweep_archive_complete(final))
            continue;
        n++;
    }
    return n;
}

/* The shapes run here, one worker per GPU, then the sweep report. */
static int run_local(sweep_ctx *c, char gpus[][32], int n_gpus)
{
    const cli_options *o = c->o;
    static task tasks[SWEEP_MAX_SHAPES + SWEEP_MAX_GPUS];
    int skipped, n = queue_tasks(c, tasks, gpus, n_gpus, &skipped);
    if (skipped && !o->run.quiet)
        printf("resume: %d of %d shapes are complete already; running %d\n", skipped, c->plan.n_shapes, n);
    double t0 = sweep_now_s();
    int code;
    int rc = sweep_run_tasks(c, tasks, n, n_gpus ? gpus : NULL, n_gpus ? n_gpus : 1, sweep_progress_for(o), &code);
    double wall = sweep_now_s() - t0;
    cleanup_install(); /* run_tasks had its own handlers; the collect's temporaries are cleanup.h's */
    char staging[PATH_MAX + 32];
    sweep_path_of(c, ".staging", NULL, staging, sizeof staging);
    rmdir(staging);
    if (rc == EXIT_INTERRUPTED) {
        return cli_fail(rc, "interrupted; the shapes in flight were discarded, shapes/ holds only complete "
                        "archives; `attnprof sweep --resume -o %s` continues", o->out_dir);
    }
    if (rc != EXIT_OK && rc != EXIT_VARIANT_FAILED)
        return rc;
    if (!o->run.quiet)
        printf("ran %d task%s in %.1f s on %d worker%s\n", n, n == 1 ? "" : "s", wall, n_gpus ? n_gpus : 1,
               n_gpus > 1 ? "s" : "");
    int crc = collect(c->dir, o, !o->run.quiet);
    if (crc != EXIT_OK && crc != EXIT_VARIANT_FAILED)
        return crc;
    return rc != EXIT_OK ? rc : crc;
}

/* Each shape is an `attnprof run` unless a task command or Slurm runs it: without a GPU here,
 * the sweep stops in one line (exit 3) before it writes anything, instead of writing a report
 * of failed shapes. EXIT_OK when the shapes can run. */
static int shapes_can_run_here(const cli_options *o)
{
    if (o->sweep.slurm || o->sweep.task_command)
        return EXIT_OK;
    if (!ATTNPROF_WITH_RECORDER)
        return cli_fail(EXIT_NO_DEVICE, "sweep: this attnprof was built without CUDA, so its shapes cannot run here; "
                        "give --task-command CMD or --slurm, or rebuild with the CUDA Toolkit");
    if (access("/proc/driver/nvidia", F_OK) != 0)
        return cli_fail(EXIT_NO_DEVICE, "sweep: no NVIDIA driver loaded (no /proc/driver/nvidia), so its shapes cannot "
                        "run here; give --task-command CMD or --slurm to run them elsewhere");
    return EXIT_OK;
}

/* The plan: read back from DIR (--resume) or made from the command line in a new DIR. */
static int plan_of(sweep_ctx *c)
{
    const cli_options *o = c->o;
    if (!o->sweep.resume) {
        int rc = make_plan(o, &c->plan);
        if (rc == EXIT_OK)
            rc = shapes_can_run_here(o);
        return rc != EXIT_OK ? rc : start_dir(c);
    }
    char err[1024];
    int found = 0;
    int r = realpath(o->out_dir, c->dir) ? sweep_plan_read(&c->plan, c->dir, &found, err, sizeof err) : EXIT_OK;
    if (r != EXIT_OK)
        return cli_fail(r, "%s", err);
    if (!found)
        return cli_fail(EXIT_BAD_ARCHIVE, "--resume: %s holds no sweep.json; start the sweep without --resume",
                        o->out_dir);
    int rc = sweep_same_task_command(c, o->sweep.task_command);
    return rc != EXIT_OK ? rc : shapes_can_run_here(o);
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
        return cli_fail(EXIT_IO, "cannot find this executable (/proc/self/exe)");
    if (o->sweep.task >= 0)
        return sweep_slurm_task(&c);

    char err[1024];
    int rc;
    char gpus[SWEEP_MAX_GPUS][32];
    int n_gpus = 0;
    if (o->sweep.gpus && (n_gpus = sweep_gpu_list(o->sweep.gpus, gpus, SWEEP_MAX_GPUS, err, sizeof err)) < 0)
        return cli_fail(!strcmp(o->sweep.gpus, "all") ? EXIT_NO_DEVICE : EXIT_USAGE, "%s", err);
    if ((rc = plan_of(&c)) != EXIT_OK)
        return rc;
    c.plan.n_gpus = n_gpus;
    for (int i = 0; i < n_gpus; i++)
        snprintf(c.plan.gpus[i], sizeof c.plan.gpus[i], "%s", gpus[i]);
    if ((rc = sweep_make_dirs(&c)) != EXIT_OK)
        return rc;
    if ((rc = sweep_plan_write(&c.plan, c.dir, err, sizeof err)) != EXIT_OK)
        return cli_fail(rc, "%s", err);
    if (!o->sweep.slurm)
        return run_local(&c, gpus, n_gpus);
    if ((rc = sweep_slurm_write_sbatch(&c)) != EXIT_OK)
        return rc;
    if (o->sweep.submit)
        return sweep_slurm_submit(&c);
    printf("sbatch %s/sweep.sbatch\n", c.dir);
    return EXIT_OK;
}
