/* attnprof: run the attention variants on the GPU, record them with CUPTI,
 * archive the trace, and render the report (run); or re-render an archive
 * without a GPU (report). This file and cli.c are the thin executable over the
 * report library (report/); `run` and `list` load the CUDA recorder
 * (libattnprof_recorder.so, see recorder.h) only when they are called. */
#include "alloc.h"
#include "analysis.h"
#include "archive.h"
#include "archive_read.h"
#include "cleanup.h"
#include "cli.h"
#include "compare_doc.h"
#include "counters.h"
#include "escape.h"
#include "exit_codes.h"
#include "figures.h"
#include "findings.h"
#include "kineto_import.h"
#include "predict.h"
#include "recorder.h"
#include "print.h"
#include "report.h"
#include "report_render.h"
#include "run_info.h"
#include "sweep_run.h"
#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/file.h>
#include <execinfo.h>
#include <signal.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef ATTNPROF_VERSION
#define ATTNPROF_VERSION "unknown"
#endif

/* One line on stderr: archive strings in `msg` lose their control characters. */
static int die(int code, const char *msg)
{
    char line[1024];
    fprintf(stderr, "attnprof: %s\n", esc_terminal(line, sizeof line, msg));
    return code;
}

static void command_line(int argc, char **argv, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && len + 1 < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? " " : "", argv[i]);
    esc_utf8_trim(out);
}

/* -o DIR that is, holds or lies inside an input would lose that input (--force replaces
 * DIR whole): refused before anything is read. EXIT_OK, or EXIT_USAGE with the line said. */
static int output_apart_from_inputs(const char *cmd, const char *out, char *const *inputs, int n, const char *reference)
{
    for (int i = 0; i <= n; i++) {
        const char *in = i < n ? inputs[i] : reference;
        if (!in)
            continue;
        int r = archive_paths_overlap(out, in);
        if (r != 0) {
            char line[9000];
            if (r > 0)
                snprintf(line, sizeof line, "%s: -o %s is, holds or lies inside the input %s, which writing it would "
                         "replace; choose an -o apart from the inputs", cmd, out, in);
            else
                snprintf(line, sizeof line, "%s: cannot resolve -o %s or the input %s to check that one does not hold "
                         "the other", cmd, out, in);
            return die(r > 0 ? EXIT_USAGE : EXIT_IO, line);
        }
    }
    return EXIT_OK;
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
    if (o->out_dir && o->reference) {
        int orc = output_apart_from_inputs("run", o->out_dir, NULL, 0, o->reference);
        if (orc != EXIT_OK)
            return orc;
    }
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
    char dest[4096];
    if (o->out_dir) {
        snprintf(dest, sizeof dest, "%s", o->out_dir); /* cli_parse: -o is shorter than 4000 bytes */
    } else {
        char slug[64], stamp[32];
        gpu_slug(info.device.name, slug, sizeof slug);
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(dest, sizeof dest, "out/%s-%s", slug, stamp);
    }
    char tmp[4200];
    if (archive_begin(dest, tmp, sizeof tmp, err, sizeof err) != 0) {
        trace_free(&t);
        return die(EXIT_IO, err);
    }
    char path[4300];
    int wrc = EXIT_OK;
    snprintf(path, sizeof path, "%s/trace.json", tmp);
    if (trace_write_json(&t, path, err, sizeof err) != 0)
        wrc = EXIT_IO;
    snprintf(path, sizeof path, "%s/run.json", tmp);
    /* provenance: each variant's kernels' origin, from their names; when the records cannot
     * be analysed the render says so, and the origins are derived there again */
    char perr[512];
    if (wrc == EXIT_OK)
        (void)findings_record_provenance(&info, &t, perr, sizeof perr);
    if (wrc == EXIT_OK && run_info_write_json(&info, path, err, sizeof err) != 0)
        wrc = EXIT_IO;
    snprintf(path, sizeof path, "%s/counters.json", tmp);
    if (wrc == EXIT_OK && info.counters.meta.status != CTR_NOT_RUN &&
        counters_write_json(&info.counters, path, err, sizeof err) != 0)
        wrc = EXIT_IO;
    counters_free(&info.counters);
    /* The report is rendered from what was written, exactly as `attnprof report` would. */
    trace back;
    static run_info back_info;
    if (wrc == EXIT_OK) {
        if (archive_read(tmp, &back, &back_info, err, sizeof err) != 0) {
            wrc = EXIT_IO;
        } else {
            const report_render_options ro = {o->formats, o->log_axis, o->run.quiet, o->pdf, o->figure_size,
                                              o->reference};
            wrc = report_render(tmp, &back, &back_info, &ro, err, sizeof err);
            counters_free(&back_info.counters);
            trace_free(&back);
        }
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

static int cmd_report(cli_options *o)
{
    char err[1024];
    trace t;
    static run_info info;
    if (archive_read(o->archive, &t, &info, err, sizeof err) != 0)
        return die(EXIT_BAD_ARCHIVE, err);
    const report_render_options ro = {o->formats, o->log_axis, o->run.quiet, o->pdf, o->figure_size, o->reference};
    int rc = report_rerender_archive(o->archive, &t, &info, &ro, err, sizeof err);
    trace_free(&t);
    counters_free(&info.counters);
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
    int orc = output_apart_from_inputs("compare", o->out_dir, o->inputs, o->n_inputs, NULL);
    if (orc != EXIT_OK)
        return orc;
    if (path_exists(o->out_dir) && !o->force) {
        snprintf(err, sizeof err, "%s exists; pass --force to replace it or choose another -o", o->out_dir);
        return die(EXIT_OUTPUT_EXISTS, err);
    }
    compare_options opt = {.min_effect = o->min_effect, .allow_shape_mismatch = o->allow_shape_mismatch,
                           .formats = o->formats, .log_axis = o->log_axis, .figure_size = o->figure_size,
                           .allow_l2_mismatch = o->allow_l2_mismatch};
    if ((opt.baseline = baseline_index(o, err, sizeof err)) < 0)
        return die(EXIT_USAGE, err);
    if (o->pairs && compare_pairs_parse(o->pairs, &opt, err, sizeof err) != 0)
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
                compare_terminal_summary(stdout, &m);
                printf("compare: %s/compare.html\n", o->out_dir);
            }
            /* --fail-on (issue 25): the outputs are written; the exit status gates a CI job */
            char gate[1024];
            if (rc == EXIT_OK && o->fail_on && compare_gate(&m, o->fail_on, gate, sizeof gate) > 0) {
                char shown[1024];
                snprintf(err, sizeof err, "--fail-on: %s (CUDA time against the baseline %s)",
                         esc_terminal(shown, sizeof shown, gate), m.in[0]->label);
                rc = EXIT_VERDICT_GATE;
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

/* A crash inside a vendor library (CUPTI, cuDNN) or our own code says where it
 * happened: the signal, then the call stack (function names come from the
 * recorder's exported symbols), on stderr. Async-signal-safe calls only. */
static void on_crash(int sig)
{
    if (cleanup_claim_ending() == CLEANUP_ENDING_AGAIN) {
        signal(sig, SIG_DFL); /* crashed while ending: no second report */
        raise(sig);
    }
    static const char head[] = "attnprof: crashed (signal ";
    char num[8];
    int n = 0, v = sig;
    do
        num[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 7);
    (void)!write(STDERR_FILENO, head, sizeof head - 1);
    while (n)
        (void)!write(STDERR_FILENO, &num[--n], 1);
    (void)!write(STDERR_FILENO, "); call stack:\n", 15);
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
    cleanup_now(); /* the command's temporaries and Chromium go too */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* PyTorch profiler traces → an archive, rendered like a run's (no GPU). The report
 * is rendered from the trace in memory, which the writer keeps to the nanosecond:
 * a 2-million-event trace is not read twice (tests check that `attnprof report`
 * re-renders the same bytes); run.json is read back as `report` reads it. */
static int cmd_import(cli_options *o, const char *cmdline)
{
    char err[2048];
    int orc = output_apart_from_inputs("import", o->out_dir, o->inputs, o->n_inputs, o->reference);
    if (orc != EXIT_OK)
        return orc;
    if (path_exists(o->out_dir) && !o->force) {
        snprintf(err, sizeof err, "%s exists; pass --force to replace it or choose another -o", o->out_dir);
        return die(EXIT_OUTPUT_EXISTS, err);
    }
    trace t;
    static run_info info, back_info;
    import_options io = {o->import_variant, o->import_range, o->import_device,
                         o->import_has_shape ? &o->import_shape : NULL, o->import_dtype, o->import_causal};
    int rc = kineto_import((const char *const *)o->inputs, o->n_inputs, &io, &t, &info, err, sizeof err);
    if (rc != EXIT_OK)
        return die(rc, err);
    snprintf(info.tool_version, sizeof info.tool_version, "%s", ATTNPROF_VERSION);
    snprintf(info.command_line, sizeof info.command_line, "%s", cmdline);
    char tmp[4200], path[4300];
    if (archive_begin(o->out_dir, tmp, sizeof tmp, err, sizeof err) != 0) {
        trace_free(&t);
        return die(EXIT_IO, err);
    }
    snprintf(path, sizeof path, "%s/trace.json", tmp);
    rc = trace_write_json(&t, path, err, sizeof err) != 0 ? EXIT_IO : EXIT_OK;
    snprintf(path, sizeof path, "%s/run.json", tmp);
    /* An import's kernels' origins are derived when it is rendered, from the analysis
     * the render builds anyway: a second pass over a 2-million-event trace is not paid for
     * (run.json's provenance names the producer). */
    if (rc == EXIT_OK && run_info_write_json(&info, path, err, sizeof err) != 0)
        rc = EXIT_IO;
    if (rc == EXIT_OK && run_info_read_json(&back_info, path, err, sizeof err) != 0)
        rc = EXIT_IO;
    if (rc == EXIT_OK)
        rc = report_render(tmp, &t, &back_info,
                           &(report_render_options){o->formats, o->log_axis, o->run.quiet, o->pdf, o->figure_size,
                                                    o->reference},
                           err, sizeof err);
    counters_free(&back_info.counters);
    trace_free(&t);
    if (rc == EXIT_OK && archive_commit(tmp, o->out_dir, o->force, err, sizeof err) != 0)
        rc = o->force ? EXIT_IO : EXIT_OUTPUT_EXISTS;
    if (rc != EXIT_OK) {
        remove_tree(tmp);
        return die(rc, err);
    }
    if (!o->run.quiet)
        printf("report: %s/report.html\n", o->out_dir);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    void *warm[1];
    backtrace(warm, 1); /* loads libgcc's unwinder now, not inside the handler */
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGILL, on_crash);
    /* Stopped by SIGINT/SIGTERM/SIGHUP: the command's temporaries go, exit 130 (cleanup.h);
     * jansson's allocations, as ours, end in one line and exit 9 when memory runs out. */
    cleanup_install();
    json_set_alloc_funcs(attn_malloc, free);
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
    case CMD_IMPORT:
        return cmd_import(&o, cmdline);
    case CMD_SWEEP:
        return sweep_run(&o);
    default:
        cli_usage(stderr);
        return EXIT_USAGE;
    }
}
