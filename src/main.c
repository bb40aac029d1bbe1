/* attnprof: run the attention variants on the GPU, record them with CUPTI,
 * archive the trace, and render the report (run); or re-render an archive
 * without a GPU (report). This file and cli.c are the thin executable over the
 * report library (report/); `run` and `list` load the CUDA recorder
 * (libattnprof_recorder.so, see recorder.h) only when they are called. */
#include "analysis.h"
#include "archive.h"
#include "archive_read.h"
#include "cli.h"
#include "compare.h"
#include "exit_codes.h"
#include "figures.h"
#include "findings.h"
#include "recorder.h"
#include "report.h"
#include "run_info.h"
#include "sweep_run.h"
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
    char tmp[1100];
    if (archive_begin(dest, tmp, sizeof tmp, err, sizeof err) != 0) {
        trace_free(&t);
        return die(EXIT_IO, err);
    }
    char path[1200];
    int wrc = EXIT_OK;
    snprintf(path, sizeof path, "%s/trace.json", tmp);
    if (trace_write_json(&t, path, err, sizeof err) != 0)
        wrc = EXIT_IO;
    snprintf(path, sizeof path, "%s/run.json", tmp);
    if (wrc == EXIT_OK && run_info_write_json(&info, path, err, sizeof err) != 0)
        wrc = EXIT_IO;
    /* The report is rendered from what was written, exactly as `attnprof report` would. */
    trace back;
    static run_info back_info;
    if (wrc == EXIT_OK) {
        snprintf(path, sizeof path, "%s/trace.json", tmp);
        if (trace_read_json(&back, path, err, sizeof err) != 0)
            wrc = EXIT_IO;
    }
    if (wrc == EXIT_OK) {
        snprintf(path, sizeof path, "%s/run.json", tmp);
        if (run_info_read_json(&back_info, path, err, sizeof err) != 0)
            wrc = EXIT_IO;
        else
            wrc = render(tmp, &back, &back_info, o->formats, o->log_axis, o->run.quiet, err, sizeof err);
        trace_free(&back);
    }
    trace_free(&t);
    if (wrc == EXIT_OK && archive_commit(tmp, dest, o->force, err, sizeof err) != 0)
        wrc = o->force ? EXIT_IO : EXIT_OUTPUT_EXISTS;
    if (wrc != EXIT_OK) {
        remove_tree(tmp);
        return die(wrc, err);
    }
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
    char err[1024];
    trace t;
    static run_info info;
    if (archive_read(o->archive, &t, &info, err, sizeof err) != 0)
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

/* --baseline names an input by the path given or by its directory name. */
static int baseline_index(const cli_options *o, char *err, size_t errlen)
{
    if (!o->baseline)
        return 0;
    for (int i = 0; i < o->n_inputs; i++)
        if (!strcmp(o->inputs[i], o->baseline))
            return i;
    for (int i = 0; i < o->n_inputs; i++) {
        const char *base = strrchr(o->inputs[i], '/');
        base = base ? base + 1 : o->inputs[i];
        if (!strcmp(base, o->baseline))
            return i;
    }
    snprintf(err, errlen, "--baseline %s: not one of the archives given; name one of them as written", o->baseline);
    return -1;
}

static int cmd_compare(const cli_options *o)
{
    char err[2048];
    if (path_exists(o->out_dir) && !o->force) {
        snprintf(err, sizeof err, "%s exists; pass --force to replace it or choose another -o", o->out_dir);
        return die(EXIT_OUTPUT_EXISTS, err);
    }
    compare_options opt = {.min_effect = o->min_effect, .allow_shape_mismatch = o->allow_shape_mismatch,
                           .formats = o->formats, .log_axis = o->log_axis};
    if ((opt.baseline = baseline_index(o, err, sizeof err)) < 0)
        return die(EXIT_USAGE, err);
    compare_archive *ars = calloc((size_t)o->n_inputs, sizeof *ars);
    compare_archive *in[COMPARE_MAX_ARCHIVES];
    if (!ars)
        return die(EXIT_IO, "out of memory");
    int loaded = 0, rc = EXIT_OK;
    for (; loaded < o->n_inputs && rc == EXIT_OK; loaded++) {
        in[loaded] = &ars[loaded];
        rc = compare_load(&ars[loaded], o->inputs[loaded], err, sizeof err);
        if (rc != EXIT_OK)
            break;
    }
    compare_model m;
    if (rc == EXIT_OK) {
        rc = compare_build(&m, in, o->n_inputs, &opt, err, sizeof err);
        if (rc == EXIT_OK) {
            rc = compare_write(&m, o->out_dir, &opt, o->force, err, sizeof err);
            if (rc == EXIT_OK && !o->run.quiet) {
                printf("%-14s", "variant");
                for (int i = 1; i < m.n; i++)
                    printf(" %28.28s", m.in[i]->label);
                printf("\n");
                for (int v = 0; v < m.n_variants; v++) {
                    printf("%-14s", m.variants[v].name);
                    for (int i = 1; i < m.n; i++) {
                        const compare_ratio *r = &m.variants[v].cell[i].metric_ratio;
                        char cellbuf[64] = "-";
                        if (r->verdict != VERDICT_NONE)
                            snprintf(cellbuf, sizeof cellbuf, "%.3fx %s", r->ci.ratio,
                                     r->verdict == VERDICT_SAME ? "same" : compare_verdict_word(r->verdict));
                        printf(" %28s", cellbuf);
                    }
                    printf("\n");
                }
                printf("%s\ncompare: %s/compare.html\n", m.differs_sentence, o->out_dir);
            }
            compare_free(&m);
        }
        for (int i = 0; i < loaded; i++)
            compare_archive_free(&ars[i]);
    } else {
        for (int i = 0; i < loaded; i++)
            compare_archive_free(&ars[i]);
    }
    free(ars);
    return rc == EXIT_OK ? EXIT_OK : die(rc, err);
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
    case CMD_COMPARE:
        return cmd_compare(&o);
    case CMD_SWEEP:
        return sweep_run(&o);
    default:
        cli_usage(stderr);
        return EXIT_USAGE;
    }
}
