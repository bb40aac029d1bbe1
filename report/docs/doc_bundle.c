/* The document pipeline (doc_bundle.h): a bundle's figures and outputs rendered into one
 * folder (doc_bundle_render), then put in place (doc_bundle_write) as a directory of its own
 * (archive_begin/archive_commit: built beside, renamed in) or beside the inputs it was made
 * from. Beside the inputs, the outputs are replaced as one set: each document renamed over
 * its old self after a hard link to the old one is kept aside for the roll-back, figures/
 * swapped whole (RENAME_EXCHANGE), and a manifest of the new set written first, so that a
 * commit cut off by SIGKILL is finished by the next write.
 *
 * The directory may be a received archive, so a leftover is repaired only when it proves to
 * be this pipeline's own: a real directory (not a link) owned by this user, holding the
 * marker written into it right after mkdir (its kind, PID, device and inode: a folder
 * unpacked from elsewhere has another inode), and, for a commit to finish, the manifest it
 * wrote, read without following links, never blocking on a FIFO or a device, and under a
 * size limit. Anything else named like a leftover is left alone and named on stderr. */
#include "doc_bundle.h"

#include "alloc.h"
#include "archive.h"
#include "cleanup.h"
#include "doc_record.h"
#include "err.h"
#include "escape.h"
#include "input.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int doc_markdown_row(const doc_page *p, char **out, char *err, size_t errlen)
{
    *out = p->bundle->markdown(p->bundle, p->figs, NULL);
    return *out ? EXIT_OK : err_set(err, errlen, EXIT_NO_MEMORY, "out of memory");
}

int doc_html_row(const doc_page *p, char **out, char *err, size_t errlen)
{
    char *md = p->bundle->markdown(p->bundle, p->figs, p->dir);
    if (!md)
        return err_set(err, errlen, EXIT_NO_MEMORY, "out of memory");
    *out = report_html(md, p->bundle->title, err, errlen);
    free(md);
    return *out ? EXIT_OK : EXIT_IO;
}

int doc_text(char *text, char **out, char *err, size_t errlen)
{
    *out = text;
    return text ? EXIT_OK : err_set(err, errlen, EXIT_NO_MEMORY, "out of memory");
}

void doc_formats_text(unsigned formats, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", formats & FIG_PNG ? "png" : "",
             formats & FIG_SVG ? (formats & FIG_PNG ? ",svg" : "svg") : "",
             formats & FIG_PDF ? (formats & (FIG_PNG | FIG_SVG) ? ",pdf" : "pdf") : "");
}

/* A row's status as the command's: an EXIT_* code passes through; any other failure (a
 * writer of the older convention returning -1) is a write error. */
static int row_status(int rc) { return rc > 0 ? rc : rc < 0 ? EXIT_IO : EXIT_OK; }

static char *join(const char *dir, const char *name) { return attn_asprintf("%s/%s", dir, name); }

/* What a render made in dir, into r: its rows' files and the entries of figures/. */
static void record_made(const doc_bundle *b, const char *dir, doc_record *r)
{
    for (int i = 0; i < b->n_outputs; i++) {
        char *p = join(dir, b->outputs[i].name);
        if (path_exists(p))
            doc_record_add(r, b->outputs[i].name, b->made_by);
        free(p);
    }
    char *figs = join(dir, "figures");
    DIR *d = opendir(figs);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *rel = attn_asprintf("figures/%s", e->d_name);
        doc_record_add(r, rel, b->made_by);
        free(rel);
    }
    if (d)
        closedir(d);
    free(figs);
}

static int write_record(const doc_record *r, const char *dir, char *err, size_t errlen)
{
    char *text = doc_record_text(r);
    int rc = archive_write_file(dir, DOC_RECORD, text, err, errlen) == 0 ? EXIT_OK : EXIT_IO;
    free(text);
    return rc;
}

int doc_bundle_render(const doc_bundle *b, const char *dir, char *err, size_t errlen)
{
    int rc = b->prepare ? b->prepare(b, err, errlen) : EXIT_OK;
    if (rc != EXIT_OK)
        return rc;
    figure_list figs = {0};
    rc = b->draw(b, dir, &figs, err, errlen);
    const doc_page page = {b, &figs, dir};
    for (int i = 0; i < b->n_outputs && rc == EXIT_OK; i++) {
        const doc_output *o = &b->outputs[i];
        if (o->write) {
            rc = row_status(o->write(&page, dir, err, errlen));
            continue;
        }
        char *text = NULL;
        rc = row_status(o->render(&page, &text, err, errlen));
        if (rc == EXIT_OK && text && archive_write_file(dir, o->name, text, err, errlen) != 0)
            rc = EXIT_IO;
        free(text);
    }
    figure_list_free(&figs);
    if (rc == EXIT_OK && b->made_by) {
        doc_record made = {0};
        record_made(b, dir, &made);
        rc = write_record(&made, dir, err, errlen);
        doc_record_free(&made);
    }
    return rc;
}

/* ---- the outputs of a bundle beside its inputs, replaced as one set ------------------- */

#define DOC_MAX_OUTPUTS 24
/* In the staging folder: the outputs the render made, one per line ("figures" with the
 * inode of the new figures folder), written before the first rename. */
#define DOC_MANIFEST ".manifest"
/* The manifest's line for a render under clean (the outputs it did not make are removed). */
#define DOC_MANIFEST_CLEAN "--clean"
/* A manifest names at most DOC_MAX_OUTPUTS outputs in short lines: anything longer is not one. */
#define DOC_MANIFEST_MAX_BYTES 4096
/* In every staging and roll-back folder, written right after mkdir: "attnprof KIND PID DEV INO". */
#define DOC_MARKER ".made-by-attnprof"

/* ---- leftovers proved ours ------------------------------------------------------------ */

/* Creates `folder` and its marker: the kind, this PID and the folder's own device and inode. */
static int make_marked_folder(const char *folder, const char *dir, const char *kind, char *err, size_t errlen)
{
    struct stat st;
    if (mkdir(folder, 0755) != 0 || lstat(folder, &st) != 0)
        return err_set(err, errlen, EXIT_IO, "%s: cannot write into the directory: %s", dir, strerror(errno));
    char text[160];
    snprintf(text, sizeof text, "attnprof %s %d %llu %llu\n", kind, (int)getpid(), (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    return archive_write_file(folder, DOC_MARKER, text, err, errlen) == 0 ? EXIT_OK : EXIT_IO;
}

/* A small regular file read whole into buf (NUL-terminated): opened without following a link
 * and without blocking (input_open), refused when it is not a regular file or holds more than
 * n - 1 bytes. EXIT_OK; EXIT_BAD_ARCHIVE with `err` (what it is instead); ENOENT in *missing. */
static int read_small_file(const char *path, char *buf, size_t n, int *missing, char *err, size_t errlen)
{
    int64_t size = 0;
    struct stat st;
    *missing = lstat(path, &st) != 0 && errno == ENOENT;
    if (*missing)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: none", path);
    int fd = input_open(path, &size, err, errlen);
    if (fd < 0)
        return EXIT_BAD_ARCHIVE;
    if (size < 0 || (uint64_t)size >= n) {
        close(fd);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %lld bytes, more than the %zu this pipeline writes", path,
                       (long long)size, n - 1);
    }
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got < 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: cannot read: %s", path, strerror(errno));
    buf[got] = '\0';
    return EXIT_OK;
}

/* 1 when the folder holds nothing but, at most, regular files named like the marker (the
 * marker or its temporary: a kill while the marker was written). Removing such a folder
 * loses nothing of anyone's. */
static int folder_holds_no_more_than_a_marker(const char *path)
{
    DIR *d = opendir(path);
    int other = 0;
    struct dirent *e;
    while (d && !other && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = join(path, e->d_name);
        struct stat st;
        other = strncmp(e->d_name, DOC_MARKER, strlen(DOC_MARKER)) != 0 || lstat(p, &st) != 0 || !S_ISREG(st.st_mode);
        free(p);
    }
    if (d)
        closedir(d);
    return d && !other;
}

typedef enum { FOLDER_OURS, FOLDER_EMPTY, FOLDER_NOT_OURS } folder_proof;

/* Whether `path`, a leftover of `kind` named for the dead process `pid`, is this pipeline's:
 * a real directory of this user holding the marker that names it (FOLDER_OURS); a real
 * directory of this user holding no more than a marker that does not (FOLDER_EMPTY: a kill
 * between mkdir and the marker's rename; removing it loses nothing); else FOLDER_NOT_OURS
 * with the reason in `why`. */
static folder_proof prove_ours(const char *path, const char *kind, long pid, char *why, size_t n)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return snprintf(why, n, "cannot stat it: %s", strerror(errno)), FOLDER_NOT_OURS;
    if (S_ISLNK(st.st_mode))
        return snprintf(why, n, "a symbolic link"), FOLDER_NOT_OURS;
    if (!S_ISDIR(st.st_mode))
        return snprintf(why, n, "not a directory"), FOLDER_NOT_OURS;
    if (st.st_uid != geteuid())
        return snprintf(why, n, "owned by user %u, not this one", (unsigned)st.st_uid), FOLDER_NOT_OURS;
    char *marker = join(path, DOC_MARKER), text[256], expect[160], rerr[512];
    int missing, rc = read_small_file(marker, text, sizeof text, &missing, rerr, sizeof rerr);
    free(marker);
    if (rc != EXIT_OK && folder_holds_no_more_than_a_marker(path))
        return FOLDER_EMPTY;
    if (rc != EXIT_OK)
        return snprintf(why, n, "no marker of this pipeline in it (%s)", missing ? "none" : rerr), FOLDER_NOT_OURS;
    snprintf(expect, sizeof expect, "attnprof %s %ld %llu %llu\n", kind, pid, (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    if (strcmp(text, expect) != 0)
        return snprintf(why, n, "its marker names another folder (copied or unpacked here)"), FOLDER_NOT_OURS;
    return FOLDER_OURS;
}

/* One line on stderr for a leftover-like entry the pipeline does not touch. */
static void say_left_alone(const char *path, const char *why)
{
    char safe[1024], safe_why[600];
    fprintf(stderr, "attnprof: %s: left alone: %s, not a leftover this attnprof made; remove it yourself if it "
                    "is not yours to keep\n", esc_terminal(safe, sizeof safe, path),
            esc_terminal(safe_why, sizeof safe_why, why));
}

/* Removes a proven folder with its marker last, so that a kill in between leaves a folder that
 * still proves itself (or an empty one). */
static void remove_ours(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, DOC_MARKER))
            continue;
        char *p = join(path, e->d_name);
        remove_tree(p);
        free(p);
    }
    if (d)
        closedir(d);
    char *marker = join(path, DOC_MARKER);
    unlink(marker);
    free(marker);
    rmdir(path);
}

/* ---- the manifest of a staging folder ------------------------------------------------- */

/* The names a bundle owns in its directory: figures/ (index 0), then its rows. */
typedef struct output_set {
    const char *name[DOC_MAX_OUTPUTS];
    int n;
} output_set;

static void output_set_of(const doc_bundle *b, output_set *s)
{
    if (b->n_outputs + 2 > DOC_MAX_OUTPUTS) { /* a bundle's table, not input: fail loudly, never drop a row */
        fprintf(stderr, "attnprof: internal error: the %s bundle has %d outputs, at most %d fit\n", b->kind,
                b->n_outputs, DOC_MAX_OUTPUTS - 2);
        abort();
    }
    s->n = 0;
    s->name[s->n++] = "figures";
    for (int i = 0; i < b->n_outputs; i++)
        s->name[s->n++] = b->outputs[i].name;
    if (b->made_by)
        s->name[s->n++] = DOC_RECORD; /* replaced with the outputs it lists */
}

static int write_manifest(const output_set *s, const char *tmp, int clean, char *err, size_t errlen)
{
    char text[DOC_MANIFEST_MAX_BYTES] = "";
    size_t len = clean ? (size_t)snprintf(text, sizeof text, "%s\n", DOC_MANIFEST_CLEAN) : 0;
    for (int i = 0; i < s->n; i++) {
        char *from = join(tmp, s->name[i]);
        struct stat st;
        if (lstat(from, &st) == 0 && len < sizeof text)
            len += (size_t)snprintf(text + len, sizeof text - len, "%s %llu\n", s->name[i],
                                    (unsigned long long)st.st_ino);
        free(from);
    }
    if (len >= sizeof text)
        return err_set(err, errlen, EXIT_IO, "%s: the manifest of %d outputs does not fit in %d bytes", tmp, s->n,
                       DOC_MANIFEST_MAX_BYTES);
    return archive_write_file(tmp, DOC_MANIFEST, text, err, errlen) == 0 ? EXIT_OK : EXIT_IO;
}

void doc_manifest_parse(char *text, const char *const names[], int n, int listed[], unsigned long long ino[],
                        int *clean)
{
    for (int i = 0; i < n; i++)
        listed[i] = 0, ino[i] = 0;
    *clean = 0;
    char name[128];
    unsigned long long v;
    for (char *line = text, *next; *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next)
            *next++ = '\0';
        if (!strcmp(line, DOC_MANIFEST_CLEAN))
            *clean = 1;
        else if (sscanf(line, "%127s %llu", name, &v) == 2)
            for (int i = 0; i < n; i++)
                if (!strcmp(name, names[i]))
                    listed[i] = 1, ino[i] = v;
    }
}

/* The manifest of the proven staging folder tmp: listed[i] and the inode of each. EXIT_OK;
 * EXIT_OK with *missing when tmp has none (the render never finished, and nothing was
 * renamed); EXIT_BAD_ARCHIVE with `err` when it is not a regular file of at most
 * DOC_MANIFEST_MAX_BYTES (a FIFO, a link, a device: never read). */
static int read_manifest(const output_set *s, const char *tmp, int listed[DOC_MAX_OUTPUTS],
                         unsigned long long ino[DOC_MAX_OUTPUTS], int *clean, int *missing, char *err, size_t errlen)
{
    char *path = join(tmp, DOC_MANIFEST), text[DOC_MANIFEST_MAX_BYTES + 1];
    int rc = read_small_file(path, text, sizeof text, missing, err, errlen);
    free(path);
    if (*missing)
        return EXIT_OK;
    if (rc != EXIT_OK)
        return rc;
    doc_manifest_parse(text, s->name, s->n, listed, ino, clean);
    return EXIT_OK;
}

/* Finishes the commit of a finished render that was killed: every output the manifest
 * lists and tmp still holds as the new one (a directory for figures/, a regular file for a
 * document, of the inode it recorded; after the swap tmp holds the old figures) is moved
 * in; an output it does not list stays as it was, or, when that render was a clean one, is
 * old and is removed. The directory then holds the new outputs and the kept ones. */
static void roll_forward(const output_set *s, const char *tmp, const char *dir, const int listed[DOC_MAX_OUTPUTS],
                         const unsigned long long ino[DOC_MAX_OUTPUTS], int clean)
{
    for (int i = 0; i < s->n; i++) {
        char *from = join(tmp, s->name[i]), *to = join(dir, s->name[i]);
        struct stat st;
        int is_new = listed[i] && lstat(from, &st) == 0 && (unsigned long long)st.st_ino == ino[i] &&
                     (i == 0 ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
        if (is_new) {
            if (i == 0)
                remove_tree(to); /* a folder is not renamed over a full one */
            rename(from, to);
        } else if (!listed[i] && clean) {
            remove_tree(to);
        }
        free(from);
        free(to);
    }
}

/* The state of one output name during a commit, for the roll-back. */
typedef struct output_move {
    enum { KEPT_NONE, KEPT_LINK, KEPT_MOVED } kept; /* the old one aside: hard link, moved, or not at all */
    int fresh;    /* the new render has it */
    int moved_in; /* renamed in where nothing was */
    int dropped;  /* an old output the new render lacks, removed (under clean) */
    int stays;    /* an old output the new render lacks, kept as it is (without clean) */
} output_move;

/* Before anything moves: every name in place is of the kind the render makes (a file, or
 * figures/ a directory), and which names the render made. */
static int check_outputs(const output_set *s, const char *tmp, const char *dir, int clean, output_move *mv,
                         char *err, size_t errlen)
{
    for (int i = 0; i < s->n; i++) {
        char *to = join(dir, s->name[i]), *from = join(tmp, s->name[i]);
        struct stat st;
        int want_dir = i == 0, bad = lstat(to, &st) == 0 && (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode));
        if (bad)
            err_set(err, errlen, EXIT_IO, "%s: cannot replace: it is not a %s; nothing was changed", to,
                    want_dir ? "directory" : "regular file");
        mv[i].fresh = path_exists(from);
        mv[i].stays = !mv[i].fresh && !clean;
        free(to);
        free(from);
        if (bad)
            return EXIT_IO;
    }
    return EXIT_OK;
}

/* The old documents kept for the roll-back: hard links, so that the names stay in place. */
static int keep_old_documents(const output_set *s, const char *dir, const char *old, output_move *mv, char *err,
                              size_t errlen)
{
    for (int i = 1; i < s->n; i++) {
        char *to = join(dir, s->name[i]), *aside = join(old, s->name[i]);
        int rc = EXIT_OK;
        if (!mv[i].stays && path_exists(to)) {
            if (link(to, aside) == 0)
                mv[i].kept = KEPT_LINK;
            else if (!mv[i].fresh && rename(to, aside) == 0)
                mv[i].kept = KEPT_MOVED; /* no hard links here, and nothing new replaces it */
            else if (mv[i].fresh)
                mv[i].kept = KEPT_NONE; /* no hard links: replaced without a copy to roll back to */
            else
                rc = err_set(err, errlen, EXIT_IO, "%s: cannot replace: %s; nothing was changed", to, strerror(errno));
        }
        free(to);
        free(aside);
        if (rc != EXIT_OK)
            return rc;
    }
    return EXIT_OK;
}

/* figures/ in: swapped with the old one in one rename (*swapped 1), or, where the file system
 * has no RENAME_EXCHANGE, the old one aside and the new one in (2); 0 when there was none to
 * swap. EXIT_OK or EXIT_IO. */
static int move_figures_in(const char *from, const char *to, const char *old, int *swapped, char *err,
                           size_t errlen)
{
    if (!path_exists(to)) {
        if (rename(from, to) == 0)
            return EXIT_OK;
        return err_set(err, errlen, EXIT_IO, "%s: cannot write: %s; nothing was changed", to, strerror(errno));
    }
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0) {
        *swapped = 1;
        return EXIT_OK;
    }
    char *aside = join(old, "figures");
    int rc = EXIT_OK;
    if (rename(to, aside) == 0 && rename(from, to) == 0) {
        *swapped = 2;
    } else {
        rc = err_set(err, errlen, EXIT_IO, "%s: cannot replace: %s; nothing was changed", to, strerror(errno));
        if (path_exists(aside) && !path_exists(to))
            rename(aside, to);
    }
    free(aside);
    return rc;
}

static void roll_back(const output_set *s, const char *tmp, const char *dir, const char *old,
                      const output_move *mv, int swapped)
{
    for (int i = 0; i < s->n; i++) {
        char *to = join(dir, s->name[i]), *aside = join(old, s->name[i]), *from = join(tmp, s->name[i]);
        if (i == 0 && swapped == 1)
            renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
        else if (i == 0 && (swapped == 2 || mv[i].dropped)) {
            remove_tree(to);
            rename(aside, to);
        } else if (i > 0 && (mv[i].kept == KEPT_LINK || mv[i].kept == KEPT_MOVED))
            rename(aside, to);
        else if (mv[i].moved_in && i == 0)
            remove_tree(to);
        else if (mv[i].moved_in)
            unlink(to);
        free(to);
        free(aside);
        free(from);
    }
}

/* Moves the new outputs from `tmp` into `dir`, SIGINT/SIGTERM held back. Every output
 * name that exists stays in place at every moment, old or new. The old outputs the new
 * render lacks (report.pdf without Chromium) go last. If a step fails, everything is put
 * back. A SIGKILL in between leaves a mix of old and new outputs, none missing, that the
 * next write finishes (repair_killed_commits). */
static int move_outputs_in(const doc_bundle *b, const char *tmp, const char *dir, char *err, size_t errlen)
{
    output_set s;
    output_set_of(b, &s);
    char old_name[96];
    snprintf(old_name, sizeof old_name, ".%s.old-%d", b->kind, (int)getpid());
    char *old = join(dir, old_name);
    output_move mv[DOC_MAX_OUTPUTS] = {{0}};
    int swapped = 0, rc = EXIT_OK;
    rc = check_outputs(&s, tmp, dir, b->clean, mv, err, errlen);
    if (rc == EXIT_OK)
        rc = write_manifest(&s, tmp, b->clean, err, errlen);
    sigset_t mask;
    cleanup_block(&mask);
    if (rc == EXIT_OK)
        rc = make_marked_folder(old, dir, b->kind, err, errlen);
    if (rc == EXIT_OK)
        rc = keep_old_documents(&s, dir, old, mv, err, errlen);
    for (int i = 0; i < s.n && rc == EXIT_OK; i++) {
        if (!mv[i].fresh)
            continue;
        char *from = join(tmp, s.name[i]), *to = join(dir, s.name[i]);
        if (i == 0) {
            if ((rc = move_figures_in(from, to, old, &swapped, err, errlen)) == EXIT_OK && !swapped)
                mv[i].moved_in = 1;
        } else if (rename(from, to) == 0) {
            mv[i].moved_in = 1;
        } else {
            rc = err_set(err, errlen, EXIT_IO, "%s: cannot write: %s; nothing was changed", to, strerror(errno));
        }
        free(from);
        free(to);
    }
    for (int i = 0; i < s.n && rc == EXIT_OK && b->clean; i++) { /* old outputs the new render does not have */
        char *to = join(dir, s.name[i]);
        if (!mv[i].fresh && mv[i].kept == KEPT_LINK && unlink(to) == 0)
            mv[i].dropped = 1;
        else if (!mv[i].fresh && i == 0 && path_exists(to)) {
            char *aside = join(old, s.name[i]);
            if (rename(to, aside) == 0)
                mv[i].dropped = 1;
            free(aside);
        }
        free(to);
    }
    if (rc != EXIT_OK)
        roll_back(&s, tmp, dir, old, mv, swapped);
    /* The staging folder (and its manifest) goes first: a kill after it leaves only old
     * copies aside, which the next write removes. */
    remove_ours(tmp);
    remove_ours(old);
    cleanup_unblock(&mask);
    free(old);
    return rc;
}

/* One leftover of this bundle, named for the dead process `pid`: a staging folder (a
 * finished render whose commit was cut off is committed now, an unfinished one removed) or a
 * roll-back folder (old figures moved aside while none are in place go back; then removed).
 * Only a folder that proves to be ours is touched; anything else is left and named. */
static void repair_one(const output_set *s, const doc_bundle *b, const char *dir, const char *p, long pid,
                       int staging)
{
    char why[600];
    folder_proof proof = prove_ours(p, b->kind, pid, why, sizeof why);
    if (proof == FOLDER_EMPTY) {
        remove_ours(p);
        return;
    }
    if (proof == FOLDER_NOT_OURS) {
        say_left_alone(p, why);
        return;
    }
    if (staging) {
        int listed[DOC_MAX_OUTPUTS], missing, clean;
        unsigned long long ino[DOC_MAX_OUTPUTS];
        if (read_manifest(s, p, listed, ino, &clean, &missing, why, sizeof why) != EXIT_OK) {
            say_left_alone(p, why);
            return;
        }
        if (!missing)
            roll_forward(s, p, dir, listed, ino, clean);
    } else {
        /* Old figures moved aside (a file system without RENAME_EXCHANGE) and none in place. */
        char *aside = join(p, "figures"), *to = join(dir, "figures");
        struct stat st;
        if (lstat(aside, &st) == 0 && S_ISDIR(st.st_mode) && !path_exists(to))
            rename(aside, to);
        free(aside);
        free(to);
    }
    remove_ours(p);
}

/* What killed writes of this bundle left in DIR (their PIDs gone): staging folders first,
 * then roll-back folders, whose old copies are removed only after the commit is finished.
 * Runs under the directory's lock. */
static void repair_killed_commits(const doc_bundle *b, const char *dir)
{
    output_set s;
    output_set_of(b, &s);
    char tmp_prefix[96], old_prefix[96];
    snprintf(tmp_prefix, sizeof tmp_prefix, ".%s.tmp-", b->kind);
    snprintf(old_prefix, sizeof old_prefix, ".%s.old-", b->kind);
    for (int pass = 0; pass < 2; pass++) {
        DIR *d = opendir(dir);
        if (!d)
            return;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            long pid = archive_dead_owner(e->d_name, pass == 0 ? tmp_prefix : old_prefix, 1);
            if (!pid)
                continue;
            char *p = join(dir, e->d_name);
            repair_one(&s, b, dir, p, pid, pass == 0);
            free(p);
        }
        closedir(d);
    }
}

/* An exclusive flock on the directory for as long as *fd is open: two writes of one bundle
 * take turns instead of failing on each other's files. EXIT_OK or EXIT_IO with `err`. */
static int lock_directory(const char *dir, const char *noun, int quiet, int *fd, char *err, size_t errlen)
{
    *fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd < 0)
        return err_set(err, errlen, EXIT_IO, "%s: cannot open: %s", dir, strerror(errno));
    if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
        return EXIT_OK;
    if (errno == EWOULDBLOCK) {
        if (!quiet) {
            char safe[1024];
            fprintf(stderr, "attnprof: %s: another attnprof is writing its %s; waiting for it\n",
                    esc_terminal(safe, sizeof safe, dir), noun);
        }
        if (flock(*fd, LOCK_EX) == 0)
            return EXIT_OK;
    }
    err_set(err, errlen, EXIT_IO, "%s: cannot lock: %s", dir, strerror(errno));
    close(*fd);
    return EXIT_IO;
}

/* A file of the old figures/ into the new one: a hard link (the same bytes, nothing copied),
 * a copy where the file system has none, a link recreated as a link. EXIT_OK or EXIT_IO. */
static int carry_file(const char *from, const char *to, const char *rel, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(from, &st) != 0)
        return EXIT_OK; /* gone meanwhile: nothing to carry */
    if (S_ISREG(st.st_mode) && link(from, to) == 0)
        return EXIT_OK;
    if (S_ISREG(st.st_mode)) {
        int in = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        char buf[65536];
        ssize_t k = 0;
        int ok = out >= 0;
        while (ok && (k = read(in, buf, sizeof buf)) > 0)
            ok = write(out, buf, (size_t)k) == k;
        ok = ok && k == 0;
        if (out >= 0 && close(out) != 0)
            ok = 0;
        if (in >= 0)
            close(in);
        return ok ? EXIT_OK : err_set(err, errlen, EXIT_IO, "%s: cannot carry into the new figures/: %s", rel,
                                      strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(from, target, sizeof target - 1);
        if (n >= 0) {
            target[n] = '\0';
            if (symlink(target, to) == 0)
                return EXIT_OK;
        }
        return err_set(err, errlen, EXIT_IO, "%s: cannot carry the link into the new figures/: %s", rel,
                       strerror(errno));
    }
    return err_set(err, errlen, EXIT_IO, "%s: not a file (a folder?): figures/ is replaced whole, so move it out of "
                   "figures/ first; nothing was changed", from);
}

/* The old figures this render does not make, carried into its figures/ (tmp/figures) and
 * listed in `now` with the render that made them: all of them, or under clean only the
 * files the old record does not list (someone's own, never removed). An archive rendered
 * before the record (old->found 0): every figure counts as an earlier render's. */
static int carry_figures(const doc_bundle *b, const char *tmp, const char *dir, const doc_record *old,
                         doc_record *now, char *err, size_t errlen)
{
    char *from_dir = join(dir, "figures"), *to_dir = join(tmp, "figures");
    struct stat st;
    DIR *d = lstat(from_dir, &st) == 0 && S_ISDIR(st.st_mode) ? opendir(from_dir) : NULL;
    struct dirent *e;
    int rc = EXIT_OK;
    while (d && rc == EXIT_OK && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *rel = attn_asprintf("figures/%s", e->d_name);
        const char *by = doc_record_made_by(old, rel);
        int ours = by || !old->found;
        if (!doc_record_made_by(now, rel) && !(b->clean && ours)) {
            char *from = join(from_dir, e->d_name), *to = join(to_dir, e->d_name);
            if (mkdir(to_dir, 0755) != 0 && errno != EEXIST)
                rc = err_set(err, errlen, EXIT_IO, "%s: cannot write: %s", to_dir, strerror(errno));
            if (rc == EXIT_OK)
                rc = carry_file(from, to, rel, err, errlen);
            if (rc == EXIT_OK && ours)
                doc_record_add(now, rel, by ? by : "an earlier render");
            free(from);
            free(to);
        }
        free(rel);
    }
    if (d)
        closedir(d);
    free(from_dir);
    free(to_dir);
    return rc;
}

/* The record of the new set, in tmp: what this render made, the documents and figures of
 * earlier renders that stay (with the render that made them), never what --clean removes. */
static int carry_over(const doc_bundle *b, const char *tmp, const char *dir, char *err, size_t errlen)
{
    doc_record old, now = {0};
    int rc = doc_record_read(&old, dir, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    record_made(b, tmp, &now);
    for (int i = 0; i < b->n_outputs && !b->clean; i++) {
        const char *name = b->outputs[i].name, *by = doc_record_made_by(&old, name);
        char *p = join(dir, name);
        if (!doc_record_made_by(&now, name) && path_exists(p))
            doc_record_add(&now, name, by ? by : "an earlier render");
        free(p);
    }
    rc = carry_figures(b, tmp, dir, &old, &now, err, errlen);
    if (rc == EXIT_OK)
        rc = write_record(&now, tmp, err, errlen);
    doc_record_free(&old);
    doc_record_free(&now);
    return rc;
}

static int write_beside_inputs(const doc_bundle *b, const char *dir, char *err, size_t errlen)
{
    int lock, rc = lock_directory(dir, b->noun, b->quiet, &lock, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    repair_killed_commits(b, dir);
    char tmp_name[96];
    snprintf(tmp_name, sizeof tmp_name, ".%s.tmp-%d", b->kind, (int)getpid());
    char *tmp = join(dir, tmp_name);
    remove_tree(tmp); /* a link of this name goes, never what it points to */
    cleanup_add_path(tmp); /* before it exists: a signal right after mkdir still removes it */
    rc = make_marked_folder(tmp, dir, b->kind, err, errlen);
    if (rc == EXIT_OK)
        rc = doc_bundle_render(b, tmp, err, errlen);
    if (rc == EXIT_OK && b->made_by)
        rc = carry_over(b, tmp, dir, err, errlen);
    if (rc == EXIT_OK)
        rc = move_outputs_in(b, tmp, dir, err, errlen);
    remove_ours(tmp);
    cleanup_forget_path(tmp);
    free(tmp);
    close(lock);
    return rc;
}

static int write_own_directory(const doc_bundle *b, const char *dest, int force, char *err, size_t errlen)
{
    if (path_exists(dest) && !force)
        return err_set(err, errlen, EXIT_OUTPUT_EXISTS, "%s exists; pass --force to replace it or choose another -o",
                       dest);
    char tmp[PATH_MAX + 64];
    if (archive_begin(dest, tmp, sizeof tmp, err, errlen) != 0)
        return EXIT_IO;
    int rc = doc_bundle_render(b, tmp, err, errlen);
    if (rc == EXIT_OK && archive_commit(tmp, dest, force, err, errlen) != 0)
        rc = force ? EXIT_IO : EXIT_OUTPUT_EXISTS;
    if (rc != EXIT_OK)
        remove_tree(tmp);
    return rc;
}

int doc_bundle_write(const doc_bundle *b, const char *dest, int force, char *err, size_t errlen)
{
    return b->placement == DOC_OWN_DIRECTORY ? write_own_directory(b, dest, force, err, errlen)
                                             : write_beside_inputs(b, dest, err, errlen);
}
