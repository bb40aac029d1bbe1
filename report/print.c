/* report.pdf: report.html printed to A4 by headless Chromium, when it is installed.
 * The page's print stylesheet (templates/style.css, @media print) keeps every
 * column on the paper; this only drives the browser. Chromium is found on PATH
 * (chromium, chromium-browser, google-chrome) or at $ATTNPROF_CHROMIUM; without it
 * the caller says so in one line and the archive is complete without the PDF. */
#include "print.h"

#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"

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
            return -1;
        snprintf(out, n, "%s", env);
        return 0;
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
                return 0;
            }
            p += len + (p[len] == ':');
        }
    }
    return -1;
}

int print_pdf_enabled(void)
{
    const char *v = getenv("ATTNPROF_PDF");
    return !(v && (!strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off")));
}

/* Runs argv with stdout/stderr to /dev/null; kills it after `timeout_s`. Returns
 * its exit status, or -1. */
static int run_quietly(char *const argv[], int timeout_s)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            dup2(dn, 2);
        }
        setpgid(0, 0); /* its helpers go with it when it is killed */
        execv(argv[0], argv);
        _exit(127);
    }
    struct timespec step = {0, 20 * 1000 * 1000};
    for (int waited = 0; waited < timeout_s * 50; waited++) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (r < 0)
            return -1;
        nanosleep(&step, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* Chromium's (Skia's) form of a date value: "(D:YYYYMMDDHHmmSS+00'00')". */
enum { PDF_DATE_LEN = 25 };

static int pdf_date_of(const char *iso, char out[PDF_DATE_LEN + 1])
{
    int y, mo, d, h, mi, s, used = 0;
    if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &s, &used) != 6 || iso[used] ||
        y < 1000 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return -1;
    snprintf(out, PDF_DATE_LEN + 1, "(D:%04d%02d%02d%02d%02d%02d+00'00')", y, mo, d, h, mi, s);
    return 0;
}

int print_pdf_set_dates(char *buf, size_t n, const char *date)
{
    static const char *keys[] = {"/CreationDate ", "/ModDate "};
    char value[PDF_DATE_LEN + 1];
    int have = pdf_date_of(date, value) == 0, done = 0;
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

/* Rewrites the dates of the PDF at path in place (print_pdf_set_dates). */
static int fix_pdf_dates(const char *path, const char *date)
{
    FILE *f = fopen(path, "r+b");
    if (!f)
        return -1;
    char *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    int rc = -1;
    if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size)) &&
        fread(buf, 1, (size_t)size, f) == (size_t)size && print_pdf_set_dates(buf, (size_t)size, date) > 0 &&
        fseek(f, 0, SEEK_SET) == 0 && fwrite(buf, 1, (size_t)size, f) == (size_t)size)
        rc = 0;
    if (fclose(f) != 0)
        rc = -1;
    free(buf);
    return rc;
}

int print_html_to_pdf(const char *dir, const char *html_name, const char *pdf_name, const char *page_size,
                      const char *date, char *msg, size_t msglen)
{
    char chromium[4096];
    if (print_find_chromium(chromium, sizeof chromium) != 0) {
        snprintf(msg, msglen, "%s not written: Chromium is not installed (apt-get install chromium), or "
                              "ATTNPROF_CHROMIUM names no program; the archive is complete without it", pdf_name);
        return 1;
    }
    /* A copy of the page with the paper size set (the page itself leaves it to the printer). */
    char *html_path = NULL, *copy = NULL, *pdf = NULL, *profile = NULL, *url = NULL, *flag = NULL;
    int rc = -1;
    if (asprintf(&html_path, "%s/%s", dir, html_name) < 0 || asprintf(&copy, "%s/.print-%d.html", dir, (int)getpid()) < 0 ||
        asprintf(&pdf, "%s/%s", dir, pdf_name) < 0 || asprintf(&profile, "/tmp/attnprof-chromium-%d-XXXXXX", (int)getpid()) < 0)
        abort();
    FILE *in = fopen(html_path, "rb"), *out = in ? fopen(copy, "wb") : NULL;
    if (!in || !out) {
        snprintf(msg, msglen, "%s not written: cannot read %s or write beside it: %s", pdf_name, html_path,
                 strerror(errno));
        if (in)
            fclose(in);
        goto done;
    }
    char buf[65536];
    size_t n;
    int injected = 0;
    while ((n = fread(buf, 1, sizeof buf - 1, in)) > 0) {
        buf[n] = '\0';
        char *st = injected ? NULL : strstr(buf, "</style>");
        if (st) {
            fwrite(buf, 1, (size_t)(st - buf), out);
            fprintf(out, "@page { size: %s; }\n", page_size);
            fwrite(st, 1, n - (size_t)(st - buf), out);
            injected = 1;
        } else {
            fwrite(buf, 1, n, out);
        }
    }
    fclose(in);
    fclose(out);
    if (!mkdtemp(profile)) {
        snprintf(msg, msglen, "%s not written: no temporary directory: %s", pdf_name, strerror(errno));
        goto done;
    }
    char abs_copy[4096];
    if (!realpath(copy, abs_copy)) {
        snprintf(msg, msglen, "%s not written: %s: %s", pdf_name, copy, strerror(errno));
        goto done;
    }
    if (asprintf(&url, "file://%s", abs_copy) < 0 || asprintf(&flag, "--print-to-pdf=%s", pdf) < 0)
        abort();
    char *profile_flag = NULL;
    if (asprintf(&profile_flag, "--user-data-dir=%s", profile) < 0)
        abort();
    char *argv[] = {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    "--no-first-run", profile_flag, flag, url, NULL};
    unlink(pdf);
    int st = run_quietly(argv, 120);
    free(profile_flag);
    struct stat sb;
    if (st == 0 && stat(pdf, &sb) == 0 && sb.st_size > 0) {
        rc = fix_pdf_dates(pdf, date);
        if (rc != 0) {
            unlink(pdf);
            snprintf(msg, msglen, "%s not written: its dates could not be set from the run's (%s: no Info dates in "
                                  "Chromium's form, or the file could not be rewritten)", pdf_name, pdf);
        }
    } else {
        unlink(pdf);
        snprintf(msg, msglen, "%s not written: %s exited with status %d", pdf_name, chromium, st);
    }
done:
    if (copy)
        unlink(copy);
    if (profile && profile[strlen(profile) - 1] != 'X')
        remove_tree(profile);
    free(html_path), free(copy), free(pdf), free(profile), free(url), free(flag);
    return rc;
}
