/* The commands that make or render one archive: `run` (the recorder's batch), `import`
 * (PyTorch profiler traces), both written by the one archive writer (archive_write.h) and
 * rendered from what it read back; `report` (re-render in place); and `list`. `run` and
 * `list` load the CUDA recorder (recorder.h) only when they are called. */
#include "commands.h"

#include "archive.h"
#include "archive_read.h"
#include "archive_write.h"
#include "variant_catalog.h"
#include "counters.h"
#include "exit_codes.h"
#include "findings.h"
#include "kineto_import.h"
#include "recorder.h"
#include "report_render.h"
#include "run_info.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef ATTNPROF_VERSION
#define ATTNPROF_VERSION "unknown"
#endif

int cmd_list(void)
{
    const recorder_api *rec;
    char err[1024];
    if (recorder_load(&rec, err, sizeof err) == EXIT_OK) {
        for (int i = 0; i < rec->n_variants; i++) {
            const recorder_variant *v = &rec->variants[i];
            printf("%-14s %s (%d GPU operation%s per forward expected)\n%14s %s\n", v->name, v->title,
                   v->expected_ops, v->expected_ops == 1 ? "" : "s", "", v->what_changed);
        }
        return EXIT_OK;
    }
    /* No recorder here (a build without CUDA, or no driver to load it with): the catalog the
     * build generated from the same variant files, and one line saying why it is that one. */
    for (size_t i = 0; i < sizeof variant_catalog / sizeof variant_catalog[0]; i++) {
        const struct variant_catalog_row *v = &variant_catalog[i];
        printf("%-14s %s (%d GPU operation%s per forward expected)\n%14s %s\n", v->name, v->title, v->expected_ops,
               v->expected_ops == 1 ? "" : "s", "", v->what_changed);
    }
    fprintf(stderr, "attnprof: list: the variants as built (the recorder is not loaded here: %s)\n", err);
    return EXIT_OK;
}

/* The archive writer's render step: the report, as `attnprof report` renders it. */
static int render_archive(const char *dir, const trace *t, const run_info *r, void *ctx, char *err, size_t errlen)
{
    return report_render(dir, t, r, ctx, err, errlen);
}

static report_render_options render_options(const cli_options *o)
{
    return (report_render_options){o->formats, o->log_axis, o->run.quiet, o->pdf, o->figure_size, o->reference, 0};
}

/* -o DIR, or out/<gpu>-<yyyymmdd-hhmmss> from the device the run recorded. */
static void run_destination(const cli_options *o, const run_info *info, char *dest, size_t n)
{
    if (o->out_dir) {
        snprintf(dest, n, "%s", o->out_dir); /* cli_parse: -o is shorter than 4000 bytes */
        return;
    }
    char slug[64], stamp[32];
    gpu_slug(info->device.name, slug, sizeof slug);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(dest, n, "out/%s-%s", slug, stamp);
}

int cmd_run(const cli_options *o, const char *cmdline)
{
    char err[1024];
    int rc = cli_check_output("run", o->out_dir, o->force, NULL, 0, o->reference);
    if (rc != EXIT_OK)
        return rc;
    const recorder_api *rec;
    if ((rc = recorder_load(&rec, err, sizeof err)) != EXIT_OK)
        return cli_fail(rc, "%s", err);
    trace t;
    trace_init(&t);
    static run_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.tool_version, sizeof info.tool_version, "%s", ATTNPROF_VERSION);
    snprintf(info.command_line, sizeof info.command_line, "%s", cmdline);
    rc = rec->record_batch(&o->run, &t, &info, err, sizeof err);
    if (rc != EXIT_OK && rc != EXIT_VARIANT_FAILED) {
        trace_free(&t);
        return cli_fail(rc, "%s", err);
    }
    char dest[4096];
    run_destination(o, &info, dest, sizeof dest);
    /* provenance: each variant's kernels' origin, from their names; when the records cannot
     * be analysed the render says so, and the origins are derived there again */
    char perr[512];
    (void)findings_record_provenance(&info, &t, perr, sizeof perr);
    report_render_options ro = render_options(o);
    const archive_write_options wo = {dest, o->force, ARCHIVE_READ_BACK_ALL, render_archive, &ro};
    int wrc = archive_write(&wo, &t, &info, err, sizeof err);
    counters_free(&info.counters);
    trace_free(&t);
    if (wrc != EXIT_OK)
        return cli_fail(wrc, "%s", err);
    if (!o->run.quiet)
        printf("report: %s/report.html\n", dest);
    return rc;
}

/* PyTorch profiler traces → an archive, rendered like a run's (no GPU). An import's
 * kernels' origins are derived when it is rendered, from the analysis the render builds
 * anyway: a second pass over a 2-million-event trace is not paid for (run.json's
 * provenance names the producer). */
int cmd_import(const cli_options *o, const char *cmdline)
{
    char err[2048];
    int rc = cli_check_output("import", o->out_dir, o->force, o->inputs, o->n_inputs, o->reference);
    if (rc != EXIT_OK)
        return rc;
    trace t;
    static run_info info;
    import_options io = {o->import_variant, o->import_range, o->import_device,
                         o->import_has_shape ? &o->import_shape : NULL, o->import_dtype, o->import_causal};
    if ((rc = kineto_import((const char *const *)o->inputs, o->n_inputs, &io, &t, &info, err, sizeof err)) != EXIT_OK)
        return cli_fail(rc, "%s", err);
    snprintf(info.tool_version, sizeof info.tool_version, "%s", ATTNPROF_VERSION);
    snprintf(info.command_line, sizeof info.command_line, "%s", cmdline);
    report_render_options ro = render_options(o);
    const archive_write_options wo = {o->out_dir, o->force, ARCHIVE_READ_BACK_RUN_INFO, render_archive, &ro};
    rc = archive_write(&wo, &t, &info, err, sizeof err);
    counters_free(&info.counters);
    trace_free(&t);
    if (rc != EXIT_OK)
        return cli_fail(rc, "%s", err);
    if (!o->run.quiet)
        printf("report: %s/report.html\n", o->out_dir);
    return EXIT_OK;
}

int cmd_report(const cli_options *o)
{
    char err[1024];
    trace t;
    static run_info info;
    struct stat st;
    if (stat(o->archive, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_fail(EXIT_BAD_ARCHIVE, "report: %s is a file, not an archive; give the directory that `attnprof run` or "
                        "`attnprof import` wrote (it holds run.json and trace.json), e.g. attnprof report out/example-h200",
                        o->archive);
    if (archive_read(o->archive, &t, &info, err, sizeof err) != 0)
        return cli_fail(EXIT_BAD_ARCHIVE, "%s", err);
    report_render_options ro = render_options(o);
    ro.clean = o->clean;
    int rc = o->out_dir ? report_render_elsewhere(o->archive, o->out_dir, o->force, &t, &info, &ro, err, sizeof err)
                        : report_rerender_archive(o->archive, &t, &info, &ro, err, sizeof err);
    trace_free(&t);
    counters_free(&info.counters);
    if (rc != EXIT_OK)
        return cli_fail(rc, "%s", err);
    if (!o->run.quiet)
        printf("report: %s/report.html\n", o->out_dir ? o->out_dir : o->archive);
    return EXIT_OK;
}
