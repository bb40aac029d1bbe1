/* The report of one archive, rendered and committed: the analysis, its findings, the
 * figures and every document (report_render, into a staging folder), then the outputs
 * moved into the archive all together or not at all (report_rerender_archive). `run` and
 * `import` render into the new archive's temporary folder, which archive_commit renames
 * into place whole; `report` re-renders an existing archive in place, beside its
 * trace.json and run.json, which stay where they are. Moved here from src/main.c, as
 * compare (compare_doc.c) and sweep (sweep_doc.c) already were. */
#include "report_render.h"

#include "alloc.h"
#include "archive.h"
#include "cleanup.h"
#include "compare.h"
#include "escape.h"
#include "exit_codes.h"
#include "figures.h"
#include "findings.h"
#include "predict.h"
#include "print.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Analysis, figures and report for an archive directory that holds trace.json and run.json. */
int report_render(const char *dir, const trace *t, const run_info *r, const report_render_options *o, char *err,
                  size_t errlen)
{
    unsigned formats = o->formats;
    const int log_axis = o->log_axis, quiet = o->quiet, pdf = o->pdf, figure_size = o->figure_size;
    const char *reference = o->reference;
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

/* The report's outputs in an archive directory: replaced all together or not at all. */
static const char *const report_outputs[] = {"figures", "report.md", "report.html", "summary.csv", "summary.tex",
                                             "CITATION.cff", "findings.json", "samples.csv", "kernels.csv",
                                             "roles.csv", "report.pdf"};
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

int report_rerender_archive(const char *archive, const trace *t, const run_info *r, const report_render_options *o,
                            char *err, size_t errlen)
{
    int lock = lock_archive(archive, o->quiet, err, errlen);
    if (lock < 0)
        return EXIT_IO;
    repair_killed_commits(archive);
    /* Render beside the archive's files, then move the results in: a failed render
     * leaves the previous report and figures as they were. */
    char tmp_name[64];
    snprintf(tmp_name, sizeof tmp_name, ".report.tmp-%d", (int)getpid());
    char *tmp = join(archive, tmp_name);
    remove_tree(tmp);
    cleanup_add_path(tmp); /* before it exists: a signal right after mkdir still removes it */
    if (mkdir(tmp, 0755) != 0) {
        cleanup_forget_path(tmp);
        snprintf(err, errlen, "%s: cannot write into the archive: %s", archive, strerror(errno));
        free(tmp);
        close(lock);
        return EXIT_IO;
    }
    int rc = report_render(tmp, t, r, o, err, errlen);
    if (rc == EXIT_OK)
        rc = move_report_into(tmp, archive, err, errlen);
    remove_tree(tmp);
    cleanup_forget_path(tmp);
    free(tmp);
    close(lock);
    return rc;
}
