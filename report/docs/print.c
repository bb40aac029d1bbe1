/* report.pdf: report.html printed to A4 by headless Chromium, when it is installed.
 * The page's print stylesheet (templates/style.css, @media print) keeps every
 * column on the paper; this only drives the browser. Chromium is found on PATH
 * (chromium, chromium-browser, google-chrome) or at $ATTNPROF_CHROMIUM; without it
 * the caller says so in one line and the archive is complete without the PDF.
 *
 * Chromium never outlives attnprof: it runs in its own process group, registered with
 * cleanup.h (a signal kills the group), with PR_SET_PDEATHSIG (a SIGKILLed attnprof
 * takes the browser with it), and its profile in /tmp is registered for removal too;
 * profiles that a killed attnprof left (attnprof-chromium-PID-*, PID gone) are removed
 * by the next print. A PDF counts only when it is whole (%PDF- at the start, %%EOF at
 * the end): a disk that fills up while Chromium writes is a failure, not a short file.
 * The page is handed over as a percent-encoded file:// URL, so that a '#', '%', '?' or space
 * in the archive's path names that page and not a neighbour (print_file_url). */
#include "print.h"

#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "archive.h"
#include "cleanup.h"
#include "exit_codes.h"

static int executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int print_find_chromium(char *out, size_t n)
{
    const char *env = getenv("ATTNPROF_CHROMIUM");
    if (env && *env) {
        if (!executable(env))
            return 0;
        snprintf(out, n, "%s", env);
        return 1;
    }
    static const char *names[] = {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"};
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        const char *p = path;
        while (*p) {
            size_t len = strcspn(p, ":");
            char cand[4096];
            if (len && snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, names[k]) < (int)sizeof cand &&
                executable(cand)) {
                snprintf(out, n, "%s", cand);
                return 1;
            }
            p += len + (p[len] == ':');
        }
    }
    return 0;
}

int print_pdf_enabled(void)
{
    const char *v = getenv("ATTNPROF_PDF");
    return !(v && (!strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off")));
}

/* Runs argv with stdout/stderr to /dev/null; kills it after `timeout_s`. EXIT_OK with its
 * exit status in *status, or EXIT_IO when it could not start or did not exit by itself. */
static int run_quietly(char *const argv[], int timeout_s, int *status)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return EXIT_IO;
    if (pid == 0) {
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            dup2(dn, 2);
        }
        setpgid(0, 0); /* its helpers go with it when it is killed */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127); /* attnprof died before the line above */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid);
    cleanup_add_group(pid);
    int rc = EXIT_IO, exited = 0;
    struct timespec step = {0, 20 * 1000 * 1000};
    for (int waited = 0; waited < timeout_s * 50; waited++) {
        /* WNOWAIT: the browser stays a zombie, so its group id cannot be reused before
         * the group is killed below. */
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
            break;
        if (info.si_pid == pid) {
            exited = 1;
            if (info.si_code == CLD_EXITED) {
                *status = info.si_status;
                rc = EXIT_OK;
            }
            break;
        }
        nanosleep(&step, NULL);
    }
    /* The browser's helpers (zygote, renderer, GPU process) are in its group: none stays. */
    kill(-pid, SIGKILL);
    if (!exited)
        kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cleanup_forget_group(pid);
    return rc;
}

/* A whole PDF: "%PDF-" first, "%%EOF" in its last kilobyte. */
static int pdf_whole(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 16) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char head[5], tail[1025];
    off_t from = st.st_size > 1024 ? st.st_size - 1024 : 0;
    ssize_t nh = pread(fd, head, sizeof head, 0), nt = pread(fd, tail, sizeof tail - 1, from);
    close(fd);
    if (nh != 5 || memcmp(head, "%PDF-", 5) || nt < 5)
        return 0;
    tail[nt] = '\0';
    for (ssize_t i = nt - 5; i >= 0; i--)
        if (!memcmp(tail + i, "%%EOF", 5))
            return 1;
    return 0;
}

/* /tmp/attnprof-chromium-PID-XXXXXX of processes that are gone (killed while printing). */
static void remove_stale_profiles(void)
{
    DIR *d = opendir("/tmp");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "attnprof-chromium-", 18) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + 18, &end, 10);
        if (pid <= 0 || *end != '-' || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char *p = attn_asprintf("/tmp/%s", e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
            remove_tree(p);
        free(p);
    }
    if (d)
        closedir(d);
}

char *print_file_url(const char *abs_path)
{
    static const char unreserved[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/";
    size_t n = strlen(abs_path);
    char *url = attn_malloc(7 + 3 * n + 1), *o = url;
    memcpy(o, "file://", 7);
    o += 7;
    for (const unsigned char *c = (const unsigned char *)abs_path; *c; c++) {
        if (strchr(unreserved, *c))
            *o++ = (char)*c;
        else
            o += sprintf(o, "%%%02X", *c);
    }
    *o = '\0';
    return url;
}

/* Chromium's (Skia's) form of a date value: "(D:YYYYMMDDHHmmSS+00'00')". */
enum { PDF_DATE_LEN = 25 };

/* 1 with the date in out, 0 when `iso` is no ISO 8601 UTC time. */
static int pdf_date_of(const char *iso, char out[PDF_DATE_LEN + 1])
{
    int y, mo, d, h, mi, s, used = 0;
    if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &s, &used) != 6 || iso[used] ||
        y < 1000 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return 0;
    snprintf(out, PDF_DATE_LEN + 1, "(D:%04d%02d%02d%02d%02d%02d+00'00')", y, mo, d, h, mi, s);
    return 1;
}

int print_pdf_set_dates(char *buf, size_t n, const char *date)
{
    static const char *keys[] = {"/CreationDate ", "/ModDate "};
    char value[PDF_DATE_LEN + 1];
    int have = pdf_date_of(date, value), done = 0;
    for (int k = 0; k < 2; k++) {
        size_t kl = strlen(keys[k]);
        char *p = memmem(buf, n, keys[k], kl);
        if (!p || (size_t)(p - buf) + kl + PDF_DATE_LEN > n || p[kl] != '(' || p[kl + 1] != 'D' ||
            p[kl + PDF_DATE_LEN - 1] != ')')
            continue;
        if (have)
            memcpy(p + kl, value, PDF_DATE_LEN);
        else
            memset(p, ' ', kl + PDF_DATE_LEN); /* no recorded time: the key goes, whitespace stays */
        done++;
    }
    return done;
}

/* Chromium's structure-element ids: "(node" 8 digits ")". */
enum { NODE_ID_DIGITS = 8 };

static int node_id_at(const char *p, const char *end, long *value)
{
    if (end - p < 5 + NODE_ID_DIGITS + 1 || memcmp(p, "(node", 5) || p[5 + NODE_ID_DIGITS] != ')')
        return 0;
    long v = 0;
    for (int i = 0; i < NODE_ID_DIGITS; i++) {
        if (p[5 + i] < '0' || p[5 + i] > '9')
            return 0;
        v = v * 10 + (p[5 + i] - '0');
    }
    *value = v;
    return 1;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int print_pdf_renumber_nodes(char *buf, size_t n)
{
    const char *end = buf + n;
    size_t count = 0, cap = 0;
    long *ids = NULL, v;
    for (char *p = buf; (p = memmem(p, (size_t)(end - p), "(node", 5)); p++)
        if (node_id_at(p, end, &v)) {
            if (count == cap) {
                cap = cap ? 2 * cap : 256;
                ids = attn_realloc(ids, cap * sizeof *ids);
            }
            ids[count++] = v;
        }
    if (count)
        qsort(ids, count, sizeof *ids, cmp_long);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++)
        if (!unique || ids[unique - 1] != ids[i])
            ids[unique++] = ids[i];
    int done = 0;
    for (char *p = buf; (p = memmem(p, (size_t)(end - p), "(node", 5)); p++)
        if (node_id_at(p, end, &v)) {
            long *at = bsearch(&v, ids, unique, sizeof *ids, cmp_long);
            char digits[NODE_ID_DIGITS + 1];
            snprintf(digits, sizeof digits, "%0*ld", NODE_ID_DIGITS, (long)(at - ids));
            memcpy(p + 5, digits, NODE_ID_DIGITS);
            done++;
        }
    free(ids);
    return done;
}

/* Makes the PDF at path reproducible in place: the run's dates (print_pdf_set_dates) and
 * Chromium's node ids by rank (print_pdf_renumber_nodes). EXIT_OK or EXIT_IO. */
static int make_pdf_reproducible(const char *path, const char *date)
{
    FILE *f = fopen(path, "r+b");
    if (!f)
        return EXIT_IO;
    char *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    int rc = EXIT_IO;
    if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size)) &&
        fread(buf, 1, (size_t)size, f) == (size_t)size && print_pdf_set_dates(buf, (size_t)size, date) > 0 &&
        print_pdf_renumber_nodes(buf, (size_t)size) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && fwrite(buf, 1, (size_t)size, f) == (size_t)size)
        rc = EXIT_OK;
    if (fclose(f) != 0)
        rc = EXIT_IO;
    free(buf);
    return rc;
}

/* Copies the page at html_path to copy with the paper size set in its style sheet (the page
 * itself leaves the size to the printer). EXIT_OK, or EXIT_IO with msg saying why pdf_name
 * was not written. */
static int copy_with_page_size(const char *html_path, const char *copy, const char *page_size,
                               const char *pdf_name, char *msg, size_t msglen)
{
    FILE *in = fopen(html_path, "rb"), *out = in ? fopen(copy, "wb") : NULL;
    if (out)
        cleanup_add_path(copy);
    if (!in || !out) {
        snprintf(msg, msglen, "%s not written: cannot read %s or write beside it: %s", pdf_name, html_path,
                 strerror(errno));
        if (in)
            fclose(in);
        return EXIT_IO;
    }
    char buf[65536];
    size_t n;
    int injected = 0;
    int copied = 1;
    while ((n = fread(buf, 1, sizeof buf - 1, in)) > 0) {
        buf[n] = '\0';
        char *st = injected ? NULL : strstr(buf, "</style>");
        if (st) {
            copied &= fwrite(buf, 1, (size_t)(st - buf), out) == (size_t)(st - buf);
            copied &= fprintf(out, "@page { size: %s; }\n", page_size) > 0;
            copied &= fwrite(st, 1, n - (size_t)(st - buf), out) == n - (size_t)(st - buf);
            injected = 1;
        } else {
            copied &= fwrite(buf, 1, n, out) == n;
        }
    }
    copied &= !ferror(in);
    fclose(in);
    copied &= fclose(out) == 0;
    if (!copied) {
        snprintf(msg, msglen, "%s not written: cannot copy %s beside it: %s", pdf_name, html_path, strerror(errno));
        return EXIT_IO;
    }
    return EXIT_OK;
}

int print_html_to_pdf(const char *dir, const char *html_name, const char *pdf_name, const char *page_size,
                      const char *date, int *printed, char *msg, size_t msglen)
{
    char chromium[4096];
    *printed = 0;
    if (!print_find_chromium(chromium, sizeof chromium)) {
        snprintf(msg, msglen, "%s not written: Chromium is not installed (apt-get install chromium), or "
                              "ATTNPROF_CHROMIUM names no program; the archive is complete without it", pdf_name);
        return EXIT_OK;
    }
    remove_stale_profiles();
    char *html_path = NULL, *copy = NULL, *pdf = NULL, *profile = NULL, *url = NULL, *flag = NULL;
    int rc = EXIT_IO, profile_made = 0;
    html_path = attn_asprintf("%s/%s", dir, html_name);
    copy = attn_asprintf("%s/.print-%d.html", dir, (int)getpid());
    pdf = attn_asprintf("%s/%s", dir, pdf_name);
    profile = attn_asprintf("/tmp/attnprof-chromium-%d-XXXXXX", (int)getpid());
    if (copy_with_page_size(html_path, copy, page_size, pdf_name, msg, msglen) != EXIT_OK)
        goto done;
    if (mkdtemp(profile)) {
        profile_made = 1;
        cleanup_add_path(profile);
    } else {
        snprintf(msg, msglen, "%s not written: no temporary directory: %s", pdf_name, strerror(errno));
        goto done;
    }
    char abs_copy[4096];
    if (!realpath(copy, abs_copy)) {
        snprintf(msg, msglen, "%s not written: %s: %s", pdf_name, copy, strerror(errno));
        goto done;
    }
    url = print_file_url(abs_copy);
    flag = attn_asprintf("--print-to-pdf=%s", pdf);
    char *profile_flag = attn_asprintf("--user-data-dir=%s", profile);
    char *argv[] = {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    "--no-first-run", profile_flag, flag, url, NULL};
    unlink(pdf);
    int st = -1, ran = run_quietly(argv, 120, &st);
    free(profile_flag);
    if (ran == EXIT_OK && st == 0 && pdf_whole(pdf)) {
        rc = make_pdf_reproducible(pdf, date);
        *printed = rc == EXIT_OK;
        if (rc != EXIT_OK) {
            unlink(pdf);
            snprintf(msg, msglen, "%s not written: its dates could not be set from the run's (%s: no Info dates in "
                                  "Chromium's form, or the file could not be rewritten)", pdf_name, pdf);
        }
    } else {
        unlink(pdf);
        if (ran == EXIT_OK && st == 0)
            snprintf(msg, msglen, "%s not written: %s left no whole PDF (is the disk full?); free space, or leave "
                     "out --pdf", pdf_name, chromium);
        else if (ran == EXIT_OK)
            snprintf(msg, msglen, "%s not written: %s exited with status %d; leave out --pdf to skip it", pdf_name,
                     chromium, st);
        else
            snprintf(msg, msglen, "%s not written: %s did not finish (killed, or past 120 s); leave out --pdf to "
                     "skip it", pdf_name, chromium);
    }
done:
    if (copy) {
        unlink(copy);
        cleanup_forget_path(copy);
    }
    if (profile_made) {
        remove_tree(profile);
        cleanup_forget_path(profile);
    }
    free(html_path), free(copy), free(pdf), free(profile), free(url), free(flag);
    return rc;
}
