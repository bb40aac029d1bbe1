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

/* Analysis, figures and report for an archive directory that holds trace.json and run.json. */
static int render(const char *dir, const trace *t, const run_info *r, unsigned formats, int log_axis, int quiet,
                  int pdf, int figure_size, const char *reference, char *err, size_t errlen)
{
    analysis a;
    if (analysis_build(&a, t, r, err, errlen) != 0)
        return EXIT_BAD_ARCHIVE;
    findings_derive(&a);
    predict_findings(&a);
    figure_list figs = {0};
    int rc = EXIT_OK;
    /* report.html shows each figure as an inlined PNG (cmark-gfm's safe mode blanks an SVG
     * data URI): PNGs are drawn whatever --format asks, or the page has no images. */
    formats |= FIG_PNG;
    int frc = figures_render(&a, dir, formats, log_axis, &figs, err, errlen);
    if (frc == 0 && figure_size != FIG_SIZE_SCREEN)
        frc = figures_render_paper(&a, dir, formats, figure_size, &figs, err, errlen);
    if (frc != 0)
        rc = frc == FIG_ERR_BAD_INPUT ? EXIT_BAD_ARCHIVE : EXIT_IO;
    /* --reference DIR: another archive (PyTorch's variants on the same GPU) beside ours */
    compare_archive *ref = NULL;
    report_reference rr = {0};
    if (rc == EXIT_OK && reference) {
        ref = attn_calloc(1, sizeof *ref);
        char rerr[512];
        if (compare_load(ref, reference, rerr, sizeof rerr) != EXIT_OK) {
            snprintf(err, errlen, "--reference %s: %s", reference, rerr);
            rc = EXIT_BAD_ARCHIVE;
        } else {
            const char *base = strrchr(reference, '/');
            while (base && !base[1] && base > reference) { /* "dir/" */
                const char *p = base - 1;
                while (p > reference && *p != '/')
                    p--;
                base = p;
            }
            snprintf(rr.label, sizeof rr.label, "%.*s", (int)strcspn(base && *base == '/' ? base + 1 : reference, "/"),
                     base && *base == '/' ? base + 1 : reference);
            rr.a = &ref->a;
        }
    }
    if (rc == EXIT_OK && report_write_ref(&a, &figs, dir, ref ? &rr : NULL, err, errlen) != 0)
        rc = EXIT_IO;
    if (ref) {
        compare_archive_free(ref);
        free(ref);
    }
    /* --pdf: report.pdf printed by Chromium when installed, dated with the run's date so that
     * two renders are the same bytes. Opt-in: one browser start costs seconds, the rest of a
     * render well under one. Without Chromium it is a stated skip (one line, even under -q); a
     * print that fails (the disk full, Chromium crashed) is an error, and the old report,
     * report.pdf included, stays. */
    if (rc == EXIT_OK && pdf && print_pdf_enabled()) {
        char msg[512];
        int prc = print_html_to_pdf(dir, "report.html", "report.pdf", "A4", r->date, msg, sizeof msg);
        if (prc > 0) {
            fprintf(stderr, "attnprof: %s\n", msg);
        } else if (prc < 0) {
            snprintf(err, errlen, "%s", msg);
            rc = EXIT_IO;
        }
    }
    if (rc == EXIT_OK && !quiet)
        report_terminal_summary(stdout, &a);
    figure_list_free(&figs);
    analysis_free(&a);
    return rc;
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
            wrc = render(tmp, &back, &back_info, o->formats, o->log_axis, o->run.quiet, o->pdf, o->figure_size,
                         o->reference, err, sizeof err);
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

/* The report's outputs in an archive directory: replaced all together or not at all. */
static const char *const report_outputs[] = {"figures", "report.md", "report.html", "summary.csv", "summary.tex",
                                             "CITATION.cff", "findings.json", "report.pdf"};
enum { N_OUTPUTS = sizeof report_outputs / sizeof report_outputs[0] };

/* In the staging folder: the outputs the render made, one per line ("figures" with the
 * inode of the new figures folder), written before the first rename. With it a commit
 * that was killed is finished by the next run (roll_forward). */
#define REPORT_MANIFEST ".manifest"

static char *join(const char *dir, const char *name) { return attn_asprintf("%s/%s", dir, name); }

static int write_manifest(const char *tmp, char *err, size_t errlen)
{
    char text[512] = "";
    size_t len = 0;
    for (int i = 0; i < N_OUTPUTS; i++) {
        char *from = join(tmp, report_outputs[i]);
        struct stat st;
        if (lstat(from, &st) == 0)
            len += (size_t)snprintf(text + len, sizeof text - len, "%s %llu\n", report_outputs[i],
                                    (unsigned long long)st.st_ino);
        free(from);
    }
    return archive_write_file(tmp, REPORT_MANIFEST, text, err, errlen);
}

/* tmp's manifest: listed[i] and the inode of each; -1 when tmp has none (the render
 * never finished, and nothing was renamed). */
static int read_manifest(const char *tmp, int listed[N_OUTPUTS], unsigned long long ino[N_OUTPUTS])
{
    char *path = join(tmp, REPORT_MANIFEST), line[128], name[64];
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return -1;
    for (int i = 0; i < N_OUTPUTS; i++)
        listed[i] = 0, ino[i] = 0;
    unsigned long long n;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%63s %llu", name, &n) == 2)
            for (int i = 0; i < N_OUTPUTS; i++)
                if (!strcmp(name, report_outputs[i]))
                    listed[i] = 1, ino[i] = n;
    fclose(f);
    return 0;
}

/* Finishes the commit of a finished render that was killed: every output the manifest
 * lists and tmp still holds as the new one (for figures/: the inode it recorded; after
 * the swap tmp holds the old figures) is moved in; an output it does not list is old
 * and is removed. The archive then holds exactly the new report. */
static void roll_forward(const char *tmp, const char *dir, const int listed[N_OUTPUTS],
                         const unsigned long long ino[N_OUTPUTS])
{
    for (int i = 0; i < N_OUTPUTS; i++) {
        char *from = join(tmp, report_outputs[i]), *to = join(dir, report_outputs[i]);
        struct stat st;
        if (listed[i] && lstat(from, &st) == 0 && (unsigned long long)st.st_ino == ino[i]) {
            if (i == 0)
                remove_tree(to); /* a folder is not renamed over a full one */
            rename(from, to);
        } else if (!listed[i]) {
            remove_tree(to);
        }
        free(from);
        free(to);
    }
}

/* Moves the new outputs from `tmp` into `dir`, SIGINT/SIGTERM held back. Every output
 * name that exists stays in place at every moment, old or new: a document is renamed
 * over its old self (after a hard link to the old one in `dir/.report.old-PID`, for the
 * roll-back), figures/ is swapped with the new one in one rename (RENAME_EXCHANGE).
 * The old outputs the new report lacks (report.pdf without Chromium) go last. If a step
 * fails, everything is put back. A SIGKILL in between leaves a mix of old and new
 * outputs, none missing, that the next run finishes (repair_killed_commits). */
static int move_report_into(const char *tmp, const char *dir, char *err, size_t errlen)
{
    char old_name[64];
    snprintf(old_name, sizeof old_name, ".report.old-%d", (int)getpid());
    char *old = join(dir, old_name);
    enum { KEPT_NONE, KEPT_LINK, KEPT_MOVED } kept[N_OUTPUTS] = {KEPT_NONE};
    int fresh[N_OUTPUTS] = {0}, moved_in[N_OUTPUTS] = {0}, dropped[N_OUTPUTS] = {0}, swapped = 0;
    int rc = EXIT_OK;
    for (int i = 0; i < N_OUTPUTS && rc == EXIT_OK; i++) {
        char *to = join(dir, report_outputs[i]), *from = join(tmp, report_outputs[i]);
        struct stat st;
        int want_dir = i == 0;
        if (lstat(to, &st) == 0 && (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
            snprintf(err, errlen, "%s: cannot replace: it is not a %s; nothing was changed", to,
                     want_dir ? "directory" : "regular file");
            rc = EXIT_IO;
        }
        fresh[i] = path_exists(from);
        free(to);
        free(from);
    }
    if (rc == EXIT_OK && write_manifest(tmp, err, errlen) != 0)
        rc = EXIT_IO;
    sigset_t mask;
    cleanup_block(&mask);
    if (rc == EXIT_OK && mkdir(old, 0755) != 0) {
        snprintf(err, errlen, "%s: cannot write into the archive: %s", dir, strerror(errno));
        rc = EXIT_IO;
    }
    /* The old documents kept for the roll-back: hard links, so the names stay in place. */
    for (int i = 1; i < N_OUTPUTS && rc == EXIT_OK; i++) {
        char *to = join(dir, report_outputs[i]), *aside = join(old, report_outputs[i]);
        if (path_exists(to)) {
            if (link(to, aside) == 0)
                kept[i] = KEPT_LINK;
            else if (!fresh[i] && rename(to, aside) == 0)
                kept[i] = KEPT_MOVED; /* no hard links here, and nothing new replaces it */
            else if (fresh[i])
                kept[i] = KEPT_NONE; /* no hard links: replaced without a copy to roll back to */
            else {
                snprintf(err, errlen, "%s: cannot replace: %s; nothing was changed", to, strerror(errno));
                rc = EXIT_IO;
            }
        }
        free(to);
        free(aside);
    }
    for (int i = 0; i < N_OUTPUTS && rc == EXIT_OK; i++) {
        char *from = join(tmp, report_outputs[i]), *to = join(dir, report_outputs[i]);
        if (fresh[i]) {
            if (i == 0 && path_exists(to)) {
                if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0) {
                    swapped = 1;
                } else {
                    /* No RENAME_EXCHANGE: the old figures aside, the new ones in. */
                    char *aside = join(old, report_outputs[i]);
                    if (rename(to, aside) == 0 && rename(from, to) == 0) {
                        swapped = 2;
                    } else {
                        snprintf(err, errlen, "%s: cannot replace: %s; nothing was changed", to, strerror(errno));
                        if (path_exists(aside) && !path_exists(to))
                            rename(aside, to);
                        rc = EXIT_IO;
                    }
                    free(aside);
                }
            } else if (rename(from, to) == 0) {
                moved_in[i] = 1;
            } else {
                snprintf(err, errlen, "%s: cannot write: %s; nothing was changed", to, strerror(errno));
                rc = EXIT_IO;
            }
        }
        free(from);
        free(to);
    }
    /* Old outputs the new report does not have. */
    for (int i = 0; i < N_OUTPUTS && rc == EXIT_OK; i++) {
        char *to = join(dir, report_outputs[i]);
        if (!fresh[i] && kept[i] == KEPT_LINK && unlink(to) == 0)
            dropped[i] = 1;
        else if (!fresh[i] && i == 0 && path_exists(to)) {
            char *aside = join(old, report_outputs[i]);
            if (rename(to, aside) == 0)
                dropped[i] = 1;
            free(aside);
        }
        free(to);
    }
    /* Roll back: the old ones back in place, the new ones out. */
    if (rc != EXIT_OK) {
        for (int i = 0; i < N_OUTPUTS; i++) {
            char *to = join(dir, report_outputs[i]), *aside = join(old, report_outputs[i]),
                 *from = join(tmp, report_outputs[i]);
            if (i == 0 && swapped == 1)
                renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
            else if (i == 0 && (swapped == 2 || dropped[i])) {
                remove_tree(to);
                rename(aside, to);
            } else if (i > 0 && (kept[i] == KEPT_LINK || kept[i] == KEPT_MOVED))
                rename(aside, to);
            else if (moved_in[i])
                unlink(to);
            free(to);
            free(aside);
            free(from);
        }
    }
    /* The staging folder (and its manifest) goes first: a kill after it leaves only old
     * copies aside, which the next run removes. */
    remove_tree(tmp);
    remove_tree(old);
    cleanup_unblock(&mask);
    free(old);
    return rc;
}

/* What a killed `report` left in DIR (its PID gone): a finished render whose commit was
 * cut off is committed now (roll_forward), an unfinished one removed; the old copies it
 * kept aside are removed only after that. Runs under the archive's lock. */
static void repair_killed_commits(const char *dir)
{
    for (int pass = 0; pass < 2; pass++) { /* tmp folders first, then old ones */
        DIR *d = opendir(dir);
        if (!d)
            return;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            const char *prefix = pass == 0 ? ".report.tmp-" : ".report.old-";
            if (strncmp(e->d_name, prefix, 12) != 0)
                continue;
            const char *num = e->d_name + 12;
            if (!*num || strspn(num, "0123456789") != strlen(num) || strlen(num) > 9)
                continue;
            long pid = strtol(num, NULL, 10);
            if (pid > 0 && pid != (long)getpid() && !(kill((pid_t)pid, 0) != 0 && errno == ESRCH))
                continue; /* a live process (an attnprof without the lock) */
            char *p = join(dir, e->d_name);
            int listed[N_OUTPUTS];
            unsigned long long ino[N_OUTPUTS];
            if (pass == 0 && read_manifest(p, listed, ino) == 0)
                roll_forward(p, dir, listed, ino);
            else if (pass == 1) {
                /* Old figures moved aside (a file system without RENAME_EXCHANGE) and none in place. */
                char *aside = join(p, "figures"), *to = join(dir, "figures");
                if (path_exists(aside) && !path_exists(to))
                    rename(aside, to);
                free(aside);
                free(to);
            }
            remove_tree(p);
            free(p);
        }
        closedir(d);
    }
}

/* An exclusive flock on the archive directory for as long as the fd is open: two renders
 * of one archive take turns instead of failing on each other's files. -1 with `err`. */
static int lock_archive(const char *dir, int quiet, char *err, size_t errlen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            snprintf(err, errlen, "%s: cannot lock: %s", dir, strerror(errno));
            close(fd);
            return -1;
        }
        if (!quiet) {
            char safe[1024];
            fprintf(stderr, "attnprof: %s: another attnprof is writing its report; waiting for it\n",
                    esc_terminal(safe, sizeof safe, dir));
        }
        if (flock(fd, LOCK_EX) != 0) {
            snprintf(err, errlen, "%s: cannot lock: %s", dir, strerror(errno));
            close(fd);
            return -1;
        }
    }
    return fd;
}

static int cmd_report(cli_options *o)
{
    char err[1024];
    trace t;
    static run_info info;
    if (archive_read(o->archive, &t, &info, err, sizeof err) != 0)
        return die(EXIT_BAD_ARCHIVE, err);
    int lock = lock_archive(o->archive, o->run.quiet, err, sizeof err);
    if (lock < 0) {
        trace_free(&t);
        counters_free(&info.counters);
        return die(EXIT_IO, err);
    }
    repair_killed_commits(o->archive);
    /* Render beside the archive's files, then move the results in: a failed render
     * leaves the previous report and figures as they were. */
    char tmp_name[64];
    snprintf(tmp_name, sizeof tmp_name, ".report.tmp-%d", (int)getpid());
    char *tmp = join(o->archive, tmp_name);
    remove_tree(tmp);
    cleanup_add_path(tmp); /* before it exists: a signal right after mkdir still removes it */
    if (mkdir(tmp, 0755) != 0) {
        cleanup_forget_path(tmp);
        snprintf(err, sizeof err, "%s: cannot write into the archive: %s", o->archive, strerror(errno));
        trace_free(&t);
        counters_free(&info.counters);
        free(tmp);
        close(lock);
        return die(EXIT_IO, err);
    }
    int rc = render(tmp, &t, &info, o->formats, o->log_axis, o->run.quiet, o->pdf, o->figure_size, o->reference, err, sizeof err);
    trace_free(&t);
    counters_free(&info.counters);
    if (rc == EXIT_OK)
        rc = move_report_into(tmp, o->archive, err, sizeof err);
    remove_tree(tmp);
    cleanup_forget_path(tmp);
    free(tmp);
    close(lock);
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
                           .formats = o->formats, .log_axis = o->log_axis, .figure_size = o->figure_size};
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
                char shown[64];
                printf("%-14s", "variant");
                for (int i = 1; i < m.n; i++)
                    printf(" %28.28s", esc_terminal(shown, sizeof shown, m.in[i]->label));
                printf("\n");
                for (int v = 0; v < m.n_variants; v++) {
                    printf("%-14s", esc_terminal(shown, sizeof shown, m.variants[v].name));
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
                esc_terminal_fputs(m.differs_sentence, stdout); /* GPU, driver, dtype from the archives */
                printf("\ncompare: %s/compare.html\n", o->out_dir);
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
        rc = render(tmp, &t, &back_info, o->formats, o->log_axis, o->run.quiet, o->pdf, o->figure_size,
                    o->reference, err, sizeof err);
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
