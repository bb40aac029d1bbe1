/* attnprof sweep under Slurm: --slurm writes DIR/sweep.sbatch, a job array with one task
 * per shape (and --submit runs sbatch and records the job id in sweep.json); each array
 * task runs `attnprof sweep --task I DIR`, which handles its one shape as a local child,
 * with the GPU Slurm gave it, and copies the child's log into the task's Slurm log. The
 * task command is taken from the sbatch line, never from sweep.json. */
#include "sweep_parts.h"
#include "units.h"

#include "archive.h"
#include "commands.h"
#include "exit_codes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

int sweep_slurm_write_sbatch(const sweep_ctx *c)
{
    const sweep_options *w = &c->o->sweep;
    char path[PATH_MAX + 32], q_exe[PATH_MAX * 2], q_dir[PATH_MAX * 2], logs[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/sweep.sbatch", c->dir);
    sweep_shell_quote(c->exe, q_exe, sizeof q_exe);
    sweep_shell_quote(c->dir, q_dir, sizeof q_dir);
    snprintf(logs, sizeof logs, "%s/logs", c->dir);
    /* The directory goes into comments and #SBATCH lines, which have no quoting, and
     * sbatch expands % in --output: a path with a control character or % is refused. */
    for (const char *p = c->dir; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '%')
            return cli_fail(EXIT_USAGE, "--slurm: the sweep directory's path holds a control character or '%%', which "
                                   "sweep.sbatch's #SBATCH lines cannot quote; choose another -o");
    char q_cmd[sizeof c->plan.task_command * 4 + 4] = "";
    if (c->plan.task_command[0])
        sweep_shell_quote(c->plan.task_command, q_cmd, sizeof q_cmd);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return cli_fail(EXIT_NO_MEMORY, "out of memory");
    char shapes[48];
    units_count_noun(c->plan.n_shapes, "shape", shapes, sizeof shapes);
    fprintf(f, "#!/bin/bash\n# attnprof sweep: one array task per shape (%s); written by attnprof sweep --slurm.\n"
               "# Each task runs one shape into %s/shapes/ and records its exit status in status/.\n"
               "# After the array: attnprof sweep --collect %s\n",
            shapes, c->dir, c->dir);
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
    return rc == 0 ? EXIT_OK : cli_fail(EXIT_IO, "%s", err);
}

int sweep_slurm_submit(sweep_ctx *c)
{
    char cmd[PATH_MAX * 2 + 64], q[PATH_MAX * 2], line[512] = "", last[512] = "";
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sweep.sbatch", c->dir);
    sweep_shell_quote(path, q, sizeof q);
    snprintf(cmd, sizeof cmd, "sbatch --parsable %s 2>&1", q);
    FILE *p = popen(cmd, "r");
    if (!p)
        return cli_fail(EXIT_IO, "cannot run sbatch");
    while (fgets(line, sizeof line, p))
        if (line[strspn(line, " \t\r\n")])
            snprintf(last, sizeof last, "%s", line);
    int st = pclose(p);
    last[strcspn(last, "\r\n")] = '\0';
    if (st != 0 || !last[0] || strspn(last, "0123456789") == 0) {
        char err[700];
        snprintf(err, sizeof err, "sbatch failed (%s): %s", WIFEXITED(st) ? "exit status" : "did not run",
                 last[0] ? last : "no output; is Slurm installed and sbatch on PATH?");
        return cli_fail(EXIT_IO, "%s", err);
    }
    last[strspn(last, "0123456789")] = '\0'; /* "123;cluster" → "123" */
    snprintf(c->plan.slurm_job_id, sizeof c->plan.slurm_job_id, "%s", last);
    char err[512];
    int r = sweep_plan_write(&c->plan, c->dir, err, sizeof err);
    if (r != EXIT_OK)
        return cli_fail(r, "%s", err);
    printf("submitted: job %s (%d array tasks); logs in %s/logs/; then: attnprof sweep --collect %s\n", last,
           c->plan.n_shapes, c->dir, c->dir);
    return EXIT_OK;
}

int sweep_slurm_task(sweep_ctx *c)
{
    const cli_options *o = c->o;
    char err[512];
    if (!realpath(o->sweep.task_dir, c->dir)) {
        snprintf(err, sizeof err, "%s: %s", o->sweep.task_dir, strerror(errno));
        return cli_fail(EXIT_BAD_ARCHIVE, "%s", err);
    }
    int found = 0, r = sweep_plan_read(&c->plan, c->dir, &found, err, sizeof err);
    if (r != EXIT_OK)
        return cli_fail(r, "%s", err);
    if (!found)
        return cli_fail(EXIT_BAD_ARCHIVE, "no sweep.json in the directory: not a sweep");
    if ((r = sweep_same_task_command(c, o->sweep.task_command)) != EXIT_OK)
        return r;
    if (o->sweep.task >= c->plan.n_shapes) {
        snprintf(err, sizeof err, "--task %d: the sweep has %d shapes (tasks 0-%d)", o->sweep.task, c->plan.n_shapes,
                 c->plan.n_shapes - 1);
        return cli_fail(EXIT_USAGE, "%s", err);
    }
    const char *job = getenv("SLURM_ARRAY_JOB_ID") ? getenv("SLURM_ARRAY_JOB_ID") : getenv("SLURM_JOB_ID");
    snprintf(c->slurm_job, sizeof c->slurm_job, "%s", job ? job : "");
    c->slurm_task = o->sweep.task;
    task t;
    sweep_task_for(&t, &c->plan.shapes[o->sweep.task]);
    char final[PATH_MAX + 160];
    sweep_path_of(c, t.final_rel, NULL, final, sizeof final);
    if (sweep_archive_complete(final)) {
        printf("%s: complete already\n", t.name);
        return EXIT_OK;
    }
    int rc = sweep_make_dirs(c);
    if (rc != EXIT_OK)
        return rc;
    int code;
    rc = sweep_run_tasks(c, &t, 1, NULL, 1, sweep_progress_for(c->o), &code);
    if (rc != EXIT_OK && rc != EXIT_VARIANT_FAILED && rc != EXIT_INTERRUPTED)
        return rc; /* the shape did not start (a refused log, no fork): said on stderr */
    if (rc == EXIT_INTERRUPTED) {
        /* Slurm's time limit or scancel: say so in the task's status, for --collect. */
        sweep_status st = {.exit_code = EXIT_INTERRUPTED, .slurm_task = c->slurm_task};
        snprintf(st.error, sizeof st.error, "stopped by signal %d before the shape finished (Slurm time limit or "
                 "scancel?); the shape in flight was discarded", sweep_stop_signal());
        snprintf(st.slurm_job_id, sizeof st.slurm_job_id, "%s", c->slurm_job);
        snprintf(st.log, sizeof st.log, "logs/%s_%d.out", c->slurm_job, c->slurm_task);
        if (sweep_status_write(c->dir, t.name, &st, err, sizeof err) != 0)
            cli_fail(EXIT_IO, "%s", err); /* the interruption is the task's outcome */
    }
    /* The child's stderr into this task's Slurm log too. */
    char log[PATH_MAX + 128], line[1024];
    snprintf(log, sizeof log, "%s/logs/%s.log", c->dir, t.name);
    FILE *f = sweep_read_log(log);
    while (f && fgets(line, sizeof line, f))
        fputs(line, stderr);
    if (f)
        fclose(f);
    printf("%s: exit %d\n", t.name, rc == EXIT_INTERRUPTED ? rc : code);
    return rc == EXIT_INTERRUPTED ? rc : code;
}