/* attnprof: run the attention variants on the GPU, record them with CUPTI,
 * archive the trace, and render the report (run); or re-render an archive
 * without a GPU (report). This file and cli.c are the thin executable over the
 * report library (report/); `run` and `list` load the CUDA recorder
 * (libattnprof_recorder.so, see recorder.h) only when they are called. */
#include "analysis.h"
#include "archive.h"
#include "cli.h"
#include "exit_codes.h"
#include "figures.h"
#include "findings.h"
#include "kineto_import.h"
#include "recorder.h"
#include "report.h"
#include "run_info.h"
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef ATTNPROF_VERSION
#define ATTNPROF_VERSION "unknown"
#endif

static int die(int code, const char *msg)
{
    fprintf(stderr, "attnprof: %s\n", msg);
    return code;
}

static void command_line(int argc, char **argv, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && len + 1 < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? " " : "", argv[i]);
}

/* Analysis, figures and report for an archive directory that holds trace.json and run.json. */
static int render(const char *dir, const trace *t, const run_info *r, unsigned formats, int log_axis, int quiet,
                  char *err, size_t errlen)
{
    analysis a;
    if (analysis_build(&a, t, r, err, errlen) != 0)
        return EXIT_BAD_ARCHIVE;
    findings_derive(&a);
    figure_list figs = {0};
    int rc = EXIT_OK;
    if (figures_render(&a, dir, formats, log_axis, &figs, err, errlen) != 0)
        rc = EXIT_IO;
    if (rc == EXIT_OK && report_write(&a, &figs, dir, err, errlen) != 0)
        rc = EXIT_IO;
    if (rc == EXIT_OK && !quiet) {
        printf("%-14s %-11s %8s %14s %14s %9s\n", "variant", "status", "ops/fwd", "CUDA µs/fwd", "CPU µs/fwd",
               "rel.err");
        for (int i = 0; i < a.n; i++) {
            const variant_analysis *va = &a.v[i];
            printf("%-14s %-11s %8d %14.1f %14.1f %9.1e\n", va->result->name, variant_status_name(va->result->status),
                   va->ops_per_forward, va->cuda_us.median, va->cpu_us.median, va->result->rel_error);
        }
    }
    figure_list_free(&figs);
    analysis_free(&a);
    return rc;
}

static int cmd_list(void)
{
    const recorder_api *rec;
    char err[1024];
    int rc = recorder_load(&rec, err, sizeof err);
    if (rc != EXIT_OK)
        return die(rc, err);
    for (int i = 0; i < rec->n_variants; i++) {
        const recorder_variant *v = &rec->variants[i];
        printf("%-14s %s (%d GPU operation%s per forward expected)\n%14s %s\n", v->name, v->title, v->expected_ops,
               v->expected_ops == 1 ? "" : "s", "", v->what_changed);
    }
    return EXIT_OK;
}

/* Writes trace.json and run.json into a temporary directory beside `dest`, renders
 * the report from what was written (exactly as `attnprof report` would), and renames
 * the directory into place: nothing half-written is ever left at `dest`. `reread`:
 * render from trace.json read back (run: the CUPTI records pass through the writer's
 * rounding); otherwise from `t` itself, which the writer keeps to the nanosecond
 * (import: a big trace is not read twice; tests check the re-render is identical).
 * Returns EXIT_OK or the exit code, with one line in err. */
static int write_archive(const trace *t, const run_info *info, const char *dest, const cli_options *o, int reread,
                         char *err, size_t errlen)
{
    char tmp[1100];
    if (archive_begin(dest, tmp, sizeof tmp, err, errlen) != 0)
        return EXIT_IO;
    char path[1200];
    int wrc = EXIT_OK;
    snprintf(path, sizeof path, "%s/trace.json", tmp);
    if (trace_write_json(t, path, err, errlen) != 0)
        wrc = EXIT_IO;
    snprintf(path, sizeof path, "%s/run.json", tmp);
    if (wrc == EXIT_OK && run_info_write_json(info, path, err, errlen) != 0)
        wrc = EXIT_IO;
    trace back;
    trace_init(&back);
    static run_info back_info;
    if (wrc == EXIT_OK && reread) {
        snprintf(path, sizeof path, "%s/trace.json", tmp);
        if (trace_read_json(&back, path, err, errlen) != 0)
            wrc = EXIT_IO;
    }
    if (wrc == EXIT_OK) {
        snprintf(path, sizeof path, "%s/run.json", tmp);
        if (run_info_read_json(&back_info, path, err, errlen) != 0)
            wrc = EXIT_IO;
        else
            wrc = render(tmp, reread ? &back : t, &back_info, o->formats, o->log_axis, o->run.quiet, err, errlen);
    }
    trace_free(&back);
    if (wrc == EXIT_OK && archive_commit(tmp, dest, o->force, err, errlen) != 0)
        wrc = o->force ? EXIT_IO : EXIT_OUTPUT_EXISTS;
    if (wrc != EXIT_OK)
        remove_tree(tmp);
    return wrc;
}

static int cmd_run(cli_options *o, const char *cmdline)
{
    char err[1024];
    if (o->out_dir && path_exists(o->out_dir) && !o->force) {
        snprintf(err, sizeof err, "%s exists; pass --force to replace it or choose another -o", o->out_dir);
        return die(EXIT_OUTPUT_EXISTS, err);
    }
    const recorder_api *rec;
    int rc = recorder_load(&rec, err, sizeof err);
    if (rc != EXIT_OK)
        return die(rc, err);
    trace t;
    trace_init(&t);
    static run_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.tool_version, sizeof info.tool_version, "%s", ATTNPROF_VERSION);
    snprintf(info.command_line, sizeof info.command_line, "%s", cmdline);

    rc = rec->collect(&o->run, &t, &info, err, sizeof err);
    if (rc != EXIT_OK && rc != EXIT_VARIANT_FAILED) {
        trace_free(&t);
        return die(rc, err);
    }
    char dest[1024];
    if (o->out_dir) {
        snprintf(dest, sizeof dest, "%s", o->out_dir);
    } else {
        char slug[64], stamp[32];
        gpu_slug(info.device.name, slug, sizeof slug);
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(dest, sizeof dest, "out/%s-%s", slug, stamp);
    }
    int wrc = write_archive(&t, &info, dest, o, 1, err, sizeof err);
    trace_free(&t);
    if (wrc != EXIT_OK)
        return die(wrc, err);
    if (!o->run.quiet)
        printf("report: %s/report.html\n", dest);
    return rc;
}

static int move_report_into(const char *tmp, const char *dir, char *err, size_t errlen)
{
    char from[1200], to[1200], old[1200];
    snprintf(from, sizeof from, "%s/figures", tmp);
    snprintf(to, sizeof to, "%s/figures", dir);
    snprintf(old, sizeof old, "%s/.figures.old-%d", dir, (int)getpid());
    if (path_exists(to) && rename(to, old) != 0) {
        snprintf(err, errlen, "%s: cannot replace: %s", to, strerror(errno));
        return EXIT_IO;
    }
    if (path_exists(from) && rename(from, to) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", to, strerror(errno));
        rename(old, to);
        return EXIT_IO;
    }
    remove_tree(old);
    const char *files[] = {"report.md", "report.html", "summary.csv"};
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "%s/%s", tmp, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        if (rename(from, to) != 0) {
            snprintf(err, errlen, "%s: cannot write: %s", to, strerror(errno));
            return EXIT_IO;
        }
    }
    return EXIT_OK;
}

static int cmd_report(cli_options *o)
{
    char err[1024], path[1100];
    trace t;
    static run_info info;
    snprintf(path, sizeof path, "%s/run.json", o->archive);
    if (!path_exists(o->archive) || !path_exists(path)) {
        snprintf(err, sizeof err, "%s: missing; is %s an archive written by `attnprof run -o DIR`?", path,
                 o->archive);
        return die(EXIT_BAD_ARCHIVE, err);
    }
    if (run_info_read_json(&info, path, err, sizeof err) != 0)
        return die(EXIT_BAD_ARCHIVE, err);
    snprintf(path, sizeof path, "%s/trace.json", o->archive);
    if (!path_exists(path)) {
        snprintf(err, sizeof err, "%s: missing; the archive is incomplete", path);
        return die(EXIT_BAD_ARCHIVE, err);
    }
    if (trace_read_json(&t, path, err, sizeof err) != 0)
        return die(EXIT_BAD_ARCHIVE, err);
    /* Render beside the archive's files, then move the results in: a failed render
     * leaves the previous report and figures as they were. */
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s/.report.tmp-%d", o->archive, (int)getpid());
    remove_tree(tmp);
    if (mkdir(tmp, 0755) != 0) {
        snprintf(err, sizeof err, "%s: cannot write into the archive: %s", o->archive, strerror(errno));
        trace_free(&t);
        return die(EXIT_IO, err);
    }
    int rc = render(tmp, &t, &info, o->formats, o->log_axis, o->run.quiet, err, sizeof err);
    trace_free(&t);
    if (rc == EXIT_OK)
        rc = move_report_into(tmp, o->archive, err, sizeof err);
    remove_tree(tmp);
    if (rc != EXIT_OK)
        return die(rc, err);
    if (!o->run.quiet)
        printf("report: %s/report.html\n", o->archive);
    return EXIT_OK;
}

/* PyTorch profiler traces → an archive, rendered like a run's (no GPU). */
static int cmd_import(cli_options *o, const char *cmdline)
{
    char err[1024];
    if (path_exists(o->out_dir) && !o->force) {
        snprintf(err, sizeof err, "%s exists; pass --force to replace it or choose another -o", o->out_dir);
        return die(EXIT_OUTPUT_EXISTS, err);
    }
    trace t;
    static run_info info;
    import_options io = {o->import_variant, o->import_range, o->import_device};
    int rc = kineto_import(o->inputs, o->n_inputs, &io, &t, &info, err, sizeof err);
    if (rc != EXIT_OK)
        return die(rc, err);
    snprintf(info.tool_version, sizeof info.tool_version, "%s", ATTNPROF_VERSION);
    snprintf(info.command_line, sizeof info.command_line, "%s", cmdline);
    rc = write_archive(&t, &info, o->out_dir, o, 0, err, sizeof err);
    trace_free(&t);
    if (rc != EXIT_OK)
        return die(rc, err);
    if (!o->run.quiet)
        printf("report: %s/report.html\n", o->out_dir);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    cli_options o;
    char err[1024], cmdline[1024];
    /* Before getopt permutes argv. */
    command_line(argc, argv, cmdline, sizeof cmdline);
    int rc = cli_parse(argc, argv, &o, err, sizeof err);
    if (rc != EXIT_OK)
        return die(rc, err);
    switch (o.command) {
    case CMD_HELP:
        cli_usage(stdout);
        return EXIT_OK;
    case CMD_VERSION:
        printf("attnprof %s\n", ATTNPROF_VERSION);
        return EXIT_OK;
    case CMD_LIST:
        return cmd_list();
    case CMD_RUN:
        return cmd_run(&o, cmdline);
    case CMD_REPORT:
        return cmd_report(&o);
    case CMD_IMPORT:
        return cmd_import(&o, cmdline);
    default:
        cli_usage(stderr);
        return EXIT_USAGE;
    }
}
