/* The document pipeline (doc_bundle.h): a bundle's figures and outputs rendered into one
 * folder (doc_bundle_render), then put in place (doc_bundle_write) as a directory of its own
 * (archive_begin/archive_commit: built beside, renamed in) or beside the inputs it was made
 * from. Beside the inputs, the outputs are replaced as one set: each document renamed over
 * its old self after a hard link to the old one is kept aside for the roll-back, figures/
 * swapped whole (RENAME_EXCHANGE), and a manifest of the new set written first, so that a
 * commit cut off by SIGKILL is finished by the next write (the report's commit of issue 15,
 * here for every bundle: the sweep's documents used to be renamed one by one, and a kill
 * between two left a mix the next run did not repair). */
#include "doc_bundle.h"

#include "alloc.h"
#include "archive.h"
#include "cleanup.h"
#include "escape.h"
#include "exit_codes.h"
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
    if (!*out)
        snprintf(err, errlen, "out of memory");
    return *out ? 0 : -1;
}

int doc_html_row(const doc_page *p, char **out, char *err, size_t errlen)
{
    char *md = p->bundle->markdown(p->bundle, p->figs, p->dir);
    if (!md) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *out = report_html(md, p->bundle->title, err, errlen);
    free(md);
    return *out ? 0 : -1;
}

int doc_text(char *text, char **out, char *err, size_t errlen)
{
    *out = text;
    if (!text)
        snprintf(err, errlen, "out of memory");
    return text ? 0 : -1;
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
            int wrc = o->write(&page, dir, err, errlen);
            if (wrc != EXIT_OK && wrc != 1)
                rc = wrc;
            continue;
        }
        char *text = NULL;
        if (o->render(&page, &text, err, errlen) != 0)
            rc = EXIT_IO;
        else if (text && archive_write_file(dir, o->name, text, err, errlen) != 0)
            rc = EXIT_IO;
        free(text);
    }
    figure_list_free(&figs);
    return rc;
}

/* ---- the outputs of a bundle beside its inputs, replaced as one set ------------------- */

#define DOC_MAX_OUTPUTS 24
/* In the staging folder: the outputs the render made, one per line ("figures" with the
 * inode of the new figures folder), written before the first rename. */
#define DOC_MANIFEST ".manifest"

/* The names a bundle owns in its directory: figures/ (index 0), then its rows. */
typedef struct output_set {
    const char *name[DOC_MAX_OUTPUTS];
    int n;
} output_set;

static void output_set_of(const doc_bundle *b, output_set *s)
{
    if (b->n_outputs + 1 > DOC_MAX_OUTPUTS) { /* a bundle's table, not input: fail loudly, never drop a row */
        fprintf(stderr, "attnprof: internal error: the %s bundle has %d outputs, at most %d fit\n", b->kind,
                b->n_outputs, DOC_MAX_OUTPUTS - 1);
        abort();
    }
    s->n = 0;
    s->name[s->n++] = "figures";
    for (int i = 0; i < b->n_outputs; i++)
        s->name[s->n++] = b->outputs[i].name;
}

static char *join(const char *dir, const char *name) { return attn_asprintf("%s/%s", dir, name); }

static int write_manifest(const output_set *s, const char *tmp, char *err, size_t errlen)
{
    char text[2048] = "";
    size_t len = 0;
    for (int i = 0; i < s->n; i++) {
        char *from = join(tmp, s->name[i]);
        struct stat st;
        if (lstat(from, &st) == 0 && len < sizeof text)
            len += (size_t)snprintf(text + len, sizeof text - len, "%s %llu\n", s->name[i],
                                    (unsigned long long)st.st_ino);
        free(from);
    }
    return archive_write_file(tmp, DOC_MANIFEST, text, err, errlen);
}

/* tmp's manifest: listed[i] and the inode of each; -1 when tmp has none (the render
 * never finished, and nothing was renamed). */
static int read_manifest(const output_set *s, const char *tmp, int listed[DOC_MAX_OUTPUTS],
                         unsigned long long ino[DOC_MAX_OUTPUTS])
{
    char *path = join(tmp, DOC_MANIFEST), line[160], name[128];
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return -1;
    for (int i = 0; i < s->n; i++)
        listed[i] = 0, ino[i] = 0;
    unsigned long long n;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%127s %llu", name, &n) == 2)
            for (int i = 0; i < s->n; i++)
                if (!strcmp(name, s->name[i]))
                    listed[i] = 1, ino[i] = n;
    fclose(f);
    return 0;
}

/* Finishes the commit of a finished render that was killed: every output the manifest
 * lists and tmp still holds as the new one (for figures/: the inode it recorded; after
 * the swap tmp holds the old figures) is moved in; an output it does not list is old
 * and is removed. The directory then holds exactly the new outputs. */
static void roll_forward(const output_set *s, const char *tmp, const char *dir, const int listed[DOC_MAX_OUTPUTS],
                         const unsigned long long ino[DOC_MAX_OUTPUTS])
{
    for (int i = 0; i < s->n; i++) {
        char *from = join(tmp, s->name[i]), *to = join(dir, s->name[i]);
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

/* The state of one output name during a commit, for the roll-back. */
typedef struct output_move {
    enum { KEPT_NONE, KEPT_LINK, KEPT_MOVED } kept; /* the old one aside: hard link, moved, or not at all */
    int fresh;    /* the new render has it */
    int moved_in; /* renamed in where nothing was */
    int dropped;  /* an old output the new render lacks, removed */
} output_move;

/* Before anything moves: every name in place is of the kind the render makes (a file, or
 * figures/ a directory), and which names the render made. */
static int check_outputs(const output_set *s, const char *tmp, const char *dir, output_move *mv, char *err,
                         size_t errlen)
{
    for (int i = 0; i < s->n; i++) {
        char *to = join(dir, s->name[i]), *from = join(tmp, s->name[i]);
        struct stat st;
        int want_dir = i == 0, bad = lstat(to, &st) == 0 && (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode));
        if (bad)
            snprintf(err, errlen, "%s: cannot replace: it is not a %s; nothing was changed", to,
                     want_dir ? "directory" : "regular file");
        mv[i].fresh = path_exists(from);
        free(to);
        free(from);
        if (bad)
            return -1;
    }
    return 0;
}

/* The old documents kept for the roll-back: hard links, so that the names stay in place. */
static int keep_old_documents(const output_set *s, const char *dir, const char *old, output_move *mv, char *err,
                              size_t errlen)
{
    for (int i = 1; i < s->n; i++) {
        char *to = join(dir, s->name[i]), *aside = join(old, s->name[i]);
        int rc = 0;
        if (path_exists(to)) {
            if (link(to, aside) == 0)
                mv[i].kept = KEPT_LINK;
            else if (!mv[i].fresh && rename(to, aside) == 0)
                mv[i].kept = KEPT_MOVED; /* no hard links here, and nothing new replaces it */
            else if (mv[i].fresh)
                mv[i].kept = KEPT_NONE; /* no hard links: replaced without a copy to roll back to */
            else {
                snprintf(err, errlen, "%s: cannot replace: %s; nothing was changed", to, strerror(errno));
                rc = -1;
            }
        }
        free(to);
        free(aside);
        if (rc)
            return -1;
    }
    return 0;
}

/* figures/ in: swapped with the old one in one rename (1), or, where the file system has no
 * RENAME_EXCHANGE, the old one aside and the new one in (2); 0 when there was none to swap. */
static int move_figures_in(const char *from, const char *to, const char *old, int *swapped, char *err,
                           size_t errlen)
{
    if (!path_exists(to)) {
        if (rename(from, to) == 0)
            return 0;
        snprintf(err, errlen, "%s: cannot write: %s; nothing was changed", to, strerror(errno));
        return -1;
    }
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0) {
        *swapped = 1;
        return 0;
    }
    char *aside = join(old, "figures");
    int rc = 0;
    if (rename(to, aside) == 0 && rename(from, to) == 0) {
        *swapped = 2;
    } else {
        snprintf(err, errlen, "%s: cannot replace: %s; nothing was changed", to, strerror(errno));
        if (path_exists(aside) && !path_exists(to))
            rename(aside, to);
        rc = -1;
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
    if (check_outputs(&s, tmp, dir, mv, err, errlen) != 0 || write_manifest(&s, tmp, err, errlen) != 0)
        rc = EXIT_IO;
    sigset_t mask;
    cleanup_block(&mask);
    if (rc == EXIT_OK && mkdir(old, 0755) != 0) {
        snprintf(err, errlen, "%s: cannot write into the directory: %s", dir, strerror(errno));
        rc = EXIT_IO;
    }
    if (rc == EXIT_OK && keep_old_documents(&s, dir, old, mv, err, errlen) != 0)
        rc = EXIT_IO;
    for (int i = 0; i < s.n && rc == EXIT_OK; i++) {
        if (!mv[i].fresh)
            continue;
        char *from = join(tmp, s.name[i]), *to = join(dir, s.name[i]);
        if (i == 0) {
            if (move_figures_in(from, to, old, &swapped, err, errlen) != 0)
                rc = EXIT_IO;
            else if (!swapped)
                mv[i].moved_in = 1;
        } else if (rename(from, to) == 0) {
            mv[i].moved_in = 1;
        } else {
            snprintf(err, errlen, "%s: cannot write: %s; nothing was changed", to, strerror(errno));
            rc = EXIT_IO;
        }
        free(from);
        free(to);
    }
    for (int i = 0; i < s.n && rc == EXIT_OK; i++) { /* old outputs the new render does not have */
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
    remove_tree(tmp);
    remove_tree(old);
    cleanup_unblock(&mask);
    free(old);
    return rc;
}

/* What a killed write of this bundle left in DIR (its PID gone): a finished render whose
 * commit was cut off is committed now (roll_forward), an unfinished one removed; the old
 * copies it kept aside are removed only after that. Runs under the directory's lock. */
static void repair_killed_commits(const doc_bundle *b, const char *dir)
{
    output_set s;
    output_set_of(b, &s);
    char tmp_prefix[96], old_prefix[96];
    snprintf(tmp_prefix, sizeof tmp_prefix, ".%s.tmp-", b->kind);
    snprintf(old_prefix, sizeof old_prefix, ".%s.old-", b->kind);
    for (int pass = 0; pass < 2; pass++) { /* tmp folders first, then old ones */
        DIR *d = opendir(dir);
        if (!d)
            return;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!archive_dead_owner(e->d_name, pass == 0 ? tmp_prefix : old_prefix, 1))
                continue;
            char *p = join(dir, e->d_name);
            int listed[DOC_MAX_OUTPUTS];
            unsigned long long ino[DOC_MAX_OUTPUTS];
            if (pass == 0 && read_manifest(&s, p, listed, ino) == 0)
                roll_forward(&s, p, dir, listed, ino);
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

/* An exclusive flock on the directory for as long as the fd is open: two writes of one
 * bundle take turns instead of failing on each other's files. -1 with `err`. */
static int lock_directory(const char *dir, const char *noun, int quiet, char *err, size_t errlen)
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
            fprintf(stderr, "attnprof: %s: another attnprof is writing its %s; waiting for it\n",
                    esc_terminal(safe, sizeof safe, dir), noun);
        }
        if (flock(fd, LOCK_EX) != 0) {
            snprintf(err, errlen, "%s: cannot lock: %s", dir, strerror(errno));
            close(fd);
            return -1;
        }
    }
    return fd;
}

static int write_beside_inputs(const doc_bundle *b, const char *dir, char *err, size_t errlen)
{
    int lock = lock_directory(dir, b->noun, b->quiet, err, errlen);
    if (lock < 0)
        return EXIT_IO;
    repair_killed_commits(b, dir);
    char tmp_name[96];
    snprintf(tmp_name, sizeof tmp_name, ".%s.tmp-%d", b->kind, (int)getpid());
    char *tmp = join(dir, tmp_name);
    remove_tree(tmp);
    cleanup_add_path(tmp); /* before it exists: a signal right after mkdir still removes it */
    int rc = EXIT_OK;
    if (mkdir(tmp, 0755) != 0) {
        snprintf(err, errlen, "%s: cannot write into the directory: %s", dir, strerror(errno));
        rc = EXIT_IO;
    }
    if (rc == EXIT_OK)
        rc = doc_bundle_render(b, tmp, err, errlen);
    if (rc == EXIT_OK)
        rc = move_outputs_in(b, tmp, dir, err, errlen);
    remove_tree(tmp);
    cleanup_forget_path(tmp);
    free(tmp);
    close(lock);
    return rc;
}

static int write_own_directory(const doc_bundle *b, const char *dest, int force, char *err, size_t errlen)
{
    if (path_exists(dest) && !force) {
        snprintf(err, errlen, "%s exists; pass --force to replace it or choose another -o", dest);
        return EXIT_OUTPUT_EXISTS;
    }
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
